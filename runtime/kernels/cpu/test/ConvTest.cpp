//===- ConvTest.cpp - conv and conv_transpose against direct loops --------===//

#include "KernelTest.h"

using namespace cleave::test;

namespace {

struct ConvCase {
  Shape x, w; // X: N x C x spatial; W as the kernel takes it
  int64_t group;
  Shape strides, pads, dilations, outputPadding;
  bool bias;
};

int64_t spatialCount(const Shape &s) {
  return count(Shape(s.begin() + 2, s.end()));
}

Shape convOutput(const ConvCase &c, bool transposed) {
  size_t n = c.x.size() - 2;
  Shape y = {c.x[0], transposed ? c.w[1] * c.group : c.w[0]};
  for (size_t i = 0; i < n; ++i) {
    int64_t span = (c.w[2 + i] - 1) * c.dilations[i] + 1;
    if (transposed)
      y.push_back(c.strides[i] * (c.x[2 + i] - 1) + c.outputPadding[i] + span -
                  c.pads[i] - c.pads[n + i]);
    else
      y.push_back(
          (c.x[2 + i] + c.pads[i] + c.pads[n + i] - span) / c.strides[i] + 1);
  }
  return y;
}

/// conv's ints (no epilogue, NCHW X and Y) or conv_transpose's.
std::vector<int64_t> convInts(const ConvCase &c, bool transposed) {
  std::vector<int64_t> ints = {int64_t(c.x.size() - 2), c.group};
  ints.insert(ints.end(), c.strides.begin(), c.strides.end());
  ints.insert(ints.end(), c.pads.begin(), c.pads.end());
  ints.insert(ints.end(), c.dilations.begin(), c.dilations.end());
  if (transposed)
    ints.insert(ints.end(), c.outputPadding.begin(), c.outputPadding.end());
  else
    ints.insert(ints.end(), {CLEAVE_EPILOGUE_NONE, 0, 0});
  return ints;
}

/// conv's epilogue in `ints` (convInts'), before xBlock and yBlock.
int64_t &epilogueOf(std::vector<int64_t> &ints) {
  return ints[ints.size() - 3];
}

/// Direct convolution: each output sums its window. For the transposed
/// form, each input scatters into its window.
std::vector<float> naiveConv(const ConvCase &c, const Tensor &x,
                             const Tensor &w, const Tensor *b, const Shape &ys,
                             bool transposed) {
  size_t n = c.x.size() - 2;
  Shape kernel(c.w.begin() + 2, c.w.end());
  int64_t cg = c.x[1] / c.group;
  int64_t m = ys[1], mg = m / c.group;
  std::vector<double> y(count(ys), 0.0);
  Shape xs = stridesOf(c.x), wsd = stridesOf(c.w), yst = stridesOf(ys);
  Shape outerShape = transposed ? Shape(c.x.begin() + 2, c.x.end())
                                : Shape(ys.begin() + 2, ys.end());
  for (int64_t batch = 0; batch < c.x[0]; ++batch)
    for (int64_t oc = 0; oc < m; ++oc) {
      int64_t g = oc / mg;
      for (int64_t ic = g * cg; ic < (g + 1) * cg; ++ic)
        for (int64_t p = 0; p < count(outerShape); ++p) {
          Shape pos = unflatten(p, outerShape);
          for (int64_t t = 0; t < count(kernel); ++t) {
            Shape tap = unflatten(t, kernel);
            int64_t xOff = batch * xs[0] + ic * xs[1];
            int64_t yOff = batch * yst[0] + oc * yst[1];
            bool inside = true;
            for (size_t d = 0; d < n; ++d) {
              int64_t other = transposed ? pos[d] * c.strides[d] - c.pads[d] +
                                               tap[d] * c.dilations[d]
                                         : pos[d] * c.strides[d] - c.pads[d] +
                                               tap[d] * c.dilations[d];
              int64_t limit = transposed ? ys[2 + d] : c.x[2 + d];
              inside &= other >= 0 && other < limit;
              if (transposed) {
                xOff += pos[d] * xs[2 + d];
                yOff += other * yst[2 + d];
              } else {
                xOff += other * xs[2 + d];
                yOff += pos[d] * yst[2 + d];
              }
            }
            if (!inside)
              continue;
            int64_t wOff = transposed ? ic * wsd[0] + (oc - g * mg) * wsd[1]
                                      : oc * wsd[0] + (ic - g * cg) * wsd[1];
            for (size_t d = 0; d < n; ++d)
              wOff += tap[d] * wsd[2 + d];
            y[yOff] += double(x.f32()[xOff]) * w.f32()[wOff];
          }
        }
    }
  std::vector<float> result(y.size());
  for (size_t i = 0; i < y.size(); ++i)
    result[i] = float(y[i] + (b ? b->f32()[(i / spatialCount(ys)) % m] : 0.0));
  return result;
}

class ConvTest : public KernelTest {
protected:
  /// Runs `c` over constant weights (random, from `seed` on) twice, each
  /// time plainly, then with a residual apart from Y and one in Y's place
  /// and a ReLU, and expects the direct loop's results.
  void expectFusedFormsMatch(const ConvCase &c, uint64_t seed) {
    Tensor x = Tensor::random(c.x, seed), w = Tensor::random(c.w, seed + 1);
    Tensor b = Tensor::random({c.w[0]}, seed + 2);
    const Shape ys = convOutput(c, false);
    Tensor r = Tensor::random(ys, seed + 3);
    const std::vector<float> rv = r.vec();
    std::vector<float> plain =
        naiveConv(c, x, w, c.bias ? &b : nullptr, ys, false);
    std::vector<float> expected = plain;
    for (size_t i = 0; i < expected.size(); ++i)
      expected[i] = std::max(expected[i] + rv[i], 0.0f);
    ctx.constantWeights = w.f32();
    ctx.constantWeightBytes = w.size() * sizeof(float);
    for (int call = 0; call < 2; ++call) {
      Tensor y(ys);
      ASSERT_EQ(run(cleave_cpu_conv,
                    {x.desc(), w.desc(), c.bias ? b.desc() : absent()},
                    {y.desc()}, convInts(c, false), {0.0, 0.0}),
                0)
          << ctx.error;
      expectClose(y.vec(), plain, 1e-4f, 1e-4f);
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(inPlace ? "residual in place" : "residual apart");
        Tensor yr(ys), rk(ys);
        std::copy(rv.begin(), rv.end(), (inPlace ? yr : rk).f32());
        std::vector<int64_t> ints = convInts(c, false);
        epilogueOf(ints) = CLEAVE_EPILOGUE_RELU;
        ASSERT_EQ(run(cleave_cpu_conv,
                      {x.desc(), w.desc(), c.bias ? b.desc() : absent(),
                       inPlace ? yr.desc() : rk.desc()},
                      {yr.desc()}, ints, {0.0, 0.0}),
                  0)
            << ctx.error;
        expectClose(yr.vec(), expected, 1e-4f, 1e-4f);
      }
    }
    ctx.constantWeights = nullptr;
    ctx.constantWeightBytes = 0;
  }
};

class ConvShapes : public ConvTest,
                   public ::testing::WithParamInterface<ConvCase> {};

TEST_P(ConvShapes, ConvMatchesDirectLoop) {
  const ConvCase &c = GetParam();
  Tensor x = Tensor::random(c.x, 11), w = Tensor::random(c.w, 12);
  Tensor b = Tensor::random({c.w[0]}, 13);
  Shape ys = convOutput(c, false);
  Tensor y(ys);
  ASSERT_EQ(run(cleave_cpu_conv,
                {x.desc(), w.desc(), c.bias ? b.desc() : absent()}, {y.desc()},
                convInts(c, false), {0.0, 0.0}),
            0)
      << ctx.error;
  expectClose(y.vec(), naiveConv(c, x, w, c.bias ? &b : nullptr, ys, false),
              1e-4f, 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(
    Windows, ConvShapes,
    ::testing::Values(
        // 3x3, padded.
        ConvCase{{2, 3, 7, 6},
                 {4, 3, 3, 3},
                 1,
                 {1, 1},
                 {1, 1, 1, 1},
                 {1, 1},
                 {},
                 true},
        // 1x1 stride 1 (pointwise).
        ConvCase{{2, 5, 4, 3},
                 {6, 5, 1, 1},
                 1,
                 {1, 1},
                 {0, 0, 0, 0},
                 {1, 1},
                 {},
                 true},
        // 1x1 strided.
        ConvCase{{1, 4, 5, 5},
                 {3, 4, 1, 1},
                 1,
                 {2, 2},
                 {0, 0, 0, 0},
                 {1, 1},
                 {},
                 false},
        // Strides, dilations, asymmetric pads.
        ConvCase{{1, 2, 9, 8},
                 {3, 2, 3, 2},
                 1,
                 {2, 3},
                 {1, 0, 2, 1},
                 {2, 1},
                 {},
                 true},
        // Two groups of two channels.
        ConvCase{{2, 4, 6, 6},
                 {6, 2, 3, 3},
                 2,
                 {1, 1},
                 {1, 1, 1, 1},
                 {1, 1},
                 {},
                 true},
        // Depthwise, and depthwise with a multiplier of 2, strided.
        ConvCase{{2, 4, 7, 7},
                 {4, 1, 3, 3},
                 4,
                 {1, 1},
                 {1, 1, 1, 1},
                 {1, 1},
                 {},
                 true},
        ConvCase{{1, 3, 8, 9},
                 {6, 1, 3, 3},
                 3,
                 {2, 2},
                 {1, 0, 1, 2},
                 {1, 2},
                 {},
                 false},
        // 1-D and 3-D.
        ConvCase{{2, 3, 10}, {4, 3, 3}, 1, {2}, {1, 1}, {1}, {}, true},
        ConvCase{{1, 2, 4, 5, 4},
                 {3, 2, 2, 3, 2},
                 1,
                 {1, 2, 1},
                 {0, 1, 1, 1, 0, 0},
                 {1, 1, 2},
                 {},
                 true}));

/// Depthwise convolutions over the kernel widths depthwiseConv()
/// specialises (3, 5, 7 at strides 1 and 2) and others, dilations,
/// symmetric and asymmetric pads, maps narrower than the kernel (1x1, 2x2:
/// only border columns) and rows long enough to vectorise with a
/// remainder, in 1-D, 2-D and 3-D, with and without a channel multiplier
/// and a bias. Each runs over writable weights (depthwiseConv()) and over
/// constant ones (oneDNN on planes this small, where it has a kernel of its
/// own, else depthwiseConv() again); DepthwiseSpans checks depthwiseConv()
/// on the large planes it runs whatever the weights.
TEST_F(ConvTest, DepthwiseSweep) {
  std::vector<ConvCase> cases;
  for (int64_t k : {1, 2, 3, 5, 7})
    for (int64_t stride : {1, 2, 3})
      for (int64_t dilation : {1, 2})
        for (Shape pads : {Shape{0, 0, 0, 0}, Shape{k / 2, k / 2, k / 2, k / 2},
                           Shape{1, 0, 0, 2}})
          for (Shape map : {Shape{1, 1}, Shape{2, 2}, Shape{5, 37}}) {
            int64_t spanned = (k - 1) * dilation + 1;
            if (map[0] + pads[0] + pads[2] < spanned ||
                map[1] + pads[1] + pads[3] < spanned)
              continue;
            bool multiplier = (k + stride) % 2 == 0;
            int64_t channels = 3, out = multiplier ? 6 : 3;
            cases.push_back(ConvCase{{2, channels, map[0], map[1]},
                                     {out, 1, k, k},
                                     channels,
                                     {stride, stride},
                                     pads,
                                     {dilation, dilation},
                                     {},
                                     dilation == 1});
          }
  cases.push_back(ConvCase{{1, 4, 29}, {4, 1, 5}, 4, {1}, {2, 2}, {1}, {}, 1});
  cases.push_back(ConvCase{{1, 2, 3, 6, 20},
                           {2, 1, 3, 3, 3},
                           2,
                           {1, 2, 1},
                           {1, 0, 1, 1, 1, 1},
                           {2, 1, 1},
                           {},
                           true});
  ASSERT_GT(cases.size(), 100u);
  for (const ConvCase &c : cases) {
    Tensor x = Tensor::random(c.x, 31), w = Tensor::random(c.w, 32);
    Tensor b = Tensor::random({c.w[0]}, 33);
    Shape ys = convOutput(c, false);
    Tensor y(ys);
    SCOPED_TRACE("kernel " + std::to_string(c.w.back()) + ", stride " +
                 std::to_string(c.strides.back()) + ", dilation " +
                 std::to_string(c.dilations.back()) + ", pads " +
                 std::to_string(c.pads[0]) + std::to_string(c.pads[1]) +
                 std::to_string(c.pads[2]) + std::to_string(c.pads[3]) +
                 ", input " + std::to_string(c.x[2]) + "x" +
                 std::to_string(c.x.back()));
    const std::vector<float> expected =
        naiveConv(c, x, w, c.bias ? &b : nullptr, ys, false);
    for (bool constant : {false, true}) {
      SCOPED_TRACE(constant ? "constant weights" : "writable weights");
      ctx.constantWeights = constant ? w.f32() : nullptr;
      ctx.constantWeightBytes = constant ? w.size() * sizeof(float) : 0;
      // Each run writes the whole output, not what the last one left.
      for (float &v : y.values())
        v = NAN;
      ASSERT_EQ(run(cleave_cpu_conv,
                    {x.desc(), w.desc(), c.bias ? b.desc() : absent()},
                    {y.desc()}, convInts(c, false), {0.0, 0.0}),
                0)
          << ctx.error;
      expectClose(y.vec(), expected, 1e-4f, 1e-4f);
    }
  }
}

/// Depthwise shapes at the edges of how depthwiseConv() splits its work,
/// on output planes of at least 56 x 56 positions (which it runs over
/// constant weights too; smaller ones over constant weights run on oneDNN):
/// output rows of exactly 32 and 48 columns (computed straight into the output)
/// and of 33 and 50 (a remainder through scratch), whole planes of narrow rows
/// computed as one span (rows of 3 and 7 with 3x3 and 5x5 kernels, whose last
/// span reads past the phased plane), strides 2 and 3 with dilation, a stride
/// wider than the kernel, asymmetric pads larger than the kernel's reach, 1-D
/// and 3-D, and EfficientNet-sized layers with enough work to run on both
/// threads of the test context.
TEST_F(ConvTest, DepthwiseSpans) {
  constexpr int64_t kPlane = 56 * 56;
  std::vector<ConvCase> cases;
  for (int64_t width : {32, 33, 48, 50})
    for (int64_t k : {3, 5})
      cases.push_back(ConvCase{{1, 2, kPlane / width + k, width + k - 1},
                               {2, 1, k, k},
                               2,
                               {1, 1},
                               {0, 0, 0, 0},
                               {1, 1},
                               {},
                               true});
  for (int64_t size : {3, 7})
    for (int64_t k : {3, 5})
      for (int64_t stride : {1, 2})
        cases.push_back(ConvCase{{2, 5, 4 * kPlane / size, size},
                                 {5, 1, k, k},
                                 5,
                                 {stride, stride},
                                 {k / 2, k / 2, k / 2, k / 2},
                                 {1, 1},
                                 {},
                                 stride == 1});
  cases.push_back(ConvCase{{1, 3, 170, 230},
                           {3, 1, 3, 3},
                           3,
                           {2, 3},
                           {2, 1, 0, 3},
                           {2, 2},
                           {},
                           true});
  cases.push_back(ConvCase{{1, 2, 240, 270},
                           {4, 1, 2, 2},
                           2,
                           {4, 3},
                           {3, 0, 4, 5},
                           {1, 3},
                           {},
                           true});
  cases.push_back(ConvCase{{1, 2, 180, 200},
                           {2, 1, 1, 1},
                           2,
                           {3, 3},
                           {0, 0, 0, 0},
                           {1, 1},
                           {},
                           false});
  cases.push_back(
      ConvCase{{1, 4, 4000}, {8, 1, 5}, 4, {1}, {2, 1}, {2}, {}, true});
  cases.push_back(ConvCase{{1, 2, 3, 34, 34},
                           {2, 1, 3, 3, 3},
                           2,
                           {1, 1, 1},
                           {1, 1, 1, 1, 1, 1},
                           {1, 1, 1},
                           {},
                           true});
  cases.push_back(ConvCase{{1, 48, 112, 112},
                           {48, 1, 3, 3},
                           48,
                           {2, 2},
                           {1, 1, 1, 1},
                           {1, 1},
                           {},
                           true});
  cases.push_back(ConvCase{{2, 40, 56, 56},
                           {80, 1, 5, 5},
                           40,
                           {1, 1},
                           {2, 2, 2, 2},
                           {1, 1},
                           {},
                           true});
  for (const ConvCase &c : cases) {
    Tensor x = Tensor::random(c.x, 41), w = Tensor::random(c.w, 42);
    Tensor b = Tensor::random({c.w[0]}, 43);
    Shape ys = convOutput(c, false);
    Tensor y(ys);
    SCOPED_TRACE("kernel " + std::to_string(c.w.back()) + ", stride " +
                 std::to_string(c.strides.back()) + ", input " +
                 std::to_string(c.x[2]) + "x" + std::to_string(c.x.back()));
    ASSERT_GE(count(Shape(ys.begin() + 2, ys.end())), kPlane);
    ASSERT_EQ(run(cleave_cpu_conv,
                  {x.desc(), w.desc(), c.bias ? b.desc() : absent()},
                  {y.desc()}, convInts(c, false), {0.0, 0.0}),
              0)
        << ctx.error;
    expectClose(y.vec(), naiveConv(c, x, w, c.bias ? &b : nullptr, ys, false),
                1e-4f, 1e-4f);
  }
}

class ConvTransposeShapes : public ConvTest,
                            public ::testing::WithParamInterface<ConvCase> {};

TEST_P(ConvTransposeShapes, ConvTransposeMatchesScatter) {
  const ConvCase &c = GetParam();
  Tensor x = Tensor::random(c.x, 21), w = Tensor::random(c.w, 22);
  Shape ys = convOutput(c, true);
  Tensor b = Tensor::random({ys[1]}, 23), y(ys);
  ASSERT_EQ(run(cleave_cpu_conv_transpose,
                {x.desc(), w.desc(), c.bias ? b.desc() : absent()}, {y.desc()},
                convInts(c, true)),
            0)
      << ctx.error;
  expectClose(y.vec(), naiveConv(c, x, w, c.bias ? &b : nullptr, ys, true),
              1e-4f, 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(
    Windows, ConvTransposeShapes,
    ::testing::Values(
        ConvCase{{1, 8, 10}, {8, 4, 2}, 1, {2}, {0, 0}, {1}, {0}, false},
        ConvCase{{2, 3, 4, 5},
                 {3, 2, 3, 3},
                 1,
                 {2, 2},
                 {1, 1, 1, 1},
                 {1, 1},
                 {1, 0},
                 true},
        ConvCase{{1, 4, 3, 3},
                 {4, 3, 3, 2},
                 2,
                 {1, 2},
                 {0, 1, 2, 0},
                 {2, 1},
                 {0, 1},
                 true},
        ConvCase{{1, 2, 3, 2, 3},
                 {2, 2, 2, 2, 2},
                 1,
                 {2, 1, 2},
                 {0, 0, 0, 0, 0, 1},
                 {1, 1, 1},
                 {1, 0, 0},
                 true}));

TEST_F(ConvTest, HandComputed1D) {
  // [1 2 3 4] * [1 0 -1], pads 1: [-2, -2, -2, 3].
  Tensor x = Tensor::f32({1, 1, 4}, {1, 2, 3, 4});
  Tensor w = Tensor::f32({1, 1, 3}, {1, 0, -1});
  Tensor y({1, 1, 4});
  ASSERT_EQ(run(cleave_cpu_conv, {x.desc(), w.desc()}, {y.desc()},
                {1, 1, 1, 1, 1, 1}),
            0);
  EXPECT_EQ(y.vec(), (std::vector<float>{-2, -2, -2, 3}));
}

TEST_F(ConvTest, RejectsBadAttributes) {
  Tensor x = Tensor::random({1, 3, 5, 5}, 1),
         w = Tensor::random({4, 3, 3, 3}, 2);
  Tensor y({1, 4, 3, 3});
  // Wrong output size (pads 1 would give 5x5).
  expectFailure(run(cleave_cpu_conv, {x.desc(), w.desc()}, {y.desc()},
                    {2, 1, 1, 1, 1, 1, 1, 1, 1, 1}),
                "conv", "spatial dimension 0 of Y is 3, expected 5");
  expectFailure(run(cleave_cpu_conv, {x.desc(), w.desc()}, {y.desc()},
                    {2, 2, 1, 1, 0, 0, 0, 0, 1, 1}),
                "conv", "group 2 does not divide");
  Tensor xi({1, 3, 5, 5}, CLEAVE_I64);
  expectFailure(run(cleave_cpu_conv, {xi.desc(), w.desc()}, {y.desc()},
                    {2, 1, 1, 1, 0, 0, 0, 0, 1, 1}),
                "conv", "only float32");
  Tensor x4 = Tensor::random({1, 1, 2, 2, 2, 2}, 1);
  Tensor w4 = Tensor::random({1, 1, 1, 1, 1, 1}, 1), y4({1, 1, 2, 2, 2, 2});
  expectFailure(
      run(cleave_cpu_conv, {x4.desc(), w4.desc()}, {y4.desc()}, {4, 1}), "conv",
      "1 to 3 are supported");
  Tensor bias = Tensor::random({3}, 1);
  expectFailure(run(cleave_cpu_conv, {x.desc(), w.desc(), bias.desc()},
                    {y.desc()}, {2, 1, 1, 1, 0, 0, 0, 0, 1, 1}),
                "conv", "B has 3 elements, expected 4");
  Tensor yt({1, 4, 5, 5});
  Tensor wt = Tensor::random({3, 4, 3, 3}, 2);
  expectFailure(run(cleave_cpu_conv_transpose, {x.desc(), wt.desc()},
                    {yt.desc()}, {2, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0}),
                "conv_transpose", "expected 7");
}

} // namespace

/// The size from which a dense or grouped convolution runs on oneDNN
/// (Conv.cpp's kSmallConvMacs; the smaller ones of ConvShapes run as
/// im2col + sgemm).
constexpr int64_t kDnnlMacs = int64_t(1) << 18;

int64_t multiplyAdds(const ConvCase &c, const Shape &y) {
  return count(y) * (c.x[1] / c.group) *
         count(Shape(c.w.begin() + 2, c.w.end()));
}

/// Convolutions oneDNN runs when their weights are constant (packed once
/// and reused by the second call): channel counts that fill its blocks of
/// 8 and 16 and ones that do not, maps smaller than the window, and every
/// attribute, in 1-D, 2-D and 3-D; and the same over writable weights,
/// which run as im2col + sgemm.
class DnnlConvShapes : public ConvTest,
                       public ::testing::WithParamInterface<ConvCase> {};

TEST_P(DnnlConvShapes, MatchesDirectLoop) {
  const ConvCase &c = GetParam();
  Tensor x = Tensor::random(c.x, 21), w = Tensor::random(c.w, 22);
  Tensor b = Tensor::random({c.w[0]}, 23);
  const Shape ys = convOutput(c, false);
  ASSERT_GE(multiplyAdds(c, ys), kDnnlMacs);
  const std::vector<float> expected =
      naiveConv(c, x, w, c.bias ? &b : nullptr, ys, false);
  for (int threads : {1, 2})
    for (bool constant : {false, true})
      for (int call = 0; call < 2; ++call) {
        SCOPED_TRACE(::testing::Message()
                     << threads << " threads, call " << call
                     << (constant ? ", " : ", no ") << "constant weights");
        ctx.numThreads = threads;
        ctx.constantWeights = constant ? w.f32() : nullptr;
        ctx.constantWeightBytes = constant ? w.size() * sizeof(float) : 0;
        Tensor y(ys);
        ASSERT_EQ(run(cleave_cpu_conv,
                      {x.desc(), w.desc(), c.bias ? b.desc() : absent()},
                      {y.desc()}, convInts(c, false), {0.0, 0.0}),
                  0)
            << ctx.error;
        expectClose(y.vec(), expected, 1e-4f, 1e-4f);
      }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DnnlConvShapes,
    ::testing::Values(
        // ResNet's small maps: 3x3 windows over 1x1 and 2x2 planes.,
        ConvCase{{1, 192, 1, 1},
                 {192, 192, 3, 3},
                 1,
                 {1, 1},
                 {1, 1, 1, 1},
                 {1, 1},
                 {},
                 true},
        ConvCase{{2, 64, 2, 2},
                 {64, 64, 3, 3},
                 1,
                 {1, 1},
                 {1, 1, 1, 1},
                 {1, 1},
                 {},
                 false},
        // A stem: 3 channels in, 7x7 at stride 2.,
        ConvCase{{2, 3, 17, 15},
                 {16, 3, 7, 7},
                 1,
                 {2, 2},
                 {3, 3, 3, 3},
                 {1, 1},
                 {},
                 true},
        // Strides, dilations, asymmetric pads; 1x1 at stride 2.,
        ConvCase{{3, 24, 9, 10},
                 {48, 24, 3, 2},
                 1,
                 {2, 3},
                 {1, 0, 2, 1},
                 {2, 1},
                 {},
                 true},
        ConvCase{{2, 128, 7, 7},
                 {128, 128, 1, 1},
                 1,
                 {2, 2},
                 {0, 0, 0, 0},
                 {1, 1},
                 {},
                 false},
        // Grouped: blocks that fill oneDNN's vectors and ones that do not, and
        // a grouped pointwise one.,
        ConvCase{{3, 32, 6, 5},
                 {48, 8, 3, 3},
                 4,
                 {1, 1},
                 {1, 1, 1, 1},
                 {1, 1},
                 {},
                 true},
        ConvCase{{8, 6, 25, 26},
                 {9, 2, 3, 3},
                 3,
                 {2, 1},
                 {0, 1, 1, 0},
                 {1, 2},
                 {},
                 true},
        ConvCase{{2, 128, 16, 16},
                 {128, 64, 1, 1},
                 2,
                 {1, 1},
                 {0, 0, 0, 0},
                 {1, 1},
                 {},
                 false},
        // 1-D: a strided feature-extractor layer, a dilated one, a grouped
        // one.,
        ConvCase{{2, 64, 120}, {64, 64, 5}, 1, {3}, {0, 0}, {1}, {}, false},
        ConvCase{{4, 15, 190}, {21, 15, 3}, 1, {1}, {2, 1}, {2}, {}, true},
        ConvCase{{4, 64, 48}, {64, 16, 4}, 4, {2}, {1, 2}, {1}, {}, true},
        // 3-D.,
        ConvCase{{2, 16, 4, 5, 6},
                 {16, 16, 3, 3, 3},
                 1,
                 {1, 2, 1},
                 {1, 1, 1, 1, 0, 1},
                 {1, 1, 2},
                 {},
                 true},
        ConvCase{{4, 8, 6, 8, 10},
                 {12, 4, 2, 3, 2},
                 2,
                 {2, 1, 1},
                 {0, 1, 0, 1, 1, 0},
                 {1, 2, 1},
                 {},
                 false}));

/// Writable weights (a trainable parameter the optimizer updates in place)
/// are read at every call: the second call sees the new values, whichever
/// kernel runs them.
TEST_F(ConvTest, WritableWeightsAreReadEveryCall) {
  const ConvCase c{{2, 32, 5, 5}, {32, 32, 3, 3}, 1,  {1, 1},
                   {1, 1, 1, 1},  {1, 1},         {}, true};
  Tensor x = Tensor::random(c.x, 31), w = Tensor::random(c.w, 32);
  Tensor b = Tensor::random({c.w[0]}, 33);
  const Shape ys = convOutput(c, false);
  ASSERT_GE(multiplyAdds(c, ys), kDnnlMacs);
  Tensor y(ys);
  ASSERT_EQ(run(cleave_cpu_conv, {x.desc(), w.desc(), b.desc()}, {y.desc()},
                convInts(c, false), {0.0, 0.0}),
            0)
      << ctx.error;
  expectClose(y.vec(), naiveConv(c, x, w, &b, ys, false), 1e-4f, 1e-4f);
  for (float &v : w.values())
    v = 0.5f * v - 0.25f;
  ASSERT_EQ(run(cleave_cpu_conv, {x.desc(), w.desc(), b.desc()}, {y.desc()},
                convInts(c, false), {0.0, 0.0}),
            0)
      << ctx.error;
  expectClose(y.vec(), naiveConv(c, x, w, &b, ys, false), 1e-4f, 1e-4f);
}

/// Constant weights are repacked once: the kernel keeps what the first call
/// read (which is why only memory whose bytes cannot change may be
/// constant), per address. Other weights at another address are packed
/// afresh.
TEST_F(ConvTest, ConstantWeightsArePackedOnce) {
  const ConvCase c{{1, 32, 8, 8}, {32, 32, 3, 3}, 1,  {1, 1},
                   {1, 1, 1, 1},  {1, 1},         {}, false};
  Tensor x = Tensor::random(c.x, 41), w = Tensor::random(c.w, 42);
  Tensor other = Tensor::random(c.w, 43);
  const Shape ys = convOutput(c, false);
  ASSERT_GE(multiplyAdds(c, ys), kDnnlMacs);
  const std::vector<float> first = naiveConv(c, x, w, nullptr, ys, false);
  ctx.constantWeights = w.f32();
  ctx.constantWeightBytes = w.size() * sizeof(float);
  Tensor y(ys);
  ASSERT_EQ(run(cleave_cpu_conv, {x.desc(), w.desc(), absent()}, {y.desc()},
                convInts(c, false), {0.0, 0.0}),
            0)
      << ctx.error;
  expectClose(y.vec(), first, 1e-4f, 1e-4f);
  std::copy(other.f32(), other.f32() + other.size(), w.f32());
  ASSERT_EQ(run(cleave_cpu_conv, {x.desc(), w.desc(), absent()}, {y.desc()},
                convInts(c, false), {0.0, 0.0}),
            0)
      << ctx.error;
  expectClose(y.vec(), first, 1e-4f, 1e-4f);
  ASSERT_EQ(run(cleave_cpu_conv, {x.desc(), other.desc(), absent()}, {y.desc()},
                convInts(c, false), {0.0, 0.0}),
            0)
      << ctx.error;
  expectClose(y.vec(), naiveConv(c, x, other, nullptr, ys, false), 1e-4f,
              1e-4f);
}

/// The epilogue (ReLU, a clamp, or SiLU) applies to every output after the
/// bias, on each path: oneDNN's post-op over constant weights (dense and small
/// depthwise), the kernels here over writable weights and for small
/// convolutions, and the direct depthwise kernel on large planes. Bounds
/// out of order, and an unknown epilogue, are refused.
TEST_F(ConvTest, EpilogueAfterTheBias) {
  const std::vector<ConvCase> cases = {
      // Dense, large enough for oneDNN.
      {{1, 32, 8, 8},
       {32, 32, 3, 3},
       1,
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {},
       true},
      // Dense and small: the kernels here.
      {{1, 3, 5, 5}, {4, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, {}, true},
      // Depthwise, a small plane (oneDNN) and a large one (direct).
      {{1, 8, 9, 9}, {8, 1, 3, 3}, 8, {2, 2}, {1, 1, 1, 1}, {1, 1}, {}, true},
      {{1, 4, 60, 60}, {4, 1, 3, 3}, 4, {1, 1}, {1, 1, 1, 1}, {1, 1}, {}, true},
  };
  struct Epilogue {
    int64_t kind;
    double min, max;
  };
  for (const ConvCase &c : cases) {
    Tensor x = Tensor::random(c.x, 51), w = Tensor::random(c.w, 52);
    Tensor b = Tensor::random({c.w[0]}, 53);
    const Shape ys = convOutput(c, false);
    const std::vector<float> plain = naiveConv(c, x, w, &b, ys, false);
    for (Epilogue e : {Epilogue{CLEAVE_EPILOGUE_RELU, 0, 0},
                       Epilogue{CLEAVE_EPILOGUE_CLIP, -0.25, 0.5},
                       Epilogue{CLEAVE_EPILOGUE_SILU, 0, 0},
                       Epilogue{CLEAVE_EPILOGUE_GELU, 0, 0},
                       Epilogue{CLEAVE_EPILOGUE_GELU_TANH, 0, 0}}) {
      std::vector<float> expected = plain;
      for (float &v : expected) {
        const double d = v;
        v = e.kind == CLEAVE_EPILOGUE_RELU   ? std::max(v, 0.0f)
            : e.kind == CLEAVE_EPILOGUE_SILU ? v / (1.0f + std::exp(-v))
            : e.kind == CLEAVE_EPILOGUE_GELU
                ? float(0.5 * d * (1 + std::erf(d / std::sqrt(2.0))))
            : e.kind == CLEAVE_EPILOGUE_GELU_TANH
                ? float(0.5 * d *
                        (1 + std::tanh(std::sqrt(2 / M_PI) *
                                       (d + 0.044715 * d * d * d))))
                : std::min(std::max(v, float(e.min)), float(e.max));
      }
      for (bool constant : {false, true}) {
        SCOPED_TRACE(std::string(constant ? "constant" : "writable") +
                     " weights, epilogue " + std::to_string(e.kind) +
                     ", channels " + std::to_string(c.x[1]));
        ctx.constantWeights = constant ? w.f32() : nullptr;
        ctx.constantWeightBytes = constant ? w.size() * sizeof(float) : 0;
        Tensor y(ys);
        std::vector<int64_t> ints = convInts(c, false);
        epilogueOf(ints) = e.kind;
        ASSERT_EQ(run(cleave_cpu_conv, {x.desc(), w.desc(), b.desc()},
                      {y.desc()}, ints, {e.min, e.max}),
                  0)
            << ctx.error;
        expectClose(y.vec(), expected, 1e-4f, 1e-4f);
      }
    }
  }
  ctx.constantWeights = nullptr;
  ctx.constantWeightBytes = 0;
  // Without a bias, on the kernels here at 1 and 2 threads.
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads, no bias");
    ctx.numThreads = threads;
    const ConvCase &c = cases[1];
    Tensor x = Tensor::random(c.x, 56), w = Tensor::random(c.w, 57);
    const Shape ys = convOutput(c, false);
    std::vector<float> expected = naiveConv(c, x, w, nullptr, ys, false);
    for (float &v : expected)
      v = std::min(std::max(v, -0.25f), 0.5f);
    Tensor y(ys);
    std::vector<int64_t> ints = convInts(c, false);
    epilogueOf(ints) = CLEAVE_EPILOGUE_CLIP;
    ASSERT_EQ(run(cleave_cpu_conv, {x.desc(), w.desc(), absent()}, {y.desc()},
                  ints, {-0.25, 0.5}),
              0)
        << ctx.error;
    expectClose(y.vec(), expected, 1e-4f, 1e-4f);
  }
  ctx.numThreads = 2;
  const ConvCase &c = cases[1];
  Tensor x = Tensor::random(c.x, 54), w = Tensor::random(c.w, 55);
  Tensor y(convOutput(c, false));
  std::vector<int64_t> ints = convInts(c, false);
  epilogueOf(ints) = CLEAVE_EPILOGUE_CLIP;
  expectFailure(run(cleave_cpu_conv, {x.desc(), w.desc(), absent()}, {y.desc()},
                    ints, {1.0, -1.0}),
                "conv", "bounds [1, -1] are not ordered");
  epilogueOf(ints) = 7;
  expectFailure(run(cleave_cpu_conv, {x.desc(), w.desc(), absent()}, {y.desc()},
                    ints, {0.0, 0.0}),
                "conv", "unknown epilogue 7");
}

namespace {

/// `values` (N x C x plane, NCHW) reordered to nChw<block>c, or back
/// (`toBlocked` false).
std::vector<float> reorderBlocks(const std::vector<float> &values, int64_t n,
                                 int64_t c, int64_t plane, int64_t block,
                                 bool toBlocked) {
  std::vector<float> result(values.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        int64_t plain = (i * c + ch) * plane + p;
        int64_t blocked =
            ((i * (c / block) + ch / block) * plane + p) * block + ch % block;
        if (toBlocked)
          result[blocked] = values[plain];
        else
          result[plain] = values[blocked];
      }
  return result;
}

/// A convolution on one of the paths conv takes: oneDNN for dense, grouped
/// and depthwise ones of constant weights, im2col + sgemm for small ones and
/// writable weights, the direct depthwise loop on large planes in NCHW and
/// over writable weights.
struct LayoutCase {
  const char *what;
  ConvCase conv;
  bool constant;
};

const std::vector<LayoutCase> &layoutCases() {
  static const std::vector<LayoutCase> cases = {
      {"dense, oneDNN",
       {{1, 32, 14, 14},
        {32, 32, 3, 3},
        1,
        {1, 1},
        {1, 1, 1, 1},
        {1, 1},
        {},
        true},
       true},
      {"dense, writable weights",
       {{1, 32, 14, 14},
        {32, 32, 3, 3},
        1,
        {1, 1},
        {1, 1, 1, 1},
        {1, 1},
        {},
        true},
       false},
      {"small, im2col",
       {{1, 16, 4, 4},
        {16, 16, 3, 3},
        1,
        {1, 1},
        {1, 1, 1, 1},
        {1, 1},
        {},
        false},
       true},
      {"grouped, strided, batch 2, oneDNN",
       {{2, 32, 20, 20},
        {32, 8, 3, 3},
        4,
        {2, 2},
        {1, 1, 1, 1},
        {1, 1},
        {},
        true},
       true},
      {"grouped, im2col",
       {{1, 32, 6, 6},
        {32, 8, 3, 3},
        4,
        {1, 1},
        {1, 1, 1, 1},
        {1, 1},
        {},
        false},
       true},
      {"depthwise, oneDNN",
       {{1, 32, 8, 8},
        {32, 1, 3, 3},
        32,
        {1, 1},
        {1, 1, 1, 1},
        {1, 1},
        {},
        true},
       true},
      // A large plane: oneDNN in blocked layouts, the direct loop in
      // NCHW, and over writable weights in either.
      {"depthwise, large plane",
       {{1, 16, 56, 56},
        {16, 1, 3, 3},
        16,
        {1, 1},
        {1, 1, 1, 1},
        {1, 1},
        {},
        false},
       true},
      {"depthwise, large plane, writable weights",
       {{1, 16, 56, 56},
        {16, 1, 3, 3},
        16,
        {1, 1},
        {1, 1, 1, 1},
        {1, 1},
        {},
        true},
       false},
  };
  return cases;
}

} // namespace

// X and Y kept in nChw8c or nChw16c (xBlock, yBlock), either or both, on
// every path a convolution takes: oneDNN for dense, grouped and depthwise
// ones of constant weights (a depthwise one on a large plane too, which
// runs on the direct loop only in NCHW), im2col + sgemm for small ones and
// writable weights, the direct depthwise loop over writable weights; with
// a bias and the ReLU epilogue on some.
TEST_F(ConvTest, BlockedLayouts) {
  for (const LayoutCase &k : layoutCases()) {
    const ConvCase &c = k.conv;
    Tensor x = Tensor::random(c.x, 71), w = Tensor::random(c.w, 72);
    Tensor b = Tensor::random({c.w[0]}, 73);
    const Shape ys = convOutput(c, false);
    std::vector<float> expected =
        naiveConv(c, x, w, c.bias ? &b : nullptr, ys, false);
    const bool relu = c.bias;
    if (relu)
      for (float &v : expected)
        v = std::max(v, 0.0f);
    const int64_t plane = spatialCount(c.x), outPlane = spatialCount(ys);
    ctx.constantWeights = k.constant ? w.f32() : nullptr;
    ctx.constantWeightBytes = k.constant ? w.size() * sizeof(float) : 0;
    for (int64_t block : {8, 16})
      for (auto [xBlock, yBlock] : {std::pair<int64_t, int64_t>{block, 0},
                                    {0, block},
                                    {block, block}}) {
        SCOPED_TRACE(std::string(k.what) + ", xBlock " +
                     std::to_string(xBlock) + ", yBlock " +
                     std::to_string(yBlock));
        Tensor xk(c.x), y(ys);
        std::vector<float> xv = x.vec();
        if (xBlock)
          xv = reorderBlocks(xv, c.x[0], c.x[1], plane, xBlock, true);
        std::copy(xv.begin(), xv.end(), xk.f32());
        std::vector<int64_t> ints = convInts(c, false);
        epilogueOf(ints) = relu ? CLEAVE_EPILOGUE_RELU : CLEAVE_EPILOGUE_NONE;
        ints[ints.size() - 2] = xBlock;
        ints[ints.size() - 1] = yBlock;
        ASSERT_EQ(run(cleave_cpu_conv,
                      {xk.desc(), w.desc(), c.bias ? b.desc() : absent()},
                      {y.desc()}, ints, {0.0, 0.0}),
                  0)
            << ctx.error;
        std::vector<float> got = y.vec();
        if (yBlock)
          got = reorderBlocks(got, ys[0], ys[1], outPlane, yBlock, false);
        expectClose(got, expected, 1e-4f, 1e-4f);
      }
  }
  ctx.constantWeights = nullptr;
  ctx.constantWeightBytes = 0;
}

// A residual R added before the epilogue (Y = epilogue(conv + B + R)), R
// apart from Y or Y itself (in place), in Y's layout, on every path; a
// ReLU or a clamp, and a SiLU (which oneDNN's convolutions leave to a pass
// over Y after the sum).
TEST_F(ConvTest, ResidualBeforeTheEpilogue) {
  for (const LayoutCase &k : layoutCases()) {
    const ConvCase &c = k.conv;
    Tensor x = Tensor::random(c.x, 81), w = Tensor::random(c.w, 82);
    Tensor b = Tensor::random({c.w[0]}, 83);
    const Shape ys = convOutput(c, false);
    Tensor r = Tensor::random(ys, 84);
    const std::vector<float> sum =
        naiveConv(c, x, w, c.bias ? &b : nullptr, ys, false);
    const int64_t plane = spatialCount(c.x), outPlane = spatialCount(ys);
    ctx.constantWeights = k.constant ? w.f32() : nullptr;
    ctx.constantWeightBytes = k.constant ? w.size() * sizeof(float) : 0;
    for (int64_t kind : {c.bias ? int64_t(CLEAVE_EPILOGUE_RELU)
                                : int64_t(CLEAVE_EPILOGUE_CLIP),
                         int64_t(CLEAVE_EPILOGUE_SILU)}) {
      std::vector<float> expected = sum;
      for (size_t i = 0; i < expected.size(); ++i) {
        const float v = expected[i] + r.f32()[i];
        expected[i] = kind == CLEAVE_EPILOGUE_RELU ? std::max(v, 0.0f)
                      : kind == CLEAVE_EPILOGUE_CLIP
                          ? std::min(std::max(v, -0.25f), 0.5f)
                          : v / (1.0f + std::exp(-v));
      }
      for (int64_t block : {0, 8, 16})
        for (bool inPlace : {false, true}) {
          SCOPED_TRACE(std::string(k.what) + ", block " +
                       std::to_string(block) +
                       (inPlace ? ", in place" : ", apart") + ", epilogue " +
                       std::to_string(kind));
          Tensor xk(c.x), y(ys), rk(ys);
          std::vector<float> xv = x.vec(), rv = r.vec();
          if (block) {
            xv = reorderBlocks(xv, c.x[0], c.x[1], plane, block, true);
            rv = reorderBlocks(rv, ys[0], ys[1], outPlane, block, true);
          }
          std::copy(xv.begin(), xv.end(), xk.f32());
          std::copy(rv.begin(), rv.end(), (inPlace ? y : rk).f32());
          std::vector<int64_t> ints = convInts(c, false);
          epilogueOf(ints) = kind;
          ints[ints.size() - 2] = block;
          ints[ints.size() - 1] = block;
          ASSERT_EQ(run(cleave_cpu_conv,
                        {xk.desc(), w.desc(), c.bias ? b.desc() : absent(),
                         inPlace ? y.desc() : rk.desc()},
                        {y.desc()}, ints, {-0.25, 0.5}),
                    0)
              << ctx.error;
          std::vector<float> got = y.vec();
          if (block)
            got = reorderBlocks(got, ys[0], ys[1], outPlane, block, false);
          expectClose(got, expected, 1e-4f, 1e-4f);
          // A residual apart from Y is only read.
          if (!inPlace)
            EXPECT_EQ(rk.vec(), rv);
        }
    }
  }
  ctx.constantWeights = nullptr;
  ctx.constantWeightBytes = 0;
  const ConvCase &c = layoutCases().front().conv;
  Tensor x = Tensor::random(c.x, 85), w = Tensor::random(c.w, 86);
  Tensor y(convOutput(c, false)), small({1, 4});
  std::vector<int64_t> ints = convInts(c, false);
  expectFailure(run(cleave_cpu_conv,
                    {x.desc(), w.desc(), absent(), small.desc()}, {y.desc()},
                    ints, {0.0, 0.0}),
                "conv", "R has 4 elements, Y 6272");
  // Y where X is: the convolution would overwrite what it reads.
  expectFailure(run(cleave_cpu_conv, {x.desc(), w.desc(), absent(), x.desc()},
                    {x.desc()}, ints, {0.0, 0.0}),
                "conv", "Y overlaps X");
}

// 1-D convolutions over a window of many channels (speech front ends)
// run on oneDNN's blocked kernels with reorders on either side: strides 1
// and 2, a dilation, channels that are and are not a multiple of the
// block, one input channel (a waveform, left to oneDNN's choice), a
// grouped one (no blocked kernel), each with its bias, a residual (apart
// from Y and in Y's place) and an activation, over constant weights, on a
// first call and a second.
TEST_F(ConvTest, OneDimensionalWindowsOverManyChannels) {
  const std::vector<ConvCase> cases = {
      {{1, 32, 261}, {24, 32, 3}, 1, {2}, {1, 1}, {1}, {}, true},
      {{2, 16, 400}, {16, 16, 3}, 1, {1}, {1, 1}, {1}, {}, true},
      {{1, 20, 401}, {40, 20, 2}, 1, {2}, {0, 0}, {1}, {}, false},
      {{1, 48, 240}, {32, 48, 3}, 1, {1}, {2, 2}, {2}, {}, true},
      {{1, 1, 8000}, {32, 1, 10}, 1, {5}, {0, 0}, {1}, {}, true},
      {{1, 32, 400}, {32, 8, 5}, 4, {1}, {2, 2}, {1}, {}, true},
  };
  // Each is large enough for oneDNN (CLEAVE_CONV_BLOCKED_MACS).
  for (const ConvCase &c : cases)
    ASSERT_GE(count(convOutput(c, false)) * c.w[1] * c.w[2],
              CLEAVE_CONV_BLOCKED_MACS);
  for (const ConvCase &c : cases) {
    SCOPED_TRACE("X " + std::to_string(c.x[1]) + "x" + std::to_string(c.x[2]) +
                 ", W " + std::to_string(c.w[0]) + "x" +
                 std::to_string(c.w[1]) + "x" + std::to_string(c.w[2]) +
                 ", stride " + std::to_string(c.strides[0]));
    expectFusedFormsMatch(c, 91);
  }
}

// Depthwise convolutions over constant weights on maps at least as large
// as kDirectDepthwisePlane, in NCHW: on AVX-512 oneDNN's blocked kernel
// (X and Y reordered into 16-channel blocks and back), else the runtime's
// direct loop. 3x3, 5x5 strided and 7x7 windows, 32 and 48 channels (and
// 24, which the block does not divide), each with its bias, a residual
// (apart from Y and in Y's place) and an activation, on a first call and a
// second.
TEST_F(ConvTest, DepthwiseOnLargeMaps) {
  const std::vector<ConvCase> cases = {
      {{1, 32, 60, 60},
       {32, 1, 3, 3},
       32,
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {},
       true},
      {{1, 48, 121, 117},
       {48, 1, 5, 5},
       48,
       {2, 2},
       {2, 2, 2, 2},
       {1, 1},
       {},
       true},
      {{1, 32, 57, 58},
       {32, 1, 7, 7},
       32,
       {1, 1},
       {3, 3, 3, 3},
       {1, 1},
       {},
       false},
      {{1, 24, 60, 60},
       {24, 1, 3, 3},
       24,
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {},
       true},
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE("X " + std::to_string(c.x[1]) + "x" + std::to_string(c.x[2]) +
                 "x" + std::to_string(c.x[3]) + ", window " +
                 std::to_string(c.w[2]) + ", stride " +
                 std::to_string(c.strides[0]));
    const Shape ys = convOutput(c, false);
    ASSERT_GE(count(Shape(ys.begin() + 2, ys.end())), 56 * 56);
    expectFusedFormsMatch(c, 95);
  }
}

// Convolutions below oneDNN's size (im2col + sgemm here) on the maps of a
// batch: small maps go as one product over every image's columns, larger
// ones image by image; the bias and the epilogue over whole images where
// the planes are small, else plane by plane. Each with its bias, a
// residual (apart from Y and in Y's place) and a ReLU, on a first call
// and a second, over constant weights.
TEST_F(ConvTest, SmallMapsOfABatch) {
  const std::vector<ConvCase> cases = {
      // Pointwise on 2x2 and on 1x1 (batch 8 and 1), 3x3 padded on 3x3.
      {{8, 16, 2, 2},
       {96, 16, 1, 1},
       1,
       {1, 1},
       {0, 0, 0, 0},
       {1, 1},
       {},
       true},
      {{8, 40, 1, 1},
       {24, 40, 1, 1},
       1,
       {1, 1},
       {0, 0, 0, 0},
       {1, 1},
       {},
       true},
      {{1, 40, 1, 1},
       {24, 40, 1, 1},
       1,
       {1, 1},
       {0, 0, 0, 0},
       {1, 1},
       {},
       false},
      {{4, 8, 3, 3}, {12, 8, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, {}, true},
      // Grouped, strided; 1-D; a map of 81 positions (planes past the small
      // size, still one product); 300 positions (image by image).
      {{3, 8, 4, 4}, {6, 4, 3, 3}, 2, {2, 2}, {1, 1, 1, 1}, {1, 1}, {}, true},
      {{5, 6, 7}, {10, 6, 3}, 1, {1}, {1, 1}, {1}, {}, true},
      {{2, 4, 9, 9}, {8, 4, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, {}, true},
      {{2, 3, 20, 15},
       {5, 3, 1, 1},
       1,
       {1, 1},
       {0, 0, 0, 0},
       {1, 1},
       {},
       false},
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE("X " + std::to_string(c.x[0]) + "x" + std::to_string(c.x[1]) +
                 "x" + std::to_string(c.x[2]) + ", W " +
                 std::to_string(c.w[0]) + "x" + std::to_string(c.w[1]) +
                 ", group " + std::to_string(c.group));
    expectFusedFormsMatch(c, 61);
  }
}

// Windows whose outer taps read only the padding on every output are cut
// to the taps that read inside X before oneDNN sees them (3x3 on a 1x1
// map is its centre; stride 2 on 2x2 its lower-right 2x2; a depthwise
// 5x5 on 1x1 and 2x2 maps; 1-D; dilated), and agree with the direct
// loop, on a first call and on later ones (weights cut and packed once).
TEST_F(ConvTest, TapsInThePaddingAreDropped) {
  const ConvCase cases[] = {
      {{1, 256, 1, 1},
       {256, 256, 3, 3},
       1,
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {},
       true},
      {{2, 128, 2, 2},
       {256, 128, 3, 3},
       1,
       {2, 2},
       {1, 1, 1, 1},
       {1, 1},
       {},
       true},
      // Stride 1 on 2x2: every tap is read somewhere, nothing is cut.
      {{1, 64, 2, 2},
       {64, 64, 3, 3},
       1,
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {},
       false},
      {{1, 144, 1, 1},
       {144, 1, 5, 5},
       144,
       {1, 1},
       {2, 2, 2, 2},
       {1, 1},
       {},
       true},
      {{1, 96, 2, 2},
       {96, 1, 5, 5},
       96,
       {2, 2},
       {2, 2, 2, 2},
       {1, 1},
       {},
       true},
      {{1, 256, 1}, {256, 256, 5}, 1, {1}, {2, 2}, {1}, {}, true},
      {{1, 64, 3, 3},
       {64, 64, 3, 3},
       1,
       {1, 1},
       {2, 2, 2, 2},
       {2, 2},
       {},
       true},
      // Asymmetric padding: only the end's taps fall outside.
      {{1, 64, 4, 4},
       {64, 64, 3, 3},
       1,
       {1, 1},
       {0, 0, 4, 4},
       {1, 1},
       {},
       false},
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE("X " + std::to_string(c.x[1]) + " channels, " +
                 std::to_string(c.x.back()) + " wide, kernel " +
                 std::to_string(c.w.back()) + ", group " +
                 std::to_string(c.group));
    Tensor x = Tensor::random(c.x, 91), w = Tensor::random(c.w, 92);
    Tensor b = Tensor::random({c.w[0]}, 93);
    const Shape ys = convOutput(c, false);
    const std::vector<float> expected =
        naiveConv(c, x, w, c.bias ? &b : nullptr, ys, false);
    ctx.constantWeights = w.f32();
    ctx.constantWeightBytes = w.size() * sizeof(float);
    for (int call = 0; call < 2; ++call) {
      Tensor y(ys);
      ASSERT_EQ(run(cleave_cpu_conv,
                    {x.desc(), w.desc(), c.bias ? b.desc() : absent()},
                    {y.desc()}, convInts(c, false), {0.0, 0.0}),
                0)
          << ctx.error;
      expectClose(y.vec(), expected, 1e-4f, 1e-4f);
    }
  }
  ctx.constantWeights = nullptr;
  ctx.constantWeightBytes = 0;
}

TEST_F(ConvTest, RejectsBadLayouts) {
  const ConvCase c{{1, 12, 6, 6}, {8, 12, 3, 3}, 1,  {1, 1},
                   {1, 1, 1, 1},  {1, 1},        {}, false};
  Tensor x = Tensor::random(c.x, 1), w = Tensor::random(c.w, 2);
  Tensor y(convOutput(c, false));
  auto layouts = [&](int64_t xBlock, int64_t yBlock) {
    std::vector<int64_t> ints = convInts(c, false);
    ints[ints.size() - 2] = xBlock;
    ints[ints.size() - 1] = yBlock;
    return run(cleave_cpu_conv, {x.desc(), w.desc(), absent()}, {y.desc()},
               ints, {0.0, 0.0});
  };
  expectFailure(layouts(0, 4), "conv",
                "yBlock 4: the layouts are 0 (NCHW), 8 and 16");
  expectFailure(layouts(8, 0), "conv", "xBlock 8 does not divide 12 channels");
  EXPECT_EQ(layouts(0, 8), 0) << ctx.error;
  expectFailure(layouts(0, 16), "conv", "yBlock 16 does not divide 8 channels");
  // 1-D.
  const ConvCase d{{1, 8, 6}, {8, 8, 3}, 1, {1}, {1, 1}, {1}, {}, false};
  Tensor x1 = Tensor::random(d.x, 3), w1 = Tensor::random(d.w, 4);
  Tensor y1(convOutput(d, false));
  std::vector<int64_t> ints = convInts(d, false);
  ints.back() = 8;
  expectFailure(run(cleave_cpu_conv, {x1.desc(), w1.desc(), absent()},
                    {y1.desc()}, ints, {0.0, 0.0}),
                "conv",
                "yBlock 8: a blocked layout needs 2 spatial dimensions, not 1");
}
