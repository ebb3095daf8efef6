"""A site's calibration is built once per change of what it is built from, not per decision.

`Federation.place` asks `Federation.calibration` at every decision; its accounting query
runs at most every CALIBRATION_TTL_S, and the calibration built from those jobs (each
class's ratios sorted and cut at its last change point) is kept (`CalibrationCache`) until
its inputs change: new accounting gives a new calibration at the next decision, the same
inputs the same object."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from diamond_jupyter import placement
from diamond_jupyter.calibration import (
    CalibrationCache,
    QueueWait,
    RunSample,
    SiteCalibration,
    WaitSample,
)
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
from diamond_jupyter.store import Store

NOW = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=2)


def _accounting(n: int, ran_s: int) -> list[JobStatus]:
    """`n` finished jobs of the batch partition, each 1 CPU asking 600 s and running
    `ran_s` s and a little more (spread, with no change of regime among them)."""
    return [JobStatus(native_id=str(i), state=JobState.COMPLETED, partition="batch", cpus=1,
                      nodes=1, walltime_s=600, submitted_at=NOW,
                      started_at=NOW + timedelta(seconds=60 * i),
                      ended_at=NOW + timedelta(seconds=60 * i + ran_s + 10 * (i % 3)))
            for i in range(n)]


def _snapshot(site: str) -> SiteSnapshot:
    return SiteSnapshot(
        site=site, taken_at=datetime.now(timezone.utc),
        partitions=[Partition(name="batch", default=True)],
        nodes=[Node(name=f"{site}1", cpus=8, state="idle", partitions=["batch"])])


def _federation(tmp_path: Path, accounting: dict[str, list[JobStatus]]) -> Federation:
    """Two local sites whose views and accounting are the test's (no scheduler); the
    accounting each query returns is `accounting[site]` at the time of the query."""
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name=n, scheduler="slurm", transport=TransportConfig(kind="local"),
        discovery={"enabled": False}) for n in ("alpha", "beta")]),
        store=Store(tmp_path / "s.sqlite"))
    for name, site in fed.sites.items():
        async def snapshot(*, max_age_s: float = 15.0, name: str = name) -> SiteSnapshot:
            return _snapshot(name)

        async def recent_jobs(since: datetime, name: str = name) -> list[JobStatus]:
            return list(accounting[name])
        site.snapshot = snapshot  # type: ignore[method-assign]
        site.recent_jobs = recent_jobs  # type: ignore[method-assign]
    return fed


def _spy_on_place(monkeypatch) -> list[dict[str, SiteCalibration]]:
    """The calibrations every placement decision is given, as it is given them."""
    given: list[dict[str, SiteCalibration]] = []
    real = placement.place

    def place(*args, **kwargs):  # type: ignore[no-untyped-def]
        given.append(kwargs["calibration"])
        return real(*args, **kwargs)
    monkeypatch.setattr(placement, "place", place)
    return given


SPEC = JobSpec(command="true", resources=Resources(nodes=1, cpus_per_task=1, walltime_s=600))


async def test_decisions_between_accounting_queries_reuse_the_calibration(tmp_path,
                                                                        monkeypatch):
    accounting = {"alpha": _accounting(30, 60), "beta": _accounting(40, 300)}
    fed = _federation(tmp_path, accounting)
    given = _spy_on_place(monkeypatch)
    try:
        await fed.place(SPEC)
        await fed.place(SPEC)
        first, second = given
        for site in ("alpha", "beta"):
            assert second[site] is first[site]  # the same inputs: the same object
        assert first["alpha"].samples == 30 and first["beta"].samples == 40
    finally:
        await fed.close()


async def test_new_accounting_is_used_at_the_next_decision(tmp_path, monkeypatch):
    accounting = {"alpha": _accounting(30, 60), "beta": _accounting(40, 300)}
    fed = _federation(tmp_path, accounting)
    given = _spy_on_place(monkeypatch)
    try:
        await fed.place(SPEC)
        old = given[-1]
        # alpha's accounting changes (more jobs, all longer); the next query is due
        accounting["alpha"] = _accounting(35, 400)
        for site in fed._calibrated:
            fed._calibrated[site] = (float("-inf"), fed._calibrated[site][1])
        await fed.place(SPEC)
        new = given[-1]
        assert new["alpha"] is not old["alpha"]
        assert new["alpha"].samples == 35
        fresh = SiteCalibration([RunSample("batch", 1, 600.0, 400.0 + 10 * (i % 3), 0.0)
                                 for i in range(35)])
        assert new["alpha"].ratio("batch", 1).median == fresh.ratio("batch", 1).median
        assert new["alpha"].ratio("batch", 1).median > old["alpha"].ratio("batch", 1).median
        # beta's accounting was queried again and came back the same: kept
        assert new["beta"] is old["beta"]
    finally:
        await fed.close()


def _samples(ran_s: float, n: int = 20) -> list[RunSample]:
    return [RunSample("batch", 1 + i % 4, 600.0, ran_s + 7 * (i % 5), float(i)) for i in range(n)]


def test_equal_inputs_built_anew_are_answered_with_the_kept_object():
    cache = CalibrationCache()
    waits = [WaitSample("batch", 1, 100.0, 50.0 + i, float(i)) for i in range(10)]
    queued = {"7": QueueWait("batch", 1, 30.0)}
    a = cache.site("alpha", _samples(60), wait=waits, queued=queued)
    b = cache.site("alpha", _samples(60), wait=list(waits), queued=dict(queued))
    assert b is a
    assert cache.site("beta", _samples(60)) is not a  # another site, its own


def test_new_recent_waits_keep_the_ratios_and_replace_the_rest():
    cache = CalibrationCache()
    a = cache.site("alpha", _samples(60), queued={"7": QueueWait("batch", 1, 30.0)},
                   own_runtimes={"9": 100.0})
    b = cache.site("alpha", _samples(60), queued={"8": QueueWait("batch", 2, 45.0)},
                   own_runtimes={"9": 100.0})
    assert b is not a
    assert b._ratios is a._ratios  # built once
    assert set(b.queued) == {"8"} and set(a.queued) == {"7"}  # the first one is untouched
    assert b.own_runtimes == {"9": 100.0}
    c = cache.site("alpha", _samples(60), queued={"8": QueueWait("batch", 2, 45.0)},
                   own_runtimes={"9": 200.0})
    assert c.own_runtimes == {"9": 200.0} and c._ratios is a._ratios


def test_new_samples_give_the_calibration_a_fresh_build_gives():
    cache = CalibrationCache()
    old = cache.site("alpha", _samples(60))
    new = cache.site("alpha", _samples(300))
    fresh = SiteCalibration(_samples(300))
    assert new is not old and new._ratios is not old._ratios
    for cpus in (1, 2, 3, 4):
        assert new.ratio("batch", cpus) == fresh.ratio("batch", cpus)
    assert new.ratio("batch", 1) != old.ratio("batch", 1)
    # one sample more, everything else the same, is new input too
    more = cache.site("alpha", [*_samples(300), RunSample("batch", 1, 600.0, 5.0, 99.0)])
    assert more is not new and more.samples == new.samples + 1
