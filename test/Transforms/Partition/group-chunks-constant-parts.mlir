// RUN: cleave-opt %s --cleave-group-chunks | FileCheck %s
// RUN: cleave-opt %s --cleave-group-chunks | cleave-translate --print-device-program --program-function=stage_1 | FileCheck %s --check-prefix=PROGRAM

// A device whose chunks hold no copy of a parameter that chunks of other
// devices share (pp=2, a tied embedding on virtual stages 0 and 2, both on
// device 0) still takes part in its reduction along pp, with zeros: each
// of its chunks builds a constant part. The sum of the two constants is
// reduced in the update, once a step, as device 0 reduces its real parts;
// run in a per-microbatch entry it would wait for device 0 forever.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  func.func @stage_0() attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "wte" {file = "/dev/null", offset = 0 : i64, length = 16 : i64, cleave.writable} : tensor<4xf32>
    %gs = cleave.state "grad:wte" : tensor<4xf32>
    %ga = cleave.accumulate %w, %gs : tensor<4xf32>
    %n = cleave.all_reduce %ga {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
    cleave.assign %n, %w : tensor<4xf32>
    %c = cleave.clear %ga : tensor<4xf32>
    return
  }
  func.func @stage_1() attributes {cleave.stage = 1 : i64} {
    %z = cleave.constant dense<0.0> : tensor<4xf32>
    %n = cleave.all_reduce %z {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
    return
  }
  func.func @stage_2() attributes {cleave.stage = 2 : i64} {
    %w = cleave.weight "wte" {file = "/dev/null", offset = 0 : i64, length = 16 : i64, cleave.writable} : tensor<4xf32>
    %gs = cleave.state "grad:wte" : tensor<4xf32>
    %ga = cleave.accumulate %w, %gs : tensor<4xf32>
    %n = cleave.all_reduce %ga {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
    cleave.assign %n, %w : tensor<4xf32>
    %c = cleave.clear %ga : tensor<4xf32>
    return
  }
  func.func @stage_3() attributes {cleave.stage = 3 : i64} {
    %z = cleave.constant dense<0.0> : tensor<4xf32>
    %n = cleave.all_reduce %z {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
    return
  }
}

// CHECK-LABEL: func.func @stage_1
// CHECK:         %[[Z1:.*]] = cleave.constant {cleave.chunk = 0 : i64, cleave.stage = 1 : i64}
// CHECK:         %[[Z3:.*]] = cleave.constant {cleave.chunk = 1 : i64, cleave.stage = 3 : i64}
// CHECK-NEXT:    %[[SUM:.*]] = cleave.add %[[Z1]], %[[Z3]] {cleave.chunk = 1 : i64, cleave.stage = 3 : i64}
// CHECK-NEXT:    cleave.all_reduce %[[SUM]] {axis = "pp", cleave.chunk = 1 : i64, cleave.stage = 3 : i64, group_size = 2 : i64, reduction = "sum"}
// CHECK-NEXT:    return

// PROGRAM:      entry forward phase forward: 0 steps
// PROGRAM-NEXT: entry backward phase backward: 0 steps
// PROGRAM-NEXT: entry forward_chunk1 phase forward chunk 1: 0 steps
// PROGRAM-NEXT: entry backward_chunk1 phase backward chunk 1: 0 steps
// PROGRAM-NEXT: entry update phase update: 2 steps
// PROGRAM-NEXT: step 0 loop [[SUM:t[0-9]+]] = add(0, 0)
// PROGRAM-NEXT: step 1 kernel all_reduce ([[SUM]])
