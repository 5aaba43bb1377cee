# torch's nn.MultiheadAttention exports attention as products of rank 3,
# batch*heads x sequence x head_size (Whisper's and wav2vec 2.0's
# encoders): q divided by the square root of the head size, k^T transposed
# straight from the key projection, an optional additive mask. cleave fuses
# both forms into cleave.attention over one batch of 4 heads, and the
# bundle agrees with onnxruntime (rtol 1e-5 of the largest output) with and
# without the mask: 200 queries are one full block of 128 rows and a
# partial one, and the unmasked scores go straight to the softmax.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave compile %t/model.onnx -o %t/model.cleave --quiet
# RUN: FileCheck %s --check-prefix=IR < %t/model.cleave/model.mlir
# IR-COUNT-2: cleave.attention
# IR-NOT: cleave.softmax
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: plain: max abs error {{.*}} ok
# NUMERIC: masked: max abs error {{.*}} ok

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HEADS, SEQUENCE, HEAD = 4, 200, 16
work = sys.argv[2]
if sys.argv[1] == "build":
    f = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("q", f, [HEADS, SEQUENCE, HEAD]),
        helper.make_tensor_value_info("k", f, [SEQUENCE, HEADS, HEAD]),
        helper.make_tensor_value_info("v", f, [HEADS, SEQUENCE, HEAD]),
        helper.make_tensor_value_info("mask", f, [SEQUENCE, SEQUENCE]),
    ]
    outputs = [helper.make_tensor_value_info(n, f, None)
               for n in ("plain", "masked")]
    nodes = [
        helper.make_node("Div", ["q", "root"], ["qs"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[1, 2, 0]),
        helper.make_node("MatMul", ["qs", "kt"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=2),
        helper.make_node("MatMul", ["p", "v"], ["plain"]),
        helper.make_node("Div", ["q", "root"], ["qs2"]),
        helper.make_node("Transpose", ["k"], ["kt2"], perm=[1, 2, 0]),
        helper.make_node("MatMul", ["qs2", "kt2"], ["s2"]),
        helper.make_node("Add", ["s2", "mask"], ["b2"]),
        helper.make_node("Softmax", ["b2"], ["p2"], axis=2),
        helper.make_node("MatMul", ["p2", "v"], ["masked"]),
    ]
    root = numpy_helper.from_array(np.array(np.sqrt(HEAD), np.float32), "root")
    graph = helper.make_graph(nodes, "mha", inputs, outputs, [root])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, f"{work}/model.onnx")
else:
    import onnxruntime as ort

    import cleave

    rng = np.random.default_rng(1)
    feeds = {
        "q": rng.standard_normal((HEADS, SEQUENCE, HEAD)).astype(np.float32),
        "k": rng.standard_normal((SEQUENCE, HEADS, HEAD)).astype(np.float32),
        "v": rng.standard_normal((HEADS, SEQUENCE, HEAD)).astype(np.float32),
        # A padding-like mask: the last 30 keys hidden from every query.
        "mask": np.where(np.arange(SEQUENCE) < SEQUENCE - 30, 0.0, -1e9)
        .astype(np.float32)[None, :].repeat(SEQUENCE, 0),
    }
    got = cleave.Session(f"{work}/model.cleave").run(feeds)
    session = ort.InferenceSession(f"{work}/model.onnx",
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    for name, want in zip(names, session.run(None, feeds)):
        error = float(np.abs(got[name] - want).max())
        ok = got[name].shape == want.shape and error <= 1e-5 * np.abs(want).max()
        print(f"{name}: max abs error {error:.2e} {'ok' if ok else 'MISMATCH'}")
