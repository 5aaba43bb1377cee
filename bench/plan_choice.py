"""The planner's choice against measured alternatives on 2 CPU ranks.

    python bench/plan_choice.py [--models gpt bert ...] [--batch 8] [--repeat 10]
        [--target cpu|FILE.json] [--cleave build/bin/cleave]
        [--worker build/bin/cleave-worker] [--workdir DIR] [--json out.json]

Does the plan the planner ranks first also run fastest? For every model
family given (``cleave.models``, exported with ``--batch`` samples) it
compiles the model for 2 devices five ways: 2 pipeline stages fed the
batch as 1 microbatch (``pp2 mb1``) and as 4 (``pp2 mb4``), 2
tensor-parallel shards (``tp2``), 2 data-parallel replicas (``dp2``), and
the planner's own choice (``planner``: ``cleave compile --devices 2`` with
no ``--pp``, ``--tp``, ``--dp`` or ``--microbatches``; the mesh and
microbatches it chose are read back from the bundle's plan.json). A
candidate that ``cleave compile`` refuses is left out, with the first line
of the reason. Each bundle runs with ``cleave-worker run --profile-dir DIR
--repeat K`` (one untimed warm-up run, then the median of K), and the
step it writes to profile.json gives the measured and the predicted step
time (the plan's ``predicted.step_time_s``).

Per model it prints every candidate's plan, predicted and measured step,
the cost model's error ((predicted - measured) / measured) and its rank by
prediction and by measurement, then whether the planner's choice is (a)
the one it predicts fastest among the candidates and (b) the fastest
measured, and if not, how much slower it ran than the fastest (the ratio
of the measured steps). When the planner's choice is one of the fixed
candidates (the same mesh, microbatches and schedule), the two rows are
two measurements of one plan: their difference is the run-to-run spread,
and (b) takes the median of both rows' runs as the plan's step and
compares it with the other plans only. The last line counts the models on
which the planner's choice ran fastest, or within 5% of the fastest.

``--target`` compiles for another target file than the ``cpu`` preset (one
``cleave calibrate --threads 1`` wrote, say, so that the predictions are
for one kernel thread per rank, as the runs use).

The ranks run on this machine with 1 kernel thread each. On a 2-core
machine 2 ranks use both cores, so anything else running (a build, say;
the load average is printed at the start and the end) slows some ranks
down and blurs differences of a few per cent between candidates.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import profile_ranks  # noqa: E402
from profile_ranks import ms, percent  # noqa: E402

MODELS = ["gpt", "bert", "resnet", "mobilenet_v2", "lstm"]

DEVICES = 2

#: Kernel threads per rank: one rank, one core.
THREADS = 1

#: The measured step within this share of the fastest counts as "near" it.
NEAR = 0.05

#: (label, compile options); the last is the planner's free choice.
CANDIDATES = [
    ("pp2 mb1", ["--pp", "2", "--microbatches", "1"]),
    ("pp2 mb4", ["--pp", "2", "--microbatches", "4"]),
    ("tp2", ["--tp", "2"]),
    ("dp2", ["--dp", "2"]),
    ("planner", []),
]
PLANNER = "planner"


def read_plan(bundle: Path) -> dict:
    """What plan.json says about the plan: its mesh, microbatches and prediction."""
    plan = json.loads((bundle / "plan.json").read_text())
    return {
        "mesh": plan["mesh"],
        "microbatches": plan["microbatches"],
        "microbatch_size": plan.get("microbatch_size"),
        "schedule": plan.get("schedule"),
        "predicted": plan["predicted"],
        "alternatives": plan.get("alternatives", []),
    }


def describe(plan: dict) -> str:
    mesh = plan["mesh"]
    return f"pp{mesh['pp']} tp{mesh['tp']} dp{mesh['dp']} mb{plan['microbatches']}"


def same_plan(a: dict, b: dict) -> bool:
    return (a["mesh"] == b["mesh"] and a["microbatches"] == b["microbatches"]
            and a["schedule"] == b["schedule"])


def ranks(values: list[float]) -> list[int]:
    """1 for the smallest value; equal values share the better rank."""
    return [1 + sum(other < value for other in values) for value in values]


def candidate(args, name: str, model: Path, inputs: list[str], label: str,
              options: list[str], workdir: Path) -> dict:
    """Compile and run one candidate; its plan, profile and status."""
    result = profile_ranks.profile(args, name, model, inputs, label, DEVICES, options,
                                   workdir)
    row = {"label": label, "options": options, "status": result["status"]}
    if not result["status"].startswith("does not compile"):
        # profile_ranks.profile's bundle path.
        bundle = workdir / f"{name}.{label.replace(' ', '_')}.cleave"
        row["plan"] = read_plan(bundle)
    if result["status"] == "ok":
        step = result["summary"]["step"]
        row.update(measured_s=step["measured_s"], predicted_s=step["predicted_s"],
                   error_percent=step["error_percent"], profile=result["summary"])
    return row


def compare(rows: list[dict]) -> dict:
    """Rank the candidates that ran and judge the planner's choice among them."""
    ran = [row for row in rows if row["status"] == "ok"]
    for row, by_prediction, by_measurement in zip(
            ran, ranks([row["predicted_s"] for row in ran]),
            ranks([row["measured_s"] for row in ran])):
        row["rank_predicted"], row["rank_measured"] = by_prediction, by_measurement
    chosen = next((row for row in rows if row["label"] == PLANNER), None)
    if chosen is None or chosen["status"] != "ok":
        return {"status": "the planner's choice did not run: "
                + (chosen["status"] if chosen else "not compiled")}
    twins = [row["label"] for row in rows
             if row is not chosen and "plan" in row and same_plan(row["plan"], chosen["plan"])]
    others = [row for row in ran if row is not chosen and row["label"] not in twins]
    verdict = {"status": "ok", "plan": describe(chosen["plan"]), "same_as": twins,
               "compared_with": [row["label"] for row in others]}
    if not others:
        verdict["status"] = "no other plan ran"
        return verdict
    # (a): every candidate, its twins too, predicts at best as fast as the choice.
    best_predicted = min((row for row in ran if row is not chosen),
                         key=lambda row: row["predicted_s"])
    verdict["predicted_fastest"] = chosen["predicted_s"] <= best_predicted["predicted_s"] * (
        1 + 1e-9)
    verdict["best_predicted_other"] = best_predicted["label"]
    # (b): the plan's measured step against the other plans' fastest; a plan
    # measured twice (the choice and its twins) counts the median of every run.
    runs = [run for row in ran if row is chosen or row["label"] in twins
            for run in row["profile"]["step"]["runs_s"]]
    measured = statistics.median(runs)
    fastest = min(others, key=lambda row: row["measured_s"])
    ratio = measured / fastest["measured_s"]
    verdict.update(measured_s=measured, runs=len(runs), fastest_other=fastest["label"],
                   ratio=ratio, measured_fastest=ratio <= 1.0,
                   near_fastest=ratio <= 1.0 + NEAR)
    return verdict


def print_model(name: str, rows: list[dict], verdict: dict) -> None:
    print(f"\n{name}")
    print(f"  {'candidate':<10}{'plan':<20}{'predicted ms':>13}{'measured ms':>13}"
          f"{'error %':>9}{'rank pred':>11}{'rank meas':>11}")
    for row in rows:
        plan = describe(row["plan"]) if "plan" in row else "-"
        if row["status"] != "ok":
            print(f"  {row['label']:<10}{plan:<20}  {row['status']}")
            continue
        print(f"  {row['label']:<10}{plan:<20}{ms(row['predicted_s']):>13}"
              f"{ms(row['measured_s']):>13}{percent(row['error_percent']):>9}"
              f"{row['rank_predicted']:>11}{row['rank_measured']:>11}")
    if verdict["status"] != "ok":
        print(f"  {verdict['status']}")
        return
    print(f"  planner's choice: {verdict['plan']}", end="")
    if verdict["same_as"]:
        print(f", the same plan as {', '.join(verdict['same_as'])}: "
              f"{ms(verdict['measured_s'])} ms, the median of their {verdict['runs']} runs")
    else:
        print()
    if verdict["predicted_fastest"]:
        predicted = "yes"
    else:
        predicted = f"no: it predicts {verdict['best_predicted_other']} faster"
    print(f"  (a) predicted fastest among the candidates: {predicted}")
    ratio, fastest = verdict["ratio"], verdict["fastest_other"]
    if verdict["measured_fastest"]:
        measured = f"yes ({1 / ratio:.2f}x as fast as the next, {fastest})"
    else:
        near = f", within {NEAR:.0%}" if verdict["near_fastest"] else ""
        measured = f"no: {fastest} ran fastest; the choice took {ratio:.2f}x its step{near}"
    print(f"  (b) measured fastest: {measured}", flush=True)


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--batch", type=int, default=8,
                        help="export the models with this many samples (default 8)")
    parser.add_argument("--repeat", type=int, default=10,
                        help="timed runs per candidate, after 1 warm-up (default 10)")
    parser.add_argument("--target", default="cpu",
                        help="the target preset or file to compile for (default cpu)")
    parser.add_argument("--cleave", type=Path, default=REPO / "build" / "bin" / "cleave")
    parser.add_argument("--worker", type=Path, default=None,
                        help="the cleave-worker that runs the bundles (beside --cleave)")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    args.threads = THREADS  # read by profile_ranks.profile
    if args.worker is None:
        args.worker = args.cleave.parent / "cleave-worker"
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cleave-plan-choice-"))
    workdir.mkdir(parents=True, exist_ok=True)

    cores = os.cpu_count() or 1
    print(f"{args.target} target; batch {args.batch} on {DEVICES} ranks, {THREADS} kernel "
          f"thread per rank; {cores} cores; load average {load()}")
    print(f"step = median of {args.repeat} runs after 1 warm-up; "
          "error = (predicted - measured) / measured; rank 1 = fastest")

    results = {}
    for name in args.models:
        model, inputs = profile_ranks.export(name, workdir, args.batch)
        rows = [candidate(args, name, model, inputs, label, options, workdir)
                for label, options in CANDIDATES]
        verdict = compare(rows)
        print_model(name, rows, verdict)
        results[name] = {"candidates": rows, "verdict": verdict}

    judged = [r["verdict"] for r in results.values() if "ratio" in r["verdict"]]
    predicted = sum(v["predicted_fastest"] for v in judged)
    fastest = sum(v["measured_fastest"] for v in judged)
    near = sum(v["near_fastest"] for v in judged)
    print(f"\nsummary: the planner's choice ran fastest on {fastest} of {len(judged)} "
          f"models, within {NEAR:.0%} of the fastest on {near}; it was the one it "
          f"predicts fastest on {predicted}. Load average {load()}")
    if args.json:
        document = {"target": args.target, "batch": args.batch, "devices": DEVICES,
                    "threads": THREADS, "repeat": args.repeat, "models": results}
        args.json.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
