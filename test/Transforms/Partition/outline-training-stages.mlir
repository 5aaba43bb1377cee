// RUN: cleave-opt %s -split-input-file --cleave-autodiff="loss=loss" | FileCheck %s --check-prefix=GRAD
// RUN: cleave-opt %s -split-input-file --cleave-autodiff="loss=loss" --cleave-optimizer-update="optimizer=sgd microbatches=2 clip-grad-norm=1.0" --cleave-outline-stages | FileCheck %s

// A training step split into two pipeline stages by the plan's stage
// attributes on the forward ops. The backward of each op runs on that op's
// stage; the accumulation and the update of each parameter on the stage
// that reads it; clipping adds each stage's squares and all-reduces them
// along pp. Outlined, the activation %relu flows forward (stage 0 sends it,
// stage 1 receives it) and its gradient backward (stage 1 sends, stage 0
// receives): each stage receives before it computes and sends after.

// GRAD-LABEL: func.func @main
// GRAD: %[[H:.*]] = cleave.matmul {{.*}} {cleave.stage = 0 : i64}
// GRAD: %[[W2:.*]] = cleave.weight "w2" {cleave.stage = 1 : i64
// The seed and the backward of the stage-1 ops are on stage 1.
// GRAD: cleave.constant {cleave.stage = 1 : i64} dense<1.000000e+00> : tensor<4x2xf32>
// GRAD-NEXT: %[[DR:.*]] = cleave.mul %{{.*}}, %[[W2]] {cleave.stage = 1 : i64}
// GRAD-NEXT: %[[DW2:.*]] = cleave.reduce_sum {{.*}}cleave.stage = 1 : i64
// The relu's and the first matmul's backward are on stage 0.
// GRAD: cleave.greater %[[H]], %{{.*}} {cleave.stage = 0 : i64}
// GRAD-NEXT: cleave.constant {cleave.stage = 0 : i64}
// GRAD-NEXT: cleave.where {{.*}} {cleave.stage = 0 : i64}
// GRAD-NEXT: cleave.transpose {{.*}}cleave.stage = 0 : i64
// GRAD-NEXT: %[[DW1:.*]] = cleave.matmul {{.*}} {cleave.stage = 0 : i64}
// GRAD-NEXT: return %{{.*}}, %[[DW1]], %[[DW2]]

// CHECK-LABEL: func.func @stage_0
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32> {cleave.input = 0 : i64, cleave.name = "x"})
// CHECK-SAME: attributes {cleave.stage = 0 : i64}
// CHECK-NEXT: %[[DRELU:.*]] = cleave.recv from 1 tag 1 : tensor<4x2xf32>
// CHECK-NEXT: %[[W1:.*]] = cleave.weight "w1" {cleave.writable
// CHECK-NEXT: %[[H0:.*]] = cleave.matmul %[[X]], %[[W1]]
// CHECK-NEXT: %[[RELU:.*]] = cleave.relu %[[H0]]
// CHECK: cleave.where %{{.*}}, %[[DRELU]], %{{.*}}
// CHECK: %[[G1:.*]] = cleave.state "grad:w1"
// CHECK-NEXT: %[[S1:.*]] = cleave.accumulate %{{.*}}, %[[G1]]
// CHECK-NEXT: %[[SQ1:.*]] = cleave.reduce_sum_square %[[S1]]
// CHECK-NEXT: %[[N1:.*]] = cleave.all_reduce %[[SQ1]] {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
// CHECK-NEXT: cleave.sqrt %[[N1]]
// CHECK: cleave.sgd_update %[[S1]], %{{.*}}, %[[W1]]
// CHECK: cleave.clear %[[S1]]
// CHECK-NEXT: cleave.send %[[RELU]] to 1 tag 0 : tensor<4x2xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @stage_1
// CHECK-SAME: () -> (tensor<f32> {cleave.name = "loss", cleave.output = 0 : i64})
// CHECK-NEXT: %[[R1:.*]] = cleave.recv from 0 tag 0 : tensor<4x2xf32>
// CHECK-NEXT: %[[W2B:.*]] = cleave.weight "w2" {cleave.writable
// CHECK: %[[ONES:.*]] = cleave.constant dense<1.000000e+00> : tensor<4x2xf32>
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[ONES]], %[[W2B]]
// CHECK: cleave.reduce_sum %[[R1]]
// CHECK: %[[SQ2:.*]] = cleave.reduce_sum_square
// CHECK-NEXT: cleave.all_reduce %[[SQ2]] {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
// CHECK: cleave.sgd_update %{{.*}}, %{{.*}}, %[[W2B]]
// CHECK: cleave.send %[[D]] to 0 tag 1 : tensor<4x2xf32>
// CHECK-NEXT: return

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "1f1b"} {
  func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
    %w1 = cleave.weight "w1" {file = "/m.data", offset = 0 : i64, length = 24 : i64, cleave.stage = 0 : i64} : tensor<3x2xf32>
    %h = cleave.matmul %x, %w1 {cleave.stage = 0 : i64} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
    %relu = cleave.relu %h {cleave.stage = 0 : i64} : tensor<4x2xf32>
    %w2 = cleave.weight "w2" {file = "/m.data", offset = 24 : i64, length = 8 : i64, cleave.stage = 1 : i64} : tensor<2xf32>
    %y = cleave.mul %relu, %w2 {cleave.stage = 1 : i64} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false, cleave.stage = 1 : i64} : (tensor<4x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A parameter both stages read (a tied weight): each stage gets a copy of
// the weight op and a gradient of its own reads; each accumulates it, the
// update all-reduces the sums along pp and updates its copy. Clipping
// counts its squares once, on the first stage. A backward op of stage 0
// that reads the weight (the cotangent of the stage-1 product is the
// weight itself) reads stage 0's copy: each stage holds one.

// GRAD-LABEL: func.func @main
// GRAD-SAME: tensor<2xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"}, tensor<2xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"}
// GRAD: cleave.weight "w" {cleave.stage = 0 : i64
// GRAD-NEXT: cleave.weight "w" {cleave.stage = 1 : i64

// CHECK-LABEL: func.func @stage_0
// CHECK: %[[W0:.*]] = cleave.weight "w" {cleave.writable
// CHECK-NOT: cleave.weight "w"
// CHECK: %[[G0:.*]] = cleave.accumulate
// CHECK-NEXT: %[[T0:.*]] = cleave.all_reduce %[[G0]] {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<2xf32>
// CHECK-NEXT: cleave.reduce_sum_square %[[T0]]
// CHECK: cleave.sgd_update %[[T0]], %{{.*}}, %[[W0]]
// CHECK-LABEL: func.func @stage_1
// CHECK: %[[W1:.*]] = cleave.weight "w" {cleave.writable
// CHECK: %[[G1:.*]] = cleave.accumulate
// CHECK-NOT: cleave.reduce_sum_square %{{.*}} : (tensor<2xf32>)
// CHECK: %[[T1:.*]] = cleave.all_reduce %[[G1]] {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<2xf32>
// CHECK-NOT: cleave.reduce_sum_square %{{.*}} : (tensor<2xf32>)
// CHECK: cleave.sgd_update %[[T1]], %{{.*}}, %[[W1]]

module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "1f1b"} {
  func.func @main(%x: tensor<2xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 8 : i64, cleave.stage = 0 : i64} : tensor<2xf32>
    %a = cleave.mul %x, %w {cleave.stage = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %b = cleave.mul %a, %w {cleave.stage = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %l = cleave.reduce_sum %b {axes = array<i64: 0>, keepdims = false, cleave.stage = 1 : i64} : (tensor<2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
