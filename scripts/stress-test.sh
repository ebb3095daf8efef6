#!/usr/bin/env bash
# The whole suite (./scripts/test.sh) N times in a row with `stress-ng --cpu 2` keeping two
# cores busy beside it, as on a shared login node or a busy CI runner.
#   ./scripts/stress-test.sh [-n N] [ARGS passed to ./scripts/test.sh, i.e. to pytest]
# Default N: 3 (or $STRESS_RUNS). Prints one line per run and exits 0 only if every run passed.
# stress-ng comes from Debian; it is installed when missing. Each run's log is kept.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${STRESS_RUNS:-3}
if [ "${1:-}" = "-n" ]; then
  runs=${2:?"-n needs a number of runs"}
  shift 2
fi
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "stress-test: -n must be a positive number, got '$runs'" >&2; exit 2; }

if ! command -v stress-ng >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends stress-ng
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends stress-ng
  fi
  command -v stress-ng >/dev/null || {
    echo "stress-test: stress-ng is missing and cannot be installed here; run: apt-get install stress-ng" >&2
    exit 2
  }
fi

stress_pid=""
stop_stress() {
  if [ -n "$stress_pid" ]; then
    kill -TERM "$stress_pid" 2>/dev/null  # stress-ng stops its workers on SIGTERM
    wait "$stress_pid" 2>/dev/null
    stress_pid=""
  fi
}
trap stop_stress EXIT
trap 'stop_stress; exit 130' INT TERM

logs=$(mktemp -d -t diamond-stress.XXXXXX)
stress-ng --cpu 2 --quiet &  # runs until stopped
stress_pid=$!

passed=0
for i in $(seq 1 "$runs"); do
  log="$logs/run-$i.log"
  t0=$(date +%s)
  ./scripts/test.sh "$@" >"$log" 2>&1
  rc=$?
  secs=$(($(date +%s) - t0))
  kill -0 "$stress_pid" 2>/dev/null || { echo "stress-test: stress-ng stopped during run $i" >&2; exit 1; }
  result=$(grep -E "[0-9]+ (passed|failed|error)" "$log" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//')
  if [ "$rc" = 0 ]; then verdict=PASS; passed=$((passed + 1)); else verdict="FAIL (exit $rc)"; fi
  echo "run $i/$runs: $verdict in ${secs}s: ${result:-no pytest summary} ($log)"
done
echo "stress-test: $passed/$runs runs passed beside stress-ng --cpu 2"
[ "$passed" = "$runs" ]
