// RUN: cleave-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The dialect's discardable attributes (the plan contract) are verified
// wherever they appear.

func.func @stage_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{`cleave.stage` must be a non-negative i64, got "x"}}
  %y = cleave.relu %x {cleave.stage = "x"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @stage_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{`cleave.stage` must be a non-negative i64, got -1 : i64}}
  %y = cleave.relu %x {cleave.stage = -1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @stage_i32(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{`cleave.stage` must be a non-negative i64, got 0 : i32}}
  %y = cleave.relu %x {cleave.stage = 0 : i32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @tp_loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{`cleave.tp_loop` must be a non-negative i64, got 1.000000e+00 : f32}}
  %y = cleave.relu %x {cleave.tp_loop = 1.0 : f32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @batch_dims(%x: tensor<4x2xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{`cleave.batch_dims` must be `array<i64: operandDim, resultDim>` of two dimensions, got array<i64: 0>}}
  %y = cleave.reshape %x {cleave.batch_dims = array<i64: 0>} : tensor<4x2xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @port_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{`cleave.input` belongs on function arguments and results, not on an op}}
  %y = cleave.relu %x {cleave.input = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{`cleave.mesh` needs a positive integer `pp`, got {dp = 1 : i64, tp = 2 : i64}}}
module attributes {cleave.mesh = {tp = 2 : i64, dp = 1 : i64}} {
}

// -----

// expected-error @+1 {{`cleave.mesh` must be a dictionary `{pp = P : i64, tp = T : i64, dp = D : i64}`, got [2, 1, 1]}}
module attributes {cleave.mesh = [2, 1, 1]} {
}

// -----

// expected-error @+1 {{`cleave.mesh` names `ep`, which is not a mesh axis (pp, dp or tp)}}
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64, ep = 2 : i64}} {
}

// -----

// expected-error @+1 {{`cleave.microbatches` must be a positive i64, got 0 : i64}}
module attributes {cleave.microbatches = 0 : i64} {
}

// -----

// expected-error @+1 {{`cleave.target` must be a string, got 4 : i64}}
module attributes {cleave.target = 4 : i64} {
}

// -----

// expected-error @+1 {{`cleave.axes` must be an array of axis names, got [0]}}
shard.grid @tp(shape = 2) {cleave.axes = [0]}

// -----

// expected-error @+1 {{`cleave.input` must be a non-negative i64, got "0"}}
func.func @input(%x: tensor<4xf32> {cleave.input = "0"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{`cleave.output` does not belong on a function argument}}
func.func @output_on_arg(%x: tensor<4xf32> {cleave.output = 0 : i64}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{`cleave.batch_dim` must be a non-negative i64, got -1 : i64}}
func.func @batch_dim(%x: tensor<4xf32>) -> (tensor<4xf32> {cleave.batch_dim = -1 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{`cleave.name` must be a string, got 3 : i64}}
func.func @name(%x: tensor<4xf32>) -> (tensor<4xf32> {cleave.name = 3 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{`cleave.gradient_of` does not belong on a function argument}}
func.func @gradient_of_on_arg(%x: tensor<4xf32> {cleave.gradient_of = "w"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{`cleave.gradient_of` must be a string, got 1 : i64}}
func.func @gradient_of(%x: tensor<4xf32>) -> (tensor<4xf32> {cleave.gradient_of = 1 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{`cleave.stage` does not belong on a function result}}
func.func @stage_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {cleave.stage = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

func.func @writable_value() -> tensor<4xf32> {
  // expected-error @+1 {{`cleave.writable` is a marker and takes no value, got 1 : i64}}
  %w = cleave.weight "w" {file = "w.bin", offset = 0 : i64, length = 16 : i64, cleave.writable = 1 : i64} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @joined_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{`cleave.recompute_joined` is a marker and takes no value, got "yes"}}
  %y = cleave.tanh %x {cleave.recompute, cleave.recompute_joined = "yes"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Attributes of the contract in their places, and other `cleave.` names,
// verify.

// CHECK: module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 2 : i64}, cleave.microbatches = 4 : i64, cleave.note = 1 : i64, cleave.schedule = "1f1b"}
// CHECK-LABEL: func.func @well_formed
// CHECK-SAME: {cleave.batch_dim = 0 : i64, cleave.input = 0 : i64, cleave.name = "x"}
// CHECK-SAME: {cleave.output = 0 : i64}, tensor<4xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"})
// CHECK-SAME: attributes {cleave.stage = 1 : i64}
// CHECK: cleave.relu %{{.*}} {cleave.stage = 1 : i64, cleave.tp_loop = 0 : i64}
module attributes {cleave.mesh = {pp = 2 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 4 : i64, cleave.schedule = "1f1b", cleave.note = 1} {
  func.func @well_formed(%x: tensor<4xf32> {cleave.name = "x", cleave.input = 0 : i64, cleave.batch_dim = 0 : i64}) -> (tensor<4xf32> {cleave.output = 0 : i64}, tensor<4xf32> {cleave.name = "grad:w", cleave.gradient_of = "w"}) attributes {cleave.stage = 1 : i64} {
    %y = cleave.relu %x {cleave.stage = 1 : i64, cleave.tp_loop = 0 : i64} : tensor<4xf32>
    return %y, %x : tensor<4xf32>, tensor<4xf32>
  }
}
