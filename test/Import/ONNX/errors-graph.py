# Model- and graph-level errors: unsupported operators (all of them in one
# error), opsets, domains, subgraph operators, undefined and duplicate
# values, graph outputs, sparse and string tensors.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
#
# Two different unsupported operators (and a repeated one) are reported
# together, before anything is imported. Unnamed nodes are called
# <OpType>_<index>.
# RUN: not cleave-translate --import-onnx %t/unsupported.onnx 2>&1 | FileCheck %s --check-prefix=UNKNOWNOPS
# UNKNOWNOPS: unsupported.onnx:0:0: error: 3 nodes use operators that cleave does not support:
# UNKNOWNOPS-NEXT: {{^}}  NonZero (opset 17): 'nz'
# UNKNOWNOPS-NEXT: {{^}}  Unique (opset 17): 'Unique_0', 'Unique_2'
# UNKNOWNOPS-NOT: error
#
# Subgraph operators are unsupported operators too.
# RUN: not cleave-translate --import-onnx %t/subgraph.onnx 2>&1 | FileCheck %s --check-prefix=SUBGRAPH
# SUBGRAPH: error: 2 nodes use operators that cleave does not support:
# SUBGRAPH-NEXT: {{^}}  If (opset 17): 'branch'
# SUBGRAPH-NEXT: {{^}}  Loop (opset 17): 'loop'
#
# RUN: not cleave-translate --import-onnx %t/domain.onnx 2>&1 | FileCheck %s --check-prefix=DOMAIN
# DOMAIN: error: 2 nodes use operators that cleave does not support:
# DOMAIN-NEXT: {{^}}  Foo (domain 'org.example', which the model does not import): 'Foo_1'
# DOMAIN-NEXT: {{^}}  FusedMatMul (domain 'com.microsoft', version 1): 'fused'
#
# An operator newer than the model's opset does not exist there.
# RUN: not cleave-translate --import-onnx %t/too-new.onnx 2>&1 | FileCheck %s --check-prefix=TOONEW
# TOONEW: error: 1 node uses an operator that cleave does not support:
# TOONEW-NEXT: {{^}}  Gelu (opset 17): 'Gelu_0'
#
# RUN: not cleave-translate --import-onnx %t/opset10.onnx 2>&1 | FileCheck %s --check-prefix=OPSET10
# OPSET10: opset10.onnx:0:0: error: the model uses opset 10 of the default ONNX domain; cleave supports opsets 11 to 24
# RUN: not cleave-translate --import-onnx %t/opset25.onnx 2>&1 | FileCheck %s --check-prefix=OPSET25
# OPSET25: opset25.onnx:0:0: error: the model uses opset 25 of the default ONNX domain; cleave supports opsets 11 to 24
# RUN: not cleave-translate --import-onnx %t/no-opset.onnx 2>&1 | FileCheck %s --check-prefix=NOOPSET
# NOOPSET: error: the model imports no opset of the default ONNX domain
#
# RUN: not cleave-translate --import-onnx %t/undefined.onnx 2>&1 | FileCheck %s --check-prefix=UNDEFINED
# UNDEFINED: undefined.onnx:0:0: error: node 'add' (Add): input 1 'ghost' names no value defined before the node
#
# RUN: not cleave-translate --import-onnx %t/duplicate-output.onnx 2>&1 | FileCheck %s --check-prefix=DUPOUT
# DUPOUT: error: node 'second' (Neg): output 'y' is already defined by node 'first'
# RUN: not cleave-translate --import-onnx %t/shadow-input.onnx 2>&1 | FileCheck %s --check-prefix=SHADOW
# SHADOW: error: node 'Relu_0' (Relu): output 'x' is already defined by graph input 'x'
# RUN: not cleave-translate --import-onnx %t/duplicate-initializer.onnx 2>&1 | FileCheck %s --check-prefix=DUPINIT
# DUPINIT: error: initializer 'w' is defined more than once
# RUN: not cleave-translate --import-onnx %t/duplicate-input.onnx 2>&1 | FileCheck %s --check-prefix=DUPINPUT
# DUPINPUT: error: graph input 'x' is declared more than once
#
# RUN: not cleave-translate --import-onnx %t/output-missing.onnx 2>&1 | FileCheck %s --check-prefix=OUTMISSING
# OUTMISSING: error: graph output 'nowhere' is not produced by any node
# RUN: not cleave-translate --import-onnx %t/output-shape.onnx 2>&1 | FileCheck %s --check-prefix=OUTSHAPE
# OUTSHAPE: error: graph output 'y' is declared with shape 2x5 but the model computes 2x4
# RUN: not cleave-translate --import-onnx %t/output-type.onnx 2>&1 | FileCheck %s --check-prefix=OUTTYPE
# OUTTYPE: error: graph output 'y' is declared INT64 but the model computes 'f32'
#
# RUN: not cleave-translate --import-onnx %t/sparse.onnx 2>&1 | FileCheck %s --check-prefix=SPARSE
# SPARSE: sparse.onnx:0:0: error: sparse initializers are not supported: 'sp'
# RUN: not cleave-translate --import-onnx %t/string-initializer.onnx 2>&1 | FileCheck %s --check-prefix=STRINIT
# STRINIT: error: initializer 'words' has element type STRING, which cleave does not support
# RUN: not cleave-translate --import-onnx %t/string-input.onnx 2>&1 | FileCheck %s --check-prefix=STRINPUT
# STRINPUT: error: input 'text' has element type STRING, which cleave does not support

import sys

import numpy as np
import onnx
from onnx import helper

from cleave.testing import GraphBuilder

out = sys.argv[1]


def simple(path, opset=17, **kwargs):
    g = GraphBuilder(opset=opset, **kwargs)
    x = g.input("x", [2, 4])
    g.output(g.node("Relu", [x]), [2, 4])
    g.save(f"{out}/{path}")


g = GraphBuilder(opset=17)
x = g.input("x", [2, 4])
v = g.node("Unique", [x], outputs=2)[0]
g.node("NonZero", [v], name="nz")
g.node("Unique", [v], outputs=2)
g.output(v)
g.save(f"{out}/unsupported.onnx")

g = GraphBuilder(opset=17)
c = g.input("c", [], np.bool_)
branch = helper.make_graph([], "b", [], [helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, [])])
g.output(g.node("If", [c], name="branch", then_branch=branch, else_branch=branch), [], np.bool_)
g.node("Loop", ["", c], name="loop", body=branch)
g.save(f"{out}/subgraph.onnx")

g = GraphBuilder(opset=17, extra_opsets={"com.microsoft": 1})
x = g.input("x", [2, 4])
g.output(g.node("FusedMatMul", [x, x], name="fused", domain="com.microsoft"))
g.node("Foo", [x], domain="org.example")
g.save(f"{out}/domain.onnx")

g = GraphBuilder(opset=17)
g.output(g.node("Gelu", [g.input("x", [2])]), [2])
g.save(f"{out}/too-new.onnx")

simple("opset10.onnx", opset=10)
simple("opset25.onnx", opset=25)
g = GraphBuilder(opset=17)
g.output(g.node("Relu", [g.input("x", [2])]), [2])
model = g.model()
del model.opset_import[:]
model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
onnx.save(model, f"{out}/no-opset.onnx")

g = GraphBuilder(opset=17)
x = g.input("x", [2, 4])
g.output(g.node("Add", [x, "ghost"], name="add"))
g.save(f"{out}/undefined.onnx")

g = GraphBuilder(opset=17)
x = g.input("x", [2, 4])
g.node("Relu", [x], ["y"], name="first")
g.node("Neg", [x], ["y"], name="second")
g.output("y", [2, 4])
g.save(f"{out}/duplicate-output.onnx")

g = GraphBuilder(opset=17)
x = g.input("x", [2, 4])
g.node("Relu", [x], ["x"])
g.output("x", [2, 4])
g.save(f"{out}/shadow-input.onnx")

g = GraphBuilder(opset=17)
x = g.input("x", [2, 4])
g.initializer("w", np.ones(4, np.float32))
g.initializer("w", np.zeros(4, np.float32))
g.output(g.node("Add", [x, "w"]), [2, 4])
g.save(f"{out}/duplicate-initializer.onnx")

g = GraphBuilder(opset=17)
x = g.input("x", [2, 4])
g.input("x", [2, 4])
g.output(g.node("Relu", [x]), [2, 4])
g.save(f"{out}/duplicate-input.onnx")

g = GraphBuilder(opset=17)
g.node("Relu", [g.input("x", [2, 4])])
g.output("nowhere", [2, 4])
g.save(f"{out}/output-missing.onnx")

g = GraphBuilder(opset=17)
g.output(g.node("Relu", [g.input("x", [2, 4])], ["y"]), [2, 5])
g.save(f"{out}/output-shape.onnx")

g = GraphBuilder(opset=17)
g.output(g.node("Relu", [g.input("x", [2, 4])], ["y"]), [2, 4], np.int64)
g.save(f"{out}/output-type.onnx")

g = GraphBuilder(opset=17)
x = g.input("x", [4])
g.sparse_initializers.append(
    helper.make_sparse_tensor(
        helper.make_tensor("sp", onnx.TensorProto.FLOAT, [1], [1.0]),
        helper.make_tensor("sp_indices", onnx.TensorProto.INT64, [1], [2]),
        [4],
    )
)
g.output(g.node("Add", [x, "sp"]), [4])
g.save(f"{out}/sparse.onnx")

g = GraphBuilder(opset=17)
x = g.input("x", [2])
g.initializers.append(helper.make_tensor("words", onnx.TensorProto.STRING, [1], [b"hi"]))
g.output(g.node("Identity", ["words"]), [1], onnx.TensorProto.STRING)
g.save(f"{out}/string-initializer.onnx")

g = GraphBuilder(opset=17)
g.output(g.node("Identity", [g.input("text", [2], onnx.TensorProto.STRING)]), [2], onnx.TensorProto.STRING)
g.save(f"{out}/string-input.onnx")
