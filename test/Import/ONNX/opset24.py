# Opset 24 (IR version 12). The operators whose version moved only to admit
# FLOAT8E8M0 import as at opset 23, and that type is refused by name; Swish
# is x * sigmoid(alpha * x); Attention's nonpad_kv_seqlen masks the padding
# keys of each batch (moving a causal mask's diagonal to the bottom right);
# a mask shorter than the keys hides the keys past its end.
# Attention's qk_matmul_output (opsets 23 and 24) writes the attention out as
# its steps and reads the scores after the step qk_matmul_output_mode names.
# Every model, compiled for the cpu target, agrees with onnxruntime within
# rtol 1e-4 and atol 1e-5; where masked scores are read, cleave's -inf is
# onnxruntime's lowest float.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
#
# RUN: cleave-translate --import-onnx %t/widened.onnx | FileCheck %s --check-prefix=WIDENED
# WIDENED-LABEL: func.func @main
# WIDENED-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>
# WIDENED: %[[T:.+]] = cleave.transpose %[[X]] {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
# WIDENED: %[[R:.+]] = cleave.reshape %[[T]] : tensor<2x4x3xf32> -> tensor<2x2x6xf32>
# WIDENED: %[[U:.+]] = cleave.unsqueeze %[[R]] {axes = array<i64: 1>} : (tensor<2x2x6xf32>) -> tensor<2x1x2x6xf32>
# WIDENED: %[[S:.+]] = cleave.squeeze %[[U]] {axes = array<i64: 1>} : (tensor<2x1x2x6xf32>) -> tensor<2x2x6xf32>
# WIDENED: %[[P:.+]] = cleave.pad %[[S]] {pads = array<i64: 0, 0, 1, 0, 0, 1>} : (tensor<2x2x6xf32>) -> tensor<2x2x8xf32>
# WIDENED: %[[H:.+]] = cleave.cast %[[P]] : tensor<2x2x8xf32> to tensor<2x2x8xf64>
# WIDENED: %values, %indices = cleave.topk %[[P]] {axis = 2 : i64, k = 3 : i64}
# WIDENED: %[[SHAPE:.+]] = cleave.constant dense<[2, 2, 8]> : tensor<3xi64>
# WIDENED: %[[SIZE:.+]] = cleave.constant dense<32> : tensor<i64>
# WIDENED: %[[TWOS:.+]] = cleave.constant dense<2.000000e+00> : tensor<2x3x4xf32>
#
# RUN: cleave-translate --import-onnx %t/swish.onnx | FileCheck %s --check-prefix=SWISH
# SWISH-LABEL: func.func @main
# SWISH-SAME: (%[[X:[^:]+]]: tensor<3x5xf32>
# SWISH: %[[S1:.+]] = cleave.sigmoid %[[X]] : tensor<3x5xf32>
# SWISH: %[[Y1:.+]] = cleave.mul %[[X]], %[[S1]]
# SWISH: %[[A:.+]] = cleave.constant dense<5.000000e-01> : tensor<f32>
# SWISH: %[[AX:.+]] = cleave.mul %[[X]], %[[A]]
# SWISH: %[[S2:.+]] = cleave.sigmoid %[[AX]] : tensor<3x5xf32>
# SWISH: %[[Y2:.+]] = cleave.mul %[[X]], %[[S2]]
# SWISH: return %[[Y1]], %[[Y2]]
#
# nonpad_kv_seqlen: key j of batch b is visible when j < n[b], or with
# is_causal when j - i + 3 <= n[b] (query i of 3); the mask goes to
# cleave.attention, which zeroes the rows of a batch without keys.
# RUN: cleave-translate --import-onnx %t/nonpad.onnx | FileCheck %s --check-prefix=NONPAD
# NONPAD-LABEL: func.func @main
# NONPAD-SAME: %[[N:[^:]+]]: tensor<2xi64>
# NONPAD: %[[BOUNDS:.+]] = cleave.constant dense<{{\[\[}}1, 2, 3, 4, 5, 6]]> : tensor<1x6xi64>
# NONPAD: %[[NB:.+]] = cleave.unsqueeze %[[N]] {axes = array<i64: 1, 2, 3>} : (tensor<2xi64>) -> tensor<2x1x1x1xi64>
# NONPAD: %[[PAD:.+]] = cleave.less_equal %[[BOUNDS]], %[[NB]] : (tensor<1x6xi64>, tensor<2x1x1x1xi64>) -> tensor<2x1x1x6xi1>
# NONPAD: cleave.attention %{{.+}}, %{{.+}}, %{{.+}}, %[[PAD]] {kv_num_heads = 2 : i64, nan_to_zero, q_num_heads = 4 : i64, scale = {{.+}}} : ({{.+}}, tensor<2x1x1x6xi1>) -> tensor<2x4x3x8xf32>
# NONPAD: %[[CAUSAL:.+]] = cleave.constant dense<{{\[\[}}3, 4, 5, 6, 7, 8], [2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6]]> : tensor<3x6xi64>
# NONPAD: %[[VIS:.+]] = cleave.less_equal %[[CAUSAL]], %{{.+}} : (tensor<3x6xi64>, tensor<2x1x1x1xi64>) -> tensor<2x1x3x6xi1>
# NONPAD: cleave.attention {{.+}}, %[[VIS]] {kv_num_heads = 2 : i64, nan_to_zero, q_num_heads = 4 : i64, scale = {{.+}}}
# NONPAD-NOT: is_causal
# A boolean mask is and-ed with the visible keys, an additive one is -inf
# where a key is hidden.
# NONPAD: %[[AND:.+]] = cleave.and %{{.+}}, %{{.+}} : (tensor<3x6xi1>, tensor<2x1x1x6xi1>) -> tensor<2x1x3x6xi1>
# NONPAD: cleave.attention {{.+}}, %[[AND]] {{{.*}}nan_to_zero
# NONPAD: %[[NEGINF:.+]] = cleave.constant dense<0xFF800000> : tensor<f32>
# NONPAD: %[[ADD:.+]] = cleave.where %{{.+}}, %{{.+}}, %[[NEGINF]] : (tensor<2x1x1x6xi1>, tensor<3x6xf32>, tensor<f32>) -> tensor<2x1x3x6xf32>
# NONPAD: cleave.attention {{.+}}, %[[ADD]] {{{.*}}nan_to_zero
# NONPAD: return
#
# RUN: cleave-translate --import-onnx %t/short.onnx | FileCheck %s --check-prefix=SHORT
# A mask shorter than the 6 keys is padded with hidden keys: -inf for an
# additive mask, false for a boolean one.
# SHORT: %[[SHORT:.+]] = cleave.pad %{{.+}} {pads = array<i64: 0, 0, 0, 2>, value = 0xFFF0000000000000 : f64} : (tensor<3x4xf32>) -> tensor<3x6xf32>
# SHORT: cleave.where %{{.+}}, %[[SHORT]], %{{.+}} : (tensor<2x1x1x6xi1>, tensor<3x6xf32>, tensor<f32>) -> tensor<2x1x3x6xf32>
# SHORT: %[[SHORTB:.+]] = cleave.pad %{{.+}} {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 2>} : (tensor<2x1x3x4xi1>) -> tensor<2x1x3x6xi1>
# SHORT: %[[SHORTV:.+]] = cleave.and %[[SHORTB]], %{{.+}} : (tensor<2x1x3x6xi1>, tensor<2x1x1x6xi1>) -> tensor<2x1x3x6xi1>
# SHORT: cleave.attention %{{.+}}, %{{.+}}, %{{.+}}, %[[SHORTV]] {kv_num_heads = 2 : i64, nan_to_zero, q_num_heads = 4 : i64, scale = {{.+}}}
#
# A causal mask behind a past cache of 4 keys: query i sees keys j <= i + 4.
# RUN: cleave-translate --import-onnx %t/past-causal.onnx | FileCheck %s --check-prefix=PAST
# PAST: %[[VIS:.+]] = cleave.constant dense<{{\[\[}}true, true, true, true, true, false, false], [true, true, true, true, true, true, false], [true, true, true, true, true, true, true]]> : tensor<3x7xi1>
# PAST: cleave.attention {{.+}}, %[[VIS]] {kv_num_heads = 2 : i64, nan_to_zero, q_num_heads = 4 : i64, scale = {{.+}}} : (tensor<2x4x3x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x8xf32>, tensor<3x7xi1>) -> tensor<2x4x3x8xf32>
#
# qk_matmul_output: the scores of the grouped query heads (4 query heads
# over 2 key/value heads) in one product per key/value head, scaled, capped,
# masked, normalised and multiplied by the values. Mode 0 reads the scaled
# product, 1 the softcap, 2 the masks, 3 the softmax.
# RUN: cleave-translate --import-onnx %t/qk-mode0.onnx | FileCheck %s --check-prefixes=STEPS,MODE0
# RUN: cleave-translate --import-onnx %t/qk-mode1.onnx | FileCheck %s --check-prefixes=STEPS,MODE1
# RUN: cleave-translate --import-onnx %t/qk-mode2.onnx | FileCheck %s --check-prefixes=STEPS,MODE2
# RUN: cleave-translate --import-onnx %t/qk-mode3.onnx | FileCheck %s --check-prefixes=STEPS,MODE3
# STEPS-LABEL: func.func @main
# STEPS-SAME: (%[[Q:[^:]+]]: tensor<2x4x3x8xf32> {{.*}}, %[[K:[^:]+]]: tensor<2x2x5x8xf32> {{.*}}, %[[V:[^:]+]]: tensor<2x2x5x6xf32> {{.*}}, %[[M:[^:]+]]: tensor<3x5xf32>
# STEPS: %[[G:.+]] = cleave.reshape %[[Q]] : tensor<2x4x3x8xf32> -> tensor<2x2x6x8xf32>
# STEPS: %[[KT:.+]] = cleave.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x5x8xf32>) -> tensor<2x2x8x5xf32>
# STEPS: %[[P:.+]] = cleave.matmul %[[G]], %[[KT]] : (tensor<2x2x6x8xf32>, tensor<2x2x8x5xf32>) -> tensor<2x2x6x5xf32>
# STEPS: %[[S:.+]] = cleave.reshape %[[P]] : tensor<2x2x6x5xf32> -> tensor<2x4x3x5xf32>
# STEPS: %[[SCALE:.+]] = cleave.constant dense<0.353553385> : tensor<f32>
# STEPS: %[[SCALED:.+]] = cleave.mul %[[S]], %[[SCALE]] : (tensor<2x4x3x5xf32>, tensor<f32>) -> tensor<2x4x3x5xf32>
# STEPS: %[[CAP:.+]] = cleave.constant dense<2.000000e+00> : tensor<f32>
# STEPS: %[[R:.+]] = cleave.div %[[SCALED]], %[[CAP]]
# STEPS: %[[T:.+]] = cleave.tanh %[[R]]
# STEPS: %[[CAPPED:.+]] = cleave.mul %[[T]], %[[CAP]]
# STEPS: %[[MASKED:.+]] = cleave.add %[[CAPPED]], %[[M]] : (tensor<2x4x3x5xf32>, tensor<3x5xf32>) -> tensor<2x4x3x5xf32>
# STEPS: %[[W:.+]] = cleave.softmax %[[MASKED]] {axis = 3 : i64, nan_to_zero} : tensor<2x4x3x5xf32>
# STEPS: %[[WG:.+]] = cleave.reshape %[[W]] : tensor<2x4x3x5xf32> -> tensor<2x2x6x5xf32>
# STEPS: %[[YG:.+]] = cleave.matmul %[[WG]], %[[V]] : (tensor<2x2x6x5xf32>, tensor<2x2x5x6xf32>) -> tensor<2x2x6x6xf32>
# STEPS: %[[Y:.+]] = cleave.reshape %[[YG]] : tensor<2x2x6x6xf32> -> tensor<2x4x3x6xf32>
# STEPS-NOT: cleave.attention
# MODE0: return %[[Y]], %[[SCALED]] :
# MODE1: return %[[Y]], %[[CAPPED]] :
# MODE2: return %[[Y]], %[[MASKED]] :
# MODE3: return %[[Y]], %[[W]] :
#
# RUN: cleave compile %t/widened.onnx -o %t/widened.cleave --quiet
# RUN: cleave compile %t/swish.onnx -o %t/swish.cleave --quiet
# RUN: cleave compile %t/nonpad.onnx -o %t/nonpad.cleave --quiet
# RUN: cleave compile %t/short.onnx -o %t/short.cleave --quiet
# RUN: cleave compile %t/past-causal.onnx -o %t/past-causal.cleave --quiet
# RUN: cleave compile %t/hidden-rows.onnx -o %t/hidden-rows.cleave --quiet
# RUN: cleave compile %t/qk.onnx -o %t/qk.cleave --quiet
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC --implicit-check-not=MISMATCH
# NUMERIC: widened wide: ok
# NUMERIC: widened values: ok
# NUMERIC: widened indices: ok
# NUMERIC: widened shape: ok
# NUMERIC: widened size: ok
# NUMERIC: widened filled: ok
# NUMERIC: widened constant: ok
# NUMERIC: swish y_1: ok
# NUMERIC: swish y_half: ok
# NUMERIC: nonpad pad: ok
# NUMERIC: nonpad causal: ok
# NUMERIC: nonpad bool_mask_y: ok
# NUMERIC: nonpad float_mask_y: ok
# NUMERIC: nonpad pad3d: ok
# NUMERIC: past-causal y: ok
# NUMERIC: past-causal present_k: ok
# NUMERIC: hidden-rows bool_y: ok
# NUMERIC: hidden-rows float_y: ok
# NUMERIC: qk y0: ok
# NUMERIC: qk qk0: ok
# NUMERIC: qk y1: ok
# NUMERIC: qk qk1: ok
# NUMERIC: qk y2: ok
# NUMERIC: qk qk2: ok
# NUMERIC: qk y3: ok
# NUMERIC: qk qk3: ok
# NUMERIC: qk y_bool_causal: ok
# NUMERIC: qk qk2_bool_causal: ok
# NUMERIC: qk y_3d: ok
# NUMERIC: qk qk3_3d: ok
# NUMERIC: qk y_past: ok
# NUMERIC: qk present_k: ok
# NUMERIC: qk qk1_past: ok
# NUMERIC: short short_mask_y: ok
# NUMERIC: short short_bool_y: ok
#
# Errors, each naming the node or value and the offending type or input.
# RUN: not cleave-translate --import-onnx %t/e8m0-input.onnx 2>&1 | FileCheck %s --check-prefix=E8M0-INPUT
# E8M0-INPUT: e8m0-input.onnx:0:0: error: input 'x' has element type FLOAT8E8M0, which cleave does not support
# RUN: not cleave-translate --import-onnx %t/e8m0-cast.onnx 2>&1 | FileCheck %s --check-prefix=E8M0-CAST
# E8M0-CAST: e8m0-cast.onnx:0:0: error: node 'cast' (Cast): cast to FLOAT8E8M0 is not supported
# RUN: not cleave-translate --import-onnx %t/e8m0-constant.onnx 2>&1 | FileCheck %s --check-prefix=E8M0-CONSTANT
# E8M0-CONSTANT: e8m0-constant.onnx:0:0: error: node 'scales' (Constant): attribute 'value' has element type FLOAT8E8M0, which cleave does not support
# RUN: not cleave-translate --import-onnx %t/e8m0-fill.onnx 2>&1 | FileCheck %s --check-prefix=E8M0-FILL
# E8M0-FILL: e8m0-fill.onnx:0:0: error: node 'fill' (ConstantOfShape): attribute 'value' has element type FLOAT8E8M0, which cleave does not support
# RUN: not cleave-translate --import-onnx %t/swish-int.onnx 2>&1 | FileCheck %s --check-prefix=SWISH-INT
# SWISH-INT: swish-int.onnx:0:0: error: node 'swish' (Swish): Swish needs a float input, not 'i64'
# RUN: not cleave-translate --import-onnx %t/qk-mode.onnx 2>&1 | FileCheck %s --check-prefix=QK-MODE
# QK-MODE: qk-mode.onnx:0:0: error: node 'attn' (Attention): qk_matmul_output_mode must be 0, 1, 2 or 3, not 4
# RUN: not cleave-translate --import-onnx %t/qk-mask.onnx 2>&1 | FileCheck %s --check-prefix=QK-MASK
# QK-MASK: qk-mask.onnx:0:0: error: node 'attn' (Attention): attn_mask shape 3x2x4x3x5 does not broadcast to the scores 2x4x3x5
# RUN: not cleave-translate --import-onnx %t/nonpad-past.onnx 2>&1 | FileCheck %s --check-prefix=NONPAD-PAST
# NONPAD-PAST: nonpad-past.onnx:0:0: error: node 'attn' (Attention): input 6 (nonpad_kv_seqlen) describes a cache kept outside the node and cannot be combined with past_key and past_value
# RUN: not cleave-translate --import-onnx %t/nonpad-type.onnx 2>&1 | FileCheck %s --check-prefix=NONPAD-TYPE
# NONPAD-TYPE: nonpad-type.onnx:0:0: error: node 'attn' (Attention): input 6 (nonpad_kv_seqlen) must be a 1-D int64 tensor of one count per batch, not 'tensor<2xi32>'
# RUN: not cleave-translate --import-onnx %t/nonpad-opset23.onnx 2>&1 | FileCheck %s --check-prefix=NONPAD-23
# NONPAD-23: nonpad-opset23.onnx:0:0: error: node 'attn' (Attention): has 7 inputs, but Attention at opset 23 takes at most 6
# RUN: not cleave-translate --import-onnx %t/mask-int.onnx 2>&1 | FileCheck %s --check-prefix=MASK-INT
# MASK-INT: mask-int.onnx:0:0: error: node 'attn' (Attention): attn_mask must be boolean or of the query's float type, not 'i32'

import sys

import numpy as np
import onnx

from cleave.testing import GraphBuilder

E8M0 = 24  # onnx.TensorProto.FLOAT8E8M0, newer than the onnx the tests pin
work = sys.argv[2]
rng = np.random.default_rng(0)


def builder(opset=24):
    return GraphBuilder(opset=opset, ir_version=12 if opset >= 24 else 10)


def weight(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def build_widened():
    g = builder()
    x = g.input("x", [2, 3, 4])
    t = g.node("Transpose", [x], perm=[0, 2, 1])
    f = g.node("Flatten", [g.node("Identity", [t])], axis=1)
    r = g.node("Reshape", [f, g.const(np.array([2, 2, 6], np.int64))])
    u = g.node("Unsqueeze", [r, g.const(np.array([1], np.int64))])
    s = g.node("Squeeze", [u, g.const(np.array([1], np.int64))])
    p = g.node("Pad", [s, g.const(np.array([0, 0, 1, 0, 0, 1], np.int64))])
    g.output(g.node("Cast", [p], ["wide"], to=onnx.TensorProto.DOUBLE), [2, 2, 8], np.float64)
    g.node("TopK", [p, g.const(np.array([3], np.int64))], ["values", "indices"])
    g.output("values", [2, 2, 3])
    g.output("indices", [2, 2, 3], np.int64)
    g.output(g.node("Shape", [p], ["shape"]), [3], np.int64)
    g.output(g.node("Size", [p], ["size"]), [], np.int64)
    twos = g.node("ConstantOfShape", [g.node("Shape", [x])], value=np.array([2.0], np.float32))
    g.output(g.node("Add", [x, twos], ["filled"]), [2, 3, 4])
    g.output(g.node("Add", [x, g.node("Constant", [], value=weight(4))], ["constant"]), [2, 3, 4])
    g.save(f"{work}/widened.onnx")


def build_swish():
    g = builder()
    x = g.input("x", [3, 5])
    g.output(g.node("Swish", [x], ["y_1"]), [3, 5])
    g.output(g.node("Swish", [x], ["y_half"], alpha=0.5), [3, 5])
    g.save(f"{work}/swish.onnx")


QKV = {"q": [2, 4, 3, 8], "k": [2, 2, 6, 8], "v": [2, 2, 6, 8]}


def build_nonpad():
    g = builder()
    q, k, v = (g.input(n, s) for n, s in QKV.items())
    n = g.input("n", [2], np.int64)
    bool_mask = g.input("bool_mask", [3, 6], np.bool_)
    float_mask = g.input("float_mask", [3, 6])
    g.node("Attention", [q, k, v, "", "", "", n], ["pad"])
    g.node("Attention", [q, k, v, "", "", "", n], ["causal"], is_causal=1)
    g.node("Attention", [q, k, v, bool_mask, "", "", n], ["bool_mask_y"])
    g.node("Attention", [q, k, v, float_mask, "", "", n], ["float_mask_y"], softcap=3.0)
    q3 = g.input("q3", [2, 3, 32])
    k3 = g.input("k3", [2, 6, 16])
    g.node("Attention", [q3, k3, k3, "", "", "", n], ["pad3d"], q_num_heads=4, kv_num_heads=2)
    for name in ("pad", "causal", "bool_mask_y", "float_mask_y"):
        g.output(name, [2, 4, 3, 8])
    g.output("pad3d", [2, 3, 32])
    g.save(f"{work}/nonpad.onnx")

    # Masks shorter than the 6 keys, which onnxruntime refuses: its reference
    # reads the masks padded (with -inf, false) to the keys.
    for name, keys in (("short", 4), ("short-reference", 6)):
        g = builder()
        q, k, v = (g.input(n, s) for n, s in QKV.items())
        n = g.input("n", [2], np.int64)
        short_mask = g.input("short_mask", [3, keys])
        short_bool = g.input("short_bool", [2, 1, 3, keys], np.bool_)
        g.node("Attention", [q, k, v, short_mask, "", "", n], ["short_mask_y"])
        g.node("Attention", [q, k, v, short_bool, "", "", n], ["short_bool_y"])
        g.output("short_mask_y", [2, 4, 3, 8])
        g.output("short_bool_y", [2, 4, 3, 8])
        g.save(f"{work}/{name}.onnx")


def build_hidden_rows():
    # Opset 23's Attention with masks that hide every key of one query.
    g = builder(opset=23)
    q, k, v = (g.input(n, s) for n, s in QKV.items())
    hidden_bool = g.input("hidden_bool", [3, 6], np.bool_)
    hidden_float = g.input("hidden_float", [3, 6])
    g.node("Attention", [q, k, v, hidden_bool], ["bool_y"])
    g.node("Attention", [q, k, v, hidden_float], ["float_y"])
    g.output("bool_y", [2, 4, 3, 8])
    g.output("float_y", [2, 4, 3, 8])
    g.save(f"{work}/hidden-rows.onnx")


def build_past_causal():
    g = builder()
    q, k, v = (g.input(n, s) for n, s in {"q": [2, 4, 3, 8], "k": [2, 2, 3, 8],
                                          "v": [2, 2, 3, 8]}.items())
    pk = g.input("past_k", [2, 2, 4, 8])
    pv = g.input("past_v", [2, 2, 4, 8])
    g.node("Attention", [q, k, v, "", pk, pv], ["y", "present_k", "present_v"], is_causal=1)
    g.output("y", [2, 4, 3, 8])
    g.output("present_k", [2, 2, 7, 8])
    g.save(f"{work}/past-causal.onnx")


def build_qk():
    g = builder(opset=23)
    q = g.input("q", [2, 4, 3, 8])
    k = g.input("k", [2, 2, 5, 8])
    v = g.input("v", [2, 2, 5, 6])
    m = g.input("m", [3, 5])
    bm = g.input("bm", [2, 1, 3, 5], np.bool_)
    outputs = []
    for mode in range(4):
        names = [f"y{mode}", "", "", f"qk{mode}"]
        g.node("Attention", [q, k, v, m], names, softcap=2.0, qk_matmul_output_mode=mode)
        outputs += [(f"y{mode}", [2, 4, 3, 6]), (f"qk{mode}", [2, 4, 3, 5])]
    g.node("Attention", [q, k, v, bm], ["y_bool_causal", "", "", "qk2_bool_causal"],
           is_causal=1, qk_matmul_output_mode=2)
    outputs += [("y_bool_causal", [2, 4, 3, 6]), ("qk2_bool_causal", [2, 4, 3, 5])]
    q3 = g.input("q3", [2, 3, 32])
    k3 = g.input("k3", [2, 5, 16])
    g.node("Attention", [q3, k3, k3], ["y_3d", "", "", "qk3_3d"], q_num_heads=4,
           kv_num_heads=2, scale=0.25, qk_matmul_output_mode=3)
    outputs += [("y_3d", [2, 3, 32]), ("qk3_3d", [2, 4, 3, 5])]
    pk = g.input("pk", [2, 2, 4, 8])
    pv = g.input("pv", [2, 2, 4, 6])
    g.node("Attention", [q, k, v, "", pk, pv], ["y_past", "present_k", "present_v", "qk1_past"],
           is_causal=1, softcap=1.5, qk_matmul_output_mode=1)
    outputs += [("y_past", [2, 4, 3, 6]), ("present_k", [2, 2, 9, 8]),
                ("qk1_past", [2, 4, 3, 9])]
    for name, shape in outputs:
        g.output(name, shape)
    g.save(f"{work}/qk.onnx")


def build_qk_steps():
    for mode in range(4):
        g = builder(opset=23)
        q = g.input("q", [2, 4, 3, 8])
        k = g.input("k", [2, 2, 5, 8])
        v = g.input("v", [2, 2, 5, 6])
        m = g.input("m", [3, 5])
        g.node("Attention", [q, k, v, m], ["y", "", "", "qk"], softcap=2.0,
               qk_matmul_output_mode=mode)
        g.output("y", [2, 4, 3, 6])
        g.output("qk", [2, 4, 3, 5])
        g.save(f"{work}/qk-mode{mode}.onnx")


def save_error(name, build, opset=24):
    g = builder(opset)
    build(g)
    g.save(f"{work}/{name}.onnx")


def attention_error(name, inputs, outputs=("y",), opset=24, **attrs):
    def build(g):
        names = []
        for input_name, shape, *dtype in inputs:
            names.append(g.input(input_name, shape, *dtype) if shape is not None else "")
        g.node("Attention", names, list(outputs), name="attn", **attrs)
        for output in outputs:
            if output:
                g.output(output)
    save_error(name, build, opset)


def build_errors():
    save_error("e8m0-input", lambda g: g.output(g.node("Identity", [g.input("x", [4], E8M0)]),
                                                [4], E8M0))
    save_error("e8m0-cast", lambda g: g.output(
        g.node("Cast", [g.input("x", [4])], name="cast", to=E8M0), [4], E8M0))

    def e8m0_tensor(name, dims, raw):
        tensor = onnx.TensorProto(name=name, data_type=E8M0, dims=dims)
        tensor.raw_data = raw
        return tensor

    def e8m0_constant(g):
        value = e8m0_tensor("scales", [2], b"\x7f\x80")
        g.output(g.node("Constant", [], name="scales", value=value), [2], E8M0)
    save_error("e8m0-constant", e8m0_constant)

    def e8m0_fill(g):
        value = e8m0_tensor("fill_value", [1], b"\x7f")
        shape = g.const(np.array([2, 3], np.int64))
        g.output(g.node("ConstantOfShape", [shape], name="fill", value=value), [2, 3], E8M0)
    save_error("e8m0-fill", e8m0_fill)
    save_error("swish-int", lambda g: g.output(
        g.node("Swish", [g.input("x", [4], np.int64)], name="swish"), [4], np.int64))

    qkv = [("q", [2, 4, 3, 8]), ("k", [2, 2, 5, 8]), ("v", [2, 2, 5, 6])]
    attention_error("qk-mode", qkv, qk_matmul_output_mode=4)
    attention_error("qk-mask", qkv + [("m", [3, 2, 4, 3, 5])], ("y", "", "", "qk"))
    attention_error("nonpad-past", qkv + [("m", None), ("pk", [2, 2, 4, 8]), ("pv", [2, 2, 4, 6]),
                                          ("n", [2], np.int64)])
    attention_error("nonpad-type", qkv + [("m", None), ("pk", None), ("pv", None),
                                          ("n", [2], np.int32)])
    attention_error("nonpad-opset23", qkv + [("m", None), ("pk", None), ("pv", None),
                                             ("n", [2], np.int64)], opset=23)
    attention_error("mask-int", qkv + [("m", [3, 5], np.int32)])


# Inputs that are not drawn from N(0, 1): a batch with 4 valid keys and one
# with none, and masks.
FEEDS = {
    "n": np.array([4, 0], np.int64),
    "bool_mask": rng.random((3, 6)) > 0.3,
    "float_mask": rng.standard_normal((3, 6)).astype(np.float32),
    "bm": rng.random((2, 1, 3, 5)) > 0.4,
    "short_bool": rng.random((2, 1, 3, 4)) > 0.4,
    "m": rng.standard_normal((3, 5)).astype(np.float32),
}


FEEDS["short_bool"][..., 0] = True  # every query sees a key
# A query that sees no key: zeros, as onnxruntime computes it.
FEEDS["hidden_bool"] = rng.random((3, 6)) > 0.3
FEEDS["hidden_bool"][1] = False
FEEDS["hidden_float"] = rng.standard_normal((3, 6)).astype(np.float32)
FEEDS["hidden_float"][2] = -np.inf


def feed(info):
    if info.name in FEEDS:
        return FEEDS[info.name]
    shape = [d.dim_value for d in info.type.tensor_type.shape.dim]
    return rng.standard_normal(shape).astype(np.float32)


def agrees(got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind in "iub":
        return bool(np.array_equal(got, want))
    # onnxruntime writes the lowest float where a boolean or causal mask
    # hides a key in the mode-2 scores; the operator's definition (and
    # cleave) add -inf there.
    want = np.where(want == np.finfo(want.dtype).min, -np.inf, want)
    infinite = np.isinf(want)
    if not np.array_equal(np.isinf(got), infinite) or \
            not np.array_equal(got[infinite], want[infinite]):
        return False
    return bool(np.allclose(got[~infinite], want[~infinite], rtol=1e-4, atol=1e-5))


def check(name, reference=None):
    import onnxruntime as ort

    import cleave

    model = onnx.load(f"{work}/{name}.onnx")
    feeds = {i.name: feed(i) for i in model.graph.input}
    got = cleave.Session(f"{work}/{name}.cleave").run(feeds)
    if reference:
        model = onnx.load(f"{work}/{reference}.onnx")
        feeds = {i.name: pad_keys(feeds[i.name], i) for i in model.graph.input}
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for output, expected in zip(model.graph.output, want):
        verdict = "ok" if agrees(got[output.name], expected) else "MISMATCH"
        print(f"{name} {output.name}: {verdict}")


def pad_keys(value, info):
    """`value` padded along its last axis to the length `info` declares, with
    hidden keys (-inf, false)."""
    keys = info.type.tensor_type.shape.dim[-1].dim_value
    if value.ndim == 0 or value.shape[-1] == keys:
        return value
    widths = [(0, 0)] * (value.ndim - 1) + [(0, keys - value.shape[-1])]
    hidden = False if value.dtype == np.bool_ else -np.inf
    return np.pad(value, widths, constant_values=hidden)


if sys.argv[1] == "build":
    build_widened()
    build_swish()
    build_nonpad()
    build_past_causal()
    build_hidden_rows()
    build_qk()
    build_qk_steps()
    build_errors()
else:
    for name in ("widened", "swish", "nonpad", "past-causal", "hidden-rows", "qk"):
        check(name)
    check("short", reference="short-reference")
