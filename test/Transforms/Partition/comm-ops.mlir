// RUN: cleave-opt %s | cleave-opt | FileCheck %s

// The communication ops and weight slices print and parse back.

// CHECK-LABEL: func.func @stage_0
// CHECK: %[[W:.*]] = cleave.weight_slice "fc1.weight" {axis = "tp", file = "/m.data", group_size = 2 : i64, length = 4096 : i64, offset = 0 : i64, shape = array<i64: 16, 64>, split_dim = 1 : i64, starts = array<i64: 0, 0>} : tensor<16x32xf32>
// CHECK: %[[R:.*]] = cleave.all_reduce %{{.*}} {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4x16xf32>
// CHECK: cleave.all_gather %{{.*}} {axis = "tp", dim = 1 : i64, group_size = 2 : i64} : tensor<4x8xf32> -> tensor<4x16xf32>
// CHECK: cleave.reduce_scatter %{{.*}} {axis = "tp", dim = 1 : i64, group_size = 2 : i64, reduction = "max"} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK: cleave.all_slice %{{.*}} {axis = "tp", dim = 0 : i64, group_size = 2 : i64} : tensor<4x16xf32> -> tensor<2x16xf32>
// CHECK: cleave.all_to_all %{{.*}} {axis = "tp", concat_dim = 1 : i64, group_size = 2 : i64, split_dim = 0 : i64} : tensor<4x8xf32> -> tensor<2x16xf32>
// CHECK: cleave.send %[[R]] to 1 tag 3 : tensor<4x16xf32>
func.func @stage_0(%x: tensor<4x16xf32>, %h: tensor<4x8xf32>) attributes {cleave.stage = 0 : i64} {
  %w = cleave.weight_slice "fc1.weight" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, shape = array<i64: 16, 64>, starts = array<i64: 0, 0>, split_dim = 1 : i64, axis = "tp", group_size = 2 : i64} : tensor<16x32xf32>
  %r = cleave.all_reduce %x {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4x16xf32>
  %g = cleave.all_gather %h {axis = "tp", group_size = 2 : i64, dim = 1 : i64} : tensor<4x8xf32> -> tensor<4x16xf32>
  %s = cleave.reduce_scatter %x {axis = "tp", group_size = 2 : i64, dim = 1 : i64, reduction = "max"} : tensor<4x16xf32> -> tensor<4x8xf32>
  %l = cleave.all_slice %x {axis = "tp", group_size = 2 : i64, dim = 0 : i64} : tensor<4x16xf32> -> tensor<2x16xf32>
  %a = cleave.all_to_all %h {axis = "tp", group_size = 2 : i64, split_dim = 0 : i64, concat_dim = 1 : i64} : tensor<4x8xf32> -> tensor<2x16xf32>
  cleave.send %r to 1 tag 3 : tensor<4x16xf32>
  return
}

// CHECK-LABEL: func.func @stage_1
// CHECK: %[[X:.*]] = cleave.recv from 0 tag 3 : tensor<4x16xf32>
// CHECK: return %[[X]]
func.func @stage_1() -> tensor<4x16xf32> attributes {cleave.stage = 1 : i64} {
  %x = cleave.recv from 0 tag 3 : tensor<4x16xf32>
  return %x : tensor<4x16xf32>
}
