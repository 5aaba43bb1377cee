"""cleave: an ahead-of-time model-partitioning compiler (Python side).

``cleave.compile`` runs the ``cleave compile`` command line; ``cleave.Session``
runs the bundle it writes through the runtime library. The session loads on
first use, so the model generators and exporters import without a build.
"""

import importlib
import os
import pkgutil

# The compiled runtime module is built into <build>/python/cleave/; with
# <build>/python on sys.path that directory joins this package.
__path__ = pkgutil.extend_path(__path__, __name__)

# Imported here (it needs only the standard library) so that the name
# `compile` is the function: importing the submodule first binds it to the
# module, and a later import of cleave.compile does not bind it again.
from .compile import CompileError, compile  # noqa: E402

__all__ = ["Session", "TensorInfo", "Trainer", "compile", "CompileError",
           "sample_order"]


def _others_running() -> int:
    """The threads of other processes running on this machine now: the
    fewest of five readings of /proc/stat's procs_running, a millisecond
    apart, less this process's own (CLEAVE_OPENMP_OTHERS where set; 0 where
    /proc/stat cannot be read), as `cleave run` counts them."""
    given = os.environ.get("CLEAVE_OPENMP_OTHERS", "")
    if given.isdigit():
        return int(given)
    import time
    fewest = None
    for reading in range(5):
        if reading:
            time.sleep(0.001)
        try:
            with open("/proc/stat") as stat:
                running = next((int(line.split()[1]) for line in stat
                                if line.startswith("procs_running ")), None)
        except (OSError, ValueError):
            return 0
        if running is None:
            return 0
        fewest = running if fewest is None else min(fewest, running)
    return max(0, fewest - 1)


def _choose_openmp_waits():
    """Chooses how OpenMP threads wait for work, unless the user chose
    (OMP_WAIT_POLICY, GOMP_SPINCOUNT): where no other process is running
    (a Session's threads are the machine's cores), they spin a short while
    (GOMP_SPINCOUNT=30000, about a millisecond, not libgomp's default
    300000 spins), since waking a sleeping thread costs tens of
    microseconds at every parallel region; where others are, they sleep at
    once (OMP_WAIT_POLICY=PASSIVE), since a spinning thread takes the core
    that another's working thread needs. libgomp lowers its spins by itself
    where one process runs more threads than there are CPUs (a
    SessionGroup's ranks). libgomp reads the variables once, when it loads,
    so this is done when cleave is imported, and does nothing when another
    module (torch, say) loaded libgomp first. CLEAVE_OPENMP_WAITS marks the
    choice as this process's (its pid): `cleave run`, `cleave train` and
    `cleave-worker` started from it choose again for themselves."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return
    try:
        with open("/proc/self/maps") as maps:
            if "libgomp" in maps.read():
                return
    except OSError:
        pass
    if _others_running() == 0:
        os.environ["GOMP_SPINCOUNT"] = "30000"
    else:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.environ["CLEAVE_OPENMP_WAITS"] = str(os.getpid())


_choose_openmp_waits()


def _prefer_instruction_set_blas_kernels():
    """Tells OpenBLAS, through OPENBLAS_CORETYPE, to run the kernels of the
    CPU's instructions on an Intel CPU (SkylakeX with AVX-512, Haswell with
    AVX2 and FMA, Sandybridge with AVX), unless the user chose: OpenBLAS
    picks its kernels by model number and runs its generic SSE3 ones on an
    Intel model newer than its table (0.3.21 and Sapphire or Emerald
    Rapids). OpenBLAS reads the variable once, when it loads, so this is
    done when cleave is imported and does nothing when another module
    (torch, say) loaded it first; a session then warns. `cleave run`,
    `cleave train` and `cleave-worker` do the same for their own processes,
    where OpenBLAS chose narrower kernels."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        # Not numpy's own (ILP64: libopenblas64_...), which is another
        # library.
        with open("/proc/self/maps") as maps:
            for line in maps:
                name = line.rstrip().rsplit("/", 1)[-1]
                if name.startswith("libopenblas") and "64_" not in name:
                    return
        with open("/proc/cpuinfo") as cpuinfo:
            text = cpuinfo.read()
    except OSError:
        return
    fields = dict(line.split(":", 1) for line in text.splitlines()[:40]
                  if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    if fields.get("vendor_id") != "GenuineIntel":
        return
    flags = set(fields.get("flags", "").split())
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"
    elif "avx" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "Sandybridge"


_prefer_instruction_set_blas_kernels()


def __getattr__(name):
    if name not in ("Session", "TensorInfo", "Trainer", "sample_order"):
        raise AttributeError(f"module 'cleave' has no attribute '{name}'")
    value = getattr(importlib.import_module("cleave.session"), name)
    globals()[name] = value
    return value
