// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss | FileCheck %s

// The rules of data movement: views, permutations, joins, slices and
// gathers. Each loss is sum(f(...) * dy), so the cotangent reaching f is %dy.

// Views take the cotangent back to the operand's shape; a transpose takes
// it through the inverse permutation.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<3x2x4xf32> {cleave.name = "dy"})
// CHECK: %[[D:.*]] = cleave.transpose %[[DY]] {perm = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<3x2x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 96 : i64} : tensor<2x3x4xf32>
  %f = cleave.flatten %w {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %u = cleave.unsqueeze %f {axes = array<i64: 0>} : (tensor<2x12xf32>) -> tensor<1x2x12xf32>
  %s = cleave.squeeze %u {axes = array<i64: 0>} : (tensor<1x2x12xf32>) -> tensor<2x12xf32>
  %r = cleave.reshape %s : tensor<2x12xf32> -> tensor<2x3x4xf32>
  %y = cleave.transpose %r {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %p = cleave.mul %y, %dy : (tensor<3x2x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<3x2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// concat hands each input its window; expand and tile sum the copies.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<4x6xf32> {cleave.name = "dy"})
// CHECK: %[[L:.*]] = cleave.slice %[[DY]] {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>}
// CHECK-NEXT: %[[R:.*]] = cleave.slice %[[DY]] {ends = array<i64: 4, 6>, starts = array<i64: 0, 3>, steps = array<i64: 1, 1>}
// CHECK-NEXT: %[[COPIES:.*]] = cleave.reshape %[[R]] : tensor<4x3xf32> -> tensor<2x2x1x3xf32>
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum %[[COPIES]] {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x2x1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[DA:.*]] = cleave.reduce_sum %[[L]] {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DA]], %[[DB]]
func.func @main(%dy: tensor<4x6xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 12 : i64} : tensor<1x3xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 12 : i64, length = 24 : i64} : tensor<2x3xf32>
  %e = cleave.expand %a : tensor<1x3xf32> -> tensor<4x3xf32>
  %t = cleave.tile %b {repeats = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  %y = cleave.concat %e, %t {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  %p = cleave.mul %y, %dy : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// split joins its pieces' cotangents; a piece the loss does not read
// contributes zeros.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[ZK:.*]] = cleave.constant dense<0.000000e+00> : tensor<2x1xf32>
// CHECK-NEXT: %[[ZV:.*]] = cleave.constant dense<0.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT: %[[D:.*]] = cleave.concat %[[DY]], %[[ZK]], %[[ZV]] {axis = 1 : i64}
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 48 : i64} : tensor<2x6xf32>
  %q, %k, %v = cleave.split %w {axis = 1 : i64, sizes = array<i64: 3, 1, 2>} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x2xf32>)
  %p = cleave.mul %q, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A strided slice: each element is followed by step - 1 zeros (a unit
// dimension padded and merged), then the whole is padded into place.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[U:.*]] = cleave.reshape %[[DY]] : tensor<2x3xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[P:.*]] = cleave.pad %[[U]] {pads = array<i64: 0, 0, 0, 0, 0, 1>} : (tensor<2x3x1xf32>) -> tensor<2x3x2xf32>
// CHECK-NEXT: %[[S:.*]] = cleave.reshape %[[P]] : tensor<2x3x2xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[D:.*]] = cleave.pad %[[S]] {pads = array<i64: 1, 0, 1, 2>} : (tensor<2x6xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 128 : i64} : tensor<4x8xf32>
  %y = cleave.slice %w {starts = array<i64: 1, 0>, ends = array<i64: 3, 6>, steps = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Negative steps: the cotangent is reversed into increasing input order
// first. Spreading runs past the input's end here, so a slice trims it.
// The constant pad before hands back its window.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[G:.*]] = cleave.slice %[[DY]] {ends = array<i64: 2, 3>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[R0:.*]] = cleave.slice %[[G]] {ends = array<i64: -1, 2>, starts = array<i64: 1, 0>, steps = array<i64: -1, 1>}
// CHECK-NEXT: cleave.reshape %[[R0]] : tensor<2x2xf32> -> tensor<2x1x2xf32>
// CHECK-NEXT: cleave.pad %{{.*}} {pads = array<i64: 0, 0, 0, 0, 1, 0>}
// CHECK-NEXT: %[[S0:.*]] = cleave.reshape %{{.*}} : tensor<2x2x2xf32> -> tensor<4x2xf32>
// CHECK-NEXT: %[[R1:.*]] = cleave.slice %[[S0]] {ends = array<i64: 4, -1>, starts = array<i64: 0, 1>, steps = array<i64: 1, -1>}
// CHECK-NEXT: cleave.reshape %[[R1]] : tensor<4x2xf32> -> tensor<4x2x1xf32>
// CHECK-NEXT: cleave.pad %{{.*}} {pads = array<i64: 0, 0, 0, 0, 0, 2>}
// CHECK-NEXT: %[[S1:.*]] = cleave.reshape %{{.*}} : tensor<4x2x3xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[P:.*]] = cleave.pad %[[S1]] {pads = array<i64: 1, 3, 0, 0>} : (tensor<4x6xf32>) -> tensor<5x9xf32>
// CHECK-NEXT: %[[D:.*]] = cleave.slice %[[P]] {ends = array<i64: 4, 7>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<5x9xf32>) -> tensor<4x7xf32>
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 112 : i64} : tensor<4x7xf32>
  %y = cleave.slice %w {starts = array<i64: 3, 6>, ends = array<i64: -1, 0>, steps = array<i64: -2, -3>} : (tensor<4x7xf32>) -> tensor<2x2xf32>
  %z = cleave.pad %y {pads = array<i64: 0, 1, 0, 0>, mode = "constant", value = 0.0 : f64} : (tensor<2x2xf32>) -> tensor<2x3xf32>
  %p = cleave.mul %z, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An embedding lookup: the scatter-add of the cotangent into the table, as
// the product of the indices' one-hot matrix (transposed) with the rows of
// the cotangent. Negative indices count from the end.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IDS:[a-z0-9]+]]: tensor<2x3xi64> {cleave.name = "ids"}, %[[DY:[a-z0-9]+]]: tensor<2x3x4xf32> {cleave.name = "dy"})
// CHECK: %[[FLAT:.*]] = cleave.reshape %[[IDS]] : tensor<2x3xi64> -> tensor<6xi64>
// CHECK-NEXT: %[[Z:.*]] = cleave.constant dense<0> : tensor<i64>
// CHECK-NEXT: %[[ROWS:.*]] = cleave.constant dense<10> : tensor<i64>
// CHECK-NEXT: %[[NEG:.*]] = cleave.less %[[FLAT]], %[[Z]]
// CHECK-NEXT: %[[WRAP:.*]] = cleave.add %[[FLAT]], %[[ROWS]]
// CHECK-NEXT: %[[IDX:.*]] = cleave.where %[[NEG]], %[[WRAP]], %[[FLAT]]
// CHECK-NEXT: %[[IOTA:.*]] = cleave.constant dense<{{\[\[}}0], [1], [2], [3], [4], [5], [6], [7], [8], [9]]> : tensor<10x1xi64>
// CHECK-NEXT: %[[ROW:.*]] = cleave.reshape %[[IDX]] : tensor<6xi64> -> tensor<1x6xi64>
// CHECK-NEXT: %[[HITS:.*]] = cleave.equal %[[IOTA]], %[[ROW]] : (tensor<10x1xi64>, tensor<1x6xi64>) -> tensor<10x6xi1>
// CHECK-NEXT: %[[ONEHOT:.*]] = cleave.cast %[[HITS]] : tensor<10x6xi1> to tensor<10x6xf32>
// CHECK-NEXT: %[[G:.*]] = cleave.reshape %[[DY]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[D:.*]] = cleave.matmul %[[ONEHOT]], %[[G]] : (tensor<10x6xf32>, tensor<6x4xf32>) -> tensor<10x4xf32>
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%ids: tensor<2x3xi64> {cleave.name = "ids"}, %dy: tensor<2x3x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "emb" {file = "/m.bin", offset = 0 : i64, length = 160 : i64} : tensor<10x4xf32>
  %y = cleave.gather %w, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A gather along an inner axis: the cotangent's lookups are contracted
// with the one-hot matrix between the outer and inner dimensions.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<2x5x3xf32> {cleave.name = "dy"}
// CHECK: %[[ONEHOT:.*]] = cleave.cast %{{.*}} : tensor<5x8xi1> to tensor<5x8xf32>
// CHECK-NEXT: %[[G:.*]] = cleave.transpose %[[DY]] {perm = array<i64: 0, 2, 1>} : (tensor<2x5x3xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: %[[P:.*]] = cleave.matmul %[[G]], %[[ONEHOT]] : (tensor<2x3x5xf32>, tensor<5x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[D:.*]] = cleave.transpose %[[P]] {perm = array<i64: 0, 2, 1>} : (tensor<2x3x8xf32>) -> tensor<2x8x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[D]]
func.func @main(%ids: tensor<5xi32> {cleave.name = "ids"}, %dy: tensor<2x5x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 192 : i64} : tensor<2x8x3xf32>
  %y = cleave.gather %w, %ids {axis = 1 : i64} : (tensor<2x8x3xf32>, tensor<5xi32>) -> tensor<2x5x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x5x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
