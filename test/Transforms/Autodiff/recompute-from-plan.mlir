// RUN: cleave-opt %s --split-input-file --cleave-recompute="from-plan=true" | FileCheck %s

// Two residual blocks, y = a + tanh(a) and z = y + tanh(y). The plan chose
// to recompute the second block's segment only (its ops carry
// cleave.recompute): the backward recomputes tanh(y) from the boundary y,
// and reads the forward's own tanh(a), which stays stashed.

// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = cleave.matmul
// CHECK: %[[T:.*]] = cleave.tanh %[[A]] : tensor<2x4xf32>
// CHECK: %[[Y:.*]] = cleave.add %[[A]], %[[T]]
// CHECK: %[[U:.*]] = cleave.tanh %[[Y]] {cleave.recompute} : tensor<2x4xf32>
// CHECK: cleave.accumulate %{{.*}}, %{{.*}} {loss}
// CHECK: %[[RU:.*]] = cleave.tanh %[[Y]] {cleave.recompute, cleave.recomputed} : tensor<2x4xf32>
// CHECK-NEXT: cleave.mul %[[RU]], %[[RU]]
// CHECK-NOT: {{.*}}cleave.recomputed
// CHECK: cleave.mul %[[T]], %[[T]]
// CHECK-NOT: {{.*}}cleave.recomputed
// CHECK: return
func.func @main(%x: tensor<2x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 48 : i64, cleave.writable} : tensor<3x4xf32>
  %a = cleave.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %t = cleave.tanh %a : tensor<2x4xf32>
  %y = cleave.add %a, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %u = cleave.tanh %y {cleave.recompute} : tensor<2x4xf32>
  %z = cleave.add %y, %u {cleave.recompute} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = cleave.reduce_sum %z {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  %ls = cleave.state "loss.sum:loss" : tensor<f32>
  %la = cleave.accumulate %l, %ls {loss} : tensor<f32>
  // d l / d y = 2 - u^2; d l / d a = (d l / d y) (2 - t^2)
  %one = cleave.constant dense<1.0> : tensor<f32>
  %two = cleave.constant dense<2.0> : tensor<f32>
  %u2 = cleave.mul %u, %u : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %dy = cleave.sub %two, %u2 : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %t2 = cleave.mul %t, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %ta = cleave.sub %two, %t2 : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %da = cleave.mul %dy, %ta : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %xt = cleave.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %dw = cleave.matmul %xt, %da : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %gs = cleave.state "grad:w" : tensor<3x4xf32>
  %ga = cleave.accumulate %dw, %gs : tensor<3x4xf32>
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %b = cleave.state "sgd.momentum_buffer:w" : tensor<3x4xf32>
  %p2, %b2, %s2 = cleave.sgd_update %ga, %one, %w, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<3x4xf32>, tensor<f32>
  %mean = cleave.div %la, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c1 = cleave.clear %ga : tensor<3x4xf32>
  %c2 = cleave.clear %la : tensor<f32>
  return %mean : tensor<f32>
}

// -----

// No op marked: nothing is recomputed.

// CHECK-LABEL: func.func @main
// CHECK-NOT: cleave.recomputed
// CHECK: return
func.func @main(%x: tensor<2x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 48 : i64, cleave.writable} : tensor<3x4xf32>
  %a = cleave.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %t = cleave.tanh %a : tensor<2x4xf32>
  %y = cleave.add %a, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  %ls = cleave.state "loss.sum:loss" : tensor<f32>
  %la = cleave.accumulate %l, %ls {loss} : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %two = cleave.constant dense<2.0> : tensor<f32>
  %t2 = cleave.mul %t, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %da = cleave.sub %two, %t2 : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %xt = cleave.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %dw = cleave.matmul %xt, %da : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %gs = cleave.state "grad:w" : tensor<3x4xf32>
  %ga = cleave.accumulate %dw, %gs : tensor<3x4xf32>
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %b = cleave.state "sgd.momentum_buffer:w" : tensor<3x4xf32>
  %p2, %b2, %s2 = cleave.sgd_update %ga, %one, %w, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<3x4xf32>, tensor<f32>
  %mean = cleave.div %la, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c1 = cleave.clear %ga : tensor<3x4xf32>
  %c2 = cleave.clear %la : tensor<f32>
  return %mean : tensor<f32>
}

// -----

// Three residual blocks, y = a + tanh(a), z = y + tanh(y) and
// w = z + tanh(z). The plan recomputes the last two segments, the first of
// them joined to the next (cleave.recompute_joined): z is no boundary, so
// the backward recomputes tanh(y), z and tanh(z) from y, each once, and the
// forward's own z is read by nothing after the loss.

// CHECK-LABEL: func.func @main
// CHECK: %[[Y:.*]] = cleave.add
// CHECK: %[[Z:.*]] = cleave.add %[[Y]], %{{.*}} {cleave.recompute, cleave.recompute_joined}
// CHECK: cleave.accumulate %{{.*}}, %{{.*}} {loss}
// CHECK: %[[RU:.*]] = cleave.tanh %[[Y]] {cleave.recompute, cleave.recompute_joined, cleave.recomputed}
// CHECK-NEXT: %[[RZ:.*]] = cleave.add %[[Y]], %[[RU]] {cleave.recompute, cleave.recompute_joined, cleave.recomputed}
// CHECK-NEXT: %[[RV:.*]] = cleave.tanh %[[RZ]] {cleave.recompute, cleave.recomputed}
// CHECK-NEXT: cleave.mul %[[RV]], %[[RV]]
// CHECK-NOT: cleave.recomputed
// CHECK: cleave.mul %[[RU]], %[[RU]]
// CHECK-NOT: cleave.recomputed
// CHECK-NOT: %[[Z]]
// CHECK: return
func.func @main(%x: tensor<2x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 48 : i64, cleave.writable} : tensor<3x4xf32>
  %a = cleave.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %t = cleave.tanh %a : tensor<2x4xf32>
  %y = cleave.add %a, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %u = cleave.tanh %y {cleave.recompute, cleave.recompute_joined} : tensor<2x4xf32>
  %z = cleave.add %y, %u {cleave.recompute, cleave.recompute_joined} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %v = cleave.tanh %z {cleave.recompute} : tensor<2x4xf32>
  %o = cleave.add %z, %v {cleave.recompute} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = cleave.reduce_sum %o {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  %ls = cleave.state "loss.sum:loss" : tensor<f32>
  %la = cleave.accumulate %l, %ls {loss} : tensor<f32>
  // d l / d z = 2 - v^2; d l / d y = (d l / d z) (2 - u^2); d l / d a = (d l / d y) (2 - t^2)
  %one = cleave.constant dense<1.0> : tensor<f32>
  %two = cleave.constant dense<2.0> : tensor<f32>
  %v2 = cleave.mul %v, %v : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %dz = cleave.sub %two, %v2 : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %u2 = cleave.mul %u, %u : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %uy = cleave.sub %two, %u2 : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %dy = cleave.mul %dz, %uy : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %t2 = cleave.mul %t, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %ta = cleave.sub %two, %t2 : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %da = cleave.mul %dy, %ta : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %xt = cleave.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %dw = cleave.matmul %xt, %da : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %gs = cleave.state "grad:w" : tensor<3x4xf32>
  %ga = cleave.accumulate %dw, %gs : tensor<3x4xf32>
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %b = cleave.state "sgd.momentum_buffer:w" : tensor<3x4xf32>
  %p2, %b2, %s2 = cleave.sgd_update %ga, %one, %w, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<3x4xf32>, tensor<f32>
  %mean = cleave.div %la, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c1 = cleave.clear %ga : tensor<3x4xf32>
  %c2 = cleave.clear %la : tensor<f32>
  return %mean : tensor<f32>
}
