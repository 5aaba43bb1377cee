//===- CudaEmitter.h - device programs as CUDA C++ ---------------*- C++
//-*-===//

#ifndef CLEAVE_LIB_TARGET_CUDA_CUDAEMITTER_H
#define CLEAVE_LIB_TARGET_CUDA_CUDAEMITTER_H

#include "cleave/Target/ProgramEmitter.h"

namespace cleave::detail {
mlir::LogicalResult emitCuda(const DeviceProgram &program,
                             const EmitOptions &options, llvm::raw_ostream &os,
                             std::string &error);
} // namespace cleave::detail

#endif // CLEAVE_LIB_TARGET_CUDA_CUDAEMITTER_H
