#!/usr/bin/env bash
# Regenerates the checked-in references that are derived from the sources:
# the dialect reference (from ODS) and the supported-operator table (from the
# importer's handler table). test/docs checks that they are current.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CLEAVE_BUILD_DIR:-$ROOT/build}"
TBLGEN=/usr/lib/llvm-22/bin/mlir-tblgen
mkdir -p "$ROOT/docs/Dialects"
"$TBLGEN" -gen-dialect-doc -dialect=cleave -I "$ROOT/include" -I /usr/lib/llvm-22/include \
  "$ROOT/include/cleave/Dialect/Cleave/IR/CleaveOps.td" -o "$ROOT/docs/Dialects/CleaveDialect.md"
"$BUILD/bin/cleave" ops > "$ROOT/docs/onnx-operators.md"
echo "regenerated docs/Dialects/CleaveDialect.md and docs/onnx-operators.md"
