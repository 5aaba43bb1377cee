// RUN: cleave-opt %s | cleave-opt | FileCheck %s

// The optimizer ops print and parse back; the updates' results are their
// destination operands after the update.

// CHECK-LABEL: func.func @sgd
// CHECK: %[[S:.*]] = cleave.state "sgd.step:w" : tensor<f32>
// CHECK: %[[B:.*]] = cleave.state "sgd.momentum_buffer:w" : tensor<4x8xf32>
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = cleave.sgd_update %arg0, %arg1, %arg2, %[[B]], %[[S]] {{{.*}}nesterov = false{{.*}}} : tensor<4x8xf32>, tensor<f32>
func.func @sgd(%g: tensor<4x8xf32>, %scale: tensor<f32>, %p: tensor<4x8xf32>) {
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %b = cleave.state "sgd.momentum_buffer:w" : tensor<4x8xf32>
  %p2, %b2, %s2 = cleave.sgd_update %g, %scale, %p, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4x8xf32>, tensor<f32>
  return
}

// Without momentum there is no buffer: four operands, two results.
// CHECK-LABEL: func.func @plain_sgd
// CHECK: %[[S:.*]] = cleave.state "sgd.step:w" : tensor<f32>
// CHECK-NEXT: %{{[^,]*}}, %{{[^,]*}} = cleave.sgd_update %arg0, %arg1, %arg2, %[[S]] {{{.*}}momentum = 0.000000e+00 : f64{{.*}}} : tensor<4x8xf32>, tensor<f32>
func.func @plain_sgd(%g: tensor<4x8xf32>, %scale: tensor<f32>, %p: tensor<4x8xf32>) {
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %p2, %s2 = cleave.sgd_update %g, %scale, %p, %s {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4x8xf32>, tensor<f32>
  return
}

// CHECK-LABEL: func.func @adam
// CHECK: cleave.adam_update %arg0, %arg1, %arg2, %{{.*}}, %{{.*}}, %{{.*}} {{{.*}}decoupled = true{{.*}}} : tensor<8xf32>, tensor<f32>
func.func @adam(%g: tensor<8xf32>, %scale: tensor<f32>, %p: tensor<8xf32>) {
  %s = cleave.state "adamw.step:w" : tensor<f32>
  %m = cleave.state "adamw.exp_avg:w" : tensor<8xf32>
  %v = cleave.state "adamw.exp_avg_sq:w" : tensor<8xf32>
  %p2, %m2, %v2, %s2 = cleave.adam_update %g, %scale, %p, %m, %v, %s {learning_rate = 1.0e-03 : f64, beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, epsilon = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, decoupled = true, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<8xf32>, tensor<f32>
  return
}
