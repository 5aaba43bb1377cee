// RUN: cleave-opt %s --cleave-autodiff="loss=loss freeze=^frozen\." | FileCheck %s
// RUN: cleave-opt %s --cleave-autodiff="loss=loss freeze=^frozen\." --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// The pass on a whole function: a tied embedding (the weight "emb" read by a
// gather and, through a second weight op, by the output projection) gets
// one gradient, the sum of both uses'; a frozen weight gets none but the
// cotangent flows through its use; a parameter the loss does not read gets
// zeros; the loss may be a one-element tensor; the other results are
// dropped with the ops only they needed. Ops off the path from the
// parameters to the loss need no rule (the max pool, the integer shape).

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IDS:[a-z0-9]+]]: tensor<2x3xi64> {cleave.name = "ids"}, %{{[a-z0-9]+}}: tensor<2x8xf32> {cleave.name = "x"})
// CHECK-SAME: -> (tensor<1xf32> {cleave.name = "loss"}, tensor<10x4xf32> {cleave.gradient_of = "emb", cleave.name = "grad:emb"}, tensor<2x8xf32> {cleave.gradient_of = "unused", cleave.name = "grad:unused"})
// CHECK-NOT: global_max_pool
// CHECK-NOT: cleave.shape
// CHECK: %[[EMB:.*]] = cleave.weight "emb"
// CHECK: %[[FROZEN:.*]] = cleave.weight "frozen.scale"
// CHECK: %[[S:.*]] = cleave.mul %{{.*}}, %[[FROZEN]]
// CHECK: %[[EMB2:.*]] = cleave.weight "emb"
// CHECK: %[[T:.*]] = cleave.transpose %[[EMB2]]
// CHECK: %[[LOGITS:.*]] = cleave.matmul %[[S]], %[[T]]
// CHECK: %[[LOSS:.*]] = cleave.reshape %{{.*}} : tensor<f32> -> tensor<1xf32>
// The cotangent of logits * logits: both uses of the value add up.
// CHECK: %[[MEAN:.*]] = cleave.constant dense<0.0166666675> : tensor<2x3x10xf32>
// CHECK-NEXT: %[[A:.*]] = cleave.mul %[[MEAN]], %[[LOGITS]]
// CHECK-NEXT: %[[B:.*]] = cleave.mul %[[MEAN]], %[[LOGITS]]
// CHECK-NEXT: %[[DLOGITS:.*]] = cleave.add %[[A]], %[[B]]
// CHECK: %[[DT:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<4x6xf32>, tensor<6x10xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[DEMB2:.*]] = cleave.transpose %[[DT]] {perm = array<i64: 1, 0>} : (tensor<4x10xf32>) -> tensor<10x4xf32>
// CHECK-NEXT: %[[DS:.*]] = cleave.mul %{{.*}}, %[[FROZEN]]
// CHECK: %[[DEMB:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<10x6xf32>, tensor<6x4xf32>) -> tensor<10x4xf32>
// CHECK-NEXT: %[[TIED:.*]] = cleave.add %[[DEMB]], %[[DEMB2]]
// CHECK-NEXT: %[[ZERO:.*]] = cleave.constant dense<0.000000e+00> : tensor<2x8xf32>
// CHECK-NEXT: return %[[LOSS]], %[[TIED]], %[[ZERO]] : tensor<1xf32>, tensor<10x4xf32>, tensor<2x8xf32>

// The backward ops of a node are named after it, with /grad.
// LOC: cleave.matmul {{.*}} -> tensor<4x10xf32> loc(#[[MM:loc[0-9]+]])
// LOC: cleave.matmul {{.*}} -> tensor<10x4xf32> loc(#[[GATHER:loc[0-9]+]])
// LOC-NEXT: cleave.add {{.*}} loc(#[[SUM:loc[0-9]+]])
// LOC-DAG: #[[MM]] = loc("MatMul_1/grad")
// LOC-DAG: #[[GATHER]] = loc("Gather_0/grad")
// LOC-DAG: #[[SUM]] = loc("emb/grad")

func.func @main(%ids: tensor<2x3xi64> {cleave.name = "ids"}, %x: tensor<2x8xf32> {cleave.name = "x"}) -> (tensor<2x3x10xf32> {cleave.name = "logits"}, tensor<1xf32> {cleave.name = "loss"}, tensor<2x8xf32> {cleave.name = "other"}) {
  %emb = cleave.weight "emb" {file = "/m.bin", offset = 0 : i64, length = 160 : i64} : tensor<10x4xf32> loc("emb")
  %h = cleave.gather %emb, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32> loc("Gather_0")
  %frozen = cleave.weight "frozen.scale" {file = "/m.bin", offset = 160 : i64, length = 16 : i64} : tensor<4xf32>
  %s = cleave.mul %h, %frozen : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %emb2 = cleave.weight "emb" {file = "/m.bin", offset = 0 : i64, length = 160 : i64} : tensor<10x4xf32>
  %t = cleave.transpose %emb2 {perm = array<i64: 1, 0>} : (tensor<10x4xf32>) -> tensor<4x10xf32>
  %logits = cleave.matmul %s, %t : (tensor<2x3x4xf32>, tensor<4x10xf32>) -> tensor<2x3x10xf32> loc("MatMul_1")
  %sq = cleave.mul %logits, %logits : (tensor<2x3x10xf32>, tensor<2x3x10xf32>) -> tensor<2x3x10xf32>
  %loss = cleave.reduce_mean %sq {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x10xf32>) -> tensor<f32>
  %loss1 = cleave.reshape %loss : tensor<f32> -> tensor<1xf32>
  %unused = cleave.weight "unused" {file = "/m.bin", offset = 176 : i64, length = 64 : i64} : tensor<2x8xf32>
  %o = cleave.global_max_pool %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %other = cleave.add %o, %unused : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %idx = cleave.shape %emb {start = 0 : i64, end = 1 : i64} : (tensor<10x4xf32>) -> tensor<1xi64>
  return %logits, %loss1, %other : tensor<2x3x10xf32>, tensor<1xf32>, tensor<2x8xf32>
}
