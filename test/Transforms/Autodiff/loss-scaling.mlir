// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd loss-scale=1024 loss-scale-growth-interval=3 clip-grad-norm=1.0" | FileCheck %s
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=adamw replicas=2 loss-scale=64" | FileCheck %s --check-prefix=REPLICAS
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=adamw replicas=2 zero=1 loss-scale=64" | FileCheck %s --check-prefix=ZERO
// RUN: not cleave-opt %s --cleave-optimizer-update="loss-scale=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not cleave-opt %s --cleave-optimizer-update="loss-scale=8 loss-scale-growth-interval=0" 2>&1 | FileCheck %s --check-prefix=INTERVAL

// Dynamic loss scaling in the update: the scale is read from its state (the
// initial scale while that is 0), the gradient scales are multiplied by its
// reciprocal (the clipping norm too) and by the overflow flag added (the
// gradient sums times 0, summed: NaN on an inf or NaN, which makes the
// updates skip the step); after the updates the next scale, the good steps
// and the skipped steps are assigned to their states.

// CHECK-LABEL: func.func @main
// CHECK: %[[GW:.*]] = cleave.accumulate %{{.*}}, %{{.*}} : tensor<3x2xf32>
// CHECK: %[[GB:.*]] = cleave.accumulate %{{.*}}, %{{.*}} : tensor<2xf32>
// CHECK: %[[STATE:.*]] = cleave.state "loss_scale" : tensor<f32>
// CHECK: %[[UNSET:.*]] = cleave.equal %[[STATE]]
// CHECK: %[[INITIAL:.*]] = cleave.constant dense<1.024000e+03> : tensor<f32>
// CHECK: %[[SCALE:.*]] = cleave.where %[[UNSET]], %[[INITIAL]], %[[STATE]]
// CHECK: %[[UNSCALE:.*]] = cleave.div %{{.*}}, %[[SCALE]]
// CHECK: %[[ZW:.*]] = cleave.mul %[[GW]], %[[NIL:.*]] : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
// CHECK: %[[FW:.*]] = cleave.reduce_sum %[[ZW]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK: %[[ZB:.*]] = cleave.mul %[[GB]], %{{.*}} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK: %[[FB:.*]] = cleave.reduce_sum %[[ZB]] {axes = array<i64: 0>, keepdims = false}
// CHECK: %[[FLAG:.*]] = cleave.add %[[FW]], %[[FB]]
// CHECK: %[[NORM:.*]] = cleave.sqrt
// CHECK: %[[TRUE_NORM:.*]] = cleave.mul %[[NORM]], %[[UNSCALE]]
// CHECK: cleave.add %[[TRUE_NORM]], %{{.*}}
// CHECK: %[[CLIP:.*]] = cleave.min
// CHECK: %[[UNSCALED:.*]] = cleave.mul %[[CLIP]], %[[UNSCALE]]
// CHECK: %[[FACTOR:.*]] = cleave.add %[[UNSCALED]], %[[FLAG]]
// CHECK: cleave.sgd_update %[[GW]], %[[FACTOR]],
// CHECK: cleave.sgd_update %[[GB]], %[[FACTOR]],
// CHECK: %[[GOOD:.*]] = cleave.state "loss_scale.good_steps" : tensor<f32>
// CHECK: %[[SKIPPED:.*]] = cleave.state "loss_scale.skipped_steps" : tensor<f32>
// CHECK: %[[OVERFLOW:.*]] = cleave.is_nan %[[FLAG]]
// CHECK: %[[COUNTED:.*]] = cleave.add %[[GOOD]], %[[ONE:.*]] :
// CHECK: %[[LIMIT:.*]] = cleave.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[GROWS:.*]] = cleave.greater_equal %[[COUNTED]], %[[LIMIT]]
// CHECK: %[[DOUBLED:.*]] = cleave.mul %[[SCALE]], %{{.*}}
// CHECK: %[[KEPT:.*]] = cleave.where %[[GROWS]], %[[DOUBLED]], %[[SCALE]]
// CHECK: %[[HALF:.*]] = cleave.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[HALVED:.*]] = cleave.mul %[[SCALE]], %[[HALF]]
// CHECK: %[[NEXT:.*]] = cleave.where %[[OVERFLOW]], %[[HALVED]], %[[KEPT]]
// CHECK: %[[RESTART:.*]] = cleave.where %[[GROWS]], %{{.*}}, %[[COUNTED]]
// CHECK: %[[NEXT_GOOD:.*]] = cleave.where %[[OVERFLOW]], %{{.*}}, %[[RESTART]]
// CHECK: %[[ONE_MORE:.*]] = cleave.add %[[SKIPPED]], %[[ONE]]
// CHECK: %[[NEXT_SKIPPED:.*]] = cleave.where %[[OVERFLOW]], %[[ONE_MORE]], %[[SKIPPED]]
// CHECK: %[[TARGET:.*]] = cleave.state "loss_scale" : tensor<f32>
// CHECK: cleave.assign %[[NEXT]], %[[TARGET]] : tensor<f32>
// CHECK: cleave.assign %[[NEXT_GOOD]], %[[GOOD]] : tensor<f32>
// CHECK: cleave.assign %[[NEXT_SKIPPED]], %[[SKIPPED]] : tensor<f32>
// CHECK: cleave.clear

// Replicas update from the all-reduced sums: the flag, computed from them,
// is the same on every replica without communication of its own.
// REPLICAS-LABEL: func.func @main
// REPLICAS: %[[GW:.*]] = cleave.all_reduce %{{.*}} {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<3x2xf32>
// REPLICAS: cleave.mul %[[GW]], %{{.*}} : (tensor<3x2xf32>, tensor<f32>)
// REPLICAS-NOT: cleave.all_reduce
// REPLICAS: cleave.adam_update

// Under ZeRO each replica holds a block of every gradient: its flag is
// summed over the replicas.
// ZERO-LABEL: func.func @main
// ZERO: %[[BW:.*]] = cleave.reduce_scatter %{{.*}} {axis = "dp"
// ZERO: %[[BB:.*]] = cleave.reduce_scatter %{{.*}} {axis = "dp"
// ZERO: cleave.mul %[[BW]], %{{.*}} : (tensor<3xf32>, tensor<f32>)
// ZERO: cleave.mul %[[BB]], %{{.*}} : (tensor<1xf32>, tensor<f32>)
// ZERO: %[[LOCAL:.*]] = cleave.add
// ZERO: %[[FLAG:.*]] = cleave.all_reduce %[[LOCAL]] {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
// ZERO: %[[FACTOR:.*]] = cleave.add %{{.*}}, %[[FLAG]]
// ZERO: cleave.adam_update %[[BW]], %[[FACTOR]],
// ZERO: cleave.adam_update %[[BB]], %[[FACTOR]],
// ZERO: cleave.is_nan %[[FLAG]]

// NEGATIVE: error: loss-scale=-1.000000e+00: the loss scale must be positive (0: none)
// INTERVAL: error: loss-scale-growth-interval=0: the loss scale grows after at least one good step

func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}, tensor<3x2xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"}, tensor<2xf32> {cleave.gradient_of = "b", cleave.name = "grad:b"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<3x2xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 24 : i64, length = 8 : i64} : tensor<2xf32>
  %y = cleave.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %z = cleave.add %y, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %l = cleave.reduce_sum %z {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  %dw = cleave.mul %w, %w : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %db = cleave.reduce_sum %z {axes = array<i64: 0>, keepdims = false} : (tensor<4x2xf32>) -> tensor<2xf32>
  return %l, %dw, %db : tensor<f32>, tensor<3x2xf32>, tensor<2xf32>
}
