# Activation recomputation (`cleave compile --train --recompute`): the
# backward recomputes the forward's activations from the segment boundaries
# instead of reading them from the stash. It computes the same step: the
# losses of 6 AdamW steps and the trained parameters are bitwise equal to
# the bundle without recomputation (also with 2 microbatches in GPipe's
# order, where the stash holds every microbatch's boundaries), and the
# program holds less: its arena (the stash included) is smaller.
#
# Model: the transformer block of gradients-torch.py (embeddings, layer
# norms, causal attention, GELU MLP, tied logits, cross-entropy).
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import collections
import json
import re
import sys

import numpy as np

import cleave
from cleave.testing import load_sibling


base = load_sibling(__file__, "train-torch.py")
OPTIONS = {"optimizer": "adamw", "lr": 0.01, "clip-grad-norm": 1.0}


def train(work, name, options, microbatches):
    spec = base.transformer()
    bundle = cleave.compile(spec.model, f"{work}/{name}",
                            train={**OPTIONS, **options,
                                   "microbatches": microbatches},
                            **spec.loss)
    trainer = cleave.Trainer(bundle)
    rng = np.random.default_rng(3)
    losses = []
    for _ in range(6):
        parts = [spec.batch(rng) for _ in range(microbatches)]
        losses.append(trainer.step(
            {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}))
    manifest = json.loads((bundle / "manifest.json").read_text())
    ir = (bundle / "model.mlir").read_text()
    recomputed = collections.Counter(
        re.findall(r"= cleave\.(\w+) [^\n]*\{[^\n]*cleave\.recomputed", ir))
    return (np.array(losses), trainer.parameters(),
            manifest["programs"][0]["arena_bytes"], recomputed)


def compare(work, name, microbatches, extra=None):
    extra = extra or {}
    print(f"== {name}")
    losses, params, arena, none = train(work, name, extra, microbatches)
    rlosses, rparams, rarena, recomputed = train(
        work, name + "_recompute", {**extra, "recompute": True}, microbatches)
    print("recomputed without --recompute:", sum(none.values()))
    print("recomputed ops:", ", ".join(f"{op} {n}" for op, n in
                                       sorted(recomputed.items())))
    print("losses equal:", np.array_equal(losses, rlosses),
          f"({losses[0]:.4f} -> {losses[-1]:.4f})")
    print("parameters equal:", sorted(params) == sorted(rparams) and
          all(np.array_equal(params[n], rparams[n]) for n in params))
    print(f"arena {arena} -> {rarena} bytes, smaller: {rarena < arena}")


if __name__ == "__main__":
    work = sys.argv[1]
    compare(work, "one", 1)
    compare(work, "gpipe_2", 2, {"schedule": "gpipe"})

# CHECK-LABEL: == one
# CHECK-NEXT: recomputed without --recompute: 0
# CHECK-NEXT: recomputed ops: {{.*}}attention 1, gelu 1, layer_norm 2, matmul 2
# CHECK-NEXT: losses equal: True
# CHECK-NEXT: parameters equal: True
# CHECK-NEXT: arena {{[0-9]+}} -> {{[0-9]+}} bytes, smaller: True
# CHECK-LABEL: == gpipe_2
# CHECK-NEXT: recomputed without --recompute: 0
# CHECK-NEXT: recomputed ops:
# CHECK-NEXT: losses equal: True
# CHECK-NEXT: parameters equal: True
# CHECK-NEXT: arena {{[0-9]+}} -> {{[0-9]+}} bytes, smaller: True
