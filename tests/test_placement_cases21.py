"""A Slurm start estimate the engine's plan has no room for (issue 15): the view of beta
that seed 137's round 3 of real logs was decided on (`misses-seed137.md`), where the
probe was planned to start at once and Slurm never started it. Each running job's node
is one attribution the view allows (the view does not keep node lists)."""

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

# (native id, CPUs, start or Slurm's estimate (s from now), time limit (s)); the last
# running one, 201423, is the user's previous probe
RUNNING = [("201391", 19, -64, 360), ("201392", 1, -64, 3180), ("201393", 1, -64, 4980),
           ("201394", 2, -63, 2220), ("201395", 5, -63, 120), ("201396", 1, -63, 3780),
           ("201397", 1, -63, 3780), ("201398", 1, -63, 3780), ("201399", 4, -63, 1740),
           ("201400", 9, -63, 1800), ("201401", 9, -63, 1860), ("201402", 19, -44, 1020),
           ("201403", 19, -43, 1020), ("201404", 19, -38, 1020), ("201423", 8, -13, 60)]
WAITING = [("201405", 19, 57, 1020), ("201406", 19, 982, 1020), ("201407", 19, 1071, 1020),
           ("201408", 19, 1971, 1020), ("201409", 19, 2091, 1020)]


def beta(on_bn1: set[str]) -> tuple[SiteConfig, SiteSnapshot]:
    """beta's two 64-CPU nodes as sinfo gave them (bn1 full, bn2 46 allocated), its
    running jobs on bn1 when named in `on_bn1`, else on bn2; the first waiting job
    blocked on Resources, the rest on Priority."""
    jobs = [JobStatus(native_id=i, state=JobState.RUNNING, user="diamondtb",
                      partition="compute", nodes=1, cpus=c, walltime_s=w,
                      started_at=NOW + timedelta(seconds=s),
                      node_list="bn1" if i in on_bn1 else "bn2")
            for i, c, s, w in RUNNING]
    jobs += [JobStatus(native_id=i, state=JobState.PENDING, user="diamondtb",
                       partition="compute", nodes=1, cpus=c, walltime_s=w,
                       estimated_start=NOW + timedelta(seconds=s),
                       reason="Resources" if k == 0 else "Priority")
             for k, (i, c, s, w) in enumerate(WAITING)]
    nodes = [Node(name="bn1", state="allocated", cpus=64, cpus_allocated=64,
                  memory_mb=256000, partitions=["compute"]),
             Node(name="bn2", state="mixed", cpus=64, cpus_allocated=46,
                  memory_mb=256000, partitions=["compute"])]
    return SiteConfig(name="beta"), SiteSnapshot(
        site="beta", taken_at=NOW, nodes=nodes, jobs=jobs,
        partitions=[Partition(name="compute", default=True, nodes=["bn[1-2]"])])


PROBE = JobSpec(name="probe", resources=Resources(nodes=1, tasks=1, cpus_per_task=8,
                                                  walltime_s=60))


def start_s(on_bn1: set[str]) -> float:
    p = place(PROBE, [beta(on_bn1)], now=NOW)
    v = p.verdict("beta")
    assert v is not None and v.raw_start is not None, p.explain()
    return (v.raw_start - NOW).total_seconds()


def test_a_probe_does_not_take_the_room_slurm_plans_its_top_job_in():
    # the 5-CPU job whose end at 57 s gives 201405 its estimate counted on bn1: the view
    # has no node with 19 CPUs free at 57 s, Slurm has; the probe (to 60 s) would run into
    # that slot, so Slurm's backfill does not start it now
    on_bn1 = {"201391", "201392", "201394", "201395", "201400", "201401", "201402"}
    assert start_s(on_bn1) >= 57


def test_where_the_view_holds_slurms_plan_the_probe_waits_for_the_room_after_it():
    # the attribution that agrees with sinfo and Slurm's estimate: 201395 and the user's
    # ended probe on bn2; 201405 takes bn2 at 57 s, the probe fits on bn1 at 296 s
    on_bn1 = {"201392", "201393", "201394", "201396", "201397", "201398", "201402",
              "201403", "201404"}
    assert start_s(on_bn1) == 296
