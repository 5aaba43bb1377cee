// RUN: cleave-translate --print-device-program --fuse-kernel-epilogues --split-input-file %s | FileCheck %s
// RUN: cleave-translate --print-device-program --split-input-file %s | FileCheck %s --check-prefix=OFF
// The text form reads back to the same program (printed identically).
// RUN: cleave-translate --print-device-program --fuse-kernel-epilogues --split-input-file --output-split-marker="// =====" %s -o %t.txt
// RUN: cleave-translate --parse-device-program --split-input-file="// =====" --output-split-marker="// =====" %t.txt | diff %t.txt -

// A convolution whose result's only use is a ReLU or a clip with both
// bounds applies it in its kernel (the conv signature's int before the
// two layouts is the CleaveEpilogue: 1 ReLU, 2 clip, 3 SiLU, 4 GELU, 5
// GELU's tanh form; its floats
// the clamp's bounds), and so does one whose only use is a residual add (its
// fourth input, R): one
// step writes the activation's result, and the convolution's own result
// is never stored. CPU programs do it (cleave compile, unless --no-fuse);
// without --fuse-kernel-epilogues the activation is a loop of its own.

// CHECK-LABEL: program: 1 entries, arena 0 bytes
// CHECK: entry forward phase forward: 1 steps
// CHECK-NEXT: step 0 kernel conv (t0, t1, t2, none) -> (t3) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0] floats [0, 6]  // conv + clip "conv"
// CHECK-NOT: step
// OFF-LABEL: program: 1 entries
// OFF: step 0 kernel conv (t0, t1, t2, none) -> (t[[C:[0-9]+]]) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0] floats [0, 0]  // conv "conv"
// OFF-NEXT: step 1 loop t{{[0-9]+}} = min(max(t[[C]], 0), 6)  // clip "clip"
func.func @clip(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x6x6xf32> {
  %c = cleave.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32> loc("conv")
  %y = cleave.clip %c {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : tensor<1x8x6x6xf32> loc("clip")
  return %y : tensor<1x8x6x6xf32>
}

// -----

// A ReLU that a later loop would have computed inside its own (relu, then
// a residual add) is applied by the convolution instead, and the add's
// loop reads the stored result.
// CHECK-LABEL: program: 1 entries
// CHECK: entry forward phase forward: 2 steps
// CHECK-NEXT: step 0 kernel conv (t0, t1, none, none) -> (t[[R:[0-9]+]]) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0] floats [0, 0]  // conv + relu "conv"
// CHECK-NEXT: step 1 loop t{{[0-9]+}} = add(t[[R]], t0)  // add "add"
// OFF-LABEL: program: 1 entries
// OFF: step 1 loop t{{[0-9]+}} = add(relu(t{{[0-9]+}}), t0)  // relu + add "add"
func.func @relu_then_add(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv")
  %r = cleave.relu %c : tensor<1x4x6x6xf32> loc("relu")
  %y = cleave.add %r, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("add")
  return %y : tensor<1x4x6x6xf32>
}

// -----

// No epilogue where the convolution's result is read elsewhere too, where
// the clip lacks a bound, or where the activation is not a ReLU or clip.
// CHECK-LABEL: program: 1 entries
// CHECK: step 0 kernel conv {{.*}} ints [{{.*}}, 0, 0, 0] floats [0, 0]  // conv "twice"
// CHECK: step 2 kernel conv {{.*}} ints [{{.*}}, 0, 0, 0] floats [0, 0]  // conv "one_bound"
// CHECK: step 4 kernel conv {{.*}} ints [{{.*}}, 0, 0, 0] floats [0, 0]  // conv "tanh"
func.func @kept(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %c = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("twice")
  %r = cleave.relu %c : tensor<1x4x6x6xf32> loc("relu")
  %d = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("one_bound")
  %m = cleave.clip %d {min = 0.000000e+00 : f64} : tensor<1x4x6x6xf32> loc("clip")
  %e = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("tanh")
  %t = cleave.tanh %e : tensor<1x4x6x6xf32> loc("t")
  return %c, %r, %m, %t : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// A residual add of a tensor of the convolution's shape, and the ReLU
// after it, are the convolution's: its fourth input is the residual.
// CHECK-LABEL: program: 1 entries
// CHECK: entry forward phase forward: 1 steps
// CHECK-NEXT: step 0 kernel conv (t0, t1, t2, t3) -> (t4) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0] floats [0, 0]  // conv + add + relu "conv"
// CHECK-NOT: step
// OFF-LABEL: program: 1 entries
// OFF: step 0 kernel conv (t0, t1, t2, none) -> (t[[C:[0-9]+]])
// OFF-NEXT: step 1 loop t{{[0-9]+}} = relu(add(t3, t[[C]]))  // add + relu "relu"
func.func @residual(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>, %y: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %c = cleave.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32> loc("conv")
  %s = cleave.add %y, %c : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("add")
  %r = cleave.relu %s : tensor<1x4x6x6xf32> loc("relu")
  return %r : tensor<1x4x6x6xf32>
}

// -----

// A residual that dies in the convolution gives it its bytes: conv1 writes
// in place (t3 lies where t2 did). A residual that is also X does not:
// conv2 reads X while it writes Y.
// CHECK-LABEL: program: 1 entries
// CHECK: tensor t2 float32[1, 4, 6, 6] arena [[R:[0-9]+]] "t2"
// CHECK-NEXT: tensor t3 float32[1, 4, 6, 6] arena [[R]] "t3"
// CHECK-NEXT: tensor t4 float32[1, 4, 6, 6] arena [[X:[0-9]+]] "t4"
// CHECK: entry forward phase forward: 4 steps, 1 in place
// CHECK-NEXT: step 0 kernel conv (t0, t1, none, none) -> (t2) {{.*}}  // conv + relu "conv0"
// CHECK-NEXT: step 1 kernel conv (t0, t1, none, t2) -> (t3) {{.*}}  // conv + add "conv1"
// CHECK-NEXT: step 2 kernel conv (t3, t1, none, t3) -> (t4) {{.*}}  // conv + add "conv2"
// CHECK-NEXT: step 3 kernel conv (t4, t1, none, none) -> (t5) {{.*}}  // conv "conv3"
func.func @in_place(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c0 = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv0")
  %r0 = cleave.relu %c0 : tensor<1x4x6x6xf32> loc("relu0")
  %c1 = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv1")
  %s = cleave.add %c1, %r0 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("add")
  %c2 = cleave.conv %s, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv2")
  %t = cleave.add %c2, %s : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("add_x")
  %c3 = cleave.conv %t, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv3")
  return %c3 : tensor<1x4x6x6xf32>
}

// -----

// No residual where the add broadcasts (a per-channel constant), where the
// other operand is computed after the convolution (a softmax), or where it
// is computed inside the add's loop (the exp), which never stores it.
// CHECK-LABEL: program: 1 entries
// CHECK: step 0 kernel conv (t0, t1, none, none) {{.*}}  // conv "broadcast"
// CHECK-NEXT: step 1 loop {{.*}} = add(t{{[0-9]+}}, t2)  // add "add_k"
// CHECK-NEXT: step 2 kernel conv (t0, t1, none, none) {{.*}}  // conv "later"
// CHECK-NEXT: step 3 kernel softmax
// CHECK-NEXT: step 4 loop {{.*}} = add(
// CHECK-NEXT: step 5 kernel conv (t0, t1, none, none) {{.*}}  // conv "inside"
// CHECK-NEXT: step 6 loop {{.*}} = add(t{{[0-9]+}}, exp(t3))  // exp + add "add_exp"
func.func @kept_residual(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>, %k: tensor<1x4x1x1xf32>, %y: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %c0 = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("broadcast")
  %s0 = cleave.add %c0, %k : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32> loc("add_k")
  %c1 = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("later")
  %l = cleave.softmax %y {axis = 3 : i64} : tensor<1x4x6x6xf32> loc("softmax")
  %s1 = cleave.add %c1, %l : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("add_later")
  %c2 = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("inside")
  %e = cleave.exp %y : tensor<1x4x6x6xf32> loc("exp")
  %s2 = cleave.add %c2, %e : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("add_exp")
  return %s0, %s1, %s2 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// A SiLU as exporters write torch's, x * sigmoid(x) with the mul's
// operands either way round, after a convolution or after its residual
// add: the convolution applies it (epilogue 3), and neither the sigmoid
// nor the mul is a loop.
// CHECK-LABEL: program: 1 entries
// CHECK: entry forward phase forward: 3 steps
// CHECK-NEXT: step 0 kernel conv (t0, t1, t2, none) -> (t[[Y:[0-9]+]]) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0, 0] floats [0, 0]  // conv + silu "conv"
// CHECK-NEXT: step 1 kernel conv (t[[Y]], t1, none, none) -> (t[[Z:[0-9]+]]) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0, 0] floats [0, 0]  // conv + silu "swapped"
// CHECK-NEXT: step 2 kernel conv (t[[Z]], t1, none, t0) -> (t{{[0-9]+}}) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0, 0] floats [0, 0]  // conv + add + silu "residual"
// CHECK-NOT: step
// OFF: loop t{{[0-9]+}} = mul(t{{[0-9]+}}, sigmoid(t{{[0-9]+}}))  // sigmoid + mul "mul"
func.func @silu(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %c = cleave.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32> loc("conv")
  %s = cleave.sigmoid %c : tensor<1x4x6x6xf32> loc("sigmoid")
  %y = cleave.mul %c, %s : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("mul")
  %d = cleave.conv %y, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("swapped")
  %t = cleave.sigmoid %d : tensor<1x4x6x6xf32> loc("sigmoid2")
  %z = cleave.mul %t, %d : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("mul2")
  %e = cleave.conv %z, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("residual")
  %a = cleave.add %e, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("add")
  %u = cleave.sigmoid %a : tensor<1x4x6x6xf32> loc("sigmoid3")
  %v = cleave.mul %a, %u : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("mul3")
  return %y, %z, %v : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// No SiLU where the sigmoid's result is read elsewhere too, or where the
// mul's gate is the sigmoid of another value.
// CHECK-LABEL: program: 1 entries
// CHECK: step 0 kernel conv {{.*}} ints [{{.*}}, 0, 0, 0] floats [0, 0]  // conv "gate_read"
// CHECK: step 3 kernel conv {{.*}} ints [{{.*}}, 0, 0, 0] floats [0, 0]  // conv "other_gate"
func.func @silu_kept(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %c = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("gate_read")
  %s = cleave.sigmoid %c : tensor<1x4x6x6xf32> loc("sigmoid")
  %y = cleave.mul %c, %s : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("mul")
  %d = cleave.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("other_gate")
  %t = cleave.sigmoid %x : tensor<1x4x6x6xf32> loc("sigmoid2")
  %z = cleave.mul %d, %t : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("mul2")
  %q = cleave.add %z, %s : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("add")
  return %y, %q, %d : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}
