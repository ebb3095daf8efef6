#!/usr/bin/env bash
# Install (only when something changed), start the local federation of real Slurm clusters
# (where this machine allows it; a running one is repaired, not restarted), and open
# JupyterLab with the Diamond extension on the demo notebook demo/demo.ipynb.
#
# The URL stays the same across restarts: the port is fixed (DEMO_PORT, default 8888) and
# the token is kept in demo/.jupyter-token, so an open tab keeps working.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${DIAMOND_NO_VENV:-}" ]; then PY=$PWD/.venv/bin/python
else PY=${PYTHON:-python3}; fi

# What the install depends on: the package metadata, the front end's sources and the
# install script itself (Python sources are installed editable and need no reinstall).
install_stamp() {
  local paths=() p
  for p in pyproject.toml package.json yarn.lock scripts/install.sh src style schema; do
    [ -e "$p" ] && paths+=("$p")
  done
  find "${paths[@]}" -type f | LC_ALL=C sort | xargs -r sha256sum | sha256sum | cut -d' ' -f1
}
stamp_file=.venv/.diamond-install-stamp
[ -n "${VIRTUAL_ENV:-}${DIAMOND_NO_VENV:-}" ] && stamp_file=demo/.install-stamp
want=$(install_stamp)
if [ -x "$PY" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$want" ] \
   && [ -z "${DEMO_REINSTALL:-}" ]; then
  echo "demo: nothing changed since the last install (DEMO_REINSTALL=1 forces one)"
else
  ./scripts/install.sh
  mkdir -p "$(dirname "$stamp_file")"
  echo "$want" >"$stamp_file"
fi
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
token_file=demo/.jupyter-token
if [ ! -s "$token_file" ]; then
  (umask 077; "$PY" -c 'import secrets; print(secrets.token_hex(24))' >"$token_file")
fi
token=$(cat "$token_file")
port=${DEMO_PORT:-8888}
echo "demo: notebook demo/demo.ipynb"
echo "demo: open http://127.0.0.1:$port/lab/tree/demo.ipynb?token=$token"
exec "$PY" -m jupyter lab --ServerApp.root_dir="$PWD/demo" --ip=127.0.0.1 \
  --ServerApp.port="$port" --ServerApp.port_retries=0 \
  --IdentityProvider.token="$token" --LabApp.default_url=/lab/tree/demo.ipynb \
  ${DEMO_ARGS:-} $([ "$(id -u)" = 0 ] && echo --allow-root)
