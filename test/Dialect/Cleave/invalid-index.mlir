// RUN: cleave-opt %s -split-input-file -verify-diagnostics

// One case per verifier and type-inference error of the indexing family,
// named after the constraint label in IndexOps.cpp. A type-inference error
// is followed by the generic "failed to infer returned types" of the op.

func.func @gather_nd_c1(%d: tensor<4x5xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+2 {{the last dimension of 'indices' (3) must be static and in [1, 2], the dimensions of 'data' after the batch}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather_nd %d, %i : (tensor<4x5xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @gather_nd_c1_dynamic(%d: tensor<4x5xf32>, %i: tensor<2x?xi64>) {
  // expected-error @+2 {{the last dimension of 'indices' (?) must be static}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather_nd %d, %i : (tensor<4x5xf32>, tensor<2x?xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @gather_nd_c2(%d: tensor<2x5xf32>, %i: tensor<2x1xi64>) {
  // expected-error @+2 {{'batch_dims' 2 must be in [0, min(rank(data), rank(indices))) = [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather_nd %d, %i {batch_dims = 2 : i64} : (tensor<2x5xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @gather_nd_c3(%d: tensor<2x5xf32>, %i: tensor<3x1xi64>) {
  // expected-error @+2 {{batch dimension 0 of 'indices' (3) differs from that of 'data' (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x5xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @scatter_nd_c1(%d: tensor<4xf32>, %i: tensor<2x2xi64>, %u: tensor<2xf32>) {
  // expected-error @+2 {{the last dimension of 'indices' (2) must be static and in [1, 1], the rank of 'data'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.scatter_nd %d, %i, %u : (tensor<4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @scatter_nd_c2(%d: tensor<4x8xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+2 {{'updates' has shape [2, 4] but indices.shape[:-1] + data.shape[1:] is [2, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.scatter_nd %d, %i, %u : (tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @scatter_nd_c3(%d: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xi32>) {
  // expected-error @+1 {{'updates' has element type 'i32' but 'data' has 'f32'}}
  %0 = cleave.scatter_nd %d, %i, %u : (tensor<4xf32>, tensor<2x1xi64>, tensor<2xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @scatter_nd_c4(%d: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{'reduction' must be one of none, add, mul, max, min; got "sum"}}
  %0 = cleave.scatter_nd %d, %i, %u {reduction = "sum"} : (tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @gather_elements_c1(%d: tensor<3x4xf32>, %i: tensor<3x2xi64>) {
  // expected-error @+2 {{'axis' 2 must be in [0, rank) = [0, 2) of the data operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather_elements %d, %i {axis = 2 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return
}

// -----

func.func @gather_elements_c2(%d: tensor<3x4xf32>, %i: tensor<6xi64>) {
  // expected-error @+2 {{'indices' has rank 1 but 'data' has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather_elements %d, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<6xi64>) -> tensor<6xf32>
  return
}

// -----

func.func @gather_elements_c3(%d: tensor<3x4xf32>, %i: tensor<3x5xi64>) {
  // expected-error @+2 {{dimension 1 of 'indices' (5) exceeds that of 'data' (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather_elements %d, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<3x5xi64>) -> tensor<3x5xf32>
  return
}

// -----

func.func @scatter_elements_c1(%d: tensor<3x4xf32>, %i: tensor<1x4xi64>, %u: tensor<1x4xf32>) {
  // expected-error @+2 {{'axis' -1 must be in [0, rank) = [0, 2) of the data operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.scatter_elements %d, %i, %u {axis = -1 : i64} : (tensor<3x4xf32>, tensor<1x4xi64>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @scatter_elements_c2(%d: tensor<3x4xf32>, %i: tensor<4xi64>, %u: tensor<4xf32>) {
  // expected-error @+2 {{'indices' has rank 1 but 'data' has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.scatter_elements %d, %i, %u {axis = 0 : i64} : (tensor<3x4xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @scatter_elements_c3(%d: tensor<3x4xf32>, %i: tensor<1x4xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+2 {{'updates' has shape [2, 4] but 'indices' has shape [1, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.scatter_elements %d, %i, %u {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @scatter_elements_c4(%d: tensor<3x4xf32>, %i: tensor<1x6xi64>, %u: tensor<1x6xf32>) {
  // expected-error @+2 {{dimension 1 of 'indices' (6) exceeds that of 'data' (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.scatter_elements %d, %i, %u {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x6xi64>, tensor<1x6xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @scatter_elements_c5(%d: tensor<3x4xf32>, %i: tensor<1x4xi64>, %u: tensor<1x4xf16>) {
  // expected-error @+1 {{'updates' has element type 'f16' but 'data' has 'f32'}}
  %0 = cleave.scatter_elements %d, %i, %u {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x4xi64>, tensor<1x4xf16>) -> tensor<3x4xf32>
  return
}

// -----

func.func @scatter_elements_c6(%d: tensor<3x4xf32>, %i: tensor<1x4xi64>, %u: tensor<1x4xf32>) {
  // expected-error @+1 {{'reduction' must be one of none, add, mul, max, min; got "mean"}}
  %0 = cleave.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = "mean"} : (tensor<3x4xf32>, tensor<1x4xi64>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @one_hot_c1(%i: tensor<4xi64>, %v: tensor<2xf32>) {
  // expected-error @+2 {{'depth' 0 must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.one_hot %i, %v {depth = 0 : i64, axis = 1 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x0xf32>
  return
}

// -----

func.func @one_hot_c2(%i: tensor<4xi64>, %v: tensor<2xf32>) {
  // expected-error @+2 {{'axis' 2 must be in [0, rank(indices)] = [0, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.one_hot %i, %v {depth = 3 : i64, axis = 2 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @one_hot_c3(%i: tensor<4xi64>, %v: tensor<3xf32>) {
  // expected-error @+2 {{'values' must be [off, on], a 1-D tensor of 2 elements; got shape [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.one_hot %i, %v {depth = 3 : i64, axis = 1 : i64} : (tensor<4xi64>, tensor<3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @trilu_c1(%x: tensor<4xf32>) {
  // expected-error @+2 {{the operand has rank 1; trilu needs at least 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.trilu %x : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @result_type(%d: tensor<2x5x8xf32>, %i: tensor<2x3x1xi64>) {
  // expected-error @+2 {{'cleave.gather_nd' op inferred type(s) 'tensor<2x3x8xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi64>) -> tensor<2x3xf32>
  return
}
