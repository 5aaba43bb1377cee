//===- OptimizerTest.cpp - sgd_update and adam_update -----------*- C++ -*-===//
//
// A step whose gradient scale is not finite (loss scaling found an inf or
// a NaN in the gradients) writes nothing: the parameter, the optimizer
// state and the step count keep their bytes; the next finite step updates
// them as the first would have. SGD without momentum has no buffer (none
// passed, or a null one) and computes what it did with an unread one.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

#include <limits>

using namespace cleave::test;

namespace {

class OptimizerTest : public KernelTest {
protected:
  /// The bytes of `tensors`, to compare before and after a skipped step.
  static std::vector<std::vector<unsigned char>>
  snapshot(std::initializer_list<const Tensor *> tensors) {
    std::vector<std::vector<unsigned char>> bytes;
    for (const Tensor *t : tensors)
      bytes.push_back(t->bytes);
    return bytes;
  }
};

const float kSkips[] = {std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN()};

TEST_F(OptimizerTest, SgdSkipsAStepOfNonFiniteScale) {
  Tensor p = Tensor::random({40}, 1), buffer = Tensor::random({40}, 2);
  Tensor gradient = Tensor::random({40}, 3);
  gradient.f32()[7] = std::numeric_limits<float>::infinity();
  Tensor step = Tensor::f32({}, {5.0f});
  auto before = snapshot({&p, &buffer, &step});
  for (float skip : kSkips) {
    Tensor scale = Tensor::f32({}, {skip});
    ASSERT_EQ(run(cleave_cpu_sgd_update, {gradient.desc(), scale.desc()},
                  {p.desc(), step.desc(), buffer.desc()}, {0, 0, 0},
                  {0.1, 0.9, 0.0, 0.01, 0.0}),
              0)
        << ctx.error;
    EXPECT_EQ(snapshot({&p, &buffer, &step}), before) << "scale " << skip;
  }
  // A finite scale updates: momentum 0.9 on the buffer, weight decay 0.01.
  gradient.f32()[7] = 0.5f;
  Tensor scale = Tensor::f32({}, {0.25f});
  std::vector<float> p0 = p.vec(), b0 = buffer.vec(), g = gradient.vec();
  ASSERT_EQ(run(cleave_cpu_sgd_update, {gradient.desc(), scale.desc()},
                {p.desc(), step.desc(), buffer.desc()}, {0, 0, 0},
                {0.1, 0.9, 0.0, 0.01, 0.0}),
            0);
  std::vector<float> want(40);
  for (int i = 0; i < 40; ++i)
    want[i] = p0[i] - 0.1f * (0.9f * b0[i] + (g[i] * 0.25f + 0.01f * p0[i]));
  expectClose(p.vec(), want);
  EXPECT_EQ(step.vec(), std::vector<float>{6.0f});
}

/// Plain SGD of a parameter and a step count alone, and with a null
/// placeholder for the buffer, gives the bytes of the same step with a
/// buffer (which momentum 0 never reads or writes), and PyTorch's formula.
TEST_F(OptimizerTest, SgdWithoutMomentumHasNoBuffer) {
  Tensor gradient = Tensor::random({70000}, 8), scale = Tensor::f32({}, {0.5f});
  Tensor p0 = Tensor::random({70000}, 9);
  Tensor withBuffer = p0, alone = p0, placeholder = p0;
  Tensor buffer = Tensor::random({70000}, 10);
  const std::vector<float> b0 = buffer.vec();
  Tensor stepWith = Tensor::f32({}, {0.0f}), stepAlone = stepWith,
         stepPlaceholder = stepWith;
  const std::vector<double> floats = {0.1, 0.0, 0.0, 0.01, 0.0};
  for (int s = 0; s < 3; ++s) {
    ASSERT_EQ(run(cleave_cpu_sgd_update, {gradient.desc(), scale.desc()},
                  {withBuffer.desc(), stepWith.desc(), buffer.desc()},
                  {0, 0, 0}, floats),
              0)
        << ctx.error;
    ASSERT_EQ(run(cleave_cpu_sgd_update, {gradient.desc(), scale.desc()},
                  {alone.desc(), stepAlone.desc()}, {0, 0, 0}, floats),
              0)
        << ctx.error;
    ASSERT_EQ(run(cleave_cpu_sgd_update, {gradient.desc(), scale.desc()},
                  {placeholder.desc(),
                   stepPlaceholder.desc(),
                   {nullptr, CLEAVE_F32, 0, {0}}},
                  {0, 0, 0}, floats),
              0)
        << ctx.error;
  }
  EXPECT_EQ(alone.bytes, withBuffer.bytes);
  EXPECT_EQ(placeholder.bytes, withBuffer.bytes);
  EXPECT_EQ(buffer.vec(), b0);
  EXPECT_EQ(stepAlone.vec(), std::vector<float>{3.0f});
  EXPECT_EQ(stepPlaceholder.vec(), std::vector<float>{3.0f});
  std::vector<float> want = p0.vec(), g = gradient.vec();
  for (int s = 0; s < 3; ++s)
    for (size_t i = 0; i < want.size(); ++i)
      want[i] -= 0.1f * (g[i] * 0.5f + 0.01f * want[i]);
  expectClose(alone.vec(), want);

  // A skipped step writes neither the parameter nor the count.
  Tensor nan = Tensor::f32({}, {std::numeric_limits<float>::quiet_NaN()});
  std::vector<unsigned char> before = alone.bytes;
  ASSERT_EQ(run(cleave_cpu_sgd_update, {gradient.desc(), nan.desc()},
                {alone.desc(), stepAlone.desc()}, {0, 0, 0}, floats),
            0);
  EXPECT_EQ(alone.bytes, before);
  EXPECT_EQ(stepAlone.vec(), std::vector<float>{3.0f});
}

/// Momentum without a buffer is refused, naming the momentum.
TEST_F(OptimizerTest, SgdMomentumNeedsABuffer) {
  Tensor gradient = Tensor::random({8}, 11), p = Tensor::random({8}, 12);
  Tensor scale = Tensor::f32({}, {1.0f}), step = Tensor::f32({}, {0.0f});
  std::vector<unsigned char> before = p.bytes;
  expectFailure(run(cleave_cpu_sgd_update, {gradient.desc(), scale.desc()},
                    {p.desc(), step.desc()}, {0, 0, 0},
                    {0.1, 0.9, 0.0, 0.0, 0.0}),
                "sgd_update", "a momentum of 0.9 needs a momentum buffer");
  EXPECT_EQ(p.bytes, before);
  EXPECT_EQ(step.vec(), std::vector<float>{0.0f});
}

TEST_F(OptimizerTest, AdamSkipsAStepOfNonFiniteScale) {
  Tensor p = Tensor::random({40}, 4), first = Tensor::random({40}, 5);
  Tensor second = Tensor::random({40}, 6, 0.0f, 1.0f);
  Tensor gradient = Tensor::random({40}, 7);
  gradient.f32()[3] = std::numeric_limits<float>::quiet_NaN();
  Tensor step = Tensor::f32({}, {2.0f});
  auto before = snapshot({&p, &first, &second, &step});
  for (float skip : kSkips)
    for (int decoupled : {0, 1}) {
      Tensor scale = Tensor::f32({}, {skip});
      ASSERT_EQ(run(cleave_cpu_adam_update, {gradient.desc(), scale.desc()},
                    {p.desc(), first.desc(), second.desc(), step.desc()},
                    {decoupled, 0, 0}, {1e-3, 0.9, 0.999, 1e-8, 0.01, 0.0}),
                0)
          << ctx.error;
      EXPECT_EQ(snapshot({&p, &first, &second, &step}), before)
          << "scale " << skip << ", decoupled " << decoupled;
    }
  gradient.f32()[3] = 0.5f;
  Tensor scale = Tensor::f32({}, {1.0f});
  ASSERT_EQ(run(cleave_cpu_adam_update, {gradient.desc(), scale.desc()},
                {p.desc(), first.desc(), second.desc(), step.desc()}, {1, 0, 0},
                {1e-3, 0.9, 0.999, 1e-8, 0.01, 0.0}),
            0);
  EXPECT_EQ(step.vec(), std::vector<float>{3.0f});
  EXPECT_NE(snapshot({&p, &first, &second}),
            std::vector<std::vector<unsigned char>>(before.begin(),
                                                    before.end() - 1));
}

} // namespace
