"""Stops or kills one rank of `cleave-worker train` under mpirun and checks
what the job left:

    python train_ranks.py stop|kill RANK "MPIRUN" WORKER BUNDLE DATA OUT

starts `MPIRUN -np DEVICES WORKER train BUNDLE --data DATA --seed 5
--steps 100000000 --log OUT/MODE.jsonl --checkpoint-dir OUT/MODE` (`kill`
adds --checkpoint-every 2) and, once the log shows 5 steps, sends the
process of MPI rank RANK SIGTERM (`stop`) or SIGKILL (`kill`). It prints
mpirun's exit status and the lines of its output that say what ended the
job, then resumes from the newest checkpoint up to 4 steps past the last
logged step and prints whether every rank file then holds the bytes of a
run that was never stopped.
"""

import filecmp
import json
import os
import signal
import subprocess
import sys
import time


def rank_process(worker, bundle, rank):
    """The pid of the worker process of MPI rank `rank` training `bundle`."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if (worker.encode() in args and b"train" in args and bundle.encode() in args
                and f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ):
            return int(pid)
    return None


def main():
    mode, rank, mpirun, worker, bundle, data, out = sys.argv[1:8]
    rank = int(rank)
    devices = json.load(open(os.path.join(bundle, "manifest.json")))["devices"]
    launch = mpirun.split() + ["-np", str(devices), worker, "train", bundle,
                               "--data", data, "--seed", "5"]
    log = os.path.join(out, mode + ".jsonl")
    stopped = os.path.join(out, mode)
    extra = ["--checkpoint-every", "2"] if mode == "kill" else []
    process = subprocess.Popen(
        launch + ["--steps", "100000000", "--checkpoint-dir", stopped, "--log", log] + extra,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        if os.path.exists(log) and sum(1 for _ in open(log)) >= 5:
            break
        time.sleep(0.01)
    pid = rank_process(worker, bundle, rank)
    if pid is None:
        process.kill()
        print("no process of rank", rank)
        return 1
    os.kill(pid, signal.SIGTERM if mode == "stop" else signal.SIGKILL)
    output, _ = process.communicate(timeout=120)
    print("mpirun exit status:", process.returncode)
    for line in output.splitlines():
        if "cleave train:" in line or "exited on signal" in line:
            print(line.strip())

    last = json.loads(open(log).read().splitlines()[-1])["step"]
    saved = sorted(os.listdir(stopped))
    if mode == "stop":
        print("checkpoint of the last logged step:", saved == [f"step_{last:08d}"])
    target = str(last + 4)
    subprocess.run(launch + ["--steps", target, "--checkpoint-dir", stopped, "--resume"],
                   check=True, capture_output=True)
    straight = os.path.join(out, mode + "-straight")
    subprocess.run(launch + ["--steps", target, "--checkpoint-dir", straight],
                   check=True, capture_output=True)
    name = f"step_{last + 4:08d}"
    same = all(filecmp.cmp(os.path.join(stopped, name, f"rank_{r}.bin"),
                           os.path.join(straight, name, f"rank_{r}.bin"), shallow=False)
               for r in range(devices))
    print("resumed equals straight on every rank:", same)
    return 0


if __name__ == "__main__":
    sys.exit(main())
