//===- NormTest.cpp - normalisations against their formulas ---------------===//

#include "KernelTest.h"

using namespace cleave::test;

namespace {

class NormTest : public KernelTest {};

/// (x - mean) / sqrt(var + eps) over runs of `length` elements.
std::vector<double> normalizeRuns(const Tensor &x, int64_t length, double eps) {
  std::vector<double> out(x.size());
  for (int64_t start = 0; start < x.size(); start += length) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < length; ++i)
      mean += x.f32()[start + i];
    mean /= length;
    for (int64_t i = 0; i < length; ++i)
      var += (x.f32()[start + i] - mean) * (x.f32()[start + i] - mean);
    var /= length;
    for (int64_t i = 0; i < length; ++i)
      out[start + i] = (x.f32()[start + i] - mean) / std::sqrt(var + eps);
  }
  return out;
}

TEST_F(NormTest, BatchNorm) {
  Tensor x = Tensor::random({2, 3, 4, 5}, 41);
  Tensor scale = Tensor::random({3}, 42), bias = Tensor::random({3}, 43);
  Tensor mean = Tensor::random({3}, 44), var = Tensor::random({3}, 45, 0.5f, 2);
  Tensor y({2, 3, 4, 5});
  ASSERT_EQ(run(cleave_cpu_batch_norm,
                {x.desc(), scale.desc(), bias.desc(), mean.desc(), var.desc()},
                {y.desc()}, {}, {1e-3}),
            0);
  std::vector<float> expected;
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t c = (i / 20) % 3;
    expected.push_back(float(scale.f32()[c] * (x.f32()[i] - mean.f32()[c]) /
                                 std::sqrt(var.f32()[c] + 1e-3) +
                             bias.f32()[c]));
  }
  expectClose(y.vec(), expected, 1e-5f, 1e-5f);
  Tensor shortScale = Tensor::random({2}, 1);
  expectFailure(
      run(cleave_cpu_batch_norm,
          {x.desc(), shortScale.desc(), bias.desc(), mean.desc(), var.desc()},
          {y.desc()}, {}, {1e-3}),
      "batch_norm", "input 1 has 2 elements, expected 3");
}

TEST_F(NormTest, InstanceNorm) {
  Tensor x = Tensor::random({2, 3, 7, 5}, 46, -2, 5);
  Tensor scale = Tensor::random({3}, 47), bias = Tensor::random({3}, 48);
  Tensor y({2, 3, 7, 5});
  ASSERT_EQ(run(cleave_cpu_instance_norm, {x.desc(), scale.desc(), bias.desc()},
                {y.desc()}, {}, {1e-5}),
            0);
  std::vector<double> n = normalizeRuns(x, 35, 1e-5);
  std::vector<float> expected;
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t c = (i / 35) % 3;
    expected.push_back(float(n[i] * scale.f32()[c] + bias.f32()[c]));
  }
  expectClose(y.vec(), expected, 1e-5f, 1e-4f);
}

TEST_F(NormTest, LayerNormWithFullAndBroadcastParameters) {
  Tensor x = Tensor::random({3, 4, 6}, 49, -3, 3);
  std::vector<double> n = normalizeRuns(x, 24, 1e-5);
  // Full-shaped scale and bias over axes [1, 3).
  Tensor scale = Tensor::random({4, 6}, 50), bias = Tensor::random({4, 6}, 51);
  Tensor y({3, 4, 6});
  ASSERT_EQ(run(cleave_cpu_layer_norm, {x.desc(), scale.desc(), bias.desc()},
                {y.desc()}, {1}, {1e-5}),
            0)
      << ctx.error;
  std::vector<float> expected;
  for (int64_t i = 0; i < x.size(); ++i)
    expected.push_back(float(n[i] * scale.f32()[i % 24] + bias.f32()[i % 24]));
  expectClose(y.vec(), expected, 1e-5f, 1e-4f);

  // A scale broadcast along the first normalised axis, and no bias.
  Tensor row = Tensor::random({6}, 52);
  ASSERT_EQ(run(cleave_cpu_layer_norm, {x.desc(), row.desc(), absent()},
                {y.desc()}, {1}, {1e-5}),
            0)
      << ctx.error;
  expected.clear();
  for (int64_t i = 0; i < x.size(); ++i)
    expected.push_back(float(n[i] * row.f32()[i % 6]));
  expectClose(y.vec(), expected, 1e-5f, 1e-4f);

  Tensor bad = Tensor::random({5}, 53);
  expectFailure(run(cleave_cpu_layer_norm, {x.desc(), bad.desc()}, {y.desc()},
                    {1}, {1e-5}),
                "layer_norm", "must broadcast");
  expectFailure(run(cleave_cpu_layer_norm, {x.desc(), row.desc()}, {y.desc()},
                    {3}, {1e-5}),
                "layer_norm", "axis 3 is out of range");
}

TEST_F(NormTest, LayerNormHandComputed) {
  // [1, 3]: mean 2, variance 1, so y = [-1, 1] (epsilon 0).
  Tensor x = Tensor::f32({1, 2}, {1, 3}), s = Tensor::f32({2}, {1, 1});
  Tensor y({1, 2});
  ASSERT_EQ(
      run(cleave_cpu_layer_norm, {x.desc(), s.desc()}, {y.desc()}, {1}, {0.0}),
      0);
  expectClose(y.vec(), {-1, 1}, 1e-6f, 0);
}

TEST_F(NormTest, RmsNormWithFullAndBroadcastScale) {
  Tensor x = Tensor::random({3, 4, 6}, 57, -3, 3);
  // x / sqrt(mean(x^2) + eps) over runs of `length`.
  auto rmsNormalize = [&](int64_t length, double eps) {
    std::vector<double> out(x.size());
    for (int64_t start = 0; start < x.size(); start += length) {
      double squares = 0;
      for (int64_t i = 0; i < length; ++i)
        squares += double(x.f32()[start + i]) * x.f32()[start + i];
      double inv = 1.0 / std::sqrt(squares / length + eps);
      for (int64_t i = 0; i < length; ++i)
        out[start + i] = x.f32()[start + i] * inv;
    }
    return out;
  };
  Tensor scale = Tensor::random({4, 6}, 58);
  Tensor y({3, 4, 6});
  ASSERT_EQ(run(cleave_cpu_rms_norm, {x.desc(), scale.desc()}, {y.desc()}, {1},
                {1e-6}),
            0)
      << ctx.error;
  std::vector<double> n = rmsNormalize(24, 1e-6);
  std::vector<float> expected;
  for (int64_t i = 0; i < x.size(); ++i)
    expected.push_back(float(n[i] * scale.f32()[i % 24]));
  expectClose(y.vec(), expected, 1e-5f, 1e-5f);

  // Over axes [1, 3), the scale broadcast from 1 x 6.
  Tensor row = Tensor::random({1, 6}, 59);
  ASSERT_EQ(
      run(cleave_cpu_rms_norm, {x.desc(), row.desc()}, {y.desc()}, {1}, {1e-2}),
      0)
      << ctx.error;
  n = rmsNormalize(24, 1e-2);
  expected.clear();
  for (int64_t i = 0; i < x.size(); ++i)
    expected.push_back(float(n[i] * row.f32()[i % 6]));
  expectClose(y.vec(), expected, 1e-5f, 1e-5f);

  // A scale reaching into the outer dimensions does not broadcast.
  expectFailure(
      run(cleave_cpu_rms_norm, {x.desc(), row.desc()}, {y.desc()}, {2}, {1e-5}),
      "rms_norm", "must broadcast");
  expectFailure(
      run(cleave_cpu_rms_norm, {x.desc(), row.desc()}, {y.desc()}, {3}, {1e-5}),
      "rms_norm", "axis 3 is out of range");
}

TEST_F(NormTest, RmsNormHandComputed) {
  // [3, 4]: mean square 12.5, so y = [3, 4] / sqrt(12.5) (epsilon 0).
  Tensor x = Tensor::f32({1, 2}, {3, 4}), s = Tensor::f32({2}, {1, 2});
  Tensor y({1, 2});
  ASSERT_EQ(
      run(cleave_cpu_rms_norm, {x.desc(), s.desc()}, {y.desc()}, {1}, {0.0}),
      0);
  float r = std::sqrt(12.5f);
  expectClose(y.vec(), {3 / r, 8 / r}, 1e-6f, 0);
}

TEST_F(NormTest, GroupNorm) {
  Tensor x = Tensor::random({2, 6, 3, 4}, 54, -1, 4);
  Tensor scale = Tensor::random({6}, 55), bias = Tensor::random({6}, 56);
  Tensor y({2, 6, 3, 4});
  ASSERT_EQ(run(cleave_cpu_group_norm, {x.desc(), scale.desc(), bias.desc()},
                {y.desc()}, {3}, {1e-5}),
            0);
  std::vector<double> n = normalizeRuns(x, 2 * 12, 1e-5);
  std::vector<float> expected;
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t c = (i / 12) % 6;
    expected.push_back(float(n[i] * scale.f32()[c] + bias.f32()[c]));
  }
  expectClose(y.vec(), expected, 1e-5f, 1e-4f);
  expectFailure(run(cleave_cpu_group_norm,
                    {x.desc(), scale.desc(), bias.desc()}, {y.desc()}, {4},
                    {1e-5}),
                "group_norm", "num_groups 4 does not divide 6");
  Tensor xd({2, 6, 3, 4}, CLEAVE_F64);
  expectFailure(run(cleave_cpu_group_norm,
                    {xd.desc(), scale.desc(), bias.desc()}, {y.desc()}, {3},
                    {1e-5}),
                "group_norm", "only float32");
}

} // namespace
