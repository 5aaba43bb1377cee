//===- RecurrentGradients.cpp - backpropagation through time ----*- C++ -*-===//
//
// RNN, GRU and LSTM over a whole sequence. The rule unrolls the sequence:
// the previous hidden state of every step is read from the op's `y` (or the
// initial state), so the gate pre-activations of all steps come from two
// matmuls, and only the cell state of an LSTM is recomputed step by step.
// The cotangents then run backwards through the steps, with the matmuls by
// R that carry them to the previous state (one per step, two for GRU's
// candidate); the weight cotangents are one matmul each over all steps.
// The two directions of a bidirectional layer are differentiated one after
// the other.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include <optional>
#include <type_traits>

using namespace mlir;
using namespace cleave;

namespace {

enum class Cell { RNN, GRU, LSTM };

/// An activation applied to a pre-activation, clipped first where the op
/// clips, with what its derivative needs.
struct Activation {
  Value pre;     // before clipping
  Value clipped; // the activation's argument
  Value out;
  StringRef name;
};

/// The operands and result cotangents of one direction of a recurrent op:
/// `x` is `seq x batch x input`; `w`, `r` are this direction's
/// `gates*H x input` and `gates*H x H`; `wb`, `rb` its biases (or null);
/// `h0`, `c0` the initial states (`batch x H`, or null for zeros);
/// `peepholes` `3H` or null; `y` the op's hidden states of this direction
/// (`seq x batch x H`); `dy`, `dyH`, `dyC` the cotangents of `y` and the
/// last states.
struct DirectionValues {
  Value x, w, r, wb, rb, h0, c0, peepholes, y;
  bool reverse;
  ArrayRef<StringRef> activations;
  Value dy, dyH, dyC;
};

/// The cotangents of one direction's operands (each null when there is
/// none to give): the weights of this direction as 2-D and 1-D tensors,
/// the states as `batch x hidden`.
struct DirectionGradients {
  Value input, weight, recurrence, inputBias, recurrenceBias, initialH,
      initialC, peepholes;
};

/// Backpropagation through time over one direction of a recurrent op.
class RecurrentBackward {
public:
  RecurrentBackward(GradientBuilder &b, Cell cell, int64_t hidden,
                    std::optional<double> clip, bool linearBeforeReset,
                    bool inputForget, const DirectionValues &v)
      : b(b), cell(cell), h(hidden), clip(clip),
        linearBeforeReset(linearBeforeReset), inputForget(inputForget), v(v) {}

  /// The cotangents; the input's only when `wantsInput`.
  DirectionGradients run(bool wantsInput);

private:
  /// The previous hidden state and the gate pre-activations of every step.
  void unroll();
  /// LSTM: the cell states, step by step, and the gates that make them.
  void recomputeCells();
  /// The cotangent of step t's previous hidden state from that of its
  /// hidden state `dh`; records the step's gate cotangents.
  Value backwardRnn(int64_t t, Value dh);
  Value backwardGru(int64_t t, Value dh);
  Value backwardLstm(int64_t t, Value dh);
  /// The weight, bias and input cotangents from the gate cotangents of all
  /// steps, and the initial states' from `dh`.
  DirectionGradients collect(Value dh, bool wantsInput);

  /// Applies activation `name` to `pre`, clipped first unless `clips` is
  /// false (the LSTM cell output), and records it in `into`.
  Value activate(StringRef name, Value pre, Activation &into,
                 bool clips = true);
  /// The cotangent of `a.pre` from that of `a.out`.
  Value backward(const Activation &a, Value dout);
  Value columns(Value value, int64_t start, int64_t count);
  Value step(Value all, int64_t t);
  /// `lhs + rhs`, either of which may be null.
  Value addOrNull(Value lhs, Value rhs);
  /// The step of processing index `s`.
  int64_t order(int64_t s) const { return v.reverse ? seq - 1 - s : s; }

  GradientBuilder &b;
  Cell cell;
  int64_t h;
  std::optional<double> clip;
  bool linearBeforeReset, inputForget;
  const DirectionValues &v;

  int64_t seq = 0, batch = 0;
  Value zeroState;
  // `seq x batch x H` previous states, and as `seq*batch x H` rows; the
  // input as rows.
  Value previous, previousRows, xRows;
  // `seq x batch x n`: the summed pre-activations (all gates; GRU's z and r
  // only) and the input projections with their bias.
  Value pre, projectedSteps;
  // The blocks of R whose product is summed into `pre` (all of R, GRU's z
  // and r blocks only); GRU's h block, and with linear_before_reset
  // h R_h^T + Rb_h per step, without it R_h^T.
  Value rSummed, rH, linear, rHTransposed;
  // LSTM: the peephole weights and the recomputed steps.
  Value pI, pO, pF;
  struct LstmStep {
    Activation i, o, f, c, cellOut;
    Value forget, cPrev, cNext;
  };
  SmallVector<LstmStep> lstm;
  // Per step: the cotangents of the input projection (with its bias) and
  // of the recurrent product (with its bias); what GRU's R_h multiplied
  // without linear_before_reset.
  SmallVector<Value> dInput, dRecurrent, resetState;
  // LSTM: the cell state's cotangent and the peepholes' sums.
  Value dc, dPI, dPO, dPF;
};

Value RecurrentBackward::addOrNull(Value lhs, Value rhs) {
  if (!lhs)
    return rhs;
  if (!rhs)
    return lhs;
  return b.add(lhs, rhs);
}

Value RecurrentBackward::columns(Value value, int64_t start, int64_t count) {
  ArrayRef<int64_t> shape = getShape(value);
  SmallVector<int64_t> starts(shape.size(), 0), ends(shape),
      steps(shape.size(), 1);
  starts.back() = start;
  ends.back() = start + count;
  return b.create<SliceOp>(value, starts, ends, steps);
}

/// Row block `t` of a `seq x batch x n` tensor, as `batch x n`.
Value RecurrentBackward::step(Value all, int64_t t) {
  ArrayRef<int64_t> shape = getShape(all);
  Value slice = b.create<SliceOp>(all, ArrayRef<int64_t>{t, 0, 0},
                                  ArrayRef<int64_t>{t + 1, shape[1], shape[2]},
                                  ArrayRef<int64_t>{1, 1, 1});
  return b.reshape(slice, {shape[1], shape[2]});
}

Value RecurrentBackward::activate(StringRef name, Value pre, Activation &a,
                                  bool clips) {
  a.pre = pre;
  a.name = name;
  a.clipped = pre;
  if (clip && clips) {
    auto f64 = b.getBuilder().getF64Type();
    a.clipped = b.create<ClipOp>(pre, FloatAttr::get(f64, -*clip),
                                 FloatAttr::get(f64, *clip));
  }
  Value z = a.clipped;
  if (name == "Relu")
    a.out = b.create<ReluOp>(z);
  else if (name == "Tanh")
    a.out = b.create<TanhOp>(z);
  else if (name == "Sigmoid")
    a.out = b.create<SigmoidOp>(z);
  else if (name == "Softplus")
    a.out = b.create<SoftplusOp>(z);
  else { // Softsign, the last the verifier accepts
    Value magnitude = b.create<AbsOp>(z);
    a.out = b.div(z, b.add(b.scalarLike(1.0, z), magnitude));
  }
  return a.out;
}

Value RecurrentBackward::backward(const Activation &a, Value dout) {
  Value z = a.clipped, y = a.out;
  Value slope;
  if (a.name == "Relu") {
    Value positive = b.create<GreaterOp>(z, b.scalarLike(0.0, z));
    slope = b.cast(positive, getElementType(z));
  } else if (a.name == "Tanh") {
    Value square = b.mul(y, y);
    slope = b.sub(b.scalarLike(1.0, z), square);
  } else if (a.name == "Sigmoid") {
    slope = b.mul(y, b.sub(b.scalarLike(1.0, z), y));
  } else if (a.name == "Softplus") {
    slope = b.create<SigmoidOp>(z);
  } else { // Softsign: 1 / (1 + |z|)^2
    Value magnitude = b.create<AbsOp>(z);
    Value denominator = b.add(b.scalarLike(1.0, z), magnitude);
    slope = b.create<ReciprocalOp>(b.mul(denominator, denominator));
  }
  Value dpre = b.mul(dout, slope);
  if (a.clipped != a.pre) {
    // Clipped entries do not move with the pre-activation.
    Value magnitude = b.create<AbsOp>(a.pre);
    Value inside = b.create<LessOp>(magnitude, b.scalarLike(*clip, a.pre));
    dpre = b.selectOrZero(inside, dpre);
  }
  return dpre;
}

void RecurrentBackward::unroll() {
  ArrayRef<int64_t> xShape = getShape(v.x);
  seq = xShape[0];
  batch = xShape[1];
  int64_t gh = getShape(v.w)[0];
  zeroState = b.zeros(RankedTensorType::get({batch, h}, getElementType(v.x)));

  Value initial = b.reshape(v.h0 ? v.h0 : zeroState, {1, batch, h});
  previous = initial;
  if (seq > 1) {
    Value shifted = b.create<SliceOp>(
        v.y, ArrayRef<int64_t>{v.reverse ? 1 : 0, 0, 0},
        ArrayRef<int64_t>{v.reverse ? seq : seq - 1, batch, h},
        ArrayRef<int64_t>{1, 1, 1});
    previous = b.create<ConcatOp>(v.reverse ? ValueRange{shifted, initial}
                                            : ValueRange{initial, shifted},
                                  /*axis=*/0);
  }
  xRows = b.reshape(v.x, {seq * batch, getShape(v.x)[2]});
  previousRows = b.reshape(previous, {seq * batch, h});

  Value projected = b.create<MatMulOp>(xRows, b.transposeLastTwo(v.w));
  if (v.wb)
    projected = b.add(projected, v.wb);
  projectedSteps = b.reshape(projected, {seq, batch, gh});
  // GRU's h block: without linear_before_reset R_h multiplies the reset
  // state, which depends on the step; with it R_h's bias is reset too.
  bool gru = cell == Cell::GRU;
  if (gru) {
    rSummed =
        b.create<SliceOp>(v.r, ArrayRef<int64_t>{0, 0},
                          ArrayRef<int64_t>{2 * h, h}, ArrayRef<int64_t>{1, 1});
    rH =
        b.create<SliceOp>(v.r, ArrayRef<int64_t>{2 * h, 0},
                          ArrayRef<int64_t>{3 * h, h}, ArrayRef<int64_t>{1, 1});
  } else {
    rSummed = v.r;
  }
  Value recurrent =
      b.create<MatMulOp>(previousRows, b.transposeLastTwo(rSummed));
  if (v.rb)
    recurrent = b.add(recurrent, gru ? columns(v.rb, 0, 2 * h) : v.rb);
  if (gru && !linearBeforeReset)
    rHTransposed = b.transposeLastTwo(rH);
  if (gru && linearBeforeReset) {
    linear = b.create<MatMulOp>(previousRows, b.transposeLastTwo(rH));
    if (v.rb)
      linear = b.add(linear, columns(v.rb, 2 * h, h));
    linear = b.reshape(linear, {seq, batch, h});
  }
  Value summed = gru ? columns(projected, 0, 2 * h) : projected;
  pre = b.add(summed, recurrent);
  pre = b.reshape(pre, {seq, batch, getShape(pre)[1]});
}

void RecurrentBackward::recomputeCells() {
  if (v.peepholes) {
    pI = columns(v.peepholes, 0, h);
    pO = columns(v.peepholes, h, h);
    pF = columns(v.peepholes, 2 * h, h);
  }
  ArrayRef<StringRef> activations = v.activations;
  lstm.resize(seq);
  Value c = v.c0 ? v.c0 : zeroState;
  for (int64_t s = 0; s < seq; ++s) {
    int64_t t = order(s);
    LstmStep &st = lstm[t];
    Value gates = step(pre, t);
    st.cPrev = c;
    Value preI = columns(gates, 0, h), preO = columns(gates, h, h);
    Value preF = columns(gates, 2 * h, h), preC = columns(gates, 3 * h, h);
    if (v.peepholes) {
      preI = b.add(preI, b.mul(pI, c));
      preF = b.add(preF, b.mul(pF, c));
    }
    Value in = activate(activations[0], preI, st.i);
    st.forget = inputForget ? b.sub(b.scalarLike(1.0, in), in)
                            : activate(activations[0], preF, st.f);
    Value candidate = activate(activations[1], preC, st.c);
    Value kept = b.mul(st.forget, c);
    c = b.add(kept, b.mul(in, candidate));
    st.cNext = c;
    if (v.peepholes)
      preO = b.add(preO, b.mul(pO, c));
    activate(activations[0], preO, st.o);
    activate(activations[2], c, st.cellOut, /*clips=*/false);
  }
}

Value RecurrentBackward::backwardRnn(int64_t t, Value dh) {
  Activation a;
  activate(v.activations[0], step(pre, t), a);
  Value da = backward(a, dh);
  dInput[t] = dRecurrent[t] = da;
  return b.create<MatMulOp>(da, v.r);
}

/// h = (1 - z) hc + z hPrev, hc = g(x W_h^T + Wb_h + (r hPrev) R_h^T + Rb_h)
/// or, with linear_before_reset, g(x W_h^T + Wb_h + r (hPrev R_h^T + Rb_h)).
Value RecurrentBackward::backwardGru(int64_t t, Value dh) {
  ArrayRef<StringRef> activations = v.activations;
  Value hPrev = step(previous, t);
  Value gates = step(pre, t);
  Activation z, reset, candidate;
  Value update = activate(activations[0], columns(gates, 0, h), z);
  Value resetGate = activate(activations[0], columns(gates, h, h), reset);
  Value inputH = columns(step(projectedSteps, t), 2 * h, h);
  Value preH;
  if (linearBeforeReset) {
    preH = b.add(inputH, b.mul(resetGate, step(linear, t)));
  } else {
    resetState[t] = b.mul(resetGate, hPrev);
    Value product = b.create<MatMulOp>(resetState[t], rHTransposed);
    if (v.rb)
      product = b.add(product, columns(v.rb, 2 * h, h));
    preH = b.add(inputH, product);
  }
  Value hc = activate(activations[1], preH, candidate);

  Value dz = b.mul(dh, b.sub(hPrev, hc));
  Value dpreH =
      backward(candidate, b.mul(dh, b.sub(b.scalarLike(1.0, update), update)));
  Value dhPrev = b.mul(dh, update);
  Value dResetGate, dRecurrentH;
  if (linearBeforeReset) {
    dResetGate = b.mul(dpreH, step(linear, t));
    dRecurrentH = b.mul(dpreH, resetGate);
    dhPrev = b.add(dhPrev, b.create<MatMulOp>(dRecurrentH, rH));
  } else {
    Value dResetState = b.create<MatMulOp>(dpreH, rH);
    dResetGate = b.mul(dResetState, hPrev);
    dhPrev = b.add(dhPrev, b.mul(dResetState, resetGate));
    dRecurrentH = dpreH;
  }
  Value dpreZ = backward(z, dz);
  Value dpreR = backward(reset, dResetGate);
  Value dSummed = b.create<ConcatOp>(ValueRange{dpreZ, dpreR}, 1);
  dhPrev = b.add(dhPrev, b.create<MatMulOp>(dSummed, rSummed));
  dInput[t] = b.create<ConcatOp>(ValueRange{dpreZ, dpreR, dpreH}, 1);
  dRecurrent[t] =
      linearBeforeReset
          ? b.create<ConcatOp>(ValueRange{dpreZ, dpreR, dRecurrentH}, 1)
          : dInput[t];
  return dhPrev;
}

/// h = o g(c), c = f cPrev + i candidate, with the peepholes adding
/// P_i cPrev, P_f cPrev and P_o c to the pre-activations of i, f and o.
Value RecurrentBackward::backwardLstm(int64_t t, Value dh) {
  LstmStep &st = lstm[t];
  Value dOut = b.mul(dh, st.cellOut.out);
  Value dCell = backward(st.cellOut, b.mul(dh, st.o.out));
  dc = addOrNull(dc, dCell);
  Value dpreO = backward(st.o, dOut);
  if (v.peepholes) {
    dc = b.add(dc, b.mul(dpreO, pO));
    dPO = addOrNull(dPO, b.mul(dpreO, st.cNext));
  }
  Value dIn = b.mul(dc, st.c.out);
  Value dCandidate = b.mul(dc, st.i.out);
  Value dForget = b.mul(dc, st.cPrev);
  Value dcPrev = b.mul(dc, st.forget);
  Value dpreF;
  if (inputForget) {
    dIn = b.sub(dIn, dForget);
    dpreF = zeroState;
  } else {
    dpreF = backward(st.f, dForget);
  }
  Value dpreI = backward(st.i, dIn);
  Value dpreC = backward(st.c, dCandidate);
  if (v.peepholes) {
    Value throughI = b.mul(dpreI, pI);
    Value throughF = b.mul(dpreF, pF);
    dcPrev = b.add(dcPrev, b.add(throughI, throughF));
    dPI = addOrNull(dPI, b.mul(dpreI, st.cPrev));
    if (!inputForget)
      dPF = addOrNull(dPF, b.mul(dpreF, st.cPrev));
  }
  dc = dcPrev;
  Value dGates = b.create<ConcatOp>(ValueRange{dpreI, dpreO, dpreF, dpreC}, 1);
  dInput[t] = dRecurrent[t] = dGates;
  return b.create<MatMulOp>(dGates, v.r);
}

DirectionGradients RecurrentBackward::collect(Value dh, bool wantsInput) {
  DirectionGradients result;
  Value dInputRows = b.create<ConcatOp>(dInput, 0);
  Value dRecurrentRows = llvm::equal(dInput, dRecurrent)
                             ? dInputRows
                             : b.create<ConcatOp>(dRecurrent, 0);
  if (wantsInput)
    result.input =
        b.reshape(b.create<MatMulOp>(dInputRows, v.w), getShape(v.x));
  result.weight = b.create<MatMulOp>(b.transposeLastTwo(dInputRows), xRows);
  if (cell == Cell::GRU && !linearBeforeReset) {
    Value dZR = columns(dRecurrentRows, 0, 2 * h);
    Value dH = columns(dRecurrentRows, 2 * h, h);
    Value resetRows = b.create<ConcatOp>(resetState, 0);
    result.recurrence = b.create<ConcatOp>(
        ValueRange{b.create<MatMulOp>(b.transposeLastTwo(dZR), previousRows),
                   b.create<MatMulOp>(b.transposeLastTwo(dH), resetRows)},
        0);
  } else {
    result.recurrence =
        b.create<MatMulOp>(b.transposeLastTwo(dRecurrentRows), previousRows);
  }
  result.inputBias = b.reduceSum(dInputRows, {0}, /*keepdims=*/false);
  result.recurrenceBias =
      dRecurrentRows == dInputRows
          ? result.inputBias
          : b.reduceSum(dRecurrentRows, {0}, /*keepdims=*/false);
  result.initialH = dh;
  result.initialC = dc ? dc : zeroState;
  if (v.peepholes) {
    auto sumRows = [&](Value value) {
      return value ? b.reduceSum(value, {0}, /*keepdims=*/false)
                   : b.zeros(RankedTensorType::get({h}, getElementType(v.x)));
    };
    result.peepholes = b.create<ConcatOp>(
        ValueRange{sumRows(dPI), sumRows(dPO), sumRows(dPF)}, 0);
  }
  return result;
}

DirectionGradients RecurrentBackward::run(bool wantsInput) {
  unroll();
  if (cell == Cell::LSTM)
    recomputeCells();
  dInput.assign(seq, Value());
  dRecurrent.assign(seq, Value());
  resetState.assign(seq, Value());
  dc = v.dyC;
  Value dh = v.dyH;
  for (int64_t s = seq - 1; s >= 0; --s) {
    int64_t t = order(s);
    dh = addOrNull(dh, step(v.dy, t));
    if (!dh)
      dh = zeroState;
    switch (cell) {
    case Cell::RNN:
      dh = backwardRnn(t, dh);
      break;
    case Cell::GRU:
      dh = backwardGru(t, dh);
      break;
    case Cell::LSTM:
      dh = backwardLstm(t, dh);
      break;
    }
  }
  return collect(dh, wantsInput);
}

/// Slice `d` of the leading (direction) dimension of `value`, without it.
Value direction(GradientBuilder &b, Value value, int64_t d) {
  if (!value)
    return value;
  ArrayRef<int64_t> shape = getShape(value);
  SmallVector<int64_t> starts(shape.size(), 0), ends(shape),
      steps(shape.size(), 1);
  starts[0] = d;
  ends[0] = d + 1;
  Value slice = b.create<SliceOp>(value, starts, ends, steps);
  return b.reshape(slice, shape.drop_front());
}

/// Slice `d` of dimension 1 of `y` (`seq x dirs x batch x H`), as
/// `seq x batch x H`.
Value directionOfSequence(GradientBuilder &b, Value y, int64_t d) {
  ArrayRef<int64_t> shape = getShape(y);
  Value slice =
      b.create<SliceOp>(y, ArrayRef<int64_t>{0, d, 0, 0},
                        ArrayRef<int64_t>{shape[0], d + 1, shape[2], shape[3]},
                        ArrayRef<int64_t>{1, 1, 1, 1});
  return b.reshape(slice, {shape[0], shape[2], shape[3]});
}

/// The per-direction cotangents of one operand stacked back along a
/// leading direction dimension.
Value stackDirections(GradientBuilder &b, ArrayRef<Value> perDirection) {
  SmallVector<Value> stacked;
  for (Value value : perDirection) {
    SmallVector<int64_t> shape = {1};
    llvm::append_range(shape, getShape(value));
    stacked.push_back(b.reshape(value, shape));
  }
  if (stacked.size() == 1)
    return stacked.front();
  return b.create<ConcatOp>(stacked, 0);
}

template <typename OpT> Cell cellOf();
template <> Cell cellOf<RNNOp>() { return Cell::RNN; }
template <> Cell cellOf<GRUOp>() { return Cell::GRU; }
template <> Cell cellOf<LSTMOp>() { return Cell::LSTM; }

/// Backpropagation through time for `OpT`: each direction's cotangents
/// from `RecurrentBackward`, stacked back into the operands' layout.
template <typename OpT>
struct RecurrentGradientModel
    : GradientInterface::ExternalModel<RecurrentGradientModel<OpT>, OpT> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto recurrent = cast<OpT>(op);
    Cell cell = cellOf<OpT>();
    constexpr bool isLstm = std::is_same_v<OpT, LSTMOp>;
    StringRef directionName = recurrent.getDirection();
    int64_t dirs = directionName == "bidirectional" ? 2 : 1;
    int64_t hidden = recurrent.getHiddenSize();
    int64_t gh = getShape(recurrent.getWeight())[1];
    std::optional<double> clip;
    if (auto clipAttr = recurrent.getClipAttr())
      clip = clipAttr.getValueAsDouble();
    bool linearBeforeReset = false, inputForget = false;
    Value initialC, peepholes, dyC;
    if constexpr (std::is_same_v<OpT, GRUOp>)
      linearBeforeReset = recurrent.getLinearBeforeReset();
    if constexpr (isLstm) {
      inputForget = recurrent.getInputForget();
      initialC = recurrent.getInitialC();
      peepholes = recurrent.getPeepholes();
      dyC = gradients.results[2];
    }
    SmallVector<StringRef> activations = llvm::to_vector(
        recurrent.getActivations().template getAsValueRange<StringAttr>());
    int64_t perDirection = activations.size() / dirs;

    auto wanted = [&](unsigned odsIndex) {
      auto [index, length] = recurrent.getODSOperandIndexAndLength(odsIndex);
      return length == 1 && gradients.wanted[index];
    };
    Value bias = recurrent.getBias();
    SmallVector<DirectionGradients> results;
    for (int64_t d = 0; d < dirs; ++d) {
      Value biasD = direction(b, bias, d);
      Value wb, rb;
      if (biasD) {
        wb = b.create<SliceOp>(biasD, ArrayRef<int64_t>{0},
                               ArrayRef<int64_t>{gh}, ArrayRef<int64_t>{1});
        rb = b.create<SliceOp>(biasD, ArrayRef<int64_t>{gh},
                               ArrayRef<int64_t>{2 * gh}, ArrayRef<int64_t>{1});
      }
      // One statement per op, so that every compiler builds them in the
      // same order.
      DirectionValues values;
      values.x = recurrent.getInput();
      values.w = direction(b, recurrent.getWeight(), d);
      values.r = direction(b, recurrent.getRecurrence(), d);
      values.wb = wb;
      values.rb = rb;
      values.h0 = direction(b, recurrent.getInitialH(), d);
      values.c0 = direction(b, initialC, d);
      values.peepholes = direction(b, peepholes, d);
      values.y = directionOfSequence(b, recurrent.getY(), d);
      values.reverse = directionName == "reverse" || d == 1;
      values.activations =
          ArrayRef(activations).slice(d * perDirection, perDirection);
      values.dy = directionOfSequence(b, gradients.results[0], d);
      values.dyH = direction(b, gradients.results[1], d);
      values.dyC = direction(b, dyC, d);
      RecurrentBackward backward(b, cell, hidden, clip, linearBeforeReset,
                                 inputForget, values);
      results.push_back(backward.run(wanted(0)));
    }

    auto collect = [&](auto member) {
      SmallVector<Value> values;
      for (DirectionGradients &result : results)
        values.push_back(result.*member);
      return values;
    };
    auto give = [&](unsigned odsIndex, Value gradient) {
      auto [index, length] = recurrent.getODSOperandIndexAndLength(odsIndex);
      if (length == 1 && gradients.wanted[index])
        gradients.operands[index] = gradient;
    };
    using R = DirectionGradients;
    if (wanted(0)) {
      SmallVector<Value> inputs = collect(&R::input);
      Value total = inputs[0];
      for (Value other : ArrayRef(inputs).drop_front())
        total = b.add(total, other);
      give(0, total);
    }
    if (wanted(1))
      give(1, stackDirections(b, collect(&R::weight)));
    if (wanted(2))
      give(2, stackDirections(b, collect(&R::recurrence)));
    if (wanted(3)) {
      SmallVector<Value> perDirection;
      for (R &result : results)
        perDirection.push_back(b.create<ConcatOp>(
            ValueRange{result.inputBias, result.recurrenceBias}, 0));
      give(3, stackDirections(b, perDirection));
    }
    if (wanted(4))
      give(4, stackDirections(b, collect(&R::initialH)));
    if constexpr (isLstm) {
      if (wanted(5))
        give(5, stackDirections(b, collect(&R::initialC)));
      if (wanted(6))
        give(6, stackDirections(b, collect(&R::peepholes)));
    }
    return success();
  }
};

} // namespace

void cleave::detail::attachRecurrentGradients(MLIRContext *context) {
  RNNOp::attachInterface<RecurrentGradientModel<RNNOp>>(*context);
  GRUOp::attachInterface<RecurrentGradientModel<GRUOp>>(*context);
  LSTMOp::attachInterface<RecurrentGradientModel<LSTMOp>>(*context);
}
