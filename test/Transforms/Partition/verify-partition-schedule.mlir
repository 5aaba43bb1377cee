// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-verify-partition

// The deadlock check replays each stage in the order its schedule records:
// under 1F1B an inference step (forward only) runs the microbatches in
// order, as GPipe does, so matching transfers pass for every microbatch.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 3 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    cleave.send %x to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> tensor<4xf32> attributes {cleave.stage = 1 : i64} {
    %y = cleave.recv from 0 tag 0 : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// A stage that receives twice per microbatch from one that sends once: the
// recorded order runs out of sends at microbatch 1.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    cleave.send %x to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> tensor<4xf32> attributes {cleave.stage = 1 : i64} {
    // expected-error @+1 {{communication cannot complete: stage 1 receives from stage 0 (tag 0, microbatch 1), but stage 0 has no transfer left}}
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %b = cleave.recv from 0 tag 0 : tensor<4xf32>
    %c = cleave.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %c : tensor<4xf32>
  }
}

// -----

// A stage function the plan's pipeline does not have.

module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "gpipe"} {
  // expected-error @+1 {{@stage_1 is stage 1, but the plan's pipeline has 1 stage}}
  func.func @stage_1() attributes {cleave.stage = 1 : i64} {
    return
  }
}

// -----

// The interleaved schedule runs several model chunks per device; a stage is
// one function, so it cannot be partitioned yet.

// expected-error @+1 {{`cleave.schedule = "interleaved:2"` cannot be partitioned yet: the interleaved schedule needs several model chunks per device, and a stage is one function}}
module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
}

// -----

// expected-error @+1 {{`cleave.schedule`: expected gpipe, 1f1b, interleaved or interleaved:V (V >= 2 model chunks per device), got 'zigzag'}}
module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "zigzag"} {
}

// -----

// expected-error @+1 {{`cleave.schedule` must be a string, got 1 : i64}}
module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = 1 : i64} {
}
