#!/usr/bin/env bash
# Set up (see setup.sh) and run animik. With no arguments: the app on scenes/default.toml.
# Arguments go to `animik` (e.g. `bash scripts/run.sh fig2`, `bash scripts/run.sh rigs`).
# Without a display the app exits with code 4; use `xvfb-run -a bash scripts/run.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/animik "$@"
