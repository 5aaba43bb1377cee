# Data-movement and shape operators: configuration inputs become
# attributes, negative axes are normalised, ONNX's defaults are spelled out
# (Transpose's reversed perm, Squeeze of every unit dimension, Split's even
# parts), and Slice is clamped into one start/end/step per dimension. Every
# graph output is declared with the shape onnxruntime computes.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/reshape.onnx | FileCheck %s --check-prefix=RESHAPE
# RUN: cleave-translate --import-onnx %t/squeeze11.onnx | FileCheck %s --check-prefix=SQUEEZE
# RUN: cleave-translate --import-onnx %t/squeeze13.onnx | FileCheck %s --check-prefix=SQUEEZE
# RUN: cleave-translate --import-onnx %t/split11.onnx | FileCheck %s --check-prefix=SPLIT
# RUN: cleave-translate --import-onnx %t/split13.onnx | FileCheck %s --check-prefix=SPLIT
# RUN: cleave-translate --import-onnx %t/split18.onnx | FileCheck %s --check-prefix=SPLIT18
# RUN: cleave-translate --import-onnx %t/slice.onnx | FileCheck %s --check-prefix=SLICE
# RUN: cleave-translate --import-onnx %t/gather.onnx | FileCheck %s --check-prefix=GATHER
# RUN: cleave-translate --import-onnx %t/pad13.onnx | FileCheck %s --check-prefix=PAD
# RUN: cleave-translate --import-onnx %t/pad18.onnx | FileCheck %s --check-prefix=PAD
# RUN: cleave-translate --import-onnx %t/pad_crop.onnx | FileCheck %s --check-prefix=CROP
# RUN: cleave-translate --import-onnx %t/resize.onnx | FileCheck %s --check-prefix=RESIZE
# RUN: cleave-translate --import-onnx %t/forward.onnx | FileCheck %s --check-prefix=FORWARD

import sys

import numpy as np

from cleave.testing import GraphBuilder

out = sys.argv[1]


def ints(*values):
    return np.array(values, dtype=np.int64)


# RESHAPE-LABEL: func.func @main
# RESHAPE-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>
# `0` copies a dimension and `-1` is inferred.
# RESHAPE: %[[R:.+]] = cleave.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<2x12xf32>
# RESHAPE: %[[F:.+]] = cleave.flatten %[[X]] {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
# RESHAPE: %[[F0:.+]] = cleave.flatten %[[X]] {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
# The default perm reverses the dimensions.
# RESHAPE: %[[T:.+]] = cleave.transpose %[[X]] {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
# RESHAPE: %[[T2:.+]] = cleave.transpose %[[X]] {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
# RESHAPE: %[[C:.+]] = cleave.concat %[[X]], %[[X]] {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
# RESHAPE: %[[E:.+]] = cleave.expand %[[X]] : tensor<2x3x4xf32> -> tensor<5x2x3x4xf32>
# RESHAPE: %[[TILE:.+]] = cleave.tile %[[X]] {repeats = array<i64: 1, 2, 3>} : (tensor<2x3x4xf32>) -> tensor<2x6x12xf32>
# RESHAPE: return %[[R]], %[[F]], %[[F0]], %[[T]], %[[T2]], %[[C]], %[[E]], %[[TILE]]
g = GraphBuilder(opset=17)
x = g.input("x", [2, 3, 4])
g.output(g.node("Reshape", [x, g.const(ints(0, -1))]))
g.output(g.node("Flatten", [x], axis=-1))
g.output(g.node("Flatten", [x], axis=0))
g.output(g.node("Transpose", [x]))
g.output(g.node("Transpose", [x], perm=[0, 2, 1]))
g.output(g.node("Concat", [x, x], axis=-1))
g.output(g.node("Expand", [x, g.const(ints(5, 1, 1, 1))]))
g.output(g.node("Tile", [x, g.const(ints(1, 2, 3))]))
g.declare_reference_shapes()
g.save(f"{out}/reshape.onnx")


# Squeeze and Unsqueeze take their axes as attributes at opset 11 and as
# inputs from 13; both import alike.
# SQUEEZE-LABEL: func.func @main
# SQUEEZE-SAME: (%[[X:[^:]+]]: tensor<1x3x1x4xf32>
# SQUEEZE-NEXT: %[[S:.+]] = cleave.squeeze %[[X]] {axes = array<i64: 0, 2>} : (tensor<1x3x1x4xf32>) -> tensor<3x4xf32>
# SQUEEZE-NEXT: %[[S2:.+]] = cleave.squeeze %[[X]] {axes = array<i64: 2>} : (tensor<1x3x1x4xf32>) -> tensor<1x3x4xf32>
# SQUEEZE-NEXT: %[[U:.+]] = cleave.unsqueeze %[[X]] {axes = array<i64: 0, 5>} : (tensor<1x3x1x4xf32>) -> tensor<1x1x3x1x4x1xf32>
# SQUEEZE-NEXT: return %[[S]], %[[S2]], %[[U]]
def squeeze(opset):
    g = GraphBuilder(opset=opset)
    x = g.input("x", [1, 3, 1, 4])

    def node(op, axes):
        if axes is None:
            return g.node(op, [x])
        if opset >= 13:
            return g.node(op, [x, g.const(ints(*axes))])
        return g.node(op, [x], axes=list(axes))

    g.output(node("Squeeze", None))
    g.output(node("Squeeze", [-2]))
    g.output(node("Unsqueeze", [-1, 0]))
    g.declare_reference_shapes()
    g.save(f"{out}/squeeze{opset}.onnx")


squeeze(11)
squeeze(13)


# SPLIT-LABEL: func.func @main
# SPLIT-SAME: (%[[X:[^:]+]]: tensor<2x6xf32>
# SPLIT-NEXT: %[[E:.+]]:3 = cleave.split %[[X]] {axis = 1 : i64, sizes = array<i64: 2, 2, 2>} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
# SPLIT-NEXT: %[[U:.+]]:2 = cleave.split %[[X]] {axis = 1 : i64, sizes = array<i64: 1, 5>} : (tensor<2x6xf32>) -> (tensor<2x1xf32>, tensor<2x5xf32>)
# SPLIT-NEXT: return %[[E]]#0, %[[E]]#2, %[[U]]#1
def split(opset):
    g = GraphBuilder(opset=opset)
    x = g.input("x", [2, 6])
    even = g.node("Split", [x], outputs=3, axis=-1)
    if opset >= 13:
        uneven = g.node("Split", [x, g.const(ints(1, 5))], outputs=2, axis=1)
    else:
        uneven = g.node("Split", [x], outputs=2, axis=1, split=[1, 5])
    for v in (even[0], even[2], uneven[1]):
        g.output(v)
    g.declare_reference_shapes()
    g.save(f"{out}/split{opset}.onnx")


split(11)
split(13)

# num_outputs (opset 18) rounds the part up; the last part is smaller.
# SPLIT18-LABEL: func.func @main
# SPLIT18: cleave.split %{{.+}} {axis = 0 : i64, sizes = array<i64: 3, 3, 1>} : (tensor<7xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>)
g = GraphBuilder(opset=18)
x = g.input("x", [7])
for v in g.node("Split", [x], outputs=3, num_outputs=3):
    g.output(v)
g.declare_reference_shapes()
g.save(f"{out}/split18.onnx")


# Slice becomes one (start, end, step) per dimension: out-of-range bounds
# are clamped, negative ones count from the end, untouched dimensions are
# taken whole, and negative steps clamp end to -1.
# SLICE-LABEL: func.func @main
# SLICE-SAME: (%[[X:[^:]+]]: tensor<4x10xf32>
# SLICE-NEXT: %[[A:.+]] = cleave.slice %[[X]] {ends = array<i64: 4, 10>, starts = array<i64: 0, 2>, steps = array<i64: 1, 3>} : (tensor<4x10xf32>) -> tensor<4x3xf32>
# SLICE-NEXT: %[[B:.+]] = cleave.slice %[[X]] {ends = array<i64: -1, 10>, starts = array<i64: 3, 0>, steps = array<i64: -1, 1>} : (tensor<4x10xf32>) -> tensor<4x10xf32>
# SLICE-NEXT: %[[C:.+]] = cleave.slice %[[X]] {ends = array<i64: 3, 9>, starts = array<i64: 1, 8>, steps = array<i64: 1, 1>} : (tensor<4x10xf32>) -> tensor<2x1xf32>
# SLICE-NEXT: return %[[A]], %[[B]], %[[C]]
g = GraphBuilder(opset=13)
x = g.input("x", [4, 10])
big = np.iinfo(np.int64).max
g.output(g.node("Slice", [x, g.const(ints(2)), g.const(ints(big)), g.const(ints(1)), g.const(ints(3))]))
g.output(g.node("Slice", [x, g.const(ints(-1)), g.const(ints(-big)), g.const(ints(0)), g.const(ints(-1))]))
g.output(g.node("Slice", [x, g.const(ints(-2, 1)), g.const(ints(-1, 3)), g.const(ints(-1, 0))]))
g.declare_reference_shapes()
g.save(f"{out}/slice.onnx")

# GATHER-LABEL: func.func @main
# GATHER-SAME: (%[[IDS:[^:]+]]: tensor<2x5xi64>
# GATHER: %[[TABLE:.+]] = cleave.weight "table" {{.*}} : tensor<100x8xf32>
# GATHER: %[[EMB:.+]] = cleave.gather %[[TABLE]], %[[IDS]] {axis = 0 : i64} : (tensor<100x8xf32>, tensor<2x5xi64>) -> tensor<2x5x8xf32>
# GATHER: %[[LAST:.+]] = cleave.gather %[[EMB]], %{{.+}} {axis = 2 : i64} : (tensor<2x5x8xf32>, tensor<i64>) -> tensor<2x5xf32>
# GATHER: return %[[EMB]], %[[LAST]]
g = GraphBuilder(opset=13)
ids = g.input("ids", [2, 5], np.int64)
emb = g.node("Gather", [g.initializer("table", np.zeros((100, 8), np.float32)), ids])
g.output(emb)
g.output(g.node("Gather", [emb, g.const(np.int64(-1))], axis=-1))
g.declare_reference_shapes()
g.save(f"{out}/gather.onnx")


# Pad's pads are an input from opset 11; opset 18 adds an axes input that
# selects the padded dimensions. Both import to per-dimension pads.
# PAD-LABEL: func.func @main
# PAD-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>
# PAD-NEXT: %[[C:.+]] = cleave.pad %[[X]] {pads = array<i64: 0, 1, 2, 0, 3, 4>, value = 1.500000e+00 : f64} : (tensor<2x3x4xf32>) -> tensor<2x7x10xf32>
# PAD-NEXT: %[[R:.+]] = cleave.pad %[[X]] {mode = "reflect", pads = array<i64: 0, 0, 1, 0, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x7xf32>
# PAD-NEXT: return %[[C]], %[[R]]
def pad(opset):
    g = GraphBuilder(opset=opset)
    x = g.input("x", [2, 3, 4])
    value = g.const(np.float32(1.5))
    if opset >= 18:
        g.output(g.node("Pad", [x, g.const(ints(1, 2, 3, 4)), value, g.const(ints(1, -1))]))
        g.output(g.node("Pad", [x, g.const(ints(1, 2)), "", g.const(ints(2))], mode="reflect"))
    else:
        g.output(g.node("Pad", [x, g.const(ints(0, 1, 2, 0, 3, 4)), value]))
        g.output(g.node("Pad", [x, g.const(ints(0, 0, 1, 0, 0, 2))], mode="reflect"))
    g.declare_reference_shapes()
    g.save(f"{out}/pad{opset}.onnx")


pad(13)
pad(18)

# Negative pads crop: a pad of the positive parts, then a slice.
# CROP-LABEL: func.func @main
# CROP-SAME: (%[[X:[^:]+]]: tensor<4x5xf32>
# CROP: %[[P:.+]] = cleave.pad %[[X]] {pads = array<i64: 0, 2, 0, 0>} : (tensor<4x5xf32>) -> tensor<4x7xf32>
# CROP: %[[S:.+]] = cleave.slice %[[P]] {ends = array<i64: 3, 7>, starts = array<i64: 1, 0>, steps = array<i64: 1, 1>} : (tensor<4x7xf32>) -> tensor<2x7xf32>
# CROP: return %[[S]]
g = GraphBuilder(opset=13)
x = g.input("x", [4, 5])
g.output(g.node("Pad", [x, g.const(ints(-1, 2, -1, 0))]))
g.declare_reference_shapes()
g.save(f"{out}/pad_crop.onnx")


# Resize stores one scale per dimension; sizes become scales too.
# RESIZE-LABEL: func.func @main
# RESIZE-SAME: (%[[X:[^:]+]]: tensor<1x2x4x6xf32>
# RESIZE: cleave.resize %[[X]] {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 1.500000e+00>} : tensor<1x2x4x6xf32> -> tensor<1x2x8x9xf32>
# RESIZE: cleave.resize %[[X]] {mode = "linear", scales = array<f64: 1.000000e+00, 1.000000e+00, 7.500000e-01, 2.000000e+00>} : tensor<1x2x4x6xf32> -> tensor<1x2x3x12xf32>
# RESIZE: cleave.resize %[[X]] {mode = "cubic", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.500000e+00, 2.500000e+00>} : tensor<1x2x4x6xf32> -> tensor<1x2x10x15xf32>
g = GraphBuilder(opset=18)
x = g.input("x", [1, 2, 4, 6])
empty = g.const(np.zeros(0, np.float32))
g.output(g.node("Resize", [x, "", g.const(np.float32([1, 1, 2, 1.5]))],
                coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
g.output(g.node("Resize", [x, "", empty, g.const(ints(1, 2, 3, 12))], mode="linear"))
# The axes attribute and keep_aspect_ratio_policy (opset 18): the smaller
# ratio (10/4 against 20/6) applies to both axes.
g.output(g.node("Resize", [x, "", "", g.const(ints(10, 20))], mode="cubic", axes=[2, 3],
                keep_aspect_ratio_policy="not_larger"))
g.declare_reference_shapes()
g.save(f"{out}/resize.onnx")

# Identity and inference-mode Dropout forward their input.
# FORWARD-LABEL: func.func @main
# FORWARD-SAME: (%[[X:[^:]+]]: tensor<3xf32>
# FORWARD-NOT: = cleave.
# FORWARD: return %[[X]], %[[X]], %[[X]]
g = GraphBuilder(opset=13)
x = g.input("x", [3])
g.output(g.node("Identity", [x]))
g.output(g.node("Dropout", [x, g.const(np.float32(0.3))]))
g.output(g.node("Dropout", [x, g.const(np.float32(0.3)), g.const(np.bool_(False))], outputs=2)[0])
g.declare_reference_shapes()
g.save(f"{out}/forward.onnx")
