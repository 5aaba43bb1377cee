//===- ConstantEval.cpp - evaluate elementwise ops on constants -*- C++ -*-===//
//
// Index arithmetic for reading broadcast operands of constant folds.
//
//===----------------------------------------------------------------------===//

#include "ConstantEval.h"

using namespace mlir;
using namespace cleave;

bool BroadcastIndexer::broadcastsTo(ArrayRef<int64_t> operandShape,
                                    ArrayRef<int64_t> resultShape) {
  if (operandShape.size() > resultShape.size())
    return false;
  size_t offset = resultShape.size() - operandShape.size();
  for (auto [i, size] : llvm::enumerate(operandShape))
    if (size != 1 && size != resultShape[offset + i])
      return false;
  return true;
}

BroadcastIndexer::BroadcastIndexer(ArrayRef<int64_t> operandShape,
                                   ArrayRef<int64_t> resultShape)
    : resultShape(resultShape), operandStrides(resultShape.size(), 0) {
  // Walk the operand from its innermost dimension outwards; its dimensions
  // line up with the trailing dimensions of the result.
  size_t offset = resultShape.size() - operandShape.size();
  int64_t stride = 1;
  for (size_t i = operandShape.size(); i-- > 0;) {
    if (operandShape[i] != 1)
      operandStrides[offset + i] = stride;
    stride *= operandShape[i];
  }
}

int64_t BroadcastIndexer::operandIndex(int64_t resultIndex) const {
  int64_t index = 0;
  for (size_t i = resultShape.size(); i-- > 0;) {
    index += (resultIndex % resultShape[i]) * operandStrides[i];
    resultIndex /= resultShape[i];
  }
  return index;
}
