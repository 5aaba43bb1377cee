// RUN: cleave-opt %s -canonicalize -split-input-file | FileCheck %s

// Top-k of a constant: ties keep input order, NaN orders above every number.

// CHECK-LABEL: func.func @topk_constant
// CHECK-DAG: cleave.constant dense<{{\[\[}}0x7FC00000, 3.000000e+00, 3.000000e+00], [4.000000e+00, 2.000000e+00, 2.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: cleave.constant dense<{{\[\[}}1, 0, 2], [3, 0, 2]]> : tensor<2x3xi64>
// CHECK-NOT: cleave.topk
func.func @topk_constant() -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  %x = cleave.constant dense<[[3.0, 0x7FC00000, 3.0, 1.0], [2.0, 1.0, 2.0, 4.0]]> : tensor<2x4xf32>
  %v, %i = cleave.topk %x {axis = 1 : i64, k = 3 : i64} : (tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %v, %i : tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

// Smallest along the leading axis of signed and unsigned integers.

// CHECK-LABEL: func.func @topk_smallest_axis0
// CHECK-DAG: cleave.constant dense<{{\[\[}}-5, 1], [2, 2]]> : tensor<2x2xi32>
// CHECK-DAG: cleave.constant dense<{{\[\[}}1, 0], [0, 2]]> : tensor<2x2xi64>
// CHECK-DAG: cleave.constant dense<{{\[\[}}2, 1]]> : tensor<1x2xui8>
// CHECK-DAG: cleave.constant dense<{{\[\[}}1, 0]]> : tensor<1x2xi64>
func.func @topk_smallest_axis0() -> (tensor<2x2xi32>, tensor<2x2xi64>, tensor<1x2xui8>, tensor<1x2xi64>) {
  %x = cleave.constant dense<[[2, 1], [-5, 7], [9, 2]]> : tensor<3x2xi32>
  %v, %i = cleave.topk %x {axis = 0 : i64, k = 2 : i64, largest = false} : (tensor<3x2xi32>) -> (tensor<2x2xi32>, tensor<2x2xi64>)
  %u = cleave.constant dense<[[200, 1], [2, 255]]> : tensor<2x2xui8>
  %uv, %ui = cleave.topk %u {axis = 0 : i64, k = 1 : i64, largest = false} : (tensor<2x2xui8>) -> (tensor<1x2xui8>, tensor<1x2xi64>)
  return %v, %i, %uv, %ui : tensor<2x2xi32>, tensor<2x2xi64>, tensor<1x2xui8>, tensor<1x2xi64>
}

// -----

// Arg max/min scan a line as onnxruntime does: the first of equal elements
// (the last with select_last_index); a NaN wins only where it comes first.

// CHECK-LABEL: func.func @arg_extreme_constant
// CHECK-DAG: cleave.constant dense<[1, 0, 2]> : tensor<3xi64>
// CHECK-DAG: cleave.constant dense<[3, 0, 0]> : tensor<3xi64>
// CHECK-DAG: cleave.constant dense<{{\[\[}}1], [0], [1]]> : tensor<3x1xi64>
func.func @arg_extreme_constant() -> (tensor<3xi64>, tensor<3xi64>, tensor<3x1xi64>) {
  %x = cleave.constant dense<[[1.0, 5.0, 5.0, 0.0], [0x7FC00000, 1.0, 9.0, 2.0], [1.0, 0x7FC00000, 3.0, 2.0]]> : tensor<3x4xf32>
  %first = cleave.arg_max %x {axis = 1 : i64, keepdims = false} : (tensor<3x4xf32>) -> tensor<3xi64>
  %min = cleave.arg_min %x {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<3x4xf32>) -> tensor<3xi64>
  %i = cleave.constant dense<[[4, 4], [5, 4], [3, 9]]> : tensor<3x2xi64>
  %last = cleave.arg_max %i {axis = 1 : i64, select_last_index = true} : (tensor<3x2xi64>) -> tensor<3x1xi64>
  return %first, %min, %last : tensor<3xi64>, tensor<3xi64>, tensor<3x1xi64>
}

// -----

// Along a dimension of size 1 the answer is 0 whatever the input.

// CHECK-LABEL: func.func @arg_max_unit_axis
// CHECK-NEXT: %[[Z:.+]] = cleave.constant dense<0> : tensor<4x1xi64>
// CHECK-NEXT: return %[[Z]]
func.func @arg_max_unit_axis(%x: tensor<4x1xf32>) -> tensor<4x1xi64> {
  %0 = cleave.arg_max %x {axis = 1 : i64} : (tensor<4x1xf32>) -> tensor<4x1xi64>
  return %0 : tensor<4x1xi64>
}

// -----

// Cumulative sums of constants, exclusive and reversed; integers wrap.

// CHECK-LABEL: func.func @cumsum_constant
// CHECK-DAG: cleave.constant dense<{{\[\[}}1, 3, 6], [4, 9, 15]]> : tensor<2x3xi64>
// CHECK-DAG: cleave.constant dense<{{\[\[}}5, 3, 0], [11, 6, 0]]> : tensor<2x3xi64>
// CHECK-DAG: cleave.constant dense<{{\[\[}}0, 0, 0], [1, 2, 3]]> : tensor<2x3xi64>
// CHECK-DAG: cleave.constant dense<[127, -128]> : tensor<2xi8>
// CHECK-DAG: cleave.constant dense<[5.000000e-01, 1.750000e+00]> : tensor<2xf32>
func.func @cumsum_constant() -> (tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<2xi8>, tensor<2xf32>) {
  %x = cleave.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = cleave.cumsum %x {axis = 1 : i64} : tensor<2x3xi64>
  %1 = cleave.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x3xi64>
  %2 = cleave.cumsum %x {axis = 0 : i64, exclusive = true} : tensor<2x3xi64>
  %b = cleave.constant dense<[127, 1]> : tensor<2xi8>
  %3 = cleave.cumsum %b {axis = 0 : i64} : tensor<2xi8>
  %f = cleave.constant dense<[0.5, 1.25]> : tensor<2xf32>
  %4 = cleave.cumsum %f {axis = 0 : i64} : tensor<2xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<2xi8>, tensor<2xf32>
}

// -----

// Along a dimension of size 1 an inclusive sum is the input and an exclusive
// one is zero.

// CHECK-LABEL: func.func @cumsum_unit_axis
// CHECK-SAME:    (%[[X:.+]]: tensor<3x1xf32>)
// CHECK-NEXT: %[[Z:.+]] = cleave.constant dense<0.000000e+00> : tensor<3x1xf32>
// CHECK-NEXT: return %[[X]], %[[Z]]
func.func @cumsum_unit_axis(%x: tensor<3x1xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>) {
  %0 = cleave.cumsum %x {axis = 1 : i64} : tensor<3x1xf32>
  %1 = cleave.cumsum %x {axis = 1 : i64, exclusive = true} : tensor<3x1xf32>
  return %0, %1 : tensor<3x1xf32>, tensor<3x1xf32>
}

// -----

// A computed input stays an op.

// CHECK-LABEL: func.func @not_constant
// CHECK: cleave.topk
// CHECK: cleave.arg_min
// CHECK: cleave.cumsum
func.func @not_constant(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>, tensor<3x1xi64>, tensor<3x4xf32>) {
  %v, %i = cleave.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  %a = cleave.arg_min %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x1xi64>
  %c = cleave.cumsum %x {axis = 1 : i64} : tensor<3x4xf32>
  return %v, %i, %a, %c : tensor<3x2xf32>, tensor<3x2xi64>, tensor<3x1xi64>, tensor<3x4xf32>
}
