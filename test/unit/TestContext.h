//===- TestContext.h - shared setup of the unit tests -----------*- C++ -*-===//
//
// An MLIRContext with the cleave dialect and its cost models, and a parser
// for the IR the tests write inline.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TEST_UNIT_TESTCONTEXT_H
#define CLEAVE_TEST_UNIT_TESTCONTEXT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>

namespace cleave::test {

/// A context with the cleave and func dialects loaded and the cost external
/// models attached.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Parses and verifies `source`; an empty module ref when it does not parse
/// (the diagnostics go to stderr, where gtest shows them).
mlir::OwningOpRef<mlir::ModuleOp> parseModule(mlir::MLIRContext &context,
                                              const std::string &source);

/// The first function of `module`.
mlir::func::FuncOp firstFunction(mlir::ModuleOp module);

} // namespace cleave::test

#endif // CLEAVE_TEST_UNIT_TESTCONTEXT_H
