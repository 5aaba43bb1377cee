// RUN: cleave-opt %s -split-input-file --cleave-optimizer-update -verify-diagnostics
// RUN: not cleave-opt %s -split-input-file --cleave-optimizer-update=optimizer=lamb 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: error: optimizer=lamb: the optimizer is sgd, adam or adamw

// expected-error @+1 {{cleave-optimizer-update: @main returns no gradient (cleave.gradient_of) to update by; run cleave-autodiff first}}
func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {cleave.name = "loss"}) {
  %l = cleave.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{result 1 is the gradient of 'w', which @main does not read}}
func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {cleave.name = "loss"}, tensor<4xf32> {cleave.gradient_of = "w"}) {
  %l = cleave.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf16>) -> (tensor<f16> {cleave.name = "loss"}, tensor<4xf16> {cleave.gradient_of = "w"}) {
  // expected-error @+1 {{optimizer=adamw: parameter 'w' is a tensor of 'f16'; the updates compute float32 parameters}}
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 8 : i64} : tensor<4xf16>
  %y = cleave.mul %x, %w : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %l = cleave.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<4xf16>) -> tensor<f16>
  return %l, %x : tensor<f16>, tensor<4xf16>
}
