// RUN: cleave-opt %s -verify-diagnostics --cleave-print-loop-shardings -o /dev/null

// The axis that top-k, arg max/min and cumsum order or accumulate is never
// split (no loop 1 below for the first two, no loop 2 or 0 for the others);
// every other dimension is.

func.func @selection(%x: tensor<4x16x8xf32>) {
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0)] results [split(0), split(0)]; loop 2 (parallel, 8): operands [split(2)] results [split(2), split(2)]}}
  %v, %i = cleave.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<4x16x8xf32>) -> (tensor<4x2x8xf32>, tensor<4x2x8xi64>)
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0)] results [split(0)]; loop 2 (parallel, 8): operands [split(2)] results [split(2)]}}
  %a = cleave.arg_max %x {axis = 1 : i64} : (tensor<4x16x8xf32>) -> tensor<4x1x8xi64>
  // expected-remark @below {{loop 0 (parallel, 4): operands [split(0)] results [split(0)]; loop 1 (parallel, 16): operands [split(1)] results [split(1)]}}
  %b = cleave.arg_min %x {axis = 2 : i64, keepdims = false} : (tensor<4x16x8xf32>) -> tensor<4x16xi64>
  // expected-remark @below {{loop 1 (parallel, 16): operands [split(1)] results [split(1)]; loop 2 (parallel, 8): operands [split(2)] results [split(2)]}}
  %c = cleave.cumsum %x {axis = 0 : i64, reverse = true} : tensor<4x16x8xf32>
  return
}
