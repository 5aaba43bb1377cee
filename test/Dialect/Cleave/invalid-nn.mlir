// RUN: cleave-opt %s -split-input-file -verify-diagnostics

// Every verifier and type-inference error of the neural-network ops. Errors
// found while inferring a result type are followed by the generic "failed to
// infer returned types".

// matmul_c1: the contracted dimensions agree.
func.func @matmul_c1_contracted_mismatch(%a: tensor<2x16x64xf32>, %b: tensor<32x8xf32>) -> tensor<2x16x8xf32> {
  // expected-error @+2 {{'cleave.matmul' op matmul_c1: lhs dimension 2 (64) must equal rhs dimension 0 (32)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.matmul %a, %b : (tensor<2x16x64xf32>, tensor<32x8xf32>) -> tensor<2x16x8xf32>
  return %0 : tensor<2x16x8xf32>
}

// -----

// matmul_c1 with a 1-D rhs: its only dimension is the contracted one.
func.func @matmul_c1_vector_rhs(%a: tensor<4x8xf32>, %b: tensor<7xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'cleave.matmul' op matmul_c1: lhs dimension 1 (8) must equal rhs dimension 0 (7)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.matmul %a, %b : (tensor<4x8xf32>, tensor<7xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// matmul_c2: batch dimensions broadcast.
func.func @matmul_c2_batch_mismatch(%a: tensor<2x3x4x8xf32>, %b: tensor<4x8x5xf32>) -> tensor<2x3x4x5xf32> {
  // expected-error @+2 {{'cleave.matmul' op matmul_c2: batch dimensions [2, 3] and [4] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<4x8x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// matmul_c3: element types agree.
func.func @matmul_c3_element_types(%a: tensor<4x8xf32>, %b: tensor<8x2xf16>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'cleave.matmul' op matmul_c3: lhs element type ('f32') must equal rhs element type ('f16')}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xf16>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @matmul_scalar_operand(%a: tensor<f32>, %b: tensor<8x2xf32>) -> tensor<8x2xf32> {
  // expected-error @+2 {{'cleave.matmul' op operands must be at least 1-D, got ranks 0 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.matmul %a, %b : (tensor<f32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

// The written result type must be the inferred one.
func.func @matmul_wrong_result(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{'cleave.matmul' op inferred type(s) 'tensor<4x2xf32>' are incompatible with return type(s) of operation 'tensor<4x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gemm_c1_rank(%a: tensor<2x4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'cleave.gemm' op gemm_c1: a and b must be 2-D, got ranks 3 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gemm %a, %b : (tensor<2x4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gemm_c2_contracted(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'cleave.gemm' op gemm_c2: contracted dimension of a (8) must equal that of b (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gemm %a, %b : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gemm_c3_bias_shape(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4xf32>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'cleave.gemm' op gemm_c3: c shape [4] does not broadcast to the result shape [4, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gemm %a, %b, %c : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<4xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gemm_c3_bias_rank(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<1x4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'cleave.gemm' op gemm_c3: c shape [1, 4, 2] does not broadcast to the result shape [4, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gemm %a, %b, %c : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<1x4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gemm_c4_element_types(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<2xf16>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'cleave.gemm' op gemm_c4: c element type ('f16') must equal a element type ('f32')}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gemm %a, %b, %c : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<2xf16>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @conv_input_rank(%x: tensor<4x10xf32>, %w: tensor<8x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{'cleave.conv' op input must have rank at least 3 (N x C x spatial dimensions), got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64>, pads = array<i64>, dilations = array<i64>} : (tensor<4x10xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op weight rank (3) must equal input rank (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_element_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op weight element type ('f16') must equal input element type ('f32')}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op strides has 1 values, expected 2 for 2 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_pads_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op pads has 2 values, expected 4 for 2 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_dilations_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op dilations has 3 values, expected 2 for 2 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op strides[1] (0) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 0>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_negative_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op pads[2] (-1) must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, -1, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op dilations[0] (0) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_zero_group(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op group (0) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_group_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op input channels (6) must equal weight dim 1 (3) times group (1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_group_output_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op output channels (weight dim 0, 5) must be divisible by group (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x6x8x8xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32>
  return %0 : tensor<1x5x6x6xf32>
}

// -----

func.func @conv_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op bias must have shape [4] (weight dim 0), got [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_empty_kernel(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x0x3xf32>) -> tensor<1x4x9x6xf32> {
  // expected-error @+2 {{'cleave.conv' op weight dim 2 (kernel size) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x0x3xf32>) -> tensor<1x4x9x6xf32>
  return %0 : tensor<1x4x9x6xf32>
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x1xf32> {
  // expected-error @+2 {{'cleave.conv' op spatial dimension 1: padded input size (8) is smaller than the dilated kernel size (9)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 4>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x1xf32>
  return %0 : tensor<1x4x6x1xf32>
}

// -----

func.func @conv_transpose_input_rank(%x: tensor<8x10xf32>, %w: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op input must have rank at least 3 (N x C x spatial dimensions), got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64>, pads = array<i64>, dilations = array<i64>, output_padding = array<i64>} : (tensor<8x10xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @conv_transpose_weight_rank(%x: tensor<1x8x10xf32>, %w: tensor<8x4xf32>) -> tensor<1x4x11xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op weight rank (2) must equal input rank (3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x8x10xf32>, tensor<8x4xf32>) -> tensor<1x4x11xf32>
  return %0 : tensor<1x4x11xf32>
}

// -----

func.func @conv_transpose_element_types(%x: tensor<1x8x10xf32>, %w: tensor<8x4x2xf32>, %b: tensor<4xbf16>) -> tensor<1x4x11xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op bias element type ('bf16') must equal input element type ('f32')}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w, %b {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>, tensor<4xbf16>) -> tensor<1x4x11xf32>
  return %0 : tensor<1x4x11xf32>
}

// -----

func.func @conv_transpose_pads_length(%x: tensor<1x8x10xf32>, %w: tensor<8x4x2xf32>) -> tensor<1x4x11xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op pads has 1 values, expected 2 for 1 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x11xf32>
  return %0 : tensor<1x4x11xf32>
}

// -----

func.func @conv_transpose_output_padding_length(%x: tensor<1x8x10xf32>, %w: tensor<8x4x2xf32>) -> tensor<1x4x11xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op output_padding has 2 values, expected 1 for 1 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0, 0>} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x11xf32>
  return %0 : tensor<1x4x11xf32>
}

// -----

func.func @conv_transpose_output_padding_too_large(%x: tensor<1x8x10xf32>, %w: tensor<8x4x2xf32>) -> tensor<1x4x22xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op output_padding[0] (2) must be non-negative and less than the stride (2) or the dilation (1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 2>} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x22xf32>
  return %0 : tensor<1x4x22xf32>
}

// -----

func.func @conv_transpose_zero_group(%x: tensor<1x8x10xf32>, %w: tensor<8x4x2xf32>) -> tensor<1x4x11xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op group (0) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>, group = 0 : i64} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x11xf32>
  return %0 : tensor<1x4x11xf32>
}

// -----

func.func @conv_transpose_input_channels(%x: tensor<1x6x10xf32>, %w: tensor<8x4x2xf32>) -> tensor<1x4x11xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op input channels (6) must equal weight dim 0 (8)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x6x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x11xf32>
  return %0 : tensor<1x4x11xf32>
}

// -----

func.func @conv_transpose_group_channels(%x: tensor<1x6x10xf32>, %w: tensor<6x4x2xf32>) -> tensor<1x16x11xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op input channels (6) must be divisible by group (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>, group = 4 : i64} : (tensor<1x6x10xf32>, tensor<6x4x2xf32>) -> tensor<1x16x11xf32>
  return %0 : tensor<1x16x11xf32>
}

// -----

func.func @conv_transpose_bias_shape(%x: tensor<1x8x10xf32>, %w: tensor<8x4x2xf32>, %b: tensor<4xf32>) -> tensor<1x8x11xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op bias must have shape [8] (weight dim 1 times group), got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w, %b {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>, group = 2 : i64} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>, tensor<4xf32>) -> tensor<1x8x11xf32>
  return %0 : tensor<1x8x11xf32>
}

// -----

func.func @conv_transpose_empty_kernel(%x: tensor<1x8x10xf32>, %w: tensor<8x4x0xf32>) -> tensor<1x4x10xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op weight dim 2 (kernel size) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x8x10xf32>, tensor<8x4x0xf32>) -> tensor<1x4x10xf32>
  return %0 : tensor<1x4x10xf32>
}

// -----

func.func @conv_transpose_pads_remove_output(%x: tensor<1x8x2xf32>, %w: tensor<8x4x2xf32>) -> tensor<1x4x1xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op spatial dimension 0: pads remove the whole output (size -1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 1>, pads = array<i64: 2, 2>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x8x2xf32>, tensor<8x4x2xf32>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}

// -----

func.func @max_pool_input_rank(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+2 {{'cleave.max_pool' op input must have rank at least 3 (N x C x spatial dimensions), got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.max_pool %x {kernel_shape = array<i64>, strides = array<i64>, pads = array<i64>, dilations = array<i64>} : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// -----

func.func @max_pool_kernel_shape_length(%x: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> {
  // expected-error @+2 {{'cleave.max_pool' op kernel_shape has 3 values, expected 2 for 2 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.max_pool %x {kernel_shape = array<i64: 2, 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

func.func @max_pool_zero_kernel(%x: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> {
  // expected-error @+2 {{'cleave.max_pool' op kernel_shape[1] (0) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.max_pool %x {kernel_shape = array<i64: 2, 0>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

func.func @max_pool_strides_length(%x: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> {
  // expected-error @+2 {{'cleave.max_pool' op strides has 1 values, expected 2 for 2 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

func.func @max_pool_kernel_too_large(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x1x1xf32> {
  // expected-error @+2 {{'cleave.max_pool' op spatial dimension 0: padded input size (6) is smaller than the dilated kernel size (7)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.max_pool %x {kernel_shape = array<i64: 7, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x16x4x4xf32>) -> tensor<1x16x1x1xf32>
  return %0 : tensor<1x16x1x1xf32>
}

// -----

// The last window of a ceil_mode pooling that starts in the end padding is
// dropped, so 4 is not the width.
func.func @max_pool_ceil_mode_dropped_window(%x: tensor<1x3x5x8xf32>) -> tensor<1x3x3x4xf32> {
  // expected-error @+2 {{'cleave.max_pool' op inferred type(s) 'tensor<1x3x3x3xf32>' are incompatible with return type(s) of operation 'tensor<1x3x3x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.max_pool %x {kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 2>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x3x5x8xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}

// -----

func.func @average_pool_negative_pad(%x: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> {
  // expected-error @+2 {{'cleave.average_pool' op pads[3] (-2) must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, -2>, dilations = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

func.func @average_pool_kernel_shape_length(%x: tensor<1x16x32xf32>) -> tensor<1x16x16xf32> {
  // expected-error @+2 {{'cleave.average_pool' op kernel_shape has 2 values, expected 1 for 1 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x16x32xf32>) -> tensor<1x16x16xf32>
  return %0 : tensor<1x16x16xf32>
}

// -----

func.func @global_average_pool_rank(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+2 {{'cleave.global_average_pool' op input must have rank at least 2 (N x C x spatial dimensions), got rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.global_average_pool %x : (tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @global_max_pool_rank(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+2 {{'cleave.global_max_pool' op input must have rank at least 2 (N x C x spatial dimensions), got rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.global_max_pool %x : (tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @batch_norm_rank(%x: tensor<16xf32>, %p: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+2 {{'cleave.batch_norm' op input must have rank at least 2 (N x C x ...), got rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.batch_norm %x, %p, %p, %p, %p : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @batch_norm_scale_shape(%x: tensor<1x16x8x8xf32>, %s: tensor<8xf32>, %p: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+2 {{'cleave.batch_norm' op scale must have shape [16] (the input channels), got [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.batch_norm %x, %s, %p, %p, %p : (tensor<1x16x8x8xf32>, tensor<8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @batch_norm_bias_shape(%x: tensor<1x16x8x8xf32>, %b: tensor<1x16xf32>, %p: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+2 {{'cleave.batch_norm' op bias must have shape [16] (the input channels), got [1, 16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.batch_norm %x, %p, %b, %p, %p : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @batch_norm_mean_shape(%x: tensor<1x16x8x8xf32>, %m: tensor<17xf32>, %p: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+2 {{'cleave.batch_norm' op mean must have shape [16] (the input channels), got [17]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.batch_norm %x, %p, %p, %m, %p : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<17xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @batch_norm_variance_shape(%x: tensor<1x16x8x8xf32>, %v: tensor<f32>, %p: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+2 {{'cleave.batch_norm' op variance must have shape [16] (the input channels), got []}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.batch_norm %x, %p, %p, %p, %v : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<f32>) -> tensor<1x16x8x8xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @instance_norm_rank(%x: tensor<8xf32>, %p: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{'cleave.instance_norm' op input must have rank at least 2 (N x C x ...), got rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.instance_norm %x, %p, %p : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @instance_norm_bias_shape(%x: tensor<2x8x100xf32>, %s: tensor<8xf32>, %b: tensor<100xf32>) -> tensor<2x8x100xf32> {
  // expected-error @+2 {{'cleave.instance_norm' op bias must have shape [8] (the input channels), got [100]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.instance_norm %x, %s, %b : (tensor<2x8x100xf32>, tensor<8xf32>, tensor<100xf32>) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// -----

func.func @group_norm_rank(%x: tensor<8xf32>, %p: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{'cleave.group_norm' op input must have rank at least 2 (N x C x ...), got rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.group_norm %x, %p, %p {num_groups = 2 : i64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @group_norm_scale_shape(%x: tensor<2x8x100xf32>, %s: tensor<4xf32>, %b: tensor<8xf32>) -> tensor<2x8x100xf32> {
  // expected-error @+2 {{'cleave.group_norm' op scale must have shape [8] (the input channels), got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.group_norm %x, %s, %b {num_groups = 4 : i64} : (tensor<2x8x100xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// -----

func.func @group_norm_zero_groups(%x: tensor<2x8x100xf32>, %p: tensor<8xf32>) -> tensor<2x8x100xf32> {
  // expected-error @+2 {{'cleave.group_norm' op num_groups (0) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.group_norm %x, %p, %p {num_groups = 0 : i64} : (tensor<2x8x100xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// -----

func.func @group_norm_groups_divide_channels(%x: tensor<2x8x100xf32>, %p: tensor<8xf32>) -> tensor<2x8x100xf32> {
  // expected-error @+2 {{'cleave.group_norm' op input channels (8) must be divisible by num_groups (3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.group_norm %x, %p, %p {num_groups = 3 : i64} : (tensor<2x8x100xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// -----

func.func @rms_norm_c1(%x: tensor<2x16x64xf32>, %s: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'cleave.rms_norm' op rms_norm_c1: axis (-1) must be in [0, 3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rms_norm %x, %s {axis = -1 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

// The scale covers the normalised dimensions only.
func.func @rms_norm_c2(%x: tensor<2x16x64xf32>, %s: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'cleave.rms_norm' op rms_norm_c2: scale shape [16, 64] does not broadcast to the normalised shape [64]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rms_norm %x, %s {axis = 2 : i64} : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

func.func @rms_norm_c3(%x: tensor<2x16x64xf16>, %s: tensor<64xf32>) -> tensor<2x16x64xf16> {
  // expected-error @+2 {{'cleave.rms_norm' op rms_norm_c3: scale element type ('f32') must be the input element type ('f16')}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rms_norm %x, %s {axis = 2 : i64} : (tensor<2x16x64xf16>, tensor<64xf32>) -> tensor<2x16x64xf16>
  return %0 : tensor<2x16x64xf16>
}

// -----

func.func @rms_norm_c4(%x: tensor<2x16x64xf32>, %s: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'cleave.rms_norm' op rms_norm_c4: epsilon (-1.000000e+00) must be finite and non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rms_norm %x, %s {axis = 2 : i64, epsilon = -1.0 : f32} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

func.func @rotary_embedding_c1(%x: tensor<2x8xf32>, %c: tensor<2x8x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{'cleave.rotary_embedding' op rotary_embedding_c1: input must have rank 3 or 4, got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rotary_embedding %x, %c, %c : (tensor<2x8xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @rotary_embedding_c2(%x: tensor<2x5x24xf32>, %c: tensor<2x5x4xf32>) -> tensor<2x5x24xf32> {
  // expected-error @+2 {{'cleave.rotary_embedding' op rotary_embedding_c2: hidden size 24 is not a multiple of num_heads (5)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rotary_embedding %x, %c, %c {num_heads = 5 : i64} : (tensor<2x5x24xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x24xf32>
  return %0 : tensor<2x5x24xf32>
}

// -----

func.func @rotary_embedding_c2_heads(%x: tensor<2x3x5x8xf32>, %c: tensor<2x5x4xf32>) -> tensor<2x3x5x8xf32> {
  // expected-error @+2 {{'cleave.rotary_embedding' op rotary_embedding_c2: num_heads (4) differs from the input's 3 heads}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rotary_embedding %x, %c, %c {num_heads = 4 : i64} : (tensor<2x3x5x8xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5x8xf32>
  return %0 : tensor<2x3x5x8xf32>
}

// -----

func.func @rotary_embedding_c3(%x: tensor<2x3x5x8xf32>, %c: tensor<2x5x4xf32>) -> tensor<2x3x5x8xf32> {
  // expected-error @+2 {{'cleave.rotary_embedding' op rotary_embedding_c3: the rotated size (3) must be even}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rotary_embedding %x, %c, %c {rotary_embedding_dim = 3 : i64} : (tensor<2x3x5x8xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5x8xf32>
  return %0 : tensor<2x3x5x8xf32>
}

// -----

func.func @rotary_embedding_c4(%x: tensor<2x3x5x8xf32>, %c: tensor<2x5x4xf32>, %s: tensor<2x5x8xf32>) -> tensor<2x3x5x8xf32> {
  // expected-error @+2 {{'cleave.rotary_embedding' op rotary_embedding_c4: cos ('tensor<2x5x4xf32>') and sin ('tensor<2x5x8xf32>') must have the same type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rotary_embedding %x, %c, %s : (tensor<2x3x5x8xf32>, tensor<2x5x4xf32>, tensor<2x5x8xf32>) -> tensor<2x3x5x8xf32>
  return %0 : tensor<2x3x5x8xf32>
}

// -----

func.func @rotary_embedding_c5(%x: tensor<2x3x5x8xf32>, %c: tensor<2x5x4xf32>, %p: tensor<2x5xi64>) -> tensor<2x3x5x8xf32> {
  // expected-error @+2 {{'cleave.rotary_embedding' op rotary_embedding_c5: with position_ids, cos and sin must be positions x n with n >= 4, got [2, 5, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.rotary_embedding %x, %c, %c, %p : (tensor<2x3x5x8xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5xi64>) -> tensor<2x3x5x8xf32>
  return %0 : tensor<2x3x5x8xf32>
}

// -----

func.func @attention_c1(%q: tensor<2x4x3x8xf32>, %k: tensor<2x5x16xf32>) -> tensor<2x4x3x8xf32> {
  // expected-error @+2 {{'cleave.attention' op attention_c1: query, key and value must all have rank 3 or all rank 4, got ranks 4, 3, 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.attention %q, %k, %k {kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 1.0 : f32} : (tensor<2x4x3x8xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>) -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

func.func @attention_c2(%q: tensor<2x4x3x8xf32>, %k: tensor<2x4x5x8xf16>) -> tensor<2x4x3x8xf32> {
  // expected-error @+2 {{'cleave.attention' op attention_c2: key element type ('f16') must equal query element type ('f32')}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.attention %q, %k, %k {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 1.0 : f32} : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf16>, tensor<2x4x5x8xf16>) -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

func.func @attention_c3(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32> {
  // expected-error @+2 {{'cleave.attention' op attention_c3: key has 2 heads, expected 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.attention %q, %k, %k {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 1.0 : f32} : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

func.func @attention_c4(%q: tensor<2x3x30xf32>, %k: tensor<2x5x16xf32>) -> tensor<2x3x30xf32> {
  // expected-error @+2 {{'cleave.attention' op attention_c4: hidden size 30 is not a multiple of q_num_heads (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.attention %q, %k, %k {kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 1.0 : f32} : (tensor<2x3x30xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>) -> tensor<2x3x30xf32>
  return %0 : tensor<2x3x30xf32>
}

// -----

func.func @attention_c5(%q: tensor<2x4x3x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x6x8xf32>) -> tensor<2x4x3x8xf32> {
  // expected-error @+2 {{'cleave.attention' op attention_c5: query [2, 4, 3, 8], key [2, 4, 5, 8] and value [2, 4, 6, 8] disagree on the batch, the query/key head size or the key/value sequence}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.attention %q, %k, %v {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 1.0 : f32} : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

func.func @attention_c6(%q: tensor<2x4x3x8xf32>, %k: tensor<2x4x5x8xf32>, %m: tensor<3x5xi32>) -> tensor<2x4x3x8xf32> {
  // expected-error @+2 {{'cleave.attention' op attention_c6: mask element type ('i32') must be i1 or 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.attention %q, %k, %k, %m {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 1.0 : f32} : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<3x5xi32>) -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

func.func @attention_c7(%q: tensor<2x4x3x8xf32>, %k: tensor<2x4x5x8xf32>) -> tensor<2x4x3x8xf32> {
  // expected-error @+2 {{'cleave.attention' op attention_c7: scale (1.000000e+00) must be finite and softcap (-1.000000e+00) finite and non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.attention %q, %k, %k {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 1.0 : f32, softcap = -1.0 : f32} : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x16x64xf32>, %s: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'cleave.layer_norm' op axis (3) must be in [0, 3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.layer_norm %x, %s {axis = 3 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_negative_axis(%x: tensor<2x16x64xf32>, %s: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'cleave.layer_norm' op axis (-1) must be in [0, 3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.layer_norm %x, %s {axis = -1 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<2x16x64xf32>, %s: tensor<32xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'cleave.layer_norm' op scale shape [32] does not broadcast to the normalised shape [64]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.layer_norm %x, %s {axis = 2 : i64} : (tensor<2x16x64xf32>, tensor<32xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

// The scale covers the normalised dimensions only.
func.func @layer_norm_scale_rank(%x: tensor<2x16x64xf32>, %s: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'cleave.layer_norm' op scale shape [16, 64] does not broadcast to the normalised shape [64]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.layer_norm %x, %s {axis = 2 : i64} : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<2x16x64xf32>, %s: tensor<64xf32>, %b: tensor<16x1xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'cleave.layer_norm' op bias shape [16, 1] does not broadcast to the normalised shape [64]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.layer_norm %x, %s, %b {axis = 2 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<16x1xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

func.func @softmax_axis(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'cleave.softmax' op axis (2) must be in [0, 2)}}
  %0 = cleave.softmax %x {axis = 2 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @softmax_negative_axis(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'cleave.softmax' op axis (-1) must be in [0, 2)}}
  %0 = cleave.softmax %x {axis = -1 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @log_softmax_axis(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'cleave.log_softmax' op axis (5) must be in [0, 2)}}
  %0 = cleave.log_softmax %x {axis = 5 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<2x16x64xf32>) -> tensor<2x16x1xf32> {
  // expected-error @+2 {{'cleave.reduce_sum' op axes[0] (3) must be in [0, 3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.reduce_sum %x {axes = array<i64: 3>} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  return %0 : tensor<2x16x1xf32>
}

// -----

func.func @reduce_negative_axis(%x: tensor<2x16x64xf32>) -> tensor<2x16x1xf32> {
  // expected-error @+2 {{'cleave.reduce_mean' op axes[1] (-1) must be in [0, 3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.reduce_mean %x {axes = array<i64: 0, -1>} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  return %0 : tensor<2x16x1xf32>
}

// -----

func.func @reduce_axes_unsorted(%x: tensor<2x16x64xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'cleave.reduce_max' op axes must be sorted and unique, got [2, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.reduce_max %x {axes = array<i64: 2, 1>, keepdims = false} : (tensor<2x16x64xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_axes_duplicate(%x: tensor<2x16x64xf32>) -> tensor<2x1x64xf32> {
  // expected-error @+2 {{'cleave.reduce_prod' op axes must be sorted and unique, got [1, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.reduce_prod %x {axes = array<i64: 1, 1>} : (tensor<2x16x64xf32>) -> tensor<2x1x64xf32>
  return %0 : tensor<2x1x64xf32>
}

// -----

// Without keepdims the reduced dimensions disappear.
func.func @reduce_keepdims_false_result(%x: tensor<2x16x64xf32>) -> tensor<2x1x64xf32> {
  // expected-error @+2 {{'cleave.reduce_l2' op inferred type(s) 'tensor<2x64xf32>' are incompatible with return type(s) of operation 'tensor<2x1x64xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.reduce_l2 %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x16x64xf32>) -> tensor<2x1x64xf32>
  return %0 : tensor<2x1x64xf32>
}

// -----

// Sizes, pads and dilations that do not fit int64_t are refused, not wrapped.
func.func @conv_dilation_overflow(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'cleave.conv' op spatial dimension 1: the padded input or the dilated kernel has more elements than a dimension can hold}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 6917529027641081856>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @max_pool_pads_overflow(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+2 {{'cleave.max_pool' op spatial dimension 0: the padded input or the dilated kernel has more elements than a dimension can hold}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.max_pool %x {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 9223372036854775807, 0, 1, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

func.func @conv_transpose_stride_overflow(%x: tensor<1x8x3xf32>, %w: tensor<8x4x2xf32>) -> tensor<1x4x4xf32> {
  // expected-error @+2 {{'cleave.conv_transpose' op spatial dimension 0: the output has more elements than a dimension can hold}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv_transpose %x, %w {strides = array<i64: 6917529027641081856>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x8x3xf32>, tensor<8x4x2xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// -----

func.func @conv_group_overflow(%x: tensor<1x4x8xf32>, %w: tensor<4x2x3xf32>) -> tensor<1x4x6xf32> {
  // expected-error @+2 {{'cleave.conv' op input channels (4) must equal weight dim 1 (2) times group (4611686018427387904)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, group = 4611686018427387904 : i64} : (tensor<1x4x8xf32>, tensor<4x2x3xf32>) -> tensor<1x4x6xf32>
  return %0 : tensor<1x4x6xf32>
}
