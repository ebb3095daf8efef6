"""Placement cases worked by hand, eleventh sweep: what the tenth left unread. LSF's
older `PROCLIMIT` (and `TASKLIMIT`) in `bqueues -l`; PBS's `backfill_depth`; Grid Engine
host consumables; PBS `place=group=` counting the queued jobs ahead per group. Each case
asserts the verdict per site, the partition, the start and that the reason names the
real cause."""

from __future__ import annotations

from datetime import timedelta

from test_placement_cases import NOW, only, reasons, run

H = 3600


def hours(h: float):
    return NOW + timedelta(hours=h)


# --------------------------------------------------------------- LSF PROCLIMIT / TASKLIMIT

def _bqueues_l(title: str, values: str) -> str:
    return ("QUEUE: normal\n  -- For normal jobs\n\nPARAMETERS/STATISTICS\n"
            "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV\n"
            " 30   20  Open:Active       -    -    -    -     0     0     0     0     0    0\n"
            "Interval for a host to accept two jobs is 0 seconds\n\n"
            f" {title}\n {values}\n\nSCHEDULING PARAMETERS\n")


def test_lsf_proclimit_in_bqueues_l_is_the_task_limit():
    # An LSF older than `bqueues -o` (its queue_limits answer nothing) says the queue's
    # limit in `bqueues -l` as PROCLIMIT (TASKLIMIT since 9.1.3), lsb.queues'
    # `[min [default]] max`. Before, neither was read: a 64-task job was READY on wren
    from test_placement_cases8 import wren
    job = '#BSUB -n {}\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00'
    for title in ("PROCLIMIT", "TASKLIMIT"):
        # one number: the maximum (48)
        site = wren(queue_long=_bqueues_l(title, "48"))
        assert (site[1].partitions[0].min_cpus, site[1].partitions[0].max_cpus) == (None, 48)
        assert reasons(run(job.format(64), site), "wren") == \
            "needs 64 CPUs in all, queue normal allows a job at most 48"
        assert only(run(job.format(48), site), "wren", "normal").verdict == "READY"
        # two: minimum 4, maximum 64
        site = wren(queue_long=_bqueues_l(title, "4 64"))
        assert reasons(run(job.format(2), site), "wren") == \
            "needs 2 CPUs in all, queue normal takes only jobs of at least 4"
        assert only(run(job.format(4), site), "wren", "normal").verdict == "READY"
        # three: minimum 2, default 8, maximum 16 (a unit word after them is tolerated)
        site = wren(queue_long=_bqueues_l(title, "2 8 16 processors"))
        assert (site[1].partitions[0].min_cpus, site[1].partitions[0].max_cpus) == (2, 16)


def test_lsf_task_limit_sections_of_each_queue_and_odd_ones_are_not_limits():
    from diamond_jupyter.dialects.lsf_commands import parse_task_limits
    two = _bqueues_l("PROCLIMIT", "8") + _bqueues_l("TASKLIMIT", "1 2").replace(
        "QUEUE: normal", "QUEUE: short")
    assert parse_task_limits(two) == {"normal": (None, 8), "short": (1, 2)}
    # not rising, zero, four numbers, words: no limit read
    for bad in ("8 4", "0 4", "1 2 3 4", "unlimited", "-"):
        assert parse_task_limits(_bqueues_l("TASKLIMIT", bad)) == {}, bad
