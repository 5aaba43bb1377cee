// With overlap-reduction and replicas, each gradient's accumulation moves
// to right after the op that makes the gradient, followed by the start of
// its all-reduce over the replicas (cleave.reduce_start, which runs in the
// last microbatch's backward); the update waits for it (cleave.reduce_wait)
// and reads the reduced sum, and only the loss is all-reduced there. The
// accumulator cleared after the update is the waited one. The sums go into
// buckets in the order the backward makes them: by default both (32 bytes)
// into the first bucket (at most 1 MiB), whose reduction starts with the
// second (`last`); with bucket-bytes=0 each is a bucket of its own.
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd microbatches=2 replicas=2 clip-grad-norm=2.0 overlap-reduction=true" | FileCheck %s
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd microbatches=2 replicas=2 clip-grad-norm=2.0 overlap-reduction=true bucket-bytes=0" | FileCheck %s --check-prefix=EACH
// RUN: not cleave-opt %s --cleave-optimizer-update="optimizer=sgd replicas=2 overlap-reduction=true bucket-bytes=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// Without replicas, or under ZeRO (which reduce-scatters instead), the
// option changes nothing: the sums are reduced in the update as before.
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd microbatches=2 overlap-reduction=true" | FileCheck %s --check-prefix=ONE
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd replicas=2 zero=1 overlap-reduction=true" | FileCheck %s --check-prefix=ZERO
// RUN: cleave-opt %s --cleave-optimizer-update="optimizer=sgd replicas=2" | FileCheck %s --check-prefix=UPDATE

// CHECK-LABEL: func.func @main
// CHECK:      %[[DW:.*]] = cleave.mul
// CHECK-NEXT: %[[SW:.*]] = cleave.state "grad:w"
// CHECK-NEXT: %[[AW:.*]] = cleave.accumulate %[[DW]], %[[SW]]
// CHECK-NEXT: %[[RW:.*]] = cleave.reduce_start %[[AW]] {axis = "dp", group_size = 2 : i64, id = 0 : i64, reduction = "sum"} :
// The next gradient is made after the first reduction started.
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum
// CHECK-NEXT: %[[SB:.*]] = cleave.state "grad:b"
// CHECK-NEXT: %[[AB:.*]] = cleave.accumulate %[[DB]], %[[SB]]
// CHECK-NEXT: %[[RB:.*]] = cleave.reduce_start %[[AB]] {axis = "dp", group_size = 2 : i64, id = 0 : i64, last, reduction = "sum"}
// CHECK:      %[[WW:.*]] = cleave.reduce_wait %[[RW]] {id = 0 : i64}
// CHECK-NEXT: %[[WB:.*]] = cleave.reduce_wait %[[RB]] {id = 0 : i64}
// CHECK-NEXT: cleave.all_reduce %{{.*}} {axis = "dp", group_size = 2 : i64, reduction = "sum"} : tensor<f32>
// CHECK-NOT:  cleave.all_reduce
// CHECK:      cleave.reduce_sum_square %[[WW]]
// CHECK:      cleave.sgd_update %[[WW]],
// CHECK:      cleave.sgd_update %[[WB]],
// CHECK:      cleave.clear %[[WW]]
// CHECK-NEXT: cleave.clear %[[WB]]

// EACH:      cleave.reduce_start %{{.*}} {axis = "dp", group_size = 2 : i64, id = 0 : i64, last, reduction = "sum"} : tensor<3x2xf32>
// EACH:      cleave.reduce_start %{{.*}} {axis = "dp", group_size = 2 : i64, id = 1 : i64, last, reduction = "sum"} : tensor<2xf32>
// EACH:      cleave.reduce_wait %{{.*}} {id = 0 : i64}
// EACH-NEXT: cleave.reduce_wait %{{.*}} {id = 1 : i64}

// NEGATIVE: error: bucket-bytes=-1: a bucket holds zero or more bytes of gradient sums

// ONE-NOT: reduce_start
// ONE-NOT: reduce_wait
// ONE: cleave.accumulate
// ZERO-NOT: reduce_start
// ZERO: cleave.reduce_scatter
// UPDATE-NOT: reduce_start
// UPDATE-COUNT-3: cleave.all_reduce

func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}, tensor<3x2xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"}, tensor<2xf32> {cleave.gradient_of = "b", cleave.name = "grad:b"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<3x2xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 24 : i64, length = 8 : i64} : tensor<2xf32>
  %y = cleave.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %z = cleave.add %y, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %l = cleave.reduce_sum %z {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  %dw = cleave.mul %w, %w : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %db = cleave.reduce_sum %z {axes = array<i64: 0>, keepdims = false} : (tensor<4x2xf32>) -> tensor<2xf32>
  return %l, %dw, %db : tensor<f32>, tensor<3x2xf32>, tensor<2xf32>
}
