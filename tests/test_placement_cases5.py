"""Placement cases worked by hand, fifth sweep: a Slurm site read from `scontrol show
partition -o` and `scontrol -d show node -o` with nodes of two threads a core, cloud nodes
that sleep, a hidden partition, partitions of different PriorityTier over the same nodes and
memory that running jobs already hold (AllocMem); then PBS routing queues and queue
minimums, LSF queue limits and Grid Engine queue slots. Each case asserts the verdict per
site, the partition chosen, the start and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_placement_cases import NOW, H, only, reasons, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import JobState, JobStatus, SiteSnapshot

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


def has_note(v, text: str) -> bool:
    return any(text in n for n in v.notes)


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
