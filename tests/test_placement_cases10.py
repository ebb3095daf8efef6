"""Placement cases worked by hand, tenth sweep: a job of several shapes at a site that runs
one shape only (flux, Grid Engine, a slurmrestd door, LSF without a compound form) is
placed as the one shape it is sent, refused where that shape gets less than the job asks;
the parts held together leave the queued jobs ahead the room each scheduler's own policy
keeps for them; then more sites of every scheduler. Each case asserts the verdict per
site, the partition chosen, the start and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta

from test_placement_cases import NOW, hera, only, reasons, run
from test_placement_cases7 import flux4
from test_placement_cases8 import grebe

from diamond_jupyter.config import SiteConfig

H = 3600


def has_note(v, text: str) -> bool:
    return any(text in n for n in v.notes)


def hours(h: float):
    return NOW + timedelta(hours=h)


# --------------------------------------------------------------- several shapes, one sent

def test_flux_refuses_chunks_whose_one_shape_loses_their_gpus():
    # 1 chunk of 4 CPUs + 2 chunks of 8 CPUs and a GPU. flux's jobspec v1 has one slot
    # shape: 3 nodes, 3 tasks, 20 CPUs / 3 = 6 each (18), 2 GPUs / 3 nodes = 0. Before,
    # the largest shape (8 CPUs and a GPU) on every node was placed: READY on f0-f2
    script = "#PBS -l select=1:ncpus=4+2:ncpus=8:ngpus=1\n#PBS -l walltime=1:00:00"
    why = reasons(run(script, flux4()), "flux")
    assert why.startswith("a job of 2 shapes (1 node, 1 task, 4 CPUs + 2 nodes, 2 tasks, "
                          "16 CPUs, 2 GPUs): flux runs a job of one shape (jobspec version "
                          "1, RFC 25")
    assert why.endswith("as one shape of 3 nodes and 3 tasks, spread evenly and rounded "
                        "down, it gets less than it asks (CPUs 20 -> 18, GPUs 2 -> 0)")
    # Grid Engine the same: its PE's slots all ask the same
    assert "Grid Engine runs a job of one shape" in reasons(run(script, grebe({})), "grebe")


def test_grid_engine_places_the_one_shape_it_is_sent():
    # 1x(4 CPUs, 40 GB) + 1x(4 CPUs): one shape of 2 nodes, 2 tasks of 4 CPUs, 40 GB
    # over 8 CPUs (5 GB each: 20 GB a host). The largest shape on both hosts asked 40 GB
    # of each; s2's 16 slots are busy: as one shape it still needs both hosts, so it
    # waits for s2 (the note says what it runs as)
    script = "#PBS -l select=1:ncpus=4:mem=40gb+1:ncpus=4\n#PBS -l walltime=1:00:00"
    v = only(run(script, grebe({})), "grebe", "all.q")
    assert v.verdict == "READY"
    assert v.notes[0] == (
        "a job of 2 shapes (1 node, 1 task, 4 CPUs, 40960MB of memory + 1 node, 1 task, 4 "
        "CPUs) runs here as one shape of 2 nodes and 2 tasks: Grid Engine runs a job of one "
        "shape (every slot of a parallel environment asks the job's same -l resources; only "
        "the master task's queue can be chosen, -masterq)")


def test_a_slurmrestd_door_is_sent_one_shape_not_a_hetjob():
    # hera over slurmrestd: the REST dialect submits one job description. gpu: 1 node of
    # 4 A100 and 8 CPUs + 1 node of 8 CPUs, both in gpu: one shape of 2 nodes, 2 tasks of
    # 8 CPUs, 4 GPUs / 2 = 2 a node (4 in all: nothing lost), said; before, it was placed
    # as a hetjob, which the door never submits
    cfg, snap = hera()
    rest = SiteConfig(name="hera", scheduler="slurm", workdir="/scratch/u/.diamond",
                      transport={"kind": "slurmrestd", "url": "http://rest:6820",
                                 "token_file": "/t"})
    script = ("#SBATCH -p gpu -N 1 -c 8 --gres=gpu:a100:4 -t 1:00:00\n#SBATCH hetjob\n"
              "#SBATCH -p gpu -N 1 -c 8")
    v = run(script, (cfg, snap)).verdict("hera")
    assert v.feasible and has_note(v, "hetjob component 1")  # over ssh: a hetjob
    v = only(run(script, (rest, snap)), "hera", "gpu")
    assert v.notes[0].startswith("a job of 2 shapes (1 node, 8 CPUs, 4 GPUs + 1 node, 8 "
                                 "CPUs) runs here as one shape of 2 nodes and 2 tasks:"
                                 " this slurmrestd door submits one job description")
    assert not has_note(v, "hetjob component")
    # the first component's one CPU: 9 CPUs over 2 tasks round down to 8: refused
    one_cpu = script.replace("-N 1 -c 8 --gres", "-N 1 --gres")
    assert reasons(run(one_cpu, (rest, snap)), "hera").endswith(
        "it gets less than it asks (CPUs 9 -> 8)")
    # a later component kept as written (no partition: the default one): the door drops
    # it, so the job cannot run whole there
    kept = "#SBATCH -p gpu -N 1 --gres=gpu:a100:4 -t 1:00:00\n#SBATCH hetjob\n#SBATCH -N 1 -c 8"
    assert run(kept, (cfg, snap)).verdict("hera").feasible
    assert reasons(run(kept, (rest, snap)), "hera").startswith(
        "a Slurm heterogeneous job of 2 components (#SBATCH hetjob): slurmrestd has no form "
        "for its later components")
