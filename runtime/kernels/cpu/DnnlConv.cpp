//===- DnnlConv.cpp - forward convolutions through oneDNN -----------------===//
//
// oneDNN's fast convolutions read and write channel-blocked layouts
// (nChw8c on AVX2, nChw16c on AVX-512) and weights blocked to match. The
// program keeps activations in its plain layout, so a call reorders X in
// and Y out through scratch memory; on small maps that costs far less than
// what the blocked kernels save (docs/PERFORMANCE.md, "The CPU kernel
// work"). Weights are repacked once when they are constant: the context's
// kernel cache keeps, per convolution shape, the primitive and the
// reorders, and per (weights address, shape) the packed copy. Weights the
// program may write (training updates them in place) are repacked on every
// call, never cached: an address says nothing about their bytes.
//
// One context runs one kernel at a time (its scratch memory is shared in
// the same way), so the cache needs no lock; sessions running on several
// threads each have their own context and cache. oneDNN is built on the
// same OpenMP runtime as the kernels and sizes its parallel regions by
// omp_get_max_threads(), both when it makes a primitive (which fixes how
// the work is split) and when it runs one, so both happen with the calling
// thread's team size set to the session's thread count.
//
//===----------------------------------------------------------------------===//

#include "DnnlConv.h"

#include <dnnl.hpp>

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <omp.h>

namespace cleave::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;

/// Sets the calling thread's OpenMP team size for the life of the object.
class TeamSize {
public:
  explicit TeamSize(int threads) : saved(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~TeamSize() { omp_set_num_threads(saved); }
  TeamSize(const TeamSize &) = delete;
  TeamSize &operator=(const TeamSize &) = delete;

private:
  int saved;
};

/// A convolution shape as oneDNN takes it: its primitive, and the reorders
/// between the program's layouts and the ones the primitive chose (absent
/// where they are the same).
struct ConvPlan {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  memory::desc plainX, plainW, plainY, biasDesc;
  std::optional<dnnl::reorder> xIn, wIn, yOut;
};

/// The kernel cache of a context (cleave_rt_kernel_cache).
struct KernelCache {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  /// By convolutionKey().
  std::map<std::vector<int64_t>, std::unique_ptr<ConvPlan>> plans;
  /// Constant weights in the layout of a plan, by their address and plan.
  std::map<std::pair<const void *, const ConvPlan *>, memory> packed;
};

void *createKernelCache() {
  try {
    return new KernelCache;
  } catch (const std::exception &) {
    return nullptr;
  }
}

void destroyKernelCache(void *cache) {
  delete static_cast<KernelCache *>(cache);
}

std::vector<int64_t> convolutionKey(const ConvShape &s, bool bias,
                                    int threads) {
  const WindowGeometry &g = s.window;
  std::vector<int64_t> key = {s.spatial,     g.batch, g.channels, s.group,
                              s.outChannels, bias,    threads};
  for (const int64_t *values :
       {g.in, g.out, g.kernel, g.stride, g.padBegin, g.padEnd, g.dilation})
    key.insert(key.end(), values, values + kMaxSpatial);
  return key;
}

/// The last `spatial` of the geometry's values, less `minus`.
memory::dims ownSpatial(const int64_t *values, int spatial, int64_t minus = 0) {
  memory::dims dims;
  for (int i = kMaxSpatial - spatial; i < kMaxSpatial; ++i)
    dims.push_back(values[i] - minus);
  return dims;
}

memory::dims concat(memory::dims front, const memory::dims &back) {
  front.insert(front.end(), back.begin(), back.end());
  return front;
}

std::optional<dnnl::reorder> reorderIfNeeded(const dnnl::engine &engine,
                                             const memory::desc &from,
                                             const memory::desc &to) {
  if (from == to)
    return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
}

std::unique_ptr<ConvPlan> makePlan(const dnnl::engine &engine,
                                   const ConvShape &s, bool bias) {
  const WindowGeometry &g = s.window;
  const int n = s.spatial;
  static const Tag activations[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
  static const Tag weights[] = {Tag::oiw, Tag::oihw, Tag::oidhw};
  static const Tag groupedWeights[] = {Tag::goiw, Tag::goihw, Tag::goidhw};
  const int64_t perGroup = s.outChannels / s.group;
  const memory::dims kernel = ownSpatial(g.kernel, n);
  memory::dims xDims = concat({g.batch, g.channels}, ownSpatial(g.in, n));
  memory::dims yDims = concat({g.batch, s.outChannels}, ownSpatial(g.out, n));
  // ONNX's (M, C / group, kernel...) is oneDNN's (group, M / group,
  // C / group, kernel...) in the same order.
  memory::dims wDims =
      s.group > 1 ? concat({s.group, perGroup, g.channels / s.group}, kernel)
                  : concat({s.outChannels, g.channels}, kernel);

  auto plan = std::make_unique<ConvPlan>();
  plan->plainX = memory::desc(xDims, kF32, activations[n - 1]);
  plan->plainY = memory::desc(yDims, kF32, activations[n - 1]);
  plan->plainW = memory::desc(
      wDims, kF32, s.group > 1 ? groupedWeights[n - 1] : weights[n - 1]);
  plan->biasDesc = memory::desc({s.outChannels}, kF32, Tag::a);
  const memory::desc anyX(xDims, kF32, Tag::any), anyY(yDims, kF32, Tag::any),
      anyW(wDims, kF32, Tag::any);
  const memory::dims strides = ownSpatial(g.stride, n);
  // oneDNN counts dilation from 0 (no gap between taps).
  const memory::dims dilations = ownSpatial(g.dilation, n, 1);
  const memory::dims padBegin = ownSpatial(g.padBegin, n);
  const memory::dims padEnd = ownSpatial(g.padEnd, n);
  using Conv = dnnl::convolution_forward;
  const auto desc =
      bias ? Conv::desc(dnnl::prop_kind::forward_inference,
                        dnnl::algorithm::convolution_direct, anyX, anyW,
                        plan->biasDesc, anyY, strides, dilations, padBegin,
                        padEnd)
           : Conv::desc(dnnl::prop_kind::forward_inference,
                        dnnl::algorithm::convolution_direct, anyX, anyW, anyY,
                        strides, dilations, padBegin, padEnd);
  // Its scratchpad comes from the runtime's scratch memory.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  plan->pd = Conv::primitive_desc(desc, attr, engine);
  plan->conv = Conv(plan->pd);
  plan->xIn = reorderIfNeeded(engine, plan->plainX, plan->pd.src_desc());
  plan->wIn = reorderIfNeeded(engine, plan->plainW, plan->pd.weights_desc());
  plan->yOut = reorderIfNeeded(engine, plan->pd.dst_desc(), plan->plainY);
  return plan;
}

/// Splits one block of scratch memory into 64-byte aligned parts.
class ScratchLayout {
public:
  size_t add(size_t bytes) {
    size_t at = total;
    total += (bytes + 63) / 64 * 64;
    return at;
  }
  size_t size() const { return total; }

private:
  size_t total = 0;
};

/// The weights in the plan's layout: `w` itself where that is ONNX's,
/// else a copy repacked once for constant weights, or into `scratch` on
/// every call for writable ones.
memory packedWeights(CleaveContext *ctx, KernelCache &cache, ConvPlan &plan,
                     const float *w, void *scratch) {
  const dnnl::engine &engine = cache.engine;
  memory plain(plan.plainW, engine, const_cast<float *>(w));
  if (!plan.wIn)
    return plain;
  const size_t bytes = plan.plainW.get_size();
  if (!cleave_rt_constant_weights(ctx, w, bytes)) {
    memory packed(plan.pd.weights_desc(), engine, scratch);
    plan.wIn->execute(cache.stream, plain, packed);
    return packed;
  }
  auto key = std::make_pair(static_cast<const void *>(w), &plan);
  auto found = cache.packed.find(key);
  if (found != cache.packed.end())
    return found->second;
  memory packed(plan.pd.weights_desc(), engine);
  plan.wIn->execute(cache.stream, plain, packed);
  cache.packed.emplace(key, packed);
  return packed;
}

int32_t runPlan(CleaveContext *ctx, KernelCache &cache, ConvPlan &plan,
                const float *x, const float *w, const float *bias, float *y) {
  const dnnl::engine &engine = cache.engine;
  ScratchLayout layout;
  const size_t xAt = plan.xIn ? layout.add(plan.pd.src_desc().get_size()) : 0;
  const size_t yAt = plan.yOut ? layout.add(plan.pd.dst_desc().get_size()) : 0;
  const size_t wAt =
      plan.wIn ? layout.add(plan.pd.weights_desc().get_size()) : 0;
  const size_t padAt = layout.add(plan.pd.scratchpad_desc().get_size());
  char *scratch = nullptr;
  if (layout.size()) {
    scratch = static_cast<char *>(cleave_rt_scratch(ctx, layout.size()));
    if (!scratch)
      return 1;
  }

  memory plainX(plan.plainX, engine, const_cast<float *>(x));
  memory plainY(plan.plainY, engine, y);
  memory src = plainX, dst = plainY;
  if (plan.xIn) {
    src = memory(plan.pd.src_desc(), engine, scratch + xAt);
    plan.xIn->execute(cache.stream, plainX, src);
  }
  if (plan.yOut)
    dst = memory(plan.pd.dst_desc(), engine, scratch + yAt);
  std::unordered_map<int, memory> arguments = {
      {DNNL_ARG_SRC, src},
      {DNNL_ARG_WEIGHTS, packedWeights(ctx, cache, plan, w, scratch + wAt)},
      {DNNL_ARG_DST, dst},
      {DNNL_ARG_SCRATCHPAD,
       memory(plan.pd.scratchpad_desc(), engine, scratch + padAt)}};
  if (bias)
    arguments.emplace(DNNL_ARG_BIAS,
                      memory(plan.biasDesc, engine, const_cast<float *>(bias)));
  plan.conv.execute(cache.stream, arguments);
  if (plan.yOut)
    plan.yOut->execute(cache.stream, dst, plainY);
  cache.stream.wait();
  return 0;
}

} // namespace

int32_t dnnlConv(CleaveContext *ctx, const ConvShape &shape, const float *x,
                 const float *w, const float *bias, float *y) {
  auto *cache = static_cast<KernelCache *>(
      cleave_rt_kernel_cache(ctx, createKernelCache, destroyKernelCache));
  if (!cache)
    return 1;
  const int threads = numThreads(ctx);
  TeamSize team(threads);
  try {
    std::unique_ptr<ConvPlan> &plan =
        cache->plans[convolutionKey(shape, bias != nullptr, threads)];
    if (!plan)
      plan = makePlan(cache->engine, shape, bias != nullptr);
    return runPlan(ctx, *cache, *plan, x, w, bias, y);
  } catch (const dnnl::error &e) {
    return fail(ctx, "conv", "oneDNN: %s (status %d)", e.what(),
                static_cast<int>(e.status));
  } catch (const std::exception &e) {
    return fail(ctx, "conv", "%s", e.what());
  }
}

} // namespace cleave::cpu
