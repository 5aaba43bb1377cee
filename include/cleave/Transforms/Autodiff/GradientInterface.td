//===- GradientInterface.td - vector-Jacobian products -----*- tablegen -*-===//
//
// The op interface through which `cleave-autodiff` asks an op for its
// vector-Jacobian product. cleave ops implement it as external models, one
// file per op family (lib/Transforms/Autodiff), so that the dialect does not
// depend on autodiff.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_AUTODIFF_GRADIENTINTERFACE_TD
#define CLEAVE_TRANSFORMS_AUTODIFF_GRADIENTINTERFACE_TD

include "mlir/IR/OpBase.td"

def Cleave_GradientInterface : OpInterface<"GradientInterface"> {
  let cppNamespace = "::cleave";
  let description = [{
    The reverse-mode derivative of an op: given the cotangent of the loss
    with respect to each of its results, the op builds, from cleave ops, the
    cotangent with respect to each of its operands (its vector-Jacobian
    product). A cotangent has the type of the value it belongs to.

    Operands that carry no derivative (integer indices, boolean conditions,
    shapes) get none. Rules may read the op's operands and results: the
    backward ops are built after the whole forward computation, so every
    forward value is available to them.

    Methods may assume that every operand and result is a ranked tensor of
    static shape; `cleave-autodiff` checks that before it asks.
  }];

  let methods = [
    InterfaceMethod<[{
        Builds the cotangents of the operands that `gradients.wanted` asks
        for into `gradients.operands`, from the result cotangents in
        `gradients.results`, with `builder` (whose insertion point and
        location the caller sets). A rule that cannot differentiate this
        instance of the op (an attribute value it does not know) emits an
        error on the op and fails.
      }],
      "::mlir::LogicalResult", "buildGradients",
      (ins "::cleave::GradientBuilder &":$builder,
           "::cleave::OpGradients &":$gradients)>,
  ];
}

#endif // CLEAVE_TRANSFORMS_AUTODIFF_GRADIENTINTERFACE_TD
