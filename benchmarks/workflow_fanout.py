"""How long a wide fan-out takes to start: every step submitted and recorded with its job
(issue 17; no test bed). The same workflow run by two trees of the package, in turns, each
run in a fresh process on a new store: "before" (the tree of a git ref, `--before`, extracted
with `git archive` into a temporary directory) and "now" (this checkout).

A real engine and store (`Federation.run_workflow`) over one Slurm site whose transport is
a fake scheduler (`benchmarks/fanout_run.py`): `sbatch` answers the next job id and the job
directory's upload is taken without running a command, both in-process, so what is measured
is the engine and its store (a site's own latency adds the same to both). The workflow:
`top`, then `--steps` steps needing it (queued ahead behind it by afterok). Reported per
tree: the median and mean seconds, and the CPU seconds of the run's process meanwhile (what
the machine pays; steadier than wall time on a shared machine); the before/now ratios of
the medians and of the means.

    python -m benchmarks.workflow_fanout [--steps 1000] [--repeats 2] [--before REF]
        [--json] [--out DIR]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .cli_start import extract
from .common import ROOT, emit, markdown_table, mean, median, parser, ratio

TREES = ("before", "now")
# the engine before issue 17's submit speed-up (session 42): main as it was then
BEFORE = "8e4553e002974c44d7314f0b7026e2dc213dba93"
RUNNER = Path(__file__).with_name("fanout_run.py")


def one_run(tree: Path, steps: int, work: Path) -> dict[str, Any]:
    """One run of `fanout_run.py` in a fresh process whose package is `tree`'s."""
    work.mkdir(parents=True)
    code = f"import runpy; runpy.run_path({str(RUNNER)!r}, run_name='__main__')"
    done = subprocess.run([sys.executable, "-c", code, str(steps), str(work)],
                          capture_output=True, text=True, cwd=work, timeout=3600,
                          env={**_env(), "PYTHONPATH": str(tree)})
    if done.returncode != 0:
        raise SystemExit(f"the fan-out run from {tree} exited {done.returncode}: "
                         f"{done.stderr.strip()[-600:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("DIAMOND_")}


def run(steps: int, repeats: int, before: str) -> dict[str, Any]:
    runs = []
    with tempfile.TemporaryDirectory(prefix="fanout-") as tmp:
        trees = {"before": extract(before, Path(tmp) / "before-tree"), "now": ROOT}
        for r in range(repeats):
            order = TREES if r % 2 == 0 else TREES[::-1]  # a busy spell hits both alike
            for name in order:
                out = one_run(trees[name], steps, Path(tmp) / f"{r}-{name}")
                runs.append({"repeat": r, "tree": name, **out})

    def of(name: str, key: str) -> list[float]:
        return [x[key] for x in runs if x["tree"] == name]
    med = {t: median(of(t, "seconds")) for t in TREES}
    avg = {t: mean(of(t, "seconds")) for t in TREES}
    cpu = {t: median(of(t, "cpu_s")) for t in TREES}
    return {"steps": steps + 1, "repeats": repeats, "before": before, "now": "this checkout",
            "runs": runs, "median_s": med, "mean_s": avg, "cpu_median_s": cpu,
            "ratio_median_before_over_now": ratio(med["before"], med["now"]),
            "ratio_mean_before_over_now": ratio(avg["before"], avg["now"]),
            "ratio_cpu_before_over_now": ratio(cpu["before"], cpu["now"])}


def markdown(r: dict[str, Any]) -> str:
    rows = [(x["repeat"], x["tree"], x["steps"], x["seconds"], x["ms_per_step"], x["cpu_s"])
            for x in r["runs"]]

    def said(key: str) -> str:
        return f"{r[key]:.2f}x" if r[key] else "no ratio"
    return ("## workflow fan-out: seconds until every step is submitted and recorded\n\n"
            f"before = `{r['before'][:12]}`, now = this checkout\n\n"
            + markdown_table(("repeat", "tree", "steps", "seconds", "ms a step",
                              "CPU s"), rows)
            + f"\nMedian: before {r['median_s']['before']:.2f} s, now "
              f"{r['median_s']['now']:.2f} s: {said('ratio_median_before_over_now')}. "
              f"Mean: before {r['mean_s']['before']:.2f} s, now {r['mean_s']['now']:.2f} s: "
              f"{said('ratio_mean_before_over_now')}. CPU (medians): "
              f"{said('ratio_cpu_before_over_now')}.\n")


def plot(r: dict[str, Any]):
    def draw(ax: Any) -> None:
        for name, style in zip(TREES, ("o", "s"), strict=True):
            xs = [x["repeat"] for x in r["runs"] if x["tree"] == name]
            ax.plot(xs, [x["seconds"] for x in r["runs"] if x["tree"] == name], style,
                    label=f"{name}: wall s")
            ax.plot(xs, [x["cpu_s"] for x in r["runs"] if x["tree"] == name], style,
                    fillstyle="none", label=f"{name}: CPU s")
        ax.set_xlabel("repeat")
        ax.set_ylabel("seconds until every step is submitted")
        ax.set_title(f"{r['steps']}-step fan-out's start: before / now "
                     f"{r['ratio_median_before_over_now'] or 0:.2f}x (medians)")
        ax.set_ylim(bottom=0)
        ax.legend()
    return draw


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=1000, help="steps needing the top one")
    p.add_argument("--repeats", type=int, default=2, help="runs of each tree")
    p.add_argument("--before", default=BEFORE, help="the git ref of the tree to compare with")
    args = p.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        p.error(f"--steps and --repeats must be at least 1 (got {args.steps}, "
                f"{args.repeats})")
    r = run(args.steps, args.repeats, args.before)
    if not args.json:  # the table is printed below; the JSON first
        print(json.dumps(r, indent=2))
    emit("workflow_fanout", args, r, markdown(r), plot(r))
    return r


if __name__ == "__main__":
    main()
