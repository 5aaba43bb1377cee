# The opset-23 operators of modern transformer exports that cleave imports
# as one fused op each: RMSNormalization as cleave.rms_norm (negative axis
# normalised, default epsilon), RotaryEmbedding as cleave.rotary_embedding
# and Attention as cleave.attention (heads of 4-D inputs from the shapes,
# the default scale 1/sqrt(head size), caches concatenated in front of the
# key and value, 3-D inputs split into heads when there is a cache), with an error naming the node for each attribute, shape
# or output cleave does not take. Graph outputs are declared with the
# shapes onnxruntime computes, which the importer checks.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/rms-norm.onnx | FileCheck %s --check-prefix=RMS
# RMS-LABEL: func.func @main
# RMS-SAME: (%[[X:[^:]+]]: tensor<2x4x6xf32>
# RMS: %[[W6:.+]] = cleave.constant {{.*}} : tensor<6xf32>
# RMS: cleave.rms_norm %[[X]], %[[W6]] {axis = 2 : i64} : (tensor<2x4x6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
# RMS: %[[W46:.+]] = cleave.constant {{.*}} : tensor<4x6xf32>
# RMS: cleave.rms_norm %[[X]], %[[W46]] {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x4x6xf32>, tensor<4x6xf32>) -> tensor<2x4x6xf32>
#
# RUN: cleave-translate --import-onnx %t/rope.onnx | FileCheck %s --check-prefix=ROPE
# ROPE-LABEL: func.func @main
# ROPE-SAME: (%[[X4:[^:]+]]: tensor<2x3x5x8xf32> {{.*}}, %[[X3:[^:]+]]: tensor<2x5x24xf32> {{.*}}, %[[POS:[^:]+]]: tensor<2x5xi64>
# ROPE: cleave.rotary_embedding %[[X4]], %[[COS:[^,]+]], %[[SIN:[^,]+]], %[[POS]] : (tensor<2x3x5x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<2x5xi64>) -> tensor<2x3x5x8xf32>
# ROPE: cleave.rotary_embedding %[[X3]], %{{[^,]+}}, %{{[^ ]+}} {interleaved = true, num_heads = 3 : i64, rotary_embedding_dim = 4 : i64} : (tensor<2x5x24xf32>, tensor<2x5x2xf32>, tensor<2x5x2xf32>) -> tensor<2x5x24xf32>
#
# RUN: cleave-translate --import-onnx %t/attention.onnx | FileCheck %s --check-prefix=ATTN
# ATTN-LABEL: func.func @main
# ATTN-SAME: (%[[Q:[^:]+]]: tensor<2x4x3x8xf32> {{.*}}, %[[K:[^:]+]]: tensor<2x2x5x8xf32> {{.*}}, %[[V:[^:]+]]: tensor<2x2x5x6xf32> {{.*}}, %[[PK:[^:]+]]: tensor<2x2x7x8xf32> {{.*}}, %[[PV:[^:]+]]: tensor<2x2x7x6xf32> {{.*}}, %[[Q3:[^:]+]]: tensor<2x3x32xf32> {{.*}}, %[[K3:[^:]+]]: tensor<2x5x16xf32> {{.*}}, %[[M:[^:]+]]: tensor<3x5xi1>
# ATTN: %[[Y4:.+]] = cleave.attention %[[Q]], %[[K]], %[[V]] {is_causal, kv_num_heads = 2 : i64, nan_to_zero, q_num_heads = 4 : i64, scale = 0.353553385 : f32} : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>) -> tensor<2x4x3x6xf32>
# ATTN: %[[PRESENT_K:.+]] = cleave.concat %[[PK]], %[[K]] {axis = 2 : i64} : (tensor<2x2x7x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x2x12x8xf32>
# ATTN: %[[PRESENT_V:.+]] = cleave.concat %[[PV]], %[[V]] {axis = 2 : i64} : (tensor<2x2x7x6xf32>, tensor<2x2x5x6xf32>) -> tensor<2x2x12x6xf32>
# ATTN: %[[YP:.+]] = cleave.attention %[[Q]], %[[PRESENT_K]], %[[PRESENT_V]] {kv_num_heads = 2 : i64, nan_to_zero, q_num_heads = 4 : i64, scale = 5.000000e-01 : f32, softcap = 2.000000e+01 : f32} : (tensor<2x4x3x8xf32>, tensor<2x2x12x8xf32>, tensor<2x2x12x6xf32>) -> tensor<2x4x3x6xf32>
# ATTN: %[[Y3:.+]] = cleave.attention %[[Q3]], %[[K3]], %[[K3]], %[[M]] {kv_num_heads = 2 : i64, nan_to_zero, q_num_heads = 4 : i64, scale = 0.353553385 : f32} : (tensor<2x3x32xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<3x5xi1>) -> tensor<2x3x32xf32>
# With 3-D inputs and a cache, the heads are split out for the cache and
# merged back after the attention.
# ATTN: %[[K3R:.+]] = cleave.reshape %[[K3]] : tensor<2x5x16xf32> -> tensor<2x5x2x8xf32>
# ATTN: %[[K3H:.+]] = cleave.transpose %[[K3R]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x5x2x8xf32>) -> tensor<2x2x5x8xf32>
# ATTN: %[[PRESENT_K3:.+]] = cleave.concat %[[PK]], %[[K3H]] {axis = 2 : i64} : (tensor<2x2x7x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x2x12x8xf32>
# ATTN: %[[Y3C:.+]] = cleave.attention {{.*}} : (tensor<2x4x3x8xf32>, tensor<2x2x12x8xf32>, tensor<2x2x12x8xf32>) -> tensor<2x4x3x8xf32>
# ATTN: %[[Y3T:.+]] = cleave.transpose %[[Y3C]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x3x8xf32>) -> tensor<2x3x4x8xf32>
# ATTN: %[[Y3M:.+]] = cleave.reshape %[[Y3T]] : tensor<2x3x4x8xf32> -> tensor<2x3x32xf32>
# ATTN: return %[[Y4]], %[[YP]], %[[PRESENT_K]], %[[PRESENT_V]], %[[Y3]], %[[Y3M]], %[[PRESENT_K3]]
#
# RUN: not cleave-translate --import-onnx %t/rms-stash-type.onnx 2>&1 | FileCheck %s --check-prefix=RMS_STASH
# RMS_STASH: rms-stash-type.onnx:0:0: error: node 'rms' (RMSNormalization): stash_type 11 is not supported; only 1 (float32)
# RUN: not cleave-translate --import-onnx %t/rms-axis.onnx 2>&1 | FileCheck %s --check-prefix=RMS_AXIS
# RMS_AXIS: rms-axis.onnx:0:0: error: node 'rms' (RMSNormalization): axis 3 is out of range for rank 3
# RUN: not cleave-translate --import-onnx %t/rms-epsilon.onnx 2>&1 | FileCheck %s --check-prefix=RMS_EPSILON
# RMS_EPSILON: rms-epsilon.onnx:0:0: error: node 'rms' (RMSNormalization): epsilon (-1.000000e+00) must be finite and non-negative
# RUN: not cleave-translate --import-onnx %t/rms-scale-type.onnx 2>&1 | FileCheck %s --check-prefix=RMS_SCALE_TYPE
# RMS_SCALE_TYPE: rms-scale-type.onnx:0:0: error: node 'rms' (RMSNormalization): scale element type 'f16' differs from the input's 'f32'
# RUN: not cleave-translate --import-onnx %t/rms-scale-shape.onnx 2>&1 | FileCheck %s --check-prefix=RMS_SCALE_SHAPE
# RMS_SCALE_SHAPE: rms-scale-shape.onnx:0:0: error: node 'rms' (RMSNormalization): {{.*}}rms_norm_c2: scale shape [5] does not broadcast to the normalised shape [6]
#
# RUN: not cleave-translate --import-onnx %t/rope-no-heads.onnx 2>&1 | FileCheck %s --check-prefix=ROPE_NO_HEADS
# ROPE_NO_HEADS: rope-no-heads.onnx:0:0: error: node 'rope' (RotaryEmbedding): num_heads (0) must be positive for a 3-D input
# RUN: not cleave-translate --import-onnx %t/rope-interleaved.onnx 2>&1 | FileCheck %s --check-prefix=ROPE_INTERLEAVED
# ROPE_INTERLEAVED: rope-interleaved.onnx:0:0: error: node 'rope' (RotaryEmbedding): interleaved must be 0 or 1, not 2
# RUN: not cleave-translate --import-onnx %t/rope-odd-dim.onnx 2>&1 | FileCheck %s --check-prefix=ROPE_ODD_DIM
# ROPE_ODD_DIM: rope-odd-dim.onnx:0:0: error: node 'rope' (RotaryEmbedding): {{.*}}rotary_embedding_c3: the rotated size (5) must be even
# RUN: not cleave-translate --import-onnx %t/rope-big-dim.onnx 2>&1 | FileCheck %s --check-prefix=ROPE_BIG_DIM
# ROPE_BIG_DIM: rope-big-dim.onnx:0:0: error: node 'rope' (RotaryEmbedding): {{.*}}rotary_embedding_c3: rotary_embedding_dim (10) must be in [0, 8]
# RUN: not cleave-translate --import-onnx %t/rope-positions.onnx 2>&1 | FileCheck %s --check-prefix=ROPE_POSITIONS
# ROPE_POSITIONS: rope-positions.onnx:0:0: error: node 'rope' (RotaryEmbedding): {{.*}}rotary_embedding_c5: position_ids shape [2, 4] must be [2, 5]
# RUN: not cleave-translate --import-onnx %t/rope-cache.onnx 2>&1 | FileCheck %s --check-prefix=ROPE_CACHE
# ROPE_CACHE: rope-cache.onnx:0:0: error: node 'rope' (RotaryEmbedding): {{.*}}rotary_embedding_c5: without position_ids, cos and sin must be [2 or 1, 5, n] with n >= 4, got [2, 5, 3]
#
# RUN: not cleave-translate --import-onnx %t/attention-no-heads.onnx 2>&1 | FileCheck %s --check-prefix=ATTN_NO_HEADS
# ATTN_NO_HEADS: attention-no-heads.onnx:0:0: error: node 'attn' (Attention): q_num_heads and kv_num_heads are required for 3-D inputs
# RUN: not cleave-translate --import-onnx %t/attention-heads.onnx 2>&1 | FileCheck %s --check-prefix=ATTN_HEADS
# ATTN_HEADS: attention-heads.onnx:0:0: error: node 'attn' (Attention): q_num_heads (2) and kv_num_heads (0) disagree with the 4-D inputs' 4 and 2 heads
# RUN: not cleave-translate --import-onnx %t/attention-groups.onnx 2>&1 | FileCheck %s --check-prefix=ATTN_GROUPS
# ATTN_GROUPS: attention-groups.onnx:0:0: error: node 'attn' (Attention): {{.*}}attention_c3: q_num_heads (4) must be a positive multiple of kv_num_heads (3)
# RUN: not cleave-translate --import-onnx %t/attention-past-3d.onnx 2>&1 | FileCheck %s --check-prefix=ATTN_PAST_3D
# ATTN_PAST_3D: attention-past-3d.onnx:0:0: error: node 'attn' (Attention): hidden size 30 is not a multiple of the 4 heads
# RUN: not cleave-translate --import-onnx %t/attention-past-half.onnx 2>&1 | FileCheck %s --check-prefix=ATTN_PAST_HALF
# ATTN_PAST_HALF: attention-past-half.onnx:0:0: error: node 'attn' (Attention): past_key and past_value must be given together
# RUN: not cleave-translate --import-onnx %t/attention-mask.onnx 2>&1 | FileCheck %s --check-prefix=ATTN_MASK
# ATTN_MASK: attention-mask.onnx:0:0: error: node 'attn' (Attention): {{.*}}attention_c6: mask shape [4, 5] does not broadcast to the scores [2, 4, 3, 5]
# RUN: not cleave-translate --import-onnx %t/attention-head-size.onnx 2>&1 | FileCheck %s --check-prefix=ATTN_HEAD_SIZE
# ATTN_HEAD_SIZE: attention-head-size.onnx:0:0: error: node 'attn' (Attention): {{.*}}attention_c5: query [2, 4, 3, 8], key [2, 2, 5, 6] and value [2, 2, 5, 6] disagree on the batch, the query/key head size or the key/value sequence

import sys

import numpy as np

from cleave.testing import GraphBuilder

out = sys.argv[1]
rng = np.random.default_rng(0)


def weight(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def builder():
    return GraphBuilder(opset=23, ir_version=10)


g = builder()
x = g.input("x", [2, 4, 6])
g.output(g.node("RMSNormalization", [x, g.const(weight(6))]))
g.output(g.node("RMSNormalization", [x, g.const(weight(4, 6))], axis=-2, epsilon=1e-3))
g.declare_reference_shapes()
g.save(f"{out}/rms-norm.onnx")


def rms_error(name, scale, **attrs):
    g = builder()
    x = g.input("x", [2, 4, 6])
    g.output(g.node("RMSNormalization", [x, g.const(scale)], name="rms", **attrs))
    g.save(f"{out}/{name}.onnx")


rms_error("rms-stash-type", weight(6), stash_type=11)
rms_error("rms-axis", weight(6), axis=3)
rms_error("rms-epsilon", weight(6), epsilon=-1.0)
rms_error("rms-scale-type", weight(6, dtype=np.float16))
rms_error("rms-scale-shape", weight(5))


g = builder()
x4 = g.input("x4", [2, 3, 5, 8])
x3 = g.input("x3", [2, 5, 24])
pos = g.input("pos", [2, 5], np.int64)
g.output(g.node("RotaryEmbedding", [x4, g.const(weight(16, 4)), g.const(weight(16, 4)), pos]))
g.output(g.node("RotaryEmbedding", [x3, g.const(weight(2, 5, 2)), g.const(weight(2, 5, 2))],
                interleaved=1, num_heads=3, rotary_embedding_dim=4))
g.declare_reference_shapes()
g.save(f"{out}/rope.onnx")


def rope_error(name, x_shape, cos_shape, positions=None, **attrs):
    g = builder()
    x = g.input("x", x_shape)
    inputs = [x, g.const(weight(*cos_shape)), g.const(weight(*cos_shape))]
    if positions:
        inputs.append(g.input("pos", positions, np.int64))
    g.output(g.node("RotaryEmbedding", inputs, name="rope", **attrs))
    g.save(f"{out}/{name}.onnx")


rope_error("rope-no-heads", [2, 5, 24], [2, 5, 4])
rope_error("rope-interleaved", [2, 3, 5, 8], [2, 5, 4], interleaved=2)
rope_error("rope-odd-dim", [2, 3, 5, 8], [2, 5, 4], rotary_embedding_dim=5)
rope_error("rope-big-dim", [2, 3, 5, 8], [2, 5, 4], rotary_embedding_dim=10)
rope_error("rope-positions", [2, 3, 5, 8], [16, 4], positions=[2, 4])
rope_error("rope-cache", [2, 3, 5, 8], [2, 5, 3])

# GQA with a causal mask; the caches in front of the key and value, which
# are also outputs, with a softcap; 3-D inputs with a boolean mask.
g = builder()
q = g.input("q", [2, 4, 3, 8])
k = g.input("k", [2, 2, 5, 8])
v = g.input("v", [2, 2, 5, 6])
past_k = g.input("past_k", [2, 2, 7, 8])
past_v = g.input("past_v", [2, 2, 7, 6])
q3 = g.input("q3", [2, 3, 32])
k3 = g.input("k3", [2, 5, 16])
mask = g.input("mask", [3, 5], np.bool_)
g.output(g.node("Attention", [q, k, v], is_causal=1))
y, present_k, present_v = g.node("Attention", [q, k, v, "", past_k, past_v], 3,
                                 scale=0.5, softcap=20.0)
for name in (y, present_k, present_v):
    g.output(name)
g.output(g.node("Attention", [q3, k3, k3, mask], q_num_heads=4, kv_num_heads=2))
y3, present_k3, _ = g.node("Attention", [q3, k3, k3, "", past_k, past_k], 3, q_num_heads=4, kv_num_heads=2)
g.output(y3)
g.output(present_k3)
g.declare_reference_shapes()
g.save(f"{out}/attention.onnx")


def attention_error(name, build, **inputs):
    g = builder()
    values = {n: g.input(n, shape) for n, shape in inputs.items()}
    result = build(g, values)
    for v in result if isinstance(result, list) else [result]:
        g.output(v)
    g.save(f"{out}/{name}.onnx")


QKV4 = {"q": [2, 4, 3, 8], "k": [2, 2, 5, 8], "v": [2, 2, 5, 6]}
attention_error("attention-no-heads",
                lambda g, i: g.node("Attention", [i["q"], i["k"], i["k"]], name="attn"),
                q=[2, 3, 32], k=[2, 5, 16])
attention_error("attention-heads",
                lambda g, i: g.node("Attention", [i["q"], i["k"], i["v"]], name="attn", q_num_heads=2),
                **QKV4)
attention_error("attention-groups",
                lambda g, i: g.node("Attention", [i["q"], i["k"], i["k"]], name="attn",
                                    q_num_heads=4, kv_num_heads=3),
                q=[2, 3, 32], k=[2, 5, 24])
attention_error("attention-past-3d",
                lambda g, i: g.node("Attention", [i["q"], i["k"], i["k"], "", i["pk"], i["pk"]],
                                    name="attn", q_num_heads=4, kv_num_heads=2),
                q=[2, 3, 30], k=[2, 5, 16], pk=[2, 2, 7, 8])
attention_error("attention-past-half",
                lambda g, i: g.node("Attention", [i["q"], i["k"], i["v"], "", i["pk"]], name="attn"),
                pk=[2, 2, 7, 8], **QKV4)
attention_error("attention-mask",
                lambda g, i: g.node("Attention", [i["q"], i["k"], i["v"], i["m"]], name="attn"),
                m=[4, 5], **QKV4)
attention_error("attention-head-size",
                lambda g, i: g.node("Attention", [i["q"], i["k"], i["v"]], name="attn"),
                q=[2, 4, 3, 8], k=[2, 2, 5, 6], v=[2, 2, 5, 6])
