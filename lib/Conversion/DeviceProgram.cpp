//===- DeviceProgram.cpp - lower a function to a device program --*- C++
//-*-===//
//
// Turns one device's function into steps over statically placed buffers:
//
//  1. classify ops: parameters (weights, constants) live in the weight file,
//     views (reshape, squeeze, ...) alias their operand, elementwise ops
//     become scalar expressions and the rest library-kernel calls;
//  2. fuse: an elementwise op whose only user is an elementwise op of the
//     same shape is evaluated inside its user's loop and never stored;
//  3. place graph outputs straight into the caller's buffers;
//  4. plan the arena: liveness over the step order, in-place reuse of an
//     operand that dies in an elementwise loop of the same shape, then a
//     greedy first-fit placement by decreasing size; stash regions (results
//     a later entry reads) go after it, one slot per microbatch in flight.
//
// Writable weights live in persistent memory, filled from the weight file
// when a session starts.
//
// A training step (a function that accumulates its loss and gradients,
// `cleave.accumulate`) becomes three entries: the forward (what the loss
// depends on), the backward (the rest of the gradients' computation), both
// once per microbatch, and the update (what reads the accumulated sums),
// once per step. The forward's results that the backward reads are stashed.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/DeviceProgram.h"
#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Conversion/KernelInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Dialect/Cleave/IR/TrainingPhases.h"
#include "cleave/rt/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <numeric>
#include <set>

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

DType cleave::getDType(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF64())
    return DType::F64;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    bool isUnsigned = integer.isUnsigned();
    switch (integer.getWidth()) {
    case 1:
      return DType::Bool;
    case 8:
      return isUnsigned ? DType::U8 : DType::I8;
    case 16:
      return isUnsigned ? DType::U16 : DType::I16;
    case 32:
      return isUnsigned ? DType::U32 : DType::I32;
    case 64:
      return isUnsigned ? DType::U64 : DType::I64;
    default:
      break;
    }
  }
  return DType::Invalid;
}

int64_t cleave::getDTypeSize(DType type) {
  switch (type) {
#define CLEAVE_DTYPE(suffix, name, code, bytes, numpy)                         \
  case DType::name:                                                            \
    return bytes;
#include "cleave/rt/DTypeList.def"
  case DType::Invalid:
    break;
  }
  return 0;
}

StringRef cleave::getDTypeName(DType type) {
  switch (type) {
#define CLEAVE_DTYPE(suffix, name, code, bytes, numpy)                         \
  case DType::name:                                                            \
    return #numpy;
#include "cleave/rt/DTypeList.def"
  case DType::Invalid:
    break;
  }
  return "invalid";
}

StringRef cleave::getDTypeEnumerator(DType type) {
  switch (type) {
#define CLEAVE_DTYPE(suffix, name, code, bytes, numpy)                         \
  case DType::name:                                                            \
    return "CLEAVE_" #suffix;
#include "cleave/rt/DTypeList.def"
  case DType::Invalid:
    break;
  }
  return "CLEAVE_DTYPE_INVALID";
}

const ProgramEntry *DeviceProgram::getEntry(StringRef phase,
                                            int64_t chunk) const {
  for (const ProgramEntry &entry : entries)
    if (entry.phase == phase && entry.chunk == chunk)
      return &entry;
  return nullptr;
}

ProgramPorts DeviceProgram::getPorts() const {
  std::map<int64_t, std::pair<int, std::string>> inputsAt, outputsAt;
  for (const ProgramEntry &entry : entries) {
    for (auto [tensor, name] : llvm::zip(entry.inputs, entry.inputNames))
      inputsAt.try_emplace(tensors[tensor].offset, tensor, name);
    for (auto [tensor, name] : llvm::zip(entry.outputs, entry.outputNames))
      outputsAt.try_emplace(tensors[tensor].offset, tensor, name);
  }
  ProgramPorts ports;
  for (auto &[index, port] : inputsAt) {
    ports.inputs.push_back(port.first);
    ports.inputNames.push_back(port.second);
  }
  for (auto &[index, port] : outputsAt) {
    ports.outputs.push_back(port.first);
    ports.outputNames.push_back(port.second);
  }
  return ports;
}

int64_t DeviceProgram::getInPlaceSteps() const {
  int64_t steps = 0;
  for (const ProgramEntry &entry : entries)
    steps += entry.inPlaceSteps;
  return steps;
}

int64_t DeviceProgram::getNumSteps() const {
  int64_t steps = 0;
  for (const ProgramEntry &entry : entries)
    steps += entry.steps.size();
  return steps;
}

int64_t ProgramTensor::getNumElements() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

//===----------------------------------------------------------------------===//
// ScalarExprBuilder
//===----------------------------------------------------------------------===//

int ScalarExprBuilder::call(StringRef function, ArrayRef<int> args,
                            Type elementType) {
  ScalarNode node;
  node.kind = ScalarNode::Kind::Call;
  node.function = function.str();
  node.args.assign(args.begin(), args.end());
  node.dtype = getDType(elementType);
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size()) - 1;
}

int ScalarExprBuilder::literal(double value, Type elementType) {
  ScalarNode node;
  node.kind = ScalarNode::Kind::Literal;
  node.literal = value;
  node.dtype = getDType(elementType);
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size()) - 1;
}

int ScalarExprBuilder::cast(int arg, Type elementType) {
  ScalarNode node;
  node.kind = ScalarNode::Kind::Cast;
  node.args = {arg};
  node.dtype = getDType(elementType);
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size()) - 1;
}

//===----------------------------------------------------------------------===//
// The lowering
//===----------------------------------------------------------------------===//

/// The ONNX node an op came from: the innermost name of its location.
int FusedLoop::getOrAddLoad(int tensor, DType dtype,
                            llvm::DenseMap<int, int> &loadOfTensor) {
  auto [entry, inserted] = loadOfTensor.try_emplace(tensor, -1);
  if (inserted) {
    loads.push_back({tensor});
    ScalarNode load;
    load.kind = ScalarNode::Kind::Load;
    load.loadIndex = static_cast<int>(loads.size()) - 1;
    load.dtype = dtype;
    nodes.push_back(std::move(load));
    entry->second = static_cast<int>(nodes.size()) - 1;
  }
  return entry->second;
}

/// The most ops one generated loop evaluates.
constexpr int64_t kMaxFusedOps = 256;

static int64_t alignTo(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

namespace {

enum class OpKind { Parameter, View, Elementwise, Kernel };

class ProgramBuilder {
public:
  ProgramBuilder(func::FuncOp func, const DeviceProgramOptions &options)
      : func(func), options(options) {}

  FailureOr<DeviceProgram> build();

private:
  LogicalResult checkTypes();
  LogicalResult classify(Operation *op);
  void chooseFusion();
  /// The bias add (matrix products), the residual add, and the ReLU, clip,
  /// SiLU or GELU each convolution's or matrix product's kernel applies
  /// (DeviceProgramOptions::fuseKernelEpilogues).
  void chooseKernelEpilogues();
  /// What a convolution's or a matrix product's kernel applies to its
  /// outputs, in this order.
  struct EpilogueChoice {
    /// The add of `bias`, one value per column, that follows a matrix
    /// product; null without.
    Operation *biasAdd = nullptr;
    Value bias;
    /// The add of `residual` that follows the kernel (or the bias add);
    /// null without.
    Operation *add = nullptr;
    Value residual;
    /// The activation after them (or after the kernel), or the mul of a
    /// SiLU; null without.
    Operation *activation = nullptr;
    /// A SiLU's sigmoid, whose result `activation` multiplies by its input.
    Operation *gate = nullptr;

    /// The op whose result the call writes.
    Operation *last() const {
      return activation ? activation : add ? add : biasAdd;
    }
  };
  /// The call of convolution or matrix product `op` that applies
  /// `epilogue` and writes the result of its last op.
  FailureOr<ProgramStep>
  buildKernelWithEpilogue(Operation *op, const EpilogueChoice &epilogue);
  /// The tensors kept in the blocked layout of options.convBlock, and the
  /// convolutions' xBlock and yBlock that say so.
  void chooseBlockedLayouts();
  /// Keeps every fused loop to at most kMaxFusedOps ops, so that a long
  /// elementwise chain is several loops of a size a compiler builds fast.
  void limitFusedLoops();
  int getTensor(Value value);
  /// A tensor for `value`, or (without a value) a tensor of `type`.
  int addTensor(Value value, MemorySpace space, int64_t offset);
  int addTensor(Type type, MemorySpace space, int64_t offset);
  FailureOr<ProgramStep> buildLoop(Operation *root);
  FailureOr<ProgramStep> buildCall(Operation *op);
  /// The tensors of `op`'s operands that `call` (built by its model) takes.
  void addCallInputs(Operation *op, KernelCall &call);
  /// A value a loop reads: a splat literal, or a (shared) load.
  FailureOr<int> buildLeaf(Value value, FusedLoop &loop,
                           llvm::DenseMap<int, int> &loadOfTensor);
  FailureOr<int> buildExpression(Value value, FusedLoop &loop,
                                 llvm::DenseMap<int, int> &loadOfTensor);
  /// The entry of each op that becomes a step, for a training step
  /// (classifyStepPhases).
  void assignPhases(Block &block);
  /// Marks the forward's results that the backward reads as stashed and
  /// lists the graph inputs each entry reads.
  LogicalResult connectEntries();
  LogicalResult placeOutputs();
  void planArena();
  int getRoot(int tensor) const {
    while (aliasOf[tensor] >= 0)
      tensor = aliasOf[tensor];
    return tensor;
  }

  /// The steps of every entry, in the order the entries run (forward,
  /// backward, update): one timeline for the arena's liveness.
  SmallVector<std::pair<int, int>> getTimeline() const;

  func::FuncOp func;
  const DeviceProgramOptions &options;
  DeviceProgram program;
  /// Tensors that live in stash regions.
  llvm::DenseSet<int> stashed;

  llvm::DenseMap<Operation *, OpKind> kinds;
  /// Elementwise ops evaluated inside their user's loop.
  llvm::DenseSet<Operation *> inlined;
  /// Per convolution or matrix product whose kernel applies the ops that
  /// follow it, those ops; and the ops so applied, which are no steps.
  llvm::DenseMap<Operation *, EpilogueChoice> epilogueOf;
  llvm::DenseSet<Operation *> epilogues;
  llvm::DenseMap<Value, int> tensorOf;
  /// For each tensor: the tensor whose bytes it views, or -1.
  std::vector<int> aliasOf;
  /// For each tensor: the step that writes it, or -1 (inputs, weights).
  std::vector<int> producer;
  /// For each tensor: the entry whose step writes it, or -1.
  std::vector<int> producerEntry;
  /// The entry of each op that becomes a step (entryIndex); empty for a
  /// function of one chunk that is not a training step, whose ops all run
  /// in the forward.
  llvm::DenseMap<Operation *, int> entryOf;
  /// Whether the function is a training step (forward, backward, update).
  bool training = false;
  /// The model chunks of the function (`cleave.chunk`): each has its own
  /// forward (and backward) entry.
  int64_t numChunks = 1;
  /// The entry of `phase` on chunk `chunk`: a training step's entries are
  /// each chunk's forward and backward, then the update; other functions
  /// have each chunk's forward.
  int entryIndex(rt::Phase phase, int64_t chunk) const {
    if (!training)
      return static_cast<int>(chunk);
    if (phase == rt::Phase::Update)
      return static_cast<int>(2 * numChunks);
    return static_cast<int>(2 * chunk + (phase == rt::Phase::Forward ? 0 : 1));
  }
  /// The chunk whose forward entry `entry` is, if it is one.
  std::optional<int64_t> forwardChunk(int entry) const {
    if (!training)
      return entry;
    if (entry % 2 == 0 && entry < 2 * numChunks)
      return entry / 2;
    return std::nullopt;
  }
  /// Persistent state, one tensor per name.
  llvm::StringMap<int> stateTensors;
  /// The weights by getWeightKey: the copies of a parameter that several
  /// model chunks of one device read are one tensor.
  llvm::StringMap<int> weightTensors;
  /// What identifies the tensor a weight op reads: its initializer (and a
  /// window's place, shape and split), and whether the program writes it.
  /// Ops with one key share one tensor: a model chunk's copy of a
  /// parameter another chunk of the device holds, or a frozen weight that
  /// several chunks read.
  static std::string getWeightKey(Operation *def) {
    std::string key = isWritable(def) ? "writable:" : "read-only:";
    if (auto weight = dyn_cast<WeightOp>(def))
      return key + weight.getName().str();
    auto slice = cast<WeightSliceOp>(def);
    key += slice.getName().str();
    for (int64_t start : slice.getStarts())
      key += "@" + std::to_string(start);
    for (int64_t size : cast<RankedTensorType>(slice.getType()).getShape())
      key += "x" + std::to_string(size);
    if (std::optional<int64_t> dim = slice.getSplitDim())
      key += "/" + std::to_string(*dim);
    return key;
  }
  /// The ops fused into the loop being built, producers first.
  std::vector<std::string> fusedOps;
};

} // namespace

LogicalResult ProgramBuilder::checkTypes() {
  auto check = [&](Value value, Location loc,
                   const Twine &what) -> LogicalResult {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return emitError(loc) << what << " is not a ranked tensor";
    if (!type.hasStaticShape())
      return emitError(loc)
             << what << " has a dynamic shape " << type
             << "; bind the graph inputs' dimensions (--input-shape)";
    if (getDType(type.getElementType()) == DType::Invalid)
      return emitError(loc)
             << what << " has element type " << type.getElementType()
             << ", which no kernel supports";
    if (type.getRank() > 8)
      return emitError(loc) << what << " has rank " << type.getRank()
                            << "; kernels support up to 8";
    return success();
  };
  for (BlockArgument arg : func.getArguments())
    if (failed(check(arg, func.getLoc(),
                     "graph input " + Twine(arg.getArgNumber()))))
      return failure();
  WalkResult result = func.walk([&](Operation *op) {
    for (Value value : op->getResults())
      if (failed(check(value, op->getLoc(),
                       "result of '" + op->getName().getStringRef() + "'")))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult ProgramBuilder::classify(Operation *op) {
  // Optimizer state lives in persistent memory, as writable weights do.
  if (isa<StateOp>(op)) {
    kinds[op] = OpKind::Parameter;
    return success();
  }
  // Devices are split along the tensor-parallel axis only.
  if (auto slice = dyn_cast<WeightSliceOp>(op))
    if (slice.getSplitDim() && slice.getAxis() != "tp")
      return slice.emitOpError("is split along mesh axis '")
             << *slice.getAxis() << "'; programs split weights along 'tp' only";
  if (auto cost = dyn_cast<CostInterface>(op)) {
    if (cost.isParameter()) {
      kinds[op] = OpKind::Parameter;
      return success();
    }
    if (cost.isView()) {
      kinds[op] = OpKind::View;
      return success();
    }
  }
  auto kernel = dyn_cast<KernelInterface>(op);
  if (!kernel) {
    InFlightDiagnostic diag = op->emitOpError();
    if (std::string node = getNodeName(op->getLoc()); !node.empty())
      diag << "(node '" << node << "') ";
    diag << "has no kernel: it cannot run on a device";
    if (isa<RangeOp>(op))
      diag << " (a range runs only when it folds to a constant, which it does "
              "up to 65,536 elements)";
    return diag;
  }
  std::vector<ScalarNode> scratch;
  ScalarExprBuilder probe(scratch);
  SmallVector<int> operands(op->getNumOperands(), 0);
  if (succeeded(kernel.buildScalar(probe, operands))) {
    kinds[op] = OpKind::Elementwise;
    return success();
  }
  kinds[op] = OpKind::Kernel;
  return success();
}

void ProgramBuilder::chooseFusion() {
  if (!options.fuseElementwise)
    return;
  for (auto &[op, kind] : kinds) {
    // A stashed result must be stored for the entry that reads it, and a
    // write in place (an accumulation) happens where it stands.
    if (kind != OpKind::Elementwise || op->getNumResults() != 1 ||
        isStashed(op) || isa<DestinationStyleOpInterface>(op))
      continue;
    Value result = op->getResult(0);
    if (!result.hasOneUse())
      continue;
    Operation *user = *result.getUsers().begin();
    auto userKind = kinds.find(user);
    if (userKind == kinds.end())
      continue;
    // Into an elementwise user of the same shape, or into a reduction that
    // a generated loop computes (which iterates over its input's shape).
    bool intoElementwise =
        userKind->second == OpKind::Elementwise &&
        cast<ShapedType>(result.getType()).getShape() ==
            cast<ShapedType>(user->getResult(0).getType()).getShape();
    bool intoReduction =
        userKind->second == OpKind::Kernel && user->getNumOperands() == 1 &&
        succeeded(cast<KernelInterface>(user).getScalarReduction());
    if (!intoElementwise && !intoReduction)
      continue;
    inlined.insert(op);
  }
  limitFusedLoops();
}

/// The epilogue (CleaveEpilogue and the clamp's bounds) a kernel applies
/// for `op`, if it is a ReLU, a clip with both bounds or a GELU.
static std::optional<std::tuple<int64_t, double, double>>
getKernelEpilogue(Operation *op) {
  if (isa<ReluOp>(op))
    return std::make_tuple(int64_t(CLEAVE_EPILOGUE_RELU), 0.0, 0.0);
  if (auto gelu = dyn_cast<GeluOp>(op))
    return std::make_tuple(int64_t(gelu.getApproximate() == "tanh"
                                       ? CLEAVE_EPILOGUE_GELU_TANH
                                       : CLEAVE_EPILOGUE_GELU),
                           0.0, 0.0);
  auto clip = dyn_cast<ClipOp>(op);
  if (!clip || !clip.getMin() || !clip.getMax() ||
      clip.getMin()->convertToDouble() > clip.getMax()->convertToDouble())
    return std::nullopt;
  return std::make_tuple(int64_t(CLEAVE_EPILOGUE_CLIP),
                         clip.getMin()->convertToDouble(),
                         clip.getMax()->convertToDouble());
}

/// Whether `bias`, added to matrix product `matmul`'s result, is one value
/// per column: its shape is 1s and then the result's last dimension.
static bool isColumnBias(MatMulOp matmul, Value bias) {
  auto resultType = cast<RankedTensorType>(matmul.getResult().getType());
  auto biasType = dyn_cast<RankedTensorType>(bias.getType());
  if (!biasType || biasType.getElementType() != resultType.getElementType() ||
      biasType.getRank() < 1 || biasType.getRank() > resultType.getRank())
    return false;
  ArrayRef<int64_t> shape = biasType.getShape();
  return shape.back() == resultType.getShape().back() &&
         llvm::all_of(shape.drop_back(), [](int64_t d) { return d == 1; });
}

/// The sigmoid and the mul of a SiLU of `value`, `value * sigmoid(value)`
/// (as exporters write torch's SiLU), when they are `value`'s only users,
/// the sigmoid's result is only the mul's operand, and `applicable` (an op
/// a convolution's epilogue may take) holds for both.
template <typename Applicable>
static std::optional<std::pair<Operation *, Operation *>>
matchSilu(Value value, Applicable applicable) {
  if (!llvm::hasNItems(value.getUses(), 2))
    return std::nullopt;
  SigmoidOp sigmoid;
  MulOp mul;
  for (Operation *user : value.getUsers()) {
    if (auto s = dyn_cast<SigmoidOp>(user))
      sigmoid = s;
    else if (auto m = dyn_cast<MulOp>(user))
      mul = m;
  }
  if (!sigmoid || !mul || !sigmoid.getResult().hasOneUse() ||
      !applicable(sigmoid) || !applicable(mul))
    return std::nullopt;
  Value gate = sigmoid.getResult();
  if (!((mul.getLhs() == value && mul.getRhs() == gate) ||
        (mul.getLhs() == gate && mul.getRhs() == value)))
    return std::nullopt;
  return std::make_pair(sigmoid.getOperation(), mul.getOperation());
}

void ProgramBuilder::chooseKernelEpilogues() {
  if (!options.fuseKernelEpilogues)
    return;
  // In block order: a residual is computed before its kernel, so whether
  // an earlier kernel stores it (as its activation's result) is decided by
  // then.
  for (Operation &block : func.getBody().front().without_terminator()) {
    Operation *op = &block;
    auto matmul = dyn_cast<MatMulOp>(op);
    // Products of matrices: with 1-D operands, Y's last dimension is not
    // B's columns.
    if (matmul && (cast<ShapedType>(matmul.getLhs().getType()).getRank() < 2 ||
                   cast<ShapedType>(matmul.getRhs().getType()).getRank() < 2))
      continue;
    // An ONNX Gemm adds its C itself: it takes the residual add and the
    // activation.
    const bool product = matmul || isa<GemmOp>(op);
    // A training step's products keep the ops after them as loops. Their
    // weights are writable, so they run on OpenBLAS and the epilogue would
    // be one more pass anyway; and a loop rounds as it does in every
    // partitioning of the step (a product's bias may fall in another
    // pipeline chunk), which the bitwise agreement of replicas, stages
    // and schedules rests on.
    if (product && training)
      continue;
    if (!(isa<ConvOp>(op) || product) || kinds.lookup(op) != OpKind::Kernel ||
        isStashed(op))
      continue;
    Value result = op->getResult(0);
    if (!getElementTypeOrSelf(result.getType()).isF32())
      continue;
    // An elementwise op of the kernel's result type, in its model chunk.
    auto applicable = [&](Operation *user) {
      auto userKind = kinds.find(user);
      return userKind != kinds.end() &&
             userKind->second == OpKind::Elementwise &&
             user->getResult(0).getType() == result.getType() &&
             !isStashed(user) && getChunk(user) == getChunk(op);
    };
    // Such an op that is the only user of `value`.
    auto soleUser = [&](Value value) -> Operation * {
      if (!value.hasOneUse())
        return nullptr;
      Operation *user = *value.getUsers().begin();
      return applicable(user) ? user : nullptr;
    };
    // An operand the kernel reads must be stored before it runs (a value
    // computed inside the add's loop, or after the kernel, is not; a
    // weight, or a view of one, is wherever its op stands).
    auto storedBefore = [&](Value value) {
      Operation *def = value.getDefiningOp();
      while (def && kinds.lookup(def) == OpKind::View &&
             def->getNumOperands() > 0)
        def = def->getOperand(0).getDefiningOp();
      return !def || kinds.lookup(def) == OpKind::Parameter ||
             (def->isBeforeInBlock(op) && !inlined.contains(def));
    };
    // The other operand of `add`, one of whose operands is `value`.
    auto otherOperand = [](AddOp add, Value value) {
      return add.getLhs() == value ? add.getRhs() : add.getLhs();
    };
    EpilogueChoice choice;
    Value last = result;
    Operation *user = soleUser(result);
    if (auto add = dyn_cast_or_null<AddOp>(user); add && matmul) {
      Value bias = otherOperand(add, result);
      if (bias != result && isColumnBias(matmul, bias) && storedBefore(bias)) {
        choice.biasAdd = add;
        choice.bias = bias;
        last = add.getResult();
        user = soleUser(last);
      }
    }
    // A residual add: its other operand has the same shape (no broadcast).
    if (auto add = dyn_cast_or_null<AddOp>(user)) {
      Value other = otherOperand(add, last);
      if (other != last && other.getType() == result.getType() &&
          storedBefore(other)) {
        choice.add = add;
        choice.residual = other;
        last = add.getResult();
        user = soleUser(last);
      }
    }
    if (user && getKernelEpilogue(user))
      choice.activation = user;
    else if (auto silu = matchSilu(last, applicable))
      std::tie(choice.gate, choice.activation) = *silu;
    if (!choice.last())
      continue;
    // A loop that would have computed them reads what the kernel wrote
    // instead.
    for (Operation *applied :
         {choice.biasAdd, choice.add, choice.gate, choice.activation})
      if (applied) {
        epilogues.insert(applied);
        inlined.erase(applied);
      }
    epilogueOf[op] = choice;
  }
}

FailureOr<ProgramStep>
ProgramBuilder::buildKernelWithEpilogue(Operation *op,
                                        const EpilogueChoice &epilogue) {
  auto [kind, min, max] =
      epilogue.gate ? std::make_tuple(int64_t(CLEAVE_EPILOGUE_SILU), 0.0, 0.0)
      : epilogue.activation
          ? *getKernelEpilogue(epilogue.activation)
          : std::make_tuple(int64_t(CLEAVE_EPILOGUE_NONE), 0.0, 0.0);
  KernelCall call;
  if (failed(isa<ConvOp>(op)   ? buildConvCall(op, kind, min, max, call)
             : isa<GemmOp>(op) ? buildGemmCall(op, kind, min, max, call)
                               : buildMatMulCall(op, kind, min, max, call)))
    return failure();
  addCallInputs(op, call);
  std::string summary = op->getName().stripDialect().str();
  // The inputs of conv (X, W, B, R), matmul (A, B, bias, R) and gemm (A,
  // B, C, R): the bias and the residual are inputs 2 and 3
  // (KernelList.def).
  if (epilogue.biasAdd || epilogue.add)
    call.inputs.resize(4, -1);
  if (epilogue.biasAdd) {
    call.inputs[2] = getTensor(epilogue.bias);
    summary += " + bias";
  }
  if (epilogue.add) {
    call.inputs[3] = getTensor(epilogue.residual);
    summary += " + add";
  }
  if (epilogue.gate)
    summary += " + silu";
  else if (epilogue.activation)
    summary += " + " + epilogue.activation->getName().stripDialect().str();
  call.outputs.push_back(getTensor(epilogue.last()->getResult(0)));
  ProgramStep step;
  step.call = std::move(call);
  step.summary = summary;
  return step;
}

/// The residual a convolution's or a product's call adds (conv's, matmul's
/// and gemm's input R), or -1.
static int getKernelResidual(const KernelCall &call) {
  return (call.kernel == "conv" || call.kernel == "matmul" ||
          call.kernel == "gemm") &&
                 call.inputs.size() > 3
             ? call.inputs[3]
             : -1;
}

/// Whether convolution `call` runs on oneDNN's blocked kernels
/// (CLEAVE_CONV_BLOCKED_MACS): 2-D, dense, grouped or depthwise, constant
/// float32 weights, enough multiply-adds. (A depthwise one in plain layouts
/// on a large map runs on the runtime's direct loop instead; in blocked
/// ones, on oneDNN's, which reads them as they lie.)
static bool runsBlocked(const DeviceProgram &program, const KernelCall &call) {
  if (call.kernel != "conv")
    return false;
  const ProgramTensor &x = program.tensors[call.inputs[0]];
  const ProgramTensor &w = program.tensors[call.inputs[1]];
  const ProgramTensor &y = program.tensors[call.outputs[0]];
  if (x.shape.size() != 4 || w.space != MemorySpace::Weights ||
      w.dtype != DType::F32)
    return false;
  // Y's elements times each one's multiply-adds (W's row).
  return y.getNumElements() * (w.getNumElements() / w.shape[0]) >=
         CLEAVE_CONV_BLOCKED_MACS;
}

void ProgramBuilder::chooseBlockedLayouts() {
  const int64_t block = options.convBlock;
  // One forward entry: nothing crosses from one entry to another.
  if (block == 0 || program.entries.size() != 1)
    return;
  std::vector<ProgramStep> &steps = program.entries.front().steps;
  const size_t count = program.tensors.size();
  // Candidates: float32 NCHW scratch tensors whose channels the block
  // divides, that are no view and have none (a view reads the bytes in
  // NCHW order).
  std::vector<bool> blocked(count, false), viewed(count, false);
  for (size_t t = 0; t < count; ++t)
    if (aliasOf[t] >= 0)
      viewed[getRoot(static_cast<int>(t))] = true;
  for (size_t t = 0; t < count; ++t) {
    const ProgramTensor &tensor = program.tensors[t];
    blocked[t] = tensor.space == MemorySpace::Arena && tensor.stash < 0 &&
                 aliasOf[t] < 0 && !viewed[t] && tensor.dtype == DType::F32 &&
                 tensor.shape.size() == 4 && tensor.shape[1] % block == 0;
  }
  // The tensors of a loop that must share one layout: its output and the
  // loads of its shape. A load of another shape that broadcasts to it (a
  // per-channel scale, a scalar) is read by position in its own order, so
  // a blocked loop indexes it by channel (FusedLoop::block). Empty when the
  // loop reduces or iterates over another shape, which reads NCHW.
  auto sharedLayout = [&](const FusedLoop &loop) {
    SmallVector<int> members;
    const ProgramTensor &out = program.tensors[loop.output];
    if (loop.reduction ||
        ArrayRef<int64_t>(loop.iterationShape) != ArrayRef<int64_t>(out.shape))
      return members;
    members.push_back(loop.output);
    for (const FusedLoad &load : loop.loads)
      if (ArrayRef<int64_t>(program.tensors[load.tensor].shape) ==
          ArrayRef<int64_t>(out.shape))
        members.push_back(load.tensor);
    return members;
  };
  // A global pool reads X blocked as it lies; Y, N x C, is the same bytes
  // in either layout and is taken as NCHW.
  auto poolsBlocked = [&](const KernelCall &call) {
    return (call.kernel == "global_average_pool" ||
            call.kernel == "global_max_pool") &&
           program.tensors[call.inputs[0]].shape.size() == 4;
  };
  // A 2-D windowed pool reads and writes one layout: X and Y are blocked
  // together or not at all.
  auto windowsBlocked = [&](const KernelCall &call) {
    return (call.kernel == "max_pool" || call.kernel == "average_pool") &&
           program.tensors[call.inputs[0]].shape.size() == 4;
  };
  // Every tensor a step reads or writes in NCHW order is NCHW, and the
  // members of a loop share a layout: repeat until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    auto unblock = [&](int t) {
      if (t >= 0 && blocked[t]) {
        blocked[t] = false;
        changed = true;
      }
    };
    for (const ProgramStep &step : steps) {
      if (step.call) {
        const KernelCall &call = *step.call;
        bool convolves = runsBlocked(program, call);
        bool pools = poolsBlocked(call);
        bool windows = windowsBlocked(call);
        // X, and the residual R, which lies as Y does.
        const int residual = getKernelResidual(call);
        for (auto [i, t] : llvm::enumerate(call.inputs))
          if (!(convolves || pools || windows) || (i != 0 && t != residual))
            unblock(t);
        if (!convolves && !windows)
          for (int t : call.outputs)
            unblock(t);
        if (windows &&
            (!blocked[call.inputs[0]] || !blocked[call.outputs[0]])) {
          unblock(call.inputs[0]);
          unblock(call.outputs[0]);
        }
        if (residual >= 0 &&
            (!blocked[residual] || !blocked[call.outputs[0]])) {
          unblock(residual);
          unblock(call.outputs[0]);
        }
        continue;
      }
      SmallVector<int> members = sharedLayout(*step.loop);
      bool together = !members.empty() &&
                      llvm::all_of(members, [&](int t) { return blocked[t]; });
      if (!together)
        unblock(step.loop->output);
      for (const FusedLoad &load : step.loop->loads)
        if (!together || !llvm::is_contained(members, load.tensor))
          unblock(load.tensor);
    }
  }
  // A set of blocked tensors joined by loops pays off only between two
  // convolutions: one that writes it and one that reads it.
  llvm::EquivalenceClasses<int> joined;
  for (size_t t = 0; t < count; ++t)
    if (blocked[t])
      joined.insert(static_cast<int>(t));
  for (const ProgramStep &step : steps) {
    if (step.loop && blocked[step.loop->output])
      for (int t : sharedLayout(*step.loop))
        joined.unionSets(step.loop->output, t);
    if (step.call && getKernelResidual(*step.call) >= 0 &&
        blocked[step.call->outputs[0]])
      joined.unionSets(step.call->outputs[0], getKernelResidual(*step.call));
    if (step.call && windowsBlocked(*step.call) &&
        blocked[step.call->outputs[0]])
      joined.unionSets(step.call->outputs[0], step.call->inputs[0]);
  }
  llvm::DenseSet<int> written, read;
  for (const ProgramStep &step : steps)
    if (step.call && runsBlocked(program, *step.call)) {
      if (blocked[step.call->inputs[0]])
        read.insert(joined.getLeaderValue(step.call->inputs[0]));
      if (blocked[step.call->outputs[0]])
        written.insert(joined.getLeaderValue(step.call->outputs[0]));
    }
  for (size_t t = 0; t < count; ++t)
    if (blocked[t]) {
      int leader = joined.getLeaderValue(static_cast<int>(t));
      blocked[t] = written.contains(leader) && read.contains(leader);
    }
  // conv's last two ints are xBlock and yBlock, a pool's last int its
  // block (KernelList.def).
  for (ProgramStep &step : steps) {
    if (step.loop && !step.loop->reduction)
      step.loop->block = blocked[step.loop->output] ? block : 0;
    if (!step.call)
      continue;
    KernelCall &call = *step.call;
    if (call.kernel == "conv") {
      size_t at = call.ints.size() - 2;
      call.ints[at] = blocked[call.inputs[0]] ? block : 0;
      call.ints[at + 1] = blocked[call.outputs[0]] ? block : 0;
    } else if (poolsBlocked(call) || windowsBlocked(call)) {
      call.ints.back() = blocked[call.inputs[0]] ? block : 0;
    }
  }
}

void ProgramBuilder::limitFusedLoops() {
  // In block order producers come first: an op's loop size is one plus the
  // sizes of the producers inlined into it. Where that passes the limit,
  // the largest inlined producers become loops of their own (a chain is cut
  // every kMaxFusedOps ops).
  llvm::DenseMap<Operation *, int64_t> size;
  for (Operation &op : func.getBody().front().without_terminator()) {
    SmallVector<std::pair<int64_t, Operation *>> producers;
    int64_t total = 1;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !inlined.contains(def))
        continue;
      producers.push_back({size.lookup(def), def});
      total += size.lookup(def);
    }
    llvm::sort(producers,
               [](const auto &a, const auto &b) { return a.first > b.first; });
    for (auto [producerSize, producer] : producers) {
      if (total <= kMaxFusedOps)
        break;
      inlined.erase(producer);
      total -= producerSize;
    }
    size[&op] = total;
  }
}

int ProgramBuilder::addTensor(Value value, MemorySpace space, int64_t offset) {
  int id = addTensor(value.getType(), space, offset);
  tensorOf[value] = id;
  return id;
}

int ProgramBuilder::addTensor(Type valueType, MemorySpace space,
                              int64_t offset) {
  auto type = cast<RankedTensorType>(valueType);
  ProgramTensor tensor;
  tensor.name = "t" + std::to_string(program.tensors.size());
  tensor.dtype = getDType(type.getElementType());
  tensor.shape.assign(type.getShape().begin(), type.getShape().end());
  tensor.space = space;
  tensor.offset = offset;
  program.tensors.push_back(std::move(tensor));
  aliasOf.push_back(-1);
  producer.push_back(-1);
  producerEntry.push_back(-1);
  return static_cast<int>(program.tensors.size()) - 1;
}

/// A constant of zeros, larger than one alignment unit, that only
/// collectives read: what a pipeline stage without a copy of a shared
/// parameter adds to the copies' all-reduce. It takes zeroed persistent
/// memory rather than its bytes in the weight file (a tied embedding's
/// zeros would be as large as the embedding).
static bool isCollectiveZeros(Operation *op) {
  auto constant = dyn_cast<ConstantOp>(op);
  if (!constant)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || getTensorBytes(dense.getType()) <= 64)
    return false;
  Attribute splat = dense.getSplatValue<Attribute>();
  bool zero = false;
  if (auto value = dyn_cast<FloatAttr>(splat))
    zero = value.getValue().isPosZero();
  else if (auto value = dyn_cast<IntegerAttr>(splat))
    zero = value.getValue().isZero();
  return zero && llvm::all_of(op->getUsers(), [](Operation *user) {
           return isa<AllReduceOp, AllGatherOp, ReduceScatterOp>(user);
         });
}

/// The raw little-endian bytes of a dense constant (one byte per boolean).
static std::vector<char> getConstantBytes(DenseElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  int64_t elements = type.getNumElements();
  std::vector<char> bytes;
  if (type.getElementType().isInteger(1)) {
    bytes.reserve(elements);
    for (bool value : attr.getValues<bool>())
      bytes.push_back(value ? 1 : 0);
    return bytes;
  }
  ArrayRef<char> raw = attr.getRawData();
  if (!attr.isSplat())
    return std::vector<char>(raw.begin(), raw.end());
  bytes.reserve(raw.size() * elements);
  for (int64_t i = 0; i < elements; ++i)
    bytes.insert(bytes.end(), raw.begin(), raw.end());
  return bytes;
}

int ProgramBuilder::getTensor(Value value) {
  auto found = tensorOf.find(value);
  if (found != tensorOf.end())
    return found->second;
  if (auto arg = dyn_cast<BlockArgument>(value))
    return addTensor(value, MemorySpace::Input, arg.getArgNumber());

  Operation *def = value.getDefiningOp();
  // An op that updates tensors in place (an optimizer update) gives back
  // the tensors it was handed.
  if (auto update = dyn_cast<DestinationStyleOpInterface>(def)) {
    int id = getTensor(update.getTiedOpOperand(cast<OpResult>(value))->get());
    tensorOf[value] = id;
    return id;
  }
  OpKind kind = kinds.lookup(def);
  if (kind == OpKind::Parameter) {
    if (auto state = dyn_cast<StateOp>(def)) {
      // States of one name are one tensor (an accumulator that the
      // backward writes and the update reads).
      auto [known, inserted] = stateTensors.try_emplace(state.getName(), -1);
      if (!inserted) {
        tensorOf[value] = known->second;
        return known->second;
      }
      int64_t offset = alignTo(program.persistentBytes, options.alignment);
      int id = addTensor(value, MemorySpace::Persistent, offset);
      program.persistentBytes = offset + program.tensors[id].getBytes();
      known->second = id;
      std::optional<uint64_t> split = state.getSplitDim();
      program.states.push_back({state.getName().str(), id,
                                split ? static_cast<int64_t>(*split) : -1});
      return id;
    }
  }
  if (kind == OpKind::View) {
    int root = getTensor(def->getOperand(0));
    int id = addTensor(value, MemorySpace::Arena, 0);
    aliasOf[id] = root;
    return id;
  }
  if (kind == OpKind::Parameter && isCollectiveZeros(def)) {
    // Persistent memory starts zeroed, and nothing writes this tensor.
    int64_t offset = alignTo(program.persistentBytes, options.alignment);
    int id = addTensor(value, MemorySpace::Persistent, offset);
    program.persistentBytes = offset + program.tensors[id].getBytes();
    return id;
  }
  if (kind == OpKind::Parameter && isa<WeightOp, WeightSliceOp>(def)) {
    std::string key = getWeightKey(def);
    if (auto known = weightTensors.find(key);
        known != weightTensors.end() &&
        program.tensors[known->second].getBytes() ==
            getTensorBytes(value.getType())) {
      tensorOf[value] = known->second;
      return known->second;
    }
  }
  if (kind == OpKind::Parameter) {
    WeightEntry entry;
    if (auto weight = dyn_cast<WeightOp>(def)) {
      entry.name = weight.getName().str();
      entry.file = weight.getFile().str();
      entry.fileOffset = weight.getOffset();
      entry.bytes = weight.getLength();
    } else if (auto slice = dyn_cast<WeightSliceOp>(def)) {
      auto type = cast<RankedTensorType>(slice.getType());
      entry.name = slice.getName().str();
      entry.file = slice.getFile().str();
      entry.fileOffset = slice.getOffset();
      entry.shape.assign(slice.getShape().begin(), slice.getShape().end());
      entry.starts.assign(slice.getStarts().begin(), slice.getStarts().end());
      entry.window.assign(type.getShape().begin(), type.getShape().end());
      entry.elementBytes = getDTypeSize(getDType(type.getElementType()));
      entry.bytes = type.getNumElements() * entry.elementBytes;
      if (std::optional<int64_t> dim = slice.getSplitDim())
        entry.splitDim = *dim;
    } else {
      auto constant = cast<ConstantOp>(def);
      entry.name = "constant";
      entry.data =
          getConstantBytes(cast<DenseElementsAttr>(constant.getValue()));
      entry.bytes = static_cast<int64_t>(entry.data.size());
    }
    entry.offset = alignTo(program.weightBytes, options.alignment);
    program.weightBytes = entry.offset + entry.bytes;
    int id = addTensor(value, MemorySpace::Weights, entry.offset);
    if (isa<WeightOp, WeightSliceOp>(def))
      weightTensors[getWeightKey(def)] = id;
    if (isWritable(def)) {
      entry.writable = true;
      entry.persistentOffset =
          alignTo(program.persistentBytes, options.alignment);
      program.persistentBytes = entry.persistentOffset + entry.bytes;
      program.tensors[id].space = MemorySpace::Persistent;
      program.tensors[id].offset = entry.persistentOffset;
    }
    program.weights.push_back(std::move(entry));
    return id;
  }
  // Results of steps are placed by planArena.
  int id = addTensor(value, MemorySpace::Arena, -1);
  if (isStashed(def))
    stashed.insert(id);
  return id;
}

/// A splat constant operand becomes a literal of the loop.
static std::optional<double> getSplatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  Type type = dense.getElementType();
  if (isa<FloatType>(type))
    return dense.getSplatValue<APFloat>().convertToDouble();
  if (type.isInteger(1))
    return dense.getSplatValue<bool>() ? 1.0 : 0.0;
  if (isa<IntegerType>(type))
    return static_cast<double>(dense.getSplatValue<APInt>().getSExtValue());
  return std::nullopt;
}

FailureOr<int>
ProgramBuilder::buildLeaf(Value value, FusedLoop &loop,
                          llvm::DenseMap<int, int> &loadOfTensor) {
  ScalarExprBuilder builder(loop.nodes);
  Type elementType = cast<ShapedType>(value.getType()).getElementType();
  // 64-bit integers beyond 2^53 would not survive a double literal.
  if (std::optional<double> splat = getSplatValue(value);
      splat && std::abs(*splat) < 9.0e15)
    return builder.literal(*splat, elementType);
  return loop.getOrAddLoad(getTensor(value), getDType(elementType),
                           loadOfTensor);
}

FailureOr<int>
ProgramBuilder::buildExpression(Value value, FusedLoop &loop,
                                llvm::DenseMap<int, int> &loadOfTensor) {
  auto isInlined = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && inlined.contains(def);
  };
  if (!isInlined(value))
    return buildLeaf(value, loop, loadOfTensor);
  // Post-order over the inlined ops with an explicit stack (a fused chain
  // is as deep as the model is long): each op's operands, in order, then
  // the op.
  struct Frame {
    Operation *op;
    SmallVector<int, 4> operands;
  };
  SmallVector<Frame> stack;
  stack.push_back({value.getDefiningOp(), {}});
  ScalarExprBuilder builder(loop.nodes);
  while (true) {
    Frame &frame = stack.back();
    if (frame.operands.size() < frame.op->getNumOperands()) {
      Value operand = frame.op->getOperand(frame.operands.size());
      if (isInlined(operand)) {
        stack.push_back({operand.getDefiningOp(), {}});
        continue;
      }
      FailureOr<int> node = buildLeaf(operand, loop, loadOfTensor);
      if (failed(node))
        return failure();
      frame.operands.push_back(*node);
      continue;
    }
    fusedOps.push_back(frame.op->getName().stripDialect().str());
    FailureOr<int> node =
        cast<KernelInterface>(frame.op).buildScalar(builder, frame.operands);
    if (failed(node))
      return failure();
    stack.pop_back();
    if (stack.empty())
      return *node;
    stack.back().operands.push_back(*node);
  }
}

FailureOr<ProgramStep> ProgramBuilder::buildLoop(Operation *root) {
  FusedLoop loop;
  fusedOps.clear();
  llvm::DenseMap<int, int> loadOfTensor;
  SmallVector<int> operands;
  auto kernel = cast<KernelInterface>(root);
  for (OpOperand &use : root->getOpOperands()) {
    // An operand the op overwrites (a clear's, an assignment's target) is
    // not loaded.
    if (!kernel.readsOperand(use.getOperandNumber())) {
      operands.push_back(-1);
      continue;
    }
    FailureOr<int> node = buildExpression(use.get(), loop, loadOfTensor);
    if (failed(node))
      return failure();
    operands.push_back(*node);
  }
  if (FailureOr<ScalarReduction> reduction = kernel.getScalarReduction();
      succeeded(reduction)) {
    // The loop folds its single operand over the reduced dimensions.
    loop.root = operands[0];
    loop.reduction = std::move(*reduction);
    ArrayRef<int64_t> shape =
        cast<ShapedType>(root->getOperand(0).getType()).getShape();
    loop.iterationShape.assign(shape.begin(), shape.end());
  } else {
    ScalarExprBuilder builder(loop.nodes);
    FailureOr<int> node = kernel.buildScalar(builder, operands);
    if (failed(node))
      return failure();
    loop.root = *node;
    ArrayRef<int64_t> shape =
        cast<ShapedType>(root->getResult(0).getType()).getShape();
    loop.iterationShape.assign(shape.begin(), shape.end());
  }
  loop.output = getTensor(root->getResult(0));

  ProgramStep step;
  step.loop = std::move(loop);
  fusedOps.push_back(root->getName().stripDialect().str());
  step.summary = llvm::join(fusedOps, " + ");
  return step;
}

void ProgramBuilder::addCallInputs(Operation *op, KernelCall &call) {
  if (call.operands.empty())
    for (OpOperand &operand : op->getOpOperands())
      call.inputs.push_back(getTensor(operand.get()));
  else
    for (int index : call.operands)
      call.inputs.push_back(index < 0 ? -1 : getTensor(op->getOperand(index)));
}

FailureOr<ProgramStep> ProgramBuilder::buildCall(Operation *op) {
  KernelCall call;
  // The op's model says why it has no kernel.
  if (failed(cast<KernelInterface>(op).buildKernelCall(call)))
    return failure();
  addCallInputs(op, call);
  if (call.results.empty())
    for (Value result : op->getResults())
      call.outputs.push_back(getTensor(result));
  else
    for (int index : call.results)
      call.outputs.push_back(getTensor(op->getResult(index)));
  // What an update writes must outlive the call, or be a scratch copy
  // that nothing else reads (a ZeRO replica's block of a parameter, which
  // the update's result carries on to the gather).
  if (auto update = dyn_cast<DestinationStyleOpInterface>(op))
    for (OpResult result : op->getResults()) {
      OpOperand *init = update.getTiedOpOperand(result);
      int output = getTensor(result);
      MemorySpace space = program.tensors[output].space;
      if (space == MemorySpace::Persistent ||
          (space == MemorySpace::Arena && init->get().hasOneUse() &&
           program.tensors[output].stash < 0))
        continue;
      return op->emitOpError("updates operand ")
             << init->getOperandNumber()
             << " in place, which must be persistent (a writable weight, "
                "cleave.writable, or a cleave.state) or a scratch value that "
                "nothing else reads";
    }
  ProgramStep step;
  step.call = std::move(call);
  return step;
}

/// A step that copies `from` into `to` (graph outputs that are inputs,
/// weights or views of other tensors).
static ProgramStep makeCopy(int from, int to) {
  KernelCall call;
  call.kernel = "copy";
  call.inputs = {from};
  call.outputs = {to};
  ProgramStep step;
  step.call = std::move(call);
  step.summary = "copy to graph output";
  return step;
}

void ProgramBuilder::assignPhases(Block &block) {
  if (!training) {
    for (Operation &op : block.without_terminator())
      entryOf[&op] = entryIndex(rt::Phase::Forward, getChunk(&op).value_or(0));
    return;
  }
  for (auto [op, phase] : classifyStepPhases(block, /*trainingStep=*/true))
    entryOf[op] =
        entryIndex(phase == StepPhase::Update    ? rt::Phase::Update
                   : phase == StepPhase::Forward ? rt::Phase::Forward
                                                 : rt::Phase::Backward,
                   getChunk(op).value_or(0));
}

LogicalResult ProgramBuilder::connectEntries() {
  if (program.entries.size() == 1)
    return success();
  for (auto [e, entry] : llvm::enumerate(program.entries)) {
    std::set<int64_t> inputsRead;
    auto read = [&](int tensor) -> LogicalResult {
      if (tensor < 0)
        return success();
      int root = getRoot(tensor);
      const ProgramTensor &t = program.tensors[root];
      if (t.space == MemorySpace::Input) {
        inputsRead.insert(t.offset);
        return success();
      }
      int from = producerEntry[root];
      if (t.space != MemorySpace::Arena || from < 0 ||
          from == static_cast<int>(e))
        return success();
      // What the forward leaves for the backward (of its chunk) waits in a
      // stash.
      std::optional<int64_t> chunk = forwardChunk(from);
      if (training && chunk &&
          static_cast<int>(e) == entryIndex(rt::Phase::Backward, *chunk)) {
        stashed.insert(root);
        return success();
      }
      return func.emitError("internal error: the ")
             << entry.phase << " entry reads a value that the "
             << program.entries[from].phase
             << " entry computes, which does not outlive its call";
    };
    for (const ProgramStep &step : entry.steps) {
      if (step.loop) {
        for (const FusedLoad &load : step.loop->loads)
          if (failed(read(load.tensor)))
            return failure();
        continue;
      }
      for (int input : step.call->inputs)
        if (failed(read(input)))
          return failure();
    }
    // The first forward takes every graph input.
    if (e == 0)
      continue;
    for (int64_t index : inputsRead) {
      entry.inputs.push_back(getTensor(func.getArgument(index)));
      StringAttr name = getArgName(func, index);
      entry.inputNames.push_back(name ? name.str()
                                      : "input_" + std::to_string(index));
    }
  }
  return success();
}

LogicalResult ProgramBuilder::placeOutputs() {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  llvm::DenseSet<int> placed;
  int last = static_cast<int>(program.entries.size()) - 1;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    int tensor = getTensor(value);
    // Persistent memory holds the value of its last write: a result
    // returned from before a later write in place would read that write.
    if (program.tensors[tensor].space == MemorySpace::Persistent)
      if (Operation *def = value.getDefiningOp())
        for (Operation *later = def->getNextNode(); later != ret;
             later = later->getNextNode())
          if (auto update = dyn_cast<DestinationStyleOpInterface>(later))
            for (OpOperand &init : update.getDpsInitsMutable())
              if (getTensor(init.get()) == tensor)
                return later->emitOpError("writes in place the persistent "
                                          "tensor of result ")
                       << index
                       << ", which the function returns from before the "
                          "write";
    // An output belongs to the entry that computes it; a copy of what no
    // step writes runs last, after every write.
    int owner = producerEntry[getRoot(tensor)];
    ProgramEntry &entry = program.entries[owner >= 0 ? owner : last];
    StringAttr name = getResultName(func, index);
    entry.outputNames.push_back(name ? name.str()
                                     : "output_" + std::to_string(index));
    ProgramTensor &t = program.tensors[tensor];
    // A stashed result stays in its region for the later entry; the caller
    // gets a copy.
    bool writtenByStep = producer[tensor] >= 0 && aliasOf[tensor] < 0 &&
                         !stashed.contains(tensor);
    if (writtenByStep && t.space == MemorySpace::Arena &&
        placed.insert(tensor).second) {
      t.space = MemorySpace::Output;
      t.offset = index;
      entry.outputs.push_back(tensor);
      continue;
    }
    int copy = addTensor(value.getType(), MemorySpace::Output, index);
    producer[copy] = static_cast<int>(entry.steps.size());
    producerEntry[copy] = static_cast<int>(&entry - program.entries.data());
    entry.steps.push_back(makeCopy(tensor, copy));
    entry.outputs.push_back(copy);
  }
  return success();
}

SmallVector<std::pair<int, int>> ProgramBuilder::getTimeline() const {
  SmallVector<std::pair<int, int>> timeline;
  for (auto [e, entry] : llvm::enumerate(program.entries))
    for (size_t i = 0; i < entry.steps.size(); ++i)
      timeline.push_back({static_cast<int>(e), static_cast<int>(i)});
  return timeline;
}

void ProgramBuilder::planArena() {
  size_t numTensors = program.tensors.size();
  // Live ranges of the tensors that own arena bytes, in steps.
  std::vector<int> firstStep(numTensors, -1), lastStep(numTensors, -1);
  auto use = [&](int tensor, int step) {
    if (tensor < 0)
      return;
    int root = getRoot(tensor);
    lastStep[root] = std::max(lastStep[root], step);
  };
  SmallVector<std::pair<int, int>> timeline = getTimeline();
  auto stepAt = [&](std::pair<int, int> at) -> ProgramStep & {
    return program.entries[at.first].steps[at.second];
  };
  for (auto [index, at] : llvm::enumerate(timeline)) {
    int s = static_cast<int>(index);
    const ProgramStep &step = stepAt(at);
    // A tensor is born at the first step that writes it: a call that
    // updates a scratch tensor in place writes it again.
    auto define = [&](int tensor) {
      if (firstStep[tensor] < 0)
        firstStep[tensor] = s;
      use(tensor, s);
    };
    if (step.loop) {
      for (const FusedLoad &load : step.loop->loads)
        use(load.tensor, s);
      define(step.loop->output);
    } else {
      for (int input : step.call->inputs)
        use(input, s);
      for (int output : step.call->outputs)
        define(output);
    }
  }

  // Buffers: a set of tensors that share bytes one after another.
  struct Buffer {
    int64_t bytes = 0;
    int first = 0, last = 0;
    int64_t offset = 0;
  };
  std::vector<Buffer> buffers;
  std::vector<int> bufferOf(numTensors, -1);
  auto isArena = [&](int tensor) {
    return aliasOf[tensor] < 0 &&
           program.tensors[tensor].space == MemorySpace::Arena;
  };
  for (auto [index, at] : llvm::enumerate(timeline)) {
    int s = static_cast<int>(index);
    const ProgramStep &step = stepAt(at);
    SmallVector<int, 2> outputs;
    if (step.loop)
      outputs.push_back(step.loop->output);
    else
      outputs.append(step.call->outputs.begin(), step.call->outputs.end());
    for (int output : outputs) {
      // Already placed: updated in place, it keeps its bytes.
      if (!isArena(output) || bufferOf[output] >= 0)
        continue;
      const ProgramTensor &out = program.tensors[output];
      if (stashed.contains(output)) {
        StashRegion region;
        region.tensor = output;
        region.stride =
            alignTo(std::max<int64_t>(out.getBytes(), 1), options.alignment);
        int64_t chunk = forwardChunk(producerEntry[output]).value_or(0);
        region.slots =
            chunk < static_cast<int64_t>(options.chunkStashSlots.size())
                ? options.chunkStashSlots[chunk]
                : options.stashSlots;
        program.unplannedArenaBytes += region.stride * region.slots;
        program.tensors[output].stash =
            static_cast<int>(program.stashes.size());
        program.stashes.push_back(region);
        continue;
      }
      program.unplannedArenaBytes += alignTo(out.getBytes(), options.alignment);
      // In place: a loop may overwrite an operand that dies in it, when
      // every load of that operand reads the element being written; a
      // convolution its residual, where that dies in it and is no other
      // operand (Y is written while X is read).
      int reuse = -1;
      if (options.inPlace && step.call && getKernelResidual(*step.call) >= 0) {
        int root = getRoot(getKernelResidual(*step.call));
        const ProgramTensor &residual = program.tensors[root];
        bool alone = llvm::count_if(step.call->inputs, [&](int input) {
                       return input >= 0 && getRoot(input) == root;
                     }) == 1;
        if (alone && isArena(root) && bufferOf[root] >= 0 &&
            !stashed.contains(root) && buffers[bufferOf[root]].last == s &&
            residual.dtype == out.dtype &&
            residual.getBytes() == out.getBytes())
          reuse = bufferOf[root];
      }
      if (options.inPlace && step.loop && !step.loop->reduction) {
        for (const FusedLoad &load : step.loop->loads) {
          int root = getRoot(load.tensor);
          if (!isArena(root) || bufferOf[root] < 0 ||
              buffers[bufferOf[root]].last != s ||
              program.tensors[root].dtype != out.dtype ||
              program.tensors[root].getNumElements() != out.getNumElements())
            continue;
          bool identity =
              llvm::all_of(step.loop->loads, [&](const FusedLoad &l) {
                return getRoot(l.tensor) != root ||
                       program.tensors[l.tensor].shape == out.shape;
              });
          if (identity) {
            reuse = bufferOf[root];
            break;
          }
        }
      }
      if (reuse >= 0) {
        bufferOf[output] = reuse;
        buffers[reuse].last = std::max(s, lastStep[output]);
        ++program.entries[at.first].inPlaceSteps;
        continue;
      }
      Buffer buffer;
      buffer.bytes =
          alignTo(std::max<int64_t>(out.getBytes(), 1), options.alignment);
      buffer.first = firstStep[output];
      buffer.last = std::max(s, lastStep[output]);
      bufferOf[output] = static_cast<int>(buffers.size());
      buffers.push_back(buffer);
    }
  }

  // First fit by decreasing size: each buffer takes the lowest offset that
  // no buffer live at the same time overlaps.
  std::vector<int> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(
      order, [&](int a, int b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<int> placed;
  for (int b : order) {
    Buffer &buffer = buffers[b];
    SmallVector<std::pair<int64_t, int64_t>> taken;
    for (int other : placed) {
      const Buffer &o = buffers[other];
      if (o.last < buffer.first || buffer.last < o.first)
        continue;
      taken.push_back({o.offset, o.offset + o.bytes});
    }
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [begin, end] : taken) {
      if (offset + buffer.bytes <= begin)
        break;
      offset = std::max(offset, end);
    }
    buffer.offset = offset;
    program.arenaBytes = std::max(program.arenaBytes, offset + buffer.bytes);
    placed.push_back(b);
  }

  // Stash regions live across calls, so they share bytes with nothing.
  for (StashRegion &region : program.stashes) {
    region.offset = program.arenaBytes;
    program.arenaBytes += region.stride * region.slots;
    program.tensors[region.tensor].offset = region.offset;
  }

  for (size_t t = 0; t < numTensors; ++t)
    if (bufferOf[t] >= 0)
      program.tensors[t].offset = buffers[bufferOf[t]].offset;
  // Views take the place of what they view.
  for (size_t t = 0; t < numTensors; ++t) {
    if (aliasOf[t] < 0)
      continue;
    const ProgramTensor &root = program.tensors[getRoot(t)];
    program.tensors[t].space = root.space;
    program.tensors[t].offset = root.offset;
    program.tensors[t].stash = root.stash;
  }
}

FailureOr<DeviceProgram> ProgramBuilder::build() {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("a device program needs a single block"), failure();
  if (failed(checkTypes()))
    return failure();
  Block &block = func.getBody().front();
  for (Operation &op : block.without_terminator())
    if (failed(classify(&op)))
      return failure();
  // A function that accumulates its gradients is a training step of
  // three entries (a forward and a backward per model chunk, and the
  // update); any other runs as one forward per chunk.
  // A pipeline stage without parameters or loss is part of its module's
  // training step.
  auto module = func->getParentOfType<ModuleOp>();
  training = module
                 ? isTrainingStepModule(module)
                 : llvm::any_of(block.without_terminator(), [](Operation &op) {
                     return isa<AccumulateOp>(op);
                   });
  chooseFusion();
  chooseKernelEpilogues();
  for (Operation &op : block.without_terminator())
    numChunks = std::max(numChunks, getChunk(&op).value_or(0) + 1);
  if (training || numChunks > 1)
    assignPhases(block);
  auto addEntry = [&](rt::Phase phase, int64_t chunk) {
    ProgramEntry &entry = program.entries.emplace_back();
    entry.phase = rt::phaseName(phase);
    entry.chunk = chunk;
    entry.name = entry.phase;
    if (chunk > 0)
      entry.name += "_chunk" + std::to_string(chunk);
    assert(entryIndex(phase, chunk) ==
               static_cast<int>(program.entries.size()) - 1 &&
           "entries are added in entryIndex order");
  };
  for (int64_t chunk = 0; chunk < numChunks; ++chunk) {
    addEntry(rt::Phase::Forward, chunk);
    if (training)
      addEntry(rt::Phase::Backward, chunk);
  }
  if (training)
    addEntry(rt::Phase::Update, 0);
  // The forward takes every graph input: its ports are the program's.
  ProgramEntry &forward = program.entries.front();
  for (BlockArgument arg : func.getArguments()) {
    forward.inputs.push_back(getTensor(arg));
    StringAttr name = getArgName(func, arg.getArgNumber());
    forward.inputNames.push_back(
        name ? name.str() : "input_" + std::to_string(arg.getArgNumber()));
  }

  for (Operation &op : block.without_terminator()) {
    OpKind kind = kinds.lookup(&op);
    if (kind == OpKind::Parameter || kind == OpKind::View ||
        inlined.contains(&op) || epilogues.contains(&op))
      continue;
    // A reduction whose input chain was fused is a generated loop too.
    bool fusedReduction = kind == OpKind::Kernel && op.getNumOperands() == 1 &&
                          inlined.contains(op.getOperand(0).getDefiningOp());
    auto epilogue = epilogueOf.find(&op);
    FailureOr<ProgramStep> step =
        epilogue != epilogueOf.end()
            ? buildKernelWithEpilogue(&op, epilogue->second)
        : kind == OpKind::Elementwise || fusedReduction ? buildLoop(&op)
                                                        : buildCall(&op);
    if (failed(step))
      return failure();
    step->node = getNodeName(op.getLoc());
    if (step->summary.empty())
      step->summary = op.getName().stripDialect().str();
    int e = entryOf.lookup(&op);
    ProgramEntry &entry = program.entries[e];
    int index = static_cast<int>(entry.steps.size());
    auto produce = [&](int output) {
      producer[output] = index;
      producerEntry[output] = e;
    };
    if (step->loop)
      produce(step->loop->output);
    else
      for (int output : step->call->outputs)
        produce(output);
    entry.steps.push_back(std::move(*step));
  }
  if (failed(connectEntries()))
    return failure();
  if (failed(placeOutputs()))
    return failure();
  chooseBlockedLayouts();
  planArena();
  program.weightBytes = alignTo(program.weightBytes, options.alignment);
  program.persistentBytes = alignTo(program.persistentBytes, options.alignment);
  return std::move(program);
}

FailureOr<DeviceProgram>
cleave::buildDeviceProgram(func::FuncOp func,
                           const DeviceProgramOptions &options) {
  FailureOr<DeviceProgram> program = ProgramBuilder(func, options).build();
  if (failed(program))
    return failure();
  // What the emitters rely on holds by construction; a violation is a bug of
  // the lowering, reported rather than emitted.
  if (llvm::Error error = verifyDeviceProgram(*program))
    return func.emitError("internal error: the lowered program is "
                          "inconsistent: ")
               << llvm::toString(std::move(error)),
           failure();
  return program;
}

FailureOr<func::FuncOp> cleave::getProgramFunction(ModuleOp module,
                                                   StringRef name) {
  if (!name.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func)
      return module.emitError("no function @") << name << " to compile",
             failure();
    return func;
  }
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    if (found)
      return module.emitError("several public functions; name the one to "
                              "compile"),
             failure();
    found = func;
  }
  if (!found)
    return module.emitError("no public function to compile"), failure();
  return found;
}
