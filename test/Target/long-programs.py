# Long programs stay linear to compile and build. An elementwise chain of
# 3,000 ops becomes generated loops of at most 256 ops each (not one loop of
# 3,000 statements); a program of 150 steps is emitted as functions of at
# most 64 steps that its entry calls in order; a chain of 20,000 ops plans
# for 4 devices and compiles (its segments fall into 5 classes: the last,
# whose output the function returns, is one of its own). The bundles agree
# with onnxruntime.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
#
# RUN: cleave-translate --import-onnx %t/chain.onnx -o %t/chain.mlir
# RUN: cleave-translate --print-device-program %t/chain.mlir > %t/chain.txt
# RUN: grep -c "^step [0-9]* loop " %t/chain.txt | FileCheck %s --check-prefix=LOOPS
# LOOPS: {{^12$}}
# RUN: cleave compile %t/chain.onnx -o %t/chain.cleave --quiet
#
# RUN: cleave compile %t/outputs.onnx -o %t/outputs.cleave --quiet
# RUN: FileCheck %s --check-prefix=PARTS < %t/outputs.cleave/programs/stage_0.cpp
# PARTS: __attribute__((noinline)) static int32_t cleave_entry_forward_part0(
# PARTS: cleave_rt_step(ctx, 63,
# PARTS-NEXT: {
# PARTS: return 0;
# PARTS-NEXT: }
# PARTS: __attribute__((noinline)) static int32_t cleave_entry_forward_part1(
# PARTS: cleave_rt_step(ctx, 64,
# PARTS: static int32_t cleave_entry_forward_part2(
# PARTS: cleave_rt_step(ctx, 149,
# PARTS-NOT: cleave_entry_forward_part3(
# PARTS: static int32_t cleave_entry_forward(CleaveContext *ctx,
# PARTS-NEXT: uint8_t *persistent, const uint8_t *weights,
# PARTS-NEXT: const void *const *inputs, void *const *outputs) {
# PARTS-NEXT: if (int32_t status = cleave_entry_forward_part0(ctx, microbatch, arena, persistent, weights, inputs, outputs))
# PARTS-NEXT: return cleave_rt_failed(status);
# PARTS: if (int32_t status = cleave_entry_forward_part2(
#
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: chain: max abs error {{.*}} ok
# NUMERIC: outputs: max abs error {{.*}} ok
#
# RUN: cleave plan %t/long.onnx --target cpu --devices 4 | FileCheck %s --check-prefix=PLAN
# PLAN: model 20000 ops in 20000 segments, 5 distinct
# RUN: cleave compile %t/long.onnx -o %t/long.cleave --emit-only --quiet
# RUN: cleave-translate --import-onnx %t/long.onnx -o %t/long.mlir
# RUN: cleave-translate --print-device-program %t/long.mlir | grep -c "^step [0-9]* loop " | FileCheck %s --check-prefix=LONG
# LONG: {{^79$}}

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

work = sys.argv[2]


def chain(n, name):
    """x -> (Tanh, Mul 0.999, Add 0.001, Neg) repeated: n ops."""
    kinds = ["Tanh", "Mul", "Add", "Neg"]
    nodes, prev = [], "x"
    for i in range(n):
        kind = kinds[i % 4]
        inputs = [prev] + (["scale"] if kind == "Mul" else
                           ["shift"] if kind == "Add" else [])
        nodes.append(helper.make_node(kind, inputs, [f"v{i}"], name=f"n{i}"))
        prev = f"v{i}"
    scale = numpy_helper.from_array(np.array(0.999, dtype=np.float32), "scale")
    shift = numpy_helper.from_array(np.array(0.001, dtype=np.float32), "shift")
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4, 8])],
        [scale, shift])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


if sys.argv[1] == "build":
    onnx.save(chain(3000, "chain"), f"{work}/chain.onnx")
    onnx.save(chain(20000, "long"), f"{work}/long.onnx")
    # 150 outputs, each its own step: y_i = x * c_i.
    nodes, outputs, inits = [], [], []
    for i in range(150):
        inits.append(numpy_helper.from_array(
            np.array(i / 7.0, dtype=np.float32), f"c{i}"))
        nodes.append(helper.make_node("Mul", ["x", f"c{i}"], [f"y{i}"], name=f"m{i}"))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [4, 8]))
    graph = helper.make_graph(
        nodes, "outputs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])], outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              f"{work}/outputs.onnx")
else:
    import onnxruntime as ort

    import cleave

    data = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    for name in ("chain", "outputs"):
        got = cleave.Session(f"{work}/{name}.cleave").run({"x": data})
        session = ort.InferenceSession(f"{work}/{name}.onnx")
        names = [o.name for o in session.get_outputs()]
        want = dict(zip(names, session.run(None, {"x": data})))
        assert set(got) == set(want), (sorted(got), sorted(want))
        error = max(float(np.max(np.abs(got[k] - want[k]))) for k in want)
        # 3,000 rounded float ops: within 1e-5 of onnxruntime.
        print(f"{name}: max abs error {error:.3g}", "ok" if error <= 1e-5 else "FAIL")
