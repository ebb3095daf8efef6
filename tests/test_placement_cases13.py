"""Placement cases worked by hand, thirteenth sweep: one Slurm center, selene, read whole
from what its commands print (`scontrol show partition/node/reservation -o`, `squeue`,
`sacctmgr show qos/assoc`), meeting the jobs its users send: partition and QOS limits,
reservations, node states, features, GPU slices and shards, exclusivity, preemption,
arrays and heterogeneous jobs; then PBS, LSF, flux and Grid Engine sites, and the
ranking between sites (speed, charge, stage-in, ties). Each case asserts the verdict per
site, the partition, the start and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta, timezone
from functools import partial

from test_placement_cases import NOW, at, has_note, hours, only, reasons, reservation, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands

H = 3600
slurm = SlurmCommands(tz=timezone.utc)


# selene, as `scontrol --all show partition -o` prints it:
#  batch (default): n01-n06, 1 day (2 h when the job says none), at most 4 nodes,
#    2000 MB a CPU when the job asks no memory, at most 4000 MB a CPU; PriorityTier 10;
#  big: m01-m02, 2 days, one node a job, 96 of a node's 128 CPUs, 8000 MB a CPU by default;
#  gpu: g01-g03, 12 h;
#  excl: n05-n06, OverSubscribe=EXCLUSIVE (whole nodes), 6 h;
#  scav: every node, 3 days, PriorityTier 1 and PreemptMode=REQUEUE (batch's jobs requeue
#    its jobs); QOS short only here? no: any QOS.
PARTITIONS = "".join(line + "\n" for line in (
    "PartitionName=batch AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=YES "
    "QoS=N/A DefaultTime=02:00:00 MaxNodes=4 MaxTime=1-00:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED Nodes=n[01-06] "
    "PriorityJobFactor=1 PriorityTier=10 Hidden=NO OverSubscribe=NO PreemptMode=OFF "
    "State=UP TotalCPUs=384 TotalNodes=6 DefMemPerCPU=2000 MaxMemPerCPU=4000",
    "PartitionName=big AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "QoS=N/A DefaultTime=NONE MaxNodes=1 MaxTime=2-00:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=96 MaxCPUsPerSocket=UNLIMITED Nodes=m[01-02] PriorityJobFactor=1 "
    "PriorityTier=10 Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=256 "
    "TotalNodes=2 DefMemPerCPU=8000 MaxMemPerNode=UNLIMITED",
    "PartitionName=gpu AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "QoS=N/A DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=12:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=UNLIMITED Nodes=g[01-03] PriorityJobFactor=1 PriorityTier=10 "
    "Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=160 TotalNodes=3",
    "PartitionName=excl AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "QoS=N/A DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=06:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=UNLIMITED Nodes=n[05-06] PriorityJobFactor=1 PriorityTier=10 "
    "Hidden=NO OverSubscribe=EXCLUSIVE PreemptMode=OFF State=UP TotalCPUs=128 TotalNodes=2",
    "PartitionName=scav AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=NO "
    "QoS=N/A DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=3-00:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=UNLIMITED Nodes=n[01-06],m[01-02],g[01-03] PriorityJobFactor=1 "
    "PriorityTier=1 Hidden=NO OverSubscribe=NO PreemptMode=REQUEUE State=UP "
    "TotalCPUs=800 TotalNodes=11",
))

_NODE = ("NodeName={name} Arch=x86_64 CoresPerSocket={cores} CPUAlloc={alloc} "
         "CPUEfctv={cpus} CPUTot={cpus} CPULoad=0.01 AvailableFeatures={feats} "
         "ActiveFeatures={feats} Gres={gres} GresDrain=N/A GresUsed={used} NodeAddr={name} "
         "NodeHostName={name} RealMemory={mem} AllocMem={amem} FreeMem=1000 Sockets=2 "
         "Boards=1 State={state} ThreadsPerCore=1 TmpDisk=0 Weight=1 Partitions={parts}")
# n01-n06: 64 CPUs 256000 MB, rackA (n01-n03) or rackB (n04-n06); m01-m02: 128 CPUs
# 1024000 MB; g01: 64 CPUs 512000 MB 4 A100; g02: 64 CPUs 512000 MB, its A100s cut into
# MIG slices (7 of 1g.10gb, 2 of 3g.40gb... as NVML names them); g03: 32 CPUs 256000 MB
# 2 L40S shared as 16 shards
_KINDS = {
    "n": dict(cores=32, cpus=64, mem=256000, gres="(null)", used="gpu:0"),
    "m": dict(cores=64, cpus=128, mem=1024000, gres="(null)", used="gpu:0",
              feats="bigmem,ib", parts="big,scav"),
    "a": dict(cores=32, cpus=64, mem=512000, gres="gpu:a100:4(S:0-1)",
              used="gpu:a100:{g}(IDX:N/A)", feats="a100,ib", parts="gpu,scav"),
    "s": dict(cores=32, cpus=64, mem=512000,
              gres="gpu:a100_1g.10gb:7(S:0),gpu:a100_3g.40gb:2(S:1)",
              used="gpu:a100_1g.10gb:{g}(IDX:N/A),gpu:a100_3g.40gb:0(IDX:N/A)",
              feats="mig,ib", parts="gpu,scav"),
    "l": dict(cores=16, cpus=32, mem=256000, gres="gpu:l40s:2(S:0-1),shard:l40s:16(S:0-1)",
              used="gpu:l40s:{g}(IDX:N/A),shard:l40s:0(0/8,0/8)", feats="l40s",
              parts="gpu,scav"),
}
_NAMES = [("n01", "n", "rackA,ib", "batch,scav"), ("n02", "n", "rackA,ib", "batch,scav"),
          ("n03", "n", "rackA,ib", "batch,scav"), ("n04", "n", "rackB,ib", "batch,scav"),
          ("n05", "n", "rackB", "batch,excl,scav"), ("n06", "n", "rackB", "batch,excl,scav"),
          ("m01", "m", None, None), ("m02", "m", None, None), ("g01", "a", None, None),
          ("g02", "s", None, None), ("g03", "l", None, None)]


def node_lines(states: dict[str, str] | None = None, alloc: dict[str, int] | None = None,
               galloc: dict[str, int] | None = None, mem: dict[str, int] | None = None) -> str:
    states, alloc, galloc, mem = states or {}, alloc or {}, galloc or {}, mem or {}
    lines = []
    for name, kind, feats, parts in _NAMES:
        k = dict(_KINDS[kind])
        k.setdefault("feats", feats)
        k.setdefault("parts", parts)
        k["used"] = k["used"].format(g=galloc.get(name, 0))
        default = "MIXED" if alloc.get(name) else "IDLE"
        lines.append(_NODE.format(name=name, alloc=alloc.get(name, 0), amem=mem.get(name, 0),
                                  state=states.get(name) or default, **k))
    return "\n".join(lines) + "\n"


def running(jid: str, user: str, node: str, cpus: int, left_h: float, limit_h: int,
            partition: str = "batch", gpus: int = 0, nodes: int = 1) -> str:
    """A running job as `squeue -h -a -o SQUEUE_FIELDS` prints it: `left_h` hours of its
    `limit_h` left."""
    tres = f"gres/gpu:{gpus}" if gpus else "N/A"
    started = left_h - limit_h
    return (f"{jid}|RUNNING|{at(started)}|{at(left_h)}|{at(started - 1)}|{limit_h}:00:00|"
            f"{nodes}|{cpus}|{user}|{partition}|{tres}|{node}|None|(null)|job{jid}")


def pending(jid: str, user: str, cpus: int, limit_h: int, partition: str = "batch",
            nodes: int = 1, reason: str = "Priority") -> str:
    return (f"{jid}|PENDING|N/A|N/A|{at(-1)}|{limit_h}:00:00|{nodes}|{cpus}|{user}|"
            f"{partition}|N/A||{reason}|(null)|job{jid}")


# `sacctmgr -nP show qos`: Name, MaxTRES, MaxTRESPerNode, MaxTRESPerUser, GrpTRES, MaxWall,
# GrpJobs, GrpSubmitJobs, MaxJobsPerUser, MaxSubmitJobsPerUser
QOS = "\n".join((
    "normal|||cpu=256||||||",
    "short|||||04:00:00||||",
    "gpuq||||gres/gpu=4|||||",
    "wide|node=2||||||||",
    "capped|||||||||8",
)) + "\n"


def selene(*queue: str, states=None, alloc=None, galloc=None, mem=None, resv: str = "",
           qos_of: dict[str, str] | None = None, partitions: str = PARTITIONS,
           user: str = "alice"):
    """selene read from its commands' outputs; `queue`: squeue lines; `resv`: `scontrol
    show reservation -o` lines; the probe ran as `user` (account proj, default QOS normal,
    may use normal, short, gpuq, wide, capped)."""
    outputs = {
        "partitions": partitions, "nodes": node_lines(states, alloc, galloc, mem),
        "queue": "\n".join(queue),
        "queue_qos": "".join(f"{j}|{q}|proj|NO|R|\n" for j, q in (qos_of or {}).items()),
        "qos": QOS, "reservations": resv or "No reservations in the system\n",
        "assoc": f"user|{user}\n{user}|proj||normal|normal,short,gpuq,wide,capped\n"}
    snap = slurm.parse_snapshot("selene", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="selene", metadata={"architecture": "x86_64"}), snap


resv = partial(reservation, node_count=2, cores=128)  # one of selene's reservations


def test_the_outputs_are_read_as_selene_is():
    cfg, snap = selene()
    batch, big, gpu, excl, scav = snap.partitions
    assert (batch.default, batch.max_time_s, batch.default_time_s, batch.max_nodes,
            batch.def_mem_per_cpu_mb, batch.max_mem_per_cpu_mb) == (True, 24 * H, 2 * H, 4,
                                                                    2000, 4000)
    assert (big.max_cpus_per_node, excl.oversubscribe, scav.preempt_mode,
            scav.priority_tier) == (96, "EXCLUSIVE", "REQUEUE", 1)
    g02 = next(n for n in snap.nodes if n.name == "g02")
    assert g02.gpu_types == {"a100_1g.10gb": 7, "a100_3g.40gb": 2}
    assert next(n for n in snap.nodes if n.name == "g03").gres == {"shard": 16}
    assert snap.qos["wide"].max_tres_per_job == {"node": 2}


# --------------------------------------------------------------- partition limits

def test_walltime_above_batch_goes_to_big_not_to_the_preemptible_scav():
    # 30 h: above batch (1 day), gpu (12 h) and excl (6 h); big (2 days) and scav (3
    # days) take it; scav's jobs are requeued by batch's (PriorityTier 10 over 1), so the
    # engine passes it over while big can run it: big, now, with big's DefMemPerCPU
    v = only(run("#SBATCH -t 30:00:00 -n 4", selene()), "selene", "big")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "walltime 1-06:00:00 above partition batch MaxTime 1-00:00:00" in v.notes
    assert has_note(v, "partition scav passed over: the job may be preempted "
                       "(PreemptMode=REQUEUE) by jobs of partition batch")
    assert "partition big: no memory asked, it gets DefMemPerCPU 8000 MB x 4 CPUs = 32000 MB " \
        "a node" in v.notes


def test_five_nodes_fit_only_the_preemptible_partition_and_it_is_said():
    # batch allows 4 nodes, big 1, gpu has 3, excl 2: only scav (11 nodes) holds 5. It is
    # the only choice, so it is taken, with the risk said
    v = only(run("#SBATCH -N 5 -t 1:00:00", selene()), "selene", "scav")
    assert v.estimated_start == NOW
    assert "needs 5 nodes, partition batch allows at most 4" in v.notes
    assert "partition scav: the job may be preempted (PreemptMode=REQUEUE) by jobs of " \
        "partition batch (PriorityTier 10 above its 1) on the same nodes" in v.notes


def test_max_cpus_per_node_of_big():
    # m01 has 128 CPUs but big lets a job use 96 of a node
    assert reasons(run("#SBATCH -p big -N 1 -n 100 -t 1:00:00", selene()), "selene") == \
        "partition big: needs 100 CPUs per node, its MaxCPUsPerNode is 96"
    v = only(run("#SBATCH -p big -N 1 -n 96 -t 1:00:00", selene()), "selene", "big")
    assert v.verdict == "READY"


def test_memory_per_cpu_above_max_mem_per_cpu_spreads_tasks_without_a_node_count():
    # 64 tasks x 6000 MB, no node count. batch: MaxMemPerCPU 4000 gives each task 2 CPUs
    # of 3000 MB; a 64-CPU node holds 32 such tasks (192000 of its 256000 MB): 2 nodes,
    # now. Before, the tasks were packed as on the site's largest node (m01: 64 on one,
    # 384000 MB) and no batch node could hold that: "no single node meets all the
    # requirements together", and the job went to big
    v = only(run("#SBATCH -n 64 --mem-per-cpu=6000 -t 1:00:00", selene()), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "partition batch: 6000 MB per CPU is above its MaxMemPerCPU 4000 MB, so each " \
        "task gets 2 CPUs (64 a node, 3000 MB each)" in v.notes
    # excl has no MaxMemPerCPU: 6000 MB a task, 42 a node by memory (252000 MB): 2 nodes.
    # Before: "needs 384000 MB memory per node, largest node has 256000 MB"
    v = only(run("#SBATCH -p excl -n 64 --mem-per-cpu=6000 -t 1:00:00", selene()), "selene",
             "excl")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # a node count given: 64 tasks on one node is 128 CPUs, above a batch node
    assert reasons(run("#SBATCH -p batch -N 1 -n 64 --mem-per-cpu=6000 -t 1:00:00",
                       selene()), "selene").startswith("partition batch: needs 128 CPUs")



def test_memory_a_node_above_max_mem_per_cpu_raises_the_cpus_a_node():
    # --mem=250000 on 4 CPUs in batch: 62500 MB a CPU against MaxMemPerCPU 4000.
    # slurmctld raises the job's CPUs a node (pn_min_cpus) to ceil(250000 / 4000) = 63.
    # bob's 8-CPU jobs leave 56 free on each node, the first to end is n01's (+1 h).
    # Before, the 4 CPUs were placed: now
    site = _partly_busy()
    v = only(run("#SBATCH -p batch -N 1 -n 4 --mem=250000 -t 1:00:00", site), "selene",
             "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert "partition batch: 250000 MB a node is above its MaxMemPerCPU 4000 MB x 4 CPUs, " \
        "so the job gets 63 CPUs a node" in v.notes
    # 200000 MB: 50 CPUs, 56 free: now
    assert only(run("#SBATCH -p batch -N 1 -n 4 --mem=200000 -t 1:00:00", site), "selene",
                "batch").estimated_start == NOW
    # unnamed partition: big (no MaxMemPerCPU, m01 idle) starts it now
    assert only(run("#SBATCH -N 1 -n 4 --mem=250000 -t 1:00:00", site), "selene",
                "big").estimated_start == NOW


# --------------------------------------------------------------- QOS limits

def test_qos_max_wall_and_max_tres_per_job():
    assert reasons(run("#SBATCH --qos=short -t 5:00:00", selene()), "selene") == \
        "walltime 5:00:00 above the job's QOS short MaxWall 4:00:00"
    assert only(run("#SBATCH --qos=short -t 4:00:00", selene()), "selene",
                "batch").verdict == "READY"
    assert "needs 3 nodes in all, the job's QOS wide allows 2 (MaxTRESPerJob node=2)" in \
        reasons(run("#SBATCH --qos=wide -N 3 -t 1:00:00", selene()), "selene")


def test_qos_max_tres_per_user_counts_the_users_running_jobs():
    # normal: 256 CPUs a user. alice's own job 41 holds 200 on n01-n04 until +2 h: a job
    # of 64 more waits for it, though n05 and n06 are empty
    site = selene(running("41", "alice", "n0[1-4]", 200, 2, 4, nodes=4),
                  alloc={"n01": 50, "n02": 50, "n03": 50, "n04": 50}, qos_of={"41": "normal"})
    v = only(run("#SBATCH -p batch -n 64 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert has_note(v, "QOS normal's MaxTRESPerUser cpu=256 is in use: your running jobs "
                       "under it hold 200 CPUs, the job needs 64")
    # 56 more fit under 256: now
    v = only(run("#SBATCH -p batch -n 56 -t 1:00:00", site), "selene", "batch")
    assert v.estimated_start == NOW
    # 300 CPUs never fit under it
    assert "needs 300 CPUs in all, the job's QOS normal allows 256 (MaxTRESPerUser " \
        "cpu=256)" in reasons(run("#SBATCH -N 5 -n 300 -t 1:00:00", selene()), "selene")


def test_qos_grp_tres_gpus_held_by_anyone_under_it():
    # gpuq: 4 GPUs for all its jobs; bob's job 11 under it holds 2 (on g01) until +3 h.
    # Two more: now on g01; three: +3 h though g01 has 2 free and nothing else waits
    site = selene(running("11", "bob", "g01", 8, 3, 6, "gpu", gpus=2), galloc={"g01": 2},
                  alloc={"g01": 8}, qos_of={"11": "gpuq"})
    job = "#SBATCH -p gpu --qos=gpuq -N 1 --gres=gpu:{} -t 1:00:00"
    assert only(run(job.format(2), site), "selene", "gpu").estimated_start == NOW
    v = only(run(job.format(3), site), "selene", "gpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    assert has_note(v, "QOS gpuq's GrpTRES gres/gpu=4 is in use: running jobs under it hold "
                       "2 GPUs, the job needs 3: it waits until enough of them end "
                       "(QOSGrpGRES)")
    # under normal (no GPU limit) three GPUs of any type start now: g02's MIG slices (a
    # GPU each to Slurm); three a100 wait for bob's job (g01's two free; the slices are of
    # types a100_1g.10gb and a100_3g.40gb, not a100)
    assert only(run(job.format(3).replace("--qos=gpuq ", ""), site), "selene",
                "gpu").estimated_start == NOW
    v = only(run(job.format("a100:3").replace("--qos=gpuq ", ""), site), "selene", "gpu")
    assert v.estimated_start == hours(3)
    assert "needs 6 GPUs in all, the job's QOS gpuq allows 4 (GrpTRES gres/gpu=4)" in reasons(
        run("#SBATCH -p gpu --qos=gpuq -N 2 --gres=gpu:a100:3 -t 1:00:00", selene()),
        "selene")


# --------------------------------------------------------------- reservations

def test_an_upcoming_maintenance_reservation_bounds_what_starts_before_it():
    # maint holds every batch node from +3 h to +9 h: a 2 h job ends before it and starts
    # now; a 4 h one would run into it and waits until it ends
    site = selene(resv=resv("maint", "n[01-06]", 3, 9, flags="MAINT,SPEC_NODES"))
    v = only(run("#SBATCH -p batch -N 1 -t 2:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run("#SBATCH -p batch -N 1 -t 4:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(9))


def test_a_running_reservation_of_another_user():
    # course holds n01-n04 for carol until +5 h: alice's 3 nodes have n05 and n06 only
    # now, all six at +5 h; naming course is refused (not among its users)
    site = selene(resv=resv("course", "n[01-04]", -1, 5, users="carol"))
    v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(5))
    assert only(run("#SBATCH -p batch -N 2 -t 1:00:00", site), "selene",
                "batch").estimated_start == NOW
    p = run("#SBATCH -p batch -N 1 -t 1:00:00 --reservation=course", site)
    assert p.verdict("selene").verdict == "RESTRICTED"
    assert reasons(p, "selene") == "reservation 'course' is not open to alice (its users: carol)"


def test_the_users_own_reservation_and_its_end():
    site = selene(resv=resv("mine", "n[01-02]", -1, 5, users="alice,bob"))
    v = only(run("#SBATCH -p batch -N 2 -t 1:00:00 --reservation=mine", site), "selene",
             "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert has_note(v, "reservation mine ends at 2026-03-01 14:00: the job must start by "
                       "+4:00:00 to end inside it")
    # 6 h from now runs past its end (+5 h): Slurm would end it there
    assert reasons(run("#SBATCH -p batch -N 2 -t 6:00:00 --reservation=mine", site),
                   "selene").startswith("walltime 6:00:00 runs past reservation mine's end "
                                        "at 2026-03-01 14:00 (5:00:00 of it left from now)")
    # 3 nodes: the reservation has 2. Before: "(others: no single node meets all the
    # requirements together)", though n03-n06 meet every need but being in it
    assert reasons(run("#SBATCH -p batch -N 3 -t 1:00:00 --reservation=mine", site),
                   "selene") == ("needs 3 nodes, partition batch has only 2 that can run it "
                                 "(others: not in reservation mine: n03, n04, n05, n06)")
    assert reasons(run("#SBATCH -p batch -N 1 -t 1:00:00 --reservation=nope", site),
                   "selene") == "reservation 'nope' not found (site has: mine)"


# --------------------------------------------------------------- node states

STATES = {"n01": "IDLE+DRAIN", "n02": "DOWN+NOT_RESPONDING", "n03": "MIXED+DRAIN",
          "n04": "IDLE+COMPLETING", "n05": "FUTURE", "n06": "IDLE+POWERED_DOWN"}


def test_node_states_drain_down_draining_completing_future_powered_down():
    # usable: n04 (idle, its last job's epilog still running) and n06 (powered down,
    # resumed on demand); not: n01 drained, n02 down, n03 draining (its jobs finish, no
    # new one), n05 FUTURE (defined, not in service). Before, n05 was counted among the
    # down or drained nodes
    site = selene(states=STATES)
    assert reasons(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene") == (
        "needs 3 nodes, partition batch has only 2 usable (others drained n01; down n02; "
        "draining n03; not yet in "
        "service (FUTURE): n05)")
    v = only(run("#SBATCH -p batch -N 2 -t 1:00:00", site), "selene", "batch")
    # n06 boots first: planned within ResumeTimeout (since the follow-ups of sweep 19;
    # before READY now with a note)
    assert (v.verdict, v.estimated_start) == ("BUSY", NOW + timedelta(seconds=60))
    assert "partition batch: n06 powered down: Slurm boots the nodes it gives the job " \
        "first, planned to take 60 s (Slurm's default ResumeTimeout), the longest a boot " \
        "may take (how long one takes there is not read)" in v.notes
    # excl: n05 FUTURE alone is left out
    assert reasons(run("#SBATCH -p excl -N 2 -t 1:00:00", site), "selene") == (
        "needs 2 nodes, partition excl has only 1 usable (others not yet in service "
        "(FUTURE): n05)")


# --------------------------------------------------------------- features

def test_feature_and_or_bracket_on_racks():
    # rackA&ib: n01-n03 (batch) -> 3 nodes now
    v = only(run('#SBATCH -N 3 -C "rackA&ib" -t 1:00:00', selene()), "selene", "batch")
    assert v.estimated_start == NOW
    # rackB&ib: n04 only (n05, n06 lack ib)
    r = reasons(run('#SBATCH -N 2 -C "rackB&ib" -t 1:00:00', selene()), "selene")
    assert r.startswith("needs 2 nodes, partition batch has only 1 that can run it (others: "
                        "no single node meets all the requirements together (feature "
                        "'rackB' on n05, n06; feature 'ib' on n01, n02, n03))")
    # [rackA|rackB]: all in one rack, three a rack
    r = reasons(run('#SBATCH -N 4 -C "[rackA|rackB]" -t 1:00:00', selene()), "selene")
    assert r.startswith("constraint '[rackA|rackB]' needs all 4 nodes with the same one of "
                        "them, partition batch has at most 3 (rackA: 3, rackB: 3)")
    # rackA|rackB (either, mixed): four of batch's six
    assert only(run('#SBATCH -N 4 -C "rackA|rackB" -t 1:00:00', selene()), "selene",
                "batch").estimated_start == NOW


# --------------------------------------------------------------- GPU types, MIG, shards

def test_mig_slices_are_gpus_of_their_own_type():
    # g02's A100s are cut into 7 slices of 1g.10gb and 2 of 3g.40gb (each a GPU to Slurm)
    v = only(run("#SBATCH -p gpu --gres=gpu:a100_1g.10gb:3 -t 1:00:00", selene()), "selene",
             "gpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # three 3g.40gb: g02 has two of them (nine GPUs in all). Before: "no single node meets
    # all the requirements together (GPU a100_3g.40gb on g02; 3 GPUs on g01)", g01's four
    # whole A100s counted as if of that type
    assert reasons(run("#SBATCH -p gpu --gres=gpu:a100_3g.40gb:3 -t 1:00:00", selene()),
                   "selene") == ("needs 3 GPUs of type 'a100_3g.40gb' per node, largest node "
                                 "has 2 of them")
    # five whole a100: g01 has four (g02's slices are not a100 to Slurm)
    assert reasons(run("#SBATCH -p gpu --gres=gpu:a100:5 -t 1:00:00", selene()),
                   "selene") == "needs 5 GPUs of type 'a100' per node, largest node has 4 of them"


def test_whole_a100s_wait_for_g01_the_slices_do_not_stand_in():
    # bob's job holds 3 of g01's 4 A100s until +3 h: two A100s wait for it
    site = selene(running("11", "bob", "g01", 8, 3, 6, "gpu", gpus=3), galloc={"g01": 3},
                  alloc={"g01": 8})
    v = only(run("#SBATCH -p gpu --gres=gpu:a100:2 -t 1:00:00", site), "selene", "gpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    assert only(run("#SBATCH -p gpu --gres=gpu:a100:1 -t 1:00:00", site), "selene",
                "gpu").estimated_start == NOW


def test_shards_of_the_l40s_node():
    # g03 shares its 2 L40S as 16 shards: 8 fit, 20 do not; g01 and g02 have none
    v = only(run("#SBATCH -p gpu --gres=shard:8 -t 1:00:00", selene()), "selene", "gpu")
    assert v.estimated_start == NOW
    assert reasons(run("#SBATCH -p gpu --gres=shard:20 -t 1:00:00", selene()), "selene") == \
        "needs shard:20 per node, the most a node has is 16"


# --------------------------------------------------------------- exclusivity, preemption

def _partly_busy():
    """bob's 8-CPU job on each of n01-n06, ending at +1 h on n01 ... +6 h on n06."""
    return selene(*[running(str(30 + i), "bob", f"n0{i}", 8, i, 6) for i in range(1, 7)],
                  alloc={f"n0{i}": 8 for i in range(1, 7)})


def test_exclusive_waits_for_an_empty_node_shared_does_not():
    site = _partly_busy()
    v = only(run("#SBATCH -p batch -N 1 -n 8 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # --exclusive: the first node to empty is n01, at +1 h
    v = only(run("#SBATCH -p batch -N 1 --exclusive -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    # excl (OverSubscribe=EXCLUSIVE, n05-n06) gives whole nodes whether asked or not:
    # n05 empties at +5 h
    v = only(run("#SBATCH -p excl -n 4 -t 1:00:00", site), "selene", "excl")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(5))
    assert "partition excl gives every job whole nodes (OverSubscribe=EXCLUSIVE)" in v.notes


def test_batch_preempts_scav_jobs_on_its_nodes():
    # scavenger jobs fill n01-n06 for 10 h more; batch (PriorityTier 10) requeues them
    # (scav's PreemptMode=REQUEUE): a batch job starts now
    site = selene(*[running(str(50 + i), "bob", f"n0{i}", 64, 10, 24, "scav")
                    for i in range(1, 7)], alloc={f"n0{i}": 64 for i in range(1, 7)})
    v = only(run("#SBATCH -N 2 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "partition batch: its jobs preempt the running jobs of partition scav " \
        "(PreemptMode=REQUEUE, PriorityTier 1) on its nodes (its PriorityTier 10): they count " \
        "as free" in v.notes
    # the same nodes held by batch jobs: nothing to preempt, +10 h
    site = selene(*[running(str(50 + i), "bob", f"n0{i}", 64, 10, 24) for i in range(1, 7)],
                  alloc={f"n0{i}": 64 for i in range(1, 7)})
    v = only(run("#SBATCH -p batch -N 2 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(10))


def test_backfill_around_a_waiting_job_with_the_default_time():
    # bob holds n01-n04 until +3 h; carol's 4-node job (4 h) waits for them: at +3 h it
    # takes four of the six nodes. alice's 2 nodes without -t run DefaultTime 2 h on n05,
    # n06: now. Three nodes: two free now, the third only after carol's job (+7 h)
    site = selene(*[running(str(60 + i), "bob", f"n0{i}", 64, 3, 6) for i in range(1, 5)],
                  pending("70", "carol", 256, 4, nodes=4, reason="Resources"),
                  alloc={f"n0{i}": 64 for i in range(1, 5)})
    assert only(run("#SBATCH -p batch -N 2", site), "selene", "batch").estimated_start == NOW
    v = only(run("#SBATCH -p batch -N 3 -t 2:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(7))


# --------------------------------------------------------------- arrays, hetjobs

def test_a_job_arrays_tasks_count_one_job_each_against_max_submit_jobs():
    # capped: 8 jobs queued or running a user; alice has 3 waiting under it. Slurm counts
    # each task of an array against the limit (job_array.html): 5 tasks fill it to 8 and
    # are taken; 6 are refused until one of hers ends; 10 never fit. Before, an array was
    # counted as one job: every case READY now
    site = selene(*[pending(str(80 + i), "alice", 1, 1) for i in range(3)],
                  qos_of={str(80 + i): "capped" for i in range(3)})
    job = "#SBATCH -p batch --qos=capped --array={} -t 1:00:00"
    v = only(run(job.format("0-4"), site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    p = run(job.format("0-5"), site)
    assert p.verdict("selene").verdict == "RESTRICTED"
    assert reasons(p, "selene") == (
        "QOS capped's MaxSubmitJobsPerUser is 8 and you have 3 jobs queued or running under "
        "it: the job array's 6 tasks count as 6 jobs: the submit is refused until 1 of them "
        "ends (QOSMaxSubmitJobPerUserLimit)")
    # %2 (two at a time) changes nothing: ten tasks are ten jobs
    assert reasons(run(job.format("0-9%2"), site), "selene") == (
        "QOS capped's MaxSubmitJobsPerUser is 8 and you have 3 jobs queued or running under "
        "it: the job array's 10 tasks count as 10 jobs, more than the 8 it allows: the "
        "submit is refused whatever ends (QOSMaxSubmitJobPerUserLimit)")
    # a step: 0-14:3 is 0, 3, 6, 9, 12: five tasks, taken
    assert only(run(job.format("0-14:3"), site), "selene", "batch").verdict == "READY"


def test_an_array_with_a_throttle_is_placed_task_by_task():
    # each task is a whole batch node for 1 h; %2 runs two at a time. A task starts as a
    # job of its shape would: now on the idle nodes; with all six busy until +2 h, +2 h
    v = only(run("#SBATCH -p batch -N 1 -n 64 --array=0-9%2 -t 1:00:00", selene()),
             "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    site = selene(*[running(str(60 + i), "bob", f"n0{i}", 64, 2, 4) for i in range(1, 7)],
                  alloc={f"n0{i}": 64 for i in range(1, 7)})
    v = only(run("#SBATCH -p batch -N 1 -n 64 --array=0-9%2 -t 1:00:00", site), "selene",
             "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_a_hetjob_of_batch_cpus_and_gpu_partition_a100s():
    het = "#SBATCH -p batch -N 1 -n 8 -t {t}\n#SBATCH hetjob\n#SBATCH -p gpu -N 1 --gres={g}"
    v = only(run(het.format(t="1:00:00", g="gpu:a100:4"), selene()), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "hetjob component 1 runs in partition gpu, can start +0:00:00: the job starts " \
        "when every component can" in v.notes
    # g01's A100s busy until +3 h (bob): the job starts when both can, +3 h
    site = selene(running("11", "bob", "g01", 8, 3, 6, "gpu", gpus=1), galloc={"g01": 1},
                  alloc={"g01": 8})
    v = only(run(het.format(t="1:00:00", g="gpu:a100:4"), site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    # a component's own limits: four 3g.40gb slices, gpu's 12 h MaxTime
    assert reasons(run(het.format(t="1:00:00", g="gpu:a100_3g.40gb:4"), selene()),
                   "selene") == ("hetjob component 1: needs 4 GPUs of type 'a100_3g.40gb' "
                                 "per node, largest node has 2 of them")
    assert reasons(run(het.format(t="13:00:00", g="gpu:a100:1"), selene()), "selene") == \
        "hetjob component 1: walltime 13:00:00 above partition gpu MaxTime 12:00:00"


# --------------------------------------------------------------- PBS select and place=

def _moira_p1_busy():
    """moira (the eleventh sweep's PBS Pro site: p1-p3, 64 CPUs 250 GB each) with bob's
    job on the whole of p1 until +2 h."""
    from test_placement_cases11 import _pjob, moira
    return moira(_pjob("1", "bob", 1, ends_h=2, limit_h=4, host="p1"))


def _pbs(select: str, place: str | None = None) -> str:
    return f"#PBS -l select={select}\n" + (f"#PBS -l place={place}\n" if place else "") + \
        "#PBS -l walltime=1:00:00"


def test_pbs_place_variants_on_two_free_hosts():
    site = _moira_p1_busy()
    # three chunks of 8: free (shared hosts) fits p2 now; scatter needs three hosts, one
    # of them p1 (+2 h); pack puts all 24 CPUs on p2 now; excl: the chunks share hosts
    # the job holds alone, p2 is empty: now; scatter:excl: three empty hosts, p1's at +2 h
    for place, start_h in (("free", 0), ("scatter", 2), ("pack", 0), ("excl", 0),
                           ("scatter:excl", 2)):
        v = only(run(_pbs("3:ncpus=8", place), site), "moira", "workq")
        assert v.estimated_start == hours(start_h), place
    # pack of 2 x 40 CPUs: 80 on one host, each has 64
    assert reasons(run(_pbs("2:ncpus=40", "pack"), site), "moira") == \
        "needs 80 ncpus per vnode (select=2:ncpus=40, place=pack), largest vnode has 64"


def test_pbs_vscatter_beyond_the_hosts_says_how_many():
    # vscatter: each chunk on a vnode of its own; moira's hosts are one vnode each: four
    # chunks, three hosts. Before, the reason ended at "(scatter placement)"
    assert reasons(run(_pbs("4:ncpus=8", "vscatter"), _moira_p1_busy()), "moira") == (
        "the chunks 4:ncpus=8 do not fit the site's nodes together (scatter placement): "
        "they ask 4 hosts, one a chunk, and 3 can hold one")
    assert only(run(_pbs("3:ncpus=8", "vscatter"), _moira_p1_busy()), "moira",
                "workq").estimated_start == hours(2)


def test_pbs_chunks_of_two_shapes_one_above_every_host():
    # 300 GB in one chunk: a host has 250 GB
    assert reasons(run(_pbs("1:ncpus=64:mem=300gb+2:ncpus=8"), _moira_p1_busy()),
                   "moira") == ("chunk 1 (1:ncpus=64:mem=300gb): needs 307200 MB memory per "
                                "vnode, largest vnode has 256000 MB")
    # a whole host and two small chunks: the big one on p2 or p3, the small ones beside
    # on the other: now
    v = only(run(_pbs("1:ncpus=64+2:ncpus=8"), _moira_p1_busy()), "moira", "workq")
    assert v.estimated_start == NOW


# --------------------------------------------------------------- LSF span and affinity

def _wren_busy():
    """wren (the eighth sweep's LSF site: w1-w2 32 CPUs, w3-w4 64): bob's 64 slots fill w3
    until +2 h, his 16 on w4 until +3 h."""
    from test_placement_cases8 import _wjob, wren
    return wren(_wjob("1", "bob", 64, "w3", 2), _wjob("2", "bob", 16, "w4", 3))


def _bsub(n: int, r: str) -> str:
    return f'#BSUB -n {n}\n#BSUB -R "{r}"\n#BSUB -W 1:00'


def test_lsf_span_hosts_ptile_and_affinity():
    site = _wren_busy()
    # 48 slots on one host: w4 has 48 free
    assert only(run(_bsub(48, "span[hosts=1]"), site), "wren",
                "normal").estimated_start == NOW
    # 16 a host over 4 hosts: w3 is the fourth, +2 h
    v = only(run(_bsub(64, "span[ptile=16]"), site), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # affinity[core(2)]: 32 tasks of 2 cores = 64 cores on one host, w3 once it empties;
    # without it, 32 slots fit w1 now
    v = only(run(_bsub(32, "span[hosts=1] affinity[core(2)]"), site), "wren", "normal")
    assert v.estimated_start == hours(2)
    assert only(run(_bsub(32, "span[hosts=1]"), site), "wren",
                "normal").estimated_start == NOW
    # 8 tasks a host of 4 cores each: 32 cores on each of 3 hosts (w1, w2, w4): now
    assert only(run(_bsub(24, "span[ptile=8] affinity[core(4)]"), site), "wren",
                "normal").estimated_start == NOW


# --------------------------------------------------------------- flux

def test_flux_nodes_down_and_counts_name_the_site():
    # flux has no partitions: a node count is the site's. Before: "partition  has only 2
    # usable", "largest partition has 4"
    from test_placement_cases7 import flux4
    cfg, snap = flux4()
    snap.nodes[0].state, snap.nodes[1].state = "drained", "down"
    assert reasons(run("# flux: -N 3 -n 3 -t 60m", (cfg, snap)), "flux") == \
        "needs 3 nodes, the site has only 2 usable (others drained f0; down f1)"
    assert reasons(run("# flux: -N 5 -n 5 -t 60m", flux4()), "flux") == \
        "needs 5 nodes, the site has only 4"
    # 5 tasks of 4 cores: 4 a 16-core node, two nodes; on one node 20 cores
    assert only(run("# flux: -n 5 -c 4 -t 60m", flux4()), "flux", None).verdict == "READY"
    assert reasons(run("# flux: -N 1 -n 5 -c 4 -t 60m", flux4()), "flux") == \
        "needs 20 cores per node (5 tasks x 4 cores), largest node has 16"


# --------------------------------------------------------------- ranking between sites

def _twin(name: str, *queue: str, alloc=None, **cfg):
    """selene's copy named `name`, its sites-file entry updated with `cfg` (speed_factor,
    charge_factor, metadata)."""
    c, s = selene(*queue, alloc=alloc)
    return c.model_copy(update={"name": name, **cfg}), s.model_copy(update={"site": name})


def _busy(h: float) -> tuple[list[str], dict[str, int]]:
    """bob's jobs holding n01-n06 whole until +h."""
    return ([running(str(60 + i), "bob", f"n0{i}", 64, h, 4) for i in range(1, 7)],
            {f"n0{i}": 64 for i in range(1, 7)})


def _place(script: str, sites, **kw):
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.placement import place
    spec = Federation.parse("#!/bin/bash\n" + script + "\n./app\n")
    return place(spec, sites, now=NOW, **kw)


FOUR = "#SBATCH -p batch -N 4 -n 256 -t 4:00:00"  # four whole nodes for 4 h


def test_speed_factor_against_the_wait():
    # sol runs twice as fast (speed_factor 2: 2 h for the 4 h asked, no history); luna is
    # idle. sol busy until +1 h: finishes at +3 h, luna at +4 h: sol. Busy until +3 h:
    # +5 h against +4 h: luna
    q, alloc = _busy(1)
    p = _place(FOUR, [_twin("luna"), _twin("sol", *q, alloc=alloc, speed_factor=2.0)])
    assert p.choice == "sol"
    assert (p.verdict("sol").estimated_finish, p.verdict("luna").estimated_finish) == \
        (hours(3), hours(4))
    assert p.why_not("luna") == "finishes 1:00:00 later: runs longer (4:00:00 vs 2:00:00: " \
        "speed factor 1 vs 2)"
    q, alloc = _busy(3)
    p = _place(FOUR, [_twin("luna"), _twin("sol", *q, alloc=alloc, speed_factor=2.0)])
    assert p.choice == "luna"
    assert p.why_not("sol") == "finishes 1:00:00 later: starts later (+3:00:00 vs +0:00:00)"


def test_charge_factor_breaks_an_equal_finish_and_a_full_tie_keeps_the_order():
    # both idle, same speed: the same finish (+4 h); luna charges twice: 4 nodes x 4 h x 2
    # = 32 against 16
    p = _place(FOUR, [_twin("luna", charge_factor=2.0), _twin("sol")])
    assert p.choice == "sol" and (p.verdict("luna").cost, p.verdict("sol").cost) == (32, 16)
    assert p.why_not("luna") == "same finish within noise (+4:00:00 vs +4:00:00), costs " \
        "more (32.00 vs 16.00)"
    # nothing tells them apart: the order given
    p = _place(FOUR, [_twin("luna"), _twin("sol")])
    assert p.choice == "luna"
    assert p.why_not("sol") == "same finish within noise (+4:00:00 vs +4:00:00) and cost; " \
        "listed later"


def test_stage_in_time_and_a_stage_in_hidden_by_the_wait():
    def bw(mbps: int) -> dict:
        return {"architecture": "x86_64", "bandwidth_mbps": mbps}
    # 90 GB in: 7200 s at 100 Mb/s, 720 s at 1000 Mb/s. Both idle: luna (fast link)
    # finishes at +4:12, sol at +6:00
    p = _place(FOUR, [_twin("luna", metadata=bw(1000)), _twin("sol", metadata=bw(100))],
               stage_in_bytes=90 * 10**9)
    assert p.choice == "luna"
    assert (p.verdict("luna").stage_in_s, p.verdict("sol").stage_in_s) == (720, 7200)
    assert p.why_not("sol") == "finishes 1:48:00 later: slower stage-in (2:00:00 vs 0:12:00)"
    # sol twice as fast and busy until +2 h: its 2 h stage-in runs while it waits, it
    # finishes at +4:00, 12 min before luna: within 5% of the time to the finish, a tie,
    # which goes to the surer start (luna's is certain, sol's an estimate)
    q, alloc = _busy(2)
    p = _place(FOUR, [_twin("luna", metadata=bw(1000)),
                      _twin("sol", *q, alloc=alloc, speed_factor=2.0, metadata=bw(100))],
               stage_in_bytes=90 * 10**9)
    assert p.verdict("sol").estimated_finish == hours(4)
    assert p.verdict("luna").estimated_finish == hours(4.2)
    assert p.choice == "luna"
    assert p.why_not("sol").startswith("same finish within noise (+4:00:00 vs +4:12:00), "
                                       "less sure start")


def test_reservations_upcoming_named_flex_and_the_nodes_they_take_from_others():
    # later: n05-n06 for alice from +2 h to +8 h. Naming it: its jobs start no sooner
    r = resv("later", "n[05-06]", 2, 8, users="alice")
    v = only(run("#SBATCH -p batch -N 2 -t 1:00:00 --reservation=later", selene(resv=r)),
             "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert "partition batch: reservation later starts at 2026-03-01 11:00: its jobs start no " \
        "sooner" in v.notes
    # not naming it, 4 nodes for 3 h: n01-n04, now
    assert only(run("#SBATCH -p batch -N 4 -t 3:00:00", selene(resv=r)), "selene",
                "batch").estimated_start == NOW
    # scav's 11 nodes less n05-n06 from +2 h: 10 nodes for 3 h wait for its end (+8 h)
    v = only(run("#SBATCH -p scav -N 10 -t 3:00:00", selene(resv=r)), "selene", "scav")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(8))
    # FLEX: a job of it may use nodes outside it and run past its end (+3 h): 3 nodes
    # for 5 h, now
    r = resv("flexy", "n[01-02]", -1, 3, users="alice", flags="FLEX,SPEC_NODES")
    v = only(run("#SBATCH -p batch -N 3 -t 5:00:00 --reservation=flexy", selene(resv=r)),
             "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


# --------------------------------------------------------------- Grid Engine

def test_grid_engine_queue_slots_and_pe_allocation():
    # hestia (the twelfth sweep's: s1-s3, 16 slots each, all.q h_rt 24 h, PE smp all on
    # one host, PE mpi 8 a host); bob's 12 slots on s1 until +2 h
    from test_placement_cases12 import _ge_job, hestia
    site = hestia({"all.q": (["s1", "s2", "s3"], "")}, {("all.q", "s1"): [_ge_job("1", 12, 2)]})
    assert "1-00:00:00" in reasons(run("#$ -pe smp 4\n#$ -l h_rt=30:00:00", site), "hestia")
    assert reasons(run("#$ -pe smp 20\n#$ -l h_rt=1:00:00", site), "hestia") == \
        "needs 20 slots per host, largest host has 16"
    # mpi 24: three hosts of 8, s1 has 4 free until +2 h
    v = only(run("#$ -pe mpi 24\n#$ -l h_rt=1:00:00", site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # mpi 16: s2 and s3 now; smp 16: s2 now
    for pe in ("mpi", "smp"):
        assert only(run(f"#$ -pe {pe} 16\n#$ -l h_rt=1:00:00", site), "hestia",
                    "all.q").estimated_start == NOW
    # mpi 40: five hosts of 8, the site has three
    assert reasons(run("#$ -pe mpi 40\n#$ -l h_rt=1:00:00", site), "hestia").startswith(
        "needs 5 hosts")
