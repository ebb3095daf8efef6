#!/usr/bin/env bash
# Install everything, start the local federation of real Slurm clusters (where this machine
# allows it), and open JupyterLab with the Diamond extension against it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
if [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${DIAMOND_NO_VENV:-}" ]; then PY=$PWD/.venv/bin/python
else PY=${PYTHON:-python3}; fi
export PATH="$(dirname "$PY"):$PATH"
if out=$("$PY" -m diamond_jupyter.cli testbed up --json 2>&1); then
  config=$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["config"])' <<<"$out")
  export DIAMOND_CONFIG=$config
  echo "demo: test bed up; sites file $config"
else
  echo "demo: the Slurm test bed cannot run here: $out" >&2
  echo "demo: JupyterLab opens anyway; configure real sites in ~/.config/diamond/sites.yaml" >&2
fi
mkdir -p demo
[ -f demo/demo.ipynb ] || cp binder/demo.ipynb demo/
exec "$PY" -m jupyter lab --ServerApp.root_dir="$PWD/demo" --ip=127.0.0.1 ${DEMO_ARGS:-} \
  $([ "$(id -u)" = 0 ] && echo --allow-root)
