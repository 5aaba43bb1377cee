// RUN: cleave-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))' \
// RUN:   | FileCheck %s

// The ShardingInterface models of cleave ops drive upstream propagation and
// partitioning: a column-parallel weight and a row-parallel weight give a
// Megatron MLP with one all-reduce after the second matmul and nothing
// between the two.

shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[W1:.*]]: tensor<16x32xf32>, %[[B1:.*]]: tensor<32xf32>, %[[W2:.*]]: tensor<32x16xf32>) -> tensor<4x16xf32>
// CHECK-NOT: shard.all_gather
// CHECK: %[[H:.*]] = cleave.matmul %[[X]], %[[W1]] : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT: %[[HB:.*]] = cleave.add %[[H]], %[[B1]] : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT: %[[G:.*]] = cleave.gelu %[[HB]] : tensor<4x32xf32>
// CHECK-NEXT: %[[Y:.*]] = cleave.matmul %[[G]], %[[W2]] : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[R:.*]] = shard.all_reduce %[[Y]] on @grid grid_axes = [0] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @mlp(%x: tensor<4x16xf32>, %w1: tensor<16x64xf32>, %b1: tensor<64xf32>, %w2: tensor<64x16xf32>) -> tensor<4x16xf32> {
  %col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %vec = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %row = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %w1s = shard.shard %w1 to %col : tensor<16x64xf32>
  %b1s = shard.shard %b1 to %vec : tensor<64xf32>
  %w2s = shard.shard %w2 to %row : tensor<64x16xf32>
  %h = cleave.matmul %x, %w1s : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
  %hb = cleave.add %h, %b1s : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %g = cleave.gelu %hb : tensor<4x64xf32>
  %y = cleave.matmul %g, %w2s : (tensor<4x64xf32>, tensor<64x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Heads: the hidden dimension split by a column-parallel projection becomes
// the head dimension across the head-splitting reshape; the 1x1xSxS mask
// broadcasts over the split heads and stays whole; softmax runs locally.

shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @heads
// CHECK-SAME: %{{.*}}: tensor<64x32xf32>, %[[MASK:.*]]: tensor<1x1x8x8xf32>) -> tensor<2x2x8x8xf32>
// CHECK-NOT: shard.
// CHECK: cleave.reshape %{{.*}} : tensor<2x8x32xf32> -> tensor<2x8x2x16xf32>
// CHECK: cleave.matmul %{{.*}}, %{{.*}} : (tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32>) -> tensor<2x2x8x8xf32>
// CHECK: cleave.add %{{.*}}, %[[MASK]] : (tensor<2x2x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x2x8x8xf32>
// CHECK: cleave.softmax %{{.*}} {axis = 3 : i64} : tensor<2x2x8x8xf32>
// CHECK-NOT: shard.
// CHECK: return
func.func @heads(%x: tensor<2x8x64xf32>, %wq: tensor<64x64xf32>, %mask: tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %wqs = shard.shard %wq to %col : tensor<64x64xf32>
  %q = cleave.matmul %x, %wqs : (tensor<2x8x64xf32>, tensor<64x64xf32>) -> tensor<2x8x64xf32>
  %h = cleave.reshape %q : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %t = cleave.transpose %h {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32>
  %kt = cleave.transpose %h {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x8x4x16xf32>) -> tensor<2x4x16x8xf32>
  %s = cleave.matmul %t, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %m = cleave.add %s, %mask : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = cleave.softmax %m {axis = 3 : i64} : tensor<2x4x8x8xf32>
  return %p : tensor<2x4x8x8xf32>
}

// -----

// The softmax axis is never split: an input split along it is gathered.

shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @softmax_axis
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>) -> tensor<4x16xf32>
// CHECK: %[[G:.*]] = shard.all_gather %[[X]] on @grid grid_axes = [0] gather_axis = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
// CHECK: cleave.softmax %{{.*}} {axis = 1 : i64} : tensor<4x16xf32>
func.func @softmax_axis(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x16xf32>
  %p = cleave.softmax %xs {axis = 1 : i64} : tensor<4x16xf32>
  return %p : tensor<4x16xf32>
}

// -----

// An embedding table split along its hidden dimension gathers locally; the
// layer norm over the hidden dimension needs it whole.

shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[T:.*]]: tensor<128x32xf32>, %[[IDS:.*]]: tensor<2x8xi64>
// CHECK: %[[E:.*]] = cleave.gather %[[T]], %[[IDS]] {axis = 0 : i64} : (tensor<128x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
// CHECK: shard.all_gather %[[E]] on @grid grid_axes = [0] gather_axis = 2 : tensor<2x8x32xf32> -> tensor<2x8x64xf32>
// CHECK: cleave.layer_norm %{{.*}} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
func.func @embedding(%table: tensor<128x64xf32>, %ids: tensor<2x8xi64>, %g: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ts = shard.shard %table to %s : tensor<128x64xf32>
  %e = cleave.gather %ts, %ids {axis = 0 : i64} : (tensor<128x64xf32>, tensor<2x8xi64>) -> tensor<2x8x64xf32>
  %n = cleave.layer_norm %e, %g {axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  return %n : tensor<2x8x64xf32>
}

// -----

// A split reduction loop combines with the reduction's own kind: the mean of
// halves is their average, not their sum.

shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @reduce_mean
// CHECK: %[[M:.*]] = cleave.reduce_mean %{{.*}} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: shard.all_reduce %[[M]] on @grid grid_axes = [0] reduction = {{ *}}average : tensor<4x1xf32> -> tensor<4x1xf32>
func.func @reduce_mean(%x: tensor<4x16xf32>) -> tensor<4x1xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x16xf32>
  %m = cleave.reduce_mean %xs {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  return %m : tensor<4x1xf32>
}

// -----

// Expert selection by run-time indices (Mixtral's gather_nd of one expert's
// weights) runs on the local block of weights split along their output
// dimension: the tuple addresses the expert dimension, which stays whole,
// so every index is checked against the full expert count.

shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @expert_select
// CHECK-SAME: (%[[E:.*]]: tensor<4x16x16xf32>, %[[IDS:.*]]: tensor<2x1xi64>)
// CHECK: %[[W:.*]] = cleave.gather_nd %[[E]], %[[IDS]] : (tensor<4x16x16xf32>, tensor<2x1xi64>) -> tensor<2x16x16xf32>
// CHECK: shard.all_gather %[[W]] on @grid grid_axes = [0] gather_axis = 2 : tensor<2x16x16xf32> -> tensor<2x16x32xf32>
func.func @expert_select(%experts: tensor<4x16x32xf32>, %ids: tensor<2x1xi64>) -> tensor<2x16x32xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %es = shard.shard %experts to %s : tensor<4x16x32xf32>
  %w = cleave.gather_nd %es, %ids : (tensor<4x16x32xf32>, tensor<2x1xi64>) -> tensor<2x16x32xf32>
  %p = cleave.softmax %w {axis = 2 : i64} : tensor<2x16x32xf32>
  return %p : tensor<2x16x32xf32>
}

// -----

// A scatter's axis is never split: data split along it is gathered first.

shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @scatter_axis
// CHECK-SAME: (%[[X:.*]]: tensor<2x6xf32>
// CHECK: shard.all_gather %[[X]] on @grid grid_axes = [0] gather_axis = 0 : tensor<2x6xf32> -> tensor<4x6xf32>
// CHECK: cleave.scatter_elements %{{.*}} {axis = 0 : i64} : (tensor<4x6xf32>, tensor<4x6xi64>, tensor<4x6xf32>) -> tensor<4x6xf32>
func.func @scatter_axis(%x: tensor<4x6xf32>, %ids: tensor<4x6xi64>, %u: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x6xf32>
  %y = cleave.scatter_elements %xs, %ids, %u {axis = 0 : i64} : (tensor<4x6xf32>, tensor<4x6xi64>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// Attention split by heads: each device's op computes its own heads, so its
// head counts are the local ones (the whole op's 4 would not match its
// operands).

shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @attention_heads
// CHECK-NOT: shard.all_gather
// CHECK: %[[Y:.*]] = cleave.attention %{{.*}}, %{{.*}}, %{{.*}} {is_causal, kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
// CHECK: shard.all_gather %[[Y]] on @grid grid_axes = [0] gather_axis = 1 : tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
func.func @attention_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x4x8x16xf32>
  %ks = shard.shard %k to %s : tensor<1x4x8x16xf32>
  %vs = shard.shard %v to %s : tensor<1x4x8x16xf32>
  %y = cleave.attention %qs, %ks, %vs {is_causal, kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  %r = cleave.relu %y : tensor<1x4x8x16xf32>
  %unsplit = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ru = shard.shard %r to %unsplit annotate_for_users : tensor<1x4x8x16xf32>
  return %ru : tensor<1x4x8x16xf32>
}
