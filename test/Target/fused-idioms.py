# A Llama-style decoder layer written as torch.onnx (opset 17) and Hugging
# Face write it, and the opset-23 operators that say the same in one node.
#
# idioms.onnx: RMSNorm as Cast(float) -> Pow(2) -> ReduceMean(-1) ->
# Add(eps) -> Sqrt -> Reciprocal -> Mul(x) -> Cast -> Mul(weight) (and as
# Div(1, Sqrt) and x / Sqrt in the second norm); RoPE as
# q * cos + rotate_half(q) * sin with cos and sin built from the position
# ids as cos(concat(freqs, freqs)) and rotate_half as Slice/Neg/Concat; a
# GQA attention written out (repeat_kv, causal mask); and the MLP's GELU in
# its tanh form (GPT-2's NewGELU). cleave-simplify fuses the norms, the two
# rotations and the GELU; the compiled program calls the fused kernels and
# no reduce_mean is left.
#
# native.onnx: RMSNormalization, RotaryEmbedding (with position ids,
# interleaved or not, partial rotation) and Attention (GQA, causal, boolean
# and additive masks, softcap, 3-D inputs, a key/value cache with 4-D and
# 3-D inputs) at opset 23,
# imported one to one.
#
# Both bundles, compiled for the cpu target, agree with onnxruntime within
# rtol 1e-4 and atol 1e-5.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave-opt --cleave-simplify %t/idioms.mlir | FileCheck %s --check-prefix=IR
# IR-LABEL: func.func @main
# IR: cleave.rms_norm %{{.+}} {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x6x32xf32>, tensor<32xf32>) -> tensor<2x6x32xf32>
# IR-COUNT-2: cleave.rotary_embedding %{{.+}} : (tensor<2x{{[24]}}x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x{{[24]}}x6x8xf32>
# IR: cleave.rms_norm %{{.+}} {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x6x32xf32>, tensor<32xf32>) -> tensor<2x6x32xf32>
# IR: cleave.gelu %{{.+}} {approximate = "tanh"} : tensor<2x6x64xf32>
# Nothing of the decompositions is left.
# RUN: cleave-opt --cleave-simplify %t/idioms.mlir | FileCheck %s --check-prefix=GONE
# GONE-LABEL: func.func @main
# GONE-NOT: cleave.reduce_mean
# GONE-NOT: cleave.sqrt
# GONE-NOT: cleave.tanh
# GONE-NOT: cleave.neg
# GONE-NOT: cleave.slice
#
# RUN: cleave compile %t/idioms.onnx -o %t/idioms.cleave --quiet
# RUN: FileCheck %s --check-prefix=CPP < %t/idioms.cleave/programs/stage_0.cpp
# CPP: cleave_cpu_rms_norm(
# CPP: cleave_cpu_rotary_embedding(
# CPP: cleave_cpu_rotary_embedding(
# CPP: cleave_cpu_rms_norm(
# CPP-NOT: cleave_cpu_reduce_mean(
#
# RUN: cleave-translate --import-onnx %t/native.onnx > %t/native.mlir
# RUN: FileCheck %s --check-prefix=NATIVE-RMS < %t/native.mlir
# RUN: FileCheck %s --check-prefix=NATIVE-ROPE < %t/native.mlir
# RUN: FileCheck %s --check-prefix=NATIVE-ATTN < %t/native.mlir
# NATIVE-RMS-COUNT-2: cleave.rms_norm
# NATIVE-RMS-NOT: cleave.rms_norm
# NATIVE-ROPE-COUNT-3: cleave.rotary_embedding
# NATIVE-ROPE-NOT: cleave.rotary_embedding
# NATIVE-ATTN-COUNT-6: cleave.attention
# NATIVE-ATTN-NOT: cleave.attention
# RUN: cleave compile %t/native.onnx -o %t/native.cleave --quiet
# RUN: FileCheck %s --check-prefix=NATIVE-CPP < %t/native.cleave/programs/stage_0.cpp
# NATIVE-CPP: cleave_cpu_rms_norm(
# NATIVE-CPP: cleave_cpu_rotary_embedding(
# NATIVE-CPP: cleave_cpu_attention(
# The CUDA program calls the same kernels.
# RUN: cleave compile %t/native.onnx -o %t/native-cuda.cleave --target h100-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=NATIVE-CU < %t/native-cuda.cleave/programs/stage_0.cu
# NATIVE-CU: cleave_cuda_rms_norm(
# NATIVE-CU: cleave_cuda_rotary_embedding(
# NATIVE-CU: cleave_cuda_attention(
#
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: idioms y: max abs error {{.*}}: ok
# NUMERIC: native rms: max abs error {{.*}}: ok
# NUMERIC: native rope: max abs error {{.*}}: ok
# NUMERIC: native rope_interleaved: max abs error {{.*}}: ok
# NUMERIC: native attn_gqa_causal: max abs error {{.*}}: ok
# NUMERIC: native attn_bool_mask: max abs error {{.*}}: ok
# NUMERIC: native attn_additive_softcap: max abs error {{.*}}: ok
# NUMERIC: native attn_3d: max abs error {{.*}}: ok
# NUMERIC: native attn_cache: max abs error {{.*}}: ok
# NUMERIC: native present_key: max abs error {{.*}}: ok
# NUMERIC: native attn_3d_cache: max abs error {{.*}}: ok
# NUMERIC: native present_value_3d: max abs error {{.*}}: ok
# NUMERIC-NOT: MISMATCH

import math
import subprocess
import sys

import numpy as np
from onnx import TensorProto

from cleave.testing import GraphBuilder

work = sys.argv[2]
rng = np.random.default_rng(0)
B, S, E, H, KV, D, F = 2, 6, 32, 4, 2, 8, 64


def weight(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def ints(*values):
    return np.array(values, np.int64)


def rms_norm_llama(g, x, w):
    """LlamaRMSNorm.forward as torch.onnx writes it."""
    xf = g.node("Cast", [x], to=TensorProto.FLOAT)
    var = g.node("ReduceMean", [g.node("Pow", [xf, g.const(np.float32(2))])], axes=[-1], keepdims=1)
    rsqrt = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [var, g.const(np.float32(1e-6))])])])
    normed = g.node("Cast", [g.node("Mul", [xf, rsqrt])], to=TensorProto.FLOAT)
    return g.node("Mul", [g.const(w), normed])


def rms_norm_div(g, x, w):
    """T5-style: x / sqrt(mean(x^2) + eps), torch.rsqrt written as 1 / sqrt."""
    var = g.node("ReduceMean", [g.node("Mul", [x, x])], axes=[-1], keepdims=1)
    rsqrt = g.node("Div", [g.const(np.float32(1)), g.node("Sqrt", [g.node("Add", [g.const(np.float32(1e-6)), var])])])
    return g.node("Mul", [g.node("Mul", [rsqrt, x]), g.const(w)])


def rotary_tables(g, position_ids):
    """LlamaRotaryEmbedding.forward: cos and sin of concat(freqs, freqs)."""
    inv_freq = (1.0 / (10000 ** (np.arange(0, D, 2, dtype=np.float32) / D))).astype(np.float32)
    inv = g.node("Expand", [g.const(inv_freq.reshape(1, D // 2, 1)), g.const(ints(B, D // 2, 1))])
    pos = g.node("Unsqueeze", [g.node("Cast", [position_ids], to=TensorProto.FLOAT), g.const(ints(1))])
    freqs = g.node("Transpose", [g.node("MatMul", [inv, pos])], perm=[0, 2, 1])
    emb = g.node("Concat", [freqs, freqs], axis=-1)
    tables = []
    for fn in ("Cos", "Sin"):
        t = g.node("Mul", [g.node(fn, [emb]), g.const(np.float32(1.0))])  # attention_scaling
        t = g.node("Cast", [t], to=TensorProto.FLOAT)
        tables.append(g.node("Unsqueeze", [t, g.const(ints(1))]))
    return tables


def rotate_half(g, x):
    x1 = g.node("Slice", [x, g.const(ints(0)), g.const(ints(D // 2)), g.const(ints(-1))])
    x2 = g.node("Slice", [x, g.const(ints(D // 2)), g.const(ints(2**63 - 1)), g.const(ints(-1))])
    return g.node("Concat", [g.node("Neg", [x2]), x1], axis=-1)


def apply_rope(g, x, cos, sin):
    return g.node("Add", [g.node("Mul", [x, cos]), g.node("Mul", [rotate_half(g, x), sin])])


def heads(g, x, n):
    """[B, S, n*D] -> [B, n, S, D]."""
    return g.node("Transpose", [g.node("Reshape", [x, g.const(ints(B, S, n, D))])], perm=[0, 2, 1, 3])


def repeat_kv(g, x):
    """[B, KV, S, D] -> [B, H, S, D], each key/value head serving H / KV query heads."""
    x = g.node("Unsqueeze", [x, g.const(ints(2))])
    x = g.node("Expand", [x, g.const(ints(B, KV, H // KV, S, D))])
    return g.node("Reshape", [x, g.const(ints(B, H, S, D))])


def new_gelu(g, x):
    """GPT-2's NewGELUActivation."""
    inner = g.node("Add", [x, g.node("Mul", [g.const(np.float32(0.044715)),
                                              g.node("Pow", [x, g.const(np.float32(3.0))])])])
    t = g.node("Tanh", [g.node("Mul", [g.const(np.float32(math.sqrt(2.0 / math.pi))), inner])])
    return g.node("Mul", [g.node("Mul", [g.const(np.float32(0.5)), x]),
                          g.node("Add", [g.const(np.float32(1.0)), t])])


def build_idioms():
    g = GraphBuilder(opset=17)
    x = g.input("x", [B, S, E])
    position_ids = g.input("position_ids", [B, S], np.int64)
    h = rms_norm_llama(g, x, 1 + weight(E))
    cos, sin = rotary_tables(g, position_ids)
    q = apply_rope(g, heads(g, g.node("MatMul", [h, g.const(weight(E, H * D))]), H), cos, sin)
    k = apply_rope(g, heads(g, g.node("MatMul", [h, g.const(weight(E, KV * D))]), KV), cos, sin)
    v = heads(g, g.node("MatMul", [h, g.const(weight(E, KV * D))]), KV)
    scores = g.node("Mul", [g.node("MatMul", [q, g.node("Transpose", [repeat_kv(g, k)], perm=[0, 1, 3, 2])]),
                            g.const(np.float32(1 / math.sqrt(D)))])
    causal = np.triu(np.full((S, S), np.finfo(np.float32).min, np.float32), 1)
    probs = g.node("Softmax", [g.node("Add", [scores, g.const(causal.reshape(1, 1, S, S))])], axis=-1)
    ctx = g.node("MatMul", [probs, repeat_kv(g, v)])
    ctx = g.node("Reshape", [g.node("Transpose", [ctx], perm=[0, 2, 1, 3]), g.const(ints(B, S, H * D))])
    x = g.node("Add", [x, g.node("MatMul", [ctx, g.const(weight(H * D, E))])])
    h = rms_norm_div(g, x, 1 + weight(E))
    up = new_gelu(g, g.node("MatMul", [h, g.const(weight(E, F))]))
    g.output(g.node("Add", [x, g.node("MatMul", [up, g.const(weight(F, E))])], ["y"]), [B, S, E])
    g.save(f"{work}/idioms.onnx")


def build_native():
    g = GraphBuilder(opset=23, ir_version=10)
    x = g.input("x", [B, S, E])
    position_ids = g.input("position_ids", [B, S], np.int64)
    cache = np.arange(16)[:, None] * (1.0 / 10000 ** (np.arange(D // 2) / (D // 2)))[None, :]
    cos, sin = g.const(np.cos(cache).astype(np.float32)), g.const(np.sin(cache).astype(np.float32))
    g.output(g.node("RMSNormalization", [x, g.const(1 + weight(E))], ["rms"], epsilon=1e-6), [B, S, E])
    q4 = g.input("q4", [B, H, S, D])
    k4 = g.input("k4", [B, KV, S, D])
    v4 = g.input("v4", [B, KV, S, D])
    g.output(g.node("RotaryEmbedding", [q4, cos, sin, position_ids], ["rope"]), [B, H, S, D])
    # onnxruntime wants tables exactly rotary_embedding_dim / 2 wide.
    cos2, sin2 = (g.const(np.ascontiguousarray(t[:, :D // 4]).astype(np.float32))
                  for t in (np.cos(cache), np.sin(cache)))
    g.output(g.node("RotaryEmbedding", [x, cos2, sin2, position_ids], ["rope_interleaved"],
                    interleaved=1, num_heads=H, rotary_embedding_dim=D // 2), [B, S, E])
    g.node("RotaryEmbedding", [k4, cos, sin, position_ids], ["rope_k"])
    g.output(g.node("Attention", [q4, "rope_k", v4], ["attn_gqa_causal"], is_causal=1), [B, H, S, D])
    mask = g.input("mask", [B, 1, S, S], np.bool_)
    g.output(g.node("Attention", [q4, k4, v4, mask], ["attn_bool_mask"]), [B, H, S, D])
    bias = g.const(weight(S, S, scale=1.0))
    g.output(g.node("Attention", [q4, k4, v4, bias], ["attn_additive_softcap"], softcap=2.0, scale=0.5),
             [B, H, S, D])
    g.output(g.node("Attention", [x, g.node("RMSNormalization", [x, g.const(weight(E))], axis=1),
                                  x], ["attn_3d"], q_num_heads=H, kv_num_heads=H), [B, S, E])
    past_k = g.input("past_k", [B, KV, 3, D])
    past_v = g.input("past_v", [B, KV, 3, D])
    g.node("Attention", [q4, k4, v4, "", past_k, past_v], ["attn_cache", "present_key", "present_value"])
    g.output("attn_cache", [B, H, S, D])
    g.output("present_key", [B, KV, S + 3, D])
    k3 = g.input("k3", [B, S, KV * D])
    g.node("Attention", [x, k3, k3, "", past_k, past_v], ["attn_3d_cache", "present_key_3d", "present_value_3d"],
           q_num_heads=H, kv_num_heads=KV)
    g.output("attn_3d_cache", [B, S, E])
    g.output("present_value_3d", [B, KV, S + 3, D])
    g.save(f"{work}/native.onnx")


FEEDS = {
    "x": rng.standard_normal((B, S, E)).astype(np.float32),
    "position_ids": np.stack([np.arange(S), np.arange(S) + 5]).astype(np.int64),
    "q4": rng.standard_normal((B, H, S, D)).astype(np.float32),
    "k4": rng.standard_normal((B, KV, S, D)).astype(np.float32),
    "v4": rng.standard_normal((B, KV, S, D)).astype(np.float32),
    "mask": rng.random((B, 1, S, S)) > 0.3,
    "past_k": rng.standard_normal((B, KV, 3, D)).astype(np.float32),
    "past_v": rng.standard_normal((B, KV, 3, D)).astype(np.float32),
    "k3": rng.standard_normal((B, S, KV * D)).astype(np.float32),
}
FEEDS["mask"][..., 0] = True  # every query sees a key


def check(name):
    import onnxruntime as ort

    import cleave

    session = ort.InferenceSession(f"{work}/{name}.onnx")
    feeds = {i.name: FEEDS[i.name] for i in session.get_inputs()}
    got = cleave.Session(f"{work}/{name}.cleave").run(feeds)
    names = [o.name for o in session.get_outputs()]
    for output, want in zip(names, session.run(None, feeds)):
        error = float(np.abs(got[output] - want).max())
        ok = got[output].shape == want.shape and np.allclose(got[output], want, rtol=1e-4, atol=1e-5)
        print(f"{name} {output}: max abs error {error:.2e}: {'ok' if ok else 'MISMATCH'}")


if sys.argv[1] == "build":
    build_idioms()
    build_native()
    with open(f"{work}/idioms.mlir", "w") as f:
        subprocess.run(["cleave-translate", "--import-onnx", f"{work}/idioms.onnx"], stdout=f, check=True)
else:
    check("idioms")
    check("native")
