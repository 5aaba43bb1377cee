//===- CommGradients.cpp - gradients of collectives ------------*- C++ -*-===//
//
// The vector-Jacobian products of communication ops, which depend on how
// the loss is spread over the group. Along `dp` every replica computes the
// loss of its own samples and the step's loss is their sum: a sum that
// every replica receives (an all-reduce of per-replica partial sums, as in
// synchronised batch normalisation) passes each replica the sum of every
// replica's cotangent, so its adjoint is the same all-reduce. Along `tp`
// the loss is one value held by every device, and the adjoints are the
// conjugates of Megatron-LM (identity for an all-reduce, ...), which have
// no rule yet: differentiating through them is an error naming the op.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

using namespace mlir;
using namespace cleave;

namespace {

struct AllReduceGradientModel
    : GradientInterface::ExternalModel<AllReduceGradientModel, AllReduceOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto reduce = cast<AllReduceOp>(op);
    if (reduce.getAxis() != "dp" || reduce.getReduction() != "sum")
      return reduce.emitOpError("has no gradient rule for a '")
             << reduce.getReduction() << "' all-reduce along '"
             << reduce.getAxis() << "' (only a sum along 'dp')";
    if (gradients.wanted[0])
      gradients.operands[0] = b.allReduceSum(
          gradients.results[0], reduce.getAxis(), reduce.getGroupSize());
    return success();
  }
};

} // namespace

void cleave::detail::attachCommGradients(MLIRContext *context) {
  AllReduceOp::attachInterface<AllReduceGradientModel>(*context);
}
