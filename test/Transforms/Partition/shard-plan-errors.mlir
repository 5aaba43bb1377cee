// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-shard-plan

// expected-error @+1 {{the module has no plan: expected `cleave.mesh = {pp = P : i64, tp = T : i64, dp = D : i64}`}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{`cleave.mesh` needs a positive integer `tp`}}
module attributes {cleave.mesh = {pp = 1 : i64, tp = 0 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{the plan needs a positive `cleave.microbatches = M : i64`}}
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{the plan's entry function @main is missing}}
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @model(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{the symbol @tp is taken; it names the tensor-parallel grid}}
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func private @tp()
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
    // expected-error @+1 {{cannot split loop 1 over 2 tensor-parallel devices: the loop is not splittable or a dimension it splits does not divide by 2}}
    %y = cleave.softmax %x {axis = 1 : i64, cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : tensor<4x16xf32>
    return %y : tensor<4x16xf32>
  }
}

// -----

module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<3x16xf32>) -> tensor<3x16xf32> {
    // expected-error @+1 {{cannot split loop 0 over 2 tensor-parallel devices}}
    %y = cleave.relu %x {cleave.stage = 0 : i64, cleave.tp_loop = 0 : i64} : tensor<3x16xf32>
    return %y : tensor<3x16xf32>
  }
}

// -----

module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32> {
    // expected-error @+1 {{cannot split loop 1 over 2 tensor-parallel devices}}
    %y = cleave.global_average_pool %x {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>
    return %y : tensor<1x64x1x1xf32>
  }
}

// -----

// Data-parallel replicas need every op that reads the batch to keep its
// samples apart; a sum over the batch mixes them.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 2 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x16xf32>) -> tensor<1x16xf32> {
    // expected-error @+1 {{mixes the samples of the batch, so the batch cannot be cut into the 2 blocks of the data-parallel replicas and microbatches}}
    %y = cleave.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x16xf32>) -> tensor<1x16xf32>
    return %y : tensor<1x16xf32>
  }
}

// -----

// Three samples do not cut into 2 replicas x 2 microbatches.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 2 : i64}, cleave.microbatches = 2 : i64} {
  func.func @main(%x: tensor<6x16xf32>) -> tensor<6x16xf32> {
    // expected-error @+1 {{holds 6 samples of the batch, which do not divide into 4 blocks (dp x microbatches)}}
    %y = cleave.relu %x : tensor<6x16xf32>
    return %y : tensor<6x16xf32>
  }
}

// -----

// An output computed without the batch cannot be cut into its blocks.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 2 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 64 : i64} : tensor<16xf32>
    %y = cleave.relu %x : tensor<4x16xf32>
    // expected-error @+1 {{returns output #1, which does not carry the batch}}
    return %y, %w : tensor<4x16xf32>, tensor<16xf32>
  }
}

// -----

// A reshape that scatters the samples: no dimension of `3x8` holds whole
// samples of the batch of 4.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 2 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x6xf32>) -> tensor<3x8xf32> {
    // expected-error @+1 {{mixes the samples of the batch, so the batch cannot be cut into the 2 blocks}}
    %y = cleave.reshape %x : tensor<4x6xf32> -> tensor<3x8xf32>
    return %y : tensor<3x8xf32>
  }
}

// -----

// `[S, B, H] -> [S * B, H]` interleaves the samples below the sequence: a
// weight with a row per (position, sample) cannot be cut into blocks of
// samples along with it.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 2 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x8x16xf32>) -> tensor<8x4x16xf32> {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 2048 : i64} : tensor<32x16xf32>
    %t = cleave.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<4x8x16xf32>) -> tensor<8x4x16xf32>
    %rows = cleave.reshape %t : tensor<8x4x16xf32> -> tensor<32x16xf32>
    // expected-error @+1 {{mixes the samples of the batch}}
    %y = cleave.add %rows, %w : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x16xf32>
    %z = cleave.reshape %y : tensor<32x16xf32> -> tensor<8x4x16xf32>
    return %z : tensor<8x4x16xf32>
  }
}

// -----

// An output whose samples interleave with the sequence cannot be written
// block by block.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 2 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
    %t = cleave.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<4x8x16xf32>) -> tensor<8x4x16xf32>
    %rows = cleave.reshape %t : tensor<8x4x16xf32> -> tensor<32x16xf32>
    // expected-error @+1 {{returns output #0, whose dimension 0 interleaves the samples of the batch below 8 rows of another dimension}}
    return %rows : tensor<32x16xf32>
  }
}

// -----

// A tensor written in place (a gradient sum) is stored the way its writers
// need it; writers that need it in different layouts are refused, since
// one of them would write a resharded copy rather than the stored tensor.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x8xf32>) -> tensor<f32> {
    %l = cleave.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %s = cleave.state "grad:w" : tensor<4x8xf32>
    %a = cleave.accumulate %x, %s {cleave.tp_loop = 0 : i64} : tensor<4x8xf32>
    // expected-error @below {{'cleave.accumulate' op writes in place a tensor that cleave.accumulate writes in another layout}}
    %b = cleave.accumulate %x, %s {cleave.tp_loop = 1 : i64} : tensor<4x8xf32>
    return %lsum : tensor<f32>
  }
}

// -----

// The same through the tensor an in-place write returns: clearing a sum in
// another layout than the accumulation left it in.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x8xf32>) -> tensor<f32> {
    %l = cleave.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %s = cleave.state "grad:w" : tensor<4x8xf32>
    %a = cleave.accumulate %x, %s {cleave.tp_loop = 0 : i64} : tensor<4x8xf32>
    // expected-error @below {{'cleave.clear' op writes operand #0 in place in another layout than the tensor has, so it would write a resharded copy}}
    %b = cleave.clear %a {cleave.tp_loop = 1 : i64} : tensor<4x8xf32>
    return %lsum : tensor<f32>
  }
}
