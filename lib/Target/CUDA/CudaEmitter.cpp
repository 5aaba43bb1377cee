//===- CudaEmitter.cpp - device programs as CUDA C++ -------------*- C++
//-*-===//
//
// Each fused loop becomes a grid-stride `__global__` kernel, launched on the
// context's stream; library kernels are the `cleave_cuda_*` functions of
// libcleave_rt_cuda. float16 and bfloat16 are stored as such and computed
// in float.
//
//===----------------------------------------------------------------------===//

#include "CudaEmitter.h"
#include "../EmitterBase.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::detail;

namespace {

class CudaEmitter : public EmitterBase {
public:
  using EmitterBase::EmitterBase;

private:
  StringRef getKernelLibrary() const override { return "cuda"; }
  StringRef getLanguageName() const override { return "CUDA"; }
  bool supports(DType type) const override { return type != DType::Invalid; }
  StringRef getHalfStorageType(DType type) const override {
    return type == DType::BF16 ? "__nv_bfloat16" : "__half";
  }

  /// The parameter list of loop `step`'s kernel.
  void emitParameters(const FusedLoop &loop) {
    for (auto [index, load] : llvm::enumerate(loop.loads))
      os << "const " << getStorageType(program.tensors[load.tensor].dtype)
         << " *__restrict__ x" << index << ", ";
    os << getStorageType(program.tensors[loop.output].dtype)
       << " *__restrict__ y";
  }

  void emitPrelude() override {
    os << "#include \"cleave/rt/Scalar.h\"\n\n"
          "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"
          "#include <cuda_runtime.h>\n#include <stdint.h>\n\n"
          "static int32_t cleave_check_launch(CleaveContext *ctx, int32_t "
          "step) {\n"
          "  cudaError_t status = cudaGetLastError();\n"
          "  if (status == cudaSuccess)\n    return 0;\n"
          "  (void)step;\n"
          "  return cleave_rt_fail(ctx, \"fused loop\", "
          "cudaGetErrorString(status));\n}\n";
    for (const ProgramEntry &entry : program.entries) {
      for (auto [index, step] : llvm::enumerate(entry.steps)) {
        if (step.loop)
          emitLoopKernel(entry, index, step);
      }
    }
  }

  /// Loop kernels are named after their entry and step.
  static std::string getLoopKernel(const ProgramEntry &entry, int64_t step) {
    return "cleave_" + entry.name + "_loop_" + std::to_string(step);
  }

  void emitLoopKernel(const ProgramEntry &entry, int64_t index,
                      const ProgramStep &step) {
    const FusedLoop &loop = *step.loop;
    int64_t elements = program.tensors[loop.output].getNumElements();
    os << "\n// " << index << ": " << step.summary << "\n";
    os << "__global__ void " << getLoopKernel(entry, index) << "(";
    emitParameters(loop);
    os << ") {\n";
    // One thread per output element; a reduction folds its inputs in a
    // loop of its own.
    StringRef var = loop.reduction ? "o" : "i";
    os << "  for (int64_t " << var
       << " = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; " << var << " < "
       << elements << ";\n       " << var
       << " += (int64_t)gridDim.x * blockDim.x) {\n";
    if (loop.reduction)
      emitReductionBody(loop, "o", "    ");
    else
      emitLoopBody(loop, "    ");
    os << "  }\n}\n";
  }

  void emitLoop(const ProgramEntry &entry, int step,
                const FusedLoop &loop) override {
    int64_t elements = program.tensors[loop.output].getNumElements();
    int64_t blocks = std::min<int64_t>((elements + 255) / 256, 65535);
    os << "  " << getLoopKernel(entry, step) << "<<<"
       << std::max<int64_t>(blocks, 1)
       << ", 256, 0, (cudaStream_t)cleave_rt_cuda_stream(ctx)>>>(";
    for (auto [index, load] : llvm::enumerate(loop.loads))
      os << "(const " << getStorageType(program.tensors[load.tensor].dtype)
         << " *)" << getPointer(load.tensor) << ", ";
    os << "(" << getStorageType(program.tensors[loop.output].dtype) << " *)"
       << getPointer(loop.output) << ");\n";
    os << "  if (int32_t status = cleave_check_launch(ctx, " << step
       << "))\n    return cleave_rt_failed(status);\n";
  }
};

} // namespace

LogicalResult cleave::detail::emitCuda(const DeviceProgram &program,
                                       const EmitOptions &options,
                                       raw_ostream &os, std::string &error) {
  return CudaEmitter(program, options, os).emit(error);
}
