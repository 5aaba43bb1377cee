// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd lr=0.5 momentum=0.9 nesterov=true weight-decay=0.01" | FileCheck %s --check-prefix=SGD
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=adamw lr=0.01 beta1=0.8 weight-decay=0.1 clip-grad-norm=1.0 warmup-steps=2 decay-steps=10 min-lr-ratio=0.1" | FileCheck %s --check-prefix=ADAMW
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=adam" | FileCheck %s --check-prefix=ADAM
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd microbatches=4 clip-grad-norm=2.0" | FileCheck %s --check-prefix=ACC
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd" | FileCheck %s --check-prefix=SINGLE
// RUN: not cleave-opt %s --cleave-optimizer-update="microbatches=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd microbatches=2 replicas=2 clip-grad-norm=2.0" | FileCheck %s --check-prefix=REPLICAS
// RUN: not cleave-opt %s --cleave-optimizer-update="replicas=0" 2>&1 | FileCheck %s --check-prefix=NO-REPLICAS
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=adamw replicas=4 zero=1 clip-grad-norm=1.0" | FileCheck %s --check-prefix=ZERO1
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd momentum=0.9 replicas=2 zero=2 microbatches=2" | FileCheck %s --check-prefix=ZERO2
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd replicas=2 zero=1" | FileCheck %s --check-prefix=PLAINZERO1
// RUN: not cleave-opt %s --cleave-optimizer-update="zero=3 replicas=2" 2>&1 | FileCheck %s --check-prefix=ZERO3
// RUN: not cleave-opt %s --cleave-optimizer-update="zero=1" 2>&1 | FileCheck %s --check-prefix=ZERO-ONE-REPLICA
// RUN: not cleave-opt %s --cleave-optimizer-update="from-plan=true" 2>&1 | FileCheck %s --check-prefix=NO-PLAN

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
// Without momentum SGD keeps a step count and no buffer.
// SINGLE-LABEL: func.func @main
// SINGLE: %[[W:.*]] = cleave.weight "w" {cleave.writable
// SINGLE: %[[SL:.*]] = cleave.accumulate %{{.*}}, %{{.*}} {loss} : tensor<f32>
// SINGLE: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// SINGLE: %[[STEP:.*]] = cleave.state "sgd.step:w" : tensor<f32>
// SINGLE-NEXT: %{{[^,]*}}, %{{[^,]*}} = cleave.sgd_update %{{.*}}, %[[ONE]], %[[W]], %[[STEP]] {{{.*}}momentum = 0.000000e+00 : f64, nesterov = false{{.*}}} : tensor<3x2xf32>, tensor<f32>
// SINGLE-NOT: momentum_buffer
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

// ZeRO stage 1 over 4 replicas: each keeps the optimizer state of one block
// of every parameter, flattened and padded to 4 blocks (w: 6 elements in
// blocks of 2; b: 2 in blocks of 1). The update reduce-scatters the sums,
// updates its block of a copy of the parameter, gathers the blocks and
// assigns the parameter back; the clipping norm adds the blocks' squares
// over the replicas.
// ZERO1-LABEL: func.func @main
// ZERO1: %[[W:.*]] = cleave.weight "w" {cleave.writable
// ZERO1: %[[B:.*]] = cleave.weight "b" {cleave.writable
// ZERO1: %[[SW:.*]] = cleave.accumulate %{{.*}}, %{{.*}} : tensor<3x2xf32>
// ZERO1: %[[SB:.*]] = cleave.accumulate %{{.*}}, %{{.*}} : tensor<2xf32>
// ZERO1: %[[SL:.*]] = cleave.accumulate %{{.*}}, %{{.*}} {loss} : tensor<f32>
// ZERO1-NEXT: %[[FW:.*]] = cleave.reshape %[[SW]] : tensor<3x2xf32> -> tensor<6xf32>
// ZERO1-NEXT: %[[PW:.*]] = cleave.pad %[[FW]] {pads = array<i64: 0, 2>} : (tensor<6xf32>) -> tensor<8xf32>
// ZERO1-NEXT: %[[GW:.*]] = cleave.reduce_scatter %[[PW]] {axis = "dp", dim = 0 : i64, group_size = 4 : i64, reduction = "sum"} : tensor<8xf32> -> tensor<2xf32>
// ZERO1-NEXT: %[[FW2:.*]] = cleave.reshape %[[W]] : tensor<3x2xf32> -> tensor<6xf32>
// ZERO1-NEXT: %[[PW2:.*]] = cleave.pad %[[FW2]] {pads = array<i64: 0, 2>}
// ZERO1-NEXT: %[[BW:.*]] = cleave.all_slice %[[PW2]] {axis = "dp", dim = 0 : i64, group_size = 4 : i64} : tensor<8xf32> -> tensor<2xf32>
// ZERO1: %[[GB:.*]] = cleave.reduce_scatter %{{.*}} {{.*}} : tensor<4xf32> -> tensor<1xf32>
// ZERO1: %[[BB:.*]] = cleave.all_slice %{{.*}} {{.*}} : tensor<4xf32> -> tensor<1xf32>
// ZERO1: %[[RL:.*]] = cleave.all_reduce %[[SL]] {axis = "dp", group_size = 4 : i64, reduction = "sum"} : tensor<f32>
// ZERO1: %[[QW:.*]] = cleave.reduce_sum_square %[[GW]]
// ZERO1: %[[QB:.*]] = cleave.reduce_sum_square %[[GB]]
// ZERO1: %[[Q:.*]] = cleave.add %[[QW]], %[[QB]]
// ZERO1: cleave.all_reduce %[[Q]] {axis = "dp", group_size = 4 : i64, reduction = "sum"} : tensor<f32>
// ZERO1: cleave.state "adamw.exp_avg:w" : tensor<2xf32>
// ZERO1: cleave.state "adamw.exp_avg_sq:w" : tensor<2xf32>
// ZERO1: %[[NW:.*]], %{{.*}}, %{{.*}}, %{{.*}} = cleave.adam_update %[[GW]], %{{.*}}, %[[BW]],
// ZERO1-NEXT: %[[AW:.*]] = cleave.all_gather %[[NW]] {axis = "dp", dim = 0 : i64, group_size = 4 : i64} : tensor<2xf32> -> tensor<8xf32>
// ZERO1-NEXT: %[[CW:.*]] = cleave.slice %[[AW]] {ends = array<i64: 6>, starts = array<i64: 0>, steps = array<i64: 1>}
// ZERO1-NEXT: %[[RW:.*]] = cleave.reshape %[[CW]] : tensor<6xf32> -> tensor<3x2xf32>
// ZERO1-NEXT: cleave.assign %[[RW]], %[[W]] : tensor<3x2xf32>
// ZERO1: cleave.state "adamw.exp_avg:b" : tensor<1xf32>
// ZERO1: %[[NB:.*]], %{{.*}}, %{{.*}}, %{{.*}} = cleave.adam_update %[[GB]], %{{.*}}, %[[BB]],
// ZERO1: cleave.assign %{{.*}}, %[[B]] : tensor<2xf32>
// ZERO1: cleave.div %[[RL]]
// ZERO1-NEXT: cleave.clear %[[SW]]
// ZERO1-NEXT: cleave.clear %[[SB]]
// ZERO1-NEXT: cleave.clear %[[SL]]
// ZeRO stage 2: each microbatch's gradient is reduce-scattered where the
// backward made it, and the replica accumulates its block (the sums and the
// optimizer state are blocks); the update reads the block sums.
// ZERO2-LABEL: func.func @main
// ZERO2: %[[FW:.*]] = cleave.reshape %{{.*}} : tensor<3x2xf32> -> tensor<6xf32>
// ZERO2-NEXT: %[[GW:.*]] = cleave.reduce_scatter %[[FW]] {axis = "dp", dim = 0 : i64, group_size = 2 : i64, reduction = "sum"} : tensor<6xf32> -> tensor<3xf32>
// ZERO2-NEXT: %[[AW:.*]] = cleave.state "grad:w" : tensor<3xf32>
// ZERO2-NEXT: %[[SW:.*]] = cleave.accumulate %[[GW]], %[[AW]] : tensor<3xf32>
// ZERO2: %[[SB:.*]] = cleave.accumulate %{{.*}}, %{{.*}} : tensor<1xf32>
// ZERO2: %[[SL:.*]] = cleave.accumulate %{{.*}}, %{{.*}} {loss} : tensor<f32>
// ZERO2-NOT: cleave.reduce_scatter
// ZERO2: %[[BW:.*]] = cleave.all_slice %{{.*}} : tensor<6xf32> -> tensor<3xf32>
// ZERO2: cleave.state "sgd.momentum_buffer:w" : tensor<3xf32>
// ZERO2: cleave.sgd_update %[[SW]], %{{.*}}, %[[BW]],
// ZERO2: cleave.all_gather
// ZERO2: cleave.clear %[[SW]] : tensor<3xf32>
// ZeRO stage 1 without momentum: the replica's block of the parameter and its
// step count, and no buffer to shard.
// PLAINZERO1-LABEL: func.func @main
// PLAINZERO1-NOT: momentum_buffer
// PLAINZERO1: %[[BW:.*]] = cleave.all_slice %{{.*}} : tensor<6xf32> -> tensor<3xf32>
// PLAINZERO1: %[[SW:.*]] = cleave.state "sgd.step:w" : tensor<f32>
// PLAINZERO1-NEXT: %[[NW:[^,]*]], %{{[^,]*}} = cleave.sgd_update %{{.*}}, %{{.*}}, %[[BW]], %[[SW]] {{{.*}}} : tensor<3xf32>, tensor<f32>
// PLAINZERO1: cleave.all_gather %[[NW]]
// PLAINZERO1-NOT: momentum_buffer
// ZERO3: error: zero=3: the ZeRO stage is 0 (every replica holds the whole optimizer state), 1 (the state is sharded over the replicas) or 2 (the gradient sums too)
// ZERO-ONE-REPLICA: error: zero=1 shards the training state over data-parallel replicas, and replicas=1

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

// The microbatches and replicas from a plan the module does not have.
// NO-PLAN: error: from-plan: the module has no plan (cleave.mesh and cleave.microbatches) to take the microbatches and replicas from
