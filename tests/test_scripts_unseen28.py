"""A twenty-eighth set of realistic batch scripts (tests/fixtures/scripts_unseen28/<dialect>/).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py); then its body
is checked to reach every translation line for line. The styles: directives inside a
shell function after the first command, a here-document that submits another job with
directive-looking lines, another scheduler's directives left in a script (#PBS in a Slurm
one, #SBATCH in PBS, LSF and flux ones), indented sentinels (sbatch ignores them, qsub
reads them), a `${VAR:-default}` in a directive's value, arrays from 0 with steps and a
throttle, a Slurm name holding `|` and an emoji, PBS `select=2:ncpus=8:mpiprocs=4+1:ncpus=1`,
LSF `-R "span[ptile=4] select[mem>4000]"`, flux `--setattr` of system and user keys after
blank lines, Grid Engine's `h_rt=INFINITY`, BOM and CRLF. What the sweep found: a script
saved as Latin-1 reached every scheduler with U+FFFD in place of its bytes, unsaid."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import SCRIPT_DIALECTS, get_script_dialect, translate
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    directive_lines,
    fixture_scripts,
    read_fixture,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen28"
G = 1024

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys).
EXPECTED: dict[str, dict[str, Any]] = {
    "flux/bom_crlf_output_mustache.flux": dict(
        nodes=1, tasks=2, cpus=2, walltime=1800, stdout="out.%j"),
    "flux/heredoc_flux_lines_in_body.flux": dict(
        tasks=1, cpus=1, walltime=300, ignored=2,
        notes=["directives must be grouped; flux batch rejects this one"]),
    "flux/sbatch_leftovers_in_flux.flux": dict(tasks=4, cpus=4, walltime=3600, name="ported"),
    "flux/setattr_system_and_user_after_blank.flux": dict(
        nodes=2, tasks=8, cpus=8, walltime=5400, unknown=["--setattr", "--setattr"]),
    "lsf/R_span_ptile_select_mem_one_string.lsf": dict(
        nodes=4, tasks=16, cpus=16, walltime=7200, name="spanmem", queue="normal",
        unknown=["-R select"]),
    "lsf/array_step_throttle_env_output.lsf": dict(
        tasks=1, cpus=1, walltime=900, array="2-20:6%2", name="grid",
        stdout="grid.%j.%a.out"),
    "lsf/directives_after_blank_and_comments.lsf": dict(
        tasks=2, cpus=2, walltime=1800, name="pipeline", stdout="pipe.%j.out"),
    "lsf/sbatch_leftovers_in_bsub.lsf": dict(tasks=4, cpus=4, walltime=3600, name="moved"),
    "pbs/array_J_step_pct.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=1200, array="0-90:10%3"),
    "pbs/indented_pbs_and_blank_first.pbs": dict(
        nodes=1, tasks=4, cpus=4, walltime=90 * 3600, name="late"),
    "pbs/sbatch_leftovers_in_pbs.pbs": dict(
        nodes=1, tasks=1, cpus=16, memory_mb=32 * G, walltime=14400, name="ported",
        node_mem=32 * G),
    "pbs/select_two_chunks_plus_ncpus1.pbs": dict(
        nodes=3, tasks=9, cpus=17, walltime=10800, name="hybrid", queue="workq",
        notes=["read as a job of 2 shapes: 3 nodes, 9 tasks, 17 CPUs in all"]),
    "sge/directives_after_blank_and_comment.sge": dict(
        memory_mb=2 * G, walltime=5400, name="late_sge", per_cpu=2 * G),
    "sge/h_rt_infinity_pe_range.sge": dict(
        nodes=1, cpus=4, name="forever", unknown=["-l h_rt"],
        notes=["-l h_rt=INFINITY asks no limit"]),
    "slurm/array_zero_step250_throttle1.sbatch": dict(
        walltime=600, array="0-1000:250%1", stdout="chunk_%A_%a.log"),
    "slurm/bom_crlf_array_after_blank.sbatch": dict(
        nodes=1, tasks=4, cpus=4, walltime=3600, array="1-9:4%2"),
    "slurm/env_default_in_partition_value.sbatch": dict(
        tasks=2, cpus=2, walltime=2700, name="envdefault", queue="${PARTITION:-compute}",
        notes=["template placeholder in `#SBATCH --partition=${PARTITION:-compute}`"]),
    "slurm/heredoc_sbatch_submit_in_body.sbatch": dict(
        nodes=1, walltime=600, name="outer", ignored=3),
    "slurm/indented_sentinel_not_directive.sbatch": dict(
        tasks=2, cpus=2, walltime=1200, ignored=2),
    "slurm/pbs_and_sbatch_mixed.sbatch": dict(
        tasks=8, cpus=8, memory_mb=8 * G, walltime=7200, name="old_name", per_cpu=G,
        notes=["its name taken over the #SBATCH ones",
               "its time limit taken over the #SBATCH ones"]),
    "slurm/pipe_and_emoji_name.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="a|b 🧪", shell="/bin/bash -l"),
    "slurm/sbatch_in_function_after_command.sbatch": dict(
        tasks=4, cpus=4, walltime=1800, name="fn_setup", ignored=2),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=(*COMPARED_FIELDS, "shell"), strict=ALL_STRICT,
                at_least=22)

SENTINELS = ("#SBATCH", "#PBS", "#BSUB", "#$", "# flux:", "#flux:", "##SBATCH", "##PBS")


def _body(text: str) -> list[str]:
    """The lines of a script a translation must carry as written: all but its #! line, its
    blank lines and the lines that start with a sentinel (those are the header's)."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")[1:]
    return [x for x in lines if x.strip() and not x.lstrip().startswith(SENTINELS)]


def _in_order(wanted: list[str], lines: list[str]) -> bool:
    it = iter(lines)
    return all(any(x == y for y in it) for x in wanted)


# what a translation is asked to change in a body: each scheduler's variables (the array
# index, the submit directory, the queue) and its launcher, for the target's own
_VARIABLE = re.compile(r"\$\{?(?:SLURM|PBS|LSB|LS|SGE|FLUX)_?\w*\}?|\$\{?QUEUE\}?")
_LAUNCHER = re.compile(r"^(?:srun|mpirun|mpiexec|flux run|jsrun|ibrun)\b")


def _carried(line: str) -> str:
    """A body line as a translation must keep it: its scheduler variables and its launcher
    stand for the target's."""
    return _LAUNCHER.sub("LAUNCH", _VARIABLE.sub("$VAR", line.strip()))


# ------------------------------------------------------- the body reaches every translation

@pytest.mark.parametrize("rel", fixture_scripts(HERE))
@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_the_body_reaches_the_translation_line_for_line(rel: str, target: str):
    """Nothing in a translation changes the script's commands, its comments or the text of
    its here-documents but what translating asks (CRLF ends become LF, and that is said;
    the scheduler's variables and launcher become the target's)."""
    source, text = read_fixture(HERE, rel)
    try:
        script, _, _ = translate(text, target, source)
    except BadInput as exc:  # an array from 0 to LSF or Grid Engine: refused, saying so
        assert "cannot express the array" in str(exc) and target in ("lsf", "sge"), exc
        return
    body = [_carried(x) for x in _body(text)]
    rest = [_carried(x) for x in _body(script)]
    assert body and _in_order(body, rest), (body, script)


@pytest.mark.parametrize("rel", ["slurm/heredoc_sbatch_submit_in_body.sbatch",
                                 "flux/heredoc_flux_lines_in_body.flux"])
@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_a_here_document_keeps_its_directive_lines_as_written(rel: str, target: str):
    """The inner job's `#SBATCH -N 64` is text the outer job writes; a translation leaves
    it, and the outer job asks for none of it."""
    source, text = read_fixture(HERE, rel)
    script, _, back = translate(text, target, source)
    start = next(i for i, x in enumerate(text.split("\n")) if "<<" in x)
    heredoc = text.split("\n")[start:]
    assert _in_order([x for x in heredoc if x], script.split("\n"))
    outer = get_script_dialect(source).parse_script(text)
    assert back.resources.walltime_s == outer.resources.walltime_s in (300, 600)
    assert back.resources.nodes == outer.resources.nodes != 32


# -------------------------------------------------------------------- what each one is said

@pytest.mark.parametrize(("rel", "target", "said"), [
    ("slurm/pbs_and_sbatch_mixed.sbatch", "pbs",
     "approximated: 2 #PBS line(s) at the top of the body made ##PBS comments, so pbs does "
     "not read them after the header"),
    ("pbs/sbatch_leftovers_in_pbs.pbs", "slurm",
     "approximated: 2 #SBATCH line(s) at the top of the body made ##SBATCH comments"),
    ("lsf/sbatch_leftovers_in_bsub.lsf", "lsf",
     "kept: 2 slurm directive line(s) in the body; they stay in the body for slurm"),
    ("flux/sbatch_leftovers_in_flux.flux", "slurm",
     "approximated: 2 #SBATCH line(s) at the top of the body made ##SBATCH comments"),
    ("lsf/R_span_ptile_select_mem_one_string.lsf", "slurm",
     'dropped: #BSUB -R "span[ptile=4] select[mem>4000]" (-R select select[mem>4000]: no '
     "slurm equivalent)"),
    ("flux/setattr_system_and_user_after_blank.flux", "pbs",
     "dropped: # flux: --setattr=system.exec.bulkexec.mpi=none (--setattr "
     "system.exec.bulkexec.mpi=none: no pbs equivalent)"),
    ("flux/setattr_system_and_user_after_blank.flux", "sge",
     "dropped: # flux: --setattr=user.study=alpha (--setattr user.study=alpha: no sge "
     "equivalent)"),
    ("sge/h_rt_infinity_pe_range.sge", "slurm",
     "dropped: #$ -l h_rt=INFINITY (-l h_rt h_rt=INFINITY: no slurm equivalent)"),
    ("slurm/array_zero_step250_throttle1.sbatch", "flux",
     "dropped: array 0-1000:250%1 (flux batch has no arrays; use flux bulksubmit)"),
    ("slurm/pipe_and_emoji_name.sbatch", "sge",
     "approximated: job name 'a|b 🧪' as 'a|b_🧪'"),
    ("pbs/select_two_chunks_plus_ncpus1.pbs", "flux",
     "approximated: a job of 2 shapes (2 nodes, 8 tasks, 16 CPUs + 1 node, 1 task, 1 CPU) "
     "as one shape of 3 nodes and 9 tasks"),
    ("flux/bom_crlf_output_mustache.flux", "slurm",
     "approximated: CRLF line endings converted to LF (sbatch rejects DOS line breaks)"),
])
def test_what_is_not_carried_is_said_in_words(rel: str, target: str, said: str):
    _, warnings = translated(HERE, rel, target)
    assert any(w.startswith(said) for w in warnings), warnings


@pytest.mark.parametrize(("rel", "target"), [
    ("slurm/array_zero_step250_throttle1.sbatch", "lsf"),
    ("slurm/array_zero_step250_throttle1.sbatch", "sge"),
    ("pbs/array_J_step_pct.pbs", "lsf"),
    ("pbs/array_J_step_pct.pbs", "sge"),
])
def test_an_array_from_zero_is_refused_where_indexes_start_at_one(rel: str, target: str):
    source, text = read_fixture(HERE, rel)
    with pytest.raises(BadInput, match=r"starts array indexes at 1 .*number the array from 1"):
        translate(text, target, source)


@pytest.mark.parametrize(("rel", "target", "lines"), [
    ("slurm/array_zero_step250_throttle1.sbatch", "pbs", ["#PBS -J 0-1000:250%1"]),
    ("pbs/array_J_step_pct.pbs", "slurm", ["#SBATCH --array=0-90:10%3"]),
    ("lsf/array_step_throttle_env_output.lsf", "sge", ["#$ -t 2-20:6", "#$ -tc 2"]),
    ("lsf/array_step_throttle_env_output.lsf", "slurm", ["#SBATCH --array=2-20:6%2"]),
    ("lsf/R_span_ptile_select_mem_one_string.lsf", "slurm",
     ["#SBATCH --ntasks=16", "#SBATCH --ntasks-per-node=4"]),
    ("pbs/select_two_chunks_plus_ncpus1.pbs", "pbs",
     ["#PBS -l select=2:ncpus=8:mpiprocs=4+1:ncpus=1"]),
    ("flux/setattr_system_and_user_after_blank.flux", "flux",
     ["#flux: --setattr=system.exec.bulkexec.mpi=none", "#flux: --setattr=user.study=alpha"]),
    ("slurm/pipe_and_emoji_name.sbatch", "flux", ['#flux: --job-name="a|b 🧪"']),
    ("pbs/indented_pbs_and_blank_first.pbs", "slurm", ["#SBATCH --time=3-18:00:00"]),
])
def test_carried_as_a_user_would_write_it(rel: str, target: str, lines: list[str]):
    script, _ = translated(HERE, rel, target)
    for line in lines:
        assert line in script.splitlines(), (line, script)


def test_an_indented_sbatch_line_is_a_comment_but_an_indented_pbs_line_a_directive():
    """sbatch reads `#SBATCH` only at a line's start; qsub skips blanks before `#PBS`: the
    same indentation asks nothing of Slurm and 90 hours of PBS (the later line wins)."""
    slurm = get_script_dialect("slurm").parse_script(
        (HERE / "slurm/indented_sentinel_not_directive.sbatch").read_text())
    assert slurm.resources.walltime_s == 1200 and slurm.resources.tasks == 2
    pbs = get_script_dialect("pbs").parse_script(
        (HERE / "pbs/indented_pbs_and_blank_first.pbs").read_text())
    assert pbs.resources.walltime_s == 90 * 3600


def test_directives_in_a_function_after_the_first_command_ask_nothing():
    spec = get_script_dialect("slurm").parse_script(
        (HERE / "slurm/sbatch_in_function_after_command.sbatch").read_text())
    assert spec.queue is None and spec.resources.walltime_s == 1800
    notes = spec.metadata["parse_notes"]
    assert "line 7: ignored `#SBATCH --time=12:00:00` (after the first command; sbatch " \
           "ignores it)" in notes


def test_a_placeholder_value_is_kept_as_written_never_expanded():
    script, warnings = translated(HERE, "slurm/env_default_in_partition_value.sbatch", "pbs")
    assert "#PBS -q ${PARTITION:-compute}" in script.splitlines()
    assert any("template placeholder in `#SBATCH --partition=${PARTITION:-compute}` kept as "
               "a raw value" in w for w in warnings)


# ------------------------------------------- a script saved as Latin-1 (bytes not UTF-8)

LATIN1 = (b"#!/bin/bash\n#SBATCH -J caf\xe9\n#SBATCH -n 1\n#SBATCH -t 5\n"
          b"echo \"r\xe9sum\xe9\" > out.txt\n")


@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_bytes_not_utf8_replaced_on_reading_are_said(tmp_path, target: str):
    """Before, a Latin-1 script's `echo "résumé" > out.txt` reached each scheduler as
    `echo "r\ufffdsum\ufffd"` (a file of another name) with nothing said."""
    path = tmp_path / "latin.sbatch"
    path.write_bytes(LATIN1)
    text = Federation.read_script(path)
    script, warnings, _ = translate(text, target, "slurm")
    said = [w for w in warnings if "U+FFFD" in w]
    assert said == ["approximated: 3 U+FFFD character(s) (\ufffd), first in `caf\ufffd`: bytes "
                    "that were not UTF-8 (a file saved as Latin-1 or cp1252?) were replaced "
                    "when the script was read, and the job gets U+FFFD in their place; save "
                    "the script as UTF-8 (iconv -f latin1 -t utf-8) to keep its text"], warnings
    assert 'echo "r\ufffdsum\ufffd" > out.txt' in script.splitlines()  # nothing else lost


def test_a_utf8_script_is_not_said_replaced():
    text = LATIN1.decode("latin-1")  # the same script saved as UTF-8
    for target in SCRIPT_DIALECTS:
        _, warnings, _ = translate(text, target, "slurm")
        assert not [w for w in warnings if "U+FFFD" in w], warnings


def test_the_body_only_holding_replaced_bytes_names_its_line():
    text = "#!/bin/bash\n#SBATCH -n 1\n#SBATCH -t 5\n" + "x" * 100 + "\ufffd\n"
    _, warnings, _ = translate(text, "pbs", "slurm")
    said = next(w for w in warnings if "U+FFFD" in w)
    assert said.startswith("approximated: 1 U+FFFD character(s) (\ufffd), first in `"
                           + "x" * 77 + "...`"), said


def test_every_fixture_translates_to_its_own_dialect_with_its_directives_kept():
    """Read back from its own dialect each fixture asks the same: its directive lines are
    the header's (a line of another scheduler stays in the body)."""
    for rel in fixture_scripts(HERE):
        source, text = read_fixture(HERE, rel)
        script, _, _ = translate(text, source, source)
        sentinel = {"slurm": "#SBATCH", "pbs": "#PBS", "lsf": "#BSUB", "sge": "#$",
                    "flux": "#flux:"}[source]
        assert directive_lines(script, sentinel), rel
