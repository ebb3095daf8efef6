"""Placement cases worked by hand, seventh sweep: every component of a Slurm heterogeneous
job (`#SBATCH hetjob`) placed on its own partition and nodes, the job starting when all
of them can; Slurm association limits (`sacctmgr show assoc`: GrpTRES, GrpJobs, MaxJobs,
MaxSubmitJobs, MaxTRESPerJob on the user's association and its parents); PBS group,
project and server limits and Torque's `max_user_run`; LSF `JL/U` and `blimits`;
`OverSubscribe=YES:N` with `--oversubscribe`; then more sites of every scheduler. Each
case asserts the verdict per site, the partition chosen, the start and that the reason
names the real cause."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_placement_cases import NOW, H, hera, only, pbs_site, reasons, run
from test_placement_cases5 import busy

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput
from diamond_jupyter.placement import place


def has_note(v, text: str) -> bool:
    return any(text in n for n in v.notes)


# --------------------------------------------------------------- heterogeneous jobs

CPU_THEN_GPU = ("#SBATCH -N 2 -n 64 -p cpu -t 2:00:00\n#SBATCH hetjob\n"
                "#SBATCH -p gpu --gres=gpu:a100:2 -c 8")


def test_a_hetjob_places_each_component_on_its_own_partition():
    # component 0: 2 nodes of cpu; component 1: 2 A100 on one node of gpu. hera has both
    # idle: READY in cpu; ares (aarch64, partition main only, no GPU) has neither
    p = run(CPU_THEN_GPU)
    v = only(p, "hera", "cpu")
    assert v.verdict == "READY" and v.estimated_start == NOW
    assert has_note(v, "hetjob component 1 runs in partition gpu, can start +0:00:00")
    why = reasons(p, "ares")
    assert "hetjob component 0: partition 'cpu' not found (site has: main)" in why
    assert "hetjob component 1: no GPU of type 'a100' (site has: none)" in why


def test_a_gpu_component_is_asked_of_the_site_even_when_the_first_fits():
    # component 1 asks 8 A100 on one node: hera's A100 nodes hold 4. Before, only the
    # first component was checked and hera ran the job
    p = run("#SBATCH -N 1 -n 16 -p cpu -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH -p gpu --gres=gpu:a100:8")
    assert p.choice is None
    assert reasons(p, "hera").startswith("hetjob component 1: ")
    assert "8 GPUs" in reasons(p, "hera")
    # `place --explain` names the component that cannot run
    assert "hera INCOMPATIBLE hetjob component 1: " in p.explain()


def test_a_later_component_without_a_partition_goes_to_the_default_one():
    # --partition is not propagated: component 1 runs in hera's default partition, cpu,
    # whose nodes have no GPU, though the site's gpu partition has them
    p = run("#SBATCH -N 1 -n 16 -p cpu -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH --gres=gpu:a100:2 -c 8")
    assert reasons(p, "hera").startswith(
        "hetjob component 1 (no --partition: the default, cpu): partition cpu: no GPU of "
        "type 'a100'")


def test_a_hetjob_starts_when_every_component_can():
    # g01 and g02 (every A100) are held by jobs ending in 2 h and 3 h; the CPU component
    # could start now, but the job starts with its GPU component: +2 h
    jobs = [busy("11", "g01", 2, 64, "gpu", walltime_h=4, gpus=4),
            busy("12", "g02", 3, 64, "gpu", walltime_h=4, gpus=4)]
    site = hera(jobs=jobs, alloc={"g01": (64, 4), "g02": (64, 4)})
    v = only(run(CPU_THEN_GPU, site), "hera", "cpu")
    assert v.verdict == "BUSY" and v.estimated_start == NOW + timedelta(hours=2)
    assert v.estimated_finish == NOW + timedelta(hours=4)  # 2 h of walltime from then
    assert has_note(v, "hetjob component 1 runs in partition gpu, can start +2:00:00")
    assert v.start_bound is None or v.start_bound >= v.estimated_start


def test_a_hetjob_time_limit_is_propagated_to_later_components():
    # --time is propagated: 30 h is above gpu's 24 h MaxTime for component 1 (cpu's is 48
    # h); component 1 with its own 2 h fits
    p = run("#SBATCH -N 1 -p cpu -t 30:00:00\n#SBATCH hetjob\n#SBATCH -p gpu --gres=gpu:1")
    assert reasons(p, "hera") == ("hetjob component 1: walltime 1-06:00:00 above partition "
                                  "gpu MaxTime 1-00:00:00")
    only(run("#SBATCH -N 1 -p cpu -t 30:00:00\n#SBATCH hetjob\n"
             "#SBATCH -p gpu --gres=gpu:1 -t 2:00:00"), "hera", "cpu")


def test_a_later_components_exclude_does_not_bind_the_first():
    # component 0 takes all 4 nodes of cpu; component 1's --exclude=c01 is its own (it
    # runs in debug, which holds c01-c02): before, it took c01 from component 0 too
    v = only(run("#SBATCH -N 4 -p cpu -t 0:20:00\n#SBATCH hetjob\n"
                 "#SBATCH -p debug -N 1 --exclude=c01"), "hera", "cpu")
    assert v.verdict == "READY"


def test_a_hetjob_runs_only_at_a_slurm_site():
    # translated for PBS the later components are dropped: the job is not run there
    p = run("#SBATCH -N 1 -n 2 -t 1:00:00\n#SBATCH hetjob\n#SBATCH -p gpu --gres=gpu:1",
            pbs_site(), hera())
    assert "a Slurm heterogeneous job of 2 components (#SBATCH hetjob): pbs has no form " \
        "for its later components" in reasons(p, "pbs")
    only(p, "hera")


def test_a_later_components_bad_option_is_refused_naming_the_component():
    spec = Federation.parse("#!/bin/bash\n#SBATCH -N 1\n#SBATCH hetjob\n"
                            "#SBATCH --mem=1.5G\n./app\n")
    with pytest.raises(BadInput, match=r"heterogeneous job component 1 .*bad memory size"):
        place(spec, [hera()], now=NOW)


def test_a_hetjob_of_three_components_names_each_one_that_cannot_run():
    p = run("#SBATCH -p cpu -N 1 -t 1:00:00\n#SBATCH hetjob\n#SBATCH -p gpu -N 3 "
            "--gres=gpu:a100:1\n#SBATCH hetjob\n#SBATCH -p debug -N 2")
    why = reasons(p, "hera")
    assert why.startswith("hetjob component 1: ") and "hetjob component 2: " in why
    assert "hetjob component 0" not in why
    assert H == 3600
