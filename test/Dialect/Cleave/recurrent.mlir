// RUN: cleave-opt %s | cleave-opt | FileCheck %s

// Round trip of every recurrent op. The verifier checks each written result
// type against the inferred one, so every shape below is a check of type
// inference (against the ONNX operator semantics, layout 0).

// CHECK-LABEL: func.func @rnn_forward(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<10x2x16xf32>, %[[A1:[^:]+]]: tensor<1x32x16xf32>, %[[A2:[^:]+]]: tensor<1x32x32xf32>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]] = cleave.rnn %[[A0]], %[[A1]], %[[A2]] {activations = ["Tanh"], hidden_size = 32 : i64} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
// CHECK:         return %[[Y]], %[[H]] : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
func.func @rnn_forward(%a0: tensor<10x2x16xf32>, %a1: tensor<1x32x16xf32>, %a2: tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  %0:2 = cleave.rnn %a0, %a1, %a2 {hidden_size = 32 : i64, activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %0#0, %0#1 : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// CHECK-LABEL: func.func @rnn_bidirectional(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<10x2x16xf32>, %[[A1:[^:]+]]: tensor<2x32x16xf32>, %[[A2:[^:]+]]: tensor<2x32x32xf32>, %[[A3:[^:]+]]: tensor<2x64xf32>, %[[A4:[^:]+]]: tensor<2x2x32xf32>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]] = cleave.rnn %[[A0]], %[[A1]], %[[A2]] bias %[[A3]] initial_h %[[A4]] {activations = ["Relu", "Softsign"], clip = 5.000000e+00 : f32, direction = "bidirectional", hidden_size = 32 : i64} : (tensor<10x2x16xf32>, tensor<2x32x16xf32>, tensor<2x32x32xf32>, tensor<2x64xf32>, tensor<2x2x32xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>)
// CHECK:         return %[[Y]], %[[H]] : tensor<10x2x2x32xf32>, tensor<2x2x32xf32>
func.func @rnn_bidirectional(%a0: tensor<10x2x16xf32>, %a1: tensor<2x32x16xf32>, %a2: tensor<2x32x32xf32>, %a3: tensor<2x64xf32>, %a4: tensor<2x2x32xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>) {
  %0:2 = cleave.rnn %a0, %a1, %a2 bias %a3 initial_h %a4 {hidden_size = 32 : i64, direction = "bidirectional", activations = ["Relu", "Softsign"], clip = 5.000000e+00 : f32} : (tensor<10x2x16xf32>, tensor<2x32x16xf32>, tensor<2x32x32xf32>, tensor<2x64xf32>, tensor<2x2x32xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>)
  return %0#0, %0#1 : tensor<10x2x2x32xf32>, tensor<2x2x32xf32>
}

// CHECK-LABEL: func.func @rnn_dynamic_batch_from_initial_h(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x?x16xf32>, %[[A1:[^:]+]]: tensor<1x32x16xf32>, %[[A2:[^:]+]]: tensor<1x32x32xf32>, %[[A3:[^:]+]]: tensor<1x4x32xf32>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]] = cleave.rnn %[[A0]], %[[A1]], %[[A2]] initial_h %[[A3]] {activations = ["Sigmoid"], direction = "reverse", hidden_size = 32 : i64} : (tensor<?x?x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>, tensor<1x4x32xf32>) -> (tensor<?x1x4x32xf32>, tensor<1x4x32xf32>)
// CHECK:         return %[[Y]], %[[H]] : tensor<?x1x4x32xf32>, tensor<1x4x32xf32>
func.func @rnn_dynamic_batch_from_initial_h(%a0: tensor<?x?x16xf32>, %a1: tensor<1x32x16xf32>, %a2: tensor<1x32x32xf32>, %a3: tensor<1x4x32xf32>) -> (tensor<?x1x4x32xf32>, tensor<1x4x32xf32>) {
  %0:2 = cleave.rnn %a0, %a1, %a2 initial_h %a3 {hidden_size = 32 : i64, direction = "reverse", activations = ["Sigmoid"]} : (tensor<?x?x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>, tensor<1x4x32xf32>) -> (tensor<?x1x4x32xf32>, tensor<1x4x32xf32>)
  return %0#0, %0#1 : tensor<?x1x4x32xf32>, tensor<1x4x32xf32>
}

// CHECK-LABEL: func.func @gru_forward(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<5x1x4xf32>, %[[A1:[^:]+]]: tensor<1x24x4xf32>, %[[A2:[^:]+]]: tensor<1x24x8xf32>, %[[A3:[^:]+]]: tensor<1x48xf32>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]] = cleave.gru %[[A0]], %[[A1]], %[[A2]] bias %[[A3]] {activations = ["Sigmoid", "Tanh"], hidden_size = 8 : i64, linear_before_reset = true} : (tensor<5x1x4xf32>, tensor<1x24x4xf32>, tensor<1x24x8xf32>, tensor<1x48xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>)
// CHECK:         return %[[Y]], %[[H]] : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>
func.func @gru_forward(%a0: tensor<5x1x4xf32>, %a1: tensor<1x24x4xf32>, %a2: tensor<1x24x8xf32>, %a3: tensor<1x48xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>) {
  %0:2 = cleave.gru %a0, %a1, %a2 bias %a3 {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh"], linear_before_reset = true} : (tensor<5x1x4xf32>, tensor<1x24x4xf32>, tensor<1x24x8xf32>, tensor<1x48xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>)
  return %0#0, %0#1 : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>
}

// CHECK-LABEL: func.func @gru_bidirectional(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<7x3x4xf32>, %[[A1:[^:]+]]: tensor<2x48x4xf32>, %[[A2:[^:]+]]: tensor<2x48x16xf32>, %[[A3:[^:]+]]: tensor<2x96xf32>, %[[A4:[^:]+]]: tensor<2x3x16xf32>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]] = cleave.gru %[[A0]], %[[A1]], %[[A2]] bias %[[A3]] initial_h %[[A4]] {activations = ["Sigmoid", "Tanh", "Sigmoid", "Softplus"], direction = "bidirectional", hidden_size = 16 : i64} : (tensor<7x3x4xf32>, tensor<2x48x4xf32>, tensor<2x48x16xf32>, tensor<2x96xf32>, tensor<2x3x16xf32>) -> (tensor<7x2x3x16xf32>, tensor<2x3x16xf32>)
// CHECK:         return %[[Y]], %[[H]] : tensor<7x2x3x16xf32>, tensor<2x3x16xf32>
func.func @gru_bidirectional(%a0: tensor<7x3x4xf32>, %a1: tensor<2x48x4xf32>, %a2: tensor<2x48x16xf32>, %a3: tensor<2x96xf32>, %a4: tensor<2x3x16xf32>) -> (tensor<7x2x3x16xf32>, tensor<2x3x16xf32>) {
  %0:2 = cleave.gru %a0, %a1, %a2 bias %a3 initial_h %a4 {hidden_size = 16 : i64, direction = "bidirectional", activations = ["Sigmoid", "Tanh", "Sigmoid", "Softplus"]} : (tensor<7x3x4xf32>, tensor<2x48x4xf32>, tensor<2x48x16xf32>, tensor<2x96xf32>, tensor<2x3x16xf32>) -> (tensor<7x2x3x16xf32>, tensor<2x3x16xf32>)
  return %0#0, %0#1 : tensor<7x2x3x16xf32>, tensor<2x3x16xf32>
}

// CHECK-LABEL: func.func @gru_dynamic(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x?x?xf32>, %[[A1:[^:]+]]: tensor<1x24x?xf32>, %[[A2:[^:]+]]: tensor<1x24x8xf32>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]] = cleave.gru %[[A0]], %[[A1]], %[[A2]] {activations = ["Sigmoid", "Tanh"], hidden_size = 8 : i64} : (tensor<?x?x?xf32>, tensor<1x24x?xf32>, tensor<1x24x8xf32>) -> (tensor<?x1x?x8xf32>, tensor<1x?x8xf32>)
// CHECK:         return %[[Y]], %[[H]] : tensor<?x1x?x8xf32>, tensor<1x?x8xf32>
func.func @gru_dynamic(%a0: tensor<?x?x?xf32>, %a1: tensor<1x24x?xf32>, %a2: tensor<1x24x8xf32>) -> (tensor<?x1x?x8xf32>, tensor<1x?x8xf32>) {
  %0:2 = cleave.gru %a0, %a1, %a2 {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh"]} : (tensor<?x?x?xf32>, tensor<1x24x?xf32>, tensor<1x24x8xf32>) -> (tensor<?x1x?x8xf32>, tensor<1x?x8xf32>)
  return %0#0, %0#1 : tensor<?x1x?x8xf32>, tensor<1x?x8xf32>
}

// CHECK-LABEL: func.func @lstm_forward(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<5x1x4xf32>, %[[A1:[^:]+]]: tensor<1x32x4xf32>, %[[A2:[^:]+]]: tensor<1x32x8xf32>, %[[A3:[^:]+]]: tensor<1x64xf32>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]], %[[C:[^ ,]+]] = cleave.lstm %[[A0]], %[[A1]], %[[A2]] bias %[[A3]] {activations = ["Sigmoid", "Tanh", "Tanh"], hidden_size = 8 : i64} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, tensor<1x64xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
// CHECK:         return %[[Y]], %[[H]], %[[C]] : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>
func.func @lstm_forward(%a0: tensor<5x1x4xf32>, %a1: tensor<1x32x4xf32>, %a2: tensor<1x32x8xf32>, %a3: tensor<1x64xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>) {
  %0:3 = cleave.lstm %a0, %a1, %a2 bias %a3 {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, tensor<1x64xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>
}

// CHECK-LABEL: func.func @lstm_bidirectional_all_operands(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<6x2x10xf32>, %[[A1:[^:]+]]: tensor<2x80x10xf32>, %[[A2:[^:]+]]: tensor<2x80x20xf32>, %[[A3:[^:]+]]: tensor<2x160xf32>, %[[A4:[^:]+]]: tensor<2x2x20xf32>, %[[A5:[^:]+]]: tensor<2x2x20xf32>, %[[A6:[^:]+]]: tensor<2x60xf32>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]], %[[C:[^ ,]+]] = cleave.lstm %[[A0]], %[[A1]], %[[A2]] bias %[[A3]] initial_h %[[A4]] initial_c %[[A5]] peepholes %[[A6]] {activations = ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Relu", "Tanh"], clip = 3.000000e+00 : f32, direction = "bidirectional", hidden_size = 20 : i64, input_forget = true} : (tensor<6x2x10xf32>, tensor<2x80x10xf32>, tensor<2x80x20xf32>, tensor<2x160xf32>, tensor<2x2x20xf32>, tensor<2x2x20xf32>, tensor<2x60xf32>) -> (tensor<6x2x2x20xf32>, tensor<2x2x20xf32>, tensor<2x2x20xf32>)
// CHECK:         return %[[Y]], %[[H]], %[[C]] : tensor<6x2x2x20xf32>, tensor<2x2x20xf32>, tensor<2x2x20xf32>
func.func @lstm_bidirectional_all_operands(%a0: tensor<6x2x10xf32>, %a1: tensor<2x80x10xf32>, %a2: tensor<2x80x20xf32>, %a3: tensor<2x160xf32>, %a4: tensor<2x2x20xf32>, %a5: tensor<2x2x20xf32>, %a6: tensor<2x60xf32>) -> (tensor<6x2x2x20xf32>, tensor<2x2x20xf32>, tensor<2x2x20xf32>) {
  %0:3 = cleave.lstm %a0, %a1, %a2 bias %a3 initial_h %a4 initial_c %a5 peepholes %a6 {hidden_size = 20 : i64, direction = "bidirectional", activations = ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Relu", "Tanh"], clip = 3.000000e+00 : f32, input_forget = true} : (tensor<6x2x10xf32>, tensor<2x80x10xf32>, tensor<2x80x20xf32>, tensor<2x160xf32>, tensor<2x2x20xf32>, tensor<2x2x20xf32>, tensor<2x60xf32>) -> (tensor<6x2x2x20xf32>, tensor<2x2x20xf32>, tensor<2x2x20xf32>)
  return %0#0, %0#1, %0#2 : tensor<6x2x2x20xf32>, tensor<2x2x20xf32>, tensor<2x2x20xf32>
}

// CHECK-LABEL: func.func @lstm_initial_c_only_dynamic_batch(
// CHECK-SAME:    %[[A0:[^:]+]]: tensor<?x?x4xf16>, %[[A1:[^:]+]]: tensor<1x32x4xf16>, %[[A2:[^:]+]]: tensor<1x32x8xf16>, %[[A3:[^:]+]]: tensor<1x3x8xf16>)
// CHECK:         %[[Y:[^ ,]+]], %[[H:[^ ,]+]], %[[C:[^ ,]+]] = cleave.lstm %[[A0]], %[[A1]], %[[A2]] initial_c %[[A3]] {activations = ["Sigmoid", "Tanh", "Tanh"], direction = "reverse", hidden_size = 8 : i64} : (tensor<?x?x4xf16>, tensor<1x32x4xf16>, tensor<1x32x8xf16>, tensor<1x3x8xf16>) -> (tensor<?x1x3x8xf16>, tensor<1x3x8xf16>, tensor<1x3x8xf16>)
// CHECK:         return %[[Y]], %[[H]], %[[C]] : tensor<?x1x3x8xf16>, tensor<1x3x8xf16>, tensor<1x3x8xf16>
func.func @lstm_initial_c_only_dynamic_batch(%a0: tensor<?x?x4xf16>, %a1: tensor<1x32x4xf16>, %a2: tensor<1x32x8xf16>, %a3: tensor<1x3x8xf16>) -> (tensor<?x1x3x8xf16>, tensor<1x3x8xf16>, tensor<1x3x8xf16>) {
  %0:3 = cleave.lstm %a0, %a1, %a2 initial_c %a3 {hidden_size = 8 : i64, direction = "reverse", activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<?x?x4xf16>, tensor<1x32x4xf16>, tensor<1x32x8xf16>, tensor<1x3x8xf16>) -> (tensor<?x1x3x8xf16>, tensor<1x3x8xf16>, tensor<1x3x8xf16>)
  return %0#0, %0#1, %0#2 : tensor<?x1x3x8xf16>, tensor<1x3x8xf16>, tensor<1x3x8xf16>
}
