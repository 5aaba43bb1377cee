//===- IndexTest.cpp - gathers, scatters, one-hot and trilu ---------------===//
//
// Expected values are written out by hand from the ONNX definitions (small
// cases whose every element is checked), and every index check is tested:
// an index out of range fails the kernel with its value, position and
// range, and a scatter that fails leaves its output untouched.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

using namespace cleave::test;

namespace {

class IndexTest : public KernelTest {};

/// 0, 1, 2, ... as float32.
Tensor iota(Shape shape) {
  Tensor t(std::move(shape));
  float v = 0;
  for (float &x : t.values())
    x = v++;
  return t;
}

Tensor i64(Shape shape, std::vector<int64_t> values) {
  return Tensor::of<int64_t>(std::move(shape), CLEAVE_I64, std::move(values));
}

Tensor filled(Shape shape, float value) {
  Tensor t(std::move(shape));
  for (float &x : t.values())
    x = value;
  return t;
}

//===----------------------------------------------------------------------===//
// gather_nd
//===----------------------------------------------------------------------===//

TEST_F(IndexTest, GatherNDSlicesAndElements) {
  Tensor data = iota({2, 3, 4});
  // Tuples of two select rows (slices of 4); a negative index counts from
  // the end.
  Tensor rows = i64({2, 2}, {1, -1, 0, 1});
  Tensor y({2, 4});
  ASSERT_EQ(
      run(cleave_cpu_gather_nd, {data.desc(), rows.desc()}, {y.desc()}, {0}),
      0);
  expectClose(y.vec(), {20, 21, 22, 23, 4, 5, 6, 7});
  // Full tuples select elements, with int32 indices.
  Tensor elems =
      Tensor::of<int32_t>({3, 3}, CLEAVE_I32, {0, 0, 0, 1, 2, 3, -1, -3, -4});
  Tensor e({3});
  ASSERT_EQ(
      run(cleave_cpu_gather_nd, {data.desc(), elems.desc()}, {e.desc()}, {0}),
      0);
  expectClose(e.vec(), {0, 23, 12});
}

TEST_F(IndexTest, GatherNDBatchDims) {
  // Batch b reads row indices[b][j] of data[b].
  Tensor data = iota({2, 3, 2});
  Tensor idx = i64({2, 2, 1}, {2, 0, -1, 1});
  Tensor y({2, 2, 2});
  ASSERT_EQ(
      run(cleave_cpu_gather_nd, {data.desc(), idx.desc()}, {y.desc()}, {1}), 0);
  expectClose(y.vec(), {4, 5, 0, 1, 10, 11, 8, 9});
}

TEST_F(IndexTest, GatherNDRejectsBadIndicesAndShapes) {
  Tensor data = iota({2, 3, 4});
  Tensor idx = i64({2, 2}, {1, 2, 0, 3});
  Tensor y({2, 4});
  expectFailure(
      run(cleave_cpu_gather_nd, {data.desc(), idx.desc()}, {y.desc()}, {0}),
      "gather_nd",
      "index 3 (at position 3 of indices) is out of range [-3, 3) for "
      "dimension 1 of data");
  Tensor low = i64({2, 2}, {-3, 0, 0, 0});
  expectFailure(
      run(cleave_cpu_gather_nd, {data.desc(), low.desc()}, {y.desc()}, {0}),
      "gather_nd", "index -3 (at position 0 of indices)");
  Tensor wide = i64({1, 4}, {0, 0, 0, 0});
  Tensor w({1});
  expectFailure(
      run(cleave_cpu_gather_nd, {data.desc(), wide.desc()}, {w.desc()}, {0}),
      "gather_nd", "index tuples of 4 entries do not fit data of rank 3");
  Tensor batch = i64({3, 1}, {0, 0, 0});
  Tensor b({3, 4});
  expectFailure(
      run(cleave_cpu_gather_nd, {data.desc(), batch.desc()}, {b.desc()}, {1}),
      "gather_nd", "batch dimension 0 of indices (3) differs from data's (2)");
  Tensor floats({2, 2});
  expectFailure(
      run(cleave_cpu_gather_nd, {data.desc(), floats.desc()}, {y.desc()}, {0}),
      "gather_nd", "int64 or int32 expected");
}

//===----------------------------------------------------------------------===//
// scatter_nd
//===----------------------------------------------------------------------===//

TEST_F(IndexTest, ScatterNDAppliesTuplesInOrder) {
  Tensor data = filled({4, 2}, 2);
  Tensor idx = i64({3, 1}, {1, -3, 3});
  Tensor upd = Tensor::f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor y({4, 2});
  struct Case {
    int64_t reduction;
    std::vector<float> expected;
  };
  // Rows 1 and -3 are one row: without a reduction the later write wins;
  // with one both combine with data's 2 in order.
  for (const Case &c :
       std::vector<Case>{{CLEAVE_SCATTER_NONE, {2, 2, 3, 4, 2, 2, 5, 6}},
                         {CLEAVE_SCATTER_ADD, {2, 2, 6, 8, 2, 2, 7, 8}},
                         {CLEAVE_SCATTER_MUL, {2, 2, 6, 16, 2, 2, 10, 12}},
                         {CLEAVE_SCATTER_MAX, {2, 2, 3, 4, 2, 2, 5, 6}},
                         {CLEAVE_SCATTER_MIN, {2, 2, 1, 2, 2, 2, 2, 2}}}) {
    ASSERT_EQ(run(cleave_cpu_scatter_nd, {data.desc(), idx.desc(), upd.desc()},
                  {y.desc()}, {c.reduction}),
              0);
    expectClose(y.vec(), c.expected);
  }
  // In place: data is Y.
  ASSERT_EQ(run(cleave_cpu_scatter_nd, {data.desc(), idx.desc(), upd.desc()},
                {data.desc()}, {CLEAVE_SCATTER_ADD}),
            0);
  expectClose(data.vec(), {2, 2, 6, 8, 2, 2, 7, 8});
}

TEST_F(IndexTest, ScatterNDBooleanAndIntegerReductions) {
  Tensor data = Tensor::of<uint8_t>({3}, CLEAVE_BOOL, {0, 1, 1});
  Tensor idx = i64({3, 1}, {0, 1, 0});
  Tensor upd = Tensor::of<uint8_t>({3}, CLEAVE_BOOL, {1, 0, 0});
  Tensor y({3}, CLEAVE_BOOL);
  // add is `or`, mul is `and`.
  ASSERT_EQ(run(cleave_cpu_scatter_nd, {data.desc(), idx.desc(), upd.desc()},
                {y.desc()}, {CLEAVE_SCATTER_ADD}),
            0);
  EXPECT_EQ(y.vecOf<uint8_t>(), (std::vector<uint8_t>{1, 1, 1}));
  ASSERT_EQ(run(cleave_cpu_scatter_nd, {data.desc(), idx.desc(), upd.desc()},
                {y.desc()}, {CLEAVE_SCATTER_MUL}),
            0);
  EXPECT_EQ(y.vecOf<uint8_t>(), (std::vector<uint8_t>{0, 0, 1}));
  Tensor ints = Tensor::of<int32_t>({2}, CLEAVE_I32, {5, -7});
  Tensor iupd = Tensor::of<int32_t>({3}, CLEAVE_I32, {3, 9, -1});
  Tensor iy({2}, CLEAVE_I32);
  ASSERT_EQ(run(cleave_cpu_scatter_nd, {ints.desc(), idx.desc(), iupd.desc()},
                {iy.desc()}, {CLEAVE_SCATTER_MUL}),
            0);
  EXPECT_EQ(iy.vecOf<int32_t>(), (std::vector<int32_t>{-15, -63}));
}

TEST_F(IndexTest, ScatterNDFailsBeforeWriting) {
  Tensor data = filled({4, 2}, 2);
  Tensor idx = i64({3, 1}, {0, 1, 4});
  Tensor upd = filled({3, 2}, 9);
  Tensor y = filled({4, 2}, -1);
  expectFailure(run(cleave_cpu_scatter_nd,
                    {data.desc(), idx.desc(), upd.desc()}, {y.desc()},
                    {CLEAVE_SCATTER_NONE}),
                "scatter_nd",
                "index 4 (at position 2 of indices) is out of range [-4, 4) "
                "for dimension 0 of data");
  expectClose(y.vec(), std::vector<float>(8, -1));
  Tensor good = i64({3, 1}, {0, 1, 2});
  expectFailure(run(cleave_cpu_scatter_nd,
                    {data.desc(), good.desc(), upd.desc()}, {y.desc()}, {7}),
                "scatter_nd", "unknown reduction 7");
  Tensor short_ = filled({2, 2}, 9);
  expectFailure(run(cleave_cpu_scatter_nd,
                    {data.desc(), good.desc(), short_.desc()}, {y.desc()},
                    {CLEAVE_SCATTER_NONE}),
                "scatter_nd", "updates has 4 elements, expected 6");
}

//===----------------------------------------------------------------------===//
// gather_elements and scatter_elements
//===----------------------------------------------------------------------===//

TEST_F(IndexTest, GatherElementsAlongEachAxis) {
  Tensor data = iota({3, 3});
  // ONNX's examples: axis 1, then axis 0 with fewer rows than data.
  Tensor cols = i64({2, 2}, {0, 0, 1, 0});
  Tensor y({2, 2});
  ASSERT_EQ(run(cleave_cpu_gather_elements, {data.desc(), cols.desc()},
                {y.desc()}, {1}),
            0);
  expectClose(y.vec(), {0, 0, 4, 3});
  Tensor rows = i64({2, 3}, {1, 2, 0, 2, 0, -3});
  Tensor r({2, 3});
  ASSERT_EQ(run(cleave_cpu_gather_elements, {data.desc(), rows.desc()},
                {r.desc()}, {0}),
            0);
  expectClose(r.vec(), {3, 7, 2, 6, 1, 2});
}

TEST_F(IndexTest, GatherElementsRejectsBadIndices) {
  Tensor data = iota({3, 3});
  Tensor idx = i64({2, 2}, {0, 0, 1, -4});
  Tensor y({2, 2});
  expectFailure(run(cleave_cpu_gather_elements, {data.desc(), idx.desc()},
                    {y.desc()}, {1}),
                "gather_elements",
                "index -4 (at position 3 of indices) is out of range [-3, 3) "
                "for dimension 1 of data");
  Tensor tall = i64({4, 1}, {0, 0, 0, 0});
  Tensor t({4, 1});
  expectFailure(run(cleave_cpu_gather_elements, {data.desc(), tall.desc()},
                    {t.desc()}, {1}),
                "gather_elements", "dimension 0 of indices (4) exceeds");
}

TEST_F(IndexTest, ScatterElementsReductions) {
  Tensor data = filled({2, 3}, 1);
  // Row 0 gets two updates at column 1; row 1 one at column 2 (-1).
  Tensor idx = i64({2, 2}, {1, 1, -1, 0});
  Tensor upd = Tensor::f32({2, 2}, {2, 3, 4, 5});
  Tensor y({2, 3});
  struct Case {
    int64_t reduction;
    std::vector<float> expected;
  };
  for (const Case &c :
       std::vector<Case>{{CLEAVE_SCATTER_NONE, {1, 3, 1, 5, 1, 4}},
                         {CLEAVE_SCATTER_ADD, {1, 6, 1, 6, 1, 5}},
                         {CLEAVE_SCATTER_MUL, {1, 6, 1, 5, 1, 4}},
                         {CLEAVE_SCATTER_MAX, {1, 3, 1, 5, 1, 4}},
                         {CLEAVE_SCATTER_MIN, {1, 1, 1, 1, 1, 1}}}) {
    ASSERT_EQ(run(cleave_cpu_scatter_elements,
                  {data.desc(), idx.desc(), upd.desc()}, {y.desc()},
                  {1, c.reduction}),
              0);
    expectClose(y.vec(), c.expected);
  }
}

TEST_F(IndexTest, ScatterElementsFailsBeforeWriting) {
  Tensor data = filled({2, 3}, 1);
  Tensor idx = i64({2, 2}, {1, 3, 0, 0});
  Tensor upd = filled({2, 2}, 9);
  Tensor y = filled({2, 3}, -1);
  expectFailure(run(cleave_cpu_scatter_elements,
                    {data.desc(), idx.desc(), upd.desc()}, {y.desc()},
                    {1, CLEAVE_SCATTER_ADD}),
                "scatter_elements",
                "index 3 (at position 1 of indices) is out of range [-3, 3) "
                "for dimension 1 of data");
  expectClose(y.vec(), std::vector<float>(6, -1));
}

//===----------------------------------------------------------------------===//
// one_hot and trilu
//===----------------------------------------------------------------------===//

TEST_F(IndexTest, OneHotAtEachAxis) {
  // -1 counts from depth; 3 and -4 are outside [-3, 3): all off.
  Tensor idx = i64({4}, {0, -1, 3, -4});
  Tensor values = Tensor::f32({2}, {-1, 7});
  Tensor last({4, 3});
  ASSERT_EQ(
      run(cleave_cpu_one_hot, {idx.desc(), values.desc()}, {last.desc()}, {1}),
      0);
  expectClose(last.vec(), {7, -1, -1, -1, -1, 7, -1, -1, -1, -1, -1, -1});
  Tensor first({3, 4});
  ASSERT_EQ(
      run(cleave_cpu_one_hot, {idx.desc(), values.desc()}, {first.desc()}, {0}),
      0);
  expectClose(first.vec(), {7, -1, -1, -1, -1, -1, -1, -1, -1, 7, -1, -1});
  Tensor small = Tensor::of<int32_t>({2}, CLEAVE_I32, {1, 0});
  Tensor ivalues = Tensor::of<int64_t>({2}, CLEAVE_I64, {0, 1});
  Tensor iy({2, 2}, CLEAVE_I64);
  ASSERT_EQ(
      run(cleave_cpu_one_hot, {small.desc(), ivalues.desc()}, {iy.desc()}, {1}),
      0);
  EXPECT_EQ(iy.vecOf<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
  Tensor three = Tensor::f32({3}, {0, 1, 2});
  expectFailure(
      run(cleave_cpu_one_hot, {idx.desc(), three.desc()}, {last.desc()}, {1}),
      "one_hot", "values have 3 elements; 2 expected");
}

TEST_F(IndexTest, TriluKeepsTriangles) {
  Tensor x = iota({2, 3, 3});
  Tensor y({2, 3, 3});
  ASSERT_EQ(run(cleave_cpu_trilu, {x.desc()}, {y.desc()}, {0, 1}), 0);
  expectClose(y.vec(), {0, 1, 2, 0, 4, 5, 0, 0, 8,        //
                        9, 10, 11, 0, 13, 14, 0, 0, 17}); //
  ASSERT_EQ(run(cleave_cpu_trilu, {x.desc()}, {y.desc()}, {-1, 0}), 0);
  expectClose(y.vec(), {0, 0, 0, 3, 0, 0, 6, 7, 0, //
                        0, 0, 0, 12, 0, 0, 15, 16, 0});
  // k past the matrix keeps all or nothing; any element type.
  Tensor ints = Tensor::of<int16_t>({2, 2}, CLEAVE_I16, {1, 2, 3, 4});
  Tensor iy({2, 2}, CLEAVE_I16);
  ASSERT_EQ(run(cleave_cpu_trilu, {ints.desc()}, {iy.desc()}, {5, 0}), 0);
  EXPECT_EQ(iy.vecOf<int16_t>(), (std::vector<int16_t>{1, 2, 3, 4}));
  ASSERT_EQ(run(cleave_cpu_trilu, {ints.desc()}, {iy.desc()}, {5, 1}), 0);
  EXPECT_EQ(iy.vecOf<int16_t>(), (std::vector<int16_t>{0, 0, 0, 0}));
}

} // namespace
