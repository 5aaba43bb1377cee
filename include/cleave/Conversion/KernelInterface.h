//===- KernelInterface.h - how an op lowers to a kernel ----------*- C++
//-*-===//

#ifndef CLEAVE_CONVERSION_KERNELINTERFACE_H
#define CLEAVE_CONVERSION_KERNELINTERFACE_H

#include "cleave/Conversion/DeviceProgram.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "cleave/Conversion/KernelInterface.h.inc"

namespace cleave {

/// Attaches the KernelInterface external models to the cleave ops.
void registerKernelInterfaceExternalModels(mlir::DialectRegistry &registry);

} // namespace cleave

#endif // CLEAVE_CONVERSION_KERNELINTERFACE_H
