"""Leftovers of the dependency gaps (tests/test_placement_deps_gaps2.py), on selene's nodes:

- Slurm `aftercorr` on a parent array wholly gone from the queue: every parent task has
  ended, taken to have succeeded (squeue cannot tell), so the child's tasks are free and
  counted, the note saying what is assumed (before: left out as a parent not seen).
- Slurm `singleton` with no namesake but other terms unmet: the singleton is met, the job
  waits on those (before: left out, said nowhere).
"""

from __future__ import annotations

from test_placement_cases import run
from test_placement_cases19 import BUSY, FOUR, waiting
from test_placement_cases19_followups import _first, _selene
from test_placement_cases19_followups2 import _named, _queue

H = 3600.0


def test_an_aftercorr_child_of_a_parent_array_gone_from_the_queue_is_free():
    """40 is gone from squeue (every task ended): 41_[1-4] (one node each) starts now on the
    free nodes, all four at once (before: left out, no start)."""
    queue, _ = _queue(waiting("41_[1-4]", "Dependency", nodes=1),
                      depends={"41_[1-4]": "aftercorr:40_*(unfulfilled)"})
    assert [d.start / H for d in queue if d.native_id == "41_[1-4]"] == [0.0] * 4


def test_the_note_says_the_gone_parent_array_is_taken_to_have_succeeded():
    """n01-n03 busy for 5 h: 41 (4 nodes) on the gone parent 40 is ahead of the 4-node
    job, and the note says 40 is taken to have succeeded."""
    lines = (*BUSY, waiting("41", "Dependency"))
    v = _first(run(FOUR, _selene(*lines, depends={"41": "aftercorr:40(unfulfilled)"})))
    notes = [n for n in v.notes if "job 41 " in n]
    assert len(notes) == 1, v.notes
    assert "job 40 gone from the queue, taken to have succeeded (aftercorr: squeue " \
           "cannot tell; a failed task would hold its child task for good)" in notes[0]


def test_an_aftercorr_parent_also_named_by_another_kind_is_still_not_seen():
    """40 gone but named by afterok too: not known (left out), as before."""
    queue, _ = _queue(waiting("41", "Dependency", nodes=1),
                      depends={"41": "aftercorr:40(unfulfilled),afterok:40(unfulfilled)"})
    assert [d.start for d in queue if d.native_id == "41"] == []


def test_a_singleton_of_no_namesake_waits_on_its_other_terms():
    """bob's `step` 31 is a singleton with no namesake, and afterok on running 21 (ends
    +5 h): it starts when 21 ends, +5 h (before: left out, said nowhere)."""
    lines = (*BUSY, _named(waiting("31", "Dependency"), "step"))
    depends = {"31": "afterok:21(unfulfilled),singleton(unfulfilled)"}
    _, starts = _queue(*lines, depends=depends)
    assert starts == {"31": 5 * H}
    v = _first(run(FOUR, _selene(*lines, depends=depends)))
    assert any(n.startswith("partition batch: job 31 waits for job 21 to end")
               for n in v.notes), v.notes
    assert not any("singleton" in n and "left out" in n for n in v.notes), v.notes


def test_a_singleton_of_no_namesake_joined_by_any_is_met_and_said_left_out():
    """`afterok:21(unfulfilled)?singleton(unfulfilled)` with no namesake: met, freed at
    slurmctld's next pass: left out and said so (before: said nowhere)."""
    lines = (*BUSY, _named(waiting("31", "Dependency"), "step"))
    v = _first(run(FOUR, _selene(*lines, depends={
        "31": "afterok:21(unfulfilled)?singleton(unfulfilled)"})))
    assert [n for n in v.notes if "singleton" in n] == [
        "partition batch: job 31 waits on singleton (its other dependencies met) with no "
        "job of its name and user running or submitted before it: met, freed at "
        "slurmctld's next pass, not known when, so it is left out, not counted ahead of "
        "the job"]
