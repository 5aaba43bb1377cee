//===- Target.cpp - cluster descriptions loaded from JSON -------*- C++ -*-===//
//
// Reads target files strictly: every required field must be there with the
// right type and a sensible value, and a field the schema does not know is an
// error, so that a typo never silently falls back to a default.
//
//===----------------------------------------------------------------------===//

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Support/JSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <cmath>

using namespace llvm;
using namespace cleave;

static constexpr StringLiteral kPrecisionNames[kNumPrecisions] = {
    "f64", "f32", "tf32", "f16", "bf16"};

StringRef cleave::stringifyPrecision(Precision precision) {
  return kPrecisionNames[static_cast<unsigned>(precision)];
}

std::optional<Precision> cleave::parsePrecision(StringRef name) {
  for (auto [index, spelling] : llvm::enumerate(kPrecisionNames))
    if (name == spelling)
      return static_cast<Precision>(index);
  return std::nullopt;
}

double DeviceDescription::peakFlops(Precision precision) const {
  double peak = peakFlopsPerSecond[static_cast<unsigned>(precision)];
  if (peak > 0)
    return peak;
  return peakFlopsPerSecond[static_cast<unsigned>(Precision::F32)];
}

static constexpr StringLiteral kKernelClassNames[kNumKernelClasses] = {
    "matmul",         "matmul_skinny", "conv",          "conv_pointwise",
    "conv_depthwise", "conv_1d",       "recurrent",     "attention",
    "pool",           "copy",          "transpose",     "elementwise",
    "activation",     "softmax",       "normalization", "other"};

StringRef cleave::stringifyKernelClass(KernelClass kernelClass) {
  return kKernelClassNames[static_cast<unsigned>(kernelClass)];
}

bool cleave::isComputeKernelClass(KernelClass kernelClass) {
  return kernelClass <= KernelClass::Pool;
}

bool cleave::isFusedLoopKernelClass(KernelClass kernelClass) {
  return kernelClass == KernelClass::Elementwise ||
         kernelClass == KernelClass::Activation;
}

/// The rate of `samples` (sizes ascending) at `size`, in log-log space:
/// their streamed rates when `streamed`.
static double interpolateSize(ArrayRef<ThroughputSample> samples, double size,
                              bool streamed) {
  auto rate = [&](const ThroughputSample &sample) {
    return streamed && sample.streamedPerSecond > 0 ? sample.streamedPerSecond
                                                    : sample.perSecond;
  };
  if (size <= samples.front().size)
    return rate(samples.front());
  if (size >= samples.back().size)
    return rate(samples.back());
  auto above = llvm::upper_bound(
      samples, size,
      [](double value, const ThroughputSample &s) { return value < s.size; });
  const ThroughputSample &high = *above, &low = *(above - 1);
  double t = std::log(size / low.size) / std::log(high.size / low.size);
  return std::exp(std::log(rate(low)) + t * std::log(rate(high) / rate(low)));
}

double cleave::getCacheMissFraction(int64_t cacheBytes, double footprintBytes) {
  if (cacheBytes <= 0 || footprintBytes <= static_cast<double>(cacheBytes))
    return 0;
  return 1.0 - static_cast<double>(cacheBytes) / footprintBytes;
}

double DeviceCalibration::missFraction(double footprintBytes) const {
  return getCacheMissFraction(cacheBytes, footprintBytes);
}

double DeviceCalibration::throughput(KernelClass kernelClass, double size,
                                     double pixels, bool streamed) const {
  ArrayRef<ThroughputSample> samples = table(kernelClass);
  if (samples.empty())
    return 0;
  if (samples.front().pixels <= 0)
    return interpolateSize(samples, size, streamed);
  // The rows of one map size each, in ascending map size (as the file
  // must give them).
  SmallVector<ArrayRef<ThroughputSample>> rows;
  for (size_t begin = 0, end; begin < samples.size(); begin = end) {
    end = begin + 1;
    while (end < samples.size() && samples[end].pixels == samples[begin].pixels)
      ++end;
    rows.push_back(samples.slice(begin, end - begin));
  }
  if (pixels <= 0 || pixels >= rows.back().front().pixels)
    return interpolateSize(rows.back(), size, streamed);
  if (pixels <= rows.front().front().pixels)
    return interpolateSize(rows.front(), size, streamed);
  auto above = llvm::find_if(rows, [&](ArrayRef<ThroughputSample> row) {
    return row.front().pixels >= pixels;
  });
  ArrayRef<ThroughputSample> high = *above, low = *(above - 1);
  double lowRate = interpolateSize(low, size, streamed);
  double highRate = interpolateSize(high, size, streamed);
  double t = std::log(pixels / low.front().pixels) /
             std::log(high.front().pixels / low.front().pixels);
  return std::exp(std::log(lowRate) + t * std::log(highRate / lowRate));
}

//===----------------------------------------------------------------------===//
// Reading the file
//===----------------------------------------------------------------------===//

/// How a JSON value reads in "expected X, got Y": numbers as themselves,
/// anything else by its kind.
static std::string describeValue(const json::Value &value) {
  switch (value.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "a boolean";
  case json::Value::Number: {
    // "%g" rather than JSON's round-trip precision: -1e-06, not
    // -9.9999999999999995e-07.
    std::string text;
    raw_string_ostream os(text);
    if (std::optional<int64_t> integer = value.getAsInteger())
      os << *integer;
    else
      os << format("%g", *value.getAsNumber());
    return text;
  }
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

namespace {

/// One JSON object of a target file, at `path` (e.g. `devices`). Errors read
/// `FILE: PATH.KEY: MESSAGE`.
class ObjectReader {
public:
  ObjectReader(const json::Object &object, std::string path, StringRef fileName)
      : object(object), path(std::move(path)), fileName(fileName) {}

  /// Fails on the first key of the object that is not in `known`.
  Error checkKnownFields(ArrayRef<StringRef> known) const {
    SmallVector<StringRef> keys;
    for (const auto &entry : object)
      keys.push_back(entry.first);
    // json::Object is a hash map; sort so that the error is deterministic.
    llvm::sort(keys);
    for (StringRef key : keys)
      if (!llvm::is_contained(known, key))
        return error(key, "unknown field (expected " + listOf(known) + ")");
    return Error::success();
  }

  Expected<ObjectReader> getObject(StringRef key) const {
    Expected<const json::Value *> value = getRequired(key);
    if (!value)
      return value.takeError();
    const json::Object *child = (*value)->getAsObject();
    if (!child)
      return error(key, "expected an object, got " + describeValue(**value));
    return ObjectReader(*child, fieldPath(key), fileName);
  }

  /// A string; `std::nullopt` when the field is absent and not `required`.
  Expected<std::optional<std::string>> getString(StringRef key,
                                                 bool required) const {
    const json::Value *value = object.get(key);
    if (!value) {
      if (required)
        return error(key, "missing required field");
      return std::nullopt;
    }
    std::optional<StringRef> text = value->getAsString();
    if (!text)
      return error(key, "expected a string, got " + describeValue(*value));
    return text->str();
  }

  /// A finite number greater than zero.
  Expected<double> getPositiveNumber(StringRef key) const {
    Expected<double> number = getNumber(key);
    if (number && !(*number > 0))
      return error(key, "expected a positive number, got " +
                            describeValue(*object.get(key)));
    return number;
  }

  /// A finite number that is zero or more.
  Expected<double> getNonNegativeNumber(StringRef key) const {
    Expected<double> number = getNumber(key);
    if (number && *number < 0)
      return error(key, "expected a non-negative number, got " +
                            describeValue(*object.get(key)));
    return number;
  }

  /// A number in (0, 1]; `defaultValue` when the field is absent, if given.
  Expected<double> getFraction(StringRef key,
                               std::optional<double> defaultValue) const {
    if (defaultValue && !object.get(key))
      return *defaultValue;
    Expected<double> number = getNumber(key);
    if (number && !(*number > 0 && *number <= 1))
      return error(key, "expected a number in (0, 1], got " +
                            describeValue(*object.get(key)));
    return number;
  }

  /// An integer greater than zero.
  Expected<int64_t> getPositiveInteger(StringRef key) const {
    Expected<const json::Value *> value = getRequired(key);
    if (!value)
      return value.takeError();
    if ((*value)->kind() != json::Value::Number)
      return error(key, "expected an integer, got " + describeValue(**value));
    std::optional<int64_t> integer = (*value)->getAsInteger();
    if (!integer)
      return error(key, "expected an integer, got " + describeValue(**value));
    if (*integer <= 0)
      return error(key,
                   "expected a positive number, got " + describeValue(**value));
    return *integer;
  }

  Error error(StringRef key, const Twine &message) const {
    return createStringError(inconvertibleErrorCode(),
                             fileName + ": " + fieldPath(key) + ": " + message);
  }

  /// A reader of `child`, an object found at `key` of this one (an array
  /// element: `key` is "name[index]").
  ObjectReader nested(const json::Object &child, StringRef key) const {
    return ObjectReader(child, fieldPath(key), fileName);
  }

  const json::Object &object;
  const std::string path;

private:
  std::string fieldPath(StringRef key) const {
    return path.empty() ? key.str() : path + "." + key.str();
  }

  static std::string listOf(ArrayRef<StringRef> names) {
    return llvm::join(names, ", ");
  }

  Expected<const json::Value *> getRequired(StringRef key) const {
    const json::Value *value = object.get(key);
    if (!value)
      return error(key, "missing required field");
    return value;
  }

  Expected<double> getNumber(StringRef key) const {
    Expected<const json::Value *> value = getRequired(key);
    if (!value)
      return value.takeError();
    std::optional<double> number = (*value)->getAsNumber();
    if (!number)
      return error(key, "expected a number, got " + describeValue(**value));
    if (!std::isfinite(*number))
      return error(key, "expected a finite number");
    return *number;
  }

  StringRef fileName;
};

} // namespace

/// Turns a json::ParseError ("[LINE:COLUMN, byte=N]: MESSAGE") into
/// `FILE:LINE:COLUMN: invalid JSON: MESSAGE`, the form editors jump to. The
/// position is recomputed from the byte offset: llvm::json reports the
/// position after the character it rejected, with columns from 0, and
/// editors want the character itself, with columns from 1.
static Error describeSyntaxError(Error error, StringRef text,
                                 StringRef fileName) {
  std::string message = toString(std::move(error));
  Regex position("^\\[[0-9]+:[0-9]+, byte=([0-9]+)\\]: (.*)$");
  SmallVector<StringRef> groups;
  size_t offset = 0;
  if (!position.match(message, &groups) || groups[1].getAsInteger(10, offset) ||
      offset > text.size())
    return createStringError(inconvertibleErrorCode(),
                             fileName + ": invalid JSON: " + message);
  if (offset > 0)
    --offset;
  StringRef before = text.take_front(offset);
  size_t line = 1 + before.count('\n');
  size_t lineStart = before.rfind('\n');
  size_t column =
      lineStart == StringRef::npos ? offset + 1 : offset - lineStart;
  return createStringError(inconvertibleErrorCode(),
                           fileName + ":" + Twine(line) + ":" + Twine(column) +
                               ": invalid JSON: " + groups[2]);
}

/// `devices.matmul_tiles`: `{"multiprocessors": N, "tiles": ["RxC", ...]}`.
static Error readMatmulTiles(const ObjectReader &device,
                             DeviceDescription &description) {
  Expected<ObjectReader> reader = device.getObject("matmul_tiles");
  if (!reader)
    return reader.takeError();
  if (Error error = reader->checkKnownFields({"multiprocessors", "tiles"}))
    return error;
  Expected<int64_t> multiprocessors =
      reader->getPositiveInteger("multiprocessors");
  if (!multiprocessors)
    return multiprocessors.takeError();
  description.multiprocessors = *multiprocessors;
  const json::Value *tiles = reader->object.get("tiles");
  if (!tiles)
    return reader->error("tiles", "missing required field");
  const json::Array *list = tiles->getAsArray();
  if (!list || list->empty())
    return reader->error("tiles", "expected a non-empty array of \"RxC\" "
                                  "tile shapes, got " +
                                      describeValue(*tiles));
  for (const json::Value &tile : *list) {
    std::optional<StringRef> text = tile.getAsString();
    int64_t rows = 0, columns = 0;
    StringRef first, second;
    if (text)
      std::tie(first, second) = text->split('x');
    if (!text || first.getAsInteger(10, rows) ||
        second.getAsInteger(10, columns) || rows <= 0 || columns <= 0)
      return reader->error("tiles", "expected tile shapes such as "
                                    "\"256x128\", got " +
                                        (text ? "\"" + text->str() + "\""
                                              : describeValue(tile)));
    description.matmulTiles.emplace_back(rows, columns);
  }
  return Error::success();
}

/// One table of `calibration.compute` or `calibration.memory`: a non-empty
/// array of `{"<unit>": size, "<unit>_per_s": rate, "shape": "..."}`
/// samples (with `"streamed_<unit>_per_s"` where the rate with the data out
/// of the caches was measured too), sizes strictly ascending; or, where
/// every sample gives
/// `"pixels"` (a convolution's output positions per image), rows of one
/// map size each, map sizes ascending, sizes strictly ascending in a row.
static Error readThroughputTable(const ObjectReader &group, StringRef key,
                                 StringRef unit,
                                 std::vector<ThroughputSample> &samples) {
  const json::Value *value = group.object.get(key);
  const json::Array *list = value->getAsArray();
  if (!list || list->empty())
    return group.error(key, "expected a non-empty array of samples, got " +
                                describeValue(*value));
  std::string rateKey = (unit + "_per_s").str();
  std::string streamedKey = "streamed_" + rateKey;
  for (auto [index, entry] : llvm::enumerate(*list)) {
    std::string path = key.str() + "[" + std::to_string(index) + "]";
    const json::Object *object = entry.getAsObject();
    if (!object)
      return group.error(path,
                         "expected an object, got " + describeValue(entry));
    ObjectReader sample = group.nested(*object, path);
    if (Error error = sample.checkKnownFields(
            {unit, rateKey, streamedKey, "shape", "pixels"}))
      return error;
    Expected<double> size = sample.getPositiveNumber(unit);
    if (!size)
      return size.takeError();
    Expected<double> rate = sample.getPositiveNumber(rateKey);
    if (!rate)
      return rate.takeError();
    double streamed = 0;
    if (object->get(streamedKey)) {
      Expected<double> given = sample.getPositiveNumber(streamedKey);
      if (!given)
        return given.takeError();
      streamed = *given;
    }
    Expected<std::optional<std::string>> shape =
        sample.getString("shape", /*required=*/false);
    if (!shape)
      return shape.takeError();
    double pixels = 0;
    if (object->get("pixels")) {
      Expected<double> given = sample.getPositiveNumber("pixels");
      if (!given)
        return given.takeError();
      pixels = *given;
    }
    if (!samples.empty() && (pixels > 0) != (samples.back().pixels > 0))
      return sample.error(pixels > 0 ? "pixels" : unit,
                          "every sample of a table gives pixels, or none does");
    if (!samples.empty() && pixels < samples.back().pixels)
      return sample.error(
          "pixels", "map sizes must not decrease, got " +
                        describeValue(*object->get("pixels")) + " after " +
                        describeValue(json::Value(samples.back().pixels)));
    if (!samples.empty() && pixels == samples.back().pixels &&
        !(*size > samples.back().size))
      return sample.error(
          unit, (pixels > 0 ? "sizes must be strictly ascending on "
                              "one map size, got "
                            : "sizes must be strictly ascending, got ") +
                    describeValue(*object->get(unit)) + " after " +
                    describeValue(json::Value(samples.back().size)));
    samples.push_back(ThroughputSample{*size, *rate, streamed, pixels});
  }
  return Error::success();
}

/// `calibration.compute` (`unit` "flops") or `calibration.memory`
/// ("bytes"): one table per kernel class of that kind.
static Error readThroughputTables(const ObjectReader &calibration,
                                  StringRef key, bool compute,
                                  DeviceCalibration &result) {
  if (!calibration.object.get(key))
    return Error::success();
  Expected<ObjectReader> group = calibration.getObject(key);
  if (!group)
    return group.takeError();
  SmallVector<StringRef> known;
  for (unsigned index = 0; index + 1 < kNumKernelClasses; ++index)
    if (isComputeKernelClass(static_cast<KernelClass>(index)) == compute)
      known.push_back(kKernelClassNames[index]);
  if (Error error = group->checkKnownFields(known))
    return error;
  for (StringRef name : known) {
    if (!group->object.get(name))
      continue;
    unsigned index =
        llvm::find(kKernelClassNames, name) - std::begin(kKernelClassNames);
    if (Error error = readThroughputTable(
            *group, name, compute ? "flops" : "bytes", result.tables[index]))
      return error;
  }
  return Error::success();
}

/// `calibration.stability`: the reference problem's rates through the
/// calibration. The cost model does not use them; they are checked so that
/// an edited file says what is wrong with them.
static Error readStability(const ObjectReader &calibration) {
  if (!calibration.object.get("stability"))
    return Error::success();
  Expected<ObjectReader> reader = calibration.getObject("stability");
  if (!reader)
    return reader.takeError();
  if (Error error = reader->checkKnownFields(
          {"reference", "flops", "flops_per_s", "drift"}))
    return error;
  if (Expected<std::optional<std::string>> reference =
          reader->getString("reference", /*required=*/true);
      !reference)
    return reference.takeError();
  if (Expected<double> flops = reader->getPositiveNumber("flops"); !flops)
    return flops.takeError();
  if (Expected<double> drift = reader->getNonNegativeNumber("drift"); !drift)
    return drift.takeError();
  const json::Value *rates = reader->object.get("flops_per_s");
  const json::Array *array = rates ? rates->getAsArray() : nullptr;
  if (!array || array->empty())
    return reader->error("flops_per_s", "expected a non-empty array of rates");
  for (const json::Value &rate : *array)
    if (std::optional<double> number = rate.getAsNumber();
        !number || !std::isfinite(*number) || !(*number > 0))
      return reader->error("flops_per_s", "expected positive numbers, got " +
                                              describeValue(rate));
  return Error::success();
}

/// `calibration`: what `cleave calibrate` measured.
static Error readCalibration(const ObjectReader &root,
                             DeviceDescription &device) {
  Expected<ObjectReader> reader = root.getObject("calibration");
  if (!reader)
    return reader.takeError();
  if (Error error = reader->checkKnownFields(
          {"description", "threads", "call_overhead_s", "cache_bytes",
           "conv_block", "compute", "memory", "stability"}))
    return error;
  if (Error error = readStability(*reader))
    return error;
  DeviceCalibration calibration;
  if (Expected<std::optional<std::string>> description =
          reader->getString("description", /*required=*/false);
      !description)
    return description.takeError();
  Expected<int64_t> threads = reader->getPositiveInteger("threads");
  if (!threads)
    return threads.takeError();
  calibration.threads = *threads;
  Expected<double> overhead = reader->getNonNegativeNumber("call_overhead_s");
  if (!overhead)
    return overhead.takeError();
  calibration.callOverhead = *overhead;
  if (reader->object.get("cache_bytes")) {
    Expected<int64_t> cache = reader->getPositiveInteger("cache_bytes");
    if (!cache)
      return cache.takeError();
    calibration.cacheBytes = *cache;
  }
  if (reader->object.get("conv_block")) {
    Expected<int64_t> block = reader->getPositiveInteger("conv_block");
    if (!block)
      return block.takeError();
    if (*block != 8 && *block != 16)
      return reader->error("conv_block",
                           "expected 8 or 16, got " + std::to_string(*block));
    calibration.convBlock = *block;
  }
  if (Error error = readThroughputTables(*reader, "compute", true, calibration))
    return error;
  if (Error error = readThroughputTables(*reader, "memory", false, calibration))
    return error;
  device.calibration = std::move(calibration);
  return Error::success();
}

static Error readDevice(const ObjectReader &reader, DeviceDescription &device) {
  if (Error error = reader.checkKnownFields(
          {"name", "kind", "isa", "peak_flops_per_s", "memory_bytes",
           "memory_bandwidth_bytes_per_s", "compute_efficiency",
           "memory_efficiency", "matmul_tiles"}))
    return error;
  Expected<std::optional<std::string>> name =
      reader.getString("name", /*required=*/true);
  if (!name)
    return name.takeError();
  device.name = **name;
  Expected<std::optional<std::string>> kind =
      reader.getString("kind", /*required=*/false);
  if (!kind)
    return kind.takeError();
  if (*kind) {
    if (**kind != "cpu" && **kind != "cuda")
      return reader.error("kind", "must be \"cpu\" or \"cuda\", got \"" +
                                      **kind + "\"");
    device.kind = **kind;
  }
  Expected<std::optional<std::string>> isa =
      reader.getString("isa", /*required=*/false);
  if (!isa)
    return isa.takeError();
  if (*isa) {
    if (device.kind == "cuda")
      return reader.error("isa", "names the instruction set of \"cpu\" "
                                 "devices; these are \"kind\": \"cuda\"");
    if (!llvm::is_contained(kCpuIsas, **isa))
      return reader.error("isa", "must be one of x86-64, x86-64-v2, "
                                 "x86-64-v3, x86-64-v4 or native, got \"" +
                                     **isa + "\"");
    device.isa = **isa;
  }

  Expected<ObjectReader> peaks = reader.getObject("peak_flops_per_s");
  if (!peaks)
    return peaks.takeError();
  SmallVector<StringRef> keys;
  for (const auto &entry : peaks->object)
    keys.push_back(entry.first);
  llvm::sort(keys);
  for (StringRef key : keys) {
    std::optional<Precision> precision = parsePrecision(key);
    if (!precision)
      return peaks->error(key, "unknown dtype (expected " +
                                   llvm::join(std::begin(kPrecisionNames),
                                              std::end(kPrecisionNames), ", ") +
                                   ")");
    Expected<double> peak = peaks->getPositiveNumber(key);
    if (!peak)
      return peak.takeError();
    device.setPeakFlops(*precision, *peak);
  }
  // Every other precision falls back to the f32 rate, so f32 must be there.
  if (!peaks->object.get("f32"))
    return peaks->error("f32", "missing required field");

  Expected<int64_t> memory = reader.getPositiveInteger("memory_bytes");
  if (!memory)
    return memory.takeError();
  device.memoryBytes = *memory;
  Expected<double> bandwidth =
      reader.getPositiveNumber("memory_bandwidth_bytes_per_s");
  if (!bandwidth)
    return bandwidth.takeError();
  device.memoryBandwidth = *bandwidth;
  Expected<double> computeEfficiency =
      reader.getFraction("compute_efficiency", std::nullopt);
  if (!computeEfficiency)
    return computeEfficiency.takeError();
  device.computeEfficiency = *computeEfficiency;
  Expected<double> memoryEfficiency =
      reader.getFraction("memory_efficiency", std::nullopt);
  if (!memoryEfficiency)
    return memoryEfficiency.takeError();
  device.memoryEfficiency = *memoryEfficiency;
  if (reader.object.get("matmul_tiles"))
    return readMatmulTiles(reader, device);
  return Error::success();
}

static Error readLink(const ObjectReader &reader, LinkDescription &link) {
  if (Error error = reader.checkKnownFields(
          {"name", "bandwidth_bytes_per_s", "latency_s", "efficiency"}))
    return error;
  Expected<std::optional<std::string>> name =
      reader.getString("name", /*required=*/false);
  if (!name)
    return name.takeError();
  link.name = name->value_or(reader.path);
  Expected<double> bandwidth =
      reader.getPositiveNumber("bandwidth_bytes_per_s");
  if (!bandwidth)
    return bandwidth.takeError();
  link.bandwidth = *bandwidth;
  Expected<double> latency = reader.getNonNegativeNumber("latency_s");
  if (!latency)
    return latency.takeError();
  link.latency = *latency;
  Expected<double> efficiency = reader.getFraction("efficiency", 1.0);
  if (!efficiency)
    return efficiency.takeError();
  link.efficiency = *efficiency;
  return Error::success();
}

/// The most devices cleave plans for: far above today's largest clusters,
/// and low enough that every search over mesh factorisations stays fast and
/// every product of counts fits in int64.
static constexpr int64_t kMaxDevices = int64_t(1) << 20;

/// Applies the device-count overrides. Whole nodes only: a mesh keeps its
/// tensor-parallel axis inside a node, which needs every node to be alike.
static Error applyOverrides(TargetDescription &target, int64_t numNodes,
                            const TargetLoadOptions &options,
                            StringRef fileName) {
  auto fail = [&](const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             fileName + ": " + message);
  };
  if (options.devicesPerNode) {
    if (*options.devicesPerNode <= 0)
      return fail("devices per node: expected a positive number, got " +
                  Twine(*options.devicesPerNode));
    target.devicesPerNode = *options.devicesPerNode;
  }
  if (target.devicesPerNode > kMaxDevices)
    return fail("devices per node: " + Twine(target.devicesPerNode) +
                " is more than the " + Twine(kMaxDevices) +
                " devices cleave plans for");
  if (!options.numDevices) {
    if (numNodes > kMaxDevices / target.devicesPerNode)
      return fail(Twine(numNodes) + " nodes of " +
                  Twine(target.devicesPerNode) + " devices are more than the " +
                  Twine(kMaxDevices) + " devices cleave plans for");
    target.numDevices = numNodes * target.devicesPerNode;
    return Error::success();
  }
  int64_t count = *options.numDevices;
  if (count <= 0)
    return fail("devices: expected a positive number, got " + Twine(count));
  if (count > kMaxDevices)
    return fail("devices: " + Twine(count) + " is more than the " +
                Twine(kMaxDevices) + " devices cleave plans for");
  if (count < target.devicesPerNode) {
    // Fewer devices than a node holds: they all sit in one node.
    target.devicesPerNode = count;
  } else if (count % target.devicesPerNode != 0) {
    return fail(Twine(count) + " devices do not fill whole nodes of " +
                Twine(target.devicesPerNode) + " devices");
  }
  target.numDevices = count;
  return Error::success();
}

Expected<TargetDescription>
cleave::parseTarget(StringRef text, StringRef fileName,
                    const TargetLoadOptions &options) {
  Expected<json::Value> root = parseBoundedJSON(text);
  if (!root)
    return describeSyntaxError(root.takeError(), text, fileName);
  const json::Object *object = root->getAsObject();
  if (!object)
    return createStringError(inconvertibleErrorCode(),
                             fileName + ": expected a JSON object, got " +
                                 describeValue(*root));

  TargetDescription target;
  ObjectReader reader(*object, "", fileName);
  if (Error error = reader.checkKnownFields(
          {"name", "description", "devices", "nodes", "links", "calibration"}))
    return std::move(error);
  Expected<std::optional<std::string>> name =
      reader.getString("name", /*required=*/true);
  if (!name)
    return name.takeError();
  target.name = **name;
  Expected<std::optional<std::string>> description =
      reader.getString("description", /*required=*/false);
  if (!description)
    return description.takeError();
  target.description = description->value_or("");

  Expected<ObjectReader> devices = reader.getObject("devices");
  if (!devices)
    return devices.takeError();
  if (Error error = readDevice(*devices, target.device))
    return std::move(error);
  if (object->get("calibration"))
    if (Error error = readCalibration(reader, target.device))
      return std::move(error);

  Expected<ObjectReader> nodes = reader.getObject("nodes");
  if (!nodes)
    return nodes.takeError();
  if (Error error = nodes->checkKnownFields({"count", "devices_per_node"}))
    return std::move(error);
  Expected<int64_t> numNodes = nodes->getPositiveInteger("count");
  if (!numNodes)
    return numNodes.takeError();
  Expected<int64_t> devicesPerNode =
      nodes->getPositiveInteger("devices_per_node");
  if (!devicesPerNode)
    return devicesPerNode.takeError();
  target.devicesPerNode = *devicesPerNode;

  Expected<ObjectReader> links = reader.getObject("links");
  if (!links)
    return links.takeError();
  if (Error error = links->checkKnownFields({"intra_node", "inter_node"}))
    return std::move(error);
  Expected<ObjectReader> intraNode = links->getObject("intra_node");
  if (!intraNode)
    return intraNode.takeError();
  if (Error error = readLink(*intraNode, target.intraNode))
    return std::move(error);
  Expected<ObjectReader> interNode = links->getObject("inter_node");
  if (!interNode)
    return interNode.takeError();
  if (Error error = readLink(*interNode, target.interNode))
    return std::move(error);

  if (Error error = applyOverrides(target, *numNodes, options, fileName))
    return std::move(error);
  return target;
}

//===----------------------------------------------------------------------===//
// Finding the file
//===----------------------------------------------------------------------===//

static bool looksLikePath(StringRef nameOrPath) {
  return nameOrPath.ends_with(".json") || llvm::any_of(nameOrPath, [](char c) {
           return sys::path::is_separator(c);
         });
}

/// The preset names in `directory`, sorted, for "unknown target" errors.
static std::string listPresets(StringRef directory) {
  SmallVector<std::string> names;
  std::error_code ec;
  for (sys::fs::directory_iterator it(directory, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef file = sys::path::filename(it->path());
    if (file.ends_with(".json"))
      names.push_back(file.drop_back(5).str());
  }
  llvm::sort(names);
  return llvm::join(names, ", ");
}

Expected<std::string>
cleave::resolveTargetPath(StringRef nameOrPath,
                          const TargetLoadOptions &options) {
  std::string path = nameOrPath.str();
  if (!looksLikePath(nameOrPath)) {
    if (options.targetsDirectory.empty())
      return createStringError(
          inconvertibleErrorCode(),
          "target '" + nameOrPath +
              "': no targets directory to find a preset in; give the path "
              "of a target file");
    if (!sys::fs::is_directory(options.targetsDirectory))
      return createStringError(
          inconvertibleErrorCode(),
          "target '" + nameOrPath + "': targets directory '" +
              options.targetsDirectory + "' does not exist");
    SmallString<256> preset(options.targetsDirectory);
    sys::path::append(preset, nameOrPath + ".json");
    if (!sys::fs::exists(preset))
      return createStringError(
          inconvertibleErrorCode(),
          "unknown target '" + nameOrPath + "': no " + nameOrPath +
              ".json in '" + options.targetsDirectory +
              "' (presets: " + listPresets(options.targetsDirectory) + ")");
    path = preset.str().str();
  }
  return path;
}

Expected<TargetDescription>
cleave::loadTarget(StringRef nameOrPath, const TargetLoadOptions &options) {
  Expected<std::string> resolved = resolveTargetPath(nameOrPath, options);
  if (!resolved)
    return resolved.takeError();
  const std::string &path = *resolved;
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return createStringError(buffer.getError(),
                             "cannot read target file '" + path +
                                 "': " + buffer.getError().message());
  return parseTarget((*buffer)->getBuffer(), path, options);
}

std::string cleave::defaultTargetsDirectory() {
  // On Linux this reads /proc/self/exe; the address is only a fallback for
  // systems that locate the executable through its loaded image.
  std::string executable = sys::fs::getMainExecutable(
      "", reinterpret_cast<void *>(&cleave::defaultTargetsDirectory));
  if (executable.empty())
    return "";
  SmallString<256> directory(
      sys::path::parent_path(sys::path::parent_path(executable)));
  sys::path::append(directory, "share", "cleave", "targets");
  return directory.str().str();
}
