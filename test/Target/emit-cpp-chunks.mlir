// RUN: cleave-translate --emit-cpp %s | FileCheck %s
// RUN: cleave-translate --emit-cpp %s -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I %cleave_src/runtime/include %t.cpp
// RUN: cleave-translate --print-device-program %s | FileCheck %s --check-prefix=PROGRAM
// RUN: cleave-translate --print-device-program %s -o %t.txt
// RUN: cleave-translate --parse-device-program %t.txt | diff %t.txt -

// A device function of the interleaved schedule (cleave-group-chunks): its
// ops of chunk 1 become an entry of their own. An entry's pointer arrays
// hold its own ports in its order: the first forward takes every graph
// input, chunk 1's forward only the second one, which it reads as its
// inputs[0].

// PROGRAM: entry forward phase forward: 2 steps, {{[0-9]+}} in place, inputs (t0, t1) outputs () named ("x", "m") ()
// PROGRAM: entry forward_chunk1 phase forward chunk 1: 3 steps, {{[0-9]+}} in place, inputs (t1) outputs () named ("m") ()

// CHECK: // The forward phase.
// CHECK-NEXT: static int32_t cleave_entry_forward(
// CHECK: const float *x0 = (const float *)((uint8_t *)inputs[0]);
// CHECK: // The forward phase of model chunk 1.
// CHECK-NEXT: static int32_t cleave_entry_forward_chunk1(
// CHECK: cleave_cpu_recv(
// CHECK: const float *x1 = (const float *)((uint8_t *)inputs[0]);
// CHECK: cleave_cpu_send(
// CHECK: static const CleavePortInfo kInputs_forward_chunk1[] = {
// CHECK-NEXT: {"m", CLEAVE_F32, 1, {4}},
// CHECK-NEXT: };
// CHECK: {"forward_chunk1", "forward", cleave_entry_forward_chunk1, 1, 0, kInputs_forward_chunk1, nullptr},

func.func @stage_0(%x: tensor<4xf32> {cleave.input = 0 : i64, cleave.name = "x"}, %m: tensor<4xf32> {cleave.input = 1 : i64, cleave.name = "m"}) attributes {cleave.stage = 0 : i64} {
  %a = cleave.relu %x {cleave.chunk = 0 : i64, cleave.stage = 0 : i64} : tensor<4xf32>
  cleave.send %a to 1 tag 0 {cleave.chunk = 0 : i64, cleave.stage = 0 : i64} : tensor<4xf32>
  %r = cleave.recv from 1 tag 1 {cleave.chunk = 1 : i64, cleave.stage = 2 : i64} : tensor<4xf32>
  %b = cleave.mul %r, %m {cleave.chunk = 1 : i64, cleave.stage = 2 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  cleave.send %b to 3 tag 2 {cleave.chunk = 1 : i64, cleave.stage = 2 : i64} : tensor<4xf32>
  return
}
