// RUN: cleave-opt %s --split-input-file --verify-diagnostics --cleave-recompute | FileCheck %s

// A residual block, y = a + tanh(a) with a = x w: the forward is cut where
// one carried activation is live — after a, and after y — so a and y are
// boundaries; the backward reads tanh(a) (its gradient is 1 - tanh(a)^2),
// which it recomputes from a, before its first reader. The forward keeps
// its own tanh.

// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = cleave.matmul %arg0, %[[W:.*]] :
// CHECK: %[[T:.*]] = cleave.tanh %[[A]] : tensor<2x4xf32>
// CHECK-NOT: {cleave.recomputed}
// CHECK: %[[Y:.*]] = cleave.add %[[A]], %[[T]]
// CHECK: cleave.accumulate %{{.*}}, %{{.*}} {loss}
// CHECK: %[[RT:.*]] = cleave.tanh %[[A]] {cleave.recomputed} : tensor<2x4xf32>
// CHECK-NEXT: cleave.mul %[[RT]], %[[RT]]
// CHECK-NOT: {cleave.recomputed}
// CHECK: return
func.func @main(%x: tensor<2x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 48 : i64, cleave.writable} : tensor<3x4xf32>
  %a = cleave.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %t = cleave.tanh %a : tensor<2x4xf32>
  %y = cleave.add %a, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  %ls = cleave.state "loss.sum:loss" : tensor<f32>
  %la = cleave.accumulate %l, %ls {loss} : tensor<f32>
  // d l / d a = 1 + (1 - t^2); d l / d w = x^T (d l / d a)
  %one = cleave.constant dense<1.0> : tensor<f32>
  %two = cleave.constant dense<2.0> : tensor<f32>
  %t2 = cleave.mul %t, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %da = cleave.sub %two, %t2 : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %xt = cleave.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %dw = cleave.matmul %xt, %da : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %gs = cleave.state "grad:w" : tensor<3x4xf32>
  %ga = cleave.accumulate %dw, %gs : tensor<3x4xf32>
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %p2, %s2 = cleave.sgd_update %ga, %one, %w, %s {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<3x4xf32>, tensor<f32>
  %mean = cleave.div %la, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c1 = cleave.clear %ga : tensor<3x4xf32>
  %c2 = cleave.clear %la : tensor<f32>
  return %mean : tensor<f32>
}

// -----

// expected-error @+1 {{cleave-recompute: @main is not a training step (it accumulates no gradient); run cleave-optimizer-update first}}
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %t = cleave.tanh %x : tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}
