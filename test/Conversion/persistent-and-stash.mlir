// RUN: cleave-translate --print-device-program --stash-slots=2 %s | FileCheck %s
// RUN: sed -e 's/, cleave.writable//' -e 's/ {cleave.stash}//' %s | cleave-translate --print-device-program | FileCheck %s --check-prefix=PLAIN
// RUN: cleave-translate --emit-cpp %s | FileCheck %s --check-prefix=CPP
// RUN: cleave-translate --emit-cpp %s -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I %cleave_src/runtime/include %t.cpp
// The text form reads back to the same program (printed identically).
// RUN: cleave-translate --print-device-program --stash-slots=2 %s -o %t.txt
// RUN: cleave-translate --parse-device-program %t.txt | diff %t.txt -

// A writable weight lives in persistent memory, filled from its bytes in the
// weight file; a stashed result (one a later entry reads) gets a region of
// the arena with one slot per microbatch in flight, after everything the
// planner reuses, and the caller gets a copy of it.

// CHECK-LABEL: program: 1 entries, arena 192 bytes (unplanned 192), weights 128 bytes, persistent 64 bytes
// CHECK: tensor t0 float32[2, 4] input 0
// CHECK: tensor t1 float32[2, 4] persistent 0
// CHECK: tensor t[[STASHED:[0-9]+]] float32[2, 4] arena 64 stash s0
// CHECK: tensor t[[RELU:[0-9]+]] float32[2, 4] arena 0
// CHECK-NOT: stash s
// CHECK: writable weight "w" weights 0 -> persistent 0, 32 bytes
// CHECK-NOT: writable weight
// CHECK: stash s0 t[[STASHED]] arena 64, 2 slots of 64 bytes
// The stashed result is stored, not fused, and it dies in the relu, which
// still does not write over it.
// CHECK: entry forward phase forward: 3 steps, 0 in place, inputs (t0) outputs (t{{[0-9]+}})
// CHECK-NEXT: step 0 loop t[[STASHED]] = mul(t0, t1)  // mul "stashed"
// CHECK-NEXT: step 1 loop t[[RELU]] = relu(t[[STASHED]])  // relu "relu"
// CHECK-NEXT: step 2 kernel matmul (t[[RELU]], t{{[0-9]+}}, none, none) -> (t{{[0-9]+}}) ints [0] floats [0, 0]  // matmul "mm"

// Without the markers the weight is read-only and the mul fuses into the
// relu.
// PLAIN: program: 1 entries, arena 64 bytes (unplanned 64), weights 128 bytes, persistent 0 bytes
// PLAIN: tensor t1 float32[2, 4] weights 0
// PLAIN: entry forward phase forward: 2 steps, 0 in place
// PLAIN-NEXT: step 0 loop t{{[0-9]+}} = relu(mul(t0, t1))  // mul + relu "relu"

// CPP: static int32_t cleave_entry_forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
// CPP: const float *x1 = (const float *)(persistent + 0);
// CPP: float *y = (float *)(arena + 64 + (int64_t)(microbatch % 1) * 64);
// CPP: static const CleaveWritableWeight kWritableWeights[] = {
// CPP-NEXT: {0, 0, 32}, // w
// CPP: CLEAVE_ABI_VERSION, 1, kEntries, 128, 128, 64, 1, kWritableWeights};
func.func @main(%x: tensor<2x4xf32> {cleave.name = "x"}) -> (tensor<2x4xf32> {cleave.name = "y"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 32 : i64, cleave.writable} : tensor<2x4xf32>
  %w2 = cleave.weight "w2" {file = "/dev/null", offset = 32 : i64, length = 64 : i64} : tensor<4x4xf32>
  %s = cleave.mul %x, %w {cleave.stash} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("stashed")
  %r = cleave.relu %s : tensor<2x4xf32> loc("relu")
  %y = cleave.matmul %r, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm")
  return %y : tensor<2x4xf32>
}
