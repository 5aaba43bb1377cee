# The runtime runs the CPU kernels built for the highest x86-64 level the
# CPU has, but no higher than the level the bundle's programs were built
# for (the manifest's cpu_isa, from --march or the target's isa), so that a
# bundle runs the same instructions on every node it was compiled for. Each
# level's kernels compute what onnxruntime computes.
# REQUIRES: cpu-x86-64-v4
# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
# CHECK: x86-64: kernels x86-64, matches onnxruntime: True
# CHECK: x86-64-v2: kernels x86-64, matches onnxruntime: True
# CHECK: x86-64-v3: kernels x86-64-v3, matches onnxruntime: True
# CHECK: x86-64-v4: kernels x86-64-v4, matches onnxruntime: True
# CHECK: native: kernels x86-64-v4, matches onnxruntime: True
# CHECK: cpu target: kernels x86-64-v3

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import cleave

work = sys.argv[1]
rng = np.random.default_rng(0)
channels = 24
weight = rng.standard_normal((channels, 1, 3, 3)).astype(np.float32)
bias = rng.standard_normal(channels).astype(np.float32)
graph = helper.make_graph(
    [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], group=channels,
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Softmax", ["c"], ["y"], axis=-1),
    ],
    "depthwise_softmax",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, channels, 17, 19])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
path = os.path.join(work, "model.onnx")
onnx.save(model, path)

x = rng.standard_normal((2, channels, 17, 19)).astype(np.float32)
expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
    None, {"x": x})[0]
for march in ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "native"]:
    bundle = cleave.compile(path, os.path.join(work, march), extra_args=["--march", march])
    session = cleave.Session(bundle, threads=2)
    (y,) = session.run(None, {"x": x})
    close = np.allclose(y, expected, rtol=1e-5, atol=1e-6)
    print(f"{march}: kernels {session.kernel_isa}, matches onnxruntime: {close}")

# The cpu preset's devices are x86-64-v3 (targets/cpu.json).
session = cleave.Session(cleave.compile(path, os.path.join(work, "cpu")), threads=1)
print(f"cpu target: kernels {session.kernel_isa}")
