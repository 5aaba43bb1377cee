//===- CudaKernelTest.cpp - CUDA kernels against CPU references -----------===//
//
// Each test uploads inputs, runs one cleave_cuda_* kernel through a
// CudaDevice, downloads the outputs and compares them with a naive
// reference computed here. Tolerances: 1e-4 relative (plus a small
// absolute term) for fp32, 1e-2 for fp16 and bf16. Without a GPU every test
// skips, saying so.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Context.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/Kernels.h"
#include "cleave/rt/Scalar.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using Shape = std::vector<int64_t>;

int64_t count(const Shape &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// Coordinates of a linear index.
std::vector<int64_t> coordsOf(int64_t i, const Shape &shape) {
  std::vector<int64_t> c(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

std::vector<float> randomValues(int64_t n, unsigned seed, float lo = -1.f,
                                float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// A tensor on the GPU with its bytes mirrored on the host.
struct Buffer {
  Shape shape;
  int32_t dtype = CLEAVE_F32;
  std::vector<uint8_t> host;
  void *device = nullptr;
  /// Where the tensor starts in `device`: a kernel sees less aligned data.
  size_t offset = 0;

  CleaveTensor tensor() const {
    CleaveTensor t{};
    t.data = static_cast<char *>(device) + offset;
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      t.shape[d] = shape[d];
    return t;
  }
};

size_t sizeOf(int32_t dtype) { return cleave_dtype_size(dtype); }

std::vector<uint8_t> encode(const std::vector<float> &v, int32_t dtype) {
  std::vector<uint8_t> bytes(v.size() * sizeOf(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == CLEAVE_F32) {
      std::memcpy(bytes.data() + 4 * i, &v[i], 4);
    } else if (dtype == CLEAVE_F16) {
      __half h = __float2half(v[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    } else {
      __nv_bfloat16 h = __float2bfloat16(v[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
  }
  return bytes;
}

std::vector<float> decode(const std::vector<uint8_t> &bytes, int32_t dtype) {
  size_t n = bytes.size() / sizeOf(dtype);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == CLEAVE_F32) {
      std::memcpy(&v[i], bytes.data() + 4 * i, 4);
    } else if (dtype == CLEAVE_F16) {
      __half h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      v[i] = __half2float(h);
    } else {
      __nv_bfloat16 h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      v[i] = __bfloat162float(h);
    }
  }
  return v;
}

/// Rounds values through a narrower type, so references see the inputs the
/// kernel sees.
std::vector<float> roundTrip(const std::vector<float> &v, int32_t dtype) {
  return decode(encode(v, dtype), dtype);
}

class CudaKernelTest : public ::testing::Test {
protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
      GTEST_SKIP() << "no CUDA device: cudaGetDeviceCount reports none";
    char error[512] = {};
    device.reset(cleave_rt_create_cuda_device(0, error, sizeof(error)));
    ASSERT_TRUE(device) << error;
    ctx = device->context();
  }

  void TearDown() override {
    for (Buffer *b : owned)
      if (b->device)
        device->release(b->device);
    for (Buffer *b : owned)
      delete b;
  }

  Buffer &bytesBuffer(const Shape &shape, int32_t dtype,
                      std::vector<uint8_t> bytes) {
    auto *b = new Buffer;
    owned.push_back(b);
    b->shape = shape;
    b->dtype = dtype;
    b->host = std::move(bytes);
    b->device = device->allocate(b->host.size());
    device->copyToDevice(b->device, b->host.data(), b->host.size());
    return *b;
  }

  Buffer &input(const Shape &shape, const std::vector<float> &values,
                int32_t dtype = CLEAVE_F32) {
    EXPECT_EQ(count(shape), static_cast<int64_t>(values.size()));
    return bytesBuffer(shape, dtype, encode(values, dtype));
  }

  template <typename I>
  Buffer &integers(const Shape &shape, const std::vector<I> &values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(I));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytesBuffer(shape, sizeof(I) == 8 ? CLEAVE_I64 : CLEAVE_I32,
                       std::move(bytes));
  }

  Buffer &output(const Shape &shape, int32_t dtype = CLEAVE_F32) {
    // NaN-filled, so an element the kernel misses fails the comparison.
    return bytesBuffer(shape, dtype,
                       encode(std::vector<float>(count(shape), NAN), dtype));
  }

  /// Runs `kernel` and downloads the outputs; returns its status.
  int32_t run(CleaveKernelFn kernel, const std::vector<Buffer *> &ins,
              const std::vector<Buffer *> &outs,
              const std::vector<int64_t> &ints = {},
              const std::vector<double> &floats = {}) {
    std::vector<CleaveTensor> in, out;
    for (Buffer *b : ins)
      in.push_back(b ? b->tensor() : CleaveTensor{});
    for (Buffer *b : outs)
      out.push_back(b ? b->tensor() : CleaveTensor{});
    std::vector<int64_t> i = ints;
    std::vector<double> f = floats;
    // Fields past the ones given read 0.
    i.insert(i.end(), 8, 0);
    f.insert(f.end(), 8, 0.0);
    int32_t status =
        kernel(ctx, in.data(), static_cast<int32_t>(in.size()), out.data(),
               static_cast<int32_t>(out.size()), i.data(), f.data());
    device->synchronize();
    for (Buffer *b : outs)
      if (b)
        device->copyToHost(b->host.data(), b->device, b->host.size());
    return status;
  }

  static void expectNear(const std::vector<float> &expected,
                         const Buffer &actualBuffer, double tolerance = 1e-4) {
    std::vector<float> actual = decode(actualBuffer.host, actualBuffer.dtype);
    ASSERT_EQ(expected.size(), actual.size());
    int failures = 0;
    for (size_t i = 0; i < expected.size() && failures < 10; ++i) {
      double e = expected[i], a = actual[i];
      if (std::isnan(e) && std::isnan(a))
        continue;
      if (!(std::fabs(e - a) <= tolerance * (1.0 + std::fabs(e)))) {
        ADD_FAILURE() << "element " << i << ": expected " << e << ", got " << a;
        ++failures;
      }
    }
  }

  std::unique_ptr<cleave::rt::Device> device;
  CleaveContext *ctx = nullptr;
  std::vector<Buffer *> owned;
};

//===----------------------------------------------------------------------===//
// References
//===----------------------------------------------------------------------===//

/// Batched row-major product with broadcast batches (no 1-D promotion).
std::vector<float> refMatmul(const std::vector<float> &a, const Shape &as,
                             const std::vector<float> &b, const Shape &bs,
                             const Shape &ys) {
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape batch(ys.begin(), ys.end() - 2);
  std::vector<float> y(count(ys));
  for (int64_t t = 0; t < count(batch); ++t) {
    auto c = coordsOf(t, batch);
    auto offset = [&](const Shape &s) {
      int64_t off = 0, stride = s[s.size() - 2] * s.back();
      int shift =
          static_cast<int>(batch.size()) - (static_cast<int>(s.size()) - 2);
      for (int d = static_cast<int>(s.size()) - 3; d >= 0; --d) {
        off += (s[d] == 1 ? 0 : c[d + shift]) * stride;
        stride *= s[d];
      }
      return off;
    };
    int64_t oa = offset(as), ob = offset(bs);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += double(a[oa + i * k + p]) * b[ob + p * n + j];
        y[t * m * n + i * n + j] = static_cast<float>(acc);
      }
  }
  return y;
}

struct Conv2d {
  int64_t group = 1, strideH = 1, strideW = 1, padT = 0, padL = 0, padB = 0,
          padR = 0, dilH = 1, dilW = 1;
};

std::vector<float> refConv2d(const std::vector<float> &x, const Shape &xs,
                             const std::vector<float> &w, const Shape &ws,
                             const std::vector<float> *bias, const Shape &ys,
                             const Conv2d &p) {
  std::vector<float> y(count(ys));
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  int64_t M = ws[0], kh = ws[2], kw = ws[3], OH = ys[2], OW = ys[3];
  int64_t cg = C / p.group, mg = M / p.group;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? (*bias)[m] : 0.0;
          int64_t g = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t h = oh * p.strideH - p.padT + i * p.dilH;
                int64_t v = ow * p.strideW - p.padL + j * p.dilW;
                if (h < 0 || h >= H || v < 0 || v >= W)
                  continue;
                acc += double(x[((n * C + g * cg + c) * H + h) * W + v]) *
                       w[((m * cg + c) * kh + i) * kw + j];
              }
          y[((n * M + m) * OH + oh) * OW + ow] = static_cast<float>(acc);
        }
  return y;
}

std::vector<float> refConvTranspose2d(const std::vector<float> &x,
                                      const Shape &xs,
                                      const std::vector<float> &w,
                                      const Shape &ws,
                                      const std::vector<float> &bias,
                                      const Shape &ys, const Conv2d &p) {
  std::vector<double> acc(count(ys), 0.0);
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  int64_t mg = ws[1], kh = ws[2], kw = ws[3], M = ys[1], OH = ys[2], OW = ys[3];
  int64_t cg = C / p.group;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t v = 0; v < W; ++v)
          for (int64_t ml = 0; ml < mg; ++ml)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t oh = h * p.strideH - p.padT + i * p.dilH;
                int64_t ow = v * p.strideW - p.padL + j * p.dilW;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW)
                  continue;
                int64_t m = (c / cg) * mg + ml;
                acc[((n * M + m) * OH + oh) * OW + ow] +=
                    double(x[((n * C + c) * H + h) * W + v]) *
                    w[((c * mg + ml) * kh + i) * kw + j];
              }
  std::vector<float> y(acc.size());
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = static_cast<float>(acc[i] + bias[(i / (OH * OW)) % M]);
  return y;
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

TEST_F(CudaKernelTest, MatmulBroadcastBatches) {
  struct Case {
    Shape a, b, y;
  } cases[] = {
      {{3, 5, 7}, {7, 4}, {3, 5, 4}},             // shared weight: folded
      {{2, 1, 5, 7}, {1, 3, 7, 4}, {2, 3, 5, 4}}, // both broadcast
      {{4, 5, 7}, {4, 7, 4}, {4, 5, 4}},          // strided batched
      {{5, 7}, {2, 7, 4}, {2, 5, 4}},             // A broadcast
  };
  for (const Case &c : cases) {
    auto a = randomValues(count(c.a), 1), b = randomValues(count(c.b), 2);
    Buffer &y = output(c.y);
    ASSERT_EQ(run(cleave_cuda_matmul, {&input(c.a, a), &input(c.b, b)}, {&y}),
              0)
        << ctx->error;
    expectNear(refMatmul(a, c.a, b, c.b, c.y), y);
  }
}

TEST_F(CudaKernelTest, MatmulVectors) {
  auto a = randomValues(7, 3), b = randomValues(7 * 4, 4);
  Buffer &y = output({4});
  ASSERT_EQ(run(cleave_cuda_matmul, {&input({7}, a), &input({7, 4}, b)}, {&y}),
            0);
  expectNear(refMatmul(a, {1, 7}, b, {7, 4}, {1, 4}), y);
  Buffer &z = output({4});
  auto v = randomValues(7, 5);
  ASSERT_EQ(run(cleave_cuda_matmul,
                {&input({4, 7}, randomValues(28, 6)), &input({7}, v)}, {&z}),
            0);
  expectNear(refMatmul(randomValues(28, 6), {4, 7}, v, {7, 1}, {4, 1}), z);
}

TEST_F(CudaKernelTest, MatmulHalfTypes) {
  for (int32_t dtype : {CLEAVE_F16, CLEAVE_BF16}) {
    auto a = roundTrip(randomValues(2 * 16 * 32, 7), dtype);
    auto b = roundTrip(randomValues(32 * 8, 8), dtype);
    Buffer &y = output({2, 16, 8}, dtype);
    ASSERT_EQ(run(cleave_cuda_matmul,
                  {&input({2, 16, 32}, a, dtype), &input({32, 8}, b, dtype)},
                  {&y}),
              0)
        << ctx->error;
    expectNear(refMatmul(a, {2, 16, 32}, b, {32, 8}, {2, 16, 8}), y,
               dtype == CLEAVE_F16 ? 1e-2 : 3e-2);
  }
}

TEST_F(CudaKernelTest, GemmTransposesAndBias) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      int64_t M = 6, K = 5, N = 4;
      Shape as = ta ? Shape{K, M} : Shape{M, K};
      Shape bs = tb ? Shape{N, K} : Shape{K, N};
      auto a = randomValues(M * K, 10 + ta), b = randomValues(K * N, 20 + tb);
      auto c = randomValues(N, 30);
      Buffer &y = output({M, N});
      ASSERT_EQ(run(cleave_cuda_gemm,
                    {&input(as, a), &input(bs, b), &input({N}, c)}, {&y},
                    {ta, tb}, {0.5, 2.0}),
                0)
          << ctx->error;
      std::vector<float> expected(M * N);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < K; ++p)
            acc += double(ta ? a[p * M + i] : a[i * K + p]) *
                   (tb ? b[j * K + p] : b[p * N + j]);
          expected[i * N + j] = static_cast<float>(0.5 * acc + 2.0 * c[j]);
        }
      expectNear(expected, y);
    }
}

/// The epilogues of conv, matmul and gemm (CleaveEpilogue), as the CPU
/// kernels and the program's loops compute them (rt/Scalar.h).
float refActivation(int64_t kind, float v) {
  constexpr float lo = -0.3f, hi = 0.4f;
  switch (kind) {
  case CLEAVE_EPILOGUE_RELU:
    return cl::relu(v);
  case CLEAVE_EPILOGUE_CLIP:
    return v < lo ? lo : (v > hi ? hi : v);
  case CLEAVE_EPILOGUE_SILU:
    return v * cl::sigmoid(v);
  case CLEAVE_EPILOGUE_GELU:
    return cl::gelu_erf(v);
  case CLEAVE_EPILOGUE_GELU_TANH:
    return cl::gelu_tanh(v);
  default:
    return v;
  }
}

/// The clamp's bounds refActivation uses, as a kernel's floats.
constexpr double kClipMin = -0.3, kClipMax = 0.4;

constexpr int64_t kEpilogues[] = {
    CLEAVE_EPILOGUE_NONE, CLEAVE_EPILOGUE_RELU, CLEAVE_EPILOGUE_CLIP,
    CLEAVE_EPILOGUE_SILU, CLEAVE_EPILOGUE_GELU, CLEAVE_EPILOGUE_GELU_TANH};

/// How a fused kernel call passes its residual.
enum class Residual { None, Separate, AliasingY };

const char *describe(Residual r) {
  return r == Residual::None       ? "no residual"
         : r == Residual::Separate ? "a residual"
                                   : "the residual in Y";
}

/// y[i] = act(product[i] + bias[(i / inner) % count] + r[i]).
std::vector<float> refEpilogue(const std::vector<float> &product,
                               const std::vector<float> *bias, int64_t inner,
                               const std::vector<float> *r, int64_t kind) {
  std::vector<float> y(product.size());
  for (size_t i = 0; i < y.size(); ++i) {
    double v = product[i];
    if (bias)
      v += (*bias)[(i / inner) % bias->size()];
    if (r)
      v += (*r)[i];
    y[i] = refActivation(kind, static_cast<float>(v));
  }
  return y;
}

class CudaEpilogueTest : public CudaKernelTest {
protected:
  /// The output of a fused call: a NaN-filled Y, or the residual's values
  /// where the residual is Y (the call's input 3 and its output).
  Buffer &fusedOutput(const Shape &shape, Residual residual,
                      const std::vector<float> &r) {
    return residual == Residual::AliasingY ? input(shape, r) : output(shape);
  }
  Buffer *residualInput(const Shape &shape, Residual residual,
                        const std::vector<float> &r, Buffer &y) {
    if (residual == Residual::None)
      return nullptr;
    return residual == Residual::AliasingY ? &y : &input(shape, r);
  }
};

TEST_F(CudaEpilogueTest, MatmulEveryEpilogue) {
  // A {2, 6, 8} x B {8, 5}: one product of 12 rows (cuBLASLt); A {3, 6, 8}
  // x B {3, 8, 5}: a batched one (cuBLAS, then the elementwise pass).
  struct Case {
    Shape a, b, y;
  } cases[] = {{{2, 6, 8}, {8, 5}, {2, 6, 5}},
               {{3, 6, 8}, {3, 8, 5}, {3, 6, 5}}};
  for (const Case &c : cases) {
    auto a = randomValues(count(c.a), 100), b = randomValues(count(c.b), 101);
    auto bias = randomValues(5, 102), r = randomValues(count(c.y), 103);
    auto product = refMatmul(a, c.a, b, c.b, c.y);
    for (int64_t kind : kEpilogues)
      for (bool withBias : {false, true})
        for (Residual residual :
             {Residual::None, Residual::Separate, Residual::AliasingY}) {
          SCOPED_TRACE(testing::Message()
                       << "A rank " << c.a.size() << ", epilogue " << kind
                       << (withBias ? ", a bias, " : ", no bias, ")
                       << describe(residual));
          Buffer &y = fusedOutput(c.y, residual, r);
          ASSERT_EQ(run(cleave_cuda_matmul,
                        {&input(c.a, a), &input(c.b, b),
                         withBias ? &input({5}, bias) : nullptr,
                         residualInput(c.y, residual, r, y)},
                        {&y}, {kind}, {kClipMin, kClipMax}),
                    0)
              << ctx->error;
          expectNear(refEpilogue(product, withBias ? &bias : nullptr, 1,
                                 residual == Residual::None ? nullptr : &r,
                                 kind),
                     y);
        }
  }
}

TEST_F(CudaEpilogueTest, MatmulBiasOffTheLtAlignment) {
  // A bias at an address 4 bytes past an aligned one: added in the
  // elementwise pass, with the ReLU after it.
  auto a = randomValues(4 * 8, 110), b = randomValues(8 * 6, 111);
  auto padded = randomValues(7, 112);
  std::vector<float> bias(padded.begin() + 1, padded.end());
  Buffer &biasBuffer = input({7}, padded);
  biasBuffer.shape = {6};
  biasBuffer.offset = sizeof(float);
  Buffer &y = output({4, 6});
  ASSERT_EQ(run(cleave_cuda_matmul,
                {&input({4, 8}, a), &input({8, 6}, b), &biasBuffer, nullptr},
                {&y}, {CLEAVE_EPILOGUE_RELU}),
            0)
      << ctx->error;
  expectNear(refEpilogue(refMatmul(a, {4, 8}, b, {8, 6}, {4, 6}), &bias, 1,
                         nullptr, CLEAVE_EPILOGUE_RELU),
             y);
}

TEST_F(CudaEpilogueTest, MatmulWithNoProducts) {
  // K = 0: Y = act(0 + bias + R).
  auto bias = randomValues(3, 120), r = randomValues(2 * 3, 121);
  for (Residual residual : {Residual::Separate, Residual::AliasingY}) {
    SCOPED_TRACE(describe(residual));
    Buffer &y = fusedOutput({2, 3}, residual, r);
    ASSERT_EQ(run(cleave_cuda_matmul,
                  {&input({2, 0}, {}), &input({0, 3}, {}), &input({3}, bias),
                   residualInput({2, 3}, residual, r, y)},
                  {&y}, {CLEAVE_EPILOGUE_SILU}),
              0)
        << ctx->error;
    expectNear(refEpilogue(std::vector<float>(6, 0.f), &bias, 1, &r,
                           CLEAVE_EPILOGUE_SILU),
               y);
  }
}

TEST_F(CudaEpilogueTest, GemmEveryEpilogue) {
  const int64_t M = 7, K = 9, N = 6;
  auto r = randomValues(M * N, 130), row = randomValues(N, 131),
       full = randomValues(M * N, 132);
  // C: none; one row with beta 1 (cuBLASLt's bias); a full C with beta 0.5
  // (written into Y with the residual first).
  enum class C { None, Row, Full };
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      Shape as = ta ? Shape{K, M} : Shape{M, K};
      Shape bs = tb ? Shape{N, K} : Shape{K, N};
      auto a = randomValues(M * K, 133 + ta), b = randomValues(K * N, 135 + tb);
      std::vector<float> product(M * N);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < K; ++p)
            acc += double(ta ? a[p * M + i] : a[i * K + p]) *
                   (tb ? b[j * K + p] : b[p * N + j]);
          product[i * N + j] = static_cast<float>(acc);
        }
      for (int64_t kind : kEpilogues)
        for (C c : {C::None, C::Row, C::Full})
          for (Residual residual :
               {Residual::None, Residual::Separate, Residual::AliasingY}) {
            SCOPED_TRACE(testing::Message()
                         << "transA " << ta << ", transB " << tb
                         << ", epilogue " << kind << ", C "
                         << static_cast<int>(c) << ", " << describe(residual));
            const double alpha = 1.5, beta = c == C::Full ? 0.5 : 1.0;
            Buffer &y = fusedOutput({M, N}, residual, r);
            Buffer *cBuffer = c == C::None  ? nullptr
                              : c == C::Row ? &input({N}, row)
                                            : &input({M, N}, full);
            ASSERT_EQ(run(cleave_cuda_gemm,
                          {&input(as, a), &input(bs, b), cBuffer,
                           residualInput({M, N}, residual, r, y)},
                          {&y}, {ta, tb, kind},
                          {alpha, beta, kClipMin, kClipMax}),
                      0)
                << ctx->error;
            std::vector<float> expected(M * N);
            for (int64_t i = 0; i < M * N; ++i) {
              double v = alpha * product[i];
              if (c == C::Row)
                v += beta * row[i % N];
              else if (c == C::Full)
                v += beta * full[i];
              if (residual != Residual::None)
                v += r[i];
              expected[i] = refActivation(kind, static_cast<float>(v));
            }
            expectNear(expected, y);
          }
    }
}

TEST_F(CudaEpilogueTest, EpilogueErrorsNameTheKernel) {
  // A float16 product has no epilogue.
  Buffer &a = input({2, 4}, randomValues(8, 140), CLEAVE_F16);
  Buffer &b = input({4, 3}, randomValues(12, 141), CLEAVE_F16);
  Buffer &y = output({2, 3}, CLEAVE_F16);
  EXPECT_NE(run(cleave_cuda_matmul, {&a, &b}, {&y}, {CLEAVE_EPILOGUE_RELU}), 0);
  EXPECT_EQ(ctx->failedKernel, "matmul");
  EXPECT_NE(ctx->error.find("float32"), std::string::npos) << ctx->error;
  ctx->error.clear();
  // A bias of the wrong length.
  Buffer &y32 = output({2, 3});
  EXPECT_NE(run(cleave_cuda_matmul,
                {&input({2, 4}, randomValues(8, 142)),
                 &input({4, 3}, randomValues(12, 143)),
                 &input({4}, randomValues(4, 144))},
                {&y32}),
            0);
  EXPECT_NE(ctx->error.find("the bias has 4 elements"), std::string::npos)
      << ctx->error;
  ctx->error.clear();
  // An epilogue code that does not exist.
  EXPECT_NE(run(cleave_cuda_gemm,
                {&input({2, 4}, randomValues(8, 145)),
                 &input({4, 3}, randomValues(12, 146))},
                {&y32}, {0, 0, 9}, {1.0, 0.0}),
            0);
  EXPECT_EQ(ctx->failedKernel, "gemm");
  EXPECT_NE(ctx->error.find("unknown epilogue 9"), std::string::npos)
      << ctx->error;
  ctx->error.clear();
  // A clamp whose bounds are not ordered.
  EXPECT_NE(run(cleave_cuda_conv,
                {&input({1, 2, 3, 3}, randomValues(18, 147)),
                 &input({2, 2, 1, 1}, randomValues(4, 148))},
                {&output({1, 2, 3, 3})},
                {2, 1, 1, 1, 0, 0, 0, 0, 1, 1, CLEAVE_EPILOGUE_CLIP, 0, 0},
                {1.0, -1.0}),
            0);
  EXPECT_EQ(ctx->failedKernel, "conv");
  EXPECT_NE(ctx->error.find("not ordered"), std::string::npos) << ctx->error;
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

TEST_F(CudaKernelTest, Conv2dSymmetricAndAsymmetricPads) {
  Shape xs{2, 4, 9, 8}, ws{6, 2, 3, 3};
  auto x = randomValues(count(xs), 40), w = randomValues(count(ws), 41);
  auto bias = randomValues(6, 42);
  for (bool symmetric : {true, false}) {
    Conv2d p;
    p.group = 2;
    p.strideH = 2;
    p.padT = 1;
    p.padL = 1;
    p.padB = symmetric ? 1 : 0;
    p.padR = symmetric ? 1 : 2;
    p.dilW = 2;
    int64_t oh = (9 + p.padT + p.padB - 3) / 2 + 1;
    int64_t ow = (8 + p.padL + p.padR - 5) / 1 + 1;
    Shape ys{2, 6, oh, ow};
    Buffer &y = output(ys);
    ASSERT_EQ(run(cleave_cuda_conv,
                  {&input(xs, x), &input(ws, w), &input({6}, bias)}, {&y},
                  {2, 2, 2, 1, p.padT, p.padL, p.padB, p.padR, 1, 2}),
              0)
        << ctx->error;
    expectNear(refConv2d(x, xs, w, ws, &bias, ys, p), y, 1e-4);
  }
}

TEST_F(CudaKernelTest, Conv1dAndPointwise) {
  // 1-D: a 2-D convolution of height 1.
  Shape xs{1, 3, 10}, ws{4, 3, 3};
  auto x = randomValues(30, 50), w = randomValues(36, 51);
  Buffer &y = output({1, 4, 10});
  ASSERT_EQ(run(cleave_cuda_conv, {&input(xs, x), &input(ws, w), nullptr}, {&y},
                {1, 1, 1, 1, 1, 1}),
            0)
      << ctx->error;
  Conv2d p;
  p.padL = p.padR = 1;
  expectNear(
      refConv2d(x, {1, 3, 1, 10}, w, {4, 3, 1, 3}, nullptr, {1, 4, 1, 10}, p),
      y);
  // 1x1, no bias.
  Shape xs2{2, 8, 5, 5}, ws2{3, 8, 1, 1};
  auto x2 = randomValues(count(xs2), 52), w2 = randomValues(24, 53);
  Buffer &y2 = output({2, 3, 5, 5});
  ASSERT_EQ(run(cleave_cuda_conv, {&input(xs2, x2), &input(ws2, w2)}, {&y2},
                {2, 1, 1, 1, 0, 0, 0, 0, 1, 1}),
            0);
  expectNear(refConv2d(x2, xs2, w2, ws2, nullptr, {2, 3, 5, 5}, Conv2d()), y2);
}

TEST_F(CudaKernelTest, ConvTranspose2d) {
  Shape xs{2, 4, 5, 4}, ws{4, 3, 3, 2};
  auto x = randomValues(count(xs), 60), w = randomValues(count(ws), 61);
  auto bias = randomValues(6, 62);
  Conv2d p;
  p.group = 2;
  p.strideH = 2;
  p.strideW = 3;
  p.padT = 1;
  p.padB = 0;
  p.padL = 0;
  p.padR = 1;
  // output = stride * (in - 1) + output_padding + (k - 1) * dil + 1 - pads
  int64_t oh = 2 * 4 + 1 + 2 + 1 - 1, ow = 3 * 3 + 0 + 1 + 1 - 1;
  Shape ys{2, 6, oh, ow};
  Buffer &y = output(ys);
  ASSERT_EQ(run(cleave_cuda_conv_transpose,
                {&input(xs, x), &input(ws, w), &input({6}, bias)}, {&y},
                {2, 2, 2, 3, 1, 0, 0, 1, 1, 1, 1, 0}),
            0)
      << ctx->error;
  expectNear(refConvTranspose2d(x, xs, w, ws, bias, ys, p), y);
}

TEST_F(CudaEpilogueTest, ConvEveryEpilogue) {
  // 3x3, pads 1 (cuDNN, its fused call where it has the epilogue) and
  // asymmetric pads (im2col, then the elementwise pass).
  Shape xs{2, 4, 6, 5}, ws{6, 4, 3, 3};
  auto x = randomValues(count(xs), 150), w = randomValues(count(ws), 151);
  auto bias = randomValues(6, 152);
  for (bool symmetric : {true, false}) {
    Conv2d p;
    p.padT = p.padL = p.padB = 1;
    p.padR = symmetric ? 1 : 0;
    Shape ys{2, 6, 6, symmetric ? 5 : 4};
    auto r = randomValues(count(ys), 153);
    auto plain = refConv2d(x, xs, w, ws, nullptr, ys, p);
    for (int64_t kind : kEpilogues)
      for (bool withBias : {false, true})
        for (Residual residual :
             {Residual::None, Residual::Separate, Residual::AliasingY}) {
          SCOPED_TRACE(testing::Message()
                       << (symmetric ? "symmetric" : "asymmetric")
                       << " pads, epilogue " << kind
                       << (withBias ? ", a bias, " : ", no bias, ")
                       << describe(residual));
          Buffer &y = fusedOutput(ys, residual, r);
          ASSERT_EQ(run(cleave_cuda_conv,
                        {&input(xs, x), &input(ws, w),
                         withBias ? &input({6}, bias) : nullptr,
                         residualInput(ys, residual, r, y)},
                        {&y},
                        {2, 1, 1, 1, p.padT, p.padL, p.padB, p.padR, 1, 1, kind,
                         0, 0},
                        {kClipMin, kClipMax}),
                    0)
              << ctx->error;
          expectNear(
              refEpilogue(plain, withBias ? &bias : nullptr, ys[2] * ys[3],
                          residual == Residual::None ? nullptr : &r, kind),
              y);
        }
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TEST_F(CudaKernelTest, MaxAndAveragePool) {
  Shape xs{1, 2, 7, 7};
  auto x = randomValues(count(xs), 70);
  // kernel 3x2, strides 2x2, pads (1, 0, 1, 0), ceil_mode: the last column
  // window starts inside the input and runs past it.
  int64_t oh = 4, ow = 4;
  Shape ys{1, 2, oh, ow};
  for (int includePad = 0; includePad < 2; ++includePad) {
    Buffer &mx = output(ys), &avg = output(ys);
    std::vector<int64_t> ints{2, 3, 2, 2, 2, 1, 0, 1, 0, 1, 1, 1};
    ASSERT_EQ(run(cleave_cuda_max_pool, {&input(xs, x)}, {&mx}, ints), 0);
    ints.push_back(includePad);
    ASSERT_EQ(run(cleave_cuda_average_pool, {&input(xs, x)}, {&avg}, ints), 0);
    std::vector<float> em(count(ys)), ea(count(ys));
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          float m = -INFINITY;
          double s = 0;
          int valid = 0, padded = 0;
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t b = 0; b < 2; ++b) {
              int64_t h = i * 2 - 1 + a, w = j * 2 + b;
              if (h >= -1 && h < 7 + 1 && w >= 0 && w < 7)
                ++padded;
              if (h < 0 || h >= 7 || w < 0 || w >= 7)
                continue;
              float v = x[(c * 7 + h) * 7 + w];
              m = std::max(m, v);
              s += v;
              ++valid;
            }
          em[(c * oh + i) * ow + j] = m;
          ea[(c * oh + i) * ow + j] =
              static_cast<float>(s / (includePad ? padded : valid));
        }
    expectNear(em, mx);
    expectNear(ea, avg);
  }
}

TEST_F(CudaKernelTest, GlobalPools) {
  Shape xs{2, 3, 70, 70};
  auto x = randomValues(count(xs), 80);
  Buffer &avg = output({2, 3, 1, 1}), &mx = output({2, 3, 1, 1});
  ASSERT_EQ(run(cleave_cuda_global_average_pool, {&input(xs, x)}, {&avg}), 0);
  ASSERT_EQ(run(cleave_cuda_global_max_pool, {&input(xs, x)}, {&mx}), 0);
  std::vector<float> ea(6), em(6);
  for (int p = 0; p < 6; ++p) {
    double s = 0;
    float m = -INFINITY;
    for (int i = 0; i < 4900; ++i) {
      s += x[p * 4900 + i];
      m = std::max(m, x[p * 4900 + i]);
    }
    ea[p] = static_cast<float>(s / 4900);
    em[p] = m;
  }
  expectNear(ea, avg);
  expectNear(em, mx);
}

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

TEST_F(CudaKernelTest, BatchInstanceAndGroupNorm) {
  Shape xs{2, 4, 3, 5};
  auto x = randomValues(count(xs), 90);
  auto s = randomValues(4, 91), b = randomValues(4, 92);
  auto mean = randomValues(4, 93), var = randomValues(4, 94, 0.1f, 2.f);
  Buffer &bn = output(xs), &in = output(xs), &gn = output(xs);
  Buffer &xb = input(xs, x), &sb = input({4}, s), &bb = input({4}, b);
  ASSERT_EQ(run(cleave_cuda_batch_norm,
                {&xb, &sb, &bb, &input({4}, mean), &input({4}, var)}, {&bn}, {},
                {1e-5}),
            0);
  ASSERT_EQ(run(cleave_cuda_instance_norm, {&xb, &sb, &bb}, {&in}, {}, {1e-5}),
            0);
  ASSERT_EQ(run(cleave_cuda_group_norm, {&xb, &sb, &bb}, {&gn}, {2}, {1e-5}),
            0);
  std::vector<float> eb(x.size()), ei(x.size()), eg(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    int c = (i / 15) % 4;
    eb[i] = (x[i] - mean[c]) / std::sqrt(var[c] + 1e-5f) * s[c] + b[c];
  }
  auto normalise = [&](std::vector<float> &to, int64_t rowLength) {
    for (size_t r = 0; r < x.size() / rowLength; ++r) {
      double m = 0, v = 0;
      for (int64_t j = 0; j < rowLength; ++j)
        m += x[r * rowLength + j];
      m /= rowLength;
      for (int64_t j = 0; j < rowLength; ++j)
        v += (x[r * rowLength + j] - m) * (x[r * rowLength + j] - m);
      v /= rowLength;
      for (int64_t j = 0; j < rowLength; ++j) {
        size_t i = r * rowLength + j;
        int c = (i / 15) % 4;
        to[i] =
            static_cast<float>((x[i] - m) / std::sqrt(v + 1e-5) * s[c] + b[c]);
      }
    }
  };
  normalise(ei, 15);
  normalise(eg, 30);
  expectNear(eb, bn);
  expectNear(ei, in);
  expectNear(eg, gn);
}

TEST_F(CudaKernelTest, LayerNormAllTypes) {
  Shape xs{3, 4, 96};
  for (int32_t dtype : {CLEAVE_F32, CLEAVE_F16, CLEAVE_BF16}) {
    auto x = roundTrip(randomValues(count(xs), 100), dtype);
    auto s = roundTrip(randomValues(96, 101), dtype);
    auto b = roundTrip(randomValues(96, 102), dtype);
    Buffer &y = output(xs, dtype);
    ASSERT_EQ(run(cleave_cuda_layer_norm,
                  {&input(xs, x, dtype), &input({96}, s, dtype),
                   &input({96}, b, dtype)},
                  {&y}, {2}, {1e-5}),
              0)
        << ctx->error;
    std::vector<float> e(x.size());
    for (size_t r = 0; r < 12; ++r) {
      double m = 0, v = 0;
      for (int j = 0; j < 96; ++j)
        m += x[r * 96 + j];
      m /= 96;
      for (int j = 0; j < 96; ++j)
        v += (x[r * 96 + j] - m) * (x[r * 96 + j] - m);
      v /= 96;
      for (int j = 0; j < 96; ++j)
        e[r * 96 + j] = static_cast<float>(
            (x[r * 96 + j] - m) / std::sqrt(v + 1e-5) * s[j] + b[j]);
    }
    expectNear(e, y, dtype == CLEAVE_F32 ? 1e-4 : 3e-2);
  }
}

TEST_F(CudaKernelTest, LayerNormBroadcastScaleNoBias) {
  Shape xs{2, 3, 4};
  auto x = randomValues(24, 103), s = randomValues(3, 104);
  Buffer &y = output(xs);
  // Normalise over [1, 3) with a scale of shape 3 x 1.
  ASSERT_EQ(run(cleave_cuda_layer_norm, {&input(xs, x), &input({3, 1}, s)},
                {&y}, {1}, {1e-5}),
            0)
      << ctx->error;
  std::vector<float> e(24);
  for (int r = 0; r < 2; ++r) {
    double m = 0, v = 0;
    for (int j = 0; j < 12; ++j)
      m += x[r * 12 + j];
    m /= 12;
    for (int j = 0; j < 12; ++j)
      v += (x[r * 12 + j] - m) * (x[r * 12 + j] - m);
    v /= 12;
    for (int j = 0; j < 12; ++j)
      e[r * 12 + j] = static_cast<float>((x[r * 12 + j] - m) /
                                         std::sqrt(v + 1e-5) * s[j / 4]);
  }
  expectNear(e, y);
}

TEST_F(CudaKernelTest, RmsNormAllTypesAndBroadcastScale) {
  Shape xs{3, 4, 96};
  for (int32_t dtype : {CLEAVE_F32, CLEAVE_F16, CLEAVE_BF16}) {
    auto x = roundTrip(randomValues(count(xs), 105), dtype);
    auto s = roundTrip(randomValues(96, 106), dtype);
    Buffer &y = output(xs, dtype);
    ASSERT_EQ(run(cleave_cuda_rms_norm,
                  {&input(xs, x, dtype), &input({96}, s, dtype)}, {&y}, {2},
                  {1e-6}),
              0)
        << ctx->error;
    std::vector<float> e(x.size());
    for (size_t r = 0; r < 12; ++r) {
      double sq = 0;
      for (int j = 0; j < 96; ++j)
        sq += double(x[r * 96 + j]) * x[r * 96 + j];
      double inv = 1.0 / std::sqrt(sq / 96 + 1e-6);
      for (int j = 0; j < 96; ++j)
        e[r * 96 + j] = static_cast<float>(x[r * 96 + j] * inv * s[j]);
    }
    expectNear(e, y, dtype == CLEAVE_F32 ? 1e-4 : 3e-2);
  }

  // Over [1, 3) of 2 x 3 x 4 with a scale of shape 3 x 1.
  Shape small{2, 3, 4};
  auto x = randomValues(24, 107), s = randomValues(3, 108);
  Buffer &y = output(small);
  ASSERT_EQ(run(cleave_cuda_rms_norm, {&input(small, x), &input({3, 1}, s)},
                {&y}, {1}, {1e-5}),
            0)
      << ctx->error;
  std::vector<float> e(24);
  for (int r = 0; r < 2; ++r) {
    double sq = 0;
    for (int j = 0; j < 12; ++j)
      sq += double(x[r * 12 + j]) * x[r * 12 + j];
    double inv = 1.0 / std::sqrt(sq / 12 + 1e-5);
    for (int j = 0; j < 12; ++j)
      e[r * 12 + j] = static_cast<float>(x[r * 12 + j] * inv * s[j / 4]);
  }
  expectNear(e, y);
}

/// Row (b, h, s) of a rank-4 (b x h x s x d) or packed rank-3
/// (b x s x h*d) tensor of `heads` heads, `size` entries each.
int64_t headRow(bool packed, int64_t heads, int64_t sequence, int64_t size,
                int64_t b, int64_t h, int64_t s) {
  return packed ? ((b * sequence + s) * heads + h) * size
                : ((b * heads + h) * sequence + s) * size;
}

TEST_F(CudaKernelTest, RotaryEmbeddingLayoutsAndTypes) {
  const int64_t B = 2, H = 3, S = 5, D = 8, P = 16;
  for (int32_t dtype : {CLEAVE_F32, CLEAVE_F16})
    for (bool packed : {false, true}) {
      // Rank 4 rotates whole heads by halves; rank 3 rotates the first half
      // of each head interleaved.
      const int64_t rot = packed ? D / 2 : D, half = rot / 2;
      Shape xs = packed ? Shape{B, S, H * D} : Shape{B, H, S, D};
      auto x = roundTrip(randomValues(count(xs), 120), dtype);
      auto c = roundTrip(randomValues(P * half, 121), dtype);
      auto sn = roundTrip(randomValues(P * half, 122), dtype);
      std::vector<int64_t> pos = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
      Buffer &y = output(xs, dtype);
      ASSERT_EQ(run(cleave_cuda_rotary_embedding,
                    {&input(xs, x, dtype), &input({P, half}, c, dtype),
                     &input({P, half}, sn, dtype), &integers({B, S}, pos)},
                    {&y}, {H, rot, packed ? 1 : 0}),
                0)
          << ctx->error;
      std::vector<float> e = x;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t s = 0; s < S; ++s) {
            int64_t base = headRow(packed, H, S, D, b, h, s);
            int64_t p = pos[b * S + s];
            for (int64_t i = 0; i < half; ++i) {
              int64_t i1 = packed ? 2 * i : i,
                      i2 = packed ? 2 * i + 1 : i + half;
              float x1 = x[base + i1], x2 = x[base + i2];
              e[base + i1] = c[p * half + i] * x1 - sn[p * half + i] * x2;
              e[base + i2] = sn[p * half + i] * x1 + c[p * half + i] * x2;
            }
          }
      expectNear(e, y, dtype == CLEAVE_F32 ? 1e-5 : 1e-2);
    }
}

TEST_F(CudaKernelTest, AttentionMasksGroupsAndLayouts) {
  const int64_t B = 2, H = 4, KV = 2, SQ = 3, SK = 5, D = 8, DV = 6;
  for (int32_t dtype : {CLEAVE_F32, CLEAVE_BF16})
    for (bool packed : {false, true}) {
      // Rank 4: GQA, causal, a boolean mask (one row fully masked), scale.
      // Rank 3: an additive mask and a softcap.
      Shape qs = packed ? Shape{B, SQ, H * D} : Shape{B, H, SQ, D};
      Shape ks = packed ? Shape{B, SK, KV * D} : Shape{B, KV, SK, D};
      Shape vs = packed ? Shape{B, SK, KV * DV} : Shape{B, KV, SK, DV};
      Shape ys = packed ? Shape{B, SQ, H * DV} : Shape{B, H, SQ, DV};
      auto q = roundTrip(randomValues(count(qs), 130), dtype);
      auto k = roundTrip(randomValues(count(ks), 131), dtype);
      auto v = roundTrip(randomValues(count(vs), 132), dtype);
      auto additive = roundTrip(randomValues(SQ * SK, 133, -2.f, 2.f), dtype);
      std::vector<uint8_t> keep(B * SQ * SK);
      for (size_t i = 0; i < keep.size(); ++i)
        keep[i] = (i * 7 + 3) % 4 != 0;
      for (int64_t j = 0; j < SK; ++j)
        keep[(1 * SQ + 2) * SK + j] = 0; // batch 1, query 2 sees nothing
      const float scale = 0.3f, softcap = packed ? 1.5f : 0.f;
      const bool causal = !packed;
      // The fully masked row is NaN, or zeros with nan_to_zero.
      const bool nanToZero = !packed && dtype == CLEAVE_F32;
      Buffer &mask = packed ? input({SQ, SK}, additive, dtype)
                            : bytesBuffer({B, 1, SQ, SK}, CLEAVE_BOOL, keep);
      Buffer &y = output(ys, dtype);
      ASSERT_EQ(run(cleave_cuda_attention,
                    {&input(qs, q, dtype), &input(ks, k, dtype),
                     &input(vs, v, dtype), &mask},
                    {&y}, {H, KV, causal ? 1 : 0, nanToZero ? 1 : 0},
                    {scale, softcap}),
                0)
          << ctx->error;
      std::vector<float> e(count(ys));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t i = 0; i < SQ; ++i) {
            int64_t kvh = h / (H / KV);
            std::vector<double> p(SK);
            double max = -INFINITY, sum = 0;
            for (int64_t j = 0; j < SK; ++j) {
              double dot = 0;
              for (int64_t d = 0; d < D; ++d)
                dot += double(q[headRow(packed, H, SQ, D, b, h, i) + d]) *
                       k[headRow(packed, KV, SK, D, b, kvh, j) + d];
              double sc = dot * scale;
              if (softcap > 0)
                sc = softcap * std::tanh(sc / softcap);
              if (packed)
                sc += additive[i * SK + j];
              else if (!keep[(b * SQ + i) * SK + j])
                sc = -INFINITY;
              if (causal && j > i)
                sc = -INFINITY;
              p[j] = sc;
              max = std::max(max, sc);
            }
            for (int64_t j = 0; j < SK; ++j)
              sum += p[j] = std::exp(p[j] - max);
            for (int64_t d = 0; d < DV; ++d) {
              double acc = 0;
              for (int64_t j = 0; j < SK; ++j)
                acc +=
                    p[j] / sum * v[headRow(packed, KV, SK, DV, b, kvh, j) + d];
              e[headRow(packed, H, SQ, DV, b, h, i) + d] =
                  max == -INFINITY ? (nanToZero ? 0.f : NAN)
                                   : static_cast<float>(acc);
            }
          }
      expectNear(e, y, dtype == CLEAVE_F32 ? 1e-4 : 3e-2);
    }
}

TEST_F(CudaKernelTest, SoftmaxAndLogSoftmax) {
  Shape xs{3, 5, 40};
  for (int32_t dtype : {CLEAVE_F32, CLEAVE_F16, CLEAVE_BF16})
    for (int axis : {1, 2})
      for (bool log : {false, true}) {
        auto x = roundTrip(randomValues(count(xs), 110, -4.f, 4.f), dtype);
        Buffer &y = output(xs, dtype);
        ASSERT_EQ(run(log ? cleave_cuda_log_softmax : cleave_cuda_softmax,
                      {&input(xs, x, dtype)}, {&y}, {axis, 0}),
                  0);
        int64_t outer = axis == 1 ? 3 : 15, len = xs[axis],
                inner = axis == 1 ? 40 : 1;
        std::vector<float> e(x.size());
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t q = 0; q < inner; ++q) {
            double m = -INFINITY, sum = 0;
            for (int64_t j = 0; j < len; ++j)
              m = std::max<double>(m, x[(o * len + j) * inner + q]);
            for (int64_t j = 0; j < len; ++j)
              sum += std::exp(x[(o * len + j) * inner + q] - m);
            for (int64_t j = 0; j < len; ++j) {
              double v = x[(o * len + j) * inner + q] - m;
              e[(o * len + j) * inner + q] = static_cast<float>(
                  log ? v - std::log(sum) : std::exp(v) / sum);
            }
          }
        expectNear(e, y, dtype == CLEAVE_F32 ? 1e-4 : 2e-2);
      }
}

/// Three steps of sgd_update (momentum, weight decay, Nesterov; without
/// momentum, no buffer) and of
/// adam_update (Adam and AdamW) on a parameter of 1000 elements, against
/// PyTorch's formulas in double; the gradient is scaled by 0.5 and the
/// learning rate warms up over 2 steps.
TEST_F(CudaKernelTest, OptimizerUpdates) {
  const int64_t n = 1000;
  Shape ps{n}, scalar{};
  std::vector<float> p0 = randomValues(n, 120), g = randomValues(n, 121);
  const double lr = 0.1, scale = 0.5;
  auto lrAt = [&](int step) { return step < 2 ? lr * (step + 1) / 2 : lr; };
  for (bool nesterov : {false, true}) {
    Buffer &p = input(ps, p0), &buffer = input(ps, std::vector<float>(n, 0));
    Buffer &step = input(scalar, {0.f});
    Buffer &gradient = input(ps, g), &factor = input(scalar, {float(scale)});
    std::vector<double> rp(p0.begin(), p0.end()), rb(n, 0);
    for (int s = 0; s < 3; ++s) {
      ASSERT_EQ(run(cleave_cuda_sgd_update, {&gradient, &factor},
                    {&p, &step, &buffer}, {nesterov ? 1 : 0, 2, 0},
                    {lr, 0.9, 0.0, 0.01, 0.0}),
                0);
      for (int64_t i = 0; i < n; ++i) {
        double d = g[i] * scale + 0.01 * rp[i];
        rb[i] = s == 0 ? d : 0.9 * rb[i] + d;
        rp[i] -= lrAt(s) * (nesterov ? d + 0.9 * rb[i] : rb[i]);
      }
    }
    expectNear(std::vector<float>(rp.begin(), rp.end()), p);
    expectNear(std::vector<float>(rb.begin(), rb.end()), buffer);
    expectNear({3.f}, step);
  }
  // Without momentum there is no buffer.
  {
    Buffer &p = input(ps, p0), &step = input(scalar, {0.f});
    Buffer &gradient = input(ps, g), &factor = input(scalar, {float(scale)});
    std::vector<double> rp(p0.begin(), p0.end());
    for (int s = 0; s < 3; ++s) {
      ASSERT_EQ(run(cleave_cuda_sgd_update, {&gradient, &factor}, {&p, &step},
                    {0, 2, 0}, {lr, 0.0, 0.0, 0.01, 0.0}),
                0);
      for (int64_t i = 0; i < n; ++i)
        rp[i] -= lrAt(s) * (g[i] * scale + 0.01 * rp[i]);
    }
    expectNear(std::vector<float>(rp.begin(), rp.end()), p);
    expectNear({3.f}, step);
  }
  for (bool decoupled : {false, true}) {
    Buffer &p = input(ps, p0), &m = input(ps, std::vector<float>(n, 0));
    Buffer &v = input(ps, std::vector<float>(n, 0)),
           &step = input(scalar, {0.f});
    Buffer &gradient = input(ps, g), &factor = input(scalar, {float(scale)});
    std::vector<double> rp(p0.begin(), p0.end()), rm(n, 0), rv(n, 0);
    const double b1 = 0.8, b2 = 0.99, eps = 1e-8, wd = 0.1;
    for (int s = 0; s < 3; ++s) {
      ASSERT_EQ(run(cleave_cuda_adam_update, {&gradient, &factor},
                    {&p, &m, &v, &step}, {decoupled ? 1 : 0, 2, 0},
                    {lr, b1, b2, eps, wd, 0.0}),
                0);
      double rate = lrAt(s);
      for (int64_t i = 0; i < n; ++i) {
        double d = g[i] * scale;
        if (decoupled)
          rp[i] *= 1 - rate * wd;
        else
          d += wd * rp[i];
        rm[i] = b1 * rm[i] + (1 - b1) * d;
        rv[i] = b2 * rv[i] + (1 - b2) * d * d;
        double c1 = 1 - std::pow(b1, s + 1), c2 = 1 - std::pow(b2, s + 1);
        rp[i] -= rate / c1 * rm[i] / (std::sqrt(rv[i]) / std::sqrt(c2) + eps);
      }
    }
    expectNear(std::vector<float>(rp.begin(), rp.end()), p);
    expectNear(std::vector<float>(rm.begin(), rm.end()), m);
    expectNear(std::vector<float>(rv.begin(), rv.end()), v);
    expectNear({3.f}, step);
  }
}

/// A gradient scale that is not finite skips the step on the device too:
/// the parameter, the state and the step count keep their values (the
/// scale is read on the device, as the compiled step computes it).
TEST_F(CudaKernelTest, OptimizerUpdatesSkipNonFiniteScale) {
  const int64_t n = 1000;
  Shape ps{n}, scalar{};
  std::vector<float> p0 = randomValues(n, 130), g = randomValues(n, 131);
  std::vector<float> state = randomValues(n, 132);
  for (float skip : {INFINITY, NAN}) {
    Buffer &p = input(ps, p0), &buffer = input(ps, state);
    Buffer &step = input(scalar, {4.f});
    Buffer &gradient = input(ps, g), &factor = input(scalar, {skip});
    ASSERT_EQ(run(cleave_cuda_sgd_update, {&gradient, &factor},
                  {&p, &step, &buffer}, {0, 0, 0}, {0.1, 0.9, 0.0, 0.0, 0.0}),
              0);
    expectNear(p0, p, 0);
    expectNear(state, buffer, 0);
    expectNear({4.f}, step, 0);
    Buffer &m = input(ps, state), &v = input(ps, std::vector<float>(n, 1));
    ASSERT_EQ(run(cleave_cuda_adam_update, {&gradient, &factor},
                  {&p, &m, &v, &step}, {1, 0, 0},
                  {0.1, 0.9, 0.999, 1e-8, 0.01, 0.0}),
              0);
    expectNear(p0, p, 0);
    expectNear(state, m, 0);
    expectNear(std::vector<float>(n, 1), v, 0);
    expectNear({4.f}, step, 0);
  }
}

/// With nan_to_zero a line of -inf (a fully masked attention row) gives
/// zeros instead of NaN, along the last axis (row kernel) and an inner one
/// (column kernel).
TEST_F(CudaKernelTest, SoftmaxNanToZero) {
  const float inf = INFINITY;
  std::vector<float> x = {-inf, -inf, -inf, 0, -inf, 0};
  Buffer &rows = output({2, 3});
  ASSERT_EQ(run(cleave_cuda_softmax, {&input({2, 3}, x)}, {&rows}, {1, 1}), 0)
      << ctx->error;
  expectNear({0, 0, 0, 0.5f, 0, 0.5f}, rows);
  Buffer &columns = output({2, 3});
  ASSERT_EQ(run(cleave_cuda_softmax, {&input({2, 3}, x)}, {&columns}, {0, 1}),
            0)
      << ctx->error;
  expectNear({0, 0, 0, 1, 0, 1}, columns);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST_F(CudaKernelTest, Reductions) {
  Shape xs{4, 6, 50};
  auto x = randomValues(count(xs), 120, 0.5f, 1.5f);
  struct Case {
    std::vector<int64_t> axes;
    Shape ys;
  } cases[] = {
      {{2}, {4, 6}},
      {{0, 2}, {1, 6, 1}},
      {{1}, {4, 50}},
      {{0, 1, 2}, {}},
      {{}, {4, 6, 50}}}; // no axis: one element per output, still squared
  CleaveKernelFn kernels[] = {
      cleave_cuda_reduce_sum,       cleave_cuda_reduce_mean,
      cleave_cuda_reduce_max,       cleave_cuda_reduce_min,
      cleave_cuda_reduce_prod,      cleave_cuda_reduce_l2,
      cleave_cuda_reduce_sum_square};
  for (const Case &c : cases)
    for (int op = 0; op < 7; ++op) {
      if (op == 4 && c.axes.size() > 1)
        continue; // products of hundreds of values leave fp32's range
      Buffer &y = output(c.ys);
      std::vector<int64_t> ints{static_cast<int64_t>(c.axes.size())};
      ints.insert(ints.end(), c.axes.begin(), c.axes.end());
      ASSERT_EQ(run(kernels[op], {&input(xs, x)}, {&y}, ints), 0) << ctx->error;
      // Reference: accumulate per output index of the kept dimensions.
      Shape kept;
      for (int d = 0; d < 3; ++d)
        if (std::find(c.axes.begin(), c.axes.end(), d) == c.axes.end())
          kept.push_back(xs[d]);
      int64_t outputs = count(kept);
      std::vector<double> acc(outputs, op == 2   ? -INFINITY
                                       : op == 3 ? INFINITY
                                       : op == 4 ? 1.0
                                                 : 0.0);
      std::vector<int64_t> counts(outputs, 0);
      for (int64_t i = 0; i < count(xs); ++i) {
        auto co = coordsOf(i, xs);
        int64_t o = 0;
        for (int d = 0; d < 3; ++d)
          if (std::find(c.axes.begin(), c.axes.end(), d) == c.axes.end())
            o = o * xs[d] + co[d];
        double v = x[i];
        switch (op) {
        case 2:
          acc[o] = std::max(acc[o], v);
          break;
        case 3:
          acc[o] = std::min(acc[o], v);
          break;
        case 4:
          acc[o] *= v;
          break;
        case 5:
        case 6:
          acc[o] += v * v;
          break;
        default:
          acc[o] += v;
        }
        ++counts[o];
      }
      std::vector<float> e(outputs);
      for (int64_t o = 0; o < outputs; ++o)
        e[o] = static_cast<float>(op == 1   ? acc[o] / counts[o]
                                  : op == 5 ? std::sqrt(acc[o])
                                            : acc[o]);
      expectNear(e, y, 1e-4);
    }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST_F(CudaKernelTest, TransposeAnyElementSize) {
  Shape xs{2, 3, 4};
  std::vector<int64_t> x64(24);
  std::iota(x64.begin(), x64.end(), 1000000000000LL);
  Buffer &in = integers(xs, x64);
  Buffer &y = bytesBuffer({4, 2, 3}, CLEAVE_I64, std::vector<uint8_t>(24 * 8));
  ASSERT_EQ(run(cleave_cuda_transpose, {&in}, {&y}, {2, 0, 1}), 0);
  std::vector<int64_t> got(24);
  std::memcpy(got.data(), y.host.data(), 24 * 8);
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        EXPECT_EQ(got[(k * 2 + i) * 3 + j], x64[(i * 3 + j) * 4 + k]);
  // fp16: two-byte elements.
  auto x = roundTrip(randomValues(24, 130), CLEAVE_F16);
  Buffer &h = output({3, 4, 2}, CLEAVE_F16);
  ASSERT_EQ(
      run(cleave_cuda_transpose, {&input(xs, x, CLEAVE_F16)}, {&h}, {1, 2, 0}),
      0);
  std::vector<float> e(24);
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t i = 0; i < 2; ++i)
        e[(j * 4 + k) * 2 + i] = x[(i * 3 + j) * 4 + k];
  expectNear(e, h, 0);
}

TEST_F(CudaKernelTest, ConcatAndSplit) {
  auto a = randomValues(2 * 3 * 4, 140), b = randomValues(2 * 5 * 4, 141);
  Buffer &y = output({2, 8, 4});
  ASSERT_EQ(run(cleave_cuda_concat,
                {&input({2, 3, 4}, a), &input({2, 5, 4}, b)}, {&y}, {1}),
            0);
  std::vector<float> e;
  for (int n = 0; n < 2; ++n) {
    e.insert(e.end(), a.begin() + n * 12, a.begin() + n * 12 + 12);
    e.insert(e.end(), b.begin() + n * 20, b.begin() + n * 20 + 20);
  }
  expectNear(e, y, 0);
  Buffer &s0 = output({2, 3, 4}), &s1 = output({2, 5, 4});
  ASSERT_EQ(run(cleave_cuda_split, {&input({2, 8, 4}, e)}, {&s0, &s1}, {1}), 0);
  expectNear(a, s0, 0);
  expectNear(b, s1, 0);
}

TEST_F(CudaKernelTest, SliceWithNegativeStep) {
  Shape xs{4, 10};
  auto x = randomValues(40, 150);
  // rows 1..3 step 2 -> {1, 3}; columns 8 down to 1 step -3 -> {8, 5, 2}.
  Buffer &y = output({2, 3});
  ASSERT_EQ(run(cleave_cuda_slice, {&input(xs, x)}, {&y}, {1, 8, 4, 1, 2, -3}),
            0);
  std::vector<float> e;
  for (int r : {1, 3})
    for (int c : {8, 5, 2})
      e.push_back(x[r * 10 + c]);
  expectNear(e, y, 0);
}

TEST_F(CudaKernelTest, GatherIndicesAndRangeError) {
  Shape xs{3, 5, 2};
  auto x = randomValues(30, 160);
  for (bool wide : {true, false}) {
    Buffer &idx = wide ? integers<int64_t>({2, 2}, {4, -1, 0, 2})
                       : integers<int32_t>({2, 2}, {4, -1, 0, 2});
    Buffer &y = output({3, 2, 2, 2});
    ASSERT_EQ(run(cleave_cuda_gather, {&input(xs, x), &idx}, {&y}, {1}), 0);
    std::vector<float> e;
    for (int p = 0; p < 3; ++p)
      for (int k : {4, 4, 0, 2})
        for (int q = 0; q < 2; ++q)
          e.push_back(x[(p * 5 + k) * 2 + q]);
    expectNear(e, y, 0);
  }
  // An index out of range is reported by the next synchronisation, naming
  // the step that launched the kernel.
  ctx->step = 3;
  ctx->node = "embed";
  Buffer &bad = integers<int64_t>({1}, {5});
  Buffer &y = output({3, 1, 2});
  std::vector<CleaveTensor> in{input(xs, x).tensor(), bad.tensor()};
  CleaveTensor out = y.tensor();
  int64_t ints[] = {1};
  EXPECT_EQ(cleave_cuda_gather(ctx, in.data(), 2, &out, 1, ints, nullptr), 0);
  try {
    device->synchronize();
    ADD_FAILURE() << "synchronize() did not report the bad index";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "step 3 (node 'embed'), kernel gather: index 5 is out of "
                  "range [-5, 5) for dimension 1 of data"),
              std::string::npos)
        << e.what();
  }
  // Reported once.
  EXPECT_NO_THROW(device->synchronize());
}

/// Runs `kernel` on arguments with a bad index and expects the next
/// synchronisation to report `message`, once.
#define EXPECT_DEVICE_ERROR(call, message)                                     \
  do {                                                                         \
    EXPECT_EQ((call), 0);                                                      \
    try {                                                                      \
      device->synchronize();                                                   \
      ADD_FAILURE() << "synchronize() did not report the bad index";           \
    } catch (const std::exception &e) {                                        \
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)        \
          << e.what();                                                         \
    }                                                                          \
    EXPECT_NO_THROW(device->synchronize());                                    \
  } while (false)

std::vector<float> iota(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i);
  return v;
}

TEST_F(CudaKernelTest, GatherNDSlicesElementsAndBatches) {
  Buffer &data = input({2, 3, 4}, iota(24));
  Buffer &rows = integers<int64_t>({2, 2}, {1, -1, 0, 1});
  Buffer &y = output({2, 4});
  ASSERT_EQ(run(cleave_cuda_gather_nd, {&data, &rows}, {&y}, {0}), 0);
  expectNear({20, 21, 22, 23, 4, 5, 6, 7}, y, 0);
  Buffer &elems = integers<int32_t>({3, 3}, {0, 0, 0, 1, 2, 3, -1, -3, -4});
  Buffer &e = output({3});
  ASSERT_EQ(run(cleave_cuda_gather_nd, {&data, &elems}, {&e}, {0}), 0);
  expectNear({0, 23, 12}, e, 0);
  Buffer &batched = input({2, 3, 2}, iota(12));
  Buffer &idx = integers<int64_t>({2, 2, 1}, {2, 0, -1, 1});
  Buffer &b = output({2, 2, 2});
  ASSERT_EQ(run(cleave_cuda_gather_nd, {&batched, &idx}, {&b}, {1}), 0);
  expectNear({4, 5, 0, 1, 10, 11, 8, 9}, b, 0);
}

TEST_F(CudaKernelTest, ScatterNDReductionsInOrder) {
  Buffer &idx = integers<int64_t>({3, 1}, {1, -3, 3});
  struct Case {
    int64_t reduction;
    std::vector<float> expected;
  };
  for (const Case &c :
       std::vector<Case>{{CLEAVE_SCATTER_NONE, {2, 2, 3, 4, 2, 2, 5, 6}},
                         {CLEAVE_SCATTER_ADD, {2, 2, 6, 8, 2, 2, 7, 8}},
                         {CLEAVE_SCATTER_MUL, {2, 2, 6, 16, 2, 2, 10, 12}},
                         {CLEAVE_SCATTER_MAX, {2, 2, 3, 4, 2, 2, 5, 6}},
                         {CLEAVE_SCATTER_MIN, {2, 2, 1, 2, 2, 2, 2, 2}}}) {
    for (int32_t dtype : {CLEAVE_F32, CLEAVE_F16, CLEAVE_BF16}) {
      Buffer &data = input({4, 2}, std::vector<float>(8, 2), dtype);
      Buffer &u = input({3, 2}, {1, 2, 3, 4, 5, 6}, dtype);
      Buffer &y = output({4, 2}, dtype);
      ASSERT_EQ(
          run(cleave_cuda_scatter_nd, {&data, &idx, &u}, {&y}, {c.reduction}),
          0);
      expectNear(c.expected, y, 0);
    }
  }
}

TEST_F(CudaKernelTest, GatherAndScatterElements) {
  Buffer &data = input({3, 3}, iota(9));
  Buffer &cols = integers<int64_t>({2, 2}, {0, 0, 1, 0});
  Buffer &y = output({2, 2});
  ASSERT_EQ(run(cleave_cuda_gather_elements, {&data, &cols}, {&y}, {1}), 0);
  expectNear({0, 0, 4, 3}, y, 0);
  Buffer &rows = integers<int32_t>({2, 3}, {1, 2, 0, 2, 0, -3});
  Buffer &r = output({2, 3});
  ASSERT_EQ(run(cleave_cuda_gather_elements, {&data, &rows}, {&r}, {0}), 0);
  expectNear({3, 7, 2, 6, 1, 2}, r, 0);

  Buffer &ones = input({2, 3}, std::vector<float>(6, 1));
  Buffer &idx = integers<int64_t>({2, 2}, {1, 1, -1, 0});
  Buffer &upd = input({2, 2}, {2, 3, 4, 5});
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
    Buffer &s = output({2, 3});
    ASSERT_EQ(run(cleave_cuda_scatter_elements, {&ones, &idx, &upd}, {&s},
                  {1, c.reduction}),
              0);
    expectNear(c.expected, s, 0);
  }
}

TEST_F(CudaKernelTest, OneHotAndTrilu) {
  Buffer &idx = integers<int64_t>({4}, {0, -1, 3, -4});
  Buffer &values = input({2}, {-1, 7});
  Buffer &last = output({4, 3});
  ASSERT_EQ(run(cleave_cuda_one_hot, {&idx, &values}, {&last}, {1}), 0);
  expectNear({7, -1, -1, -1, -1, 7, -1, -1, -1, -1, -1, -1}, last, 0);
  Buffer &first = output({3, 4});
  ASSERT_EQ(run(cleave_cuda_one_hot, {&idx, &values}, {&first}, {0}), 0);
  expectNear({7, -1, -1, -1, -1, -1, -1, -1, -1, 7, -1, -1}, first, 0);

  Buffer &x = input({2, 3, 3}, iota(18));
  Buffer &upper = output({2, 3, 3});
  ASSERT_EQ(run(cleave_cuda_trilu, {&x}, {&upper}, {0, 1}), 0);
  expectNear({0, 1, 2, 0, 4, 5, 0, 0, 8, 9, 10, 11, 0, 13, 14, 0, 0, 17}, upper,
             0);
  Buffer &lower = output({2, 3, 3});
  ASSERT_EQ(run(cleave_cuda_trilu, {&x}, {&lower}, {-1, 0}), 0);
  expectNear({0, 0, 0, 3, 0, 0, 6, 7, 0, 0, 0, 0, 12, 0, 0, 15, 16, 0}, lower,
             0);
}

TEST_F(CudaKernelTest, IndexErrorsNameTheStep) {
  // The site is the step being run when the kernel is launched.
  ctx->step = 7;
  ctx->node = "select_experts";
  Buffer &data = input({2, 3, 4}, iota(24));
  Buffer &bad = integers<int64_t>({2, 2}, {1, 2, 0, 3});
  Buffer &y = output({2, 4});
  std::vector<CleaveTensor> in{data.tensor(), bad.tensor()};
  CleaveTensor out = y.tensor();
  int64_t ints[] = {0, 0};
  EXPECT_DEVICE_ERROR(
      cleave_cuda_gather_nd(ctx, in.data(), 2, &out, 1, ints, nullptr),
      "step 7 (node 'select_experts'), kernel gather_nd: index 3 is out of "
      "range [-3, 3) for dimension 1 of data");
  ctx->node = nullptr;

  Buffer &square = input({3, 3}, iota(9));
  Buffer &cols = integers<int64_t>({2, 2}, {0, 0, 1, -5});
  Buffer &r = output({2, 2});
  in = {square.tensor(), cols.tensor()};
  out = r.tensor();
  int64_t axis[] = {1, 0};
  EXPECT_DEVICE_ERROR(
      cleave_cuda_gather_elements(ctx, in.data(), 2, &out, 1, axis, nullptr),
      "step 7, kernel gather_elements: index -5 is out of range [-3, 3) for "
      "dimension 1 of data");

  // A scatter skips the bad update and applies the others.
  ctx->step = -1;
  Buffer &target = input({4, 2}, std::vector<float>(8, 2));
  Buffer &rows = integers<int32_t>({3, 1}, {0, 4, 3});
  Buffer &upd = input({3, 2}, {1, 2, 3, 4, 5, 6});
  Buffer &s = output({4, 2});
  std::vector<CleaveTensor> sin{target.tensor(), rows.tensor(), upd.tensor()};
  CleaveTensor sout = s.tensor();
  int64_t add[] = {CLEAVE_SCATTER_ADD, 0};
  EXPECT_DEVICE_ERROR(
      cleave_cuda_scatter_nd(ctx, sin.data(), 3, &sout, 1, add, nullptr),
      "kernel scatter_nd: index 4 is out of range [-4, 4)");
  device->copyToHost(s.host.data(), s.device, s.host.size());
  expectNear({3, 4, 2, 2, 2, 2, 7, 8}, s, 0);

  Buffer &ones = input({2, 3}, std::vector<float>(6, 1));
  Buffer &idx = integers<int64_t>({2, 2}, {1, 3, 0, 0});
  Buffer &eupd = input({2, 2}, {2, 3, 4, 5});
  Buffer &e = output({2, 3});
  std::vector<CleaveTensor> ein{ones.tensor(), idx.tensor(), eupd.tensor()};
  CleaveTensor eout = e.tensor();
  int64_t eints[] = {1, CLEAVE_SCATTER_NONE, 0};
  EXPECT_DEVICE_ERROR(cleave_cuda_scatter_elements(ctx, ein.data(), 3, &eout, 1,
                                                   eints, nullptr),
                      "kernel scatter_elements: index 3 is out of range "
                      "[-3, 3) for dimension 1 of data");
}

TEST_F(CudaKernelTest, PadModes) {
  Shape xs{2, 3};
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  // pads: begins {1, 2}, ends {0, 1} -> 3 x 6.
  std::vector<std::vector<float>> expected = {
      // constant 9
      {9, 9, 9, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9},
      // reflect
      {6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5},
      // edge
      {1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6},
      // wrap
      {5, 6, 4, 5, 6, 4, 2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4},
  };
  for (int mode = 0; mode < 4; ++mode) {
    Buffer &y = output({3, 6});
    ASSERT_EQ(
        run(cleave_cuda_pad, {&input(xs, x)}, {&y}, {1, 2, 0, 1, mode}, {9.0}),
        0);
    expectNear(expected[mode], y, 0);
  }
}

TEST_F(CudaKernelTest, TileExpandCopy) {
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  Buffer &t = output({4, 6});
  ASSERT_EQ(run(cleave_cuda_tile, {&input({2, 3}, x)}, {&t}), 0);
  std::vector<float> et;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c)
      et.push_back(x[(r % 2) * 3 + c % 3]);
  expectNear(et, t, 0);
  Buffer &e = output({2, 2, 3});
  ASSERT_EQ(run(cleave_cuda_expand, {&input({2, 1, 3}, x)}, {&e}), 0);
  expectNear({1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, e, 0);
  Buffer &c = output({3, 2});
  ASSERT_EQ(run(cleave_cuda_copy, {&input({2, 3}, x)}, {&c}), 0);
  expectNear(x, c, 0);
}

TEST_F(CudaKernelTest, ResizeModes) {
  Shape xs{1, 1, 3, 4};
  auto x = randomValues(12, 170);
  // nearest, asymmetric, floor: out[i] = x[floor(i / 2)].
  Buffer &n = output({1, 1, 6, 8});
  ASSERT_EQ(run(cleave_cuda_resize, {&input(xs, x)}, {&n}, {0, 1, 2, 0},
                {1, 1, 2, 2, -0.75, 0}),
            0);
  std::vector<float> en;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 8; ++j)
      en.push_back(x[(i / 2) * 4 + j / 2]);
  expectNear(en, n, 0);
  // linear, half_pixel, scale 2 along both spatial dimensions.
  Buffer &l = output({1, 1, 6, 8});
  ASSERT_EQ(run(cleave_cuda_resize, {&input(xs, x)}, {&l}, {1, 0, 0, 0},
                {1, 1, 2, 2, -0.75, 0}),
            0);
  auto axis = [](int o, int size, int &i0, int &i1, float &r) {
    float c = std::max(0.f, (o + 0.5f) / 2.f - 0.5f);
    c = std::min(c, float(size - 1));
    i0 = static_cast<int>(std::floor(c));
    i1 = std::min(i0 + 1, size - 1);
    r = c - i0;
  };
  std::vector<float> el;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 8; ++j) {
      int h0, h1, w0, w1;
      float rh, rw;
      axis(i, 3, h0, h1, rh);
      axis(j, 4, w0, w1, rw);
      float top = x[h0 * 4 + w0] * (1 - rw) + x[h0 * 4 + w1] * rw;
      float bottom = x[h1 * 4 + w0] * (1 - rw) + x[h1 * 4 + w1] * rw;
      el.push_back(top * (1 - rh) + bottom * rh);
    }
  expectNear(el, l, 1e-5);
  // cubic, align_corners, 1-D along the last axis: 4 -> 7.
  Buffer &c = output({1, 1, 3, 7});
  double scale = 7.0 / 4.0;
  ASSERT_EQ(run(cleave_cuda_resize, {&input(xs, x)}, {&c}, {2, 2, 0, 0},
                {1, 1, 1, scale, -0.75, 0}),
            0);
  std::vector<float> ec;
  const float a = -0.75f;
  auto cubic = [&](float t) {
    t = std::fabs(t);
    if (t <= 1)
      return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2)
      return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0.f;
  };
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 7; ++j) {
      float coord = j * 3.f / 6.f;
      int f = static_cast<int>(std::floor(coord));
      double s = 0;
      for (int k = f - 1; k <= f + 2; ++k)
        s += cubic(coord - k) * x[i * 4 + std::clamp(k, 0, 3)];
      ec.push_back(static_cast<float>(s));
    }
  expectNear(ec, c, 1e-4);
}

//===----------------------------------------------------------------------===//
// Recurrent layers
//===----------------------------------------------------------------------===//

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

/// ONNX RNN/GRU/LSTM with default activations, in fp64, one direction.
struct RecurrentReference {
  int gates;
  bool linearBeforeReset = false;
  int64_t seq, batch, input, hidden;

  void run(const float *x, const float *w, const float *r, const float *b,
           const float *peep, bool reverse, float *y, int dirs, int dir,
           float *yh, float *yc) const {
    int64_t H = hidden;
    std::vector<double> h(batch * H, 0.0), c(batch * H, 0.0);
    for (int64_t step = 0; step < seq; ++step) {
      int64_t t = reverse ? seq - 1 - step : step;
      std::vector<double> hn(batch * H), cn(batch * H);
      for (int64_t n = 0; n < batch; ++n) {
        auto xw = [&](int64_t row) {
          double s = b ? b[row] : 0.0;
          for (int64_t k = 0; k < input; ++k)
            s += double(x[(t * batch + n) * input + k]) * w[row * input + k];
          return s;
        };
        auto hr = [&](int64_t row, const std::vector<double> &state) {
          double s = b ? b[gates * H + row] : 0.0;
          for (int64_t k = 0; k < H; ++k)
            s += state[n * H + k] * r[row * H + k];
          return s;
        };
        for (int64_t j = 0; j < H; ++j) {
          int64_t i = n * H + j;
          if (gates == 1) {
            hn[i] = std::tanh(xw(j) + hr(j, h));
          } else if (gates == 3) {
            double z = sigmoid(float(xw(j) + hr(j, h)));
            double rr = sigmoid(float(xw(H + j) + hr(H + j, h)));
            double hh;
            if (linearBeforeReset) {
              hh = std::tanh(xw(2 * H + j) + rr * hr(2 * H + j, h));
            } else {
              std::vector<double> rh(batch * H);
              for (int64_t k = 0; k < H; ++k) {
                double rk = sigmoid(float(xw(H + k) + hr(H + k, h)));
                rh[n * H + k] = rk * h[n * H + k];
              }
              hh = std::tanh(xw(2 * H + j) + hr(2 * H + j, rh));
            }
            hn[i] = (1 - z) * hh + z * h[i];
          } else {
            double pi = peep ? peep[j] : 0, po = peep ? peep[H + j] : 0,
                   pf = peep ? peep[2 * H + j] : 0;
            double ig = sigmoid(float(xw(j) + hr(j, h) + pi * c[i]));
            double fg =
                sigmoid(float(xw(2 * H + j) + hr(2 * H + j, h) + pf * c[i]));
            double cg = std::tanh(xw(3 * H + j) + hr(3 * H + j, h));
            cn[i] = fg * c[i] + ig * cg;
            double og = sigmoid(float(xw(H + j) + hr(H + j, h) + po * cn[i]));
            hn[i] = og * std::tanh(cn[i]);
          }
        }
      }
      h = hn;
      if (gates == 4)
        c = cn;
      for (int64_t i = 0; i < batch * H; ++i)
        y[((t * dirs + dir) * batch) * H + i] = static_cast<float>(h[i]);
    }
    for (int64_t i = 0; i < batch * H; ++i) {
      yh[dir * batch * H + i] = static_cast<float>(h[i]);
      if (yc)
        yc[dir * batch * H + i] = static_cast<float>(c[i]);
    }
  }
};

TEST_F(CudaKernelTest, RecurrentLayers) {
  const int64_t seq = 5, batch = 3, inputSize = 4, H = 6;
  struct Case {
    CleaveKernelFn kernel;
    int gates;
    bool variant;
    std::vector<int64_t> activations;
  } cases[] = {
      {cleave_cuda_rnn, 1, false, {1, 1}},
      {cleave_cuda_gru, 3, false, {2, 1, 2, 1}},
      {cleave_cuda_gru, 3, true, {2, 1, 2, 1}},
      {cleave_cuda_lstm, 4, false, {2, 1, 1, 2, 1, 1}},
  };
  for (const Case &c : cases) {
    const int dirs = 2;
    int64_t G = c.gates * H;
    auto x = randomValues(seq * batch * inputSize, 180);
    auto w = randomValues(dirs * G * inputSize, 181, -0.5f, 0.5f);
    auto r = randomValues(dirs * G * H, 182, -0.5f, 0.5f);
    auto b = randomValues(dirs * 2 * G, 183, -0.5f, 0.5f);
    auto p = randomValues(dirs * 3 * H, 184, -0.5f, 0.5f);
    std::vector<Buffer *> ins = {
        &input({seq, batch, inputSize}, x), &input({dirs, G, inputSize}, w),
        &input({dirs, G, H}, r), &input({dirs, 2 * G}, b), nullptr};
    if (c.gates == 4) {
      ins.push_back(nullptr);
      ins.push_back(&input({dirs, 3 * H}, p));
    }
    Buffer &y = output({seq, dirs, batch, H});
    Buffer &yh = output({dirs, batch, H});
    std::vector<Buffer *> outs = {&y, &yh};
    if (c.gates == 4)
      outs.push_back(&output({dirs, batch, H}));
    std::vector<int64_t> ints{2, H, c.variant ? 1 : 0,
                              static_cast<int64_t>(c.activations.size())};
    ints.insert(ints.end(), c.activations.begin(), c.activations.end());
    ASSERT_EQ(run(c.kernel, ins, outs, ints, {0.0}), 0) << ctx->error;

    RecurrentReference ref{c.gates, c.variant, seq, batch, inputSize, H};
    std::vector<float> ey(seq * dirs * batch * H), eh(dirs * batch * H),
        ec(dirs * batch * H);
    for (int d = 0; d < dirs; ++d)
      ref.run(x.data(), w.data() + d * G * inputSize, r.data() + d * G * H,
              b.data() + d * 2 * G,
              c.gates == 4 ? p.data() + d * 3 * H : nullptr, d == 1, ey.data(),
              dirs, d, eh.data(), c.gates == 4 ? ec.data() : nullptr);
    expectNear(ey, y, 1e-4);
    expectNear(eh, yh, 1e-4);
    if (c.gates == 4)
      expectNear(ec, *outs[2], 1e-4);
  }
}

//===----------------------------------------------------------------------===//
// Selection: top-k, arg max/min, cumulative sums
//===----------------------------------------------------------------------===//

/// A tensor of `outer x size x inner` elements seen around its middle axis:
/// element `j` of line `line`.
int64_t lineElement(const Shape &s, int64_t line, int64_t j) {
  return (line / s[2]) * s[1] * s[2] + line % s[2] + j * s[2];
}

std::vector<int64_t> int64Values(const Buffer &b) {
  std::vector<int64_t> v(b.host.size() / 8);
  std::memcpy(v.data(), b.host.data(), b.host.size());
  return v;
}

/// Values with ties (a few levels) and, where `nans`, a NaN in some lines.
std::vector<float> selectionValues(const Shape &s, unsigned seed, bool nans) {
  std::vector<float> v = randomValues(count(s), seed, -4.f, 4.f);
  for (float &x : v)
    x = std::round(x * 2) / 2;
  if (nans)
    for (int64_t line = 0; line < s[0] * s[2]; line += 3)
      v[lineElement(s, line, (line * 7) % s[1])] = NAN;
  return v;
}

TEST_F(CudaKernelTest, TopKOrdersTiesAndNaN) {
  Shape xs{3, 37, 4};
  const int64_t k = 6;
  Shape ys{3, k, 4};
  for (bool largest : {true, false}) {
    std::vector<float> x = selectionValues(xs, 120, true);
    Buffer &values = output(ys);
    Buffer &indices =
        bytesBuffer(ys, CLEAVE_I64, std::vector<uint8_t>(count(ys) * 8, 0xff));
    ASSERT_EQ(run(cleave_cuda_topk, {&input(xs, x)}, {&values, &indices},
                  {1, k, largest}),
              0)
        << ctx->error;
    // NaN above every number; ties to the lower index.
    auto above = [](float a, float b) {
      return std::isnan(a) ? !std::isnan(b) : (!std::isnan(b) && a > b);
    };
    std::vector<float> ev(count(ys));
    std::vector<int64_t> ei(count(ys));
    for (int64_t line = 0; line < xs[0] * xs[2]; ++line) {
      std::vector<int64_t> order(xs[1]);
      std::iota(order.begin(), order.end(), int64_t(0));
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        float va = x[lineElement(xs, line, a)],
              vb = x[lineElement(xs, line, b)];
        return largest ? above(va, vb) : above(vb, va);
      });
      for (int64_t j = 0; j < k; ++j) {
        ev[lineElement(ys, line, j)] = x[lineElement(xs, line, order[j])];
        ei[lineElement(ys, line, j)] = order[j];
      }
    }
    expectNear(ev, values, 0);
    EXPECT_EQ(int64Values(indices), ei) << "largest " << largest;
  }
}

TEST_F(CudaKernelTest, TopKOfInt64AndHalf) {
  Shape xs{2, 9};
  std::vector<int64_t> xi = {5, -3, 5, 9,  0, 9, -7, 1, 2,
                             4, 4,  4, -1, 8, 8, 3,  0, 4};
  Buffer &vi = bytesBuffer({2, 3}, CLEAVE_I64, std::vector<uint8_t>(48, 0xff));
  Buffer &ii = bytesBuffer({2, 3}, CLEAVE_I64, std::vector<uint8_t>(48, 0xff));
  ASSERT_EQ(run(cleave_cuda_topk, {&integers(xs, xi)}, {&vi, &ii}, {1, 3, 1}),
            0)
      << ctx->error;
  EXPECT_EQ(int64Values(vi), (std::vector<int64_t>{9, 9, 5, 8, 8, 4}));
  EXPECT_EQ(int64Values(ii), (std::vector<int64_t>{3, 5, 0, 4, 5, 0}));

  std::vector<float> xh = {0.5f, -2.f, 3.f, 0.5f, -2.f, 1.f};
  Buffer &vh = output({2, 2}, CLEAVE_F16);
  Buffer &ih = bytesBuffer({2, 2}, CLEAVE_I64, std::vector<uint8_t>(32, 0xff));
  ASSERT_EQ(run(cleave_cuda_topk, {&input({2, 3}, xh, CLEAVE_F16)}, {&vh, &ih},
                {1, 2, 0}),
            0)
      << ctx->error;
  expectNear({-2.f, 0.5f, -2.f, 0.5f}, vh, 0);
  EXPECT_EQ(int64Values(ih), (std::vector<int64_t>{1, 0, 1, 0}));
}

TEST_F(CudaKernelTest, ArgMaxAndArgMin) {
  Shape xs{4, 33, 5}, ys{4, 1, 5};
  std::vector<float> x = selectionValues(xs, 121, false);
  for (bool max : {true, false})
    for (bool last : {false, true}) {
      Buffer &y = bytesBuffer(ys, CLEAVE_I64,
                              std::vector<uint8_t>(count(ys) * 8, 0xff));
      ASSERT_EQ(run(max ? cleave_cuda_arg_max : cleave_cuda_arg_min,
                    {&input(xs, x)}, {&y}, {1, last}),
                0)
          << ctx->error;
      std::vector<int64_t> e(count(ys));
      for (int64_t line = 0; line < xs[0] * xs[2]; ++line) {
        int64_t best = 0;
        for (int64_t j = 1; j < xs[1]; ++j) {
          float v = x[lineElement(xs, line, j)];
          float b = x[lineElement(xs, line, best)];
          if (max ? (last ? v >= b : v > b) : (last ? v <= b : v < b))
            best = j;
        }
        e[line] = best;
      }
      EXPECT_EQ(int64Values(y), e) << "max " << max << ", last " << last;
    }
}

TEST_F(CudaKernelTest, CumSumDirections) {
  Shape xs{3, 40, 6};
  std::vector<float> x = randomValues(count(xs), 122);
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      Buffer &y = output(xs);
      ASSERT_EQ(run(cleave_cuda_cumsum, {&input(xs, x)}, {&y},
                    {1, exclusive, reverse}),
                0)
          << ctx->error;
      std::vector<float> e(count(xs));
      for (int64_t line = 0; line < xs[0] * xs[2]; ++line) {
        double sum = 0;
        for (int64_t step = 0; step < xs[1]; ++step) {
          int64_t at = lineElement(xs, line, reverse ? xs[1] - 1 - step : step);
          if (exclusive) {
            e[at] = static_cast<float>(sum);
            sum += x[at];
          } else {
            sum += x[at];
            e[at] = static_cast<float>(sum);
          }
        }
      }
      expectNear(e, y, 1e-5);
    }
}

TEST_F(CudaKernelTest, CumSumOfInt64Wraps) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> x = {max, 1, 2, -3};
  Buffer &y = bytesBuffer({4}, CLEAVE_I64, std::vector<uint8_t>(32, 0xff));
  ASSERT_EQ(run(cleave_cuda_cumsum, {&integers({4}, x)}, {&y}, {0, 0, 0}), 0)
      << ctx->error;
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(int64Values(y), (std::vector<int64_t>{max, min, min + 2, max}));
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

TEST_F(CudaKernelTest, UnsupportedTypesFail) {
  Buffer &x = bytesBuffer({4}, CLEAVE_I8, std::vector<uint8_t>(4));
  Buffer &y = bytesBuffer({4}, CLEAVE_I8, std::vector<uint8_t>(4));
  EXPECT_NE(run(cleave_cuda_softmax, {&x}, {&y}, {0, 0}), 0);
  EXPECT_EQ(ctx->failedKernel, "softmax");
  EXPECT_NE(ctx->error.find("unsupported element type"), std::string::npos)
      << ctx->error;
}

TEST_F(CudaKernelTest, DeviceBasics) {
  EXPECT_EQ(device->name(), "cuda:0");
  EXPECT_FALSE(device->isHost());
  void *p = device->allocate(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  device->release(p);
  char error[256] = {};
  EXPECT_EQ(cleave_rt_create_cuda_device(1 << 20, error, sizeof(error)),
            nullptr);
  EXPECT_NE(std::string(error).find("no CUDA device"), std::string::npos)
      << error;
}

} // namespace
