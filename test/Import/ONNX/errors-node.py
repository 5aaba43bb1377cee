# Node-level errors. Each names the node (unnamed ones as <OpType>_<index>)
# and its operator; shape inference failures of the cleave ops surface here
# instead of aborting.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
#
# RUN: not cleave-translate --import-onnx %t/attr-missing.onnx 2>&1 | FileCheck %s --check-prefix=ATTR_MISSING
# ATTR_MISSING: attr-missing.onnx:0:0: error: node 'Concat_0' (Concat): attribute 'axis' is required but missing
#
# RUN: not cleave-translate --import-onnx %t/attr-type.onnx 2>&1 | FileCheck %s --check-prefix=ATTR_TYPE
# ATTR_TYPE: attr-type.onnx:0:0: error: node 'sm' (Softmax): attribute 'axis' must be of type int, not float
#
# RUN: not cleave-translate --import-onnx %t/auto-pad.onnx 2>&1 | FileCheck %s --check-prefix=AUTO_PAD
# AUTO_PAD: auto-pad.onnx:0:0: error: node 'conv' (Conv): attribute 'auto_pad' is 'SAME'; expected NOTSET, VALID, SAME_UPPER or SAME_LOWER
#
# RUN: not cleave-translate --import-onnx %t/axis-range.onnx 2>&1 | FileCheck %s --check-prefix=AXIS_RANGE
# AXIS_RANGE: axis-range.onnx:0:0: error: node 'sm' (Softmax): axis 3 is out of range for rank 2
#
# RUN: not cleave-translate --import-onnx %t/batchnorm-training.onnx 2>&1 | FileCheck %s --check-prefix=BATCHNORM_TRAINING
# BATCHNORM_TRAINING: batchnorm-training.onnx:0:0: error: node 'bn' (BatchNormalization): output 1 ('running_mean') is used, but cleave does not represent running statistics (training mode)
#
# RUN: not cleave-translate --import-onnx %t/broadcast.onnx 2>&1 | FileCheck %s --check-prefix=BROADCAST
# BROADCAST: broadcast.onnx:0:0: error: node 'Add_12' (Add): {{.*}}broadcast{{.*}}2x3{{.*}}'tensor<4xf32>'
#
# RUN: not cleave-translate --import-onnx %t/cast-string.onnx 2>&1 | FileCheck %s --check-prefix=CAST_STRING
# CAST_STRING: cast-string.onnx:0:0: error: node 'Cast_0' (Cast): cast to STRING is not supported
#
# RUN: not cleave-translate --import-onnx %t/constant-sparse.onnx 2>&1 | FileCheck %s --check-prefix=CONSTANT_SPARSE
# CONSTANT_SPARSE: constant-sparse.onnx:0:0: error: node 'c' (Constant): sparse constants are not supported
#
# RUN: not cleave-translate --import-onnx %t/constant-string.onnx 2>&1 | FileCheck %s --check-prefix=CONSTANT_STRING
# CONSTANT_STRING: constant-string.onnx:0:0: error: node 'c' (Constant): string constants are not supported
#
# RUN: not cleave-translate --import-onnx %t/dropout-mask.onnx 2>&1 | FileCheck %s --check-prefix=DROPOUT_MASK
# DROPOUT_MASK: dropout-mask.onnx:0:0: error: node 'drop' (Dropout): output 1 ('mask') is used, but cleave does not represent Dropout's mask output
#
# RUN: not cleave-translate --import-onnx %t/expand.onnx 2>&1 | FileCheck %s --check-prefix=EXPAND
# EXPAND: expand.onnx:0:0: error: node 'Expand_0' (Expand): cannot expand 2x3 to 4x3x5
#
# RUN: not cleave-translate --import-onnx %t/isinf-flag.onnx 2>&1 | FileCheck %s --check-prefix=ISINF_FLAG
# ISINF_FLAG: isinf-flag.onnx:0:0: error: node 'inf' (IsInf): attribute 'detect_negative' is 2; expected 0 or 1
#
# RUN: not cleave-translate --import-onnx %t/mod-fmod.onnx 2>&1 | FileCheck %s --check-prefix=MOD_FMOD
# MOD_FMOD: mod-fmod.onnx:0:0: error: node 'mod' (Mod): attribute 'fmod' is -1; expected 0 or 1
#
# RUN: not cleave-translate --import-onnx %t/mod-types.onnx 2>&1 | FileCheck %s --check-prefix=MOD_TYPES
# MOD_TYPES: mod-types.onnx:0:0: error: node 'mod' (Mod): operands must have the same element type, got 'i32' and 'i64'
#
# RUN: not cleave-translate --import-onnx %t/mod-bool.onnx 2>&1 | FileCheck %s --check-prefix=MOD_BOOL
# MOD_BOOL: mod-bool.onnx:0:0: error: node 'mod' (Mod): 'cleave.mod' op operands must be numeric, got 'i1'
#
# RUN: not cleave-translate --import-onnx %t/isnan-int.onnx 2>&1 | FileCheck %s --check-prefix=ISNAN_INT
# ISNAN_INT: isnan-int.onnx:0:0: error: node 'nan' (IsNaN): 'cleave.is_nan' op operand #0 must be ranked tensor of {{.*}}float{{.*}}, but got 'tensor<4xi32>'
#
# RUN: not cleave-translate --import-onnx %t/input-missing.onnx 2>&1 | FileCheck %s --check-prefix=INPUT_MISSING
# INPUT_MISSING: input-missing.onnx:0:0: error: node 'mm' (MatMul): input 1 is required but missing
#
# RUN: not cleave-translate --import-onnx %t/layernorm-mean.onnx 2>&1 | FileCheck %s --check-prefix=LAYERNORM_MEAN
# LAYERNORM_MEAN: layernorm-mean.onnx:0:0: error: node 'ln' (LayerNormalization): output 1 ('mean') is used, but cleave does not represent LayerNormalization's Mean and InvStdDev outputs
#
# RUN: not cleave-translate --import-onnx %t/layernorm-stash.onnx 2>&1 | FileCheck %s --check-prefix=LAYERNORM_STASH
# LAYERNORM_STASH: layernorm-stash.onnx:0:0: error: node 'ln' (LayerNormalization): stash_type 16 is not supported (only 1, float)
#
# RUN: not cleave-translate --import-onnx %t/matmul.onnx 2>&1 | FileCheck %s --check-prefix=MATMUL
# MATMUL: matmul.onnx:0:0: error: node 'mm' (MatMul): {{.*}}matmul_c1{{.*}}
#
# RUN: not cleave-translate --import-onnx %t/maxpool-indices.onnx 2>&1 | FileCheck %s --check-prefix=MAXPOOL_INDICES
# MAXPOOL_INDICES: maxpool-indices.onnx:0:0: error: node 'pool' (MaxPool): output 1 ('indices') is used, but cleave does not represent MaxPool's Indices output
#
# RUN: not cleave-translate --import-onnx %t/non-constant.onnx 2>&1 | FileCheck %s --check-prefix=NON_CONSTANT
# NON_CONSTANT: non-constant.onnx:0:0: error: node 'reshape' (Reshape): input 1 ('shape', value 'target') must be a constant, but it is computed at run time
#
# RUN: not cleave-translate --import-onnx %t/reshape-target.onnx 2>&1 | FileCheck %s --check-prefix=RESHAPE_TARGET
# RESHAPE_TARGET: reshape-target.onnx:0:0: error: node 'Reshape_0' (Reshape): cannot reshape 2x3 to [-1, -1]: reshape target has more than one -1 (entries 0 and 1)
#
# RUN: not cleave-translate --import-onnx %t/resize-crop.onnx 2>&1 | FileCheck %s --check-prefix=RESIZE_CROP
# RESIZE_CROP: resize-crop.onnx:0:0: error: node 'Resize_0' (Resize): coordinate_transformation_mode 'tf_crop_and_resize' (with a region of interest) is not supported
#
# Scales whose output dimension no tensor can have, or that are not finite.
# RUN: not cleave-translate --import-onnx %t/reshape-huge.onnx 2>&1 | FileCheck %s --check-prefix=RESHAPE_HUGE
# RESHAPE_HUGE: reshape-huge.onnx:0:0: error: node 'Reshape_0' (Reshape): cannot reshape 2x3 to [-1, 7277816997830721539, 7562350]: reshape target has more elements than a tensor can hold
# Negative pads crop; they cannot crop more than the dimension holds, however
# negative (the most negative int64 included).
# RUN: not cleave-translate --import-onnx %t/pad-crop-min.onnx 2>&1 | FileCheck %s --check-prefix=PAD_CROP_MIN
# PAD_CROP_MIN: pad-crop-min.onnx:0:0: error: node 'Pad_0' (Pad): negative pads remove more than dimension 1 holds
# RUN: not cleave-translate --import-onnx %t/pad-crop-both.onnx 2>&1 | FileCheck %s --check-prefix=PAD_CROP_BOTH
# PAD_CROP_BOTH: pad-crop-both.onnx:0:0: error: node 'Pad_0' (Pad): negative pads remove more than dimension 0 holds
# RUN: not cleave-translate --import-onnx %t/resize-huge.onnx 2>&1 | FileCheck %s --check-prefix=RESIZE_HUGE
# RESIZE_HUGE: resize-huge.onnx:0:0: error: node 'Resize_0' (Resize): resizing dimension 1 of size 3 gives 3.000000e+30 elements, more than a dimension can hold
# RUN: not cleave-translate --import-onnx %t/resize-nan.onnx 2>&1 | FileCheck %s --check-prefix=RESIZE_NAN
# RESIZE_NAN: resize-nan.onnx:0:0: error: node 'Resize_0' (Resize): scales must be positive, not nan
# RUN: not cleave-translate --import-onnx %t/resize-sizes-huge.onnx 2>&1 | FileCheck %s --check-prefix=RESIZE_SIZES_HUGE
# RESIZE_SIZES_HUGE: resize-sizes-huge.onnx:0:0: error: node 'Resize_0' (Resize): resizing dimension 0 of size 2 gives {{.*}} elements, more than a dimension can hold
#
# RUN: not cleave-translate --import-onnx %t/rnn-activation.onnx 2>&1 | FileCheck %s --check-prefix=RNN_ACTIVATION
# RNN_ACTIVATION: rnn-activation.onnx:0:0: error: node 'rnn' (RNN): activation 'LeakyRelu' is not supported (Tanh, Relu and Sigmoid are)
#
# RUN: not cleave-translate --import-onnx %t/rnn-lengths.onnx 2>&1 | FileCheck %s --check-prefix=RNN_LENGTHS
# RNN_LENGTHS: rnn-lengths.onnx:0:0: error: node 'rnn' (RNN): sequence_lens other than the full sequence length are not supported
#
# A scalar X (with sequence_lens, whose check read X's first dimension).
# RUN: not cleave-translate --import-onnx %t/rnn-rank.onnx 2>&1 | FileCheck %s --check-prefix=RNN_RANK
# RNN_RANK: rnn-rank.onnx:0:0: error: node 'rnn' (RNN): X must have rank 3 (sequence x batch x input), not 0
#
# RUN: not cleave-translate --import-onnx %t/slice-step.onnx 2>&1 | FileCheck %s --check-prefix=SLICE_STEP
# SLICE_STEP: slice-step.onnx:0:0: error: node 'Slice_0' (Slice): steps must be non-zero
#
# RUN: not cleave-translate --import-onnx %t/split-uneven.onnx 2>&1 | FileCheck %s --check-prefix=SPLIT_UNEVEN
# SPLIT_UNEVEN: split-uneven.onnx:0:0: error: node 'Split_0' (Split): dimension 1 of size 5 does not split evenly into 2 outputs
#
# An attribute or input the operator does not take is an error, not a
# silently kept default: a misspelt `stride` would run Conv with stride 1.
# RUN: not cleave-translate --import-onnx %t/attr-unknown.onnx 2>&1 | FileCheck %s --check-prefix=ATTR_UNKNOWN
# ATTR_UNKNOWN: attr-unknown.onnx:0:0: error: node 'conv' (Conv): unknown attribute 'stride' for Conv at opset 17 (it takes auto_pad, dilations, group, kernel_shape, pads, strides)
# RUN: not cleave-translate --import-onnx %t/attr-twice.onnx 2>&1 | FileCheck %s --check-prefix=ATTR_TWICE
# ATTR_TWICE: attr-twice.onnx:0:0: error: node 'sm' (Softmax): attribute 'axis' is given more than once
# RUN: not cleave-translate --import-onnx %t/extra-input.onnx 2>&1 | FileCheck %s --check-prefix=EXTRA_INPUT
# EXTRA_INPUT: extra-input.onnx:0:0: error: node 'relu' (Relu): has 2 inputs, but Relu at opset 17 takes at most 1
#
# RUN: not cleave-translate --import-onnx %t/weight-as-shape.onnx --onnx-max-inline-elements=1 2>&1 | FileCheck %s --check-prefix=WEIGHT_AS_SHAPE
# WEIGHT_AS_SHAPE: weight-as-shape.onnx:0:0: error: node 'Reshape_0' (Reshape): input 1 ('shape', value 'target') must be a constant, but it is an initializer with more elements than are inlined

import sys

import numpy as np
import onnx
from onnx import helper

from cleave.testing import GraphBuilder

out = sys.argv[1]


def model(name, build, opset=17, **inputs):
    g = GraphBuilder(opset=opset)
    values = [g.input(n, shape) for n, shape in inputs.items()]
    result = build(g, *values)
    for v in result if isinstance(result, list) else [result]:
        g.output(v)
    g.save(f"{out}/{name}.onnx")


def ints(*v):
    return np.array(v, np.int64)


def broadcast(g, x, y):
    # Name the node as exporters do.
    return g.node("Add", [x, y], name="Add_12")


model("broadcast", broadcast, x=[2, 3], y=[4])
model("matmul", lambda g, a, b: g.node("MatMul", [a, b], name="mm"), a=[2, 3], b=[4, 5])
model("input-missing", lambda g, a: g.node("MatMul", [a], name="mm"), a=[2, 3])
model("attr-missing", lambda g, a: g.node("Concat", [a, a]), a=[2, 3])
model("attr-type", lambda g, a: g.node("Softmax", [a], name="sm", axis=1.0), a=[2, 3])
model("axis-range", lambda g, a: g.node("Softmax", [a], name="sm", axis=3), a=[2, 3])
model("auto-pad", lambda g, x: g.node("Conv", [x, g.const(np.ones((1, 1, 1, 1), np.float32))],
                                      name="conv", auto_pad="SAME"), x=[1, 1, 4, 4])
model("batchnorm-training",
      lambda g, x: [g.node("BatchNormalization", [x] + [g.const(np.ones(2, np.float32)) for _ in range(4)],
                           ["y", "running_mean"], name="bn", training_mode=1)[1]], x=[1, 2, 3])
model("cast-string", lambda g, x: g.node("Cast", [x], to=onnx.TensorProto.STRING), x=[2])
model("constant-sparse", lambda g: g.node(
    "Constant", [], name="c",
    sparse_value=helper.make_sparse_tensor(helper.make_tensor("v", 1, [1], [1.0]),
                                           helper.make_tensor("i", 7, [1], [0]), [2])))
model("constant-string", lambda g: g.node("Constant", [], name="c", value_strings=["a"]))
model("dropout-mask", lambda g, x: [g.node("Dropout", [x], ["y", "mask"], name="drop")[1]], x=[4])
model("maxpool-indices", lambda g, x: [g.node("MaxPool", [x], ["y", "indices"], name="pool",
                                              kernel_shape=[2])[1]], x=[1, 1, 4])
model("layernorm-mean", lambda g, x: [g.node("LayerNormalization", [x, g.const(np.ones(4, np.float32))],
                                             ["y", "mean"], name="ln")[1]], x=[2, 4])
model("layernorm-stash", lambda g, x: g.node("LayerNormalization", [x, g.const(np.ones(4, np.float32))],
                                            name="ln", stash_type=onnx.TensorProto.BFLOAT16), x=[2, 4])
model("expand", lambda g, x: g.node("Expand", [x, g.const(ints(4, 3, 5))]), x=[2, 3])
model("non-constant", lambda g, x, t: g.node("Reshape", [x, g.node("Cast", [t], ["target"], to=7)],
                                             name="reshape"), x=[2, 3], t=[2])
model("reshape-target", lambda g, x: g.node("Reshape", [x, g.const(ints(-1, -1))]), x=[2, 3])
model("reshape-huge", lambda g, x: g.node("Reshape", [x, g.const(ints(-1, 7277816997830721539, 7562350))]),
      x=[2, 3])
model("resize-crop", lambda g, x: g.node("Resize", [x, g.const(np.float32([0, 0, 1, 1])),
                                                    g.const(np.float32([1, 2]))],
                                         coordinate_transformation_mode="tf_crop_and_resize"),
      x=[2, 3])
model("pad-crop-min", lambda g, x: g.node("Pad", [x, g.const(ints(0, 0, 0, -2**63))]), x=[2, 3])
model("pad-crop-both", lambda g, x: g.node("Pad", [x, g.const(ints(-2, 0, -1, 0))]), x=[2, 3])
model("resize-huge", lambda g, x: g.node("Resize", [x, "", g.const(np.float32([1, 1e30]))]), x=[2, 3])
model("resize-nan", lambda g, x: g.node("Resize", [x, "", g.const(np.float32([1, np.nan]))]), x=[2, 3])
model("resize-sizes-huge", lambda g, x: g.node("Resize", [x, "", "", g.const(ints(2**63 - 1, 3))],
                                               keep_aspect_ratio_policy="not_smaller"),
      opset=18, x=[2, 3])
model("slice-step", lambda g, x: g.node("Slice", [x, g.const(ints(0)), g.const(ints(2)),
                                                  g.const(ints(0)), g.const(ints(0))]), x=[2, 3])
model("split-uneven", lambda g, x: g.node("Split", [x], outputs=2, axis=1), x=[2, 5])
model("rnn-activation",
      lambda g, x: g.node("RNN", [x, g.const(np.ones((1, 2, 3), np.float32)),
                                  g.const(np.ones((1, 2, 2), np.float32))],
                          outputs=2, name="rnn", hidden_size=2, activations=["LeakyRelu"])[1],
      x=[4, 1, 3])
model("rnn-lengths",
      lambda g, x: g.node("RNN", [x, g.const(np.ones((1, 2, 3), np.float32)),
                                  g.const(np.ones((1, 2, 2), np.float32)), "",
                                  g.const(np.int32([3]))],
                          outputs=2, name="rnn", hidden_size=2)[1],
      x=[4, 1, 3])
model("rnn-rank",
      lambda g, x: g.node("RNN", [x, g.const(np.ones((1, 2, 3), np.float32)),
                                  g.const(np.ones((1, 2, 2), np.float32)), "",
                                  g.const(np.int32([3]))],
                          outputs=2, name="rnn", hidden_size=2)[1],
      x=[])

model("attr-unknown", lambda g, x: g.node("Conv", [x, g.const(np.ones((1, 1, 1, 1), np.float32))],
                                          name="conv", stride=[2, 2]), x=[1, 1, 4, 4])
model("extra-input", lambda g, x: g.node("Relu", [x, x], name="relu"), x=[2, 3])
twice = GraphBuilder(opset=17)
twice.output(twice.node("Softmax", [twice.input("x", [2, 3])], name="sm", axis=1))
twice.save(f"{out}/attr-twice.onnx")
loaded = onnx.load(f"{out}/attr-twice.onnx")
loaded.graph.node[0].attribute.append(helper.make_attribute("axis", 0))
onnx.save(loaded, f"{out}/attr-twice.onnx")

# A shape stored as a weight (imported with a lower inlining limit): the
# import reads no weight bytes, so it cannot use it.
g = GraphBuilder(opset=17)
x = g.input("x", [2, 3])
g.output(g.node("Reshape", [x, g.initializer("target", ints(3, 2))]))
g.save(f"{out}/weight-as-shape.onnx")
model("isinf-flag", lambda g, x: g.node("IsInf", [x], name="inf", detect_negative=2), x=[4])
model("mod-fmod", lambda g, x: g.node("Mod", [x, x], name="mod", fmod=-1), x=[4])


def typed_model(name, build, **inputs):
    g = GraphBuilder(opset=17)
    values = [g.input(n, shape, dtype) for n, (shape, dtype) in inputs.items()]
    g.output(build(g, *values))
    g.save(f"{out}/{name}.onnx")


typed_model("mod-types", lambda g, a, b: g.node("Mod", [a, b], name="mod"),
            a=([4], np.int32), b=([4], np.int64))
typed_model("mod-bool", lambda g, a: g.node("Mod", [a, a], name="mod"),
            a=([4], np.bool_))
typed_model("isnan-int", lambda g, a: g.node("IsNaN", [a], name="nan"),
            a=([4], np.int32))
