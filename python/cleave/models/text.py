"""Transformer language models: a GPT-2-style decoder and a BERT-style encoder.

Both are written with plain torch.nn building blocks the way their reference
implementations are, so the exporter writes the graphs real models produce:
shape arithmetic from `x.shape`, a causal mask sliced from a buffer, position
ids from `torch.arange`, head splits through `view` and `transpose`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from cleave.models.common import ReferenceModel, randomize_constant_init, seeded


@dataclass(frozen=True)
class TransformerConfig:
    """Size of a small transformer; the defaults keep exports to seconds."""

    vocab_size: int = 128
    max_positions: int = 16
    hidden: int = 64
    heads: int = 4
    layers: int = 2
    mlp_ratio: int = 4
    batch: int = 2
    seq: int = 16


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position t sees positions <= t."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.heads = config.heads
        self.scale = 1.0 / math.sqrt(config.hidden // config.heads)
        self.qkv = nn.Linear(config.hidden, 3 * config.hidden)
        self.proj = nn.Linear(config.hidden, config.hidden)
        causal = torch.tril(
            torch.ones(config.max_positions, config.max_positions, dtype=torch.bool)
        )
        # Not persistent: it is derived from the configuration, not learned.
        self.register_buffer("causal", causal[None, None], persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = x.shape
        head_dim = hidden // self.heads
        q, k, v = self.qkv(x).split(hidden, dim=2)
        q = q.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        k = k.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        v = v.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        scores = scores.masked_fill(~self.causal[:, :, :seq, :seq], float("-inf"))
        context = scores.softmax(dim=-1) @ v
        return self.proj(context.transpose(1, 2).reshape(batch, seq, hidden))


class DecoderBlock(nn.Module):
    """GPT-2 block: LayerNorm before each sublayer, residual after."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        inner = config.mlp_ratio * config.hidden
        self.ln_attn = nn.LayerNorm(config.hidden)
        self.attn = CausalSelfAttention(config)
        self.ln_mlp = nn.LayerNorm(config.hidden)
        self.mlp = nn.Sequential(
            nn.Linear(config.hidden, inner), nn.GELU(), nn.Linear(inner, config.hidden)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_attn(x))
        return x + self.mlp(self.ln_mlp(x))


class GPT(nn.Module):
    """Token and learned position embeddings, decoder blocks, a final
    LayerNorm and an LM head tied to the token embedding."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(config.vocab_size, config.hidden)
        self.position_embedding = nn.Embedding(config.max_positions, config.hidden)
        self.blocks = nn.ModuleList(DecoderBlock(config) for _ in range(config.layers))
        self.ln_final = nn.LayerNorm(config.hidden)
        self.lm_head = nn.Linear(config.hidden, config.vocab_size, bias=False)
        self.lm_head.weight = self.token_embedding.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.token_embedding(input_ids) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_final(x))


class BERT(nn.Module):
    """Word, position and segment embeddings, a post-norm GELU
    nn.TransformerEncoder, and the tanh pooler over the first token."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.word_embedding = nn.Embedding(config.vocab_size, config.hidden)
        self.position_embedding = nn.Embedding(config.max_positions, config.hidden)
        self.segment_embedding = nn.Embedding(2, config.hidden)
        self.ln_embedding = nn.LayerNorm(config.hidden)
        # The nested-tensor fast path packs padded batches; it is an
        # execution strategy with no ONNX counterpart.
        self.encoder = nn.TransformerEncoder(
            self._layer(config), config.layers, enable_nested_tensor=False
        )
        # TransformerEncoder deep-copies one layer, so every layer would
        # start with the same weights (and the exporter would store them
        # once); give each layer its own.
        self.encoder.layers = nn.ModuleList(
            self._layer(config) for _ in range(config.layers)
        )
        self.pooler = nn.Sequential(nn.Linear(config.hidden, config.hidden), nn.Tanh())

    @staticmethod
    def _layer(config: TransformerConfig) -> nn.TransformerEncoderLayer:
        return nn.TransformerEncoderLayer(
            config.hidden,
            config.heads,
            dim_feedforward=config.mlp_ratio * config.hidden,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=False,
        )

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor,
        attention_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = (
            self.word_embedding(input_ids)
            + self.position_embedding(positions)
            + self.segment_embedding(token_type_ids)
        )
        x = self.encoder(self.ln_embedding(x), src_key_padding_mask=attention_mask == 0)
        return x, self.pooler(x[:, 0])


def _token_ids(config: TransformerConfig, generator: torch.Generator) -> torch.Tensor:
    return torch.randint(
        config.vocab_size, (config.batch, config.seq), generator=generator
    )


def build_gpt(config: TransformerConfig = TransformerConfig()) -> ReferenceModel:
    """The GPT-2-style decoder; logits for every position."""
    generator = seeded()
    model = GPT(config).eval()
    randomize_constant_init(model)
    tokens = {0: "batch", 1: "sequence"}
    return ReferenceModel(
        model,
        {"input_ids": _token_ids(config, generator)},
        ("logits",),
        dynamic_axes={"input_ids": tokens, "logits": tokens},
    )


def build_bert(config: TransformerConfig = TransformerConfig()) -> ReferenceModel:
    """The BERT-style encoder; the second sequence of the batch is padded at
    the end so the padding mask changes the result."""
    generator = seeded()
    model = BERT(config).eval()
    randomize_constant_init(model)
    token_type_ids = torch.zeros(config.batch, config.seq, dtype=torch.long)
    token_type_ids[:, config.seq // 2 :] = 1
    attention_mask = torch.ones(config.batch, config.seq, dtype=torch.long)
    attention_mask[-1, config.seq - config.seq // 4 :] = 0
    tokens = {0: "batch", 1: "sequence"}
    return ReferenceModel(
        model,
        {
            "input_ids": _token_ids(config, generator),
            "token_type_ids": token_type_ids,
            "attention_mask": attention_mask,
        },
        ("sequence_output", "pooled_output"),
        dynamic_axes={
            "input_ids": tokens,
            "token_type_ids": tokens,
            "attention_mask": tokens,
            "sequence_output": tokens,
            "pooled_output": {0: "batch"},
        },
    )
