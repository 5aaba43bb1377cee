# Depthwise convolutions (one input channel per group) compiled for the cpu
# target agree with onnxruntime, over kernel sizes 1 to 7, strides 1 to 3,
# dilations, symmetric and asymmetric pads, maps smaller than the kernel's
# span (1x1, 2x2), wide rows and a channel multiplier: every output within
# 1e-5 + 1e-4 * |expected|. One model holds every case as its own output,
# so it compiles once.
# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
# CHECK-NOT: differs
# CHECK: {{[1-9][0-9]+}} depthwise convolutions, all within tolerance of onnxruntime

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import cleave

work = sys.argv[1]
rng = np.random.default_rng(7)
nodes, inputs, outputs, weights, feeds, names = [], [], [], [], {}, []
maps = [(1, 1), (2, 2), (7, 7), (6, 41)]
for index, (k, stride, dilation, pads, hw, multiplier) in enumerate(
        (k, s, d, p, hw, m)
        for k in (1, 3, 5, 7) for s in (1, 2, 3) for d in (1, 2)
        for p in ("none", "same", "skewed") for hw in maps for m in (1, 2)
        if (k + s + d) % 2 == 0 or m == 1):
    pad = {"none": [0, 0, 0, 0], "same": [k // 2] * 4, "skewed": [1, 0, 0, 2]}[pads]
    span = (k - 1) * dilation + 1
    if hw[0] + pad[0] + pad[2] < span or hw[1] + pad[1] + pad[3] < span:
        continue
    channels = 4
    x = f"x{index}"
    inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, channels, *hw]))
    feeds[x] = rng.standard_normal((1, channels, *hw)).astype(np.float32)
    w = rng.standard_normal((channels * multiplier, 1, k, k)).astype(np.float32)
    b = rng.standard_normal(channels * multiplier).astype(np.float32)
    weights += [numpy_helper.from_array(w, f"w{index}"), numpy_helper.from_array(b, f"b{index}")]
    nodes.append(helper.make_node(
        "Conv", [x, f"w{index}", f"b{index}"], [f"y{index}"], group=channels,
        kernel_shape=[k, k], strides=[stride, stride], dilations=[dilation, dilation],
        pads=pad))
    outputs.append(helper.make_tensor_value_info(f"y{index}", TensorProto.FLOAT, None))
    names.append(f"k{k} s{stride} d{dilation} pads {pads} map {hw[0]}x{hw[1]} x{multiplier}")

model = helper.make_model(helper.make_graph(nodes, "depthwise", inputs, outputs, weights),
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
path = os.path.join(work, "depthwise.onnx")
onnx.save(model, path)
expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
session = cleave.Session(cleave.compile(path, os.path.join(work, "depthwise.cleave")), threads=2)
got = session.run(None, feeds)
failures = 0
for name, ours, theirs in zip(names, got, expected):
    if ours.shape != theirs.shape or not np.allclose(ours, theirs, rtol=1e-4, atol=1e-5):
        print(f"{name}: differs from onnxruntime")
        failures += 1
if failures:
    sys.exit(f"{failures} of {len(names)} depthwise convolutions differ")
print(f"{len(names)} depthwise convolutions, all within tolerance of onnxruntime")
