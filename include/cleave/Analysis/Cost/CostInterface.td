//===- CostInterface.td - per-op work for the cost model ---*- tablegen -*-===//
//
// The op interface through which the cost model asks an op how much work it
// does. cleave ops implement it as external models (lib/Analysis/Cost), so
// the dialect does not depend on the cost model.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ANALYSIS_COST_COSTINTERFACE_TD
#define CLEAVE_ANALYSIS_COST_COSTINTERFACE_TD

include "mlir/IR/OpBase.td"

def Cleave_CostInterface : OpInterface<"CostInterface"> {
  let cppNamespace = "::cleave";
  let description = [{
    The work an op does on its static operand and result shapes, independent
    of the device: arithmetic (FLOPs, a multiply-add counting 2), the bytes it
    reads and writes, and the bytes of parameters among its operands. The
    roofline model (`cleave::getOpCost`) turns that into time on a target.

    Methods may assume that every operand and result type is a ranked tensor
    of static shape; `cleave::getOpCost` checks that before it asks.
  }];

  let methods = [
    InterfaceMethod<[{
        Floating-point (or integer) operations the op performs; a
        multiply-add counts 2.
      }],
      "int64_t", "getFlops">,
    InterfaceMethod<[{
        Bytes the op reads from memory. By default every distinct operand is
        read once, whole.
      }],
      "int64_t", "getBytesRead", (ins), [{}], [{
        return ::cleave::detail::defaultBytesRead($_op.getOperation());
      }]>,
    InterfaceMethod<[{
        Bytes the op writes to memory. By default every result is written
        once, whole.
      }],
      "int64_t", "getBytesWritten", (ins), [{}], [{
        return ::cleave::detail::defaultBytesWritten($_op.getOperation());
      }]>,
    InterfaceMethod<[{
        Bytes of the distinct operands that are model parameters (values of
        ops whose `isParameter` holds, seen through views), whole: they stay
        resident, so the planner counts them as memory. They are usually part
        of the bytes read too; an op that reads a few rows of a parameter (a
        gather from an embedding table) reads less than it holds.
      }],
      "int64_t", "getParameterBytes", (ins), [{}], [{
        return ::cleave::detail::defaultParameterBytes($_op.getOperation());
      }]>,
    InterfaceMethod<[{
        Whether the op's results hold model parameters for the whole run
        (weights, constants) rather than activations.
      }],
      "bool", "isParameter", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        Whether the op's single result is a view of its first operand (same
        bytes, another shape), so that it moves nothing and keeps the
        operand's buffer alive instead of allocating one.
      }],
      "bool", "isView", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        Whether the op is a contraction that runs on matrix units (tensor
        cores), and so at the dense peak of its element type rather than the
        vector (f32) rate.
      }],
      "bool", "usesMatrixUnits", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        The kind of kernel the op runs as, whose measured throughput a
        calibrated target prices it by (docs/targets.md, `calibration`). By
        default `Other`: priced by the roofline on every target.
      }],
      "::cleave::KernelClass", "getKernelClass", (ins), [{}], [{
        return ::cleave::KernelClass::Other;
      }]>,
  ];
}

#endif // CLEAVE_ANALYSIS_COST_COSTINTERFACE_TD
