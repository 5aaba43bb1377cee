// RUN: cleave-opt %s -split-input-file -verify-diagnostics

// One negative test per verifier label of the selection ops.

func.func @topk_c1_axis(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  // expected-error @+2 {{'cleave.topk' op topk_c1: axis (2) must be in [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = cleave.topk %x {axis = 2 : i64, k = 2 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

func.func @topk_c2_k_too_large(%x: tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>) {
  // expected-error @+2 {{'cleave.topk' op topk_c2: k (5) must be in [0, 4], the size of dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = cleave.topk %x {axis = 1 : i64, k = 5 : i64} : (tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  return %v, %i : tensor<3x5xf32>, tensor<3x5xi64>
}

// -----

func.func @topk_c2_k_negative(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>) {
  // expected-error @+2 {{'cleave.topk' op topk_c2: k (-1) must be in [0, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = cleave.topk %x {axis = 1 : i64, k = -1 : i64} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)
  return %v, %i : tensor<3x4xf32>, tensor<3x4xi64>
}

// -----

func.func @topk_wrong_result(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>) {
  // expected-error @+1 {{'cleave.topk' op result #1 must be ranked tensor of 64-bit signless integer values}}
  %v, %i = cleave.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi32>
}

// -----

func.func @arg_max_c1_axis(%x: tensor<3x4xf32>) -> tensor<3x1xi64> {
  // expected-error @+2 {{'cleave.arg_max' op arg_max_c1: axis (-1) must be in [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.arg_max %x {axis = -1 : i64} : (tensor<3x4xf32>) -> tensor<3x1xi64>
  return %0 : tensor<3x1xi64>
}

// -----

func.func @arg_min_c1_axis(%x: tensor<3x4xf32>) -> tensor<3xi64> {
  // expected-error @+2 {{'cleave.arg_min' op arg_min_c1: axis (2) must be in [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.arg_min %x {axis = 2 : i64, keepdims = false} : (tensor<3x4xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @arg_max_wrong_keepdims(%x: tensor<3x4xf32>) -> tensor<3xi64> {
  // expected-error @+2 {{'cleave.arg_max' op inferred type(s) 'tensor<3x1xi64>' are incompatible with return type(s) of operation 'tensor<3xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.arg_max %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @cumsum_c1_axis(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'cleave.cumsum' op cumsum_c1: axis (2) must be in [0, 2)}}
  %0 = cleave.cumsum %x {axis = 2 : i64} : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
