# Elementwise chains that feed a reduction fuse into one generated loop that
# folds them per output element (no intermediate is stored): the mean of
# squares of an RMS norm, the max of an exponential over two axes, an L2
# norm of a difference, a sum over the leading axis. The compiled bundle
# agrees with onnxruntime.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s build %t
# RUN: cleave-translate --import-onnx %t/model.onnx -o %t/model.mlir
# RUN: cleave-translate --print-device-program %t/model.mlir | FileCheck %s
# CHECK-DAG: loop t{{[0-9]+}} = reduce add, mean over [1] of mul(t0, t0)
# CHECK-DAG: loop t{{[0-9]+}} = reduce max over [0, 1] of exp(t0)
# CHECK-DAG: loop t{{[0-9]+}} = reduce add of squares, sqrt over [1] of sub(t0, t{{[0-9]+}})
# CHECK-DAG: loop t{{[0-9]+}} = reduce add over [0] of mul(t0, 
# CHECK-NOT: kernel reduce_
#
# `cleave compile` simplifies first, and the RMS norm becomes the rms_norm
# kernel; the L2 norm of the difference is still one generated loop.
# RUN: cleave compile %t/model.onnx -o %t/model.cleave --quiet
# RUN: FileCheck %s --check-prefix=CPP < %t/model.cleave/programs/stage_0.cpp
# CPP: cleave_cpu_rms_norm(
# CPP: for (int64_t o = 0; o < 8; ++o) {
# CPP:   const int64_t base = o * 32;
# CPP:   float acc = 0.0f;
# CPP:   for (int64_t r = 0; r < 32; ++r) {
# CPP:     const int64_t i = base + r;
# CPP:   y[o] = static_cast<float>(cl::sqrt(acc));
# RUN: %python %s check %t | FileCheck %s --check-prefix=NUMERIC
# NUMERIC: rms: max abs error {{.*}} ok
# NUMERIC: expmax: max abs error {{.*}} ok
# NUMERIC: l2: max abs error {{.*}} ok
# NUMERIC: colsum: max abs error {{.*}} ok
#
# The CUDA program folds the same way, one thread per output element.
# RUN: cleave compile %t/model.onnx -o %t/cuda.cleave --target h100-sxm --emit-only --quiet
# RUN: FileCheck %s --check-prefix=CUDA < %t/cuda.cleave/programs/stage_0.cu
# CUDA: for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < 1;
# CUDA: acc = cl::max(acc, v{{[0-9]+}});
# CUDA: for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < 8;
# CUDA: cleave_cuda_rms_norm(

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

work = sys.argv[2]
if sys.argv[1] == "build":
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 32])
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
               for n in ("rms", "expmax", "l2", "colsum")]
    g = numpy_helper.from_array(
        np.linspace(0.5, 1.5, 32, dtype=np.float32), "g")
    eps = numpy_helper.from_array(np.array(1e-6, dtype=np.float32), "eps")
    shift = numpy_helper.from_array(
        np.linspace(-1, 1, 32, dtype=np.float32).reshape(1, 32), "shift")
    axes1 = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes1")
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"]),
        helper.make_node("ReduceMean", ["sq", "axes1"], ["ms"], keepdims=1),
        helper.make_node("Add", ["ms", "eps"], ["mse"]),
        helper.make_node("Sqrt", ["mse"], ["rms_d"]),
        helper.make_node("Div", ["x", "rms_d"], ["xn"]),
        helper.make_node("Mul", ["xn", "g"], ["rms"]),
        helper.make_node("Exp", ["x"], ["e"]),
        helper.make_node("ReduceMax", ["e"], ["expmax"], keepdims=0),
        helper.make_node("Sub", ["x", "shift"], ["d"]),
        helper.make_node("ReduceL2", ["d", "axes1"], ["l2"], keepdims=0),
        helper.make_node("Mul", ["x", "g"], ["xg"]),
        helper.make_node("ReduceSum", ["xg", "axes0"], ["colsum"], keepdims=0),
    ]
    axes0 = numpy_helper.from_array(np.array([0], dtype=np.int64), "axes0")
    graph = helper.make_graph(nodes, "reductions", [x], outputs,
                              [g, eps, shift, axes1, axes0])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.save(model, f"{work}/model.onnx")
else:
    import onnxruntime as ort

    import cleave

    data = np.random.default_rng(0).standard_normal((8, 32)).astype(np.float32)
    got = cleave.Session(f"{work}/model.cleave").run({"x": data})
    session = ort.InferenceSession(f"{work}/model.onnx")
    names = [o.name for o in session.get_outputs()]
    for name, want in zip(names, session.run(None, {"x": data})):
        error = float(np.abs(got[name] - want).max())
        ok = got[name].shape == want.shape and error <= 1e-5 * np.abs(want).max()
        print(f"{name}: max abs error {error:.2e} {'ok' if ok else 'MISMATCH'}")
