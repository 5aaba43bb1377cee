// RUN: cleave-opt %s -split-input-file -verify-diagnostics

// One case per type-inference and verifier error of the elementwise ops.

func.func @add_shapes_do_not_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{operand shapes do not broadcast: 'tensor<2x3xf32>' and 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @mul_element_types_differ(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+2 {{operands must have the same element type, got 'f32' and 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.mul %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The written result type must be the inferred one.
func.func @sub_wrong_result_shape(%a: tensor<2x4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+2 {{'cleave.sub' op inferred type(s) 'tensor<2x4xi64>' are incompatible with return type(s) of operation 'tensor<4xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.sub %a, %b : (tensor<2x4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @less_element_types_differ(%a: tensor<4xi64>, %b: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+2 {{operands must have the same element type, got 'i64' and 'i32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.less %a, %b : (tensor<4xi64>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @equal_shapes_do_not_broadcast(%a: tensor<3xi64>, %b: tensor<2xi64>) -> tensor<3xi1> {
  // expected-error @+2 {{operand shapes do not broadcast: 'tensor<3xi64>' and 'tensor<2xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.equal %a, %b : (tensor<3xi64>, tensor<2xi64>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// A comparison produces i1, whatever its operands are.
func.func @greater_result_not_bool(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cleave.greater' op result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = cleave.greater %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @and_not_bool(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{'cleave.and' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = cleave.and %a, %b : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @where_value_types_differ(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+2 {{true and false values must have the same element type, got 'f32' and 'i64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_condition_does_not_broadcast(%c: tensor<3xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{operand shapes do not broadcast: 'tensor<3xi1>' and 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.where %c, %x, %y : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_condition_not_bool(%c: tensor<4xi8>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cleave.where' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = cleave.where %c, %x, %y : (tensor<4xi8>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unary_result_type_differs(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'cleave.neg' op requires the same type for all operands and results}}
  %0 = "cleave.neg"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @sqrt_of_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'cleave.sqrt' op operand #0 must be ranked tensor of}}
  %0 = cleave.sqrt %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @gelu_unknown_approximation(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cleave.gelu' op approximate must be "none" or "tanh", got "erf"}}
  %0 = cleave.gelu %x {approximate = "erf"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_min_above_max(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cleave.clip' op min (6.000000e+00) must not exceed max (0.000000e+00)}}
  %0 = cleave.clip %x {min = 6.0 : f64, max = 0.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_nan_bound(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cleave.clip' op clip bounds must not be NaN}}
  %0 = cleave.clip %x {max = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_fractional_integer_bound(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'cleave.clip' op bounds of an integer clip must be integral, got 5.000000e-01}}
  %0 = cleave.clip %x {min = 0.5 : f64} : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @cast_shape_changes(%x: tensor<4xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'cleave.cast' op all non-scalar operands/results must have the same shape and base type}}
  %0 = cleave.cast %x : tensor<4xi64> to tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// mod_c1
func.func @mod_c1_boolean(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'cleave.mod' op operands must be numeric, got 'i1'}}
  %0 = cleave.mod %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @mod_element_types_differ(%a: tensor<4xi32>, %b: tensor<4xi64>) -> tensor<4xi32> {
  // expected-error @+2 {{operands must have the same element type, got 'i32' and 'i64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.mod %a, %b : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @mod_fmod_not_bool(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cleave.mod' op attribute 'fmod' failed to satisfy constraint: bool attribute}}
  %0 = cleave.mod %a, %a {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @is_nan_of_integers(%x: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{'cleave.is_nan' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = cleave.is_nan %x : tensor<4xi32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @is_inf_wrong_result_shape(%x: tensor<4xf32>) -> tensor<2xi1> {
  // expected-error @+1 {{'cleave.is_inf' op all non-scalar operands/results must have the same shape and base type}}
  %0 = cleave.is_inf %x : tensor<4xf32> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @is_inf_flag_not_bool(%x: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{'cleave.is_inf' op attribute 'detect_negative' failed to satisfy constraint: bool attribute}}
  %0 = cleave.is_inf %x {detect_negative = 0 : i64} : tensor<4xf32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @round_of_integers(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'cleave.round' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi64>'}}
  %0 = cleave.round %x : tensor<4xi64>
  return %0 : tensor<4xi64>
}
