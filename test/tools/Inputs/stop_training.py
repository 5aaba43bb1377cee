"""Stops a long `cleave train` run with a signal and checks what it left:

    python stop_training.py SIGNAL BUNDLE DATA DIR

starts `cleave train BUNDLE --data DATA --steps 100000000 --checkpoint-dir
DIR/stopped --log DIR/stopped.jsonl`, sends SIGNAL (INT or TERM) once the
log shows 5 steps, and prints the exit status, whether the checkpoint saved
is of the last logged step, and whether resuming from it for 5 more steps
ends with the bytes of a run that was never stopped.
"""

import filecmp
import json
import os
import signal
import subprocess
import sys
import time

name, bundle, data, out = sys.argv[1:5]
log = os.path.join(out, "stopped.jsonl")
stopped = os.path.join(out, "stopped")
train = ["cleave", "train", bundle, "--data", data, "--seed", "5"]
process = subprocess.Popen(
    train + ["--steps", "100000000", "--checkpoint-dir", stopped, "--log", log],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
deadline = time.time() + 60
while time.time() < deadline:
    if os.path.exists(log) and sum(1 for _ in open(log)) >= 5:
        break
    time.sleep(0.01)
process.send_signal(getattr(signal, "SIG" + name))
stdout, stderr = process.communicate(timeout=60)
print("exit status:", process.returncode)
print(stderr.strip().splitlines()[-1])
last = json.loads(open(log).read().splitlines()[-1])["step"]
saved = sorted(os.listdir(stopped))
print("checkpoint of the last logged step:", saved == [f"step_{last:08d}"])

target = str(last + 5)
subprocess.run(train + ["--steps", target, "--checkpoint-dir", stopped, "--resume"],
               check=True, capture_output=True)
straight = os.path.join(out, "straight")
subprocess.run(train + ["--steps", target, "--checkpoint-dir", straight],
               check=True, capture_output=True)
name = f"step_{last + 5:08d}"
print("resumed equals straight:",
      filecmp.cmp(os.path.join(stopped, name, "rank_0.bin"),
                  os.path.join(straight, name, "rank_0.bin"), shallow=False))
