# float16 and bfloat16 models: the CUDA emitter stores them as __half /
# __nv_bfloat16 and computes fused loops in float; the library kernels take
# them as they are. Host C++ has no half arithmetic: its programs store such
# values as their bits (cl::float16, cl::bfloat16), which fused loops and
# send/recv hold, but a library kernel that would take one is refused,
# naming the kernel and the node.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave compile %t/f16.onnx -o %t/f16.cleave --target h100-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=F16 < %t/f16.cleave/programs/stage_0.cu
# F16: __global__ void cleave_forward_loop_{{[0-9]+}}(const __half *__restrict__ x0, const __half *__restrict__ x1, __half *__restrict__ y)
# F16: const float v0 = static_cast<float>(x0[i]);
# F16: y[i] = static_cast<__half>(v{{[0-9]+}});
# F16: cleave_cuda_matmul(ctx, in, 4, out, 1, ints, floats)
# F16: {{.*}}CLEAVE_F16, 2, {8, 16}}
# F16: cleave_cuda_softmax(
# RUN: cleave compile %t/bf16.onnx -o %t/bf16.cleave --target a100-80gb --emit-only --quiet
# RUN: FileCheck %s --check-prefix=BF16 < %t/bf16.cleave/programs/stage_0.cu
# BF16: const __nv_bfloat16 *__restrict__ x0
# BF16: CLEAVE_BF16
#
# Where the CUDA runtime is built, nvcc builds both programs.
# RUN: %if cuda %{ cleave compile %t/f16.onnx -o %t/f16-built.cleave --target h100-sxm --quiet %}
# RUN: %if cuda %{ cleave compile %t/bf16.onnx -o %t/bf16-built.cleave --target h200-sxm --quiet %}
#
# RUN: not cleave compile %t/f16.onnx -o %t/f16-cpu.cleave --target cpu 2>&1 | FileCheck %s --check-prefix=CPU
# CPU: cleave compile: error: C++ programs cannot compute in float16: matmul (node 'MatMul_0') takes a float16 tensor, which only fused loops and send/recv hold
# RUN: not cleave compile %t/bf16.onnx -o %t/bf16-cpu.cleave --target cpu 2>&1 | FileCheck %s --check-prefix=CPU-BF16
# CPU-BF16: cleave compile: error: C++ programs cannot compute in bfloat16: matmul (node 'MatMul_0') takes a bfloat16 tensor, which only fused loops and send/recv hold

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(elem: int, np_type, path: str) -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    b = rng.standard_normal((16,)).astype(np.float32)
    if elem == TensorProto.BFLOAT16:
        # NumPy has no bfloat16: keep the upper half of each float32.
        def tensor(name, a):
            bits = (a.view(np.uint32) >> 16).astype(np.uint16)
            t = helper.make_tensor(name, elem, a.shape, bits.tobytes(), raw=True)
            return t
    else:
        def tensor(name, a):
            return numpy_helper.from_array(a.astype(np_type), name)
    x = helper.make_tensor_value_info("x", elem, [8, 16])
    y = helper.make_tensor_value_info("y", elem, [8, 16])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Softmax", ["r"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(nodes, "half", [x], [y],
                              [tensor("w", w), tensor("b", b)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


build(TensorProto.FLOAT16, np.float16, sys.argv[1] + "/f16.onnx")
build(TensorProto.BFLOAT16, None, sys.argv[1] + "/bf16.onnx")
