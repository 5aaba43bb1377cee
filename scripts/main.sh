#!/usr/bin/env bash
# The main job on the bundled default: sets up and builds cleave, then takes
# the example model (a small GPT-style decoder whose weights stay in an
# external data file) through the whole compiler: import summary, plan,
# compile to a bundle for one CPU device, run the bundle, and compare its
# outputs with onnxruntime's. Pass another model as the first argument.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
BUILD="${CLEAVE_BUILD_DIR:-$ROOT/build}"
MODEL="${1:-$ROOT/examples/tiny-gpt/model.onnx}"
NAME="$(basename "${MODEL%.onnx}")"
[ "$MODEL" = "$ROOT/examples/tiny-gpt/model.onnx" ] && NAME=tiny-gpt
BUNDLE="$BUILD/$NAME.cleave"

echo "== import"
"$BUILD/bin/cleave" import "$MODEL" -o "$BUILD/$NAME.mlir"
echo
echo "== plan (one CPU device)"
"$BUILD/bin/cleave" plan "$MODEL" --target cpu --devices 1
echo
echo "== compile"
"$BUILD/bin/cleave" compile "$MODEL" -o "$BUNDLE" --target cpu
echo
echo "== run and check against onnxruntime"
PYTHONPATH="$ROOT/python:$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" \
  "$ROOT/.venv/bin/python" -m cleave.testing.check_bundle "$MODEL" "$BUNDLE" \
  --int-high 128
