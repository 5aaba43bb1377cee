"""Reference gradients for the autodiff tests.

A test describes a small ONNX model once, as a function of a ``ModelBuilder``,
and builds it twice: in float32 for cleave, which compiles it with
``--gradients`` (its outputs are the loss and ``grad:<initializer>`` for each
float initializer), and in float64 with the initializers as graph inputs, for
central finite differences of the loss run by the ONNX reference evaluator.
Both builds draw the same initial values, so the two models hold the same
weights: values are drawn in float32 precision. ``check`` compares a gradient with its
reference and prints one line:

    grad:w  ok  max error 1.2e-07 <= 3.1e-05

The bound is ``rtol * max|reference| + atol``: the error relative to the
gradient's scale, with an absolute floor for gradients that are all near 0.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

from cleave.testing.onnx_builder import GraphBuilder


class ModelBuilder:
    """A GraphBuilder whose float tensors have one element type, with the
    helpers gradient tests use: weights (initializers, the parameters),
    constants (Constant nodes, which are not trained) and a loss that sums
    the terms added to it."""

    def __init__(self, dtype, seed=0, opset=20):
        self.dtype = np.dtype(dtype)
        self.graph = GraphBuilder(opset=opset)
        self.rng = np.random.default_rng(seed)
        self.weights = {}
        self.terms = []

    def input(self, name, array):
        """A graph input; `array` is the value tests feed (its dtype decides
        the input's, float arrays taking the builder's)."""
        array = self._typed(array)
        self.graph.input(name, list(array.shape), array.dtype)
        return name, array

    def weight(self, name, shape, low=-1.0, high=1.0):
        """An initializer of uniform random values in [low, high)."""
        values = self._typed(self.rng.uniform(low, high, shape))
        self.weights[name] = values
        self.graph.initializer(name, values)
        return name

    def constant(self, array):
        """A Constant node holding `array` (floats in the builder's type)."""
        return self.graph.node("Constant", [], value=self._typed(array))

    def random_constant(self, shape):
        return self.constant(self.rng.uniform(-1.0, 1.0, shape))

    def ints(self, values):
        return self.constant(np.asarray(values, np.int64))

    def node(self, op_type, inputs, outputs=1, **attrs):
        if "to" in attrs and attrs["to"] is float:
            attrs["to"] = helper.np_dtype_to_tensor_dtype(self.dtype)
        return self.graph.node(op_type, inputs, outputs, **attrs)

    def add_term(self, value, shape):
        """Adds sum(value * R) to the loss, R a random constant of `shape`:
        the cotangent reaching `value` is R, not a splat, so that a rule
        that mixes up elements shows."""
        product = self.node("Mul", [value, self.random_constant(shape)])
        self.terms.append(self.node("ReduceSum", [product], keepdims=0))

    def finish(self, loss="loss"):
        """Declares the sum of the terms as the float scalar output `loss`."""
        total = self.terms[0]
        for term in self.terms[1:]:
            total = self.node("Add", [total, term])
        self.graph.node("Identity", [total], [loss])
        self.graph.output(loss, [], self.dtype)
        return self

    def model(self):
        return self.graph.model()

    def model_with_weight_inputs(self):
        """The model with its initializers turned into graph inputs, so that
        finite differences can feed perturbed weights."""
        model = self.model()
        for tensor in model.graph.initializer:
            model.graph.input.append(helper.make_tensor_value_info(
                tensor.name, tensor.data_type, list(tensor.dims)))
        del model.graph.initializer[:]
        return model

    def _typed(self, array):
        array = np.asarray(array)
        if np.issubdtype(array.dtype, np.floating):
            return array.astype(np.float32).astype(self.dtype)
        return array


def compile_gradients(model, directory, loss="loss", freeze=None):
    """Compiles `model` with gradients of `loss` into `directory` and opens
    the bundle."""
    import cleave

    bundle = cleave.compile(model, os.fspath(directory), loss=loss, freeze=freeze)
    return cleave.Session(bundle)


def finite_differences(builder, feeds, loss="loss", eps=1e-6, new_ops=None):
    """Central differences of `loss` with respect to every weight of
    `builder` (a float64 ModelBuilder), the model run by the ONNX reference
    evaluator, with `new_ops` (OpRun classes) in place of its own kernels of
    the same names: {weight name: gradient}."""
    from onnx.reference import ReferenceEvaluator

    evaluator = ReferenceEvaluator(builder.model_with_weight_inputs(),
                                   new_ops=new_ops)

    def evaluate(weights):
        return float(evaluator.run([loss], {**feeds, **weights})[0])

    gradients = {}
    for name, value in builder.weights.items():
        gradient = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            shifted = dict(builder.weights)
            plus, minus = value.copy(), value.copy()
            plus[index] += eps
            minus[index] -= eps
            shifted[name] = plus
            up = evaluate(shifted)
            shifted[name] = minus
            gradient[index] = (up - evaluate(shifted)) / (2 * eps)
        gradients[name] = gradient
    return gradients


def check(name, got, want, rtol, atol):
    """Prints whether `got` matches `want` within rtol * max|want| + atol and
    returns it."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape:
        print(f"{name}  MISMATCH  shape {got.shape} != {want.shape}")
        return False
    error = float(np.max(np.abs(got - want))) if want.size else 0.0
    bound = rtol * (float(np.max(np.abs(want))) if want.size else 0.0) + atol
    verdict = "ok" if error <= bound else "MISMATCH"
    print(f"{name}  {verdict}  max error {error:.2g} <= {bound:.2g}")
    return error <= bound
