# --input-shape binds the dynamic dimensions of graph inputs; every way of
# getting it wrong is an error that names the input and the option.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
#
# RUN: cleave-translate --import-onnx %t/dynamic.onnx --input-shape ids=2x8 --input-shape scale= | FileCheck %s --check-prefix=BOUND
# BOUND-LABEL: func.func @main
# BOUND-SAME: (%[[IDS:[^:]+]]: tensor<2x8xi64> {cleave.name = "ids"}, %[[SCALE:[^:]+]]: tensor<f32> {cleave.name = "scale"})
# BOUND: cleave.gather {{.*}} -> tensor<2x8x4xf32>
# BOUND: return {{.*}} : tensor<2x8x4xf32>
#
# A model without dynamic dimensions needs no binding; binding a static
# dimension to its own size is allowed.
# RUN: cleave-translate --import-onnx %t/static.onnx | FileCheck %s --check-prefix=STATIC
# RUN: cleave-translate --import-onnx %t/static.onnx --input-shape x=3x4 | FileCheck %s --check-prefix=STATIC
# STATIC: func.func @main(%{{.+}}: tensor<3x4xf32> {cleave.name = "x"})
#
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx 2>&1 | FileCheck %s --check-prefix=UNBOUND
# UNBOUND: dynamic.onnx:0:0: error: input 'ids' has dynamic dimensions 0 ('batch'), 1 (unnamed); bind them with --input-shape ids=<dims> (e.g. --input-shape ids=1x1)
# UNBOUND-NEXT: dynamic.onnx:0:0: error: input 'scale' has no declared shape; give it with --input-shape scale=<dims> (e.g. scale=1x16)
#
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx --input-shape idz=2x8 --input-shape scale= 2>&1 | FileCheck %s --check-prefix=UNKNOWN
# UNKNOWN: dynamic.onnx:0:0: error: --input-shape names 'idz', which is not an input of the model; its inputs are 'ids', 'scale'
#
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx --input-shape ids=2x 2>&1 | FileCheck %s --check-prefix=MALFORMED
# MALFORMED: dynamic.onnx:0:0: error: invalid --input-shape 'ids=2x': dimension '' is not a non-negative integer (dimensions are separated by 'x', e.g. 2x32)
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx --input-shape ids 2>&1 | FileCheck %s --check-prefix=NOEQUALS
# NOEQUALS: error: invalid --input-shape 'ids': expected NAME=DIMS (e.g. input_ids=1x128, or NAME= for a scalar)
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx --input-shape =2 2>&1 | FileCheck %s --check-prefix=NONAME
# NONAME: error: invalid --input-shape '=2': the input name is empty
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx --input-shape ids=2x-8 2>&1 | FileCheck %s --check-prefix=NEGATIVE
# NEGATIVE: error: invalid --input-shape 'ids=2x-8': dimension '-8' is not a non-negative integer
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx --input-shape ids=2x8 --input-shape ids=2x8 2>&1 | FileCheck %s --check-prefix=TWICE
# TWICE: error: invalid --input-shape 'ids=2x8': input 'ids' is given more than once
#
# RUN: not cleave-translate --import-onnx %t/dynamic.onnx --input-shape ids=2x8x1 --input-shape scale= 2>&1 | FileCheck %s --check-prefix=RANK
# RANK: error: --input-shape gives input 'ids' rank 3 (2x8x1) but the model declares rank 2
# RUN: not cleave-translate --import-onnx %t/static.onnx --input-shape x=3x5 2>&1 | FileCheck %s --check-prefix=CONFLICT
# CONFLICT: static.onnx:0:0: error: --input-shape gives input 'x' dimension 1 size 5 but the model declares it as 4

import sys

import numpy as np

from cleave.testing import GraphBuilder

out = sys.argv[1]

g = GraphBuilder(opset=17)
ids = g.input("ids", ["batch", None], np.int64)
scale = g.input("scale", None)
table = g.initializer("table", np.ones((100, 4), np.float32))
g.output(g.node("Mul", [g.node("Gather", [table, ids]), scale]), ["batch", None, 4])
g.save(f"{out}/dynamic.onnx")

g = GraphBuilder(opset=17)
g.output(g.node("Relu", [g.input("x", [3, 4])]), [3, 4])
g.save(f"{out}/static.onnx")
