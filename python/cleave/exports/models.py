"""Small random-initialised configurations of published architectures.

Each builder seeds torch, builds a Hugging Face transformers or timm model
from a configuration written here (nothing is downloaded: the weights are
the library's own random initialisation), puts it in eval mode and returns
it wrapped so that its forward takes named tensors and returns a tuple of
tensors, with the example inputs. Hidden sizes are tiny and there are one or
two layers, so that every export is a few hundred kilobytes and compiles in
seconds, while the graph is the one the full-size model exports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

SEED = 0
VOCAB = 128
TOKENS = 8


@dataclass(frozen=True)
class Example:
    """A model ready to export: its forward takes `inputs` by name."""

    module: torch.nn.Module
    inputs: dict[str, torch.Tensor]
    output_names: tuple[str, ...]


class _Outputs(torch.nn.Module):
    """Calls a model with keyword inputs and returns the named fields of its
    output (a transformers ModelOutput) as a tuple."""

    def __init__(self, model: torch.nn.Module, fields: tuple[str, ...],
                 input_names: tuple[str, ...], **fixed) -> None:
        super().__init__()
        self.model = model
        self.fields = fields
        self.input_names = input_names
        self.fixed = fixed

    def forward(self, *args):
        out = self.model(**dict(zip(self.input_names, args)), **self.fixed)
        if isinstance(out, torch.Tensor):
            return out
        return tuple(getattr(out, f) for f in self.fields)


def _wrap(model, inputs: dict[str, torch.Tensor], fields: tuple[str, ...],
          output_names: tuple[str, ...] | None = None, **fixed) -> Example:
    model.eval()
    module = _Outputs(model, fields, tuple(inputs), **fixed).eval()
    return Example(module, inputs, output_names or fields)


def _tokens(batch: int = 1, tokens: int = TOKENS) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, tokens), dtype=torch.int64)


def _padded_mask(batch: int = 2, tokens: int = TOKENS) -> torch.Tensor:
    """All ones but the last three positions of the second sequence."""
    mask = torch.ones(batch, tokens, dtype=torch.int64)
    mask[1, tokens - 3:] = 0
    return mask


def _randomize_batch_norm(model: torch.nn.Module) -> None:
    """Freshly built BatchNorm layers compute the identity in eval mode;
    random running statistics make the folded scale and shift matter."""
    for layer in model.modules():
        if isinstance(layer, torch.nn.modules.batchnorm._BatchNorm):
            layer.running_mean.uniform_(-0.5, 0.5)
            layer.running_var.uniform_(0.5, 2.0)
            layer.weight.data.uniform_(0.5, 1.5)
            layer.bias.data.uniform_(-0.5, 0.5)


def _perturb_rms_norm(model: torch.nn.Module) -> None:
    """Freshly built RMSNorm layers scale by one (a weight of ones, or of
    zeros where the layer scales by 1 + w); a random offset in [-0.5, 0.5)
    makes the scale, and which tensor it applies to, matter."""
    for layer in model.modules():
        if type(layer).__name__.endswith("RMSNorm"):
            layer.weight.data.add_(torch.rand_like(layer.weight) - 0.5)


def _decoder_lm(config, perturb_norms: bool = False) -> Example:
    """A causal LM on a batch of two sequences, the second right-padded."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_config(config)
    if perturb_norms:
        _perturb_rms_norm(model)
    inputs = {"input_ids": _tokens(2), "attention_mask": _padded_mask()}
    return _wrap(model, inputs, ("logits",), use_cache=False)


def llama() -> Example:
    from transformers import LlamaConfig

    return _decoder_lm(LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64))


def qwen2() -> Example:
    from transformers import Qwen2Config

    return _decoder_lm(Qwen2Config(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64))


def mistral() -> Example:
    from transformers import MistralConfig

    return _decoder_lm(MistralConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64, sliding_window=4))


def qwen3() -> Example:
    from transformers import Qwen3Config

    # RMSNorm on each head's queries and keys before the rotary embedding.
    return _decoder_lm(Qwen3Config(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=8, max_position_embeddings=64), perturb_norms=True)


def phi3() -> Example:
    from transformers import Phi3Config

    # One QKV projection sliced into queries, keys and values, and one
    # gate-up projection split in two; the default pad token (32000) is
    # outside the vocabulary.
    return _decoder_lm(Phi3Config(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
        eos_token_id=2))


def gemma() -> Example:
    from transformers import GemmaConfig

    # Embeddings scaled by sqrt(hidden_size), RMSNorm weighted by (1 + w),
    # a GELU-tanh gated MLP; head_dim defaults to 256.
    return _decoder_lm(GemmaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=8, max_position_embeddings=64), perturb_norms=True)


def mixtral() -> Example:
    from transformers import MixtralConfig

    return _decoder_lm(MixtralConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64, num_local_experts=4,
        num_experts_per_tok=2,
        # Every token through its two experts' weights gathered by index:
        # static shapes, where the default groups tokens by expert.
        experts_implementation="batched_mm"))


def gpt2() -> Example:
    from transformers import GPT2Config

    return _decoder_lm(GPT2Config(
        vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64,
        bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1))


def _encoder(model_class, config, token_types: bool,
             fields: tuple[str, ...]) -> Example:
    inputs = {"input_ids": _tokens(2), "attention_mask": _padded_mask()}
    if token_types:
        inputs["token_type_ids"] = torch.randint(0, 2, (2, TOKENS),
                                                 dtype=torch.int64)
    return _wrap(model_class(config), inputs, fields)


def bert() -> Example:
    from transformers import BertConfig, BertModel

    return _encoder(BertModel, BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=64), True,
        ("last_hidden_state", "pooler_output"))


def distilbert() -> Example:
    from transformers import DistilBertConfig, DistilBertModel

    return _encoder(DistilBertModel, DistilBertConfig(
        vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
        max_position_embeddings=64), False, ("last_hidden_state",))


def roberta() -> Example:
    from transformers import RobertaConfig, RobertaModel

    return _encoder(RobertaModel, RobertaConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=64, pad_token_id=1), False,
        ("last_hidden_state", "pooler_output"))


#: torch's decomposition of T5's scaled-dot-product attention (its default)
#: views a transposed tensor and fails ("Cannot view a tensor with shape
#: [2, 8, 4, 8] and strides (256, 8, 64, 1)"); its eager attention exports.
T5_ATTENTION = "eager"


def t5_encoder() -> Example:
    from transformers import T5Config, T5EncoderModel

    return _encoder(T5EncoderModel, T5Config(
        vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2,
        num_heads=4, attn_implementation=T5_ATTENTION), False,
        ("last_hidden_state",))


def vit() -> Example:
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(image_size=32, patch_size=8, hidden_size=32,
                       num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=64)
    return _wrap(ViTModel(config),
                 {"pixel_values": torch.randn(1, 3, 32, 32)},
                 ("last_hidden_state", "pooler_output"))


def _whisper_config():
    from transformers import WhisperConfig

    return WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=16, d_model=32, encoder_layers=1,
        decoder_layers=1, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_source_positions=16, max_target_positions=32,
        pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1)


def whisper_encoder() -> Example:
    from transformers import WhisperModel

    model = WhisperModel(_whisper_config())
    # The encoder takes exactly twice max_source_positions frames.
    return _wrap(model.get_encoder(),
                 {"input_features": torch.randn(1, 16, 32)},
                 ("last_hidden_state",))


def whisper() -> Example:
    from transformers import WhisperModel

    model = WhisperModel(_whisper_config())
    return _wrap(model, {"input_features": torch.randn(1, 16, 32),
                         "decoder_input_ids": _tokens(1, 6)},
                 ("last_hidden_state", "encoder_last_hidden_state"),
                 use_cache=False)


def wav2vec2_ctc() -> Example:
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

    config = Wav2Vec2Config(
        vocab_size=32, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64,
        conv_dim=(16, 16, 16), conv_kernel=(10, 3, 3), conv_stride=(5, 2, 2),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    return _wrap(Wav2Vec2ForCTC(config),
                 {"input_values": torch.randn(1, 800)}, ("logits",))


def convnext() -> Example:
    from timm.models.convnext import ConvNeXt

    model = ConvNeXt(depths=(1, 1, 1, 1), dims=(8, 16, 24, 32),
                     num_classes=10, ls_init_value=0.5)
    return _wrap(model, {"x": torch.randn(1, 3, 32, 32)}, (), ("logits",))


def efficientnet() -> Example:
    from timm.models.efficientnet import _gen_efficientnet

    model = _gen_efficientnet("efficientnet_b0", channel_multiplier=0.25,
                              depth_multiplier=0.25, num_classes=10)
    _randomize_batch_norm(model)
    return _wrap(model, {"x": torch.randn(1, 3, 32, 32)}, (), ("logits",))


def regnet() -> Example:
    from timm.models.regnet import RegNet, RegNetCfg

    # One block in each of four stages of widths 8, 24, 40 and 64.
    config = RegNetCfg(depth=4, w0=8, wa=16.0, wm=1.5, group_size=8,
                       stem_width=8, se_ratio=0.25)
    model = RegNet(config, num_classes=10, zero_init_last=False)
    _randomize_batch_norm(model)
    return _wrap(model, {"x": torch.randn(1, 3, 32, 32)}, (), ("logits",))


@dataclass(frozen=True)
class ExportSpec:
    """One model and the exporters it is written with."""

    name: str
    build: Callable[[], Example]
    exporters: tuple[str, ...]


DYNAMO = "dynamo"
DYNAMO_OPSET23 = "dynamo-opset23"
DYNAMO_DYNAMIC = "dynamo-dynamic"
TORCHSCRIPT = "torchscript"

SPECS: list[ExportSpec] = [
    ExportSpec("llama", llama,
               (DYNAMO, DYNAMO_OPSET23, DYNAMO_DYNAMIC, TORCHSCRIPT)),
    ExportSpec("qwen2", qwen2, (DYNAMO,)),
    ExportSpec("mistral", mistral, (DYNAMO,)),
    ExportSpec("qwen3", qwen3, (DYNAMO,)),
    ExportSpec("phi3", phi3, (DYNAMO,)),
    ExportSpec("gemma", gemma, (DYNAMO,)),
    ExportSpec("mixtral", mixtral, (DYNAMO, DYNAMO_DYNAMIC)),
    ExportSpec("gpt2", gpt2, (DYNAMO, DYNAMO_DYNAMIC, TORCHSCRIPT)),
    ExportSpec("bert", bert,
               (DYNAMO, DYNAMO_OPSET23, DYNAMO_DYNAMIC, TORCHSCRIPT)),
    ExportSpec("distilbert", distilbert, (DYNAMO,)),
    ExportSpec("roberta", roberta, (DYNAMO,)),
    ExportSpec("t5-encoder", t5_encoder, (DYNAMO, DYNAMO_DYNAMIC)),
    ExportSpec("vit", vit, (DYNAMO, DYNAMO_DYNAMIC, TORCHSCRIPT)),
    ExportSpec("whisper-encoder", whisper_encoder, (DYNAMO, DYNAMO_DYNAMIC)),
    ExportSpec("whisper", whisper, (DYNAMO,)),
    ExportSpec("wav2vec2-ctc", wav2vec2_ctc,
               (DYNAMO, DYNAMO_DYNAMIC, TORCHSCRIPT)),
    ExportSpec("convnext", convnext, (DYNAMO, TORCHSCRIPT)),
    ExportSpec("efficientnet", efficientnet, (DYNAMO,)),
    ExportSpec("regnet", regnet, (DYNAMO,)),
]


def build(spec: ExportSpec) -> Example:
    """Builds `spec`'s model from the same seed every time."""
    torch.manual_seed(SEED)
    with torch.no_grad():
        return spec.build()
