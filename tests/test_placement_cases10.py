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


# --------------------------------------------------------------- held together, by policy

def _cpu_site(*jobs, alloc):
    return hera(jobs=list(jobs), alloc=alloc)


def test_pbs_chunks_keep_only_the_blocked_heads_room_slurm_every_jobs():
    # hera's cpu nodes: c01 (32 CPUs) busy until +1 h, c03 (128) until +2 h, c04 (128)
    # until +4 h, c02 (32) free. Queued ahead: A, 1 node of 128 CPUs for 2 h (c03 at
    # +2 h, the blocked head), then B, 2 nodes of 32 CPUs for 4 h (c01 and c02 at +1 h).
    # Two pieces of 16 CPUs for 3 h fit c02 now, running into B's start.
    # PBS (backfill_depth 1: the top job alone is kept): B is not protected, the chunks
    # start now; before, every queued job's room was kept: +4 h (c04).
    # Slurm plans every job ahead: B holds c01-c02 from +1 h, the hetjob waits for c04
    # (+4 h), each component alone too
    from test_placement_cases5 import busy
    from test_placement_cases9 import queued
    jobs = (busy("1", "c01", 1, 32, "cpu", walltime_h=4),
            busy("3", "c03", 2, 128, "cpu", walltime_h=4),
            busy("4", "c04", 4, 128, "cpu", walltime_h=8),
            queued("10", "cpu", 128, 2), queued("11", "cpu", 64, 4, nodes=2))
    cfg, snap = _cpu_site(*jobs, alloc={"c01": (32, 0), "c03": (128, 0), "c04": (128, 0)})
    pbs = SiteConfig(name="hera", scheduler="pbs")
    v = only(run("#PBS -q cpu\n#PBS -l select=2:ncpus=16\n#PBS -l walltime=3:00:00",
                 (pbs, snap)), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run("#SBATCH -p cpu -N 1 -c 16 -t 3:00:00\n#SBATCH hetjob\n"
                 "#SBATCH -p cpu -N 1 -c 16", (cfg, snap)), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(4))


def test_slurm_hetjob_is_not_held_back_by_a_job_slurms_plan_does_not_start():
    # c03 busy until +2 h, c04 until +6 h; c01, c02 (32 CPUs each) free. Queued ahead: A,
    # 1 node of 128 CPUs for 4 h (c03, +2 h to +6 h); B, 3 nodes of 32 CPUs for 2 h (no
    # room until +6 h: c01-c03); C, 1 node of 32 CPUs for 8 h. EASY starts C now on c01
    # (it delays only B); Slurm's plan does not (B's slot from +6 h keeps c01), so c01
    # and c02 stay free until +6 h. A hetjob of two 32-CPU components for 3 h starts now
    # on c01 and c02, ending before B. Before, the queue ahead was played out by EASY:
    # C held c01 and the hetjob waited
    from test_placement_cases5 import busy
    from test_placement_cases9 import queued
    jobs = (busy("3", "c03", 2, 128, "cpu", walltime_h=4),
            busy("4", "c04", 6, 128, "cpu", walltime_h=8),
            queued("10", "cpu", 128, 4), queued("11", "cpu", 96, 2, nodes=3),
            queued("12", "cpu", 32, 8))
    site = _cpu_site(*jobs, alloc={"c03": (128, 0), "c04": (128, 0)})
    v = only(run("#SBATCH -p cpu -N 1 -c 32 -t 3:00:00\n#SBATCH hetjob\n"
                 "#SBATCH -p cpu -N 1 -c 32", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_the_queue_ahead_is_kept_as_each_policy_keeps_it():
    # the rule itself, on one node of 8 CPUs: a job ahead started at 0 (2 CPUs), the
    # blocked head from +1 h (4 CPUs), a second waiting job from +2 h (4 CPUs), each 3 h
    from diamond_jupyter.placement_sim import SimState, _kept_for
    st = SimState(["n1"], [8], [0], [8], [0])
    held = [(0.0, 3 * H, 0, 2, 0, 0), (1 * H, 4 * H, 0, 4, 0, 1), (2 * H, 5 * H, 0, 4, 0, 2)]
    assert [h[5] for h in _kept_for(held, 0.0, "none", st)] == [0]
    assert [h[5] for h in _kept_for(held, 0.0, "easy", st)] == [0, 1]
    assert [(h[5], h[3]) for h in _kept_for(held, 0.0, "plan", st)] == [(0, 2), (1, 8),
                                                                         (2, 8)]
    # at +1.5 h the head has started: the next waiting one is the head now
    assert [h[5] for h in _kept_for(held, 1.5 * H, "easy", st)] == [0, 1, 2]
