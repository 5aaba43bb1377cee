// RUN: cleave-opt %s | cleave-opt | FileCheck %s
// RUN: cleave-opt %s -mlir-print-op-generic | cleave-opt | FileCheck %s

// Round trip of every op of the shape / data-movement family.

// CHECK-LABEL: func.func @constant_and_weight
func.func @constant_and_weight() -> (tensor<4xi64>, tensor<64x256xf32>, tensor<3xi1>) {
  // CHECK: %[[C:.+]] = cleave.constant dense<[2, 16, 4, 16]> : tensor<4xi64>
  %c = cleave.constant dense<[2, 16, 4, 16]> : tensor<4xi64>
  // CHECK: %[[W:.+]] = cleave.weight "fc1.weight"
  // CHECK-SAME: file = "/models/gpt.onnx.data"
  // CHECK-SAME: length = 65536 : i64
  // CHECK-SAME: offset = 0 : i64
  // CHECK-SAME: : tensor<64x256xf32>
  %w = cleave.weight "fc1.weight" {file = "/models/gpt.onnx.data", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  // CHECK: %[[B:.+]] = cleave.weight "mask" {{.*}}length = 3 : i64, offset = 128 : i64} : tensor<3xi1>
  %b = cleave.weight "mask" {file = "/models/m.onnx", offset = 128 : i64, length = 3 : i64} : tensor<3xi1>
  // CHECK: return %[[C]], %[[W]], %[[B]]
  return %c, %w, %b : tensor<4xi64>, tensor<64x256xf32>, tensor<3xi1>
}

// CHECK-LABEL: func.func @shape_ops
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x?x64xf32>
// CHECK-SAME: %[[S:[^:]+]]: tensor<2xi64>
func.func @shape_ops(%x: tensor<2x?x64xf32>, %s: tensor<2xi64>, %i: tensor<i64>) -> (tensor<2xi64>, tensor<2x8xf32>, tensor<?xi64>) {
  // CHECK: cleave.shape %[[X]] {end = 3 : i64, start = 1 : i64} : (tensor<2x?x64xf32>) -> tensor<2xi64>
  %0 = cleave.shape %x {start = 1 : i64, end = 3 : i64} : (tensor<2x?x64xf32>) -> tensor<2xi64>
  // CHECK: cleave.constant_of_shape %[[S]] {value = 0.000000e+00 : f32} : (tensor<2xi64>) -> tensor<2x8xf32>
  %1 = cleave.constant_of_shape %s {value = 0.000000e+00 : f32} : (tensor<2xi64>) -> tensor<2x8xf32>
  // CHECK: cleave.range %{{.+}}, %{{.+}}, %{{.+}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %2 = cleave.range %i, %i, %i : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0, %1, %2 : tensor<2xi64>, tensor<2x8xf32>, tensor<?xi64>
}

// CHECK-LABEL: func.func @reshaping
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x16x64xf32>
func.func @reshaping(%x: tensor<2x16x64xf32>, %y: tensor<1x64x1x1xf32>, %z: tensor<1x16xf32>) {
  // CHECK: cleave.reshape %[[X]] : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %0 = cleave.reshape %x : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  // CHECK: cleave.flatten %{{.+}} {axis = 1 : i64} : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
  %1 = cleave.flatten %y {axis = 1 : i64} : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
  // CHECK: cleave.flatten %{{.+}} {axis = 0 : i64} : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
  %2 = cleave.flatten %y {axis = 0 : i64} : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
  // CHECK: cleave.transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
  %3 = cleave.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
  // CHECK: cleave.squeeze %{{.+}} {axes = array<i64: 0>} : (tensor<1x16xf32>) -> tensor<16xf32>
  %4 = cleave.squeeze %z {axes = array<i64: 0>} : (tensor<1x16xf32>) -> tensor<16xf32>
  // CHECK: cleave.unsqueeze %{{.+}} {axes = array<i64: 0, 2>} : (tensor<16xf32>) -> tensor<1x16x1xf32>
  %5 = cleave.unsqueeze %4 {axes = array<i64: 0, 2>} : (tensor<16xf32>) -> tensor<1x16x1xf32>
  // CHECK: cleave.expand %{{.+}} : tensor<1x16xf32> -> tensor<3x4x16xf32>
  %6 = cleave.expand %z : tensor<1x16xf32> -> tensor<3x4x16xf32>
  // CHECK: cleave.tile %{{.+}} {repeats = array<i64: 2, 1>} : (tensor<1x16xf32>) -> tensor<2x16xf32>
  %7 = cleave.tile %z {repeats = array<i64: 2, 1>} : (tensor<1x16xf32>) -> tensor<2x16xf32>
  return
}

// CHECK-LABEL: func.func @joining
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x?xi64>
// CHECK-SAME: %[[B:[^:]+]]: tensor<?x3xi64>
func.func @joining(%a: tensor<2x?xi64>, %b: tensor<?x3xi64>, %x: tensor<2x16x192xf32>) {
  // The dynamic dimension of one operand takes the static size of the other.
  // CHECK: cleave.concat %[[A]], %[[B]] {axis = 0 : i64} : (tensor<2x?xi64>, tensor<?x3xi64>) -> tensor<?x3xi64>
  %0 = cleave.concat %a, %b {axis = 0 : i64} : (tensor<2x?xi64>, tensor<?x3xi64>) -> tensor<?x3xi64>
  // CHECK: %{{.+}}:3 = cleave.split %{{.+}} {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<2x16x192xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>)
  %q, %k, %v = cleave.split %x {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<2x16x192xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>)
  // CHECK: cleave.split %{{.+}} {axis = 1 : i64, sizes = array<i64: 10, 6>} : (tensor<2x16x192xf32>) -> (tensor<2x10x192xf32>, tensor<2x6x192xf32>)
  %s:2 = cleave.split %x {axis = 1 : i64, sizes = array<i64: 10, 6>} : (tensor<2x16x192xf32>) -> (tensor<2x10x192xf32>, tensor<2x6x192xf32>)
  return
}

// CHECK-LABEL: func.func @slicing
func.func @slicing(%x: tensor<2x64xf32>, %t: tensor<1000x64xf32>, %ids: tensor<2x16xi64>, %j: tensor<i32>) {
  // CHECK: cleave.slice %{{.+}} {ends = array<i64: 2, 32>, starts = array<i64: 0, 0>, steps = array<i64: 1, 2>} : (tensor<2x64xf32>) -> tensor<2x16xf32>
  %0 = cleave.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 32>, steps = array<i64: 1, 2>} : (tensor<2x64xf32>) -> tensor<2x16xf32>
  // Reversal of the last dimension: start at dim - 1, end before index 0.
  // CHECK: cleave.slice %{{.+}} {ends = array<i64: 2, -1>, starts = array<i64: 0, 63>, steps = array<i64: 1, -1>} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %1 = cleave.slice %x {starts = array<i64: 0, 63>, ends = array<i64: 2, -1>, steps = array<i64: 1, -1>} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // An empty slice: end before start with a positive step.
  // CHECK: cleave.slice %{{.+}} -> tensor<0x64xf32>
  %2 = cleave.slice %x {starts = array<i64: 2, 0>, ends = array<i64: 1, 64>, steps = array<i64: 1, 1>} : (tensor<2x64xf32>) -> tensor<0x64xf32>
  // CHECK: cleave.gather %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  %3 = cleave.gather %t, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  // CHECK: cleave.gather %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<1000x64xf32>, tensor<i32>) -> tensor<1000xf32>
  %4 = cleave.gather %t, %j {axis = 1 : i64} : (tensor<1000x64xf32>, tensor<i32>) -> tensor<1000xf32>
  return
}

// CHECK-LABEL: func.func @padding_and_resizing
func.func @padding_and_resizing(%x: tensor<2x8xf32>, %y: tensor<1x8x4x4xf32>, %z: tensor<1x3x5x5xf16>) {
  // Default-valued attributes are elided.
  // CHECK: cleave.pad %{{.+}} {pads = array<i64: 0, 1, 0, 1>} : (tensor<2x8xf32>) -> tensor<2x10xf32>
  %0 = cleave.pad %x {pads = array<i64: 0, 1, 0, 1>, mode = "constant", value = 0.000000e+00 : f64} : (tensor<2x8xf32>) -> tensor<2x10xf32>
  // CHECK: cleave.pad %{{.+}} {mode = "reflect", pads = array<i64: 1, 2, 3, 0>} : (tensor<2x8xf32>) -> tensor<6x10xf32>
  %1 = cleave.pad %x {pads = array<i64: 1, 2, 3, 0>, mode = "reflect"} : (tensor<2x8xf32>) -> tensor<6x10xf32>
  // CHECK: cleave.pad %{{.+}} {mode = "edge", pads = array<i64: 0, 0, 0, 2>, value = 1.500000e+00 : f64} : (tensor<2x8xf32>) -> tensor<2x10xf32>
  %4 = cleave.pad %x {pads = array<i64: 0, 0, 0, 2>, mode = "edge", value = 1.5 : f64} : (tensor<2x8xf32>) -> tensor<2x10xf32>
  // CHECK: cleave.resize %{{.+}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  %2 = cleave.resize %y {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  // A scale stored as size / input size (7 / 5) sizes the output 7.
  // CHECK: cleave.resize %{{.+}} {coordinate_transformation_mode = "align_corners", mode = "linear", scales = array<f64: 1.000000e+00, 1.000000e+00, 1.400000e+00, 1.400000e+00>} : tensor<1x3x5x5xf16> -> tensor<1x3x7x7xf16>
  %3 = cleave.resize %z {scales = array<f64: 1.0, 1.0, 1.4, 1.4>, mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x3x5x5xf16> -> tensor<1x3x7x7xf16>
  // Sizes that keep the aspect ratio round: 5 * 1.7 = 8.5 gives 9.
  // CHECK: cleave.resize %{{.+}} {mode = "cubic", scales = array<f64: 1.000000e+00, 1.000000e+00, 1.700000e+00, 1.700000e+00>} : tensor<1x3x5x5xf16> -> tensor<1x3x9x9xf16>
  %5 = cleave.resize %z {scales = array<f64: 1.0, 1.0, 1.7, 1.7>, mode = "cubic"} : tensor<1x3x5x5xf16> -> tensor<1x3x9x9xf16>
  return
}
