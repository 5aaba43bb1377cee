//===- CleaveBase.td - base classes for cleave ops ---------*- tablegen -*-===//
//
// Type constraints and op classes shared by every family of cleave ops.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEBASE_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEBASE_TD

include "cleave/Dialect/Cleave/IR/CleaveDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Cleave_FloatType : AnyTypeOf<[F16, BF16, F32, F64]>;
def Cleave_IntType : AnyTypeOf<[I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def Cleave_ElementType : AnyTypeOf<[Cleave_FloatType, Cleave_IntType]>;

def Cleave_Tensor : RankedTensorOf<[Cleave_ElementType]>;
def Cleave_FloatTensor : RankedTensorOf<[Cleave_FloatType]>;
def Cleave_BoolTensor : RankedTensorOf<[I1]>;
def Cleave_IndexTensor : RankedTensorOf<[I32, I64]>;
/// A 1-D tensor of i64, the type of ONNX shape values.
def Cleave_ShapeTensor : 1DTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Op classes
//===----------------------------------------------------------------------===//

class Cleave_Op<string mnemonic, list<Trait> traits = []>
    : Op<Cleave_Dialect, mnemonic, traits>;

/// An op whose result type follows from its operands and attributes. The
/// C++ side implements `inferReturnTypes` on the op's adaptor; the generic
/// verifier then checks that the written result type matches.
class Cleave_InferredOp<string mnemonic, list<Trait> traits = []>
    : Cleave_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

/// Elementwise op of one operand whose result has the operand's type.
class Cleave_UnaryOp<string mnemonic, Type type = Cleave_Tensor,
                     list<Trait> traits = []>
    : Cleave_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
          SameOperandsAndResultType, InferTypeOpInterface])> {
  let arguments = (ins type:$input);
  let results = (outs type:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Elementwise op of two operands with ONNX (numpy) multidirectional
/// broadcasting. The result shape is the broadcast of the operand shapes.
class Cleave_BroadcastBinaryOp<string mnemonic, Type operandType = Cleave_Tensor,
                               Type resultType = Cleave_Tensor,
                               list<Trait> traits = []>
    : Cleave_InferredOp<mnemonic, traits> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEBASE_TD
