//===- MixedPrecision.cpp - low-precision products of a step ----*- C++ -*-===//
//
// `cleave-mixed-precision`: the matrix products, convolutions and attention
// of a model compute on values rounded to bfloat16 or float16, as automatic
// mixed precision runs them, while everything else (softmax, losses, norms,
// reductions, the parameters and their updates) stays float32.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Autodiff/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/TrainingOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/TypeSwitch.h"

namespace cleave {
#define GEN_PASS_DEF_MIXEDPRECISIONPASS
#include "cleave/Transforms/Autodiff/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// The operands of `op` that a low-precision product reads rounded; none
/// for the ops that compute in float32. Attention rounds its query, key and
/// value; its mask is added to the scores, which its softmax reads in
/// float32.
SmallVector<OpOperand *> getRoundedOperands(Operation *op) {
  auto all = [](Operation *op) {
    return llvm::to_vector(llvm::map_range(
        op->getOpOperands(), [](OpOperand &operand) { return &operand; }));
  };
  return llvm::TypeSwitch<Operation *, SmallVector<OpOperand *>>(op)
      .Case<MatMulOp, GemmOp, ConvOp, ConvTransposeOp>(all)
      .Case([](AttentionOp attention) {
        return SmallVector<OpOperand *>{&attention.getQueryMutable(),
                                        &attention.getKeyMutable(),
                                        &attention.getValueMutable()};
      })
      .Default([](Operation *) { return SmallVector<OpOperand *>{}; });
}

class LowPrecisionRounding {
public:
  LowPrecisionRounding(OpBuilder &builder, FloatType low, StringRef precision)
      : builder(builder), low(low), precision(precision) {}

  /// Rounds the operands and results of the low-precision products in
  /// `func`; fails, naming the op, on one whose operands are not float32.
  LogicalResult run(func::FuncOp func) {
    SmallVector<std::pair<Operation *, SmallVector<OpOperand *>>> products;
    WalkResult walk = func.walk([&](Operation *op) {
      SmallVector<OpOperand *> operands = getRoundedOperands(op);
      if (operands.empty())
        return WalkResult::advance();
      for (OpOperand *operand : operands)
        if (!isFloat32(operand->get())) {
          InFlightDiagnostic diag =
              emitError(op->getLoc(), "cleave-mixed-precision: ")
              << op->getName();
          if (std::string node = getNodeName(op->getLoc()); !node.empty())
            diag << " (node '" << node << "')";
          diag << " cannot compute in " << precision << ": operand #"
               << operand->getOperandNumber() << " is "
               << operand->get().getType() << ", not a float32 tensor";
          return WalkResult::interrupt();
        }
      products.emplace_back(op, std::move(operands));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    for (auto &[op, operands] : products)
      roundProduct(op, operands);
    return success();
  }

private:
  static bool isFloat32(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && type.getElementType().isF32();
  }

  /// The product reads its operands rounded to the low precision and
  /// accumulates in float32; its result is rounded as a low-precision
  /// result would be, and then read in float32 by the ops that follow.
  void roundProduct(Operation *op, ArrayRef<OpOperand *> operands) {
    builder.setInsertionPoint(op);
    for (OpOperand *operand : operands)
      operand->set(round(operand->get(), op->getLoc()));
    builder.setInsertionPointAfter(op);
    for (Value result : op->getResults()) {
      if (!isFloat32(result))
        continue;
      auto [narrow, rounded] = roundTrip(result, op->getLoc());
      result.replaceAllUsesExcept(rounded, narrow);
    }
  }

  /// `value` rounded to the nearest low-precision number (ties to even),
  /// as float32: a cast to the low precision and back, which the gradient
  /// rules of the casts repeat on the cotangent.
  Value round(Value value, Location loc) {
    return roundTrip(value, loc).second;
  }

  /// The two casts of `round`, and the rounded value.
  std::pair<Operation *, Value> roundTrip(Value value, Location loc) {
    auto type = cast<RankedTensorType>(value.getType());
    auto narrow = CastOp::create(builder, loc, type.clone(low), value);
    auto wide = CastOp::create(builder, loc, type, narrow.getResult());
    return {narrow, wide.getResult()};
  }

  OpBuilder &builder;
  FloatType low;
  /// The precision as the option spells it.
  StringRef precision;
};

struct MixedPrecisionPass
    : public cleave::impl::MixedPrecisionPassBase<MixedPrecisionPass> {
  using MixedPrecisionPassBase::MixedPrecisionPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    FloatType low;
    if (precision == kBFloat16Precision)
      low = BFloat16Type::get(context);
    else if (precision == kFloat16Precision)
      low = Float16Type::get(context);
    else {
      emitError(module.getLoc(), "cleave-mixed-precision: precision=")
          << precision << ": the low precision is bf16 or fp16";
      return signalPassFailure();
    }
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      emitError(module.getLoc(), "cleave-mixed-precision: no function @")
          << entry;
      return signalPassFailure();
    }
    OpBuilder builder(context);
    if (failed(LowPrecisionRounding(builder, low, precision).run(func)))
      return signalPassFailure();
  }
};

} // namespace
