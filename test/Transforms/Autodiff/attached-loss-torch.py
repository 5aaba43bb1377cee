# Losses attached by `cleave compile --gradients --loss cross-entropy|mse
# --logits NAME --labels NAME` against PyTorch: a two-layer MLP whose logits
# are [2, 3, 5] (the classes last, as a language model's), with targets of
# which two equal the ignore index (-1, then PyTorch's default -100), and the
# same MLP's output against float targets for the mean squared error. cleave
# computes in float32 with the labels as a new bundle input; PyTorch
# computes cross_entropy / mse_loss in float64 from the same weights.
# Tolerance: max |error| <= 1e-5 * max |reference| + 1e-7 per value.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import sys

import numpy as np
import torch

from cleave.session import Session
import cleave
from cleave.testing.gradients import ModelBuilder, check

RTOL, ATOL = 1e-5, 1e-7


def mlp(m):
    x, xv = m.input("x", m.rng.standard_normal((2, 3, 4)))
    w1 = m.weight("fc1.weight", [4, 8], -0.5, 0.5)
    b1 = m.weight("fc1.bias", [8], -0.1, 0.1)
    w2 = m.weight("fc2.weight", [8, 5], -0.5, 0.5)
    h = m.node("Tanh", [m.node("Add", [m.node("MatMul", [x, w1]), b1])])
    m.graph.node("MatMul", [h, w2], ["logits"])
    m.graph.output("logits", [2, 3, 5], np.float32)

    def reference(p, x):
        return torch.tanh(x @ p["fc1.weight"] + p["fc1.bias"]) @ p["fc2.weight"]

    return {"x": xv}, reference


def run(name, loss, labels, ignore_index, reference_loss, work):
    print(f"== {name}")
    m = ModelBuilder(np.float32, seed=2, opset=17)
    feeds, forward = mlp(m)
    bundle = cleave.compile(m.model(), f"{work}/{name}", loss=loss,
                            logits="logits", labels="targets",
                            ignore_index=ignore_index)
    session = Session(bundle)
    print("inputs", [(i.name, i.dtype, list(i.shape)) for i in session.get_inputs()])
    outputs = session.run({**feeds, "targets": labels})
    print("outputs", sorted(outputs))

    params = {n: torch.tensor(v, dtype=torch.float64, requires_grad=True)
              for n, v in m.weights.items()}
    logits = forward(params, torch.from_numpy(feeds["x"].astype(np.float64)))
    value = reference_loss(logits, torch.from_numpy(labels))
    value.backward()
    failed = not check("loss", outputs["loss"], value.item(), RTOL, ATOL)
    for n, p in params.items():
        failed |= not check(f"grad:{n}", outputs[f"grad:{n}"], p.grad.numpy(),
                            RTOL, ATOL)
    return failed


if __name__ == "__main__":
    work = sys.argv[1]
    targets = np.array([[1, -1, 4], [0, 2, -1]], np.int64)

    def cross_entropy(ignore):
        def loss(logits, labels):
            return torch.nn.functional.cross_entropy(
                logits.reshape(-1, 5), labels.reshape(-1), ignore_index=ignore)
        return loss

    failed = run("cross_entropy", "cross-entropy", targets, -1,
                 cross_entropy(-1), work)
    failed |= run("cross_entropy_default", "cross-entropy",
                  np.where(targets < 0, -100, targets), None,
                  cross_entropy(-100), work)
    values = np.random.default_rng(3).standard_normal((2, 3, 5)).astype(np.float32)
    failed |= run("mse", "mse", values, None,
                  lambda logits, labels: torch.nn.functional.mse_loss(
                      logits, labels.double()), work)
    sys.exit(1 if failed else 0)

# CHECK-LABEL: == cross_entropy
# CHECK-NEXT: inputs [('x', 'float32', [2, 3, 4]), ('targets', 'int64', [2, 3])]
# CHECK-NEXT: outputs ['grad:fc1.bias', 'grad:fc1.weight', 'grad:fc2.weight', 'loss']
# CHECK-NOT: MISMATCH
# CHECK: grad:fc2.weight  ok

# CHECK-LABEL: == cross_entropy_default
# CHECK-NOT: MISMATCH
# CHECK: grad:fc2.weight  ok

# CHECK-LABEL: == mse
# CHECK-NEXT: inputs [('x', 'float32', [2, 3, 4]), ('targets', 'float32', [2, 3, 5])]
# CHECK-NOT: MISMATCH
# CHECK: grad:fc2.weight  ok
