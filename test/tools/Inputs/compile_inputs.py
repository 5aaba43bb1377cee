"""Inputs of cleave-compile.test: a model with a dynamic batch dimension and
a target file that does not say what its devices run."""

import json
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                          "dynamic", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, f"{out}/dynamic.onnx")

with open(sys.argv[2]) as f:
    target = json.load(f)
del target["devices"]["kind"]
target["name"] = "no-kind"
with open(f"{out}/no-kind.json", "w") as f:
    json.dump(target, f)
