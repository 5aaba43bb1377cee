# The recurrent layers (RNN, GRU and LSTM). Default activations are filled
# in (per direction), a uniform sequence_lens is dropped, and layout 1
# (batch-major, opset 14) becomes transposes around the sequence-major
# cleave op.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/lstm.onnx | FileCheck %s --check-prefix=LSTM
# RUN: cleave-translate --import-onnx %t/gru.onnx | FileCheck %s --check-prefix=GRU
# RUN: cleave-translate --import-onnx %t/rnn.onnx | FileCheck %s --check-prefix=RNN
# RUN: cleave-translate --import-onnx %t/rnn_layout1.onnx | FileCheck %s --check-prefix=LAYOUT

import sys

import numpy as np

from cleave.testing import GraphBuilder

out = sys.argv[1]
rng = np.random.default_rng(0)


def weight(*shape):
    return (0.1 * rng.standard_normal(shape)).astype(np.float32)


# LSTM-LABEL: func.func @main
# LSTM-SAME: (%[[X:[^:]+]]: tensor<5x2x4xf32> {{.*}}, %[[H0:[^:]+]]: tensor<1x2x8xf32> {{.*}}, %[[C0:[^:]+]]: tensor<1x2x8xf32>
# LSTM-DAG: %[[W:.+]] = cleave.weight "w" {{.*}} : tensor<1x32x4xf32>
# LSTM-DAG: %[[R:.+]] = cleave.weight "r" {{.*}} : tensor<1x32x8xf32>
# LSTM-DAG: %[[B:.+]] = cleave.constant {{.*}} : tensor<1x64xf32>
# LSTM: %[[Y:[^,]+]], %[[YH:[^,]+]], %[[YC:[^ ]+]] = cleave.lstm %[[X]], %[[W]], %[[R]] bias %[[B]] initial_h %[[H0]] initial_c %[[C0]] {activations = ["Sigmoid", "Tanh", "Tanh"], hidden_size = 8 : i64} : (tensor<5x2x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, tensor<1x64xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> (tensor<5x1x2x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
# LSTM: return %[[Y]], %[[YH]], %[[YC]]
g = GraphBuilder(opset=13)
x = g.input("x", [5, 2, 4])
h0 = g.input("h0", [1, 2, 8])
c0 = g.input("c0", [1, 2, 8])
outs = g.node("LSTM", [x, g.initializer("w", weight(1, 32, 4)), g.initializer("r", weight(1, 32, 8)),
                       g.initializer("b", weight(1, 64)), "", h0, c0], outputs=3, hidden_size=8)
for v in outs:
    g.output(v)
g.declare_reference_shapes()
g.save(f"{out}/lstm.onnx")

# A bidirectional layer gets the default activations of both directions.
# GRU-LABEL: func.func @main
# GRU-SAME: (%[[X:[^:]+]]: tensor<5x2x4xf32>
# GRU: %[[Y:[^,]+]], %[[YH:[^ ]+]] = cleave.gru %[[X]], %{{[^,]+}}, %{{[^ ]+}} {activations = ["Sigmoid", "Tanh", "Sigmoid", "Tanh"], direction = "bidirectional", hidden_size = 6 : i64, linear_before_reset = true} : (tensor<5x2x4xf32>, tensor<2x18x4xf32>, tensor<2x18x6xf32>) -> (tensor<5x2x2x6xf32>, tensor<2x2x6xf32>)
# GRU: return %[[Y]], %[[YH]]
g = GraphBuilder(opset=13)
x = g.input("x", [5, 2, 4])
outs = g.node("GRU", [x, g.initializer("w", weight(2, 18, 4)), g.initializer("r", weight(2, 18, 6))],
              outputs=2, hidden_size=6, direction="bidirectional", linear_before_reset=1)
for v in outs:
    g.output(v)
g.declare_reference_shapes()
g.save(f"{out}/gru.onnx")

# sequence_lens equal to the sequence length changes nothing and is dropped;
# hidden_size comes from the recurrence weight when it is missing.
# RNN-LABEL: func.func @main
# RNN-SAME: (%[[X:[^:]+]]: tensor<5x2x4xf32>
# RNN: %{{[^,]+}}, %[[YH:[^ ]+]] = cleave.rnn %[[X]], %{{[^,]+}}, %{{[^ ]+}} {activations = ["Relu"], clip = 2.000000e+00 : f32, direction = "reverse", hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
# Only Y_h is used.
# RNN: return %[[YH]]
g = GraphBuilder(opset=13)
x = g.input("x", [5, 2, 4])
y, yh = g.node("RNN", [x, g.const(weight(1, 3, 4)), g.const(weight(1, 3, 3)), "",
                       g.const(np.int32([5, 5]))], outputs=2, activations=["Relu"], clip=2.0,
               direction="reverse")
# (onnxruntime insists on hidden_size, so the output shape is declared here.)
g.output(yh, [1, 2, 3])
g.save(f"{out}/rnn.onnx")

# Layout 1: X and the initial state are batch-major; the results are
# transposed back to batch-major.
# LAYOUT-LABEL: func.func @main
# LAYOUT-SAME: (%[[X:[^:]+]]: tensor<2x5x4xf32> {{.*}}, %[[H0:[^:]+]]: tensor<2x1x3xf32>
# LAYOUT: %[[XT:.+]] = cleave.transpose %[[X]] {perm = array<i64: 1, 0, 2>} : (tensor<2x5x4xf32>) -> tensor<5x2x4xf32>
# LAYOUT: %[[HT:.+]] = cleave.transpose %[[H0]] {perm = array<i64: 1, 0, 2>} : (tensor<2x1x3xf32>) -> tensor<1x2x3xf32>
# LAYOUT: %[[Y:[^,]+]], %[[YH:[^ ]+]] = cleave.rnn %[[XT]], %{{[^,]+}}, %{{[^ ]+}} initial_h %[[HT]] {activations = ["Tanh"], hidden_size = 3 : i64}
# LAYOUT: %[[YT:.+]] = cleave.transpose %[[Y]] {perm = array<i64: 2, 0, 1, 3>} : (tensor<5x1x2x3xf32>) -> tensor<2x5x1x3xf32>
# LAYOUT: %[[YHT:.+]] = cleave.transpose %[[YH]] {perm = array<i64: 1, 0, 2>} : (tensor<1x2x3xf32>) -> tensor<2x1x3xf32>
# LAYOUT: return %[[YT]], %[[YHT]]
g = GraphBuilder(opset=14)
x = g.input("x", [2, 5, 4])
h0 = g.input("h0", [2, 1, 3])
y, yh = g.node("RNN", [x, g.const(weight(1, 3, 4)), g.const(weight(1, 3, 3)), "", "", h0],
               outputs=2, hidden_size=3, layout=1)
g.output(y, [2, 5, 1, 3])
g.output(yh, [2, 1, 3])
g.save(f"{out}/rnn_layout1.onnx")
