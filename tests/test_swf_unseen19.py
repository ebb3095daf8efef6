"""The nineteenth sweep of SWF logs: small logs written here in shapes real archive headers
and converters give (HPC2N's bracketed Queue line and DEFAULT/ALL partitions, the deprecated
TimeZone line beside TimeZoneString, StartTime as date(1) writes it with its zone
abbreviation, MaxQueues/MaxPartitions, Preemption and AllowOveruse lines, job numbers with
leading zeros, a requested time of 0, a preceding job of 0), each read by `read_swf` and
planned by `plan_replay` as Standard Workload Format v2.2 means it, or refused naming the
file, line and what is accepted; no test bed.

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- `; UnixStartTime: 1199145600000` (a converter's clock in milliseconds) was read as log
  second 0 in the year 39,970, unsaid: a --start given as a Unix time then named no log
  second. Now a UnixStartTime past the year 5000 is not read, and the note names its line,
  the unit it is likely in and the moment it would be (a StartTime beside it is read).
- `; MaxProcs: +32` was no count (the machine sized by its jobs, 16), though a job line's
  `+1` is the number 1: a header count's plus sign is now read as the job lines' is.
- StartTime `Tue Jan 30 08:37:58 PST 2007` without TimeZoneString and UnixStartTime left
  log second 0 unknown: an abbreviation of one offset from UTC (PST, CEST, EST ...) names
  the moment, and is now read; one of several offsets (CST, IST, BST) is still said.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import dry_run_plan, save_swf

from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs
UNIX = 1199145600  # 2008-01-01 00:00:00 UTC
BASE = "; Version: 2.2\n; Computer: Test\n; MaxJobs: 40\n; MaxRecords: 40\n; MaxProcs: 32\n"


def _job(number: object, submit: object, *, wait: object = 30, run: object = 1200,
         alloc: object = 8, procs: object = 8, req: object = 3600, status: object = 1,
         queue: object = 1, partition: object = 1, pred: object = -1,
         think: object = -1) -> str:
    """One 18-field job line (user 5; CPU time, memory, group, executable unknown)."""
    fields = (number, submit, wait, run, alloc, -1, -1, procs, req, -1, status, 5, 1, -1,
              queue, partition, pred, think)
    return " ".join(map(str, fields)) + "\n"


JOBS = "".join(_job(n, 600 * n) for n in range(1, 41))


def _read(tmp_path: Path, text: str, name: str = "log.swf"):
    return read_swf(save_swf(tmp_path / name, text))


def _noted(log, *words: str) -> list[str]:
    """The log's (or plan's) notes holding every word."""
    return [n for n in log.notes if all(w in n for w in words)]


def _second_zero_is(log, unix: int) -> None:
    """Log second 0 is `unix`: a --start given as the Unix time 700 s after it is named back
    as log second 700."""
    assert log.unix_start == unix
    with pytest.raises(BadInput, match="that moment is --start 700"):
        plan_replay(log, ALPHA, start=unix + 700)


# ---- UnixStartTime, StartTime and the zone ---------------------------------------------------

@pytest.mark.parametrize("written, unit", [("1199145600000", "milliseconds"),
                                           ("1199145600000000", "microseconds")])
def test_fault_a_unix_start_time_in_milliseconds_is_said_not_read(tmp_path, written, unit):
    log = _read(tmp_path, BASE + f"; UnixStartTime: {written}\n" + JOBS)
    assert log.unix_start is None
    [note] = _noted(log, "line 6", "UnixStartTime", unit, "2008-01-01 00:00:00 UTC",
                    "seconds since 1970", "not read")
    assert written in note


def test_fault_a_unix_start_time_in_milliseconds_leaves_the_start_time_to_place_the_log(
        tmp_path):
    text = (BASE + "; UnixStartTime: 1199145600000\n; TimeZoneString: Europe/Stockholm\n"
            "; StartTime: Tue Jan 01 01:00:00 CET 2008\n" + JOBS)
    log = _read(tmp_path, text)
    _second_zero_is(log, UNIX)
    assert _noted(log, "milliseconds") and not _noted(log, "StartTime 'Tue")


@pytest.mark.parametrize("header, unix", [
    # HPC2N's StartTime without its UnixStartTime and TimeZoneString lines
    ("; TimeZone: 3600\n; StartTime: Sun Jul 28 09:04:05 CEST 2002\n", 1027839845),
    # LLNL Thunder's, its EndTime after it
    ("; StartTime: Tue Jan 30 08:37:58 PST 2007\n; EndTime:   Fri Jun 29 14:21:12 PDT 2007\n",
     1170175078),
    ("; StartTime: Mon Dec 31 19:00:00 EST 2007\n", UNIX),
])
def test_fault_a_start_time_naming_an_offset_abbreviation_alone_places_the_log(
        tmp_path, header, unix):
    log = _read(tmp_path, BASE + header + JOBS)
    _second_zero_is(log, unix)
    assert not log.notes


@pytest.mark.parametrize("abbr", ["CST", "IST", "BST"])
def test_a_start_time_naming_an_abbreviation_of_several_offsets_is_still_said(tmp_path, abbr):
    log = _read(tmp_path, BASE + f"; StartTime: Tue Jan  1 00:00:00 {abbr} 2008\n" + JOBS)
    assert log.unix_start is None
    assert _noted(log, "StartTime", abbr, "not known")


def test_an_abbreviation_the_time_zone_string_does_not_use_is_still_said(tmp_path):
    """A TimeZoneString is the log's zone: a StartTime naming another abbreviation is read by
    the zone's own clock, and said, not read by the abbreviation."""
    log = _read(tmp_path, BASE + "; TimeZoneString: Europe/Stockholm\n"
                "; StartTime: Tue Jan 01 01:00:00 PST 2008\n" + JOBS)
    assert log.unix_start == UNIX
    assert _noted(log, "names zone PST", "Europe/Stockholm does not use")


def test_the_deprecated_time_zone_line_changes_nothing_of_second_0(tmp_path):
    """SWF 2.2 deprecated the buggy TimeZone line for TimeZoneString: HPC2N's header has
    both; its UnixStartTime is second 0 whatever TimeZone says."""
    header = ("; UnixStartTime: 1027839845\n; TimeZone: 3600\n"
              "; TimeZoneString: Europe/Stockholm\n; StartTime: Sun Jul 28 09:04:05 CEST 2002\n")
    (tmp_path / "zone").mkdir()
    with_zone = _read(tmp_path / "zone", BASE + header + JOBS)
    without = _read(tmp_path, BASE + header.replace("; TimeZone: 3600\n", "") + JOBS)
    _second_zero_is(with_zone, 1027839845)
    assert not with_zone.notes
    assert plan_replay(with_zone, ALPHA, seed=2).summary() == plan_replay(
        without, ALPHA, seed=2).summary()


def test_a_unix_start_time_of_minus_one_is_unknown_and_the_start_time_places_the_log(
        tmp_path):
    log = _read(tmp_path, BASE + "; UnixStartTime: -1\n"
                "; StartTime: Tue Jan  1 00:00:00 UTC 2008\n" + JOBS)
    _second_zero_is(log, UNIX)
    assert not log.notes


# ---- header counts and lines SWF 2.1/2.2 added -----------------------------------------------

def test_fault_a_max_procs_with_a_plus_sign_is_its_count(tmp_path):
    log = _read(tmp_path, BASE.replace("MaxProcs: 32", "MaxProcs: +32") + JOBS)
    assert log.max_procs == 32 and not log.notes


def test_hpc2ns_bracketed_queue_and_default_all_partitions_read_without_a_limit(tmp_path):
    """HPC2N's header: "; Queue:  1  [fque:1]" gives no MaxRuntime, so no queue limit; its
    partitions DEFAULT and ALL are named, and one of them replays as its own machine."""
    header = ("; UnixStartTime: 1027839845\n; MaxQueues: 1\n; Queue:  1  [fque:1]    \n"
              "; MaxPartitions: 2\n; Partition:  1  DEFAULT    \n; Partition:  2  ALL        \n"
              ";\n;\n")
    jobs = "".join(_job(n, 600 * n, partition=1 + n % 2, req=-1) for n in range(1, 41))
    log = _read(tmp_path, BASE + header + jobs)
    assert log.queue_limits == () and log.max_runtime is None
    assert [named for _, named, _ in log.partitions] == ["DEFAULT", "ALL"]
    assert log.max_procs == 32 and not log.notes


def test_preemption_and_allow_overuse_lines_change_no_reading(tmp_path):
    (tmp_path / "plain").mkdir()
    plain = _read(tmp_path / "plain", BASE + JOBS)
    said = _read(tmp_path, BASE + "; Preemption: No\n; AllowOveruse: Yes\n; MaxMemory: 2097152\n"
                 + JOBS)
    assert (said.max_procs, said.notes, said.max_runtime) == (32, (), None)
    assert plan_replay(said, ALPHA, seed=4).summary() == plan_replay(
        plain, ALPHA, seed=4).summary()


def test_a_comment_marked_with_a_hash_is_refused_naming_its_line_and_the_semicolon(tmp_path):
    path = save_swf(tmp_path / "hash.swf", BASE + "# converted by hand\n" + JOBS)
    with pytest.raises(BadInput) as e:
        read_swf(path)
    msg = str(e.value)
    assert f"{path}:6:" in msg and "start with ';'" in msg and "\n" not in msg


# ---- job fields --------------------------------------------------------------------------

def test_job_numbers_with_leading_zeros_chain_their_dependent_jobs(tmp_path):
    """"0009" is job 9: the job naming "0009" as its preceding job is held for it."""
    jobs = "".join(_job(f"{n:04d}", 600 * n, pred=f"{n - 1:04d}" if n > 1 else -1, think=0)
                   for n in range(1, 41))
    plan = plan_replay(_read(tmp_path, BASE + jobs), ALPHA, seed=1, start=6000)
    after = {j.name: j.after for j in plan.jobs}
    assert after["trace-arrive-11"] == "trace-arrive-10"
    assert after["trace-arrive-10"] == "trace-run-9"


def test_a_preceding_job_of_0_holds_no_job_even_beside_a_job_numbered_0(tmp_path):
    """SWF numbers jobs from 1: field 17 of 0 names no job, not the line numbered 0."""
    jobs = _job(0, 500) + "".join(_job(n, 600 * n, pred=0, think=5) for n in range(1, 41))
    log = _read(tmp_path, BASE.replace("40", "41") + jobs)
    plan = plan_replay(log, ALPHA, seed=1, start=6000)
    assert plan.jobs and all(j.after is None and j.think_s == 0 for j in plan.jobs)
    assert _noted(log, "no job number", "no job's predecessor")


def test_a_requested_time_of_0_is_no_request_and_said(tmp_path):
    jobs = "".join(_job(n, 600 * n, req=0) for n in range(1, 41))
    plan = plan_replay(_read(tmp_path, BASE + jobs), ALPHA, seed=1, start=6000)
    assert plan.jobs and all(j.walltime_min == 1440 for j in plan.jobs)
    assert _noted(plan, "no requested time", "field 9 is -1 or 0", "1440 min")


def test_a_job_still_running_at_the_logs_end_as_a_status_2_part_is_replayed(tmp_path,
                                                                          capsys):
    """The last line a "to be continued" part (status 2) with no later part: it ran 300 s
    and is load, read as one run of its own."""
    jobs = "".join(_job(n, 600 * n) for n in range(1, 40)) + _job(40, 24000, status=2, run=300)
    path = save_swf(tmp_path / "tail.swf", BASE + jobs)
    plan = dry_run_plan(capsys, path, "--start", "23000", "--duration", "60")
    assert (plan["skipped"], plan["arrivals_in_log"], plan["arrivals_kept"]) == ({}, 2, 2)
    [last] = [j for j in plan_replay(read_swf(path), ALPHA, start=23000, duration_s=60).jobs
              if j.name == "trace-arrive-40"]
    assert (last.at_s, last.runtime_s, last.after) == (pytest.approx(1000 / 60, abs=0.01), 5.0,
                                                       None)
