// RUN: cleave-opt %s -verify-diagnostics --cleave-print-loop-shardings -o /dev/null

// The loops getShardableLoops offers the planner for two devices, and the
// layout getLoopSharding gives each operand and result. Size-1 broadcast
// dimensions, normalised axes, joined and split axes, partial slices and
// the minor dimensions of reshape groups are never split.

func.func @ops(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b3: tensor<2x4x16xf32>, %bb: tensor<1x16x8xf32>, %v: tensor<16xf32>,
               %s: tensor<2x4x8x8xf32>, %mask: tensor<1x1x8x8xf32>, %ids: tensor<2x8xi64>, %t: tensor<128x64xf32>,
               %h: tensor<2x8x64xf32>, %c: tensor<8xf32>, %g: tensor<64xf32>, %cond: tensor<4x16xi1>) {
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0), replicated] results [split(0)]; loop 1 (parallel, 8): operands [replicated, split(1)] results [split(1)]; loop 2 (reduction, 16): operands [split(1), split(0)] results [partial(sum)]}}
  %0 = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), replicated] results [split(0)]; loop 1 (parallel, 4): operands [split(1), replicated] results [split(1)]; loop 2 (parallel, 8): operands [replicated, split(2)] results [split(2)]; loop 3 (reduction, 16): operands [split(2), split(1)] results [partial(sum)]}}
  %1 = cleave.matmul %b3, %bb : (tensor<2x4x16xf32>, tensor<1x16x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @below {{loop 0 (parallel, 8): operands [replicated, split(1)] results [split(0)]; loop 1 (reduction, 16): operands [split(0), split(0)] results [partial(sum)]}}
  %2 = cleave.matmul %v, %w : (tensor<16xf32>, tensor<16x8xf32>) -> tensor<8xf32>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0), replicated, replicated] results [split(0)]; loop 1 (parallel, 8): operands [replicated, split(1), split(0)] results [split(1)]}}
  %3 = cleave.gemm %x, %w, %c : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{loop 0 (parallel, 16): operands [split(1)] results [split(0)]; loop 1 (parallel, 4): operands [split(0)] results [split(1)]}}
  %4 = cleave.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0)] results [split(0)]; loop 1 (reduction, 16): operands [split(1)] results [partial(average)]}}
  %5 = cleave.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0)] results [split(0)]}}
  %6 = cleave.reduce_l2 %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0)] results [split(0)]; loop 1 (parallel, 4): operands [split(1)] results [split(1)]; loop 2 (parallel, 8): operands [split(2)] results [split(2)]}}
  %7 = cleave.softmax %s {axis = 3 : i64} : tensor<2x4x8x8xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), replicated] results [split(0)]; loop 1 (parallel, 4): operands [split(1), replicated] results [split(1)]; loop 2 (parallel, 8): operands [split(2), split(2)] results [split(2)]; loop 3 (parallel, 8): operands [split(3), split(3)] results [split(3)]}}
  %8 = cleave.add %s, %mask : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), replicated] results [split(0)]; loop 1 (parallel, 8): operands [split(1), replicated] results [split(1)]}}
  %9 = cleave.layer_norm %h, %g {axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [replicated, split(0)] results [split(0)]; loop 1 (parallel, 8): operands [replicated, split(1)] results [split(1)]; loop 2 (parallel, 64): operands [split(1), replicated] results [split(2)]}}
  %10 = cleave.gather %t, %ids {axis = 0 : i64} : (tensor<128x64xf32>, tensor<2x8xi64>) -> tensor<2x8x64xf32>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0), split(0)] results [split(0)]}}
  %11 = cleave.concat %x, %x {axis = 1 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0)] results [split(0), split(0)]}}
  %12:2 = cleave.split %x {axis = 1 : i64, sizes = array<i64: 8, 8>} : (tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0)] results [split(0)]}}
  %13 = cleave.slice %x {starts = array<i64: 0, 2>, ends = array<i64: 4, 10>, steps = array<i64: 1, 1>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0)] results [split(0)]; loop 1 (parallel, 8): operands [split(1)] results [split(1)]; loop 2 (parallel, 4): operands [split(2)] results [split(2)]}}
  %14 = cleave.reshape %h : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0)] results [split(0)]; loop 1 (parallel, 8): operands [split(1)] results [split(1)]; loop 2 (parallel, 64): operands [split(2)] results [split(2)]}}
  %15 = cleave.reshape %14 : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  // expected-remark @below {{loop 1 (parallel, 4): operands [split(0)] results [split(1)]; loop 2 (parallel, 16): operands [split(1)] results [split(2)]}}
  %16 = cleave.unsqueeze %x {axes = array<i64: 0>} : (tensor<4x16xf32>) -> tensor<1x4x16xf32>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(1)] results [split(0)]; loop 1 (parallel, 16): operands [split(2)] results [split(1)]}}
  %17 = cleave.squeeze %16 {axes = array<i64: 0>} : (tensor<1x4x16xf32>) -> tensor<4x16xf32>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0), split(0), replicated] results [split(0)]; loop 1 (parallel, 16): operands [split(1), split(1), split(0)] results [split(1)]}}
  %18 = cleave.where %cond, %x, %v : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // expected-remark @below {{loop 0 (parallel, 16): operands [] results [split(0)]; loop 1 (parallel, 8): operands [] results [split(1)]}}
  %19 = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 512 : i64} : tensor<16x8xf32>
  // expected-remark @below {{loop 0 (parallel, 16): operands [split(0)] results [split(0)]; loop 1 (parallel, 64): operands [split(2)] results [split(1)]}}
  %20 = cleave.reshape %h : tensor<2x8x64xf32> -> tensor<16x64xf32>
  // The batch pair of a cut batch (`cleave.batch_dims`) replaces the major
  // pair of its group: read as torch's `[S, B, H] -> [S * B, H]`, dimension
  // 1 of %h pairs with dimension 0 of the result.
  // expected-remark @below {{loop 0 (parallel, 16): operands [split(1)] results [split(0)]; loop 1 (parallel, 64): operands [split(2)] results [split(1)]}}
  %21 = cleave.reshape %h {cleave.batch_dims = array<i64: 1, 0>} : tensor<2x8x64xf32> -> tensor<16x64xf32>
  // A pair outside the shapes, or across two groups, describes no reshape.
  // expected-remark @below {{no loop splits 2 ways}}
  %22 = cleave.reshape %h {cleave.batch_dims = array<i64: 1, 2>} : tensor<2x8x64xf32> -> tensor<16x64xf32>
  // expected-remark @below {{no loop splits 2 ways}}
  %23 = cleave.reshape %h {cleave.batch_dims = array<i64: 2, 0>} : tensor<2x8x64xf32> -> tensor<16x64xf32>
  return
}


// Indexing by tensors: dimensions that index tuples or an axis address are
// never split (an index may point anywhere in them), nor a dimension in
// which the indices are smaller than data (their positions are global); a
// one-hot's depth and a trilu's matrices stay whole.
func.func @index_ops(%d: tensor<2x5x8xf32>, %i: tensor<2x3x1xi64>, %x: tensor<4x6xf32>, %ti: tensor<3x1xi64>, %tu: tensor<3x6xf32>,
                     %e: tensor<4x2xi64>, %es: tensor<2x6xi64>, %eu: tensor<2x6xf32>, %ids: tensor<2x3xi64>, %v: tensor<2xf32>, %m: tensor<2x4x4xf32>) {
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), split(0)] results [split(0)]; loop 2 (parallel, 8): operands [split(2), replicated] results [split(2)]}}
  %0 = cleave.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi64>) -> tensor<2x3x8xf32>
  // expected-remark @below {{loop 1 (parallel, 6): operands [split(1), replicated, split(1)] results [split(1)]}}
  %1 = cleave.scatter_nd %x, %ti, %tu {reduction = "add"} : (tensor<4x6xf32>, tensor<3x1xi64>, tensor<3x6xf32>) -> tensor<4x6xf32>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0), split(0)] results [split(0)]; loop 1 (parallel, 2): operands [replicated, split(1)] results [split(1)]}}
  %2 = cleave.gather_elements %x, %e {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  // expected-remark @below {{loop 1 (parallel, 6): operands [replicated, split(1)] results [split(1)]}}
  %3 = cleave.gather_elements %x, %es {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2x6xi64>) -> tensor<2x6xf32>
  // expected-remark @below {{loop 1 (parallel, 6): operands [split(1), split(1), split(1)] results [split(1)]}}
  %4 = cleave.scatter_elements %x, %es, %eu {axis = 0 : i64} : (tensor<4x6xf32>, tensor<2x6xi64>, tensor<2x6xf32>) -> tensor<4x6xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), replicated] results [split(0)]}}
  %5 = cleave.one_hot %ids, %v {depth = 10 : i64, axis = 1 : i64} : (tensor<2x3xi64>, tensor<2xf32>) -> tensor<2x10x3xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0)] results [split(0)]}}
  %6 = cleave.trilu %m {k = 1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return
}

// The fused transformer ops: rms_norm never splits its normalised axes;
// rotary_embedding never splits a head; attention splits query heads only
// when they are the key/value heads (not grouped), query positions only
// when not causal, and 3-D inputs by batch and query position.
func.func @fused(%h: tensor<2x8x64xf32>, %g: tensor<64xf32>, %q: tensor<2x4x8x16xf32>, %kv: tensor<2x2x8x16xf32>, %k4: tensor<2x4x8x16xf32>,
                 %cos: tensor<2x8x8xf32>, %cache: tensor<32x8xf32>, %ids: tensor<2x8xi64>, %m: tensor<8x8xi1>) {
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), replicated] results [split(0)]; loop 1 (parallel, 8): operands [split(1), replicated] results [split(1)]}}
  %0 = cleave.rms_norm %h, %g {axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), split(0), split(0)] results [split(0)]; loop 1 (parallel, 4): operands [split(1), replicated, replicated] results [split(1)]; loop 2 (parallel, 8): operands [split(2), split(1), split(1)] results [split(2)]}}
  %1 = cleave.rotary_embedding %q, %cos, %cos : (tensor<2x4x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x4x8x16xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), replicated, replicated, split(0)] results [split(0)]; loop 1 (parallel, 8): operands [split(1), replicated, replicated, split(1)] results [split(1)]}}
  %2 = cleave.rotary_embedding %h, %cache, %cache, %ids {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<2x8xi64>) -> tensor<2x8x64xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), split(0), split(0), replicated] results [split(0)]; loop 1 (parallel, 4): operands [split(1), split(1), split(1), replicated] results [split(1)]; loop 2 (parallel, 8): operands [split(2), replicated, replicated, split(0)] results [split(2)]}}
  %3 = cleave.attention %q, %k4, %k4, %m {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xi1>) -> tensor<2x4x8x16xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), split(0), split(0)] results [split(0)]}}
  %4 = cleave.attention %q, %kv, %kv {is_causal, kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  // expected-remark @below {{loop 0 (parallel, 2): operands [split(0), split(0), split(0)] results [split(0)]; loop 1 (parallel, 8): operands [split(1), replicated, replicated] results [split(1)]}}
  %5 = cleave.attention %h, %h, %h {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return
}
