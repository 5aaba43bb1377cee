// docs/onnx-operators.md is the importer's handler table as printed by
// cleave-translate; regenerate it after changing a handler entry:
//
//   cleave-translate --onnx-operator-table /dev/null > docs/onnx-operators.md
//
// RUN: cleave-translate --onnx-operator-table %s | diff %cleave_src/docs/onnx-operators.md -
//
// The table lists each opset range of an operator whose import changes.
// RUN: cleave-translate --onnx-operator-table %s | FileCheck %s
// CHECK: | ONNX operator | Opsets | cleave ops | Import notes |
// CHECK: | Gelu | 20-24 | `cleave.gelu` |
// CHECK: | ReduceMean | 11-17 | `cleave.reduce_mean` |
// CHECK-NEXT: | ReduceMean | 18-24 | `cleave.reduce_mean` |
// CHECK: | ReduceSum | 11-12 | `cleave.reduce_sum` |
// CHECK-NEXT: | ReduceSum | 13-24 | `cleave.reduce_sum` |
// CHECK: | Softmax | 11-12 | `cleave.softmax`, `cleave.reshape` |
// CHECK-NEXT: | Softmax | 13-24 | `cleave.softmax` |
// CHECK: | Split | 11-12 |
// CHECK-NEXT: | Split | 13-17 |
// CHECK-NEXT: | Split | 18-24 |
// CHECK: | Squeeze | 11-12 |
// CHECK-NEXT: | Squeeze | 13-24 |
