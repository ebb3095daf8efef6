"""Placement cases worked by hand, fourth sweep: what a Slurm partition does to a job that
leaves something unsaid or asks past a limit (DefMemPerCPU / DefMemPerNode, MaxMemPerCPU
raising the CPUs, MaxMemPerNode, DefaultTime, MinNodes), nodes' specialised cores and
memory (CoreSpecCount, MemSpecLimit), who may use a partition (DenyAccounts, AllowQos),
partition and node states (DRAIN, RESERVED, maintenance), OverSubscribe=EXCLUSIVE,
preemptible partitions, MPS and shards of GPUs, and PBS / LSF / Grid Engine queue limits.
Sites are built from the scheduler's own output (`scontrol show partition -o`,
`scontrol -d show node -o`, `qstat -Q -f -F json`, `bqueues -json`, `qconf -sq`), so each
case goes through the reader as well. Each case asserts the verdict per site, the
partition chosen and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from test_placement_cases import NOW, H, has_note, only, reasons, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import JobState, JobStatus, Node, SiteSnapshot

OUT = Path(__file__).parent / "fixtures" / "outputs"
slurm = SlurmCommands()

# athena, a Slurm site of four node kinds, as `scontrol show partition -o` prints it:
#  batch (default): c1-c2 and d1-d2, 1 day (30 min when the job says none), memory
#    3900 MB per CPU when the job asks none, at most 7800 MB per CPU, at most 4 nodes;
#  wide: the same nodes, jobs of 2 nodes at least;
#  bigmem: m1-m2, 3 days, 64000 MB a node when the job asks none, at most 480000 MB a
#    node, not for the account `guest`;
#  scav: every CPU node, PreemptMode=REQUEUE below batch and bigmem (PriorityTier 1 < 10);
#  gpu: g1-g3, QOS normal or gpu only, at most 4000 MB per CPU;
#  excl: d1-d2, whole nodes to every job (OverSubscribe=EXCLUSIVE), 12 h;
#  maint: c1-c2, State=DRAIN; old: State=INACTIVE.
PARTITIONS = "".join(line + "\n" for line in (
    "PartitionName=batch AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=YES "
    "DefaultTime=00:30:00 MaxNodes=4 MaxTime=1-00:00:00 MinNodes=0 "
    "MaxCPUsPerNode=UNLIMITED Nodes=c[1-2],d[1-2] PriorityJobFactor=1 PriorityTier=10 "
    "OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=192 TotalNodes=4 "
    "DefMemPerCPU=3900 MaxMemPerCPU=7800",
    "PartitionName=wide AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=2-00:00:00 MinNodes=2 "
    "Nodes=c[1-2],d[1-2] PriorityTier=10 OverSubscribe=NO PreemptMode=OFF State=UP "
    "TotalCPUs=192 TotalNodes=4 DefMemPerCPU=3900 MaxMemPerNode=UNLIMITED",
    "PartitionName=bigmem AllowGroups=ALL DenyAccounts=guest AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=3-00:00:00 MinNodes=0 Nodes=m[1-2] "
    "PriorityTier=10 OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=128 "
    "TotalNodes=2 DefMemPerNode=64000 MaxMemPerNode=480000",
    "PartitionName=scav AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 "
    "Nodes=c[1-2],d[1-2],m[1-2] PriorityTier=1 OverSubscribe=NO PreemptMode=REQUEUE "
    "State=UP TotalCPUs=320 TotalNodes=6 DefMemPerNode=UNLIMITED "
    "MaxMemPerNode=UNLIMITED",
    "PartitionName=gpu AllowGroups=ALL AllowAccounts=ALL AllowQos=normal,gpu "
    "Default=NO DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=2-00:00:00 MinNodes=0 "
    "Nodes=g[1-3] PriorityTier=10 OverSubscribe=NO PreemptMode=OFF State=UP "
    "TotalCPUs=96 TotalNodes=3 DefMemPerNode=UNLIMITED MaxMemPerCPU=4000",
    "PartitionName=excl AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=12:00:00 MinNodes=0 Nodes=d[1-2] "
    "PriorityTier=10 OverSubscribe=EXCLUSIVE PreemptMode=OFF State=UP TotalCPUs=128 "
    "TotalNodes=2 DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED",
    "PartitionName=maint AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "MaxTime=UNLIMITED Nodes=c[1-2] PriorityTier=10 OverSubscribe=NO PreemptMode=OFF "
    "State=DRAIN TotalCPUs=64 TotalNodes=2",
    "PartitionName=old AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "MaxTime=UNLIMITED Nodes=c1 PriorityTier=10 OverSubscribe=NO PreemptMode=OFF "
    "State=INACTIVE TotalCPUs=32 TotalNodes=1",
))

# c1-c2 32 CPUs 128000 MB; d1-d2 64 CPUs 192000 MB; m1-m2 64 CPUs of which 4 cores are the
# system's (CoreSpecCount=4: CPUEfctv=60) and 524288 MB of which 24288 are (MemSpecLimit):
# 500000 MB for jobs; g1-g2 32 CPUs 256000 MB 4 A100 with 400 MPS shares (100 a GPU);
# g3 the same with 2 A100 cut in 8 shards.
_NODE = ("NodeName={name} Arch=x86_64 CoresPerSocket=16 CPUAlloc={alloc} CPUEfctv={efctv} "
         "CPUTot={cpus} CPULoad=0.01 AvailableFeatures=avx2 ActiveFeatures=avx2 Gres={gres} "
         "GresDrain=N/A GresUsed={used} NodeAddr={name} NodeHostName={name} "
         "RealMemory={mem} AllocMem=0 FreeMem=1000 Sockets=2 Boards=1 State={state} "
         "ThreadsPerCore=1 TmpDisk=0 Weight=1 Partitions={parts}{extra}")
_KINDS = {
    "c": dict(cpus=32, efctv=32, mem=128000, gres="(null)", used="gpu:0",
              parts="batch,wide,scav,maint", extra=""),
    "d": dict(cpus=64, efctv=64, mem=192000, gres="(null)", used="gpu:0",
              parts="batch,wide,scav,excl", extra=""),
    "m": dict(cpus=64, efctv=60, mem=524288, gres="(null)", used="gpu:0",
              parts="bigmem,scav", extra=" CoreSpecCount=4 CPUSpecList=0-3 MemSpecLimit=24288"),
    "g": dict(cpus=32, efctv=32, mem=256000, gres="gpu:a100:4(S:0-1),mps:400(S:0-1)",
              used="gpu:a100:0(IDX:N/A),mps:0(IDX:N/A)", parts="gpu", extra=""),
    "s": dict(cpus=32, efctv=32, mem=256000, gres="gpu:a100:2(S:0),shard:a100:8(S:0)",
              used="gpu:a100:0(IDX:N/A),shard:a100:0(S:0)", parts="gpu", extra=""),
}


def node_lines(states: dict[str, str] | None = None, alloc: dict[str, int] | None = None
               ) -> str:
    states, alloc = states or {}, alloc or {}
    names = [("c1", "c"), ("c2", "c"), ("d1", "d"), ("d2", "d"), ("m1", "m"), ("m2", "m"),
             ("g1", "g"), ("g2", "g"), ("g3", "s")]
    return "\n".join(_NODE.format(name=n, alloc=alloc.get(n, 0),
                                  state=states.get(n) or ("MIXED" if alloc.get(n) else "IDLE"),
                                  **_KINDS[k]) for n, k in names) + "\n"


def athena(states=None, alloc=None, jobs=(), partitions: str = PARTITIONS):
    snap = SiteSnapshot(site="athena", taken_at=NOW,
                        partitions=slurm.parse_partitions(partitions),
                        nodes=slurm.parse_nodes(node_lines(states, alloc)), jobs=list(jobs))
    return SiteConfig(name="athena", metadata={"architecture": "x86_64"}), snap


def busy(jid, node, hours_left, cpus, partition="batch", walltime_h=4):
    return JobStatus(native_id=jid, state=JobState.RUNNING, node_list=node, cpus=cpus,
                     nodes=1, partition=partition, walltime_s=walltime_h * H,
                     started_at=NOW - timedelta(hours=walltime_h - hours_left))


# --------------------------------------------------------------- what the readers give

def test_scontrol_partition_line_gives_defaults_limits_and_access():
    parts = {p.name: p for p in athena()[1].partitions}
    b = parts["batch"]
    assert (b.default_time_s, b.max_time_s, b.max_nodes, b.min_nodes) == (1800, 86400, 4, None)
    assert (b.def_mem_per_cpu_mb, b.max_mem_per_cpu_mb, b.def_mem_per_node_mb) == \
        (3900, 7800, None)
    assert (b.preempt_mode, b.priority_tier, b.oversubscribe) == ("OFF", 10, "NO")
    assert parts["wide"].min_nodes == 2 and parts["wide"].default_time_s is None
    m = parts["bigmem"]
    assert (m.def_mem_per_node_mb, m.max_mem_per_node_mb, m.denied_accounts) == \
        (64000, 480000, ["guest"])
    assert m.allowed_accounts is None and m.allowed_qos is None
    assert parts["gpu"].allowed_qos == ["normal", "gpu"]
    assert parts["excl"].oversubscribe == "EXCLUSIVE"
    assert (parts["scav"].preempt_mode, parts["scav"].priority_tier) == ("REQUEUE", 1)
    assert parts["maint"].state == "DRAIN"


def test_scontrol_node_line_leaves_out_the_systems_cores_and_memory():
    nodes = {n.name: n for n in athena()[1].nodes}
    # CoreSpecCount=4 of 64 (CPUEfctv=60), MemSpecLimit=24288 of 524288 MB
    assert (nodes["m1"].cpus, nodes["m1"].memory_mb) == (60, 500000)
    assert (nodes["d1"].cpus, nodes["d1"].memory_mb) == (64, 192000)
    # before 22.05 there is no CPUEfctv: CPUTot less the specialised cores' threads
    old = ("NodeName=x1 CPUAlloc=0 CPUTot=64 CoreSpecCount=2 ThreadsPerCore=2 "
           "RealMemory=1000 State=IDLE")
    assert slurm.parse_nodes(old)[0].cpus == 60
    # generic resources other than GPUs, by name; a node without any has none
    assert (nodes["g1"].gpus, nodes["g1"].gres) == (4, {"mps": 400})
    assert (nodes["g3"].gpus, nodes["g3"].gres) == (2, {"shard": 8})
    assert nodes["c1"].gres == {}


def test_recorded_partitions_without_these_fields_keep_every_limit_unset():
    parts = slurm.parse_partitions((OUT / "slurm" / "scontrol_partition.txt").read_text())
    debug = next(p for p in parts if p.name == "debug")
    # DefaultTime=NONE, MinNodes=0, DefMemPerNode=UNLIMITED: no default and no bound
    assert (debug.default_time_s, debug.min_nodes, debug.def_mem_per_node_mb,
            debug.max_mem_per_node_mb) == (None, None, None, None)
    assert debug.preempt_mode == "OFF"
    assert next(p for p in parts if p.name == "long").allowed_accounts == ["physics", "chem"]


# --------------------------------------------------------------- memory a job leaves unsaid

def test_no_memory_asked_gets_the_partitions_default_per_cpu():
    # -c 16 in batch: 16 x 3900 = 62400 MB a node; c1 holds it, billed by its CPUs (16/32)
    v = only(run("#SBATCH -c 16", athena()), "athena", "batch")
    assert has_note(v, "partition batch: no memory asked, it gets DefMemPerCPU 3900 MB x "
                       "16 CPUs = 62400 MB a node")
    assert v.billed_nodes == pytest.approx(0.5)


def test_default_memory_per_cpu_above_a_node_rules_the_partition_out():
    # -c 64, no memory: 64 x 3900 = 249600 MB, above d1-d2's 192000 MB (c1-c2 have 32
    # CPUs): batch cannot run it; excl (no default) gives it a whole d node
    p = run("#SBATCH -c 64\n#SBATCH -p batch", athena())
    assert reasons(p, "athena") == (
        "partition batch: needs 249600 MB memory per node, largest node has 192000 MB | "
        "partition batch: no memory asked, it gets DefMemPerCPU 3900 MB x 64 CPUs = "
        "249600 MB a node")
    v = only(run("#SBATCH -c 64", athena()), "athena", "excl")
    assert v.billed_nodes == pytest.approx(1.0)


def test_memory_asked_replaces_the_default():
    # the same 64 CPUs with --mem=180G (184320 MB): a d node of batch holds it
    only(run("#SBATCH -c 64\n#SBATCH --mem=180G", athena()), "athena", "batch")


def test_tasks_without_nodes_spread_as_far_as_the_default_memory_needs():
    # -n 60, no memory: 3900 MB each; a d node holds 49 of them (191100 MB), so Slurm
    # spreads them over two d nodes (a c node holds 32 CPUs' worth at most: 124800 MB)
    v = only(run("#SBATCH -n 60", athena()), "athena", "batch")
    assert has_note(v, "DefMemPerCPU 3900 MB x 49 CPUs = 191100 MB a node")
    assert v.billed_nodes == pytest.approx(2 * 191100 / 192000)


def test_default_memory_per_node_counts_in_the_bill():
    # bigmem gives a job with no memory 64000 MB a node: of m1's 500000, more than its
    # 4 of 60 CPUs (the bill is the larger share, as MAX_TRES)
    v = only(run("#SBATCH -c 4\n#SBATCH -p bigmem", athena()), "athena", "bigmem")
    assert has_note(v, "partition bigmem: no memory asked, it gets DefMemPerNode 64000 MB")
    assert v.billed_nodes == pytest.approx(64000 / 500000)


# --------------------------------------------------------------- memory limits

def test_memory_per_cpu_above_max_mem_per_cpu_gets_more_cpus():
    # 4 tasks x 16000 MB per CPU, MaxMemPerCPU 7800: Slurm makes it 3 CPUs a task of
    # ceil(16000 / 3) = 5334 MB each: 12 CPUs, 64008 MB on one node
    v = only(run("#SBATCH -n 4\n#SBATCH --mem-per-cpu=16000", athena()), "athena", "batch")
    assert has_note(v, "partition batch: 16000 MB per CPU is above its MaxMemPerCPU 7800 "
                       "MB, so each task gets 3 CPUs (12 a node, 5334 MB each)")
    # billed on c1 by the larger share: 64008 of its 128000 MB (more than 12 of 32 CPUs)
    assert v.billed_nodes == pytest.approx(64008 / 128000)


def test_cpus_raised_for_memory_no_longer_fit_the_gpu_nodes():
    # 20 tasks x 10000 MB a CPU fit a 32-CPU 256000 MB GPU node as asked, but gpu's
    # MaxMemPerCPU 4000 makes each task 3 CPUs: 60 CPUs a node, more than any has
    p = run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=20\n#SBATCH --mem-per-cpu=10000\n"
            "#SBATCH --gres=gpu:1", athena())
    r = reasons(p, "athena")
    assert "partition gpu: needs 60 CPUs per node (20 tasks x 3 CPUs), largest node has " \
        "32 | partition gpu: 10000 MB per CPU is above its MaxMemPerCPU 4000 MB, so each " \
        "task gets 3 CPUs (60 a node, 3334 MB each)" in r, r
    # within the limit nothing changes: 20 x 4000 MB on one GPU node
    only(run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=20\n#SBATCH --mem-per-cpu=4000\n"
             "#SBATCH --gres=gpu:1", athena()), "athena", "gpu")


def test_max_mem_per_node_below_what_the_node_has():
    # 490000 MB: m1-m2 have 500000, bigmem takes at most 480000 a node; only scav (which
    # may preempt it) can run it, and says so: on m1-m2, bigmem's jobs preempt it (before:
    # batch, which has no node of 490000 MB)
    p = run("#SBATCH --mem=490000\n#SBATCH -p bigmem", athena())
    assert reasons(p, "athena") == \
        "partition bigmem: needs 490000 MB memory per node, its MaxMemPerNode is 480000 MB"
    v = only(run("#SBATCH --mem=490000", athena()), "athena", "scav")
    assert has_note(v, "partition scav: the job may be preempted (PreemptMode=REQUEUE) by "
                       "jobs of partition bigmem (PriorityTier 10 above its 1) on the same "
                       "nodes")


def test_memory_specialised_for_the_system_is_not_the_jobs():
    # RealMemory 524288 MB, MemSpecLimit 24288: 510000 MB fits no node
    p = run("#SBATCH --mem=510000", athena())
    assert reasons(p, "athena") == "needs 510000 MB memory per node, largest node has " \
        "500000 MB"


def test_cores_specialised_for_the_system_are_not_the_jobs():
    # m1-m2 have 64 CPUs, 4 cores kept for the system (CoreSpecCount=4): 60 for jobs
    p = run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=64\n#SBATCH -p bigmem", athena())
    assert reasons(p, "athena") == \
        "partition bigmem: needs 64 CPUs per node, largest node has 60"
    only(run("#SBATCH -N 1\n#SBATCH --ntasks-per-node=60\n#SBATCH -p bigmem", athena()),
         "athena", "bigmem")


# --------------------------------------------------------------- time a job leaves unsaid

def test_no_walltime_runs_with_the_partitions_default_time():
    # batch: DefaultTime 30 min: the job is killed then, so it runs 30 min at most
    v = only(run("#SBATCH -c 2\n#SBATCH -p batch", athena()), "athena", "batch")
    assert v.estimated_runtime_s == pytest.approx(1800)
    # excl has no DefaultTime: its MaxTime (12 h) is the limit, the runtime the default
    v = only(run("#SBATCH -c 2\n#SBATCH -p excl", athena()), "athena", "excl")
    assert v.estimated_runtime_s == pytest.approx(3600)


def test_default_time_lets_a_job_backfill_before_a_reservation():
    # d2 busy 2 h more; a 4-node job waits for it (reserved from +2 h for 4 h). A job
    # without a walltime gets batch's 30 min: it ends before the reservation, so Slurm
    # backfills it now on c1; with the 1-day MaxTime it would wait until +6 h
    pending = JobStatus(native_id="big", state=JobState.PENDING, nodes=4, partition="batch",
                        walltime_s=4 * H, reason="Resources")
    site = athena(alloc={"d2": 64}, jobs=[busy("r1", "d2", 2, 64), pending])
    v = run("#SBATCH -c 8\n#SBATCH -p batch", site).verdict("athena")
    assert v.partition == "batch" and v.estimated_start == NOW
    v = run("#SBATCH -c 8\n#SBATCH -p batch\n#SBATCH -t 3:00:00", site).verdict("athena")
    assert v.estimated_start == NOW + timedelta(hours=6)


def test_pbs_queue_default_walltime_is_the_jobs_limit():
    queues = ('{"Queue": {"workq": {"queue_type": "Execution", "enabled": "True", '
              '"started": "True", "resources_max": {"walltime": "24:00:00"}, '
              '"resources_default": {"walltime": "00:20:00"}}}}')
    v = only(run("#PBS -l select=1:ncpus=4", pbs_queues(queues)), "pbsq", "workq")
    assert v.estimated_runtime_s == pytest.approx(1200)
    recorded = PbsCommands().parse_queues((OUT / "pbs" / "qstat_Qf_json.json").read_text())
    assert next(q for q in recorded if q.name == "workq").default_time_s == 3600


# --------------------------------------------------------------- node counts

def test_min_nodes_turns_away_a_one_node_job():
    p = run("#SBATCH -N 1\n#SBATCH -p wide", athena())
    assert reasons(p, "athena") == \
        "needs 1 node, partition wide takes only jobs of at least 2 (MinNodes)"
    only(run("#SBATCH -N 2\n#SBATCH -p wide", athena()), "athena", "wide")


def test_more_nodes_than_every_safe_partition_goes_where_it_may_be_preempted():
    # 5 nodes: batch allows 4, wide has 4; scav spans 6 nodes but its jobs give way to
    # batch's and bigmem's
    v = only(run("#SBATCH -N 5", athena()), "athena", "scav")
    assert "needs 5 nodes, partition batch allows at most 4" in v.notes
    assert "needs 5 nodes, partition wide has only 4" in v.notes
    assert has_note(v, "partition scav: the job may be preempted (PreemptMode=REQUEUE)")
    p = run("#SBATCH -N 5\n#SBATCH -p wide", athena())
    assert reasons(p, "athena") == "needs 5 nodes, partition wide has only 4"


# --------------------------------------------------------------- who may use a partition

def test_denied_account_is_restricted_from_the_partition():
    p = run("#SBATCH -A guest\n#SBATCH -p bigmem\n#SBATCH --mem=300G", athena())
    v = p.verdict("athena")
    assert v.verdict == "RESTRICTED", p.explain()
    assert v.reasons == ["account 'guest' denied in partition 'bigmem' (DenyAccounts: guest)"]
    only(run("#SBATCH -A physics\n#SBATCH -p bigmem\n#SBATCH --mem=300G", athena()),
         "athena", "bigmem")


def test_a_qos_the_partition_does_not_allow():
    p = run("#SBATCH -q debug\n#SBATCH --gres=gpu:1", athena())
    v = p.verdict("athena")
    assert v.verdict == "RESTRICTED", p.explain()
    assert "QOS 'debug' not allowed in partition 'gpu' (allowed: normal, gpu)" in v.reasons
    only(run("#SBATCH -q gpu\n#SBATCH --gres=gpu:1", athena()), "athena", "gpu")


def test_a_denied_qos():
    cfg, snap = athena()
    next(p for p in snap.partitions if p.name == "excl").denied_qos = ["scavenger"]
    p = run("#SBATCH -q scavenger\n#SBATCH -p excl", (cfg, snap))
    assert reasons(p, "athena") == \
        "QOS 'scavenger' denied in partition 'excl' (DenyQos: scavenger)"


def test_a_denied_qos_read_from_scontrol():
    line = "PartitionName=p AllowQos=ALL DenyQos=low,scavenger Nodes=c1 State=UP"
    p = slurm.parse_partitions(line)[0]
    assert (p.allowed_qos, p.denied_qos) == (None, ["low", "scavenger"])


# --------------------------------------------------------------- partition and node states

def test_a_draining_partition_takes_no_new_job():
    p = run("#SBATCH -p maint\n#SBATCH -c 2", athena())
    assert reasons(p, "athena") == "partition 'maint' is DRAIN"


def test_mixed_and_draining_node_takes_no_new_job():
    # d1 runs a job but drains: what is left of it is no one's; excl needs whole d nodes
    site = athena(states={"d1": "MIXED+DRAIN"}, alloc={"d1": 8})
    p = run("#SBATCH -N 2\n#SBATCH -p excl", site)
    assert reasons(p, "athena") == \
        "needs 2 nodes, partition excl has only 1 usable (others draining d1)"


def test_reserved_nodes_are_for_their_reservations_jobs():
    site = athena(states={"d1": "IDLE+RESERVED", "d2": "RESERVED"})
    p = run("#SBATCH -c 4\n#SBATCH -p excl", site)
    assert reasons(p, "athena") == "needs 1 node, partition excl has only 0 usable " \
        "(others in a reservation the job is not in: d1, d2)"
    # a job of the reservation may use them
    v = only(run("#SBATCH -c 4\n#SBATCH -p excl\n#SBATCH --reservation=big", site),
             "athena", "excl")
    assert v.estimated_start == NOW


def test_a_maintenance_reservation_closes_its_nodes():
    site = athena(states={"m1": "IDLE+MAINTENANCE+RESERVED", "m2": "MAINT"})
    p = run("#SBATCH --mem=300G\n#SBATCH -p bigmem", site)
    assert reasons(p, "athena") == \
        "needs 1 node, partition bigmem has only 0 usable (others in maintenance: m1, m2)"


# --------------------------------------------------------------- sharing and preemption

def test_exclusive_partition_waits_for_a_whole_node():
    # excl gives whole nodes: a 2-CPU job waits for d2 to empty (2 h), while batch starts
    # it now next to the running jobs
    jobs = [busy("a", "d1", 3, 1, partition="batch"), busy("b", "d2", 2, 2, partition="batch")]
    site = athena(alloc={"d1": 1, "d2": 2}, jobs=jobs)
    v = run("#SBATCH -c 2\n#SBATCH -p excl\n#SBATCH -t 1:00:00", site).verdict("athena")
    assert v.partition == "excl" and v.estimated_start == NOW + timedelta(hours=2)
    assert v.billed_nodes == pytest.approx(1.0)
    assert has_note(v, "partition excl gives every job whole nodes (OverSubscribe=EXCLUSIVE)")
    v = run("#SBATCH -c 2\n#SBATCH -C avx2\n#SBATCH -p batch\n#SBATCH -t 1:00:00",
            site).verdict("athena")
    assert v.estimated_start == NOW and v.billed_nodes < 1


def test_a_preemptible_partition_is_passed_over_when_a_safe_one_can_run_it():
    # c and d nodes busy 2 h in batch; scav could start the job now on m1, but its jobs
    # are requeued when batch or bigmem need the nodes: bigmem (safe) starts it now too
    jobs = [busy(f"r{n}", n, 2, c) for n, c in (("c1", 32), ("c2", 32), ("d1", 64),
                                                 ("d2", 64))]
    site = athena(alloc={"c1": 32, "c2": 32, "d1": 64, "d2": 64}, jobs=jobs)
    v = only(run("#SBATCH -c 4\n#SBATCH -t 1:00:00", site), "athena", "bigmem")
    assert v.estimated_start == NOW
    assert has_note(v, "partition scav passed over: the job may be preempted")
    # the account guest may not use bigmem: scav would start it now on m1, batch in 2 h;
    # the engine does not move a job where it may be killed, it waits for batch
    v = only(run("#SBATCH -A guest\n#SBATCH -c 40\n#SBATCH --mem=100G\n#SBATCH -t 1:00:00",
                 site), "athena", "batch")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert "account 'guest' denied in partition 'bigmem' (DenyAccounts: guest)" in v.notes
    assert has_note(v, "partition scav passed over: the job may be preempted")


def test_a_preemptible_partition_named_by_the_job_is_its_choice():
    v = only(run("#SBATCH -p scav\n#SBATCH -c 4", athena()), "athena", "scav")
    assert has_note(v, "partition scav: the job may be preempted (PreemptMode=REQUEUE) by "
                       "jobs of partition batch")


def test_preempt_mode_without_a_higher_tier_is_no_risk():
    # scav alone on its nodes (no partition of a higher tier shares them): nothing preempts
    text = "\n".join(ln for ln in PARTITIONS.splitlines()
                     if ln.startswith("PartitionName=scav")) + "\n"
    v = only(run("#SBATCH -c 4", athena(partitions=text)), "athena", "scav")
    assert not has_note(v, "preempted")


# --------------------------------------------------------------- shares of a GPU

def test_mps_share_only_where_nodes_offer_mps():
    # --gres=mps:50 asks half a GPU through MPS: only g1-g2 have mps; it was placed on a
    # CPU node of batch before, where Slurm would never start it
    only(run("#SBATCH --gres=mps:50", athena()), "athena", "gpu")
    p = run("#SBATCH --gres=mps:50", athena(states={"g1": "DRAIN", "g2": "DOWN*"}))
    r = reasons(p, "athena")
    assert "needs 1 node, partition gpu has only 0 usable (others drained g1; down g2)" in r, r
    assert "partition batch: no node has gres 'mps' (its nodes have: none)" in r, r


def test_mps_share_comes_from_one_gpu():
    # 400 MPS on 4 GPUs is 100 a GPU: 150 cannot come from one
    p = run("#SBATCH --gres=mps:150", athena())
    assert reasons(p, "athena") == "needs mps:150 from one GPU, the most one GPU has is " \
        "100 (a node's MPS count is shared equally by its GPUs)"


def test_gpu_shards_only_where_nodes_are_sharded():
    only(run("#SBATCH --gres=shard:4", athena()), "athena", "gpu")
    p = run("#SBATCH --gres=shard:10", athena())
    assert reasons(p, "athena") == "needs shard:10 per node, the most a node has is 8"


def test_gres_no_node_has():
    p = run("#SBATCH --gres=nvme:1", athena())
    assert reasons(p, "athena") == "no node has gres 'nvme' (site has: mps, shard)"
    # a whole GPU and an MPS share are different things: a GPU job still takes g1-g3
    only(run("#SBATCH --gres=gpu:a100:2", athena()), "athena", "gpu")


# --------------------------------------------------------------- PBS, LSF, Grid Engine queues

def pbs_queues(queues: str):
    # hosts tied to no queue (no `queue` attribute) serve every queue
    nodes = [Node(name=f"p{i}", state="free", cpus=32, memory_mb=192000, gpus=2,
                  gpu_type="v100") for i in (1, 2)]
    snap = SiteSnapshot(site="pbsq", taken_at=NOW, nodes=nodes,
                        partitions=PbsCommands().parse_queues(queues))
    return SiteConfig(name="pbsq", scheduler="pbs"), snap


PBS_LIMITS = ('{"Queue": {"small": {"queue_type": "Execution", "enabled": "True", '
              '"started": "True", "resources_max": {"ncpus": 16, "mem": "64gb", "ngpus": 1, '
              '"walltime": "04:00:00"}}, "workq": {"queue_type": "Execution", '
              '"enabled": "True", "started": "True", "resources_max": '
              '{"walltime": "24:00:00"}}, "gpuq": {"queue_type": "Execution", '
              '"enabled": "True", "started": "False"}}}')


def test_pbs_queue_caps_a_jobs_cpus_over_all_its_chunks():
    # 2 chunks of 12 CPUs: 24 in all, above small's resources_max.ncpus 16
    p = run("#PBS -q small\n#PBS -l select=2:ncpus=12", pbs_queues(PBS_LIMITS))
    assert reasons(p, "pbsq") == "needs 24 ncpus in all, queue small allows a job at most 16"
    only(run("#PBS -l select=2:ncpus=12", pbs_queues(PBS_LIMITS)), "pbsq", "workq")


def test_pbs_queue_caps_a_jobs_memory_and_gpus():
    p = run("#PBS -q small\n#PBS -l select=1:ncpus=4:mem=100gb", pbs_queues(PBS_LIMITS))
    assert reasons(p, "pbsq") == \
        "needs 102400 MB memory in all, queue small allows a job at most 65536"
    p = run("#PBS -q small\n#PBS -l select=2:ncpus=1:ngpus=1", pbs_queues(PBS_LIMITS))
    assert reasons(p, "pbsq") == "needs 2 GPUs in all, queue small allows a job at most 1"
    only(run("#PBS -q small\n#PBS -l select=1:ncpus=4:mem=60gb:ngpus=1",
             pbs_queues(PBS_LIMITS)), "pbsq", "small")


def test_pbs_queue_not_started_runs_nothing():
    p = run("#PBS -q gpuq\n#PBS -l select=1:ncpus=1", pbs_queues(PBS_LIMITS))
    assert reasons(p, "pbsq") == (
        "queue 'gpuq' is not started: takes jobs, runs none until started")


def lsf_queues():
    nodes = [Node(name=f"h{i}", state="ok", cpus=40, memory_mb=192000) for i in (1, 2)]
    queues = LsfCommands().parse_queues((OUT / "lsf" / "bqueues_json.json").read_text())
    for q in queues:
        q.nodes = ["h1", "h2"]
    queues[0].default = True
    return SiteConfig(name="lsfq", scheduler="lsf"), SiteSnapshot(
        site="lsfq", taken_at=NOW, nodes=nodes, partitions=queues)


def test_lsf_queue_run_limit_and_an_inactive_queue():
    # short: RUNLIMIT 60 min; normal 720 min; night is inactive
    p = run("#BSUB -q short\n#BSUB -W 120\n#BSUB -n 4", lsf_queues())
    assert reasons(p, "lsfq") == "walltime 2:00:00 above queue short RUNLIMIT 1:00:00"
    only(run("#BSUB -W 120\n#BSUB -n 4", lsf_queues()), "lsfq", "normal")
    p = run("#BSUB -q night\n#BSUB -n 4", lsf_queues())
    assert reasons(p, "lsfq") == "queue 'night' is INACTIVE"


def sge_queues(text: str | None = None):
    text = text or (OUT / "sge" / "qconf_sq_all.txt").read_text()
    queues = SgeCommands()._partitions(text, [
        {"queue": q, "host": f"s{i}", "state": "", "total": 16}
        for q in ("all.q", "short.q") for i in (1, 2)])
    nodes = [Node(name=f"s{i}", state="idle", cpus=16, memory_mb=64000,
                  partitions=["all.q", "short.q"]) for i in (1, 2)]
    return SiteConfig(name="sgeq", scheduler="sge"), SiteSnapshot(
        site="sgeq", taken_at=NOW, nodes=nodes, partitions=queues)


def test_grid_engine_queue_h_rt_bounds_the_job():
    # short.q: h_rt 0:30:00, all.q 24:00:00
    p = run("#$ -q short.q\n#$ -l h_rt=1:00:00", sge_queues())
    assert reasons(p, "sgeq") == "walltime 1:00:00 above queue short.q h_rt 0:30:00"
    only(run("#$ -l h_rt=1:00:00", sge_queues()), "sgeq", "all.q")
    p = run("#$ -l h_rt=25:00:00", sge_queues())
    assert reasons(p, "sgeq") == "walltime 1-01:00:00 above every queue's h_rt " \
        "here (the longest: all.q, 1-00:00:00)"


# --------------------------------------------------------------- GPU jobs' CPU and memory defaults

GPU_DEFAULTS = PARTITIONS.replace(
    "AllowQos=normal,gpu ", "AllowQos=normal,gpu JobDefaults=DefCpuPerGPU=12,DefMemPerGPU=80000 ")


def test_gpu_job_without_cpus_gets_the_partitions_cpus_per_gpu():
    # JobDefaults=DefCpuPerGPU=12: 4 GPUs and no -c is 48 CPUs, above g1-g3's 32
    site = athena(partitions=GPU_DEFAULTS)
    gpu = next(p for p in site[1].partitions if p.name == "gpu")
    assert (gpu.def_cpus_per_gpu, gpu.def_mem_per_gpu_mb) == (12, 80000)
    p = run("#SBATCH --gres=gpu:a100:4\n#SBATCH --mem=100G\n#SBATCH -p gpu", site)
    assert reasons(p, "athena") == (
        "partition gpu: needs 48 CPUs per node, largest node has 32 | partition gpu: no CPUs "
        "asked, it gets DefCpuPerGPU 12 x 4 GPUs = 48 CPUs a node")
    # CPUs asked: the default does not apply
    only(run("#SBATCH --gres=gpu:a100:4\n#SBATCH --mem=100G\n#SBATCH -c 8", site),
         "athena", "gpu")


def test_gpu_job_without_memory_gets_the_partitions_memory_per_gpu():
    # DefMemPerGPU=80000: 4 GPUs with no memory asked is 320000 MB, above 256000
    site = athena(partitions=GPU_DEFAULTS)
    p = run("#SBATCH --gres=gpu:a100:4\n#SBATCH -c 8\n#SBATCH -p gpu", site)
    assert reasons(p, "athena") == (
        "partition gpu: needs 320000 MB memory per node, largest node has 256000 MB | "
        "partition gpu: no memory asked, it gets DefMemPerGPU 80000 MB x 4 GPUs = 320000 MB "
        "a node")
    # 2 GPUs: 24 CPUs and 160000 MB, any g node holds them; billed on the smallest, g3,
    # by its GPUs (both of its 2)
    v = only(run("#SBATCH --gres=gpu:a100:2", site), "athena", "gpu")
    assert has_note(v, "DefCpuPerGPU 12 x 2 GPUs = 24 CPUs a node")
    assert has_note(v, "DefMemPerGPU 80000 MB x 2 GPUs = 160000 MB a node")
    assert v.billed_nodes == pytest.approx(1.0)
    # one GPU: 12 CPUs, 80000 MB; on g3 the larger share is its GPUs (1 of 2)
    v = only(run("#SBATCH --gres=gpu:a100:1", site), "athena", "gpu")
    assert v.billed_nodes == pytest.approx(0.5)


# --------------------------------------------------------------- what the snapshot cannot check

def test_groups_a_partition_allows():
    text = PARTITIONS.replace("PartitionName=gpu AllowGroups=ALL",
                              "PartitionName=gpu AllowGroups=gpuusers,admins")
    cfg, snap = athena(partitions=text)
    p = run("#SBATCH --gres=gpu:1", (cfg.model_copy(update={"metadata": {"groups": [
        "physics"]}}), snap))
    v = p.verdict("athena")
    assert v.verdict == "RESTRICTED", p.explain()
    assert "none of your groups (physics) may use partition 'gpu' (AllowGroups: gpuusers, " \
        "admins)" in v.reasons
    only(run("#SBATCH --gres=gpu:1", (cfg.model_copy(update={"metadata": {"groups": [
        "physics", "gpuusers"]}}), snap)), "athena", "gpu")
    # the user's groups not known: placed, and said
    v = only(run("#SBATCH --gres=gpu:1", (cfg, snap)), "athena", "gpu")
    assert has_note(v, "partition gpu is for groups gpuusers, admins only (AllowGroups)")


def test_a_job_naming_no_qos_is_told_what_the_partition_takes():
    v = only(run("#SBATCH --gres=gpu:1", athena()), "athena", "gpu")
    assert has_note(v, "partition gpu takes QOS normal, gpu only; the job names none")
    v = only(run("#SBATCH --gres=gpu:1\n#SBATCH -q normal", athena()), "athena", "gpu")
    assert not has_note(v, "takes QOS")


def test_cpus_shared_by_force_are_said():
    text = PARTITIONS.replace("OverSubscribe=EXCLUSIVE", "OverSubscribe=FORCE:4")
    v = only(run("#SBATCH -c 2\n#SBATCH -p excl", athena(partitions=text)), "athena", "excl")
    assert has_note(v, "partition excl shares CPUs between jobs (OverSubscribe=FORCE:4)")
    assert v.billed_nodes < 1  # no longer whole nodes


# --------------------------------------------------------------- slurmrestd

def test_slurmrestd_partitions_and_nodes_carry_the_same_limits():
    import json

    from diamond_jupyter.dialects.slurm_rest import parse_nodes, parse_partitions

    parts = json.dumps({"partitions": [
        {"name": "wide", "nodes": "r[1-2]", "flags": ["default"], "min nodes per job": 2,
         "default_time_limit": 20, "max_time_limit": 600, "default_memory_per_cpu": 2000,
         "maximum_memory_per_node": 100000, "denied_accounts": "guest", "allowed_qos": "",
         "preemption_mode": ["disabled"], "priority_tier": 5},
        {"name": "scav", "nodes": "r[1-2]", "preemption_mode": ["requeue"],
         "priority_tier": 1}]})
    got = {p.name: p for p in parse_partitions(parts)}
    w = got["wide"]
    assert (w.min_nodes, w.default_time_s, w.def_mem_per_cpu_mb, w.max_mem_per_node_mb,
            w.denied_accounts, w.allowed_qos, w.preempt_mode) == \
        (2, 1200, 2000, 100000, ["guest"], None, "OFF")
    assert got["scav"].preempt_mode == "REQUEUE"
    # v0.0.38 gives a node's flags apart from its state: a drained idle node is drained
    nodes = json.dumps({"nodes": [
        {"name": "r1", "state": "idle", "state_flags": ["DRAIN"], "cpus": 32,
         "real_memory": 64000, "gres": "gpu:2,mps:200"},
        {"name": "r2", "state": ["IDLE", "RESERVED"], "cpus": 32, "effective_cpus": 30,
         "real_memory": 64000, "specialized_memory": 4000}]})
    n1, n2 = parse_nodes(nodes)
    assert n1.state == "idle+drain" and n1.gres == {"mps": 200}
    assert (n2.state, n2.cpus, n2.memory_mb) == ("idle+reserved", 30, 60000)
    site = (SiteConfig(name="rest"), SiteSnapshot(site="rest", taken_at=NOW,
                                                  partitions=parse_partitions(parts),
                                                  nodes=parse_nodes(nodes)))
    p = run("#SBATCH -N 2\n#SBATCH -p wide", site)
    assert reasons(p, "rest") == "needs 2 nodes, partition wide has only 0 usable (others " \
        "drained r1; in a reservation r2)"


def test_no_walltime_and_no_default_time_runs_until_max_time():
    # hera's debug: MaxTime 30 min, no DefaultTime: a job that sets no limit gets 30 min,
    # and is killed then: its runtime is not the 1 h assumed elsewhere
    from test_placement_cases import hera

    v = only(run("#SBATCH -p debug\n#SBATCH -c 2", hera()), "hera", "debug")
    assert v.estimated_runtime_s == pytest.approx(1800)
    assert "expected runtime 1:00:00 exceeds time limit partition debug gives a job that " \
        "sets none 0:30:00: the job may time out" in v.notes


def test_grid_engine_queue_memory_per_slot_limit():
    # short.q's h_vmem is 2G a slot, all.q's unlimited: -l h_vmem=4G (per slot) runs in
    # all.q only
    text = (OUT / "sge" / "qconf_sq_all.txt").read_text()
    qname = text.index("qname                 short.q")
    at = text.index("h_vmem                INFINITY", qname)
    text = text[:at] + "h_vmem                2G      " + text[at + 30:]
    cfg, snap = sge_queues(text)
    assert {p.name: p.max_mem_per_slot_mb for p in snap.partitions} == \
        {"all.q": None, "short.q": 2048}
    p = run("#$ -q short.q\n#$ -pe smp 4\n#$ -l h_vmem=4G", (cfg, snap))
    assert reasons(p, "sgeq") == "queue short.q: needs 4096 MB memory per slot, its h_vmem " \
        "is 2048 MB"
    only(run("#$ -pe smp 4\n#$ -l h_vmem=4G", (cfg, snap)), "sgeq", "all.q")
    only(run("#$ -q short.q\n#$ -pe smp 4\n#$ -l h_vmem=2G", (cfg, snap)), "sgeq", "short.q")
