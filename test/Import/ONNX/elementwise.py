# Elementwise ONNX operators: activations with their default attributes,
# broadcasting arithmetic, comparisons, logic, Clip bounds moved from inputs
# to attributes, Pow's exponent cast, Cast, the variadic operators chained
# into binary ops, and the float tests, rounding, sign and remainders that
# torch 2 exports write.
#
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# RUN: cleave-translate --import-onnx %t/unary.onnx | FileCheck %s --check-prefix=UNARY
# RUN: cleave-translate --import-onnx %t/binary.onnx | FileCheck %s --check-prefix=BINARY
# RUN: cleave-translate --import-onnx %t/variadic.onnx | FileCheck %s --check-prefix=VARIADIC
# RUN: cleave-translate --import-onnx %t/cast.onnx | FileCheck %s --check-prefix=CAST
# RUN: cleave-translate --import-onnx %t/numeric.onnx | FileCheck %s --check-prefix=NUMERIC

import sys

import numpy as np

from cleave.testing import GraphBuilder

out = sys.argv[1]

# UNARY-LABEL: func.func @main
# UNARY-SAME: (%[[X:.+]]: tensor<2x3xf32> {cleave.name = "x"})
# UNARY: %[[RELU:.+]] = cleave.relu %[[X]] : tensor<2x3xf32>
# UNARY: %[[NEG:.+]] = cleave.neg %[[RELU]]
# UNARY: %[[ABS:.+]] = cleave.abs %[[NEG]]
# UNARY: %[[SQRT:.+]] = cleave.sqrt %[[ABS]]
# UNARY: %[[RECIP:.+]] = cleave.reciprocal %[[SQRT]]
# UNARY: %[[EXP:.+]] = cleave.exp %[[RECIP]]
# UNARY: %[[LOG:.+]] = cleave.log %[[EXP]]
# UNARY: %[[ERF:.+]] = cleave.erf %[[LOG]]
# UNARY: %[[TANH:.+]] = cleave.tanh %[[ERF]]
# UNARY: %[[SIG:.+]] = cleave.sigmoid %[[TANH]]
# UNARY: %[[SIN:.+]] = cleave.sin %[[SIG]]
# UNARY: %[[COS:.+]] = cleave.cos %[[SIN]]
# UNARY: %[[FLOOR:.+]] = cleave.floor %[[COS]]
# UNARY: %[[CEIL:.+]] = cleave.ceil %[[FLOOR]]
# UNARY: %[[SOFTPLUS:.+]] = cleave.softplus %[[CEIL]]
# UNARY: %[[HSWISH:.+]] = cleave.hard_swish %[[SOFTPLUS]]
# UNARY: %[[LRELU:.+]] = cleave.leaky_relu %[[HSWISH]] {alpha = 2.500000e-01 : f32}
# UNARY: %[[LRELU_DEFAULT:.+]] = cleave.leaky_relu %[[LRELU]] {alpha = 0.00999999977 : f32}
# UNARY: %[[ELU:.+]] = cleave.elu %[[LRELU_DEFAULT]] {alpha = 1.000000e+00 : f32}
# UNARY: %[[GELU:.+]] = cleave.gelu %[[ELU]] {approximate = "tanh"}
# UNARY: %[[HSIG:.+]] = cleave.hard_sigmoid %[[GELU]] {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32}
# UNARY: %[[CLIP:.+]] = cleave.clip %[[HSIG]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
# UNARY: %[[CLIP_MAX:.+]] = cleave.clip %[[CLIP]] {max = 1.500000e+00 : f64}
# UNARY: %[[CLIP_NONE:.+]] = cleave.clip %[[CLIP_MAX]] : tensor<2x3xf32>
# UNARY: return %[[CLIP_NONE]]
g = GraphBuilder(opset=20)
v = g.input("x", [2, 3])
for op in ["Relu", "Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Erf",
           "Tanh", "Sigmoid", "Sin", "Cos", "Floor", "Ceil", "Softplus",
           "HardSwish"]:
    v = g.node(op, [v])
v = g.node("LeakyRelu", [v], alpha=0.25)
v = g.node("LeakyRelu", [v])
v = g.node("Elu", [v])
v = g.node("Gelu", [v], approximate="tanh")
v = g.node("HardSigmoid", [v])
v = g.node("Clip", [v, g.const(np.float32(0)), g.const(np.float32(6))])
v = g.node("Clip", [v, "", g.const(np.float32(1.5))])
v = g.node("Clip", [v])
g.output(v, [2, 3])
g.save(f"{out}/unary.onnx")

# BINARY-LABEL: func.func @main
# BINARY-SAME: (%[[A:[^:]+]]: tensor<2x3xf32> {cleave.name = "a"}, %[[B:[^:]+]]: tensor<3xf32> {cleave.name = "b"}, %[[E:[^:]+]]: tensor<i64> {cleave.name = "e"}, %[[P:[^:]+]]: tensor<2x3xi1> {cleave.name = "p"})
# BINARY: %[[ADD:.+]] = cleave.add %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
# BINARY: %[[SUB:.+]] = cleave.sub %[[ADD]], %[[B]]
# BINARY: %[[MUL:.+]] = cleave.mul %[[SUB]], %[[B]]
# BINARY: %[[DIV:.+]] = cleave.div %[[MUL]], %[[B]]
# The exponent's element type differs from the base's: it is cast first.
# BINARY: %[[ECAST:.+]] = cleave.cast %[[E]] : tensor<i64> to tensor<f32>
# BINARY: %[[POW:.+]] = cleave.pow %[[DIV]], %[[ECAST]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
# BINARY: %[[EQ:.+]] = cleave.equal %[[POW]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
# BINARY: %[[LT:.+]] = cleave.less %[[POW]], %[[B]]
# BINARY: %[[GT:.+]] = cleave.greater %[[POW]], %[[B]]
# BINARY: %[[LE:.+]] = cleave.less_equal %[[POW]], %[[B]]
# BINARY: %[[GE:.+]] = cleave.greater_equal %[[POW]], %[[B]]
# BINARY: %[[AND:.+]] = cleave.and %[[EQ]], %[[LT]]
# BINARY: %[[OR:.+]] = cleave.or %[[AND]], %[[GT]]
# BINARY: %[[NOT:.+]] = cleave.not %[[OR]]
# BINARY: %[[AND2:.+]] = cleave.and %[[NOT]], %[[P]]
# BINARY: %[[WHERE:.+]] = cleave.where %[[AND2]], %[[POW]], %[[B]] : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
# BINARY: return %[[WHERE]], %[[LE]], %[[GE]]
g = GraphBuilder(opset=17)
a = g.input("a", [2, 3])
b = g.input("b", [3])
e = g.input("e", [], np.int64)
p = g.input("p", [2, 3], np.bool_)
v = g.node("Add", [a, b])
v = g.node("Sub", [v, b])
v = g.node("Mul", [v, b])
v = g.node("Div", [v, b])
v = g.node("Pow", [v, e])
eq = g.node("Equal", [v, b])
lt = g.node("Less", [v, b])
gt = g.node("Greater", [v, b])
le = g.node("LessOrEqual", [v, b])
ge = g.node("GreaterOrEqual", [v, b])
c = g.node("And", [eq, lt])
c = g.node("Or", [c, gt])
c = g.node("Not", [c])
c = g.node("And", [c, p])
w = g.node("Where", [c, v, b])
g.output(w, [2, 3])
g.output(le, [2, 3], np.bool_)
g.output(ge, [2, 3], np.bool_)
g.save(f"{out}/binary.onnx")

# VARIADIC-LABEL: func.func @main
# VARIADIC-SAME: (%[[A:[^:]+]]: tensor<4xf32> {cleave.name = "a"}, %[[B:[^:]+]]: tensor<4xf32> {cleave.name = "b"}, %[[C:[^:]+]]: tensor<1xf32> {cleave.name = "c"})
# VARIADIC: %[[MIN0:.+]] = cleave.min %[[A]], %[[B]]
# VARIADIC: %[[MIN:.+]] = cleave.min %[[MIN0]], %[[C]]
# VARIADIC: %[[MAX0:.+]] = cleave.max %[[A]], %[[B]]
# VARIADIC: %[[MAX:.+]] = cleave.max %[[MAX0]], %[[C]]
# VARIADIC: %[[SUM0:.+]] = cleave.add %[[A]], %[[B]]
# VARIADIC: %[[SUM:.+]] = cleave.add %[[SUM0]], %[[C]]
# VARIADIC: %[[MEAN0:.+]] = cleave.add %[[MIN]], %[[MAX]]
# VARIADIC: %[[MEAN1:.+]] = cleave.add %[[MEAN0]], %[[SUM]]
# VARIADIC: %[[THREE:.+]] = cleave.constant dense<3.000000e+00> : tensor<f32>
# VARIADIC: %[[MEAN:.+]] = cleave.div %[[MEAN1]], %[[THREE]]
# A one-input Sum is its input.
# VARIADIC-NOT: cleave.add
# VARIADIC: return %[[MEAN]], %[[A]]
g = GraphBuilder(opset=13)
a = g.input("a", [4])
b = g.input("b", [4])
c = g.input("c", [1])
mn = g.node("Min", [a, b, c])
mx = g.node("Max", [a, b, c])
s = g.node("Sum", [a, b, c])
m = g.node("Mean", [mn, mx, s])
one = g.node("Sum", [a])
g.output(m, [4])
g.output(one, [4])
g.save(f"{out}/variadic.onnx")

# CAST-LABEL: func.func @main
# CAST-SAME: (%[[X:.+]]: tensor<2xf32> {cleave.name = "x"})
# CAST: %[[I:.+]] = cleave.cast %[[X]] : tensor<2xf32> to tensor<2xi32>
# CAST: %[[U:.+]] = cleave.cast %[[I]] : tensor<2xi32> to tensor<2xui8>
# CAST: %[[H:.+]] = cleave.cast %[[U]] : tensor<2xui8> to tensor<2xf16>
# CAST: %[[B:.+]] = cleave.cast %[[H]] : tensor<2xf16> to tensor<2xi1>
# A cast to the type the value already has folds away.
# CAST-NOT: cleave.cast
# CAST: return %[[B]]
g = GraphBuilder(opset=19)
x = g.input("x", [2])
v = g.node("Cast", [x], to=6)  # INT32
v = g.node("Cast", [v], to=2)  # UINT8
v = g.node("Cast", [v], to=10, saturate=0)  # FLOAT16
v = g.node("Cast", [v], to=9)  # BOOL
v = g.node("Cast", [v], to=9)
g.output(v, [2], np.bool_)
g.save(f"{out}/cast.onnx")

# NUMERIC-LABEL: func.func @main
# NUMERIC-SAME: (%[[X:[^:]+]]: tensor<2x3xf32> {cleave.name = "x"}, %[[I:[^:]+]]: tensor<3xi64> {cleave.name = "i"})
# NUMERIC: %[[NAN:.+]] = cleave.is_nan %[[X]] : tensor<2x3xf32> -> tensor<2x3xi1>
# NUMERIC: %[[INF:.+]] = cleave.is_inf %[[X]] : tensor<2x3xf32> -> tensor<2x3xi1>
# NUMERIC: %[[NEGINF:.+]] = cleave.is_inf %[[X]] {detect_positive = false} : tensor<2x3xf32> -> tensor<2x3xi1>
# NUMERIC: %[[ROUND:.+]] = cleave.round %[[X]] : tensor<2x3xf32>
# NUMERIC: %[[SIGN:.+]] = cleave.sign %[[ROUND]] : tensor<2x3xf32>
# NUMERIC: %[[FMOD:.+]] = cleave.mod %[[SIGN]], %[[X]] {fmod = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
# NUMERIC: %[[IMOD:.+]] = cleave.mod %[[I]], %{{.+}} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
# NUMERIC: %[[ISIGN:.+]] = cleave.sign %[[IMOD]] : tensor<3xi64>
# The remainder of constants folds at import: 7 mod -3 is -2.
# NUMERIC: %[[FOLDED:.+]] = cleave.constant dense<-2> : tensor<i64>
# NUMERIC: return %[[NAN]], %[[INF]], %[[NEGINF]], %[[FMOD]], %[[ISIGN]], %[[FOLDED]]
g = GraphBuilder(opset=17)
x = g.input("x", [2, 3])
i = g.input("i", [3], np.int64)
nan = g.node("IsNaN", [x])
inf = g.node("IsInf", [x])
neg_inf = g.node("IsInf", [x], detect_positive=0)
v = g.node("Round", [x])
v = g.node("Sign", [v])
v = g.node("Mod", [v, x], fmod=1)
k = g.node("Mod", [i, g.const(np.int64(4))])
k = g.node("Sign", [k])
folded = g.node("Mod", [g.const(np.int64(7)), g.const(np.int64(-3))], fmod=0)
for b in (nan, inf, neg_inf):
    g.output(b, [2, 3], np.bool_)
g.output(v, [2, 3])
g.output(k, [3], np.int64)
g.output(folded, [], np.int64)
g.save(f"{out}/numeric.onnx")
