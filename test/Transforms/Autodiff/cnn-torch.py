# A small CNN exported by torch.onnx, trained by cleave and by PyTorch 1.13
# from the same weights on the same batch: conv, batch normalisation in
# training mode, ReLU, max pool, depthwise conv, global average pool and a
# linear layer, with an attached cross-entropy. torch exports the module in
# training mode (its BatchNormalization nodes have training_mode = 1, as
# .train() computes them), and torch computes in float64, cleave in float32.
#
# With --gradients (one call): the loss and every parameter's gradient
# against torch autograd, and the running mean and variance after the step
# against those torch's forward leaves. With --train (one SGD step): every
# parameter and running statistic after the step. Tolerance: max |error| <=
# 1e-4 * max |reference| + 1e-6 per tensor.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import copy
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

import cleave
from cleave.testing.gradients import check

RTOL, ATOL = 1e-4, 1e-6
LR = 0.1


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8, momentum=0.2)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1,
                                         groups=8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.nn.functional.adaptive_avg_pool2d(self.depthwise(x), 1)
        return self.fc(torch.flatten(x, 1))


def export(module, x, path):
    """The module in training mode as torch.onnx writes it."""
    module.train()
    torch.onnx.export(module, torch.from_numpy(x), path,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17,
                      input_names=["x"], output_names=["logits"])
    return onnx.load(path)


def initializers(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def reference_step(module, x, labels, optimizer=None):
    """One float64 step of a copy of `module`: (loss, the copy)."""
    module = copy.deepcopy(module).double().train()
    loss = torch.nn.functional.cross_entropy(
        module(torch.from_numpy(x.astype(np.float64))),
        torch.from_numpy(labels))
    loss.backward()
    if optimizer:
        optimizer(module.parameters()).step()
    return loss.item(), module


def main(work):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    module = SmallCNN()
    # Running statistics away from their initial 0 and 1.
    module.bn.running_mean.uniform_(-0.5, 0.5)
    module.bn.running_var.uniform_(0.5, 1.5)
    x = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
    labels = rng.integers(0, 5, (4,))
    model = export(module, x, f"{work}/cnn.onnx")
    print("nodes", " ".join(n.op_type for n in model.graph.node))
    # Tracing ran a training-mode forward, which moved the running
    # statistics; both sides start from the initializers written after it.
    weights = initializers(model)
    statistics = ["bn.running_mean", "bn.running_var"]
    parameters = [name for name, _ in module.named_parameters()]
    module.load_state_dict(
        {name: torch.from_numpy(weights[name].copy())
         for name in parameters + statistics}, strict=False)
    feeds = {"x": x, "labels": labels}
    failed = False

    print("== gradients")
    bundle = cleave.compile(model, f"{work}/gradients", loss="cross-entropy",
                            logits="logits", labels="labels")
    session = cleave.Session(bundle)
    outputs = session.run(feeds)
    loss, reference = reference_step(module, x, labels)
    failed |= not check("loss", outputs["loss"], loss, RTOL, ATOL)
    for name, param in reference.named_parameters():
        failed |= not check(f"grad:{name}", outputs[f"grad:{name}"],
                            param.grad.numpy(), RTOL, ATOL)
    print("outputs", len(outputs) - 1, "gradients of", len(parameters))
    updated = session.trained_parameters()
    print("updated", sorted(updated))
    after = reference.state_dict()
    for name in statistics:
        failed |= not check(name, updated[name], after[name].numpy(), RTOL,
                            ATOL)

    print("== train")
    bundle = cleave.compile(model, f"{work}/train", loss="cross-entropy",
                            logits="logits", labels="labels",
                            train={"optimizer": "sgd", "lr": LR})
    trainer = cleave.Trainer(bundle)
    step_loss = trainer.step(feeds)
    loss, reference = reference_step(
        module, x, labels, lambda p: torch.optim.SGD(p, lr=LR))
    failed |= not check("loss", step_loss, loss, RTOL, ATOL)
    updated = trainer.parameters()
    print("updated", sorted(updated))
    after = reference.state_dict()
    for name in parameters + statistics:
        failed |= not check(name, updated[name], after[name].numpy(), RTOL,
                            ATOL)
    return failed


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1]) else 0)

# The exported graph holds each op of the family.
# CHECK: nodes Conv BatchNormalization Relu MaxPool Conv GlobalAveragePool Flatten Gemm

# CHECK-LABEL: == gradients
# CHECK-NOT: MISMATCH
# CHECK: loss  ok
# CHECK: grad:conv.weight  ok
# CHECK: grad:bn.weight  ok
# CHECK: grad:depthwise.weight  ok
# CHECK: grad:fc.bias  ok
# The running statistics are state, not parameters: no gradient of theirs.
# CHECK: outputs 8 gradients of 8
# CHECK: updated ['bn.running_mean', 'bn.running_var']
# CHECK: bn.running_mean  ok
# CHECK: bn.running_var  ok

# CHECK-LABEL: == train
# CHECK-NOT: MISMATCH
# CHECK: loss  ok
# CHECK: updated ['bn.bias', 'bn.running_mean', 'bn.running_var', 'bn.weight', 'conv.bias', 'conv.weight', 'depthwise.bias', 'depthwise.weight', 'fc.bias', 'fc.weight']
# CHECK: conv.weight  ok
# CHECK: fc.bias  ok
# CHECK: bn.running_mean  ok
# CHECK: bn.running_var  ok
