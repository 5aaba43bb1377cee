# The gradients of the reference models (python/cleave/models) against torch
# autograd: gpt, bert, vit, resnet, wav2vec2, deepspeech, lstm, gru,
# mobilenet_v3_small, mobilenet_v2 and efficientnet_b0. Each model is
# exported by torch.onnx with its parameters as initializers (no constant
# folding; models with batch norm in training mode, so that their
# BatchNormalization nodes compute the batch statistics as .train() does;
# dropout removed), compiled with --gradients
# and an attached mean squared error of its output against random float
# targets, and run once. torch computes the same loss in float64 from the
# same weights and inputs; cleave computes in float32. Each initializer is
# matched to the torch parameter of its name, or else to the one parameter
# holding the same values (should the exporter rename one), and every
# parameter must have its gradient.
# Tolerance: max |error| <= 1e-4 * max |reference| + 1e-6 per gradient, and
# for the loss, but for two families:
# - efficientnet_b0 and mobilenet_v2: the floor is 1e-6 of the model's
#   largest gradient element (57 and 11 here) instead of 1e-6. Biases before
#   a training-mode batch norm have an exact gradient of 0, and what float32
#   leaves of it is rounding of sums whose terms scale with the model's
#   gradients: in efficientnet_b0 1e-6 to 1.1e-5 in four (torch's own float32
#   leaves up to 4e-6, beyond 1e-6 in two), in mobilenet_v2 up to 9e-7.
# - resnet: the floor is 5e-6 of the model's largest gradient element (2.2
#   here). Each convolution feeds a training-mode batch norm, whose
#   backward subtracts the batch means: a weight's gradient is a difference
#   of sums whose terms scale with the model's gradients. On
#   layer4.0.downsample.0.weight (scale 0.19) torch's own float32 leaves
#   1.0e-5 and cleave's 2.0e-5 (its forward convolutions sum in oneDNN's
#   order), the whole of the old bound of 1e-4 of the scale plus 1e-6.
# - mobilenet_v2: its gradient is not a continuous function of the input
#   within float32 rounding. ReLU6 has no derivative at 0 and 6, and some of
#   the pre-activations its training-mode batch norms make lie within
#   rounding of those points, so that float64 itself, fed the same image
#   moved by half a float32 ulp per pixel, gives gradients 1e-3 (relative
#   to each tensor's scale) away, beyond the bound in 90 of 158
#   (torch's float32 happens to stay within it; cleave's is 1e-3 away too).
#   A float32 forward pass is further from float64 than a moved image:
#   its ReLU6 inputs are off by up to 1.2e-4 in the last blocks (torch's
#   float32 and cleave's alike), and a pre-activation that close to 0 or 6
#   (there is one: 1.4e-4 in features.18) lands on either side as the
#   products' summation order falls, moving every gradient upstream of it
#   by about 1% (an FMA-less BLAS kernel puts it below 0, an FMA one
#   above). So the test also computes the float64 gradients with every
#   ReLU6 input that lies within twice float32's forward error of 0 or 6
#   (that error measured per ReLU6 against torch's float32 forward) moved
#   across it. The bound adds twice the largest distance of any of these
#   gradients from the unmoved one's, relative to a tensor's scale, times
#   the tensor's scale.
#
# The speech and recurrent families run in families-speech-torch.py, the
# three mobile CNNs in families-cnn-torch.py (both this script), so that
# each test stays within the time limit of a sanitized run.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t gpt bert vit resnet | FileCheck %s

import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

import cleave
from cleave.models.registry import MODELS
from cleave.testing.gradients import check

RTOL, ATOL = 1e-4, 1e-6

# family: (graph output the loss is attached to, image size for the image
# classifiers). An image classifier gets a batch of 4 independent random
# images instead of its one example image: batch norm in training mode over
# one image, or over scaled copies of it, normalises by a variance near 0.
FAMILIES = {
    "gpt": ("logits", None),
    "bert": ("pooled_output", None),
    "vit": ("logits", None),
    "resnet": ("logits", 32),
    "wav2vec2": ("emissions", None),
    "deepspeech": ("log_probs", None),
    "lstm": ("log_probs", None),
    "gru": ("log_probs", None),
    "mobilenet_v3_small": ("logits", 32),
    "mobilenet_v2": ("logits", 64),
    "efficientnet_b0": ("logits", 64),
}
BATCH = 4
# The floor of the gradients' bound as a fraction of the model's largest
# gradient element, where it is not ATOL (see above).
MODEL_SCALED_FLOOR = {"efficientnet_b0": 1e-6, "mobilenet_v2": 1e-6,
                      "resnet": 5e-6}
# The families whose bound adds the distance of float64 gradients of the
# input moved by half a float32 ulp (see above).
DISCONTINUOUS = {"mobilenet_v2"}


def build(family, image_size):
    """The family's reference model with its dropout removed, in training
    mode if it has batch norm, else in eval mode."""
    reference = MODELS[family].build()
    if image_size is not None:
        generator = torch.Generator().manual_seed(3)
        reference.inputs = {"image": torch.randn(
            BATCH, 3, image_size, image_size, generator=generator)}
    without_dropout(reference.module)
    reference.module.train(has_batch_norm(reference.module))
    return reference


def without_dropout(module):
    """Replaces every dropout layer by an identity, and turns stochastic
    depth off, so that a training-mode forward is deterministic."""
    for name, child in module.named_children():
        if isinstance(child, torch.nn.modules.dropout._DropoutNd):
            setattr(module, name, torch.nn.Identity())
        else:
            if hasattr(child, "p") and type(child).__name__ == "StochasticDepth":
                child.p = 0.0
            without_dropout(child)


def has_batch_norm(module):
    return any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
               for m in module.modules())


def parameter_of_initializers(model, module):
    """{float initializer name: torch parameter name}."""
    parameters = dict(module.named_parameters())
    buffers = dict(module.named_buffers())
    mapping = {}
    for tensor in model.graph.initializer:
        value = numpy_helper.to_array(tensor)
        if value.dtype != np.float32 or tensor.name in buffers:
            continue
        if tensor.name in parameters:
            mapping[tensor.name] = tensor.name
            continue
        same = [n for n, p in parameters.items()
                if tuple(p.shape) == value.shape
                and np.array_equal(p.detach().numpy(), value)]
        if len(same) == 1:
            mapping[tensor.name] = same[0]
        else:
            mapping[tensor.name] = None
    return mapping


def reference_gradients(family, image_size, inputs, labels, output_names,
                        output, moved=None):
    """torch's float64 loss and {parameter: gradient}, the float inputs
    moved by `moved` (a tensor per input, or None) when given."""
    # A second build holds the same weights (the builders seed torch); a
    # copy cannot be made of wav2vec2, whose weight-normalised weight is not
    # a leaf.
    double = build(family, image_size).module.double()
    double_inputs = [v.double() if v.is_floating_point() else v
                     for v in inputs]
    if moved is not None:
        double_inputs = [v + m for v, m in zip(double_inputs, moved)]
    result = double(*double_inputs)
    if isinstance(result, tuple):
        result = result[list(output_names).index(output)]
    loss = torch.nn.functional.mse_loss(result, torch.from_numpy(labels).double())
    loss.backward()
    return loss.item(), {
        n: (p.grad if p.grad is not None else torch.zeros_like(p))
        for n, p in double.named_parameters()}


def relu6_inputs(module, inputs):
    """The input of every ReLU6 of `module` in one forward pass over
    `inputs`, in call order."""
    seen = []
    hooks = [m.register_forward_pre_hook(
        lambda _, args: seen.append(args[0].detach().clone()))
        for m in module.modules() if isinstance(m, torch.nn.ReLU6)]
    with torch.no_grad():
        module(*inputs)
    for hook in hooks:
        hook.remove()
    return seen


def across_thresholds(family, image_size, inputs):
    """Per ReLU6 call of the float64 model, the shift that moves each input
    lying within twice float32's forward error of 0 or 6 across it."""
    single = build(family, image_size).module.float()
    double = build(family, image_size).module.double()
    float_inputs = [v.float() if v.is_floating_point() else v for v in inputs]
    double_inputs = [v.double() if v.is_floating_point() else v
                     for v in inputs]
    shifts = []
    for x32, x64 in zip(relu6_inputs(single, float_inputs),
                        relu6_inputs(double, double_inputs)):
        margin = 2 * float((x32.double() - x64).abs().max())
        shift = torch.zeros_like(x64)
        for threshold in (0.0, 6.0):
            near = (x64 - threshold).abs() < margin
            shift[near] = torch.where(x64[near] > threshold,
                                      threshold - x64[near] - margin,
                                      threshold - x64[near] + margin)
        shifts.append(shift)
    return shifts


def moved_across(family, image_size, inputs, labels, output_names, output,
                 shifts):
    """torch's float64 {parameter: gradient} with each ReLU6 call's input
    shifted by `shifts` (in call order)."""
    double = build(family, image_size).module.double()
    calls = iter(shifts)
    hooks = [m.register_forward_pre_hook(
        lambda _, args: (args[0] + next(calls),))
        for m in double.modules() if isinstance(m, torch.nn.ReLU6)]
    double_inputs = [v.double() if v.is_floating_point() else v
                     for v in inputs]
    result = double(*double_inputs)
    for hook in hooks:
        hook.remove()
    if isinstance(result, tuple):
        result = result[list(output_names).index(output)]
    torch.nn.functional.mse_loss(
        result, torch.from_numpy(labels).double()).backward()
    return {n: (p.grad if p.grad is not None else torch.zeros_like(p))
            for n, p in double.named_parameters()}


def discontinuity(family, image_size, inputs, labels, output_names, output,
                  grads):
    """The largest distance, relative to a tensor's scale, of the float64
    gradients of three inputs each moved by half a float32 ulp per element
    (up or down at random) from `grads`, the unmoved input's. Tensors whose
    gradient is 0 up to rounding (below 1e-12 of the model's largest
    element) have no scale to be relative to and are left out."""
    rng = np.random.default_rng(0)
    largest = max(float(g.abs().max()) for g in grads.values())
    distance = 0.0

    def measure(other):
        nonlocal distance
        for name, gradient in grads.items():
            scale = float(gradient.abs().max())
            if scale > 1e-12 * largest:
                distance = max(distance, float(
                    (other[name] - gradient).abs().max()) / scale)

    for _ in range(3):
        moved = [torch.from_numpy(rng.choice([-1.0, 1.0], v.shape))
                 * v.double().abs() * 2.0**-24 for v in inputs]
        measure(reference_gradients(family, image_size, inputs, labels,
                                    output_names, output, moved)[1])
    shifts = across_thresholds(family, image_size, inputs)
    print("ReLU6 inputs within twice float32's forward error of 0 or 6:",
          sum(int((shift != 0).sum()) for shift in shifts))
    measure(moved_across(family, image_size, inputs, labels, output_names,
                         output, shifts))
    return distance


def run(family, output, image_size, work):
    print(f"== {family}")
    reference = build(family, image_size)
    module = reference.module
    inputs = tuple(reference.inputs.values())
    path = f"{work}/{family}.onnx"
    # Traced with autograd on: see cleave.models.export.
    torch.onnx.export(
        module, inputs, path, input_names=list(reference.inputs),
        output_names=list(reference.output_names), opset_version=17,
        do_constant_folding=False,
        training=(torch.onnx.TrainingMode.TRAINING if module.training
                  else torch.onnx.TrainingMode.EVAL))
    model = onnx.load(path)
    mapping = parameter_of_initializers(model, module)

    shape = [d.dim_value for o in model.graph.output if o.name == output
             for d in o.type.tensor_type.shape.dim]
    labels = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    feeds = {name: value.numpy() for name, value in reference.inputs.items()}
    feeds["labels"] = labels

    bundle = cleave.compile(model, f"{work}/{family}", loss="mse",
                            logits=output, labels="labels")
    outputs = cleave.Session(bundle).run(feeds)

    loss, grads = reference_gradients(family, image_size, inputs, labels,
                                      reference.output_names, output)
    atol = ATOL
    if family in MODEL_SCALED_FLOOR:
        atol = MODEL_SCALED_FLOOR[family] * max(
            float(g.abs().max()) for g in grads.values())
        print(f"floor {atol:.2g}")
    distance = 0.0
    if family in DISCONTINUOUS:
        distance = discontinuity(family, image_size, inputs, labels,
                                 reference.output_names, output, grads)
        print(f"float64 of the moved images and inputs: {distance:.2g} away")

    failed = not check("loss", outputs["loss"], loss, RTOL, ATOL)
    checked = set()
    for name, parameter in mapping.items():
        if parameter is None:
            print(f"grad:{name}  MISMATCH  no torch parameter")
            failed = True
            continue
        checked.add(parameter)
        failed |= not check(f"grad:{name}", outputs[f"grad:{name}"],
                            grads[parameter].numpy(),
                            RTOL + 2 * distance, atol)
    missing = sorted(set(grads) - checked)
    if missing:
        print(f"MISMATCH parameters without a gradient: {missing}")
        failed = True
    gradients = sum(1 for n in outputs if n.startswith("grad:"))
    print(f"{family}: {'ok' if not failed else 'FAILED'} {len(mapping)} "
          f"gradients, {len(grads)} parameters, {gradients} outputs")
    return failed


if __name__ == "__main__":
    work = sys.argv[1]
    names = sys.argv[2:] or list(FAMILIES)
    failed = False
    for family in names:
        failed |= run(family, *FAMILIES[family], work)
    sys.exit(1 if failed else 0)

# Per family: no mismatch, and the summary: every float initializer is a
# torch parameter with a gradient output, and each gradient matches torch's.
# CHECK-LABEL: == gpt
# CHECK-NOT: MISMATCH
# CHECK: gpt: ok 28 gradients, 28 parameters, 28 outputs
# CHECK-LABEL: == bert
# CHECK-NOT: MISMATCH
# CHECK: bert: ok 31 gradients, 31 parameters, 31 outputs
# CHECK-LABEL: == vit
# CHECK-NOT: MISMATCH
# CHECK: vit: ok 32 gradients, 32 parameters, 32 outputs
# CHECK-LABEL: == resnet
# CHECK-NOT: MISMATCH
# CHECK: resnet: ok 38 gradients, 38 parameters, 38 outputs
# CHECK-NOT: MISMATCH
