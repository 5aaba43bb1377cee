// RUN: cleave-opt %s --cleave-partition | FileCheck %s

// A transformer layer in two pipeline stages (attention, then the MLP), each
// on two tensor-parallel devices, two microbatches. The programs compute one
// microbatch (one sample of the batch of 2), so every type is the block's and
// the graph ports say where the batch is. The residual stream is the only
// value that crosses the boundary: one send/recv pair, with the same tag and
// type on both ends. Each stage keeps its own all-reduce.

// CHECK-NOT: shard.
// CHECK-LABEL: func.func @stage_0
// CHECK-SAME: (%{{.*}}: tensor<1x8x64xf32> {cleave.batch_dim = 0 : i64, cleave.input = 0 : i64})
// CHECK-SAME: attributes {cleave.stage = 0 : i64}
// CHECK-NOT: cleave.recv
// CHECK: cleave.all_reduce
// CHECK-NEXT: cleave.add
// CHECK-NEXT: %[[RES:.*]] = cleave.add %{{.*}}, %{{.*}} : (tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
// CHECK-NEXT: cleave.send %[[RES]] to 1 tag 0 : tensor<1x8x64xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-LABEL: func.func @stage_1
// CHECK-SAME: () -> (tensor<1x8x64xf32> {cleave.batch_dim = 0 : i64, cleave.output = 0 : i64})
// CHECK-SAME: attributes {cleave.stage = 1 : i64}
// CHECK-NEXT: %[[IN:.*]] = cleave.recv from 0 tag 0 : tensor<1x8x64xf32>
// CHECK-NOT: cleave.send
// CHECK: cleave.layer_norm %[[IN]]
// CHECK: cleave.all_reduce
// CHECK: return

// RUN: cleave-opt %s --cleave-partition | FileCheck %s --check-prefix=SEND
// SEND-COUNT-1: cleave.send
// SEND-NOT: cleave.send
// RUN: cleave-opt %s --cleave-partition | FileCheck %s --check-prefix=RECV
// RECV-COUNT-1: cleave.recv
// RECV-NOT: cleave.recv

module attributes {cleave.mesh = {pp = 2 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64} {
  func.func @main(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
    %h0_ln_1_weight = cleave.weight "h0.ln_1.weight" {file = "/m.data", offset = 0 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<64xf32>
    %h0_ln_1_bias = cleave.weight "h0.ln_1.bias" {file = "/m.data", offset = 256 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<64xf32>
    %h0_ln_1 = cleave.layer_norm %x, %h0_ln_1_weight, %h0_ln_1_bias {cleave.stage = 0 : i64, axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    %h0_attn_qkv_weight = cleave.weight "h0.attn.qkv.weight" {file = "/m.data", offset = 512 : i64, length = 49152 : i64, cleave.stage = 0 : i64} : tensor<64x192xf32>
    %h0_attn_qkv_bias = cleave.weight "h0.attn.qkv.bias" {file = "/m.data", offset = 49664 : i64, length = 768 : i64, cleave.stage = 0 : i64} : tensor<192xf32>
    %h0_attn_mask = cleave.weight "h0.attn.mask" {file = "/m.data", offset = 50432 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<1x1x8x8xf32>
    %h0_attn_proj_weight = cleave.weight "h0.attn.proj.weight" {file = "/m.data", offset = 50688 : i64, length = 16384 : i64, cleave.stage = 0 : i64} : tensor<64x64xf32>
    %h0_attn_proj_bias = cleave.weight "h0.attn.proj.bias" {file = "/m.data", offset = 67072 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<64xf32>
    %h0_attn_scale = cleave.constant {cleave.stage = 0 : i64} dense<2.500000e-01> : tensor<f32>
    %h0_attn_qkv = cleave.matmul %h0_ln_1, %h0_attn_qkv_weight {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x64xf32>, tensor<64x192xf32>) -> tensor<2x8x192xf32>
    %h0_attn_qkvb = cleave.add %h0_attn_qkv, %h0_attn_qkv_bias {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x192xf32>, tensor<192xf32>) -> tensor<2x8x192xf32>
    %h0_attn_q, %h0_attn_k, %h0_attn_v = cleave.split %h0_attn_qkvb {cleave.stage = 0 : i64, axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
    %h0_attn_qh = cleave.reshape %h0_attn_q {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
    %h0_attn_kh = cleave.reshape %h0_attn_k {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
    %h0_attn_vh = cleave.reshape %h0_attn_v {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
    %h0_attn_qt = cleave.transpose %h0_attn_qh {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64, perm = array<i64: 0, 2, 1, 3>} : (tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32>
    %h0_attn_kt = cleave.transpose %h0_attn_kh {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64, perm = array<i64: 0, 2, 3, 1>} : (tensor<2x8x4x16xf32>) -> tensor<2x4x16x8xf32>
    %h0_attn_vt = cleave.transpose %h0_attn_vh {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64, perm = array<i64: 0, 2, 1, 3>} : (tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32>
    %h0_attn_scores = cleave.matmul %h0_attn_qt, %h0_attn_kt {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
    %h0_attn_scaled = cleave.mul %h0_attn_scores, %h0_attn_scale {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
    %h0_attn_masked = cleave.add %h0_attn_scaled, %h0_attn_mask {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
    %h0_attn_probs = cleave.softmax %h0_attn_masked {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64, axis = 3 : i64} : tensor<2x4x8x8xf32>
    %h0_attn_ctx = cleave.matmul %h0_attn_probs, %h0_attn_vt {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
    %h0_attn_ctxt = cleave.transpose %h0_attn_ctx {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64, perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
    %h0_attn_merged = cleave.reshape %h0_attn_ctxt {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
    %h0_attn_o = cleave.matmul %h0_attn_merged, %h0_attn_proj_weight {cleave.stage = 0 : i64, cleave.tp_loop = 3 : i64} : (tensor<2x8x64xf32>, tensor<64x64xf32>) -> tensor<2x8x64xf32>
    %h0_attn_ob = cleave.add %h0_attn_o, %h0_attn_proj_bias {cleave.stage = 0 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    %h0_res1 = cleave.add %x, %h0_attn_ob {cleave.stage = 0 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    %h0_ln_2_weight = cleave.weight "h0.ln_2.weight" {file = "/m.data", offset = 67328 : i64, length = 256 : i64, cleave.stage = 1 : i64} : tensor<64xf32>
    %h0_ln_2_bias = cleave.weight "h0.ln_2.bias" {file = "/m.data", offset = 67584 : i64, length = 256 : i64, cleave.stage = 1 : i64} : tensor<64xf32>
    %h0_ln_2 = cleave.layer_norm %h0_res1, %h0_ln_2_weight, %h0_ln_2_bias {cleave.stage = 1 : i64, axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    %h0_mlp_fc_weight = cleave.weight "h0.mlp.fc.weight" {file = "/m.data", offset = 67840 : i64, length = 65536 : i64, cleave.stage = 1 : i64} : tensor<64x256xf32>
    %h0_mlp_fc_bias = cleave.weight "h0.mlp.fc.bias" {file = "/m.data", offset = 133376 : i64, length = 1024 : i64, cleave.stage = 1 : i64} : tensor<256xf32>
    %h0_mlp_proj_weight = cleave.weight "h0.mlp.proj.weight" {file = "/m.data", offset = 134400 : i64, length = 65536 : i64, cleave.stage = 1 : i64} : tensor<256x64xf32>
    %h0_mlp_proj_bias = cleave.weight "h0.mlp.proj.bias" {file = "/m.data", offset = 199936 : i64, length = 256 : i64, cleave.stage = 1 : i64} : tensor<64xf32>
    %h0_mlp_h = cleave.matmul %h0_ln_2, %h0_mlp_fc_weight {cleave.stage = 1 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x64xf32>, tensor<64x256xf32>) -> tensor<2x8x256xf32>
    %h0_mlp_hb = cleave.add %h0_mlp_h, %h0_mlp_fc_bias {cleave.stage = 1 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x256xf32>, tensor<256xf32>) -> tensor<2x8x256xf32>
    %h0_mlp_g = cleave.gelu %h0_mlp_hb {cleave.stage = 1 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x256xf32>
    %h0_mlp_y = cleave.matmul %h0_mlp_g, %h0_mlp_proj_weight {cleave.stage = 1 : i64, cleave.tp_loop = 3 : i64} : (tensor<2x8x256xf32>, tensor<256x64xf32>) -> tensor<2x8x64xf32>
    %h0_mlp_yb = cleave.add %h0_mlp_y, %h0_mlp_proj_bias {cleave.stage = 1 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    %h0_res2 = cleave.add %h0_res1, %h0_mlp_yb {cleave.stage = 1 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    return %h0_res2 : tensor<2x8x64xf32>
  }
}
