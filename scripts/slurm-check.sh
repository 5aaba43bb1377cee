#!/usr/bin/env bash
# The Slurm check: partitioned bundles launched with `srun --mpi=pmix`, the
# way a Slurm cluster runs them, on a private one-node cluster that this
# script starts and stops itself (munge, slurmctld and slurmd on ports
# 16817/16818, state under a temporary directory).
#
#   scripts/slurm-check.sh            needs root (it installs slurm-wlm with
#                                     apt when srun is missing, and starts
#                                     the daemons) and a built tree
#                                     (scripts/setup.sh or scripts/test.sh)
#
# Each check prints one line; the exit status is the number of failures.
# docs/guide/deploying.md records what it printed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/build/bin"
PY="$ROOT/.venv/bin/python"
INPUTS="$ROOT/test/runtime/Inputs"
CTLD_PORT=16817
SLURMD_PORT=16818
# Every launch is bounded: a hang is a failure, not a stuck check.
STEP_TIMEOUT=120

# Seconds since START (from `date +%s%N`), to a tenth.
elapsed() {
  local tenths=$((($(date +%s%N) - $1) / 100000000))
  echo "$((tenths / 10)).$((tenths % 10))"
}

die() {
  echo "slurm-check: error: $*" >&2
  exit 100
}

[[ $EUID -eq 0 ]] || die "run as root: the check starts munged, slurmctld and slurmd"
[[ -x "$BIN/cleave-worker" && -x "$BIN/cleave" && -x "$PY" ]] ||
  die "no build in $ROOT/build (or no .venv): run scripts/setup.sh first"

if ! command -v srun >/dev/null || ! command -v slurmctld >/dev/null ||
  ! command -v slurmd >/dev/null; then
  echo "slurm-check: installing slurm-wlm (Debian's Slurm, with munge)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm >/dev/null
fi

WORK="$(mktemp -d /tmp/cleave-slurm.XXXXXX)"
export SLURM_CONF="$WORK/slurm.conf"
STARTED_MUNGED=0
stop_cluster() {
  for daemon in slurmd slurmctld; do
    if [[ -f "$WORK/$daemon.pid" ]]; then
      kill "$(cat "$WORK/$daemon.pid")" 2>/dev/null || true
    fi
  done
  if [[ $STARTED_MUNGED -eq 1 && -f /run/munge/munged.pid ]]; then
    kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap stop_cluster EXIT

#===-- the cluster --------------------------------------------------------===#

# munge authenticates Slurm's messages; start it unless one already runs.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  if [[ ! -f /etc/munge/munge.key ]]; then
    mungekey --create 2>/dev/null || /usr/sbin/create-munge-key -f >/dev/null
    chown munge:munge /etc/munge/munge.key
  fi
  mkdir -p /run/munge && chown munge:munge /run/munge
  runuser -u munge -- /usr/sbin/munged
  STARTED_MUNGED=1
  munge -n | unmunge >/dev/null || die "munged did not start"
fi

# This machine as the cluster's only node, as slurmd itself sees it.
NODE_LINE="$(slurmd -C | head -n 1)"
NODE="$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<<"$NODE_LINE")"
mkdir -p "$WORK/state" "$WORK/spool"
cat >"$SLURM_CONF" <<EOF
ClusterName=cleave-check
SlurmctldHost=$NODE
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmUser=root
SlurmdUser=root
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmdSpoolDir=$WORK/spool
StateSaveLocation=$WORK/state
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
$NODE_LINE State=UNKNOWN
PartitionName=check Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
slurmctld -c -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 30); do
  sinfo -h -o %T 2>/dev/null | grep -qx idle && break
  sleep 1
done
sinfo -h -o %T | grep -qx idle ||
  die "the node did not come up: $(sinfo 2>&1 | tail -n 1); logs in $WORK"
echo "slurm-check: Slurm $(srun --version | cut -d' ' -f2) on $NODE ($(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$NODE_LINE") CPUs), srun --mpi=pmix"

#===-- the checks ---------------------------------------------------------===#

FAILURES=0
pass() { echo "PASS: $*"; }
fail() {
  echo "FAIL: $*"
  FAILURES=$((FAILURES + 1))
}

# srun TASKS BUNDLE OUT INPUTS...: the bundle's ranks as Slurm tasks (more
# tasks than cores: --overcommit).
launch() {
  local tasks="$1" bundle="$2" out="$3"
  shift 3
  timeout "$STEP_TIMEOUT" srun --mpi=pmix -n "$tasks" --overcommit \
    "$BIN/cleave-worker" run "$bundle" "$@" --output-dir "$out"
}

# compare MODEL OUT_SRUN OUT_LOCAL NAME=FILE...: every output of the srun
# run against onnxruntime (within 1e-4 of the output's largest magnitude,
# the end-to-end tests' bar) and against `cleave run` of the same bundle.
compare() {
  "$PY" - "$@" <<'EOF'
import sys
import numpy as np
import onnxruntime as ort

model, got_dir, local_dir, *inputs = sys.argv[1:]
feeds = {n: np.load(f) for n, f in (i.split("=", 1) for i in inputs)}
session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
ok = True
for meta, want in zip(session.get_outputs(), session.run(None, feeds)):
    got = np.load(f"{got_dir}/{meta.name}.npy")
    local = np.load(f"{local_dir}/{meta.name}.npy")
    scale = float(np.abs(want).max()) or 1.0
    err = float(np.abs(got - want).max())
    same = float(np.abs(got - local).max())
    ok &= got.shape == want.shape and err <= 1e-4 * scale and same == 0.0
    print(f"{meta.name}: max abs error {err:.3e} against onnxruntime "
          f"(scale {scale:.3e}), {same:.1e} against cleave run")
sys.exit(0 if ok else 1)
EOF
}

# check_model NAME MODEL TASKS COMPILE_FLAGS INPUTS...
check_model() {
  local name="$1" model="$2" tasks="$3" flags="$4"
  shift 4
  local bundle="$WORK/$name.cleave" log="$WORK/$name.log"
  # shellcheck disable=SC2086
  if ! "$BIN/cleave" compile "$model" -o "$bundle" $flags --quiet >"$log" 2>&1; then
    fail "$name: compile failed: $(tail -n 1 "$log")"
    return
  fi
  local args=()
  for input in "$@"; do args+=(--input "$input"); done
  if ! "$BIN/cleave" run "$bundle" "${args[@]}" --output-dir "$WORK/$name.local" >>"$log" 2>&1; then
    fail "$name: cleave run failed: $(tail -n 1 "$log")"
    return
  fi
  local start took
  start=$(date +%s%N)
  if ! launch "$tasks" "$bundle" "$WORK/$name.srun" "${args[@]}" >>"$log" 2>&1; then
    fail "$name: srun -n $tasks failed: $(tail -n 3 "$log" | tr '\n' ' ')"
    return
  fi
  took=$(elapsed "$start")
  local result
  if result=$(compare "$model" "$WORK/$name.srun" "$WORK/$name.local" "$@" 2>&1); then
    pass "$name: srun -n $tasks in $took s; $(tr '\n' ';' <<<"$result" | sed 's/;$//')"
  else
    fail "$name: $(tr '\n' ';' <<<"$result")"
  fi
}

"$PY" -c "import numpy as np; np.save('$WORK/ids1.npy', (np.arange(16, dtype=np.int64).reshape(1, 16) * 7) % 128)"
check_model "tiny-gpt pp=2 tp=2" "$ROOT/examples/tiny-gpt/model.onnx" 4 \
  "--devices 4 --pp 2 --tp 2" "input_ids=$WORK/ids1.npy"

PYTHONPATH="$ROOT/python" "$PY" -m cleave.generators.gpt "$WORK/gpt4.onnx" \
  --layers 2 --hidden 64 --heads 4 --seq 8 --batch 4 >/dev/null
"$PY" -c "import numpy as np; np.save('$WORK/ids4.npy', (np.arange(32, dtype=np.int64).reshape(4, 8) * 5) % 128)"
check_model "gpt dp=2 pp=2 microbatches=2" "$WORK/gpt4.onnx" 4 \
  "--devices 4 --pp 2 --dp 2 --microbatches 2" "input_ids=$WORK/ids4.npy"

# Failures under srun: test/runtime/Inputs/pipeline.cpp's stage 1 reads
# `mode` (1 kills its process, 2 never returns). Every task must end, non-
# zero, well within the step timeout; a hang names the rank.
"$PY" "$INPUTS/make_bundle.py" pipeline "$WORK/pipe" --lib-dir "$ROOT/build/lib" >/dev/null
"$PY" "$INPUTS/tensors.py" npy "$WORK/x.npy" float32 2,3 0,1,2,3,4,5
for mode in 1 2; do
  "$PY" "$INPUTS/tensors.py" npy "$WORK/mode$mode.npy" int32 1 "$mode"
done
check_failure() {
  local what="$1" mode="$2" expect="$3"
  local log="$WORK/failure$mode.log" status=0 start took
  start=$(date +%s%N)
  launch 2 "$WORK/pipe" "$WORK/pipe.out$mode" --input "x=$WORK/x.npy" \
    --input "mode=$WORK/mode$mode.npy" --timeout 3 >"$log" 2>&1 || status=$?
  took=$(elapsed "$start")
  if [[ $status -eq 0 || $status -eq 124 ]]; then
    fail "$what: srun exit status $status after $took s"
  elif [[ -n "$expect" ]] && ! grep -qF "$expect" "$log"; then
    fail "$what: exit status $status, but no '$expect' in: $(head -n 3 "$log" | tr '\n' ' ')"
  else
    pass "$what: every task ended in $took s, srun exit status $status${expect:+; \"$expect\"}"
  fi
}
check_failure "a rank killed mid-step" 1 ""
check_failure "a rank hung (--timeout 3)" 2 \
  "cleave run: error: rank 1 (stage 1, tp 0): timed out after 3s in step (node Recv_0)"

# Training under srun: a pp=2 x dp=2 training step, one task per device,
# against the same bundle trained as threads of one process by `cleave
# train`: the same losses and, bit for bit, the same checkpoint.
check_training() {
  local name="mlp train pp=2 dp=2" dir="$WORK/train" log="$WORK/train.log"
  mkdir -p "$dir"
  if ! { PYTHONPATH="$ROOT/python:$ROOT/build/python" "$PY" "$ROOT/test/tools/Inputs/train_mlp.py" build "$dir" &&
    "$BIN/cleave" compile "$dir/model.onnx" -o "$dir/pp" --train --loss mse \
      --optimizer adam --lr 0.01 --devices 4 --pp 2 --quiet &&
    "$BIN/cleave" train "$dir/pp" --data "$dir/data" --steps 12 --seed 3 \
      --log "$dir/threads.jsonl" --checkpoint-dir "$dir/threads"; } >"$log" 2>&1; then
    fail "$name: preparing failed: $(tail -n 1 "$log")"
    return
  fi
  local start took status=0
  start=$(date +%s%N)
  timeout "$STEP_TIMEOUT" srun --mpi=pmix -n 4 --overcommit \
    "$BIN/cleave-worker" train "$dir/pp" --data "$dir/data" --steps 12 \
    --seed 3 --log "$dir/srun.jsonl" --checkpoint-dir "$dir/srun" \
    >>"$log" 2>&1 || status=$?
  took=$(elapsed "$start")
  if [[ $status -ne 0 ]]; then
    fail "$name: srun -n 4 exit status $status: $(tail -n 3 "$log" | tr '\n' ' ')"
    return
  fi
  local same_log same_files=yes rank
  same_log="$("$PY" "$ROOT/test/tools/Inputs/train_mlp.py" same-log \
    "$dir/threads.jsonl" "$dir/srun.jsonl")"
  for rank in 0 1 2 3; do
    cmp -s "$dir/threads/step_00000012/rank_$rank.bin" \
      "$dir/srun/step_00000012/rank_$rank.bin" || same_files=no
  done
  if [[ "$same_log" == *True && $same_files == yes ]]; then
    pass "$name: srun -n 4, 12 steps in $took s; losses and every rank file of the checkpoint equal to cleave train's threads"
  else
    fail "$name: $same_log; rank files equal: $same_files"
  fi
}
check_training

echo "slurm-check: $FAILURES failure(s)"
exit "$FAILURES"
