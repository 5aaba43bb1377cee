// RUN: cleave-opt %s | cleave-opt | FileCheck %s

// Every elementwise op parses, verifies and prints back; the broadcasting ops
// also check the inferred result types, which the verifier compares with the
// written ones.

// CHECK-LABEL: func.func @float_unary
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
func.func @float_unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[SQRT:.+]] = cleave.sqrt %[[X]] : tensor<4x8xf32>
  %0 = cleave.sqrt %x : tensor<4x8xf32>
  // CHECK: %[[RECIP:.+]] = cleave.reciprocal %[[SQRT]] : tensor<4x8xf32>
  %1 = cleave.reciprocal %0 : tensor<4x8xf32>
  // CHECK: %[[EXP:.+]] = cleave.exp %[[RECIP]] : tensor<4x8xf32>
  %2 = cleave.exp %1 : tensor<4x8xf32>
  // CHECK: %[[LOG:.+]] = cleave.log %[[EXP]] : tensor<4x8xf32>
  %3 = cleave.log %2 : tensor<4x8xf32>
  // CHECK: %[[ERF:.+]] = cleave.erf %[[LOG]] : tensor<4x8xf32>
  %4 = cleave.erf %3 : tensor<4x8xf32>
  // CHECK: %[[TANH:.+]] = cleave.tanh %[[ERF]] : tensor<4x8xf32>
  %5 = cleave.tanh %4 : tensor<4x8xf32>
  // CHECK: %[[SIG:.+]] = cleave.sigmoid %[[TANH]] : tensor<4x8xf32>
  %6 = cleave.sigmoid %5 : tensor<4x8xf32>
  // CHECK: %[[SIN:.+]] = cleave.sin %[[SIG]] : tensor<4x8xf32>
  %7 = cleave.sin %6 : tensor<4x8xf32>
  // CHECK: %[[COS:.+]] = cleave.cos %[[SIN]] : tensor<4x8xf32>
  %8 = cleave.cos %7 : tensor<4x8xf32>
  // CHECK: %[[FLOOR:.+]] = cleave.floor %[[COS]] : tensor<4x8xf32>
  %9 = cleave.floor %8 : tensor<4x8xf32>
  // CHECK: %[[CEIL:.+]] = cleave.ceil %[[FLOOR]] : tensor<4x8xf32>
  %10 = cleave.ceil %9 : tensor<4x8xf32>
  // CHECK: %[[SOFTPLUS:.+]] = cleave.softplus %[[CEIL]] : tensor<4x8xf32>
  %11 = cleave.softplus %10 : tensor<4x8xf32>
  // CHECK: %[[HSWISH:.+]] = cleave.hard_swish %[[SOFTPLUS]] : tensor<4x8xf32>
  %12 = cleave.hard_swish %11 : tensor<4x8xf32>
  // CHECK: %[[RELU:.+]] = cleave.relu %[[HSWISH]] : tensor<4x8xf32>
  %13 = cleave.relu %12 : tensor<4x8xf32>
  // CHECK: %[[NEG:.+]] = cleave.neg %[[RELU]] : tensor<4x8xf32>
  %14 = cleave.neg %13 : tensor<4x8xf32>
  // CHECK: %[[ABS:.+]] = cleave.abs %[[NEG]] : tensor<4x8xf32>
  %15 = cleave.abs %14 : tensor<4x8xf32>
  // CHECK: return %[[ABS]]
  return %15 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @integer_unary
// CHECK-SAME: (%[[X:.+]]: tensor<4xi64>, %[[B:.+]]: tensor<4xi1>)
func.func @integer_unary(%x: tensor<4xi64>, %b: tensor<4xi1>) -> (tensor<4xi64>, tensor<4xi1>) {
  // CHECK: %[[RELU:.+]] = cleave.relu %[[X]] : tensor<4xi64>
  %0 = cleave.relu %x : tensor<4xi64>
  // CHECK: %[[NEG:.+]] = cleave.neg %[[RELU]] : tensor<4xi64>
  %1 = cleave.neg %0 : tensor<4xi64>
  // CHECK: %[[ABS:.+]] = cleave.abs %[[NEG]] : tensor<4xi64>
  %2 = cleave.abs %1 : tensor<4xi64>
  // CHECK: %[[NOT:.+]] = cleave.not %[[B]] : tensor<4xi1>
  %3 = cleave.not %b : tensor<4xi1>
  // CHECK: return %[[ABS]], %[[NOT]]
  return %2, %3 : tensor<4xi64>, tensor<4xi1>
}

// CHECK-LABEL: func.func @rounding_and_sign
// CHECK-SAME: (%[[X:.+]]: tensor<4xf16>, %[[I:.+]]: tensor<4xi8>)
func.func @rounding_and_sign(%x: tensor<4xf16>, %i: tensor<4xi8>) -> (tensor<4xf16>, tensor<4xi8>) {
  // CHECK: %[[ROUND:.+]] = cleave.round %[[X]] : tensor<4xf16>
  %0 = cleave.round %x : tensor<4xf16>
  // CHECK: %[[SIGN:.+]] = cleave.sign %[[ROUND]] : tensor<4xf16>
  %1 = cleave.sign %0 : tensor<4xf16>
  // CHECK: %[[ISIGN:.+]] = cleave.sign %[[I]] : tensor<4xi8>
  %2 = cleave.sign %i : tensor<4xi8>
  // CHECK: return %[[SIGN]], %[[ISIGN]]
  return %1, %2 : tensor<4xf16>, tensor<4xi8>
}

// The classifications give booleans of the input's shape. IsInf's default
// flags (both infinities) are not printed.
// CHECK-LABEL: func.func @float_class
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xbf16>)
func.func @float_class(%x: tensor<2x3xbf16>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) {
  // CHECK: %[[NAN:.+]] = cleave.is_nan %[[X]] : tensor<2x3xbf16> -> tensor<2x3xi1>
  %0 = cleave.is_nan %x : tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK: %[[INF:.+]] = cleave.is_inf %[[X]] : tensor<2x3xbf16> -> tensor<2x3xi1>
  %1 = cleave.is_inf %x {detect_positive = true} : tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK: %[[NEGINF:.+]] = cleave.is_inf %[[X]] {detect_positive = false} : tensor<2x3xbf16> -> tensor<2x3xi1>
  %2 = cleave.is_inf %x {detect_positive = false} : tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK: return %[[NAN]], %[[INF]], %[[NEGINF]]
  return %0, %1, %2 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>
}

// CHECK-LABEL: func.func @parameterised_unary
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>)
func.func @parameterised_unary(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: %[[LRELU:.+]] = cleave.leaky_relu %[[X]] {alpha = 0.00999999977 : f32} : tensor<8xf32>
  %0 = cleave.leaky_relu %x {alpha = 1.000000e-02 : f32} : tensor<8xf32>
  // CHECK: %[[ELU:.+]] = cleave.elu %[[LRELU]] {alpha = 1.000000e+00 : f32} : tensor<8xf32>
  %1 = cleave.elu %0 {alpha = 1.000000e+00 : f32} : tensor<8xf32>
  // The default approximation is not printed.
  // CHECK: %[[GELU:.+]] = cleave.gelu %[[ELU]] : tensor<8xf32>
  %2 = cleave.gelu %1 {approximate = "none"} : tensor<8xf32>
  // CHECK: %[[GELU_TANH:.+]] = cleave.gelu %[[GELU]] {approximate = "tanh"} : tensor<8xf32>
  %3 = cleave.gelu %2 {approximate = "tanh"} : tensor<8xf32>
  // CHECK: %[[HSIG:.+]] = cleave.hard_sigmoid %[[GELU_TANH]] {alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : tensor<8xf32>
  %4 = cleave.hard_sigmoid %3 {alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : tensor<8xf32>
  // CHECK: %[[CLIP:.+]] = cleave.clip %[[HSIG]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<8xf32>
  %5 = cleave.clip %4 {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : tensor<8xf32>
  // CHECK: %[[CLIP_MIN:.+]] = cleave.clip %[[CLIP]] {min = -1.000000e+00 : f64} : tensor<8xf32>
  %6 = cleave.clip %5 {min = -1.000000e+00 : f64} : tensor<8xf32>
  // CHECK: %[[CLIP_NONE:.+]] = cleave.clip %[[CLIP_MIN]] : tensor<8xf32>
  %7 = cleave.clip %6 : tensor<8xf32>
  // CHECK: return %[[CLIP_NONE]]
  return %7 : tensor<8xf32>
}

// CHECK-LABEL: func.func @integer_clip
func.func @integer_clip(%x: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: cleave.clip %{{.+}} {max = 1.270000e+02 : f64, min = -1.280000e+02 : f64} : tensor<4xi32>
  %0 = cleave.clip %x {min = -1.280000e+02 : f64, max = 1.270000e+02 : f64} : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.+]]: tensor<4xi64>)
func.func @cast(%x: tensor<4xi64>) -> tensor<4xbf16> {
  // CHECK: %[[F:.+]] = cleave.cast %[[X]] : tensor<4xi64> to tensor<4xf32>
  %0 = cleave.cast %x : tensor<4xi64> to tensor<4xf32>
  // CHECK: %[[H:.+]] = cleave.cast %[[F]] : tensor<4xf32> to tensor<4xbf16>
  %1 = cleave.cast %0 : tensor<4xf32> to tensor<4xbf16>
  // CHECK: return %[[H]]
  return %1 : tensor<4xbf16>
}

// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%[[A:.+]]: tensor<2x8xf32>, %[[B:.+]]: tensor<8xf32>)
func.func @arithmetic(%a: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // CHECK: %[[ADD:.+]] = cleave.add %[[A]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %0 = cleave.add %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[SUB:.+]] = cleave.sub %[[B]], %[[ADD]] : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = cleave.sub %b, %0 : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[MUL:.+]] = cleave.mul %[[SUB]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %2 = cleave.mul %1, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[DIV:.+]] = cleave.div %[[MUL]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %3 = cleave.div %2, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[POW:.+]] = cleave.pow %[[DIV]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %4 = cleave.pow %3, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[MIN:.+]] = cleave.min %[[POW]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %5 = cleave.min %4, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[MAX:.+]] = cleave.max %[[MIN]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %6 = cleave.max %5, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: return %[[MAX]]
  return %6 : tensor<2x8xf32>
}

// Mod broadcasts like the arithmetic ops; `fmod = false` is the default.
// CHECK-LABEL: func.func @mod
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xi32>, %[[B:.+]]: tensor<4xi32>, %[[X:.+]]: tensor<3xf64>, %[[Y:.+]]: tensor<f64>)
func.func @mod(%a: tensor<2x4xi32>, %b: tensor<4xi32>, %x: tensor<3xf64>, %y: tensor<f64>) -> (tensor<2x4xi32>, tensor<3xf64>) {
  // CHECK: %[[M:.+]] = cleave.mod %[[A]], %[[B]] : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  %0 = cleave.mod %a, %b {fmod = false} : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  // CHECK: %[[F:.+]] = cleave.mod %[[X]], %[[Y]] {fmod = true} : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  %1 = cleave.mod %x, %y {fmod = true} : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  // CHECK: return %[[M]], %[[F]]
  return %0, %1 : tensor<2x4xi32>, tensor<3xf64>
}

// Both operands broadcast into a shape neither has.
// CHECK-LABEL: func.func @bidirectional_broadcast
func.func @bidirectional_broadcast(%a: tensor<3x1x5xi64>, %b: tensor<4x1xi64>) -> tensor<3x4x5xi64> {
  // CHECK: cleave.add %{{.+}}, %{{.+}} : (tensor<3x1x5xi64>, tensor<4x1xi64>) -> tensor<3x4x5xi64>
  %0 = cleave.add %a, %b : (tensor<3x1x5xi64>, tensor<4x1xi64>) -> tensor<3x4x5xi64>
  return %0 : tensor<3x4x5xi64>
}

// Rank-0 operands broadcast to anything.
// CHECK-LABEL: func.func @scalar_broadcast
func.func @scalar_broadcast(%a: tensor<ui8>, %b: tensor<2x3xui8>) -> tensor<2x3xui8> {
  // CHECK: cleave.mul %{{.+}}, %{{.+}} : (tensor<ui8>, tensor<2x3xui8>) -> tensor<2x3xui8>
  %0 = cleave.mul %a, %b : (tensor<ui8>, tensor<2x3xui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// A dynamic size takes a static size above 1 and stays dynamic against 1 or
// another dynamic size.
// CHECK-LABEL: func.func @dynamic_broadcast
func.func @dynamic_broadcast(%a: tensor<?x1x?xf16>, %b: tensor<4x?x?xf16>) -> tensor<4x?x?xf16> {
  // CHECK: cleave.sub %{{.+}}, %{{.+}} : (tensor<?x1x?xf16>, tensor<4x?x?xf16>) -> tensor<4x?x?xf16>
  %0 = cleave.sub %a, %b : (tensor<?x1x?xf16>, tensor<4x?x?xf16>) -> tensor<4x?x?xf16>
  return %0 : tensor<4x?x?xf16>
}

// CHECK-LABEL: func.func @compare
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xi64>, %[[B:.+]]: tensor<4xi64>)
func.func @compare(%a: tensor<2x4xi64>, %b: tensor<4xi64>) -> (tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>) {
  // CHECK: %[[EQ:.+]] = cleave.equal %[[A]], %[[B]] : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  %0 = cleave.equal %a, %b : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  // CHECK: %[[LT:.+]] = cleave.less %[[A]], %[[B]] : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  %1 = cleave.less %a, %b : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  // CHECK: %[[LE:.+]] = cleave.less_equal %[[A]], %[[B]] : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  %2 = cleave.less_equal %a, %b : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  // CHECK: %[[GT:.+]] = cleave.greater %[[A]], %[[B]] : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  %3 = cleave.greater %a, %b : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  // CHECK: %[[GE:.+]] = cleave.greater_equal %[[A]], %[[B]] : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  %4 = cleave.greater_equal %a, %b : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  // CHECK: return %[[EQ]], %[[LT]], %[[LE]], %[[GT]], %[[GE]]
  return %0, %1, %2, %3, %4 : tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>
}

// CHECK-LABEL: func.func @float_compare
func.func @float_compare(%a: tensor<3xf32>, %b: tensor<f32>) -> tensor<3xi1> {
  // CHECK: cleave.less %{{.+}}, %{{.+}} : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  %0 = cleave.less %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// CHECK-LABEL: func.func @logical
// CHECK-SAME: (%[[A:.+]]: tensor<4xi1>, %[[B:.+]]: tensor<2x1xi1>)
func.func @logical(%a: tensor<4xi1>, %b: tensor<2x1xi1>) -> tensor<2x4xi1> {
  // CHECK: %[[AND:.+]] = cleave.and %[[A]], %[[B]] : (tensor<4xi1>, tensor<2x1xi1>) -> tensor<2x4xi1>
  %0 = cleave.and %a, %b : (tensor<4xi1>, tensor<2x1xi1>) -> tensor<2x4xi1>
  // CHECK: %[[OR:.+]] = cleave.or %[[AND]], %[[A]] : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  %1 = cleave.or %0, %a : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  // CHECK: return %[[OR]]
  return %1 : tensor<2x4xi1>
}

// The condition and both values broadcast together.
// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[C:.+]]: tensor<2x1xi1>, %[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<f32>)
func.func @where(%c: tensor<2x1xi1>, %x: tensor<4xf32>, %y: tensor<f32>) -> tensor<2x4xf32> {
  // CHECK: %[[W:.+]] = cleave.where %[[C]], %[[X]], %[[Y]] : (tensor<2x1xi1>, tensor<4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %0 = cleave.where %c, %x, %y : (tensor<2x1xi1>, tensor<4xf32>, tensor<f32>) -> tensor<2x4xf32>
  // CHECK: return %[[W]]
  return %0 : tensor<2x4xf32>
}
