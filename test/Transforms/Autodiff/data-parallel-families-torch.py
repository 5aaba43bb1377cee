# Data-parallel training of the model families (families-torch.py's
# exports: GPT, BERT, ViT, ResNet, wav2vec 2.0, DeepSpeech; an attached mean
# squared error against random targets, AdamW): 10 steps of the bundle for 2
# replicas (`--devices 2`, one microbatch each) against 10 steps of the
# one-device bundle with 2 microbatches, on the same global batches (the
# replicas' microbatches in order); and the same on 2 replicas under ZeRO
# stage 1 (`zero: 1`, the optimizer state sharded). The replicas all-reduce
# (or reduce-scatter) two gradient sums, which one device adds in the same
# order, and the updates are elementwise, so every loss and every trained
# parameter is bitwise equal. No clipping here: its norm adds the squares in
# another order under ZeRO (runtime/data-parallel-train.py checks that
# within a tolerance).
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
    loss = {"loss": "mse", "logits": output, "labels": "labels"}
    bundles = [
        cleave.compile(model, f"{work}/{family}_one", **loss,
                       train={**options, "microbatches": 2}),
        cleave.compile(model, f"{work}/{family}_dp", devices=2, **loss,
                       train=options),
        cleave.compile(model, f"{work}/{family}_zero", devices=2, **loss,
                       train={**options, "zero": 1})]
    results = []
    for bundle in bundles:
        trainer = cleave.Trainer(bundle, threads=1)
        losses = np.array([trainer.step(b) for b in batches])
        results.append((losses, trainer.parameters()))
    ref_losses, ref_params = results[0]
    compared = sorted(n for n in mapping if n in ref_params)
    statistics = sorted(set(ref_params) - set(mapping))
    ok = True
    for name, (losses, params) in zip(("dp=2", "ZeRO-1"), results[1:]):
        equal = [n for n in compared
                 if np.array_equal(params[n], ref_params[n])]
        print(f"{name}: losses bitwise equal: "
              f"{np.array_equal(losses, ref_losses)}; parameters bitwise "
              f"equal: {len(equal)} of {len(compared)} (of {len(mapping)} "
              f"initializers; {len(statistics)} running statistics not "
              "compared)")
        ok = ok and len(equal) == len(mapping) and np.array_equal(
            losses, ref_losses)
    print(f"loss {ref_losses[0]:.4g} -> {ref_losses[-1]:.4g}")
    return ok


if __name__ == "__main__":
    work = sys.argv[1]
    failed = False
    for family in sys.argv[2:] or FAMILIES:
        failed |= not run(family, work)
    sys.exit(1 if failed else 0)

# CHECK-LABEL: == gpt
# CHECK-NEXT: dp=2: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-NEXT: ZeRO-1: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-LABEL: == bert
# CHECK-NEXT: dp=2: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-NEXT: ZeRO-1: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-LABEL: == vit
# CHECK-NEXT: dp=2: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-NEXT: ZeRO-1: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-LABEL: == resnet
# CHECK-NEXT: dp=2: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; {{[1-9][0-9]*}} running
# CHECK-NEXT: ZeRO-1: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; {{[1-9][0-9]*}} running
# CHECK-LABEL: == wav2vec2
# CHECK-NEXT: dp=2: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-NEXT: ZeRO-1: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers; 0 running
# CHECK-LABEL: == deepspeech
# CHECK-NEXT: dp=2: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers
# CHECK-NEXT: ZeRO-1: losses bitwise equal: True; parameters bitwise equal: [[N:[0-9]+]] of [[N]] (of [[N]] initializers
