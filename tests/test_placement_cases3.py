"""Placement cases worked by hand, third sweep: GPU model names across schedulers, `--gpus`
without a node count, memory per CPU/GPU/slot/host, partition and node states, time
limits and --time-min, constraint brackets, named hosts, PBS/LSF/SGE shapes, start
estimates and `place --explain`. Each case asserts the verdict per site, the partition
chosen and that the reason names the real cause. Sites are the first sweep's (`hera`,
`ares`, `pbs_site`, `sge_site`) plus the ones below."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_placement_cases import (
    NOW,
    H,
    _node,
    ares,
    hera,
    only,
    pbs_site,
    reasons,
    run,
    sge_site,
)

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobState, JobStatus, Partition, SiteSnapshot, visible
from diamond_jupyter.needs import gpu_key, gpu_matches, with_options
from diamond_jupyter.placement import place
from diamond_jupyter.placement_fit import node_usable


def zeus():
    """A Slurm site whose GPU types are spelled as its admins wrote them:
    z1 4x nvidia_a100; z2 8x A100-SXM4-80GB; z3 4x a100-sxm4-40gb; z4 4x TeslaV100-SXM2-32GB;
    z5 1x a10; z6 7 MIG slices a100_3g.40gb. All 64 CPUs, 512000 MB, partition gpu (72 h)."""
    kinds = [("z1", 4, "nvidia_a100"), ("z2", 8, "A100-SXM4-80GB"), ("z3", 4, "a100-sxm4-40gb"),
             ("z4", 4, "TeslaV100-SXM2-32GB"), ("z5", 1, "a10"), ("z6", 7, "a100_3g.40gb")]
    nodes = [_node(n, 64, 512000, ["gpu"], g, t, arch="x86_64") for n, g, t in kinds]
    return (SiteConfig(name="zeus"), SiteSnapshot(
        site="zeus", taken_at=NOW, nodes=nodes,
        partitions=[Partition(name="gpu", default=True, max_time_s=72 * H,
                              nodes=[n for n, _, _ in kinds])]))


def lsf_gpus():
    """An LSF site: its hosts report GPUs (lshosts NGPUS) but no model; the model is a
    boolean resource: l1-l2 4 GPUs 'v100', l3 2 GPUs 'a100'. 40 CPUs, 192000 MB."""
    nodes = [_node("l1", 40, 192000, ["normal"], 4, feats=["v100", "ib"]),
             _node("l2", 40, 192000, ["normal"], 4, feats=["v100", "ib"]),
             _node("l3", 40, 192000, ["normal"], 2, feats=["a100"])]
    return (SiteConfig(name="lsfg", scheduler="lsf"), SiteSnapshot(
        site="lsfg", taken_at=NOW, nodes=nodes,
        partitions=[Partition(name="normal", default=True, nodes=["l1", "l2", "l3"])]))


def running(jid, node, hours_left, cpus, gpus=0, partition="cpu", nodes=1, walltime_h=4):
    """A job running on `node` (a hostlist) that reaches its walltime in `hours_left` h."""
    return JobStatus(native_id=jid, state=JobState.RUNNING, node_list=node, cpus=cpus,
                     gpus=gpus, nodes=nodes, partition=partition, walltime_s=walltime_h * H,
                     started_at=NOW - timedelta(hours=walltime_h - hours_left))


def feasible(p, *sites):
    return sorted(v.site for v in p.ranked if v.feasible) == sorted(sites)


# --------------------------------------------------------------- GPU model names

def test_gpu_key_reads_every_spelling_of_one_model():
    a100 = {gpu_key(x).model for x in ("a100", "A100", "nvidia_a100", "a100-sxm4-40gb",
                                       "NVIDIA A100-SXM4-80GB", "NVIDIAA100_SXM4_80GB",
                                       "NVIDIA A100 80GB PCIe")}
    assert a100 == {("a100",)}
    assert gpu_key("TeslaV100_SXM2_32GB") == gpu_key("Tesla V100-SXM2-32GB")
    assert gpu_key("TeslaV100_SXM2_32GB").memory_gb == 32
    assert gpu_key("rtx_a6000").model == gpu_key("NVIDIA RTX A6000").model == ("a6000",)
    assert gpu_matches("a100", "NVIDIA A100-SXM4-80GB")
    assert gpu_matches("a100_80g", "A100-SXM4-80GB")
    assert gpu_matches("A100-80GB", "nvidia a100 80gb pcie")
    assert not gpu_matches("a100_80g", "a100-sxm4-40gb")  # memory named: it must agree
    assert not gpu_matches("a100_80g", "a100")  # a card whose memory is not said
    assert not gpu_matches("v100", "a100") and not gpu_matches("a10", "a100")
    assert not gpu_matches("a100", "a10") and not gpu_matches("l40", "l40s")
    assert not gpu_matches("a100", "a100_3g.40gb")  # a MIG slice is not a whole A100
    assert not gpu_matches("nvidia", "nvidia_a100")  # a vendor alone names no model


def test_a100_request_takes_any_spelling_of_a100_and_nothing_else():
    p = run("#SBATCH --gres=gpu:a100:4\n#SBATCH -t 2:00:00", zeus())
    v = only(p, "zeus", "gpu")
    assert v.verdict == "READY"
    # the same job asking 8: only the 80 GB node has that many
    only(run("#SBATCH --gres=gpu:A100:8", zeus(), hera()), "zeus", "gpu")
    assert reasons(run("#SBATCH --gres=gpu:A100:8", hera()), "hera") == \
        "needs 8 GPUs per node, largest node has 4"


def test_memory_specific_gpu_request_never_gets_a_40gb_card():
    p = run("#SBATCH --gres=gpu:a100_80g:4", zeus(), hera())
    only(p, "zeus", "gpu")
    # hera's a100 says no memory: not promised to be an 80 GB card
    assert reasons(p, "hera") == "no GPU of type 'a100_80g' (site has: a100, v100)"
    p = run("#SBATCH --gres=gpu:a100-40gb:8", zeus())
    assert reasons(p, "zeus") == "no single node meets all the requirements together " \
        "(GPU a100-40gb on z3; 8 GPUs on z2)"


def test_v100_request_never_lands_on_a100_nodes():
    p = run("#SBATCH -N 2\n#SBATCH --gres=gpu:v100:2", zeus())
    assert reasons(p, "zeus") == "needs 2 nodes, partition gpu has only 1 that can run it " \
        "(others: no GPU of type 'v100' (its nodes have: A100-SXM4-80GB, a10, " \
        "a100-sxm4-40gb, a100_3g.40gb, nvidia_a100))"
    v = only(run("#SBATCH --gres=gpu:v100:4\n#SBATCH --exclusive", zeus()), "zeus", "gpu")
    assert v.billed_nodes == pytest.approx(1.0)


def test_a10_is_not_an_a100_nor_a_mig_slice_an_a100():
    p = run("#SBATCH --gres=gpu:a10:2", zeus())
    assert reasons(p, "zeus") == "no single node meets all the requirements together " \
        "(GPU a10 on z5; 2 GPUs on z1, z2, z3, z4 and 1 more)"
    only(run("#SBATCH --gres=gpu:a100_3g.40gb:7", zeus()), "zeus", "gpu")
    p = run("#SBATCH --gres=gpu:a100:5", zeus())  # 5 whole A100s: z2 only, not the slices
    only(p, "zeus", "gpu")


def test_lsf_gmodel_brand_name_matches_a_slurm_gres_type():
    # LSF's gmodel=TeslaV100 is the brand of the V100; hera's GRES type is `v100`
    p = run('#BSUB -n 4\n#BSUB -R "span[hosts=1]"\n#BSUB -gpu "num=2:gmodel=TeslaV100"\n'
            "#BSUB -W 60")
    v = only(p, "hera", "gpu")
    assert v.feasible
    p = run('#BSUB -n 1\n#BSUB -gpu "num=1:gmodel=NVIDIAA100_SXM4_80GB"', zeus(), hera())
    only(p, "zeus", "gpu")
    assert "no GPU of type 'NVIDIAA100_SXM4_80GB' (site has: a100, v100)" in \
        reasons(p, "hera")


def test_lsf_hosts_name_their_gpu_model_as_a_resource():
    only(run('#BSUB -n 2\n#BSUB -gpu "num=4:gmodel=TeslaV100"', lsf_gpus()), "lsfg", "normal")
    p = run('#BSUB -n 2\n#BSUB -gpu "num=4:gmodel=a100"', lsf_gpus())
    assert reasons(p, "lsfg") == "no single node meets all the requirements together " \
        "(GPU a100 on l3; 4 GPUs on l1, l2)"
    p = run('#BSUB -n 2\n#BSUB -gpu "num=1:gmodel=h100"', lsf_gpus())
    assert reasons(p, "lsfg") == "no GPU of type 'h100' (site has: a100, v100)"


def test_pbs_gpu_model_written_in_capitals_keeps_its_chunk():
    # an upper-case model was taken for a template placeholder: the whole select was
    # dropped and the job placed as if it asked one CPU and no GPU
    script = "#PBS -l select=1:ncpus=16:ngpus=4:gpu_model=A100-SXM4-80GB\n" \
             "#PBS -l walltime=4:00:00"
    spec = Federation.parse("#!/bin/bash\n" + script + "\n./x\n")
    assert (spec.resources.cpus_per_task, spec.resources.gpus_per_node) == (16, 4)
    p = run(script, zeus(), hera())
    only(p, "zeus", "gpu")
    assert reasons(p, "hera") == "no GPU of type 'A100-SXM4-80GB' (site has: a100, v100)"
    # a placeholder where a number belongs is still one
    spec = Federation.parse("#!/bin/bash\n#PBS -l select=NNODES:ncpus=4\n./x\n")
    assert spec.resources.nodes is None and "placeholder" in \
        " ".join(spec.metadata["parse_notes"])


def test_gpu_type_option_is_case_and_vendor_blind():
    spec = with_options(Federation.parse("#!/bin/bash\n#SBATCH -c 8\n./x\n"),
                        gpu_type="NVIDIA_V100")
    p = place(spec, [hera(), zeus()], now=NOW)
    assert feasible(p, "hera", "zeus")
    assert p.verdict("hera").partition == "gpu"


# --------------------------------------------------------------- --gpus=N without -N

def test_job_gpus_without_nodes_spread_over_two_nodes():
    p = run("#SBATCH --gpus=8\n#SBATCH -t 1:00:00")
    v = only(p, "hera", "gpu")
    assert v.billed_nodes == pytest.approx(2.0)  # two nodes, not one of 8 GPUs
    assert "its 8 GPUs (the job's, no node count) take 2 nodes here, 4 GPUs on each" \
        in v.notes
    assert reasons(p, "ares") == "no GPUs on any node"


def test_job_gpus_with_one_node_is_one_node():
    p = run("#SBATCH --gpus=8\n#SBATCH -N 1")
    assert reasons(p, "hera") == "needs 8 GPUs per node, largest node has 4"


def test_job_gpus_more_than_the_partition_holds():
    r = reasons(run("#SBATCH --gpus=12"), "hera")
    assert "needs 3 nodes, partition gpu has only 2 that can run it (others: needs 4 GPUs " \
        "per node, largest node has 2)" in r, r


def test_job_gpus_of_a_type_spread_over_nodes_of_that_type_only():
    r = reasons(run("#SBATCH --gpus=v100:4"), "hera")  # one v100 node of 2
    assert "needs 2 nodes, partition gpu has only 1 that can run it (others: no GPU of type " \
        "'v100' (its nodes have: a100))" in r, r
    v = only(run("#SBATCH --gpus=a100:6\n#SBATCH -t 1:00:00"), "hera", "gpu")
    assert v.billed_nodes == pytest.approx(1.5)  # 3 of 4 GPUs on each of two nodes


def test_job_gpus_with_memory_per_gpu_is_counted_per_node():
    # 4 GPUs a node x 60G = 245760 MB: fits the 256000 MB a100 nodes (was 8 x 60G on one)
    only(run("#SBATCH --gpus=8\n#SBATCH --mem-per-gpu=60G"), "hera", "gpu")
    r = reasons(run("#SBATCH --gpus=8\n#SBATCH --mem-per-gpu=70G"), "hera")
    assert r == "no single node meets all the requirements together (4 GPUs on g01, g02; " \
        "286720 MB memory on c03, c04)"


def test_job_gpus_are_not_spread_where_the_job_would_ask_them_of_one_host():
    # a PBS site gets select=1:ngpus=8: one host must hold all 8
    cfg, snap = pbs_site()
    snap.nodes[1].gpus = snap.nodes[2].gpus = 4
    p = run("#SBATCH --gpus=8", (cfg, snap), hera())
    only(p, "hera", "gpu")
    assert reasons(p, "pbs") == "needs 8 GPUs per node, largest node has 4"


def test_job_gpus_render_back_as_the_jobs_total():
    # rendered as --gpus-per-node=8 the job would need one node of 8 GPUs
    script, _, spec = Federation.translate("#!/bin/bash\n#SBATCH --gpus=a100:8\n./x\n",
                                           "slurm")
    assert "#SBATCH --gpus=a100:8" in script and "--gpus-per-node" not in script, script
    script, _, _ = Federation.translate("#!/bin/bash\n#SBATCH --gpus-per-node=4\n./x\n",
                                        "slurm")
    assert "#SBATCH --gpus-per-node=4" in script
