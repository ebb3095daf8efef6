"""A site whose sites-file entry says `flavor: torque` got every job not written in Torque's
own words as PBS Pro (`select=2:ncpus=8:mpiprocs=8`, `-J 1-4`, `place=scatter`), which a
Torque server does not read: the renderer followed the script's flavor only. A workflow
step after an array step on such a site waited with `afterok:123[].srv`, which names no job
on Torque (its array kinds, `afterokarray`, wait on a whole array: Torque 2.5's array
changes). The site's flavor now decides."""

from __future__ import annotations

import pytest

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Dependency
from diamond_jupyter.sites import Site

SLURM_ARRAY = """#!/bin/bash
#SBATCH -N 2
#SBATCH --ntasks-per-node=8
#SBATCH -t 1:00:00
#SBATCH --array=1-4
srun ./a
"""


def _directives(flavor: str | None, deps: list[Dependency] | None = None,
                text: str = SLURM_ARRAY) -> list[str]:
    spec = Federation.parse(text)
    if deps:
        spec = spec.model_copy(update={"dependencies": deps})
    site = Site(SiteConfig(name="t", scheduler="pbs", flavor=flavor,
                           transport=TransportConfig(kind="local")))
    return [ln for ln in site.render(spec).script.splitlines() if ln.startswith("#PBS")]


def test_a_slurm_job_reaches_a_torque_site_in_torques_words():
    got = _directives("torque")
    assert "#PBS -l nodes=2:ppn=8" in got and "#PBS -t 1-4" in got
    assert not any("select=" in ln or "-J" in ln or "place=" in ln for ln in got)


@pytest.mark.parametrize("flavor", ["pro", None])
def test_a_pbs_pro_site_still_gets_chunks(flavor):
    got = _directives(flavor)
    assert "#PBS -l select=2:ncpus=8:mpiprocs=8" in got and "#PBS -J 1-4" in got


@pytest.mark.parametrize("kind,torque_kind", [("afterok", "afterokarray"),
                                              ("afterany", "afteranyarray"),
                                              ("afternotok", "afternotokarray"),
                                              ("after", "afterstartarray")])
def test_waiting_on_an_array_uses_torques_array_kinds(kind, torque_kind):
    deps = [Dependency(kind=kind, job_ids=["123[].srv", "124.srv"])]
    assert f"#PBS -W depend={torque_kind}:123[].srv,{kind}:124.srv" in _directives(
        "torque", deps)
    # PBS Pro waits on the array by its id
    assert f"#PBS -W depend={kind}:123[].srv:124.srv" in _directives("pro", deps)


def test_a_torque_script_keeps_its_words_on_a_torque_site():
    text = "#!/bin/bash\n#PBS -l nodes=1:ppn=4\n#PBS -l walltime=00:10:00\n./a\n"
    assert "#PBS -l nodes=1:ppn=4" in _directives("torque", text=text)


def test_a_pbs_pro_script_reaches_a_torque_site_without_pbs_pros_place():
    """`place=scatter:excl` is PBS Pro's; Torque has no `place` resource (its qsub refuses
    an unknown one): dropped, said, the exclusivity as Torque's `-n`."""
    text = ("#!/bin/bash\n#PBS -l select=2:ncpus=16:mpiprocs=16:mem=64gb\n"
            "#PBS -l walltime=02:00:00\n#PBS -J 1-10\n#PBS -l place=scatter:excl\n./a\n")
    spec = Federation.parse(text)
    site = Site(SiteConfig(name="t", scheduler="pbs", flavor="torque",
                           transport=TransportConfig(kind="local")))
    rendered = site.render(spec)
    got = [ln for ln in rendered.script.splitlines() if ln.startswith("#PBS")]
    assert got == ["#PBS -l nodes=2:ppn=16", "#PBS -l mem=128gb",
                   "#PBS -l walltime=02:00:00", "#PBS -n", "#PBS -t 1-10"]
    assert rendered.warnings == ["dropped: place=scatter (Torque has no place; nodes=N asks "
                                 "N hosts, and -n asks the nodes whole)"]


@pytest.mark.parametrize("script,want,warned", [
    # one task of 8 CPUs on one node: its CPUs were lost (nodes=1:gpus=2, then nothing)
    ("#SBATCH -N 1\n#SBATCH -c 8\n#SBATCH --gres=gpu:a100:2\n", "#PBS -l nodes=1:ppn=8:gpus=2",
     "dropped: GPU type a100 (Torque's gpus= takes a count only"),
    ("#SBATCH -c 8\n", "#PBS -l nodes=1:ppn=8", None),
    ("#SBATCH -N 2\n#SBATCH -c 4\n", "#PBS -l nodes=2:ppn=4", None),
    # Torque's procs= counts processors: 10 tasks of 2 CPUs
    ("#SBATCH -n 10\n#SBATCH -c 2\n", "#PBS -l procs=20", None),
])
def test_cpus_per_task_reach_a_torque_site(script, want, warned):
    text = "#!/bin/bash\n" + script + "#SBATCH -t 30\n./a\n"
    site = Site(SiteConfig(name="t", scheduler="pbs", flavor="torque",
                           transport=TransportConfig(kind="local")))
    rendered = site.render(Federation.parse(text))
    assert want in rendered.script.splitlines()
    assert [w for w in rendered.warnings if w.startswith("dropped")] == (
        [] if warned is None else [w for w in rendered.warnings if warned in w])
    if warned:
        assert any(warned in w for w in rendered.warnings)
