//===- CleaveElementwiseOps.td - elementwise ops -----------*- tablegen -*-===//
//
// Unary, binary (broadcasting), comparison, selection and cast operations.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEELEMENTWISEOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEELEMENTWISEOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveBase.td"

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

class Cleave_FloatUnaryOp<string mnemonic, string formula>
    : Cleave_UnaryOp<mnemonic, Cleave_FloatTensor> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` elementwise.\n\n"
      # "Example:\n\n```mlir\n%y = cleave." # mnemonic
      # " %x : tensor<4x8xf32>\n```";
}

def Cleave_SqrtOp : Cleave_FloatUnaryOp<"sqrt", "y = sqrt(x)"> {
  let hasFolder = 1;
}
def Cleave_ReciprocalOp : Cleave_FloatUnaryOp<"reciprocal", "y = 1 / x">;
def Cleave_ExpOp : Cleave_FloatUnaryOp<"exp", "y = exp(x)">;
def Cleave_LogOp : Cleave_FloatUnaryOp<"log", "y = log(x)">;
def Cleave_ErfOp : Cleave_FloatUnaryOp<"erf", "y = erf(x)">;
def Cleave_TanhOp : Cleave_FloatUnaryOp<"tanh", "y = tanh(x)">;
def Cleave_SigmoidOp : Cleave_FloatUnaryOp<"sigmoid", "y = 1 / (1 + exp(-x))">;
def Cleave_SinOp : Cleave_FloatUnaryOp<"sin", "y = sin(x)">;
def Cleave_CosOp : Cleave_FloatUnaryOp<"cos", "y = cos(x)">;
def Cleave_FloorOp : Cleave_FloatUnaryOp<"floor", "y = floor(x)"> {
  let hasFolder = 1;
}
def Cleave_CeilOp : Cleave_FloatUnaryOp<"ceil", "y = ceil(x)"> {
  let hasFolder = 1;
}
def Cleave_SoftplusOp : Cleave_FloatUnaryOp<"softplus", "y = log(1 + exp(x))">;
def Cleave_HardSwishOp
    : Cleave_FloatUnaryOp<"hard_swish", "y = x * max(0, min(1, x / 6 + 1 / 2))">;

def Cleave_RoundOp : Cleave_UnaryOp<"round", Cleave_FloatTensor> {
  let summary = "elementwise rounding to the nearest integer, halves to even";
  let description = [{
    `y` is the integer nearest to `x`; a value halfway between two integers
    goes to the even one (`round(2.5) = 2`, `round(-0.5) = -0.0`), as ONNX
    `Round` and `numpy.round` define it. NaN, infinities and signed zeros are
    returned as they are. Folds on constants.

    ```mlir
    %y = cleave.round %x : tensor<4xf32>
    ```
  }];
  let hasFolder = 1;
}

def Cleave_SignOp : Cleave_UnaryOp<"sign"> {
  let summary = "elementwise sign";
  let description = [{
    `y = -1, 0 or 1` as `x` is negative, zero or positive, in the element
    type of `x`. Both zeros give `+0.0` and NaN gives NaN, as `numpy.sign`.
    Folds on constants.

    ```mlir
    %y = cleave.sign %x : tensor<4xi32>
    ```
  }];
  let hasFolder = 1;
}

def Cleave_ReluOp : Cleave_UnaryOp<"relu"> {
  let summary = "elementwise max(x, 0)";
  let description = [{
    Rectified linear unit, `y = max(x, 0)`, on float or signed integer tensors.

    ```mlir
    %y = cleave.relu %x : tensor<2x16xf32>
    ```
  }];
}

def Cleave_NegOp : Cleave_UnaryOp<"neg"> {
  let summary = "elementwise negation";
  let description = [{
    `y = -x`. Folds when its operand is a constant.

    ```mlir
    %y = cleave.neg %x : tensor<4xi64>
    ```
  }];
  let hasFolder = 1;
}

def Cleave_AbsOp : Cleave_UnaryOp<"abs"> {
  let summary = "elementwise absolute value";
  let description = [{
    `y = |x|`.

    ```mlir
    %y = cleave.abs %x : tensor<4xf32>
    ```
  }];
}

def Cleave_NotOp : Cleave_UnaryOp<"not", Cleave_BoolTensor> {
  let summary = "elementwise logical negation";
  let description = [{
    Logical not of a boolean (`i1`) tensor. Folds on constants.

    ```mlir
    %y = cleave.not %x : tensor<4xi1>
    ```
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Float classification
//===----------------------------------------------------------------------===//

/// A test of each float element whose result is a boolean tensor of the
/// input's shape.
class Cleave_FloatClassOp<string mnemonic>
    : Cleave_InferredOp<mnemonic, [Elementwise, SameOperandsAndResultShape]> {
  let results = (outs Cleave_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Cleave_IsNaNOp : Cleave_FloatClassOp<"is_nan"> {
  let summary = "elementwise test for NaN";
  let description = [{
    `y = isnan(x)`: true where the element is NaN, of either sign. Folds on
    constants.

    ```mlir
    %y = cleave.is_nan %x : tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input);
}

def Cleave_IsInfOp : Cleave_FloatClassOp<"is_inf"> {
  let summary = "elementwise test for infinity";
  let description = [{
    True where the element is `+inf` and `detect_positive` is set, or `-inf`
    and `detect_negative` is set (ONNX `IsInf`; both are set by default).
    With neither set the result is false everywhere. Folds on constants.

    ```mlir
    %y = cleave.is_inf %x {detect_negative = false} : tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input,
                   DefaultValuedAttr<BoolAttr, "true">:$detect_positive,
                   DefaultValuedAttr<BoolAttr, "true">:$detect_negative);
}

//===----------------------------------------------------------------------===//
// Unary ops with parameters
//===----------------------------------------------------------------------===//

def Cleave_LeakyReluOp : Cleave_UnaryOp<"leaky_relu", Cleave_FloatTensor> {
  let summary = "elementwise leaky rectified linear unit";
  let description = [{
    `y = x` for `x >= 0`, `alpha * x` otherwise.

    ```mlir
    %y = cleave.leaky_relu %x {alpha = 1.000000e-02 : f32} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, F32Attr:$alpha);
}

def Cleave_EluOp : Cleave_UnaryOp<"elu", Cleave_FloatTensor> {
  let summary = "elementwise exponential linear unit";
  let description = [{
    `y = x` for `x >= 0`, `alpha * (exp(x) - 1)` otherwise.

    ```mlir
    %y = cleave.elu %x {alpha = 1.000000e+00 : f32} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, F32Attr:$alpha);
}

def Cleave_GeluOp : Cleave_UnaryOp<"gelu", Cleave_FloatTensor> {
  let summary = "elementwise Gaussian error linear unit";
  let description = [{
    `y = 0.5 * x * (1 + erf(x / sqrt(2)))` when `approximate` is `"none"`,
    `y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` when it is
    `"tanh"`. Imported from ONNX `Gelu` (opset 20) and produced by the
    pattern fusion pass from the decompositions that exporters write.

    ```mlir
    %y = cleave.gelu %x {approximate = "none"} : tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let hasVerifier = 1;
}

def Cleave_HardSigmoidOp : Cleave_UnaryOp<"hard_sigmoid", Cleave_FloatTensor> {
  let summary = "elementwise hard sigmoid";
  let description = [{
    `y = max(0, min(1, alpha * x + beta))`.

    ```mlir
    %y = cleave.hard_sigmoid %x {alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$input, F32Attr:$alpha, F32Attr:$beta);
}

def Cleave_ClipOp : Cleave_UnaryOp<"clip"> {
  let summary = "elementwise clamp to [min, max]";
  let description = [{
    `y = min(max(x, min), max)`. Either bound may be absent. ONNX passes the
    bounds as attributes before opset 11 and as tensor inputs after; the
    importer turns constant bounds into these attributes.

    ```mlir
    %y = cleave.clip %x {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
  let hasVerifier = 1;
}

def Cleave_CastOp : Cleave_Op<"cast", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "elementwise conversion of the element type";
  let description = [{
    Converts each element to the result's element type with ONNX `Cast`
    semantics (float to integer truncates toward zero; to `i1` is `x != 0`).
    Folds on constants and when the types already agree.

    ```mlir
    %y = cleave.cast %x : tensor<4xi64> to tensor<4xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

class Cleave_ArithOp<string mnemonic, string formula, string semantics = "">
    : Cleave_BroadcastBinaryOp<mnemonic> {
  let summary = "elementwise " # formula # " with broadcasting";
  let description = "Computes `" # formula # "` elementwise after ONNX "
      # "multidirectional broadcasting of the operands, which must have the "
      # "same element type. Folds when both operands are constants."
      # semantics # "\n\n"
      # "Example:\n\n```mlir\n%z = cleave." # mnemonic
      # " %x, %y : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>\n```";
  let hasFolder = 1;
}

def Cleave_AddOp : Cleave_ArithOp<"add", "lhs + rhs">;
def Cleave_SubOp : Cleave_ArithOp<"sub", "lhs - rhs">;
def Cleave_MulOp : Cleave_ArithOp<"mul", "lhs * rhs">;
def Cleave_DivOp : Cleave_ArithOp<"div", "lhs / rhs",
    " Integer division truncates toward zero; where ONNX leaves it undefined "
    # "cleave defines it, the same when folding and on every target: a "
    # "division by zero gives 0 (as NumPy's), and the signed overflow "
    # "`MIN / -1` gives `MIN`.">;
def Cleave_PowOp : Cleave_ArithOp<"pow", "lhs ^ rhs">;

def Cleave_ModOp : Cleave_BroadcastBinaryOp<"mod"> {
  let summary = "elementwise remainder with broadcasting";
  let description = [{
    The remainder of `lhs / rhs` after ONNX multidirectional broadcasting of
    the operands, which must have the same numeric (not boolean) element
    type. With `fmod` false the remainder takes the sign of the divisor, as
    Python's `%` and `numpy.mod` (a zero remainder of floats has the sign of
    the divisor); with `fmod` true it takes the sign of the dividend, as C's
    `fmod` and `numpy.fmod`. ONNX `Mod` before opset 28 requires `fmod` for
    floats; cleave computes both forms for every numeric type.

    Where ONNX leaves integer remainders undefined cleave defines them, the
    same when folding and on every target, as it defines `cleave.div`: a
    remainder by zero is 0 (as NumPy's), and `MIN mod -1` is 0. A float
    remainder by zero is NaN. Folds when both operands are constants.

    Verifier label: `mod_c1` (the element type is numeric).

    ```mlir
    %z = cleave.mod %x, %y {fmod = true} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$lhs, Cleave_Tensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$fmod);
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Cleave_MinOp : Cleave_ArithOp<"min", "min(lhs, rhs)">;
def Cleave_MaxOp : Cleave_ArithOp<"max", "max(lhs, rhs)">;

class Cleave_CompareOp<string mnemonic, string formula>
    : Cleave_BroadcastBinaryOp<mnemonic, Cleave_Tensor, Cleave_BoolTensor> {
  let summary = "elementwise " # formula # " with broadcasting";
  let description = "Computes `" # formula # "` elementwise after "
      # "broadcasting; the result is a boolean (`i1`) tensor. Folds when both "
      # "operands are constants.\n\n"
      # "Example:\n\n```mlir\n%z = cleave." # mnemonic
      # " %x, %y : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>\n```";
  let hasFolder = 1;
}

def Cleave_EqualOp : Cleave_CompareOp<"equal", "lhs == rhs">;
def Cleave_LessOp : Cleave_CompareOp<"less", "lhs < rhs">;
def Cleave_LessEqualOp : Cleave_CompareOp<"less_equal", "lhs <= rhs">;
def Cleave_GreaterOp : Cleave_CompareOp<"greater", "lhs > rhs">;
def Cleave_GreaterEqualOp : Cleave_CompareOp<"greater_equal", "lhs >= rhs">;

class Cleave_LogicalOp<string mnemonic, string formula>
    : Cleave_BroadcastBinaryOp<mnemonic, Cleave_BoolTensor, Cleave_BoolTensor> {
  let summary = "elementwise logical " # formula # " with broadcasting";
  let description = "Computes `" # formula # "` elementwise on boolean "
      # "tensors after broadcasting.\n\n"
      # "Example:\n\n```mlir\n%z = cleave." # mnemonic
      # " %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>\n```";
  let hasFolder = 1;
}

def Cleave_AndOp : Cleave_LogicalOp<"and", "lhs and rhs">;
def Cleave_OrOp : Cleave_LogicalOp<"or", "lhs or rhs">;

def Cleave_WhereOp : Cleave_InferredOp<"where"> {
  let summary = "elementwise selection with broadcasting";
  let description = [{
    `output = condition ? true_value : false_value`, broadcasting all three
    operands together. Folds when all operands are constants, and to one of
    the values when the condition is a splat. Canonicalizes the guard that
    exporters write around a masked softmax, `where(is_nan(s), 0, s)` for
    `s = cleave.softmax`, into that softmax with `nan_to_zero`.

    ```mlir
    %z = cleave.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Cleave_BoolTensor:$condition, Cleave_Tensor:$true_value,
                   Cleave_Tensor:$false_value);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEELEMENTWISEOPS_TD
