#!/usr/bin/env bash
# A real JupyterHub on this machine: `./scripts/hub.sh up [--json] [--batch SITE]`,
# `./scripts/hub.sh down`. Users alice and bob (system users, PAM passwords), each with
# their own single-user server running the diamond extension on the test bed's sites; with
# --batch SITE each server is a Slurm job on that test-bed cluster (batchspawner).
# `up --json` prints {"url": ..., "users": [{"name", "token", "password"}], ...}.
# Run as root after ./scripts/install.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${DIAMOND_NO_VENV:-}" ] && [ -x .venv/bin/python ]; then
  PY=$PWD/.venv/bin/python
else
  PY=${PYTHON:-python3}
fi
export PATH="$(dirname "$PY"):$PATH"
exec "$PY" -m diamond_jupyter.hub "$@"
