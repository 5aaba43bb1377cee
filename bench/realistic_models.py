"""Models at the sizes people deploy, for bench/runtime_vs_onnxruntime.py's
``--realistic``.

The registry's models (cleave.models) are shrunk so that tests export and
compile them in seconds; on those, per-step overheads weigh more than the
kernels. These are the same families at their published sizes, with random
weights: the architectures are torchvision's and torchaudio's own classes,
and Whisper's encoder (whose reference implementation needs packages
outside this project's set) is written out from its published layout.

Every builder takes the batch size and returns a cleave.models
ReferenceModel with static shapes.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torchaudio.models import wav2vec2_base
from torchvision import models

from cleave.models.common import (
    FirstOutput,
    ReferenceModel,
    calibrate_batch_norm,
    randomize_constant_init,
    seeded,
)


def _images(batch: int, generator: torch.Generator) -> torch.Tensor:
    return torch.randn(batch, 3, 224, 224, generator=generator)


def _classifier(module: nn.Module, batch: int) -> ReferenceModel:
    generator = seeded()
    randomize_constant_init(module)
    calibrate_batch_norm(module, [_images(4, generator)])
    return ReferenceModel(module, {"image": _images(batch, generator)}, ("logits",))


def build_resnet50(batch: int) -> ReferenceModel:
    """torchvision's ResNet-50 (bottleneck blocks 3-4-6-3) at 224x224."""
    torch.manual_seed(0)
    return _classifier(models.resnet50(), batch)


def build_convnext_tiny(batch: int) -> ReferenceModel:
    """torchvision's ConvNeXt-Tiny (stages 3-3-9-3, widths 96-768) at
    224x224: 7x7 depthwise convolutions, LayerNorm and GELU."""
    torch.manual_seed(0)
    return _classifier(models.convnext_tiny(), batch)


def build_mobilenet_v2(batch: int) -> ReferenceModel:
    """torchvision's MobileNetV2 (inverted residuals, widths 16-320, 1280
    features) at 224x224: 3x3 depthwise convolutions between pointwise
    ones, ReLU6."""
    torch.manual_seed(0)
    return _classifier(models.mobilenet_v2(), batch)


def build_efficientnet_b0(batch: int) -> ReferenceModel:
    """torchvision's EfficientNet-B0 (MBConv blocks with squeeze-and-
    excitation, 3x3 and 5x5 depthwise convolutions, SiLU) at 224x224."""
    torch.manual_seed(0)
    return _classifier(models.efficientnet_b0(), batch)


def build_wav2vec2_base(batch: int) -> ReferenceModel:
    """torchaudio's wav2vec 2.0 base (12 layers, hidden 768) on one second
    of 16 kHz audio, with a 32-symbol output layer as a CTC model has."""
    generator = seeded()
    model = wav2vec2_base(aux_num_out=32)
    randomize_constant_init(model)
    waveform = torch.randn(batch, 16000, generator=generator)
    return ReferenceModel(FirstOutput(model).eval(), {"waveform": waveform},
                          ("emissions",))


class WhisperEncoder(nn.Module):
    """Whisper's audio encoder: two convolutions over the log-mel frames
    (the second halves them), sinusoidal positions, pre-norm transformer
    layers with GELU, and a final LayerNorm."""

    def __init__(self, mels: int, frames: int, width: int, heads: int,
                 layers: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(mels, width, 3, padding=1)
        self.conv2 = nn.Conv1d(width, width, 3, stride=2, padding=1)
        positions = frames // 2
        scale = math.log(10000) / (width // 2 - 1)
        rates = torch.exp(-scale * torch.arange(width // 2))
        angles = torch.arange(positions)[:, None] * rates[None, :]
        self.register_buffer("positions",
                             torch.cat([angles.sin(), angles.cos()], dim=1))
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True)
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        x = nn.functional.gelu(self.conv1(mel))
        x = nn.functional.gelu(self.conv2(x))
        x = x.transpose(1, 2) + self.positions
        return self.norm(self.layers(x))


def build_whisper_tiny_encoder(batch: int) -> ReferenceModel:
    """Whisper-tiny's encoder (4 layers, width 384, 6 heads) on 30 seconds
    of audio: 80 mel bins x 3000 frames, 1500 positions."""
    generator = seeded()
    model = WhisperEncoder(mels=80, frames=3000, width=384, heads=6, layers=4)
    randomize_constant_init(model)
    mel = torch.randn(batch, 80, 3000, generator=generator)
    return ReferenceModel(model.eval(), {"mel": mel}, ("features",))


BUILDERS = {
    "resnet50-224": build_resnet50,
    "convnext_tiny-224": build_convnext_tiny,
    "mobilenet_v2-224": build_mobilenet_v2,
    "efficientnet_b0-224": build_efficientnet_b0,
    "wav2vec2_base-1s": build_wav2vec2_base,
    "whisper_tiny_encoder": build_whisper_tiny_encoder,
}
