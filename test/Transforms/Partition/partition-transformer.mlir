// RUN: cleave-opt %s --cleave-partition | FileCheck %s

// A pre-LayerNorm transformer layer on two tensor-parallel devices: heads
// split in attention, column- then row-parallel MLP. The forward pass has
// exactly two all-reduces, one after each row-parallel projection, and no
// other collective.

// CHECK-NOT: shard.
// CHECK-LABEL: func.func @stage_0
// CHECK-NOT: cleave.all_gather
// CHECK-NOT: cleave.all_slice
// CHECK-NOT: cleave.all_to_all
// CHECK: cleave.layer_norm %{{.*}} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
// CHECK-NOT: cleave.all_
// CHECK: %[[O:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<2x8x32xf32>, tensor<32x64xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: %[[R1:.*]] = cleave.all_reduce %[[O]] {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<2x8x64xf32>
// CHECK-NOT: cleave.all_
// CHECK: cleave.layer_norm
// CHECK-NOT: cleave.all_
// CHECK: cleave.matmul %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<64x128xf32>) -> tensor<2x8x128xf32>
// CHECK-NOT: cleave.all_
// CHECK: cleave.gelu %{{.*}} : tensor<2x8x128xf32>
// CHECK-NOT: cleave.all_
// CHECK: %[[Y:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<2x8x128xf32>, tensor<128x64xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: %[[R2:.*]] = cleave.all_reduce %[[Y]] {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<2x8x64xf32>
// CHECK-NOT: cleave.all_
// CHECK: return

// The same, counted: two all-reduces in the whole module.
// RUN: cleave-opt %s --cleave-partition | FileCheck %s --check-prefix=COUNT
// COUNT-COUNT-2: cleave.all_reduce
// COUNT-NOT: cleave.all_reduce
// COUNT-NOT: cleave.all_gather
// COUNT-NOT: cleave.reduce_scatter

// The layer's 101 kB of per-device weights do not fit a 64 kB device: the
// plan is rejected before anything is emitted, naming the device and the
// excess, and the error sits on an op of the stage.
// RUN: not cleave-opt %s --cleave-partition=target=%S/Inputs/tiny-device.json 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TINY
// TINY: partition-transformer.mlir:{{[0-9]+}}:{{[0-9]+}}: error: stage 0 (tp ranks 0-1) needs 125.57 kB (125572 bytes), 61.57 kB (61572 bytes) more than the 64.00 kB (64000 bytes) of a '64 kB test device' (weights 101.00 kB (100996 bytes), activations 20.48 kB (20480 bytes), communication buffers 4.10 kB (4096 bytes)); the live activations peak at this op
// TINY-NOT: func.func

module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
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
    %h0_ln_2_weight = cleave.weight "h0.ln_2.weight" {file = "/m.data", offset = 67328 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<64xf32>
    %h0_ln_2_bias = cleave.weight "h0.ln_2.bias" {file = "/m.data", offset = 67584 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<64xf32>
    %h0_ln_2 = cleave.layer_norm %h0_res1, %h0_ln_2_weight, %h0_ln_2_bias {cleave.stage = 0 : i64, axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    %h0_mlp_fc_weight = cleave.weight "h0.mlp.fc.weight" {file = "/m.data", offset = 67840 : i64, length = 65536 : i64, cleave.stage = 0 : i64} : tensor<64x256xf32>
    %h0_mlp_fc_bias = cleave.weight "h0.mlp.fc.bias" {file = "/m.data", offset = 133376 : i64, length = 1024 : i64, cleave.stage = 0 : i64} : tensor<256xf32>
    %h0_mlp_proj_weight = cleave.weight "h0.mlp.proj.weight" {file = "/m.data", offset = 134400 : i64, length = 65536 : i64, cleave.stage = 0 : i64} : tensor<256x64xf32>
    %h0_mlp_proj_bias = cleave.weight "h0.mlp.proj.bias" {file = "/m.data", offset = 199936 : i64, length = 256 : i64, cleave.stage = 0 : i64} : tensor<64xf32>
    %h0_mlp_h = cleave.matmul %h0_ln_2, %h0_mlp_fc_weight {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x64xf32>, tensor<64x256xf32>) -> tensor<2x8x256xf32>
    %h0_mlp_hb = cleave.add %h0_mlp_h, %h0_mlp_fc_bias {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : (tensor<2x8x256xf32>, tensor<256xf32>) -> tensor<2x8x256xf32>
    %h0_mlp_g = cleave.gelu %h0_mlp_hb {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : tensor<2x8x256xf32>
    %h0_mlp_y = cleave.matmul %h0_mlp_g, %h0_mlp_proj_weight {cleave.stage = 0 : i64, cleave.tp_loop = 3 : i64} : (tensor<2x8x256xf32>, tensor<256x64xf32>) -> tensor<2x8x64xf32>
    %h0_mlp_yb = cleave.add %h0_mlp_y, %h0_mlp_proj_bias {cleave.stage = 0 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    %h0_res2 = cleave.add %h0_res1, %h0_mlp_yb {cleave.stage = 0 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    return %h0_res2 : tensor<2x8x64xf32>
  }
}
