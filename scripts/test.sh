#!/usr/bin/env bash
# Install everything, then run every test: Python (against the real local Slurm test bed,
# real SSH, a real Jupyter server) and UI (Playwright driving Debian's chromium).
#
# With no arguments the suite runs as two pytest sessions at once: the tests that need the
# test bed (one process: they mostly wait on schedulers and browsers) beside those that need
# none (they mostly compute), spread over pytest-xdist workers, one per CPU and at least two
# (DIAMOND_TEST_WORKERS=N to choose), a file's tests kept together on one worker, in order.
# The second session's output follows the first's. With arguments (`-k x`, a path,
# `--no-testbed`, `-n 2 --no-testbed`), one session runs with them.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
if [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${DIAMOND_NO_VENV:-}" ]; then PY=$PWD/.venv/bin/python
else PY=${PYTHON:-python3}; fi
export PATH="$(dirname "$PY"):$PATH"
# the CLI children tests start import from compiled bytecode kept outside the checkout
# (with PYTHONDONTWRITEBYTECODE each one compiled the whole package again)
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-/tmp/diamond-pycache}"
unset PYTHONDONTWRITEBYTECODE
"$PY" -m ruff check --no-cache diamond_jupyter tests ui-tests benchmarks conftest.py
run=("$PY" -m pytest -p no:cacheprovider -q -ra --durations=25)
if [ $# -gt 0 ]; then exec "${run[@]}" "$@" tests ui-tests; fi

workers=${DIAMOND_TEST_WORKERS:-$(nproc)}
[[ $workers =~ ^[1-9][0-9]*$ ]] \
  || { echo "DIAMOND_TEST_WORKERS: '$workers' is not a whole number of workers (1, 2, ...)" >&2; exit 2; }
# two at least: one computes while the other waits on a server or a browser
((workers >= 2)) || workers=2
pure_log=$(mktemp /tmp/diamond-tests-pure.XXXXXX.log)
echo "tests without the test bed run beside these on $workers workers; their output:" \
     "$pure_log (shown at the end)"
start=$SECONDS
# in a process group of its own (setsid), so that a cancelled run ends all of it: the
# session, its workers and the servers and browsers their tests started
setsid "${run[@]}" -n "$workers" --dist loadfile --no-testbed tests ui-tests >"$pure_log" 2>&1 &
pure=$!
stop_pure() {
  kill -TERM -- "-$pure" 2>/dev/null || return 0
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 -- "-$pure" 2>/dev/null || return 0
    sleep 0.5
  done
  kill -KILL -- "-$pure" 2>/dev/null || true
}
trap stop_pure EXIT  # a cancelled run leaves no half behind
bed_rc=0
"${run[@]}" --testbed-only tests ui-tests || bed_rc=$?
pure_rc=0
wait "$pure" || pure_rc=$?
echo
echo "===== tests without the test bed ====="
cat "$pure_log"
echo
echo "test-bed tests: exit $bed_rc; tests without the test bed: exit $pure_rc;" \
     "both in $((SECONDS - start)) s"
if [ "$bed_rc" -ne 0 ] || [ "$pure_rc" -ne 0 ]; then exit 1; fi
rm -f "$pure_log"
