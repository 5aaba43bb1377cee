// RUN: cleave-opt %s -split-input-file --cleave-attach-loss="kind=cross-entropy logits=logits labels=labels ignore-index=-1" | FileCheck %s --check-prefix=CE
// RUN: cleave-opt %s -split-input-file --cleave-attach-loss="kind=mse logits=logits labels=target" | FileCheck %s --check-prefix=MSE
// RUN: cleave-opt %s -split-input-file --cleave-attach-loss="kind=cross-entropy logits=logits labels=labels" --cleave-autodiff=loss=loss | FileCheck %s --check-prefix=GRAD

// The cross-entropy reads logits [2, 3, 5] and new int64 labels [2, 3]:
// the one-hot of the labels (equal against 0..4) picks the log-probabilities,
// and their negated sum is divided by the number of labels that are not the
// ignored index. The logits stay a result; the loss is added after them.

// CE-LABEL: func.func @main(
// CE-SAME: %{{.*}}: tensor<2x3x4xf32> {cleave.name = "x"}, %[[LABELS:.*]]: tensor<2x3xi64> {cleave.name = "labels"})
// CE-SAME: -> (tensor<2x3x5xf32> {cleave.name = "logits"}, tensor<f32> {cleave.name = "loss"})
// CE: %[[LOGITS:.*]] = cleave.matmul
// CE: %[[LOGP:.*]] = cleave.log_softmax %[[LOGITS]] {axis = 2 : i64}
// CE-DAG: %[[IOTA:.*]] = cleave.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CE-DAG: %[[COLUMN:.*]] = cleave.reshape %[[LABELS]] {{.*}} -> tensor<2x3x1xi64>
// CE: %[[HITS:.*]] = cleave.equal %[[COLUMN]], %[[IOTA]] : (tensor<2x3x1xi64>, tensor<5xi64>) -> tensor<2x3x5xi1>
// CE: %[[ONEHOT:.*]] = cleave.cast %[[HITS]] : tensor<2x3x5xi1> to tensor<2x3x5xf32>
// CE: %[[PICKED:.*]] = cleave.mul %[[ONEHOT]], %[[LOGP]]
// CE: %[[SUM:.*]] = cleave.reduce_sum %[[PICKED]] {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x5xf32>) -> tensor<f32>
// CE: %[[IGNORE:.*]] = cleave.constant dense<-1> : tensor<i64>
// CE: %[[IGNORED:.*]] = cleave.equal %[[LABELS]], %[[IGNORE]]
// CE-DAG: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// CE-DAG: %[[ZERO:.*]] = cleave.constant dense<0.000000e+00> : tensor<f32>
// CE: %[[COUNTED:.*]] = cleave.where %[[IGNORED]], %[[ZERO]], %[[ONE]] : (tensor<2x3xi1>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
// CE: %[[COUNT:.*]] = cleave.reduce_sum %[[COUNTED]] {axes = array<i64: 0, 1>, keepdims = false}
// CE: %[[MEAN:.*]] = cleave.div %[[SUM]], %[[COUNT]]
// CE: %[[LOSS:.*]] = cleave.neg %[[MEAN]]
// CE: return %[[LOGITS]], %[[LOSS]]

// The mean squared error's labels have the logits' type.
// MSE-LABEL: func.func @main(
// MSE-SAME: %{{.*}}: tensor<2x3x4xf32> {cleave.name = "x"}, %[[T:.*]]: tensor<2x3x5xf32> {cleave.name = "target"})
// MSE: %[[LOGITS:.*]] = cleave.matmul
// MSE: %[[D:.*]] = cleave.sub %[[LOGITS]], %[[T]]
// MSE: %[[SQ:.*]] = cleave.mul %[[D]], %[[D]]
// MSE: %[[LOSS:.*]] = cleave.reduce_mean %[[SQ]] {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x5xf32>) -> tensor<f32>
// MSE: return %[[LOGITS]], %[[LOSS]]

// cleave-autodiff differentiates the attached loss: one gradient, of w.
// GRAD-LABEL: func.func @main
// GRAD-SAME: -> (tensor<f32> {cleave.name = "loss"}, tensor<4x5xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"})
func.func @main(%x: tensor<2x3x4xf32> {cleave.name = "x"}) -> (tensor<2x3x5xf32> {cleave.name = "logits"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 80 : i64} : tensor<4x5xf32>
  %y = cleave.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Labels the model already takes are read, not added.
// CE-LABEL: func.func @main(%{{.*}}: tensor<4xi64> {cleave.name = "labels"}, %{{.*}}: tensor<4x3xf32> {cleave.name = "x"})
// CE-SAME: -> (tensor<4x3xf32> {cleave.name = "logits"}, tensor<f32> {cleave.name = "loss"})
// MSE-LABEL: func.func @main(%{{.*}}: tensor<4xi64> {cleave.name = "labels"}, %{{.*}}: tensor<4x3xf32> {cleave.name = "x"}, %{{.*}}: tensor<4x3xf32> {cleave.name = "target"})
func.func @main(%labels: tensor<4xi64> {cleave.name = "labels"}, %x: tensor<4x3xf32> {cleave.name = "x"}) -> (tensor<4x3xf32> {cleave.name = "logits"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 48 : i64} : tensor<4x3xf32>
  %y = cleave.mul %x, %w : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
