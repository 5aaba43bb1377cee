// RUN: cleave-translate --print-device-program --split-input-file %s | FileCheck %s
// The text form reads back to the same program (printed identically).
// RUN: cleave-translate --print-device-program --split-input-file --output-split-marker="// =====" %s -o %t.txt
// RUN: cleave-translate --parse-device-program --split-input-file="// =====" --output-split-marker="// =====" %t.txt | diff %t.txt -

// In-place reuse: a generated loop writes over an operand that dies in it
// when every load of that operand reads the element being written (same
// shape, same element type), so the two share one arena buffer.

// A loop writes over an operand that dies in it, with the same element
// type and shape.
// CHECK-LABEL: program: 1 entries, arena 128 bytes (unplanned 256)
// CHECK: tensor t[[M:[0-9]+]] float32[4, 8] arena [[OFF:[0-9]+]]
// CHECK-NEXT: tensor t[[R:[0-9]+]] float32[4, 8] arena [[OFF]]
// CHECK: entry forward phase forward: 3 steps, 1 in place
// CHECK-NEXT: step 0 kernel matmul (t0, t1, none, none) -> (t[[M]]) ints [0] floats [0, 0]
// CHECK-NEXT: step 1 loop t[[R]] = relu(t[[M]])
func.func @dies(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %m = cleave.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("m")
  %r = cleave.relu %m : tensor<4x8xf32> loc("r")
  %y = cleave.matmul %r, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("y")
  return %y : tensor<4x8xf32>
}

// -----

// Not over an operand that a later step still reads.
// CHECK-LABEL: program: 1 entries, arena 384 bytes (unplanned 384)
// CHECK: tensor t[[M:[0-9]+]] float32[4, 8] arena 0
// CHECK-NEXT: tensor t[[R:[0-9]+]] float32[4, 8] arena 128
// CHECK: entry forward phase forward: 4 steps, 0 in place
// CHECK: step 1 loop t[[R]] = relu(t[[M]])
// CHECK: step 3 loop t{{[0-9]+}} = add(t{{[0-9]+}}, t[[M]])
func.func @live(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %m = cleave.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("m")
  %r = cleave.relu %m : tensor<4x8xf32> loc("r")
  %s = cleave.matmul %r, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("s")
  %y = cleave.add %s, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("y")
  return %y : tensor<4x8xf32>
}

// -----

// Not over an operand of another element type, even of the same size.
// CHECK-LABEL: program: 1 entries, arena 256 bytes (unplanned 256)
// CHECK: tensor t[[M:[0-9]+]] float32[4, 8] arena 0
// CHECK-NEXT: tensor t[[C:[0-9]+]] int32[4, 8] arena 128
// CHECK: entry forward phase forward: 3 steps, 0 in place
// CHECK: step 1 loop t[[C]] = cast<int32>(t[[M]])  // cast "c"
func.func @types(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xi32> {
  %m = cleave.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("m")
  %c = cleave.cast %m : tensor<4x8xf32> to tensor<4x8xi32> loc("c")
  %y = cleave.mul %c, %c : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32> loc("y")
  return %y : tensor<4x8xi32>
}
