"""Checks and summarises a Chrome trace written by `cleave plan --trace`."""

import json
import sys
from collections import defaultdict


def main() -> int:
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    tracks = defaultdict(list)
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            tracks[e["pid"]].append(e["args"]["name"])
    complete = [e for e in events if e["ph"] == "X"]
    print(f"processes {len(names)}")
    for pid in (0, 4):
        print(f"process {pid} {names[pid]} tracks {','.join(tracks[pid])}")
    print("microbatches " + ",".join(str(m) for m in sorted({e["args"]["microbatch"] for e in complete})))
    print(f"all_reduce events {sum(e['name'].startswith('all_reduce') for e in complete)}")
    print(f"send events {sum(e['name'].startswith('send') for e in complete)}")
    sent = min(e["ts"] + e["dur"] for e in complete
               if e["pid"] == 0 and e["name"].startswith("send") and e["args"]["microbatch"] == 0)
    start = min(e["ts"] for e in complete if e["pid"] == 4 and e["args"]["microbatch"] == 0)
    print(f"stage 1 starts microbatch 0 after stage 0 sends it: {'yes' if start >= sent - 1e-9 else 'no'}")
    overlap = False
    for pid in names:
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in complete if e["pid"] == pid)
        overlap |= any(b[0] < a[1] - 1e-6 for a, b in zip(spans, spans[1:]))
    print(f"events per device never overlap: {'no' if overlap else 'yes'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
