//===- CleaveIndexOps.td - indexing by tensors of indices --*- tablegen -*-===//
//
// Gathers and scatters whose positions come from index tensors (ONNX
// GatherND, ScatterND, GatherElements, ScatterElements), one-hot encoding
// and triangular masks. Indices read at run time are checked by the
// kernels: an index outside its dimension (after a negative one is counted
// from the end) fails the run, naming the node.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEINDEXOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEINDEXOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveBase.td"

/// How a scatter combines an update with the element it lands on: `none`
/// replaces it, `add`, `mul`, `max` and `min` combine the two.
def Cleave_ScatterReductionAttr
    : DefaultValuedStrAttr<StrAttr, "none">;

def Cleave_GatherNDOp : Cleave_InferredOp<"gather_nd"> {
  let summary = "gather slices addressed by index tuples";
  let description = [{
    ONNX `GatherND`. The last dimension of `indices` holds tuples of `k`
    indices into the dimensions `[batch_dims, batch_dims + k)` of `data`;
    the first `batch_dims` dimensions of both operands are batch dimensions
    that pair up. The result shape is `indices.shape[:-1] +
    data.shape[batch_dims + k:]`. Negative indices count from the end.
    Folds on constants.

    Verifier labels: `gather_nd_c1` (`indices` has rank at least 1 and a
    static last dimension `k` in `[1, rank(data) - batch_dims]`),
    `gather_nd_c2` (`0 <= batch_dims < min(rank(data), rank(indices))`),
    `gather_nd_c3` (the batch dimensions of the operands agree).

    ```mlir
    %y = cleave.gather_nd %data, %ids {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi64>) -> tensor<2x3x8xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$data, Cleave_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Cleave_ScatterNDOp : Cleave_InferredOp<"scatter_nd"> {
  let summary = "write slices addressed by index tuples into a copy";
  let description = [{
    ONNX `ScatterND`. The result is `data` with, for each tuple `t` of the
    last dimension of `indices` (`k` indices into the leading dimensions of
    `data`), the slice `data[t]` replaced by (`reduction = "none"`) or
    combined with (`add`, `mul`, `max`, `min`) the matching slice of
    `updates`. Tuples are applied in row-major order, so with a reduction
    repeated tuples accumulate; without one the last write wins (ONNX
    leaves that case undefined). Negative indices count from the end. Folds
    on constants.

    Verifier labels: `scatter_nd_c1` (`indices` has rank at least 1 and a
    static last dimension `k` in `[1, rank(data)]`), `scatter_nd_c2`
    (`updates` has shape `indices.shape[:-1] + data.shape[k:]`),
    `scatter_nd_c3` (`updates` has the element type of `data`),
    `scatter_nd_c4` (`reduction` is known).

    ```mlir
    %y = cleave.scatter_nd %data, %ids, %upd {reduction = "add"} : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$data, Cleave_IndexTensor:$indices,
                   Cleave_Tensor:$updates,
                   Cleave_ScatterReductionAttr:$reduction);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Cleave_GatherElementsOp : Cleave_InferredOp<"gather_elements"> {
  let summary = "gather single elements along one axis";
  let description = [{
    ONNX `GatherElements`: `output[i][j][k] = data[indices[i][j][k]][j][k]`
    for `axis = 0`, and likewise for the other axes. The result has the
    shape of `indices` and the element type of `data`. Negative indices
    count from the end. Folds on constants.

    Verifier labels: `gather_elements_c1` (`axis` in `[0, rank)`),
    `gather_elements_c2` (the operands have the same rank),
    `gather_elements_c3` (off `axis`, no dimension of `indices` exceeds
    that of `data`).

    ```mlir
    %y = cleave.gather_elements %data, %ids {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
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

def Cleave_ScatterElementsOp : Cleave_InferredOp<"scatter_elements"> {
  let summary = "write single elements along one axis into a copy";
  let description = [{
    ONNX `ScatterElements`: the result is `data` with, for `axis = 0`,
    `output[indices[i][j]][j]` replaced by (`reduction = "none"`) or
    combined with (`add`, `mul`, `max`, `min`) `updates[i][j]`, and likewise
    for the other axes. Updates are applied in row-major order, so with a
    reduction repeated indices accumulate; without one the last write wins.
    Negative indices count from the end. Folds on constants.

    Verifier labels: `scatter_elements_c1` (`axis` in `[0, rank)`),
    `scatter_elements_c2` (the operands have the same rank),
    `scatter_elements_c3` (`indices` and `updates` have the same shape),
    `scatter_elements_c4` (off `axis`, no dimension of `indices` exceeds
    that of `data`), `scatter_elements_c5` (`updates` has the element type
    of `data`), `scatter_elements_c6` (`reduction` is known).

    ```mlir
    %y = cleave.scatter_elements %data, %ids, %upd {axis = 0 : i64, reduction = "max"} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$data, Cleave_IndexTensor:$indices,
                   Cleave_Tensor:$updates, I64Attr:$axis,
                   Cleave_ScatterReductionAttr:$reduction);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Cleave_OneHotOp : Cleave_InferredOp<"one_hot"> {
  let summary = "one-hot encoding of integer indices";
  let description = [{
    ONNX `OneHot`: the result inserts a dimension of size `depth` at `axis`
    (normalised) into the shape of `indices`; the element at position `j`
    of that dimension is `values[1]` (on) where the index is `j`, and
    `values[0]` (off) elsewhere. A negative index counts from `depth`; an
    index outside `[-depth, depth)` gives a row of off values, as ONNX
    defines. The importer casts float indices to integers and reads `depth`
    from its constant input. Folds on constants.

    Verifier labels: `one_hot_c1` (`depth` is positive), `one_hot_c2`
    (`axis` in `[0, rank(indices)]`), `one_hot_c3` (`values` is a 1-D
    tensor of two elements).

    ```mlir
    %y = cleave.one_hot %ids, %values {depth = 10 : i64, axis = 1 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Cleave_IndexTensor:$indices, Cleave_Tensor:$values,
                   I64Attr:$depth, I64Attr:$axis);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    $indices `,` $values attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Cleave_TriluOp : Cleave_InferredOp<"trilu"> {
  let summary = "keep the upper or lower triangle of the innermost matrices";
  let description = [{
    ONNX `Trilu` with a constant diagonal offset `k`: element `(i, j)` of
    each matrix in the last two dimensions is kept where `j - i >= k`
    (`upper`) or `j - i <= k` (lower) and is zero elsewhere. Folds on
    constants.

    Verifier label: `trilu_c1` (the operand has rank at least 2).

    ```mlir
    %y = cleave.trilu %x {k = 0 : i64, upper = true} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input,
                   DefaultValuedAttr<I64Attr, "0">:$k,
                   DefaultValuedAttr<BoolAttr, "true">:$upper);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEINDEXOPS_TD
