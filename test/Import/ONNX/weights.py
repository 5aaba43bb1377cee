# Initializers stay in the file: large ones become `cleave.weight` ops that
# name the byte range of their data inside the .onnx file (raw_data, or the
# packed float_data / double_data fields, whose bytes have the same layout,
# also for large Constant nodes);
# small ones and those stored as varint integer fields become constants.
# The second step reads every referenced byte range back in Python and
# compares it with the array the model was built from.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave-translate --import-onnx %t/weights.onnx > %t/weights.mlir
# RUN: FileCheck %s --input-file %t/weights.mlir
# RUN: %python %s verify %t %t/weights.mlir | FileCheck %s --check-prefix=BYTES
# BYTES: verified 6 weights
#
# With no inlining even a two-element initializer is a weight.
# RUN: cleave-translate --import-onnx %t/weights.onnx --onnx-max-inline-elements=0 | FileCheck %s --check-prefix=NOINLINE
# NOINLINE: cleave.weight "small" {{.*}} : tensor<2xf32>

import sys

import numpy as np

from cleave.testing import GraphBuilder
from cleave.testing.weights import verify_weights

# CHECK-LABEL: func.func @main
# CHECK-SAME: (%[[X:[^:]+]]: tensor<16x16xf32> {cleave.name = "x"})
# An initializer also listed as a graph input (IR version 3 style) keeps its
# value and is no function argument.
# CHECK-NOT: cleave.name = "raw"
# CHECK-DAG: cleave.weight "raw" {file = "{{.*}}weights.onnx", length = 1024 : i64, offset = {{[0-9]+}} : i64} : tensor<16x16xf32>
# CHECK-DAG: cleave.weight "typed" {file = "{{.*}}weights.onnx", length = 1024 : i64, offset = {{[0-9]+}} : i64} : tensor<16x16xf32>
# CHECK-DAG: cleave.weight "double" {file = "{{.*}}weights.onnx", length = 1024 : i64, offset = {{[0-9]+}} : i64} : tensor<128xf64>
# CHECK-DAG: cleave.weight "half" {file = "{{.*}}weights.onnx", length = 512 : i64, offset = {{[0-9]+}} : i64} : tensor<16x16xf16>
# CHECK-DAG: cleave.weight "folded" {file = "{{.*}}weights.onnx", length = 400 : i64, offset = {{[0-9]+}} : i64} : tensor<100xf32>
# CHECK-DAG: cleave.weight "table" {file = "{{.*}}weights.onnx", length = 800 : i64, offset = {{[0-9]+}} : i64} : tensor<100xi64>
# int64_data is varint-encoded: no byte range holds the values, so even a
# large one is a constant.
# CHECK-DAG: cleave.constant dense<[0, 1, 2, {{.*}}, 99]> : tensor<100xi64>
# CHECK-DAG: cleave.constant dense<[2.500000e-01, -1.000000e+00]> : tensor<2xf32>
# CHECK-DAG: cleave.constant dense<[true, false, true]> : tensor<3xi1>
# An unused initializer leaves nothing behind.
# CHECK-NOT: "unused"
# CHECK: return


def build(out):
    rng = np.random.default_rng(0)
    arrays = {
        "raw": rng.standard_normal((16, 16)).astype(np.float32),
        "typed": rng.standard_normal((16, 16)).astype(np.float32),
        "double": rng.standard_normal(128),
        "half": rng.standard_normal((16, 16)).astype(np.float16),
        "table": np.arange(100, dtype=np.int64) * 3,
        "folded": rng.standard_normal(100).astype(np.float32),
    }
    g = GraphBuilder(opset=17, ir_version=3)
    x = g.input("x", [16, 16])
    g.initializer("raw", arrays["raw"])
    g.input("raw", [16, 16])
    g.initializer("typed", arrays["typed"], storage="typed")
    g.initializer("double", arrays["double"], storage="typed")
    g.initializer("half", arrays["half"])
    g.initializer("table", arrays["table"])
    g.initializer("ints", np.arange(100, dtype=np.int64), storage="typed")
    g.initializer("small", np.float32([0.25, -1]))
    g.initializer("flags", np.array([True, False, True]))
    g.initializer("unused", np.zeros((8, 8), np.float32))
    v = g.node("Add", [x, "raw"])
    v = g.node("Mul", [v, "typed"])
    v = g.node("Add", [v, g.node("Cast", ["half"], to=1)])
    g.output(v, [16, 16])
    g.output(g.node("Cast", ["double"], to=1), [128])
    g.output(g.node("Add", ["table", "ints"]), [100], np.int64)
    g.output(g.node("Identity", ["small"]), [2])
    g.output(g.node("Identity", ["flags"]), [3], np.bool_)
    # A large Constant node's tensor is referenced in place too.
    g.output(g.node("Constant", [], ["folded"], value=arrays["folded"]), [100])
    g.save(f"{out}/weights.onnx")
    for name, array in arrays.items():
        np.save(f"{out}/{name}.npy", array)


def verify(out, mlir):
    names = ["raw", "typed", "double", "half", "table", "folded"]
    expected = {name: np.load(f"{out}/{name}.npy") for name in names}
    try:
        count = verify_weights(open(mlir).read(), expected)
    except AssertionError as error:
        sys.exit(str(error))
    print(f"verified {count} weights")


if sys.argv[1] == "build":
    build(sys.argv[2])
else:
    verify(sys.argv[2], sys.argv[3])
