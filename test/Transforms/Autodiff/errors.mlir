// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss -verify-diagnostics

// expected-error @+1 {{loss=loss: no result of @main is named 'loss'; its results are 'out', (unnamed)}}
func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {cleave.name = "out"}, tensor<4xf32>) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  %y = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = cleave.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l, %y : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{loss=loss: the loss must be a float scalar (a tensor of one element), but it is 'tensor<4xf32>'}}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  %y = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{loss=loss: the loss must be a float scalar (a tensor of one element), but it is 'tensor<i64>'}}
func.func @main(%x: tensor<4xi64>) -> (tensor<i64> {cleave.name = "loss"}) {
  %l = cleave.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<4xi64>) -> tensor<i64>
  return %l : tensor<i64>
}

// -----

// expected-error @+1 {{no trainable parameter: @main reads no float weight}}
func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {cleave.name = "loss"}) {
  %t = cleave.weight "table" {file = "/m.bin", offset = 0 : i64, length = 32 : i64} : tensor<4xi64>
  %f = cleave.cast %t : tensor<4xi64> to tensor<4xf32>
  %y = cleave.mul %x, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = cleave.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Every op without a rule on the path from the parameters to the loss is
// named in one error (with its ONNX node when it has one: options.mlir),
// with a note at each.

// expected-error @+1 {{cannot differentiate 'loss': 2 ops on the path from the parameters to the loss have no gradient rule: cleave.conv_transpose, cleave.batch_norm}}
func.func @main(%x: tensor<1x2x8x8xf32>) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "deconv.weight" {file = "/m.bin", offset = 0 : i64, length = 288 : i64} : tensor<2x4x3x3xf32>
  %s = cleave.weight "bn.weight" {file = "/m.bin", offset = 288 : i64, length = 16 : i64} : tensor<4xf32>
  %b = cleave.weight "bn.bias" {file = "/m.bin", offset = 304 : i64, length = 16 : i64} : tensor<4xf32>
  %m = cleave.weight "bn.running_mean" {file = "/m.bin", offset = 320 : i64, length = 16 : i64} : tensor<4xf32>
  %v = cleave.weight "bn.running_var" {file = "/m.bin", offset = 336 : i64, length = 16 : i64} : tensor<4xf32>
  // expected-note @+1 {{no gradient rule for cleave.conv_transpose}}
  %c = cleave.conv_transpose %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>} : (tensor<1x2x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = cleave.relu %c : tensor<1x4x8x8xf32>
  // expected-note @+1 {{no gradient rule for cleave.batch_norm}}
  %n = cleave.batch_norm %r, %s, %b, %m, %v : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %l = cleave.reduce_mean %n {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x4x8x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @main(%x: tensor<?x4xf32>) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  // expected-error @+1 {{'cleave.mul' op is on the path from the parameters to the loss but has a value of dynamic shape 'tensor<?x4xf32>'; bind the model's input shapes before differentiating}}
  %y = cleave.mul %x, %w : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  // expected-error @+1 {{'cleave.pad' op has no gradient rule in mode 'reflect' (only 'constant')}}
  %p = cleave.pad %w {pads = array<i64: 1, 1>, mode = "reflect"} : (tensor<4xf32>) -> tensor<6xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{cleave-autodiff: no function @main with a body to differentiate}}
module {
  func.func private @main(tensor<4xf32>) -> tensor<f32>
}

// -----

// A model of many outputs: the first eight are listed.

// expected-error @+1 {{loss=loss: no result of @main is named 'loss'; its results are 'o0', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7' and 2 more}}
func.func @main(%x: tensor<f32>) -> (tensor<f32> {cleave.name = "o0"}, tensor<f32> {cleave.name = "o1"}, tensor<f32> {cleave.name = "o2"}, tensor<f32> {cleave.name = "o3"}, tensor<f32> {cleave.name = "o4"}, tensor<f32> {cleave.name = "o5"}, tensor<f32> {cleave.name = "o6"}, tensor<f32> {cleave.name = "o7"}, tensor<f32> {cleave.name = "o8"}, tensor<f32> {cleave.name = "o9"}) {
  return %x, %x, %x, %x, %x, %x, %x, %x, %x, %x : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
