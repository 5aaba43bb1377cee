// RUN: cleave-translate --print-device-program --fuse-kernel-epilogues --conv-block 8 --split-input-file %s | FileCheck %s
// RUN: cleave-translate --print-device-program --fuse-kernel-epilogues --conv-block 16 --split-input-file %s | FileCheck %s --check-prefix=B16
// RUN: cleave-translate --print-device-program --fuse-kernel-epilogues --split-input-file %s | FileCheck %s --check-prefix=OFF
// RUN: not cleave-translate --print-device-program --conv-block 4 --split-input-file %s 2>&1 | FileCheck %s --check-prefix=BAD
// The text form reads back to the same program.
// RUN: cleave-translate --print-device-program --fuse-kernel-epilogues --conv-block 8 --split-input-file --output-split-marker="// =====" %s -o %t.txt
// RUN: cleave-translate --parse-device-program --split-input-file="// =====" --output-split-marker="// =====" %t.txt | diff %t.txt -

// With --conv-block N (cleave compile sets 8, or 16 on x86-64-v4) the
// activations between convolutions that run on oneDNN stay in nChw<N>c:
// the conv signature's last two ints are xBlock and yBlock. A residual add
// and a ReLU that a convolution applies read and write its Y's layout (the
// residual R lies as Y does, and conv3 writes Y where R was); a loop
// between convolutions reads and writes the blocked bytes as they are
// (elementwise, every operand of one shape). The graph's input and output
// stay NCHW.
// BAD: error: --conv-block must be 0, 8 or 16

// CHECK-LABEL: program: 1 entries
// CHECK: entry forward phase forward: 6 steps, 2 in place
// CHECK-NEXT: step 0 kernel conv (t0, t1, none, none) -> (t[[R1:[0-9]+]]) ints [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 8] floats [0, 0]  // conv + relu "conv1"
// CHECK-NEXT: step 1 kernel conv (t[[R1]], t{{[0-9]+}}, none, none) -> (t[[R2:[0-9]+]]) ints [{{.*}}, 1, 8, 8] floats [0, 0]  // conv + relu "conv2"
// CHECK-NEXT: step 2 kernel conv (t[[R2]], t{{[0-9]+}}, none, t[[R1]]) -> (t[[S:[0-9]+]]) ints [{{.*}}, 1, 8, 8] floats [0, 0]  // conv + add + relu "conv3"
// CHECK-NEXT: step 3 kernel conv (t[[S]], t{{[0-9]+}}, none, none) -> (t[[R4:[0-9]+]]) ints [{{.*}}, 1, 8, 8] floats [0, 0]  // conv + relu "conv4"
// CHECK-NEXT: step 4 loop t[[T:[0-9]+]] = add(t[[R4]], t[[S]]) blocked 8  // add "add4"
// CHECK-NEXT: step 5 kernel conv (t[[T]], t{{[0-9]+}}, none, none) -> (t{{[0-9]+}}) ints [{{.*}}, 0, 8, 0] floats [0, 0]  // conv "conv5"
// B16-LABEL: program: 1 entries
// B16: ints [{{.*}}, 1, 0, 16] floats [0, 0]  // conv + relu "conv1"
// B16-NEXT: ints [{{.*}}, 1, 16, 16] floats [0, 0]  // conv + relu "conv2"
// B16-NEXT: ints [{{.*}}, 1, 16, 16] floats [0, 0]  // conv + add + relu "conv3"
// B16-NEXT: ints [{{.*}}, 1, 16, 16] floats [0, 0]  // conv + relu "conv4"
// B16: ints [{{.*}}, 0, 16, 0] floats [0, 0]  // conv "conv5"
// OFF-LABEL: program: 1 entries
// OFF-COUNT-5: ints [{{.*}}, 0, 0] floats
func.func @residual(%x: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %w1 = cleave.weight "w1" {file = "/dev/null", offset = 0 : i64, length = 147456 : i64} : tensor<64x64x3x3xf32>
  %w2 = cleave.weight "w2" {file = "/dev/null", offset = 147456 : i64, length = 147456 : i64} : tensor<64x64x3x3xf32>
  %w3 = cleave.weight "w3" {file = "/dev/null", offset = 294912 : i64, length = 147456 : i64} : tensor<64x64x3x3xf32>
  %c1 = cleave.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("conv1")
  %r1 = cleave.relu %c1 : tensor<1x64x8x8xf32> loc("relu1")
  %c2 = cleave.conv %r1, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("conv2")
  %r2 = cleave.relu %c2 : tensor<1x64x8x8xf32> loc("relu2")
  %c3 = cleave.conv %r2, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("conv3")
  %s = cleave.add %c3, %r1 : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> loc("add")
  %s2 = cleave.relu %s : tensor<1x64x8x8xf32> loc("relu3")
  %c4 = cleave.conv %s2, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("conv4")
  %r4 = cleave.relu %c4 : tensor<1x64x8x8xf32> loc("relu4")
  %t = cleave.add %r4, %s2 : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> loc("add4")
  %c5 = cleave.conv %t, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("conv5")
  return %c5 : tensor<1x64x8x8xf32>
}

// -----

// Between two convolutions that run on oneDNN (a and b), NCHW wherever a
// step in between runs on kernels of NCHW: convolutions of fewer than 2^18
// multiply-adds (a depthwise one and a dense one) and one of weights a
// program may write (an input here); and 12 channels are no whole number
// of blocks.
// The first pair, with nothing in between, is blocked; so is the pair
// joined by a windowed pool, which reads and writes blocks (its last int),
// and the pair joined by an add of a per-channel constant: the loop reads
// the constant by channel (`blocked 8`).
// CHECK-LABEL: program: 1 entries
// CHECK: ints [{{.*}}, 0, 8] floats [0, 0]  // conv "a_direct"
// CHECK: ints [{{.*}}, 8, 0] floats [0, 0]  // conv "b_direct"
// CHECK: ints [{{.*}}, 0, 8] floats [0, 0]  // conv "a_pool"
// CHECK-NEXT: kernel max_pool (t{{[0-9]+}}) -> (t{{[0-9]+}}) ints [2, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 0, 8]  // max_pool "pool"
// CHECK-NEXT: ints [{{.*}}, 8, 0] floats [0, 0]  // conv "b_pool"
// CHECK: ints [{{.*}}, 0, 8] floats [0, 0]  // conv "a_broadcast"
// CHECK-NEXT: loop t{{[0-9]+}} = add(t{{[0-9]+}}, t{{[0-9]+}}) blocked 8  // add "bias"
// CHECK-NEXT: ints [{{.*}}, 8, 0] floats [0, 0]  // conv "b_broadcast"
// CHECK-NOT: , 8] floats
// CHECK-NOT: , 8, 0] floats
// CHECK-NOT: blocked
// B16-LABEL: program: 1 entries
// OFF-LABEL: program: 1 entries
func.func @boundaries(%x: tensor<1x64x8x8xf32>, %wi: tensor<64x64x3x3xf32>) -> (tensor<1x64x8x8xf32>, tensor<1x64x4x4xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) {
  %wa = cleave.weight "wa" {file = "/dev/null", offset = 0 : i64, length = 147456 : i64} : tensor<64x64x3x3xf32>
  %wb = cleave.weight "wb" {file = "/dev/null", offset = 147456 : i64, length = 147456 : i64} : tensor<64x64x3x3xf32>
  %wd = cleave.weight "wd" {file = "/dev/null", offset = 294912 : i64, length = 2304 : i64} : tensor<64x1x3x3xf32>
  %ws = cleave.weight "ws" {file = "/dev/null", offset = 297216 : i64, length = 2048 : i64} : tensor<8x64x1x1xf32>
  %wsb = cleave.weight "wsb" {file = "/dev/null", offset = 299264 : i64, length = 18432 : i64} : tensor<64x8x3x3xf32>
  %wt = cleave.weight "wt" {file = "/dev/null", offset = 317696 : i64, length = 27648 : i64} : tensor<12x64x3x3xf32>
  %wu = cleave.weight "wu" {file = "/dev/null", offset = 345344 : i64, length = 27648 : i64} : tensor<64x12x3x3xf32>
  %k = cleave.weight "k" {file = "/dev/null", offset = 0 : i64, length = 256 : i64} : tensor<1x64x1x1xf32>
  %a0 = cleave.conv %x, %wa {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("a_direct")
  %b0 = cleave.conv %a0, %wb {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("b_direct")
  %a1 = cleave.conv %x, %wa {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("a_pool")
  %p = cleave.max_pool %a1 {kernel_shape = array<i64: 1, 1>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>) -> tensor<1x64x4x4xf32> loc("pool")
  %b1 = cleave.conv %p, %wb {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x4x4xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x4x4xf32> loc("b_pool")
  %a2 = cleave.conv %x, %wa {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("a_broadcast")
  %a2k = cleave.add %a2, %k : (tensor<1x64x8x8xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x8x8xf32> loc("bias")
  %b2 = cleave.conv %a2k, %wb {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("b_broadcast")
  %a3 = cleave.conv %x, %wa {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("a_depthwise")
  %d = cleave.conv %a3, %wd {dilations = array<i64: 1, 1>, group = 64 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x8x8xf32> loc("depthwise")
  %b3 = cleave.conv %d, %wb {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("b_depthwise")
  %a4 = cleave.conv %x, %wa {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("a_small")
  %s = cleave.conv %a4, %ws {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<8x64x1x1xf32>) -> tensor<1x8x8x8xf32> loc("small")
  %b4 = cleave.conv %s, %wsb {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<64x8x3x3xf32>) -> tensor<1x64x8x8xf32> loc("b_small")
  %a5 = cleave.conv %x, %wa {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("a_writable")
  %f = cleave.conv %a5, %wi {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("writable")
  %b5 = cleave.conv %f, %wb {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32> loc("b_writable")
  %a6 = cleave.conv %x, %wt {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<12x64x3x3xf32>) -> tensor<1x12x8x8xf32> loc("a_twelve")
  %b6 = cleave.conv %a6, %wu {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x12x8x8xf32>, tensor<64x12x3x3xf32>) -> tensor<1x64x8x8xf32> loc("b_twelve")
  return %b0, %b1, %b2, %b3, %b4, %b5, %b6 : tensor<1x64x8x8xf32>, tensor<1x64x4x4xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>
}

// -----

// A depthwise convolution runs on oneDNN's blocked kernels too: MobileNet's
// block (a pointwise expansion, a depthwise 3x3 and a pointwise
// projection, the first two clipped to [0, 6]) keeps its activations in
// blocks from the first convolution's output to the last one's input.
// CHECK-LABEL: program: 1 entries
// CHECK: ints [2, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0, 8] floats [0, 6]  // conv + clip "expand"
// CHECK-NEXT: ints [2, 32, 1, 1, 1, 1, 1, 1, 1, 1, 2, 8, 8] floats [0, 6]  // conv + clip "depthwise"
// CHECK-NEXT: ints [2, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 8, 0] floats [0, 0]  // conv "project"
// B16-LABEL: program: 1 entries
// B16: ints [{{.*}}, 0, 16] floats [0, 6]  // conv + clip "expand"
// B16-NEXT: ints [{{.*}}, 16, 16] floats [0, 6]  // conv + clip "depthwise"
// B16-NEXT: ints [{{.*}}, 16, 0] floats [0, 0]  // conv "project"
// OFF-LABEL: program: 1 entries
func.func @mobilenet_block(%x: tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32> {
  %we = cleave.weight "we" {file = "/dev/null", offset = 0 : i64, length = 4096 : i64} : tensor<32x32x1x1xf32>
  %wd = cleave.weight "wd" {file = "/dev/null", offset = 4096 : i64, length = 1152 : i64} : tensor<32x1x3x3xf32>
  %wp = cleave.weight "wp" {file = "/dev/null", offset = 5248 : i64, length = 4096 : i64} : tensor<32x32x1x1xf32>
  %e = cleave.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x32x32xf32> loc("expand")
  %ec = cleave.clip %e {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : tensor<1x32x32x32xf32> loc("clip1")
  %d = cleave.conv %ec, %wd {dilations = array<i64: 1, 1>, group = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x32x32xf32> loc("depthwise")
  %dc = cleave.clip %d {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : tensor<1x32x32x32xf32> loc("clip2")
  %p = cleave.conv %dc, %wp {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x32x32xf32> loc("project")
  return %p : tensor<1x32x32x32xf32>
}

// -----

// EfficientNet's block: squeeze-and-excitation between the depthwise
// convolution and the projection. The global pool reads the depthwise
// output where it lies (its one int, xBlock), the small convolutions of the
// squeezed channels and the sigmoid stay NCHW (N x C x 1 x 1, the same bytes
// in either layout), and the product that scales each channel is a blocked
// loop that reads the scales by channel: blocked from the expansion's output
// to the projection's input.
// CHECK-LABEL: program: 1 entries
// CHECK: ints [{{.*}}, 3, 0, 8] floats [0, 0]  // conv + silu "expand"
// CHECK-NEXT: kernel conv (t{{[0-9]+}}, t{{[0-9]+}}, none, none) -> (t[[D:[0-9]+]]) ints [{{.*}}, 3, 8, 8] floats [0, 0]  // conv + silu "depthwise"
// CHECK-NEXT: kernel global_average_pool (t[[D]]) -> (t{{[0-9]+}}) ints [8]  // global_average_pool "squeeze"
// CHECK-NEXT: ints [{{.*}}, 3, 0, 0] floats [0, 0]  // conv + silu "fc1"
// CHECK-NEXT: ints [{{.*}}, 0, 0, 0] floats [0, 0]  // conv "fc2"
// CHECK-NEXT: loop t[[G:[0-9]+]] = sigmoid(t{{[0-9]+}})  // sigmoid "gate"
// CHECK-NEXT: loop t[[S:[0-9]+]] = mul(t[[D]], t[[G]]) blocked 8  // mul "excite"
// CHECK-NEXT: kernel conv (t[[S]], t{{[0-9]+}}, none, none) -> (t{{[0-9]+}}) ints [{{.*}}, 0, 8, 0] floats [0, 0]  // conv "project"
// B16-LABEL: program: 1 entries
// B16: ints [16]  // global_average_pool "squeeze"
// B16: mul(t{{[0-9]+}}, t{{[0-9]+}}) blocked 16  // mul "excite"
// B16-NEXT: ints [{{.*}}, 0, 16, 0] floats [0, 0]  // conv "project"
// OFF-LABEL: program: 1 entries
// OFF: ints [0]  // global_average_pool "squeeze"
// OFF-NOT: blocked
func.func @squeeze_excite_block(%x: tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32> {
  %we = cleave.weight "we" {file = "/dev/null", offset = 0 : i64, length = 4096 : i64} : tensor<32x32x1x1xf32>
  %wd = cleave.weight "wd" {file = "/dev/null", offset = 4096 : i64, length = 1152 : i64} : tensor<32x1x3x3xf32>
  %w1 = cleave.weight "w1" {file = "/dev/null", offset = 5248 : i64, length = 1024 : i64} : tensor<8x32x1x1xf32>
  %w2 = cleave.weight "w2" {file = "/dev/null", offset = 6272 : i64, length = 1024 : i64} : tensor<32x8x1x1xf32>
  %wp = cleave.weight "wp" {file = "/dev/null", offset = 7296 : i64, length = 4096 : i64} : tensor<32x32x1x1xf32>
  %e = cleave.conv %x, %we {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x32x32xf32> loc("expand")
  %es = cleave.sigmoid %e : tensor<1x32x32x32xf32> loc("sigmoid1")
  %ea = cleave.mul %e, %es : (tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32> loc("silu1")
  %d = cleave.conv %ea, %wd {dilations = array<i64: 1, 1>, group = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x32x32xf32> loc("depthwise")
  %ds = cleave.sigmoid %d : tensor<1x32x32x32xf32> loc("sigmoid2")
  %da = cleave.mul %d, %ds : (tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32> loc("silu2")
  %q = cleave.global_average_pool %da : (tensor<1x32x32x32xf32>) -> tensor<1x32x1x1xf32> loc("squeeze")
  %f1 = cleave.conv %q, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x1x1xf32>, tensor<8x32x1x1xf32>) -> tensor<1x8x1x1xf32> loc("fc1")
  %f1s = cleave.sigmoid %f1 : tensor<1x8x1x1xf32> loc("sigmoid3")
  %f1a = cleave.mul %f1, %f1s : (tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32> loc("silu3")
  %f2 = cleave.conv %f1a, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x1x1xf32>, tensor<32x8x1x1xf32>) -> tensor<1x32x1x1xf32> loc("fc2")
  %g = cleave.sigmoid %f2 : tensor<1x32x1x1xf32> loc("gate")
  %s = cleave.mul %da, %g : (tensor<1x32x32x32xf32>, tensor<1x32x1x1xf32>) -> tensor<1x32x32x32xf32> loc("excite")
  %p = cleave.conv %s, %wp {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x32x32xf32> loc("project")
  return %p : tensor<1x32x32x32xf32>
}
