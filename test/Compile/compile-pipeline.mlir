// RUN: cleave-opt %s --cleave-compile-pipeline="target=cpu devices=4 pp=2 tp=2 microbatches=1 plan-json=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=JSON
// RUN: cleave-opt %s --cleave-compile-pipeline="target=cpu devices=2 dp=2 microbatches=2" | FileCheck %s --check-prefix=DP
// RUN: cleave-opt %s --cleave-compile-pipeline="target=cpu devices=2 pp=2 microbatches=4 schedule=1f1b" | FileCheck %s --check-prefix=ONEFONEB
// RUN: cleave-opt %s --cleave-compile-pipeline="target=cpu devices=1 plan-json=%t.one.json" | FileCheck %s --check-prefix=ONE
// RUN: FileCheck %s --input-file=%t.one.json --check-prefix=ONE-JSON
// RUN: cleave-opt %s --cleave-compile-pipeline="target=cpu devices=4 pp=2 objective=latency" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASSES
// RUN: cleave-opt %s --cleave-compile-pipeline="devices=1" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE-PASSES

// The passes of `cleave compile` on two pre-norm MLP blocks: simplified (the
// repeated layer norm is CSE'd), planned on 2 stages x 2 tensor-parallel
// devices and partitioned into one SPMD function per stage, FC1
// column-parallel and FC2 row-parallel with one all-reduce per block.

// CHECK: module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 2 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "gpipe"}
// CHECK-LABEL: func.func @stage_0(
// CHECK-SAME:    %[[X:.+]]: tensor<4x64x512xf32> {cleave.input = 0 : i64, cleave.name = "x"}) attributes {cleave.stage = 0 : i64}
// CHECK:         %[[LN:.+]] = cleave.layer_norm %[[X]]
// CHECK-NOT:     cleave.layer_norm
// CHECK:         %[[IN:.+]] = cleave.add %[[LN]], %[[LN]]
// CHECK:         %[[W1:.+]] = cleave.weight_slice "l0.fc1.w" {axis = "tp", {{.*}}split_dim = 1 : i64{{.*}}} : tensor<512x1024xf32>
// CHECK:         %[[H:.+]] = cleave.matmul %[[IN]], %[[W1]]
// CHECK:         %[[A:.+]] = cleave.gelu %[[H]] : tensor<4x64x1024xf32>
// CHECK:         %[[W2:.+]] = cleave.weight_slice "l0.fc2.w" {axis = "tp", {{.*}}split_dim = 0 : i64{{.*}}} : tensor<1024x512xf32>
// CHECK:         %[[O:.+]] = cleave.matmul %[[A]], %[[W2]]
// CHECK:         %[[SUM:.+]] = cleave.all_reduce %[[O]] {axis = "tp", group_size = 2 : i64, reduction = "sum"}
// CHECK:         %[[R:.+]] = cleave.add %[[X]], %[[SUM]]
// CHECK:         cleave.send %[[R]] to 1 tag 0
// CHECK-LABEL: func.func @stage_1()
// CHECK-SAME:    -> (tensor<4x64x512xf32> {cleave.name = "y", cleave.output = 0 : i64}) attributes {cleave.stage = 1 : i64}
// CHECK:         %[[R0:.+]] = cleave.recv from 0 tag 0
// CHECK:         cleave.layer_norm %[[R0]]
// CHECK:         cleave.weight_slice "l1.fc1.w"
// CHECK:         cleave.all_reduce
// CHECK-NOT:     func.func @main

// The plan the bundle's plan.json holds.
// JSON:      "mesh": {
// JSON-NEXT:   "pp": 2,
// JSON-NEXT:   "tp": 2,
// JSON-NEXT:   "dp": 1
// JSON:      "microbatches": 1,

// Two replicas of two microbatches: the stage's ports hold blocks of the
// batch, and say where.
// DP: module attributes {cleave.mesh = {dp = 2 : i64, pp = 1 : i64, tp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "gpipe"}
// DP-LABEL: func.func @stage_0(
// DP-SAME:    tensor<1x64x512xf32> {cleave.batch_dim = 0 : i64, cleave.input = 0 : i64, cleave.name = "x"})
// DP-SAME:    -> (tensor<1x64x512xf32> {cleave.batch_dim = 0 : i64, cleave.name = "y", cleave.output = 0 : i64})

// The schedule option reaches the plan's record on the IR.
// ONEFONEB: module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 4 : i64, cleave.schedule = "1f1b"}

// One device runs the function as simplified: the plan is only reported.
// ONE-NOT: cleave.mesh
// ONE-LABEL: func.func @main(
// ONE:         %[[LN:.+]] = cleave.layer_norm
// ONE-NOT:     cleave.layer_norm
// ONE:         cleave.add %[[LN]], %[[LN]]
// ONE-NOT:     cleave.stage
// ONE-NOT:     cleave.weight_slice
// ONE-JSON:      "devices": 1,
// ONE-JSON:      "mesh": {
// ONE-JSON-NEXT:   "pp": 1,
// ONE-JSON-NEXT:   "tp": 1,
// ONE-JSON-NEXT:   "dp": 1

// PASSES:      builtin.module(
// PASSES-NEXT:   func.func(
// PASSES-NEXT:     canonicalize
// PASSES-NEXT:     cleave-fuse-patterns,
// PASSES-NEXT:     canonicalize
// PASSES-NEXT:     cse
// PASSES-NEXT:   ),
// PASSES-NEXT:   cleave-batch-norm-training{entry=main step=false sync-replicas=1},
// PASSES-NEXT:   cleave-split-projections,
// PASSES-NEXT:   cleave-plan{{[{].*}}annotate=true {{.*}}devices=4 {{.*}}objective=latency {{.*}}pp=2 {{.*}}target=cpu {{.*}}tp=0
// PASSES-NEXT:   cleave-split-projections,
// PASSES-NEXT:   cleave-shard-plan{entry=main},
// PASSES-NEXT:   func.func(
// PASSES-NEXT:     shard-partition
// PASSES-NEXT:   ),
// PASSES-NEXT:   cleave-lower-shard-comm,
// PASSES-NEXT:   cleave-outline-stages{entry=main},
// PASSES-NEXT:   cleave-verify-partition{target=cpu

// ONE-PASSES:      cse
// ONE-PASSES-NEXT:   ),
// ONE-PASSES-NEXT:   cleave-batch-norm-training{entry=main step=false sync-replicas=1},
// ONE-PASSES-NEXT:   cleave-plan{{[{].*}}annotate=false {{.*}}devices=1 {{.*}}target=cpu
// ONE-PASSES-NEXT: )

func.func @main(%x: tensor<4x64x512xf32> {cleave.name = "x"}) -> (tensor<4x64x512xf32> {cleave.name = "y"}) {
  %g0 = cleave.weight "l0.ln.g" {file = "w.bin", offset = 0 : i64, length = 2048 : i64} : tensor<512xf32>
  %b0 = cleave.weight "l0.ln.b" {file = "w.bin", offset = 2048 : i64, length = 2048 : i64} : tensor<512xf32>
  %ln0 = cleave.layer_norm %x, %g0, %b0 {axis = 2 : i64} : (tensor<4x64x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<4x64x512xf32>
  // The same layer norm again: cleave-simplify (CSE) keeps one.
  %ln0b = cleave.layer_norm %x, %g0, %b0 {axis = 2 : i64} : (tensor<4x64x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<4x64x512xf32>
  %in0 = cleave.add %ln0, %ln0b : (tensor<4x64x512xf32>, tensor<4x64x512xf32>) -> tensor<4x64x512xf32>
  %w10 = cleave.weight "l0.fc1.w" {file = "w.bin", offset = 4096 : i64, length = 4194304 : i64} : tensor<512x2048xf32>
  %h0 = cleave.matmul %in0, %w10 : (tensor<4x64x512xf32>, tensor<512x2048xf32>) -> tensor<4x64x2048xf32>
  %a0 = cleave.gelu %h0 : tensor<4x64x2048xf32>
  %w20 = cleave.weight "l0.fc2.w" {file = "w.bin", offset = 4198400 : i64, length = 4194304 : i64} : tensor<2048x512xf32>
  %o0 = cleave.matmul %a0, %w20 : (tensor<4x64x2048xf32>, tensor<2048x512xf32>) -> tensor<4x64x512xf32>
  %r0 = cleave.add %x, %o0 : (tensor<4x64x512xf32>, tensor<4x64x512xf32>) -> tensor<4x64x512xf32>
  %g1 = cleave.weight "l1.ln.g" {file = "w.bin", offset = 8392704 : i64, length = 2048 : i64} : tensor<512xf32>
  %b1 = cleave.weight "l1.ln.b" {file = "w.bin", offset = 8394752 : i64, length = 2048 : i64} : tensor<512xf32>
  %ln1 = cleave.layer_norm %r0, %g1, %b1 {axis = 2 : i64} : (tensor<4x64x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<4x64x512xf32>
  %w11 = cleave.weight "l1.fc1.w" {file = "w.bin", offset = 8396800 : i64, length = 4194304 : i64} : tensor<512x2048xf32>
  %h1 = cleave.matmul %ln1, %w11 : (tensor<4x64x512xf32>, tensor<512x2048xf32>) -> tensor<4x64x2048xf32>
  %a1 = cleave.gelu %h1 : tensor<4x64x2048xf32>
  %w21 = cleave.weight "l1.fc2.w" {file = "w.bin", offset = 12591104 : i64, length = 4194304 : i64} : tensor<2048x512xf32>
  %o1 = cleave.matmul %a1, %w21 : (tensor<4x64x2048xf32>, tensor<2048x512xf32>) -> tensor<4x64x512xf32>
  %r1 = cleave.add %r0, %o1 : (tensor<4x64x512xf32>, tensor<4x64x512xf32>) -> tensor<4x64x512xf32>
  return %r1 : tensor<4x64x512xf32>
}
