// RUN: cleave-opt %s -split-input-file -cleave-simplify | FileCheck %s

// The cleave-simplify pipeline folds constants before it fuses, so that
// decompositions written with computed constants are recognised, and
// canonicalizes the guards exporters write around ops.

// GELU, tanh form, with sqrt(2 / pi) computed in the graph as the square
// root of a division: the folds make it the constant the fusion expects.
// CHECK-LABEL: func.func @gelu_tanh_sqrt_of_constant
// CHECK-SAME: (%[[X:.+]]: tensor<2x16xf32>)
// CHECK-NEXT: %[[G:.+]] = cleave.gelu %[[X]] {approximate = "tanh"} : tensor<2x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh_sqrt_of_constant(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %two = cleave.constant dense<2.0> : tensor<f32>
  %pi = cleave.constant dense<3.14159274> : tensor<f32>
  %three = cleave.constant dense<3.0> : tensor<f32>
  %kappa = cleave.constant dense<4.471500e-02> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %half = cleave.constant dense<0.5> : tensor<f32>
  %ratio = cleave.div %two, %pi : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %beta = cleave.sqrt %ratio : tensor<f32>
  %0 = cleave.mul %half, %x : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %1 = cleave.pow %x, %three : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %2 = cleave.mul %kappa, %1 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %3 = cleave.add %x, %2 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %4 = cleave.mul %beta, %3 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %5 = cleave.tanh %4 : tensor<2x16xf32>
  %6 = cleave.add %one, %5 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %7 = cleave.mul %0, %6 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %7 : tensor<2x16xf32>
}

// -----

// Scaled dot-product attention with a boolean mask as torch's exporters
// write it: masked scores are -inf, and where(is_nan(softmax), 0, softmax)
// turns a fully masked row into zeros. The guard becomes the softmax's
// nan_to_zero.
// CHECK-LABEL: func.func @masked_attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x16xf32>, %[[K:[^:]+]]: tensor<2x16x8xf32>, %[[V:[^:]+]]: tensor<2x8x16xf32>, %[[M:[^:]+]]: tensor<2x8x8xi1>)
// CHECK: %[[S:.+]] = cleave.matmul %[[Q]], %[[K]]
// CHECK: %[[MASKED:.+]] = cleave.where %[[M]], %{{.+}}, %{{.+}} : (tensor<2x8x8xi1>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
// CHECK-NEXT: %[[P:.+]] = cleave.softmax %[[MASKED]] {axis = 2 : i64, nan_to_zero} : tensor<2x8x8xf32>
// CHECK-NEXT: %[[O:.+]] = cleave.matmul %[[P]], %[[V]]
// CHECK-NEXT: return %[[O]]
func.func @masked_attention(%q: tensor<2x8x16xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x8x16xf32>, %mask: tensor<2x8x8xi1>) -> tensor<2x8x16xf32> {
  %scale = cleave.constant dense<2.500000e-01> : tensor<f32>
  %ninf = cleave.constant dense<0xFF800000> : tensor<f32>
  %zero = cleave.constant dense<0.0> : tensor<f32>
  %0 = cleave.matmul %q, %k : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %1 = cleave.mul %0, %scale : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %2 = cleave.where %mask, %1, %ninf : (tensor<2x8x8xi1>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %3 = cleave.softmax %2 {axis = 2 : i64} : tensor<2x8x8xf32>
  %4 = cleave.is_nan %3 : tensor<2x8x8xf32> -> tensor<2x8x8xi1>
  %5 = cleave.where %4, %zero, %3 : (tensor<2x8x8xi1>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %6 = cleave.matmul %5, %v : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %6 : tensor<2x8x16xf32>
}
