// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss | FileCheck %s

// The rules of convolutions, pools and per-channel normalisations. Each loss
// is sum(f(...) * dy), so the cotangent reaching f is %dy.

// A 2-D convolution with strides, pads, dilations and a bias. The input's
// cotangent is the transposed convolution by the same weight and geometry
// (the forward's stride reads the last input row: no output padding); the
// weight's convolves the input, channels as the batch, by dy, samples as the
// channels, the strides and dilations exchanged; the bias's sums dy.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<2x4x4x5xf32> {cleave.name = "dy"}
// CHECK: %[[X:.*]] = cleave.weight "x"
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[DX:.*]] = cleave.conv_transpose %[[DY]], %[[W]] {dilations = array<i64: 1, 2>, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 1>} : (tensor<2x4x4x5xf32>, tensor<4x3x3x2xf32>) -> tensor<2x3x7x6xf32>
// CHECK-NEXT: %[[XT:.*]] = cleave.transpose %[[X]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x3x7x6xf32>) -> tensor<3x2x7x6xf32>
// CHECK-NEXT: %[[GT:.*]] = cleave.transpose %[[DY]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x4x4x5xf32>) -> tensor<4x2x4x5xf32>
// CHECK-NEXT: %[[DWT:.*]] = cleave.conv %[[XT]], %[[GT]] {dilations = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 1, 2>} : (tensor<3x2x7x6xf32>, tensor<4x2x4x5xf32>) -> tensor<3x4x3x2xf32>
// CHECK-NEXT: %[[DW:.*]] = cleave.transpose %[[DWT]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<3x4x3x2xf32>) -> tensor<4x3x3x2xf32>
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum %[[DY]] {axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<2x4x4x5xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DW]], %[[DB]]
func.func @main(%dy: tensor<2x4x4x5xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 1008 : i64} : tensor<2x3x7x6xf32>
  %w = cleave.weight "w" {file = "/m.bin", offset = 1008 : i64, length = 288 : i64} : tensor<4x3x3x2xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 1296 : i64, length = 16 : i64} : tensor<4xf32>
  %y = cleave.conv %x, %w, %b {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 2>} : (tensor<2x3x7x6xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<2x4x4x5xf32>
  %p = cleave.mul %y, %dy : (tensor<2x4x4x5xf32>, tensor<2x4x4x5xf32>) -> tensor<2x4x4x5xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x4x4x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Two groups of two channels, stride 3 over 8 positions: the last two are
// never read, so the input's cotangent gets them back as output padding,
// and the weight's convolution, which finds 5 taps, keeps the first 3. The
// input as the weight's batch is `channels per group x (group, sample)`.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<2x6x2xf32> {cleave.name = "dy"}
// CHECK: %[[X:.*]] = cleave.weight "x"
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[DX:.*]] = cleave.conv_transpose %[[DY]], %[[W]] {dilations = array<i64: 1>, group = 2 : i64, output_padding = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 3>} : (tensor<2x6x2xf32>, tensor<6x2x3xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[XG:.*]] = cleave.reshape %[[X]] : tensor<2x4x8xf32> -> tensor<2x2x2x8xf32>
// CHECK-NEXT: %[[XGT:.*]] = cleave.transpose %[[XG]] {perm = array<i64: 2, 1, 0, 3>}
// CHECK-NEXT: %[[XB:.*]] = cleave.reshape %[[XGT]] : tensor<2x2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[GT:.*]] = cleave.transpose %[[DY]] {perm = array<i64: 1, 0, 2>} : (tensor<2x6x2xf32>) -> tensor<6x2x2xf32>
// CHECK-NEXT: %[[DWT:.*]] = cleave.conv %[[XB]], %[[GT]] {dilations = array<i64: 3>, group = 2 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<2x4x8xf32>, tensor<6x2x2xf32>) -> tensor<2x6x5xf32>
// CHECK-NEXT: %[[TAPS:.*]] = cleave.slice %[[DWT]] {ends = array<i64: 2, 6, 3>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : (tensor<2x6x5xf32>) -> tensor<2x6x3xf32>
// CHECK-NEXT: %[[DW:.*]] = cleave.transpose %[[TAPS]] {perm = array<i64: 1, 0, 2>} : (tensor<2x6x3xf32>) -> tensor<6x2x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DW]]
func.func @main(%dy: tensor<2x6x2xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 256 : i64} : tensor<2x4x8xf32>
  %w = cleave.weight "w" {file = "/m.bin", offset = 256 : i64, length = 144 : i64} : tensor<6x2x3xf32>
  %y = cleave.conv %x, %w {strides = array<i64: 3>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, group = 2 : i64} : (tensor<2x4x8xf32>, tensor<6x2x3xf32>) -> tensor<2x6x2xf32>
  %p = cleave.mul %y, %dy : (tensor<2x6x2xf32>, tensor<2x6x2xf32>) -> tensor<2x6x2xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x6x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Depthwise (a group per channel): the weight's convolution has a batch of
// one, whose channels are (channel, sample) pairs, and as many groups as
// the forward; its pads read the last tap of the last window and no more.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x3x5x5xf32> {cleave.name = "x"}, %[[DY:[a-z0-9]+]]: tensor<2x3x3x3xf32> {cleave.name = "dy"})
// CHECK: %[[XT:.*]] = cleave.transpose %[[X]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x3x5x5xf32>) -> tensor<3x2x5x5xf32>
// CHECK-NEXT: %[[XB:.*]] = cleave.reshape %[[XT]] : tensor<3x2x5x5xf32> -> tensor<1x6x5x5xf32>
// CHECK-NEXT: %[[GT:.*]] = cleave.transpose %[[DY]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x3x3x3xf32>) -> tensor<3x2x3x3xf32>
// CHECK-NEXT: %[[DWT:.*]] = cleave.conv %[[XB]], %[[GT]] {dilations = array<i64: 2, 2>, group = 3 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x6x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT: %[[DW:.*]] = cleave.transpose %[[DWT]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<1x3x3x3xf32>) -> tensor<3x1x3x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]]
func.func @main(%x: tensor<2x3x5x5xf32> {cleave.name = "x"}, %dy: tensor<2x3x3x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 108 : i64} : tensor<3x1x3x3xf32>
  %y = cleave.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<2x3x5x5xf32>, tensor<3x1x3x3xf32>) -> tensor<2x3x3x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x3x3xf32>, tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x3x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// max_pool on planes: the planes padded with -inf (which never wins) and
// cut by one strided slice per tap lay the windows out along the channels,
// tap (i, j) in channel 3 i + j; the taps equal to the maximum share dy
// (ties evenly), and the transposed convolution by the one-hot kernel of
// the taps (channel k has its 1 at tap k) puts each share back where it was
// read.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<1x2x4x4xf32> {cleave.name = "dy"})
// CHECK: %[[X:.*]] = cleave.weight "x"
// CHECK: %[[Y:.*]] = cleave.max_pool %[[X]]
// CHECK: %[[PLANES:.*]] = cleave.reshape %[[X]] : tensor<1x2x7x7xf32> -> tensor<2x1x7x7xf32>
// CHECK-NEXT: %[[PADDED:.*]] = cleave.pad %[[PLANES]] {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0xFFF0000000000000 : f64} : (tensor<2x1x7x7xf32>) -> tensor<2x1x9x9xf32>
// CHECK-NEXT: %[[T0:.*]] = cleave.slice %[[PADDED]] {ends = array<i64: 2, 1, 7, 7>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 2, 2>} : (tensor<2x1x9x9xf32>) -> tensor<2x1x4x4xf32>
// CHECK-NEXT: %[[T1:.*]] = cleave.slice %[[PADDED]] {ends = array<i64: 2, 1, 7, 8>, starts = array<i64: 0, 0, 0, 1>, steps = array<i64: 1, 1, 2, 2>}
// CHECK-COUNT-6: cleave.slice %[[PADDED]]
// CHECK-NEXT: %[[T8:.*]] = cleave.slice %[[PADDED]] {ends = array<i64: 2, 1, 9, 9>, starts = array<i64: 0, 0, 2, 2>, steps = array<i64: 1, 1, 2, 2>}
// CHECK-NEXT: %[[WINDOWS:.*]] = cleave.concat %[[T0]], %[[T1]], {{.*}}, %[[T8]] {axis = 1 : i64} : {{.*}} -> tensor<2x9x4x4xf32>
// CHECK-NEXT: %[[YP:.*]] = cleave.reshape %[[Y]] : tensor<1x2x4x4xf32> -> tensor<2x1x4x4xf32>
// CHECK-NEXT: %[[EQ:.*]] = cleave.equal %[[WINDOWS]], %[[YP]] : (tensor<2x9x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x9x4x4xi1>
// CHECK-NEXT: %[[HITS:.*]] = cleave.cast %[[EQ]] : tensor<2x9x4x4xi1> to tensor<2x9x4x4xf32>
// CHECK-NEXT: %[[TIES:.*]] = cleave.reduce_sum %[[HITS]] {axes = array<i64: 1>} : (tensor<2x9x4x4xf32>) -> tensor<2x1x4x4xf32>
// CHECK-NEXT: %[[GP:.*]] = cleave.reshape %[[DY]] : tensor<1x2x4x4xf32> -> tensor<2x1x4x4xf32>
// CHECK-NEXT: %[[SHARE:.*]] = cleave.div %[[GP]], %[[TIES]]
// CHECK-NEXT: %[[SHARES:.*]] = cleave.mul %[[HITS]], %[[SHARE]] : (tensor<2x9x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x9x4x4xf32>
// CHECK-NEXT: %[[TAPS:.*]] = cleave.constant dense<{{\[\[\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[\[\[}}0.000000e+00, 1.000000e+00, 0.000000e+00]{{.*}}, [0.000000e+00, 0.000000e+00, 1.000000e+00]]]]> : tensor<9x1x3x3xf32>
// CHECK-NEXT: %[[DXP:.*]] = cleave.conv_transpose %[[SHARES]], %[[TAPS]] {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x9x4x4xf32>, tensor<9x1x3x3xf32>) -> tensor<2x1x7x7xf32>
// CHECK-NEXT: %[[DX:.*]] = cleave.reshape %[[DXP]] : tensor<2x1x7x7xf32> -> tensor<1x2x7x7xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]]
func.func @main(%dy: tensor<1x2x4x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 392 : i64} : tensor<1x2x7x7xf32>
  %y = cleave.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>
  %p = cleave.mul %y, %dy : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x4x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// average_pool with ceil_mode, padded taps not counted: the first and the
// last window read 2 taps of the input, the others 3. The transposed
// convolution by a kernel of ones spreads each window's share.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3x4xf32> {cleave.name = "dy"})
// CHECK: %[[DIV:.*]] = cleave.constant dense<{{\[\[\[}}5.000000e-01, 0.333333343, 0.333333343, 5.000000e-01]]]> : tensor<1x1x4xf32>
// CHECK-NEXT: %[[GP:.*]] = cleave.reshape %[[DY]] : tensor<2x3x4xf32> -> tensor<6x1x4xf32>
// CHECK-NEXT: %[[SHARES:.*]] = cleave.mul %[[GP]], %[[DIV]]
// CHECK-NEXT: %[[ONES:.*]] = cleave.constant dense<1.000000e+00> : tensor<1x1x3xf32>
// CHECK-NEXT: %[[DXP:.*]] = cleave.conv_transpose %[[SHARES]], %[[ONES]] {dilations = array<i64: 1>, output_padding = array<i64: 0>, pads = array<i64: 1, 1>, strides = array<i64: 2>} : (tensor<6x1x4xf32>, tensor<1x1x3xf32>) -> tensor<6x1x7xf32>
// CHECK-NEXT: %[[DX:.*]] = cleave.reshape %[[DXP]] : tensor<6x1x7xf32> -> tensor<2x3x7xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]]
func.func @main(%dy: tensor<2x3x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 168 : i64} : tensor<2x3x7xf32>
  %y = cleave.average_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>, dilations = array<i64: 1>, ceil_mode = true} : (tensor<2x3x7xf32>) -> tensor<2x3x4xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// With count_include_pad the taps inside the declared pads count, but not
// those of the ceil_mode window past the end pad (the last window counts
// 2); the transposed convolution's end pad drops that window's overrun.

// CHECK-LABEL: func.func @main
// CHECK: cleave.constant dense<{{\[\[\[}}0.333333343, 0.333333343, 0.333333343, 5.000000e-01]]]> : tensor<1x1x4xf32>
// CHECK: cleave.conv_transpose {{.*}} {dilations = array<i64: 1>, output_padding = array<i64: 0>, pads = array<i64: 1, 2>, strides = array<i64: 2>} : (tensor<1x1x4xf32>, tensor<1x1x3xf32>) -> tensor<1x1x6xf32>
func.func @main(%dy: tensor<1x1x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<1x1x6xf32>
  %y = cleave.average_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>, dilations = array<i64: 1>, ceil_mode = true, count_include_pad = true} : (tensor<1x1x6xf32>) -> tensor<1x1x4xf32>
  %p = cleave.mul %y, %dy : (tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<1x1x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The global pools: the mean spreads dy / 20 over the 4x5 positions; the
// max gives it to the positions equal to the maximum, shared among ties.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3x1x1xf32> {cleave.name = "dy"})
// CHECK: %[[X:.*]] = cleave.weight "x"
// CHECK: %[[MAX:.*]] = cleave.global_max_pool %[[X]]
// CHECK: %[[EQ:.*]] = cleave.equal %[[X]], %[[MAX]] : (tensor<2x3x4x5xf32>, tensor<2x3x1x1xf32>) -> tensor<2x3x4x5xi1>
// CHECK-NEXT: %[[HITS:.*]] = cleave.cast %[[EQ]]
// CHECK-NEXT: %[[TIES:.*]] = cleave.reduce_sum %[[HITS]] {axes = array<i64: 2, 3>} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
// CHECK-NEXT: %[[SHARE:.*]] = cleave.div %[[DY]], %[[TIES]]
// CHECK-NEXT: %[[DMAX:.*]] = cleave.mul %[[HITS]], %[[SHARE]] : (tensor<2x3x4x5xf32>, tensor<2x3x1x1xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NEXT: %[[SCALE:.*]] = cleave.constant dense<5.000000e-02> : tensor<f32>
// CHECK-NEXT: %[[MEAN:.*]] = cleave.mul %[[DY]], %[[SCALE]]
// CHECK-NEXT: %[[DMEAN:.*]] = cleave.expand %[[MEAN]] : tensor<2x3x1x1xf32> -> tensor<2x3x4x5xf32>
// CHECK-NEXT: %[[DX:.*]] = cleave.add %[[DMAX]], %[[DMEAN]]
// CHECK-NEXT: return %{{.*}}, %[[DX]]
func.func @main(%dy: tensor<2x3x1x1xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 480 : i64} : tensor<2x3x4x5xf32>
  %a = cleave.global_average_pool %x : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  %m = cleave.global_max_pool %x : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  %s = cleave.add %a, %m : (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %p = cleave.mul %s, %dy : (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x1x1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// group_norm of 3 groups of 2 channels: normalised in the grouped view
// 2x3x10, scale and bias summed per channel, and the input's cotangent
// r (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) in the grouped view.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x6x5xf32> {cleave.name = "dy"})
// CHECK: %[[X:.*]] = cleave.weight "x"
// CHECK: %[[S:.*]] = cleave.weight "s"
// CHECK: %[[XG:.*]] = cleave.reshape %[[X]] : tensor<2x6x5xf32> -> tensor<2x3x10xf32>
// CHECK-NEXT: %[[MEAN:.*]] = cleave.reduce_mean %[[XG]] {axes = array<i64: 2>} : (tensor<2x3x10xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[C:.*]] = cleave.sub %[[XG]], %[[MEAN]]
// CHECK-NEXT: %[[C2:.*]] = cleave.mul %[[C]], %[[C]]
// CHECK-NEXT: %[[VAR:.*]] = cleave.reduce_mean %[[C2]] {axes = array<i64: 2>}
// CHECK-NEXT: %[[EPS:.*]] = cleave.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-NEXT: %[[VE:.*]] = cleave.add %[[VAR]], %[[EPS]]
// CHECK-NEXT: %[[DEV:.*]] = cleave.sqrt %[[VE]]
// CHECK-NEXT: %[[R:.*]] = cleave.reciprocal %[[DEV]]
// CHECK-NEXT: %[[XHAT:.*]] = cleave.mul %[[C]], %[[R]] : (tensor<2x3x10xf32>, tensor<2x3x1xf32>) -> tensor<2x3x10xf32>
// CHECK-NEXT: %[[XHATC:.*]] = cleave.reshape %[[XHAT]] : tensor<2x3x10xf32> -> tensor<2x6x5xf32>
// CHECK-NEXT: %[[GX:.*]] = cleave.mul %[[DY]], %[[XHATC]]
// CHECK-NEXT: %[[DS:.*]] = cleave.reduce_sum %[[GX]] {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x6x5xf32>) -> tensor<6xf32>
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum %[[DY]] {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x6x5xf32>) -> tensor<6xf32>
// CHECK-NEXT: %[[SC:.*]] = cleave.reshape %[[S]] : tensor<6xf32> -> tensor<6x1xf32>
// CHECK-NEXT: %[[DXHATC:.*]] = cleave.mul %[[DY]], %[[SC]]
// CHECK-NEXT: %[[DXHAT:.*]] = cleave.reshape %[[DXHATC]] : tensor<2x6x5xf32> -> tensor<2x3x10xf32>
// CHECK-NEXT: %[[MG:.*]] = cleave.reduce_mean %[[DXHAT]] {axes = array<i64: 2>}
// CHECK-NEXT: %[[P:.*]] = cleave.mul %[[DXHAT]], %[[XHAT]]
// CHECK-NEXT: %[[MP:.*]] = cleave.reduce_mean %[[P]] {axes = array<i64: 2>}
// CHECK-NEXT: %[[PROJ:.*]] = cleave.mul %[[XHAT]], %[[MP]]
// CHECK-NEXT: %[[D1:.*]] = cleave.sub %[[DXHAT]], %[[MG]]
// CHECK-NEXT: %[[D2:.*]] = cleave.sub %[[D1]], %[[PROJ]]
// CHECK-NEXT: %[[DXG:.*]] = cleave.mul %[[R]], %[[D2]]
// CHECK-NEXT: %[[DX:.*]] = cleave.reshape %[[DXG]] : tensor<2x3x10xf32> -> tensor<2x6x5xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DS]], %[[DB]]
func.func @main(%dy: tensor<2x6x5xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 240 : i64} : tensor<2x6x5xf32>
  %s = cleave.weight "s" {file = "/m.bin", offset = 240 : i64, length = 24 : i64} : tensor<6xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 264 : i64, length = 24 : i64} : tensor<6xf32>
  %y = cleave.group_norm %x, %s, %b {num_groups = 3 : i64} : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  %p = cleave.mul %y, %dy : (tensor<2x6x5xf32>, tensor<2x6x5xf32>) -> tensor<2x6x5xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x6x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// instance_norm is group_norm with a group per channel.

// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = cleave.weight "x"
// CHECK: cleave.reduce_mean %[[X]] {axes = array<i64: 2>} : (tensor<2x3x6xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[DX:.*]] = cleave.mul %{{.*}}, %{{.*}} : (tensor<2x3x1xf32>, tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]]
func.func @main(%dy: tensor<2x3x6xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 144 : i64} : tensor<2x3x6xf32>
  %s = cleave.constant dense<2.0> : tensor<3xf32>
  %y = cleave.instance_norm %x, %s, %s : (tensor<2x3x6xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x6xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x6xf32>, tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
