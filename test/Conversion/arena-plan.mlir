// RUN: cleave-translate --print-device-program --split-input-file %s | FileCheck %s
// The text form reads back to the same program (printed identically).
// RUN: cleave-translate --print-device-program --split-input-file --output-split-marker="// =====" %s -o %t.txt
// RUN: cleave-translate --parse-device-program --split-input-file="// =====" --output-split-marker="// =====" %t.txt | diff %t.txt -

// The arena plan: every intermediate a step writes gets bytes from its
// first write to its last read; buffers are placed first fit, largest
// first, at the lowest offset no buffer live at the same time overlaps.
// The peak is the arena's size; "unplanned" is the sum of the buffers.

// A chain of library calls: each result dies in the next call, so the
// first and the third share bytes and the arena holds two buffers.
// CHECK-LABEL: program: 1 entries, arena 2048 bytes (unplanned 3072)
// CHECK: tensor t[[A:[0-9]+]] float32[16, 16] arena [[OFF_A:[0-9]+]]
// CHECK-NEXT: tensor t[[B:[0-9]+]] float32[16, 16] arena [[OFF_B:[0-9]+]]
// CHECK-NEXT: tensor t[[C:[0-9]+]] float32[16, 16] arena [[OFF_A]]
// CHECK: step 0 kernel matmul (t0, t1, none, none) -> (t[[A]]) ints [0] floats [0, 0]
// CHECK-NEXT: step 1 kernel matmul (t[[A]], t1, none, none) -> (t[[B]]) ints [0] floats [0, 0]
// CHECK-NEXT: step 2 kernel matmul (t[[B]], t1, none, none) -> (t[[C]]) ints [0] floats [0, 0]
// CHECK-NEXT: step 3 kernel matmul (t[[C]], t1, none, none) -> (t{{[0-9]+}}) ints [0] floats [0, 0]
func.func @reuse(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 1024 : i64} : tensor<16x16xf32>
  %a = cleave.matmul %x, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> loc("a")
  %b = cleave.matmul %a, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> loc("b")
  %c = cleave.matmul %b, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> loc("c")
  %d = cleave.matmul %c, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> loc("d")
  return %d : tensor<16x16xf32>
}

// -----

// Buffers live at the same time never overlap; the larger is placed first,
// at offset 0, and every buffer is rounded up to the 64-byte alignment.
// CHECK-LABEL: program: 1 entries, arena 320 bytes (unplanned 320)
// CHECK: tensor t[[SMALL:[0-9]+]] float32[2, 3] arena 256
// CHECK: tensor t[[BIG:[0-9]+]] float32[8, 8] arena 0
// CHECK: step 0 kernel matmul (t1, t{{[0-9]+}}, none, none) -> (t[[SMALL]]) ints [0] floats [0, 0]  // matmul "small"
// CHECK-NEXT: step 1 kernel matmul (t0, t{{[0-9]+}}, none, none) -> (t[[BIG]]) ints [0] floats [0, 0]  // matmul "big"
func.func @overlap(%x: tensor<8x8xf32>, %y: tensor<2x3xf32>) -> (tensor<8x8xf32>, tensor<2x3xf32>) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 256 : i64} : tensor<8x8xf32>
  %v = cleave.weight "v" {file = "/dev/null", offset = 256 : i64, length = 36 : i64} : tensor<3x3xf32>
  %s = cleave.matmul %y, %v : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32> loc("small")
  %b = cleave.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("big")
  %s2 = cleave.matmul %s, %v : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32> loc("small2")
  %b2 = cleave.matmul %b, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("big2")
  return %b2, %s2 : tensor<8x8xf32>, tensor<2x3xf32>
}
