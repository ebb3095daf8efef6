"""The thirteenth sweep of SWF logs, written here from the Parallel Workloads Archive's format
definition: archive headers of several kinds (MaxNodes with a Note for a node's
processors, MaxProcs typed by hand, numbered Partition lines), -1 in every field SWF lets
be unknown, jobs with no runtime, requests shorter than runs, waits below zero, numbered
partitions, job numbers past what a float holds exactly, tabs, CRLF and Ctrl-Z against plain
and gzip, windows with no job, a window whose jobs use more than the machine, and logs cut
off at the end. Each read by `read_swf` and planned by `plan_replay`; no test bed.

Faults found and fixed, each shown by a test here that failed before: a job number of 17
digits went through a float (9007199254740993 was read as ...992, the same job as the line
with that number: named `.2`, one job's copy); a log of -1 on every line was sized as a
machine of as many processors as it has lines (its jobs' ends came before their starts)
rather than refused for giving no processor count; a plain log cut off after its 11th field,
without its line end, had its last line read as a whole job, nothing said; a job of no
submit time (field 2 is -1) was read as submitted at second -1, so a log in Unix times began
35 years early and drawn windows fell before its first day, nothing said."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from diamond_jupyter.cli import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import one_partition, plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs, default partition 1 day


def _line(number: int, submit: float, *, wait: float = 60, run: float = 600, procs: int = 8,
          req: float = 900, status: int = 1, user: int = 1, partition: int = 1,
          preceding: int = -1, think: float = -1, sep: str = " ") -> str:
    """One SWF job line of 18 fields, separated by `sep`."""
    fields = (number, f"{submit:.12g}", f"{wait:g}", f"{run:g}", procs, -1, -1, procs, f"{req:g}",
              -1, status, user, 1, -1, 1, partition, preceding, f"{think:g}")
    return sep.join(map(str, fields)) + "\n"


def _steady(count: int, *, every: float = 600, **kw) -> list[str]:
    """`count` jobs submitted every `every` log seconds, numbered from 1."""
    return [_line(n, every * n, **kw) for n in range(1, count + 1)]


def _write(path: Path, text: str, *, packed: bool = False) -> Path:
    path.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
    return path


# ---- archive headers of several kinds --------------------------------------------------------

@pytest.mark.parametrize("header, procs", [
    # the archive's own: MaxNodes and MaxProcs, with notes that change nothing
    ("; Version: 2.2\n; Computer: IBM SP2\n; MaxNodes: 100\n; MaxProcs: 100\n"
     "; Note: the scheduler was EASY with backfilling\n; Note: times are in seconds\n", 100),
    # MaxNodes alone, a Note saying what a node holds
    ("; MaxNodes: 64\n; Note: each node has 4 CPUs\n", 256),
    # typed by hand: '=' and another case
    ("; maxprocs = 512\n; MAXNODES = 64\n", 512),
    # thousands set apart, several fields on a line
    ("; MaxNodes: 1,024 ; MaxProcs: 2,048\n", 2048),
])
def test_archive_headers_of_several_kinds_size_the_machine(tmp_path: Path, header: str,
                                                          procs: int) -> None:
    log = read_swf(_write(tmp_path / "h.swf", header + "".join(_steady(300))))
    assert log.max_procs == procs
    plan = plan_replay(log, ALPHA, start=86_400, seed=1)
    # each 8-processor job is its share of alpha's 32 CPUs, at least one
    assert {j.nodes * j.cpus_per_node for j in plan.jobs} == {max(1, round(8 / procs * 32))}


def test_numbered_partition_lines_size_each_partition(tmp_path: Path) -> None:
    """Partitions 0-2 on their own lines; jobs alternate among them. Each replayed alone is
    sized by its line, and an unknown number is refused naming the ones there are."""
    header = ("; MaxProcs: 96\n; Partitions: 3\n; Partition: 0 login (8 processors)\n"
              "; Partition: 1 batch (64 processors)\n; Partition: 2 gpu (24 processors)\n")
    lines = [_line(n, 600 * n, procs=4, partition=n % 3) for n in range(1, 301)]
    log = read_swf(_write(tmp_path / "parts.swf", header + "".join(lines)))
    sizes = {number: one_partition(log, str(number)).max_procs for number in (0, 1, 2)}
    assert sizes == {0: 8, 1: 64, 2: 24}
    assert one_partition(log, "gpu").max_procs == 24
    with pytest.raises(BadInput, match=r"has no partition '7' \(field 16\): its jobs are in "
                                       r"partitions 0 \(login\): 100 job\(s\), 1 \(batch\)"):
        one_partition(log, "7")


# ---- -1 where SWF lets a field be unknown ----------------------------------------------------

def test_minus_one_in_every_optional_field_replays_with_the_partitions_limit(
        tmp_path: Path) -> None:
    """Only number, submit, wait, run and allocated processors are given: each job gets the
    default partition's limit (no request), said; users, partitions and predecessors are
    unknown and change nothing."""
    lines = "".join(f"{n} {600 * n} 60 600 8 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                    for n in range(1, 301))
    log = read_swf(_write(tmp_path / "m1.swf", "; MaxProcs: 64\n" + lines))
    assert {(j.req_time, j.user, j.partition, j.preceding) for j in log.jobs} == {
        (-1, -1, -1, -1)}
    plan = plan_replay(log, ALPHA, start=86_400, seed=1)
    assert plan.jobs and {j.walltime_min for j in plan.jobs} == {24 * 60}
    assert all(j.after is None for j in plan.jobs)
    [note] = [n for n in plan.notes if "no requested time" in n]
    assert "(field 9 is -1 or 0" in note and "the default 1440 min" in note


def test_a_log_of_minus_one_but_its_submit_times_is_refused_for_no_processor_count(
        tmp_path: Path) -> None:
    """Before: read as a machine of 5 processors (5 lines whose -1 runs end before their
    starts, -1 processors each, counted as processors given back), replayed as no load,
    nothing said of why."""
    path = _write(tmp_path / "unknown.swf", "".join(f"{n} {60 * n} " + " ".join(["-1"] * 16)
                                                    + "\n" for n in range(1, 6)))
    with pytest.raises(BadInput) as e:
        read_swf(path)
    assert str(e.value) == (f"the trace {path} gives no processor count: no MaxProcs or "
                            "MaxNodes header and no job with allocated or requested "
                            "processors (fields 5 and 8 are -1 on every line)")


def test_a_log_of_minus_one_on_every_line_is_refused_for_no_submit_time(
        tmp_path: Path) -> None:
    path = _write(tmp_path / "unknown.swf", "; MaxProcs: 64\n" + "".join(
        " ".join(["-1"] * 18) + "\n" for _ in range(5)))
    with pytest.raises(BadInput) as e:
        read_swf(path)
    assert str(e.value) == (f"the trace {path} gives no job a submit time: field 2 is -1 "
                            "(unknown) on each of its 5 job line(s) (e.g. line 2), so nothing "
                            "places its jobs in time (accepted: seconds from the log's start, "
                            "or Unix times)")


def test_a_job_of_no_submit_time_is_not_placed_at_the_logs_start(tmp_path: Path) -> None:
    """A log in Unix times whose first line, a job cancelled before it ran, has every time
    -1. Before: read as submitted at second -1, 35 years before the others: the log's span
    began there, a drawn window could start before the log's first real submission (its
    first day, the warm-up, lost) and a --start of seconds from the log's start was taken
    as one; nothing said. Now: left out, said, and the log read as the one without it."""
    t0 = 1_100_000_000
    lines = [_line(n, t0 + 600 * n) for n in range(2, 500)]
    unknown = " ".join(["1", *["-1"] * 9, "5", *["-1"] * 7]) + "\n"
    header = "; MaxJobs: 499\n; MaxProcs: 64\n"
    log = read_swf(_write(tmp_path / "unix.swf", header + unknown + "".join(lines)))
    (tmp_path / "clean").mkdir()
    clean = read_swf(_write(tmp_path / "clean" / "unix.swf", "; MaxProcs: 64\n"
                            + "".join(lines)))
    assert log.notes == ("1 job(s) have no submit time (field 2 is -1, e.g. job 1, line 3): "
                         "nothing places them in time, and they are not replayed",)
    assert log.table == clean.table and log.span == clean.span
    for seed in range(4):
        plan = plan_replay(log, ALPHA, seed=seed)
        assert plan.window[0] >= t0 + 1200 + 86_400
        assert plan.jobs == plan_replay(clean, ALPHA, seed=seed).jobs


def test_jobs_that_never_ran_do_not_size_the_machine(tmp_path: Path) -> None:
    """Ten jobs cancelled with unknown times (run -1) of 4 processors each, and one of 16
    that ran: the machine is what ran (16), not the cancelled jobs' -1 runs counted as
    processors held before they started."""
    lines = [f"{n} {n} -1 -1 4 -1 -1 4 -1 -1 5 1 1 -1 1 1 -1 -1\n" for n in range(1, 11)]
    lines.append(_line(11, 20, procs=16))
    log = read_swf(_write(tmp_path / "cancelled.swf", "".join(lines)))
    assert log.max_procs == 16


# ---- runtimes and requests -------------------------------------------------------------------

def test_jobs_of_no_runtime_are_no_load_and_the_rest_replay(tmp_path: Path) -> None:
    """Every other job ran 0 s (failed at once): none of them is replayed, the others are,
    and the utilization is the log's."""
    lines = [_line(n, 600 * n, run=0 if n % 2 else 1200) for n in range(1, 401)]
    log = read_swf(_write(tmp_path / "zero.swf", "; MaxProcs: 64\n" + "".join(lines)))
    plan = plan_replay(log, ALPHA, start=86_400, seed=2)
    numbers = {int(j.name.split("-")[2]) for j in plan.jobs}
    assert numbers and all(n % 2 == 0 for n in numbers)
    assert plan.site_utilization == pytest.approx(plan.log_utilization, rel=0.05)


@pytest.mark.parametrize("scale", [30.0, 60.0, 120.0])
def test_requests_are_kept_as_written_and_scaled_and_one_shorter_than_its_run_is_its_run(
        tmp_path: Path, scale: float) -> None:
    """Odd jobs asked 2 h and ran 1 h; even jobs asked 10 min and ran 1 h (their center let
    them run on). The first keep their request, the second are not killed short of the run
    the log records."""
    lines = [_line(n, 600 * n, run=3600, req=7200 if n % 2 else 600, procs=4)
             for n in range(1, 400)]
    log = read_swf(_write(tmp_path / "req.swf", "; MaxProcs: 128\n" + "".join(lines)))
    plan = plan_replay(log, ALPHA, start=86_400, seed=3, scale=scale)
    arrivals = [j for j in plan.jobs if j.name.startswith("trace-arrive-")]
    assert arrivals
    for j in arrivals:
        asked = 7200 if int(j.name.split("-")[2]) % 2 else 3600
        assert j.walltime_min == -(-asked // (scale * 60)), j
        assert j.runtime_s == pytest.approx(3600 / scale, abs=0.01)
        assert j.runtime_s <= j.walltime_min * 60


# ---- waits ------------------------------------------------------------------------------------

def test_waits_below_minus_one_are_unknown_and_their_queue_is_simulated(tmp_path: Path) -> None:
    """A log in local time across the end of daylight saving: waits of -3000 s. Said, and
    the queue at the window's start is the simulated machine's, the recorded waits kept."""
    lines = [_line(n, 300 * n, wait=-3000, run=1800, procs=32) if 280 <= n < 300
             else _line(n, 300 * n, wait=0, run=600, procs=32) for n in range(1, 400)]
    log = read_swf(_write(tmp_path / "dst.swf", "; MaxProcs: 64\n" + "".join(lines)))
    assert any("20 job(s) have a wait or run time below -1" in n for n in log.notes)
    plan = plan_replay(log, ALPHA, start=300 * 290 + 1, seed=1)
    assert any("have no recorded wait" in n and "simulated" in n for n in plan.notes)
    # the machine holds two 32-processor jobs: jobs of 30 min submitted every 5 min queue
    assert plan.queued_at_start > 0 and plan.running_at_start == 2


def test_the_queue_at_the_window_start_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    """At t = 10,000: jobs 1-3 running (one with 100 s left), jobs 4-5 waiting, job 6 ended;
    arrivals after. Each is where the log had it; a running job keeps what was left of its
    run and of its request, a waiting one its whole run and request."""
    lines = [_line(1, 0, wait=0, run=10_100, req=20_000, procs=16),
             _line(2, 5000, wait=100, run=20_000, req=30_000, procs=16),
             _line(3, 9000, wait=0, run=5000, req=6000, procs=16),
             _line(4, 9500, wait=700, run=3000, req=3600, procs=16),
             _line(5, 9600, wait=2000, run=3000, req=3600, procs=16),
             _line(6, 9700, wait=0, run=100, req=300, procs=16),
             *[_line(n, 10_000 + 600 * n, wait=0, run=600, procs=16) for n in range(7, 40)]]
    log = read_swf(_write(tmp_path / "queue.swf", "; MaxProcs: 64\n" + "".join(lines)))
    plan = plan_replay(log, ALPHA, start=10_000, seed=1, duration_s=120, scale=60)
    by_name = {j.name: j for j in plan.jobs}
    assert (plan.running_at_start, plan.queued_at_start) == (3, 2)
    assert {"trace-run-1", "trace-run-2", "trace-run-3", "trace-wait-4", "trace-wait-5"} <= \
        set(by_name)
    assert "trace-run-6" not in by_name
    assert by_name["trace-run-1"].runtime_s == pytest.approx(100 / 60, abs=0.01)
    assert by_name["trace-run-1"].walltime_min == -(-(20_000 - 10_000) // 3600)
    assert by_name["trace-wait-4"].runtime_s == pytest.approx(50.0)
    assert by_name["trace-wait-4"].walltime_min == 1 and by_name["trace-wait-4"].at_s == 0


# ---- job numbers -------------------------------------------------------------------------------

def test_job_numbers_past_a_floats_precision_are_kept_apart(tmp_path: Path) -> None:
    """Numbers of 17 digits (a converter's id of date and counter): 9007199254740993 is
    2**53 + 1, which a float reads as 2**53. Before: the two lines were one job's two
    copies (`trace-run-9007199254740992` and `...992.2`), and a job depending on ...993
    followed ...992."""
    big = 2 ** 53
    lines = [_line(big, 100, wait=0, run=20_000),
             _line(big + 1, 200, wait=0, run=20_000),
             _line(big + 3, 20_100, wait=0, run=600, preceding=big + 1, think=0),
             *_steady(60, every=600)[34:]]
    log = read_swf(_write(tmp_path / "ids.swf", "; MaxProcs: 64\n" + "".join(lines)))
    assert [j.number for j in log.jobs[:3]] == [big, big + 1, big + 3]
    assert [j.copy for j in log.jobs[:3]] == [0, 0, 0]
    assert log.jobs[2].preceding == big + 1
    plan = plan_replay(log, ALPHA, start=20_000, seed=1, duration_s=60)
    by_name = {j.name: j for j in plan.jobs}
    assert {f"trace-run-{big}", f"trace-run-{big + 1}"} <= set(by_name)
    assert by_name[f"trace-arrive-{big + 3}"].after == f"trace-run-{big + 1}"


def test_a_job_number_of_20_digits_is_refused_naming_the_line(tmp_path: Path) -> None:
    lines = _steady(10)
    lines[4] = _line(123456789012345678901, 3000)
    path = _write(tmp_path / "long_id.swf", "".join(lines))
    with pytest.raises(BadInput, match=rf"^{path}:5: a job number, processor count, status or "
                                       r"preceding job is too large a number"):
        read_swf(path)


# ---- line ends, tabs, compression --------------------------------------------------------------

def test_tabs_crlf_trailing_blanks_and_ctrl_z_read_as_the_plain_log(tmp_path: Path) -> None:
    """A log written on Windows: fields by tabs, CRLF, a tab after the last field, a Ctrl-Z
    at the end; plain and gzip. Each reads and plans as the plain log with spaces."""
    header = "; MaxNodes: 32\n; MaxProcs: 64\n"
    plain = header + "".join(_steady(400))
    windows = (header + "".join(_steady(400, sep="\t"))).replace("\n", "\t\r\n") + "\x1a"
    base = read_swf(_write(tmp_path / "base.swf", plain))
    for name, packed in (("win.swf", False), ("win.swf.gz", True)):
        log = read_swf(_write(tmp_path / name, windows, packed=packed))
        assert log.table == base.table and log.max_procs == base.max_procs == 64
        assert log.notes == base.notes == ()
        assert plan_replay(log, ALPHA, start=86_400, seed=4).jobs == plan_replay(
            base, ALPHA, start=86_400, seed=4).jobs


# ---- windows ------------------------------------------------------------------------------------

def test_a_window_with_no_job_says_so_and_replays_nothing(tmp_path: Path) -> None:
    """Jobs on day 1 and day 5 only: a window on day 3 has none running, waiting or
    arriving."""
    lines = [_line(n, 600 * n) for n in range(1, 100)]
    lines += [_line(n, 4 * 86_400 + 600 * n) for n in range(100, 200)]
    log = read_swf(_write(tmp_path / "gap.swf", "; MaxProcs: 64\n" + "".join(lines)))
    plan = plan_replay(log, ALPHA, start=2 * 86_400, seed=1)
    assert plan.jobs == [] and plan.site_utilization == 0
    assert any("no job of the log ran, waited or arrived in this window" in n
               for n in plan.notes)


def test_a_window_whose_jobs_use_more_than_the_machine_says_so(tmp_path: Path) -> None:
    """MaxProcs 100, and jobs whose recorded starts hold 106 at once (a log's own rounding,
    within what the header is trusted for): the window's utilization is above 1, said,
    and the site is loaded as much (its CPUs, too, given more than they run at once)."""
    lines = [_line(n, 10 * n, wait=0, run=86_400, procs=53) for n in range(1, 3)]
    lines += [_line(n, 3600 + 600 * n, wait=0, run=60, procs=1) for n in range(3, 100)]
    log = read_swf(_write(tmp_path / "over.swf", "; MaxProcs: 100\n" + "".join(lines)))
    assert log.max_procs == 100
    plan = plan_replay(log, ALPHA, start=7200, seed=1, duration_s=120)
    assert plan.log_utilization > 1.0
    assert any(f"the log's jobs use {plan.log_utilization:.2f} times its machine" in n
               for n in plan.notes)
    assert plan.running_at_start == 2
    assert plan.site_utilization == pytest.approx(plan.log_utilization, rel=0.1)


def test_arrivals_are_thinned_to_the_logs_utilization(tmp_path: Path) -> None:
    """One-processor jobs of a 1024-processor machine: each is a whole CPU of alpha, 32
    times its share; thinning keeps about 1 in 32, so that alpha is as busy as the log's
    machine was."""
    lines = _steady(2000, every=30, run=3000, procs=1, wait=0)
    log = read_swf(_write(tmp_path / "thin.swf", "; MaxProcs: 1024\n" + "".join(lines)))
    plan = plan_replay(log, ALPHA, start=30_000, seed=5)
    assert plan.arrivals_kept < plan.arrivals_in_log / 10
    assert plan.site_utilization == pytest.approx(plan.log_utilization, rel=0.05)
    assert any("jobs kept with probability" in n for n in plan.notes)


# ---- logs cut off -------------------------------------------------------------------------------

@pytest.mark.parametrize("kept", [11, 13, 17])
def test_a_plain_log_cut_off_after_enough_fields_is_named_as_cut_off(tmp_path: Path,
                                                                      kept: int) -> None:
    """A copy broken off in its last line after field 11, 13 or 17, without the line end,
    where the lines above have 18 fields. Before: the part read as a whole job, nothing
    said (its think time, user or partition lost, its last number perhaps cut short)."""
    lines = _steady(100)
    last = " ".join(_line(101, 60_600).split()[:kept])
    path = _write(tmp_path / "cut.swf", "; MaxRecords: 101\n" + "".join(lines) + last)
    with pytest.raises(BadInput) as e:
        read_swf(path)
    assert str(e.value).startswith(
        f"{path}:102: the log is cut off: its last line has {kept} of 18 fields and no line "
        f"end ({last!r}), and the header says MaxRecords 101; nothing of it is replayed"), e


def test_a_last_line_without_its_line_end_but_whole_reads(tmp_path: Path) -> None:
    """A log saved without a final line end (most editors may) whose last line has all its
    fields, and an older conversion of 15 fields a line: both read whole."""
    lines = _steady(100)
    log = read_swf(_write(tmp_path / "whole.swf", "".join(lines).rstrip("\n")))
    assert len(log.jobs) == 100 and log.jobs[-1].number == 100
    short = "".join(" ".join(t.split()[:15]) + "\n" for t in lines).rstrip("\n")
    assert len(read_swf(_write(tmp_path / "fifteen.swf", short)).jobs) == 100


def test_a_gzip_log_cut_off_is_refused_and_one_cut_at_a_line_end_is_said(
        tmp_path: Path) -> None:
    lines = _steady(3000)
    text = "; MaxJobs: 3000\n; MaxRecords: 3000\n" + "".join(lines)
    packed = gzip.compress(text.encode())
    broken = tmp_path / "broken.swf.gz"
    broken.write_bytes(packed[: len(packed) * 2 // 3])
    with pytest.raises(BadInput, match=r"is not a readable gzip file: it is cut off or damaged "
                                       r"after line \d+"):
        read_swf(broken)
    short = read_swf(_write(tmp_path / "short.swf.gz", "; MaxJobs: 3000\n; MaxRecords: 3000\n"
                            + "".join(lines[:1200]), packed=True))
    assert short.notes == ("the log's header says MaxRecords 3000, the file has 1200 job "
                           "lines: it may be cut off (a download broken off at a line's "
                           "end); the 1200 are replayed",)


def test_a_log_of_15_fields_a_line_cut_off_names_what_the_line_above_has(
        tmp_path: Path) -> None:
    lines = "".join(" ".join(t.split()[:15]) + "\n" for t in _steady(100))
    path = _write(tmp_path / "cut15.swf", lines + "101 60600 60 600 8 -1 -1 8 900 -1 1 1")
    with pytest.raises(BadInput, match=rf"^{path}:101: the log is cut off: its last line has "
                                       r"12 fields, the line above 15, and no line end "):
        read_swf(path)


# ---- what a user runs: `diamond testbed load --trace ... --dry-run` ---------------------------

def test_the_cli_refuses_a_cut_off_log_in_one_line_naming_it(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path / "cut.swf", "".join(_steady(100))
                  + "101 60600 60 600 8 -1 -1 8 900 -1 1 1 1 -1")
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{path}:101: the log is cut off: its last line has 14 of 18 fields" in err
    assert "\n" not in err and "Traceback" not in err


def test_the_cli_plan_says_which_jobs_have_no_submit_time(tmp_path: Path, capsys) -> None:
    lines = _steady(400)
    lines[200] = " ".join(["201", *["-1"] * 9, "5", *["-1"] * 7]) + "\n"
    path = _write(tmp_path / "nosubmit.swf", "; MaxProcs: 64\n" + "".join(lines))
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--start",
                "86400", "--dry-run", "--json"]) == 0
    [trace] = json.loads(capsys.readouterr().out)["traces"]
    assert trace["jobs"] > 0
    assert "1 job(s) have no submit time (field 2 is -1, e.g. job 201, line 202): nothing " \
        "places them in time, and they are not replayed" in trace["notes"]


@pytest.mark.parametrize("count_line", ["; Partitions: 1\n", "; partitions = 1\n",
                                        "; Partition: 1\n"])
def test_a_partition_count_after_the_partition_lines_takes_nothing_from_them(
        tmp_path: Path, count_line: str) -> None:
    """A header giving its partitions' count after their lines, as "Partitions: 1" (or
    partition 1 named again, bare). Before: that bare "1" replaced partition 1's line, which
    lost its name and size: replayed alone, batch was a machine of 4 processors (what its
    jobs held at once), not 64, and `--partition batch` was refused."""
    header = ("; MaxProcs: 96\n; Partition: 0 login (8 processors)\n"
              "; Partition: 1 batch (64 processors)\n; Partition: 2 gpu (24 processors)\n")
    lines = [_line(n, 600 * n, procs=4, partition=n % 3) for n in range(1, 301)]
    log = read_swf(_write(tmp_path / "count.swf", header + count_line + "".join(lines)))
    assert log.partitions == ((0, "login", 8), (1, "batch", 64), (2, "gpu", 24))
    assert one_partition(log, "1").max_procs == one_partition(log, "batch").max_procs == 64
