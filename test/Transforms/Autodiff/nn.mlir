// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss | FileCheck %s

// The rules of contractions, reductions, softmax and layer normalisation.
// Each loss is sum(f(...) * dy), so the cotangent reaching f is %dy.

// A linear layer's weight: the batch flattened into rows, one matmul.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x5x4xf32> {cleave.name = "x"}, %[[DY:[a-z0-9]+]]: tensor<2x5x3xf32> {cleave.name = "dy"})
// CHECK: %[[ROWS:.*]] = cleave.reshape %[[X]] : tensor<2x5x4xf32> -> tensor<10x4xf32>
// CHECK-NEXT: %[[GROWS:.*]] = cleave.reshape %[[DY]] : tensor<2x5x3xf32> -> tensor<10x3xf32>
// CHECK-NEXT: %[[XT:.*]] = cleave.transpose %[[ROWS]] {perm = array<i64: 1, 0>} : (tensor<10x4xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[DW:.*]] = cleave.matmul %[[XT]], %[[GROWS]] : (tensor<4x10xf32>, tensor<10x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]]
func.func @main(%x: tensor<2x5x4xf32> {cleave.name = "x"}, %dy: tensor<2x5x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 48 : i64} : tensor<4x3xf32>
  %y = cleave.matmul %x, %w : (tensor<2x5x4xf32>, tensor<4x3xf32>) -> tensor<2x5x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x5x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Batch broadcasting both ways: each operand's product is summed over the
// batch dimensions it was broadcast along.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<2x3x5x6xf32> {cleave.name = "dy"}
// CHECK: %[[A:.*]] = cleave.weight "a"
// CHECK: %[[B:.*]] = cleave.weight "b"
// CHECK: %[[BT:.*]] = cleave.transpose %[[B]] {perm = array<i64: 0, 2, 1>} : (tensor<3x4x6xf32>) -> tensor<3x6x4xf32>
// CHECK-NEXT: %[[GA:.*]] = cleave.matmul %[[DY]], %[[BT]] : (tensor<2x3x5x6xf32>, tensor<3x6x4xf32>) -> tensor<2x3x5x4xf32>
// CHECK-NEXT: %[[DA:.*]] = cleave.reduce_sum %[[GA]] {axes = array<i64: 1>} : (tensor<2x3x5x4xf32>) -> tensor<2x1x5x4xf32>
// CHECK-NEXT: %[[AT:.*]] = cleave.transpose %[[A]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: %[[GB:.*]] = cleave.matmul %[[AT]], %[[DY]] : (tensor<2x1x4x5xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32>
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum %[[GB]] {axes = array<i64: 0>, keepdims = false} : (tensor<2x3x4x6xf32>) -> tensor<3x4x6xf32>
// CHECK-NEXT: return %{{.*}}, %[[DA]], %[[DB]]
func.func @main(%x: tensor<2x1x5x4xf32> {cleave.name = "x"}, %dy: tensor<2x3x5x6xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 160 : i64} : tensor<2x1x5x4xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 160 : i64, length = 288 : i64} : tensor<3x4x6xf32>
  %y = cleave.matmul %a, %b : (tensor<2x1x5x4xf32>, tensor<3x4x6xf32>) -> tensor<2x3x5x6xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x5x6xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x5x6xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x5x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A 1-D lhs is a row: the cotangent gets a unit dimension and loses it.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<3xf32> {cleave.name = "dy"})
// CHECK: %[[A:.*]] = cleave.weight "a"
// CHECK: %[[B:.*]] = cleave.weight "b"
// CHECK: %[[G:.*]] = cleave.reshape %[[DY]] : tensor<3xf32> -> tensor<1x3xf32>
// CHECK-NEXT: %[[ROW:.*]] = cleave.reshape %[[A]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[BT:.*]] = cleave.transpose %[[B]]
// CHECK-NEXT: %[[GA:.*]] = cleave.matmul %[[G]], %[[BT]] : (tensor<1x3xf32>, tensor<3x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[DA:.*]] = cleave.reshape %[[GA]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[COL:.*]] = cleave.transpose %[[ROW]]
// CHECK-NEXT: %[[DB:.*]] = cleave.matmul %[[COL]], %[[G]] : (tensor<4x1xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DA]], %[[DB]]
func.func @main(%dy: tensor<3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 16 : i64, length = 48 : i64} : tensor<4x3xf32>
  %y = cleave.matmul %a, %b : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32>
  %p = cleave.mul %y, %dy : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// gemm: the products are gemms whose flags undo the forward transposes,
// with the forward alpha; the bias gets beta times the cotangent, summed
// over the rows it was broadcast along.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x5xf32> {cleave.name = "x"}, %[[DY:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "dy"})
// CHECK: %[[DW:.*]] = cleave.gemm %[[DY]], %[[X]] {alpha = 2.000000e+00 : f32, beta = 0.000000e+00 : f32, trans_a = true} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: %[[BETA:.*]] = cleave.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[S:.*]] = cleave.mul %[[DY]], %[[BETA]]
// CHECK-NEXT: %[[DC:.*]] = cleave.reduce_sum %[[S]] {axes = array<i64: 0>, keepdims = false} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]], %[[DC]]
func.func @main(%x: tensor<4x5xf32> {cleave.name = "x"}, %dy: tensor<4x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 60 : i64} : tensor<3x5xf32>
  %c = cleave.weight "c" {file = "/m.bin", offset = 60 : i64, length = 12 : i64} : tensor<3xf32>
  %y = cleave.gemm %x, %w, %c {alpha = 2.0 : f32, beta = 3.0 : f32, trans_b = true} : (tensor<4x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %p = cleave.mul %y, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[W:[a-z0-9]+]]: tensor<3x5xf32> {cleave.name = "w"}, %[[DY:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "dy"})
// CHECK: %[[DA:.*]] = cleave.gemm %[[W]], %[[DY]] {beta = 0.000000e+00 : f32, trans_a = true, trans_b = true} : (tensor<3x5xf32>, tensor<4x3xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DA]]
func.func @main(%w: tensor<3x5xf32> {cleave.name = "w"}, %dy: tensor<4x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 80 : i64} : tensor<5x4xf32>
  %y = cleave.gemm %a, %w {trans_a = true, trans_b = true} : (tensor<5x4xf32>, tensor<3x5xf32>) -> tensor<4x3xf32>
  %p = cleave.mul %y, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// reduce_mean: the cotangent, its reduced dimensions restored, divided by
// the count and broadcast back.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<4xf32> {cleave.name = "dy"})
// CHECK: %[[K:.*]] = cleave.reshape %[[DY]] : tensor<4xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[N:.*]] = cleave.constant dense<0.166666672> : tensor<f32>
// CHECK-NEXT: %[[S:.*]] = cleave.mul %[[K]], %[[N]]
// CHECK-NEXT: %[[D:.*]] = cleave.expand %[[S]] : tensor<1x4x1xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 96 : i64} : tensor<2x4x3xf32>
  %m = cleave.reduce_mean %w {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x4x3xf32>) -> tensor<4xf32>
  %p = cleave.mul %m, %dy : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// reduce_max: the cotangent goes to the elements equal to the maximum,
// shared among ties.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x1x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[M:.*]] = cleave.reduce_max %[[W]]
// CHECK: %[[HIT:.*]] = cleave.equal %[[W]], %[[M]] : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xi1>
// CHECK-NEXT: %[[HITF:.*]] = cleave.cast %[[HIT]] : tensor<2x4x3xi1> to tensor<2x4x3xf32>
// CHECK-NEXT: %[[TIES:.*]] = cleave.reduce_sum %[[HITF]] {axes = array<i64: 1>}
// CHECK-NEXT: %[[SHARE:.*]] = cleave.div %[[DY]], %[[TIES]]
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[HITF]], %[[SHARE]] : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x1x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 96 : i64} : tensor<2x4x3xf32>
  %m = cleave.reduce_max %w {axes = array<i64: 1>, keepdims = true} : (tensor<2x4x3xf32>) -> tensor<2x1x3xf32>
  %p = cleave.mul %m, %dy : (tensor<2x1x3xf32>, tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x1x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// log_softmax: dy - exp(y) sum(dy); softmax: y (dy - sum(dy y)), each
// along its own axis.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x4xf32> {cleave.name = "dy"})
// CHECK: %[[S:.*]] = cleave.softmax
// CHECK-NEXT: %[[T:.*]] = cleave.log_softmax %[[S]]
// CHECK: %[[SUM:.*]] = cleave.reduce_sum %[[DY]] {axes = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[P:.*]] = cleave.exp %[[T]]
// CHECK-NEXT: %[[PS:.*]] = cleave.mul %[[P]], %[[SUM]]
// CHECK-NEXT: %[[DS:.*]] = cleave.sub %[[DY]], %[[PS]]
// CHECK-NEXT: %[[GY:.*]] = cleave.mul %[[DS]], %[[S]]
// CHECK-NEXT: %[[INNER:.*]] = cleave.reduce_sum %[[GY]] {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %[[C:.*]] = cleave.sub %[[DS]], %[[INNER]]
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[S]], %[[C]]
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 32 : i64} : tensor<2x4xf32>
  %s = cleave.softmax %w {axis = 1 : i64} : tensor<2x4xf32>
  %t = cleave.log_softmax %s {axis = 0 : i64} : tensor<2x4xf32>
  %p = cleave.mul %t, %dy : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// layer_norm recomputes xhat = (x - mean) / sqrt(var + eps); scale and bias
// sum over the leading dimensions; dx = r (dxhat - mean(dxhat) - xhat
// mean(dxhat xhat)).

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3x4xf32> {cleave.name = "dy"})
// CHECK-SAME: -> (tensor<f32> {cleave.name = "loss"}, tensor<2x3x4xf32> {cleave.gradient_of = "x", cleave.name = "grad:x"}, tensor<4xf32> {cleave.gradient_of = "g", cleave.name = "grad:g"}, tensor<4xf32> {cleave.gradient_of = "b", cleave.name = "grad:b"})
// CHECK: %[[X:.*]] = cleave.weight "x"
// CHECK: %[[G:.*]] = cleave.weight "g"
// CHECK: %[[MEAN:.*]] = cleave.reduce_mean %[[X]] {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[C:.*]] = cleave.sub %[[X]], %[[MEAN]]
// CHECK-NEXT: %[[C2:.*]] = cleave.mul %[[C]], %[[C]]
// CHECK-NEXT: %[[VAR:.*]] = cleave.reduce_mean %[[C2]] {axes = array<i64: 2>}
// CHECK-NEXT: %[[EPS:.*]] = cleave.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-NEXT: %[[VE:.*]] = cleave.add %[[VAR]], %[[EPS]]
// CHECK-NEXT: %[[SD:.*]] = cleave.sqrt %[[VE]]
// CHECK-NEXT: %[[R:.*]] = cleave.reciprocal %[[SD]]
// CHECK-NEXT: %[[XHAT:.*]] = cleave.mul %[[C]], %[[R]]
// CHECK-NEXT: %[[GX:.*]] = cleave.mul %[[DY]], %[[XHAT]]
// CHECK-NEXT: %[[DG:.*]] = cleave.reduce_sum %[[GX]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum %[[DY]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[DXHAT:.*]] = cleave.mul %[[DY]], %[[G]]
// CHECK-NEXT: %[[M1:.*]] = cleave.reduce_mean %[[DXHAT]] {axes = array<i64: 2>}
// CHECK-NEXT: %[[P:.*]] = cleave.mul %[[DXHAT]], %[[XHAT]]
// CHECK-NEXT: %[[M2:.*]] = cleave.reduce_mean %[[P]] {axes = array<i64: 2>}
// CHECK-NEXT: %[[PROJ:.*]] = cleave.mul %[[XHAT]], %[[M2]]
// CHECK-NEXT: %[[S1:.*]] = cleave.sub %[[DXHAT]], %[[M1]]
// CHECK-NEXT: %[[S2:.*]] = cleave.sub %[[S1]], %[[PROJ]]
// CHECK-NEXT: %[[DX:.*]] = cleave.mul %[[R]], %[[S2]]
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DG]], %[[DB]]
func.func @main(%dy: tensor<2x3x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 32 : i64, length = 96 : i64} : tensor<2x3x4xf32>
  %g = cleave.weight "g" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 16 : i64, length = 16 : i64} : tensor<4xf32>
  %y = cleave.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
