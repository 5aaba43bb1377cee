# OpenBLAS chooses its kernels by the CPU's model number when it loads, and
# runs its generic SSE3 kernels (Prescott) on an Intel model newer than its
# table. cleave names the kernels of the CPU's instructions instead, through
# OPENBLAS_CORETYPE, where the user set none: `cleave run` runs itself again
# with it set when OpenBLAS chose narrower kernels, and `import cleave` sets
# it before OpenBLAS loads. A value the user set is kept. The kernels
# expected: on an Intel CPU, SkylakeX with AVX-512, Haswell with AVX2 and
# FMA; elsewhere OpenBLAS's own choice, untouched.
# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
# CHECK: cleave run: the kernels expected: True
# CHECK-NEXT: cleave run, OPENBLAS_CORETYPE=Prescott: Prescott
# CHECK-NEXT: import cleave: the kernels expected: True

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

work = sys.argv[1]
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(np.ones((64, 64), np.float32), "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(work, "matmul.onnx"))
np.save(os.path.join(work, "x.npy"), np.ones((64, 64), np.float32))
subprocess.run(["cleave", "compile", os.path.join(work, "matmul.onnx"), "-o",
                os.path.join(work, "bundle"), "--quiet"], check=True)

with open("/proc/cpuinfo") as cpuinfo:
    fields = {}
    for line in cpuinfo.read().splitlines()[:40]:
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key.strip()] = value.strip()
flags = set(fields.get("flags", "").split())
expected = None
if fields.get("vendor_id") == "GenuineIntel":
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        expected = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        expected = "Haswell"

environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
environment["OPENBLAS_VERBOSE"] = "2"


def cores(env):
    """The cores OpenBLAS reported as it loaded, once per exec."""
    done = subprocess.run(
        ["cleave", "run", os.path.join(work, "bundle"), "--input",
         "x=" + os.path.join(work, "x.npy"), "--output-dir",
         os.path.join(work, "out")], env=env, capture_output=True, text=True,
        check=True)
    return [line.split(":", 1)[1].strip()
            for line in (done.stdout + done.stderr).splitlines()
            if line.startswith("Core:")]


ran = cores(environment)
# Elsewhere: whatever OpenBLAS chose, never replaced.
print("cleave run: the kernels expected:",
      ran[-1] == expected if expected else len(set(ran)) == 1)
print("cleave run, OPENBLAS_CORETYPE=Prescott:",
      " ".join(sorted(set(cores(dict(environment, OPENBLAS_CORETYPE="Prescott"))))))

# A fresh interpreter that imports cleave before anything loads OpenBLAS.
session = subprocess.run(
    [sys.executable, "-c", """
import ctypes, sys
import numpy as np
import cleave
session = cleave.Session(sys.argv[1])
session.run(None, {"x": np.ones((64, 64), np.float32)})
# The OpenBLAS the runtime loaded (numpy's wheel brings one of its own,
# libopenblas64_...).
path = next(line.split()[-1] for line in open("/proc/self/maps")
            if line.split()[-1].rsplit("/", 1)[-1].startswith("libopenblas")
            and "64_" not in line.split()[-1])
blas = ctypes.CDLL(path)
blas.openblas_get_corename.restype = ctypes.c_char_p
print(blas.openblas_get_corename().decode())
""", os.path.join(work, "bundle")], env=environment, capture_output=True,
    text=True, check=True)
core = session.stdout.split()[-1]
print("import cleave: the kernels expected:",
      core == expected if expected else "warning" not in session.stderr)
