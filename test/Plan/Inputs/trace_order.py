"""Prints the order in which each device of a `cleave plan --trace` runs its
(microbatch, stage) steps, and checks that a step starts only after the
stage before it has finished the microbatch.

A training step's other phases print with a letter in front (`R` recompute,
`B` backward, `U` the update, which has no microbatch): a backward starts only
after the stage after it has finished the microbatch's backward (the last
stage: its own forward)."""

import json
import re
import sys
from collections import defaultdict

LETTERS = {"forward": "", "recompute": "R", "backward": "B", "update": "U"}


def main() -> int:
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    print(f"schedule {trace['otherData']['schedule']}")
    device_stage = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            device_stage[e["pid"]] = int(
                re.search(r"stage (\d+)", e["args"]["name"]).group(1))
    # Per (pid, microbatch, stage, phase): first start and last end.
    spans = defaultdict(lambda: [float("inf"), 0.0])
    for e in events:
        if e["ph"] != "X":
            continue
        stage = e["args"].get("stage", device_stage[e["pid"]])
        phase = e["args"].get("phase", "forward")
        span = spans[(e["pid"], e["args"]["microbatch"], stage, phase)]
        span[0] = min(span[0], e["ts"])
        span[1] = max(span[1], e["ts"] + e["dur"])

    def name(microbatch, stage, phase):
        if phase == "update":
            return f"U@{stage}"
        return f"{LETTERS[phase]}{microbatch}@{stage}"

    for pid in sorted(device_stage):
        if pid not in (0, max(device_stage)):
            continue
        steps = sorted((start, microbatch, stage, phase)
                       for (p, microbatch, stage, phase), (start, _) in spans.items()
                       if p == pid)
        print(f"rank {pid}: " +
              " ".join(name(m, s, phase) for _, m, s, phase in steps))
    ends = {(m, s, phase): end for (p, m, s, phase), (_, end) in spans.items()}
    last = max(s for (_, _, s, _) in spans)

    def needed(m, s, phase):
        if phase == "forward":
            return (m, s - 1, "forward") if s > 0 else None
        if phase == "backward":
            return (m, s + 1, "backward") if s < last else (m, s, "forward")
        return None

    ordered = all(start >= ends[needed(m, s, phase)] - 1e-6
                  for (p, m, s, phase), (start, _) in spans.items()
                  if needed(m, s, phase))
    print(f"each stage starts a microbatch after the stage before ends it: "
          f"{'yes' if ordered else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
