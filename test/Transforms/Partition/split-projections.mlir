// RUN: cleave-opt %s -split-input-file --cleave-split-projections | FileCheck %s
// RUN: cleave-opt %s -split-input-file --cleave-split-projections --cleave-split-projections | FileCheck %s

// A fused QKV projection with its bias becomes three projections on windows
// of the fused weight and bias, which keep the plan's attributes.

// CHECK-LABEL: func.func @fused_qkv
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>)
// CHECK-NOT: cleave.split
// CHECK-NOT: cleave.weight "
// CHECK: %[[W0:.*]] = cleave.weight_slice "qkv.weight" {cleave.stage = 1 : i64, file = "/m.data", length = 49152 : i64, offset = 0 : i64, shape = array<i64: 64, 192>, starts = array<i64: 0, 0>} : tensor<64x64xf32>
// CHECK-NEXT: %[[Y0:.*]] = cleave.matmul %[[X]], %[[W0]] {cleave.stage = 1 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x64xf32>, tensor<64x64xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: %[[B0:.*]] = cleave.weight_slice "qkv.bias" {cleave.stage = 1 : i64, file = "/m.data", length = 768 : i64, offset = 49152 : i64, shape = array<i64: 192>, starts = array<i64: 0>} : tensor<64xf32>
// CHECK-NEXT: %[[Q:.*]] = cleave.add %[[Y0]], %[[B0]] {cleave.stage = 1 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
// CHECK: cleave.weight_slice "qkv.weight" {{.*}}starts = array<i64: 0, 64>} : tensor<64x64xf32>
// CHECK: cleave.weight_slice "qkv.bias" {{.*}}starts = array<i64: 64>} : tensor<64xf32>
// CHECK: %[[W2:.*]] = cleave.weight_slice "qkv.weight" {{.*}}starts = array<i64: 0, 128>} : tensor<64x64xf32>
// CHECK-NEXT: %[[Y2:.*]] = cleave.matmul %[[X]], %[[W2]]
// CHECK-NEXT: %[[B2:.*]] = cleave.weight_slice "qkv.bias" {{.*}}starts = array<i64: 128>} : tensor<64xf32>
// CHECK-NEXT: %[[V:.*]] = cleave.add %[[Y2]], %[[B2]]
// CHECK: return %[[Q]], %{{.*}}, %[[V]]
func.func @fused_qkv(%x: tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  %w = cleave.weight "qkv.weight" {file = "/m.data", offset = 0 : i64, length = 49152 : i64, cleave.stage = 1 : i64} : tensor<64x192xf32>
  %b = cleave.weight "qkv.bias" {file = "/m.data", offset = 49152 : i64, length = 768 : i64, cleave.stage = 1 : i64} : tensor<192xf32>
  %y = cleave.matmul %x, %w {cleave.stage = 1 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x64xf32>, tensor<64x192xf32>) -> tensor<2x8x192xf32>
  %z = cleave.add %y, %b {cleave.stage = 1 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x192xf32>, tensor<192xf32>) -> tensor<2x8x192xf32>
  %q, %k, %v = cleave.split %z {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  return %q, %k, %v : tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// -----

// Without a bias, with uneven pieces, on a window of a larger weight (the
// windows compose).

// CHECK-LABEL: func.func @window
// CHECK: %[[W0:.*]] = cleave.weight_slice "w" {{{.*}}shape = array<i64: 16, 64>, starts = array<i64: 0, 32>} : tensor<16x8xf32>
// CHECK-NEXT: cleave.matmul %{{.*}}, %[[W0]] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[W1:.*]] = cleave.weight_slice "w" {{{.*}}shape = array<i64: 16, 64>, starts = array<i64: 0, 40>} : tensor<16x24xf32>
// CHECK-NEXT: cleave.matmul %{{.*}}, %[[W1]] : (tensor<4x16xf32>, tensor<16x24xf32>) -> tensor<4x24xf32>
// CHECK-NOT: cleave.split
func.func @window(%x: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x24xf32>) {
  %w = cleave.weight_slice "w" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, shape = array<i64: 16, 64>, starts = array<i64: 0, 32>} : tensor<16x32xf32>
  %y = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %a, %b = cleave.split %y {axis = 1 : i64, sizes = array<i64: 8, 24>} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x24xf32>)
  return %a, %b : tensor<4x8xf32>, tensor<4x24xf32>
}

// -----

// Left alone: a split along another axis, a projection whose output has
// another user, a projection of an activation.

// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-3: cleave.split
// CHECK-NOT: cleave.weight_slice
func.func @untouched(%x: tensor<4x16xf32>, %v: tensor<16x32xf32>) -> (tensor<2x32xf32>, tensor<4x16xf32>, tensor<4x32xf32>, tensor<4x16xf32>) {
  %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 2048 : i64} : tensor<16x32xf32>
  %y = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %a, %b = cleave.split %y {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x32xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>)
  %y2 = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %c, %d = cleave.split %y2 {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<4x32xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  %y3 = cleave.matmul %x, %v : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %e, %f = cleave.split %y3 {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<4x32xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  return %a, %c, %y2, %e : tensor<2x32xf32>, tensor<4x16xf32>, tensor<4x32xf32>, tensor<4x16xf32>
}
