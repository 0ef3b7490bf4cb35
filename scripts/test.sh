#!/usr/bin/env bash
# Set up (see setup.sh) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m ruff check animik tests scripts
# The house's layers, import cycles and GUI-only-in-app (contracts in pyproject.toml).
.venv/bin/lint-imports --no-logo
exec .venv/bin/python -m pytest -q "$@"
