# Exporters compute reshape targets from the input's shape at run time
# (Shape -> Gather -> Unsqueeze -> Concat -> Reshape). Once --input-shape
# binds the dynamic dimensions, these subgraphs fold during import: the
# reshape gets a static result type and no shape computation is left.
#
# RUN: %python %s %t.onnx
# RUN: cleave-translate --import-onnx %t.onnx --input-shape x=2x16x64 | FileCheck %s
#
# Without the binding the model cannot be imported (see input-shape.py).
# RUN: not cleave-translate --import-onnx %t.onnx 2>&1 | FileCheck %s --check-prefix=UNBOUND
# UNBOUND: error: input 'x' has dynamic dimensions 0 ('batch'), 1 ('seq')

import sys

import numpy as np

from cleave.testing import GraphBuilder

# CHECK-LABEL: func.func @main
# CHECK-SAME: (%[[X:.+]]: tensor<2x16x64xf32> {cleave.name = "x"})
# CHECK-NOT: cleave.shape
# CHECK-NOT: cleave.gather
# CHECK-NOT: cleave.unsqueeze
# CHECK-NOT: cleave.concat
# CHECK: %[[HEADS:.+]] = cleave.reshape %[[X]] : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
# CHECK: %[[T:.+]] = cleave.transpose %[[HEADS]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
# The position ids: Range(0, seq) over the folded sequence length.
# CHECK: %[[POS:.+]] = cleave.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
# CHECK: %[[MASK:.+]] = cleave.constant dense<1.000000e+00> : tensor<2x16xf32>
# CHECK-NOT: cleave.shape
# CHECK: return %[[T]], %[[POS]], %[[MASK]] : tensor<2x4x16x16xf32>, tensor<16xi64>, tensor<2x16xf32>
g = GraphBuilder(opset=17)
x = g.input("x", ["batch", "seq", 64])
shape = g.node("Shape", [x])


def dim(i):
    d = g.node("Gather", [shape, g.const(np.int64(i))])
    return g.node("Unsqueeze", [d, g.const(np.array([0], np.int64))])


target = g.node("Concat", [dim(0), dim(1), g.const(np.array([4, -1], np.int64))], axis=0)
heads = g.node("Reshape", [x, target])
g.output(g.node("Transpose", [heads], perm=[0, 2, 1, 3]), ["batch", 4, "seq", 16])
seq = g.node("Gather", [shape, g.const(np.int64(1))])
g.output(g.node("Range", [g.const(np.int64(0)), seq, g.const(np.int64(1))]), ["seq"], np.int64)
batch_seq = g.node("Slice", [shape, g.const(np.array([0], np.int64)), g.const(np.array([2], np.int64))])
g.output(g.node("ConstantOfShape", [batch_seq], value=np.array([1.0], np.float32)), ["batch", "seq"])
g.save(sys.argv[1])
