//===- CleaveDialect.cpp - cleave dialect -----------------------*- C++ -*-===//
//
// Registers the cleave ops and materialises folded constants.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

using namespace mlir;
using namespace cleave;

#include "cleave/Dialect/Cleave/IR/CleaveOpsDialect.cpp.inc"

void CleaveDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cleave/Dialect/Cleave/IR/CleaveOps.cpp.inc"
      >();
}

Operation *CleaveDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}
