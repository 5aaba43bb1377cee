# Scaled dot-product attention with a boolean mask, as torch 2's exporters
# write it: masked scores are -inf and where(is_nan(softmax), 0, softmax)
# turns a fully masked row into zeros. cleave folds the guard into the
# softmax (nan_to_zero), whose kernel zeroes the row; the compiled bundle
# agrees with onnxruntime (rtol 1e-5, atol 1e-6), fully masked rows
# included, on the last axis and on an inner one. Written as torch 2's
# exporters write SDPA (q and k^T scaled by the square root of the scale
# each, the mask added as 0 / -inf), the whole attention is fused into
# cleave.attention, whose nan_to_zero zeroes the same rows.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave-opt --cleave-simplify %t/model.mlir | FileCheck %s --check-prefix=IR
# IR: cleave.softmax %{{.+}} {axis = 3 : i64, nan_to_zero} : tensor<2x2x4x4xf32>
# IR: cleave.softmax %{{.+}} {axis = 1 : i64, nan_to_zero} : tensor<2x4x3xf32>
# IR: cleave.attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {kv_num_heads = 2 : i64, nan_to_zero, q_num_heads = 2 : i64, scale = 0.353553{{[0-9]*}} : f32}
# IR-NOT: cleave.is_nan
# IR-NOT: cleave.softmax
# The softmax kernel is called with ints {axis, nan_to_zero}, and no NaN
# test is left in the program.
# RUN: cleave compile %t/model.onnx -o %t/model.cleave --quiet
# RUN: FileCheck %s --check-prefixes=CALL,CPP < %t/model.cleave/programs/stage_0.cpp
# CALL-LABEL: // 2: softmax (Softmax_3)
# CALL: static const int64_t ints[] = {3, 1};
# CPP: cleave_cpu_softmax(
# CUDA: cleave_cuda_softmax(
# CALL-LABEL: // 4: softmax (Softmax_7)
# CALL: static const int64_t ints[] = {1, 1};
# CPP: cleave_cpu_softmax(
# CUDA: cleave_cuda_softmax(
# CALL-NOT: is_nan
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: attention: max abs error {{.*}}, fully masked rows zero: ok
# NUMERIC: columns: max abs error {{.*}}, fully masked rows zero: ok
# NUMERIC: fused: max abs error {{.*}}, fully masked rows zero: ok
#
# The CUDA kernel takes the same flag.
# RUN: cleave compile %t/model.onnx -o %t/cuda.cleave --target h100-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefixes=CALL,CUDA < %t/cuda.cleave/programs/stage_0.cu

import subprocess
import sys

import numpy as np

from cleave.testing import GraphBuilder

work = sys.argv[2]
rng = np.random.default_rng(0)
Q = rng.standard_normal((2, 2, 4, 8)).astype(np.float32)
K = rng.standard_normal((2, 2, 8, 4)).astype(np.float32)
V = rng.standard_normal((2, 2, 4, 8)).astype(np.float32)
MASK = rng.random((2, 1, 4, 4)) > 0.4
MASK[0, 0, 1, :] = False  # a fully masked query
MASK[1, 0, 3, :] = False
# Softmax over axis 1 of a 2x4x3 tensor: column (0, :, 2) is all -inf.
C = rng.standard_normal((2, 4, 3)).astype(np.float32)
C[0, :, 2] = -np.inf
C[1, 1:, 0] = -np.inf
# Keys as batch x heads x sequence x head_size, for the fused form.
KEYS = rng.standard_normal((2, 2, 4, 8)).astype(np.float32)
FEEDS = {"q": Q, "k": K, "v": V, "mask": MASK, "c": C, "keys": KEYS}


def guarded_softmax(g, x, axis):
    s = g.node("Softmax", [x], axis=axis)
    return g.node("Where", [g.node("IsNaN", [s]), g.const(np.float32(0)), s])


if sys.argv[1] == "build":
    g = GraphBuilder(opset=17)
    q = g.input("q", list(Q.shape))
    k = g.input("k", list(K.shape))
    v = g.input("v", list(V.shape))
    mask = g.input("mask", list(MASK.shape), np.bool_)
    c = g.input("c", list(C.shape))
    scores = g.node("Mul", [g.node("MatMul", [q, k]),
                            g.const(np.float32(1 / np.sqrt(8)))])
    scores = g.node("Where", [mask, scores, g.const(np.float32(-np.inf))])
    g.output(g.node("MatMul", [guarded_softmax(g, scores, -1), v]), None)
    g.output(guarded_softmax(g, c, 1), None)
    keys = g.input("keys", list(KEYS.shape))
    root = g.const(np.float32(8 ** -0.25))
    scores = g.node("MatMul", [
        g.node("Mul", [q, root]),
        g.node("Mul", [g.node("Transpose", [keys], perm=[0, 1, 3, 2]), root])])
    bias = g.node("Where", [mask, g.const(np.float32(0)),
                            g.const(np.float32(-np.inf))])
    scores = g.node("Add", [scores, bias])
    g.output(g.node("MatMul", [guarded_softmax(g, scores, -1), v]), None)
    g.save(f"{work}/model.onnx")
    with open(f"{work}/model.mlir", "w") as f:
        subprocess.run(["cleave-translate", "--import-onnx", f"{work}/model.onnx"],
                       stdout=f, check=True)
else:
    import onnxruntime as ort

    import cleave

    got = cleave.Session(f"{work}/model.cleave").run(FEEDS)
    session = ort.InferenceSession(f"{work}/model.onnx")
    names = [o.name for o in session.get_outputs()]
    rows = {"attention": [(0, 0, 1), (0, 1, 1), (1, 0, 3), (1, 1, 3)],
            "columns": [(0, slice(None), 2)],
            "fused": [(0, 0, 1), (0, 1, 1), (1, 0, 3), (1, 1, 3)]}
    for label, name, want in zip(rows, names, session.run(None, FEEDS)):
        error = float(np.abs(got[name] - want).max())
        ok = (got[name].shape == want.shape and not np.isnan(got[name]).any()
              and np.allclose(got[name], want, rtol=1e-5, atol=1e-6))
        zero = all(np.all(got[name][r] == 0) for r in rows[label])
        verdict = "ok" if ok and zero else "MISMATCH"
        print(f"{label}: max abs error {error:.2e}, fully masked rows zero: {verdict}")
