"""Second follow-ups to the nineteenth sweep: jobs waiting on a dependency (squeue's
`-O Dependency`, reason Dependency), on selene read from its Slurm outputs, each kind read
as sbatch's --dependency documents it.

Found misread and fixed (tests/test_placement_cases19_followups.py counted only a job
whose parents all run, from their planned end, and left every other one out):
- a job whose parent is itself waiting (a chain) was left out of the queue: it is now
  counted from its parent's start or end in the simulation's plan, chains followed up to
  `placement_deps.MAX_CHAIN` deep, a cycle's jobs left out;
- `after` (the parent's start, `+M` minutes after it), `aftercorr` (an array's tasks
  each after the parent's task of its rank), and `singleton` (after the jobs of its name
  and user: running, or waiting ahead of it) were left out; `afternotok`, which waits for
  a failure, was counted from the parent's end: parents are taken to succeed, so it is
  not counted at all, and said;
- the note of a job waiting on `afterok` did not say its parent is taken to succeed.
"""

from __future__ import annotations

import pytest
from test_placement_cases import NOW, hours, run
from test_placement_cases13 import running
from test_placement_cases19 import BUSY, FOUR, waiting
from test_placement_cases19_followups import _first, _said, _selene

from diamond_jupyter import placement_deps
from diamond_jupyter.placement_deps import parse_dependency
from diamond_jupyter.placement_sim import build_state, pending_demands, queue_starts


def _named(line: str, name: str) -> str:
    """A squeue line (`running`, `waiting`) with its job name (the last field) set."""
    return line.rsplit("|", 1)[0] + f"|{name}"


def _queue(*lines: str, depends: dict[str, str]):
    """selene's waiting jobs as demands (walltime view) and when each starts in Slurm's
    plan played out, by native id."""
    _, snap = _selene(*lines, depends=depends)
    st = build_state(snap, snap.nodes, {}, NOW, {})
    queue = pending_demands(snap, st, {}, NOW, {})
    return queue, queue_starts(st, queue, "plan")


H = 3600.0


# ---- chains: a parent still waiting ------------------------------------------------------

def test_a_chained_job_is_counted_from_its_waiting_parents_end_in_the_plan():
    """bob's job 30 (4 nodes, 10 h) waits for running job 21 (ends +5 h); carol's job 31
    (4 nodes, 10 h) waits for job 30: it starts when 30 ends in the plan, +15 h, and is
    ahead of alice's 4 nodes, who start after it, +25 h (before: 31 left out, +15 h)."""
    lines = (*BUSY, waiting("30", "Dependency"), waiting("31", "Dependency", user="carol"))
    depends = {"30": "afterok:21(unfulfilled)", "31": "afterok:30(unfulfilled)"}
    _, starts = _queue(*lines, depends=depends)
    assert starts == {"30": 5 * H, "31": 15 * H}
    v = _first(run(FOUR, _selene(*lines, depends=depends)))
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "batch", hours(25)), v.notes
    assert _said(v, "partition batch: job 31 waits for job 30 to end (Dependency "
                    "afterok:30(unfulfilled)): from its planned end in the plan (job 30 "
                    "waiting itself), +15:00:00, it takes its place in the queue by "
                    "priority, ahead of the job; job 30 taken to succeed (afterok: should "
                    "it fail, job 31 never starts, and the job may start sooner)")


def test_a_chain_under_every_reservation_kind_and_listed_before_its_parent():
    """The child listed ahead of its parent (a higher priority) still waits for it, under
    Slurm's plan, EASY backfill and none: 31 waits for 30, which starts at +5 h."""
    lines = (*BUSY, waiting("31", "Dependency", user="carol"), waiting("30", "Dependency"))
    _, snap = _selene(*lines, depends={"30": "afterok:21(unfulfilled)",
                                       "31": "afterany:30(unfulfilled)"})
    st = build_state(snap, snap.nodes, {}, NOW, {})
    queue = pending_demands(snap, st, {}, NOW, {})
    for res in ("plan", "easy", "none"):
        assert queue_starts(st, queue, res) == {"30": 5 * H, "31": 15 * H}, res


@pytest.mark.parametrize("plan_work", [None, 0])
def test_alice_waits_behind_the_chain_whatever_the_plans_reach(plan_work, monkeypatch):
    """Slurm's plan played out whole, or (PLAN_WORK 0: a big site) only the probe's plan
    over EASY: alice's 4 nodes start at +25 h behind 30 and 31, in either order."""
    from diamond_jupyter import placement_sim
    if plan_work is not None:
        monkeypatch.setattr(placement_sim, "PLAN_WORK", plan_work)
    depends = {"30": "afterok:21(unfulfilled)", "31": "afterok:30(unfulfilled)"}
    for jobs in ((waiting("30", "Dependency"), waiting("31", "Dependency", user="carol")),
                 (waiting("31", "Dependency", user="carol"), waiting("30", "Dependency"))):
        v = _first(run(FOUR, _selene(*BUSY, *jobs, depends=depends)))
        assert v.estimated_start == hours(25), v.notes


def test_a_chain_deeper_than_the_bound_is_left_out(monkeypatch):
    """Each of jobs 30..33 waits for the one before (30 for running 21): with the bound
    at 2 waiting parents, 33 (3 deep) is left out, the others counted in turn."""
    monkeypatch.setattr(placement_deps, "MAX_CHAIN", 2)
    lines = [*BUSY] + [waiting(str(30 + i), "Dependency", nodes=1) for i in range(4)]
    depends = {"30": "afterok:21(unfulfilled)",
               **{str(31 + i): f"afterok:{30 + i}(unfulfilled)" for i in range(3)}}
    queue, starts = _queue(*lines, depends=depends)
    assert [d.native_id for d in queue] == ["30", "31", "32"]
    assert starts == {"30": 5 * H, "31": 15 * H, "32": 25 * H}


def test_a_cycle_is_left_out_and_the_rest_counted():
    """30 and 31 wait for each other (Slurm refuses that at submit; a stale read may show
    it): both left out, nothing hangs; 32, waiting for running 21, is counted."""
    lines = (*BUSY, waiting("30", "Dependency", nodes=1), waiting("31", "Dependency", nodes=1),
             waiting("32", "Dependency", nodes=1))
    queue, starts = _queue(*lines, depends={"30": "afterok:31(unfulfilled)",
                                            "31": "afterok:30(unfulfilled)",
                                            "32": "afterok:21(unfulfilled)"})
    assert [d.native_id for d in queue] == ["32"]
    assert starts == {"32": 5 * H}


def test_a_parent_that_never_starts_here_leaves_its_child_out():
    """Job 31 waits for job 30, held by its user (JobHeldUser): 30 is not in the queue,
    so nothing is known of 31 either."""
    queue, _ = _queue(*BUSY, waiting("30", "JobHeldUser"), waiting("31", "Dependency"),
                      depends={"31": "afterok:30(unfulfilled)"})
    assert queue == []


# ---- the kinds, as Slurm means them -----------------------------------------------------

def test_after_counts_from_the_parents_start_and_its_delay():
    """`after:30`: once 30 starts (+5 h); `after:30+60`: an hour after; on running job
    21 that started 5 h ago, `after:21+600` (10 h): +5 h from now."""
    base = (*BUSY, waiting("30", "Dependency"), waiting("31", "Dependency", nodes=1))
    for depends, from_h in (("after:30(unfulfilled)", 5), ("after:30+60(unfulfilled)", 6)):
        _, starts = _queue(*base, depends={"30": "afterok:21(unfulfilled)", "31": depends})
        assert starts["31"] == from_h * H, depends
    queue, _ = _queue(*BUSY, waiting("31", "Dependency", nodes=1),
                      depends={"31": "after:21+600(unfulfilled)"})
    assert [(d.native_id, d.not_before) for d in queue] == [("31", 5 * H)]


def test_afternotok_is_not_counted_and_said():
    """`afternotok:21` waits for 21 to fail; parents are taken to succeed: not counted
    (before: from 21's end, +5 h, ahead of alice, who then started at +15 h)."""
    lines = (*BUSY, waiting("30", "Dependency"))
    depends = {"30": "afternotok:21(unfulfilled)"}
    queue, _ = _queue(*lines, depends=depends)
    assert queue == []
    v = _first(run(FOUR, _selene(*lines, depends=depends)))
    assert v.estimated_start == hours(5), v.notes
    assert _said(v, "partition batch: job 30 waits for job 21 to fail (Dependency "
                    "afternotok:21(unfulfilled)): parents are taken to succeed, so it is not "
                    "counted ahead of the job")
    # either of a success or a failure (`?`): from its end
    queue, _ = _queue(*lines, depends={
        "30": "afternotok:21(unfulfilled)?afterok:21(unfulfilled)"})
    assert [d.not_before for d in queue] == [5 * H]


def test_aftercorr_frees_an_arrays_tasks_one_by_one():
    """Array 41's two tasks wait on array 40's, task by task (aftercorr): 40_1 ends at
    +2 h, 40_2 at +5 h; 41's first lane from +2 h, its second from +5 h (afterok: both
    from +5 h, the whole array's end)."""
    lines = (running("40_1", "bob", "n01", 64, 2, 10), running("40_2", "bob", "n02", 64, 5, 10),
             waiting("41_[1-2]", "Dependency", nodes=1))
    queue, _ = _queue(*lines, depends={"41_[1-2]": "aftercorr:40_*(unfulfilled)"})
    assert sorted(d.not_before for d in queue) == [2 * H, 5 * H]
    queue, _ = _queue(*lines, depends={"41_[1-2]": "afterok:40_*(unfulfilled)"})
    assert [d.not_before for d in queue] == [5 * H, 5 * H]


def test_singleton_waits_for_its_namesakes_running_and_ahead():
    """bob's job 31 named `step` is a singleton: his running `step` (21, ends +5 h) and
    his `step` 30 waiting ahead of it (1 node, 10 h, starts now on a free node) run before
    it: it starts when the last ends, +10 h. carol's `step` and bob's other names do not
    count."""
    lines = (_named(BUSY[0], "step"), *BUSY[1:],
             _named(waiting("30", "Priority", nodes=1), "step"),
             _named(waiting("29", "Priority", nodes=1, user="carol"), "step"),
             _named(waiting("31", "Dependency", nodes=1), "step"))
    _, starts = _queue(*lines, depends={"31": "singleton(unfulfilled)"})
    assert starts == {"30": 0.0, "29": 0.0, "31": 10 * H}


@pytest.mark.parametrize(("text", "kinds", "every"), [
    ("afterok:21:22(unfulfilled),after:23+5(unfulfilled)", {"afterok", "after"}, True),
    ("afterany:21(unfulfilled)?aftercorr:22_*(unfulfilled)", {"afterany", "aftercorr"}, False),
    ("singleton(unfulfilled)", {"singleton"}, True),
])
def test_the_field_reads(text, kinds, every):
    dep = parse_dependency(text)
    assert dep is not None and (dep.kinds(), dep.every) == (kinds, every)


def test_met_failed_or_unread_terms():
    """A met term is dropped (met, one joined by `?` frees the job); a failed one, both
    joiners, or another shape is not read."""
    dep = parse_dependency("afterok:21(fulfilled),afterany:22(unfulfilled)")
    assert dep is not None and [t.parents for t in dep.terms] == [(("22", 0.0),)]
    dep = parse_dependency("afterok:21(fulfilled)?afterany:22(unfulfilled)")
    assert dep is not None and dep.terms == ()
    for text in ("afterok:21(failed)", "afterok:21(unfulfilled),afterok:22(unfulfilled)?"
                 "afterok:23(unfulfilled)", "afterburst:21(unfulfilled)", "(null)", None):
        assert parse_dependency(text) is None, text
