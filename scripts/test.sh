#!/usr/bin/env bash
# Install everything, then run every test: Python (against the real local Slurm test bed,
# real SSH, a real Jupyter server) and UI (Playwright driving Debian's chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
PY=${PYTHON:-python3}
"$PY" -m ruff check diamond_jupyter tests ui-tests benchmarks
"$PY" -m pytest -p no:cacheprovider -q -ra "$@" tests ui-tests
