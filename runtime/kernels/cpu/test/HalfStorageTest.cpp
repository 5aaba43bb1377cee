//===- HalfStorageTest.cpp - the bits of host half-precision tensors ------===//
//
// Host programs store bfloat16 and float16 elements as their bits
// (cl::bfloat16, cl::float16 of Scalar.h). Storing a float and loading it
// back must give exactly what a fused loop's cast computes (cl::round_bf16,
// cl::round_f16, which low-precision-casts.py checks against numpy), and
// every stored pattern must load as the number it encodes.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Scalar.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace {

uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return bits;
}

/// Random bit patterns (every binade, NaNs and infinities included), and
/// the ties and overflow boundaries of both formats.
std::vector<float> samples() {
  std::vector<float> values = {
      0.0f,           -0.0f,           65504.0f,     65519.0f,
      65520.0f,       -65520.0f,       5.96e-8f,     2.98e-8f,
      1.0f + 0x1p-8f, 1.0f + 0x1p-11f, 3.3895313e38f};
  std::mt19937 rng(3);
  for (int i = 0; i < 1 << 20; ++i) {
    uint32_t bits = rng();
    float x;
    std::memcpy(&x, &bits, 4);
    values.push_back(x);
  }
  return values;
}

TEST(HalfStorage, StoredBFloat16LoadsAsTheRoundedFloat) {
  for (float x : samples()) {
    float loaded = static_cast<float>(cl::bfloat16(x));
    if (x != x) {
      EXPECT_NE(loaded, loaded) << bitsOf(x);
      continue;
    }
    ASSERT_EQ(bitsOf(loaded), bitsOf(cl::round_bf16(x))) << x;
  }
}

TEST(HalfStorage, StoredFloat16LoadsAsTheRoundedFloat) {
  for (float x : samples()) {
    float loaded = static_cast<float>(cl::float16(x));
    if (x != x) {
      EXPECT_NE(loaded, loaded) << bitsOf(x);
      continue;
    }
    ASSERT_EQ(bitsOf(loaded), bitsOf(cl::round_f16(x))) << x;
  }
}

TEST(HalfStorage, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    auto pattern = static_cast<uint16_t>(bits);
    float bf16 = cl::bfloat16_value(pattern);
    if (bf16 == bf16)
      ASSERT_EQ(cl::bfloat16_bits(bf16), pattern) << bits;
    float f16 = cl::float16_value(pattern);
    if (f16 == f16)
      ASSERT_EQ(cl::float16_bits(f16), pattern) << bits;
    else
      // A float16 NaN has the all-ones exponent and a nonzero mantissa.
      ASSERT_TRUE((pattern & 0x7c00u) == 0x7c00u && (pattern & 0x3ffu) != 0);
  }
}

} // namespace
