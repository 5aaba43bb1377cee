# oneDNN picks its instructions from the CPU it runs on; the runtime caps it
# at the bundle's cpu_isa, as it does its own kernels, so that a bundle
# built for x86-64-v3 runs AVX2 code in its convolutions on an AVX-512
# machine too. Each bundle runs in its own process (oneDNN takes the cap
# once per process), with DNNL_VERBOSE naming the implementation of every
# convolution it runs; the results match onnxruntime at each level.
# REQUIRES: cpu-x86-64-v4
# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
# CHECK: x86-64-v2: jit:sse41 matches onnxruntime: True
# CHECK: x86-64-v3: jit:avx2 matches onnxruntime: True
# CHECK: x86-64-v4: {{[a-z_]+}}:avx512_core matches onnxruntime: True

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import cleave

work = sys.argv[1]
rng = np.random.default_rng(0)
# 32 -> 32 channels, 3x3 over 32x32: 9.4M multiply-adds, on oneDNN.
weight = rng.standard_normal((32, 32, 3, 3)).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
    "conv",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 32, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(weight, "w")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
path = os.path.join(work, "conv.onnx")
onnx.save(model, path)

x = rng.standard_normal((1, 32, 32, 32)).astype(np.float32)
np.save(os.path.join(work, "x.npy"), x)
expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
    None, {"x": x})[0]
RUN = """
import sys
import numpy as np
import cleave
session = cleave.Session(sys.argv[1], threads=1)
(y,) = session.run(None, {"x": np.load(sys.argv[2])})
np.save(sys.argv[3], y)
"""
for march in ["x86-64-v2", "x86-64-v3", "x86-64-v4"]:
    bundle = str(cleave.compile(path, os.path.join(work, march),
                                extra_args=["--march", march]))
    result = os.path.join(work, march + ".npy")
    verbose = subprocess.run(
        [sys.executable, "-c", RUN, bundle, os.path.join(work, "x.npy"), result],
        env=dict(os.environ, DNNL_VERBOSE="1"), capture_output=True, text=True,
        check=True).stdout
    # dnnl_verbose,exec,cpu,convolution,<implementation>,forward_inference,...
    implementations = sorted({line.split(",")[4] for line in verbose.splitlines()
                              if ",exec,cpu,convolution," in line})
    close = np.allclose(np.load(result), expected, rtol=1e-4, atol=1e-4)
    print(f"{march}: {' '.join(implementations) or 'none'} matches onnxruntime: {close}")
