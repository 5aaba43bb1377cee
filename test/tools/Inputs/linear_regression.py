"""A linear regression with a mean squared error loss,
loss = mean((x @ w + b - y)^2), for cleave-compile-gradients.test.

    python linear_regression.py build DIR   # DIR/model.onnx, x.npy, y.npy,
                                            # target.npy
    python linear_regression.py build-scaled DIR  # DIR/scaled.onnx: a
                                            # scalar input too
    python linear_regression.py check DIR   # compares DIR/out/*.npy with
                                            # the closed-form gradients
    python linear_regression.py train DIR   # runs DIR/bundle (--train)
                                            # with cleave.Trainer
    python linear_regression.py accumulate DIR  # one step of DIR/acc
                                            # (--microbatches 2, SGD lr 0.1)
                                            # against numpy
"""

import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from cleave.testing import GraphBuilder

command, out = sys.argv[1], sys.argv[2]
if command == "build":
    rng = np.random.default_rng(0)
    g = GraphBuilder(opset=17)
    x = g.input("x", [4, 3])
    y = g.input("y", [4, 2])
    w = g.initializer("w", rng.standard_normal((3, 2)).astype(np.float32))
    b = g.initializer("b", rng.standard_normal(2).astype(np.float32))
    error = g.node("Sub", [g.node("Add", [g.node("MatMul", [x, w]), b]), y])
    g.node("ReduceMean", [g.node("Mul", [error, error])], ["mse"], keepdims=0)
    g.output("mse", [])
    g.save(os.path.join(out, "model.onnx"))
    for name, shape in [("x", (4, 3)), ("y", (4, 2)), ("target", ())]:
        np.save(os.path.join(out, f"{name}.npy"),
                rng.standard_normal(shape).astype(np.float32))
elif command == "build-scaled":
    # The regression with a scalar input scaling the prediction.
    rng = np.random.default_rng(0)
    g = GraphBuilder(opset=17)
    x = g.input("x", [4, 3])
    y = g.input("y", [4, 2])
    scale = g.input("scale", [])
    w = g.initializer("w", rng.standard_normal((3, 2)).astype(np.float32))
    prediction = g.node("Mul", [g.node("MatMul", [x, w]), scale])
    error = g.node("Sub", [prediction, y])
    g.node("ReduceMean", [g.node("Mul", [error, error])], ["mse"], keepdims=0)
    g.output("mse", [])
    g.save(os.path.join(out, "scaled.onnx"))
elif command == "train":
    import cleave

    feeds = {n: np.load(os.path.join(out, f"{n}.npy")) for n in ("x", "y")}
    trainer = cleave.Trainer(os.path.join(out, "bundle"))
    before = trainer.parameters()
    losses = [trainer.step(feeds) for _ in range(5)]
    after = trainer.parameters()
    print("loss falls:", all(b < a for a, b in zip(losses, losses[1:])))
    print("parameters", sorted(after), "moved:",
          all(not np.allclose(before[n], after[n]) for n in after))
    cleave.compile(os.path.join(out, "model.onnx"),
                   os.path.join(out, "bundle-grad"), loss="mse")
    try:
        cleave.Trainer(os.path.join(out, "bundle-grad"))
    except ValueError as error:
        print("ValueError:", error)
elif command == "accumulate":
    import cleave

    # A global batch of two microbatches of 4 samples: the loss is the mean
    # of the microbatches' losses and the update uses the mean gradient.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 2)).astype(np.float32)
    model = onnx.load(os.path.join(out, "model.onnx"))
    weights = {t.name: numpy_helper.to_array(t).astype(np.float64)
               for t in model.graph.initializer}
    w, b = weights["w"], weights["b"]
    losses, grad_w, grad_b = [], 0, 0
    for k in range(2):
        xk, yk = x[4 * k:4 * k + 4].astype(np.float64), y[4 * k:4 * k + 4]
        e = xk @ w + b - yk
        losses.append((e * e).mean())
        grad_w = grad_w + 2 * xk.T @ e / 8 / 2
        grad_b = grad_b + 2 * e.sum(0) / 8 / 2
    trainer = cleave.Trainer(os.path.join(out, "acc"))
    loss = trainer.step({"x": x, "y": y})
    after = trainer.parameters()
    print("loss", np.isclose(loss, np.mean(losses), rtol=1e-5),
          "w", np.allclose(after["w"], w - 0.1 * grad_w, rtol=1e-5, atol=1e-6),
          "b", np.allclose(after["b"], b - 0.1 * grad_b, rtol=1e-5, atol=1e-6))
    try:
        trainer.step({"x": x[:4], "y": y[:4]})
    except Exception as error:
        print(type(error).__name__ + ":", error)
else:
    model = onnx.load(os.path.join(out, "model.onnx"))
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    x = np.load(os.path.join(out, "x.npy")).astype(np.float64)
    y = np.load(os.path.join(out, "y.npy")).astype(np.float64)
    e = x @ weights["w"] + weights["b"] - y
    # d mean(e^2) / de = 2 e / n, n = 8 elements.
    for name, reference in [("mse", (e * e).mean()), ("grad_w", 2 * x.T @ e / 8),
                            ("grad_b", 2 * e.sum(0) / 8)]:
        value = np.load(os.path.join(out, "out", f"{name}.npy"))
        error = float(np.max(np.abs(value - reference)))
        print(name, "ok" if error <= 1e-5 * np.max(np.abs(reference)) else
              f"MISMATCH {error}")
