// RUN: cleave-opt %s --cleave-compile-pipeline="devices=1 plan-json=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=JSON
// RUN: not cleave-opt %s --cleave-compile-pipeline="devices=2" 2>&1 | FileCheck %s --check-prefix=TWO

// A model whose outputs are its input and a view of a weight computes
// nothing: on one device its plan is the trivial one, and the IR stays.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.+]]: tensor<2x4xf32>
// CHECK:         %[[W:.+]] = cleave.weight "w"
// CHECK:         return %[[X]], %[[W]]

// JSON: {"function":"main","mesh":{"dp":1,"pp":1,"tp":1},"microbatches":1,"note":"the model computes nothing: its outputs are inputs or constants","stages":[],"target":"cpu"}

// TWO: error: planning needs a function that computes something; 'main' has no ops

func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<8xf32>) {
  %w = cleave.weight "w" {file = "w.bin", offset = 0 : i64, length = 32 : i64} : tensor<8xf32>
  return %x, %w : tensor<2x4xf32>, tensor<8xf32>
}
