# The indexing operators compiled and run against onnxruntime, and their
# index checks at run time. One model holds what transformer exports write:
# an embedding Gather, BERT's GatherND of one position per sequence with
# constant indices (batch_dims 1), Mixtral's GatherND of expert weights
# with run-time indices, GatherElements, ScatterND and ScatterElements with
# reductions and repeated indices, OneHot of float labels (one outside
# [-depth, depth), which ONNX defines as all off) and Trilu both ways. The
# outputs match onnxruntime's within rtol 1e-6, atol 1e-6 (the gathers,
# OneHot and Trilu move values, so they match exactly; the scatters combine
# repeated indices in the same order onnxruntime does).
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave compile %t/index.onnx -o %t/index.cleave --quiet
# RUN: FileCheck %s --check-prefix=CPP < %t/index.cleave/programs/stage_0.cpp
# CPP-DAG: cleave_cpu_gather_nd(
# CPP-DAG: cleave_cpu_scatter_nd(
# CPP-DAG: cleave_cpu_gather_elements(
# CPP-DAG: cleave_cpu_scatter_elements(
# CPP-DAG: cleave_cpu_one_hot(
# CPP-DAG: cleave_cpu_trilu(
# RUN: cleave run %t/index.cleave --test-data %t/good --rtol 1e-6 --atol 1e-6 | FileCheck %s
# CHECK: PASS: 11 outputs within rtol 1e-06, atol 1e-06
#
# An index out of range in run-time data fails the run with exit status 2,
# naming the step, the node, the kernel, the index and the range, before
# anything is read or written through it.
# RUN: %python %S/../runtime/Inputs/expect_exit.py 2 cleave run %t/index.cleave --test-data %t/bad-gather | FileCheck %s --check-prefix=GATHER
# GATHER: cleave run: error: {{.*}}stage_0.so: step {{[0-9]+}} (node 'embed'), kernel gather: index 10 (at position 4) is out of range [-10, 10) for axis 0
# RUN: %python %S/../runtime/Inputs/expect_exit.py 2 cleave run %t/index.cleave --test-data %t/bad-experts | FileCheck %s --check-prefix=EXPERTS
# EXPERTS: cleave run: error: {{.*}}stage_0.so: step {{[0-9]+}} (node 'select_experts'), kernel gather_nd: index -5 (at position 1 of indices) is out of range [-4, 4) for dimension 0 of data
# RUN: %python %S/../runtime/Inputs/expect_exit.py 2 cleave run %t/index.cleave --test-data %t/bad-pick | FileCheck %s --check-prefix=PICK
# PICK: cleave run: error: {{.*}}stage_0.so: step {{[0-9]+}} (node 'pick'), kernel gather_elements: index 8 (at position 7 of indices) is out of range [-8, 8) for dimension 2 of data
# RUN: %python %S/../runtime/Inputs/expect_exit.py 2 cleave run %t/index.cleave --test-data %t/bad-rows | FileCheck %s --check-prefix=ROWS
# ROWS: cleave run: error: {{.*}}stage_0.so: step {{[0-9]+}} (node 'scatter_rows'), kernel scatter_nd: index 6 (at position 2 of indices) is out of range [-6, 6) for dimension 0 of data
# RUN: %python %S/../runtime/Inputs/expect_exit.py 2 cleave run %t/index.cleave --test-data %t/bad-cols | FileCheck %s --check-prefix=COLS
# COLS: cleave run: error: {{.*}}stage_0.so: step {{[0-9]+}} (node 'scatter_max'), kernel scatter_elements: index -7 (at position 10 of indices) is out of range [-6, 6) for dimension 0 of data
#
# The CUDA program calls the same kernels; on a GPU it matches onnxruntime
# too, and a bad index is found on the device, skipped, and reported at the
# next synchronisation with the step and node that launched the kernel.
# RUN: cleave compile %t/index.onnx -o %t/cuda.cleave --target h100-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=CUDA < %t/cuda.cleave/programs/stage_0.cu
# CUDA-DAG: cleave_cuda_gather_nd(
# CUDA-DAG: cleave_cuda_scatter_nd(
# CUDA-DAG: cleave_cuda_gather_elements(
# CUDA-DAG: cleave_cuda_scatter_elements(
# CUDA-DAG: cleave_cuda_one_hot(
# CUDA-DAG: cleave_cuda_trilu(
# RUN: %if cuda %{ cleave compile %t/index.onnx -o %t/cuda-built.cleave --target h100-sxm --quiet %}
# RUN: %if gpu %{ cleave run %t/cuda-built.cleave --test-data %t/good --rtol 1e-6 --atol 1e-6 | FileCheck %s %}
# RUN: %if gpu %{ %python %S/../runtime/Inputs/expect_exit.py 2 cleave run %t/cuda-built.cleave --test-data %t/bad-experts | FileCheck %s --check-prefix=CUDA-EXPERTS %}
# CUDA-EXPERTS: cleave run: error: cuda:0: step {{[0-9]+}} (node 'select_experts'), kernel gather_nd: index -5 is out of range [-4, 4) for dimension 0 of data
# RUN: %if gpu %{ %python %S/../runtime/Inputs/expect_exit.py 2 cleave run %t/cuda-built.cleave --test-data %t/bad-cols --profile | FileCheck %s --check-prefix=CUDA-COLS %}
# CUDA-COLS: cleave run: error: cuda:0: step {{[0-9]+}} (node 'scatter_max'), kernel scatter_elements: index -7 is out of range [-6, 6) for dimension 0 of data

import os
import sys

import numpy as np
from onnx import numpy_helper

from cleave.testing import GraphBuilder

out = sys.argv[1]
rng = np.random.default_rng(7)

g = GraphBuilder(opset=18, name="index")
hidden = g.input("hidden", [2, 5, 8])
token_ids = g.input("token_ids", [2, 3], np.int64)
expert_ids = g.input("expert_ids", [3, 1], np.int64)
pick = g.input("pick", [2, 5, 3], np.int64)
table = g.input("table", [6, 8])
rows = g.input("rows", [4, 1], np.int64)
updates = g.input("updates", [4, 8])
cols = g.input("cols", [3, 8], np.int64)
col_updates = g.input("col_updates", [3, 8])
labels = g.input("labels", [5])
embedding = g.initializer("embedding", rng.standard_normal((10, 8)).astype(np.float32))
experts = g.initializer("experts", rng.standard_normal((4, 6, 8)).astype(np.float32))

g.output(g.node("Gather", [embedding, token_ids], name="embed", axis=0))
# The last real token of each sequence (padding-mask arithmetic folded).
last = g.const(np.array([[4], [2]], np.int64))
g.output(g.node("GatherND", [hidden, last], name="last_token", batch_dims=1))
g.output(g.node("GatherND", [experts, expert_ids], name="select_experts"))
g.output(g.node("GatherElements", [hidden, pick], name="pick", axis=-1))
g.output(g.node("ScatterND", [table, rows, updates], name="scatter_rows", reduction="add"))
g.output(g.node("ScatterND", [table, rows, updates], name="scatter_rows_mul", reduction="mul"))
g.output(g.node("ScatterElements", [table, cols, col_updates], name="scatter_max",
                axis=0, reduction="max"))
g.output(g.node("ScatterElements", [table, cols, col_updates], name="scatter_cols", axis=1))
g.output(g.node("OneHot", [labels, g.const(np.float32(4)),
                           g.const(np.array([0.5, 2.0], np.float32))], name="one_hot"))
g.output(g.node("Trilu", [hidden, g.const(np.int64(1))], name="upper"))
g.output(g.node("Trilu", [hidden, g.const(np.int64(-1))], name="lower", upper=0))
g.declare_reference_shapes()
g.save(f"{out}/index.onnx")

# Rows of `cols` hold distinct columns after negatives are counted from the
# end, so the scatter without a reduction is defined; along axis 0 they
# repeat, which `max` allows.
good = {
    "hidden": rng.standard_normal((2, 5, 8)).astype(np.float32),
    "token_ids": np.array([[1, 9, -1], [0, 3, -10]], np.int64),
    "expert_ids": np.array([[3], [-4], [1]], np.int64),
    "pick": rng.integers(-8, 8, (2, 5, 3)).astype(np.int64),
    "table": rng.standard_normal((6, 8)).astype(np.float32),
    "rows": np.array([[1], [4], [-2], [1]], np.int64),
    "updates": rng.standard_normal((4, 8)).astype(np.float32),
    "cols": np.array([[0, 1, 2, 3, 4, 5, -1, -2],
                      [5, 4, 3, 2, 1, 0, -2, -1],
                      [-1, 0, 5, -2, 1, 2, 3, 4]], np.int64),
    "col_updates": rng.standard_normal((3, 8)).astype(np.float32),
    "labels": np.array([0.0, 3.7, -1.0, 9.0, -4.2], np.float32),
}


def write(name, feeds, outputs):
    folder = f"{out}/{name}"
    os.makedirs(folder)
    for i, info in enumerate(g.inputs):
        array = numpy_helper.from_array(feeds[info.name])
        with open(f"{folder}/input_{i}.pb", "wb") as f:
            f.write(array.SerializeToString())
    for i, value in enumerate(outputs):
        with open(f"{folder}/output_{i}.pb", "wb") as f:
            f.write(numpy_helper.from_array(value).SerializeToString())


import onnxruntime

session = onnxruntime.InferenceSession(f"{out}/index.onnx",
                                       providers=["CPUExecutionProvider"])
expected = session.run(None, good)
write("good", good, expected)


def bad(name, input_name, position, value):
    feeds = {k: v.copy() for k, v in good.items()}
    feeds[input_name].reshape(-1)[position] = value
    write(name, feeds, expected)


bad("bad-gather", "token_ids", 4, 10)
bad("bad-experts", "expert_ids", 1, -5)
bad("bad-pick", "pick", 7, 8)
bad("bad-rows", "rows", 2, 6)
bad("bad-cols", "cols", 10, -7)
