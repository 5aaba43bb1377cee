# A session allocates its outputs at every run, and the program writes them
# in place. The blocks of freed outputs are kept for the next run's
# outputs of the same size, so that a run does not pay the page faults of
# a fresh block inside the kernel that writes it (the C library would
# return a large freed block to the system, or alternate between two).
# Runs in a loop, each output released when the next run's result
# replaces it, as `y = session.run(...)` does: after the first two runs,
# the next ten runs of a 1 MB output (256 pages) fault fewer than 10 pages
# in all, and each output is still its own (a kept block is never handed
# out while a tensor holds it).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# CHECK: faults in runs 3-12: ok
# CHECK: outputs: ok

import resource
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import cleave

work = sys.argv[1]
n = 512
graph = helper.make_graph(
    [helper.make_node("Add", ["x", "c"], ["y"])], "add",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])],
    [numpy_helper.from_array(np.full((1, n), 0.5, np.float32), "c")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, f"{work}/add.onnx")
subprocess.run(["cleave", "compile", f"{work}/add.onnx", "-o", f"{work}/add.cleave",
                "--quiet"], check=True)

session = cleave.Session(f"{work}/add.cleave", threads=1)
x = np.ones((n, n), np.float32)
y = None
faults = []
for run in range(12):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    y = session.run({"x": x})["y"]
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
late = sum(faults[2:])
print(f"faults in runs 3-12: {'ok' if late < 10 else 'too many'} {faults}")

# Two outputs alive at once are two blocks, each with its own values.
a = session.run({"x": x})["y"]
b = session.run({"x": 2 * x})["y"]
same_block = a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
right = np.all(a == 1.5) and np.all(b == 2.5)
print(f"outputs: {'ok' if right and not same_block else 'WRONG'}")
