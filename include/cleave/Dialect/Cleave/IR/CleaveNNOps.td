//===- CleaveNNOps.td - linear algebra, conv, norm, reduce -*- tablegen -*-===//
//
// Contractions, convolutions, pooling, normalisations, softmax, reductions.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVENNOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVENNOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveBase.td"

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Cleave_MatMulOp : Cleave_InferredOp<"matmul"> {
  let summary = "matrix product with numpy semantics";
  let description = [{
    `numpy.matmul`: the last two dimensions are multiplied, leading (batch)
    dimensions broadcast. A 1-D lhs is treated as a row vector and a 1-D rhs
    as a column vector; the inserted dimension is removed from the result
    (two 1-D operands give a 0-D result). Operands must be at least 1-D.

    Verifier labels: `matmul_c1` (the contracted dimensions agree),
    `matmul_c2` (batch dimensions broadcast), `matmul_c3` (element types
    agree).

    ```mlir
    %y = cleave.matmul %x, %w : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$lhs, Cleave_Tensor:$rhs);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Cleave_GemmOp : Cleave_InferredOp<"gemm"> {
  let summary = "general matrix multiply: alpha * op(A) * op(B) + beta * C";
  let description = [{
    ONNX `Gemm` on 2-D operands: `op(X)` is `X` or its transpose according to
    `trans_a` / `trans_b`; the optional `c` broadcasts (unidirectionally) to
    the `M x N` result.

    Verifier labels: `gemm_c1` (`a` and `b` are 2-D), `gemm_c2` (the
    contracted dimensions agree), `gemm_c3` (`c` is at most 2-D and
    broadcasts to `M x N`), `gemm_c4` (element types agree).

    ```mlir
    %y = cleave.gemm %x, %w, %b {trans_b = true} : (tensor<4x128xf32>, tensor<10x128xf32>, tensor<10xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$a, Cleave_FloatTensor:$b,
                   Optional<Cleave_FloatTensor>:$c,
                   DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

def Cleave_ConvOp : Cleave_InferredOp<"conv"> {
  let summary = "N-D grouped convolution (1-D, 2-D or 3-D spatial)";
  let description = [{
    ONNX `Conv` with every padding explicit: `pads` holds the begin pads of
    each spatial dimension followed by the end pads (`auto_pad` is resolved by
    the importer). The kernel shape is the trailing dimensions of `weight`
    (`M x C/group x k1 x ... x kn`); `group` divides both `C` and `M`, and
    the optional `bias` has shape `M`. `strides` and `dilations` hold one
    positive value per spatial dimension, `pads` two non-negative ones. Output
    size per spatial dimension: `floor((in + pad_begin + pad_end -
    ((k - 1) * dilation + 1)) / stride) + 1`, which must be at least 1.

    ```mlir
    %y = cleave.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64}
        : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, Cleave_FloatTensor:$weight,
                   Optional<Cleave_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Cleave_ConvTransposeOp : Cleave_InferredOp<"conv_transpose"> {
  let summary = "N-D grouped transposed convolution";
  let description = [{
    ONNX `ConvTranspose` with explicit `pads` (begin pads then end pads) and
    `output_padding`; `output_shape` and `auto_pad` are resolved by the
    importer. `weight` is `C x M/group x k1 x ... x kn` and the optional
    `bias` has shape `M`. Each `output_padding` value is non-negative and
    less than the stride or the dilation of its dimension. Output size per
    spatial dimension: `stride * (in - 1) + output_padding +
    (k - 1) * dilation + 1 - pad_begin - pad_end`, which must be at least 1.

    ```mlir
    %y = cleave.conv_transpose %x, %w {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>, group = 1 : i64}
        : (tensor<1x8x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x20xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, Cleave_FloatTensor:$weight,
                   Optional<Cleave_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$output_padding,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Cleave_MaxPoolOp : Cleave_InferredOp<"max_pool"> {
  let summary = "N-D max pooling";
  let description = [{
    ONNX `MaxPool` (values only; the optional indices output is not
    supported). Padding is explicit (begin pads then end pads); padded
    positions never win. The output size per spatial dimension is
    `(in + pad_begin + pad_end - ((k - 1) * dilation + 1)) / stride + 1`,
    rounded down, or up with `ceil_mode`; with `ceil_mode` a last window
    that would start in the end padding is dropped (as onnxruntime and the
    ONNX reference implementation do).

    ```mlir
    %y = cleave.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Cleave_AveragePoolOp : Cleave_InferredOp<"average_pool"> {
  let summary = "N-D average pooling";
  let description = [{
    ONNX `AveragePool` with explicit padding. `count_include_pad` decides
    whether padded positions count in the divisor. The output size follows
    the same rule as `cleave.max_pool`, `ceil_mode` included.

    ```mlir
    %y = cleave.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Cleave_GlobalAveragePoolOp : Cleave_InferredOp<"global_average_pool"> {
  let summary = "mean over all spatial dimensions";
  let description = [{
    `N x C x d1 x ... x dn -> N x C x 1 x ... x 1`; the input is at least
    2-D.

    ```mlir
    %y = cleave.global_average_pool %x : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Cleave_GlobalMaxPoolOp : Cleave_InferredOp<"global_max_pool"> {
  let summary = "max over all spatial dimensions";
  let description = [{
    `N x C x d1 x ... x dn -> N x C x 1 x ... x 1`; the input is at least
    2-D.

    ```mlir
    %y = cleave.global_max_pool %x : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

def Cleave_BatchNormOp : Cleave_InferredOp<"batch_norm"> {
  let summary = "batch normalisation with running statistics";
  let description = [{
    `y = scale * (x - mean) / sqrt(var + epsilon) + bias` per channel (dim 1),
    `mean` and `var` being the running statistics. The input is at least 2-D
    and all four parameters have shape `C`.

    `momentum` (ONNX's: the weight of the old running statistics) and
    `training_mode` (ONNX's `training_mode = 1`: normalise by the batch's
    statistics, whose running-statistic outputs the model does not use) are
    read by `cleave-batch-norm-training`, which rewrites the op into
    normalisation by the batch's statistics in a training step (updating the
    running statistics there) and wherever `training_mode` is set; no other
    pass or kernel sees a `training_mode` op.

    ```mlir
    %y = cleave.batch_norm %x, %s, %b, %m, %v {epsilon = 9.99999974E-6 : f32}
        : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, Cleave_FloatTensor:$scale,
                   Cleave_FloatTensor:$bias, Cleave_FloatTensor:$mean,
                   Cleave_FloatTensor:$variance,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                   DefaultValuedAttr<F32Attr, "0.9">:$momentum,
                   UnitAttr:$training_mode);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    functional-type(operands, results)
  }];
}

def Cleave_InstanceNormOp : Cleave_InferredOp<"instance_norm"> {
  let summary = "instance normalisation";
  let description = [{
    Normalises each (sample, channel) over its spatial dimensions, then
    applies the per-channel `scale` and `bias` (shape `C`). The input is at
    least 2-D (`N x C x d1 x ... x dn`).

    ```mlir
    %y = cleave.instance_norm %x, %s, %b {epsilon = 9.99999974E-6 : f32}
        : (tensor<2x8x100xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x100xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, Cleave_FloatTensor:$scale,
                   Cleave_FloatTensor:$bias,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)
  }];
}

def Cleave_LayerNormOp : Cleave_InferredOp<"layer_norm"> {
  let summary = "layer normalisation over the trailing dimensions";
  let description = [{
    Normalises over dimensions `[axis, rank)` (`axis` normalised to be
    non-negative, in `[0, rank)`), then multiplies by `scale` and adds the
    optional `bias`, both broadcast (unidirectionally, numpy style) to the
    normalised shape `input.shape[axis:]`. Only the `Y` output of ONNX
    `LayerNormalization` is represented.

    ```mlir
    %y = cleave.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
        : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, Cleave_FloatTensor:$scale,
                   Optional<Cleave_FloatTensor>:$bias, I64Attr:$axis,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Cleave_RmsNormOp : Cleave_InferredOp<"rms_norm"> {
  let summary = "root-mean-square normalisation over the trailing dimensions";
  let description = [{
    `y = x / sqrt(mean(x^2) + epsilon) * scale`, the mean taken over
    dimensions `[axis, rank)` (`axis` normalised to be non-negative, in
    `[0, rank)`), `scale` broadcast (unidirectionally, numpy style) to the
    normalised shape `input.shape[axis:]`. Unlike `layer_norm` the mean is
    not subtracted and there is no bias. Imported from ONNX
    `RMSNormalization` (opset 23) and produced by the pattern fusion pass
    from the decomposition that exporters of Llama-style models write
    (`x * rsqrt(mean(x^2) + eps) * w`, also with casts to float32 around
    it). The statistics are accumulated in at least float32 whatever the
    element type.

    ```mlir
    %y = cleave.rms_norm %x, %w {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
        : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, Cleave_FloatTensor:$scale,
                   I64Attr:$axis,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
}

def Cleave_GroupNormOp : Cleave_InferredOp<"group_norm"> {
  let summary = "group normalisation";
  let description = [{
    Splits the channels (dim 1) into `num_groups` groups, normalises each
    (sample, group) over its channels and spatial dimensions, then applies a
    per-channel `scale` and `bias` (shape `C`). ONNX opset 18 gives per-group
    scale and bias; the importer expands them to per-channel. The input is at
    least 2-D and `num_groups` is positive and divides `C`.

    ```mlir
    %y = cleave.group_norm %x, %s, %b {num_groups = 4 : i64, epsilon = 9.99999974E-6 : f32}
        : (tensor<2x8x100xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x100xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, Cleave_FloatTensor:$scale,
                   Cleave_FloatTensor:$bias, I64Attr:$num_groups,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

def Cleave_SoftmaxOp : Cleave_Op<"softmax", [Pure, SameOperandsAndResultType,
                                             InferTypeOpInterface]> {
  let summary = "softmax along one axis";
  let description = [{
    `exp(x) / sum(exp(x))` along `axis`, in `[0, rank)`. ONNX opsets before 13
    flatten to 2-D at the axis; the importer rewrites those into a reshape
    around a softmax on the last axis.

    With `nan_to_zero` every element that would be NaN is 0 instead: a line
    whose inputs are all `-inf` (a fully masked row of attention) gives
    zeros. This is `where(is_nan(s), 0, s)`, the guard that torch's
    exporters write after the softmax of a scaled dot-product attention with
    a boolean mask, which the canonicalizer folds into the op. The
    canonicalizer also drops a shift by the line's maximum written before
    the op: `softmax(x - reduce_max(x))` is `softmax(x)`, bit for bit.

    ```mlir
    %y = cleave.softmax %x {axis = 3 : i64} : tensor<2x4x16x16xf32>
    %z = cleave.softmax %x {axis = 3 : i64, nan_to_zero} : tensor<2x4x16x16xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, I64Attr:$axis,
                   UnitAttr:$nan_to_zero);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;  let hasCanonicalizer = 1;
}

def Cleave_LogSoftmaxOp : Cleave_Op<"log_softmax", [Pure,
    SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "log of softmax along one axis";
  let description = [{
    `x - log(sum(exp(x)))` along `axis`, in `[0, rank)`.

    ```mlir
    %y = cleave.log_softmax %x {axis = 1 : i64} : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Cleave_RotaryEmbeddingOp : Cleave_InferredOp<"rotary_embedding"> {
  let summary = "rotary position embedding of the heads of a tensor";
  let description = [{
    Rotates the first `rotary_embedding_dim` entries of each head (all of
    them when it is 0) as pairs `(x1, x2)`: `(cos * x1 - sin * x2,
    sin * x1 + cos * x2)`, where `x1` is the first half of the rotated
    entries and `x2` the second (`interleaved = false`), or the even and the
    odd entries (`interleaved = true`); the other entries are copied. This
    is ONNX `RotaryEmbedding` (opset 23), which the importer maps one to
    one, and what the pattern fusion pass makes of the
    `x * cos + rotate_half(x) * sin` that exporters of Llama-style models
    write.

    `input` is `batch x heads x sequence x head_size` (rank 4; `num_heads`
    is 0 or the heads) or `batch x sequence x hidden` with `num_heads`
    heads (rank 3). Without `position_ids`, `cos` and `sin` are
    `batch x sequence x n` (a batch of 1 broadcasts); with them
    (`batch x sequence`, i32 or i64), `cos` and `sin` are caches of
    `positions x n` that each id selects a row of. Only the first
    `rotary_embedding_dim / 2` of the `n` entries are read. A position id
    outside the cache fails at run time.

    ```mlir
    %y = cleave.rotary_embedding %x, %cos, %sin, %pos
        : (tensor<2x8x16x64xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<2x16xi64>) -> tensor<2x8x16x64xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, Cleave_FloatTensor:$cos,
                   Cleave_FloatTensor:$sin,
                   Optional<Cleave_IndexTensor>:$position_ids,
                   DefaultValuedAttr<BoolAttr, "false">:$interleaved,
                   DefaultValuedAttr<I64Attr, "0">:$rotary_embedding_dim,
                   DefaultValuedAttr<I64Attr, "0">:$num_heads);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin (`,` $position_ids^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The heads, the size of one head and the rotated entries per head.
    int64_t getHeads();
    int64_t getHeadSize();
    int64_t getRotaryDim();
  }];
}

def Cleave_AttentionOp : Cleave_InferredOp<"attention"> {
  let summary = "scaled dot-product attention over heads";
  let description = [{
    `softmax(softcap(scale * q k^T) + bias) v` per head, where `bias` adds
    `mask` (additive when float, `0` where true and `-inf` where false when
    `i1`) and, with `is_causal`, `-inf` above the diagonal (query `i` sees
    keys `j <= i`); `softcap` is `c * tanh(s / c)` when `c = softcap` is
    positive and the identity when it is 0. The softcap comes before the
    mask, as onnxruntime applies it, so that a masked key stays masked. This
    is ONNX `Attention` (opset 23), with the key and value caches
    concatenated by the importer.

    `query`, `key` and `value` have one rank. Rank 4:
    `batch x heads x sequence x head_size`. Rank 3: `batch x sequence x
    hidden`, `hidden` being `q_num_heads` (query) or `kv_num_heads` (key,
    value) heads; the result has the query's layout with the value's head
    size. With fewer key/value heads than query heads (grouped-query
    attention), query head `h` reads key/value head
    `h / (q_num_heads / kv_num_heads)`, as in onnxruntime (the reference
    implementation of onnx 1.18 reads head `h % kv_num_heads` instead, and
    reshapes rank-3 inputs to rank 4 without moving the heads in front of
    the sequence; its node tests of both disagree with onnxruntime's and
    cleave's results). `mask` (i1 or the query's float
    type) broadcasts numpy-style to `batch x q_num_heads x q_sequence x
    kv_sequence`. A query row that sees no key gives NaN, as softmax of
    `-inf` everywhere does, or zeros with `nan_to_zero` (what the
    `Where(IsNaN(Softmax(x)), 0, Softmax(x))` that exporters write around
    the softmax of a masked attention computes).

    ```mlir
    %y = cleave.attention %q, %k, %v {is_causal, kv_num_heads = 2 : i64, q_num_heads = 8 : i64, scale = 1.250000e-01 : f32}
        : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$query, Cleave_FloatTensor:$key,
                   Cleave_FloatTensor:$value, Optional<Cleave_Tensor>:$mask,
                   I64Attr:$q_num_heads, I64Attr:$kv_num_heads, F32Attr:$scale,
                   UnitAttr:$is_causal,
                   DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                   UnitAttr:$nan_to_zero);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Cleave_ReduceOp<string mnemonic, string formula>
    : Cleave_InferredOp<mnemonic> {
  let summary = "reduction by " # formula;
  let description = "Reduces `input` by " # formula # " over `axes` "
      # "(non-negative, sorted, unique; the importer expands ONNX's empty "
      # "`axes` to every dimension unless `noop_with_empty_axes` is set, so an "
      # "empty `axes` reduces nothing and the result has the input's shape). "
      # "With `keepdims` the reduced dimensions stay with size 1, without it "
      # "they are removed.\n\n"
      # "Example:\n\n```mlir\n%y = cleave." # mnemonic
      # " %x {axes = array<i64: 2>, keepdims = true} : "
      # "(tensor<2x16x64xf32>) -> tensor<2x16x1xf32>\n```";
  let arguments = (ins Cleave_Tensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Cleave_ReduceSumOp : Cleave_ReduceOp<"reduce_sum", "sum">;
def Cleave_ReduceMeanOp : Cleave_ReduceOp<"reduce_mean", "arithmetic mean">;
def Cleave_ReduceMaxOp : Cleave_ReduceOp<"reduce_max", "maximum">;
def Cleave_ReduceMinOp : Cleave_ReduceOp<"reduce_min", "minimum">;
def Cleave_ReduceProdOp : Cleave_ReduceOp<"reduce_prod", "product">;
def Cleave_ReduceL2Op : Cleave_ReduceOp<"reduce_l2", "the Euclidean norm">;
def Cleave_ReduceSumSquareOp
    : Cleave_ReduceOp<"reduce_sum_square", "the sum of squares">;

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVENNOPS_TD
