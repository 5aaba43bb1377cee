# With --onnx-float-weights (what `cleave compile --gradients` imports with)
# the float weights are exactly the parameters training updates: every float
# initializer is a `cleave.weight`, however small, and float tensors of
# Constant nodes are constants, however large. Integer initializers keep the
# usual rule. A node that needs a small float initializer as a constant (a
# Clip bound) reads its bytes.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t/model.onnx
# RUN: cleave-translate --import-onnx --onnx-float-weights %t/model.onnx | FileCheck %s
# RUN: cleave-translate --import-onnx %t/model.onnx | FileCheck %s --check-prefix=DEFAULT

import sys

import numpy as np

from cleave.testing import GraphBuilder

# CHECK-LABEL: func.func @main
# CHECK-DAG: cleave.weight "bias" {{.*}} : tensor<4xf32>
# CHECK-DAG: cleave.weight "scalar" {{.*}} : tensor<f32>
# CHECK-DAG: cleave.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
# CHECK-DAG: cleave.constant dense<{{.*}}> : tensor<100xf32>
# CHECK-DAG: cleave.clip %{{.*}} {max = 2.000000e+00 : f64, min = -5.000000e-01 : f64}
# CHECK-NOT: cleave.weight "lo"
# CHECK-NOT: cleave.weight "hi"
# CHECK: return

# DEFAULT-LABEL: func.func @main
# DEFAULT-DAG: cleave.constant dense<{{.*}}> : tensor<4xf32>
# DEFAULT-DAG: cleave.constant dense<{{.*}}> : tensor<f32>
# DEFAULT-DAG: cleave.weight "{{.*}}" {{.*}} : tensor<100xf32>

g = GraphBuilder(opset=17)
x = g.input("x", [100])
bias = g.initializer("bias", np.arange(4, dtype=np.float32))
scalar = g.initializer("scalar", np.float32(3.0))
ids = g.initializer("ids", np.arange(4, dtype=np.int64))
lo = g.initializer("lo", np.float32(-0.5))
hi = g.initializer("hi", np.float32(2.0))
table = g.node("Constant", [], value=np.linspace(0, 1, 100).astype(np.float32))
y = g.node("Mul", [g.node("Add", [x, table]), scalar])
y = g.node("Clip", [y, lo, hi])
gathered = g.node("Gather", [y, ids], axis=0)
g.output(g.node("Add", [gathered, bias]), [4])
g.save(sys.argv[1])
