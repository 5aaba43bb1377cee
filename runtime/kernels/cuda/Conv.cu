//===- Conv.cu - convolution and transposed convolution -------------------===//
//
// conv takes cuDNN when the library was built with it and the convolution
// fits cuDNN's descriptors (1 to 3 spatial dimensions, symmetric padding);
// otherwise, and whenever cuDNN declines, im2col + a cuBLAS product per
// image (groups batched). conv_transpose is always a cuBLAS product
// (W^T X per group) followed by a col2im that gathers, so no atomics are
// needed and the result is deterministic.
//
// A float32 conv applies its bias, residual and activation (Epilogue.h):
// in cudnnConvolutionBiasActivationForward where cuDNN has them (a bias,
// then a ReLU or no activation, the residual as its z); otherwise the
// convolution accumulates onto the residual (beta 1) and one pass adds the
// bias and applies the activation.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"
#include "Epilogue.h"
#include "Gemm.h"

#ifdef CLEAVE_HAVE_CUDNN
#include <cudnn.h>
#endif

using namespace cleave::cuda;

namespace {

constexpr int kMaxSpatial = CLEAVE_MAX_RANK - 2;

/// The spatial geometry of a convolution, passed by value to kernels. For
/// conv, `in` is the input and `out` the output; for conv_transpose the
/// roles follow the forward convolution it transposes, so `in` is the
/// transposed convolution's output.
struct ConvGeometry {
  int n = 0;
  int64_t in[kMaxSpatial] = {}, out[kMaxSpatial] = {}, kernel[kMaxSpatial] = {};
  int64_t stride[kMaxSpatial] = {}, padBegin[kMaxSpatial] = {},
          dilation[kMaxSpatial] = {};
  int64_t inSize = 1, outSize = 1, kernelSize = 1;
};

/// Reads the window of conv or conv_transpose; `in`, `out` and `w` give
/// the sizes.
template <typename Args>
bool readGeometry(const Args &args, const CleaveTensor &in,
                  const CleaveTensor &out, const CleaveTensor &w,
                  ConvGeometry &g) {
  g.n = static_cast<int>(args.n());
  if (g.n < 1 || g.n > kMaxSpatial || in.rank != g.n + 2 ||
      out.rank != g.n + 2 || w.rank != g.n + 2)
    return false;
  const int64_t *strides = args.strides().data(), *pads = args.pads().data(),
                *dilations = args.dilations().data();
  for (int d = 0; d < g.n; ++d) {
    g.in[d] = in.shape[d + 2];
    g.out[d] = out.shape[d + 2];
    g.kernel[d] = w.shape[d + 2];
    g.stride[d] = strides[d];
    g.padBegin[d] = pads[d];
    g.dilation[d] = dilations[d];
    g.inSize *= g.in[d];
    g.outSize *= g.out[d];
    g.kernelSize *= g.kernel[d];
  }
  return true;
}

/// cols[c * K + k][p] = x[c][p * stride - pad + k * dilation] (zero outside)
/// for one image.
template <typename T>
__global__ void im2colKernel(const T *x, T *cols, int64_t channels,
                             ConvGeometry g) {
  int64_t total = channels * g.kernelSize * g.outSize;
  CLEAVE_GRID_LOOP(i, total) {
    int64_t p = i % g.outSize;
    int64_t ck = i / g.outSize;
    int64_t k = ck % g.kernelSize;
    int64_t c = ck / g.kernelSize;
    int64_t src = 0, scale = 1;
    bool inside = true;
    for (int d = g.n - 1; d >= 0; --d) {
      int64_t o = p % g.out[d], kd = k % g.kernel[d];
      p /= g.out[d];
      k /= g.kernel[d];
      int64_t at = o * g.stride[d] - g.padBegin[d] + kd * g.dilation[d];
      inside &= at >= 0 && at < g.in[d];
      src += at * scale;
      scale *= g.in[d];
    }
    cols[i] = inside ? x[c * g.inSize + src] : fromFloat<T>(0.f);
  }
}

/// y[m][q] (q over the transposed convolution's output, `g.in`) sums
/// cols[group][(m' * K + k)][p] over the kernel taps k whose forward window
/// at output position p covers q, plus bias[m].
template <typename T>
__global__ void col2imKernel(const T *cols, const T *bias, T *y,
                             int64_t outChannels, int64_t groupChannels,
                             ConvGeometry g) {
  int64_t total = outChannels * g.inSize;
  CLEAVE_GRID_LOOP(i, total) {
    int64_t q = i % g.inSize;
    int64_t m = i / g.inSize;
    int64_t group = m / groupChannels, ml = m % groupChannels;
    const T *base =
        cols + (group * groupChannels + ml) * g.kernelSize * g.outSize;
    int64_t coord[kMaxSpatial];
    for (int d = g.n - 1; d >= 0; --d) {
      coord[d] = q % g.in[d];
      q /= g.in[d];
    }
    float sum = bias ? toFloat(bias[m]) : 0.f;
    for (int64_t k = 0; k < g.kernelSize; ++k) {
      int64_t rest = k, p = 0, scale = 1;
      bool hit = true;
      for (int d = g.n - 1; d >= 0 && hit; --d) {
        int64_t kd = rest % g.kernel[d];
        rest /= g.kernel[d];
        int64_t at = coord[d] + g.padBegin[d] - kd * g.dilation[d];
        if (at < 0 || at % g.stride[d]) {
          hit = false;
          break;
        }
        at /= g.stride[d];
        if (at >= g.out[d]) {
          hit = false;
          break;
        }
        p += at * scale;
        scale *= g.out[d];
      }
      if (hit)
        sum += toFloat(base[k * g.outSize + p]);
    }
    y[i] = fromFloat<T>(sum);
  }
}

/// y[img][m][p] += bias[m].
template <typename T>
__global__ void addBiasKernel(T *y, const T *bias, int64_t channels,
                              int64_t spatial, int64_t total) {
  CLEAVE_GRID_LOOP(i, total) {
    int64_t m = (i / spatial) % channels;
    y[i] = fromFloat<T>(toFloat(y[i]) + toFloat(bias[m]));
  }
}

int32_t addBias(CleaveContext *ctx, const char *kernel, const CleaveTensor &y,
                const CleaveTensor &bias) {
  int64_t total = numElements(y);
  if (!bias.data || total == 0)
    return 0;
  int64_t spatial = product(y.shape, 2, y.rank);
  cudaStream_t stream = streamOf(ctx);
  dispatchFloat(y.dtype, [&](auto t) {
    using T = decltype(t);
    addBiasKernel<T><<<blocksFor(total), kThreads, 0, stream>>>(
        static_cast<T *>(y.data), static_cast<const T *>(bias.data), y.shape[1],
        spatial, total);
    return 0;
  });
  return checkLaunch(ctx, kernel);
}

/// conv through im2col and one strided-batched product (over groups) per
/// image: y = conv(x, w) + beta y.
int32_t convIm2col(CleaveContext *ctx, const CleaveTensor &x,
                   const CleaveTensor &w, const CleaveTensor &y, int64_t group,
                   const ConvGeometry &g, double beta) {
  int64_t batch = x.shape[0], channels = x.shape[1], outChannels = y.shape[1];
  int64_t cg = channels / group, mg = outChannels / group;
  size_t bytes = dtypeSize(x.dtype);
  bool pointwise = true;
  for (int d = 0; d < g.n; ++d)
    pointwise &= g.kernel[d] == 1 && g.stride[d] == 1 && g.padBegin[d] == 0 &&
                 g.in[d] == g.out[d];
  void *cols = nullptr;
  if (!pointwise) {
    cols = cleave_rt_scratch(ctx, channels * g.kernelSize * g.outSize * bytes);
    if (!cols)
      return 1;
  }
  RowMajorGemm gemm;
  gemm.m = mg;
  gemm.n = g.outSize;
  gemm.k = cg * g.kernelSize;
  gemm.lda = gemm.k;
  gemm.ldb = g.outSize;
  gemm.ldy = g.outSize;
  gemm.strideA = mg * gemm.k;
  gemm.strideB = gemm.k * g.outSize;
  gemm.strideY = mg * g.outSize;
  gemm.batch = group;
  gemm.beta = beta;
  cudaStream_t stream = streamOf(ctx);
  for (int64_t img = 0; img < batch; ++img) {
    const char *xi =
        static_cast<const char *>(x.data) + img * channels * g.inSize * bytes;
    char *yi =
        static_cast<char *>(y.data) + img * outChannels * g.outSize * bytes;
    const void *b = xi;
    if (!pointwise) {
      int64_t total = channels * g.kernelSize * g.outSize;
      dispatchFloat(x.dtype, [&](auto t) {
        using T = decltype(t);
        im2colKernel<T><<<blocksFor(total), kThreads, 0, stream>>>(
            reinterpret_cast<const T *>(xi), static_cast<T *>(cols), channels,
            g);
        return 0;
      });
      if (int32_t status = checkLaunch(ctx, "conv"))
        return status;
      b = cols;
    }
    if (int32_t status =
            rowMajorGemm(ctx, "conv", x.dtype, gemm, w.data, b, yi))
      return status;
  }
  return 0;
}

#ifdef CLEAVE_HAVE_CUDNN
/// One convolution's cuDNN descriptors, destroyed with it.
class CudnnConvolution {
public:
  CudnnConvolution() = default;
  CudnnConvolution(const CudnnConvolution &) = delete;
  CudnnConvolution &operator=(const CudnnConvolution &) = delete;
  ~CudnnConvolution() {
    if (activation)
      cudnnDestroyActivationDescriptor(activation);
    if (biasDesc)
      cudnnDestroyTensorDescriptor(biasDesc);
    if (convDesc)
      cudnnDestroyConvolutionDescriptor(convDesc);
    if (wDesc)
      cudnnDestroyFilterDescriptor(wDesc);
    if (yDesc)
      cudnnDestroyTensorDescriptor(yDesc);
    if (xDesc)
      cudnnDestroyTensorDescriptor(xDesc);
  }

  /// Describes the convolution; false where cuDNN cannot take it (more
  /// than 3 spatial dimensions, asymmetric pads, another element type, an
  /// output other than the one the compiler inferred).
  bool describe(const CleaveTensor &x, const CleaveTensor &w,
                const CleaveTensor &y, int64_t group, const int64_t *pads,
                const ConvGeometry &g);
  /// The best algorithm that cuDNN's heuristic offers; false without one.
  bool chooseAlgorithm(cudnnHandle_t handle, cudnnConvolutionFwdAlgo_t &algo,
                       size_t &workspaceBytes);
  /// Describes the bias (one value per output channel) and the activation
  /// of cudnnConvolutionBiasActivationForward: ReLU, or none.
  bool describeEpilogue(int64_t channels, bool relu);

  cudnnDataType_t dataType = CUDNN_DATA_FLOAT;
  int rank = 0;
  cudnnTensorDescriptor_t xDesc = nullptr, yDesc = nullptr;
  cudnnFilterDescriptor_t wDesc = nullptr;
  cudnnConvolutionDescriptor_t convDesc = nullptr;
  cudnnTensorDescriptor_t biasDesc = nullptr;
  cudnnActivationDescriptor_t activation = nullptr;
};

bool CudnnConvolution::describe(const CleaveTensor &x, const CleaveTensor &w,
                                const CleaveTensor &y, int64_t group,
                                const int64_t *pads, const ConvGeometry &g) {
  if (g.n > 3)
    return false;
  for (int d = 0; d < g.n; ++d)
    if (pads[d] != pads[g.n + d])
      return false;
  switch (x.dtype) {
  case CLEAVE_F32:
    dataType = CUDNN_DATA_FLOAT;
    break;
  case CLEAVE_F16:
    dataType = CUDNN_DATA_HALF;
    break;
  case CLEAVE_BF16:
    dataType = CUDNN_DATA_BFLOAT16;
    break;
  default:
    return false;
  }
  // 1-D convolutions are 2-D ones of height 1.
  int spatial = g.n == 1 ? 2 : g.n;
  int lead = spatial - g.n;
  int xDims[5], wDims[5], yDims[5], pad[3], stride[3], dilation[3];
  xDims[0] = static_cast<int>(x.shape[0]);
  xDims[1] = static_cast<int>(x.shape[1]);
  wDims[0] = static_cast<int>(w.shape[0]);
  wDims[1] = static_cast<int>(w.shape[1]);
  yDims[0] = static_cast<int>(y.shape[0]);
  yDims[1] = static_cast<int>(y.shape[1]);
  for (int d = 0; d < spatial; ++d) {
    int s = d - lead;
    xDims[2 + d] = s < 0 ? 1 : static_cast<int>(g.in[s]);
    wDims[2 + d] = s < 0 ? 1 : static_cast<int>(g.kernel[s]);
    yDims[2 + d] = s < 0 ? 1 : static_cast<int>(g.out[s]);
    pad[d] = s < 0 ? 0 : static_cast<int>(g.padBegin[s]);
    stride[d] = s < 0 ? 1 : static_cast<int>(g.stride[s]);
    dilation[d] = s < 0 ? 1 : static_cast<int>(g.dilation[s]);
  }
  rank = spatial + 2;
  auto packed = [&](const int *dims, int *strides) {
    strides[rank - 1] = 1;
    for (int d = rank - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * dims[d + 1];
  };
  int xStrides[5], yStrides[5];
  packed(xDims, xStrides);
  packed(yDims, yStrides);
  bool ok = cudnnCreateTensorDescriptor(&xDesc) == CUDNN_STATUS_SUCCESS &&
            cudnnCreateTensorDescriptor(&yDesc) == CUDNN_STATUS_SUCCESS &&
            cudnnCreateFilterDescriptor(&wDesc) == CUDNN_STATUS_SUCCESS &&
            cudnnCreateConvolutionDescriptor(&convDesc) == CUDNN_STATUS_SUCCESS;
  ok = ok &&
       cudnnSetTensorNdDescriptor(xDesc, dataType, rank, xDims, xStrides) ==
           CUDNN_STATUS_SUCCESS &&
       cudnnSetTensorNdDescriptor(yDesc, dataType, rank, yDims, yStrides) ==
           CUDNN_STATUS_SUCCESS &&
       cudnnSetFilterNdDescriptor(wDesc, dataType, CUDNN_TENSOR_NCHW, rank,
                                  wDims) == CUDNN_STATUS_SUCCESS &&
       cudnnSetConvolutionNdDescriptor(
           convDesc, spatial, pad, stride, dilation, CUDNN_CROSS_CORRELATION,
           CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS &&
       cudnnSetConvolutionGroupCount(convDesc, static_cast<int>(group)) ==
           CUDNN_STATUS_SUCCESS &&
       // fp32 stays fp32 (no TF32), as on the CPU; half types may use
       // tensor cores.
       cudnnSetConvolutionMathType(convDesc, x.dtype == CLEAVE_F32
                                                 ? CUDNN_FMA_MATH
                                                 : CUDNN_TENSOR_OP_MATH) ==
           CUDNN_STATUS_SUCCESS;
  // The output cuDNN infers must be the one the compiler inferred.
  if (ok) {
    int inferred[5];
    ok = cudnnGetConvolutionNdForwardOutputDim(
             convDesc, xDesc, wDesc, rank, inferred) == CUDNN_STATUS_SUCCESS;
    for (int d = 0; ok && d < rank; ++d)
      ok = inferred[d] == yDims[d];
  }
  return ok;
}

bool CudnnConvolution::chooseAlgorithm(cudnnHandle_t handle,
                                       cudnnConvolutionFwdAlgo_t &algo,
                                       size_t &workspaceBytes) {
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  if (cudnnGetConvolutionForwardAlgorithm_v7(
          handle, xDesc, wDesc, convDesc, yDesc,
          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned,
          perf) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int i = 0; i < returned; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS) {
      algo = perf[i].algo;
      workspaceBytes = perf[i].memory;
      return true;
    }
  return false;
}

bool CudnnConvolution::describeEpilogue(int64_t channels, bool relu) {
  int dims[5] = {1, static_cast<int>(channels), 1, 1, 1};
  int strides[5] = {static_cast<int>(channels), 1, 1, 1, 1};
  // NaN stays out of the ReLU, as cl::relu maps it to 0.
  return cudnnCreateTensorDescriptor(&biasDesc) == CUDNN_STATUS_SUCCESS &&
         cudnnSetTensorNdDescriptor(biasDesc, dataType, rank, dims, strides) ==
             CUDNN_STATUS_SUCCESS &&
         cudnnCreateActivationDescriptor(&activation) == CUDNN_STATUS_SUCCESS &&
         cudnnSetActivationDescriptor(
             activation,
             relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
             CUDNN_NOT_PROPAGATE_NAN, 0.0) == CUDNN_STATUS_SUCCESS;
}

/// The workspace of `bytes` for a cuDNN call; false (after failing the
/// run) where there is none.
bool cudnnWorkspace(CleaveContext *ctx, size_t bytes, void *&workspace) {
  workspace = bytes ? cleave_rt_scratch(ctx, bytes) : nullptr;
  return !bytes || workspace;
}

/// Tries cuDNN: y = conv(x, w) + beta y. Returns false (having queued
/// nothing) when it declines.
bool convCudnn(CleaveContext *ctx, const CleaveTensor &x, const CleaveTensor &w,
               const CleaveTensor &y, int64_t group, const int64_t *pads,
               const ConvGeometry &g, double beta, int32_t &result) {
  auto handle = static_cast<cudnnHandle_t>(cleave_rt_cudnn(ctx));
  CudnnConvolution conv;
  cudnnConvolutionFwdAlgo_t algo;
  size_t bytes = 0;
  if (!handle || !conv.describe(x, w, y, group, pads, g) ||
      !conv.chooseAlgorithm(handle, algo, bytes))
    return false;
  void *workspace = nullptr;
  if (!cudnnWorkspace(ctx, bytes, workspace)) {
    result = 1; // cleave_rt_scratch has failed the run
    return true;
  }
  float alpha = 1.f, betaF = static_cast<float>(beta);
  // A refusal at launch (an unsupported configuration) leaves the output
  // to the im2col path.
  result = 0;
  return cudnnConvolutionForward(handle, &alpha, conv.xDesc, x.data, conv.wDesc,
                                 w.data, conv.convDesc, algo, workspace, bytes,
                                 &betaF, conv.yDesc,
                                 y.data) == CUDNN_STATUS_SUCCESS;
}

/// Tries cudnnConvolutionBiasActivationForward on float32: y = act(conv(x,
/// w) + z + bias), with act a ReLU or none, z a residual other than y, or
/// none. Returns false (having queued nothing) when cuDNN declines.
bool convCudnnFused(CleaveContext *ctx, const CleaveTensor &x,
                    const CleaveTensor &w, const CleaveTensor &y, int64_t group,
                    const int64_t *pads, const ConvGeometry &g,
                    const void *bias, const void *z, bool relu,
                    int32_t &result) {
  auto handle = static_cast<cudnnHandle_t>(cleave_rt_cudnn(ctx));
  CudnnConvolution conv;
  cudnnConvolutionFwdAlgo_t algo;
  size_t bytes = 0;
  if (!handle || !conv.describe(x, w, y, group, pads, g) ||
      !conv.describeEpilogue(y.shape[1], relu))
    return false;
  // cuDNN applies no activation (identity) with the implicit precomputed
  // GEMM only; a ReLU with whichever algorithm its heuristic offers.
  if (relu) {
    if (!conv.chooseAlgorithm(handle, algo, bytes))
      return false;
  } else {
    algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    if (cudnnGetConvolutionForwardWorkspaceSize(handle, conv.xDesc, conv.wDesc,
                                                conv.convDesc, conv.yDesc, algo,
                                                &bytes) != CUDNN_STATUS_SUCCESS)
      return false;
  }
  void *workspace = nullptr;
  if (!cudnnWorkspace(ctx, bytes, workspace)) {
    result = 1; // cleave_rt_scratch has failed the run
    return true;
  }
  // Without a residual z is y, scaled by 0 (cuDNN reads a z either way).
  float alpha1 = 1.f, alpha2 = z ? 1.f : 0.f;
  result = 0;
  return cudnnConvolutionBiasActivationForward(
             handle, &alpha1, conv.xDesc, x.data, conv.wDesc, w.data,
             conv.convDesc, algo, workspace, bytes, &alpha2, conv.yDesc,
             z ? z : y.data, conv.biasDesc, bias, conv.activation, conv.yDesc,
             y.data) == CUDNN_STATUS_SUCCESS;
}
#endif

} // namespace

int32_t cleave::cuda::kernels::conv(CleaveContext *ctx,
                                    const args::Conv &args) {
  const CleaveTensor &x = args.x(), &w = args.w(), &y = args.y();
  const CleaveTensor *bias = args.bias(), *residual = args.residual();
  if (x.dtype != w.dtype || x.dtype != y.dtype ||
      (bias && bias->dtype != x.dtype) || !gemmSupports(x.dtype) ||
      x.dtype == CLEAVE_F64)
    return fail(ctx, "conv", "unsupported element type %d", x.dtype);
  ConvGeometry g;
  if (!readGeometry(args, x, y, w, g))
    return fail(ctx, "conv", "bad geometry for %lld spatial dimensions",
                (long long)args.n());
  int64_t group = args.group();
  if (group < 1 || x.shape[1] % group || y.shape[1] % group ||
      w.shape[1] * group != x.shape[1] || w.shape[0] != y.shape[1])
    return fail(ctx, "conv", "channels do not match group %lld",
                (long long)group);
  if (bias && numElements(*bias) != y.shape[1])
    return fail(ctx, "conv", "the bias has %lld elements, Y %lld channels",
                (long long)numElements(*bias), (long long)y.shape[1]);
  // Blocked layouts are those of the CPU's oneDNN kernels
  // (DeviceProgramOptions::convBlock).
  if (args.xBlock() != 0 || args.yBlock() != 0)
    return fail(ctx, "conv",
                "blocked layouts (xBlock %lld, yBlock %lld): CUDA programs "
                "keep NCHW",
                (long long)args.xBlock(), (long long)args.yBlock());
  Epilogue epilogue;
  if (epilogue.read(ctx, "conv", args.epilogue(), args.epilogueMin(),
                    args.epilogueMax()) ||
      checkEpilogueInputs(ctx, "conv", y.dtype, epilogue, nullptr, 0, residual,
                          numElements(y)))
    return 1;
  if (numElements(y) == 0)
    return 0;
  const void *r = residual ? residual->data : nullptr;
  int32_t status = 0;
#ifdef CLEAVE_HAVE_CUDNN
  // cuDNN's fused call where it has the activation (a ReLU, or none with a
  // residual) and a bias. A residual that is Y takes the path below: it
  // stays in Y for the convolution to accumulate onto.
  bool relu = epilogue.kind == CLEAVE_EPILOGUE_RELU;
  if (bias && (relu || (epilogue.none() && r)) && r != y.data &&
      convCudnnFused(ctx, x, w, y, group, args.pads().data(), g, bias->data, r,
                     relu, status))
    return status;
#endif
  // Otherwise the convolution accumulates onto the residual, and one pass
  // adds the bias and applies the activation.
  size_t bytes = numElements(y) * dtypeSize(y.dtype);
  if (r && copyResidual(ctx, "conv", r, y.data, bytes))
    return 1;
  double beta = r ? 1.0 : 0.0;
#ifdef CLEAVE_HAVE_CUDNN
  if (!convCudnn(ctx, x, w, y, group, args.pads().data(), g, beta, status))
    status = convIm2col(ctx, x, w, y, group, g, beta);
#else
  status = convIm2col(ctx, x, w, y, group, g, beta);
#endif
  if (status)
    return status;
  if (y.dtype != CLEAVE_F32)
    return bias ? addBias(ctx, "conv", y, *bias) : 0;
  return applyEpilogue(ctx, "conv", epilogue, static_cast<float *>(y.data),
                       numElements(y),
                       bias ? static_cast<const float *>(bias->data) : nullptr,
                       product(y.shape, 2, y.rank), y.shape[1]);
}

int32_t cleave::cuda::kernels::conv_transpose(CleaveContext *ctx,
                                              const args::ConvTranspose &args) {
  const CleaveTensor &x = args.x(), &w = args.w(), &y = args.y();
  const CleaveTensor *bias = args.bias();
  if (x.dtype != w.dtype || x.dtype != y.dtype ||
      (bias && bias->dtype != x.dtype) || !gemmSupports(x.dtype) ||
      x.dtype == CLEAVE_F64)
    return fail(ctx, "conv_transpose", "unsupported element type %d", x.dtype);
  // The forward convolution this transposes maps y's geometry to x's.
  ConvGeometry g;
  if (!readGeometry(args, y, x, w, g))
    return fail(ctx, "conv_transpose",
                "bad geometry for %lld spatial dimensions",
                (long long)args.n());
  int64_t group = args.group();
  int64_t channels = x.shape[1], outChannels = y.shape[1];
  if (group < 1 || channels % group || w.shape[0] != channels ||
      w.shape[1] * group != outChannels)
    return fail(ctx, "conv_transpose", "channels do not match group %lld",
                (long long)group);
  int64_t batch = x.shape[0];
  if (numElements(y) == 0)
    return 0;
  int64_t cg = channels / group, mg = outChannels / group;
  size_t bytes = dtypeSize(x.dtype);
  void *cols =
      cleave_rt_scratch(ctx, group * mg * g.kernelSize * g.outSize * bytes);
  if (!cols)
    return 1;
  // cols_g (Mg*K x P) = W_g^T (Mg*K x Cg) . X_g (Cg x P).
  RowMajorGemm gemm;
  gemm.transA = true;
  gemm.m = mg * g.kernelSize;
  gemm.n = g.outSize;
  gemm.k = cg;
  gemm.lda = mg * g.kernelSize;
  gemm.ldb = g.outSize;
  gemm.ldy = g.outSize;
  gemm.strideA = cg * gemm.lda;
  gemm.strideB = cg * g.outSize;
  gemm.strideY = gemm.m * g.outSize;
  gemm.batch = group;
  cudaStream_t stream = streamOf(ctx);
  for (int64_t img = 0; img < batch; ++img) {
    const char *xi =
        static_cast<const char *>(x.data) + img * channels * g.outSize * bytes;
    char *yi =
        static_cast<char *>(y.data) + img * outChannels * g.inSize * bytes;
    if (int32_t status = rowMajorGemm(ctx, "conv_transpose", x.dtype, gemm,
                                      w.data, xi, cols))
      return status;
    int64_t total = outChannels * g.inSize;
    dispatchFloat(x.dtype, [&](auto t) {
      using T = decltype(t);
      col2imKernel<T><<<blocksFor(total), kThreads, 0, stream>>>(
          static_cast<const T *>(cols),
          bias ? static_cast<const T *>(bias->data) : nullptr,
          reinterpret_cast<T *>(yi), outChannels, mg, g);
      return 0;
    });
    if (int32_t status = checkLaunch(ctx, "conv_transpose"))
      return status;
  }
  return 0;
}
