// RUN: cleave-opt %s -split-input-file -verify-diagnostics

// Every verifier and type-inference error of the recurrent ops. Errors found
// while inferring the result types are followed by the generic "failed to
// infer returned types".

func.func @rnn_direction(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+1 {{'cleave.rnn' op direction must be 'forward', 'reverse' or 'bidirectional', got 'backward'}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, direction = "backward", activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

func.func @rnn_activation_count(%x: tensor<10x2x16xf32>, %w: tensor<2x32x16xf32>, %r: tensor<2x32x32xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>) {
  // expected-error @+1 {{'cleave.rnn' op activations has 1 names, expected 2 (1 per direction, 2 directions)}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, direction = "bidirectional", activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<2x32x16xf32>, tensor<2x32x32xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>)
  return %y, %h : tensor<10x2x2x32xf32>, tensor<2x2x32xf32>
}

// -----

// Parameterised activations are not represented.
func.func @rnn_activation_name(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+1 {{'cleave.rnn' op activations[0] ('LeakyRelu') must be one of Relu, Tanh, Sigmoid, Softsign, Softplus}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, activations = ["LeakyRelu"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

func.func @rnn_clip(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+1 {{'cleave.rnn' op clip (-1.000000e+00) must be positive}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, activations = ["Tanh"], clip = -1.0 : f32} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

func.func @rnn_hidden_size(%x: tensor<10x2x16xf32>, %w: tensor<1x0x16xf32>, %r: tensor<1x0x0xf32>) -> (tensor<10x1x2x0xf32>, tensor<1x2x0xf32>) {
  // expected-error @+2 {{'cleave.rnn' op hidden_size (0) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 0 : i64, activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x0x16xf32>, tensor<1x0x0xf32>) -> (tensor<10x1x2x0xf32>, tensor<1x2x0xf32>)
  return %y, %h : tensor<10x1x2x0xf32>, tensor<1x2x0xf32>
}

// -----

func.func @rnn_input_rank(%x: tensor<10x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+2 {{'cleave.rnn' op input must be 3-D (seq_length x batch x input_size), got 'tensor<10x16xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, activations = ["Tanh"]} : (tensor<10x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

func.func @rnn_element_types(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf16>, %r: tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+2 {{'cleave.rnn' op weight element type ('f16') must equal input element type ('f32')}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf16>, tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

// A bidirectional layer needs weights for both directions.
func.func @rnn_weight_directions(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<2x32x32xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>) {
  // expected-error @+2 {{'cleave.rnn' op weight must have shape [2, 32, 16] (num_directions x 1*hidden_size x input_size), got 'tensor<1x32x16xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, direction = "bidirectional", activations = ["Tanh", "Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<2x32x32xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>)
  return %y, %h : tensor<10x2x2x32xf32>, tensor<2x2x32xf32>
}

// -----

func.func @rnn_weight_input_size(%x: tensor<10x2x16xf32>, %w: tensor<1x32x8xf32>, %r: tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+2 {{'cleave.rnn' op weight must have shape [1, 32, 16] (num_directions x 1*hidden_size x input_size), got 'tensor<1x32x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x8xf32>, tensor<1x32x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

func.func @rnn_recurrence_hidden(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<1x32x16xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+2 {{'cleave.rnn' op recurrence must have shape [1, 32, 32] (num_directions x 1*hidden_size x hidden_size), got 'tensor<1x32x16xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x16xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

func.func @rnn_bias_shape(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<1x32x32xf32>, %b: tensor<1x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+2 {{'cleave.rnn' op bias must have shape [1, 64] (num_directions x 2*hidden_size), got 'tensor<1x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r bias %b {hidden_size = 32 : i64, activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>, tensor<1x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

func.func @rnn_initial_h_batch(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<1x32x32xf32>, %h0: tensor<1x3x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+2 {{'cleave.rnn' op initial_h must have shape [1, 2, 32] (num_directions x batch x hidden_size), got 'tensor<1x3x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r initial_h %h0 {hidden_size = 32 : i64, activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>, tensor<1x3x32xf32>) -> (tensor<10x1x2x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x1x2x32xf32>, tensor<1x2x32xf32>
}

// -----

// y is seq x num_directions x batch x hidden.
func.func @rnn_result_layout(%x: tensor<10x2x16xf32>, %w: tensor<1x32x16xf32>, %r: tensor<1x32x32xf32>) -> (tensor<10x2x1x32xf32>, tensor<1x2x32xf32>) {
  // expected-error @+2 {{'cleave.rnn' op inferred type(s) 'tensor<10x1x2x32xf32>', 'tensor<1x2x32xf32>' are incompatible with return type(s) of operation 'tensor<10x2x1x32xf32>', 'tensor<1x2x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, activations = ["Tanh"]} : (tensor<10x2x16xf32>, tensor<1x32x16xf32>, tensor<1x32x32xf32>) -> (tensor<10x2x1x32xf32>, tensor<1x2x32xf32>)
  return %y, %h : tensor<10x2x1x32xf32>, tensor<1x2x32xf32>
}

// -----

func.func @gru_activation_count(%x: tensor<5x1x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+1 {{'cleave.gru' op activations has 3 names, expected 2 (2 per direction, 1 direction)}}
  %y, %h = cleave.gru %x, %w, %r {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x24x4xf32>, tensor<1x24x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

func.func @gru_direction(%x: tensor<5x1x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+1 {{'cleave.gru' op direction must be 'forward', 'reverse' or 'bidirectional', got 'Forward'}}
  %y, %h = cleave.gru %x, %w, %r {hidden_size = 8 : i64, direction = "Forward", activations = ["Sigmoid", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x24x4xf32>, tensor<1x24x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

// Three gate blocks: 3 * hidden_size rows.
func.func @gru_weight_gates(%x: tensor<5x1x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x24x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+2 {{'cleave.gru' op weight must have shape [1, 24, 4] (num_directions x 3*hidden_size x input_size), got 'tensor<1x32x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.gru %x, %w, %r {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x24x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

func.func @gru_bias_shape(%x: tensor<5x1x4xf32>, %w: tensor<2x24x4xf32>, %r: tensor<2x24x8xf32>, %b: tensor<1x48xf32>) -> (tensor<5x2x1x8xf32>, tensor<2x1x8xf32>) {
  // expected-error @+2 {{'cleave.gru' op bias must have shape [2, 48] (num_directions x 6*hidden_size), got 'tensor<1x48xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = cleave.gru %x, %w, %r bias %b {hidden_size = 8 : i64, direction = "bidirectional", activations = ["Sigmoid", "Tanh", "Sigmoid", "Tanh"]} : (tensor<5x1x4xf32>, tensor<2x24x4xf32>, tensor<2x24x8xf32>, tensor<1x48xf32>) -> (tensor<5x2x1x8xf32>, tensor<2x1x8xf32>)
  return %y, %h : tensor<5x2x1x8xf32>, tensor<2x1x8xf32>
}

// -----

func.func @lstm_activation_count(%x: tensor<5x1x4xf32>, %w: tensor<2x32x4xf32>, %r: tensor<2x32x8xf32>) -> (tensor<5x2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>) {
  // expected-error @+1 {{'cleave.lstm' op activations has 3 names, expected 6 (3 per direction, 2 directions)}}
  %y, %h, %c = cleave.lstm %x, %w, %r {hidden_size = 8 : i64, direction = "bidirectional", activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<2x32x4xf32>, tensor<2x32x8xf32>) -> (tensor<5x2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>)
  return %y, %h, %c : tensor<5x2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>
}

// -----

func.func @lstm_activation_name(%x: tensor<5x1x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x32x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+1 {{'cleave.lstm' op activations[2] ('tanh') must be one of Relu, Tanh, Sigmoid, Softsign, Softplus}}
  %y, %h, %c = cleave.lstm %x, %w, %r {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "tanh"]} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h, %c : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

func.func @lstm_clip_zero(%x: tensor<5x1x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x32x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+1 {{'cleave.lstm' op clip (0.000000e+00) must be positive}}
  %y, %h, %c = cleave.lstm %x, %w, %r {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"], clip = 0.0 : f32} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h, %c : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

// Four gate blocks: the recurrence of a GRU does not fit an LSTM.
func.func @lstm_recurrence_gates(%x: tensor<5x1x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x24x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+2 {{'cleave.lstm' op recurrence must have shape [1, 32, 8] (num_directions x 4*hidden_size x hidden_size), got 'tensor<1x24x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = cleave.lstm %x, %w, %r {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x24x8xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h, %c : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

func.func @lstm_bias_shape(%x: tensor<5x1x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x32x8xf32>, %b: tensor<1x32xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+2 {{'cleave.lstm' op bias must have shape [1, 64] (num_directions x 8*hidden_size), got 'tensor<1x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = cleave.lstm %x, %w, %r bias %b {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, tensor<1x32xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h, %c : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

func.func @lstm_initial_c_directions(%x: tensor<5x1x4xf32>, %w: tensor<2x32x4xf32>, %r: tensor<2x32x8xf32>, %c0: tensor<1x1x8xf32>) -> (tensor<5x2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>) {
  // expected-error @+2 {{'cleave.lstm' op initial_c must have shape [2, 1, 8] (num_directions x batch x hidden_size), got 'tensor<1x1x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = cleave.lstm %x, %w, %r initial_c %c0 {hidden_size = 8 : i64, direction = "bidirectional", activations = ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<2x32x4xf32>, tensor<2x32x8xf32>, tensor<1x1x8xf32>) -> (tensor<5x2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>)
  return %y, %h, %c : tensor<5x2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>
}

// -----

func.func @lstm_initial_c_element_type(%x: tensor<5x1x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x32x8xf32>, %c0: tensor<1x1x8xf64>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+2 {{'cleave.lstm' op initial_c element type ('f64') must equal input element type ('f32')}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = cleave.lstm %x, %w, %r initial_c %c0 {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, tensor<1x1x8xf64>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h, %c : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

// Peepholes cover three gates (input, output, forget).
func.func @lstm_peepholes_shape(%x: tensor<5x1x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x32x8xf32>, %p: tensor<1x32xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>) {
  // expected-error @+2 {{'cleave.lstm' op peepholes must have shape [1, 24] (num_directions x 3*hidden_size), got 'tensor<1x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = cleave.lstm %x, %w, %r peepholes %p {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, tensor<1x32xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>)
  return %y, %h, %c : tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>
}
