// RUN: cleave-opt %s -split-input-file -verify-diagnostics

// sgd_update_c1: the scale and the step are scalars.
func.func @sgd_update_c1(%g: tensor<4xf32>, %scale: tensor<2xf32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<2xf32>
  %b = cleave.state "b" : tensor<4xf32>
  // expected-error @+1 {{[sgd_update_c1] the gradient scale and the step must be scalars, got 'tensor<2xf32>'}}
  %p2, %b2, %s2 = cleave.sgd_update %g, %scale, %p, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4xf32>, tensor<2xf32>
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

// The state has the parameter's type (AllTypesMatch).
func.func @state_type(%g: tensor<4xf32>, %scale: tensor<f32>, %p: tensor<4xf32>) {
  %s = cleave.state "s" : tensor<f32>
  %b = cleave.state "b" : tensor<2xf32>
  // expected-error @+1 {{failed to verify that all of {gradient, parameter, momentum_buffer, new_parameter, new_momentum_buffer} have same type}}
  %r:3 = "cleave.sgd_update"(%g, %scale, %p, %b, %s) {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : (tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<2xf32>, tensor<f32>)
  return
}
