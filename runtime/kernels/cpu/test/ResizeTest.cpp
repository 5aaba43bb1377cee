//===- ResizeTest.cpp - resize against onnxruntime and a direct formula ---===//
//
// The pinned outputs are onnxruntime 1.32's (opset 19 Resize with the same
// scales) on x = (0.5 i - 1)^2, i = 0..11, shaped 1x1x3x4.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

using namespace cleave::test;

namespace {

enum { Nearest, Linear, Cubic };
enum { HalfPixel, Asymmetric, AlignCorners, PytorchHalfPixel, Symmetric };
enum { PreferFloor, PreferCeil, Floor, Ceil };

struct PinnedCase {
  const char *name;
  double scaleH, scaleW;
  int64_t mode, coordinates, nearestMode, excludeOutside;
  Shape y;
  std::vector<float> expected;
};

class ResizeTest : public KernelTest,
                   public ::testing::WithParamInterface<PinnedCase> {};

Tensor pinnedInput() {
  Tensor x({1, 1, 3, 4});
  for (int i = 0; i < 12; ++i)
    x.f32()[i] = (0.5f * i - 1.0f) * (0.5f * i - 1.0f);
  return x;
}

TEST_P(ResizeTest, MatchesOnnxruntime) {
  const PinnedCase &c = GetParam();
  Tensor x = pinnedInput(), y(c.y);
  ASSERT_EQ(run(cleave_cpu_resize, {x.desc()}, {y.desc()},
                {c.mode, c.coordinates, c.nearestMode, c.excludeOutside},
                {1.0, 1.0, c.scaleH, c.scaleW, -0.75, 0.0}),
            0)
      << ctx.error;
  expectClose(y.vec(), c.expected, 1e-5f, 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ResizeTest,
    ::testing::Values(
        PinnedCase{
            "linear_half_pixel",
            2,
            1.5,
            Linear,
            HalfPixel,
            PreferFloor,
            0,
            {1, 1, 6, 6},
            {1.f, 0.625f,  0.208333343f, 0.0416666865f, 0.125f,  0.25f,
             1.f, 0.875f,  0.791666627f, 0.958333313f,  1.375f,  1.75f,
             1.f, 1.375f,  1.95833325f,  2.79166651f,   3.875f,  4.75f,
             3.f, 3.875f,  5.125f,       6.625f,        8.375f,  9.75f,
             7.f, 8.375f,  10.291666f,   12.458333f,    14.875f, 16.75f,
             9.f, 10.625f, 12.875f,      15.375f,       18.125f, 20.25f}},
        PinnedCase{"linear_pytorch_half_pixel",
                   0.67,
                   0.5,
                   Linear,
                   PytorchHalfPixel,
                   PreferFloor,
                   0,
                   {1, 1, 2, 2},
                   {0.87126863f, 1.35634315f, 8.27425385f, 14.7294788f}},
        PinnedCase{"linear_align_corners",
                   2,
                   2,
                   Linear,
                   AlignCorners,
                   PreferFloor,
                   0,
                   {1, 1, 6, 8},
                   {1.f,           0.678571403f,  0.357142866f, 0.178571433f,
                    0.0714285672f, 0.0357142687f, 0.142857134f, 0.25f,
                    1.f,           1.02142859f,   1.04285717f,  1.20714283f,
                    1.44285715f,   1.75f,         2.20000005f,  2.6500001f,
                    1.f,           1.36428571f,   1.72857141f,  2.23571444f,
                    2.81428576f,   3.46428561f,   4.25714302f,  5.05000019f,
                    2.60000038f,   3.30714321f,   4.01428604f,  4.86428642f,
                    5.7857151f,    6.77857208f,   7.91428614f,  9.05000114f,
                    5.80000019f,   6.8499999f,    7.9000001f,   9.09285736f,
                    10.3571434f,   11.6928577f,   13.1714287f,  14.6499996f,
                    9.f,           10.3928566f,   11.7857141f,  13.3214283f,
                    14.9285717f,   16.6071434f,   18.4285717f,  20.25f}},
        PinnedCase{
            "linear_half_pixel_symmetric",
            1.7,
            1.25,
            Linear,
            Symmetric,
            PreferFloor,
            0,
            {1, 1, 5, 5},
            {1.f,         0.475000024f, 0.125f,      0.0749999881f, 0.25f,
             1.f,         1.05147076f,  1.36029434f, 1.969118f,     2.72058868f,
             1.f,         1.875f,       3.125f,      4.67500019f,   6.25f,
             5.70588303f, 7.40441275f,  9.59558868f, 12.0867653f,   14.4852943f,
             9.f,         11.2749996f,  14.125f,     17.2749996f,   20.25f}},
        PinnedCase{"cubic_half_pixel",
                   2,
                   1.5,
                   Cubic,
                   HalfPixel,
                   PreferFloor,
                   0,
                   {1, 1, 6, 6},
                   {1.08341527f,   0.562744141f,  -0.111183643f, -0.375795841f,
                    -0.445556641f, -0.379421741f, 0.750624299f,  0.522705078f,
                    0.327763796f,  0.404007673f,  0.813232422f,  1.17211914f,
                    0.105387509f,  0.347412109f,  0.921370268f,  1.54477775f,
                    2.72290039f,   3.55173087f,   2.64635015f,   3.54321289f,
                    5.18858957f,   6.57443762f,   8.82397461f,   10.3076458f,
                    6.93861532f,   8.30541992f,   10.719698f,    12.6527081f,
                    15.6711426f,   17.6247578f,   9.54332542f,   11.2028809f,
                    14.0961475f,   16.3700123f,   19.8674316f,   22.1138f}},
        PinnedCase{"cubic_asymmetric_exclude_outside",
                   2,
                   1.5,
                   Cubic,
                   Asymmetric,
                   PreferFloor,
                   1,
                   {1, 1, 6, 6},
                   {1.f,          0.539473653f, 0.0740739554f, 0.f,
                    0.166666716f, 0.290540546f, 0.314285755f,  0.257769287f,
                    0.406348825f, 0.800000072f, 1.53619039f,   1.9538604f,
                    1.f,          1.62719285f,  2.81481385f,   4.f,
                    5.69999886f,  6.61486435f,  5.34285688f,   6.65375996f,
                    8.88042164f,  10.8571434f,  13.5209503f,   14.933012f,
                    9.f,          10.7149124f,  13.5555534f,   16.f,
                    19.2333298f,  20.9391899f,  10.5f,         12.4188604f,
                    15.5694418f,  18.25f,       21.7708282f,   23.625f}},
        PinnedCase{"cubic_downsample",
                   0.67,
                   0.75,
                   Cubic,
                   HalfPixel,
                   PreferFloor,
                   0,
                   {1, 1, 2, 3},
                   {0.669967294f, 0.322274804f, 1.01856363f, 7.44556046f,
                    11.5249796f, 16.6483822f}},
        PinnedCase{"nearest_half_pixel_round_prefer_floor",
                   2,
                   1.5,
                   Nearest,
                   HalfPixel,
                   PreferFloor,
                   0,
                   {1, 1, 6, 6},
                   {1.f,  1.f,  0.25f,  0.f, 0.f, 0.25f,  1.f,  1.f,  0.25f,
                    0.f,  0.f,  0.25f,  1.f, 1.f, 2.25f,  4.f,  4.f,  6.25f,
                    1.f,  1.f,  2.25f,  4.f, 4.f, 6.25f,  9.f,  9.f,  12.25f,
                    16.f, 16.f, 20.25f, 9.f, 9.f, 12.25f, 16.f, 16.f, 20.25f}},
        PinnedCase{
            "nearest_asymmetric_round_prefer_ceil",
            2,
            1.5,
            Nearest,
            Asymmetric,
            PreferCeil,
            0,
            {1, 1, 6, 6},
            {1.f,  0.25f,  0.25f,  0.f,  0.25f,  0.25f,  1.f,  2.25f,  2.25f,
             4.f,  6.25f,  6.25f,  1.f,  2.25f,  2.25f,  4.f,  6.25f,  6.25f,
             9.f,  12.25f, 12.25f, 16.f, 20.25f, 20.25f, 9.f,  12.25f, 12.25f,
             16.f, 20.25f, 20.25f, 9.f,  12.25f, 12.25f, 16.f, 20.25f, 20.25f}},
        PinnedCase{"nearest_align_corners_floor",
                   1.5,
                   0.5,
                   Nearest,
                   AlignCorners,
                   Floor,
                   0,
                   {1, 1, 4, 2},
                   {1.f, 0.25f, 1.f, 0.25f, 1.f, 6.25f, 9.f, 20.25f}},
        PinnedCase{"nearest_pytorch_half_pixel_ceil",
                   2,
                   1.75,
                   Nearest,
                   PytorchHalfPixel,
                   Ceil,
                   0,
                   {1, 1, 6, 7},
                   {1.f, 0.25f,  0.25f,  0.f,  0.25f,  0.25f,  0.25f,
                    1.f, 2.25f,  2.25f,  4.f,  6.25f,  6.25f,  6.25f,
                    1.f, 2.25f,  2.25f,  4.f,  6.25f,  6.25f,  6.25f,
                    9.f, 12.25f, 12.25f, 16.f, 20.25f, 20.25f, 20.25f,
                    9.f, 12.25f, 12.25f, 16.f, 20.25f, 20.25f, 20.25f,
                    9.f, 12.25f, 12.25f, 16.f, 20.25f, 20.25f, 20.25f}}),
    [](const ::testing::TestParamInfo<PinnedCase> &info) {
      return std::string(info.param.name);
    });

TEST_F(ResizeTest, TrilinearMatchesDirectFormula) {
  // Three resized dimensions at once: the product of per-dimension linear
  // weights over the 8 corners (half_pixel).
  Shape xs = {2, 3, 4, 5}, ys = {2, 5, 6, 3};
  double scales[] = {1, 5.0 / 3, 1.5, 0.6};
  Tensor x = Tensor::random(xs, 81), y(ys);
  ASSERT_EQ(run(cleave_cpu_resize, {x.desc()}, {y.desc()},
                {Linear, HalfPixel, PreferFloor, 0},
                {scales[0], scales[1], scales[2], scales[3], -0.75, 0.0}),
            0);
  Shape xst = stridesOf(xs);
  std::vector<float> expected;
  for (int64_t i = 0; i < count(ys); ++i) {
    Shape o = unflatten(i, ys);
    int64_t lo[4], hi[4];
    double w[4];
    for (int d = 0; d < 4; ++d) {
      double c = (o[d] + 0.5) / float(scales[d]) - 0.5;
      c = std::min(std::max(c, 0.0), double(xs[d] - 1));
      lo[d] = int64_t(c);
      hi[d] = std::min(lo[d] + 1, xs[d] - 1);
      w[d] = c - lo[d];
    }
    double sum = 0;
    for (int corner = 0; corner < 16; ++corner) {
      double weight = 1;
      int64_t off = 0;
      for (int d = 0; d < 4; ++d) {
        bool upper = corner >> d & 1;
        weight *= upper ? w[d] : 1 - w[d];
        off += (upper ? hi[d] : lo[d]) * xst[d];
      }
      sum += weight * x.f32()[off];
    }
    expected.push_back(float(sum));
  }
  expectClose(y.vec(), expected, 1e-5f, 1e-4f);
}

TEST_F(ResizeTest, IdentityCopies) {
  Tensor x = Tensor::random({2, 3}, 82), y({2, 3});
  ASSERT_EQ(run(cleave_cpu_resize, {x.desc()}, {y.desc()},
                {Cubic, HalfPixel, PreferFloor, 0}, {1.0, 1.0, -0.75, 0.0}),
            0);
  EXPECT_EQ(y.vec(), x.vec());
}

TEST_F(ResizeTest, RejectsBadArguments) {
  Tensor x = Tensor::random({1, 4}, 1), y({1, 8});
  std::vector<double> floats = {1.0, 2.0, -0.75, 0.0};
  expectFailure(
      run(cleave_cpu_resize, {x.desc()}, {y.desc()}, {3, 0, 0, 0}, floats),
      "resize", "unknown mode 3");
  expectFailure(
      run(cleave_cpu_resize, {x.desc()}, {y.desc()}, {0, 5, 0, 0}, floats),
      "resize", "unknown coordinate_transformation_mode 5");
  expectFailure(
      run(cleave_cpu_resize, {x.desc()}, {y.desc()}, {0, 0, 4, 0}, floats),
      "resize", "unknown nearest_mode 4");
  expectFailure(run(cleave_cpu_resize, {x.desc()}, {y.desc()}, {0, 0, 0, 0},
                    {1.0, 0.0, -0.75, 0.0}),
                "resize", "scale 1 is not positive");
  Tensor xi({1, 4}, CLEAVE_I32), yi({1, 8}, CLEAVE_I32);
  expectFailure(
      run(cleave_cpu_resize, {xi.desc()}, {yi.desc()}, {0, 0, 0, 0}, floats),
      "resize", "only float32");
}

} // namespace
