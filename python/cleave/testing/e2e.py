"""End-to-end check of one reference model on one device.

Exports the model (cleave.models), compiles it with ``cleave compile``, runs
the bundle with ``cleave run`` and compares every output with onnxruntime on
the same inputs. The tolerance is relative to the output's scale: the
largest absolute error must be at most ``rtol`` times the largest absolute
reference value (fp32: 1e-4).

    python -m cleave.testing.e2e gpt WORKDIR [--cleave build/bin/cleave]
        [--mesh 1x1,2x1,1x2,2x2,1x1x2,2x1/2] [--batch N]

``--mesh`` lists the meshes to compile for, as PPxTP[xDP][/M] (pipeline
stages by tensor-parallel devices by data-parallel replicas, and M
microbatches; DP and M default to 1, and M is left to the planner when not
given): every mesh's outputs must match onnxruntime's, and those of several
devices must also match the one-device run to the same tolerance.
``--batch`` exports the model with that many samples (so that the batch cuts
into replicas and microbatches).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from typing import NamedTuple

import numpy as np


def _default_cleave() -> str:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    return os.path.join(root, "build", "bin", "cleave")


class Mesh(NamedTuple):
    pp: int = 1
    tp: int = 1
    dp: int = 1
    microbatches: int | None = None

    @staticmethod
    def parse(text: str) -> "Mesh":
        """PPxTP[xDP][/M]."""
        sizes, _, microbatches = text.partition("/")
        dims = [int(x) for x in sizes.split("x")]
        if len(dims) not in (2, 3) or min(dims) < 1:
            raise ValueError(f"mesh '{text}' is not PPxTP[xDP][/M]")
        pp, tp, dp = (dims + [1])[:3]
        return Mesh(pp, tp, dp, int(microbatches) if microbatches else None)

    @property
    def devices(self) -> int:
        return self.pp * self.tp * self.dp

    def is_single(self) -> bool:
        return self.devices == 1 and (self.microbatches or 1) == 1

    def describe(self) -> str:
        text = f"pp={self.pp} tp={self.tp}"
        if self.dp > 1:
            text += f" dp={self.dp}"
        if self.microbatches:
            text += f" microbatches={self.microbatches}"
        return text

    def tag(self) -> str:
        return "-".join(self.describe().replace("=", "").split())


def _compile_and_run(cleave: str, onnx_path: str, workdir: str, tag: str,
                     target: str, feeds: dict, mesh: Mesh,
                     threads: int | None) -> str:
    bundle = os.path.join(workdir, f"{tag}.cleave")
    command = [cleave, "compile", onnx_path, "-o", bundle, "--target", target,
               "--quiet"]
    if not mesh.is_single():
        command += ["--devices", str(mesh.devices), "--pp", str(mesh.pp),
                    "--tp", str(mesh.tp), "--dp", str(mesh.dp)]
        if mesh.microbatches:
            command += ["--microbatches", str(mesh.microbatches)]
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
                meshes: list[Mesh] | None = None,
                batch: int | None = None) -> bool:
    import onnxruntime as ort

    from cleave.models.export import export_model, with_batch
    from cleave.models.registry import get_model

    meshes = meshes or [Mesh()]
    os.makedirs(workdir, exist_ok=True)
    onnx_path = os.path.join(workdir, f"{name}.onnx")
    export_model(name, onnx_path, batch=batch)
    reference = get_model(name).build()
    inputs = reference.inputs if batch is None else with_batch(reference, batch)
    feeds = {k: v.numpy() for k, v in inputs.items()}
    for input_name, value in feeds.items():
        np.save(os.path.join(workdir, f"input.{input_name}.npy"), value)

    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, session.run(None, feeds)))

    ok = True
    single: dict[str, np.ndarray] | None = None
    for mesh in meshes:
        tag = name if mesh.is_single() else f"{name}-{mesh.tag()}"
        out_dir = _compile_and_run(cleave, onnx_path, workdir, tag, target,
                                   feeds, mesh, threads)
        got = {n: np.load(os.path.join(out_dir, f"{n}.npy")) for n in names}
        where = "" if mesh.is_single() else f" [{mesh.describe()}]"
        for output_name in names:
            label = f"{name}{where}: output {output_name}"
            ok &= _compare(label, got[output_name], expected[output_name],
                           rtol, "onnxruntime")
            if single is not None:
                ok &= _compare(label, got[output_name], single[output_name],
                               rtol, "one device")
        if mesh.is_single():
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
                        help="comma-separated PPxTP[xDP][/M] meshes "
                        "(default 1x1)")
    parser.add_argument("--batch", type=int,
                        help="samples in the exported batch")
    args = parser.parse_args(argv)
    try:
        meshes = [Mesh.parse(m) for m in args.mesh.split(",")]
    except ValueError as error:
        parser.error(str(error))
    ok = check_model(args.model, args.workdir, args.cleave, args.target,
                     args.rtol, args.threads, meshes, args.batch)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
