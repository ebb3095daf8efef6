"""Leftovers of the twenty-sixth scripts sweep: Grid Engine's values starting with '-' and
its job names, read as its own qsub reads them.

Grid Engine's qsub gives each option the next word whatever it is (`-N -x` names the job
"-x"), and its master refuses a job name starting with a digit (`denied: "1abc" is not a
valid object name (cannot start with a digit)`) or that is one of its keywords (NONE, ALL,
TEMPLATE, any case). Faults found, each shown by tests here that failed before (the
others guard what was read right already):
- `#$ -N 1abc` and `#$ -N all` were read as names, then refused by Grid Engine at submit;
  now refused at their line, naming -N and what to give.
- `#$ -N -x` was read as the name without a word (the `-N -j y` of a forgotten name looks
  so); now said at its line. Written back for Grid Engine the name is `j-x`, and the warning
  says why truly (qacct -j would read it as an option; qsub itself keeps it).
- `#$ -P -x` was kept as a project of '-x' and carried to PBS Pro; now refused at its line
  as `-A -x` is.
- `#$ -S -x` was read as the shell '-x', refused only at translation without a line; now
  refused at its line; so is `#$ -S host1:/bin/sh` (a shell list by host, refused only at
  translation before), naming the one path to give.
- A value starting with '-' (`#$ -A -x`) was refused saying "no scheduler could be given it
  back: it reads as an option", untrue of Grid Engine, whose qsub takes the next word as the
  value; each dialect's refusal now says what its own submit command does with it.
- A name from elsewhere that is a Grid Engine keyword (`--job-name=all`) was written as
  `#$ -N all`, which Grid Engine refuses; it is written `jall`, said.
"""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import parse_lines


@pytest.mark.parametrize("name", ["1abc", "2024_run", "0"])
def test_a_name_starting_with_a_digit_is_refused_as_grid_engine_refuses_it(name):
    with pytest.raises(BadInput) as exc:
        parse_lines("sge", f"#$ -N {name}")
    assert str(exc.value) == (
        f"line 2: job name {name!r} in `#$ -N {name}` starts with a digit: Grid Engine "
        f"refuses the job (`denied: \"{name}\" is not a valid object name (cannot start with "
        f"a digit)`); give one that starts otherwise (e.g. 'j{name}')")


@pytest.mark.parametrize("name", ["all", "None", "Template"])
def test_a_keyword_as_the_name_is_refused_naming_the_line(name):
    with pytest.raises(BadInput) as exc:
        parse_lines("sge", f"#$ -l h_rt=60\n#$ -N {name}")
    said = str(exc.value)
    assert said.startswith(f"line 3: job name {name!r} in `#$ -N {name}` is one of Grid "
                           "Engine's keywords (NONE, ALL, TEMPLATE, in any case)")
    assert f"(e.g. 'j{name}')" in said


def test_an_all_caps_keyword_is_no_name_either():
    """NONE in capitals reads as a template's placeholder (kept as written, said), never as
    the job's name."""
    assert parse_lines("sge", "#$ -N NONE").name is None


@pytest.mark.parametrize("name", ["a1", "allele", "run_0", "ALL_RUNS"])
def test_names_near_those_are_read(name):
    assert parse_lines("sge", f"#$ -N {name}").name == name


def test_a_dash_name_is_the_name_qsub_takes_and_is_said():
    spec = parse_lines("sge", "#$ -N -j y")
    assert spec.name == "-j"
    assert ("line 2: job name '-j' in `#$ -N -j y`: qsub takes the word after -N as the name "
            "whatever it is, so the job is named '-j' (if -j was meant as an option, -N lacks "
            "its name)") in spec.metadata["parse_notes"]


def test_a_dash_name_written_back_for_grid_engine_says_why_it_changes():
    script, warnings, _ = translate("#!/bin/bash\n#$ -N -x\n./a\n", "sge", "sge")
    assert "#$ -N j-x" in script
    [said] = [w for w in warnings if w.startswith("approximated: job name")]
    assert "one starting with '-' would read as an option to qacct -j" in said
    assert "cannot start with a digit or '-'" not in said


def test_a_keyword_name_from_slurm_is_written_so_grid_engine_takes_it():
    script, warnings, _ = translate("#!/bin/bash\n#SBATCH --job-name=all\n./a\n", "sge",
                                    "slurm")
    assert "#$ -N jall" in script and "#$ -N all" not in script
    assert any("job name 'all' as 'jall'" in w for w in warnings), warnings


def test_a_dash_project_is_refused_at_its_line():
    with pytest.raises(BadInput) as exc:
        parse_lines("sge", "#$ -l h_rt=60\n#$ -P -x")
    assert str(exc.value).startswith("line 3: `#$ -P -x` sets the project to '-x', which "
                                     "starts with '-' (Grid Engine's qsub takes the word "
                                     "after -P as the project whatever it is")
    assert "a project is a name" in str(exc.value)


@pytest.mark.parametrize(("line", "field"), [
    ("#$ -A -x", "account"), ("#$ -q -x", "queue"), ("#$ -o -x", "output file"),
    ("#$ -e -x", "error file"), ("#$ -wd -x", "working directory"),
])
def test_the_other_dash_values_stay_refused_at_their_line(line, field):
    with pytest.raises(BadInput) as exc:
        parse_lines("sge", line)
    assert str(exc.value).startswith(f"line 2: `{line}` sets the {field} to '-x'")


def test_a_dash_shell_is_refused_at_its_line():
    with pytest.raises(BadInput) as exc:
        parse_lines("sge", "#$ -S -x")
    assert str(exc.value) == (
        "line 2: `#$ -S -x` sets the shell to '-x', which starts with '-' (qsub takes the "
        "word after -S as the shell's path whatever it is); give the shell's absolute path "
        "(e.g. /bin/bash)")


def test_a_placeholder_name_is_kept_for_the_template():
    assert parse_lines("sge", "#$ -N <name>").name == "<name>"


@pytest.mark.parametrize(("value", "example"), [
    ("host1:/bin/sh", "/bin/sh"), ("node7:/bin/ksh,/bin/bash", "/bin/ksh"),
    ("/bin/bash,/bin/sh", "/bin/bash"),
])
def test_a_shell_list_by_host_is_refused_at_its_line(value, example):
    """Grid Engine's -S takes [host:]path entries; one shell for every host is what a
    script elsewhere can have, so a list is refused where it is written, not at
    translation without a line."""
    with pytest.raises(BadInput) as exc:
        parse_lines("sge", f"#$ -S {value}")
    assert str(exc.value) == (
        f"line 2: `#$ -S {value}` gives a list of shells by host ({value!r}: [host:]path "
        "entries, separated by commas); a job here has one shell, run on every host: give "
        f"its absolute path alone (e.g. #$ -S {example})")


def test_a_shell_path_alone_is_the_scripts_shell():
    assert parse_lines("sge", "#$ -S /bin/ksh").shell == "/bin/ksh"


@pytest.mark.parametrize(("dialect", "line", "read"), [
    ("sge", "#$ -A -x", "Grid Engine's qsub takes the word after -A as the account whatever "
                        "it is"),
    ("sge", "#$ -P -x", "Grid Engine's qsub takes the word after -P as the project whatever "
                        "it is"),
    ("sge", "#$ -o -x", "Grid Engine's qsub takes the word after -o as the output file "
                        "whatever it is"),
    ("slurm", "#SBATCH --account=-x", "sbatch takes it as the account"),
    ("pbs", "#PBS -q -x", "qsub takes it as the queue"),
    ("flux", "#FLUX: --queue=-x", "flux batch takes it as the queue (joined to its option "
                                  "with '=')"),
])
def test_a_dash_value_is_refused_saying_what_its_own_scheduler_does_with_it(dialect, line,
                                                                             read):
    """Each submit command takes the word as the value (Grid Engine's whatever it is):
    "no scheduler could be given it back" was untrue. The refusal says what the script's
    own scheduler does, why a job here holds no such value, and what to give."""
    with pytest.raises(BadInput) as exc:
        parse_lines(dialect, line)
    said = str(exc.value)
    assert said.startswith(f"line 2: `{line}` sets the ")
    assert (f"which starts with '-' ({read}; but a job here holds only what every scheduler "
            "could be given, and bsub reads a word starting with '-' as an option of its "
            "own); ") in said, said
    assert "could be given it back" not in said
    assert said.endswith(("give the name", "give a name or a path such as ./-x"))
