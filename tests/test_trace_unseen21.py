"""The twenty-first sweep of SWF logs, written here from the Standard Workload Format's
definition with quirks of other archive logs: stretches of NUL bytes that a crash or a full
disk leaves inside a log being written, queues and partitions numbered -2, -7, 0, 99999 and
2^40, every status 0-5 over days with parts of checkpointed jobs and cancelled jobs of no
run, think times given with no preceding job, job numbers 0 and below zero, times written
with exponents and separated by tabs, `#` comments, `nan` and `inf` fields, job numbers
reused over a log, a status SWF does not define. Each is read by `read_swf`, planned by
`plan_replay` on alpha's shape, by `diamond testbed load --trace --dry-run` and scored by
`benchmarks.prediction`, or refused naming its line and field; no test bed.

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- a line of NUL bytes between job lines (a hole a crash left: the jobs written there are
  lost) was skipped unsaid, as if the log were whole; it is now said with its line;
- a job line whose start a NUL stretch overwrote was refused as `has 8 fields` with no word
  of the NULs; the refusal now says the line begins with them and what that means.
"""

from __future__ import annotations

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


def _read(tmp_path: Path, text: str, name: str = "log.swf"):
    return read_swf(save_swf(tmp_path / name, text))


def _noted(notes, *words: str) -> list[str]:
    return [n for n in notes if all(w in n for w in words)]


def _planned_and_scored(path: Path, capsys) -> None:
    log = read_swf(path)
    assert plan_replay(log, ALPHA).jobs and dry_run_plan(capsys, path)["jobs"] > 0
    assert prediction.run_log(path, moments=3, seed=1)["moments"] > 0


# ---- stretches of NUL bytes ------------------------------------------------------------------

def test_fault_nul_bytes_between_job_lines_are_said_as_lost_jobs(tmp_path, capsys):
    """Skipped unsaid: the log read as whole, its nine lost jobs not mentioned."""
    path = save_swf(tmp_path / "hole.swf", BASE + _days(1, 80) + "\x00" * 4096 + "\n"
                    + _days(90, 160))
    log = read_swf(path)
    assert len(log.jobs) == 151
    [said] = _noted(log.notes, "1 stretch(es) of NUL bytes lie between job lines",
                    "line 84: 4096 NUL bytes", "the jobs written there are lost")
    assert said in plan_replay(log, ALPHA).notes
    _planned_and_scored(path, capsys)


def test_nul_padding_after_the_last_line_is_no_hole(tmp_path):
    log = _read(tmp_path, BASE + _days(1, 40) + "\x00" * 512)
    assert len(log.jobs) == 40 and not _noted(log.notes, "NUL"), log.notes


def test_fault_a_line_whose_start_was_zeroed_is_refused_saying_so(tmp_path, capsys):
    """Said before: `has 18 fields, this one 8`, nothing of the 20 NUL bytes before them."""
    path = save_swf(tmp_path / "cut.swf", BASE + _days(1, 20) + "\x00" * 20
                    + "1 5 1 -1 1 1 -1 -1\n" + _days(22, 30))
    with pytest.raises(BadInput) as e:
        read_swf(path)
    assert "cut.swf:24: an SWF job line has 18 fields, this one 8" in str(e.value) and \
        "the line begins with 20 NUL bytes" in str(e.value), e.value
    assert "begins with 20 NUL bytes" in load_refused(capsys, "--trace", str(path),
                                                      "--site", "alpha")


def test_a_whole_job_line_after_a_few_nul_bytes_is_read(tmp_path):
    log = _read(tmp_path, BASE + _days(1, 20) + "\x00" * 5 + _job(21, 1800 * 21) + _days(22, 30))
    assert [j.number for j in log.jobs][19:22] == [20, 21, 22]


# ---- queues, partitions and statuses ---------------------------------------------------------

def test_queues_and_partitions_numbered_below_zero_or_past_a_billion(tmp_path, capsys):
    path = save_swf(tmp_path / "odd.swf", BASE + "".join(
        _job(n, 1800 * n, wait=600 * (n % 4), queue=(-2, 0, 99999)[n % 3],
             partition=(-7, 0, 2 ** 40)[n % 3]) for n in range(1, 161)))
    log = read_swf(path)
    assert {j.queue for j in log.jobs} == {-2, 0, 99999}
    assert {j.partition for j in log.jobs} == {-7, 0, 2 ** 40}
    _planned_and_scored(path, capsys)


def test_every_status_over_days_is_planned_and_scored(tmp_path, capsys):
    """0 failed, 1 completed, 2-4 parts, 5 cancelled with no run (-1)."""
    path = save_swf(tmp_path / "status.swf", BASE + "".join(
        _job(n, 1800 * n, wait=600 * (n % 4), status=n % 6, run=-1 if n % 6 == 5 else 1200)
        for n in range(1, 161)))
    log = read_swf(path)
    assert {j.status for j in log.jobs} == {0, 1, 2, 3, 4, 5}
    _planned_and_scored(path, capsys)


def test_a_status_swf_does_not_define_is_said_with_its_line(tmp_path):
    log = _read(tmp_path, BASE + _days(1, 30) + _job(31, 1800 * 31, status=6) + _days(32, 40))
    assert _noted(log.notes, "1 job line(s) have a status SWF does not define",
                  "line 34, field 11: 6"), log.notes


# ---- think times, job numbers ----------------------------------------------------------------

def test_think_times_with_no_preceding_job_hold_nothing(tmp_path, capsys):
    path = save_swf(tmp_path / "think.swf", BASE + _days(think=300))
    assert all(j.after is None for j in plan_replay(read_swf(path), ALPHA).jobs)
    _planned_and_scored(path, capsys)


def test_job_numbers_0_and_below_are_jobs_of_their_own(tmp_path):
    log = _read(tmp_path, BASE + _job(0, 600) + _days(1, 20) + _job(-5, 1800 * 21)
                + _days(22, 30))
    assert len(log.jobs) == 31
    assert _noted(log.notes, "2 job(s) have no job number (field 1 is -1 or 0)"), log.notes


def test_job_numbers_reused_over_a_log_keep_every_job(tmp_path, capsys):
    path = save_swf(tmp_path / "reused.swf", BASE + "".join(
        _job(n % 50 + 1, 1800 * n, wait=600 * (n % 4)) for n in range(1, 161)))
    assert len(read_swf(path).jobs) == 160
    _planned_and_scored(path, capsys)


# ---- how the numbers are written -------------------------------------------------------------

def test_times_with_exponents_separated_by_tabs_are_read(tmp_path, capsys):
    path = save_swf(tmp_path / "exp.swf", BASE + "".join(
        _job(n, f"{1800 * n:.4e}", wait=600 * (n % 4)).replace(" ", "\t")
        for n in range(1, 161)))
    log = read_swf(path)
    assert [j.submit for j in log.jobs[:3]] == [1800, 3600, 5400]
    _planned_and_scored(path, capsys)


@pytest.mark.parametrize("line,said", [
    (_job(21, "nan"), "field 2 (submit time) is 'nan'"),
    (_job(21, 37800, run="inf"), "field 4 (run time) is 'inf'"),
    ("# converted by swf-tools\n", "an SWF job line has 18 fields, this one 4 (header and "
                                   "comment lines start with ';')"),
])
def test_nan_inf_and_hash_comments_are_refused_naming_line_and_field(tmp_path, line, said):
    with pytest.raises(BadInput) as e:
        _read(tmp_path, BASE + _days(1, 20) + line + _days(22, 25))
    assert f"log.swf:24: {said}" in str(e.value), e.value
