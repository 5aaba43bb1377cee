"""Prints the order in which each device of a `cleave plan --trace` runs its
(microbatch, stage) steps, and checks that a step starts only after the
stage before it has finished the microbatch."""

import json
import re
import sys
from collections import defaultdict


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
    # Per (pid, microbatch, stage): first start and last end.
    spans = defaultdict(lambda: [float("inf"), 0.0])
    for e in events:
        if e["ph"] != "X":
            continue
        stage = e["args"].get("stage", device_stage[e["pid"]])
        span = spans[(e["pid"], e["args"]["microbatch"], stage)]
        span[0] = min(span[0], e["ts"])
        span[1] = max(span[1], e["ts"] + e["dur"])
    for pid in sorted(device_stage):
        if pid not in (0, max(device_stage)):
            continue
        steps = sorted((start, microbatch, stage)
                       for (p, microbatch, stage), (start, _) in spans.items()
                       if p == pid)
        print(f"rank {pid}: " +
              " ".join(f"{m}@{s}" for _, m, s in steps))
    ends = {(m, s): end for (p, m, s), (_, end) in spans.items()}
    ordered = all(start >= ends[(m, s - 1)] - 1e-6
                  for (p, m, s), (start, _) in spans.items() if s > 0)
    print(f"each stage starts a microbatch after the stage before ends it: "
          f"{'yes' if ordered else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
