// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd from-plan=true loss-scale=1024" | FileCheck %s

// Dynamic loss scaling in a pipelined step: each stage reads its own copy
// of the scale, flags the gradients of its own parameters and sums the
// flag over the stages (all-reduce along pp), so that every stage skips
// the same steps; each stage writes its own scale and counters.

// CHECK-LABEL: func.func @main
// CHECK: %[[G0:.*]] = cleave.accumulate %{{.*}} {cleave.stage = 0 : i64} : tensor<2xf32>
// CHECK: %[[G1:.*]] = cleave.accumulate %{{.*}} {cleave.stage = 1 : i64} : tensor<2xf32>
// CHECK: cleave.state "loss_scale" {cleave.stage = 0 : i64}
// CHECK: %[[Z0:.*]] = cleave.mul %[[G0]], %{{.*}} {cleave.stage = 0 : i64}
// CHECK: %[[S0:.*]] = cleave.reduce_sum %[[Z0]]
// CHECK: %[[F0:.*]] = cleave.all_reduce %[[S0]] {axis = "pp", cleave.stage = 0 : i64, group_size = 2 : i64, reduction = "sum"} : tensor<f32>
// CHECK: cleave.state "loss_scale" {cleave.stage = 1 : i64}
// CHECK: %[[Z1:.*]] = cleave.mul %[[G1]], %{{.*}} {cleave.stage = 1 : i64}
// CHECK: %[[S1:.*]] = cleave.reduce_sum %[[Z1]]
// CHECK: %[[F1:.*]] = cleave.all_reduce %[[S1]] {axis = "pp", cleave.stage = 1 : i64, group_size = 2 : i64, reduction = "sum"} : tensor<f32>
// CHECK: %[[A0:.*]] = cleave.add %{{.*}}, %[[F0]] {cleave.stage = 0 : i64}
// CHECK: %[[A1:.*]] = cleave.add %{{.*}}, %[[F1]] {cleave.stage = 1 : i64}
// CHECK: cleave.sgd_update %[[G0]], %[[A0]], {{.*}}cleave.stage = 0 : i64
// CHECK: cleave.sgd_update %[[G1]], %[[A1]], {{.*}}cleave.stage = 1 : i64
// CHECK: cleave.is_nan %[[F0]] {cleave.stage = 0 : i64}
// CHECK: cleave.assign %{{.*}}, %{{.*}} {cleave.stage = 0 : i64} : tensor<f32>
// CHECK: cleave.is_nan %[[F1]] {cleave.stage = 1 : i64}
// CHECK: cleave.assign %{{.*}}, %{{.*}} {cleave.stage = 1 : i64} : tensor<f32>
module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "1f1b"} {
  func.func @main(%x: tensor<2xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}, tensor<2xf32> {cleave.gradient_of = "w0", cleave.name = "grad:w0"}, tensor<2xf32> {cleave.gradient_of = "w1", cleave.name = "grad:w1"}) {
    %w0 = cleave.weight "w0" {file = "/m.data", offset = 0 : i64, length = 8 : i64, cleave.stage = 0 : i64} : tensor<2xf32>
    %w1 = cleave.weight "w1" {file = "/m.data", offset = 8 : i64, length = 8 : i64, cleave.stage = 1 : i64} : tensor<2xf32>
    %a = cleave.mul %x, %w0 {cleave.stage = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %b = cleave.mul %a, %w1 {cleave.stage = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %l = cleave.reduce_sum %b {axes = array<i64: 0>, keepdims = false, cleave.stage = 1 : i64} : (tensor<2xf32>) -> tensor<f32>
    %g0 = cleave.mul %x, %x {cleave.stage = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %g1 = cleave.mul %a, %a {cleave.stage = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %l, %g0, %g1 : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  }
}
