"""End-to-end check of one reference model on one device.

Exports the model (cleave.models), compiles it with ``cleave compile``, runs
the bundle with ``cleave run`` and compares every output with onnxruntime on
the same inputs. The tolerance is relative to the output's scale: the
largest absolute error must be at most ``rtol`` times the largest absolute
reference value (fp32: 1e-4).

    python -m cleave.testing.e2e gpt WORKDIR [--cleave build/bin/cleave]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np


def _default_cleave() -> str:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    return os.path.join(root, "build", "bin", "cleave")


def check_model(name: str, workdir: str, cleave: str, target: str = "cpu",
                rtol: float = 1e-4, threads: int | None = None) -> bool:
    import onnxruntime as ort

    from cleave.models.export import export_model
    from cleave.models.registry import get_model

    os.makedirs(workdir, exist_ok=True)
    onnx_path = os.path.join(workdir, f"{name}.onnx")
    export_model(name, onnx_path)
    feeds = {k: v.numpy() for k, v in get_model(name).build().inputs.items()}

    bundle = os.path.join(workdir, f"{name}.cleave")
    subprocess.run([cleave, "compile", onnx_path, "-o", bundle, "--target",
                    target, "--quiet"], check=True)
    out_dir = os.path.join(workdir, "outputs")
    command = [cleave, "run", bundle, "--output-dir", out_dir]
    for input_name, value in feeds.items():
        path = os.path.join(workdir, f"input.{input_name}.npy")
        np.save(path, value)
        command += ["--input", f"{input_name}={path}"]
    if threads:
        command += ["--threads", str(threads)]
    subprocess.run(command, check=True)

    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    expected = session.run(None, feeds)
    ok = True
    for output_name, reference in zip(names, expected):
        got = np.load(os.path.join(out_dir, f"{output_name}.npy"))
        if got.shape != reference.shape or got.dtype != reference.dtype:
            print(f"{name}: output {output_name}: got {got.dtype}{list(got.shape)}, "
                  f"onnxruntime gives {reference.dtype}{list(reference.shape)}")
            ok = False
            continue
        if reference.dtype.kind in "iub":
            mismatches = int(np.count_nonzero(got != reference))
            print(f"{name}: output {output_name}: {mismatches} of "
                  f"{reference.size} elements differ (exact match required)")
            ok &= mismatches == 0
            continue
        error = float(np.max(np.abs(got.astype(np.float64) - reference)))
        scale = float(np.max(np.abs(reference))) or 1.0
        within = error <= rtol * scale and np.isfinite(got).all()
        print(f"{name}: output {output_name}: max abs error {error:.3e}, scale "
              f"{scale:.3e}, relative {error / scale:.3e} "
              f"({'<=' if within else '>'} {rtol:g})")
        ok &= bool(within)
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("workdir")
    parser.add_argument("--cleave", default=_default_cleave())
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--threads", type=int)
    args = parser.parse_args(argv)
    ok = check_model(args.model, args.workdir, args.cleave, args.target,
                     args.rtol, args.threads)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
