#!/usr/bin/env bash
# Builds cleave with AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/sanitized-build.sh: the compiler, the runtime, and the programs
# `cleave compile` builds) and runs the lit suite against that build.
#
#   scripts/sanitize.sh            the CI subset (test/ minus the slowest
#                                  model tests; see docs/fuzzing.md)
#   scripts/sanitize.sh --all      every lit test
#   scripts/sanitize.sh PATH...    the given tests (paths under test/)
#
# CLEAVE_SANITIZE_TIMEOUT sets the limit per test in seconds (default 1200).
#
# A sanitizer report fails the test that triggered it: every error is fatal
# (-fno-sanitize-recover), leaks included, except those of the libraries
# listed in scripts/lsan.supp.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CLEAVE_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"

"$ROOT/scripts/sanitized-build.sh"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_stack_use_after_return=1:check_initialization_order=1}"
# Leaks are suppressed by the library that allocated them, which only a
# full stack names: OpenMPI and its components are built without frame
# pointers, so the fast unwinder stops at their first frame and leaves it
# unnamed. Allocations record their stacks with the slow unwinder.
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# The model tests (test/e2e, the conformance sweeps, the torch model
# families' training tests) compile and run whole networks, which under the
# sanitizers takes far longer than the rest of the suite (a test of four
# families passes the 1,200 s limit on a loaded two-core machine). The HTML
# report's test starts headless Chromium, which does not come up under the
# ASan runtime the tests' Python preloads.
SLOW='e2e/|conformance|numeric-sweep|report-html|families'

tests=()
filter_out=()
case "${1:-}" in
  --all) tests=("$BUILD/test") ;;
  "")
    tests=("$BUILD/test")
    filter_out=(--filter-out "$SLOW")
    ;;
  *)
    for path in "$@"; do
      tests+=("$BUILD/${path#"$ROOT"/}")
    done
    ;;
esac
# Sanitized programs run several times slower: a longer limit per test
# (CLEAVE_SANITIZE_TIMEOUT seconds, 1200 by default). The longest tests of
# the subset (docs/fuzzing.md names them) need more than that on a
# two-core machine: run them on their own with a longer limit.
/usr/lib/llvm-22/bin/lit -sv --timeout="${CLEAVE_SANITIZE_TIMEOUT:-1200}" \
  "${filter_out[@]}" "${tests[@]}"
