// RUN: cleave-opt %s --cleave-mixed-precision --cleave-autodiff=loss=loss | FileCheck %s

// Differentiated after cleave-mixed-precision, the backward rounds as the
// forward does: the cotangent of the rounded product is rounded (the
// gradient of the casts), the weight's gradient is a product of the
// rounded input and that rounded cotangent, and its result is rounded
// before it is returned as the float32 gradient. The softmax's gradient
// stays float32.

// CHECK-LABEL: func.func @main
// CHECK-SAME: tensor<3x4xf32> {cleave.gradient_of = "w"
// CHECK: %[[XL:.*]] = cleave.cast %arg0 : tensor<2x3xf32> to tensor<2x3xbf16>
// CHECK: %[[XR:.*]] = cleave.cast %[[XL]] : tensor<2x3xbf16> to tensor<2x3xf32>
// CHECK: %[[S:.*]] = cleave.softmax
// CHECK: %[[DS:.*]] = cleave.mul %[[S]], %{{.*}} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[DL:.*]] = cleave.cast %[[DS]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK-NEXT: %[[DR:.*]] = cleave.cast %[[DL]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK-NEXT: %[[XT:.*]] = cleave.transpose %[[XR]]
// CHECK-NEXT: %[[DW:.*]] = cleave.matmul %[[XT]], %[[DR]] : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[GL:.*]] = cleave.cast %[[DW]] : tensor<3x4xf32> to tensor<3x4xbf16>
// CHECK-NEXT: %[[G:.*]] = cleave.cast %[[GL]] : tensor<3x4xbf16> to tensor<3x4xf32>
// CHECK-NEXT: return %{{.*}}, %[[G]] : tensor<f32>, tensor<3x4xf32>
func.func @main(%x: tensor<2x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 48 : i64} : tensor<3x4xf32>
  %y = cleave.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %s = cleave.softmax %y {axis = 1 : i64} : tensor<2x4xf32>
  %l = cleave.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
