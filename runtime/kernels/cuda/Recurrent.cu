//===- Recurrent.cu - RNN, GRU and LSTM layers ----------------------------===//
//
// Per direction: one cuBLAS product projects the inputs of every step
// (X W^T, seq*batch rows), then each step multiplies the previous hidden
// state by R^T and a small kernel applies the gates. Correctness over
// speed: the steps are sequential launches. fp32 only.
//
// Gate order follows ONNX: GRU stacks z, r, h; LSTM stacks i, o, f, c and
// its peepholes i, o, f.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"
#include "Gemm.h"

#include "cleave/rt/Scalar.h"

#include <type_traits>

using namespace cleave::cuda;

namespace {

/// Applies activation `code` to `x` after clipping it to [-clip, clip]
/// (clip <= 0: none); ONNX clips the input of every activation.
__device__ __forceinline__ float activate(int code, float x, float clip) {
  if (clip > 0.f)
    x = fminf(fmaxf(x, -clip), clip);
  switch (code) {
  case CLEAVE_ACTIVATION_RELU:
    return cl::relu(x);
  case CLEAVE_ACTIVATION_TANH:
    return cl::tanh(x);
  case CLEAVE_ACTIVATION_SIGMOID:
    return cl::sigmoid(x);
  case CLEAVE_ACTIVATION_SOFTSIGN:
    return x / (1.f + fabsf(x));
  default:
    return cl::softplus(x);
  }
}

/// What every gate kernel of one step reads and writes. Pointers into the
/// step's rows; `hiddenOut` and `y` may alias nothing else.
struct Step {
  const float *xw;    // batch x G*H: X_t W^T
  const float *hr;    // batch x G*H (GRU with reset first: 2H): H W^T
  const float *wb;    // G*H or null
  const float *rb;    // G*H or null
  const float *hPrev; // batch x H
  float *hNext;       // batch x H
  float *y;           // batch x H slice of Y, or null
  const float *cPrev; // LSTM
  float *cNext;
  const float *peep; // LSTM, 3H or null
  int64_t batch, hidden;
  int act[3];
  float clip;
  bool variant; // GRU: linear_before_reset; LSTM: input_forget
};

__device__ __forceinline__ float bias(const float *b, int64_t i) {
  return b ? b[i] : 0.f;
}

__global__ void rnnStepKernel(Step s) {
  CLEAVE_GRID_LOOP(i, s.batch * s.hidden) {
    int64_t b = i / s.hidden, j = i % s.hidden;
    float v = s.xw[b * s.hidden + j] + s.hr[b * s.hidden + j] + bias(s.wb, j) +
              bias(s.rb, j);
    float h = activate(s.act[0], v, s.clip);
    s.hNext[i] = h;
    if (s.y)
      s.y[i] = h;
  }
}

__global__ void lstmStepKernel(Step s) {
  int64_t H = s.hidden;
  CLEAVE_GRID_LOOP(i, s.batch * H) {
    int64_t b = i / H, j = i % H;
    const float *xw = s.xw + b * 4 * H, *hr = s.hr + b * 4 * H;
    auto pre = [&](int gate) {
      int64_t k = gate * H + j;
      return xw[k] + hr[k] + bias(s.wb, k) + bias(s.rb, k);
    };
    float cPrev = s.cPrev[i];
    float pi = s.peep ? s.peep[j] : 0.f, po = s.peep ? s.peep[H + j] : 0.f,
          pf = s.peep ? s.peep[2 * H + j] : 0.f;
    float gi = activate(s.act[0], pre(0) + pi * cPrev, s.clip);
    float gf =
        s.variant ? 1.f - gi : activate(s.act[0], pre(2) + pf * cPrev, s.clip);
    float gc = activate(s.act[1], pre(3), s.clip);
    float c = gf * cPrev + gi * gc;
    float go = activate(s.act[0], pre(1) + po * c, s.clip);
    float h = go * activate(s.act[2], c, s.clip);
    s.cNext[i] = c;
    s.hNext[i] = h;
    if (s.y)
      s.y[i] = h;
  }
}

/// GRU, linear_before_reset: hr holds H R^T for all three gates.
__global__ void gruLinearStepKernel(Step s) {
  int64_t H = s.hidden;
  CLEAVE_GRID_LOOP(i, s.batch * H) {
    int64_t b = i / H, j = i % H;
    const float *xw = s.xw + b * 3 * H, *hr = s.hr + b * 3 * H;
    float z = activate(s.act[0], xw[j] + hr[j] + bias(s.wb, j) + bias(s.rb, j),
                       s.clip);
    float r = activate(
        s.act[0], xw[H + j] + hr[H + j] + bias(s.wb, H + j) + bias(s.rb, H + j),
        s.clip);
    float hh = activate(s.act[1],
                        xw[2 * H + j] + bias(s.wb, 2 * H + j) +
                            r * (hr[2 * H + j] + bias(s.rb, 2 * H + j)),
                        s.clip);
    float h = (1.f - z) * hh + z * s.hPrev[i];
    s.hNext[i] = h;
    if (s.y)
      s.y[i] = h;
  }
}

/// GRU with the reset gate first, part 1: z into `gates`, r (.) H_{t-1}
/// into `reset`. hr holds H R^T for z and r (2H wide).
__global__ void gruResetKernel(Step s, float *gates, float *reset) {
  int64_t H = s.hidden;
  CLEAVE_GRID_LOOP(i, s.batch * H) {
    int64_t b = i / H, j = i % H;
    const float *xw = s.xw + b * 3 * H, *hr = s.hr + b * 2 * H;
    gates[i] = activate(s.act[0], xw[j] + hr[j] + bias(s.wb, j) + bias(s.rb, j),
                        s.clip);
    float r = activate(
        s.act[0], xw[H + j] + hr[H + j] + bias(s.wb, H + j) + bias(s.rb, H + j),
        s.clip);
    reset[i] = r * s.hPrev[i];
  }
}

/// Part 2: `rh` holds (r (.) H_{t-1}) R_h^T.
__global__ void gruOutputKernel(Step s, const float *gates, const float *rh) {
  int64_t H = s.hidden;
  CLEAVE_GRID_LOOP(i, s.batch * H) {
    int64_t b = i / H, j = i % H;
    const float *xw = s.xw + b * 3 * H;
    float hh = activate(s.act[1],
                        xw[2 * H + j] + rh[i] + bias(s.wb, 2 * H + j) +
                            bias(s.rb, 2 * H + j),
                        s.clip);
    float z = gates[i];
    float h = (1.f - z) * hh + z * s.hPrev[i];
    s.hNext[i] = h;
    if (s.y)
      s.y[i] = h;
  }
}

enum class Cell { Rnn, Gru, Lstm };

/// RNN and GRU (args::Recurrent) or LSTM (args::Lstm).
template <typename Args>
int32_t recurrent(CleaveContext *ctx, const char *kernel, Cell cell,
                  const Args &args) {
  const int gates = cell == Cell::Rnn ? 1 : (cell == Cell::Gru ? 3 : 4);
  const int perDirection = cell == Cell::Rnn ? 1 : (cell == Cell::Gru ? 2 : 3);
  const CleaveTensor &x = args.x(), &w = args.w(), &r = args.r();
  const CleaveTensor *b = args.b(), *h0 = args.initialH();
  const CleaveTensor *c0 = nullptr, *peep = nullptr;
  float *yc = nullptr;
  if constexpr (std::is_same_v<Args, args::Lstm>) {
    c0 = args.initialC();
    peep = args.p();
    yc = static_cast<float *>(args.yC().data);
  }
  for (const CleaveTensor *t : {&x, &w, &r, b, h0, c0, peep})
    if (t && t->dtype != CLEAVE_F32)
      return fail(ctx, kernel, "only f32 is supported");
  int direction = static_cast<int>(args.direction());
  int64_t H = args.hiddenSize();
  bool variant = args.variant() != 0;
  int64_t numActivations = args.activations().size();
  const int64_t *activations = args.activations().data();
  if (direction < CLEAVE_RNN_FORWARD || direction > CLEAVE_RNN_BIDIRECTIONAL)
    return fail(ctx, kernel, "unknown direction %d", direction);
  int dirs = direction == CLEAVE_RNN_BIDIRECTIONAL ? 2 : 1;
  if (x.rank != 3 || w.rank != 3 || r.rank != 3)
    return fail(ctx, kernel, "X, W and R must be 3-D");
  int64_t seq = x.shape[0], batch = x.shape[1], inputSize = x.shape[2];
  if (w.shape[0] != dirs || w.shape[1] != gates * H ||
      w.shape[2] != inputSize || r.shape[0] != dirs ||
      r.shape[1] != gates * H || r.shape[2] != H)
    return fail(ctx, kernel, "W or R does not match hidden_size %lld",
                (long long)H);
  float clip = static_cast<float>(args.clip());

  const int64_t GH = gates * H, BH = batch * H;
  // Scratch: projections of all steps, one step's recurrent product, two
  // hidden states, two cell states, and the GRU reset buffers.
  int64_t floatsNeeded = seq * batch * GH + batch * GH + 4 * BH + 3 * BH;
  auto *scratch = static_cast<float *>(
      cleave_rt_scratch(ctx, floatsNeeded * sizeof(float)));
  if (!scratch && floatsNeeded)
    return 1;
  float *xw = scratch, *hr = xw + seq * batch * GH;
  float *hBuf[2] = {hr + batch * GH, hr + batch * GH + BH};
  float *cBuf[2] = {hBuf[1] + BH, hBuf[1] + 2 * BH};
  float *gateBuf = cBuf[1] + BH, *resetBuf = gateBuf + BH,
        *rhBuf = resetBuf + BH;
  cudaStream_t stream = streamOf(ctx);
  float *y = static_cast<float *>(args.y().data);
  float *yh = static_cast<float *>(args.yH().data);

  for (int d = 0; d < dirs; ++d) {
    const float *wd = static_cast<const float *>(w.data) + d * GH * inputSize;
    const float *rd = static_cast<const float *>(r.data) + d * GH * H;
    Step s{};
    s.batch = batch;
    s.hidden = H;
    s.clip = clip;
    s.variant = variant;
    static const int defaults[3][3] = {
        {CLEAVE_ACTIVATION_TANH},
        {CLEAVE_ACTIVATION_SIGMOID, CLEAVE_ACTIVATION_TANH},
        {CLEAVE_ACTIVATION_SIGMOID, CLEAVE_ACTIVATION_TANH,
         CLEAVE_ACTIVATION_TANH}};
    for (int k = 0; k < perDirection; ++k) {
      int64_t at = numActivations >= (d + 1) * perDirection
                       ? d * perDirection + k
                       : (numActivations >= perDirection ? k : -1);
      s.act[k] = at >= 0 ? static_cast<int>(activations[at])
                         : defaults[perDirection - 1][k];
      if (s.act[k] < CLEAVE_ACTIVATION_RELU ||
          s.act[k] > CLEAVE_ACTIVATION_SOFTPLUS)
        return fail(ctx, kernel, "unknown activation %d", s.act[k]);
    }
    if (b) {
      s.wb = static_cast<const float *>(b->data) + d * 2 * GH;
      s.rb = s.wb + GH;
    }
    s.peep =
        peep ? static_cast<const float *>(peep->data) + d * 3 * H : nullptr;

    // Initial states.
    auto initial = [&](const CleaveTensor *t, float *to) {
      cudaError_t e =
          t ? cudaMemcpyAsync(to, static_cast<const float *>(t->data) + d * BH,
                              BH * sizeof(float), cudaMemcpyDeviceToDevice,
                              stream)
            : cudaMemsetAsync(to, 0, BH * sizeof(float), stream);
      return e == cudaSuccess;
    };
    if (!initial(h0, hBuf[0]) || (cell == Cell::Lstm && !initial(c0, cBuf[0])))
      return fail(ctx, kernel, "initialising the state failed");

    // X W^T for every step: (seq*batch) x GH.
    RowMajorGemm proj;
    proj.transB = true;
    proj.m = seq * batch;
    proj.n = GH;
    proj.k = inputSize;
    proj.lda = inputSize;
    proj.ldb = inputSize;
    proj.ldy = GH;
    if (int32_t status =
            rowMajorGemm(ctx, kernel, CLEAVE_F32, proj, x.data, wd, xw))
      return status;

    bool resetFirst = cell == Cell::Gru && !variant;
    for (int64_t step = 0; step < seq; ++step) {
      int64_t t =
          d == 1 || direction == CLEAVE_RNN_REVERSE ? seq - 1 - step : step;
      int cur = step & 1;
      s.xw = xw + t * batch * GH;
      s.hr = hr;
      s.hPrev = hBuf[cur];
      s.hNext = hBuf[cur ^ 1];
      s.cPrev = cBuf[cur];
      s.cNext = cBuf[cur ^ 1];
      s.y = y ? y + (t * dirs + d) * BH : nullptr;
      // H_{t-1} R^T (the first 2H rows of R when the reset comes first).
      RowMajorGemm rec;
      rec.transB = true;
      rec.m = batch;
      rec.n = resetFirst ? 2 * H : GH;
      rec.k = H;
      rec.lda = H;
      rec.ldb = H;
      rec.ldy = rec.n;
      if (int32_t status =
              rowMajorGemm(ctx, kernel, CLEAVE_F32, rec, s.hPrev, rd, hr))
        return status;
      unsigned blocks = blocksFor(BH);
      switch (cell) {
      case Cell::Rnn:
        rnnStepKernel<<<blocks, kThreads, 0, stream>>>(s);
        break;
      case Cell::Lstm:
        lstmStepKernel<<<blocks, kThreads, 0, stream>>>(s);
        break;
      case Cell::Gru:
        if (!resetFirst) {
          gruLinearStepKernel<<<blocks, kThreads, 0, stream>>>(s);
          break;
        }
        gruResetKernel<<<blocks, kThreads, 0, stream>>>(s, gateBuf, resetBuf);
        if (int32_t status = checkLaunch(ctx, kernel))
          return status;
        {
          RowMajorGemm hGate = rec;
          hGate.n = H;
          hGate.ldy = H;
          if (int32_t status = rowMajorGemm(ctx, kernel, CLEAVE_F32, hGate,
                                            resetBuf, rd + 2 * H * H, rhBuf))
            return status;
        }
        gruOutputKernel<<<blocks, kThreads, 0, stream>>>(s, gateBuf, rhBuf);
        break;
      }
      if (int32_t status = checkLaunch(ctx, kernel))
        return status;
    }
    // The last state is in the buffer the last step wrote.
    int last = static_cast<int>(seq & 1);
    auto store = [&](float *to, const float *from) {
      return !to ||
             cudaMemcpyAsync(to + d * BH, from, BH * sizeof(float),
                             cudaMemcpyDeviceToDevice, stream) == cudaSuccess;
    };
    if (!store(yh, hBuf[last]) ||
        (cell == Cell::Lstm && !store(yc, cBuf[last])))
      return fail(ctx, kernel, "storing the last state failed");
  }
  return 0;
}

} // namespace

int32_t cleave::cuda::kernels::rnn(CleaveContext *ctx,
                                   const args::Recurrent &args) {
  return recurrent(ctx, "rnn", Cell::Rnn, args);
}

int32_t cleave::cuda::kernels::gru(CleaveContext *ctx,
                                   const args::Recurrent &args) {
  return recurrent(ctx, "gru", Cell::Gru, args);
}

int32_t cleave::cuda::kernels::lstm(CleaveContext *ctx,
                                    const args::Lstm &args) {
  return recurrent(ctx, "lstm", Cell::Lstm, args);
}
