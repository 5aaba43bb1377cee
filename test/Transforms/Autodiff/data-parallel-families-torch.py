# Data-parallel training of the model families (families-torch.py's
# exports: GPT, BERT, ViT, ResNet, wav2vec 2.0, DeepSpeech; an attached mean
# squared error against random targets, AdamW): 10 steps of the bundle for 2
# replicas (`--devices 2`, one microbatch each) against 10 steps of the
# one-device bundle with 2 microbatches, on the same global batches (the
# replicas' microbatches in order). The replicas all-reduce two gradient
# sums, which one device adds in the same order, so every loss and every
# trained parameter is bitwise equal.
#
# Batch normalisation's running statistics are not compared: each replica
# updates its own from its own microbatch, as PyTorch's DDP does without
# SyncBatchNorm, where one device updates them from both microbatches in
# turn; the batch statistics the step normalises with, and so the
# parameters, are the same. (families-train-torch.py checks the one-device
# step against torch.)
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import sys

import numpy as np

import cleave
from cleave.testing import load_sibling

base = load_sibling(__file__, "families-train-torch.py")
FAMILIES = ["gpt", "bert", "vit", "resnet", "wav2vec2", "deepspeech"]
STEPS = 10


def global_batches(model, reference, output):
    """STEPS global batches of two microbatches, each as families-train-
    torch.py draws them."""
    drawn = base.make_batches(model, reference, output)
    pairs = [(drawn[i % 4], drawn[(i + 1) % 4]) for i in range(STEPS)]
    return [{k: np.concatenate([a[k], b[k]]) for k in a} for a, b in pairs]


def run(family, work):
    print(f"== {family}")
    output = base.families.FAMILIES[family][0]
    model, reference, mapping = base.export(family, work)
    batches = global_batches(model, reference, output)
    options = {"optimizer": "adamw", "lr": base.LR.get(family, base.DEFAULT_LR),
               "weight-decay": base.WEIGHT_DECAY, "eps": base.EPS}
    if family in base.CLIP:
        options["clip-grad-norm"] = base.CLIP[family]
    loss = {"loss": "mse", "logits": output, "labels": "labels"}
    one = cleave.compile(model, f"{work}/{family}_one", **loss,
                         train={**options, "microbatches": 2})
    dp = cleave.compile(model, f"{work}/{family}_dp", devices=2, **loss,
                        train=options)
    results = []
    for bundle in (one, dp):
        trainer = cleave.Trainer(bundle, threads=1)
        losses = np.array([trainer.step(b) for b in batches])
        results.append((losses, trainer.parameters()))
    (ref_losses, ref_params), (losses, params) = results
    compared = sorted(n for n in mapping if n in ref_params)
    statistics = sorted(set(ref_params) - set(mapping))
    print("losses bitwise equal:", np.array_equal(losses, ref_losses))
    equal = [n for n in compared if np.array_equal(params[n], ref_params[n])]
    print(f"parameters bitwise equal: {len(equal)} of {len(compared)} "
          f"(of {len(mapping)} initializers; {len(statistics)} running "
          "statistics not compared)")
    print(f"loss {ref_losses[0]:.4g} -> {ref_losses[-1]:.4g}")
    return len(equal) == len(mapping) and np.array_equal(losses, ref_losses)


if __name__ == "__main__":
    work = sys.argv[1]
    failed = False
    for family in sys.argv[2:] or FAMILIES:
        failed |= not run(family, work)
    sys.exit(1 if failed else 0)

# CHECK-LABEL: == gpt
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running statistics not compared)
# CHECK-LABEL: == bert
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-LABEL: == vit
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-LABEL: == resnet
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; {{[1-9][0-9]*}} running
# CHECK-LABEL: == wav2vec2
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-LABEL: == deepspeech
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers
