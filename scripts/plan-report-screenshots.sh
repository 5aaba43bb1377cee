#!/usr/bin/env bash
# Regenerates the screenshots of the plan report in docs/images/: the tiny
# GPT example on 16 H100s, and GPT-3 175B (96 layers, global batch 512) on
# 1024 H100s with Megatron-LM's layout pinned (pp 16, tp 8). Needs chromium.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CLEAVE_BUILD_DIR:-$ROOT/build}"
PYTHON="$ROOT/.venv/bin/python"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$BUILD/bin/cleave" plan "$ROOT/examples/tiny-gpt/model.onnx" --target h100-sxm \
  --devices 16 --tp 4 --format html -o "$WORK/tiny.html"
PYTHONPATH="$ROOT/python" "$PYTHON" -m cleave.generators.gpt "$WORK/gpt3.onnx" \
  --preset gpt3-175b --batch 512 --sparse
"$BUILD/bin/cleave" plan "$WORK/gpt3.onnx" --target h100-sxm --devices 1024 \
  --pp 16 --tp 8 --format html -o "$WORK/gpt3.html"

mkdir -p "$ROOT/docs/images"
CHECK="$ROOT/test/Plan/Inputs/check_report.py"
"$PYTHON" "$CHECK" "$WORK/tiny.html" --screenshot "$ROOT/docs/images/plan-report-tiny.png" > /dev/null
"$PYTHON" "$CHECK" "$WORK/gpt3.html" --screenshot "$ROOT/docs/images/plan-report-gpt3.png" > /dev/null
echo "wrote docs/images/plan-report-tiny.png and docs/images/plan-report-gpt3.png"
