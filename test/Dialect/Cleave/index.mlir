// RUN: cleave-opt %s | cleave-opt | FileCheck %s
// RUN: cleave-opt %s -mlir-print-op-generic | cleave-opt | FileCheck %s

// Round trip of every op of the indexing family, with result types that
// type inference accepts: batch dimensions of gather_nd appear once, a
// gather_elements result has the indices' shape, scatters keep data's type,
// one_hot inserts its depth at the axis.

// CHECK-LABEL: func.func @gathers
// CHECK-SAME: (%[[D:[^:]+]]: tensor<2x5x8xf32>, %[[I:[^:]+]]: tensor<2x3x1xi64>, %[[T:[^:]+]]: tensor<4x3x2xi32>, %[[X:[^:]+]]: tensor<3x4xf16>, %[[E:[^:]+]]: tensor<3x2xi32>)
func.func @gathers(%d: tensor<2x5x8xf32>, %i: tensor<2x3x1xi64>, %t: tensor<4x3x2xi32>, %x: tensor<3x4xf16>, %e: tensor<3x2xi32>) -> (tensor<2x3x8xf32>, tensor<4x3x8xf32>, tensor<3x2xf16>) {
  // CHECK: cleave.gather_nd %[[D]], %[[I]] {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi64>) -> tensor<2x3x8xf32>
  %0 = cleave.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi64>) -> tensor<2x3x8xf32>
  // Full tuples select elements: the result drops the tuple dimension.
  // CHECK: cleave.gather_nd %[[D]], %[[T]] : (tensor<2x5x8xf32>, tensor<4x3x2xi32>) -> tensor<4x3x8xf32>
  %1 = cleave.gather_nd %d, %t : (tensor<2x5x8xf32>, tensor<4x3x2xi32>) -> tensor<4x3x8xf32>
  // CHECK: cleave.gather_elements %[[X]], %[[E]] {axis = 1 : i64} : (tensor<3x4xf16>, tensor<3x2xi32>) -> tensor<3x2xf16>
  %2 = cleave.gather_elements %x, %e {axis = 1 : i64} : (tensor<3x4xf16>, tensor<3x2xi32>) -> tensor<3x2xf16>
  return %0, %1, %2 : tensor<2x3x8xf32>, tensor<4x3x8xf32>, tensor<3x2xf16>
}

// CHECK-LABEL: func.func @scatters
func.func @scatters(%d: tensor<4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>, %e: tensor<2x4xi64>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  // CHECK: cleave.scatter_nd %{{.+}}, %{{.+}}, %{{.+}} : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %0 = cleave.scatter_nd %d, %i, %u : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  // CHECK: cleave.scatter_nd %{{.+}} {reduction = "mul"}
  %1 = cleave.scatter_nd %d, %i, %u {reduction = "mul"} : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  // CHECK: cleave.scatter_elements %{{.+}} {axis = 0 : i64, reduction = "max"} : (tensor<4x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %2 = cleave.scatter_elements %d, %e, %u {axis = 0 : i64, reduction = "max"} : (tensor<4x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return %0, %1, %2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @one_hot_and_trilu
func.func @one_hot_and_trilu(%ids: tensor<2x3xi64>, %v: tensor<2xi32>, %x: tensor<2x4x5xf32>) -> (tensor<2x10x3xi32>, tensor<2x4x5xf32>) {
  // CHECK: cleave.one_hot %{{.+}}, %{{.+}} {axis = 1 : i64, depth = 10 : i64} : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<2x10x3xi32>
  %0 = cleave.one_hot %ids, %v {depth = 10 : i64, axis = 1 : i64} : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<2x10x3xi32>
  // CHECK: cleave.trilu %{{.+}} {k = -1 : i64} : (tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %1 = cleave.trilu %x {k = -1 : i64, upper = true} : (tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %0, %1 : tensor<2x10x3xi32>, tensor<2x4x5xf32>
}
