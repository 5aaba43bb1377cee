// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-verify-partition

// Stages that receive first and then send, in matching order, pass for every
// microbatch.

module attributes {cleave.mesh = {pp = 3 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 4 : i64} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    %y = cleave.all_reduce %x {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
    cleave.send %y to 1 tag 0 : tensor<4xf32>
    cleave.send %x to 2 tag 1 : tensor<4xf32>
    return
  }
  func.func @stage_1() attributes {cleave.stage = 1 : i64} {
    %y = cleave.recv from 0 tag 0 : tensor<4xf32>
    cleave.send %y to 2 tag 2 : tensor<4xf32>
    return
  }
  func.func @stage_2() -> tensor<4xf32> attributes {cleave.stage = 2 : i64} {
    %x = cleave.recv from 0 tag 1 : tensor<4xf32>
    %y = cleave.recv from 1 tag 2 : tensor<4xf32>
    %z = cleave.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %z : tensor<4xf32>
  }
}

// -----

// Crossed receives: each stage receives before it sends. (Crossed sends
// complete: a send never waits for its receiver.)

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @stage_0(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cleave.stage = 0 : i64} {
    // expected-error @+1 {{communication deadlock: stage 0 waits for stage 1, stage 1 waits for stage 0; stage 0 receives from stage 1 (tag 1) here}}
    %y = cleave.recv from 1 tag 1 : tensor<4xf32>
    cleave.send %x to 1 tag 0 : tensor<4xf32>
    return %y : tensor<4xf32>
  }
  func.func @stage_1(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cleave.stage = 1 : i64} {
    // expected-note @+1 {{blocked: stage 1 receives from stage 0 (tag 0)}}
    %y = cleave.recv from 0 tag 0 : tensor<4xf32>
    cleave.send %x to 0 tag 1 : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// Crossed sends complete (each stage sends, then receives the other's).

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @stage_0(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cleave.stage = 0 : i64} {
    cleave.send %x to 1 tag 0 : tensor<4xf32>
    %y = cleave.recv from 1 tag 1 : tensor<4xf32>
    return %y : tensor<4xf32>
  }
  func.func @stage_1(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cleave.stage = 1 : i64} {
    cleave.send %x to 0 tag 1 : tensor<4xf32>
    %y = cleave.recv from 0 tag 0 : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// A send meets a receive that expects another tag.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    // expected-error @+1 {{mismatched transfer: stage 0 sends to stage 1 (tag 0) a 'tensor<4xf32>', but stage 1 expects tag 7 and a 'tensor<4xf32>'}}
    cleave.send %x to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> tensor<4xf32> attributes {cleave.stage = 1 : i64} {
    // expected-note @+1 {{the receive it meets: stage 1 receives from stage 0 (tag 7)}}
    %y = cleave.recv from 0 tag 7 : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// A send meets a receive of another type.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    // expected-error @+1 {{mismatched transfer: stage 0 sends to stage 1 (tag 0) a 'tensor<4xf32>', but stage 1 expects tag 0 and a 'tensor<8xf32>'}}
    cleave.send %x to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> tensor<8xf32> attributes {cleave.stage = 1 : i64} {
    // expected-note @+1 {{the receive it meets}}
    %y = cleave.recv from 0 tag 0 : tensor<8xf32>
    return %y : tensor<8xf32>
  }
}

// -----

// A stage that receives twice per microbatch from a stage that sends once:
// the first microbatch consumes both sends, and the second waits forever.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64} {
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

// A send to a stage that does not exist.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @stage_0(%x: tensor<4xf32>) attributes {cleave.stage = 0 : i64} {
    // expected-error @+1 {{stage 0 sends to stage 5 (tag 0), but there is no stage 5}}
    cleave.send %x to 5 tag 0 : tensor<4xf32>
    return
  }
}

// -----

// A collective over a group the mesh does not have.

module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 1 : i64} {
  func.func @stage_0(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cleave.stage = 0 : i64} {
    // expected-error @+1 {{runs over mesh axis "tp" with 4 devices, which the plan's mesh does not have}}
    %y = cleave.all_reduce %x {axis = "tp", group_size = 4 : i64, reduction = "sum"} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
