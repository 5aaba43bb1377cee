# Initializers in ONNX external-data files are referenced, never read: the
# weight names the data file (resolved against the model's directory) and
# the byte range. Small ones (a reshape target here) are read so that shape
# computations fold.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave-translate --import-onnx %t/small/model.onnx > %t/small.mlir
# RUN: FileCheck %s --check-prefix=SMALL --input-file %t/small.mlir
# RUN: %python %s verify %t %t/small.mlir | FileCheck %s --check-prefix=BYTES
# BYTES: verified 2 weights
#
# A 300 GiB (sparse) data file: the import only checks that the file is
# large enough, so it is fast and small.
# RUN: %python %s measure %t/huge.mlir cleave-translate --import-onnx %t/huge/model.onnx | FileCheck %s --check-prefix=COST
# COST: peak RSS below 200 MiB, wall time below 2 s
# RUN: FileCheck %s --check-prefix=HUGE --input-file %t/huge.mlir
#
# The errors name the initializer and the file.
# RUN: not cleave-translate --import-onnx %t/missing/model.onnx 2>&1 | FileCheck %s --check-prefix=MISSING
# MISSING: model.onnx:0:0: error: external data file '{{.*}}missing{{/|\\}}gone.bin' of initializer 'w' cannot be opened: No such file or directory
# RUN: not cleave-translate --import-onnx %t/short/model.onnx 2>&1 | FileCheck %s --check-prefix=SHORT
# SHORT: model.onnx:0:0: error: initializer 'w' needs bytes [4096, 8192) of external data file '{{.*}}short.bin', which has only 6000 bytes
# RUN: not cleave-translate --import-onnx %t/length/model.onnx 2>&1 | FileCheck %s --check-prefix=LENGTH
# LENGTH: model.onnx:0:0: error: initializer 'w' has external data length 100 but FLOAT 32x32 needs 4096 bytes
#
# The sparse file has an apparent size of 300 GiB; do not leave it behind.
# RUN: rm %t/huge/data/huge.bin

import os
import resource
import subprocess
import sys
import time

import numpy as np
import onnx

from cleave.testing import GraphBuilder
from cleave.testing.weights import verify_weights

# SMALL-LABEL: func.func @main
# SMALL-SAME: (%[[X:[^:]+]]: tensor<4x64xf32>
# SMALL-DAG: %[[W1:.+]] = cleave.weight "w1" {file = "{{.*}}small{{/|\\}}model.onnx.data", length = 16384 : i64, offset = 0 : i64} : tensor<64x64xf32>
# SMALL-DAG: %[[W2:.+]] = cleave.weight "w2" {file = "{{.*}}small{{/|\\}}model.onnx.data", length = 1024 : i64, offset = {{[1-9][0-9]*}} : i64} : tensor<64x4xf32>
# SMALL-NOT: "target"
# SMALL: %[[R:.+]] = cleave.reshape %{{.+}} : tensor<4x4xf32> -> tensor<16xf32>
# SMALL: return %[[R]]

# HUGE-LABEL: func.func @main
# HUGE-DAG: cleave.weight "a" {file = "{{.*}}huge{{/|\\}}data{{/|\\}}huge.bin", length = 4294967296 : i64, offset = 0 : i64} : tensor<32768x32768xf32>
# HUGE-DAG: cleave.weight "b" {file = "{{.*}}huge{{/|\\}}data{{/|\\}}huge.bin", length = 4294967296 : i64, offset = 107374182400 : i64} : tensor<32768x32768xf32>
# HUGE-DAG: cleave.weight "c" {file = "{{.*}}huge{{/|\\}}data{{/|\\}}huge.bin", length = 4294967296 : i64, offset = 214748364800 : i64} : tensor<32768x32768xf32>
# The last one ends exactly at the end of the file.
# HUGE-DAG: cleave.weight "d" {file = "{{.*}}huge{{/|\\}}data{{/|\\}}huge.bin", length = 4294967296 : i64, offset = 317827579904 : i64} : tensor<32768x32768xf32>

GiB = 1 << 30


def external(name, shape, location, offset, length=None, dtype=onnx.TensorProto.FLOAT):
    tensor = onnx.TensorProto()
    tensor.name = name
    tensor.data_type = dtype
    tensor.dims.extend(shape)
    tensor.data_location = onnx.TensorProto.EXTERNAL
    entries = {"location": location, "offset": str(offset)}
    if length is not None:
        entries["length"] = str(length)
    for key, value in entries.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def chain_model(path, tensors):
    """x -> MatMul with each tensor in turn."""
    g = GraphBuilder(opset=17)
    v = g.input("x", [1, tensors[0].dims[0]])
    for tensor in tensors:
        g.initializers.append(tensor)
        v = g.node("MatMul", [v, tensor.name])
    g.output(v, [1, tensors[-1].dims[1]])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    g.save(path)


def build(out):
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((64, 64)).astype(np.float32)
    w2 = rng.standard_normal((64, 4)).astype(np.float32)
    np.save(f"{out}/w1.npy", w1)
    np.save(f"{out}/w2.npy", w2)
    g = GraphBuilder(opset=17)
    x = g.input("x", [4, 64])
    v = g.node("MatMul", [g.node("MatMul", [x, g.initializer("w1", w1)]), g.initializer("w2", w2)])
    v = g.node("Reshape", [v, g.initializer("target", np.array([-1], np.int64))])
    g.output(v, [16])
    os.makedirs(f"{out}/small")
    g.save(f"{out}/small/model.onnx", external_data="model.onnx.data")

    square = [32768, 32768]
    os.makedirs(f"{out}/huge/data")
    with open(f"{out}/huge/data/huge.bin", "wb") as f:
        f.truncate(300 * GiB)
    chain_model(
        f"{out}/huge/model.onnx",
        [
            external("a", square, "data/huge.bin", 0),
            external("b", square, "data/huge.bin", 100 * GiB, 4 * GiB),
            external("c", square, "data/huge.bin", 200 * GiB),
            external("d", square, "data/huge.bin", 296 * GiB, 4 * GiB),
        ],
    )

    chain_model(f"{out}/missing/model.onnx", [external("w", [32, 32], "gone.bin", 0)])
    os.makedirs(f"{out}/short")
    with open(f"{out}/short/short.bin", "wb") as f:
        f.truncate(6000)
    chain_model(f"{out}/short/model.onnx", [external("w", [32, 32], "short.bin", 4096)])
    os.makedirs(f"{out}/length")
    with open(f"{out}/length/w.bin", "wb") as f:
        f.truncate(4096)
    chain_model(f"{out}/length/model.onnx", [external("w", [32, 32], "w.bin", 0, 100)])


def measure(output, command):
    """Runs `command` with stdout to `output`; checks its peak RSS and time."""
    start = time.monotonic()
    with open(output, "w") as f:
        subprocess.run(command, stdout=f, check=True)
    wall = time.monotonic() - start
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if rss_mib >= 200 or wall >= 2:
        sys.exit(f"import took {wall:.2f} s and {rss_mib:.0f} MiB")
    print("peak RSS below 200 MiB, wall time below 2 s")


if sys.argv[1] == "build":
    build(sys.argv[2])
elif sys.argv[1] == "verify":
    expected = {name: np.load(f"{sys.argv[2]}/{name}.npy") for name in ("w1", "w2")}
    print(f"verified {verify_weights(open(sys.argv[3]).read(), expected)} weights")
else:
    measure(sys.argv[2], sys.argv[3:])
