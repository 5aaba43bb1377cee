//===- SoftmaxTest.cpp - softmax and log-softmax along every axis ---------===//

#include "KernelTest.h"

using namespace cleave::test;

namespace {

class SoftmaxTest : public KernelTest,
                    public ::testing::WithParamInterface<int64_t> {};

std::vector<float> naiveSoftmax(const Tensor &x, int64_t axis, bool log) {
  Shape strides = stridesOf(x.shape);
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < x.size(); ++i) {
    Shape index = unflatten(i, x.shape);
    int64_t base = i - index[axis] * strides[axis];
    double sum = 0;
    for (int64_t k = 0; k < x.shape[axis]; ++k)
      sum += std::exp(double(x.f32()[base + k * strides[axis]]));
    y[i] = log ? float(x.f32()[i] - std::log(sum))
               : float(std::exp(double(x.f32()[i])) / sum);
  }
  return y;
}

TEST_P(SoftmaxTest, MatchesDefinition) {
  int64_t axis = GetParam();
  // Wide inner dimensions cover the blocked path of non-last axes.
  Tensor x = Tensor::random({3, 5, 300}, 61, -4, 4);
  Tensor y({3, 5, 300}), z({3, 5, 300});
  ASSERT_EQ(run(cleave_cpu_softmax, {x.desc()}, {y.desc()}, {axis, 0}), 0);
  ASSERT_EQ(run(cleave_cpu_log_softmax, {x.desc()}, {z.desc()}, {axis}), 0);
  expectClose(y.vec(), naiveSoftmax(x, axis, false), 1e-6f, 1e-5f);
  expectClose(z.vec(), naiveSoftmax(x, axis, true), 1e-5f, 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(Axes, SoftmaxTest, ::testing::Values(0, 1, 2));

// A line is reduced in blocks of lanes and a tail: lines shorter than a
// block, of whole blocks, and with a tail, their maximum in the tail or in
// the last lane of a block, and a NaN in a later block.
TEST_F(SoftmaxTest, LinesOfEveryLength) {
  for (int64_t length : {1, 7, 63, 64, 65, 130, 1500}) {
    SCOPED_TRACE("length " + std::to_string(length));
    for (int64_t peak : {length - 1, std::min<int64_t>(63, length - 1)}) {
      Tensor x = Tensor::random({2, length}, 7 + length, -4, 4);
      x.f32()[peak] = 100.0f; // exp overflows unless shifted by it
      x.f32()[length + peak] = -100.0f;
      Tensor y({2, length}), z({2, length});
      ASSERT_EQ(run(cleave_cpu_softmax, {x.desc()}, {y.desc()}, {1, 0}), 0);
      ASSERT_EQ(run(cleave_cpu_log_softmax, {x.desc()}, {z.desc()}, {1}), 0);
      expectClose(y.vec(), naiveSoftmax(x, 1, false), 1e-6f, 1e-5f);
      expectClose(z.vec(), naiveSoftmax(x, 1, true), 1e-5f, 1e-5f);
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::random({1, 130}, 3, -4, 4);
  x.f32()[100] = nan;
  Tensor y({1, 130});
  ASSERT_EQ(run(cleave_cpu_softmax, {x.desc()}, {y.desc()}, {1, 0}), 0);
  for (float v : y.vec())
    EXPECT_TRUE(std::isnan(v));
}

TEST_F(SoftmaxTest, LargeLogitsDoNotOverflow) {
  Tensor x = Tensor::f32({1, 3}, {1000, 1000, 1000});
  Tensor y({1, 3});
  ASSERT_EQ(run(cleave_cpu_softmax, {x.desc()}, {y.desc()}, {1, 0}), 0);
  expectClose(y.vec(), {1.0f / 3, 1.0f / 3, 1.0f / 3}, 1e-6f, 0);
}

/// A line of -inf (a fully masked attention row) is NaN, or zeros with
/// nan_to_zero; other lines are unchanged. Both the contiguous and the
/// blocked (inner axis) paths.
TEST_F(SoftmaxTest, NanToZeroZeroesMaskedLines) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = Tensor::f32({2, 3}, {-inf, -inf, -inf, 0, -inf, 0});
  Tensor y({2, 3}), z({2, 3});
  ASSERT_EQ(run(cleave_cpu_softmax, {x.desc()}, {y.desc()}, {1, 0}), 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expectClose(y.vec(), {nan, nan, nan, 0.5f, 0, 0.5f}, 1e-6f, 0);
  ASSERT_EQ(run(cleave_cpu_softmax, {x.desc()}, {z.desc()}, {1, 1}), 0);
  expectClose(z.vec(), {0, 0, 0, 0.5f, 0, 0.5f}, 1e-6f, 0);

  // Along axis 0 the lines are the columns: the second is all -inf.
  Tensor c({2, 3});
  ASSERT_EQ(run(cleave_cpu_softmax, {x.desc()}, {c.desc()}, {0, 1}), 0);
  expectClose(c.vec(), {0, 0, 0, 1, 0, 1}, 1e-6f, 0);
}

TEST_F(SoftmaxTest, RejectsBadArguments) {
  Tensor x = Tensor::random({2, 3}, 1), y({2, 3});
  expectFailure(run(cleave_cpu_softmax, {x.desc()}, {y.desc()}, {2, 0}),
                "softmax", "axis 2 is out of range");
  Tensor xi({2, 3}, CLEAVE_I64);
  expectFailure(run(cleave_cpu_log_softmax, {xi.desc()}, {y.desc()}, {1}),
                "log_softmax", "only float32");
}

} // namespace
