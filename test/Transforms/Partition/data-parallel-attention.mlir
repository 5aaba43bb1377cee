// RUN: cleave-opt %s --cleave-shard-plan | FileCheck %s --check-prefix=PLAN
// RUN: cleave-opt %s --cleave-partition | FileCheck %s

// Sequence-first attention, as torch's MultiheadAttention writes it, cut
// into two data-parallel replicas. The batch of 4 moves from dimension 1 of
// `[S, B, H]` into `[S, B * nh, hd]` (the samples are the major factor), then
// into `[S * B, H]` below the sequence (the samples interleave), and back.
// The reshapes whose loops do not pair those dimensions carry the batch pair
// (`cleave.batch_dims`), and each replica computes the same ops at a batch
// of 2, with no communication.

// PLAN: cleave.reshape %{{[^ ]+}} {cleave.stage = 0 : i64} : tensor<8x4x16xf32> -> tensor<8x8x8xf32>
// PLAN: cleave.reshape {{.*}}{cleave.batch_dims = array<i64: 1, 0>{{.*}} : tensor<8x8x8xf32> -> tensor<32x16xf32>
// PLAN: cleave.reshape {{.*}}{cleave.batch_dims = array<i64: 0, 1>{{.*}} : tensor<32x16xf32> -> tensor<8x4x16xf32>

// CHECK-LABEL: func.func @stage_0
// CHECK-SAME: (%{{.*}}: tensor<2x8x16xf32> {cleave.batch_dim = 0 : i64, cleave.input = 0 : i64})
// CHECK-SAME: -> (tensor<2x8x16xf32> {cleave.batch_dim = 0 : i64, cleave.output = 0 : i64})
// CHECK-NOT: cleave.all_
// CHECK: cleave.transpose %{{.*}} : (tensor<2x8x16xf32>) -> tensor<8x2x16xf32>
// CHECK: cleave.reshape %{{.*}} : tensor<8x2x16xf32> -> tensor<8x4x8xf32>
// CHECK: cleave.softmax %{{.*}} : tensor<4x8x8xf32>
// CHECK: cleave.reshape %{{[^ ]+}} : tensor<8x4x8xf32> -> tensor<16x16xf32>
// CHECK: cleave.gemm %{{.*}} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
// CHECK: cleave.reshape %{{[^ ]+}} : tensor<16x16xf32> -> tensor<8x2x16xf32>
// CHECK-NOT: cleave.all_
// CHECK: return

module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 2 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
    %w = cleave.weight "out_proj.weight" {file = "/m.data", offset = 0 : i64, length = 1024 : i64, cleave.stage = 0 : i64} : tensor<16x16xf32>
    %b = cleave.weight "out_proj.bias" {file = "/m.data", offset = 1024 : i64, length = 64 : i64, cleave.stage = 0 : i64} : tensor<16xf32>
    %t = cleave.transpose %x {cleave.stage = 0 : i64, perm = array<i64: 1, 0, 2>} : (tensor<4x8x16xf32>) -> tensor<8x4x16xf32>
    %heads = cleave.reshape %t {cleave.stage = 0 : i64} : tensor<8x4x16xf32> -> tensor<8x8x8xf32>
    %q = cleave.transpose %heads {cleave.stage = 0 : i64, perm = array<i64: 1, 0, 2>} : (tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %p = cleave.softmax %q {axis = 2 : i64, cleave.stage = 0 : i64} : tensor<8x8x8xf32>
    %back = cleave.transpose %p {cleave.stage = 0 : i64, perm = array<i64: 1, 0, 2>} : (tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %rows = cleave.reshape %back {cleave.stage = 0 : i64} : tensor<8x8x8xf32> -> tensor<32x16xf32>
    %proj = cleave.gemm %rows, %w, %b {cleave.stage = 0 : i64, trans_b = true} : (tensor<32x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<32x16xf32>
    %seq = cleave.reshape %proj {cleave.stage = 0 : i64} : tensor<32x16xf32> -> tensor<8x4x16xf32>
    %y = cleave.transpose %seq {cleave.stage = 0 : i64, perm = array<i64: 1, 0, 2>} : (tensor<8x4x16xf32>) -> tensor<4x8x16xf32>
    return %y : tensor<4x8x16xf32>
  }
}
