"""The 90% start bound from the waits of jobs like the one placed (issue 15, session 41):
`RecentWaits.similar_bound` takes the narrowest class of size (within a factor 2, 4, 8, 16
of its nodes, else CPUs) and time asked with MIN_SIMILAR_WAITS waits."""

from __future__ import annotations

from diamond_jupyter.calibration import (
    MIN_SIMILAR_WAITS,
    QueueWait,
    RecentWaits,
    similar_classes,
)

HOUR = 3600.0


def waits(n: int, nodes: int, wait_s: float, walltime_s: float = HOUR,
          partition: str = "batch") -> list[QueueWait]:
    """`n` started waits of `nodes`-node jobs asking `walltime_s`, `wait_s` apart by 1 s."""
    return [QueueWait(partition, nodes * 16, wait_s + i, nodes=nodes, walltime_s=walltime_s)
            for i in range(n)]


def test_a_small_job_is_bound_by_small_jobs_not_the_large_ones_waiting_days():
    """40 one- and two-node jobs started within minutes, 40 of 64 nodes waited two days:
    an 8-minute-ish bound for a 1-node job, from the 40 of 1-2 nodes; the whole queue's
    bound would be the two days."""
    recent = RecentWaits(waits(20, 1, 60.0) + waits(20, 2, 300.0) + waits(40, 64, 48 * HOUR))
    b = recent.similar_bound("batch", 1, 16, HOUR)
    assert b is not None and (b.samples, b.of) == (40, "1-2 nodes, asking 0:16-1:04 h"), b
    assert b.seconds < 320.0, b
    assert recent.bound("batch", 16)[0] >= 48 * HOUR  # every size: the large jobs' days


def test_the_class_widens_until_enough_waits_are_found():
    """10 jobs of 8 nodes asking 1 h, 25 of 3 nodes asking 10 h: 4-16 nodes asking 1 h has
    10, 4-16 of any time 10, 2-32 asking 1 h 10, 2-32 of any time 35: that one."""
    recent = RecentWaits(waits(10, 8, 100.0) + waits(25, 3, 900.0, walltime_s=10 * HOUR))
    b = recent.similar_bound("batch", 8, 128, HOUR)
    assert b is not None and (b.samples, b.of) == (35, "2-32 nodes"), b
    assert b.seconds >= 900.0  # the 3-node jobs' waits count now


def test_the_time_asked_narrows_first():
    """30 jobs of 4 nodes asking 1 h waited a minute, 30 asking 2 days waited 10 h: a 4-node
    1 h job is bound by the first 30 only."""
    recent = RecentWaits(waits(30, 4, 60.0) + waits(30, 4, 10 * HOUR, walltime_s=48 * HOUR))
    b = recent.similar_bound("batch", 4, 64, 3000.0)
    assert b is not None and b.samples == 30 and b.seconds < 100.0, b
    assert b.of == "2-8 nodes, asking 0:16-1:04 h"


def test_too_few_of_any_similar_size_gives_none_and_other_partitions_do_not_count():
    """28 waits of 1-node jobs (one short of MIN_SIMILAR_WAITS) in batch and 100 in debug:
    no similar bound in batch; 100 in debug."""
    assert MIN_SIMILAR_WAITS == 29
    recent = RecentWaits(waits(MIN_SIMILAR_WAITS - 1, 1, 60.0)
                         + waits(100, 1, 5.0, partition="debug"))
    assert recent.similar_bound("batch", 1, 16, HOUR) is None
    b = recent.similar_bound("debug", 1, 16, HOUR)
    assert b is not None and b.samples == 100


def test_without_nodes_the_cpus_decide_and_a_still_waiting_job_counts_censored():
    """Waits that know only CPUs: a 32-CPU job is compared by CPUs (16-64). 29 of 32 CPUs,
    three still waiting 5 h (so at least that long): the bound is at least 5 h."""
    started = [QueueWait("all", 32, 60.0 + i) for i in range(26)]
    waiting = [QueueWait("all", 32, 5 * HOUR, waiting=True) for _ in range(3)]
    b = RecentWaits(started + waiting).similar_bound("all", None, 32, None)
    assert b is not None and b.of == "16-64 CPUs" and b.seconds >= 5 * HOUR, b


def test_the_classes_in_order():
    """Narrowest first; the request class kept then dropped at each size factor; none
    without a size."""
    classes = [c.words for c in similar_classes(8, 128, 2 * HOUR)]
    assert classes[:4] == ["4-16 nodes, asking 1:04-4:16 h", "4-16 nodes",
                           "2-32 nodes, asking 1:04-4:16 h", "2-32 nodes"]
    assert classes[-1] == "1-128 nodes" and len(classes) == 8
    assert [c.words for c in similar_classes(1, None, None)][0] == "1-2 nodes"
    assert similar_classes(None, None, HOUR) == []
