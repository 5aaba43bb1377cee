// RUN: cleave-opt %s -split-input-file --cleave-attach-loss="logits=logits labels=labels" -verify-diagnostics
// RUN: not cleave-opt %s -split-input-file --cleave-attach-loss="kind=hinge logits=logits labels=labels" 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not cleave-opt %s -split-input-file --cleave-attach-loss="labels=labels" 2>&1 | FileCheck %s --check-prefix=NO-LOGITS
// RUN: not cleave-opt %s -split-input-file --cleave-attach-loss="logits=logits" 2>&1 | FileCheck %s --check-prefix=NO-LABELS
// RUN: not cleave-opt %s -split-input-file --cleave-attach-loss="kind=mse logits=logits labels=labels" 2>&1 | FileCheck %s --check-prefix=MSE

// KIND: error: kind=hinge: the loss is cross-entropy or mse
// NO-LOGITS: error: cleave-attach-loss needs the name of the output the loss reads (logits=<result name>)
// NO-LABELS: error: cleave-attach-loss needs the name of the labels input (labels=<name>)
// MSE: error: logits=logits: the mean squared error reads a float output of static shape, but the result is 'tensor<4xi64>'
// MSE: error: labels=labels: the input has type 'tensor<4xf32>', but the mean squared error of 'logits' ('tensor<4x3xf32>') needs labels of type 'tensor<4x3xf32>'

// expected-error @+1 {{logits=logits: no result of @main is named 'logits'; its results are 'y', (unnamed)}}
func.func @main(%x: tensor<4x3xf32>) -> (tensor<4x3xf32> {cleave.name = "y"}, tensor<4x3xf32>) {
  return %x, %x : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// expected-error @+1 {{logits=logits: the cross-entropy reads float logits of static shape [..., classes], but the result is 'tensor<4xi64>'}}
func.func @main(%x: tensor<4xi64>) -> (tensor<4xi64> {cleave.name = "logits"}) {
  return %x : tensor<4xi64>
}

// -----

// expected-error @+1 {{logits=logits: the cross-entropy reads float logits of static shape [..., classes], but the result is 'tensor<f32>'}}
func.func @main(%x: tensor<f32>) -> (tensor<f32> {cleave.name = "logits"}) {
  return %x : tensor<f32>
}

// -----

// expected-error @+1 {{labels=labels: the input has type 'tensor<4xf32>', but the cross-entropy of 'logits' ('tensor<4x3xf32>') needs labels of type 'tensor<4xi64>'}}
func.func @main(%x: tensor<4x3xf32>, %labels: tensor<4xf32> {cleave.name = "labels"}) -> (tensor<4x3xf32> {cleave.name = "logits"}) {
  return %x : tensor<4x3xf32>
}

// -----

// expected-error @+1 {{labels=labels: the input has type 'tensor<4x1xi64>', but the cross-entropy of 'logits' ('tensor<4x3xf32>') needs labels of type 'tensor<4xi64>'}}
func.func @main(%x: tensor<4x3xf32>, %labels: tensor<4x1xi64> {cleave.name = "labels"}) -> (tensor<4x3xf32> {cleave.name = "logits"}) {
  return %x : tensor<4x3xf32>
}

// -----

// expected-error @+1 {{logits=logits: @main already has a result named 'loss'; differentiate it with loss=loss instead of attaching one}}
func.func @main(%x: tensor<4x3xf32>, %labels: tensor<4xi64> {cleave.name = "labels"}) -> (tensor<4x3xf32> {cleave.name = "logits"}, tensor<f32> {cleave.name = "loss"}) {
  %c = cleave.constant dense<0.0> : tensor<f32>
  return %x, %c : tensor<4x3xf32>, tensor<f32>
}
