// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-outline-stages

// Pipelined training steps that cannot be split as planned, each refused
// naming the op and the stages (outline-training-stages.mlir splits one).

// The forward of an earlier stage reads a later stage's activation.
module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "1f1b"} {
  func.func @main(%x: tensor<2xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
    %a = cleave.neg %x {cleave.stage = 0 : i64} : tensor<2xf32>
    %b = cleave.neg %a {cleave.stage = 1 : i64} : tensor<2xf32>
    // expected-error @below {{'cleave.add' op in the forward of stage 0 uses a value of stage 1; the forward's values may only flow to later stages}}
    %c = cleave.add %a, %b {cleave.stage = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %l = cleave.reduce_sum %c {axes = array<i64: 0>, keepdims = false, cleave.stage = 1 : i64} : (tensor<2xf32>) -> tensor<f32>
    %s = cleave.state "loss.sum:loss" {cleave.stage = 1 : i64} : tensor<f32>
    %sum = cleave.accumulate %l, %s {loss, cleave.stage = 1 : i64} : tensor<f32>
    return %sum : tensor<f32>
  }
}

// -----

// A backward value of an earlier stage read by a later one: gradients flow
// to earlier stages only.
module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "1f1b"} {
  func.func @main(%x: tensor<2xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
    %a = cleave.neg %x {cleave.stage = 0 : i64} : tensor<2xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false, cleave.stage = 1 : i64} : (tensor<2xf32>) -> tensor<f32>
    %s = cleave.state "loss.sum:loss" {cleave.stage = 1 : i64} : tensor<f32>
    %sum = cleave.accumulate %l, %s {loss, cleave.stage = 1 : i64} : tensor<f32>
    %g = cleave.exp %x {cleave.stage = 0 : i64} : tensor<2xf32>
    // expected-error @below {{'cleave.neg' op in stage 1 uses a backward value of stage 0; the backward's values may only flow to earlier stages}}
    %h = cleave.neg %g {cleave.stage = 1 : i64} : tensor<2xf32>
    %gs = cleave.state "grad:w" {cleave.stage = 1 : i64} : tensor<2xf32>
    %gsum = cleave.accumulate %h, %gs {cleave.stage = 1 : i64} : tensor<2xf32>
    return %sum : tensor<f32>
  }
}

// -----

// The update of one stage reads the sums of another.
module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "1f1b"} {
  func.func @main(%x: tensor<2xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
    %a = cleave.neg %x {cleave.stage = 0 : i64} : tensor<2xf32>
    %l = cleave.reduce_sum %a {axes = array<i64: 0>, keepdims = false, cleave.stage = 1 : i64} : (tensor<2xf32>) -> tensor<f32>
    %s = cleave.state "loss.sum:loss" {cleave.stage = 1 : i64} : tensor<f32>
    %sum = cleave.accumulate %l, %s {loss, cleave.stage = 1 : i64} : tensor<f32>
    %g = cleave.exp %x {cleave.stage = 0 : i64} : tensor<2xf32>
    %gs = cleave.state "grad:w" {cleave.stage = 0 : i64} : tensor<2xf32>
    %gsum = cleave.accumulate %g, %gs {cleave.stage = 0 : i64} : tensor<2xf32>
    // expected-error @below {{'cleave.reduce_sum_square' op updates stage 1's state from a value of stage 0; each stage's update reads only what the stage computed}}
    %n = cleave.reduce_sum_square %gsum {axes = array<i64: 0>, keepdims = false, cleave.stage = 1 : i64} : (tensor<2xf32>) -> tensor<f32>
    %m = cleave.add %sum, %n {cleave.stage = 1 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %m : tensor<f32>
  }
}
