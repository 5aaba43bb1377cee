# Casts to bfloat16 and float16 that a fused loop computes (the values stay
# floats there, as cleave-mixed-precision's round trips leave them): each
# element must be the nearest low-precision number, ties to even, as a
# float, for both emitters' cl::round_bf16 and cl::round_f16. Inputs: ties
# between neighbours (both directions of "even"), values just off a tie,
# float16 subnormals and the smallest ones, the overflow boundaries
# (65504 and 65520 for float16, the largest float32 for bfloat16), zeros of
# both signs, infinities, NaN, and random values over many binades. The
# references are independent of the kernels' bit arithmetic: numpy's own
# float16 conversion, and for bfloat16 the nearer of the two bfloat16
# numbers that bracket the value (the lower by truncation), even on ties.
# Compared exactly (bit patterns; NaN as NaN).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# CHECK: bf16 ok
# CHECK: f16 ok

import sys

import numpy as np
from onnx import TensorProto

import cleave
from cleave.testing import GraphBuilder

work = sys.argv[1]


def bf16_reference(x):
    """The bfloat16 nearest each float32 of `x`, as float32."""
    out = np.empty_like(x)
    for i, value in enumerate(x):
        if np.isnan(value) or np.isinf(value):
            out[i] = value
            continue
        bits = np.array([value], np.float32).view(np.uint32)[0]
        low_bits = bits & np.uint32(0xFFFF0000)
        low = np.array([low_bits], np.uint32).view(np.float32)[0]
        # The next bfloat16 away from zero (may be infinity).
        high = np.array([low_bits + np.uint32(0x10000)],
                        np.uint32).view(np.float32)[0]
        # Past the largest bfloat16, IEEE rounds as if the exponent went
        # on: the next number would be 2^128, and infinity takes its place.
        next_up = 2.0**128 * np.sign(value) if np.isinf(high) else high
        below = abs(np.float64(value) - np.float64(low))
        above = abs(np.float64(next_up) - np.float64(value))
        if below < above or (below == above and (low_bits >> 16) % 2 == 0):
            out[i] = low
        else:
            out[i] = high
    return out


def f16_reference(x):
    with np.errstate(over="ignore"):
        return x.astype(np.float16).astype(np.float32)


def inputs():
    f32 = np.float32
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0,
               # bfloat16 ties: 1 + 2^-8 lies between 1 and 1 + 2^-7 (to 1,
               # even); 1 + 3 * 2^-8 between 1 + 2^-7 and 1 + 2^-6 (up).
               1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 3 * 2.0**-8),
               1 + 2.0**-8 + 2.0**-23, 1 + 2.0**-8 - 2.0**-23,
               # float16 ties: 1 + 2^-11 (to 1), 1 + 3 * 2^-11 (up).
               1 + 2.0**-11, 1 + 3 * 2.0**-11, 2049.0, 2051.0,
               # float16 subnormals, the smallest and half of it (a tie to 0).
               2.0**-24, 2.0**-25, 3 * 2.0**-25, 1.5 * 2.0**-24, 2.0**-14,
               2.0**-14 - 2.0**-25, 6.0e-6, -6.0e-6,
               # float16 overflow: 65504 is the largest, 65520 rounds up.
               65504.0, 65519.0, 65520.0, 65536.0, -65520.0,
               # bfloat16 overflow: the largest float32 rounds to infinity.
               3.3895313e38, np.finfo(f32).max, -np.finfo(f32).max,
               np.finfo(f32).tiny, 1e-40]
    rng = np.random.default_rng(7)
    random = rng.standard_normal(4000) * np.exp2(rng.integers(-30, 30, 4000))
    return np.concatenate([np.array(special), random]).astype(f32)


x = inputs()
g = GraphBuilder(opset=17)
g.input("x", [x.size])
for name, to in [("bf16", TensorProto.BFLOAT16), ("f16", TensorProto.FLOAT16)]:
    narrow = g.node("Cast", ["x"], to=to)
    g.node("Cast", [narrow], [name], to=TensorProto.FLOAT)
    g.output(name, [x.size])
g.save(f"{work}/casts.onnx")
bundle = cleave.compile(f"{work}/casts.onnx", f"{work}/bundle")
with open(f"{work}/bundle/programs/stage_0.cpp") as f:
    source = f.read()
assert "cl::round_bf16(" in source and "cl::round_f16(" in source
got = cleave.Session(bundle).run({"x": x})
for name, reference in [("bf16", bf16_reference), ("f16", f16_reference)]:
    want = reference(x)
    same = (got[name].view(np.uint32) == want.view(np.uint32)) | (
        np.isnan(got[name]) & np.isnan(want))
    if same.all():
        print(name, "ok")
    else:
        bad = np.flatnonzero(~same)[:5]
        print(name, "MISMATCH", [(float(x[i]), float(got[name][i]),
                                  float(want[i])) for i in bad])
