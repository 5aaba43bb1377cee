"""A GPT-2/GPT-3-style decoder as an ONNX graph, weights in external data.

The graph is what an exporter writes for a pre-LayerNorm decoder: token and
position embeddings, per layer a fused QKV projection, causal softmax
attention split by heads, an output projection, a GELU MLP, residual adds,
a final LayerNorm and an LM head. Weights go to one external-data file next
to the model. With ``sparse=True`` the data file is only sized (a sparse file
of the right length), which is how GPT-3-sized graphs are made for planning
benchmarks without writing hundreds of gigabytes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Iterable

import numpy as np
import onnx
from onnx import TensorProto, helper

_ONNX_DTYPE = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}


@dataclasses.dataclass(frozen=True)
class GPTConfig:
    layers: int = 2
    hidden: int = 64
    heads: int = 4
    seq: int = 16
    vocab: int = 128
    batch: int = 1
    dtype: str = "float32"
    opset: int = 17
    # With a symbolic batch dimension the graph reshapes through
    # Shape -> Gather -> Concat, the way exporters write it; the importer then
    # needs --input-shape to bind the batch.
    dynamic_batch: bool = False
    # GPT-2's tied embeddings: the output projection is the token embedding
    # transposed (one parameter read at both ends of the network), as
    # Hugging Face's GPT-2 is exported.
    tie_embeddings: bool = False

    def __post_init__(self) -> None:
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must divide by heads ({self.heads})")
        if self.dtype not in _ONNX_DTYPE:
            raise ValueError(f"dtype must be one of {sorted(_ONNX_DTYPE)}")
        if not 13 <= self.opset <= 23:
            raise ValueError("opset must be in 13..23")

    @classmethod
    def gpt3_175b(cls, **overrides) -> "GPTConfig":
        """The GPT-3 175B shape: 96 layers, hidden 12288, 96 heads, seq 2048."""
        base = dict(layers=96, hidden=12288, heads=96, seq=2048, vocab=50257, dtype="float16")
        base.update(overrides)
        return cls(**base)


class _WeightWriter:
    """Lays out initializers in one external-data file, 64-byte aligned."""

    ALIGN = 64

    def __init__(self, data_path: str, sparse: bool, seed: int) -> None:
        self.data_path = data_path
        self.location = os.path.basename(data_path)
        self.sparse = sparse
        self.offset = 0
        self.rng = np.random.default_rng(seed)
        self.file = None if sparse else open(data_path, "wb")

    def tensor(self, name: str, shape: Iterable[int], dtype: str, scale: float = 0.02,
               value: np.ndarray | None = None) -> TensorProto:
        shape = list(shape)
        itemsize = np.dtype(dtype).itemsize
        length = int(np.prod(shape, dtype=np.int64)) * itemsize
        self.offset = (self.offset + self.ALIGN - 1) // self.ALIGN * self.ALIGN
        if self.file is not None:
            if value is None:
                value = (self.rng.standard_normal(shape) * scale).astype(dtype)
            self.file.seek(self.offset)
            self.file.write(np.ascontiguousarray(value, dtype=dtype).tobytes())
        t = TensorProto()
        t.name = name
        t.data_type = _ONNX_DTYPE[dtype] if dtype in _ONNX_DTYPE else helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        t.dims.extend(shape)
        t.data_location = TensorProto.EXTERNAL
        for key, val in (("location", self.location), ("offset", str(self.offset)), ("length", str(length))):
            entry = t.external_data.add()
            entry.key = key
            entry.value = val
        self.offset += length
        return t

    def close(self) -> None:
        if self.file is not None:
            self.file.truncate(self.offset)
            self.file.close()
        else:
            with open(self.data_path, "wb") as f:
                f.truncate(self.offset)


class _GraphBuilder:
    """Accumulates nodes with unique, readable names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.consts: list[TensorProto] = []
        self.count = 0

    def node(self, op: str, inputs: list[str], name: str, outputs: int = 1, **attrs) -> list[str]:
        outs = [f"{name}" if outputs == 1 else f"{name}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs

    def const_i64(self, name: str, values: list[int]) -> str:
        self.consts.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name


def build_gpt(cfg: GPTConfig, path: str, sparse: bool = False, seed: int = 0) -> onnx.ModelProto:
    """Writes the model to ``path`` (and ``path + '.data'``) and returns it."""
    h, nh, s, v = cfg.hidden, cfg.heads, cfg.seq, cfg.vocab
    hd = h // nh
    dt = cfg.dtype
    weights = _WeightWriter(path + ".data", sparse, seed)
    g = _GraphBuilder()
    inits: list[TensorProto] = []

    def w(name: str, shape: list[int], scale: float = 0.02, value=None) -> str:
        inits.append(weights.tensor(name, shape, dt, scale, value))
        return name

    batch_dim: int | str = "batch" if cfg.dynamic_batch else cfg.batch
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch_dim, s])
    logits = helper.make_tensor_value_info("logits", _ONNX_DTYPE[dt], [batch_dim, s, v])

    positions = g.const_i64("positions", list(range(s)))
    tok = g.node("Gather", [w("wte", [v, h]), "input_ids"], "embed/tokens", axis=0)[0]
    pos = g.node("Gather", [w("wpe", [s, h]), positions], "embed/positions", axis=0)[0]
    x = g.node("Add", [tok, pos], "embed/add")[0]

    mask = np.triu(np.full((s, s), -1e4 if dt == "float16" else -1e9, dtype=np.float32), 1)
    mask_name = w("causal_mask", [1, 1, s, s], value=mask.reshape(1, 1, s, s).astype(dt))
    scale_name = "attn_scale"
    g.consts.append(helper.make_tensor(scale_name, _ONNX_DTYPE[dt], [], [1.0 / np.sqrt(hd)]))

    def heads_shape(prefix: str, tensor: str) -> str:
        if not cfg.dynamic_batch:
            return g.const_i64(f"{prefix}/heads_shape", [cfg.batch, s, nh, hd])
        shp = g.node("Shape", [tensor], f"{prefix}/shape")[0]
        b = g.node("Gather", [shp, g.const_i64(f"{prefix}/zero", [0])], f"{prefix}/batch", axis=0)[0]
        return g.node("Concat", [b, g.const_i64(f"{prefix}/tail", [s, nh, hd])], f"{prefix}/heads_shape", axis=0)[0]

    def merged_shape(prefix: str) -> str:
        return g.const_i64(f"{prefix}/merged_shape", [0, s, h])

    def layer_norm(prefix: str, inp: str) -> str:
        gamma = w(f"{prefix}.weight", [h], value=np.ones(h, dt))
        beta = w(f"{prefix}.bias", [h], value=np.zeros(h, dt))
        # Opsets 13-16 have no LayerNormalization: write the decomposition
        # (ReduceMean still takes axes as an attribute there).
        if cfg.opset >= 17:
            return g.node("LayerNormalization", [inp, gamma, beta], prefix, axis=-1, epsilon=1e-5)[0]
        mean = g.node("ReduceMean", [inp], f"{prefix}/mean", axes=[-1])[0]
        d = g.node("Sub", [inp, mean], f"{prefix}/sub")[0]
        two = f"{prefix}/two"
        g.consts.append(helper.make_tensor(two, _ONNX_DTYPE[dt], [], [2.0]))
        sq = g.node("Pow", [d, two], f"{prefix}/pow")[0]
        var = g.node("ReduceMean", [sq], f"{prefix}/var", axes=[-1])[0]
        eps = f"{prefix}/eps"
        g.consts.append(helper.make_tensor(eps, _ONNX_DTYPE[dt], [], [1e-5]))
        std = g.node("Sqrt", [g.node("Add", [var, eps], f"{prefix}/add_eps")[0]], f"{prefix}/sqrt")[0]
        n = g.node("Div", [d, std], f"{prefix}/div")[0]
        return g.node("Add", [g.node("Mul", [n, gamma], f"{prefix}/scale")[0], beta], f"{prefix}/shift")[0]

    def gelu(prefix: str, inp: str) -> str:
        if cfg.opset >= 20:
            return g.node("Gelu", [inp], prefix)[0]
        consts = {"sqrt2": np.sqrt(2.0), "one": 1.0, "half": 0.5}
        for k, val in consts.items():
            g.consts.append(helper.make_tensor(f"{prefix}/{k}", _ONNX_DTYPE[dt], [], [val]))
        e = g.node("Erf", [g.node("Div", [inp, f"{prefix}/sqrt2"], f"{prefix}/div")[0]], f"{prefix}/erf")[0]
        a = g.node("Add", [e, f"{prefix}/one"], f"{prefix}/add")[0]
        m = g.node("Mul", [inp, a], f"{prefix}/mul")[0]
        return g.node("Mul", [m, f"{prefix}/half"], f"{prefix}/scale")[0]

    for layer in range(cfg.layers):
        p = f"h{layer}"
        ln1 = layer_norm(f"{p}.ln_1", x)
        qkv = g.node("MatMul", [ln1, w(f"{p}.attn.qkv.weight", [h, 3 * h])], f"{p}/attn/qkv")[0]
        qkv = g.node("Add", [qkv, w(f"{p}.attn.qkv.bias", [3 * h], value=np.zeros(3 * h, dt))], f"{p}/attn/qkv_bias")[0]
        split = g.const_i64(f"{p}/attn/split_sizes", [h, h, h])
        q, k, vv = g.node("Split", [qkv, split], f"{p}/attn/split", outputs=3, axis=-1)
        hs = heads_shape(f"{p}/attn", ln1)
        q = g.node("Transpose", [g.node("Reshape", [q, hs], f"{p}/attn/q_heads")[0]], f"{p}/attn/q_t", perm=[0, 2, 1, 3])[0]
        k = g.node("Transpose", [g.node("Reshape", [k, hs], f"{p}/attn/k_heads")[0]], f"{p}/attn/k_t", perm=[0, 2, 3, 1])[0]
        vv = g.node("Transpose", [g.node("Reshape", [vv, hs], f"{p}/attn/v_heads")[0]], f"{p}/attn/v_t", perm=[0, 2, 1, 3])[0]
        scores = g.node("Mul", [g.node("MatMul", [q, k], f"{p}/attn/scores")[0], scale_name], f"{p}/attn/scaled")[0]
        scores = g.node("Add", [scores, mask_name], f"{p}/attn/masked")[0]
        probs = g.node("Softmax", [scores], f"{p}/attn/softmax", axis=-1)[0]
        ctx = g.node("MatMul", [probs, vv], f"{p}/attn/context")[0]
        ctx = g.node("Transpose", [ctx], f"{p}/attn/context_t", perm=[0, 2, 1, 3])[0]
        ctx = g.node("Reshape", [ctx, merged_shape(f"{p}/attn")], f"{p}/attn/merge_heads")[0]
        o = g.node("MatMul", [ctx, w(f"{p}.attn.proj.weight", [h, h])], f"{p}/attn/proj")[0]
        o = g.node("Add", [o, w(f"{p}.attn.proj.bias", [h], value=np.zeros(h, dt))], f"{p}/attn/proj_bias")[0]
        x = g.node("Add", [x, o], f"{p}/attn/residual")[0]

        ln2 = layer_norm(f"{p}.ln_2", x)
        f1 = g.node("MatMul", [ln2, w(f"{p}.mlp.fc.weight", [h, 4 * h])], f"{p}/mlp/fc")[0]
        f1 = g.node("Add", [f1, w(f"{p}.mlp.fc.bias", [4 * h], value=np.zeros(4 * h, dt))], f"{p}/mlp/fc_bias")[0]
        f1 = gelu(f"{p}/mlp/gelu", f1)
        f2 = g.node("MatMul", [f1, w(f"{p}.mlp.proj.weight", [4 * h, h])], f"{p}/mlp/proj")[0]
        f2 = g.node("Add", [f2, w(f"{p}.mlp.proj.bias", [h], value=np.zeros(h, dt))], f"{p}/mlp/proj_bias")[0]
        x = g.node("Add", [x, f2], f"{p}/mlp/residual")[0]

    x = layer_norm("ln_f", x)
    if cfg.tie_embeddings:
        head = g.node("Transpose", ["wte"], "lm_head/tied", perm=[1, 0])[0]
    else:
        head = w("lm_head.weight", [h, v])
    g.nodes.append(helper.make_node("MatMul", [x, head], ["logits"], name="lm_head"))
    weights.close()

    graph = helper.make_graph(g.nodes, "gpt", [ids], [logits], initializer=g.consts + inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", cfg.opset)],
                              producer_name="cleave.generators.gpt")
    model.ir_version = 8
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="model path; weights go to OUTPUT.data")
    for field in dataclasses.fields(GPTConfig):
        flag = "--" + field.name.replace("_", "-")
        if field.type == "bool":
            parser.add_argument(flag, action="store_true")
        else:
            parser.add_argument(flag, type=type(field.default), default=None)
    parser.add_argument("--preset", choices=["gpt3-175b"], help="start from a published shape")
    parser.add_argument("--sparse", action="store_true", help="size the data file without writing weights")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(GPTConfig)
                 if getattr(args, f.name) not in (None, False)}
    try:
        cfg = GPTConfig.gpt3_175b(**overrides) if args.preset else GPTConfig(**overrides)
    except ValueError as e:
        parser.error(str(e))
    build_gpt(cfg, args.output, sparse=args.sparse, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
