//===- GemmTest.cpp - matmul and gemm against naive products --------------===//

#include "KernelTest.h"

#include "../KernelSupport.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <thread>

#include <omp.h>

using namespace cleave::test;

namespace {

class GemmTest : public KernelTest {};

/// numpy.matmul by definition.
std::vector<float> naiveMatmul(const Tensor &a, const Tensor &b) {
  Shape sa = a.shape, sb = b.shape;
  bool rowVector = sa.size() == 1, columnVector = sb.size() == 1;
  if (rowVector)
    sa.insert(sa.begin(), 1);
  if (columnVector)
    sb.push_back(1);
  size_t batchRank = std::max(sa.size(), sb.size()) - 2;
  Shape batch(batchRank);
  auto dimOf = [&](const Shape &s, size_t i) -> int64_t {
    size_t own = s.size() - 2;
    return i + own >= batchRank ? s[i + own - batchRank] : 1;
  };
  for (size_t i = 0; i < batchRank; ++i)
    batch[i] = std::max(dimOf(sa, i), dimOf(sb, i));
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  std::vector<float> y;
  for (int64_t flat = 0; flat < count(batch); ++flat) {
    Shape index = unflatten(flat, batch);
    int64_t offA = 0, offB = 0, strideA = m * k, strideB = k * n;
    for (size_t i = batchRank; i-- > 0;) {
      int64_t da = dimOf(sa, i), db = dimOf(sb, i);
      offA += (da == 1 ? 0 : index[i]) * strideA;
      offB += (db == 1 ? 0 : index[i]) * strideB;
      strideA *= da;
      strideB *= db;
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(a.f32()[offA + i * k + p]) * b.f32()[offB + p * n + j];
        y.push_back(float(sum));
      }
  }
  return y;
}

struct MatmulCase {
  Shape a, b, y;
};

class MatmulShapes : public GemmTest,
                     public ::testing::WithParamInterface<MatmulCase> {};

TEST_P(MatmulShapes, MatchesNaiveProduct) {
  const MatmulCase &c = GetParam();
  Tensor a = Tensor::random(c.a, 1), b = Tensor::random(c.b, 2), y(c.y);
  ASSERT_EQ(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()}), 0)
      << ctx.error;
  expectClose(y.vec(), naiveMatmul(a, b), 1e-4f, 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(
    Numpy, MatmulShapes,
    ::testing::Values(MatmulCase{{3, 4}, {4, 5}, {3, 5}},
                      // Batch folded into the rows of one sgemm.
                      MatmulCase{{2, 3, 4}, {4, 5}, {2, 3, 5}},
                      // Broadcast batch on both sides.
                      MatmulCase{{2, 1, 3, 4}, {1, 3, 4, 5}, {2, 3, 3, 5}},
                      MatmulCase{{3, 4}, {2, 4, 5}, {2, 3, 5}},
                      // Many small matrices: one per thread.
                      MatmulCase{{16, 8, 8}, {16, 8, 8}, {16, 8, 8}},
                      // 1-D operands.
                      MatmulCase{{4}, {4, 5}, {5}},
                      MatmulCase{{3, 4}, {4}, {3}},
                      MatmulCase{{2, 3, 4}, {4}, {2, 3}},
                      MatmulCase{{4}, {2, 4, 5}, {2, 5}},
                      MatmulCase{{4}, {4}, {}},
                      // Above the threshold of the threaded sgemm: split
                      // by rows, then by columns.
                      MatmulCase{{64, 96}, {96, 40}, {64, 40}},
                      MatmulCase{{4, 200}, {200, 300}, {4, 300}},
                      // Empty contraction gives zeros.
                      MatmulCase{{2, 0}, {0, 3}, {2, 3}}));

TEST_F(GemmTest, MatmulFloat64) {
  // 1 + 2^-30 is not a float32: the product keeps it only in float64.
  const double e = 1.0 + std::ldexp(1.0, -30);
  Tensor a = Tensor::of<double>({2, 3}, CLEAVE_F64, {e, 2, 3, 4, 5, 6});
  Tensor b = Tensor::of<double>({3, 2}, CLEAVE_F64, {1, 0, 0, 1, 1, 1});
  Tensor y({2, 2}, CLEAVE_F64);
  ASSERT_EQ(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()}), 0)
      << ctx.error;
  EXPECT_EQ(y.vecOf<double>(), (std::vector<double>{e + 3, 5, 10, 11}));
}

TEST_F(GemmTest, MatmulHandComputed) {
  Tensor a = Tensor::f32({2, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::f32({2, 2}, {5, 6, 7, 8});
  Tensor y({2, 2});
  ASSERT_EQ(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()}), 0);
  EXPECT_EQ(y.vec(), (std::vector<float>{19, 22, 43, 50}));
}

TEST_F(GemmTest, MatmulRejectsBadOperands) {
  Tensor a = Tensor::random({2, 3}, 1), b = Tensor::random({4, 5}, 2);
  Tensor y({2, 5});
  expectFailure(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()}),
                "matmul", "contracted dimensions differ");
  Tensor ai({2, 4}, CLEAVE_I32), bi = Tensor::random({4, 5}, 2);
  expectFailure(run(cleave_cpu_matmul, {ai.desc(), bi.desc()}, {y.desc()}),
                "matmul", "must all be float32 (1) or all float64 (4)");
  Tensor a64({2, 3}, CLEAVE_F64);
  expectFailure(run(cleave_cpu_matmul, {a64.desc(), b.desc()}, {y.desc()}),
                "matmul", "dtypes 4 x 1 -> 1");
  Tensor a3 = Tensor::random({2, 3, 4}, 1), b3 = Tensor::random({3, 4, 5}, 1);
  Tensor y3({3, 3, 5});
  expectFailure(run(cleave_cpu_matmul, {a3.desc(), b3.desc()}, {y3.desc()}),
                "matmul", "does not broadcast");
  expectFailure(run(cleave_cpu_matmul, {a.desc()}, {y.desc()}), "matmul",
                "expected at least 2 inputs");
}

/// alpha op(A) op(B) + beta C with C broadcast.
std::vector<float> naiveGemm(const Tensor &a, const Tensor &b, const Tensor *c,
                             bool transA, bool transB, float alpha,
                             float beta) {
  int64_t m = transA ? a.shape[1] : a.shape[0];
  int64_t k = transA ? a.shape[0] : a.shape[1];
  int64_t n = transB ? b.shape[0] : b.shape[1];
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        float av = transA ? a.f32()[p * m + i] : a.f32()[i * k + p];
        float bv = transB ? b.f32()[j * k + p] : b.f32()[p * n + j];
        sum += double(av) * bv;
      }
      double cv = 0;
      if (c) {
        int64_t rows = c->shape.size() == 2 ? c->shape[0] : 1;
        int64_t cols = c->shape.empty() ? 1 : c->shape.back();
        cv = c->f32()[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
      }
      y[i * n + j] = float(alpha * sum + beta * cv);
    }
  return y;
}

struct GemmCase {
  bool transA, transB;
  Shape c; // empty vector with hasC false: no C
  bool hasC;
};

class GemmVariants : public GemmTest,
                     public ::testing::WithParamInterface<GemmCase> {};

TEST_P(GemmVariants, MatchesNaiveGemm) {
  const GemmCase &p = GetParam();
  const int64_t m = 5, k = 7, n = 6;
  Tensor a = Tensor::random(p.transA ? Shape{k, m} : Shape{m, k}, 3);
  Tensor b = Tensor::random(p.transB ? Shape{n, k} : Shape{k, n}, 4);
  Tensor c = Tensor::random(p.c, 5), y({m, n});
  CleaveTensor cd = p.hasC ? c.desc() : absent();
  ASSERT_EQ(run(cleave_cpu_gemm, {a.desc(), b.desc(), cd}, {y.desc()},
                {p.transA, p.transB}, {0.5, 2.0}),
            0)
      << ctx.error;
  expectClose(
      y.vec(),
      naiveGemm(a, b, p.hasC ? &c : nullptr, p.transA, p.transB, 0.5f, 2.0f),
      1e-4f, 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(TransposesAndBias, GemmVariants,
                         ::testing::Values(GemmCase{false, false, {}, false},
                                           GemmCase{true, false, {6}, true},
                                           GemmCase{false, true, {5, 6}, true},
                                           GemmCase{true, true, {5, 1}, true},
                                           GemmCase{false, false, {1, 6}, true},
                                           GemmCase{false, false, {}, true}));

TEST_F(GemmTest, ThreadedGemmSplitsEveryLayout) {
  // Shapes above the threaded sgemm's threshold; 40 rows split by rows, 3
  // rows by columns, for each transpose combination.
  for (int64_t m : {40, 3})
    for (int trans = 0; trans < 4; ++trans) {
      bool transA = trans & 1, transB = trans & 2;
      const int64_t k = 100, n = m == 3 ? 500 : 70;
      SCOPED_TRACE(testing::Message() << "m " << m << " trans " << trans);
      Tensor a = Tensor::random(transA ? Shape{k, m} : Shape{m, k}, 6);
      Tensor b = Tensor::random(transB ? Shape{n, k} : Shape{k, n}, 7);
      Tensor c = Tensor::random({n}, 8), y({m, n});
      ASSERT_EQ(run(cleave_cpu_gemm, {a.desc(), b.desc(), c.desc()}, {y.desc()},
                    {transA, transB}, {1.0, 1.0}),
                0);
      expectClose(y.vec(), naiveGemm(a, b, &c, transA, transB, 1, 1), 1e-4f,
                  1e-4f);
    }
}

/// Products of constant weights from 2^19 multiply-adds run on oneDNN
/// (weights packed once); below that, or over writable weights, on
/// OpenBLAS. Every path gives the naive product: matmul with its batch
/// folded into rows, gemm with B transposed or not, with a bias row (which
/// oneDNN adds), a full C, or alpha other than 1 (both left to OpenBLAS).
TEST_F(GemmTest, ConstantWeightProducts) {
  const int64_t m = 64, k = 96, n = 128;
  ASSERT_GE(m * k * n, int64_t(1) << 19);
  for (bool constant : {false, true}) {
    SCOPED_TRACE(constant ? "constant weights" : "writable weights");
    Tensor a = Tensor::random({2, m / 2, k}, 21);
    for (bool transB : {false, true}) {
      Tensor b = Tensor::random(transB ? Shape{n, k} : Shape{k, n}, 22);
      ctx.constantWeights = constant ? b.f32() : nullptr;
      ctx.constantWeightBytes = constant ? b.size() * sizeof(float) : 0;
      if (!transB) {
        Tensor y({2, m / 2, n});
        ASSERT_EQ(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()}), 0)
            << ctx.error;
        expectClose(y.vec(), naiveMatmul(a, b), 1e-4f, 1e-4f);
      }
      Tensor a2 = Tensor::random({m, k}, 23);
      for (Shape cShape : {Shape{n}, Shape{1, n}, Shape{m, n}})
        for (double alpha : {1.0, 0.5}) {
          SCOPED_TRACE(testing::Message()
                       << "transB " << transB << " C rank " << cShape.size()
                       << " rows " << cShape[0] << " alpha " << alpha);
          Tensor c = Tensor::random(cShape, 24), y({m, n});
          ASSERT_EQ(run(cleave_cpu_gemm, {a2.desc(), b.desc(), c.desc()},
                        {y.desc()}, {0, transB}, {alpha, 1.0}),
                    0)
              << ctx.error;
          expectClose(y.vec(), naiveGemm(a2, b, &c, false, transB, alpha, 1),
                      1e-4f, 1e-4f);
        }
    }
  }
}

/// What the kernels report of the weights they pack, and packed weights
/// a bundle would store (cleave_rt_find_packed_weights), for one offset.
class StoredPacking : public cleave::rt::PackedWeights {
public:
  const void *find(int64_t offset, const void *layout, size_t layoutBytes,
                   size_t bytes) const override {
    return offset == storedOffset && bytes == stored.size() ? stored.data()
                                                            : nullptr;
  }
  void packed(int64_t offset, const void *layout, size_t layoutBytes,
              const void *data, size_t bytes) override {
    reports += 1;
    lastOffset = offset;
    last.assign(static_cast<const char *>(data), bytes);
  }
  int reports = 0;
  int64_t lastOffset = -1;
  std::string last;
  int64_t storedOffset = -1;
  std::string stored;
};

/// Which products run on oneDNN, packing their weights: those of constant
/// weights from 2^19 multiply-adds, where oneDNN has a kernel that takes
/// packed weights (brgemm, on x86-64-v4; below that oneDNN 2.6 has only a
/// jit sgemm that packs per call, and the product stays on OpenBLAS).
/// Smaller products and products of writable weights stay on OpenBLAS.
/// Where the bundle stores the packed form, the kernel reads it instead of
/// packing: stored packing of other weights gives their product.
TEST_F(GemmTest, ConstantWeightsPackedWhereOneDnnPacks) {
  const bool packs = ctx.cpuLevel >= 4;
  Tensor a = Tensor::random({64, 96}, 31), y({64, 128});
  Tensor b = Tensor::random({96, 128}, 32),
         small = Tensor::random({64, 64}, 35);
  StoredPacking packing;
  ctx.packedWeights = &packing;
  ctx.constantWeights = b.f32();
  ctx.constantWeightBytes = b.size() * sizeof(float);
  ASSERT_EQ(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()}), 0)
      << ctx.error;
  expectClose(y.vec(), naiveMatmul(a, b), 1e-4f, 1e-4f);
  EXPECT_EQ(packing.reports, packs ? 1 : 0);
  if (packs) {
    EXPECT_EQ(packing.lastOffset, 0);
    EXPECT_GE(packing.last.size(), b.size() * sizeof(float));
  }

  // Below 2^19 multiply-adds, and over writable weights: OpenBLAS.
  Tensor as = Tensor::random({16, 64}, 33), ys({16, 64});
  ctx.constantWeights = small.f32();
  ctx.constantWeightBytes = small.size() * sizeof(float);
  ASSERT_EQ(run(cleave_cpu_matmul, {as.desc(), small.desc()}, {ys.desc()}), 0);
  expectClose(ys.vec(), naiveMatmul(as, small), 1e-4f, 1e-4f);
  ctx.constantWeights = nullptr;
  ctx.constantWeightBytes = 0;
  ASSERT_EQ(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()}), 0);
  EXPECT_EQ(packing.reports, packs ? 1 : 0);
  if (!packs)
    return;

  // A fresh context whose bundle stores the packed form of other weights
  // for these: the kernel reads what is stored.
  auto runFresh = [&](StoredPacking &packings, Tensor &w) {
    CleaveContext fresh;
    fresh.numThreads = ctx.numThreads;
    fresh.cpuLevel = ctx.cpuLevel;
    fresh.packedWeights = &packings;
    fresh.constantWeights = w.f32();
    fresh.constantWeightBytes = w.size() * sizeof(float);
    std::vector<CleaveTensor> in = {a.desc(), w.desc()};
    std::vector<CleaveTensor> out = {y.desc()};
    const int64_t ints[] = {CLEAVE_EPILOGUE_NONE};
    const double floats[] = {0.0, 0.0};
    int32_t status =
        cleave_cpu_matmul(&fresh, in.data(), 2, out.data(), 1, ints, floats);
    EXPECT_EQ(status, 0) << fresh.error;
    std::free(fresh.scratch);
    return status;
  };
  Tensor other = Tensor::random({96, 128}, 34);
  StoredPacking recorder;
  ASSERT_EQ(runFresh(recorder, other), 0);
  ASSERT_EQ(recorder.reports, 1);
  StoredPacking stored;
  stored.storedOffset = 0;
  stored.stored = recorder.last;
  ASSERT_EQ(runFresh(stored, b), 0);
  EXPECT_EQ(stored.reports, 0);
  expectClose(y.vec(), naiveMatmul(a, other), 1e-4f, 1e-4f);
}

/// `v` after a CleaveEpilogue, in double precision.
double activate(int64_t kind, double v, double lo, double hi) {
  switch (kind) {
  case CLEAVE_EPILOGUE_RELU:
    return v > 0 ? v : 0;
  case CLEAVE_EPILOGUE_CLIP:
    return std::min(std::max(v, lo), hi);
  case CLEAVE_EPILOGUE_SILU:
    return v / (1 + std::exp(-v));
  case CLEAVE_EPILOGUE_GELU:
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  case CLEAVE_EPILOGUE_GELU_TANH:
    return 0.5 * v *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  default:
    return v;
  }
}

/// A matmul that applies the ops after it: Y = epilogue(A B + bias + R),
/// for every activation, with and without a bias, with no residual, one of
/// its own and one that is Y itself (the add in place); over constant
/// weights (oneDNN's post-ops on x86-64-v4) and writable ones (OpenBLAS
/// and one pass after), with the batch folded into rows, and a batch of
/// products of their own.
TEST_F(GemmTest, MatmulEpilogue) {
  struct Case {
    Shape a, b;
  };
  const int64_t n = 128;
  for (Case c : {Case{{2, 32, 96}, {96, n}}, Case{{2, 4, 8}, {2, 8, n}}})
    for (bool constant : {false, true})
      for (int64_t kind = CLEAVE_EPILOGUE_NONE;
           kind <= CLEAVE_EPILOGUE_GELU_TANH; ++kind)
        for (bool withBias : {false, true})
          for (int residualMode : {0, 1, 2}) {
            SCOPED_TRACE(testing::Message()
                         << "A rank " << c.a.size() << " constant " << constant
                         << " epilogue " << kind << " bias " << withBias
                         << " residual " << residualMode);
            Tensor a = Tensor::random(c.a, 41, -2.0f, 2.0f);
            Tensor b = Tensor::random(c.b, 42, -0.3f, 0.3f);
            Tensor bias = Tensor::random({1, n}, 43);
            Shape yShape = {2, c.a[1], n};
            Tensor r = Tensor::random(yShape, 44), y(yShape);
            ctx.constantWeights = constant ? b.f32() : nullptr;
            ctx.constantWeightBytes = constant ? b.size() * sizeof(float) : 0;
            const double lo = -0.25, hi = 0.5;
            std::vector<float> expected = naiveMatmul(a, b);
            for (size_t i = 0; i < expected.size(); ++i) {
              double v = expected[i];
              if (withBias)
                v += bias.f32()[i % n];
              if (residualMode)
                v += r.f32()[i];
              expected[i] = float(activate(kind, v, lo, hi));
            }
            std::vector<CleaveTensor> in = {
                a.desc(), b.desc(), withBias ? bias.desc() : CleaveTensor{}};
            if (residualMode == 1)
              in.push_back(r.desc());
            if (residualMode == 2) {
              std::copy(r.values().begin(), r.values().end(), y.f32());
              in.push_back(y.desc());
            }
            ASSERT_EQ(run(cleave_cpu_matmul, in, {y.desc()}, {kind}, {lo, hi}),
                      0)
                << ctx.error;
            expectClose(y.vec(), expected, 2e-4f, 2e-4f);
          }
}

TEST_F(GemmTest, MatmulEpilogueErrors) {
  Tensor a = Tensor::random({4, 8}, 51), b = Tensor::random({8, 6}, 52);
  Tensor y({4, 6}), bias5({5}), r({4, 5});
  expectFailure(
      run(cleave_cpu_matmul, {a.desc(), b.desc(), bias5.desc()}, {y.desc()}),
      "matmul", "the bias has 5 elements, Y's last dimension 6");
  expectFailure(run(cleave_cpu_matmul,
                    {a.desc(), b.desc(), CleaveTensor{}, r.desc()}, {y.desc()}),
                "matmul", "R has 20 elements, Y 24");
  expectFailure(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()}, {9}),
                "matmul", "unknown epilogue 9");
  expectFailure(run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()},
                    {CLEAVE_EPILOGUE_CLIP}, {1.0, -1.0}),
                "matmul", "the clamp's bounds [1, -1] are not ordered");
  Tensor a64({4, 8}, CLEAVE_F64), b64({8, 6}, CLEAVE_F64),
      y64({4, 6}, CLEAVE_F64);
  expectFailure(run(cleave_cpu_matmul, {a64.desc(), b64.desc()}, {y64.desc()},
                    {CLEAVE_EPILOGUE_RELU}),
                "matmul", "applies to float32 products only");
}

/// An ONNX Gemm that applies the ops after it: Y = epilogue(A op(B) + C +
/// R), for every activation, with no C, a row of C (which oneDNN adds as
/// its bias) and a full one, B transposed or not, with no residual, one of
/// its own and one that is Y itself (the add in place, after C); over
/// constant weights (oneDNN's post-ops on x86-64-v4) and writable ones
/// (OpenBLAS and one pass after), and once with alpha 0.5 (OpenBLAS).
TEST_F(GemmTest, GemmEpilogue) {
  const int64_t m = 64, k = 96, n = 128;
  ASSERT_GE(m * k * n, int64_t(1) << 19);
  Tensor a = Tensor::random({m, k}, 61, -2.0f, 2.0f);
  for (bool transB : {false, true})
    for (bool constant : {false, true})
      for (Shape cShape : {Shape{}, Shape{n}, Shape{m, n}})
        for (int64_t kind = CLEAVE_EPILOGUE_NONE;
             kind <= CLEAVE_EPILOGUE_GELU_TANH; ++kind)
          for (int residualMode : {0, 1, 2})
            for (double alpha : {1.0, 0.5}) {
              if (alpha != 1.0 && (kind != CLEAVE_EPILOGUE_RELU || !constant))
                continue;
              SCOPED_TRACE(testing::Message()
                           << "transB " << transB << " constant " << constant
                           << " C rank " << cShape.size() << " epilogue "
                           << kind << " residual " << residualMode << " alpha "
                           << alpha);
              Tensor b = Tensor::random(transB ? Shape{n, k} : Shape{k, n}, 62,
                                        -0.3f, 0.3f);
              Tensor c = Tensor::random(cShape.empty() ? Shape{1} : cShape, 63);
              Tensor r = Tensor::random({m, n}, 64), y({m, n});
              ctx.constantWeights = constant ? b.f32() : nullptr;
              ctx.constantWeightBytes = constant ? b.size() * sizeof(float) : 0;
              const double lo = -0.25, hi = 0.5;
              const bool hasC = !cShape.empty();
              std::vector<float> expected = naiveGemm(
                  a, b, hasC ? &c : nullptr, false, transB, float(alpha), 1.0f);
              for (size_t i = 0; i < expected.size(); ++i) {
                double v = expected[i];
                if (residualMode)
                  v += r.f32()[i];
                expected[i] = float(activate(kind, v, lo, hi));
              }
              std::vector<CleaveTensor> in = {a.desc(), b.desc(),
                                              hasC ? c.desc() : absent()};
              if (residualMode == 1)
                in.push_back(r.desc());
              if (residualMode == 2) {
                std::copy(r.values().begin(), r.values().end(), y.f32());
                in.push_back(y.desc());
              }
              ASSERT_EQ(run(cleave_cpu_gemm, in, {y.desc()}, {0, transB, kind},
                            {alpha, 1.0, lo, hi}),
                        0)
                  << ctx.error;
              expectClose(y.vec(), expected, 2e-4f, 2e-4f);
            }
}

TEST_F(GemmTest, GemmEpilogueErrors) {
  Tensor a = Tensor::random({4, 8}, 71), b = Tensor::random({8, 6}, 72);
  Tensor y({4, 6}), r({4, 5});
  expectFailure(run(cleave_cpu_gemm, {a.desc(), b.desc(), absent(), r.desc()},
                    {y.desc()}, {0, 0}, {1.0, 1.0}),
                "gemm", "R has 20 elements, Y 24");
  expectFailure(run(cleave_cpu_gemm, {a.desc(), b.desc()}, {y.desc()},
                    {0, 0, 9}, {1.0, 1.0}),
                "gemm", "unknown epilogue 9");
  expectFailure(run(cleave_cpu_gemm, {a.desc(), b.desc()}, {y.desc()},
                    {0, 0, CLEAVE_EPILOGUE_CLIP}, {1.0, 1.0, 1.0, -1.0}),
                "gemm", "the clamp's bounds [1, -1] are not ordered");
}

/// The threads of this process.
static size_t countThreads() {
  size_t count = 0;
  for ([[maybe_unused]] const auto &entry :
       std::filesystem::directory_iterator("/proc/self/task"))
    ++count;
  return count;
}

TEST_F(GemmTest, OneThreadedMatmulStartsNoTeam) {
  // A rank's thread of a session group: a default team of several threads,
  // and a kernel told to use one. OpenBLAS's OpenMP flavour would size its
  // own team by that default and start one per calling thread.
  ctx.numThreads = 1;
  Tensor a = Tensor::random({256, 256}, 11), b = Tensor::random({256, 256}, 12);
  Tensor y({256, 256});
  size_t before = 0, after = 0;
  int defaultAfter = 0;
  int32_t status = -1;
  std::thread rank([&] {
    omp_set_num_threads(4);
    before = countThreads();
    status = run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()});
    after = countThreads();
    defaultAfter = omp_get_max_threads();
  });
  rank.join();
  ASSERT_EQ(status, 0) << ctx.error;
  EXPECT_EQ(after, before);
  EXPECT_EQ(defaultAfter, 4);
  expectClose(y.vec(), naiveGemm(a, b, nullptr, false, false, 1, 0), 1e-4f,
              1e-4f);
}

TEST_F(GemmTest, SmallBatchedMatmulStartsNoTeam) {
  // A batch of products with their own B (an attention's scores, head by
  // head) at two threads: 32 products of 8 x 8 x 8 (2^14 multiply-adds in
  // all, below kParallelProductWork whether threads spin or sleep) run on
  // the calling thread, 32 of 64 x 64 x 64 (2^23) on a team, one product
  // per thread. A team started by this new thread stays
  // with it: the process has one thread more after it.
  ctx.numThreads = 2;
  auto threadsAdded = [&](int64_t size, std::vector<float> &got,
                          std::vector<float> &expected) {
    Tensor a = Tensor::random({32, size, size}, 13);
    Tensor b = Tensor::random({32, size, size}, 14);
    Tensor y({32, size, size});
    size_t before = 0, after = 0;
    int32_t status = -1;
    std::thread rank([&] {
      before = countThreads();
      status = run(cleave_cpu_matmul, {a.desc(), b.desc()}, {y.desc()});
      after = countThreads();
    });
    rank.join();
    EXPECT_EQ(status, 0) << ctx.error;
    got = y.vec();
    expected = naiveMatmul(a, b);
    return after - before;
  };
  std::vector<float> got, expected;
  ASSERT_LT(32 * 8 * 8 * 8, cleave::cpu::kParallelProductWork);
  EXPECT_EQ(threadsAdded(8, got, expected), 0u);
  expectClose(got, expected, 1e-4f, 1e-4f);
  EXPECT_EQ(threadsAdded(64, got, expected), 1u);
  expectClose(got, expected, 1e-4f, 1e-4f);
}

TEST_F(GemmTest, GemmRejectsBadOperands) {
  Tensor a = Tensor::random({2, 3}, 1), b = Tensor::random({3, 4}, 2);
  Tensor c = Tensor::random({3, 4}, 3), y({2, 4});
  expectFailure(run(cleave_cpu_gemm, {a.desc(), b.desc(), c.desc()}, {y.desc()},
                    {0, 0}, {1.0, 1.0}),
                "gemm", "does not broadcast");
  expectFailure(run(cleave_cpu_gemm, {a.desc(), b.desc()}, {y.desc()}, {1, 0},
                    {1.0, 1.0}),
                "gemm", "contracted dimensions differ");
  Tensor a64({2, 3}, CLEAVE_F64);
  expectFailure(run(cleave_cpu_gemm, {a64.desc(), b.desc()}, {y.desc()}, {0, 0},
                    {1.0, 1.0}),
                "gemm", "only float32");
  Tensor bad({2, 5});
  expectFailure(run(cleave_cpu_gemm, {a.desc(), b.desc()}, {bad.desc()}, {0, 0},
                    {1.0, 1.0}),
                "gemm", "Y is 2x5");
}

} // namespace
