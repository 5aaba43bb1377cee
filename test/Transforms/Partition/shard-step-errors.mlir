// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-shard-step

// A function that accumulates no loss or gradient is not a training step.
module attributes {cleave.mesh = {dp = 1 : i64, pp = 1 : i64, tp = 2 : i64}, cleave.microbatches = 1 : i64} {
  // expected-error @below {{is not a training step: it accumulates no loss or gradient (run cleave-optimizer-update first)}}
  func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %y = cleave.relu %x {cleave.tp_loop = 1 : i64} : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

// The plan's loop of a forward op must be one the op can split.
module attributes {cleave.mesh = {dp = 1 : i64, pp = 1 : i64, tp = 2 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x8xf32>) -> tensor<f32> {
    // expected-error @below {{'cleave.relu' op has `cleave.tp_loop = 5`, which is not a loop it can split}}
    %y = cleave.relu %x {cleave.tp_loop = 5 : i64} : tensor<4x8xf32>
    %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
    %s = cleave.state "loss.sum:loss" : tensor<f32>
    %sum = cleave.accumulate %l, %s {loss} : tensor<f32>
    return %sum : tensor<f32>
  }
}

// -----

// The entry function must exist.
// expected-error @below {{the plan's entry function @main is missing}}
module attributes {cleave.mesh = {dp = 1 : i64, pp = 1 : i64, tp = 2 : i64}, cleave.microbatches = 1 : i64} {
}
