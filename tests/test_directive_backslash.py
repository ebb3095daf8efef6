"""A directive line ending in a backslash, read as each scheduler's submit command reads
it: sbatch and bsub read each directive line alone (the backslash escapes nothing), PBS's
qsub joins the line with the next one, Grid Engine's qsub and flux batch refuse it.
Where the result is not what a continuation means, a note names the line; the translator
never writes the backslash into a directive."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput


def parse(dialect: str, text: str):
    return get_script_dialect(dialect).parse_script(text)


def notes(spec) -> list[str]:
    return spec.metadata.get("parse_notes", [])


# -- Slurm: sbatch reads each #SBATCH line alone -------------------------------------------

def test_slurm_backslash_before_another_directive_changes_nothing() -> None:
    spec = parse("slurm", "#!/bin/bash\n#SBATCH --nodes=2 \\\n#SBATCH --time=01:00:00\n"
                 "srun hostname\n")
    assert spec.resources.nodes == 2 and spec.resources.walltime_s == 3600
    assert spec.unknown == [] and not notes(spec)


def test_slurm_backslash_glued_to_the_value_is_dropped() -> None:
    spec = parse("slurm", "#!/bin/bash\n#SBATCH --ntasks=8\\\n#SBATCH -t 30\nsrun a.out\n")
    assert spec.resources.tasks == 8 and spec.resources.walltime_s == 1800


def test_slurm_continuation_onto_a_comment_is_said_and_not_read() -> None:
    text = ("#!/bin/bash\n#SBATCH --nodes=2 \\\n#         --time=01:00:00\n"
            "srun hostname\n")
    spec = parse("slurm", text)
    assert spec.resources.nodes == 2 and spec.resources.walltime_s is None
    said = [n for n in notes(spec) if n.startswith("line 2:")]
    assert len(said) == 1 and "line 3 (`#         --time=01:00:00`)" in said[0]
    assert "sbatch reads each #SBATCH line alone" in said[0]


def test_slurm_escaped_backslash_at_the_end_is_a_character() -> None:
    spec = parse("slurm", "#!/bin/bash\n#SBATCH --job-name=a\\\\\nsrun x\n")
    assert spec.name == "a\\" and not notes(spec)


# -- PBS: qsub joins the next line ----------------------------------------------------------

def test_pbs_joins_the_next_line_into_one_directive() -> None:
    text = ("#!/bin/bash\n#PBS -l select=2:ncpus=8 \\\n    -l walltime=01:00:00\n"
            "#PBS -N joined\ncd $PBS_O_WORKDIR\n")
    spec = parse("pbs", text)
    assert spec.resources.nodes == 2 and spec.resources.cpus_per_task == 8
    assert spec.resources.walltime_s == 3600 and spec.name == "joined"
    assert any(n.startswith("line 2 goes on on line 3") for n in notes(spec))
    assert "walltime" not in (spec.script or "")  # the joined line is no command


def test_pbs_join_inside_a_word() -> None:
    spec = parse("pbs", "#!/bin/bash\n#PBS -l select=2:\\\nncpus=4\nhostname\n")
    assert spec.resources.nodes == 2 and spec.resources.cpus_per_task == 4


def test_pbs_join_of_another_pbs_line_is_refused_naming_both_lines() -> None:
    with pytest.raises(BadInput) as e:
        parse("pbs", "#!/bin/bash\n#PBS -l select=2:ncpus=8 \\\n#PBS -l walltime=01:00:00\n"
                     "hostname\n")
    msg = str(e.value)
    assert msg.startswith("line 2:") and "joins line 3" in msg and "`#PBS`" in msg


def test_pbs_join_of_a_command_line_is_refused_naming_both_lines() -> None:
    # qsub joins `echo hi` into the directive: `-N x echo hi` leaves words after its
    # options, which qsub's option reading refuses ("qsub: directive error"). Before, the
    # words were kept as unknown directives and the command was lost from the script
    with pytest.raises(BadInput) as e:
        parse("pbs", "#!/bin/bash\n#PBS -N x \\\necho hi\n#PBS -l walltime=01:00:00\n"
                     "hostname\n")
    msg = str(e.value)
    assert msg.startswith("line 2: `#PBS -N x \\` ends in a backslash: qsub joins line 3 "
                          "(`echo hi`) to it")
    assert "`echo hi` is no option" in msg and "directive error" in msg


def test_pbs_join_of_a_lone_word_is_the_option_value_qsub_reads() -> None:
    # `#PBS -N \` then `run1`: qsub reads `-N run1`; so does the parser (said)
    spec = parse("pbs", "#!/bin/bash\n#PBS -N \\\nrun1\nhostname\n")
    assert spec.name == "run1" and spec.unknown == []
    assert any(n.startswith("line 2 goes on on line 3 (`run1`)") for n in notes(spec))


def test_pbs_backslash_on_the_last_line_is_refused() -> None:
    with pytest.raises(BadInput, match="last line.*unexpected end-of-file"):
        parse("pbs", "#!/bin/bash\n#PBS -N x \\")


def test_pbs_line_numbers_after_a_join_stay() -> None:
    text = "#!/bin/bash\n#PBS -l select=1:ncpus=2 \\\n  -l walltime=00:10:00\n#PBS -m q\nx\n"
    with pytest.raises(BadInput, match="line 4"):
        parse("pbs", text)


# -- LSF: each line alone; Grid Engine: refused ------------------------------------------

def test_lsf_each_line_alone() -> None:
    spec = parse("lsf", "#!/bin/bash\n#BSUB -n 4 \\\n#BSUB -W 60\nmpirun ./a\n")
    assert spec.resources.tasks == 4 and spec.resources.walltime_s == 3600
    assert spec.unknown == [] and not notes(spec)


def test_lsf_continuation_onto_a_command_is_said() -> None:
    spec = parse("lsf", "#!/bin/bash\n#BSUB -n 4 \\\n-W 60\n")
    assert spec.resources.walltime_s is None
    assert any(n.startswith("line 2:") and "line 3 (`-W 60`)" in n
               and "bsub reads each #BSUB line alone" in n for n in notes(spec))


def test_sge_refuses_a_trailing_backslash() -> None:
    # parse_script_file reads each #$ line alone, split at blanks: a lone `\` is a word
    # that is no option (qsub: Unknown option), a glued one part of the value
    with pytest.raises(BadInput) as e:
        parse("sge", "#!/bin/bash\n#$ -pe smp 4 \\\n#$ -l h_rt=1:00:00\nhostname\n")
    assert str(e.value).startswith("line 2: `#$ -pe smp 4 \\` ends in a backslash: qsub "
                                   "reads each #$ line alone")
    with pytest.raises(BadInput, match="^line 2: "):
        parse("sge", "#!/bin/bash\n#$ -l h_rt=1:00:00\\\nhostname\n")


def test_sge_directive_in_the_body_too() -> None:
    with pytest.raises(BadInput, match="^line 4: "):
        parse("sge", "#!/bin/bash\n#$ -N a\necho hi\n#$ -l h_vmem=2G \\\necho bye\n")


# -- Flux: flux batch refuses -------------------------------------------------------------------

def test_flux_refuses_a_trailing_backslash() -> None:
    with pytest.raises(BadInput) as e:
        parse("flux", "#!/bin/bash\n# flux: -N 2 \\\n# flux: -t 60m\nflux run hostname\n")
    assert str(e.value).startswith("line 2: `# flux: -N 2 \\` ends in a backslash: flux batch "
                                   "refuses it")


def test_flux_escaped_backslash_is_no_continuation() -> None:
    spec = parse("flux", "#!/bin/bash\n# flux: --job-name=a\\\\\nflux run x\n")
    assert spec.name == "a\\"


# -- the translator writes no backslash into a directive ---------------------------------------

@pytest.mark.parametrize("source,text", [
    ("slurm", "#!/bin/bash\n#SBATCH --nodes=2 \\\n#SBATCH --time=01:00:00\nsrun hostname\n"),
    ("lsf", "#!/bin/bash\n#BSUB -n 4 \\\n#BSUB -W 60\nmpirun ./a\n"),
    ("pbs", "#!/bin/bash\n#PBS -l select=2:ncpus=1 \\\n  -l walltime=01:00:00\nmpirun ./a\n"),
])
@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "sge", "flux"])
def test_translation_has_no_backslash_directive(source: str, text: str, target: str) -> None:
    if source == target:
        return
    script, warnings, spec = translate(text, target, source)
    sentinel = get_script_dialect(target).sentinel
    directives = [ln for ln in script.splitlines() if ln.lstrip().startswith(sentinel)
                  or (target == "flux" and ln.startswith("# flux:"))]
    assert directives and not any(ln.rstrip().endswith("\\") for ln in directives)
    assert spec.resources.walltime_s == 3600  # the second line's option survived
    assert not any("'\\\\'" in w or "`\\`" in w for w in warnings)
