// RUN: cleave-opt %s -split-input-file -verify-diagnostics

// One case per verifier and type-inference error of the shape /
// data-movement family, named after the constraint label in ShapeOps.cpp.
// A type-inference error is followed by the generic "failed to infer
// returned types" of the op; ops with a verifier report its errors first.

func.func @constant_c1() {
  // expected-error @+1 {{'value' must have a ranked tensor type, got 'vector<2xi64>'}}
  %0 = cleave.constant dense<[1, 2]> : vector<2xi64>
  return
}

// -----

func.func @weight_c1() {
  // expected-error @+1 {{'length' is 100 bytes but 'tensor<64x256xf32>' holds 65536 bytes (16384 elements of 4 bytes)}}
  %0 = cleave.weight "w" {file = "/m.onnx", offset = 0 : i64, length = 100 : i64} : tensor<64x256xf32>
  return
}

// -----

func.func @weight_c1_bool() {
  // Booleans are stored one byte per element.
  // expected-error @+1 {{'length' is 1 bytes but 'tensor<8xi1>' holds 8 bytes (8 elements of 1 bytes)}}
  %0 = cleave.weight "mask" {file = "/m.onnx", offset = 0 : i64, length = 1 : i64} : tensor<8xi1>
  return
}

// -----

func.func @weight_c1_bf16() {
  // expected-error @+1 {{'length' is 4 bytes but 'tensor<4xbf16>' holds 8 bytes (4 elements of 2 bytes)}}
  %0 = cleave.weight "w" {file = "/m.onnx", offset = 0 : i64, length = 4 : i64} : tensor<4xbf16>
  return
}

// -----

func.func @weight_c1_dynamic() {
  // expected-error @+1 {{result type 'tensor<?x4xf32>' must have a static shape to have a byte size}}
  %0 = cleave.weight "w" {file = "/m.onnx", offset = 0 : i64, length = 16 : i64} : tensor<?x4xf32>
  return
}

// -----

func.func @weight_c2() {
  // expected-error @+1 {{'offset' must be non-negative, got -8}}
  %0 = cleave.weight "w" {file = "/m.onnx", offset = -8 : i64, length = 16 : i64} : tensor<4xf32>
  return
}

// -----

func.func @shape_c1(%x: tensor<2x16x64xf32>) {
  // expected-error @+1 {{'start' 1 and 'end' 4 must satisfy 0 <= start <= end <= rank (3)}}
  %0 = cleave.shape %x {start = 1 : i64, end = 4 : i64} : (tensor<2x16x64xf32>) -> tensor<3xi64>
  return
}

// -----

func.func @shape_c1_reversed(%x: tensor<2x16x64xf32>) {
  // expected-error @+1 {{'start' 2 and 'end' 1 must satisfy 0 <= start <= end <= rank (3)}}
  %0 = cleave.shape %x {start = 2 : i64, end = 1 : i64} : (tensor<2x16x64xf32>) -> tensor<0xi64>
  return
}

// -----

func.func @shape_inferred(%x: tensor<2x16x64xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'cleave.shape' op inferred type(s) 'tensor<2xi64>' are incompatible with return type(s) of operation 'tensor<3xi64>'}}
  %0 = cleave.shape %x {start = 1 : i64, end = 3 : i64} : (tensor<2x16x64xf32>) -> tensor<3xi64>
  return
}

// -----

func.func @constant_of_shape_c1(%s: tensor<2xi64>) {
  // expected-error @+1 {{'value' has type 'f16' but the result element type is 'f32'}}
  %0 = cleave.constant_of_shape %s {value = 0.0 : f16} : (tensor<2xi64>) -> tensor<2x8xf32>
  return
}

// -----

func.func @constant_of_shape_c2(%s: tensor<3xi64>) {
  // expected-error @+1 {{shape operand has 3 entries but the result has rank 2}}
  %0 = cleave.constant_of_shape %s {value = 0.0 : f32} : (tensor<3xi64>) -> tensor<2x8xf32>
  return
}

// -----

func.func @constant_of_shape_c3() {
  %s = cleave.constant dense<[2, 4]> : tensor<2xi64>
  // expected-error @+1 {{shape operand entry 1 is 4 but result dimension 1 is 8}}
  %0 = cleave.constant_of_shape %s {value = 1 : i64} : (tensor<2xi64>) -> tensor<2x8xi64>
  return
}

// -----

func.func @range_c1_rank(%i: tensor<i64>) {
  // expected-error @+1 {{result must be 1-D, got 'tensor<2x2xi64>'}}
  %0 = cleave.range %i, %i, %i : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x2xi64>
  return
}

// -----

func.func @range_c1_type(%i: tensor<i1>) {
  // expected-error @+1 {{element type must be a float or a signless integer wider than 1 bit, got 'i1'}}
  %0 = cleave.range %i, %i, %i : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<?xi1>
  return
}

// -----

func.func @range_c2(%i: tensor<i64>, %v: tensor<1xi64>) {
  // expected-error @+1 {{'limit' must be a 0-d tensor of 'i64', got 'tensor<1xi64>'}}
  %0 = cleave.range %i, %v, %i : (tensor<i64>, tensor<1xi64>, tensor<i64>) -> tensor<?xi64>
  return
}

// -----

func.func @range_c2_type(%i: tensor<i64>, %f: tensor<f32>) {
  // expected-error @+1 {{'delta' must be a 0-d tensor of 'i64', got 'tensor<f32>'}}
  %0 = cleave.range %i, %i, %f : (tensor<i64>, tensor<i64>, tensor<f32>) -> tensor<?xi64>
  return
}

// -----

func.func @range_c3(%start: tensor<i64>, %limit: tensor<i64>) {
  %delta = cleave.constant dense<0> : tensor<i64>
  // expected-error @+1 {{'delta' must be non-zero}}
  %0 = cleave.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return
}

// -----

func.func @range_c4() {
  %start = cleave.constant dense<1> : tensor<i64>
  %limit = cleave.constant dense<10> : tensor<i64>
  %delta = cleave.constant dense<3> : tensor<i64>
  // ceil((10 - 1) / 3) = 3.
  // expected-error @+1 {{result has 4 elements but the constant operands give 3}}
  %0 = cleave.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  return
}

// -----

func.func @range_c4_float() {
  %start = cleave.constant dense<1.0> : tensor<f32>
  %limit = cleave.constant dense<0.0> : tensor<f32>
  %delta = cleave.constant dense<0.25> : tensor<f32>
  // A limit below the start gives an empty range.
  // expected-error @+1 {{result has 4 elements but the constant operands give 0}}
  %0 = cleave.range %start, %limit, %delta : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

// Lengths that do not fit are refused (limit - start overflows int64_t).
func.func @range_c4_huge() {
  %start = cleave.constant dense<-9223372036854775808> : tensor<i64>
  %limit = cleave.constant dense<9223372036854775807> : tensor<i64>
  %delta = cleave.constant dense<1> : tensor<i64>
  // expected-error @+1 {{'start', 'limit' and 'delta' give more elements than a tensor can hold}}
  %0 = cleave.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return
}

// -----

func.func @range_c4_float_huge() {
  %start = cleave.constant dense<0.0> : tensor<f32>
  %limit = cleave.constant dense<0x7F800000> : tensor<f32>
  %delta = cleave.constant dense<1.0> : tensor<f32>
  // expected-error @+1 {{'start', 'limit' and 'delta' do not give a finite number of elements}}
  %0 = cleave.range %start, %limit, %delta : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return
}

// -----

func.func @reshape_c1(%x: tensor<2x16x64xf32>) {
  // expected-error @+1 {{cannot reshape 2048 elements ('tensor<2x16x64xf32>') into 1024 elements ('tensor<2x16x32xf32>')}}
  %0 = cleave.reshape %x : tensor<2x16x64xf32> -> tensor<2x16x32xf32>
  return
}

// -----

func.func @reshape_c2(%x: tensor<2x16xf32>) {
  // expected-error @+1 {{element type changes from 'f32' to 'f16'}}
  %0 = cleave.reshape %x : tensor<2x16xf32> -> tensor<32xf16>
  return
}

// -----

func.func @flatten_c1(%x: tensor<1x64x1x1xf32>) {
  // expected-error @+2 {{'axis' 5 must be in [0, rank] = [0, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.flatten %x {axis = 5 : i64} : (tensor<1x64x1x1xf32>) -> tensor<64x1xf32>
  return
}

// -----

func.func @flatten_c2(%x: tensor<4294967296x4294967296xf32>) {
  // expected-error @+2 {{flattening 'tensor<4294967296x4294967296xf32>' gives a dimension of more elements than a dimension can hold}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.flatten %x {axis = 0 : i64} : (tensor<4294967296x4294967296xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @transpose_c1(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'perm' has 2 entries but the input has rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return
}

// -----

func.func @transpose_c2_duplicate(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'perm' [0, 2, 0] is not a permutation of [0, 3): 0 appears twice}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.transpose %x {perm = array<i64: 0, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<2x4x2xf32>
  return
}

// -----

func.func @transpose_c2_range(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'perm' [0, 3, 1] is not a permutation of [0, 3): 3 is out of range}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.transpose %x {perm = array<i64: 0, 3, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @squeeze_c1(%x: tensor<1x16x1xf32>) {
  // expected-error @+2 {{'axes' entry 1 is 3, outside [0, 3) for an input of rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.squeeze %x {axes = array<i64: 0, 3>} : (tensor<1x16x1xf32>) -> tensor<16xf32>
  return
}

// -----

func.func @squeeze_c2_unsorted(%x: tensor<1x16x1xf32>) {
  // expected-error @+2 {{'axes' must be sorted: 0 follows 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.squeeze %x {axes = array<i64: 2, 0>} : (tensor<1x16x1xf32>) -> tensor<16xf32>
  return
}

// -----

func.func @squeeze_c2_duplicate(%x: tensor<1x16x1xf32>) {
  // expected-error @+2 {{'axes' has duplicate entry 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.squeeze %x {axes = array<i64: 2, 2>} : (tensor<1x16x1xf32>) -> tensor<1x16xf32>
  return
}

// -----

func.func @squeeze_c3(%x: tensor<1x16x1xf32>) {
  // expected-error @+2 {{cannot squeeze dimension 1 of size 16}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.squeeze %x {axes = array<i64: 1>} : (tensor<1x16x1xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @unsqueeze_c1(%x: tensor<16xf32>) {
  // expected-error @+2 {{'axes' entry 1 is 3, outside [0, 3) for a result of rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.unsqueeze %x {axes = array<i64: 0, 3>} : (tensor<16xf32>) -> tensor<1x16x1xf32>
  return
}

// -----

func.func @unsqueeze_c2(%x: tensor<16xf32>) {
  // expected-error @+2 {{'axes' must be sorted: 0 follows 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.unsqueeze %x {axes = array<i64: 1, 0>} : (tensor<16xf32>) -> tensor<1x1x16xf32>
  return
}

// -----

func.func @expand_c1(%x: tensor<3x16xf32>) {
  // expected-error @+1 {{operand type 'tensor<3x16xf32>' does not broadcast to the result type 'tensor<4x16xf32>'}}
  %0 = cleave.expand %x : tensor<3x16xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @expand_c1_rank(%x: tensor<4x16xf32>) {
  // Expand never drops dimensions.
  // expected-error @+1 {{operand type 'tensor<4x16xf32>' does not broadcast to the result type 'tensor<16xf32>'}}
  %0 = cleave.expand %x : tensor<4x16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @expand_c1_smaller(%x: tensor<4x16xf32>) {
  // The result is the broadcast of both shapes, never smaller than the operand.
  // expected-error @+1 {{operand type 'tensor<4x16xf32>' does not broadcast to the result type 'tensor<1x16xf32>'}}
  %0 = cleave.expand %x : tensor<4x16xf32> -> tensor<1x16xf32>
  return
}

// -----

func.func @expand_c2(%x: tensor<1x16xf32>) {
  // expected-error @+1 {{element type changes from 'f32' to 'f16'}}
  %0 = cleave.expand %x : tensor<1x16xf32> -> tensor<4x16xf16>
  return
}

// -----

func.func @tile_c1(%x: tensor<3x4xf32>) {
  // expected-error @+2 {{'repeats' has 1 entries but the input has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.tile %x {repeats = array<i64: 2>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
  return
}

// -----

func.func @tile_c2(%x: tensor<3x4xf32>) {
  // expected-error @+2 {{'repeats' entry 1 is -1; repeats must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.tile %x {repeats = array<i64: 2, -1>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
  return
}

// -----

func.func @tile_c3(%x: tensor<3x4xf32>) {
  // expected-error @+2 {{repeating dimension 1 of size 4 4611686018427387905 times gives more elements than a dimension can hold}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.tile %x {repeats = array<i64: 1, 4611686018427387905>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @concat_c1() {
  // expected-error @+2 {{needs at least one operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.concat {axis = 0 : i64} : () -> tensor<0xi64>
  return
}

// -----

func.func @concat_c2(%a: tensor<2xi64>) {
  // expected-error @+2 {{'axis' 1 must be in [0, rank) = [0, 1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.concat %a, %a {axis = 1 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @concat_c3(%a: tensor<2xi64>, %b: tensor<2x1xi64>) {
  // expected-error @+2 {{operand 1 has rank 2 but operand 0 has rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<2x1xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @concat_c4(%a: tensor<2xi64>, %b: tensor<2xi32>) {
  // expected-error @+2 {{operand 1 has element type 'i32' but operand 0 has element type 'i64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<4xi64>
  return
}

// -----

func.func @concat_c5(%a: tensor<2x3xf32>, %b: tensor<?x3xf32>, %c: tensor<2x4xf32>) {
  // expected-error @+2 {{operand 2 has size 4 in dimension 1 but an earlier operand has size 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.concat %a, %b, %c {axis = 0 : i64} : (tensor<2x3xf32>, tensor<?x3xf32>, tensor<2x4xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @split_c1(%x: tensor<2x16xf32>) {
  // expected-error @+2 {{'axis' 2 must be in [0, rank) = [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = cleave.split %x {axis = 2 : i64, sizes = array<i64: 8, 8>} : (tensor<2x16xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  return
}

// -----

func.func @split_c2(%x: tensor<2x16xf32>) {
  // expected-error @+2 {{'sizes' entry 1 is -4; sizes must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = cleave.split %x {axis = 1 : i64, sizes = array<i64: 10, -4, 10>} : (tensor<2x16xf32>) -> (tensor<2x10xf32>, tensor<2x0xf32>, tensor<2x10xf32>)
  return
}

// -----

func.func @split_c3(%x: tensor<2x16xf32>) {
  // expected-error @+2 {{'sizes' [8, 4] add up to 12 but dimension 1 has size 16}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = cleave.split %x {axis = 1 : i64, sizes = array<i64: 8, 4>} : (tensor<2x16xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @split_results(%x: tensor<2x16xf32>) {
  // The result count follows `sizes`.
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'cleave.split' op inferred type(s) 'tensor<2x8xf32>', 'tensor<2x8xf32>' are incompatible with return type(s) of operation 'tensor<2x16xf32>'}}
  %0 = cleave.split %x {axis = 1 : i64, sizes = array<i64: 8, 8>} : (tensor<2x16xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @slice_c1(%x: tensor<2x64xf32>) {
  // expected-error @+2 {{'ends' has 1 entries but the input has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2>, steps = array<i64: 1, 1>} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @slice_c2(%x: tensor<2x64xf32>) {
  // expected-error @+2 {{'steps' entry 1 is 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 64>, steps = array<i64: 1, 0>} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @slice_c3(%x: tensor<2x64xf32>) {
  // expected-error @+2 {{'starts' entry 1 is -1 but must be clamped to [0, 64] for dimension size 64 and step 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.slice %x {starts = array<i64: 0, -1>, ends = array<i64: 2, 64>, steps = array<i64: 1, 1>} : (tensor<2x64xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @slice_c3_negative_step(%x: tensor<2x64xf32>) {
  // With a negative step the first index read is `start`, so it must exist.
  // expected-error @+2 {{'starts' entry 1 is 64 but must be clamped to [0, 63] for dimension size 64 and step -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.slice %x {starts = array<i64: 0, 64>, ends = array<i64: 2, -1>, steps = array<i64: 1, -1>} : (tensor<2x64xf32>) -> tensor<2x65xf32>
  return
}

// -----

func.func @slice_c4(%x: tensor<2x64xf32>) {
  // expected-error @+2 {{'ends' entry 1 is 9223372036854775807 but must be clamped to [0, 64] for dimension size 64 and step 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 9223372036854775807>, steps = array<i64: 1, 1>} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @slice_c4_negative_step(%x: tensor<2x64xf32>) {
  // expected-error @+2 {{'ends' entry 0 is -2 but must be clamped to [-1, 1] for dimension size 2 and step -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.slice %x {starts = array<i64: 1, 0>, ends = array<i64: -2, 64>, steps = array<i64: -1, 1>} : (tensor<2x64xf32>) -> tensor<3x64xf32>
  return
}

// -----

func.func @gather_c1(%t: tensor<1000x64xf32>, %ids: tensor<2xi64>) {
  // expected-error @+2 {{'axis' 2 must be in [0, rank) = [0, 2) of the data operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.gather %t, %ids {axis = 2 : i64} : (tensor<1000x64xf32>, tensor<2xi64>) -> tensor<1000x64x2xf32>
  return
}

// -----

func.func @pad_c1(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'pads' has 2 entries but needs 2 * rank = 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.pad %x {pads = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<3x9xf32>
  return
}

// -----

func.func @pad_c2(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'pads' of dimension 1 are 0 and -1; pads must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.pad %x {pads = array<i64: 0, 0, 0, -1>} : (tensor<2x8xf32>) -> tensor<2x7xf32>
  return
}

// -----

func.func @pad_c3(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'mode' must be one of constant, reflect, edge, wrap; got "symmetric"}}
  %0 = cleave.pad %x {pads = array<i64: 0, 1, 0, 1>, mode = "symmetric"} : (tensor<2x8xf32>) -> tensor<2x10xf32>
  return
}

// -----

func.func @resize_c1(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'scales' has 2 entries but the input has rank 4}}
  %0 = cleave.resize %x {scales = array<f64: 2.0, 2.0>} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_c2(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{result type 'tensor<1x8x8x8xf16>' must have the rank and element type of 'tensor<1x8x4x4xf32>'}}
  %0 = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf16>
  return
}

// -----

func.func @resize_c3(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'scales' entry 1 is 0.000000e+00; scales must be positive}}
  %0 = cleave.resize %x {scales = array<f64: 1.0, 0.0, 2.0, 2.0>} : tensor<1x8x4x4xf32> -> tensor<1x0x8x8xf32>
  return
}

// -----

func.func @resize_c4(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{result dimension 3 is 10 but 4 * 2.250000e+00 gives 9}}
  %0 = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.25>} : tensor<1x8x4x4xf32> -> tensor<1x8x8x10xf32>
  return
}

// -----

func.func @resize_c4_round(%x: tensor<1x8x4x5xf32>) {
  // 5 * 1.7 = 8.5: 8 (floor) and 9 (round, aspect-preserving sizes) are valid.
  // expected-error @+1 {{result dimension 3 is 7 but 5 * 1.700000e+00 gives 8 (floor) or 9 (round)}}
  %0 = cleave.resize %x {scales = array<f64: 1.0, 1.0, 1.0, 1.7>} : tensor<1x8x4x5xf32> -> tensor<1x8x4x7xf32>
  return
}

// -----

func.func @resize_c5(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'mode' must be one of nearest, linear, cubic; got "bilinear"}}
  %0 = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "bilinear"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_c6(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'coordinate_transformation_mode' "corners" is not an ONNX mode}}
  %0 = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, coordinate_transformation_mode = "corners"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_c7(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'nearest_mode' must be one of round_prefer_floor, round_prefer_ceil, floor, ceil; got "round"}}
  %0 = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, nearest_mode = "round"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @pad_c4(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{padding dimension 1 by 8391162080373601792 and 7135683346057950062 gives more elements than a dimension can hold}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.pad %x {pads = array<i64: 0, 8391162080373601792, 0, 7135683346057950062>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @concat_c6(%a: tensor<4611686018427387904xi8>) {
  // expected-error @+2 {{concatenating operand 1 gives more elements along axis 0 than a dimension can hold}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cleave.concat %a, %a {axis = 0 : i64} : (tensor<4611686018427387904xi8>, tensor<4611686018427387904xi8>) -> tensor<1xi8>
  return
}
