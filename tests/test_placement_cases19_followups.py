"""Follow-ups to the nineteenth sweep (tests/test_placement_cases19.py), on selene read from
its Slurm outputs (tests/test_placement_cases13.py), each against what Slurm documents.

Found misread and fixed:
- Slurm's bf_window (SchedulerParameters, minutes; 1440 unless set) was not read: its
  backfill keeps no slot for a waiting job expected to start past it, so a job that fits
  now may start before it (and delay it); the plan kept every slot however far ahead, and
  a start past the window is now said to be open to that;
- a job waiting on a dependency (reason Dependency) was left out of the queue for good,
  though once its parents end it is ahead of a newer job by priority: squeue's dependency
  field (`-O Dependency`, `%E`) is read, and a job whose parents all run now is counted
  from their planned end;
- in a calibrated view, a job held by a QOS or association limit its running jobs reach
  lost the wait for them (it could start at once);
- a heterogeneous job's components were checked against their QOS's GrpTRES together, but
  against their association's (and its accounts') GrpTRES each alone; and a partition's
  own QOS counted the components of the job's QOS, not those in that partition, against
  its submit limits.
"""

from __future__ import annotations

import pytest
from test_placement_cases import NOW, at, hours, only, reasons, run
from test_placement_cases13 import PARTITIONS, QOS, node_lines, pending, running, selene, slurm
from test_placement_cases19 import BUSY, FOUR, FULL, waiting

from diamond_jupyter.dialects.slurm_commands import QUEUE_JOB_FIELDS, parse_job_dependencies
from diamond_jupyter.placement_sim import build_state, pending_demands, recalibrated


def _first(p):
    return p.ranked[0]


def _said(v, text: str) -> bool:
    return any(text in x for x in v.reasons + v.notes)


def _job_line(jid: str, depends: str = "(null)", state: str = "PD") -> str:
    """One job as `squeue -h -a -O QUEUE_JOB_FIELDS` prints it, its dependency last."""
    return f"{jid}|normal|proj|NO|{state}|cpu=256|N/A|N/A|N/A|4|*|(null)|{depends}|\n"


def _selene(*queue: str, depends: dict[str, str] | None = None, config: str = "",
            alloc: dict[str, int] | None = FULL, assoc_limits: str = ""):
    """selene with `queue` (squeue lines) and each job of `depends` waiting on its
    dependency as squeue's -O line says it; `config`: `scontrol show config`;
    `assoc_limits`: alice's association's fields from ParentName on (`sacctmgr`)."""
    from diamond_jupyter.config import SiteConfig
    outputs = {"partitions": PARTITIONS, "nodes": node_lines(alloc=alloc),
               "queue": "\n".join(queue),
               "queue_qos": "".join(_job_line(j, d) for j, d in (depends or {}).items()),
               "qos": QOS, "reservations": "No reservations in the system\n",
               "assoc": "user|alice\nalice|proj||normal|normal,short,gpuq,wide,capped"
                        f"{'|' + assoc_limits if assoc_limits else ''}\n",
               "config": config}
    snap = slurm.parse_snapshot("selene", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="selene", metadata={"architecture": "x86_64"}), snap


# ---- a dependency on running jobs: ahead from their planned end ------------------------

def test_the_dependency_field_is_asked_and_read():
    assert QUEUE_JOB_FIELDS.endswith(",Dependency:0|")
    text = (_job_line("30", "afterok:21(unfulfilled)") + _job_line("31")
            + _job_line("32", "afterany:21:22(unfulfilled)?afterok:23(unfulfilled)")
            # an older recording, no dependency field
            + "33|normal|proj|NO|PD|cpu=1|N/A|N/A|N/A|1|*|(null)|\n")
    assert parse_job_dependencies(text) == {
        "30": "afterok:21(unfulfilled)",
        "32": "afterany:21:22(unfulfilled)?afterok:23(unfulfilled)"}
    _, snap = _selene(*BUSY, waiting("30", "Dependency"),
                      depends={"30": "afterok:21(unfulfilled)"})
    assert {j.native_id: j.dependency for j in snap.jobs} == {
        "21": None, "22": None, "23": None, "30": "afterok:21(unfulfilled)"}


def test_a_job_whose_parent_runs_is_ahead_from_the_parents_end():
    """bob's job 30 (4 nodes, 10 h) waits for job 21, which ends by its limit at +5 h,
    with n01-n03: from then it is ahead of alice's 4 nodes, +15 h (before: +5 h, job 30
    taken as held for good)."""
    site = _selene(*BUSY, waiting("30", "Dependency"),
                   depends={"30": "afterok:21(unfulfilled)"})
    v = _first(run(FOUR, site))
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "batch", hours(15)), v.notes
    assert _said(v, "partition batch: job 30 waits for job 21 to end (Dependency "
                    "afterok:21(unfulfilled)): from its planned end, +5:00:00, it takes its "
                    "place in the queue by priority, ahead of the job")
    _, snap = site
    queue = pending_demands(snap, build_state(snap, snap.nodes, {}, NOW, {}), {}, NOW, {})
    assert [(d.native_id, d.not_before, d.now_ok) for d in queue] == [("30", 5 * 3600.0,
                                                                        False)]


def test_parents_all_or_any_one():
    """Job 33 (limit 12 h, 1 h run) runs on n04 to +11 h. Waiting for 21 and 33 (',' joins
    terms all of which must be met) job 30 is ahead from +11 h; for either ('?'), from
    +5 h, when 21 ends."""
    late = running("33", "bob", "n04", 64, 11, 12)
    for depends, from_h in (("afterok:21(unfulfilled),afterany:33(unfulfilled)", 11),
                            ("afterok:21(unfulfilled)?afterany:33(unfulfilled)", 5),
                            ("afterok:21:33(unfulfilled)", 11)):
        _, snap = _selene(*BUSY, late, waiting("30", "Dependency"), depends={"30": depends})
        queue = pending_demands(snap, build_state(snap, snap.nodes, {}, NOW, {}), {}, NOW,
                                {})
        assert [d.not_before for d in queue] == [from_h * 3600.0], depends


def test_a_dependency_on_a_job_not_seen_holds_it_as_before():
    """A parent not seen, a singleton whose namesakes are not seen, or no field read:
    nothing known of when it comes, left out (a waiting parent and the other kinds:
    tests/test_placement_cases19_followups2.py)."""
    for depends in ("afterok:99(unfulfilled)", "singleton(unfulfilled)", None):
        site = _selene(*BUSY, waiting("31", "Priority", nodes=1, user="carol"),
                       waiting("30", "Dependency"),
                       depends={"30": depends} if depends else None)
        _, snap = site
        queue = pending_demands(snap, build_state(snap, snap.nodes, {}, NOW, {}), {}, NOW,
                                {})
        assert [d.native_id for d in queue] == ["31"], depends


def test_a_dependency_follows_its_parents_calibrated_end():
    """Calibrated (a job runs at least 3/4 of its limit, else what it has run), job 21
    (5 h of its 10 run) ends at +2.5 h: job 30 waits for that, as a queue built with the
    calibration has it."""
    _, snap = _selene(*BUSY, waiting("30", "Dependency"),
                      depends={"30": "afterok:21(unfulfilled)"})
    ratio = lambda _p, _c, share, _w: max(0.75, share or 0.0)  # noqa: E731
    st = build_state(snap, snap.nodes, {}, NOW, {})
    _, cal = recalibrated(st, pending_demands(snap, st, {}, NOW, {}), ratio)
    fresh = pending_demands(snap, build_state(snap, snap.nodes, {}, NOW, {}, ratio), {}, NOW,
                            {}, ratio)
    assert [d.not_before for d in cal] == [d.not_before for d in fresh] == [2.5 * 3600.0]


# ---- a QOS or association limit keeps its wait in a calibrated view --------------------

def test_a_limit_reached_keeps_its_wait_calibrated():
    """bob's job 30 waits for his QOS's MaxJobsPerUser (QOSMaxJobsPerUserLimit): from the
    first end of his running jobs, +5 h by their limits, +2.5 h calibrated as above. Before:
    0 in the calibrated view, the wait lost (it started at once)."""
    _, snap = _selene(*BUSY, waiting("30", "QOSMaxJobsPerUserLimit", nodes=1))
    st = build_state(snap, snap.nodes, {}, NOW, {})
    queue = pending_demands(snap, st, {}, NOW, {})
    assert [(d.native_id, d.not_before, d.now_ok) for d in queue] == [("30", 5 * 3600.0,
                                                                        False)]
    ratio = lambda _p, _c, share, _w: max(0.75, share or 0.0)  # noqa: E731
    _, cal = recalibrated(st, queue, ratio)
    fresh = pending_demands(snap, build_state(snap, snap.nodes, {}, NOW, {}, ratio), {}, NOW,
                            {}, ratio)
    assert [d.not_before for d in cal] == [d.not_before for d in fresh] == [2.5 * 3600.0]
    assert not cal[0].now_ok


# ---- bf_window: the backfill keeps no slot for a job expected past it --------------------

def _window(minutes: int | None) -> str:
    """`scontrol show config` with SchedulerParameters (bf_window=minutes, or none set)."""
    params = f"bf_window={minutes}," if minutes is not None else ""
    return f"ClusterName = selene\nSchedulerParameters     = {params}default_queue_depth=200\n"


def test_bf_window_is_read_from_scheduler_parameters():
    read = slurm.parse_bf_window
    assert read(_window(60)) == 3600.0
    assert read(_window(None)) == 1440 * 60.0  # Slurm's default
    assert read("SchedulerParameters = (null)\n") == 1440 * 60.0
    assert read("SchedulerParameters = bf_window=x\n") is None
    assert read("") is None  # not read: nothing known
    assert _selene(config=_window(60))[1].bf_window_s == 3600.0


THREE = "#SBATCH -p batch -N 3 -t 10:00:00"


def test_a_job_expected_past_the_window_keeps_no_slot():
    """bob's job 30 (4 nodes, 10 h) is expected at +5 h, when n01-n03 free, with n04-n06.
    alice's 3 nodes for 10 h on n04-n06 now would delay it: with the default window (a
    day) its slot is kept and she starts after it, +15 h; with bf_window=60 (an hour) its
    start is past the window, Slurm's backfill keeps no slot for it, and she starts now
    (before: +15 h whatever the window)."""
    queue = (*BUSY, waiting("30", "Resources", at(5)))
    v = _first(run(THREE, _selene(*queue, config=_window(None))))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(15)), v.notes
    v = _first(run(THREE, _selene(*queue, config=_window(60))))
    assert (v.verdict, v.estimated_start) == ("READY", NOW), v.notes


def test_a_start_past_the_window_is_said_a_lower_bound():
    """alice's 4 nodes start at +15 h, after job 30; with bf_window=60 that is past the
    window: the backfill keeps no slot for her job until then, so a job that fits now may
    start before it and delay it, said."""
    queue = (*BUSY, waiting("30", "Resources", at(5)))
    v = _first(run(FOUR, _selene(*queue, config=_window(60))))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(15)), v.notes
    assert _said(v, "partition batch: the start, +15:00:00, is past Slurm's backfill window "
                    "(bf_window 60 min): the backfill keeps no slot for the job until then, "
                    "so a job that fits now may start before it and delay it")
    v = _first(run(FOUR, _selene(*queue, config=_window(None))))
    assert not _said(v, "bf_window"), v.notes


# ---- hetjobs: an association's GrpTRES over the components; a partition's own QOS ---------

_GPUS = ("#SBATCH -p gpu -N 1 --gres=gpu:a100:{a} -t 1:00:00\n#SBATCH hetjob\n"
         "#SBATCH -p gpu -N 1 --gres=gpu:l40s:{b}")


def test_components_over_an_association_group_limit_in_all_never_start():
    """alice's association allows 4 GPUs at once (GrpTRES gres/gpu=4): 4 A100s and 2 L40S
    each fit alone, but the components start only together. Before: READY, each checked
    alone against it (the QOS's GrpTRES was already summed)."""
    site = _selene(alloc=None, assoc_limits="|gres/gpu=4|||||")
    p = run(_GPUS.format(a=4, b=2), site)
    assert p.verdict("selene").verdict == "INCOMPATIBLE"
    assert reasons(p, "selene") == (
        "hetjob components 0, 1 ask 6 GPUs in all under your association (user alice, "
        "account proj), which allows 4 (GrpTRES gres/gpu=4): each fits alone, but they "
        "start only together, so they never start")
    v = only(run(_GPUS.format(a=2, b=2), site), "selene", "gpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), v.notes


_BATCH_CAPPED = PARTITIONS.replace("QoS=N/A", "QoS=capped", 1)  # batch's own QOS


def _queued_under_capped(n: int):
    """selene, batch's own QOS capped (MaxSubmitJobsPerUser 8), `n` of alice's jobs
    waiting under it."""
    return selene(*[pending(str(80 + i), "alice", 1, 1) for i in range(n)],
                  qos_of={str(80 + i): "capped" for i in range(n)}, partitions=_BATCH_CAPPED)


def test_a_partitions_own_qos_counts_the_components_in_it():
    """Three components in batch under QOS normal, short, normal: each is a job of batch,
    so all three count against batch's QOS capped, 6 + 3 > 8: refused (before: READY, the
    first counted with the one of its own QOS, 6 + 2)."""
    job = ("#SBATCH -p batch -N 1 -n 2 -t 1:00:00 --qos=normal\n#SBATCH hetjob\n"
           "#SBATCH -p batch -N 1 -n 2 --qos=short\n#SBATCH hetjob\n"
           "#SBATCH -p batch -N 1 -n 2 --qos=normal")
    p = run(job, _queued_under_capped(6))
    assert p.verdict("selene").verdict == "RESTRICTED", p.verdict("selene").notes
    assert "QOS capped's MaxSubmitJobsPerUser is 8 and you have 6 jobs queued or running " \
        "under it: the heterogeneous job's 3 components count as 3 jobs" in reasons(p, "selene")


def test_components_outside_the_partition_are_not_counted_by_its_qos():
    """One component in batch, two in gpu, all under QOS normal: only the one in batch
    counts against batch's QOS capped, 6 + 1 (before: refused, all three counted)."""
    job = ("#SBATCH -p batch -N 1 -n 2 -t 1:00:00 --qos=normal\n#SBATCH hetjob\n"
           "#SBATCH -p gpu -N 1 -n 2\n#SBATCH hetjob\n#SBATCH -p gpu -N 1 -n 2")
    v = only(run(job, _queued_under_capped(6)), "selene", "batch")
    assert v.verdict == "READY", v.notes


@pytest.mark.parametrize("seed", range(4))
def test_kept_plans_with_a_window_start_the_probe_as_new_ones(seed, monkeypatch):
    """A plan kept from event to event (`_PlanMemory`) under a window keeps no slot past it
    either: the probe starts as with plans made anew."""
    from dataclasses import replace

    from test_plan_memory import _deep_site

    from diamond_jupyter import placement_sim
    from diamond_jupyter.placement_sim import Demand, earliest_start

    n_nodes, n_jobs = (6, 190) if seed % 2 else (12, 140)
    unbounded, queue = _deep_site(seed, n_nodes, n_jobs)
    st_ = replace(unbounded, window=1200.0)
    probes = [Demand(1, 4, 0, 1800.0, list(range(n_nodes))),
              Demand(2, 8, 0, 600.0, list(range(n_nodes))),
              Demand(1, 1, 0, 60.0, list(range(n_nodes // 2)))]
    kept = [earliest_start(st_, queue, p, reservation="plan") for p in probes]
    plain = [earliest_start(unbounded, queue, p, reservation="plan") for p in probes]
    monkeypatch.setattr(placement_sim._PlanMemory, "_again",
                        lambda self, plan, d, t0, was: plan.reserve(d, t0))
    assert kept == [earliest_start(st_, queue, p, reservation="plan") for p in probes]
    # the window is felt: a job ahead past it keeps no slot, and the jobs after it take
    # earlier ones, the probe's room among them (it may start later as well as sooner)
    assert seed == 2 or kept != plain
