//===- Attention.cpp - rotary embedding and scaled dot-product attention --===//
//
// Both kernels view their tensors as batch x heads x sequence x head_size,
// laid out either so (rank 4) or as batch x sequence x (heads * head_size)
// (rank 3); `HeadLayout` gives the offset of one head's row in either.
// Attention takes the query rows of one head in blocks of kBlockRows: the
// block's scores over every key are one sgemm (Q K^T), the scale, softcap,
// mask and softmax go row by row in place, and the weighted sums of the
// values are a second sgemm (P V), so that a block x sequence matrix is the
// most it materialises.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace cleave::cpu;

namespace {

/// Where row (b, h, s) of a rank-3 or rank-4 tensor of `heads` heads
/// starts.
struct HeadLayout {
  int64_t heads = 0, sequence = 0, headSize = 0;
  bool packed = false; // rank 3: batch x sequence x (heads * head_size)

  /// Fails (returns false) unless `t` has rank 3 or 4 and, for rank 3,
  /// `numHeads` divides its hidden size.
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

  int64_t offset(int64_t b, int64_t h, int64_t s) const {
    if (packed)
      return ((b * sequence + s) * heads + h) * headSize;
    return ((b * heads + h) * sequence + s) * headSize;
  }

  /// Elements from one row of a head to the next.
  int64_t rowStride() const { return packed ? heads * headSize : headSize; }
};

/// Reads position id `i` of an i32 or i64 tensor.
int64_t positionAt(const CleaveTensor &ids, int64_t i) {
  if (ids.dtype == CLEAVE_I32)
    return static_cast<const int32_t *>(ids.data)[i];
  return static_cast<const int64_t *>(ids.data)[i];
}

/// The element strides that broadcast `mask` (right-aligned) to
/// batch x heads x q_sequence x kv_sequence, 0 along a broadcast dimension;
/// false when it does not broadcast.
bool maskStrides(const CleaveTensor &mask, const int64_t (&dims)[4],
                 int64_t (&strides)[4]) {
  if (mask.rank > 4)
    return false;
  int64_t stride = 1;
  for (int32_t d = 3; d >= 0; --d) {
    int32_t own = mask.rank - (4 - d);
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
cleave::cpu::kernels::rotary_embedding(CleaveContext *ctx,
                                       const args::RotaryEmbedding &args) {
  const char *kernel = "rotary_embedding";
  const CleaveTensor &x = args.x(), &cosCache = args.cos(),
                     &sinCache = args.sin(), &y = args.y();
  const CleaveTensor *ids = args.positionIds();
  if (checkF32(ctx, kernel, x, "input") ||
      checkF32(ctx, kernel, cosCache, "cos") ||
      checkF32(ctx, kernel, sinCache, "sin") || checkF32(ctx, kernel, y, "Y"))
    return 1;
  HeadLayout layout;
  if (!layout.bind(x, args.numHeads()))
    return fail(ctx, kernel,
                "input must be rank 4, or rank 3 with num_heads "
                "dividing its hidden size");
  const int64_t batch = x.shape[0], sequence = layout.sequence;
  const int64_t rotaryDim = args.rotaryDim(), half = rotaryDim / 2;
  if (rotaryDim <= 0 || rotaryDim % 2 != 0 || rotaryDim > layout.headSize)
    return fail(ctx, kernel, "rotary_dim %lld must be even and in (0, %lld]",
                (long long)rotaryDim, (long long)layout.headSize);
  const int32_t cacheRank = ids ? 2 : 3;
  if (cosCache.rank != cacheRank ||
      numElements(cosCache) != numElements(sinCache) ||
      cosCache.shape[cacheRank - 1] < half)
    return fail(ctx, kernel,
                "cos and sin must be rank %d with at least %lld "
                "entries per row",
                cacheRank, (long long)half);
  const int64_t width = cosCache.shape[cacheRank - 1];
  if (!ids && ((cosCache.shape[0] != 1 && cosCache.shape[0] != batch) ||
               cosCache.shape[1] != sequence))
    return fail(ctx, kernel, "cos and sin must be [%lld or 1, %lld, n]",
                (long long)batch, (long long)sequence);
  if (ids) {
    if (ids->dtype != CLEAVE_I32 && ids->dtype != CLEAVE_I64)
      return fail(ctx, kernel, "position_ids must be i32 or i64");
    if (numElements(*ids) != batch * sequence)
      return fail(ctx, kernel, "position_ids must be [%lld, %lld]",
                  (long long)batch, (long long)sequence);
    for (int64_t i = 0; i < batch * sequence; ++i) {
      int64_t p = positionAt(*ids, i);
      if (p < 0 || p >= cosCache.shape[0])
        return fail(ctx, kernel,
                    "position id %lld is outside the %lld "
                    "cached positions",
                    (long long)p, (long long)cosCache.shape[0]);
    }
  }
  const float *src = static_cast<const float *>(x.data);
  const float *cosData = static_cast<const float *>(cosCache.data);
  const float *sinData = static_cast<const float *>(sinCache.data);
  float *dst = static_cast<float *>(y.data);
  const bool interleaved = args.interleaved() != 0;
  const int64_t heads = layout.heads, headSize = layout.headSize;
  const int threads = numThreads(ctx);
  parallelFor(threads, numElements(x) > kParallelGrain, batch * sequence,
              [&](int64_t row) {
                const int64_t b = row / sequence, s = row % sequence;
                int64_t cacheRow = ids ? positionAt(*ids, row)
                                       : (cosCache.shape[0] == 1 ? s : row);
                const float *c = cosData + cacheRow * width;
                const float *sn = sinData + cacheRow * width;
                for (int64_t h = 0; h < heads; ++h) {
                  const int64_t base = layout.offset(b, h, s);
                  const float *in = src + base;
                  float *out = dst + base;
                  for (int64_t i = 0; i < half; ++i) {
                    const int64_t i1 = interleaved ? 2 * i : i;
                    const int64_t i2 = interleaved ? 2 * i + 1 : i + half;
                    const float x1 = in[i1], x2 = in[i2];
                    out[i1] = c[i] * x1 - sn[i] * x2;
                    out[i2] = sn[i] * x1 + c[i] * x2;
                  }
                  for (int64_t d = rotaryDim; d < headSize; ++d)
                    out[d] = in[d];
                }
              });
  return 0;
}

int32_t cleave::cpu::kernels::attention(CleaveContext *ctx,
                                        const args::Attention &args) {
  const char *kernel = "attention";
  const CleaveTensor &q = args.q(), &k = args.k(), &v = args.v(), &y = args.y();
  const CleaveTensor *mask = args.mask();
  if (checkF32(ctx, kernel, q, "Q") || checkF32(ctx, kernel, k, "K") ||
      checkF32(ctx, kernel, v, "V") || checkF32(ctx, kernel, y, "Y"))
    return 1;
  const int64_t qHeads = args.qNumHeads(), kvHeads = args.kvNumHeads();
  HeadLayout ql, kl, vl, yl;
  if (q.rank != k.rank || q.rank != v.rank || kvHeads <= 0 ||
      qHeads % kvHeads != 0 || !ql.bind(q, qHeads) || !kl.bind(k, kvHeads) ||
      !vl.bind(v, kvHeads) || !yl.bind(y, qHeads))
    return fail(ctx, kernel,
                "Q, K and V must all be rank 3 or all rank 4 "
                "with %lld and %lld heads",
                (long long)qHeads, (long long)kvHeads);
  const int64_t batch = q.shape[0], qSequence = ql.sequence,
                kvSequence = kl.sequence, headSize = ql.headSize,
                vHeadSize = vl.headSize;
  if (ql.heads != qHeads || kl.heads != kvHeads || vl.heads != kvHeads ||
      kl.headSize != headSize || vl.sequence != kvSequence ||
      yl.headSize != vHeadSize || yl.sequence != qSequence)
    return fail(ctx, kernel,
                "Q, K, V and Y disagree on their heads, "
                "sequences or head sizes");
  const int64_t dims[4] = {batch, qHeads, qSequence, kvSequence};
  int64_t mstride[4] = {0, 0, 0, 0};
  if (mask) {
    if (mask->dtype != CLEAVE_F32 && mask->dtype != CLEAVE_BOOL)
      return fail(ctx, kernel, "the mask must be f32 or bool");
    if (!maskStrides(*mask, dims, mstride))
      return fail(ctx, kernel, "the mask does not broadcast to the scores");
  }
  const float *qData = static_cast<const float *>(q.data);
  const float *kData = static_cast<const float *>(k.data);
  const float *vData = static_cast<const float *>(v.data);
  float *yData = static_cast<float *>(y.data);
  const float scale = static_cast<float>(args.scale());
  const float softcap = static_cast<float>(args.softcap());
  const bool causal = args.isCausal() != 0;
  const bool nanToZero = args.nanToZero() != 0;
  const int64_t group = qHeads / kvHeads;
  const float negInf = -std::numeric_limits<float>::infinity();
  const int64_t rows = batch * qHeads * qSequence;
  const int threads = numThreads(ctx);
  if (kvSequence == 0) {
    // No key at all: the softmax of nothing, NaN, or zeros when asked.
    const float fill = nanToZero ? 0.0f : std::nanf("");
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t b = row / (qHeads * qSequence);
      const int64_t h = (row / qSequence) % qHeads, i = row % qSequence;
      float *out = yData + yl.offset(b, h, i);
      for (int64_t d = 0; d < vHeadSize; ++d)
        out[d] = fill;
    }
    return 0;
  }
  // Each block's two products pack all the keys and values again: on
  // Whisper-tiny's 1500 keys, blocks of 64 rows made the fused attention
  // slower than the unfused products (1.27 against 1.05 of onnxruntime's
  // time), blocks of 128 faster (0.91 against 1.10); a 128 x 1500 block
  // of scores is 750 KiB.
  constexpr int64_t kBlockRows = 128;
  const int64_t blocks = (qSequence + kBlockRows - 1) / kBlockRows;
  const bool adjustsScores = softcap > 0.0f || mask || causal;
  const int64_t tasks = batch * qHeads * blocks;
  parallelRegion(threads, rows * kvSequence * headSize > kParallelGrain, [&] {
    std::vector<float> scores(kBlockRows * kvSequence);
#pragma omp for
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t b = task / (qHeads * blocks);
      const int64_t h = (task / blocks) % qHeads;
      const int64_t first = (task % blocks) * kBlockRows;
      const int64_t count = std::min(kBlockRows, qSequence - first);
      const int64_t kvh = h / group;
      float *block = scores.data();
      sgemm(1, false, true, count, kvSequence, headSize, scale,
            qData + ql.offset(b, h, first), ql.rowStride(),
            kData + kl.offset(b, kvh, 0), kl.rowStride(), 0.0f, block,
            kvSequence);
      // Scores with no softcap, mask or causal bound go straight to the
      // softmax, whose passes vectorise (the loop below is scalar, a
      // branch per key: 1-2 ns an element on 1500 keys).
      for (int64_t r = 0; !adjustsScores && r < count; ++r)
        softmaxLine(block + r * kvSequence, block + r * kvSequence, kvSequence,
                    /*log=*/false);
      for (int64_t r = 0; adjustsScores && r < count; ++r) {
        const int64_t i = first + r;
        float *line = block + r * kvSequence;
        const int64_t maskBase =
            b * mstride[0] + h * mstride[1] + i * mstride[2];
        float max = negInf;
        for (int64_t j = 0; j < kvSequence; ++j) {
          float s = line[j];
          // The softcap bounds the logits; masking comes after it, so that
          // a masked key stays at -inf.
          if (softcap > 0.0f)
            s = softcap * std::tanh(s / softcap);
          if (mask) {
            const int64_t at = maskBase + j * mstride[3];
            if (mask->dtype == CLEAVE_BOOL)
              s += static_cast<const uint8_t *>(mask->data)[at] ? 0.0f : negInf;
            else
              s += static_cast<const float *>(mask->data)[at];
          }
          if (causal && j > i)
            s += negInf;
          line[j] = s;
          max = s > max ? s : max;
        }
        // A row without a visible key has max -inf and becomes NaN, as the
        // softmax of -inf everywhere does, or zeros when asked.
        if (nanToZero && max == negInf) {
          for (int64_t j = 0; j < kvSequence; ++j)
            line[j] = 0.0f;
          continue;
        }
        softmaxLine(line, line, kvSequence, /*log=*/false);
      }
      sgemm(1, false, false, count, vHeadSize, kvSequence, 1.0f, block,
            kvSequence, vData + vl.offset(b, kvh, 0), vl.rowStride(), 0.0f,
            yData + yl.offset(b, h, first), yl.rowStride());
    }
  });
  return 0;
}
