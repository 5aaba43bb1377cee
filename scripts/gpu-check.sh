#!/usr/bin/env bash
# The GPU check: every CUDA kernel against its CPU reference, then every
# reference model compiled for one H200 and compared with onnxruntime, then
# the models partitioned over 2 pipeline stages, 2 tensor-parallel devices
# and 2x2, and three cut by batch (2 replicas of 2 stages, 2 microbatches),
# every rank a thread of one process on the one GPU; then training steps of
# a small GPT (one device, pp x dp, tp, ZeRO-1, bf16, fp16) by
# `cleave-worker train`, their losses against the same bundles compiled for
# the CPU and trained on the build machine; last, each one-device model that
# passed timed against the roofline the cost model predicts for it.
#
#   scripts/gpu-check.sh prepare [models|exports]
#                                  on a build machine (no GPU needed): build,
#                                  export, compile, pack into gpu-check/;
#                                  `exports` packs the checked-in torch
#                                  exports (test/e2e/exports) instead
#   scripts/gpu-check.sh run       on the GPU machine, from a copy of the
#                                  repository with gpu-check/ carried in it;
#                                  writes $OUT/gpu-check.md and gpu-check.log
#   scripts/gpu-check.sh roofline PREDICTED TIMES
#                                  prints the report's roofline section from
#                                  roofline.tsv and the run's times
#
# docs/gpu-check.md says why it is built this way and how to call it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PACK_DIR="$ROOT/gpu-check"
ARCHIVE="$PACK_DIR/gpu-check.tar.xz"
TARGET=h200-sxm
MODELS=(gpt bert vit resnet mobilenet_v2 mobilenet_v3_small efficientnet_b0
  wav2vec2 deepspeech lstm gru)
# fp32 with TF32 off differs from onnxruntime's CPU results only in the order
# of summation, as the CPU programs do; the bar is the CPU end-to-end tests'
# (python/cleave/testing/e2e.py): every element within 1e-4 of the largest
# magnitude of the model's outputs. --rtol 0 makes cleave-worker apply exactly
# that: |got - expected| <= atol, atol = 1e-4 * max|expected|.
SCALE_TOLERANCE=1e-4
RTOL=0
# Partitioned bundles (PPxTP), run with `--single-process`: NCCL refuses two
# ranks on one GPU. ResNet-10 and EfficientNet-B0 stay whole: their weights
# (35 MB) would not fit the archive three more times.
MESHES=(2x1 1x2 2x2)
MESH_MODELS=(gpt bert vit mobilenet_v2 mobilenet_v3_small wav2vec2 deepspeech
  lstm gru)
# The batch cut: these exported with a batch of 4 (models/NAME-batch4) and
# run as 2 replicas of 2 pipeline stages fed 2 microbatches each, 4 ranks.
BATCH=4
BATCH_MODELS=(gpt bert vit)
# The checked-in exports (`prepare exports`): every one that compiles for
# one device (test/e2e/exports/known-failures.txt names those that do not),
# and these also over 2 pipeline stages x 2 tensor-parallel devices.
EXPORTS_DIR="$ROOT/test/e2e/exports"
EXPORT_MESH_MODELS=(llama-dynamo mixtral-dynamo bert-dynamo
  whisper-encoder-dynamo convnext-dynamo)
# Training: the GPT of test/tools/Inputs/train_gpt_tp.py, TRAIN_STEPS steps
# of each configuration (label, then compile flags), the losses within
# TRAIN_RTOL (relative) of the CPU's; the half precisions round their
# products' operands, where one differently summed value can round the
# other way, hence their wider bar.
TRAIN_STEPS=5
TRAIN_RTOL=1e-4
TRAIN_HALF_RTOL=1e-2
TRAIN_CONFIGS=(
  "gpt train adamw|--optimizer adamw --lr 0.01"
  "gpt train pp2 dp2 mb2 adamw|--optimizer adamw --lr 0.01 --devices 4 --pp 2 --microbatches 2"
  "gpt train tp2 sgd clip|--optimizer sgd --lr 0.1 --momentum 0.9 --clip-grad-norm 1 --devices 2 --tp 2"
  "gpt train dp2 zero1 adam|--optimizer adam --lr 0.01 --devices 2 --zero 1"
  "gpt train bf16 adamw|--optimizer adamw --lr 0.01 --precision bf16"
  "gpt train fp16 adamw|--optimizer adamw --lr 0.01 --precision fp16"
)
TRAIN_TIMEOUT=60
# The machine is lent for minutes: whatever hangs is cut off, and models
# still waiting when the budget is spent are reported as not run.
KERNEL_TESTS_TIMEOUT=180
MODEL_TIMEOUT=45
RUN_BUDGET_S=420
# The roofline: each one-device model that passed is run again, one
# untimed warm-up then TIMING_REPEAT timed runs, after every row is checked;
# none starts after TIMING_BUDGET_S in all.
TIMING_REPEAT=10
TIMING_TIMEOUT=30
TIMING_BUDGET_S=480

usage() {
  sed -n '2,/^# docs\/gpu-check.md/p' "${BASH_SOURCE[0]}" | head -n -2 |
    sed 's/^# \{0,1\}//'
  exit 2
}

#===-- prepare ------------------------------------------------------------===#

# Libraries every Linux has (glibc's), which must never travel.
is_system_library() {
  case "$1" in
  linux-vdso.so.* | ld-linux-x86-64.so.* | libc.so.* | libm.so.* | \
    libdl.so.* | libpthread.so.* | librt.so.*) return 0 ;;
  esac
  return 1
}

# CUDA libraries too large to carry (cuBLASLt alone is over 500 MB). The GPU
# machine has its own: its toolkit and PyTorch's nvidia-* wheels; `run`
# finds them there.
is_machine_cuda_library() {
  case "$1" in
  libcublas.so.* | libcublasLt.so.* | libcudnn*.so.*) return 0 ;;
  esac
  return 1
}

# The compiler's runtime, carried for a machine whose own is older; `run`
# uses it only when the loader finds no libstdc++ or libgcc_s there.
is_compiler_runtime() {
  case "$1" in
  libstdc++.so.* | libgcc_s.so.*) return 0 ;;
  esac
  return 1
}

# Copies what $1 needs (by ldd, here) into the pack. Prints one line per
# library that stays behind, with its size.
collect_libraries() {
  local object="$1" stage="$2" name path
  while read -r name path; do
    [[ -z "$name" ]] && continue
    if is_system_library "$name"; then
      continue
    elif [[ "$path" == "not" ]]; then
      echo "error: $object needs $name, which is not found here" >&2
      exit 1
    elif is_machine_cuda_library "$name"; then
      echo "$name $(stat -L -c %s "$path")" >>"$stage/machine-libraries.txt"
    elif is_compiler_runtime "$name"; then
      cp -L --no-clobber "$path" "$stage/lib-fallback/$name"
    else
      cp -L --no-clobber "$path" "$stage/lib/$name"
    fi
  done < <(ldd "$object" | awk '/=>/ {print $1, $3} !/=>/ {n = split($1, p, "/"); print p[n], ""}')
}

prepare() {
  local set="${1:-models}"
  case "$set" in
  models | exports) ;;
  *)
    echo "error: prepare takes 'models' or 'exports', not '$set'" >&2
    exit 2
    ;;
  esac
  local build="${CLEAVE_BUILD_DIR:-$ROOT/build}"
  local stage="$build/gpu-check"
  local python="$ROOT/.venv/bin/python"

  echo "== building"
  ninja -C "$build" cleave cleave-opt cleave-worker cleave-cuda-kernel-tests \
    cleave_rt cleave_rt_cuda
  [[ -f "$build/lib/libcleave_rt_cuda.so" ]] || {
    echo "error: $build/lib/libcleave_rt_cuda.so was not built (no nvcc?)" >&2
    exit 1
  }

  rm -rf "$stage"
  mkdir -p "$stage"/{bin,lib,lib-fallback,models,onnx}
  # One row of the run's table per line: model, label, bundle folder and
  # cleave-worker's extra options, tab-separated.
  : >"$stage/rows.tsv"
  add_row() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$stage/rows.tsv"; }
  # compile_mesh LABEL MODEL BUNDLE FLAGS...: a bundle for several devices;
  # one that does not compile is recorded in it, and `run` reports it as
  # the row's failure.
  compile_mesh() {
    local label=$1 model=$2 bundle=$3 start=$SECONDS
    shift 3
    if "$build/bin/cleave" compile "$stage/onnx/$model.onnx" --quiet \
      --target "$TARGET" "$@" -o "$bundle" 2>"$stage/compile-error.txt"; then
      echo "$label: $(du -sh "$bundle" | cut -f1) in $((SECONDS - start)) s"
    else
      rm -rf "$bundle" && mkdir -p "$bundle"
      head -c 300 "$stage/compile-error.txt" >"$bundle/COMPILE-FAILED"
      echo "$label: did not compile: $(head -1 "$stage/compile-error.txt")"
    fi
  }
  if [[ "$set" == exports ]]; then
    prepare_exports
  else
    prepare_models
  fi
  predict_roofline
  rm -rf "$stage/onnx" "$stage/compile-error.txt"
  pack_stage "$set"
}

prepare_exports() {
  # The exports that compile for one device; each carries its own
  # onnxruntime outputs.
  local names=() name
  for name in $(ls "$EXPORTS_DIR"); do
    [[ -f "$EXPORTS_DIR/$name/model.onnx" ]] || continue
    grep -q "^$name 1:" "$EXPORTS_DIR/known-failures.txt" && continue
    names+=("$name")
  done
  echo "== the checked-in exports (${#names[@]}) and their tolerances"
  PYTHONPATH="$ROOT/python" "$python" - "$stage" "$SCALE_TOLERANCE" \
    "$EXPORTS_DIR" "${names[@]}" <<'PY'
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import numpy_helper

stage, scale_tolerance, exports = sys.argv[1], float(sys.argv[2]), sys.argv[3]
for name in sys.argv[4:]:
    source = os.path.join(exports, name)
    shutil.copy(os.path.join(source, "model.onnx"),
                os.path.join(stage, "onnx", f"{name}.onnx"))
    data = os.path.join(stage, "models", name, "test_data_set_0")
    shutil.copytree(os.path.join(source, "test_data_set_0"), data)
    scale = 0.0
    for file in sorted(os.listdir(data)):
        if file.startswith("output_"):
            value = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, file)))
            if value.dtype.kind == "f" and value.size:
                scale = max(scale, float(np.max(np.abs(value))))
    atol = scale_tolerance * (scale or 1.0)
    with open(os.path.join(stage, "models", name, "atol"), "w") as f:
        f.write(f"{atol:.6g}\n")
    print(f"{name}: max |output| {scale:.4g}, atol {atol:.3g}")
PY
  echo "== compiling the exports for $TARGET"
  for name in "${names[@]}"; do
    compile_mesh "$name" "$name" "$stage/models/$name/bundle"
    add_row "$name" "$name" bundle ""
  done
  echo "== compiling the partitioned exports (2x2) for $TARGET"
  for name in "${EXPORT_MESH_MODELS[@]}"; do
    compile_mesh "$name 2x2" "$name" "$stage/models/$name/bundle-2x2" \
      --devices 4 --pp 2 --tp 2 --microbatches 1
    add_row "$name" "$name pp2 tp2" bundle-2x2 --single-process
  done
}

prepare_models() {
  echo "== exporting the reference models and their onnxruntime outputs"
  local batch_names=("${BATCH_MODELS[@]/%/@$BATCH}")
  PYTHONPATH="$ROOT/python" "$python" - "$stage" "$SCALE_TOLERANCE" \
    "${MODELS[@]}" "${batch_names[@]}" <<'PY'
import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import numpy_helper

from cleave.models.export import export_model, with_batch
from cleave.models.registry import get_model

stage, scale_tolerance, names = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
# NAME@B: the model exported with a batch of B, as NAME-batchB.
for entry in names:
    model, _, batch = entry.partition("@")
    name = f"{model}-batch{batch}" if batch else model
    onnx_path = os.path.join(stage, "onnx", f"{name}.onnx")
    export_model(model, onnx_path, batch=int(batch) if batch else None)
    reference = get_model(model).build()
    inputs = with_batch(reference, int(batch)) if batch else reference.inputs
    feeds = {k: v.numpy() for k, v in inputs.items()}
    session = ort.InferenceSession(onnx_path,
                                   providers=["CPUExecutionProvider"])
    data = os.path.join(stage, "models", name, "test_data_set_0")
    os.makedirs(data)
    # Graph order, which is what cleave-worker binds input_N and output_N to.
    for i, info in enumerate(session.get_inputs()):
        tensor = numpy_helper.from_array(feeds[info.name], info.name)
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    outputs = session.run(None, feeds)
    scale = 0.0
    for i, (info, value) in enumerate(zip(session.get_outputs(), outputs)):
        tensor = numpy_helper.from_array(value, info.name)
        with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
        if value.dtype.kind == "f":
            scale = max(scale, float(np.max(np.abs(value))))
    atol = scale_tolerance * (scale or 1.0)
    with open(os.path.join(stage, "models", name, "atol"), "w") as f:
        f.write(f"{atol:.6g}\n")
    print(f"{name}: {len(feeds)} inputs, {len(outputs)} outputs, "
          f"max |output| {scale:.4g}, atol {atol:.3g}")
PY

  echo "== compiling for $TARGET"
  local name
  for name in "${MODELS[@]}"; do
    local start=$SECONDS
    "$build/bin/cleave" compile "$stage/onnx/$name.onnx" --quiet \
      --target "$TARGET" -o "$stage/models/$name/bundle"
    echo "$name: $(du -sh "$stage/models/$name/bundle" | cut -f1)" \
      "in $((SECONDS - start)) s"
    add_row "$name" "$name" bundle ""
  done
  echo "== compiling the partitioned bundles (${MESHES[*]}) for $TARGET"
  local mesh pp tp
  for name in "${MESH_MODELS[@]}"; do
    for mesh in "${MESHES[@]}"; do
      pp=${mesh%x*} tp=${mesh#*x}
      # One microbatch: the check is of the communication, one step of it.
      compile_mesh "$name $mesh" "$name" "$stage/models/$name/bundle-$mesh" \
        --devices $((pp * tp)) --pp "$pp" --tp "$tp" --microbatches 1
      add_row "$name" "$name pp$pp tp$tp" "bundle-$mesh" --single-process
    done
  done
  echo "== compiling the batch-cut bundles (dp=2 pp=2, 2 microbatches) for $TARGET"
  for name in "${BATCH_MODELS[@]}"; do
    compile_mesh "$name batch $BATCH dp2 pp2" "$name-batch$BATCH" \
      "$stage/models/$name-batch$BATCH/bundle-dp2-pp2" \
      --devices 4 --pp 2 --dp 2 --microbatches 2
    add_row "$name-batch$BATCH" "$name batch $BATCH dp2 pp2 mb2" \
      bundle-dp2-pp2 --single-process
  done
  prepare_training
}

# The training bundles and, for each, the losses of the same bundle
# compiled for the CPU and trained here: training/NAME/{bundle,cpu.jsonl}.
prepare_training() {
  echo "== compiling the training bundles for $TARGET and training them on the CPU"
  local dir="$stage/training"
  mkdir -p "$dir"
  PYTHONPATH="$ROOT/python:$build/python" "$python" \
    "$ROOT/test/tools/Inputs/train_gpt_tp.py" build "$dir"
  # Its weights (model.onnx.data) keep the name the model refers to.
  mv "$dir/model.onnx" "$stage/onnx/gpt-train.onnx"
  mv "$dir"/model.onnx.* "$stage/onnx/" 2>/dev/null || true
  : >"$stage/training.tsv"
  local config label flags name rtol
  for config in "${TRAIN_CONFIGS[@]}"; do
    label=${config%%|*} flags=${config#*|}
    name=${label// /-}
    rtol=$TRAIN_RTOL
    [[ $flags == *--precision* ]] && rtol=$TRAIN_HALF_RTOL
    local loss_flags=(--train --loss cross-entropy --logits logits --labels labels)
    # shellcheck disable=SC2086 # flags: words
    compile_mesh "$label" gpt-train "$dir/$name/bundle" "${loss_flags[@]}" $flags
    # shellcheck disable=SC2086
    "$build/bin/cleave" compile "$stage/onnx/gpt-train.onnx" --quiet "${loss_flags[@]}" \
      $flags -o "$dir/$name/cpu"
    "$build/bin/cleave" train "$dir/$name/cpu" --data "$dir/data" \
      --steps "$TRAIN_STEPS" --seed 3 --log "$dir/$name/cpu.jsonl" >/dev/null
    rm -rf "$dir/$name/cpu"
    printf '%s\t%s\t%s\n' "$name" "$label" "$rtol" >>"$stage/training.tsv"
  done
}

# What the cost model predicts for each one-device bundle (the rows.tsv rows
# with no worker options): the step time of the bundle's own plan.json, and
# the FLOPs, bytes and per-op bounds `cleave-opt --cleave-print-op-cost`
# finds in its model.mlir on one device of the target, whose peaks head the
# file. `run` reads roofline.tsv with awk alone.
predict_roofline() {
  echo "== the cost model's roofline of the one-device bundles on $TARGET"
  local name label bundle flags rows=()
  while IFS=$'\t' read -r name label bundle flags; do
    if [[ -z "$flags" && ! -f "$stage/models/$name/$bundle/COMPILE-FAILED" ]]; then
      rows+=("$name" "$label" "$bundle")
    fi
  done <"$stage/rows.tsv"
  "$python" - "$stage" "$build/bin/cleave-opt" \
    "$build/share/cleave/targets/$TARGET.json" "${rows[@]}" <<'PY'
import json
import re
import subprocess
import sys

stage, cleave_opt, target_file = sys.argv[1:4]
with open(target_file) as f:
    target = json.load(f)
device = target["devices"]
# fp32 with TF32 off: contractions and the rest at the f32 vector rate.
precision = "f32"
OP = re.compile(r"remark: flops=(\d+) read=(\d+) written=(\d+) params=\d+ "
                r"(\S+) time=(\S+)s (compute|memory)-bound")
TOTAL = re.compile(r"remark: total on \S+: flops=(\d+) read=(\d+) "
                   r"written=(\d+) time=(\S+)s")
rows = []
# NAME LABEL BUNDLE for each bundle.
for i in range(4, len(sys.argv), 3):
    name, label, bundle = sys.argv[i:i + 3]
    path = f"{stage}/models/{name}/{bundle}"
    with open(f"{path}/plan.json") as f:
        plan = json.load(f)
    mesh = plan["mesh"]
    if (mesh["pp"], mesh["tp"], mesh["dp"]) != (1, 1, 1):
        sys.exit(f"error: {label}: {path} is not for one device")
    remarks = subprocess.run(
        [cleave_opt, f"{path}/model.mlir", f"--cleave-print-op-cost=target={target_file}",
         "--mlir-print-op-on-diagnostic=false", "-o", "/dev/null"],
        capture_output=True, text=True, check=True).stderr
    bound = {"compute": 0.0, "memory": 0.0}
    precisions = set()
    for flops, _, _, op_precision, time, kind in OP.findall(remarks):
        bound[kind] += float(time)
        if int(flops):
            precisions.add(op_precision)
    totals = TOTAL.findall(remarks)
    if len(totals) != 1:
        sys.exit(f"error: {label}: no total in cleave-opt's report of {path}")
    flops, read, written, time = totals[0]
    step = plan["predicted"]["step_time_s"]
    rows.append([name, label, bundle, f"{step:.6g}", time, flops,
                 str(int(read) + int(written)), f"{bound['compute']:.6g}",
                 f"{bound['memory']:.6g}", "+".join(sorted(precisions)) or "-"])
    print(f"{label}: predicted {step * 1e3:.4g} ms (ops {float(time) * 1e3:.4g} ms), "
          f"{int(flops) / 1e9:.4g} GFLOP, {(int(read) + int(written)) / 1e6:.4g} MB")
with open(f"{stage}/roofline.tsv", "w") as f:
    f.write(f"#target\t{target['name']}\n")
    f.write(f"#precision\t{precision}\n")
    f.write(f"#peak_flops_per_s\t{device['peak_flops_per_s'][precision]:.6g}\n")
    f.write(f"#memory_bandwidth_bytes_per_s\t{device['memory_bandwidth_bytes_per_s']:.6g}\n")
    f.write(f"#compute_efficiency\t{device['compute_efficiency']:.6g}\n")
    f.write(f"#memory_efficiency\t{device['memory_efficiency']:.6g}\n")
    f.write("#name\tlabel\tbundle\tpredicted_s\top_sum_s\tflops\tbytes\t"
            "compute_bound_s\tmemory_bound_s\tprecisions\n")
    for row in rows:
        f.write("\t".join(row) + "\n")
PY
}

# Adds the programs and the libraries they need to the stage, records what
# was built, and packs it.
pack_stage() {
  local set=$1
  echo "== collecting programs and libraries"
  cp "$build/bin/cleave-worker" "$build/bin/cleave-cuda-kernel-tests" \
    "$stage/bin/"
  # libcleave_rt_cuda.so is dlopened from next to libcleave_rt.so, so the two
  # stay together in lib/.
  cp "$build/lib/libcleave_rt.so" "$build/lib/libcleave_rt_cuda.so" \
    "$stage/lib/"
  : >"$stage/machine-libraries.txt"
  local object
  for object in "$stage"/bin/* "$stage"/lib/libcleave_rt*.so \
    "$stage"/models/*/bundle*/programs/*.so \
    "$stage"/training/*/bundle/programs/*.so; do
    collect_libraries "$object" "$stage"
  done
  sort -u -o "$stage/machine-libraries.txt" "$stage/machine-libraries.txt"
  {
    echo "commit: $(git -C "$ROOT" rev-parse HEAD)"
    echo "prepared: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "target: $TARGET"
    echo "set: $set"
    echo "nvcc: $(/usr/local/cuda/bin/nvcc --version | tail -1)"
    echo "uncommitted changes in the tree that was built:"
    git -C "$ROOT" status --short | sed 's/^/  /'
  } >"$stage/PREPARED"

  echo "== packing"
  rm -rf "$PACK_DIR"
  mkdir -p "$PACK_DIR"
  # Weights are random floats and barely shrink; the libraries and the
  # programs' device code shrink by three quarters.
  XZ_OPT="-6 -T2" tar -C "$build" -cJf "$ARCHIVE" gpu-check
  echo "staged:  $(du -sh "$stage" | cut -f1) in $stage"
  echo "carried: $(du -sh "$PACK_DIR" | cut -f1) in $PACK_DIR"
  echo "left to the GPU machine (found there by 'run'):"
  awk '{printf "  %-22s %6.1f MiB here\n", $1, $2 / 1048576}' \
    "$stage/machine-libraries.txt"
}

#===-- run ----------------------------------------------------------------===#

LOG=""
log() { echo "$@" | tee -a "$LOG"; }

# Directories that may hold the machine's own copy of $1: the loader's cache,
# the CUDA toolkit, and the nvidia-* wheels of any Python there.
find_machine_library() {
  local library="$1" dir
  local cached
  cached="$(ldconfig -p 2>/dev/null | awk -v l="$library" '$1 == l {print $NF; exit}')"
  if [[ -n "$cached" ]]; then
    dirname "$cached"
    return 0
  fi
  local candidates=(/usr/local/cuda/lib64 /usr/local/cuda/lib
    /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu)
  local python
  for python in python3 /opt/*/.venv/bin/python3; do
    command -v "$python" >/dev/null 2>&1 || continue
    while read -r dir; do
      candidates+=("$dir"/nvidia/cu13/lib "$dir"/nvidia/*/lib)
    done < <("$python" -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null)
  done
  for dir in "${candidates[@]}"; do
    if [[ -e "$dir/$library" ]]; then
      echo "$dir"
      return 0
    fi
  done
  # Last resort, bounded: a toolkit or wheel somewhere else.
  local found
  found="$(timeout 30 find /usr /opt /root -xdev -name "$library" 2>/dev/null | head -1 || true)"
  [[ -n "$found" ]] && dirname "$found"
}

# Milliseconds since the epoch.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# What the summary holds; filled in as the checks run, written on any exit.
REPORT=""
STARTED=0
FAILURES=0
GPU_NAME=""
WORK="${GPU_CHECK_WORK:-/tmp/cleave-gpu-check}"
KERNEL_ROW="| cleave-cuda-kernel-tests | not run | | |"
MODEL_ROWS=()
TRAIN_ROWS=()
NOTES=()
# The labels of the rows that passed, which alone are timed.
declare -A PASSED=()

write_report() {
  [[ -n "$REPORT" ]] || return 0
  {
    echo "# GPU check"
    echo
    echo "- machine: ${GPU_NAME:-unknown}"
    echo "- prepared: $(grep -E '^(commit|prepared|nvcc):' "$WORK/gpu-check/PREPARED" 2>/dev/null | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
    echo "- ran: $(date -u +%Y-%m-%dT%H:%M:%SZ), $((($(now_ms) - STARTED) / 1000)) s in all"
    echo "- tolerance: |got - expected| <= atol + rtol * |expected|, rtol $RTOL, atol $SCALE_TOLERANCE x the model's max |output| (fp32, TF32 off)"
    echo "- verdict: $([[ $FAILURES -eq 0 ]] && echo PASS || echo "FAIL ($FAILURES failed)")"
    echo
    echo "| check | result | detail | ms |"
    echo "| --- | --- | --- | ---: |"
    echo "$KERNEL_ROW"
    echo
    echo "| model | result | max abs error | max rel error | atol | run ms | process ms |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
    local row
    for row in "${MODEL_ROWS[@]}"; do echo "$row"; done
    echo
    echo "| training bundle ($TRAIN_STEPS steps) | result | max rel loss difference from the CPU | bar | process ms |"
    echo "| --- | --- | ---: | ---: | ---: |"
    for row in "${TRAIN_ROWS[@]}"; do echo "$row"; done
    if [[ -f "$WORK/gpu-check/roofline.tsv" ]]; then
      echo
      roofline_section "$WORK/gpu-check/roofline.tsv" "$WORK/roofline-times.tsv"
    fi
    if [[ ${#NOTES[@]} -gt 0 ]]; then
      echo
      echo "## Notes"
      echo
      local note
      for note in "${NOTES[@]}"; do echo "- $note"; done
    fi
  } >"$REPORT"
}

# Runs one bundle of model NAME (LABEL in the table, BUNDLE its folder) on
# the model's test data with more cleave-worker options; adds its row.
check_bundle() {
  local name=$1 label=$2 model="$pack/models/$1" bundle="$pack/models/$1/$3"
  shift 3
  if (($(now_ms) - STARTED > RUN_BUDGET_S * 1000)); then
    MODEL_ROWS+=("| $label | NOT RUN | | | | | |")
    FAILURES=$((FAILURES + 1))
    return
  fi
  log "== $label"
  local atol rc=0 t0 ms out="$WORK/${label// /-}.txt"
  atol="$(cat "$model/atol")"
  if [[ -f "$bundle/COMPILE-FAILED" ]]; then
    MODEL_ROWS+=("| $label | FAIL (did not compile: $(head -1 "$bundle/COMPILE-FAILED" | tr '|' '/' | cut -c1-160)) | | | $atol | | |")
    FAILURES=$((FAILURES + 1))
    return
  fi
  t0=$(now_ms)
  LD_LIBRARY_PATH="$library_path" timeout "$MODEL_TIMEOUT" \
    "$pack/bin/cleave-worker" run "$bundle" "$@" \
    --test-data "$model/test_data_set_0" --rtol "$RTOL" --atol "$atol" \
    >"$out" 2>&1 || rc=$?
  ms=$(($(now_ms) - t0))
  tee -a "$LOG" <"$out"
  # Largest over the model's outputs, as cleave-worker prints them (a
  # partitioned run prefixes the lines of the rank writing them).
  local max_abs max_rel run_ms result
  max_abs="$(sed -n 's/.*max abs error \([^,]*\),.*/\1/p' "$out" | sort -g | tail -1)"
  max_rel="$(sed -n 's/.*max rel error \([^,]*\),.*/\1/p' "$out" | sort -g | tail -1)"
  run_ms="$(sed -n 's/^ran .* in \([0-9.]*\) ms$/\1/p' "$out")"
  if [[ $rc -eq 0 ]] && grep -Eq '^(rank [0-9]+: )?PASS:' "$out"; then
    result=PASS
    PASSED[$label]=1
  else
    FAILURES=$((FAILURES + 1))
    if [[ $rc -eq 124 ]]; then
      result="FAIL (timed out after $MODEL_TIMEOUT s)"
    elif grep -Eq '^(rank [0-9]+: )?FAIL:' "$out"; then
      result="FAIL (outside tolerance)"
    else
      result="FAIL ($(grep -m1 'error:' "$out" | sed 's/^cleave run: error: //' | tr '|' '/' | cut -c1-200))"
    fi
  fi
  MODEL_ROWS+=("| $label | $result | ${max_abs:-} | ${max_rel:-} | $atol | ${run_ms:-} | $ms |")
}

# Trains one training bundle (NAME under training/, LABEL in the table) for
# TRAIN_STEPS steps and compares its losses with the CPU's; adds its row.
check_training() {
  local name=$1 label=$2 rtol=$3 dir="$pack/training"
  local bundle="$dir/$name/bundle" out="$WORK/train-$name.txt"
  log "== $label"
  if [[ -f "$bundle/COMPILE-FAILED" ]]; then
    TRAIN_ROWS+=("| $label | FAIL (did not compile: $(head -1 "$bundle/COMPILE-FAILED" | tr '|' '/' | cut -c1-160)) | | $rtol | |")
    FAILURES=$((FAILURES + 1))
    return
  fi
  local rc=0 t0 ms
  t0=$(now_ms)
  LD_LIBRARY_PATH="$library_path" timeout "$TRAIN_TIMEOUT" \
    "$pack/bin/cleave-worker" train "$bundle" --data "$dir/data" \
    --steps "$TRAIN_STEPS" --seed 3 --log "$WORK/train-$name.jsonl" \
    >"$out" 2>&1 || rc=$?
  ms=$(($(now_ms) - t0))
  tee -a "$LOG" <"$out"
  local worst=""
  if [[ $rc -eq 0 ]]; then
    # The largest |gpu - cpu| / |cpu| over the steps' losses; "nan" when a
    # loss is missing or not finite.
    worst="$(paste <(sed -n 's/.*"loss": \([^,]*\),.*/\1/p' "$dir/$name/cpu.jsonl") \
      <(sed -n 's/.*"loss": \([^,]*\),.*/\1/p' "$WORK/train-$name.jsonl") |
      awk -v steps="$TRAIN_STEPS" '
        { n++; if ($2 == "" || $2 == "null" || $1 == "null") bad = 1
          d = $2 - $1; if (d < 0) d = -d; s = $1 < 0 ? -$1 : $1
          r = d / (s > 1e-30 ? s : 1e-30); if (r > worst) worst = r }
        END { if (bad || n != steps) print "nan"; else printf "%.3e\n", worst }')"
  fi
  local result
  if [[ $rc -eq 124 ]]; then
    result="FAIL (timed out after $TRAIN_TIMEOUT s)"
  elif [[ $rc -ne 0 ]]; then
    result="FAIL ($(grep -m1 'error:' "$out" | sed 's/^cleave train: error: //' | tr '|' '/' | cut -c1-200))"
  elif [[ $worst == nan ]] || awk -v w="$worst" -v t="$rtol" 'BEGIN { exit !(w > t) }'; then
    result="FAIL (losses differ from the CPU's)"
  else
    result=PASS
  fi
  [[ $result == PASS ]] || FAILURES=$((FAILURES + 1))
  TRAIN_ROWS+=("| $label | $result | ${worst:-} | $rtol | $ms |")
}

# Times each one-device model of roofline.tsv that passed its check: one
# untimed warm-up, then the median of TIMING_REPEAT runs, outputs checked
# again. Writes $WORK/roofline-times.tsv: label, ms (empty when not
# timed), and why not.
time_models() {
  local times="$WORK/roofline-times.tsv"
  : >"$times"
  [[ -f "$pack/roofline.tsv" ]] || return 0
  local name label bundle rest
  while IFS=$'\t' read -r name label bundle rest; do
    [[ $name == \#* ]] && continue
    if [[ -z "${PASSED[$label]:-}" ]]; then
      printf '%s\t\t%s\n' "$label" "its check did not pass" >>"$times"
      continue
    fi
    if (($(now_ms) - STARTED > TIMING_BUDGET_S * 1000)); then
      printf '%s\t\t%s\n' "$label" "the time budget was spent" >>"$times"
      continue
    fi
    log "== $label: $TIMING_REPEAT timed runs"
    local model="$pack/models/$name" out="$WORK/${label// /-}-timed.txt" rc=0
    LD_LIBRARY_PATH="$library_path" timeout "$TIMING_TIMEOUT" \
      "$pack/bin/cleave-worker" run "$model/$bundle" \
      --test-data "$model/test_data_set_0" --rtol "$RTOL" \
      --atol "$(cat "$model/atol")" --repeat "$TIMING_REPEAT" \
      >"$out" 2>&1 || rc=$?
    tee -a "$LOG" <"$out"
    local ms
    ms="$(sed -n 's/^ran .* in \([0-9.]*\) ms (median of [0-9]* runs)$/\1/p' "$out")"
    if [[ $rc -eq 0 && -n "$ms" ]]; then
      printf '%s\t%s\t\n' "$label" "$ms" >>"$times"
    elif [[ $rc -eq 124 ]]; then
      printf '%s\t\t%s\n' "$label" "timed out after $TIMING_TIMEOUT s" >>"$times"
    else
      # It passed once: a repeated run that does not is a failure of its own.
      local failure="exit $rc"
      [[ $rc -eq 0 ]] && failure="no time in its output"
      printf '%s\t\t%s\n' "$label" "the timed run failed ($failure)" >>"$times"
      NOTES+=("$label: the timed runs failed ($failure) after its check passed; see gpu-check.log")
      FAILURES=$((FAILURES + 1))
    fi
  done <"$pack/roofline.tsv"
}

# Prints the report's roofline section: for each model of PREDICTED
# (roofline.tsv) its time in TIMES (time_models' file; missing, nothing was
# timed), against the cost model's prediction and the target's peaks.
roofline_section() {
  local predicted=$1 times=$2
  [[ -f "$times" ]] || times=/dev/null
  awk -F'\t' -v repeat="$TIMING_REPEAT" '
    # Three significant digits, without an exponent from 100 up.
    function sig(x) { return sprintf(x >= 100 ? "%.0f" : "%.3g", x) }
    function percent(x) { return sprintf(100 * x >= 10 ? "%.0f%%" : "%.2g%%", 100 * x) }
    function share(x) { return sprintf("%.0f%%", 100 * x) }
    FILENAME == ARGV[1] { ms[$1] = $2; why[$1] = $3; next }
    /^#name/ { next }
    /^#/ { header[substr($1, 2)] = $2; next }
    { rows[++n] = $0 }
    END {
      peak = header["peak_flops_per_s"]; bandwidth = header["memory_bandwidth_bytes_per_s"]
      print "## Roofline: one device, steady state"
      print ""
      printf "Each one-device model that passed, run again: one untimed warm-up, then the median of %d runs ", repeat
      print "(`cleave-worker run --repeat`; a run includes copying the inputs to the GPU and the outputs back), " \
        "against what the cost model predicts for one " header["target"] " device: the step time of the " \
        "bundle'"'"'s plan.json, and the FLOPs and bytes moved of `cleave-opt --cleave-print-op-cost` on its model.mlir."
      printf "Peaks: %s TFLOP/s (%s, TF32 off), %s TB/s; the cost model expects %s and %s of them.\n",
        sig(peak / 1e12), header["precision"], sig(bandwidth / 1e12),
        header["compute_efficiency"], header["memory_efficiency"]
      print ""
      print "| model | measured ms | predicted ms | predicted / measured | GFLOP | MB moved | GFLOP/s | of peak | GB/s | of bandwidth | bound (cost model, share of its time) |"
      print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
      for (i = 1; i <= n; i++) {
        split(rows[i], f, "\t")
        label = f[2]; predicted = f[4]; flops = f[6]; bytes = f[7]
        compute = f[8]; memory = f[9]
        bound = compute + memory > 0 ? \
          (compute > memory ? "compute (" share(compute / (compute + memory)) ")" \
                            : "memory (" share(memory / (compute + memory)) ")") : "none"
        if (f[10] != "-" && f[10] != header["precision"]) bound = bound ", ops in " f[10]
        row = "| " label
        if (ms[label] != "") {
          s = ms[label] / 1e3
          row = row " | " ms[label] " | " sig(predicted * 1e3) " | " sig(predicted / s) \
            " | " sig(flops / 1e9) " | " sig(bytes / 1e6) \
            " | " sig(flops / s / 1e9) " | " percent(flops / s / peak) \
            " | " sig(bytes / s / 1e9) " | " percent(bytes / s / bandwidth)
        } else {
          reason = (label in why) ? why[label] : "not run"
          row = row " | not timed: " reason " | " sig(predicted * 1e3) " | " \
            "| " sig(flops / 1e9) " | " sig(bytes / 1e6) " | | | |"
        }
        print row " | " bound " |"
        # The plan prices what the model.mlir ops add up to on one device;
        # where it does not, the FLOPs and bytes are not what it priced.
        if (predicted > 0 && (f[5] / predicted > 1.01 || f[5] / predicted < 0.99))
          differs = differs (differs == "" ? "" : ", ") label " (ops " sig(f[5] * 1e3) " ms)"
      }
      if (differs != "") {
        print ""
        print "The predicted step is not the sum of the ops'"'"' times for: " differs "."
      }
    }' "$times" "$predicted"
}

run_check() {
  local out="${OUT:-$ROOT/gpu-check-out}"
  mkdir -p "$out"
  LOG="$out/gpu-check.log"
  REPORT="$out/gpu-check.md"
  : >"$LOG"
  STARTED=$(now_ms)
  trap 'write_report' EXIT

  # Unpacked outside the repository copy, so nothing is written into it.
  if [[ ! -f "$ARCHIVE" ]]; then
    NOTES+=("$ARCHIVE is missing: run 'scripts/gpu-check.sh prepare' and carry gpu-check/")
    log "error: $ARCHIVE is missing; run 'scripts/gpu-check.sh prepare' and carry gpu-check/"
    FAILURES=1
    exit 1
  fi
  rm -rf "$WORK"
  mkdir -p "$WORK"
  if command -v xz >/dev/null 2>&1; then
    tar -C "$WORK" -xJf "$ARCHIVE"
  else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$ARCHIVE" "$WORK"
  fi
  local pack="$WORK/gpu-check"
  log "== prepared"
  tee -a "$LOG" <"$pack/PREPARED"

  log "== nvidia-smi"
  if command -v nvidia-smi >/dev/null 2>&1; then
    timeout 30 nvidia-smi 2>&1 | tee -a "$LOG" || true
    GPU_NAME="$(timeout 30 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)"
  else
    log "nvidia-smi: not found"
    NOTES+=("nvidia-smi is not on this machine's PATH")
  fi
  GPU_NAME="${GPU_NAME:-no GPU reported}"

  # The carried libraries first; then the machine's cuBLAS and cuDNN.
  local library_path="$pack/lib"
  local library dir
  while read -r library _; do
    if dir="$(find_machine_library "$library")" && [[ -n "$dir" ]]; then
      log "$library: $(readlink -f "$dir/$library")"
      [[ ":$library_path:" == *":$dir:"* ]] || library_path+=":$dir"
    else
      log "$library: not found on this machine"
      NOTES+=("$library is not on this machine (looked in ldconfig's cache, /usr/local/cuda and Python's nvidia-* wheels)")
    fi
  done <"$pack/machine-libraries.txt"
  local check=("$pack"/bin/* "$pack"/lib/libcleave_rt*.so)
  if LD_LIBRARY_PATH="$library_path" ldd "${check[@]}" | grep -E 'lib(stdc\+\+|gcc_s)\.so.* not found' >/dev/null; then
    library_path+=":$pack/lib-fallback"
    log "using the carried libstdc++/libgcc_s: this machine has none"
  fi
  local missing
  missing="$(LD_LIBRARY_PATH="$library_path" ldd "${check[@]}" "$pack"/models/*/bundle/programs/*.so 2>&1 | grep 'not found' | sort -u || true)"
  if [[ -n "$missing" ]]; then
    log "unresolved libraries:"
    log "$missing"
    NOTES+=("unresolved libraries: $(echo "$missing" | awk '{print $1}' | sort -u | tr '\n' ' ')")
  fi
  log "LD_LIBRARY_PATH=$library_path"

  log "== cleave-cuda-kernel-tests"
  local t0 rc=0 ms
  t0=$(now_ms)
  LD_LIBRARY_PATH="$library_path" timeout "$KERNEL_TESTS_TIMEOUT" \
    "$pack/bin/cleave-cuda-kernel-tests" --gtest_color=no \
    >"$WORK/kernel-tests.txt" 2>&1 || rc=$?
  ms=$(($(now_ms) - t0))
  tee -a "$LOG" <"$WORK/kernel-tests.txt"
  local passed skipped failed
  passed="$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$WORK/kernel-tests.txt")"
  skipped="$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$WORK/kernel-tests.txt")"
  failed="$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$WORK/kernel-tests.txt")"
  local detail="${passed:-0} passed, ${skipped:-0} skipped, ${failed:-0} failed"
  if [[ $rc -eq 124 ]]; then
    detail="timed out after $KERNEL_TESTS_TIMEOUT s; $detail"
  elif [[ $rc -ne 0 && -z "$passed$skipped$failed" ]]; then
    detail="exit $rc: $(grep -m1 -iE 'error|cannot|not found' "$WORK/kernel-tests.txt" | cut -c1-160)"
  fi
  # A skipped kernel test ran nothing on the GPU, which is what this checks.
  if [[ $rc -eq 0 && -z "$skipped" && -n "$passed" ]]; then
    KERNEL_ROW="| cleave-cuda-kernel-tests | PASS | $detail | $ms |"
  else
    KERNEL_ROW="| cleave-cuda-kernel-tests | FAIL | $detail | $ms |"
    FAILURES=$((FAILURES + 1))
    if grep -q 'no CUDA device' "$WORK/kernel-tests.txt"; then
      NOTES+=("the kernel tests skipped: $(grep -m1 'no CUDA device' "$WORK/kernel-tests.txt" | sed 's/^ *//')")
    fi
  fi

  local name label bundle flags rtol
  # The training steps first: none of their kernels has run elsewhere.
  if [[ -f "$pack/training.tsv" ]]; then
    while IFS=$'\t' read -r name label rtol; do
      check_training "$name" "$label" "$rtol"
    done <"$pack/training.tsv"
  fi

  while IFS=$'\t' read -r name label bundle flags; do
    # shellcheck disable=SC2086 # flags: none or one word
    check_bundle "$name" "$label" "$bundle" $flags
  done <"$pack/rows.tsv"

  time_models

  log "== $FAILURES failed; summary in $REPORT"
  [[ $FAILURES -eq 0 ]]
}

case "${1:-}" in
prepare) prepare "${2:-}" ;;
run) run_check ;;
roofline)
  [[ $# -eq 3 ]] || usage
  roofline_section "$2" "$3"
  ;;
*) usage ;;
esac
