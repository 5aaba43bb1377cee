// RUN: cleave-opt %s --cleave-plan="target=h100-sxm devices=2 plan-json=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=JSON
// RUN: cleave-opt %s --cleave-plan="target=h100-sxm devices=4 pp=2 tp=2" | FileCheck %s --check-prefix=PIPE
// RUN: cleave-opt %s --cleave-plan="target=h100-sxm devices=2 annotate=false plan-json=%t.report.json" | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s --input-file=%t.report.json --check-prefix=JSON
// RUN: not cleave-opt %s --cleave-plan="devices=2" 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not cleave-opt %s --cleave-plan="target=h100-sxm devices=2 objective=cheapest" 2>&1 | FileCheck %s --check-prefix=OBJECTIVE
// RUN: not cleave-opt %s --cleave-plan="target=h100-sxm devices=4 pp=4" 2>&1 | FileCheck %s --check-prefix=PINS
// RUN: cleave-opt %s --cleave-plan="target=h100-sxm devices=4 pp=2 tp=2 schedule=1f1b" | FileCheck %s --check-prefix=ONEFONEB
// RUN: not cleave-opt %s --cleave-plan="target=h100-sxm devices=2 schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=SCHEDULE

// Two MLP blocks on [1, 512, 1024]: on two devices the planner makes FC1
// column-parallel (loop 2 of [B, S, K] x [K, N]: N) and FC2 row-parallel
// (loop 3: K), and writes the contract for the partitioner.

// CHECK: module attributes {cleave.mesh = {dp = 1 : i64, pp = 1 : i64, tp = 2 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "gpipe"}
// CHECK:      cleave.weight "l0.ln.g" {cleave.stage = 0 : i64
// CHECK:      cleave.layer_norm {{.*}}cleave.stage = 0 : i64
// CHECK-NOT:  cleave.tp_loop
// CHECK-SAME: -> tensor<1x512x1024xf32>
// CHECK:      cleave.weight "l0.fc1.w" {cleave.stage = 0 : i64
// CHECK:      cleave.matmul {{.*}}{cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64}
// CHECK:      cleave.add {{.*}}{cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64}
// CHECK:      cleave.gelu {{.*}}{cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64}
// CHECK:      cleave.matmul {{.*}}{cleave.stage = 0 : i64, cleave.tp_loop = 3 : i64}
// The bias and residual adds run on the whole residual stream.
// CHECK:      cleave.add {{.*}}{cleave.stage = 0 : i64}
// CHECK:      cleave.add {{.*}}{cleave.stage = 0 : i64}
// CHECK:      cleave.matmul {{.*}}cleave.tp_loop = 2 : i64
// CHECK:      cleave.matmul {{.*}}cleave.tp_loop = 3 : i64

// JSON: "mesh": {
// JSON-NEXT: "pp": 1,
// JSON-NEXT: "tp": 2,
// JSON-NEXT: "dp": 1
// JSON: "name": "l0.fc1.w",
// JSON: "split_dim": 1,
// JSON: "name": "l0.fc2.w",
// JSON: "split_dim": 0,
// JSON: "kind": "all_reduce",

// With two stages, one block each.
// PIPE: module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 2 : i64}
// PIPE: cleave.layer_norm {{.*}}cleave.stage = 0 : i64
// PIPE: cleave.weight "l1.ln.g" {cleave.stage = 1 : i64
// PIPE: cleave.layer_norm {{.*}}cleave.stage = 1 : i64
// PIPE: cleave.matmul {{.*}}{cleave.stage = 1 : i64, cleave.tp_loop = 2 : i64}

// With annotate=false the plan is only reported (the same plan, in JSON
// above); the IR is left as it is.
// REPORT-NOT: cleave.mesh
// REPORT-LABEL: func.func @main(
// REPORT-NOT: cleave.stage
// REPORT-NOT: cleave.tp_loop

// NOTARGET: error: cleave-plan needs a target (target=NAME|PATH)
// OBJECTIVE: error: cleave-plan: objective must be 'throughput' or 'latency', got 'cheapest'
// PINS: error: --pp=4 exceeds the 2 segments the model cuts into

func.func @main(%x: tensor<1x512x1024xf32>) -> tensor<1x512x1024xf32> {
  %g0 = cleave.weight "l0.ln.g" {file = "w.bin", offset = 0 : i64, length = 4096 : i64} : tensor<1024xf32>
  %b0 = cleave.weight "l0.ln.b" {file = "w.bin", offset = 4096 : i64, length = 4096 : i64} : tensor<1024xf32>
  %ln0 = cleave.layer_norm %x, %g0, %b0 {axis = 2 : i64} : (tensor<1x512x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) -> tensor<1x512x1024xf32>
  %w10 = cleave.weight "l0.fc1.w" {file = "w.bin", offset = 8192 : i64, length = 16777216 : i64} : tensor<1024x4096xf32>
  %c10 = cleave.weight "l0.fc1.b" {file = "w.bin", offset = 16785408 : i64, length = 16384 : i64} : tensor<4096xf32>
  %h0 = cleave.matmul %ln0, %w10 : (tensor<1x512x1024xf32>, tensor<1024x4096xf32>) -> tensor<1x512x4096xf32>
  %hb0 = cleave.add %h0, %c10 : (tensor<1x512x4096xf32>, tensor<4096xf32>) -> tensor<1x512x4096xf32>
  %a0 = cleave.gelu %hb0 : tensor<1x512x4096xf32>
  %w20 = cleave.weight "l0.fc2.w" {file = "w.bin", offset = 16801792 : i64, length = 16777216 : i64} : tensor<4096x1024xf32>
  %c20 = cleave.weight "l0.fc2.b" {file = "w.bin", offset = 33579008 : i64, length = 4096 : i64} : tensor<1024xf32>
  %o0 = cleave.matmul %a0, %w20 : (tensor<1x512x4096xf32>, tensor<4096x1024xf32>) -> tensor<1x512x1024xf32>
  %ob0 = cleave.add %o0, %c20 : (tensor<1x512x1024xf32>, tensor<1024xf32>) -> tensor<1x512x1024xf32>
  %r0 = cleave.add %x, %ob0 : (tensor<1x512x1024xf32>, tensor<1x512x1024xf32>) -> tensor<1x512x1024xf32>
  %g1 = cleave.weight "l1.ln.g" {file = "w.bin", offset = 33583104 : i64, length = 4096 : i64} : tensor<1024xf32>
  %b1 = cleave.weight "l1.ln.b" {file = "w.bin", offset = 33587200 : i64, length = 4096 : i64} : tensor<1024xf32>
  %ln1 = cleave.layer_norm %r0, %g1, %b1 {axis = 2 : i64} : (tensor<1x512x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) -> tensor<1x512x1024xf32>
  %w11 = cleave.weight "l1.fc1.w" {file = "w.bin", offset = 33591296 : i64, length = 16777216 : i64} : tensor<1024x4096xf32>
  %c11 = cleave.weight "l1.fc1.b" {file = "w.bin", offset = 50368512 : i64, length = 16384 : i64} : tensor<4096xf32>
  %h1 = cleave.matmul %ln1, %w11 : (tensor<1x512x1024xf32>, tensor<1024x4096xf32>) -> tensor<1x512x4096xf32>
  %hb1 = cleave.add %h1, %c11 : (tensor<1x512x4096xf32>, tensor<4096xf32>) -> tensor<1x512x4096xf32>
  %a1 = cleave.gelu %hb1 : tensor<1x512x4096xf32>
  %w21 = cleave.weight "l1.fc2.w" {file = "w.bin", offset = 50384896 : i64, length = 16777216 : i64} : tensor<4096x1024xf32>
  %c21 = cleave.weight "l1.fc2.b" {file = "w.bin", offset = 67162112 : i64, length = 4096 : i64} : tensor<1024xf32>
  %o1 = cleave.matmul %a1, %w21 : (tensor<1x512x4096xf32>, tensor<4096x1024xf32>) -> tensor<1x512x1024xf32>
  %ob1 = cleave.add %o1, %c21 : (tensor<1x512x1024xf32>, tensor<1024xf32>) -> tensor<1x512x1024xf32>
  %r1 = cleave.add %r0, %ob1 : (tensor<1x512x1024xf32>, tensor<1x512x1024xf32>) -> tensor<1x512x1024xf32>
  return %r1 : tensor<1x512x1024xf32>
}

// The schedule is recorded next to the microbatches.
// ONEFONEB: module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 2 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "1f1b"}

// SCHEDULE: error: cleave-plan: schedule: expected gpipe, 1f1b, interleaved or interleaved:V (V >= 2 model chunks per device), got 'zigzag'
