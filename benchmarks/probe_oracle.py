"""A kept real-log placement run's probes replayed in the engine's own Slurm plan, given the
background's true runtimes: is a misprediction the simulation's, or its inputs'?

A real-log run (`benchmarks.placement --trace ...`) replays a window of a center's log on
each site, drawn from its seed; the window is recorded (`traces`), so the replay's jobs (each
one's submission, size, walltime and true runtime) can be drawn again here, without the test
bed. This tool plays them out in `placement_sim`'s Slurm plan (priority order, no job
delays any job ahead; the plan made from walltimes, jobs ending at their true runtimes) with
the round's probe submitted after `warmup + k x interval` seconds, and sets its start beside
the one recorded and the one diamond predicted. Where the plan with true runtimes matches
what the site did and diamond's prediction does not, the simulation is right and its inputs
(the calibrated runtimes, or the scheduler's estimates it follows) are wrong. Rows:

- `oracle`: the plan with every job at its true runtime (what a perfect calibration gives);
- `walltimes`: the plan with every job at its walltime (the scheduler's own plan, from
  the window's start, with every job free to start where the plan puts it).
A run that recorded only each probe's completion has its start taken as the completion less
the probe's runtime (the site's speed factor applied).

`--engine` (session 26) also asks the engine itself (`placement.place`) at each round, on the
view rebuilt from the `oracle` play-out at that moment: the jobs running then (their nodes
and starts) and those waiting, each waiting job carrying the scheduler's start estimate
as the walltime plan of the view `--stale-s` seconds earlier (Slurm's estimates lag the
early ends: the plan of that view, where the job waited then, else of this one), and the
calibration of the site's history and of the window's jobs ended by then. Its start and
90% bound are scored against the play-out's own start, the truth of that world: the views
the run saw were not kept, so this is the engine on views like them, not on them.

Seed 94's beta (HPC2N): recorded 5.6, 8.7-14.7, 117.5 s, then nothing within 240 s; the
oracle 5.4 s, 0 s, then 459-495 s; diamond 43-76 s, then 51-72 s.

    python -m benchmarks.probe_oracle --run results/placement-...-seed94.json --site beta
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from diamond_jupyter.model import BadInput

from .common import emit, markdown_table, mean, parser

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"  # beside the checkout
TRACES = TRACES if TRACES.is_dir() else Path("/work/shared/traces")
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PROBE_CPUS = 8  # the placement benchmark's probe: 1 node x 8 CPUs, a 60 s walltime
PROBE_WALLTIME_S = 60.0
HORIZON_S = 3600.0  # the play-out's start counted at most this far (absolute errors)


def replay_of(run: dict[str, Any], site: str, traces: Path, history: bool = False) -> Any:
    """The run's replay plan of `site`, drawn again from its seed and logs (every site's, in
    the run's order: a log replayed on several sites gives each its own window)."""
    from diamond_jupyter.testbed.clusters import cluster
    from diamond_jupyter.testbed.trace import plan_replays

    recorded = {t["site"]: t for t in run.get("traces") or []}
    if site not in recorded:
        raise BadInput(f"site {site!r} carried no replayed log in this run (replays on: "
                       f"{', '.join(recorded) or 'none'})")
    pairs = []
    for t in run["traces"]:
        found = sorted(traces.glob(f"{t['log']}.swf*"))
        if not found:
            raise BadInput(f"log {t['log']} not found under {traces} (give --traces DIR)")
        pairs.append((found[0], cluster(t["site"])))
    mine = recorded[site]
    span = (mine["window_s"][1] - mine["window_s"][0]) / mine["scale"]
    plans = plan_replays(pairs, scale=mine["scale"], duration_s=span, seed=run["seed"],
                         history_s=(run.get("history_s") or 0.0) if history else 0.0)
    plan = next(p for p in plans if p.site == site)
    if abs(plan.window[0] - mine["window_s"][0]) > 1.0:
        raise BadInput(f"the window drawn again for {site} starts at log second "
                       f"{plan.window[0]:.0f}, the run's at {mine['window_s'][0]:.0f}: "
                       "another version of the replay's drawing made this run")
    return plan


def probe_starts(jobs: list, site: str, at_s: list[float], probe_s: float,
                 true_runtimes: bool) -> list[float | None]:
    """Seconds from each `at_s` to the probe's start in the Slurm plan of `jobs` (the
    replay's `LoadJob`s, submitted at their `at_s` on an empty site), the probe after every
    job submitted before it; None where it never starts."""
    from diamond_jupyter.placement_fit import partition_members
    from diamond_jupyter.placement_sim import Demand, earliest_start

    default = _default_partition(site)
    snap = _empty_site(site, [_pending(i, j, 0.0, site) for i, j in enumerate(jobs)])
    st, queue, found = _plan_inputs(snap)
    members = partition_members(snap, found)
    for d in queue:
        j = jobs[int(d.native_id or 0)]
        d.not_before = j.at_s  # submitted then
        if true_runtimes:
            d.limit, d.duration = d.duration, max(1.0, j.runtime_s)
    every = [i for i, n in enumerate(found) if default in members and n.name in
             members[default]] or list(range(len(found)))
    out: list[float | None] = []
    for t in at_s:
        ahead = [d for d in queue if jobs[int(d.native_id or 0)].at_s <= t]
        probe = Demand(1, PROBE_CPUS, 0, probe_s if true_runtimes else PROBE_WALLTIME_S,
                       every, not_before=t, limit=PROBE_WALLTIME_S)
        start = earliest_start(st, ahead, probe, reservation="plan")
        out.append(None if start is None else max(0.0, start - t))
    return out


def playout(jobs: list, site: str) -> tuple[dict[int, float], dict[int, list[str]]]:
    """The whole window played out in the Slurm plan at true runtimes (each job after its
    submission): each job's start (s after the window's start) and its nodes."""
    from diamond_jupyter.placement_sim import queue_starts

    snap = _empty_site(site, [_pending(i, j, j.at_s, site) for i, j in enumerate(jobs)])
    st, queue, found = _plan_inputs(snap)
    for d in queue:
        j = jobs[int(d.native_id or 0)]
        d.not_before = j.at_s
        d.limit, d.duration = d.duration, max(1.0, j.runtime_s)
    starts = queue_starts(st, queue, "plan")
    return ({int(k): v for k, v in starts.items()},
            {int(d.native_id or 0): sorted({found[n].name for n, _, _ in d.held or ()})
             for d in queue})


def _default_partition(site: str) -> str:
    from diamond_jupyter.testbed.clusters import cluster

    c = cluster(site)
    return next((p.name for p in c.partitions if p.default), c.partitions[0].name)


def _pending(i: int, j: Any, at_s: float, site: str) -> Any:
    """Replay job `j` waiting in a view taken at `at_s` (s after the window's start)."""
    from diamond_jupyter.model import JobState, JobStatus

    return JobStatus(native_id=str(i), name=j.name, state=JobState.PENDING, nodes=j.nodes,
                     cpus=j.nodes * j.cpus_per_node, walltime_s=j.walltime_min * 60.0,
                     partition=j.partition or _default_partition(site), reason="Priority",
                     submitted_at=NOW + timedelta(seconds=j.at_s - at_s))


def _empty_site(site: str, jobs: list, alloc: dict[str, int] | None = None) -> Any:
    from diamond_jupyter.model import Node, Partition, SiteSnapshot
    from diamond_jupyter.testbed.clusters import cluster

    c, alloc = cluster(site), alloc or {}
    nodes = [Node(name=n, cpus=c.cpus, cpus_allocated=min(c.cpus, alloc.get(n, 0)),
                  state="mixed" if alloc.get(n) else "idle",
                  partitions=[p.name for p in c.partitions]) for n in c.node_names]
    return SiteSnapshot(site=site, taken_at=NOW, nodes=nodes, jobs=jobs,
                        partitions=[Partition(name=p.name, default=p.default)
                                    for p in c.partitions])


def _plan_inputs(snap: Any) -> tuple[Any, list, list]:
    """The walltime plan's state and queue of a view (no calibration, no estimates)."""
    from diamond_jupyter.placement_fit import partition_members, site_nodes
    from diamond_jupyter.placement_sim import build_state, pending_demands

    found = site_nodes(snap)
    members = partition_members(snap, found)
    st = build_state(snap, found, members, NOW, {})
    return st, pending_demands(snap, st, members, NOW, {}), found


def rebuilt_view(jobs: list, site: str, starts: dict[int, float],
                 nodes_of: dict[int, list[str]], t: float) -> Any:
    """The site's view at `t` (s after the window's start) in the play-out: the jobs
    running then on their nodes, and those submitted and not yet started."""
    from diamond_jupyter.model import JobState, JobStatus

    alloc: dict[str, int] = {}
    listed = []
    for i, j in enumerate(jobs):
        s = starts.get(i)
        if j.at_s > t or (s is not None and s + max(1.0, j.runtime_s) <= t):
            continue  # not submitted yet, or ended
        if s is None or s > t:
            listed.append(_pending(i, j, t, site))
            continue
        for n in nodes_of.get(i, []):
            alloc[n] = alloc.get(n, 0) + j.cpus_per_node
        listed.append(JobStatus(native_id=str(i), name=j.name, state=JobState.RUNNING,
                                nodes=j.nodes, cpus=j.nodes * j.cpus_per_node,
                                walltime_s=j.walltime_min * 60.0,
                                partition=j.partition or _default_partition(site),
                                node_list=",".join(nodes_of.get(i, [])),
                                submitted_at=NOW + timedelta(seconds=j.at_s - t),
                                started_at=NOW + timedelta(seconds=s - t)))
    return _empty_site(site, listed, alloc)


def with_estimates(view: Any, earlier: Any | None, lag_s: float) -> Any:
    """`view` with each waiting job's start estimate: its start in the walltime plan of
    `earlier` (the view `lag_s` seconds before, where the job waited then; as seen from
    `view`), else of `view` itself."""
    from diamond_jupyter.placement_sim import queue_starts

    def plan(snap: Any) -> dict[str, float]:
        st, queue, _ = _plan_inputs(snap)
        return queue_starts(st, queue, "plan")

    now_plan = plan(view)
    then = {k: v - lag_s for k, v in plan(earlier).items()} if earlier is not None else {}
    listed = [j.model_copy(update={"estimated_start": NOW + timedelta(seconds=at)})
              if j.state.value == "PENDING" and (at := then.get(j.native_id,
                                                               now_plan.get(j.native_id)))
              is not None else j for j in view.jobs]
    return view.model_copy(update={"jobs": listed})


def rebuilt_calibration(plan: Any, jobs: list, starts: dict[int, float], t: float,
                        site: str, **variant: Any) -> Any:
    """The calibration the engine reads at `t`: the site's history (the log's jobs ended
    before the window) and the window's jobs ended by then in the play-out (`variant`:
    SiteCalibration's keywords the benchmarks measure, e.g. change_points=False)."""
    from diamond_jupyter.calibration import RunSample, SiteCalibration

    def at(s: float) -> float:
        return (NOW + timedelta(seconds=s - t)).timestamp()
    default = _default_partition(site)
    samples = [RunSample(h.partition or default, h.cpus, h.walltime_min * 60.0,
                         h.end_s - h.start_s, at(h.end_s)) for h in plan.history]
    for i, j in enumerate(jobs):
        s = starts.get(i)
        if s is not None and s + max(1.0, j.runtime_s) <= t:
            samples.append(RunSample(j.partition or default, j.nodes * j.cpus_per_node,
                                     j.walltime_min * 60.0, max(1.0, j.runtime_s),
                                     at(s + j.runtime_s)))
    return SiteCalibration(samples, **variant)


def engine_starts(run: dict[str, Any], site: str, at_s: list[float], traces: Path,
                  stale_s: float) -> list[tuple[float | None, float | None, float | None]]:
    """The engine's (start, raw start, 90% bound), s, at each of `at_s` on the view rebuilt
    from the play-out (see the module doc)."""
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place
    from diamond_jupyter.testbed.clusters import cluster

    plan = replay_of(run, site, traces, history=True)
    starts, nodes_of = playout(plan.jobs, site)
    cfg = SiteConfig(name=site, speed_factor=cluster(site).speed_factor)
    spec = JobSpec(name="probe", command="true", resources=Resources(
        nodes=1, cpus_per_task=PROBE_CPUS, walltime_s=PROBE_WALLTIME_S))
    out: list[tuple[float | None, float | None, float | None]] = []
    for t in at_s:
        view = rebuilt_view(plan.jobs, site, starts, nodes_of, t)
        then = max(0.0, t - stale_s)  # not before the window's start
        earlier = rebuilt_view(plan.jobs, site, starts, nodes_of, then) if then < t else None
        view = with_estimates(view, earlier, t - then)
        cal = rebuilt_calibration(plan, plan.jobs, starts, t, site)
        v = place(spec, [(cfg, view)], now=NOW, calibration={site: cal}).verdict(site)

        def secs(x: datetime | None) -> float | None:
            return None if x is None else (x - NOW).total_seconds()
        out.append((secs(v.estimated_start) if v else None, secs(v.raw_start) if v else None,
                    secs(v.start_bound) if v else None))
    return out


def compare(run: dict[str, Any], site: str, traces: Path = TRACES,
            warmup_s: float = 25.0, engine: bool = False, stale_s: float = 60.0
            ) -> dict[str, Any]:
    """Per round: the probe's recorded start on `site`, diamond's predicted and raw starts,
    and the plan's with true runtimes (`oracle`) and with walltimes."""
    from diamond_jupyter.testbed.clusters import cluster

    plan = replay_of(run, site, traces)
    rounds = run.get("per_round") or []
    interval = run.get("interval_s") or 12.0
    at = [warmup_s + r.get("round", k) * interval for k, r in enumerate(rounds)]
    probe_s = (run.get("probe_base_s") or 20.0) / (cluster(site).speed_factor or 1.0)
    oracle = probe_starts(plan.jobs, site, at, probe_s, True)
    walls = probe_starts(plan.jobs, site, at, probe_s, False)
    max_wait = run.get("max_wait_s") or 90.0
    mine = engine_starts(run, site, at, traces, stale_s) if engine else None
    rows = []
    for k, r in enumerate(rounds):
        e = (r.get("estimate") or {}).get(site) or {}
        started = (r.get("started_s") or {}).get(site)
        done = (r.get("completion_s") or {}).get(site)
        if started is None and done is not None and site not in (r.get("censored") or ()):
            started = max(0.0, done - probe_s)  # older runs record the probe's end only
        rows.append({"round": r.get("round", k), "pending": (r.get("pending") or {}).get(site),
                     "recorded_s": started, "predicted_s": e.get("start_s"),
                     "raw_s": e.get("raw_start_s"), "oracle_s": oracle[k],
                     "walltimes_s": walls[k]})
        if mine is not None:
            rows[-1] |= dict(zip(("engine_s", "engine_raw_s", "engine_bound_s"), mine[k],
                                 strict=True))

    def within(x: float | None) -> bool:
        return x is not None and x <= max_wait
    agree = sum(1 for r in rows if within(r["recorded_s"]) == within(r["oracle_s"]))
    scored = {}
    if engine:  # the engine on the rebuilt views, against the play-out's own starts
        truth = [r for r in rows if r["oracle_s"] is not None]
        scored = {"stale_s": stale_s, "engine": {
            "agrees_with_oracle_on_start_within_bound": sum(
                1 for r in rows if within(r["engine_s"]) == within(r["oracle_s"])),
            # predicted within the bound, and the play-out started nothing within it
            "too_soon": sum(1 for r in rows if within(r["engine_s"])
                            and not within(r["oracle_s"])),
            "bound_covers_oracle": sum(1 for r in truth if r["engine_bound_s"] is not None
                                       and r["oracle_s"] <= r["engine_bound_s"] + 1e-6),
            "rounds_oracle_started": len(truth),
            "mean_abs_error_s": mean([abs(min(r["engine_s"], HORIZON_S)
                                          - min(r["oracle_s"], HORIZON_S))
                                      for r in truth if r["engine_s"] is not None])}}
    return {"file_seed": run.get("seed"), "site": site, "log": plan.log,
            "max_wait_s": max_wait, "rounds": rows, **scored,
            "oracle_agrees_on_start_within_bound": agree,
            "predicted_agrees_on_start_within_bound": sum(
                1 for r in rows if within(r["recorded_s"]) == within(r["predicted_s"]))}


def table(data: dict[str, Any]) -> str:
    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.1f}"
    rows = [(r["round"], r["pending"] if r["pending"] is not None else "-", f(r["recorded_s"]),
             f(r["predicted_s"]), f(r["raw_s"]), f(r["oracle_s"]), f(r["walltimes_s"]))
            for r in data["rounds"]]
    n = len(data["rounds"])
    head = ["round", "pending", "recorded", "diamond", "raw", "oracle", "walltimes"]
    scored = data.get("engine")
    if scored is not None:
        head += ["engine", "engine raw", "engine 90%"]
        rows = [(*row, f(r["engine_s"]), f(r["engine_raw_s"]), f(r["engine_bound_s"]))
                for row, r in zip(rows, data["rounds"], strict=True)]
    said = "" if scored is None else (
        f"Engine on the views rebuilt from the oracle's play-out (estimates "
        f"{data['stale_s']:g} s stale): started within the bound or not as the play-out "
        f"did in {scored['agrees_with_oracle_on_start_within_bound']} of {n} rounds; "
        f"predicted within it when the play-out started nothing in "
        f"{scored['too_soon']}; its 90% bound at or after the play-out's start in "
        f"{scored['bound_covers_oracle']} of {scored['rounds_oracle_started']}; mean "
        f"|engine - play-out| {scored['mean_abs_error_s'] or 0:.1f} s.\n")
    return (f"## seed {data['file_seed']}, {data['site']} ({data['log']}): the probe's start, s "
            f"('-': none within {data['max_wait_s']:.0f} s recorded, or never)\n\n"
            + markdown_table(head, rows)
            + f"\nStarted within the bound or not, as recorded: the oracle in "
            f"{data['oracle_agrees_on_start_within_bound']} of {n} rounds, diamond's "
            f"prediction in {data['predicted_agrees_on_start_within_bound']}.\n" + said)


ENGINE_COUNTS = ("agrees_with_oracle_on_start_within_bound", "too_soon", "bound_covers_oracle",
                 "rounds_oracle_started")


def totals(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The engine's counts summed over several runs' comparisons, with their rounds and the
    mean of the runs' mean absolute errors."""
    scored = [r["engine"] for r in runs if r.get("engine")]
    return {"runs": len(runs), "rounds": sum(len(r["rounds"]) for r in runs),
            **{k: sum(e[k] for e in scored) for k in ENGINE_COUNTS},
            "mean_of_mean_abs_error_s": mean([e["mean_abs_error_s"] for e in scored
                                              if e["mean_abs_error_s"] is not None])}


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--run", required=True, nargs="+",
                   help="kept real-log placement runs (JSON), one or several")
    p.add_argument("--site", required=True, help="the site whose probes to replay")
    p.add_argument("--traces", default=str(TRACES), help="where the logs are")
    p.add_argument("--warmup", type=float, default=25.0,
                   help="seconds of load before the first round (the run's --warmup)")
    p.add_argument("--engine", action="store_true",
                   help="also the engine's start on views rebuilt from the play-out")
    p.add_argument("--stale-s", type=float, default=60.0,
                   help="with --engine: how old the scheduler's estimates in a view are")
    args = p.parse_args(argv)
    runs = [json.loads(Path(f).read_text()) for f in args.run]
    got, skipped = [], []
    for f, run in zip(args.run, runs, strict=True):
        try:
            got.append(compare(run, args.site, Path(args.traces), args.warmup, args.engine,
                               args.stale_s))
        except BadInput as e:  # no log on the site, or drawn by another version
            if len(runs) == 1:
                raise
            skipped.append({"run": Path(f).name, "why": str(e)})
    if not got:
        raise BadInput(f"none of the {len(runs)} runs replayed a log on {args.site} that "
                       "can be drawn again")
    if len(args.run) == 1:
        emit(f"probe_oracle-seed{got[0]['file_seed']}-{args.site}", args, got[0], table(got[0]))
        return got[0]
    data = {"site": args.site, "stale_s": args.stale_s, "totals": totals(got), "runs": got,
            "skipped": skipped}
    t = data["totals"]
    md = "".join(table(r) + "\n" for r in got) + (
        f"## {t['runs']} runs, {t['rounds']} rounds\n\nEngine on the rebuilt views: within "
        f"the bound or not as the play-out in {t['agrees_with_oracle_on_start_within_bound']}"
        f"; too soon in {t['too_soon']}; bound covers the play-out's start in "
        f"{t['bound_covers_oracle']} of {t['rounds_oracle_started']}; mean of the runs' mean "
        f"|engine - play-out| {t['mean_of_mean_abs_error_s'] or 0:.1f} s.\n"
        if args.engine else "") + "".join(f"\nskipped {x['run']}: {x['why']}" for x in skipped)
    emit(f"probe_oracle-{args.site}", args, data, md)
    return data


if __name__ == "__main__":
    main()
