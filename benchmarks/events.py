"""Event latency and scheduler load: N tracked jobs across the test bed's sites.

Latency: from a job's actual end (the `ended_at` its own wrapper recorded) to its terminal
`job.state` event reaching a `Federation.subscribe` callback. Load: scheduler commands per
site per minute (`Site.scheduler_commands`, submits excluded) over a steady-state window
with the default safety-net interval, while tracked jobs are in flight (one long "sentinel"
job per site spans the window, so the safety net never goes idle).
"""

from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
import time
from pathlib import Path

from .common import (
    config_path,
    emit,
    markdown_table,
    mean,
    median,
    parser,
    pct,
    primary_sites,
)

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}


async def bench(config: str, n: int, seed: int, max_sleep: float, window: float,
                concurrency: int, sentinel_extra: float = 15.0) -> dict:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="bench-events-"))
    fed = Federation(config, store=Store(tmp / "store.sqlite"),  # default safety-net interval
                     allowed_sites=primary_sites(config))
    await fed.start()
    sites = list(fed.sites)
    weights = [sum(n.cpus for n in (await fed.snapshot(s)).nodes) or 1 for s in sites]
    arrived: dict[str, tuple[float, str, str]] = {}  # job id -> (time, state, source)
    all_done = asyncio.Event()
    expected: set[str] = set()

    def on_event(ev) -> None:
        if ev.kind == "job.state" and ev.data.get("state") in TERMINAL and ev.job_id:
            arrived.setdefault(ev.job_id, (time.time(), ev.data["state"],
                                           ev.data.get("source", "?")))
            if expected and expected <= arrived.keys():
                all_done.set()
    fed.subscribe(on_event)
    rng = random.Random(seed)
    plan = [(rng.choices(sites, weights)[0], round(rng.uniform(0.5, max_sleep), 2))
            for _ in range(n)]
    plan += [(s, window + sentinel_extra) for s in sites]  # sentinels span the steady-state window
    sem = asyncio.Semaphore(concurrency)
    ids: list[str] = []

    async def one(site: str, secs: float) -> None:
        spec = JobSpec(command=f"sleep {secs}", name="bench-events",
                       resources=Resources(cpus_per_task=1, walltime_s=600))
        async with sem:
            job = await fed.submit(spec, site)
        ids.append(job.id)
    t0 = time.monotonic()
    try:
        await asyncio.gather(*(one(s, d) for s, d in plan))
        submit_s = time.monotonic() - t0
        expected.update(ids)
        await asyncio.sleep(5.0)  # past the first (start-up) safety-net poll
        before = {s: fed.sites[s].scheduler_commands for s in sites}
        w0 = time.monotonic()
        await asyncio.sleep(window)
        w1 = time.monotonic()
        during = {s: fed.sites[s].scheduler_commands - before[s] for s in sites}
        if not expected <= arrived.keys():
            await asyncio.wait_for(all_done.wait(), timeout=max(120.0, n * 0.3))
    finally:
        await fed.close()
    lat, sources, states = [], {}, {}
    for jid in ids:
        job = fed.store.get_job(jid)
        at, state, source = arrived[jid]
        if job.ended_at is not None:
            lat.append(max(0.0, at - job.ended_at.timestamp()))
        sources[source] = sources.get(source, 0) + 1
        states[state] = states.get(state, 0) + 1
    shutil.rmtree(tmp, ignore_errors=True)
    per_min = {s: during[s] / ((w1 - w0) / 60) for s in sites}
    return {
        "jobs": n, "sentinels": len(sites), "seed": seed,
        "p50_s": pct(lat, 50), "p95_s": pct(lat, 95), "max_s": max(lat) if lat else None,
        "mean_s": mean(lat), "median_s": median(lat),
        "scheduler_cmds_per_site_per_min": max(per_min.values()),
        "scheduler_cmds_per_min_by_site": per_min,
        "window_s": w1 - w0, "submit_s": submit_s,
        "delivered_by": sources, "final_states": states,
        "latencies_s": sorted(lat),
    }


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-sleep", type=float, default=10.0, help="job runtimes U(0.5, this)")
    p.add_argument("--window", type=float, default=90.0, help="steady-state window (s)")
    p.add_argument("--concurrency", type=int, default=24, help="submits in flight")
    p.add_argument("--sentinel-extra", type=float, default=15.0,
                   help="sentinel jobs run window + this (s)")
    args = p.parse_args(argv)
    args.tag = args.tag or str(args.jobs)
    r = asyncio.run(bench(config_path(args.config), args.jobs, args.seed, args.max_sleep,
                          args.window, args.concurrency, args.sentinel_extra))
    md = (f"## events: {r['jobs']} jobs (+{r['sentinels']} sentinels), seed {r['seed']}\n\n"
          + markdown_table(["metric", "value", "target"], [
              ("p50 end->subscriber (s)", r["p50_s"], "<= 0.5"),
              ("p95 end->subscriber (s)", r["p95_s"], "<= 2"),
              ("max (s)", r["max_s"], ""),
              ("scheduler cmds / site / min (worst site)",
               r["scheduler_cmds_per_site_per_min"], "<= 2"),
              ("steady-state window (s)", r["window_s"], ""),
              ("submit phase (s)", r["submit_s"], ""),
              ("delivered by", r["delivered_by"], ""),
              ("final states", r["final_states"], "all COMPLETED")]))

    def plot(ax) -> None:
        lat = r["latencies_s"]
        ax.plot(lat, [(i + 1) / len(lat) for i in range(len(lat))], drawstyle="steps-post")
        ax.axvline(0.5, ls="--", c="grey")
        ax.axvline(2.0, ls=":", c="grey")
        ax.set_xlabel("job end -> subscriber (s)")
        ax.set_ylabel("fraction of jobs")
        ax.set_title(f"{r['jobs']} jobs: p50 {r['p50_s']:.3f}s, p95 {r['p95_s']:.3f}s, "
                     f"{r['scheduler_cmds_per_site_per_min']:.2f} sched cmds/site/min")
    emit("events", args, r, md, plot)
    return r


if __name__ == "__main__":
    main()
