# Files that are not ONNX models fail with one error that names the file,
# never a crash.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
#
# RUN: not cleave-translate --import-onnx %t/nonexistent.onnx 2>&1 | FileCheck %s --check-prefix=NOFILE
# NOFILE: {{.*}}nonexistent.onnx{{.*}}No such file or directory
#
# RUN: not cleave-translate --import-onnx %t/empty.onnx 2>&1 | FileCheck %s --check-prefix=EMPTY
# EMPTY: empty.onnx:0:0: error: the file is empty; expected an ONNX model
#
# RUN: not cleave-translate --import-onnx %t/random.onnx 2>&1 | FileCheck %s --check-prefix=RANDOM
# RANDOM: random.onnx:0:0: error: not a valid ONNX model: the protobuf encoding is malformed or truncated
#
# RUN: not cleave-translate --import-onnx %t/truncated.onnx 2>&1 | FileCheck %s --check-prefix=TRUNCATED
# TRUNCATED: truncated.onnx:0:0: error: not a valid ONNX model: the protobuf encoding is malformed or truncated
#
# A valid protobuf message of another kind parses, but holds no graph.
# RUN: not cleave-translate --import-onnx %t/tensor.onnx 2>&1 | FileCheck %s --check-prefix=NOGRAPH
# NOGRAPH: tensor.onnx:0:0: error: not an ONNX model: the file holds no graph
#
# RUN: not cleave-translate --import-onnx %t/ir2.onnx 2>&1 | FileCheck %s --check-prefix=IR
# IR: ir2.onnx:0:0: error: ONNX IR version 2 is not supported (cleave reads IR versions 3 to 11)
# RUN: not cleave-translate --import-onnx %t/ir999.onnx 2>&1 | FileCheck %s --check-prefix=IR999
# IR999: ir999.onnx:0:0: error: ONNX IR version 999 is not supported (cleave reads IR versions 3 to 11)
#
# A graph with nothing to compute is refused, not compiled to nothing.
# RUN: not cleave-translate --import-onnx %t/no-outputs.onnx 2>&1 | FileCheck %s --check-prefix=NOOUTPUTS
# NOOUTPUTS: no-outputs.onnx:0:0: error: the graph has no outputs
#
# Weights are referenced by their offset in the model file, so a model on
# standard input cannot be imported.
# RUN: not cleave-translate --import-onnx < %t/valid.onnx 2>&1 | FileCheck %s --check-prefix=STDIN
# STDIN: <stdin>:0:0: error: cannot import an ONNX model from standard input
#
# The valid model itself imports.
# RUN: cleave-translate --import-onnx %t/valid.onnx | FileCheck %s --check-prefix=VALID
# VALID: cleave.weight "w"

import sys

import numpy as np
import onnx

from cleave.testing import GraphBuilder, save_raw

out = sys.argv[1]

g = GraphBuilder(opset=17)
x = g.input("x", [4, 32])
g.output(g.node("MatMul", [x, g.initializer("w", np.ones((32, 32), np.float32))]), [4, 32])
valid = g.save(f"{out}/valid.onnx").SerializeToString()

save_raw(f"{out}/empty.onnx", b"")
save_raw(f"{out}/random.onnx", np.random.default_rng(7).bytes(4096))
save_raw(f"{out}/truncated.onnx", valid[: len(valid) // 2])
save_raw(f"{out}/tensor.onnx", onnx.numpy_helper.from_array(np.ones(3, np.float32)).SerializeToString())

old = GraphBuilder(opset=17, ir_version=2)
old.output(old.node("Relu", [old.input("x", [2])]), [2])
old.save(f"{out}/ir2.onnx")
new = GraphBuilder(opset=17, ir_version=999)
new.output(new.node("Relu", [new.input("x", [2])]), [2])
new.save(f"{out}/ir999.onnx")
empty_graph = GraphBuilder(opset=17)
empty_graph.save(f"{out}/no-outputs.onnx")
