//===- CleaveOps.cpp - cleave op definitions --------------------*- C++ -*-===//
//
// Instantiates the generated op classes. The hand-written parts of each op
// (type inference, verifiers, folders) live in the file of its family.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

using namespace mlir;
using namespace cleave;

#define GET_OP_CLASSES
#include "cleave/Dialect/Cleave/IR/CleaveOps.cpp.inc"
