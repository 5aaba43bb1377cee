//===- CleaveSelectionOps.td - top-k, arg max/min, cumsum --*- tablegen -*-===//
//
// Ops that work along one axis and order or accumulate its elements: the
// axis is never split across devices.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVESELECTIONOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVESELECTIONOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveBase.td"

def Cleave_TopKOp : Cleave_InferredOp<"topk"> {
  let summary = "the k largest or smallest elements along one axis";
  let description = [{
    ONNX `TopK` with a constant `k`: `values` holds the `k` largest elements
    (the smallest without `largest`) of each line along `axis`, in order
    (descending, or ascending without `largest`), and `indices` their
    positions along the axis. Equal elements keep their input order (the
    lower index comes first) and NaN orders above every number, as
    onnxruntime does. ONNX leaves the order of an unsorted TopK
    (`sorted = 0`) to the implementation; cleave always sorts.

    Both results have the input's shape with dimension `axis` replaced by
    `k`. Folds on small constants.

    Verifier labels: `topk_c1` (`axis` in `[0, rank)`), `topk_c2` (`k` in
    `[0, input.shape[axis]]`).

    ```mlir
    %v, %i = cleave.topk %x {axis = 1 : i64, k = 2 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, I64Attr:$axis, I64Attr:$k,
                   DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs Cleave_Tensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

class Cleave_ArgReduceOp<string mnemonic, string extreme>
    : Cleave_InferredOp<mnemonic> {
  let summary = "index of the " # extreme # " element along one axis";
  let description = "ONNX `Arg" # !if(!eq(extreme, "largest"), "Max", "Min")
      # "`: the position along `axis` (in `[0, rank)`) of the " # extreme
      # " element of each line, as int64. Of equal elements the first wins, "
      # "or the last with `select_last_index`. A NaN counts as the "
      # "extreme only where it comes first in the line, as in onnxruntime's "
      # "scan. With `keepdims` the axis stays with size 1, without it it is "
      # "removed. Folds on small constants and along a dimension of size 1."
      # "\n\nVerifier label: `" # mnemonic # "_c1` (`axis` in range).\n\n"
      # "Example:\n\n```mlir\n%i = cleave." # mnemonic
      # " %x {axis = 1 : i64, keepdims = false} : "
      # "(tensor<2x10xf32>) -> tensor<2xi64>\n```";
  let arguments = (ins Cleave_Tensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Cleave_ArgMaxOp : Cleave_ArgReduceOp<"arg_max", "largest">;
def Cleave_ArgMinOp : Cleave_ArgReduceOp<"arg_min", "smallest">;

def Cleave_CumSumOp : Cleave_Op<"cumsum", [Pure, SameOperandsAndResultType,
                                           InferTypeOpInterface]> {
  let summary = "cumulative sum along one axis";
  let description = [{
    ONNX `CumSum` with a constant axis (normalised to `[0, rank)`): element
    `i` of each line along `axis` is the sum of elements `0..i`. With
    `exclusive` element `i` itself is left out (the first sum is 0); with
    `reverse` the sums run from the end of the line. Integers wrap around.
    Folds on small constants and along a dimension of size 1.

    Verifier label: `cumsum_c1` (`axis` in range).

    ```mlir
    %y = cleave.cumsum %x {axis = 1 : i64, exclusive = true} : tensor<2x16xi64>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVESELECTIONOPS_TD
