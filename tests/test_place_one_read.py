"""One placement decision reads the store's finished jobs once.

`Federation.place` wants them three ways: the calibration's own samples (the newest
COMPLETED, FAILED or TIMEOUT jobs), the user's runtimes per application and share of their
walltime (`runtime_history`: the newest COMPLETED ones), and the runtimes the calibration
plans the user's queued jobs at (`own_runtimes`, from that history again). Each read decodes
up to 500 stored specs; the decision made three. One read now serves all three, and gives
each exactly what its own read gave (`Store.finished_jobs`; the engine keeps what it read
between decisions and reads only the rows changed since: `Store.newest_jobs`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    Job,
    JobSpec,
    JobState,
    JobStatus,
    Node,
    Partition,
    Resources,
    SiteSnapshot,
)
from diamond_jupyter.store import Store

NOW = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=1)
ENDED = [JobState.COMPLETED, JobState.FAILED, JobState.TIMEOUT]


def _spec(app: str, cpus: int, walltime_s: int) -> JobSpec:
    return JobSpec(name="j", command="true", queue="batch", metadata={"application": app},
                   resources=Resources(nodes=1, tasks=1, cpus_per_task=cpus,
                                       walltime_s=walltime_s))


def _fill(store: Store, finished: int) -> None:
    """`finished` ended jobs on alpha and beta, mostly failed in the newest ones (so the
    newest COMPLETED reach further back than the newest ended), and queued ones of each
    application."""
    for i in range(finished):
        state = ENDED[i % 3] if i < finished // 2 else (
            JobState.COMPLETED if i % 7 == 0 else JobState.FAILED)
        ran, site = 5 + (i * 37) % 500, "alpha" if i % 2 == 0 else "beta"
        store.upsert_job(Job(
            id=f"{site}:{i}", site=site, native_id=str(i), state=state,
            spec=_spec("abc"[i % 3], 1 + i % 8, 600 + i), submitted_at=NOW,
            started_at=NOW + timedelta(seconds=i), ended_at=NOW + timedelta(seconds=i + ran)))
    for i in range(1000, 1004):
        site = "alpha" if i % 2 == 0 else "beta"
        store.upsert_job(Job(id=f"{site}:{i}", site=site, native_id=str(i),
                             state=JobState.PENDING, spec=_spec("abc"[i % 3], 4, 900),
                             submitted_at=NOW))


def _snapshot(site: str) -> SiteSnapshot:
    """One full node and the user's two queued jobs there."""
    mine = [1000, 1002] if site == "alpha" else [1001, 1003]
    return SiteSnapshot(
        site=site, taken_at=NOW, partitions=[Partition(name="batch", default=True)],
        nodes=[Node(name=f"{site}1", cpus=8, cpus_allocated=8, state="allocated",
                    partitions=["batch"])],
        jobs=[JobStatus(native_id=str(i), state=JobState.PENDING, partition="batch", nodes=1,
                        cpus=4, walltime_s=900, reason="Resources", submitted_at=NOW)
              for i in mine])


def _federation(tmp_path: Path) -> Federation:
    """Two local sites whose queue views and accounting are the test's (no scheduler)."""
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name=n, scheduler="slurm", speed_factor=speed, transport=TransportConfig(kind="local"),
        discovery={"enabled": False}) for n, speed in (("alpha", 1.5), ("beta", 1.0))]),
        store=Store(tmp_path / "s.sqlite"))
    for name, site in fed.sites.items():
        async def snapshot(*, max_age_s: float = 15.0, name: str = name) -> SiteSnapshot:
            return _snapshot(name)

        async def recent_jobs(since: datetime) -> list[JobStatus]:
            return []  # no accounting: the store's own jobs calibrate the sites
        site.snapshot = snapshot  # type: ignore[method-assign]
        site.recent_jobs = recent_jobs  # type: ignore[method-assign]
    return fed


def _count_finished_reads(store: Store) -> list[str]:
    """Every SQL read of the store that asks for jobs in a finished state, as it happens."""
    reads: list[str] = []
    real = store._read

    def counted(sql: str, args=()):  # type: ignore[no-untyped-def]
        args = tuple(args)
        if " jobs" in sql and any(a in ("COMPLETED", "FAILED", "TIMEOUT") for a in args):
            reads.append(sql)
        return real(sql, args)
    store._read = counted  # type: ignore[method-assign]
    return reads


async def test_one_placement_reads_the_finished_jobs_once(tmp_path):
    fed = _federation(tmp_path)
    try:
        _fill(fed.store, 60)
        reads = _count_finished_reads(fed.store)
        placed = await fed.place(_spec("b", 2, 1200))
        assert placed.choice in ("alpha", "beta")
        # the newest ended jobs and the newest completed ones, once each (`Store.newest_jobs`)
        assert len(reads) == 2, reads
        await fed.place(_spec("b", 2, 1200))  # kept: only rows changed since are read
        assert len(reads) == 2, reads
    finally:
        await fed.close()


async def test_the_one_read_gives_each_use_what_its_own_read_gave(tmp_path):
    """Past the lookback (600 finished jobs, the newest 300 mostly failed): the
    calibration's samples, the history and the queued jobs' runtimes are those of separate
    reads, each with its own 500 newest."""
    from diamond_jupyter import placement

    fed = _federation(tmp_path)
    try:
        _fill(fed.store, 600)
        st = fed.store
        got = st.finished_jobs(500)
        assert [j.id for j in got.ended] == [j.id for j in st.list_jobs(states=ENDED,
                                                                       limit=500)]
        assert [j.id for j in got.completed] == [j.id for j in st.list_jobs(
            states=[JobState.COMPLETED], limit=500)]
        assert len(got.completed) > sum(j.state == JobState.COMPLETED for j in got.ended)
        seen: dict = {}
        real = placement.place

        def spy(spec, sites, **kw):  # type: ignore[no-untyped-def]
            seen.update(kw)
            return real(spec, sites, **kw)
        placement.place = spy
        try:
            await fed.place(_spec("b", 2, 1200))
        finally:
            placement.place = real
        history, share = fed.runtime_history()  # a read of its own, as before
        assert (seen["history"], seen["own_share"]) == (history, share)
        assert history and share is not None
        own = fed.own_runtimes()
        assert own and {n: c.own_runtimes for n, c in seen["calibration"].items()} == own
        alone = await fed.calibration(fetch=False)  # reads the store itself
        placed = seen["calibration"]
        for n, c in alone.items():
            assert c.samples == placed[n].samples > 0
            assert c.ratio("batch", 2) == placed[n].ratio("batch", 2)
    finally:
        await fed.close()


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_finished_jobs_matches_list_jobs_at_any_limit(tmp_path, limit):
    store = Store(tmp_path / "s.sqlite")
    try:
        _fill(store, 12)
        got = store.finished_jobs(limit)
        assert [j.id for j in got.ended] == [j.id for j in store.list_jobs(states=ENDED,
                                                                          limit=limit)]
        assert [j.id for j in got.completed] == [j.id for j in store.list_jobs(
            states=[JobState.COMPLETED], limit=limit)]
    finally:
        store.close()
