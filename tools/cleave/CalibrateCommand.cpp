//===- CalibrateCommand.cpp - the `cleave calibrate` subcommand -----------===//
//
// The runtime measures (cleave::rt::calibrateCpu); this file checks the
// options, turns the measurements into a target file and checks that file
// with the same reader `cleave plan` uses before it writes it.
//
//===----------------------------------------------------------------------===//

#include "CalibrateCommand.h"

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/rt/Calibrate.h"
#include "cleave/rt/RunCommand.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <cmath>

using namespace cleave;
namespace json = llvm::json;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cleave calibrate") << message << "\n";
  return 1;
}

/// `value` to four significant digits: the timings vary more than that
/// from run to run, and the file stays readable.
static double roundFigure(double value) {
  if (value <= 0)
    return value;
  double scale = std::pow(10.0, 3 - std::floor(std::log10(value)));
  return std::round(value * scale) / scale;
}

/// The best rate a table reached.
static double bestRate(const rt::ThroughputTable &table) {
  double best = 0;
  for (const rt::ThroughputPoint &point : table.points)
    best = std::max(best, point.perSecond);
  return best;
}

static const rt::ThroughputTable *findTable(const rt::CpuCalibration &result,
                                            llvm::StringRef name) {
  for (const rt::ThroughputTable &table : result.tables)
    if (table.name == name)
      return &table;
  return nullptr;
}

/// The `calibration` object of the target file (docs/targets.md).
static json::Object describeCalibration(const rt::CpuCalibration &result,
                                        bool quick) {
  json::Object compute, memory;
  for (const rt::ThroughputTable &table : result.tables) {
    llvm::StringRef unit = table.compute ? "flops" : "bytes";
    std::string rateKey = (unit + "_per_s").str();
    json::Array samples;
    for (const rt::ThroughputPoint &point : table.points) {
      json::Object sample{{unit, roundFigure(point.size)},
                          {rateKey, roundFigure(point.perSecond)},
                          {"shape", point.shape}};
      if (point.streamedPerSecond > 0)
        sample["streamed_" + rateKey] = roundFigure(point.streamedPerSecond);
      if (point.pixels > 0)
        sample["pixels"] = point.pixels;
      samples.push_back(std::move(sample));
    }
    (table.compute ? compute : memory)[table.name] = std::move(samples);
  }
  std::string description = llvm::formatv(
      "cleave calibrate{0}: {1} kernel thread{2}, {3} (x86-64 level {4} "
      "kernels), {5:f1} s",
      quick ? " --quick" : "", result.threads, result.threads == 1 ? "" : "s",
      result.cpuIsa, result.cpuLevel, result.elapsedSeconds);
  json::Array rates;
  for (double rate : result.referenceRates)
    rates.push_back(roundFigure(rate));
  return json::Object{
      {"description", description},
      {"threads", result.threads},
      {"call_overhead_s", roundFigure(result.callOverheadSeconds)},
      {"cache_bytes", result.cacheBytes},
      {"conv_block", result.convBlock},
      {"compute", std::move(compute)},
      {"memory", std::move(memory)},
      {"stability", json::Object{{"reference", result.referenceShape},
                                 {"flops", result.referenceFlops},
                                 {"flops_per_s", std::move(rates)},
                                 {"drift", roundFigure(result.drift())}}},
  };
}

/// Replaces the device's rates in `devices` with measured ones: the f32
/// peak stays the datasheet's (raised if a GEMM beat it), the compute
/// efficiency becomes the best GEMM rate over it; the memory bandwidth
/// becomes the copy rate of the largest (out-of-cache) copy, reached at an
/// efficiency of 1. Other precisions keep their ratio to f32.
static void replaceDeviceFigures(json::Object &devices,
                                 const rt::CpuCalibration &result) {
  // Bundles built for the target run the kernels that were measured.
  devices["isa"] = result.cpuIsa;
  json::Object *peaks = devices.getObject("peak_flops_per_s");
  const rt::ThroughputTable *matmul = findTable(result, "matmul");
  if (peaks && matmul && !matmul->points.empty()) {
    double peak = peaks->getNumber("f32").value_or(0);
    double best = bestRate(*matmul);
    if (best > peak) {
      for (auto &entry : *peaks)
        if (std::optional<double> rate = entry.second.getAsNumber())
          entry.second = roundFigure(*rate * best / peak);
      peak = best;
    }
    devices["compute_efficiency"] = roundFigure(best / peak);
  }
  const rt::ThroughputTable *copy = findTable(result, "copy");
  if (copy && !copy->points.empty()) {
    devices["memory_bandwidth_bytes_per_s"] =
        roundFigure(copy->points.back().perSecond);
    devices["memory_efficiency"] = 1.0;
  }
}

/// The reference's rates through the calibration, and how far they moved.
static std::string describeDrift(const rt::CpuCalibration &result) {
  std::string rates;
  for (double rate : result.referenceRates)
    rates += llvm::formatv("{0}{1:f1}", rates.empty() ? "" : ", ", rate * 1e-9);
  return llvm::formatv("{0} ran at {1} GFLOP/s before each pass and after "
                       "the last: the machine's speed moved by {2:f1}%",
                       result.referenceShape, rates, result.drift() * 100);
}

static void printSummary(const rt::CpuCalibration &result,
                         llvm::raw_ostream &os) {
  os << llvm::formatv("calibrated {0} kernel thread(s), {1} (x86-64 level "
                      "{2} kernels), in {3:f1} s; call overhead {4:f2} us; "
                      "private caches {5} KiB\n",
                      result.threads, result.cpuIsa, result.cpuLevel,
                      result.elapsedSeconds, result.callOverheadSeconds * 1e6,
                      result.cacheBytes / 1024);
  os << llvm::formatv("{0,-15} {1,-18} {2,12} {3,14} {4,14}\n", "class",
                      "shape", "size", "rate resident", "streamed");
  auto rate = [](double perSecond, bool compute) -> std::string {
    if (perSecond <= 0)
      return "-";
    return llvm::formatv("{0:f2} {1}", perSecond * 1e-9,
                         compute ? "GFLOP/s" : "GB/s");
  };
  for (const rt::ThroughputTable &table : result.tables)
    for (const rt::ThroughputPoint &point : table.points)
      os << llvm::formatv(
          "{0,-15} {1,-18} {2,12} {3,14} {4,14}\n", table.name, point.shape,
          llvm::formatv("{0:e2} {1}", point.size, table.compute ? "FLOP" : "B")
              .str(),
          rate(point.perSecond, table.compute),
          rate(point.streamedPerSecond, table.compute));
}

/// Fails unless `path` can be written: an existing file that is writable,
/// or a new one in a writable directory; "-" is standard output.
static llvm::Error checkWritable(llvm::StringRef path) {
  if (path == "-")
    return llvm::Error::success();
  namespace fs = llvm::sys::fs;
  if (fs::exists(path))
    return llvm::errorCodeToError(fs::access(path, fs::AccessMode::Write));
  llvm::StringRef directory = llvm::sys::path::parent_path(path);
  if (directory.empty())
    directory = ".";
  if (!fs::is_directory(directory))
    return llvm::createStringError(
        std::make_error_code(std::errc::no_such_file_or_directory),
        "no directory '" + directory.str() + "'");
  return llvm::errorCodeToError(fs::access(directory, fs::AccessMode::Write));
}

/// `value` as a person would write it: 0, 12.5, 1e-05.
static std::string shortFigure(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// Drift (%) of the reference problem above which a calibration warns.
static constexpr double kDriftWarning = 10;

int cleave::runCalibrateCommand(CalibrateCommand &command) {
  if (command.maxDrift.getNumOccurrences() && command.maxDrift < 0)
    return fail("--max-drift must be a percentage of 0 or more, got " +
                shortFigure(command.maxDrift));
  if (command.threads < 0)
    return fail("--threads must be 0 (all cores) or a positive integer, "
                "got " +
                llvm::Twine(command.threads.getValue()));
  rt::CalibrationOptions options;
  if (command.march.getNumOccurrences()) {
    int level = 1;
    while (level <= 4 && command.march != rt::cpuLevelName(level))
      ++level;
    if (level > 4)
      return fail("--march: must be one of x86-64, x86-64-v2, x86-64-v3 or "
                  "x86-64-v4, got \"" +
                  command.march + "\"");
    if (level > rt::highestCpuLevel())
      return fail("--march " + command.march +
                  ": this CPU does not have that instruction set (its "
                  "highest is " +
                  rt::cpuLevelName(rt::highestCpuLevel()) + ")");
    options.cpuIsa = command.march;
  }
  TargetLoadOptions loadOptions;
  loadOptions.targetsDirectory = command.targetsDir.empty()
                                     ? defaultTargetsDirectory()
                                     : command.targetsDir.getValue();
  llvm::Expected<std::string> path =
      resolveTargetPath(command.target, loadOptions);
  if (!path)
    return fail("--target: " + llvm::toString(path.takeError()));
  llvm::Expected<TargetDescription> target = loadTarget(*path, loadOptions);
  if (!target)
    return fail("--target: " + llvm::toString(target.takeError()));
  if (target->device.kind != "cpu")
    return fail("--target " + command.target +
                ": calibrate measures cpu devices; this target's devices "
                "are " +
                (target->device.kind.empty()
                     ? llvm::Twine("of no kind (devices.kind)")
                     : llvm::Twine("\"") + target->device.kind + "\""));

  // Check the output before measuring, so that a path that cannot be
  // written fails at once rather than after a minute, but write it only at
  // the end (to a temporary file renamed over it): a calibration that fails
  // leaves the file it was to replace as it was.
  std::string error;
  if (llvm::Error unwritable = checkWritable(command.output))
    return fail("-o '" + command.output +
                "': " + llvm::toString(std::move(unwritable)));

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(*path, /*IsText=*/true);
  if (!text)
    return fail("--target: cannot read '" + *path +
                "': " + text.getError().message());
  llvm::Expected<json::Value> preset = json::parse((*text)->getBuffer());
  if (!preset)
    return fail("--target: " + llvm::toString(preset.takeError()));

  // The kernels measured are those `cleave run` runs: the same OpenMP
  // waits and OpenBLAS kernels.
  rt::execWithRuntimeSettings(command.threads);
  options.threads = command.threads;
  options.quick = command.quick;
  rt::CpuCalibration result;
  if (!rt::calibrateCpu(options, result, error, [](const std::string &name) {
        llvm::errs() << "cleave calibrate: measuring " << name << "\n";
      }))
    return fail(error);
  // A machine whose speed moved while it was measured gives tables that
  // disagree with each other and with the programs later run on it.
  const double drift = result.drift() * 100;
  if (command.maxDrift >= 0 && drift > command.maxDrift)
    return fail(describeDrift(result) + ", more than --max-drift " +
                shortFigure(command.maxDrift) +
                "%; nothing written (measure on a quieter machine, or allow "
                "more)");
  if (drift > kDriftWarning)
    llvm::WithColor::warning(llvm::errs(), "cleave calibrate")
        << describeDrift(result)
        << "; the tables are less trustworthy than that (--max-drift makes "
           "this an error)\n";

  json::Object &root = *preset->getAsObject();
  replaceDeviceFigures(*root.getObject("devices"), result);
  root["calibration"] = describeCalibration(result, command.quick);
  std::string written = llvm::formatv("{0:2}", json::Value(std::move(root)));
  written += "\n";
  // The file must read back as a target: the same check `cleave plan` makes.
  if (llvm::Expected<TargetDescription> check =
          parseTarget(written, command.output);
      !check)
    return fail("the calibrated target does not read back: " +
                llvm::toString(check.takeError()));

  if (llvm::Error failed =
          llvm::writeToOutput(command.output, [&](llvm::raw_ostream &os) {
            os << written;
            return llvm::Error::success();
          }))
    return fail("-o: " + llvm::toString(std::move(failed)));
  printSummary(result, llvm::outs());
  llvm::outs() << describeDrift(result) << "\n";
  llvm::outs() << "wrote " << command.output << "\n";
  return 0;
}
