# Whole training steps (`cleave compile --train`) against PyTorch 1.13's
# optimizers: cleave.Trainer runs 20 steps of the bundle (four batches, five
# times over), and torch runs the same steps from the same initial weights
# on the same batches, with the optimizer, clipping and learning-rate schedule
# asked for. Compared: the loss of every step and every parameter after the
# last step. cleave computes in float32, torch in float64; tolerance: max
# |error| <= 1e-4 * max |reference| + 1e-6 per step's loss and per
# parameter (the errors seen are below 2e-6 relative).
#
# Models: a two-layer MLP with an attached cross-entropy (--loss
# cross-entropy --logits --labels, -1 ignored), and the transformer block of
# gradients-torch.py (token and position embeddings, layer norms, causal
# attention, GELU MLP, logits from the tied embedding table), whose loss is
# a graph output; and cleave.models' GPT exported by torch.onnx, trained
# against the torch module itself. Their key bias (qkv.bias[16:32]) is left out of the
# comparison: adding it to every key shifts each row of attention scores by
# a constant, so its gradient is 0 in exact arithmetic, and Adam divides the
# round-off that is left (1e-9 in float32, 1e-17 in float64) by its own
# root mean square, moving the bias by up to lr a step in directions that
# differ between the two; the loss does not depend on it.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t mlp | FileCheck %s --check-prefix=MLP
# RUN: %python %s %t transformer | FileCheck %s --check-prefix=GPT

import math
import os
import sys

import numpy as np
import torch

import cleave
from cleave.testing import load_sibling
from cleave.testing.gradients import ModelBuilder

torch.set_default_dtype(torch.float64)
RTOL, ATOL = 1e-4, 1e-6
STEPS = 20


class Spec:
    """What a run trains: the ONNX model, its initial weights, a batch
    maker, the torch loss of (parameters, feeds), the loss options of
    cleave.compile, and the slices of parameters compared (all by
    default)."""

    def __init__(self, model, weights, batch, reference, loss, compared=None,
                 params=None):
        self.model, self.weights, self.batch = model, weights, batch
        self.reference, self.loss = reference, loss
        self.compared = compared or {}
        # torch's parameters; by default float64 copies of the weights.
        self.params = params or {
            n: torch.tensor(v, dtype=torch.float64, requires_grad=True)
            for n, v in weights.items()}


def mlp():
    """Logits [2, 3, 5] of a tanh MLP; the loss is attached."""
    m = ModelBuilder(np.float32, seed=4, opset=17)
    x, xv = m.input("x", m.rng.standard_normal((2, 3, 4)))
    w1 = m.weight("fc1.weight", [4, 8], -0.5, 0.5)
    b1 = m.weight("fc1.bias", [8], -0.1, 0.1)
    w2 = m.weight("fc2.weight", [8, 5], -0.5, 0.5)
    h = m.node("Tanh", [m.node("Add", [m.node("MatMul", [x, w1]), b1])])
    m.graph.node("MatMul", [h, w2], ["logits"])
    m.graph.output("logits", [2, 3, 5], np.float32)

    def batch(rng):
        labels = rng.integers(0, 5, (2, 3))
        labels[0, 1] = -1
        return {"x": rng.standard_normal((2, 3, 4)).astype(np.float32),
                "labels": labels.astype(np.int64)}

    def reference(p, f):
        logits = torch.tanh(f["x"] @ p["fc1.weight"] + p["fc1.bias"]) @ p["fc2.weight"]
        return torch.nn.functional.cross_entropy(
            logits.reshape(-1, 5), f["labels"].reshape(-1), ignore_index=-1)

    loss = {"loss": "cross-entropy", "logits": "logits", "labels": "labels",
            "ignore_index": -1}
    return Spec(m.model(), m.weights, batch, reference, loss)


def transformer():
    m = ModelBuilder(np.float32, seed=4, opset=17)
    grads = load_sibling(__file__, "gradients-torch.py")
    feeds, reference = grads.transformer(m)
    vocab = 20

    def batch(rng):
        return {"tokens": rng.integers(0, vocab, feeds["tokens"].shape).astype(np.int64),
                "targets": rng.integers(0, vocab, feeds["targets"].shape).astype(np.int64)}

    dim = 16
    return Spec(m.model(), m.weights, batch, reference, {"loss": "loss"},
                {"qkv.bias": np.r_[0:dim, 2 * dim:3 * dim]})


def gpt(work):
    """cleave.models' GPT (one layer, hidden 16, vocabulary 32, 8
    positions, the LM head tied to the token embedding) exported by
    torch.onnx without constant folding, so that the initializers are the
    module's parameters, by name; the cross-entropy is attached."""
    import onnx
    from cleave.models.common import randomize_constant_init
    from cleave.models.text import GPT, TransformerConfig

    torch.manual_seed(0)
    config = TransformerConfig(vocab_size=32, max_positions=8, hidden=16,
                               heads=2, layers=1, batch=2, seq=8)
    module = GPT(config)
    randomize_constant_init(module)
    # Exported in float32 (the test's default dtype is float64).
    module = module.float()
    path = os.path.join(work, "gpt.onnx")
    torch.onnx.export(module, (torch.zeros(2, 8, dtype=torch.int64),), path,
                      input_names=["input_ids"], output_names=["logits"],
                      opset_version=17, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
    weights = {n: p.detach().numpy().copy() for n, p in module.named_parameters()}
    module = module.double()

    def batch(rng):
        return {"input_ids": rng.integers(0, 32, (2, 8)).astype(np.int64),
                "targets": rng.integers(0, 32, (2, 8)).astype(np.int64)}

    def reference(p, f):
        logits = module(f["input_ids"])
        return torch.nn.functional.cross_entropy(logits.reshape(-1, 32),
                                                 f["targets"].reshape(-1))

    loss = {"loss": "cross-entropy", "logits": "logits", "labels": "targets"}
    # The key bias, [16, 32) of the fused projection's, as above.
    compared = {"blocks.0.attn.qkv.bias": np.r_[0:16, 32:48]}
    return Spec(onnx.load(path), weights, batch, reference, loss, compared,
                params=dict(module.named_parameters()))


def lr_factor(step, warmup, decay, min_ratio):
    """The schedule cleave's update kernels follow (OptimizerMath.h)."""
    if step < warmup:
        return (step + 1) / warmup
    if decay <= warmup:
        return 1.0
    progress = min(1.0, (step - warmup) / (decay - warmup))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def torch_optimizer(params, options):
    kind = options.get("optimizer", "adamw")
    lr = options.get("lr", 1e-3)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=options.get("momentum", 0),
                               nesterov=options.get("nesterov", False),
                               weight_decay=options.get("weight-decay", 0))
    betas = tuple(float(b) for b in options.get("betas", "0.9,0.999").split(","))
    cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
    default_decay = 1e-2 if kind == "adamw" else 0
    return cls(params, lr=lr, betas=betas, eps=options.get("eps", 1e-8),
               weight_decay=options.get("weight-decay", default_decay))


def check(name, got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    error = float(np.max(np.abs(got - want)))
    bound = RTOL * float(np.max(np.abs(want))) + ATOL
    ok = error <= bound
    return ok, f"{name}  {'ok' if ok else 'MISMATCH'}  max error {error:.2g} <= {bound:.2g}"


def train(work, name, build, options):
    print(f"== {name}")
    spec = build(work) if build is gpt else build()
    make_batch, reference, compared = spec.batch, spec.reference, spec.compared
    bundle = cleave.compile(spec.model, f"{work}/{name}", train=options,
                            **spec.loss)
    trainer = cleave.Trainer(bundle)
    rng = np.random.default_rng(5)
    # Four batches, five times over: the loss falls.
    batches = [make_batch(rng) for _ in range(4)] * (STEPS // 4)
    losses = [trainer.step(b) for b in batches]

    params = spec.params
    optimizer = torch_optimizer(list(params.values()), options)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, options.get("warmup-steps", 0),
                                       options.get("decay-steps", 0),
                                       options.get("min-lr-ratio", 0)))
    want = []
    for b in batches:
        optimizer.zero_grad()
        value = reference(params, {k: torch.from_numpy(
            v.astype(np.float64) if v.dtype == np.float32 else v)
            for k, v in b.items()})
        value.backward()
        if "clip-grad-norm" in options:
            torch.nn.utils.clip_grad_norm_(params.values(),
                                           options["clip-grad-norm"])
        optimizer.step()
        schedule.step()
        want.append(value.item())

    failed = False
    ok, line = check(f"losses[{STEPS}]", losses, want)
    failed |= not ok
    print(line)
    print(f"loss {want[0]:.3f} -> {want[-1]:.3f}")
    trained = trainer.parameters()
    print("parameters", sorted(trained))
    for n, p in params.items():
        keep = compared.get(n, slice(None))
        ok, line = check(n, trained[n][keep], p.detach().numpy()[keep])
        failed |= not ok
        print(line)
    return failed


RUNS = {
    "mlp": [
        ("sgd_momentum", mlp, {"optimizer": "sgd", "lr": 0.5, "momentum": 0.9,
                               "weight-decay": 0.01}),
        ("sgd_nesterov_clipped", mlp, {"optimizer": "sgd", "lr": 0.5,
                                       "momentum": 0.9, "nesterov": True,
                                       "clip-grad-norm": 0.5}),
        ("adamw", mlp, {"optimizer": "adamw", "lr": 0.02, "weight-decay": 0.1}),
        ("adam_warmup_cosine", mlp, {"optimizer": "adam", "lr": 0.02,
                                     "betas": "0.8,0.99", "weight-decay": 0.01,
                                     "warmup-steps": 5, "decay-steps": 15,
                                     "min-lr-ratio": 0.1}),
    ],
    "transformer": [
        ("adamw", transformer, {"optimizer": "adamw", "lr": 0.01,
                                "clip-grad-norm": 1.0}),
        ("gpt_adamw", gpt, {"optimizer": "adamw", "lr": 0.01,
                            "clip-grad-norm": 1.0}),
    ],
}

if __name__ == "__main__":
    work, which = sys.argv[1], sys.argv[2]
    failed = False
    for name, build, options in RUNS[which]:
        failed |= train(work, f"{which}_{name}", build, options)
    sys.exit(1 if failed else 0)

# MLP-LABEL: == mlp_sgd_momentum
# MLP-NEXT: losses[20]  ok
# MLP: parameters ['fc1.bias', 'fc1.weight', 'fc2.weight']
# MLP-NOT: MISMATCH
# MLP-LABEL: == mlp_sgd_nesterov_clipped
# MLP-NEXT: losses[20]  ok
# MLP-NOT: MISMATCH
# MLP-LABEL: == mlp_adamw
# MLP-NEXT: losses[20]  ok
# MLP-NOT: MISMATCH
# MLP-LABEL: == mlp_adam_warmup_cosine
# MLP-NEXT: losses[20]  ok
# MLP-NOT: MISMATCH
# MLP: fc2.weight  ok

# GPT-LABEL: == transformer_adamw
# GPT-NEXT: losses[20]  ok
# GPT: parameters ['embedding', 'fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight', 'ln1.bias', 'ln1.weight', 'ln2.bias', 'ln2.weight', 'out.weight', 'position', 'qkv.bias', 'qkv.weight']
# GPT-NOT: MISMATCH
# GPT: qkv.weight  ok
# GPT-LABEL: == transformer_gpt_adamw
# GPT-NEXT: losses[20]  ok
# GPT: parameters ['blocks.0.attn.proj.bias', 'blocks.0.attn.proj.weight', 'blocks.0.attn.qkv.bias', 'blocks.0.attn.qkv.weight', 'blocks.0.ln_attn.bias', 'blocks.0.ln_attn.weight', 'blocks.0.ln_mlp.bias', 'blocks.0.ln_mlp.weight', 'blocks.0.mlp.0.bias', 'blocks.0.mlp.0.weight', 'blocks.0.mlp.2.bias', 'blocks.0.mlp.2.weight', 'ln_final.bias', 'ln_final.weight', 'position_embedding.weight', 'token_embedding.weight']
# GPT-NOT: MISMATCH
# GPT: ln_final.bias  ok
