//===- Dnnl.cpp - convolutions and matrix products through oneDNN ---------===//
//
// oneDNN's fast convolutions read and write channel-blocked layouts
// (nChw8c on AVX2, nChw16c on AVX-512) and weights blocked to match. The
// program keeps the activations between such convolutions blocked (conv's
// xBlock and yBlock; docs/codegen.md, lowering step 8), and the primitive
// is asked for those layouts; where X or Y is NCHW (the graph's ends, next
// to a pool) oneDNN chooses, and a call reorders through scratch memory.
// Only constant weights come here, repacked once: the context's
// kernel cache keeps, per convolution shape, the primitive and the
// reorders, and per (weights address, shape) the packed copy. Weights the
// program may write (training updates them in place) run on Conv.cpp's
// kernels: an address says nothing about their bytes.
//
// Matrix products of constant weights above a few hundred thousand
// multiply-adds come here too (Gemm.cpp says why): oneDNN's matmul reads
// the activations and writes the result in the program's row-major
// layout, and only the weights are repacked, once, like a convolution's.
// Where oneDNN's kernel for a product packs nothing (below AVX-512), the
// product is declined and stays on OpenBLAS.
//
// Packed weights are first looked for among those the bundle stores
// (cleave_rt_find_packed_weights), and what is packed here is reported
// (cleave_rt_packed_weights), which is how `cleave compile` stores them.
//
// One context runs one kernel at a time (its scratch memory is shared in
// the same way), so the cache needs no lock; sessions running on several
// threads each have their own context and cache. oneDNN is built on the
// same OpenMP runtime as the kernels and sizes its parallel regions by
// omp_get_max_threads(), both when it makes a primitive (which fixes how
// the work is split) and when it runs one, so both happen with the calling
// thread's team size set to the session's thread count.
//
// oneDNN picks its instructions from the CPU it runs on; the kernels run
// those of the bundle's `cpu_isa` (cleave_rt_cpu_level). So that the two
// agree, the first context to reach a convolution caps oneDNN at its level
// (x86-64-v4 AVX-512, v3 AVX2, below that SSE4.1). oneDNN takes the cap
// once per process, before its first primitive: later contexts of another
// level keep the first one's.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"

#include <dnnl.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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

/// A convolution shape as oneDNN takes it: its primitive, the reorders
/// between the program's layouts and the ones the primitive chose (absent
/// where they are the same), and the primitive's arguments, whose
/// addresses each call sets.
struct ConvPlan {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  /// Whether oneDNN has no kernel of its own for the shape and runs its
  /// generic im2col + gemm or reference implementation.
  bool generic = false;
  /// Whether the window was cut to the taps that read inside X
  /// (cropWindow); then the convolution's own kernel, the kernel kept and
  /// its first tap, per slot as WindowGeometry holds them (leading ones 1),
  /// and W's rows (output channels times input channels per group).
  bool cropped = false;
  std::array<int64_t, kMaxSpatial> fullKernel{}, keptKernel{}, firstTap{};
  int64_t weightRows = 0;
  /// yIn brings a residual into the primitive's layout of Y (where that
  /// is not the program's), for the sum post-op to read.
  std::optional<dnnl::reorder> xIn, wIn, yIn, yOut;
  /// Whether xIn and yOut run on the calling thread alone
  /// (kSerialReorderBytes).
  bool serialXIn = false, serialYOut = false;
  /// In the program's layouts.
  memory plainX, plainW, plainY, plainResidual;
  /// In the primitive's layouts: `x` and `y` are the plain ones where no
  /// reorder is needed.
  memory x, y, bias, scratchpad;
  std::unordered_map<int, memory> arguments;
};

/// A convolution's shape, attributes, epilogue, layouts and thread count.
using ConvKey = std::array<int64_t, 13 + 7 * kMaxSpatial>;

/// A matrix product of constant weights as oneDNN takes it: the primitive,
/// the reorder of the weights into its layout (absent where that is the
/// program's own) and its arguments, whose addresses each call sets.
struct MatmulPlan {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul product;
  /// Whether oneDNN runs the product on a kernel that takes packed weights
  /// (brgemm); its other kernels (a jit sgemm where brgemm is not built
  /// for the instruction set, a reference loop) pack on every call as
  /// OpenBLAS does, and OpenBLAS is as fast or faster there.
  bool packs = false;
  std::optional<dnnl::reorder> wIn;
  memory a, plainW, y, bias, scratchpad;
  std::unordered_map<int, memory> arguments;
};

/// A product's M, K, N, weight layout, bias, thread count and epilogue
/// (its kind, the clamp's bounds' bits, whether it adds a residual).
using MatmulKey = std::array<int64_t, 10>;

/// The kernel cache of a context (cleave_rt_kernel_cache).
struct KernelCache {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  /// By convolutionKey().
  std::map<ConvKey, std::unique_ptr<ConvPlan>> plans;
  std::map<MatmulKey, std::unique_ptr<MatmulPlan>> products;
  /// Constant weights in the layout of a plan (a ConvPlan or a
  /// MatmulPlan), by their address and plan.
  std::map<std::pair<const void *, const void *>, memory> packed;
  /// Constant weights cut to a cropped plan's taps, by their address and
  /// plan.
  std::map<std::pair<const void *, const void *>, std::vector<float>>
      croppedWeights;
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

/// A float's bits, for a key.
int64_t floatBits(float value) {
  int32_t word;
  std::memcpy(&word, &value, sizeof(word));
  return static_cast<int64_t>(word);
}

ConvKey convolutionKey(const ConvShape &s, bool bias, const Epilogue &epilogue,
                       const ConvLayouts &layouts, int threads) {
  const WindowGeometry &g = s.window;
  ConvKey key = {s.spatial,
                 g.batch,
                 g.channels,
                 s.group,
                 s.outChannels,
                 bias,
                 threads,
                 epilogue.kind,
                 floatBits(epilogue.min),
                 floatBits(epilogue.max),
                 layouts.x,
                 layouts.y,
                 epilogue.residual != nullptr};
  int64_t *at = key.data() + 13;
  for (const int64_t *values :
       {g.in, g.out, g.kernel, g.stride, g.padBegin, g.padEnd, g.dilation})
    at = std::copy(values, values + kMaxSpatial, at);
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

/// oneDNN's post-ops for `epilogue`: the sum of what Y holds before the
/// call (the residual), then the activation.
dnnl::primitive_attr epilogueAttributes(const Epilogue &epilogue) {
  dnnl::primitive_attr attr;
  // Its scratchpad comes from the runtime's scratch memory.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (epilogue.none())
    return attr;
  dnnl::post_ops ops;
  if (epilogue.residual)
    ops.append_sum(1.0f);
  auto eltwise = [&](dnnl::algorithm algorithm, float alpha, float beta) {
    ops.append_eltwise(1.0f, algorithm, alpha, beta);
  };
  switch (epilogue.kind) {
  case CLEAVE_EPILOGUE_RELU:
    eltwise(dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    break;
  case CLEAVE_EPILOGUE_CLIP:
    eltwise(dnnl::algorithm::eltwise_clip, epilogue.min, epilogue.max);
    break;
  case CLEAVE_EPILOGUE_SILU:
    // x * sigmoid(alpha x), alpha 1.
    eltwise(dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
    break;
  case CLEAVE_EPILOGUE_GELU:
    eltwise(dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    break;
  case CLEAVE_EPILOGUE_GELU_TANH:
    eltwise(dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
    break;
  default:
    break;
  }
  attr.set_post_ops(ops);
  return attr;
}

/// Below this many bytes a reorder of activations runs on the calling
/// thread alone. Each oneDNN primitive is an OpenMP parallel region, and
/// with idle threads asleep (OMP_WAIT_POLICY=PASSIVE, which cleave sets
/// where ranks share cores, and set for every run when this was measured)
/// waking the team costs more than a copy this small takes: at 2 threads,
/// bench/runtime_vs_onnxruntime.py gave resnet 2.13 and 2.07 times
/// onnxruntime's time with parallel reorders and 1.55 and 1.73 with
/// these serial, efficientnet_b0 1.31-1.33 and 1.20-1.29. Where threads
/// spin, an eighth of it (parallelWork): MobileNetV2 (width 0.25, 32x32)
/// at batch 8 on 2 threads, medians of rounds of `cleave run --repeat
/// 300`, 0.829 -> 0.662 and 0.505 -> 0.472 ms.
const size_t kSerialReorderBytes =
    static_cast<size_t>(parallelWork(int64_t(1) << 20));

/// Copies `bytes` of `from` to `to`, split over the context's threads where
/// they are many (the residual a sum post-op reads from Y).
void copyResidual(CleaveContext *ctx, void *to, const void *from,
                  size_t bytes) {
  constexpr size_t kChunk = size_t(1) << 16;
  parallelFor(numThreads(ctx), bytes >= kSerialReorderBytes,
              static_cast<int64_t>((bytes + kChunk - 1) / kChunk),
              [&](int64_t c) {
                const size_t at = static_cast<size_t>(c) * kChunk;
                std::memcpy(static_cast<char *>(to) + at,
                            static_cast<const char *>(from) + at,
                            std::min(kChunk, bytes - at));
              });
}

/// Sets the calling thread's team to one thread for the life of the
/// object where `serial`, else leaves it.
class MaybeSerial {
public:
  explicit MaybeSerial(bool serial) {
    if (serial)
      team.emplace(1);
  }

private:
  std::optional<TeamSize> team;
};

/// The program's layout of an activation of `spatial` dimensions: NCHW
/// (and its 1-D and 3-D forms), or its channel blocks of 8 or 16 (nChw8c,
/// nChw16c; nCw8c, nCw16c in 1-D).
Tag programLayout(int spatial, int64_t block) {
  static const Tag plain[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
  if (block == 8)
    return spatial == 1 ? Tag::nCw8c : Tag::nChw8c;
  if (block == 16)
    return spatial == 1 ? Tag::nCw16c : Tag::nChw16c;
  return plain[spatial - 1];
}

/// The block of oneDNN's channel-blocked kernels for the instructions it
/// runs: 16 with AVX-512, else 8. That is the bundle's level's (whose
/// block the program chose) unless another library in the process made a
/// oneDNN primitive before the cap (capInstructions): PyTorch links the
/// same libdnnl, and a convolution it ran first leaves oneDNN on the CPU's
/// own AVX-512.
int64_t nativeBlock() {
  static const int64_t block = [] {
    const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
    const int avx512 = static_cast<int>(dnnl::cpu_isa::avx512_core);
    return (isa & avx512) == avx512 ? 16 : 8;
  }();
  return block;
}

/// Cuts `s`'s window to the taps that some output reads from inside X,
/// dropping those that read only the padding (a 3x3 window on a 1x1 map
/// with padding 1 is its centre: a 1x1 convolution of a ninth of the
/// weights), into `cut`, and sets `first` to the first tap kept per slot.
/// False, with `cut` unset, where no tap is dropped, where none is left,
/// or where the cut window would need negative padding.
bool cropWindow(const ConvShape &s, ConvShape &cut,
                std::array<int64_t, kMaxSpatial> &first) {
  const WindowGeometry &g = s.window;
  ConvShape result = s;
  bool dropped = false;
  for (int i = 0; i < kMaxSpatial; ++i) {
    // Tap t reads X at o * stride - padBegin + t * dilation for outputs o:
    // from the first output that lands at or after 0, is it inside?
    auto inside = [&](int64_t t) {
      const int64_t offset = t * g.dilation[i] - g.padBegin[i];
      const int64_t o =
          offset >= 0 ? 0 : (-offset + g.stride[i] - 1) / g.stride[i];
      return o < g.out[i] && o * g.stride[i] + offset < g.in[i];
    };
    int64_t lo = 0, hi = g.kernel[i] - 1;
    while (lo <= hi && !inside(lo))
      ++lo;
    while (hi >= lo && !inside(hi))
      --hi;
    if (lo > hi)
      return false;
    first[i] = lo;
    if (lo == 0 && hi == g.kernel[i] - 1)
      continue;
    WindowGeometry &c = result.window;
    c.kernel[i] = hi - lo + 1;
    c.padBegin[i] = g.padBegin[i] - lo * g.dilation[i];
    c.padEnd[i] = (g.out[i] - 1) * g.stride[i] +
                  (c.kernel[i] - 1) * g.dilation[i] + 1 - g.in[i] -
                  c.padBegin[i];
    if (c.padBegin[i] < 0 || c.padEnd[i] < 0)
      return false;
    dropped = true;
  }
  if (dropped)
    cut = result;
  return dropped;
}

/// The plan of a convolution. Where the program keeps X or Y in the block
/// of oneDNN's kernels, the primitive is asked for that layout
/// (`keepBlocked`), so that neither is reordered. Otherwise, and where
/// oneDNN has no kernel of its own for the layout asked, the plan lets
/// oneDNN choose, and reorders: asked for nChw8c on AVX-512, oneDNN ran its
/// AVX2 kernels, and ResNet-50 took 109 ms against 69 with reorders.
std::unique_ptr<ConvPlan> makePlan(const dnnl::engine &engine,
                                   const ConvShape &s, bool bias,
                                   const Epilogue &epilogue,
                                   const ConvLayouts &layouts,
                                   bool keepBlocked = true) {
  const WindowGeometry &g = s.window;
  const int n = s.spatial;
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
  const memory::desc plainX(xDims, kF32, programLayout(n, layouts.x));
  const memory::desc plainY(yDims, kF32, programLayout(n, layouts.y));
  const memory::desc plainW(
      wDims, kF32, s.group > 1 ? groupedWeights[n - 1] : weights[n - 1]);
  const memory::desc biasDesc({s.outChannels}, kF32, Tag::a);
  const bool keepX = keepBlocked && layouts.x == nativeBlock();
  const bool keepY = keepBlocked && layouts.y == nativeBlock();
  // Two kinds of convolution, left to choose on AVX-512, take oneDNN's
  // kernels on channels-last data, which run well below its direct ones
  // on channel blocks (1 thread, the blocks with reorders on either side):
  // a 1-D convolution over a window of many channels (brgconv; wav2vec
  // 2.0's and Whisper's feature convolutions, 512 channels, window 3,
  // stride 1 and 2, at half the rate), and a 2-D depthwise one (brdgmm_dw:
  // 0.75 against 0.44 ms for 7x7 on 96 x 56 x 56, ConvNeXt's, 0.58
  // against 0.25 for 3x3 on 144 x 56 x 56). Those ask for the blocked
  // layout. Grouped 1-D ones have no blocked kernel, one input channel (a
  // waveform) is read best as it is, and on AVX2 (8-channel blocks) the
  // runtime's own depthwise loop takes the large maps (Conv.cpp).
  const bool blocked1D = n == 1 && s.group == 1 && g.kernelSize() > 1 &&
                         g.channels >= nativeBlock();
  const bool askBlocked =
      keepBlocked && (blocked1D || (n == 2 && dnnlBlocksDepthwise(s)));
  const Tag blockedTag = programLayout(n, nativeBlock());
  const memory::desc anyW(wDims, kF32, Tag::any);
  const memory::desc anyX =
      keepX ? plainX
            : memory::desc(xDims, kF32, askBlocked ? blockedTag : Tag::any);
  const memory::desc anyY =
      keepY ? plainY
            : memory::desc(yDims, kF32, askBlocked ? blockedTag : Tag::any);
  const memory::dims strides = ownSpatial(g.stride, n);
  // oneDNN counts dilation from 0 (no gap between taps).
  const memory::dims dilations = ownSpatial(g.dilation, n, 1);
  const memory::dims padBegin = ownSpatial(g.padBegin, n);
  const memory::dims padEnd = ownSpatial(g.padEnd, n);
  using Conv = dnnl::convolution_forward;
  const auto desc =
      bias ? Conv::desc(dnnl::prop_kind::forward_inference,
                        dnnl::algorithm::convolution_direct, anyX, anyW,
                        biasDesc, anyY, strides, dilations, padBegin, padEnd)
           : Conv::desc(dnnl::prop_kind::forward_inference,
                        dnnl::algorithm::convolution_direct, anyX, anyW, anyY,
                        strides, dilations, padBegin, padEnd);
  const dnnl::primitive_attr attr = epilogueAttributes(epilogue);
  plan->pd = Conv::primitive_desc(desc, attr, engine);
  plan->conv = Conv(plan->pd);
  const std::string impl = plan->pd.impl_info_str();
  plan->generic = impl.find("gemm") != std::string::npos ||
                  impl.find("ref") != std::string::npos;
  if (plan->generic && (keepX || keepY || askBlocked))
    return makePlan(engine, s, bias, epilogue, layouts, false);
  // A reorder takes its thread count when it is made and when it runs.
  plan->serialXIn = plan->pd.src_desc().get_size() < kSerialReorderBytes;
  plan->serialYOut = plan->pd.dst_desc().get_size() < kSerialReorderBytes;
  {
    MaybeSerial serial(plan->serialXIn);
    plan->xIn = reorderIfNeeded(engine, plainX, plan->pd.src_desc());
  }
  {
    MaybeSerial serial(plan->serialYOut);
    plan->yOut = reorderIfNeeded(engine, plan->pd.dst_desc(), plainY);
    if (epilogue.residual)
      plan->yIn = reorderIfNeeded(engine, plainY, plan->pd.dst_desc());
  }
  plan->wIn = reorderIfNeeded(engine, plainW, plan->pd.weights_desc());

  // Placeholder addresses: every call sets the ones it uses.
  void *none = nullptr;
  plan->plainX = memory(plainX, engine, none);
  plan->plainW = memory(plainW, engine, none);
  plan->plainY = memory(plainY, engine, none);
  plan->plainResidual = memory(plainY, engine, none);
  plan->x =
      plan->xIn ? memory(plan->pd.src_desc(), engine, none) : plan->plainX;
  plan->y =
      plan->yOut ? memory(plan->pd.dst_desc(), engine, none) : plan->plainY;
  plan->scratchpad = memory(plan->pd.scratchpad_desc(), engine, none);
  plan->arguments = {{DNNL_ARG_SRC, plan->x},
                     {DNNL_ARG_DST, plan->y},
                     {DNNL_ARG_SCRATCHPAD, plan->scratchpad}};
  if (bias) {
    plan->bias = memory(biasDesc, engine, none);
    plan->arguments.emplace(DNNL_ARG_BIAS, plan->bias);
  }
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

/// The packed layout `desc` as bytes that compare equal exactly when the
/// layouts are the same (cleave_rt_find_packed_weights): oneDNN's version,
/// then every field of a plain blocked layout; empty for any other kind of
/// layout, which is not stored.
std::vector<int64_t> describeLayout(const memory::desc &desc) {
  const dnnl_memory_desc_t &d = desc.data;
  if (d.format_kind != dnnl_blocked || d.extra.flags != 0)
    return {};
  const dnnl_version_t *version = dnnl_version();
  std::vector<int64_t> words = {version->major, version->minor, version->patch,
                                d.ndims,        d.data_type,    d.offset0};
  const dnnl_blocking_desc_t &b = d.format_desc.blocking;
  for (const dnnl_dim_t *values :
       {d.dims, d.padded_dims, d.padded_offsets, b.strides})
    words.insert(words.end(), values, values + d.ndims);
  words.push_back(b.inner_nblks);
  words.insert(words.end(), b.inner_blks, b.inner_blks + b.inner_nblks);
  words.insert(words.end(), b.inner_idxs, b.inner_idxs + b.inner_nblks);
  return words;
}

/// The weights as `plan` reads them: `w`, or for a cropped plan a copy of
/// the taps it kept (made once, kept in the cache).
const float *planWeights(KernelCache &, MatmulPlan &, const float *w) {
  return w;
}

const float *planWeights(KernelCache &cache, ConvPlan &plan, const float *w) {
  if (!plan.cropped)
    return w;
  std::vector<float> &copy = cache.croppedWeights[{w, &plan}];
  if (!copy.empty())
    return copy.data();
  const int64_t *full = plan.fullKernel.data(), *kept = plan.keptKernel.data(),
                *first = plan.firstTap.data();
  const int64_t fullSize = full[0] * full[1] * full[2];
  copy.resize(plan.weightRows * kept[0] * kept[1] * kept[2]);
  float *to = copy.data();
  for (int64_t r = 0; r < plan.weightRows; ++r)
    for (int64_t a = 0; a < kept[0]; ++a)
      for (int64_t b = 0; b < kept[1]; ++b)
        for (int64_t c = 0; c < kept[2]; ++c)
          *to++ = w[r * fullSize +
                    ((a + first[0]) * full[1] + (b + first[1])) * full[2] + c +
                    first[2]];
  return copy.data();
}

/// Frees what planWeights made for `plan`, once packed.
void dropPlanWeights(KernelCache &, MatmulPlan &, const float *) {}

void dropPlanWeights(KernelCache &cache, ConvPlan &plan, const float *w) {
  cache.croppedWeights.erase({w, &plan});
}

/// The constant weights in the plan's layout: `w` itself where that is
/// ONNX's; else the bundle's packed copy, where it stores one in this
/// layout (`cleave compile` packs them); else a copy repacked on the first
/// call, which the runtime is told of.
template <typename Plan>
memory packedWeights(CleaveContext *ctx, KernelCache &cache, Plan &plan,
                     const float *w) {
  if (!plan.wIn) {
    plan.plainW.set_data_handle(
        const_cast<float *>(planWeights(cache, plan, w)));
    return plan.plainW;
  }
  auto key = std::make_pair(static_cast<const void *>(w),
                            static_cast<const void *>(&plan));
  auto found = cache.packed.find(key);
  if (found != cache.packed.end())
    return found->second;
  const memory::desc desc = plan.pd.weights_desc();
  const std::vector<int64_t> layout = describeLayout(desc);
  const size_t layoutBytes = layout.size() * sizeof(int64_t);
  if (!layout.empty())
    if (const void *stored = cleave_rt_find_packed_weights(
            ctx, w, layout.data(), layoutBytes, desc.get_size())) {
      memory packed(desc, cache.engine, const_cast<void *>(stored));
      cache.packed.emplace(key, packed);
      return packed;
    }
  memory packed(desc, cache.engine);
  plan.plainW.set_data_handle(const_cast<float *>(planWeights(cache, plan, w)));
  plan.wIn->execute(cache.stream, plan.plainW, packed);
  cache.stream.wait();
  // The packed copy is what the plan reads from now on.
  dropPlanWeights(cache, plan, w);
  if (!layout.empty())
    cleave_rt_packed_weights(ctx, w, layout.data(), layoutBytes,
                             packed.get_data_handle(), desc.get_size());
  cache.packed.emplace(key, packed);
  return packed;
}

/// Points `part` at `at` bytes into `scratch`.
void place(memory &part, char *scratch, size_t at) {
  part.set_data_handle(scratch + at);
}

int32_t runPlan(CleaveContext *ctx, KernelCache &cache, ConvPlan &plan,
                const float *x, const float *w, const float *bias, float *y,
                const float *residual) {
  ScratchLayout layout;
  const size_t xAt = plan.xIn ? layout.add(plan.pd.src_desc().get_size()) : 0;
  const size_t yAt = plan.yOut ? layout.add(plan.pd.dst_desc().get_size()) : 0;
  const size_t padAt = layout.add(plan.pd.scratchpad_desc().get_size());
  char *scratch = nullptr;
  if (layout.size()) {
    scratch = static_cast<char *>(cleave_rt_scratch(ctx, layout.size()));
    if (!scratch)
      return 1;
  }
  if (plan.xIn)
    place(plan.x, scratch, xAt);
  if (plan.yOut)
    place(plan.y, scratch, yAt);
  place(plan.scratchpad, scratch, padAt);
  plan.plainX.set_data_handle(const_cast<float *>(x));
  plan.plainY.set_data_handle(y);
  if (bias)
    plan.bias.set_data_handle(const_cast<float *>(bias));
  plan.arguments[DNNL_ARG_WEIGHTS] = packedWeights(ctx, cache, plan, w);
  if (plan.xIn) {
    MaybeSerial serial(plan.serialXIn);
    plan.xIn->execute(cache.stream, plan.plainX, plan.x);
  }
  // The sum post-op adds what the primitive's Y holds: the residual.
  if (residual && plan.yIn) {
    MaybeSerial serial(plan.serialYOut);
    plan.plainResidual.set_data_handle(const_cast<float *>(residual));
    plan.yIn->execute(cache.stream, plan.plainResidual, plan.y);
  } else if (residual && residual != y) {
    // Y is the primitive's own: the residual's bytes as they are.
    copyResidual(ctx, y, residual, plan.pd.dst_desc().get_size());
  }
  plan.conv.execute(cache.stream, plan.arguments);
  if (plan.yOut) {
    MaybeSerial serial(plan.serialYOut);
    plan.yOut->execute(cache.stream, plan.y, plan.plainY);
  }
  cache.stream.wait();
  return 0;
}

std::unique_ptr<MatmulPlan> makeMatmulPlan(const dnnl::engine &engine,
                                           const WeightProduct &p) {
  auto plan = std::make_unique<MatmulPlan>();
  const memory::desc a({p.m, p.k}, kF32, Tag::ab);
  const memory::desc y({p.m, p.n}, kF32, Tag::ab);
  // W (K x N) as stored: rows of N, or of K when transposed.
  const memory::desc plainW({p.k, p.n}, kF32, p.transposeW ? Tag::ba : Tag::ab);
  const memory::desc anyW({p.k, p.n}, kF32, Tag::any);
  const memory::desc bias({1, p.n}, kF32, Tag::ab);
  const auto desc = p.bias ? dnnl::matmul::desc(a, anyW, bias, y)
                           : dnnl::matmul::desc(a, anyW, y);
  const dnnl::primitive_attr attr = epilogueAttributes(p.epilogue);
  plan->pd = dnnl::matmul::primitive_desc(desc, attr, engine);
  plan->product = dnnl::matmul(plan->pd);
  plan->wIn = reorderIfNeeded(engine, plainW, plan->pd.weights_desc());
  plan->packs = std::string(plan->pd.impl_info_str()).rfind("brg", 0) == 0;

  void *none = nullptr;
  plan->a = memory(a, engine, none);
  plan->plainW = memory(plainW, engine, none);
  plan->y = memory(y, engine, none);
  plan->scratchpad = memory(plan->pd.scratchpad_desc(), engine, none);
  plan->arguments = {{DNNL_ARG_SRC, plan->a},
                     {DNNL_ARG_DST, plan->y},
                     {DNNL_ARG_SCRATCHPAD, plan->scratchpad}};
  if (p.bias) {
    plan->bias = memory(bias, engine, none);
    plan->arguments.emplace(DNNL_ARG_BIAS, plan->bias);
  }
  return plan;
}

int32_t runMatmulPlan(CleaveContext *ctx, KernelCache &cache, MatmulPlan &plan,
                      const WeightProduct &p) {
  const size_t scratchBytes = plan.pd.scratchpad_desc().get_size();
  if (scratchBytes) {
    void *scratch = cleave_rt_scratch(ctx, scratchBytes);
    if (!scratch)
      return 1;
    plan.scratchpad.set_data_handle(scratch);
  }
  plan.a.set_data_handle(const_cast<float *>(p.a));
  plan.y.set_data_handle(p.y);
  // The sum post-op adds what Y holds: the residual.
  if (p.epilogue.residual && p.epilogue.residual != p.y)
    copyResidual(ctx, p.y, p.epilogue.residual, sizeof(float) * p.m * p.n);
  if (p.bias)
    plan.bias.set_data_handle(const_cast<float *>(p.bias));
  plan.arguments[DNNL_ARG_WEIGHTS] = packedWeights(ctx, cache, plan, p.w);
  plan.product.execute(cache.stream, plan.arguments);
  cache.stream.wait();
  return 0;
}

/// Below this many multiply-adds (about 20 us on one core) a convolution
/// runs on one thread where threads sleep, an eighth of it where they spin:
/// waking the team (kParallelGrain) costs more than it saves.
const int64_t kParallelMacs = parallelWork(int64_t(1) << 20);

/// Caps oneDNN's instructions at x86-64 level `level`, once per process.
void capInstructions(int32_t level) {
  static std::once_flag once;
  std::call_once(once, [level] {
    dnnl::cpu_isa isa = level >= 4   ? dnnl::cpu_isa::avx512_core
                        : level == 3 ? dnnl::cpu_isa::avx2
                                     : dnnl::cpu_isa::sse41;
    try {
      dnnl::set_max_cpu_isa(isa);
    } catch (const dnnl::error &) {
      // A primitive made before (by the host program) fixed it already.
    }
  });
}

/// The context's kernel cache, with oneDNN capped at the context's level;
/// null after failing.
KernelCache *kernelCache(CleaveContext *ctx) {
  capInstructions(cleave_rt_cpu_level(ctx));
  return static_cast<KernelCache *>(
      cleave_rt_kernel_cache(ctx, createKernelCache, destroyKernelCache));
}

} // namespace

int32_t dnnlConv(CleaveContext *ctx, const ConvShape &shape, const float *x,
                 const float *w, const float *bias, float *y,
                 const Epilogue &epilogue, const ConvLayouts &layouts,
                 bool declineGeneric) {
  const WindowGeometry &g = shape.window;
  const size_t weightBytes = sizeof(float) * shape.outChannels *
                             (g.channels / shape.group) * g.kernelSize();
  if (!cleave_rt_constant_weights(ctx, w, weightBytes))
    return fail(ctx, "conv",
                "oneDNN runs over constant weights only, which it packs once");
  KernelCache *cache = kernelCache(ctx);
  if (!cache)
    return 1;
  // The plan convolves with the taps that read inside X only.
  ConvShape cut;
  std::array<int64_t, kMaxSpatial> first{};
  const bool cropped = cropWindow(shape, cut, first);
  const int threads = (cropped ? cut : shape).multiplyAdds() < kParallelMacs
                          ? 1
                          : numThreads(ctx);
  TeamSize team(threads);
  try {
    std::unique_ptr<ConvPlan> &plan = cache->plans[convolutionKey(
        shape, bias != nullptr, epilogue, layouts, threads)];
    if (!plan) {
      plan = makePlan(cache->engine, cropped ? cut : shape, bias != nullptr,
                      epilogue, layouts);
      if (cropped) {
        plan->cropped = true;
        plan->firstTap = first;
        std::copy(g.kernel, g.kernel + kMaxSpatial, plan->fullKernel.begin());
        std::copy(cut.window.kernel, cut.window.kernel + kMaxSpatial,
                  plan->keptKernel.begin());
        plan->weightRows = shape.outChannels * (g.channels / shape.group);
      }
    }
    if (declineGeneric && plan->generic)
      return kDnnlDeclined;
    return runPlan(ctx, *cache, *plan, x, w, bias, y, epilogue.residual);
  } catch (const dnnl::error &e) {
    return fail(ctx, "conv", "oneDNN: %s (status %d)", e.what(),
                static_cast<int>(e.status));
  } catch (const std::exception &e) {
    return fail(ctx, "conv", "%s", e.what());
  }
}

int32_t dnnlMatmul(CleaveContext *ctx, const char *kernel,
                   const WeightProduct &p) {
  if (!cleave_rt_constant_weights(ctx, p.w, sizeof(float) * p.k * p.n))
    return fail(ctx, kernel,
                "oneDNN runs over constant weights only, which it packs once");
  KernelCache *cache = kernelCache(ctx);
  if (!cache)
    return 1;
  const int threads = numThreads(ctx);
  TeamSize team(threads);
  try {
    std::unique_ptr<MatmulPlan> &plan = cache->products[{
        p.m, p.k, p.n, p.transposeW, p.bias != nullptr, threads,
        p.epilogue.kind, floatBits(p.epilogue.min), floatBits(p.epilogue.max),
        p.epilogue.residual != nullptr}];
    if (!plan)
      plan = makeMatmulPlan(cache->engine, p);
    if (!plan->packs)
      return kDnnlDeclined;
    return runMatmulPlan(ctx, *cache, *plan, p);
  } catch (const dnnl::error &e) {
    return fail(ctx, kernel, "oneDNN: %s (status %d)", e.what(),
                static_cast<int>(e.status));
  } catch (const std::exception &e) {
    return fail(ctx, kernel, "%s", e.what());
  }
}

bool dnnlBlocksDepthwise(const ConvShape &shape) {
  const int64_t channels = shape.window.channels;
  return nativeBlock() == 16 && shape.group == channels &&
         shape.outChannels == channels && channels % nativeBlock() == 0;
}

} // namespace cleave::cpu
