"""A kept `depth_misleads` placement run's views of one site rebuilt without the test bed, and
the engine's prediction from them under a chosen accounting history: was a misprediction
the plan's, or its calibration's?

The `depth_misleads` background is drawn from the run's seed (`testbed.load.plan`), and the
run's probes are known (one per round on every site: 1 node x 8 CPUs, 60 s asked, the
benchmark's 20 s over the site's speed), so the site's queue can be played out again: jobs
start in the scheduler's order wherever they fit (Grid Engine's urgency, more slots first;
Slurm's submission order, on these sites' whole-node jobs the same as its backfill), each
holding its slots for its true runtime plus a start-up (`--overhead`, the scheduler's
dispatch and the job's shell). Where that gives the recorded queue lengths and probe starts,
the view at each round is the site's, and `placement.place` is run on it with a calibration
made of the accounting a site would hold after earlier runs of the benchmark (`--history`
seeds, each run's load, a job still running at its end cancelled then):

- `load`: their load jobs only (what the engine counts since the user's own engine jobs
  are told apart from other users' work, whichever store sent them);
- `load+probes`: also their probes, as other users' work (the engine before: each run of
  the benchmark starts a fresh store, so the runs before it were not its jobs);
- `borrowed`: no finished jobs of the site's own (a fresh accounting, or only the user's,
  as the test bed's Grid Engine site had in seeds 106 and 107), so the engine borrows the
  other sites' ratios (`calibration.PooledRatios`): their load of the earlier runs and of
  this run up to the round, each other site rebuilt the same way.

Beside it, each probe's start in the engine's own Slurm plan with every job at its true
runtime (`probe_oracle.probe_starts`), for a Slurm site `play` cannot rebuild (alpha: backfill
over jobs that share nodes; there the rebuilt views, and the predictions from them, are not
the site's, as their queue lengths show).

Seed 103, delta (Grid Engine): rebuilt with a 2 s start-up, the queue lengths 4, 6, 28, 32,
38, 36, 46, 44 (recorded 4, 6, 26, 32, 38, 37, 46, 45) and probe starts within 1 s of the
recorded ones from round 4 on; the walltime plan 2,377 s and 478 s in rounds 8 and 9
(recorded 2,377 s and 477 s). Predicted with `load+probes` 68-1,213 s, with `load` 16-41 s;
recorded 23-38 s.

    python -m benchmarks.bed_oracle --run results/placement-depth_misleads-seed103.json \\
        --site delta --history 100,101,102

`--playout` (issue 15) rebuilds the site from the engine's own Slurm play-out instead
(`playout_compare`: the run's probes included, every job at its true runtime), which on
alpha gives the recorded probe starts (seed 110: within 21 s), and sets the engine's
prediction with the earlier probes ahead planned at the load's runtime ratio ("before")
beside the one at their own runtime ("after", `SiteCalibration.own_runtimes`); several
`--run`s are summed up. Over the 89 kept runs (0.5 s start-up, each run's three seeds
before as history): error against the play-out's start 35.4 -> 21.5 s, mean signed -23.4
-> +10.6 s, over 10 s too soon in 436 -> 126 of 890 rounds, the 90% bound covering it
682 -> 850; against the recorded starts, mean signed -34.4 -> -0.9 s.

    python -m benchmarks.bed_oracle --run results/placement-depth_misleads-seed*.json \\
        --site alpha --playout --overhead 0.5
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from diamond_jupyter.model import BadInput

from .common import emit, markdown_table, parser
from .halves import HALVES, half_of
from .queue_ahead import VARIANTS, variant_keywords

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PROBE_CPUS, PROBE_WALLTIME_S = 8, 60.0  # the placement benchmark's probe
RUN_END_S = 25.0 + 10 * 12.0 + 240.0  # warmup, rounds, the last probe's wait: load cancelled
HISTORIES = ("load", "load+probes")  # the site's own accounting; "borrowed": other sites'


@dataclass
class Played:
    """One job of a rebuilt site: when it was submitted and started, on which hosts."""

    name: str
    at_s: float
    slots: int  # per host it runs on, for a one-host job; else the whole job's
    nodes: int
    gpus: int
    runtime_s: float
    walltime_s: float
    probe: bool
    start: float | None = None
    end: float | None = None
    hosts: tuple[tuple[int, int], ...] = ()  # (host, slots there)

    @property
    def total(self) -> int:
        return self.slots * self.nodes


def jobs_of(seed: int, site: str, rounds: int, interval: float, base_s: float,
            duration_s: float, time_scale: float) -> list[Played]:
    """The site's load (from the seed) and the run's probes, in submission order."""
    from diamond_jupyter.testbed import load
    from diamond_jupyter.testbed.clusters import cluster

    speed = cluster(site).speed_factor or 1.0
    out = [Played(j.name, j.at_s, j.cpus_per_node, j.nodes, j.gpus, j.runtime_s,
                  j.walltime_min * 60.0, False)
           for j in load.plan("depth_misleads", seed, duration_s, time_scale) if j.site == site]
    out += [Played(f"probe{k}", 25.0 + k * interval + 0.3, PROBE_CPUS, 1, 0, base_s / speed,
                   PROBE_WALLTIME_S, True) for k in range(rounds)]
    return sorted(out, key=lambda j: j.at_s)


def play(jobs: list[Played], site: str, overhead_s: float) -> None:
    """Start every job where it fits, in the scheduler's order (Grid Engine: more slots
    first, then submission; Slurm: submission), at each submission and end; fills in each
    job's start, end and hosts."""
    from diamond_jupyter.testbed.clusters import cluster

    c = cluster(site)
    free, free_g = [c.cpus] * c.nodes, [c.gpus] * c.nodes
    by_slots = c.scheduler == "sge"
    waiting: list[Played] = []
    running: list[Played] = []
    arrivals = iter(jobs)
    nxt = next(arrivals, None)
    while nxt is not None or running or waiting:
        times = ([nxt.at_s] if nxt is not None else []) + [j.end for j in running if j.end]
        if not times:
            return  # what waits fits nowhere
        t = min(times)
        while nxt is not None and nxt.at_s <= t:
            waiting.append(nxt)
            nxt = next(arrivals, None)
        for j in [j for j in running if j.end is not None and j.end <= t]:
            running.remove(j)
            for h, n in j.hosts:
                free[h] += n
                free_g[h] += j.gpus
        order = sorted(waiting, key=lambda j: (-j.total, j.at_s)) if by_slots else waiting
        for j in list(order):
            hosts = _fit(j, free, free_g, spread=by_slots)
            if hosts is None:
                if not by_slots:
                    break  # Slurm: first come, first served on these whole-node jobs
                continue
            for h, n in hosts:
                free[h] -= n
                free_g[h] -= j.gpus
            j.start, j.end, j.hosts = t, t + j.runtime_s + overhead_s, tuple(hosts)
            waiting.remove(j)
            running.append(j)


def _fit(j: Played, free: list[int], free_g: list[int], spread: bool
         ) -> list[tuple[int, int]] | None:
    if j.nodes == 1 or not spread:  # one host, or each of its nodes alike
        ok = [h for h in range(len(free)) if free[h] >= j.slots and free_g[h] >= j.gpus]
        return [(h, j.slots) for h in ok[:j.nodes]] if len(ok) >= j.nodes else None
    if sum(free) < j.total:  # Grid Engine's mpi PE: its slots over any hosts
        return None
    hosts, left = [], j.total
    for h in range(len(free)):
        if (n := min(free[h], left)) > 0:
            hosts.append((h, n))
            left -= n
    return hosts


def view_at(jobs: list[Played], site: str, t: float) -> tuple[datetime, Any]:
    """The site's view at `t` seconds: its hosts, running jobs (with their hosts) and
    waiting ones in the scheduler's order (a Grid Engine job waiting names no queue)."""
    from diamond_jupyter.model import JobState, JobStatus, Node, Partition, SiteSnapshot
    from diamond_jupyter.testbed.clusters import cluster

    c = cluster(site)
    now = NOW + timedelta(seconds=t)
    used, used_g = [0] * c.nodes, [0] * c.nodes
    part = next((p.name for p in c.partitions if p.default), c.partitions[0].name)
    sge = c.scheduler == "sge"
    statuses = []
    for j in jobs:
        if j.at_s > t:
            continue
        if j.start is not None and j.start <= t < (j.end or math.inf):
            for h, n in j.hosts:
                used[h] += n
                used_g[h] += j.gpus
            statuses.append(JobStatus(
                native_id=j.name, state=JobState.RUNNING, cpus=j.total, gpus=j.gpus,
                nodes=len(j.hosts), walltime_s=j.walltime_s, partition=part,
                started_at=NOW + timedelta(seconds=j.start),
                node_list=",".join(c.node_names[h] for h, _ in j.hosts)))
    waiting = [j for j in jobs if j.at_s <= t and (j.start is None or j.start > t)]
    if sge:
        waiting.sort(key=lambda j: (-j.total, j.at_s))
    statuses += [JobStatus(native_id=j.name, state=JobState.PENDING, cpus=j.total,
                           gpus=j.gpus or None, nodes=None if sge else j.nodes,
                           walltime_s=j.walltime_s, partition=None if sge else part,
                           reason="" if sge else "Resources",
                           submitted_at=NOW + timedelta(seconds=j.at_s)) for j in waiting]
    nodes = [Node(name=n, cpus=c.cpus, gpus=c.gpus, cpus_allocated=used[i],
                  gpus_allocated=used_g[i], state="mixed" if used[i] else "idle",
                  partitions=[p.name for p in c.partitions])
             for i, n in enumerate(c.node_names)]
    parts = [Partition(name=p.name, default=p.default) for p in c.partitions]
    return now, SiteSnapshot(site=site, taken_at=now, nodes=nodes, jobs=statuses,
                             partitions=parts, backfill="none" if sge else None)


def history(seeds: list[int], site: str, which: str, overhead_s: float, **plan: Any) -> list:
    """The accounting's samples after earlier runs of these seeds: each run's load (a job
    running at the run's end cancelled then), and with "load+probes" its probes too."""
    from diamond_jupyter.calibration import RunSample
    from diamond_jupyter.testbed.clusters import cluster

    part = next((p.name for p in cluster(site).partitions if p.default), None)
    out = []
    for s in seeds:
        jobs = jobs_of(s, site, **plan)
        play(jobs, site, overhead_s)
        for j in jobs:
            if j.start is None or j.start >= RUN_END_S or (j.probe and which == "load"):
                continue
            ran = math.ceil(min(j.end or RUN_END_S, RUN_END_S) - j.start)  # whole seconds
            out.append(RunSample(part, j.total, j.walltime_s, ran, 0.0))
    return out


def ended_by(jobs: list[Played], site: str, t: float) -> list:
    """The load jobs of a played site that ended by `t` seconds, as accounting samples."""
    from diamond_jupyter.calibration import RunSample
    from diamond_jupyter.testbed.clusters import cluster

    part = next((p.name for p in cluster(site).partitions if p.default), None)
    return [RunSample(part, j.total, j.walltime_s, math.ceil(j.end - j.start), j.end)
            for j in jobs if not j.probe and j.start is not None and j.end is not None
            and j.end <= t]


def compare(run: dict[str, Any], site: str, seeds: list[int], overhead_s: float
            ) -> dict[str, Any]:
    from diamond_jupyter.calibration import SiteCalibration
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place
    from diamond_jupyter.testbed.clusters import cluster

    if run.get("traces") or run.get("profile") not in (None, "depth_misleads"):
        raise BadInput("a depth_misleads run is needed (real-log runs: benchmarks.probe_oracle)")
    rounds = run.get("per_round") or []
    interval = run.get("interval_s") or 12.0
    plan = dict(rounds=len(rounds), interval=interval, base_s=run.get("probe_base_s") or 20.0,
                duration_s=25.0 + len(rounds) * interval, time_scale=run.get("time_scale") or 150.0)
    jobs = jobs_of(run["seed"], site, **plan)
    play(jobs, site, overhead_s)
    probes = [j for j in jobs if j.probe]
    planned = plan_oracle(jobs, site, [p.at_s - 0.01 for p in probes])
    cals = {h: SiteCalibration(history(seeds, site, h, overhead_s, **plan)) for h in HISTORIES}
    # the run's other sites, each rebuilt from the seeds the same way: what it borrows
    others = sorted({s for r in rounds for s in (r.get("estimate") or {})} - {site})
    before = {o: history(seeds, o, "load", overhead_s, **plan) for o in others}
    now_of = {o: jobs_of(run["seed"], o, **plan) for o in others}
    for o, js in now_of.items():
        play(js, o, overhead_s)
    spec = JobSpec(name="probe", command="sleep 20", resources=Resources(
        nodes=1, tasks=1, cpus_per_task=PROBE_CPUS, walltime_s=PROBE_WALLTIME_S))
    cfg = SiteConfig(name=site, scheduler=cluster(site).scheduler)
    rows = []
    for k, r in enumerate(rounds):
        t = 25.0 + r.get("round", k) * interval
        now, snap = view_at(jobs, site, t)
        row: dict[str, Any] = {
            "round": r.get("round", k), "pending": len(snap.pending),
            "recorded_pending": (r.get("pending") or {}).get(site),
            "rebuilt_s": None if probes[k].start is None else probes[k].start - probes[k].at_s,
            "plan_oracle_s": planned[k],
            "recorded_s": (r.get("started_s") or {}).get(site),
            "predicted_s": ((r.get("estimate") or {}).get(site) or {}).get("start_s"),
            "raw_s": ((r.get("estimate") or {}).get(site) or {}).get("raw_start_s")}
        for h, cal in cals.items():
            v = place(spec, [(cfg, snap)], now=now, calibration={site: cal}).verdict(site)
            row[h] = None if v is None or v.estimated_start is None else \
                (v.estimated_start - now).total_seconds()
            row["rebuilt_raw_s"] = None if v is None or v.raw_start is None else \
                (v.raw_start - now).total_seconds()
        pool = {o: SiteCalibration(before[o] + ended_by(now_of[o], o, t)) for o in others}
        v = place(spec, [(cfg, snap)], now=now,
                  calibration={site: SiteCalibration([]), **pool}).verdict(site)
        row["borrowed"] = None if v is None or v.estimated_start is None else \
            (v.estimated_start - now).total_seconds()
        row["borrowed_bound"] = None if v is None or v.start_bound is None else \
            (v.start_bound - now).total_seconds()
        row["borrowed_samples"] = v.calibration_samples if v is not None else 0
        rows.append(row)
    return {"file_seed": run["seed"], "site": site, "history_seeds": seeds,
            "overhead_s": overhead_s, "rounds": rows}


def plan_oracle(jobs: list[Played], site: str, at_s: list[float]) -> list[float | None]:
    """Each probe's start in the engine's own Slurm plan (`probe_oracle.probe_starts`: from
    an empty site, every job at its true runtime, backfill delaying no job ahead), for sites
    whose order `play` does not rebuild (Slurm's backfill over jobs that share nodes)."""
    from diamond_jupyter.testbed.load import LoadJob

    from .probe_oracle import probe_starts

    load = [LoadJob(at_s=j.at_s, site=site, nodes=j.nodes, cpus_per_node=j.slots,
                    runtime_s=j.runtime_s, walltime_min=max(1, round(j.walltime_s / 60)),
                    name=j.name, gpus=j.gpus) for j in jobs]
    speed_s = next((j.runtime_s for j in jobs if j.probe), PROBE_WALLTIME_S)
    return probe_starts(load, site, at_s, speed_s, True)


def playout_compare(run: dict[str, Any], site: str, seeds: list[int], overhead_s: float
                    ) -> dict[str, Any]:
    """The run's site rebuilt from the engine's own Slurm play-out (`probe_oracle.playout`:
    every job, the run's probes included, at its true runtime plus `overhead_s`, backfill
    delaying no job ahead), for a site whose order `play` does not rebuild (alpha's
    part-node jobs). At each round: the probe's start in the play-out, and the engine's
    prediction (start, 90% bound) on the view rebuilt from it, with the earlier rounds'
    probes planned at their class's ratio ("before") and at their own runtime once one of
    them has ended ("after", `SiteCalibration.own_runtimes`, as the engine learns it from
    its store). The calibration: the load of the runs of `seeds` and of this run ended by
    then."""
    from diamond_jupyter.calibration import RunSample, SiteCalibration
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place
    from diamond_jupyter.testbed.clusters import cluster
    from diamond_jupyter.testbed.load import LoadJob

    from . import probe_oracle as po

    if run.get("traces") or run.get("profile") not in (None, "depth_misleads"):
        raise BadInput("a depth_misleads run is needed (real-log runs: benchmarks.probe_oracle)")
    rounds = run.get("per_round") or []
    interval = run.get("interval_s") or 12.0
    plan = dict(rounds=len(rounds), interval=interval, base_s=run.get("probe_base_s") or 20.0,
                duration_s=25.0 + len(rounds) * interval, time_scale=run.get("time_scale") or 150.0)
    jobs = [LoadJob(at_s=j.at_s, site=site, nodes=j.nodes, cpus_per_node=j.slots,
                    runtime_s=j.runtime_s + overhead_s, name=j.name, gpus=j.gpus,
                    walltime_min=max(1, round(j.walltime_s / 60)))
            for j in jobs_of(run["seed"], site, **plan)]
    starts, nodes_of = po.playout(jobs, site)
    before = history(seeds, site, "load", overhead_s, **plan)
    cfg = SiteConfig(name=site, speed_factor=cluster(site).speed_factor)
    spec = JobSpec(name="probe", command="true", resources=Resources(
        nodes=1, cpus_per_task=PROBE_CPUS, walltime_s=PROBE_WALLTIME_S))
    part = po._default_partition(site)
    probes = [i for i, j in enumerate(jobs) if j.name.startswith("probe")]
    rows = []
    for k, r in enumerate(rounds[:len(probes)]):
        t = jobs[probes[k]].at_s - 0.01
        then = max(0.0, t - 60.0)  # the scheduler's estimates lag a minute (`probe_oracle`)
        view = po.with_estimates(po.rebuilt_view(jobs, site, starts, nodes_of, t),
                                 po.rebuilt_view(jobs, site, starts, nodes_of, then), t - then)
        ended = [i for i, j in enumerate(jobs)
                 if (s := starts.get(i)) is not None and s + j.runtime_s <= t]
        samples = before + [RunSample(part, jobs[i].nodes * jobs[i].cpus_per_node,
                                      jobs[i].walltime_min * 60.0, math.ceil(jobs[i].runtime_s),
                                      (po.NOW + timedelta(seconds=starts[i] + jobs[i].runtime_s
                                                          - t)).timestamp())
                            for i in ended if i not in probes]
        known = any(i in probes for i in ended)
        mine = {str(i): jobs[i].runtime_s for i in probes[:k]} if known else {}
        row: dict[str, Any] = {
            "round": r.get("round", k),
            "playout_s": starts[probes[k]] - jobs[probes[k]].at_s
            if probes[k] in starts else None,
            "recorded_s": (r.get("started_s") or {}).get(site),
            "predicted_s": ((r.get("estimate") or {}).get(site) or {}).get("start_s")}
        variants = [(name, mine, kw) for name, kw in variant_keywords(site).items()]
        for name, own, kw in (("before", {}, {}), ("after", mine, {}), *variants):
            v = place(spec, [(cfg, view)], now=po.NOW, calibration={
                site: SiteCalibration(samples, own_runtimes=own, **kw)}).verdict(site)
            row[name] = None if v is None or v.estimated_start is None else \
                (v.estimated_start - po.NOW).total_seconds()
            row[f"{name}_bound"] = None if v is None or v.start_bound is None else \
                (v.start_bound - po.NOW).total_seconds()
        rows.append(row)
    return {"file_seed": run["seed"], "site": site, "history_seeds": seeds,
            "overhead_s": overhead_s, "playout": True, "rounds": rows}


def playout_summary(runs: list[dict[str, Any]], too_soon_s: float = 10.0) -> dict[str, Any]:
    """Over every round of `runs` (`playout_compare`), "before" and "after": the mean
    absolute and signed error against the play-out's start and the recorded one, the rounds
    predicted more than `too_soon_s` too soon or too late, and the 90% bound's coverage of
    the play-out's start."""
    rows = [r for d in runs for r in d["rounds"]]
    out: dict[str, Any] = {"runs": len(runs), "rounds": len(rows)}
    for name in ("before", "after", *VARIANTS):
        if not all(name in r for r in rows):
            continue
        e = [r[name] - r["playout_s"] for r in rows
             if r[name] is not None and r["playout_s"] is not None]
        er = [r[name] - r["recorded_s"] for r in rows
              if r[name] is not None and r["recorded_s"] is not None]
        b = [r for r in rows if r["playout_s"] is not None and r[f"{name}_bound"] is not None]
        out[name] = {
            "mean_abs_error_s": sum(map(abs, e)) / len(e) if e else None,
            "mean_signed_error_s": sum(e) / len(e) if e else None,
            "too_soon": sum(1 for x in e if x < -too_soon_s),
            "too_late": sum(1 for x in e if x > too_soon_s),
            "bound_covers": sum(1 for r in b if r["playout_s"] <= r[f"{name}_bound"] + 1e-6),
            "recorded_mean_abs_error_s": sum(map(abs, er)) / len(er) if er else None,
            "recorded_mean_signed_error_s": sum(er) / len(er) if er else None}
    return out


def playout_table(runs: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.1f}"
    rows = [(d["file_seed"], r["round"], f(r["playout_s"]), f(r["recorded_s"]),
             f(r["predicted_s"]), f"{f(r['before'])} ({f(r['before_bound'])})",
             f"{f(r['after'])} ({f(r['after_bound'])})") for d in runs for r in d["rounds"]]
    totals = [(name, f(s["mean_abs_error_s"]), f(s["mean_signed_error_s"]), s["too_soon"],
               s["too_late"], f"{s['bound_covers']} of {summary['rounds']}",
               f(s["recorded_mean_abs_error_s"]), f(s["recorded_mean_signed_error_s"]))
              for name in ("before", "after", *VARIANTS) if name in summary
              for s in [summary[name]]]
    return (f"## {runs[0]['site'] if runs else ''} rebuilt from the engine's Slurm play-out "
            f"({summary['runs']} runs, {summary['rounds']} rounds): the probe's start, s\n\n"
            + markdown_table(["model", "mean abs error vs play-out", "mean signed",
                              "over 10 s too soon", "over 10 s too late",
                              "90% bound covers the play-out", "mean abs error vs recorded",
                              "mean signed vs recorded"], totals) + "\n\n"
            + markdown_table(["seed", "round", "play-out start", "recorded start",
                              "recorded prediction", "before: own jobs at the class ratio "
                              "(90% bound)", "after: at their own runtime (90% bound)"], rows))


def table(data: dict[str, Any]) -> str:
    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.1f}"
    rows = [(r["round"], f"{r['pending']} ({r['recorded_pending']})", f(r["rebuilt_s"]),
             f(r["plan_oracle_s"]), f(r["recorded_s"]), f(r["rebuilt_raw_s"]), f(r["raw_s"]),
             f(r["predicted_s"]), f(r["load+probes"]), f(r["load"]),
             f"{f(r.get('borrowed'))} ({f(r.get('borrowed_bound'))}; "
             f"{r.get('borrowed_samples', 0)})") for r in data["rounds"]]
    return (f"## seed {data['file_seed']}, {data['site']} rebuilt ({data['overhead_s']:g} s "
            f"start-up; history: runs of seeds {', '.join(map(str, data['history_seeds']))}): "
            "the probe's start, s\n\n"
            + markdown_table(["round", "waiting (recorded)", "rebuilt start",
                              "engine's Slurm plan, true runtimes", "recorded start",
                              "rebuilt raw", "recorded raw", "recorded prediction",
                              "predicted, load+probes", "predicted, load",
                              "predicted, borrowed (90% bound; jobs of other sites)"], rows))


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--run", required=True, nargs="+",
                   help="a kept depth_misleads placement run (JSON); with --playout, several")
    p.add_argument("--site", required=True, help="the site to rebuild (delta, gamma, ...)")
    p.add_argument("--history", default="",
                   help="seeds of the runs before it, comma-separated (--playout: default "
                        "the three seeds before each run's)")
    p.add_argument("--overhead", type=float, default=2.0,
                   help="seconds each job holds its slots beyond its runtime")
    p.add_argument("--playout", action="store_true",
                   help="rebuild the site from the engine's Slurm play-out (`playout_compare`)")
    args = p.parse_args(argv)
    try:
        seeds = [int(s) for s in args.history.split(",") if s.strip()]
    except ValueError:
        raise SystemExit(f"--history {args.history!r}: seeds as integers, comma-separated "
                         "(e.g. 100,101,102)") from None
    runs = [json.loads(Path(r).read_text()) for r in args.run]
    if args.playout:
        got = [playout_compare(run, args.site,
                               seeds or [run["seed"] - k for k in (3, 2, 1)], args.overhead)
               for run in runs]
        summary = playout_summary(got)
        halves = {h: playout_summary([d for d, run in zip(got, runs, strict=True)
                                      if half_of(run.get("seed")) == h]) for h in HALVES[:2]}
        data = {"summary": summary, "halves": halves, "runs": got}
        name = (f"bed_oracle-seed{runs[0].get('seed')}" if len(runs) == 1
                else f"bed_oracle-{len(runs)}runs") + f"-{args.site}-playout"
        emit(name, args, data, playout_table(got, summary) + "".join(
            f"\n\n{h} half (`halves.half_of`): " + json.dumps(v) for h, v in halves.items()))
        return data
    if len(runs) != 1:
        raise SystemExit(f"--run: one run without --playout (got {len(runs)})")
    data = compare(runs[0], args.site, seeds, args.overhead)
    emit(f"bed_oracle-seed{runs[0].get('seed')}-{args.site}", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
