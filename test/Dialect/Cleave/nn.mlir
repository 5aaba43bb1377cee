// RUN: cleave-opt %s | cleave-opt | FileCheck %s

// Round trip of every neural-network op. The verifier checks each written
// result type against the inferred one, so every shape below is a check of
// type inference (against the ONNX operator semantics).

// CHECK-LABEL: func.func @matmul_3d_2d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x16x64xf32>, %[[A1:[^:]+]]: tensor<64x256xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.matmul %[[A0]], %[[A1]] : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
// CHECK:         return %[[R]] : tensor<2x16x256xf32>
func.func @matmul_3d_2d(%a0: tensor<2x16x64xf32>, %a1: tensor<64x256xf32>) -> tensor<2x16x256xf32> {
  %0 = cleave.matmul %a0, %a1 : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
  return %0 : tensor<2x16x256xf32>
}

// CHECK-LABEL: func.func @matmul_batch_broadcast(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<4x1x8x16xf32>, %[[A1:[^:]+]]: tensor<3x16x5xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.matmul %[[A0]], %[[A1]] : (tensor<4x1x8x16xf32>, tensor<3x16x5xf32>) -> tensor<4x3x8x5xf32>
// CHECK:         return %[[R]] : tensor<4x3x8x5xf32>
func.func @matmul_batch_broadcast(%a0: tensor<4x1x8x16xf32>, %a1: tensor<3x16x5xf32>) -> tensor<4x3x8x5xf32> {
  %0 = cleave.matmul %a0, %a1 : (tensor<4x1x8x16xf32>, tensor<3x16x5xf32>) -> tensor<4x3x8x5xf32>
  return %0 : tensor<4x3x8x5xf32>
}

// CHECK-LABEL: func.func @matmul_vector_lhs(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<16xf32>, %[[A1:[^:]+]]: tensor<2x16x5xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.matmul %[[A0]], %[[A1]] : (tensor<16xf32>, tensor<2x16x5xf32>) -> tensor<2x5xf32>
// CHECK:         return %[[R]] : tensor<2x5xf32>
func.func @matmul_vector_lhs(%a0: tensor<16xf32>, %a1: tensor<2x16x5xf32>) -> tensor<2x5xf32> {
  %0 = cleave.matmul %a0, %a1 : (tensor<16xf32>, tensor<2x16x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @matmul_vector_rhs(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x8x16xf32>, %[[A1:[^:]+]]: tensor<16xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.matmul %[[A0]], %[[A1]] : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8xf32>
// CHECK:         return %[[R]] : tensor<2x8xf32>
func.func @matmul_vector_rhs(%a0: tensor<2x8x16xf32>, %a1: tensor<16xf32>) -> tensor<2x8xf32> {
  %0 = cleave.matmul %a0, %a1 : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @matmul_dot(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<16xf32>, %[[A1:[^:]+]]: tensor<16xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.matmul %[[A0]], %[[A1]] : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
// CHECK:         return %[[R]] : tensor<f32>
func.func @matmul_dot(%a0: tensor<16xf32>, %a1: tensor<16xf32>) -> tensor<f32> {
  %0 = cleave.matmul %a0, %a1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @matmul_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x8x?xf32>, %[[A1:[^:]+]]: tensor<16x?xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.matmul %[[A0]], %[[A1]] : (tensor<?x8x?xf32>, tensor<16x?xf32>) -> tensor<?x8x?xf32>
// CHECK:         return %[[R]] : tensor<?x8x?xf32>
func.func @matmul_dynamic(%a0: tensor<?x8x?xf32>, %a1: tensor<16x?xf32>) -> tensor<?x8x?xf32> {
  %0 = cleave.matmul %a0, %a1 : (tensor<?x8x?xf32>, tensor<16x?xf32>) -> tensor<?x8x?xf32>
  return %0 : tensor<?x8x?xf32>
}

// CHECK-LABEL: func.func @matmul_dynamic_batch(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x8x16xf16>, %[[A1:[^:]+]]: tensor<3x16x4xf16>)
// CHECK:         %[[R:[^ ,]+]] = cleave.matmul %[[A0]], %[[A1]] : (tensor<?x8x16xf16>, tensor<3x16x4xf16>) -> tensor<3x8x4xf16>
// CHECK:         return %[[R]] : tensor<3x8x4xf16>
func.func @matmul_dynamic_batch(%a0: tensor<?x8x16xf16>, %a1: tensor<3x16x4xf16>) -> tensor<3x8x4xf16> {
  %0 = cleave.matmul %a0, %a1 : (tensor<?x8x16xf16>, tensor<3x16x4xf16>) -> tensor<3x8x4xf16>
  return %0 : tensor<3x8x4xf16>
}

// CHECK-LABEL: func.func @matmul_int(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<4x8xi32>, %[[A1:[^:]+]]: tensor<8x2xi32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.matmul %[[A0]], %[[A1]] : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
// CHECK:         return %[[R]] : tensor<4x2xi32>
func.func @matmul_int(%a0: tensor<4x8xi32>, %a1: tensor<8x2xi32>) -> tensor<4x2xi32> {
  %0 = cleave.matmul %a0, %a1 : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// CHECK-LABEL: func.func @gemm_trans_b_bias(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<4x128xf32>, %[[A1:[^:]+]]: tensor<10x128xf32>, %[[A2:[^:]+]]: tensor<10xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.gemm %[[A0]], %[[A1]], %[[A2]] {trans_b = true} : (tensor<4x128xf32>, tensor<10x128xf32>, tensor<10xf32>) -> tensor<4x10xf32>
// CHECK:         return %[[R]] : tensor<4x10xf32>
func.func @gemm_trans_b_bias(%a0: tensor<4x128xf32>, %a1: tensor<10x128xf32>, %a2: tensor<10xf32>) -> tensor<4x10xf32> {
  %0 = cleave.gemm %a0, %a1, %a2 {trans_b = true} : (tensor<4x128xf32>, tensor<10x128xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// CHECK-LABEL: func.func @gemm_trans_a_column_bias(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<128x4xf32>, %[[A1:[^:]+]]: tensor<128x10xf32>, %[[A2:[^:]+]]: tensor<4x1xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.gemm %[[A0]], %[[A1]], %[[A2]] {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a = true} : (tensor<128x4xf32>, tensor<128x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
// CHECK:         return %[[R]] : tensor<4x10xf32>
func.func @gemm_trans_a_column_bias(%a0: tensor<128x4xf32>, %a1: tensor<128x10xf32>, %a2: tensor<4x1xf32>) -> tensor<4x10xf32> {
  %0 = cleave.gemm %a0, %a1, %a2 {trans_a = true, alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} : (tensor<128x4xf32>, tensor<128x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// CHECK-LABEL: func.func @gemm_scalar_bias_both_transposed(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<8x3xf32>, %[[A1:[^:]+]]: tensor<5x8xf32>, %[[A2:[^:]+]]: tensor<f32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.gemm %[[A0]], %[[A1]], %[[A2]] {trans_a = true, trans_b = true} : (tensor<8x3xf32>, tensor<5x8xf32>, tensor<f32>) -> tensor<3x5xf32>
// CHECK:         return %[[R]] : tensor<3x5xf32>
func.func @gemm_scalar_bias_both_transposed(%a0: tensor<8x3xf32>, %a1: tensor<5x8xf32>, %a2: tensor<f32>) -> tensor<3x5xf32> {
  %0 = cleave.gemm %a0, %a1, %a2 {trans_a = true, trans_b = true} : (tensor<8x3xf32>, tensor<5x8xf32>, tensor<f32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @gemm_no_bias_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x64xf32>, %[[A1:[^:]+]]: tensor<64x32xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.gemm %[[A0]], %[[A1]] : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
// CHECK:         return %[[R]] : tensor<?x32xf32>
func.func @gemm_no_bias_dynamic(%a0: tensor<?x64xf32>, %a1: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %0 = cleave.gemm %a0, %a1 : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// CHECK-LABEL: func.func @conv_1d_strided_padded(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x4x100xf32>, %[[A1:[^:]+]]: tensor<8x4x5xf32>, %[[A2:[^:]+]]: tensor<8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv %[[A0]], %[[A1]], %[[A2]] {dilations = array<i64: 1>, pads = array<i64: 2, 2>, strides = array<i64: 2>} : (tensor<1x4x100xf32>, tensor<8x4x5xf32>, tensor<8xf32>) -> tensor<1x8x50xf32>
// CHECK:         return %[[R]] : tensor<1x8x50xf32>
func.func @conv_1d_strided_padded(%a0: tensor<1x4x100xf32>, %a1: tensor<8x4x5xf32>, %a2: tensor<8xf32>) -> tensor<1x8x50xf32> {
  %0 = cleave.conv %a0, %a1, %a2 {strides = array<i64: 2>, pads = array<i64: 2, 2>, dilations = array<i64: 1>} : (tensor<1x4x100xf32>, tensor<8x4x5xf32>, tensor<8xf32>) -> tensor<1x8x50xf32>
  return %0 : tensor<1x8x50xf32>
}

// CHECK-LABEL: func.func @conv_2d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x3x32x32xf32>, %[[A1:[^:]+]]: tensor<16x3x3x3xf32>, %[[A2:[^:]+]]: tensor<16xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv %[[A0]], %[[A1]], %[[A2]] {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
// CHECK:         return %[[R]] : tensor<1x16x16x16xf32>
func.func @conv_2d(%a0: tensor<1x3x32x32xf32>, %a1: tensor<16x3x3x3xf32>, %a2: tensor<16xf32>) -> tensor<1x16x16x16xf32> {
  %0 = cleave.conv %a0, %a1, %a2 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// CHECK-LABEL: func.func @conv_2d_grouped(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x6x10x10xf32>, %[[A1:[^:]+]]: tensor<4x3x3x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv %[[A0]], %[[A1]] {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x6x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
// CHECK:         return %[[R]] : tensor<2x4x8x8xf32>
func.func @conv_2d_grouped(%a0: tensor<2x6x10x10xf32>, %a1: tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %0 = cleave.conv %a0, %a1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x6x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// CHECK-LABEL: func.func @conv_2d_depthwise(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x32x16x16xf32>, %[[A1:[^:]+]]: tensor<32x1x3x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv %[[A0]], %[[A1]] {dilations = array<i64: 1, 1>, group = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
// CHECK:         return %[[R]] : tensor<1x32x16x16xf32>
func.func @conv_2d_depthwise(%a0: tensor<1x32x16x16xf32>, %a1: tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %0 = cleave.conv %a0, %a1 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 32 : i64} : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
  return %0 : tensor<1x32x16x16xf32>
}

// CHECK-LABEL: func.func @conv_2d_dilated_strided(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x1x20x20xf32>, %[[A1:[^:]+]]: tensor<1x1x3x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv %[[A0]], %[[A1]] {dilations = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 1>} : (tensor<1x1x20x20xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x16xf32>
// CHECK:         return %[[R]] : tensor<1x1x6x16xf32>
func.func @conv_2d_dilated_strided(%a0: tensor<1x1x20x20xf32>, %a1: tensor<1x1x3x3xf32>) -> tensor<1x1x6x16xf32> {
  %0 = cleave.conv %a0, %a1 {strides = array<i64: 3, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 2>} : (tensor<1x1x20x20xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x16xf32>
  return %0 : tensor<1x1x6x16xf32>
}

// CHECK-LABEL: func.func @conv_2d_asymmetric_pads(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x2x10x10xf32>, %[[A1:[^:]+]]: tensor<5x2x3x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv %[[A0]], %[[A1]] {dilations = array<i64: 1, 1>, pads = array<i64: 0, 1, 2, 3>, strides = array<i64: 1, 1>} : (tensor<1x2x10x10xf32>, tensor<5x2x3x3xf32>) -> tensor<1x5x10x12xf32>
// CHECK:         return %[[R]] : tensor<1x5x10x12xf32>
func.func @conv_2d_asymmetric_pads(%a0: tensor<1x2x10x10xf32>, %a1: tensor<5x2x3x3xf32>) -> tensor<1x5x10x12xf32> {
  %0 = cleave.conv %a0, %a1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 1, 2, 3>, dilations = array<i64: 1, 1>} : (tensor<1x2x10x10xf32>, tensor<5x2x3x3xf32>) -> tensor<1x5x10x12xf32>
  return %0 : tensor<1x5x10x12xf32>
}

// CHECK-LABEL: func.func @conv_3d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x2x8x16x16xf32>, %[[A1:[^:]+]]: tensor<4x2x3x3x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv %[[A0]], %[[A1]] {dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 1, 2, 2>} : (tensor<1x2x8x16x16xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x8x8x8xf32>
// CHECK:         return %[[R]] : tensor<1x4x8x8x8xf32>
func.func @conv_3d(%a0: tensor<1x2x8x16x16xf32>, %a1: tensor<4x2x3x3x3xf32>) -> tensor<1x4x8x8x8xf32> {
  %0 = cleave.conv %a0, %a1 {strides = array<i64: 1, 2, 2>, pads = array<i64: 1, 1, 1, 1, 1, 1>, dilations = array<i64: 1, 1, 1>} : (tensor<1x2x8x16x16xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x8x8x8xf32>
  return %0 : tensor<1x4x8x8x8xf32>
}

// CHECK-LABEL: func.func @conv_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x3x?x32xf32>, %[[A1:[^:]+]]: tensor<16x3x3x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv %[[A0]], %[[A1]] {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x3x?x32xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x?x30xf32>
// CHECK:         return %[[R]] : tensor<?x16x?x30xf32>
func.func @conv_dynamic(%a0: tensor<?x3x?x32xf32>, %a1: tensor<16x3x3x3xf32>) -> tensor<?x16x?x30xf32> {
  %0 = cleave.conv %a0, %a1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x3x?x32xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x?x30xf32>
  return %0 : tensor<?x16x?x30xf32>
}

// CHECK-LABEL: func.func @conv_transpose_1d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x8x10xf32>, %[[A1:[^:]+]]: tensor<8x4x2xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv_transpose %[[A0]], %[[A1]] {dilations = array<i64: 1>, output_padding = array<i64: 0>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x20xf32>
// CHECK:         return %[[R]] : tensor<1x4x20xf32>
func.func @conv_transpose_1d(%a0: tensor<1x8x10xf32>, %a1: tensor<8x4x2xf32>) -> tensor<1x4x20xf32> {
  %0 = cleave.conv_transpose %a0, %a1 {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>, group = 1 : i64} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x20xf32>
  return %0 : tensor<1x4x20xf32>
}

// CHECK-LABEL: func.func @conv_transpose_2d_output_padding(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x16x7x7xf32>, %[[A1:[^:]+]]: tensor<16x8x3x3xf32>, %[[A2:[^:]+]]: tensor<8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv_transpose %[[A0]], %[[A1]], %[[A2]] {dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x14x14xf32>
// CHECK:         return %[[R]] : tensor<1x8x14x14xf32>
func.func @conv_transpose_2d_output_padding(%a0: tensor<1x16x7x7xf32>, %a1: tensor<16x8x3x3xf32>, %a2: tensor<8xf32>) -> tensor<1x8x14x14xf32> {
  %0 = cleave.conv_transpose %a0, %a1, %a2 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x14x14xf32>
  return %0 : tensor<1x8x14x14xf32>
}

// CHECK-LABEL: func.func @conv_transpose_2d_asymmetric(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x4x6x6xf32>, %[[A1:[^:]+]]: tensor<4x2x4x4xf32>, %[[A2:[^:]+]]: tensor<2xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv_transpose %[[A0]], %[[A1]], %[[A2]] {dilations = array<i64: 1, 1>, output_padding = array<i64: 2, 1>, pads = array<i64: 1, 2, 0, 1>, strides = array<i64: 3, 2>} : (tensor<1x4x6x6xf32>, tensor<4x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x20x12xf32>
// CHECK:         return %[[R]] : tensor<1x2x20x12xf32>
func.func @conv_transpose_2d_asymmetric(%a0: tensor<1x4x6x6xf32>, %a1: tensor<4x2x4x4xf32>, %a2: tensor<2xf32>) -> tensor<1x2x20x12xf32> {
  %0 = cleave.conv_transpose %a0, %a1, %a2 {strides = array<i64: 3, 2>, pads = array<i64: 1, 2, 0, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 2, 1>} : (tensor<1x4x6x6xf32>, tensor<4x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x20x12xf32>
  return %0 : tensor<1x2x20x12xf32>
}

// CHECK-LABEL: func.func @conv_transpose_2d_grouped(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x8x5x5xf32>, %[[A1:[^:]+]]: tensor<8x2x3x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv_transpose %[[A0]], %[[A1]] {dilations = array<i64: 1, 1>, group = 4 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x7x7xf32>
// CHECK:         return %[[R]] : tensor<1x8x7x7xf32>
func.func @conv_transpose_2d_grouped(%a0: tensor<1x8x5x5xf32>, %a1: tensor<8x2x3x3xf32>) -> tensor<1x8x7x7xf32> {
  %0 = cleave.conv_transpose %a0, %a1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 4 : i64} : (tensor<1x8x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x7x7xf32>
  return %0 : tensor<1x8x7x7xf32>
}

// CHECK-LABEL: func.func @conv_transpose_3d_dilated(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x2x3x4x5xf32>, %[[A1:[^:]+]]: tensor<2x3x2x2x2xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv_transpose %[[A0]], %[[A1]] {dilations = array<i64: 2, 2, 2>, output_padding = array<i64: 0, 0, 0>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x2x3x4x5xf32>, tensor<2x3x2x2x2xf32>) -> tensor<1x3x5x6x7xf32>
// CHECK:         return %[[R]] : tensor<1x3x5x6x7xf32>
func.func @conv_transpose_3d_dilated(%a0: tensor<1x2x3x4x5xf32>, %a1: tensor<2x3x2x2x2xf32>) -> tensor<1x3x5x6x7xf32> {
  %0 = cleave.conv_transpose %a0, %a1 {strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 2, 2, 2>, output_padding = array<i64: 0, 0, 0>} : (tensor<1x2x3x4x5xf32>, tensor<2x3x2x2x2xf32>) -> tensor<1x3x5x6x7xf32>
  return %0 : tensor<1x3x5x6x7xf32>
}

// CHECK-LABEL: func.func @conv_transpose_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x8x?xf32>, %[[A1:[^:]+]]: tensor<8x?x2xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.conv_transpose %[[A0]], %[[A1]] {dilations = array<i64: 1>, group = 2 : i64, output_padding = array<i64: 0>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<?x8x?xf32>, tensor<8x?x2xf32>) -> tensor<?x?x?xf32>
// CHECK:         return %[[R]] : tensor<?x?x?xf32>
func.func @conv_transpose_dynamic(%a0: tensor<?x8x?xf32>, %a1: tensor<8x?x2xf32>) -> tensor<?x?x?xf32> {
  %0 = cleave.conv_transpose %a0, %a1 {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>, group = 2 : i64} : (tensor<?x8x?xf32>, tensor<8x?x2xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @max_pool_2d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x16x32x32xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.max_pool %[[A0]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
// CHECK:         return %[[R]] : tensor<1x16x16x16xf32>
func.func @max_pool_2d(%a0: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> {
  %0 = cleave.max_pool %a0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// CHECK-LABEL: func.func @max_pool_floor_mode(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x3x5x8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.max_pool %[[A0]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 2>, strides = array<i64: 2, 3>} : (tensor<1x3x5x8xf32>) -> tensor<1x3x2x3xf32>
// CHECK:         return %[[R]] : tensor<1x3x2x3xf32>
func.func @max_pool_floor_mode(%a0: tensor<1x3x5x8xf32>) -> tensor<1x3x2x3xf32> {
  %0 = cleave.max_pool %a0 {kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 2>, dilations = array<i64: 1, 1>} : (tensor<1x3x5x8xf32>) -> tensor<1x3x2x3xf32>
  return %0 : tensor<1x3x2x3xf32>
}

// Height rounds up to 3 windows; width would round up to 4, but the fourth
// window would start in the end padding and is dropped.
// CHECK-LABEL: func.func @max_pool_ceil_mode(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x3x5x8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.max_pool %[[A0]] {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 2>, strides = array<i64: 2, 3>} : (tensor<1x3x5x8xf32>) -> tensor<1x3x3x3xf32>
// CHECK:         return %[[R]] : tensor<1x3x3x3xf32>
func.func @max_pool_ceil_mode(%a0: tensor<1x3x5x8xf32>) -> tensor<1x3x3x3xf32> {
  %0 = cleave.max_pool %a0 {kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 2>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x3x5x8xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// CHECK-LABEL: func.func @max_pool_1d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x4x100xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.max_pool %[[A0]] {dilations = array<i64: 1>, kernel_shape = array<i64: 4>, pads = array<i64: 0, 0>, strides = array<i64: 4>} : (tensor<1x4x100xf32>) -> tensor<1x4x25xf32>
// CHECK:         return %[[R]] : tensor<1x4x25xf32>
func.func @max_pool_1d(%a0: tensor<1x4x100xf32>) -> tensor<1x4x25xf32> {
  %0 = cleave.max_pool %a0 {kernel_shape = array<i64: 4>, strides = array<i64: 4>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x4x100xf32>) -> tensor<1x4x25xf32>
  return %0 : tensor<1x4x25xf32>
}

// CHECK-LABEL: func.func @max_pool_3d_dilated(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x4x9x9x9xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.max_pool %[[A0]] {dilations = array<i64: 2, 2, 2>, kernel_shape = array<i64: 3, 3, 3>, pads = array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 2, 2, 2>} : (tensor<2x4x9x9x9xf32>) -> tensor<2x4x4x4x4xf32>
// CHECK:         return %[[R]] : tensor<2x4x4x4x4xf32>
func.func @max_pool_3d_dilated(%a0: tensor<2x4x9x9x9xf32>) -> tensor<2x4x4x4x4xf32> {
  %0 = cleave.max_pool %a0 {kernel_shape = array<i64: 3, 3, 3>, strides = array<i64: 2, 2, 2>, pads = array<i64: 1, 1, 1, 1, 1, 1>, dilations = array<i64: 2, 2, 2>} : (tensor<2x4x9x9x9xf32>) -> tensor<2x4x4x4x4xf32>
  return %0 : tensor<2x4x4x4x4xf32>
}

// CHECK-LABEL: func.func @max_pool_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x16x?x32xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.max_pool %[[A0]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x16x?x32xf32>) -> tensor<?x16x?x16xf32>
// CHECK:         return %[[R]] : tensor<?x16x?x16xf32>
func.func @max_pool_dynamic(%a0: tensor<?x16x?x32xf32>) -> tensor<?x16x?x16xf32> {
  %0 = cleave.max_pool %a0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x16x?x32xf32>) -> tensor<?x16x?x16xf32>
  return %0 : tensor<?x16x?x16xf32>
}

// CHECK-LABEL: func.func @average_pool_2d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x16x32x32xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.average_pool %[[A0]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
// CHECK:         return %[[R]] : tensor<1x16x16x16xf32>
func.func @average_pool_2d(%a0: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> {
  %0 = cleave.average_pool %a0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// CHECK-LABEL: func.func @average_pool_ceil_count_include_pad(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x3x5x8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.average_pool %[[A0]] {ceil_mode = true, count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 2>, strides = array<i64: 2, 3>} : (tensor<1x3x5x8xf32>) -> tensor<1x3x3x3xf32>
// CHECK:         return %[[R]] : tensor<1x3x3x3xf32>
func.func @average_pool_ceil_count_include_pad(%a0: tensor<1x3x5x8xf32>) -> tensor<1x3x3x3xf32> {
  %0 = cleave.average_pool %a0 {kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 2>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : (tensor<1x3x5x8xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// CHECK-LABEL: func.func @average_pool_1d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x8x7xf16>)
// CHECK:         %[[R:[^ ,]+]] = cleave.average_pool %[[A0]] {dilations = array<i64: 1>, kernel_shape = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<2x8x7xf16>) -> tensor<2x8x3xf16>
// CHECK:         return %[[R]] : tensor<2x8x3xf16>
func.func @average_pool_1d(%a0: tensor<2x8x7xf16>) -> tensor<2x8x3xf16> {
  %0 = cleave.average_pool %a0 {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<2x8x7xf16>) -> tensor<2x8x3xf16>
  return %0 : tensor<2x8x3xf16>
}

// CHECK-LABEL: func.func @global_average_pool_2d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x64x7x7xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.global_average_pool %[[A0]] : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>
// CHECK:         return %[[R]] : tensor<1x64x1x1xf32>
func.func @global_average_pool_2d(%a0: tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32> {
  %0 = cleave.global_average_pool %a0 : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>
  return %0 : tensor<1x64x1x1xf32>
}

// CHECK-LABEL: func.func @global_average_pool_3d_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x8x?x4x?xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.global_average_pool %[[A0]] : (tensor<?x8x?x4x?xf32>) -> tensor<?x8x1x1x1xf32>
// CHECK:         return %[[R]] : tensor<?x8x1x1x1xf32>
func.func @global_average_pool_3d_dynamic(%a0: tensor<?x8x?x4x?xf32>) -> tensor<?x8x1x1x1xf32> {
  %0 = cleave.global_average_pool %a0 : (tensor<?x8x?x4x?xf32>) -> tensor<?x8x1x1x1xf32>
  return %0 : tensor<?x8x1x1x1xf32>
}

// CHECK-LABEL: func.func @global_max_pool_1d(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x8x100xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.global_max_pool %[[A0]] : (tensor<2x8x100xf32>) -> tensor<2x8x1xf32>
// CHECK:         return %[[R]] : tensor<2x8x1xf32>
func.func @global_max_pool_1d(%a0: tensor<2x8x100xf32>) -> tensor<2x8x1xf32> {
  %0 = cleave.global_max_pool %a0 : (tensor<2x8x100xf32>) -> tensor<2x8x1xf32>
  return %0 : tensor<2x8x1xf32>
}

// CHECK-LABEL: func.func @global_max_pool_no_spatial(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.global_max_pool %[[A0]] : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK:         return %[[R]] : tensor<2x8xf32>
func.func @global_max_pool_no_spatial(%a0: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = cleave.global_max_pool %a0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @batch_norm(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<1x16x8x8xf32>, %[[A1:[^:]+]]: tensor<16xf32>, %[[A2:[^:]+]]: tensor<16xf32>, %[[A3:[^:]+]]: tensor<16xf32>, %[[A4:[^:]+]]: tensor<16xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.batch_norm %[[A0]], %[[A1]], %[[A2]], %[[A3]], %[[A4]] {epsilon = 1.000000e-03 : f32} : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
// CHECK:         return %[[R]] : tensor<1x16x8x8xf32>
func.func @batch_norm(%a0: tensor<1x16x8x8xf32>, %a1: tensor<16xf32>, %a2: tensor<16xf32>, %a3: tensor<16xf32>, %a4: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %0 = cleave.batch_norm %a0, %a1, %a2, %a3, %a4 {epsilon = 1.000000e-03 : f32} : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// CHECK-LABEL: func.func @batch_norm_dynamic_channels(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<4x?xf32>, %[[A1:[^:]+]]: tensor<8xf32>, %[[A2:[^:]+]]: tensor<8xf32>, %[[A3:[^:]+]]: tensor<8xf32>, %[[A4:[^:]+]]: tensor<?xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.batch_norm %[[A0]], %[[A1]], %[[A2]], %[[A3]], %[[A4]] : (tensor<4x?xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?xf32>) -> tensor<4x?xf32>
// CHECK:         return %[[R]] : tensor<4x?xf32>
func.func @batch_norm_dynamic_channels(%a0: tensor<4x?xf32>, %a1: tensor<8xf32>, %a2: tensor<8xf32>, %a3: tensor<8xf32>, %a4: tensor<?xf32>) -> tensor<4x?xf32> {
  %0 = cleave.batch_norm %a0, %a1, %a2, %a3, %a4 : (tensor<4x?xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// CHECK-LABEL: func.func @instance_norm(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x8x100xf32>, %[[A1:[^:]+]]: tensor<8xf32>, %[[A2:[^:]+]]: tensor<8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.instance_norm %[[A0]], %[[A1]], %[[A2]] : (tensor<2x8x100xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x100xf32>
// CHECK:         return %[[R]] : tensor<2x8x100xf32>
func.func @instance_norm(%a0: tensor<2x8x100xf32>, %a1: tensor<8xf32>, %a2: tensor<8xf32>) -> tensor<2x8x100xf32> {
  %0 = cleave.instance_norm %a0, %a1, %a2 {epsilon = 9.99999974E-6 : f32} : (tensor<2x8x100xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// CHECK-LABEL: func.func @layer_norm_last_axis(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x16x64xf32>, %[[A1:[^:]+]]: tensor<64xf32>, %[[A2:[^:]+]]: tensor<64xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.layer_norm %[[A0]], %[[A1]], %[[A2]] {axis = 2 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK:         return %[[R]] : tensor<2x16x64xf32>
func.func @layer_norm_last_axis(%a0: tensor<2x16x64xf32>, %a1: tensor<64xf32>, %a2: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %0 = cleave.layer_norm %a0, %a1, %a2 {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// CHECK-LABEL: func.func @layer_norm_two_axes_broadcast_scale(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x16x64xf32>, %[[A1:[^:]+]]: tensor<1x64xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.layer_norm %[[A0]], %[[A1]] {axis = 1 : i64} : (tensor<2x16x64xf32>, tensor<1x64xf32>) -> tensor<2x16x64xf32>
// CHECK:         return %[[R]] : tensor<2x16x64xf32>
func.func @layer_norm_two_axes_broadcast_scale(%a0: tensor<2x16x64xf32>, %a1: tensor<1x64xf32>) -> tensor<2x16x64xf32> {
  %0 = cleave.layer_norm %a0, %a1 {axis = 1 : i64} : (tensor<2x16x64xf32>, tensor<1x64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// CHECK-LABEL: func.func @rms_norm_last_axis(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x16x64xf32>, %[[A1:[^:]+]]: tensor<64xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.rms_norm %[[A0]], %[[A1]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK:         return %[[R]] : tensor<2x16x64xf32>
func.func @rms_norm_last_axis(%a0: tensor<2x16x64xf32>, %a1: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %0 = cleave.rms_norm %a0, %a1 {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// CHECK-LABEL: func.func @rms_norm_two_axes_broadcast_scale(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x16x64xf16>, %[[A1:[^:]+]]: tensor<1x64xf16>)
// CHECK:         %[[R:[^ ,]+]] = cleave.rms_norm %[[A0]], %[[A1]] {axis = 1 : i64} : (tensor<2x16x64xf16>, tensor<1x64xf16>) -> tensor<2x16x64xf16>
func.func @rms_norm_two_axes_broadcast_scale(%a0: tensor<2x16x64xf16>, %a1: tensor<1x64xf16>) -> tensor<2x16x64xf16> {
  %0 = cleave.rms_norm %a0, %a1 {axis = 1 : i64} : (tensor<2x16x64xf16>, tensor<1x64xf16>) -> tensor<2x16x64xf16>
  return %0 : tensor<2x16x64xf16>
}

// CHECK-LABEL: func.func @rotary_embedding_forms(
// CHECK-SAME:    %[[X4:[^:]+]]: tensor<2x8x16x64xf32>, %[[X3:[^:]+]]: tensor<2x16x512xf32>, %[[C:[^:]+]]: tensor<128x32xf32>, %[[T:[^:]+]]: tensor<1x16x16xf32>, %[[P:[^:]+]]: tensor<2x16xi32>)
// CHECK:         cleave.rotary_embedding %[[X4]], %[[C]], %[[C]], %[[P]] : (tensor<2x8x16x64xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<2x16xi32>) -> tensor<2x8x16x64xf32>
// CHECK:         cleave.rotary_embedding %[[X3]], %[[T]], %[[T]] {interleaved = true, num_heads = 8 : i64, rotary_embedding_dim = 32 : i64} : (tensor<2x16x512xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>) -> tensor<2x16x512xf32>
func.func @rotary_embedding_forms(%x4: tensor<2x8x16x64xf32>, %x3: tensor<2x16x512xf32>, %c: tensor<128x32xf32>, %t: tensor<1x16x16xf32>, %p: tensor<2x16xi32>) -> (tensor<2x8x16x64xf32>, tensor<2x16x512xf32>) {
  %0 = cleave.rotary_embedding %x4, %c, %c, %p : (tensor<2x8x16x64xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<2x16xi32>) -> tensor<2x8x16x64xf32>
  %1 = cleave.rotary_embedding %x3, %t, %t {interleaved = true, num_heads = 8 : i64, rotary_embedding_dim = 32 : i64} : (tensor<2x16x512xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>) -> tensor<2x16x512xf32>
  return %0, %1 : tensor<2x8x16x64xf32>, tensor<2x16x512xf32>
}

// CHECK-LABEL: func.func @attention_forms(
// CHECK:         cleave.attention %{{.+}}, %{{.+}}, %{{.+}} {is_causal, kv_num_heads = 2 : i64, q_num_heads = 8 : i64, scale = 1.250000e-01 : f32} : (tensor<1x8x16x64xf32>, tensor<1x2x24x64xf32>, tensor<1x2x24x32xf32>) -> tensor<1x8x16x32xf32>
// CHECK:         cleave.attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 5.000000e-01 : f32, softcap = 3.000000e+01 : f32} : (tensor<2x16x256xf16>, tensor<2x24x256xf16>, tensor<2x24x256xf16>, tensor<16x24xi1>) -> tensor<2x16x256xf16>
func.func @attention_forms(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x24x64xf32>, %v: tensor<1x2x24x32xf32>, %q3: tensor<2x16x256xf16>, %k3: tensor<2x24x256xf16>, %m: tensor<16x24xi1>) -> (tensor<1x8x16x32xf32>, tensor<2x16x256xf16>) {
  %0 = cleave.attention %q, %k, %v {is_causal, kv_num_heads = 2 : i64, q_num_heads = 8 : i64, scale = 0.125 : f32} : (tensor<1x8x16x64xf32>, tensor<1x2x24x64xf32>, tensor<1x2x24x32xf32>) -> tensor<1x8x16x32xf32>
  %1 = cleave.attention %q3, %k3, %k3, %m {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 0.5 : f32, softcap = 30.0 : f32} : (tensor<2x16x256xf16>, tensor<2x24x256xf16>, tensor<2x24x256xf16>, tensor<16x24xi1>) -> tensor<2x16x256xf16>
  return %0, %1 : tensor<1x8x16x32xf32>, tensor<2x16x256xf16>
}

// CHECK-LABEL: func.func @layer_norm_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x?x768xbf16>, %[[A1:[^:]+]]: tensor<768xbf16>, %[[A2:[^:]+]]: tensor<768xbf16>)
// CHECK:         %[[R:[^ ,]+]] = cleave.layer_norm %[[A0]], %[[A1]], %[[A2]] {axis = 2 : i64} : (tensor<?x?x768xbf16>, tensor<768xbf16>, tensor<768xbf16>) -> tensor<?x?x768xbf16>
// CHECK:         return %[[R]] : tensor<?x?x768xbf16>
func.func @layer_norm_dynamic(%a0: tensor<?x?x768xbf16>, %a1: tensor<768xbf16>, %a2: tensor<768xbf16>) -> tensor<?x?x768xbf16> {
  %0 = cleave.layer_norm %a0, %a1, %a2 {axis = 2 : i64} : (tensor<?x?x768xbf16>, tensor<768xbf16>, tensor<768xbf16>) -> tensor<?x?x768xbf16>
  return %0 : tensor<?x?x768xbf16>
}

// CHECK-LABEL: func.func @group_norm(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x8x10x10xf32>, %[[A1:[^:]+]]: tensor<8xf32>, %[[A2:[^:]+]]: tensor<8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.group_norm %[[A0]], %[[A1]], %[[A2]] {num_groups = 4 : i64} : (tensor<2x8x10x10xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x10x10xf32>
// CHECK:         return %[[R]] : tensor<2x8x10x10xf32>
func.func @group_norm(%a0: tensor<2x8x10x10xf32>, %a1: tensor<8xf32>, %a2: tensor<8xf32>) -> tensor<2x8x10x10xf32> {
  %0 = cleave.group_norm %a0, %a1, %a2 {num_groups = 4 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x8x10x10xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x10x10xf32>
  return %0 : tensor<2x8x10x10xf32>
}

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x4x16x16xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.softmax %[[A0]] {axis = 3 : i64} : tensor<2x4x16x16xf32>
// CHECK:         return %[[R]] : tensor<2x4x16x16xf32>
func.func @softmax(%a0: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = cleave.softmax %a0 {axis = 3 : i64} : tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// CHECK-LABEL: func.func @softmax_nan_to_zero(
// CHECK:         cleave.softmax %{{.+}} {axis = 1 : i64, nan_to_zero} : tensor<4x10xf32>
func.func @softmax_nan_to_zero(%a0: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = cleave.softmax %a0 {axis = 1 : i64, nan_to_zero} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// CHECK-LABEL: func.func @softmax_first_axis_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x10xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.softmax %[[A0]] {axis = 0 : i64} : tensor<?x10xf32>
// CHECK:         return %[[R]] : tensor<?x10xf32>
func.func @softmax_first_axis_dynamic(%a0: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = cleave.softmax %a0 {axis = 0 : i64} : tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<4x10xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.log_softmax %[[A0]] {axis = 1 : i64} : tensor<4x10xf32>
// CHECK:         return %[[R]] : tensor<4x10xf32>
func.func @log_softmax(%a0: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = cleave.log_softmax %a0 {axis = 1 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// CHECK-LABEL: func.func @reduce_sum_keepdims(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x16x64xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.reduce_sum %[[A0]] {axes = array<i64: 2>} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
// CHECK:         return %[[R]] : tensor<2x16x1xf32>
func.func @reduce_sum_keepdims(%a0: tensor<2x16x64xf32>) -> tensor<2x16x1xf32> {
  %0 = cleave.reduce_sum %a0 {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  return %0 : tensor<2x16x1xf32>
}

// CHECK-LABEL: func.func @reduce_mean_default_keepdims(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x16x64xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.reduce_mean %[[A0]] {axes = array<i64: 1, 2>} : (tensor<2x16x64xf32>) -> tensor<2x1x1xf32>
// CHECK:         return %[[R]] : tensor<2x1x1xf32>
func.func @reduce_mean_default_keepdims(%a0: tensor<2x16x64xf32>) -> tensor<2x1x1xf32> {
  %0 = cleave.reduce_mean %a0 {axes = array<i64: 1, 2>} : (tensor<2x16x64xf32>) -> tensor<2x1x1xf32>
  return %0 : tensor<2x1x1xf32>
}

// CHECK-LABEL: func.func @reduce_max_drop_dims(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x16x64x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.reduce_max %[[A0]] {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x16x64x3xf32>) -> tensor<16x3xf32>
// CHECK:         return %[[R]] : tensor<16x3xf32>
func.func @reduce_max_drop_dims(%a0: tensor<2x16x64x3xf32>) -> tensor<16x3xf32> {
  %0 = cleave.reduce_max %a0 {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x16x64x3xf32>) -> tensor<16x3xf32>
  return %0 : tensor<16x3xf32>
}

// CHECK-LABEL: func.func @reduce_min_all_to_scalar(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x3xi32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.reduce_min %[[A0]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xi32>) -> tensor<i32>
// CHECK:         return %[[R]] : tensor<i32>
func.func @reduce_min_all_to_scalar(%a0: tensor<2x3xi32>) -> tensor<i32> {
  %0 = cleave.reduce_min %a0 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xi32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// CHECK-LABEL: func.func @reduce_prod_empty_axes(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<2x3xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.reduce_prod %[[A0]] {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]] : tensor<2x3xf32>
func.func @reduce_prod_empty_axes(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = cleave.reduce_prod %a0 {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reduce_l2_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x?x8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.reduce_l2 %[[A0]] {axes = array<i64: 1>} : (tensor<?x?x8xf32>) -> tensor<?x1x8xf32>
// CHECK:         return %[[R]] : tensor<?x1x8xf32>
func.func @reduce_l2_dynamic(%a0: tensor<?x?x8xf32>) -> tensor<?x1x8xf32> {
  %0 = cleave.reduce_l2 %a0 {axes = array<i64: 1>} : (tensor<?x?x8xf32>) -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// CHECK-LABEL: func.func @reduce_sum_square_dynamic_reduced(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<4x?x8xf32>)
// CHECK:         %[[R:[^ ,]+]] = cleave.reduce_sum_square %[[A0]] {axes = array<i64: 1>, keepdims = false} : (tensor<4x?x8xf32>) -> tensor<4x8xf32>
// CHECK:         return %[[R]] : tensor<4x8xf32>
func.func @reduce_sum_square_dynamic_reduced(%a0: tensor<4x?x8xf32>) -> tensor<4x8xf32> {
  %0 = cleave.reduce_sum_square %a0 {axes = array<i64: 1>, keepdims = false} : (tensor<4x?x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
