# What the import records besides the ops: ONNX names of the function's
# arguments and results, model metadata on the module, and node names as
# locations (unnamed nodes are <OpType>_<index>).
#
# RUN: %python %s %t.onnx
# RUN: cleave-translate --import-onnx %t.onnx --mlir-print-debuginfo | FileCheck %s
# RUN: cleave-translate --import-onnx %t.onnx --onnx-function-name=encoder | FileCheck %s --check-prefix=NAME
# NAME: func.func @encoder(

import sys

import numpy as np

from cleave.testing import GraphBuilder

# CHECK: #[[FILE:loc[0-9]*]] = loc("{{.*}}metadata.py.tmp.onnx":0:0)
# CHECK: module attributes {cleave.onnx_ir_version = 9 : i64, cleave.onnx_model = "{{.*}}metadata.py.tmp.onnx", cleave.onnx_opset = 18 : i64, cleave.onnx_producer = "cleave-tests 1"}
# CHECK: func.func @main(%[[IDS:[^:]+]]: tensor<2x3xf32> {cleave.name = "input_ids"} loc("input_ids"(#[[FILE]])), %[[MASK:[^:]+]]: tensor<2x3xf32> {cleave.name = "attention_mask"} loc("attention_mask"(#[[FILE]])))
# CHECK-SAME: -> (tensor<2x3xf32> {cleave.name = "logits"}, tensor<2x3xf32> {cleave.name = "attention_mask"})
# CHECK: %[[ADD:.+]] = cleave.add %[[IDS]], %[[MASK]] {{.*}} loc(#[[ADD_LOC:loc[0-9]+]])
# CHECK: %[[TANH:.+]] = cleave.tanh %[[ADD]] {{.*}} loc(#[[TANH_LOC:loc[0-9]+]])
# A graph input can be a graph output as it is.
# CHECK: return %[[TANH]], %[[MASK]]
# CHECK-DAG: #[[ADD_LOC]] = loc("encoder/add"(#[[FILE]]))
# CHECK-DAG: #[[TANH_LOC]] = loc("Tanh_1"(#[[FILE]]))
g = GraphBuilder(opset=18, ir_version=9)
ids = g.input("input_ids", [2, 3])
mask = g.input("attention_mask", [2, 3])
v = g.node("Add", [ids, mask], name="encoder/add")
v = g.node("Tanh", [v], ["logits"])
g.output(v, [2, 3])
g.output(mask, [2, 3])
g.save(sys.argv[1])
