# Float16 training steps with dynamic loss scaling (`cleave compile --train
# --precision fp16`) against an emulation in torch (float32) of the same
# rounding and scaling, from the same initial weights on the same batches:
# every matrix product reads its operands rounded to float16 (torch's own
# conversion: round to nearest even, overflow to inf, subnormals as IEEE)
# and rounds its result, and the loss scaling follows torch's GradScaler:
# the loss times the scale is differentiated (the casts' backward rounds
# the scaled cotangents to float16, where they overflow), a step whose
# gradients hold an inf or NaN is skipped and halves the scale, the others
# unscale the gradients (before clipping) and step, and the scale doubles
# after `loss-scale-growth-interval` good steps in a row.
#
# - mlp (AdamW, clipping, the default scale 65536) and gpt (cleave.models'
#   one-layer GPT, SGD with momentum, clipping, scale 1024 growing every 3
#   steps), 10 steps: the first loss agrees to 1e-5 relative, every loss
#   to max |error| <= 1e-3 * max |loss| (sums in another order may round
#   a value next to a float16 tie the other way), the scale and the skipped
#   steps after every step are exactly the emulation's (read from a
#   checkpoint of the step), and the parameters after the last step agree
#   to 1e-2 * max |parameter| + 1e-4. The gpt's scale grows.
# - overflow: the mlp from a scale of 2^24, which overflows: the steps the
#   emulation skips are exactly those cleave skips (the first, not all, not
#   the last; here a good step at the lower scale can be followed by
#   another overflow); a skipped step halves the scale, counts itself, and
#   leaves every parameter and every optimizer state (moments, step count)
#   bitwise as the step before left them; the good steps after it train.
# - resume: 8 steps of the mlp from a scale of 2^20 growing every 2 steps,
#   straight, against 4 steps, a checkpoint (Trainer.save), a new session
#   restored from it (Trainer.load) and 4 more: the losses and the whole
#   persistent memory (parameters, optimizer state, scale and counters) are
#   bitwise equal.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t mlp | FileCheck %s --check-prefix=MLP
# RUN: %python %s %t gpt | FileCheck %s --check-prefix=GPT
# RUN: %python %s %t overflow | FileCheck %s --check-prefix=OVERFLOW
# RUN: %python %s %t resume | FileCheck %s --check-prefix=RESUME
# MLP-LABEL: == mlp
# MLP-NEXT: first ok
# MLP-NEXT: emulation ok
# MLP-NEXT: scaling ok
# MLP-NOT: MISMATCH
# GPT-LABEL: == gpt
# GPT-NEXT: first ok
# GPT-NEXT: emulation ok
# GPT-NEXT: scaling ok
# GPT-NEXT: scale grew ok
# GPT-NOT: MISMATCH
# OVERFLOW-LABEL: == overflow
# OVERFLOW-NEXT: emulation ok
# OVERFLOW-NEXT: scaling ok
# OVERFLOW-NEXT: skips then trains ok
# OVERFLOW-NEXT: skipped steps unchanged ok
# OVERFLOW-NEXT: good steps train ok
# OVERFLOW-NOT: MISMATCH
# RESUME-LABEL: == resume
# RESUME-NEXT: skipped and grew ok
# RESUME-NEXT: losses equal ok
# RESUME-NEXT: memory equal ok

import json
import os
import sys

import numpy as np
import torch

import cleave
from cleave.testing import load_sibling

mixed = load_sibling(__file__, "mixed-precision-train-torch.py")
trained = mixed.trained

STEPS = 10
OPTIONS = {
    "mlp": {"optimizer": "adamw", "lr": 0.01, "clip-grad-norm": 1.0},
    "gpt": {"optimizer": "sgd", "lr": 0.1, "momentum": 0.9,
            "clip-grad-norm": 1.0, "loss-scale": 1024,
            "loss-scale-growth-interval": 3},
    "overflow": {"optimizer": "adamw", "lr": 0.01, "clip-grad-norm": 1.0,
                 "loss-scale": 2.0**24},
    "resume": {"optimizer": "adamw", "lr": 0.01, "loss-scale": 2.0**20,
               "loss-scale-growth-interval": 2},
}
FIRST_RTOL, EMULATION_RTOL = 1e-5, 1e-3
PARAM_RTOL, PARAM_ATOL = 1e-2, 1e-4
SCALE_STATES = ("loss_scale", "loss_scale.good_steps",
                "loss_scale.skipped_steps")


def verdict(ok):
    return "ok" if ok else "MISMATCH"


def read_checkpoint(directory):
    """The named regions and states of a one-device checkpoint, as bytes,
    and its whole persistent memory."""
    with open(os.path.join(directory, "rank_0.bin"), "rb") as f:
        data = f.read()
    assert data[:8] == b"CLEAVECK"
    length = int.from_bytes(data[8:16], "little")
    header = json.loads(data[16:16 + length])
    memory = data[header["data_offset"]:]
    named = {e["name"]: memory[e["offset"]:e["offset"] + e["bytes"]]
             for e in header["regions"] + header["states"]}
    return named, memory


def scalar(named, name):
    return float(np.frombuffer(named[name], np.float32)[0])


class GradScalerEmulation:
    """torch.cuda.amp.GradScaler's decisions, on the CPU."""

    def __init__(self, scale, interval):
        self.scale, self.interval = scale, interval
        self.good, self.skipped = 0, 0

    def step(self, params, optimizer, clip):
        """Unscales, clips and steps unless a gradient overflowed; then
        updates the scale. Returns whether the step was skipped."""
        grads = [p.grad for p in params if p.grad is not None]
        if not all(bool(torch.isfinite(g).all()) for g in grads):
            self.scale *= 0.5
            self.good = 0
            self.skipped += 1
            return True
        inverse = torch.tensor(self.scale, dtype=torch.float64).reciprocal()
        for g in grads:
            g.mul_(inverse.float())
        if clip:
            torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
        self.good += 1
        if self.good == self.interval:
            self.scale *= 2.0
            self.good = 0
        return False


def spec_of(which, work):
    return mixed.float32_spec("gpt" if which == "gpt" else "mlp", work)


def emulate(spec, batches, options):
    params = list(spec.params.values())
    optimizer = trained.torch_optimizer(params, options)
    scaler = GradScalerEmulation(options.get("loss-scale", 65536.0),
                                 options.get("loss-scale-growth-interval",
                                             2000))
    losses, scales = [], []
    for b in batches:
        optimizer.zero_grad()
        with mixed.LowPrecisionProducts(torch.float16):
            value = spec.reference(spec.params, {
                k: torch.from_numpy(v) for k, v in b.items()})
        (value * scaler.scale).backward()
        skipped = scaler.step(params, optimizer, options.get("clip-grad-norm"))
        losses.append(value.item())
        scales.append((scaler.scale, skipped))
    return np.array(losses), scales


def train(work, name, spec, batches, options):
    """Runs the bundle; returns the losses, each step's (scale, skipped)
    and checkpoint contents (the first before any step), and the final
    parameters."""
    bundle = cleave.compile(spec.model, f"{work}/{name}",
                            train=dict(options, precision="fp16"),
                            **spec.loss)
    trainer = cleave.Trainer(bundle)
    trainer.save(f"{work}/{name}_ckpt_0")
    states = [read_checkpoint(f"{work}/{name}_ckpt_0")[0]]
    losses, scales = [], []
    for step, b in enumerate(batches, 1):
        losses.append(trainer.step(b))
        trainer.save(f"{work}/{name}_ckpt_{step}")
        named = read_checkpoint(f"{work}/{name}_ckpt_{step}")[0]
        skipped = (scalar(named, "loss_scale.skipped_steps")
                   > scalar(states[-1], "loss_scale.skipped_steps"))
        scales.append((scalar(named, "loss_scale"), skipped))
        states.append(named)
    return np.array(losses), scales, states, trainer.parameters()


def compare_losses(got, want, first=True):
    scale = float(np.max(np.abs(want)))
    errors = np.abs(got - want)
    if first:
        bound = FIRST_RTOL * float(abs(want[0]))
        print(f"first {verdict(errors[0] <= bound)}  error {errors[0]:.2g} "
              f"<= {bound:.2g}")
    bound = EMULATION_RTOL * scale
    print(f"emulation {verdict(errors.max() <= bound)}  max error "
          f"{errors.max():.2g} <= {bound:.2g}")


def compare_scales(got, want):
    print(f"scaling {verdict(got == want)}  cleave {got}, emulation {want}")


def compare_parameters(spec, params):
    for name, p in spec.params.items():
        keep = spec.compared.get(name, slice(None))
        want = p.detach().numpy()[keep]
        error = float(np.max(np.abs(params[name][keep] - want)))
        bound = PARAM_RTOL * float(np.max(np.abs(want))) + PARAM_ATOL
        print(f"{name}  {verdict(error <= bound)}  max error {error:.2g} "
              f"<= {bound:.2g}")


def batches_of(spec, steps):
    rng = np.random.default_rng(5)
    return [spec.batch(rng) for _ in range(steps)]


def numerics(work, which):
    spec = spec_of(which, work)
    batches = batches_of(spec, STEPS)
    losses, scales, _, params = train(work, which, spec, batches,
                                      OPTIONS[which])
    want, want_scales = emulate(spec, batches, OPTIONS[which])
    compare_losses(losses, want)
    compare_scales(scales, want_scales)
    if which == "gpt":
        grew = scales[-1][0] > OPTIONS["gpt"]["loss-scale"]
        print(f"scale grew {verdict(grew)}  to {scales[-1][0]}")
    compare_parameters(spec, params)


def overflow(work):
    spec = spec_of("mlp", work)
    batches = batches_of(spec, 12)
    options = OPTIONS["overflow"]
    losses, scales, states, params = train(work, "overflow", spec, batches,
                                           options)
    want, want_scales = emulate(spec, batches, options)
    compare_losses(losses, want, first=False)
    compare_scales(scales, want_scales)
    skips = [skipped for _, skipped in scales]
    ok = skips[0] and not all(skips) and not skips[-1]
    print(f"skips then trains {verdict(ok)}  skipped {skips}")
    ok = True
    previous_scale = options["loss-scale"]
    for step, (scale, skipped) in enumerate(scales, 1):
        before, after = states[step - 1], states[step]
        if skipped:
            unchanged = all(after[n] == before[n] for n in after
                            if n not in SCALE_STATES)
            counted = (scalar(after, "loss_scale.skipped_steps")
                       == scalar(before, "loss_scale.skipped_steps") + 1)
            ok = ok and unchanged and counted and scale == 0.5 * previous_scale
        previous_scale = scale
    print(f"skipped steps unchanged {verdict(ok)}")
    ok = all(any(states[step][n] != states[step - 1][n] for n in params)
             for step, (_, skipped) in enumerate(scales, 1) if not skipped)
    print(f"good steps train {verdict(ok)}")
    compare_parameters(spec, params)


def resume(work):
    spec = spec_of("mlp", work)
    batches = batches_of(spec, 8)
    options = dict(OPTIONS["resume"], precision="fp16")
    bundle = cleave.compile(spec.model, f"{work}/resume", train=options,
                            **spec.loss)
    straight = cleave.Trainer(bundle)
    losses = [straight.step(b) for b in batches]
    straight.save(f"{work}/straight")
    first = cleave.Trainer(bundle)
    resumed = [first.step(b) for b in batches[:4]]
    first.save(f"{work}/half")
    second = cleave.Trainer(bundle)
    second.load(f"{work}/half")
    resumed += [second.step(b) for b in batches[4:]]
    second.save(f"{work}/resumed")
    named, memory = read_checkpoint(f"{work}/straight")
    # From 2^20 the first steps overflow; later ones grow the scale.
    ok = (scalar(named, "loss_scale.skipped_steps") > 0
          and scalar(named, "loss_scale.good_steps") < 2
          and scalar(named, "loss_scale") > 0)
    print(f"skipped and grew {verdict(ok)}  scale "
          f"{scalar(named, 'loss_scale')}, skipped "
          f"{scalar(named, 'loss_scale.skipped_steps')}")
    print(f"losses equal {verdict(np.array_equal(losses, resumed))}")
    print(f"memory equal "
          f"{verdict(memory == read_checkpoint(f'{work}/resumed')[1])}")


def main(work, which):
    print(f"== {which}")
    if which in ("mlp", "gpt"):
        numerics(work, which)
    elif which == "overflow":
        overflow(work)
    else:
        resume(work)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
