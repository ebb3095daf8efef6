"""The twenty-fourth sweep of SWF logs, written here from the Standard Workload Format's
definition with quirks of other archive logs: every field written as a float (`12.0`), -1
in every field the format lets a log leave out, a header MaxProcs below a job's size, a few
jobs far larger than the whole machine among many that fit, a window of no length or at the
log's last submission, a --duration past the log's end, a gzip cut short, Windows line
ends, a first job submitted at a huge offset, no UnixStartTime, tab-separated fields, and
partition names given on one `; Partitions:` line. Each is read by `read_swf`, planned by
`plan_replay` on alpha's shape, by `diamond testbed load --trace --dry-run` and scored by
`benchmarks.prediction`, or refused naming its line and field; no test bed.

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- a few jobs that ran on thousands of times the header's MaxProcs (100,000 processors in a
  log of 32: a shifted field) made the machine theirs: every other job became a sliver of
  it and the replay thinned all of them out (0 jobs planned, any window); such broken
  records, up to one job in twenty, are now each counted as the whole machine, and said;
- `; Partitions: 1 batch 2 debug` (pairs separated by blanks alone) named partition 1
  `batch` and left 2 unnamed: `--partition debug` was refused; each pair is now read.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from sweep_helpers import dry_run_plan, load_refused, save_swf
from test_trace_unseen20 import _job

from benchmarks import prediction
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import one_partition, plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs
START = "; UnixStartTime: 1600000000\n"
BASE = "; Version: 2.2\n; Computer: Test\n; MaxProcs: 32\n" + START


def _days(first: int = 1, last: int = 160, offset: int = 0, **kw: object) -> str:
    """Jobs every 30 minutes with waits of 0-30 minutes: over three days, scored."""
    return "".join(_job(n, offset + 1800 * n, wait=600 * (n % 4), **kw)
                   for n in range(first, last + 1))


def _planned_and_scored(path: Path, capsys, *more: str) -> dict:
    """The log read, planned on alpha, dry-run by the CLI and scored: the dry run's plan."""
    assert plan_replay(read_swf(path), ALPHA).jobs
    trace = dry_run_plan(capsys, path, *more)
    assert trace["jobs"] > 0, trace
    assert prediction.run_log(path, moments=3, seed=1)["moments"] > 0
    return trace


def _same_jobs(a: Path, b: Path) -> None:
    assert read_swf(a).jobs == read_swf(b).jobs


# ---- how the fields are written -------------------------------------------------------------

def test_every_field_written_as_a_float_is_the_log_of_whole_numbers(tmp_path, capsys):
    """SWF's times may be floats; converters write `12.0` in every field."""
    floats = "".join(" ".join(f"{float(x)}" for x in line.split()) + "\n"
                     for line in _days().splitlines())
    path = save_swf(tmp_path / "floats.swf", BASE + floats)
    _same_jobs(path, save_swf(tmp_path / "ints.swf", BASE + _days()))
    _planned_and_scored(path, capsys)


def test_minus_one_in_every_optional_field_is_read_planned_and_scored(tmp_path, capsys):
    """Only number, submit, wait, run and allocated processors given; fields 6-18 -1."""
    body = "".join(f"{n} {1800 * n} {600 * (n % 4)} 1200 8" + " -1" * 13 + "\n"
                   for n in range(1, 161))
    path = save_swf(tmp_path / "bare.swf", BASE + body)
    assert [j.procs for j in read_swf(path).jobs][:3] == [8, 8, 8]
    _planned_and_scored(path, capsys)


@pytest.mark.parametrize("end", ["\r\n", "\t"])
def test_windows_line_ends_and_tab_separated_fields_are_the_same_log(tmp_path, capsys, end):
    text = BASE + _days()
    odd = text.replace("\n", "\r\n") if end == "\r\n" else \
        BASE + _days().replace(" ", "\t")
    path = save_swf(tmp_path / "odd.swf", odd)
    _same_jobs(path, save_swf(tmp_path / "plain.swf", text))
    _planned_and_scored(path, capsys)


# ---- the machine's size -----------------------------------------------------------------------

def test_a_header_maxprocs_below_a_jobs_size_takes_the_jobs_and_says_so(tmp_path, capsys):
    path = save_swf(tmp_path / "small.swf", BASE.replace("32", "16") + _days(procs=24))
    log = read_swf(path)
    assert any("its header says MaxProcs 16: the machine is taken to have" in n
               for n in log.notes), log.notes
    _planned_and_scored(path, capsys)


def test_fault_a_few_jobs_far_larger_than_the_machine_are_counted_as_it_and_said(tmp_path,
                                                                                capsys):
    """Two jobs of 4,096 and 100,000 processors in a log of 32 made the machine 100,000:
    the other 160 jobs were thinned out of every window (0 jobs planned)."""
    body = _days() + _job(161, 1800 * 161, procs=4096) + _job(162, 1800 * 162, procs=100000)
    path = save_swf(tmp_path / "broken.swf", BASE + body)
    log = read_swf(path)
    assert log.max_procs == 32, log.max_procs
    assert [j.procs for j in log.jobs[-2:]] == [32, 32]
    assert any(n.startswith("2 of the 162 job(s) that ran held more than 100 times the log's "
                            "32 processors (MaxProcs) (e.g. job 162: 100000 in field 5)")
               for n in log.notes), log.notes
    _planned_and_scored(path, capsys)


def test_many_jobs_far_larger_than_the_header_still_make_the_machine(tmp_path):
    """One job in ten so large: the header is what is wrong (it counted nodes, say)."""
    body = "".join(_job(n, 1800 * n, procs=(5000 if n % 10 == 0 else 8))
                   for n in range(1, 161))
    log = read_swf(save_swf(tmp_path / "header.swf", BASE + body))
    assert log.max_procs >= 5000 and not any("broken records" in n for n in log.notes)


def test_a_job_a_little_larger_than_the_header_still_sizes_the_machine(tmp_path):
    body = _days() + _job(161, 1800 * 161, procs=64)
    log = read_swf(save_swf(tmp_path / "little.swf", BASE + body))
    assert log.max_procs == 64 and not any("broken records" in n for n in log.notes)


# ---- windows ------------------------------------------------------------------------------------

def test_a_window_of_no_length_is_refused_saying_what_is_accepted(tmp_path, capsys):
    path = save_swf(tmp_path / "log.swf", BASE + _days())
    with pytest.raises(SystemExit) as e:
        load_refused(capsys, "--trace", str(path), "--site", "alpha", "--start", "3600",
                     "--duration", "0")
    assert e.value.code == 2
    assert "argument --duration: expected a number of real seconds above 0" in \
        capsys.readouterr().err


def test_a_window_at_the_last_submission_says_nothing_arrives_after_it(tmp_path, capsys):
    path = save_swf(tmp_path / "log.swf", BASE + _days())
    trace = dry_run_plan(capsys, path, "--start", str(1800 * 160))
    assert trace["arrivals_in_log"] == 1 and any(
        "from the window's start the log has 0): no job arrives after 0 s" in n
        for n in trace["notes"]), trace


def test_a_window_past_the_logs_end_is_refused_naming_the_span(tmp_path, capsys):
    path = save_swf(tmp_path / "log.swf", BASE + _days())
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha", "--start",
                       str(1800 * 170))
    assert f"--start {1800 * 170} is outside the log log (its jobs were submitted between " \
        f"1800 and {1800 * 160} s)" in err, err


def test_a_duration_beyond_the_logs_end_replays_what_is_there_and_says_so(tmp_path, capsys):
    path = save_swf(tmp_path / "log.swf", BASE + _days())
    trace = dry_run_plan(capsys, path, "--start", str(1800 * 150), "--duration", "100000")
    assert trace["jobs"] == trace["arrivals_in_log"] + trace["running_at_start"] + \
        trace["queued_at_start"] > 0
    assert any("the window runs 99700 real seconds past the log's last submission" in n
               for n in trace["notes"]), trace


def test_a_first_job_at_a_huge_offset_without_unixstarttime_says_its_times(tmp_path, capsys):
    """Submit times that are Unix times (a log that gives no UnixStartTime)."""
    path = save_swf(tmp_path / "unix.swf", "; MaxProcs: 32\n" + _days(offset=10 ** 9))
    _planned_and_scored(path, capsys)
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha", "--start", "0")
    assert "the log's submit times are Unix times (its first 1000001800): 0 s after its " \
        "first submission is --start 1000001800" in err, err


def test_no_unixstarttime_is_read_planned_and_scored(tmp_path, capsys):
    path = save_swf(tmp_path / "nostart.swf", "; Version: 2.2\n; MaxProcs: 32\n" + _days())
    _planned_and_scored(path, capsys, "--start", "86400")


# ---- compressed copies ------------------------------------------------------------------------

@pytest.mark.parametrize("keep", [0.5, -4])
def test_a_gzip_cut_short_is_refused_naming_the_last_line_read(tmp_path, capsys, keep):
    """Cut mid-stream, or only its last 4 bytes (the length) lost: nothing replayed."""
    packed = gzip.compress((BASE + _days()).encode())
    cut = packed[:int(len(packed) * keep)] if keep > 0 else packed[:keep]
    path = save_swf(tmp_path / "cut.swf.gz", cut)
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha")
    assert f"the trace {path} is not a readable gzip file: it is cut off or damaged after " \
        "line" in err and "nothing of it is replayed" in err, err


# ---- partitions named in the header -------------------------------------------------------------

@pytest.mark.parametrize("header", ["; Partitions: 1 batch 2 debug\n",
                                    "; Partitions: 1 batch  2 debug  3 gpu\n",
                                    "; Partitions: 1=batch, 2=debug\n"])
def test_fault_partition_names_on_one_line_are_each_read(tmp_path, capsys, header):
    """`1 batch 2 debug` named partition 1 `batch` and left 2 unnamed: `--partition debug`
    was refused (`has no partition 'debug'`)."""
    body = _days(last=80, partition=1) + _days(first=81, partition=2)
    path = save_swf(tmp_path / "parts.swf", BASE + header + body)
    log = read_swf(path)
    assert dict((n, name) for n, name, _ in log.partitions)[2] == "debug", log.partitions
    assert {j.partition for j in one_partition(log, "debug").jobs} == {2}
    assert dry_run_plan(capsys, path, "--partition", "debug")["jobs"] > 0


@pytest.mark.parametrize("line,want", [
    ("; Partition: 1 thin 896 processors\n", (1, "thin", 896)),
    ("; Partitions: 1 short 30 minutes\n", (1, "short", 0)),
])
def test_a_partition_line_with_a_count_stays_one_partition(tmp_path, line, want):
    log = read_swf(save_swf(tmp_path / "one.swf", BASE.replace("32", "1024") + line + _days()))
    assert log.partitions[0] == want, log.partitions
