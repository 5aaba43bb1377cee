"""Runs a compiled bundle through ``cleave.Session`` and onnxruntime on the
same random inputs and compares every output.

    python -m cleave.testing.check_bundle MODEL.onnx BUNDLE [--int-high N]

Inputs are drawn from a seeded generator: floats from N(0, 1), integers from
``[0, int-high)`` (token ids must stay below the vocabulary), booleans at
random. An output passes when its largest absolute error is at most
``--rtol`` (default 1e-4) times its largest absolute reference value.
Exits 1 when an output does not pass.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def random_inputs(session, int_high: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in session.get_inputs():
        dtype = np.dtype(info.dtype)
        shape = tuple(info.shape)
        if dtype.kind == "f":
            feeds[info.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            feeds[info.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            feeds[info.name] = rng.integers(0, int_high, shape).astype(dtype)
    return feeds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("bundle")
    parser.add_argument("--int-high", type=int, default=16)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--threads", type=int)
    args = parser.parse_args(argv)

    import onnxruntime as ort

    import cleave

    session = cleave.Session(args.bundle, threads=args.threads)
    feeds = random_inputs(session, args.int_high)
    got = session.run(feeds)
    reference = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    names = [o.name for o in reference.get_outputs()]
    expected = dict(zip(names, reference.run(None, feeds)))
    ok = True
    for name, want in expected.items():
        have = got[name]
        error = float(np.max(np.abs(have.astype(np.float64) - want))) if want.size else 0.0
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        passed = have.shape == want.shape and error <= args.rtol * (scale or 1.0)
        print(f"{name}: {have.dtype}{list(have.shape)}, max abs error {error:.3e} "
              f"against onnxruntime (scale {scale:.3e}): "
              f"{'ok' if passed else 'MISMATCH'}")
        ok &= passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
