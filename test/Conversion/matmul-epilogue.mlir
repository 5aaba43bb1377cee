// RUN: cleave-translate --print-device-program --fuse-kernel-epilogues --split-input-file %s | FileCheck %s
// RUN: cleave-translate --print-device-program --split-input-file %s | FileCheck %s --check-prefix=OFF
// The text form reads back to the same program (printed identically).
// RUN: cleave-translate --print-device-program --fuse-kernel-epilogues --split-input-file --output-split-marker="// =====" %s -o %t.txt
// RUN: cleave-translate --parse-device-program --split-input-file="// =====" --output-split-marker="// =====" %t.txt | diff %t.txt -

// A float32 matrix product applies what follows it as a convolution does
// (conv-epilogue.mlir): an add of one value per column (its third input,
// the bias), an add of a tensor of its result's shape (its fourth, R),
// and then a ReLU, clip, SiLU or GELU (its int, the CleaveEpilogue: 4
// GELU, 5 GELU's tanh form; its floats, the clamp's bounds). A
// transformer's feed-forward layer is two such steps.

// CHECK-LABEL: program: 1 entries
// CHECK: entry forward phase forward: 2 steps
// CHECK-NEXT: step 0 kernel matmul (t0, t1, t2, none) -> (t[[H:[0-9]+]]) ints [4] floats [0, 0]  // matmul + bias + gelu "up"
// CHECK-NEXT: step 1 kernel matmul (t[[H]], t3, t4, t0) -> (t{{[0-9]+}}) ints [0] floats [0, 0]  // matmul + bias + add "down"
// CHECK-NOT: step
// OFF-LABEL: program: 1 entries
// OFF: step 0 kernel matmul (t0, t1, none, none) -> (t[[U:[0-9]+]]) ints [0] floats [0, 0]  // matmul "up"
// OFF-NEXT: step 1 loop t[[H:[0-9]+]] = gelu_erf(add(t[[U]], t2))  // add + gelu "gelu"
// OFF-NEXT: step 2 kernel matmul (t[[H]], t3, none, none) -> (t[[D:[0-9]+]])
// OFF-NEXT: step 3 loop t{{[0-9]+}} = add(add(t4, t[[D]]), t0)
func.func @feed_forward(%x: tensor<2x8x16xf32>, %w1: tensor<16x64xf32>, %b1: tensor<64xf32>, %w2: tensor<64x16xf32>, %b2: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %u = cleave.matmul %x, %w1 : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32> loc("up")
  %ub = cleave.add %u, %b1 : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32> loc("bias1")
  %h = cleave.gelu %ub : tensor<2x8x64xf32> loc("gelu")
  %d = cleave.matmul %h, %w2 : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32> loc("down")
  %db = cleave.add %b2, %d : (tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32> loc("bias2")
  %y = cleave.add %db, %x : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32> loc("residual")
  return %y : tensor<2x8x16xf32>
}

// -----

// The tanh form of GELU, a SiLU written as x * sigmoid(x), a clip, and a
// ReLU straight after a product with no bias; a bias of shape 1 x N.
// CHECK-LABEL: program: 1 entries
// CHECK: step 0 kernel matmul (t0, t1, t2, none) -> (t{{[0-9]+}}) ints [5] floats [0, 0]  // matmul + bias + gelu "tanh"
// CHECK: step 1 kernel matmul (t0, t1, none, none) -> (t{{[0-9]+}}) ints [3] floats [0, 0]  // matmul + silu "silu"
// CHECK: step 2 kernel matmul (t0, t1, none, none) -> (t{{[0-9]+}}) ints [2] floats [-1, 1]  // matmul + clip "clip"
// CHECK: step 3 kernel matmul (t0, t1, none, none) -> (t{{[0-9]+}}) ints [1] floats [0, 0]  // matmul + relu "relu"
// CHECK-NOT: step
func.func @activations(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<1x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>) {
  %a = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("tanh")
  %ab = cleave.add %a, %b : (tensor<4x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32> loc("bias")
  %ag = cleave.gelu %ab {approximate = "tanh"} : tensor<4x32xf32> loc("gelu")
  %s = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("silu")
  %sg = cleave.sigmoid %s : tensor<4x32xf32> loc("sigmoid")
  %sm = cleave.mul %s, %sg : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32> loc("mul")
  %c = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("clip")
  %cc = cleave.clip %c {min = -1.000000e+00 : f64, max = 1.000000e+00 : f64} : tensor<4x32xf32> loc("clamp")
  %r = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("relu")
  %rr = cleave.relu %r : tensor<4x32xf32> loc("r")
  return %ag, %sm, %cc, %rr : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Left to loops: an add that broadcasts along another dimension than the
// last (a bias per row) or raises the result's rank, a product whose result
// is read twice, a product with a 1-D operand (Y's last dimension is not
// B's columns), and float64 products.
// CHECK-LABEL: program: 1 entries
// CHECK: step 0 kernel matmul (t0, t1, none, none) -> (t[[R:[0-9]+]]) ints [0] floats [0, 0]  // matmul "rows"
// CHECK-NEXT: step 1 loop {{.*}}add(t[[R]], t2)
// CHECK: kernel matmul (t0, t1, none, none) -> (t[[U:[0-9]+]]) ints [0] floats [0, 0]  // matmul "rank"
// CHECK-NEXT: loop {{.*}}add(t[[U]], t6)
// CHECK: kernel matmul (t0, t1, none, none) -> (t{{[0-9]+}}) ints [0] floats [0, 0]  // matmul "twice"
// CHECK: kernel matmul (t3, t1, none, none) -> (t{{[0-9]+}}) ints [0] floats [0, 0]  // matmul "vector"
// CHECK: kernel matmul (t4, t5, none, none) -> (t{{[0-9]+}}) ints [0] floats [0, 0]  // matmul "f64"
func.func @kept(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %rows: tensor<4x1xf32>, %v: tensor<16xf32>, %x64: tensor<4x16xf64>, %w64: tensor<16x32xf64>, %b3: tensor<1x1x32xf32>) -> (tensor<4x32xf32>, tensor<1x4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf64>) {
  %a = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("rows")
  %ab = cleave.add %a, %rows : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32> loc("row_bias")
  %u = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("rank")
  %ub = cleave.add %u, %b3 : (tensor<4x32xf32>, tensor<1x1x32xf32>) -> tensor<1x4x32xf32> loc("rank_bias")
  %t = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("twice")
  %tr = cleave.relu %t : tensor<4x32xf32> loc("t_relu")
  %v1 = cleave.matmul %v, %w : (tensor<16xf32>, tensor<16x32xf32>) -> tensor<32xf32> loc("vector")
  %vr = cleave.relu %v1 : tensor<32xf32> loc("v_relu")
  %d = cleave.matmul %x64, %w64 : (tensor<4x16xf64>, tensor<16x32xf64>) -> tensor<4x32xf64> loc("f64")
  %dr = cleave.relu %d : tensor<4x32xf64> loc("d_relu")
  return %ab, %ub, %t, %tr, %vr, %dr : tensor<4x32xf32>, tensor<1x4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf64>
}

// -----

// A training step's products keep the ops after them as loops: a loop
// rounds the same wherever a partitioning of the step puts it, which the
// bitwise agreement of replicas, pipeline stages and schedules rests on.
// CHECK-LABEL: program: 3 entries
// CHECK: step 0 kernel matmul (t0, t1, none, none) -> (t[[M:[0-9]+]]) ints [0] floats [0, 0]  // matmul "product"
// CHECK-NEXT: step 1 loop t{{[0-9]+}} = relu(add(t[[M]], t2))  // add + relu "relu"
// CHECK-NEXT: step 2 kernel gemm (t{{[0-9]+}}, t3, none, none) -> (t[[G:[0-9]+]]) ints [0, 0, 0] floats [1, 1, 0, 0]  // gemm "next"
// CHECK-NEXT: step 3 loop {{.*}}relu(t[[G]])
func.func @training_step(%x: tensor<4x16xf32> {cleave.name = "x"}, %w: tensor<16x32xf32>, %b: tensor<32xf32>, %v: tensor<32x8xf32>) -> (tensor<f32> {cleave.name = "loss"}) {
  %m = cleave.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("product")
  %a = cleave.add %m, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32> loc("bias")
  %r = cleave.relu %a : tensor<4x32xf32> loc("relu")
  %n = cleave.gemm %r, %v : (tensor<4x32xf32>, tensor<32x8xf32>) -> tensor<4x8xf32> loc("next")
  %nr = cleave.relu %n : tensor<4x8xf32> loc("relu2")
  %l = cleave.reduce_sum %nr {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32> loc("sum")
  %ls = cleave.state "loss.sum:loss" : tensor<f32>
  %la = cleave.accumulate %l, %ls {loss} : tensor<f32>
  %two = cleave.constant dense<2.0> : tensor<f32>
  %mean = cleave.div %la, %two : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c = cleave.clear %la : tensor<f32>
  return %mean : tensor<f32>
}

// -----

// An ONNX Gemm (torch's Linear on a 2-D input) adds its C itself and takes
// the residual add (its fourth input, R) and the activation after it (its
// third int; its third and fourth floats, the clamp's bounds). An add of a
// bias after a Gemm is no residual: it broadcasts, and stays a loop.
// CHECK-LABEL: program: 1 entries
// CHECK: step 0 kernel gemm (t0, t1, t2, none) -> (t[[H:[0-9]+]]) ints [0, 1, 1] floats [1, 1, 0, 0]  // gemm + relu "fc1"
// CHECK-NEXT: step 1 kernel gemm (t[[H]], t3, t4, t0) -> (t[[Y:[0-9]+]]) ints [0, 1, 2] floats [1, 1, -1, 1]  // gemm + add + clip "fc2"
// CHECK-NEXT: step 2 kernel gemm (t[[Y]], t3, none, none) -> (t[[Z:[0-9]+]]) ints [0, 1, 0] floats [1, 1, 0, 0]  // gemm "fc3"
// CHECK-NEXT: step 3 loop t{{[0-9]+}} = add(t[[Z]], t4)
// CHECK-NOT: step
// OFF-LABEL: program: 1 entries
// OFF: step 0 kernel gemm (t0, t1, t2, none) -> (t[[G:[0-9]+]]) ints [0, 1, 0] floats [1, 1, 0, 0]  // gemm "fc1"
// OFF-NEXT: step 1 loop t{{[0-9]+}} = relu(t[[G]])
// OFF-NEXT: step 2 kernel gemm (t{{[0-9]+}}, t3, t4, none) -> (t[[D:[0-9]+]]) ints [0, 1, 0] floats [1, 1, 0, 0]  // gemm "fc2"
// OFF-NEXT: step 3 loop t{{[0-9]+}} = min(max(add(t[[D]], t0), -1), 1)
func.func @linear(%x: tensor<4x16xf32>, %w1: tensor<16x16xf32>, %b1: tensor<16xf32>, %w2: tensor<16x16xf32>, %b2: tensor<16xf32>) -> tensor<4x16xf32> {
  %g = cleave.gemm %x, %w1, %b1 {trans_b = true} : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("fc1")
  %h = cleave.relu %g : tensor<4x16xf32> loc("relu")
  %d = cleave.gemm %h, %w2, %b2 {trans_b = true} : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("fc2")
  %r = cleave.add %d, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> loc("residual")
  %y = cleave.clip %r {max = 1.0 : f64, min = -1.0 : f64} : tensor<4x16xf32> loc("clip")
  %z = cleave.gemm %y, %w2 {trans_b = true} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> loc("fc3")
  %zb = cleave.add %z, %b2 : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("bias")
  return %zb : tensor<4x16xf32>
}
