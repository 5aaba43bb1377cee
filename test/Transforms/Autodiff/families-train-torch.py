# Twenty AdamW steps of the reference model families of families-torch.py
# but mobilenet_v2 and efficientnet_b0 (the same exports: parameters as
# initializers, batch norm in training mode, dropout removed; an attached
# mean squared error against random targets), compiled with --train and run
# by cleave.Trainer, against the same steps of torch.optim.AdamW (PyTorch
# 1.13) on the torch module from the same weights (its running statistics
# taken from the export, whose tracing moved them). Four batches, five times
# over: fresh random float inputs and targets, and token ids drawn anew.
# Options: betas 0.9,0.999, eps 1e-6, weight decay 0.1, lr 1e-3 (1e-4 for
# the families with batch norm, see below); gpt and lstm also clip the
# gradients' global norm, to a norm their gradients exceed (the summary says
# at how many steps).
#
# Compared: the loss of every step, and every parameter and batch-norm
# running statistic after the last step, cleave in float32 against torch in
# float64, within 1e-4 * max |reference| + 1e-6 per step's loss and per
# tensor.
#
# Why eps 1e-6 and not torch's 1e-8: a gradient element below float32's
# resolution of the model's gradients (about 1e-7 of the largest) is
# rounding noise in any float32 run, and with eps 1e-8 Adam divides that
# noise by its own root mean square and moves the element by a whole lr in
# a direction the noise chose (in gpt's attention weights that is twice the
# bound after 20 steps); eps 1e-6 damps it. The update kernel is the same
# for any eps, and train-torch.py runs the default.
#
# The families with batch norm are chaotic in float32 (resnet's batch norms
# see 4 values per channel in the last block: 4 images of 1x1 pixels): float32
# rounding flips the sign of small gradient elements, which Adam turns into
# steps of lr, and runs part. At lr 1e-3 torch's own float32 run ends up to
# 80% (resnet) and 1.6% (mobilenet_v3_small) away from float64's, relative
# to a tensor's scale; at lr 1e-4, 0.3% and 0.02%. Their bound adds twice
# that distance: twice the largest relative distance of torch's float32 run
# (the same steps in torch in float32) over the model, times the tensor's
# scale; for the loss of step k, twice the largest distance of torch's
# float32 losses up to step k. (At lr 1e-4 cleave is within 0.15 and 0.4 of
# that bound, at lr 1e-3 within 0.8; without the added distance resnet fails
# the plain bound 6.4 times over, mobilenet_v3_small 1.8 times.) torch's
# float32 is no yardstick for the other families: its GroupNorm gradients in
# wav2vec2's feature extractor are 60-80% off float64's, where cleave's are
# within 1e-4.
#
# Elements whose float64 gradient is 0 up to rounding at every step (below
# 1e-12 of the model's largest gradient element, and not exactly 0) are not
# held to that bound: the loss does not depend on them (a key bias shifts a
# row of attention scores by a constant; a bias before a training-mode batch
# norm, through a 1x1 convolution, shifts a channel by a constant), and Adam
# moves them by up to (1 - beta1) / sqrt(1 - beta2) * lr a step (Kingma and
# Ba, section 2.1) in directions their rounding noise chooses, which differ
# between float32 and float64. They are held to that: two runs differ by at
# most twice that times the number of steps. Elements whose gradient is
# exactly 0 (a dead unit, an embedding row no batch uses) only decay, and are
# held to the bound above.
#
# mobilenet_v2 is left out: its gradient is not continuous within float32
# rounding (families-torch.py), and after 20 steps torch's own float32 run
# ends 25% away from float64's. efficientnet_b0 trains as close as resnet
# does (at lr 1e-4, within 0.6 of that bound) but would add 30 s.
#
# Takes 30 to 60 s on two cores.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import importlib.util
import math
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

import cleave

STEPS = 20
BETAS, EPS, WEIGHT_DECAY = (0.9, 0.999), 1e-6, 0.1
# The learning rate, lower for the families with batch norm (see above).
LR = {"resnet": 1e-4, "mobilenet_v3_small": 1e-4}
DEFAULT_LR = 1e-3
RTOL, ATOL = 1e-4, 1e-6
# The families whose bound adds torch float32's own distance from float64
# (see above), and how many times that distance.
CHAOTIC = {"resnet", "mobilenet_v3_small"}
FLOAT32_FACTOR = 2
# A float64 gradient element below this fraction of the model's largest is
# rounding noise around an exact 0.
ZERO_GRADIENT = 1e-12
# Families with clipping: the global norm their gradients are clipped to.
CLIP = {"gpt": 1.0, "lstm": 0.3}


def load_test_module(name):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


families = load_test_module("families-torch.py")
TRAINED = [f for f in families.FAMILIES
           if f not in ("mobilenet_v2", "efficientnet_b0")]


def export(family, work):
    """The family's ONNX model, its reference, and {initializer: torch
    parameter name}, as families-torch.py makes them."""
    output, image_size = families.FAMILIES[family]
    reference = families.build(family, image_size)
    module = reference.module
    path = f"{work}/{family}.onnx"
    torch.onnx.export(
        module, tuple(reference.inputs.values()), path,
        input_names=list(reference.inputs),
        output_names=list(reference.output_names), opset_version=17,
        do_constant_folding=False,
        training=(torch.onnx.TrainingMode.TRAINING if module.training
                  else torch.onnx.TrainingMode.EVAL))
    model = onnx.load(path)
    return model, reference, families.parameter_of_initializers(model, module)


def make_batches(model, reference, output):
    """Four batches, five times over: each float input drawn anew with its
    example's standard deviation, token ids drawn below the largest example
    id, other inputs (masks, segment ids) kept; random targets."""
    shape = [d.dim_value for o in model.graph.output if o.name == output
             for d in o.type.tensor_type.shape.dim]
    rng = np.random.default_rng(2)
    batches = []
    for _ in range(4):
        batch = {}
        for name, value in reference.inputs.items():
            value = value.numpy()
            if value.dtype == np.float32:
                batch[name] = (rng.standard_normal(value.shape)
                               * value.std()).astype(np.float32)
            elif name == "input_ids":
                batch[name] = rng.integers(0, value.max() + 1, value.shape,
                                           dtype=value.dtype)
            else:
                batch[name] = value
        batch["labels"] = rng.standard_normal(shape).astype(np.float32)
        batches.append(batch)
    return batches * (STEPS // 4)


def torch_run(family, model, reference, output, batches, dtype):
    """The steps in torch in `dtype`: (losses, {parameter or running
    statistic: final value}, [{parameter: gradient} per step], steps whose
    gradients were clipped)."""
    module = families.build(family, families.FAMILIES[family][1]).module
    # The running statistics start from the exported model's: tracing ran
    # the module forward, which moved them.
    initializers = {t.name: t for t in model.graph.initializer}
    with torch.no_grad():
        for name, buffer in module.named_buffers():
            if buffer.is_floating_point():
                buffer.copy_(torch.from_numpy(
                    numpy_helper.to_array(initializers[name]).copy()))
    module = module.to(dtype)
    params = dict(module.named_parameters())
    optimizer = torch.optim.AdamW(
        params.values(), lr=LR.get(family, DEFAULT_LR), betas=BETAS, eps=EPS,
        weight_decay=WEIGHT_DECAY)
    losses, gradients, clipped = [], [], 0
    for batch in batches:
        optimizer.zero_grad()
        inputs = [torch.from_numpy(batch[n]) for n in reference.inputs]
        inputs = [v.to(dtype) if v.is_floating_point() else v for v in inputs]
        result = module(*inputs)
        if isinstance(result, tuple):
            result = result[list(reference.output_names).index(output)]
        loss = torch.nn.functional.mse_loss(
            result, torch.from_numpy(batch["labels"]).to(dtype))
        loss.backward()
        gradients.append({n: (p.grad.detach().clone() if p.grad is not None
                              else torch.zeros_like(p))
                          for n, p in params.items()})
        if family in CLIP:
            norm = torch.nn.utils.clip_grad_norm_(params.values(),
                                                  CLIP[family])
            clipped += int(norm > CLIP[family])
        optimizer.step()
        losses.append(loss.item())
    final = {n: p.detach().double().numpy() for n, p in params.items()}
    final.update({n: b.double().numpy() for n, b in module.named_buffers()
                  if b.is_floating_point()})
    return np.array(losses), final, gradients, clipped


def noise_gradient_elements(gradients):
    """{parameter: mask of the elements whose float64 gradient is rounding
    noise around 0 at every step}. An element whose gradient is exactly 0
    at every step (a dead unit, an embedding row no batch uses) is not
    noise: only the weight decay moves it, the same way in both."""
    masks, exact = {}, {}
    for step in gradients:
        largest = max(float(g.abs().max()) for g in step.values())
        for name, gradient in step.items():
            zero = (gradient.abs() <= ZERO_GRADIENT * largest).numpy()
            masks[name] = masks.get(name, zero) & zero
            exact[name] = exact.get(name, True) & (gradient == 0).numpy()
    return {name: mask & ~exact[name] for name, mask in masks.items()}


def float32_distance(final, final32, noise):
    """How far torch's float32 run ends from its float64 one: the largest
    distance of a tensor relative to its scale, over the model, elements of
    a 0 gradient left out."""
    distance = 0.0
    for name, value in final.items():
        kept = ~noise[name] if name in noise else np.ones(value.shape, bool)
        if np.any(value):
            distance = max(distance,
                           float(np.max(np.abs(final32[name] - value)[kept],
                                        initial=0.0))
                           / float(np.max(np.abs(value))))
    return distance


def compare(name, got, want, distance, mask, lr):
    """Checks `got` against the float64 `want` outside `mask` and against
    Adam's largest displacement inside it; prints one line and returns the
    error's ratio to its bound."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    error = np.abs(got - want)
    bound = ((RTOL + FLOAT32_FACTOR * distance) * float(np.max(np.abs(want)))
             + ATOL)
    largest = float(np.max(error[~mask], initial=0.0))
    ratio = largest / bound
    line = f"{name}  {{}}  max error {largest:.2g} <= {bound:.2g}"
    if mask.any():
        step = (1 - BETAS[0]) / math.sqrt(1 - BETAS[1]) * lr
        noise_bound = 2 * STEPS * step
        noise = float(np.max(error[mask]))
        ratio = max(ratio, noise / noise_bound)
        line += (f"; {int(mask.sum())} of {mask.size} with a 0 gradient"
                 f" {noise:.2g} <= {noise_bound:.2g}")
    print(line.format("ok" if ratio <= 1 else "MISMATCH"))
    return ratio


def compare_losses(got, want, float32):
    """Step k's loss within the first bound plus FLOAT32_FACTOR times the
    largest distance of torch float32's losses up to step k."""
    distance = np.maximum.accumulate(np.abs(float32 - want))
    bounds = RTOL * np.max(np.abs(want)) + ATOL + FLOAT32_FACTOR * distance
    errors = np.abs(np.asarray(got) - want)
    worst = int(np.argmax(errors / bounds))
    ratio = float(errors[worst] / bounds[worst])
    print(f"losses[{STEPS}]  {'ok' if ratio <= 1 else 'MISMATCH'}  step "
          f"{worst + 1} error {errors[worst]:.2g} <= {bounds[worst]:.2g}")
    return ratio


def run(family, work):
    print(f"== {family}")
    output = families.FAMILIES[family][0]
    model, reference, mapping = export(family, work)
    batches = make_batches(model, reference, output)

    lr = LR.get(family, DEFAULT_LR)
    options = {"optimizer": "adamw", "lr": lr,
               "betas": f"{BETAS[0]},{BETAS[1]}", "weight-decay": WEIGHT_DECAY,
               "eps": EPS}
    if family in CLIP:
        options["clip-grad-norm"] = CLIP[family]
    bundle = cleave.compile(model, f"{work}/{family}", loss="mse",
                            logits=output, labels="labels", train=options)
    trainer = cleave.Trainer(bundle)
    losses = [trainer.step(b) for b in batches]
    trained = trainer.parameters()

    want, final, gradients, clipped = torch_run(
        family, model, reference, output, batches, torch.float64)
    noise = noise_gradient_elements(gradients)
    if family in CHAOTIC:
        want32, final32, _, _ = torch_run(
            family, model, reference, output, batches, torch.float32)
        distance = float32_distance(final, final32, noise)
        print(f"torch float32: {distance:.2g} away from float64")
    else:
        want32, distance = want, 0.0

    worst = compare_losses(losses, want, want32)
    failed = False
    for initializer, parameter in mapping.items():
        if parameter is None or initializer not in trained:
            print(f"{initializer}  MISMATCH  not trained or no torch "
                  "parameter")
            failed = True
            continue
        worst = max(worst, compare(initializer, trained[initializer],
                                   final[parameter], distance,
                                   noise[parameter], lr))
    # The rest of what the step updates: batch norm's running statistics,
    # initializers named as torch's buffers.
    statistics = sorted(set(trained) - set(mapping))
    for name in statistics:
        if name not in final:
            print(f"{name}  MISMATCH  updated, but no torch buffer")
            failed = True
            continue
        worst = max(worst, compare(name, trained[name], final[name], distance,
                                   np.zeros(final[name].shape, bool), lr))
    failed |= worst > 1
    # cleave's losses; the same four batches open and close the run.
    falls = np.mean(losses[-4:]) < np.mean(losses[:4])
    print(f"{family}: {'ok' if not failed else 'FAILED'} "
          f"{len(mapping)} parameters, {len(statistics)} running statistics,"
          f" worst error {worst:.2f} of its bound; loss {want[0]:.3g} -> "
          f"{want[-1]:.3g} ({'falls' if falls else 'does not fall'}), "
          f"clipped at {clipped} steps")
    return failed


if __name__ == "__main__":
    work = sys.argv[1]
    names = sys.argv[2:] or TRAINED
    failed = False
    for family in names:
        failed |= run(family, work)
    sys.exit(1 if failed else 0)

# Per family: no mismatch, every parameter (and running statistic) compared,
# and the loss falls (the last four steps' against the first four's, the same
# batches); gpt and lstm clip at some steps.
# CHECK-LABEL: == gpt
# CHECK-NOT: MISMATCH
# CHECK: gpt: ok 28 parameters, 0 running statistics, {{.*}} (falls), clipped at {{[1-9][0-9]*}} steps
# CHECK-LABEL: == bert
# CHECK-NOT: MISMATCH
# CHECK: bert: ok 31 parameters, 0 running statistics, {{.*}} (falls)
# CHECK-LABEL: == vit
# CHECK-NOT: MISMATCH
# CHECK: vit: ok 32 parameters, 0 running statistics, {{.*}} (falls)
# CHECK-LABEL: == resnet
# CHECK-NOT: MISMATCH
# CHECK: resnet: ok 38 parameters, 24 running statistics, {{.*}} (falls)
# CHECK-LABEL: == wav2vec2
# CHECK-NOT: MISMATCH
# CHECK: wav2vec2: ok 47 parameters, 0 running statistics, {{.*}} (falls)
# CHECK-LABEL: == deepspeech
# CHECK-NOT: MISMATCH
# CHECK: deepspeech: ok 18 parameters, 0 running statistics, {{.*}} (falls)
# CHECK-LABEL: == lstm
# CHECK-NOT: MISMATCH
# CHECK: lstm: ok 18 parameters, 0 running statistics, {{.*}} (falls), clipped at {{[1-9][0-9]*}} steps
# CHECK-LABEL: == gru
# CHECK-NOT: MISMATCH
# CHECK: gru: ok 6 parameters, 0 running statistics, {{.*}} (falls)
# CHECK-LABEL: == mobilenet_v3_small
# CHECK-NOT: MISMATCH
# CHECK: mobilenet_v3_small: ok 142 parameters, 68 running statistics, {{.*}} (falls)
# CHECK-NOT: MISMATCH
