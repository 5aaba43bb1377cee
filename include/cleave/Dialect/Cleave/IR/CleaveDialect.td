//===- CleaveDialect.td - cleave dialect definition --------*- tablegen -*-===//
//
// The cleave dialect: tensor operations at the level of ONNX semantics, with
// one operation per concept and attributes normalised by the importer.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_TD

include "mlir/IR/OpBase.td"

def Cleave_Dialect : Dialect {
  let name = "cleave";
  let cppNamespace = "::cleave";
  let summary = "Tensor operations for ahead-of-time model partitioning.";
  let description = [{
    The `cleave` dialect represents a neural-network inference graph at the
    level of ONNX operator semantics. It is curated rather than generated:
    there is one operation per concept (no per-opset variants), every
    configuration input that ONNX passes as a tensor (axes, pads, shapes,
    split sizes, ...) is an attribute after import, negative axes are
    normalised, and implicit padding modes are made explicit.

    Values are ranked tensors of builtin element types. Once every graph input
    has a static shape, shape-computation subgraphs fold to constants and every
    value in the IR has a static shape; that is the form the cost model, the
    planner and the partitioner consume.

    Weights never appear as data in the IR: `cleave.weight` names a tensor and
    the byte range of a file that holds it.
  }];
  let hasConstantMaterializer = 1;
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_TD
