//===- CleaveRecurrentOps.td - RNN, LSTM, GRU --------------*- tablegen -*-===//
//
// Recurrent layers over a whole sequence, in ONNX's layout 0
// (sequence-major); the importer transposes around layout 1.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVERECURRENTOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVERECURRENTOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveBase.td"


/// Operands and attributes common to the three recurrent ops. `gates` is the
/// number of gate blocks stacked in W and R (1 for RNN, 3 for GRU, 4 for
/// LSTM).
class Cleave_RecurrentOp<string mnemonic, int gates, dag extraArgs,
                         dag extraResults>
    : Cleave_InferredOp<mnemonic, [AttrSizedOperandSegments]> {
  let arguments = !con((ins Cleave_FloatTensor:$input,
                            Cleave_FloatTensor:$weight,
                            Cleave_FloatTensor:$recurrence,
                            Optional<Cleave_FloatTensor>:$bias,
                            Optional<Cleave_FloatTensor>:$initial_h),
                       extraArgs,
                       (ins I64Attr:$hidden_size,
                            DefaultValuedStrAttr<StrAttr, "forward">:$direction,
                            StrArrayAttr:$activations,
                            OptionalAttr<F32Attr>:$clip));
  let results = !con((outs Cleave_FloatTensor:$y, Cleave_FloatTensor:$y_h),
                     extraResults);
  let hasVerifier = 1;
  int numGates = gates;
}

def Cleave_RNNOp : Cleave_RecurrentOp<"rnn", 1, (ins), (outs)> {
  let summary = "simple recurrent layer over a sequence";
  let description = [{
    ONNX `RNN`: `h_t = f(X_t W^T + h_{t-1} R^T + Wb + Rb)`. `input` is
    `seq x batch x input_size`; `weight` is `dirs x hidden x input_size`,
    `recurrence` `dirs x hidden x hidden`, the optional `bias`
    `dirs x 2*hidden` (Wb then Rb), `initial_h` `dirs x batch x hidden`, where
    `dirs` is 2 for `direction = "bidirectional"` and 1 otherwise.
    `activations` has one name per direction. Results: `y`
    (`seq x dirs x batch x hidden`) and the last state `y_h`
    (`dirs x batch x hidden`).

    Shared rules: `direction` is `forward`, `reverse` or `bidirectional`;
    `hidden_size` is positive and matches the weight shapes; `activations`
    names come from the parameter-free ONNX activations `Relu`, `Tanh`,
    `Sigmoid`, `Softsign` and `Softplus` (the parameterised ones such as
    `LeakyRelu` or `HardSigmoid` need ONNX's `activation_alpha` /
    `activation_beta`, which are not represented); `clip`, when present, is
    positive.

    ```mlir
    %y, %h = cleave.rnn %x, %w, %r bias %b {hidden_size = 32 : i64, direction = "bidirectional", activations = ["Relu", "Relu"]}
        : (tensor<10x2x16xf32>, tensor<2x32x16xf32>, tensor<2x32x32xf32>, tensor<2x64xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>)
    ```
  }];
  let assemblyFormat = [{
    $input `,` $weight `,` $recurrence (`bias` $bias^)?
    (`initial_h` $initial_h^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Cleave_GRUOp : Cleave_RecurrentOp<"gru", 3,
    (ins DefaultValuedAttr<BoolAttr, "false">:$linear_before_reset), (outs)> {
  let summary = "gated recurrent unit layer over a sequence";
  let description = [{
    ONNX `GRU` with gates stacked `z, r, h` in `weight` (`dirs x 3*hidden x
    input_size`) and `recurrence` (`dirs x 3*hidden x hidden`); `bias` is
    `dirs x 6*hidden`. `activations` has two names per direction (gate
    activation, then hidden activation). `linear_before_reset` selects the
    variant that applies the reset gate after the recurrent matmul (the one
    PyTorch implements). `input`, `initial_h` and the results are shaped as
    for `cleave.rnn`.

    Shared rules: `direction` is `forward`, `reverse` or `bidirectional`;
    `hidden_size` is positive and matches the weight shapes; `activations`
    names come from the parameter-free ONNX activations `Relu`, `Tanh`,
    `Sigmoid`, `Softsign` and `Softplus` (the parameterised ones such as
    `LeakyRelu` or `HardSigmoid` need ONNX's `activation_alpha` /
    `activation_beta`, which are not represented); `clip`, when present, is
    positive.

    ```mlir
    %y, %h = cleave.gru %x, %w, %r bias %b {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh"], linear_before_reset = true}
        : (tensor<5x1x4xf32>, tensor<1x24x4xf32>, tensor<1x24x8xf32>, tensor<1x48xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>)
    ```
  }];
  let assemblyFormat = [{
    $input `,` $weight `,` $recurrence (`bias` $bias^)?
    (`initial_h` $initial_h^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Cleave_LSTMOp : Cleave_RecurrentOp<"lstm", 4,
    (ins Optional<Cleave_FloatTensor>:$initial_c,
         Optional<Cleave_FloatTensor>:$peepholes,
         DefaultValuedAttr<BoolAttr, "false">:$input_forget),
    (outs Cleave_FloatTensor:$y_c)> {
  let summary = "long short-term memory layer over a sequence";
  let description = [{
    ONNX `LSTM` with gates stacked `i, o, f, c` in `weight` (`dirs x
    4*hidden x input_size`) and `recurrence` (`dirs x 4*hidden x hidden`);
    `bias` is `dirs x 8*hidden`, `initial_c` like `initial_h`, and the
    optional `peepholes` `dirs x 3*hidden`. `activations` has three names per
    direction (gates, cell input, cell output). Results: `y`
    (`seq x dirs x batch x hidden`), and the last hidden and cell states
    `y_h`, `y_c` (`dirs x batch x hidden`).

    Shared rules: `direction` is `forward`, `reverse` or `bidirectional`;
    `hidden_size` is positive and matches the weight shapes; `activations`
    names come from the parameter-free ONNX activations `Relu`, `Tanh`,
    `Sigmoid`, `Softsign` and `Softplus` (the parameterised ones such as
    `LeakyRelu` or `HardSigmoid` need ONNX's `activation_alpha` /
    `activation_beta`, which are not represented); `clip`, when present, is
    positive.

    ```mlir
    %y, %h, %c = cleave.lstm %x, %w, %r bias %b {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"]}
        : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, tensor<1x64xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
    ```
  }];
  let assemblyFormat = [{
    $input `,` $weight `,` $recurrence (`bias` $bias^)?
    (`initial_h` $initial_h^)? (`initial_c` $initial_c^)?
    (`peepholes` $peepholes^)? attr-dict `:` functional-type(operands, results)
  }];
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVERECURRENTOPS_TD
