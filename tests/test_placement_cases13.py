"""Placement cases worked by hand, thirteenth sweep: one Slurm center, selene, read whole
from what its commands print (`scontrol show partition/node/reservation -o`, `squeue`,
`sacctmgr show qos/assoc`), meeting the jobs its users send: partition and QOS limits,
reservations, node states, features, GPU slices and shards, exclusivity, preemption,
arrays and heterogeneous jobs; then PBS, LSF, flux and Grid Engine sites, and the
ranking between sites (speed, charge, stage-in, ties). Each case asserts the verdict per
site, the partition, the start and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta, timezone

from test_placement_cases import NOW, only, reasons, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands

H = 3600
slurm = SlurmCommands(tz=timezone.utc)


def hours(h: float):
    return NOW + timedelta(hours=h)


def at(h: float) -> str:
    """A time `h` hours from NOW as Slurm prints it."""
    return (NOW + timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%S")


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
)) + "\n"


def selene(*queue: str, states=None, alloc=None, galloc=None, mem=None, resv: str = "",
           qos_of: dict[str, str] | None = None, partitions: str = PARTITIONS,
           user: str = "alice"):
    """selene read from its commands' outputs; `queue`: squeue lines; `resv`: `scontrol
    show reservation -o` lines; the probe ran as `user` (account proj, default QOS normal,
    may use normal, short, gpuq, wide)."""
    outputs = {
        "partitions": partitions, "nodes": node_lines(states, alloc, galloc, mem),
        "queue": "\n".join(queue),
        "queue_qos": "".join(f"{j}|{q}|proj|NO|R|\n" for j, q in (qos_of or {}).items()),
        "qos": QOS, "reservations": resv or "No reservations in the system\n",
        "assoc": f"user|{user}\n{user}|proj||normal|normal,short,gpuq,wide\n"}
    snap = slurm.parse_snapshot("selene", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="selene", metadata={"architecture": "x86_64"}), snap


def has_note(v, text: str) -> bool:
    return any(text in n for n in v.notes)
