"""Placement cases worked by hand: heterogeneous sites, jobs from batch scripts of every
dialect (or JobSpec options), and what the scheduler's documented semantics say about
where each job can run and why not. Each case asserts the verdict per site, the partition
chosen and that the reason names the real cause."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    JobSpec,
    JobState,
    JobStatus,
    Node,
    Partition,
    Resources,
    SiteSnapshot,
)
from diamond_jupyter.placement import Placement, place

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
H = 3600


def _node(name, cpus, mem, parts, gpus=0, gtype=None, feats=(), state="idle", arch=None,
          alloc=0, galloc=0):
    return Node(name=name, state=state, cpus=cpus, memory_mb=mem, gpus=gpus, gpu_type=gtype,
                features=list(feats), partitions=list(parts), architecture=arch,
                cpus_allocated=alloc, gpus_allocated=galloc)


def hera(states=None, jobs=(), alloc=None):
    """A Slurm x86_64 site of four node kinds:
    c01-c02 32 CPUs 128000 MB (cpu, debug); c03-c04 128 CPUs 512000 MB avx512 (cpu);
    g01-g02 64 CPUs 256000 MB 4x a100 (gpu); v01 32 CPUs 192000 MB 2x v100 (gpu).
    cpu: default, 48 h, at most 4 nodes; debug: 30 min, at most 1 node; gpu: 24 h;
    old: INACTIVE (c01)."""
    states, alloc = states or {}, alloc or {}
    spec_ = [("c01", 32, 128000, ["cpu", "debug", "old"], 0, None, ["avx2"]),
             ("c02", 32, 128000, ["cpu", "debug"], 0, None, ["avx2"]),
             ("c03", 128, 512000, ["cpu"], 0, None, ["avx2", "avx512"]),
             ("c04", 128, 512000, ["cpu"], 0, None, ["avx2", "avx512"]),
             ("g01", 64, 256000, ["gpu"], 4, "a100", ["avx2", "a100", "ib"]),
             ("g02", 64, 256000, ["gpu"], 4, "a100", ["avx2", "a100", "ib"]),
             ("v01", 32, 192000, ["gpu"], 2, "v100", ["avx2", "v100"])]
    nodes = []
    for name, cpus, mem, parts, g, gt, feats in spec_:
        a, ga = alloc.get(name, (0, 0))
        st = states.get(name) or ("idle" if not a and not ga else "mixed")
        nodes.append(_node(name, cpus, mem, parts, g, gt, feats, st, "x86_64", a, ga))
    parts = [Partition(name="cpu", default=True, max_time_s=48 * H, max_nodes=4,
                       nodes=["c[01-04]"]),
             Partition(name="debug", max_time_s=30 * 60, max_nodes=1, nodes=["c[01-02]"]),
             Partition(name="gpu", max_time_s=24 * H, nodes=["g[01-02]", "v01"]),
             Partition(name="old", state="INACTIVE", nodes=["c01"])]
    cfg = SiteConfig(name="hera", metadata={
        "architecture": "x86_64", "software": ["gromacs/2023", "openmpi/4.1", "cuda/12.2"],
        "container_runtimes": ["apptainer"], "mpi": ["openmpi"]})
    return cfg, SiteSnapshot(site="hera", taken_at=NOW, partitions=parts, nodes=nodes,
                             jobs=list(jobs))


def ares():
    """A Slurm aarch64 site: a1-a4 80 CPUs 256000 MB, one partition of 72 h; no container
    runtime, lammps only."""
    nodes = [_node(f"a{i}", 80, 256000, ["main"], feats=["sve"], arch="aarch64")
             for i in range(1, 5)]
    cfg = SiteConfig(name="ares", metadata={"architecture": "aarch64", "software": ["lammps"],
                                            "container_runtimes": []})
    return cfg, SiteSnapshot(site="ares", taken_at=NOW, nodes=nodes, partitions=[
        Partition(name="main", default=True, max_time_s=72 * H, nodes=["a[1-4]"])])


def run(script: str, *sites) -> Placement:
    spec = Federation.parse("#!/bin/bash\n" + script.strip() + "\n./app\n")
    return place(spec, list(sites or (hera(), ares())), now=NOW)


def only(p: Placement, site: str, partition: str | None = "__any__"):
    """`site` is the only feasible site (and chose `partition` when given)."""
    feas = [v.site for v in p.ranked if v.feasible]
    assert feas == [site], p.explain()
    if partition != "__any__":
        assert p.verdict(site).partition == partition, p.explain()
    return p.verdict(site)


def reasons(p: Placement, site: str) -> str:
    v = p.verdict(site)
    assert v is not None and not v.feasible, p.explain()
    return " | ".join(v.reasons)


def has_note(v, text: str) -> bool:
    """Whether one of a verdict's notes holds TEXT."""
    return any(text in n for n in v.notes)


def hours(h: float) -> datetime:
    """NOW plus H hours."""
    return NOW + timedelta(hours=h)


def at(h: float) -> str:
    """A time `h` hours from NOW as Slurm prints it."""
    return (NOW + timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%S")


def reservation(name: str, nodes: str, start_h: float, end_h: float,
                flags: str = "SPEC_NODES", users: str = "root", *, node_count: int,
                cores: int) -> str:
    """One reservation of `node_count` nodes and `cores` cores, from `start_h` to `end_h`
    hours from NOW, as `scontrol show reservation -o` prints it."""
    state = "ACTIVE" if start_h <= 0 < end_h else "INACTIVE"
    return (f"ReservationName={name} StartTime={at(start_h)} EndTime={at(end_h)} "
            f"Duration=1:00:00 Nodes={nodes} NodeCnt={node_count} CoreCnt={cores} "
            f"Features=(null) PartitionName=(null) Flags={flags} TRES=cpu={cores} "
            f"Users={users} Groups=(null) Accounts=(null) Licenses=(null) State={state} "
            "BurstBuffer=(null) Watts=n/a MaxStartDelay=(null)\n")


# --------------------------------------------------------------- GPUs: per node, task, job

def test_gres_gpu_type_and_count_per_node():
    p = run("#SBATCH --gres=gpu:a100:2\n#SBATCH -t 1:00:00")
    only(p, "hera", "gpu")
    assert "no GPU of type 'a100' (site has: none)" in reasons(p, "ares")


def test_four_gpus_per_node_only_on_the_a100_nodes():
    p = run("#SBATCH -N 2\n#SBATCH --gres=gpu:4")
    only(p, "hera", "gpu")


def test_more_gpus_per_node_than_any_node_has():
    p = run("#SBATCH --gres=gpu:8")
    assert p.choice is None
    assert reasons(p, "hera") == "needs 8 GPUs per node, largest node has 4"
    assert reasons(p, "ares") == "no GPUs on any node"


def test_gpus_per_task_times_tasks_per_node():
    only(run("#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=1"),
         "hera", "gpu")
    p = run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=2")
    assert reasons(p, "hera") == "needs 8 GPUs per node, largest node has 4"


def test_job_total_gpus_divided_among_nodes():
    only(run("#SBATCH -N 2\n#SBATCH --gpus=6"), "hera", "gpu")  # 3 a node


def test_job_total_gpus_the_nodes_do_not_divide():
    only(run("#SBATCH -N 2\n#SBATCH --gpus=5"), "hera", "gpu")  # 3 + 2 (or 4 + 1)
    p = run("#SBATCH -N 2\n#SBATCH --gpus=9")  # 9 > 2 nodes x 4
    assert "GPUs" in reasons(p, "hera") and "4" in reasons(p, "hera")


def test_three_nodes_of_four_gpus_when_the_partition_has_two():
    p = run("#SBATCH -N 3\n#SBATCH --gres=gpu:4")
    r = reasons(p, "hera")
    # the gpu partition has three nodes, but only two with 4 GPUs
    assert "needs 3 nodes, partition gpu has only 2 that can run it (others: needs 4 GPUs " \
        "per node, largest node has 2)" in r, r
    assert "partition cpu: no GPUs on any node" in r, r


def test_gpu_type_constraint_v100_only_one_node():
    p = run("#SBATCH -N 2\n#SBATCH --gres=gpu:v100:1")
    r = reasons(p, "hera")
    assert "needs 2 nodes, partition gpu has only 1 that can run it (others: no GPU of " \
        "type 'v100' (its nodes have: a100))" in r, r
    only(run("#SBATCH --gres=gpu:v100:2"), "hera", "gpu")


def test_feature_constraint_gpu_model():
    only(run("#SBATCH -C a100\n#SBATCH --gres=gpu:1"), "hera", "gpu")
    p = run("#SBATCH -C h100\n#SBATCH --gres=gpu:1")
    assert "missing feature 'h100'" in reasons(p, "hera")


def test_pbs_ngpus_and_gpu_model():
    p = run("#PBS -l select=1:ncpus=8:ngpus=2:gpu_model=a100\n#PBS -l walltime=02:00:00")
    only(p, "hera", "gpu")
    p = run("#PBS -l select=1:ncpus=8:ngpus=2:gpu_model=h100\n#PBS -l walltime=02:00:00")
    assert p.choice is None, p.explain()
    assert reasons(p, "hera") == "no GPU of type 'h100' (site has: a100, v100)"
    # a chunk's arch resource binds too
    p = run("#PBS -l select=2:ncpus=8:arch=aarch64")
    only(p, "ares", "main")
    assert reasons(p, "hera") == "architecture mismatch: job needs aarch64, site has x86_64"


def test_lsf_gpu_num_and_model():
    p = run('#BSUB -n 4\n#BSUB -R "span[hosts=1]"\n#BSUB -gpu "num=2:gmodel=a100"\n'
            "#BSUB -W 60")
    only(p, "hera", "gpu")
    p = run('#BSUB -n 4\n#BSUB -R "span[hosts=1]"\n#BSUB -gpu "num=2:gmodel=h100"')
    assert "no GPU of type 'h100' (site has: a100, v100)" in reasons(p, "hera")


# --------------------------------------------------------------- memory

def test_memory_exactly_the_node_size_fits():
    v = only(run("#SBATCH --mem=128000M\n#SBATCH -c 4\n#SBATCH -p debug", hera()),
             "hera", "debug")
    assert v.feasible


def test_memory_just_over_the_largest_node():
    p = run("#SBATCH --mem=512001M")
    assert reasons(p, "hera") == "needs 512001 MB memory per node, largest node has 512000 MB"
    assert reasons(p, "ares") == "needs 512001 MB memory per node, largest node has 256000 MB"


def test_memory_in_gib_is_over_a_decimal_node():
    # 128G is 131072 MB: above the 128000 MB nodes, on the 512000 MB ones only
    p = run("#SBATCH --mem=128G\n#SBATCH -p debug")
    assert reasons(p, "hera") == \
        "partition debug: needs 131072 MB memory per node, largest node has 128000 MB"


def test_memory_per_cpu_times_the_cpus_of_a_node():
    # 32 tasks x 8G: 262144 MB a node; only c03/c04 hold it (g01 256000 MB)
    only(run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=32\n#SBATCH --mem-per-cpu=8G"),
         "hera", "cpu")
    p = run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=32\n#SBATCH --mem-per-cpu=8G\n"
            "#SBATCH -p gpu")
    assert reasons(p, "hera") == \
        "partition gpu: needs 262144 MB memory per node, largest node has 256000 MB"


def test_memory_zero_is_the_whole_node():
    v = only(run("#SBATCH --mem=0\n#SBATCH -c 2\n#SBATCH -t 1:00:00", hera()), "hera", "cpu")
    assert v.billed_nodes == pytest.approx(1.0)  # all its memory: the whole node is its


def test_mem_zero_waits_for_an_empty_node():
    jobs = [JobStatus(native_id=f"r{i}", state=JobState.RUNNING, node_list=n, cpus=1,
                      nodes=1, partition="cpu", walltime_s=4 * H,
                      started_at=NOW - timedelta(hours=2))
            for i, n in enumerate(("c01", "c02", "c03", "c04"))]
    site = hera(jobs=jobs, alloc={n: (1, 0) for n in ("c01", "c02", "c03", "c04")})
    v = place(Federation.parse("#!/bin/bash\n#SBATCH --mem=0\n#SBATCH -p cpu\n"
                               "#SBATCH -t 1:00:00\n./x\n"), [site], now=NOW).verdict("hera")
    assert v.feasible and v.estimated_start == NOW + timedelta(hours=2)
    v = place(Federation.parse("#!/bin/bash\n#SBATCH --mem=1G\n#SBATCH -p cpu\n"
                               "#SBATCH -t 1:00:00\n./x\n"), [site], now=NOW).verdict("hera")
    assert v.estimated_start == NOW


def test_pbs_mem_per_chunk_and_lsf_rusage():
    p = run("#PBS -l select=1:ncpus=4:mem=300gb")  # 307200 MB: c03/c04 only
    only(p, "hera", "cpu")
    p = run('#BSUB -n 2\n#BSUB -R "span[hosts=1] rusage[mem=300000]"')  # MB per slot
    # 2 slots x 300000 MB on one host: above every node
    assert "memory" in reasons(p, "hera"), p.explain()


# --------------------------------------------------------------- exclusive, time, nodes

def test_exclusive_bills_the_whole_node():
    v = only(run("#SBATCH --exclusive\n#SBATCH -c 2", hera()), "hera", "cpu")
    assert v.billed_nodes == pytest.approx(1.0)


def test_walltime_over_the_partition_max_time():
    p = run("#SBATCH -p debug\n#SBATCH -t 1:00:00")
    assert reasons(p, "hera") == "walltime 1:00:00 above partition debug MaxTime 0:30:00"
    assert "partition 'debug' not found" in reasons(p, "ares")


def test_walltime_equal_to_max_time_fits_and_above_every_partition():
    p = run("#SBATCH -t 3-00:00:00")  # 72 h: hera's longest is 48 h, ares' 72 h
    only(p, "ares", "main")
    assert "walltime 3-00:00:00 above the MaxTime of every partition that is up (the " \
        "longest: cpu, 2-00:00:00)" in reasons(p, "hera")


def test_no_time_limit_given_uses_the_default_partition():
    v = only(run("#SBATCH -c 4", hera()), "hera", "cpu")
    assert v.estimated_runtime_s is not None


def test_max_nodes_of_a_partition():
    p = run("#SBATCH -p debug\n#SBATCH -N 2\n#SBATCH -t 10:00")
    assert reasons(p, "hera") == "needs 2 nodes, partition debug allows at most 1"


def test_node_count_above_every_partition():
    p = run("#SBATCH -N 5\n#SBATCH -t 1:00:00")
    assert p.choice is None
    r = reasons(p, "hera")
    assert "needs 5 nodes, partition cpu allows at most 4" in r, r
    assert "needs 5 nodes" in reasons(p, "ares")
    assert "no site can run this job: " in p.summary()
    assert "hera: " in p.summary() and "ares: " in p.summary()


def test_node_in_two_partitions_goes_to_the_default():
    v = only(run("#SBATCH -c 4\n#SBATCH -t 10:00", hera()), "hera", "cpu")
    assert "partition old is INACTIVE" not in v.notes  # noted as 'partition 'old' is'
    assert any("'old' is INACTIVE" in n for n in v.notes)


def test_inactive_partition_named():
    p = run("#SBATCH -p old\n#SBATCH -t 10:00", hera())
    assert reasons(p, "hera") == "partition 'old' is INACTIVE"


def test_drained_and_down_nodes():
    site = hera(states={"g01": "drain", "g02": "down*"})
    p = run("#SBATCH --gres=gpu:4", site)
    assert "partition gpu has only 0 usable" in reasons(p, "hera")
    only(run("#SBATCH --gres=gpu:2", site), "hera", "gpu")  # v01 is up


def test_tasks_per_node_only_fit_the_big_nodes():
    only(run("#SBATCH -N 2\n#SBATCH --ntasks-per-node=64", hera()), "hera", "cpu")
    p = run("#SBATCH -N 3\n#SBATCH --ntasks-per-node=100", hera())
    r = reasons(p, "hera")
    assert "needs 3 nodes, partition cpu has only 2 that can run it (others: needs 100 CPUs " \
        "per node, largest node has 32)" in r, r
    assert "partition gpu: needs 100 CPUs per node, largest node has 64" in r, r


def test_architecture_aarch64_only_on_the_arm_site():
    p = run("#SBATCH -C arch=aarch64")
    only(p, "ares", "main")
    assert reasons(p, "hera") == "architecture mismatch: job needs aarch64, site has x86_64"
    p = place(JobSpec(command="x", metadata={"architecture": "x86_64"}), [hera(), ares()],
              now=NOW)
    only(p, "hera", "cpu")


def test_feature_and_or_and_counts():
    p = run("#SBATCH -C 'avx512&ib'")
    assert reasons(p, "hera") == "no single node meets all the requirements together " \
        "(feature 'avx512' on c03, c04; feature 'ib' on g01, g02)"
    only(run("#SBATCH -C 'avx512|a100'"), "hera", "cpu")
    v = only(run("#SBATCH -C 'a100|v100'\n#SBATCH -N 3", hera()), "hera", "gpu")
    assert v.feasible
    # 3 nodes, at least 2 of them with a100 (sbatch: "at least N of those nodes")
    only(run("#SBATCH -N 3\n#SBATCH -C 'a100*2'", hera()), "hera", "gpu")
    p = run("#SBATCH -N 3\n#SBATCH -C 'v100*2'", hera())
    assert reasons(p, "hera") == "constraint 'v100*2' needs 2 nodes with 'v100', site has 1"
    # a counted feature is met within one partition: g01-g02 are in gpu, c03-c04 in cpu
    p = run("#SBATCH -N 4\n#SBATCH -C '(avx512|a100)*3'", hera())
    assert "constraint '(avx512|a100)*3' needs 3 nodes with it, partition cpu has 2" \
        in reasons(p, "hera"), p.explain()


def test_software_module_the_site_lacks():
    p = run("#SBATCH -n 4\nmodule load lammps/2023")
    only(p, "ares")
    assert reasons(p, "hera").startswith("software 'lammps/2023' not installed")


def test_container_on_a_site_without_a_runtime():
    p = run("#SBATCH -n 1\napptainer exec img.sif ./app")
    only(p, "hera", "cpu")
    assert reasons(p, "ares") == "container img.sif needs a container runtime, site has none"


def test_flux_site_without_partitions():
    nodes = [_node(f"f{i}", 16, 64000, [], gpus=1, gtype="a100", feats=["a100"])
             for i in range(3)]
    flux = (SiteConfig(name="flux", scheduler="flux"),
            SiteSnapshot(site="flux", taken_at=NOW, nodes=nodes))
    v = only(run("#flux: -N 3\n#flux: --gpus-per-node=1\n#flux: --requires=a100", flux),
             "flux", None)
    assert v.verdict == "READY"
    p = run("#flux: -N 4\n#flux: --gpus-per-node=1", flux)
    assert "needs 4 nodes" in reasons(p, "flux")


def test_whole_node_job_on_gpu_nodes_waits_for_an_empty_node():
    jobs = [JobStatus(native_id=f"r{i}", state=JobState.RUNNING, node_list=n, cpus=4,
                      gpus=1, nodes=1, partition="gpu", walltime_s=4 * H,
                      started_at=NOW - timedelta(hours=1))
            for i, n in enumerate(("g01", "g02"))]
    site = hera(jobs=jobs, alloc={"g01": (4, 1), "g02": (4, 1)})
    v = run("#SBATCH --exclusive\n#SBATCH -C a100\n#SBATCH -t 1:00:00", site).verdict("hera")
    assert v.feasible and v.partition == "gpu"
    assert v.estimated_start == NOW + timedelta(hours=3)
    v = run("#SBATCH --gres=gpu:a100:1\n#SBATCH -t 1:00:00", site).verdict("hera")
    assert v.estimated_start == NOW


def test_mpi_tasks_per_node_above_node_cpus():
    p = run("#SBATCH -N 2\n#SBATCH --ntasks-per-node=256\nsrun ./mpi")
    assert reasons(p, "hera") == "needs 256 CPUs per node, largest node has 128"
    assert reasons(p, "ares") == "needs 256 CPUs per node, largest node has 80"


def test_threads_above_node_cores_and_tasks_spread():
    p = run("#SBATCH -c 200")
    assert reasons(p, "hera") == "needs 200 CPUs per node, largest node has 128"
    # two tasks of 96 CPUs: one on each 128-CPU node
    only(run("#SBATCH -n 2\n#SBATCH -c 96"), "hera", "cpu")


def test_array_elements_are_placed_one_at_a_time():
    only(run("#SBATCH --array=1-500%10\n#SBATCH -c 100"), "hera", "cpu")
    only(run("#PBS -J 1-100\n#PBS -l select=1:ncpus=100"), "hera", "cpu")


def test_a_site_with_partition_totals_only():
    tot = (SiteConfig(name="tot"), SiteSnapshot(site="tot", taken_at=NOW, partitions=[
        Partition(name="batch", default=True, total_nodes=4, total_cpus=128)]))
    only(run("#SBATCH -N 4\n#SBATCH --ntasks-per-node=32", tot), "tot", "batch")
    p = run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=33", tot)
    assert reasons(p, "tot") == "needs 33 CPUs per node, largest node has 32"


# --------------------------------------------------------------- Grid Engine, PBS chunks

def sge_site(pes=("smp", "mpi")):
    nodes = [_node(f"s{i}", 16, 64000, ["all.q"]) for i in range(1, 5)]
    return (SiteConfig(name="sge", scheduler="sge"),
            SiteSnapshot(site="sge", taken_at=NOW, nodes=nodes, parallel_environments=list(pes),
                         partitions=[Partition(name="all.q", default=True,
                                               nodes=[n.name for n in nodes])]))


def test_grid_engine_parallel_environment_the_site_lacks():
    p = run("#$ -pe openmpi 16\n#$ -l h_rt=1:00:00", sge_site())
    assert reasons(p, "sge") == \
        "parallel environment 'openmpi' not found (site has: mpi, smp)"
    only(run("#$ -pe mpi 32\n#$ -l h_rt=1:00:00", sge_site()), "sge", "all.q")
    only(run("#$ -pe smp 16\n#$ -l h_rt=1:00:00", sge_site()), "sge", "all.q")
    p = run("#$ -pe smp 17\n#$ -l h_rt=1:00:00", sge_site())
    assert reasons(p, "sge") == "needs 17 slots per host, largest host has 16"
    only(run("#$ -pe 'mp*' 4", sge_site()), "sge", "all.q")  # a wildcard PE request
    # a Slurm job translated for the site is not held to a PE
    only(run("#SBATCH -n 4", sge_site()), "sge", "all.q")
    # defined, but not in the queue's pe_list
    cfg, snap = sge_site()
    snap.partitions[0].parallel_environments = ["smp"]
    p = run("#$ -pe mpi 32", (cfg, snap))
    assert reasons(p, "sge") == \
        "queue all.q does not offer parallel environment 'mpi' (its pe_list: smp)"


def test_grid_engine_snapshot_reads_the_parallel_environments():
    from pathlib import Path

    from diamond_jupyter.dialects.sge_commands import SgeCommands, pe_list

    out = Path(__file__).parent / "fixtures" / "outputs" / "sge"
    snap = SgeCommands().parse_snapshot("sge", {
        "pes": (out / "qconf_spl.txt").read_text(),
        "queues": (out / "qconf_sq_all.txt").read_text(),
        "hosts": (out / "qhost_xml.xml").read_text(),
        "queue": (out / "qstat_f_xml.xml").read_text()})
    assert snap.parallel_environments == ["mpi", "smp"]
    assert all(p.parallel_environments == ["smp", "mpi"] for p in snap.partitions)
    assert SgeCommands().parse_snapshot("sge", {}).parallel_environments is None
    assert pe_list("NONE") == [] and pe_list("make,[node1=mpi smp]") == ["make", "mpi", "smp"]


def pbs_site():
    nodes = [_node("cpu1", 4, 16000, ["workq"]),
             _node("gpu1", 2, 16000, ["workq"], gpus=1, gtype="v100"),
             _node("gpu2", 2, 16000, ["workq"], gpus=1, gtype="v100")]
    return (SiteConfig(name="pbs", scheduler="pbs"),
            SiteSnapshot(site="pbs", taken_at=NOW, nodes=nodes, partitions=[
                Partition(name="workq", default=True, nodes=["cpu1", "gpu1", "gpu2"])]))


def test_pbs_select_chunks_of_different_shapes():
    # chunk 1 (4 CPUs) on cpu1, chunks 2-3 (1 CPU + 1 GPU) on gpu1 and gpu2
    only(run("#PBS -l select=1:ncpus=4+2:ncpus=1:ngpus=1\n#PBS -l walltime=1:00:00",
             pbs_site()), "pbs", "workq")
    p = run("#PBS -l select=1:ncpus=4+3:ncpus=1:ngpus=1", pbs_site())
    assert reasons(p, "pbs") == "the chunks 1:ncpus=4+3:ncpus=1:ngpus=1 do not fit the " \
        "site's nodes together (free placement): they ask 3 GPUs in all, the nodes that " \
        "can hold them have 2; chunk 2 (3:ncpus=1:ngpus=1) is the one left without a host"
    p = run("#PBS -l select=1:ncpus=8+2:ncpus=1:ngpus=1", pbs_site())
    assert reasons(p, "pbs") == \
        "chunk 1 (1:ncpus=8): needs 8 ncpus per vnode, largest vnode has 4"
    # place=pack: every chunk on one host (none has 4 + 2 CPUs and 2 GPUs)
    p = run("#PBS -l select=1:ncpus=4+2:ncpus=1:ngpus=1\n#PBS -l place=pack", pbs_site())
    assert "do not fit the site's nodes together (pack placement)" in reasons(p, "pbs")
    # free placement shares a host: 1 CPU + 1 GPU twice on a 2-CPU, 2-GPU node
    cfg, snap = pbs_site()
    snap.nodes[1].gpus, snap.nodes = 2, snap.nodes[:2]
    v = only(run("#PBS -l select=1:ncpus=4+2:ncpus=1:ngpus=1", (cfg, snap)), "pbs", "workq")
    assert v.verdict == "READY"
    # a Slurm site gets a heterogeneous job of the chunks, each component placed on its own
    # nodes (before: the superset, 3 nodes of 4 CPUs and a GPU, which none is)
    slurm = (SiteConfig(name="slurmy"), pbs_site()[1].model_copy(update={"site": "slurmy"}))
    p = run("#PBS -l select=1:ncpus=4+2:ncpus=1:ngpus=1", pbs_site(), slurm)
    assert sorted(v.site for v in p.ranked if v.feasible) == ["pbs", "slurmy"], p.explain()
    assert any(n.startswith("hetjob component 1 (no --partition: the default, workq) runs "
                            "in partition workq") for n in p.verdict("slurmy").notes)
    # a chunk no node of the Slurm site holds is named by its component
    p = run("#PBS -l select=1:ncpus=4+2:ncpus=1:ngpus=2", slurm)
    assert reasons(p, "slurmy") == "hetjob component 1 (no --partition: the default, " \
        "workq): needs 2 GPUs per node, largest node has 1"


def test_a_hetero_site_where_only_one_partition_fits():
    v = only(run("#SBATCH -N 2\n#SBATCH --ntasks-per-node=64\n#SBATCH --gres=gpu:2\n"
                 "#SBATCH --mem=200G"), "hera", "gpu")
    assert "partition cpu: no GPUs on any node" in v.notes, v.notes
    p = run("#SBATCH -p cpu\n#SBATCH --gres=gpu:1")
    assert reasons(p, "hera") == "partition cpu: no GPUs on any node"


def test_explicit_partition_whose_nodes_are_too_small():
    p = run("#SBATCH -p debug\n#SBATCH -c 64\n#SBATCH -t 10:00")
    assert reasons(p, "hera") == "partition debug: needs 64 CPUs per node, largest node has 32"


def test_resources_from_jobspec_options():
    spec = JobSpec(command="x", resources=Resources(nodes=1, tasks_per_node=2,
                                                    cpus_per_task=24, gpus_per_node=1,
                                                    walltime_s=H))
    only(place(spec, [hera(), ares()], now=NOW), "hera", "gpu")
    # 96 CPUs and a GPU: the 128-CPU nodes have no GPU, the GPU nodes 64 CPUs at most
    spec.resources.cpus_per_task = 48
    p = place(spec, [hera()], now=NOW)
    assert reasons(p, "hera") == "no single node meets all the requirements together " \
        "(1 GPU on g01, g02, v01; 96 CPUs on c03, c04)"


def test_torque_node_chunks_each_take_a_host_of_their_own():
    cfg, snap = pbs_site()
    torque = (cfg.model_copy(update={"flavor": "torque"}), snap)
    # nodes=1:ppn=2+2:ppn=1:gpus=1: three hosts, two of them with a GPU
    only(run("#PBS -l nodes=1:ppn=2+2:ppn=1:gpus=1", torque), "pbs", "workq")
    # four chunks, three hosts: Torque gives each chunk a node of its own
    snap.nodes[1].gpus = 2
    p = run("#PBS -l nodes=1:ppn=1+3:ppn=1:gpus=1", torque)
    assert reasons(p, "pbs").startswith("the chunks 1:ppn=1+3:ppn=1:gpus=1 do not fit the "
                                        "site's nodes together (scatter placement)"), \
        p.explain()


def test_a_list_of_partitions_runs_in_any_of_them():
    # sbatch -p debug,gpu: the job starts in whichever partition can start it first
    only(run("#SBATCH -p debug,gpu\n#SBATCH --gres=gpu:1", hera()), "hera", "gpu")
    p = run("#SBATCH -p debug,cpu\n#SBATCH --gres=gpu:1", hera())
    assert reasons(p, "hera") == "partition cpu: no GPUs on any node | " \
        "partition debug: no GPUs on any node"


def test_tasks_of_gpus_without_a_node_count_spread_over_nodes():
    # -n 4 --gpus-per-task=2: two tasks (4 GPUs) on each of two a100 nodes
    v = only(run("#SBATCH -n 4\n#SBATCH --gpus-per-task=2", hera()), "hera", "gpu")
    assert v.billed_nodes == pytest.approx(2.0)
    p = run("#SBATCH -n 3\n#SBATCH --gpus-per-task=8", hera())
    assert reasons(p, "hera") == \
        "needs 8 GPUs per task (its tasks go over any nodes), largest node has 4"
