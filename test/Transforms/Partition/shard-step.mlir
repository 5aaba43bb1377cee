// RUN: cleave-opt %s --cleave-shard-step | FileCheck %s
// RUN: cleave-opt %s --pass-pipeline='builtin.module(cleave-shard-step, cleave-shard-plan, func.func(shard-partition), cleave-lower-shard-comm)' \
// RUN:   | FileCheck %s --check-prefix=SPMD

// A training step of a three-layer MLP (x @ fc0, then fc1 column-parallel
// and fc2 row-parallel, as the plan split the forward; MSE loss, SGD with
// momentum), as `cleave-optimizer-update` leaves it. The pass splits the
// backward and the update from the layouts their operands arrive in.

// The forward keeps the plan's loops.
// CHECK: %[[H1:.*]] = cleave.matmul %{{.*}}, %[[W1:.*]] {cleave.tp_loop = 1 : i64}
// CHECK: cleave.matmul %{{.*}}, %[[W2:.*]] {cleave.tp_loop = 2 : i64}
// The gradient of fc1's activations: split like them (fc2^T by columns),
// with no communication: the conjugate of the forward's all-reduce.
// CHECK: %[[W2T:.*]] = cleave.transpose %[[W2]] {cleave.tp_loop = 1 : i64
// CHECK: %[[DH:.*]] = cleave.matmul %{{.*}}, %[[W2T]] {cleave.tp_loop = 1 : i64}
// fc2's gradient, h^T @ dy: split along fc2's rows, as fc2 is.
// CHECK: cleave.transpose %{{.*}} {cleave.tp_loop = 0 : i64
// CHECK: %[[DW2:.*]] = cleave.matmul %{{.*}} {cleave.tp_loop = 0 : i64}
// ReLU's gradient stays split.
// CHECK: cleave.greater %[[H1]], %{{.*}} {cleave.tp_loop = 1 : i64}
// CHECK: %[[DPRE:.*]] = cleave.where %{{.*}}, %[[DH]], %{{.*}} {cleave.tp_loop = 1 : i64}
// The gradient of fc1's input contracts over the split features (loop 2):
// an all-reduce where the forward had none, the conjugate of the identity.
// CHECK: %[[W1T:.*]] = cleave.transpose %[[W1]] {cleave.tp_loop = 0 : i64
// CHECK: cleave.matmul %[[DPRE]], %[[W1T]] {cleave.tp_loop = 2 : i64}
// fc1's gradient, x1^T @ dpre: split along fc1's columns; x1^T stays whole.
// CHECK: %[[X1T:.*]] = cleave.transpose %{{.*}} {perm
// CHECK: %[[DW1:.*]] = cleave.matmul %[[X1T]], %[[DPRE]] {cleave.tp_loop = 1 : i64}
// fc0, before the split layers, is whole: its gradient too.
// CHECK: %[[DW0:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
// The sums, updates and clearing follow each parameter's layout; the
// loss and fc0's stay whole.
// CHECK: cleave.accumulate %[[DW0]], %{{.*}} : tensor<8x8xf32>
// CHECK: cleave.accumulate %[[DW1]], %{{.*}} {cleave.tp_loop = 1 : i64}
// CHECK: cleave.accumulate %[[DW2]], %{{.*}} {cleave.tp_loop = 0 : i64}
// CHECK: cleave.accumulate %{{.*}}, %{{.*}} {loss} : tensor<f32>
// CHECK: cleave.sgd_update {{.*}} {dampening
// CHECK: cleave.sgd_update {{.*}} {cleave.tp_loop = 1 : i64
// CHECK: cleave.sgd_update {{.*}} {cleave.tp_loop = 0 : i64
// CHECK: cleave.clear %{{.*}} : tensor<8x8xf32>
// CHECK: cleave.clear %{{.*}} {cleave.tp_loop = 1 : i64}
// CHECK: cleave.clear %{{.*}} {cleave.tp_loop = 0 : i64}
// CHECK: cleave.clear %{{.*}} : tensor<f32>

// In SPMD form, Megatron's two all-reduces, one in each direction, and nothing
// gathered. Each device keeps its block of fc1 and fc2, of their gradient
// sums and of their momentum buffers, in place.
// SPMD-NOT: cleave.all_gather
// SPMD-NOT: cleave.all_to_all
// SPMD: cleave.weight "fc0.weight" {{.*}} : tensor<8x8xf32>
// SPMD: %[[W1:.*]] = cleave.weight_slice "fc1.weight" {axis = "tp", {{.*}}split_dim = 1 : i64{{.*}} : tensor<8x8xf32>
// SPMD: %[[W2:.*]] = cleave.weight_slice "fc2.weight" {axis = "tp", {{.*}}split_dim = 0 : i64{{.*}} : tensor<8x8xf32>
// SPMD: %[[Y:.*]] = cleave.matmul %{{.*}}, %[[W2]]
// SPMD-NEXT: cleave.all_reduce %[[Y]] {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4x8xf32>
// SPMD: %[[DX1:.*]] = cleave.matmul %{{.*}}, %{{.*}} {cleave.tp_loop = 2 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// SPMD-NEXT: cleave.all_reduce %[[DX1]] {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4x8xf32>
// SPMD-NOT: cleave.all_reduce
// SPMD: cleave.state "grad:fc0.weight" : tensor<8x8xf32>
// SPMD: cleave.state "grad:fc1.weight" {axis = "tp", group_size = 2 : i64, split_dim = 1 : i64} : tensor<8x8xf32>
// SPMD: cleave.state "grad:fc2.weight" {axis = "tp", group_size = 2 : i64, split_dim = 0 : i64} : tensor<8x8xf32>
// SPMD: cleave.state "sgd.momentum_buffer:fc1.weight" {axis = "tp", group_size = 2 : i64, split_dim = 1 : i64} : tensor<8x8xf32>
// SPMD: cleave.sgd_update %{{.*}}, %{{.*}}, %[[W1]], {{.*}} : tensor<8x8xf32>, tensor<f32>
// SPMD: cleave.state "sgd.momentum_buffer:fc2.weight" {axis = "tp", group_size = 2 : i64, split_dim = 0 : i64} : tensor<8x8xf32>
// SPMD: cleave.sgd_update %{{.*}}, %{{.*}}, %[[W2]], {{.*}} : tensor<8x8xf32>, tensor<f32>

module attributes {cleave.mesh = {dp = 1 : i64, pp = 1 : i64, tp = 2 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "1f1b"} {
  func.func @main(%arg0: tensor<4x8xf32> {cleave.name = "x"}, %arg1: tensor<4x8xf32> {cleave.name = "t"}) -> (tensor<f32> {cleave.name = "loss"}) {
    %0 = cleave.constant dense<0.000000e+00> : tensor<f32>
    %1 = cleave.constant dense<3.125000e-02> : tensor<4x8xf32>
    %2 = cleave.weight "fc0.weight" {cleave.writable, file = "weights.bin", length = 256 : i64, offset = 212 : i64} : tensor<8x8xf32>
    %3 = cleave.matmul %arg0, %2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %4 = cleave.relu %3 : tensor<4x8xf32>
    %5 = cleave.weight "fc1.weight" {cleave.writable, file = "weights.bin", length = 512 : i64, offset = 492 : i64} : tensor<8x16xf32>
    %6 = cleave.matmul %4, %5 {cleave.tp_loop = 1 : i64} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %7 = cleave.relu %6 {cleave.tp_loop = 1 : i64} : tensor<4x16xf32>
    %8 = cleave.weight "fc2.weight" {cleave.writable, file = "weights.bin", length = 512 : i64, offset = 1028 : i64} : tensor<16x8xf32>
    %9 = cleave.matmul %7, %8 {cleave.tp_loop = 2 : i64} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %10 = cleave.sub %9, %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %11 = cleave.mul %10, %10 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %12 = cleave.reduce_mean %11 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
    %13 = cleave.mul %1, %10 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %14 = cleave.add %13, %13 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %15 = cleave.transpose %8 {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
    %16 = cleave.matmul %14, %15 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %17 = cleave.transpose %7 {perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
    %18 = cleave.matmul %17, %14 : (tensor<16x4xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
    %19 = cleave.greater %6, %0 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xi1>
    %20 = cleave.where %19, %16, %0 : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %21 = cleave.transpose %5 {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %22 = cleave.matmul %20, %21 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %23 = cleave.transpose %4 {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %24 = cleave.matmul %23, %20 : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    %25 = cleave.greater %3, %0 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
    %26 = cleave.where %25, %22, %0 : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %27 = cleave.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %28 = cleave.matmul %27, %26 : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %29 = cleave.state "grad:fc0.weight" : tensor<8x8xf32>
    %30 = cleave.accumulate %28, %29 : tensor<8x8xf32>
    %31 = cleave.state "grad:fc1.weight" : tensor<8x16xf32>
    %32 = cleave.accumulate %24, %31 : tensor<8x16xf32>
    %33 = cleave.state "grad:fc2.weight" : tensor<16x8xf32>
    %34 = cleave.accumulate %18, %33 : tensor<16x8xf32>
    %35 = cleave.state "loss.sum:loss" : tensor<f32>
    %36 = cleave.accumulate %12, %35 {loss} : tensor<f32>
    %37 = cleave.constant dense<1.000000e+00> : tensor<f32>
    %38 = cleave.state "sgd.step:fc0.weight" : tensor<f32>
    %39 = cleave.state "sgd.momentum_buffer:fc0.weight" : tensor<8x8xf32>
    %new_parameter, %new_momentum_buffer, %new_step = cleave.sgd_update %30, %37, %2, %39, %38 {dampening = 0.000000e+00 : f64, decay_steps = 0 : i64, learning_rate = 1.000000e-03 : f64, min_lr_ratio = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, warmup_steps = 0 : i64, weight_decay = 0.000000e+00 : f64} : tensor<8x8xf32>, tensor<f32>
    %40 = cleave.state "sgd.step:fc1.weight" : tensor<f32>
    %41 = cleave.state "sgd.momentum_buffer:fc1.weight" : tensor<8x16xf32>
    %new_parameter_0, %new_momentum_buffer_1, %new_step_2 = cleave.sgd_update %32, %37, %5, %41, %40 {dampening = 0.000000e+00 : f64, decay_steps = 0 : i64, learning_rate = 1.000000e-03 : f64, min_lr_ratio = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, warmup_steps = 0 : i64, weight_decay = 0.000000e+00 : f64} : tensor<8x16xf32>, tensor<f32>
    %42 = cleave.state "sgd.step:fc2.weight" : tensor<f32>
    %43 = cleave.state "sgd.momentum_buffer:fc2.weight" : tensor<16x8xf32>
    %new_parameter_3, %new_momentum_buffer_4, %new_step_5 = cleave.sgd_update %34, %37, %8, %43, %42 {dampening = 0.000000e+00 : f64, decay_steps = 0 : i64, learning_rate = 1.000000e-03 : f64, min_lr_ratio = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, warmup_steps = 0 : i64, weight_decay = 0.000000e+00 : f64} : tensor<16x8xf32>, tensor<f32>
    %44 = cleave.constant dense<1.000000e+00> : tensor<f32>
    %45 = cleave.div %36, %44 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %46 = cleave.clear %30 : tensor<8x8xf32>
    %47 = cleave.clear %32 : tensor<8x16xf32>
    %48 = cleave.clear %34 : tensor<16x8xf32>
    %49 = cleave.clear %36 : tensor<f32>
    return %45 : tensor<f32>
  }
}
