//===- TargetTest.cpp - target files: presets, overrides, errors -*- C++
//-*-===//

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Support/JSON.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>

using namespace cleave;

namespace {

TargetLoadOptions presetOptions() {
  TargetLoadOptions options;
  options.targetsDirectory = CLEAVE_SOURCE_TARGETS_DIR;
  return options;
}

/// A well-formed target that the error tests break one field at a time.
const char *const kValidTarget = R"json({
  "name": "test",
  "devices": {
    "name": "test device",
    "peak_flops_per_s": {"f32": 1.0e12, "bf16": 4.0e12},
    "memory_bytes": 1000,
    "memory_bandwidth_bytes_per_s": 1.0e9,
    "compute_efficiency": 0.5,
    "memory_efficiency": 0.25
  },
  "nodes": {"count": 2, "devices_per_node": 4},
  "links": {
    "intra_node": {"bandwidth_bytes_per_s": 1.0e9, "latency_s": 1.0e-6},
    "inter_node": {"name": "slow", "bandwidth_bytes_per_s": 1.0e8,
                   "latency_s": 1.0e-5, "efficiency": 0.5}
  }
})json";

/// `kValidTarget` with the first occurrence of `from` replaced by `to`.
std::string withReplacement(const std::string &from, const std::string &to) {
  std::string text = kValidTarget;
  size_t position = text.find(from);
  EXPECT_NE(position, std::string::npos) << "no '" << from << "' to replace";
  if (position != std::string::npos)
    text.replace(position, from.size(), to);
  return text;
}

/// The error message of parsing `text` as `bad.json`, or "" when it parses.
std::string parseError(const std::string &text,
                       const TargetLoadOptions &options = {}) {
  llvm::Expected<TargetDescription> target =
      parseTarget(text, "bad.json", options);
  if (target)
    return "";
  return llvm::toString(target.takeError());
}

TEST(TargetTest, ParsesEveryField) {
  llvm::Expected<TargetDescription> target =
      parseTarget(kValidTarget, "test.json");
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->name, "test");
  EXPECT_EQ(target->device.name, "test device");
  EXPECT_EQ(target->device.peakFlops(Precision::F32), 1.0e12);
  EXPECT_EQ(target->device.peakFlops(Precision::BF16), 4.0e12);
  // Precisions the file leaves out run at the f32 rate.
  EXPECT_EQ(target->device.peakFlops(Precision::F16), 1.0e12);
  EXPECT_EQ(target->device.peakFlops(Precision::TF32), 1.0e12);
  EXPECT_EQ(target->device.memoryBytes, 1000);
  EXPECT_EQ(target->device.memoryBandwidth, 1.0e9);
  EXPECT_EQ(target->device.computeEfficiency, 0.5);
  EXPECT_EQ(target->device.memoryEfficiency, 0.25);
  EXPECT_EQ(target->numDevices, 8);
  EXPECT_EQ(target->devicesPerNode, 4);
  EXPECT_EQ(target->numNodes(), 2);
  // A link without a name is named after its level; efficiency defaults
  // to 1.
  EXPECT_EQ(target->intraNode.name, "links.intra_node");
  EXPECT_EQ(target->intraNode.efficiency, 1.0);
  EXPECT_EQ(target->intraNode.effectiveBandwidth(), 1.0e9);
  EXPECT_EQ(target->interNode.name, "slow");
  EXPECT_EQ(target->interNode.latency, 1.0e-5);
  EXPECT_EQ(target->interNode.effectiveBandwidth(), 0.5e8);
}

TEST(TargetTest, PresetH100) {
  llvm::Expected<TargetDescription> target =
      loadTarget("h100-sxm", presetOptions());
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->name, "h100-sxm");
  EXPECT_EQ(target->device.peakFlops(Precision::BF16), 989.4e12);
  EXPECT_EQ(target->device.peakFlops(Precision::F16), 989.4e12);
  EXPECT_EQ(target->device.peakFlops(Precision::TF32), 494.7e12);
  EXPECT_EQ(target->device.peakFlops(Precision::F32), 67.0e12);
  EXPECT_EQ(target->device.memoryBytes, 80000000000);
  EXPECT_EQ(target->device.memoryBandwidth, 3.35e12);
  EXPECT_EQ(target->numDevices, 8);
  EXPECT_EQ(target->devicesPerNode, 8);
  // NVLink's 900 GB/s count both directions; NDR is 400 Gb/s per port.
  EXPECT_EQ(target->intraNode.bandwidth, 450.0e9);
  EXPECT_EQ(target->interNode.bandwidth, 50.0e9);
}

TEST(TargetTest, PresetH200) {
  llvm::Expected<TargetDescription> target =
      loadTarget("h200-sxm", presetOptions());
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->device.peakFlops(Precision::BF16), 989.4e12);
  EXPECT_EQ(target->device.memoryBytes, 141000000000);
  EXPECT_EQ(target->device.memoryBandwidth, 4.8e12);
  EXPECT_EQ(target->intraNode.bandwidth, 450.0e9);
}

TEST(TargetTest, PresetA100) {
  llvm::Expected<TargetDescription> target =
      loadTarget("a100-80gb", presetOptions());
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->device.peakFlops(Precision::BF16), 312.0e12);
  EXPECT_EQ(target->device.memoryBytes, 80000000000);
  EXPECT_EQ(target->device.memoryBandwidth, 2.0e12);
  EXPECT_EQ(target->intraNode.bandwidth, 300.0e9);
  // 108 SMs, tiled by cuBLAS's large tiles.
  EXPECT_EQ(target->device.multiprocessors, 108);
  ASSERT_EQ(target->device.matmulTiles.size(), 3u);
  EXPECT_EQ(target->device.matmulTiles[0].first, 256);
  EXPECT_EQ(target->device.matmulTiles[0].second, 128);
}

TEST(TargetTest, MatmulTiles) {
  // Without the field, no tiles: products run at compute_efficiency.
  llvm::Expected<TargetDescription> plain =
      parseTarget(kValidTarget, "test.json");
  ASSERT_TRUE(static_cast<bool>(plain)) << llvm::toString(plain.takeError());
  EXPECT_EQ(plain->device.multiprocessors, 0);
  EXPECT_TRUE(plain->device.matmulTiles.empty());

  auto withTiles = [](const std::string &tiles) {
    return withReplacement("\"memory_efficiency\": 0.25",
                           "\"memory_efficiency\": 0.25, \"matmul_tiles\": " +
                               tiles);
  };
  llvm::Expected<TargetDescription> tiled = parseTarget(
      withTiles(R"({"multiprocessors": 4, "tiles": ["64x32", "16x16"]})"),
      "test.json");
  ASSERT_TRUE(static_cast<bool>(tiled)) << llvm::toString(tiled.takeError());
  EXPECT_EQ(tiled->device.multiprocessors, 4);
  ASSERT_EQ(tiled->device.matmulTiles.size(), 2u);
  EXPECT_EQ(tiled->device.matmulTiles[0].first, 64);
  EXPECT_EQ(tiled->device.matmulTiles[0].second, 32);
  EXPECT_EQ(tiled->device.matmulTiles[1].first, 16);
  EXPECT_EQ(tiled->device.matmulTiles[1].second, 16);

  EXPECT_EQ(parseError(withTiles(R"({"tiles": ["64x32"]})")),
            "bad.json: devices.matmul_tiles.multiprocessors: missing required "
            "field");
  EXPECT_EQ(parseError(withTiles(R"({"multiprocessors": 4})")),
            "bad.json: devices.matmul_tiles.tiles: missing required field");
  EXPECT_EQ(parseError(withTiles(R"({"multiprocessors": 4, "tiles": []})")),
            "bad.json: devices.matmul_tiles.tiles: expected a non-empty array "
            "of \"RxC\" tile shapes, got an array");
  EXPECT_EQ(
      parseError(withTiles(R"({"multiprocessors": 4, "tiles": ["64by32"]})")),
      "bad.json: devices.matmul_tiles.tiles: expected tile shapes such as "
      "\"256x128\", got \"64by32\"");
  EXPECT_EQ(
      parseError(withTiles(R"({"multiprocessors": 4, "tiles": ["0x32"]})")),
      "bad.json: devices.matmul_tiles.tiles: expected tile shapes such as "
      "\"256x128\", got \"0x32\"");
  EXPECT_EQ(
      parseError(withTiles(R"({"multiprocessors": 0, "tiles": ["64x32"]})")),
      "bad.json: devices.matmul_tiles.multiprocessors: expected a "
      "positive number, got 0");
  EXPECT_EQ(parseError(withTiles(
                R"({"multiprocessors": 4, "tiles": ["64x32"], "sms": 4})")),
            "bad.json: devices.matmul_tiles.sms: unknown field (expected "
            "multiprocessors, tiles)");
}

TEST(TargetTest, PresetCPU) {
  llvm::Expected<TargetDescription> target = loadTarget("cpu", presetOptions());
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->device.peakFlops(Precision::F32), 96.0e9);
  // No bf16 arithmetic on the core: it runs at the f32 rate.
  EXPECT_EQ(target->device.peakFlops(Precision::BF16), 96.0e9);
  EXPECT_EQ(target->device.kind, "cpu");
  // Its programs are built for AVX2 and FMA, which its device says it has.
  EXPECT_EQ(target->device.isa, "x86-64-v3");
}

TEST(TargetTest, CpuIsa) {
  auto cpu = [](const char *isa) {
    return withReplacement("\"name\": \"test device\"",
                           std::string("\"name\": \"test device\", "
                                       "\"kind\": \"cpu\", \"isa\": \"") +
                               isa + "\"");
  };
  for (const char *isa : {"x86-64", "x86-64-v2", "x86-64-v4", "native"})
    EXPECT_EQ(parseTarget(cpu(isa), "test.json")->device.isa, isa);
  // Absent: empty, which compile reads as native.
  EXPECT_EQ(parseTarget(kValidTarget, "test.json")->device.isa, "");
  EXPECT_EQ(parseError(cpu("avx2")),
            "bad.json: devices.isa: must be one of x86-64, x86-64-v2, "
            "x86-64-v3, x86-64-v4 or native, got \"avx2\"");
  EXPECT_EQ(parseError(withReplacement(
                "\"name\": \"test device\"",
                "\"name\": \"test device\", \"kind\": \"cuda\", "
                "\"isa\": \"x86-64-v3\"")),
            "bad.json: devices.isa: names the instruction set of \"cpu\" "
            "devices; these are \"kind\": \"cuda\"");
}

TEST(TargetTest, DeviceKind) {
  for (const char *preset : {"a100-80gb", "h100-sxm", "h200-sxm"}) {
    llvm::Expected<TargetDescription> target =
        loadTarget(preset, presetOptions());
    ASSERT_TRUE(static_cast<bool>(target))
        << llvm::toString(target.takeError());
    EXPECT_EQ(target->device.kind, "cuda") << preset;
  }
  // Optional for planning: a file without it loads with no kind.
  EXPECT_EQ(parseTarget(kValidTarget, "test.json")->device.kind, "");
  EXPECT_EQ(parseError(withReplacement("\"name\": \"test device\"",
                                       "\"name\": \"test device\", "
                                       "\"kind\": \"tpu\"")),
            "bad.json: devices.kind: must be \"cpu\" or \"cuda\", got "
            "\"tpu\"");
}

TEST(TargetTest, LoadsByPath) {
  llvm::SmallString<256> path(CLEAVE_SOURCE_TARGETS_DIR);
  llvm::sys::path::append(path, "h100-sxm.json");
  llvm::Expected<TargetDescription> target =
      loadTarget(path, TargetLoadOptions());
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->name, "h100-sxm");
}

TEST(TargetTest, DeviceOverrides) {
  TargetLoadOptions options = presetOptions();
  options.numDevices = 64;
  llvm::Expected<TargetDescription> target = loadTarget("h100-sxm", options);
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->numDevices, 64);
  EXPECT_EQ(target->devicesPerNode, 8);
  EXPECT_EQ(target->numNodes(), 8);

  // Fewer devices than a node holds share one node.
  options.numDevices = 4;
  target = loadTarget("h100-sxm", options);
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->devicesPerNode, 4);
  EXPECT_EQ(target->numNodes(), 1);

  options.numDevices = 16;
  options.devicesPerNode = 4;
  target = loadTarget("h100-sxm", options);
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->numNodes(), 4);

  // Without a device count, the file's node count times the new node size.
  TargetLoadOptions perNode;
  perNode.devicesPerNode = 2;
  EXPECT_EQ(parseTarget(kValidTarget, "test.json", perNode)->numDevices, 4);
}

TEST(TargetTest, DeviceOverrideErrors) {
  TargetLoadOptions options;
  options.numDevices = 10;
  EXPECT_EQ(parseError(kValidTarget, options),
            "bad.json: 10 devices do not fill whole nodes of 4 devices");
  options.numDevices = 0;
  EXPECT_EQ(parseError(kValidTarget, options),
            "bad.json: devices: expected a positive number, got 0");
  options.numDevices.reset();
  options.devicesPerNode = -1;
  EXPECT_EQ(parseError(kValidTarget, options),
            "bad.json: devices per node: expected a positive number, got -1");
}

TEST(TargetTest, GroupsCrossingNodes) {
  TargetDescription target;
  target.devicesPerNode = 8;
  target.numDevices = 32;
  EXPECT_FALSE(target.groupCrossesNodes(8));
  EXPECT_TRUE(target.groupCrossesNodes(9));
  // Every 8th device: one per node.
  EXPECT_TRUE(target.groupCrossesNodes(2, 8));
  // Devices 0, 2, 4, 6 share a node; 0, 2, ..., 8 do not.
  EXPECT_FALSE(target.groupCrossesNodes(4, 2));
  EXPECT_TRUE(target.groupCrossesNodes(5, 2));
  EXPECT_FALSE(target.groupCrossesNodes(1, 64));
  EXPECT_EQ(&target.link(true), &target.interNode);
  EXPECT_EQ(&target.link(false), &target.intraNode);
}

TEST(TargetTest, MissingField) {
  EXPECT_EQ(parseError(withReplacement("\"memory_bytes\": 1000,", "")),
            "bad.json: devices.memory_bytes: missing required field");
  EXPECT_EQ(parseError(withReplacement(", \"latency_s\": 1.0e-6", "")),
            "bad.json: links.intra_node.latency_s: missing required field");
  EXPECT_EQ(parseError(withReplacement(R"("f32": 1.0e12, )", "")),
            "bad.json: devices.peak_flops_per_s.f32: missing required field");
  EXPECT_EQ(parseError(withReplacement(R"("name": "test",)", "")),
            "bad.json: name: missing required field");
}

TEST(TargetTest, WrongType) {
  EXPECT_EQ(parseError(withReplacement("1000", "\"1000\"")),
            "bad.json: devices.memory_bytes: expected an integer, got a "
            "string");
  EXPECT_EQ(parseError(withReplacement("1000", "1000.5")),
            "bad.json: devices.memory_bytes: expected an integer, got 1000.5");
  EXPECT_EQ(parseError(withReplacement("\"compute_efficiency\": 0.5",
                                       "\"compute_efficiency\": [0.5]")),
            "bad.json: devices.compute_efficiency: expected a number, got an "
            "array");
  EXPECT_EQ(
      parseError(withReplacement(
          R"("nodes": {"count": 2, "devices_per_node": 4})", R"("nodes": 8)")),
      "bad.json: nodes: expected an object, got 8");
  EXPECT_EQ(parseError(withReplacement(R"("name": "test")", R"("name": 7)")),
            "bad.json: name: expected a string, got 7");
  EXPECT_EQ(parseError("[1, 2]"),
            "bad.json: expected a JSON object, got an array");
}

TEST(TargetTest, NonPositive) {
  EXPECT_EQ(parseError(withReplacement("1000", "0")),
            "bad.json: devices.memory_bytes: expected a positive number, got "
            "0");
  EXPECT_EQ(parseError(withReplacement("\"count\": 2", "\"count\": -2")),
            "bad.json: nodes.count: expected a positive number, got -2");
  EXPECT_EQ(parseError(withReplacement("1.0e12", "0")),
            "bad.json: devices.peak_flops_per_s.f32: expected a positive "
            "number, got 0");
  EXPECT_EQ(parseError(withReplacement("\"memory_bandwidth_bytes_per_s\": "
                                       "1.0e9",
                                       "\"memory_bandwidth_bytes_per_s\": "
                                       "-1.5")),
            "bad.json: devices.memory_bandwidth_bytes_per_s: expected a "
            "positive number, got -1.5");
  EXPECT_EQ(parseError(withReplacement("1.0e-6", "-1.0e-6")),
            "bad.json: links.intra_node.latency_s: expected a non-negative "
            "number, got -1e-06");
  EXPECT_EQ(parseError(withReplacement("0.25", "1.5")),
            "bad.json: devices.memory_efficiency: expected a number in (0, "
            "1], got 1.5");
  EXPECT_EQ(
      parseError(withReplacement("\"efficiency\": 0.5", "\"efficiency\": 0")),
      "bad.json: links.inter_node.efficiency: expected a number in (0, "
      "1], got 0");
}

TEST(TargetTest, UnknownDtypeAndField) {
  EXPECT_EQ(parseError(withReplacement("\"bf16\"", "\"fp8\"")),
            "bad.json: devices.peak_flops_per_s.fp8: unknown dtype (expected "
            "f64, f32, tf32, f16, bf16)");
  EXPECT_EQ(parseError(withReplacement("\"memory_bytes\"", "\"memory_byte\"")),
            "bad.json: devices.memory_byte: unknown field (expected name, "
            "kind, isa, peak_flops_per_s, memory_bytes, "
            "memory_bandwidth_bytes_per_s, "
            "compute_efficiency, memory_efficiency, matmul_tiles)");
  EXPECT_EQ(parseError(withReplacement("\"intra_node\"", "\"pcie\"")),
            "bad.json: links.pcie: unknown field (expected intra_node, "
            "inter_node)");
}

TEST(TargetTest, SyntaxErrorNamesLine) {
  // A missing comma after the "name" line: the next key (line 3, column 3)
  // is where the parser gives up.
  EXPECT_EQ(parseError(withReplacement("\"test\",", "\"test\"")),
            "bad.json:3:3: invalid JSON: Expected , or } after object "
            "property");
  // A truncated literal: the parser gives up where the `e` should be.
  EXPECT_EQ(parseError("{\n  \"name\": tru\n}"),
            "bad.json:2:14: invalid JSON: Invalid JSON value (true?)");
}

TEST(TargetTest, DeepNestingIsRefusedBeforeParsing) {
  // The recursive parser would overflow the stack long before this depth;
  // the check refuses it without recursing.
  std::string deep = "{\"name\": " + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  EXPECT_EQ(parseError(deep), "bad.json: invalid JSON: arrays and objects "
                              "nest deeper than the 64 levels cleave reads");
  // Brackets inside strings (escaped quotes too) do not count.
  llvm::StringRef three = "[\"[[\\\"[[\", {\"a\": [1]}]";
  llvm::Expected<llvm::json::Value> parsed = parseBoundedJSON(three, 3);
  EXPECT_TRUE(static_cast<bool>(parsed));
  if (!parsed)
    llvm::consumeError(parsed.takeError());
  llvm::Expected<llvm::json::Value> tooDeep = parseBoundedJSON(three, 2);
  EXPECT_FALSE(static_cast<bool>(tooDeep));
  if (!tooDeep)
    llvm::consumeError(tooDeep.takeError());
}

TEST(TargetTest, UnknownPresetListsPresets) {
  llvm::Expected<TargetDescription> target =
      loadTarget("h100", presetOptions());
  ASSERT_FALSE(static_cast<bool>(target));
  EXPECT_EQ(llvm::toString(target.takeError()),
            std::string("unknown target 'h100': no h100.json in '") +
                CLEAVE_SOURCE_TARGETS_DIR +
                "' (presets: a100-80gb, cpu, h100-sxm, h200-sxm)");
}

TEST(TargetTest, BareNameNeedsDirectory) {
  llvm::Expected<TargetDescription> target =
      loadTarget("h100-sxm", TargetLoadOptions());
  ASSERT_FALSE(static_cast<bool>(target));
  EXPECT_EQ(llvm::toString(target.takeError()),
            "target 'h100-sxm': no targets directory to find a preset in; "
            "give the path of a target file");
}

TEST(TargetTest, MissingFile) {
  llvm::Expected<TargetDescription> target =
      loadTarget("/nonexistent/dir/t.json", TargetLoadOptions());
  ASSERT_FALSE(static_cast<bool>(target));
  EXPECT_EQ(llvm::toString(target.takeError()),
            "cannot read target file '/nonexistent/dir/t.json': No such file "
            "or directory");
}

/// `kValidTarget` with `calibration` added.
std::string withCalibration(const std::string &calibration) {
  return withReplacement(R"("name": "test",)",
                         R"("name": "test", "calibration": )" + calibration +
                             ",");
}

const char *const kCalibration = R"json({
  "threads": 2, "call_overhead_s": 1.0e-6,
  "compute": {"matmul": [{"flops": 1.0e3, "flops_per_s": 1.0e9},
                         {"flops": 1.0e7, "flops_per_s": 1.0e11,
                          "shape": "x"}]},
  "memory": {"copy": [{"bytes": 100, "bytes_per_s": 2.0e9}]}
})json";

TEST(TargetTest, Calibration) {
  llvm::Expected<TargetDescription> target =
      parseTarget(withCalibration(kCalibration), "t.json");
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  ASSERT_TRUE(target->device.calibration.has_value());
  const DeviceCalibration &calibration = *target->device.calibration;
  EXPECT_EQ(calibration.threads, 2);
  EXPECT_DOUBLE_EQ(calibration.callOverhead, 1.0e-6);
  EXPECT_EQ(calibration.table(KernelClass::Matmul).size(), 2u);
  EXPECT_EQ(calibration.table(KernelClass::Copy).size(), 1u);
  EXPECT_TRUE(calibration.table(KernelClass::Conv).empty());
  // Log-log interpolation: halfway in log(size) is halfway in log(rate).
  EXPECT_NEAR(calibration.throughput(KernelClass::Matmul, 1.0e5), 1.0e10, 1.0);
  // Clamped outside the samples; a single sample holds everywhere.
  EXPECT_DOUBLE_EQ(calibration.throughput(KernelClass::Matmul, 10), 1.0e9);
  EXPECT_DOUBLE_EQ(calibration.throughput(KernelClass::Matmul, 1.0e12), 1.0e11);
  EXPECT_DOUBLE_EQ(calibration.throughput(KernelClass::Copy, 1.0e9), 2.0e9);
  EXPECT_EQ(calibration.throughput(KernelClass::Conv, 1.0e9), 0);

  // Without `cache_bytes` no stage's data counts as out of the caches,
  // and a sample without a streamed rate stands for both.
  EXPECT_EQ(calibration.cacheBytes, 0);
  EXPECT_EQ(calibration.convBlock, 0);
  EXPECT_EQ(calibration.missFraction(1.0e9), 0);
  EXPECT_DOUBLE_EQ(
      calibration.throughput(KernelClass::Copy, 1.0e9, 0, /*streamed=*/true),
      2.0e9);

  // Without one, there is none.
  llvm::Expected<TargetDescription> plain = parseTarget(kValidTarget, "t.json");
  ASSERT_TRUE(static_cast<bool>(plain));
  EXPECT_FALSE(plain->device.calibration.has_value());
}

/// A calibration with the rates measured with the data out of the caches
/// too: the streamed rate interpolates as the resident one does, and a
/// stage's data misses the caches in the share its footprint exceeds them.
TEST(TargetTest, CalibrationStreamed) {
  const char *streamed = R"json({
    "threads": 1, "call_overhead_s": 0, "cache_bytes": 1000, "conv_block": 16,
    "compute": {"matmul": [
      {"flops": 1.0e3, "flops_per_s": 1.0e10, "streamed_flops_per_s": 1.0e9},
      {"flops": 1.0e7, "flops_per_s": 1.0e11}]}
  })json";
  llvm::Expected<TargetDescription> target =
      parseTarget(withCalibration(streamed), "t.json");
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  const DeviceCalibration &calibration = *target->device.calibration;
  EXPECT_EQ(calibration.cacheBytes, 1000);
  EXPECT_EQ(calibration.convBlock, 16);
  EXPECT_DOUBLE_EQ(calibration.throughput(KernelClass::Matmul, 10), 1.0e10);
  EXPECT_DOUBLE_EQ(
      calibration.throughput(KernelClass::Matmul, 10, 0, /*streamed=*/true),
      1.0e9);
  // Halfway in log(size) between 1e9 (streamed) and 1e11 (the resident
  // rate, where the sample has no streamed one): 1e10.
  EXPECT_NEAR(
      calibration.throughput(KernelClass::Matmul, 1.0e5, 0, /*streamed=*/true),
      1.0e10, 1.0);
  EXPECT_EQ(calibration.missFraction(500), 0);
  EXPECT_EQ(calibration.missFraction(1000), 0);
  EXPECT_DOUBLE_EQ(calibration.missFraction(4000), 0.75);
  EXPECT_EQ(getCacheMissFraction(0, 4000), 0);
}

/// A table whose samples give `pixels` is rows of one map size each: the
/// rate is interpolated by size in the rows around the op's map size, then
/// between them in log(pixels); outside the rows, in the nearest; with no
/// map size, in the largest map's.
TEST(TargetTest, CalibrationByMapSize) {
  llvm::Expected<TargetDescription> target =
      parseTarget(withCalibration(R"json({
  "threads": 1, "call_overhead_s": 0,
  "compute": {"conv": [
    {"flops": 1.0e3, "flops_per_s": 1.0e8, "pixels": 1},
    {"flops": 1.0e5, "flops_per_s": 1.0e9, "pixels": 1},
    {"flops": 1.0e3, "flops_per_s": 1.0e9, "pixels": 100},
    {"flops": 1.0e5, "flops_per_s": 1.0e11, "pixels": 100}]}
})json"),
                  "t.json");
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  const DeviceCalibration &calibration = *target->device.calibration;
  ASSERT_EQ(calibration.table(KernelClass::Conv).size(), 4u);
  // In a row: log-log by size.
  EXPECT_NEAR(calibration.throughput(KernelClass::Conv, 1.0e4, 1), 3.16228e8,
              1e3);
  EXPECT_NEAR(calibration.throughput(KernelClass::Conv, 1.0e4, 100), 1.0e10,
              1e4);
  // Between the rows: 10 pixels is halfway in log(pixels), so the rate is
  // the geometric mean of the rows' (3.16e8 and 1e10).
  EXPECT_NEAR(calibration.throughput(KernelClass::Conv, 1.0e4, 10), 1.77828e9,
              1e4);
  // Outside the rows, the nearest; no map size, the largest map's.
  EXPECT_DOUBLE_EQ(calibration.throughput(KernelClass::Conv, 1.0e5, 0.5),
                   1.0e9);
  EXPECT_DOUBLE_EQ(calibration.throughput(KernelClass::Conv, 1.0e5, 1.0e4),
                   1.0e11);
  EXPECT_DOUBLE_EQ(calibration.throughput(KernelClass::Conv, 1.0e5), 1.0e11);

  auto error = [](const std::string &samples) {
    return parseError(withCalibration(
        R"({"threads": 1, "call_overhead_s": 0, "compute": {"conv": )" +
        samples + "}}"));
  };
  EXPECT_EQ(error(R"([{"flops": 1, "flops_per_s": 1, "pixels": 4},
                      {"flops": 2, "flops_per_s": 1}])"),
            "bad.json: calibration.compute.conv[1].flops: every sample of a "
            "table gives pixels, or none does");
  EXPECT_EQ(error(R"([{"flops": 1, "flops_per_s": 1, "pixels": 4},
                      {"flops": 2, "flops_per_s": 1, "pixels": 1}])"),
            "bad.json: calibration.compute.conv[1].pixels: map sizes must not "
            "decrease, got 1 after 4");
  EXPECT_EQ(error(R"([{"flops": 2, "flops_per_s": 1, "pixels": 4},
                      {"flops": 2, "flops_per_s": 1, "pixels": 4}])"),
            "bad.json: calibration.compute.conv[1].flops: sizes must be "
            "strictly ascending on one map size, got 2 after 2");
  EXPECT_EQ(error(R"([{"flops": 2, "flops_per_s": 1, "pixels": 0}])"),
            "bad.json: calibration.compute.conv[0].pixels: expected a positive "
            "number, got 0");
}

TEST(TargetTest, CalibrationErrors) {
  auto error = [](const std::string &calibration) {
    return parseError(withCalibration(calibration));
  };
  EXPECT_EQ(error(R"({"threads": 1})"),
            "bad.json: calibration.call_overhead_s: missing required field");
  EXPECT_EQ(error(R"({"threads": 0, "call_overhead_s": 0})"),
            "bad.json: calibration.threads: expected a positive number, got "
            "0");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": -1})"),
            "bad.json: calibration.call_overhead_s: expected a non-negative "
            "number, got -1");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0, "gpu": {}})"),
            "bad.json: calibration.gpu: unknown field (expected description, "
            "threads, call_overhead_s, cache_bytes, conv_block, compute, "
            "memory, stability)");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0, "conv_block": 12})"),
            "bad.json: calibration.conv_block: expected 8 or 16, got 12");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0, "conv_block": 0})"),
            "bad.json: calibration.conv_block: expected a positive number, "
            "got 0");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0, "cache_bytes": 0})"),
            "bad.json: calibration.cache_bytes: expected a positive number, "
            "got 0");
  EXPECT_EQ(
      error(R"({"threads": 1, "call_overhead_s": 0, "compute": {"matmul": )"
            R"([{"flops": 1, "flops_per_s": 1, "streamed_flops_per_s": 0}]}})"),
      "bad.json: calibration.compute.matmul[0].streamed_flops_per_s: "
      "expected a positive number, got 0");
  EXPECT_EQ(
      error(R"({"threads": 1, "call_overhead_s": 0, "memory": {"copy": )"
            R"([{"bytes": 1, "bytes_per_s": 1, "streamed_flops_per_s": 1}]}})"),
      "bad.json: calibration.memory.copy[0].streamed_flops_per_s: unknown "
      "field (expected bytes, bytes_per_s, streamed_bytes_per_s, shape, "
      "pixels)");
  // The reference product's rates through the calibration.
  auto stability = [&](const std::string &fields) {
    return error(R"({"threads": 1, "call_overhead_s": 0, "stability": {)" +
                 fields + "}}");
  };
  const std::string reference =
      R"("reference": "matmul 128x512x512", "flops": 67108864, )";
  EXPECT_EQ(
      stability(reference + R"("flops_per_s": [1e11], "drift": 0, "mean": 1)"),
      "bad.json: calibration.stability.mean: unknown field (expected "
      "reference, flops, flops_per_s, drift)");
  EXPECT_EQ(stability(reference + R"("flops_per_s": [], "drift": 0)"),
            "bad.json: calibration.stability.flops_per_s: expected a "
            "non-empty array of rates");
  EXPECT_EQ(stability(reference + R"("flops_per_s": [1e11, 0], "drift": 0)"),
            "bad.json: calibration.stability.flops_per_s: expected positive "
            "numbers, got 0");
  EXPECT_EQ(stability(reference + R"("flops_per_s": [1e11], "drift": -0.5)"),
            "bad.json: calibration.stability.drift: expected a non-negative "
            "number, got -0.5");
  EXPECT_EQ(stability(R"("flops": 1, "flops_per_s": [1], "drift": 0)"),
            "bad.json: calibration.stability.reference: missing required "
            "field");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0,
                      "compute": {"copy": []}})"),
            "bad.json: calibration.compute.copy: unknown field (expected "
            "matmul, matmul_skinny, conv, conv_pointwise, conv_depthwise, "
            "conv_1d, recurrent, attention, pool)");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0,
                      "memory": {"matmul": []}})"),
            "bad.json: calibration.memory.matmul: unknown field (expected "
            "copy, transpose, elementwise, activation, softmax, "
            "normalization)");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0,
                      "compute": {"conv": []}})"),
            "bad.json: calibration.compute.conv: expected a non-empty array "
            "of samples, got an array");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0,
                      "compute": {"conv": [{"flops": 1, "bytes_per_s": 1}]}})"),
            "bad.json: calibration.compute.conv[0].bytes_per_s: unknown field "
            "(expected flops, flops_per_s, streamed_flops_per_s, shape, "
            "pixels)");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0,
                      "memory": {"copy": [{"bytes": 8, "bytes_per_s": 0}]}})"),
            "bad.json: calibration.memory.copy[0].bytes_per_s: expected a "
            "positive number, got 0");
  EXPECT_EQ(error(R"({"threads": 1, "call_overhead_s": 0,
                      "memory": {"copy": [{"bytes": 8, "bytes_per_s": 1},
                                          {"bytes": 8, "bytes_per_s": 1}]}})"),
            "bad.json: calibration.memory.copy[1].bytes: sizes must be "
            "strictly ascending, got 8 after 8");
  EXPECT_EQ(error("[]"),
            "bad.json: calibration: expected an object, got an array");
}

TEST(TargetTest, KernelClassNames) {
  EXPECT_EQ(stringifyKernelClass(KernelClass::Conv1D), "conv_1d");
  EXPECT_EQ(stringifyKernelClass(KernelClass::Other), "other");
  EXPECT_TRUE(isComputeKernelClass(KernelClass::MatmulSkinny));
  EXPECT_FALSE(isComputeKernelClass(KernelClass::Copy));
  EXPECT_EQ(stringifyKernelClass(KernelClass::Recurrent), "recurrent");
  EXPECT_TRUE(isComputeKernelClass(KernelClass::Recurrent));
  EXPECT_EQ(stringifyKernelClass(KernelClass::Attention), "attention");
  EXPECT_TRUE(isComputeKernelClass(KernelClass::Attention));
  EXPECT_EQ(stringifyKernelClass(KernelClass::Pool), "pool");
  EXPECT_TRUE(isComputeKernelClass(KernelClass::Pool));
  EXPECT_EQ(stringifyKernelClass(KernelClass::Transpose), "transpose");
  EXPECT_FALSE(isComputeKernelClass(KernelClass::Transpose));
}

TEST(TargetTest, PrecisionNames) {
  for (Precision precision : {Precision::F64, Precision::F32, Precision::TF32,
                              Precision::F16, Precision::BF16})
    EXPECT_EQ(parsePrecision(stringifyPrecision(precision)), precision);
  EXPECT_FALSE(parsePrecision("f8").has_value());
}

} // namespace
