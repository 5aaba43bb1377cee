# Every gradient rule against central finite differences. One model per op
# family (the CNN families convolve, pool and normalise their weights as
# inputs) applies each op to weights of its own and adds sum(op(...) * R) to
# the loss (R a random constant); cleave compiles it in float32 with
# --gradients and runs it, and each grad:<weight> is compared with central
# differences (eps 1e-6) of the same model in float64, run by the ONNX
# reference evaluator (with cleave.testing.reference_ops in place of its
# Attention and recurrent kernels, which do not compute what the ONNX
# documentation and onnxruntime do). Tolerance: max |error| <= 1e-5 *
# max |reference| + 1e-6 (float32 against float64; the errors seen are
# below 6e-7).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import sys

import numpy as np
from onnx import TensorProto

from cleave.testing.gradients import (
    ModelBuilder, check, compile_gradients, finite_differences)
from cleave.testing.reference_ops import REFERENCE_OPS

RTOL, ATOL = 1e-5, 1e-6


def unary(m):
    """Elementwise math: one weight per op, positive where the op needs it."""
    shape = [2, 3]

    def term(op, low=-1.0, high=1.0, inputs=(), **attrs):
        w = m.weight(f"{op.lower()}{len(m.terms)}", shape, low, high)
        m.add_term(m.node(op, [w, *inputs], **attrs), shape)

    for op in ["Neg", "Exp", "Tanh", "Sigmoid", "Relu", "Erf", "Sin", "Cos",
               "Softplus", "Abs", "HardSwish"]:
        term(op, -2.0, 2.0)
    for op in ["Log", "Sqrt", "Reciprocal"]:
        term(op, 0.5, 2.0)
    term("LeakyRelu", alpha=0.1)
    term("Elu", alpha=1.5)
    term("HardSigmoid", -4.0, 4.0, alpha=0.2, beta=0.5)
    term("Clip", -2.0, 2.0, inputs=[m.constant(np.float32(-1.0)),
                                     m.constant(np.float32(1.0))])
    term("Gelu")
    term("Gelu", approximate="tanh")
    term("Floor", 0.1, 0.9)
    # Through float64 and back: the cotangent is converted both ways.
    w = m.weight("cast", shape)
    wide = m.node("Cast", [w], to=TensorProto.DOUBLE)
    m.add_term(m.node("Cast", [wide], to=float), shape)


def binary(m):
    """Broadcasting arithmetic and selection, both operands trained."""
    a = m.weight("add.a", [2, 3])
    b = m.weight("add.b", [3])
    m.add_term(m.node("Add", [a, b]), [2, 3])
    a = m.weight("sub.a", [2, 1])
    b = m.weight("sub.b", [1, 3])
    m.add_term(m.node("Sub", [a, b]), [2, 3])
    a = m.weight("mul.a", [4, 1, 3])
    b = m.weight("mul.b", [2, 1])
    m.add_term(m.node("Mul", [a, b]), [4, 2, 3])
    a = m.weight("div.a", [2, 3])
    b = m.weight("div.b", [3], 0.5, 2.0)
    m.add_term(m.node("Div", [a, b]), [2, 3])
    a = m.weight("pow.base", [2, 3], 0.5, 2.0)
    e = m.weight("pow.exponent", [], 0.5, 2.0)
    m.add_term(m.node("Pow", [a, e]), [2, 3])
    a = m.weight("pow3.base", [2, 3])
    m.add_term(m.node("Pow", [a, m.constant(np.float32(3.0))]), [2, 3])
    a = m.weight("max.a", [2, 3])
    b = m.weight("max.b", [3])
    m.add_term(m.node("Max", [a, b]), [2, 3])
    a = m.weight("min.a", [2, 3])
    b = m.weight("min.b", [2, 1])
    m.add_term(m.node("Min", [a, b]), [2, 3])
    a = m.weight("where.a", [2, 3])
    b = m.weight("where.b", [3])
    condition = m.constant(np.array([[True, False, True], [False, False, True]]))
    m.add_term(m.node("Where", [condition, a, b]), [2, 3])
    # One weight read three times: the cotangents add up.
    a = m.weight("reused", [3])
    m.add_term(m.node("Mul", [m.node("Mul", [a, a]), a]), [3])


def nn(m):
    """Contractions, reductions, softmax and layer normalisation."""
    a = m.weight("matmul.a", [2, 1, 3, 4])
    b = m.weight("matmul.b", [3, 4, 5])
    m.add_term(m.node("MatMul", [a, b]), [2, 3, 3, 5])
    x = m.weight("linear.x", [2, 3, 4])
    w = m.weight("linear.w", [4, 2])
    m.add_term(m.node("MatMul", [x, w]), [2, 3, 2])
    v = m.weight("matvec.v", [4])
    w = m.weight("matvec.w", [3, 4, 2])
    m.add_term(m.node("MatMul", [v, w]), [3, 2])
    a = m.weight("gemm.a", [4, 3])
    b = m.weight("gemm.b", [5, 4])
    c = m.weight("gemm.c", [5])
    m.add_term(m.node("Gemm", [a, b, c], alpha=0.5, beta=2.0, transA=1,
                      transB=1), [3, 5])
    for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
               "ReduceSumSquare", "ReduceL2"]:
        w = m.weight(op.lower(), [2, 3, 4])
        m.add_term(m.node(op, [w, m.ints([0, 2])], keepdims=0), [3])
        w = m.weight(op.lower() + ".keepdims", [2, 3, 4])
        m.add_term(m.node(op, [w, m.ints([1])], keepdims=1), [2, 1, 4])
    w = m.weight("softmax", [3, 4], -2.0, 2.0)
    m.add_term(m.node("Softmax", [w], axis=1), [3, 4])
    w = m.weight("log_softmax", [3, 4], -2.0, 2.0)
    m.add_term(m.node("LogSoftmax", [w], axis=0), [3, 4])
    x = m.weight("layer_norm.x", [2, 3, 4], -2.0, 2.0)
    g = m.weight("layer_norm.scale", [4])
    b = m.weight("layer_norm.bias", [4])
    m.add_term(m.node("LayerNormalization", [x, g, b], axis=-1,
                      epsilon=1e-5), [2, 3, 4])
    x = m.weight("layer_norm2.x", [2, 3, 4], -2.0, 2.0)
    g = m.weight("layer_norm2.scale", [3, 1])
    m.add_term(m.node("LayerNormalization", [x, g], axis=1, epsilon=1e-5),
               [2, 3, 4])


def shapes(m):
    """Views, permutations, joins, slices and gathers."""
    w = m.weight("views", [2, 3, 4])
    flat = m.node("Flatten", [w], axis=1)
    unsqueezed = m.node("Unsqueeze", [flat, m.ints([0])])
    squeezed = m.node("Squeeze", [unsqueezed, m.ints([0])])
    reshaped = m.node("Reshape", [squeezed, m.ints([4, 6])])
    m.add_term(m.node("Transpose", [reshaped], perm=[1, 0]), [6, 4])
    w = m.weight("expand", [3, 1])
    m.add_term(m.node("Expand", [w, m.ints([2, 3, 4])]), [2, 3, 4])
    w = m.weight("tile", [2, 3])
    m.add_term(m.node("Tile", [w, m.ints([2, 3])]), [4, 9])
    w = m.weight("pad", [2, 3])
    m.add_term(m.node("Pad", [w, m.ints([1, 0, 0, 2])]), [3, 5])
    w = m.weight("slice", [5, 7])
    m.add_term(m.node("Slice", [w, m.ints([1, 0]), m.ints([5, 7]),
                                m.ints([0, 1]), m.ints([2, 3])]), [2, 3])
    w = m.weight("slice.reversed", [5, 7])
    m.add_term(m.node("Slice", [w, m.ints([-1, 5]), m.ints([-6, 0]),
                                m.ints([0, 1]), m.ints([-2, -2])]), [3, 3])
    a = m.weight("concat.a", [2, 3])
    b = m.weight("concat.b", [2, 1])
    m.add_term(m.node("Concat", [a, b], axis=1), [2, 4])
    w = m.weight("split", [2, 6])
    first, _, third = m.node("Split", [w, m.ints([3, 1, 2])], outputs=3, axis=1)
    m.add_term(first, [2, 3])
    m.add_term(third, [2, 2])
    # Embedding rows looked up twice, and once from the end.
    w = m.weight("gather.rows", [5, 3])
    m.add_term(m.node("Gather", [w, m.ints([[0, 3], [-1, 3]])], axis=0),
               [2, 2, 3])
    w = m.weight("gather.columns", [2, 4, 3])
    m.add_term(m.node("Gather", [w, m.ints([2, 0, 2])], axis=1), [2, 3, 3])


def transformer(m):
    """RMS normalisation, rotary embedding and attention (opset 23)."""
    x = m.weight("rms.x", [2, 3, 4], -2.0, 2.0)
    g = m.weight("rms.scale", [4], 0.5, 1.5)
    m.add_term(m.node("RMSNormalization", [x, g], axis=-1, epsilon=1e-5),
               [2, 3, 4])
    # Two normalised dimensions, the scale broadcast along the first.
    x = m.weight("rms2.x", [2, 3, 4], -2.0, 2.0)
    g = m.weight("rms2.scale", [1, 4], 0.5, 1.5)
    m.add_term(m.node("RMSNormalization", [x, g], axis=1, epsilon=1e-3),
               [2, 3, 4])

    # Rank 4, every entry rotated, one cache row per token.
    x = m.weight("rope.x", [2, 2, 3, 4])
    cos = m.weight("rope.cos", [2, 3, 2])
    sin = m.weight("rope.sin", [2, 3, 2])
    m.add_term(m.node("RotaryEmbedding", [x, cos, sin]), [2, 2, 3, 4])
    # Rank 3, interleaved, half of each head rotated; one batch row of the
    # caches shared, whose last entry the op does not read.
    x = m.weight("rope2.x", [2, 3, 12])
    cos = m.weight("rope2.cos", [1, 3, 3])
    sin = m.weight("rope2.sin", [1, 3, 3])
    m.add_term(m.node("RotaryEmbedding", [x, cos, sin], interleaved=1,
                      num_heads=2, rotary_embedding_dim=4), [2, 3, 12])
    # Position ids into caches, one position read twice and one never.
    x = m.weight("rope3.x", [2, 2, 3, 6])
    cos = m.weight("rope3.cos", [5, 3])
    sin = m.weight("rope3.sin", [5, 3])
    ids = m.ints([[0, 1, 2], [3, 1, 1]])
    m.add_term(m.node("RotaryEmbedding", [x, cos, sin, ids]), [2, 2, 3, 6])

    # Grouped-query attention (4 query heads, 2 key/value heads) with a
    # causal mask, a softcap and a value head size of its own.
    q = m.weight("attention.q", [2, 4, 3, 4])
    k = m.weight("attention.k", [2, 2, 5, 4])
    v = m.weight("attention.v", [2, 2, 5, 3])
    m.add_term(m.node("Attention", [q, k, v], is_causal=1, scale=0.7,
                      softcap=1.5), [2, 4, 3, 3])
    # Rank 3 with a boolean mask (every query sees a key).
    q = m.weight("attention2.q", [2, 3, 8])
    k = m.weight("attention2.k", [2, 4, 4])
    v = m.weight("attention2.v", [2, 4, 4])
    mask = m.constant(np.array([[True, False, True, True],
                                [False, True, False, True],
                                [True, True, False, False]]))
    m.add_term(m.node("Attention", [q, k, v, mask], q_num_heads=4,
                      kv_num_heads=2), [2, 3, 8])
    # A trained additive mask, broadcast over the batch and the heads.
    q = m.weight("attention3.q", [1, 2, 3, 4])
    k = m.weight("attention3.k", [1, 2, 3, 4])
    v = m.weight("attention3.v", [1, 2, 3, 4])
    bias = m.weight("attention3.mask", [3, 3])
    m.add_term(m.node("Attention", [q, k, v, bias]), [1, 2, 3, 4])


def recurrent(m):
    """RNN, GRU and LSTM layers in every direction, with and without
    biases, initial states, clipping and the variants' attributes; every
    output is in the loss, and the sequence is a weight too."""
    seq, batch, size, hidden = 3, 2, 2, 3

    def layer(op, name, gates, outputs, direction="forward", bias=True,
              initial=(), peepholes=False, **attrs):
        dirs = 2 if direction == "bidirectional" else 1
        x = m.weight(f"{name}.x", [seq, batch, size])
        inputs = [x, m.weight(f"{name}.w", [dirs, gates * hidden, size]),
                  m.weight(f"{name}.r", [dirs, gates * hidden, hidden]),
                  m.weight(f"{name}.b", [dirs, 2 * gates * hidden]) if bias else "",
                  ""]
        for state in initial:
            inputs.append(m.weight(f"{name}.{state}", [dirs, batch, hidden]))
        if peepholes:
            inputs += [""] * (7 - len(inputs))
            inputs.append(m.weight(f"{name}.p", [dirs, 3 * hidden]))
        while not inputs[-1]:
            inputs.pop()
        results = m.node(op, inputs, outputs=outputs, hidden_size=hidden,
                         direction=direction, **attrs)
        m.add_term(results[0], [seq, dirs, batch, hidden])
        for state in results[1:]:
            m.add_term(state, [dirs, batch, hidden])

    layer("RNN", "rnn", 1, 2, initial=["h0"])
    layer("RNN", "rnn2", 1, 2, "bidirectional", bias=False, clip=0.8,
          activations=["Relu", "Sigmoid"])
    layer("GRU", "gru", 3, 2, initial=["h0"])
    layer("GRU", "gru2", 3, 2, "bidirectional", initial=["h0"],
          linear_before_reset=1)
    layer("GRU", "gru3", 3, 2, "reverse", bias=False, clip=0.7,
          activations=["Sigmoid", "Relu"])
    layer("LSTM", "lstm", 4, 3, initial=["h0", "c0"], peepholes=True)
    layer("LSTM", "lstm2", 4, 3, "bidirectional", initial=["h0", "c0"])
    layer("LSTM", "lstm3", 4, 3, "reverse", clip=0.9, input_forget=1,
          peepholes=True, activations=["Sigmoid", "Tanh", "Relu"])


def conv(m):
    """Convolutions: 2-D with strides, pads, dilations and a bias; 1-D with
    groups (wav2vec 2.0's positional convolution); a stride that leaves the
    last input rows unread; depthwise with two outputs per channel."""
    x = m.weight("conv2d.x", [2, 3, 7, 6])
    w = m.weight("conv2d.w", [4, 3, 3, 2])
    b = m.weight("conv2d.b", [4])
    m.add_term(m.node("Conv", [x, w, b], strides=[2, 1], pads=[1, 0, 1, 1],
                      dilations=[1, 2]), [2, 4, 4, 5])
    x = m.weight("conv1d.grouped.x", [1, 8, 10])
    w = m.weight("conv1d.grouped.w", [8, 2, 5])
    b = m.weight("conv1d.grouped.b", [8])
    m.add_term(m.node("Conv", [x, w, b], pads=[2, 2], group=4), [1, 8, 10])
    x = m.weight("conv1d.unread.x", [2, 4, 8])
    w = m.weight("conv1d.unread.w", [6, 2, 3])
    m.add_term(m.node("Conv", [x, w], strides=[3], group=2), [2, 6, 2])
    x = m.weight("depthwise.x", [2, 3, 5, 5])
    w = m.weight("depthwise.w", [6, 1, 3, 3])
    m.add_term(m.node("Conv", [x, w], strides=[2, 2], pads=[1, 1, 1, 1],
                      group=3), [2, 6, 3, 3])


def pool(m):
    """Max and average pools over padding, with ceil_mode, dilations and
    count_include_pad, 1-D and 2-D; the global pools."""
    x = m.weight("max_pool.x", [1, 2, 7, 7])
    m.add_term(m.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2],
                      pads=[1, 1, 1, 1]), [1, 2, 4, 4])
    x = m.weight("max_pool.ceil.x", [1, 2, 7, 7])
    m.add_term(m.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2],
                      dilations=[1, 2], ceil_mode=1), [1, 2, 4, 3])
    x = m.weight("max_pool1d.x", [2, 3, 9])
    m.add_term(m.node("MaxPool", [x], kernel_shape=[3], strides=[2],
                      pads=[1, 1]), [2, 3, 5])
    x = m.weight("average_pool.with_pads.x", [1, 2, 6, 6])
    m.add_term(m.node("AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2],
                      pads=[1, 1, 1, 1], count_include_pad=1), [1, 2, 3, 3])
    x = m.weight("average_pool.ceil.x", [1, 2, 7, 7])
    m.add_term(m.node("AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2],
                      pads=[1, 1, 1, 1], ceil_mode=1), [1, 2, 4, 4])
    x = m.weight("average_pool1d.x", [2, 3, 8])
    m.add_term(m.node("AveragePool", [x], kernel_shape=[2], strides=[2]),
               [2, 3, 4])
    x = m.weight("global_average_pool.x", [2, 3, 4, 5])
    m.add_term(m.node("GlobalAveragePool", [x]), [2, 3, 1, 1])
    x = m.weight("global_max_pool.x", [2, 3, 4, 5])
    m.add_term(m.node("GlobalMaxPool", [x]), [2, 3, 1, 1])


def norm(m):
    """Per-channel normalisations: batch normalisation in training mode (by
    the batch's statistics; the running ones are constants, which are not
    updated), instance normalisation, and group normalisation with groups
    of two channels and with a group per channel (wav2vec 2.0's)."""
    def running(channels):
        return [m.random_constant([channels]),
                m.constant(m.rng.uniform(0.5, 1.5, [channels]))]

    x = m.weight("batch_norm.x", [4, 3, 5], -2.0, 2.0)
    scale = m.weight("batch_norm.scale", [3])
    bias = m.weight("batch_norm.bias", [3])
    y = m.node("BatchNormalization", [x, scale, bias, *running(3)], outputs=3,
               epsilon=1e-5, training_mode=1)[0]
    m.add_term(y, [4, 3, 5])
    x = m.weight("batch_norm2d.x", [2, 3, 3, 3], -2.0, 2.0)
    scale = m.weight("batch_norm2d.scale", [3])
    bias = m.weight("batch_norm2d.bias", [3])
    y = m.node("BatchNormalization", [x, scale, bias, *running(3)], outputs=3,
               epsilon=1e-3, momentum=0.8, training_mode=1)[0]
    m.add_term(y, [2, 3, 3, 3])
    x = m.weight("instance_norm.x", [2, 3, 6], -2.0, 2.0)
    scale = m.weight("instance_norm.scale", [3])
    bias = m.weight("instance_norm.bias", [3])
    m.add_term(m.node("InstanceNormalization", [x, scale, bias],
                      epsilon=1e-5), [2, 3, 6])
    # Opset 18's GroupNormalization scales per group.
    x = m.weight("group_norm.x", [2, 6, 5], -2.0, 2.0)
    scale = m.weight("group_norm.scale", [3])
    bias = m.weight("group_norm.bias", [3])
    m.add_term(m.node("GroupNormalization", [x, scale, bias], num_groups=3,
                      epsilon=1e-5), [2, 6, 5])
    x = m.weight("group_norm.per_channel.x", [2, 4, 6], -2.0, 2.0)
    scale = m.weight("group_norm.per_channel.scale", [4])
    bias = m.weight("group_norm.per_channel.bias", [4])
    m.add_term(m.node("GroupNormalization", [x, scale, bias], num_groups=4,
                      epsilon=1e-5), [2, 4, 6])


if __name__ == "__main__":
    work = sys.argv[1]
    failed = False
    for family, opset in [(unary, 20), (binary, 20), (nn, 20), (shapes, 20),
                          (transformer, 23), (recurrent, 20), (conv, 20),
                          (pool, 20), (norm, 20)]:
        print(f"== {family.__name__}")
        cleave_model = ModelBuilder(np.float32, opset=opset)
        family(cleave_model)
        cleave_model.finish()
        reference = ModelBuilder(np.float64, opset=opset)
        family(reference)
        reference.finish()

        session = compile_gradients(cleave_model.model(), f"{work}/{family.__name__}")
        outputs = session.run({})
        expected = finite_differences(reference, {}, new_ops=REFERENCE_OPS)
        for name, gradient in expected.items():
            failed |= not check(f"grad:{name}", outputs[f"grad:{name}"], gradient,
                                RTOL, ATOL)
        print("gradients", len(outputs) - 1, "of", len(expected))

    sys.exit(1 if failed else 0)

# CHECK-LABEL: == unary
# CHECK-NOT: MISMATCH
# CHECK: grad:gelu19  ok
# CHECK: gradients 22 of 22
# CHECK-LABEL: == binary
# CHECK-NOT: MISMATCH
# CHECK: grad:reused  ok
# CHECK: gradients 18 of 18
# CHECK-LABEL: == nn
# CHECK-NOT: MISMATCH
# CHECK: grad:layer_norm2.scale  ok
# CHECK: gradients 28 of 28
# CHECK-LABEL: == shapes
# CHECK-NOT: MISMATCH
# CHECK: grad:gather.columns  ok
# CHECK: gradients 11 of 11
# CHECK-LABEL: == transformer
# CHECK-NOT: MISMATCH
# CHECK: grad:attention3.mask  ok
# CHECK: gradients 23 of 23
# CHECK-LABEL: == recurrent
# CHECK-NOT: MISMATCH
# CHECK: grad:lstm3.p  ok
# CHECK: gradients 39 of 39
# CHECK-LABEL: == conv
# CHECK-NOT: MISMATCH
# CHECK: grad:depthwise.w  ok
# CHECK: gradients 10 of 10
# CHECK-LABEL: == pool
# CHECK-NOT: MISMATCH
# CHECK: grad:global_max_pool.x  ok
# CHECK: gradients 8 of 8
# CHECK-LABEL: == norm
# CHECK-NOT: MISMATCH
# CHECK: grad:group_norm.per_channel.bias  ok
# CHECK: gradients 15 of 15
