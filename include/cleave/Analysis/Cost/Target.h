//===- Target.h - cluster descriptions loaded from JSON ---------*- C++ -*-===//
//
// A target describes the machines a model is partitioned for: one kind of
// device (its peak arithmetic rates, memory and efficiency), how many devices
// a node holds and how many there are, and the link of each level of the
// interconnect. Targets are data: presets ship as targets/NAME.json and users
// write their own; docs/targets.md documents the schema.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ANALYSIS_COST_TARGET_H
#define CLEAVE_ANALYSIS_COST_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cleave {

/// Arithmetic precisions a device's peak rate is quoted for. `TF32` is the
/// tensor-core format that f32 matrix products may use; it is never an
/// element type in the IR.
enum class Precision { F64, F32, TF32, F16, BF16 };

/// Number of `Precision` values.
inline constexpr unsigned kNumPrecisions = 5;

/// The spelling of `precision` in target files ("f64", "f32", "tf32", "f16",
/// "bf16").
llvm::StringRef stringifyPrecision(Precision precision);

/// Parses a target-file spelling of a precision.
std::optional<Precision> parsePrecision(llvm::StringRef name);

/// The instruction sets a cpu device may name: the x86-64 levels, and
/// `native` (whatever the compiling machine has).
inline constexpr llvm::StringLiteral kCpuIsas[] = {
    "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "native"};

/// The kinds of kernel a calibration measures separately
/// (`CostInterface::getKernelClass`). Contractions are priced by the FLOPs
/// of a call, the others by the bytes it moves.
enum class KernelClass {
  /// Matrix products of many rows (`x @ W`, batched products, attention).
  Matmul,
  /// Matrix products of a few rows (batch-1 inference, decode steps).
  MatmulSkinny,
  /// Dense convolutions of two or more spatial dimensions with a window
  /// larger than one element.
  Conv,
  /// Dense 1x1 (pointwise) convolutions.
  ConvPointwise,
  /// Depthwise convolutions (one input channel per group).
  ConvDepthwise,
  /// Convolutions of one spatial dimension.
  Conv1D,
  /// Recurrent layers (RNN, GRU, LSTM): a few rows times the recurrent
  /// weights and the gates' functions, once per time step.
  Recurrent,
  /// Fused attention: scores, softmax and the weighted values, by blocks
  /// of query rows.
  Attention,
  /// Windowed pools (max, average): one comparison or add per window
  /// element of each output.
  Pool,
  /// Byte copies: concatenation, slices, gathers.
  Copy,
  /// Copies that permute dimensions (transpose).
  Transpose,
  /// Pointwise arithmetic (add, multiply, ...).
  Elementwise,
  /// Pointwise functions that call vector math (GELU, SiLU, exp, tanh).
  Activation,
  /// Softmax and log-softmax.
  Softmax,
  /// Layer, RMS, batch, instance and group normalisation.
  Normalization,
  /// Everything else: priced by the roofline even on a calibrated device.
  Other,
};

/// Number of `KernelClass` values.
inline constexpr unsigned kNumKernelClasses = 16;

/// The name of `kernelClass` in target files ("matmul", "conv_1d", ...;
/// "other" for `Other`, which no table names).
llvm::StringRef stringifyKernelClass(KernelClass kernelClass);

/// Whether `kernelClass` is priced by its FLOPs (contractions) rather than
/// its bytes.
bool isComputeKernelClass(KernelClass kernelClass);

/// Whether ops of `kernelClass` run as the program's own loops (fused
/// with their neighbours) rather than as calls of library kernels:
/// `Elementwise` and `Activation`.
bool isFusedLoopKernelClass(KernelClass kernelClass);

/// One measured point of a calibration table: a call of `size` FLOPs
/// (compute classes) or bytes (memory classes) ran at `perSecond`.
struct ThroughputSample {
  double size = 0;
  /// With the call's data in the cache, as its last call left it.
  double perSecond = 0;
  /// With its data out of the private caches; 0 where not measured (the
  /// resident rate stands for both).
  double streamedPerSecond = 0;
  /// The output positions per image of the convolution measured (its
  /// output's spatial dimensions multiplied); 0 in a table that does not
  /// give them.
  double pixels = 0;
};

/// What `cleave calibrate` measured on a machine: the throughput each
/// kernel class reaches by problem size, and the fixed time of a call.
struct DeviceCalibration {
  /// The kernel threads of the rank that was measured.
  int64_t threads = 1;
  /// Seconds every kernel call costs besides its work.
  double callOverhead = 0;
  /// The private caches of the measured threads, in bytes: how much of a
  /// stage's weights and activations stays in them from one step to the
  /// next. 0 where the file does not say (every call priced resident).
  int64_t cacheBytes = 0;
  /// The channel block (8 or 16) of the kernels that ran the convolution
  /// tables: those of channels it divides ran in that blocked layout, as
  /// programs hold their activations. 0 where the file does not say (an
  /// older calibration, whose dense and pointwise samples ran in NCHW).
  int64_t convBlock = 0;
  /// Per `KernelClass`, samples by ascending size; empty where the file
  /// gives none (the class is priced by the roofline).
  std::array<std::vector<ThroughputSample>, kNumKernelClasses> tables;

  const std::vector<ThroughputSample> &table(KernelClass kernelClass) const {
    return tables[static_cast<unsigned>(kernelClass)];
  }

  /// The throughput of a call of `size`: interpolated linearly in
  /// log(size) against log(rate) between the samples around it, and the
  /// nearest sample's rate outside them. 0 when the class has no table.
  /// A table whose samples give `pixels` is a row of samples per map size:
  /// the rate is interpolated so in the rows of the map sizes around
  /// `pixels` (the nearest row outside them), then between the two,
  /// linearly in log(pixels); without `pixels` (0), in the largest map's.
  /// `streamed` reads the rates measured with the data out of the caches
  /// (the resident ones where a sample has none).
  double throughput(KernelClass kernelClass, double size, double pixels = 0,
                    bool streamed = false) const;

  /// `getCacheMissFraction` of these caches.
  double missFraction(double footprintBytes) const;
};

/// The share of a stage's data that is not in caches of `cacheBytes` when
/// its next step reads it, the stage holding `footprintBytes` of weights
/// and activations: 0 while they fit (or without caches, 0 bytes), then
/// 1 - cacheBytes / footprintBytes.
double getCacheMissFraction(int64_t cacheBytes, double footprintBytes);

/// One device (a GPU, or a CPU core running one rank).
struct DeviceDescription {
  std::string name;
  /// What code runs on it: "cpu" (host C++) or "cuda" (CUDA C++); empty when
  /// the file does not say (planning does not need it, compiling does).
  std::string kind;
  /// For `cpu` devices, the x86-64 instruction set the programs are built
  /// for (`-march`): one of `kCpuIsas`. Empty when the file does not say,
  /// which means `native` (the machine that compiles).
  std::string isa;
  /// Peak dense FLOP/s per precision; 0 where the file gives none (see
  /// `peakFlops`).
  std::array<double, kNumPrecisions> peakFlopsPerSecond = {};
  /// Memory capacity in bytes.
  int64_t memoryBytes = 0;
  /// Peak memory bandwidth in bytes/s.
  double memoryBandwidth = 0;
  /// Fraction of the peak arithmetic rate that kernels reach, in (0, 1].
  double computeEfficiency = 1;
  /// Fraction of the peak memory bandwidth that kernels reach, in (0, 1].
  double memoryEfficiency = 1;
  /// Streaming multiprocessors (or compute units) that run a matrix
  /// product's output tiles side by side; 0 when the file does not say, and
  /// then no shape effects are modelled (`getMatmulTileEfficiency`).
  int64_t multiprocessors = 0;
  /// Output tile shapes (rows, columns) the matrix library picks from.
  std::vector<std::pair<int64_t, int64_t>> matmulTiles;
  /// Measured throughput by kernel class (the file's `calibration`); when
  /// set, the cost model prices classified ops from it instead of the
  /// efficiencies.
  std::optional<DeviceCalibration> calibration;

  /// The peak FLOP/s for `precision`. A precision the file leaves out runs at
  /// the f32 rate (a CPU without bf16 arithmetic converts to f32).
  double peakFlops(Precision precision) const;

  /// Sets the peak FLOP/s for `precision`; 0 makes it fall back to f32.
  void setPeakFlops(Precision precision, double flopsPerSecond) {
    peakFlopsPerSecond[static_cast<unsigned>(precision)] = flopsPerSecond;
  }
};

/// One level of the interconnect, as seen by one device.
struct LinkDescription {
  std::string name;
  /// Bandwidth per device and direction, in bytes/s.
  double bandwidth = 0;
  /// Latency of one message (the α of the α-β model), in seconds.
  double latency = 0;
  /// Fraction of `bandwidth` that collectives reach, in (0, 1].
  double efficiency = 1;

  /// The bandwidth collectives reach: `bandwidth * efficiency`.
  double effectiveBandwidth() const { return bandwidth * efficiency; }
};

/// A cluster: `numDevices` identical devices, `devicesPerNode` to a node.
/// Devices are numbered node by node, so devices `[k * devicesPerNode,
/// (k + 1) * devicesPerNode)` share node `k`.
struct TargetDescription {
  /// The target's name (`name` in the file).
  std::string name;
  std::string description;
  DeviceDescription device;
  int64_t numDevices = 1;
  int64_t devicesPerNode = 1;
  /// Links between devices of one node (NVLink/NVSwitch, shared memory).
  LinkDescription intraNode;
  /// Links between nodes (InfiniBand, Ethernet).
  LinkDescription interNode;

  /// Number of nodes the devices occupy.
  int64_t numNodes() const {
    return (numDevices + devicesPerNode - 1) / devicesPerNode;
  }

  /// The link a collective over a group uses: inter-node when the group spans
  /// nodes.
  const LinkDescription &link(bool crossesNodes) const {
    return crossesNodes ? interNode : intraNode;
  }

  /// Whether a group of `groupSize` devices `d, d + stride, d + 2 * stride,
  /// ...` starting on a node boundary spans more than one node.
  bool groupCrossesNodes(int64_t groupSize, int64_t stride = 1) const {
    return (groupSize - 1) * stride >= devicesPerNode;
  }
};

/// How `loadTarget` finds a target and how it resizes the cluster.
struct TargetLoadOptions {
  /// Directory that holds the preset files: a bare name NAME resolves to
  /// `targetsDirectory/NAME.json`. Tools pass their install location
  /// (`defaultTargetsDirectory()`).
  std::string targetsDirectory;
  /// Total number of devices, replacing `nodes.count * nodes.devices_per_node`
  /// of the file.
  std::optional<int64_t> numDevices;
  /// Devices per node, replacing `nodes.devices_per_node` of the file.
  std::optional<int64_t> devicesPerNode;
};

/// The file `loadTarget` reads for `nameOrPath`: the path itself, or the
/// preset `options.targetsDirectory/NAME.json`. Fails, saying why, for an
/// unknown preset.
llvm::Expected<std::string> resolveTargetPath(llvm::StringRef nameOrPath,
                                              const TargetLoadOptions &options);

/// Loads a target. `nameOrPath` is a path when it contains a path separator
/// or ends in `.json`, and a preset name otherwise. Errors name the file, and
/// for a malformed file the field (`h100.json: devices.memory_bytes: expected
/// a positive number, got 0`).
llvm::Expected<TargetDescription> loadTarget(llvm::StringRef nameOrPath,
                                             const TargetLoadOptions &options);

/// Parses the text of a target file; `fileName` prefixes every error.
/// Overrides in `options` apply; `options.targetsDirectory` is unused.
llvm::Expected<TargetDescription>
parseTarget(llvm::StringRef text, llvm::StringRef fileName,
            const TargetLoadOptions &options = {});

/// `share/cleave/targets` next to the `bin/` directory of the running
/// executable: where the build and `cmake --install` put the presets.
std::string defaultTargetsDirectory();

} // namespace cleave

#endif // CLEAVE_ANALYSIS_COST_TARGET_H
