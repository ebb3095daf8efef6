"""The twenty-second sweep of SWF logs, written here from the Standard Workload Format's
definition with quirks of other archive logs: requested time -1 on every line, allocated
and requested processors far apart, a header MaxProcs far below or far above what the jobs
held, jobs listed out of submit order, user and group ids of -1, TimeZone/TimeZoneString
headers, no UnixStartTime, a gzip file cut mid-stream, a stretch of cancelled jobs only,
Windows line endings (plain and gzipped, with a DOS end-of-file mark). Each is read by
`read_swf`, planned by `plan_replay` on alpha's shape, by `diamond testbed load --trace
--dry-run` and scored by `benchmarks.prediction`, or refused naming its line and field; no
test bed.

Fault found and fixed, shown by the tests here marked `fault` that failed before:
- a header MaxProcs thousands of times what the log's jobs ever held at once (a typo, a
  header copied from another log) made every job a sliver of the machine: the replay thinned
  every window to nothing and blamed its --duration alone. The header is still the machine
  (a grid's log of a few of its jobs, as LCG's, is the same shape), but the log now says
  what its jobs held at most and that a wrong MaxProcs line is the cause to correct.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from sweep_helpers import dry_run_plan, load_refused, save_swf
from test_trace_unseen20 import _job

from benchmarks import prediction
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs
BASE = "; Version: 2.2\n; Computer: Test\n; MaxProcs: 32\n"


def _days(first: int = 1, last: int = 160, **kw: object) -> str:
    """Jobs every 30 minutes with waits of 0-30 minutes: over three days, scored."""
    return "".join(_job(n, 1800 * n, wait=600 * (n % 4), **kw) for n in range(first, last + 1))


def _line(number: int, submit: float, *, alloc: int = 8, req_procs: int = 8, user: int = 5,
          group: int = 1, run: int = 1200, status: int = 1) -> str:
    """A job line whose allocated (field 5) and requested (field 8) processors, user and
    group may differ from `_job`'s."""
    fields = (number, submit, 600 * (number % 4), run, alloc, -1, -1, req_procs, 3600, -1,
              status, user, group, -1, 1, 1, -1, -1)
    return " ".join(map(str, fields)) + "\n"


def _noted(notes, *words: str) -> list[str]:
    return [n for n in notes if all(w in n for w in words)]


def _planned_and_scored(path: Path, capsys) -> None:
    log = read_swf(path)
    assert plan_replay(log, ALPHA).jobs and dry_run_plan(capsys, path)["jobs"] > 0
    assert prediction.run_log(path, moments=3, seed=1)["moments"] > 0


# ---- the header's machine ------------------------------------------------------------------

@pytest.mark.parametrize("header,procs", [("; MaxProcs: 320000\n", 320000),
                                          ("; MaxProcs: 100000\n; MaxNodes: 2\n", 100000)])
def test_fault_a_maxprocs_far_above_what_jobs_held_is_said_with_the_fix(tmp_path, header,
                                                                        procs):
    """Before: the header's machine was taken unsaid, the log's load 0.005% of it, and every
    window was thinned to no job, blamed on its --duration alone. The machine is kept (a
    grid's log of a few of its jobs, as LCG's, is this too), and the cause is said."""
    path = save_swf(tmp_path / "typo.swf", "; Version: 2.2\n" + header + _days())
    log = read_swf(path)
    assert log.max_procs == procs
    [said] = _noted(log.notes, f"the log's header says MaxProcs {procs}, but its 160 jobs "
                    "that ran never held more than 16 processors at once",
                    "correct its MaxProcs line; the jobs need 16")
    plan = plan_replay(log, ALPHA, seed=3)
    assert said in plan.notes and _noted(plan.notes, "thinned out")


def test_the_corrected_header_replays_the_log(tmp_path, capsys):
    path = save_swf(tmp_path / "fixed.swf", "; Version: 2.2\n; MaxProcs: 16\n" + _days())
    assert not _noted(read_swf(path).notes, "header says MaxProcs")
    _planned_and_scored(path, capsys)


def test_a_large_machine_lightly_used_by_few_jobs_keeps_its_header(tmp_path):
    """Under a hundred jobs say too little of the machine to overrule its header."""
    log = read_swf(save_swf(tmp_path / "few.swf", "; MaxProcs: 100000\n" + _days(1, 60)))
    assert log.max_procs == 100000 and not _noted(log.notes, "header says MaxProcs")


def test_a_maxprocs_below_what_jobs_held_is_raised_to_it(tmp_path, capsys):
    path = save_swf(tmp_path / "low.swf", "; Version: 2.2\n; MaxProcs: 4\n" + _days(procs=16))
    log = read_swf(path)
    assert log.max_procs == 32 and _noted(log.notes, "its header says MaxProcs 4")
    _planned_and_scored(path, capsys)


# ---- processors allocated and requested ---------------------------------------------------

def test_allocated_far_above_requested_is_the_load(tmp_path, capsys):
    """A job asked for 2 processors and was given 64 (whole nodes): it held 64."""
    path = save_swf(tmp_path / "alloc.swf", BASE + "".join(
        _line(n, 1800 * n, alloc=64, req_procs=2) for n in range(1, 161)))
    log = read_swf(path)
    assert {j.procs for j in log.jobs} == {64} and log.max_procs == 128
    _planned_and_scored(path, capsys)


def test_allocated_far_below_requested_is_the_load(tmp_path, capsys):
    path = save_swf(tmp_path / "shrunk.swf", BASE + "".join(
        _line(n, 1800 * n, alloc=1, req_procs=4096) for n in range(1, 161)))
    log = read_swf(path)
    assert {j.procs for j in log.jobs} == {1} and log.max_procs == 32
    _planned_and_scored(path, capsys)


def test_no_allocated_processors_anywhere_takes_the_requested(tmp_path, capsys):
    path = save_swf(tmp_path / "req.swf", BASE + "".join(
        _line(n, 1800 * n, alloc=-1, req_procs=8) for n in range(1, 161)))
    log = read_swf(path)
    assert _noted(log.notes, "160 job(s) give no allocated processors (field 5 is 0 or -1")
    _planned_and_scored(path, capsys)


# ---- fields of -1 ----------------------------------------------------------------------------

def test_requested_time_minus_one_everywhere_gets_partition_limits(tmp_path, capsys):
    path = save_swf(tmp_path / "noreq.swf", BASE + _days(req=-1))
    plan = plan_replay(read_swf(path), ALPHA, seed=2)
    assert _noted(plan.notes, "have no requested time (field 9 is -1 or 0",
                  "each gets the limit of the partition its run fits")
    # at the default --scale 60 a real second is a center minute: each limit holds its run
    assert plan.jobs and all(j.walltime_min >= j.runtime_s for j in plan.jobs)
    _planned_and_scored(path, capsys)


def test_user_and_group_minus_one_are_read_as_unknown(tmp_path, capsys):
    path = save_swf(tmp_path / "anon.swf", BASE + "".join(
        _line(n, 1800 * n, user=-1, group=-1) for n in range(1, 161)))
    log = read_swf(path)
    assert len(log.jobs) == 160 and {j.user for j in log.jobs} == {-1}
    _planned_and_scored(path, capsys)


# ---- order and time --------------------------------------------------------------------------

def test_jobs_out_of_submit_order_are_said_and_read_in_order(tmp_path, capsys):
    path = save_swf(tmp_path / "shuffled.swf", BASE + "".join(
        _job(n, 1800 * ((n * 37) % 160 + 1), wait=600 * (n % 4)) for n in range(1, 161)))
    log = read_swf(path)
    submits = [j.submit for j in log.jobs]
    assert submits == sorted(submits) and len(submits) == 160
    assert _noted(log.notes, "job line(s) are submitted before the line above them")
    _planned_and_scored(path, capsys)


def test_a_timezone_header_places_log_second_zero(tmp_path, capsys):
    path = save_swf(tmp_path / "tz.swf", "; Version: 2.0\n; TimeZone: -18000\n"
                    "; StartTime: Tue Nov 09 06:33:20 2004\n; MaxProcs: 32\n" + _days())
    log = read_swf(path)
    assert log.unix_start == 1100000000, log.unix_start  # 06:33:20 at UTC-5 is 11:33:20 UTC
    assert _noted(log.notes, "read with the header's TimeZone, -18000 s from UTC")
    _planned_and_scored(path, capsys)


def test_no_unix_start_time_nor_a_zone_leaves_second_zero_unknown(tmp_path, capsys):
    path = save_swf(tmp_path / "nostart.swf", "; Version: 2.2\n; StartTime: Tue Nov 09 "
                    "06:13:20 2004\n; TimeZoneString: Mars/Olympus\n; MaxProcs: 32\n"
                    + _days())
    log = read_swf(path)
    assert log.unix_start is None
    assert _noted(log.notes, "no UnixStartTime nor a known TimeZoneString")
    _planned_and_scored(path, capsys)


# ---- cancelled jobs --------------------------------------------------------------------------

def test_a_log_of_cancelled_jobs_only_plans_nothing_and_says_why(tmp_path):
    log = read_swf(save_swf(tmp_path / "cancelled.swf", BASE + _days(status=5, run=-1)))
    plan = plan_replay(log, ALPHA, seed=1)
    assert plan.jobs == [] and _noted(plan.notes, "no job of the log ran at all")


def test_a_window_of_cancelled_jobs_between_busy_days_says_they_never_ran(tmp_path):
    log = read_swf(save_swf(tmp_path / "gap.swf", BASE + _days(1, 100) + "".join(
        _line(n, 1800 * n, run=-1, status=5) for n in range(101, 300)) + _days(300, 400)))
    plan = plan_replay(log, ALPHA, start=1800 * 150, duration_s=600)
    assert plan.jobs == []
    assert _noted(plan.notes, "20 of the 20 job(s) submitted in this window are not "
                  "replayed", "20 never ran (field 4, run time, is -1 or below")


# ---- bytes on disk ---------------------------------------------------------------------------

@pytest.mark.parametrize("name,data", [
    ("crlf.swf", (BASE + _days()).replace("\n", "\r\n").encode()),
    ("dos.swf", (BASE + _days()).replace("\n", "\r\n").encode() + b"\x1a"),
    ("crlf.swf.gz", gzip.compress((BASE + _days()).replace("\n", "\r\n").encode())),
])
def test_windows_line_endings_are_read(tmp_path, capsys, name, data):
    path = save_swf(tmp_path / name, data)
    assert len(read_swf(path).jobs) == 160
    _planned_and_scored(path, capsys)


def test_a_gzip_log_cut_mid_stream_is_refused_with_its_last_whole_line(tmp_path, capsys):
    whole = gzip.compress((BASE + _days()).encode())
    path = save_swf(tmp_path / "cut.swf.gz", whole[:len(whole) // 2])
    with pytest.raises(BadInput) as e:
        read_swf(path)
    said = str(e.value)
    assert f"the trace {path} is not a readable gzip file: it is cut off or damaged after " \
        "line" in said and "nothing of it is replayed" in said, said
    assert "is not a readable gzip file" in load_refused(capsys, "--trace", str(path),
                                                         "--site", "alpha")
