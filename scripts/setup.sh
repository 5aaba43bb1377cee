#!/usr/bin/env bash
# Installs everything cleave needs on Debian 12 and builds it into build/.
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CLEAVE_BUILD_DIR:-$ROOT/build}"
VENV="$ROOT/.venv"

APT_PACKAGES=(
  build-essential cmake ninja-build ccache git
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libgtest-dev
  libopenblas-dev libopenblas-openmp-dev libdnnl-dev nlohmann-json3-dev libssl-dev pybind11-dev python3-pybind11
  openmpi-bin libopenmpi-dev
  python3-venv python3-torch python3-torchvision python3-torchaudio
  chromium
)

log() { printf '[setup] %s\n' "$*"; }

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

# The venv sees Debian's torch (system site packages) and takes the
# reference packages from PyPI on top.
if [ ! -x "$VENV/bin/python" ]; then
  log "creating the Python venv in $VENV"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
REQS="$ROOT/python/requirements.txt"
STAMP="$VENV/.requirements.sha256"
if [ ! -f "$STAMP" ] || ! sha256sum --quiet -c "$STAMP" >/dev/null 2>&1; then
  log "installing Python packages from python/requirements.txt"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQS"
  sha256sum "$REQS" > "$STAMP"
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  log "configuring $BUILD"
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCLEAVE_PYTHON="$VENV/bin/python"
fi
log "building"
# Everything: the compiler, the runtime and its kernel libraries (CUDA too,
# when the toolkit is installed), the Python module and the test binaries.
ninja -C "$BUILD"
