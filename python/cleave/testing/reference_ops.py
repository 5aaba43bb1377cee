"""ONNX reference-evaluator kernels for ops whose onnx 1.18 implementation
does not compute what cleave (and onnxruntime) compute, for the numeric
tests that run models through ``onnx.reference.ReferenceEvaluator``: pass
``REFERENCE_OPS`` as its ``new_ops``.

- ``Attention``: grouped-query attention reads key/value head
  ``h // (q_num_heads // kv_num_heads)``, rank-3 inputs are split into heads
  in front of the sequence, and the softcap is applied before the mask (the
  onnx reference repeats the heads the other way round, reshapes rank-3
  inputs without transposing, and caps after masking).
- ``RNN``, ``GRU``, ``LSTM``: every direction, the ``activations`` list,
  ``clip``, GRU's ``linear_before_reset`` and LSTM's peepholes and
  ``input_forget`` (the onnx reference runs one direction with the default
  activations and ignores ``clip``).

Each follows the formulas of the operator's ONNX documentation in numpy, in
the precision of its inputs.
"""

from __future__ import annotations

import numpy as np
from onnx.reference.op_run import OpRun


def _heads_first(x, heads):
    """batch x sequence x heads*size -> batch x heads x sequence x size."""
    if x.ndim == 4:
        return x
    b, s, hidden = x.shape
    return x.reshape(b, s, heads, hidden // heads).transpose(0, 2, 1, 3)


def _softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


class Attention(OpRun):
    def _run(self, Q, K, V, attn_mask=None, past_key=None, past_value=None,
             is_causal=None, kv_num_heads=None, q_num_heads=None, scale=None,
             softcap=None, qk_matmul_output_mode=None, softmax_precision=None):
        rank = Q.ndim
        q = _heads_first(Q, q_num_heads)
        k = _heads_first(K, kv_num_heads)
        v = _heads_first(V, kv_num_heads)
        if past_key is not None:
            k = np.concatenate([past_key, k], axis=2)
            v = np.concatenate([past_value, v], axis=2)
        group = q.shape[1] // k.shape[1]
        k = np.repeat(k, group, axis=1)
        v = np.repeat(v, group, axis=1)
        if scale is None:
            scale = 1.0 / np.sqrt(q.shape[-1])
        scores = scale * (q @ np.swapaxes(k, -1, -2))
        if softcap:
            scores = softcap * np.tanh(scores / softcap)
        if attn_mask is not None:
            if attn_mask.dtype == np.bool_:
                scores = np.where(attn_mask, scores, -np.inf)
            else:
                scores = scores + attn_mask
        if is_causal:
            rows, columns = scores.shape[-2:]
            above = np.triu(np.ones((rows, columns), np.bool_), 1)
            scores = np.where(above, -np.inf, scores)
        y = _softmax(scores) @ v
        if rank == 3:
            b, h, s, d = y.shape
            y = y.transpose(0, 2, 1, 3).reshape(b, s, h * d)
        return (y.astype(Q.dtype),)


_ACTIVATIONS = {
    "Relu": lambda x: np.maximum(x, 0),
    "Tanh": np.tanh,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Softsign": lambda x: x / (1 + np.abs(x)),
    "Softplus": lambda x: np.log1p(np.exp(x)),
}


class _Recurrent(OpRun):
    """One ONNX recurrent layer; subclasses give the gates, the default
    activations and the cell update."""

    gates = 1
    defaults = ("Tanh",)

    def _layer(self, X, W, R, B, initial_h, initial_c, P, hidden_size,
               direction, activations, clip, **cell):
        seq, batch, _ = X.shape
        dirs = W.shape[0]
        hidden = R.shape[-1]
        per = len(self.defaults)
        names = [n.decode() if isinstance(n, bytes) else n
                 for n in (activations or self.defaults)]
        if len(names) == per:
            names = names * dirs
        gh = self.gates * hidden
        if B is None:
            B = np.zeros((dirs, 2 * gh), X.dtype)
        Y = np.zeros((seq, dirs, batch, hidden), X.dtype)
        Y_h = np.zeros((dirs, batch, hidden), X.dtype)
        Y_c = np.zeros((dirs, batch, hidden), X.dtype)
        for d in range(dirs):
            acts = [_ACTIVATIONS[n] for n in names[d * per:(d + 1) * per]]

            def act(i, x, clipped=True):
                if clip is not None and clipped:
                    x = np.clip(x, -clip, clip)
                return acts[i](x)

            h = (initial_h[d] if initial_h is not None
                 else np.zeros((batch, hidden), X.dtype))
            c = (initial_c[d] if initial_c is not None
                 else np.zeros((batch, hidden), X.dtype))
            if isinstance(direction, bytes):
                direction = direction.decode()
            reverse = direction == "reverse" or d == 1
            for t in (reversed(range(seq)) if reverse else range(seq)):
                h, c = self._cell(X[t], W[d], R[d], B[d, :gh], B[d, gh:], h, c,
                                  None if P is None else P[d], act, hidden,
                                  **cell)
                Y[t, d] = h
            Y_h[d] = h
            Y_c[d] = c
        return Y, Y_h, Y_c


class RNN(_Recurrent):
    def _cell(self, x, w, r, wb, rb, h, c, p, act, hidden):
        return act(0, x @ w.T + h @ r.T + wb + rb), c

    def _run(self, X, W, R, B=None, sequence_lens=None, initial_h=None,
             activation_alpha=None, activation_beta=None, activations=None,
             clip=None, direction=None, hidden_size=None, layout=None):
        Y, Y_h, _ = self._layer(X, W, R, B, initial_h, None, None, hidden_size,
                                direction, activations, clip)
        return Y, Y_h


class GRU(_Recurrent):
    gates = 3
    defaults = ("Sigmoid", "Tanh")

    def _cell(self, x, w, r, wb, rb, h, c, p, act, hidden, linear):
        H = hidden
        xw = x @ w.T + wb
        z = act(0, xw[:, :H] + h @ r[:H].T + rb[:H])
        reset = act(0, xw[:, H:2 * H] + h @ r[H:2 * H].T + rb[H:2 * H])
        if linear:
            candidate = xw[:, 2 * H:] + reset * (h @ r[2 * H:].T + rb[2 * H:])
        else:
            candidate = xw[:, 2 * H:] + (reset * h) @ r[2 * H:].T + rb[2 * H:]
        return (1 - z) * act(1, candidate) + z * h, c

    def _run(self, X, W, R, B=None, sequence_lens=None, initial_h=None,
             activation_alpha=None, activation_beta=None, activations=None,
             clip=None, direction=None, hidden_size=None, layout=None,
             linear_before_reset=None):
        Y, Y_h, _ = self._layer(X, W, R, B, initial_h, None, None, hidden_size,
                                direction, activations, clip,
                                linear=bool(linear_before_reset))
        return Y, Y_h


class LSTM(_Recurrent):
    gates = 4
    defaults = ("Sigmoid", "Tanh", "Tanh")

    def _cell(self, x, w, r, wb, rb, h, c, p, act, hidden, input_forget):
        H = hidden
        g = x @ w.T + h @ r.T + wb + rb
        pi, po, pf = (np.zeros(H, x.dtype),) * 3 if p is None else np.split(p, 3)
        i = act(0, g[:, :H] + pi * c)
        f = 1 - i if input_forget else act(0, g[:, 2 * H:3 * H] + pf * c)
        c = f * c + i * act(1, g[:, 3 * H:])
        o = act(0, g[:, H:2 * H] + po * c)
        return o * act(2, c, clipped=False), c

    def _run(self, X, W, R, B=None, sequence_lens=None, initial_h=None,
             initial_c=None, P=None, activation_alpha=None,
             activation_beta=None, activations=None, clip=None,
             direction=None, hidden_size=None, input_forget=None,
             layout=None):
        outputs = self._layer(X, W, R, B, initial_h, initial_c, P,
                              hidden_size, direction, activations, clip,
                              input_forget=bool(input_forget))
        return outputs[:len(self.onnx_node.output)]


REFERENCE_OPS = [Attention, RNN, GRU, LSTM]
