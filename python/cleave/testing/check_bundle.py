"""Runs a compiled bundle and onnxruntime on the same random inputs and
compares every output. A one-device bundle runs through ``cleave.Session``;
a bundle for several devices through ``cleave run``, which starts its ranks.

    python -m cleave.testing.check_bundle MODEL.onnx BUNDLE [--int-high N]
        [--cleave build/bin/cleave] [--run-args "--single-process ..."]

Inputs are drawn from a seeded generator: floats from N(0, 1), integers from
``[0, int-high)`` (token ids must stay below the vocabulary), booleans at
random. An output passes when its largest absolute error is at most
``--rtol`` (default 1e-4) times its largest absolute reference value.
Exits 1 when an output does not pass.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def random_inputs(ports, int_high: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs for `ports` (the manifest's `inputs`: name, dtype, shape)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for port in ports:
        dtype = np.dtype(port["dtype"])
        shape = tuple(port["shape"])
        if dtype.kind == "f":
            feeds[port["name"]] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            feeds[port["name"]] = rng.integers(0, 2, shape).astype(bool)
        else:
            feeds[port["name"]] = rng.integers(0, int_high, shape).astype(dtype)
    return feeds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("bundle")
    parser.add_argument("--int-high", type=int, default=16)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--cleave", default="cleave",
                        help="the cleave executable (bundles for several devices)")
    parser.add_argument("--run-args", default="",
                        help="more `cleave run` options for a bundle for "
                             "several devices (one string, split at spaces)")
    args = parser.parse_args(argv)

    import onnxruntime as ort

    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    feeds = random_inputs(manifest["inputs"], args.int_high)
    if manifest["devices"] == 1:
        import cleave

        got = cleave.Session(args.bundle, threads=args.threads).run(feeds)
    else:
        with tempfile.TemporaryDirectory() as scratch:
            command = [args.cleave, "run", args.bundle, "--output-dir", scratch]
            command += args.run_args.split()
            for name, value in feeds.items():
                path = os.path.join(scratch, f"input.{name}.npy")
                np.save(path, value)
                command += ["--input", f"{name}={path}"]
            subprocess.run(command, check=True)
            got = {port["name"]: np.load(os.path.join(scratch, port["name"] + ".npy"))
                   for port in manifest["outputs"]}
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
