"""What every model builder returns, and the seed they all share."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

#: Every builder seeds torch with this value first, so that an export is the
#: same file from one run to the next and a failure can be reproduced.
SEED = 0


@dataclass
class ReferenceModel:
    """A model ready for export.

    Attributes:
        module: the torch module, in eval mode, with random weights.
        inputs: example inputs by graph input name; their shapes become the
            static shapes of the exported graph.
        output_names: names of the graph outputs, in the order `module`
            returns them.
        dynamic_axes: for a dynamic export, the dimensions of inputs and
            outputs that may vary, by name (torch.onnx.export's
            `dynamic_axes`); empty when the model only exports statically.
    """

    module: nn.Module
    inputs: dict[str, torch.Tensor]
    output_names: tuple[str, ...]
    dynamic_axes: dict[str, dict[int, str]] = field(default_factory=dict)


def seeded() -> torch.Generator:
    """Seeds torch's global generator (module initialisation draws from it)
    and returns a separate generator for example inputs, so that changing a
    model's inputs does not change its weights."""
    torch.manual_seed(SEED)
    return torch.Generator().manual_seed(SEED + 1)


_NORM_LAYERS = (nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm)


def randomize_constant_init(module: nn.Module) -> None:
    """Redraws the parameters that initialisation sets to constants: the
    scale and shift of normalisation layers (1 and 0) and biases set to 0.

    With those constants the affine step of a norm and the bias of a layer
    are invisible in any numerical comparison, and the exporter merges the
    identical initializers of different layers into one. A trained model has
    neither property; values near the constants keep the model's behaviour.
    """
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, _NORM_LAYERS) and layer.weight is not None:
                layer.weight.copy_(1 + 0.1 * torch.randn_like(layer.weight))
                layer.bias.copy_(0.1 * torch.randn_like(layer.bias))
        for name, parameter in module.named_parameters():
            if name.endswith("bias") and not parameter.any():
                parameter.copy_(0.02 * torch.randn_like(parameter))


def calibrate_batch_norm(module: nn.Module, batches: list[torch.Tensor]) -> None:
    """Sets the running statistics of every batch norm to the statistics of
    the activations on `batches`, then puts the module in eval mode.

    With its initial statistics (mean 0, variance 1) a batch norm in eval
    mode does not normalise, and through a randomly initialised deep CNN the
    activations shrink towards zero (MobileNet's logits end near 1e-8), so
    the comparison of an export against torch could not see a wrong graph.
    Training would have matched the statistics to the activations; this
    does the same without updating any weight.
    """
    norms = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [norm.momentum for norm in norms]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average over the batches
    module.train()
    with torch.no_grad():
        for batch in batches:
            module(batch)
    for norm, momentum in zip(norms, momenta):
        norm.momentum = momentum
    module.eval()


class FirstOutput(nn.Module):
    """Keeps only the first result of a module that returns a tuple.

    Some reference implementations return auxiliary values (wav2vec2 returns
    `(emissions, lengths)` with `lengths` None without input lengths) that
    are not tensors and cannot be graph outputs.
    """

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.inner(*args)[0]
