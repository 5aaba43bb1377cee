//===- CostModel.h - time and memory of ops on a target ---------*- C++ -*-===//
//
// The analytical cost model the planner searches with:
//
//   - compute: a roofline per op, time = max(flops / (peak * compute_eff),
//     bytes / (bandwidth * memory_eff));
//   - communication: an α-β model per collective and link level, with ring
//     and tree algorithms;
//   - memory per device: weights + peak live activations + communication
//     buffers.
//
// Op work comes from `cleave::CostInterface`; device and link figures from a
// `TargetDescription`.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ANALYSIS_COST_COSTMODEL_H
#define CLEAVE_ANALYSIS_COST_COSTMODEL_H

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Analysis/Cost/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace cleave {

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

/// Choices about kernels that change an op's cost but are not properties of
/// the hardware.
struct CostOptions {
  /// Let f32 contractions run in TF32 on matrix units.
  bool allowTF32 = false;
  /// Floating-point tensors (f16, bf16, f32) are held and computed in this
  /// precision (`F32`, `BF16` or `F16`) instead of their own element type,
  /// as a mixed-precision training step computes whatever the model was
  /// exported in; unset, in their own.
  std::optional<Precision> computePrecision;
  /// Price a pointwise op whose activation operand no other op reads as
  /// fused into that operand's producer (an epilogue, as frameworks with
  /// fused kernels run bias, activation, scaling and residual adds): the
  /// operand is neither written by its producer nor read back. The planner
  /// applies it (ShardingSearch.h); a single op's cost does not change.
  /// Inference on a `cpu` device is priced so whatever this says
  /// (`pricesPointwiseFused`).
  bool fusePointwise = false;
};

/// Whether the planner prices pointwise ops on `device` as fused into their
/// producers (`CostOptions::fusePointwise`): when `options` ask, and always
/// for inference on a `cpu` device, whose programs run a chain of pointwise
/// ops as one loop and a convolution's or a matrix product's bias, residual
/// add and activation in its kernel. A `training` step keeps what its
/// backward reads (most of the forward's pointwise results) in memory and
/// its products' adds and activations as loops of their own, so it is
/// priced op by op unless `options` ask.
bool pricesPointwiseFused(const CostOptions &options,
                          const DeviceDescription &device, bool training);

/// Bytes of a statically shaped ranked tensor as `options` hold it: its
/// floating-point elements in `computePrecision` when that is set
/// (`getTensorBytes` otherwise).
int64_t getHeldTensorBytes(mlir::Type type, const CostOptions &options);

/// Time of some work under the roofline model, or, on a calibrated device,
/// under the throughput measured for its kernel class.
struct Roofline {
  /// flops / (peak * compute efficiency), in seconds; on a calibrated
  /// device, flops / the measured FLOP/s of a compute class.
  double computeTime = 0;
  /// bytes / (bandwidth * memory efficiency), in seconds; on a calibrated
  /// device, bytes / the measured bytes/s of a memory class.
  double memoryTime = 0;
  /// The fixed time of the kernel call (a calibration's
  /// `call_overhead_s`; 0 without one, and for the elementwise and
  /// activation classes, which programs fuse into loops of their own
  /// rather than call a kernel for).
  double overheadTime = 0;
  /// What the work takes longer when its data is out of the caches (a
  /// calibration's streamed rates against its resident ones), in seconds;
  /// `time()` is with the data resident. The stage that runs the work adds
  /// the share of it that its footprint makes miss
  /// (`DeviceCalibration::missFraction`).
  double missTime = 0;
  /// What a convolution's reorders between NCHW and the kernels' channel
  /// blocks take, in seconds, after its work (`getChannelBlocking`).
  double reorderTime = 0;

  double time() const {
    return std::max(computeTime, memoryTime) + overheadTime + reorderTime;
  }
  /// The time with `missFraction` of the data out of the caches.
  double time(double missFraction) const {
    return time() + missFraction * missTime;
  }
  bool isComputeBound() const { return computeTime > memoryTime; }
};

/// A matrix product's output as a GEMM library tiles it: `batch`
/// independent products of `rows` x `columns` elements.
struct MatmulOutputShape {
  double batch = 1;
  double rows = 0;
  double columns = 0;
};

/// The output of a matrix product whose result has dimensions `resultDims`
/// (possibly a device's share of them): with a batched right-hand side
/// (`batchedRhs`, rank above 2) the leading dimensions are the batch;
/// otherwise they fold into the rows, as `x @ W` runs as one GEMM.
MatmulOutputShape getMatmulOutputShape(llvm::ArrayRef<double> resultDims,
                                       bool batchedRhs);

/// The share of the device's multiprocessors that a matrix product of
/// output `shape` keeps busy, with the best tile of `device.matmulTiles`:
/// the output is cut into tiles, one multiprocessor computes one tile at a
/// time, and the last wave of tiles (and the padding of edge tiles) leaves
/// the rest idle. 1 when the device does not describe its tiles.
double getMatmulTileEfficiency(const MatmulOutputShape &shape,
                               const DeviceDescription &device);

/// Roofline time of `flops` operations at `precision` that move `bytes`
/// bytes on `device`. The planner calls this for a share of an op's work.
///
/// On a device with a calibration, the work of `kernelClass` instead takes
/// the call overhead plus its size over the throughput measured for that
/// size: `flops / rate(flops)` for a compute class, `bytes / rate(bytes)`
/// for a memory class (`DeviceCalibration::throughput`), on a map of
/// `pixels` output positions for a convolution (0: not a convolution, or
/// not known); at the resident rate, with `missTime` the difference to the
/// streamed one. A class the calibration has no table for (and `Other`)
/// keeps the roofline, plus the call overhead. Work of no FLOPs and no
/// bytes (a view) costs nothing. `reorderBytes` (read and written) of a
/// convolution's reorders take `reorderTime`, at the calibration's
/// transpose rate (the memory bandwidth without one).
Roofline getRoofline(double flops, double bytes, Precision precision,
                     const DeviceDescription &device,
                     KernelClass kernelClass = KernelClass::Other,
                     double pixels = 0, double reorderBytes = 0);

/// How a convolution meets the channel blocks of a CPU's convolution
/// kernels (`DeviceCalibration::convBlock`).
struct ChannelBlocking {
  /// The share of the kernel's work on real channels: the input and output
  /// channels over their counts padded to whole blocks (1 where the block
  /// divides both).
  double efficiency = 1;
  /// Bytes read and written to reorder the input or the output from NCHW
  /// into the blocks and back, for each of them whose channels the block
  /// does not divide: a program keeps only those that it divides blocked.
  double reorderBytes = 0;
};

/// The channel blocking of `op` on `device`: that of a 2-D dense or grouped
/// convolution large enough to run on oneDNN (CLEAVE_CONV_BLOCKED_MACS), on
/// a CPU whose calibration ran its tables in the blocked layout; none
/// otherwise.
ChannelBlocking getChannelBlocking(mlir::Operation *op,
                                   const DeviceDescription &device);

/// The work of one op and its time on one device.
struct OpCost {
  int64_t flops = 0;
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  /// Parameter bytes among the operands (included in `bytesRead`).
  int64_t parameterBytes = 0;
  /// The precision whose peak bounds the op's arithmetic.
  Precision precision = Precision::F32;
  /// The kind of kernel it runs as (`CostInterface::getKernelClass`).
  KernelClass kernelClass = KernelClass::Other;
  /// For a convolution, its output positions per image (the result's
  /// spatial dimensions multiplied); 0 for other ops.
  double pixels = 0;
  /// For a convolution on a CPU, how it meets the kernels' channel blocks.
  ChannelBlocking blocking;
  Roofline roofline;

  int64_t bytesMoved() const { return bytesRead + bytesWritten; }
  double time() const { return roofline.time(); }
};

/// A convolution's output positions per image (its result's spatial
/// dimensions multiplied) when `kernelClass` is a convolution's, else 0.
double getConvolutionPixels(mlir::Operation *op, KernelClass kernelClass);

/// The precision an op computes in: contractions (`usesMatrixUnits`) run at
/// the peak of their element type (`options.computePrecision` for a
/// floating-point one when set; f32 as TF32 when `options` allow); every
/// other op at the vector rate, which target files give as f32 (f64 for f64
/// ops). Integer ops count at the f32 rate.
Precision getComputePrecision(mlir::Operation *op,
                              const CostOptions &options = {});

/// The cost of `op` on one device of `target`. With
/// `options.computePrecision`, the bytes read and written scale as the
/// operands' and results' bytes do when held in it. Fails, with an error on
/// the op, when it does not implement `CostInterface` or an operand or result
/// is not a statically shaped ranked tensor.
mlir::FailureOr<OpCost> getOpCost(mlir::Operation *op,
                                  const TargetDescription &target,
                                  const CostOptions &options = {});

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

/// Collectives over a group of `p` devices, each message of `n` bytes:
///   - AllReduce: every device holds n bytes and ends with their sum;
///   - AllGather: every device holds n / p bytes and ends with all n;
///   - ReduceScatter: every device holds n bytes and ends with its n / p
///     slice of the sum;
///   - Broadcast: one device's n bytes reach every device;
///   - AllToAll: every device holds n bytes in p blocks and sends block j to
///     device j (the exchange of the experts of a mixture, or a switch of a
///     split from one dimension to another);
///   - SendRecv: n bytes from one device to another (p is ignored).
enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  AllToAll,
  SendRecv
};

/// How a collective moves its data.
enum class CollectiveAlgorithm {
  /// Pipelined around a ring: bandwidth-optimal, latency grows with p.
  Ring,
  /// Along a binomial tree: ceil(log2 p) steps of whole messages, best for
  /// small messages on large groups.
  Tree,
  /// One message between two devices.
  Direct,
};

llvm::StringRef stringifyCollectiveKind(CollectiveKind kind);
llvm::StringRef stringifyCollectiveAlgorithm(CollectiveAlgorithm algorithm);

/// The α-β time of `kind` with `algorithm` over `groupSize` devices on
/// `link` (α = latency, β = effective bandwidth):
///   ring all-reduce        2(p-1)/p · n/β + 2(p-1)·α
///   tree all-reduce        2·ceil(log2 p)·(α + n/β)   (reduce, then broadcast)
///   ring all-gather,
///   ring reduce-scatter    (p-1)/p · n/β + (p-1)·α
///   ring broadcast         n/β + (p-1)·α               (pipelined chain)
///   tree broadcast         ceil(log2 p)·(α + n/β)
///   ring all-to-all        (p-1)/p · n/β + (p-1)·α     (p-1 pairwise steps,
///                                                       each of n/p bytes)
///   send/recv (direct)     α + n/β
/// A group of one device costs 0. Returns +infinity for a pair that does not
/// exist (a tree all-gather or all-to-all, a ring send/recv).
double collectiveAlgorithmTime(CollectiveKind kind,
                               CollectiveAlgorithm algorithm, int64_t bytes,
                               int64_t groupSize, const LinkDescription &link);

/// The fastest algorithm for a collective and its time.
struct CollectiveCost {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  double time = 0;
};

/// The fastest algorithm for `kind` on `link`.
CollectiveCost bestCollective(CollectiveKind kind, int64_t bytes,
                              int64_t groupSize, const LinkDescription &link);

/// Time of the fastest algorithm for `kind` on the link level of `target`
/// that the group uses: inter-node when `crossesNodes`, intra-node otherwise.
/// A group that spans nodes runs at the inter-node link's speed throughout.
double collectiveTime(CollectiveKind kind, int64_t bytes, int64_t groupSize,
                      bool crossesNodes, const TargetDescription &target);

/// Time of `kind` over a group of `groupSize` devices, `perNode` of them on
/// each node it spans (`perNode` divides `groupSize`), with each link level
/// carrying its own part, as NCCL's hierarchical algorithms do. With `k =
/// perNode` and `q = groupSize / k` nodes:
///   all-reduce       reduce-scatter in the node (k, n), all-reduce across
///                    nodes (q, n / k), all-gather in the node (k, n)
///   reduce-scatter   in the node (k, n), then across nodes (q, n / k)
///   all-gather       across nodes (q, n / k), then in the node (k, n)
/// A group inside one node runs on the intra-node link; one device per node,
/// or another kind of collective, on the inter-node link throughout.
double hierarchicalCollectiveTime(CollectiveKind kind, int64_t bytes,
                                  int64_t groupSize, int64_t perNode,
                                  const TargetDescription &target);

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Bytes of the parameters `func` holds (results of ops whose `isParameter`
/// holds: weights and constants). Fails, with an error on the op, for a
/// parameter that is not statically shaped.
mlir::FailureOr<int64_t> getParameterBytes(mlir::func::FuncOp func);

/// The most activation bytes live at once while `func`'s body runs in order.
/// Every buffer (a function argument or an op result that is neither a view
/// nor a parameter) is live from its definition to its last use, through
/// views; an op's operands and results are live together while it runs;
/// returned values stay live to the end. Fails, with an error on the op, for
/// an activation that is not statically shaped.
mlir::FailureOr<int64_t> peakActivationBytes(mlir::func::FuncOp func);

/// Peak memory of one device.
struct DeviceMemory {
  int64_t weights = 0;
  int64_t activations = 0;
  int64_t communication = 0;
  /// A training step's gradients and optimizer state (with master weights).
  int64_t gradients = 0;
  int64_t optimizerState = 0;

  int64_t total() const {
    return weights + activations + communication + gradients + optimizerState;
  }
};

/// The peak memory of the device that runs `func`: its parameters, its peak
/// live activations, and `communicationBufferBytes` of buffers that its
/// collectives and transfers stage through.
mlir::FailureOr<DeviceMemory>
estimateDeviceMemory(mlir::func::FuncOp func,
                     int64_t communicationBufferBytes = 0);

} // namespace cleave

#endif // CLEAVE_ANALYSIS_COST_COSTMODEL_H
