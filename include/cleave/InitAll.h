//===- InitAll.h - register every cleave dialect and pass -------*- C++ -*-===//
//
// The one place that tools, tests and the Python module register cleave's
// dialects, passes, pipelines and translations.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_INITALL_H
#define CLEAVE_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace cleave {

/// Adds the cleave dialect and the upstream dialects cleave IR uses.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every cleave pass and pipeline with the global pass registry.
void registerAllPasses();

/// Registers every cleave translation (e.g. `--import-onnx`).
void registerAllTranslations();

} // namespace cleave

#endif // CLEAVE_INITALL_H
