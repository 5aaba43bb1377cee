// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-outline-stages | FileCheck %s
// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-outline-stages --cleave-verify-partition \
// RUN:   | FileCheck %s --check-prefix=VERIFIED

// The outlined stages pass the deadlock check for every microbatch.
// VERIFIED-LABEL: func.func @stage_0
// VERIFIED-LABEL: func.func @stage_1
// VERIFIED-LABEL: func.func @stage_2

// Three stages. %a crosses from stage 0 to stages 1 and 2 (a tag per
// destination), %b from 1 to 2; stage 2 receives by source stage. The weight
// is copied into both stages that use it, never sent. The argument goes to
// the two stages that read it, and each result leaves the stage that defines
// it. %n has no stage and joins the stage of its operand's definition.

// CHECK-NOT: func.func @main
// CHECK-LABEL: func.func @stage_0
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32> {cleave.input = 0 : i64}) -> (tensor<4xf32> {cleave.output = 1 : i64})
// CHECK-SAME: attributes {cleave.stage = 0 : i64}
// CHECK-NEXT: %[[W:.*]] = cleave.weight "w" {file = "/m.data", length = 16 : i64, offset = 0 : i64} : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = cleave.add %[[X]], %[[W]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[N:.*]] = cleave.neg %[[A]] : tensor<4xf32>
// CHECK-NEXT: cleave.send %[[A]] to 1 tag 0 : tensor<4xf32>
// CHECK-NEXT: cleave.send %[[A]] to 2 tag 1 : tensor<4xf32>
// CHECK-NEXT: return %[[N]]
// CHECK-LABEL: func.func @stage_1
// CHECK-SAME: () attributes {cleave.stage = 1 : i64}
// CHECK-NEXT: %[[A1:.*]] = cleave.recv from 0 tag 0 : tensor<4xf32>
// CHECK-NEXT: %[[W1:.*]] = cleave.weight "w"
// CHECK-NEXT: %[[B:.*]] = cleave.mul %[[A1]], %[[W1]]
// CHECK-NEXT: cleave.send %[[B]] to 2 tag 2 : tensor<4xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @stage_2
// CHECK-SAME: (%[[X2:.*]]: tensor<4xf32> {cleave.input = 0 : i64}) -> (tensor<4xf32> {cleave.output = 0 : i64})
// CHECK-NEXT: %[[A2:.*]] = cleave.recv from 0 tag 1 : tensor<4xf32>
// CHECK-NEXT: %[[B2:.*]] = cleave.recv from 1 tag 2 : tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = cleave.add %[[A2]], %[[B2]]
// CHECK-NEXT: %[[D:.*]] = cleave.sub %[[C]], %[[X2]]
// CHECK-NEXT: return %[[D]]
module attributes {cleave.mesh = {pp = 3 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64} {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 16 : i64, cleave.stage = 0 : i64} : tensor<4xf32>
    %a = cleave.add %x, %w {cleave.stage = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n = cleave.neg %a : tensor<4xf32>
    %b = cleave.mul %a, %w {cleave.stage = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %c = cleave.add %a, %b {cleave.stage = 2 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %d = cleave.sub %c, %x {cleave.stage = 2 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %d, %n : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = cleave.relu %x {cleave.stage = 1 : i64} : tensor<4xf32>
    // expected-error @+1 {{in stage 0 uses a value of stage 1; values may only flow to later stages}}
    %b = cleave.tanh %a {cleave.stage = 0 : i64} : tensor<4xf32>
    return %b : tensor<4xf32>
  }
}

// -----

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{is in stage 2, but the plan has 2 pipeline stages}}
    %a = cleave.relu %x {cleave.stage = 2 : i64} : tensor<4xf32>
    return %a : tensor<4xf32>
  }
}
