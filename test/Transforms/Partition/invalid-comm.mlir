// RUN: cleave-opt %s -split-input-file -verify-diagnostics

func.func @send_c1(%x: tensor<4xf32>) {
  // expected-error @+1 {{[send_c1] peer (-1) and tag (0) must be non-negative}}
  cleave.send %x to -1 tag 0 : tensor<4xf32>
  return
}

// -----

func.func @send_c2(%x: tensor<4xf32>) attributes {cleave.stage = 1 : i64} {
  // expected-error @+1 {{[send_c2] peer 1 is the stage the op runs in}}
  cleave.send %x to 1 tag 0 : tensor<4xf32>
  return
}

// -----

func.func @recv_c1() -> tensor<4xf32> {
  // expected-error @+1 {{[recv_c1] peer (0) and tag (-2) must be non-negative}}
  %x = cleave.recv from 0 tag -2 : tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

func.func @recv_c2() -> tensor<4xf32> attributes {cleave.stage = 0 : i64} {
  // expected-error @+1 {{[recv_c2] peer 0 is the stage the op runs in}}
  %x = cleave.recv from 0 tag 0 : tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

func.func @collective_c1_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{[collective_c1] needs a mesh axis (pp, dp or tp) and a positive group size, got axis "" and group_size 2}}
  %y = cleave.all_reduce %x {axis = "", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @collective_c1_size(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{[collective_c1] needs a mesh axis (pp, dp or tp) and a positive group size, got axis "tp" and group_size 0}}
  %y = cleave.all_gather %x {axis = "tp", group_size = 0 : i64, dim = 0 : i64} : tensor<4xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A group is named by an axis of the mesh; there is no "ep" axis yet.
func.func @collective_c1_unknown_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{[collective_c1] needs a mesh axis (pp, dp or tp) and a positive group size, got axis "ep" and group_size 2}}
  %y = cleave.all_reduce %x {axis = "ep", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Only a slice takes a block of the batch; nothing moves across it.
func.func @collective_c1_batch(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{[collective_c1] needs a mesh axis (pp, dp or tp) and a positive group size, got axis "batch" and group_size 2}}
  %y = cleave.all_gather %x {axis = "batch", group_size = 2 : i64, dim = 0 : i64} : tensor<4xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Every mesh axis names a group, and a slice may take its batch block.
func.func @collective_c1_axes(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) {
  %p = cleave.all_reduce %x {axis = "pp", group_size = 2 : i64, reduction = "sum"} : tensor<4xf32>
  %d = cleave.all_reduce %x {axis = "dp", group_size = 4 : i64, reduction = "max"} : tensor<4xf32>
  %t = cleave.all_reduce %x {axis = "tp", group_size = 8 : i64, reduction = "min"} : tensor<4xf32>
  %b = cleave.all_slice %x {axis = "batch", group_size = 2 : i64, dim = 0 : i64} : tensor<4xf32> -> tensor<2xf32>
  return %p, %d, %t, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>
}

// -----

func.func @collective_c2(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{[collective_c2] unknown reduction "mean"; expected sum, product, max, min, average}}
  %y = cleave.all_reduce %x {axis = "tp", group_size = 2 : i64, reduction = "mean"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @collective_c2_scatter(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{[collective_c2] unknown reduction "xor"}}
  %y = cleave.reduce_scatter %x {axis = "tp", group_size = 2 : i64, dim = 0 : i64, reduction = "xor"} : tensor<4xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @collective_c3(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{[collective_c3] dim 1 is not a dimension of a 1-D operand}}
  %y = cleave.all_gather %x {axis = "tp", group_size = 2 : i64, dim = 1 : i64} : tensor<4xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @all_gather_c1(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{[all_gather_c1] expected result type 'tensor<4x4xf32>', got 'tensor<4x2xf32>'}}
  %y = cleave.all_gather %x {axis = "tp", group_size = 2 : i64, dim = 1 : i64} : tensor<4x2xf32> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @collective_c4_divide(%x: tensor<5xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{[collective_c4] dimension 0 (size 5) does not divide by the group size 2}}
  %y = cleave.all_slice %x {axis = "tp", group_size = 2 : i64, dim = 0 : i64} : tensor<5xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @collective_c4_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{[collective_c4] expected result type 'tensor<2xf32>', got 'tensor<4xf32>'}}
  %y = cleave.reduce_scatter %x {axis = "tp", group_size = 2 : i64, dim = 0 : i64, reduction = "sum"} : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @all_to_all_c1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{[all_to_all_c1] split_dim 1 and concat_dim 1 must be distinct dimensions of a 2-D operand}}
  %y = cleave.all_to_all %x {axis = "tp", group_size = 2 : i64, split_dim = 1 : i64, concat_dim = 1 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @all_to_all_c2(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{[all_to_all_c2] expected result type 'tensor<2x16xf32>', got 'tensor<4x8xf32>'}}
  %y = cleave.all_to_all %x {axis = "tp", group_size = 2 : i64, split_dim = 0 : i64, concat_dim = 1 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @all_to_all_c2_divide(%x: tensor<3x8xf32>) -> tensor<1x16xf32> {
  // expected-error @+1 {{[all_to_all_c2] split_dim 0 (size 3) does not divide by the group size 2}}
  %y = cleave.all_to_all %x {axis = "tp", group_size = 2 : i64, split_dim = 0 : i64, concat_dim = 1 : i64} : tensor<3x8xf32> -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

func.func @weight_slice_c1() -> tensor<16x32xf32> {
  // expected-error @+1 {{[weight_slice_c1] a weight of shape 'tensor<16x64xf32>' takes 4096 bytes at a non-negative offset, got length 2048 at offset 0}}
  %w = cleave.weight_slice "w" {file = "/m.data", offset = 0 : i64, length = 2048 : i64, shape = array<i64: 16, 64>, starts = array<i64: 0, 0>} : tensor<16x32xf32>
  return %w : tensor<16x32xf32>
}

// -----

func.func @weight_slice_c2() -> tensor<16x32xf32> {
  // expected-error @+1 {{[weight_slice_c2] shape and starts need 2 entries, got 2 and 1}}
  %w = cleave.weight_slice "w" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, shape = array<i64: 16, 64>, starts = array<i64: 0>} : tensor<16x32xf32>
  return %w : tensor<16x32xf32>
}

// -----

func.func @weight_slice_c3() -> tensor<16x32xf32> {
  // expected-error @+1 {{[weight_slice_c3] dimension 1: window [40, 72) is not inside the weight's size 64}}
  %w = cleave.weight_slice "w" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, shape = array<i64: 16, 64>, starts = array<i64: 0, 40>} : tensor<16x32xf32>
  return %w : tensor<16x32xf32>
}

// -----

func.func @weight_slice_c3_split() -> tensor<16x48xf32> {
  // expected-error @+1 {{[weight_slice_c3] dimension 1: window [0, 96) is not inside the weight's size 64}}
  %w = cleave.weight_slice "w" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, shape = array<i64: 16, 64>, starts = array<i64: 0, 0>, split_dim = 1 : i64, axis = "tp", group_size = 2 : i64} : tensor<16x48xf32>
  return %w : tensor<16x48xf32>
}

// -----

func.func @weight_slice_c4_together() -> tensor<16x32xf32> {
  // expected-error @+1 {{[weight_slice_c4] split_dim, axis and group_size go together}}
  %w = cleave.weight_slice "w" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, shape = array<i64: 16, 64>, starts = array<i64: 0, 0>, split_dim = 1 : i64} : tensor<16x32xf32>
  return %w : tensor<16x32xf32>
}

// -----

func.func @weight_slice_c4_dim() -> tensor<16x32xf32> {
  // expected-error @+1 {{[weight_slice_c4] split_dim 2 must be a dimension of the result, group_size positive and axis named}}
  %w = cleave.weight_slice "w" {file = "/m.data", offset = 0 : i64, length = 4096 : i64, shape = array<i64: 16, 64>, starts = array<i64: 0, 0>, split_dim = 2 : i64, axis = "tp", group_size = 2 : i64} : tensor<16x32xf32>
  return %w : tensor<16x32xf32>
}

// -----

func.func @reduce_start_c1(%s: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{[reduce_start_c1] the reduced accumulator may be read only by the one cleave.reduce_wait that ends the reduction, not by cleave.neg}}
  %r = cleave.reduce_start %s {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 0 : i64, last} : tensor<4xf32>
  %y = cleave.neg %r : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @reduce_start_two_waits(%s: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{[reduce_start_c1] the reduced accumulator may be read only by the one cleave.reduce_wait that ends the reduction, not by cleave.reduce_wait}}
  %r = cleave.reduce_start %s {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 0 : i64, last} : tensor<4xf32>
  %w1 = cleave.reduce_wait %r {id = 0 : i64} : tensor<4xf32>
  %w2 = cleave.reduce_wait %r {id = 0 : i64} : tensor<4xf32>
  return %w1, %w2 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @reduce_start_axis(%s: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{[collective_c1] needs a mesh axis (pp, dp or tp) and a positive group size, got axis "xy" and group_size 2}}
  %r = cleave.reduce_start %s {axis = "xy", group_size = 2 : i64, reduction = "sum", id = 0 : i64, last} : tensor<4xf32>
  %w = cleave.reduce_wait %r {id = 0 : i64} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @reduce_wait_c1(%s: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{[reduce_wait_c1] waits for reduction 0, so its operand must be the result of the cleave.reduce_start with that id}}
  %w = cleave.reduce_wait %s {id = 0 : i64} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @reduce_wait_c1_id(%s: tensor<4xf32>) -> tensor<4xf32> {
  %r = cleave.reduce_start %s {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 3 : i64, last} : tensor<4xf32>
  // expected-error @+1 {{[reduce_wait_c1] waits for reduction 4, so its operand must be the result of the cleave.reduce_start with that id}}
  %w = cleave.reduce_wait %r {id = 4 : i64} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @reduce_start_c2_unended(%s: tensor<4xf32>, %t: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  // expected-error @+1 {{[reduce_start_c2] no later cleave.reduce_start of bucket 0 in its block ends it (last)}}
  %r = cleave.reduce_start %s {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 0 : i64} : tensor<4xf32>
  %q = cleave.reduce_start %t {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 1 : i64, last} : tensor<2xf32>
  %w = cleave.reduce_wait %r {id = 0 : i64} : tensor<4xf32>
  %v = cleave.reduce_wait %q {id = 1 : i64} : tensor<2xf32>
  return %w, %v : tensor<4xf32>, tensor<2xf32>
}

// -----

func.func @reduce_start_c2_after_last(%s: tensor<4xf32>, %t: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  // expected-error @+1 {{[reduce_start_c2] ends bucket 0 (last), and another cleave.reduce_start adds to it after}}
  %r = cleave.reduce_start %s {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 0 : i64, last} : tensor<4xf32>
  %q = cleave.reduce_start %t {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 0 : i64, last} : tensor<2xf32>
  %w = cleave.reduce_wait %r {id = 0 : i64} : tensor<4xf32>
  %v = cleave.reduce_wait %q {id = 0 : i64} : tensor<2xf32>
  return %w, %v : tensor<4xf32>, tensor<2xf32>
}

// -----

func.func @reduce_start_c2_mixed(%s: tensor<4xf32>, %t: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  // expected-error @+1 {{[reduce_start_c2] the starts of bucket 0 must share the group, the reduction and the element type}}
  %r = cleave.reduce_start %s {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 0 : i64} : tensor<4xf32>
  %q = cleave.reduce_start %t {axis = "dp", group_size = 2 : i64, reduction = "max", id = 0 : i64, last} : tensor<2xf32>
  %w = cleave.reduce_wait %r {id = 0 : i64} : tensor<4xf32>
  %v = cleave.reduce_wait %q {id = 0 : i64} : tensor<2xf32>
  return %w, %v : tensor<4xf32>, tensor<2xf32>
}
