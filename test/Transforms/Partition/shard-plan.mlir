// RUN: cleave-opt %s -split-input-file --cleave-shard-plan | FileCheck %s
// RUN: cleave-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(cleave-shard-plan, func.func(shard-partition), cleave-lower-shard-comm)' \
// RUN:   | FileCheck %s --check-prefix=SPMD

// Every tensor gets the sharding its definition gives it and, per distinct
// need of its users, one annotation for them. The weight follows its only
// user (split along N); the argument and the result are whole. tanh and exp
// both need %y whole: they share one annotation, and so one all-gather.

// CHECK: shard.grid @tp(shape = 2) {cleave.axes = ["tp"]}
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[COL:.*]] = shard.sharding @tp split_axes = {{\[\[}}], [0]] : !shard.sharding
// CHECK-DAG: %[[REP:.*]] = shard.sharding @tp split_axes = {{\[\[}}]] : !shard.sharding
// CHECK: %[[X:.*]] = shard.shard %arg0 to %[[REP]] : tensor<4x16xf32>
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK-NEXT: %[[WD:.*]] = shard.shard %[[W]] to %[[COL]] : tensor<16x64xf32>
// CHECK-NEXT: %[[XU:.*]] = shard.shard %[[X]] to %[[REP]] annotate_for_users : tensor<4x16xf32>
// CHECK-NEXT: %[[WU:.*]] = shard.shard %[[WD]] to %[[COL]] annotate_for_users : tensor<16x64xf32>
// CHECK-NEXT: %[[Y:.*]] = cleave.matmul %[[XU]], %[[WU]]
// CHECK-NEXT: %[[YD:.*]] = shard.shard %[[Y]] to %[[COL]] : tensor<4x64xf32>
// CHECK-NEXT: %[[YC:.*]] = shard.shard %[[YD]] to %[[COL]] annotate_for_users : tensor<4x64xf32>
// CHECK-NEXT: cleave.relu %[[YC]]
// CHECK: %[[YR:.*]] = shard.shard %[[YD]] to %[[REP]] annotate_for_users : tensor<4x64xf32>
// CHECK-NEXT: cleave.tanh %[[YR]]
// CHECK: cleave.exp %[[YR]]
// CHECK: cleave.add
// CHECK: %[[Z:.*]] = cleave.add
// CHECK-NEXT: %[[ZD:.*]] = shard.shard %[[Z]] to %[[REP]] : tensor<4x64xf32>
// CHECK-NEXT: %[[RET:.*]] = shard.shard %[[ZD]] to %[[REP]] annotate_for_users : tensor<4x64xf32>
// CHECK-NEXT: return %[[RET]]

// SPMD-LABEL: func.func @main
// SPMD-SAME: (%[[X:.*]]: tensor<4x16xf32>) -> tensor<4x64xf32>
// SPMD: %[[Y:.*]] = cleave.matmul %[[X]], %{{.*}} : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
// SPMD-NEXT: %[[G:.*]] = cleave.all_gather %[[Y]] {axis = "tp", dim = 1 : i64, group_size = 2 : i64} : tensor<4x32xf32> -> tensor<4x64xf32>
// SPMD-NEXT: %[[R:.*]] = cleave.relu %[[Y]] {{.*}}: tensor<4x32xf32>
// SPMD-NEXT: %[[RG:.*]] = cleave.all_gather %[[R]] {{.*}} : tensor<4x32xf32> -> tensor<4x64xf32>
// SPMD-NEXT: cleave.tanh %[[G]] {{.*}}: tensor<4x64xf32>
// SPMD-NEXT: cleave.exp %[[G]] {{.*}}: tensor<4x64xf32>
// SPMD-NOT: cleave.all_gather
// SPMD-NOT: shard.
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x16xf32>) -> tensor<4x64xf32> {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, cleave.stage = 0 : i64} : tensor<16x64xf32>
    %y = cleave.matmul %x, %w {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
    %r = cleave.relu %y {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : tensor<4x64xf32>
    %t = cleave.tanh %y {cleave.stage = 0 : i64} : tensor<4x64xf32>
    %e = cleave.exp %y {cleave.stage = 0 : i64} : tensor<4x64xf32>
    %s = cleave.add %t, %e {cleave.stage = 0 : i64} : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    %z = cleave.add %s, %r {cleave.stage = 0 : i64} : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    return %z : tensor<4x64xf32>
  }
}

// -----

// A weight whose users disagree (one splits it, one needs it whole) is
// stored whole; the splitting user takes its slice.

// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[COL:.*]] = shard.sharding @tp split_axes = {{\[\[}}], [0]] : !shard.sharding
// CHECK-DAG: %[[REP:.*]] = shard.sharding @tp split_axes = {{\[\[}}]] : !shard.sharding
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK-NEXT: shard.shard %[[W]] to %[[REP]] : tensor<16x64xf32>

// SPMD-LABEL: func.func @main
// SPMD: %[[W:.*]] = cleave.weight "w" {{.*}} : tensor<16x64xf32>
// SPMD: cleave.all_slice %[[W]] {axis = "tp", dim = 1 : i64, group_size = 2 : i64} : tensor<16x64xf32> -> tensor<16x32xf32>
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x16xf32>) -> (tensor<4x64xf32>, tensor<16x64xf32>) {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, cleave.stage = 0 : i64} : tensor<16x64xf32>
    %y = cleave.matmul %x, %w {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
    %n = cleave.neg %w {cleave.stage = 0 : i64} : tensor<16x64xf32>
    return %y, %n : tensor<4x64xf32>, tensor<16x64xf32>
  }
}

// -----

// A constant stays whole even when the plan splits it; its split user takes
// its slice.

// CHECK-LABEL: func.func @main
// CHECK: %[[C:.*]] = cleave.constant
// CHECK-NEXT: shard.shard %[[C]] to %{{.*}} : tensor<64xf32>

// SPMD-LABEL: func.func @main
// SPMD: %[[C:.*]] = cleave.constant {{.*}} : tensor<64xf32>
// SPMD: %[[S:.*]] = cleave.all_slice %[[C]] {axis = "tp", dim = 0 : i64, group_size = 2 : i64} : tensor<64xf32> -> tensor<32xf32>
// SPMD: cleave.add %{{.*}}, %[[S]] {{.*}}: (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %c = cleave.constant {cleave.stage = 0 : i64, cleave.tp_loop = 0 : i64} dense<1.000000e+00> : tensor<64xf32>
    %y = cleave.add %x, %c {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
    return %y : tensor<4x64xf32>
  }
}

// -----

// Several arguments: each annotation follows the sharding it names, which
// sits at the top of the body (the IR verifies: definitions dominate uses).

// CHECK-LABEL: func.func @main(%arg0: tensor<4x16xf32>, %arg1: tensor<4x16xf32>, %arg2
// CHECK: %[[REP3:.*]] = shard.sharding @tp split_axes = {{\[\[}}]] : !shard.sharding
// CHECK-DAG: shard.shard %arg0 to %[[REP3]] : tensor<4x16xf32>
// CHECK-DAG: shard.shard %arg1 to %[[REP3]] : tensor<4x16xf32>
// CHECK-DAG: shard.shard %arg2 to %[[REP3]] : tensor<4x16xf32>
module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %s = cleave.add %a, %b {cleave.stage = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %t = cleave.add %s, %c {cleave.stage = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    return %t : tensor<4x16xf32>
  }
}
