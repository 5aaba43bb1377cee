//===- CppEmitter.h - device programs as host C++ ----------------*- C++
//-*-===//

#ifndef CLEAVE_LIB_TARGET_CPU_CPPEMITTER_H
#define CLEAVE_LIB_TARGET_CPU_CPPEMITTER_H

#include "cleave/Target/ProgramEmitter.h"

namespace cleave::detail {
mlir::LogicalResult emitCpp(const DeviceProgram &program,
                            const EmitOptions &options, llvm::raw_ostream &os,
                            std::string &error);
} // namespace cleave::detail

#endif // CLEAVE_LIB_TARGET_CPU_CPPEMITTER_H
