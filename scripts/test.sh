#!/usr/bin/env bash
# Sets up and builds cleave, then runs every test (the lit suites under test/).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
BUILD="${CLEAVE_BUILD_DIR:-$ROOT/build}"

RESULTS="$BUILD/test-results.json"
status=0
/usr/lib/llvm-22/bin/lit -sv --time-tests -o "$RESULTS" "$BUILD/test" || status=$?

# One closing line that any reader of the log can count.
"$ROOT/.venv/bin/python" - "$RESULTS" <<'PY'
import collections, json, sys
with open(sys.argv[1]) as f:
    tests = json.load(f)["tests"]
codes = collections.Counter(t["code"] for t in tests)
passed = codes["PASS"] + codes["XFAIL"]
failed = sum(codes[c] for c in ("FAIL", "XPASS", "UNRESOLVED", "TIMEOUT"))
skipped = codes["UNSUPPORTED"]
print(f"lit: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit "$status"
