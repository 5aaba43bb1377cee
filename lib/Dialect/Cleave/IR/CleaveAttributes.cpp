//===- CleaveAttributes.cpp - discardable attributes ------------*- C++ -*-===//
//
// Typed access to the discardable attributes of the cleave dialect, and
// their verification.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace cleave;

namespace {

std::optional<int64_t> valueOf(IntegerAttr attr) {
  if (!attr)
    return std::nullopt;
  return attr.getInt();
}

IntegerAttr i64(MLIRContext *context, int64_t value) {
  return Builder(context).getI64IntegerAttr(value);
}

/// The generated helper of discardable attribute `Helper` in `context`.
template <typename Helper> Helper attr(MLIRContext *context) {
  return Helper(context);
}

} // namespace

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

std::optional<rt::MeshShape> cleave::getMesh(Operation *module) {
  DictionaryAttr mesh =
      attr<CleaveDialect::MeshAttrHelper>(module->getContext()).getAttr(module);
  if (!mesh)
    return std::nullopt;
  // The verifier has checked that each axis is a positive integer.
  rt::MeshShape shape;
  shape.pp = mesh.getAs<IntegerAttr>("pp").getInt();
  shape.tp = mesh.getAs<IntegerAttr>("tp").getInt();
  shape.dp = mesh.getAs<IntegerAttr>("dp").getInt();
  return shape;
}

void cleave::setMesh(Operation *module, const rt::MeshShape &mesh) {
  MLIRContext *context = module->getContext();
  Builder b(context);
  attr<CleaveDialect::MeshAttrHelper>(context).setAttr(
      module,
      b.getDictionaryAttr({b.getNamedAttr("pp", i64(context, mesh.pp)),
                           b.getNamedAttr("tp", i64(context, mesh.tp)),
                           b.getNamedAttr("dp", i64(context, mesh.dp))}));
}

std::optional<int64_t> cleave::getMicrobatches(Operation *module) {
  return valueOf(
      attr<CleaveDialect::MicrobatchesAttrHelper>(module->getContext())
          .getAttr(module));
}

void cleave::setMicrobatches(Operation *module, int64_t microbatches) {
  MLIRContext *context = module->getContext();
  attr<CleaveDialect::MicrobatchesAttrHelper>(context).setAttr(
      module, i64(context, microbatches));
}

std::optional<int64_t> cleave::getZeroStage(Operation *module) {
  return valueOf(attr<CleaveDialect::ZeroAttrHelper>(module->getContext())
                     .getAttr(module));
}

void cleave::setZeroStage(Operation *module, int64_t stage) {
  MLIRContext *context = module->getContext();
  attr<CleaveDialect::ZeroAttrHelper>(context).setAttr(module,
                                                       i64(context, stage));
}

StringAttr cleave::getSchedule(Operation *module) {
  return attr<CleaveDialect::ScheduleAttrHelper>(module->getContext())
      .getAttr(module);
}

void cleave::setSchedule(Operation *module, StringRef schedule) {
  MLIRContext *context = module->getContext();
  attr<CleaveDialect::ScheduleAttrHelper>(context).setAttr(
      module, StringAttr::get(context, schedule));
}

StringAttr cleave::getTarget(Operation *module) {
  return attr<CleaveDialect::TargetAttrHelper>(module->getContext())
      .getAttr(module);
}

StringAttr cleave::getOnnxModel(Operation *module) {
  return attr<CleaveDialect::OnnxModelAttrHelper>(module->getContext())
      .getAttr(module);
}

void cleave::setOnnxProvenance(Operation *module, StringRef modelPath,
                               StringRef producer, int64_t opset,
                               int64_t irVersion) {
  MLIRContext *context = module->getContext();
  attr<CleaveDialect::OnnxProducerAttrHelper>(context).setAttr(
      module, StringAttr::get(context, producer));
  attr<CleaveDialect::OnnxOpsetAttrHelper>(context).setAttr(
      module, i64(context, opset));
  attr<CleaveDialect::OnnxIrVersionAttrHelper>(context).setAttr(
      module, i64(context, irVersion));
  attr<CleaveDialect::OnnxModelAttrHelper>(context).setAttr(
      module, StringAttr::get(context, modelPath));
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

std::string cleave::getNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string name = getNodeName(inner); !name.empty())
        return name;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return getNodeName(callSite.getCallee());
  return "";
}

std::optional<int64_t> cleave::getStage(Operation *op) {
  return valueOf(
      attr<CleaveDialect::StageAttrHelper>(op->getContext()).getAttr(op));
}

void cleave::setStage(Operation *op, int64_t stage) {
  MLIRContext *context = op->getContext();
  attr<CleaveDialect::StageAttrHelper>(context).setAttr(op,
                                                        i64(context, stage));
}

int64_t cleave::getNumStagesWithin(Operation *root) {
  int64_t stages = 0;
  root->walk([&](Operation *op) {
    if (std::optional<int64_t> stage = getStage(op))
      stages = std::max(stages, *stage + 1);
  });
  return stages;
}

void cleave::removeStage(Operation *op) {
  op->removeAttr(
      attr<CleaveDialect::StageAttrHelper>(op->getContext()).getName());
}

std::optional<int64_t> cleave::getChunk(Operation *op) {
  return valueOf(
      attr<CleaveDialect::ChunkAttrHelper>(op->getContext()).getAttr(op));
}

void cleave::setChunk(Operation *op, int64_t chunk) {
  MLIRContext *context = op->getContext();
  attr<CleaveDialect::ChunkAttrHelper>(context).setAttr(op,
                                                        i64(context, chunk));
}

void cleave::setStageOfOpsAfter(Operation *mark, std::optional<int64_t> stage) {
  if (!stage)
    return;
  Operation *end = mark->getBlock()->getTerminator();
  for (Operation *op = mark->getNextNode(); op != end; op = op->getNextNode())
    if (!getStage(op))
      setStage(op, *stage);
}

bool cleave::isWritable(Operation *op) {
  return attr<CleaveDialect::WritableAttrHelper>(op->getContext())
      .isAttrPresent(op);
}

void cleave::setWritable(Operation *op) {
  attr<CleaveDialect::WritableAttrHelper>(op->getContext())
      .setAttr(op, UnitAttr::get(op->getContext()));
}

bool cleave::isStashed(Operation *op) {
  return attr<CleaveDialect::StashAttrHelper>(op->getContext())
      .isAttrPresent(op);
}

bool cleave::isPlannedRecompute(Operation *op) {
  return attr<CleaveDialect::RecomputeAttrHelper>(op->getContext())
      .isAttrPresent(op);
}

void cleave::setPlannedRecompute(Operation *op) {
  attr<CleaveDialect::RecomputeAttrHelper>(op->getContext())
      .setAttr(op, UnitAttr::get(op->getContext()));
}

bool cleave::isRecomputeJoined(Operation *op) {
  return attr<CleaveDialect::RecomputeJoinedAttrHelper>(op->getContext())
      .isAttrPresent(op);
}

void cleave::setRecomputeJoined(Operation *op) {
  attr<CleaveDialect::RecomputeJoinedAttrHelper>(op->getContext())
      .setAttr(op, UnitAttr::get(op->getContext()));
}

std::optional<int64_t> cleave::getTpLoop(Operation *op) {
  return valueOf(
      attr<CleaveDialect::TpLoopAttrHelper>(op->getContext()).getAttr(op));
}

void cleave::setTpLoop(Operation *op, std::optional<int64_t> loop) {
  MLIRContext *context = op->getContext();
  auto helper = attr<CleaveDialect::TpLoopAttrHelper>(context);
  if (loop)
    helper.setAttr(op, i64(context, *loop));
  else
    op->removeAttr(helper.getName());
}

std::optional<std::pair<int64_t, int64_t>> cleave::getBatchDims(Operation *op) {
  DenseI64ArrayAttr dims =
      attr<CleaveDialect::BatchDimsAttrHelper>(op->getContext()).getAttr(op);
  if (!dims)
    return std::nullopt;
  // The verifier has checked that it is a pair.
  return std::make_pair(dims[0], dims[1]);
}

void cleave::setBatchDims(Operation *op,
                          std::optional<std::pair<int64_t, int64_t>> dims) {
  MLIRContext *context = op->getContext();
  auto helper = attr<CleaveDialect::BatchDimsAttrHelper>(context);
  if (dims)
    helper.setAttr(
        op, DenseI64ArrayAttr::get(context, {dims->first, dims->second}));
  else
    op->removeAttr(helper.getName());
}

ArrayAttr cleave::getGridAxes(Operation *grid) {
  return attr<CleaveDialect::AxesAttrHelper>(grid->getContext()).getAttr(grid);
}

void cleave::setGridAxes(Operation *grid, ArrayRef<StringRef> axes) {
  MLIRContext *context = grid->getContext();
  attr<CleaveDialect::AxesAttrHelper>(context).setAttr(
      grid, Builder(context).getStrArrayAttr(axes));
}

//===----------------------------------------------------------------------===//
// Function arguments and results
//===----------------------------------------------------------------------===//

StringAttr cleave::getArgName(FunctionOpInterface func, unsigned index) {
  return func.getArgAttrOfType<StringAttr>(
      index, CleaveDialect::NameAttrHelper::getNameStr());
}

StringAttr cleave::getResultName(FunctionOpInterface func, unsigned index) {
  return func.getResultAttrOfType<StringAttr>(
      index, CleaveDialect::NameAttrHelper::getNameStr());
}

void cleave::setArgName(FunctionOpInterface func, unsigned index,
                        StringRef name) {
  func.setArgAttr(index, CleaveDialect::NameAttrHelper::getNameStr(),
                  StringAttr::get(func.getContext(), name));
}

void cleave::setResultName(FunctionOpInterface func, unsigned index,
                           StringRef name) {
  func.setResultAttr(index, CleaveDialect::NameAttrHelper::getNameStr(),
                     StringAttr::get(func.getContext(), name));
}

/// Each dictionary of `dicts` with `key` set to the matching name.
static SmallVector<DictionaryAttr> withNames(MLIRContext *context,
                                             ArrayRef<DictionaryAttr> dicts,
                                             ArrayRef<std::string> names) {
  StringAttr key =
      StringAttr::get(context, CleaveDialect::NameAttrHelper::getNameStr());
  SmallVector<DictionaryAttr> result;
  for (auto [index, name] : llvm::enumerate(names)) {
    NamedAttrList attrs(index < dicts.size() ? dicts[index] : DictionaryAttr());
    attrs.set(key, StringAttr::get(context, name));
    result.push_back(attrs.getDictionary(context));
  }
  return result;
}

void cleave::setArgNames(FunctionOpInterface func,
                         ArrayRef<std::string> names) {
  SmallVector<DictionaryAttr> dicts;
  func.getAllArgAttrs(dicts);
  func.setAllArgAttrs(withNames(func.getContext(), dicts, names));
}

void cleave::setResultNames(FunctionOpInterface func,
                            ArrayRef<std::string> names) {
  SmallVector<DictionaryAttr> dicts;
  func.getAllResultAttrs(dicts);
  func.setAllResultAttrs(withNames(func.getContext(), dicts, names));
}

std::optional<int64_t> cleave::getInputIndex(FunctionOpInterface func,
                                             unsigned index) {
  return valueOf(func.getArgAttrOfType<IntegerAttr>(
      index, CleaveDialect::InputAttrHelper::getNameStr()));
}

std::optional<int64_t> cleave::getOutputIndex(FunctionOpInterface func,
                                              unsigned index) {
  return valueOf(func.getResultAttrOfType<IntegerAttr>(
      index, CleaveDialect::OutputAttrHelper::getNameStr()));
}

void cleave::setInputIndex(FunctionOpInterface func, unsigned index,
                           int64_t input) {
  func.setArgAttr(index, CleaveDialect::InputAttrHelper::getNameStr(),
                  i64(func.getContext(), input));
}

void cleave::setOutputIndex(FunctionOpInterface func, unsigned index,
                            int64_t output) {
  func.setResultAttr(index, CleaveDialect::OutputAttrHelper::getNameStr(),
                     i64(func.getContext(), output));
}

std::optional<int64_t> cleave::getArgBatchDim(FunctionOpInterface func,
                                              unsigned index) {
  return valueOf(func.getArgAttrOfType<IntegerAttr>(
      index, CleaveDialect::BatchDimAttrHelper::getNameStr()));
}

std::optional<int64_t> cleave::getResultBatchDim(FunctionOpInterface func,
                                                 unsigned index) {
  return valueOf(func.getResultAttrOfType<IntegerAttr>(
      index, CleaveDialect::BatchDimAttrHelper::getNameStr()));
}

void cleave::setArgBatchDim(FunctionOpInterface func, unsigned index,
                            int64_t dim) {
  func.setArgAttr(index, CleaveDialect::BatchDimAttrHelper::getNameStr(),
                  i64(func.getContext(), dim));
}

void cleave::setResultBatchDim(FunctionOpInterface func, unsigned index,
                               int64_t dim) {
  func.setResultAttr(index, CleaveDialect::BatchDimAttrHelper::getNameStr(),
                     i64(func.getContext(), dim));
}

StringAttr cleave::getGradientOf(FunctionOpInterface func, unsigned index) {
  return func.getResultAttrOfType<StringAttr>(
      index, CleaveDialect::GradientOfAttrHelper::getNameStr());
}

void cleave::setGradientOf(FunctionOpInterface func, unsigned index,
                           StringRef weight) {
  func.setResultAttr(index, CleaveDialect::GradientOfAttrHelper::getNameStr(),
                     StringAttr::get(func.getContext(), weight));
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

namespace {

/// Checks the form of one discardable attribute. Names that are not part
/// of the contract are left alone.
class AttrVerifier {
public:
  AttrVerifier(Operation *op, NamedAttribute attr)
      : op(op), name(attr.getName().getValue()), value(attr.getValue()) {}

  LogicalResult onOperation() {
    if (name == CleaveDialect::MeshAttrHelper::getNameStr())
      return verifyMesh();
    if (name == CleaveDialect::MicrobatchesAttrHelper::getNameStr())
      return verifyInteger(/*min=*/1, "a positive");
    if (name == CleaveDialect::ZeroAttrHelper::getNameStr()) {
      auto stage = dyn_cast<IntegerAttr>(value);
      if (!stage || stage.getInt() < 0 || stage.getInt() > 2)
        return error() << "must be a ZeRO stage (0, 1 or 2), got " << value;
      return success();
    }
    if (isAnyOf<CleaveDialect::ScheduleAttrHelper,
                CleaveDialect::TargetAttrHelper,
                CleaveDialect::OnnxModelAttrHelper,
                CleaveDialect::OnnxProducerAttrHelper>())
      return verifyString();
    if (isAnyOf<CleaveDialect::OnnxOpsetAttrHelper,
                CleaveDialect::OnnxIrVersionAttrHelper,
                CleaveDialect::StageAttrHelper, CleaveDialect::ChunkAttrHelper,
                CleaveDialect::TpLoopAttrHelper>())
      return verifyInteger(/*min=*/0, "a non-negative");
    if (name == CleaveDialect::BatchDimsAttrHelper::getNameStr())
      return verifyBatchDims();
    if (name == CleaveDialect::AxesAttrHelper::getNameStr())
      return verifyAxes();
    if (isAnyOf<CleaveDialect::WritableAttrHelper,
                CleaveDialect::StashAttrHelper,
                CleaveDialect::RecomputeAttrHelper,
                CleaveDialect::RecomputeJoinedAttrHelper>())
      return isa<UnitAttr>(value)
                 ? success()
                 : (error() << "is a marker and takes no value, got " << value);
    if (isPortAttr())
      return error() << "belongs on function arguments and results, not on "
                        "an op";
    return success();
  }

  LogicalResult onPort(bool isResult) {
    if (name == CleaveDialect::NameAttrHelper::getNameStr() ||
        (isResult && name == CleaveDialect::GradientOfAttrHelper::getNameStr()))
      return verifyString();
    if (name == (isResult ? CleaveDialect::OutputAttrHelper::getNameStr()
                          : CleaveDialect::InputAttrHelper::getNameStr()) ||
        name == CleaveDialect::BatchDimAttrHelper::getNameStr())
      return verifyInteger(/*min=*/0, "a non-negative");
    if (isPortAttr() || isKnown())
      return error() << "does not belong on a function "
                     << (isResult ? "result" : "argument");
    return success();
  }

private:
  template <typename... Helpers> bool isAnyOf() const {
    return ((name == Helpers::getNameStr()) || ...);
  }
  bool isPortAttr() const {
    return isAnyOf<
        CleaveDialect::NameAttrHelper, CleaveDialect::InputAttrHelper,
        CleaveDialect::OutputAttrHelper, CleaveDialect::BatchDimAttrHelper,
        CleaveDialect::GradientOfAttrHelper>();
  }
  bool isKnown() const {
    return isAnyOf<
        CleaveDialect::MeshAttrHelper, CleaveDialect::MicrobatchesAttrHelper,
        CleaveDialect::ZeroAttrHelper, CleaveDialect::ScheduleAttrHelper,
        CleaveDialect::TargetAttrHelper, CleaveDialect::OnnxModelAttrHelper,
        CleaveDialect::OnnxProducerAttrHelper,
        CleaveDialect::OnnxOpsetAttrHelper,
        CleaveDialect::OnnxIrVersionAttrHelper, CleaveDialect::StageAttrHelper,
        CleaveDialect::ChunkAttrHelper, CleaveDialect::TpLoopAttrHelper,
        CleaveDialect::BatchDimsAttrHelper, CleaveDialect::AxesAttrHelper,
        CleaveDialect::WritableAttrHelper, CleaveDialect::StashAttrHelper,
        CleaveDialect::RecomputeAttrHelper,
        CleaveDialect::RecomputeJoinedAttrHelper>();
  }

  InFlightDiagnostic error() { return op->emitError() << "`" << name << "` "; }

  LogicalResult verifyInteger(int64_t min, StringRef what) {
    auto integer = dyn_cast<IntegerAttr>(value);
    if (!integer || !integer.getType().isSignlessInteger(64) ||
        integer.getInt() < min)
      return error() << "must be " << what << " i64, got " << value;
    return success();
  }

  LogicalResult verifyString() {
    if (!isa<StringAttr>(value))
      return error() << "must be a string, got " << value;
    return success();
  }

  LogicalResult verifyMesh() {
    auto mesh = dyn_cast<DictionaryAttr>(value);
    if (!mesh)
      return error() << "must be a dictionary `{pp = P : i64, tp = T : i64, "
                        "dp = D : i64}`, got "
                     << value;
    for (StringRef axis : {"pp", "tp", "dp"}) {
      auto size = mesh.getAs<IntegerAttr>(axis);
      if (!size || !size.getType().isSignlessInteger(64) || size.getInt() < 1)
        return error() << "needs a positive integer `" << axis << "`, got "
                       << mesh;
    }
    for (NamedAttribute entry : mesh) {
      rt::MeshAxis axis;
      if (!rt::parseMeshAxis(entry.getName().getValue(), axis))
        return error() << "names `" << entry.getName().getValue()
                       << "`, which is not a mesh axis (pp, dp or tp)";
    }
    return success();
  }

  LogicalResult verifyBatchDims() {
    auto dims = dyn_cast<DenseI64ArrayAttr>(value);
    if (!dims || dims.size() != 2 || dims[0] < 0 || dims[1] < 0)
      return error() << "must be `array<i64: operandDim, resultDim>` of two "
                        "dimensions, got "
                     << value;
    return success();
  }

  LogicalResult verifyAxes() {
    auto axes = dyn_cast<ArrayAttr>(value);
    if (!axes || !llvm::all_of(axes, llvm::IsaPred<StringAttr>))
      return error() << "must be an array of axis names, got " << value;
    return success();
  }

  Operation *op;
  StringRef name;
  Attribute value;
};

} // namespace

LogicalResult CleaveDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  return AttrVerifier(op, attr).onOperation();
}

LogicalResult CleaveDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  return AttrVerifier(op, attr).onPort(/*isResult=*/false);
}

LogicalResult CleaveDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned regionIndex,
                                                         unsigned resultIndex,
                                                         NamedAttribute attr) {
  return AttrVerifier(op, attr).onPort(/*isResult=*/true);
}
