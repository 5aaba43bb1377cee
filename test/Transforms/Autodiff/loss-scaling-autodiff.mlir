// RUN: cleave-opt %s --cleave-autodiff="loss=loss loss-scale=1024" | FileCheck %s
// RUN: cleave-opt %s --cleave-autodiff="loss=loss" | FileCheck %s --check-prefix=UNSCALED
// RUN: not cleave-opt %s --cleave-autodiff="loss=loss loss-scale=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// Dynamic loss scaling: the backward is seeded with the loss scale, the
// persistent state, or the initial scale while the state is 0 (before a
// step has written it); without it, with 1.

// CHECK-LABEL: func.func @main
// CHECK: %[[STATE:.*]] = cleave.state "loss_scale" : tensor<f32>
// CHECK: %[[ZERO:.*]] = cleave.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[UNSET:.*]] = cleave.equal %[[STATE]], %[[ZERO]] : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK: %[[INITIAL:.*]] = cleave.constant dense<1.024000e+03> : tensor<f32>
// CHECK: %[[SCALE:.*]] = cleave.where %[[UNSET]], %[[INITIAL]], %[[STATE]]
// CHECK: %[[SEED:.*]] = cleave.expand %[[SCALE]] : tensor<f32> -> tensor<4x2xf32>
// CHECK: %[[XT:.*]] = cleave.transpose %arg0
// CHECK: %[[DW:.*]] = cleave.matmul %[[XT]], %[[SEED]]
// CHECK: return %{{.*}}, %[[DW]]

// UNSCALED-LABEL: func.func @main
// UNSCALED-NOT: cleave.state
// UNSCALED: %[[SEED:.*]] = cleave.constant dense<1.000000e+00> : tensor<4x2xf32>
// UNSCALED: cleave.matmul %{{.*}}, %[[SEED]]

// NEGATIVE: error: cleave-autodiff: loss-scale=-1.000000e+00: the loss scale must be positive (0: none)
func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<3x2xf32>
  %y = cleave.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
