# Pipelined training of the model families (families-torch.py's exports:
# GPT, BERT, ViT, ResNet, wav2vec 2.0, DeepSpeech; an attached mean squared
# error against random targets, SGD with momentum 0.9): 10 steps of the bundle for 2
# pipeline stages (`--devices 2 --pp 2`, 1F1B over 4 microbatches) against
# 10 steps of the one-device bundle with 4 microbatches, on the same global
# batches. Each stage runs the backward of its own ops and accumulates the
# same microbatch gradients in the same order as one device; ResNet's
# running statistics are updated per microbatch in the same order too.
#
# Tolerance: the losses within 1e-6 (relative) and every parameter (running
# statistics included) within 1e-5 of its largest magnitude (measured: at
# most 6e-7 and 4e-7). The stage
# programs compute what the one-device program computes, op for op, but a
# fused loop that calls exp, tanh or erf is vectorised or not depending on
# whether its buffers overlap, which the memory plan of each program
# decides, and the vector and scalar functions round differently in the
# last place; AdamW then turns the rounding noise of gradients that are 0
# in exact arithmetic (the attention's key bias) into steps of up to lr.
# The count of bitwise-equal parameters is printed, not checked.
#
# GPT ties its output projection to the token embedding: each stage holds a
# copy, accumulates its own reads' gradient over the microbatches, and the
# update all-reduces the two sums along pp (one device adds the two reads'
# gradients per microbatch instead). Also checked: both stages hold trained
# parameters (the plan balances the stages' training time).
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import json
import sys

import numpy as np

import cleave
from cleave.testing import load_sibling

base = load_sibling(__file__, "families-train-torch.py")
FAMILIES = ["gpt", "bert", "vit", "resnet", "wav2vec2", "deepspeech"]
STEPS = 10
MICROBATCHES = 4
LOSS_RTOL = 1e-6
RTOL = 1e-5
SGD_LR = {"resnet": 1e-3}


def global_batches(model, reference, output, blocks=MICROBATCHES):
    """STEPS global batches of `blocks` microbatches, each as
    families-train-torch.py draws them."""
    drawn = base.make_batches(model, reference, output)
    result = []
    for i in range(STEPS):
        parts = [drawn[(i + k) % len(drawn)] for k in range(blocks)]
        result.append({k: np.concatenate([p[k] for p in parts])
                       for k in parts[0]})
    return result


def run(family, work):
    print(f"== {family}")
    output = base.families.FAMILIES[family][0]
    model, reference, mapping = base.export(family, work)
    batches = global_batches(model, reference, output)
    options = {"optimizer": "sgd", "lr": SGD_LR.get(family, 0.01),
               "momentum": 0.9, "microbatches": MICROBATCHES}
    loss = {"loss": "mse", "logits": output, "labels": "labels"}
    bundles = [
        cleave.compile(model, f"{work}/{family}_one", **loss, train=options),
        cleave.compile(model, f"{work}/{family}_pp", devices=2, **loss,
                       train={**options, "pp": 2})]
    results = []
    for bundle in bundles:
        trainer = cleave.Trainer(bundle, threads=1)
        losses = np.array([trainer.step(b) for b in batches])
        results.append((losses, trainer.parameters()))
    (ref_losses, ref_params), (losses, params) = results
    equal = [n for n in ref_params
             if n in params and np.array_equal(params[n], ref_params[n])]
    statistics = len(set(ref_params) - set(mapping))
    manifest = json.loads((bundles[1] / "manifest.json").read_text())
    held = [{p["name"] for p in program.get("trained_parameters", [])}
            for program in manifest["programs"]]
    shared = sorted(set.intersection(*held))
    relative = max(float(np.max(np.abs(params[n] - ref_params[n])))
                   / max(float(np.max(np.abs(ref_params[n]))), 1e-30)
                   for n in ref_params)
    loss_error = float(np.max(np.abs(losses - ref_losses)
                              / np.abs(ref_losses)))
    within = sorted(params) == sorted(ref_params) and \
        loss_error <= LOSS_RTOL and relative <= RTOL
    print(f"pp=2: losses bitwise equal: {np.array_equal(losses, ref_losses)}; "
          f"parameters bitwise equal: {len(equal)} of {len(ref_params)} "
          f"({statistics} running statistics among them)")
    print(f"trained parameters on each stage: {all(held)}; held by both: "
          f"{', '.join(shared) or 'none'}; within tolerance: {within} (largest error "
          f"{relative:.1e} of the scale, losses {loss_error:.1e})")
    print(f"loss {ref_losses[0]:.4g} -> {ref_losses[-1]:.4g}")
    return all(held) and within


if __name__ == "__main__":
    work = sys.argv[1]
    failed = False
    for family in sys.argv[2:] or FAMILIES:
        failed |= not run(family, work)
    sys.exit(1 if failed else 0)

# CHECK-LABEL: == gpt
# CHECK-NEXT: pp=2: losses bitwise equal: {{True|False}}; parameters bitwise equal: {{[0-9]+}} of [[N:[0-9]+]] (0 running statistics among them)
# CHECK-NEXT: trained parameters on each stage: True; held by both: token_embedding.weight; within tolerance: True
# CHECK-LABEL: == bert
# CHECK-NEXT: pp=2: losses bitwise equal: {{True|False}}; parameters bitwise equal: {{[0-9]+}} of [[N:[0-9]+]] (0 running statistics among them)
# CHECK-NEXT: trained parameters on each stage: True; held by both: none; within tolerance: True
# CHECK-LABEL: == vit
# CHECK-NEXT: pp=2: losses bitwise equal: {{True|False}}; parameters bitwise equal: {{[0-9]+}} of [[N:[0-9]+]] (0 running statistics among them)
# CHECK-NEXT: trained parameters on each stage: True; held by both: none; within tolerance: True
# CHECK-LABEL: == resnet
# CHECK-NEXT: pp=2: losses bitwise equal: {{True|False}}; parameters bitwise equal: {{[0-9]+}} of [[N:[0-9]+]] ({{[1-9][0-9]*}} running statistics among them)
# CHECK-NEXT: trained parameters on each stage: True; held by both: none; within tolerance: True
# CHECK-LABEL: == wav2vec2
# CHECK-NEXT: pp=2: losses bitwise equal: {{True|False}}; parameters bitwise equal: {{[0-9]+}} of [[N:[0-9]+]] (0 running statistics among them)
# CHECK-NEXT: trained parameters on each stage: True; held by both: none; within tolerance: True
# CHECK-LABEL: == deepspeech
# CHECK-NEXT: pp=2: losses bitwise equal: {{True|False}}; parameters bitwise equal: {{[0-9]+}} of [[N:[0-9]+]] (0 running statistics among them)
# CHECK-NEXT: trained parameters on each stage: True; held by both: none; within tolerance: True
