//===- Calibrate.h - the CPU kernels timed ---------------------*- C++ -*-===//
//
// `cleave calibrate` times the CPU kernels a bundle's programs call (the
// cleave_cpu_* entry points, and loops shaped like the programs' fused
// elementwise loops) on this machine, at a given thread count, and reports
// the throughput each kind of kernel reaches by problem size. The compiler
// writes the result into a target file (docs/targets.md, `calibration`);
// the runtime only measures.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CALIBRATE_H
#define CLEAVE_RT_CALIBRATE_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cleave::rt {

/// How long and on how many threads to measure.
struct CalibrationOptions {
  /// Kernel threads; 0: all cores, as `cleave run` gives one rank.
  int threads = 0;
  /// A few seconds in all (fewer, smaller problems, shorter timings), for
  /// tests; otherwise about a minute at most.
  bool quick = false;
  /// The instruction set to measure the kernels at ("x86-64", "x86-64-v2",
  /// "x86-64-v3", "x86-64-v4"), as a bundle of that `cpu_isa` runs them;
  /// empty: the highest level this CPU has.
  std::string cpuIsa;
};

/// The x86-64 levels by number, 1 ("x86-64") to 4 ("x86-64-v4").
const char *cpuLevelName(int level);

/// The highest x86-64 level this CPU has (1 to 4).
int highestCpuLevel();

/// The throughput one call of a kernel reached on a problem of `size`
/// (FLOPs for a compute class, bytes moved for a memory class): `size`
/// divided by the median time of a call less the call overhead.
struct ThroughputPoint {
  double size = 0;
  /// With the problem's data in the cache, as its last call left it.
  double perSecond = 0;
  /// With its data out of the threads' private caches (CpuCalibration::
  /// cacheBytes); 0 where only the first was measured.
  double streamedPerSecond = 0;
  /// What was run, for people ("512x512x512").
  std::string shape;
  /// For a convolution, its output positions per image; 0 otherwise.
  double pixels = 0;
};

/// The measured points of one kernel class, sizes ascending (with
/// `pixels`, by map size, then size).
struct ThroughputTable {
  /// The class's name in target files ("matmul", "copy", ...).
  std::string name;
  /// True when sizes are FLOPs (rates FLOP/s), false for bytes (bytes/s).
  bool compute = true;
  std::vector<ThroughputPoint> points;
};

/// Everything `calibrateCpu` measured.
struct CpuCalibration {
  int threads = 1;
  /// The x86-64 level of the kernels that ran (1 to 4): the highest the
  /// runtime has kernels for at or below the level asked for.
  int cpuLevel = 1;
  /// The level asked for (CalibrationOptions::cpuIsa, or the CPU's own),
  /// which bundles compiled for the calibrated target are built for.
  std::string cpuIsa;
  /// The fixed time of a call of a tiny kernel, in seconds.
  double callOverheadSeconds = 0;
  /// The private cache (level 2) of the cores the threads run on, all
  /// together: what a program keeps of its data from one call to the next.
  int64_t cacheBytes = 0;
  /// The channel block of oneDNN's kernels at `cpuLevel` (16 at level 4,
  /// else 8): the convolutions of the tables whose channels it divides
  /// ran on activations in that block, as a program holds them.
  int64_t convBlock = 0;
  std::vector<ThroughputTable> tables;
  /// Wall time the measurement took, in seconds.
  double elapsedSeconds = 0;
  /// The reference problem (`referenceShape`, `referenceFlops` FLOPs), a
  /// fixed matrix product timed before every pass over the tables and
  /// after the last: its rates (FLOP/s) in that order. A machine whose
  /// speed moved while it was measured shows it here.
  std::string referenceShape;
  double referenceFlops = 0;
  std::vector<double> referenceRates;

  /// How far the reference's rate moved: (fastest - slowest) / slowest;
  /// 0 without readings.
  double drift() const;
};

/// Times the kernels. `progress`, when set, is told the name of each table
/// as its measurement starts. Returns false with `error` set when the
/// kernels cannot run (a kernel fails, memory runs out).
bool calibrateCpu(
    const CalibrationOptions &options, CpuCalibration &result,
    std::string &error,
    const std::function<void(const std::string &)> &progress = nullptr);

} // namespace cleave::rt

#endif // CLEAVE_RT_CALIBRATE_H
