//===- KernelInterface.td - how an op lowers to a kernel ---*- tablegen -*-===//
//
// The op interface through which the device-program lowering asks an op how
// it runs: as a scalar expression that a fused elementwise loop evaluates per
// element, or as a call to a library kernel of the runtime's ABI
// (runtime/include/cleave/rt/KernelList.def). cleave ops implement it as
// external models (lib/Conversion), so the dialect does not depend on the
// back end.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CONVERSION_KERNELINTERFACE_TD
#define CLEAVE_CONVERSION_KERNELINTERFACE_TD

include "mlir/IR/OpBase.td"

def Cleave_KernelInterface : OpInterface<"KernelInterface"> {
  let cppNamespace = "::cleave";
  let description = [{
    An op either computes each result element from the elements at the same
    (broadcast) index of its operands, and then describes that computation as
    a scalar expression (`buildScalar`), so that chains of such ops fuse into
    one generated loop; or it names a library kernel and the integer and float
    attributes that kernel takes, in the order KernelList.def gives.
  }];

  let methods = [
    InterfaceMethod<[{
        Builds the scalar expression of one result element from the
        expressions of the operands' elements (`operands`, one per operand)
        and returns its node, or failure when the op is not elementwise.
      }],
      "::mlir::FailureOr<int>", "buildScalar",
      (ins "::cleave::ScalarExprBuilder &":$builder,
           "::llvm::ArrayRef<int>":$operands),
      [{}], [{ return ::mlir::failure(); }]>,
    InterfaceMethod<[{
        Whether the scalar expression reads operand `index`: an op that
        overwrites its destination (a clear, an assignment) does not, and
        its loop loads nothing for it (`buildScalar` gets -1 there).
      }],
      "bool", "readsOperand", (ins "unsigned":$index),
      [{}], [{ return true; }]>,
    InterfaceMethod<[{
        For a reduction that a generated loop can compute (so that the
        elementwise chain feeding it fuses into the same loop): how elements
        combine, and the reduced dimensions. Fails for other ops.
      }],
      "::mlir::FailureOr<::cleave::ScalarReduction>", "getScalarReduction",
      (ins), [{}], [{ return ::mlir::failure(); }]>,
    InterfaceMethod<[{
        Fills `call` (kernel name, attributes) when the op runs as a library
        kernel whose inputs are the op's operands and whose outputs are its
        results. Fails, with a diagnostic on the op, for attribute values no
        kernel implements.
      }],
      "::mlir::LogicalResult", "buildKernelCall",
      (ins "::cleave::KernelCall &":$call),
      [{}], [{ return ::mlir::failure(); }]>,
  ];
}

#endif // CLEAVE_CONVERSION_KERNELINTERFACE_TD
