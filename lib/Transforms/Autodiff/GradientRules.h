//===- GradientRules.h - gradient external models by family -----*- C++ -*-===//
//
// Private to lib/Transforms/Autodiff: each op family's file attaches its
// `GradientInterface` external models through one of these.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_TRANSFORMS_AUTODIFF_GRADIENTRULES_H
#define CLEAVE_LIB_TRANSFORMS_AUTODIFF_GRADIENTRULES_H

#include "mlir/IR/MLIRContext.h"

namespace cleave {
namespace detail {

/// RMS normalisation, rotary embedding and scaled dot-product attention.
void attachAttentionGradients(mlir::MLIRContext *context);
/// Collectives: an all-reduce's sum along the data-parallel axis.
void attachCommGradients(mlir::MLIRContext *context);
/// Unary math, broadcasting arithmetic, selection and casts.
void attachElementwiseGradients(mlir::MLIRContext *context);
/// Convolutions, pools and per-channel normalisations.
void attachConvGradients(mlir::MLIRContext *context);
/// Contractions, reductions, softmax and normalisations.
void attachNNGradients(mlir::MLIRContext *context);
/// RNN, GRU and LSTM layers (backpropagation through time).
void attachRecurrentGradients(mlir::MLIRContext *context);
/// Reshapes, permutations, slicing, joining, gathering and padding.
void attachShapeGradients(mlir::MLIRContext *context);

} // namespace detail
} // namespace cleave

#endif // CLEAVE_LIB_TRANSFORMS_AUTODIFF_GRADIENTRULES_H
