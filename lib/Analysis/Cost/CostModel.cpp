//===- CostModel.cpp - time and memory of ops on a target -------*- C++ -*-===//
//
// Roofline time per op, α-β time per collective, and per-device memory from
// a liveness walk.
//
//===----------------------------------------------------------------------===//

#include "cleave/Analysis/Cost/CostModel.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/rt/Kernels.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

bool cleave::pricesPointwiseFused(const CostOptions &options,
                                  const DeviceDescription &device,
                                  bool training) {
  return options.fusePointwise || (device.kind == "cpu" && !training);
}

/// Seconds to reorder `bytes` (read and written) on `device`.
static double getReorderTime(double bytes, const DeviceDescription &device) {
  if (bytes <= 0)
    return 0;
  if (const std::optional<DeviceCalibration> &calibration = device.calibration;
      calibration && !calibration->table(KernelClass::Transpose).empty())
    return bytes / calibration->throughput(KernelClass::Transpose, bytes);
  return bytes / (device.memoryBandwidth * device.memoryEfficiency);
}

Roofline cleave::getRoofline(double flops, double bytes, Precision precision,
                             const DeviceDescription &device,
                             KernelClass kernelClass, double pixels,
                             double reorderBytes) {
  Roofline roofline;
  roofline.reorderTime = getReorderTime(reorderBytes, device);
  // Work that moves and computes nothing (a view, a weight) calls no
  // kernel.
  if (const std::optional<DeviceCalibration> &calibration = device.calibration;
      calibration && (flops > 0 || bytes > 0)) {
    if (!isFusedLoopKernelClass(kernelClass))
      roofline.overheadTime = calibration->callOverhead;
    bool compute = isComputeKernelClass(kernelClass);
    double size = compute ? flops : bytes;
    if (kernelClass != KernelClass::Other && size > 0 &&
        !calibration->table(kernelClass).empty()) {
      double time = size / calibration->throughput(kernelClass, size, pixels);
      double streamed =
          size / calibration->throughput(kernelClass, size, pixels,
                                         /*streamed=*/true);
      (compute ? roofline.computeTime : roofline.memoryTime) = time;
      roofline.missTime = std::max(0.0, streamed - time);
      return roofline;
    }
  }
  roofline.computeTime =
      flops / (device.peakFlops(precision) * device.computeEfficiency);
  roofline.memoryTime =
      bytes / (device.memoryBandwidth * device.memoryEfficiency);
  return roofline;
}

MatmulOutputShape cleave::getMatmulOutputShape(ArrayRef<double> resultDims,
                                               bool batchedRhs) {
  MatmulOutputShape shape;
  if (resultDims.empty())
    return shape;
  shape.columns = resultDims.back();
  shape.rows = 1;
  ArrayRef<double> leading = resultDims.drop_back();
  if (batchedRhs && !leading.empty()) {
    shape.rows = leading.back();
    leading = leading.drop_back();
    for (double dim : leading)
      shape.batch *= dim;
  } else {
    for (double dim : leading)
      shape.rows *= dim;
  }
  return shape;
}

double cleave::getMatmulTileEfficiency(const MatmulOutputShape &shape,
                                       const DeviceDescription &device) {
  if (device.multiprocessors <= 0 || device.matmulTiles.empty() ||
      shape.rows <= 0 || shape.columns <= 0 || shape.batch <= 0)
    return 1.0;
  auto slots = static_cast<double>(device.multiprocessors);
  double best = 0;
  for (auto [tileRows, tileColumns] : device.matmulTiles) {
    double rows = static_cast<double>(tileRows);
    double columns = static_cast<double>(tileColumns);
    double tiles = shape.batch * std::ceil(shape.rows / rows) *
                   std::ceil(shape.columns / columns);
    double waves = std::ceil(tiles / slots);
    best = std::max(best, shape.batch * shape.rows * shape.columns /
                              (waves * slots * rows * columns));
  }
  return std::min(1.0, best);
}

/// Whether `options` hold elements of type `element` in their compute
/// precision rather than their own.
static bool isHeldInComputePrecision(Type element, const CostOptions &options) {
  return options.computePrecision && element &&
         (element.isF16() || element.isBF16() || element.isF32());
}

int64_t cleave::getHeldTensorBytes(Type type, const CostOptions &options) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !isHeldInComputePrecision(tensor.getElementType(), options))
    return getTensorBytes(type);
  int64_t elementBytes = *options.computePrecision == Precision::F32 ? 4 : 2;
  return tensor.getNumElements() * elementBytes;
}

Precision cleave::getComputePrecision(Operation *op,
                                      const CostOptions &options) {
  Type type;
  if (op->getNumOperands() > 0)
    type = op->getOperand(0).getType();
  else if (op->getNumResults() > 0)
    type = op->getResult(0).getType();
  Type element = type ? getElementTypeOrSelf(type) : Type();
  if (element && element.isF64())
    return Precision::F64;

  auto cost = dyn_cast<CostInterface>(op);
  if (!element || !cost || !cost.usesMatrixUnits())
    return Precision::F32;
  if (isHeldInComputePrecision(element, options)) {
    if (*options.computePrecision == Precision::F32)
      return options.allowTF32 ? Precision::TF32 : Precision::F32;
    return *options.computePrecision;
  }
  if (element.isF16())
    return Precision::F16;
  if (element.isBF16())
    return Precision::BF16;
  if (element.isF32() && options.allowTF32)
    return Precision::TF32;
  return Precision::F32;
}

/// Fails, with an error on `op`, on the first operand or result that the
/// cost formulas cannot size.
static LogicalResult checkStaticTensors(Operation *op) {
  auto check = [&](Type type, StringRef kind, unsigned index) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && tensor.hasStaticShape())
      return success();
    return op->emitError() << "cost model needs statically shaped tensors; "
                           << kind << " #" << index << " has type " << type;
  };
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", index)))
      return failure();
  for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", index)))
      return failure();
  return success();
}

ChannelBlocking cleave::getChannelBlocking(Operation *op,
                                           const DeviceDescription &device) {
  ChannelBlocking blocking;
  auto conv = dyn_cast<ConvOp>(op);
  const std::optional<DeviceCalibration> &calibration = device.calibration;
  if (!conv || !calibration || calibration->convBlock <= 0)
    return blocking;
  // Depthwise ones are timed as programs run them, blocked or not; 1-D
  // ones have a table of their own.
  KernelClass kernelClass = cast<CostInterface>(op).getKernelClass();
  if (kernelClass != KernelClass::Conv &&
      kernelClass != KernelClass::ConvPointwise)
    return blocking;
  auto x = dyn_cast<RankedTensorType>(conv.getInput().getType());
  auto w = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  auto y = dyn_cast<RankedTensorType>(conv.getOutput().getType());
  if (!x || !w || !y || !x.hasStaticShape() || !w.hasStaticShape() ||
      !y.hasStaticShape() || x.getRank() != 4 || !x.getElementType().isF32())
    return blocking;
  const int64_t inChannels = x.getDimSize(1), outChannels = y.getDimSize(1);
  if (y.getNumElements() * (w.getNumElements() / w.getDimSize(0)) <
      CLEAVE_CONV_BLOCKED_MACS)
    return blocking;
  const int64_t block = calibration->convBlock;
  auto padded = [&](int64_t channels) {
    return static_cast<double>((channels + block - 1) / block * block);
  };
  // Fewer input channels than a block (an image's first convolution) take
  // oneDNN's kernels for channels-last inputs, which pad nothing.
  blocking.efficiency = (inChannels < block ? 1.0
                                            : static_cast<double>(inChannels) /
                                                  padded(inChannels)) *
                        static_cast<double>(outChannels) / padded(outChannels);
  // One input channel lies the same in either layout.
  if (inChannels % block != 0 && inChannels > 1)
    blocking.reorderBytes += 2.0 * static_cast<double>(getTensorBytes(x));
  if (outChannels % block != 0)
    blocking.reorderBytes += 2.0 * static_cast<double>(getTensorBytes(y));
  return blocking;
}

double cleave::getConvolutionPixels(Operation *op, KernelClass kernelClass) {
  bool convolution = kernelClass == KernelClass::Conv ||
                     kernelClass == KernelClass::ConvPointwise ||
                     kernelClass == KernelClass::ConvDepthwise ||
                     kernelClass == KernelClass::Conv1D;
  auto result = op->getNumResults() == 1
                    ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                    : RankedTensorType();
  if (!convolution || !result || result.getRank() < 3 ||
      !result.hasStaticShape())
    return 0;
  double pixels = 1;
  for (int64_t dim : result.getShape().drop_front(2))
    pixels *= static_cast<double>(dim);
  return pixels;
}

FailureOr<OpCost> cleave::getOpCost(Operation *op,
                                    const TargetDescription &target,
                                    const CostOptions &options) {
  auto cost = dyn_cast<CostInterface>(op);
  if (!cost)
    return op->emitError() << "no cost model for '" << op->getName() << "'";
  if (failed(checkStaticTensors(op)))
    return failure();

  OpCost result;
  result.flops = cost.getFlops();
  result.bytesRead = cost.getBytesRead();
  result.bytesWritten = cost.getBytesWritten();
  result.parameterBytes = cost.getParameterBytes();
  if (options.computePrecision) {
    // Whatever an op's formula counts of its tensors, it counts fewer bytes
    // in the same proportion as they shrink.
    auto scale = [&](int64_t bytes, TypeRange types) {
      int64_t own = 0, held = 0;
      for (Type type : types) {
        own += getTensorBytes(type);
        held += getHeldTensorBytes(type, options);
      }
      if (own == 0)
        return bytes;
      return static_cast<int64_t>(
          std::llround(static_cast<double>(bytes) * static_cast<double>(held) /
                       static_cast<double>(own)));
    };
    result.bytesRead = scale(result.bytesRead, op->getOperandTypes());
    result.bytesWritten = scale(result.bytesWritten, op->getResultTypes());
    result.parameterBytes = scale(result.parameterBytes, op->getOperandTypes());
  }
  result.precision = getComputePrecision(op, options);
  result.kernelClass = cost.getKernelClass();
  result.pixels = getConvolutionPixels(op, result.kernelClass);
  result.blocking = getChannelBlocking(op, target.device);
  result.roofline = getRoofline(
      static_cast<double>(result.flops) / result.blocking.efficiency,
      static_cast<double>(result.bytesMoved()), result.precision, target.device,
      result.kernelClass, result.pixels, result.blocking.reorderBytes);
  return result;
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

StringRef cleave::stringifyCollectiveKind(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::Broadcast:
    return "broadcast";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::SendRecv:
    return "send_recv";
  }
  return "unknown";
}

StringRef cleave::stringifyCollectiveAlgorithm(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
  case CollectiveAlgorithm::Ring:
    return "ring";
  case CollectiveAlgorithm::Tree:
    return "tree";
  case CollectiveAlgorithm::Direct:
    return "direct";
  }
  return "unknown";
}

double cleave::collectiveAlgorithmTime(CollectiveKind kind,
                                       CollectiveAlgorithm algorithm,
                                       int64_t bytes, int64_t groupSize,
                                       const LinkDescription &link) {
  constexpr double kUnavailable = std::numeric_limits<double>::infinity();
  bool pointToPoint = kind == CollectiveKind::SendRecv;
  if (pointToPoint != (algorithm == CollectiveAlgorithm::Direct))
    return kUnavailable;
  if (bytes <= 0 || (!pointToPoint && groupSize <= 1))
    return 0;

  double n = static_cast<double>(bytes);
  double p = static_cast<double>(groupSize);
  double alpha = link.latency;
  double beta = link.effectiveBandwidth();
  double steps =
      pointToPoint ? 1 : static_cast<double>(llvm::Log2_64_Ceil(groupSize));

  switch (kind) {
  case CollectiveKind::SendRecv:
    return alpha + n / beta;
  case CollectiveKind::AllReduce:
    if (algorithm == CollectiveAlgorithm::Ring)
      return 2 * (p - 1) / p * n / beta + 2 * (p - 1) * alpha;
    return 2 * steps * (alpha + n / beta);
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
    // A tree would move whole messages at every level; only the ring is
    // modelled, as NCCL does.
    if (algorithm == CollectiveAlgorithm::Ring)
      return (p - 1) / p * n / beta + (p - 1) * alpha;
    return kUnavailable;
  case CollectiveKind::AllToAll:
    // Each device keeps its own block and exchanges the other p-1, one
    // partner per step: (p-1)/p of its bytes leave it, as in a ring
    // all-gather, with no tree to shorten the latency term.
    if (algorithm == CollectiveAlgorithm::Ring)
      return (p - 1) / p * n / beta + (p - 1) * alpha;
    return kUnavailable;
  case CollectiveKind::Broadcast:
    if (algorithm == CollectiveAlgorithm::Ring)
      return n / beta + (p - 1) * alpha;
    return steps * (alpha + n / beta);
  }
  return kUnavailable;
}

CollectiveCost cleave::bestCollective(CollectiveKind kind, int64_t bytes,
                                      int64_t groupSize,
                                      const LinkDescription &link) {
  CollectiveCost best;
  best.time = std::numeric_limits<double>::infinity();
  for (CollectiveAlgorithm algorithm :
       {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
        CollectiveAlgorithm::Direct}) {
    double time =
        collectiveAlgorithmTime(kind, algorithm, bytes, groupSize, link);
    // Strictly faster only, so that ties go to the ring.
    if (time < best.time) {
      best.algorithm = algorithm;
      best.time = time;
    }
  }
  return best;
}

double cleave::collectiveTime(CollectiveKind kind, int64_t bytes,
                              int64_t groupSize, bool crossesNodes,
                              const TargetDescription &target) {
  return bestCollective(kind, bytes, groupSize, target.link(crossesNodes)).time;
}

double cleave::hierarchicalCollectiveTime(CollectiveKind kind, int64_t bytes,
                                          int64_t groupSize, int64_t perNode,
                                          const TargetDescription &target) {
  if (perNode >= groupSize)
    return collectiveTime(kind, bytes, groupSize, false, target);
  bool layered = kind == CollectiveKind::AllReduce ||
                 kind == CollectiveKind::ReduceScatter ||
                 kind == CollectiveKind::AllGather;
  if (perNode <= 1 || !layered || groupSize % perNode != 0)
    return collectiveTime(kind, bytes, groupSize, true, target);
  int64_t nodes = groupSize / perNode;
  int64_t slice = (bytes + perNode - 1) / perNode;
  auto inNode = [&](CollectiveKind part) {
    return collectiveTime(part, bytes, perNode, false, target);
  };
  auto acrossNodes = [&](CollectiveKind part) {
    return collectiveTime(part, slice, nodes, true, target);
  };
  switch (kind) {
  case CollectiveKind::AllReduce:
    return inNode(CollectiveKind::ReduceScatter) +
           acrossNodes(CollectiveKind::AllReduce) +
           inNode(CollectiveKind::AllGather);
  case CollectiveKind::ReduceScatter:
    return inNode(CollectiveKind::ReduceScatter) +
           acrossNodes(CollectiveKind::ReduceScatter);
  default:
    return acrossNodes(CollectiveKind::AllGather) +
           inNode(CollectiveKind::AllGather);
  }
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

static bool isParameterOp(Operation *op) {
  auto cost = dyn_cast<CostInterface>(op);
  return cost && cost.isParameter();
}

static bool isViewOp(Operation *op) {
  auto cost = dyn_cast<CostInterface>(op);
  return cost && cost.isView();
}

/// Bytes of a buffer's value; fails, with an error on `owner`, when the
/// value has no static size.
static FailureOr<int64_t> bufferBytes(Value value, Operation *owner) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  if (!tensor || !tensor.hasStaticShape())
    return owner->emitError()
           << "memory estimate needs statically shaped tensors; a value has "
              "type "
           << value.getType();
  return getTensorBytes(tensor);
}

FailureOr<int64_t> cleave::getParameterBytes(func::FuncOp func) {
  int64_t total = 0;
  WalkResult walk = func.walk([&](Operation *op) {
    if (!isParameterOp(op))
      return WalkResult::advance();
    for (Value result : op->getResults()) {
      FailureOr<int64_t> bytes = bufferBytes(result, op);
      if (failed(bytes))
        return WalkResult::interrupt();
      total += *bytes;
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return total;
}

namespace {
/// An activation buffer: live over the steps [firstStep, lastStep].
struct LiveRange {
  int64_t bytes = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};
} // namespace

FailureOr<int64_t> cleave::peakActivationBytes(func::FuncOp func) {
  if (func.isExternal())
    return 0;
  Block &body = func.getBody().front();

  // Buffers in order of definition; arguments are live from the first step.
  llvm::MapVector<Value, LiveRange> buffers;
  for (BlockArgument argument : body.getArguments()) {
    FailureOr<int64_t> bytes = bufferBytes(argument, func);
    if (failed(bytes))
      return failure();
    buffers[argument] = {*bytes, 0, 0};
  }

  int64_t step = 0;
  for (Operation &op : body) {
    // A use anywhere inside `op` (its regions included) keeps the buffer
    // live while `op` runs.
    op.walk([&](Operation *user) {
      for (Value operand : user->getOperands()) {
        auto it = buffers.find(getBufferRoot(operand));
        if (it != buffers.end())
          it->second.lastStep = std::max(it->second.lastStep, step);
      }
    });
    if (!isParameterOp(&op) && !isViewOp(&op)) {
      for (Value result : op.getResults()) {
        FailureOr<int64_t> bytes = bufferBytes(result, &op);
        if (failed(bytes))
          return failure();
        buffers[result] = {*bytes, step, step};
      }
    }
    ++step;
  }

  // Sweep: a buffer adds its bytes at its first step and drops them after
  // its last.
  SmallVector<int64_t> delta(step + 1, 0);
  for (const auto &entry : buffers) {
    const LiveRange &range = entry.second;
    delta[range.firstStep] += range.bytes;
    delta[range.lastStep + 1] -= range.bytes;
  }
  int64_t live = 0, peak = 0;
  for (int64_t change : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return peak;
}

FailureOr<DeviceMemory>
cleave::estimateDeviceMemory(func::FuncOp func,
                             int64_t communicationBufferBytes) {
  FailureOr<int64_t> weights = getParameterBytes(func);
  if (failed(weights))
    return failure();
  FailureOr<int64_t> activations = peakActivationBytes(func);
  if (failed(activations))
    return failure();
  DeviceMemory memory;
  memory.weights = *weights;
  memory.activations = *activations;
  memory.communication = communicationBufferBytes;
  return memory;
}
