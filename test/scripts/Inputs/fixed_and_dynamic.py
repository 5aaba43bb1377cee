"""Writes DIR/tiny.onnx (x: 4 x 16 floats, ids: 4 int64, y = x W and the
ids plus one) and DIR/dynamic.onnx (x's first dimension named, not fixed)."""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
weight = numpy_helper.from_array(np.ones((16, 8), np.float32), "w")
one = numpy_helper.from_array(np.array(1, np.int64), "one")
for name, rows in (("tiny", 4), ("dynamic", "batch")):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]),
         helper.make_node("Add", ["ids", "one"], ["next"])],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 16]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 8]),
         helper.make_tensor_value_info("next", TensorProto.INT64, [4])],
        [weight, one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(out / f"{name}.onnx"))
