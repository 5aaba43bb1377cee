// RUN: cleave-opt %s -split-input-file -cleave-fuse-patterns | FileCheck %s

//===----------------------------------------------------------------------===//
// GELU, erf form
//===----------------------------------------------------------------------===//

// torch.onnx (opset 13-17): Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5).
// CHECK-LABEL: func.func @gelu_erf_torch
// CHECK-SAME: (%[[X:.+]]: tensor<2x64xf32>)
// CHECK-NEXT: %[[G:.+]] = cleave.gelu %[[X]] : tensor<2x64xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_torch(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %sqrt2 = cleave.constant dense<1.41421354> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<0.5> : tensor<f32>
  %0 = cleave.div %x, %sqrt2 : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %1 = cleave.erf %0 : tensor<2x64xf32>
  %2 = cleave.add %1, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %3 = cleave.mul %x, %2 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %4 = cleave.mul %3, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  return %4 : tensor<2x64xf32>
}

// -----

// Hugging Face style: x * 0.5 * (1.0 + erf(x / sqrt(2))), other operand
// orders.
// CHECK-LABEL: func.func @gelu_erf_reassociated
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[G:.+]] = cleave.gelu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_reassociated(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = cleave.constant dense<0.5> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %sqrt2 = cleave.constant dense<1.41421> : tensor<f32>
  %0 = cleave.mul %half, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = cleave.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = cleave.erf %1 : tensor<4x8xf32>
  %3 = cleave.add %one, %2 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = cleave.mul %3, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// Multiplication by 1/sqrt(2) instead of division by sqrt(2), in f16.
// CHECK-LABEL: func.func @gelu_erf_inverse_sqrt2_f16
// CHECK-SAME: (%[[X:.+]]: tensor<8xf16>)
// CHECK-NEXT: %[[G:.+]] = cleave.gelu %[[X]] : tensor<8xf16>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_inverse_sqrt2_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %rsqrt2 = cleave.constant dense<0.7071> : tensor<f16>
  %one = cleave.constant dense<1.0> : tensor<f16>
  %half = cleave.constant dense<0.5> : tensor<1xf16>
  %0 = cleave.mul %rsqrt2, %x : (tensor<f16>, tensor<8xf16>) -> tensor<8xf16>
  %1 = cleave.erf %0 : tensor<8xf16>
  %2 = cleave.add %1, %one : (tensor<8xf16>, tensor<f16>) -> tensor<8xf16>
  %3 = cleave.mul %2, %half : (tensor<8xf16>, tensor<1xf16>) -> tensor<8xf16>
  %4 = cleave.mul %x, %3 : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  return %4 : tensor<8xf16>
}

// -----

//===----------------------------------------------------------------------===//
// GELU, tanh form
//===----------------------------------------------------------------------===//

// torch.onnx with approximate="tanh": the cube is x * (x * x).
// CHECK-LABEL: func.func @gelu_tanh_torch
// CHECK-SAME: (%[[X:.+]]: tensor<2x16xf32>)
// CHECK-NEXT: %[[G:.+]] = cleave.gelu %[[X]] {approximate = "tanh"} : tensor<2x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh_torch(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %beta = cleave.constant dense<0.797884583> : tensor<f32>
  %kappa = cleave.constant dense<4.471500e-02> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<0.5> : tensor<f32>
  %0 = cleave.mul %x, %x : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %1 = cleave.mul %x, %0 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %2 = cleave.mul %kappa, %1 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %3 = cleave.add %x, %2 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %4 = cleave.mul %beta, %3 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %5 = cleave.tanh %4 : tensor<2x16xf32>
  %6 = cleave.add %one, %5 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %7 = cleave.mul %x, %6 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %8 = cleave.mul %half, %7 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %8 : tensor<2x16xf32>
}

// -----

// GPT-2's NewGELU: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3)))).
// CHECK-LABEL: func.func @gelu_tanh_pow
// CHECK-SAME: (%[[X:.+]]: tensor<2x16xf32>)
// CHECK-NEXT: %[[G:.+]] = cleave.gelu %[[X]] {approximate = "tanh"} : tensor<2x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh_pow(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %half = cleave.constant dense<0.5> : tensor<f32>
  %three = cleave.constant dense<3.0> : tensor<f32>
  %kappa = cleave.constant dense<4.471500e-02> : tensor<f32>
  %beta = cleave.constant dense<0.797884583> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %0 = cleave.mul %half, %x : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %1 = cleave.pow %x, %three : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %2 = cleave.mul %1, %kappa : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %3 = cleave.add %2, %x : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %4 = cleave.mul %3, %beta : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %5 = cleave.tanh %4 : tensor<2x16xf32>
  %6 = cleave.add %5, %one : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %7 = cleave.mul %0, %6 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %7 : tensor<2x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// GELU, decompositions that must not fuse
//===----------------------------------------------------------------------===//

// 0.6 is not 0.5.
// CHECK-LABEL: func.func @gelu_wrong_half
// CHECK-NOT: cleave.gelu
// CHECK: cleave.erf
// CHECK-NOT: cleave.gelu
func.func @gelu_wrong_half(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %sqrt2 = cleave.constant dense<1.41421354> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<0.6> : tensor<f32>
  %0 = cleave.div %x, %sqrt2 : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %1 = cleave.erf %0 : tensor<2x64xf32>
  %2 = cleave.add %1, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %3 = cleave.mul %x, %2 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %4 = cleave.mul %3, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  return %4 : tensor<2x64xf32>
}

// -----

// Dividing by sqrt(3) is another function.
// CHECK-LABEL: func.func @gelu_wrong_sqrt2
// CHECK-NOT: cleave.gelu
// CHECK: cleave.erf
// CHECK-NOT: cleave.gelu
func.func @gelu_wrong_sqrt2(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %sqrt3 = cleave.constant dense<1.73205078> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<0.5> : tensor<f32>
  %0 = cleave.div %x, %sqrt3 : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %1 = cleave.erf %0 : tensor<2x64xf32>
  %2 = cleave.add %1, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %3 = cleave.mul %x, %2 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %4 = cleave.mul %3, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  return %4 : tensor<2x64xf32>
}

// -----

// The erf is applied to another tensor than the one multiplied.
// CHECK-LABEL: func.func @gelu_different_inputs
// CHECK-NOT: cleave.gelu
// CHECK: cleave.erf
// CHECK-NOT: cleave.gelu
func.func @gelu_different_inputs(%x: tensor<2x64xf32>, %y: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %sqrt2 = cleave.constant dense<1.41421354> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<0.5> : tensor<f32>
  %0 = cleave.div %y, %sqrt2 : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %1 = cleave.erf %0 : tensor<2x64xf32>
  %2 = cleave.add %1, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %3 = cleave.mul %x, %2 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %4 = cleave.mul %3, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  return %4 : tensor<2x64xf32>
}

// -----

// The erf result is used elsewhere: fusing would compute it twice.
// CHECK-LABEL: func.func @gelu_intermediate_escapes
// CHECK-NOT: cleave.gelu
// CHECK: %[[ERF:.+]] = cleave.erf
// CHECK-NOT: cleave.gelu
// CHECK: return %{{.+}}, %[[ERF]]
func.func @gelu_intermediate_escapes(%x: tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xf32>) {
  %sqrt2 = cleave.constant dense<1.41421354> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<0.5> : tensor<f32>
  %0 = cleave.div %x, %sqrt2 : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %1 = cleave.erf %0 : tensor<2x64xf32>
  %2 = cleave.add %1, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %3 = cleave.mul %x, %2 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %4 = cleave.mul %3, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  return %4, %1 : tensor<2x64xf32>, tensor<2x64xf32>
}

// -----

// The 0.5 broadcasts the result to a larger shape than x: not an activation
// of x.
// CHECK-LABEL: func.func @gelu_constant_widens
// CHECK-NOT: cleave.gelu
// CHECK: cleave.erf
// CHECK-NOT: cleave.gelu
func.func @gelu_constant_widens(%x: tensor<64xf32>) -> tensor<3x64xf32> {
  %sqrt2 = cleave.constant dense<1.41421354> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<0.5> : tensor<3x64xf32>
  %0 = cleave.div %x, %sqrt2 : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
  %1 = cleave.erf %0 : tensor<64xf32>
  %2 = cleave.add %1, %one : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
  %3 = cleave.mul %x, %2 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %4 = cleave.mul %3, %half : (tensor<64xf32>, tensor<3x64xf32>) -> tensor<3x64xf32>
  return %4 : tensor<3x64xf32>
}

// -----

// The tanh form with the wrong cubic coefficient.
// CHECK-LABEL: func.func @gelu_tanh_wrong_kappa
// CHECK-NOT: cleave.gelu
// CHECK: cleave.tanh
// CHECK-NOT: cleave.gelu
func.func @gelu_tanh_wrong_kappa(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %half = cleave.constant dense<0.5> : tensor<f32>
  %three = cleave.constant dense<3.0> : tensor<f32>
  %kappa = cleave.constant dense<5.0e-02> : tensor<f32>
  %beta = cleave.constant dense<0.797884583> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %0 = cleave.mul %half, %x : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %1 = cleave.pow %x, %three : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %2 = cleave.mul %1, %kappa : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %3 = cleave.add %2, %x : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %4 = cleave.mul %3, %beta : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %5 = cleave.tanh %4 : tensor<2x16xf32>
  %6 = cleave.add %5, %one : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %7 = cleave.mul %0, %6 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %7 : tensor<2x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

// torch.onnx before opset 17 (native_layer_norm):
// ReduceMean -> Sub -> Pow(2) -> ReduceMean -> Add(eps) -> Sqrt -> Div ->
// Mul(gamma) -> Add(beta). The epsilon is the default 1e-5, which is not
// printed.
// CHECK-LABEL: func.func @layer_norm_torch
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK-NEXT: %[[LN:.+]] = cleave.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[LN]]
func.func @layer_norm_torch(%x: tensor<2x16x64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  %d = cleave.sub %x, %mean : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %sq = cleave.pow %d, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  %ve = cleave.add %var, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %std = cleave.sqrt %ve : tensor<2x16x1xf32>
  %n = cleave.div %d, %std : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %s = cleave.mul %n, %gamma : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %y = cleave.add %s, %beta : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// Normalising over the last two dimensions; the axis is the first of them.
// CHECK-LABEL: func.func @layer_norm_two_axes
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>, %[[G:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[LN:.+]] = cleave.layer_norm %[[X]], %[[G]], %[[B]] {axis = 1 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK-NEXT: return %[[LN]]
func.func @layer_norm_two_axes(%x: tensor<2x4x8xf32>, %gamma: tensor<4x8xf32>, %beta: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-12> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  %d = cleave.sub %x, %mean : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  %sq = cleave.pow %d, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  %ve = cleave.add %var, %eps : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
  %std = cleave.sqrt %ve : tensor<2x1x1xf32>
  %n = cleave.div %d, %std : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  %s = cleave.mul %n, %gamma : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  %y = cleave.add %s, %beta : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// The hand-written BERT form: (x - u) computed twice, squared by a product,
// eps added on the left, weight * x + bias with the operands swapped.
// CHECK-LABEL: func.func @layer_norm_handwritten
// CHECK-SAME: (%[[X:.+]]: tensor<16x32xf32>, %[[G:.+]]: tensor<32xf32>, %[[B:.+]]: tensor<32xf32>)
// CHECK-NEXT: %[[LN:.+]] = cleave.layer_norm %[[X]], %[[G]], %[[B]] {axis = 1 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK-NEXT: return %[[LN]]
func.func @layer_norm_handwritten(%x: tensor<16x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>) -> tensor<16x32xf32> {
  %eps = cleave.constant dense<1.0e-12> : tensor<f32>
  %u = cleave.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<16x32xf32>) -> tensor<16x1xf32>
  %d0 = cleave.sub %x, %u : (tensor<16x32xf32>, tensor<16x1xf32>) -> tensor<16x32xf32>
  %sq = cleave.mul %d0, %d0 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %s = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<16x32xf32>) -> tensor<16x1xf32>
  %d1 = cleave.sub %x, %u : (tensor<16x32xf32>, tensor<16x1xf32>) -> tensor<16x32xf32>
  %ve = cleave.add %eps, %s : (tensor<f32>, tensor<16x1xf32>) -> tensor<16x1xf32>
  %std = cleave.sqrt %ve : tensor<16x1xf32>
  %n = cleave.div %d1, %std : (tensor<16x32xf32>, tensor<16x1xf32>) -> tensor<16x32xf32>
  %w = cleave.mul %gamma, %n : (tensor<32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = cleave.add %beta, %w : (tensor<32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Without elementwise affine parameters the scale is a splat of ones and
// there is no bias.
// CHECK-LABEL: func.func @layer_norm_no_affine
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[ONES:.+]] = cleave.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-NEXT: %[[LN:.+]] = cleave.layer_norm %[[X]], %[[ONES]] {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[LN]]
func.func @layer_norm_no_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = cleave.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = cleave.pow %d, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = cleave.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = cleave.sqrt %ve : tensor<4x1xf32>
  %n = cleave.div %d, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// A multiplier that varies along an outer dimension is not a layer-norm
// scale: the normalisation fuses and the multiplication stays.
// CHECK-LABEL: func.func @layer_norm_scale_reaches_outer_dims
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[G:.+]]: tensor<4x8xf32>)
// CHECK: %[[ONES:.+]] = cleave.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: %[[LN:.+]] = cleave.layer_norm %[[X]], %[[ONES]] {axis = 1 : i64
// CHECK: %[[M:.+]] = cleave.mul %[[LN]], %[[G]]
// CHECK: return %[[M]]
func.func @layer_norm_scale_reaches_outer_dims(%x: tensor<4x8xf32>, %gamma: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = cleave.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = cleave.pow %d, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = cleave.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = cleave.sqrt %ve : tensor<4x1xf32>
  %n = cleave.div %d, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %s = cleave.mul %n, %gamma : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// LayerNorm, decompositions that must not fuse
//===----------------------------------------------------------------------===//

// Reducing a middle dimension is not a layer norm.
// CHECK-LABEL: func.func @layer_norm_middle_axis
// CHECK-NOT: cleave.layer_norm
// CHECK: cleave.div
// CHECK-NOT: cleave.layer_norm
func.func @layer_norm_middle_axis(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x16x64xf32>) -> tensor<2x1x64xf32>
  %d = cleave.sub %x, %mean : (tensor<2x16x64xf32>, tensor<2x1x64xf32>) -> tensor<2x16x64xf32>
  %sq = cleave.pow %d, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<2x16x64xf32>) -> tensor<2x1x64xf32>
  %ve = cleave.add %var, %eps : (tensor<2x1x64xf32>, tensor<f32>) -> tensor<2x1x64xf32>
  %std = cleave.sqrt %ve : tensor<2x1x64xf32>
  %n = cleave.div %d, %std : (tensor<2x16x64xf32>, tensor<2x1x64xf32>) -> tensor<2x16x64xf32>
  return %n : tensor<2x16x64xf32>
}

// -----

// The variance reduces other dimensions than the mean. What is left is the
// RMS norm of the deviation over the variance's dimensions.
// CHECK-LABEL: func.func @layer_norm_mismatched_axes
// CHECK-NOT: cleave.layer_norm
// CHECK: %[[D:.+]] = cleave.sub
// CHECK: cleave.rms_norm %[[D]], %{{.+}} {axis = 1 : i64}
// CHECK-NOT: cleave.layer_norm
func.func @layer_norm_mismatched_axes(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %d = cleave.sub %x, %mean : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %sq = cleave.pow %d, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  %ve = cleave.add %var, %eps : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
  %std = cleave.sqrt %ve : tensor<2x1x1xf32>
  %n = cleave.div %d, %std : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  return %n : tensor<2x4x8xf32>
}

// -----

// Cubing the deviation is not a variance.
// CHECK-LABEL: func.func @layer_norm_wrong_exponent
// CHECK-NOT: cleave.layer_norm
// CHECK: cleave.div
// CHECK-NOT: cleave.layer_norm
func.func @layer_norm_wrong_exponent(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %three = cleave.constant dense<3.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = cleave.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = cleave.pow %d, %three : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = cleave.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = cleave.sqrt %ve : tensor<4x1xf32>
  %n = cleave.div %d, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// An epsilon that is not a constant cannot become the attribute.
// CHECK-LABEL: func.func @layer_norm_runtime_epsilon
// CHECK-NOT: cleave.layer_norm
// CHECK: cleave.div
// CHECK-NOT: cleave.layer_norm
func.func @layer_norm_runtime_epsilon(%x: tensor<4x8xf32>, %eps: tensor<f32>) -> tensor<4x8xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = cleave.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = cleave.pow %d, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = cleave.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = cleave.sqrt %ve : tensor<4x1xf32>
  %n = cleave.div %d, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// The mean is also an output of the function: it must stay computed, and
// only the RMS norm of the deviation fuses.
// CHECK-LABEL: func.func @layer_norm_mean_escapes
// CHECK-NOT: cleave.layer_norm
// CHECK: %[[M:.+]] = cleave.reduce_mean
// CHECK: %[[D:.+]] = cleave.sub %{{.+}}, %[[M]]
// CHECK: %[[N:.+]] = cleave.rms_norm %[[D]]
// CHECK: return %[[N]], %[[M]]
func.func @layer_norm_mean_escapes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %mean = cleave.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = cleave.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = cleave.pow %d, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = cleave.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = cleave.sqrt %ve : tensor<4x1xf32>
  %n = cleave.div %d, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %mean : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

// Hugging Face's LlamaRMSNorm in float32 (the casts to float32 fold away):
// Pow(2) -> ReduceMean(-1) -> Add(eps) -> Sqrt -> Reciprocal -> Mul(x) ->
// Mul(weight), the weight on the left.
// CHECK-LABEL: func.func @rms_norm_llama
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x64xf32>, %[[W:.+]]: tensor<64xf32>)
// CHECK-NEXT: %[[N:.+]] = cleave.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[N]]
func.func @rms_norm_llama(%x: tensor<2x16x64xf32>, %w: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-06> : tensor<f32>
  %sq = cleave.pow %x, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %ms = cleave.reduce_mean %sq {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  %mse = cleave.add %ms, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %rms = cleave.sqrt %mse : tensor<2x16x1xf32>
  %inv = cleave.reciprocal %rms : tensor<2x16x1xf32>
  %n = cleave.mul %x, %inv : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %y = cleave.mul %w, %n : (tensor<64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// torch.rsqrt written as 1 / sqrt, the square as x * x, epsilon on the
// left and the reciprocal on the left of the product.
// CHECK-LABEL: func.func @rms_norm_div_one
// CHECK-SAME: (%[[X:.+]]: tensor<4x32xf32>, %[[W:.+]]: tensor<32xf32>)
// CHECK-NEXT: %[[N:.+]] = cleave.rms_norm %[[X]], %[[W]] {axis = 1 : i64} : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT: return %[[N]]
func.func @rms_norm_div_one(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xf32> {
  %one = cleave.constant dense<1.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %sq = cleave.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %ms = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %mse = cleave.add %eps, %ms : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %rms = cleave.sqrt %mse : tensor<4x1xf32>
  %inv = cleave.div %one, %rms : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = cleave.mul %inv, %x : (tensor<4x1xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = cleave.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// x / sqrt(mean(x^2) + eps) over the two trailing dimensions, without a
// weight: the scale is ones.
// CHECK-LABEL: func.func @rms_norm_div_no_weight
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[ONES:.+]] = cleave.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[N:.+]] = cleave.rms_norm %[[X]], %[[ONES]] {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[N]]
func.func @rms_norm_div_no_weight(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-06> : tensor<f32>
  %sq = cleave.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %ms = cleave.reduce_mean %sq {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  %mse = cleave.add %ms, %eps : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
  %rms = cleave.sqrt %mse : tensor<2x1x1xf32>
  %n = cleave.div %x, %rms : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  return %n : tensor<2x4x8xf32>
}

// -----

// LlamaRMSNorm of a float16 model: the statistics in float32 between
// Cast(to=FLOAT) and Cast(to=FLOAT16), the weight in float16. The fused op
// takes the float16 input directly.
// CHECK-LABEL: func.func @rms_norm_llama_f16_casts
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x64xf16>, %[[W:.+]]: tensor<64xf16>)
// CHECK-NEXT: %[[N:.+]] = cleave.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x8x64xf16>, tensor<64xf16>) -> tensor<2x8x64xf16>
// CHECK-NEXT: return %[[N]]
func.func @rms_norm_llama_f16_casts(%x: tensor<2x8x64xf16>, %w: tensor<64xf16>) -> tensor<2x8x64xf16> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-06> : tensor<f32>
  %xf = cleave.cast %x : tensor<2x8x64xf16> to tensor<2x8x64xf32>
  %sq = cleave.pow %xf, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %ms = cleave.reduce_mean %sq {axes = array<i64: 2>, keepdims = true} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  %mse = cleave.add %ms, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %rms = cleave.sqrt %mse : tensor<2x8x1xf32>
  %inv = cleave.reciprocal %rms : tensor<2x8x1xf32>
  %n = cleave.mul %xf, %inv : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %nh = cleave.cast %n : tensor<2x8x64xf32> to tensor<2x8x64xf16>
  %y = cleave.mul %w, %nh : (tensor<64xf16>, tensor<2x8x64xf16>) -> tensor<2x8x64xf16>
  return %y : tensor<2x8x64xf16>
}

// -----

// A widened input whose result stays float32 (no cast back): the fused op
// normalises the float32 value and the weight multiplies in float32.
// CHECK-LABEL: func.func @rms_norm_widened_no_cast_back
// CHECK-SAME: (%[[X:.+]]: tensor<4x16xf16>, %[[W:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[XF:.+]] = cleave.cast %[[X]] : tensor<4x16xf16> to tensor<4x16xf32>
// CHECK-NEXT: %[[N:.+]] = cleave.rms_norm %[[XF]], %[[W]] {axis = 1 : i64
// CHECK-NEXT: return %[[N]]
func.func @rms_norm_widened_no_cast_back(%x: tensor<4x16xf16>, %w: tensor<16xf32>) -> tensor<4x16xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-06> : tensor<f32>
  %xf = cleave.cast %x : tensor<4x16xf16> to tensor<4x16xf32>
  %sq = cleave.pow %xf, %two : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %ms = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %mse = cleave.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rms = cleave.sqrt %mse : tensor<4x1xf32>
  %inv = cleave.reciprocal %rms : tensor<4x1xf32>
  %n = cleave.mul %xf, %inv : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %y = cleave.mul %n, %w : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// RMSNorm, decompositions that must not fuse
//===----------------------------------------------------------------------===//

// The mean square is also an output of the function.
// CHECK-LABEL: func.func @rms_norm_mean_square_escapes
// CHECK-NOT: cleave.rms_norm
// CHECK: cleave.reciprocal
// CHECK-NOT: cleave.rms_norm
func.func @rms_norm_mean_square_escapes(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x1xf32>) {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %sq = cleave.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %ms = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %mse = cleave.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rms = cleave.sqrt %mse : tensor<4x1xf32>
  %inv = cleave.reciprocal %rms : tensor<4x1xf32>
  %n = cleave.mul %x, %inv : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %n, %ms : tensor<4x32xf32>, tensor<4x1xf32>
}

// -----

// Reducing a leading dimension is not an RMS norm over trailing ones.
// CHECK-LABEL: func.func @rms_norm_leading_axis
// CHECK-NOT: cleave.rms_norm
// CHECK: cleave.reciprocal
// CHECK-NOT: cleave.rms_norm
func.func @rms_norm_leading_axis(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %sq = cleave.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %ms = cleave.reduce_mean %sq {axes = array<i64: 0>, keepdims = true} : (tensor<4x32xf32>) -> tensor<1x32xf32>
  %mse = cleave.add %ms, %eps : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %rms = cleave.sqrt %mse : tensor<1x32xf32>
  %inv = cleave.reciprocal %rms : tensor<1x32xf32>
  %n = cleave.mul %x, %inv : (tensor<4x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32>
  return %n : tensor<4x32xf32>
}

// -----

// The mean of cubes, and the mean square of another tensor than the one
// normalised, are not RMS norms.
// CHECK-LABEL: func.func @rms_norm_wrong_power_or_input
// CHECK-NOT: cleave.rms_norm
func.func @rms_norm_wrong_power_or_input(%x: tensor<4x32xf32>, %z: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %three = cleave.constant dense<3.0> : tensor<f32>
  %two = cleave.constant dense<2.0> : tensor<f32>
  %eps = cleave.constant dense<1.0e-05> : tensor<f32>
  %cube = cleave.pow %x, %three : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %mc = cleave.reduce_mean %cube {axes = array<i64: 1>, keepdims = true} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %mce = cleave.add %mc, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r1 = cleave.sqrt %mce : tensor<4x1xf32>
  %n1 = cleave.div %x, %r1 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %sq = cleave.pow %z, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %ms = cleave.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %mse = cleave.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r2 = cleave.sqrt %mse : tensor<4x1xf32>
  %n2 = cleave.div %x, %r2 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %n1, %n2 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

// Hugging Face's apply_rotary_pos_emb: cos and sin are cos/sin of
// concat(freqs, freqs), times attention_scaling, unsqueezed at the heads;
// rotate_half(q) is concat(-q[..., 4:], q[..., :4]). The tables are reshaped
// to batch x sequence x head_size for the fused op, which reads their first
// halves.
// CHECK-LABEL: func.func @rope_llama
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[F:.+]]: tensor<1x4x4xf32>)
// CHECK: %[[COS:.+]] = cleave.unsqueeze
// CHECK: %[[SIN:.+]] = cleave.unsqueeze
// CHECK: %[[C:.+]] = cleave.reshape %[[COS]] : tensor<1x1x4x8xf32> -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[S:.+]] = cleave.reshape %[[SIN]] : tensor<1x1x4x8xf32> -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[R:.+]] = cleave.rotary_embedding %[[Q]], %[[C]], %[[S]] : (tensor<1x2x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @rope_llama(%q: tensor<1x2x4x8xf32>, %f: tensor<1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %scaling = cleave.constant dense<1.0> : tensor<f32>
  %emb = cleave.concat %f, %f {axis = 2 : i64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x8xf32>
  %cos0 = cleave.cos %emb : tensor<1x4x8xf32>
  %sin0 = cleave.sin %emb : tensor<1x4x8xf32>
  %cos1 = cleave.mul %cos0, %scaling : (tensor<1x4x8xf32>, tensor<f32>) -> tensor<1x4x8xf32>
  %sin1 = cleave.mul %sin0, %scaling : (tensor<1x4x8xf32>, tensor<f32>) -> tensor<1x4x8xf32>
  %cos = cleave.unsqueeze %cos1 {axes = array<i64: 1>} : (tensor<1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %sin = cleave.unsqueeze %sin1 {axes = array<i64: 1>} : (tensor<1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %x1 = cleave.slice %q {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 2, 4, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %x2 = cleave.slice %q {starts = array<i64: 0, 0, 0, 4>, ends = array<i64: 1, 2, 4, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %nx2 = cleave.neg %x2 : tensor<1x2x4x4xf32>
  %rot = cleave.concat %nx2, %x1 {axis = 3 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %a = cleave.mul %q, %cos : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %b = cleave.mul %rot, %sin : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = cleave.add %a, %b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Constant tables (precomputed by the exporter) of shape sequence x
// head_size with equal halves, the products in the other operand orders.
// CHECK-LABEL: func.func @rope_constant_tables
// CHECK-SAME: (%[[Q:.+]]: tensor<2x1x2x4xf32>)
// CHECK-DAG: %[[COS:.+]] = cleave.constant dense<{{\[\[}}1.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01], [2.500000e-01, 1.250000e-01, 2.500000e-01, 1.250000e-01]]> : tensor<2x4xf32>
// CHECK-DAG: %[[SIN:.+]] = cleave.constant dense<{{\[\[}}0.000000e+00, 2.000000e+00, 0.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<2x4xf32>
// CHECK-DAG: %[[C:.+]] = cleave.reshape %[[COS]] : tensor<2x4xf32> -> tensor<1x2x4xf32>
// CHECK-DAG: %[[S:.+]] = cleave.reshape %[[SIN]] : tensor<2x4xf32> -> tensor<1x2x4xf32>
// CHECK: %[[R:.+]] = cleave.rotary_embedding %[[Q]], %[[C]], %[[S]] : (tensor<2x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<2x1x2x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @rope_constant_tables(%q: tensor<2x1x2x4xf32>) -> tensor<2x1x2x4xf32> {
  %cos = cleave.constant dense<[[1.0, 0.5, 1.0, 0.5], [0.25, 0.125, 0.25, 0.125]]> : tensor<2x4xf32>
  %sin = cleave.constant dense<[[0.0, 2.0, 0.0, 2.0], [3.0, 4.0, 3.0, 4.0]]> : tensor<2x4xf32>
  %x1 = cleave.slice %q {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 2, 1, 2, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x1x2x4xf32>) -> tensor<2x1x2x2xf32>
  %x2 = cleave.slice %q {starts = array<i64: 0, 0, 0, 2>, ends = array<i64: 2, 1, 2, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x1x2x4xf32>) -> tensor<2x1x2x2xf32>
  %nx2 = cleave.neg %x2 : tensor<2x1x2x2xf32>
  %rot = cleave.concat %nx2, %x1 {axis = 3 : i64} : (tensor<2x1x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<2x1x2x4xf32>
  %a = cleave.mul %cos, %q : (tensor<2x4xf32>, tensor<2x1x2x4xf32>) -> tensor<2x1x2x4xf32>
  %b = cleave.mul %sin, %rot : (tensor<2x4xf32>, tensor<2x1x2x4xf32>) -> tensor<2x1x2x4xf32>
  %y = cleave.add %b, %a : (tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>) -> tensor<2x1x2x4xf32>
  return %y : tensor<2x1x2x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// RoPE, decompositions that must not fuse
//===----------------------------------------------------------------------===//

// Tables that are function arguments may have different halves: the ONNX
// op, which reads one half, would compute something else.
// CHECK-LABEL: func.func @rope_unknown_tables
// CHECK-NOT: cleave.rotary_embedding
func.func @rope_unknown_tables(%q: tensor<1x2x4x8xf32>, %cos: tensor<1x1x4x8xf32>, %sin: tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %x1 = cleave.slice %q {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 2, 4, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %x2 = cleave.slice %q {starts = array<i64: 0, 0, 0, 4>, ends = array<i64: 1, 2, 4, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %nx2 = cleave.neg %x2 : tensor<1x2x4x4xf32>
  %rot = cleave.concat %nx2, %x1 {axis = 3 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %a = cleave.mul %q, %cos : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %b = cleave.mul %rot, %sin : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = cleave.add %a, %b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// concat(x1, -x2) rotates the other way: not rotate_half.
// CHECK-LABEL: func.func @rope_wrong_rotation
// CHECK-NOT: cleave.rotary_embedding
func.func @rope_wrong_rotation(%q: tensor<1x2x4x8xf32>, %f: tensor<1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %emb = cleave.concat %f, %f {axis = 2 : i64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x8xf32>
  %cos0 = cleave.cos %emb : tensor<1x4x8xf32>
  %sin0 = cleave.sin %emb : tensor<1x4x8xf32>
  %cos = cleave.unsqueeze %cos0 {axes = array<i64: 1>} : (tensor<1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %sin = cleave.unsqueeze %sin0 {axes = array<i64: 1>} : (tensor<1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %x1 = cleave.slice %q {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 2, 4, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %x2 = cleave.slice %q {starts = array<i64: 0, 0, 0, 4>, ends = array<i64: 1, 2, 4, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %nx2 = cleave.neg %x2 : tensor<1x2x4x4xf32>
  %rot = cleave.concat %x1, %nx2 {axis = 3 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %a = cleave.mul %q, %cos : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %b = cleave.mul %rot, %sin : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = cleave.add %a, %b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Scaled dot-product attention
//===----------------------------------------------------------------------===//

// torch 2's dynamo export of SDPA with grouped-query heads: the keys and
// values are repeated to the query's 4 heads (unsqueeze, expand, reshape),
// k^T is the batched reshape/transpose/reshape, q and k^T are scaled by
// the square root of the scale each, the mask is added and the softmax is
// guarded (nan_to_zero). The fused op reads the expanded keys, viewed as
// batch x heads x sequence x head_size, and the expanded values.
// CHECK-LABEL: func.func @sdpa_grouped
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8x16xf32>, %[[K:.+]]: tensor<2x2x8x16xf32>, %[[V:.+]]: tensor<2x2x8x16xf32>, %[[M:.+]]: tensor<2x1x8x8xf32>)
// CHECK: %[[KE:.+]] = cleave.expand
// CHECK: %[[VE:.+]] = cleave.expand
// CHECK: %[[VR:.+]] = cleave.reshape %[[VE]] : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK: %[[KR:.+]] = cleave.reshape %[[KE]] : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT: %[[A:.+]] = cleave.attention %[[Q]], %[[KR]], %[[VR]], %[[M]] {kv_num_heads = 4 : i64, nan_to_zero, q_num_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x8x8xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[A]]
// CHECK-NOT: cleave.softmax
func.func @sdpa_grouped(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %mask: tensor<2x1x8x8xf32>) -> tensor<2x4x8x16xf32> {
  %root = cleave.constant dense<0.5> : tensor<f32>
  %k1 = cleave.unsqueeze %k {axes = array<i64: 2>} : (tensor<2x2x8x16xf32>) -> tensor<2x2x1x8x16xf32>
  %k2 = cleave.expand %k1 : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %v1 = cleave.unsqueeze %v {axes = array<i64: 2>} : (tensor<2x2x8x16xf32>) -> tensor<2x2x1x8x16xf32>
  %v2 = cleave.expand %v1 : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %v3 = cleave.reshape %v2 : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %kb = cleave.reshape %k2 : tensor<2x2x2x8x16xf32> -> tensor<8x8x16xf32>
  %kt = cleave.transpose %kb {perm = array<i64: 0, 2, 1>} : (tensor<8x8x16xf32>) -> tensor<8x16x8xf32>
  %kt4 = cleave.reshape %kt : tensor<8x16x8xf32> -> tensor<2x4x16x8xf32>
  %qs = cleave.mul %q, %root : (tensor<2x4x8x16xf32>, tensor<f32>) -> tensor<2x4x8x16xf32>
  %ks = cleave.mul %kt4, %root : (tensor<2x4x16x8xf32>, tensor<f32>) -> tensor<2x4x16x8xf32>
  %s = cleave.matmul %qs, %ks : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %b = cleave.add %s, %mask : (tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = cleave.softmax %b {axis = 3 : i64, nan_to_zero} : tensor<2x4x8x8xf32>
  %y = cleave.matmul %p, %v3 : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// The TorchScript exporter's form: k^T transposes the key projection
// (batch x sequence x heads x head_size) straight to batch x heads x
// head_size x sequence, and the scale divides the scores; the keys become
// the transpose that keeps the last two dimensions in order. No mask, no
// guard.
// CHECK-LABEL: func.func @sdpa_projection
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[P:.+]]: tensor<1x4x2x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
// CHECK: %[[K:.+]] = cleave.transpose %[[P]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[A:.+]] = cleave.attention %[[Q]], %[[K]], %[[V]] {kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 0.353553385 : f32}
// CHECK-NEXT: return %[[A]]
func.func @sdpa_projection(%q: tensor<1x2x4x8xf32>, %proj: tensor<1x4x2x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = cleave.constant dense<2.82842708> : tensor<f32>
  %kt = cleave.transpose %proj {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x8x4xf32>
  %s = cleave.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = cleave.div %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = cleave.softmax %d {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %y = cleave.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// T5: unscaled scores plus a position bias and a padding mask; the mask of
// the fused op is their sum.
// CHECK-LABEL: func.func @sdpa_two_biases
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x4x8xf32>, %[[K:.+]]: tensor<2x2x4x8xf32>, %[[V:.+]]: tensor<2x2x4x8xf32>, %[[B:.+]]: tensor<1x2x4x4xf32>, %[[M:.+]]: tensor<2x1x4x4xf32>)
// CHECK: %[[S:.+]] = cleave.add %[[M]], %[[B]] : (tensor<2x1x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<2x2x4x4xf32>
// CHECK-NEXT: %[[A:.+]] = cleave.attention %[[Q]], %[[K]], %[[V]], %[[S]] {kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 1.000000e+00 : f32}
// CHECK-NEXT: return %[[A]]
func.func @sdpa_two_biases(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %bias: tensor<1x2x4x4xf32>, %mask: tensor<2x1x4x4xf32>) -> tensor<2x2x4x8xf32> {
  %kt = cleave.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = cleave.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %b1 = cleave.add %s, %bias : (tensor<2x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %b2 = cleave.add %b1, %mask : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = cleave.softmax %b2 {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %y = cleave.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// torch's nn.MultiheadAttention: batch*heads x sequence x head_size
// products (rank 3), q divided by the square root of the head size, k^T
// transposed straight from the key projection (sequence x batch*heads x
// head_size), as Whisper's and wav2vec 2.0's encoders export it. The fused
// op views them as 6 batches of one head, so that the first dimension stays
// the one a batch split cuts; a mask of the scores' last two dimensions is
// viewed as rank 4 too.
// CHECK-LABEL: func.func @mha_batched
// CHECK-SAME: (%[[Q:.+]]: tensor<6x10x8xf32>, %[[P:.+]]: tensor<10x6x8xf32>, %[[V:.+]]: tensor<6x10x8xf32>, %[[M:.+]]: tensor<10x10xf32>)
// CHECK: %[[K:.+]] = cleave.transpose %[[P]] {perm = array<i64: 1, 0, 2>} : (tensor<10x6x8xf32>) -> tensor<6x10x8xf32>
// CHECK-NEXT: %[[Q4:.+]] = cleave.reshape %[[Q]] : tensor<6x10x8xf32> -> tensor<6x1x10x8xf32>
// CHECK-NEXT: %[[K4:.+]] = cleave.reshape %[[K]] : tensor<6x10x8xf32> -> tensor<6x1x10x8xf32>
// CHECK-NEXT: %[[V4:.+]] = cleave.reshape %[[V]] : tensor<6x10x8xf32> -> tensor<6x1x10x8xf32>
// CHECK-NEXT: %[[M4:.+]] = cleave.reshape %[[M]] : tensor<10x10xf32> -> tensor<1x1x10x10xf32>
// CHECK-NEXT: %[[A:.+]] = cleave.attention %[[Q4]], %[[K4]], %[[V4]], %[[M4]] {kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 0.353553385 : f32} : (tensor<6x1x10x8xf32>, tensor<6x1x10x8xf32>, tensor<6x1x10x8xf32>, tensor<1x1x10x10xf32>) -> tensor<6x1x10x8xf32>
// CHECK-NEXT: %[[Y:.+]] = cleave.reshape %[[A]] : tensor<6x1x10x8xf32> -> tensor<6x10x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @mha_batched(%q: tensor<6x10x8xf32>, %proj: tensor<10x6x8xf32>, %v: tensor<6x10x8xf32>, %mask: tensor<10x10xf32>) -> tensor<6x10x8xf32> {
  %c = cleave.constant dense<2.82842708> : tensor<f32>
  %qs = cleave.div %q, %c : (tensor<6x10x8xf32>, tensor<f32>) -> tensor<6x10x8xf32>
  %kt = cleave.transpose %proj {perm = array<i64: 1, 2, 0>} : (tensor<10x6x8xf32>) -> tensor<6x8x10xf32>
  %s = cleave.matmul %qs, %kt : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %b = cleave.add %s, %mask : (tensor<6x10x10xf32>, tensor<10x10xf32>) -> tensor<6x10x10xf32>
  %p = cleave.softmax %b {axis = 2 : i64} : tensor<6x10x10xf32>
  %y = cleave.matmul %p, %v : (tensor<6x10x10xf32>, tensor<6x10x8xf32>) -> tensor<6x10x8xf32>
  return %y : tensor<6x10x8xf32>
}

// -----

// Rank 3, left alone: a softmax over the queries, and k^T that is no
// transpose.
// CHECK-LABEL: func.func @mha_batched_not_fused
// CHECK-NOT: cleave.attention
// CHECK-COUNT-2: cleave.softmax
// CHECK-NOT: cleave.attention
func.func @mha_batched_not_fused(%q: tensor<6x10x8xf32>, %k: tensor<6x10x8xf32>, %kt: tensor<6x8x10xf32>, %v: tensor<6x10x8xf32>) -> (tensor<6x10x8xf32>, tensor<6x10x8xf32>) {
  %t = cleave.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<6x10x8xf32>) -> tensor<6x8x10xf32>
  %s1 = cleave.matmul %q, %t : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %p1 = cleave.softmax %s1 {axis = 1 : i64} : tensor<6x10x10xf32>
  %y1 = cleave.matmul %p1, %v : (tensor<6x10x10xf32>, tensor<6x10x8xf32>) -> tensor<6x10x8xf32>
  %s2 = cleave.matmul %q, %kt : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %p2 = cleave.softmax %s2 {axis = 2 : i64} : tensor<6x10x10xf32>
  %y2 = cleave.matmul %p2, %v : (tensor<6x10x10xf32>, tensor<6x10x8xf32>) -> tensor<6x10x8xf32>
  return %y1, %y2 : tensor<6x10x8xf32>, tensor<6x10x8xf32>
}

// -----

// Left alone: the probabilities are also returned (fusing would compute
// them twice), a softmax over another axis, keys that are not transposed,
// and float16.
// CHECK-LABEL: func.func @sdpa_not_fused
// CHECK-NOT: cleave.attention
// CHECK-COUNT-4: cleave.softmax
// CHECK-NOT: cleave.attention
func.func @sdpa_not_fused(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>, %h: tensor<1x2x4x4xf16>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf16>) {
  %kt = cleave.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s1 = cleave.matmul %q, %kt : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p1 = cleave.softmax %s1 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %y1 = cleave.matmul %p1, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %kt2 = cleave.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s2 = cleave.matmul %q, %kt2 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = cleave.softmax %s2 {axis = 2 : i64} : tensor<1x2x4x4xf32>
  %y2 = cleave.matmul %p2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s3 = cleave.matmul %q, %k : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p3 = cleave.softmax %s3 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %y3 = cleave.matmul %p3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %ht = cleave.transpose %h {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
  %s4 = cleave.matmul %h, %ht : (tensor<1x2x4x4xf16>, tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
  %p4 = cleave.softmax %s4 {axis = 3 : i64} : tensor<1x2x4x4xf16>
  %y4 = cleave.matmul %p4, %h : (tensor<1x2x4x4xf16>, tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
  return %p1, %y1, %y2, %y3, %y4 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf16>
}
