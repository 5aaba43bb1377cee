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
# IR: ir2.onnx:0:0: error: ONNX IR version 2 is not supported (cleave reads IR versions 3 to 12)
# RUN: not cleave-translate --import-onnx %t/ir999.onnx 2>&1 | FileCheck %s --check-prefix=IR999
# IR999: ir999.onnx:0:0: error: ONNX IR version 999 is not supported (cleave reads IR versions 3 to 12)
#
# Subgraphs nested past protobuf's depth limit (If inside If, 40 levels) are
# named as such, not as damage.
# RUN: not cleave-translate --import-onnx %t/nested.onnx 2>&1 | FileCheck %s --check-prefix=NESTED
# NESTED: nested.onnx:0:0: error: the model nests messages more than 100 deep (subgraphs of If, Loop or Scan nested about 33 levels), more than protobuf reads
# RUN: not cleave-translate --import-onnx %t/nested-truncated.onnx 2>&1 | FileCheck %s --check-prefix=NESTEDCUT
# NESTEDCUT: nested-truncated.onnx:0:0: error: not a valid ONNX model: the protobuf encoding is malformed or truncated
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


# Nested models are written by hand in the wire format: Python's protobuf
# refuses to build them.
def field(number, payload):
    """A length-delimited field."""
    def varint(n):
        out = bytearray()
        while True:
            byte = n & 0x7F
            n >>= 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def graph(depth):
    """GraphProto: one If node whose then-branch nests `depth` more levels."""
    output = field(12, field(1, b"y"))  # output { name: "y" }
    if depth == 0:
        node = field(1, b"x") + field(2, b"y") + field(4, b"Identity")
        return field(1, node) + field(2, b"g0") + output
    attribute = field(1, b"then_branch") + field(6, graph(depth - 1)) + bytes([0xA0, 0x01, 5])
    node = field(1, b"c") + field(2, b"y") + field(4, b"If") + field(5, attribute)
    return field(1, node) + field(2, b"g") + output


opset = field(8, bytes([0x10, 17]))  # opset_import { version: 17 }
nested = bytes([0x08, 8]) + opset + field(7, graph(40))  # ir_version 8
save_raw(f"{out}/nested.onnx", nested)
save_raw(f"{out}/nested-truncated.onnx", nested[:-7])
