// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss --cleave-optimizer-update="optimizer=sgd from-plan=true" | FileCheck %s

// A parameter that some pipeline stages read, but not all (a tied
// embedding on the first and last of four stages): each stage that reads
// it holds a copy, and the copies' gradients add up by an all-reduce
// along pp in which every stage takes part; stage 2, which does not read
// it, adds zeros. The all-reduces come together, one per stage in stage
// order, so that every stage reaches them in one order; each copy is
// updated with the sum.

// CHECK-LABEL: func.func @main
// CHECK:     %[[G0:.*]] = cleave.accumulate %{{.*}}, %{{.*}} {cleave.stage = 0 : i64} : tensor<2xf32>
// CHECK:     %[[G1:.*]] = cleave.accumulate %{{.*}}, %{{.*}} {cleave.stage = 1 : i64} : tensor<2xf32>
// CHECK:     %[[R0:.*]] = cleave.all_reduce %[[G0]] {axis = "pp", cleave.stage = 0 : i64, group_size = 3 : i64, reduction = "sum"} : tensor<2xf32>
// CHECK-NEXT: %[[R1:.*]] = cleave.all_reduce %[[G1]] {axis = "pp", cleave.stage = 1 : i64, group_size = 3 : i64, reduction = "sum"} : tensor<2xf32>
// CHECK-NEXT: %[[Z:.*]] = cleave.constant {cleave.stage = 2 : i64} dense<0.000000e+00> : tensor<2xf32>
// CHECK-NEXT: cleave.all_reduce %[[Z]] {axis = "pp", cleave.stage = 2 : i64, group_size = 3 : i64, reduction = "sum"} : tensor<2xf32>
// CHECK-NOT: axis = "pp"
// CHECK:     cleave.sgd_update %[[R0]], {{.*}}cleave.stage = 0 : i64
// CHECK:     cleave.sgd_update %[[R1]], {{.*}}cleave.stage = 1 : i64
// CHECK-NOT: cleave.sgd_update
module attributes {cleave.mesh = {dp = 1 : i64, pp = 3 : i64, tp = 1 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "1f1b"} {
  func.func @main(%x: tensor<2xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 8 : i64, cleave.stage = 0 : i64} : tensor<2xf32>
    %a = cleave.mul %x, %w {cleave.stage = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %b = cleave.tanh %a {cleave.stage = 1 : i64} : tensor<2xf32>
    %c = cleave.mul %b, %w {cleave.stage = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %d = cleave.tanh %c {cleave.stage = 2 : i64} : tensor<2xf32>
    %l = cleave.reduce_sum %d {axes = array<i64: 0>, keepdims = false, cleave.stage = 2 : i64} : (tensor<2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Under the interleaved schedule virtual stages 0 and 2 are the two model
// chunks of device 0 (of 2), and both read w, as does stage 3 on device 1.
// Device 0 holds w once and updates it once: chunk 1's copy (stage 2) adds
// its gradient into the accumulator of chunk 0's (one tensor of the device
// program, by name), and takes part in the all-reduce along pp with zeros,
// as stage 1, which does not read w, does. Stages 0 and 3 update w and
// clear their sums.

// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[S0:.*]] = cleave.state "grad:w" {cleave.stage = 0 : i64}
// CHECK-DAG: %[[S2:.*]] = cleave.state "grad:w" {cleave.stage = 2 : i64}
// CHECK-DAG: %[[S3:.*]] = cleave.state "grad:w" {cleave.stage = 3 : i64}
// CHECK-DAG: %[[G0:.*]] = cleave.accumulate %{{.*}}, %[[S0]] {cleave.stage = 0 : i64}
// CHECK-DAG: %[[G3:.*]] = cleave.accumulate %{{.*}}, %[[S3]] {cleave.stage = 3 : i64}
// CHECK-DAG: cleave.accumulate %{{.*}}, %[[S2]] {cleave.stage = 2 : i64}
// CHECK:     %[[R0:.*]] = cleave.all_reduce %[[G0]] {axis = "pp", cleave.stage = 0 : i64, group_size = 2 : i64, reduction = "sum"}
// CHECK-NEXT: %[[Z1:.*]] = cleave.constant {cleave.stage = 1 : i64} dense<0.000000e+00>
// CHECK-NEXT: cleave.all_reduce %[[Z1]] {axis = "pp", cleave.stage = 1 : i64
// CHECK-NEXT: %[[Z2:.*]] = cleave.constant {cleave.stage = 2 : i64} dense<0.000000e+00>
// CHECK-NEXT: cleave.all_reduce %[[Z2]] {axis = "pp", cleave.stage = 2 : i64
// CHECK-NEXT: %[[R3:.*]] = cleave.all_reduce %[[G3]] {axis = "pp", cleave.stage = 3 : i64
// CHECK-NOT: axis = "pp"
// CHECK:     cleave.sgd_update %[[R0]], {{.*}}cleave.stage = 0 : i64
// CHECK:     cleave.sgd_update %[[R3]], {{.*}}cleave.stage = 3 : i64
// CHECK-NOT: cleave.sgd_update
// CHECK:     cleave.clear %[[G0]] {cleave.stage = 0 : i64}
// CHECK-NEXT: cleave.clear %[[G3]] {cleave.stage = 3 : i64}
// CHECK-NOT: cleave.clear {{.*}}stage = 2
module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 2 : i64, cleave.schedule = "interleaved:2"} {
  func.func @main(%x: tensor<2xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
    %w = cleave.weight "w" {file = "/m.data", offset = 0 : i64, length = 8 : i64, cleave.stage = 0 : i64} : tensor<2xf32>
    %a = cleave.mul %x, %w {cleave.stage = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %b = cleave.tanh %a {cleave.stage = 1 : i64} : tensor<2xf32>
    %c = cleave.mul %b, %w {cleave.stage = 2 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %d = cleave.tanh %c {cleave.stage = 3 : i64} : tensor<2xf32>
    %e = cleave.mul %d, %w {cleave.stage = 3 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %l = cleave.reduce_sum %e {axes = array<i64: 0>, keepdims = false, cleave.stage = 3 : i64} : (tensor<2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
