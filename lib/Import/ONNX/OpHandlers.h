//===- OpHandlers.h - the table of ONNX operator handlers -------*- C++ -*-===//
//
// Each ONNX operator the importer understands has one entry per opset at
// which its meaning (for the importer) changes. The entries of one op family
// live in that family's *Handlers.cpp file.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_IMPORT_ONNX_OPHANDLERS_H
#define CLEAVE_LIB_IMPORT_ONNX_OPHANDLERS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace cleave::onnx_import {

class NodeBinder;

/// The oldest and newest default-domain opsets the importer reads.
constexpr int64_t kMinOpset = 11;
constexpr int64_t kMaxOpset = 24;

/// Imports one node: reads its inputs and attributes through the binder,
/// builds cleave ops and binds the node's outputs.
using HandlerFn = llvm::LogicalResult (*)(NodeBinder &binder);

/// One row of the table. Ops older than opset 11 start at 11, the oldest
/// opset the importer reads.
struct OpHandler {
  /// The ONNX operator (default domain).
  llvm::StringLiteral opType;
  /// The first opset this entry handles; it applies up to the next entry of
  /// the same op.
  int64_t sinceVersion;
  HandlerFn handler;
  /// The cleave ops the handler emits, for the documentation.
  llvm::StringLiteral cleaveOps;
  /// What the handler normalises, for the documentation.
  llvm::StringLiteral notes;
};

llvm::ArrayRef<OpHandler> getElementwiseHandlers();
llvm::ArrayRef<OpHandler> getNNHandlers();
llvm::ArrayRef<OpHandler> getShapeHandlers();
llvm::ArrayRef<OpHandler> getRecurrentHandlers();
llvm::ArrayRef<OpHandler> getIndexHandlers();
llvm::ArrayRef<OpHandler> getSelectionHandlers();
llvm::ArrayRef<OpHandler> getEinsumHandlers();

/// Every handler, indexed by op type and sorted by since-version.
class OpHandlerTable {
public:
  OpHandlerTable();

  /// The entry for `opType` at `opset`: the one with the largest
  /// since-version not above `opset`; null when there is none.
  const OpHandler *lookup(llvm::StringRef opType, int64_t opset) const;

  /// Writes the Markdown table of supported operators.
  void print(llvm::raw_ostream &os) const;

private:
  llvm::StringMap<llvm::SmallVector<const OpHandler *, 2>> byOpType;
};

} // namespace cleave::onnx_import

#endif // CLEAVE_LIB_IMPORT_ONNX_OPHANDLERS_H
