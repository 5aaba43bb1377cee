//===- Passes.td - automatic differentiation ---------------*- tablegen -*-===//
//
// The passes that turn a model's forward function into the phases of a
// training step.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_AUTODIFF_PASSES_TD
#define CLEAVE_TRANSFORMS_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"cleave-autodiff", "mlir::ModuleOp"> {
  let summary = "Build the gradient of a scalar loss with respect to every trainable parameter";
  let description = [{
    Differentiates the function `entry` in reverse mode. The loss is the
    result whose `cleave.name` is `loss`: a float tensor of one element (a
    0-d scalar, or `tensor<1xf32>` as a ReduceMean with keepdims leaves it).
    The trainable parameters are the float `cleave.weight`s, one per weight
    name (a weight read twice, as tied embeddings are, has one gradient: the
    sum of its uses'), except those whose name `freeze` matches (an LLVM
    regular expression, matched anywhere in the name: anchor it with `^` and
    `$` to match whole names).

    The backward ops are built after the forward ones, walking the ops on
    the path from the parameters to the loss in reverse order; each op's
    `cleave::GradientInterface` turns the cotangents of its results into
    those of its operands, and the cotangents of a value used several times
    are summed. The function then returns the loss followed by one gradient
    per parameter, in the order the parameters first appear; its other
    results are dropped, with the ops only they needed. Each gradient result
    is named `grad:<weight name>` (`cleave.name`) and carries
    `cleave.gradient_of = "<weight name>"`, through which later passes find
    the parameter it belongs to. A parameter the loss does not depend on has
    a zero gradient.

    Errors: a `loss` that names no result, or one that is not a float scalar;
    a function without trainable parameters; a value on the path from the
    parameters to the loss without a static shape; and ops on that path
    without a gradient rule, listed in one error by op and node name.

    Before (`cleave-autodiff="loss=loss"`):

    ```mlir
    func.func @main(%x: tensor<4x8xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
      %w = cleave.weight "w" {...} : tensor<8x16xf32>
      %y = cleave.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x16xf32>) -> tensor<f32>
      return %l : tensor<f32>
    }
    ```

    After:

    ```mlir
    func.func @main(%x: tensor<4x8xf32> {cleave.name = "x"})
        -> (tensor<f32> {cleave.name = "loss"},
            tensor<8x16xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"}) {
      %w = cleave.weight "w" {...} : tensor<8x16xf32>
      %y = cleave.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x16xf32>) -> tensor<f32>
      %dy = cleave.constant dense<1.000000e+00> : tensor<4x16xf32>
      %xt = cleave.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
      %dw = cleave.matmul %xt, %dy : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
      return %l, %dw : tensor<f32>, tensor<8x16xf32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function to differentiate">,
    Option<"loss", "loss", "std::string", /*default=*/"",
           "The name (cleave.name) of the result to differentiate">,
    Option<"freeze", "freeze", "std::string", /*default=*/"",
           "Regular expression of the weight names that are not trained">,
  ];
  let dependentDialects = ["cleave::CleaveDialect"];
}

#endif // CLEAVE_TRANSFORMS_AUTODIFF_PASSES_TD
