//===- RecurrentTest.cpp - RNN, GRU and LSTM against ONNX's equations -----===//
//
// The reference steps each batch row through ONNX's equations in double.
// The pinned LSTM and GRU outputs are onnxruntime 1.32's (opset 14) on
// inputs 0.5 sin(0.37 i + k).
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

#include <algorithm>

using namespace cleave::test;

namespace {

enum class Cell { RNN, GRU, LSTM };
enum { Relu, Tanh, Sigmoid, Softsign, Softplus };

double activation(int64_t code, double x) {
  switch (code) {
  case Relu:
    return std::max(x, 0.0);
  case Tanh:
    return std::tanh(x);
  case Sigmoid:
    return 1 / (1 + std::exp(-x));
  case Softsign:
    return x / (1 + std::fabs(x));
  default:
    return std::log1p(std::exp(x));
  }
}

struct Layer {
  Cell cell;
  int64_t seq, batch, input, hidden;
  int64_t direction; // 0 forward, 1 reverse, 2 bidirectional
  int64_t variant = 0;
  std::vector<int64_t> activations; // all directions
  double clip = 0;
  bool bias = true, initial = true, peepholes = true;

  int64_t gates() const {
    return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
  }
  int64_t dirs() const { return direction == 2 ? 2 : 1; }
};

struct Operands {
  Tensor x, w, r, b, h0, c0, p;
};

Tensor sinusoid(Shape shape, int k) {
  Tensor t(std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i)
    t.f32()[i] = float(std::sin(i * 0.37 + k) * 0.5);
  return t;
}

Operands makeOperands(const Layer &l) {
  int64_t d = l.dirs(), g = l.gates(), h = l.hidden;
  return {sinusoid({l.seq, l.batch, l.input}, 0),
          sinusoid({d, g * h, l.input}, 1),
          sinusoid({d, g * h, h}, 2),
          sinusoid({d, 2 * g * h}, 3),
          sinusoid({d, l.batch, h}, 4),
          sinusoid({d, l.batch, h}, 5),
          sinusoid({d, 3 * h}, 6)};
}

struct Outputs {
  std::vector<float> y, yh, yc;
};

Outputs naiveLayer(const Layer &l, Operands &o) {
  const int64_t H = l.hidden, G = l.gates(), D = l.dirs(), I = l.input;
  Outputs out;
  out.y.assign(l.seq * D * l.batch * H, 0);
  out.yh.assign(D * l.batch * H, 0);
  out.yc.assign(D * l.batch * H, 0);
  int64_t perDir = l.cell == Cell::RNN ? 1 : l.cell == Cell::GRU ? 2 : 3;
  auto clip = [&](double v) {
    return l.clip > 0 ? std::min(std::max(v, -l.clip), l.clip) : v;
  };
  for (int64_t d = 0; d < D; ++d) {
    // One direction's list serves both, as in the kernel.
    const int64_t base =
        int64_t(l.activations.size()) >= (d + 1) * perDir ? d * perDir : 0;
    auto act = [&](int64_t k) {
      return l.activations[base + std::min(k, perDir - 1)];
    };
    const int64_t f = act(0), g = act(1), hAct = act(2);
    const float *W = o.w.f32() + d * G * H * I, *R = o.r.f32() + d * G * H * H;
    const float *B = o.b.f32() + d * 2 * G * H, *P = o.p.f32() + d * 3 * H;
    for (int64_t n = 0; n < l.batch; ++n) {
      std::vector<double> h(H, 0), c(H, 0);
      if (l.initial)
        for (int64_t j = 0; j < H; ++j) {
          h[j] = o.h0.f32()[(d * l.batch + n) * H + j];
          c[j] = o.c0.f32()[(d * l.batch + n) * H + j];
        }
      for (int64_t s = 0; s < l.seq; ++s) {
        int64_t t = (l.direction == 1 || d == 1) ? l.seq - 1 - s : s;
        const float *x = o.x.f32() + (t * l.batch + n) * I;
        // xw[k] = X W_k^T + Wb_k, hr[k] = H R_k^T + Rb_k for gate row k.
        std::vector<double> xw(G * H), hr(G * H);
        for (int64_t k = 0; k < G * H; ++k) {
          xw[k] = l.bias ? B[k] : 0;
          hr[k] = l.bias ? B[G * H + k] : 0;
          for (int64_t i = 0; i < I; ++i)
            xw[k] += double(x[i]) * W[k * I + i];
          for (int64_t i = 0; i < H; ++i)
            hr[k] += h[i] * R[k * H + i];
        }
        std::vector<double> next(H);
        if (l.cell == Cell::RNN) {
          for (int64_t j = 0; j < H; ++j)
            next[j] = activation(f, clip(xw[j] + hr[j]));
        } else if (l.cell == Cell::GRU) {
          std::vector<double> z(H), r(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = activation(f, clip(xw[j] + hr[j]));
            r[j] = activation(f, clip(xw[H + j] + hr[H + j]));
          }
          for (int64_t j = 0; j < H; ++j) {
            double pre;
            if (l.variant) {
              pre = xw[2 * H + j] + r[j] * hr[2 * H + j];
            } else {
              double rh = l.bias ? B[G * H + 2 * H + j] : 0;
              for (int64_t i = 0; i < H; ++i)
                rh += r[i] * h[i] * R[(2 * H + j) * H + i];
              pre = xw[2 * H + j] + rh;
            }
            double cand = activation(g, clip(pre));
            next[j] = (1 - z[j]) * cand + z[j] * h[j];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) {
            double pi = l.peepholes ? P[j] : 0, po = l.peepholes ? P[H + j] : 0,
                   pf = l.peepholes ? P[2 * H + j] : 0;
            double i = activation(f, clip(xw[j] + hr[j] + pi * c[j]));
            double fg = l.variant
                            ? 1 - i
                            : activation(f, clip(xw[2 * H + j] + hr[2 * H + j] +
                                                 pf * c[j]));
            double cc = activation(g, clip(xw[3 * H + j] + hr[3 * H + j]));
            c[j] = fg * c[j] + i * cc;
            double og = activation(f, clip(xw[H + j] + hr[H + j] + po * c[j]));
            next[j] = og * activation(hAct, c[j]);
          }
        }
        h = next;
        for (int64_t j = 0; j < H; ++j)
          out.y[((t * D + d) * l.batch + n) * H + j] = float(h[j]);
      }
      for (int64_t j = 0; j < H; ++j) {
        out.yh[(d * l.batch + n) * H + j] = float(h[j]);
        out.yc[(d * l.batch + n) * H + j] = float(c[j]);
      }
    }
  }
  return out;
}

class RecurrentTest : public KernelTest {
protected:
  Outputs runLayer(const Layer &l, Operands &o) {
    int64_t D = l.dirs();
    Tensor y({l.seq, D, l.batch, l.hidden}), yh({D, l.batch, l.hidden}),
        yc({D, l.batch, l.hidden});
    std::vector<CleaveTensor> in = {o.x.desc(), o.w.desc(), o.r.desc(),
                                    l.bias ? o.b.desc() : absent(),
                                    l.initial ? o.h0.desc() : absent()};
    std::vector<CleaveTensor> out = {y.desc(), yh.desc()};
    CleaveKernelFn kernel = cleave_cpu_rnn;
    if (l.cell == Cell::GRU)
      kernel = cleave_cpu_gru;
    if (l.cell == Cell::LSTM) {
      kernel = cleave_cpu_lstm;
      in.push_back(l.initial ? o.c0.desc() : absent());
      in.push_back(l.peepholes ? o.p.desc() : absent());
      out.push_back(yc.desc());
    }
    std::vector<int64_t> ints = {l.direction, l.hidden, l.variant,
                                 int64_t(l.activations.size())};
    ints.insert(ints.end(), l.activations.begin(), l.activations.end());
    EXPECT_EQ(run(kernel, in, out, ints, {l.clip}), 0) << ctx.error;
    return {y.vec(), yh.vec(), yc.vec()};
  }

  void check(const Layer &l) {
    Operands o = makeOperands(l);
    Outputs got = runLayer(l, o), want = naiveLayer(l, o);
    expectClose(got.y, want.y, 1e-5f, 1e-4f);
    expectClose(got.yh, want.yh, 1e-5f, 1e-4f);
    if (l.cell == Cell::LSTM)
      expectClose(got.yc, want.yc, 1e-5f, 1e-4f);
  }
};

TEST_F(RecurrentTest, RnnForwardTanh) {
  check({Cell::RNN, 4, 3, 5, 6, 0, 0, {Tanh}});
}

TEST_F(RecurrentTest, RnnReverseReluWithoutBiasOrInitialState) {
  Layer l{Cell::RNN, 3, 2, 4, 5, 1, 0, {Relu}};
  l.bias = l.initial = false;
  check(l);
}

TEST_F(RecurrentTest, RnnBidirectionalPerDirectionActivationsAndClip) {
  Layer l{Cell::RNN, 5, 2, 3, 4, 2, 0, {Softsign, Softplus}};
  l.clip = 0.3;
  check(l);
}

TEST_F(RecurrentTest, GruDefaultAndLinearBeforeReset) {
  check({Cell::GRU, 4, 3, 5, 6, 0, 0, {Sigmoid, Tanh}});
  check({Cell::GRU, 4, 3, 5, 6, 0, 1, {Sigmoid, Tanh}});
}

TEST_F(RecurrentTest, GruBidirectionalClipped) {
  Layer l{Cell::GRU, 3, 2, 4, 3, 2, 0, {Sigmoid, Tanh, Sigmoid, Softsign}};
  l.clip = 0.5;
  check(l);
  l.variant = 1;
  check(l);
}

TEST_F(RecurrentTest, LstmPeepholesAndVariants) {
  check({Cell::LSTM, 4, 3, 5, 6, 0, 0, {Sigmoid, Tanh, Tanh}});
  Layer reverse{Cell::LSTM, 3, 2, 4, 5, 1, 0, {Sigmoid, Tanh, Tanh}};
  reverse.peepholes = reverse.bias = false;
  check(reverse);
  // input_forget couples the forget gate to the input gate.
  check({Cell::LSTM, 3, 2, 4, 5, 0, 1, {Sigmoid, Tanh, Tanh}});
  Layer both{Cell::LSTM, 4, 2, 3,
             4,          2, 0, {Sigmoid, Tanh, Tanh, Sigmoid, Softsign, Relu}};
  both.clip = 0.4;
  check(both);
}

TEST_F(RecurrentTest, DefaultActivationsWhenNoneAreGiven) {
  Layer l{Cell::LSTM, 2, 2, 3, 2, 0, 0, {}};
  Operands o = makeOperands(l);
  Outputs got = runLayer(l, o);
  l.activations = {Sigmoid, Tanh, Tanh};
  expectClose(got.y, naiveLayer(l, o).y, 1e-5f, 1e-4f);
}

TEST_F(RecurrentTest, AbsentSequenceOutput) {
  Layer l{Cell::LSTM, 3, 2, 4, 3, 2, 0, {Sigmoid, Tanh, Tanh}};
  Operands o = makeOperands(l);
  Tensor yh({2, 2, 3}), yc({2, 2, 3});
  ASSERT_EQ(run(cleave_cpu_lstm,
                {o.x.desc(), o.w.desc(), o.r.desc(), o.b.desc(), o.h0.desc(),
                 o.c0.desc(), o.p.desc()},
                {absent(), yh.desc(), yc.desc()}, {2, 3, 0, 3, 2, 1, 1}, {0.0}),
            0)
      << ctx.error;
  Outputs want = naiveLayer(l, o);
  expectClose(yh.vec(), want.yh, 1e-5f, 1e-4f);
  expectClose(yc.vec(), want.yc, 1e-5f, 1e-4f);
}

TEST_F(RecurrentTest, LstmMatchesOnnxruntime) {
  Layer l{Cell::LSTM, 3, 2, 3, 2, 0, 0, {}};
  Operands o = makeOperands(l);
  Outputs got = runLayer(l, o);
  expectClose(got.y,
              {-0.0907133296f, -0.165947452f, 0.0711410195f, -0.0598882921f,
               0.047042042f, -0.0513097271f, -0.0201477632f, -0.0307684075f,
               -0.0668975934f, -0.0640161335f, -0.0546447039f, -0.0337541923f},
              1e-6f, 1e-4f);
  expectClose(got.yc,
              {-0.122708172f, -0.0997852832f, -0.111998037f, -0.0618613735f},
              1e-6f, 1e-4f);
}

TEST_F(RecurrentTest, GruMatchesOnnxruntime) {
  Layer l{Cell::GRU, 3, 2, 3, 2, 0, 0, {}};
  Operands o = makeOperands(l);
  expectClose(runLayer(l, o).y,
              {-0.258422166f, -0.116593502f, -0.451822668f, -0.043543905f,
               -0.339414209f, -0.0190523975f, -0.166651264f, -0.234055012f,
               0.00924763829f, -0.333513975f, -0.0775724128f, -0.212594405f},
              1e-6f, 1e-4f);
  l.variant = 1;
  expectClose(runLayer(l, o).yh,
              {-0.0379549116f, -0.430040479f, -0.153583944f, -0.339388371f},
              1e-6f, 1e-4f);
}

TEST_F(RecurrentTest, RejectsBadArguments) {
  Layer l{Cell::GRU, 2, 1, 3, 2, 0, 0, {}};
  Operands o = makeOperands(l);
  Tensor y({2, 1, 1, 2}), yh({1, 1, 2});
  Tensor wrongR({1, 6, 3});
  expectFailure(run(cleave_cpu_gru, {o.x.desc(), o.w.desc(), wrongR.desc()},
                    {y.desc(), yh.desc()}, {0, 2, 0, 0}, {0.0}),
                "gru", "R does not have the expected shape");
  expectFailure(run(cleave_cpu_gru, {o.x.desc(), o.w.desc(), o.r.desc()},
                    {y.desc(), yh.desc()}, {3, 2, 0, 0}, {0.0}),
                "gru", "unknown direction 3");
  expectFailure(run(cleave_cpu_gru, {o.x.desc(), o.w.desc(), o.r.desc()},
                    {y.desc(), yh.desc()}, {0, 2, 0, 2, 2, 7}, {0.0}),
                "gru", "unknown activation code 7");
  Tensor xd({2, 1, 3}, CLEAVE_F64);
  expectFailure(run(cleave_cpu_gru, {xd.desc(), o.w.desc(), o.r.desc()},
                    {y.desc(), yh.desc()}, {0, 2, 0, 0}, {0.0}),
                "gru", "only float32");
  expectFailure(run(cleave_cpu_lstm, {o.x.desc(), o.w.desc(), o.r.desc()},
                    {y.desc(), yh.desc()}, {0, 2, 0, 0}, {0.0}),
                "lstm", "expected at least 3 outputs");
}

} // namespace
