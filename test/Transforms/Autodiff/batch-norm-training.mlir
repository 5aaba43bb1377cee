// RUN: cleave-opt %s -split-input-file --cleave-batch-norm-training | FileCheck %s
// RUN: cleave-opt %s -split-input-file --cleave-batch-norm-training=step=false | FileCheck %s --check-prefix=ONNX
// RUN: cleave-opt %s -split-input-file --cleave-batch-norm-training=sync-replicas=2 | FileCheck %s --check-prefix=SYNC
// RUN: not cleave-opt %s -split-input-file --cleave-batch-norm-training=sync-replicas=0 2>&1 | FileCheck %s --check-prefix=SYNC-ZERO

// Synchronised over 2 replicas: the per-channel sums of the input and of
// the squared deviations are all-reduced along dp and divided by the count
// of both replicas' values (2 x 16 per channel: 1/32); the running
// variance is unbiased over 32 values (32/31).
// SYNC-LABEL: func.func @main
// SYNC: %[[SUM:.*]] = cleave.reduce_sum %{{.*}} {axes = array<i64: 0, 2>} : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
// SYNC-NEXT: %[[ALL:.*]] = cleave.all_reduce %[[SUM]] {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<1x4x1xf32>
// SYNC-NEXT: %[[INV:.*]] = cleave.constant dense<3.125000e-02> : tensor<f32>
// SYNC-NEXT: %[[MEAN:.*]] = cleave.mul %[[ALL]], %[[INV]]
// SYNC: %[[SQ:.*]] = cleave.reduce_sum %{{.*}} {axes = array<i64: 0, 2>}
// SYNC-NEXT: cleave.all_reduce %[[SQ]] {axis = "dp", group_size = 2 : i64, reduction = "sum"}
// SYNC: cleave.constant dense<1.03225803> : tensor<f32>
// SYNC-ZERO: error: sync-replicas=0: the number of data-parallel replicas must be positive

// In a training step the output is normalised by the batch's mean and
// biased variance over every dimension but the channels, and each running
// statistic (a weight, made writable) takes one SGD step of rate
// 1 - momentum = 0.25 towards the batch's, without a momentum buffer: the
// mean, and the variance made unbiased (16 values per channel: 16 / 15).

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x4x8xf32>
// CHECK-NOT: cleave.batch_norm
// CHECK: %[[S:.*]] = cleave.weight "bn.weight" {file
// CHECK: %[[B:.*]] = cleave.weight "bn.bias" {file
// CHECK: %[[M:.*]] = cleave.weight "bn.running_mean" {cleave.writable
// CHECK: %[[V:.*]] = cleave.weight "bn.running_var" {cleave.writable
// CHECK: %[[MEAN:.*]] = cleave.reduce_mean %[[X]] {axes = array<i64: 0, 2>} : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[C:.*]] = cleave.sub %[[X]], %[[MEAN]]
// CHECK-NEXT: %[[C2:.*]] = cleave.mul %[[C]], %[[C]]
// CHECK-NEXT: %[[VAR:.*]] = cleave.reduce_mean %[[C2]] {axes = array<i64: 0, 2>} : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[MEANC:.*]] = cleave.reshape %[[MEAN]] : tensor<1x4x1xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[DM:.*]] = cleave.sub %[[M]], %[[MEANC]]
// CHECK-NEXT: %[[MSTEP:.*]] = cleave.state "running_statistic.step:bn.running_mean" : tensor<f32>
// CHECK-NEXT: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: cleave.sgd_update %[[DM]], %[[ONE]], %[[M]], %[[MSTEP]] {dampening = 0.000000e+00 : f64, decay_steps = 0 : i64, learning_rate = 2.500000e-01 : f64, min_lr_ratio = 0.000000e+00 : f64, momentum = 0.000000e+00 : f64, nesterov = false, warmup_steps = 0 : i64, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT: %[[VARC:.*]] = cleave.reshape %[[VAR]] : tensor<1x4x1xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[BESSEL:.*]] = cleave.constant dense<1.06666672> : tensor<f32>
// CHECK-NEXT: %[[UNBIASED:.*]] = cleave.mul %[[VARC]], %[[BESSEL]]
// CHECK-NEXT: %[[DV:.*]] = cleave.sub %[[V]], %[[UNBIASED]]
// CHECK-NEXT: %[[VSTEP:.*]] = cleave.state "running_statistic.step:bn.running_var" : tensor<f32>
// CHECK-NEXT: %[[ONE2:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: cleave.sgd_update %[[DV]], %[[ONE2]], %[[V]], %[[VSTEP]] {{{.*}}learning_rate = 2.500000e-01 : f64{{.*}}momentum = 0.000000e+00 : f64
// CHECK-NEXT: %[[EPS:.*]] = cleave.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT: %[[VE:.*]] = cleave.add %[[VAR]], %[[EPS]]
// CHECK-NEXT: %[[DEV:.*]] = cleave.sqrt %[[VE]]
// CHECK-NEXT: %[[N:.*]] = cleave.div %[[C]], %[[DEV]]
// CHECK-NEXT: %[[SC:.*]] = cleave.reshape %[[S]] : tensor<4xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[Y0:.*]] = cleave.mul %[[N]], %[[SC]]
// CHECK-NEXT: %[[BC:.*]] = cleave.reshape %[[B]] : tensor<4xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[Y:.*]] = cleave.add %[[Y0]], %[[BC]] : (tensor<2x4x8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[Y]]

// Outside a training step an op without training_mode keeps its running
// statistics.
// ONNX-LABEL: func.func @main
// ONNX: cleave.batch_norm
// ONNX-NOT: cleave.sgd_update
func.func @main(%x: tensor<2x4x8xf32> {cleave.name = "x"}) -> (tensor<2x4x8xf32> {cleave.name = "y"}) {
  %s = cleave.weight "bn.weight" {file = "/m.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  %b = cleave.weight "bn.bias" {file = "/m.bin", offset = 16 : i64, length = 16 : i64} : tensor<4xf32>
  %m = cleave.weight "bn.running_mean" {file = "/m.bin", offset = 32 : i64, length = 16 : i64} : tensor<4xf32>
  %v = cleave.weight "bn.running_var" {file = "/m.bin", offset = 48 : i64, length = 16 : i64} : tensor<4xf32>
  %y = cleave.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-03 : f32, momentum = 0.75 : f32} : (tensor<2x4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// training_mode (ONNX's training_mode = 1) uses the batch's statistics
// outside a training step too, and updates nothing there. Running
// statistics that are constants have no memory to be updated in.

// CHECK-LABEL: func.func @main
// CHECK-NOT: cleave.batch_norm
// CHECK-NOT: cleave.sgd_update
// CHECK: cleave.reduce_mean {{.*}} {axes = array<i64: 0, 2, 3>} : (tensor<3x2x4x4xf32>) -> tensor<1x2x1x1xf32>
// CHECK-NOT: cleave.sgd_update
// CHECK: return

// ONNX-LABEL: func.func @main
// ONNX-NOT: cleave.batch_norm
// ONNX-NOT: cleave.writable
// ONNX: cleave.reduce_mean {{.*}} {axes = array<i64: 0, 2, 3>} : (tensor<3x2x4x4xf32>) -> tensor<1x2x1x1xf32>
// ONNX-NOT: cleave.sgd_update
// ONNX: return
func.func @main(%x: tensor<3x2x4x4xf32> {cleave.name = "x"}) -> (tensor<3x2x4x4xf32> {cleave.name = "y"}) {
  %c = cleave.constant dense<1.0> : tensor<2xf32>
  %y = cleave.batch_norm %x, %c, %c, %c, %c {training_mode} : (tensor<3x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2x4x4xf32>
  return %y : tensor<3x2x4x4xf32>
}
