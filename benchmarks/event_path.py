"""The server's event path at a sustained rate: job updates written to the shared store by
another process (as the CLI and kernels write them) reach a browser's event socket
(/api/events/subscribe) each once, in order, none lost.

A real `jupyter lab` with the diamond extension (its store follower at the UI tests'
0.25 s) and a websocket client counting the job-state emissions by store seq. The writer
applies `rate` updates a second for `seconds` (a new reason each: one job.updated event
each) and records when each was committed; latency = commit to arrival at the socket.
No site is contacted: the jobs are on a site the sites file does not list (so no monitor
polls them) and the sites file's only site is a local one.

    python -m benchmarks.event_path --json [--rate 100 --rate 400 --seconds 30]
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import tempfile
import time
from pathlib import Path
from typing import Any

from . import common

ROOT = Path(__file__).resolve().parent.parent


def _ui_fixtures() -> Any:
    """ui-tests/conftest.py (its `start_lab`/`stop_lab`), loaded by path: under pytest the
    name `conftest` is already tests/conftest.py."""
    return common.load_by_path("diamond_ui_conftest", ROOT / "ui-tests" / "conftest.py")

LIVE_SITE = "bench"  # not in the sites file: its RUNNING jobs are not monitored
JOB_STATE = "https://diamond-jupyter.org/events/job-state"


def make_store(path: Path, n: int) -> list[str]:
    """`n` RUNNING jobs through the Store's own API; returns their ids."""
    from diamond_jupyter.model import JobState
    from diamond_jupyter.store import Store

    ids = []
    with Store(path) as st:
        for i in range(n):
            tok = f"evpath{i:05d}"
            st.record_intent(LIVE_SITE, tok, {"name": f"ev-{i}", "script": "true"})
            job = st.bind_native_id(tok, str(2_000_000 + i))
            st.apply_state(job.id, JobState.RUNNING)
            ids.append(job.id)
    return ids


def writer(path: str, ids: list[str], rate: float, seconds: float, out: Any) -> None:
    """Apply `rate` updates a second; report (seq, commit time) of each."""
    from diamond_jupyter.model import JobState
    from diamond_jupyter.store import Store

    written: list[tuple[int, float]] = []
    with Store(path) as st:
        t0 = time.monotonic()
        for k in range(int(rate * seconds)):
            if (d := t0 + k / rate - time.monotonic()) > 0:
                time.sleep(d)
            ev = st.apply_state(ids[k % len(ids)], JobState.RUNNING, reason=f"tick {k}")
            if ev is not None and ev.seq is not None:
                written.append((ev.seq, time.time()))
        elapsed = time.monotonic() - t0
    out.put({"written": written, "elapsed_s": elapsed})


async def storm(server: dict, store: Path, ids: list[str], rate: float, seconds: float
                ) -> dict[str, Any]:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    url = server["url"].replace("http://", "ws://") + "/api/events/subscribe"
    ws = await websocket_connect(HTTPRequest(
        url, headers={"Authorization": f"token {server['token']}"}))
    arrived: dict[int, float] = {}
    order: list[int] = []
    duplicates = 0

    async def read() -> None:
        nonlocal duplicates
        while True:
            msg = await ws.read_message()
            if msg is None:
                return
            capsule = json.loads(msg)
            seq = capsule.get("seq")
            if capsule.get("schema_id", capsule.get("__schema__")) != JOB_STATE \
                    or not isinstance(seq, int):
                continue
            if seq in arrived:
                duplicates += 1
                continue
            arrived[seq] = time.time()
            order.append(seq)
    reader = asyncio.ensure_future(read())
    q: Any = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=writer,
                                           args=(str(store), ids, rate, seconds, q))
    proc.start()
    res = await asyncio.to_thread(q.get, True, seconds * 4 + 60)
    await asyncio.to_thread(proc.join)
    t_end = time.time()
    written = dict(res["written"])
    deadline = time.monotonic() + 30.0
    while not written.keys() <= arrived.keys() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)  # the follower's next rounds
    drain_s = max((arrived[s] for s in written if s in arrived), default=t_end) - t_end
    ws.close()
    reader.cancel()
    lat = [arrived[s] - t for s, t in written.items() if s in arrived]
    mine = [s for s in order if s in written]
    return {"rate_asked": rate, "written": len(written),
            "write_rate_per_s": len(written) / res["elapsed_s"],
            "received": len(set(mine)), "lost": len(written.keys() - arrived.keys()),
            "duplicates": duplicates, "out_of_order": sum(
                1 for a, b in zip(mine, mine[1:], strict=False) if b < a),
            "latency_p50_ms": (common.median(lat) or 0) * 1000,
            "latency_p99_ms": (common.pct(lat, 99) or 0) * 1000,
            "latency_max_ms": max(lat, default=0) * 1000,
            "drain_after_last_write_ms": max(drain_s, 0.0) * 1000}


def main(argv: list[str] | None = None) -> None:
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--rate", type=float, action="append",
                   help="events per second (repeat for several runs; default 100)")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--jobs", type=int, default=100, help="jobs the updates cycle through")
    args = p.parse_args(argv)
    rates = args.rate or [100.0]
    tmp = Path(tempfile.mkdtemp(prefix="diamond-bench-events-path-"))
    sites = tmp / "sites.yaml"
    sites.write_text(json.dumps({"sites": [{"name": "local", "scheduler": "slurm",
                                            "transport": {"kind": "local"}}]}))
    store = tmp / "store.sqlite3"
    ids = make_store(store, args.jobs)
    ui = _ui_fixtures()
    proc, server = ui.start_lab(tmp / "lab", diamond_config=sites, store=store)
    try:
        runs = [asyncio.run(storm(server, store, ids, r, args.seconds)) for r in rates]
    finally:
        ui.stop_lab(proc)
    result = {"seconds": args.seconds, "runs": runs,
              "pass": all(r["lost"] == 0 and r["duplicates"] == 0 and r["out_of_order"] == 0
                          for r in runs)}
    md = "## Server event path: store → /api/events/subscribe\n\n" + common.markdown_table(
        ["rate asked /s", "written", "rate /s", "received", "lost", "duplicates",
         "out of order", "p50 ms", "p99 ms", "max ms", "drain ms"],
        [[r["rate_asked"], r["written"], r["write_rate_per_s"], r["received"], r["lost"],
          r["duplicates"], r["out_of_order"], r["latency_p50_ms"], r["latency_p99_ms"],
          r["latency_max_ms"], r["drain_after_last_write_ms"]] for r in runs])

    plot = common.two_lines(
        [r["write_rate_per_s"] for r in runs], ("p50", [r["latency_p50_ms"] for r in runs]),
        ("p99", [r["latency_p99_ms"] for r in runs]), xlabel="events written per second",
        ylabel="commit → socket (ms)", title=f"Event path; lost: {sum(r['lost'] for r in runs)}")
    common.emit("event_path", args, result, md, plot)


if __name__ == "__main__":
    main()
