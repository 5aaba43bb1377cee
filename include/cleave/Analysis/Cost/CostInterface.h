//===- CostInterface.h - per-op work for the cost model ---------*- C++ -*-===//
//
// Declares `cleave::CostInterface` (generated from CostInterface.td), the
// helpers its default methods share, and the registration of the external
// models that implement it on every cleave op.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ANALYSIS_COST_COSTINTERFACE_H
#define CLEAVE_ANALYSIS_COST_COSTINTERFACE_H

#include "cleave/Analysis/Cost/Target.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include <cstdint>

namespace cleave {

/// Bytes of a statically shaped ranked tensor: elements times the element
/// size rounded up to whole bytes (an `i1` takes a byte). 0 for other types.
int64_t getTensorBytes(mlir::Type type);

/// Elements of a statically shaped ranked tensor; 0 for other types.
int64_t getNumElements(mlir::Type type);

/// Follows `value` back through views (ops whose `isView` holds) to the value
/// that owns its bytes.
mlir::Value getBufferRoot(mlir::Value value);

/// Whether `value`, seen through views, is a model parameter.
bool isParameterValue(mlir::Value value);

/// Attaches the cost external models to every cleave op. Tools call this
/// through `cleave::registerAllDialects`.
void registerCostInterfaceExternalModels(mlir::DialectRegistry &registry);

namespace detail {
int64_t defaultBytesRead(mlir::Operation *op);
int64_t defaultBytesWritten(mlir::Operation *op);
int64_t defaultParameterBytes(mlir::Operation *op);
} // namespace detail

} // namespace cleave

#include "cleave/Analysis/Cost/CostInterface.h.inc"

#endif // CLEAVE_ANALYSIS_COST_COSTINTERFACE_H
