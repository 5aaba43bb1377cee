// RUN: cleave-opt %s --cleave-print-op-cost=target=h100-sxm -o /dev/null 2>&1 | FileCheck %s

// The fused transformer ops. rms_norm: 4 FLOPs per element (square, add,
// multiply by the reciprocal root, scale); rotary_embedding: 3 per element;
// attention: per query row and key, 2 * head_size for the score, 5 for the
// scale, mask and softmax, 2 * value head size for the weighted sum, and
// no bytes for the scores, which it never stores (an operand passed twice
// is read once).
func.func @transformer(%h: tensor<2x8x64xf32>, %g: tensor<64xf32>, %q: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x8xf32>, %cos: tensor<2x8x8xf32>) {
  // 1024 elements.
  // CHECK: transformer-ops-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=4096 read=4352 written=4096
  %0 = cleave.rms_norm %h, %g {axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  // CHECK: transformer-ops-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=3072 read=4608 written=4096
  %1 = cleave.rotary_embedding %q, %cos, %cos : (tensor<2x4x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x4x8x16xf32>
  // 64 query rows x 8 keys x (2 * 16 + 5 + 2 * 8).
  // CHECK: transformer-ops-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=27136 read=6144 written=2048
  %2 = cleave.attention %q, %q, %v {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  // The same in 3-D: 64 query rows x 8 keys x (2 * 16 + 5 + 2 * 16).
  // CHECK: transformer-ops-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=35328 read=4096 written=4096
  %3 = cleave.attention %h, %h, %h {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return
}
