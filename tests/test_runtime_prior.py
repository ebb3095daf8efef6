"""What placement expects of a new job before it runs. Its runtime, before its application
has any history: its walltime scaled by what the user's own jobs used of theirs, else by
what every site's recent jobs of its size used, never the bare walltime while there is
anything to learn from. Its start's 90% bound: at least how long the site's recent jobs
waited (QBETS), whatever the queue model says."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from test_placement import NOW, spec
from test_placement_risk import _idle

from diamond_jupyter.calibration import RunSample, SiteCalibration, pooled_share
from diamond_jupyter.config import FederationConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Job, JobState, Resources
from diamond_jupyter.placement import place, runtime_prior
from diamond_jupyter.store import Store


def _runs(share: float, n: int, cpus: int = 1, partition: str = "compute") -> list[RunSample]:
    return [RunSample(partition, cpus, requested_s=600, runtime_s=600 * share, ended_at=i)
            for i in range(n)]


def test_the_pooled_share_weighs_each_sites_jobs_of_the_jobs_size():
    a = SiteCalibration(_runs(0.2, 10) + _runs(0.9, 20, cpus=32))
    b = SiteCalibration(_runs(0.6, 30, partition="short"))
    share, n = pooled_share([a, b], cpus=1)
    assert n == 40 and share == pytest.approx((0.2 * 10 + 0.6 * 30) / 40)
    assert pooled_share([a, b], cpus=32) == (pytest.approx(0.9), 20)  # only a has them
    # a size no site has enough of: each site's jobs of every size
    share, n = pooled_share([a, b], cpus=8)
    assert n == 60 and share == pytest.approx((0.2 * 10 + 0.9 * 20 + 0.6 * 30) / 60)
    assert pooled_share([SiteCalibration([])], cpus=1) is None


def _minute_job(app: str | None = None):
    job = spec().model_copy(update={"resources": Resources(tasks=1, walltime_s=60)})
    return job.model_copy(update={"metadata": {"application": app}}) if app else job


def _near_and_fast():
    """near: idle now, speed 1. fast: speed 3, its scheduler says it starts in 25 s."""
    return [_idle("near"), _idle("fast", speed=3.0)], {"fast": NOW + timedelta(seconds=25)}


def test_without_history_a_faster_site_gains_only_what_jobs_really_run():
    """Jobs here run a third of their walltime. With the walltime as the runtime, the
    fast site would finish first (25 s + 20 s against 60 s); in truth the near one does
    (20 s against 25 s + 6.7 s)."""
    sites, est = _near_and_fast()
    cal = SiteCalibration(_runs(1 / 3, 20))
    p = place(_minute_job(), sites, now=NOW, estimates=est, calibration={"near": cal})
    assert p.choice == "near", p.explain()
    near, fast = (next(v for v in p.ranked if v.site == s) for s in ("near", "fast"))
    assert near.estimated_runtime_s == pytest.approx(20)
    assert fast.estimated_runtime_s == pytest.approx(20 / 3)
    assert "33% of the walltime, as 20 recent jobs of its size" in p.explain()
    # nothing to learn from: the walltime, and the fast site wins
    bare = place(_minute_job(), sites, now=NOW, estimates=est)
    assert bare.choice == "fast" and "runtime: the walltime" in bare.explain()


def test_the_users_own_share_comes_before_the_centers():
    sites, est = _near_and_fast()
    cal = SiteCalibration(_runs(1 / 3, 20))
    p = place(_minute_job(), sites, now=NOW, estimates=est, calibration={"near": cal},
              own_share=0.9)
    assert p.choice == "fast", p.explain()  # 25 s + 18 s against 54 s
    assert "90% of the walltime, as your recent jobs used" in p.explain()


def test_the_applications_history_comes_first():
    prior = runtime_prior(_minute_job("md"), {"md": 12.0}, 0.9, [SiteCalibration(
        _runs(0.5, 10))])
    assert prior.runtime_s(60) == 12.0 and "as md ran before" in prior.basis
    sites, est = _near_and_fast()
    p = place(_minute_job("md"), sites, now=NOW, estimates=est, history={"md": 45.0},
              own_share=0.1)
    assert [v.estimated_runtime_s for v in p.ranked] == [pytest.approx(45), pytest.approx(15)]


async def test_the_users_share_comes_from_the_stores_completed_jobs(tmp_path):
    fed = Federation(FederationConfig(sites=[]), store=Store(tmp_path / "s.sqlite"))
    try:
        def done(i: int, ran_s: float, state=JobState.COMPLETED, wall: int | None = 100):
            job = _minute_job().model_copy(update={"resources": Resources(walltime_s=wall)})
            fed.store.upsert_job(Job(
                id=f"x:{i}", site="x", native_id=str(i), state=state, spec=job,
                submitted_at=NOW, started_at=NOW, ended_at=NOW + timedelta(seconds=ran_s)))
        for i, ran in enumerate([10, 20, 30, 40]):
            done(i, ran)
        done(10, 100, state=JobState.FAILED)  # what failed says nothing of what runs take
        done(11, 100, wall=None)  # nor what had no walltime
        assert fed.runtime_history()[1] is None  # four are too few
        done(4, 250)  # ran past its walltime (a grace period): counts as all of it
        assert fed.runtime_history()[1] == pytest.approx((0.1 + 0.2 + 0.3 + 0.4 + 1.0) / 5)
    finally:
        fed.store.close()


# -- the start's 90% bound: at least how long the site's recent jobs waited ----------------

def _status(nid: str, submitted_min: float, started_min: float | None, cpus: int = 1):
    from diamond_jupyter.model import JobStatus

    return JobStatus(native_id=nid, partition="compute", cpus=cpus,
                     state=JobState.RUNNING if started_min is not None else JobState.PENDING,
                     submitted_at=NOW - timedelta(minutes=submitted_min),
                     started_at=None if started_min is None
                     else NOW - timedelta(minutes=started_min))


def test_recent_waits_count_started_jobs_and_those_still_waiting():
    from diamond_jupyter.calibration import queue_waits

    jobs = [_status("a", 30, 20), _status("b", 50, None), _status("old", 600, 500),
            _status("c", 10, None, cpus=64)]
    got = queue_waits(jobs, NOW, window_s=6 * 3600)
    assert {n: w.wait_s for n, w in got.items()} == {"a": 600.0, "b": 3000.0, "c": 600.0}


def test_the_wait_bound_is_the_qbets_order_statistic_of_the_class():
    from diamond_jupyter.calibration import QueueWait, RecentWaits

    def wait_bound(waits, partition, cpus):
        return RecentWaits(waits).bound(partition, cpus)

    waits = [QueueWait("compute", 1, 60.0 * i) for i in range(1, 71)]  # 1..70 min
    b, n = wait_bound(waits, "compute", 1)
    # of 70 samples the 68th smallest holds the 90% quantile with 95% confidence
    assert n == 70 and b == 68 * 60.0
    assert wait_bound(waits[:10], "compute", 1) is None  # too few for that confidence
    big = [QueueWait("compute", 64, 5.0)] * 30
    assert wait_bound(waits + big, "compute", 64) == (5.0, 30)  # its own class first
    assert wait_bound(waits + big, "compute", 8)[1] == 100  # else the partition's


def test_a_job_that_may_wait_is_bound_by_how_long_the_sites_jobs_waited():
    """The simulation says the probe starts in a minute behind one queued job; the site's
    jobs of the last hours waited up to 70 min. The bound says so, not the model's minute;
    a job that fits on idle resources with nothing queued stays certain."""
    from diamond_jupyter.calibration import QueueWait

    cfg, snap = _idle("busy")
    queued = {f"j{i}": QueueWait("compute", 1, 60.0 * i) for i in range(1, 71)}
    cal = SiteCalibration(_runs(0.5, 20), queued=queued)
    certain = place(_minute_job(), [(cfg, snap)], now=NOW, calibration={"busy": cal})
    assert certain.ranked[0].start_bound == NOW  # idle, nothing queued
    full = snap.model_copy(update={"nodes": [n.model_copy(update={
        "state": "allocated", "cpus_allocated": n.cpus}) for n in snap.nodes],
        "jobs": [_status("r", 3, 2, cpus=32).model_copy(update={
            "walltime_s": 180, "node_list": "busy1"}), _status("q", 1, None)]})
    p = place(_minute_job(), [(cfg, full)], now=NOW, calibration={"busy": cal})
    v = p.ranked[0]
    # the 70 and the queued job's minute so far (the running one is of another size),
    # which is still going on: its share of the waits goes to the longer ones (69 min, where
    # counted as a wait of one minute it made the bound 68)
    assert (v.start_bound - NOW).total_seconds() == 69 * 60.0, p.explain()
    assert (v.estimated_start - NOW).total_seconds() < 180
    assert any("the waits of 71 jobs of every size here recently" in n for n in v.notes), \
        v.notes


async def test_jobs_that_ended_at_once_still_give_a_runtime(tmp_path):
    """Five jobs that each ran 0 s: the next job still runs a moment (the calibration's
    floor, in seconds: not a share of the request), so its cost is never 0."""
    from diamond_jupyter.calibration import MIN_HOLD_S

    fed = Federation(FederationConfig(sites=[]), store=Store(tmp_path / "s.sqlite"))
    try:
        for i in range(5):
            fed.store.upsert_job(Job(
                id=f"x:{i}", site="x", native_id=str(i), state=JobState.COMPLETED,
                spec=_minute_job(), submitted_at=NOW, started_at=NOW, ended_at=NOW))
        assert fed.runtime_history()[1] == MIN_HOLD_S / _minute_job().resources.walltime_s
    finally:
        fed.store.close()


def test_a_short_jobs_cost_keeps_three_figures():
    from diamond_jupyter.federation_plan import _figure

    assert _figure(0.000254321) == 0.000254 and _figure(12.3456) == 12.3 and _figure(0) == 0


async def test_other_users_jobs_calibrate_the_queue_the_stores_only_without_them(tmp_path):
    """The site's accounting lists every user's jobs, the store's own among them. The queue
    a new job waits behind is other users' work, so their jobs calibrate it: the store's
    few (here ending at half their walltime, against the center's 1%) would otherwise set
    the ratio of a thin class. Where the accounting gives nothing, the store's jobs do."""
    import time as _time

    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.model import JobStatus

    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", scheduler="slurm", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite"))
    now = datetime.now(timezone.utc)
    try:
        acct = [JobStatus(native_id=str(i), state=JobState.COMPLETED, partition="compute",
                          cpus=1, walltime_s=600, started_at=now - timedelta(seconds=60),
                          ended_at=now - timedelta(seconds=54)) for i in range(1, 7)]
        for nid in ("6", "9", "10", "11", "12"):  # 6: in the accounting too; 9-12: not yet
            fed.store.upsert_job(Job(
                id=f"alpha:{nid}", site="alpha", native_id=nid, state=JobState.COMPLETED,
                spec=_minute_job(), submitted_at=now, started_at=now - timedelta(seconds=60),
                ended_at=now - timedelta(seconds=30)))
        fed._calibrated["alpha"] = (_time.monotonic(), acct)
        cal = (await fed.calibration(fetch=False))["alpha"]
        assert cal.samples == 5 and cal.exact(("*", "*")).mean == pytest.approx(0.01)
        fed._calibrated["alpha"] = (_time.monotonic(), [])  # no accounting (no slurmdbd)
        cal = (await fed.calibration(fetch=False))["alpha"]
        assert cal.samples == 5 and cal.exact(("*", "*")).mean == pytest.approx(0.5)
    finally:
        await fed.close()


async def test_a_thin_accounting_history_is_read_again_sooner(tmp_path):
    """One accounting query per site at the slow interval (5 min) once the site's history
    is full; while it holds few jobs (a test bed or a deployment just started) every
    minute, so that a cold start learns from the jobs that end meanwhile."""
    import time as _time

    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.federation import CALIBRATION_TTL_S, THIN_HISTORY_JOBS, THIN_TTL_S
    from diamond_jupyter.model import JobStatus

    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", scheduler="slurm", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite"))
    asked: list[int] = []

    def jobs(n: int) -> list[JobStatus]:
        return [JobStatus(native_id=str(i), state=JobState.COMPLETED, partition="compute",
                          cpus=1, walltime_s=600, started_at=NOW,
                          ended_at=NOW + timedelta(seconds=6)) for i in range(n)]

    async def recent_jobs(since):
        asked.append(1)
        return jobs(THIN_HISTORY_JOBS)
    fed.sites["alpha"].recent_jobs = recent_jobs
    try:
        assert THIN_TTL_S < CALIBRATION_TTL_S
        ago = _time.monotonic() - (THIN_TTL_S + 1)
        fed._calibrated["alpha"] = (ago, jobs(THIN_HISTORY_JOBS - 1))
        assert (await fed.calibration())["alpha"].samples == THIN_HISTORY_JOBS
        assert len(asked) == 1  # thin and older than a minute: read again
        fed._calibrated["alpha"] = (ago, jobs(THIN_HISTORY_JOBS))
        await fed.calibration()
        assert len(asked) == 1  # a full history waits for the slow interval
        await fed.calibration(max_age_s=0)
        assert len(asked) == 2
    finally:
        await fed.close()
