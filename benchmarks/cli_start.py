"""How long the `diamond` command line takes to start, before and after a change.

Each command (`diamond --help`, `diamond place --help`, `diamond jobs --json` on an empty
store of a one-site sites file) is started N times in a fresh Python process, alternating
between two trees of the package: this checkout ("after") and the tree of a git ref
("before", `--before`, default `wt-lead`, extracted with `git archive` into a temporary
directory: no worktree, no checkout changed). Reported per command and tree: the median and
mean CPU time (user + system, of the child: what the machine pays, and steadier than wall
time on a shared machine) and wall time, and the before/after ratio of the medians.

    python -m benchmarks.cli_start [--runs 10] [--before wt-lead]

Python is run as the environment runs it: with $PYTHONDONTWRITEBYTECODE set (as here) every
start also compiles the package's own sources, which lazy imports spare as well.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from .common import ROOT, emit, markdown_table, mean, median, parser, ratio

COMMANDS = {
    "--help": ["--help"],
    "place --help": ["place", "--help"],
    "jobs --json (empty store)": ["jobs", "--json"],
}


def extract(ref: str, into: Path) -> Path:
    """The package as it is at `ref`, written under `into` (the directory to put first on
    PYTHONPATH)."""
    into.mkdir(parents=True)
    archive = into / "tree.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref,
                        "diamond_jupyter"], stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()
    return into


def one_start(tree: Path, argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one `python -m diamond_jupyter.cli ARGV` from `tree`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *argv],
                          capture_output=True, text=True, cwd=env["HOME"],
                          env={**env, "PYTHONPATH": str(tree)}, timeout=300)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"`diamond {' '.join(argv)}` from {tree} exited {done.returncode}: "
                         f"{done.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def bench(runs: int, before_ref: str) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bench-cli-start-"))
    trees = {"before": extract(before_ref, tmp / "before"), "after": ROOT}
    home = tmp / "home"
    home.mkdir()
    sites = home / "sites.yaml"
    sites.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n"
                     "    transport: {kind: local}\n")
    outside = {k: v for k, v in os.environ.items() if not k.startswith("DIAMOND_")}
    env = {**outside, "HOME": str(home), "DIAMOND_CONFIG": str(sites),
           "DIAMOND_DATA_DIR": str(home / "data"), "DIAMOND_HANDOVER": "0"}
    got: dict[str, dict[str, dict[str, list[float]]]] = {
        c: {t: {"cpu": [], "wall": []} for t in trees} for c in COMMANDS}
    for _ in range(runs):
        for command, argv in COMMANDS.items():
            for name, tree in trees.items():  # alternated: a busy spell hits both alike
                cpu, wall = one_start(tree, argv, env)
                got[command][name]["cpu"].append(cpu)
                got[command][name]["wall"].append(wall)
    out: dict = {"runs": runs, "before": before_ref, "after": "this checkout",
                 "dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
                 "commands": {}}
    for command, by_tree in got.items():
        row = {name: {"cpu_median_s": median(v["cpu"]), "cpu_mean_s": mean(v["cpu"]),
                      "wall_median_s": median(v["wall"]), "wall_mean_s": mean(v["wall"]),
                      "cpu_s": v["cpu"]}
               for name, v in by_tree.items()}
        row["cpu_ratio_before_after"] = ratio(row["before"]["cpu_median_s"],
                                              row["after"]["cpu_median_s"])
        row["wall_ratio_before_after"] = ratio(row["before"]["wall_median_s"],
                                               row["after"]["wall_median_s"])
        out["commands"][command] = row
    return out


def table(data: dict) -> str:
    rows = []
    for command, row in data["commands"].items():
        b, a = row["before"], row["after"]
        rows.append([command, b["cpu_median_s"], a["cpu_median_s"], b["cpu_mean_s"],
                     a["cpu_mean_s"], row["cpu_ratio_before_after"], b["wall_median_s"],
                     a["wall_median_s"]])
    return (f"`diamond` start, {data['runs']} runs each, before = `{data['before']}`, "
            f"after = this checkout (PYTHONDONTWRITEBYTECODE "
            f"{'set' if data['dont_write_bytecode'] else 'unset'})\n\n"
            + markdown_table(["command", "CPU before median s", "CPU after median s",
                              "CPU before mean s", "CPU after mean s",
                              "before/after (CPU medians)", "wall before median s",
                              "wall after median s"], rows))


def plot(data: dict):
    def draw(ax) -> None:
        names = list(data["commands"])
        xs = range(len(names))
        for shift, tree in ((-0.2, "before"), (0.2, "after")):
            ax.bar([x + shift for x in xs],
                   [data["commands"][c][tree]["cpu_median_s"] for c in names], width=0.4,
                   label=f"{tree} ({data['before'] if tree == 'before' else 'this checkout'})")
        ax.set_xticks(list(xs), names)
        ax.set_ylabel("CPU seconds per start (median)")
        ax.set_title(f"diamond CLI start, {data['runs']} runs each")
        ax.legend()
    return draw


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10, help="starts per command and tree")
    p.add_argument("--before", default="wt-lead", help="git ref of the tree to compare with")
    args = p.parse_args()
    data = bench(args.runs, args.before)
    emit("cli_start", args, data, table(data), plot(data))


if __name__ == "__main__":
    main()
