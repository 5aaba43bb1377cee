// RUN: cleave-opt %s --cleave-partition | FileCheck %s

// An attention block split by heads. The fused QKV projection becomes one
// column-parallel projection per piece (on windows of the fused weight and
// bias); each device reshapes its half of the hidden dimension into its half
// of the heads, runs the scores, the (whole, broadcast) mask, softmax and the
// context on them, merges them back, and the row-parallel output projection
// ends with the block's only all-reduce.

// CHECK-NOT: shard.
// CHECK-LABEL: func.func @stage_0
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32> {cleave.input = 0 : i64})
// CHECK-DAG: %[[MASK:.*]] = cleave.weight "attn.mask" {{.*}} : tensor<1x1x8x8xf32>
// CHECK-DAG: %[[WO:.*]] = cleave.weight_slice "attn.proj.weight" {{{.*}}split_dim = 0 : i64{{.*}}} : tensor<32x64xf32>
// CHECK-DAG: %[[BO:.*]] = cleave.weight "attn.proj.bias" {{.*}} : tensor<64xf32>
// CHECK: %[[WQ:.*]] = cleave.weight_slice "attn.qkv.weight" {{{.*}}shape = array<i64: 64, 192>, split_dim = 1 : i64, starts = array<i64: 0, 0>} : tensor<64x32xf32>
// CHECK: %[[Q:.*]] = cleave.matmul %[[X]], %[[WQ]] : (tensor<2x8x64xf32>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
// CHECK: cleave.weight_slice "attn.qkv.bias" {{{.*}}split_dim = 0 : i64, starts = array<i64: 0>} : tensor<32xf32>
// CHECK: %[[WK:.*]] = cleave.weight_slice "attn.qkv.weight" {{{.*}}split_dim = 1 : i64, starts = array<i64: 0, 64>} : tensor<64x32xf32>
// CHECK: cleave.matmul %[[X]], %[[WK]]
// CHECK: %[[WV:.*]] = cleave.weight_slice "attn.qkv.weight" {{{.*}}split_dim = 1 : i64, starts = array<i64: 0, 128>} : tensor<64x32xf32>
// CHECK: cleave.matmul %[[X]], %[[WV]]
// CHECK-NOT: cleave.split
// CHECK-COUNT-3: cleave.reshape %{{.*}} : tensor<2x8x32xf32> -> tensor<2x8x2x16xf32>
// CHECK: cleave.matmul %{{.*}}, %{{.*}} : (tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32>) -> tensor<2x2x8x8xf32>
// CHECK: cleave.add %{{.*}}, %[[MASK]] : (tensor<2x2x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x2x8x8xf32>
// CHECK: cleave.softmax %{{.*}} {axis = 3 : i64} : tensor<2x2x8x8xf32>
// CHECK: cleave.matmul %{{.*}}, %{{.*}} : (tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
// CHECK: %[[MERGED:.*]] = cleave.reshape %{{.*}} : tensor<2x8x2x16xf32> -> tensor<2x8x32xf32>
// CHECK-NOT: cleave.all_
// CHECK: %[[O:.*]] = cleave.matmul %[[MERGED]], %[[WO]] : (tensor<2x8x32xf32>, tensor<32x64xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: %[[R:.*]] = cleave.all_reduce %[[O]] {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<2x8x64xf32>
// CHECK-NEXT: %[[OB:.*]] = cleave.add %[[R]], %[[BO]]
// CHECK-NOT: cleave.all_
// CHECK: return %[[OB]]

module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
    %attn_qkv_weight = cleave.weight "attn.qkv.weight" {file = "/m.data", offset = 0 : i64, length = 49152 : i64, cleave.stage = 0 : i64} : tensor<64x192xf32>
    %attn_qkv_bias = cleave.weight "attn.qkv.bias" {file = "/m.data", offset = 49152 : i64, length = 768 : i64, cleave.stage = 0 : i64} : tensor<192xf32>
    %attn_mask = cleave.weight "attn.mask" {file = "/m.data", offset = 49920 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<1x1x8x8xf32>
    %attn_proj_weight = cleave.weight "attn.proj.weight" {file = "/m.data", offset = 50176 : i64, length = 16384 : i64, cleave.stage = 0 : i64} : tensor<64x64xf32>
    %attn_proj_bias = cleave.weight "attn.proj.bias" {file = "/m.data", offset = 66560 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<64xf32>
    %attn_scale = cleave.constant {cleave.stage = 0 : i64} dense<2.500000e-01> : tensor<f32>
    %attn_qkv = cleave.matmul %x, %attn_qkv_weight {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x64xf32>, tensor<64x192xf32>) -> tensor<2x8x192xf32>
    %attn_qkvb = cleave.add %attn_qkv, %attn_qkv_bias {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x192xf32>, tensor<192xf32>) -> tensor<2x8x192xf32>
    %attn_q, %attn_k, %attn_v = cleave.split %attn_qkvb {cleave.stage = 0 : i64, axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
    %attn_qh = cleave.reshape %attn_q {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
    %attn_kh = cleave.reshape %attn_k {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
    %attn_vh = cleave.reshape %attn_v {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
    %attn_qt = cleave.transpose %attn_qh {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64, perm = array<i64: 0, 2, 1, 3>} : (tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32>
    %attn_kt = cleave.transpose %attn_kh {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64, perm = array<i64: 0, 2, 3, 1>} : (tensor<2x8x4x16xf32>) -> tensor<2x4x16x8xf32>
    %attn_vt = cleave.transpose %attn_vh {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64, perm = array<i64: 0, 2, 1, 3>} : (tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32>
    %attn_scores = cleave.matmul %attn_qt, %attn_kt {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
    %attn_scaled = cleave.mul %attn_scores, %attn_scale {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
    %attn_masked = cleave.add %attn_scaled, %attn_mask {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
    %attn_probs = cleave.softmax %attn_masked {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64, axis = 3 : i64} : tensor<2x4x8x8xf32>
    %attn_ctx = cleave.matmul %attn_probs, %attn_vt {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
    %attn_ctxt = cleave.transpose %attn_ctx {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64, perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
    %attn_merged = cleave.reshape %attn_ctxt {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
    %attn_o = cleave.matmul %attn_merged, %attn_proj_weight {cleave.stage = 0 : i64, cleave.tp_loop = 3 : i64} : (tensor<2x8x64xf32>, tensor<64x64xf32>) -> tensor<2x8x64xf32>
    %attn_ob = cleave.add %attn_o, %attn_proj_bias {cleave.stage = 0 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    return %attn_ob : tensor<2x8x64xf32>
  }
}
