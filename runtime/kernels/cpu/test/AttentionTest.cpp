//===- AttentionTest.cpp - rotary embedding and attention by hand ---------===//
//
// Small cases worked out by hand, a larger one against the definition in
// double, and the failures the kernels report. The
// end-to-end test test/Target/fused-idioms.py compares both kernels with
// onnxruntime on larger shapes.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace cleave::test;

namespace {

class AttentionTest : public KernelTest {};

TEST_F(AttentionTest, RotaryEmbeddingRotatesPairs) {
  // One head of 4 entries at positions 0 and 1: the pairs (0, 2) and
  // (1, 3) rotate by the angles of the selected cache row.
  Tensor x = Tensor::f32({1, 1, 2, 4}, {1, 2, 3, 4, 1, 0, 0, 1});
  Tensor cos = Tensor::f32({2, 2}, {1, 1, 0, 0.5f});
  Tensor sin = Tensor::f32({2, 2}, {0, 0, 1, 0.5f});
  Tensor ids = Tensor::of<int64_t>({1, 2}, CLEAVE_I64, {0, 1});
  Tensor y({1, 1, 2, 4});
  ASSERT_EQ(run(cleave_cpu_rotary_embedding,
                {x.desc(), cos.desc(), sin.desc(), ids.desc()}, {y.desc()},
                {0, 4, 0}),
            0)
      << ctx.error;
  // Row 0 is the identity; row 1: (1, 0) turns by 90 degrees to (0, 1), and
  // (0, 1) by cos = sin = 0.5 to (-0.5, 0.5).
  expectClose(y.vec(), {1, 2, 3, 4, 0, -0.5f, 1, 0.5f}, 1e-6f, 0);

  // Interleaved: pairs (0, 1) and (2, 3); only the first pair rotated.
  ASSERT_EQ(run(cleave_cpu_rotary_embedding,
                {x.desc(), cos.desc(), sin.desc(), ids.desc()}, {y.desc()},
                {0, 2, 1}),
            0)
      << ctx.error;
  expectClose(y.vec(), {1, 2, 3, 4, 0, 1, 0, 1}, 1e-6f, 0);
}

TEST_F(AttentionTest, RotaryEmbeddingFailures) {
  Tensor x = Tensor::random({1, 1, 2, 4}, 1);
  Tensor cache = Tensor::random({2, 2}, 2);
  Tensor y({1, 1, 2, 4});
  Tensor far = Tensor::of<int64_t>({1, 2}, CLEAVE_I64, {0, 2});
  expectFailure(run(cleave_cpu_rotary_embedding,
                    {x.desc(), cache.desc(), cache.desc(), far.desc()},
                    {y.desc()}, {0, 4, 0}),
                "rotary_embedding",
                "position id 2 is outside the 2 cached positions");
  Tensor ids = Tensor::of<int64_t>({1, 2}, CLEAVE_I64, {0, 1});
  expectFailure(run(cleave_cpu_rotary_embedding,
                    {x.desc(), cache.desc(), cache.desc(), ids.desc()},
                    {y.desc()}, {0, 3, 0}),
                "rotary_embedding", "must be even");
}

TEST_F(AttentionTest, AttentionByHand) {
  // One head, two queries and two keys of one entry; scale 1. Query 0 sees
  // key 0 only (causal), query 1 weighs both: scores 0 and ln 3 give
  // softmax (1/4, 3/4).
  Tensor q = Tensor::f32({1, 1, 2, 1}, {1, std::log(3.0f)});
  Tensor k = Tensor::f32({1, 1, 2, 1}, {0, 1});
  Tensor v = Tensor::f32({1, 1, 2, 2}, {4, 8, 0, 4});
  Tensor y({1, 1, 2, 2});
  ASSERT_EQ(run(cleave_cpu_attention, {q.desc(), k.desc(), v.desc()},
                {y.desc()}, {1, 1, 1, 0}, {1.0, 0.0}),
            0)
      << ctx.error;
  expectClose(y.vec(), {4, 8, 1, 5}, 1e-5f, 1e-6f);

  // A boolean mask that hides every key of query 1 makes its row NaN.
  Tensor mask = Tensor::of<uint8_t>({2, 2}, CLEAVE_BOOL, {1, 1, 0, 0});
  ASSERT_EQ(run(cleave_cpu_attention,
                {q.desc(), k.desc(), v.desc(), mask.desc()}, {y.desc()},
                {1, 1, 0, 0}, {1.0, 0.0}),
            0)
      << ctx.error;
  std::vector<float> got = y.vec();
  EXPECT_TRUE(std::isnan(got[2]) && std::isnan(got[3]));

  // With nan_to_zero that row is zeros. Query 0 sees both keys (scores 0
  // and 1): weights 1/(1+e) and e/(1+e).
  ASSERT_EQ(run(cleave_cpu_attention,
                {q.desc(), k.desc(), v.desc(), mask.desc()}, {y.desc()},
                {1, 1, 0, 1}, {1.0, 0.0}),
            0)
      << ctx.error;
  const float w = 1.0f / (1.0f + std::exp(1.0f));
  expectClose(y.vec(), {4 * w, 4 + 4 * w, 0, 0}, 1e-5f, 1e-6f);
}

TEST_F(AttentionTest, AttentionMatchesReference) {
  // Three blocks of query rows (150 > 2 x 64), rank-3 (packed heads)
  // tensors with 4 query heads over 2 key-value heads, a float mask
  // broadcast over batch and heads, the causal mask, a softcap and a
  // scale, against the definition in double.
  const int64_t batch = 2, seq = 150, qHeads = 4, kvHeads = 2, d = 8;
  Tensor q = Tensor::random({batch, seq, qHeads * d}, 11);
  Tensor k = Tensor::random({batch, seq, kvHeads * d}, 12);
  Tensor v = Tensor::random({batch, seq, kvHeads * d}, 13);
  Tensor mask = Tensor::random({seq, seq}, 14);
  Tensor y({batch, seq, qHeads * d});
  const double scale = 0.35, softcap = 5.0;
  ASSERT_EQ(run(cleave_cpu_attention,
                {q.desc(), k.desc(), v.desc(), mask.desc()}, {y.desc()},
                {qHeads, kvHeads, 1, 0}, {scale, softcap}),
            0)
      << ctx.error;
  std::vector<float> want(y.size());
  const float *Q = q.f32(), *K = k.f32(), *V = v.f32(), *M = mask.f32();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < qHeads; ++h)
      for (int64_t i = 0; i < seq; ++i) {
        const int64_t kvh = h / (qHeads / kvHeads);
        std::vector<double> p(seq);
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += double(Q[(b * seq + i) * qHeads * d + h * d + e]) *
                   K[(b * seq + j) * kvHeads * d + kvh * d + e];
          p[j] = softcap * std::tanh(dot * scale / softcap) + M[i * seq + j];
          max = std::max(max, p[j]);
        }
        for (int64_t j = 0; j <= i; ++j)
          sum += p[j] = std::exp(p[j] - max);
        for (int64_t e = 0; e < d; ++e) {
          double out = 0;
          for (int64_t j = 0; j <= i; ++j)
            out += p[j] / sum * V[(b * seq + j) * kvHeads * d + kvh * d + e];
          want[(b * seq + i) * qHeads * d + h * d + e] = float(out);
        }
      }
  expectClose(y.vec(), want, 1e-5f, 1e-6f);
}

TEST_F(AttentionTest, AttentionFailures) {
  Tensor q = Tensor::random({1, 4, 2, 8}, 3);
  Tensor k = Tensor::random({1, 2, 3, 8}, 4);
  Tensor y({1, 4, 2, 8});
  expectFailure(run(cleave_cpu_attention, {q.desc(), k.desc(), k.desc()},
                    {y.desc()}, {4, 3, 0, 0}, {1.0, 0.0}),
                "attention", "with 4 and 3 heads");
  Tensor mask = Tensor::random({3, 2}, 5);
  expectFailure(run(cleave_cpu_attention,
                    {q.desc(), k.desc(), k.desc(), mask.desc()}, {y.desc()},
                    {4, 2, 0, 0}, {1.0, 0.0}),
                "attention", "does not broadcast to the scores");
}

} // namespace
