# IsNaN, IsInf, Sign, Round, Floor, Ceil, Sin, Cos and Mod run in generated
# loops (rt/Scalar.h) and agree with onnxruntime on special values: NaN,
# infinities, signed zeros, halfway cases (Round takes them to even), tiny
# and huge values, and remainders of every sign combination. Where
# onnxruntime gives no answer (Mod with fmod 0 on floats, which it refuses
# before opset 28; an integer remainder by zero or MIN mod -1, which C
# leaves undefined) the programs agree with numpy and with cleave's folds: x
# mod 0 is 0 and MIN mod -1 is 0 for integers, x mod 0 is NaN for floats.
# Comparisons are exact (NaN equals NaN, and the sign of a zero counts),
# except Sin and Cos (rtol 1e-6, atol 1e-7).
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave compile %t/ort.onnx -o %t/ort.cleave --quiet
# RUN: cleave compile %t/numpy.onnx -o %t/numpy.cleave --quiet
# RUN: FileCheck %s --check-prefix=CPP < %t/ort.cleave/programs/stage_0.cpp
# CPP-DAG: cl::is_nan(v{{[0-9]+}})
# CPP-DAG: cl::is_inf(v{{[0-9]+}})
# CPP-DAG: cl::is_pos_inf(v{{[0-9]+}})
# CPP-DAG: cl::is_neg_inf(v{{[0-9]+}})
# CPP-DAG: cl::round(v{{[0-9]+}})
# CPP-DAG: cl::sign(v{{[0-9]+}})
# CPP-DAG: cl::fmod(v{{[0-9]+}}, v{{[0-9]+}})
# CPP-DAG: cl::mod(v{{[0-9]+}}, v{{[0-9]+}})
# RUN: %python %s check %t | FileCheck %s --check-prefix=CHECK
# CHECK: ort: 27 outputs agree
# CHECK: numpy: 6 outputs agree
#
# The CUDA program calls the same functions.
# RUN: cleave compile %t/ort.onnx -o %t/cuda.cleave --target h100-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=CUDA < %t/cuda.cleave/programs/stage_0.cu
# CUDA-DAG: cl::is_nan(v{{[0-9]+}})
# CUDA-DAG: cl::round(v{{[0-9]+}})
# CUDA-DAG: cl::mod(v{{[0-9]+}}, v{{[0-9]+}})
# RUN: %if cuda %{ cleave compile %t/ort.onnx -o %t/cuda-built.cleave --target h100-sxm --quiet %}

import sys

import numpy as np

from cleave.testing import GraphBuilder

work = sys.argv[2]
INT32_MIN = np.iinfo(np.int32).min
INT64_MIN = np.iinfo(np.int64).min

# Floats: special values, halfway cases (4194304.5 is the largest float32
# halfway case below 2^23), tiny and huge values.
X = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 1.5,
              -1.5, 2.5, -2.5, 3.7, -3.7, 1e-30, -1e-30, 3e38, -3e38,
              4194304.5, -4194303.5, 1e-45, 7.0, -7.0, 0.49999997],
             np.float32)
# Remainder operands: each sign combination, zeros of both signs,
# infinities, NaN, and a dividend tiny against its divisor.
A = np.array([5.5, -5.5, 5.5, -5.5, 6.0, -6.0, -0.0, 0.0, np.inf, 5.0, -5.0,
              np.nan, 5.0, -1e-30, 1e-30, 7.25], np.float32)
B = np.array([2.0, 2.0, -2.0, -2.0, 3.0, -3.0, 3.0, -3.0, 2.0, np.inf,
              np.inf, 1.0, np.nan, 1.0, -1.0, 0.5], np.float32)
# Integer remainders ONNX defines: every sign combination, |a| < |b|.
I = np.array([7, -7, 7, -7, 6, -6, 2, -2, 0, INT32_MIN, INT32_MIN + 1],
             np.int32)
J = np.array([3, 3, -3, -3, 3, 3, 5, 5, -4, 7, -2], np.int32)
K = np.array([9, -9, 9, -9, INT64_MIN, INT64_MIN], np.int64)
L = np.array([4, 4, -4, -4, 3, -3], np.int64)
S8 = np.array([-128, 127, -7, 7, 0], np.int8)
T8 = np.array([3, -3, 2, -2, 1], np.int8)
U8 = np.array([250, 7, 0, 255], np.uint8)
V8 = np.array([7, 250, 3, 16], np.uint8)
# Undefined in C: a zero divisor, MIN mod -1.
Z = np.array([7, -7, 0, INT32_MIN, INT32_MIN, 5], np.int32)
W = np.array([0, 0, 0, -1, 0, -1], np.int32)

INPUTS = {"x": X, "x64": X.astype(np.float64), "a": A, "b": B,
          "i": I, "j": J, "k": K, "l": L, "s8": S8, "t8": T8, "u8": U8,
          "v8": V8}
NUMPY_INPUTS = {"a": A, "b": B, "a64": A.astype(np.float64),
                "b64": B.astype(np.float64), "z": Z, "w": W}


def build_ort(path):
    g = GraphBuilder(opset=17)
    v = {n: g.input(n, list(a.shape), a.dtype) for n, a in INPUTS.items()}
    outputs = [
        (g.node("IsNaN", [v["x"]]), np.bool_),
        (g.node("IsInf", [v["x"]]), np.bool_),
        (g.node("IsInf", [v["x"]], detect_negative=0), np.bool_),
        (g.node("IsInf", [v["x"]], detect_positive=0), np.bool_),
        (g.node("IsInf", [v["x"]], detect_positive=0, detect_negative=0),
         np.bool_),
        (g.node("IsNaN", [v["x64"]]), np.bool_),
        (g.node("Sign", [v["x"]]), np.float32),
        (g.node("Round", [v["x"]]), np.float32),
        (g.node("Floor", [v["x"]]), np.float32),
        (g.node("Ceil", [v["x"]]), np.float32),
        (g.node("Sin", [v["x"]]), np.float32),
        (g.node("Cos", [v["x"]]), np.float32),
        (g.node("Round", [v["x64"]]), np.float64),
        (g.node("Sign", [v["x64"]]), np.float64),
        # Rounding inside a fused chain: Round(x * 0.5) + Sign(x).
        (g.node("Add", [g.node("Round", [g.node("Mul", [v["x"], g.const(np.float32(0.5))])]),
                        g.node("Sign", [v["x"]])]), np.float32),
        (g.node("Mod", [v["a"], v["b"]], fmod=1), np.float32),
        (g.node("Mod", [v["a"], g.const(np.float32(-2.5))], fmod=1), np.float32),
        (g.node("Mod", [g.node("Cast", [v["a"]], to=11),
                        g.node("Cast", [v["b"]], to=11)], fmod=1), np.float64),
        (g.node("Mod", [v["i"], v["j"]]), np.int32),
        (g.node("Mod", [v["i"], v["j"]], fmod=1), np.int32),
        (g.node("Mod", [v["k"], v["l"]]), np.int64),
        (g.node("Mod", [v["k"], v["l"]], fmod=1), np.int64),
        (g.node("Mod", [v["s8"], v["t8"]]), np.int8),
        (g.node("Mod", [v["s8"], v["t8"]], fmod=1), np.int8),
        (g.node("Mod", [v["u8"], v["v8"]]), np.uint8),
        (g.node("Sign", [v["i"]]), np.int32),
        (g.node("Sign", [v["u8"]]), np.uint8),
    ]
    for value, dtype in outputs:
        g.output(value, None, dtype)
    g.save(path)


def build_numpy(path):
    g = GraphBuilder(opset=17)
    v = {n: g.input(n, list(a.shape), a.dtype)
         for n, a in NUMPY_INPUTS.items()}
    outputs = [
        (g.node("Mod", [v["a"], v["b"]]), np.float32),
        (g.node("Mod", [v["a"], g.const(np.float32(0.0))]), np.float32),
        (g.node("Mod", [v["a64"], v["b64"]]), np.float64),
        (g.node("Mod", [v["z"], v["w"]]), np.int32),
        (g.node("Mod", [v["z"], v["w"]], fmod=1), np.int32),
        (g.node("Div", [v["z"], v["w"]]), np.int32),
    ]
    for value, dtype in outputs:
        g.output(value, None, dtype)
    g.save(path)


def numpy_expected():
    with np.errstate(all="ignore"):
        return [np.mod(A, B), np.mod(A, np.float32(0)),
                np.mod(A.astype(np.float64), B.astype(np.float64)),
                np.array([0, 0, 0, 0, 0, 0], np.int32),
                np.array([0, 0, 0, 0, 0, 0], np.int32),
                # cl::div: x / 0 is 0, MIN / -1 is MIN; a = b * q + r
                # does not hold at a zero divisor, as in numpy.
                np.array([0, 0, 0, INT32_MIN, 0, -5], np.int32)]


def same(got, want, name):
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{name}: {got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)}"
    if name in ("Sin", "Cos"):
        ok = np.allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True)
    elif want.dtype.kind == "f":
        ok = all((np.isnan(g) and np.isnan(w)) or
                 (g == w and np.signbit(g) == np.signbit(w))
                 for g, w in zip(got.ravel(), want.ravel()))
    else:
        ok = np.array_equal(got, want)
    return None if ok else f"{name}: got {got.tolist()}, expected {want.tolist()}"


def check():
    import onnx
    import onnxruntime as ort

    import cleave

    for label, feeds, expected in (("ort", INPUTS, None),
                                   ("numpy", NUMPY_INPUTS, numpy_expected())):
        model = onnx.load(f"{work}/{label}.onnx")
        ops = [next(n.op_type for n in reversed(model.graph.node)
                    if o.name in n.output) for o in model.graph.output]
        names = [o.name for o in model.graph.output]
        got = cleave.Session(f"{work}/{label}.cleave").run(feeds)
        if expected is None:
            session = ort.InferenceSession(f"{work}/{label}.onnx")
            expected = session.run(names, feeds)
        problems = [p for p in (same(got[n], w, op) for n, w, op
                                in zip(names, expected, ops)) if p]
        for p in problems:
            print(f"{label}: MISMATCH {p}")
        if not problems:
            print(f"{label}: {len(names)} outputs agree")


if sys.argv[1] == "build":
    build_ort(f"{work}/ort.onnx")
    build_numpy(f"{work}/numpy.onnx")
else:
    check()
