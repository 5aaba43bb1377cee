// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss -verify-diagnostics | FileCheck %s

// The rules of collectives. Along dp the step's loss is the sum of the
// replicas' losses: an all-reduce's sum reaches every replica's loss, so the
// cotangent of each replica's operand is the sum of every replica's
// cotangent, the same all-reduce (synchronised batch normalisation's sums).

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<4xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[S:.*]] = cleave.all_reduce %[[W]] {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
// CHECK: %[[D:.*]] = cleave.all_reduce %[[DY]] {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  %s = cleave.all_reduce %w {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
  %p = cleave.mul %s, %dy : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Along tp the loss is one value every device holds; its conjugates have no
// rule yet.
func.func @main(%dy: tensor<4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  // expected-error @+1 {{'cleave.all_reduce' op has no gradient rule for a 'sum' all-reduce along 'tp' (only a sum along 'dp')}}
  %s = cleave.all_reduce %w {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
  %p = cleave.mul %s, %dy : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
