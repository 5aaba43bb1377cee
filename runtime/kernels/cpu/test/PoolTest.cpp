//===- PoolTest.cpp - pooling against direct window loops -----------------===//

#include "KernelTest.h"

#include <limits>

using namespace cleave::test;

namespace {

struct PoolCase {
  Shape x, kernel, strides, pads, dilations;
  bool ceilMode, countIncludePad;
};

Shape poolOutput(const PoolCase &c) {
  size_t n = c.kernel.size();
  Shape y = {c.x[0], c.x[1]};
  for (size_t i = 0; i < n; ++i) {
    int64_t span = (c.kernel[i] - 1) * c.dilations[i] + 1;
    int64_t room = c.x[2 + i] + c.pads[i] + c.pads[n + i] - span;
    int64_t o = (c.ceilMode ? (room + c.strides[i] - 1) / c.strides[i]
                            : room / c.strides[i]) +
                1;
    if (c.ceilMode && (o - 1) * c.strides[i] >= c.x[2 + i] + c.pads[i])
      --o;
    y.push_back(o);
  }
  return y;
}

std::vector<int64_t> poolInts(const PoolCase &c, bool average) {
  std::vector<int64_t> ints = {int64_t(c.kernel.size())};
  for (const Shape *s : {&c.kernel, &c.strides, &c.pads, &c.dilations})
    ints.insert(ints.end(), s->begin(), s->end());
  ints.push_back(c.ceilMode);
  if (average)
    ints.push_back(c.countIncludePad);
  return ints;
}

std::vector<float> naivePool(const PoolCase &c, const Tensor &x,
                             const Shape &ys, bool average) {
  size_t n = c.kernel.size();
  Shape outSpatial(ys.begin() + 2, ys.end());
  Shape xs = stridesOf(c.x);
  std::vector<float> y;
  for (int64_t plane = 0; plane < c.x[0] * c.x[1]; ++plane)
    for (int64_t p = 0; p < count(outSpatial); ++p) {
      Shape pos = unflatten(p, outSpatial);
      float max = -std::numeric_limits<float>::infinity();
      double sum = 0;
      int64_t valid = 0, counted = 0;
      for (int64_t t = 0; t < count(c.kernel); ++t) {
        Shape tap = unflatten(t, c.kernel);
        int64_t off = plane * xs[1];
        bool inside = true, inPads = true;
        for (size_t d = 0; d < n; ++d) {
          int64_t i =
              pos[d] * c.strides[d] - c.pads[d] + tap[d] * c.dilations[d];
          inside &= i >= 0 && i < c.x[2 + d];
          inPads &= i < c.x[2 + d] + c.pads[n + d];
          off += i * xs[2 + d];
        }
        counted += inPads;
        if (!inside)
          continue;
        ++valid;
        max = std::max(max, x.f32()[off]);
        sum += x.f32()[off];
      }
      if (!average)
        y.push_back(max);
      else
        y.push_back(float(sum / (c.countIncludePad ? counted : valid)));
    }
  return y;
}

class PoolTest : public KernelTest {};

class PoolShapes : public PoolTest,
                   public ::testing::WithParamInterface<PoolCase> {};

TEST_P(PoolShapes, MaxPoolMatchesWindows) {
  const PoolCase &c = GetParam();
  Tensor x = Tensor::random(c.x, 31);
  Shape ys = poolOutput(c);
  Tensor y(ys);
  ASSERT_EQ(
      run(cleave_cpu_max_pool, {x.desc()}, {y.desc()}, poolInts(c, false)), 0)
      << ctx.error;
  expectClose(y.vec(), naivePool(c, x, ys, false), 0.0f, 0.0f);
}

TEST_P(PoolShapes, AveragePoolMatchesWindows) {
  const PoolCase &c = GetParam();
  Tensor x = Tensor::random(c.x, 32);
  Shape ys = poolOutput(c);
  Tensor y(ys);
  ASSERT_EQ(
      run(cleave_cpu_average_pool, {x.desc()}, {y.desc()}, poolInts(c, true)),
      0)
      << ctx.error;
  expectClose(y.vec(), naivePool(c, x, ys, true), 1e-6f, 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(
    Windows, PoolShapes,
    ::testing::Values(
        PoolCase{
            {2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, false},
        PoolCase{
            {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, false},
        PoolCase{
            {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, true},
        // ceil_mode: the last window hangs over the end padding.
        PoolCase{
            {1, 1, 6, 7}, {3, 2}, {2, 2}, {0, 1, 1, 0}, {1, 1}, true, true},
        PoolCase{
            {1, 1, 6, 7}, {3, 2}, {2, 2}, {0, 1, 1, 0}, {1, 1}, true, false},
        // Dilated, 1-D and 3-D.
        PoolCase{
            {1, 2, 9, 9}, {2, 3}, {1, 2}, {1, 2, 1, 2}, {2, 2}, false, true},
        PoolCase{{2, 3, 11}, {3}, {2}, {1, 1}, {1}, true, false},
        PoolCase{{1, 2, 4, 5, 6},
                 {2, 2, 3},
                 {2, 1, 2},
                 {0, 1, 1, 1, 0, 1},
                 {1, 1, 1},
                 false,
                 true}));

/// `nchw` (N x C x H x W) in nChw<block>c.
std::vector<float> toBlocked(const std::vector<float> &nchw, const Shape &s,
                             int64_t block) {
  std::vector<float> blocked(nchw.size());
  const int64_t c = s[1], plane = s[2] * s[3];
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        blocked[(n * c + ch / block * block) * plane + p * block + ch % block] =
            nchw[(n * c + ch) * plane + p];
  return blocked;
}

/// The 2-D windows above over 32 channels of 2 images in nChw8c and
/// nChw16c (X and Y blocked alike) match the pools of X in NCHW (which the
/// tests above check against direct windows); a NaN in one channel stays
/// in that channel's windows only.
TEST_F(PoolTest, BlockedPoolsMatchWindows) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<PoolCase> cases = {
      {{2, 32, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, false},
      {{2, 32, 16, 16}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, false},
      {{2, 32, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, true},
      {{2, 32, 6, 7}, {3, 2}, {2, 2}, {0, 1, 1, 0}, {1, 1}, true, true},
      {{2, 32, 6, 7}, {3, 2}, {2, 2}, {0, 1, 1, 0}, {1, 1}, true, false},
      {{2, 32, 9, 9}, {2, 3}, {1, 2}, {1, 2, 1, 2}, {2, 2}, false, true}};
  for (const PoolCase &c : cases)
    for (bool average : {false, true})
      for (int64_t block : {8, 16}) {
        SCOPED_TRACE(
            "x " + std::to_string(c.x[2]) + "x" + std::to_string(c.x[3]) +
            ", kernel " + std::to_string(c.kernel[0]) + "x" +
            std::to_string(c.kernel[1]) + (average ? ", average" : ", max") +
            ", block " + std::to_string(block));
        Tensor x = Tensor::random(c.x, 36);
        // Channel 21 of the second image, at the centre of its plane.
        x.f32()[(1 * 32 + 21) * c.x[2] * c.x[3] + c.x[2] / 2 * c.x[3] +
                c.x[3] / 2] = nan;
        Shape ys = poolOutput(c);
        auto kernel = average ? cleave_cpu_average_pool : cleave_cpu_max_pool;
        std::vector<int64_t> ints = poolInts(c, average);
        Tensor plain(ys);
        ASSERT_EQ(run(kernel, {x.desc()}, {plain.desc()}, ints), 0)
            << ctx.error;
        std::vector<float> want = toBlocked(plain.vec(), ys, block);
        Tensor bx = Tensor::f32(c.x, toBlocked(x.vec(), c.x, block));
        Tensor y(ys);
        ints.push_back(block);
        ASSERT_EQ(run(kernel, {bx.desc()}, {y.desc()}, ints), 0) << ctx.error;
        std::vector<float> got = y.vec();
        EXPECT_GT(std::count_if(want.begin(), want.end(),
                                [](float v) { return std::isnan(v); }),
                  0);
        for (size_t i = 0; i < got.size(); ++i) {
          if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
            continue;
          }
          EXPECT_NEAR(got[i], want[i], 1e-6 + 1e-5 * std::fabs(want[i]))
              << "element " << i;
        }
      }
}

TEST_F(PoolTest, HandComputed) {
  Tensor x = Tensor::f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor y({1, 1, 1, 2});
  ASSERT_EQ(run(cleave_cpu_max_pool, {x.desc()}, {y.desc()},
                {2, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0}),
            0);
  EXPECT_EQ(y.vec(), (std::vector<float>{6, 8}));
  ASSERT_EQ(run(cleave_cpu_average_pool, {x.desc()}, {y.desc()},
                {2, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0, 0}),
            0);
  EXPECT_EQ(y.vec(), (std::vector<float>{3.5f, 5.5f}));
  // A padded corner: 1 of 4 taps is inside; with count_include_pad the
  // divisor is 4.
  Tensor one = Tensor::f32({1, 1, 1, 1}, {8});
  Tensor r({1, 1, 1, 1});
  ASSERT_EQ(run(cleave_cpu_average_pool, {one.desc()}, {r.desc()},
                {2, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1}),
            0);
  EXPECT_EQ(r.vec(), (std::vector<float>{2.0f}));
  ASSERT_EQ(run(cleave_cpu_average_pool, {one.desc()}, {r.desc()},
                {2, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0}),
            0);
  EXPECT_EQ(r.vec(), (std::vector<float>{8.0f}));
}

TEST_F(PoolTest, NanWinsTheMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::f32({1, 1, 1, 4}, {1, nan, 3, 4});
  Tensor y({1, 1, 1, 2});
  ASSERT_EQ(run(cleave_cpu_max_pool, {x.desc()}, {y.desc()},
                {2, 1, 2, 1, 2, 0, 0, 0, 0, 1, 1, 0}),
            0);
  EXPECT_TRUE(std::isnan(y.vec()[0]));
  EXPECT_EQ(y.vec()[1], 4.0f);
}

TEST_F(PoolTest, GlobalPools) {
  Tensor x = Tensor::random({2, 3, 4, 5}, 33);
  Tensor avg({2, 3, 1, 1}), max({2, 3, 1, 1});
  ASSERT_EQ(run(cleave_cpu_global_average_pool, {x.desc()}, {avg.desc()}), 0);
  ASSERT_EQ(run(cleave_cpu_global_max_pool, {x.desc()}, {max.desc()}), 0);
  std::vector<float> expectAvg, expectMax;
  for (int64_t p = 0; p < 6; ++p) {
    double sum = 0;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < 20; ++i) {
      sum += x.f32()[p * 20 + i];
      m = std::max(m, x.f32()[p * 20 + i]);
    }
    expectAvg.push_back(float(sum / 20));
    expectMax.push_back(m);
  }
  expectClose(avg.vec(), expectAvg, 1e-6f, 1e-5f);
  expectClose(max.vec(), expectMax, 0.0f, 0.0f);
}

// Planes folded in 16 lanes and a tail: 7 x 7 (3 whole rounds and 1) and
// 56 x 56 (196 rounds), and planes shorter than the lanes, 1 x 1 and 3 x 3,
// element by element; the global max keeps a NaN met in a lane or in the
// tail.
TEST_F(PoolTest, GlobalPoolsOverLanesAndTail) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t side : {1, 3, 7, 56}) {
    SCOPED_TRACE("plane " + std::to_string(side) + " x " +
                 std::to_string(side));
    const int64_t size = side * side;
    Tensor x = Tensor::random({2, 3, side, side}, 34);
    x.f32()[1 * size + 5 % size] = nan; // plane 1, a lane
    x.f32()[4 * size + size - 1] = nan; // plane 4, the tail
    Tensor avg({2, 3, 1, 1}), max({2, 3, 1, 1});
    ASSERT_EQ(run(cleave_cpu_global_average_pool, {x.desc()}, {avg.desc()}), 0);
    ASSERT_EQ(run(cleave_cpu_global_max_pool, {x.desc()}, {max.desc()}), 0);
    for (int64_t p = 0; p < 6; ++p) {
      double sum = 0;
      float m = -std::numeric_limits<float>::infinity();
      bool hasNan = false;
      for (int64_t i = 0; i < size; ++i) {
        float v = x.f32()[p * size + i];
        hasNan |= std::isnan(v);
        sum += v;
        m = std::max(m, v);
      }
      if (hasNan) {
        EXPECT_TRUE(std::isnan(avg.vec()[p])) << "plane " << p;
        EXPECT_TRUE(std::isnan(max.vec()[p])) << "plane " << p;
        continue;
      }
      EXPECT_NEAR(avg.vec()[p], sum / double(size), 1e-6) << "plane " << p;
      EXPECT_EQ(max.vec()[p], m) << "plane " << p;
    }
  }
}

// X in nChw8c and nChw16c: each channel a lane of its group's block. Y is
// N x C in either layout and matches the pools of X in NCHW; a NaN in one
// channel stays in that channel's max.
TEST_F(PoolTest, GlobalPoolsOfBlockedX) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = 2, c = 32, h = 5, w = 7, size = h * w;
  Tensor x = Tensor::random({n, c, h, w}, 35);
  x.f32()[(1 * c + 19) * size + 11] = nan;
  Tensor avg({n, c, 1, 1}), max({n, c, 1, 1});
  ASSERT_EQ(run(cleave_cpu_global_average_pool, {x.desc()}, {avg.desc()}), 0);
  ASSERT_EQ(run(cleave_cpu_global_max_pool, {x.desc()}, {max.desc()}), 0);
  for (int64_t block : {8, 16}) {
    SCOPED_TRACE("block " + std::to_string(block));
    Tensor blocked({n, c, h, w});
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < size; ++p)
          blocked.f32()[((b * c + ch / block * block) * size + p * block) +
                        ch % block] = x.f32()[(b * c + ch) * size + p];
    Tensor bavg({n, c, 1, 1}), bmax({n, c, 1, 1});
    ASSERT_EQ(run(cleave_cpu_global_average_pool, {blocked.desc()},
                  {bavg.desc()}, {block}),
              0);
    ASSERT_EQ(run(cleave_cpu_global_max_pool, {blocked.desc()}, {bmax.desc()},
                  {block}),
              0);
    for (int64_t i = 0; i < n * c; ++i) {
      if (i == 1 * c + 19) {
        EXPECT_TRUE(std::isnan(bavg.vec()[i]));
        EXPECT_TRUE(std::isnan(bmax.vec()[i]));
        continue;
      }
      EXPECT_NEAR(bavg.vec()[i], avg.vec()[i], 1e-6) << "channel " << i;
      EXPECT_EQ(bmax.vec()[i], max.vec()[i]) << "channel " << i;
    }
  }
}

TEST_F(PoolTest, RejectsBadArguments) {
  Tensor x = Tensor::random({1, 1, 4, 4}, 1), y({1, 1, 3, 3});
  expectFailure(run(cleave_cpu_max_pool, {x.desc()}, {y.desc()},
                    {2, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0}),
                "max_pool", "spatial dimension 0 of Y is 3, expected 2");
  Tensor xi({1, 1, 4, 4}, CLEAVE_I32);
  expectFailure(run(cleave_cpu_average_pool, {xi.desc()}, {y.desc()},
                    {2, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0}),
                "average_pool", "only float32");
  expectFailure(run(cleave_cpu_max_pool, {x.desc()}, {y.desc()},
                    {2, 0, 2, 1, 1, 0, 0, 0, 0, 1, 1, 0}),
                "max_pool", "must be positive");
  Tensor g({1, 2});
  expectFailure(run(cleave_cpu_global_max_pool, {x.desc()}, {g.desc()}),
                "global_max_pool", "N x C elements");
  Tensor x1({4});
  expectFailure(run(cleave_cpu_global_average_pool, {x1.desc()}, {g.desc()}),
                "global_average_pool", "at least 2-D");
  Tensor p24({1, 24, 4, 4}), q24({1, 24, 2, 2});
  expectFailure(run(cleave_cpu_max_pool, {p24.desc()}, {q24.desc()},
                    {2, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0, 4}),
                "max_pool", "block 4: the layouts are 0 (NCHW), 8 and 16");
  expectFailure(run(cleave_cpu_average_pool, {p24.desc()}, {q24.desc()},
                    {2, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0, 0, 16}),
                "average_pool",
                "block 16 needs 2 spatial dimensions and channels it divides");
  Tensor x24({1, 24, 2, 2}), g24({1, 24, 1, 1});
  expectFailure(
      run(cleave_cpu_global_max_pool, {x24.desc()}, {g24.desc()}, {4}),
      "global_max_pool", "xBlock 4: the layouts are 0 (NCHW), 8 and 16");
  expectFailure(
      run(cleave_cpu_global_average_pool, {x24.desc()}, {g24.desc()}, {16}),
      "global_average_pool", "xBlock 16 needs X of rank 4 whose channels");
  Tensor x3({1, 16, 4}), g3({1, 16, 1});
  expectFailure(
      run(cleave_cpu_global_average_pool, {x3.desc()}, {g3.desc()}, {16}),
      "global_average_pool", "xBlock 16 needs X of rank 4");
}

} // namespace
