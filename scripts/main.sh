#!/usr/bin/env bash
# The main job on the bundled default: sets up and builds cleave, imports the
# example model (a small GPT-style decoder whose weights stay in an external
# data file) and prints what it holds.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
BUILD="${CLEAVE_BUILD_DIR:-$ROOT/build}"
MODEL="${1:-$ROOT/examples/tiny-gpt/model.onnx}"
exec "$BUILD/bin/cleave" import "$MODEL" -o "$BUILD/tiny-gpt.mlir"
