#!/usr/bin/env python3
"""How planning time and memory grow with the model and the cluster.

Generates GPT-3-shaped decoders (hidden 12288, 96 heads, seq 2048, fp16,
weights as a sparse external-data file: nothing is written, and planning
must read none of it) with 12 to 96 layers, runs ``cleave plan`` for 8 to
4096 H100s, and prints per case the wall time and peak resident memory of
the planner, the mesh it chose and its predicted throughput, beside the
predicted throughput of three naive plans planned with the same cost model:

- uniform: pipeline stages with equal numbers of layers and no tensor
  parallelism (``--tp 1 --uniform-stages``), data parallel for the rest;
- pure tp: every device in one tensor-parallel group (``--tp N``);
- pure dp: a replica per device (``--dp N``).

A naive plan that cannot run says why (``no fit``: some device overflows;
``invalid``: e.g. the batch does not divide over the replicas).

With ``--train`` every plan is of a training step (``cleave plan --train``:
AdamW with fp32 master weights over the fp16 weights, the ZeRO stage and
recomputation searched, 1F1B), and the table adds the ZeRO stage, the
segments that recompute and the planner's CPU seconds (user + system).

    python bench/planner_scaling.py [--cleave build/bin/cleave]
        [--layers 12 24 48 96] [--devices 8 64 512 1024 4096] [--batch 512]
        [--train] [--peer OTHER_CLEAVE --repeat 5]

With ``--peer`` the table compares this build with another ``cleave``
(e.g. one built from an older commit) on the same cases instead: each case
is planned ``--repeat`` times by each binary, alternating so that both see
the same machine load, and the row shows the median wall and CPU seconds
of both, the ratio of the CPU medians (this / peer) and whether the two
chose the same plan (mesh, microbatches and predicted throughput).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def find_cleave() -> Path:
    """The newest `cleave` binary under a build directory of the repo."""
    candidates = sorted(REPO.glob("build*/bin/cleave"), key=lambda p: p.stat().st_mtime)
    if not candidates:
        sys.exit("no build*/bin/cleave under the repository; pass --cleave")
    return candidates[-1]


def generate(path: Path, layers: int, args: argparse.Namespace) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    subprocess.run(
        [sys.executable, "-m", "cleave.generators.gpt", str(path), "--preset", "gpt3-175b",
         "--layers", str(layers), "--hidden", str(args.hidden), "--heads", str(args.heads),
         "--seq", str(args.seq), "--sparse"],
        check=True, env=env)


def run_plan(cleave: Path, model: Path, devices: int, args: argparse.Namespace,
             extra: list[str]) -> tuple[dict | None, str, float, float, float]:
    """Runs one `cleave plan`; returns (plan or None, error, seconds, peak MiB,
    CPU seconds)."""
    command = [str(cleave), "plan", str(model), "--target", args.target,
               "--devices", str(devices), "--batch", str(args.batch),
               "--format", "json"] + (["--train"] if args.train else []) + extra
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err)
        # wait4 gives this child's own peak resident set.
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        peak_mib = usage.ru_maxrss / 1024.0
        cpu = usage.ru_utime + usage.ru_stime
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        lines = stderr.decode(errors="replace").strip().splitlines()
        return (None, lines[0] if lines else f"exit {process.returncode}", seconds, peak_mib,
                cpu)
    return json.loads(stdout), "", seconds, peak_mib, cpu


def naive(cleave: Path, model: Path, devices: int, args: argparse.Namespace,
          extra: list[str]) -> str:
    plan, error, _, _, _ = run_plan(cleave, model, devices, args, extra)
    if plan is not None:
        return f"{plan['predicted']['throughput_samples_per_s']:.1f}"
    if "does not fit" in error:
        return "no fit"
    return "invalid"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def plan_key(plan: dict) -> tuple:
    mesh = plan["mesh"]
    return (mesh["pp"], mesh["tp"], mesh["dp"], plan["microbatches"],
            round(plan["predicted"]["throughput_samples_per_s"], 3))


def compare_with_peer(cleave: Path, peer: Path, model: Path, layers: int, devices: int,
                      args: argparse.Namespace) -> None:
    walls: dict[Path, list[float]] = {cleave: [], peer: []}
    cpus: dict[Path, list[float]] = {cleave: [], peer: []}
    keys: dict[Path, set] = {cleave: set(), peer: set()}
    for _ in range(args.repeat):
        for binary in (cleave, peer):
            plan, error, seconds, _, cpu = run_plan(binary, model, devices, args, [])
            if plan is None:
                print(f"{layers:>6} {devices:>7}  {binary}: {error}")
                return
            walls[binary].append(seconds)
            cpus[binary].append(cpu)
            keys[binary].add(plan_key(plan))
    same = "yes" if keys[cleave] == keys[peer] and len(keys[cleave]) == 1 else "NO"
    ratio = median(cpus[cleave]) / max(median(cpus[peer]), 1e-9)
    print(f"{layers:>6} {devices:>7} {median(walls[cleave]):>7.2f} {median(cpus[cleave]):>6.2f} "
          f"{median(walls[peer]):>9.2f} {median(cpus[peer]):>8.2f} {ratio:>9.2f}  {same}",
          flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cleave", type=Path, default=None)
    parser.add_argument("--target", default="h100-sxm")
    parser.add_argument("--layers", type=int, nargs="+", default=[12, 24, 48, 96])
    parser.add_argument("--devices", type=int, nargs="+", default=[8, 64, 512, 1024, 4096])
    parser.add_argument("--batch", type=int, default=512, help="global batch (samples per step)")
    parser.add_argument("--hidden", type=int, default=12288)
    parser.add_argument("--heads", type=int, default=96)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--no-naive", action="store_true", help="skip the naive plans")
    parser.add_argument("--train", action="store_true", help="plan training steps (cleave plan --train)")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--peer", type=Path, default=None,
                        help="another cleave binary to compare planning time with")
    parser.add_argument("--repeat", type=int, default=5,
                        help="plans per case and binary with --peer")
    args = parser.parse_args()
    cleave = args.cleave or find_cleave()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.peer is not None and not os.access(args.peer, os.X_OK):
        parser.error(f"--peer {args.peer}: not an executable file")

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cleave-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"cleave: {cleave}\ntarget: {args.target}, global batch {args.batch}, "
          f"hidden {args.hidden}, heads {args.heads}, seq {args.seq}"
          f"{', training steps' if args.train else ''}\n")
    if args.peer is not None:
        print(f"peer: {args.peer}, {args.repeat} plans per case and binary, alternating\n")
        print(f"{'layers':>6} {'devices':>7} {'wall s':>7} {'cpu s':>6} {'peer wall':>9} "
              f"{'peer cpu':>8} {'cpu ratio':>9}  same plan")
        for layers in args.layers:
            model = workdir / f"gpt-{layers}l.onnx"
            if not model.exists():
                generate(model, layers, args)
            for devices in args.devices:
                compare_with_peer(cleave, args.peer, model, layers, devices, args)
        return 0
    header = (f"{'layers':>6} {'devices':>7} {'plan s':>7} {'peak MiB':>8}  "
              f"{'mesh (pp tp dp m)':<20} {'samples/s':>10}")
    if args.train:
        header += f" {'cpu s':>6} {'zero':>4} {'recompute':>9}"
    if not args.no_naive:
        header += f" {'uniform':>9} {'pure tp':>9} {'pure dp':>9}"
    print(header)
    for layers in args.layers:
        model = workdir / f"gpt-{layers}l.onnx"
        if not model.exists():
            generate(model, layers, args)
        for devices in args.devices:
            plan, error, seconds, peak, cpu = run_plan(cleave, model, devices, args, [])
            if plan is None:
                print(f"{layers:>6} {devices:>7} {seconds:>7.2f} {peak:>8.0f}  {error}")
                continue
            mesh = plan["mesh"]
            chosen = f"{mesh['pp']} {mesh['tp']} {mesh['dp']} {plan['microbatches']}"
            row = (f"{layers:>6} {devices:>7} {seconds:>7.2f} {peak:>8.0f}  {chosen:<20} "
                   f"{plan['predicted']['throughput_samples_per_s']:>10.1f}")
            if args.train:
                training = plan["training"]
                row += (f" {cpu:>6.2f} {training['zero']['stage']:>4} "
                        f"{training['recompute']['segments']:>9}")
            if not args.no_naive:
                row += f" {naive(cleave, model, devices, args, ['--tp', '1', '--uniform-stages']):>9}"
                row += f" {naive(cleave, model, devices, args, ['--tp', str(devices), '--pp', '1']):>9}"
                row += f" {naive(cleave, model, devices, args, ['--dp', str(devices)]):>9}"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
