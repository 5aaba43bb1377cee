//===- CleaveTrainingOps.td - optimizer state and updates --*- tablegen -*-===//
//
// The ops a training step adds after the backward ops: persistent optimizer
// state and the fused updates that write the parameters and that state in
// place. Created by `cleave-optimizer-update`; lowered to persistent memory
// and library kernels (`sgd_update`, `adam_update`) of a device program.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVETRAININGOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVETRAININGOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveBase.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Cleave_StateOp : Cleave_Op<"state", [Pure]> {
  let summary = "a persistent tensor that starts as zeros";
  let description = [{
    Optimizer state (momentum buffers, Adam's moments, step counters): a
    tensor of the device program's persistent memory, zeroed when a session
    starts and kept from one call to the next. `name` is unique in the
    function (`<optimizer state>:<parameter>`), so that two states are
    never merged. Only the update ops write it.

    Under tensor parallelism a state follows its parameter: a device holds
    block `r` of `group_size` equal blocks along `split_dim`, over mesh axis
    `axis` (set by `shard-partition`; the three attributes go together).

    Created by `cleave-optimizer-update`; lowered to persistent memory.

    ```mlir
    %m = cleave.state "adam.m:fc1.weight" : tensor<64x256xf32>
    %b = cleave.state "adam.m:fc2.weight" {split_dim = 1 : i64, axis = "tp", group_size = 2 : i64} : tensor<64x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<I64Attr>:$split_dim,
                   OptionalAttr<StrAttr>:$axis,
                   OptionalAttr<I64Attr>:$group_size);
  let results = (outs Cleave_FloatTensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
  let builders = [OpBuilder<(ins "mlir::Type":$output,
                                 "mlir::StringAttr":$name), [{
    build($_builder, $_state, output, name, /*split_dim=*/nullptr,
          /*axis=*/nullptr, /*group_size=*/nullptr);
  }]>];
}

class Cleave_UpdateOp<string mnemonic, list<string> likeParameter>
    : Cleave_Op<mnemonic, [DestinationStyleOpInterface,
                           MemoryEffects<[MemWrite]>,
                           AllTypesMatch<likeParameter>,
                           AllTypesMatch<["gradient_scale", "step",
                                          "new_step"]>]> {
  let hasVerifier = 1;
  code updateClassDeclaration = [{
    /// The tensors written in place: the parameter, then the state.
    mlir::MutableOperandRange getDpsInitsMutable() {
      return mlir::MutableOperandRange(getOperation(), 2,
                                       getOperation()->getNumOperands() - 2);
    }
  }];
}

def Cleave_SgdUpdateOp : Cleave_UpdateOp<"sgd_update",
    ["gradient", "parameter", "new_parameter"]> {
  let summary = "one step of stochastic gradient descent, in place";
  let description = [{
    PyTorch's `torch.optim.SGD` step for one parameter, with the gradient
    first multiplied by `gradient_scale` (a float scalar: the factor of
    clipping by global norm, or 1):

    ```
    g = gradient * gradient_scale + weight_decay * parameter
    momentum_buffer = step == 0 ? g
                      : momentum * momentum_buffer + (1 - dampening) * g
    g = nesterov ? g + momentum * momentum_buffer : momentum_buffer
    parameter -= lr(step) * g;  step += 1
    ```

    (without momentum, `g` as it is). A `gradient_scale` that is not
    finite skips the step: the op writes nothing, the step count included
    (dynamic loss scaling makes the scale NaN when the gradients overflowed,
    so that a skipped step leaves the optimizer as it was). The learning
    rate of step `s`
    (counted from 0) is `learning_rate` times a factor: `(s + 1) /
    warmup_steps` during the warm-up, then, when `decay_steps` is positive,
    a cosine from 1 down to `min_lr_ratio` over the steps
    `[warmup_steps, decay_steps)`, else 1.

    The parameter is a writable weight and the buffer and the step (a float
    scalar) are `cleave.state`s: the results are the same tensors after the
    update (destination style), which no op reads; the op is kept for its
    write. Only an update with momentum has a buffer (and its result): plain
    SGD, and the running statistics of a batch normalization, keep none.

    The operands are written `%gradient, %gradient_scale, %parameter,
    [%momentum_buffer,] %step`, then the attributes, then the parameter's
    type and the step's. The gradient, the parameter and the buffer have
    one type, the scale and the step another. Verifier labels:
    `sgd_update_c1` (the scale and the step are scalars), `sgd_update_c2`
    (a nonzero momentum needs a buffer), `sgd_update_c3` (Nesterov needs a
    nonzero momentum), `sgd_update_c4` (no buffer without momentum),
    `sgd_update_c5` (the buffer and its result go together and have the
    parameter's type).

    ```mlir
    %p2, %b2, %s2 = cleave.sgd_update %g, %scale, %p, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4x8xf32>, tensor<f32>
    %p3, %s3 = cleave.sgd_update %g, %scale, %p, %s {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4x8xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$gradient,
                   Cleave_FloatTensor:$gradient_scale,
                   Cleave_FloatTensor:$parameter,
                   Optional<Cleave_FloatTensor>:$momentum_buffer,
                   Cleave_FloatTensor:$step, F64Attr:$learning_rate,
                   F64Attr:$momentum, F64Attr:$dampening, F64Attr:$weight_decay,
                   BoolAttr:$nesterov, I64Attr:$warmup_steps,
                   I64Attr:$decay_steps, F64Attr:$min_lr_ratio);
  let results = (outs Cleave_FloatTensor:$new_parameter,
                 Optional<Cleave_FloatTensor>:$new_momentum_buffer,
                 Cleave_FloatTensor:$new_step);
  // The buffer is told apart by the number of operands (4 or 5), which a
  // declarative format cannot do before it has parsed them.
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = updateClassDeclaration;
  let builders = [OpBuilder<(ins "mlir::Value":$gradient,
      "mlir::Value":$gradientScale, "mlir::Value":$parameter,
      "mlir::Value":$momentumBuffer, "mlir::Value":$step,
      "mlir::NamedAttrList":$attributes), [{
    // Without momentum there is no buffer: momentumBuffer is null.
    llvm::SmallVector<mlir::Type, 3> types{parameter.getType()};
    llvm::SmallVector<mlir::Value, 5> operands{gradient, gradientScale,
                                               parameter};
    if (momentumBuffer) {
      types.push_back(momentumBuffer.getType());
      operands.push_back(momentumBuffer);
    }
    types.push_back(step.getType());
    operands.push_back(step);
    build($_builder, $_state, types, operands, attributes.getAttrs());
  }]>];
}

def Cleave_AdamUpdateOp : Cleave_UpdateOp<"adam_update",
    ["gradient", "parameter", "first_moment", "second_moment",
     "new_parameter", "new_first_moment", "new_second_moment"]> {
  let summary = "one step of Adam or AdamW, in place";
  let description = [{
    PyTorch's `torch.optim.Adam` (`decoupled = false`: the weight decay is
    added to the gradient) or `torch.optim.AdamW` (`decoupled = true`: the
    parameter decays by `lr * weight_decay` first) step for one parameter,
    with the gradient first multiplied by `gradient_scale`:

    ```
    step += 1;  g = gradient * gradient_scale (+ weight_decay * parameter)
    first_moment = beta1 * first_moment + (1 - beta1) * g
    second_moment = beta2 * second_moment + (1 - beta2) * g * g
    parameter -= lr / (1 - beta1^step) * first_moment
                 / (sqrt(second_moment) / sqrt(1 - beta2^step) + epsilon)
    ```

    The learning rate follows the schedule `cleave.sgd_update` describes,
    and a `gradient_scale` that is not finite skips the step as it does
    there (nothing written, the step count included).
    The parameter is a writable weight, the moments and the step (a float
    scalar) are `cleave.state`s; the results are the same tensors after the
    update (destination style).

    The gradient, the parameter and the moments have one type, the scale
    and the step another. Verifier label: `adam_update_c1` (the scale and
    the step are scalars).

    ```mlir
    %p2, %m2, %v2, %s2 = cleave.adam_update %g, %scale, %p, %m, %v, %s {learning_rate = 1.0e-03 : f64, beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, epsilon = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, decoupled = true, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<4x8xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$gradient,
                   Cleave_FloatTensor:$gradient_scale,
                   Cleave_FloatTensor:$parameter,
                   Cleave_FloatTensor:$first_moment,
                   Cleave_FloatTensor:$second_moment,
                   Cleave_FloatTensor:$step, F64Attr:$learning_rate,
                   F64Attr:$beta1, F64Attr:$beta2, F64Attr:$epsilon,
                   F64Attr:$weight_decay, BoolAttr:$decoupled,
                   I64Attr:$warmup_steps, I64Attr:$decay_steps,
                   F64Attr:$min_lr_ratio);
  let results = (outs Cleave_FloatTensor:$new_parameter,
                 Cleave_FloatTensor:$new_first_moment,
                 Cleave_FloatTensor:$new_second_moment,
                 Cleave_FloatTensor:$new_step);
  let assemblyFormat = [{
    $gradient `,` $gradient_scale `,` $parameter `,` $first_moment `,`
    $second_moment `,` $step attr-dict `:` type($parameter) `,` type($step)
  }];
  let extraClassDeclaration = updateClassDeclaration;
  let builders = [OpBuilder<(ins "mlir::Value":$gradient,
      "mlir::Value":$gradientScale, "mlir::Value":$parameter,
      "mlir::Value":$firstMoment, "mlir::Value":$secondMoment,
      "mlir::Value":$step, "mlir::NamedAttrList":$attributes), [{
    build($_builder, $_state,
          {parameter.getType(), firstMoment.getType(), secondMoment.getType(),
           step.getType()},
          {gradient, gradientScale, parameter, firstMoment, secondMoment, step},
          attributes.getAttrs());
  }]>];
}

//===----------------------------------------------------------------------===//
// Gradient accumulation
//===----------------------------------------------------------------------===//

def Cleave_AccumulateOp : Cleave_Op<"accumulate",
    [DestinationStyleOpInterface, MemoryEffects<[MemWrite]>,
     AllTypesMatch<["value", "accumulator", "new_accumulator"]>]> {
  let summary = "adds a value into a persistent accumulator, in place";
  let description = [{
    `accumulator += value`, where the accumulator is a `cleave.state` that
    lives from one call to the next: a training step over several
    microbatches sums each microbatch's gradients (and its loss) into one,
    and the update reads the sums once per step. The result is the
    accumulator after the addition (destination style).

    With `loss`, the value is the step's loss: that accumulation belongs to
    the forward phase, and what the loss depends on is the forward; the
    gradients' accumulations belong to the backward phase.

    Created by `cleave-optimizer-update`; lowered to a generated loop that
    writes persistent memory.

    ```mlir
    %g2 = cleave.accumulate %g, %sum : tensor<4x8xf32>
    %l2 = cleave.accumulate %loss, %loss_sum {loss} : tensor<f32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$value,
                   Cleave_FloatTensor:$accumulator, UnitAttr:$loss);
  let results = (outs Cleave_FloatTensor:$new_accumulator);
  let assemblyFormat = [{
    $value `,` $accumulator attr-dict `:` type($accumulator)
  }];
  let extraClassDeclaration = [{
    mlir::MutableOperandRange getDpsInitsMutable() {
      return getAccumulatorMutable();
    }
  }];
}

def Cleave_ClearOp : Cleave_Op<"clear",
    [DestinationStyleOpInterface, MemoryEffects<[MemWrite]>,
     AllTypesMatch<["accumulator", "new_accumulator"]>]> {
  let summary = "sets a persistent accumulator to zeros, in place";
  let description = [{
    Empties an accumulator (a `cleave.state` that `cleave.accumulate`
    writes) after the update of a training step has read it, so that the
    next step's first microbatch starts from zeros. The result is the
    accumulator after the write (destination style).

    ```mlir
    %g3 = cleave.clear %g2 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$accumulator);
  let results = (outs Cleave_FloatTensor:$new_accumulator);
  let assemblyFormat = "$accumulator attr-dict `:` type($accumulator)";
  let extraClassDeclaration = [{
    mlir::MutableOperandRange getDpsInitsMutable() {
      return getAccumulatorMutable();
    }
  }];
}

def Cleave_AssignOp : Cleave_Op<"assign",
    [DestinationStyleOpInterface, MemoryEffects<[MemWrite]>,
     AllTypesMatch<["value", "target", "new_target"]>]> {
  let summary = "overwrites a persistent tensor with a value, in place";
  let description = [{
    `target = value`, where the target lives from one call to the next (a
    writable `cleave.weight` or a `cleave.state`). Under ZeRO each
    data-parallel replica updates its block of a parameter and the blocks
    are gathered; the gathered parameter is assigned back to the weight
    that the next step's forward reads. The result is the target after the
    write (destination style).

    Created by `cleave-optimizer-update`; lowered to a generated loop that
    writes persistent memory.

    ```mlir
    %w2 = cleave.assign %gathered, %w : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$value, Cleave_FloatTensor:$target);
  let results = (outs Cleave_FloatTensor:$new_target);
  let assemblyFormat = "$value `,` $target attr-dict `:` type($target)";
  let extraClassDeclaration = [{
    mlir::MutableOperandRange getDpsInitsMutable() {
      return getTargetMutable();
    }
  }];
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVETRAININGOPS_TD
