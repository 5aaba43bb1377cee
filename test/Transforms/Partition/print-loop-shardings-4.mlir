// RUN: cleave-opt %s -verify-diagnostics --cleave-print-loop-shardings=num-shards=4 -o /dev/null

// Four devices: a loop is offered only when every dimension it splits
// divides by four. The reshape merges a batch of 2 into its rows, so its
// row loop is not offered although 16 rows would divide.

func.func @four(%x: tensor<6x16xf32>, %w: tensor<16x8xf32>, %h: tensor<2x8x64xf32>, %y: tensor<16x6xf32>) {
  // expected-remark @below {{loop 1 (parallel, 8): operands [replicated, split(1)] results [split(1)]; loop 2 (reduction, 16): operands [split(1), split(0)] results [partial(sum)]}}
  %0 = cleave.matmul %x, %w : (tensor<6x16xf32>, tensor<16x8xf32>) -> tensor<6x8xf32>
  // expected-remark @below {{loop 1 (parallel, 64): operands [split(2)] results [split(1)]}}
  %1 = cleave.reshape %h : tensor<2x8x64xf32> -> tensor<16x64xf32>
  // expected-remark @below {{no loop splits 4 ways}}
  %2 = cleave.softmax %y {axis = 0 : i64} : tensor<16x6xf32>
  return
}
