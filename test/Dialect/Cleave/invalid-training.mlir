// RUN: cleave-opt %s -split-input-file -verify-diagnostics

// sgd_update_c1: the scale and the step are scalars.
func.func @sgd_update_c1(%g: tensor<4xf32>, %scale: tensor<2xf32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<2xf32>
  // expected-error @+1 {{[sgd_update_c1] the gradient scale and the step must be scalars, got 'tensor<2xf32>'}}
  %p2, %s2 = cleave.sgd_update %g, %scale, %p, %s {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4xf32>, tensor<2xf32>
  return
}

// -----

// adam_update_c1: the scale and the step are scalars.
func.func @adam_update_c1(%g: tensor<4xf32>, %scale: tensor<3xf32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<3xf32>
  %m = cleave.state "m" : tensor<4xf32>
  // expected-error @+1 {{[adam_update_c1] the gradient scale and the step must be scalars, got 'tensor<3xf32>'}}
  %p2, %m2, %v2, %s2 = cleave.adam_update %g, %scale, %p, %m, %m, %s {learning_rate = 1.0e-03 : f64, beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, epsilon = 1.0e-08 : f64, weight_decay = 0.0 : f64, decoupled = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4xf32>, tensor<3xf32>
  return
}

// -----

// sgd_update_c2: a nonzero momentum needs a buffer.
func.func @sgd_update_c2(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<f32>
  // expected-error @+1 {{[sgd_update_c2] a momentum of 9.000000e-01 needs a momentum buffer}}
  %p2, %s2 = cleave.sgd_update %g, %scale, %p, %s {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, nesterov = false, dampening = 0.0 : f64, weight_decay = 0.0 : f64, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4xf32>, tensor<f32>
  return
}

// -----

// sgd_update_c3: Nesterov needs a nonzero momentum.
func.func @sgd_update_c3(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<f32>
  // expected-error @+1 {{[sgd_update_c3] Nesterov momentum needs a nonzero momentum}}
  %p2, %s2 = cleave.sgd_update %g, %scale, %p, %s {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, nesterov = true, dampening = 0.0 : f64, weight_decay = 0.0 : f64, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4xf32>, tensor<f32>
  return
}

// -----

// sgd_update_c4: no buffer without momentum.
func.func @sgd_update_c4(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<f32>
  %b = cleave.state "b" : tensor<4xf32>
  // expected-error @+1 {{[sgd_update_c4] has a momentum buffer without momentum, which it would never read}}
  %p2, %b2, %s2 = cleave.sgd_update %g, %scale, %p, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, nesterov = false, dampening = 0.0 : f64, weight_decay = 0.0 : f64, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4xf32>, tensor<f32>
  return
}

// -----

// sgd_update_c5: the buffer has the parameter's type.
func.func @sgd_update_c5(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<f32>
  %b = cleave.state "b" : tensor<2xf32>
  // expected-error @+1 {{[sgd_update_c5] the momentum buffer and its result must have the parameter's type 'tensor<4xf32>', got 'tensor<2xf32>' and 'tensor<2xf32>'}}
  %r:3 = "cleave.sgd_update"(%g, %scale, %p, %b, %s) {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, nesterov = false, dampening = 0.0 : f64, weight_decay = 0.0 : f64, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : (tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<2xf32>, tensor<f32>)
  return
}

// -----

// sgd_update_c5: so does the buffer's result.
func.func @sgd_update_c5_result(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<f32>
  %b = cleave.state "b" : tensor<4xf32>
  // expected-error @+1 {{[sgd_update_c5] the momentum buffer and its result must have the parameter's type 'tensor<4xf32>', got 'tensor<4xf32>' and 'tensor<2xf32>'}}
  %r:3 = "cleave.sgd_update"(%g, %scale, %p, %b, %s) {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, nesterov = false, dampening = 0.0 : f64, weight_decay = 0.0 : f64, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : (tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<2xf32>, tensor<f32>)
  return
}

// -----

// sgd_update_c5: a buffer without its result is not updated in place.
func.func @sgd_update_c5_no_result(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<f32>
  %b = cleave.state "b" : tensor<4xf32>
  // expected-error @+1 {{[sgd_update_c5] has a momentum buffer without its result}}
  %r:2 = "cleave.sgd_update"(%g, %scale, %p, %b, %s) {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, nesterov = false, dampening = 0.0 : f64, weight_decay = 0.0 : f64, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : (tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)
  return
}

// -----

// The gradient has the parameter's type (AllTypesMatch).
func.func @gradient_type(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<f32>
  %g2 = cleave.state "g" : tensor<2xf32>
  // expected-error @+1 {{failed to verify that all of {gradient, parameter, new_parameter} have same type}}
  %r:2 = "cleave.sgd_update"(%g2, %scale, %p, %s) {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : (tensor<2xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)
  return
}

// -----

// The assembly has four operands, or five with a buffer.
func.func @sgd_update_operands(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{expected 4 operands (gradient, scale, parameter, step) or 5 (with a momentum buffer before the step), got 3}}
  %p2, %s2 = cleave.sgd_update %g, %scale, %p {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, nesterov = false, dampening = 0.0 : f64, weight_decay = 0.0 : f64, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4xf32>, tensor<f32>
  return
}
