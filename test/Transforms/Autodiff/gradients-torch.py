# Gradients of whole small models against PyTorch autograd: an MLP with a
# softmax cross-entropy loss written in ONNX ops, a transformer block (token
# and position embeddings, layer norms, a fused QKV projection split into
# heads, causal softmax attention, an MLP with an exported GELU, and logits
# from the tied embedding table), a DeepSpeech-like recurrent model (a
# bidirectional GRU and an LSTM between linear layers) and a tied embedding
# with a frozen scale.
# cleave compiles each in float32 with --gradients; PyTorch computes the same
# loss in float64 from the same weights. Tolerance: max |error| <= 1e-5 *
# max |reference| + 1e-7 per gradient (float32 against float64; the errors
# seen are below 3e-7).
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import math
import sys

import numpy as np
import torch

from cleave.testing.gradients import ModelBuilder, check, compile_gradients

RTOL, ATOL = 1e-5, 1e-7


def cross_entropy(m, logits, targets, classes, axis):
    """-mean(log_softmax(logits)[target]) in ONNX ops: the one-hot of the
    targets from Equal against 0..classes-1."""
    log_p = m.node("LogSoftmax", [logits], axis=axis)
    hits = m.node("Equal", [m.node("Unsqueeze", [targets, m.ints([axis])]),
                            m.ints(np.arange(classes))])
    picked = m.node("Mul", [m.node("Cast", [hits], to=float), log_p])
    nll = m.node("Neg", [m.node("ReduceSum", [picked, m.ints([axis])],
                                keepdims=0)])
    return m.node("ReduceMean", [nll], keepdims=0)


def torch_cross_entropy(logits, targets):
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def mlp(m):
    x, xv = m.input("x", m.rng.standard_normal((8, 12)))
    labels, lv = m.input("labels", m.rng.integers(0, 10, 8))
    w1 = m.weight("fc1.weight", [24, 12], -0.5, 0.5)
    b1 = m.weight("fc1.bias", [24], -0.1, 0.1)
    w2 = m.weight("fc2.weight", [24, 10], -0.5, 0.5)
    b2 = m.weight("fc2.bias", [10], -0.1, 0.1)
    h = m.node("Relu", [m.node("Gemm", [x, w1, b1], transB=1)])
    logits = m.node("Add", [m.node("MatMul", [h, w2]), b2])
    m.graph.node("Identity", [cross_entropy(m, logits, labels, 10, 1)], ["loss"])
    m.graph.output("loss", [], np.float32)
    feeds = {"x": xv, "labels": lv}

    def reference(p, f):
        h = torch.relu(f["x"] @ p["fc1.weight"].T + p["fc1.bias"])
        return torch_cross_entropy(h @ p["fc2.weight"] + p["fc2.bias"],
                                   f["labels"])

    return feeds, reference


def transformer(m):
    batch, seq, dim, heads, vocab = 2, 5, 16, 2, 20
    head = dim // heads
    tokens, tv = m.input("tokens", m.rng.integers(0, vocab, (batch, seq)))
    targets, gv = m.input("targets", m.rng.integers(0, vocab, (batch, seq)))
    emb = m.weight("embedding", [vocab, dim], -0.5, 0.5)
    pos = m.weight("position", [8, dim], -0.5, 0.5)
    names = {}
    for name, shape in [("ln1.weight", [dim]), ("ln1.bias", [dim]),
                        ("qkv.weight", [dim, 3 * dim]), ("qkv.bias", [3 * dim]),
                        ("out.weight", [dim, dim]), ("ln2.weight", [dim]),
                        ("ln2.bias", [dim]), ("fc1.weight", [dim, 2 * dim]),
                        ("fc1.bias", [2 * dim]), ("fc2.weight", [2 * dim, dim]),
                        ("fc2.bias", [dim])]:
        is_gain = name.startswith("ln") and name.endswith("weight")
        low, high = (0.5, 1.5) if is_gain else (-0.3, 0.3)
        names[name] = m.weight(name, shape, low, high)
    window = m.node("Slice", [pos, m.ints([0]), m.ints([seq]), m.ints([0])])
    x = m.node("Add", [m.node("Gather", [emb, tokens], axis=0), window])

    def layer_norm(value, prefix):
        return m.node("LayerNormalization", [value, names[prefix + ".weight"],
                                             names[prefix + ".bias"]],
                      axis=-1, epsilon=1e-5)

    def linear(value, prefix):
        return m.node("Add", [m.node("MatMul", [value, names[prefix + ".weight"]]),
                              names[prefix + ".bias"]])

    def split_heads(value):
        value = m.node("Reshape", [value, m.ints([batch, seq, heads, head])])
        return m.node("Transpose", [value], perm=[0, 2, 1, 3])

    q, k, v = m.node("Split", [linear(layer_norm(x, "ln1"), "qkv"),
                               m.ints([dim, dim, dim])], outputs=3, axis=2)
    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    scores = m.node("MatMul", [q, m.node("Transpose", [k], perm=[0, 1, 3, 2])])
    scores = m.node("Div", [scores, m.constant(np.float32(math.sqrt(head)))])
    mask = np.triu(np.full((seq, seq), -1e4, np.float32), 1)
    scores = m.node("Add", [scores, m.constant(mask)])
    context = m.node("MatMul", [m.node("Softmax", [scores], axis=-1), v])
    context = m.node("Transpose", [context], perm=[0, 2, 1, 3])
    context = m.node("Reshape", [context, m.ints([batch, seq, dim])])
    x = m.node("Add", [x, m.node("MatMul", [context, names["out.weight"]])])
    # GELU as torch.onnx writes it before opset 20 (cleave-simplify fuses it).
    f = linear(layer_norm(x, "ln2"), "fc1")
    erf = m.node("Erf", [m.node("Div", [f, m.constant(np.float32(math.sqrt(2)))])])
    gelu = m.node("Mul", [m.node("Mul", [f, m.node("Add", [erf, m.constant(np.float32(1))])]),
                          m.constant(np.float32(0.5))])
    x = m.node("Add", [x, linear(gelu, "fc2")])
    logits = m.node("MatMul", [x, m.node("Transpose", [emb], perm=[1, 0])])
    m.graph.node("Identity", [cross_entropy(m, logits, targets, vocab, 2)],
                 ["loss"])
    m.graph.output("loss", [], np.float32)
    feeds = {"tokens": tv, "targets": gv}

    def reference(p, f):
        fn = torch.nn.functional
        x = p["embedding"][f["tokens"]] + p["position"][:seq]
        y = fn.layer_norm(x, [dim], p["ln1.weight"], p["ln1.bias"], 1e-5)
        qkv = y @ p["qkv.weight"] + p["qkv.bias"]
        q, k, v = (t.reshape(batch, seq, heads, head).transpose(1, 2)
                   for t in qkv.split(dim, dim=2))
        scores = q @ k.transpose(2, 3) / math.sqrt(head)
        scores = scores + torch.from_numpy(mask.astype(np.float64))
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, dim)
        x = x + context @ p["out.weight"]
        y = fn.layer_norm(x, [dim], p["ln2.weight"], p["ln2.bias"], 1e-5)
        y = fn.gelu(y @ p["fc1.weight"] + p["fc1.bias"])
        x = x + y @ p["fc2.weight"] + p["fc2.bias"]
        return torch_cross_entropy(x @ p["embedding"].T, f["targets"])

    return feeds, reference


def speech(m):
    """A DeepSpeech-like acoustic model: a per-frame linear layer with ReLU,
    a bidirectional GRU (linear_before_reset, as PyTorch's) and a forward
    LSTM with trained initial states, then per-frame logits. PyTorch runs
    its own GRU and LSTM kernels on the same weights, whose gate blocks it
    stacks r, z, n (GRU) and i, f, g, o (LSTM) where ONNX stacks z, r, h and
    i, o, f, c."""
    seq, batch, features, hidden, cell, classes = 6, 2, 5, 6, 5, 7
    x, xv = m.input("x", m.rng.standard_normal((seq, batch, features)))
    labels, lv = m.input("labels", m.rng.integers(0, classes, (seq, batch)))
    fc_w = m.weight("fc.weight", [features, 8], -0.5, 0.5)
    fc_b = m.weight("fc.bias", [8], -0.1, 0.1)
    h = m.node("Relu", [m.node("Add", [m.node("MatMul", [x, fc_w]), fc_b])])
    gru = [m.weight("gru.w", [2, 3 * hidden, 8], -0.4, 0.4),
           m.weight("gru.r", [2, 3 * hidden, hidden], -0.4, 0.4),
           m.weight("gru.b", [2, 6 * hidden], -0.2, 0.2), "",
           m.weight("gru.h0", [2, batch, hidden], -0.5, 0.5)]
    y, _ = m.node("GRU", [h, *gru], outputs=2, hidden_size=hidden,
                  direction="bidirectional", linear_before_reset=1)
    # seq x dirs x batch x hidden -> seq x batch x (forward, backward)
    y = m.node("Transpose", [y], perm=[0, 2, 1, 3])
    y = m.node("Reshape", [y, m.ints([seq, batch, 2 * hidden])])
    lstm = [m.weight("lstm.w", [1, 4 * cell, 2 * hidden], -0.4, 0.4),
            m.weight("lstm.r", [1, 4 * cell, cell], -0.4, 0.4),
            m.weight("lstm.b", [1, 8 * cell], -0.2, 0.2), "",
            m.weight("lstm.h0", [1, batch, cell], -0.5, 0.5),
            m.weight("lstm.c0", [1, batch, cell], -0.5, 0.5)]
    z, _, _ = m.node("LSTM", [y, *lstm], outputs=3, hidden_size=cell)
    z = m.node("Squeeze", [z, m.ints([1])])
    out_w = m.weight("out.weight", [cell, classes], -0.5, 0.5)
    out_b = m.weight("out.bias", [classes], -0.1, 0.1)
    logits = m.node("Add", [m.node("MatMul", [z, out_w]), out_b])
    m.graph.node("Identity", [cross_entropy(m, logits, labels, classes, 2)],
                 ["loss"])
    m.graph.output("loss", [], np.float32)

    def blocks(t, size, order):
        parts = t.split(size)
        return torch.cat([parts[i] for i in order])

    def reference(p, f):
        h = torch.relu(f["x"] @ p["fc.weight"] + p["fc.bias"])
        gru_order = [1, 0, 2]  # z, r, h -> r, z, n
        weights = []
        for d in range(2):
            bias = p["gru.b"][d].split(3 * hidden)
            weights += [blocks(t, hidden, gru_order)
                        for t in (p["gru.w"][d], p["gru.r"][d], *bias)]
        y, _ = torch._VF.gru(h, p["gru.h0"], weights, True, 1, 0.0, False,
                             True, False)
        lstm_order = [0, 2, 3, 1]  # i, o, f, c -> i, f, g, o
        bias = p["lstm.b"][0].split(4 * cell)
        weights = [blocks(t, cell, lstm_order)
                   for t in (p["lstm.w"][0], p["lstm.r"][0], *bias)]
        z, _, _ = torch._VF.lstm(y, (p["lstm.h0"], p["lstm.c0"]), weights,
                                 True, 1, 0.0, False, False, False)
        logits = z @ p["out.weight"] + p["out.bias"]
        return torch_cross_entropy(logits, f["labels"])

    return {"x": xv, "labels": lv}, reference


def tied(m):
    ids, iv = m.input("ids", np.array([3, 1, 3, 7]))
    emb = m.weight("embedding", [10, 6], -0.5, 0.5)
    scale = m.weight("scale", [6], 0.5, 1.5)
    h = m.node("Mul", [m.node("Gather", [emb, ids], axis=0), scale])
    logits = m.node("MatMul", [h, m.node("Transpose", [emb], perm=[1, 0])])
    m.graph.node("Identity", [m.node("ReduceMean", [m.node("Mul", [logits, logits])],
                                     keepdims=0)], ["loss"])
    m.graph.output("loss", [], np.float32)

    def reference(p, f):
        logits = (p["embedding"][f["ids"]] * p["scale"]) @ p["embedding"].T
        return (logits * logits).mean()

    return {"ids": iv}, reference


if __name__ == "__main__":
    work = sys.argv[1]
    failed = False
    for build, freeze in [(mlp, None), (transformer, None), (speech, None),
                          (tied, "^scale$")]:
        print(f"== {build.__name__}")
        m = ModelBuilder(np.float32, seed=1, opset=17)
        feeds, reference = build(m)
        session = compile_gradients(m.model(), f"{work}/{build.__name__}",
                                    freeze=freeze)
        outputs = session.run(feeds)
        print("outputs", sorted(outputs))

        params = {name: torch.tensor(value, dtype=torch.float64, requires_grad=True)
                  for name, value in m.weights.items()}
        inputs = {name: torch.from_numpy(value.astype(np.float64)
                                         if value.dtype == np.float32 else value)
                  for name, value in feeds.items()}
        loss = reference(params, inputs)
        loss.backward()
        failed |= not check("loss", outputs["loss"], loss.item(), RTOL, ATOL)
        for name, param in params.items():
            if f"grad:{name}" in outputs:
                failed |= not check(f"grad:{name}", outputs[f"grad:{name}"],
                                    param.grad.numpy(), RTOL, ATOL)

    sys.exit(1 if failed else 0)

# CHECK-LABEL: == mlp
# CHECK-NEXT: outputs ['grad:fc1.bias', 'grad:fc1.weight', 'grad:fc2.bias', 'grad:fc2.weight', 'loss']
# CHECK-NOT: MISMATCH
# CHECK: grad:fc2.bias  ok

# CHECK-LABEL: == transformer
# CHECK-NEXT: outputs ['grad:embedding', 'grad:fc1.bias', 'grad:fc1.weight', 'grad:fc2.bias', 'grad:fc2.weight', 'grad:ln1.bias', 'grad:ln1.weight', 'grad:ln2.bias', 'grad:ln2.weight', 'grad:out.weight', 'grad:position', 'grad:qkv.bias', 'grad:qkv.weight', 'loss']
# CHECK-NOT: MISMATCH
# CHECK: grad:fc2.bias  ok

# CHECK-LABEL: == speech
# CHECK-NEXT: outputs ['grad:fc.bias', 'grad:fc.weight', 'grad:gru.b', 'grad:gru.h0', 'grad:gru.r', 'grad:gru.w', 'grad:lstm.b', 'grad:lstm.c0', 'grad:lstm.h0', 'grad:lstm.r', 'grad:lstm.w', 'grad:out.bias', 'grad:out.weight', 'loss']
# CHECK-NOT: MISMATCH
# CHECK: grad:out.bias  ok

# The frozen scale has no gradient; the tied table has one.
# CHECK-LABEL: == tied
# CHECK-NEXT: outputs ['grad:embedding', 'loss']
# CHECK-NEXT: loss  ok
# CHECK-NEXT: grad:embedding  ok
