//===- SplitProjections.cpp - one projection per split piece ----*- C++ -*-===//
//
// `cleave-split-projections`: `split(x @ W [+ b])` along the projection's
// output features becomes one projection per piece on a window of W (and b).
// Splitting a fused projection's output features over devices would give
// each device a contiguous block of the fused output, which mixes pieces;
// per-piece projections split each piece on its own, which is what a
// Megatron QKV projection does.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/Builders.h"

namespace cleave {
#define GEN_PASS_DEF_SPLITPROJECTIONSPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// A weight, or a window of one that no device split, whose window can be
/// narrowed further.
bool isWindowable(Value value) {
  Operation *def = value.getDefiningOp();
  if (auto slice = dyn_cast_or_null<WeightSliceOp>(def))
    return !slice.getSplitDim();
  return isa_and_nonnull<WeightOp>(def);
}

/// The window `[starts, starts + type.shape)` of the weight (or weight
/// window) that defines `value`.
Value narrowWindow(OpBuilder &builder, Value value, ArrayRef<int64_t> starts,
                   RankedTensorType type) {
  Operation *def = value.getDefiningOp();
  Builder b(builder.getContext());
  SmallVector<int64_t> shape, offsets(starts);
  StringAttr name, file;
  IntegerAttr offset, length;
  if (auto weight = dyn_cast<WeightOp>(def)) {
    auto full = cast<RankedTensorType>(weight.getOutput().getType());
    shape.assign(full.getShape().begin(), full.getShape().end());
    name = weight.getNameAttr();
    file = weight.getFileAttr();
    offset = weight.getOffsetAttr();
    length = weight.getLengthAttr();
  } else {
    auto slice = cast<WeightSliceOp>(def);
    shape.assign(slice.getShape().begin(), slice.getShape().end());
    for (auto [o, s] : llvm::zip(offsets, slice.getStarts()))
      o += s;
    name = slice.getNameAttr();
    file = slice.getFileAttr();
    offset = slice.getOffsetAttr();
    length = slice.getLengthAttr();
  }
  auto window = WeightSliceOp::create(
      builder, def->getLoc(), type, name, file, offset, length,
      b.getDenseI64ArrayAttr(shape), b.getDenseI64ArrayAttr(offsets),
      IntegerAttr(), StringAttr(), IntegerAttr());
  for (NamedAttribute attr : def->getDiscardableAttrs())
    window->setAttr(attr.getName(), attr.getValue());
  return window;
}

/// `split` of a projection's output features, with the ops to replace.
struct FusedProjection {
  SplitOp split;
  MatMulOp matmul;
  AddOp bias; // May be null.
  unsigned biasOperand = 1;
};

std::optional<FusedProjection> match(SplitOp split) {
  auto inputType = cast<RankedTensorType>(split.getInput().getType());
  if (static_cast<int64_t>(split.getAxis()) != inputType.getRank() - 1)
    return std::nullopt;
  FusedProjection fused{split, nullptr, nullptr};
  Value projected = split.getInput();
  if (auto add = projected.getDefiningOp<AddOp>()) {
    if (!add->hasOneUse())
      return std::nullopt;
    for (unsigned i = 0; i < 2; ++i) {
      auto matmul = add->getOperand(i).getDefiningOp<MatMulOp>();
      Value bias = add->getOperand(1 - i);
      auto biasType = cast<RankedTensorType>(bias.getType());
      if (matmul && isWindowable(bias) && biasType.getRank() == 1 &&
          biasType.getDimSize(0) == inputType.getShape().back() &&
          add.getType() == matmul.getType()) {
        fused.matmul = matmul;
        fused.bias = add;
        fused.biasOperand = 1 - i;
        break;
      }
    }
  } else {
    fused.matmul = projected.getDefiningOp<MatMulOp>();
  }
  if (!fused.matmul || !fused.matmul->hasOneUse() ||
      !isWindowable(fused.matmul.getRhs()))
    return std::nullopt;
  auto weightType = cast<RankedTensorType>(fused.matmul.getRhs().getType());
  if (weightType.getRank() != 2 ||
      cast<RankedTensorType>(fused.matmul.getLhs().getType()).getRank() < 2)
    return std::nullopt;
  return fused;
}

void rewrite(FusedProjection fused) {
  OpBuilder builder(fused.split);
  MatMulOp matmul = fused.matmul;
  auto weightType = cast<RankedTensorType>(matmul.getRhs().getType());
  auto outType = cast<RankedTensorType>(matmul.getType());
  int64_t start = 0;
  for (auto [piece, size] :
       llvm::zip(fused.split.getResults(), fused.split.getSizes())) {
    Value weight =
        narrowWindow(builder, matmul.getRhs(), {0, start},
                     RankedTensorType::get({weightType.getDimSize(0), size},
                                           weightType.getElementType()));
    SmallVector<int64_t> shape(outType.getShape());
    shape.back() = size;
    auto pieceType = RankedTensorType::get(shape, outType.getElementType());
    Operation *projected = MatMulOp::create(builder, matmul.getLoc(), pieceType,
                                            matmul.getLhs(), weight);
    projected->setDiscardableAttrs(matmul->getDiscardableAttrDictionary());
    if (AddOp add = fused.bias) {
      Value bias =
          narrowWindow(builder, add->getOperand(fused.biasOperand), {start},
                       RankedTensorType::get({size}, outType.getElementType()));
      Value lhs = projected->getResult(0), rhs = bias;
      if (fused.biasOperand == 0)
        std::swap(lhs, rhs);
      projected = AddOp::create(builder, add.getLoc(), pieceType, lhs, rhs);
      projected->setDiscardableAttrs(add->getDiscardableAttrDictionary());
    }
    piece.replaceAllUsesWith(projected->getResult(0));
    start += size;
  }
  SmallVector<Operation *> dead = {fused.split};
  if (fused.bias)
    dead.push_back(fused.bias);
  dead.push_back(matmul);
  SmallVector<Value> sources = {matmul.getRhs()};
  if (fused.bias)
    sources.push_back(fused.bias->getOperand(fused.biasOperand));
  for (Operation *op : dead)
    op->erase();
  for (Value source : sources)
    if (source.use_empty())
      source.getDefiningOp()->erase();
}

struct SplitProjectionsPass
    : public cleave::impl::SplitProjectionsPassBase<SplitProjectionsPass> {
  void runOnOperation() override { splitProjections(getOperation()); }
};

} // namespace

void cleave::splitProjections(Operation *root) {
  SmallVector<FusedProjection> matches;
  root->walk([&](SplitOp split) {
    if (std::optional<FusedProjection> fused = match(split))
      matches.push_back(*fused);
  });
  for (FusedProjection &fused : matches)
    rewrite(fused);
}
