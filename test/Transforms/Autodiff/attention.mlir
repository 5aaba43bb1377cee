// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss | FileCheck %s

// The rules of the fused transformer ops. Each loss is sum(f(...) * dy), so
// the cotangent reaching f is %dy.

// rms_norm recomputes r = 1 / sqrt(mean(x^2) + eps); the scale's cotangent
// sums dy x r over the leading dimensions; dx = r (dxhat - xhat
// mean(dxhat xhat)) with dxhat = dy scale.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3x4xf32> {cleave.name = "dy"})
// CHECK: %[[X:.*]] = cleave.weight "x"
// CHECK: %[[G:.*]] = cleave.weight "g"
// CHECK: %[[X2:.*]] = cleave.mul %[[X]], %[[X]]
// CHECK-NEXT: %[[MS:.*]] = cleave.reduce_mean %[[X2]] {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[EPS:.*]] = cleave.constant dense<9.99999997E-7> : tensor<f32>
// CHECK-NEXT: %[[ME:.*]] = cleave.add %[[MS]], %[[EPS]]
// CHECK-NEXT: %[[SD:.*]] = cleave.sqrt %[[ME]]
// CHECK-NEXT: %[[R:.*]] = cleave.reciprocal %[[SD]]
// CHECK-NEXT: %[[XHAT:.*]] = cleave.mul %[[X]], %[[R]]
// CHECK-NEXT: %[[GX:.*]] = cleave.mul %[[DY]], %[[XHAT]]
// CHECK-NEXT: %[[DG:.*]] = cleave.reduce_sum %[[GX]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[DXHAT:.*]] = cleave.mul %[[DY]], %[[G]]
// CHECK-NEXT: %[[P:.*]] = cleave.mul %[[DXHAT]], %[[XHAT]]
// CHECK-NEXT: %[[MP:.*]] = cleave.reduce_mean %[[P]] {axes = array<i64: 2>}
// CHECK-NEXT: %[[PROJ:.*]] = cleave.mul %[[XHAT]], %[[MP]]
// CHECK-NEXT: %[[D:.*]] = cleave.sub %[[DXHAT]], %[[PROJ]]
// CHECK-NEXT: %[[DX:.*]] = cleave.mul %[[R]], %[[D]]
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DG]]
func.func @main(%dy: tensor<2x3x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 96 : i64} : tensor<2x3x4xf32>
  %g = cleave.weight "g" {file = "/m.bin", offset = 96 : i64, length = 16 : i64} : tensor<4xf32>
  %y = cleave.rms_norm %x, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// rotary_embedding: the input's cotangent is the cotangent rotated back,
// the same op (same position ids and attributes) with -sin.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[COS:[a-z0-9]+]]: tensor<8x2xf32> {cleave.name = "cos"}, %[[SIN:[a-z0-9]+]]: tensor<8x2xf32> {cleave.name = "sin"}, %[[POS:[a-z0-9]+]]: tensor<2x3xi64> {cleave.name = "pos"}, %[[DY:[a-z0-9]+]]: tensor<2x3x12xf32> {cleave.name = "dy"})
// CHECK: cleave.rotary_embedding
// CHECK: %[[NSIN:.*]] = cleave.neg %[[SIN]] : tensor<8x2xf32>
// CHECK-NEXT: %[[DX:.*]] = cleave.rotary_embedding %[[DY]], %[[COS]], %[[NSIN]], %[[POS]] {interleaved = true, num_heads = 2 : i64, rotary_embedding_dim = 4 : i64} : (tensor<2x3x12xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x3xi64>) -> tensor<2x3x12xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]]
func.func @main(%cos: tensor<8x2xf32> {cleave.name = "cos"}, %sin: tensor<8x2xf32> {cleave.name = "sin"}, %pos: tensor<2x3xi64> {cleave.name = "pos"}, %dy: tensor<2x3x12xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %x = cleave.weight "x" {file = "/m.bin", offset = 0 : i64, length = 288 : i64} : tensor<2x3x12xf32>
  %y = cleave.rotary_embedding %x, %cos, %sin, %pos {interleaved = true, num_heads = 2 : i64, rotary_embedding_dim = 4 : i64} : (tensor<2x3x12xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x3xi64>) -> tensor<2x3x12xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x12xf32>, tensor<2x3x12xf32>) -> tensor<2x3x12xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x12xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A trained cos cache: dcos = dy1 x1 + dy2 x2 over the halves of each
// head, summed over the heads (one cache row per token).

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<1x2x3x4xf32> {cleave.name = "x"}, %[[DY:[a-z0-9]+]]: tensor<1x2x3x4xf32> {cleave.name = "dy"})
// CHECK: %[[XS:.*]] = cleave.transpose %[[X]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x2x4xf32>
// CHECK-NEXT: %[[DYS:.*]] = cleave.transpose %[[DY]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT: %[[X1:.*]] = cleave.slice %[[XS]] {ends = array<i64: 1, 3, 2, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT: %[[X2:.*]] = cleave.slice %[[XS]] {ends = array<i64: 1, 3, 2, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT: %[[DY1:.*]] = cleave.slice %[[DYS]] {ends = array<i64: 1, 3, 2, 2>, starts = array<i64: 0, 0, 0, 0>
// CHECK-NEXT: %[[DY2:.*]] = cleave.slice %[[DYS]] {ends = array<i64: 1, 3, 2, 4>, starts = array<i64: 0, 0, 0, 2>
// CHECK-DAG: %[[P2:.*]] = cleave.mul %[[DY2]], %[[X2]]
// CHECK-DAG: %[[P1:.*]] = cleave.mul %[[DY1]], %[[X1]]
// CHECK: %[[S:.*]] = cleave.add %[[P1]], %[[P2]]
// CHECK-NEXT: %[[DCOS:.*]] = cleave.reduce_sum %[[S]] {axes = array<i64: 2>, keepdims = false} : (tensor<1x3x2x2xf32>) -> tensor<1x3x2xf32>
// CHECK-NEXT: return %{{.*}}, %[[DCOS]]
func.func @main(%x: tensor<1x2x3x4xf32> {cleave.name = "x"}, %dy: tensor<1x2x3x4xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %cos = cleave.weight "cos" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<1x3x2xf32>
  %sin = cleave.constant dense<0.5> : tensor<1x3x2xf32>
  %y = cleave.rotary_embedding %x, %cos, %sin : (tensor<1x2x3x4xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x2x3x4xf32>
  %p = cleave.mul %y, %dy : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Grouped-query attention (4 query heads, 2 key/value heads) with a causal
// mask and a softcap: the key/value heads are repeated for their groups,
// the probabilities recomputed, and each key/value head's cotangent sums
// its group's.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x4x3x8xf32> {cleave.name = "q"}, %[[DY:[a-z0-9]+]]: tensor<1x4x3x6xf32> {cleave.name = "dy"})
// CHECK: %[[K:.*]] = cleave.weight "k"
// CHECK: %[[KG:.*]] = cleave.reshape %[[K]] : tensor<1x2x5x8xf32> -> tensor<1x2x1x5x8xf32>
// CHECK-NEXT: %[[KE:.*]] = cleave.expand %[[KG]] : tensor<1x2x1x5x8xf32> -> tensor<1x2x2x5x8xf32>
// CHECK-NEXT: %[[KR:.*]] = cleave.reshape %[[KE]] : tensor<1x2x2x5x8xf32> -> tensor<1x4x5x8xf32>
// CHECK: %[[VR:.*]] = cleave.reshape %{{.*}} : tensor<1x2x2x5x6xf32> -> tensor<1x4x5x6xf32>
// CHECK-NEXT: %[[KT:.*]] = cleave.transpose %[[KR]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: %[[QK:.*]] = cleave.matmul %[[Q]], %[[KT]] : (tensor<1x4x3x8xf32>, tensor<1x4x8x5xf32>) -> tensor<1x4x3x5xf32>
// CHECK-NEXT: %[[SCALE:.*]] = cleave.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[S:.*]] = cleave.mul %[[QK]], %[[SCALE]]
// CHECK-NEXT: %[[INV:.*]] = cleave.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[SC:.*]] = cleave.mul %[[S]], %[[INV]]
// CHECK-NEXT: %[[TH:.*]] = cleave.tanh %[[SC]]
// CHECK-NEXT: %[[CAP:.*]] = cleave.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[T:.*]] = cleave.mul %[[TH]], %[[CAP]]
// CHECK-NEXT: %[[NEGINF:.*]] = cleave.constant dense<0xFF800000> : tensor<f32>
// CHECK-NEXT: %[[CAUSAL:.*]] = cleave.constant dense<{{\[}}[true, false, false, false, false], [true, true, false, false, false], [true, true, true, false, false]]> : tensor<3x5xi1>
// CHECK-NEXT: %[[MASKED:.*]] = cleave.where %[[CAUSAL]], %[[T]], %[[NEGINF]]
// CHECK-NEXT: %[[P:.*]] = cleave.softmax %[[MASKED]] {axis = 3 : i64} : tensor<1x4x3x5xf32>
// CHECK-NEXT: %[[PT:.*]] = cleave.transpose %[[P]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: %[[DVQ:.*]] = cleave.matmul %[[PT]], %[[DY]] : (tensor<1x4x5x3xf32>, tensor<1x4x3x6xf32>) -> tensor<1x4x5x6xf32>
// CHECK-NEXT: %[[DVG:.*]] = cleave.reshape %[[DVQ]] : tensor<1x4x5x6xf32> -> tensor<1x2x2x5x6xf32>
// CHECK-NEXT: %[[DV:.*]] = cleave.reduce_sum %[[DVG]] {axes = array<i64: 2>, keepdims = false} : (tensor<1x2x2x5x6xf32>) -> tensor<1x2x5x6xf32>
// CHECK-NEXT: %[[VT:.*]] = cleave.transpose %[[VR]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: %[[DP:.*]] = cleave.matmul %[[DY]], %[[VT]]
// CHECK-NEXT: %[[DPP:.*]] = cleave.mul %[[DP]], %[[P]]
// CHECK-NEXT: %[[ROW:.*]] = cleave.reduce_sum %[[DPP]] {axes = array<i64: 3>} : (tensor<1x4x3x5xf32>) -> tensor<1x4x3x1xf32>
// CHECK-NEXT: %[[CENTRED:.*]] = cleave.sub %[[DP]], %[[ROW]]
// CHECK-NEXT: %[[DT:.*]] = cleave.mul %[[P]], %[[CENTRED]]
// CHECK-NEXT: %[[TH2:.*]] = cleave.mul %[[TH]], %[[TH]]
// CHECK-NEXT: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[SLOPE:.*]] = cleave.sub %[[ONE]], %[[TH2]]
// CHECK-NEXT: %[[DS:.*]] = cleave.mul %[[DT]], %[[SLOPE]]
// CHECK-NEXT: %[[DST:.*]] = cleave.transpose %[[DS]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: %[[DKQ:.*]] = cleave.matmul %[[DST]], %[[Q]] : (tensor<1x4x5x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x5x8xf32>
// CHECK-NEXT: %[[SCALE2:.*]] = cleave.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[DKS:.*]] = cleave.mul %[[DKQ]], %[[SCALE2]]
// CHECK-NEXT: %[[DKG:.*]] = cleave.reshape %[[DKS]] : tensor<1x4x5x8xf32> -> tensor<1x2x2x5x8xf32>
// CHECK-NEXT: %[[DK:.*]] = cleave.reduce_sum %[[DKG]] {axes = array<i64: 2>, keepdims = false} : (tensor<1x2x2x5x8xf32>) -> tensor<1x2x5x8xf32>
// CHECK-NEXT: return %{{.*}}, %[[DK]], %[[DV]]
func.func @main(%q: tensor<1x4x3x8xf32> {cleave.name = "q"}, %dy: tensor<1x4x3x6xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %k = cleave.weight "k" {file = "/m.bin", offset = 0 : i64, length = 320 : i64} : tensor<1x2x5x8xf32>
  %v = cleave.weight "v" {file = "/m.bin", offset = 320 : i64, length = 240 : i64} : tensor<1x2x5x6xf32>
  %y = cleave.attention %q, %k, %v {is_causal, kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 0.5 : f32, softcap = 2.0 : f32} : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x6xf32>) -> tensor<1x4x3x6xf32>
  %p = cleave.mul %y, %dy : (tensor<1x4x3x6xf32>, tensor<1x4x3x6xf32>) -> tensor<1x4x3x6xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x4x3x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Rank 3 with a boolean mask: the heads are split out in front of the
// sequence, masked scores get -inf, and the query's cotangent is merged
// back into its layout.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[K:[a-z0-9]+]]: tensor<2x5x8xf32> {cleave.name = "k"}, %[[MASK:[a-z0-9]+]]: tensor<3x5xi1> {cleave.name = "mask"}, %[[DY:[a-z0-9]+]]: tensor<2x3x16xf32> {cleave.name = "dy"})
// CHECK: %[[QS:.*]] = cleave.reshape %{{.*}} : tensor<2x3x16xf32> -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[QH:.*]] = cleave.transpose %[[QS]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x4x4xf32>) -> tensor<2x4x3x4xf32>
// CHECK-NEXT: %[[KS:.*]] = cleave.reshape %[[K]] : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
// CHECK-NEXT: %[[KH:.*]] = cleave.transpose %[[KS]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x5x2x4xf32>) -> tensor<2x2x5x4xf32>
// CHECK: %[[KR:.*]] = cleave.reshape %{{.*}} : tensor<2x2x2x5x4xf32> -> tensor<2x4x5x4xf32>
// CHECK: %[[NEGINF:.*]] = cleave.constant dense<0xFF800000> : tensor<f32>
// CHECK-NEXT: %[[MASKED:.*]] = cleave.where %[[MASK]], %{{.*}}, %[[NEGINF]] : (tensor<3x5xi1>, tensor<2x4x3x5xf32>, tensor<f32>) -> tensor<2x4x3x5xf32>
// CHECK-NEXT: %[[P:.*]] = cleave.softmax %[[MASKED]] {axis = 3 : i64}
// CHECK: %[[DT:.*]] = cleave.mul %[[P]], %{{.*}}
// CHECK-NEXT: %[[DQH:.*]] = cleave.matmul %[[DT]], %[[KR]] : (tensor<2x4x3x5xf32>, tensor<2x4x5x4xf32>) -> tensor<2x4x3x4xf32>
// CHECK-NEXT: %[[SCALE:.*]] = cleave.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[DQS:.*]] = cleave.mul %[[DQH]], %[[SCALE]]
// CHECK-NEXT: %[[DQT:.*]] = cleave.transpose %[[DQS]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x3x4xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[DQ:.*]] = cleave.reshape %[[DQT]] : tensor<2x3x4x4xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT: return %{{.*}}, %[[DQ]]
func.func @main(%k: tensor<2x5x8xf32> {cleave.name = "k"}, %mask: tensor<3x5xi1> {cleave.name = "mask"}, %dy: tensor<2x3x16xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %q = cleave.weight "q" {file = "/m.bin", offset = 0 : i64, length = 384 : i64} : tensor<2x3x16xf32>
  %y = cleave.attention %q, %k, %k, %mask {kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 0.5 : f32} : (tensor<2x3x16xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<3x5xi1>) -> tensor<2x3x16xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x16xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
