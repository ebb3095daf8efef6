"""Follow-ups of the dependency gaps (tests/test_placement_deps_gaps.py), on selene's
nodes:

- Slurm `aftercorr` pairs each task with the parent's task of the same task id, whatever of
  either has already run: a parent task running ends with its walltime, one waiting as it
  runs in the plan, one gone from the queue has ended and frees its child task (before:
  the child's k-th waiting task was paired with the parent's k-th end, soonest first).
- Slurm `singleton` with no namesake running or submitted before it (its other terms
  met): met, but waiting until slurmctld's next pass frees it; left out, and the
  waiting-jobs note now says so (before: left out silently).
- PBS jobs still counting down `on:N` (jobs naming them not submitted yet) are named in
  the waiting-jobs note (before: left out, said only in each job's reason).
"""

from __future__ import annotations

from dataclasses import replace

from test_placement_cases import run
from test_placement_cases13 import running
from test_placement_cases19 import BUSY, FOUR, waiting
from test_placement_cases19_followups import _first, _selene
from test_placement_cases19_followups2 import _named, _queue
from test_placement_cases19_followups3 import STAGGERED, _notes, _pbs, _pbs_job

from diamond_jupyter.model import JobState, JobStatus
from diamond_jupyter.placement_deps import gate_for, parse_dependency

H = 3600.0
CORR = "aftercorr:40_*(unfulfilled)"


def _lane_starts(*lines: str, child: str) -> list[float]:
    """When each lane of `child` (one task each: its tasks in order) starts, in hours."""
    queue, _ = _queue(*lines, depends={child: CORR})
    return [d.start / H for d in queue if d.native_id == child]


# ---- Slurm: aftercorr by task id ---------------------------------------------------------

def test_a_child_task_whose_parent_task_is_gone_from_the_queue_is_free():
    """40's task 1 has ended (gone from squeue), 40_2 runs (ends +5 h), 40_[3-4] wait (free
    nodes: they run 10 h from now). 41's task 1 starts now, task 2 at +5 h, tasks 3-4 at
    +10 h (before: task 1 waited for 40_2, +5 h, and task 2 for 40_3, +10 h)."""
    got = _lane_starts(running("40_2", "bob", "n01", 64, 5, 10),
                       waiting("40_[3-4]", "Priority", nodes=1),
                       waiting("41_[1-4]", "Dependency", nodes=1), child="41_[1-4]")
    assert got == [0.0, 5.0, 10.0, 10.0]


def test_running_parent_tasks_pair_by_task_id_not_by_which_ends_first():
    """41's task 1 has run (its record: `41_[2-4]`); 40's task 2 has ended, 40_3 ends +8 h
    and 40_4 +5 h. 41's task 2 starts now, task 3 at +8 h, task 4 at +5 h (before: in order
    of the parent's ends, +2 h, +5 h, +8 h: task 2 waited for 40_1, which it does not
    follow)."""
    got = _lane_starts(running("40_1", "bob", "n01", 64, 2, 10),
                       running("40_3", "bob", "n02", 64, 8, 10),
                       running("40_4", "bob", "n03", 64, 5, 10),
                       waiting("41_[2-4]", "Dependency", nodes=1), child="41_[2-4]")
    assert got == [0.0, 8.0, 5.0]


def test_a_child_past_the_parents_waiting_tasks_pairs_with_each_by_id():
    """40_[5-6] wait (40's tasks 1-4 have ended); 41_[4-6]: task 4 is free, 5 and 6 follow
    40_5 and 40_6 (+10 h) (before: task 4 waited for 40_5)."""
    got = _lane_starts(waiting("40_[5-6]", "Priority", nodes=1),
                       waiting("41_[4-6]", "Dependency", nodes=1), child="41_[4-6]")
    assert got == [0.0, 10.0, 10.0]


# ---- Slurm: a singleton with nothing to wait for -----------------------------------------

def _note_of(*lines: str, depends: dict[str, str]) -> list[str]:
    """What a 4-node batch job on selene is told of the waiting jobs."""
    v = _first(run(FOUR, _selene(*lines, depends=depends)))
    return [n for n in v.notes if "singleton" in n]


def test_a_singleton_with_no_earlier_namesake_is_said_left_out():
    """bob's `step` 31 is a singleton, its afterok on 12 met; no `step` of his runs or was
    submitted before it (carol's 29 and his own 32, submitted after, do not count): its
    dependency is met but slurmctld has not freed it yet. Left out, and now said so
    (before: left out, said nowhere)."""
    lines = (*BUSY, _named(waiting("29", "Priority", nodes=1, user="carol"), "step"),
             _named(waiting("31", "Dependency", nodes=1), "step"),
             _named(waiting("32", "Priority", nodes=1), "step"))
    got = _note_of(*lines, depends={"31": "afterok:12(fulfilled),singleton(unfulfilled)"})
    assert got == ["partition batch: job 31 waits on singleton (its other dependencies met) "
                   "with no job of its name and user running or submitted before it: met, "
                   "freed at slurmctld's next pass, not known when, so it is left out, not "
                   "counted ahead of the job"]


def test_a_singleton_with_an_earlier_namesake_is_not_said_met():
    """bob's `step` 21 runs (and 30 was submitted before 31): singleton 31 waits for them,
    it is not said met."""
    single = _named(waiting("31", "Dependency", nodes=1), "step")
    for lines in ((_named(BUSY[0], "step"), *BUSY[1:], single),
                  (*BUSY, _named(waiting("30", "Priority", nodes=1), "step"), single)):
        assert _note_of(*lines, depends={"31": "singleton(unfulfilled)"}) == []


# ---- PBS: jobs still counting down on:N, named in the note -------------------------------

def test_a_pbs_job_waiting_for_jobs_to_come_is_named_in_the_note():
    """31 still shows `on:1` (one job naming it is not submitted yet): left out, and the
    note now names it (before: only its reason said so)."""
    jobs = _pbs({"30.pbs01": _pbs_job("30", "afterok:21.pbs01@pbs01,beforeok:31.pbs01@pbs01"),
                 "31.pbs01": _pbs_job("31", "on:1,afterok:30.pbs01@pbs01")})
    said = _notes(jobs, STAGGERED)
    assert ("queue batch: job 31.pbs01 waits for 1 more job(s), not submitted yet, to name "
            "it with a before kind (depend=on:1): not known when, so it is left out, not "
            "counted ahead of the job") in said
    assert not any("30.pbs01" in n and "on:" in n for n in said)


def test_several_pbs_jobs_waiting_for_jobs_to_come_are_named_together():
    jobs = _pbs({"31.pbs01": _pbs_job("31", "on:2"), "32.pbs01": _pbs_job("32", "on:1")})
    assert ("queue batch: jobs 31.pbs01, 32.pbs01 wait for jobs not submitted yet to name "
            "them with a before kind (depend=on:N): not known when, so they are left out, "
            "not counted ahead of the job") in _notes(jobs)


def test_a_pbs_sites_placement_names_its_jobs_to_come_when_nothing_else_waits_on_one():
    """Through place() on a PBS site whose only job on a dependency is 31 (`on:2`): the
    verdict's notes name it (before: the waiting-jobs notes were not made for the site,
    no job there read as waiting on a dependency)."""
    cfg, snap = _selene(*STAGGERED)
    snap = snap.model_copy(update={"jobs": snap.jobs + _pbs({"31.pbs01": _pbs_job("31", "on:2")})})
    v = _first(run(FOUR, (cfg.model_copy(update={"scheduler": "pbs"}), snap)))
    assert [n for n in v.notes if "31.pbs01" in n] == [
        "queue batch: job 31.pbs01 waits for 2 more job(s), not submitted yet, to name it "
        "with a before kind (depend=on:2): not known when, so it is left out, not counted "
        "ahead of the job"]


def test_a_calibrated_view_moves_the_paired_parent_tasks_end():
    """41_[2-3] after 40_2 (+5 h) and 40_3 (+8 h); a calibrated view ends 40_3 at +1 h:
    task 3 (rank 1) follows it there, task 2 keeps +5 h."""
    def job(jid: str, state: JobState) -> JobStatus:
        return JobStatus(native_id=jid, state=state)
    parents = [(job("40_2", JobState.RUNNING), 5 * H), (job("40_3", JobState.RUNNING), 8 * H)]
    gate = gate_for(job("41_[2-3]", JobState.PENDING), parse_dependency(CORR), parents, {},
                    set())
    assert gate is not None
    moved = gate.moved({"40_3": 1 * H})
    assert [replace(g, rank=k).at() for g in (gate, moved) for k in (0, 1)] == [
        5 * H, 8 * H, 5 * H, 1 * H]
