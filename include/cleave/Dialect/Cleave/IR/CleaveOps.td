//===- CleaveOps.td - every cleave op ----------------------*- tablegen -*-===//
//
// The op families live in their own files; this file gathers them so that
// one CleaveOps.h.inc declares every op.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveElementwiseOps.td"
include "cleave/Dialect/Cleave/IR/CleaveNNOps.td"
include "cleave/Dialect/Cleave/IR/CleaveShapeOps.td"
include "cleave/Dialect/Cleave/IR/CleaveIndexOps.td"
include "cleave/Dialect/Cleave/IR/CleaveRecurrentOps.td"
include "cleave/Dialect/Cleave/IR/CleaveSelectionOps.td"
include "cleave/Dialect/Cleave/IR/CleaveCommOps.td"
include "cleave/Dialect/Cleave/IR/CleaveTrainingOps.td"

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEOPS_TD
