#!/usr/bin/env bash
# Set up animik on a fresh Debian/Ubuntu machine: the Debian packages for OpenGL (headless EGL
# and a virtual X screen for the end-to-end GUI tests), then a virtual environment in .venv with
# animik installed in editable mode plus the test/benchmark extras.
# Idempotent and quick when nothing changed. Used by scripts/run.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(python3-venv libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri libglib2.0-0
              xvfb xauth xdotool imagemagick libxrandr2 libxinerama1 libxrender1 libxi6
              libxcursor1 libxkbcommon0)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
fi
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # Another apt/dpkg process (unattended upgrades, a second set-up) may hold the lock: wait for
  # it (up to 10 min) instead of failing at once.
  if fuser /var/lib/dpkg/lock-frontend >/dev/null 2>&1; then
    echo "setup: waiting for another apt/dpkg process to finish (holding the dpkg lock)"
  fi
  APT_WAIT=(-o DPkg::Lock::Timeout=600)
  $SUDO apt-get "${APT_WAIT[@]}" update -qq
  $SUDO apt-get "${APT_WAIT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PY --version)"
  $PY -m venv .venv
fi
stamp=.venv/.animik-setup
want=$(cat pyproject.toml | sha1sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing Python packages into .venv (first run takes a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[test]"
  # numba compiles the IK kernels once into its on-disk cache: here, not at the first drag.
  .venv/bin/animik warmup
  echo "$want" > "$stamp"
fi

# The Khronos glTF validator (dev tool for the glTF export tests), pinned in package-lock.json.
if command -v npm >/dev/null 2>&1 && [ -f package-lock.json ]; then
  if [ ! -d node_modules/gltf-validator ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "setup: installing the glTF validator (npm ci)"
    npm ci --no-audit --no-fund --silent
  fi
fi
