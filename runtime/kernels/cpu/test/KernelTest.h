//===- KernelTest.h - tensors and a context for kernel tests ------*- C++
//-*-===//
//
// Owned tensors that hand out CleaveTensor descriptors, a fixture with a
// context (two threads unless CLEAVE_TEST_THREADS says otherwise, so the
// OpenMP paths run), deterministic random data and tolerant comparisons.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_CPU_TEST_KERNELTEST_H
#define CLEAVE_KERNELS_CPU_TEST_KERNELTEST_H

#include "cleave/rt/Context.h"
#include "cleave/rt/Kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace cleave::test {

using Shape = std::vector<int64_t>;

inline int64_t count(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A tensor that owns its bytes.
class Tensor {
public:
  Tensor() = default;
  Tensor(Shape shape, int32_t dtype = CLEAVE_F32)
      : shape(std::move(shape)), dtype(dtype),
        bytes(count(this->shape) * cleave_dtype_size(dtype) + 1) {}

  static Tensor f32(Shape shape, std::vector<float> values) {
    Tensor t(std::move(shape));
    EXPECT_EQ(values.size(), static_cast<size_t>(t.size()));
    std::memcpy(t.bytes.data(), values.data(), values.size() * sizeof(float));
    return t;
  }
  template <typename T>
  static Tensor of(Shape shape, int32_t dtype, std::vector<T> values) {
    Tensor t(std::move(shape), dtype);
    EXPECT_EQ(values.size() * sizeof(T),
              static_cast<size_t>(t.size()) * cleave_dtype_size(dtype));
    std::memcpy(t.bytes.data(), values.data(), values.size() * sizeof(T));
    return t;
  }
  /// Uniform values in [lo, hi) from a fixed seed.
  static Tensor random(Shape shape, unsigned seed, float lo = -1.0f,
                       float hi = 1.0f) {
    Tensor t(std::move(shape));
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float &v : t.values())
      v = dist(gen);
    return t;
  }

  int64_t size() const { return count(shape); }
  float *f32() { return reinterpret_cast<float *>(bytes.data()); }
  const float *f32() const {
    return reinterpret_cast<const float *>(bytes.data());
  }
  template <typename T> T *as() { return reinterpret_cast<T *>(bytes.data()); }
  /// A view of the float32 elements.
  struct Values {
    float *b, *e;
    float *begin() { return b; }
    float *end() { return e; }
  };
  Values values() { return {f32(), f32() + size()}; }
  std::vector<float> vec() const { return {f32(), f32() + size()}; }
  template <typename T> std::vector<T> vecOf() const {
    const T *p = reinterpret_cast<const T *>(bytes.data());
    return {p, p + size()};
  }

  CleaveTensor desc() {
    CleaveTensor t{};
    t.data = bytes.data();
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(shape.size());
    for (size_t i = 0; i < shape.size(); ++i)
      t.shape[i] = shape[i];
    return t;
  }

  Shape shape;
  int32_t dtype = CLEAVE_F32;
  // Over-allocated by one byte so that an empty tensor has a non-null
  // pointer (null means an absent operand).
  std::vector<unsigned char> bytes;
};

/// The descriptor of an absent optional operand.
inline CleaveTensor absent() {
  CleaveTensor t{};
  t.dtype = CLEAVE_F32;
  return t;
}

class KernelTest : public ::testing::Test {
protected:
  KernelTest() {
    // Two threads unless the test run names a count, so that the OpenMP
    // paths run (and, at 1, the paths that fork no team).
    ctx.numThreads = 2;
    if (const char *threads = std::getenv("CLEAVE_TEST_THREADS"))
      ctx.numThreads = std::atoi(threads);
    // The variant of the kernels under test (cleave_rt_cpu_level); the
    // baseline unless the test run names another level.
    if (const char *level = std::getenv("CLEAVE_TEST_CPU_LEVEL"))
      ctx.cpuLevel = std::atoi(level);
  }
  ~KernelTest() override { std::free(ctx.scratch); }

  /// Runs `kernel` on descriptors of the given tensors.
  int32_t run(CleaveKernelFn kernel, std::vector<CleaveTensor> in,
              std::vector<CleaveTensor> out, std::vector<int64_t> ints = {},
              std::vector<double> floats = {}) {
    // Fields past the ones given read 0 (and the data is never null).
    ints.insert(ints.end(), 8, 0);
    floats.insert(floats.end(), 8, 0.0);
    return kernel(&ctx, in.data(), static_cast<int32_t>(in.size()), out.data(),
                  static_cast<int32_t>(out.size()), ints.data(), floats.data());
  }

  /// Expects a failure whose message contains `fragment`.
  void expectFailure(int32_t status, const char *kernel,
                     const std::string &fragment) {
    EXPECT_NE(status, 0);
    EXPECT_EQ(ctx.failedKernel, kernel);
    EXPECT_NE(ctx.error.find(fragment), std::string::npos)
        << "message: " << ctx.error;
    ctx.error.clear();
    ctx.failedKernel.clear();
  }

  CleaveContext ctx;
};

/// Expects |actual - expected| <= atol + rtol * |expected| elementwise.
inline void expectClose(const std::vector<float> &actual,
                        const std::vector<float> &expected, float atol = 1e-5f,
                        float rtol = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << "at " << i;
      continue;
    }
    ASSERT_NEAR(actual[i], expected[i], atol + rtol * std::fabs(expected[i]))
        << "at " << i;
  }
}

/// Row-major strides.
inline Shape stridesOf(const Shape &shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/// The multi-index of flat position `flat` in `shape`.
inline Shape unflatten(int64_t flat, const Shape &shape) {
  Shape index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return index;
}

} // namespace cleave::test

#endif // CLEAVE_KERNELS_CPU_TEST_KERNELTEST_H
