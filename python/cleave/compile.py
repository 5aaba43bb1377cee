"""Compile an ONNX model into a bundle from Python.

    import cleave

    bundle = cleave.compile("model.onnx", "model.cleave", target="cpu")
    session = cleave.Session(bundle)

This runs the ``cleave compile`` command line, so Python and the command
line build the same bundle through the same passes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

# The build tree this source tree builds into by default (README).
_DEFAULT_CLEAVE = Path(__file__).resolve().parents[2] / "build" / "bin" / "cleave"


class CompileError(RuntimeError):
    """``cleave compile`` failed; the message carries what it printed."""

    def __init__(self, command: Sequence[str], returncode: int, stderr: str):
        self.command = list(command)
        self.returncode = returncode
        self.stderr = stderr
        detail = stderr.strip() or "(no message)"
        super().__init__(f"cleave compile failed with exit status {returncode}:\n{detail}")


def _runtime_build_cleave() -> Path | None:
    """``<build>/bin/cleave`` of the build whose runtime module is on the
    import path (``<build>/python/cleave/_runtime*.so``), so that a compile
    from Python uses the compiler of the runtime that will run the bundle."""
    try:
        spec = importlib.util.find_spec("cleave._runtime")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    origin = Path(spec.origin).resolve()
    if origin.parent.name != "cleave" or origin.parent.parent.name != "python":
        return None
    return origin.parents[2] / "bin" / "cleave"


def _executable(path: Path | None) -> bool:
    return path is not None and path.is_file() and os.access(path, os.X_OK)


def find_cleave(cleave_bin: str | os.PathLike | None = None) -> str:
    """The ``cleave`` executable: ``cleave_bin`` when given; else the one
    built beside the runtime module on the import path (a ``<build>/python``
    directory on ``sys.path``, as the lit tests have it); else the build
    tree of this checkout (``<repo>/build/bin/cleave``); else ``cleave`` on
    ``PATH``."""
    if cleave_bin is not None:
        path = Path(cleave_bin)
        if not _executable(path):
            raise FileNotFoundError(f"cleave_bin {str(path)!r} is not an executable")
        return str(path)
    beside_runtime = _runtime_build_cleave()
    if _executable(beside_runtime):
        return str(beside_runtime)
    if _executable(_DEFAULT_CLEAVE):
        return str(_DEFAULT_CLEAVE)
    found = shutil.which("cleave")
    if found:
        return found
    raise FileNotFoundError(
        f"cannot find the cleave executable (not at {_DEFAULT_CLEAVE}, not on "
        "PATH); build it or pass cleave_bin="
    )


def _dims(dims) -> str:
    if isinstance(dims, str):
        return dims
    return "x".join(str(int(d)) for d in dims)


def compile(
    model,
    output: str | os.PathLike,
    target: str = "cpu",
    devices: int = 1,
    input_shapes: Mapping[str, object] | None = None,
    *,
    loss: str | None = None,
    logits: str | None = None,
    labels: str | None = None,
    ignore_index: int | None = None,
    freeze: str | None = None,
    train: Mapping[str, object] | None = None,
    extra_args: Sequence[str] = (),
    cleave_bin: str | os.PathLike | None = None,
) -> Path:
    """Compiles ``model`` into the bundle directory ``output`` and returns
    its path.

    ``model``: a path to an ONNX file, or an ``onnx.ModelProto``.
    ``target``: a target preset name or a target file (docs/targets.md).
    ``input_shapes``: ``{input name: dims}`` binding dynamic dimensions, dims
    as a sequence of ints or a ``"1x128"`` string. ``extra_args``: further
    ``cleave compile`` options. ``cleave_bin``: the executable to run (see
    ``find_cleave``).

    ``loss``: the name of a float scalar graph output; the bundle then
    computes the gradient of it with respect to every float initializer
    (``--gradients``): its outputs are the loss and ``grad:<initializer>``
    for each. With ``logits`` (a graph output) and ``labels`` (the name of a
    new input), ``loss`` is the loss to attach instead: ``"cross-entropy"``
    (int64 class indices, targets equal to ``ignore_index`` not counted) or
    ``"mse"``. ``freeze``: a regular expression of the initializers that
    are not trained. ``train``: compile a whole training step instead of
    the gradients (``--train``), with the optimizer options given as
    ``{"optimizer": "adamw", "lr": 1e-3, ...}`` (``--optimizer``, ``--lr``;
    a ``True`` value is a bare flag such as ``"nesterov"``); run it with
    ``cleave.Trainer``.

    Raises ``CompileError`` carrying the command's stderr when it fails.
    """
    executable = find_cleave(cleave_bin)
    with tempfile.TemporaryDirectory(prefix="cleave-compile-") as scratch:
        if hasattr(model, "SerializeToString"):
            import onnx

            model_path = os.path.join(scratch, "model.onnx")
            onnx.save(model, model_path)
        else:
            model_path = os.fspath(model)
        command = [
            executable, "compile", model_path, "-o", os.fspath(output),
            "--target", target, "--devices", str(int(devices)),
        ]
        if loss is not None:
            command += ["--train" if train is not None else "--gradients",
                        "--loss", loss]
        for option, value in (train or {}).items():
            if value is True:
                command.append(f"--{option}")
            else:
                command += [f"--{option}", str(value)]
        if logits is not None:
            command += ["--logits", logits]
        if labels is not None:
            command += ["--labels", labels]
        if ignore_index is not None:
            command += ["--ignore-index", str(int(ignore_index))]
        if freeze is not None:
            command += ["--freeze", freeze]
        for name, dims in (input_shapes or {}).items():
            command += ["--input-shape", f"{name}={_dims(dims)}"]
        command += [str(a) for a in extra_args]
        result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(command, result.returncode, result.stderr)
    return Path(output)
