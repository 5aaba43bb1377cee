"""Inputs of cleave-compile.test: a model with a dynamic batch dimension,
two whose batch cannot be cut into blocks (a sum over the batch; an output
that interleaves the samples with the sequence), and a target file that
does not say what its devices run."""

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

# x: [4, 8] -> sum over the batch.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
axes = helper.make_tensor("axes", TensorProto.INT64, [1], [0])
graph = helper.make_graph(
    [helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="batch_sum")],
    "batch_sum", [x], [y], initializer=[axes])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          f"{out}/batch-sum.onnx")

# x: [B=4, S=8, H=16] -> [S, B, H] -> [S * B, H]: the samples interleave.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8, 16])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 16])
shape = helper.make_tensor("rows", TensorProto.INT64, [2], [32, 16])
graph = helper.make_graph(
    [helper.make_node("Transpose", ["x"], ["t"], name="seq_first",
                      perm=[1, 0, 2]),
     helper.make_node("Reshape", ["t", "rows"], ["y"], name="to_rows")],
    "interleaved", [x], [y], initializer=[shape])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          f"{out}/interleaved.onnx")

with open(sys.argv[2]) as f:
    target = json.load(f)
del target["devices"]["kind"]
target["name"] = "no-kind"
with open(f"{out}/no-kind.json", "w") as f:
    json.dump(target, f)
