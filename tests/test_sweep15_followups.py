"""Follow-ups of the fifteenth sweep: what it found and left (README, "Left by the
fifteenth sweep"), each worked by hand."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.slurm_script import SlurmScript
from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.model import BadInput

# --mem is carried into the components after it (sbatch's option table resets
# --mem-per-cpu and --mem-per-gpu in each component, not --mem); --mem-per-cpu is not
_HETJOB_MEM = """#!/bin/bash
#SBATCH -N 1 -n 4 --mem=64G -t 10
#SBATCH hetjob
#SBATCH -N 2 -n 8
#SBATCH hetjob
#SBATCH -N 1 -n 2 --mem-per-cpu=1G
#SBATCH hetjob
#SBATCH -N 1 -n 1
srun ./a
"""


def test_hetjob_mem_is_carried_into_later_components_as_sbatch_does():
    """Placement read a later component without memory of its own as the --mem before it
    (as sbatch does), the parser as no memory: another scheduler's translation asked none
    for it. Both now give it the --mem before it; one with --mem-per-cpu keeps its own,
    and the one after that takes the last --mem again (--mem-per-cpu is not carried)."""
    spec = SlurmScript().parse_script(_HETJOB_MEM)
    got = [(c.memory_mb, c.memory_per_cpu_mb) for c in spec.components]
    assert got == [(65536, None), (65536, None), (None, 1024), (65536, None)], got
    script, _, _ = translate(_HETJOB_MEM, "pbs", "slurm")
    assert ("select=1:ncpus=4:mpiprocs=4:mem=64gb+2:ncpus=4:mpiprocs=4:mem=64gb"
            "+1:ncpus=2:mpiprocs=2:mem=2gb+1:ncpus=1:mpiprocs=1:mem=64gb") in script, script


def test_hetjob_mem_per_cpu_first_is_not_carried():
    """--mem-per-cpu is reset in each component: a later one asks no memory."""
    spec = SlurmScript().parse_script(_HETJOB_MEM.replace("--mem=64G", "--mem-per-cpu=2G"))
    assert [c.memory_mb for c in spec.components] == [None, None, None, None]


def test_chunks_reach_slurm_without_a_carried_mem():
    """PBS chunks of which a later one asks no memory: written as `--mem` for the first,
    sbatch would carry it into the next component (64 GB more on each of 4 nodes). The
    first's memory goes as the same memory per CPU (not carried) where its CPUs divide it;
    where they do not, the translation is refused (it would ask more), not silently wrong."""
    text = ("#!/bin/bash\n#PBS -l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32\n"
            "#PBS -l walltime=1:00:00\n./a\n")
    script, _, _ = translate(text, "slurm", "pbs")
    first, later = script.split("#SBATCH hetjob\n")
    assert "#SBATCH --mem-per-cpu=8G\n" in first and "--mem" not in later, script
    back = SlurmScript().parse_script(script)
    assert [c.memory_mb for c in back.components] == [None, None]
    assert back.components[0].memory_per_cpu_mb == 8192
    with pytest.raises(BadInput, match="cannot express the pbs request for 65536 MB"):
        translate(text.replace("ncpus=8:mem", "ncpus=6:mem"), "slurm", "pbs")


@pytest.mark.parametrize("dialect, line, said", [
    ("slurm", "#SBATCH --test-only", "sbatch --test-only only says when and where the job "
     "would start and submits no job: refused at submit, since the engine would find no "
     "job to follow; remove it to submit the job"),
    ("flux", "#flux: --dry-run", "flux batch --dry-run prints the jobspec and submits no "
     "job: refused at submit"),
    ("pbs", "#PBS -I", "qsub -I runs an interactive job"),
])
def test_an_option_refused_at_submit_is_said_when_kept(dialect, line, said):
    """Translated into its own scheduler, `--test-only` (flux `--dry-run`, qsub `-I`) was
    written back unsaid, where every other kept option is said: the user learnt only at
    submit that the engine refuses it. Now the translation says it kept it and why."""
    text = f"#!/bin/bash\n{line}\nhostname\n"
    script, warnings, _ = translate(text, dialect, dialect)
    assert line in script
    assert any(w.startswith(f"kept: {line} ({said}") for w in warnings), warnings
