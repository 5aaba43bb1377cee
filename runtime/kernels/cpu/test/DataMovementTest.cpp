//===- DataMovementTest.cpp - element moves against index arithmetic ------===//
//
// Each reference computes, for every output position, the flat input
// position it reads (or -1 for a pad value), and moves raw elements, so the
// same reference checks every element size.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

#include <functional>

using namespace cleave::test;

namespace {

using SourceOf = std::function<int64_t(const Shape &outIndex)>;

/// Output bytes of shape `ys` whose elements come from `x` via `source`;
/// `fill` (one element) where the source is -1.
std::vector<unsigned char> reference(const Tensor &x, const Shape &ys,
                                     const SourceOf &source,
                                     const void *fill = nullptr) {
  size_t size = cleave_dtype_size(x.dtype);
  std::vector<unsigned char> out(count(ys) * size);
  for (int64_t i = 0; i < count(ys); ++i) {
    int64_t from = source(unflatten(i, ys));
    const void *src = from >= 0 ? &x.bytes[from * size] : fill;
    std::memcpy(&out[i * size], src, size);
  }
  return out;
}

void expectBytes(const Tensor &y, const std::vector<unsigned char> &expected) {
  ASSERT_EQ(size_t(y.size()) * cleave_dtype_size(y.dtype), expected.size());
  if (expected.empty())
    return;
  EXPECT_EQ(0, std::memcmp(y.bytes.data(), expected.data(), expected.size()));
}

/// Distinct bytes, so that any misplaced element shows.
Tensor pattern(Shape shape, int32_t dtype) {
  Tensor t(std::move(shape), dtype);
  for (size_t i = 0; i < t.bytes.size(); ++i)
    t.bytes[i] = static_cast<unsigned char>(i * 7 + i / 251);
  return t;
}

/// The element bytes of `t` (without the spare byte of its storage).
std::vector<unsigned char> elements(const Tensor &t) {
  return {t.bytes.begin(),
          t.bytes.begin() + t.size() * cleave_dtype_size(t.dtype)};
}

int64_t flatOf(const Shape &index, const Shape &shape) {
  Shape strides = stridesOf(shape);
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d)
    flat += index[d] * strides[d];
  return flat;
}

class DataMovementTest : public KernelTest {};

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

struct TransposeCase {
  Shape x, perm;
  int32_t dtype;
};

class TransposeTest : public KernelTest,
                      public ::testing::WithParamInterface<TransposeCase> {};

TEST_P(TransposeTest, MatchesPermutedIndex) {
  const TransposeCase &c = GetParam();
  Tensor x = pattern(c.x, c.dtype);
  Shape ys;
  for (int64_t p : c.perm)
    ys.push_back(c.x[p]);
  Tensor y(ys, c.dtype);
  ASSERT_EQ(run(cleave_cpu_transpose, {x.desc()}, {y.desc()}, c.perm), 0)
      << ctx.error;
  expectBytes(y, reference(x, ys, [&](const Shape &o) {
                Shape in(c.x.size());
                for (size_t d = 0; d < o.size(); ++d)
                  in[c.perm[d]] = o[d];
                return flatOf(in, c.x);
              }));
}

INSTANTIATE_TEST_SUITE_P(
    Perms, TransposeTest,
    ::testing::Values(TransposeCase{{3, 4}, {0, 1}, CLEAVE_F32},
                      TransposeCase{{70, 45}, {1, 0}, CLEAVE_F32},     // tiled
                      TransposeCase{{2, 3, 4}, {1, 0, 2}, CLEAVE_F32}, // rows
                      TransposeCase{{2, 3, 4}, {2, 1, 0}, CLEAVE_I64},
                      TransposeCase{{2, 3, 4, 5}, {0, 2, 3, 1}, CLEAVE_F32},
                      TransposeCase{{2, 3, 4, 5}, {0, 3, 1, 2}, CLEAVE_I8},
                      TransposeCase{
                          {2, 1, 4, 1, 3}, {4, 3, 0, 2, 1}, CLEAVE_F16},
                      // Merged runs: (1, 2) move together.
                      TransposeCase{{5, 6, 7, 3}, {3, 1, 2, 0}, CLEAVE_BOOL},
                      TransposeCase{{40, 33, 3}, {2, 1, 0}, CLEAVE_F64},
                      // 4-byte elements go by vector blocks: whole tiles,
                      // ragged tiles and blocks, and rows of one block.
                      TransposeCase{{3, 64, 40}, {0, 2, 1}, CLEAVE_F32},
                      TransposeCase{{67, 71}, {1, 0}, CLEAVE_I32},
                      TransposeCase{{2, 19, 37, 13}, {0, 2, 3, 1}, CLEAVE_F32},
                      TransposeCase{{2, 13, 37, 19}, {0, 3, 1, 2}, CLEAVE_F32},
                      TransposeCase{{8, 8}, {1, 0}, CLEAVE_F32},
                      TransposeCase{{4, 9}, {1, 0}, CLEAVE_F32}));

TEST_F(DataMovementTest, TransposeRejectsBadPerm) {
  Tensor x({2, 3}), y({3, 2});
  expectFailure(run(cleave_cpu_transpose, {x.desc()}, {y.desc()}, {1, 1}),
                "transpose", "not a permutation");
  Tensor yi({3, 2}, CLEAVE_I32);
  expectFailure(run(cleave_cpu_transpose, {x.desc()}, {yi.desc()}, {1, 0}),
                "transpose", "differs from output dtype");
  Tensor bad({2, 3}, 99), badY({3, 2}, 99);
  expectFailure(run(cleave_cpu_transpose, {bad.desc()}, {badY.desc()}, {1, 0}),
                "transpose", "unknown dtype 99");
}

//===----------------------------------------------------------------------===//
// Concat and split
//===----------------------------------------------------------------------===//

TEST_F(DataMovementTest, ConcatAndSplitAreInverse) {
  for (int64_t axis = 0; axis < 3; ++axis) {
    SCOPED_TRACE(axis);
    Shape s0 = {2, 3, 4}, s1 = s0, s2 = s0;
    s1[axis] = 1;
    s2[axis] = 3;
    Shape ys = s0;
    ys[axis] = s0[axis] + 1 + 3;
    Tensor a = pattern(s0, CLEAVE_I64), b = pattern(s1, CLEAVE_I64),
           c = pattern(s2, CLEAVE_I64), y(ys, CLEAVE_I64);
    ASSERT_EQ(run(cleave_cpu_concat, {a.desc(), b.desc(), c.desc()}, {y.desc()},
                  {axis}),
              0)
        << ctx.error;
    // Every output element equals the element of its part.
    size_t size = 8;
    for (int64_t i = 0; i < count(ys); ++i) {
      Shape o = unflatten(i, ys);
      const Tensor *part = &a;
      if (o[axis] >= s0[axis] + 1) {
        part = &c;
        o[axis] -= s0[axis] + 1;
      } else if (o[axis] >= s0[axis]) {
        part = &b;
        o[axis] -= s0[axis];
      }
      ASSERT_EQ(0,
                std::memcmp(&y.bytes[i * size],
                            &part->bytes[flatOf(o, part->shape) * size], size))
          << "at " << i;
    }
    Tensor a2(s0, CLEAVE_I64), b2(s1, CLEAVE_I64), c2(s2, CLEAVE_I64);
    ASSERT_EQ(run(cleave_cpu_split, {y.desc()},
                  {a2.desc(), b2.desc(), c2.desc()}, {axis}),
              0);
    EXPECT_EQ(elements(a2), elements(a));
    EXPECT_EQ(elements(b2), elements(b));
    EXPECT_EQ(elements(c2), elements(c));
  }
}

TEST_F(DataMovementTest, ConcatAndSplitRejectMismatches) {
  Tensor a({2, 3}), b({3, 3}), y({5, 4});
  expectFailure(run(cleave_cpu_concat, {a.desc(), b.desc()}, {y.desc()}, {0}),
                "concat", "part 0 does not match");
  Tensor y2({4, 3});
  expectFailure(run(cleave_cpu_concat, {a.desc(), b.desc()}, {y2.desc()}, {0}),
                "concat", "sum to 5 along axis 0, not 4");
  expectFailure(run(cleave_cpu_split, {y2.desc()}, {a.desc(), b.desc()}, {2}),
                "split", "axis 2 is out of range");
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

struct SliceCase {
  Shape x, starts, ends, steps;
};

class SliceTest : public KernelTest,
                  public ::testing::WithParamInterface<SliceCase> {};

TEST_P(SliceTest, MatchesStridedIndex) {
  const SliceCase &c = GetParam();
  Tensor x = pattern(c.x, CLEAVE_F32);
  Shape ys;
  for (size_t d = 0; d < c.x.size(); ++d) {
    int64_t step = c.steps[d];
    int64_t n = step > 0 ? (c.ends[d] - c.starts[d] + step - 1) / step
                         : (c.starts[d] - c.ends[d] - step - 1) / -step;
    ys.push_back(std::max<int64_t>(n, 0));
  }
  Tensor y(ys);
  std::vector<int64_t> ints = c.starts;
  ints.insert(ints.end(), c.ends.begin(), c.ends.end());
  ints.insert(ints.end(), c.steps.begin(), c.steps.end());
  ASSERT_EQ(run(cleave_cpu_slice, {x.desc()}, {y.desc()}, ints), 0)
      << ctx.error;
  expectBytes(y, reference(x, ys, [&](const Shape &o) {
                Shape in(o.size());
                for (size_t d = 0; d < o.size(); ++d)
                  in[d] = c.starts[d] + o[d] * c.steps[d];
                return flatOf(in, c.x);
              }));
}

INSTANTIATE_TEST_SUITE_P(
    Ranges, SliceTest,
    ::testing::Values(SliceCase{{4, 6}, {1, 0}, {3, 6}, {1, 1}},
                      SliceCase{{4, 6}, {0, 1}, {4, 6}, {2, 2}},
                      // Negative steps down to -1 (the first element).
                      SliceCase{{4, 6}, {3, 5}, {-1, -1}, {-1, -2}},
                      SliceCase{{3, 4, 5}, {0, 3, 1}, {3, 0, 5}, {1, -1, 3}},
                      // An empty result.
                      SliceCase{{4, 6}, {2, 0}, {2, 6}, {1, 1}}));

TEST_F(DataMovementTest, SliceRejectsBadRanges) {
  Tensor x({4, 6}), y({2, 6});
  expectFailure(
      run(cleave_cpu_slice, {x.desc()}, {y.desc()}, {0, 0, 2, 6, 0, 1}),
      "slice", "step of dimension 0 is zero");
  expectFailure(
      run(cleave_cpu_slice, {x.desc()}, {y.desc()}, {0, 0, 3, 6, 1, 1}),
      "slice", "dimension 0 of Y is 2, the slice selects 3");
  expectFailure(
      run(cleave_cpu_slice, {x.desc()}, {y.desc()}, {3, 0, 5, 6, 1, 1}),
      "slice", "leaves [0, 4)");
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

TEST_F(DataMovementTest, GatherInt64IndicesAlongFirstAxis) {
  Tensor data = pattern({5, 3}, CLEAVE_F32);
  Tensor idx = Tensor::of<int64_t>({2, 2}, CLEAVE_I64, {4, 0, -1, 2});
  Tensor y({2, 2, 3});
  ASSERT_EQ(run(cleave_cpu_gather, {data.desc(), idx.desc()}, {y.desc()}, {0}),
            0);
  const int64_t rows[] = {4, 0, 4, 2};
  expectBytes(y, reference(data, {2, 2, 3}, [&](const Shape &o) {
                return rows[o[0] * 2 + o[1]] * 3 + o[2];
              }));
}

TEST_F(DataMovementTest, GatherInt32IndicesAlongInnerAxis) {
  Tensor data = pattern({2, 4, 3}, CLEAVE_I16);
  Tensor idx = Tensor::of<int32_t>({3}, CLEAVE_I32, {-4, 3, 1});
  Tensor y({2, 3, 3}, CLEAVE_I16);
  ASSERT_EQ(run(cleave_cpu_gather, {data.desc(), idx.desc()}, {y.desc()}, {1}),
            0);
  const int64_t picks[] = {0, 3, 1};
  expectBytes(y, reference(data, {2, 3, 3}, [&](const Shape &o) {
                return flatOf({o[0], picks[o[1]], o[2]}, {2, 4, 3});
              }));
}

TEST_F(DataMovementTest, GatherRejectsOutOfRangeIndex) {
  Tensor data({5, 3});
  Tensor idx = Tensor::of<int64_t>({3}, CLEAVE_I64, {1, 5, 0});
  Tensor y({3, 3});
  expectFailure(
      run(cleave_cpu_gather, {data.desc(), idx.desc()}, {y.desc()}, {0}),
      "gather", "index 5 (at position 1) is out of range [-5, 5)");
  Tensor neg = Tensor::of<int32_t>({3}, CLEAVE_I32, {0, 0, -6});
  expectFailure(
      run(cleave_cpu_gather, {data.desc(), neg.desc()}, {y.desc()}, {0}),
      "gather", "index -6 (at position 2)");
  Tensor fidx({3});
  expectFailure(
      run(cleave_cpu_gather, {data.desc(), fidx.desc()}, {y.desc()}, {0}),
      "gather", "int64 or int32 expected");
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

struct PadCase {
  Shape x, pads;
  int64_t mode;
  int32_t dtype;
};

class PadTest : public KernelTest,
                public ::testing::WithParamInterface<PadCase> {};

/// numpy.pad's index rule for one dimension (-1: the constant).
int64_t padSource(int64_t i, int64_t n, int64_t mode) {
  if (i >= 0 && i < n)
    return i;
  switch (mode) {
  case 0:
    return -1;
  case 1:
    while (i < 0 || i >= n)
      i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
  case 2:
    return i < 0 ? 0 : n - 1;
  default:
    return ((i % n) + n) % n;
  }
}

TEST_P(PadTest, MatchesNumpyRule) {
  const PadCase &c = GetParam();
  size_t rank = c.x.size();
  Tensor x = pattern(c.x, c.dtype);
  Shape ys;
  for (size_t d = 0; d < rank; ++d)
    ys.push_back(c.x[d] + c.pads[d] + c.pads[rank + d]);
  Tensor y(ys, c.dtype);
  std::vector<int64_t> ints = c.pads;
  ints.push_back(c.mode);
  ASSERT_EQ(run(cleave_cpu_pad, {x.desc()}, {y.desc()}, ints, {2.0}), 0)
      << ctx.error;
  Tensor two = c.dtype == CLEAVE_F32
                   ? Tensor::f32({1}, {2.0f})
                   : Tensor::of<int32_t>({1}, CLEAVE_I32, {2});
  expectBytes(y, reference(
                     x, ys,
                     [&](const Shape &o) {
                       Shape in(rank);
                       for (size_t d = 0; d < rank; ++d) {
                         in[d] = padSource(o[d] - c.pads[d], c.x[d], c.mode);
                         if (in[d] < 0)
                           return int64_t(-1);
                       }
                       return flatOf(in, c.x);
                     },
                     two.bytes.data()));
}

INSTANTIATE_TEST_SUITE_P(
    Modes, PadTest,
    ::testing::Values(PadCase{{3, 4}, {1, 2, 2, 1}, 0, CLEAVE_F32},
                      PadCase{{3, 4}, {2, 3, 2, 3}, 1, CLEAVE_F32},
                      PadCase{{3, 4}, {2, 3, 4, 1}, 2, CLEAVE_I32},
                      PadCase{{3, 4}, {2, 5, 4, 1}, 3, CLEAVE_F32},
                      PadCase{{2, 3, 4}, {0, 1, 0, 1, 0, 2}, 0, CLEAVE_I32},
                      PadCase{{2, 3, 4}, {1, 0, 2, 0, 2, 1}, 1, CLEAVE_F32}));

TEST_F(DataMovementTest, PadValueTakesTheElementType) {
  Tensor x({1}, CLEAVE_F16), y({3}, CLEAVE_F16);
  ASSERT_EQ(run(cleave_cpu_pad, {x.desc()}, {y.desc()}, {1, 1, 0}, {1.5}), 0);
  EXPECT_EQ(y.vecOf<uint16_t>()[0], 0x3e00); // 1.5 in IEEE half
  Tensor xb({1}, CLEAVE_BF16), yb({2}, CLEAVE_BF16);
  ASSERT_EQ(run(cleave_cpu_pad, {xb.desc()}, {yb.desc()}, {1, 0, 0}, {-2.0}),
            0);
  EXPECT_EQ(yb.vecOf<uint16_t>()[0], 0xc000);
  Tensor xl({1}, CLEAVE_I64), yl({2}, CLEAVE_I64);
  ASSERT_EQ(run(cleave_cpu_pad, {xl.desc()}, {yl.desc()}, {0, 1, 0}, {-7.0}),
            0);
  EXPECT_EQ(yl.vecOf<int64_t>()[1], -7);
}

TEST_F(DataMovementTest, PadRejectsBadArguments) {
  Tensor x({3, 4}), y({3, 4});
  expectFailure(run(cleave_cpu_pad, {x.desc()}, {y.desc()}, {0, 0, 0, 0, 4}),
                "pad", "unknown mode 4");
  expectFailure(run(cleave_cpu_pad, {x.desc()}, {y.desc()}, {-1, 0, 1, 0, 0}),
                "pad", "non-negative");
  Tensor e({0, 4}), ey({2, 4});
  expectFailure(run(cleave_cpu_pad, {e.desc()}, {ey.desc()}, {1, 0, 1, 0, 2}),
                "pad", "only constant mode");
}

//===----------------------------------------------------------------------===//
// Tile, expand, copy
//===----------------------------------------------------------------------===//

TEST_F(DataMovementTest, TileRepeatsEveryDimension) {
  Tensor x = pattern({2, 3, 2}, CLEAVE_U8);
  Shape ys = {4, 3, 6};
  Tensor y(ys, CLEAVE_U8);
  ASSERT_EQ(run(cleave_cpu_tile, {x.desc()}, {y.desc()}), 0);
  expectBytes(y, reference(x, ys, [&](const Shape &o) {
                return flatOf({o[0] % 2, o[1], o[2] % 2}, {2, 3, 2});
              }));
  Tensor bad({5, 3, 2}, CLEAVE_U8);
  expectFailure(run(cleave_cpu_tile, {x.desc()}, {bad.desc()}), "tile",
                "not a multiple");
}

TEST_F(DataMovementTest, ExpandBroadcastsLikeNumpy) {
  Tensor x = pattern({3, 1}, CLEAVE_BOOL);
  Shape ys = {2, 3, 4};
  Tensor y(ys, CLEAVE_BOOL);
  ASSERT_EQ(run(cleave_cpu_expand, {x.desc()}, {y.desc()}), 0);
  expectBytes(y, reference(x, ys, [&](const Shape &o) { return o[1]; }));
  Tensor xr = pattern({1, 5}, CLEAVE_F32);
  Tensor yr({3, 5});
  ASSERT_EQ(run(cleave_cpu_expand, {xr.desc()}, {yr.desc()}), 0);
  expectBytes(yr, reference(xr, {3, 5}, [&](const Shape &o) { return o[1]; }));
  Tensor bad({2, 3, 4}, CLEAVE_BOOL), wrong = pattern({2, 1}, CLEAVE_BOOL);
  expectFailure(run(cleave_cpu_expand, {wrong.desc()}, {bad.desc()}), "expand",
                "does not broadcast");
}

TEST_F(DataMovementTest, CopyMovesBytes) {
  Tensor x = pattern({2, 6}, CLEAVE_F32), y({3, 4});
  ASSERT_EQ(run(cleave_cpu_copy, {x.desc()}, {y.desc()}), 0);
  EXPECT_EQ(elements(y), elements(x));
  Tensor small({3, 3});
  expectFailure(run(cleave_cpu_copy, {x.desc()}, {small.desc()}), "copy",
                "X has 48 bytes, Y 36");
}

} // namespace
