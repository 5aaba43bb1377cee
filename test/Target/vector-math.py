# Fused loops that call exp, erf, tanh or log vectorise: the program calls the
# vector forms of the math library (rt/VectorMath.h; _ZGVdN8v_expf takes
# eight floats in a ymm register, _ZGVeN16v_expf sixteen in a zmm one)
# for the instruction set it is built for, and the results are within
# 1e-6 + 1e-5 * |y| of the functions computed in double precision. SiLU is
# x * sigmoid(x) (sigmoid = 1 / (1 + exp(-x))), GELU the erf form and the
# tanh form, and log(1 + x^2) the logarithm.
#
# GCC reads the vector forms from rt/VectorMath.h; Clang from
# -fveclib=libmvec, which `cleave compile` gives it, and whose table has
# exp and log but not erf or tanh, and no AVX-512 forms: the exp and log
# loops of a program Clang builds call the AVX2 forms at both levels
# (CLANG-*, the default compiler where that is Clang, and --cxx clang++
# where Clang is installed). In a sanitized build the programs are not
# vectorised at all (UBSan's pointer-overflow and alignment checks in
# every loop keep Clang from it), and only the results are checked.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave compile %t/model.onnx -o %t/v3.cleave --march x86-64-v3 --quiet
# RUN: cleave compile %t/model.onnx -o %t/v4.cleave --march x86-64-v4 --quiet
# RUN: %if !sanitizer && !program-cxx-clang %{ objdump -d %t/v3.cleave/programs/stage_0.so | FileCheck %s --check-prefix=V3 %}
# RUN: %if !sanitizer && !program-cxx-clang %{ objdump -d %t/v4.cleave/programs/stage_0.so | FileCheck %s --check-prefix=V4 %}
# RUN: %if !sanitizer && program-cxx-clang %{ objdump -d %t/v3.cleave/programs/stage_0.so | FileCheck %s --check-prefix=CLANG-V3 %}
# RUN: %if !sanitizer && program-cxx-clang %{ objdump -d %t/v4.cleave/programs/stage_0.so | FileCheck %s --check-prefix=CLANG-V4 %}
# V3-DAG: call {{.*}}<_ZGVdN8v_expf@plt>
# V3-DAG: call {{.*}}<_ZGVdN8v_erff@plt>
# V3-DAG: call {{.*}}<_ZGVdN8v_tanhf@plt>
# V3-DAG: call {{.*}}<_ZGVdN8v_logf@plt>
# V4-DAG: call {{.*}}<_ZGVeN16v_expf@plt>
# V4-DAG: call {{.*}}<_ZGVeN16v_erff@plt>
# V4-DAG: call {{.*}}<_ZGVeN16v_tanhf@plt>
# V4-DAG: call {{.*}}<_ZGVeN16v_logf@plt>
# RUN: %if clang && !sanitizer %{ cleave compile %t/model.onnx -o %t/clang-v3.cleave --march x86-64-v3 --cxx %clangxx --quiet %}
# RUN: %if clang && !sanitizer %{ objdump -d %t/clang-v3.cleave/programs/stage_0.so | FileCheck %s --check-prefix=CLANG-V3 %}
# RUN: %if clang && !sanitizer %{ cleave compile %t/model.onnx -o %t/clang-v4.cleave --march x86-64-v4 --cxx %clangxx --quiet %}
# RUN: %if clang && !sanitizer %{ objdump -d %t/clang-v4.cleave/programs/stage_0.so | FileCheck %s --check-prefix=CLANG-V4 %}
# CLANG-V3-DAG: call {{.*}}<_ZGVdN8v_expf@plt>
# CLANG-V3-DAG: call {{.*}}<_ZGVdN8v_logf@plt>
# CLANG-V4-DAG: call {{.*}}<_ZGVdN8v_expf@plt>
# CLANG-V4-DAG: call {{.*}}<_ZGVdN8v_logf@plt>
# RUN: %if cpu-x86-64-v4 %{ %python %s check %t/v4.cleave %t | FileCheck %s --check-prefix=NUMERIC %}
# RUN: %if clang && !sanitizer %{ %python %s check %t/clang-v3.cleave %t | FileCheck %s --check-prefix=NUMERIC %}
# RUN: %if clang && !sanitizer && cpu-x86-64-v4 %{ %python %s check %t/clang-v4.cleave %t | FileCheck %s --check-prefix=NUMERIC %}
#
# A long program's last loops vectorise as well as its first: late.onnx runs
# 60 softmax kernels, then GELU. Every kernel call's failure branch returns
# through the cold cleave_rt_failed; were each branch a guess, GCC would
# take the code after dozens of them as rarely run, build it for size and
# call only the scalar erff there (which the vector loop keeps for its
# remainder).
# RUN: cleave compile %t/late.onnx -o %t/late.cleave --march x86-64-v3 --quiet
# RUN: FileCheck %s --check-prefix=LATE-SOURCE < %t/late.cleave/programs/stage_0.cpp
# LATE-SOURCE-COUNT-60: return cleave_rt_failed(status);
# LATE-SOURCE: cl::gelu_erf
# RUN: %if !sanitizer && !program-cxx-clang %{ objdump -d %t/late.cleave/programs/stage_0.so | FileCheck %s --check-prefix=LATE %}
# LATE: call {{.*}}<_ZGVdN8v_erff@plt>
# RUN: %python %s check %t/v3.cleave %t | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: silu: max error {{.*}} ok
# NUMERIC: gelu_erf: max error {{.*}} ok
# NUMERIC: gelu_tanh: max error {{.*}} ok
# NUMERIC: log: max error {{.*}} ok

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

SHAPE = [4, 1000]


def build(work):
    half, sqrt2, k = (helper.make_tensor(n, TensorProto.FLOAT, [], [v]) for n, v in (
        ("half", 0.5), ("inv_sqrt2", 0.7071067811865476), ("k", 0.7978845608028654)))
    cubic = helper.make_tensor("cubic", TensorProto.FLOAT, [], [0.044715])
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    nodes = [
        # SiLU
        helper.make_node("Sigmoid", ["x"], ["sig"]),
        helper.make_node("Mul", ["x", "sig"], ["silu"]),
        # GELU, erf form
        helper.make_node("Mul", ["x", "inv_sqrt2"], ["xs"]),
        helper.make_node("Erf", ["xs"], ["erf"]),
        helper.make_node("Add", ["erf", "one"], ["erf1"]),
        helper.make_node("Mul", ["x", "erf1"], ["xe"]),
        helper.make_node("Mul", ["xe", "half"], ["gelu_erf"]),
        # GELU, tanh form
        helper.make_node("Mul", ["x", "x"], ["x2"]),
        helper.make_node("Mul", ["x2", "x"], ["x3"]),
        helper.make_node("Mul", ["x3", "cubic"], ["cx3"]),
        helper.make_node("Add", ["x", "cx3"], ["inner"]),
        helper.make_node("Mul", ["inner", "k"], ["scaled"]),
        helper.make_node("Tanh", ["scaled"], ["t"]),
        helper.make_node("Add", ["t", "one"], ["t1"]),
        helper.make_node("Mul", ["x", "t1"], ["xt"]),
        helper.make_node("Mul", ["xt", "half"], ["gelu_tanh"]),
        # log(1 + x^2)
        helper.make_node("Add", ["x2", "one"], ["x2p1"]),
        helper.make_node("Log", ["x2p1"], ["log"]),
    ]
    graph = helper.make_graph(
        nodes, "activations",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, SHAPE)
         for n in ("silu", "gelu_erf", "gelu_tanh", "log")],
        [half, sqrt2, k, cubic, one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(work, "model.onnx"))

    chain = [helper.make_node("Softmax", [f"s{i}"], [f"s{i + 1}"], axis=-1)
             for i in range(60)]
    chain += [
        helper.make_node("Mul", ["s60", "inv_sqrt2"], ["xs"]),
        helper.make_node("Erf", ["xs"], ["erf"]),
        helper.make_node("Add", ["erf", "one"], ["erf1"]),
        helper.make_node("Mul", ["s60", "erf1"], ["xe"]),
        helper.make_node("Mul", ["xe", "half"], ["y"]),
    ]
    graph = helper.make_graph(
        chain, "late",
        [helper.make_tensor_value_info("s0", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
        [half, sqrt2, one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(work, "late.onnx"))


def check(bundle, work):
    import math

    import cleave

    # Both tails of every function, zeros, tiny values, and values where
    # exp overflows or underflows.
    x = np.concatenate([np.linspace(-12.0, 12.0, 3990, dtype=np.float32),
                        np.array([0.0, -0.0, 1e-8, -1e-8, 90.0, -90.0, 100.0,
                                  -100.0, 1e-30, -1e-30], np.float32)])
    x = x.reshape(SHAPE)
    d = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    expected = {
        "silu": d / (1.0 + np.exp(-d)),
        "gelu_erf": 0.5 * d * (1.0 + erf(d / math.sqrt(2.0))),
        "gelu_tanh": 0.5 * d * (1.0 + np.tanh(0.7978845608028654 * (d + 0.044715 * d**3))),
        "log": np.log1p(d * d),
    }
    got = cleave.Session(bundle, threads=1).run(None, {"x": x})
    for (name, reference), ours in zip(expected.items(), got):
        excess = np.abs(ours - reference) - (1e-6 + 1e-5 * np.abs(reference))
        ok = bool(np.all(np.isfinite(ours)) and np.all(excess <= 0))
        error = float(np.max(np.abs(ours - reference)))
        print(f"{name}: max error {error:.3g} {'ok' if ok else 'too large'}")


if sys.argv[1] == "build":
    build(sys.argv[2])
else:
    check(sys.argv[2], sys.argv[3])
