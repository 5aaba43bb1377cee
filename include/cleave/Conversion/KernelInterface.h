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

/// The kernel call of `conv` (a cleave.conv) followed by `epilogue` (a
/// CleaveEpilogue) with the clamp's bounds: what the op's model builds with
/// no epilogue, and the device program with the ReLU or clip that follows a
/// convolution.
mlir::LogicalResult buildConvCall(mlir::Operation *conv, int64_t epilogue,
                                  double epilogueMin, double epilogueMax,
                                  KernelCall &call);

/// The `matmul` call of matrix product `matmul` with `epilogue` (as
/// buildConvCall's); the device program adds the bias and the residual
/// that it joins to the product.
mlir::LogicalResult buildMatMulCall(mlir::Operation *matmul, int64_t epilogue,
                                    double epilogueMin, double epilogueMax,
                                    KernelCall &call);

/// The `gemm` call of ONNX Gemm `gemm` with `epilogue` (as buildConvCall's);
/// the device program adds the residual that it joins to the product.
mlir::LogicalResult buildGemmCall(mlir::Operation *gemm, int64_t epilogue,
                                  double epilogueMin, double epilogueMax,
                                  KernelCall &call);

} // namespace cleave

#endif // CLEAVE_CONVERSION_KERNELINTERFACE_H
