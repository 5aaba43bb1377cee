# Contractions, convolutions and pooling (auto_pad resolved to explicit
# pads, ConvTranspose's output_shape), normalisations, softmax (the opset-11
# coercion to 2-D) and reductions. Every graph output is declared with the
# shape onnxruntime computes, which the importer checks against its own.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/matmul.onnx | FileCheck %s --check-prefix=MATMUL
# RUN: cleave-translate --import-onnx %t/conv.onnx | FileCheck %s --check-prefix=CONV
# RUN: cleave-translate --import-onnx %t/conv_transpose.onnx | FileCheck %s --check-prefix=CONVT
# RUN: cleave-translate --import-onnx %t/pool.onnx | FileCheck %s --check-prefix=POOL
# RUN: cleave-translate --import-onnx %t/norm.onnx | FileCheck %s --check-prefix=NORM
# RUN: cleave-translate --import-onnx %t/batch_norm_training.onnx | FileCheck %s --check-prefix=BN-TRAINING
# RUN: cleave-translate --import-onnx %t/group_norm18.onnx | FileCheck %s --check-prefix=GN18
# RUN: cleave-translate --import-onnx %t/group_norm21.onnx | FileCheck %s --check-prefix=GN21
# RUN: cleave-translate --import-onnx %t/softmax11.onnx | FileCheck %s --check-prefix=SOFTMAX11
# RUN: cleave-translate --import-onnx %t/softmax13.onnx | FileCheck %s --check-prefix=SOFTMAX13
# RUN: cleave-translate --import-onnx %t/reduce13.onnx | FileCheck %s --check-prefix=REDUCE
# RUN: cleave-translate --import-onnx %t/reduce18.onnx | FileCheck %s --check-prefix=REDUCE
# RUN: cleave-translate --import-onnx %t/reduce_empty.onnx | FileCheck %s --check-prefix=EMPTY

import sys

import numpy as np
import onnx

from cleave.testing import GraphBuilder

out = sys.argv[1]
rng = np.random.default_rng(0)


def weight(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# MATMUL-LABEL: func.func @main
# MATMUL-SAME: (%[[X:[^:]+]]: tensor<2x4x8xf32> {{.*}}, %[[A:[^:]+]]: tensor<4x8xf32>
# MATMUL: %[[W:.+]] = cleave.weight "w" {{.*}} : tensor<8x16xf32>
# MATMUL: %[[MM:.+]] = cleave.matmul %[[X]], %[[W]] : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
# MATMUL: %[[B:.+]] = cleave.weight "b" {{.*}} : tensor<16x8xf32>
# MATMUL: %[[C:.+]] = cleave.constant {{.*}} : tensor<16xf32>
# MATMUL: %[[GEMM:.+]] = cleave.gemm %[[A]], %[[B]], %[[C]] {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
# MATMUL: %[[GEMM2:.+]] = cleave.gemm %[[A]], %[[W]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
# MATMUL: return %[[MM]], %[[GEMM]], %[[GEMM2]]
g = GraphBuilder(opset=13)
x = g.input("x", [2, 4, 8])
a = g.input("a", [4, 8])
mm = g.node("MatMul", [x, g.initializer("w", weight(8, 16))])
gemm = g.node("Gemm", [a, g.initializer("b", weight(16, 8)), g.initializer("c", weight(16))],
              alpha=0.5, beta=2.0, transB=1)
gemm2 = g.node("Gemm", [a, "w"])
for v in (mm, gemm, gemm2):
    g.output(v)
g.declare_reference_shapes()
g.save(f"{out}/matmul.onnx")

# SAME_UPPER with stride 2 on 10: output 5, total pad (5-1)*2+3-10 = 1, put
# at the end; SAME_LOWER puts it at the beginning; VALID pads nothing.
# CONV-LABEL: func.func @main
# CONV-SAME: (%[[X:[^:]+]]: tensor<1x3x10x10xf32> {{.*}}, %[[S:[^:]+]]: tensor<1x4x9xf32>
# CONV: %[[W:.+]] = cleave.weight "w" {{.*}} : tensor<8x3x3x3xf32>
# CONV: %[[B:.+]] = cleave.constant {{.*}} : tensor<8xf32>
# CONV: cleave.conv %[[X]], %[[W]], %[[B]] {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32>
# CONV: cleave.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x5x5xf32>
# CONV: cleave.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
# CONV: cleave.conv %[[X]], %[[W]] {dilations = array<i64: 2, 1>, pads = array<i64: 1, 2, 1, 2>, strides = array<i64: 1, 1>} : (tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x12xf32>
# A 1-D depthwise convolution (group = channels).
# CONV: cleave.conv %[[S]], %{{.+}} {dilations = array<i64: 1>, group = 4 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1>} : (tensor<1x4x9xf32>, tensor<4x1x3xf32>) -> tensor<1x4x9xf32>
g = GraphBuilder(opset=17)
x = g.input("x", [1, 3, 10, 10])
s = g.input("s", [1, 4, 9])
w = g.initializer("w", weight(8, 3, 3, 3))
b = g.initializer("b", weight(8))
g.output(g.node("Conv", [x, w, b], auto_pad="SAME_UPPER", strides=[2, 2]))
g.output(g.node("Conv", [x, w], auto_pad="SAME_LOWER", strides=[2, 2], kernel_shape=[3, 3]))
g.output(g.node("Conv", [x, w], auto_pad="VALID"))
g.output(g.node("Conv", [x, w], pads=[1, 2, 1, 2], dilations=[2, 1]))
g.output(g.node("Conv", [s, g.initializer("dw", weight(4, 1, 3))], pads=[1, 1], group=4))
g.declare_reference_shapes()
g.save(f"{out}/conv.onnx")

# output_shape 10 from input 5, stride 2, kernel 3: total pad 2*4+3-10 = 1,
# at the beginning; SAME_UPPER aims at input * stride and pads at the end.
# CONVT-LABEL: func.func @main
# CONVT: cleave.conv_transpose %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x10x10xf32>
# CONVT: cleave.conv_transpose %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x10x10xf32>
# CONVT: cleave.conv_transpose %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x10x10xf32>
# CONVT: cleave.conv_transpose %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 2>} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x10x8xf32>
g = GraphBuilder(opset=17)
x = g.input("x", [1, 2, 5, 5])
w = g.initializer("w", weight(2, 3, 3, 3))
g.output(g.node("ConvTranspose", [x, w], strides=[2, 2], output_shape=[10, 10]))
g.output(g.node("ConvTranspose", [x, w], strides=[2, 2], auto_pad="SAME_UPPER"))
g.output(g.node("ConvTranspose", [x, w], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]))
# An output_shape one larger than the unpadded output: ONNX's rule gives an
# end pad of -1, that is one more row of output padding.
g.output(g.node("ConvTranspose", [g.input("y", [1, 1, 3, 3]), g.initializer("w2", weight(1, 2, 3, 3))],
                strides=[3, 2], output_shape=[10, 8]))
g.declare_reference_shapes()
g.save(f"{out}/conv_transpose.onnx")

# POOL-LABEL: func.func @main
# POOL-SAME: (%[[X:.+]]: tensor<1x3x10x10xf32>
# POOL: cleave.max_pool %[[X]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x10x10xf32>) -> tensor<1x3x5x5xf32>
# With ceil_mode the last window would start in the end padding, so it is
# dropped (as onnxruntime does): 4, not 5.
# POOL: cleave.average_pool %[[X]] {ceil_mode = true, count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 3>} : (tensor<1x3x10x10xf32>) -> tensor<1x3x4x4xf32>
# POOL: cleave.global_average_pool %[[X]] : (tensor<1x3x10x10xf32>) -> tensor<1x3x1x1xf32>
# POOL: cleave.global_max_pool %[[X]] : (tensor<1x3x10x10xf32>) -> tensor<1x3x1x1xf32>
g = GraphBuilder(opset=17)
x = g.input("x", [1, 3, 10, 10])
# The Indices output is named but unused, which is fine.
mp, _ = g.node("MaxPool", [x], outputs=2, kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
g.output(mp)
g.output(g.node("AveragePool", [x], kernel_shape=[2, 2], strides=[3, 3], pads=[1, 1, 1, 1],
                ceil_mode=1, count_include_pad=1))
g.output(g.node("GlobalAveragePool", [x]))
g.output(g.node("GlobalMaxPool", [x]))
g.declare_reference_shapes()
g.save(f"{out}/pool.onnx")

# NORM-LABEL: func.func @main
# NORM-SAME: (%[[X:[^:]+]]: tensor<2x4x6xf32>
# NORM: cleave.batch_norm %[[X]], {{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<2x4x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6xf32>
# NORM: cleave.instance_norm %[[X]], {{.*}} : (tensor<2x4x6xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6xf32>
# NORM: cleave.layer_norm %[[X]], %{{[^,]+}}, %{{[^ ]+}} {axis = 2 : i64} : (tensor<2x4x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
# Without a bias.
# NORM: cleave.layer_norm %[[X]], %{{[^ ]+}} {axis = 1 : i64} : (tensor<2x4x6xf32>, tensor<4x6xf32>) -> tensor<2x4x6xf32>
# The default stash_type, float, given explicitly (as torch's exporter does).
# NORM: cleave.layer_norm %[[X]], %{{[^,]+}}, %{{[^ ]+}} {axis = 2 : i64} : (tensor<2x4x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
g = GraphBuilder(opset=17)
x = g.input("x", [2, 4, 6])
c4 = [g.const(np.abs(weight(4)) + 0.5) for _ in range(4)]
g.output(g.node("BatchNormalization", [x] + c4, epsilon=1e-3))
g.output(g.node("InstanceNormalization", [x, c4[0], c4[1]]))
g.output(g.node("LayerNormalization", [x, g.const(weight(6)), g.const(weight(6))], axis=-1))
g.output(g.node("LayerNormalization", [x, g.const(weight(4, 6))], axis=1))
g.output(g.node("LayerNormalization", [x, g.const(weight(6)), g.const(weight(6))], axis=-1,
                stash_type=onnx.TensorProto.FLOAT))
g.declare_reference_shapes()
g.save(f"{out}/norm.onnx")

# A training-mode node as torch.onnx exports one (its running-statistic
# outputs unused): the op keeps training_mode and the momentum, which
# cleave-batch-norm-training reads. (onnxruntime's inference build does not
# run training mode, so the shape is declared.)
# BN-TRAINING-LABEL: func.func @main
# BN-TRAINING: cleave.batch_norm {{.*}} {momentum = 8.000000e-01 : f32, training_mode} : (tensor<2x4x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6xf32>
g = GraphBuilder(opset=17)
x = g.input("x", [2, 4, 6])
c4 = [g.const(np.abs(weight(4)) + 0.5) for _ in range(4)]
y, _, _ = g.node("BatchNormalization", [x] + c4, outputs=3, momentum=0.8,
                 training_mode=1)
g.output(y, [2, 4, 6])
g.save(f"{out}/batch_norm_training.onnx")

# Opset 18 scales per group; cleave scales per channel, so each of the two
# group entries is repeated for the group's two channels.
# GN18-LABEL: func.func @main
# GN18-SAME: (%[[X:[^:]+]]: tensor<2x4x6xf32>
# GN18-DAG: %[[SCALE:.+]] = cleave.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>
# GN18-DAG: %[[BIAS:.+]] = cleave.constant dense<[3.000000e+00, 3.000000e+00, 4.000000e+00, 4.000000e+00]> : tensor<4xf32>
# GN18: cleave.group_norm %[[X]], %[[SCALE]], %[[BIAS]] {num_groups = 2 : i64} : (tensor<2x4x6xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6xf32>
g = GraphBuilder(opset=18)
x = g.input("x", [2, 4, 6])
g.output(g.node("GroupNormalization", [x, g.const(np.float32([1, 2])), g.const(np.float32([3, 4]))],
                num_groups=2), [2, 4, 6])
g.save(f"{out}/group_norm18.onnx")

# GN21-LABEL: func.func @main
# GN21-SAME: (%[[X:[^:]+]]: tensor<2x4x6xf32>
# GN21: %[[SCALE:.+]] = cleave.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
# GN21: cleave.group_norm %[[X]], %[[SCALE]], %{{.+}} {num_groups = 2 : i64}
g = GraphBuilder(opset=21)
x = g.input("x", [2, 4, 6])
g.output(g.node("GroupNormalization", [x, g.const(np.float32([1, 2, 3, 4])), g.const(np.zeros(4, np.float32))],
                num_groups=2), [2, 4, 6])
g.save(f"{out}/group_norm21.onnx")

# Before opset 13, Softmax flattens to 2-D at `axis` (default 1).
# SOFTMAX11-LABEL: func.func @main
# SOFTMAX11-SAME: (%[[X:.+]]: tensor<2x3x4xf32>
# SOFTMAX11: %[[FLAT:.+]] = cleave.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<2x12xf32>
# SOFTMAX11: %[[SM:.+]] = cleave.softmax %[[FLAT]] {axis = 1 : i64} : tensor<2x12xf32>
# SOFTMAX11: %[[BACK:.+]] = cleave.reshape %[[SM]] : tensor<2x12xf32> -> tensor<2x3x4xf32>
# On the last axis the coercion changes nothing.
# SOFTMAX11: %[[LAST:.+]] = cleave.log_softmax %[[X]] {axis = 2 : i64} : tensor<2x3x4xf32>
# SOFTMAX11: %[[FLAT0:.+]] = cleave.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<1x24xf32>
# SOFTMAX11: %[[LSM0:.+]] = cleave.log_softmax %[[FLAT0]] {axis = 1 : i64} : tensor<1x24xf32>
# SOFTMAX11: %[[BACK0:.+]] = cleave.reshape %[[LSM0]] : tensor<1x24xf32> -> tensor<2x3x4xf32>
# SOFTMAX11: return %[[BACK]], %[[LAST]], %[[BACK0]]
g = GraphBuilder(opset=11)
x = g.input("x", [2, 3, 4])
g.output(g.node("Softmax", [x]))
g.output(g.node("LogSoftmax", [x], axis=-1))
g.output(g.node("LogSoftmax", [x], axis=0))
g.declare_reference_shapes()
g.save(f"{out}/softmax11.onnx")

# From opset 13 the default axis is the last and no reshape is needed.
# SOFTMAX13-LABEL: func.func @main
# SOFTMAX13-SAME: (%[[X:.+]]: tensor<2x3x4xf32>
# SOFTMAX13-NOT: cleave.reshape
# SOFTMAX13: %[[A:.+]] = cleave.softmax %[[X]] {axis = 2 : i64} : tensor<2x3x4xf32>
# SOFTMAX13: %[[B:.+]] = cleave.softmax %[[X]] {axis = 1 : i64} : tensor<2x3x4xf32>
# SOFTMAX13-NOT: cleave.reshape
# SOFTMAX13: return %[[A]], %[[B]]
g = GraphBuilder(opset=13)
x = g.input("x", [2, 3, 4])
g.output(g.node("Softmax", [x]))
g.output(g.node("Softmax", [x], axis=-2))
g.declare_reference_shapes()
g.save(f"{out}/softmax13.onnx")


# The same reductions at opset 13 (axes attributes, except ReduceSum) and 18
# (axes inputs) import to the same IR.
# REDUCE-LABEL: func.func @main
# REDUCE-SAME: (%[[X:.+]]: tensor<2x3x4xf32>
# REDUCE-NEXT: %[[MEAN:.+]] = cleave.reduce_mean %[[X]] {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
# REDUCE-NEXT: %[[SUM:.+]] = cleave.reduce_sum %[[X]] {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
# REDUCE-NEXT: %[[MAX:.+]] = cleave.reduce_max %[[X]] {axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
# REDUCE-NEXT: %[[MIN:.+]] = cleave.reduce_min %[[X]] {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
# REDUCE-NEXT: %[[PROD:.+]] = cleave.reduce_prod %[[X]] {axes = array<i64: 0>} : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
# REDUCE-NEXT: %[[L2:.+]] = cleave.reduce_l2 %[[X]] {axes = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
# REDUCE-NEXT: %[[SSQ:.+]] = cleave.reduce_sum_square %[[X]] {axes = array<i64: 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
# REDUCE-NEXT: return %[[MEAN]], %[[SUM]], %[[MAX]], %[[MIN]], %[[PROD]], %[[L2]], %[[SSQ]]
def reductions(opset):
    g = GraphBuilder(opset=opset)
    x = g.input("x", [2, 3, 4])

    def reduce(op, axes, moved_at, **attrs):
        if opset >= moved_at:
            inputs = [x] if axes is None else [x, g.const(np.int64(axes))]
            return g.node(op, inputs, **attrs)
        if axes is not None:
            attrs["axes"] = axes
        return g.node(op, [x], **attrs)

    g.output(reduce("ReduceMean", [-1], 18))
    g.output(reduce("ReduceSum", [2, 0], 13, keepdims=0))
    g.output(reduce("ReduceMax", None, 18))
    g.output(reduce("ReduceMin", [1], 18, keepdims=0))
    g.output(reduce("ReduceProd", [0], 18))
    g.output(reduce("ReduceL2", [-2, -1], 18))
    g.output(reduce("ReduceSumSquare", [2], 18, keepdims=0))
    g.declare_reference_shapes()
    g.save(f"{out}/reduce{opset}.onnx")


reductions(13)
reductions(18)


# Empty (or omitted) axes reduce every dimension, unless
# noop_with_empty_axes makes the reduction its input.
# EMPTY-LABEL: func.func @main
# EMPTY-SAME: (%[[X:.+]]: tensor<2x3xf32>
# EMPTY-NEXT: %[[ALL:.+]] = cleave.reduce_sum %[[X]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
# EMPTY-NEXT: %[[ALL2:.+]] = cleave.reduce_max %[[X]] {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
# EMPTY-NEXT: return %[[ALL]], %[[ALL2]], %[[X]], %[[X]]
g = GraphBuilder(opset=18)
x = g.input("x", [2, 3])
g.output(g.node("ReduceSum", [x, g.const(np.zeros(0, np.int64))], keepdims=0))
g.output(g.node("ReduceMax", [x]))
g.output(g.node("ReduceMean", [x, g.const(np.zeros(0, np.int64))], noop_with_empty_axes=1))
g.output(g.node("ReduceL2", [x], noop_with_empty_axes=1))
g.declare_reference_shapes()
g.save(f"{out}/reduce_empty.onnx")
