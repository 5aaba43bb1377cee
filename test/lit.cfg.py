# -*- Python -*-
# lit configuration for the cleave regression tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "cleave"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cleave_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# In a sanitized build (scripts/sanitize.sh) the interpreter preloads the
# shared ASan runtime, without which it cannot import the runtime's module;
# the interpreter's own allocations at exit are not leaks of ours.
python = config.python_executable
if getattr(config, "cleave_sanitizer_preload", ""):
    asan_options = os.environ.get("ASAN_OPTIONS", "")
    python = "env LD_PRELOAD={} ASAN_OPTIONS={} {}".format(
        config.cleave_sanitizer_preload,
        (asan_options + ":" if asan_options else "") + "detect_leaks=0",
        python,
    )
if getattr(config, "cleave_sanitize", ""):
    config.available_features.add("sanitizer")
config.substitutions.append(("%python", python))
# The fuzz targets (fuzz/) are part of the sanitized build only.
if getattr(config, "cleave_build_fuzzers", "").upper() in ("ON", "TRUE", "1"):
    config.available_features.add("fuzzers")
config.substitutions.append(("%cleave_src", config.cleave_src_root))
config.substitutions.append(
    ("%mlir_include", os.path.join(os.path.dirname(config.llvm_tools_dir), "include"))
)

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()

# The project's Python package (model generators) is importable from tests,
# with the runtime module this build made (<build>/python/cleave/_runtime).
llvm_config.with_environment(
    "PYTHONPATH", os.path.join(config.cleave_src_root, "python"), append_path=True
)
llvm_config.with_environment(
    "PYTHONPATH", os.path.join(config.cleave_obj_root, "python"), append_path=True
)
# libcleave_rt.so, which hand-built test programs link against.
config.substitutions.append(("%cleave_lib", os.path.join(config.cleave_obj_root, "lib")))

tool_dirs = [config.cleave_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["cleave", "cleave-opt", "cleave-translate", "cleave-worker"], tool_dirs
)
llvm_config.with_environment("PATH", config.cleave_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Tests that need torch (model exports) declare `REQUIRES: torch`.
try:
    import subprocess

    subprocess.run(
        [config.python_executable, "-c", "import torch, torchvision, torchaudio"],
        check=True,
        capture_output=True,
    )
    config.available_features.add("torch")
except Exception:
    pass

# The HTML report's test opens it in headless Chromium (scripts/setup.sh
# installs the Debian package).
import shutil

if shutil.which("chromium"):
    config.available_features.add("chromium")
# Progress drawing is tested under a pseudo-terminal made by script(1).
if shutil.which("script"):
    config.available_features.add("script")

# Which compiler builds the programs of `cleave compile` by default:
# program-cxx-clang where it is Clang (a sanitized build), whose vector math
# differs from GCC's (test/Target/vector-math.py).
try:
    import subprocess

    macros = subprocess.run(
        [getattr(config, "cleave_program_cxx", "") or "c++", "-dM", "-E",
         "-x", "c++", "/dev/null"],
        capture_output=True, text=True, check=True).stdout
    if "#define __clang__ " in macros:
        config.available_features.add("program-cxx-clang")
except (OSError, subprocess.CalledProcessError):
    pass

# Clang beside the LLVM tools (%clangxx), to build programs with
# `cleave compile --cxx %clangxx`.
clangxx = os.path.join(config.llvm_tools_dir, "clang++")
if os.access(clangxx, os.X_OK):
    config.available_features.add("clang")
    config.substitutions.append(("%clangxx", clangxx))

# The x86-64 levels this CPU has (cpu-x86-64-v3: AVX2, FMA; cpu-x86-64-v4:
# AVX-512), for the tests of the CPU kernels' variants of each level.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = set()
        for line in cpuinfo:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    v3 = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
    v4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
    if v3 <= flags:
        config.available_features.add("cpu-x86-64-v3")
        if v4 <= flags:
            config.available_features.add("cpu-x86-64-v4")
except OSError:
    pass

# OpenBLAS's OpenMP flavour (libopenblas-openmp-dev), which the CPU kernels
# link where it is installed.
import glob

if glob.glob("/usr/lib/*/openblas-openmp/libopenblas.so.0"):
    config.available_features.add("openblas-openmp")

# Tests of bundles for several devices declare `REQUIRES: mpi`: OpenMPI's
# mpirun starts their ranks. %mpirun runs it on this machine's few cores
# (and as root, where CI runs).
if shutil.which("mpirun"):
    config.available_features.add("mpi")
    mpirun = "mpirun --oversubscribe"
    if os.geteuid() == 0:
        mpirun += " --allow-run-as-root"
    # Under %python's preloaded ASan runtime, mpirun would run OpenMPI's
    # own code sanitized; the ranks are sanitized builds of their own (as
    # where `cleave run` starts mpirun, runtime/src/RunCommand.cpp).
    if getattr(config, "cleave_sanitizer_preload", ""):
        mpirun = "env -u LD_PRELOAD " + mpirun
    config.substitutions.append(("%mpirun", mpirun))

# Tests of the CUDA kernel library (libcleave_rt_cuda.so) declare
# `REQUIRES: cuda`: the build made it.
if getattr(config, "cleave_cuda_enabled", False):
    config.available_features.add("cuda")
    config.substitutions.append(
        (
            "%cleave_cuda_lib",
            os.path.join(config.cleave_obj_root, "lib", "libcleave_rt_cuda.so"),
        )
    )

# The NCCL communicator (libcleave_comm_nccl.so), built where NCCL is found:
# GPU ranks started as processes load it.
if os.path.exists(os.path.join(config.cleave_obj_root, "lib", "libcleave_comm_nccl.so")):
    config.available_features.add("nccl")

# A GPU this machine can run on (tests of what happens without one declare
# `UNSUPPORTED: gpu`).
try:
    import subprocess

    subprocess.run(["nvidia-smi", "-L"], check=True, capture_output=True,
                   timeout=20)
    config.available_features.add("gpu")
except Exception:
    pass
