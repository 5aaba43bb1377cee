// A pipeline option that does not validate is an error that names it, when
// the pipeline is parsed; one the planner cannot honour names the pin.
// RUN: not cleave-opt %s --cleave-compile-pipeline="objective=fastest" 2>&1 | FileCheck %s --check-prefix=OBJECTIVE
// RUN: not cleave-opt %s --cleave-compile-pipeline="devices=4 pp=-1" 2>&1 | FileCheck %s --check-prefix=PIN
// RUN: not cleave-opt %s --cleave-compile-pipeline="devices=0" 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not cleave-opt %s --cleave-compile-pipeline="memory-fraction=1.5" 2>&1 | FileCheck %s --check-prefix=FRACTION
// RUN: not cleave-opt %s --cleave-compile-pipeline="batch=8" 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not cleave-opt %s --cleave-compile-pipeline="devices=4 pp=3" 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not cleave-opt %s --cleave-compile-pipeline="target=no-such-target devices=2" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not cleave-opt %s --cleave-compile-pipeline="schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not cleave-opt %s --cleave-compile-pipeline="devices=2 schedule=interleaved:2" 2>&1 | FileCheck %s --check-prefix=INTERLEAVED
// RUN: not cleave-opt %s --cleave-compile-pipeline="gradients=true" 2>&1 | FileCheck %s --check-prefix=GRADIENTS
// RUN: not cleave-opt %s --cleave-compile-pipeline="loss=l" 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not cleave-opt %s --cleave-compile-pipeline="devices=2 gradients=true loss=l" 2>&1 | FileCheck %s --check-prefix=TRAIN-DEVICES
// RUN: not cleave-opt %s --cleave-compile-pipeline="train=true" 2>&1 | FileCheck %s --check-prefix=TRAIN-LOSS
// RUN: not cleave-opt %s --cleave-compile-pipeline="gradients=true loss=l lr=0.1" 2>&1 | FileCheck %s --check-prefix=TRAIN-ONLY
// RUN: not cleave-opt %s --cleave-compile-pipeline="train=true loss=l betas=2,3" 2>&1 | FileCheck %s --check-prefix=TRAIN-BETAS
// RUN: not cleave-opt %s --cleave-compile-pipeline="gradients=true loss=l logits=y labels=t" 2>&1 | FileCheck %s --check-prefix=ATTACH-KIND
// RUN: not cleave-opt %s --cleave-compile-pipeline="gradients=true loss=mse logits=y" 2>&1 | FileCheck %s --check-prefix=ATTACH-LABELS
// RUN: not cleave-opt %s --cleave-compile-pipeline="gradients=true loss=mse logits=y labels=t ignore-index=0" 2>&1 | FileCheck %s --check-prefix=ATTACH-IGNORE

// OBJECTIVE: error: cleave-compile-pipeline: objective must be 'throughput' or 'latency', got 'fastest'
// PIN: error: cleave-compile-pipeline: pp must be a positive integer, got -1
// DEVICES: error: cleave-compile-pipeline: devices must be a positive integer, got 0
// FRACTION: error: cleave-compile-pipeline: memory-fraction must be in (0, 1], got 1.5
// A bundle computes the model's batch: the compile pipeline has no batch.
// BATCH: error: cleave-compile-pipeline: batch=8: the global batch is planned for a training step (train); an inference bundle takes the model's batch
// DIVIDE: error: --pp=3 does not divide the 4 devices
// TARGET: error: {{.*}}no-such-target
// SCHEDULE: error: cleave-compile-pipeline: schedule: expected gpipe, 1f1b, interleaved or interleaved:V (V >= 2 model chunks per device), got 'zigzag'
// INTERLEAVED: error: cleave-compile-pipeline: schedule=interleaved:2: the interleaved schedule is compiled for training steps (train); an inference bundle takes gpipe or 1f1b
// GRADIENTS: error: cleave-compile-pipeline: gradients needs loss=<name>, the graph output to differentiate
// LOSS: error: cleave-compile-pipeline: loss applies only with gradients
// TRAIN-LOSS: error: cleave-compile-pipeline: train needs loss=<name>, the graph output to differentiate
// TRAIN-ONLY: error: cleave-compile-pipeline: the optimizer options (optimizer, lr, ...) apply only with train
// TRAIN-BETAS: error: cleave-compile-pipeline: betas=2,3: the betas are two numbers in [0, 1), as 0.9,0.999
// ATTACH-KIND: error: cleave-compile-pipeline: loss=l: with logits the loss to attach is cross-entropy or mse
// ATTACH-LABELS: error: cleave-compile-pipeline: logits needs labels=<name>, the graph input of the targets
// ATTACH-IGNORE: error: cleave-compile-pipeline: ignore-index applies only with loss=cross-entropy
// TRAIN-DEVICES: error: cleave-compile-pipeline: gradients are compiled for one device (devices=2): partitioning does not place the backward ops of a call that returns them

func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = cleave.relu %x : tensor<4x16xf32>
  %z = cleave.tanh %y : tensor<4x16xf32>
  return %z : tensor<4x16xf32>
}
