"""The 90% start bound from the waits of jobs like the one placed (issue 15, session 41):
`RecentWaits.similar_bound` takes the narrowest class of size (within a factor 2, 4, 8, 16
of its nodes, else CPUs) with MIN_SIMILAR_WAITS waits."""

from __future__ import annotations

from diamond_jupyter.calibration import (
    MIN_SIMILAR_WAITS,
    QueueWait,
    RecentWaits,
    similar_classes,
)

HOUR = 3600.0


def waits(n: int, nodes: int, wait_s: float, partition: str = "batch") -> list[QueueWait]:
    """`n` started waits of `nodes`-node jobs (16 CPUs a node), `wait_s` on, 1 s apart."""
    return [QueueWait(partition, nodes * 16, wait_s + i, nodes=nodes) for i in range(n)]


def test_a_small_job_is_bound_by_small_jobs_not_the_large_ones_waiting_days():
    """25 one-node and 25 two-node jobs started within minutes, 50 of 64 nodes waited two
    days: a 1-node job's bound is from the 50 of 1-2 nodes, minutes; every size's is days."""
    recent = RecentWaits(waits(25, 1, 60.0) + waits(25, 2, 300.0) + waits(50, 64, 48 * HOUR))
    b = recent.similar_bound("batch", 1, 16)
    assert b is not None and (b.samples, b.of) == (50, "1-2 nodes"), b
    assert b.seconds < 330.0, b
    assert recent.bound("batch", 16)[0] >= 48 * HOUR  # every size: the large jobs' days


def test_the_class_widens_until_enough_waits_are_found():
    """10 jobs of 8 nodes, 40 of 3 nodes: 4-16 nodes has 10, 2-32 has 50: that one."""
    recent = RecentWaits(waits(10, 8, 100.0) + waits(40, 3, 900.0))
    b = recent.similar_bound("batch", 8, 128)
    assert b is not None and (b.samples, b.of) == (50, "2-32 nodes"), b
    assert b.seconds >= 900.0  # the 3-node jobs' waits count now


def test_too_few_of_any_similar_size_gives_none_and_other_partitions_do_not_count():
    """45 waits of 1-node jobs (one short of MIN_SIMILAR_WAITS) in batch and 100 in debug:
    no similar bound in batch; one from 100 in debug."""
    assert MIN_SIMILAR_WAITS == 46
    recent = RecentWaits(waits(MIN_SIMILAR_WAITS - 1, 1, 60.0)
                         + waits(100, 1, 5.0, partition="debug"))
    assert recent.similar_bound("batch", 1, 16) is None
    b = recent.similar_bound("debug", 1, 16)
    assert b is not None and b.samples == 100


def test_without_nodes_the_cpus_decide_and_a_still_waiting_job_counts_censored():
    """Waits that know only CPUs: a 32-CPU job is compared by CPUs (16-64). 46 of 32 CPUs,
    five still waiting 5 h (so at least that long): the bound is at least 5 h."""
    started = [QueueWait("all", 32, 60.0 + i) for i in range(41)]
    waiting = [QueueWait("all", 32, 5 * HOUR, waiting=True) for _ in range(5)]
    b = RecentWaits(started + waiting).similar_bound("all", None, 32)
    assert b is not None and b.of == "16-64 CPUs" and b.seconds >= 5 * HOUR, b


def test_the_classes_in_order():
    """Narrowest first; none without a size."""
    assert [c.words for c in similar_classes(8, 128)] == [
        "4-16 nodes", "2-32 nodes", "1-64 nodes", "1-128 nodes"]
    assert [c.words for c in similar_classes(1, None)][0] == "1-2 nodes"
    assert similar_classes(None, None) == []
