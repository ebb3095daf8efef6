"""Slurm's backfill reserves a start for every waiting job it tests within bf_window, and
squeue's StartTime shows those reservations. Where the engine's view has no room for such
a job at its estimate, its slot is kept there all the same, for every such job (not the
first only, as in `test_placement_cases21`), one-node or wider, an array record's once;
the probe starts early only in a gap that ends by the next slot it would overlap."""

from __future__ import annotations

from datetime import timedelta

from test_placement_cases import NOW

from diamond_jupyter.config import SiteConfig
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

RUN_S = 3000  # every running job's time limit, all started just now: no room before it

# a waiting job: (native id, nodes, CPUs, Slurm's estimate (s from now), reason)
Waiting = tuple[str, int, int, int, str]


def site(full: int, part_full: int, waiting: list[Waiting],
         bf_window_s: float | None = None) -> tuple[SiteConfig, SiteSnapshot]:
    """`full` 64-CPU nodes allocated whole and `part_full` with 40 CPUs allocated (24 free),
    by running jobs to `RUN_S`; the `waiting` jobs in priority order, each asking a time
    limit of 1000 s."""
    names = [f"n{i}" for i in range(1, full + part_full + 1)]
    jobs = [JobStatus(native_id=str(100 + i), state=JobState.RUNNING, user="other",
                      partition="compute", nodes=1, cpus=64 if i < full else 40,
                      walltime_s=RUN_S, started_at=NOW, node_list=name)
            for i, name in enumerate(names)]
    jobs += [JobStatus(native_id=i, state=JobState.PENDING, user="other",
                       partition="compute", nodes=k, cpus=c, walltime_s=1000,
                       estimated_start=NOW + timedelta(seconds=s), reason=why)
             for i, k, c, s, why in waiting]
    nodes = [Node(name=name, state="allocated" if i < full else "mixed", cpus=64,
                  cpus_allocated=64 if i < full else 40, memory_mb=256000,
                  partitions=["compute"]) for i, name in enumerate(names)]
    return SiteConfig(name="s"), SiteSnapshot(
        site="s", taken_at=NOW, nodes=nodes, jobs=jobs, bf_window_s=bf_window_s,
        partitions=[Partition(name="compute", default=True, nodes=names)])


def start_s(s: tuple[SiteConfig, SiteSnapshot], walltime_s: int) -> float:
    """The raw (scheduler-following) start of an 8-CPU probe of `walltime_s`."""
    probe = JobSpec(name="probe", resources=Resources(
        nodes=1, tasks=1, cpus_per_task=8, walltime_s=walltime_s))
    p = place(probe, [s], now=NOW)
    v = p.verdict("s")
    assert v is not None and v.raw_start is not None, p.explain()
    return (v.raw_start - NOW).total_seconds()


def test_every_waiting_job_keeps_its_estimate_not_the_first_only():
    # n2 and n3 have 24 CPUs free, neither room for a 30-CPU job before 3000 s; Slurm
    # plans 201 at 50 s and 202 at 100 s: 201 keeps n2, 202 n3, so a 120 s probe on n3
    # would delay 202 (the first-only rule left 202 at 3000 s and started the probe now)
    s = site(1, 2, [("201", 1, 30, 50, "Resources"), ("202", 1, 30, 100, "Priority")])
    assert start_s(s, 120) >= 50


def test_a_probe_backfills_into_a_gap_that_ends_before_the_next_slot():
    # the same plan: a 40 s probe on n3 ends before 202's slot at 100 s
    s = site(1, 2, [("201", 1, 30, 50, "Resources"), ("202", 1, 30, 100, "Priority")])
    assert start_s(s, 40) == 0


def test_a_wider_job_keeps_its_estimate():
    # a two-node job Slurm plans at 100 s on the two nodes with 24 CPUs free
    s = site(1, 2, [("201", 2, 60, 100, "Resources")])
    assert start_s(s, 120) >= 100
    assert start_s(s, 60) == 0  # the gap before it is open


def test_an_estimate_past_the_backfill_window_is_not_kept_and_keeps_none_from_others():
    # bf_window 20 min: 201's estimate at 2000 s is past it (Slurm reserved nothing for
    # it); 202's at 100 s is a reservation, kept on n2, the only node with room
    s = site(1, 1, [("201", 1, 30, 2000, "Priority"), ("202", 1, 30, 100, "Resources")],
             bf_window_s=1200)
    assert start_s(s, 120) >= 100


def test_a_job_waiting_for_a_limit_keeps_nothing_at_its_estimate():
    # a job held by its association's limit is not one backfill reserves for
    s = site(1, 1, [("201", 1, 30, 100, "AssocGrpCpuLimit")])
    assert start_s(s, 120) == 0


def test_an_array_record_keeps_one_slot_at_its_estimate():
    # squeue gives the record 201_[1-3] one StartTime, its next task's: one slot kept at
    # 100 s (on n2), its other tasks wait for room; n3 stays open to the probe
    s = site(1, 2, [("201_[1-3]", 1, 30, 100, "Resources")])
    assert start_s(s, 120) == 0
    # a single job of the same shape, waiting alone, keeps n2 only as well
    assert start_s(site(1, 2, [("201", 1, 30, 100, "Resources")]), 120) == 0
    # three separate jobs with that estimate keep n2 and n3: the probe waits
    three = [(f"20{k}", 1, 30, 100, "Priority") for k in range(1, 4)]
    assert start_s(site(1, 2, three), 120) >= 100


def test_an_array_record_whose_next_task_has_room_at_its_estimate_keeps_no_more():
    # n2's running job ends at 100 s: the record's next task fits there at its estimate;
    # its other tasks have no estimate of their own, so n3 stays open to the probe
    cfg, snap = site(1, 2, [("201_[1-3]", 1, 30, 100, "Resources")])
    jobs = [j.model_copy(update={"walltime_s": 100}) if j.native_id == "101" else j
            for j in snap.jobs]
    assert start_s((cfg, snap.model_copy(update={"jobs": jobs})), 120) == 0


def with_end(s: tuple[SiteConfig, SiteSnapshot], native_id: str, walltime_s: int
             ) -> tuple[SiteConfig, SiteSnapshot]:
    """`s` with running job `native_id`'s time limit `walltime_s` (it ends then)."""
    cfg, snap = s
    jobs = [j.model_copy(update={"walltime_s": walltime_s}) if j.native_id == native_id
            else j for j in snap.jobs]
    return cfg, snap.model_copy(update={"jobs": jobs})


def test_a_kept_job_past_its_estimate_waits_for_its_own_node():
    # 201's slot is kept on n2 (24 CPUs free) at 50 s; at 50 s the view still has no room
    # for it: it starts when n2 frees up at 3000 s, so a probe reaching past then is not
    # planned on n2 from 50 s (its reservation had gone to n1, whose job also ends then,
    # and the probe took n2 at 50 s)
    s = site(1, 1, [("201", 1, 30, 50, "Resources")])
    assert start_s(s, 3500) == 3000


def test_a_probe_ending_before_a_kept_job_gets_its_node_still_backfills():
    # the same: a probe ending before n2 frees up at 3000 s delays 201 in nothing
    s = site(1, 1, [("201", 1, 30, 50, "Resources")])
    assert start_s(s, 2000) == 50


def test_kept_slots_stay_on_their_nodes_as_their_estimates_pass():
    # 201 kept on n2 at 50 s, 202 on n3 at 100 s; at 50 s 202's slot stays on n3 (it had
    # moved to n2, the lowest index with as many CPUs free, and n3 went to the probe)
    s = site(1, 2, [("201", 1, 30, 50, "Resources"), ("202", 1, 30, 100, "Priority")])
    assert start_s(s, 3500) == 3000
    assert start_s(s, 120) == 50  # a short probe on n2, before 201 gets it


def test_a_kept_job_starts_where_room_comes_first():
    # n1's job ends at 500 s: 201 starts there, not waiting for n2 at 3000 s, so n2 is
    # open to a long probe once 201's estimate has passed
    s = with_end(site(1, 1, [("201", 1, 30, 50, "Resources")]), "100", 500)
    assert start_s(s, 3500) == 50


def test_a_kept_job_past_its_estimate_waits_for_its_node_on_a_big_site():
    # 501 nodes and 21 waiting jobs: past the whole play-out (`PLAN_WORK`), the probe's
    # plan is made again at each event from the last one (`_PlanMemory`); 201's slot on
    # n501 still moves to 3000 s there, not to n1 (20 more jobs, estimated far later)
    later = [(str(5000 + k), 1, 64, 99999, "Priority") for k in range(20)]
    s = site(500, 1, [("201", 1, 30, 50, "Resources"), *later])
    assert start_s(s, 3500) == 3000
    assert start_s(s, 2000) == 50
