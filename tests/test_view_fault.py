"""The view faults that could plan a probe to start at once where it waited (issue 15,
`depth_misleads` seed 123 round 3: alpha planned at 0 s, bound 0, started after 56 s):
own jobs whose native ids an older ended job of the store had (ids repeat once a scheduler
is restarted), waiting jobs whose start the scheduler does not estimate, whole-machine
jobs waiting while two nodes are busy, and a node the view marks as not responding."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from test_placement_cases import _node

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    Job,
    JobSpec,
    JobState,
    JobStatus,
    Partition,
    Resources,
    SiteSnapshot,
)
from diamond_jupyter.placement import place
from diamond_jupyter.store import Store

NOW = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
PROBE = JobSpec(name="probe", command="true", resources=Resources(
    nodes=1, cpus_per_task=8, walltime_s=60))
ALPHA = SiteConfig(name="alpha", speed_factor=1.0)


def _fed(tmp_path) -> Federation:
    return Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite3"))


def _running(nid: str, start: datetime, node: str | None = None) -> JobStatus:
    return JobStatus(native_id=nid, state=JobState.RUNNING, started_at=start, user="me",
                     nodes=1, cpus=8, partition="batch", walltime_s=60, node_list=node)


@pytest.mark.parametrize("old_start,old_end", [
    (None, NOW - timedelta(seconds=40)),  # cancelled while it waited: it never started
    (NOW - timedelta(seconds=50), NOW - timedelta(seconds=30)),  # its start within 60 s
])
async def test_own_running_probes_with_a_reused_id_are_not_taken_as_ended(
        tmp_path, old_start, old_end):
    """The store's older job of the same native id ended before the running one started
    (the scheduler restarted, its ids counted from the start again): the running job is
    another, and holds its node. Before: one that never started, or started within
    SAME_START_S of it, was named ended, its node counted free now."""
    fed = _fed(tmp_path)
    try:
        fed.store.upsert_job(Job(id="alpha:10@run1", site="alpha", native_id="10",
                                 state=JobState.CANCELLED, started_at=old_start,
                                 ended_at=old_end))
        fed.store.upsert_job(Job(id="alpha:10", site="alpha", native_id="10",
                                 state=JobState.RUNNING, started_at=NOW - timedelta(seconds=15)))
        view = SiteSnapshot(site="alpha", taken_at=NOW, jobs=[
            _running("10", NOW - timedelta(seconds=15))])
        assert fed.ended_in_view({"alpha": view}) == {}
        # the same job ended (its end heard before the view dropped it) is still named
        fed.store.upsert_job(Job(id="alpha:10", site="alpha", native_id="10",
                                 state=JobState.COMPLETED, started_at=NOW - timedelta(seconds=15),
                                 ended_at=NOW - timedelta(seconds=1)))
        assert fed.ended_in_view({"alpha": view}) == {"alpha": {"10"}}
    finally:
        await fed.close()


def _alpha(node_states: dict[str, str] | None = None, estimate: float | None = None,
           reason: str = "Priority") -> SiteSnapshot:
    """Seed 123's alpha at round 3 (as `bed_oracle` rebuilt it): four nodes of 8 CPUs, two
    earlier probes running on an1 and an2, six jobs waiting that each ask all four nodes,
    with the scheduler's start estimate `estimate` (s from now; None: unknown)."""
    states = {"an1": "allocated", "an2": "allocated", "an3": "idle", "an4": "idle",
              **(node_states or {})}
    nodes = [_node(n, 8, 0, ["batch"], state=s, alloc=8 if n in ("an1", "an2") else 0)
             for n, s in states.items()]
    jobs = [_running("10", NOW - timedelta(seconds=14), "an1"),
            _running("16", NOW - timedelta(seconds=7), "an2")]
    at = None if estimate is None else NOW + timedelta(seconds=estimate)
    jobs += [JobStatus(native_id=str(17 + i), state=JobState.PENDING, user="load", nodes=4,
                       cpus=cpus, partition="batch", reason=reason, walltime_s=limit,
                       estimated_start=at)
             for i, (cpus, limit) in enumerate([(32, 1560), (32, 180), (8, 1200), (16, 1320),
                                                (32, 5520), (4, 1980)])]
    return SiteSnapshot(site="alpha", taken_at=NOW, nodes=nodes, jobs=jobs,
                        partitions=[Partition(name="batch", default=True)])


def planned_start_s(view: SiteSnapshot, now: datetime = NOW, **known) -> float:
    """When placement plans `PROBE` on alpha's `view` at `now`: seconds from `now`."""
    got = place(PROBE, [(ALPHA, view)], now=now, **known).verdict("alpha").estimated_start
    return (got - now) / timedelta(seconds=1)


@pytest.mark.parametrize("reason", ["Priority", "Resources", "None"])
def test_whole_machine_jobs_waiting_without_a_start_estimate_hold_the_probe(reason):
    """Waiting for priority or resources, start unknown, each asking all four nodes while
    two are busy: the probe (60 s) cannot start before them without delaying the first
    (the probes end within a minute), so it waits for all six."""
    assert planned_start_s(_alpha(reason=reason)) > 10000.0
    # the scheduler's estimate (the first when the probes' limits end) changes nothing
    assert planned_start_s(_alpha(estimate=46.0, reason=reason)) > 10000.0


def test_the_two_running_probes_known_ended_do_not_make_it_start_at_once():
    """Even with both running probes counted as ended (`ended`), the first waiting job
    takes the four nodes now: no 0 s from that alone."""
    assert planned_start_s(_alpha(), ended={"alpha": {"10", "16"}}) > 10000.0


def test_held_waiting_jobs_block_nobody():
    """Held (a dependency, a begin time, a user hold): they wait for no resources, the
    probe starts now on an idle node."""
    for reason in ("Dependency", "BeginTime", "JobHeldUser"):
        assert planned_start_s(_alpha(reason=reason)) == 0.0


@pytest.mark.parametrize("state", ["down*", "drain"])
def test_one_node_down_turns_the_whole_machine_jobs_into_none_waiting(state):
    """Found for seed 123: one of the four nodes out of the view for good (down or
    drained) leaves three, the six jobs asking four can never start and block nobody, and
    the probe is planned at 0 s with a 0 s bound: the recorded round exactly. The scheduler
    does the same while the node stays out."""
    for node in ("an1", "an4"):
        assert planned_start_s(_alpha({node: state})) == 0.0


@pytest.mark.parametrize("state", ["idle*", "allocated*"])
def test_one_node_not_responding_keeps_the_whole_machine_jobs_waiting(state):
    """Sinfo's `*` alone (not responding, as a busy test bed's slurmd may be for a moment)
    was read as out for good, so the six jobs asking four nodes could never start; slurmctld
    sets such a node DOWN only after SlurmdTimeout, so it is capacity, back within it at
    the latest (sweep 18): the jobs wait for it. Marked on an1 (a probe running there), the
    first of them takes the four nodes when that probe ends and the probe waits behind them
    all; marked on idle an4, back by 300 s, the 60 s probe still fits on an3 before the
    first of them can start, as Slurm's backfill would place it."""
    assert planned_start_s(_alpha({"an1": state})) > 10000.0
    assert planned_start_s(_alpha({"an4": state})) == 0.0
