#!/usr/bin/env bash
# Install everything, then run every test: Python (against the real local Slurm test bed,
# real SSH, a real Jupyter server) and UI (Playwright driving Debian's chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
if [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${DIAMOND_NO_VENV:-}" ]; then PY=$PWD/.venv/bin/python
else PY=${PYTHON:-python3}; fi
export PATH="$(dirname "$PY"):$PATH"
"$PY" -m ruff check diamond_jupyter tests ui-tests benchmarks
"$PY" -m pytest -p no:cacheprovider -q -ra --durations=25 "$@" tests ui-tests
