//===- Epilogue.cpp - a kernel's bias, residual and activation ------------===//
//
// One loop per activation, so that each vectorises, over an input that the
// caller composes (the output alone, or plus a bias, or plus a residual).
//
//===----------------------------------------------------------------------===//

#include "Epilogue.h"

#include "cleave/rt/Scalar.h"

#include <algorithm>

using namespace cleave::cpu;

namespace {

/// y[i] = epilogue(input(i, y[i])) over y[0..n).
template <typename Input>
void applyEach(const Epilogue &epilogue, float *y, int64_t n,
               const Input &input) {
  switch (epilogue.kind) {
  case CLEAVE_EPILOGUE_RELU:
    for (int64_t i = 0; i < n; ++i)
      y[i] = cl::relu(input(i, y[i]));
    break;
  case CLEAVE_EPILOGUE_CLIP: {
    const float lo = epilogue.min, hi = epilogue.max;
    for (int64_t i = 0; i < n; ++i) {
      float v = input(i, y[i]);
      v = v != v ? v : (lo > v ? lo : v);
      y[i] = v != v ? v : (hi < v ? hi : v);
    }
    break;
  }
  case CLEAVE_EPILOGUE_SILU:
    for (int64_t i = 0; i < n; ++i) {
      const float v = input(i, y[i]);
      y[i] = v * cl::sigmoid(v);
    }
    break;
  case CLEAVE_EPILOGUE_GELU:
    for (int64_t i = 0; i < n; ++i)
      y[i] = cl::gelu_erf(input(i, y[i]));
    break;
  case CLEAVE_EPILOGUE_GELU_TANH:
    for (int64_t i = 0; i < n; ++i)
      y[i] = cl::gelu_tanh(input(i, y[i]));
    break;
  default:
    for (int64_t i = 0; i < n; ++i)
      y[i] = input(i, y[i]);
  }
}

} // namespace

void cleave::cpu::applyEpilogueRun(const Epilogue &epilogue, float *y,
                                   int64_t n, const float *bias) {
  if (bias) {
    const float b = *bias;
    applyEach(epilogue, y, n, [b](int64_t, float v) { return v + b; });
  } else if (epilogue.kind != CLEAVE_EPILOGUE_NONE) {
    applyEach(epilogue, y, n, [](int64_t, float v) { return v; });
  }
}

void cleave::cpu::applyEpilogue(const Epilogue &epilogue, float *y, int64_t n,
                                int threads, const float *added) {
  if (epilogue.kind == CLEAVE_EPILOGUE_NONE && !added)
    return;
  constexpr int64_t kRun = 16384;
  parallelFor(threads, n >= 131072, (n + kRun - 1) / kRun, [&](int64_t r) {
    float *run = y + r * kRun;
    const int64_t length = std::min(kRun, n - r * kRun);
    if (added) {
      const float *other = added + r * kRun;
      applyEach(epilogue, run, length,
                [other](int64_t i, float v) { return v + other[i]; });
    } else {
      applyEach(epilogue, run, length, [](int64_t, float v) { return v; });
    }
  });
}

void cleave::cpu::applyEpilogueRows(const Epilogue &epilogue, float *y,
                                    int64_t rows, int64_t n, const float *bias,
                                    const float *added, int threads) {
  if (!bias && !added && epilogue.kind == CLEAVE_EPILOGUE_NONE)
    return;
  parallelFor(threads, rows * n >= kParallelGrain, rows, [&](int64_t r) {
    float *row = y + r * n;
    const float *other = added ? added + r * n : nullptr;
    if (bias && other)
      applyEach(epilogue, row, n, [bias, other](int64_t j, float v) {
        return (v + bias[j]) + other[j];
      });
    else if (bias)
      applyEach(epilogue, row, n,
                [bias](int64_t j, float v) { return v + bias[j]; });
    else if (other)
      applyEach(epilogue, row, n,
                [other](int64_t j, float v) { return v + other[j]; });
    else
      applyEach(epilogue, row, n, [](int64_t, float v) { return v; });
  });
}
