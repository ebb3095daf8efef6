"""Start times of every scheduler: PBS and Grid Engine `qsub -a`, LSF `bsub -b` and flux
`--begin-time` were kept as written (every other scheduler got a "dropped" line, placement
read only Slurm's `--begin`). Each is now read into `JobSpec.begin` (sbatch's `--begin`
form), written in each scheduler's own form where it has one (else said dropped, naming
why), and holds the start on a site of any scheduler."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from diamond_jupyter.dialects.begin_time import slurm_parts
from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput
from diamond_jupyter.placement import place

sys.path.insert(0, str(Path(__file__).parent))

from test_placement_cases import NOW, hera  # noqa: E402


def _parse(dialect: str, line: str):
    return get_script_dialect(dialect).parse_script(f"#!/bin/bash\n{line}\n./app\n")


@pytest.mark.parametrize(("dialect", "line", "begin"), [
    ("pbs", "#PBS -a 202612240830", "2026-12-24T08:30:00"),
    ("pbs", "#PBS -a 2612240830.45", "2026-12-24T08:30:45"),  # YY: this century
    ("pbs", "#PBS -a 12240830", "12/24T08:30:00"),  # no year: the next 24 December
    ("pbs", "#PBS -a 2230", "22:30:00"),  # a time of day: the next one to come
    ("sge", "#$ -a 202612240830.15", "2026-12-24T08:30:15"),
    ("sge", "#$ -a 12240830", "12/24T08:30:00"),
    ("lsf", "#BSUB -b 2026:12:24:08:30", "2026-12-24T08:30:00"),
    ("lsf", "#BSUB -b 12:24:08:30", "12/24T08:30:00"),
    ("lsf", "#BSUB -b 20:00", "20:00:00"),
    ("flux", "#flux: --begin-time=+1.5h", "now+5400"),
    ("flux", "#flux: --begin-time='2026-12-24 08:30'", "2026-12-24T08:30:00"),
    ("slurm", "#SBATCH --begin=now+1hour", "now+1hour"),
])
def test_each_schedulers_start_time_is_read_into_begin(dialect, line, begin):
    spec = _parse(dialect, line)
    assert spec.begin == begin
    assert spec.unknown == []
    assert slurm_parts(begin) is not None  # a value sbatch reads


@pytest.mark.parametrize(("dialect", "line", "option"), [
    ("pbs", "#PBS -a 240830", "-a"),  # a day without its month: no neutral form
    ("lsf", "#BSUB -b 24:08:30", "-b"),
    ("flux", "#flux: --begin-time='tomorrow 8am'", "--begin-time"),
])
def test_a_start_time_without_a_neutral_form_is_kept_and_said(dialect, line, option):
    spec = _parse(dialect, line)
    assert spec.begin is None
    assert [d.option for d in spec.unknown] == [option]
    assert any("kept as written" in n for n in spec.metadata["parse_notes"])


@pytest.mark.parametrize(("dialect", "line", "words"), [
    ("pbs", "#PBS -a 12345", "[[[[CC]YY]MM]DD]hhmm[.SS]"),
    ("pbs", "#PBS -a 202613240830", "no real date"),  # month 13
    ("sge", "#$ -a 0830", "[[CC]YY]MMDDhhmm[.SS]"),  # Grid Engine needs MMDD
    ("lsf", "#BSUB -b 25:00", "no real date"),
    ("lsf", "#BSUB -b tomorrow", "[[year:][month:]day:]hour:minute"),
])
def test_a_start_time_qsub_or_bsub_refuses_is_bad_input_naming_the_form(dialect, line, words):
    with pytest.raises(BadInput) as exc:
        _parse(dialect, line)
    assert "line 2" in str(exc.value) and words in str(exc.value)


def _begin_line(script: str, option: str) -> list[str]:
    return [x for x in script.splitlines() if option in x]


def test_an_absolute_time_reaches_every_scheduler_in_its_own_form():
    text = "#!/bin/bash\n#PBS -a 202612240830\n#PBS -l walltime=1:00:00\n./app\n"
    want = {"slurm": "#SBATCH --begin=2026-12-24T08:30:00", "pbs": "#PBS -a 202612240830",
            "sge": "#$ -a 202612240830", "lsf": "#BSUB -b 2026:12:24:08:30",
            "flux": '#flux: --begin-time="2026-12-24 08:30:00"'}
    for target, line in want.items():
        script, warnings, _ = translate(text, target, "pbs")
        assert line in script.splitlines(), (target, script)
        assert not [w for w in warnings if "begin" in w or "-a " in w], warnings
        back = get_script_dialect(target).parse_script(script)
        assert back.begin == "2026-12-24T08:30:00"


def test_a_relative_time_reaches_flux_and_slurm_and_is_said_dropped_elsewhere():
    text = "#!/bin/bash\n#SBATCH --begin=now+2hours\n#SBATCH -t 10\n./app\n"
    script, _, _ = translate(text, "flux", "slurm")
    assert "#flux: --begin-time=+7200s" in script
    for target, form in (("pbs", "qsub -a"), ("sge", "qsub -a"), ("lsf", "bsub -b")):
        script, warnings, _ = translate(text, target, "slurm")
        assert any(w.startswith("dropped: begin time now+2hours") and form in w
                   for w in warnings), warnings


def test_a_time_of_day_has_no_grid_engine_form():
    script, warnings, _ = translate("#!/bin/bash\n#BSUB -b 20:00\n./app\n", "sge", "lsf")
    assert not _begin_line(script, "-a ")
    assert any("begin time 20:00:00" in w and "month and day" in w for w in warnings)
    script, _, _ = translate("#!/bin/bash\n#BSUB -b 20:00\n./app\n", "pbs", "lsf")
    assert "#PBS -a 2000" in script


def test_seconds_are_said_when_bsub_cannot_take_them():
    script, warnings, _ = translate("#!/bin/bash\n#$ -a 202612240830.15\n./app\n", "lsf", "sge")
    assert "#BSUB -b 2026:12:24:08:30" in script
    assert any(w.startswith("approximated: begin time") for w in warnings)


@pytest.mark.parametrize(("scheduler", "script"), [
    ("pbs", "#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00\n#PBS -a 1100"),
    ("sge", "#$ -l h_rt=1:00:00\n#$ -a 03011100"),
    ("lsf", "#BSUB -n 4\n#BSUB -W 60\n#BSUB -b 11:00"),
    ("flux", "#flux: -n 4\n#flux: -t 1h\n#flux: --begin-time=+2h"),
])
def test_a_start_time_holds_the_start_on_a_site_of_any_scheduler(scheduler, script):
    # an idle site at 09:00: the job starts at 11:00 (before: at once, the option unread)
    cfg, snap = hera()
    cfg = cfg.model_copy(update={"scheduler": scheduler})
    spec = Federation.parse("#!/bin/bash\n" + script + "\n./app\n")
    v = place(spec, [(cfg, snap)], now=NOW).verdict("hera")
    assert v.feasible, v.reasons
    assert (v.estimated_start - NOW).total_seconds() == 2 * 3600
    assert any(n.startswith("begin time 2026-03-01 11:00: it starts no sooner") for n in v.notes)


@pytest.mark.parametrize(("value", "target", "words"), [
    ("tomorrow", "flux", "a day relative to the submission"),
    ("noon", "flux", "time of day"),
    ("12/24", "flux", "date without a year"),
    ("tomorrow", "lsf", "no time relative to the submission"),
])
def test_each_dropped_start_time_says_why(value, target, words):
    from diamond_jupyter.dialects.begin_time import render_begin

    warnings: list[str] = []
    assert render_begin(value, target, warnings) is None
    assert len(warnings) == 1 and warnings[0].startswith(f"dropped: begin time {value} (")
    assert words in warnings[0]


@pytest.mark.parametrize(("dialect", "line"), [
    ("pbs", "#PBS -a 202602300830"),  # 30 February
    ("sge", "#$ -a 202704310800"),  # 31 April
    ("lsf", "#BSUB -b 2027:02:29:08:00"),  # 2027 is no leap year
])
def test_a_day_the_month_does_not_have_is_bad_input(dialect, line):
    with pytest.raises(BadInput, match="no real date"):
        _parse(dialect, line)
    assert _parse("pbs", "#PBS -a 02290830").begin == "02/29T08:30:00"  # a leap year's
