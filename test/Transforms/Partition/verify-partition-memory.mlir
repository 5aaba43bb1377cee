// RUN: cleave-opt %s -split-input-file -verify-diagnostics \
// RUN:   --cleave-verify-partition=target=%S/Inputs/tiny-device.json

// Stage 0 fits the 64 kB device: 16 kB of weights and 8 kB of activations.
// Stage 1 holds its 48 kB half of a split weight, and its activations peak
// at the slice, where the matmul's 12 kB product and the 8 kB slice are
// live; with a 4 kB staging buffer for the received tensor it needs 72 kB.

module attributes {cleave.mesh = {pp = 2 : i64, tp = 2 : i64, dp = 1 : i64}, cleave.microbatches = 2 : i64} {
  func.func @stage_0(%x: tensor<16x64xf32>) attributes {cleave.stage = 0 : i64} {
    %w = cleave.weight "w0" {file = "/m.data", offset = 0 : i64, length = 16384 : i64} : tensor<64x64xf32>
    %y = cleave.matmul %x, %w : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    cleave.send %y to 1 tag 0 : tensor<16x64xf32>
    return
  }
  func.func @stage_1() -> tensor<16x128xf32> attributes {cleave.stage = 1 : i64} {
    %x = cleave.recv from 0 tag 0 : tensor<16x64xf32>
    %w = cleave.weight_slice "w1" {file = "/m.data", offset = 16384 : i64, length = 98304 : i64, shape = array<i64: 64, 384>, starts = array<i64: 0, 0>, split_dim = 1 : i64, axis = "tp", group_size = 2 : i64} : tensor<64x192xf32>
    %h = cleave.relu %x : tensor<16x64xf32>
    %y = cleave.matmul %h, %w : (tensor<16x64xf32>, tensor<64x192xf32>) -> tensor<16x192xf32>
    // expected-error @+1 {{stage 1 (tp ranks 0-1) needs 73.73 kB (73728 bytes), 9.73 kB (9728 bytes) more than the 64.00 kB (64000 bytes) of a '64 kB test device' (weights 49.15 kB (49152 bytes), activations 20.48 kB (20480 bytes), communication buffers 4.10 kB (4096 bytes)); the live activations peak at this op}}
    %z = cleave.slice %y {starts = array<i64: 0, 0>, ends = array<i64: 16, 128>, steps = array<i64: 1, 1>} : (tensor<16x192xf32>) -> tensor<16x128xf32>
    return %z : tensor<16x128xf32>
  }
}

// -----

// Without a target (no option, no `cleave.target`) there is no memory check.
// RUN: cleave-opt %s -split-input-file --cleave-verify-partition | FileCheck %s --check-prefix=NOTARGET
// NOTARGET: func.func @stage_1

// -----

// A target that cannot be loaded is an error, not a skipped check.
// RUN: not cleave-opt %s -split-input-file \
// RUN:   --cleave-verify-partition=target=%S/Inputs/missing.json 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// MISSING: error: cannot load the target for the memory check: {{.*}}missing.json
