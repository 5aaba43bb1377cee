//===- CommOps.cpp - communication and partitioned-data ops -----*- C++ -*-===//
//
// Verifiers of the ops that partitioned IR communicates with. Each message
// starts with the verifier label that docs and tests refer to.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/rt/Kernels.h"
#include "cleave/rt/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/STLExtras.h"

#include <type_traits>

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

/// The stage of the function that holds `op` (`cleave.stage` on a stage
/// function), if any.
static std::optional<int64_t> enclosingStage(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func)
    return std::nullopt;
  return getStage(func);
}

static LogicalResult verifyPeer(Operation *op, IntegerAttr peer,
                                IntegerAttr tag, StringRef label) {
  if (peer.getInt() < 0 || tag.getInt() < 0)
    return op->emitOpError()
           << "[" << label << "_c1] peer (" << peer.getInt() << ") and tag ("
           << tag.getInt() << ") must be non-negative";
  if (std::optional<int64_t> stage = enclosingStage(op);
      stage && *stage == peer.getInt())
    return op->emitOpError() << "[" << label << "_c2] peer " << peer.getInt()
                             << " is the stage the op runs in";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyPeer(*this, getPeerAttr(), getTagAttr(), "send");
}

LogicalResult RecvOp::verify() {
  return verifyPeer(*this, getPeerAttr(), getTagAttr(), "recv");
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// A collective runs within the group along one axis of the mesh
/// (rt/Mesh.h); only a slice may also take its block of the batch (the
/// partitioner's "batch" grid axis, kBatchAxisName), which moves nothing.
static LogicalResult verifyGroup(Operation *op, StringRef axis,
                                 IntegerAttr groupSize,
                                 bool batchAllowed = false) {
  rt::MeshAxis meshAxis;
  bool known =
      rt::parseMeshAxis(axis, meshAxis) || (batchAllowed && axis == "batch");
  if (!known || groupSize.getInt() < 1)
    return op->emitOpError()
           << "[collective_c1] needs a mesh axis (pp, dp or tp) and a "
              "positive group size, got axis \""
           << axis << "\" and group_size " << groupSize.getInt();
  return success();
}

/// The reductions the runtime's collectives implement (KernelEnums.def).
static constexpr const char *kReductions[] = {
#define CLEAVE_ENUM_BEGIN(type)
#define CLEAVE_ENUM_VALUE(type, enumerator, code, spelling)                    \
  std::is_same_v<type, CleaveReduction> ? spelling : nullptr,
#define CLEAVE_ENUM_END(type)
#include "cleave/rt/KernelEnums.def"
};

static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  auto known = llvm::make_filter_range(
      kReductions, [](const char *name) { return name != nullptr; });
  if (llvm::is_contained(known, reduction))
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "[collective_c2] unknown reduction \""
                            << reduction << "\"; expected ";
  llvm::interleave(
      known, [&](const char *name) { diag << name; }, [&] { diag << ", "; });
  return diag;
}

static LogicalResult verifyDim(Operation *op, IntegerAttr dim, int64_t rank,
                               StringRef name = "dim") {
  if (dim.getInt() < 0 || dim.getInt() >= rank)
    return op->emitOpError()
           << "[collective_c3] " << name << " " << dim.getInt()
           << " is not a dimension of a " << rank << "-D operand";
  return success();
}

/// Checks that `result` is `input` with dimension `dim` scaled: multiplied
/// by `factor` when `gather`, divided (exactly) otherwise.
static LogicalResult verifyScaledDim(Operation *op, RankedTensorType input,
                                     RankedTensorType result, int64_t dim,
                                     int64_t factor, bool gather,
                                     StringRef label) {
  SmallVector<int64_t> expected(input.getShape());
  if (!ShapedType::isDynamic(expected[dim])) {
    if (gather) {
      expected[dim] *= factor;
    } else {
      if (expected[dim] % factor != 0)
        return op->emitOpError()
               << "[" << label << "] dimension " << dim << " (size "
               << expected[dim] << ") does not divide by the group size "
               << factor;
      expected[dim] /= factor;
    }
  }
  if (result.getShape() != ArrayRef(expected) ||
      result.getElementType() != input.getElementType())
    return op->emitOpError()
           << "[" << label << "] expected result type "
           << RankedTensorType::get(expected, input.getElementType())
           << ", got " << result;
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyGroup(*this, getAxis(), getGroupSizeAttr())))
    return failure();
  return verifyReduction(*this, getReduction());
}

LogicalResult ReduceStartOp::verify() {
  if (failed(verifyGroup(*this, getAxis(), getGroupSizeAttr())) ||
      failed(verifyReduction(*this, getReduction())))
    return failure();
  // Ops of other dialects (the sharding passes' annotations of a
  // tensor-parallel step) hold no data of their own; no cleave op but the
  // wait may read the accumulator while the reduction runs.
  int waits = 0;
  for (Operation *user : getNewAccumulator().getUsers()) {
    bool wait = isa<ReduceWaitOp>(user);
    waits += wait;
    if ((!wait && isa<CleaveDialect>(user->getDialect())) || waits > 1)
      return emitOpError() << "[reduce_start_c1] the reduced accumulator may "
                              "be read only by the one cleave.reduce_wait "
                              "that ends the reduction, not by "
                           << user->getName();
  }
  // The starts of one bucket follow one another in the block; the last
  // begins the reduction. Each start looks ahead to its bucket's next one.
  auto element = [](ReduceStartOp start) {
    return getElementTypeOrSelf(start.getAccumulator().getType());
  };
  for (Operation *op = getOperation()->getNextNode(); op;
       op = op->getNextNode()) {
    auto next = dyn_cast<ReduceStartOp>(op);
    if (!next || next.getId() != getId())
      continue;
    if (getLast())
      return emitOpError() << "[reduce_start_c2] ends bucket " << getId()
                           << " (last), and another cleave.reduce_start "
                              "adds to it after";
    if (next.getAxis() != getAxis() || next.getGroupSize() != getGroupSize() ||
        next.getReduction() != getReduction() ||
        element(next) != element(*this))
      return emitOpError() << "[reduce_start_c2] the starts of bucket "
                           << getId()
                           << " must share the group, the reduction and the "
                              "element type";
    return success();
  }
  if (!getLast())
    return emitOpError() << "[reduce_start_c2] no later cleave.reduce_start "
                            "of bucket "
                         << getId() << " in its block ends it (last)";
  return success();
}

LogicalResult ReduceWaitOp::verify() {
  Operation *def = getAccumulator().getDefiningOp();
  auto start = dyn_cast_or_null<ReduceStartOp>(def);
  // Between the sharding passes an annotation may stand in between.
  if (start ? start.getId() == getId()
            : def && !isa<CleaveDialect>(def->getDialect()))
    return success();
  return emitOpError() << "[reduce_wait_c1] waits for reduction " << getId()
                       << ", so its operand must be the result of the "
                          "cleave.reduce_start with that id";
}

LogicalResult AllGatherOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyGroup(*this, getAxis(), getGroupSizeAttr())) ||
      failed(verifyDim(*this, getDimAttr(), input.getRank())))
    return failure();
  return verifyScaledDim(*this, input,
                         cast<RankedTensorType>(getOutput().getType()),
                         getDimAttr().getInt(), getGroupSizeAttr().getInt(),
                         /*gather=*/true, "all_gather_c1");
}

LogicalResult ReduceScatterOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyGroup(*this, getAxis(), getGroupSizeAttr())) ||
      failed(verifyReduction(*this, getReduction())) ||
      failed(verifyDim(*this, getDimAttr(), input.getRank())))
    return failure();
  return verifyScaledDim(*this, input,
                         cast<RankedTensorType>(getOutput().getType()),
                         getDimAttr().getInt(), getGroupSizeAttr().getInt(),
                         /*gather=*/false, "collective_c4");
}

LogicalResult AllSliceOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyGroup(*this, getAxis(), getGroupSizeAttr(),
                         /*batchAllowed=*/true)) ||
      failed(verifyDim(*this, getDimAttr(), input.getRank())))
    return failure();
  return verifyScaledDim(*this, input,
                         cast<RankedTensorType>(getOutput().getType()),
                         getDimAttr().getInt(), getGroupSizeAttr().getInt(),
                         /*gather=*/false, "collective_c4");
}

LogicalResult AllToAllOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getOutput().getType());
  if (failed(verifyGroup(*this, getAxis(), getGroupSizeAttr())))
    return failure();
  int64_t rank = input.getRank();
  int64_t splitDim = getSplitDimAttr().getInt();
  int64_t concatDim = getConcatDimAttr().getInt();
  if (splitDim < 0 || splitDim >= rank || concatDim < 0 || concatDim >= rank ||
      splitDim == concatDim)
    return emitOpError() << "[all_to_all_c1] split_dim " << splitDim
                         << " and concat_dim " << concatDim
                         << " must be distinct dimensions of a " << rank
                         << "-D operand";
  int64_t groupSize = getGroupSizeAttr().getInt();
  SmallVector<int64_t> expected(input.getShape());
  if (!ShapedType::isDynamic(expected[concatDim]))
    expected[concatDim] *= groupSize;
  if (!ShapedType::isDynamic(expected[splitDim])) {
    if (expected[splitDim] % groupSize != 0)
      return emitOpError() << "[all_to_all_c2] split_dim " << splitDim
                           << " (size " << expected[splitDim]
                           << ") does not divide by the group size "
                           << groupSize;
    expected[splitDim] /= groupSize;
  }
  if (result.getShape() != ArrayRef(expected) ||
      result.getElementType() != input.getElementType())
    return emitOpError() << "[all_to_all_c2] expected result type "
                         << RankedTensorType::get(expected,
                                                  input.getElementType())
                         << ", got " << result;
  return success();
}

//===----------------------------------------------------------------------===//
// WeightSliceOp
//===----------------------------------------------------------------------===//

SmallVector<int64_t> WeightSliceOp::getWindowShape() {
  SmallVector<int64_t> window(
      cast<RankedTensorType>(getOutput().getType()).getShape());
  if (std::optional<uint64_t> dim = getSplitDim();
      dim && *dim < window.size() && getGroupSize())
    window[*dim] *= static_cast<int64_t>(*getGroupSize());
  return window;
}

LogicalResult WeightSliceOp::verify() {
  auto type = cast<RankedTensorType>(getOutput().getType());
  if (!type.hasStaticShape())
    return emitOpError() << "[weight_slice_c2] needs a static result type";
  ArrayRef<int64_t> shape = getShape(), starts = getStarts();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(shape.size()) != rank ||
      static_cast<int64_t>(starts.size()) != rank)
    return emitOpError() << "[weight_slice_c2] shape and starts need " << rank
                         << " entries, got " << shape.size() << " and "
                         << starts.size();
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return emitOpError() << "[weight_slice_c2] shape has a negative size";

  int64_t bits = type.getElementTypeBitWidth();
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  int64_t bytes = elements * ((bits + 7) / 8);
  if (getLengthAttr().getInt() != bytes || getOffsetAttr().getInt() < 0)
    return emitOpError() << "[weight_slice_c1] a weight of shape "
                         << RankedTensorType::get(shape, type.getElementType())
                         << " takes " << bytes
                         << " bytes at a non-negative offset, got length "
                         << getLengthAttr().getInt() << " at offset "
                         << getOffsetAttr().getInt();

  bool hasDim = getSplitDimAttr() != nullptr;
  bool hasAxis = getAxisAttr() != nullptr;
  bool hasSize = getGroupSizeAttr() != nullptr;
  if (hasDim != hasAxis || hasDim != hasSize)
    return emitOpError()
           << "[weight_slice_c4] split_dim, axis and group_size go together";
  if (hasDim) {
    int64_t dim = getSplitDimAttr().getInt();
    if (dim < 0 || dim >= rank || getGroupSizeAttr().getInt() < 1 ||
        getAxisAttr().getValue().empty())
      return emitOpError()
             << "[weight_slice_c4] split_dim " << dim
             << " must be a dimension of the result, group_size positive "
                "and axis named";
  }

  SmallVector<int64_t> window = getWindowShape();
  for (int64_t d = 0; d < rank; ++d)
    if (starts[d] < 0 || starts[d] + window[d] > shape[d])
      return emitOpError() << "[weight_slice_c3] dimension " << d
                           << ": window [" << starts[d] << ", "
                           << starts[d] + window[d]
                           << ") is not inside the weight's size " << shape[d];
  return success();
}
