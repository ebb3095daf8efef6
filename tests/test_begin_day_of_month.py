"""A start time of a day of the month without its month (PBS `qsub -a DDhhmm[.SS]`, LSF
`bsub -b day:hour:minute`): the dialects read no clock, so the translation keeps it as
written for its own scheduler and says it dropped elsewhere; placement, which has a "now",
held nothing for it (the job was predicted to start at once where qsub/bsub hold it for
days). Placement now holds the start at a PBS or LSF site as qsub and bsub read it: that
day of the current month if still to come, else of the next month that has such a day.
PBS and LSF, which read it alike, get each other's as text (it was said dropped). NOW is
2026-03-01 09:00 (March has 31 days, April 30)."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from diamond_jupyter.dialects.begin_time import Begin, day_of_month
from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.placement_time import day_of_month_at, job_window

sys.path.insert(0, str(Path(__file__).parent))

from test_placement_cases import NOW, hera, only, run  # noqa: E402
from test_placement_cases6 import kestrel  # noqa: E402
from test_placement_cases8 import wren  # noqa: E402

UTC = timezone.utc


def _at(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(("dialect", "value", "parts"), [
    ("pbs", "151230", Begin(day=15, hour=12, minute=30)),
    ("pbs", "010800.45", Begin(day=1, hour=8, minute=0, second=45)),
    ("lsf", "31:8:05", Begin(day=31, hour=8, minute=5)),
    ("lsf", "2:08:00", Begin(day=2, hour=8)),
])
def test_the_day_form_is_read_as_written(dialect: str, value: str, parts: Begin) -> None:
    assert day_of_month(dialect, value) == parts


@pytest.mark.parametrize(("dialect", "value"), [
    ("pbs", "321200"), ("pbs", "002359"), ("pbs", "152460"), ("lsf", "0:8:00"),
    ("lsf", "32:8:00"), ("lsf", "12:24:08:00"), ("pbs", "1230"), ("sge", "151230"),
])
def test_other_forms_and_impossible_days_are_not_a_day_of_the_month(dialect, value) -> None:
    assert day_of_month(dialect, value) is None


@pytest.mark.parametrize(("now", "day", "hour", "want"), [
    (_at(2026, 3, 1, 9), 15, 12, _at(2026, 3, 15, 12)),  # later this month
    (_at(2026, 3, 1, 9), 1, 8, _at(2026, 4, 1, 8)),  # today, but 08:00 has passed
    (_at(2026, 3, 1, 9), 1, 10, _at(2026, 3, 1, 10)),  # today, still to come
    (_at(2026, 4, 5, 9), 31, 8, _at(2026, 5, 31, 8)),  # April has no 31st: May's
    (_at(2026, 1, 31, 9), 30, 8, _at(2026, 3, 30, 8)),  # no 30 February: March's
    (_at(2026, 12, 20, 9), 5, 8, _at(2027, 1, 5, 8)),  # next month is next year's
])
def test_the_start_is_this_months_day_or_the_next_one_to_come(now, day, hour, want) -> None:
    assert day_of_month_at(Begin(day=day, hour=hour), now) == want


def test_the_translation_stays_pure_kept_for_its_own_and_said_dropped_elsewhere() -> None:
    text = "#!/bin/bash\n#PBS -l select=1:ncpus=4\n#PBS -a 151230\n./a\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert spec.begin is None
    assert "#PBS -a 151230" in translate(text, "pbs", "pbs")[0]
    script, warnings, _ = translate(text, "slurm", "pbs")
    assert "--begin" not in script and any("-a 151230" in w for w in warnings)


def test_a_pbs_day_without_its_month_holds_the_start_at_a_pbs_site() -> None:
    # the 15th at 12:30: +14 days 3:30 (before: READY at once, the hold unread)
    v = only(run("#PBS -l select=1:ncpus=4\n#PBS -a 151230\n#PBS -l walltime=1:00:00",
                 kestrel()), "kestrel", "workq")
    assert v.estimated_start == NOW + timedelta(days=14, hours=3, minutes=30)
    assert any("begin time 2026-03-15 12:30: it starts no sooner" in n for n in v.notes)
    # the 1st at 08:00 has passed today: April's
    v = run("#PBS -l select=1:ncpus=4\n#PBS -a 010800\n#PBS -l walltime=1:00:00",
            kestrel()).verdict("kestrel")
    assert v.estimated_start == _at(2026, 4, 1, 8)


def test_an_lsf_day_without_its_month_holds_the_start_at_an_lsf_site() -> None:
    v = only(run("#BSUB -n 4\n#BSUB -b 31:08:00\n#BSUB -W 1:00", wren()), "wren", "normal")
    assert v.estimated_start == _at(2026, 3, 31, 8)
    # the last -b wins, as bsub reads it
    v = only(run("#BSUB -n 4\n#BSUB -b 31:08:00\n#BSUB -b 2:08:00\n#BSUB -W 1:00", wren()),
             "wren", "normal")
    assert v.estimated_start == _at(2026, 3, 2, 8)


def test_at_another_schedulers_site_it_is_dropped_so_nothing_holds() -> None:
    # sbatch gets no --begin for it (the translation says so): the job may start at once
    v = only(run("#PBS -l select=1:ncpus=4\n#PBS -a 151230\n#PBS -l walltime=1:00:00",
                 hera()), "hera", "cpu")
    assert v.verdict == "READY" and v.estimated_start == NOW
    spec = get_script_dialect("pbs").parse_script("#!/bin/bash\n#PBS -a 151230\n./a\n")
    assert job_window(spec, NOW, "slurm")[0] is None
    assert job_window(spec, NOW, "pbs")[0] == _at(2026, 3, 15, 12, 30)


@pytest.mark.parametrize(("source", "line", "target", "want"), [
    ("lsf", "#BSUB -b 15:02:00", "pbs", "#PBS -a 150200"),
    ("lsf", "#BSUB -b 3:2:05", "pbs", "#PBS -a 030205"),
    ("pbs", "#PBS -a 150200", "lsf", "#BSUB -b 15:02:00"),
    ("pbs", "#PBS -a 010830.15", "lsf", "#BSUB -b 1:08:30"),
])
def test_pbs_and_lsf_carry_each_others_day_of_the_month(source, line, target, want) -> None:
    # both read a day without its month the same way (this month's if still to come, else
    # the next month's): carried over as text, no clock needed (it was said dropped)
    text = f"#!/bin/bash\n{line}\n./a\n"
    script, warnings, _ = translate(text, target, source)
    assert want in script.splitlines()
    assert not any(w.startswith("dropped:") and line in w for w in warnings), warnings
    assert any(w.startswith(f"approximated: {line} as {want.split(maxsplit=1)[1]}")
               for w in warnings), warnings
    assert any("takes no seconds" in w for w in warnings) == want.endswith("1:08:30")
    back = get_script_dialect(target).parse_script(script)
    assert [d.value for d in back.unknown] == [want.split()[-1]]


def test_a_pbs_day_without_its_month_holds_the_start_at_an_lsf_site_too() -> None:
    # the LSF site gets it as -b 15:12:30 (above): held there as bsub reads it
    v = only(run("#PBS -l select=1:ncpus=4\n#PBS -a 151230\n#PBS -l walltime=1:00:00",
                 wren()), "wren", "normal")
    assert v.estimated_start == _at(2026, 3, 15, 12, 30)
