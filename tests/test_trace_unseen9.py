"""The ninth sweep of SWF logs unlike the shared ones, each written here from what the
Parallel Workloads Archive documents of the format: a StartTime (date(1)'s form, version
2.2) around a daylight saving change, read by its zone abbreviation; a StartTime and a
UnixStartTime that disagree; a log starting mid-week across a change of its zone's clocks;
jobs asking no time (field 9 -1) with known runtimes; the queue field (15) naming
interactive (0) and batch queues; allocated processors (field 5) unlike the requested
(field 8); MaxNodes and MaxProcs headers unlike what the jobs held; partitions numbered 0,
7 and 42; a window of cancelled jobs (status 5) only; a job longer than the window and the
log."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import one_partition, plan_replay, read_swf


def _line(number: int, submit: float, wait: float = 0, run: float = 500, procs: int = 8,
          req: float = 900, status: int = 1, partition: int = 1, queue: int = 1,
          req_procs: int | None = None) -> str:
    """One SWF job line (18 fields) of the values a test names."""
    asked = procs if req_procs is None else req_procs
    return (f"{number} {submit:g} {wait:g} {run:g} {procs} -1 -1 {asked} {req:g} -1 {status} "
            f"{number % 5 + 1} 1 -1 {queue} {partition} -1 -1\n")


def _log(tmp_path: Path, name: str, header: str, body: str):
    path = tmp_path / f"{name}.swf"
    path.write_text(header + body)
    return read_swf(path)


BODY = "".join(_line(n, 100 * n) for n in range(1, 60))
BERLIN = "; TimeZoneString: Europe/Berlin\n; MaxProcs: 64\n"


def _utc(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp())


# ---- StartTime around a daylight saving change -------------------------------------------

@pytest.mark.parametrize("abbr, utc", [("CEST", "2007-10-28 00:30:00"),
                                       ("CET", "2007-10-28 01:30:00")])
def test_a_start_time_in_the_hour_clocks_repeat_is_read_by_its_zone(tmp_path: Path, abbr: str,
                                                                    utc: str) -> None:
    """Berlin's clocks showed 02:30 twice on 28 October 2007: first in summer time (CEST),
    then an hour later in standard time (CET). date(1) wrote which. Before: both were read
    as the first, so a CET log's second 0 was an hour early, and a --start given as a Unix
    time was named as the wrong log second."""
    log = _log(tmp_path, "fold", f"; StartTime: Sun Oct 28 02:30:00 {abbr} 2007\n" + BERLIN,
               BODY)
    assert log.unix_start == _utc(utc)
    assert not [n for n in log.notes if "StartTime" in n]
    with pytest.raises(BadInput, match=r"so that moment is --start 1000$"):
        plan_replay(log, cluster("alpha"), start=_utc(utc) + 1000)


def test_a_start_time_clocks_showed_twice_without_a_zone_is_said(tmp_path: Path) -> None:
    """The same repeated 02:30 in ISO form, no abbreviation: the first is taken, and said."""
    log = _log(tmp_path, "fold-iso", "; StartTime: 2007-10-28 02:30:00\n" + BERLIN, BODY)
    assert log.unix_start == _utc("2007-10-28 00:30:00")
    [note] = [n for n in log.notes if "StartTime" in n]
    assert "showed twice" in note and "2007-10-28 00:30:00 UTC" in note


def test_a_start_time_the_clocks_skipped_is_said_or_read_by_its_zone(tmp_path: Path) -> None:
    """02:30 on 25 March 2007 never was in Berlin (clocks went from 02:00 to 03:00). Without
    a zone abbreviation it is read by the offset before the change, and said (before: read
    so silently); with CEST it is that zone's 02:30 (before: an hour late)."""
    bare = _log(tmp_path, "gap", "; StartTime: Sun Mar 25 02:30:00 2007\n" + BERLIN, BODY)
    assert bare.unix_start == _utc("2007-03-25 01:30:00")
    [note] = [n for n in bare.notes if "StartTime" in n]
    assert "skipped" in note and "Europe/Berlin" in note
    named = _log(tmp_path, "gap-cest", "; StartTime: Sun Mar 25 02:30:00 CEST 2007\n" + BERLIN,
                 BODY)
    assert named.unix_start == _utc("2007-03-25 00:30:00")
    assert not [n for n in named.notes if "StartTime" in n]


@pytest.mark.parametrize("abbr", ["CET", "EDT"])
def test_a_zone_abbreviation_the_zone_does_not_use_then_is_said(tmp_path: Path,
                                                                abbr: str) -> None:
    """A July StartTime marked CET (winter time) or EDT (another zone) under TimeZoneString
    Europe/Berlin: the zone's own clock (CEST) is taken, and the disagreement said
    (before: silent)."""
    log = _log(tmp_path, "abbr", f"; StartTime: Wed Jul  4 10:00:00 {abbr} 2007\n" + BERLIN,
               BODY)
    assert log.unix_start == _utc("2007-07-04 08:00:00")
    [note] = [n for n in log.notes if "StartTime" in n]
    assert f"names zone {abbr}" in note and "(CEST)" in note


def test_a_start_time_unlike_the_unix_start_time_is_said(tmp_path: Path) -> None:
    """UnixStartTime is 01:30 UTC; StartTime says 02:30 CEST (00:30 UTC): UnixStartTime, the
    format's own count, is kept and the hour between them said (before: silent). Headers
    that agree (as the shared logs' do) say nothing."""
    unix = _utc("2007-10-28 01:30:00")
    log = _log(tmp_path, "disagree", f"; UnixStartTime: {unix}\n"
               "; StartTime: Sun Oct 28 02:30:00 CEST 2007\n" + BERLIN, BODY)
    assert log.unix_start == unix
    [note] = [n for n in log.notes if "StartTime" in n]
    assert f"UnixStartTime {unix}" in note and "-3600 s" in note
    agree = _log(tmp_path, "agree", f"; UnixStartTime: {unix}\n"
                 "; StartTime: Sun Oct 28 02:30:00 CET 2007\n" + BERLIN, BODY)
    assert agree.unix_start == unix and not [n for n in agree.notes if "StartTime" in n]


def test_a_log_starting_mid_week_across_a_clock_change_keeps_its_seconds(
        tmp_path: Path) -> None:
    """A log starting on a Wednesday, four days before Berlin's clocks go back: its seconds
    count on through the change (SWF times are seconds, not wall clocks), so an arrival
    after it replays at its own distance from the window's start, not an hour off."""
    unix = _utc("2007-10-24 12:00:00")  # a Wednesday
    change = _utc("2007-10-28 01:00:00") - unix
    body = "".join(_line(n, change - 1800 + 60 * n, run=120, procs=4) for n in range(60))
    log = _log(tmp_path, "midweek", f"; UnixStartTime: {unix}\n; StartTime: Wed Oct 24 "
               "14:00:00 CEST 2007\n" + BERLIN, body)
    assert dt.datetime.fromtimestamp(log.unix_start, dt.timezone.utc).weekday() == 2
    assert not [n for n in log.notes if "StartTime" in n]
    start = change - 1800.0
    plan = plan_replay(log, cluster("alpha"), start=start, duration_s=60, scale=60)
    arrivals = {int(j.name.split("-")[2]): j.at_s for j in plan.jobs
                if j.name.startswith("trace-arrive-")}
    assert arrivals  # after the change as before it: one a real second
    for n, at in arrivals.items():
        assert at == pytest.approx(n, abs=1e-3)


# ---- requests, queues, sizes -------------------------------------------------------------

def test_jobs_asking_no_time_running_at_the_window_get_their_partitions_limit(
        tmp_path: Path) -> None:
    """Field 9 is -1 on every line, the runtimes are known: jobs running at the window's
    start keep what they have left to run, each under the limit of the partition it
    fits (gamma's 30-minute default, else its long one), none cut short, and a note counts
    them."""
    body = "".join(_line(n, 100 * n, run=(5000 if n % 2 else 200_000), procs=4, req=-1)
                   for n in range(1, 60))
    log = _log(tmp_path, "noreq", "; MaxProcs: 512\n", body)
    plan = plan_replay(log, cluster("gamma"), start=3000, duration_s=60)
    running = [j for j in plan.jobs if j.name.startswith("trace-run-")]
    assert running and all(j.runtime_s <= j.walltime_min * 60 for j in plan.jobs)
    assert {j.partition for j in running} == {None, "long"}
    assert any("no requested time" in n for n in plan.notes)
    assert not any("longer than gamma's longest" in n for n in plan.notes)


def test_the_queue_field_changes_nothing_of_the_replay(tmp_path: Path) -> None:
    """Field 15 names interactive (0) and two batch queues; the header describes the queues
    with processor counts. The replay is the one of the same log with every job in queue 1
    and no queue lines: a queue is no partition and no machine size."""
    mixed = "".join(_line(n, 100 * n, queue=(0 if n % 4 == 0 else 1 + n % 2))
                    for n in range(1, 60))
    plain = "".join(_line(n, 100 * n) for n in range(1, 60))
    queued = _log(tmp_path, "queues", "; MaxProcs: 64\n; MaxQueues: 3\n; Queues: 0 "
                  "interactive, 1 batch (32 nodes of 4 processors), 2 long (16 processors "
                  "each)\n; Queue: 1 batch 128 processors\n", mixed)
    same = _log(tmp_path, "one-queue", "; MaxProcs: 64\n", plain)
    assert queued.max_procs == same.max_procs == 64
    a = plan_replay(queued, cluster("alpha"), start=1000, duration_s=60, seed=3)
    b = plan_replay(same, cluster("alpha"), start=1000, duration_s=60, seed=3)
    assert a.jobs == b.jobs


def test_allocated_processors_size_jobs_and_requested_ones_stand_in(tmp_path: Path) -> None:
    """Field 5 (allocated, 16) is twice field 8 (requested, 8) on odd lines, and -1 on even
    ones: a job is sized by what it was given where the log says, else by what it asked.
    Its plan is the one of the log written with those sizes in both fields."""
    given = "".join(_line(n, 100 * n, procs=(16 if n % 2 else -1), req_procs=8)
                    for n in range(1, 60))
    written = "".join(_line(n, 100 * n, procs=(16 if n % 2 else 8)) for n in range(1, 60))
    a = plan_replay(_log(tmp_path, "alloc", "; MaxProcs: 64\n", given), cluster("alpha"),
                    start=1000, duration_s=60, seed=1)
    b = plan_replay(_log(tmp_path, "sizes", "; MaxProcs: 64\n", written), cluster("alpha"),
                    start=1000, duration_s=60, seed=1)
    assert a.jobs == b.jobs
    assert {j.nodes * j.cpus_per_node for j in a.jobs} == {8, 4}  # 16 and 8 of 64, on 32


def test_maxprocs_and_maxnodes_under_what_jobs_held_are_said(tmp_path: Path) -> None:
    """MaxNodes 8 and MaxProcs 64, but jobs that ran together held 304 processors: the
    machine is what ran at once, and the header's figure is named."""
    body = "".join(_line(n, 100 * n, procs=(128 if n % 3 == 0 else 16)) for n in range(1, 60))
    log = _log(tmp_path, "over", "; MaxNodes: 8\n; MaxProcs: 64\n", body)
    assert log.max_procs == 304
    assert any("MaxProcs 64" in n and "304" in n for n in log.notes)
    plan = plan_replay(log, cluster("alpha"), start=1000, duration_s=60)
    assert plan.log_utilization <= 1.0


def test_partitions_numbered_0_7_and_42_replay_by_number_and_name(tmp_path: Path) -> None:
    """Partitions 0, 7 and 42 (not 1..N), each with a Partition line: each replays alone by
    its number or its name, its size from its line (or what its jobs held, where more);
    one not in the log is named with those there are."""
    body = "".join(_line(n, 100 * n, partition=(0, 7, 42)[n % 3]) for n in range(1, 60))
    header = ("; MaxProcs: 64\n; MaxPartitions: 3\n; Partition: 0 login 8 processors\n"
              "; Partition: 7 batch 32 processors\n; Partition: 42 big 24 processors\n")
    log = _log(tmp_path, "parts", header, body)
    assert one_partition(log, "42").max_procs == one_partition(log, "big").max_procs == 24
    assert one_partition(log, "7").max_procs == 32
    assert one_partition(log, "0").max_procs == 16  # its jobs held 16 at once
    assert one_partition(log, "login").table == one_partition(log, "0").table
    with pytest.raises(BadInput, match=r"no partition '3'.*0 \(login\).*7 \(batch\).*42 \(big\)"):
        one_partition(log, "3")


@pytest.mark.parametrize("run", [-1, 0])
def test_a_window_of_cancelled_jobs_only_says_no_job_ran_there(tmp_path: Path,
                                                              run: int) -> None:
    """Jobs before and after, but the window holds only jobs cancelled in the queue (status
    5, run -1 or 0): nothing is replayed, and the plan says so."""
    body = ("".join(_line(n, 100 * n) for n in range(1, 20))
            + "".join(_line(n, 100 * n, wait=50, run=run, status=5) for n in range(20, 90))
            + "".join(_line(n, 100 * n) for n in range(90, 100)))
    log = _log(tmp_path, "cancelled", "; MaxProcs: 64\n", body)
    plan = plan_replay(log, cluster("alpha"), start=4000, duration_s=60)
    assert plan.jobs == [] and plan.log_utilization == 0
    assert any("no job of the log ran, waited or arrived in this window" in n
               for n in plan.notes)


def test_a_job_longer_than_the_window_and_the_log_runs_what_it_has_left(
        tmp_path: Path) -> None:
    """One job of 32 processors runs 1,000,000 s from the log's start, longer than the whole
    log: at a window an hour in, it is running and has the rest of its run left, its limit
    not under it; the log's load counts only its part inside the window."""
    body = _line(1, 0, run=1_000_000, procs=32, req=1_000_000) + "".join(
        _line(n, 100 * n, run=50) for n in range(2, 40))
    log = _log(tmp_path, "long", "; MaxProcs: 64\n", body)
    plan = plan_replay(log, cluster("alpha"), start=1000, duration_s=60, scale=60)
    [long] = [j for j in plan.jobs if j.name == "trace-run-1"]
    assert long.runtime_s == pytest.approx((1_000_000 - 1000) / 60, abs=0.01)
    assert long.walltime_min * 60 >= long.runtime_s
    assert 0.5 <= plan.log_utilization < 1.0  # half the machine the whole window, and more
