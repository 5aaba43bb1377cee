// RUN: cleave-opt %s --canonicalize | FileCheck %s

// The indexing ops fold when every operand is a constant, with negative
// indices counted from the end and repeated scatter indices combined in
// order. An index out of range is left to the kernel, which reports it.

// CHECK-LABEL: func.func @gather_nd_batch
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[2, 3], [4, 5]]> : tensor<2x2xi32>
// CHECK-NEXT: return %[[C]]
func.func @gather_nd_batch() -> tensor<2x2xi32> {
  %data = cleave.constant dense<[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]> : tensor<2x2x2xi32>
  %ids = cleave.constant dense<[[-1], [0]]> : tensor<2x1xi64>
  %0 = cleave.gather_nd %data, %ids {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// CHECK-LABEL: func.func @gather_nd_elements
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[3, 0]> : tensor<2xi32>
func.func @gather_nd_elements() -> tensor<2xi32> {
  %data = cleave.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi32>
  %ids = cleave.constant dense<[[1, 1], [0, -2]]> : tensor<2x2xi32>
  %0 = cleave.gather_nd %data, %ids : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// CHECK-LABEL: func.func @gather_nd_out_of_range
// CHECK: cleave.gather_nd
func.func @gather_nd_out_of_range() -> tensor<2xi32> {
  %data = cleave.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi32>
  %ids = cleave.constant dense<[[1, 1], [0, 2]]> : tensor<2x2xi64>
  %0 = cleave.gather_nd %data, %ids : (tensor<2x2xi32>, tensor<2x2xi64>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// CHECK-LABEL: func.func @scatter_nd_reductions
// CHECK-DAG: cleave.constant dense<[7, 2, 9, 4]> : tensor<4xi32>
// CHECK-DAG: cleave.constant dense<[1, 32, 3, 34]> : tensor<4xi32>
// CHECK-DAG: cleave.constant dense<[1, 400, 3, 120]> : tensor<4xi32>
// CHECK-DAG: cleave.constant dense<[1, 20, 3, 30]> : tensor<4xi32>
// CHECK-DAG: cleave.constant dense<[1, -5, 3, 4]> : tensor<4xi32>
// CHECK-NOT: cleave.scatter_nd
func.func @scatter_nd_reductions() -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %data = cleave.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %two = cleave.constant dense<[[0], [2]]> : tensor<2x1xi64>
  %u2 = cleave.constant dense<[7, 9]> : tensor<2xi32>
  %dup = cleave.constant dense<[[1], [1], [-1]]> : tensor<3x1xi64>
  %u3 = cleave.constant dense<[10, 20, 30]> : tensor<3xi32>
  %v3 = cleave.constant dense<[0, -5, 100]> : tensor<3xi32>
  %0 = cleave.scatter_nd %data, %two, %u2 : (tensor<4xi32>, tensor<2x1xi64>, tensor<2xi32>) -> tensor<4xi32>
  %1 = cleave.scatter_nd %data, %dup, %u3 {reduction = "add"} : (tensor<4xi32>, tensor<3x1xi64>, tensor<3xi32>) -> tensor<4xi32>
  %2 = cleave.scatter_nd %data, %dup, %u3 {reduction = "mul"} : (tensor<4xi32>, tensor<3x1xi64>, tensor<3xi32>) -> tensor<4xi32>
  %3 = cleave.scatter_nd %data, %dup, %u3 {reduction = "max"} : (tensor<4xi32>, tensor<3x1xi64>, tensor<3xi32>) -> tensor<4xi32>
  %4 = cleave.scatter_nd %data, %dup, %v3 {reduction = "min"} : (tensor<4xi32>, tensor<3x1xi64>, tensor<3xi32>) -> tensor<4xi32>
  return %0, %1, %2, %3, %4 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// Float slices: two rows of a 3x2 matrix, the second added twice.
// CHECK-LABEL: func.func @scatter_nd_slices
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[1.500000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00], [5.000000e+00, 7.000000e+00]]> : tensor<3x2xf32>
func.func @scatter_nd_slices() -> tensor<3x2xf32> {
  %data = cleave.constant dense<1.0> : tensor<3x2xf32>
  %ids = cleave.constant dense<[[0], [2], [2]]> : tensor<3x1xi64>
  %upd = cleave.constant dense<[[0.5, 0.0], [1.0, 2.0], [3.0, 4.0]]> : tensor<3x2xf32>
  %0 = cleave.scatter_nd %data, %ids, %upd {reduction = "add"} : (tensor<3x2xf32>, tensor<3x1xi64>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @scatter_nd_out_of_range
// CHECK: cleave.scatter_nd
func.func @scatter_nd_out_of_range() -> tensor<4xi32> {
  %data = cleave.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %ids = cleave.constant dense<[[-5]]> : tensor<1x1xi64>
  %upd = cleave.constant dense<[7]> : tensor<1xi32>
  %0 = cleave.scatter_nd %data, %ids, %upd : (tensor<4xi32>, tensor<1x1xi64>, tensor<1xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @gather_elements
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[1, 1], [4, 3]]> : tensor<2x2xi64>
func.func @gather_elements() -> tensor<2x2xi64> {
  %data = cleave.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %ids = cleave.constant dense<[[0, 0], [1, -2]]> : tensor<2x2xi64>
  %0 = cleave.gather_elements %data, %ids {axis = 1 : i64} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// Indices smaller than data off the axis read its leading block.
// CHECK-LABEL: func.func @gather_elements_axis0
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[4, 2]]> : tensor<1x2xi64>
func.func @gather_elements_axis0() -> tensor<1x2xi64> {
  %data = cleave.constant dense<[[1, 2, 9], [4, 5, 9]]> : tensor<2x3xi64>
  %ids = cleave.constant dense<[[1, 0]]> : tensor<1x2xi64>
  %0 = cleave.gather_elements %data, %ids {axis = 0 : i64} : (tensor<2x3xi64>, tensor<1x2xi64>) -> tensor<1x2xi64>
  return %0 : tensor<1x2xi64>
}

// CHECK-LABEL: func.func @gather_elements_out_of_range
// CHECK: cleave.gather_elements
func.func @gather_elements_out_of_range() -> tensor<2x2xi64> {
  %data = cleave.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %ids = cleave.constant dense<[[0, 0], [1, 2]]> : tensor<2x2xi64>
  %0 = cleave.gather_elements %data, %ids {axis = 1 : i64} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// CHECK-LABEL: func.func @scatter_elements
// CHECK-DAG: cleave.constant dense<{{\[}}[1, 20, 3, 4, 5]]> : tensor<1x5xi32>
// CHECK-DAG: cleave.constant dense<{{\[}}[1, 32, 3, 4, 5]]> : tensor<1x5xi32>
// CHECK-DAG: cleave.constant dense<{{\[}}[1, 2, 3, 4, -7]]> : tensor<1x5xi32>
// CHECK-NOT: cleave.scatter_elements
func.func @scatter_elements() -> (tensor<1x5xi32>, tensor<1x5xi32>, tensor<1x5xi32>) {
  %data = cleave.constant dense<[[1, 2, 3, 4, 5]]> : tensor<1x5xi32>
  %ids = cleave.constant dense<[[1, 1]]> : tensor<1x2xi64>
  %upd = cleave.constant dense<[[10, 20]]> : tensor<1x2xi32>
  %last = cleave.constant dense<[[-1, -1]]> : tensor<1x2xi64>
  %neg = cleave.constant dense<[[-3, -7]]> : tensor<1x2xi32>
  %0 = cleave.scatter_elements %data, %ids, %upd {axis = 1 : i64} : (tensor<1x5xi32>, tensor<1x2xi64>, tensor<1x2xi32>) -> tensor<1x5xi32>
  %1 = cleave.scatter_elements %data, %ids, %upd {axis = 1 : i64, reduction = "add"} : (tensor<1x5xi32>, tensor<1x2xi64>, tensor<1x2xi32>) -> tensor<1x5xi32>
  %2 = cleave.scatter_elements %data, %last, %neg {axis = 1 : i64, reduction = "min"} : (tensor<1x5xi32>, tensor<1x2xi64>, tensor<1x2xi32>) -> tensor<1x5xi32>
  return %0, %1, %2 : tensor<1x5xi32>, tensor<1x5xi32>, tensor<1x5xi32>
}

// CHECK-LABEL: func.func @one_hot
// CHECK-DAG: cleave.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x4xf32>
// CHECK-DAG: cleave.constant dense<{{\[}}[5, 3, 3], [3, 3, 3], [3, 3, 3], [3, 5, 3]]> : tensor<4x3xi64>
func.func @one_hot() -> (tensor<3x4xf32>, tensor<4x3xi64>) {
  %ids = cleave.constant dense<[1, -1, 4]> : tensor<3xi64>
  %ids0 = cleave.constant dense<[0, 3, -5]> : tensor<3xi32>
  %v = cleave.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %w = cleave.constant dense<[3, 5]> : tensor<2xi64>
  %0 = cleave.one_hot %ids, %v {depth = 4 : i64, axis = 1 : i64} : (tensor<3xi64>, tensor<2xf32>) -> tensor<3x4xf32>
  %1 = cleave.one_hot %ids0, %w {depth = 4 : i64, axis = 0 : i64} : (tensor<3xi32>, tensor<2xi64>) -> tensor<4x3xi64>
  return %0, %1 : tensor<3x4xf32>, tensor<4x3xi64>
}

// CHECK-LABEL: func.func @trilu
// CHECK-DAG: cleave.constant dense<{{\[}}[0, 2, 3], [0, 0, 6], [0, 0, 0]]> : tensor<3x3xi32>
// CHECK-DAG: cleave.constant dense<{{\[}}[0, 0, 0], [4, 0, 0], [7, 8, 0]]> : tensor<3x3xi32>
func.func @trilu() -> (tensor<3x3xi32>, tensor<3x3xi32>) {
  %x = cleave.constant dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9]]> : tensor<3x3xi32>
  %0 = cleave.trilu %x {k = 1 : i64, upper = true} : (tensor<3x3xi32>) -> tensor<3x3xi32>
  %1 = cleave.trilu %x {k = -1 : i64, upper = false} : (tensor<3x3xi32>) -> tensor<3x3xi32>
  return %0, %1 : tensor<3x3xi32>, tensor<3x3xi32>
}

// A trilu of a run-time value stays.
// CHECK-LABEL: func.func @trilu_value
// CHECK: cleave.trilu %{{.+}} {upper = false}
func.func @trilu_value(%x: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %0 = cleave.trilu %x {upper = false} : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}
