# Pools and squeeze-and-excitation between convolutions keep the
# channel-blocked layout (nChw8c in a default x86-64-v3 bundle):
# EfficientNet's block (expansion, depthwise, global average pool, two small
# convolutions, a sigmoid gate that scales each channel, projection) on a
# batch of 2, so that the gate differs per sample; a global max pool in its
# place; a per-channel constant added between two convolutions, broadcast
# over the batch; and windowed pools between convolutions (ResNet's stem
# max pool, an average pool with ceil_mode and padding it does not count).
# The global pools read the blocked X (their int, xBlock, is 8), the
# windowed ones read and write blocks (their last int), and the loops that
# scale or shift each channel index the per-channel operand by channel
# block and lane. Every output agrees with onnxruntime.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave compile %t/model.onnx -o %t/model.cleave --quiet
# RUN: FileCheck %s < %t/model.cleave/programs/stage_0.cpp
# CHECK: conv + silu (/se/depthwise)
# CHECK: static const int64_t ints[] = {{[{]}}2, 64, 1, 1, 1, 1, 1, 1, 1, 1, 3, 8, 8};
# CHECK: global_average_pool (/se/squeeze)
# CHECK: static const int64_t ints[] = {8};
# CHECK: mul (/se/excite)
# The gate [2, 64, 1, 1]: rows of 8 lanes, 1024 rows per channel block,
# the gates of both samples one after the other (sample and block merged).
# CHECK: for (int64_t o = 0; o < 16384; ++o) {
# CHECK-NEXT: const int64_t b0 = o * 8;
# CHECK-NEXT: const int64_t b1 = (o / 1024) * 8;
# CHECK-NEXT: float row[8];
# CHECK: conv (/se/project)
# CHECK: static const int64_t ints[] = {{[{]}}2, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 8, 0};
# CHECK: global_max_pool (/max/squeeze)
# CHECK: static const int64_t ints[] = {8};
# CHECK: add (/shift/add)
# The constant [1, 64, 1, 1] is the same for both samples.
# CHECK: const int64_t b1 = ((o / 1024) % 8) * 8;
# CHECK: conv (/shift/b)
# CHECK: static const int64_t ints[] = {{[{]}}2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 8, 0};
# CHECK: conv + relu (/stem/conv)
# CHECK: static const int64_t ints[] = {{[{]}}2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 8};
# CHECK: max_pool (/stem/pool)
# CHECK: static const int64_t ints[] = {{[{]}}2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 8};
# CHECK: conv (/stem/next)
# CHECK: static const int64_t ints[] = {{[{]}}2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 8, 0};
# CHECK: average_pool (/avg/pool)
# CHECK: static const int64_t ints[] = {{[{]}}2, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 1, 0, 8};
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: se: max abs error {{.*}} ok
# NUMERIC: max: max abs error {{.*}} ok
# NUMERIC: shift: max abs error {{.*}} ok
# NUMERIC: stem: max abs error {{.*}} ok
# NUMERIC: avg: max abs error {{.*}} ok

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

work = sys.argv[2]
if sys.argv[1] == "build":
    rng = np.random.default_rng(0)
    inits = []

    def weight(name, shape, scale=0.2):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def silu(prefix, x):
        return [helper.make_node("Sigmoid", [x], [f"{prefix}_g"],
                                 name=f"{prefix}/sigmoid"),
                helper.make_node("Mul", [x, f"{prefix}_g"], [f"{prefix}_s"],
                                 name=f"{prefix}/mul")]

    def block(prefix, pool):
        """Expansion 32 -> 64, depthwise 3x3, squeeze 64 -> 16 -> 64, the
        gate, projection 64 -> 32, on 32 x 32 maps: every convolution but
        the squeezed ones large enough for oneDNN."""
        p = prefix
        return [
            helper.make_node("Conv", ["x", weight(f"{p}_we", [64, 32, 1, 1]),
                                      weight(f"{p}_be", [64])], [f"{p}_e"],
                             name=f"{p}/expand"),
            *silu(f"{p}/expand_act", f"{p}_e"),
            helper.make_node("Conv", [f"{p}/expand_act_s",
                                      weight(f"{p}_wd", [64, 1, 3, 3]),
                                      weight(f"{p}_bd", [64])], [f"{p}_d"],
                             name=f"{p}/depthwise", group=64,
                             pads=[1, 1, 1, 1]),
            *silu(f"{p}/depthwise_act", f"{p}_d"),
            helper.make_node(pool, [f"{p}/depthwise_act_s"], [f"{p}_q"],
                             name=f"{p}/squeeze"),
            helper.make_node("Conv", [f"{p}_q", weight(f"{p}_w1", [16, 64, 1, 1]),
                                      weight(f"{p}_b1", [16])], [f"{p}_f1"],
                             name=f"{p}/fc1"),
            *silu(f"{p}/fc1_act", f"{p}_f1"),
            helper.make_node("Conv", [f"{p}/fc1_act_s",
                                      weight(f"{p}_w2", [64, 16, 1, 1]),
                                      weight(f"{p}_b2", [64])], [f"{p}_f2"],
                             name=f"{p}/fc2"),
            helper.make_node("Sigmoid", [f"{p}_f2"], [f"{p}_gate"],
                             name=f"{p}/gate"),
            helper.make_node("Mul", [f"{p}/depthwise_act_s", f"{p}_gate"],
                             [f"{p}_x"], name=f"{p}/excite"),
            helper.make_node("Conv", [f"{p}_x", weight(f"{p}_wp", [32, 64, 1, 1])],
                             [p.strip("/")], name=f"{p}/project"),
        ]

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32, 32, 32])
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
               for n in ("se", "max", "shift", "stem", "avg")]
    nodes = block("/se", "GlobalAveragePool") + block("/max", "GlobalMaxPool")
    nodes += [
        helper.make_node("Conv", ["x", weight("wa", [64, 32, 3, 3])], ["a"],
                         name="/shift/a", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["a", weight("k", [1, 64, 1, 1], 1.0)],
                         ["ak"], name="/shift/add"),
        helper.make_node("Conv", ["ak", weight("wb", [32, 64, 3, 3])],
                         ["shift"], name="/shift/b", pads=[1, 1, 1, 1]),
        # ResNet's stem: a convolution and its ReLU, a 3x3 max pool of
        # stride 2 padded by 1 (32x32 to 16x16), a convolution after it.
        helper.make_node("Conv", ["x", weight("ws", [64, 32, 3, 3])], ["s"],
                         name="/stem/conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["s"], ["sr"], name="/stem/relu"),
        helper.make_node("MaxPool", ["sr"], ["sp"], name="/stem/pool",
                         kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["sp", weight("wn", [32, 64, 3, 3])],
                         ["stem"], name="/stem/next", pads=[1, 1, 1, 1]),
        # A 3x3 average pool of stride 2 whose last window, by ceil_mode,
        # hangs over the end padding (32x32 to 16x16), the padding not
        # counted.
        helper.make_node("Conv", ["x", weight("wv", [64, 32, 3, 3])], ["v"],
                         name="/avg/conv", pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["v"], ["vp"], name="/avg/pool",
                         kernel_shape=[3, 3], strides=[2, 2],
                         pads=[0, 0, 1, 1], ceil_mode=1),
        helper.make_node("Conv", ["vp", weight("wm", [32, 64, 3, 3])],
                         ["avg"], name="/avg/next", pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(nodes, "squeeze_excite", [x], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, f"{work}/model.onnx")
else:
    import onnxruntime as ort

    import cleave

    data = np.random.default_rng(1).standard_normal((2, 32, 32, 32)).astype(
        np.float32)
    got = cleave.Session(f"{work}/model.cleave").run({"x": data})
    session = ort.InferenceSession(f"{work}/model.onnx",
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    for name, want in zip(names, session.run(None, {"x": data})):
        error = float(np.abs(got[name] - want).max())
        ok = got[name].shape == want.shape and error <= 1e-5 * np.abs(want).max()
        print(f"{name}: max abs error {error:.2e} {'ok' if ok else 'MISMATCH'}")
