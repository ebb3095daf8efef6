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
    # a card whose memory is not said: its family, told apart by family_only
    assert gpu_matches("a100_80g", "a100")
    assert gpu_key("a100").family_only(gpu_key("a100_80g"))
    assert not gpu_key("A100-SXM4-80GB").family_only(gpu_key("a100_80g"))
    assert not gpu_matches("a100_sxm4", "A100 PCIe")  # a form named on both: it must agree
    assert not gpu_matches("v100", "a100") and not gpu_matches("a10", "a100")
    assert not gpu_matches("a100", "a10") and not gpu_matches("l40", "l40s")
    assert not gpu_matches("a100", "a100_3g.40gb")  # a MIG slice is not a whole A100
    assert not gpu_matches("nvidia", "nvidia_a100")  # a vendor alone names no model


def test_gpu_models_written_in_words_or_as_one_word_match():
    # nvidia-smi writes the model's words apart, Slurm GRES types glue them
    assert gpu_matches("gtx1080ti", "GeForce GTX 1080 Ti")
    assert gpu_matches("gtx_1080_ti", "NVIDIA GeForce GTX 1080Ti")
    assert gpu_matches("rtx3090", "NVIDIA GeForce RTX 3090")
    assert gpu_matches("titanv", "NVIDIA TITAN V")
    assert not gpu_matches("gtx1080", "GeForce GTX 1080 Ti")  # the Ti is another card
    assert not gpu_matches("rtx6000", "NVIDIA RTX 6000 Ada Generation")


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
    assert {v.site for v in p.ranked if v.feasible} == {"zeus", "hera"}
    # hera's a100 says no memory: its family, said in a note (zeus has 80 GB cards)
    hera_v = next(v for v in p.ranked if v.site == "hera")
    assert any("GPU a100_80g: taken as the site's a100 (the same model); the site does not "
               "say its memory, so whether they are 80 GB cards is not checked" in n
               for n in hera_v.notes)
    zeus_v = next(v for v in p.ranked if v.site == "zeus")
    assert not any("not checked" in n and "GPU a100_80g" in n for n in zeus_v.notes)
    p = run("#SBATCH --gres=gpu:a100-40gb:8", zeus())
    # z3's four 40 GB cards are the most of that type (z2's eight are 80 GB ones)
    assert reasons(p, "zeus") == "needs 8 GPUs of type 'a100-40gb' per node, largest node " \
        "has 4 of them"


def test_v100_request_never_lands_on_a100_nodes():
    p = run("#SBATCH -N 2\n#SBATCH --gres=gpu:v100:2", zeus())
    assert reasons(p, "zeus") == "needs 2 nodes, partition gpu has only 1 that can run it " \
        "(others: no GPU of type 'v100' (its nodes have: A100-SXM4-80GB, a10, " \
        "a100-sxm4-40gb, a100_3g.40gb, nvidia_a100))"
    v = only(run("#SBATCH --gres=gpu:v100:4\n#SBATCH --exclusive", zeus()), "zeus", "gpu")
    assert v.billed_nodes == pytest.approx(1.0)


def test_a10_is_not_an_a100_nor_a_mig_slice_an_a100():
    p = run("#SBATCH --gres=gpu:a10:2", zeus())
    assert reasons(p, "zeus") == "needs 2 GPUs of type 'a10' per node, largest node has 1 " \
        "of them"
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
    assert {v.site for v in p.ranked if v.feasible} == {"zeus", "hera"}
    hera_v = next(v for v in p.ranked if v.site == "hera")
    assert any("GPU NVIDIAA100_SXM4_80GB: taken as the site's a100 (the same model); the "
               "site does not say its memory or form factor, so whether they are 80 GB SXM4 "
               "cards is not checked" in n for n in hera_v.notes)
    # the model's memory is read: a site of 40 GB A100s alone cannot run it
    forty = (SiteConfig(name="forty"), SiteSnapshot(
        site="forty", taken_at=NOW, nodes=[_node("f1", 64, 512000, ["gpu"], 4,
                                                 "a100-sxm4-40gb")],
        partitions=[Partition(name="gpu", default=True, nodes=["f1"])]))
    p = run('#BSUB -n 1\n#BSUB -gpu "num=1:gmodel=NVIDIAA100_SXM4_80GB"', forty)
    assert reasons(p, "forty") == \
        "no GPU of type 'NVIDIAA100_SXM4_80GB' (site has: a100-sxm4-40gb)"


def test_lsf_hosts_name_their_gpu_model_as_a_resource():
    only(run('#BSUB -n 2\n#BSUB -gpu "num=4:gmodel=TeslaV100"', lsf_gpus()), "lsfg", "normal")
    p = run('#BSUB -n 2\n#BSUB -gpu "num=4:gmodel=a100"', lsf_gpus())
    assert reasons(p, "lsfg") == "needs 4 GPUs of type 'a100' per host, largest host has 2 " \
        "of them"
    p = run('#BSUB -n 2\n#BSUB -gpu "num=1:gmodel=h100"', lsf_gpus())
    assert reasons(p, "lsfg") == "no GPU of type 'h100' (site has: a100, v100)"


def test_pbs_gpu_model_written_in_capitals_keeps_its_chunk():
    # an upper-case model was taken for a template placeholder: the whole select was
    # dropped and the job placed as if it asked one CPU and no GPU
    script = "#PBS -l select=1:ncpus=16:ngpus=4:gpu_model=A100-SXM4-80GB\n" \
             "#PBS -l walltime=4:00:00"
    spec = Federation.parse("#!/bin/bash\n" + script + "\n./x\n")
    assert (spec.resources.cpus_per_task, spec.resources.gpus_per_node) == (16, 4)
    p = run(script, zeus(), hera(), ares())
    # ares has no GPUs; hera's plain a100 is the model's family, said in a note
    assert {v.site for v in p.ranked if v.feasible} == {"zeus", "hera"}
    assert any(n.startswith("GPU A100-SXM4-80GB: taken as the site's a100")
               for n in next(v for v in p.ranked if v.site == "hera").notes)
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
    assert reasons(p, "pbs") == "needs 8 GPUs per vnode, largest vnode has 4"


def test_job_gpus_render_back_as_the_jobs_total():
    # rendered as --gpus-per-node=8 the job would need one node of 8 GPUs
    script, _, spec = Federation.translate("#!/bin/bash\n#SBATCH --gpus=a100:8\n./x\n",
                                           "slurm")
    assert "#SBATCH --gpus=a100:8" in script and "--gpus-per-node" not in script, script
    script, _, _ = Federation.translate("#!/bin/bash\n#SBATCH --gpus-per-node=4\n./x\n",
                                        "slurm")
    assert "#SBATCH --gpus-per-node=4" in script


# --------------------------------------------------------------- memory

def test_tasks_without_nodes_spread_to_hold_their_memory_per_cpu():
    # 64 tasks x 4G = 262144 MB: on ares (256000 MB nodes) Slurm puts them on two nodes
    p = run("#SBATCH -n 64\n#SBATCH --mem-per-cpu=4G\n#SBATCH -t 1:00:00")
    assert feasible(p, "hera", "ares"), p.explain()
    assert p.verdict("ares").billed_nodes > 1.0  # not one node of 64 tasks
    assert p.verdict("hera").partition == "cpu"  # one 128-CPU 512000 MB node holds them
    p = run("#SBATCH -n 64\n#SBATCH --mem-per-cpu=300G")  # no node holds one task
    assert reasons(p, "ares") == "needs 307200 MB memory per task (its tasks go over any " \
        "nodes), largest node has 256000 MB"


def test_memory_per_gpu_times_the_gpus_of_a_node():
    p = run("#SBATCH --mem-per-gpu=100G\n#SBATCH --gres=gpu:4")
    assert reasons(p, "hera") == "no single node meets all the requirements together " \
        "(4 GPUs on g01, g02; 409600 MB memory on c03, c04)"
    only(run("#SBATCH --mem-per-gpu=60G\n#SBATCH --gres=gpu:4"), "hera", "gpu")


def test_torque_pmem_is_per_process():
    # 32 processes x 8 GB: 262144 MB on the one node
    p = run("#PBS -l nodes=1:ppn=32\n#PBS -l pmem=8gb", hera(), pbs_site())
    only(p, "hera", "cpu")
    assert reasons(p, "pbs") == "needs 32 ncpus per vnode, largest vnode has 4 | needs " \
        "262144 MB memory per vnode, largest vnode has 16000 MB"


def test_lsf_rusage_mem_per_slot_against_per_host():
    # per slot (LSF's default): 8 slots x 40000 MB on one host
    p = run('#BSUB -n 8\n#BSUB -R "span[hosts=1] rusage[mem=40000]"')
    only(p, "hera", "cpu")
    assert reasons(p, "ares") == "needs 320000 MB memory per node, largest node has 256000 MB"
    # /host: 40000 MB once on the host
    p = run('#BSUB -n 8\n#BSUB -R "span[hosts=1] rusage[mem=40000/host]"')
    assert feasible(p, "hera", "ares")
    # /host above every node: was dropped and the job placed with no memory at all
    p = run('#BSUB -n 8\n#BSUB -R "span[hosts=1] rusage[mem=600000/host]"')
    assert p.choice is None
    assert reasons(p, "hera") == "needs 600000 MB memory per node, largest node has 512000 MB"


def test_grid_engine_h_vmem_is_per_slot():
    # 8 slots x 8G = 65536 MB: just above the Grid Engine hosts' 64000 MB
    p = run("#$ -pe smp 8\n#$ -l h_vmem=8G", hera(), sge_site())
    only(p, "hera", "cpu")
    assert reasons(p, "sge") == "needs 65536 MB memory per host, largest host has 64000 MB"
    only(run("#$ -pe smp 8\n#$ -l h_vmem=7G", sge_site()), "sge", "all.q")


def test_grid_engine_slots_spread_as_far_as_memory_allows():
    only(run("#$ -pe mpi 64\n#$ -l h_vmem=2G", sge_site()), "sge", "all.q")  # 16 a host
    p = run("#$ -pe mpi 64\n#$ -l h_vmem=8G", sge_site())  # 7 a host: 10 hosts
    assert reasons(p, "sge") == "needs 10 hosts (64 tasks, 7 to a host), largest queue has " \
        "4"


def test_pbs_mem_in_terabytes_above_every_node():
    p = run("#PBS -l select=1:ncpus=4:mem=1tb")
    assert reasons(p, "hera") == "needs 1048576 MB memory per node, largest node has 512000 MB"
    assert reasons(p, "ares") == "needs 1048576 MB memory per node, largest node has 256000 MB"


# --------------------------------------------------------------- partitions and time limits

def test_walltime_above_every_partition_names_the_longest():
    p = run("#SBATCH -t 100:00:00")
    assert p.choice is None
    assert reasons(p, "hera") == "walltime 4-04:00:00 above the MaxTime of every partition " \
        "that is up (the longest: cpu, 2-00:00:00); partition old (no MaxTime) would take " \
        "it but is INACTIVE"
    assert reasons(p, "ares") == "walltime 4-04:00:00 above partition main MaxTime 3-00:00:00"


def test_time_min_lets_the_partition_cut_the_time_limit():
    # --time-min 1 h: where the 100 h limit is above MaxTime, Slurm starts the job with its
    # --time-min as the limit (seen on the test bed's Slurm 22.05, EnforcePartLimits=NO)
    p = run("#SBATCH --time-min=1:00:00\n#SBATCH -t 100:00:00")
    assert feasible(p, "hera", "ares"), p.explain()
    v = p.verdict("hera")
    assert v.partition == "cpu"
    assert "partition cpu: time limit cut to --time-min 1:00:00 (the walltime is above its " \
        "MaxTime 2-00:00:00)" in v.notes
    assert v.estimated_runtime_s <= 1 * H  # it ends at the cut limit at the latest


def test_time_min_above_a_partitions_limit_does_not_help():
    p = run("#SBATCH --time-min=50:00:00\n#SBATCH -t 100:00:00")
    only(p, "ares", "main")
    assert reasons(p, "hera") == "walltime 4-04:00:00 above the MaxTime of every partition " \
        "that is up (the longest: cpu, 2-00:00:00), and --time-min 2-02:00:00 too; partition " \
        "old (no MaxTime) would take it but is INACTIVE"


def test_partition_of_another_account_is_restricted():
    cfg, snap = hera()
    snap.partitions[2].allowed_accounts = ["physics"]
    p = run("#SBATCH -A chem\n#SBATCH --gres=gpu:1", (cfg, snap))
    v = p.verdict("hera")
    assert v.verdict == "RESTRICTED", p.explain()
    assert "account 'chem' not allowed in partition 'gpu' (allowed: physics)" in v.reasons
    only(run("#SBATCH -A physics\n#SBATCH --gres=gpu:1", (cfg, snap)), "hera", "gpu")


def test_down_partition_and_a_list_that_skips_it():
    cfg, snap = hera()
    snap.partitions[2].state = "DOWN"
    p = run("#SBATCH --gres=gpu:1", (cfg, snap))
    assert "partition 'gpu' is DOWN" in reasons(p, "hera")
    only(run("#SBATCH -p gpu,cpu\n#SBATCH -c 4", (cfg, snap)), "hera", "cpu")


def test_spread_gpus_against_a_partitions_max_nodes():
    cfg, snap = hera()
    snap.partitions[2].max_nodes = 1
    p = run("#SBATCH --gpus=8\n#SBATCH -p gpu", (cfg, snap))
    assert reasons(p, "hera") == "needs 2 nodes, partition gpu allows at most 1"


# --------------------------------------------------------------- node states

@pytest.mark.parametrize("state,usable", [
    ("idle~", True), ("IDLE+POWERED_DOWN", True), ("idle+power_down", True),
    ("mixed+completing", True), ("IDLE+NOT_RESPONDING", False), ("idle+reboot_requested",
                                                                  False),
    ("offline", False), ("offline,job-exclusive", False), ("free", True),
    ("job-exclusive", True), ("closed_Adm", False), ("closed_Full", True), ("unavail", False),
    ("unreach", False), ("closed_LIM", False), ("ok", True), ("down~", False)])
def test_node_states_of_every_scheduler(state, usable):
    assert node_usable(_node("x", 4, 1000, [], state=state)) is usable


def test_powered_down_nodes_still_take_jobs():
    # Slurm resumes a node saved by power management when a job needs it
    site = hera(states={"c03": "idle+powered_down", "c04": "IDLE+POWERED_DOWN"})
    only(run("#SBATCH -N 2\n#SBATCH -c 100\n#SBATCH -t 1:00:00", site), "hera", "cpu")


def test_offline_pbs_host_is_not_usable():
    cfg, snap = pbs_site()
    snap.nodes[1].state = "offline"
    p = run("#PBS -l select=2:ncpus=1:ngpus=1", (cfg, snap))
    assert reasons(p, "pbs") == \
        "queue workq: its usable vnodes cannot hold the chunks (2:ncpus=1:ngpus=1) " \
        "(others offline gpu1)"
    snap.nodes[1].state = "free"
    only(run("#PBS -l select=2:ncpus=1:ngpus=1", (cfg, snap)), "pbs", "workq")


def test_lsf_hosts_closed_by_the_admin():
    cfg, snap = lsf_gpus()
    snap.nodes[0].state = snap.nodes[1].state = "closed_adm"
    p = run('#BSUB -n 2\n#BSUB -gpu "num=4:gmodel=v100"', (cfg, snap))
    assert reasons(p, "lsfg") == \
        "needs 1 host, queue normal has only 0 usable (others closed_adm l[1-2])"


# --------------------------------------------------------------- features and named hosts

def racks():
    """A Slurm site of four 32-CPU nodes in racks: r1a rack1, r2a rack2, r3a-r3b rack3."""
    nodes = [_node("r1a", 32, 64000, ["b"], feats=["rack1"]),
             _node("r2a", 32, 64000, ["b"], feats=["rack2"]),
             _node("r3a", 32, 64000, ["b"], feats=["rack3"]),
             _node("r3b", 32, 64000, ["b"], feats=["rack3"])]
    return (SiteConfig(name="racks"), SiteSnapshot(
        site="racks", taken_at=NOW, nodes=nodes,
        partitions=[Partition(name="b", default=True, nodes=[n.name for n in nodes])]))


def test_bracket_constraint_needs_one_choice_for_every_node():
    # [rack1|rack2]: all the job's nodes in rack1, or all in rack2 (one node each)
    p = run("#SBATCH -N 2\n#SBATCH -C '[rack1|rack2]'", racks())
    assert reasons(p, "racks") == "constraint '[rack1|rack2]' needs all 2 nodes with the " \
        "same one of them, partition b has at most 1 (rack1: 1, rack2: 1)"
    only(run("#SBATCH -N 2\n#SBATCH -C '[rack1|rack3]'", racks()), "racks", "b")
    only(run("#SBATCH -N 2\n#SBATCH -C 'rack1|rack2'", racks()), "racks", "b")  # mixed: fine
    p = run("#SBATCH -N 3\n#SBATCH -C '[rack1|rack3]'", racks())
    assert "partition b has at most 2 (rack1: 1, rack3: 2)" in reasons(p, "racks")


def test_or_naming_a_feature_the_site_lacks():
    p = run("#SBATCH -C 'avx512|sve'")
    assert reasons(p, "hera").startswith("constraint 'avx512|sve' names feature(s) the site "
                                         "does not have: sve")
    assert reasons(p, "ares").startswith("constraint 'avx512|sve' names feature(s) the site "
                                         "does not have: avx512")


def mixy():
    """One partition of two x86_64 and two aarch64 nodes (32 CPUs, 128000 MB)."""
    nodes = [_node("x1", 32, 128000, ["all"], arch="x86_64"),
             _node("x2", 32, 128000, ["all"], arch="x86_64"),
             _node("m1", 32, 128000, ["all"], arch="aarch64"),
             _node("m2", 32, 128000, ["all"], arch="aarch64")]
    return (SiteConfig(name="mixy", metadata={"container_runtimes": ["apptainer"]}),
            SiteSnapshot(site="mixy", taken_at=NOW, nodes=nodes, partitions=[
                Partition(name="all", default=True, nodes=["x1", "x2", "m1", "m2"])]))


def test_x86_container_image_on_a_partition_of_two_architectures():
    spec = with_options(Federation.parse("#!/bin/bash\n#SBATCH -N 2\n./x\n"), arch="x86_64",
                        container="docker://ubuntu:22.04")
    only(place(spec, [mixy(), ares()], now=NOW), "mixy", "all")
    spec = with_options(Federation.parse("#!/bin/bash\n#SBATCH -N 3\n./x\n"), arch="amd64",
                        container="docker://ubuntu:22.04")
    p = place(spec, [mixy()], now=NOW)
    assert reasons(p, "mixy") == "needs 3 nodes, partition all has only 2 that can run it " \
        "(others: architecture mismatch: job needs x86_64, its nodes have aarch64)"


def test_exclusive_on_shared_nodes_waits_for_one_to_empty():
    jobs = [running("a", "c03", 5, 8, walltime_h=6), running("b", "c04", 2, 8, walltime_h=6)]
    site = hera(jobs=jobs, alloc={"c03": (8, 0), "c04": (8, 0)})
    v = run("#SBATCH --exclusive\n#SBATCH -C avx512\n#SBATCH -t 1:00:00", site).verdict("hera")
    assert v.feasible and v.partition == "cpu"
    assert v.estimated_start == NOW + timedelta(hours=2)
    v = run("#SBATCH -c 8\n#SBATCH -C avx512\n#SBATCH -t 1:00:00", site).verdict("hera")
    assert v.estimated_start == NOW


def test_nodelist_binds_to_the_named_host():
    p = run("#SBATCH -w g01\n#SBATCH -c 2")
    only(p, "hera", "gpu")
    assert reasons(p, "ares") == "--nodelist names node(s) this site does not have: g01"
    p = run("#SBATCH -w c01\n#SBATCH --gres=gpu:1", hera())
    assert reasons(p, "hera") == \
        "node(s) c01 named by --nodelist cannot run it: no GPUs on any node"


def test_nodelist_across_two_partitions():
    p = run("#SBATCH -w c01,g01\n#SBATCH -c 2", hera())
    r = reasons(p, "hera")
    assert "partition cpu does not hold node(s) g01 named by --nodelist" in r, r
    assert "partition gpu does not hold node(s) c01 named by --nodelist" in r, r


def test_nodelist_waits_for_its_busy_host():
    jobs = [running("a", "c03", 2, 128)]
    site = hera(jobs=jobs, alloc={"c03": (128, 0)})
    v = run("#SBATCH -w c03\n#SBATCH -c 4\n#SBATCH -t 1:00:00", site).verdict("hera")
    assert v.partition == "cpu" and v.estimated_start == NOW + timedelta(hours=2)
    v = run("#SBATCH -c 100\n#SBATCH -t 1:00:00", site).verdict("hera")
    assert v.estimated_start == NOW  # c04 is free


def test_exclude_leaves_too_few_nodes():
    p = run("#SBATCH -x g01,g02\n#SBATCH --gres=gpu:4", hera())
    assert reasons(p, "hera") == \
        "--exclude g01,g02 leaves it too few nodes: no other node can run it, it needs 1"
    only(run("#SBATCH -x g01\n#SBATCH --gres=gpu:4", hera()), "hera", "gpu")
    # on a site without those hosts an exclusion takes nothing away
    only(run("#SBATCH -x g[01-02]\n#SBATCH -c 4", ares()), "ares", "main")


# --------------------------------------------------------------- PBS, LSF, Grid Engine shapes

def pbs2(jobs=(), alloc=(0, 0)):
    """A PBS Pro site of two 32-CPU 192000 MB hosts p1, p2 (queue workq)."""
    nodes = [_node("p1", 32, 192000, ["workq"], alloc=alloc[0]),
             _node("p2", 32, 192000, ["workq"], alloc=alloc[1])]
    return (SiteConfig(name="pbs2", scheduler="pbs"), SiteSnapshot(
        site="pbs2", taken_at=NOW, nodes=nodes, jobs=list(jobs),
        partitions=[Partition(name="workq", default=True, nodes=["p1", "p2"])]))


def test_pbs_chunks_of_one_shape_share_hosts_by_default():
    # select=4:ncpus=8 with no place: PBS Pro packs the chunks freely (one host holds 4)
    only(run("#PBS -l select=4:ncpus=8\n#PBS -l walltime=1:00:00", pbs2()), "pbs2", "workq")
    p = run("#PBS -l select=4:ncpus=8\n#PBS -l place=scatter", pbs2())
    assert reasons(p, "pbs2") == \
        "the chunks 4:ncpus=8 do not fit the site's nodes together (scatter placement): " \
        "they ask 4 hosts, one a chunk, and 2 can hold one"
    only(run("#PBS -l select=2:ncpus=16\n#PBS -l place=pack", pbs2()), "pbs2", "workq")
    p = run("#PBS -l select=2:ncpus=24\n#PBS -l place=pack", pbs2())
    # place=pack is read as the one host it asks for: 2 x 24 CPUs on a node of 32
    assert "needs 48 ncpus per vnode (select=2:ncpus=24, place=pack)" in reasons(p, "pbs2")
    # the same job from a Slurm script asks four nodes
    p = run("#SBATCH -N 4\n#SBATCH --ntasks-per-node=8", pbs2())
    assert reasons(p, "pbs2") == "needs 4 vnodes, largest queue has 2"


def test_pbs_chunks_start_where_running_jobs_leave_room():
    jobs = [running("r1", "p1", 2, 16, partition="workq"),
            running("r2", "p2", 3, 16, partition="workq")]
    site = pbs2(jobs, alloc=(16, 16))
    v = run("#PBS -l select=4:ncpus=8\n#PBS -l walltime=1:00:00", site).verdict("pbs2")
    assert v.estimated_start == NOW  # two chunks on each host's free 16 CPUs
    v = run("#PBS -l select=2:ncpus=16\n#PBS -l place=pack\n#PBS -l walltime=1:00:00",
            site).verdict("pbs2")
    assert v.estimated_start == NOW + timedelta(hours=2)  # 32 CPUs of one host: p1 at 2 h


def test_lsf_ptile_sets_the_hosts():
    p = run('#BSUB -n 64\n#BSUB -R "span[ptile=16]"\n#BSUB -W 60')
    assert feasible(p, "hera", "ares")
    assert p.verdict("hera").partition == "cpu"
    p = run('#BSUB -n 80\n#BSUB -R "span[ptile=16]"')  # 5 hosts
    assert "needs 5 nodes, partition cpu allows at most 4" in reasons(p, "hera")
    assert reasons(p, "ares") == "needs 5 nodes, largest partition has 4"


def test_lsf_one_host_for_every_slot():
    p = run('#BSUB -n 100\n#BSUB -R "span[hosts=1]"')
    only(p, "hera", "cpu")
    assert reasons(p, "ares") == "needs 100 CPUs per node, largest node has 80"


# --------------------------------------------------------------- start estimates

def test_gpu_jobs_start_as_their_nodes_free():
    jobs = [running("a", "g01", 3, 8, gpus=4, partition="gpu"),
            running("b", "g02", 1, 8, gpus=2, partition="gpu")]
    site = hera(jobs=jobs, alloc={"g01": (8, 4), "g02": (8, 2)})

    def start(script):
        v = run(script + "\n#SBATCH -t 1:00:00", site).verdict("hera")
        assert v.feasible and v.partition == "gpu", v
        return v.estimated_start - NOW

    assert start("#SBATCH --gres=gpu:a100:2") == timedelta(0)  # g02's two free GPUs
    assert start("#SBATCH --gres=gpu:a100:4") == timedelta(hours=1)  # g02 empties first
    assert start("#SBATCH -N 2\n#SBATCH --gres=gpu:4") == timedelta(hours=3)
    assert start("#SBATCH --gpus=8") == timedelta(hours=3)  # both a100 nodes, whole


def test_partitions_sharing_nodes_share_their_waits():
    # debug's two nodes are cpu's c01-c02: busy there means busy in debug
    jobs = [running("a", "c01", 2, 32), running("b", "c02", 2, 32)]
    site = hera(jobs=jobs, alloc={"c01": (32, 0), "c02": (32, 0)})
    v = run("#SBATCH -p debug\n#SBATCH -c 4\n#SBATCH -t 10:00", site).verdict("hera")
    assert v.partition == "debug" and v.estimated_start == NOW + timedelta(hours=2)
    v = run("#SBATCH -p debug,cpu\n#SBATCH -c 4\n#SBATCH -t 10:00", site).verdict("hera")
    assert v.partition == "cpu" and v.estimated_start == NOW  # c03 is free


# --------------------------------------------------------------- place --explain

def test_explain_shows_every_site_and_its_reason():
    p = run("#SBATCH --gpus=8\n#SBATCH -t 1:00:00", hera(), ares(), zeus())
    text = p.explain()
    lines = {ln.split()[1] if ln.startswith("*") else ln.split()[0]: ln
             for ln in text.splitlines()[2:]}
    assert "READY" in lines["hera"] and "gpu" in lines["hera"]
    assert "READY" in lines["zeus"]
    assert "INCOMPATIBLE" in lines["ares"] and "no GPUs on any node" in lines["ares"]
    assert p.choice in ("hera", "zeus")


def test_explain_with_odd_names_from_a_site():
    # names as a site reports them: blanks, non-ASCII, a terminal escape
    nodes = [_node("nœud-1", 16, 64000, ["gpu long"], 2, "NVIDIA A100 80GB PCIe"),
             _node("n\x1b[2Jx", 16, 64000, ["débogage"])]
    odd = (SiteConfig(name="odd"), SiteSnapshot(site="odd", taken_at=NOW, nodes=nodes,
                                                partitions=[
        Partition(name="gpu long", default=True, nodes=["nœud-1"]),
        Partition(name="débogage", nodes=["n\x1b[2Jx"])]))
    p = run("#SBATCH --gres=gpu:a100_80g:2", odd, ares())
    v = only(p, "odd", "gpu long")
    assert v.verdict == "READY"
    p = run("#SBATCH --gres=gpu:h100:1\n#SBATCH -p 'gpu long'", odd, ares())
    shown = visible(p.explain())
    # the partition it names, said by its name (its nodes, not the site's)
    assert "partition gpu long: no GPU of type 'h100' (its nodes have: NVIDIA A100 80GB " \
        "PCIe)" in shown
    assert "odd" in shown and "ares" in shown
    p = run("#SBATCH -p nowhere", odd)
    shown = visible(p.explain())
    assert "partition 'nowhere' not found (site has: gpu long, débogage)" in shown
    assert "\x1b" not in shown


def test_counted_feature_waits_for_enough_nodes_with_it():
    # a100*2 of 2 nodes: both a100 nodes, and g01 is busy for 3 h (g02 + v01 is not it)
    jobs = [running("a", "g01", 3, 64, gpus=4, partition="gpu")]
    site = hera(jobs=jobs, alloc={"g01": (64, 4)})
    v = run("#SBATCH -N 2\n#SBATCH -C 'a100*2'\n#SBATCH -t 1:00:00", site).verdict("hera")
    assert v.partition == "gpu" and v.estimated_start == NOW + timedelta(hours=3)
    v = run("#SBATCH -N 2\n#SBATCH -C 'a100*1'\n#SBATCH -t 1:00:00", site).verdict("hera")
    assert v.estimated_start == NOW  # g02 and v01


def test_bracket_constraint_waits_for_one_rack_to_hold_the_job():
    cfg, snap = racks()
    snap.jobs = [running("a", "r3a", 3, 32, partition="b")]
    snap.nodes[2].cpus_allocated = 32
    v = run("#SBATCH -N 2\n#SBATCH -C '[rack1|rack3]'\n#SBATCH -t 1:00:00",
            (cfg, snap)).verdict("racks")
    assert v.estimated_start == NOW + timedelta(hours=3)  # not r1a + r3b now
    v = run("#SBATCH -N 1\n#SBATCH -C '[rack1|rack3]'\n#SBATCH -t 1:00:00",
            (cfg, snap)).verdict("racks")
    assert v.estimated_start == NOW


# --------------------------------------------------------------- MaxCPUsPerNode

def shared_gpu_nodes():
    """A Slurm site whose 2 GPU nodes (64 CPUs, 4 GPUs) also serve CPU jobs, but the `cpu`
    partition may use only 48 CPUs of each (MaxCPUsPerNode=48: 16 kept for the GPUs' jobs);
    `gpu` may use them all."""
    nodes = [_node(n, 64, 256000, ["cpu", "gpu"], 4, "a100") for n in ("s1", "s2")]
    return (SiteConfig(name="shared"), SiteSnapshot(
        site="shared", taken_at=NOW, nodes=nodes,
        partitions=[Partition(name="cpu", default=True, max_time_s=24 * H, nodes=["s1", "s2"],
                              max_cpus_per_node=48),
                    Partition(name="gpu", max_time_s=24 * H, nodes=["s1", "s2"])]))


def test_max_cpus_per_node_binds_a_job_of_whole_node_tasks():
    # 64 CPUs on one node: above the cpu partition's 48, so only gpu can take it
    v = only(run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=64", shared_gpu_nodes()),
             "shared", "gpu")
    assert v.feasible
    p = run("#SBATCH -p cpu\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=64", shared_gpu_nodes())
    assert reasons(p, "shared") == \
        "partition cpu: needs 64 CPUs per node, its MaxCPUsPerNode is 48"


def test_max_cpus_per_node_spreads_tasks_without_a_node_count():
    # 80 tasks, no -N: Slurm puts at most 48 on a node of cpu, so two nodes hold them
    only(run("#SBATCH -p cpu\n#SBATCH -n 80", shared_gpu_nodes()), "shared", "cpu")
    # 100 tasks need three nodes of 48; the partition has two
    p = run("#SBATCH -p cpu\n#SBATCH -n 100", shared_gpu_nodes())
    assert reasons(p, "shared") == ("partition cpu: needs 3 nodes at its MaxCPUsPerNode 48 "
                                    "(100 tasks of 1 CPU), has 2 that can run it")


def test_max_cpus_per_node_is_read_from_scontrol_and_slurmrestd():
    from diamond_jupyter.dialects.slurm_commands import SlurmCommands
    from diamond_jupyter.dialects.slurm_rest import parse_partitions

    text = ("PartitionName=cpu AllowGroups=ALL Default=YES MaxNodes=UNLIMITED "
            "MaxTime=1-00:00:00 MaxCPUsPerNode=48 Nodes=s[1-2] State=UP TotalCPUs=128 "
            "TotalNodes=2\n"
            "PartitionName=gpu MaxCPUsPerNode=UNLIMITED Nodes=s[1-2] State=UP\n")
    parts = {p.name: p for p in SlurmCommands().parse_partitions(text)}
    assert parts["cpu"].max_cpus_per_node == 48 and parts["gpu"].max_cpus_per_node is None
    rest = ('{"partitions": [{"name": "cpu", "nodes": "s[1-2]", "maximum_cpus_per_node": 48},'
            ' {"name": "gpu", "nodes": "s[1-2]", "maximum_cpus_per_node": -1}]}')
    got = {p.name: p.max_cpus_per_node for p in parse_partitions(rest)}
    assert got == {"cpu": 48, "gpu": None}
