// RUN: cleave-opt %s | cleave-opt | FileCheck %s

// Round trip of the selection ops. The verifier checks each written result
// type against the inferred one, so every shape below is a check of type
// inference.

// CHECK-LABEL: func.func @topk_last_axis(
// CHECK:         %values, %indices = cleave.topk %{{.+}} {axis = 1 : i64, k = 2 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
func.func @topk_last_axis(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = cleave.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// CHECK-LABEL: func.func @topk_smallest_inner_axis(
// CHECK:         cleave.topk %{{.+}} {axis = 0 : i64, k = 3 : i64, largest = false} : (tensor<5x2xi64>) -> (tensor<3x2xi64>, tensor<3x2xi64>)
func.func @topk_smallest_inner_axis(%x: tensor<5x2xi64>) -> (tensor<3x2xi64>, tensor<3x2xi64>) {
  %v, %i = cleave.topk %x {axis = 0 : i64, k = 3 : i64, largest = false} : (tensor<5x2xi64>) -> (tensor<3x2xi64>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xi64>, tensor<3x2xi64>
}

// A dynamic axis accepts any k.
// CHECK-LABEL: func.func @topk_dynamic(
// CHECK:         cleave.topk %{{.+}} {axis = 1 : i64, k = 8 : i64} : (tensor<2x?xf16>) -> (tensor<2x8xf16>, tensor<2x8xi64>)
func.func @topk_dynamic(%x: tensor<2x?xf16>) -> (tensor<2x8xf16>, tensor<2x8xi64>) {
  %v, %i = cleave.topk %x {axis = 1 : i64, k = 8 : i64} : (tensor<2x?xf16>) -> (tensor<2x8xf16>, tensor<2x8xi64>)
  return %v, %i : tensor<2x8xf16>, tensor<2x8xi64>
}

// CHECK-LABEL: func.func @arg_max_keepdims(
// CHECK:         cleave.arg_max %{{.+}} {axis = 1 : i64} : (tensor<2x10x3xf32>) -> tensor<2x1x3xi64>
func.func @arg_max_keepdims(%x: tensor<2x10x3xf32>) -> tensor<2x1x3xi64> {
  %0 = cleave.arg_max %x {axis = 1 : i64} : (tensor<2x10x3xf32>) -> tensor<2x1x3xi64>
  return %0 : tensor<2x1x3xi64>
}

// CHECK-LABEL: func.func @arg_min_drop_last(
// CHECK:         cleave.arg_min %{{.+}} {axis = 2 : i64, keepdims = false, select_last_index = true} : (tensor<2x10x3xi32>) -> tensor<2x10xi64>
func.func @arg_min_drop_last(%x: tensor<2x10x3xi32>) -> tensor<2x10xi64> {
  %0 = cleave.arg_min %x {axis = 2 : i64, keepdims = false, select_last_index = true} : (tensor<2x10x3xi32>) -> tensor<2x10xi64>
  return %0 : tensor<2x10xi64>
}

// CHECK-LABEL: func.func @cumsum(
// CHECK:         cleave.cumsum %{{.+}} {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x16xi64>
func.func @cumsum(%x: tensor<2x16xi64>) -> tensor<2x16xi64> {
  %0 = cleave.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x16xi64>
  return %0 : tensor<2x16xi64>
}
