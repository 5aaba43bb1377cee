# Mixed-precision training steps (`cleave compile --train --precision
# bf16`) of train-torch.py's MLP (AdamW), of cleave.models' one-layer GPT
# and of cnn-torch.py's CNN without its max pool (both SGD with momentum),
# ten steps each with gradient clipping, against two references on the
# same batches from the same initial weights:
#
# - an emulation in torch (float32): the same model with every matrix
#   product and convolution reading its operands rounded to bfloat16
#   (torch's own round-to-nearest-even conversion) and rounding its result,
#   the rest in float32; the rounding's backward (torch's .to() gradients)
#   rounds the cotangents as the casts' gradient rules do. The first step's
#   loss (the forward alone) agrees to 1e-5 relative (it is equal in the
#   runs seen); every step's to max |error| <= 1e-3 * max |loss|: cleave
#   and torch sum in different orders, so that a value next to a bfloat16
#   tie may round the other way, and later steps carry that on;
# - cleave's own float32 step: the losses differ by more than
#   1e-4 * max |loss| (the rounding happened) and at most 5e-2 * max |loss|
#   (bfloat16's 8 significant bits), and on average by more than twice as
#   much as from the emulation.
#
# The parameters after the last step agree with the emulation's to
# max |error| <= 1e-2 * max |parameter| + 1e-4.
#
# The GPT is trained by SGD: Adam divides the round-off of gradients that
# are zero in exact arithmetic (the key bias, see train-torch.py) by its own
# size, and under bfloat16 rounding the key bias does move the loss. The
# CNN has no max pool: rounded to bfloat16, a window often holds equal
# maxima, whose gradient cleave and torch give to different elements.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t mlp | FileCheck %s --check-prefix=MLP
# RUN: %python %s %t gpt | FileCheck %s --check-prefix=GPT
# RUN: %python %s %t cnn | FileCheck %s --check-prefix=CNN
# MLP-LABEL: == mlp
# MLP-NEXT: first ok
# MLP-NEXT: emulation ok
# MLP-NEXT: float32 ok
# MLP-NOT: MISMATCH
# GPT-LABEL: == gpt
# GPT-NEXT: first ok
# GPT-NEXT: emulation ok
# GPT-NEXT: float32 ok
# GPT-NOT: MISMATCH
# CNN-LABEL: == cnn
# CNN-NEXT: first ok
# CNN-NEXT: emulation ok
# CNN-NEXT: float32 ok
# CNN: conv.weight  ok
# CNN: depthwise.weight  ok
# CNN-NOT: MISMATCH

import sys

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

import cleave
from cleave.testing import load_sibling

STEPS = 10
OPTIONS = {
    "mlp": {"optimizer": "adamw", "lr": 0.01, "clip-grad-norm": 1.0},
    "gpt": {"optimizer": "sgd", "lr": 0.1, "momentum": 0.9,
            "clip-grad-norm": 1.0},
    "cnn": {"optimizer": "sgd", "lr": 0.1, "momentum": 0.9,
            "clip-grad-norm": 1.0},
}
FIRST_RTOL, ROUNDED_RTOL = 1e-5, 1e-4
EMULATION_RTOL, FLOAT32_RTOL = 1e-3, 5e-2
PARAM_RTOL, PARAM_ATOL = 1e-2, 1e-4

trained = load_sibling(__file__, "train-torch.py")
torch.set_default_dtype(torch.float32)


class LowPrecisionProducts(TorchFunctionMode):
    """Matrix products on operands rounded to `dtype` (bfloat16 or
    float16), results rounded."""

    def __init__(self, dtype=torch.bfloat16):
        super().__init__()
        self.dtype = dtype

    def rounded(self, t):
        return t.to(self.dtype).to(t.dtype)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rounded = self.rounded
        # torch 1.13 names them by their C functions.
        name = getattr(func, "__name__", "")
        if name in ("matmul", "__matmul__"):
            a, b = args
            return rounded(torch.matmul(rounded(a), rounded(b)))
        if name == "linear":
            x, w = args[0], args[1]
            b = args[2] if len(args) > 2 else kwargs.get("bias")
            if b is not None and x.dim() == 2:
                # Exported as Gemm, which rounds its bias too.
                return rounded(torch.matmul(rounded(x), rounded(w).t())
                               + rounded(b))
            y = rounded(torch.matmul(rounded(x), rounded(w).t()))
            return y if b is None else y + b
        if name == "conv2d":
            x, w, b = (list(args) + [None])[:3]
            rest = args[3:]
            b = rounded(b) if b is not None else None
            return rounded(func(rounded(x), rounded(w), b, *rest, **kwargs))
        return func(*args, **kwargs)


def cnn(work):
    """cnn-torch.py's CNN without its max pool: convolutions (one
    depthwise), training-mode batch normalisation, an average pool and a
    Gemm, with an attached cross-entropy."""
    import onnx
    from onnx import numpy_helper

    cnn_torch = load_sibling(__file__, "cnn-torch.py")

    class WithoutMaxPool(cnn_torch.SmallCNN):
        def forward(self, x):
            x = torch.relu(self.bn(self.conv(x)))
            x = torch.nn.functional.adaptive_avg_pool2d(self.depthwise(x), 1)
            return self.fc(torch.flatten(x, 1))

    torch.manual_seed(0)
    module = WithoutMaxPool()
    x = np.zeros((4, 3, 8, 8), np.float32)
    model = cnn_torch.export(module, x, f"{work}/cnn.onnx")
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    module.load_state_dict({n: torch.from_numpy(v.copy())
                            for n, v in weights.items()}, strict=False)

    def batch(rng):
        return {"x": rng.standard_normal((4, 3, 8, 8)).astype(np.float32),
                "labels": rng.integers(0, 5, (4,)).astype(np.int64)}

    def reference(p, f):
        return torch.nn.functional.cross_entropy(module(f["x"]), f["labels"])

    loss = {"loss": "cross-entropy", "logits": "logits", "labels": "labels"}
    return trained.Spec(model, weights, batch, reference, loss,
                        params=dict(module.named_parameters()))


def float32_spec(which, work):
    """train-torch.py's model, with float32 torch parameters."""
    if which == "cnn":
        return cnn(work)
    spec = trained.mlp() if which == "mlp" else trained.gpt(work)
    if which == "gpt":
        for p in spec.params.values():
            p.data = p.data.float()
    else:
        spec.params = {n: torch.tensor(v, requires_grad=True)
                       for n, v in spec.weights.items()}
    return spec


def emulate(spec, batches, options):
    optimizer = trained.torch_optimizer(list(spec.params.values()), options)
    losses = []
    for b in batches:
        optimizer.zero_grad()
        with LowPrecisionProducts(torch.bfloat16):
            value = spec.reference(spec.params, {
                k: torch.from_numpy(v) for k, v in b.items()})
        value.backward()
        torch.nn.utils.clip_grad_norm_(spec.params.values(),
                                       options["clip-grad-norm"])
        optimizer.step()
        losses.append(value.item())
    return np.array(losses)


def run(work, which, batches, spec, precision):
    options = dict(OPTIONS[which], precision=precision)
    bundle = cleave.compile(spec.model, f"{work}/{which}_{precision}",
                            train=options, **spec.loss)
    trainer = cleave.Trainer(bundle)
    return np.array([trainer.step(b) for b in batches]), trainer.parameters()


def main(work, which):
    print(f"== {which}")
    spec = float32_spec(which, work)
    rng = np.random.default_rng(5)
    batches = [spec.batch(rng) for _ in range(STEPS)]
    bf16, params = run(work, which, batches, spec, "bf16")
    fp32, _ = run(work, which, batches, spec, "fp32")
    want = emulate(spec, batches, OPTIONS[which])
    scale = float(np.max(np.abs(want)))
    to_emulation, to_float32 = np.abs(bf16 - want), np.abs(bf16 - fp32)
    # The first step's loss is the forward alone, rounded where the
    # emulation rounds.
    first = float(abs(want[0]))
    ok = to_emulation[0] <= FIRST_RTOL * first
    print(f"first {'ok' if ok else 'MISMATCH'}  error {to_emulation[0]:.2g} "
          f"<= {FIRST_RTOL * first:.2g}")
    ok = to_emulation.max() <= EMULATION_RTOL * scale
    print(f"emulation {'ok' if ok else 'MISMATCH'}  max error "
          f"{to_emulation.max():.2g} <= {EMULATION_RTOL * scale:.2g}")
    # Different from float32 (the rounding happened), by no more than
    # bfloat16's precision, and further than from the emulation.
    ok = (ROUNDED_RTOL * scale < to_float32.max() <= FLOAT32_RTOL * scale
          and to_emulation.mean() < 0.5 * to_float32.mean())
    print(f"float32 {'ok' if ok else 'MISMATCH'}  {ROUNDED_RTOL * scale:.2g} "
          f"< max difference {to_float32.max():.2g} <= "
          f"{FLOAT32_RTOL * scale:.2g}, mean {to_float32.mean():.2g} > twice "
          f"the emulation's {to_emulation.mean():.2g}")
    print(f"loss {want[0]:.3f} -> {want[-1]:.3f}")
    for name, p in spec.params.items():
        keep = spec.compared.get(name, slice(None))
        want_p = p.detach().numpy()[keep]
        error = float(np.max(np.abs(params[name][keep] - want_p)))
        bound = PARAM_RTOL * float(np.max(np.abs(want_p))) + PARAM_ATOL
        print(f"{name}  {'ok' if error <= bound else 'MISMATCH'}  max error "
              f"{error:.2g} <= {bound:.2g}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
