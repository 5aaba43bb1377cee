// RUN: cleave-opt %s --cleave-compile-pipeline="gradients=true loss=loss freeze=^frozen$" | FileCheck %s
// RUN: cleave-opt %s --cleave-compile-pipeline="gradients=true loss=loss" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASSES
// RUN: cleave-opt %s --cleave-compile-pipeline="train=true loss=loss optimizer=sgd lr=0.5" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRAIN-PASSES
// RUN: cleave-opt %s --cleave-compile-pipeline="train=true loss=loss freeze=^frozen$" | FileCheck %s --check-prefix=TRAIN
// RUN: cleave-opt %s --cleave-compile-pipeline="train=true loss=loss precision=fp16 loss-scale-growth-interval=50" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP16-PASSES

// With gradients the compile pipeline differentiates the simplified
// function, so the exported GELU is fused before it is differentiated (one
// gelu rule, whose erf is the only one left, not the decomposition's
// chain), and then simplifies the backward ops: the cotangent of y * y
// (twice 1 * y) folds to y + y. The frozen weight gets no gradient.

// PASSES: cleave-fuse-patterns
// PASSES: cleave-batch-norm-training{entry=main step=true sync-replicas=1}
// PASSES-NEXT: cleave-autodiff{entry=main freeze= loss=loss loss-scale=0.000000e+00}
// PASSES: cleave-fuse-patterns
// PASSES: cse
// PASSES: cleave-plan{{.*}}annotate=false

// With train the plan (a report of the step: its microbatches, replicas
// and state) is made on the forward, before the backward; the updates
// follow the backward, after which the function returns the loss alone.
// TRAIN-PASSES: cleave-plan{{.*}}annotate=false
// TRAIN-PASSES: cleave-autodiff{entry=main freeze= loss=loss loss-scale=0.000000e+00}
// TRAIN-PASSES-NOT: cleave-plan
// TRAIN-PASSES: cleave-optimizer-update{{{.*}} lr=5.000000e-01 {{.*}} optimizer=sgd {{.*}}weight-decay=0.000000e+00 zero=0 zero-from-plan=true}
// A float16 step scales its loss: the backward's seed and the update take
// the initial scale (65536 unless given) and the growth interval.
// FP16-PASSES: cleave-mixed-precision{entry=main precision=fp16}
// FP16-PASSES: cleave-autodiff{entry=main freeze= loss=loss loss-scale=6.553600e+04}
// FP16-PASSES: cleave-optimizer-update{{{.*}} loss-scale=6.553600e+04 loss-scale-growth-interval=50 {{.*}}}
// TRAIN-LABEL: func.func @main
// TRAIN-SAME: -> (tensor<f32> {cleave.name = "loss"})
// TRAIN: cleave.weight "w" {cleave.writable
// TRAIN: cleave.weight "frozen" {file
// TRAIN: cleave.adam_update {{.*}}decoupled = true{{.*}}weight_decay = 1.000000e-02

// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<f32> {cleave.name = "loss"}, tensor<8x16xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[FROZEN:.*]] = cleave.weight "frozen"
// CHECK: %[[H:.*]] = cleave.matmul %{{.*}}, %[[W]]
// CHECK-NEXT: %[[G:.*]] = cleave.gelu %[[H]]
// CHECK-NEXT: %[[Y:.*]] = cleave.mul %[[G]], %[[FROZEN]]
// CHECK-NOT: cleave.gelu
// CHECK: %[[DY:.*]] = cleave.add %[[Y]], %[[Y]]
// CHECK-NEXT: %[[DG:.*]] = cleave.mul %[[DY]], %[[FROZEN]]
// CHECK: cleave.erf
// CHECK-NOT: cleave.erf
// CHECK: %[[DW:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]]
func.func @main(%x: tensor<4x8xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 512 : i64} : tensor<8x16xf32>
  %s = cleave.weight "frozen" {file = "/m.bin", offset = 512 : i64, length = 64 : i64} : tensor<16xf32>
  %h = cleave.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %c = cleave.constant dense<1.41421354> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<5.0e-01> : tensor<f32>
  %0 = cleave.div %h, %c : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %1 = cleave.erf %0 : tensor<4x16xf32>
  %2 = cleave.add %1, %one : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %3 = cleave.mul %h, %2 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = cleave.mul %3, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %5 = cleave.mul %4, %s : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %6 = cleave.mul %5, %5 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %l = cleave.reduce_sum %6 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x16xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
