// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd lr=0.5 momentum=0.9 nesterov=true weight-decay=0.01" | FileCheck %s --check-prefix=SGD
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=adamw lr=0.01 beta1=0.8 weight-decay=0.1 clip-grad-norm=1.0 warmup-steps=2 decay-steps=10 min-lr-ratio=0.1" | FileCheck %s --check-prefix=ADAMW
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=adam" | FileCheck %s --check-prefix=ADAM
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd microbatches=4 clip-grad-norm=2.0" | FileCheck %s --check-prefix=ACC
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd" | FileCheck %s --check-prefix=SINGLE
// RUN: not cleave-opt %s --cleave-optimizer-update="microbatches=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd microbatches=2 replicas=2 clip-grad-norm=2.0" | FileCheck %s --check-prefix=REPLICAS
// RUN: not cleave-opt %s --cleave-optimizer-update="replicas=0" 2>&1 | FileCheck %s --check-prefix=NO-REPLICAS

// The function as cleave-autodiff leaves it: the loss, then the gradients of
// w (read twice: the reads are merged into one writable weight) and b.

// SGD-LABEL: func.func @main(%{{.*}}: tensor<4x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"})
// SGD: %[[W:.*]] = cleave.weight "w" {cleave.writable
// SGD-NOT: cleave.weight "w"
// SGD: %[[B:.*]] = cleave.weight "b" {cleave.writable
// SGD: cleave.matmul %{{.*}}, %[[W]]
// SGD: cleave.mul %{{.*}}, %[[W]]
// SGD: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// SGD: %[[STEP:.*]] = cleave.state "sgd.step:w" : tensor<f32>
// SGD: %[[BUF:.*]] = cleave.state "sgd.momentum_buffer:w" : tensor<3x2xf32>
// SGD: cleave.sgd_update %[[DW:.*]], %[[ONE]], %[[W]], %[[BUF]], %[[STEP]] {dampening = 0.000000e+00 : f64, decay_steps = 0 : i64, learning_rate = 5.000000e-01 : f64, min_lr_ratio = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = true, warmup_steps = 0 : i64, weight_decay = 1.000000e-02 : f64} : tensor<3x2xf32>, tensor<f32>
// SGD: cleave.state "sgd.step:b"
// SGD: cleave.state "sgd.momentum_buffer:b" : tensor<2xf32>
// SGD: cleave.sgd_update %{{.*}}, %[[ONE]], %[[B]]
// SGD: return %{{.*}} : tensor<f32>

// Clipping scales every gradient by min(1, 1.0 / (norm + 1e-6)), the norm
// of all of them together.
// ADAMW-LABEL: func.func @main
// ADAMW-DAG: %[[SW:.*]] = cleave.reduce_sum_square %[[DW:[^ ]*]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x2xf32>) -> tensor<f32>
// ADAMW-DAG: %[[SB:.*]] = cleave.reduce_sum_square %[[DB:[^ ]*]] {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
// ADAMW: %[[SUM:.*]] = cleave.add %[[SW]], %[[SB]]
// ADAMW: %[[NORM:.*]] = cleave.sqrt %[[SUM]]
// ADAMW: %[[EPS:.*]] = cleave.constant dense<9.99999997E-7> : tensor<f32>
// ADAMW: %[[DEN:.*]] = cleave.add %[[NORM]], %[[EPS]]
// ADAMW: %[[MAX:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// ADAMW: %[[RATIO:.*]] = cleave.div %[[MAX]], %[[DEN]]
// ADAMW: %[[SCALE:.*]] = cleave.min %[[RATIO]], %{{.*}}
// ADAMW: %[[STEP:.*]] = cleave.state "adamw.step:w" : tensor<f32>
// ADAMW: %[[M:.*]] = cleave.state "adamw.exp_avg:w" : tensor<3x2xf32>
// ADAMW: %[[V:.*]] = cleave.state "adamw.exp_avg_sq:w" : tensor<3x2xf32>
// ADAMW: cleave.adam_update %[[DW]], %[[SCALE]], %{{.*}}, %[[M]], %[[V]], %[[STEP]] {beta1 = 8.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, decay_steps = 10 : i64, decoupled = true, epsilon = 1.000000e-08 : f64, learning_rate = 1.000000e-02 : f64, min_lr_ratio = 1.000000e-01 : f64, warmup_steps = 2 : i64, weight_decay = 1.000000e-01 : f64}
// ADAMW: cleave.adam_update %[[DB]], %[[SCALE]]

// Accumulation: each microbatch's gradients and loss go into persistent
// sums (grad:<parameter>, loss.sum:<loss>); the update reads the sums, scaled
// by 1/4 (the mean) times the clipping factor of the mean gradients' norm,
// then clears them; the function returns the mean loss.
// ACC-LABEL: func.func @main
// ACC: %[[W:.*]] = cleave.weight "w" {cleave.writable
// ACC: %[[L:.*]] = cleave.reduce_sum
// ACC: %[[GW:.*]] = cleave.state "grad:w" : tensor<3x2xf32>
// ACC: %[[SW:.*]] = cleave.accumulate %[[DW:.*]], %[[GW]] : tensor<3x2xf32>
// ACC: %[[GB:.*]] = cleave.state "grad:b" : tensor<2xf32>
// ACC: %[[SB:.*]] = cleave.accumulate %{{.*}}, %[[GB]] : tensor<2xf32>
// ACC: %[[LS:.*]] = cleave.state "loss.sum:loss" : tensor<f32>
// ACC: %[[SL:.*]] = cleave.accumulate %[[L]], %[[LS]] {loss} : tensor<f32>
// ACC-DAG: cleave.reduce_sum_square %[[SW]]
// ACC-DAG: cleave.reduce_sum_square %[[SB]]
// ACC: %[[NORM:.*]] = cleave.sqrt
// ACC: %[[QUARTER:.*]] = cleave.constant dense<2.500000e-01> : tensor<f32>
// ACC: %[[MEAN_NORM:.*]] = cleave.mul %[[NORM]], %[[QUARTER]]
// ACC: cleave.add %[[MEAN_NORM]]
// ACC: %[[CLIP:.*]] = cleave.min
// ACC: %[[SCALE:.*]] = cleave.mul %[[CLIP]], %{{.*}}
// ACC: cleave.sgd_update %[[SW]], %[[SCALE]], %[[W]]
// ACC: cleave.sgd_update %[[SB]], %[[SCALE]]
// ACC: %[[FOUR:.*]] = cleave.constant dense<4.000000e+00> : tensor<f32>
// ACC: %[[MEAN:.*]] = cleave.div %[[SL]], %[[FOUR]]
// ACC-NEXT: cleave.clear %[[SW]] : tensor<3x2xf32>
// ACC-NEXT: cleave.clear %[[SB]] : tensor<2xf32>
// ACC-NEXT: cleave.clear %[[SL]] : tensor<f32>
// ACC-NEXT: return %[[MEAN]] : tensor<f32>

// One microbatch: the update reads the sums unscaled, and the loss is
// still a value of its own (the sum is cleared before the function returns).
// SINGLE-LABEL: func.func @main
// SINGLE: %[[SL:.*]] = cleave.accumulate %{{.*}}, %{{.*}} {loss} : tensor<f32>
// SINGLE: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// SINGLE: cleave.sgd_update %{{.*}}, %[[ONE]]
// SINGLE: %[[MEAN:.*]] = cleave.div %[[SL]], %{{.*}}
// SINGLE: return %[[MEAN]] : tensor<f32>

// ZERO: error: microbatches=0: the number of microbatches must be positive

// Data-parallel replicas: the update sums each accumulator over the dp
// group first, and the mean is over microbatches x replicas (4). The
// accumulators themselves are cleared, not the reduced copies.
// REPLICAS-LABEL: func.func @main
// REPLICAS: %[[SW:.*]] = cleave.accumulate %{{.*}}, %{{.*}} : tensor<3x2xf32>
// REPLICAS: %[[SB:.*]] = cleave.accumulate %{{.*}}, %{{.*}} : tensor<2xf32>
// REPLICAS: %[[SL:.*]] = cleave.accumulate %{{.*}}, %{{.*}} {loss} : tensor<f32>
// REPLICAS-NEXT: %[[RW:.*]] = cleave.all_reduce %[[SW]] {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<3x2xf32>
// REPLICAS-NEXT: %[[RB:.*]] = cleave.all_reduce %[[SB]] {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<2xf32>
// REPLICAS-NEXT: %[[RL:.*]] = cleave.all_reduce %[[SL]] {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
// REPLICAS-DAG: cleave.reduce_sum_square %[[RW]]
// REPLICAS-DAG: cleave.reduce_sum_square %[[RB]]
// REPLICAS: %[[NORM:.*]] = cleave.sqrt
// REPLICAS: %[[QUARTER:.*]] = cleave.constant dense<2.500000e-01> : tensor<f32>
// REPLICAS: cleave.mul %[[NORM]], %[[QUARTER]]
// REPLICAS: %[[SCALE:.*]] = cleave.mul %{{.*}}, %{{.*}}
// REPLICAS: cleave.sgd_update %[[RW]], %[[SCALE]]
// REPLICAS: cleave.sgd_update %[[RB]], %[[SCALE]]
// REPLICAS: %[[FOUR:.*]] = cleave.constant dense<4.000000e+00> : tensor<f32>
// REPLICAS: %[[MEAN:.*]] = cleave.div %[[RL]], %[[FOUR]]
// REPLICAS-NEXT: cleave.clear %[[SW]] : tensor<3x2xf32>
// REPLICAS-NEXT: cleave.clear %[[SB]] : tensor<2xf32>
// REPLICAS-NEXT: cleave.clear %[[SL]] : tensor<f32>
// REPLICAS-NEXT: return %[[MEAN]] : tensor<f32>
// NO-REPLICAS: error: replicas=0: the number of data-parallel replicas must be positive

// ADAM-LABEL: func.func @main
// ADAM: cleave.adam_update {{.*}}decoupled = false{{.*}}weight_decay = 0.000000e+00 : f64
func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}, tensor<3x2xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"}, tensor<2xf32> {cleave.gradient_of = "b", cleave.name = "grad:b"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<3x2xf32>
  %w2 = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<3x2xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 24 : i64, length = 8 : i64} : tensor<2xf32>
  %y = cleave.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %z = cleave.add %y, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %l = cleave.reduce_sum %z {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  %dw = cleave.mul %w2, %w2 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %db = cleave.reduce_sum %z {axes = array<i64: 0>, keepdims = false} : (tensor<4x2xf32>) -> tensor<2xf32>
  return %l, %dw, %db : tensor<f32>, tensor<3x2xf32>, tensor<2xf32>
}
