// RUN: cleave-translate --print-device-program %s | FileCheck %s
// RUN: cleave-translate --emit-cpp %s -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I %cleave_src/runtime/include %t.cpp
// RUN: FileCheck %s --check-prefix=CPP < %t.cpp


// The training step of training-entries.mlir with plain SGD: the update
// writes the parameter and the step count, and there is no momentum buffer
// in persistent memory (the weight, the gradient sum, the loss sum and the
// step count); the call passes two outputs.

// CHECK-LABEL: program: 3 entries, arena 64 bytes (unplanned 64), weights 128 bytes, persistent 256 bytes
// CHECK: tensor t1 float32[4] persistent 0 "t1"
// CHECK-NEXT: tensor t2 float32[] arena 0 "t2"
// CHECK-NEXT: tensor t3 float32[4] persistent 64 "t3"
// CHECK-NEXT: tensor t4 float32[] persistent 128 "t4"
// CHECK-NEXT: tensor t5 float32[] weights 64 "t5"
// CHECK-NEXT: tensor t6 float32[] persistent 192 "t6"
// CHECK-NEXT: tensor t7 float32[] output 0 "t7"
// CHECK: step 0 kernel sgd_update (t3, t5) -> (t1, t6) ints [0, 0, 0] floats [0.1, 0, 0, 0, 0]
// CPP: cleave_cpu_sgd_update(ctx, in, 2, out, 2, ints, floats)

func.func @main(%x: tensor<4xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 16 : i64, cleave.writable} : tensor<4xf32>
  %y = cleave.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = cleave.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %gs = cleave.state "grad:w" : tensor<4xf32>
  %ga = cleave.accumulate %x, %gs : tensor<4xf32>
  %ls = cleave.state "loss.sum:loss" : tensor<f32>
  %la = cleave.accumulate %l, %ls {loss} : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %p2, %s2 = cleave.sgd_update %ga, %one, %w, %s {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4xf32>, tensor<f32>
  %mean = cleave.div %la, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c1 = cleave.clear %ga : tensor<4xf32>
  %c2 = cleave.clear %la : tensor<f32>
  return %mean : tensor<f32>
}
