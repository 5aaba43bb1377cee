"""End-to-end check of one reference model on one device.

Exports the model (cleave.models), compiles it with ``cleave compile``, runs
the bundle with ``cleave run`` and compares every output with onnxruntime on
the same inputs. The tolerance is relative to the output's scale: the
largest absolute error must be at most ``rtol`` times the largest absolute
reference value (fp32: 1e-4).

    python -m cleave.testing.e2e gpt WORKDIR [--cleave build/bin/cleave]
        [--mesh 1x1,2x1,1x2,2x2]

``--mesh`` lists the meshes to compile for, as PPxTP (pipeline stages by
tensor-parallel devices, one data-parallel replica): every mesh's outputs
must match onnxruntime's, and those of several devices must also match the
one-device run to the same tolerance.
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


def _compile_and_run(cleave: str, onnx_path: str, workdir: str, tag: str,
                     target: str, feeds: dict, pp: int, tp: int,
                     threads: int | None) -> str:
    bundle = os.path.join(workdir, f"{tag}.cleave")
    command = [cleave, "compile", onnx_path, "-o", bundle, "--target", target,
               "--quiet"]
    if pp * tp > 1:
        command += ["--devices", str(pp * tp), "--pp", str(pp), "--tp", str(tp)]
    subprocess.run(command, check=True)
    out_dir = os.path.join(workdir, f"{tag}.outputs")
    command = [cleave, "run", bundle, "--output-dir", out_dir]
    for input_name in feeds:
        command += ["--input",
                    f"{input_name}={os.path.join(workdir, f'input.{input_name}.npy')}"]
    if threads:
        command += ["--threads", str(threads)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return out_dir


def _compare(label: str, got: np.ndarray, reference: np.ndarray,
             rtol: float, against: str) -> bool:
    if got.shape != reference.shape or got.dtype != reference.dtype:
        print(f"{label}: got {got.dtype}{list(got.shape)}, {against} gives "
              f"{reference.dtype}{list(reference.shape)}")
        return False
    if reference.dtype.kind in "iub":
        mismatches = int(np.count_nonzero(got != reference))
        print(f"{label}: {mismatches} of {reference.size} elements differ "
              f"from {against} (exact match required)")
        return mismatches == 0
    error = float(np.max(np.abs(got.astype(np.float64) - reference)))
    scale = float(np.max(np.abs(reference))) or 1.0
    within = error <= rtol * scale and bool(np.isfinite(got).all())
    print(f"{label}: max abs error {error:.3e}, scale {scale:.3e}, relative "
          f"{error / scale:.3e} ({'<=' if within else '>'} {rtol:g})"
          + ("" if against == "onnxruntime" else f" against {against}"))
    return within


def check_model(name: str, workdir: str, cleave: str, target: str = "cpu",
                rtol: float = 1e-4, threads: int | None = None,
                meshes: list[tuple[int, int]] | None = None) -> bool:
    import onnxruntime as ort

    from cleave.models.export import export_model
    from cleave.models.registry import get_model

    meshes = meshes or [(1, 1)]
    os.makedirs(workdir, exist_ok=True)
    onnx_path = os.path.join(workdir, f"{name}.onnx")
    export_model(name, onnx_path)
    feeds = {k: v.numpy() for k, v in get_model(name).build().inputs.items()}
    for input_name, value in feeds.items():
        np.save(os.path.join(workdir, f"input.{input_name}.npy"), value)

    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, session.run(None, feeds)))

    ok = True
    single: dict[str, np.ndarray] | None = None
    for pp, tp in meshes:
        tag = name if (pp, tp) == (1, 1) else f"{name}-pp{pp}-tp{tp}"
        out_dir = _compile_and_run(cleave, onnx_path, workdir, tag, target,
                                   feeds, pp, tp, threads)
        got = {n: np.load(os.path.join(out_dir, f"{n}.npy")) for n in names}
        where = "" if (pp, tp) == (1, 1) else f" [pp={pp} tp={tp}]"
        for output_name in names:
            label = f"{name}{where}: output {output_name}"
            ok &= _compare(label, got[output_name], expected[output_name],
                           rtol, "onnxruntime")
            if single is not None:
                ok &= _compare(label, got[output_name], single[output_name],
                               rtol, "one device")
        if (pp, tp) == (1, 1):
            single = got
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("workdir")
    parser.add_argument("--cleave", default=_default_cleave())
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--mesh", default="1x1",
                        help="comma-separated PPxTP meshes (default 1x1)")
    args = parser.parse_args(argv)
    meshes = [tuple(int(x) for x in m.split("x")) for m in args.mesh.split(",")]
    ok = check_model(args.model, args.workdir, args.cleave, args.target,
                     args.rtol, args.threads, meshes)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
