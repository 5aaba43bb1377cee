// RUN: cleave-opt %s -split-input-file --cleave-batch-norm-training -verify-diagnostics

// The update kernel computes float32: a running statistic of another type
// cannot be kept.

func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = cleave.weight "bn.weight" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  %b = cleave.weight "bn.bias" {file = "/m.bin", offset = 16 : i64, length = 16 : i64} : tensor<4xf32>
  %m = cleave.weight "bn.running_mean" {file = "/m.bin", offset = 32 : i64, length = 32 : i64} : tensor<4xf64>
  %v = cleave.weight "bn.running_var" {file = "/m.bin", offset = 64 : i64, length = 16 : i64} : tensor<4xf32>
  // expected-error @+1 {{'cleave.batch_norm' op running statistic 'bn.running_mean' is a tensor of 'f64'; a training step updates float32 running statistics}}
  %y = cleave.batch_norm %x, %s, %b, %m, %v : (tensor<2x4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

func.func @main(%x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  %c = cleave.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{'cleave.batch_norm' op normalises by batch statistics, which needs a static shape, but its input is 'tensor<?x4x8xf32>'; bind the model's input shapes before training}}
  %y = cleave.batch_norm %x, %c, %c, %c, %c : (tensor<?x4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x8xf32>
  return %y : tensor<?x4x8xf32>
}
