//===- GradientInterface.cpp - gradient models for cleave ops ---*- C++ -*-===//
//
// Registers the `cleave::GradientInterface` external models of every op
// family. A new family is one more file with its `attach...Gradients` and
// one more line here.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"

using namespace mlir;
using namespace cleave;

#include "cleave/Transforms/Autodiff/GradientInterface.cpp.inc"

void cleave::registerGradientInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, CleaveDialect *) {
    detail::attachAttentionGradients(context);
    detail::attachCommGradients(context);
    detail::attachConvGradients(context);
    detail::attachElementwiseGradients(context);
    detail::attachNNGradients(context);
    detail::attachRecurrentGradients(context);
    detail::attachShapeGradients(context);
  });
}
