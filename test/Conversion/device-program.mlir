// RUN: cleave-translate --print-device-program %s | FileCheck %s
// The text form reads back to the same program (printed identically).
// RUN: cleave-translate --print-device-program %s -o %t.txt
// RUN: cleave-translate --parse-device-program %t.txt | diff %t.txt -

// A matmul, a fused bias + GELU + residual chain, and a reshape view of the
// result that is a graph output (so it is copied out).

// CHECK-LABEL: program: 1 entries, arena 64 bytes (unplanned 128), weights 320 bytes, persistent 0 bytes
// CHECK: tensor t0 float32[2, 8] input 0
// CHECK: tensor t1 float32[8, 8] weights 0
// CHECK: tensor t2 float32[2, 8] arena 0
// CHECK: tensor t3 float32[8] weights 256
// CHECK: tensor t4 float32[2, 8] arena 0
// CHECK: tensor t5 float32[16] arena 0
// CHECK: tensor t6 float32[16] output 0
// CHECK-NOT: stash
// CHECK: entry forward phase forward: 3 steps, 1 in place, inputs (t0) outputs (t6)
// CHECK: step 0 kernel matmul (t0, t1, none, none) -> (t2) ints [0] floats [0, 0]  // matmul "mm"
// CHECK: step 1 loop t4 = add(gelu_erf(add(t2, t3)), t0)  // add + gelu + add "res"
// CHECK: step 2 kernel copy (t5) -> (t6)  // copy to graph output
func.func @main(%x: tensor<2x8xf32> {cleave.name = "x"}) -> (tensor<16xf32> {cleave.name = "y"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 256 : i64} : tensor<8x8xf32>
  %b = cleave.weight "b" {file = "/dev/null", offset = 256 : i64, length = 32 : i64} : tensor<8xf32>
  %m = cleave.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("mm")
  %a = cleave.add %m, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("bias")
  %g = cleave.gelu %a : tensor<2x8xf32> loc("gelu")
  %r = cleave.add %g, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("res")
  %y = cleave.reshape %r : tensor<2x8xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}
