//===- Attention.cu - rotary embedding and scaled dot-product attention ---===//
//
// Tensors are viewed as batch x heads x sequence x head_size, laid out so
// (rank 4) or as batch x sequence x (heads * head_size) (rank 3). The rotary
// embedding runs one thread per element. Attention runs one warp per query
// row with an online softmax (running maximum and sum), so that neither the
// scores nor a sequence x sequence matrix are stored: each lane keeps its
// share of the value accumulator in registers, which bounds the value head
// size (kMaxValueHeadSize).
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

using namespace cleave::cuda;

namespace {

constexpr int kMaxValueHeadSize = 512;
constexpr int kAccPerLane = kMaxValueHeadSize / 32;
constexpr int kWarpsPerBlock = 4;

/// Where row (b, h, s) of a rank-3 or rank-4 tensor of `heads` heads
/// starts.
struct HeadLayout {
  int64_t heads = 0, sequence = 0, headSize = 0;
  bool packed = false;

  bool bind(const CleaveTensor &t, int64_t numHeads) {
    if (t.rank == 4) {
      heads = t.shape[1];
      sequence = t.shape[2];
      headSize = t.shape[3];
      return numHeads == 0 || numHeads == heads;
    }
    if (t.rank != 3 || numHeads <= 0 || t.shape[2] % numHeads != 0)
      return false;
    packed = true;
    heads = numHeads;
    sequence = t.shape[1];
    headSize = t.shape[2] / numHeads;
    return true;
  }

  __host__ __device__ int64_t offset(int64_t b, int64_t h, int64_t s) const {
    if (packed)
      return ((b * sequence + s) * heads + h) * headSize;
    return ((b * heads + h) * sequence + s) * headSize;
  }
};

template <typename T, typename I>
__global__ void rotaryKernel(const T *x, const T *cosCache, const T *sinCache,
                             const I *ids, T *y, HeadLayout layout,
                             int64_t batch, int64_t rotaryDim, int64_t width,
                             int64_t cacheRows, bool broadcastBatch,
                             bool interleaved, DeviceErrorSite site) {
  const int64_t heads = layout.heads, sequence = layout.sequence,
                headSize = layout.headSize, half = rotaryDim / 2;
  const int64_t total = batch * sequence * heads * headSize;
  CLEAVE_GRID_LOOP(i, total) {
    // i enumerates (b, s, h, d) whatever the layout.
    int64_t d = i % headSize, rest = i / headSize;
    int64_t h = rest % heads;
    rest /= heads;
    int64_t s = rest % sequence, b = rest / sequence;
    const int64_t base = layout.offset(b, h, s);
    if (d >= rotaryDim) {
      y[base + d] = x[base + d];
      continue;
    }
    int64_t row;
    if (ids) {
      row = static_cast<int64_t>(ids[b * sequence + s]);
      if (row < 0 || row >= cacheRows) {
        recordIndexError(site, kRotaryPositionOutOfRange, row, cacheRows, 0);
        y[base + d] = fromFloat<T>(0.f);
        continue;
      }
    } else {
      row = broadcastBatch ? s : b * sequence + s;
    }
    // The pair (i1, i2) that d belongs to, and which of the two it is.
    int64_t pair = interleaved ? d / 2 : (d < half ? d : d - half);
    bool second = interleaved ? (d % 2 == 1) : d >= half;
    int64_t i1 = interleaved ? 2 * pair : pair;
    int64_t i2 = interleaved ? 2 * pair + 1 : pair + half;
    float c = toFloat(cosCache[row * width + pair]);
    float sn = toFloat(sinCache[row * width + pair]);
    float x1 = toFloat(x[base + i1]), x2 = toFloat(x[base + i2]);
    y[base + d] = fromFloat<T>(second ? sn * x1 + c * x2 : c * x1 - sn * x2);
  }
}

struct AttentionShape {
  HeadLayout q, k, v, y;
  int64_t batch, qHeads, group;
  int64_t maskStride[4];
  float scale, softcap;
  bool causal;
  bool nanToZero;
};

template <typename T, typename M>
__global__ void attentionKernel(const T *q, const T *k, const T *v,
                                const M *mask, T *y, AttentionShape a) {
  const int lane = threadIdx.x & 31;
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  const int64_t qSequence = a.q.sequence, kvSequence = a.k.sequence;
  if (row >= a.batch * a.qHeads * qSequence)
    return;
  const int64_t b = row / (a.qHeads * qSequence);
  const int64_t h = (row / qSequence) % a.qHeads, i = row % qSequence;
  const int64_t kvh = h / a.group;
  const T *qRow = q + a.q.offset(b, h, i);
  const int64_t maskBase =
      b * a.maskStride[0] + h * a.maskStride[1] + i * a.maskStride[2];
  const int64_t headSize = a.q.headSize, vHeadSize = a.v.headSize;
  float acc[kAccPerLane];
  for (int t = 0; t < kAccPerLane; ++t)
    acc[t] = 0.f;
  float max = -INFINITY, sum = 0.f;
  for (int64_t j = 0; j < kvSequence; ++j) {
    const T *kRow = k + a.k.offset(b, kvh, j);
    float dot = 0.f;
    for (int64_t d = lane; d < headSize; d += 32)
      dot += toFloat(qRow[d]) * toFloat(kRow[d]);
    float s = warpSum(dot) * a.scale;
    if (a.softcap > 0.f)
      s = a.softcap * tanhf(s / a.softcap);
    if (mask) {
      M m = mask[maskBase + j * a.maskStride[3]];
      if constexpr (sizeof(M) == 1)
        s += m ? 0.f : -INFINITY;
      else
        s += toFloat(m);
    }
    if (a.causal && j > i)
      s += -INFINITY;
    float next = fmaxf(max, s);
    if (next == -INFINITY)
      continue; // nothing visible yet
    float correction = __expf(max - next), p = __expf(s - next);
    sum = sum * correction + p;
    const T *vRow = v + a.v.offset(b, kvh, j);
    for (int t = 0; t < kAccPerLane; ++t) {
      int64_t d = lane + 32 * t;
      if (d < vHeadSize)
        acc[t] = acc[t] * correction + p * toFloat(vRow[d]);
    }
    max = next;
  }
  // A row without a visible key is NaN, as the softmax of -inf everywhere,
  // or zeros when asked (its accumulators are still 0).
  const float inv = sum > 0.f ? 1.f / sum : (a.nanToZero ? 0.f : NAN);
  T *out = y + a.y.offset(b, h, i);
  for (int t = 0; t < kAccPerLane; ++t) {
    int64_t d = lane + 32 * t;
    if (d < vHeadSize)
      out[d] = fromFloat<T>(acc[t] * inv);
  }
}

/// Element strides broadcasting `mask` (right-aligned) to `dims`.
bool maskStrides(const CleaveTensor &mask, const int64_t (&dims)[4],
                 int64_t (&strides)[4]) {
  if (mask.rank > 4)
    return false;
  int64_t stride = 1;
  for (int d = 3; d >= 0; --d) {
    int own = mask.rank - (4 - d);
    strides[d] = 0;
    if (own < 0)
      continue;
    if (mask.shape[own] != 1 && mask.shape[own] != dims[d])
      return false;
    if (mask.shape[own] != 1)
      strides[d] = stride;
    stride *= mask.shape[own];
  }
  return true;
}

} // namespace

int32_t
cleave::cuda::kernels::rotary_embedding(CleaveContext *ctx,
                                        const args::RotaryEmbedding &args) {
  const char *kernel = "rotary_embedding";
  const CleaveTensor &x = args.x(), &cosCache = args.cos(),
                     &sinCache = args.sin(), &y = args.y();
  const CleaveTensor *ids = args.positionIds();
  HeadLayout layout;
  if (!layout.bind(x, args.numHeads()) || x.dtype != y.dtype ||
      cosCache.dtype != x.dtype || sinCache.dtype != x.dtype)
    return fail(ctx, kernel,
                "input must be rank 4, or rank 3 with num_heads "
                "dividing its hidden size; cos, sin and Y of its "
                "type");
  const int64_t batch = x.shape[0], rotaryDim = args.rotaryDim();
  if (rotaryDim <= 0 || rotaryDim % 2 != 0 || rotaryDim > layout.headSize)
    return fail(ctx, kernel, "rotary_dim %lld must be even and in (0, %lld]",
                (long long)rotaryDim, (long long)layout.headSize);
  const int cacheRank = ids ? 2 : 3;
  if (cosCache.rank != cacheRank ||
      numElements(cosCache) != numElements(sinCache) ||
      cosCache.shape[cacheRank - 1] < rotaryDim / 2)
    return fail(ctx, kernel,
                "cos and sin must be rank %d with at least %lld "
                "entries per row",
                cacheRank, (long long)(rotaryDim / 2));
  if (!ids && ((cosCache.shape[0] != 1 && cosCache.shape[0] != batch) ||
               cosCache.shape[1] != layout.sequence))
    return fail(ctx, kernel, "cos and sin must be [%lld or 1, %lld, n]",
                (long long)batch, (long long)layout.sequence);
  if (ids && ((ids->dtype != CLEAVE_I32 && ids->dtype != CLEAVE_I64) ||
              numElements(*ids) != batch * layout.sequence))
    return fail(ctx, kernel, "position_ids must be i32 or i64 [%lld, %lld]",
                (long long)batch, (long long)layout.sequence);
  const int64_t total = numElements(x);
  if (total == 0)
    return 0;
  const int64_t width = cosCache.shape[cacheRank - 1];
  const bool broadcastBatch = !ids && cosCache.shape[0] == 1;
  const bool interleaved = args.interleaved() != 0;
  DeviceErrorSite site = deviceErrorSite(ctx);
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    auto launch = [&](auto *idData) {
      using I = std::remove_const_t<std::remove_pointer_t<decltype(idData)>>;
      rotaryKernel<T, I><<<blocksFor(total), kThreads, 0, streamOf(ctx)>>>(
          static_cast<const T *>(x.data), static_cast<const T *>(cosCache.data),
          static_cast<const T *>(sinCache.data), idData,
          static_cast<T *>(y.data), layout, batch, rotaryDim, width,
          cosCache.shape[0], broadcastBatch, interleaved, site);
    };
    if (ids && ids->dtype == CLEAVE_I32)
      launch(static_cast<const int32_t *>(ids->data));
    else
      launch(ids ? static_cast<const int64_t *>(ids->data) : nullptr);
    return 0;
  });
  if (status < 0)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::kernels::attention(CleaveContext *ctx,
                                         const args::Attention &args) {
  const char *kernel = "attention";
  const CleaveTensor &q = args.q(), &k = args.k(), &v = args.v(), &y = args.y();
  const CleaveTensor *mask = args.mask();
  AttentionShape a;
  a.qHeads = args.qNumHeads();
  const int64_t kvHeads = args.kvNumHeads();
  if (q.rank != k.rank || q.rank != v.rank || kvHeads <= 0 ||
      a.qHeads % kvHeads != 0 || !a.q.bind(q, a.qHeads) ||
      !a.k.bind(k, kvHeads) || !a.v.bind(v, kvHeads) || !a.y.bind(y, a.qHeads))
    return fail(ctx, kernel,
                "Q, K and V must all be rank 3 or all rank 4 "
                "with %lld and %lld heads",
                (long long)a.qHeads, (long long)kvHeads);
  if (a.q.heads != a.qHeads || a.k.heads != kvHeads || a.v.heads != kvHeads ||
      a.k.headSize != a.q.headSize || a.v.sequence != a.k.sequence ||
      a.y.headSize != a.v.headSize || a.y.sequence != a.q.sequence ||
      k.dtype != q.dtype || v.dtype != q.dtype || y.dtype != q.dtype)
    return fail(ctx, kernel,
                "Q, K, V and Y disagree on their heads, "
                "sequences, head sizes or types");
  if (a.v.headSize > kMaxValueHeadSize)
    return fail(ctx, kernel, "value head size %lld is above %d",
                (long long)a.v.headSize, kMaxValueHeadSize);
  a.batch = q.shape[0];
  a.group = a.qHeads / kvHeads;
  a.scale = static_cast<float>(args.scale());
  a.softcap = static_cast<float>(args.softcap());
  a.causal = args.isCausal() != 0;
  a.nanToZero = args.nanToZero() != 0;
  const int64_t dims[4] = {a.batch, a.qHeads, a.q.sequence, a.k.sequence};
  for (int64_t &s : a.maskStride)
    s = 0;
  if (mask && ((mask->dtype != q.dtype && mask->dtype != CLEAVE_BOOL) ||
               !maskStrides(*mask, dims, a.maskStride)))
    return fail(ctx, kernel,
                "the mask must be bool or Q's type and "
                "broadcast to the scores");
  const int64_t rows = a.batch * a.qHeads * a.q.sequence;
  if (rows == 0)
    return 0;
  const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > INT32_MAX)
    return fail(ctx, kernel, "too many query rows");
  int32_t status = dispatchFloat(q.dtype, [&](auto t) {
    using T = decltype(t);
    auto launch = [&](auto *maskData) {
      using M = std::remove_const_t<std::remove_pointer_t<decltype(maskData)>>;
      attentionKernel<T, M>
          <<<unsigned(blocks), 32 * kWarpsPerBlock, 0, streamOf(ctx)>>>(
              static_cast<const T *>(q.data), static_cast<const T *>(k.data),
              static_cast<const T *>(v.data), maskData,
              static_cast<T *>(y.data), a);
    };
    if (mask && mask->dtype == CLEAVE_BOOL)
      launch(static_cast<const uint8_t *>(mask->data));
    else
      launch(mask ? static_cast<const T *>(mask->data) : nullptr);
    return 0;
  });
  if (status < 0)
    return fail(ctx, kernel, "unsupported element type %d", q.dtype);
  return checkLaunch(ctx, kernel);
}
