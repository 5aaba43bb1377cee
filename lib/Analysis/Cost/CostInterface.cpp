//===- CostInterface.cpp - cost external models for cleave ops --*- C++ -*-===//
//
// The work each cleave op does, attached as external models of
// `cleave::CostInterface`.
//
// FLOP counting convention: a multiply-add counts 2; otherwise every
// arithmetic operation, comparison, selection or elementary function (exp,
// erf, tanh, ...) in the op's defining formula counts 1 per element it is
// applied to. Work that is done once per row or per channel (a reciprocal of
// a sum, an epsilon add) is not counted: it is a vanishing share of the
// per-element work. Conversions and pure data movement count 0.
//
//===----------------------------------------------------------------------===//

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace cleave;

#include "cleave/Analysis/Cost/CostInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

int64_t cleave::getNumElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return tensor.getNumElements();
}

int64_t cleave::getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  Type element = tensor.getElementType();
  if (!element.isIntOrFloat())
    return 0;
  int64_t elementBytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  return tensor.getNumElements() * elementBytes;
}

Value cleave::getBufferRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto cost = dyn_cast<CostInterface>(def);
    if (!cost || !cost.isView() || def->getNumOperands() == 0)
      break;
    value = def->getOperand(0);
  }
  return value;
}

bool cleave::isParameterValue(Value value) {
  Operation *def = getBufferRoot(value).getDefiningOp();
  auto cost = dyn_cast_or_null<CostInterface>(def);
  return cost && cost.isParameter();
}

/// Calls `fn` once per distinct operand of `op`: an op that reads one value
/// twice (`mul %x, %x`) loads it once.
template <typename Fn>
static void forEachDistinctOperand(Operation *op, Fn fn) {
  llvm::SmallPtrSet<Value, 4> seen;
  for (Value operand : op->getOperands())
    if (seen.insert(operand).second)
      fn(operand);
}

int64_t cleave::detail::defaultBytesRead(Operation *op) {
  int64_t bytes = 0;
  forEachDistinctOperand(
      op, [&](Value operand) { bytes += getTensorBytes(operand.getType()); });
  return bytes;
}

int64_t cleave::detail::defaultBytesWritten(Operation *op) {
  int64_t bytes = 0;
  for (Type type : op->getResultTypes())
    bytes += getTensorBytes(type);
  return bytes;
}

int64_t cleave::detail::defaultParameterBytes(Operation *op) {
  int64_t bytes = 0;
  forEachDistinctOperand(op, [&](Value operand) {
    if (isParameterValue(operand))
      bytes += getTensorBytes(operand.getType());
  });
  return bytes;
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

static int64_t elementsOf(Value value) {
  return getNumElements(value.getType());
}

namespace {

//===----------------------------------------------------------------------===//
// Families of ops that share a formula
//===----------------------------------------------------------------------===//

/// Elementwise ops (unary or broadcasting n-ary): `FlopsPerElement` per
/// element of the result, run as kernels of class `Class`.
template <typename OpT, int64_t FlopsPerElement, KernelClass Class>
struct ElementwiseCostModel
    : CostInterface::ExternalModel<
          ElementwiseCostModel<OpT, FlopsPerElement, Class>, OpT> {
  int64_t getFlops(Operation *op) const {
    return FlopsPerElement * elementsOf(op->getResult(0));
  }
  KernelClass getKernelClass(Operation *) const { return Class; }
};

/// SGD's update: 8 FLOPs per parameter element with a momentum buffer, 4
/// without (the gradient's scale and decay, and the parameter's step).
struct SgdUpdateCostModel
    : CostInterface::ExternalModel<SgdUpdateCostModel, SgdUpdateOp> {
  int64_t getFlops(Operation *op) const {
    auto update = cast<SgdUpdateOp>(op);
    return (update.getMomentumBuffer() ? 8 : 4) *
           elementsOf(update.getNewParameter());
  }
};

/// Ops that copy bytes without arithmetic (transposes, concatenation,
/// padding, broadcasting copies).
template <typename OpT>
struct DataMovementCostModel
    : CostInterface::ExternalModel<DataMovementCostModel<OpT>, OpT> {
  int64_t getFlops(Operation *) const { return 0; }
};

/// Data movement that a copy kernel does in this process (not a transfer).
template <typename OpT>
struct CopyCostModel : CostInterface::ExternalModel<CopyCostModel<OpT>, OpT> {
  int64_t getFlops(Operation *) const { return 0; }
  KernelClass getKernelClass(Operation *) const { return KernelClass::Copy; }
};

/// A transpose reads its input in one order and writes it in another:
/// strided where a copy streams.
struct TransposeCostModel
    : CostInterface::ExternalModel<TransposeCostModel, TransposeOp> {
  int64_t getFlops(Operation *) const { return 0; }
  KernelClass getKernelClass(Operation *) const {
    return KernelClass::Transpose;
  }
};

/// Ops whose result reinterprets the operand's bytes with another shape.
template <typename OpT>
struct ViewCostModel : CostInterface::ExternalModel<ViewCostModel<OpT>, OpT> {
  int64_t getFlops(Operation *) const { return 0; }
  int64_t getBytesRead(Operation *) const { return 0; }
  int64_t getBytesWritten(Operation *) const { return 0; }
  bool isView(Operation *) const { return true; }
};

/// Weights and constants: resident data that costs nothing to run.
template <typename OpT>
struct ParameterCostModel
    : CostInterface::ExternalModel<ParameterCostModel<OpT>, OpT> {
  int64_t getFlops(Operation *) const { return 0; }
  int64_t getBytesRead(Operation *) const { return 0; }
  int64_t getBytesWritten(Operation *) const { return 0; }
  bool isParameter(Operation *) const { return true; }
};

/// Reductions: `PerInput` per input element (combining it into its
/// accumulator) plus `PerOutput` per result element (a final division or
/// square root).
template <typename OpT, int64_t PerInput, int64_t PerOutput>
struct ReductionCostModel
    : CostInterface::ExternalModel<ReductionCostModel<OpT, PerInput, PerOutput>,
                                   OpT> {
  int64_t getFlops(Operation *op) const {
    return PerInput * elementsOf(op->getOperand(0)) +
           PerOutput * elementsOf(op->getResult(0));
  }
};

//===----------------------------------------------------------------------===//
// Elementwise ops with attributes that change the work
//===----------------------------------------------------------------------===//

struct ClipCostModel : CostInterface::ExternalModel<ClipCostModel, ClipOp> {
  /// One comparison per bound that is present.
  int64_t getFlops(Operation *op) const {
    auto clip = cast<ClipOp>(op);
    int64_t bounds = (clip.getMinAttr() ? 1 : 0) + (clip.getMaxAttr() ? 1 : 0);
    return bounds * elementsOf(clip.getOutput());
  }
  KernelClass getKernelClass(Operation *) const {
    return KernelClass::Elementwise;
  }
};

struct GeluCostModel : CostInterface::ExternalModel<GeluCostModel, GeluOp> {
  /// `0.5 * x * (1 + erf(x / sqrt(2)))` is 5 operations per element; the tanh
  /// form `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` is 9.
  int64_t getFlops(Operation *op) const {
    auto gelu = cast<GeluOp>(op);
    int64_t perElement = gelu.getApproximate() == "tanh" ? 9 : 5;
    return perElement * elementsOf(gelu.getOutput());
  }
  KernelClass getKernelClass(Operation *) const {
    return KernelClass::Activation;
  }
};

//===----------------------------------------------------------------------===//
// Contractions and convolutions
//===----------------------------------------------------------------------===//

/// A product of `rows` rows is skinny when it has too few to fill the
/// register blocks of a GEMM kernel (batch-1 inference, decode steps).
static KernelClass getMatmulKernelClass(int64_t rows) {
  return rows <= 16 ? KernelClass::MatmulSkinny : KernelClass::Matmul;
}

struct MatMulCostModel
    : CostInterface::ExternalModel<MatMulCostModel, MatMulOp> {
  /// Each result element is a dot product over the lhs's last dimension; the
  /// batch broadcast and the 1-D promotions are already in the result shape.
  int64_t getFlops(Operation *op) const {
    auto matmul = cast<MatMulOp>(op);
    int64_t contracted = shapeOf(matmul.getLhs()).back();
    return 2 * elementsOf(matmul.getOutput()) * contracted;
  }
  bool usesMatrixUnits(Operation *) const { return true; }
  /// The rows of one product: the lhs's leading dimensions fold into them
  /// when the rhs is a plain matrix (`x @ W`).
  KernelClass getKernelClass(Operation *op) const {
    auto matmul = cast<MatMulOp>(op);
    ArrayRef<int64_t> lhs = shapeOf(matmul.getLhs());
    int64_t rows = 1;
    if (shapeOf(matmul.getRhs()).size() > 2)
      rows = lhs.size() >= 2 ? lhs[lhs.size() - 2] : 1;
    else
      rows = elementsOf(matmul.getLhs()) / std::max<int64_t>(lhs.back(), 1);
    return getMatmulKernelClass(rows);
  }
};

struct GemmCostModel : CostInterface::ExternalModel<GemmCostModel, GemmOp> {
  /// 2·M·N·K for the product, M·N for an alpha scale other than 1, and M·N
  /// (2·M·N when beta is not 1) for adding `c`.
  int64_t getFlops(Operation *op) const {
    auto gemm = cast<GemmOp>(op);
    ArrayRef<int64_t> a = shapeOf(gemm.getA());
    int64_t contracted = gemm.getTransA() ? a[0] : a[1];
    int64_t outputs = elementsOf(gemm.getOutput());
    int64_t flops = 2 * outputs * contracted;
    if (gemm.getAlpha().convertToFloat() != 1.0f)
      flops += outputs;
    if (gemm.getC())
      flops += (gemm.getBeta().convertToFloat() != 1.0f ? 2 : 1) * outputs;
    return flops;
  }
  bool usesMatrixUnits(Operation *) const { return true; }
  KernelClass getKernelClass(Operation *op) const {
    return getMatmulKernelClass(shapeOf(cast<GemmOp>(op).getOutput())[0]);
  }
};

struct ConvCostModel : CostInterface::ExternalModel<ConvCostModel, ConvOp> {
  /// Each output element is a dot product over one filter, `C/group x k1 x
  /// ... x kn` weights (the weight's elements divided by M), plus a bias add.
  int64_t getFlops(Operation *op) const {
    auto conv = cast<ConvOp>(op);
    int64_t outputChannels = shapeOf(conv.getWeight())[0];
    int64_t filterSize = elementsOf(conv.getWeight()) / outputChannels;
    int64_t outputs = elementsOf(conv.getOutput());
    return 2 * outputs * filterSize + (conv.getBias() ? outputs : 0);
  }
  bool usesMatrixUnits(Operation *) const { return true; }
  KernelClass getKernelClass(Operation *op) const {
    auto conv = cast<ConvOp>(op);
    ArrayRef<int64_t> weight = shapeOf(conv.getWeight());
    if (weight.size() == 3)
      return KernelClass::Conv1D;
    if (weight[1] == 1 && shapeOf(conv.getInput())[1] > 1)
      return KernelClass::ConvDepthwise;
    if (llvm::all_of(weight.drop_front(2), [](int64_t k) { return k == 1; }))
      return KernelClass::ConvPointwise;
    return KernelClass::Conv;
  }
};

struct ConvTransposeCostModel
    : CostInterface::ExternalModel<ConvTransposeCostModel, ConvTransposeOp> {
  /// Each input element scatters into `M/group x k1 x ... x kn` outputs (the
  /// weight's elements divided by C) with a multiply-add each, plus a bias
  /// add per output element.
  int64_t getFlops(Operation *op) const {
    auto conv = cast<ConvTransposeOp>(op);
    int64_t inputChannels = shapeOf(conv.getWeight())[0];
    int64_t scatterSize = elementsOf(conv.getWeight()) / inputChannels;
    int64_t flops = 2 * elementsOf(conv.getInput()) * scatterSize;
    if (conv.getBias())
      flops += elementsOf(conv.getOutput());
    return flops;
  }
  bool usesMatrixUnits(Operation *) const { return true; }
  KernelClass getKernelClass(Operation *op) const {
    return shapeOf(op->getOperand(1)).size() == 3 ? KernelClass::Conv1D
                                                  : KernelClass::Conv;
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t value : values)
    result *= value;
  return result;
}

struct MaxPoolCostModel
    : CostInterface::ExternalModel<MaxPoolCostModel, MaxPoolOp> {
  /// One comparison per window element per output.
  int64_t getFlops(Operation *op) const {
    auto pool = cast<MaxPoolOp>(op);
    return elementsOf(pool.getOutput()) * product(pool.getKernelShape());
  }
  KernelClass getKernelClass(Operation *) const { return KernelClass::Pool; }
};

struct AveragePoolCostModel
    : CostInterface::ExternalModel<AveragePoolCostModel, AveragePoolOp> {
  /// One add per window element per output, then a division.
  int64_t getFlops(Operation *op) const {
    auto pool = cast<AveragePoolOp>(op);
    int64_t outputs = elementsOf(pool.getOutput());
    return outputs * product(pool.getKernelShape()) + outputs;
  }
  KernelClass getKernelClass(Operation *) const { return KernelClass::Pool; }
};

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

/// Normalisation over statistics computed on the fly: per element, 1 add for
/// the mean, 3 for the variance (subtract, square, add), 2 to normalise
/// (subtract the mean, multiply by the reciprocal deviation), 1 for the scale
/// and 1 for the bias when present.
static int64_t normalizationFlops(Value input, bool hasBias) {
  return (7 + (hasBias ? 1 : 0)) * elementsOf(input);
}

struct LayerNormCostModel
    : CostInterface::ExternalModel<LayerNormCostModel, LayerNormOp> {
  int64_t getFlops(Operation *op) const {
    auto norm = cast<LayerNormOp>(op);
    return normalizationFlops(norm.getInput(),
                              static_cast<bool>(norm.getBias()));
  }
  KernelClass getKernelClass(Operation *) const {
    return KernelClass::Normalization;
  }
};

template <typename OpT>
struct StatisticsNormCostModel
    : CostInterface::ExternalModel<StatisticsNormCostModel<OpT>, OpT> {
  int64_t getFlops(Operation *op) const {
    return normalizationFlops(op->getOperand(0), /*hasBias=*/true);
  }
  KernelClass getKernelClass(Operation *) const {
    return KernelClass::Normalization;
  }
};

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct AttentionCostModel
    : CostInterface::ExternalModel<AttentionCostModel, AttentionOp> {
  /// Per score (query row x key): a dot product over the head size (2·D),
  /// the scale, mask and softmax (5), and its share of the weighted sum of
  /// the values (2·Dv). The scores are never stored, so the bytes are the
  /// operands' and the result's.
  int64_t getFlops(Operation *op) const {
    auto attention = cast<AttentionOp>(op);
    ArrayRef<int64_t> q = shapeOf(attention.getQuery());
    ArrayRef<int64_t> k = shapeOf(attention.getKey());
    int64_t heads = attention.getQNumHeads();
    bool packed = q.size() == 3;
    int64_t queries = q[0] * heads * q[packed ? 1 : 2];
    int64_t keys = k[packed ? 1 : 2];
    int64_t headSize = packed ? q[2] / heads : q[3];
    int64_t valueHeadSize =
        elementsOf(attention.getOutput()) / std::max<int64_t>(queries, 1);
    return queries * keys * (2 * headSize + 5 + 2 * valueHeadSize);
  }
  bool usesMatrixUnits(Operation *) const { return true; }
  KernelClass getKernelClass(Operation *) const {
    return KernelClass::Attention;
  }
};

//===----------------------------------------------------------------------===//
// Data movement with partial reads
//===----------------------------------------------------------------------===//

/// Shape queries read the operand's type, not its bytes.
struct ShapeCostModel : CostInterface::ExternalModel<ShapeCostModel, ShapeOp> {
  int64_t getFlops(Operation *) const { return 0; }
  int64_t getBytesRead(Operation *) const { return 0; }
};

struct SliceCostModel : CostInterface::ExternalModel<SliceCostModel, SliceOp> {
  int64_t getFlops(Operation *) const { return 0; }
  /// Only the selected elements are read.
  int64_t getBytesRead(Operation *op) const {
    return getTensorBytes(op->getResult(0).getType());
  }
  KernelClass getKernelClass(Operation *) const { return KernelClass::Copy; }
};

/// Gathers (`gather`, `gather_nd`, `gather_elements`).
template <typename OpT>
struct GatherCostModel
    : CostInterface::ExternalModel<GatherCostModel<OpT>, OpT> {
  int64_t getFlops(Operation *) const { return 0; }
  /// The indices and the gathered slices are read, not the whole table: an
  /// embedding lookup touches a few rows of a large weight (which still
  /// counts whole in the parameter bytes, as it stays resident).
  int64_t getBytesRead(Operation *op) const {
    auto gather = cast<OpT>(op);
    return getTensorBytes(gather.getIndices().getType()) +
           getTensorBytes(gather.getOutput().getType());
  }
  KernelClass getKernelClass(Operation *) const { return KernelClass::Copy; }
};

/// Scatters copy `data` and apply the updates: a reduction is one
/// operation per update element, a plain scatter only moves them.
template <typename OpT>
struct ScatterCostModel
    : CostInterface::ExternalModel<ScatterCostModel<OpT>, OpT> {
  int64_t getFlops(Operation *op) const {
    auto scatter = cast<OpT>(op);
    if (scatter.getReduction() == "none")
      return 0;
    return elementsOf(scatter.getUpdates());
  }
};

struct ResizeCostModel
    : CostInterface::ExternalModel<ResizeCostModel, ResizeOp> {
  /// Separable interpolation over the `r` dimensions whose scale is not 1:
  /// with `t` taps per dimension (2 linear, 4 cubic), an output element
  /// needs (t^r - 1) / (t - 1) one-dimensional interpolations of 2t - 1
  /// operations each (t multiplies, t - 1 adds; a lerp is 3). Nearest
  /// neighbour only copies.
  int64_t getFlops(Operation *op) const {
    auto resize = cast<ResizeOp>(op);
    int64_t taps = 0;
    if (resize.getMode() == "linear")
      taps = 2;
    else if (resize.getMode() == "cubic")
      taps = 4;
    if (taps == 0)
      return 0;
    int64_t resized = llvm::count_if(resize.getScales(),
                                     [](double scale) { return scale != 1.0; });
    int64_t tapPower = 1;
    for (int64_t i = 0; i < resized; ++i)
      tapPower *= taps;
    int64_t interpolations = (tapPower - 1) / (taps - 1);
    return elementsOf(resize.getOutput()) * interpolations * (2 * taps - 1);
  }
};

//===----------------------------------------------------------------------===//
// Recurrent layers
//===----------------------------------------------------------------------===//

/// Recurrent layers: per direction and time step, the input and recurrent
/// products of the stacked gates, `2·B·G·H·(I + H)`, plus `PerHidden`
/// elementwise operations per batch row and hidden unit (gate activations,
/// state updates), plus 2 adds per gate for the biases (Wb and Rb) when
/// present, plus `PerPeephole` per batch row and hidden unit for peepholes.
template <typename OpT, int64_t PerHidden, int64_t PerPeephole = 0>
struct RecurrentCostModel
    : CostInterface::ExternalModel<
          RecurrentCostModel<OpT, PerHidden, PerPeephole>, OpT> {
  int64_t getFlops(Operation *op) const {
    auto rnn = cast<OpT>(op);
    ArrayRef<int64_t> input = shapeOf(rnn.getInput());
    ArrayRef<int64_t> weight = shapeOf(rnn.getWeight());
    int64_t steps = input[0], batch = input[1];
    int64_t directions = weight[0], gateRows = weight[1], inputSize = weight[2];
    int64_t hidden = shapeOf(rnn.getRecurrence())[2];
    int64_t gates = gateRows / hidden;
    int64_t perStep = 2 * batch * gateRows * (inputSize + hidden);
    int64_t elementwise = PerHidden;
    if (rnn.getBias())
      elementwise += 2 * gates;
    if (hasPeepholes(rnn))
      elementwise += PerPeephole;
    perStep += elementwise * batch * hidden;
    return directions * steps * perStep;
  }
  bool usesMatrixUnits(Operation *) const { return true; }
  /// Each time step multiplies the batch's few rows by the gate weights
  /// and applies the gates' functions, one step after another.
  KernelClass getKernelClass(Operation *) const {
    return KernelClass::Recurrent;
  }

private:
  static bool hasPeepholes(OpT op) {
    if constexpr (std::is_same_v<OpT, LSTMOp>)
      return static_cast<bool>(op.getPeepholes());
    return false;
  }
};

/// Top-k: each input element is compared into a selection of k, about
/// log2(k) comparisons (one when k is 1).
struct TopKCostModel : CostInterface::ExternalModel<TopKCostModel, TopKOp> {
  int64_t getFlops(Operation *op) const {
    auto topk = cast<TopKOp>(op);
    int64_t comparisons = std::max<int64_t>(1, llvm::Log2_64_Ceil(topk.getK()));
    return comparisons * elementsOf(topk.getInput());
  }
};

/// RNN: the activation.
using RNNCostModel = RecurrentCostModel<RNNOp, 1>;
/// GRU: two gate activations, the reset product, the candidate activation,
/// and `(1 - z) * h~ + z * h` (4).
using GRUCostModel = RecurrentCostModel<GRUOp, 8>;
/// LSTM: four activations, `c = f * c + i * g` (3) and `h = o * tanh(c)`
/// (2); each of the three peepholes is a multiply and an add.
using LSTMCostModel = RecurrentCostModel<LSTMOp, 9, 6>;

} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

/// Attaches the elementwise model to `Ops`, run as kernels of class
/// `Class` (pointwise arithmetic unless said otherwise).
template <int64_t FlopsPerElement, KernelClass Class, typename... Ops>
static void attachClassified(MLIRContext *context) {
  (Ops::template attachInterface<
       ElementwiseCostModel<Ops, FlopsPerElement, Class>>(*context),
   ...);
}

template <int64_t FlopsPerElement, typename... Ops>
static void attachElementwise(MLIRContext *context) {
  attachClassified<FlopsPerElement, KernelClass::Elementwise, Ops...>(context);
}

template <template <typename> class Model, typename... Ops>
static void attachAll(MLIRContext *context) {
  (Ops::template attachInterface<Model<Ops>>(*context), ...);
}

void cleave::registerCostInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, CleaveDialect *) {
    // Elementwise, by operations per element in the op's formula.
    attachElementwise<0, CastOp>(context);
    // Those that call vector math are activations.
    attachClassified<1, KernelClass::Activation, ExpOp, LogOp, ErfOp, TanhOp,
                     SinOp, CosOp>(context);
    attachElementwise<1, SqrtOp, ReciprocalOp, FloorOp, CeilOp, RoundOp, SignOp,
                      ReluOp, NegOp, AbsOp, NotOp, IsNaNOp, IsInfOp>(context);
    attachElementwise<1, AddOp, SubOp, MulOp, DivOp, PowOp, MinOp, MaxOp,
                      EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp,
                      AndOp, OrOp, WhereOp>(context);
    attachElementwise<2, ModOp>(context); // remainder, sign correction
    attachElementwise<2, LeakyReluOp>(context);      // compare, multiply
    // Softplus: exp, add, log; sigmoid and elu: neg, exp, add, div.
    attachClassified<3, KernelClass::Activation, SoftplusOp>(context);
    attachClassified<4, KernelClass::Activation, SigmoidOp, EluOp>(context);
    attachElementwise<4, HardSigmoidOp>(context);    // mul, add, min, max
    attachElementwise<5, HardSwishOp>(context);      // + the multiply by x
    ClipOp::attachInterface<ClipCostModel>(*context);
    GeluOp::attachInterface<GeluCostModel>(*context);

    // Contractions and convolutions.
    MatMulOp::attachInterface<MatMulCostModel>(*context);
    GemmOp::attachInterface<GemmCostModel>(*context);
    ConvOp::attachInterface<ConvCostModel>(*context);
    ConvTransposeOp::attachInterface<ConvTransposeCostModel>(*context);

    // Pooling: global pools are reductions over the spatial dimensions.
    MaxPoolOp::attachInterface<MaxPoolCostModel>(*context);
    AveragePoolOp::attachInterface<AveragePoolCostModel>(*context);
    GlobalMaxPoolOp::attachInterface<ReductionCostModel<GlobalMaxPoolOp, 1, 0>>(
        *context);
    GlobalAveragePoolOp::attachInterface<
        ReductionCostModel<GlobalAveragePoolOp, 1, 1>>(*context);

    // Normalisations. Inference batch norm uses stored statistics: subtract
    // the mean, multiply by the reciprocal deviation, scale, shift.
    attachClassified<4, KernelClass::Normalization, BatchNormOp>(context);
    LayerNormOp::attachInterface<LayerNormCostModel>(*context);
    // RMS norm: square, add, multiply by the reciprocal root, scale.
    attachClassified<4, KernelClass::Normalization, RmsNormOp>(context);
    // Rotary embedding: two multiplies and an add per rotated element.
    attachElementwise<3, RotaryEmbeddingOp>(context);
    AttentionOp::attachInterface<AttentionCostModel>(*context);
    attachAll<StatisticsNormCostModel, InstanceNormOp, GroupNormOp>(context);
    // Softmax: max, subtract, exp, sum, divide (log-softmax: max, subtract,
    // exp, sum, subtract the log).
    attachClassified<5, KernelClass::Softmax, SoftmaxOp, LogSoftmaxOp>(context);

    // Reductions.
    ReduceSumOp::attachInterface<ReductionCostModel<ReduceSumOp, 1, 0>>(
        *context);
    ReduceMeanOp::attachInterface<ReductionCostModel<ReduceMeanOp, 1, 1>>(
        *context);
    ReduceMaxOp::attachInterface<ReductionCostModel<ReduceMaxOp, 1, 0>>(
        *context);
    ReduceMinOp::attachInterface<ReductionCostModel<ReduceMinOp, 1, 0>>(
        *context);
    ReduceProdOp::attachInterface<ReductionCostModel<ReduceProdOp, 1, 0>>(
        *context);
    ReduceSumSquareOp::attachInterface<
        ReductionCostModel<ReduceSumSquareOp, 2, 0>>(*context);
    ReduceL2Op::attachInterface<ReductionCostModel<ReduceL2Op, 2, 1>>(*context);
    // Selection along an axis: arg max/min compare each element once, a
    // cumulative sum adds it once.
    ArgMaxOp::attachInterface<ReductionCostModel<ArgMaxOp, 1, 0>>(*context);
    ArgMinOp::attachInterface<ReductionCostModel<ArgMinOp, 1, 0>>(*context);
    attachElementwise<1, CumSumOp>(context);
    TopKOp::attachInterface<TopKCostModel>(*context);

    // Recurrent layers.
    RNNOp::attachInterface<RNNCostModel>(*context);
    GRUOp::attachInterface<GRUCostModel>(*context);
    LSTMOp::attachInterface<LSTMCostModel>(*context);

    // Optimizer updates, per parameter element: SGD scales the gradient,
    // adds the decay, updates the buffer (with momentum) and the parameter
    // (Nesterov: one more); Adam also updates two moments and divides by a
    // root.
    SgdUpdateOp::attachInterface<SgdUpdateCostModel>(*context);
    attachElementwise<14, AdamUpdateOp>(context);
    // Gradient accumulation adds one value per element; a clear or an
    // assignment writes one.
    attachElementwise<1, AccumulateOp>(context);
    attachElementwise<0, ClearOp>(context);
    attachElementwise<0, AssignOp>(context);

    // Parameters (optimizer state among them), views and data movement.
    attachAll<ParameterCostModel, WeightOp, ConstantOp, WeightSliceOp, StateOp>(
        context);
    // Communication ops move bytes; their time on the links is the
    // collective model's (collectiveTime), which callers add per transfer.
    attachAll<DataMovementCostModel, SendOp, RecvOp, AllReduceOp, AllGatherOp,
              ReduceScatterOp, AllSliceOp, AllToAllOp, ReduceStartOp>(context);
    // Waiting for a started reduction moves nothing itself.
    attachClassified<0, KernelClass::Other, ReduceWaitOp>(context);
    attachAll<ViewCostModel, ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(
        context);
    attachAll<CopyCostModel, ExpandOp, TileOp, ConcatOp, SplitOp, PadOp,
              ConstantOfShapeOp>(context);
    TransposeOp::attachInterface<TransposeCostModel>(*context);
    ShapeOp::attachInterface<ShapeCostModel>(*context);
    // Range writes start + i * delta: one multiply-add per element.
    attachElementwise<2, RangeOp>(context);
    SliceOp::attachInterface<SliceCostModel>(*context);
    attachAll<GatherCostModel, GatherOp, GatherNDOp, GatherElementsOp>(context);
    attachAll<ScatterCostModel, ScatterNDOp, ScatterElementsOp>(context);
    // One-hot compares each output position with its index and selects on
    // or off; trilu compares each position with the diagonal and selects.
    attachElementwise<2, OneHotOp, TriluOp>(context);
    ResizeOp::attachInterface<ResizeCostModel>(*context);
  });
}
