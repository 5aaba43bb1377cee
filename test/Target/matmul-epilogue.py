# A float32 matrix product applies the bias add, the residual add and the
# activation that follow it in its kernel in a CPU program: a transformer's
# feed-forward layer as exporters write it (MatMul, Add of the bias, GELU
# in its erf decomposition, MatMul, Add of the bias, Add of the layer's
# input) is two steps, "matmul + bias + gelu" and "matmul + bias + add";
# GELU's tanh form (ONNX Gelu, opset 20), a SiLU written as Sigmoid and
# Mul, and a ReLU after a product too small for a second thread are each
# one step. An ONNX Gemm (torch's Linear on 2-D inputs, B transposed)
# adds its C itself and takes the residual add and the activation: a
# multilayer perceptron with a shortcut is "gemm + relu" and "gemm + add",
# and a Gemm of a full C (left to OpenBLAS) "gemm + add + clip". Every
# output agrees with onnxruntime, and so does the same model compiled with
# --no-fuse, where each stays a loop of its own.
#
# A CUDA program takes the same steps: cuBLASLt adds the bias and applies
# the ReLU, the residual is its C, and one pass of the kernels' own applies
# the other activations (their numerics are runtime/kernels/cuda/test's,
# which run where a GPU is). A training step's products keep the ops after
# them as loops there as well.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave compile %t/model.onnx -o %t/fused.cleave --quiet
# RUN: FileCheck %s < %t/fused.cleave/programs/stage_0.cpp
# CHECK: matmul + bias + gelu (/ffn/up)
# CHECK: static const int64_t ints[] = {4};
# CHECK: matmul + bias + add (/ffn/down)
# CHECK: static const int64_t ints[] = {0};
# CHECK: matmul + bias + gelu (/tanh/proj)
# CHECK: static const int64_t ints[] = {5};
# CHECK: matmul + silu (/gate/proj)
# CHECK: static const int64_t ints[] = {3};
# CHECK: matmul + bias + relu (/small/proj)
# CHECK: static const int64_t ints[] = {1};
# CHECK: gemm + relu (/mlp/fc1)
# CHECK: static const int64_t ints[] = {0, 1, 1};
# CHECK: gemm + add (/mlp/fc2)
# CHECK: static const int64_t ints[] = {0, 1, 0};
# CHECK: gemm + add + clip (/full/second)
# CHECK: static const int64_t ints[] = {0, 0, 2};
# RUN: cleave compile %t/model.onnx -o %t/cuda.cleave --target h200-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=CUDA < %t/cuda.cleave/programs/stage_0.cu
# CUDA: matmul + bias + gelu (/ffn/up)
# CUDA: static const int64_t ints[] = {4};
# CUDA: cleave_cuda_matmul(ctx, in, 4, out, 1, ints, floats)
# CUDA: matmul + bias + add (/ffn/down)
# CUDA-NEXT: cleave_rt_step
# CUDA-NEXT: {
# CUDA-NEXT: const CleaveTensor in[] = {{[{][{]}}(arena + {{[0-9]+}}), CLEAVE_F32, 3, {2, 64, 512}},
# CUDA-NEXT: {((uint8_t *)weights + {{[0-9]+}}), CLEAVE_F32, 2, {512, 128}},
# CUDA-NEXT: {((uint8_t *)weights + {{[0-9]+}}), CLEAVE_F32, 1, {128}},
# CUDA-NEXT: {((uint8_t *)inputs[0]), CLEAVE_F32, 3, {2, 64, 128}}};
# CUDA: static const int64_t ints[] = {0};
# CUDA: cleave_cuda_matmul(ctx, in, 4, out, 1, ints, floats)
# CUDA: matmul + bias + gelu (/tanh/proj)
# CUDA: static const int64_t ints[] = {5};
# CUDA: matmul + silu (/gate/proj)
# CUDA: static const int64_t ints[] = {3};
# CUDA: matmul + bias + relu (/small/proj)
# CUDA: static const int64_t ints[] = {1};
# CUDA: gemm + relu (/mlp/fc1)
# CUDA: static const int64_t ints[] = {0, 1, 1};
# CUDA: cleave_cuda_gemm(ctx, in, 4, out, 1, ints, floats)
# CUDA: gemm + add (/mlp/fc2)
# CUDA: static const int64_t ints[] = {0, 1, 0};
# CUDA: gemm + add + clip (/full/second)
# CUDA: static const int64_t ints[] = {0, 0, 2};
# CUDA-NEXT: static const double floats[] = {1.0, 0.5, -0.5, 0.5};
# CUDA-NEXT: cleave_cuda_gemm(ctx, in, 4, out, 1, ints, floats)
# CUDA-NOT: // {{[0-9]+}}: {{relu|add|clip|sigmoid|gelu|erf}}
# RUN: %python %s train-model %t
# RUN: cleave compile %t/train.onnx -o %t/train.cleave --train --loss loss --optimizer sgd --lr 0.1 --target h200-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=TRAIN < %t/train.cleave/programs/stage_0.cu
# TRAIN-NOT: {{matmul|gemm}} +
# TRAIN: matmul (/train/fc1)
# TRAIN: cleave_cuda_matmul(
# TRAIN: add (/train/bias1)
# TRAIN: relu (/train/relu)
# TRAIN-NOT: {{matmul|gemm}} +
# RUN: cleave compile %t/model.onnx -o %t/loops.cleave --quiet --no-fuse
# RUN: FileCheck %s --check-prefix=LOOPS < %t/loops.cleave/programs/stage_0.cpp
# LOOPS-NOT: {{matmul|gemm}} +
# RUN: %python %s check %t fused | FileCheck %s --check-prefix=NUMERIC
# RUN: %python %s check %t loops | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: ffn: max abs error {{.*}} ok
# NUMERIC: tanh: max abs error {{.*}} ok
# NUMERIC: gate: max abs error {{.*}} ok
# NUMERIC: small: max abs error {{.*}} ok
# NUMERIC: mlp: max abs error {{.*}} ok
# NUMERIC: full: max abs error {{.*}} ok

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

work = sys.argv[2]
if sys.argv[1] == "train-model":
    # MatMul, bias, ReLU, MatMul, bias and a mean squared error: a
    # regression a training step fits.
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(
        (rng.standard_normal(shape) * 0.1).astype(np.float32), name)
        for name, shape in (("w1", [16, 32]), ("b1", [32]), ("w2", [32, 4]),
                            ("b2", [4]))]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="/train/fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="/train/bias1"),
        helper.make_node("Relu", ["hb"], ["hr"], name="/train/relu"),
        helper.make_node("MatMul", ["hr", "w2"], ["o"], name="/train/fc2"),
        helper.make_node("Add", ["o", "b2"], ["y"], name="/train/bias2"),
        helper.make_node("Sub", ["y", "target"], ["e"], name="/train/error"),
        helper.make_node("Mul", ["e", "e"], ["e2"], name="/train/square"),
        helper.make_node("ReduceMean", ["e2"], ["loss"], name="/train/loss",
                         keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "train",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16]),
         helper.make_tensor_value_info("target", TensorProto.FLOAT, [8, 4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, f"{work}/train.onnx")
elif sys.argv[1] == "build":
    rng = np.random.default_rng(0)
    inits = []

    def weight(name, shape, scale=0.1):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def constant(name, value):
        inits.append(numpy_helper.from_array(np.array(value, np.float32), name))
        return name

    def linear(prefix, x, n_in, n_out, bias=True):
        nodes = [helper.make_node("MatMul", [x, weight(f"{prefix}_w",
                                                      [n_in, n_out])],
                                  [f"{prefix}_p"], name=f"{prefix}/proj")]
        if not bias:
            return nodes, f"{prefix}_p"
        nodes.append(helper.make_node(
            "Add", [f"{prefix}_p", weight(f"{prefix}_b", [n_out])],
            [f"{prefix}_pb"], name=f"{prefix}/bias"))
        return nodes, f"{prefix}_pb"

    nodes = []
    # The feed-forward layer: 128 -> 512 -> 128 over 2 x 64 tokens.
    up, h = linear("/ffn/up", "x", 128, 512)
    up[0].name = "/ffn/up"
    nodes += up
    nodes += [
        helper.make_node("Div", [h, constant("sqrt2", 1.4142135)], ["g_div"],
                         name="/ffn/gelu/div"),
        helper.make_node("Erf", ["g_div"], ["g_erf"], name="/ffn/gelu/erf"),
        helper.make_node("Add", ["g_erf", constant("one", 1.0)], ["g_add"],
                         name="/ffn/gelu/add"),
        helper.make_node("Mul", [h, "g_add"], ["g_mul"], name="/ffn/gelu/mul"),
        helper.make_node("Mul", ["g_mul", constant("half", 0.5)], ["g"],
                         name="/ffn/gelu/half"),
    ]
    down, d = linear("/ffn/down", "g", 512, 128)
    down[0].name = "/ffn/down"
    nodes += down
    nodes.append(helper.make_node("Add", ["x", d], ["ffn"],
                                  name="/ffn/residual"))
    # GELU's tanh form, as ONNX's own operator.
    proj, t = linear("/tanh", "x", 128, 256)
    nodes += proj
    nodes.append(helper.make_node("Gelu", [t], ["tanh"], name="/tanh/gelu",
                                  approximate="tanh"))
    # A SiLU gate with no bias, as Llama's feed-forward layers have.
    proj, s = linear("/gate", "x", 128, 64, bias=False)
    nodes += proj
    nodes += [helper.make_node("Sigmoid", [s], ["s_sig"], name="/gate/sigmoid"),
              helper.make_node("Mul", [s, "s_sig"], ["gate"], name="/gate/mul")]
    # A product of 2^17 multiply-adds, and a ReLU.
    proj, r = linear("/small", "x", 128, 8)
    nodes += proj
    nodes.append(helper.make_node("Relu", [r], ["small"], name="/small/relu"))

    # torch's Linear layers on a 2-D input: 256 -> 256 -> 256 over 64 rows,
    # with a shortcut around both.
    nodes += [
        helper.make_node("Gemm", ["flat", weight("fc1_w", [256, 256]),
                                  weight("fc1_b", [256])], ["fc1"],
                         name="/mlp/fc1", transB=1),
        helper.make_node("Relu", ["fc1"], ["fc1_relu"], name="/mlp/relu"),
        helper.make_node("Gemm", ["fc1_relu", weight("fc2_w", [256, 256]),
                                  weight("fc2_b", [256])], ["fc2"],
                         name="/mlp/fc2", transB=1),
        helper.make_node("Add", ["fc2", "flat"], ["mlp"], name="/mlp/residual"),
    ]
    # Two Gemms of a full C, B as it is, their sum clipped.
    nodes += [
        helper.make_node("Gemm", ["flat", weight("f1_w", [256, 32]),
                                  weight("f1_c", [64, 32])], ["f1"],
                         name="/full/first"),
        helper.make_node("Gemm", ["flat", weight("f2_w", [256, 32]),
                                  weight("f2_c", [64, 32])], ["f2"],
                         name="/full/second", beta=0.5),
        helper.make_node("Add", ["f1", "f2"], ["f_sum"], name="/full/add"),
        helper.make_node("Clip", ["f_sum", constant("lo", -0.5),
                                  constant("hi", 0.5)], ["full"],
                         name="/full/clip"),
    ]

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64, 128])
    flat = helper.make_tensor_value_info("flat", TensorProto.FLOAT, [64, 256])
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
               for n in ("ffn", "tanh", "gate", "small", "mlp", "full")]
    graph = helper.make_graph(nodes, "products", [x, flat], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    onnx.save(model, f"{work}/model.onnx")
else:
    import onnxruntime as ort

    import cleave

    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((2, 64, 128)).astype(np.float32),
             "flat": rng.standard_normal((64, 256)).astype(np.float32)}
    got = cleave.Session(f"{work}/{sys.argv[3]}.cleave").run(feeds)
    session = ort.InferenceSession(f"{work}/model.onnx",
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    for name, want in zip(names, session.run(None, feeds)):
        error = float(np.abs(got[name] - want).max())
        ok = got[name].shape == want.shape and error <= 1e-5 * np.abs(want).max()
        print(f"{name}: max abs error {error:.2e} {'ok' if ok else 'MISMATCH'}")
