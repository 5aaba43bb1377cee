"""What every model builder returns, and the seed they all share."""

from __future__ import annotations

from dataclasses import dataclass

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
    """

    module: nn.Module
    inputs: dict[str, torch.Tensor]
    output_names: tuple[str, ...]


def seeded() -> torch.Generator:
    """Seeds torch's global generator (module initialisation draws from it)
    and returns a separate generator for example inputs, so that changing a
    model's inputs does not change its weights."""
    torch.manual_seed(SEED)
    return torch.Generator().manual_seed(SEED + 1)


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
