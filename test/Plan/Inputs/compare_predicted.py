"""How the predicted step of two other plans of one model relates to the
first's: fuse-pointwise-cpu.test's plans for a cpu target (the first),
with --fuse-pointwise (the second) and for the device without its kind
(the third)."""

import json
import sys


def relation(a: float, b: float) -> str:
    return "lower" if b < a * (1 - 1e-9) else "higher" if b > a * (1 + 1e-9) else "equal"


plans = [json.load(open(path)) for path in sys.argv[1:4]]
same = all(p["mesh"] == plans[0]["mesh"] and p["microbatches"] == plans[0]["microbatches"]
           for p in plans)
print(f"same mesh: {'yes' if same else 'no'}")
step = [p["predicted"]["step_time_s"] for p in plans]
print("--fuse-pointwise:", relation(step[0], step[1]))
print("no kind:", relation(step[0], step[2]))
