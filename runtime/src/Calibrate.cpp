//===- Calibrate.cpp - the CPU kernels timed ------------------------------===//
//
// Every measurement calls a kernel the way a program does (CleaveTensor
// descriptors over 64-byte aligned buffers, the CPU device's context, the
// highest x86-64 level of the kernels this CPU runs), warms it up, then
// takes the median of timed samples. A sample times a batch of calls long
// enough for the clock to resolve, so that tiny kernels are timed as well
// as large ones. Every table is measured in several passes, whose median
// rate each point keeps.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Calibrate.h"

#include "Bundle.h"
#include "cleave/rt/Context.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/Runtime.h"
#include "cleave/rt/VectorMath.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <omp.h>

namespace cleave::rt {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// How long each point is timed, per mode: `passes` passes over every
/// table, each point warmed up for `warmupSeconds` and timed for
/// `pointSeconds` (at most `maxSamples` samples) in each pass.
struct Budget {
  int passes;
  double warmupSeconds;
  double pointSeconds;
  int maxSamples;
};

/// A float32 buffer of the device, filled with small values so that no
/// kernel meets denormals or infinities.
class Buffer {
public:
  Buffer(Device &device, int64_t elements)
      : device(device),
        data(static_cast<float *>(device.allocate(elements * 4))) {
    for (int64_t i = 0; i < elements; ++i)
      data[i] = 0.25f + 0.001f * static_cast<float>(i % 997);
  }
  ~Buffer() { device.release(data); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  CleaveTensor tensor(std::initializer_list<int64_t> shape) const {
    CleaveTensor t{};
    t.data = data;
    t.dtype = CLEAVE_F32;
    t.rank = static_cast<int32_t>(shape.size());
    int i = 0;
    for (int64_t dim : shape)
      t.shape[i++] = dim;
    return t;
  }
  float *get() const { return data; }

private:
  Device &device;
  float *data;
};

/// The loops a program emits for an elementwise op (CppEmitter.cpp): one
/// pass over the elements, split over the kernels' OpenMP team when the
/// work is large enough, in the vector instructions of the CPU. The body is
/// a function of its own so that its clones for each level, not the
/// OpenMP region around it, hold the vector code.
constexpr int64_t kParallelThreshold = 131072;

__attribute__((target_clones("arch=x86-64-v3", "default"))) void
addRange(int64_t begin, int64_t end, const float *a, const float *b, float *y) {
  for (int64_t i = begin; i < end; ++i)
    y[i] = a[i] + b[i];
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) void
geluRange(int64_t begin, int64_t end, const float *x, float *y) {
  for (int64_t i = begin; i < end; ++i)
    y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
}

/// Calls `range(begin, end)` over [0, n) as a program's loop would run.
template <typename Range>
void parallelLoop(int threads, int64_t n, Range range) {
  if (n < kParallelThreshold || threads <= 1) {
    range(0, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
    range(n * me / team, n * (me + 1) / team);
  }
}

class Calibrator {
public:
  Calibrator(const CalibrationOptions &options, CpuCalibration &result)
      : options(options), result(result),
        device(createCpuDevice(options.threads)), ctx(device->context()) {
    ctx->cpuLevel = kernelCpuLevel("native");
    result.threads = ctx->numThreads;
    result.cpuLevel = ctx->cpuLevel;
    budget =
        options.quick ? Budget{1, 0.002, 0.015, 15} : Budget{3, 0.03, 0.15, 30};
  }

  /// Measures every table `budget.passes` times, a pass over all of them
  /// after another, and keeps each point's median rate over the passes:
  /// on a machine whose load drifts, every point sees the same mix of it.
  void measureTables() {
    passes.resize(budget.passes);
    for (pass = 0; pass < budget.passes; ++pass) {
      passes[pass].reserve(16);
      measureMatmul();
      measureConvolutions();
      measureMemory();
    }
    for (size_t index = 0; index < passes[0].size(); ++index) {
      ThroughputTable merged = passes[0][index];
      for (size_t point = 0; point < merged.points.size(); ++point) {
        std::vector<double> rates;
        for (const std::vector<ThroughputTable> &tables : passes)
          rates.push_back(tables[index].points[point].perSecond);
        std::nth_element(rates.begin(), rates.begin() + rates.size() / 2,
                         rates.end());
        merged.points[point].perSecond = rates[rates.size() / 2];
      }
      result.tables.push_back(std::move(merged));
    }
  }

  void measureOverhead();

  std::function<void(const std::string &)> progress;

private:
  void measureMatmul();
  void measureConvolutions();
  void measureMemory();

  /// Median seconds of one call of `call`, which returns a kernel status.
  template <typename Fn> double time(Fn call);
  /// Adds a point of `size` (FLOPs or bytes) that a call of `seconds` did.
  void add(ThroughputTable &table, double size, double seconds,
           std::string shape);
  ThroughputTable &table(const std::string &name, bool compute);

  void check(int32_t status, const char *kernel) {
    if (status != 0)
      throw Error(std::string("cleave_cpu_") + kernel +
                  " failed: " + ctx->error);
  }

  void matmul(ThroughputTable &table, int64_t m, int64_t n, int64_t k);
  void conv(ThroughputTable &table, int64_t spatialRank, int64_t channels,
            int64_t extent, int64_t kernel, bool depthwise);

  const CalibrationOptions &options;
  CpuCalibration &result;
  std::unique_ptr<Device> device;
  CleaveContext *ctx;
  Budget budget;
  /// The tables of each pass, and the pass being measured.
  std::vector<std::vector<ThroughputTable>> passes;
  int pass = 0;
};

template <typename Fn> double Calibrator::time(Fn call) {
  // Warm up (caches, pages, the OpenMP team) and learn the call's rough
  // time, to batch calls that are too short for the clock.
  int warmups = 0;
  Clock::time_point start = Clock::now();
  do {
    call();
    ++warmups;
  } while (secondsSince(start) < budget.warmupSeconds && warmups < 1000);
  double rough = secondsSince(start) / warmups;
  double sampleSeconds = budget.pointSeconds / budget.maxSamples;
  int64_t batch = std::max<int64_t>(
      1, static_cast<int64_t>(sampleSeconds / std::max(rough, 1e-9)));

  std::vector<double> samples;
  start = Clock::now();
  while (samples.size() < 3 ||
         (secondsSince(start) < budget.pointSeconds &&
          static_cast<int>(samples.size()) < budget.maxSamples)) {
    Clock::time_point sample = Clock::now();
    for (int64_t i = 0; i < batch; ++i)
      call();
    samples.push_back(secondsSince(sample) / static_cast<double>(batch));
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2,
                   samples.end());
  return samples[samples.size() / 2];
}

ThroughputTable &Calibrator::table(const std::string &name, bool compute) {
  if (progress)
    progress(budget.passes == 1
                 ? name
                 : name + " (pass " + std::to_string(pass + 1) + " of " +
                       std::to_string(budget.passes) + ")");
  passes[pass].push_back(ThroughputTable{name, compute, {}});
  return passes[pass].back();
}

void Calibrator::add(ThroughputTable &table, double size, double seconds,
                     std::string shape) {
  // The table holds the rate of the work itself: the cost model adds the
  // call overhead back. A call barely longer than the overhead keeps at
  // least half its time, so that noise cannot make the rate unbounded.
  double work = std::max(seconds - result.callOverheadSeconds, 0.5 * seconds);
  table.points.push_back(ThroughputPoint{size, size / work, std::move(shape)});
}

void Calibrator::measureOverhead() {
  // The smallest calls a program makes: a copy of a few elements, and a
  // 4x4 matrix product. Their median is the fixed cost of a call.
  Buffer x(*device, 16), y(*device, 16);
  CleaveTensor in = x.tensor({16}), out = y.tensor({16});
  double copy = time([&] {
    check(cleave_cpu_copy(ctx, &in, 1, &out, 1, nullptr, nullptr), "copy");
  });
  CleaveTensor a[2] = {x.tensor({4, 4}), x.tensor({4, 4})};
  CleaveTensor c = y.tensor({4, 4});
  double product = time([&] {
    check(cleave_cpu_matmul(ctx, a, 2, &c, 1, nullptr, nullptr), "matmul");
  });
  result.callOverheadSeconds = std::min(copy, product);
}

void Calibrator::matmul(ThroughputTable &table, int64_t m, int64_t n,
                        int64_t k) {
  Buffer a(*device, m * k), b(*device, k * n), y(*device, m * n);
  CleaveTensor in[2] = {a.tensor({m, k}), b.tensor({k, n})};
  CleaveTensor out = y.tensor({m, n});
  double seconds = time([&] {
    check(cleave_cpu_matmul(ctx, in, 2, &out, 1, nullptr, nullptr), "matmul");
  });
  add(table, 2.0 * static_cast<double>(m * n * k), seconds,
      std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
}

void Calibrator::measureMatmul() {
  // Activations times weights, as a transformer's layers multiply them:
  // tens to hundreds of rows against square and wide weights.
  using Shapes = std::vector<std::array<int64_t, 3>>;
  Shapes products = {{16, 16, 16},     {32, 64, 64},     {32, 64, 192},
                     {32, 256, 256},   {64, 256, 1024},  {128, 512, 512},
                     {256, 512, 2048}, {512, 1024, 1024}};
  std::vector<int64_t> wide = {64, 256, 1024, 2048};
  if (options.quick) {
    products = {{16, 16, 16}, {32, 64, 192}, {32, 256, 256}};
    wide = {64, 256};
  }
  ThroughputTable &regular = table("matmul", true);
  for (auto [m, k, n] : products)
    matmul(regular, m, n, k);
  // A few rows against a wide weight: batch-1 inference, decode steps.
  ThroughputTable &skinny = table("matmul_skinny", true);
  for (int64_t n : wide)
    matmul(skinny, 4, n, n);
}

void Calibrator::conv(ThroughputTable &table, int64_t spatialRank,
                      int64_t channels, int64_t extent, int64_t kernel,
                      bool depthwise) {
  int64_t spatial = spatialRank == 2 ? extent * extent : extent;
  int64_t window = spatialRank == 2 ? kernel * kernel : kernel;
  int64_t perGroup = depthwise ? 1 : channels;
  Buffer x(*device, channels * spatial), y(*device, channels * spatial);
  Buffer w(*device, channels * perGroup * window);
  CleaveTensor in[2], out;
  int64_t pad = kernel / 2;
  std::vector<int64_t> ints = {spatialRank, depthwise ? channels : 1};
  if (spatialRank == 2) {
    in[0] = x.tensor({1, channels, extent, extent});
    in[1] = w.tensor({channels, perGroup, kernel, kernel});
    out = y.tensor({1, channels, extent, extent});
    ints.insert(ints.end(), {1, 1, pad, pad, pad, pad, 1, 1});
  } else {
    in[0] = x.tensor({1, channels, extent});
    in[1] = w.tensor({channels, perGroup, kernel});
    out = y.tensor({1, channels, extent});
    ints.insert(ints.end(), {1, pad, pad, 1});
  }
  // A bundle's program convolves with constant weights (its read-only
  // weight file), which the kernels pack once: time that path.
  struct ConstantWeights {
    ConstantWeights(CleaveContext *ctx, const Buffer &w, int64_t elements)
        : ctx(ctx) {
      ctx->constantWeights = w.get();
      ctx->constantWeightBytes = static_cast<std::size_t>(elements) * 4;
    }
    ~ConstantWeights() {
      ctx->constantWeights = nullptr;
      ctx->constantWeightBytes = 0;
    }
    CleaveContext *ctx;
  } constant(ctx, w, channels * perGroup * window);
  double seconds = time([&] {
    check(cleave_cpu_conv(ctx, in, 2, &out, 1, ints.data(), nullptr), "conv");
  });
  double flops = 2.0 * static_cast<double>(channels * perGroup * window) *
                 static_cast<double>(spatial);
  add(table, flops, seconds,
      "C" + std::to_string(channels) + " " + std::to_string(extent) +
          (spatialRank == 2 ? "x" + std::to_string(extent) : "") + " k" +
          std::to_string(kernel));
}

void Calibrator::measureConvolutions() {
  using Sizes = std::vector<std::pair<int64_t, int64_t>>;
  // (channels, spatial extent): from the early layers of a CNN (few
  // channels, large maps) to its late ones.
  Sizes dense = {{8, 16}, {8, 32}, {32, 32}, {64, 56}, {128, 28}, {256, 28}};
  Sizes depthwise = {{8, 16}, {32, 28}, {64, 56}, {256, 56}};
  Sizes line = {{16, 64}, {32, 256}, {128, 512}, {512, 512}};
  if (options.quick) {
    dense = {{8, 16}, {32, 16}};
    depthwise = {{16, 16}, {64, 16}};
    line = {{16, 64}, {64, 128}};
  }
  ThroughputTable &dense3 = table("conv", true);
  for (auto [c, h] : dense)
    conv(dense3, 2, c, h, 3, false);
  ThroughputTable &pointwise = table("conv_pointwise", true);
  for (auto [c, h] : dense)
    conv(pointwise, 2, c, h, 1, false);
  ThroughputTable &dw = table("conv_depthwise", true);
  for (auto [c, h] : depthwise)
    conv(dw, 2, c, h, 3, true);
  ThroughputTable &conv1d = table("conv_1d", true);
  for (auto [c, l] : line)
    conv(conv1d, 1, c, l, 3, false);
}

void Calibrator::measureMemory() {
  std::vector<int64_t> sizes = {256, 1024, 16384, 262144, 4194304};
  if (options.quick)
    sizes = {1024, 65536};
  int threads = ctx->numThreads;
  // The rows of softmax and layer normalisation (a sequence, a hidden
  // size) grow with the tensor: sqrt(n) / 2 elements, 16 for 1024.
  auto rowOf = [](int64_t n) {
    return static_cast<int64_t>(std::sqrt(static_cast<double>(n))) / 2;
  };
  ThroughputTable &copy = table("copy", false);
  auto shape = [](int64_t n) { return std::to_string(n) + " floats"; };
  for (int64_t n : sizes) {
    Buffer x(*device, n), y(*device, n);
    CleaveTensor in = x.tensor({n}), out = y.tensor({n});
    add(copy, 8.0 * n, time([&] {
          check(cleave_cpu_copy(ctx, &in, 1, &out, 1, nullptr, nullptr),
                "copy");
        }),
        shape(n));
  }
  ThroughputTable &elementwise = table("elementwise", false);
  for (int64_t n : sizes) {
    Buffer a(*device, n), b(*device, n), y(*device, n);
    add(elementwise, 12.0 * n, time([&] {
          parallelLoop(threads, n, [&](int64_t begin, int64_t end) {
            addRange(begin, end, a.get(), b.get(), y.get());
          });
        }),
        shape(n));
  }
  ThroughputTable &activation = table("activation", false);
  for (int64_t n : sizes) {
    Buffer x(*device, n), y(*device, n);
    add(activation, 8.0 * n, time([&] {
          parallelLoop(threads, n, [&](int64_t begin, int64_t end) {
            geluRange(begin, end, x.get(), y.get());
          });
        }),
        shape(n));
  }
  ThroughputTable &softmax = table("softmax", false);
  for (int64_t n : sizes) {
    int64_t row = rowOf(n);
    Buffer x(*device, n), y(*device, n);
    CleaveTensor in = x.tensor({n / row, row}), out = y.tensor({n / row, row});
    int64_t ints[2] = {1, 0};
    add(softmax, 8.0 * n, time([&] {
          check(cleave_cpu_softmax(ctx, &in, 1, &out, 1, ints, nullptr),
                "softmax");
        }),
        std::to_string(n / row) + "x" + std::to_string(row));
  }
  ThroughputTable &norm = table("normalization", false);
  for (int64_t n : sizes) {
    int64_t row = rowOf(n);
    Buffer x(*device, n), y(*device, n), scale(*device, row);
    CleaveTensor in[3] = {x.tensor({n / row, row}), scale.tensor({row}),
                          scale.tensor({row})};
    CleaveTensor out = y.tensor({n / row, row});
    int64_t ints[1] = {1};
    double floats[1] = {1e-5};
    add(norm, 8.0 * n, time([&] {
          check(cleave_cpu_layer_norm(ctx, in, 3, &out, 1, ints, floats),
                "layer_norm");
        }),
        std::to_string(n / row) + "x" + std::to_string(row));
  }
}

} // namespace

bool calibrateCpu(const CalibrationOptions &options, CpuCalibration &result,
                  std::string &error,
                  const std::function<void(const std::string &)> &progress) {
  Clock::time_point start = Clock::now();
  try {
    result = CpuCalibration();
    Calibrator calibrator(options, result);
    calibrator.progress = progress;
    calibrator.measureOverhead();
    calibrator.measureTables();
    // Target files want sizes strictly ascending; two problems of one size
    // keep the first.
    for (ThroughputTable &table : result.tables) {
      std::stable_sort(table.points.begin(), table.points.end(),
                       [](const ThroughputPoint &a, const ThroughputPoint &b) {
                         return a.size < b.size;
                       });
      table.points.erase(
          std::unique(table.points.begin(), table.points.end(),
                      [](const ThroughputPoint &a, const ThroughputPoint &b) {
                        return a.size == b.size;
                      }),
          table.points.end());
    }
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  result.elapsedSeconds = secondsSince(start);
  return true;
}

} // namespace cleave::rt
