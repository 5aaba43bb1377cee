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

// The interleaved schedule: stage functions are virtual stages, v on the
// device of stage v mod pp. Device 0 runs stages 0 and 2, device 1 stages
// 1 and 3; the chain 0 -> 1 -> 2 -> 3 goes back and forth between them, in
// the order the schedule runs each device's chunks, and completes.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    cleave.send %x to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() attributes {cleave.stage = 1 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    cleave.send %a to 2 tag 1 : tensor<4xf32>
    return
  }
  func.func @stage_2() attributes {cleave.stage = 2 : i64} {
    %a = cleave.recv from 1 tag 1 : tensor<4xf32>
    cleave.send %a to 3 tag 2 : tensor<4xf32>
    return
  }
  func.func @stage_3() -> tensor<4xf32> attributes {cleave.stage = 3 : i64} {
    %a = cleave.recv from 2 tag 2 : tensor<4xf32>
    return %a : tensor<4xf32>
  }
}

// -----

// Between two devices messages arrive in the order they were sent, whatever
// chunk sent them: stage 1 (device 1's first chunk) meets the message that
// stage 0 sent to stage 3 (its second chunk), which it does not take.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    // expected-error @+1 {{mismatched transfer: stage 0 sends to stage 3 (tag 0, microbatch 0) a 'tensor<4xf32>', but stage 1, which runs on the same device, receives first (tag 0, a 'tensor<4xf32>')}}
    cleave.send %x to 3 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() attributes {cleave.stage = 1 : i64} {
    // expected-note @+1 {{the receive it meets: stage 1 receives from stage 0 (tag 0, microbatch 0)}}
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_2() attributes {cleave.stage = 2 : i64} {
    return
  }
  func.func @stage_3() -> tensor<4xf32> attributes {cleave.stage = 3 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    return %a : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{`cleave.schedule`: expected gpipe, 1f1b, interleaved or interleaved:V (V >= 2 model chunks per device), got 'zigzag'}}
module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "zigzag"} {
}

// -----

// expected-error @+1 {{`cleave.schedule` must be a string, got 1 : i64}}
module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = 1 : i64} {
}
