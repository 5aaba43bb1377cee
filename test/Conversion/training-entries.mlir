// RUN: cleave-translate --print-device-program --split-input-file %s | FileCheck %s
// RUN: cleave-translate --print-device-program --split-input-file --output-split-marker="// =====" %s -o %t.txt
// RUN: cleave-translate --parse-device-program --split-input-file="// =====" --output-split-marker="// =====" %t.txt | diff %t.txt -
// RUN: cleave-translate --emit-cpp --split-input-file %s -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I %cleave_src/runtime/include %t.cpp
// RUN: not cleave-translate --print-device-program %S/Inputs/training-step-early-return.mlir 2>&1 | FileCheck %s --check-prefix=EARLY

// A training step (a function that accumulates its loss and gradients) is
// three entries: the forward computes what the loss depends on and adds the
// loss into its sum; the backward computes the rest of the gradient from
// the forward's tanh (stashed: it outlives the forward's call) and adds it
// into the gradient's sum; the update reads the sums once per step, writes
// the mean loss and clears them. The accumulations are loops over
// persistent memory, the producer of the gradient fused into its loop.
// sgd_update writes the parameter, the step count and then the momentum
// buffer (the kernel's optional output, last).

// CHECK-LABEL: program: 3 entries
// CHECK: tensor t0 float32[2, 4] input 0
// CHECK: tensor t1 float32[2, 4] persistent 0
// CHECK: tensor t2 float32[2, 4] arena [[STASH:[0-9]+]] stash s0
// CHECK: tensor t3 float32[] arena 0
// CHECK: tensor t4 float32[2, 4] persistent 64 "t4"
// CHECK: tensor t5 float32[] persistent 128 "t5"
// CHECK: tensor t7 float32[] persistent 192 "t7"
// CHECK: tensor t8 float32[2, 4] persistent 256 "t8"
// CHECK: tensor t9 float32[] output 0
// CHECK: stash s0 t2 arena [[STASH]], 1 slots of 64 bytes
// CHECK-NEXT: entry forward phase forward: 3 steps, 0 in place, inputs (t0) outputs () named ("x") ()
// CHECK-NEXT: step 0 loop t2 = tanh(mul(t0, t1))
// CHECK-NEXT: step 1 kernel reduce_sum (t2) -> (t3)
// CHECK-NEXT: step 2 loop t5 = add(t5, t3)  // accumulate
// CHECK-NEXT: entry backward phase backward: 1 steps, 0 in place, inputs (t0) outputs () named ("x") ()
// CHECK-NEXT: step 0 loop t4 = add(t4, mul(t0, sub(1, mul(t2, t2))))  // mul + sub + mul + accumulate
// CHECK-NEXT: entry update phase update: 4 steps, 0 in place, inputs () outputs (t9) named () ("loss")
// CHECK-NEXT: step 0 kernel sgd_update (t4, t6) -> (t1, t7, t8) ints [0, 0, 0] floats [0.1, 0.9, 0, 0, 0]
// CHECK-NEXT: step 1 loop t9 = div(t5, 2)
// CHECK-NEXT: step 2 loop t4 = 0  // clear
// CHECK-NEXT: step 3 loop t5 = 0  // clear

func.func @main(%x: tensor<2x4xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 32 : i64, cleave.writable} : tensor<2x4xf32>
  %y = cleave.mul %x, %w : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = cleave.tanh %y : tensor<2x4xf32>
  %l = cleave.reduce_sum %t {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %t2 = cleave.mul %t, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %d = cleave.sub %one, %t2 : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = cleave.mul %x, %d : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %gs = cleave.state "grad:w" : tensor<2x4xf32>
  %ga = cleave.accumulate %g, %gs : tensor<2x4xf32>
  %ls = cleave.state "loss.sum:loss" : tensor<f32>
  %la = cleave.accumulate %l, %ls {loss} : tensor<f32>
  %half = cleave.constant dense<0.5> : tensor<f32>
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %b = cleave.state "sgd.momentum_buffer:w" : tensor<2x4xf32>
  %p2, %b2, %s2 = cleave.sgd_update %ga, %half, %w, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<2x4xf32>, tensor<f32>
  %two = cleave.constant dense<2.0> : tensor<f32>
  %mean = cleave.div %la, %two : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c1 = cleave.clear %ga : tensor<2x4xf32>
  %c2 = cleave.clear %la : tensor<f32>
  return %mean : tensor<f32>
}

// EARLY: training-step-early-return.mlir:7:8: error: 'cleave.clear' op writes in place the persistent tensor of result 0, which the function returns from before the write
