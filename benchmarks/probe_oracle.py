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

from .common import emit, markdown_table, parser

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"  # beside the checkout
TRACES = TRACES if TRACES.is_dir() else Path("/work/shared/traces")
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PROBE_CPUS = 8  # the placement benchmark's probe: 1 node x 8 CPUs, a 60 s walltime
PROBE_WALLTIME_S = 60.0


def replay_of(run: dict[str, Any], site: str, traces: Path) -> Any:
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
    plans = plan_replays(pairs, scale=mine["scale"], duration_s=span, seed=run["seed"])
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
    from diamond_jupyter.model import JobState, JobStatus, Node, Partition, SiteSnapshot
    from diamond_jupyter.placement_fit import partition_members, site_nodes
    from diamond_jupyter.placement_sim import (
        Demand,
        build_state,
        earliest_start,
        pending_demands,
    )
    from diamond_jupyter.testbed.clusters import cluster

    c = cluster(site)
    default = next((p.name for p in c.partitions if p.default), c.partitions[0].name)
    pending = [JobStatus(native_id=str(i), state=JobState.PENDING, nodes=j.nodes,
                         cpus=j.nodes * j.cpus_per_node, walltime_s=j.walltime_min * 60.0,
                         partition=j.partition or default, reason="Priority",
                         submitted_at=NOW + timedelta(seconds=j.at_s))
               for i, j in enumerate(jobs)]
    nodes = [Node(name=n, cpus=c.cpus, cpus_allocated=0, state="idle",
                  partitions=[p.name for p in c.partitions]) for n in c.node_names]
    snap = SiteSnapshot(site=site, taken_at=NOW, nodes=nodes, jobs=pending,
                        partitions=[Partition(name=p.name, default=p.default)
                                    for p in c.partitions])
    found = site_nodes(snap)
    members = partition_members(snap, found)
    st = build_state(snap, found, members, NOW, {})
    queue = pending_demands(snap, st, members, NOW, {})
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


def compare(run: dict[str, Any], site: str, traces: Path = TRACES,
            warmup_s: float = 25.0) -> dict[str, Any]:
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

    def within(x: float | None) -> bool:
        return x is not None and x <= max_wait
    agree = sum(1 for r in rows if within(r["recorded_s"]) == within(r["oracle_s"]))
    return {"file_seed": run.get("seed"), "site": site, "log": plan.log,
            "max_wait_s": max_wait, "rounds": rows,
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
    return (f"## seed {data['file_seed']}, {data['site']} ({data['log']}): the probe's start, s "
            f"('-': none within {data['max_wait_s']:.0f} s recorded, or never)\n\n"
            + markdown_table(["round", "pending", "recorded", "diamond", "raw", "oracle",
                              "walltimes"], rows)
            + f"\nStarted within the bound or not, as recorded: the oracle in "
            f"{data['oracle_agrees_on_start_within_bound']} of {n} rounds, diamond's "
            f"prediction in {data['predicted_agrees_on_start_within_bound']}.\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--run", required=True, help="a kept real-log placement run (JSON)")
    p.add_argument("--site", required=True, help="the site whose probes to replay")
    p.add_argument("--traces", default=str(TRACES), help="where the logs are")
    p.add_argument("--warmup", type=float, default=25.0,
                   help="seconds of load before the first round (the run's --warmup)")
    args = p.parse_args(argv)
    run = json.loads(Path(args.run).read_text())
    data = compare(run, args.site, Path(args.traces), args.warmup)
    emit(f"probe_oracle-seed{run.get('seed')}-{args.site}", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
