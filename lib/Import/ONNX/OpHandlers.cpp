//===- OpHandlers.cpp - the table of ONNX operator handlers ---------------===//

#include "OpHandlers.h"

#include "llvm/ADT/STLExtras.h"

#include <string>
#include <vector>

using namespace llvm;

namespace cleave::onnx_import {

OpHandlerTable::OpHandlerTable() {
  for (ArrayRef<OpHandler> family :
       {getElementwiseHandlers(), getNNHandlers(), getShapeHandlers(),
        getRecurrentHandlers(), getIndexHandlers(), getSelectionHandlers(),
        getEinsumHandlers()})
    for (const OpHandler &handler : family)
      byOpType[handler.opType].push_back(&handler);
  for (auto &entry : byOpType)
    llvm::sort(entry.second, [](const OpHandler *a, const OpHandler *b) {
      return a->sinceVersion < b->sinceVersion;
    });
}

const OpHandler *OpHandlerTable::lookup(StringRef opType, int64_t opset) const {
  auto it = byOpType.find(opType);
  if (it == byOpType.end())
    return nullptr;
  const OpHandler *best = nullptr;
  for (const OpHandler *handler : it->second)
    if (handler->sinceVersion <= opset)
      best = handler;
  return best;
}

void OpHandlerTable::print(raw_ostream &os) const {
  os << "# Supported ONNX operators\n\n"
     << "<!-- Generated from the importer's handler table by\n"
     << "     `cleave-translate --onnx-operator-table`; do not edit. -->\n\n"
     << "`cleave-translate --import-onnx` reads models of the default ONNX "
        "domain\n"
     << "at opsets " << kMinOpset << " to " << kMaxOpset
     << ". Each row covers one operator over the opsets in which the\n"
     << "importer treats it alike. Configuration inputs (shapes, axes, "
        "pads, sizes,\n"
     << "scales, bounds, ...) must be constants once shape computations "
        "are folded.\n"
     << "Calls of the model's local functions (`FunctionProto`) are "
        "inlined first,\n"
     << "their nodes named `<call>/<node>`. Operators that are not listed, "
        "other\n"
     << "domains and other opsets are reported together, in one error, "
        "before\n"
     << "anything is imported.\n\n"
     << "| ONNX operator | Opsets | cleave ops | Import notes |\n"
     << "| --- | --- | --- | --- |\n";

  std::vector<StringRef> opTypes;
  for (const auto &entry : byOpType)
    opTypes.push_back(entry.getKey());
  llvm::sort(opTypes);
  for (StringRef opType : opTypes) {
    const auto &entries = byOpType.find(opType)->second;
    for (auto [i, handler] : llvm::enumerate(entries)) {
      int64_t last =
          i + 1 < entries.size() ? entries[i + 1]->sinceVersion - 1 : kMaxOpset;
      os << "| " << opType << " | " << handler->sinceVersion << "-" << last
         << " | ";
      SmallVector<StringRef> ops;
      handler->cleaveOps.split(ops, ' ', -1, /*KeepEmpty=*/false);
      if (ops.empty())
        os << "-";
      llvm::interleave(
          ops, os, [&](StringRef op) { os << "`" << op << "`"; }, ", ");
      os << " | ";
      if (!handler->notes.empty())
        os << handler->notes << " ";
      os << "|\n";
    }
  }
}

} // namespace cleave::onnx_import
