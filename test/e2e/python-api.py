# The Python API end to end, with the real compiler: cleave.compile builds a
# bundle from an ONNX model (a path, or an onnx.ModelProto with a dynamic
# dimension bound by input_shapes), cleave.Session runs it in the style of
# onnxruntime's InferenceSession, and the outputs match onnxruntime's.
# Errors surface as Python exceptions carrying the compiler's message.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t %cleave_src | FileCheck %s
# CHECK: inputs: [TensorInfo(name='input_ids', shape=(1, 16), dtype='int64')]
# CHECK: outputs: [TensorInfo(name='logits', shape=(1, 16, 128), dtype='float32')]
# CHECK: tiny-gpt matches onnxruntime: True
# CHECK: list form matches: True
# CHECK: model proto: y float32 (3, 4) matches: True
# CHECK: CompileError: {{.*}}input 'x' has dynamic dimension 0 ('batch')
# CHECK: RuntimeError: {{.*}}input 'input_ids'

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import cleave

work, src = sys.argv[1], sys.argv[2]
cleave_bin = os.path.join(os.path.dirname(src), "build", "bin", "cleave")
if not os.path.exists(cleave_bin):
    cleave_bin = None  # found on PATH (lit puts the build's bin there)
model = os.path.join(src, "examples", "tiny-gpt", "model.onnx")

bundle = cleave.compile(model, os.path.join(work, "gpt.cleave"), target="cpu")
session = cleave.Session(bundle, threads=1)
print("inputs:", session.get_inputs())
print("outputs:", session.get_outputs())
ids = (np.arange(16, dtype=np.int64) * 5 % 128).reshape(1, 16)
got = session.run({"input_ids": ids})["logits"]
want = ort.InferenceSession(model).run(None, {"input_ids": ids})[0]
print("tiny-gpt matches onnxruntime:",
      bool(np.abs(got - want).max() <= 1e-4 * np.abs(want).max()))
(listed,) = session.run(None, {"input_ids": ids})
print("list form matches:", bool(np.array_equal(listed, got)))

# A ModelProto with a dynamic batch, bound at compile time.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
nodes = [helper.make_node("Sigmoid", ["x"], ["s"]),
         helper.make_node("Mul", ["x", "s"], ["y"])]
proto = helper.make_model(helper.make_graph(nodes, "swish", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
swish = cleave.compile(proto, os.path.join(work, "swish.cleave"),
                       input_shapes={"x": (3, 4)})
data = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
out = cleave.Session(swish).run({"x": data})["y"]
print("model proto:", "y", out.dtype, out.shape, "matches:",
      bool(np.allclose(out, data / (1 + np.exp(-data)), rtol=1e-6, atol=1e-6)))

try:
    cleave.compile(proto, os.path.join(work, "unbound.cleave"))
except cleave.CompileError as error:
    print("CompileError:", str(error).replace("\n", " "))
try:
    session.run({"input_ids": ids.astype(np.int32)})
except RuntimeError as error:
    print("RuntimeError:", error)
