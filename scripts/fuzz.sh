#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of fuzz/ (docs/fuzzing.md).
#
#   scripts/fuzz.sh build                  build every target (ASan + UBSan)
#   scripts/fuzz.sh list                   the targets
#   scripts/fuzz.sh run TARGET SECONDS [LIBFUZZER OPTION...]
#                                          fuzz one target from its corpus
#   scripts/fuzz.sh smoke                  every target over its checked-in
#                                          corpus once (seconds)
#   scripts/fuzz.sh seed TARGET            gather seeds from the tree and a
#                                          build's test outputs, and merge
#                                          them into fuzz/corpus/TARGET
#   scripts/fuzz.sh merge TARGET           merge what runs found into
#                                          fuzz/corpus/TARGET (minimised)
#
# The targets live in the sanitized build (scripts/sanitized-build.sh,
# build-sanitize/). A run reads fuzz/corpus/TARGET and adds what it finds
# to build-sanitize/fuzz/TARGET/corpus, which is not checked in; crashes go
# to build-sanitize/fuzz/TARGET/ as crash-*, leak-*, timeout-*, oom-*.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CLEAVE_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
CORPORA="$ROOT/fuzz/corpus"
TARGETS=(onnx-import npy tensor-proto manifest plan target device-program)

usage() {
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

die() {
  printf 'fuzz.sh: %s\n' "$*" >&2
  exit 1
}

check_target() {
  local t
  for t in "${TARGETS[@]}"; do
    [ "$t" = "$1" ] && return 0
  done
  die "unknown target '$1' (targets: ${TARGETS[*]})"
}

binary() {
  local bin="$BUILD/bin/cleave-fuzz-$1"
  [ -x "$bin" ] || die "$bin is missing; run scripts/fuzz.sh build"
  printf '%s' "$bin"
}

# The largest seed taken from the tree: the checked-in corpus stays small.
seed_limit() {
  case "$1" in
    onnx-import) echo 4096 ;;
    device-program | target) echo 16384 ;;
    manifest | plan) echo 3072 ;;
    *) echo 2048 ;;
  esac
}

# The largest input each target is given: its seeds' order of size.
max_len() {
  case "$1" in
    onnx-import) echo 65536 ;;
    device-program | manifest | plan | target) echo 16384 ;;
    *) echo 8192 ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

run() {
  local target="$1" seconds="$2"
  shift 2
  check_target "$target"
  local bin work
  bin="$(binary "$target")"
  work="$BUILD/fuzz/$target"
  mkdir -p "$work/corpus"
  # One process on one core: the machines this runs on are small and
  # shared. A run that finds a crash stops and leaves it in $work.
  "$bin" -max_total_time="$seconds" -max_len="$(max_len "$target")" \
    -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$work/" "$@" "$work/corpus" "$CORPORA/$target"
}

smoke() {
  local target bin status=0
  for target in "${TARGETS[@]}"; do
    bin="$(binary "$target")"
    printf '%-16s ' "$target"
    if "$bin" -runs=0 -timeout=20 "$CORPORA/$target" >"$BUILD/fuzz-smoke-$target.log" 2>&1; then
      echo "ok ($(find "$CORPORA/$target" -type f | wc -l) inputs)"
    else
      echo "FAILED (see $BUILD/fuzz-smoke-$target.log)"
      status=1
    fi
  done
  return "$status"
}

# Minimises by edges (-use_counters=0): an input is kept when it reaches
# an edge no smaller kept input reaches, not for hitting one more often.
# Counting hit counts too keeps several times as many inputs (for
# `plan` after an hour's run, 1,561 against 346), and the corpus is
# checked in.
merge_flags() {
  printf '%s\n' -merge=1 -use_counters=0 -max_len="$(max_len "$1")" -timeout=20 \
    -artifact_prefix="$BUILD/fuzz/$1/"
}

# Rebuilds fuzz/corpus/TARGET from the inputs of the given directories
# and its own, keeping only those that add coverage; the regress-* inputs
# stay, under their names.
rebuild_corpus() {
  local target="$1"
  shift
  local bin fresh
  local -a flags
  bin="$(binary "$target")"
  fresh="$(mktemp -d)"
  mkdir -p "$CORPORA/$target" "$BUILD/fuzz/$target"
  cp "$CORPORA/$target"/regress-* "$fresh"/ 2>/dev/null || true
  mapfile -t flags < <(merge_flags "$target")
  "$bin" "${flags[@]}" "$fresh" "$CORPORA/$target" "$@"
  rm -rf "${CORPORA:?}/$target"
  mkdir -p "$CORPORA/$target"
  cp "$fresh"/* "$CORPORA/$target"/ 2>/dev/null || true
  rm -rf "$fresh"
  corpus_size "$target"
}

corpus_size() {
  echo "fuzz/corpus/$1: $(find "$CORPORA/$1" -type f | wc -l) inputs," \
    "$(find "$CORPORA/$1" -type f -printf '%s\n' | awk '{n += $1} END {print n + 0}') bytes"
}

# Copies files matching find's predicates under DIR (when it exists) into
# SEEDS, at most LIMIT bytes each, renamed after their path.
collect() {
  local dir="$1" seeds="$2" limit="$3"
  shift 3
  [ -d "$dir" ] || return 0
  find "$dir" -type f "$@" -size -"$((limit + 1))"c -print0 |
    while IFS= read -r -d '' file; do
      cp "$file" "$seeds/$(printf '%s' "$file" | sha1sum | cut -c1-16)"
    done
}

seed() {
  local target="$1"
  check_target "$target"
  local seeds tests onnx_data limit
  seeds="$(mktemp -d)"
  limit="$(seed_limit "$target")"
  # Test outputs of a build whose lit suite has run: models, tensors and
  # bundles the tests made.
  tests="${CLEAVE_BUILD_DIR:-$ROOT/build}/test"
  onnx_data="$("$ROOT/.venv/bin/python" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))')"
  case "$target" in
    onnx-import)
      collect "$ROOT/examples" "$seeds" 16384 -name '*.onnx'
      collect "$tests" "$seeds" "$limit" -name '*.onnx'
      collect "$onnx_data" "$seeds" "$limit" -name 'model.onnx'
      ;;
    tensor-proto)
      collect "$tests" "$seeds" "$limit" -name '*.pb'
      collect "$onnx_data" "$seeds" "$limit" -name '*.pb'
      ;;
    npy)
      collect "$tests" "$seeds" "$limit" -name '*.npy'
      "$ROOT/.venv/bin/python" - "$seeds" <<'PY'
import sys, numpy as np
out = sys.argv[1]
for dtype in ["f4", "f2", "f8", "i8", "i4", "i2", "i1", "u1", "u2", "u4", "u8", "b1"]:
    for shape in [(), (3,), (2, 3), (1, 0, 2)]:
        np.save(f"{out}/gen-{dtype}-{len(shape)}.npy", np.ones(shape, dtype=dtype))
PY
      ;;
    manifest) collect "$tests" "$seeds" "$limit" -name 'manifest.json' ;;
    plan) collect "$tests" "$seeds" "$limit" -name 'plan.json' ;;
    target)
      collect "$ROOT/targets" "$seeds" "$limit" -name '*.json'
      collect "$ROOT/test" "$seeds" "$limit" -path '*Inputs*' -name '*.json'
      ;;
    device-program)
      # The programs the text-form tests write by hand, without their
      # RUN and CHECK comments, and those the lowering tests print.
      local file
      for file in "$ROOT"/test/Conversion/text-form*.test; do
        grep -v '^//' "$file" | sed '/^$/d' >"$seeds/$(basename "$file").txt"
      done
      collect "$tests" "$seeds" "$limit" -name '*.program'
      ;;
  esac
  echo "seeds for $target: $(find "$seeds" -type f | wc -l) files"
  rebuild_corpus "$target" "$seeds"
  rm -rf "$seeds"
}

main() {
  case "${1:-}" in
    build) "$ROOT/scripts/sanitized-build.sh" cleave-fuzzers ;;
    list) printf '%s\n' "${TARGETS[@]}" ;;
    run)
      [ $# -ge 3 ] || usage
      run "${@:2}"
      ;;
    smoke) smoke ;;
    seed)
      [ $# -eq 2 ] || usage
      seed "$2"
      ;;
    merge)
      [ $# -eq 2 ] || usage
      check_target "$2"
      rebuild_corpus "$2" "$BUILD/fuzz/$2/corpus"
      ;;
    *) usage ;;
  esac
}

# Bash reads a script as it runs it: the call and the exit are one line, so
# that a run of an hour is not cut short by an edit of this file meanwhile.
{ main "$@"; exit; }
