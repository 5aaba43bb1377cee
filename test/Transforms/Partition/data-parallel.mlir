// RUN: cleave-opt %s --cleave-partition | FileCheck %s

// Two data-parallel replicas of two microbatches each cut a batch of 8 into
// 4 blocks: the program computes 2 samples, through a convolution, a pool
// and a tensor-parallel matmul (the batch axis and the tp axis split
// different loops). The graph ports say which dimension holds the batch,
// and no communication crosses the blocks: only the tp slice and all-reduce
// remain.

// CHECK-LABEL: func.func @stage_0
// CHECK-SAME: (%{{.*}}: tensor<2x3x8x8xf32> {cleave.batch_dim = 0 : i64, cleave.input = 0 : i64})
// CHECK-SAME: -> (tensor<2x10xf32> {cleave.batch_dim = 0 : i64, cleave.output = 0 : i64})
// CHECK: cleave.conv %{{.*}} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
// CHECK: cleave.global_average_pool %{{.*}} : (tensor<2x4x6x6xf32>) -> tensor<2x4x1x1xf32>
// CHECK: cleave.all_slice %{{.*}} {axis = "tp", dim = 1 : i64, group_size = 2 : i64} : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK-NEXT: cleave.matmul %{{.*}} : (tensor<2x2xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
// CHECK-NEXT: cleave.all_reduce %{{.*}} {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<2x10xf32>
// CHECK-NOT: cleave.all_
// CHECK: return

module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 2 : i64}, cleave.microbatches = 2 : i64} {
  func.func @main(%x: tensor<8x3x8x8xf32>) -> tensor<8x10xf32> {
    %w = cleave.weight "conv.weight" {file = "/m.data", offset = 0 : i64, length = 432 : i64, cleave.stage = 0 : i64} : tensor<4x3x3x3xf32>
    %b = cleave.weight "conv.bias" {file = "/m.data", offset = 432 : i64, length = 16 : i64, cleave.stage = 0 : i64} : tensor<4xf32>
    %fc = cleave.weight "fc.weight" {file = "/m.data", offset = 448 : i64, length = 160 : i64, cleave.stage = 0 : i64} : tensor<4x10xf32>
    %c = cleave.conv %x, %w, %b {cleave.stage = 0 : i64, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<8x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<8x4x6x6xf32>
    %p = cleave.global_average_pool %c {cleave.stage = 0 : i64} : (tensor<8x4x6x6xf32>) -> tensor<8x4x1x1xf32>
    %f = cleave.reshape %p {cleave.stage = 0 : i64} : tensor<8x4x1x1xf32> -> tensor<8x4xf32>
    %y = cleave.matmul %f, %fc {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : (tensor<8x4xf32>, tensor<4x10xf32>) -> tensor<8x10xf32>
    return %y : tensor<8x10xf32>
  }
}
