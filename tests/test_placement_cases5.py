"""Placement cases worked by hand, fifth sweep: a Slurm site read from `scontrol show
partition -o` and `scontrol -d show node -o` with nodes of two threads a core, cloud nodes
that sleep, a hidden partition, partitions of different PriorityTier over the same nodes and
memory that running jobs already hold (AllocMem); then PBS routing queues and queue
minimums, LSF queue limits and Grid Engine queue slots. Each case asserts the verdict per
site, the partition chosen, the start and that the reason names the real cause."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from test_placement_cases import NOW, H, has_note, only, reasons, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import JobState, JobStatus, Node, SiteSnapshot

slurm = SlurmCommands()

# olympus, as `scontrol show partition -o` prints it:
#  compute (default): n1-n4, 2 days (20 min when the job says none), at most 3 nodes;
#  long: n3-n4, 7 days, one node a job;
#  high: n1-n2, PriorityTier 5 over compute's 1 (its jobs are scheduled first);
#  smt: t1-t2 (two threads a core), 1 day; sock: the same nodes, 8 CPUs a socket at most;
#  gpu: g1-g3, 1 day, 64000 MB a GPU when the job asks no memory;
#  cloud: c1-c2, nodes powered down until a job needs them;
#  vip: h1, Hidden=YES, only for the account vip.
PARTITIONS = "".join(line + "\n" for line in (
    "PartitionName=compute AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=YES "
    "DefaultTime=00:20:00 MaxNodes=3 MaxTime=2-00:00:00 MinNodes=0 LLN=YES "
    "MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED Nodes=n[1-4] PriorityJobFactor=1 "
    "PriorityTier=1 Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=192 "
    "TotalNodes=4",
    "PartitionName=long AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=1 MaxTime=7-00:00:00 MinNodes=0 LLN=NO Nodes=n[3-4] "
    "PriorityTier=1 Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=96 "
    "TotalNodes=2",
    "PartitionName=high AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO "
    "Nodes=n[1-2] PriorityTier=5 Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP "
    "TotalCPUs=96 TotalNodes=2",
    "PartitionName=smt AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerSocket=UNLIMITED Nodes=t[1-2] PriorityTier=1 Hidden=NO OverSubscribe=NO "
    "PreemptMode=OFF State=UP TotalCPUs=128 TotalNodes=2",
    "PartitionName=sock AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerSocket=8 Nodes=t[1-2] PriorityTier=1 Hidden=NO OverSubscribe=NO "
    "PreemptMode=OFF State=UP TotalCPUs=128 TotalNodes=2",
    "PartitionName=gpu AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO "
    "JobDefaults=DefMemPerGPU=64000 Nodes=g[1-3] PriorityTier=1 Hidden=NO "
    "OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=160 TotalNodes=3",
    "PartitionName=cloud AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=12:00:00 MinNodes=0 LLN=NO "
    "Nodes=c[1-2] PriorityTier=1 Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP "
    "TotalCPUs=192 TotalNodes=2",
    "PartitionName=vip AllowGroups=ALL AllowAccounts=vip AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO Nodes=h1 "
    "PriorityTier=1 Hidden=YES OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=48 "
    "TotalNodes=1",
))

# n1-n4: 2 sockets x 24 cores, one thread a core: 48 CPUs, 192000 MB (n1-n2 in rack1,
# n3-n4 in rack2); t1-t2: 2 sockets x 16 cores x 2 threads: 64 CPUs, 256000 MB; g1-g2: 64
# CPUs 512000 MB 4 A100 80GB (Slurm's name from NVML); g3: 32 CPUs 256000 MB 4 L40S;
# c1-c2: 96 CPUs 384000 MB, powered down; h1: as n1.
_NODE = ("NodeName={name} Arch=x86_64 CoresPerSocket={cores} CPUAlloc={alloc} "
         "CPUEfctv={cpus} CPUTot={cpus} CPULoad=0.01 AvailableFeatures={feats} "
         "ActiveFeatures={feats} Gres={gres} GresDrain=N/A GresUsed={used} NodeAddr={name} "
         "NodeHostName={name} RealMemory={mem} AllocMem={amem} FreeMem=1000 Sockets=2 "
         "Boards=1 State={state} ThreadsPerCore={tpc} TmpDisk=0 Weight=1 Partitions={parts}")
_KINDS = {
    "n": dict(cores=24, cpus=48, tpc=1, mem=192000, gres="(null)", used="gpu:0"),
    "t": dict(cores=16, cpus=64, tpc=2, mem=256000, gres="(null)", used="gpu:0",
              feats="smt", parts="smt,sock"),
    "g": dict(cores=32, cpus=64, tpc=1, mem=512000,
              gres="gpu:nvidia_a100-sxm4-80gb:4(S:0-1)",
              used="gpu:nvidia_a100-sxm4-80gb:0(IDX:N/A)", feats="a100", parts="gpu"),
    "l": dict(cores=16, cpus=32, tpc=1, mem=256000, gres="gpu:l40s:4(S:0-1)",
              used="gpu:l40s:0(IDX:N/A)", feats="l40s", parts="gpu"),
    "c": dict(cores=48, cpus=96, tpc=1, mem=384000, gres="(null)", used="gpu:0",
              feats="cloud", parts="cloud"),
}
_NAMES = [("n1", "n", "rack1", "compute,high"), ("n2", "n", "rack1", "compute,high"),
          ("n3", "n", "rack2", "compute,long"), ("n4", "n", "rack2", "compute,long"),
          ("t1", "t", None, None), ("t2", "t", None, None), ("g1", "g", None, None),
          ("g2", "g", None, None), ("g3", "l", None, None), ("c1", "c", None, None),
          ("c2", "c", None, None), ("h1", "n", "rack3", "vip")]


def node_lines(states: dict[str, str] | None = None, alloc: dict[str, int] | None = None,
               mem: dict[str, int] | None = None) -> str:
    states, alloc, mem = states or {}, alloc or {}, mem or {}
    lines = []
    for name, kind, feats, parts in _NAMES:
        k = dict(_KINDS[kind])
        k.setdefault("feats", feats)
        k.setdefault("parts", parts)
        if kind == "c":
            default = "IDLE+CLOUD+POWERED_DOWN"
        else:
            default = "MIXED" if alloc.get(name) else "IDLE"
        lines.append(_NODE.format(name=name, alloc=alloc.get(name, 0), amem=mem.get(name, 0),
                                  state=states.get(name) or default, **k))
    return "\n".join(lines) + "\n"


def olympus(states=None, alloc=None, mem=None, jobs=(), partitions: str = PARTITIONS,
            account: str | None = None):
    snap = SiteSnapshot(site="olympus", taken_at=NOW,
                        partitions=slurm.parse_partitions(partitions),
                        nodes=slurm.parse_nodes(node_lines(states, alloc, mem)),
                        jobs=list(jobs))
    return SiteConfig(name="olympus", metadata={"architecture": "x86_64"},
                      default_account=account), snap


def busy(jid, node, hours_left, cpus, partition="compute", walltime_h=4, gpus=0):
    return JobStatus(native_id=jid, state=JobState.RUNNING, node_list=node, cpus=cpus,
                     gpus=gpus, nodes=1, partition=partition, walltime_s=walltime_h * H,
                     started_at=NOW - timedelta(hours=walltime_h - hours_left))


def waiting(jid, partition, nodes, cpus, hours, reason="Resources"):
    return JobStatus(native_id=jid, state=JobState.PENDING, nodes=nodes, cpus=cpus,
                     partition=partition, walltime_s=hours * H, reason=reason)


def full(*names: str) -> dict[str, int]:
    return {n: 48 for n in names}


# --------------------------------------------------------------- node counts and time

def test_max_nodes_of_the_default_partition():
    # compute allows 3 nodes a job: 4 cannot run there; no other partition has 4 n nodes
    p = run("#SBATCH -N 4\n#SBATCH -p compute", olympus())
    assert reasons(p, "olympus") == "needs 4 nodes, partition compute allows at most 3"
    only(run("#SBATCH -N 3", olympus()), "olympus", "compute")


def test_a_one_node_partition_refuses_two():
    p = run("#SBATCH -N 2\n#SBATCH -p long\n#SBATCH -t 3-00:00:00", olympus())
    assert reasons(p, "olympus") == "needs 2 nodes, partition long allows at most 1"


def test_walltime_above_the_default_partition_goes_to_the_long_one():
    # 3 days: above compute's 2 days, within long's 7
    v = only(run("#SBATCH -t 3-00:00:00\n#SBATCH -c 8", olympus()), "olympus", "long")
    assert "walltime 3-00:00:00 above partition compute MaxTime 2-00:00:00" in v.notes
    p = run("#SBATCH -t 8-00:00:00\n#SBATCH -p long", olympus())
    assert reasons(p, "olympus") == "walltime 8-00:00:00 above partition long MaxTime " \
        "7-00:00:00"


def test_time_min_lets_the_default_partition_take_a_long_job():
    # -t 3 days --time-min 1 day: compute cuts the limit to 1 day; both compute and long
    # start it now, compute is the default
    v = only(run("#SBATCH -t 3-00:00:00\n#SBATCH --time-min=1-00:00:00\n#SBATCH -c 8",
                 olympus()), "olympus", "compute")
    assert has_note(v, "partition compute: time limit cut to --time-min 1-00:00:00")
    assert v.estimated_runtime_s == pytest.approx(86400)


def test_no_walltime_runs_for_the_default_time():
    v = only(run("#SBATCH -c 8", olympus()), "olympus", "compute")
    assert v.estimated_runtime_s == pytest.approx(1200)  # DefaultTime 20 min


def test_a_job_without_walltime_backfills_with_its_default_time():
    # n1-n4 busy, n1 ends in 1 h, the others in 3 h; a 2-node job waits (reserved from
    # +1 h... it needs two nodes: from +3 h). A job without -t gets 20 min: it starts at
    # +1 h on n1 and ends before the 2-node job's start; with -t 4:00:00 it waits until
    # the 2-node job has its nodes (+3 h, on the two it does not take)
    jobs = [busy("a", "n1", 1, 48), busy("b", "n2", 3, 48), busy("c", "n3", 3, 48),
            busy("d", "n4", 3, 48), waiting("w", "compute", 2, 96, 4)]
    site = olympus(alloc=full("n1", "n2", "n3", "n4"), jobs=jobs)
    v = run("#SBATCH -c 8\n#SBATCH -p compute", site).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=1)
    v = run("#SBATCH -c 8\n#SBATCH -p compute\n#SBATCH -t 4:00:00", site).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=3)


# --------------------------------------------------------------- threads, cores, sockets

def test_nodes_read_with_their_threads_and_sockets():
    nodes = {n.name: n for n in olympus()[1].nodes}
    assert (nodes["t1"].cpus, nodes["t1"].threads_per_core, nodes["t1"].sockets) == (64, 2, 2)
    assert (nodes["n1"].threads_per_core, nodes["n1"].sockets) == (1, 2)


def test_nomultithread_counts_cores_not_threads():
    # t1-t2: 32 cores of 2 threads. --hint=nomultithread puts one task on a core: 64 tasks
    # on one node cannot run; 32 can, and take the whole node (both threads of each core)
    p = run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=64\n#SBATCH --hint=nomultithread\n"
            "#SBATCH -p smt", olympus())
    assert reasons(p, "olympus") == (
        "partition smt: needs 64 CPUs per node, largest node has 32 | partition smt: one task "
        "a core (--hint=nomultithread): its nodes of 2 threads a core give a job their cores "
        "only (32 of 64 CPUs)")
    v = only(run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=32\n#SBATCH --hint=nomultithread"
                 "\n#SBATCH -p smt", olympus()), "olympus", "smt")
    assert v.billed_nodes == pytest.approx(1.0)
    # without the hint, 32 tasks take half of t1's 64 CPUs
    v = only(run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=32\n#SBATCH -p smt", olympus()),
             "olympus", "smt")
    assert v.billed_nodes == pytest.approx(0.5)


def test_nomultithread_spreads_tasks_over_more_nodes():
    # 48 tasks, one a core, no node count, on smt: 32 on t1 and 16 on t2; 72 are more
    # than the 64 cores of t1 and t2
    only(run("#SBATCH -n 48\n#SBATCH --hint=nomultithread\n#SBATCH -p smt", olympus()),
         "olympus", "smt")
    p = run("#SBATCH -n 72\n#SBATCH --hint=nomultithread\n#SBATCH -p smt", olympus())
    assert reasons(p, "olympus").startswith(
        "needs 3 nodes (72 tasks, 32 to a node), partition smt has only 2")
    # threads-per-core=1 says the same
    p = run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=40\n#SBATCH --threads-per-core=1\n"
            "#SBATCH -p smt", olympus())
    assert reasons(p, "olympus").startswith(
        "partition smt: needs 40 CPUs per node, largest node has 32")


def test_nomultithread_on_nodes_of_one_thread_a_core_changes_nothing():
    v = only(run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=48\n#SBATCH --hint=nomultithread",
                 olympus()), "olympus", "compute")
    assert v.billed_nodes == pytest.approx(1.0)


def test_tasks_without_nodes_spread_over_the_partitions_own_nodes():
    # -n 100 in smt: t1-t2 have 64 CPUs each (the site's largest node has 96): Slurm
    # puts 64 on one and 36 on the other
    v = only(run("#SBATCH -n 100\n#SBATCH -p smt", olympus()), "olympus", "smt")
    assert v.estimated_start == NOW
    p = run("#SBATCH -n 130\n#SBATCH -p smt", olympus())
    assert reasons(p, "olympus") == "needs 3 nodes (130 tasks, 64 to a node), partition " \
        "smt has only 2"


def test_max_cpus_per_socket_caps_a_jobs_cpus_on_each_node():
    # sock: MaxCPUsPerSocket=8 on nodes of 2 sockets: 16 CPUs a node at most
    parts = {p.name: p for p in olympus()[1].partitions}
    assert (parts["sock"].max_cpus_per_socket, parts["smt"].max_cpus_per_socket) == (8, None)
    p = run("#SBATCH -c 20\n#SBATCH -p sock", olympus())
    assert reasons(p, "olympus") == "partition sock: needs 20 CPUs per node, its " \
        "MaxCPUsPerSocket 8 x 2 sockets allows 16"
    only(run("#SBATCH -c 16\n#SBATCH -p sock", olympus()), "olympus", "sock")
    # without -p, smt (no such cap) takes it
    only(run("#SBATCH -c 20\n#SBATCH -C smt", olympus()), "olympus", "smt")


# --------------------------------------------------------------- memory running jobs hold

def test_memory_held_by_running_jobs_is_read():
    nodes = {n.name: n for n in olympus(alloc={"n1": 16}, mem={"n1": 180000})[1].nodes}
    assert (nodes["n1"].memory_allocated, nodes["n2"].memory_allocated) == (180000, 0)


def test_a_node_whose_memory_is_taken_does_not_start_the_job_now():
    # n1 runs a 16-CPU job holding 180000 of its 192000 MB for 3 h more; n2-n4 are full
    # for 5 h. A job of 4 CPUs and 32 GB has the CPUs on n1 but not the memory: it starts
    # when that job ends (+3 h), not now
    jobs = [busy("m", "n1", 3, 16), busy("b", "n2", 5, 48, walltime_h=6),
            busy("c", "n3", 5, 48, walltime_h=6), busy("d", "n4", 5, 48, walltime_h=6)]
    site = olympus(alloc={"n1": 16, **full("n2", "n3", "n4")}, mem={"n1": 180000},
                   jobs=jobs)
    v = run("#SBATCH -c 4\n#SBATCH --mem=32G\n#SBATCH -p compute\n#SBATCH -t 1:00:00",
            site).verdict("olympus")
    assert v.feasible and v.estimated_start == NOW + timedelta(hours=3), v
    # 10 GB is within the 12000 MB left: it starts now beside that job
    v = run("#SBATCH -c 4\n#SBATCH --mem=10G\n#SBATCH -p compute\n#SBATCH -t 1:00:00",
            site).verdict("olympus")
    assert v.estimated_start == NOW


def test_memory_taken_by_jobs_the_queue_does_not_show_frees_after_a_while():
    # n1's memory is all allocated, by nothing the snapshot lists (the queue was read a
    # moment apart): held as any unexplained allocation, then free
    site = olympus(alloc={"n1": 4, **full("n2", "n3", "n4")}, mem={"n1": 190000},
                   jobs=[busy("b", "n2", 5, 48, walltime_h=6), busy("c", "n3", 5, 48,
                                                                  walltime_h=6),
                         busy("d", "n4", 5, 48, walltime_h=6)])
    v = run("#SBATCH -c 4\n#SBATCH --mem=8G\n#SBATCH -p compute\n#SBATCH -t 1:00:00",
            site).verdict("olympus")
    assert NOW < v.estimated_start < NOW + timedelta(hours=5)


# --------------------------------------------------------------- GPUs and their memory

def test_memory_per_gpu_times_the_gpus_above_the_node():
    # 4 GPUs x 150 GB = 614400 MB, above g1-g2's 512000; 100 GB a GPU fits
    p = run("#SBATCH --gres=gpu:4\n#SBATCH --mem-per-gpu=150G", olympus())
    assert reasons(p, "olympus") == "needs 614400 MB memory per node, largest node has " \
        "512000 MB"
    only(run("#SBATCH --gres=gpu:4\n#SBATCH --mem-per-gpu=100G", olympus()), "olympus",
         "gpu")


def test_default_memory_per_gpu_fills_the_l40s_node_exactly():
    # 4 L40S and no memory: DefMemPerGPU 64000 x 4 = 256000 MB, all of g3's memory
    v = only(run("#SBATCH --gres=gpu:l40s:4\n#SBATCH -c 8", olympus()), "olympus", "gpu")
    assert has_note(v, "DefMemPerGPU 64000 MB x 4 GPUs = 256000 MB a node")
    assert v.billed_nodes == pytest.approx(1.0)


def test_gpus_per_task_above_every_node():
    p = run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=3\n#SBATCH --gpus-per-task=2", olympus())
    assert reasons(p, "olympus") == "needs 6 GPUs per node, largest node has 4"


def test_gpus_per_task_without_nodes_take_two_a100_nodes():
    # 6 tasks of one A100 each: 4 on g1, 2 on g2 (Slurm spreads them by GPUs)
    v = only(run("#SBATCH -n 6\n#SBATCH --gpus-per-task=1\n#SBATCH --gres=gpu:a100:1",
                 olympus()), "olympus", "gpu")
    assert v.estimated_start == NOW


def test_gpu_names_as_nvml_writes_them():
    # g1-g2's GPUs are `nvidia_a100-sxm4-80gb`: a100, a100_80gb and A100-SXM4-80GB are all
    # of them; a100_40gb and h100 are none
    for kind in ("a100", "a100_80gb", "A100-SXM4-80GB"):
        only(run(f"#SBATCH --gres=gpu:{kind}:2", olympus()), "olympus", "gpu")
    p = run("#SBATCH --gres=gpu:a100_40gb:1", olympus())
    assert reasons(p, "olympus").startswith("no GPU of type 'a100_40gb' (site has: ")
    p = run("#SBATCH --gres=gpu:h100:1", olympus())
    assert reasons(p, "olympus").startswith("no GPU of type 'h100'")


def test_busy_a100_nodes_and_an_idle_l40s_node():
    # g1-g2 have all their GPUs taken for 2 h: a job for any 2 GPUs starts now on g3; one
    # for two A100s waits 2 h
    jobs = [busy("x", "g1", 2, 16, partition="gpu", gpus=4),
            busy("y", "g2", 2, 16, partition="gpu", gpus=4)]
    st = {"g1": "MIXED", "g2": "MIXED"}
    cfg, snap = olympus(states=st, alloc={"g1": 16, "g2": 16}, jobs=jobs)
    for n in snap.nodes:
        if n.name in ("g1", "g2"):
            n.gpus_allocated = 4
    v = run("#SBATCH --gres=gpu:2\n#SBATCH -t 1:00:00", (cfg, snap)).verdict("olympus")
    assert v.estimated_start == NOW
    v = run("#SBATCH --gres=gpu:a100:2\n#SBATCH -t 1:00:00", (cfg, snap)).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=2)


# --------------------------------------------------------------- features

def test_counts_of_two_features_in_brackets():
    # [rack1*2&rack2*1]: two nodes of rack1 and one of rack2, 3 nodes of compute
    only(run("#SBATCH -N 3\n#SBATCH -C '[rack1*2&rack2*1]'", olympus()), "olympus",
         "compute")
    p = run("#SBATCH -N 3\n#SBATCH -C '[rack1*3]'", olympus())
    assert reasons(p, "olympus") == \
        "constraint 'rack1*3' needs 3 nodes with 'rack1', site has 2"


def test_either_rack_and_a_rack_that_does_not_exist():
    only(run("#SBATCH -N 2\n#SBATCH -C 'rack1|rack2'", olympus()), "olympus", "compute")
    p = run("#SBATCH -C 'rack1|rack9'", olympus())
    assert reasons(p, "olympus").startswith(
        "constraint 'rack1|rack9' names feature(s) the site does not have: rack9")


def test_same_rack_for_every_node_waits_for_a_rack_to_free():
    # [rack1|rack2] with 2 nodes: n1 (rack1) and n3 (rack2) busy 2 h, n2 and n4 idle: a
    # job of two nodes in one rack waits, one of any two nodes does not
    jobs = [busy("a", "n1", 2, 48), busy("b", "n3", 2, 48)]
    site = olympus(alloc=full("n1", "n3"), jobs=jobs)
    v = run("#SBATCH -N 2\n#SBATCH -C '[rack1|rack2]'\n#SBATCH -t 1:00:00\n#SBATCH -p compute",
            site).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=2)
    v = run("#SBATCH -N 2\n#SBATCH -t 1:00:00\n#SBATCH -p compute", site).verdict("olympus")
    assert v.estimated_start == NOW


# --------------------------------------------------------------- node states

def test_drained_and_not_responding_nodes_leave_too_few():
    site = olympus(states={"n1": "IDLE+DRAIN", "n2": "DOWN*", "n3": "MIXED+DRAIN"})
    p = run("#SBATCH -N 2\n#SBATCH -p compute", site)
    assert reasons(p, "olympus") == \
        "needs 2 nodes, partition compute has only 1 usable (others drained n1; down n2; " \
        "draining n3)"
    only(run("#SBATCH -N 1\n#SBATCH -p compute", site), "olympus", "compute")


def test_cloud_nodes_powered_down_take_the_job():
    # c1-c2 are IDLE+CLOUD+POWERED_DOWN: Slurm boots them for the job; they count as usable,
    # the start planned after the boot (ResumeTimeout, 60 s by default; since the follow-ups
    # of sweep 19, before at once with a note)
    v = only(run("#SBATCH -N 2\n#SBATCH -c 90\n#SBATCH -t 2:00:00", olympus()), "olympus",
             "cloud")
    assert v.estimated_start == NOW + timedelta(seconds=60)
    assert has_note(v, "partition cloud: c1, c2 powered down: Slurm boots the nodes it "
                       "gives the job first, planned to take 60 s")
    # c1 already up (IDLE+CLOUD): a one-node job needs no boot
    v = only(run("#SBATCH -N 1\n#SBATCH -c 90", olympus(states={"c1": "IDLE+CLOUD"})),
             "olympus", "cloud")
    assert not has_note(v, "powered down")
    site = olympus(states={"c1": "IDLE+CLOUD+POWERED_DOWN+DRAIN", "c2": "DOWN+CLOUD"})
    p = run("#SBATCH -N 1\n#SBATCH -c 90\n#SBATCH -p cloud", site)
    assert reasons(p, "olympus") == \
        "needs 1 node, partition cloud has only 0 usable (others drained c1; down c2)"


def test_a_node_planned_for_a_waiting_job_still_backfills_a_short_one():
    # n1-n2 full for 3 h, n3 for 10 h; n4 idle but PLANNED: the 3-node job waiting will
    # take it with n1-n2 at +3 h, for 4 h. A 1 h job fits on n4 before that; a 4 h job
    # would delay it, so it starts when that job ends (+7 h)
    jobs = [busy("a", "n1", 3, 48), busy("b", "n2", 3, 48),
            busy("c", "n3", 10, 48, walltime_h=12), waiting("w", "compute", 3, 144, 4)]
    site = olympus(states={"n4": "IDLE+PLANNED"}, alloc=full("n1", "n2", "n3"), jobs=jobs)
    v = run("#SBATCH -c 8\n#SBATCH -t 1:00:00\n#SBATCH -p compute", site).verdict("olympus")
    assert v.estimated_start == NOW
    v = run("#SBATCH -c 8\n#SBATCH -t 4:00:00\n#SBATCH -p compute", site).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=7)


def test_maintenance_on_one_node_of_two():
    site = olympus(states={"n3": "IDLE+MAINTENANCE+RESERVED"})
    v = only(run("#SBATCH -t 3-00:00:00", site), "olympus", "long")
    assert v.estimated_start == NOW  # on n4
    site = olympus(states={"n3": "IDLE+MAINTENANCE+RESERVED", "n4": "MAINT"})
    p = run("#SBATCH -t 3-00:00:00", site)
    assert "needs 1 node, partition long has only 0 usable (others in maintenance: n3, " \
        "n4)" in reasons(p, "olympus")


# --------------------------------------------------------------- who goes where, and first

def test_partitions_read_with_hidden_and_priority_tiers():
    parts = {p.name: p for p in olympus()[1].partitions}
    assert parts["vip"].hidden and not parts["compute"].hidden
    assert (parts["high"].priority_tier, parts["compute"].priority_tier) == (5, 1)
    # the probe asks for hidden partitions too: a job may name one
    assert "--all" in slurm.snapshot_argvs()["partitions"]


def test_hidden_partition_only_for_a_job_that_names_it():
    # n1-n4 full for 2 h; the hidden vip's h1 is idle. A job that names no partition is
    # not put in vip (Slurm never sends it there): it waits for compute
    jobs = [busy(f"r{i}", f"n{i}", 2, 48) for i in range(1, 5)]
    site = olympus(alloc=full("n1", "n2", "n3", "n4"), jobs=jobs, account="vip")
    v = only(run("#SBATCH -c 8\n#SBATCH -t 1:00:00\n#SBATCH -C 'rack1|rack2|rack3'", site),
             "olympus", "compute")
    assert v.estimated_start == NOW + timedelta(hours=2)
    v = only(run("#SBATCH -c 8\n#SBATCH -t 1:00:00\n#SBATCH -p vip", site), "olympus", "vip")
    assert v.estimated_start == NOW


def test_hidden_partition_named_by_an_account_it_does_not_allow():
    p = run("#SBATCH -p vip\n#SBATCH -A physics", olympus())
    v = p.verdict("olympus")
    assert v.verdict == "RESTRICTED", p.explain()
    assert v.reasons == ["account 'physics' not allowed in partition 'vip' (allowed: vip)"]


def test_higher_priority_tier_is_scheduled_before_the_waiting_jobs_of_a_lower_one():
    # n1-n4 full: n1 frees in 1 h, the others in 3 h. A compute job waits for one node,
    # 4 h. A job of high (PriorityTier 5, n1-n2) is scheduled before it: n1 at +1 h. The
    # same job in compute (tier 1) is behind it: n1 goes to the waiting job, so +3 h
    jobs = [busy("a", "n1", 1, 48), busy("b", "n2", 3, 48), busy("c", "n3", 3, 48),
            busy("d", "n4", 3, 48), waiting("w", "compute", 1, 48, 4)]
    site = olympus(alloc=full("n1", "n2", "n3", "n4"), jobs=jobs)
    v = run("#SBATCH -N 1\n#SBATCH --exclusive\n#SBATCH -t 4:00:00\n#SBATCH -p high",
            site).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=1)
    v = run("#SBATCH -N 1\n#SBATCH --exclusive\n#SBATCH -t 4:00:00\n#SBATCH -p compute",
            site).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=3)
    # a job free to go to either is placed in high
    v = run("#SBATCH -N 1\n#SBATCH --exclusive\n#SBATCH -t 4:00:00\n#SBATCH -C 'rack1|rack2'",
            site).verdict("olympus")
    assert (v.partition, v.estimated_start) == ("high", NOW + timedelta(hours=1))


def test_a_waiting_job_of_the_higher_tier_stays_ahead():
    # the waiting job is high's: a compute job stays behind it for n1
    jobs = [busy("a", "n1", 1, 48), busy("b", "n2", 3, 48), busy("c", "n3", 3, 48),
            busy("d", "n4", 3, 48), waiting("w", "high", 1, 48, 4)]
    site = olympus(alloc=full("n1", "n2", "n3", "n4"), jobs=jobs)
    v = run("#SBATCH -N 1\n#SBATCH --exclusive\n#SBATCH -t 4:00:00\n#SBATCH -p compute",
            site).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=3)


def test_account_allowed_by_the_default_account_of_the_site():
    # the sites file's default account is vip: -p vip needs no -A
    only(run("#SBATCH -p vip\n#SBATCH -c 4", olympus(account="vip")), "olympus", "vip")


# --------------------------------------------------------------- PBS queues

# pbsq as `qstat -Q -f -F json` prints it: `workq` takes anything up to 24 h; `small` jobs
# of 16 CPUs at most, `large` of 64 at least (resources_min); `submit` is a routing queue
# that sends a job to the first of small, large that takes it; `gpuq` 2 GPUs at most.
PBS_QUEUES = json.dumps({"Queue": {
    "workq": {"queue_type": "Execution", "enabled": "True", "started": "True",
              "resources_max": {"walltime": "24:00:00"}},
    "small": {"queue_type": "Execution", "enabled": "True", "started": "True",
              "resources_max": {"ncpus": 16, "walltime": "12:00:00"}},
    "large": {"queue_type": "Execution", "enabled": "True", "started": "True",
              "resources_min": {"ncpus": 64}, "resources_max": {"walltime": "48:00:00"}},
    "submit": {"queue_type": "Route", "enabled": "True", "started": "True",
               "route_destinations": "small,large"},
    "gpuq": {"queue_type": "Execution", "enabled": "True", "started": "True",
             "resources_max": {"ngpus": 2}},
}})


def pbsq():
    # vnodes of three shapes: v1-v2 64 CPUs 4 GPUs; v3 64 CPUs 2 GPUs; v4-v5 64 CPUs none
    nodes = [Node(name=f"v{i}", state="free", cpus=64, memory_mb=256000, gpus=g,
                  gpu_type="a100" if g else None)
             for i, g in ((1, 4), (2, 4), (3, 2), (4, 0), (5, 0))]
    snap = SiteSnapshot(site="pbsq", taken_at=NOW, nodes=nodes,
                        partitions=PbsCommands().parse_queues(PBS_QUEUES))
    next(p for p in snap.partitions if p.name == "workq").default = True
    return SiteConfig(name="pbsq", scheduler="pbs"), snap


def test_pbs_queue_minimum_turns_away_a_small_job():
    parts = {p.name: p for p in pbsq()[1].partitions}
    assert parts["large"].min_cpus == 64 and parts["small"].min_cpus is None
    p = run("#PBS -q large\n#PBS -l select=1:ncpus=8", pbsq())
    assert reasons(p, "pbsq") == \
        "needs 8 ncpus in all, queue large takes only jobs of at least 64"
    only(run("#PBS -q large\n#PBS -l select=2:ncpus=32", pbsq()), "pbsq", "large")


def test_pbs_routing_queue_sends_a_job_to_its_first_destination_that_takes_it():
    # 8 CPUs: small takes it; 96 CPUs: above small's 16, large takes it
    parts = {p.name: p for p in pbsq()[1].partitions}
    assert parts["submit"].routes_to == ["small", "large"]
    v = only(run("#PBS -q submit\n#PBS -l select=1:ncpus=8", pbsq()), "pbsq", "small")
    assert has_note(v, "routing queue submit sends it to small")
    v = only(run("#PBS -q submit\n#PBS -l select=2:ncpus=48", pbsq()), "pbsq", "large")
    assert has_note(v, "routing queue submit sends it to large")


def test_pbs_routing_queue_none_of_whose_destinations_takes_the_job():
    # 32 CPUs: above small's 16, below large's 64
    p = run("#PBS -q submit\n#PBS -l select=1:ncpus=32", pbsq())
    r = reasons(p, "pbsq")
    assert "needs 32 ncpus in all, queue small allows a job at most 16" in r, r
    assert "needs 32 ncpus in all, queue large takes only jobs of at least 64" in r, r


def test_pbs_job_naming_no_queue_is_never_placed_in_the_routing_queue():
    v = only(run("#PBS -l select=1:ncpus=8", pbsq()), "pbsq")
    assert v.partition != "submit"


def test_pbs_vnodes_of_different_gpu_counts():
    # 4 GPUs in one chunk: v1 or v2; 3 chunks of 2 GPUs: v1, v2, v3 (or two on one)
    only(run("#PBS -l select=1:ncpus=8:ngpus=4", pbsq()), "pbsq", "workq")
    p = run("#PBS -l select=1:ncpus=8:ngpus=6", pbsq())
    assert reasons(p, "pbsq") == "needs 6 GPUs per vnode, largest vnode has 4"
    # gpuq: 2 GPUs a job at most
    p = run("#PBS -q gpuq\n#PBS -l select=2:ncpus=4:ngpus=2", pbsq())
    assert reasons(p, "pbsq") == "needs 4 GPUs in all, queue gpuq allows a job at most 2"


# --------------------------------------------------------------- Grid Engine PEs

def _pe(name: str, rule: str) -> str:
    return (f"pe_name            {name}\nslots              999\nuser_lists         NONE\n"
            f"xuser_lists        NONE\nstart_proc_args    NONE\nstop_proc_args     NONE\n"
            f"allocation_rule    {rule}\ncontrol_slaves     TRUE\njob_is_first_task  FALSE\n"
            "urgency_slots      min\naccounting_summary FALSE\n\n")


# `qconf -sp` of each PE: smp all on one host, mpi filled up host by host, rr round robin,
# mpi8 8 slots on every host, and one named `threads` (a shared-memory name) whose admin
# let it spread
PE_TEXT = (_pe("smp", "$pe_slots") + _pe("mpi", "$fill_up") + _pe("rr", "$round_robin")
           + _pe("mpi8", "8") + _pe("threads", "$fill_up"))


def gridq():
    """Grid Engine: s1-s2 16 slots 64000 MB in all.q (24 h) and short.q (30 min)."""
    from test_placement_cases4 import sge_queues

    cfg, snap = sge_queues()
    snap.pe_rules = SgeCommands().parse_snapshot("sgeq", {"pe_rules": PE_TEXT}).pe_rules
    snap.parallel_environments = list(snap.pe_rules or {})
    for p in snap.partitions:
        p.parallel_environments = None
    return cfg, snap


def test_pe_allocation_rules_are_read():
    assert gridq()[1].pe_rules == {"smp": "$pe_slots", "mpi": "$fill_up",
                                   "rr": "$round_robin", "mpi8": "8", "threads": "$fill_up"}
    assert "pe_rules" in SgeCommands().snapshot_argvs()


def test_pe_slots_on_one_host_only():
    # $pe_slots: 24 slots on one host of 16 cannot start; 16 can
    p = run("#$ -pe smp 24", gridq())
    assert reasons(p, "sgeq") == "needs 24 slots per host, largest host has 16"
    only(run("#$ -pe smp 16", gridq()), "sgeq", "all.q")


def test_fill_up_spreads_over_hosts_even_under_a_shared_memory_name():
    # `threads` is $fill_up here: 24 slots take s1 and s2 (the name alone read one host)
    only(run("#$ -pe threads 24", gridq()), "sgeq", "all.q")
    only(run("#$ -pe rr 32", gridq()), "sgeq", "all.q")
    p = run("#$ -pe mpi 40", gridq())
    assert reasons(p, "sgeq").startswith("needs 3 hosts (40 tasks, 16 to a host)")


def test_fixed_allocation_rule_needs_a_multiple_of_it():
    # mpi8: 8 slots on each host: 16 slots on 2 hosts; 12 slots never start; 24 need 3
    only(run("#$ -pe mpi8 16", gridq()), "sgeq", "all.q")
    p = run("#$ -pe mpi8 12", gridq())
    assert reasons(p, "sgeq") == "parallel environment 'mpi8' puts 8 slots on every host " \
        "(allocation_rule 8): 12 slots are no multiple of it"
    p = run("#$ -pe mpi8 24", gridq())
    assert reasons(p, "sgeq").startswith("needs 3 hosts")


def test_queue_h_rt_is_the_limit_of_a_job_that_gives_none():
    # short.q's h_rt 0:30:00: a job naming it without -l h_rt runs 30 min at most
    v = only(run("#$ -q short.q\n#$ -pe smp 2", gridq()), "sgeq", "short.q")
    assert v.estimated_runtime_s == pytest.approx(1800)


def test_pbs_queue_max_run_makes_a_job_wait_for_a_running_one():
    # workq runs 2 jobs at once ([o:PBS_ALL=2]) and runs 2 (4 CPUs each on v4 and v5, 1 h
    # and 3 h left): the nodes have room, the queue has none until the first ends (+1 h);
    # with a job waiting in it ahead, until the second (+3 h); small has no such limit
    text = json.loads(PBS_QUEUES)
    text["Queue"]["workq"]["max_run"] = "[o:PBS_ALL=2]"
    cfg, snap = pbsq()
    snap.partitions = PbsCommands().parse_queues(json.dumps(text))
    assert {p.name: p.max_running for p in snap.partitions}["workq"] == 2
    snap.jobs = [busy("a", "v4", 1, 4, partition="workq"), busy("b", "v5", 3, 4,
                                                                 partition="workq")]
    for n in snap.nodes[3:]:
        n.cpus_allocated, n.state = 4, "free"
    v = run("#PBS -q workq\n#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00",
            (cfg, snap)).verdict("pbsq")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "queue workq runs at most 2 jobs at once (max_run) and runs 2")
    snap.jobs.append(waiting("w", "workq", 1, 4, 1, reason="Queue limit"))
    v = run("#PBS -q workq\n#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00",
            (cfg, snap)).verdict("pbsq")
    assert v.estimated_start == NOW + timedelta(hours=3)
    v = run("#PBS -q small\n#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00",
            (cfg, snap)).verdict("pbsq")
    assert v.estimated_start == NOW


# --------------------------------------------------------------- LSF queue limits and hosts

# `bqueues -o 'queue_name status max runlimit' -json` and the limits asked apart:
# normal on every host; short 1 h on h1-h2 only, 16 tasks a job at most, processes of
# 4 GB at most (MEMLIMIT, KB); big on h3-h4 (hostA+2: a preference), 32 tasks at least
LSF_QUEUES = json.dumps({"COMMAND": "bqueues", "QUEUES": 3, "RECORDS": [
    {"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": "-", "RUNLIMIT": "720.0 min"},
    {"QUEUE_NAME": "short", "STATUS": "Open:Active", "MAX": "-", "RUNLIMIT": "60.0 min"},
    {"QUEUE_NAME": "big", "STATUS": "Open:Active", "MAX": "-", "RUNLIMIT": "-"}]})
LSF_LIMITS = json.dumps({"COMMAND": "bqueues", "QUEUES": 3, "RECORDS": [
    {"QUEUE_NAME": "normal", "HOSTS": "all", "MAX_MEMLIMIT": "-", "MAX_TASKLIMIT": "-",
     "MIN_TASKLIMIT": "-"},
    {"QUEUE_NAME": "short", "HOSTS": "h1 h2", "MAX_MEMLIMIT": "4194304",
     "MAX_TASKLIMIT": "16", "MIN_TASKLIMIT": "-"},
    {"QUEUE_NAME": "big", "HOSTS": "h3+2 h4", "MAX_MEMLIMIT": "-", "MAX_TASKLIMIT": "-",
     "MIN_TASKLIMIT": "32"}]})


def lsfq(limits: str = LSF_LIMITS):
    from diamond_jupyter.dialects.lsf_commands import LsfCommands

    nodes = [Node(name=f"h{i}", state="ok", cpus=40, memory_mb=192000) for i in range(1, 5)]
    queues = LsfCommands().parse_queues(LSF_QUEUES, limits)
    queues[0].default = True
    return SiteConfig(name="lsfq", scheduler="lsf"), SiteSnapshot(
        site="lsfq", taken_at=NOW, nodes=nodes, partitions=queues)


def test_lsf_queue_hosts_and_limits_are_read():
    from diamond_jupyter.dialects.lsf_commands import LsfCommands

    q = {p.name: p for p in lsfq()[1].partitions}
    assert (q["normal"].nodes, q["short"].nodes, q["big"].nodes) == ([], ["h1", "h2"],
                                                                     ["h3", "h4"])
    assert (q["short"].max_cpus, q["short"].max_mem_per_process_mb, q["big"].min_cpus) == \
        (16, 4096, 32)
    assert q["normal"].max_cpus is None and q["normal"].max_mem_per_process_mb is None
    assert "queue_limits" in LsfCommands().snapshot_argvs()
    # an LSF that could not answer the limits: nothing is limited
    assert lsfq("")[1].partitions[1].max_cpus is None


def test_lsf_task_limit_of_a_queue():
    p = run("#BSUB -q short\n#BSUB -n 24\n#BSUB -W 30", lsfq())
    assert reasons(p, "lsfq") == "needs 24 slots in all, queue short allows a job at most 16"
    p = run("#BSUB -q big\n#BSUB -n 8", lsfq())
    assert reasons(p, "lsfq") == \
        "needs 8 slots in all, queue big takes only jobs of at least 32"
    only(run("#BSUB -q big\n#BSUB -n 64", lsfq()), "lsfq", "big")


def test_lsf_memory_limit_per_process():
    p = run("#BSUB -q short\n#BSUB -n 4\n#BSUB -M 6000\n#BSUB -W 30", lsfq())
    assert reasons(p, "lsfq") == "queue short: needs 6000 MB memory per task slot, its " \
        "MEMLIMIT is 4096 MB (a process above it is killed)"
    only(run("#BSUB -n 4\n#BSUB -M 6000\n#BSUB -W 30", lsfq()), "lsfq", "normal")


def test_lsf_queue_runs_only_on_its_hosts():
    # h1-h2 busy 2 h; short runs only there, so its job waits; normal starts it on h3
    from test_placement_cases3 import running

    cfg, snap = lsfq()
    snap.jobs = [running("a", "h1", 2, 40, partition="normal"),
                 running("b", "h2", 2, 40, partition="normal")]
    for n in snap.nodes[:2]:
        n.cpus_allocated = 40
    v = run("#BSUB -q short\n#BSUB -n 4\n#BSUB -W 30", (cfg, snap)).verdict("lsfq")
    assert v.estimated_start == NOW + timedelta(hours=2)
    v = run("#BSUB -n 4\n#BSUB -W 30", (cfg, snap)).verdict("lsfq")
    assert (v.partition, v.estimated_start) == ("normal", NOW)


# --------------------------------------------------------------- more of the same, by other roads

def test_socket_cap_spreads_tasks_without_a_node_count():
    # sock: 16 CPUs a node (8 a socket x 2): 32 tasks take t1 and t2, 40 would need 3
    only(run("#SBATCH -n 32\n#SBATCH -p sock", olympus()), "olympus", "sock")
    p = run("#SBATCH -n 40\n#SBATCH -p sock", olympus())
    assert reasons(p, "olympus") == (
        "partition sock: needs 3 nodes at its MaxCPUsPerSocket 8 x 2 sockets (16 a node) "
        "(40 tasks of 1 CPU), has 2 that can run it")


def test_slurmrestd_nodes_and_partitions_carry_threads_memory_and_hidden():
    from diamond_jupyter.dialects.slurm_rest import parse_nodes, parse_partitions

    nodes = json.dumps({"nodes": [
        {"name": "t1", "state": ["MIXED"], "cpus": 64, "threads": 2, "sockets": 2,
         "cores": 16, "real_memory": 256000, "alloc_memory": 200000, "alloc_cpus": 8}]})
    (n,) = parse_nodes(nodes)
    assert (n.threads_per_core, n.sockets, n.memory_allocated) == (2, 2, 200000)
    parts = json.dumps({"partitions": [
        {"name": "vip", "nodes": "h1", "flags": ["HIDDEN"]},
        {"name": "compute", "nodes": "n[1-4]", "flags": ["default"]}]})
    got = {p.name: p.hidden for p in parse_partitions(parts)}
    assert got == {"vip": True, "compute": False}


def test_memory_held_on_every_node_of_a_two_node_job():
    # n1 and n2 each have 40000 MB left of 192000 (jobs holding the rest end in 1 h and
    # 2 h); n3-n4 are full for 4 h. Two nodes of 50 GB each wait for both to free (+2 h)
    jobs = [busy("x", "n1", 1, 8), busy("y", "n2", 2, 8), busy("c", "n3", 4, 48),
            busy("d", "n4", 4, 48)]
    site = olympus(alloc={"n1": 8, "n2": 8, **full("n3", "n4")},
                   mem={"n1": 152000, "n2": 152000}, jobs=jobs)
    v = run("#SBATCH -N 2\n#SBATCH -c 4\n#SBATCH --mem=50G\n#SBATCH -t 1:00:00\n"
            "#SBATCH -p compute", site).verdict("olympus")
    assert v.estimated_start == NOW + timedelta(hours=2)
    v = run("#SBATCH -N 2\n#SBATCH -c 4\n#SBATCH --mem=30G\n#SBATCH -t 1:00:00\n"
            "#SBATCH -p compute", site).verdict("olympus")
    assert v.estimated_start == NOW


# --------------------------------------------------------------- QOS limits

# `sacctmgr -nP show qos format=Name,MaxTRES,MaxTRESPerNode,MaxTRESPerUser,GrpTRES,MaxWall`
QOS_TEXT = "\n".join((
    "normal|||||",
    "debug|cpu=16,node=1||||00:30:00",
    "team||||cpu=96,gres/gpu=8|",
    "gpupart|gres/gpu=6|gres/gpu=4|cpu=128||1-00:00:00",
    "big|mem=1T,node=8|||cpu=4096|7-00:00:00",
)) + "\n"


def with_qos():
    from diamond_jupyter.dialects.slurm_commands import parse_qos

    text = PARTITIONS.replace("PartitionName=gpu AllowGroups=ALL",
                              "PartitionName=gpu QoS=gpupart AllowGroups=ALL")
    cfg, snap = olympus(partitions=text)
    snap.qos = parse_qos(QOS_TEXT)
    return cfg, snap


def test_qos_limits_are_read():
    from diamond_jupyter.dialects.slurm_commands import parse_qos

    q = with_qos()[1].qos
    assert q["debug"].max_tres_per_job == {"cpu": 16, "node": 1}
    assert q["debug"].max_wall_s == 1800 and q["normal"].max_wall_s is None
    assert q["gpupart"].max_tres_per_node == {"gres/gpu": 4}
    assert q["big"].max_tres_per_job == {"mem": 1048576, "node": 8}
    assert {p.name: p.qos for p in with_qos()[1].partitions}["gpu"] == "gpupart"
    assert "sacctmgr" in " ".join(slurm.snapshot_argvs()["qos"])
    # a site without accounting says so in words: no QOS is read, nothing breaks
    assert parse_qos("You are not running a supported accounting_storage plugin\n") == {}


def test_the_jobs_qos_caps_its_cpus_nodes_and_time():
    p = run("#SBATCH -q debug\n#SBATCH -n 32\n#SBATCH -t 0:20:00\n#SBATCH -p compute",
            with_qos())
    assert reasons(p, "olympus") == "needs 32 CPUs in all, the job's QOS debug allows 16 " \
        "(MaxTRESPerJob cpu=16)"
    p = run("#SBATCH -q debug\n#SBATCH -c 8\n#SBATCH -t 1:00:00\n#SBATCH -p compute",
            with_qos())
    assert reasons(p, "olympus") == "walltime 1:00:00 above the job's QOS debug MaxWall " \
        "0:30:00"
    only(run("#SBATCH -q debug\n#SBATCH -c 8\n#SBATCH -t 0:20:00", with_qos()), "olympus",
         "compute")


def test_the_partitions_qos_binds_every_job_in_it():
    # gpu's QOS gpupart: 6 GPUs a job, 4 a node: 2 nodes of 4 GPUs (8) cannot run there
    p = run("#SBATCH -N 2\n#SBATCH --gres=gpu:a100:4\n#SBATCH -p gpu", with_qos())
    assert reasons(p, "olympus") == "needs 8 GPUs in all, partition gpu's QOS gpupart " \
        "allows 6 (MaxTRESPerJob gres/gpu=6)"
    only(run("#SBATCH -N 2\n#SBATCH --gres=gpu:a100:3", with_qos()), "olympus", "gpu")


def test_a_group_limit_the_job_fits_alone_only_makes_it_wait():
    # team: GrpTRES cpu=96 for all its jobs together: 144 CPUs can never run; 96 can
    # (whatever the QOS's other jobs use now, they end)
    p = run("#SBATCH -q team\n#SBATCH -N 3\n#SBATCH --exclusive\n#SBATCH -c 48", with_qos())
    assert "needs 144 CPUs in all, the job's QOS team allows 96 (GrpTRES cpu=96)" in \
        reasons(p, "olympus")
    only(run("#SBATCH -q team\n#SBATCH -N 2\n#SBATCH -c 48\n#SBATCH -p compute",
             with_qos()), "olympus", "compute")


def test_a_qos_the_site_does_not_list_is_not_checked():
    only(run("#SBATCH -q nosuch\n#SBATCH -c 4\n#SBATCH -p compute", with_qos()), "olympus",
         "compute")


# --------------------------------------------------------------- a node of two GPU types

def test_a_node_with_two_gpu_types_offers_each_its_own_count():
    # x1 has 2 A100 and 2 V100 (Gres=gpu:a100:2(S:0),gpu:v100:2(S:1)): 2 A100 or a V100
    # fit; 3 A100 do not (4 GPUs, but only 2 of them A100); 4 of any type do
    line = ("NodeName=x1 Arch=x86_64 CPUAlloc=0 CPUTot=32 RealMemory=256000 AllocMem=0 "
            "Sockets=2 ThreadsPerCore=1 Gres=gpu:a100:2(S:0),gpu:v100:2(S:1) "
            "GresUsed=gpu:a100:0(IDX:N/A),gpu:v100:0(IDX:N/A) State=IDLE Partitions=mix")
    parts = slurm.parse_partitions("PartitionName=mix Default=YES MaxTime=1-00:00:00 "
                                   "Nodes=x1 State=UP")
    (node,) = slurm.parse_nodes(line)
    assert (node.gpus, node.gpu_types) == (4, {"a100": 2, "v100": 2})
    site = (SiteConfig(name="mix"), SiteSnapshot(site="mix", taken_at=NOW, partitions=parts,
                                                 nodes=[node]))
    only(run("#SBATCH --gres=gpu:a100:2", site), "mix", "mix")
    only(run("#SBATCH --gres=gpu:v100:1", site), "mix", "mix")
    only(run("#SBATCH --gres=gpu:4", site), "mix", "mix")
    p = run("#SBATCH --gres=gpu:a100:3", site)
    assert reasons(p, "mix") == "needs 3 GPUs of type 'a100' per node, largest node has 2 " \
        "of them"
