"""The twenty-third sweep of SWF logs, written here from the Standard Workload Format's
definition with quirks of other archive logs: jobs cancelled before they started (status
5, run -1) among those that ran, negative wait times, the partition field in use, queue
numbers past the header's Queue lines, a log of one huge job, think times and preceding
jobs (fields 17 and 18) that name an earlier job, a later one, the job itself or one the
log does not hold, jobs listed out of submit order with their predecessors, a header of
`Note:` lines only, very long comment lines, a log whose jobs hardly wait, and a window
with no arrivals. Each is read by `read_swf`, planned by `plan_replay` on alpha's shape, by
`diamond testbed load --trace --dry-run` and scored by `benchmarks.prediction`, or refused
naming its line; no test bed.

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- a comment line longer than 64 kB (a filter list or a log's history on one line) refused
  the whole log as `not a Standard Workload Format log`; a comment of up to 1 MB is now read
  past in pieces, its first 64 kB read, and said (a longer one, or a job line past 64 kB,
  is still refused naming its line);
- a job naming itself as its preceding job (field 17) was replayed as independent unsaid;
  it is now said with its line;
- a job naming as its predecessor one the log does not hold (before its start, cleaned out)
  was replayed as independent unsaid; it is now said;
- jobs without a requested time in a queue the header's Queue lines do not list asked the
  log's MaxRuntime, unsaid; the queues are now said;
- `benchmarks.prediction` scored 0 moments of a log whose jobs hardly wait with no word of
  why; its result now says that no moment drawn found a job waiting, and the median wait.
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
from diamond_jupyter.testbed.trace import MAX_COMMENT_LINE, one_partition, plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs
BASE = "; Version: 2.2\n; Computer: Test\n; MaxProcs: 32\n"


def _days(first: int = 1, last: int = 160, **kw: object) -> str:
    """Jobs every 30 minutes with waits of 0-30 minutes: over three days, scored."""
    return "".join(_job(n, 1800 * n, wait=600 * (n % 4), **kw) for n in range(first, last + 1))


def _noted(notes, *words: str) -> list[str]:
    return [n for n in notes if all(w in n for w in words)]


def _planned_and_scored(path: Path, capsys, **plan: object) -> None:
    log = read_swf(path)
    assert plan_replay(log, ALPHA, **plan).jobs and dry_run_plan(capsys, path)["jobs"] > 0
    assert prediction.run_log(path, moments=3, seed=1)["moments"] > 0


# ---- comment lines --------------------------------------------------------------------------

@pytest.mark.parametrize("compress", [False, True])
def test_fault_a_comment_line_past_64_kb_is_read_past_and_said(tmp_path, capsys, compress):
    """Before: `log.swf:4: a line longer than 65536 characters ...: not a Standard Workload
    Format log`, though every job line was one."""
    text = BASE + "; Note: removed jobs " + ",".join(map(str, range(40000))) + "\n" + _days()
    long_line = len(text.splitlines()[3])
    name = "long.swf.gz" if compress else "long.swf"
    path = save_swf(tmp_path / name, gzip.compress(text.encode()) if compress else text)
    log = read_swf(path)
    assert len(log.jobs) == 160 and log.max_procs == 32
    assert _noted(log.notes, f"1 comment line(s) are longer than 65,536 characters (line 4 "
                  f"has {long_line:,}): each is read to its first 65,536 only")
    _planned_and_scored(path, capsys)


def test_fault_header_fields_before_and_after_a_long_comment_are_read(tmp_path):
    path = save_swf(tmp_path / "h.swf", "; Version: 2.2\n; " + "z" * 100_000 + "\n"
                    "; MaxProcs: 64\n" + _days(procs=4))
    assert read_swf(path).max_procs == 64


def test_a_comment_line_past_the_bound_is_refused_naming_its_line(tmp_path, capsys):
    path = save_swf(tmp_path / "huge.swf", BASE + "; " + "q" * (MAX_COMMENT_LINE + 10) + "\n"
                    + _days())
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha")
    assert f"huge.swf:4: a comment line longer than {MAX_COMMENT_LINE} characters" in err, err


def test_a_job_line_past_64_kb_is_still_refused(tmp_path):
    with pytest.raises(BadInput, match=r"bad\.swf:4: a line longer than 65536 characters"):
        read_swf(save_swf(tmp_path / "bad.swf", BASE + "1 " * 40000 + "\n" + _days()))


def test_many_long_note_lines_are_read(tmp_path, capsys):
    path = save_swf(tmp_path / "notes.swf", BASE + ("; Note: " + "y" * 5000 + "\n") * 50
                    + _days())
    assert len(read_swf(path).jobs) == 160
    _planned_and_scored(path, capsys)


def test_a_header_of_note_lines_only_takes_the_machine_from_its_jobs(tmp_path, capsys):
    path = save_swf(tmp_path / "notes_only.swf", "; Note: converted from a site's own log\n"
                    "; Note: times in seconds\n" + _days())
    log = read_swf(path)
    assert log.max_procs == 16 and len(log.jobs) == 160  # two 8-processor jobs at once
    _planned_and_scored(path, capsys)


# ---- preceding jobs and think times -----------------------------------------------------------

def test_a_chain_of_preceding_jobs_holds_each_for_its_think_time(tmp_path, capsys):
    path = save_swf(tmp_path / "chain.swf", BASE + "".join(
        _job(n, 1800 * n, wait=300 * (n % 3), run=900, pred=n - 1 if n > 1 else -1, think=300)
        for n in range(1, 161)))
    plan = plan_replay(read_swf(path), ALPHA, seed=1)
    held = [j for j in plan.jobs if j.after]
    assert held and all(j.think_s == 5.0 for j in held)  # 300 log s at --scale 60
    names = {j.name for j in plan.jobs}
    assert all(j.after in names for j in held)
    _planned_and_scored(path, capsys)


def test_fault_a_job_named_its_own_predecessor_is_said(tmp_path):
    """Before: replayed as a job of its own, with no word of its field 17."""
    path = save_swf(tmp_path / "self.swf", BASE + _days(1, 10) + _job(11, 1800 * 11, pred=11)
                    + _days(12, 160))
    log = read_swf(path)
    [said] = _noted(log.notes, "1 job(s) name themselves as their preceding job (field 17; "
                    "line 14: job 11)", "replayed as a job of its own, held for none")
    plan = plan_replay(log, ALPHA, start=1800 * 10.5, duration_s=60)
    assert said in plan.notes and "trace-arrive-11" in [j.name for j in plan.jobs]
    assert all(j.after is None for j in plan.jobs)


def test_fault_a_predecessor_the_log_does_not_hold_is_said(tmp_path, capsys):
    """Before: the job was replayed as independent, unsaid (a cleaned log, or one that
    starts after the predecessor ran)."""
    path = save_swf(tmp_path / "absent.swf", BASE + "".join(
        _job(n, 1800 * n, wait=600 * (n % 4), pred=9000 + n if n % 2 else -1, think=60)
        for n in range(1, 161)))
    log = read_swf(path)
    assert _noted(log.notes, "80 job(s) name as their preceding job (field 17) one the log "
                  "does not hold (e.g. job 1 names job 9001", "held for none")
    assert not [j for j in plan_replay(log, ALPHA, seed=1).jobs if j.after]
    _planned_and_scored(path, capsys)


def test_a_predecessor_listed_after_its_dependent_but_submitted_before_holds_it(tmp_path):
    """Lines out of submit order: the predecessor is the earlier submission, wherever its
    line is."""
    lines = _days(1, 9) + _job(11, 1800 * 10 + 600, pred=10, think=0) \
        + _job(10, 1800 * 10, run=300) + _days(12, 160)
    log = read_swf(save_swf(tmp_path / "order.swf", BASE + lines))
    assert _noted(log.notes, "submitted before the line above them")
    assert not _noted(log.notes, "one submitted after them")
    plan = plan_replay(log, ALPHA, start=1800 * 10 - 1, duration_s=60)
    assert [(j.name, j.after) for j in plan.jobs if j.after] == [
        ("trace-arrive-11", "trace-arrive-10")]


# ---- statuses and waits --------------------------------------------------------------------

def test_jobs_cancelled_before_start_among_those_that_ran_are_skipped_by_reason(tmp_path,
                                                                                capsys):
    path = save_swf(tmp_path / "mixed.swf", BASE + "".join(
        _job(n, 1800 * n, status=5, run=-1, wait=-1) if n % 3 == 0
        else _job(n, 1800 * n, wait=600 * (n % 4)) for n in range(1, 161)))
    log = read_swf(path)
    assert len(log.jobs) == 160
    plan = plan_replay(log, ALPHA, start=1800 * 60 - 1, duration_s=600)  # jobs 60-79
    assert sum(plan.skipped.values()) == 7 and _noted(plan.notes, "7 never ran (field 4")
    assert len([j for j in plan.jobs if "arrive" in j.name]) == 13
    _planned_and_scored(path, capsys)


def test_negative_waits_are_taken_as_unknown_and_said(tmp_path, capsys):
    path = save_swf(tmp_path / "negwait.swf", BASE + "".join(
        _job(n, 1800 * n, wait=-300 if n % 5 == 0 else 600 * (n % 4)) for n in range(1, 161)))
    log = read_swf(path)
    assert _noted(log.notes, "32 job(s) have a wait or run time below -1 (unknown) (e.g. "
                  "job 5: wait -300", "each such wait is taken as unknown")
    _planned_and_scored(path, capsys)


def test_fault_a_log_whose_jobs_hardly_wait_says_why_nothing_is_scored(tmp_path, capsys):
    """Before: `moments: 0` and no note; the run looked broken."""
    path = save_swf(tmp_path / "prompt.swf", BASE + "".join(_job(n, 1800 * n, wait=30)
                                                            for n in range(1, 161)))
    got = prediction.run_log(path, moments=3, seed=1)
    assert got["moments"] == 0 and got["note"].startswith(
        "none of the 60 moment(s) drawn found a job waiting whose start the log records; "
        "its jobs' median wait is 30 s: nothing to score"), got.get("note")
    assert plan_replay(read_swf(path), ALPHA, seed=1).jobs  # the replay itself is whole


# ---- partitions and queues ---------------------------------------------------------------

def test_a_partition_field_in_use_replays_one_partition_by_name(tmp_path, capsys):
    path = save_swf(tmp_path / "parts.swf", BASE + "; MaxPartitions: 2\n"
                    "; Partition: 1 batch (24 processors)\n; Partition: 2 debug (8 processors)\n"
                    + "".join(_job(n, 1800 * n, wait=600 * (n % 4), procs=4, partition=1 + n % 2)
                              for n in range(1, 161)))
    log = read_swf(path)
    debug = one_partition(log, "debug")
    assert {j.partition for j in debug.jobs} == {2} and len(debug.jobs) == 80
    assert plan_replay(debug, ALPHA, seed=1).jobs
    assert dry_run_plan(capsys, path, "--partition", "batch")["jobs"] > 0


def test_fault_queues_past_the_headers_lines_are_said(tmp_path, capsys):
    """Before: the jobs of queue 5, which no Queue line lists, asked the log's MaxRuntime
    with no word that their queue was not among the header's."""
    path = save_swf(tmp_path / "queues.swf", BASE + "; MaxRuntime: 86400\n; MaxQueues: 2\n"
                    "; Queue: 1 short [MaxRuntime: 3600]\n; Queue: 2 long [MaxRuntime: 43200]\n"
                    + "".join(_job(n, 1800 * n, wait=600 * (n % 4), req=-1, queue=1 + n % 5)
                              for n in range(1, 161)))
    log = read_swf(path)
    assert _noted(log.notes, "96 job(s) without a requested time are in a queue the header's "
                  "Queue lines do not list (queue 3, 4, 5; e.g. job 2 in queue 3; the lines "
                  "list 1, 2)", "each asks the log's MaxRuntime")
    plan = plan_replay(log, ALPHA, seed=1)
    assert _noted(plan.notes, "have no requested time", "queue 1 3600 s, queue 2 43200 s; "
                  "another queue's, the log's MaxRuntime 86400 s")
    _planned_and_scored(path, capsys)


def test_queues_the_header_lists_say_nothing_more(tmp_path):
    path = save_swf(tmp_path / "listed.swf", BASE + "; Queue: 1 short [MaxRuntime: 3600]\n"
                    "; Queue: 2 long [MaxRuntime: 43200]\n"
                    + _days(req=-1, queue=2) + _days(161, 200, queue=7))  # 7: requests given
    assert not _noted(read_swf(path).notes, "Queue lines do not list")


# ---- one job, and windows with nothing in them ---------------------------------------------

def test_a_log_of_one_huge_job_replays_it_whole_and_says_nothing_is_scored(tmp_path,
                                                                            capsys):
    path = save_swf(tmp_path / "one.swf", "; MaxProcs: 100000\n"
                    + _job(1, 0, wait=10, run=3 * 86400, procs=100000))
    log = read_swf(path)
    [job] = plan_replay(log, ALPHA, seed=1).jobs
    assert (job.nodes, job.cpus_per_node) == (4, 8)  # the whole machine
    assert dry_run_plan(capsys, path)["jobs"] == 1
    got = prediction.run_log(path, moments=3, seed=1)
    assert got["moments"] == 0 and "nothing to score" in got["note"], got


def test_a_window_in_a_gap_of_the_log_plans_nothing_and_says_so(tmp_path, capsys):
    path = save_swf(tmp_path / "gap.swf", BASE + _days(1, 50) + _days(400, 500))
    plan = plan_replay(read_swf(path), ALPHA, start=1800 * 200, duration_s=600)
    assert plan.jobs == [] and _noted(plan.notes, "no job of the log ran, waited or arrived "
                                      "in this window")
    assert dry_run_plan(capsys, path, "--start", str(1800 * 200))["jobs"] == 0
