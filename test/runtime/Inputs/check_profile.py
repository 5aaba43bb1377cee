"""Checks what `cleave run --profile` wrote against the bundle and itself.

    check_profile.py BUNDLE PROFILE_DIR STDOUT_FILE RUNS

- every rank's trace parses, has its rank as thread id, and holds every
  step of its stage's program, named after the step's node, in each of the
  RUNS timed runs; a step's kind matches what the program calls there;
- profile.json's medians are the medians of its runs, each stage's runs are
  its tp-0 rank's step times without receives (from the trace), and the
  error is (predicted - measured) / measured of its own numbers;
- the table printed in STDOUT_FILE shows those numbers.

Prints one line per check group and exits 1 at the first failure.
"""

import json
import os
import re
import statistics
import sys

COMMUNICATION = {"send", "recv", "all_reduce", "all_gather", "reduce_scatter",
                 "all_slice", "all_to_all"}


def fail(message):
    print("check_profile.py: " + message)
    sys.exit(1)


def program_steps(bundle, stage):
    """[(node, call)] of the stage's program, in step order."""
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    source = open(os.path.join(bundle, manifest["programs"][stage]["source"])).read()
    steps = []
    for block in re.split(r"(?=cleave_rt_step\()", source)[1:]:
        match = re.match(r'cleave_rt_step\(ctx, (\d+), "([^"]*)"\)', block)
        if int(match.group(1)) != len(steps):
            fail(f"stage {stage}: steps out of order in the source")
        call = re.search(r"cleave_cpu_(\w+)\(", block)
        steps.append((match.group(2), call.group(1) if call else None))
    return steps


def close(a, b, tolerance=1e-9):
    return abs(a - b) <= tolerance * max(abs(a), abs(b), 1e-12)


def main():
    bundle, directory, stdout_file, runs = sys.argv[1:5]
    runs = int(runs)
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    profile = json.load(open(os.path.join(directory, "profile.json")))
    if profile["format"] != "cleave.profile" or profile["timed_runs"] != runs:
        fail("profile.json: wrong format or run count")

    # Traces: one per rank, every step of every run.
    stage_from_trace = {}
    for rank in manifest["ranks"]:
        name = f"trace_rank_{rank['rank']}.json"
        if name not in profile["traces"]:
            fail(f"profile.json does not list {name}")
        trace = json.load(open(os.path.join(directory, name)))
        events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        threads = [e for e in trace["traceEvents"] if e.get("name") == "thread_name"]
        if not threads or threads[0]["args"]["name"] != (
                f"rank {rank['rank']} (stage {rank['stage']}, tp {rank['tp']})"):
            fail(f"{name}: no thread name for rank {rank['rank']}")
        if any(e["tid"] != rank["rank"] for e in events):
            fail(f"{name}: an event's tid is not the rank")
        steps = program_steps(bundle, rank["stage"])
        for run in range(runs):
            mine = [e for e in events if e["args"]["run"] == run]
            got = [(e["args"]["step"], e["name"]) for e in mine]
            if got != [(i, node) for i, (node, _) in enumerate(steps)]:
                fail(f"{name}: run {run} has steps {got[:4]}..., "
                     f"the program {steps[:4]}...")
            for event, (_, call) in zip(mine, steps):
                kind = ("fused loop" if call is None else
                        "communication" if call in COMMUNICATION else "kernel")
                if event["args"]["kind"] != kind or event["args"].get("call") != call:
                    fail(f"{name}: step {event['args']['step']} is a {kind} "
                         f"({call}), the trace says {event['args']}")
            if any(b["ts"] < a["ts"] + a["dur"] - 1e-3 for a, b in zip(mine, mine[1:])):
                fail(f"{name}: run {run}: steps overlap")
            if rank["tp"] == 0 and rank["dp"] == 0:
                busy = sum(e["dur"] for e in mine if e["args"].get("call") != "recv")
                stage_from_trace.setdefault(rank["stage"], []).append(busy * 1e-6)
    print(f"traces: {len(manifest['ranks'])} ranks x {runs} runs, every step")

    # The summary's numbers.
    rows = profile["stages"] + [profile["step"]]
    for row in rows:
        if not close(row["measured_s"], statistics.median(row["runs_s"])):
            fail(f"measured {row['measured_s']} is not the median of {row['runs_s']}")
        expected = (row["predicted_s"] - row["measured_s"]) / row["measured_s"] * 100
        if not close(row["error_percent"], expected):
            fail(f"error {row['error_percent']}, recomputed {expected}")
    plan = json.load(open(os.path.join(bundle, "plan.json")))
    for stage in profile["stages"]:
        if not close(stage["predicted_s"], plan["stages"][stage["index"]]["time_s"]["total"]):
            fail(f"stage {stage['index']}: prediction is not plan.json's")
        if not all(close(a, b, 1e-6) for a, b in
                   zip(stage["runs_s"], stage_from_trace[stage["index"]])):
            fail(f"stage {stage['index']}: runs {stage['runs_s']}, "
                 f"the trace says {stage_from_trace[stage['index']]}")
    if not close(profile["step"]["predicted_s"], plan["predicted"]["step_time_s"]):
        fail("the step's prediction is not plan.json's")
    print(f"summary: {len(profile['stages'])} stages and the step recompute")

    # The table shows them.
    lines = open(stdout_file).read().splitlines()
    headers = [i for i, l in enumerate(lines) if l.split()[:2] == ["stage", "ranks"]]
    if len(headers) != 1:
        fail("no single table header")
    lines = lines[headers[0] + 1:headers[0] + 2 + len(profile["stages"])]
    for row in rows:
        label = "step" if row is profile["step"] else str(row["index"])
        shown = [l.split() for l in lines if l.split()[:1] == [label]]
        if len(shown) != 1:
            fail(f"no single table row for {label}")
        measured, predicted, error = (float(x) for x in shown[0][2:5])
        if (abs(measured - row["measured_s"] * 1e3) > 6e-4
                or abs(predicted - row["predicted_s"] * 1e3) > 6e-4
                or abs(error - row["error_percent"]) > 0.06):
            fail(f"table row {shown[0]} does not show {row}")
        # The times are shown to 0.001 ms; the error may move that far.
        recomputed = (predicted - measured) / measured * 100
        rounding = 100 * 5e-4 / measured * (1 + predicted / measured) + 0.05
        if abs(recomputed - error) > rounding:
            fail(f"table row {shown[0]}: its error does not follow from its times")
    print("table: every row shows the summary")


if __name__ == "__main__":
    main()
