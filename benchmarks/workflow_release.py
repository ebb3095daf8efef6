"""What a queued-ahead GPU step's wait after its upstream ended consisted of, per recorded
matched workflow run, and what an engine could shorten of it (issue 17; offline: reads the
JSON files `python -m benchmarks.workflow` wrote and replays their seeded background).

`workflow_parts` calls "queue" what a step waited past the scheduler's cycle after its
release. Here train's gap (prep's end line to train's start line), in the queue-ahead runs,
is cut into:
- diamond, before the release: prep's end to the engine's "done" (detect), "done" to the copy
  beginning (engine), the copy of its inputs (transfer), the copy's end to the gate cancelled
  (release: the command's own latency is in it). The store's phase times (`steps.NAME.phases`).
- running: from the release until a GPU of gamma's would have been free to train had it been
  first in line (jobs running at the release had to end);
- ahead: past that, until the GPUs went round to train behind the jobs Slurm put ahead of it;
- scheduler: the rest, the observed start past the replay's (the main loop or the backfill
  pass that starts it, each job's start and end overhead, and the replay's error).
`running` and `ahead` come from a replay of gamma's GPU stream: the background is decided up
front from the seed (`testbed.load.plan`, `gpu_queue`: one-GPU jobs, four GPUs), started
`--warmup-s` before the workflow; each GPU goes, when it frees, to the first eligible job in
Slurm's order. The test bed's slurm.conf sets no PriorityType, and Slurm 22.05's default is
priority/basic: FIFO by submission (the slurm.conf man page). A gated step (behind a held
gate by afterany) keeps its submission's place; it becomes eligible when the gate is
cancelled. A held step (`scontrol hold` sets its priority to 0) is queued anew on release.
The same replay of the after-upstream runs' trains (no gate, eligible from their submission)
is the check of the replay: its error is given per seed.

What each change an engine could make would have done, each replayed on the run's own
background: the run's makespan moved by as much as the replay moves train's start:
- `at_arrival`: the gate cancelled the moment the copy's last byte landed (no release part);
- `at_upstream_end`: eligible at prep's end (nothing of diamond's between: as if the data
  were there when prep ended);
- `queued_at_start`: train in line from the workflow's start (0 s: before any job submitted
  after it; the engine queued it 0.2-7 s in, after placing and submitting prep);
- `queued_before_upstream`: what the engine does since issue 17: train (gated on prep alone)
  is estimated and submitted before prep is, so it is in line after its own part of the
  engine's first submits (train's `submitted` less prep's), and prep, and with it train's
  release, later by as much (the time before prep's submit returned is taken as prep's own
  estimate and submit: the store does not say when each began);
- `first_in_line`: train ahead of every other job (what `scontrol top` gives a user where the
  site enables `enable_user_top`, and only among the user's own jobs; not by default);
- `held`: held and released instead of gated (the engine's way without gates);
- `now`: the engine since 6fe4151: `queued_before_upstream`, and the queued-ahead `auto`
  step's move check beside its copy rather than before it (the run ends earlier by what
  `workflow_parts.recheck_beside_copy` takes off analyse's path; analyse's own queue after
  its release taken as it was).
Per seed, medians over rounds: the ratio after-upstream / queue-ahead as measured and as each
change would have made it. Trace seeds (a log replayed on gamma) are not replayed here.

    python -m benchmarks.workflow_release [FILE.json ...] [--json] [--out DIR] [--tag T]
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import markdown_table, median, ratio
from .workflow_parts import TARGET, recheck_beside_copy, recorded_runs_main, run_parts

GPU_SITE = "gamma"
FIRST = float("-inf")  # a queue key ahead of every job's
CHANGES = ("at_arrival", "at_upstream_end", "queued_at_start", "queued_before_upstream",
           "first_in_line", "held", "now")


@dataclass(frozen=True)
class GpuJob:
    """One job of a replay: eligible from `eligible_s`, ordered by `key` (earlier first),
    holding a GPU for `runtime_s` once started."""

    name: str
    eligible_s: float
    key: float
    runtime_s: float


def replay_starts(jobs: Sequence[GpuJob], gpus: int) -> dict[str, float]:
    """When each job starts on `gpus` one-GPU slots, each slot going, when it frees, to the
    eligible job first in order (FIFO by `key`, Slurm's priority/basic): the jobs' start
    times by name."""
    arrivals = sorted(jobs, key=lambda j: j.eligible_s)
    ends: list[float] = []  # the running jobs' ends (a heap)
    waiting: list[tuple[float, int, GpuJob]] = []  # eligible, not started (a heap by key)
    starts: dict[str, float] = {}
    i, now = 0, float("-inf")
    while i < len(arrivals) or waiting:
        while i < len(arrivals) and arrivals[i].eligible_s <= now:
            heapq.heappush(waiting, (arrivals[i].key, i, arrivals[i]))
            i += 1
        while ends and ends[0] <= now:
            heapq.heappop(ends)
        while waiting and len(ends) < gpus:
            _, _, job = heapq.heappop(waiting)
            starts[job.name] = now
            heapq.heappush(ends, now + job.runtime_s)
        # the next moment something changes: a job becomes eligible, or a GPU frees
        now = min(arrivals[i].eligible_s if i < len(arrivals) else float("inf"),
                  ends[0] if waiting and ends else float("inf"))
    return starts


def background(params: dict[str, Any], rnd: int) -> list[GpuJob] | None:
    """Round `rnd`'s GPU jobs on gamma, in the workflow's clock (s after its start), as
    `benchmarks.workflow` planned them; None for a log replayed there (not replayed here)."""
    from diamond_jupyter.testbed import load

    if params.get("trace") or not params.get("load", True):
        return None
    plan = load.plan(params["profile"], params["seed"] * 1000 + rnd,
                     params["warmup_s"] + params["round_s"], 60.0)
    return [GpuJob(j.name, j.at_s - params["warmup_s"], j.at_s - params["warmup_s"],
                   j.runtime_s) for j in plan if j.site == GPU_SITE and j.gpus]


def gpus() -> int:
    from diamond_jupyter.testbed.clusters import cluster

    c = cluster(GPU_SITE)
    return c.nodes * c.gpus


def train_start(bg: list[GpuJob], eligible_s: float, key: float, runtime_s: float) -> float:
    return replay_starts([*bg, GpuJob("train", eligible_s, key, runtime_s)], gpus())["train"]


def gated_parts(run: dict[str, Any], bg: list[GpuJob]) -> dict[str, Any] | None:
    """A queue-ahead (or held-release) run's train gap in parts, and train's start under each
    of CHANGES (None where the run lacks the times, or train was not gated on gamma)."""
    prep, train = (run.get("steps") or {}).get("prep"), (run.get("steps") or {}).get("train")
    if not prep or not train or train.get("site") != GPU_SITE or None in (
            prep.get("ended"), train.get("started"), train.get("ended")):
        return None
    ph, done = train.get("phases") or {}, (prep.get("phases") or {}).get("done")
    released = ph.get("released")
    if released is None or train["submitted"] >= prep["ended"]:
        return None
    ended, started, runtime = prep["ended"], train["started"], train["ended"] - train["started"]
    held = run.get("mode") == "held_release"
    key = released if held else train["submitted"]
    marks = [ended, done, ph.get("moving"), ph.get("ready"), released]
    marks = [m if m is not None else marks[k - 1] for k, m in enumerate(marks)]
    for k in range(1, len(marks)):
        marks[k] = max(marks[k], marks[k - 1])
    detect, engine, transfer, release = (marks[k + 1] - marks[k] for k in range(4))
    top = train_start(bg, released, FIRST, runtime)
    in_line = train_start(bg, released, key, runtime)
    scheduler = started - in_line
    lead = max(0.0, train["submitted"] - (prep.get("submitted") or 0.0))  # train's own part
    parts = {"detect": detect, "engine": engine, "transfer": transfer, "release": release,
             "running": top - released, "ahead": in_line - top, "scheduler": scheduler}
    moved = {"at_arrival": train_start(bg, marks[3], key, runtime),
             "at_upstream_end": train_start(bg, ended, key, runtime),
             "queued_at_start": train_start(bg, released, 0.0, runtime),
             "queued_before_upstream": train_start(bg, released + lead, lead, runtime),
             "first_in_line": top,
             "held": train_start(bg, released, released, runtime)}
    whole = run_parts(run)
    check_off_path = 0.0 if whole is None else \
        whole["makespan_s"] - recheck_beside_copy(run, whole)
    moved["now"] = moved["queued_before_upstream"] - check_off_path
    return {"round": run.get("round"), "mode": run.get("mode"),
            "makespan_s": run.get("makespan_s"), "gap_s": started - ended, "parts": parts,
            "start_moved_s": {c: t - in_line for c, t in moved.items()}}


def replay_error(run: dict[str, Any], bg: list[GpuJob]) -> float | None:
    """An after-upstream run's train: the observed start less the replay's (no gate: eligible
    and in line from its submission)."""
    train = (run.get("steps") or {}).get("train")
    if not train or train.get("site") != GPU_SITE or None in (
            train.get("submitted"), train.get("started"), train.get("ended")):
        return None
    t = train_start(bg, train["submitted"], train["submitted"],
                    train["ended"] - train["started"])
    return train["started"] - t


def analyse(files: Sequence[Path]) -> dict[str, Any]:
    seeds = []
    for f in files:
        data = json.loads(f.read_text())
        params = data.get("params") or {}
        runs, errors = [], []
        for run in data.get("runs") or []:
            bg = background(params, run.get("round", 0))
            if bg is None:
                break
            if run.get("mode") in ("queue_ahead", "held_release"):
                p = gated_parts(run, bg)
                runs += [p] if p is not None else []
            elif run.get("mode") == "after_upstream":
                e = replay_error(run, bg)
                errors += [e] if e is not None else []
        if not runs:
            continue
        au = median([r["makespan_s"] for r in data["runs"] if r.get("mode") == "after_upstream"
                     and r.get("makespan_s")])
        qa = [r for r in runs if r["mode"] == "queue_ahead"]
        qa_all = median([r["makespan_s"] for r in data["runs"]
                         if r.get("mode") == "queue_ahead" and r.get("makespan_s")])
        seeds.append({
            "file": f.name, "seed": data.get("seed"), "rounds": len(qa),
            "after_upstream_s": au, "queue_ahead_s": qa_all, "ratio": ratio(au, qa_all),
            "parts_s": {k: median([r["parts"][k] for r in qa]) for k in qa[0]["parts"]}
            if qa else {},
            "ratio_if": {c: ratio(au, median([r["makespan_s"] + r["start_moved_s"][c]
                                              for r in qa if r["makespan_s"]]))
                         for c in CHANGES},
            "held_release_s": median([r["makespan_s"] for r in data["runs"]
                                      if r.get("mode") == "held_release"
                                      and r.get("makespan_s")]),
            "replay_error_s": {"n": len(errors), "median": median(errors),
                               "median_abs": median([abs(e) for e in errors])},
            "runs": runs})
    seeds.sort(key=lambda s: s["seed"] or 0)
    return {"seeds": seeds, "target": TARGET}


def markdown(r: dict[str, Any]) -> str:
    def f(x: float | None, nd: int = 1) -> str:
        return "-" if x is None else f"{x:.{nd}f}"
    parts = ("detect", "engine", "transfer", "release", "running", "ahead", "scheduler")
    rows = [(s["seed"], s["rounds"], *(f(s["parts_s"].get(k)) for k in parts),
             f(s["replay_error_s"]["median"]), f(s["ratio"], 2),
             *(f(s["ratio_if"][c], 2) for c in CHANGES)) for s in r["seeds"]]
    out = ("## workflow: train's wait after prep ended, queue-ahead runs (gpu_queue seeds)\n\n"
           "Medians over each seed's queue-ahead rounds, s. running / ahead: a replay of "
           "gamma's seeded GPU stream (FIFO, Slurm's priority/basic); scheduler: the observed "
           "start past the replay's; replay error: after-upstream trains, observed less "
           f"replayed start. Ratios: after-upstream / queue-ahead (target {TARGET}), measured "
           "and with each change (module doc).\n\n"
           + markdown_table(["seed", "rounds", *parts, "replay error", "ratio",
                             *(f"ratio if {c}" for c in CHANGES)], rows))
    per_run = [(s["seed"], p["round"], f(p["gap_s"]),
                *(f(p["parts"][k]) for k in parts), f(p["makespan_s"]))
               for s in r["seeds"] for p in s["runs"] if p["mode"] == "queue_ahead"]
    return out + ("\n### Every queue-ahead round\n\n" + markdown_table(
        ["seed", "round", "gap", *parts, "makespan"], per_run))


def main(argv: list[str] | None = None) -> dict:
    return recorded_runs_main("workflow_release", __doc__.splitlines()[0], analyse, markdown, argv)


if __name__ == "__main__":
    main()
