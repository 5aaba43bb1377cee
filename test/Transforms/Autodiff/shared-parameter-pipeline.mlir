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
