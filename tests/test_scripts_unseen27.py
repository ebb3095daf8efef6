"""A twenty-seventh set of realistic batch scripts (tests/fixtures/scripts_unseen27/<dialect>/).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Then what the
sweep found: flux batch's triple-quoted strings (on one directive line, and over several:
RFC 36), which were read word by word as options of their own; a value written into a
flux directive with three quote characters in a row (flux reads them as a triple quote);
and $HOME, $USER ... in a PBS, LSF or flux output path, which Grid Engine expands and the
others write literally, reaching Grid Engine unsaid (only Slurm's was said)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    directive_lines,
    parse_lines,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen27"
G = 1024

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys).
EXPECTED: dict[str, dict[str, Any]] = {
    "flux/add_file_multiline_single_quotes.flux": dict(
        nodes=2, tasks=2, cpus=2, walltime=3600, unknown=["--add-file"], queue="pbatch"),
    "flux/bom_crlf_triple_quoted_add_file.flux": dict(
        nodes=1, tasks=2, cpus=2, walltime=1200, unknown=["--add-file"], name="crlf_tq"),
    "flux/disabled_directive_hash_after_sentinel.flux": dict(tasks=2, cpus=2, walltime=600),
    "flux/inline_triple_quotes_hash_inside.flux": dict(
        tasks=1, cpus=1, walltime=300, unknown=["--setattr"], name="it's mine"),
    "flux/output_user_var_mustache.flux": dict(
        tasks=1, cpus=1, walltime=900, stdout="/scratch/$USER/%j.out"),
    "flux/python_script_hash_sentinel.flux": dict(
        nodes=2, tasks=2, cpus=2, walltime=7200, stdout="py.%j.out",
        shell="/usr/bin/env python3"),
    "flux/setopt_short_o_and_S_setattr.flux": dict(
        tasks=8, cpus=8, walltime=3600, unknown=["--setopt"], account="chem"),
    "flux/triple_quoted_user_conf.flux": dict(
        nodes=1, tasks=4, cpus=4, walltime=1800, unknown=["--setattr"], name="tq"),
    "lsf/R_select_span_rusage_order_together.lsf": dict(
        nodes=2, tasks=16, cpus=16, memory_mb=64000, walltime=14400,
        unknown=["-R select", "-R order"], name="together", per_cpu=4000),
    "lsf/array_name_outputs_J_I_env.lsf": dict(
        tasks=1, cpus=1, walltime=1200, array="1-30%3", name="scan",
        stdout="logs/scan.%j.%a.out", stderr="logs/scan.%j.%a.err"),
    "lsf/multi_options_one_line.lsf": dict(
        tasks=4, cpus=4, walltime=5400, name="multi", queue="normal", stdout="out.%j",
        stderr="err.%j"),
    "lsf/n_min_max_span_hosts1.lsf": dict(
        nodes=1, tasks=4, cpus=4, walltime=7200, unknown=["-n"], notes=["slot range 4,8"]),
    "lsf/output_home_user_to_sge.lsf": dict(
        tasks=1, cpus=1, walltime=900, stdout="$HOME/lsf/%j.out",
        stderr="/scratch/$USER/%j.err"),
    "pbs/array_J_with_depend_afterok_and_trailing_comment.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=3600, array="1-50:5",
        deps=[("afterok", ["9001.srv"])]),
    "pbs/multi_options_one_line.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8 * G, walltime=7200, name="run1", queue="long",
        mail_events=["fail", "end"], mail_user="ops@example.org"),
    "pbs/output_env_var_path.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, stdout="$HOME/logs/out.log",
        stderr="/scratch/$USER/err.log"),
    "pbs/torque_l_many_commas.pbs": dict(
        nodes=2, tasks=24, cpus=24, memory_mb=48 * G, walltime=172800, name="torque_many",
        exclusive=True, per_cpu=2 * G),
    "sge/ar_reservation.sge": dict(nodes=1, cpus=8, walltime=14400, reservation="4242"),
    "sge/array_t_tc_one_line_trailing_comment.sge": dict(
        memory_mb=2 * G, walltime=1800, array="1-100:10%5"),
    "sge/output_home_job_name_id.sge": dict(walltime=600, name="wc",
                                            stdout="$HOME/logs/%x.o%j"),
    "sge/pe_range_mpi.sge": dict(
        tasks=8, cpus=8, walltime=7200, unknown=["-pe"], notes=["slot range mpi 8-16"]),
    "sge/pe_wildcard_name.sge": dict(tasks=16, cpus=16, walltime=3600),
    "slurm/begin_iso_no_seconds_afterany_two.sbatch": dict(
        tasks=2, cpus=2, walltime=3600, deps=[("afterany", ["1001", "1002"])],
        begin="2026-12-24T08:00"),
    "slurm/bom_crlf_very_long_comment.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="bom_long", comment="k" * 3000),
    "slurm/comment_metachars_quoted_name.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="a b;c", comment="x=$(id) `uname` 'q' \"dq\""),
    "slurm/heredoc_sbatch_lines_in_body.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="driver", ignored=2),
    "slurm/mail_type_time_limit_90_array_tasks.sbatch": dict(
        walltime=2700, array="1-20", mail_events=["end", "time_limit_90", "array_tasks"],
        mail_user="ana@example.org"),
    "slurm/mem_terabytes_exclusive.sbatch": dict(
        nodes=1, memory_mb=2048 * G, walltime=259200, queue="bigmem", exclusive=True),
    "slurm/multi_options_one_line_trailing_comment.sbatch": dict(
        nodes=2, tasks=8, cpus=8, memory_mb=16 * G, walltime=7200, queue="compute",
        node_mem=8 * G),
    "slurm/ntasks_per_gpu.sbatch": dict(
        nodes=1, tasks=8, cpus=8, gpus=4, walltime=3600, needs_gpus=4,
        notes=["--ntasks-per-gpu=2 read as 8 tasks"]),
    "slurm/output_env_braces_literal.sbatch": dict(
        tasks=1, cpus=1, walltime=1200, stdout="${SCRATCH}/logs/%x-%j.out",
        stderr="$HOME/logs/%x-%j.err"),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=(*COMPARED_FIELDS, "shell"), strict=ALL_STRICT,
                at_least=31)


def _flux(text: str):
    return get_script_dialect("flux").parse_script(text)


def _kept(spec) -> list[tuple[str, str | None]]:
    return [(d.option, d.value) for d in spec.unknown]


# ------------------------------------------------ flux: a string over several lines

def test_a_string_over_several_lines_is_one_option_as_flux_batch_reads_it():
    """It was read line by line: `[run]`, `mode`, `=`, `fast` and `` as options of their
    own, each said dropped elsewhere as one."""
    spec = _flux((HERE / "flux/triple_quoted_user_conf.flux").read_text())
    assert _kept(spec) == [("--setattr", 'user.conf=[run]\\n  mode = "fast"\\n')]
    assert spec.name == "tq"  # the directive after the string is read too


def test_the_string_is_said_dropped_once_on_one_line_elsewhere():
    _, warnings = translated(HERE, "flux/triple_quoted_user_conf.flux", "slurm")
    said = [w for w in warnings if w.startswith("dropped:")]
    assert said == ['dropped: # flux: --setattr=user.conf=""" (--setattr user.conf=[run]\\n'
                    '  mode = "fast"\\n: no slurm equivalent)']


@pytest.mark.parametrize("rel", ["flux/triple_quoted_user_conf.flux",
                                 "flux/add_file_multiline_single_quotes.flux",
                                 "flux/bom_crlf_triple_quoted_add_file.flux"])
def test_flux_gets_the_string_back_over_its_lines(rel: str):
    script, warnings = translated(HERE, rel, "flux")
    lines = directive_lines(script, "#flux:")
    source = (HERE / rel).read_text().splitlines()
    opening = next(i for i, x in enumerate(source) if x.endswith(("\"\"\"", "'''")))
    block = [re.sub(r"^# ?flux:", "#flux:", x) for x in source[opening:opening + 4]]
    start = lines.index(block[0])
    assert lines[start:start + 4] == block, lines
    assert _kept(_flux(script)) == _kept(_flux((HERE / rel).read_text()))
    assert not [w for w in warnings if not w.startswith("approximated: CRLF line endings")]


@pytest.mark.parametrize(("lines", "said"), [
    ('#flux: -n 1\n#flux: --setattr=user.x="""\n#flux: a',
     'line 3: `#flux: --setattr=user.x="""` opens a triple-quoted string that is never '
     "closed (the directives end before its closing line): flux batch refuses it"),
    ('#flux: -n 1\n#flux: --setattr=user.x="""\n#flux: a\n# a plain comment\n#flux: """',
     "line 3: `#flux: --setattr=user.x=\"\"\"` opens a triple-quoted string that is never "
     "closed (line 5 is no directive)"),
    ('#flux: -n 1\n#flux: --setattr=user.x="""a\n#flux: """',
     "line 3: `#flux: --setattr=user.x=\"\"\"a` opens a triple-quoted string with text "
     "after it: flux batch refuses it"),
    ("#flux: -n 1\n#flux: --setattr=user.x='''\n#flux: it'''s\n#flux: '''",
     "line 4: `#flux: it'''s` opens a triple-quoted string with text after it: flux batch "
     "refuses it"),
    ('#flux: -n 1\n#flux: --job-name="""\n#flux: two\n#flux: lines"""',
     "line 3: `#flux: --job-name=\"\"\"` opens a string over several lines as the value of "
     "job-name, which the reader takes into the job's settings, where a value is one line"),
])
def test_a_string_flux_batch_refuses_is_refused_at_its_line(lines: str, said: str):
    with pytest.raises(BadInput) as exc:
        parse_lines("flux", lines)
    assert str(exc.value).startswith(said), str(exc.value)


def test_a_string_closed_by_the_other_triple_quote_runs_on():
    """flux batch: a line ending in the other kind of triple quote is a line of the
    string, as written."""
    spec = parse_lines("flux", "#flux: -n 1\n#flux: --setattr=user.x=\"\"\"\n"
                               "#flux: it ends '''\n#flux: \"\"\"")
    assert _kept(spec) == [("--setattr", "user.x=it ends '''\\n")]


def test_a_backslash_in_the_string_is_kept_apart_from_its_line_breaks():
    spec = parse_lines("flux", '#flux: -n 1\n#flux: --setattr=user.x="""\n#flux: a\\nb\n'
                               '#flux: c"""')
    assert _kept(spec) == [("--setattr", "user.x=a\\\\nb\\nc")]
    script, _, _ = translate("#!/bin/bash\n#flux: -n 1\n#flux: --setattr=user.x=\"\"\"\n"
                             "#flux: a\\nb\n#flux: c\"\"\"\n./a\n", "flux", "flux")
    assert directive_lines(script, "#flux:")[-3:] == [
        '#flux: --setattr=user.x="""', "#flux: a\\nb", '#flux: c"""']


# ------------------------------------------------- flux: a triple quote on one line

def test_a_triple_quoted_string_on_one_line_is_one_word_hash_and_quotes_included():
    spec = _flux((HERE / "flux/inline_triple_quotes_hash_inside.flux").read_text())
    assert _kept(spec) == [("--setattr", 'user.note=say "hi" # not a comment')]
    assert spec.name == "it's mine" and spec.resources.walltime_s == 300


def test_a_disabled_directive_after_the_sentinel_asks_for_nothing():
    spec = _flux((HERE / "flux/disabled_directive_hash_after_sentinel.flux").read_text())
    assert spec.resources.nodes is None and spec.unknown == []


@pytest.mark.parametrize("name", ["a'''b'''c", "x'''y", 'q"""r', "m''\"n"])
def test_a_name_with_three_quotes_in_a_row_reaches_flux_as_itself(name: str):
    """`#flux: --job-name="a'''b'''c"`: flux batch reads the pair of ''' as a quoted
    string (the name became `abc`), a lone one as an unclosed triple quote."""
    written = f"'{name}'" if "'" not in name else '"' + name.replace('"', '\\"') + '"'
    text = f"#!/bin/bash\n#SBATCH -n 1\n#SBATCH --job-name={written}\n./a\n"
    assert get_script_dialect("slurm").parse_script(text).name == name
    script, warnings, _ = translate(text, "flux", "slurm")
    line = next(x for x in script.splitlines() if x.startswith("#flux: --job-name="))
    assert not re.search(r"""["']{3}""", line), line
    assert _flux(script).name == name


# ------------------------------------- $HOME, $USER in a path that reaches Grid Engine

@pytest.mark.parametrize(("rel", "said"), [
    ("pbs/output_env_var_path.pbs", [
        "approximated: $USER in -e /scratch/$USER/err.log (qsub writes it literally) is "
        "expanded by Grid Engine to the job owner's user name; the file is named otherwise "
        "(write a name without $ to keep the PBS file's name)",
        "approximated: $HOME in output path '$HOME/logs/out.log' (qsub writes it literally, "
        "under a directory named $HOME) is expanded by Grid Engine to the job owner's home "
        "directory; the output goes there (write the directory's path without $ to keep the "
        "PBS file's place)"]),
    ("lsf/output_home_user_to_sge.lsf", [
        "approximated: $USER in -e /scratch/$USER/%j.err (bsub writes it literally)",
        "approximated: $HOME in output path '$HOME/lsf/%j.out' (bsub writes it literally"]),
    ("flux/output_user_var_mustache.flux", [
        "approximated: $USER in --output /scratch/$USER/%j.out (flux batch writes it "
        "literally) is expanded by Grid Engine to the job owner's user name; the file is "
        "named otherwise (write a name without $ to keep the flux file's name)"]),
])
def test_a_variable_grid_engine_expands_is_said_from_every_scheduler(rel: str,
                                                                     said: list[str]):
    """Only a Slurm path's was said: a PBS job's `-o $HOME/logs/out.log` wrote under a
    directory named `$HOME`, its Grid Engine translation in the home directory, unsaid."""
    script, warnings = translated(HERE, rel, "sge")
    for words in said:
        assert any(w.startswith(words) for w in warnings), (words, warnings)


def test_slurm_still_names_its_line_and_slurms_token():
    _, warnings = translated(HERE, "slurm/output_env_braces_literal.sbatch", "sge")
    assert any(w.startswith("approximated: $HOME in output path '$HOME/logs/%x-%j.err' "
                            "(sbatch writes it literally") for w in warnings), warnings


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "flux"])
def test_a_path_variable_between_the_literal_writers_is_not_said(target: str):
    _, warnings = translated(HERE, "pbs/output_env_var_path.pbs", target)
    about_paths = [w for w in warnings  # (not the cd "$HOME" a PBS job starting there gets)
                   if not w.startswith("kept: the directory the job runs in")]
    assert not any("$USER" in w or "$HOME" in w for w in about_paths), warnings


# ---------------------------------------------------- translations a user would look at

@pytest.mark.parametrize(("rel", "target", "lines"), [
    ("slurm/multi_options_one_line_trailing_comment.sbatch", "pbs",
     ["#PBS -q compute", "#PBS -l select=2:ncpus=4:mpiprocs=4:mem=8gb",
      "#PBS -l walltime=02:00:00"]),
    ("slurm/ntasks_per_gpu.sbatch", "pbs", ["#PBS -l select=1:ncpus=8:mpiprocs=8:ngpus=4"]),
    ("slurm/mem_terabytes_exclusive.sbatch", "pbs",
     ["#PBS -l select=1:mem=2048gb", "#PBS -l place=excl"]),
    ("slurm/begin_iso_no_seconds_afterany_two.sbatch", "lsf", ["#BSUB -b 2026:12:24:08:00"]),
    ("slurm/mail_type_time_limit_90_array_tasks.sbatch", "sge", ["#$ -t 1-20", "#$ -m e"]),
    # ARRAY_TASKS is PBS Pro's -m j (sweep 30)
    ("slurm/mail_type_time_limit_90_array_tasks.sbatch", "pbs", ["#PBS -J 1-20", "#PBS -m ej"]),
    ("pbs/multi_options_one_line.pbs", "slurm",
     ["#SBATCH --job-name=run1", "#SBATCH --partition=long", "#SBATCH --mem=8G",
      "#SBATCH --mail-type=FAIL,END"]),
    ("pbs/torque_l_many_commas.pbs", "slurm",
     ["#SBATCH --ntasks-per-node=12", "#SBATCH --mem-per-cpu=2G", "#SBATCH --exclusive",
      "#SBATCH --time=2-00:00:00"]),
    ("pbs/array_J_with_depend_afterok_and_trailing_comment.pbs", "lsf",
     ["#BSUB -J array[1-50:5]"]),
    ("lsf/R_select_span_rusage_order_together.lsf", "slurm",
     ["#SBATCH --ntasks=16", "#SBATCH --ntasks-per-node=8", "#SBATCH --mem-per-cpu=4000M"]),
    ("lsf/R_select_span_rusage_order_together.lsf", "lsf",
     ['#BSUB -R "span[ptile=8] rusage[mem=4000MB] select[mem>8000 && type==X86_64] '
      'order[-slots]"']),
    ("lsf/array_name_outputs_J_I_env.lsf", "sge",
     ["#$ -t 1-30", "#$ -tc 3", "#$ -o logs/scan.$JOB_ID.$TASK_ID.out"]),
    ("lsf/multi_options_one_line.lsf", "slurm",
     ["#SBATCH --partition=normal", "#SBATCH --ntasks=4", "#SBATCH --time=01:30:00",
      "#SBATCH --output=out.%j", "#SBATCH --open-mode=append"]),
    ("lsf/n_min_max_span_hosts1.lsf", "sge", ["#$ -pe mpi 4-8"]),
    ("sge/pe_range_mpi.sge", "lsf", ["#BSUB -n 8,16"]),
    ("sge/array_t_tc_one_line_trailing_comment.sge", "slurm",
     ["#SBATCH --array=1-100:10%5", "#SBATCH --time=00:30:00"]),
    ("sge/ar_reservation.sge", "sge", ["#$ -ar 4242"]),
    ("flux/setopt_short_o_and_S_setattr.flux", "slurm", ["#SBATCH --account=chem"]),
    ("flux/python_script_hash_sentinel.flux", "lsf",
     ['#BSUB -R "span[ptile=1]"', "#BSUB -oo py.%J.out"]),
])
def test_carried_as_a_user_would_write_it(rel: str, target: str, lines: list[str]):
    script, _ = translated(HERE, rel, target)
    for line in lines:
        assert line in script.splitlines(), (line, script)


@pytest.mark.parametrize(("rel", "target", "said"), [
    ("lsf/R_select_span_rusage_order_together.lsf", "slurm",
     ['dropped: #BSUB -R "select[mem>8000 && type==X86_64] order[-slots] span[ptile=8] '
      'rusage[mem=4000]" (-R select select[mem>8000 && type==X86_64]']),
    ("lsf/n_min_max_span_hosts1.lsf", "slurm", ["dropped: #BSUB -n 4,8"]),
    ("sge/pe_range_mpi.sge", "flux", ["dropped: #$ -pe mpi 8-16"]),
    ("sge/ar_reservation.sge", "pbs", ["dropped: reservation 4242"]),
    ("slurm/mail_type_time_limit_90_array_tasks.sbatch", "pbs",
     ["dropped: mail event time_limit_90"]),
    ("slurm/ntasks_per_gpu.sbatch", "lsf", ["dropped: GPU binding single:2"]),
    ("slurm/heredoc_sbatch_lines_in_body.sbatch", "flux",
     ["line 7: ignored `#SBATCH --ntasks=64` (after the first command",
      "line 8: ignored `#SBATCH --time=2-00:00:00`"]),
    ("flux/setopt_short_o_and_S_setattr.flux", "pbs",
     ["dropped: #flux: -o mpi=spectrum (--setopt mpi=spectrum"]),
    ("flux/add_file_multiline_single_quotes.flux", "sge",
     ["dropped: #flux: --add-file=hosts.cfg=''' (--add-file hosts.cfg=# one host a line\\n"
      "node[1-2]\\n: no sge equivalent)"]),
])
def test_not_carried_is_said_by_its_line(rel: str, target: str, said: list[str]):
    _, warnings = translated(HERE, rel, target)
    for words in said:
        assert any(w.startswith(words) for w in warnings), (words, warnings)


def test_heredoc_child_script_stays_as_written_in_every_translation():
    """The child job's #SBATCH lines are the body's (sbatch ignores them after the first
    command): kept verbatim, never translated into the parent's directives."""
    for target in ("pbs", "lsf", "flux", "sge"):
        script, _ = translated(HERE, "slurm/heredoc_sbatch_lines_in_body.sbatch", target)
        lines = script.splitlines()
        start = lines.index("cat > child.sh <<'CHILD'")
        assert lines[start + 1:start + 6] == [
            "#!/bin/bash", "#SBATCH --ntasks=64", "#SBATCH --time=2-00:00:00", "srun ./big",
            "CHILD"], lines
        back = get_script_dialect(target).parse_script(script)
        assert back.resources.walltime_s == 600


@pytest.mark.parametrize("target", ["slurm", "lsf"])
def test_shell_text_in_a_comment_stays_in_its_directive(target: str):
    """`$(id)`, a backquote, both quotes: one quoted directive value, read back whole."""
    script, _ = translated(HERE, "slurm/comment_metachars_quoted_name.sbatch", target)
    back = get_script_dialect(target).parse_script(script)
    assert back.comment == "x=$(id) `uname` 'q' \"dq\"" and back.name == "a b;c"
    body = [x for x in script.splitlines()[1:] if not x.startswith("#")]
    assert body == ["./a"], body


def test_a_3000_character_comment_with_bom_and_crlf_reaches_lsf_whole():
    script, warnings = translated(HERE, "slurm/bom_crlf_very_long_comment.sbatch", "lsf")
    assert "#BSUB -Jd " + "k" * 3000 in script.splitlines()
    assert "\r" not in script and not script.startswith("\ufeff")
    assert any(w.startswith("approximated: CRLF line endings converted to LF")
               for w in warnings)


def test_a_heredoc_launcher_is_said_kept_not_rewritten():
    """`srun ./big` in the child script a heredoc writes was rewritten `flux run ./big`,
    under the child's #SBATCH lines, which `sbatch child.sh` then submits."""
    _, warnings = translated(HERE, "slurm/heredoc_sbatch_lines_in_body.sbatch", "flux")
    assert "kept: line 9: a launcher inside a here-document (the text of a file or of a " \
           "command's input, not a command of this job) is left as written" in warnings


@pytest.mark.parametrize(("word", "line"), [
    ("EOF", "echo $PBS_JOBID"), ('"EOF"', "echo $SLURM_JOB_ID"),
    ("'EOF'", "echo $SLURM_JOB_ID"), ("\\EOF", "echo $SLURM_JOB_ID")])
def test_only_an_unquoted_heredocs_variables_are_the_jobs(word: str, line: str):
    """The shell fills in an unquoted here-document's variables as the job writes it (this
    job's id: translated); a quoted one's are text for later (left as written)."""
    text = (f"#!/bin/bash\n#SBATCH -n 1\ncat > note.txt <<{word}\necho $SLURM_JOB_ID\n"
            "EOF\n./a\n")
    script, _, _ = translate(text, "pbs", "slurm")
    lines = script.splitlines()
    assert lines[lines.index(f"cat > note.txt <<{word}") + 1] == line


@pytest.mark.parametrize("word", ["EOF", "'EOF'"])
def test_a_launcher_in_any_heredoc_reaches_flux_unchanged(word: str):
    text = f"#!/bin/bash\n#SBATCH -n 2\ncat > c.sh <<{word}\nsrun -n 2 ./x\nEOF\nsrun ./a\n"
    script, warnings, _ = translate(text, "flux", "slurm")
    assert script.splitlines()[-4:] == [f"cat > c.sh <<{word}", "srun -n 2 ./x", "EOF",
                                        "flux run ./a"], script
    assert any(w.startswith("kept: line 4: a launcher inside a here-document") for w in warnings)


# ------------------------------------------- flux: directives under another prefix

@pytest.mark.parametrize(("text", "said"), [
    ("#!/usr/bin/env lua\n-- flux: -N 2\n-- flux: -n 8\nprint(1)\n",
     "line 2: `-- flux: -N 2` is a flux directive under the prefix `--` (flux batch reads "
     "`flux:` after any non-letters); this reader takes `#` ones only (`#flux:`, `# flux:`), "
     "so the job's request would be lost"),
    ('#!/usr/bin/env python3\n"""\nflux: -N2\nflux: -n2\n"""\nprint(1)\n',
     "line 3: `flux: -N2` is a flux directive with no prefix"),
])
def test_a_directive_under_a_prefix_this_reader_lacks_is_refused_not_lost(text: str,
                                                                          said: str):
    """A Lua script's `-- flux:` lines (a Python docstring's bare `flux:` ones) were passed
    over: translated, the job asked for nothing, unsaid."""
    for target in ("slurm", "flux"):
        with pytest.raises(BadInput) as exc:
            translate(text, target, "flux")
        assert str(exc.value).startswith(said), str(exc.value)


@pytest.mark.parametrize(("text", "line"), [
    ("#!/bin/bash\n#flux: -N 2\n##flux: -N 8\n./a\n", "line 3: `##flux: -N 8`"),
    ("#!/bin/bash\n#flux: -n 2\ncat > c.yaml <<EOF\n  flux: 3\nEOF\n./a\n",
     "line 4: `flux: 3`"),
])
def test_a_second_sentinel_flux_batch_refuses_is_refused_at_its_line(text: str, line: str):
    """`##flux: -N 8` (a Slurm user's way to disable a line) is a directive to flux batch,
    under a sentinel other than `#flux:`, and it refuses the script; it was passed over."""
    with pytest.raises(BadInput) as exc:
        get_script_dialect("flux").parse_script(text)
    assert str(exc.value).startswith(
        f"{line} reads to flux batch as a directive under another sentinel than line 2's "
        "`#flux:`: flux batch refuses the script"), str(exc.value)
    assert "(`#flux: # -N 8`)" in str(exc.value)


def test_a_kept_flux_value_rebuilt_off_its_line_keeps_its_quotes_apart():
    """`-n 1` read, `--setattr` kept: the kept one is written on a line of its own, where
    `"user.x=it'''s"` read to flux batch as an unclosed triple quote."""
    text = '#!/bin/bash\n#flux: -n 1 --setattr=user.x="""it\'\'\'s"""\n./a\n'
    assert _kept(_flux(text)) == [("--setattr", "user.x=it'''s")]
    script, _, _ = translate(text, "flux", "flux")
    line = next(x for x in script.splitlines() if "--setattr" in x)
    assert not re.search(r"""["']{3}""", line), line
    assert _kept(_flux(script)) == [("--setattr", "user.x=it'''s")]


@pytest.mark.parametrize(("target", "line"), [("slurm", "#SBATCH --reservation=4242"),
                                              ("lsf", "#BSUB -U 4242")])
def test_a_grid_engine_reservation_number_elsewhere_is_said_to_be_a_name_there(target: str,
                                                                              line: str):
    """`-ar 4242` is the number Grid Engine gave a reservation; it reached Slurm as the
    reservation named 4242, unsaid (a Slurm name never reaches Grid Engine's -ar: said)."""
    script, warnings = translated(HERE, "sge/ar_reservation.sge", target)
    assert line in script.splitlines()
    assert "approximated: reservation 4242 (Grid Engine's -ar: the number its site gave an " \
           f"advance reservation) written as the {target} reservation named 4242; give the " \
           f"name of the {target} site's reservation" in warnings, warnings
