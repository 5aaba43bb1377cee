// RUN: not cleave-opt %s --cleave-autodiff 2>&1 | FileCheck %s --check-prefix=NO-LOSS
// RUN: not cleave-opt %s --cleave-autodiff="loss=loss freeze=(w" 2>&1 | FileCheck %s --check-prefix=BAD-REGEX
// RUN: not cleave-opt %s --cleave-autodiff="loss=loss freeze=^(w|conv)" 2>&1 | FileCheck %s --check-prefix=ALL-FROZEN
// RUN: not cleave-opt %s --cleave-autodiff="loss=loss freeze=^w$" 2>&1 | FileCheck %s --check-prefix=RULES
// RUN: not cleave-opt %s --cleave-autodiff="loss=loss entry=step" 2>&1 | FileCheck %s --check-prefix=ENTRY

// NO-LOSS: error: cleave-autodiff needs the name of the loss result (loss=<result name>)
// BAD-REGEX: error: freeze=(w: not a valid regular expression: parentheses not balanced
// ALL-FROZEN: error: no trainable parameter: freeze=^(w|conv) matches every float weight of @main
// ENTRY: error: cleave-autodiff: no function @step with a body to differentiate

// Ops without a rule are named with their ONNX node; with w frozen only the
// transposed conv's weight is trained, so the matmul needs no rule but the
// conv_transpose does.
// RULES: error: cannot differentiate 'loss': 1 op on the path from the parameters to the loss has no gradient rule: cleave.conv_transpose (node 'ConvTranspose_0')
// RULES: note: loc("ConvTranspose_0"): no gradient rule for cleave.conv_transpose

func.func @main(%x: tensor<1x2x4x4xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %k = cleave.weight "conv.weight" {file = "/m.bin", offset = 0 : i64, length = 32 : i64} : tensor<2x4x1x1xf32>
  %c = cleave.conv_transpose %x, %k {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>} : (tensor<1x2x4x4xf32>, tensor<2x4x1x1xf32>) -> tensor<1x4x4x4xf32> loc("ConvTranspose_0")
  %w = cleave.weight "w" {file = "/m.bin", offset = 32 : i64, length = 64 : i64} : tensor<4x4xf32>
  %y = cleave.matmul %c, %w : (tensor<1x4x4x4xf32>, tensor<4x4xf32>) -> tensor<1x4x4x4xf32> loc("MatMul_1")
  %l = cleave.reduce_mean %y {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x4x4x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
