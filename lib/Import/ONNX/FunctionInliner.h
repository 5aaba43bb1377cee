//===- FunctionInliner.h - model-local ONNX functions -----------*- C++ -*-===//
//
// Replaces every call of a model-local function (`ModelProto.functions`, as
// torch's exporters write for modules kept whole) with the function's body,
// before anything is imported, so that the importer sees one flat graph.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_IMPORT_ONNX_FUNCTIONINLINER_H
#define CLEAVE_LIB_IMPORT_ONNX_FUNCTIONINLINER_H

#include "WireFormat.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/LogicalResult.h"

#include <cstddef>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace cleave::onnx_import {

/// The most nodes inlining may add to the main graph: a guard against
/// functions that call each other in a fan (each level doubling the count),
/// which would otherwise exhaust memory and time. Importing a node costs far
/// more than inlining it: 100,000 inlined nodes take about 1.5 s and 200 MB
/// to import in a release build, 3 times that time under the sanitizers. The
/// largest exports hold tens of thousands.
constexpr size_t kMaxInlinedNodes = 100'000;

/// The most bytes the inlined nodes may take (their messages and names, as
/// counted before anything is copied): calls nested deep make long names,
/// `<call>/<call>/.../<node>`, and references to a call's attribute copy it
/// into every node.
constexpr size_t kMaxInlinedBytes = size_t{32} << 20;

/// Inlines the calls of `model`'s local functions into its main graph, calls
/// inside function bodies included, and renumbers `layout`'s attribute
/// tensors to the nodes' new places. Inlined nodes are named
/// `<call node>/<function node>` and their intermediate values
/// `<call node>/<value>` (made unique against every name of the graph);
/// unnamed nodes of the main graph are given the name they are reported
/// under before inlining (`<op type>_<index>`). Attributes that refer to the
/// call's (`ref_attr_name`) take the call's value or the function's
/// default, and are dropped when neither exists.
///
/// Fails, with an error at `loc`, on a function defined twice, a call with
/// more inputs or outputs than its function, a function that calls itself,
/// a function at another opset of the default domain than the model, a
/// function that reads a value it does not define, or a graph that would
/// exceed kMaxInlinedNodes. A model without functions is left untouched.
llvm::LogicalResult inlineLocalFunctions(onnx::ModelProto &model,
                                         ModelLayout &layout,
                                         mlir::Location loc);

} // namespace cleave::onnx_import

#endif // CLEAVE_LIB_IMPORT_ONNX_FUNCTIONINLINER_H
