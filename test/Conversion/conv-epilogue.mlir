// RUN: cleave-translate --print-device-program --fuse-conv-epilogue --split-input-file %s | FileCheck %s
// RUN: cleave-translate --print-device-program --split-input-file %s | FileCheck %s --check-prefix=OFF
// The text form reads back to the same program (printed identically).
// RUN: cleave-translate --print-device-program --fuse-conv-epilogue --split-input-file --output-split-marker="// =====" %s -o %t.txt
// RUN: cleave-translate --parse-device-program --split-input-file="// =====" --output-split-marker="// =====" %t.txt | diff %t.txt -

// A convolution whose result's only use is a ReLU or a clip with both
// bounds applies it in its kernel (the conv signature's int before the
// two layouts is the CleaveEpilogue: 1 ReLU, 2 clip; its floats the
// clamp's bounds): one
// step writes the activation's result, and the convolution's own result
// is never stored. CPU programs do it (cleave compile, unless --no-fuse);
// without --fuse-conv-epilogue the activation is a loop of its own.

// CHECK-LABEL: program: 1 entries, arena 0 bytes
// CHECK: entry forward phase forward: 1 steps
// CHECK-NEXT: step 0 kernel conv (t0, t1, t2) -> (t3) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0] floats [0, 6]  // conv + clip "conv"
// CHECK-NOT: step
// OFF-LABEL: program: 1 entries
// OFF: step 0 kernel conv (t0, t1, t2) -> (t[[C:[0-9]+]]) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0] floats [0, 0]  // conv "conv"
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
// CHECK-NEXT: step 0 kernel conv (t0, t1, none) -> (t[[R:[0-9]+]]) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0] floats [0, 0]  // conv + relu "conv"
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
