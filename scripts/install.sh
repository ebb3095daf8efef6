#!/usr/bin/env bash
# Install everything diamond-jupyter, its tests and its demo need on a fresh Debian 12 machine:
# Debian packages (Slurm, munge, sshd, chromium, iproute2, Lmod for the test bed's modules),
# the Python package with its test extra (this builds the JupyterLab extension with jlpm),
# and nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PKGS=(python3 acl slurm-wlm slurmctld slurmd slurm-client munge openssh-server openssh-client
          chromium iproute2 procps psmisc util-linux lmod
          slurmrestd slurm-wlm-jwt-plugin libslurm-perl libslurmdb-perl libswitch-perl
          libpam-google-authenticator
          gridengine-master gridengine-exec gridengine-client)
# Grid Engine (the test bed's delta) makes its own cell: the packages must not configure one
GRIDENGINE_DEBCONF="gridengine-common shared/gridengineconfig boolean false
gridengine-master shared/gridengineconfig boolean false
gridengine-exec shared/gridengineconfig boolean false
gridengine-client shared/gridengineconfig boolean false"
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ]; then
    echo "install: apt packages: ${missing[*]}"
    debconf-set-selections <<<"$GRIDENGINE_DEBCONF"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo debconf-set-selections <<<"$GRIDENGINE_DEBCONF"
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "install: cannot install ${missing[*]} without root; the Slurm test bed will say what is missing" >&2
  fi
fi

# Slurm's PBS/Torque wrappers (slurm-wlm-torque) conflict in dpkg with gridengine-client (both
# ship qsub): unpacked, not installed, into a private prefix that the test bed's PBS-speaking
# site names in its `commands:`. They find sbatch/salloc/srun beside themselves.
TORQUE_PREFIX=${DIAMOND_TORQUE_PREFIX:-/opt/diamond/slurm-torque}
if [ ! -x "$TORQUE_PREFIX/bin/qsub" ] && [ "$(id -u)" = 0 ]; then
  echo "install: Slurm's Torque wrappers into $TORQUE_PREFIX"
  tmp=$(mktemp -d)
  dl() { (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root slurm-wlm-torque); }
  dl || { apt-get update -qq && dl; }
  dpkg-deb -x "$tmp"/slurm-wlm-torque_*.deb "$tmp/root"
  mkdir -p "$TORQUE_PREFIX/bin"
  cp -a "$tmp/root/usr/bin/." "$TORQUE_PREFIX/bin/"
  for c in sbatch salloc srun; do ln -sf "/usr/bin/$c" "$TORQUE_PREFIX/bin/$c"; done
  rm -rf "$tmp"
fi

# JupyterHub's proxy (scripts/hub.sh) is an npm package: global for root, else ~/.local.
if ! command -v configurable-http-proxy >/dev/null; then
  echo "install: configurable-http-proxy (npm)"
  if [ "$(id -u)" = 0 ]; then npm install -g --no-fund --no-audit -s configurable-http-proxy@5
  else npm install -g --prefix "$HOME/.local" --no-fund --no-audit -s configurable-http-proxy@5
  fi
fi

# A virtual environment of the project's own (.venv), unless one is active already.
if [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${DIAMOND_NO_VENV:-}" ]; then
  [ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
  PY=$PWD/.venv/bin/python
else
  PY=${PYTHON:-python3}
fi
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# The build is skipped while its output exists (pyproject's skip-if-exists): a checkout whose
# sources changed since the last build drops that output, so the install below rebuilds it.
built=diamond_jupyter/labextension/static/style.js
if [ -f "$built" ] && [ -n "$(find src style schema package.json -newer "$built" -print -quit 2>/dev/null)" ]; then
  echo "install: the JupyterLab extension's sources changed since its build: rebuilding it"
  rm -rf diamond_jupyter/labextension lib tsconfig.tsbuildinfo
fi
# jupyterlab provides jlpm, which the build of the labextension needs
"$PY" -m pip install -q --disable-pip-version-check "jupyterlab>=4.2,<5" "hatch-jupyter-builder>=0.9" \
  "hatch-nodejs-version>=0.3.2" hatchling
"$PY" -m pip install -q --disable-pip-version-check -e ".[test]"
export PATH="$(dirname "$PY"):$PATH"  # `jupyter X` runs `jupyter-X` from the same env
labext=$("$PY" -m jupyter labextension list 2>&1)
grep -q "diamond-jupyter.*enabled" <<<"$labext" \
  || { echo "install: the labextension is not enabled: $labext" >&2; exit 1; }
serverext=$("$PY" -m jupyter server extension list 2>&1)
grep -q "diamond_jupyter.*enabled" <<<"$serverext" \
  || { echo "install: the server extension is not enabled: $serverext" >&2; exit 1; }
echo "install: done ($PY)"
