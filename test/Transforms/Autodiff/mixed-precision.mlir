// RUN: cleave-opt %s --split-input-file --cleave-mixed-precision | FileCheck %s
// RUN: cleave-opt %s --split-input-file --cleave-mixed-precision=precision=fp16 | FileCheck %s --check-prefix=F16

// A matmul reads both operands rounded to bf16 and its result is rounded;
// the softmax after it, the reduction and the weight stay float32.

// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = cleave.weight "w"{{.*}} : tensor<3x4xf32>
// CHECK: %[[XL:.*]] = cleave.cast %arg0 : tensor<2x3xf32> to tensor<2x3xbf16>
// CHECK: %[[XR:.*]] = cleave.cast %[[XL]] : tensor<2x3xbf16> to tensor<2x3xf32>
// CHECK: %[[WL:.*]] = cleave.cast %[[W]] : tensor<3x4xf32> to tensor<3x4xbf16>
// CHECK: %[[WR:.*]] = cleave.cast %[[WL]] : tensor<3x4xbf16> to tensor<3x4xf32>
// CHECK: %[[Y:.*]] = cleave.matmul %[[XR]], %[[WR]] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[YL:.*]] = cleave.cast %[[Y]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: %[[YR:.*]] = cleave.cast %[[YL]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK: %[[S:.*]] = cleave.softmax %[[YR]] {{.*}}: tensor<2x4xf32>
// CHECK-NOT: cleave.cast
// CHECK: cleave.reduce_sum %[[S]] {{.*}} : (tensor<2x4xf32>) -> tensor<f32>

// F16-LABEL: func.func @main
// F16: cleave.cast %arg0 : tensor<2x3xf32> to tensor<2x3xf16>
// F16: cleave.matmul
// F16: cleave.cast %{{.*}} : tensor<2x4xf32> to tensor<2x4xf16>
func.func @main(%x: tensor<2x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 48 : i64} : tensor<3x4xf32>
  %y = cleave.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %s = cleave.softmax %y {axis = 1 : i64} : tensor<2x4xf32>
  %l = cleave.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Gemm rounds all three operands (the bias too); layer_norm's input is the
// rounded product, its statistics, scale and bias stay float32.

// CHECK-LABEL: func.func @main
// CHECK-DAG: cleave.cast %arg0 : tensor<2x3xf32> to tensor<2x3xbf16>
// CHECK-DAG: cleave.cast %arg1 : tensor<4x3xf32> to tensor<4x3xbf16>
// CHECK-DAG: cleave.cast %arg2 : tensor<4xf32> to tensor<4xbf16>
// CHECK: %[[G:.*]] = cleave.gemm
// CHECK: %[[GL:.*]] = cleave.cast %[[G]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: %[[GR:.*]] = cleave.cast %[[GL]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK: cleave.layer_norm %[[GR]], %arg3, %arg3
// CHECK-NOT: cleave.cast
// CHECK: return
func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %c: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = cleave.gemm %a, %b, %c {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %n = cleave.layer_norm %y, %g, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}

// -----

// Convolutions round the input, the kernel and the bias.

// CHECK-LABEL: func.func @main
// CHECK-DAG: cleave.cast %arg0 : tensor<2x3x7x6xf32> to tensor<2x3x7x6xbf16>
// CHECK-DAG: cleave.cast %arg1 : tensor<4x3x3x2xf32> to tensor<4x3x3x2xbf16>
// CHECK-DAG: cleave.cast %arg2 : tensor<4xf32> to tensor<4xbf16>
// CHECK: %[[C:.*]] = cleave.conv
// CHECK: cleave.cast %[[C]] : tensor<2x4x4x5xf32> to tensor<2x4x4x5xbf16>
// CHECK: %[[CR:.*]] = cleave.cast %{{.*}} : tensor<2x4x4x5xbf16> to tensor<2x4x4x5xf32>
// CHECK: cleave.cast %[[CR]] : tensor<2x4x4x5xf32> to tensor<2x4x4x5xbf16>
// CHECK: %[[T:.*]] = cleave.conv_transpose
// CHECK: cleave.cast %[[T]] : tensor<2x3x7x6xf32> to tensor<2x3x7x6xbf16>
func.func @main(%x: tensor<2x3x7x6xf32>, %w: tensor<4x3x3x2xf32>, %b: tensor<4xf32>) -> tensor<2x3x7x6xf32> {
  %y = cleave.conv %x, %w, %b {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 2>} : (tensor<2x3x7x6xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<2x4x4x5xf32>
  %t = cleave.conv_transpose %y, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 2>, output_padding = array<i64: 0, 0>} : (tensor<2x4x4x5xf32>, tensor<4x3x3x2xf32>) -> tensor<2x3x7x6xf32>
  return %t : tensor<2x3x7x6xf32>
}

// -----

// Attention rounds its query, key and value; its additive mask stays
// float32, as the scores it is added to are read by the softmax in float32.

// CHECK-LABEL: func.func @main
// CHECK-DAG: cleave.cast %arg0 : tensor<2x3x16xf32> to tensor<2x3x16xbf16>
// CHECK-DAG: cleave.cast %arg1 : tensor<2x5x8xf32> to tensor<2x5x8xbf16>
// CHECK-DAG: cleave.cast %arg2 : tensor<2x5x8xf32> to tensor<2x5x8xbf16>
// CHECK-NOT: cleave.cast %arg3
// CHECK: %[[A:.*]] = cleave.attention %{{.*}}, %{{.*}}, %{{.*}}, %arg3
// CHECK: cleave.cast %[[A]] : tensor<2x3x16xf32> to tensor<2x3x16xbf16>
func.func @main(%q: tensor<2x3x16xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>, %mask: tensor<3x5xf32>) -> tensor<2x3x16xf32> {
  %y = cleave.attention %q, %k, %v, %mask {kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 0.5 : f32} : (tensor<2x3x16xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<3x5xf32>) -> tensor<2x3x16xf32>
  return %y : tensor<2x3x16xf32>
}
