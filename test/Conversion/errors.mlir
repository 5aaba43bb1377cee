// RUN: cleave-translate --print-device-program --split-input-file --verify-diagnostics %s

// expected-error @+1 {{graph input 0 has a dynamic shape 'tensor<?x4xf32>'; bind the graph inputs' dimensions (--input-shape)}}
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = cleave.relu %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// A shape computation that did not fold has no kernel.
func.func @main(%x: tensor<4xf32>, %n: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{'cleave.shape' op has no kernel: it cannot run on a device}}
  %s = cleave.shape %x {start = 0 : i64, end = 1 : i64} : (tensor<4xf32>) -> tensor<1xi64>
  return %x : tensor<4xf32>
}

// -----

// A range too long to fold has no kernel either; the error names its node.
func.func @main(%x: tensor<100000xf32>) -> tensor<100000xf32> {
  %start = cleave.constant dense<0.0> : tensor<f32>
  %limit = cleave.constant dense<100000.0> : tensor<f32>
  %delta = cleave.constant dense<1.0> : tensor<f32>
  // expected-error @unknown {{'cleave.range' op (node 'positions') has no kernel: it cannot run on a device (a range runs only when it folds to a constant, which it does up to 65,536 elements)}}
  %r = cleave.range %start, %limit, %delta : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<100000xf32> loc("positions")
  %y = cleave.add %x, %r : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<100000xf32>
  return %y : tensor<100000xf32>
}

// -----

// expected-error @+1 {{graph input 0 has rank 9; kernels support up to 8}}
func.func @main(%x: tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32> {
  %y = cleave.relu %x : tensor<1x1x1x1x1x1x1x1x2xf32>
  return %y : tensor<1x1x1x1x1x1x1x1x2xf32>
}

// -----

// expected-error @+1 {{several public functions; name the one to compile}}
module {
  func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{resize with coordinate_transformation_mode 'tf_crop_and_resize' has no kernel}}
  %y = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"} : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  return %y : tensor<1x1x8x8xf32>
}
