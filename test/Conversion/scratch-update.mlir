// RUN: cleave-translate --print-device-program %s | FileCheck %s
// RUN: sed -e 's/%y = cleave.add %updated, %e/%y = cleave.add %copy, %e/' %s | not cleave-translate --print-device-program 2>&1 | FileCheck %s --check-prefix=READ-AGAIN

// An update may write in place a scratch value that nothing else reads (a
// ZeRO replica's copy of its block of a parameter): the call's output is
// the scratch's arena tensor, which stays placed from the step that made it
// to the last reader of the update's result.

// CHECK: tensor t[[COPY:[0-9]+]] float32[2, 4] arena 0
// CHECK: tensor t[[GRAD:[0-9]+]] float32[2, 4] arena 64
// CHECK: step 0 loop t[[COPY]] = mul(t0, t0)
// CHECK: step 1 loop t[[GRAD]] = tanh(t0)
// CHECK: step 2 kernel adam_update (t[[GRAD]], t{{[0-9]+}}) -> (t[[COPY]], t{{[0-9]+}}, t{{[0-9]+}}, t{{[0-9]+}})
// CHECK: step 3 loop t{{[0-9]+}} = add(t[[COPY]], exp(t0))

// A scratch value that another op reads would be overwritten under it.
// READ-AGAIN: error: 'cleave.adam_update' op updates operand 2 in place, which must be persistent (a writable weight, cleave.writable, or a cleave.state) or a scratch value that nothing else reads
func.func @main(%x: tensor<2x4xf32> {cleave.name = "x"}) -> (tensor<2x4xf32> {cleave.name = "y"}) {
  %one = cleave.constant dense<1.0> : tensor<f32>
  %copy = cleave.mul %x, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %big = cleave.tanh %x : tensor<2x4xf32>
  %s = cleave.state "adamw.step:w" : tensor<f32>
  %m = cleave.state "adamw.exp_avg:w" : tensor<2x4xf32>
  %v = cleave.state "adamw.exp_avg_sq:w" : tensor<2x4xf32>
  %updated, %m2, %v2, %s2 = cleave.adam_update %big, %one, %copy, %m, %v, %s {learning_rate = 1.0e-03 : f64, beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, epsilon = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, decoupled = true, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<2x4xf32>, tensor<f32>
  %e = cleave.exp %x : tensor<2x4xf32>
  %y = cleave.add %updated, %e : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
