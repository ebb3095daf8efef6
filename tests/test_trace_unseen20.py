"""The twentieth sweep of SWF logs, written here from the Standard Workload Format's
definition with quirks of other archive logs: partitions and queues numbered 0, 7, 99 and
1000, waits below zero from a clock set back, runs longer than their request, every status
0-5 with the parts of checkpointed jobs, think times after preceding jobs (an earlier one,
a later one, the job itself, one not in the log), a log whose lines are written twice and
logs joined under one header, gaps of weeks, Note headers holding colons, a gzip log of
20,000 lines, and times in milliseconds. Each is read by `read_swf`, planned by
`plan_replay` on alpha's shape, by `diamond testbed load --trace --dry-run` and scored by
`benchmarks.prediction`, or refused naming its line and field; no test bed.

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- a log whose every line was written twice (a converter's bug, or `cat log log`) was
  replayed with each job twice, twice the load, said only as a header not brought up to
  date; lines repeating an earlier one field for field are now read once and said;
- a submit, wait, run, requested or think time of more than 10^10 s (a clock in
  milliseconds) was read: `benchmarks.prediction` then ended in an OverflowError (date
  value out of range); it is now refused naming the line, the field and the likely unit.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from sweep_helpers import dry_run_plan, load_refused, save_swf

from benchmarks import prediction
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import MAX_LOG_TIME_S, one_partition, plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs
BASE = "; Version: 2.2\n; Computer: Test\n; MaxProcs: 32\n"
DAY = 86400


def _job(number: object, submit: object, *, wait: object = 30, run: object = 1200,
         procs: object = 8, req: object = 3600, status: object = 1, queue: object = 1,
         partition: object = 1, pred: object = -1, think: object = -1) -> str:
    """One 18-field job line (user 5, group 1; CPU time, memory, executable unknown)."""
    fields = (number, submit, wait, run, procs, -1, -1, procs, req, -1, status, 5, 1, -1,
              queue, partition, pred, think)
    return " ".join(map(str, fields)) + "\n"


def _steady(count: int, every: float = 600, **kw: object) -> str:
    return "".join(_job(n, every * n, **kw) for n in range(1, count + 1))


def _read(tmp_path: Path, text: str | bytes, name: str = "log.swf"):
    return read_swf(save_swf(tmp_path / name, text))


def _noted(notes, *words: str) -> list[str]:
    return [n for n in notes if all(w in n for w in words)]


# ---- lines written twice -------------------------------------------------------------------

def test_fault_a_log_with_every_line_written_twice_replays_each_job_once(tmp_path):
    """Replayed twice each: 80 jobs and twice the log's load on alpha."""
    once = BASE + _steady(40)
    doubled = BASE + "".join(line + line for line in _steady(40).splitlines(keepends=True))
    single, twice = _read(tmp_path, once, "once.swf"), _read(tmp_path, doubled, "twice.swf")
    assert twice.jobs == single.jobs and len(twice.jobs) == 40
    [said] = _noted(twice.notes, "40 job line(s) repeat an earlier line field for field",
                    "e.g. job 1 submitted at 600 s", "each such job is read once")
    a, b = plan_replay(single, ALPHA), plan_replay(twice, ALPHA)
    assert len(b.jobs) == len(a.jobs) == 40 and b.site_utilization == a.site_utilization
    assert said in b.notes


def test_fault_a_log_joined_to_itself_is_read_once(tmp_path):
    log = _read(tmp_path, BASE + _steady(30) + _steady(30))
    assert len(log.jobs) == 30 and _noted(log.notes, "30 job line(s) repeat")


def test_logs_joined_with_numbers_again_from_1_keep_every_job(tmp_path):
    """Same numbers, other submit times: two logs' jobs, not one line twice."""
    text = BASE + _steady(20) + "".join(_job(n, 600 * (n + 20)) for n in range(1, 21))
    log = _read(tmp_path, text)
    assert len(log.jobs) == 40 and not _noted(log.notes, "repeat")
    names = [j.name for j in plan_replay(log, ALPHA).jobs]
    assert "trace-arrive-1" in names and "trace-arrive-1.2" in names


def test_checkpointed_parts_alike_but_for_their_times_are_all_read(tmp_path):
    """Parts of one job share number and submit time; their waits and runs differ."""
    parts = _job(5, 3000, status=2, run=600) + _job(5, 3000, wait=900, status=3, run=600) + \
        _job(5, 3000, wait=1800, status=4, run=300)
    log = _read(tmp_path, BASE + _steady(4) + parts + "".join(
        _job(n, 600 * n) for n in range(6, 30)))
    assert sum(1 for j in log.jobs if j.number == 5) == 3 and not _noted(log.notes, "repeat")


# ---- times past any clock -------------------------------------------------------------------

@pytest.mark.parametrize("field,kw", [(2, {}), (3, {"wait": 1_199_145_600_000}),
                                      (4, {"run": 3_600_000_000_000}),
                                      (9, {"req": 86_400_000_000_000}),
                                      (18, {"pred": 2, "think": 60_000_000_000_000})])
def test_fault_a_time_in_milliseconds_is_refused_naming_line_and_field(tmp_path, field, kw):
    """Read as seconds; a submit of 10^12 s then ended `benchmarks.prediction` in an
    OverflowError (date value out of range)."""
    submit = 1_199_145_600_000 if field == 2 else 1800
    text = BASE + _steady(2) + _job(3, submit, **kw) + _steady(3)[:0]
    with pytest.raises(BadInput) as e:
        _read(tmp_path, text)
    name = {2: "submit time", 3: "wait time", 4: "run time", 9: "requested time",
            18: "think time"}[field]
    assert f"log.swf:6: field {field} ({name}) is " in str(e.value) and \
        f"more seconds than {MAX_LOG_TIME_S:,}" in str(e.value) and \
        "milliseconds" in str(e.value), e.value


def test_fault_the_cli_exits_2_on_a_submit_time_in_milliseconds(tmp_path, capsys):
    path = save_swf(tmp_path / "ms.swf", BASE + "".join(
        _job(n, 1_199_145_600_000 + 600_000 * n) for n in range(1, 11)))
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha")
    assert "ms.swf:4: field 2 (submit time) is 1199146200000" in err, err


def test_fault_prediction_scores_a_log_with_a_gap_of_centuries_no_more(tmp_path):
    text = BASE + _steady(60, every=3600) + "".join(
        _job(n, 10 ** 12 + 3600 * n) for n in range(61, 120))
    with pytest.raises(BadInput, match=r"field 2 \(submit time\)"):
        prediction.run_log(save_swf(tmp_path / "gap.swf", text), moments=2, seed=1)


def test_a_time_of_decades_in_unix_seconds_is_read(tmp_path):
    """Unix times (1.2e9 s) and a run of a year are well below the bound."""
    text = BASE + "".join(_job(n, 1_199_145_600 + 600 * n, run=365 * DAY if n == 3 else 1200)
                          for n in range(1, 21))
    log = _read(tmp_path, text)
    assert len(log.jobs) == 20 and max(j.run for j in log.jobs) == 365 * DAY


# ---- partitions and queues numbered oddly ---------------------------------------------------

def test_partitions_numbered_0_7_and_99_replay_one_by_its_number_or_name(tmp_path):
    head = BASE + "; Partitions: 3\n; Partition: 0 login\n; Partition: 7 gpu\n" \
                  "; Partition: 99 big\n"
    text = head + "".join(_job(n, 600 * n, partition=(0, 7, 99)[n % 3]) for n in range(1, 61))
    log = _read(tmp_path, text)
    for which in ("7", "gpu"):
        part = one_partition(log, which)
        assert {j.partition for j in part.jobs} == {7} and len(part.jobs) == 20
    with pytest.raises(BadInput) as e:
        one_partition(log, "8")
    assert "0" in str(e.value) and "99" in str(e.value), e.value
    assert len(plan_replay(one_partition(log, "big"), ALPHA).jobs) == 20


def test_queues_numbered_0_1000_and_unknown_plan_every_job(tmp_path, capsys):
    path = save_swf(tmp_path / "queues.swf", BASE + "".join(
        _job(n, 600 * n, queue=(0, 1000, -1)[n % 3]) for n in range(1, 41)))
    log = read_swf(path)
    assert {j.queue for j in log.jobs} == {0, 1000, -1}
    assert len(plan_replay(log, ALPHA).jobs) == 40 and dry_run_plan(capsys, path)["jobs"] > 0


# ---- clocks, requests and statuses ---------------------------------------------------------

def test_a_wait_below_zero_from_a_clock_set_back_is_said_and_simulated(tmp_path):
    log = _read(tmp_path, BASE + "".join(
        _job(n, 600 * n, wait=-3540 if n % 5 == 0 else 30) for n in range(1, 41)))
    assert _noted(log.notes, "8 job(s) have a wait or run time below -1", "e.g. job 5: wait "
                  "-3540", "clock set back")
    plan = plan_replay(log, ALPHA)
    assert len(plan.jobs) == 40 and _noted(plan.notes, "8 of the window's 40 job(s) have no "
                                                       "recorded wait")


def test_a_run_longer_than_its_request_gets_its_run_as_its_limit(tmp_path):
    log = _read(tmp_path, BASE + _steady(20, every=1800, run=5400, req=3600))
    plan = plan_replay(log, ALPHA)
    assert plan.jobs and all(j.runtime_s == 5400 / plan.scale for j in plan.jobs)
    assert all(j.walltime_min * 60 >= j.runtime_s for j in plan.jobs), \
        [j.walltime_min for j in plan.jobs]


def test_every_status_0_to_5_and_parts_without_a_summary(tmp_path):
    jobs = "".join(_job(n, 600 * n, status=n % 6) for n in range(1, 31) if n % 6 not in (2, 3, 4))
    # SWF: 2 for a part to be continued, then 3 (the last, completed) or 4 (the last, failed)
    parts = _job(40, 20000, status=2, run=600) + _job(40, 20000, wait=1200, status=2, run=600) \
        + _job(40, 20000, wait=2400, status=3, run=600) + _job(41, 20100, status=2, run=300) \
        + _job(41, 20100, wait=900, status=4, run=60)
    log = _read(tmp_path, BASE + jobs + parts)
    assert {j.status for j in log.jobs} == {0, 1, 5, 2, 3, 4}
    plan = plan_replay(log, ALPHA)
    by_name = {j.name: j for j in plan.jobs}
    assert by_name["trace-arrive-40.2"].after == "trace-arrive-40"
    assert by_name["trace-arrive-40.3"].after == "trace-arrive-40.2"
    assert by_name["trace-arrive-41.2"].after == "trace-arrive-41"


# ---- preceding jobs and think times --------------------------------------------------------

def test_think_times_hold_each_dependent_job_after_its_predecessor(tmp_path):
    text = BASE + _job(1, 600) + "".join(
        _job(n, 600 + 1290 * (n - 1), pred=n - 1, think=60) for n in range(2, 21))
    plan = plan_replay(_read(tmp_path, text), ALPHA)
    by_name = {j.name: j for j in plan.jobs}
    assert by_name["trace-arrive-5"].after == "trace-arrive-4"
    assert by_name["trace-arrive-5"].think_s == pytest.approx(60 / plan.scale)


@pytest.mark.parametrize("pred,said", [("self", None), (999, None),
                                       ("next", "one submitted after them")])
def test_a_preceding_job_that_is_the_job_later_or_absent_holds_nothing(tmp_path, pred, said):
    text = BASE + "".join(_job(n, 600 * n, think=60, pred={"self": n, "next": n + 1}.get(
        pred, pred)) for n in range(1, 21))
    log = _read(tmp_path, text)
    assert all(j.after is None for j in plan_replay(log, ALPHA).jobs)
    assert bool(_noted(log.notes, said or "no note")) == (said is not None), log.notes


# ---- gaps, headers, size --------------------------------------------------------------------

def test_a_gap_of_three_weeks_is_planned_and_scored(tmp_path, capsys):
    text = BASE + "".join(_job(n, 1800 * n + (21 * DAY if n > 80 else 0), wait=600 * (n % 4))
                          for n in range(1, 161))
    path = save_swf(tmp_path / "gap.swf", text)
    log = read_swf(path)
    assert log.span[1] - log.span[0] > 21 * DAY
    assert dry_run_plan(capsys, path)["jobs"] > 0
    scored = prediction.run_log(path, moments=3, seed=1)
    assert scored["moments"] > 0, scored


def test_note_headers_holding_colons_leave_the_header_read(tmp_path):
    head = ("; Note: times are UTC: see https://example.org/a:b\n; Note: Scheduler: Maui 3.2: "
            "fair share on\n; Note:\n; Note: : a line that starts with a colon\n")
    log = _read(tmp_path, head + "; MaxProcs: 64\n; MaxNodes: 8\n" + _steady(20))
    assert log.max_procs == 64 and not _noted(log.notes, "Note"), log.notes


def test_a_gzip_log_of_20000_jobs_is_read_and_planned(tmp_path):
    text = BASE + "".join(_job(n, 30 * n, run=300 + n % 900, procs=1 + n % 8)
                          for n in range(1, 20001))
    log = _read(tmp_path, gzip.compress(text.encode()), "big.swf.gz")
    assert len(log.jobs) == 20000 and log.jobs[-1].number == 20000
    plan = plan_replay(log, ALPHA)
    assert 0 < len(plan.jobs) < 20000 and plan.window[0] >= 0
