// RUN: cleave-opt %s -canonicalize | FileCheck %s

// Constant folding of the elementwise ops: integer results are exact (ONNX
// shape computations depend on it), undefined integer results stay unfolded,
// and folds never materialise large non-splat tensors.

//===----------------------------------------------------------------------===//
// Integer arithmetic
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add_broadcast_scalar
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[11, 12, 13]> : tensor<3xi64>
// CHECK-NEXT: return %[[C]]
func.func @add_broadcast_scalar() -> tensor<3xi64> {
  %a = cleave.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = cleave.constant dense<10> : tensor<i64>
  %0 = cleave.add %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// Both operands broadcast: a column against a row.
// CHECK-LABEL: func.func @add_broadcast_both
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[11, 21, 31], [12, 22, 32]]> : tensor<2x3xi32>
// CHECK-NEXT: return %[[C]]
func.func @add_broadcast_both() -> tensor<2x3xi32> {
  %a = cleave.constant dense<[[1], [2]]> : tensor<2x1xi32>
  %b = cleave.constant dense<[10, 20, 30]> : tensor<3xi32>
  %0 = cleave.add %a, %b : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @sub_mul
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[-6, 0, 6]> : tensor<3xi64>
// CHECK-NEXT: return %[[C]]
func.func @sub_mul() -> tensor<3xi64> {
  %a = cleave.constant dense<[1, 3, 5]> : tensor<3xi64>
  %b = cleave.constant dense<3> : tensor<i64>
  %c = cleave.constant dense<3> : tensor<3xi64>
  %0 = cleave.sub %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %1 = cleave.mul %0, %c : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %1 : tensor<3xi64>
}

// Signed overflow wraps around like the two's-complement hardware does.
// CHECK-LABEL: func.func @add_wraps
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<-128> : tensor<i8>
func.func @add_wraps() -> tensor<i8> {
  %a = cleave.constant dense<127> : tensor<i8>
  %b = cleave.constant dense<1> : tensor<i8>
  %0 = cleave.add %a, %b : (tensor<i8>, tensor<i8>) -> tensor<i8>
  return %0 : tensor<i8>
}

// ONNX integer Div truncates toward zero (not floor).
// CHECK-LABEL: func.func @div_truncates
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[3, -3, -3, 3]> : tensor<4xi64>
// CHECK-NEXT: return %[[C]]
func.func @div_truncates() -> tensor<4xi64> {
  %a = cleave.constant dense<[7, -7, 7, -7]> : tensor<4xi64>
  %b = cleave.constant dense<[2, 2, -2, -2]> : tensor<4xi64>
  %0 = cleave.div %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// CHECK-LABEL: func.func @div_unsigned
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[83, 0]> : tensor<2xui8>
func.func @div_unsigned() -> tensor<2xui8> {
  %a = cleave.constant dense<[250, 2]> : tensor<2xui8>
  %b = cleave.constant dense<3> : tensor<ui8>
  %0 = cleave.div %a, %b : (tensor<2xui8>, tensor<ui8>) -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// Division by zero is defined as the kernels define it (0), so it folds.
// CHECK-LABEL: func.func @div_by_zero
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[2, 0]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @div_by_zero() -> tensor<2xi64> {
  %a = cleave.constant dense<[4, 5]> : tensor<2xi64>
  %b = cleave.constant dense<[2, 0]> : tensor<2xi64>
  %0 = cleave.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// MIN / -1 overflows; defined as MIN, as the kernels compute it.
// CHECK-LABEL: func.func @div_overflow
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<-2147483648> : tensor<i32>
// CHECK-NEXT: return %[[C]]
func.func @div_overflow() -> tensor<i32> {
  %a = cleave.constant dense<-2147483648> : tensor<i32>
  %b = cleave.constant dense<-1> : tensor<i32>
  %0 = cleave.div %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// CHECK-LABEL: func.func @pow_integer
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[1024, 27, -8, 1]> : tensor<4xi64>
func.func @pow_integer() -> tensor<4xi64> {
  %a = cleave.constant dense<[2, 3, -2, 5]> : tensor<4xi64>
  %b = cleave.constant dense<[10, 3, 3, 0]> : tensor<4xi64>
  %0 = cleave.pow %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// 3^39 needs all 62 bits: a detour through double would round it.
// CHECK-LABEL: func.func @pow_integer_exact
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<4052555153018976267> : tensor<i64>
func.func @pow_integer_exact() -> tensor<i64> {
  %a = cleave.constant dense<3> : tensor<i64>
  %b = cleave.constant dense<39> : tensor<i64>
  %0 = cleave.pow %a, %b : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// A negative exponent truncates the fraction toward zero; only 1 and -1 keep
// a non-zero result.
// CHECK-LABEL: func.func @pow_negative_exponent
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[0, 1, -1, 1, 0]> : tensor<5xi32>
func.func @pow_negative_exponent() -> tensor<5xi32> {
  %a = cleave.constant dense<[2, 1, -1, -1, -3]> : tensor<5xi32>
  %b = cleave.constant dense<[-1, -5, -3, -2, -1]> : tensor<5xi32>
  %0 = cleave.pow %a, %b : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// CHECK-LABEL: func.func @pow_zero_negative_exponent
// CHECK: %[[P:.+]] = cleave.pow
// CHECK-NEXT: return %[[P]]
func.func @pow_zero_negative_exponent() -> tensor<i32> {
  %a = cleave.constant dense<0> : tensor<i32>
  %b = cleave.constant dense<-1> : tensor<i32>
  %0 = cleave.pow %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// Min and max read signless integers as signed and ui8 as unsigned.
// CHECK-LABEL: func.func @min_max_signedness
// CHECK-DAG: %[[SMAX:.+]] = cleave.constant dense<[3, 5]> : tensor<2xi8>
// CHECK-DAG: %[[UMAX:.+]] = cleave.constant dense<[255, 5]> : tensor<2xui8>
// CHECK-DAG: %[[SMIN:.+]] = cleave.constant dense<[-1, 3]> : tensor<2xi8>
// CHECK: return %[[SMAX]], %[[UMAX]], %[[SMIN]]
func.func @min_max_signedness() -> (tensor<2xi8>, tensor<2xui8>, tensor<2xi8>) {
  %a = cleave.constant dense<[-1, 5]> : tensor<2xi8>
  %b = cleave.constant dense<3> : tensor<i8>
  %ua = cleave.constant dense<[255, 5]> : tensor<2xui8>
  %ub = cleave.constant dense<3> : tensor<ui8>
  %0 = cleave.max %a, %b : (tensor<2xi8>, tensor<i8>) -> tensor<2xi8>
  %1 = cleave.max %ua, %ub : (tensor<2xui8>, tensor<ui8>) -> tensor<2xui8>
  %2 = cleave.min %a, %b : (tensor<2xi8>, tensor<i8>) -> tensor<2xi8>
  return %0, %1, %2 : tensor<2xi8>, tensor<2xui8>, tensor<2xi8>
}

// The shape arithmetic of a multi-head attention reshape:
// [batch, seq, hidden] -> [batch, seq, heads, hidden / heads].
// CHECK-LABEL: func.func @shape_arithmetic
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[2, 16, 4, 16]> : tensor<4xi64>
// CHECK-NEXT: return %[[C]]
func.func @shape_arithmetic() -> tensor<4xi64> {
  %shape = cleave.constant dense<[2, 16, 4, 64]> : tensor<4xi64>
  %divisor = cleave.constant dense<[1, 1, 1, 4]> : tensor<4xi64>
  %zero = cleave.constant dense<0> : tensor<i64>
  %0 = cleave.div %shape, %divisor : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = cleave.add %0, %zero : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %1 : tensor<4xi64>
}

//===----------------------------------------------------------------------===//
// Float arithmetic
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @float_f32
// CHECK-DAG: %[[DIV:.+]] = cleave.constant dense<[2.500000e-01, 7.500000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[SUB:.+]] = cleave.constant dense<[-3.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK: return %[[DIV]], %[[SUB]]
func.func @float_f32() -> (tensor<2xf32>, tensor<2xf32>) {
  %a = cleave.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %b = cleave.constant dense<4.0> : tensor<f32>
  %0 = cleave.div %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = cleave.sub %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// Float division by zero is IEEE infinity, which is defined: it folds.
// CHECK-LABEL: func.func @float_div_by_zero
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<0x7F800000> : tensor<f32>
func.func @float_div_by_zero() -> tensor<f32> {
  %a = cleave.constant dense<1.0> : tensor<f32>
  %b = cleave.constant dense<0.0> : tensor<f32>
  %0 = cleave.div %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @float_f16_bf16_f64
// CHECK-DAG: %[[H:.+]] = cleave.constant dense<[1.750000e+00, 2.250000e+00]> : tensor<2xf16>
// CHECK-DAG: %[[B:.+]] = cleave.constant dense<1.500000e+00> : tensor<4xbf16>
// CHECK-DAG: %[[D:.+]] = cleave.constant dense<1.4142135623730951> : tensor<f64>
// CHECK: return %[[H]], %[[B]], %[[D]]
func.func @float_f16_bf16_f64() -> (tensor<2xf16>, tensor<4xbf16>, tensor<f64>) {
  %h = cleave.constant dense<[1.5, 2.0]> : tensor<2xf16>
  %q = cleave.constant dense<0.25> : tensor<f16>
  %b = cleave.constant dense<3.0> : tensor<4xbf16>
  %half = cleave.constant dense<0.5> : tensor<bf16>
  %two = cleave.constant dense<2.0> : tensor<f64>
  %sqrt = cleave.constant dense<0.5> : tensor<f64>
  %0 = cleave.add %h, %q : (tensor<2xf16>, tensor<f16>) -> tensor<2xf16>
  %1 = cleave.mul %b, %half : (tensor<4xbf16>, tensor<bf16>) -> tensor<4xbf16>
  %2 = cleave.pow %two, %sqrt : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %0, %1, %2 : tensor<2xf16>, tensor<4xbf16>, tensor<f64>
}

// Min and max propagate NaN.
// CHECK-LABEL: func.func @float_min_max_nan
// CHECK-DAG: %[[MAX:.+]] = cleave.constant dense<[0x7FC00000, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[MIN:.+]] = cleave.constant dense<[0x7FC00000, 1.000000e+00]> : tensor<2xf32>
// CHECK: return %[[MAX]], %[[MIN]]
func.func @float_min_max_nan() -> (tensor<2xf32>, tensor<2xf32>) {
  %a = cleave.constant dense<[0x7FC00000, 2.0]> : tensor<2xf32>
  %b = cleave.constant dense<1.0> : tensor<f32>
  %0 = cleave.max %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = cleave.min %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// Neutral operands
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @neutral_operands
// CHECK-SAME: (%[[X:.+]]: tensor<4xi64>, %[[F:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xi1>)
// CHECK-NOT: cleave.add
// CHECK-NOT: cleave.sub
// CHECK-NOT: cleave.mul
// CHECK-NOT: cleave.div
// CHECK-NOT: cleave.pow
// CHECK-NOT: cleave.and
// CHECK-NOT: cleave.or
// CHECK-NOT: cleave.min
// CHECK: return %[[X]], %[[X]], %[[F]], %[[F]], %[[F]], %[[F]], %[[F]], %[[B]], %[[B]], %[[X]]
func.func @neutral_operands(%x: tensor<4xi64>, %f: tensor<4xf32>, %b: tensor<4xi1>)
    -> (tensor<4xi64>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi64>) {
  %zero = cleave.constant dense<0> : tensor<i64>
  %negzero = cleave.constant dense<-0.0> : tensor<f32>
  %fzero = cleave.constant dense<0.0> : tensor<f32>
  %one = cleave.constant dense<1.0> : tensor<f32>
  %true = cleave.constant dense<true> : tensor<i1>
  %false = cleave.constant dense<false> : tensor<i1>
  %0 = cleave.add %zero, %x : (tensor<i64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = cleave.sub %x, %zero : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  %2 = cleave.add %f, %negzero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = cleave.sub %f, %fzero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = cleave.mul %one, %f : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = cleave.div %f, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = cleave.pow %f, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %7 = cleave.and %b, %true : (tensor<4xi1>, tensor<i1>) -> tensor<4xi1>
  %8 = cleave.or %false, %b : (tensor<i1>, tensor<4xi1>) -> tensor<4xi1>
  %9 = cleave.min %x, %x : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xi64>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi64>
}

// x + 0.0 is not x (for x = -0.0), and a neutral operand that widens the
// result by broadcasting does not make the op an identity.
// CHECK-LABEL: func.func @not_neutral
// CHECK: %[[ADD:.+]] = cleave.add
// CHECK: %[[MUL:.+]] = cleave.mul
// CHECK: return %[[ADD]], %[[MUL]]
func.func @not_neutral(%f: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  %zero = cleave.constant dense<0.0> : tensor<f32>
  %ones = cleave.constant dense<1.0> : tensor<2x4xf32>
  %0 = cleave.add %f, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = cleave.mul %f, %ones : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<4xf32>, tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// Comparisons and logic
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @compare_integer
// CHECK-DAG: %[[EQ:.+]] = cleave.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[LT:.+]] = cleave.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: %[[LE:.+]] = cleave.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[GT:.+]] = cleave.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[GE:.+]] = cleave.constant dense<[false, true, true]> : tensor<3xi1>
// CHECK: return %[[EQ]], %[[LT]], %[[LE]], %[[GT]], %[[GE]]
func.func @compare_integer() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %a = cleave.constant dense<[-5, 2, 7]> : tensor<3xi64>
  %b = cleave.constant dense<2> : tensor<i64>
  %0 = cleave.equal %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %1 = cleave.less %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %2 = cleave.less_equal %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %3 = cleave.greater %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %4 = cleave.greater_equal %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  return %0, %1, %2, %3, %4 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// 255 is -1 as i8 and 255 as ui8.
// CHECK-LABEL: func.func @compare_signedness
// CHECK-DAG: %[[SIGNED:.+]] = cleave.constant dense<true> : tensor<i1>
// CHECK-DAG: %[[UNSIGNED:.+]] = cleave.constant dense<false> : tensor<i1>
// CHECK: return %[[SIGNED]], %[[UNSIGNED]]
func.func @compare_signedness() -> (tensor<i1>, tensor<i1>) {
  %a = cleave.constant dense<-1> : tensor<i8>
  %b = cleave.constant dense<1> : tensor<i8>
  %ua = cleave.constant dense<255> : tensor<ui8>
  %ub = cleave.constant dense<1> : tensor<ui8>
  %0 = cleave.less %a, %b : (tensor<i8>, tensor<i8>) -> tensor<i1>
  %1 = cleave.less %ua, %ub : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
  return %0, %1 : tensor<i1>, tensor<i1>
}

// Every comparison with NaN is false.
// CHECK-LABEL: func.func @compare_float_nan
// CHECK-DAG: %[[LT:.+]] = cleave.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[EQ:.+]] = cleave.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[GE:.+]] = cleave.constant dense<[false, true, true]> : tensor<3xi1>
// CHECK: return %[[LT]], %[[EQ]], %[[GE]]
func.func @compare_float_nan() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %a = cleave.constant dense<[0x7FC00000, 1.0, 3.0]> : tensor<3xf32>
  %b = cleave.constant dense<[0x7FC00000, 2.0, 3.0]> : tensor<3xf32>
  %0 = cleave.less %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %1 = cleave.equal %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %2 = cleave.greater_equal %b, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0, %1, %2 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// CHECK-LABEL: func.func @logical
// CHECK-DAG: %[[AND:.+]] = cleave.constant dense<{{\[}}[false, false], [true, false]]> : tensor<2x2xi1>
// CHECK-DAG: %[[OR:.+]] = cleave.constant dense<{{\[}}[true, false], [true, true]]> : tensor<2x2xi1>
// CHECK-DAG: %[[NOT:.+]] = cleave.constant dense<[false, true]> : tensor<2xi1>
// CHECK: return %[[AND]], %[[OR]], %[[NOT]]
func.func @logical() -> (tensor<2x2xi1>, tensor<2x2xi1>, tensor<2xi1>) {
  %row = cleave.constant dense<[true, false]> : tensor<2xi1>
  %col = cleave.constant dense<[[false], [true]]> : tensor<2x1xi1>
  %0 = cleave.and %row, %col : (tensor<2xi1>, tensor<2x1xi1>) -> tensor<2x2xi1>
  %1 = cleave.or %row, %col : (tensor<2xi1>, tensor<2x1xi1>) -> tensor<2x2xi1>
  %2 = cleave.not %row : tensor<2xi1>
  return %0, %1, %2 : tensor<2x2xi1>, tensor<2x2xi1>, tensor<2xi1>
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @neg
// CHECK-DAG: %[[I:.+]] = cleave.constant dense<[-3, 4, -128]> : tensor<3xi8>
// CHECK-DAG: %[[F:.+]] = cleave.constant dense<[-1.500000e+00, -0.000000e+00]> : tensor<2xf16>
// CHECK: return %[[I]], %[[F]]
func.func @neg() -> (tensor<3xi8>, tensor<2xf16>) {
  %i = cleave.constant dense<[3, -4, -128]> : tensor<3xi8>
  %f = cleave.constant dense<[1.5, 0.0]> : tensor<2xf16>
  %0 = cleave.neg %i : tensor<3xi8>
  %1 = cleave.neg %f : tensor<2xf16>
  return %0, %1 : tensor<3xi8>, tensor<2xf16>
}

// CHECK-LABEL: func.func @involutions
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xi1>)
// CHECK-NEXT: return %[[X]], %[[B]]
func.func @involutions(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0 = cleave.neg %x : tensor<4xf32>
  %1 = cleave.neg %0 : tensor<4xf32>
  %2 = cleave.not %b : tensor<4xi1>
  %3 = cleave.not %2 : tensor<4xi1>
  return %1, %3 : tensor<4xf32>, tensor<4xi1>
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @cast_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<4xi64>)
// CHECK-NEXT: return %[[X]]
func.func @cast_same_type(%x: tensor<4xi64>) -> tensor<4xi64> {
  %0 = cleave.cast %x : tensor<4xi64> to tensor<4xi64>
  return %0 : tensor<4xi64>
}

// CHECK-LABEL: func.func @cast_integers
// CHECK-DAG: %[[TRUNC:.+]] = cleave.constant dense<[44, -1]> : tensor<2xi8>
// CHECK-DAG: %[[SEXT:.+]] = cleave.constant dense<[-1, 127]> : tensor<2xi64>
// CHECK-DAG: %[[ZEXT:.+]] = cleave.constant dense<[255, 1]> : tensor<2xi64>
// CHECK-DAG: %[[BOOL:.+]] = cleave.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[FROM_BOOL:.+]] = cleave.constant dense<[1, 0]> : tensor<2xi32>
// CHECK: return %[[TRUNC]], %[[SEXT]], %[[ZEXT]], %[[BOOL]], %[[FROM_BOOL]]
func.func @cast_integers() -> (tensor<2xi8>, tensor<2xi64>, tensor<2xi64>, tensor<2xi1>, tensor<2xi32>) {
  %wide = cleave.constant dense<[300, -1]> : tensor<2xi64>
  %narrow = cleave.constant dense<[-1, 127]> : tensor<2xi8>
  %unsigned = cleave.constant dense<[255, 1]> : tensor<2xui8>
  %ints = cleave.constant dense<[-7, 0]> : tensor<2xi32>
  %bools = cleave.constant dense<[true, false]> : tensor<2xi1>
  %0 = cleave.cast %wide : tensor<2xi64> to tensor<2xi8>
  %1 = cleave.cast %narrow : tensor<2xi8> to tensor<2xi64>
  %2 = cleave.cast %unsigned : tensor<2xui8> to tensor<2xi64>
  %3 = cleave.cast %ints : tensor<2xi32> to tensor<2xi1>
  %4 = cleave.cast %bools : tensor<2xi1> to tensor<2xi32>
  return %0, %1, %2, %3, %4 : tensor<2xi8>, tensor<2xi64>, tensor<2xi64>, tensor<2xi1>, tensor<2xi32>
}

// Float to integer truncates toward zero; to bool is x != 0; bool and
// unsigned sources convert to non-negative floats.
// CHECK-LABEL: func.func @cast_floats
// CHECK-DAG: %[[TO_INT:.+]] = cleave.constant dense<[-2, 2, 0]> : tensor<3xi32>
// CHECK-DAG: %[[TO_BOOL:.+]] = cleave.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[FROM_BOOL:.+]] = cleave.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[FROM_UNSIGNED:.+]] = cleave.constant dense<2.550000e+02> : tensor<f32>
// CHECK-DAG: %[[TO_HALF:.+]] = cleave.constant dense<[-2.699220e+00, 2.699220e+00, -0.000000e+00]> : tensor<3xf16>
// CHECK: return %[[TO_INT]], %[[TO_BOOL]], %[[FROM_BOOL]], %[[FROM_UNSIGNED]], %[[TO_HALF]]
func.func @cast_floats() -> (tensor<3xi32>, tensor<3xi1>, tensor<2xf32>, tensor<f32>, tensor<3xf16>) {
  %f = cleave.constant dense<[-2.7, 2.7, -0.0]> : tensor<3xf32>
  %bools = cleave.constant dense<[true, false]> : tensor<2xi1>
  %u = cleave.constant dense<255> : tensor<ui8>
  %0 = cleave.cast %f : tensor<3xf32> to tensor<3xi32>
  %g = cleave.constant dense<[-0.5, 0x7FC00000, 0.0]> : tensor<3xf32>
  %1 = cleave.cast %g : tensor<3xf32> to tensor<3xi1>
  %2 = cleave.cast %bools : tensor<2xi1> to tensor<2xf32>
  %3 = cleave.cast %u : tensor<ui8> to tensor<f32>
  %4 = cleave.cast %f : tensor<3xf32> to tensor<3xf16>
  return %0, %1, %2, %3, %4 : tensor<3xi32>, tensor<3xi1>, tensor<2xf32>, tensor<f32>, tensor<3xf16>
}

// NaN and out-of-range values have no integer; the cast stays.
// CHECK-LABEL: func.func @cast_undefined
// CHECK: %[[NAN:.+]] = cleave.cast
// CHECK: %[[BIG:.+]] = cleave.cast
// CHECK: return %[[NAN]], %[[BIG]]
func.func @cast_undefined() -> (tensor<i32>, tensor<ui8>) {
  %nan = cleave.constant dense<0x7FC00000> : tensor<f32>
  %big = cleave.constant dense<256.0> : tensor<f32>
  %0 = cleave.cast %nan : tensor<f32> to tensor<i32>
  %1 = cleave.cast %big : tensor<f32> to tensor<ui8>
  return %0, %1 : tensor<i32>, tensor<ui8>
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @where_constants
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<{{\[}}[1.000000e+00, -1.000000e+00], [-2.000000e+00, 2.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @where_constants() -> tensor<2x2xf32> {
  %c = cleave.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
  %x = cleave.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = cleave.constant dense<[[-1.0], [-2.0]]> : tensor<2x1xf32>
  %0 = cleave.where %c, %x, %y : (tensor<2x2xi1>, tensor<2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// A splat condition picks a value, constant or not.
// CHECK-LABEL: func.func @where_splat_condition
// CHECK-SAME: (%[[X:.+]]: tensor<4xi64>, %[[Y:.+]]: tensor<4xi64>)
// CHECK-NEXT: return %[[X]], %[[Y]]
func.func @where_splat_condition(%x: tensor<4xi64>, %y: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %t = cleave.constant dense<true> : tensor<4xi1>
  %f = cleave.constant dense<false> : tensor<i1>
  %0 = cleave.where %t, %x, %y : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = cleave.where %f, %x, %y : (tensor<i1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0, %1 : tensor<4xi64>, tensor<4xi64>
}

// When the condition widens the result, only a constant pick can be
// broadcast.
// CHECK-LABEL: func.func @where_splat_condition_broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<2xi64>)
// CHECK-DAG: %[[C:.+]] = cleave.constant dense<{{\[}}[7, 8], [7, 8]]> : tensor<2x2xi64>
// CHECK-DAG: %[[W:.+]] = cleave.where %{{.+}}, %[[X]], %{{.+}} : (tensor<2x2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xi64>
// CHECK: return %[[C]], %[[W]]
func.func @where_splat_condition_broadcast(%x: tensor<2xi64>) -> (tensor<2x2xi64>, tensor<2x2xi64>) {
  %t = cleave.constant dense<true> : tensor<2x2xi1>
  %k = cleave.constant dense<[7, 8]> : tensor<2xi64>
  %0 = cleave.where %t, %k, %x : (tensor<2x2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %1 = cleave.where %t, %x, %k : (tensor<2x2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  return %0, %1 : tensor<2x2xi64>, tensor<2x2xi64>
}

// CHECK-LABEL: func.func @where_same_values
// CHECK-SAME: (%[[C:.+]]: tensor<4xi1>, %[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @where_same_values(%c: tensor<4xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cleave.where %c, %x, %x : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Size limits
//===----------------------------------------------------------------------===//

// A splat result folds however large it is.
// CHECK-LABEL: func.func @large_splat
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<3.000000e+00> : tensor<1024x1024xf32>
// CHECK-NEXT: return %[[C]]
func.func @large_splat() -> tensor<1024x1024xf32> {
  %a = cleave.constant dense<1.0> : tensor<1024x1024xf32>
  %b = cleave.constant dense<2.0> : tensor<f32>
  %0 = cleave.add %a, %b : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// A non-splat result of 8192 elements stays unfolded.
// CHECK-LABEL: func.func @large_non_splat
// CHECK: %[[A:.+]] = cleave.add
// CHECK-NEXT: return %[[A]]
func.func @large_non_splat() -> tensor<4096x2xi64> {
  %a = cleave.constant dense<[1, 2]> : tensor<2xi64>
  %b = cleave.constant dense<1> : tensor<4096x2xi64>
  %0 = cleave.add %a, %b : (tensor<2xi64>, tensor<4096x2xi64>) -> tensor<4096x2xi64>
  return %0 : tensor<4096x2xi64>
}

//===----------------------------------------------------------------------===//
// Roots, rounding, sign and classification
//===----------------------------------------------------------------------===//

// sqrt(2 / pi), as exporters write GELU's constant: correctly rounded (as
// numpy.sqrt of the float32 0.636619746). The root of a negative number is a
// NaN of either sign.
// CHECK-LABEL: func.func @sqrt_float
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[0.797884523, 0x{{[7F]}}FC00000, -0.000000e+00, 0x7F800000]> : tensor<4xf32>
// CHECK-NEXT: return %[[C]]
func.func @sqrt_float() -> tensor<4xf32> {
  %a = cleave.constant dense<[0.636619746, -1.0, -0.0, 0x7F800000]> : tensor<4xf32>
  %0 = cleave.sqrt %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Halves round to even; NaN, infinities and signed zeros stay.
// CHECK-LABEL: func.func @round_half_to_even
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[2.000000e+00, 2.000000e+00, -2.000000e+00, -0.000000e+00, 0.000000e+00, 4.000000e+00, 0x7FC00000, 0xFF800000]> : tensor<8xf32>
// CHECK-NEXT: return %[[C]]
func.func @round_half_to_even() -> tensor<8xf32> {
  %a = cleave.constant dense<[2.5, 1.5, -2.5, -0.5, 0.5, 3.7, 0x7FC00000, 0xFF800000]> : tensor<8xf32>
  %0 = cleave.round %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @floor_ceil
// CHECK-DAG: %[[FLOOR:.+]] = cleave.constant dense<[-3.000000e+00, 2.000000e+00, -0.000000e+00]> : tensor<3xf64>
// CHECK-DAG: %[[CEIL:.+]] = cleave.constant dense<[-2.000000e+00, 3.000000e+00, -0.000000e+00]> : tensor<3xf64>
// CHECK: return %[[FLOOR]], %[[CEIL]]
func.func @floor_ceil() -> (tensor<3xf64>, tensor<3xf64>) {
  %a = cleave.constant dense<[-2.5, 2.5, -0.0]> : tensor<3xf64>
  %0 = cleave.floor %a : tensor<3xf64>
  %1 = cleave.ceil %a : tensor<3xf64>
  return %0, %1 : tensor<3xf64>, tensor<3xf64>
}

// Both zeros give +0 and NaN stays NaN, as numpy.sign.
// CHECK-LABEL: func.func @sign_float
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[-1.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00, 0x7FC00000, -1.000000e+00]> : tensor<6xf32>
// CHECK-NEXT: return %[[C]]
func.func @sign_float() -> tensor<6xf32> {
  %a = cleave.constant dense<[-2.5, -0.0, 0.0, 1.0e-30, 0x7FC00000, 0xFF800000]> : tensor<6xf32>
  %0 = cleave.sign %a : tensor<6xf32>
  return %0 : tensor<6xf32>
}

// CHECK-LABEL: func.func @sign_integer
// CHECK-DAG: %[[S:.+]] = cleave.constant dense<[-1, 0, 1]> : tensor<3xi8>
// CHECK-DAG: %[[U:.+]] = cleave.constant dense<[1, 0, 1]> : tensor<3xui8>
// CHECK: return %[[S]], %[[U]]
func.func @sign_integer() -> (tensor<3xi8>, tensor<3xui8>) {
  %a = cleave.constant dense<[-128, 0, 127]> : tensor<3xi8>
  %b = cleave.constant dense<[200, 0, 1]> : tensor<3xui8>
  %0 = cleave.sign %a : tensor<3xi8>
  %1 = cleave.sign %b : tensor<3xui8>
  return %0, %1 : tensor<3xi8>, tensor<3xui8>
}

// CHECK-LABEL: func.func @float_class
// CHECK-DAG: %[[NAN:.+]] = cleave.constant dense<[true, true, false, false, false]> : tensor<5xi1>
// CHECK-DAG: %[[INF:.+]] = cleave.constant dense<[false, false, true, true, false]> : tensor<5xi1>
// CHECK-DAG: %[[POS:.+]] = cleave.constant dense<[false, false, true, false, false]> : tensor<5xi1>
// CHECK-DAG: %[[NEG:.+]] = cleave.constant dense<[false, false, false, true, false]> : tensor<5xi1>
// CHECK: return %[[NAN]], %[[INF]], %[[POS]], %[[NEG]]
func.func @float_class() -> (tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>) {
  %a = cleave.constant dense<[0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000, 3.4e38]> : tensor<5xf32>
  %0 = cleave.is_nan %a : tensor<5xf32> -> tensor<5xi1>
  %1 = cleave.is_inf %a : tensor<5xf32> -> tensor<5xi1>
  %2 = cleave.is_inf %a {detect_negative = false} : tensor<5xf32> -> tensor<5xi1>
  %3 = cleave.is_inf %a {detect_positive = false} : tensor<5xf32> -> tensor<5xi1>
  return %0, %1, %2, %3 : tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>
}

// Detecting neither infinity is false whatever the input.
// CHECK-LABEL: func.func @is_inf_detects_nothing
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<false> : tensor<2x3xi1>
// CHECK-NEXT: return %[[C]]
func.func @is_inf_detects_nothing(%x: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %0 = cleave.is_inf %x {detect_positive = false, detect_negative = false} : tensor<2x3xf32> -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

//===----------------------------------------------------------------------===//
// Remainders
//===----------------------------------------------------------------------===//

// Without fmod the remainder takes the divisor's sign (Python); with fmod the
// dividend's (C). x mod 0 and MIN mod -1 are 0, as the kernels define them.
// CHECK-LABEL: func.func @mod_integer
// CHECK-DAG: %[[MOD:.+]] = cleave.constant dense<[2, 1, -1, -2, 0, 0, 0]> : tensor<7xi32>
// CHECK-DAG: %[[FMOD:.+]] = cleave.constant dense<[2, -2, 2, -2, 0, 0, 0]> : tensor<7xi32>
// CHECK: return %[[MOD]], %[[FMOD]]
func.func @mod_integer() -> (tensor<7xi32>, tensor<7xi32>) {
  %a = cleave.constant dense<[5, -5, 5, -5, 6, 7, -2147483648]> : tensor<7xi32>
  %b = cleave.constant dense<[3, 3, -3, -3, 3, 0, -1]> : tensor<7xi32>
  %0 = cleave.mod %a, %b : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi32>
  %1 = cleave.mod %a, %b {fmod = true} : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi32>
  return %0, %1 : tensor<7xi32>, tensor<7xi32>
}

// Unsigned operands are read as unsigned: 250 mod 7, not -6 mod 7.
// CHECK-LABEL: func.func @mod_unsigned
// CHECK-NEXT: %[[C:.+]] = cleave.constant dense<[5, 0]> : tensor<2xui8>
func.func @mod_unsigned() -> tensor<2xui8> {
  %a = cleave.constant dense<[250, 9]> : tensor<2xui8>
  %b = cleave.constant dense<[7, 0]> : tensor<2xui8>
  %0 = cleave.mod %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// Float remainders as numpy.mod and numpy.fmod: a zero remainder takes the
// divisor's sign (mod) or the dividend's (fmod), x mod 0 and inf mod y are
// NaN, x fmod inf is x and -5 mod inf is inf.
// CHECK-LABEL: func.func @mod_float
// CHECK-DAG: %[[MOD:.+]] = cleave.constant dense<[2.000000e+00, 1.000000e+00, -1.000000e+00, 0.000000e+00, -0.000000e+00, 0x7FC00000, 0x7FC00000, 5.000000e+00, 0x7F800000]> : tensor<9xf32>
// CHECK-DAG: %[[FMOD:.+]] = cleave.constant dense<[2.000000e+00, -2.000000e+00, 2.000000e+00, -0.000000e+00, 0.000000e+00, 0x7FC00000, 0x7FC00000, 5.000000e+00, -5.000000e+00]> : tensor<9xf32>
// CHECK: return %[[MOD]], %[[FMOD]]
func.func @mod_float() -> (tensor<9xf32>, tensor<9xf32>) {
  %a = cleave.constant dense<[5.0, -5.0, 5.0, -0.0, 0.0, 5.0, 0x7F800000, 5.0, -5.0]> : tensor<9xf32>
  %b = cleave.constant dense<[3.0, 3.0, -3.0, 3.0, -3.0, 0.0, 2.0, 0x7F800000, 0x7F800000]> : tensor<9xf32>
  %0 = cleave.mod %a, %b : (tensor<9xf32>, tensor<9xf32>) -> tensor<9xf32>
  %1 = cleave.mod %a, %b {fmod = true} : (tensor<9xf32>, tensor<9xf32>) -> tensor<9xf32>
  return %0, %1 : tensor<9xf32>, tensor<9xf32>
}

//===----------------------------------------------------------------------===//
// The NaN guard of a masked softmax
//===----------------------------------------------------------------------===//

// where(is_nan(s), 0, s) of a softmax is the softmax with nan_to_zero.
// CHECK-LABEL: func.func @softmax_nan_guard
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[S:.+]] = cleave.softmax %[[X]] {axis = 2 : i64, nan_to_zero} : tensor<2x4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @softmax_nan_guard(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = cleave.constant dense<0.0> : tensor<f32>
  %s = cleave.softmax %x {axis = 2 : i64} : tensor<2x4x8xf32>
  %nan = cleave.is_nan %s : tensor<2x4x8xf32> -> tensor<2x4x8xi1>
  %0 = cleave.where %nan, %zero, %s : (tensor<2x4x8xi1>, tensor<f32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// A softmax that is also used unguarded keeps its NaNs: no fold.
// CHECK-LABEL: func.func @softmax_nan_guard_other_user
// CHECK: %[[S:.+]] = cleave.softmax %{{.+}} {axis = 1 : i64} : tensor<4x8xf32>
// CHECK: cleave.is_nan %[[S]]
// CHECK: cleave.where
func.func @softmax_nan_guard_other_user(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = cleave.constant dense<0.0> : tensor<f32>
  %s = cleave.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  %nan = cleave.is_nan %s : tensor<4x8xf32> -> tensor<4x8xi1>
  %0 = cleave.where %nan, %zero, %s : (tensor<4x8xi1>, tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// NaNs replaced by something other than +0 (here -0), a guard that selects
// the other way round, or a guard of another op: no fold.
// CHECK-LABEL: func.func @softmax_nan_guard_mismatch
// CHECK-COUNT-3: cleave.where
// CHECK-NOT: nan_to_zero
func.func @softmax_nan_guard_mismatch(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %negzero = cleave.constant dense<-0.0> : tensor<f32>
  %zero = cleave.constant dense<0.0> : tensor<f32>
  %s = cleave.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  %nan = cleave.is_nan %s : tensor<4x8xf32> -> tensor<4x8xi1>
  %0 = cleave.where %nan, %negzero, %s : (tensor<4x8xi1>, tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = cleave.softmax %x {axis = 0 : i64} : tensor<4x8xf32>
  %tnan = cleave.is_nan %t : tensor<4x8xf32> -> tensor<4x8xi1>
  %1 = cleave.where %tnan, %t, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %l = cleave.log_softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  %lnan = cleave.is_nan %l : tensor<4x8xf32> -> tensor<4x8xi1>
  %2 = cleave.where %lnan, %zero, %l : (tensor<4x8xi1>, tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// The maximum shift before a softmax
//===----------------------------------------------------------------------===//

// softmax(x - reduce_max(x)) along the softmax's axis is softmax(x): the
// shift and its maximum go.
// CHECK-LABEL: func.func @softmax_max_shift
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[S:.+]] = cleave.softmax %[[X]] {axis = 2 : i64} : tensor<2x4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @softmax_max_shift(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = cleave.reduce_max %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %d = cleave.sub %x, %m : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %s = cleave.softmax %d {axis = 2 : i64} : tensor<2x4x8xf32>
  return %s : tensor<2x4x8xf32>
}

// The shifted scores read elsewhere stay, and the softmax reads x.
// CHECK-LABEL: func.func @softmax_max_shift_other_user
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[D:.+]] = cleave.sub %[[X]]
// CHECK: %[[S:.+]] = cleave.softmax %[[X]] {axis = 1 : i64}
// CHECK: return %[[S]], %[[D]]
func.func @softmax_max_shift_other_user(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = cleave.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = cleave.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %s = cleave.softmax %d {axis = 1 : i64} : tensor<4x8xf32>
  return %s, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// A maximum along another axis, of another tensor, or a log-softmax (whose
// result rounds otherwise): no fold.
// CHECK-LABEL: func.func @softmax_max_shift_mismatch
// CHECK: %[[D0:.+]] = cleave.sub
// CHECK: cleave.softmax %[[D0]]
// CHECK: %[[D1:.+]] = cleave.sub
// CHECK: cleave.softmax %[[D1]]
// CHECK: %[[D2:.+]] = cleave.sub
// CHECK: cleave.log_softmax %[[D2]]
func.func @softmax_max_shift_mismatch(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %m0 = cleave.reduce_max %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %d0 = cleave.sub %x, %m0 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %s0 = cleave.softmax %d0 {axis = 1 : i64} : tensor<4x8xf32>
  %m1 = cleave.reduce_max %y {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d1 = cleave.sub %x, %m1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %s1 = cleave.softmax %d1 {axis = 1 : i64} : tensor<4x8xf32>
  %m2 = cleave.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d2 = cleave.sub %x, %m2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %s2 = cleave.log_softmax %d2 {axis = 1 : i64} : tensor<4x8xf32>
  return %s0, %s1, %s2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
