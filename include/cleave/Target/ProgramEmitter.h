//===- ProgramEmitter.h - device programs as C++ or CUDA C++ -----*- C++
//-*-===//
//
// The two emitters of a lowered device program: host C++ (built with the
// system compiler, kernels from runtime/kernels/cpu) and CUDA C++ (built
// with nvcc, kernels from runtime/kernels/cuda). Both print the same steps;
// they differ in how a fused loop runs (an OpenMP loop, or a grid-stride
// CUDA kernel) and in the kernel library they call.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TARGET_PROGRAMEMITTER_H
#define CLEAVE_TARGET_PROGRAMEMITTER_H

#include "cleave/Conversion/DeviceProgram.h"

#include "mlir/Support/LLVM.h"

#include <string>

namespace cleave {

enum class ProgramLanguage { Cpp, Cuda };

struct EmitOptions {
  /// Said in the file's header comment.
  std::string modelName;
  std::string targetName;
  /// Fused loops with fewer elements run on one thread (CPU): below it,
  /// starting the team costs more than the loop.
  int64_t parallelThreshold = 131072;
};

/// Writes `program` as a C++ (or CUDA C++) translation unit that defines
/// `cleave_program_info` and one function per entry point (Kernels.h).
/// Fails, with a diagnostic-free message in `error`, for element types the
/// language cannot compute in (e.g. float16 loops in host C++).
mlir::LogicalResult emitProgram(const DeviceProgram &program,
                                ProgramLanguage language,
                                const EmitOptions &options,
                                llvm::raw_ostream &os, std::string &error);

/// Registers `--emit-cpp` and `--emit-cuda` with cleave-translate.
void registerProgramEmitterTranslations();

} // namespace cleave

#endif // CLEAVE_TARGET_PROGRAMEMITTER_H
