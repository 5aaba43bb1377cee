# TopK, ArgMax/ArgMin, CumSum and Einsum compiled for the CPU agree with
# onnxruntime: ties (equal elements in input order), NaN (above every number
# in TopK; in ArgMax/ArgMin only where it comes first in its line), the
# smallest elements along an inner axis, exclusive and reversed sums,
# int64 inputs (wrapping sums), and Einsum in float32 and float64.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave compile %t/model.onnx -o %t/model.cleave --quiet
# RUN: FileCheck %s --check-prefix=CPP < %t/model.cleave/programs/stage_0.cpp
# CPP-DAG: cleave_cpu_topk(
# CPP-DAG: cleave_cpu_arg_max(
# CPP-DAG: cleave_cpu_arg_min(
# CPP-DAG: cleave_cpu_cumsum(
# CPP-DAG: cleave_cpu_matmul(
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: top: exact ok
# NUMERIC: top_i: exact ok
# NUMERIC: low: exact ok
# NUMERIC: low_i: exact ok
# NUMERIC: ntop: exact ok
# NUMERIC: ntop_i: exact ok
# NUMERIC: amax: exact ok
# NUMERIC: amax_last: exact ok
# NUMERIC: amin: exact ok
# NUMERIC: amin_last: exact ok
# NUMERIC: namax: exact ok
# NUMERIC: cs: within 1e-05 ok
# NUMERIC: cs_rev_excl: within 1e-05 ok
# NUMERIC: ncs: exact ok
# NUMERIC: ncs_excl_rev: exact ok
# NUMERIC: scores: within 1e-05 ok
# NUMERIC: bmm64: within 1e-12 ok
# NUMERIC: outer64: within 1e-12 ok
# NUMERIC-NOT: MISMATCH
#
# The CUDA program calls the same kernels of the CUDA library; where nvcc
# is found it builds.
# RUN: cleave compile %t/model.onnx -o %t/cuda.cleave --target h100-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=CUDA < %t/cuda.cleave/programs/stage_0.cu
# CUDA-DAG: cleave_cuda_topk(
# CUDA-DAG: cleave_cuda_arg_max(
# CUDA-DAG: cleave_cuda_cumsum(
# RUN: %if cuda %{ cleave compile %t/model.onnx -o %t/cuda-built.cleave --target h100-sxm --quiet %}

import sys

import numpy as np

from cleave.testing import GraphBuilder

work = sys.argv[2]


def inputs():
    rng = np.random.default_rng(0)
    # Few distinct values, so lines have ties; NaN first, inside and last.
    x = rng.integers(0, 4, (4, 7)).astype(np.float32)
    x[0, 0] = np.nan
    x[1, 3] = np.nan
    x[2, 6] = np.nan
    x[3, 2] = x[3, 5] = np.nan
    n = rng.integers(-3, 4, (3, 6)).astype(np.int64)
    n[0, 0] = np.iinfo(np.int64).max  # the sums wrap around
    return {
        "x": x,
        "f": rng.standard_normal((3, 8)).astype(np.float32),
        "n": n,
        "q": rng.standard_normal((2, 3, 5, 4)).astype(np.float32),
        "k": rng.standard_normal((2, 3, 6, 4)).astype(np.float32),
        "d": rng.standard_normal((5, 2, 3)),
        "e": rng.standard_normal((5, 3, 4)),
        "u": rng.standard_normal((4,)),
    }


if sys.argv[1] == "build":
    g = GraphBuilder(opset=18)
    x = g.input("x", [4, 7])
    f = g.input("f", [3, 8])
    n = g.input("n", [3, 6], np.int64)
    q = g.input("q", [2, 3, 5, 4])
    k = g.input("k", [2, 3, 6, 4])
    d = g.input("d", [5, 2, 3], np.float64)
    e = g.input("e", [5, 3, 4], np.float64)
    u = g.input("u", [4], np.float64)
    g.node("TopK", [x, g.const([5], dtype=np.int64)], outputs=["top", "top_i"])
    g.node("TopK", [x, g.const([3], dtype=np.int64)], outputs=["low", "low_i"],
           axis=0, largest=0)
    g.node("TopK", [n, g.const([4], dtype=np.int64)], outputs=["ntop", "ntop_i"])
    g.node("ArgMax", [x], outputs=["amax"], axis=1)
    g.node("ArgMax", [x], outputs=["amax_last"], axis=1, keepdims=0,
           select_last_index=1)
    g.node("ArgMin", [x], outputs=["amin"], axis=0, keepdims=0)
    g.node("ArgMin", [x], outputs=["amin_last"], axis=-1, select_last_index=1)
    g.node("ArgMax", [n], outputs=["namax"], axis=0)
    g.node("CumSum", [f, g.const(1, dtype=np.int64)], outputs=["cs"])
    g.node("CumSum", [f, g.const(0, dtype=np.int32)], outputs=["cs_rev_excl"],
           exclusive=1, reverse=1)
    g.node("CumSum", [n, g.const(-1, dtype=np.int64)], outputs=["ncs"])
    g.node("CumSum", [n, g.const(0, dtype=np.int64)], outputs=["ncs_excl_rev"],
           exclusive=1, reverse=1)
    g.node("Einsum", [q, k], outputs=["scores"], equation="bhqd,bhkd->bhqk")
    g.node("Einsum", [d, e], outputs=["bmm64"], equation="bij, bjk -> bik")
    g.node("Einsum", [d, u], outputs=["outer64"], equation="bij,k->bkji")
    for name in ("top", "top_i", "low", "low_i", "ntop", "ntop_i", "amax",
                 "amax_last", "amin", "amin_last", "namax", "cs",
                 "cs_rev_excl", "ncs", "ncs_excl_rev", "scores", "bmm64",
                 "outer64"):
        g.output(name)
    g.declare_reference_shapes()
    g.save(f"{work}/model.onnx")
else:
    import onnxruntime as ort

    import cleave

    feeds = inputs()
    got = cleave.Session(f"{work}/model.cleave").run(feeds)
    session = ort.InferenceSession(f"{work}/model.onnx")
    names = [o.name for o in session.get_outputs()]
    tolerances = {"cs": 1e-5, "cs_rev_excl": 1e-5, "scores": 1e-5,
                  "bmm64": 1e-12, "outer64": 1e-12}
    for name, want in zip(names, session.run(None, feeds)):
        have = np.asarray(got[name])
        same = have.shape == want.shape and have.dtype == want.dtype
        if name in tolerances:
            tol = tolerances[name]
            ok = same and np.allclose(have, want, rtol=tol, atol=tol)
            print(f"{name}: within {tol:g} {'ok' if ok else 'MISMATCH'}")
        else:
            ok = same and np.array_equal(have, want, equal_nan=True)
            print(f"{name}: exact {'ok' if ok else 'MISMATCH'}")
        if not ok:
            print(f"  cleave {have.dtype}{list(have.shape)}:\n{have}")
            print(f"  onnxruntime {want.dtype}{list(want.shape)}:\n{want}")
