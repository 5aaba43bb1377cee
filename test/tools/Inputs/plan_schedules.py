"""Prints the schedule a plan.json chose and the schedules its alternatives
were costed under, for FileCheck.

    python plan_schedules.py plan.json

Lines: `schedule KIND chunks=V` and `weighed NAME...` (sorted, each once).
"""

import json
import sys


def main() -> int:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    print(f"schedule {plan['schedule']} chunks={plan['virtual_stages']}")
    weighed = sorted({a["schedule"] for a in plan["alternatives"] if "schedule" in a})
    print("weighed " + " ".join(weighed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
