"""A workflow of many independent steps submitted on a local site with a fake sbatch (no test
bed): the engine before against the engine now, both in the same run, alternating, each on a
store of its own holding `--history` finished jobs and `--transfers` finished copies first (a
user with a long history). "Before" is, with `--baseline reread` (the default), the workflow
engine reading the whole workflow again after each step's submit (now: only the steps it
wrote, `Store.refresh_workflow`); with `--baseline store`, that and every submit reading the
user's newest jobs, their queued ones and the finished ones again, sorting every finished job
of the store (now: kept between submits, only the rows changed since read:
`Store.newest_jobs`), and the reads of `--baseline transfers`; with `--baseline transfers`,
each placement reading and decoding the newest 200 transfers whole for the measured bandwidth
(now: kept between submits, `Store.newest_transfers`, the figures worked out again only when
one changed) and making a prediction sample of every recent own job (now: only of those the
correction rests on, `OWN_ERROR_SAMPLES` a site).

Per run: the wall time of the whole workflow (`run_workflow`, every step submitted), the
time per step, and the mean time of the last tenth of the steps' submits against the first
tenth (how much slower a step gets as the store grows). The ratio is before / now."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks import common

SCRIPT = "#!/bin/bash\\n#SBATCH -t 5\\necho step\\n"
_OLD_FINISHED = (  # `Store.finished_jobs` before: every finished job ranked
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY created_at DESC, rowid DESC) AS "
    "ended_rank, ROW_NUMBER() OVER (PARTITION BY state = ? ORDER BY created_at DESC, rowid "
    "DESC) AS state_rank, rowid AS row_order FROM jobs WHERE state IN (?,?,?)) WHERE "
    "ended_rank <= ? OR (state = ? AND state_rank <= ?) "
    "ORDER BY created_at DESC, row_order DESC")


@contextlib.contextmanager
def whole_workflow_reread() -> Iterator[None]:
    """The workflow engine as before `Store.refresh_workflow`: the whole workflow read again
    after each step's submit, and for a step's release, gate or move."""
    from diamond_jupyter.store import Store
    from diamond_jupyter.workflow.engine import WorkflowEngine

    def refreshed(self: Any, rec: Any) -> Any:
        self._written.pop(rec.id, None)
        return self.store.get_workflow(rec.id)

    def get_step(self: Any, workflow_id: str, name: str) -> Any:
        return self.get_workflow(workflow_id).step(name)

    kept = WorkflowEngine._refreshed, Store.get_step
    WorkflowEngine._refreshed = refreshed  # type: ignore[method-assign]
    Store.get_step = get_step  # type: ignore[method-assign]
    try:
        yield
    finally:
        WorkflowEngine._refreshed, Store.get_step = kept  # type: ignore[method-assign]


@contextlib.contextmanager
def engine_before() -> Iterator[None]:
    """The estimates' reads as before `Store.newest_jobs`: each read whole at every submit
    (the newest jobs by `state IN (...)`, sorting every job of those states), the finished
    jobs ranked over all of them, every job's prediction sample read again."""
    from diamond_jupyter import federation
    from diamond_jupyter.model import JobState
    from diamond_jupyter.store import FinishedJobs, Store
    from diamond_jupyter.store.codec import row_to_job

    def newest_jobs(self: Any, window: Any) -> list[Any]:
        where, args = "", []
        if window.states is not None:
            states = sorted(s.value for s in window.states)
            where, args = f" WHERE state IN ({','.join('?' * len(states))})", states
        rows = self._read(f"SELECT * FROM jobs{where} ORDER BY created_at DESC, rowid DESC "
                          "LIMIT ?", [*args, window.limit])
        return [row_to_job(r, shared=True) for r in rows]

    def finished_jobs(self: Any) -> Any:
        c, limit = JobState.COMPLETED.value, federation.FINISHED_LOOKBACK
        rows = self.store._read(_OLD_FINISHED, [c, c, JobState.FAILED.value,
                                                JobState.TIMEOUT.value, limit, c, limit])
        out = FinishedJobs([], [])
        for r in rows:
            job = row_to_job(r, shared=True)
            if r["ended_rank"] <= limit:
                out.ended.append(job)
            if r["state"] == c and r["state_rank"] <= limit:
                out.completed.append(job)
        return out

    samples = federation.Federation.prediction_samples

    def prediction_samples(self: Any, since: Any = None) -> Any:
        self._sample_bases = {}
        return samples(self, since)

    kept = Store.newest_jobs, federation.Federation.finished_jobs
    Store.newest_jobs = newest_jobs  # type: ignore[method-assign]
    federation.Federation.finished_jobs = finished_jobs  # type: ignore[method-assign]
    federation.Federation.prediction_samples = prediction_samples  # type: ignore[method-assign]
    try:
        yield
    finally:
        Store.newest_jobs, federation.Federation.finished_jobs = kept  # type: ignore[method-assign]
        federation.Federation.prediction_samples = samples  # type: ignore[method-assign]


@contextlib.contextmanager
def placement_reads_before() -> Iterator[None]:
    """Each placement's reads as before the transfers table's clock (schema v12): the newest
    transfers read and decoded whole for the measured bandwidth, and a prediction sample made
    of every recent own job of the store's newest (not only of those `own_error` keeps)."""
    from diamond_jupyter import federation
    from diamond_jupyter.calibration import measured_bandwidth, prediction_sample

    def bandwidth(self: Any) -> Any:
        newest = self.store.list_transfers(limit=federation.BANDWIDTH_LOOKBACK)
        return measured_bandwidth(self._finished_copies(newest))

    def prediction_samples(self: Any, since: Any = None) -> Any:
        now = federation.utcnow()
        since = since or now - timedelta(seconds=federation.RECENT_WAITS_S)
        out: dict[str, list[Any]] = {}
        for job in self.store.newest_jobs(self._newest):
            if job.submitted_at is None or job.submitted_at < since or job.spec is None \
                    or job.spec.hold or job.spec.dependencies:
                continue
            if (sample := prediction_sample(job, now)) is not None:
                out.setdefault(job.site, []).append(sample)
        return out

    fed = federation.Federation
    kept = fed.measured_bandwidth, fed.prediction_samples
    fed.measured_bandwidth = bandwidth  # type: ignore[method-assign]
    fed.prediction_samples = prediction_samples  # type: ignore[method-assign]
    try:
        yield
    finally:
        fed.measured_bandwidth, fed.prediction_samples = kept  # type: ignore[method-assign]


def _fill(store: Any, finished: int, before: bool, transfers: int = 0) -> None:
    """`finished` completed jobs (an hour old and older) and `transfers` finished copies
    between the server and alpha (8-80 MB, 1-10 s) written in one go; for the engine before,
    its store's indexes as they were (jobs by site and state only)."""
    from diamond_jupyter.model import JobSpec, Resources, utcnow
    from diamond_jupyter.store.codec import to_ts

    text = JobSpec(name="old", command="true",
                   resources=Resources(walltime_s=600)).model_dump_json()
    start = utcnow() - timedelta(hours=1)
    rows = []
    for i in range(finished):
        at = to_ts(start - timedelta(seconds=10 * (finished - i)))
        rows.append((f"alpha:{i + 1}", "alpha", str(i + 1), "old", "COMPLETED", f"old{i}", at,
                     at, at, 0, text, at, at))
    with store._conn() as c:
        if before:
            c.execute("DROP INDEX jobs_state_created")
            c.execute("DROP INDEX jobs_site_state_created")
            c.execute("CREATE INDEX jobs_site_state ON jobs(site, state)")
        c.executemany("INSERT INTO jobs (id, site, native_id, name, state, token, submitted_at,"
                      " started_at, ended_at, exit_code, spec, created_at, updated_at)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        copies = []
        for i in range(transfers):
            at = start - timedelta(seconds=10 * (transfers - i))
            src, dst = ("/data/in", "alpha:/scratch/in") if i % 3 else ("alpha:/out", "/out")
            copies.append((f"t{i}", "copy", src, dst, "SUCCEEDED" if i % 7 else "FAILED",
                           8_000_000 * (1 + i % 10), to_ts(at),
                           to_ts(at + timedelta(seconds=1 + i % 10))))
        c.executemany("INSERT INTO transfers (id, kind, src, dst, state, bytes, created_at,"
                      " updated_at) VALUES (?,?,?,?,?,?,?,?)", copies)


def _federation(work: Path, history: int, before: bool, transfers: int = 0) -> Any:
    """One local site (four idle 32-CPU nodes) whose sbatch is a script that counts."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import Node, Partition, SiteSnapshot
    from diamond_jupyter.store import Store

    work.mkdir(parents=True)
    sbatch = work / "sbatch"
    sbatch.write_text(f"#!/bin/sh\nn=$(cat {work}/n 2>/dev/null || echo {history + 10})\n"
                      f"echo $((n + 1)) > {work}/n\necho $((n + 1))\n")
    sbatch.chmod(0o755)
    site = SiteConfig(name="alpha", transport=TransportConfig(kind="local"),
                      workdir=str(work / "alpha"), commands={"sbatch": str(sbatch)},
                      discovery={"enabled": False})
    fed = Federation(FederationConfig(sites=[site]), store=Store(work / "s.sqlite"))
    _fill(fed.store, history, before, transfers)
    snap = SiteSnapshot(site="alpha", partitions=[Partition(name="compute", default=True,
                                                             max_time_s=86400)],
                        nodes=[Node(name=f"a{i}", cpus=32, memory_mb=128000, state="idle",
                                    partitions=["compute"]) for i in range(4)])

    async def snapshots(*, only: Any = None, **kw: Any) -> dict[str, SiteSnapshot]:
        return {"alpha": snap}

    async def capabilities(*, only: Any = None, **kw: Any) -> dict[str, Any]:
        return {}

    async def as_given(site: str, spec: Any, caps: Any = None) -> Any:
        return spec
    fed.snapshots, fed.capabilities, fed.adapt_to_site = snapshots, capabilities, as_given
    return fed


async def _run(work: Path, steps: int, history: int, before: bool, transfers: int = 0
               ) -> dict[str, Any]:
    fed = _federation(work, history, before, transfers)
    submits: list[float] = []
    submit = fed.submit

    async def timed(*args: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return await submit(*args, **kw)
        finally:
            submits.append(time.perf_counter() - t)
    fed.submit = timed
    text = "name: wide\nsteps:\n" + "".join(
        f"  - {{name: s{i:03d}, site: alpha, script: \"{SCRIPT}\"}}\n" for i in range(steps))
    try:
        t = time.perf_counter()
        view = await fed.run_workflow(text, origin={"face": "benchmark"})
        took = time.perf_counter() - t
        submitted = sum(1 for s in view.steps if s.job)
    finally:
        await fed.close()
    tenth = max(1, len(submits) // 10)
    return {"seconds": took, "per_step_ms": took / steps * 1000, "submitted": submitted,
            "first_tenth_submit_ms": common.mean(submits[:tenth]) * 1000,
            "last_tenth_submit_ms": common.mean(submits[-tenth:]) * 1000}


def main(argv: list[str] | None = None) -> None:
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, action="append",
                   help="steps of the workflow (repeat; default 50, 200, 500)")
    p.add_argument("--history", type=int, default=2000,
                   help="finished jobs in each store before the workflow (default 2000)")
    p.add_argument("--transfers", type=int, default=1000,
                   help="finished copies in each store before the workflow (default 1000)")
    p.add_argument("--baseline", choices=("reread", "store", "transfers"), default="reread",
                   help="the engine before: reading the whole workflow after each submit "
                        "(reread, the default), or that and the store's reads before schema "
                        "v11 and v12 (store), or each placement's reads before v12: the "
                        "newest transfers whole, every own job a sample (transfers)")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="diamond-bench-store-growth-"))
    runs = []
    try:
        asyncio.run(_run(work / "warm-up", 3, 0, False))  # imports, schemas: not measured
        for steps in args.steps or [50, 200, 500]:
            got: dict[str, dict[str, Any]] = {}
            for name in ("before", "now") if steps % 2 else ("now", "before"):
                old_store = name == "before" and args.baseline == "store"
                with contextlib.ExitStack() as old:
                    if name == "before" and args.baseline != "transfers":
                        old.enter_context(whole_workflow_reread())
                    if old_store:
                        old.enter_context(engine_before())
                    if name == "before" and args.baseline != "reread":
                        old.enter_context(placement_reads_before())
                    got[name] = asyncio.run(_run(work / f"{steps}-{name}", steps,
                                                 args.history, old_store, args.transfers))
            runs.append({"steps": steps, "history": args.history,
                         "transfers": args.transfers, "before": got["before"],
                         "now": got["now"], "ratio": common.ratio(got["before"]["seconds"],
                                                                  got["now"]["seconds"])})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {"history": args.history, "transfers": args.transfers,
              "baseline": args.baseline, "runs": runs}
    md = (f"## A workflow's submits as the store grows ({args.history} finished jobs and "
          f"{args.transfers} transfers first; "
          f"before: baseline {args.baseline}; local site, fake sbatch)\n\n"
          + common.markdown_table(
              ["steps", "before s", "now s", "before / now", "before ms/step", "now ms/step",
               "before: last/first tenth submit ms", "now: last/first tenth submit ms"],
              [[r["steps"], r["before"]["seconds"], r["now"]["seconds"], r["ratio"],
                r["before"]["per_step_ms"], r["now"]["per_step_ms"],
                f"{r['before']['last_tenth_submit_ms']:.1f} / "
                f"{r['before']['first_tenth_submit_ms']:.1f}",
                f"{r['now']['last_tenth_submit_ms']:.1f} / "
                f"{r['now']['first_tenth_submit_ms']:.1f}"] for r in runs]))

    plot = common.two_lines(
        [r["steps"] for r in runs], ("before", [r["before"]["per_step_ms"] for r in runs]),
        ("now", [r["now"]["per_step_ms"] for r in runs]), xlabel="steps of the workflow",
        ylabel="ms per step",
        title=f"Submits as the store grows ({args.history} finished jobs, "
              f"{args.transfers} transfers first)")
    common.emit("store_growth", args, result, md, plot)


if __name__ == "__main__":
    main()
