#!/usr/bin/env bash
# The main job on the bundled default: sets up and builds cleave, then takes
# the example model (a small GPT-style decoder whose weights stay in an
# external data file) through the whole compiler: the import summary, the
# plan for four CPU devices, the bundle compiled for them (one program per
# pipeline stage, one weight shard per device), a run across four MPI ranks,
# and its outputs checked against onnxruntime's. The same model compiled for
# one device is checked too. Pass another model as the first argument, and
# a device count as the second.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
BUILD="${CLEAVE_BUILD_DIR:-$ROOT/build}"
MODEL="${1:-$ROOT/examples/tiny-gpt/model.onnx}"
DEVICES="${2:-4}"
NAME="$(basename "${MODEL%.onnx}")"
[ "$MODEL" = "$ROOT/examples/tiny-gpt/model.onnx" ] && NAME=tiny-gpt
CHECK=("$ROOT/.venv/bin/python" -m cleave.testing.check_bundle --int-high 128
       --cleave "$BUILD/bin/cleave")
export PYTHONPATH="$ROOT/python:$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"

echo "== import"
"$BUILD/bin/cleave" import "$MODEL" -o "$BUILD/$NAME.mlir"
echo
echo "== plan ($DEVICES CPU devices, one replica, one microbatch)"
"$BUILD/bin/cleave" plan "$MODEL" --target cpu --devices "$DEVICES" --dp 1 --microbatches 1
echo
echo "== compile for $DEVICES devices"
"$BUILD/bin/cleave" compile "$MODEL" -o "$BUILD/$NAME.cleave" --target cpu --devices "$DEVICES"
echo
echo "== run on $DEVICES MPI ranks and check against onnxruntime"
"${CHECK[@]}" "$MODEL" "$BUILD/$NAME.cleave"
echo
echo "== the same on one device"
"$BUILD/bin/cleave" compile "$MODEL" -o "$BUILD/$NAME-1.cleave" --target cpu --quiet
"${CHECK[@]}" "$MODEL" "$BUILD/$NAME-1.cleave"
