# Model-local functions (FunctionProto, as torch's exporters write for
# modules kept whole) are inlined before import: calls inside functions too,
# attributes that refer to the call's (or to the function's default),
# omitted optional inputs and outputs, an output that passes an input
# through, and overloads (IR 10). Inlined nodes are named
# <call>/<function node>, so errors and profiles point into the function.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/nested.onnx --mlir-print-debuginfo | FileCheck %s --check-prefix=NESTED
# Two calls of Block, each calling Dense twice: eight matrix products named
# by their chain of calls (the second call of Block is unnamed: Block_1).
# Dense's alpha is the call's (0.1) in fc1 and the function's default (0.25)
# in fc2.
# NESTED: cleave.leaky_relu {{.*}}{alpha = 1.000000e-01 : f32}{{.*}} loc(#[[FC1:loc[0-9]+]])
# NESTED: cleave.leaky_relu {{.*}}{alpha = 2.500000e-01 : f32}{{.*}} loc(#[[FC2:loc[0-9]+]])
# NESTED: cleave.leaky_relu {{.*}}{alpha = 1.000000e-01 : f32}
# NESTED: cleave.leaky_relu {{.*}}{alpha = 2.500000e-01 : f32}
# NESTED: return
# NESTED-DAG: #[[FC1]] = loc("block0/fc1/act"
# NESTED-DAG: #[[FC2]] = loc("block0/fc2/act"
# NESTED-DAG: loc("block0/fc1/MatMul_0"
# NESTED-DAG: loc("block0/fc2/MatMul_0"
# NESTED-DAG: loc("Block_1/fc1/MatMul_0"
# NESTED-DAG: loc("Block_1/fc2/MatMul_0"
# NESTED-DAG: loc("block0/fc1/bias"
# NESTED-DAG: loc("Block_1/two"
#
# The inlined model computes what onnxruntime computes with the functions
# (the graph also defines a value named as an inlined one would be,
# block0/fc1/u: the inlined one is renamed, or the import would fail).
# RUN: cleave compile %t/nested.onnx -o %t/nested.cleave --quiet
# RUN: %python -m cleave.testing.check_bundle %t/nested.onnx %t/nested.cleave | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: out: float32[2, 8], {{.*}}: ok
# NUMERIC: skip: float32[2, 8], {{.*}}: ok
#
# Overloads (IR 10) pick the function by (domain, name, overload); an output
# left out of a call is computed and dropped, and an output that is an input
# of the function passes it through. onnxruntime refuses both of the latter,
# so these are checked against numpy.
# RUN: cleave compile %t/overload.onnx -o %t/overload.cleave --quiet
# RUN: cleave compile %t/passthrough.onnx -o %t/passthrough.cleave --quiet
# RUN: %python %s check-local %t | FileCheck %s --check-prefix=LOCAL
# LOCAL: overloads: 2*x + 3*x agrees
# LOCAL: passed-through outputs: 4*x + 2*x, x agrees
#
# An operator cleave lacks inside a function is listed under its inlined
# name, with the others, in the one error.
# RUN: not cleave-translate --import-onnx %t/unsupported.onnx 2>&1 | FileCheck %s --check-prefix=MISSINGOP
# MISSINGOP: error: 2 nodes use operators that cleave does not support:
# MISSINGOP-NEXT: {{^}}  NonZero (opset 17): 'outer/nz', 'outer/inner_call/NonZero_0'
#
# RUN: not cleave-translate --import-onnx %t/recursive.onnx 2>&1 | FileCheck %s --check-prefix=RECURSIVE
# RECURSIVE: recursive.onnx:0:0: error: node 'top' calls function 'test.fn.F': function 'test.fn.F' calls itself (test.fn.F -> test.fn.G -> test.fn.F)
#
# Inlining is bounded before anything is copied, in nodes (a fan of calls
# doubling at each level) and in bytes (names that grow with the depth of
# calls, attributes that references copy into every inlined node).
# RUN: not cleave-translate --import-onnx %t/fan.onnx 2>&1 | FileCheck %s --check-prefix=FAN
# FAN: fan.onnx:0:0: error: inlining the model's functions makes more than 100000 nodes (at node 'top')
# RUN: not cleave-translate --import-onnx %t/long-names.onnx 2>&1 | FileCheck %s --check-prefix=LONGNAMES
# LONGNAMES: long-names.onnx:0:0: error: inlining the model's functions makes more than 32 MiB of nodes and names (at node 'top')
# RUN: not cleave-translate --import-onnx %t/attribute-copies.onnx 2>&1 | FileCheck %s --check-prefix=ATTRCOPIES
# ATTRCOPIES: attribute-copies.onnx:0:0: error: inlining the model's functions makes more than 32 MiB of nodes and names (at node 'top')
# A fan within both bounds, 16 levels deep, is inlined whole: 2^15 Relus,
# the last named by its whole chain of calls.
# RUN: cleave-translate --import-onnx %t/deep-fan.onnx --mlir-print-debuginfo -o %t/deep-fan.mlir
# RUN: grep -c "= cleave.relu " %t/deep-fan.mlir | FileCheck %s --check-prefix=DEEPFAN
# DEEPFAN: {{^}}32768{{$}}
# RUN: FileCheck %s --check-prefix=DEEPNAME < %t/deep-fan.mlir
# DEEPNAME: loc("top/F1_1/F2_1/F3_1/F4_1/F5_1/F6_1/F7_1/F8_1/F9_1/F10_1/F11_1/F12_1/F13_1/F14_1/F15_1/Relu_0"
# RUN: not cleave-translate --import-onnx %t/opset.onnx 2>&1 | FileCheck %s --check-prefix=OPSET
# OPSET: error: node 'call' calls function 'test.fn.Dense': the function uses opset 18 of the default ONNX domain and the model uses opset 17; cleave inlines functions of the model's opset only
# RUN: not cleave-translate --import-onnx %t/inputs.onnx 2>&1 | FileCheck %s --check-prefix=INPUTS
# INPUTS: error: node 'call' calls function 'test.fn.Dense': the call passes 4 inputs and the function takes 3
# RUN: not cleave-translate --import-onnx %t/outputs.onnx 2>&1 | FileCheck %s --check-prefix=OUTPUTS
# OUTPUTS: error: node 'call' calls function 'test.fn.Dense': the call names 2 outputs and the function returns 1
# RUN: not cleave-translate --import-onnx %t/undefined.onnx 2>&1 | FileCheck %s --check-prefix=UNDEFINED
# UNDEFINED: error: node 'call' calls function 'test.fn.Bad': its node 'call/Relu_0' reads 'ghost', which is neither an input of the function nor an output of an earlier node of it
# RUN: not cleave-translate --import-onnx %t/redefined.onnx 2>&1 | FileCheck %s --check-prefix=REDEFINED
# REDEFINED: error: node 'call' calls function 'test.fn.Bad': its node 'call/Neg_1' writes 't', which the function already defines
# RUN: not cleave-translate --import-onnx %t/no-output.onnx 2>&1 | FileCheck %s --check-prefix=NOOUTPUT
# NOOUTPUT: error: node 'call' calls function 'test.fn.Bad': no node of the function computes its output 'missing'
# RUN: not cleave-translate --import-onnx %t/duplicate.onnx 2>&1 | FileCheck %s --check-prefix=DUPLICATE
# DUPLICATE: error: function 'test.fn.Dense' is defined more than once

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DOMAIN = "test.fn"
OPSET = 17


def opsets(version=OPSET):
    return [helper.make_opsetid("", version), helper.make_opsetid(DOMAIN, 1)]


def ref_attribute(name, kind=onnx.AttributeProto.FLOAT):
    """An attribute (a float unless `kind` says otherwise) that takes the
    value of the caller's `name`."""
    attribute = onnx.AttributeProto()
    attribute.name = name
    attribute.ref_attr_name = name
    attribute.type = kind
    return attribute


def dense(version=OPSET):
    """Dense(x, w, b) -> y = LeakyRelu(x @ w + b, alpha); alpha defaults to
    0.25."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["t"]),
        helper.make_node("Add", ["t", "b"], ["u"], name="bias"),
        helper.make_node("LeakyRelu", ["u"], ["y"], name="act"),
    ]
    nodes[2].attribute.append(ref_attribute("alpha"))
    return helper.make_function(
        DOMAIN, "Dense", ["x", "w", "b"], ["y"], nodes, opsets(version),
        attribute_protos=[helper.make_attribute("alpha", 0.25)])


def block():
    """Block(x, w1, b1, w2, b2) -> (x + Dense(Dense(x, alpha), default),
    2 * x)."""
    fc1 = helper.make_node("Dense", ["x", "w1", "b1"], ["h"], name="fc1",
                           domain=DOMAIN)
    fc1.attribute.append(ref_attribute("alpha"))
    nodes = [
        fc1,
        helper.make_node("Dense", ["h", "w2", "b2"], ["h2"], name="fc2",
                         domain=DOMAIN),
        helper.make_node("Add", ["h2", "x"], ["y"], name="residual"),
        helper.make_node("Constant", [], ["two"], name="two",
                         value=numpy_helper.from_array(np.float32([2.0]))),
        helper.make_node("Mul", ["x", "two"], ["skip"]),
    ]
    return helper.make_function(
        DOMAIN, "Block", ["x", "w1", "b1", "w2", "b2"], ["y", "skip"], nodes,
        opsets(), attributes=["alpha"])


def passthrough(out):
    """Outputs left out of a call, and outputs that are inputs (which
    onnxruntime does not run): Twice(x) -> (x + x, x), Pass(x) -> x."""
    twice = helper.make_function(
        DOMAIN, "Twice", ["x"], ["y", "x"],
        [helper.make_node("Add", ["x", "x"], ["y"])], opsets())
    identity = helper.make_function(DOMAIN, "Pass", ["x"], ["x"], [],
                                    opsets())
    calls = [
        helper.make_node("Twice", ["x"], ["a"], domain=DOMAIN),
        helper.make_node("Twice", ["a"], ["b", "c"], domain=DOMAIN),
        helper.make_node("Add", ["b", "c"], ["out"]),
        helper.make_node("Pass", ["x"], ["same"], domain=DOMAIN),
    ]
    save(f"{out}/passthrough.onnx", calls, [twice, identity],
         outputs=[value("out", [2, 8]), value("same", [2, 8])])


def value(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(path, nodes, functions, inputs=None, outputs=None, initializers=(),
         ir_version=10, version=OPSET):
    graph = helper.make_graph(
        nodes, "functions", inputs or [value("x", [2, 8])],
        outputs or [value("out", [2, 8])], initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=opsets(version),
                              functions=functions)
    model.ir_version = ir_version
    onnx.save(model, path)


def nested(out):
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(
        rng.standard_normal(shape).astype(np.float32) * 0.5, name)
        for name, shape in [("W1", [8, 8]), ("B1", [8]), ("W2", [8, 8]),
                            ("B2", [8])]]
    args = ["W1", "B1", "W2", "B2"]
    calls = [
        helper.make_node("Block", ["x", *args], ["y0", "unused"],
                         name="block0", domain=DOMAIN, alpha=0.1),
        helper.make_node("Block", ["y0", *args], ["y1", "s1"], domain=DOMAIN,
                         alpha=0.1),
        helper.make_node("Add", ["y1", "s1"], ["out"]),
        # A name an inlined value would take: the inlined one gets another.
        helper.make_node("Neg", ["s1"], ["block0/fc1/u"]),
        helper.make_node("Neg", ["block0/fc1/u"], ["skip"]),
    ]
    save(f"{out}/nested.onnx", calls, [dense(), block()],
         outputs=[value("out", [2, 8]), value("skip", [2, 8])],
         initializers=weights)


def overload(out):
    def scale(name, factor):
        node = helper.make_node(
            "Mul", ["x", "k"], ["y"])
        const = helper.make_node("Constant", [], ["k"],
                                 value=numpy_helper.from_array(
                                     np.float32([factor])))
        return helper.make_function(DOMAIN, "Scale", ["x"], ["y"],
                                    [const, node], opsets(), overload=name)

    calls = [
        helper.make_node("Scale", ["x"], ["a"], domain=DOMAIN,
                         overload="double"),
        helper.make_node("Scale", ["x"], ["b"], domain=DOMAIN,
                         overload="triple"),
        helper.make_node("Add", ["a", "b"], ["out"]),
    ]
    save(f"{out}/overload.onnx", calls,
         [scale("double", 2.0), scale("triple", 3.0)])


def fan(levels, names=(None, None)):
    """F0 calls F1 twice (the calls named `names`), ..., the last function
    is one Relu."""
    functions = []
    for level in range(levels):
        if level == levels - 1:
            body = [helper.make_node("Relu", ["x"], ["y"])]
        else:
            callee = f"F{level + 1}"
            body = [helper.make_node(callee, ["x"], ["h"], domain=DOMAIN,
                                     name=names[0]),
                    helper.make_node(callee, ["h"], ["y"], domain=DOMAIN,
                                     name=names[1])]
        functions.append(helper.make_function(
            DOMAIN, f"F{level}", ["x"], ["y"], body, opsets()))
    return functions


def errors(out):
    relu_call = lambda name, op, inputs=("x",), outputs=("out",): \
        helper.make_node(op, list(inputs), list(outputs), name=name,
                         domain=DOMAIN)

    inner = helper.make_function(
        DOMAIN, "Inner", ["x"], ["y"],
        [helper.make_node("NonZero", ["x"], ["y"])], opsets())
    outer = helper.make_function(
        DOMAIN, "Outer", ["x"], ["y"],
        [helper.make_node("NonZero", ["x"], ["a"], name="nz"),
         helper.make_node("Inner", ["x"], ["y"], name="inner_call",
                          domain=DOMAIN)], opsets())
    save(f"{out}/unsupported.onnx", [relu_call("outer", "Outer")],
         [inner, outer],
         outputs=[helper.make_tensor_value_info("out", TensorProto.INT64,
                                                None)])

    f = helper.make_function(
        DOMAIN, "F", ["x"], ["y"],
        [helper.make_node("G", ["x"], ["y"], domain=DOMAIN)], opsets())
    g = helper.make_function(
        DOMAIN, "G", ["x"], ["y"],
        [helper.make_node("F", ["x"], ["y"], domain=DOMAIN)], opsets())
    save(f"{out}/recursive.onnx", [relu_call("top", "F")], [f, g])

    # F0 calls F1 twice, ..., F23 is one Relu: 2^23 nodes.
    save(f"{out}/fan.onnx", [relu_call("top", "F0")], fan(24))
    # 2^13 Relus, each named by a chain of 13 calls of 500-character names:
    # far fewer nodes than the limit, about 110 MB of names.
    save(f"{out}/long-names.onnx", [relu_call("top", "F0")],
         fan(14, ["a" * 500, "b" * 500]))
    save(f"{out}/deep-fan.onnx", [relu_call("top", "F0")], fan(16))

    # A call passes a 64 KiB tensor attribute to a function that calls
    # another 64 times, whose 64 Constants each take it as their value:
    # 4096 nodes, 256 MiB of copies.
    constants = []
    for i in range(64):
        node = helper.make_node("Constant", [], [f"c{i}"])
        node.attribute.append(ref_attribute("v", onnx.AttributeProto.TENSOR))
        constants.append(node)
    constants.append(helper.make_node("Add", ["x", "c63"], ["y"]))
    copies = helper.make_function(DOMAIN, "Copies", ["x"], ["y"], constants,
                                  opsets(), attributes=["v"])
    calls = []
    for i in range(64):
        calls.append(helper.make_node("Copies", [f"h{i}" if i else "x"],
                                      ["y" if i == 63 else f"h{i + 1}"],
                                      domain=DOMAIN))
        calls[-1].attribute.append(
            ref_attribute("v", onnx.AttributeProto.TENSOR))
    spread = helper.make_function(DOMAIN, "Spread", ["x"], ["y"], calls,
                                  opsets(), attributes=["v"])
    top = relu_call("top", "Spread")
    top.attribute.append(helper.make_attribute(
        "v", numpy_helper.from_array(np.zeros([16384], np.float32))))
    save(f"{out}/attribute-copies.onnx", [top], [spread, copies])

    w = [numpy_helper.from_array(np.zeros([8, 8], np.float32), "W"),
         numpy_helper.from_array(np.zeros([8], np.float32), "B")]
    save(f"{out}/opset.onnx",
         [relu_call("call", "Dense", ["x", "W", "B"])], [dense(18)],
         initializers=w)
    save(f"{out}/inputs.onnx",
         [relu_call("call", "Dense", ["x", "W", "B", "B"])], [dense()],
         initializers=w)
    save(f"{out}/outputs.onnx",
         [relu_call("call", "Dense", ["x", "W", "B"], ["out", "extra"])],
         [dense()], initializers=w)
    save(f"{out}/duplicate.onnx",
         [relu_call("call", "Dense", ["x", "W", "B"])], [dense(), dense()],
         initializers=w)

    def bad(nodes, outputs=("y",)):
        return helper.make_function(DOMAIN, "Bad", ["x"], list(outputs),
                                    nodes, opsets())

    save(f"{out}/undefined.onnx", [relu_call("call", "Bad")],
         [bad([helper.make_node("Relu", ["ghost"], ["y"])])])
    save(f"{out}/redefined.onnx", [relu_call("call", "Bad")],
         [bad([helper.make_node("Relu", ["x"], ["t"]),
               helper.make_node("Neg", ["x"], ["t"]),
               helper.make_node("Relu", ["t"], ["y"])])])
    save(f"{out}/no-output.onnx", [relu_call("call", "Bad")],
         [bad([helper.make_node("Relu", ["x"], ["y"])], ["missing"])])


def check(bundle, x, expected, label):
    import cleave

    got = cleave.Session(bundle).run({"x": x})
    for name, want in expected.items():
        error = float(np.max(np.abs(got[name] - want)))
        assert error <= 1e-6 * float(np.max(np.abs(want))), (name, error)
    print(f"{label} agrees")


def check_local(out):
    x = np.random.default_rng(1).standard_normal([2, 8]).astype(np.float32)
    check(f"{out}/overload.cleave", x, {"out": 5.0 * x},
          "overloads: 2*x + 3*x")
    check(f"{out}/passthrough.cleave", x, {"out": 6.0 * x, "same": x},
          "passed-through outputs: 4*x + 2*x, x")


if __name__ == "__main__":
    if sys.argv[1] == "check-local":
        check_local(sys.argv[2])
    else:
        out = sys.argv[1]
        nested(out)
        overload(out)
        passthrough(out)
        errors(out)
