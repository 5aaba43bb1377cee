"""The catalogue of reference models, kept free of torch imports.

Listing the models, or checking a name on the command line, must not pay for
importing torch (seconds on a small machine); each entry therefore names the
function that builds its model as ``module:function`` and the module is
imported only when that model is built.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from cleave.models.common import ReferenceModel


@dataclass(frozen=True)
class ModelSpec:
    """One entry of the catalogue.

    Attributes:
        name: the name the CLI and the tests use.
        summary: what the model is and which configuration it uses.
        builder: ``module:function`` of a function that takes no arguments
            and returns a `ReferenceModel` (random weights, eval mode).
    """

    name: str
    summary: str
    builder: str

    def build(self) -> ReferenceModel:
        """Imports the builder's module and builds the model."""
        module_name, function_name = self.builder.split(":")
        factory: Callable[[], ReferenceModel] = getattr(
            importlib.import_module(module_name), function_name
        )
        return factory()


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in [
        ModelSpec(
            "gpt",
            "GPT-2-style decoder: 2 pre-LayerNorm blocks, hidden 64, 4 heads, "
            "causal mask, GELU MLP, tied LM head; 2 x 16 tokens, vocab 128",
            "cleave.models.text:build_gpt",
        ),
        ModelSpec(
            "bert",
            "BERT-style encoder on nn.TransformerEncoder: 2 post-norm GELU "
            "layers, hidden 64, 4 heads, padding mask, tanh pooler; 2 x 16 "
            "tokens, vocab 128",
            "cleave.models.text:build_bert",
        ),
        ModelSpec(
            "vit",
            "torchvision VisionTransformer: 32x32 image, 8x8 patches, 2 layers, "
            "2 heads, hidden 32, MLP 64, 10 classes",
            "cleave.models.vision:build_vit",
        ),
        ModelSpec(
            "resnet",
            "torchvision ResNet with BasicBlock x [1, 1, 1, 1] (ResNet-10), "
            "1x3x32x32 image, 10 classes",
            "cleave.models.vision:build_resnet",
        ),
        ModelSpec(
            "mobilenet_v2",
            "torchvision MobileNetV2, width 0.25, 1x3x32x32 image, 10 classes",
            "cleave.models.vision:build_mobilenet_v2",
        ),
        ModelSpec(
            "mobilenet_v3_small",
            "torchvision MobileNetV3-Small, width 0.25, 1x3x32x32 image, "
            "10 classes",
            "cleave.models.vision:build_mobilenet_v3_small",
        ),
        ModelSpec(
            "efficientnet_b0",
            "torchvision EfficientNet-B0, 1x3x32x32 image, 10 classes",
            "cleave.models.vision:build_efficientnet_b0",
        ),
        ModelSpec(
            "wav2vec2",
            "torchaudio wav2vec2_model: group-norm feature extractor with 2 "
            "conv layers, grouped positional conv, 2 post-norm layers, hidden "
            "32, 10-class CTC head; 1 x 1600 samples",
            "cleave.models.speech:build_wav2vec2",
        ),
        ModelSpec(
            "deepspeech",
            "torchaudio DeepSpeech: 3 dense layers, bidirectional ReLU RNN, "
            "hidden 32, 10 classes; 1 x 20 frames of 40 features",
            "cleave.models.speech:build_deepspeech",
        ),
        ModelSpec(
            "lstm",
            "speech-style acoustic model: 2-layer bidirectional nn.LSTM, "
            "hidden 32, 10-class log-softmax head; 1 x 20 frames of 40 features",
            "cleave.models.speech:build_lstm",
        ),
        ModelSpec(
            "gru",
            "speech-style acoustic model: 1-layer nn.GRU, hidden 32, 10-class "
            "log-softmax head; 1 x 20 frames of 40 features",
            "cleave.models.speech:build_gru",
        ),
    ]
}


def get_model(name: str) -> ModelSpec:
    """Returns the catalogue entry `name`, naming the valid ones if unknown."""
    try:
        return MODELS[name]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise KeyError(f"unknown model '{name}' (known: {known})") from None
