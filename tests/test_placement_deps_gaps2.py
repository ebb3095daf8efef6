"""Follow-ups of the dependency gaps (tests/test_placement_deps_gaps.py), on selene's
nodes:

- Slurm `aftercorr` pairs each task with the parent's task of the same task id, whatever of
  either has already run: a parent task running ends with its walltime, one waiting as it
  runs in the plan, one gone from the queue has ended and frees its child task (before:
  the child's k-th waiting task was paired with the parent's k-th end, soonest first).
"""

from __future__ import annotations

from test_placement_cases13 import running
from test_placement_cases19 import waiting
from test_placement_cases19_followups2 import _queue

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
