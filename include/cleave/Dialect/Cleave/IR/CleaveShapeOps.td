//===- CleaveShapeOps.td - data movement, shapes, constants -*- tablegen -*-=//
//
// Reshapes, permutations, slicing, gathering, padding and resizing; the
// shape-computation ops that fold away once shapes are static; constants and
// weights.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVESHAPEOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVESHAPEOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveBase.td"

//===----------------------------------------------------------------------===//
// Constants and weights
//===----------------------------------------------------------------------===//

def Cleave_ConstantOp : Cleave_Op<"constant", [ConstantLike, Pure,
                                               InferTypeOpAdaptor]> {
  let summary = "a tensor constant held in the IR";
  let description = [{
    A small tensor whose value the compiler needs: ONNX `Constant` nodes,
    scalar and integer initializers, and the results of folding shape
    computations. Large tensors are weights (`cleave.weight`), never constants.
    `value` has a ranked tensor type (`constant_c1`).

    ```mlir
    %c = cleave.constant dense<[2, 16, 4, 16]> : tensor<4xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Cleave_WeightOp : Cleave_Op<"weight", [Pure]> {
  let summary = "a tensor whose bytes stay in a file";
  let description = [{
    An ONNX initializer, referenced and never copied: `file` is the absolute
    path of the file that holds the little-endian, row-major bytes of the
    tensor, starting at byte `offset` and `length` bytes long (the ONNX model
    file itself for initializers stored inline, the external-data file
    otherwise). `name` is the initializer's ONNX name. Only the bundle writer
    reads these bytes.

    Verifier labels: `weight_c1` (`length` is the byte size of the result
    type), `weight_c2` (`offset` is non-negative).

    ```mlir
    %w = cleave.weight "fc1.weight" {file = "/models/gpt.onnx.data", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$file, I64Attr:$offset,
                   I64Attr:$length);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape computation
//===----------------------------------------------------------------------===//

def Cleave_ShapeOp : Cleave_InferredOp<"shape"> {
  let summary = "the shape of a tensor as a 1-D i64 tensor";
  let description = [{
    ONNX `Shape`, dimensions `[start, end)` (normalised, non-negative) of the
    operand's shape. Folds to a constant when those dimensions are static.

    Verifier label: `shape_c1` (`0 <= start <= end <= rank`).

    ```mlir
    %s = cleave.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<2x16x64xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs Cleave_ShapeTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Cleave_ConstantOfShapeOp : Cleave_Op<"constant_of_shape", [Pure]> {
  let summary = "a tensor of the given shape filled with one value";
  let description = [{
    ONNX `ConstantOfShape`. The result type carries the shape; the operand is
    the shape value it was computed from. Folds to a splat `cleave.constant`
    once the result type is static.

    Verifier labels: `constant_of_shape_c1` (`value` has the result element
    type), `constant_of_shape_c2` (the operand has one entry per result
    dimension), `constant_of_shape_c3` (a constant operand is the result
    shape).

    ```mlir
    %z = cleave.constant_of_shape %s {value = 0.000000e+00 : f32} : (tensor<2xi64>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Cleave_ShapeTensor:$shape, TypedAttrInterface:$value);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$shape attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Cleave_RangeOp : Cleave_Op<"range", [Pure]> {
  let summary = "the sequence start, start + delta, ... below limit";
  let description = [{
    ONNX `Range` on scalar operands; the result length is
    `max(ceil((limit - start) / delta), 0)`. Folds to a constant when the
    operands are constant and the result has at most 65536 elements.

    Verifier labels: `range_c1` (1-D result of a float or signless integer
    type), `range_c2` (operands are 0-d of the result element type),
    `range_c3` (a constant `delta` is non-zero), `range_c4` (the result length
    agrees with constant operands).

    ```mlir
    %r = cleave.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<16xi64>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$start, Cleave_Tensor:$limit,
                   Cleave_Tensor:$delta);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    $start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reshaping and permuting
//===----------------------------------------------------------------------===//

def Cleave_ReshapeOp : Cleave_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tensor with another shape";
  let description = [{
    The result type is the new shape: the importer resolves ONNX's `0` and
    `-1` entries (with `cleave::resolveReshape`) and the shape-computation
    subgraph that produced them. The element count must not change
    (`reshape_c1`) nor the element type (`reshape_c2`). ONNX `Flatten`,
    `Squeeze` and `Unsqueeze` have their own ops. Folds on constants and when
    the type does not change.

    ```mlir
    %y = cleave.reshape %x : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Cleave_FlattenOp : Cleave_InferredOp<"flatten"> {
  let summary = "flatten to 2-D around an axis";
  let description = [{
    `d0 x ... x dn -> (d0 * ... * d(axis-1)) x (d(axis) * ... * dn)`, with a
    non-negative `axis` no larger than the rank (`flatten_c1`); each product
    fits an `int64_t` (`flatten_c2`).

    ```mlir
    %y = cleave.flatten %x {axis = 1 : i64} : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, I64Attr:$axis);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Cleave_TransposeOp : Cleave_InferredOp<"transpose"> {
  let summary = "permute dimensions";
  let description = [{
    Result dimension `i` is operand dimension `perm[i]`; `perm` is a
    permutation of `[0, rank)` (the importer fills in ONNX's default, the
    reversal). Folds to its operand for the identity permutation, and
    composes with a transpose that feeds it.

    Verifier labels: `transpose_c1` (one `perm` entry per dimension),
    `transpose_c2` (`perm` is a permutation).

    ```mlir
    %y = cleave.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Cleave_SqueezeOp : Cleave_InferredOp<"squeeze"> {
  let summary = "remove dimensions of size 1";
  let description = [{
    Removes the listed `axes` (non-negative, sorted, unique, each of size 1).
    Folds on constants.

    Verifier labels: `squeeze_c1` (axes in range), `squeeze_c2` (sorted and
    unique), `squeeze_c3` (each removed dimension has size 1).

    ```mlir
    %y = cleave.squeeze %x {axes = array<i64: 0>} : (tensor<1x16xf32>) -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Cleave_UnsqueezeOp : Cleave_InferredOp<"unsqueeze"> {
  let summary = "insert dimensions of size 1";
  let description = [{
    Inserts size-1 dimensions at the listed `axes` of the result
    (non-negative, sorted, unique, below the result rank). Folds on constants.

    Verifier labels: `unsqueeze_c1` (axes in range), `unsqueeze_c2` (sorted
    and unique).

    ```mlir
    %y = cleave.unsqueeze %x {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Cleave_ExpandOp : Cleave_Op<"expand", [Pure]> {
  let summary = "broadcast a tensor to a larger shape";
  let description = [{
    ONNX `Expand`. The result type is the broadcast of the operand's shape
    with the requested shape, which the importer computes; the operand must
    broadcast to it (`expand_c1`) and keep its element type (`expand_c2`).
    Folds on constants.

    ```mlir
    %y = cleave.expand %x : tensor<1x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Cleave_TileOp : Cleave_InferredOp<"tile"> {
  let summary = "repeat a tensor along each dimension";
  let description = [{
    Dimension `i` of the result is `repeats[i]` copies of dimension `i`.

    Verifier labels: `tile_c1` (one entry per dimension), `tile_c2` (repeats
    are non-negative), `tile_c3` (each result dimension fits an `int64_t`).

    ```mlir
    %y = cleave.tile %x {repeats = array<i64: 2, 1>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Joining and splitting
//===----------------------------------------------------------------------===//

def Cleave_ConcatOp : Cleave_InferredOp<"concat"> {
  let summary = "join tensors along one axis";
  let description = [{
    All operands have the same rank and element type and agree on every
    dimension but `axis` (non-negative). Folds on constants.

    Verifier labels: `concat_c1` (at least one operand), `concat_c2` (`axis`
    in range), `concat_c3` (same rank), `concat_c4` (same element type),
    `concat_c5` (other dimensions agree), `concat_c6` (the concatenated
    dimension fits an `int64_t`).

    ```mlir
    %y = cleave.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Variadic<Cleave_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Cleave_SplitOp : Cleave_InferredOp<"split"> {
  let summary = "split a tensor along one axis";
  let description = [{
    Result `i` holds `sizes[i]` consecutive slices along `axis`; the sizes add
    up to the dimension. The importer resolves ONNX's even split and
    `num_outputs`.

    Verifier labels: `split_c1` (`axis` in range), `split_c2` (sizes are
    non-negative), `split_c3` (sizes add up to the dimension).

    ```mlir
    %q, %k, %v = cleave.split %x {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<2x16x192xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>)
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, I64Attr:$axis,
                   DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Cleave_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Cleave_SliceOp : Cleave_InferredOp<"slice"> {
  let summary = "strided slice with one start, end and step per dimension";
  let description = [{
    Canonical form of ONNX `Slice`: `starts`, `ends` and `steps` have one
    entry per dimension, already clamped as ONNX clamps them (`0 <= start,
    end <= dim` for positive steps; `0 <= start <= dim - 1` and `-1 <= end <=
    dim - 1` for negative steps), so the result dimension is
    `max(0, ceil((end - start) / step))`. Steps are non-zero. Folds on
    constants and when it selects the whole operand.

    Verifier labels: `slice_c1` (one entry per dimension), `slice_c2` (steps
    are non-zero), `slice_c3` (starts clamped), `slice_c4` (ends clamped).

    ```mlir
    %y = cleave.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 32>, steps = array<i64: 1, 2>} : (tensor<2x64xf32>) -> tensor<2x16xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Cleave_GatherOp : Cleave_InferredOp<"gather"> {
  let summary = "gather slices along one axis by index";
  let description = [{
    ONNX `Gather`: the result shape is `data.shape[:axis] + indices.shape +
    data.shape[axis+1:]`. Negative indices count from the end. Embedding
    lookups are gathers on axis 0 of a weight. Folds on constants.

    Verifier label: `gather_c1` (`axis` in `[0, rank)` of `data`).

    ```mlir
    %y = cleave.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$data, Cleave_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Padding and resizing
//===----------------------------------------------------------------------===//

def Cleave_PadOp : Cleave_InferredOp<"pad"> {
  let summary = "pad a tensor";
  let description = [{
    `pads` holds the begin pads of every dimension followed by the end pads
    (non-negative; the importer expands ONNX's `axes`). `mode` is `constant`
    (filled with `value`), `reflect`, `edge` or `wrap`.

    Verifier labels: `pad_c1` (`2 * rank` pads), `pad_c2` (pads are
    non-negative), `pad_c3` (`mode` is known), `pad_c4` (each padded
    dimension fits an `int64_t`).

    ```mlir
    %y = cleave.pad %x {pads = array<i64: 0, 1, 0, 1>, mode = "constant", value = 0.000000e+00 : f64} : (tensor<2x8xf32>) -> tensor<2x10xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, DenseI64ArrayAttr:$pads,
                   DefaultValuedStrAttr<StrAttr, "constant">:$mode,
                   DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cleave_ResizeOp : Cleave_Op<"resize", [Pure]> {
  let summary = "resize by interpolation";
  let description = [{
    ONNX `Resize` with one scale per dimension (`scales`; when the model gives
    `sizes`, the importer stores `size / input size`). The result type holds
    the output sizes: `floor(input * scale)`, or `round(input * scale)` when
    ONNX `sizes` keep the aspect ratio. `mode` is `nearest`, `linear` or
    `cubic`; `coordinate_transformation_mode` and `nearest_mode` take ONNX's
    values.

    Verifier labels: `resize_c1` (one scale per dimension), `resize_c2` (the
    result has the input's rank and element type), `resize_c3` (scales are
    positive), `resize_c4` (result sizes follow the scales), `resize_c5`
    (`mode`), `resize_c6` (`coordinate_transformation_mode`), `resize_c7`
    (`nearest_mode`).

    ```mlir
    %y = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, DenseF64ArrayAttr:$scales,
                   DefaultValuedStrAttr<StrAttr, "nearest">:$mode,
                   DefaultValuedStrAttr<StrAttr, "half_pixel">:$coordinate_transformation_mode,
                   DefaultValuedStrAttr<StrAttr, "round_prefer_floor">:$nearest_mode,
                   DefaultValuedAttr<F32Attr, "-0.75">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                   DefaultValuedAttr<F32Attr, "0.0">:$extrapolation_value);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVESHAPEOPS_TD
