"""The seventeenth sweep of SWF logs: small logs written here in shapes the earlier sweeps
did not take (a byte order mark, classic Mac and DOS line ends, UTF-16, a gzip suffix on a
plain file, numbers in exponent form, header counts written as times, dates, fractions and
hexadecimal, `; Note:` lines holding a header key, a predecessor named before it is
submitted, a think time with no predecessor, -1 in every field, negative fields other than
-1, runs of 0 s of unknown status). Each is read by `read_swf` and planned by
`plan_replay` as Standard Workload Format v2.2 means it, or refused naming the file, line
and field; no test bed.

Faults found and fixed, each shown by a test here that failed before:
- A header count was read from its leading digits whatever followed them:
  `; MaxRuntime: 36:00:00` made every job without a request ask 36 s, `; UnixStartTime:
  2004-01-02` put log second 0 at 1970 plus 2004 s, `; UnixStartTime: 1.0731e9` at 1 s.
  Now an exponent is read as the number it writes, and a time, date, fraction or hexadecimal
  is not read, the plan's notes saying which line and what SWF writes there.
- A job naming as its preceding job (field 17) one submitted after it was replayed as
  independent without a word: the notes now say so.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs
HEADER = ("; Version: 2.2\n; Computer: Test\n; UnixStartTime: 1000000000\n"
          "; MaxJobs: 19\n; MaxRecords: 19\n; MaxProcs: 32\n")


def _job(number: object, submit: object, *, wait: object = 30, run: object = 1200,
         procs: int = 8, req: object = 3600, status: int = 1, pred: int = -1,
         think: object = -1) -> str:
    """One 18-field job line (memory, CPU time, group, executable unknown)."""
    fields = (number, submit, wait, run, procs, -1, -1, procs, req, -1, status, 5, 1, -1, 1,
              1, pred, think)
    return " ".join(map(str, fields)) + "\n"


JOBS = "".join(_job(n, 600 * n) for n in range(1, 20))
PLAIN = HEADER + JOBS


def _log(tmp_path: Path, data: str | bytes, name: str = "log.swf") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _read(tmp_path: Path, data: str | bytes, name: str = "log.swf"):
    return read_swf(_log(tmp_path, data, name))


def _refused(tmp_path: Path, data: str | bytes, name: str = "log.swf") -> str:
    path = _log(tmp_path, data, name)
    with pytest.raises(BadInput) as e:
        read_swf(path)
    msg = str(e.value)
    assert str(path) in msg and "\n" not in msg, msg
    return msg


def _same_as_plain(tmp_path: Path, log) -> None:
    plain = read_swf(_log(tmp_path, PLAIN, "plain.swf"))
    assert log.table == plain.table
    assert (log.max_procs, log.unix_start) == (plain.max_procs, plain.unix_start) == (
        32, 1000000000)


def _notes(log) -> list[str]:
    return [*log.notes, *plan_replay(log, ALPHA, seed=1).notes]


# -- 1. bytes and line ends ---------------------------------------------------------------

def test_a_utf8_byte_order_mark_before_the_header_keeps_the_header(tmp_path):
    _same_as_plain(tmp_path, _read(tmp_path, "\ufeff" + PLAIN))


def test_classic_mac_line_ends_read_as_the_plain_log(tmp_path):
    _same_as_plain(tmp_path, _read(tmp_path, PLAIN.replace("\n", "\r")))


def test_dos_line_ends_and_a_closing_ctrl_z_read_as_the_plain_log(tmp_path):
    _same_as_plain(tmp_path, _read(tmp_path, PLAIN.replace("\n", "\r\n").encode() + b"\x1a"))


def test_a_utf16_log_with_its_byte_order_mark_reads_as_the_plain_log(tmp_path):
    _same_as_plain(tmp_path, _read(tmp_path, PLAIN.encode("utf-16")))


def test_a_plain_log_named_gz_is_read_by_its_first_bytes(tmp_path):
    _same_as_plain(tmp_path, _read(tmp_path, PLAIN, "log.swf.gz"))


def test_a_gzip_cut_off_before_its_first_line_is_refused_saying_so(tmp_path):
    msg = _refused(tmp_path, gzip.compress(PLAIN.encode())[:60], "log.swf.gz")
    assert "is not a readable gzip file: it is cut off or damaged" in msg
    assert "nothing of it is replayed" in msg


def test_nul_bytes_inside_the_log_are_refused_naming_the_line(tmp_path):
    msg = _refused(tmp_path, PLAIN.encode()[:200] + b"\x00\x00" + JOBS.encode())
    assert ":8: this is not text" in msg


def test_job_lines_indented_and_comments_without_a_blank_read_as_the_plain_log(tmp_path):
    text = HEADER.replace("; ", ";") + "".join(f"   {line}\n" for line in JOBS.splitlines())
    _same_as_plain(tmp_path, _read(tmp_path, text))


# -- 2. numbers in job fields ------------------------------------------------------------------

def test_a_submit_time_in_exponent_form_is_the_number_it_writes(tmp_path):
    log = _read(tmp_path, PLAIN + _job(20, "1.2e4"))
    assert log.table.row(len(log.table) - 1).submit == 12000.0


@pytest.mark.parametrize("field, value, said", [
    (2, "0x100", "field 2 (submit time) is '0x100'"),
    (4, "nan", "field 4 (run time) is 'nan'"),
    (3, "inf", "field 3 (wait time) is 'inf'"),
    (4, "1e400", "field 4 (run time) is '1e400' (too large a number)"),
])
def test_a_field_no_swf_number_writes_is_refused_naming_line_and_field(tmp_path, field, value,
                                                                      said):
    values = {2: {"submit": value}, 3: {"wait": value}, 4: {"run": value}}[field]
    line = _job(20, **{"submit": 12000, **values})
    msg = _refused(tmp_path, PLAIN + line)
    assert f":26: {said}" in msg and "(-1 where unknown)" in msg, msg


def test_a_comment_after_a_jobs_fields_is_refused_saying_where_comments_go(tmp_path):
    msg = _refused(tmp_path, PLAIN + _job(20, 12000).rstrip() + " ; requeued\n")
    assert ":26: a comment after the job's fields (field 19)" in msg
    assert "SWF's comment lines start with ';'" in msg


# -- 3. -1 markers and negative values ----------------------------------------------------------

def test_a_line_of_minus_one_everywhere_is_said_and_not_replayed(tmp_path):
    log = _read(tmp_path, PLAIN + " ".join(["-1"] * 18) + "\n")
    assert len(log.table) == 19
    assert any("1 job(s) have no submit time (field 2 is -1, e.g. job -1, line 26)" in n
               for n in log.notes), log.notes


def test_a_run_time_below_minus_one_is_said_and_is_no_load(tmp_path):
    log = _read(tmp_path, PLAIN + _job(20, 12000, run=-5))
    notes = _notes(log)
    assert any("have a wait or run time below -1 (unknown) (e.g. job 20: wait 30, run -5)"
               in n for n in notes), notes
    assert "trace-arrive-20" not in [j.name for j in plan_replay(log, ALPHA, seed=1).jobs]


def test_a_requested_time_below_minus_one_is_no_request(tmp_path):
    log = _read(tmp_path, PLAIN + _job(20, 12000, req=-7))
    assert any("have no requested time (field 9 is -1 or 0, e.g. trace-arrive-20)" in n
               for n in _notes(log))


def test_job_numbers_zero_and_negative_are_jobs_of_their_own(tmp_path):
    log = _read(tmp_path, HEADER + _job(0, 300) + _job(-3, 310) + JOBS)
    assert len(log.table) == 21
    assert any("2 job(s) have no job number (field 1 is -1 or 0)" in n for n in log.notes)


def test_a_run_of_0_s_of_unknown_status_is_skipped_as_no_load(tmp_path):
    plan = plan_replay(_read(tmp_path, PLAIN + _job(20, 12000, run=0, status=-1)), ALPHA,
                       seed=1)
    assert any("1 ran 0 s (field 4 is 0; e.g. job 20)" in n for n in plan.notes), plan.notes
    assert "trace-arrive-20" not in [j.name for j in plan.jobs]


def test_a_think_time_without_a_preceding_job_holds_nothing(tmp_path):
    plan = plan_replay(_read(tmp_path, PLAIN + _job(20, 12000, think=60)), ALPHA, seed=1,
                       start=600)
    [job] = [j for j in plan.jobs if j.name == "trace-arrive-20"]
    assert (job.after, job.think_s) == (None, 0.0)


# -- 4. the header -----------------------------------------------------------------------------

def test_fault_a_max_runtime_written_as_hours_minutes_seconds_is_not_read_as_36_s(tmp_path):
    log = _read(tmp_path, HEADER + "; MaxRuntime: 36:00:00\n" + JOBS)
    assert log.max_runtime is None
    assert ("the log's header line 7 ('; MaxRuntime: 36:00:00') gives MaxRuntime as no whole "
            "number (SWF writes MaxRuntime in seconds, e.g. 129600 for 36 hours): it is not "
            "read; the log is read as if it gave no MaxRuntime") in log.notes


def test_fault_a_unix_start_time_written_as_a_date_is_not_read_as_2004_s(tmp_path):
    log = _read(tmp_path, HEADER.replace("1000000000", "2004-01-02 00:00:00") + JOBS)
    assert log.unix_start is None
    assert any(n.startswith("the log's header line 3 ('; UnixStartTime: 2004-01-02 00:00:00')"
                            " gives UnixStartTime as no whole number (SWF writes "
                            "UnixStartTime in seconds since 1970, e.g. 1073001600)")
               for n in log.notes), log.notes


def test_fault_a_unix_start_time_in_exponent_form_is_the_second_it_writes(tmp_path):
    log = _read(tmp_path, HEADER.replace("1000000000", "1.0731e9") + JOBS)
    assert log.unix_start == 1073100000
    assert not [n for n in log.notes if "UnixStartTime" in n]


@pytest.mark.parametrize("value", ["12.5", "0x20", "64/128"])
def test_fault_a_max_procs_of_no_whole_number_is_said_and_the_other_line_read(tmp_path,
                                                                             value):
    log = _read(tmp_path, HEADER + f"; MaxProcs: {value}\n" + JOBS)
    assert log.max_procs == 32
    assert (f"the log's header line 7 ('; MaxProcs: {value}') gives MaxProcs as no whole "
            "number (SWF writes MaxProcs in processors, e.g. 1024): it is not read; its "
            "other MaxProcs line is read instead") in log.notes


def test_header_counts_with_words_after_them_are_still_read(tmp_path):
    log = _read(tmp_path, HEADER.replace("MaxProcs: 32", "MaxProcs: 32 (4 nodes, 8 CPUs each)")
                + "; MaxRuntime: 7200 seconds\n" + JOBS)
    assert (log.max_procs, log.max_runtime) == (32, 7200)
    assert not [n for n in log.notes if "no whole number" in n]


def test_a_note_line_holding_a_header_key_changes_nothing(tmp_path):
    log = _read(tmp_path, HEADER + "; Note: MaxProcs: 4096 was the machine before 2003\n"
                + JOBS)
    assert log.max_procs == 32 and not [n for n in log.notes if "4096" in n]


def test_minus_one_as_max_runtime_is_swfs_unknown_and_not_said(tmp_path):
    log = _read(tmp_path, HEADER + "; MaxRuntime: -1\n" + JOBS)
    assert log.max_runtime is None and not [n for n in log.notes if "MaxRuntime" in n]


# -- 5. dependencies ----------------------------------------------------------------------------

def test_fault_a_predecessor_submitted_after_its_job_is_said_and_holds_nothing(tmp_path):
    log = _read(tmp_path, HEADER + _job(1, 600, pred=5, think=10) + JOBS.split("\n", 1)[1])
    assert ("1 job(s) name as their preceding job (field 17) one submitted after them (e.g. "
            "job 1 names job 5): SWF's preceding job is an earlier one, so each is replayed as "
            "a job of its own, held for none") in log.notes
    plan = plan_replay(log, ALPHA, seed=1, start=600)
    [job] = [j for j in plan.jobs if j.name == "trace-arrive-1"]
    assert job.after is None


def test_an_earlier_predecessor_is_not_said(tmp_path):
    log = _read(tmp_path, PLAIN + _job(20, 12000, pred=3, think=10))
    assert not [n for n in log.notes if "preceding job" in n]
