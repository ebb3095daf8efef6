"""Leftovers of the seventeenth SWF sweep: a time header written with its unit in words, and
header counts in exponent form followed by punctuation. Each fault is shown by tests that
failed before (`7200 seconds`, `1e3` and the UnixStartTime in seconds guard what was read).

- `; MaxRuntime: 3 days` (`36 hours`, `1 week`, `2 h`, `36h`) was read as the bare number,
  3 s: every job without a request asked 3 seconds. A unit of one length (seconds, minutes,
  hours, days, weeks and their abbreviations) is now read as that many seconds; a unit of
  none ("12 months", "3 m": minutes or months) leaves the line unread, with a note naming
  the line and the unit. A Queue line's MaxRuntime is read the same way.
- `; MaxProcs: 1e3;` was read as 1 processor (the exponent's lookahead took no ';'), and
  `1e-3` as 1; `1.5e3` was refused as no whole count although it writes 1500.
- `; MaxProcs: 2k` (`MaxNodes: 4K`, `MaxJobs: 1M`, and `36h` in a count) was read as its
  leading digits, 2 processors. SWF writes whole numbers; k, M, G are prefixes of two
  readings (1000 or 1024 each), so such a count is not read, said with both readings; the
  binary prefixes (Ki, Mi) and the words thousand and million are read.
"""

from __future__ import annotations

import pytest

from diamond_jupyter.testbed.trace import header_count, header_seconds
from tests.test_swf_unseen17 import HEADER, JOBS, _read


@pytest.mark.parametrize(("value", "seconds"), [
    ("3 days", 3 * 86400), ("36 hours", 36 * 3600), ("1 week", 604800), ("2 h", 7200),
    ("36h", 129600), ("3d", 259200), ("90 min", 5400), ("2 hrs", 7200), ("1 wk", 604800),
    ("1.5 hours", 5400), ("2 h 30 min", 9000), ("1 day, 2 hours", 93600),
    ("3 Days (72 h)", 259200), ("1,440 min", 86400), ("7200 seconds", 7200),
])
def test_a_max_runtime_with_a_unit_word_is_that_many_seconds(tmp_path, value, seconds):
    log = _read(tmp_path, HEADER + f"; MaxRuntime: {value}\n" + JOBS)
    assert log.max_runtime == seconds
    assert not [n for n in log.notes if "MaxRuntime" in n]


@pytest.mark.parametrize(("value", "unit"), [
    ("12 months", "months"), ("3 m", "m"), ("2 h 30 m", "m"), ("1 year", "year"),
    ("500 ms", "ms"),
])
def test_a_max_runtime_in_a_unit_of_no_one_length_is_not_read_and_said(tmp_path, value,
                                                                       unit):
    log = _read(tmp_path, HEADER + f"; MaxRuntime: {value}\n" + JOBS)
    assert log.max_runtime is None
    assert (f"the log's header line 7 ('; MaxRuntime: {value}') gives MaxRuntime in "
            f"{unit!r}, a unit of no one length in seconds (SWF writes MaxRuntime in seconds, "
            "e.g. 129600 for 36 hours): it is not read; the log is read as if it gave no "
            "MaxRuntime") in log.notes


@pytest.mark.parametrize("value", ["36:00:00", "3 days 12:00:00", "0.0001 h", "7200 max"])
def test_other_time_values_are_read_as_before(value):
    """A clock time is no count (not read), a fraction of a second is not read, and words
    that name no unit after a count of seconds leave it seconds."""
    assert header_seconds(value) == (7200 if value == "7200 max" else None)


def test_a_unit_word_in_unix_start_time_counts_seconds_too(tmp_path):
    log = _read(tmp_path, HEADER.replace("UnixStartTime: 1000000000",
                                         "UnixStartTime: 1000000000 seconds") + JOBS)
    assert log.unix_start == 1000000000


def test_a_queue_lines_max_runtime_in_hours_is_its_limit(tmp_path):
    log = _read(tmp_path, HEADER + "; Queue: 1 short [MaxRuntime: 2 hours]\n"
                "; Queue: 2 odd [MaxRuntime: 3 months]\n" + JOBS)
    assert log.queue_limits == ((1, 7200.0),)


@pytest.mark.parametrize(("value", "procs"), [
    ("1e3", 1000), ("1e3;", 1000), ("1.5e3", 1500), ("1E+3 processors", 1000),
])
def test_a_max_procs_in_exponent_form_is_the_count_it_writes(tmp_path, value, procs):
    log = _read(tmp_path, HEADER.replace("MaxProcs: 32", f"MaxProcs: {value}") + JOBS)
    assert log.max_procs == procs
    assert not [n for n in log.notes if "MaxProcs" in n]


def test_a_max_procs_of_a_negative_exponent_is_no_count(tmp_path):
    log = _read(tmp_path, HEADER + "; MaxProcs: 1e-3\n" + JOBS)
    assert log.max_procs == 32
    assert any("('; MaxProcs: 1e-3')" in n and "it is not read" in n for n in log.notes), \
        log.notes


@pytest.mark.parametrize("value", ["36h", "2k", "4K", "1M", "2 K procs", "8GB", "1.5k"])
def test_a_count_with_a_unit_or_a_prefix_of_two_readings_is_no_count(value):
    """Their leading digits (36, 2, 4, 1) are not what the line means."""
    assert header_count(value) is None


@pytest.mark.parametrize(("value", "count"), [
    ("2Ki", 2048), ("1.5 Ki", 1536), ("1 Mi", 2**20), ("2 thousand", 2000),
    ("1 million jobs", 10**6), ("1024 processors", 1024), ("128 (each with 4 CPUs)", 128),
])
def test_a_count_of_one_reading_is_read(value, count):
    assert header_count(value) == count


def test_max_procs_in_k_is_not_read_and_the_machine_is_sized_otherwise(tmp_path):
    log = _read(tmp_path, HEADER.replace("MaxProcs: 32", "MaxProcs: 2k") + JOBS)
    assert log.max_procs == 16  # the most the jobs held at once, not 2
    assert any("('; MaxProcs: 2k')" in n and "not read" in n
               and "'k', a prefix of two readings, 1,000 or 1,024" in n for n in log.notes), \
        log.notes


@pytest.mark.parametrize(("line", "key", "prefix", "readings"), [
    ("; MaxNodes: 4K", "MaxNodes", "K", "1,000 or 1,024"),
    ("; MaxJobs: 1M", "MaxJobs", "M", "1,000,000 or 1,048,576"),
])
def test_a_count_in_a_prefix_of_two_readings_beside_a_whole_one_is_said(tmp_path, line, key,
                                                                         prefix, readings):
    log = _read(tmp_path, HEADER + line + "\n" + JOBS)
    assert log.max_procs == 32
    said = [n for n in log.notes if line in n]
    assert len(said) == 1 and f"{prefix!r}, a prefix of two readings, {readings}" in said[0] \
        and "not read" in said[0], log.notes


def test_max_procs_in_kibi_is_that_many_processors(tmp_path):
    log = _read(tmp_path, HEADER.replace("MaxProcs: 32", "MaxProcs: 2Ki") + JOBS)
    assert log.max_procs == 2048
    assert not [n for n in log.notes if "MaxProcs" in n]
