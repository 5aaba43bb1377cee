// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-group-chunks | FileCheck %s

// Under the interleaved schedule device d runs virtual stages d and d + pp:
// device 0 the stages 0 and 2, device 1 the stages 1 and 3. Each device's
// function holds its chunks' ops in chunk order, each marked with its chunk
// and virtual stage, and the union of their graph ports; transfers keep
// their virtual stages.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  func.func @stage_0(%x: tensor<4xf32> {cleave.input = 0 : i64, cleave.name = "x"}) attributes {cleave.stage = 0 : i64} {
    %a = cleave.relu %x : tensor<4xf32>
    cleave.send %a to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() attributes {cleave.stage = 1 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    %b = cleave.tanh %a : tensor<4xf32>
    cleave.send %b to 2 tag 1 : tensor<4xf32>
    return
  }
  func.func @stage_2(%x: tensor<4xf32> {cleave.input = 0 : i64, cleave.name = "x"}) attributes {cleave.stage = 2 : i64} {
    %a = cleave.recv from 1 tag 1 : tensor<4xf32>
    %b = cleave.add %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    cleave.send %b to 3 tag 2 : tensor<4xf32>
    return
  }
  func.func @stage_3(%m: tensor<4xf32> {cleave.input = 1 : i64, cleave.name = "m"}) -> (tensor<4xf32> {cleave.output = 0 : i64, cleave.name = "y"}) attributes {cleave.stage = 3 : i64} {
    %a = cleave.recv from 2 tag 2 : tensor<4xf32>
    %b = cleave.mul %a, %m : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @stage_0
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32> {cleave.input = 0 : i64, cleave.name = "x"})
// CHECK-SAME:    attributes {cleave.stage = 0 : i64}
// CHECK-NEXT:    %[[A:.*]] = cleave.relu %[[X]] {cleave.chunk = 0 : i64, cleave.stage = 0 : i64}
// CHECK-NEXT:    cleave.send %[[A]] to 1 tag 0 {cleave.chunk = 0 : i64, cleave.stage = 0 : i64}
// CHECK-NEXT:    %[[R:.*]] = cleave.recv from 1 tag 1 {cleave.chunk = 1 : i64, cleave.stage = 2 : i64}
// CHECK-NEXT:    %[[B:.*]] = cleave.add %[[R]], %[[X]] {cleave.chunk = 1 : i64, cleave.stage = 2 : i64}
// CHECK-NEXT:    cleave.send %[[B]] to 3 tag 2 {cleave.chunk = 1 : i64, cleave.stage = 2 : i64}
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @stage_1
// CHECK-SAME:    (%[[M:.*]]: tensor<4xf32> {cleave.input = 1 : i64, cleave.name = "m"})
// CHECK-SAME:    -> (tensor<4xf32> {cleave.name = "y", cleave.output = 0 : i64})
// CHECK-SAME:    attributes {cleave.stage = 1 : i64}
// CHECK-NEXT:    cleave.recv from 0 tag 0 {cleave.chunk = 0 : i64, cleave.stage = 1 : i64}
// CHECK-NEXT:    cleave.tanh {{.*}}{cleave.chunk = 0 : i64, cleave.stage = 1 : i64}
// CHECK-NEXT:    cleave.send {{.*}} to 2 tag 1 {cleave.chunk = 0 : i64, cleave.stage = 1 : i64}
// CHECK-NEXT:    %[[R3:.*]] = cleave.recv from 2 tag 2 {cleave.chunk = 1 : i64, cleave.stage = 3 : i64}
// CHECK-NEXT:    %[[Y:.*]] = cleave.mul %[[R3]], %[[M]] {cleave.chunk = 1 : i64, cleave.stage = 3 : i64}
// CHECK-NEXT:    return %[[Y]]
// CHECK-NOT:   func.func

// -----

// Any other schedule leaves the stage functions as they are.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "1f1b"} {
  func.func @stage_0(%x: tensor<4xf32> {cleave.input = 0 : i64}) attributes {cleave.stage = 0 : i64} {
    cleave.send %x to 1 tag 0 : tensor<4xf32>
    return
  }
  func.func @stage_1() -> (tensor<4xf32> {cleave.output = 0 : i64}) attributes {cleave.stage = 1 : i64} {
    %a = cleave.recv from 0 tag 0 : tensor<4xf32>
    return %a : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NEXT:    cleave.send %{{.*}} to 1 tag 0 : tensor<4xf32>
// CHECK-LABEL: func.func @stage_1
// CHECK-NEXT:    cleave.recv from 0 tag 0 : tensor<4xf32>

// -----

// A pipeline of one stage would run its chunks' transfers to itself.

// expected-error @+1 {{`cleave.schedule = "interleaved:2"` runs model chunks on pipeline stages, but the plan has one stage: a chunk would send to its own device}}
module attributes {cleave.mesh = {pp = 1 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  func.func @stage_0() attributes {cleave.stage = 0 : i64} {
    return
  }
}

// -----

// Two chunks of a device cannot write the same graph output.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  func.func @stage_0(%x: tensor<4xf32> {cleave.input = 0 : i64}) -> (tensor<4xf32> {cleave.output = 0 : i64}) attributes {cleave.stage = 0 : i64} {
    return %x : tensor<4xf32>
  }
  // expected-error @+1 {{'func.func' op writes graph output 0, which @chunk_0 writes too}}
  func.func @stage_2(%x: tensor<4xf32> {cleave.input = 0 : i64}) -> (tensor<4xf32> {cleave.output = 0 : i64}) attributes {cleave.stage = 2 : i64} {
    return %x : tensor<4xf32>
  }
}

// -----

// The update is one entry for a device's chunks, and the device takes part
// in each reduction along pp once (clipping's sum of squares, the loss
// scale's overflow flag), with the sum of its chunks' parts: the parts are
// added, reduced once on the last chunk, and every chunk reads the result.
// Each chunk's update runs as far as it can in chunk order, the reduction
// as soon as every part is built, then each chunk to its end.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  func.func @stage_0() attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w0" {file = "/dev/null", offset = 0 : i64, length = 4 : i64, cleave.writable} : tensor<f32>
    %gs = cleave.state "grad:w0" : tensor<f32>
    %ga = cleave.accumulate %w, %gs : tensor<f32>
    %sq = cleave.mul %ga, %ga : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %n = cleave.all_reduce %sq {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
    %f = cleave.div %ga, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
    cleave.assign %f, %w : tensor<f32>
    %c = cleave.clear %ga : tensor<f32>
    return
  }
  func.func @stage_2() attributes {cleave.stage = 2 : i64} {
    %w = cleave.weight "w2" {file = "/dev/null", offset = 0 : i64, length = 4 : i64, cleave.writable} : tensor<f32>
    %gs = cleave.state "grad:w2" : tensor<f32>
    %ga = cleave.accumulate %w, %gs : tensor<f32>
    %sq = cleave.mul %ga, %ga : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %n = cleave.all_reduce %sq {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
    %f = cleave.div %ga, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
    cleave.assign %f, %w : tensor<f32>
    %c = cleave.clear %ga : tensor<f32>
    return
  }
}

// CHECK-LABEL: func.func @stage_0
// CHECK:         %[[W0:.*]] = cleave.weight "w0"
// CHECK:         %[[G0:.*]] = cleave.accumulate %[[W0]]
// CHECK:         %[[W2:.*]] = cleave.weight "w2"
// CHECK:         %[[G2:.*]] = cleave.accumulate %[[W2]]
// CHECK-NEXT:    %[[S0:.*]] = cleave.mul %[[G0]], %[[G0]] {cleave.chunk = 0 : i64, cleave.stage = 0 : i64}
// CHECK-NEXT:    %[[S2:.*]] = cleave.mul %[[G2]], %[[G2]] {cleave.chunk = 1 : i64, cleave.stage = 2 : i64}
// CHECK-NEXT:    %[[SUM:.*]] = cleave.add %[[S0]], %[[S2]] {cleave.chunk = 1 : i64, cleave.stage = 2 : i64}
// CHECK-NEXT:    %[[N:.*]] = cleave.all_reduce %[[SUM]] {axis = "pp", cleave.chunk = 1 : i64, cleave.stage = 2 : i64, group_size = 2 : i64, reduction = "sum"}
// CHECK-NEXT:    %[[F0:.*]] = cleave.div %[[G0]], %[[N]] {cleave.chunk = 0 : i64
// CHECK-NEXT:    cleave.assign %[[F0]], %[[W0]]
// CHECK-NEXT:    cleave.clear %[[G0]]
// CHECK-NEXT:    %[[F2:.*]] = cleave.div %[[G2]], %[[N]] {cleave.chunk = 1 : i64
// CHECK-NEXT:    cleave.assign %[[F2]], %[[W2]]
// CHECK-NEXT:    cleave.clear %[[G2]]
// CHECK-NEXT:    return
// CHECK-NOT:   cleave.all_reduce

// -----

// Every chunk builds its part of each reduction.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 1 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  // expected-error @+1 {{model chunk 1 of device 0 reduces 0 values along pp in its update and chunk 0 1: a device takes part in each reduction once, with the sum of its chunks' parts}}
  func.func @stage_0() attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w0" {file = "/dev/null", offset = 0 : i64, length = 4 : i64, cleave.writable} : tensor<f32>
    %gs = cleave.state "grad:w0" : tensor<f32>
    %ga = cleave.accumulate %w, %gs : tensor<f32>
    %n = cleave.all_reduce %ga {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
    cleave.assign %n, %w : tensor<f32>
    return
  }
  func.func @stage_2() attributes {cleave.stage = 2 : i64} {
    %w = cleave.weight "w2" {file = "/dev/null", offset = 0 : i64, length = 4 : i64, cleave.writable} : tensor<f32>
    %gs = cleave.state "grad:w2" : tensor<f32>
    %ga = cleave.accumulate %w, %gs : tensor<f32>
    cleave.assign %ga, %w : tensor<f32>
    return
  }
}
