//===- CppEmitter.cpp - device programs as host C++ --------------*- C++
//-*-===//
//
// Fused loops become OpenMP loops over the output's elements; library
// kernels are the `cleave_cpu_*` functions of libcleave_rt.
//
//===----------------------------------------------------------------------===//

#include "CppEmitter.h"
#include "../EmitterBase.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::detail;

namespace {

class CppEmitter : public EmitterBase {
public:
  using EmitterBase::EmitterBase;

private:
  void emitPrelude() override {
    os << "#include \"cleave/rt/Scalar.h\"\n\n#include <stdint.h>\n";
  }

  StringRef getKernelLibrary() const override { return "cpu"; }
  StringRef getLanguageName() const override { return "C++"; }
  bool supports(DType type) const override {
    return type != DType::F16 && type != DType::BF16 && type != DType::Invalid;
  }
  /// Host C++ has no half-precision types: Scalar.h's hold their bits.
  StringRef getHalfStorageType(DType type) const override {
    return type == DType::BF16 ? "cl::bfloat16" : "cl::float16";
  }

  void emitLoop(const ProgramEntry &, int, const FusedLoop &loop) override {
    const ProgramTensor &out = program.tensors[loop.output];
    int64_t elements = out.getNumElements();
    os << "  {\n";
    for (auto [index, load] : llvm::enumerate(loop.loads))
      os << "    const " << getStorageType(program.tensors[load.tensor].dtype)
         << " *x" << index << " = (const "
         << getStorageType(program.tensors[load.tensor].dtype) << " *)"
         << getPointer(load.tensor) << ";\n";
    os << "    " << getStorageType(out.dtype) << " *y = ("
       << getStorageType(out.dtype) << " *)" << getPointer(loop.output)
       << ";\n";
    int64_t work = 1;
    for (int64_t dim : loop.iterationShape)
      work *= dim;
    if (work >= options.parallelThreshold)
      // The kernels' thread count, so that loops and kernels share one
      // OpenMP team instead of resizing it at every step.
      os << "#pragma omp parallel for schedule(static) "
            "num_threads(cleave_rt_num_threads(ctx))\n";
    if (loop.reduction) {
      os << "    for (int64_t o = 0; o < " << elements << "; ++o) {\n";
      emitReductionBody(loop, "o", "      ");
    } else {
      RowNest nest = getRowNest(loop);
      os << "    for (int64_t o = 0; o < " << nest.outer << "; ++o) {\n";
      emitRowBody(loop, nest, "      ");
    }
    os << "    }\n  }\n";
  }
};

} // namespace

LogicalResult cleave::detail::emitCpp(const DeviceProgram &program,
                                      const EmitOptions &options,
                                      raw_ostream &os, std::string &error) {
  return CppEmitter(program, options, os).emit(error);
}
