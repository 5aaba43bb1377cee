# Indexing operators: GatherND (with batch_dims), ScatterND and
# ScatterElements (with their reductions), GatherElements, OneHot and Trilu.
# Negative axes are normalised, OneHot's depth and Trilu's k become
# attributes, float OneHot indices are cast to int64, and indices that are
# data stay operands. Every graph output is declared with the shape
# onnxruntime computes. Bad configuration is an error naming the node.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/index.onnx | FileCheck %s
#
# RUN: not cleave-translate --import-onnx %t/depth-runtime.onnx 2>&1 | FileCheck %s --check-prefix=DEPTH_RUNTIME
# DEPTH_RUNTIME: error: node 'hot' (OneHot): input 1 ('depth', value 'depth') must be a constant
# RUN: not cleave-translate --import-onnx %t/depth-zero.onnx 2>&1 | FileCheck %s --check-prefix=DEPTH_ZERO
# DEPTH_ZERO: error: node 'hot' (OneHot): depth 0 must be a positive integer
# RUN: not cleave-translate --import-onnx %t/reduction.onnx 2>&1 | FileCheck %s --check-prefix=REDUCTION
# REDUCTION: error: node 'scatter' (ScatterND): reduction 'sum' is not one of none, add, mul, max, min
# RUN: not cleave-translate --import-onnx %t/tuple.onnx 2>&1 | FileCheck %s --check-prefix=TUPLE
# TUPLE: error: node 'gnd' (GatherND): {{.*}}the last dimension of 'indices' (3) must be static and in [1, 2]
# RUN: not cleave-translate --import-onnx %t/trilu-k.onnx 2>&1 | FileCheck %s --check-prefix=TRILU_K
# TRILU_K: error: node 'tri' (Trilu): k must be a scalar

import sys

import numpy as np

from cleave.testing import GraphBuilder

out = sys.argv[1]

# CHECK-LABEL: func.func @main
# CHECK-SAME: (%[[D:[^:]+]]: tensor<2x5x8xf32> {cleave.name = "d"}, %[[X:[^:]+]]: tensor<4x4xf32> {cleave.name = "x"}, %[[U:[^:]+]]: tensor<2x4xf32> {cleave.name = "u"}, %[[E:[^:]+]]: tensor<4x2xi64> {cleave.name = "e"}, %[[H:[^:]+]]: tensor<5xf32> {cleave.name = "h"}, %[[T:[^:]+]]: tensor<2x3x4xf32> {cleave.name = "t"})
# CHECK: %[[I:.+]] = cleave.constant dense<{{\[\[\[}}1], [-1], [0]], {{\[\[}}4], [2], [2]]]> : tensor<2x3x1xi64>
# CHECK: %[[GND:.+]] = cleave.gather_nd %[[D]], %[[I]] {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi64>) -> tensor<2x3x8xf32>
# CHECK: %[[SND:.+]] = cleave.scatter_nd %[[X]], %{{.+}}, %[[U]] {reduction = "max"} : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
# CHECK: %[[GE:.+]] = cleave.gather_elements %[[X]], %[[E]] {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
# CHECK: %[[SE:.+]] = cleave.scatter_elements %[[X]], %{{.+}}, %[[U]] {axis = 0 : i64, reduction = "add"} : (tensor<4x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
# CHECK: %[[CAST:.+]] = cleave.cast %[[H]] : tensor<5xf32> to tensor<5xi64>
# CHECK: %[[HOT:.+]] = cleave.one_hot %[[CAST]], %{{.+}} {axis = 1 : i64, depth = 7 : i64} : (tensor<5xi64>, tensor<2xf32>) -> tensor<5x7xf32>
# CHECK: %[[LOW:.+]] = cleave.trilu %[[T]] {k = -1 : i64, upper = false} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
# CHECK: %[[UP:.+]] = cleave.trilu %[[T]] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
# CHECK: return %[[GND]], %[[SND]], %[[GE]], %[[SE]], %[[HOT]], %[[LOW]], %[[UP]]
g = GraphBuilder(opset=18)
d = g.input("d", [2, 5, 8])
x = g.input("x", [4, 4])
u = g.input("u", [2, 4])
e = g.input("e", [4, 2], np.int64)
h = g.input("h", [5])
t = g.input("t", [2, 3, 4])
i = g.const(np.array([[[1], [-1], [0]], [[4], [2], [2]]], np.int64))
g.output(g.node("GatherND", [d, i], batch_dims=1))
g.output(g.node("ScatterND", [x, g.const(np.array([[1], [-3]], np.int64)), u],
                reduction="max"))
g.output(g.node("GatherElements", [x, e], axis=-1))
g.output(g.node("ScatterElements",
                [x, g.const(np.array([[0, 1, 2, 3], [3, 2, 1, -4]], np.int64)), u],
                axis=-2, reduction="add"))
g.output(g.node("OneHot", [h, g.const(np.float32(7)),
                           g.const(np.array([0, 1], np.float32))]))
g.output(g.node("Trilu", [t, g.const(np.int64(-1))], upper=0))
g.output(g.node("Trilu", [t]))
g.declare_reference_shapes()
g.save(f"{out}/index.onnx")


def one_hot(path, depth_input):
    g = GraphBuilder(opset=11)
    ids = g.input("ids", [3], np.int64)
    g.output(g.node("OneHot", [ids, depth_input(g), g.const(np.array([0, 1], np.float32))],
                    name="hot"), [3, 4])
    g.save(path)


one_hot(f"{out}/depth-runtime.onnx", lambda g: g.input("depth", [], np.int64))
one_hot(f"{out}/depth-zero.onnx", lambda g: g.const(np.int64(0)))

g = GraphBuilder(opset=18)
x = g.input("x", [4])
g.output(g.node("ScatterND", [x, g.const(np.array([[1]], np.int64)), g.const(np.ones(1, np.float32))],
                name="scatter", reduction="sum"), [4])
g.save(f"{out}/reduction.onnx")

g = GraphBuilder(opset=13)
x = g.input("x", [4, 5])
g.output(g.node("GatherND", [x, g.const(np.zeros((2, 3), np.int64))], name="gnd"), [2])
g.save(f"{out}/tuple.onnx")

g = GraphBuilder(opset=14)
x = g.input("x", [3, 3])
g.output(g.node("Trilu", [x, g.const(np.array([1, 2], np.int64))], name="tri"), [3, 3])
g.save(f"{out}/trilu-k.onnx")
