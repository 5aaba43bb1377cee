# TensorScatter (opset 24) writes an update into a copy of a key/value cache
# along the sequence axis. Without write_indices it is the update followed by
# the rest of the cache; with them, a scatter of each batch's update to
# write_indices[b] + s, modulo the cache length in circular mode. Compiled
# for the cpu target, every result equals onnxruntime's exactly (the op only
# moves values).
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave-translate --import-onnx %t/scatter.onnx | FileCheck %s
# CHECK-LABEL: func.func @main
# CHECK-SAME: (%[[PAST:[^:]+]]: tensor<2x3x6x4xf32> {{.*}}, %[[UPD:[^:]+]]: tensor<2x3x2x4xf32> {{.*}}, %[[W:[^:]+]]: tensor<2xi64> {{.*}}, %[[PAST3:[^:]+]]: tensor<2x5x4xi32> {{.*}}, %[[UPD3:[^:]+]]: tensor<2x5x4xi32>
# Prefill: the update, then the cache from position 2 on.
# CHECK: %[[REST:.+]] = cleave.slice %[[PAST]] {ends = array<i64: 2, 3, 6, 4>, starts = array<i64: 0, 0, 2, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x3x6x4xf32>) -> tensor<2x3x4x4xf32>
# CHECK: %[[PREFILL:.+]] = cleave.concat %[[UPD]], %[[REST]] {axis = 2 : i64} : (tensor<2x3x2x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x6x4xf32>
# Decode: positions w[b] + s along axis 2.
# CHECK: %[[S:.+]] = cleave.constant dense<{{\[\[\[\[}}0], [1]]]]> : tensor<1x1x2x1xi64>
# CHECK: %[[WB:.+]] = cleave.unsqueeze %[[W]] {axes = array<i64: 1, 2, 3>} : (tensor<2xi64>) -> tensor<2x1x1x1xi64>
# CHECK: %[[POS:.+]] = cleave.add %[[WB]], %[[S]] : (tensor<2x1x1x1xi64>, tensor<1x1x2x1xi64>) -> tensor<2x1x2x1xi64>
# CHECK: %[[IDX:.+]] = cleave.expand %[[POS]] : tensor<2x1x2x1xi64> -> tensor<2x3x2x4xi64>
# CHECK: %[[LINEAR:.+]] = cleave.scatter_elements %[[PAST]], %[[IDX]], %[[UPD]] {axis = 2 : i64} : (tensor<2x3x6x4xf32>, tensor<2x3x2x4xi64>, tensor<2x3x2x4xf32>) -> tensor<2x3x6x4xf32>
# Circular: the positions modulo the cache length 6.
# CHECK: %[[SIX:.+]] = cleave.constant dense<6> : tensor<i64>
# CHECK: %[[WRAPPED:.+]] = cleave.mod %{{.+}}, %[[SIX]] : (tensor<2x1x2x1xi64>, tensor<i64>) -> tensor<2x1x2x1xi64>
# CHECK: %[[CIRCULAR:.+]] = cleave.scatter_elements %[[PAST]], %{{.+}}, %[[UPD]] {axis = 2 : i64}
# Constant write indices fold the positions (axis 1, batches at 3 and 1).
# CHECK: %[[FOLDED:.+]] = cleave.constant dense<{{\[\[\[}}3, 3, 3, 3], [4, 4, 4, 4]], {{\[\[}}1, 1, 1, 1], [2, 2, 2, 2]]]> : tensor<2x2x4xi64>
# CHECK: %[[AXIS1:.+]] = cleave.scatter_elements %[[PAST3]], %[[FOLDED]], %{{.+}} {axis = 1 : i64}
# An update as long as the cache replaces it.
# CHECK: return %[[PREFILL]], %[[LINEAR]], %[[CIRCULAR]], %[[AXIS1]], %[[UPD3]] :
#
# RUN: cleave compile %t/scatter.onnx -o %t/scatter.cleave --quiet
# RUN: cleave compile %t/wrap.onnx -o %t/wrap.cleave --quiet
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC --implicit-check-not=MISMATCH
# NUMERIC: prefill: ok
# NUMERIC: linear: ok
# NUMERIC: circular: ok
# NUMERIC: axis1: ok
# NUMERIC: whole: ok
# NUMERIC: wrap: ok
#
# RUN: not cleave-translate --import-onnx %t/mode.onnx 2>&1 | FileCheck %s --check-prefix=MODE
# MODE: mode.onnx:0:0: error: node 'ts' (TensorScatter): mode must be "linear" or "circular", not "ring"
# RUN: not cleave-translate --import-onnx %t/axis0.onnx 2>&1 | FileCheck %s --check-prefix=AXIS0
# AXIS0: axis0.onnx:0:0: error: node 'ts' (TensorScatter): axis cannot be the batch dimension (0)
# RUN: not cleave-translate --import-onnx %t/shape.onnx 2>&1 | FileCheck %s --check-prefix=SHAPE
# SHAPE: shape.onnx:0:0: error: node 'ts' (TensorScatter): update 'tensor<2x3x2x5xf32>' must have the element type and, off axis 2, the shape of past_cache 'tensor<2x3x6x4xf32>'
# RUN: not cleave-translate --import-onnx %t/long.onnx 2>&1 | FileCheck %s --check-prefix=LONG
# LONG: long.onnx:0:0: error: node 'ts' (TensorScatter): update's sequence length 7 exceeds the cache's 6
# RUN: not cleave-translate --import-onnx %t/indices.onnx 2>&1 | FileCheck %s --check-prefix=INDICES
# INDICES: indices.onnx:0:0: error: node 'ts' (TensorScatter): write_indices must be a 1-D int64 tensor of one index per batch (2), not 'tensor<3xi64>'

import sys

import numpy as np
import onnx

from cleave.testing import GraphBuilder

work = sys.argv[2]


def builder():
    return GraphBuilder(opset=24, ir_version=12)


def build():
    g = builder()
    past = g.input("past", [2, 3, 6, 4])
    update = g.input("update", [2, 3, 2, 4])
    w = g.input("w", [2], np.int64)
    past3 = g.input("past3", [2, 5, 4], np.int32)
    update3 = g.input("update3", [2, 5, 4], np.int32)
    g.output(g.node("TensorScatter", [past, update], ["prefill"]), [2, 3, 6, 4])
    g.output(g.node("TensorScatter", [past, update, w], ["linear"]), [2, 3, 6, 4])
    g.output(g.node("TensorScatter", [past, update, w], ["circular"], mode="circular"),
             [2, 3, 6, 4])
    w3 = g.const(np.array([3, 1], np.int64))
    g.output(g.node("TensorScatter", [past3, g.node("Slice", [update3, g.const(np.array([0], np.int64)),
                                                              g.const(np.array([2], np.int64)),
                                                              g.const(np.array([1], np.int64))]), w3],
                    ["axis1"], axis=1), [2, 5, 4], np.int32)
    g.output(g.node("TensorScatter", [past3, update3], ["whole"], axis=1), [2, 5, 4], np.int32)
    g.save(f"{work}/scatter.onnx")

    # A write that wraps around (onnxruntime refuses it in linear mode, which
    # the other model's nodes share the write indices with).
    g = builder()
    inputs = [g.input("past", [2, 3, 6, 4]), g.input("update", [2, 3, 2, 4]),
              g.input("w", [2], np.int64)]
    g.output(g.node("TensorScatter", inputs, ["wrap"], mode="circular"), [2, 3, 6, 4])
    g.save(f"{work}/wrap.onnx")


def error(name, past_shape, update_shape, indices_shape=None, **attrs):
    g = builder()
    inputs = [g.input("past", past_shape), g.input("update", update_shape)]
    if indices_shape:
        inputs.append(g.input("w", indices_shape, np.int64))
    g.output(g.node("TensorScatter", inputs, name="ts", **attrs))
    g.save(f"{work}/{name}.onnx")


def check(name, write_indices):
    import onnxruntime as ort

    import cleave

    model = onnx.load(f"{work}/{name}.onnx")
    rng = np.random.default_rng(0)
    feeds = {}
    for i in model.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
        feeds[i.name] = rng.integers(-100, 100, shape).astype(dtype)
    feeds["w"] = np.array(write_indices, np.int64)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = cleave.Session(f"{work}/{name}.cleave").run(feeds)
    for output, value in zip(model.graph.output, want):
        have = got[output.name]
        same = have.dtype == value.dtype and np.array_equal(have, value)
        print(f"{output.name}: {'ok' if same else 'MISMATCH'}")


if sys.argv[1] == "build":
    build()
    error("mode", [2, 3, 6, 4], [2, 3, 2, 4], mode="ring")
    error("axis0", [2, 3, 6, 4], [2, 3, 2, 4], axis=0)
    error("shape", [2, 3, 6, 4], [2, 3, 2, 5])
    error("long", [2, 3, 6, 4], [2, 3, 7, 4])
    error("indices", [2, 3, 6, 4], [2, 3, 2, 4], [3])
else:
    # Batch 0 writes positions 4 and 5, batch 1 positions 1 and 2; wrapping
    # around, batch 1 writes 5 and then 0.
    check("scatter", [4, 1])
    check("wrap", [4, 5])
