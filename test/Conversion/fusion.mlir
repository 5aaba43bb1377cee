// RUN: cleave-translate --print-device-program --split-input-file %s | FileCheck %s
// The text form reads back to the same program (printed identically).
// RUN: cleave-translate --print-device-program --split-input-file --output-split-marker="// =====" %s -o %t.txt
// RUN: cleave-translate --parse-device-program --split-input-file="// =====" --output-split-marker="// =====" %t.txt | diff %t.txt -

// Which elementwise ops fuse into one generated loop: an op whose only user
// is an elementwise op of the same shape, or a reduction a generated loop
// computes, is evaluated inside that user's loop and never stored.

// An elementwise chain whose every link has one user of the same shape is
// one loop, stored once.
// CHECK-LABEL: program: 1 entries, arena 0 bytes
// CHECK: tensor t[[OUT:[0-9]+]] float32[4, 8] output 0
// CHECK-NOT: arena
// CHECK: entry forward phase forward: 1 steps
// CHECK-NEXT: step 0 loop t[[OUT]] = tanh(mul(exp(add(t0, t1)), t0))  // add + exp + mul + tanh "d"
// CHECK-NOT: step
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = cleave.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("a")
  %b = cleave.exp %a : tensor<4x8xf32> loc("b")
  %c = cleave.mul %b, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("c")
  %d = cleave.tanh %c : tensor<4x8xf32> loc("d")
  return %d : tensor<4x8xf32>
}

// -----

// A result with two users is stored, and each user loads it.
// CHECK-LABEL: program: 1 entries, arena 128 bytes
// CHECK: tensor t[[A:[0-9]+]] float32[4, 8] arena 0
// CHECK: entry forward phase forward: 2 steps
// CHECK-NEXT: step 0 loop t[[A]] = exp(t0)  // exp "a"
// CHECK-NEXT: step 1 loop t{{[0-9]+}} = mul(t[[A]], tanh(t[[A]]))  // tanh + mul "c"
func.func @shared(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = cleave.exp %x : tensor<4x8xf32> loc("a")
  %b = cleave.tanh %a : tensor<4x8xf32> loc("b")
  %c = cleave.mul %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("c")
  return %c : tensor<4x8xf32>
}

// -----

// A result broadcast into a larger user is stored: the user would
// recompute it for every element it is broadcast to.
// CHECK-LABEL: program: 1 entries, arena 64 bytes
// CHECK: tensor t[[A:[0-9]+]] float32[8] arena 0
// CHECK: entry forward phase forward: 2 steps
// CHECK-NEXT: step 0 loop t[[A]] = exp(t1)  // exp "a"
// CHECK-NEXT: step 1 loop t{{[0-9]+}} = add(t0, t[[A]])  // add "b"
func.func @broadcast(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = cleave.exp %v : tensor<8xf32> loc("a")
  %b = cleave.add %x, %a : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> loc("b")
  return %b : tensor<4x8xf32>
}

// -----

// A chain into a reduction is folded by the reduction's loop; a chain into
// a library kernel is stored for it.
// CHECK-LABEL: program: 1 entries, arena 128 bytes
// CHECK: tensor t[[SUM:[0-9]+]] float32[4] output 0
// CHECK: tensor t[[B:[0-9]+]] float32[4, 8] arena 0
// CHECK: entry forward phase forward: 3 steps
// CHECK-NEXT: step 0 loop t[[SUM]] = reduce add over [1] of exp(t0) in [4, 8]  // exp + reduce_sum "s"
// CHECK-NEXT: step 1 loop t[[B]] = tanh(t0)  // tanh "b"
// CHECK-NEXT: step 2 kernel matmul (t[[B]], t1, none, none) -> (t{{[0-9]+}}) ints [0] floats [0, 0]  // matmul "m"
func.func @reduction(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %a = cleave.exp %x : tensor<4x8xf32> loc("a")
  %s = cleave.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32> loc("s")
  %b = cleave.tanh %x : tensor<4x8xf32> loc("b")
  %m = cleave.matmul %b, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("m")
  return %s, %m : tensor<4xf32>, tensor<4x8xf32>
}
