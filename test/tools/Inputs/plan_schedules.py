"""Prints the schedule a plan.json chose and the schedules its alternatives
were costed under, for FileCheck.

    python plan_schedules.py plan.json

Lines: `schedule KIND chunks=V`, `weighed NAME...` (sorted, each once), and
`refused NAME: WHY` for each alternative that cannot be compiled.
"""

import json
import sys


def main() -> int:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    print(f"schedule {plan['schedule']} chunks={plan['virtual_stages']}")
    weighed = sorted({a["schedule"] for a in plan["alternatives"] if "schedule" in a})
    print("weighed " + " ".join(weighed))
    prefix = "cannot compile: "
    for a in plan["alternatives"]:
        if a.get("verdict", "").startswith(prefix):
            print(f"refused {a['schedule']}: {a['verdict'][len(prefix):]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
