// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss | FileCheck %s

// Backpropagation through time for the recurrent layers. Each loss is
// sum(f(...) * d), so the cotangent reaching f's result is %d.

// GRU, forward: the previous hidden state of every step is the op's y
// shifted by one step behind the initial state (zeros here), so the gate
// pre-activations of all steps come from one matmul each; the cotangents
// run from the last step back, and the weights' cotangents are one matmul
// over all steps (the candidate block of R multiplies the reset states).

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<3x2x4xf32> {cleave.name = "x"}, %[[DY:[a-z0-9]+]]: tensor<3x1x2x5xf32> {cleave.name = "dy"})
// CHECK: %[[Y:.*]], %{{.*}} = cleave.gru
// CHECK: %[[YS:.*]] = cleave.reshape %[[Y]] : tensor<3x1x2x5xf32> -> tensor<3x2x5xf32>
// CHECK-NEXT: %[[DYS:.*]] = cleave.reshape %[[DY]] : tensor<3x1x2x5xf32> -> tensor<3x2x5xf32>
// CHECK: %[[H0:.*]] = cleave.constant dense<0.000000e+00> : tensor<1x2x5xf32>
// CHECK-NEXT: %[[EARLIER:.*]] = cleave.slice %[[YS]] {ends = array<i64: 2, 2, 5>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : (tensor<3x2x5xf32>) -> tensor<2x2x5xf32>
// CHECK-NEXT: %[[PREV:.*]] = cleave.concat %[[H0]], %[[EARLIER]] {axis = 0 : i64} : (tensor<1x2x5xf32>, tensor<2x2x5xf32>) -> tensor<3x2x5xf32>
// CHECK-NEXT: %[[XROWS:.*]] = cleave.reshape %[[X]] : tensor<3x2x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[PROWS:.*]] = cleave.reshape %[[PREV]] : tensor<3x2x5xf32> -> tensor<6x5xf32>
// CHECK: cleave.matmul %[[XROWS]], %{{.*}} : (tensor<6x4xf32>, tensor<4x15xf32>) -> tensor<6x15xf32>
// CHECK: cleave.matmul %[[PROWS]], %{{.*}} : (tensor<6x5xf32>, tensor<5x10xf32>) -> tensor<6x10xf32>
// The last step first.
// CHECK: cleave.slice %[[DYS]] {ends = array<i64: 3, 2, 5>, starts = array<i64: 2, 0, 0>
// CHECK: %[[D2:.*]] = cleave.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x15xf32>
// CHECK: cleave.slice %[[DYS]] {ends = array<i64: 2, 2, 5>, starts = array<i64: 1, 0, 0>
// CHECK: %[[D1:.*]] = cleave.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x15xf32>
// CHECK: cleave.slice %[[DYS]] {ends = array<i64: 1, 2, 5>, starts = array<i64: 0, 0, 0>
// CHECK: %[[D0:.*]] = cleave.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x15xf32>
// CHECK-NEXT: %[[DROWS:.*]] = cleave.concat %[[D0]], %[[D1]], %[[D2]] {axis = 0 : i64} : (tensor<2x15xf32>, tensor<2x15xf32>, tensor<2x15xf32>) -> tensor<6x15xf32>
// CHECK-NEXT: %[[DT:.*]] = cleave.transpose %[[DROWS]] {perm = array<i64: 1, 0>}
// CHECK-NEXT: %[[DW:.*]] = cleave.matmul %[[DT]], %[[XROWS]] : (tensor<15x6xf32>, tensor<6x4xf32>) -> tensor<15x4xf32>
// CHECK-NEXT: %[[DZR:.*]] = cleave.slice %[[DROWS]] {ends = array<i64: 6, 10>, starts = array<i64: 0, 0>
// CHECK-NEXT: %[[DH:.*]] = cleave.slice %[[DROWS]] {ends = array<i64: 6, 15>, starts = array<i64: 0, 10>
// CHECK-NEXT: %[[RESET:.*]] = cleave.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: %[[DZRT:.*]] = cleave.transpose %[[DZR]]
// CHECK-NEXT: %[[DRZR:.*]] = cleave.matmul %[[DZRT]], %[[PROWS]] : (tensor<10x6xf32>, tensor<6x5xf32>) -> tensor<10x5xf32>
// CHECK-NEXT: %[[DHT:.*]] = cleave.transpose %[[DH]]
// CHECK-NEXT: %[[DRH:.*]] = cleave.matmul %[[DHT]], %[[RESET]] : (tensor<5x6xf32>, tensor<6x5xf32>) -> tensor<5x5xf32>
// CHECK-NEXT: %[[DR:.*]] = cleave.concat %[[DRZR]], %[[DRH]] {axis = 0 : i64} : (tensor<10x5xf32>, tensor<5x5xf32>) -> tensor<15x5xf32>
// CHECK-NEXT: %[[DW3:.*]] = cleave.reshape %[[DW]] : tensor<15x4xf32> -> tensor<1x15x4xf32>
// CHECK-NEXT: %[[DR3:.*]] = cleave.reshape %[[DR]] : tensor<15x5xf32> -> tensor<1x15x5xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW3]], %[[DR3]]
func.func @main(%x: tensor<3x2x4xf32> {cleave.name = "x"}, %dy: tensor<3x1x2x5xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 240 : i64} : tensor<1x15x4xf32>
  %r = cleave.weight "r" {file = "/m.bin", offset = 240 : i64, length = 300 : i64} : tensor<1x15x5xf32>
  %y, %h = cleave.gru %x, %w, %r {activations = ["Sigmoid", "Tanh"], hidden_size = 5 : i64} : (tensor<3x2x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>) -> (tensor<3x1x2x5xf32>, tensor<1x2x5xf32>)
  %p = cleave.mul %y, %dy : (tensor<3x1x2x5xf32>, tensor<3x1x2x5xf32>) -> tensor<3x1x2x5xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<3x1x2x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// LSTM, bidirectional, only the last hidden state in the loss: the
// backward direction's previous states are y shifted the other way, each
// step's cotangent stacks the gate blocks i, o, f, c, and the directions'
// cotangents are stacked back along the direction dimension.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x1x3xf32> {cleave.name = "x"}, %[[DHN:[a-z0-9]+]]: tensor<2x1x4xf32> {cleave.name = "dh"})
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = cleave.lstm
// Forward direction: zeros, then y[0].
// CHECK: %[[Y0:.*]] = cleave.slice %[[Y]] {ends = array<i64: 2, 1, 1, 4>, starts = array<i64: 0, 0, 0, 0>
// CHECK: %[[Y0S:.*]] = cleave.reshape %[[Y0]] : tensor<2x1x1x4xf32> -> tensor<2x1x4xf32>
// CHECK: %[[Z0:.*]] = cleave.constant dense<0.000000e+00> : tensor<1x1x4xf32>
// CHECK-NEXT: %[[E0:.*]] = cleave.slice %[[Y0S]] {ends = array<i64: 1, 1, 4>, starts = array<i64: 0, 0, 0>
// CHECK-NEXT: cleave.concat %[[Z0]], %[[E0]] {axis = 0 : i64}
// CHECK: %[[FWD:.*]] = cleave.concat %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x16xf32>
// CHECK: cleave.concat %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x16xf32>
// CHECK: %[[DWF:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<16x2xf32>, tensor<2x3xf32>) -> tensor<16x3xf32>
// CHECK: %[[DRF:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<16x2xf32>, tensor<2x4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: %[[DBF:.*]] = cleave.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims = false} : (tensor<2x16xf32>) -> tensor<16xf32>
// Backward direction: y[1], then zeros.
// CHECK: %[[Y1:.*]] = cleave.slice %[[Y]] {ends = array<i64: 2, 2, 1, 4>, starts = array<i64: 0, 1, 0, 0>
// CHECK: %[[Y1S:.*]] = cleave.reshape %[[Y1]] : tensor<2x1x1x4xf32> -> tensor<2x1x4xf32>
// CHECK: %[[Z1:.*]] = cleave.constant dense<0.000000e+00> : tensor<1x1x4xf32>
// CHECK-NEXT: %[[L1:.*]] = cleave.slice %[[Y1S]] {ends = array<i64: 2, 1, 4>, starts = array<i64: 1, 0, 0>
// CHECK-NEXT: cleave.concat %[[L1]], %[[Z1]] {axis = 0 : i64}
// CHECK: %[[DWB:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<16x2xf32>, tensor<2x3xf32>) -> tensor<16x3xf32>
// CHECK: %[[DRB:.*]] = cleave.matmul %{{.*}}, %{{.*}} : (tensor<16x2xf32>, tensor<2x4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: %[[DBB:.*]] = cleave.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims = false} : (tensor<2x16xf32>) -> tensor<16xf32>
// CHECK-NEXT: %[[DWF3:.*]] = cleave.reshape %[[DWF]] : tensor<16x3xf32> -> tensor<1x16x3xf32>
// CHECK-NEXT: %[[DWB3:.*]] = cleave.reshape %[[DWB]] : tensor<16x3xf32> -> tensor<1x16x3xf32>
// CHECK-NEXT: %[[DW:.*]] = cleave.concat %[[DWF3]], %[[DWB3]] {axis = 0 : i64} : (tensor<1x16x3xf32>, tensor<1x16x3xf32>) -> tensor<2x16x3xf32>
// CHECK-NEXT: %[[DRF3:.*]] = cleave.reshape %[[DRF]]
// CHECK-NEXT: %[[DRB3:.*]] = cleave.reshape %[[DRB]]
// CHECK-NEXT: %[[DR:.*]] = cleave.concat %[[DRF3]], %[[DRB3]] {axis = 0 : i64} : (tensor<1x16x4xf32>, tensor<1x16x4xf32>) -> tensor<2x16x4xf32>
// Wb and Rb have the same cotangent: each is added once per step.
// CHECK-NEXT: %[[BF:.*]] = cleave.concat %[[DBF]], %[[DBF]] {axis = 0 : i64} : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
// CHECK-NEXT: %[[BB:.*]] = cleave.concat %[[DBB]], %[[DBB]] {axis = 0 : i64}
// CHECK-NEXT: %[[BF2:.*]] = cleave.reshape %[[BF]] : tensor<32xf32> -> tensor<1x32xf32>
// CHECK-NEXT: %[[BB2:.*]] = cleave.reshape %[[BB]] : tensor<32xf32> -> tensor<1x32xf32>
// CHECK-NEXT: %[[DB:.*]] = cleave.concat %[[BF2]], %[[BB2]] {axis = 0 : i64} : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<2x32xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]], %[[DR]], %[[DB]]
func.func @main(%x: tensor<2x1x3xf32> {cleave.name = "x"}, %dh: tensor<2x1x4xf32> {cleave.name = "dh"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 384 : i64} : tensor<2x16x3xf32>
  %r = cleave.weight "r" {file = "/m.bin", offset = 384 : i64, length = 512 : i64} : tensor<2x16x4xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 896 : i64, length = 256 : i64} : tensor<2x32xf32>
  %y, %h, %c = cleave.lstm %x, %w, %r bias %b {activations = ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Tanh", "Tanh"], direction = "bidirectional", hidden_size = 4 : i64} : (tensor<2x1x3xf32>, tensor<2x16x3xf32>, tensor<2x16x4xf32>, tensor<2x32xf32>) -> (tensor<2x2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>)
  %p = cleave.mul %h, %dh : (tensor<2x1x4xf32>, tensor<2x1x4xf32>) -> tensor<2x1x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x1x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A clipped Softsign RNN: the slope 1 / (1 + |z|)^2 at the clipped
// pre-activation z, and no cotangent where the clip bounds it.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<1x2x3xf32> {cleave.name = "x"}, %[[DHN:[a-z0-9]+]]: tensor<1x2x4xf32> {cleave.name = "dh"})
// CHECK: %[[DH:.*]] = cleave.reshape %[[DHN]] : tensor<1x2x4xf32> -> tensor<2x4xf32>
// CHECK: %[[PRE:.*]] = cleave.add %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[DHT:.*]] = cleave.add %[[DH]], %{{.*}}
// CHECK-NEXT: %[[Z:.*]] = cleave.clip %[[PRE]] {max = 1.500000e+00 : f64, min = -1.500000e+00 : f64} : tensor<2x4xf32>
// CHECK-NEXT: %[[ABS:.*]] = cleave.abs %[[Z]]
// CHECK-NEXT: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DEN:.*]] = cleave.add %[[ONE]], %[[ABS]]
// CHECK-NEXT: %[[DEN2:.*]] = cleave.mul %[[DEN]], %[[DEN]]
// CHECK-NEXT: %[[SLOPE:.*]] = cleave.reciprocal %[[DEN2]]
// CHECK-NEXT: %[[DA:.*]] = cleave.mul %[[DHT]], %[[SLOPE]]
// CHECK-NEXT: %[[MAG:.*]] = cleave.abs %[[PRE]]
// CHECK-NEXT: %[[CLIP:.*]] = cleave.constant dense<1.500000e+00> : tensor<f32>
// CHECK-NEXT: %[[INSIDE:.*]] = cleave.less %[[MAG]], %[[CLIP]]
// CHECK-NEXT: %[[ZERO:.*]] = cleave.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DPRE:.*]] = cleave.where %[[INSIDE]], %[[DA]], %[[ZERO]]
// CHECK-NEXT: %[[DPT:.*]] = cleave.transpose %[[DPRE]] {perm = array<i64: 1, 0>}
// CHECK-NEXT: %[[DW:.*]] = cleave.matmul %[[DPT]], %{{.*}} : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
func.func @main(%x: tensor<1x2x3xf32> {cleave.name = "x"}, %dh: tensor<1x2x4xf32> {cleave.name = "dh"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 48 : i64} : tensor<1x4x3xf32>
  %r = cleave.weight "r" {file = "/m.bin", offset = 48 : i64, length = 64 : i64} : tensor<1x4x4xf32>
  %y, %h = cleave.rnn %x, %w, %r {activations = ["Softsign"], clip = 1.5 : f32, direction = "reverse", hidden_size = 4 : i64} : (tensor<1x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4xf32>)
  %p = cleave.mul %h, %dh : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<1x2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
