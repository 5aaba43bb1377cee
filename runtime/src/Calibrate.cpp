//===- Calibrate.cpp - the CPU kernels timed ------------------------------===//
//
// Every measurement calls a kernel the way a program does (CleaveTensor
// descriptors over 64-byte aligned buffers, the CPU device's context, the
// highest x86-64 level of the kernels this CPU runs), warms it up, then
// takes the median of timed samples. A program calls a different kernel at
// every step, and a kernel that finds its own code and branch history
// still in the caches from its last call (as it does when called again and
// again) runs up to several times faster than in a program. So every call
// of a library kernel is timed alone, after an interlude of tiny calls of
// five other kernels: the code caches and branch predictors are as a
// program's neighbouring steps leave them.
//
// Where the problem's data is then depends on the program. One whose
// weights and activations fit in the cores' private caches finds them
// there, as its last run left them; one larger than the caches reads its
// weights from beyond them at every step. So every problem is timed both
// ways: resident (its data where its last call left it) and streamed
// (after the threads read a buffer twice the size of their private
// caches), and the cost model prices a stage by how much of it the caches
// hold. The fused loops and copies, too short for a clock read per call,
// are timed resident only, in batches of calls of one problem. Every
// table is measured in several passes, whose median rates each point
// keeps.
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
#include <fstream>
#include <functional>
#include <memory>
#include <omp.h>
#include <unistd.h>

namespace cleave::rt {
namespace {

/// matmul's ints and floats for a plain product: no epilogue.
constexpr int64_t kPlainProduct[] = {CLEAVE_EPILOGUE_NONE};
constexpr double kPlainProductBounds[] = {0.0, 0.0};

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The median of `values` (reordered), the upper one of an even count.
double median(std::vector<double> &values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2,
                   values.end());
  return values[values.size() / 2];
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

/// One problem of a table: the buffers it owns, the call that runs it, its
/// size (FLOPs or bytes moved) and what it is, for people.
struct Problem {
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::function<void()> call;
  double size = 0;
  std::string shape;
  /// A convolution's output positions per image (0 for other kernels).
  double pixels = 0;

  const Buffer &own(Device &device, int64_t elements) {
    buffers.push_back(std::make_unique<Buffer>(device, elements));
    return *buffers.back();
  }
};

/// Makes `elements` floats of `w` the context's constant weights (as a
/// bundle's read-only weight file is a session's) for the life of the
/// object: the kernels pack such weights once, as they do a program's.
class ConstantWeights {
public:
  ConstantWeights(CleaveContext *ctx, const Buffer &w, int64_t elements)
      : ctx(ctx) {
    ctx->constantWeights = w.get();
    ctx->constantWeightBytes = static_cast<std::size_t>(elements) * 4;
  }
  ~ConstantWeights() {
    ctx->constantWeights = nullptr;
    ctx->constantWeightBytes = 0;
  }
  ConstantWeights(const ConstantWeights &) = delete;
  ConstantWeights &operator=(const ConstantWeights &) = delete;

private:
  CleaveContext *ctx;
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

/// The level 2 cache of one core, in bytes: sysfs's description of CPU 0,
/// else the C library's; 1 MiB where neither says.
int64_t coreCacheBytes() {
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream levelFile(dir + "/level"), typeFile(dir + "/type"),
        sizeFile(dir + "/size");
    int level = 0;
    std::string type, size;
    if (!(levelFile >> level) || !(typeFile >> type) || !(sizeFile >> size))
      break;
    if (level != 2 || type == "Instruction" || size.empty())
      continue;
    int64_t scale = 1;
    if (size.back() == 'K')
      scale = 1024;
    else if (size.back() == 'M')
      scale = 1024 * 1024;
    int64_t value = std::atoll(size.c_str());
    if (value > 0)
      return value * scale;
  }
  if (long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE); bytes > 0)
    return bytes;
  return 1 << 20;
}

class Calibrator {
public:
  Calibrator(const CalibrationOptions &options, CpuCalibration &result)
      : options(options), result(result),
        device(createCpuDevice(options.threads)), ctx(device->context()) {
    result.cpuIsa = options.cpuIsa.empty() ? cpuLevelName(highestCpuLevel())
                                           : options.cpuIsa;
    ctx->cpuLevel = kernelCpuLevel(result.cpuIsa);
    result.threads = ctx->numThreads;
    result.cpuLevel = ctx->cpuLevel;
    result.cacheBytes = coreCacheBytes() * ctx->numThreads;
    result.convBlock = convBlock();
    // Twice the caches, so that reading it leaves none of a problem's data
    // in them.
    flushBuffer = std::make_unique<Buffer>(*device, result.cacheBytes / 2);
    budget =
        options.quick ? Budget{1, 0.002, 0.01, 15} : Budget{3, 0.03, 0.1, 30};
  }

  /// The channel block of oneDNN's kernels at the calibrated level, as a
  /// program built for it chooses (16 with AVX-512, else 8).
  int64_t convBlock() const { return ctx->cpuLevel >= 4 ? 16 : 8; }

  /// Measures every table `budget.passes` times, a pass over all of them
  /// after another, and keeps each point's median rate over the passes:
  /// on a machine whose load drifts, every point sees the same mix of it.
  void measureTables() {
    passes.resize(budget.passes);
    for (pass = 0; pass < budget.passes; ++pass) {
      measureReference();
      passes[pass].reserve(16);
      measureMatmul();
      measureConvolutions();
      measureRecurrent();
      measureAttention();
      measurePools();
      measureMemory();
    }
    measureReference();
    for (size_t index = 0; index < passes[0].size(); ++index) {
      ThroughputTable merged = passes[0][index];
      for (size_t point = 0; point < merged.points.size(); ++point) {
        auto overPasses = [&](double ThroughputPoint::*rate) {
          std::vector<double> rates;
          for (const std::vector<ThroughputTable> &tables : passes)
            rates.push_back(tables[index].points[point].*rate);
          return median(rates);
        };
        merged.points[point].perSecond =
            overPasses(&ThroughputPoint::perSecond);
        merged.points[point].streamedPerSecond =
            overPasses(&ThroughputPoint::streamedPerSecond);
      }
      result.tables.push_back(std::move(merged));
    }
  }

  void measureOverhead();

  std::function<void(const std::string &)> progress;

private:
  /// Times the reference problem once more (CpuCalibration::referenceRates).
  void measureReference();
  void measureMatmul();
  void measureConvolutions();
  void measureRecurrent();
  void measureAttention();
  void measurePools();
  void measureMemory();

  /// Median seconds of one call of `call`, which returns a kernel status.
  template <typename Fn> double time(Fn call);
  /// Median seconds of one call of each problem, the problems called in
  /// turn, each call timed alone.
  std::vector<double> timeInTurn(const std::vector<Problem> &problems);
  /// Median seconds of a call of `problem`, every call timed alone after
  /// the interlude, and, when `streamed`, after the flush.
  double timeAlone(const Problem &problem, bool streamed);
  /// Reads the flush buffer on every thread of the team.
  void flush();
  /// Adds the points of `problems`, each timed resident and streamed, to a
  /// new table.
  void addTimed(const std::string &name, bool compute,
                const std::vector<Problem> &problems);
  /// Adds a point of `size` (FLOPs or bytes) that a call of `seconds` did
  /// with its data resident, and of `streamedSeconds` (0: not measured)
  /// with its data out of the caches.
  void add(ThroughputTable &table, double size, double seconds,
           double streamedSeconds, std::string shape, double pixels = 0);
  ThroughputTable &table(const std::string &name, bool compute);

  void check(int32_t status, const char *kernel) {
    if (status != 0)
      throw Error(std::string("cleave_cpu_") + kernel +
                  " failed: " + ctx->error);
  }

  /// M x K activations times K x N constant `weights`.
  Problem matmul(int64_t m, int64_t n, int64_t k, const float *weights);
  Problem conv(int64_t spatialRank, int64_t channels, int64_t extent,
               int64_t kernel, bool depthwise, const float *weights);
  Problem lstm(int64_t hidden, int64_t steps);
  Problem attention(int64_t sequence, int64_t headSize);
  void measureConvolutionTable(
      const std::string &name, int64_t spatialRank, int64_t kernel,
      bool depthwise, const std::vector<std::pair<int64_t, int64_t>> &sizes);

  const CalibrationOptions &options;
  CpuCalibration &result;
  std::unique_ptr<Device> device;
  CleaveContext *ctx;
  Budget budget;
  /// The tables of each pass, and the pass being measured.
  std::vector<std::vector<ThroughputTable>> passes;
  int pass = 0;
  /// The tiny calls of other kernels run before every timed call
  /// (`measureOverhead` makes them).
  std::vector<Problem> interlude;
  /// Read before every streamed call: CpuCalibration::cacheBytes * 2.
  std::unique_ptr<Buffer> flushBuffer;
  /// What the flush reads, kept so that the reads are not optimised away.
  volatile float flushSink = 0;
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
  return median(samples);
}

/// What reading the clock twice costs, to be taken off every sample.
static double clockCost() {
  std::vector<double> reads;
  for (int i = 0; i < 101; ++i) {
    Clock::time_point before = Clock::now();
    reads.push_back(secondsSince(before));
  }
  return median(reads);
}

std::vector<double>
Calibrator::timeInTurn(const std::vector<Problem> &problems) {
  const double clock = clockCost();
  const double count = static_cast<double>(problems.size());
  Clock::time_point start = Clock::now();
  int rounds = 0;
  do {
    for (const Problem &problem : problems)
      problem.call();
    ++rounds;
  } while (secondsSince(start) < budget.warmupSeconds * count && rounds < 200);

  // Rounds until the table's time is spent, at least three; tiny problems
  // get many more samples than large ones would in that time.
  std::vector<std::vector<double>> samples(problems.size());
  start = Clock::now();
  for (int round = 0;
       round < 3 || (secondsSince(start) < budget.pointSeconds * count &&
                     round < 40 * budget.maxSamples);
       ++round)
    for (size_t i = 0; i < problems.size(); ++i) {
      Clock::time_point call = Clock::now();
      problems[i].call();
      samples[i].push_back(std::max(secondsSince(call) - clock, 1e-9));
    }
  std::vector<double> medians;
  for (std::vector<double> &times : samples)
    medians.push_back(median(times));
  return medians;
}

void Calibrator::flush() {
  const float *data = flushBuffer->get();
  const int64_t n = result.cacheBytes / 2;
  float sums[64] = {};
  auto read = [&](int64_t begin, int64_t end, float &sum) {
    // One float of every cache line is enough to bring the line in.
    for (int64_t i = begin; i < end; i += 16)
      sum += data[i];
  };
  int threads = std::clamp(ctx->numThreads, 1, 64);
  if (threads == 1) {
    read(0, n, sums[0]);
  } else {
#pragma omp parallel num_threads(threads)
    {
      int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
      read(n * me / team / 16 * 16, n * (me + 1) / team, sums[me]);
    }
  }
  float total = 0;
  for (float sum : sums)
    total += sum;
  flushSink = total;
}

double Calibrator::timeAlone(const Problem &problem, bool streamed) {
  const double clock = clockCost();
  auto before = [&] {
    for (const Problem &other : interlude)
      other.call();
    if (streamed)
      flush();
  };
  Clock::time_point start = Clock::now();
  int rounds = 0;
  do {
    before();
    problem.call();
    ++rounds;
  } while (secondsSince(start) < budget.warmupSeconds && rounds < 200);

  // Until the point's time is spent, at least three samples; tiny problems
  // get many more than large ones would in that time.
  std::vector<double> samples;
  start = Clock::now();
  while (samples.size() < 3 ||
         (secondsSince(start) < budget.pointSeconds &&
          static_cast<int>(samples.size()) < 40 * budget.maxSamples)) {
    before();
    Clock::time_point call = Clock::now();
    problem.call();
    samples.push_back(std::max(secondsSince(call) - clock, 1e-9));
  }
  return median(samples);
}

void Calibrator::addTimed(const std::string &name, bool compute,
                          const std::vector<Problem> &problems) {
  ThroughputTable &measured = table(name, compute);
  for (const Problem &problem : problems) {
    double resident = timeAlone(problem, false);
    double streamed = timeAlone(problem, true);
    add(measured, problem.size, resident, streamed, problem.shape,
        problem.pixels);
  }
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
                     double streamedSeconds, std::string shape, double pixels) {
  // The table holds the rate of the work itself: the cost model adds the
  // call overhead back to a kernel call, not to the fused loops (the
  // elementwise and activation tables), which call nothing. A call barely
  // longer than the overhead keeps at least half its time, so that noise
  // cannot make the rate unbounded.
  bool loop = table.name == "elementwise" || table.name == "activation";
  auto work = [&](double time) {
    return loop ? time
                : std::max(time - result.callOverheadSeconds, 0.5 * time);
  };
  // Reading data from beyond the caches cannot make a call faster: a
  // streamed time below the resident one is noise.
  double streamedRate =
      streamedSeconds > 0 ? size / work(std::max(streamedSeconds, seconds)) : 0;
  table.points.push_back(ThroughputPoint{
      size, size / work(seconds), streamedRate, std::move(shape), pixels});
}

void Calibrator::measureOverhead() {
  // The smallest calls a program makes, of five kernels in turn: a copy
  // of 16 floats, a 4x4 matrix product, transpose, softmax and layer
  // normalisation. The median of their times is the fixed cost of a call;
  // they are also the interlude before every timed call of the tables.
  std::vector<Problem> &calls = interlude;
  auto tiny = [&](auto run) {
    Problem problem;
    const Buffer &x = problem.own(*device, 16);
    const Buffer &y = problem.own(*device, 16);
    problem.call = [run, in = x.tensor({4, 4}), out = y.tensor({4, 4})]() {
      run(in, out);
    };
    calls.push_back(std::move(problem));
  };
  tiny([this](CleaveTensor in, CleaveTensor out) {
    check(cleave_cpu_copy(ctx, &in, 1, &out, 1, nullptr, nullptr), "copy");
  });
  tiny([this](CleaveTensor in, CleaveTensor out) {
    CleaveTensor both[2] = {in, in};
    check(cleave_cpu_matmul(ctx, both, 2, &out, 1, kPlainProduct,
                            kPlainProductBounds),
          "matmul");
  });
  tiny([this](CleaveTensor in, CleaveTensor out) {
    static const int64_t perm[2] = {1, 0};
    check(cleave_cpu_transpose(ctx, &in, 1, &out, 1, perm, nullptr),
          "transpose");
  });
  tiny([this](CleaveTensor in, CleaveTensor out) {
    static const int64_t ints[2] = {1, 0};
    check(cleave_cpu_softmax(ctx, &in, 1, &out, 1, ints, nullptr), "softmax");
  });
  tiny([this](CleaveTensor in, CleaveTensor out) {
    CleaveTensor scale = in;
    scale.rank = 1;
    CleaveTensor args[3] = {in, scale, scale};
    static const int64_t ints[1] = {1};
    static const double floats[1] = {1e-5};
    check(cleave_cpu_layer_norm(ctx, args, 3, &out, 1, ints, floats),
          "layer_norm");
  });
  std::vector<double> seconds = timeInTurn(calls);
  result.callOverheadSeconds = median(seconds);
}

Problem Calibrator::matmul(int64_t m, int64_t n, int64_t k,
                           const float *weights) {
  Problem problem;
  const Buffer &a = problem.own(*device, m * k);
  const Buffer &y = problem.own(*device, m * n);
  CleaveTensor b{};
  b.data = const_cast<float *>(weights);
  b.dtype = CLEAVE_F32;
  b.rank = 2;
  b.shape[0] = k;
  b.shape[1] = n;
  std::array<CleaveTensor, 2> in = {a.tensor({m, k}), b};
  CleaveTensor out = y.tensor({m, n});
  problem.call = [this, in, out]() mutable {
    check(cleave_cpu_matmul(ctx, in.data(), 2, &out, 1, kPlainProduct,
                            kPlainProductBounds),
          "matmul");
  };
  problem.size = 2.0 * static_cast<double>(m * n * k);
  problem.shape =
      std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  return problem;
}

void Calibrator::measureReference() {
  // A product of transformer-layer size, large enough that the call
  // overhead does not count and small enough to take milliseconds.
  constexpr int64_t m = 128, k = 512, n = 512;
  Buffer weights(*device, k * n);
  ConstantWeights constant(ctx, weights, k * n);
  Problem problem = matmul(m, n, k, weights.get());
  // Longer than a point's warm-up even in a quick calibration: the first
  // reading must not include packing the weights or starting the team.
  // The very first, taken right after the process starts, warms up longer:
  // with 0.05 s it read about 20% below the later ones (127 and 128 against
  // 121-167 GFLOP/s in two calibrations), which the drift then reported.
  const double warmup = result.referenceRates.empty() ? 0.5 : 0.05;
  const Clock::time_point start = Clock::now();
  while (secondsSince(start) < warmup)
    problem.call();
  const double seconds = time(problem.call);
  result.referenceShape = "matmul " + problem.shape;
  result.referenceFlops = problem.size;
  result.referenceRates.push_back(problem.size / seconds);
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
  // A few rows against a wide weight: batch-1 inference, decode steps.
  for (int64_t n : wide)
    products.push_back({4, n, n});
  // A program's weights are constant (the kernels pack them once): every
  // product's weights lie in one buffer that the context takes as such.
  std::vector<int64_t> offsets;
  int64_t elements = 0;
  for (auto [m, k, n] : products) {
    offsets.push_back(elements);
    elements += (k * n + 15) / 16 * 16;
  }
  Buffer weights(*device, elements);
  ConstantWeights constant(ctx, weights, elements);
  std::vector<Problem> regular, skinny;
  for (size_t i = 0; i < products.size(); ++i) {
    auto [m, k, n] = products[i];
    std::vector<Problem> &table =
        i + wide.size() < products.size() ? regular : skinny;
    table.push_back(matmul(m, n, k, weights.get() + offsets[i]));
  }
  addTimed("matmul", true, regular);
  addTimed("matmul_skinny", true, skinny);
}

Problem Calibrator::conv(int64_t spatialRank, int64_t channels, int64_t extent,
                         int64_t kernel, bool depthwise, const float *weights) {
  int64_t spatial = spatialRank == 2 ? extent * extent : extent;
  int64_t perGroup = depthwise ? 1 : channels;
  Problem problem;
  const Buffer &x = problem.own(*device, channels * spatial);
  const Buffer &y = problem.own(*device, channels * spatial);
  CleaveTensor w{};
  w.data = const_cast<float *>(weights);
  w.dtype = CLEAVE_F32;
  std::array<CleaveTensor, 2> in;
  CleaveTensor out;
  int64_t pad = kernel / 2;
  std::vector<int64_t> ints = {spatialRank, depthwise ? channels : 1};
  if (spatialRank == 2) {
    in[0] = x.tensor({1, channels, extent, extent});
    w.rank = 4;
    w.shape[0] = channels, w.shape[1] = perGroup;
    w.shape[2] = w.shape[3] = kernel;
    out = y.tensor({1, channels, extent, extent});
    ints.insert(ints.end(), {1, 1, pad, pad, pad, pad, 1, 1});
  } else {
    in[0] = x.tensor({1, channels, extent});
    w.rank = 3;
    w.shape[0] = channels, w.shape[1] = perGroup, w.shape[2] = kernel;
    out = y.tensor({1, channels, extent});
    ints.insert(ints.end(), {1, pad, pad, 1});
  }
  in[1] = w;
  // No epilogue. X and Y as a program holds them around the convolution:
  // a CNN's program keeps the activations between its convolutions in
  // oneDNN's channel blocks (16 channels at x86-64-v4, else 8) where the
  // block divides the channels and the convolution is large enough to
  // run on oneDNN (DeviceProgram.cpp, runsBlocked). In NCHW a call
  // reorders X and Y on either side, which ResNet-50's pointwise
  // convolutions on 56x56 maps never pay (their table rates were 35-40%
  // below their times in a program), and a depthwise one runs on another
  // kernel. Convolutions whose channels the block does not divide pay the
  // reorders and the padding to whole blocks in the cost model instead
  // (`getChannelBlocking`).
  const int64_t block = convBlock();
  const int64_t multiplyAdds = channels * perGroup *
                               (spatialRank == 2 ? kernel * kernel : kernel) *
                               spatial;
  const int64_t layout = spatialRank == 2 && channels % block == 0 &&
                                 multiplyAdds >= CLEAVE_CONV_BLOCKED_MACS
                             ? block
                             : 0;
  ints.insert(ints.end(), {CLEAVE_EPILOGUE_NONE, layout, layout});
  problem.call = [this, in, out, ints]() mutable {
    static const double bounds[2] = {0, 0};
    check(cleave_cpu_conv(ctx, in.data(), 2, &out, 1, ints.data(), bounds),
          "conv");
  };
  int64_t window = spatialRank == 2 ? kernel * kernel : kernel;
  problem.size = 2.0 * static_cast<double>(channels * perGroup * window) *
                 static_cast<double>(spatial);
  problem.shape = "C" + std::to_string(channels) + " " +
                  std::to_string(extent) +
                  (spatialRank == 2 ? "x" + std::to_string(extent) : "") +
                  " k" + std::to_string(kernel) +
                  (layout ? " nChw" + std::to_string(layout) + "c" : "");
  // 2-D tables are by map size and FLOPs (the cost model interpolates in
  // both); the 1-D one by FLOPs alone.
  if (spatialRank == 2)
    problem.pixels = static_cast<double>(spatial);
  return problem;
}

void Calibrator::measureConvolutionTable(
    const std::string &name, int64_t spatialRank, int64_t kernel,
    bool depthwise, const std::vector<std::pair<int64_t, int64_t>> &sizes) {
  // A bundle's program convolves with constant weights (its read-only
  // weight file), which the kernels pack once: the table's weights lie in
  // one buffer that the context takes as constant, as it takes a bundle's.
  int64_t window = spatialRank == 2 ? kernel * kernel : kernel;
  std::vector<int64_t> offsets;
  int64_t elements = 0;
  for (auto [channels, extent] : sizes) {
    offsets.push_back(elements);
    // 16 floats apart: every problem's weights 64-byte aligned.
    elements += (channels * (depthwise ? 1 : channels) * window + 15) / 16 * 16;
  }
  Buffer weights(*device, elements);
  ConstantWeights constant(ctx, weights, elements);
  std::vector<Problem> problems;
  for (size_t i = 0; i < sizes.size(); ++i)
    problems.push_back(conv(spatialRank, sizes[i].first, sizes[i].second,
                            kernel, depthwise, weights.get() + offsets[i]));
  addTimed(name, true, problems);
}

void Calibrator::measureConvolutions() {
  using Sizes = std::vector<std::pair<int64_t, int64_t>>;
  // (channels, spatial extent) on a grid: a convolution of many channels
  // on a small map (a CNN's last layers, or any on a small image) runs far
  // below the rate of one of the same FLOPs on a large map, so the 2-D
  // tables are by map size too. Problems above kMaxFlops are left out.
  constexpr double kMaxFlops = 1.5e9;
  auto grid = [&](const std::vector<int64_t> &channels,
                  const std::vector<int64_t> &extents, int64_t window,
                  bool depthwise) {
    Sizes sizes;
    for (int64_t extent : extents)
      for (int64_t c : channels)
        if (2.0 * c * (depthwise ? 1 : c) * window * extent * extent <=
            kMaxFlops)
          sizes.emplace_back(c, extent);
    return sizes;
  };
  std::vector<int64_t> channels = {16, 64, 256, 512};
  std::vector<int64_t> depthwiseChannels = {16, 64, 256};
  std::vector<int64_t> extents = {1, 2, 4, 8, 16, 32, 56};
  std::vector<int64_t> depthwiseExtents = {1, 2, 4, 8, 16, 32, 56, 112};
  Sizes line = {{16, 64}, {32, 256}, {128, 512}, {512, 512}};
  if (options.quick) {
    channels = depthwiseChannels = {8, 32};
    extents = {2, 16};
    // 32 channels on 32x32: a depthwise problem a program holds blocked.
    depthwiseExtents = {2, 32};
    line = {{16, 64}, {64, 128}};
  }
  measureConvolutionTable("conv", 2, 3, false,
                          grid(channels, extents, 9, false));
  measureConvolutionTable("conv_pointwise", 2, 1, false,
                          grid(channels, extents, 1, false));
  measureConvolutionTable("conv_depthwise", 2, 3, true,
                          grid(depthwiseChannels, depthwiseExtents, 9, true));
  measureConvolutionTable("conv_1d", 1, 3, false, line);
}

Problem Calibrator::lstm(int64_t hidden, int64_t steps) {
  // One direction over `steps` time steps of one sequence, input as wide
  // as the state, with biases: a speech or language model's layer.
  const int64_t gates = 4 * hidden;
  Problem problem;
  const Buffer &x = problem.own(*device, steps * hidden);
  const Buffer &w = problem.own(*device, gates * hidden);
  const Buffer &r = problem.own(*device, gates * hidden);
  const Buffer &b = problem.own(*device, 2 * gates);
  const Buffer &state = problem.own(*device, hidden);
  const Buffer &y = problem.own(*device, steps * hidden);
  const Buffer &yh = problem.own(*device, hidden);
  const Buffer &yc = problem.own(*device, hidden);
  std::array<CleaveTensor, 7> in = {x.tensor({steps, 1, hidden}),
                                    w.tensor({1, gates, hidden}),
                                    r.tensor({1, gates, hidden}),
                                    b.tensor({1, 2 * gates}),
                                    state.tensor({1, 1, hidden}),
                                    state.tensor({1, 1, hidden}),
                                    CleaveTensor{}};
  std::array<CleaveTensor, 3> out = {y.tensor({steps, 1, 1, hidden}),
                                     yh.tensor({1, 1, hidden}),
                                     yc.tensor({1, 1, hidden})};
  // Forward, `hidden` units, no input-forget coupling, the default
  // activations, no clipping.
  std::array<int64_t, 4> ints = {CLEAVE_RNN_FORWARD, hidden, 0, 0};
  std::array<double, 1> floats = {0.0};
  problem.call = [this, in, out, ints, floats]() mutable {
    check(cleave_cpu_lstm(ctx, in.data(), 7, out.data(), 3, ints.data(),
                          floats.data()),
          "lstm");
  };
  // FLOPs as the cost model counts them (RecurrentCostModel): per step the
  // two products of the stacked gates, 9 elementwise operations per unit
  // and the two bias adds per gate.
  problem.size =
      static_cast<double>(steps) *
      static_cast<double>(2 * gates * (2 * hidden) + (9 + 2 * 4) * hidden);
  problem.shape = "H" + std::to_string(hidden) + " T" + std::to_string(steps);
  return problem;
}

void Calibrator::measureRecurrent() {
  std::vector<int64_t> hidden = {16, 32, 64, 128, 256, 512};
  if (options.quick)
    hidden = {16, 64};
  std::vector<Problem> problems;
  for (int64_t h : hidden)
    problems.push_back(lstm(h, 16));
  addTimed("recurrent", true, problems);
}

Problem Calibrator::attention(int64_t sequence, int64_t headSize) {
  // Self-attention of one sequence over 4 heads, no mask.
  constexpr int64_t kHeads = 4;
  const int64_t elements = kHeads * sequence * headSize;
  Problem problem;
  const Buffer &q = problem.own(*device, elements);
  const Buffer &k = problem.own(*device, elements);
  const Buffer &v = problem.own(*device, elements);
  const Buffer &y = problem.own(*device, elements);
  std::array<CleaveTensor, 4> in = {q.tensor({1, kHeads, sequence, headSize}),
                                    k.tensor({1, kHeads, sequence, headSize}),
                                    v.tensor({1, kHeads, sequence, headSize}),
                                    CleaveTensor{}};
  CleaveTensor out = y.tensor({1, kHeads, sequence, headSize});
  // Heads of queries and of keys and values, not causal, NaN kept; the
  // scale 1/sqrt(D), no softcap.
  std::array<int64_t, 4> ints = {kHeads, kHeads, 0, 0};
  std::array<double, 2> floats = {1.0 / std::sqrt(double(headSize)), 0.0};
  problem.call = [this, in, out, ints, floats]() mutable {
    check(cleave_cpu_attention(ctx, in.data(), 4, &out, 1, ints.data(),
                               floats.data()),
          "attention");
  };
  // FLOPs as the cost model counts them (AttentionCostModel): per score
  // the dot product, 5 for the scale, mask and softmax, and its share of
  // the weighted values.
  problem.size = static_cast<double>(kHeads * sequence * sequence) *
                 static_cast<double>(2 * headSize + 5 + 2 * headSize);
  problem.shape =
      "S" + std::to_string(sequence) + " D" + std::to_string(headSize);
  return problem;
}

void Calibrator::measureAttention() {
  std::vector<std::pair<int64_t, int64_t>> shapes = {
      {16, 16}, {64, 16}, {160, 16}, {128, 64}, {512, 64}};
  if (options.quick)
    shapes = {{16, 16}, {64, 16}};
  std::vector<Problem> problems;
  for (auto [sequence, headSize] : shapes)
    problems.push_back(attention(sequence, headSize));
  addTimed("attention", true, problems);
}

void Calibrator::measurePools() {
  // A CNN's stem pool: 3x3, stride 2, padded by 1, over C channels of an
  // E x E map (one image), by window comparisons (ascending).
  std::vector<std::pair<int64_t, int64_t>> shapes = {
      {16, 8}, {64, 16}, {64, 32}, {64, 56}, {128, 56}, {64, 112}};
  if (options.quick)
    shapes = {{16, 8}, {64, 32}};
  std::vector<Problem> problems;
  for (auto [channels, extent] : shapes) {
    const int64_t out = (extent + 2 - 3) / 2 + 1;
    Problem problem;
    const Buffer &x = problem.own(*device, channels * extent * extent);
    const Buffer &y = problem.own(*device, channels * out * out);
    CleaveTensor in = x.tensor({1, channels, extent, extent});
    CleaveTensor result = y.tensor({1, channels, out, out});
    problem.call = [this, in, result]() mutable {
      // Two spatial dimensions: kernel, strides, pads, dilations, no ceil.
      static const int64_t ints[] = {2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0};
      check(cleave_cpu_max_pool(ctx, &in, 1, &result, 1, ints, nullptr),
            "max_pool");
    };
    // As MaxPoolCostModel counts: a comparison per window element.
    problem.size = 9.0 * static_cast<double>(channels * out * out);
    problem.shape = "C" + std::to_string(channels) + " " +
                    std::to_string(extent) + "x" + std::to_string(extent) +
                    " k3 s2";
    problems.push_back(std::move(problem));
  }
  addTimed("pool", true, problems);
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
        0, shape(n));
  }
  ThroughputTable &elementwise = table("elementwise", false);
  for (int64_t n : sizes) {
    Buffer a(*device, n), b(*device, n), y(*device, n);
    add(elementwise, 12.0 * n, time([&] {
          parallelLoop(threads, n, [&](int64_t begin, int64_t end) {
            addRange(begin, end, a.get(), b.get(), y.get());
          });
        }),
        0, shape(n));
  }
  ThroughputTable &activation = table("activation", false);
  for (int64_t n : sizes) {
    Buffer x(*device, n), y(*device, n);
    add(activation, 8.0 * n, time([&] {
          parallelLoop(threads, n, [&](int64_t begin, int64_t end) {
            geluRange(begin, end, x.get(), y.get());
          });
        }),
        0, shape(n));
  }
  // A transpose as attention's: (1, S, 4, 16) to (1, 4, S, 16).
  std::vector<Problem> transposes;
  for (int64_t n : sizes) {
    Problem problem;
    const Buffer &x = problem.own(*device, n);
    const Buffer &y = problem.own(*device, n);
    int64_t rows = n / 64;
    CleaveTensor in = x.tensor({1, rows, 4, 16});
    CleaveTensor out = y.tensor({1, 4, rows, 16});
    problem.call = [this, in, out]() mutable {
      static const int64_t perm[4] = {0, 2, 1, 3};
      check(cleave_cpu_transpose(ctx, &in, 1, &out, 1, perm, nullptr),
            "transpose");
    };
    problem.size = 8.0 * n;
    problem.shape = "1x" + std::to_string(rows) + "x4x16";
    transposes.push_back(std::move(problem));
  }
  addTimed("transpose", false, transposes);

  std::vector<Problem> softmaxes;
  for (int64_t n : sizes) {
    int64_t row = rowOf(n);
    Problem problem;
    const Buffer &x = problem.own(*device, n);
    const Buffer &y = problem.own(*device, n);
    CleaveTensor in = x.tensor({n / row, row}), out = y.tensor({n / row, row});
    problem.call = [this, in, out]() mutable {
      static const int64_t ints[2] = {1, 0};
      check(cleave_cpu_softmax(ctx, &in, 1, &out, 1, ints, nullptr), "softmax");
    };
    problem.size = 8.0 * n;
    problem.shape = std::to_string(n / row) + "x" + std::to_string(row);
    softmaxes.push_back(std::move(problem));
  }
  addTimed("softmax", false, softmaxes);

  std::vector<Problem> norms;
  for (int64_t n : sizes) {
    int64_t row = rowOf(n);
    Problem problem;
    const Buffer &x = problem.own(*device, n);
    const Buffer &y = problem.own(*device, n);
    const Buffer &scale = problem.own(*device, row);
    std::array<CleaveTensor, 3> in = {x.tensor({n / row, row}),
                                      scale.tensor({row}), scale.tensor({row})};
    CleaveTensor out = y.tensor({n / row, row});
    problem.call = [this, in, out]() mutable {
      static const int64_t ints[1] = {1};
      static const double floats[1] = {1e-5};
      check(cleave_cpu_layer_norm(ctx, in.data(), 3, &out, 1, ints, floats),
            "layer_norm");
    };
    problem.size = 8.0 * n;
    problem.shape = std::to_string(n / row) + "x" + std::to_string(row);
    norms.push_back(std::move(problem));
  }
  addTimed("normalization", false, norms);
}

} // namespace

double CpuCalibration::drift() const {
  if (referenceRates.empty())
    return 0;
  auto [slowest, fastest] =
      std::minmax_element(referenceRates.begin(), referenceRates.end());
  return *slowest > 0 ? (*fastest - *slowest) / *slowest : 0;
}

const char *cpuLevelName(int level) {
  static const char *const names[] = {"x86-64", "x86-64-v2", "x86-64-v3",
                                      "x86-64-v4"};
  return names[std::clamp(level, 1, 4) - 1];
}

int highestCpuLevel() { return kernelCpuLevel("native"); }

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
    // Target files want sizes strictly ascending (on each map size); two
    // problems of one size keep the first.
    for (ThroughputTable &table : result.tables) {
      std::stable_sort(table.points.begin(), table.points.end(),
                       [](const ThroughputPoint &a, const ThroughputPoint &b) {
                         return std::make_pair(a.pixels, a.size) <
                                std::make_pair(b.pixels, b.size);
                       });
      table.points.erase(
          std::unique(table.points.begin(), table.points.end(),
                      [](const ThroughputPoint &a, const ThroughputPoint &b) {
                        return a.pixels == b.pixels && a.size == b.size;
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
