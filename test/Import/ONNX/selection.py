# TopK, ArgMax/ArgMin and CumSum (configuration inputs folded to attributes,
# negative axes normalised) and Einsum, which the importer lowers to
# transposes, reshapes, matmuls, products and sums. Every graph output is
# declared with the shape onnxruntime computes, which the importer checks
# against its own.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/selection.onnx | FileCheck %s --check-prefix=SELECT
# RUN: cleave-translate --import-onnx %t/einsum.onnx | FileCheck %s --check-prefix=EINSUM
# RUN: cleave-translate --import-onnx %t/einsum3.onnx | FileCheck %s --check-prefix=EINSUM3
#
# Errors name the node and the equation.
# RUN: not cleave-translate --import-onnx %t/einsum-diagonal.onnx 2>&1 | FileCheck %s --check-prefix=DIAGONAL
# DIAGONAL: einsum-diagonal.onnx:0:0: error: node 'trace' (Einsum): equation 'ii->': subscript 'i' repeats in input 0; diagonals and traces are not supported
# RUN: not cleave-translate --import-onnx %t/einsum-terms.onnx 2>&1 | FileCheck %s --check-prefix=TERMS
# TERMS: error: node 'Einsum_0' (Einsum): equation 'ij,jk,kl->il': has 3 input terms, but the node has 2 inputs
# RUN: not cleave-translate --import-onnx %t/einsum-rank.onnx 2>&1 | FileCheck %s --check-prefix=RANK
# RUN: not cleave-translate --import-onnx %t/einsum-char.onnx 2>&1 | FileCheck %s --check-prefix=CHAR
# CHAR: error: node 'Einsum_0' (Einsum): equation 'i1,i->': unexpected character '1' (subscripts are letters)
# RANK: error: node 'Einsum_0' (Einsum): equation 'ijk,jk->i': term 'ijk' does not match input 0 of rank 2
# RUN: not cleave-translate --import-onnx %t/einsum-output.onnx 2>&1 | FileCheck %s --check-prefix=OUTPUT
# OUTPUT: error: node 'Einsum_0' (Einsum): equation 'ij,jk->iz': output subscript 'z' appears in no input
# RUN: not cleave-translate --import-onnx %t/einsum-sizes.onnx 2>&1 | FileCheck %s --check-prefix=SIZES
# SIZES: error: node 'Einsum_0' (Einsum): equation 'ij,jk->ik': subscript 'j' has size 3 and 4 (broadcasting is not supported)
# RUN: not cleave-translate --import-onnx %t/topk-k.onnx 2>&1 | FileCheck %s --check-prefix=TOPK_K
# TOPK_K: error: node 'TopK_0' (TopK): K (5) must be in [0, 4], the size of dimension 1
# RUN: not cleave-translate --import-onnx %t/topk-runtime-k.onnx 2>&1 | FileCheck %s --check-prefix=TOPK_RUNTIME
# TOPK_RUNTIME: error: node 'TopK_0' (TopK): input 1 ('K', value 'k') must be a constant
# RUN: not cleave-translate --import-onnx %t/cumsum-axis.onnx 2>&1 | FileCheck %s --check-prefix=CUMSUM_AXIS
# CUMSUM_AXIS: error: node 'CumSum_0' (CumSum): input 1 ('axis') must hold one value, not 2

import sys

import numpy as np

from cleave.testing import GraphBuilder

out = sys.argv[1]

# SELECT-LABEL: func.func @main
# SELECT-SAME: (%[[X:[^:]+]]: tensor<3x4xf32> {{.*}}, %[[N:[^:]+]]: tensor<2x5xi64>
# SELECT: %[[V:.+]], %[[I:.+]] = cleave.topk %[[X]] {axis = 1 : i64, k = 2 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
# SELECT: %[[SV:.+]], %[[SI:.+]] = cleave.topk %[[X]] {axis = 0 : i64, k = 3 : i64, largest = false} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)
# SELECT: %[[AMAX:.+]] = cleave.arg_max %[[X]] {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<3x4xf32>) -> tensor<3xi64>
# SELECT: %[[AMIN:.+]] = cleave.arg_min %[[N]] {axis = 0 : i64} : (tensor<2x5xi64>) -> tensor<1x5xi64>
# SELECT: %[[CS:.+]] = cleave.cumsum %[[N]] {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x5xi64>
# SELECT: return %[[V]], %[[I]], %[[SV]], %[[SI]], %[[AMAX]], %[[AMIN]], %[[CS]]
g = GraphBuilder(opset=13)
x = g.input("x", [3, 4])
n = g.input("n", [2, 5], np.int64)
top = g.node("TopK", [x, g.const([2], dtype=np.int64)], outputs=["v", "i"], axis=-1)
small = g.node("TopK", [x, g.const([3], dtype=np.int64)], outputs=["sv", "si"],
               axis=0, largest=0, sorted=0)
amax = g.node("ArgMax", [x], axis=-1, keepdims=0, select_last_index=1)
amin = g.node("ArgMin", [n])
cs = g.node("CumSum", [n, g.const(-1, dtype=np.int32)], exclusive=1, reverse=1)
for name in top + small + [amax, amin, cs]:
    g.output(name)
g.declare_reference_shapes()
g.save(f"{out}/selection.onnx")

# The forms exporters write: attention scores and context as batched
# matmuls (the key transposed), a bilinear form over a shared batch,
# an outer product (cleave.mul), a sum over one operand's private subscript,
# and numpy's implicit output (alphabetical single subscripts).
# EINSUM-LABEL: func.func @main
# EINSUM-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32> {{.*}}, %[[K:[^:]+]]: tensor<2x4x6x16xf32> {{.*}}, %[[A:[^:]+]]: tensor<5x3xf32> {{.*}}, %[[B:[^:]+]]: tensor<7xf32> {{.*}}, %[[E:[^:]+]]: tensor<2x3x4xf32>
# EINSUM: %[[KT:.+]] = cleave.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x6x16xf32>) -> tensor<2x4x16x6xf32>
# EINSUM: %[[S:.+]] = cleave.matmul %[[Q]], %[[KT]] : (tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>) -> tensor<2x4x8x6xf32>
# EINSUM: %[[C:.+]] = cleave.matmul %[[S]], %[[K]] : (tensor<2x4x8x6xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x8x16xf32>
# EINSUM: %[[AR:.+]] = cleave.reshape %[[A]] : tensor<5x3xf32> -> tensor<5x3x1xf32>
# EINSUM: %[[BR:.+]] = cleave.reshape %[[B]] : tensor<7xf32> -> tensor<1x1x7xf32>
# EINSUM: %[[OUTER:.+]] = cleave.mul %[[AR]], %[[BR]] : (tensor<5x3x1xf32>, tensor<1x1x7xf32>) -> tensor<5x3x7xf32>
# EINSUM: %[[OT:.+]] = cleave.transpose %[[OUTER]] {perm = array<i64: 2, 0, 1>} : (tensor<5x3x7xf32>) -> tensor<7x5x3xf32>
# EINSUM: %[[ES:.+]] = cleave.reduce_sum %[[E]] {axes = array<i64: 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
# EINSUM: %[[AT:.+]] = cleave.transpose %[[A]] {perm = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
# EINSUM: %[[EM:.+]] = cleave.matmul %[[ES]], %[[AT]] : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
# EINSUM: %[[AT2:.+]] = cleave.transpose %[[A]] {perm = array<i64: 1, 0>}
# EINSUM: %[[GRAM:.+]] = cleave.matmul %[[A]], %[[AT2]] : (tensor<5x3xf32>, tensor<3x5xf32>) -> tensor<5x5xf32>
# EINSUM: return %[[S]], %[[C]], %[[OT]], %[[EM]], %[[GRAM]]
g = GraphBuilder(opset=13)
q = g.input("q", [2, 4, 8, 16])
k = g.input("k", [2, 4, 6, 16])
a = g.input("a", [5, 3])
b = g.input("b", [7])
e = g.input("e", [2, 3, 4])
scores = g.node("Einsum", [q, k], equation="bhqd,bhkd->bhqk")
context = g.node("Einsum", [scores, k], equation="bhqk, bhkd -> bhqd")
outer = g.node("Einsum", [a, b], equation="ij,k->kij")
summed = g.node("Einsum", [e, a], equation="bjl,ij->bi")
implicit = g.node("Einsum", [a, a], equation="ij,kj")
for name in (scores, context, outer, summed, implicit):
    g.output(name)
g.declare_reference_shapes()
g.save(f"{out}/einsum.onnx")

# Three operands contract left to right; the ellipsis stands for the shared
# batch dimensions.
# EINSUM3-LABEL: func.func @main
# EINSUM3: %[[AB:.+]] = cleave.matmul %{{.+}}, %{{.+}} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
# EINSUM3: %[[ABC:.+]] = cleave.matmul %[[AB]], %{{.+}} : (tensor<2x3x5xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
# EINSUM3: return %[[ABC]]
g = GraphBuilder(opset=13)
p1 = g.input("p1", [2, 3, 4])
p2 = g.input("p2", [2, 4, 5])
p3 = g.input("p3", [2, 5, 6])
g.output(g.node("Einsum", [p1, p2, p3], equation="...ij,...jk,...kl->...il"))
g.declare_reference_shapes()
g.save(f"{out}/einsum3.onnx")


def einsum_error(name, equation, shapes, node_name=None):
    g = GraphBuilder(opset=13)
    inputs = [g.input(f"x{i}", s) for i, s in enumerate(shapes)]
    g.output(g.node("Einsum", inputs, name=node_name, equation=equation))
    g.save(f"{out}/{name}.onnx")


einsum_error("einsum-diagonal", "ii->", [[3, 3]], node_name="trace")
einsum_error("einsum-terms", "ij,jk,kl->il", [[2, 3], [3, 4]])
einsum_error("einsum-rank", "ijk,jk->i", [[2, 3], [2, 3]])
einsum_error("einsum-char", "i1,i->", [[2], [2]])
einsum_error("einsum-output", "ij,jk->iz", [[2, 3], [3, 4]])
einsum_error("einsum-sizes", "ij,jk->ik", [[2, 3], [4, 5]])

g = GraphBuilder(opset=13)
x = g.input("x", [3, 4])
g.output(g.node("TopK", [x, g.const([5], dtype=np.int64)], outputs=["v", "i"])[0])
g.save(f"{out}/topk-k.onnx")

g = GraphBuilder(opset=13)
x = g.input("x", [3, 4])
kin = g.input("k", [1], np.int64)
g.output(g.node("TopK", [x, kin], outputs=["v", "i"])[0])
g.save(f"{out}/topk-runtime-k.onnx")

g = GraphBuilder(opset=14)
x = g.input("x", [3, 4])
g.output(g.node("CumSum", [x, g.const([0, 1], dtype=np.int64)]))
g.save(f"{out}/cumsum-axis.onnx")
