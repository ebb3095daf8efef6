"""The user's own queued and running jobs are planned at their own runtimes.

A site's calibrated plan runs each job at its class's runtime / request ratio, learned from
other users' jobs. The user's own jobs there are not other users': under `depth_misleads`
alpha's load ran about 0.4% of its requests while the benchmark's probes (one per round,
1 node x 8 CPUs, 60 s asked, 20 s run) ran a third of theirs, so each earlier probe still
queued or running ahead of a new one was planned to end within a second. Alpha was
predicted 0-40 s where it started probes after 17-91 s (seeds 109-110, issue 15). The
engine knows its own jobs (the store) and what the user's jobs of that kind ran before
(`Federation.runtime_history`): it plans them at that (`SiteCalibration.own_runtimes`)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from diamond_jupyter.calibration import RunSample, SiteCalibration
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
from diamond_jupyter.placement import place
from diamond_jupyter.store import Store

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PROBE = JobSpec(name="probe", command="sleep 20", resources=Resources(
    nodes=1, tasks=1, cpus_per_task=8, walltime_s=60))


def load_history() -> SiteCalibration:
    """Other users' 8-CPU jobs: 1,800 s asked, 8 s run (0.44%), as alpha's load ran."""
    return SiteCalibration([RunSample("batch", 8, 1800.0, 8.0, float(i)) for i in range(30)])


def site(*jobs: JobStatus) -> SiteSnapshot:
    """One node of 8 CPUs, taken by the running job among `jobs`."""
    busy = sum(j.cpus or 0 for j in jobs if j.state == JobState.RUNNING)
    return SiteSnapshot(site="alpha", taken_at=NOW, partitions=[Partition(
        name="batch", default=True)], nodes=[Node(
            name="an1", cpus=8, cpus_allocated=busy, state="mixed" if busy else "idle",
            partitions=["batch"])], jobs=list(jobs))


def running(nid: str, started_s_ago: float) -> JobStatus:
    return JobStatus(native_id=nid, state=JobState.RUNNING, partition="batch", nodes=1,
                     cpus=8, walltime_s=60, node_list="an1",
                     started_at=NOW - timedelta(seconds=started_s_ago))


def waiting(nid: str) -> JobStatus:
    return JobStatus(native_id=nid, state=JobState.PENDING, partition="batch", nodes=1,
                     cpus=8, walltime_s=60, reason="Resources",
                     submitted_at=NOW - timedelta(seconds=1))


def start_and_bound(snap: SiteSnapshot, cal: SiteCalibration) -> tuple[float, float]:
    v = place(PROBE, [(SiteConfig(name="alpha"), snap)], now=NOW,
              calibration={"alpha": cal}).verdict("alpha")
    assert v is not None and v.estimated_start is not None and v.start_bound is not None
    return ((v.estimated_start - NOW).total_seconds(),
            (v.start_bound - NOW).total_seconds())


def test_an_own_running_job_holds_its_node_for_its_own_runtime_not_its_class_ratio():
    snap = site(running("7", started_s_ago=1))  # just started: within the clock's slack
    as_others, _ = start_and_bound(snap, load_history())
    assert as_others < 2  # 60 s x 0.44%: planned to end at once (the fault)
    cal = load_history()
    cal.own_runtimes = {"7": 20.0}
    start, bound = start_and_bound(snap, cal)
    assert start == pytest.approx(19.0, abs=0.5)  # 20 s run, 1 s of it done
    assert bound >= start


def test_own_jobs_queued_ahead_run_their_runtimes_before_the_new_one():
    snap = site(running("7", started_s_ago=1), waiting("8"), waiting("9"))
    as_others, _ = start_and_bound(snap, load_history())
    assert as_others < 4
    cal = SiteCalibration([RunSample("batch", 8, 1800.0, 8.0, float(i)) for i in range(30)],
                          own_runtimes={"7": 20.0, "8": 20.0, "9": 20.0})
    start, bound = start_and_bound(snap, cal)
    assert start == pytest.approx(19.0 + 20.0 + 20.0, abs=1.0)
    assert bound >= start


def test_other_users_jobs_keep_their_class_ratio():
    """Only the jobs named are planned at their runtimes: another user's job of the same
    shape still ends as its class does."""
    snap = site(running("7", started_s_ago=1), waiting("8"))
    cal = SiteCalibration([RunSample("batch", 8, 1800.0, 8.0, float(i)) for i in range(30)],
                          own_runtimes={"8": 20.0})
    start, _ = start_and_bound(snap, cal)
    assert start == pytest.approx(1.0 + 20.0, abs=1.0)  # 7 ends at once, then 8 runs 20 s


def test_an_own_job_far_past_its_expected_runtime_ends_as_its_class_says():
    """Run well past what the user's jobs of its kind ran, its own runtime says nothing of
    its end: its class's conditioned runtime does (here: halfway to the walltime, as a job
    past every finished one of its class)."""
    snap = site(running("7", started_s_ago=40))
    cal = load_history()
    cal.own_runtimes = {"7": 20.0}
    start, _ = start_and_bound(snap, cal)
    without, _ = start_and_bound(snap, load_history())
    assert start == pytest.approx(without)


def _job(nid: str, state: JobState, app: str, walltime_s: int, ran_s: float | None = None
         ) -> Job:
    spec = JobSpec(name="j", command="true", metadata={"application": app},
                   resources=Resources(nodes=1, tasks=1, cpus_per_task=8,
                                       walltime_s=walltime_s))
    ended = None if ran_s is None else NOW + timedelta(seconds=ran_s)
    return Job(id=f"alpha:{nid}", site="alpha", native_id=nid, state=state, spec=spec,
               submitted_at=NOW, started_at=NOW if ran_s is not None else None,
               ended_at=ended)


async def test_the_calibration_carries_the_users_queued_jobs_runtimes(tmp_path):
    """From the store: a queued or running job of an application that ran before runs
    what it ran (over the site's speed), never past its walltime; one of a kind never
    run runs the share of their walltime the user's jobs ran; a finished one is none."""
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", scheduler="slurm", speed_factor=2.0,
        transport=TransportConfig(kind="local"))]), store=Store(tmp_path / "s.sqlite"))
    try:
        for i, ran in enumerate([40.0, 44.0, 48.0, 52.0, 56.0]):  # at speed 2: 80-112 s
            fed.store.upsert_job(_job(str(i), JobState.COMPLETED, "probe", 300, ran))
        fed.store.upsert_job(_job("10", JobState.PENDING, "probe", 300))
        fed.store.upsert_job(_job("11", JobState.RUNNING, "probe", 60))
        fed.store.upsert_job(_job("12", JobState.PENDING, "other", 200))
        history, share = fed.runtime_history()
        assert history["probe"] == pytest.approx(96.0) and share is not None
        fed._calibrated["alpha"] = (time.monotonic(), [])
        cal = (await fed.calibration(fetch=False))["alpha"]
        assert cal.own_runtimes == {"10": pytest.approx(48.0), "11": pytest.approx(48.0),
                                    "12": pytest.approx(200 * share / 2.0)}
        assert fed.own_runtimes()["alpha"] == cal.own_runtimes
    finally:
        await fed.close()


def test_own_runtime_plans_are_kept_per_spec_site_speed_and_history(monkeypatch):
    """`OwnRuntimePlans` (pure, below the facade) plans a job once while its spec object,
    site, speed and the history stand; any of them changed plans it again, and a job no
    longer given is forgotten."""
    import diamond_jupyter.placement as placement

    planned: list[str] = []
    plan = placement.planned_runtime

    def counted(spec: JobSpec, *args):
        planned.append(spec.name or "")
        return plan(spec, *args)
    monkeypatch.setattr(placement, "planned_runtime", counted)
    md = JobSpec(name="md", command="x", metadata={"application": "md"},
                 resources=Resources(walltime_s=600))
    unknown = JobSpec(name="unknown", command="x")  # no application, no walltime
    jobs = [Job(id="alpha:1", site="alpha", native_id="1", spec=md),
            Job(id="beta:2", site="beta", native_id="2", spec=md),
            Job(id="alpha:3", site="alpha", native_id="3", spec=unknown),
            Job(id="alpha:4", site="alpha", native_id=None, spec=md),  # not submitted yet
            Job(id="gone:5", site="gone", native_id="5", spec=md)]  # no such site
    plans = placement.OwnRuntimePlans()
    speeds = {"alpha": 1.0, "beta": 2.0}
    got = plans.runtimes(jobs, speeds, {"md": 120.0}, 0.5)
    assert got == {"alpha": {"1": 120.0}, "beta": {"2": 60.0}}  # 3: its class's ratio
    assert planned == ["md", "md", "unknown"]
    assert plans.runtimes(jobs, speeds, {"md": 120.0}, 0.5) == got
    assert len(planned) == 3  # nothing planned again
    faster = {"alpha": 1.0, "beta": 4.0}
    assert plans.runtimes(jobs, faster, {"md": 120.0}, 0.5)["beta"] == {"2": 30.0}
    assert len(planned) == 4  # beta's job alone
    again = [jobs[0].model_copy(update={"spec": md.model_copy()}), *jobs[1:]]
    plans.runtimes(again, faster, {"md": 120.0}, 0.5)
    assert len(planned) == 5  # another spec object: alpha:1 planned again
    assert plans.runtimes(again, faster, {"md": 900.0}, 0.5)["alpha"] == {"1": 600.0}
    assert len(planned) == 8  # a new history plans every job (never past the walltime)
    plans.runtimes(again[1:], faster, {"md": 900.0}, 0.5)
    plans.runtimes(again, faster, {"md": 900.0}, 0.5)
    assert len(planned) == 9  # alpha:1 was forgotten when it was not given
