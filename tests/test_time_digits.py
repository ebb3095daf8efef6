"""Times in digits 0-9 only. Python's int(), float(), str.isdigit() and the regex `\\d` also
read Arabic-Indic, full-width, Devanagari or superscript digits (int() an underscore too),
which no scheduler prints or reads: `#PBS -l walltime=١:00:00` was an hour, `#BSUB -W ١٠`
ten minutes, a bjobs run limit of `7٢0.0 min` seven minutes. Now a script's time in other
digits is refused naming the line, the value, the digit and what is accepted; a time a
scheduler printed in them is not read, and the job's reason says so (pure dialects)."""

from __future__ import annotations

import json
import tokenize
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diamond_jupyter.dialects import get_commands, scripts_common
from diamond_jupyter.dialects.begin_time import lsf_parts, pbs_parts
from diamond_jupyter.dialects.flux_script import parse_fsd as flux_fsd
from diamond_jupyter.dialects.lsf_commands import _runlimit, _window_minutes
from diamond_jupyter.dialects.lsf_fairshare import _priority
from diamond_jupyter.dialects.lsf_script import parse_lsf_time
from diamond_jupyter.dialects.outputs_common import (
    finite_int,
    from_epoch,
    parse_duration,
    parse_fsd,
    to_int,
)
from diamond_jupyter.digits import ascii_digits, foreign_digit
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, time_value

PACKAGE = Path(__file__).parent.parent / "diamond_jupyter"

# a digit Python reads as one but no scheduler does: Arabic-Indic, Devanagari, full-width...
FOREIGN_DIGIT = st.characters(categories=["Nd"]).filter(lambda c: not c.isascii())
TIME_PARTS = st.sampled_from(["0", "1", "12", "59", ":", "-", "."])


@st.composite
def foreign_times(draw: st.DrawFn) -> str:
    """A time-like text with at least one digit that is none of 0-9 (`1٢:00`, `٣`)."""
    parts = draw(st.lists(st.one_of(TIME_PARTS, FOREIGN_DIGIT), max_size=8))
    at = draw(st.integers(0, len(parts)))
    return "".join([*parts[:at], draw(FOREIGN_DIGIT), *parts[at:]])


def _refused(parse, text: str) -> bool:
    """Whether `parse(text)` reads no time: None, or an error."""
    try:
        return parse(text) is None
    except (ValueError, BadInput):
        return True


TIME_PARSERS = {
    "pbs walltime (parse_hms)": scripts_common.parse_hms,
    "sge time": scripts_common.sge_time,
    "lsf -W": parse_lsf_time,
    "slurm --time": scripts_common.parse_slurm_time,
    "iso duration": scripts_common.iso_duration_s,
    "qstat/squeue duration": parse_duration,
    "flux duration (output)": parse_fsd,
    "flux duration (script)": flux_fsd,
    "bjobs run limit": _runlimit,
    "lsf run window": lambda t: _window_minutes(t) or None,
    "ssh_config time": time_value,
    "pbs -a time": lambda t: pbs_parts(t, "line 2"),
    "lsf -b time": lambda t: lsf_parts(t, "line 2"),
    "walltime_seconds (faces)": Federation.walltime_seconds,
}


@pytest.mark.parametrize("name", sorted(TIME_PARSERS))
@settings(max_examples=150, deadline=None)
@given(text=foreign_times())
def test_no_time_parser_reads_a_digit_other_than_0_to_9(name, text):
    assert _refused(TIME_PARSERS[name], text), (name, text)


@pytest.mark.parametrize("name", sorted(TIME_PARSERS))
def test_every_time_parser_still_reads_its_digits_0_to_9(name):
    """A guard: the property above is not met by refusing everything."""
    sample = {"iso duration": "PT1H", "flux duration (output)": "1h",
              "flux duration (script)": "60", "bjobs run limit": "60.0 min",
              "lsf run window": "8:00-18:00", "pbs -a time": "1230",
              "lsf -b time": "12:30", "ssh_config time": "1h"}.get(name, "1:00:00"
                                                                    if "lsf" not in name
                                                                    else "60")
    assert not _refused(TIME_PARSERS[name], sample), (name, sample)


@settings(max_examples=150, deadline=None)
@given(text=foreign_times())
def test_no_count_reader_takes_a_digit_other_than_0_to_9(text):
    assert to_int(text) is None and finite_int(text) is None and not ascii_digits(text)


@pytest.mark.parametrize("text", ["1_0", "1_000", "١٠", "٣.5"])
def test_an_underscore_or_other_digits_are_no_number_a_scheduler_printed(text):
    """float('1_0') is 10.0 and float('١٠') 10.0."""
    assert (to_int(text), finite_int(text)) == (None, None)


def test_foreign_digit_names_the_first_digit_outside_0_to_9():
    assert (foreign_digit("12:٣٤"), foreign_digit("12:34"), foreign_digit("x²")) == \
        ("٣", None, "²")


# ---- a script's time in other digits: refused naming the line, value and digit -------------

@pytest.mark.parametrize("line,value,digit,accepted", [
    ("#PBS -l walltime=١:00:00", "walltime=١:00:00", "'١', U+0661",
     "expected [[[D:]H:]M:]S, e.g. 12:00:00"),
    ("#PBS -l walltime=01:３0:00", "walltime=01:３0:00", "'３', U+FF13",
     "expected [[[D:]H:]M:]S, e.g. 12:00:00"),
    ("#PBS -l cput=९:00:00", "cput=९:00:00", "'९', U+096F", "expected [[[D:]H:]M:]S"),
    ("#BSUB -W ١٠", "١٠", "'١', U+0661",
     "expected [hours:]minutes[/host_name or /host_model], e.g. 24:00"),
    ("#BSUB -W 1:３0", "1:３0", "'３', U+FF13", "expected [hours:]minutes"),
    ("#BSUB -W 1_0", "1_0", None, "expected [hours:]minutes"),
])
def test_a_script_time_in_other_digits_is_refused_naming_the_digit(line, value, digit,
                                                                   accepted):
    with pytest.raises(BadInput) as e:
        Federation.translate(f"#!/bin/bash\n{line}\necho hi\n", "slurm")
    said = str(e.value)
    assert said.startswith("line 2: ") and repr(value) in said and f"`{line}`" in said, said
    assert accepted in said, said
    if digit:
        assert f"({digit}, is no digit 0-9: schedulers read those only)" in said, said


@pytest.mark.parametrize("line,seconds", [("#PBS -l walltime=01:30:00", 5400),
                                          ("#BSUB -W 1:30", 5400), ("#BSUB -W 90", 5400)])
def test_a_script_time_in_digits_0_to_9_is_read(line, seconds):
    spec = Federation.parse(f"#!/bin/bash\n{line}\necho hi\n")
    assert spec.resources.walltime_s == seconds


# ---- a time a scheduler printed in other digits: not read, and said -------------------------

def _qstat(walltime: str) -> str:
    return json.dumps({"pbs_version": "19.1.3", "Jobs": {"41.srv": {
        "Job_Name": "a", "Job_Owner": "me@srv", "job_state": "Q", "queue": "workq",
        "comment": "Not Running: Insufficient amount of resource: ncpus",
        "Resource_List": {"walltime": walltime}}}})


def _bjobs(limit: str) -> str:
    return json.dumps({"JOBS": 1, "RECORDS": [{
        "JOBID": "7", "STAT": "PEND", "QUEUE": "normal", "RUNTIMELIMIT": limit,
        "PEND_REASON": "New job is waiting for scheduling;"}]})


@pytest.mark.parametrize("walltime", ["١:00:00", "01:３0:00", "1_0:00:00"])
def test_a_qstat_walltime_in_other_digits_is_not_read_and_said(walltime):
    [job] = get_commands("pbs").parse_status(_qstat(walltime))
    assert job.walltime_s is None, job
    if "_" not in walltime:
        assert job.reason == ("Not Running: Insufficient amount of resource: ncpus; its "
                              f"walltime {walltime!r} was not read ({foreign_digit(walltime)!r}"
                              " is not one of the digits 0-9)"), job.reason


@pytest.mark.parametrize("limit", ["٧٢٠.0 min", "7٢0.0 min", "1٢:00"])
def test_a_bjobs_run_limit_in_other_digits_is_not_read_and_said(limit):
    """`7٢0.0 min` was read as 7 minutes (`[\\d.]+` took its first digit), `1٢:00` as an hour
    (the digits 0-9 of it)."""
    [job] = get_commands("lsf").parse_status(_bjobs(limit))
    assert job.walltime_s is None, job
    assert job.reason == ("New job is waiting for scheduling; its run limit "
                          f"{limit!r} was not read ({foreign_digit(limit)!r} is not one of the "
                          "digits 0-9)"), job.reason


def test_times_in_digits_0_to_9_from_qstat_and_bjobs_are_read():
    [pbs] = get_commands("pbs").parse_status(_qstat("01:30:00"))
    [lsf] = get_commands("lsf").parse_status(_bjobs("90.0 min"))
    assert (pbs.walltime_s, lsf.walltime_s) == (5400, 5400)
    assert "not read" not in (pbs.reason or "") + (lsf.reason or "")


@pytest.mark.parametrize("text", ["١٧٠٠٠٠٠٠٠٠", "1_700_000_000"])
def test_an_epoch_time_in_other_digits_is_no_time(text):
    """qstat's times as seconds since the epoch: float() read both as 2023-11-14."""
    assert from_epoch(text) is None and from_epoch("1700000000") is not None


@pytest.mark.parametrize("text", ["١٢.٥", "1_0"])
def test_an_lsf_fairshare_priority_in_other_digits_is_not_read(text):
    assert _priority(text) is None and _priority("12.5") == 12.5


# ---- the sweep itself, kept: no `\d` and no bare isdigit() come back --------------------------

def _digit_classes(path: Path) -> list[int]:
    """The lines of `path` holding a one-line string with a regex `\\d` in it."""
    out = []
    with path.open() as f:
        for tok in tokenize.generate_tokens(f.readline):
            if tok.type != tokenize.STRING or tok.string.endswith(('"""', "'''")):
                continue
            raw = "r" in tok.string.split(tok.string[-1])[0].lower()
            if ("\\d" if raw else "\\\\d") in tok.string:
                out.append(tok.start[0])
    return out


def test_no_regex_in_the_package_uses_a_unicode_digit_class():
    """`\\d` in a pattern matches every Unicode digit; [0-9] is what schedulers write."""
    found = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py")
             for n in _digit_classes(p)]
    assert found == []


def test_no_isdigit_in_the_package_but_the_one_that_checks_ascii():
    found = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py")
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if ".isdigit()" in line and p.name != "digits.py"]
    assert found == []
