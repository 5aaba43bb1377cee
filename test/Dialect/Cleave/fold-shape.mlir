// RUN: cleave-opt %s -canonicalize -split-input-file | FileCheck %s

// The shape-computation chain of a multi-head attention reshape: the target
// shape [batch, seq, heads, head_dim] is computed from the static input shape
// and folds to one constant.

// CHECK-LABEL: func.func @attention_reshape_target
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[2, 16, 4, 16]> : tensor<4xi64>
// CHECK-NEXT: return %[[C]] : tensor<4xi64>
func.func @attention_reshape_target(%x: tensor<2x16x64xf32>) -> tensor<4xi64> {
  %s = cleave.shape %x {start = 0 : i64, end = 3 : i64} : (tensor<2x16x64xf32>) -> tensor<3xi64>
  %i0 = cleave.constant dense<0> : tensor<i64>
  %i1 = cleave.constant dense<-2> : tensor<i64>
  %d0 = cleave.gather %s, %i0 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %d1 = cleave.gather %s, %i1 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %u0 = cleave.unsqueeze %d0 {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %u1 = cleave.unsqueeze %d1 {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %heads = cleave.constant dense<[4, 16]> : tensor<2xi64>
  %target = cleave.concat %u0, %u1, %heads {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  return %target : tensor<4xi64>
}

// -----

// The same chain through slice and squeeze of the shape value.

// CHECK-LABEL: func.func @shape_slice_squeeze
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[64, 32]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @shape_slice_squeeze(%x: tensor<2x16x64xf32>) -> tensor<2xi64> {
  %s = cleave.shape %x {start = 0 : i64, end = 3 : i64} : (tensor<2x16x64xf32>) -> tensor<3xi64>
  %last = cleave.slice %s {starts = array<i64: 2>, ends = array<i64: 3>, steps = array<i64: 1>} : (tensor<3xi64>) -> tensor<1xi64>
  %scalar = cleave.squeeze %last {axes = array<i64: 0>} : (tensor<1xi64>) -> tensor<i64>
  %u = cleave.unsqueeze %scalar {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %c = cleave.constant dense<32> : tensor<1xi64>
  %r = cleave.concat %u, %c {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// Only the selected dimensions need to be static.

// CHECK-LABEL: func.func @shape_partly_dynamic
// CHECK-DAG: %[[STATIC:.+]] = cleave.constant dense<[16, 64]> : tensor<2xi64>
// CHECK-DAG: %[[DYN:.+]] = cleave.shape %{{.+}} {end = 2 : i64, start = 0 : i64}
// CHECK: return %[[STATIC]], %[[DYN]]
func.func @shape_partly_dynamic(%x: tensor<?x16x64xf32>) -> (tensor<2xi64>, tensor<2xi64>) {
  %0 = cleave.shape %x {start = 1 : i64, end = 3 : i64} : (tensor<?x16x64xf32>) -> tensor<2xi64>
  %1 = cleave.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<?x16x64xf32>) -> tensor<2xi64>
  return %0, %1 : tensor<2xi64>, tensor<2xi64>
}

// -----

// A large ConstantOfShape folds to a splat, never to a dense buffer.

// CHECK-LABEL: func.func @constant_of_shape_splat
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<0.000000e+00> : tensor<1024x1024xf32>
// CHECK-NEXT: return %[[C]]
func.func @constant_of_shape_splat() -> tensor<1024x1024xf32> {
  %s = cleave.constant dense<[1024, 1024]> : tensor<2xi64>
  %0 = cleave.constant_of_shape %s {value = 0.0 : f32} : (tensor<2xi64>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape_dynamic
// CHECK: cleave.constant_of_shape
func.func @constant_of_shape_dynamic(%s: tensor<2xi64>) -> tensor<?x8xi1> {
  %0 = cleave.constant_of_shape %s {value = true} : (tensor<2xi64>) -> tensor<?x8xi1>
  return %0 : tensor<?x8xi1>
}

// -----

// CHECK-LABEL: func.func @range_int
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[1, 4, 7]> : tensor<3xi32>
// CHECK-NEXT: return %[[C]]
func.func @range_int() -> tensor<3xi32> {
  %start = cleave.constant dense<1> : tensor<i32>
  %limit = cleave.constant dense<10> : tensor<i32>
  %delta = cleave.constant dense<3> : tensor<i32>
  %0 = cleave.range %start, %limit, %delta : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @range_negative_delta
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[5, 3, 1]> : tensor<3xi64>
func.func @range_negative_delta() -> tensor<3xi64> {
  %start = cleave.constant dense<5> : tensor<i64>
  %limit = cleave.constant dense<0> : tensor<i64>
  %delta = cleave.constant dense<-2> : tensor<i64>
  %0 = cleave.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @range_float
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[0.000000e+00, 2.500000e-01, 5.000000e-01, 7.500000e-01]> : tensor<4xf32>
func.func @range_float() -> tensor<4xf32> {
  %start = cleave.constant dense<0.0> : tensor<f32>
  %limit = cleave.constant dense<1.0> : tensor<f32>
  %delta = cleave.constant dense<0.25> : tensor<f32>
  %0 = cleave.range %start, %limit, %delta : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Above 65536 elements a range stays an op.

// CHECK-LABEL: func.func @range_too_large
// CHECK: cleave.range
func.func @range_too_large() -> tensor<100000xi64> {
  %start = cleave.constant dense<0> : tensor<i64>
  %limit = cleave.constant dense<100000> : tensor<i64>
  %delta = cleave.constant dense<1> : tensor<i64>
  %0 = cleave.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<100000xi64>
  return %0 : tensor<100000xi64>
}

// -----

// CHECK-LABEL: func.func @range_not_constant
// CHECK: cleave.range
func.func @range_not_constant(%limit: tensor<i64>) -> tensor<?xi64> {
  %start = cleave.constant dense<0> : tensor<i64>
  %delta = cleave.constant dense<1> : tensor<i64>
  %0 = cleave.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// CHECK-LABEL: func.func @reshape_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<2x16xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_same_type(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %0 = cleave.reshape %x : tensor<2x16xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x64xf32>)
// CHECK-NEXT: %[[R:.+]] = cleave.reshape %[[X]] : tensor<2x16x64xf32> -> tensor<32x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x16x64xf32>) -> tensor<32x64xf32> {
  %0 = cleave.reshape %x : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %1 = cleave.reshape %0 : tensor<2x16x4x16xf32> -> tensor<32x64xf32>
  return %1 : tensor<32x64xf32>
}

// -----

// A reshape reads past any reshape-like producer; a round trip vanishes.

// CHECK-LABEL: func.func @reshape_of_views
// CHECK-SAME: (%[[X:.+]]: tensor<1x64x1x1xf32>, %[[Y:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[R:.+]] = cleave.reshape %[[X]] : tensor<1x64x1x1xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[R]], %[[Y]]
func.func @reshape_of_views(%x: tensor<1x64x1x1xf32>, %y: tensor<16xf32>) -> (tensor<8x8xf32>, tensor<16xf32>) {
  %0 = cleave.flatten %x {axis = 1 : i64} : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
  %1 = cleave.reshape %0 : tensor<1x64xf32> -> tensor<8x8xf32>
  %2 = cleave.unsqueeze %y {axes = array<i64: 0>} : (tensor<16xf32>) -> tensor<1x16xf32>
  %3 = cleave.reshape %2 : tensor<1x16xf32> -> tensor<16xf32>
  return %1, %3 : tensor<8x8xf32>, tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf16>
// CHECK-NEXT: return %[[C]]
func.func @reshape_constant() -> tensor<2x3xf16> {
  %c = cleave.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf16>
  %0 = cleave.reshape %c : tensor<6xf16> -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// A non-splat constant above the folding limit (4096 elements) is not
// duplicated by a reshape; the range that built it folds (it is under the
// range limit).

// CHECK-LABEL: func.func @reshape_large_constant
// CHECK: %[[C:.+]] = cleave.constant dense<"0x{{[0-9A-F]+}}"> : tensor<8192xi64>
// CHECK-NEXT: %[[R:.+]] = cleave.reshape %[[C]] : tensor<8192xi64> -> tensor<64x128xi64>
// CHECK-NEXT: return %[[R]]
func.func @reshape_large_constant() -> tensor<64x128xi64> {
  %start = cleave.constant dense<0> : tensor<i64>
  %limit = cleave.constant dense<8192> : tensor<i64>
  %delta = cleave.constant dense<1> : tensor<i64>
  %0 = cleave.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8192xi64>
  %1 = cleave.reshape %0 : tensor<8192xi64> -> tensor<64x128xi64>
  return %1 : tensor<64x128xi64>
}

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = cleave.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_compose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4x5xf32>)
// CHECK-NEXT: %[[T:.+]] = cleave.transpose %[[X]] {perm = array<i64: 2, 0, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<4x2x5x3xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_compose(%x: tensor<2x3x4x5xf32>) -> tensor<4x2x5x3xf32> {
  %0 = cleave.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x4x5xf32>) -> tensor<2x4x3x5xf32>
  %1 = cleave.transpose %0 {perm = array<i64: 1, 0, 3, 2>} : (tensor<2x4x3x5xf32>) -> tensor<4x2x5x3xf32>
  return %1 : tensor<4x2x5x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = cleave.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = cleave.transpose %0 {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_constant
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
// CHECK-NEXT: return %[[C]]
func.func @transpose_constant() -> tensor<3x2xi32> {
  %c = cleave.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %0 = cleave.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// CHECK-LABEL: func.func @transpose_constant_3d
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}{{\[}}[0, 3], [6, 9]], {{\[}}[1, 4], [7, 10]], {{\[}}[2, 5], [8, 11]]]> : tensor<3x2x2xi64>
func.func @transpose_constant_3d() -> tensor<3x2x2xi64> {
  %c = cleave.constant dense<[[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [9, 10, 11]]]> : tensor<2x2x3xi64>
  %0 = cleave.transpose %c {perm = array<i64: 2, 0, 1>} : (tensor<2x2x3xi64>) -> tensor<3x2x2xi64>
  return %0 : tensor<3x2x2xi64>
}

// -----

// CHECK-LABEL: func.func @transpose_large_splat
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<1.000000e+00> : tensor<512x256xbf16>
// CHECK-NEXT: return %[[C]]
func.func @transpose_large_splat() -> tensor<512x256xbf16> {
  %c = cleave.constant dense<1.0> : tensor<256x512xbf16>
  %0 = cleave.transpose %c {perm = array<i64: 1, 0>} : (tensor<256x512xbf16>) -> tensor<512x256xbf16>
  return %0 : tensor<512x256xbf16>
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze_constants
// CHECK-DAG: %[[S:.+]] = cleave.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[U:.+]] = cleave.constant dense<{{\[}}{{\[}}[7]], {{\[}}[8]]]> : tensor<2x1x1xui8>
// CHECK: return %[[S]], %[[U]]
func.func @squeeze_unsqueeze_constants() -> (tensor<2xi1>, tensor<2x1x1xui8>) {
  %b = cleave.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %0 = cleave.squeeze %b {axes = array<i64: 1>} : (tensor<2x1xi1>) -> tensor<2xi1>
  %u = cleave.constant dense<[7, 8]> : tensor<2xui8>
  %1 = cleave.unsqueeze %u {axes = array<i64: 1, 2>} : (tensor<2xui8>) -> tensor<2x1x1xui8>
  return %0, %1 : tensor<2xi1>, tensor<2x1x1xui8>
}

// -----

// CHECK-LABEL: func.func @squeeze_nothing
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @squeeze_nothing(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = cleave.squeeze %x {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @expand_constants
// CHECK-DAG: %[[DENSE:.+]] = cleave.constant dense<{{\[}}{{\[}}[1, 2, 3], [1, 2, 3]]]> : tensor<1x2x3xi64>
// CHECK-DAG: %[[COL:.+]] = cleave.constant dense<{{\[}}[5, 5, 5], [6, 6, 6]]> : tensor<2x3xi64>
// CHECK-DAG: %[[SPLAT:.+]] = cleave.constant dense<-1.000000e+00> : tensor<64x64x64xf32>
// CHECK: return %[[DENSE]], %[[COL]], %[[SPLAT]]
func.func @expand_constants() -> (tensor<1x2x3xi64>, tensor<2x3xi64>, tensor<64x64x64xf32>) {
  %row = cleave.constant dense<[1, 2, 3]> : tensor<3xi64>
  %0 = cleave.expand %row : tensor<3xi64> -> tensor<1x2x3xi64>
  %col = cleave.constant dense<[[5], [6]]> : tensor<2x1xi64>
  %1 = cleave.expand %col : tensor<2x1xi64> -> tensor<2x3xi64>
  %one = cleave.constant dense<-1.0> : tensor<1x64xf32>
  %2 = cleave.expand %one : tensor<1x64xf32> -> tensor<64x64x64xf32>
  return %0, %1, %2 : tensor<1x2x3xi64>, tensor<2x3xi64>, tensor<64x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @expand_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<4x16xf32>)
// CHECK-NEXT: return %[[X]]
func.func @expand_same_type(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = cleave.expand %x : tensor<4x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @concat_constants_inner_axis
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[1, 2, 9], [3, 4, 9]]> : tensor<2x3xi32>
// CHECK-NEXT: return %[[C]]
func.func @concat_constants_inner_axis() -> tensor<2x3xi32> {
  %a = cleave.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = cleave.constant dense<9> : tensor<2x1xi32>
  %0 = cleave.concat %a, %b {axis = 1 : i64} : (tensor<2x2xi32>, tensor<2x1xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @concat_splats
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<false> : tensor<8192xi1>
// CHECK-NEXT: return %[[C]]
func.func @concat_splats() -> tensor<8192xi1> {
  %a = cleave.constant dense<false> : tensor<4096xi1>
  %0 = cleave.concat %a, %a {axis = 0 : i64} : (tensor<4096xi1>, tensor<4096xi1>) -> tensor<8192xi1>
  return %0 : tensor<8192xi1>
}

// -----

// CHECK-LABEL: func.func @concat_one_operand
// CHECK-SAME: (%[[X:.+]]: tensor<4xi64>)
// CHECK-NEXT: return %[[X]]
func.func @concat_one_operand(%x: tensor<4xi64>) -> tensor<4xi64> {
  %0 = cleave.concat %x {axis = 0 : i64} : (tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @concat_not_constant
// CHECK: cleave.concat
func.func @concat_not_constant(%x: tensor<1xi64>) -> tensor<2xi64> {
  %c = cleave.constant dense<1> : tensor<1xi64>
  %0 = cleave.concat %x, %c {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @slice_everything
// CHECK-SAME: (%[[X:.+]]: tensor<2x1x64xf32>)
// CHECK-NEXT: return %[[X]]
func.func @slice_everything(%x: tensor<2x1x64xf32>) -> tensor<2x1x64xf32> {
  %0 = cleave.slice %x {starts = array<i64: 0, 0, 0>, ends = array<i64: 2, -1, 64>, steps = array<i64: 1, -1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x64xf32>
  return %0 : tensor<2x1x64xf32>
}

// -----

// A reversal has the operand's type but is not the operand.

// CHECK-LABEL: func.func @slice_reverse
// CHECK: cleave.slice
func.func @slice_reverse(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %0 = cleave.slice %x {starts = array<i64: 0, 63>, ends = array<i64: 2, -1>, steps = array<i64: 1, -1>} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

// CHECK-LABEL: func.func @slice_constant
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[7, 5], [3, 1]]> : tensor<2x2xi64>
// CHECK-NEXT: return %[[C]]
func.func @slice_constant() -> tensor<2x2xi64> {
  %c = cleave.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>
  %0 = cleave.slice %c {starts = array<i64: 1, 3>, ends = array<i64: -1, 0>, steps = array<i64: -1, -2>} : (tensor<2x4xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func.func @gather_constant_inner_axis
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}{{\[}}[2, 0], [0, 2]], {{\[}}[5, 3], [3, 5]]]> : tensor<2x2x2xi32>
// CHECK-NEXT: return %[[C]]
func.func @gather_constant_inner_axis() -> tensor<2x2x2xi32> {
  %data = cleave.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>
  %ids = cleave.constant dense<[[-1, 0], [0, 2]]> : tensor<2x2xi32>
  %0 = cleave.gather %data, %ids {axis = 1 : i64} : (tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x2x2xi32>
  return %0 : tensor<2x2x2xi32>
}

// -----

// CHECK-LABEL: func.func @gather_splat_table
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<5.000000e-01> : tensor<2x16x64xf32>
// CHECK-NEXT: return %[[C]]
func.func @gather_splat_table(%ids: tensor<2x16xi64>) -> tensor<2x16x64xf32> {
  %table = cleave.constant dense<0.5> : tensor<1000x64xf32>
  %0 = cleave.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

// An out-of-range index is a run-time error, not folded.

// CHECK-LABEL: func.func @gather_out_of_range
// CHECK: cleave.gather
func.func @gather_out_of_range() -> tensor<i64> {
  %data = cleave.constant dense<[1, 2, 3]> : tensor<3xi64>
  %i = cleave.constant dense<3> : tensor<i64>
  %0 = cleave.gather %data, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Weights are never folded or read.

// CHECK-LABEL: func.func @weight_stays
// CHECK-NEXT: %[[W:.+]] = cleave.weight "emb"
// CHECK-NEXT: %[[T:.+]] = cleave.transpose %[[W]]
// CHECK-NEXT: return %[[T]]
func.func @weight_stays() -> tensor<64x1000xf32> {
  %w = cleave.weight "emb" {file = "/nonexistent/model.onnx", offset = 0 : i64, length = 256000 : i64} : tensor<1000x64xf32>
  %0 = cleave.transpose %w {perm = array<i64: 1, 0>} : (tensor<1000x64xf32>) -> tensor<64x1000xf32>
  return %0 : tensor<64x1000xf32>
}
