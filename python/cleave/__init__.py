"""cleave: an ahead-of-time model-partitioning compiler (Python side).

``cleave.compile`` runs the ``cleave compile`` command line; ``cleave.Session``
runs the bundle it writes through the runtime library. The session loads on
first use, so the model generators and exporters import without a build.
"""

import importlib
import pkgutil

# The compiled runtime module is built into <build>/python/cleave/; with
# <build>/python on sys.path that directory joins this package.
__path__ = pkgutil.extend_path(__path__, __name__)

# Imported here (it needs only the standard library) so that the name
# `compile` is the function: importing the submodule first binds it to the
# module, and a later import of cleave.compile does not bind it again.
from .compile import CompileError, compile  # noqa: E402

__all__ = ["Session", "TensorInfo", "Trainer", "compile", "CompileError"]


def __getattr__(name):
    if name not in ("Session", "TensorInfo", "Trainer"):
        raise AttributeError(f"module 'cleave' has no attribute '{name}'")
    value = getattr(importlib.import_module("cleave.session"), name)
    globals()[name] = value
    return value
