"""The user's own jobs from a store this engine does not hold are not other users' work.

A site's queue is calibrated on other users' jobs (the accounting's jobs that are not the
store's); the store's own, one user's few kinds, stand in only where there are none. Jobs
the login submitted through an engine carry its token (`.dmd-TOKEN` in the name, or the
comment) even when another store sent them (another engine of the user's, a store started
afresh). Before, those counted as other users' work: on the test bed's Grid Engine site
(`depth_misleads` seed 103) the probes of the benchmark runs before (8 slots, 60 s asked,
about 40% of it run; each run starts a fresh store) were most of the 5-16 slot class, whose
mean then planned the load's 8- and 16-slot jobs (300-3,600 s asked, under 1% run) at a
quarter of their requests: the site was predicted 380-1,045 s away and started every probe
in 23-38 s (benchmarks/README.md, issue 15)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    JobSpec,
    JobState,
    JobStatus,
    Node,
    Partition,
    Resources,
    SiteSnapshot,
)
from diamond_jupyter.placement import place
from diamond_jupyter.sites import carries_a_token
from diamond_jupyter.store import Store

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def ended(i: int, asked_s: float, ran_s: float, **kw) -> JobStatus:
    start = NOW - timedelta(hours=1) + timedelta(seconds=10 * i)
    return JobStatus(native_id=str(i), state=JobState.COMPLETED, partition="all.q", cpus=8,
                     walltime_s=asked_s, started_at=start,
                     ended_at=start + timedelta(seconds=ran_s), **kw)


def history(prober: str | None) -> list[JobStatus]:
    """All.q's accounting: six 8-slot jobs of the load (1000 s asked, 10 s run: 1%), and
    ten probes an engine sent as `prober` (60 s asked, 24 s run: 40%)."""
    return [ended(i, 1000.0, 10.0, name=f"load-{i}", user="loaduser") for i in range(6)] + \
        [ended(10 + i, 60.0, 24.0, name=f"probe.dmd-{i:012x}", user=prober)
         for i in range(10)]


def test_a_record_carries_a_token_in_its_name_comment_or_environment() -> None:
    plain = JobStatus(native_id="1", state=JobState.COMPLETED, name="load-1")
    assert not carries_a_token(plain)
    assert carries_a_token(plain.model_copy(update={"name": "probe.dmd-0123456789ab"}))
    assert carries_a_token(plain.model_copy(update={"comment": "diamond:0123456789ab"}))
    assert carries_a_token(plain.model_copy(update={"token": "0123456789ab"}))


async def calibrated(tmp_path, jobs_of) -> tuple[Federation, object]:
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="sgeq", scheduler="sge", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite"))
    login = await fed.sites["sgeq"].login_user()  # the local `id -un`
    assert login
    fed._calibrated["sgeq"] = (time.monotonic(), jobs_of(login))  # read just now
    return fed, (await fed.calibration())["sgeq"]


async def test_the_logins_engine_jobs_do_not_calibrate_the_queue(tmp_path):
    fed, cal = await calibrated(tmp_path, history)
    try:
        r = cal.exact(("*", "*"))
        assert (r.samples, r.mean) == (6, pytest.approx(0.01))  # the load's jobs alone
    finally:
        await fed.close()


async def test_another_users_engine_jobs_are_other_users_work(tmp_path):
    fed, cal = await calibrated(tmp_path, lambda login: history(f"not-{login}"))
    try:
        r = cal.exact(("*", "*"))
        assert (r.samples, r.mean) == (16, pytest.approx((6 * 0.01 + 10 * 0.4) / 16))
    finally:
        await fed.close()


def grid_engine_site() -> tuple[SiteConfig, SiteSnapshot]:
    """One 8-slot host, idle; two 8-slot jobs waiting (for any queue), 1000 s asked each."""
    node = Node(name="s1", cpus=8, cpus_allocated=0, state="idle", partitions=["all.q"])
    jobs = [JobStatus(native_id=str(100 + i), state=JobState.PENDING, cpus=8,
                      walltime_s=1000.0, reason="") for i in range(2)]
    return SiteConfig(name="sgeq", scheduler="sge"), SiteSnapshot(
        site="sgeq", taken_at=NOW, nodes=[node], jobs=jobs,
        partitions=[Partition(name="all.q", default=True)], backfill="none")


@pytest.mark.parametrize(("whose", "start_s"), [
    # worked by hand: the two waiting 8-slot jobs go before the probe (8 slots, asked
    # after them: Grid Engine's urgency), one after the other on the one host. Planned at
    # the load's 1% of 1000 s, 10 s each: the probe starts at 20 s. With the user's probes
    # counted as other users' work, the mean is (6 x 0.01 + 10 x 0.4) / 16 = 0.25375:
    # 253.75 s each, the probe at 507.5 s (the walltimes' plan: 2,000 s).
    ("mine", 20.0), ("another user's", 507.5)])
async def test_grid_engine_queue_planned_at_the_loads_share(tmp_path, whose, start_s):
    fed, cal = await calibrated(tmp_path, lambda login: history(
        login if whose == "mine" else f"not-{login}"))
    try:
        probe = JobSpec(name="probe", command="sleep 20",
                        resources=Resources(nodes=1, tasks=1, cpus_per_task=8, walltime_s=60))
        pl = place(probe, [grid_engine_site()], now=NOW, calibration={"sgeq": cal})
        v = pl.verdict("sgeq")
        assert v is not None and v.feasible, pl.explain()
        assert (v.raw_start - NOW).total_seconds() == pytest.approx(2000.0)
        assert (v.estimated_start - NOW).total_seconds() == pytest.approx(start_s, abs=0.5)
    finally:
        await fed.close()


async def test_a_login_that_cannot_be_told_leaves_named_owners_to_others(tmp_path):
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="sgeq", scheduler="sge", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite"))

    async def broken() -> str | None:
        raise OSError("no id here")
    fed.sites["sgeq"].login_user = broken
    # the probes' owner named: not known to be the login's, so other users' work; an
    # owner not named (an accounting without it) is the login's, by its user filter
    fed._calibrated["sgeq"] = (time.monotonic(), history("someone") + [
        ended(30 + i, 60.0, 24.0, name=f"probe.dmd-{30 + i:012x}") for i in range(5)])
    try:
        r = (await fed.calibration())["sgeq"].exact(("*", "*"))
        assert r.samples == 16
    finally:
        await fed.close()


async def test_the_users_engine_jobs_stand_in_where_no_other_users_ran(tmp_path):
    # only the login's probes ended here: they calibrate, as the store's own jobs do
    fed, cal = await calibrated(tmp_path, lambda login: history(login)[6:])
    try:
        r = cal.exact(("*", "*"))
        assert (r.samples, r.mean) == (10, pytest.approx(0.4))
    finally:
        await fed.close()
