#!/usr/bin/env bash
# Configures and builds the sanitized build (ASan + UBSan, Clang 22) that
# scripts/sanitize.sh and scripts/fuzz.sh share: every compiler and runtime
# target, the programs `cleave compile` builds, and the fuzz targets. It
# lives in its own directory (build-sanitize/ unless CLEAVE_SANITIZE_BUILD_DIR
# says otherwise) and never touches build/.
#
#   scripts/sanitized-build.sh [NINJA TARGET...]   (default: everything)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CLEAVE_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
LLVM=/usr/lib/llvm-22

log() { printf '[sanitized-build] %s\n' "$*"; }

# Clang, its sanitizer and libFuzzer runtimes, and its OpenMP (the runtime
# and the programs use OpenMP).
APT_PACKAGES=(clang-22 libclang-rt-22-dev libomp-22-dev)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  log "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  log "configuring $BUILD"
  # -O1 (what the sanitizers' documentation recommends, and quicker to
  # compile than -O3) and line tables only (symbolized reports without the
  # compile time of full debug information).
  # No CUDA: nvcc does not take Clang's sanitizers.
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_C_COMPILER="$LLVM/bin/clang" \
    -DCMAKE_CXX_COMPILER="$LLVM/bin/clang++" \
    -DCMAKE_C_FLAGS="-gline-tables-only" \
    -DCMAKE_CXX_FLAGS="-gline-tables-only" \
    -DCLEAVE_SANITIZE="address,undefined" \
    -DCLEAVE_BUILD_FUZZERS=ON \
    -DCLEAVE_ENABLE_CUDA=OFF \
    -DMLIR_DIR="$LLVM/lib/cmake/mlir" \
    -DCLEAVE_PYTHON="$ROOT/.venv/bin/python"
fi
log "building $BUILD"
ninja -C "$BUILD" "$@"
