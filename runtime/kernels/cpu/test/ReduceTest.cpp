//===- ReduceTest.cpp - reductions against a naive walk -------------------===//

#include "KernelTest.h"

#include <functional>
#include <limits>

using namespace cleave::test;

namespace {

enum class Op { Sum, Mean, Max, Min, Prod, L2, SumSquare };

struct Reduction {
  Op op;
  CleaveKernelFn kernel;
  const char *name;
};

const Reduction kReductions[] = {
    {Op::Sum, cleave_cpu_reduce_sum, "reduce_sum"},
    {Op::Mean, cleave_cpu_reduce_mean, "reduce_mean"},
    {Op::Max, cleave_cpu_reduce_max, "reduce_max"},
    {Op::Min, cleave_cpu_reduce_min, "reduce_min"},
    {Op::Prod, cleave_cpu_reduce_prod, "reduce_prod"},
    {Op::L2, cleave_cpu_reduce_l2, "reduce_l2"},
    {Op::SumSquare, cleave_cpu_reduce_sum_square, "reduce_sum_square"},
};

/// Reduces `x` over `axes` (keepdims shape) by walking every element.
std::vector<float> naiveReduce(const Tensor &x, const Shape &axes, Op op) {
  Shape outShape = x.shape;
  for (int64_t a : axes)
    outShape[a] = 1;
  Shape outStrides = stridesOf(outShape);
  std::vector<double> acc(count(outShape));
  double init = op == Op::Max    ? -std::numeric_limits<double>::infinity()
                : op == Op::Min  ? std::numeric_limits<double>::infinity()
                : op == Op::Prod ? 1.0
                                 : 0.0;
  std::fill(acc.begin(), acc.end(), init);
  for (int64_t i = 0; i < x.size(); ++i) {
    Shape index = unflatten(i, x.shape);
    int64_t o = 0;
    for (size_t d = 0; d < index.size(); ++d)
      o += (outShape[d] == 1 ? 0 : index[d]) * outStrides[d];
    double v = x.f32()[i];
    switch (op) {
    case Op::Sum:
    case Op::Mean:
      acc[o] += v;
      break;
    case Op::Max:
      acc[o] = std::max(acc[o], v);
      break;
    case Op::Min:
      acc[o] = std::min(acc[o], v);
      break;
    case Op::Prod:
      acc[o] *= v;
      break;
    case Op::L2:
    case Op::SumSquare:
      acc[o] += v * v;
      break;
    }
  }
  int64_t reduced = x.size() / count(outShape);
  std::vector<float> y;
  for (double a : acc)
    y.push_back(float(op == Op::Mean ? a / reduced
                      : op == Op::L2 ? std::sqrt(a)
                                     : a));
  return y;
}

struct ReduceCase {
  Shape x, axes;
};

class ReduceTest : public KernelTest,
                   public ::testing::WithParamInterface<ReduceCase> {};

TEST_P(ReduceTest, EveryOpMatchesNaiveWalk) {
  const ReduceCase &c = GetParam();
  // Values near 1 keep products finite.
  Tensor x = Tensor::random(c.x, 71, 0.5f, 1.5f);
  std::vector<int64_t> ints = {int64_t(c.axes.size())};
  ints.insert(ints.end(), c.axes.begin(), c.axes.end());
  for (const Reduction &r : kReductions) {
    SCOPED_TRACE(r.name);
    std::vector<float> expected = naiveReduce(x, c.axes, r.op);
    // Without keepdims: the same elements in the same order.
    Tensor y({int64_t(expected.size())});
    ASSERT_EQ(run(r.kernel, {x.desc()}, {y.desc()}, ints), 0) << ctx.error;
    expectClose(y.vec(), expected, 1e-5f, 1e-5f);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Patterns, ReduceTest,
    ::testing::Values(ReduceCase{{4, 6, 5}, {2}},       // trailing
                      ReduceCase{{4, 6, 5}, {1}},       // middle
                      ReduceCase{{4, 6, 1500}, {0}},    // leading, chunked
                      ReduceCase{{4, 6, 5}, {1, 2}},    // merged trailing
                      ReduceCase{{3, 4, 5, 6}, {0, 2}}, // non-adjacent
                      ReduceCase{{2, 3, 4, 5}, {1, 3}}, // non-adjacent
                      ReduceCase{{4, 6, 5}, {0, 1, 2}}, // everything
                      ReduceCase{{4, 1, 5}, {1}},       // size-1 axis
                      ReduceCase{{1, 1}, {0}}));        // one element

TEST_F(ReduceTest, SizeOneAxisStillAppliesTheFunction) {
  Tensor x = Tensor::f32({2, 1}, {-3, 4});
  Tensor y({2, 1});
  ASSERT_EQ(run(cleave_cpu_reduce_l2, {x.desc()}, {y.desc()}, {1, 1}), 0);
  EXPECT_EQ(y.vec(), (std::vector<float>{3, 4}));
  ASSERT_EQ(run(cleave_cpu_reduce_sum_square, {x.desc()}, {y.desc()}, {1, 1}),
            0);
  EXPECT_EQ(y.vec(), (std::vector<float>{9, 16}));
}

// Float32 sums accumulate in float64: the mean of 2^20 copies of 0.1 is
// 0.1 to float32's precision on each of the three walks (rows, whole inner
// rows, any other pattern), where float32 accumulation drifts by about 1%.
TEST_F(ReduceTest, FloatMeansOfManyElementsKeepTheirDigits) {
  const int64_t n = int64_t(1) << 20;
  struct Case {
    Shape shape;
    std::vector<int64_t> ints; // the axis count, then the axes
    Shape out;
  };
  const Case cases[] = {
      {{2, n / 2}, {1, 1}, {2, 1}},
      {{n / 2, 2}, {1, 0}, {1, 2}},
      {{n / 2048, 2, 1024}, {2, 0, 2}, {1, 2, 1}},
  };
  for (const Case &c : cases) {
    Tensor x = Tensor::f32(c.shape, std::vector<float>(n, 0.1f));
    Tensor y(c.out);
    ASSERT_EQ(run(cleave_cpu_reduce_mean, {x.desc()}, {y.desc()}, c.ints), 0)
        << ctx.error;
    for (float v : y.vec())
      EXPECT_NEAR(v, 0.1f, 1e-7f);
  }
}

// No axis reduced: each output folds one element, so a sum copies the
// input and the reductions that square (ONNX's ReduceSumSquare and ReduceL2
// with no axes, a scalar's norm) still square it.
TEST_F(ReduceTest, EmptyAxesFoldOneElement) {
  Tensor x = Tensor::f32({3}, {-1, 2, -3});
  Tensor y({3});
  ASSERT_EQ(run(cleave_cpu_reduce_sum, {x.desc()}, {y.desc()}, {0}), 0);
  EXPECT_EQ(y.vec(), (std::vector<float>{-1, 2, -3}));
  ASSERT_EQ(run(cleave_cpu_reduce_sum_square, {x.desc()}, {y.desc()}, {0}), 0);
  EXPECT_EQ(y.vec(), (std::vector<float>{1, 4, 9}));
  ASSERT_EQ(run(cleave_cpu_reduce_l2, {x.desc()}, {y.desc()}, {0}), 0);
  EXPECT_EQ(y.vec(), (std::vector<float>{1, 2, 3}));
  Tensor scalar = Tensor::f32(Shape{}, {-0.5f});
  Tensor out(Shape{});
  ASSERT_EQ(
      run(cleave_cpu_reduce_sum_square, {scalar.desc()}, {out.desc()}, {0}), 0);
  EXPECT_EQ(out.vec(), (std::vector<float>{0.25f}));
}

TEST_F(ReduceTest, IntegerTypes) {
  Tensor x = Tensor::of<int64_t>({2, 3}, CLEAVE_I64, {1, 5, 3, -4, 2, 7});
  Tensor y({2}, CLEAVE_I64);
  ASSERT_EQ(run(cleave_cpu_reduce_sum, {x.desc()}, {y.desc()}, {1, 1}), 0);
  EXPECT_EQ(y.vecOf<int64_t>(), (std::vector<int64_t>{9, 5}));
  ASSERT_EQ(run(cleave_cpu_reduce_max, {x.desc()}, {y.desc()}, {1, 1}), 0);
  EXPECT_EQ(y.vecOf<int64_t>(), (std::vector<int64_t>{5, 7}));
  Tensor xi = Tensor::of<int32_t>({2, 2}, CLEAVE_I32, {1, 2, 3, 5});
  Tensor yi({2}, CLEAVE_I32);
  // Integer mean truncates: (1 + 3) / 2 = 2, (2 + 5) / 2 = 3.
  ASSERT_EQ(run(cleave_cpu_reduce_mean, {xi.desc()}, {yi.desc()}, {1, 0}), 0);
  EXPECT_EQ(yi.vecOf<int32_t>(), (std::vector<int32_t>{2, 3}));
}

TEST_F(ReduceTest, BooleanMaxIsAnyMinIsAll) {
  Tensor x = Tensor::of<uint8_t>({2, 3}, CLEAVE_BOOL, {0, 1, 0, 1, 1, 1});
  Tensor y({2}, CLEAVE_BOOL);
  ASSERT_EQ(run(cleave_cpu_reduce_max, {x.desc()}, {y.desc()}, {1, 1}), 0);
  EXPECT_EQ(y.vecOf<uint8_t>(), (std::vector<uint8_t>{1, 1}));
  ASSERT_EQ(run(cleave_cpu_reduce_min, {x.desc()}, {y.desc()}, {1, 1}), 0);
  EXPECT_EQ(y.vecOf<uint8_t>(), (std::vector<uint8_t>{0, 1}));
}

TEST_F(ReduceTest, RejectsBadArguments) {
  Tensor x = Tensor::random({2, 3, 4}, 1), y({2});
  expectFailure(run(cleave_cpu_reduce_sum, {x.desc()}, {y.desc()}, {2, 2, 1}),
                "reduce_sum", "sorted");
  expectFailure(run(cleave_cpu_reduce_max, {x.desc()}, {y.desc()}, {1, 3}),
                "reduce_max", "in [0, 3)");
  expectFailure(run(cleave_cpu_reduce_mean, {x.desc()}, {y.desc()}, {1, 2}),
                "reduce_mean", "Y has 2 elements, expected 6");
  Tensor h({2, 3}, CLEAVE_F16), hy({2}, CLEAVE_F16);
  expectFailure(run(cleave_cpu_reduce_prod, {h.desc()}, {hy.desc()}, {1, 1}),
                "reduce_prod", "dtype 2 is not supported");
  Tensor yd({2}, CLEAVE_F64);
  expectFailure(run(cleave_cpu_reduce_l2, {x.desc()}, {yd.desc()}, {2, 1, 2}),
                "reduce_l2", "different dtypes");
}

} // namespace
