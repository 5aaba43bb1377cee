# Initializers whose stored data cannot be what they claim, shapes too large
# to address, and external data outside the model's directory are refused
# naming the initializer, node or input, before anything is allocated for
# the claimed shape or read from the file.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
#
# 2^34 elements claimed, one stored: an error, not an allocation of 64 GiB.
# RUN: not cleave-translate --import-onnx %t/huge-typed.onnx 2>&1 | FileCheck %s --check-prefix=HUGETYPED
# HUGETYPED: huge-typed.onnx:0:0: error: initializer 'w' stores 1 values but its shape 17179869184 has 17179869184 elements
# RUN: not cleave-translate --import-onnx %t/empty-typed.onnx 2>&1 | FileCheck %s --check-prefix=EMPTYTYPED
# EMPTYTYPED: empty-typed.onnx:0:0: error: initializer 'w' stores 0 values but its shape 17179869184 has 17179869184 elements
#
# External data is named relative to the model's directory and stays in it.
# RUN: not cleave-translate --import-onnx %t/model/absolute.onnx 2>&1 | FileCheck %s --check-prefix=ABSOLUTE
# ABSOLUTE: absolute.onnx:0:0: error: initializer 'w' has external data location '{{.*}}secret.bin', an absolute path; ONNX external data must be named relative to the model's directory
# RUN: not cleave-translate --import-onnx %t/model/climb.onnx 2>&1 | FileCheck %s --check-prefix=CLIMB
# CLIMB: climb.onnx:0:0: error: initializer 'w' has external data location '../secret.bin', which resolves to '{{.*}}secret.bin' outside the model's directory '{{.*}}model'
# RUN: not cleave-translate --import-onnx %t/model/link.onnx 2>&1 | FileCheck %s --check-prefix=LINK
# LINK: link.onnx:0:0: error: initializer 'w' has external data location 'data/link.bin', which resolves to '{{.*}}secret.bin' outside the model's directory '{{.*}}model'
#
# Shapes whose byte size does not fit are refused where they arise, before
# any byte count wraps or a folded constant is built.
# RUN: not cleave-translate --import-onnx %t/expand-huge.onnx 2>&1 | FileCheck %s --check-prefix=EXPAND
# EXPAND: expand-huge.onnx:0:0: error: node 'Expand_0' (Expand): output 0 would be 'tensor<4611686018427387905xf32>', more bytes than cleave can address
# RUN: not cleave-translate --import-onnx %t/constant-of-shape-huge.onnx 2>&1 | FileCheck %s --check-prefix=CONSTANTOFSHAPE
# CONSTANTOFSHAPE: error: node 'ConstantOfShape_0' (ConstantOfShape): output 0 would be 'tensor<4611686018427387905xf32>', more bytes than cleave can address
# RUN: not cleave-translate --import-onnx %t/tile-huge.onnx 2>&1 | FileCheck %s --check-prefix=TILE
# TILE: error: node 'Tile_0' (Tile): output 0 would be 'tensor<2305843009213693952x2xf32>', more bytes than cleave can address
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx --input-shape x=4611686018427387905x16 2>&1 | FileCheck %s --check-prefix=INPUTSHAPE
# INPUTSHAPE: error: invalid --input-shape 'x=4611686018427387905x16': the shape 4611686018427387905x16 has more elements than cleave can address
# RUN: not cleave-translate --import-onnx %t/declared-huge.onnx 2>&1 | FileCheck %s --check-prefix=DECLARED
# DECLARED: error: input 'x' of shape 1099511627776x1099511627776 has more bytes than cleave can address
#
# A file inside the directory, reached through a link that stays inside, is
# accepted.
# RUN: cleave-translate --import-onnx %t/model/inside.onnx | FileCheck %s --check-prefix=INSIDE
# INSIDE: cleave.weight "w" {file = "{{.*}}model{{/|\\}}data{{/|\\}}inside-link.bin"

import os
import sys

import numpy as np
import onnx

from cleave.testing import GraphBuilder


def matmul_model(path, tensor, rows):
    g = GraphBuilder(opset=17)
    x = g.input("x", [1, rows])
    g.initializers.append(tensor)
    g.output(g.node("MatMul", [x, tensor.name]), [1, tensor.dims[1]] if len(tensor.dims) > 1 else [1])
    g.save(path)


def typed(count):
    tensor = onnx.TensorProto()
    tensor.name = "w"
    tensor.data_type = onnx.TensorProto.FLOAT
    tensor.dims.extend([1 << 34])
    tensor.float_data.extend([1.0] * count)
    return tensor


def external(location):
    tensor = onnx.TensorProto()
    tensor.name = "w"
    tensor.data_type = onnx.TensorProto.FLOAT
    tensor.dims.extend([32, 32])
    tensor.data_location = onnx.TensorProto.EXTERNAL
    for key, value in {"location": location, "offset": "0"}.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def single_input_model(path, tensor):
    """y = x + w over w's shape, so that any shape imports."""
    g = GraphBuilder(opset=17)
    x = g.input("x", list(tensor.dims))
    g.initializers.append(tensor)
    g.output(g.node("Add", [x, tensor.name]), list(tensor.dims))
    g.save(path)


def shape_model(path, op, shape, input_shape):
    """y = op(x?, shape) with a constant shape operand."""
    g = GraphBuilder(opset=17)
    operands = [g.input("x", input_shape)] if input_shape else []
    operands.append(g.const(np.array(shape, np.int64)))
    g.output(g.node(op, operands))
    g.save(path)


out = sys.argv[1]
HUGE = (1 << 62) + 1
shape_model(f"{out}/expand-huge.onnx", "Expand", [HUGE], [1])
shape_model(f"{out}/constant-of-shape-huge.onnx", "ConstantOfShape", [HUGE], None)
shape_model(f"{out}/tile-huge.onnx", "Tile", [1 << 61, 1], [1, 2])
dynamic = GraphBuilder(opset=17)
dynamic.output(dynamic.node("Relu", [dynamic.input("x", ["n", 16])]))
dynamic.save(f"{out}/dynamic.onnx")
declared = GraphBuilder(opset=17)
declared.output(declared.node("Relu", [declared.input("x", [1 << 40, 1 << 40])]))
declared.save(f"{out}/declared-huge.onnx")
single_input_model(f"{out}/huge-typed.onnx", typed(1))
single_input_model(f"{out}/empty-typed.onnx", typed(0))

os.makedirs(f"{out}/model/data")
secret = f"{out}/secret.bin"
with open(secret, "wb") as f:
    f.truncate(4096)
with open(f"{out}/model/data/inside.bin", "wb") as f:
    f.truncate(4096)
os.symlink(secret, f"{out}/model/data/link.bin")
os.symlink("inside.bin", f"{out}/model/data/inside-link.bin")
matmul_model(f"{out}/model/absolute.onnx", external(secret), 32)
matmul_model(f"{out}/model/climb.onnx", external("../secret.bin"), 32)
matmul_model(f"{out}/model/link.onnx", external("data/link.bin"), 32)
matmul_model(f"{out}/model/inside.onnx", external("data/inside-link.bin"), 32)
