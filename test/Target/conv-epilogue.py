# A convolution followed by a ReLU or a clip applies it in its kernel in a
# CPU program: one step, "conv + relu" or "conv + clip", where the
# activation was a loop of its own (as it stays with --no-fuse). A CUDA
# program takes the same steps (cuDNN's fused call for a bias and a ReLU,
# the kernels' own pass for the rest; runtime/kernels/cuda/test checks
# their numerics where a GPU is). Dense convolutions large enough for oneDNN (its post-op),
# small ones and depthwise ones (the kernels' own pass) agree with
# onnxruntime, fused or not; so does a ReLU feeding a residual add, which
# reads what the convolution stored. A residual add after a convolution is
# the convolution's too, with the ReLU after it: ResNet's block (oneDNN's
# sum post-op, writing the result where the residual was) and a small
# projection onto the graph's input (the kernels' own pass). A SiLU as
# torch exports it (Sigmoid, then Mul) is the convolution's too: oneDNN's
# swish post-op, and the kernels' own pass for a depthwise one on a large
# plane.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave compile %t/model.onnx -o %t/fused.cleave --quiet
# RUN: FileCheck %s < %t/fused.cleave/programs/stage_0.cpp
# CHECK: conv + relu (/dense)
# CHECK: conv + clip (/small)
# CHECK: conv + clip (/depthwise)
# CHECK: conv + relu (/residual)
# CHECK: add (/add)
# CHECK: conv + relu (/res_a)
# CHECK: conv + relu (/res_b)
# CHECK: conv + add + relu (/res_c)
# CHECK-NEXT: cleave_rt_step
# CHECK-NEXT: {
# CHECK-NEXT: const CleaveTensor in[] = {{[{][{]}}(arena + [[R6:[0-9]+]]), CLEAVE_F32, 4, {1, 32, 8, 8}},
# CHECK-NEXT: weights
# CHECK-NEXT: {nullptr, 0, 0, {0}},
# CHECK-NEXT: {(arena + [[R5:[0-9]+]]), CLEAVE_F32, 4, {1, 32, 8, 8}}};
# CHECK-NEXT: CleaveTensor out[] = {{[{][{]}}(arena + [[R5]]), CLEAVE_F32
# CHECK: conv + add (/proj)
# CHECK: conv + silu (/silu)
# CHECK: conv + silu (/silu_depthwise)
# CHECK-NOT: // {{[0-9]+}}: relu
# CHECK-NOT: // {{[0-9]+}}: clip
# CHECK-NOT: // {{[0-9]+}}: sigmoid
# RUN: cleave compile %t/model.onnx -o %t/plain.cleave --no-fuse --quiet
# RUN: FileCheck %s --check-prefix=PLAIN < %t/plain.cleave/programs/stage_0.cpp
# PLAIN: : relu (/dense_relu)
# PLAIN: : clip (/small_clip)
# PLAIN: : sigmoid (/silu_sigmoid)
# PLAIN-NOT: conv + 
# RUN: cleave compile %t/model.onnx -o %t/cuda.cleave --target h100-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=CUDA < %t/cuda.cleave/programs/stage_0.cu
# CUDA: conv + relu (/dense)
# CUDA: static const int64_t ints[] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
# CUDA-NEXT: static const double floats[] = {0.0, 0.0};
# CUDA-NEXT: cleave_cuda_conv(ctx, in, 4, out, 1, ints, floats)
# CUDA: conv + clip (/small)
# CUDA: static const int64_t ints[] = {2, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0, 0};
# CUDA-NEXT: static const double floats[] = {-0.10000000149011612, 0.20000000298023224};
# CUDA: conv + clip (/depthwise)
# CUDA: conv + relu (/residual)
# CUDA: add (/add)
# CUDA: conv + relu (/res_a)
# CUDA: conv + relu (/res_b)
# CUDA: conv + add + relu (/res_c)
# CUDA-NEXT: cleave_rt_step
# CUDA-NEXT: {
# CUDA-NEXT: const CleaveTensor in[] = {{[{][{]}}(arena + [[C6:[0-9]+]]), CLEAVE_F32, 4, {1, 32, 8, 8}},
# CUDA-NEXT: weights
# CUDA-NEXT: {nullptr, 0, 0, {0}},
# CUDA-NEXT: {(arena + [[C5:[0-9]+]]), CLEAVE_F32, 4, {1, 32, 8, 8}}};
# CUDA-NEXT: CleaveTensor out[] = {{[{][{]}}(arena + [[C5]]), CLEAVE_F32
# CUDA: cleave_cuda_conv(ctx, in, 4, out, 1, ints, floats)
# CUDA: conv + add (/proj)
# CUDA: conv + silu (/silu)
# CUDA: conv + silu (/silu_depthwise)
# CUDA-NOT: // {{[0-9]+}}: relu
# CUDA-NOT: // {{[0-9]+}}: clip
# CUDA-NOT: // {{[0-9]+}}: sigmoid
# RUN: %python %s check %t fused | FileCheck %s --check-prefix=NUMERIC
# RUN: %python %s check %t plain | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: dense: max abs error {{.*}} ok
# NUMERIC: small: max abs error {{.*}} ok
# NUMERIC: depthwise: max abs error {{.*}} ok
# NUMERIC: residual: max abs error {{.*}} ok
# NUMERIC: block: max abs error {{.*}} ok
# NUMERIC: projection: max abs error {{.*}} ok
# NUMERIC: silu: max abs error {{.*}} ok
# NUMERIC: silu_depthwise: max abs error {{.*}} ok

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

work = sys.argv[2]
if sys.argv[1] == "build":
    rng = np.random.default_rng(0)

    def weight(name, shape):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 8, 8])
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
               for n in ("dense", "small", "depthwise", "residual", "block",
                         "projection", "silu", "silu_depthwise")]
    pads = dict(pads=[1, 1, 1, 1])
    nodes = [
        # 32 -> 32 channels, 3x3 on 8x8: oneDNN.
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="/dense", **pads),
        helper.make_node("Relu", ["c1"], ["dense"], name="/dense_relu"),
        # 32 -> 2 channels, 1x1 on a 2x2 crop: the kernels here.
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["crop"]),
        helper.make_node("Conv", ["crop", "w2", "b2"], ["c2"], name="/small"),
        helper.make_node("Clip", ["c2", "lo", "hi"], ["small"], name="/small_clip"),
        # Depthwise, stride 2.
        helper.make_node("Conv", ["x", "w3", "b3"], ["c3"], name="/depthwise",
                         group=32, strides=[2, 2], **pads),
        helper.make_node("Clip", ["c3", "zero", "six"], ["depthwise"],
                         name="/depthwise_clip"),
        # ReLU, then a residual add.
        helper.make_node("Conv", ["x", "w4"], ["c4"], name="/residual", **pads),
        helper.make_node("Relu", ["c4"], ["r4"], name="/residual_relu"),
        helper.make_node("Add", ["r4", "x"], ["residual"], name="/add"),
        # A residual block: a's output is b's input and c's residual.
        helper.make_node("Conv", ["x", "w5"], ["c5"], name="/res_a", **pads),
        helper.make_node("Relu", ["c5"], ["r5"], name="/res_a_relu"),
        helper.make_node("Conv", ["r5", "w6", "b6"], ["c6"], name="/res_b", **pads),
        helper.make_node("Relu", ["c6"], ["r6"], name="/res_b_relu"),
        helper.make_node("Conv", ["r6", "w7"], ["c7"], name="/res_c", **pads),
        helper.make_node("Add", ["c7", "r5"], ["s7"], name="/res_add"),
        helper.make_node("Relu", ["s7"], ["r7"], name="/res_relu"),
        helper.make_node("Conv", ["r7", "w9"], ["block"], name="/res_d", **pads),
        # 1x1, 32 -> 32 on 8x8 (below oneDNN's size), plus the input.
        helper.make_node("Conv", ["x", "w8", "b8"], ["c8"], name="/proj"),
        helper.make_node("Add", ["x", "c8"], ["projection"], name="/proj_add"),
        # SiLU after a dense convolution (oneDNN's swish post-op).
        helper.make_node("Conv", ["x", "w10", "b10"], ["c10"], name="/silu", **pads),
        helper.make_node("Sigmoid", ["c10"], ["g10"], name="/silu_sigmoid"),
        helper.make_node("Mul", ["c10", "g10"], ["silu"], name="/silu_mul"),
        # SiLU after a depthwise convolution on a 64x64 plane (the direct
        # loop), the mul's operands the other way round.
        helper.make_node("Resize", ["x", "", "scales"], ["big"], mode="nearest"),
        helper.make_node("Conv", ["big", "w11"], ["c11"], name="/silu_depthwise",
                         group=32, **pads),
        helper.make_node("Sigmoid", ["c11"], ["g11"], name="/silu_depthwise_sigmoid"),
        helper.make_node("Mul", ["g11", "c11"], ["silu_depthwise"],
                         name="/silu_depthwise_mul"),
    ]
    scalars = [numpy_helper.from_array(np.array(v, np.float32), n)
               for n, v in (("lo", -0.1), ("hi", 0.2), ("zero", 0.0), ("six", 6.0))]
    ints = [numpy_helper.from_array(np.array(v, np.int64), n)
            for n, v in (("starts", [0, 0]), ("ends", [2, 2]), ("axes", [2, 3]))]
    inits = [weight("w1", [32, 32, 3, 3]), weight("b1", [32]),
             weight("w2", [2, 32, 1, 1]), weight("b2", [2]),
             weight("w3", [32, 1, 3, 3]), weight("b3", [32]),
             weight("w4", [32, 32, 3, 3]), weight("w5", [32, 32, 3, 3]),
             weight("w6", [32, 32, 3, 3]), weight("b6", [32]),
             weight("w7", [32, 32, 3, 3]), weight("w8", [32, 32, 1, 1]),
             weight("b8", [32]), weight("w9", [32, 32, 3, 3]),
             weight("w10", [32, 32, 3, 3]), weight("b10", [32]),
             weight("w11", [32, 1, 3, 3]),
             numpy_helper.from_array(np.array([1, 1, 8, 8], np.float32), "scales")
             ] + scalars + ints
    graph = helper.make_graph(nodes, "convs", [x], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, f"{work}/model.onnx")
else:
    import onnxruntime as ort

    import cleave

    data = np.random.default_rng(1).standard_normal((1, 32, 8, 8)).astype(np.float32)
    got = cleave.Session(f"{work}/{sys.argv[3]}.cleave").run({"x": data})
    session = ort.InferenceSession(f"{work}/model.onnx")
    names = [o.name for o in session.get_outputs()]
    for name, want in zip(names, session.run(None, {"x": data})):
        error = float(np.abs(got[name] - want).max())
        ok = got[name].shape == want.shape and error <= 1e-5 * np.abs(want).max()
        print(f"{name}: max abs error {error:.2e} {'ok' if ok else 'MISMATCH'}")
