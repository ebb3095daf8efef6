"""The sixteenth sweep of SWF logs: small logs written here the way other logs of the
Parallel Workloads Archive are (header keys in other spellings and cases, Note lines that
run on, -1 in each optional field, every status code, Queue and Partition lines, nodes
against processors, runs of 0 s, a large gzip log read lazily, a window with no jobs,
submit times out of order, a job number twice, a negative wait). Each is read by
`read_swf` and planned by `plan_replay`, or given to `diamond testbed load ... --dry-run`
to check its arguments; no test bed.

Fault found and fixed, shown by a test here that failed before:
- `--start`, `--duration` and `--history` given other than a number ("2h") were refused by
  argparse's "invalid float value: '2h'", which says neither that seconds are wanted nor
  that a unit is not taken: the refusal now says both.
- A header `; MaxProcs: 0` (or `MaxNodes: 0`, or SWF's unknown, -1) was passed over without
  a word and the machine sized from the jobs running at once: the plan's notes now name the
  header line and say what sized the machine instead.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from sweep_helpers import dry_run_plan, load_refused, save_swf, traced_memory

from diamond_jupyter.cli import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import one_partition, plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs
DAY = 86_400


def _job(number: int, submit: float, *, wait: float = 30, run: float = 1200,
         procs: int = 8, req_procs: int | None = None, req: float = 3600, status: int = 1,
         user: int = 5, queue: int = 1, partition: int = 1) -> str:
    """One 18-field job line (memory, CPU time and dependencies unknown)."""
    fields = (number, f"{submit:.10g}", f"{wait:.10g}", f"{run:.10g}", procs, -1, -1,
              procs if req_procs is None else req_procs, f"{req:g}", -1, status, user, 1, -1,
              queue, partition, -1, -1)
    return " ".join(map(str, fields)) + "\n"


def _jobs(count: int, *, every: float = 600, first: int = 1, at: float = 0, **kw) -> str:
    return "".join(_job(n, at + every * (n - first + 1), **kw)
                   for n in range(first, first + count))


# ---- header variants ---------------------------------------------------------------------

@pytest.mark.parametrize("line", ["; MaxProcs: 64", ";MaxProcs:64", ";  MaxProcs :  64",
                                  "; MaxProcs: 64   ", "; MaxProcs:\t64"])
def test_max_procs_spelled_with_other_spacing(tmp_path: Path, line: str) -> None:
    log = read_swf(save_swf(tmp_path / "h.swf", line + "\n" + _jobs(50)))
    assert log.max_procs == 64


def test_a_header_after_the_first_jobs_is_still_read(tmp_path: Path) -> None:
    """Some logs repeat or append header lines after job lines (logs joined with `cat`)."""
    log = read_swf(save_swf(tmp_path / "late.swf", _jobs(20) + "; MaxProcs: 64\n"
                            + _jobs(20, first=21, at=20 * 600)))
    assert log.max_procs == 64 and len(log.jobs) == 40


def test_note_lines_that_run_on_are_not_read_as_fields(tmp_path: Path) -> None:
    header = ("; MaxProcs: 64\n; Note: MaxJobs: the log was cut at 1000 jobs; this is\n"
              ";       a continuation line: 5 10 15 20\n")
    log = read_swf(save_swf(tmp_path / "note.swf", header + _jobs(50)))
    assert log.max_procs == 64 and len(log.jobs) == 50


def test_a_header_of_max_procs_smaller_than_a_job_is_said(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "small.swf", "; MaxProcs: 4\n" + _jobs(50, procs=16)))
    assert log.max_procs >= 16
    assert log.notes


# ---- -1 fields -----------------------------------------------------------------------------

def test_unknown_wait_everywhere_still_plans(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "nowait.swf", "; MaxProcs: 64\n" + _jobs(300, wait=-1)))
    plan = plan_replay(log, ALPHA, start=DAY // 2, seed=1)
    assert plan.jobs
    assert all(j.runtime_s > 0 for j in plan.jobs)


def test_unknown_allocated_procs_uses_the_requested_ones(tmp_path: Path) -> None:
    body = "".join(_job(n, 600 * n, procs=-1, req_procs=16) for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "req.swf", "; MaxProcs: 32\n" + body))
    plan = plan_replay(log, ALPHA, start=DAY // 2, seed=1)
    assert plan.jobs
    assert {j.nodes * j.cpus_per_node for j in plan.jobs} == {16}


def test_unknown_run_time_is_no_load_and_counted(tmp_path: Path) -> None:
    body = _jobs(300, run=-1, status=0)
    log = read_swf(save_swf(tmp_path / "norun.swf", "; MaxProcs: 64\n" + body + _jobs(
        300, first=301, at=300 * 600)))
    plan = plan_replay(log, ALPHA, start=100 * 600, duration_s=600, seed=1)
    assert sum(plan.skipped.values()) > 0


def test_unknown_user_is_not_a_flurry(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "nouser.swf", "; MaxProcs: 64\n" + _jobs(300, user=-1)))
    plan = plan_replay(log, ALPHA, start=DAY // 2, seed=1)
    assert not any("flurry" in n for n in plan.notes)


# ---- status codes --------------------------------------------------------------------------

@pytest.mark.parametrize("status", [0, 1, 5])
def test_each_ended_status_that_ran_is_load(tmp_path: Path, status: int) -> None:
    log = read_swf(save_swf(tmp_path / f"s{status}.swf", "; MaxProcs: 64\n"
                            + _jobs(300, status=status)))
    plan = plan_replay(log, ALPHA, start=DAY // 2, seed=1)
    assert plan.jobs


def test_a_cancelled_job_that_never_ran_is_skipped_by_reason(tmp_path: Path) -> None:
    body = "".join(_job(n, 600 * n, run=0 if n % 2 else 1200, wait=-1 if n % 2 else 30,
                        status=5 if n % 2 else 1) for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "cx.swf", "; MaxProcs: 64\n" + body))
    plan = plan_replay(log, ALPHA, start=DAY // 2, seed=1)
    assert plan.skipped and sum(plan.skipped.values()) >= 1
    assert any("not replayed" in n or "skipped" in n or "no load" in n for n in plan.notes)


def test_an_unknown_status_line_is_read_and_said(tmp_path: Path) -> None:
    body = _jobs(100) + _job(101, 101 * 600, status=7)
    log = read_swf(save_swf(tmp_path / "odd.swf", "; MaxProcs: 64\n" + body))
    assert any("status" in n and "7" in n for n in log.notes)


def test_checkpoint_parts_count_as_one_job(tmp_path: Path) -> None:
    """Status 2 (a part of a checkpointed job, more follow) and 3 (its last part)."""
    body = (_jobs(50) + _job(51, 51 * 600, status=2, run=600)
            + _job(51, 51 * 600 + 700, status=3, run=600))
    log = read_swf(save_swf(tmp_path / "ck.swf", "; MaxProcs: 64\n; MaxJobs: 51\n" + body))
    assert not any("MaxJobs" in n for n in log.notes)


# ---- queues and partitions -----------------------------------------------------------------

def test_partition_lines_name_both_partitions(tmp_path: Path) -> None:
    header = ("; MaxProcs: 64\n; Partition: 1 batch (48 processors)\n"
              "; Partition: 2 debug (16 processors)\n")
    body = "".join(_job(n, 600 * n, partition=1 + n % 2) for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "parts.swf", header + body))
    assert log.partitions == ((1, "batch", 48), (2, "debug", 16))
    assert one_partition(log, "debug").max_procs == 16
    assert len(one_partition(log, "2").jobs) == 150


def test_an_unknown_partition_is_refused_with_those_there_are(tmp_path: Path) -> None:
    header = "; MaxProcs: 64\n; Partition: 1 batch (48 processors)\n"
    log = read_swf(save_swf(tmp_path / "p.swf", header + _jobs(50)))
    with pytest.raises(BadInput) as e:
        one_partition(log, "gpu")
    assert "gpu" in str(e.value) and "batch" in str(e.value)


def test_a_queue_line_limit_is_the_request_of_its_jobs_that_ask_none(tmp_path: Path) -> None:
    header = "; MaxProcs: 64\n; Queue: 1 short MaxRuntime: 1800\n"
    log = read_swf(save_swf(tmp_path / "q.swf", header + _jobs(50, req=-1, run=600)))
    assert log.unasked_s(1) == 1800


# ---- zero-runtime jobs ---------------------------------------------------------------------

def test_a_log_of_only_zero_runs_has_nothing_to_replay_and_says_why(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "zero.swf", "; MaxProcs: 64\n" + _jobs(300, run=0)))
    try:
        plan = plan_replay(log, ALPHA, start=DAY // 2, seed=1)
    except BadInput as e:
        assert "0 s" in str(e) or "ran" in str(e)
    else:
        assert not plan.jobs and sum(plan.skipped.values()) > 0


# ---- a large gzip log, read lazily ---------------------------------------------------------

def test_a_gzip_log_of_two_members_is_read_whole_and_lazily(tmp_path: Path) -> None:
    """Two gzip files joined (`cat a.gz b.gz`, as a log resumed in a second file): both
    members are read, line by line into columns, never the text held whole."""
    first = "; MaxProcs: 64\n" + _jobs(30_000, every=60, run=120)
    second = _jobs(30_000, first=30_001, at=30_000 * 60, every=60, run=120)
    path = tmp_path / "joined.swf.gz"
    path.write_bytes(gzip.compress(first.encode()) + gzip.compress(second.encode()))
    with traced_memory() as memory:
        log = read_swf(path)
    assert len(log.table) == 60_000
    assert memory.peak < 120 * 60_000
    assert "jobs" not in log.__dict__


# ---- windows with no jobs ------------------------------------------------------------------

def test_a_window_in_a_gap_of_the_log_plans_no_arrivals(tmp_path: Path) -> None:
    body = _jobs(100) + _jobs(100, first=101, at=10 * DAY)
    log = read_swf(save_swf(tmp_path / "gap.swf", "; MaxProcs: 64\n" + body))
    plan = plan_replay(log, ALPHA, start=3 * DAY, duration_s=600, seed=1)
    assert plan.arrivals_in_log == 0 and plan.running_at_start == 0


def test_a_start_past_the_log_is_refused_with_its_span(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "past.swf", "; MaxProcs: 64\n" + _jobs(100))
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha", "--start",
                       str(100 * DAY))
    assert "--start" in err


# ---- order, duplicates, negative waits -----------------------------------------------------

def test_submit_times_out_of_order_are_sorted(tmp_path: Path) -> None:
    lines = [_job(n, 600 * n) for n in range(1, 301)]
    lines[10], lines[11] = lines[11], lines[10]
    log = read_swf(save_swf(tmp_path / "order.swf", "; MaxProcs: 64\n" + "".join(lines)))
    submits = [j.submit for j in log.jobs]
    assert submits == sorted(submits)


def test_a_job_number_given_twice_keeps_both_jobs(tmp_path: Path) -> None:
    body = _jobs(50) + _job(50, 51 * 600)
    log = read_swf(save_swf(tmp_path / "dup.swf", "; MaxProcs: 64\n" + body))
    assert len(log.jobs) == 51


def test_a_negative_wait_is_not_a_start_before_submit(tmp_path: Path) -> None:
    body = _jobs(100) + _job(101, 101 * 600, wait=-30)
    log = read_swf(save_swf(tmp_path / "neg.swf", "; MaxProcs: 64\n" + body))
    assert all(j.start >= j.submit for j in log.jobs)


# ---- line and field named in errors ----------------------------------------------------------

def test_a_word_in_a_number_field_names_line_and_field(tmp_path: Path) -> None:
    body = _jobs(3) + _job(4, 2400).replace(" 1200 ", " twenty ", 1)
    with pytest.raises(BadInput) as e:
        read_swf(save_swf(tmp_path / "word.swf", "; MaxProcs: 64\n" + body))
    assert "word.swf:5" in str(e.value) and "twenty" in str(e.value)


def test_a_comma_separated_log_is_refused_clearly(tmp_path: Path) -> None:
    body = _jobs(3).replace(" ", ",")
    with pytest.raises(BadInput) as e:
        read_swf(save_swf(tmp_path / "csv.swf", "; MaxProcs: 64\n" + body))
    assert "csv.swf:2" in str(e.value)


# ---- `diamond testbed load` argument checks ------------------------------------------------

def test_load_refuses_a_missing_trace_naming_it(tmp_path: Path, capsys) -> None:
    err = load_refused(capsys, "--trace", str(tmp_path / "nope.swf"), "--site", "alpha")
    assert "nope.swf" in err


def test_load_refuses_a_negative_scale(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "ok.swf", "; MaxProcs: 64\n" + _jobs(100))
    with pytest.raises(SystemExit) as e:
        cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--scale", "-5",
             "--dry-run"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--scale" in err and "above 0" in err and "(got '-5')" in err


def test_load_refuses_an_unknown_site_with_the_sites_there_are(tmp_path: Path,
                                                               capsys) -> None:
    path = save_swf(tmp_path / "ok.swf", "; MaxProcs: 64\n" + _jobs(100))
    err = load_refused(capsys, "--trace", str(path), "--site", "omega")
    assert "omega" in err and "alpha" in err


def test_load_dry_run_of_a_plain_log_reports_its_plan(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "ok.swf", "; MaxProcs: 64\n" + _jobs(300))
    trace = dry_run_plan(capsys, path, "--start", str(DAY // 2))
    assert trace["site"] == "alpha" and trace["jobs"] > 0 and "skipped" in trace


@pytest.mark.parametrize("option, what", [
    ("--start", "log seconds such as 3600 or 1.5e5"),
    ("--duration", "real seconds above 0 such as 60 or 1.5e3"),
    ("--history", "real seconds, 0 or more, such as 600")])
def test_load_refuses_seconds_that_are_not_a_number_saying_what_it_takes(
        tmp_path: Path, capsys, option: str, what: str) -> None:
    """"--start noon" (before: argparse's "invalid float value: 'noon'", which says neither
    that seconds are wanted nor that a unit is not taken)."""
    path = save_swf(tmp_path / "ok.swf", "; MaxProcs: 64\n" + _jobs(100))
    with pytest.raises(SystemExit) as e:
        cli(["testbed", "load", "--trace", str(path), "--site", "alpha", option, "2h",
             "--dry-run"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"diamond testbed load: error: argument {option}: expected a number of "
                   f"{what}, without a unit (got '2h')")


def test_a_max_procs_with_words_after_it_is_read(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "w.swf", "; MaxProcs: 64 (8 of them interactive)\n"
                            + _jobs(50)))
    assert log.max_procs == 64


def test_a_negative_wait_replays_as_no_wait(tmp_path: Path) -> None:
    body = "".join(_job(n, 600 * n, wait=-60 if n % 3 == 0 else 30) for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "negw.swf", "; MaxProcs: 64\n" + body))
    plan = plan_replay(log, ALPHA, start=DAY // 2, seed=1)
    assert plan.jobs and all(j.runtime_s > 0 for j in plan.jobs)


def test_max_procs_given_twice_takes_the_larger_and_says_so(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "twice.swf", "; MaxProcs: 64\n; MaxProcs: 128\n"
                            + _jobs(50)))
    assert log.max_procs == 128
    assert any("MaxProcs 2 times (64, 128)" in n for n in log.notes)


@pytest.mark.parametrize("name, sep, end", [("tabs.swf", "\t", "\n"),
                                            ("crlf.swf", " ", "\r\n")])
def test_tabs_and_dos_line_ends_read_as_spaces(tmp_path: Path, name: str, sep: str,
                                               end: str) -> None:
    text = ("; MaxProcs: 64\n" + _jobs(50)).replace(" ", sep).replace("\n", end)
    log = read_swf(save_swf(tmp_path / name, text.replace(f";{sep}MaxProcs:", "; MaxProcs:")))
    assert log.max_procs == 64 and len(log.table) == 50


def test_jobs_with_every_time_unknown_are_skipped_as_no_run_time(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "allneg.swf", "; MaxProcs: 64\n"
                            + _jobs(300, wait=-1, run=-1, status=-1)))
    plan = plan_replay(log, ALPHA, start=DAY // 2, seed=1)
    assert not plan.jobs and plan.skipped == {"no_run_time": 60}


# ---- a header size of 0 ------------------------------------------------------------------

@pytest.mark.parametrize("header, line, instead", [
    ("; MaxProcs: 0\n", "line 1 ('; MaxProcs: 0') sizes",
     "sized from its jobs instead, 16 processors: the most they held at once"),
    ("; Version: 2.2\n; MaxNodes: 0\n", "line 2 ('; MaxNodes: 0') sizes",
     "sized from its jobs instead, 16 processors"),
    ("; MaxProcs: -1\n", "line 1 ('; MaxProcs: -1') sizes",
     "sized from its jobs instead, 16 processors"),
    ("; MaxProcs: 0\n; MaxNodes: 0\n",
     "lines 1 ('; MaxProcs: 0') and 2 ('; MaxNodes: 0') size no machine, so they are not read",
     "sized from its jobs instead, 16 processors"),
    ("; MaxNodes: 32\n; MaxProcs: 0\n", "line 2 ('; MaxProcs: 0') sizes",
     "sized by its MaxNodes: 32 processors"),
    ("; MaxNodes: 0\n; MaxProcs: 64\n", "line 1 ('; MaxNodes: 0') sizes",
     "sized by its MaxProcs: 64 processors"),
])
def test_a_header_size_of_zero_is_said_with_what_sized_the_machine(
        tmp_path: Path, header: str, line: str, instead: str) -> None:
    """Jobs of 8 processors every 10 minutes, each running 20: two at once, 16 processors."""
    log = read_swf(save_swf(tmp_path / "zero.swf", header + _jobs(100)))
    [note] = [n for n in log.notes if "no machine" in n]
    assert note.startswith(f"the log's header {line}") and instead in note, note
    assert log.max_procs == int(instead.split(" processors")[0].split()[-1])


def test_a_zero_beside_a_size_given_elsewhere_is_not_said(tmp_path: Path) -> None:
    """Logs joined: one header's 0 beside another's 64 is one of its values, the 64 read."""
    log = read_swf(save_swf(tmp_path / "joined.swf", "; MaxProcs: 0\n; MaxProcs: 64\n"
                            + _jobs(100)))
    assert log.max_procs == 64 and not any("no machine" in n for n in log.notes)


def test_the_load_report_says_the_zero_header(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "zero.swf", "; Computer: a test\n; MaxProcs: 0\n" + _jobs(300))
    trace = dry_run_plan(capsys, path, "--start", str(DAY // 2))
    assert any(n.startswith("the log's header line 2 ('; MaxProcs: 0') sizes no machine")
               for n in trace["notes"]), trace["notes"]
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--dry-run",
                "--start", str(DAY // 2)]) == 0
    said = capsys.readouterr().out.splitlines()
    assert ("alpha: the log's header line 2 ('; MaxProcs: 0') sizes no machine, so it is not "
            "read: the machine is sized from its jobs instead, 16 processors: the most they "
            "held at once") in said, said[-5:]
