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

    The dialect's discardable attributes are the contract between the
    importer, the planner, the partitioner and codegen
    (`cleave/Dialect/Cleave/IR/CleaveAttributes.h` reads and writes them;
    the dialect verifies their form):

    - on the module: `cleave.mesh = {pp = P : i64, tp = T : i64, dp = D :
      i64}` (positive sizes), `cleave.microbatches = M : i64` (positive),
      `cleave.schedule = "gpipe" | "1f1b" | "interleaved:V"`,
      `cleave.zero = Z : i64` (the ZeRO stage a training plan chose: 0, 1
      or 2),
      `cleave.target` (the target the plan was made for), and the
      provenance the importer records: `cleave.onnx_model`,
      `cleave.onnx_producer`, `cleave.onnx_opset`, `cleave.onnx_ir_version`;
    - on ops: `cleave.stage = S : i64` (the pipeline stage of the op; on a
      stage function, the stage it runs; on a device function of the
      interleaved schedule, the virtual stage the op came from),
      `cleave.chunk = C : i64` (on a device function of the interleaved
      schedule: the model chunk of the device the op belongs to, whose
      entries run it), `cleave.tp_loop = L : i64` (the
      loop of the op's `ShardingInterface` split over tp),
      `cleave.batch_dims = array<i64: operandDim, resultDim>` (a reshape
      that carries the batch between these dimensions), and the markers
      `cleave.writable` (a parameter an update phase writes: it lives in
      persistent memory), `cleave.stash` (a result a later entry reads:
      it lives in a stash region) and `cleave.recompute` (a forward op of
      a segment the plan recomputes: the backward computes its result
      again rather than stash it) with `cleave.recompute_joined` beside
      it where the segment's outputs are not stashed either (the next
      segment's backward recomputes them from the segment's own inputs,
      so that the two recompute from one stash);
    - on grids: `cleave.axes = ["dp", "tp", ...]`, the mesh axis of each
      grid axis;
    - on function arguments and results: `cleave.name` (the ONNX port),
      `cleave.input = i : i64` / `cleave.output = j : i64` (the entry
      argument or result a stage port is), `cleave.batch_dim = d : i64` (the
      dimension that holds the batch when it is cut), and on results
      `cleave.gradient_of = "<weight name>"` (the result is the gradient of
      the loss with respect to that parameter; set by `cleave-autodiff`).

    Stages, loops, ports and dimensions are non-negative; a malformed one is
    a verifier error naming the attribute.
  }];
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let discardableAttrs = (ins
    "::mlir::DictionaryAttr":$mesh,
    "::mlir::IntegerAttr":$microbatches,
    "::mlir::IntegerAttr":$zero,
    "::mlir::StringAttr":$schedule,
    "::mlir::StringAttr":$target,
    "::mlir::StringAttr":$onnx_model,
    "::mlir::StringAttr":$onnx_producer,
    "::mlir::IntegerAttr":$onnx_opset,
    "::mlir::IntegerAttr":$onnx_ir_version,
    "::mlir::IntegerAttr":$stage,
    "::mlir::IntegerAttr":$chunk,
    "::mlir::IntegerAttr":$tp_loop,
    "::mlir::DenseI64ArrayAttr":$batch_dims,
    "::mlir::ArrayAttr":$axes,
    "::mlir::StringAttr":$name,
    "::mlir::IntegerAttr":$input,
    "::mlir::IntegerAttr":$output,
    "::mlir::IntegerAttr":$batch_dim,
    "::mlir::StringAttr":$gradient_of,
    "::mlir::UnitAttr":$writable,
    "::mlir::UnitAttr":$stash,
    "::mlir::UnitAttr":$recompute,
    "::mlir::UnitAttr":$recompute_joined
  );
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_TD
