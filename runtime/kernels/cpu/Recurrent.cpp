//===- Recurrent.cpp - RNN, GRU and LSTM layers ---------------------------===//
//
// ONNX's recurrent layers in layout 0 (seq x batch x features). The input
// projection of every time step is one sgemm (X W^T, seq * batch rows) with
// the biases that are plain sums folded in; each step then multiplies the
// previous hidden state by R^T and applies the gate equations. The two
// directions of a bidirectional layer run one after the other.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <type_traits>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace cleave::cpu;

namespace {

enum class Cell { RNN, GRU, LSTM };

/// Clips (when `clip` > 0) and applies activation `code` to v[0..n).
void activate(int64_t code, float clip, float *v, int64_t n) {
  if (clip > 0.0f)
    for (int64_t i = 0; i < n; ++i)
      v[i] = std::min(std::max(v[i], -clip), clip);
  switch (code) {
  case CLEAVE_ACTIVATION_RELU:
    for (int64_t i = 0; i < n; ++i)
      v[i] = v[i] > 0.0f ? v[i] : 0.0f;
    return;
  case CLEAVE_ACTIVATION_TANH:
    for (int64_t i = 0; i < n; ++i)
      v[i] = std::tanh(v[i]);
    return;
  case CLEAVE_ACTIVATION_SIGMOID:
    for (int64_t i = 0; i < n; ++i)
      v[i] = 1.0f / (1.0f + std::exp(-v[i]));
    return;
  case CLEAVE_ACTIVATION_SOFTSIGN:
    for (int64_t i = 0; i < n; ++i)
      v[i] = v[i] / (1.0f + std::fabs(v[i]));
    return;
  default: // CLEAVE_ACTIVATION_SOFTPLUS
    for (int64_t i = 0; i < n; ++i)
      v[i] = v[i] > 20.0f ? v[i] : std::log1p(std::exp(v[i]));
  }
}

/// The GRU state update h = (1 - z) . g(candidate) + z . h, with z the
/// first block of `gates`.
void updateGru(int64_t activation, float clip, const float *gates,
               float *candidate, float *h, int64_t hidden) {
  activate(activation, clip, candidate, hidden);
  for (int64_t j = 0; j < hidden; ++j)
    h[j] = (1.0f - gates[j]) * candidate[j] + gates[j] * h[j];
}

struct CellInfo {
  const char *kernel;
  int gates;
  int activations;
  int64_t defaults[3];
};

CellInfo cellInfo(Cell cell) {
  switch (cell) {
  case Cell::RNN:
    return {"rnn", 1, 1, {CLEAVE_ACTIVATION_TANH, 0, 0}};
  case Cell::GRU:
    return {
        "gru", 3, 2, {CLEAVE_ACTIVATION_SIGMOID, CLEAVE_ACTIVATION_TANH, 0}};
  default:
    return {"lstm",
            4,
            3,
            {CLEAVE_ACTIVATION_SIGMOID, CLEAVE_ACTIVATION_TANH,
             CLEAVE_ACTIVATION_TANH}};
  }
}

/// Checks that `t`, when present, is a float32 tensor of shape `dims`.
int32_t checkShape(CleaveContext *ctx, const char *kernel,
                   const CleaveTensor &t, const char *what,
                   std::initializer_list<int64_t> dims) {
  if (!t.data)
    return 0;
  if (checkF32(ctx, kernel, t, what))
    return 1;
  bool same = t.rank == static_cast<int32_t>(dims.size());
  int32_t d = 0;
  for (int64_t dim : dims)
    same = same && t.shape[d++] == dim;
  if (!same)
    return fail(ctx, kernel, "%s does not have the expected shape", what);
  return 0;
}

/// RNN and GRU (args::Recurrent) or LSTM (args::Lstm).
template <typename Args>
int32_t recurrent(Cell cell, CleaveContext *ctx, const Args &args) {
  constexpr bool isLstm = std::is_same_v<Args, args::Lstm>;
  const CellInfo info = cellInfo(cell);
  const char *kernel = info.kernel;
  const CleaveTensor &x = args.x(), &w = args.w(), &r = args.r();
  const int64_t direction = args.direction(), hidden = args.hiddenSize(),
                variant = args.variant();
  const int64_t numActivations = args.activations().size();
  const int64_t *activationList = args.activations().data();
  const float clip = static_cast<float>(args.clip());
  if (direction < CLEAVE_RNN_FORWARD || direction > CLEAVE_RNN_BIDIRECTIONAL)
    return fail(ctx, kernel, "unknown direction %lld", (long long)direction);
  if (checkF32(ctx, kernel, x, "X") || x.rank != 3)
    return x.rank != 3 ? fail(ctx, kernel, "X must be seq x batch x input") : 1;
  const int64_t dirs = direction == CLEAVE_RNN_BIDIRECTIONAL ? 2 : 1;
  const int64_t seq = x.shape[0], batch = x.shape[1], inputSize = x.shape[2];
  const int64_t gates = info.gates, gh = gates * hidden;
  const CleaveTensor absent{};
  auto optional = [&](const CleaveTensor *tensor) -> const CleaveTensor & {
    return tensor ? *tensor : absent;
  };
  const CleaveTensor &bias = optional(args.b()),
                     &initialH = optional(args.initialH());
  const CleaveTensor *initialCPtr = nullptr, *peepholesPtr = nullptr;
  CleaveTensor *yCPtr = nullptr;
  if constexpr (isLstm) {
    initialCPtr = args.initialC();
    peepholesPtr = args.p();
    yCPtr = &args.yC();
  }
  const CleaveTensor &initialC = optional(initialCPtr),
                     &peepholes = optional(peepholesPtr);
  if (checkShape(ctx, kernel, w, "W", {dirs, gh, inputSize}) ||
      checkShape(ctx, kernel, r, "R", {dirs, gh, hidden}) ||
      checkShape(ctx, kernel, bias, "B", {dirs, 2 * gh}) ||
      checkShape(ctx, kernel, initialH, "initial_h", {dirs, batch, hidden}) ||
      checkShape(ctx, kernel, initialC, "initial_c", {dirs, batch, hidden}) ||
      checkShape(ctx, kernel, peepholes, "P", {dirs, 3 * hidden}) ||
      checkShape(ctx, kernel, args.y(), "Y", {seq, dirs, batch, hidden}) ||
      checkShape(ctx, kernel, args.yH(), "Y_h", {dirs, batch, hidden}) ||
      (yCPtr && checkShape(ctx, kernel, *yCPtr, "Y_c", {dirs, batch, hidden})))
    return 1;
  for (int64_t i = 0; i < numActivations; ++i)
    if (activationList[i] < CLEAVE_ACTIVATION_RELU ||
        activationList[i] > CLEAVE_ACTIVATION_SOFTPLUS)
      return fail(ctx, kernel, "unknown activation code %lld",
                  (long long)activationList[i]);

  // Scratch: the input projection of all steps, the recurrent product of a
  // step, the hidden and cell states and one gate-sized temporary.
  const int64_t state = batch * hidden;
  const int64_t projected = seq * batch * gh;
  float *scratch = static_cast<float *>(cleave_rt_scratch(
      ctx, sizeof(float) * (projected + batch * gh + 3 * state)));
  if (!scratch)
    return 1;
  float *xw = scratch, *hr = xw + projected, *h = hr + batch * gh,
        *c = h + state, *tmp = c + state;
  const float *xData = static_cast<const float *>(x.data);
  float *y = static_cast<float *>(args.y().data);
  float *yh = static_cast<float *>(args.yH().data);
  float *yc = yCPtr ? static_cast<float *>(yCPtr->data) : nullptr;
  const bool linearBeforeReset = cell == Cell::GRU && variant != 0;
  const bool inputForget = cell == Cell::LSTM && variant != 0;
  const int threads = numThreads(ctx);

  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == CLEAVE_RNN_REVERSE || d == 1;
    int64_t act[3];
    for (int i = 0; i < info.activations; ++i) {
      if (numActivations >= (d + 1) * info.activations)
        act[i] = activationList[d * info.activations + i];
      else if (numActivations >= info.activations)
        act[i] = activationList[i];
      else
        act[i] = info.defaults[i];
    }
    const float *wd = static_cast<const float *>(w.data) + d * gh * inputSize;
    const float *rd = static_cast<const float *>(r.data) + d * gh * hidden;
    const float *wb = bias.data
                          ? static_cast<const float *>(bias.data) + d * 2 * gh
                          : nullptr;
    const float *rb = wb ? wb + gh : nullptr;
    const float *pd =
        peepholes.data
            ? static_cast<const float *>(peepholes.data) + d * 3 * hidden
            : nullptr;

    if (seq * batch > 0 && inputSize > 0)
      sgemm(threads, false, true, seq * batch, gh, inputSize, 1.0f, xData,
            inputSize, wd, inputSize, 0.0f, xw, gh);
    else
      std::memset(xw, 0, sizeof(float) * projected);
    if (wb) {
      // The recurrent bias of GRU's h gate with linear_before_reset is
      // multiplied by the reset gate, so it stays out of the sum.
      const int64_t foldedR = linearBeforeReset ? 2 * hidden : gh;
      for (int64_t row = 0; row < seq * batch; ++row) {
        float *line = xw + row * gh;
        for (int64_t j = 0; j < gh; ++j)
          line[j] += wb[j] + (j < foldedR ? rb[j] : 0.0f);
      }
    }
    if (initialH.data)
      std::memcpy(h, static_cast<const float *>(initialH.data) + d * state,
                  sizeof(float) * state);
    else
      std::memset(h, 0, sizeof(float) * state);
    if (initialC.data)
      std::memcpy(c, static_cast<const float *>(initialC.data) + d * state,
                  sizeof(float) * state);
    else
      std::memset(c, 0, sizeof(float) * state);

    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = reverse ? seq - 1 - s : s;
      const float *xt = xw + t * batch * gh;
      // GRU without linear_before_reset multiplies R_h by the reset hidden
      // state, so only the z and r blocks are multiplied here.
      const int64_t hrCols =
          cell == Cell::GRU && !linearBeforeReset ? 2 * hidden : gh;
      if (hidden > 0 && batch > 0)
        sgemm(threads, false, true, batch, hrCols, hidden, 1.0f, h, hidden, rd,
              hidden, 0.0f, hr, hrCols);

      for (int64_t b = 0; b < batch; ++b) {
        const float *xg = xt + b * gh;
        float *rg = hr + b * hrCols;
        float *hb = h + b * hidden, *cb = c + b * hidden;
        switch (cell) {
        case Cell::RNN:
          for (int64_t j = 0; j < hidden; ++j)
            hb[j] = xg[j] + rg[j];
          activate(act[0], clip, hb, hidden);
          break;
        case Cell::GRU: {
          for (int64_t j = 0; j < 2 * hidden; ++j)
            rg[j] += xg[j];
          activate(act[0], clip, rg, 2 * hidden);
          const float *reset = rg + hidden;
          float *candidate = tmp + b * hidden;
          if (linearBeforeReset) {
            const float *rh = rg + 2 * hidden;
            const float *rbh = rb ? rb + 2 * hidden : nullptr;
            for (int64_t j = 0; j < hidden; ++j)
              candidate[j] = xg[2 * hidden + j] +
                             reset[j] * (rh[j] + (rbh ? rbh[j] : 0.0f));
            updateGru(act[1], clip, rg, candidate, hb, hidden);
          } else {
            // The reset hidden state, multiplied by R_h^T below.
            for (int64_t j = 0; j < hidden; ++j)
              candidate[j] = reset[j] * hb[j];
          }
          break;
        }
        case Cell::LSTM: {
          float *gi = rg, *go = rg + hidden, *gf = rg + 2 * hidden,
                *gc = rg + 3 * hidden;
          for (int64_t j = 0; j < gh; ++j)
            rg[j] += xg[j];
          if (pd)
            for (int64_t j = 0; j < hidden; ++j) {
              gi[j] += pd[j] * cb[j];
              gf[j] += pd[2 * hidden + j] * cb[j];
            }
          activate(act[0], clip, gi, hidden);
          if (inputForget)
            for (int64_t j = 0; j < hidden; ++j)
              gf[j] = 1.0f - gi[j];
          else
            activate(act[0], clip, gf, hidden);
          activate(act[1], clip, gc, hidden);
          for (int64_t j = 0; j < hidden; ++j)
            cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
          if (pd)
            for (int64_t j = 0; j < hidden; ++j)
              go[j] += pd[hidden + j] * cb[j];
          activate(act[0], clip, go, hidden);
          float *cellOut = tmp + b * hidden;
          std::memcpy(cellOut, cb, sizeof(float) * hidden);
          activate(act[2], 0.0f, cellOut, hidden);
          for (int64_t j = 0; j < hidden; ++j)
            hb[j] = go[j] * cellOut[j];
          break;
        }
        }
      }

      if (cell == Cell::GRU && !linearBeforeReset) {
        // (r . h) R_h^T for the whole batch; c is free in a GRU.
        float *resetProduct = c;
        if (hidden > 0 && batch > 0)
          sgemm(threads, false, true, batch, hidden, hidden, 1.0f, tmp, hidden,
                rd + 2 * hidden * hidden, hidden, 0.0f, resetProduct, hidden);
        for (int64_t b = 0; b < batch; ++b) {
          const float *xh = xt + b * gh + 2 * hidden;
          float *candidate = tmp + b * hidden;
          const float *product = resetProduct + b * hidden;
          for (int64_t j = 0; j < hidden; ++j)
            candidate[j] = xh[j] + product[j];
          updateGru(act[1], clip, hr + b * hrCols, candidate, h + b * hidden,
                    hidden);
        }
      }
      if (y)
        std::memcpy(y + (t * dirs + d) * state, h, sizeof(float) * state);
    }
    if (yh)
      std::memcpy(yh + d * state, h, sizeof(float) * state);
    if (yc)
      std::memcpy(yc + d * state, c, sizeof(float) * state);
  }
  return 0;
}

} // namespace

int32_t cleave::cpu::kernels::rnn(CleaveContext *ctx,
                                  const args::Recurrent &args) {
  return recurrent(Cell::RNN, ctx, args);
}

int32_t cleave::cpu::kernels::gru(CleaveContext *ctx,
                                  const args::Recurrent &args) {
  return recurrent(Cell::GRU, ctx, args);
}

int32_t cleave::cpu::kernels::lstm(CleaveContext *ctx, const args::Lstm &args) {
  return recurrent(Cell::LSTM, ctx, args);
}
