"""Following jobs over Slurm's REST API (no event channel) against the same cluster over SSH.

The same jobs (`sleep S` for each S in --sleeps) go to beta over SSH (its jobs report their
own end through the event file) and to beta-rest (slurmrestd: the batched `GET jobs` at the
monitor's adaptive interval, the server's defaults: 2 s after a change, doubling while
nothing changes, at most 60 s). Latency: from the job's end as Slurm recorded it (whole
seconds) to its terminal event. Load: REST requests (and, over SSH, scheduler commands) per
minute while the jobs run.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from .common import config_path, emit, markdown_table, median, parser

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}


async def bench(config: str, sleeps: list[float], min_poll_s: float,
                poll_interval_s: float) -> dict:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobSpec
    from diamond_jupyter.sites import EventChannel
    from diamond_jupyter.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="bench-rest-"))
    fed = Federation(config, store=Store(tmp / "store.sqlite"), min_poll_s=min_poll_s,
                     poll_interval_s=poll_interval_s, allowed_sites=["beta", "beta-rest"])
    await fed.start()
    arrived: dict[str, float] = {}
    fed.subscribe(lambda ev: ev.kind == "job.state" and ev.data.get("state") in TERMINAL
                  and arrived.setdefault(ev.job_id, time.time()))
    out: dict = {}
    try:
        for site in ("beta", "beta-rest"):
            s = fed.site(site)
            calls0 = getattr(s.transport, "requests", None)
            cmds0, t0 = s.scheduler_commands, time.monotonic()
            jobs = await asyncio.gather(*(fed.submit(JobSpec(command=f"sleep {x}",
                                                             name="bench-rest"), site)
                                          for x in sleeps))
            submits = len(jobs)
            done = await asyncio.gather(*(fed.wait(j.id, timeout=600) for j in jobs))
            elapsed = time.monotonic() - t0
            lat = [arrived[j.id] - j.ended_at.timestamp() for j in done if j.ended_at]
            calls = (s.transport.requests - calls0 - submits) if calls0 is not None else None
            out[site] = {
                "jobs": len(done), "states": sorted({j.state.value for j in done}),
                "latency_s": {str(x): round(v, 2) for x, v in zip(sleeps, lat, strict=False)},
                "latency_median_s": median(lat), "latency_max_s": max(lat) if lat else None,
                "elapsed_s": elapsed,
                "scheduler_queries_per_min": (s.scheduler_commands - cmds0 - submits)
                / elapsed * 60,
                "rest_requests_per_min": calls / elapsed * 60 if calls is not None else None,
                "source": ("batched GET jobs" if s.event_channel is EventChannel.NONE
                           else "event channel"),
            }
    finally:
        await fed.close()
    return {"sleeps_s": sleeps, "min_poll_s": min_poll_s, "poll_interval_s": poll_interval_s,
            "sites": out}


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--sleeps", default="1,5,15,30,60",
                   help="job lengths in seconds, comma-separated")
    p.add_argument("--min-poll", type=float, default=2.0)
    p.add_argument("--poll-interval", type=float, default=60.0)
    args = p.parse_args(argv)
    sleeps = [float(x) for x in args.sleeps.split(",")]
    data = asyncio.run(bench(config_path(args.config), sleeps, args.min_poll,
                             args.poll_interval))
    rows = [(site, d["source"], d["latency_median_s"], d["latency_max_s"],
             d["scheduler_queries_per_min"], d["rest_requests_per_min"])
            for site, d in data["sites"].items()]
    md = markdown_table(["site", "end seen by", "latency median s", "latency max s",
                         "status queries/min", "REST requests/min"], rows)
    emit("rest_poll", args, data, md)


if __name__ == "__main__":
    main()
