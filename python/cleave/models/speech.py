"""Speech models: wav2vec 2.0 and DeepSpeech from torchaudio, and small
recurrent acoustic models on nn.LSTM and nn.GRU.

The recurrent models are the shape of a classic CTC acoustic model (frames of
filterbank features in, per-frame log-probabilities of the output symbols
out), which is what exercises the recurrent ops of the importer.
"""

from __future__ import annotations

import torch
from torch import nn
from torchaudio.models import DeepSpeech, wav2vec2_model

from cleave.models.common import (
    FirstOutput,
    ReferenceModel,
    randomize_constant_init,
    seeded,
)

_CLASSES = 10
_FRAMES = 20
_FEATURES = 40
_HIDDEN = 32


def build_wav2vec2() -> ReferenceModel:
    """wav2vec 2.0 (base layout, post-norm) shrunk: 1600 samples become 159
    frames through convs (16 channels, kernel 10 stride 5, then kernel 3
    stride 2); the positional conv has kernel 16 in 4 groups."""
    generator = seeded()
    model = wav2vec2_model(
        extractor_mode="group_norm",
        extractor_conv_layer_config=[(16, 10, 5), (16, 3, 2)],
        extractor_conv_bias=False,
        encoder_embed_dim=32,
        encoder_projection_dropout=0.0,
        encoder_pos_conv_kernel=16,
        encoder_pos_conv_groups=4,
        encoder_num_layers=2,
        encoder_num_heads=2,
        encoder_attention_dropout=0.0,
        encoder_ff_interm_features=64,
        encoder_ff_interm_dropout=0.0,
        encoder_dropout=0.0,
        encoder_layer_norm_first=False,
        encoder_layer_drop=0.0,
        aux_num_out=_CLASSES,
    )
    randomize_constant_init(model)
    waveform = torch.randn(1, 1600, generator=generator)
    return ReferenceModel(
        FirstOutput(model).eval(), {"waveform": waveform}, ("emissions",)
    )


def _frames(generator: torch.Generator) -> torch.Tensor:
    return torch.randn(1, _FRAMES, _FEATURES, generator=generator)


def build_deepspeech() -> ReferenceModel:
    """DeepSpeech: its input is (batch, channel, time, feature)."""
    generator = seeded()
    model = DeepSpeech(n_feature=_FEATURES, n_hidden=_HIDDEN, n_class=_CLASSES)
    randomize_constant_init(model)
    features = _frames(generator)[:, None]
    return ReferenceModel(model.eval(), {"features": features}, ("log_probs",))


class RecurrentAcousticModel(nn.Module):
    """A recurrent layer over the frames and a per-frame classifier."""

    def __init__(self, recurrent: nn.LSTM | nn.GRU) -> None:
        super().__init__()
        self.recurrent = recurrent
        directions = 2 if recurrent.bidirectional else 1
        self.classifier = nn.Linear(directions * recurrent.hidden_size, _CLASSES)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.recurrent(features)
        return self.classifier(hidden).log_softmax(dim=-1)


def _acoustic(model: nn.Module, generator: torch.Generator) -> ReferenceModel:
    randomize_constant_init(model)
    return ReferenceModel(
        model.eval(), {"features": _frames(generator)}, ("log_probs",)
    )


def build_lstm() -> ReferenceModel:
    """Two stacked bidirectional LSTM layers."""
    generator = seeded()
    model = RecurrentAcousticModel(
        nn.LSTM(_FEATURES, _HIDDEN, num_layers=2, bidirectional=True, batch_first=True)
    )
    return _acoustic(model, generator)


def build_gru() -> ReferenceModel:
    """One forward GRU layer."""
    generator = seeded()
    model = RecurrentAcousticModel(nn.GRU(_FEATURES, _HIDDEN, batch_first=True))
    return _acoustic(model, generator)
