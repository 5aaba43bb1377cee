//===- FuzzContext.h - an MLIR context for fuzz targets ----------*- C++
//-*-===//
//
// The compiler's fuzz targets parse one input per call. Each call gets a
// context that prints no diagnostics (a refused input is the common case,
// and printing it would dominate the run); the context is replaced every few
// thousand inputs so that the attributes and locations it uniques do not
// grow without bound over a long run.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_FUZZ_FUZZCONTEXT_H
#define CLEAVE_FUZZ_FUZZCONTEXT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace cleave::fuzz {

/// A context that has loaded `Dialects`.
template <typename... Dialects> class FuzzContext {
public:
  /// The context for the next input.
  mlir::MLIRContext &next() {
    if (!context || ++uses > kUsesPerContext) {
      handler.reset();
      context = std::make_unique<mlir::MLIRContext>(
          mlir::MLIRContext::Threading::DISABLED);
      (context->getOrLoadDialect<Dialects>(), ...);
      handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
          context.get(), [](mlir::Diagnostic &) { return mlir::success(); });
      uses = 0;
    }
    return *context;
  }

private:
  static constexpr int kUsesPerContext = 4096;
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  int uses = 0;
};

} // namespace cleave::fuzz

#endif // CLEAVE_FUZZ_FUZZCONTEXT_H
