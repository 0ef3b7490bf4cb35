#!/usr/bin/env bash
# Set up (see setup.sh) and run animik. With no arguments: list the built-in rigs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ $# -eq 0 ]; then set -- rigs; fi
exec .venv/bin/animik "$@"
