// RUN: cleave-opt %s --cleave-partition | FileCheck %s

// A Megatron MLP: FC1 column-parallel (its N loop split), the bias and GELU
// split along with it, FC2 row-parallel (its K loop split). Exactly one
// all-reduce, after FC2 and before its bias; nothing between FC1 and FC2.

module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %w1 = cleave.weight "fc1.weight" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, cleave.stage = 0 : i64} : tensor<16x64xf32>
    %b1 = cleave.weight "fc1.bias" {file = "/m.data", offset = 4096 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<64xf32>
    %w2 = cleave.weight "fc2.weight" {file = "/m.data", offset = 4352 : i64, length = 4096 : i64, cleave.stage = 0 : i64} : tensor<64x16xf32>
    %b2 = cleave.weight "fc2.bias" {file = "/m.data", offset = 8448 : i64, length = 64 : i64, cleave.stage = 0 : i64} : tensor<16xf32>
    %h = cleave.matmul %x, %w1 {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
    %hb = cleave.add %h, %b1 {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
    %g = cleave.gelu %hb {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : tensor<4x64xf32>
    %y = cleave.matmul %g, %w2 {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : (tensor<4x64xf32>, tensor<64x16xf32>) -> tensor<4x16xf32>
    %yb = cleave.add %y, %b2 {cleave.stage = 0 : i64} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    return %yb : tensor<4x16xf32>
  }
}

// CHECK-NOT: shard.
// CHECK-NOT: func.func @main
// CHECK-LABEL: func.func @stage_0
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32> {cleave.input = 0 : i64}) -> (tensor<4x16xf32> {cleave.output = 0 : i64})
// CHECK-SAME: attributes {cleave.stage = 0 : i64}
// CHECK-DAG: %[[W1:.*]] = cleave.weight_slice "fc1.weight" {{{.*}}group_size = 2 : i64{{.*}}shape = array<i64: 16, 64>, split_dim = 1 : i64{{.*}}} : tensor<16x32xf32>
// CHECK-DAG: %[[B1:.*]] = cleave.weight_slice "fc1.bias" {{{.*}}split_dim = 0 : i64{{.*}}} : tensor<32xf32>
// CHECK-DAG: %[[W2:.*]] = cleave.weight_slice "fc2.weight" {{{.*}}shape = array<i64: 64, 16>, split_dim = 0 : i64{{.*}}} : tensor<32x16xf32>
// CHECK-DAG: %[[B2:.*]] = cleave.weight "fc2.bias" {{.*}} : tensor<16xf32>
// CHECK: %[[H:.*]] = cleave.matmul %[[X]], %[[W1]] : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
// CHECK-NOT: cleave.all_
// CHECK: %[[HB:.*]] = cleave.add %[[H]], %[[B1]] : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
// CHECK-NOT: cleave.all_
// CHECK: %[[G:.*]] = cleave.gelu %[[HB]] : tensor<4x32xf32>
// CHECK-NOT: cleave.all_
// CHECK: %[[Y:.*]] = cleave.matmul %[[G]], %[[W2]] : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[R:.*]] = cleave.all_reduce %[[Y]] {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4x16xf32>
// CHECK-NEXT: %[[YB:.*]] = cleave.add %[[R]], %[[B2]] : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NOT: cleave.all_
// CHECK: return %[[YB]]
// CHECK-NOT: func.func
