"""Prints the schedule and predicted step of two plan.json files of one model
and how the second's step relates to the first's, for FileCheck.

    python compare_schedules.py first.json second.json

Lines: `first SCHEDULE chunks=V mesh=PxTxD microbatches=M step=S` (and
`second ...`), then `step of the second: lower|equal|higher` (relative
tolerance 1e-9).
"""

import json
import sys


def describe(name: str, plan: dict) -> str:
    mesh = plan["mesh"]
    return (f"{name} {plan['schedule']} chunks={plan['virtual_stages']} "
            f"mesh={mesh['pp']}x{mesh['tp']}x{mesh['dp']} "
            f"microbatches={plan['microbatches']} "
            f"step={plan['predicted']['step_time_s']:.6e}")


def main() -> int:
    with open(sys.argv[1]) as f:
        first = json.load(f)
    with open(sys.argv[2]) as f:
        second = json.load(f)
    print(describe("first", first))
    print(describe("second", second))
    a = first["predicted"]["step_time_s"]
    b = second["predicted"]["step_time_s"]
    relation = "lower" if b < a * (1 - 1e-9) else "higher" if b > a * (1 + 1e-9) else "equal"
    print(f"step of the second: {relation}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
