"""Follow-ups of the twelfth SWF sweep: the numbers a job line may hold, against the Parallel
Workloads Archive's format definition. Its fields are integers, save its times ("it is
permissable to use floating point values for time fields": submit, wait, run, CPU time,
requested time, think time). Before, a processor count of 8.5 was read as 8, and Python's
own number forms ("9_00", "inf", "nan") passed for numbers or were refused without naming
the field; the note on jobs without a processor count named no value."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_unseen12 import HEADER, _body, _write

from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.trace import read_swf

LINE = HEADER.count("\n") + 22  # the file line of job 22


def _with_field(tmp_path: Path, field: int, value: str) -> Path:
    """The log of `_body(50)` with field `field` (1-based) of job 22 set to `value`."""
    lines = _body(50)
    row = lines[21].split()
    row[field - 1] = value
    lines[21] = " ".join(row) + "\n"
    return _write(tmp_path / "log.swf", HEADER.format(jobs=50) + "".join(lines))


@pytest.mark.parametrize("field, value, named", [
    (5, "8.5", "field 5 (allocated processors) is '8.5'"),
    (8, "0.5", "field 8 (requested processors) is '0.5'"),
    (1, "22.5", "field 1 (job number) is '22.5'"),
    (11, "1.5", "field 11 (status) is '1.5'"),
    (12, "2.25", "field 12 (user) is '2.25'"),
    (16, "1e-1", "field 16 (partition) is '1e-1'"),
    (17, "21.5", "field 17 (preceding job) is '21.5'"),
])
def test_a_fraction_in_a_whole_number_field_is_refused(tmp_path: Path, field, value,
                                                        named) -> None:
    """Before: 8.5 processors read as 8, 0.5 as a job of no size, 22.5 as job 22."""
    with pytest.raises(BadInput) as e:
        read_swf(_with_field(tmp_path, field, value))
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'log.swf'}:{LINE}: {named}: SWF gives it as a whole "
                          "number (only its times, fields 2-4, 6, 9 and 18, may have "
                          "decimals)"), msg


@pytest.mark.parametrize("field, value", [
    (5, "9_00"), (2, "12_600"), (1, "0x15"), (4, "inf"), (3, "nan"), (9, "-inf"),
    (12, "1_0"), (18, "Infinity"),
])
def test_python_only_number_forms_are_refused_naming_the_field(tmp_path: Path, field,
                                                               value) -> None:
    """Before: "9_00" was read as 900 (Python's digit grouping), "0x15", "inf" and "nan" in
    the fields read first were refused without the field's name."""
    with pytest.raises(BadInput) as e:
        read_swf(_with_field(tmp_path, field, value))
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'log.swf'}:{LINE}: field {field} ("), msg
    assert f"is {value!r}: SWF fields must be numbers of digits, a sign, a decimal point " \
        "or an exponent (-1 where unknown)" in msg


def test_a_number_too_large_names_its_field(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r":\d+: field 4 \(run time\) is '1e309' \(too large a "
                                       r"number\): SWF fields must be numbers"):
        read_swf(_with_field(tmp_path, 4, "1e309"))


def test_decimal_times_and_whole_numbers_written_with_a_point_are_read(tmp_path: Path) -> None:
    """SWF allows decimals in its time fields; a whole count written "8.0" or "8e0" is 8."""
    lines = _body(50)
    row = lines[21].split()
    row[1], row[2], row[3], row[5], row[8] = "13200.25", "60.5", "599.75", "12.5", "900.5"
    row[4], row[7], row[10] = "8.0", "8e0", "1.0"
    lines[21] = " ".join(row) + "\n"
    row = lines[19].split()  # job 20: dependent, a think time of 120.5 s
    row[17] = "120.5"
    lines[19] = " ".join(row) + "\n"
    log = read_swf(_write(tmp_path / "log.swf", HEADER.format(jobs=50) + "".join(lines)))
    job = next(j for j in log.jobs if j.number == 22)
    assert (job.submit, job.wait, job.run, job.procs, job.req_time, job.status) == (
        13200.25, 60.5, 599.75, 8, 900.5, 1)
    assert next(j for j in log.jobs if j.number == 20).think == 120.5
    assert log.notes == ()


def test_the_no_processor_count_note_names_the_values_seen(tmp_path: Path) -> None:
    """Before: "fields 5 and 8 are 0 or -1, e.g. job 22", not which."""
    lines = _body(50)
    row = lines[21].split()
    row[4], row[7] = "0", "-1"
    lines[21] = " ".join(row) + "\n"
    log = read_swf(_write(tmp_path / "log.swf", HEADER.format(jobs=50) + "".join(lines)))
    [note] = [n for n in log.notes if "no processor count" in n]
    assert note == (f"1 job(s) ran with no processor count (fields 5 and 8 are 0 or -1, e.g. "
                    f"job 22, line {LINE}: field 5 is 0, field 8 is -1): they are no load in a "
                    "replay"), note
