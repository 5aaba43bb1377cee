// RUN: cleave-opt %s -split-input-file -verify-diagnostics --cleave-lower-shard-comm | FileCheck %s

// Upstream collectives become cleave ones over named mesh axes; an
// all-reduce that only feeds a slice of itself becomes a reduce-scatter; the
// resharding casts fold and the grid goes away.

shard.grid @tp(shape = 4) {cleave.axes = ["tp"]}

// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[Y:.*]]: tensor<8x4xf32>)
// CHECK-NEXT: %[[SUM:.*]] = cleave.all_reduce %[[X]] {axis = "tp", group_size = 4 : i64, reduction = "max"} : tensor<8x16xf32>
// CHECK-NEXT: %[[RS:.*]] = cleave.reduce_scatter %[[X]] {axis = "tp", dim = 1 : i64, group_size = 4 : i64, reduction = "sum"} : tensor<8x16xf32> -> tensor<8x4xf32>
// CHECK-NEXT: %[[G:.*]] = cleave.all_gather %[[Y]] {axis = "tp", dim = 1 : i64, group_size = 4 : i64} : tensor<8x4xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[A:.*]] = cleave.all_to_all %[[Y]] {axis = "tp", concat_dim = 1 : i64, group_size = 4 : i64, split_dim = 0 : i64} : tensor<8x4xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[S:.*]] = cleave.all_slice %[[G]] {axis = "tp", dim = 0 : i64, group_size = 4 : i64} : tensor<8x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: return %[[SUM]], %[[RS]], %[[A]], %[[S]]
func.func @collectives(%x: tensor<8x16xf32>, %y: tensor<8x4xf32>) -> (tensor<8x16xf32>, tensor<8x4xf32>, tensor<2x16xf32>, tensor<2x16xf32>) {
  %max = shard.all_reduce %x on @tp grid_axes = [0] reduction = max : tensor<8x16xf32> -> tensor<8x16xf32>
  %sum = shard.all_reduce %x on @tp grid_axes = [0] : tensor<8x16xf32> -> tensor<8x16xf32>
  %rs = shard.all_slice %sum on @tp grid_axes = [0] slice_axis = 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  %g = shard.all_gather %y on @tp grid_axes = [0] gather_axis = 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %gc = tensor.cast %g : tensor<8x16xf32> to tensor<8x16xf32>
  %a = shard.all_to_all %y on @tp grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<8x4xf32> -> tensor<2x16xf32>
  %s = shard.all_slice %gc on @tp grid_axes = [0] slice_axis = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  return %max, %rs, %a, %s : tensor<8x16xf32>, tensor<8x4xf32>, tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// An all-reduce with users besides the slice stays an all-reduce.

shard.grid @tp(shape = 2) {cleave.axes = ["tp"]}

// CHECK-LABEL: func.func @shared
// CHECK: %[[R:.*]] = cleave.all_reduce
// CHECK-NEXT: cleave.all_slice %[[R]]
// CHECK-NOT: cleave.reduce_scatter
func.func @shared(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x8xf32>) {
  %sum = shard.all_reduce %x on @tp grid_axes = [0] : tensor<8x16xf32> -> tensor<8x16xf32>
  %s = shard.all_slice %sum on @tp grid_axes = [0] slice_axis = 1 : tensor<8x16xf32> -> tensor<8x8xf32>
  return %sum, %s : tensor<8x16xf32>, tensor<8x8xf32>
}

// -----

// A grid without axis names gets positional ones, which name no group of
// the mesh.

shard.grid @mesh(shape = 2x2)

func.func @unnamed(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{runs over grid axis 'axis1', which is not a mesh axis (pp, dp or tp); name the grid's axes with `cleave.axes`}}
  %sum = shard.all_reduce %x on @mesh grid_axes = [1] : tensor<8xf32> -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

// Named axes: a grid of the data-parallel and tensor-parallel axes reduces
// over either.

shard.grid @mesh(shape = 2x4) {cleave.axes = ["dp", "tp"]}

// CHECK-LABEL: func.func @named
// CHECK: cleave.all_reduce %{{.*}} {axis = "dp", group_size = 2 : i64, reduction = "sum"}
// CHECK: cleave.all_reduce %{{.*}} {axis = "tp", group_size = 4 : i64, reduction = "sum"}
func.func @named(%x: tensor<8xf32>) -> tensor<8xf32> {
  %dp = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  %tp = shard.all_reduce %dp on @mesh grid_axes = [1] : tensor<8xf32> -> tensor<8xf32>
  return %tp : tensor<8xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

func.func @two_axes(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{runs over 2 grid axes; cleave collectives run over one mesh axis}}
  %sum = shard.all_reduce %x on @mesh grid_axes = [0, 1] : tensor<8xf32> -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

shard.grid @tp(shape = 2)

func.func @broadcast(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{has no cleave communication op to lower to}}
  %b = shard.broadcast %x on @tp grid_axes = [0] root = [0] : (tensor<8xf32>) -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

shard.grid @tp(shape = 2) {cleave.axes = ["tp"]}

func.func @bitwise(%x: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{reduces with a kind cleave collectives do not support}}
  %r = shard.all_reduce %x on @tp grid_axes = [0] reduction = bitwise_or : tensor<8xi32> -> tensor<8xi32>
  return %r : tensor<8xi32>
}

// -----

// The reduce-scatter takes the place of the slice it replaces; a cast that
// changes the type is not resharding's and stays; slicing along the batch
// axis moves nothing and is allowed.

shard.grid @mesh(shape = 2x2) {cleave.axes = ["batch", "tp"]}

// CHECK-LABEL: func.func @placement
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[B:.*]] = cleave.all_slice %[[X]] {axis = "batch", dim = 0 : i64, group_size = 2 : i64} : tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.cast %[[B]] : tensor<4x16xf32> to tensor<?x16xf32>
// CHECK-NEXT: %[[RS:.*]] = cleave.reduce_scatter %[[X]] {axis = "tp", dim = 1 : i64, group_size = 2 : i64, reduction = "sum"} : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[C]], %[[RS]]
func.func @placement(%x: tensor<8x16xf32>) -> (tensor<?x16xf32>, tensor<8x8xf32>) {
  %sum = shard.all_reduce %x on @mesh grid_axes = [1] : tensor<8x16xf32> -> tensor<8x16xf32>
  %b = shard.all_slice %x on @mesh grid_axes = [0] slice_axis = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  %c = tensor.cast %b : tensor<4x16xf32> to tensor<?x16xf32>
  %rs = shard.all_slice %sum on @mesh grid_axes = [1] slice_axis = 1 : tensor<8x16xf32> -> tensor<8x8xf32>
  return %c, %rs : tensor<?x16xf32>, tensor<8x8xf32>
}

// -----

shard.grid @mesh(shape = 2x2) {cleave.axes = ["batch", "tp"]}

func.func @batch_reduce(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{would move data between the blocks of the batch (the data-parallel replicas and microbatches), which run apart}}
  %sum = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  return %sum : tensor<8xf32>
}
