// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-verify-partition | FileCheck %s

// The deadlock check of a training step replays each stage's transfers in
// the order of the training schedule: per microbatch the forward's, then
// the backward's, as 1F1B interleaves them (stage 0: F0 F1 B0 F2 B1 F3 B2
// B3, stage 1: F0 B0 F1 B1 ...). The phase of each transfer follows from
// its direction: activations go to later stages in the forward, their
// gradients to earlier ones in the backward. Stage 0's sends of F1 and
// stage 1's of B0 cross; a send never waits for its receiver, so the step
// completes.

// CHECK-LABEL: func.func @stage_0
// CHECK-LABEL: func.func @stage_1

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 4 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
    %g = cleave.recv from 1 tag 1 : tensor<4xf32>
    %a = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %dw = cleave.mul %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = cleave.state "grad:w" : tensor<4xf32>
    %sum = cleave.accumulate %dw, %s : tensor<4xf32>
    cleave.send %a to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> tensor<f32> attributes {cleave.stage = 1 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %g = cleave.neg %a : tensor<4xf32>
    cleave.send %g to 0 tag 1 : tensor<4xf32>
    return %lsum : tensor<f32>
  }
}

// -----

// The gradient is sent under another tag than stage 0's backward expects:
// the error names the phase and the microbatch.

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 4 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
    // expected-note @+1 {{the receive it meets: stage 0 receives from stage 1 (tag 1, backward of microbatch 0)}}
    %g = cleave.recv from 1 tag 1 : tensor<4xf32>
    %a = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %dw = cleave.mul %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = cleave.state "grad:w" : tensor<4xf32>
    %sum = cleave.accumulate %dw, %s : tensor<4xf32>
    cleave.send %a to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> tensor<f32> attributes {cleave.stage = 1 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %g = cleave.neg %a : tensor<4xf32>
    // expected-error @+1 {{mismatched transfer: stage 1 sends to stage 0 (tag 2, backward of microbatch 0) a 'tensor<4xf32>', but stage 0 expects tag 1 and a 'tensor<4xf32>'}}
    cleave.send %g to 0 tag 2 : tensor<4xf32>
    return %lsum : tensor<f32>
  }
}

// -----

// Stage 0's activation depends on what it receives from stage 1 (so the
// receive is in its forward; cleave-outline-stages never makes this),
// while stage 1's forward waits for the activation: a cycle.

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
    // expected-error @+1 {{communication deadlock: stage 0 waits for stage 1, stage 1 waits for stage 0; stage 0 receives from stage 1 (tag 1, forward of microbatch 0) here}}
    %g = cleave.recv from 1 tag 1 : tensor<4xf32>
    %dw = cleave.mul %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = cleave.state "grad:w" : tensor<4xf32>
    %sum = cleave.accumulate %dw, %s : tensor<4xf32>
    %a = cleave.mul %dw, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    cleave.send %a to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> tensor<f32> attributes {cleave.stage = 1 : i64} {
    // expected-note @+1 {{blocked: stage 1 receives from stage 0 (tag 0, forward of microbatch 0)}}
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %g = cleave.neg %a : tensor<4xf32>
    cleave.send %g to 0 tag 1 : tensor<4xf32>
    return %lsum : tensor<f32>
  }
}

// -----

// Collectives along the pipeline stages are replayed too: each stage's
// update all-reduces its squared gradient norm along pp (a stage without
// parameters brings zeros), after every microbatch's transfers. The step
// completes.

// CHECK: cleave.all_reduce %{{.*}} {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
// CHECK: cleave.all_reduce %{{.*}} {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
    %g = cleave.recv from 1 tag 1 : tensor<4xf32>
    %a = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %dw = cleave.mul %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = cleave.state "grad:w" : tensor<4xf32>
    %sum = cleave.accumulate %dw, %s : tensor<4xf32>
    cleave.send %a to 1 tag 0 : tensor<4xf32>
    %sq = cleave.reduce_sum_square %sum {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %norm = cleave.all_reduce %sq {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
    return
  }
  func.func @stage_1() -> tensor<f32> attributes {cleave.stage = 1 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %g = cleave.neg %a : tensor<4xf32>
    cleave.send %g to 0 tag 1 : tensor<4xf32>
    %z = cleave.constant dense<0.000000e+00> : tensor<f32>
    %norm = cleave.all_reduce %z {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
    return %lsum : tensor<f32>
  }
}

// -----

// The stages' collectives along pp must agree: here stage 1 brings a
// tensor of another type.

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
    %g = cleave.recv from 1 tag 1 : tensor<4xf32>
    %a = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %dw = cleave.mul %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = cleave.state "grad:w" : tensor<4xf32>
    %sum = cleave.accumulate %dw, %s : tensor<4xf32>
    cleave.send %a to 1 tag 0 : tensor<4xf32>
    %sq = cleave.reduce_sum_square %sum {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    // expected-error @+1 {{mismatched collective: stage 0 runs cleave.all_reduce along pp}}
    %norm = cleave.all_reduce %sq {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
    return
  }
  func.func @stage_1() -> tensor<f32> attributes {cleave.stage = 1 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %g = cleave.neg %a : tensor<4xf32>
    cleave.send %g to 0 tag 1 : tensor<4xf32>
    %z = cleave.constant dense<0.000000e+00> : tensor<2xf32>
    // expected-note @+1 {{the collective it meets}}
    %norm = cleave.all_reduce %z {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<2xf32>
    return %lsum : tensor<f32>
  }
}

// -----

// A collective along pp that one stage never reaches cannot complete.

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
    %g = cleave.recv from 1 tag 1 : tensor<4xf32>
    %a = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %dw = cleave.mul %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = cleave.state "grad:w" : tensor<4xf32>
    %sum = cleave.accumulate %dw, %s : tensor<4xf32>
    cleave.send %a to 1 tag 0 : tensor<4xf32>
    %sq = cleave.reduce_sum_square %sum {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    // expected-error @+1 {{communication cannot complete: stage 0 runs cleave.all_reduce along pp}}
    %norm = cleave.all_reduce %sq {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
    return
  }
  func.func @stage_1() -> tensor<f32> attributes {cleave.stage = 1 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %g = cleave.neg %a : tensor<4xf32>
    cleave.send %g to 0 tag 1 : tensor<4xf32>
    return %lsum : tensor<f32>
  }
}

// -----

// Stage 0's forward all-reduces its activation along pp before sending it
// (cleave-outline-stages never makes this), while stage 1's forward waits
// for the activation: the collective and the receive wait for each other.

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
    %g = cleave.recv from 1 tag 1 : tensor<4xf32>
    %a = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    // expected-error @+1 {{communication deadlock: stage 0 waits for stage 1, stage 1 waits for stage 0; stage 0 runs cleave.all_reduce along pp (forward of microbatch 0) here}}
    %r = cleave.all_reduce %a {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
    %dw = cleave.mul %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = cleave.state "grad:w" : tensor<4xf32>
    %sum = cleave.accumulate %dw, %s : tensor<4xf32>
    cleave.send %r to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> tensor<f32> attributes {cleave.stage = 1 : i64} {
    // expected-note @+1 {{blocked: stage 1 receives from stage 0 (tag 0, forward of microbatch 0)}}
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %ls = cleave.state "loss.sum:loss" : tensor<f32>
    %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
    %g = cleave.neg %a : tensor<4xf32>
    cleave.send %g to 0 tag 1 : tensor<4xf32>
    return %lsum : tensor<f32>
  }
}
