#!/usr/bin/env python3
"""The planner's training predictions against the Megatron-LM SC'21 paper.

Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
Clusters Using Megatron-LM" (SC'21, arXiv:2104.04473), Table 1, measured
GPT models from 1.7B to 1T parameters on 32 to 3072 A100-80GB GPUs (8 per
DGX A100 node) and reports the TFLOP/s each GPU sustained. For every row
this script writes the model with ``python -m cleave.generators.gpt
--sparse`` (fp16, sequence 2048, vocabulary 51,200: weights only sized) and
runs ``cleave plan --train --target a100-80gb`` twice:

- pinned: the paper's tensor- and pipeline-parallel sizes, data parallelism
  for the rest of the GPUs, its global batch, microbatches of
  ``--microbatch-size`` samples, full activation recomputation (``--recompute
  layers``: each layer keeps only its input, as Megatron-LM's does), no ZeRO,
  fp16 with fp32 master weights (Adam), ``--schedule`` (1F1B by default);
- free: only the GPU count, the global batch and fp16 pinned.

Both plan with ``--fuse-pointwise`` (``--unfused``: without), since
Megatron-LM runs the bias adds, GeLU, attention scaling and masking and the
residual adds in fused kernels.

The paper counts a step's work as

    F = 96 B s l h^2 (1 + s / (6h) + V / (16 l h))

FLOPs (forward, backward and the recomputed forward of the dense layers,
attention and the LM head; B global batch, s sequence, l layers, h hidden,
V vocabulary), and a GPU's rate as F / (step time * GPUs). The predicted
rate here is the same F over the planner's predicted step time, so the two
columns are comparable.

    python bench/megatron_fidelity.py [--cleave build/bin/cleave]
        [--rows 1.7B 3.6B ...] [--no-free] [--timeout 600]
        [--schedule 1f1b|interleaved] [--unfused] [--plan-option OPTION]
        [--json FILE]

Prints per row the paper's TFLOP/s, the pinned prediction and its error,
the free plan's prediction, mesh (pp tp dp) and microbatch size, and the
wall seconds of each ``cleave plan``. A plan that fails or runs past
``--timeout`` prints why instead of its figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEQUENCE = 2048
VOCABULARY = 51200


@dataclasses.dataclass(frozen=True)
class Row:
    """One row of the paper's Table 1."""
    name: str
    heads: int
    hidden: int
    layers: int
    tp: int
    pp: int
    gpus: int
    batch: int
    tflops: float

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp)

    def step_flops(self) -> float:
        """The paper's FLOPs of one training step (with recomputation)."""
        b, s, l, h, v = self.batch, SEQUENCE, self.layers, self.hidden, VOCABULARY
        return 96.0 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))

    def tflops_per_gpu(self, step_seconds: float) -> float:
        return self.step_flops() / (step_seconds * self.gpus) / 1e12


# Table 1 of arXiv:2104.04473: parameters, heads, hidden, layers, t, p,
# GPUs, global batch, achieved TFLOP/s per GPU.
TABLE = [
    Row("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137),
    Row("3.6B", 32, 3072, 30, 2, 1, 64, 512, 138),
    Row("7.5B", 32, 4096, 36, 4, 1, 128, 512, 142),
    Row("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135),
    Row("39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138),
    Row("76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140),
    Row("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148),
    Row("310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155),
    Row("529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163),
    Row("1008B", 160, 25600, 128, 8, 64, 3072, 3072, 163),
]


def find_cleave() -> Path:
    """The newest `cleave` binary under a build directory of the repo."""
    candidates = sorted(REPO.glob("build*/bin/cleave"), key=lambda p: p.stat().st_mtime)
    if not candidates:
        sys.exit("no build*/bin/cleave under the repository; pass --cleave")
    return candidates[-1]


def generate(path: Path, row: Row) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    subprocess.run(
        [sys.executable, "-m", "cleave.generators.gpt", str(path), "--layers", str(row.layers),
         "--hidden", str(row.hidden), "--heads", str(row.heads), "--seq", str(SEQUENCE),
         "--vocab", str(VOCABULARY), "--dtype", "float16", "--sparse"],
        check=True, env=env)


def pinned_options(row: Row, microbatch_size: int, schedule: str) -> list[str]:
    """The paper's configuration of `row` as `cleave plan` options."""
    microbatches = row.batch // (row.dp * microbatch_size)
    return ["--tp", str(row.tp), "--pp", str(row.pp), "--dp", str(row.dp),
            "--microbatches", str(microbatches), "--schedule", schedule if row.pp > 1 else "1f1b",
            "--recompute", "layers", "--zero", "0", "--optimizer", "adam"]


def plan(cleave: Path, model: Path, row: Row, extra: list[str],
         timeout: float, common: list[str]) -> tuple[dict | None, str, float]:
    """Runs one `cleave plan --train`; returns (plan or None, error, seconds)."""
    command = [str(cleave), "plan", str(model), "--train", "--target", "a100-80gb",
               "--devices", str(row.gpus), "--batch", str(row.batch), "--precision", "fp16",
               "--format", "json", "--quiet"] + common + extra
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"over {timeout:.0f} s", time.perf_counter() - start
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        return None, lines[0] if lines else f"exit {done.returncode}", seconds
    return json.loads(done.stdout), "", seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cleave", type=Path, default=None)
    parser.add_argument("--rows", nargs="+", default=None, choices=[row.name for row in TABLE],
                        help="rows of the table to run (default: all)")
    parser.add_argument("--microbatch-size", type=int, default=1,
                        help="samples per microbatch of the pinned plans (default 1)")
    parser.add_argument("--schedule", default="1f1b",
                        help="pipeline schedule of the pinned plans where p > 1")
    parser.add_argument("--no-free", action="store_true", help="skip the unpinned plans")
    parser.add_argument("--unfused", action="store_true",
                        help="plan without --fuse-pointwise (Megatron-LM runs bias, GeLU, "
                             "scaling, masking and residual adds in fused kernels)")
    parser.add_argument("--plan-option", action="append", default=[],
                        help="pass this option to every cleave plan (repeatable), "
                             "e.g. --plan-option=--fuse-pointwise")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per plan")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()
    cleave = args.cleave or find_cleave()
    if not args.unfused:
        args.plan_option.insert(0, "--fuse-pointwise")
    rows = [row for row in TABLE if args.rows is None or row.name in args.rows]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cleave-megatron-"))
    workdir.mkdir(parents=True, exist_ok=True)

    print(f"cleave: {cleave}\ntarget: a100-80gb; pinned: microbatch {args.microbatch_size}, "
          f"{args.schedule} where p > 1, full recomputation, no ZeRO, fp16 + Adam"
          f"{'; ' + ' '.join(args.plan_option) if args.plan_option else ''}\n")
    print(f"{'model':>7} {'GPUs':>5} {'t p dp':>9} {'paper':>6} {'pinned':>7} {'error':>7} "
          f"{'plan s':>7} {'free':>7} {'free pp tp dp mb':>17} {'plan s':>7}")
    results = []
    for row in rows:
        model = workdir / f"gpt-{row.name}.onnx"
        if not model.exists():
            generate(model, row)
        result: dict = {"model": row.name, "gpus": row.gpus, "tp": row.tp, "pp": row.pp,
                        "dp": row.dp, "paper_tflops": row.tflops}
        pinned, error, seconds = plan(cleave, model, row,
                                      pinned_options(row, args.microbatch_size, args.schedule),
                                      args.timeout, args.plan_option)
        mesh = f"{row.tp} {row.pp} {row.dp}"
        line = f"{row.name:>7} {row.gpus:>5} {mesh:>9} {row.tflops:>6.0f} "
        result["pinned_seconds"] = seconds
        if pinned is None:
            line += f"{'-':>7} {'-':>7} {seconds:>7.1f} "
            result["pinned_error"] = error
        else:
            predicted = row.tflops_per_gpu(pinned["predicted"]["step_time_s"])
            got = pinned["mesh"]
            result.update(pinned_tflops=predicted,
                          pinned_mesh=[got["pp"], got["tp"], got["dp"]],
                          pinned_microbatch_size=pinned["microbatch_size"])
            line += f"{predicted:>7.1f} {100 * (predicted / row.tflops - 1):>+6.1f}% {seconds:>7.1f} "
        if not args.no_free:
            free, free_error, free_seconds = plan(cleave, model, row, [], args.timeout, args.plan_option)
            result["free_seconds"] = free_seconds
            if free is None:
                line += f"{'-':>7} {free_error[:17]:>17} {free_seconds:>7.1f}"
                result["free_error"] = free_error
            else:
                got = free["mesh"]
                predicted = row.tflops_per_gpu(free["predicted"]["step_time_s"])
                chosen = f"{got['pp']} {got['tp']} {got['dp']} {free['microbatch_size']}"
                line += f"{predicted:>7.1f} {chosen:>17} {free_seconds:>7.1f}"
                result.update(free_tflops=predicted, free_mesh=[got["pp"], got["tp"], got["dp"]],
                              free_microbatch_size=free["microbatch_size"])
        print(line, flush=True)
        if pinned is None:
            print(f"        pinned: {error}")
        results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
