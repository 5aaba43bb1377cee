# Constant, ConstantOfShape, Shape, Size and Range: everything here is
# known at import time and folds to `cleave.constant`.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/constant.onnx | FileCheck %s --check-prefix=CONSTANT
# RUN: cleave-translate --import-onnx %t/shape_ops.onnx | FileCheck %s --check-prefix=SHAPEOPS

import sys

import numpy as np

from cleave.testing import GraphBuilder

out = sys.argv[1]

# CONSTANT-LABEL: func.func @main
# CONSTANT-DAG: %[[T:.+]] = cleave.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi32>
# CONSTANT-DAG: %[[F:.+]] = cleave.constant dense<2.500000e+00> : tensor<f32>
# CONSTANT-DAG: %[[FS:.+]] = cleave.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
# CONSTANT-DAG: %[[I:.+]] = cleave.constant dense<7> : tensor<i64>
# CONSTANT-DAG: %[[IS:.+]] = cleave.constant dense<[3, -1]> : tensor<2xi64>
# CONSTANT-DAG: %[[B:.+]] = cleave.constant dense<[true, false, true]> : tensor<3xi1>
# A large constant stays in the file, like an initializer, named after its
# output.
# CONSTANT-DAG: %[[BIG:.+]] = cleave.weight "big" {file = "{{.*}}constant.onnx", length = 400 : i64, offset = {{[0-9]+}} : i64} : tensor<100xf32>
# CONSTANT: return %[[T]], %[[F]], %[[FS]], %[[I]], %[[IS]], %[[B]], %[[BIG]]
g = GraphBuilder(opset=13)
g.output(g.node("Constant", [], value=np.array([[1, 2], [3, 4]], np.int32)), [2, 2], np.int32)
g.output(g.node("Constant", [], value_float=2.5), [])
g.output(g.node("Constant", [], value_floats=[1.0, 2.0]), [2])
g.output(g.node("Constant", [], value_int=7), [], np.int64)
g.output(g.node("Constant", [], value_ints=[3, -1]), [2], np.int64)
g.output(g.node("Constant", [], value=np.array([True, False, True])), [3], np.bool_)
g.output(g.node("Constant", [], ["big"], value=np.arange(100, dtype=np.float32)), [100])
g.save(f"{out}/constant.onnx")

# SHAPEOPS-LABEL: func.func @main
# SHAPEOPS-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>
# SHAPEOPS-NOT: cleave.shape
# SHAPEOPS-NOT: cleave.constant_of_shape
# SHAPEOPS-NOT: cleave.range
# SHAPEOPS-DAG: %[[FULL:.+]] = cleave.constant dense<[2, 3, 4]> : tensor<3xi64>
# SHAPEOPS-DAG: %[[TAIL:.+]] = cleave.constant dense<[3, 4]> : tensor<2xi64>
# SHAPEOPS-DAG: %[[SIZE:.+]] = cleave.constant dense<24> : tensor<i64>
# SHAPEOPS-DAG: %[[FILL:.+]] = cleave.constant dense<7> : tensor<2x3x4xi64>
# SHAPEOPS-DAG: %[[ZEROS:.+]] = cleave.constant dense<0.000000e+00> : tensor<3x4xf32>
# SHAPEOPS-DAG: %[[RANGE:.+]] = cleave.constant dense<[0, 1, 2]> : tensor<3xi64>
# SHAPEOPS-DAG: %[[FRANGE:.+]] = cleave.constant dense<[1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<3xf32>
# SHAPEOPS: return %[[FULL]], %[[TAIL]], %[[SIZE]], %[[FILL]], %[[ZEROS]], %[[RANGE]], %[[FRANGE]]
g = GraphBuilder(opset=17)
x = g.input("x", [2, 3, 4])
full = g.node("Shape", [x])
tail = g.node("Shape", [x], start=-2)
size = g.node("Size", [x])
fill = g.node("ConstantOfShape", [full], value=np.array([7], np.int64))
zeros = g.node("ConstantOfShape", [tail])
dim1 = g.node("Gather", [full, g.const(np.int64(1))])
rng = g.node("Range", [g.const(np.int64(0)), dim1, g.const(np.int64(1))])
frange = g.node("Range", [g.const(np.float32(1)), g.const(np.float32(2.1)), g.const(np.float32(0.5))])
for v in (full, tail, size, fill, zeros, rng, frange):
    g.output(v)
g.declare_reference_shapes()
g.save(f"{out}/shape_ops.onnx")
