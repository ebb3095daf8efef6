"""Two script leftovers (pure dialects, no I/O).

PBS Pro's qsub refuses a job-wide host resource beside a select (`"-lresource=" cannot be
used with "select" or "place"`): `-l select=1:ncpus=8` then `-l ncpus=4` was read as 4 CPUs
without a word. Now refused, naming both lines, whichever comes first.

LSF: a job name starting with '-' was written `#BSUB -J -x`, which bsub can read as an
option of its own. Now refused, naming the name and one that would be accepted; the other
dialects write such a name unambiguously (`--job-name=-x`) or as one their scheduler
takes, said (`j-x`)."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect
from diamond_jupyter.model import BadInput, JobSpec

pbs = get_script_dialect("pbs")


def _pbs(*lines: str) -> JobSpec:
    return pbs.parse_script("#!/bin/bash\n" + "\n".join(lines) + "\nhostname\n")


@pytest.mark.parametrize(("lines", "said"), [
    (("#PBS -l select=1:ncpus=8", "#PBS -l ncpus=4"),
     "line 3: a job-wide -l ncpus (`#PBS -l ncpus=4`) beside the select of line 2 "
     "(`#PBS -l select=1:ncpus=8`): PBS Pro's qsub refuses a job-wide ncpus with a select; "
     "ask it in the select's chunks (select=N:ncpus=X) or drop the -l ncpus line"),
    (("#PBS -l ncpus=4", "#PBS -N run", "#PBS -l select=2:ncpus=8"),
     "line 2: a job-wide -l ncpus (`#PBS -l ncpus=4`) beside the select of line 4 "
     "(`#PBS -l select=2:ncpus=8`)"),
    (("#PBS -l select=1:ncpus=8:ngpus=1", "#PBS -l ngpus=2"),
     "line 3: a job-wide -l ngpus (`#PBS -l ngpus=2`) beside the select of line 2"),
])
def test_a_job_wide_ncpus_beside_a_select_is_refused_naming_both_lines(lines, said):
    with pytest.raises(BadInput) as e:
        _pbs(*lines)
    assert said in str(e.value)


def test_a_select_or_a_job_wide_ncpus_alone_reads_as_before():
    chunks = _pbs("#PBS -l select=1:ncpus=8", "#PBS -l walltime=1:00:00").resources
    assert (chunks.nodes, chunks.cpus_per_task) == (1, 8)
    jobwide = _pbs("#PBS -l ncpus=4", "#PBS -l mem=8gb")
    assert jobwide.resources.cpus_per_task == 4
    assert "pbs_select_or_jobwide" not in jobwide.metadata  # nothing left behind
    # a later select replaces an earlier one (qsub keeps the last): still no job-wide one
    assert _pbs("#PBS -l select=1:ncpus=8", "#PBS -l select=2:ncpus=4").resources.nodes == 2


def test_an_lsf_job_name_starting_with_a_dash_is_refused():
    with pytest.raises(BadInput) as e:
        get_script_dialect("lsf").render_script(JobSpec(name="-x"))
    assert str(e.value) == ("lsf cannot express the job name '-x': bsub can read a name "
                            "starting with '-' as an option rather than the name of `-J`; "
                            "give one that starts with a letter, a digit or '_' (e.g. "
                            "'j-x')")
    lsf_script = "#!/bin/bash\n#BSUB -J -x\n#BSUB -n 2\nhostname\n"
    # since sweep 26 refused as the script is read, naming its line
    with pytest.raises(BadInput, match="line 2: `#BSUB -J -x`: the value '-x' of -J"):
        get_script_dialect("lsf").parse_script(lsf_script)
    kept = get_script_dialect("lsf").render_script(JobSpec(name="x-1")).script
    assert "#BSUB -J x-1" in kept.splitlines()


@pytest.mark.parametrize(("dialect", "line", "warned"), [
    ("slurm", "#SBATCH --job-name=-x", False),
    ("flux", "#flux: --job-name=-x", False),
    ("pbs", "#PBS -N j-x", True),
    ("sge", "#$ -N j-x", True),
])
def test_the_other_dialects_write_a_dash_name_as_their_scheduler_takes_it(dialect, line,
                                                                           warned):
    out = get_script_dialect(dialect).render_script(JobSpec(name="-x"))
    assert line in out.script.splitlines()
    assert any("job name '-x' as 'j-x'" in w for w in out.warnings) == warned
