// RUN: cleave-translate --print-device-program %s | FileCheck %s
// RUN: cleave-translate --print-device-program %s -o %t.txt
// RUN: cleave-translate --parse-device-program %t.txt | diff %t.txt -
// RUN: cleave-translate --emit-cpp %s -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I %cleave_src/runtime/include %t.cpp
// RUN: sed -e 's/, cleave.writable//' %s | not cleave-translate --print-device-program 2>&1 | FileCheck %s --check-prefix=READ-ONLY

// A training step's update writes the writable weight and the optimizer
// state (cleave.state: persistent memory that starts as zeros, with no
// bytes in the weight file) in place: the kernel's outputs are the
// persistent tensors it reads.

// CHECK-LABEL: program: 1 entries, {{.*}}, persistent 256 bytes
// CHECK: tensor t[[P:[0-9]+]] float32[2, 4] persistent 0
// CHECK: tensor t[[ONE:[0-9]+]] float32[] weights 64
// CHECK: tensor t[[M:[0-9]+]] float32[2, 4] persistent 64
// CHECK: tensor t[[V:[0-9]+]] float32[2, 4] persistent 128
// CHECK: tensor t[[STEP:[0-9]+]] float32[] persistent 192
// CHECK: writable weight "w" weights 0 -> persistent 0, 32 bytes
// CHECK-NOT: writable weight
// CHECK: step 0 loop {{.*}} = reduce add over [0, 1] of mul(t0, t[[P]])
// CHECK-NEXT: step 1 kernel adam_update (t0, t[[ONE]]) -> (t[[P]], t[[M]], t[[V]], t[[STEP]]) ints [1, 0, 0] floats [0.001, 0.9, 0.999, 1e-08, 0.01, 0]

// READ-ONLY: error: 'cleave.adam_update' op updates operand 2 in place, which must be persistent (a writable weight, cleave.writable, or a cleave.state) or a scratch value that nothing else reads
func.func @main(%x: tensor<2x4xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 32 : i64, cleave.writable} : tensor<2x4xf32>
  %y = cleave.mul %x, %w : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %s = cleave.state "adamw.step:w" : tensor<f32>
  %m = cleave.state "adamw.exp_avg:w" : tensor<2x4xf32>
  %v = cleave.state "adamw.exp_avg_sq:w" : tensor<2x4xf32>
  %p2, %m2, %v2, %s2 = cleave.adam_update %x, %one, %w, %m, %v, %s {learning_rate = 1.0e-03 : f64, beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, epsilon = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, decoupled = true, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<2x4xf32>, tensor<f32>
  return %l : tensor<f32>
}
