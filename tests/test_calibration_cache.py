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


def test_equal_inputs_reuse_the_ratios_without_building_the_samples():
    """Keyed on what the samples are made of (`inputs`): while it is the same, the samples
    are not built (nor compared); when it changes they are, and equal samples still keep
    the object."""
    cache = CalibrationCache()
    built: list[int] = []

    def samples(ran_s: float = 60.0) -> list[RunSample]:
        built.append(1)
        return _samples(ran_s)
    read = (1.0, ["the accounting read"])
    a = cache.site("alpha", samples, inputs=(read, "x"))
    assert (len(built), a.samples) == (1, 20)
    assert cache.site("alpha", samples, inputs=(read, "x")) is a and len(built) == 1
    # another read with the same records: built and compared, the same calibration
    assert cache.site("alpha", samples, inputs=((2.0, ["the accounting read"]), "x")) is a
    assert len(built) == 2
    # new records: a new calibration, as a fresh build gives it
    new = cache.site("alpha", lambda: samples(300.0), inputs=((3.0, ["new"]), "x"))
    assert new is not a and new.ratio("batch", 1) == SiteCalibration(_samples(300)).ratio(
        "batch", 1)
    # no inputs: the samples are compared, as before
    assert cache.site("alpha", _samples(300)) is new


def _own_job(nid: str, ended: datetime) -> Job:
    spec = JobSpec(command="true", queue="batch",
                   resources=Resources(nodes=1, cpus_per_task=1, walltime_s=600))
    return Job(id=f"alpha:{nid}", site="alpha", native_id=nid, state=JobState.COMPLETED,
               spec=spec, submitted_at=ended - timedelta(seconds=300),
               started_at=ended - timedelta(seconds=200), ended_at=ended)


async def test_a_decision_between_queries_does_not_walk_the_accounting_again(tmp_path,
                                                                          monkeypatch):
    """The samples (a walk of every accounting record) are built once per accounting read:
    a later decision on the same read neither builds nor compares them, and a new read
    (due after the TTL) builds them again."""
    accounting = {"alpha": _accounting(30, 60), "beta": _accounting(40, 300)}
    fed = _federation(tmp_path, accounting)
    walks: list[str] = []
    real = fed._calibration_samples

    def spy(n, *args):  # type: ignore[no-untyped-def]
        walks.append(n)
        return real(n, *args)
    monkeypatch.setattr(fed, "_calibration_samples", spy)
    try:
        first = await fed.calibration()
        assert sorted(walks) == ["alpha", "beta"]
        again = await fed.calibration()
        assert sorted(walks) == ["alpha", "beta"]  # no walk
        assert again["alpha"] is first["alpha"] and again["beta"] is first["beta"]
        for site in fed._calibrated:  # the next query is due
            fed._calibrated[site] = (float("-inf"), fed._calibrated[site][1])
        await fed.calibration()
        assert sorted(walks) == ["alpha", "alpha", "beta", "beta"]
    finally:
        await fed.close()


async def test_new_own_history_is_used_at_the_next_decision_on_the_same_accounting(
        tmp_path):
    """No new accounting read, but the store's jobs changed: an accounting record that is
    now the user's own ended job (the store's `alpha:3`) no longer calibrates the queue as
    other users' work; and on a site with no accounting, the store's own jobs stand in, a
    new one counted as soon as it ends."""
    accounting = {"alpha": _accounting(30, 60), "beta": []}
    fed = _federation(tmp_path, accounting)
    try:
        first = await fed.calibration()
        assert first["alpha"].samples == 30 and first["beta"].exact(("*", "*")) is None
        asked = dict(fed._calibrated)
        fed.store.upsert_job(_own_job("3", datetime.now(timezone.utc)))
        second = await fed.calibration()
        assert fed._calibrated == asked  # the same accounting reads
        assert second["alpha"] is not first["alpha"] and second["alpha"].samples == 29
        beta = [_own_job(str(100 + i), datetime.now(timezone.utc)).model_copy(update={
            "id": f"beta:{100 + i}", "site": "beta"}) for i in range(6)]
        for job in beta[:5]:
            fed.store.upsert_job(job)
        third = await fed.calibration()
        assert third["beta"].samples == 5
        fed.store.upsert_job(beta[5])
        assert (await fed.calibration())["beta"].samples == 6
    finally:
        await fed.close()
