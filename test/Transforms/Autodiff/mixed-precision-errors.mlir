// RUN: cleave-opt %s --split-input-file --cleave-mixed-precision -verify-diagnostics
// RUN: not cleave-opt %s --cleave-mixed-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not cleave-opt %s --cleave-mixed-precision=entry=step 2>&1 | FileCheck %s --check-prefix=ENTRY
// KIND: error: cleave-mixed-precision: precision=fp8: the low precision is bf16 or fp16
// ENTRY: error: cleave-mixed-precision: no function @step

// A float64 product keeps its precision: an error, not a silent narrowing.
func.func @main(%x: tensor<2x3xf64>, %w: tensor<3x4xf64>) -> tensor<2x4xf64> {
  // expected-error @+1 {{cleave-mixed-precision: cleave.matmul cannot compute in bf16: operand #0 is 'tensor<2x3xf64>', not a float32 tensor}}
  %y = cleave.matmul %x, %w : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  return %y : tensor<2x4xf64>
}
