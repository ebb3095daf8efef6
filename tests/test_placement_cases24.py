"""Placement cases worked by hand, twenty-fourth sweep: lyra, a Slurm center of several
node kinds read whole from what its commands print (`scontrol show partition/node -o`,
`squeue`): CPU nodes of two racks, large-memory nodes, A100, H100 and V100 GPU nodes named
by gres and by features, partitions of different MaxNodes, MaxTime, MaxMemPerNode and
DefMemPerCPU, and three PriorityTiers whose lower two are preempted (CANCEL, REQUEUE);
then federations mixing lyra with a PBS Pro and a flux site of other architectures, and
sites whose probe timed out or was refused. Each case asserts the decision and what a
user reads of it."""

from __future__ import annotations

from datetime import timezone

from test_placement_cases import NOW, at, has_note, hours, only, reasons, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands

slurm = SlurmCommands(tz=timezone.utc)

_PART = ("PartitionName={name} AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL "
         "AllocNodes=ALL Default={default} QoS=N/A DefaultTime={deftime} DisableRootJobs=NO "
         "ExclusiveUser=NO GraceTime=0 Hidden=NO MaxNodes={max_nodes} MaxTime={max_time} "
         "MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED "
         "Nodes={nodes} PriorityJobFactor=1 PriorityTier={tier} RootOnly=NO ReqResv=NO "
         "OverSubscribe=NO OverTimeLimit=NONE PreemptMode={preempt} State=UP "
         "TotalCPUs={cpus} TotalNodes={count} SelectTypeParameters=NONE "
         "JobDefaults={job_defaults} DefMemPerCPU={def_mem} MaxMemPerNode={max_mem}")
# lyra, as `scontrol --all show partition -o` prints it:
#  cpu (default): c01-c04, 2 days (1 h when the job says none), at most 4 nodes, 3900 MB a
#    CPU when the job asks no memory; PriorityTier 10
#  bigmem: m01-m02, 1 day, one node a job, 15600 MB a CPU by default, at most 1000000 MB a
#    node (of the 1031000 each has)
#  gpu: g01-g02 (A100), h01-h02 (H100), 1 day, at most 2 nodes, 64000 MB a GPU by default
#  legacy: v01-v03 (V100), 12 h
#  standby: c01-c04 and g01-g02, h01-h02, 4 h, PriorityTier 5, PreemptMode=REQUEUE
#  scavenge: every node but m01-m02, 1 day, PriorityTier 1, PreemptMode=CANCEL
PARTITIONS = "".join(_PART.format(**p) + "\n" for p in (
    dict(name="cpu", default="YES", deftime="01:00:00", max_nodes="4",
         max_time="2-00:00:00", nodes="c[01-04]", tier=10, preempt="OFF", cpus=256, count=4,
         job_defaults="(null)", def_mem="3900", max_mem="UNLIMITED"),
    dict(name="bigmem", default="NO", deftime="NONE", max_nodes="1", max_time="1-00:00:00",
         nodes="m[01-02]", tier=10, preempt="OFF", cpus=128, count=2, job_defaults="(null)",
         def_mem="15600", max_mem="1000000"),
    dict(name="gpu", default="NO", deftime="NONE", max_nodes="2", max_time="1-00:00:00",
         nodes="g[01-02],h[01-02]", tier=10, preempt="OFF", cpus=320, count=4,
         job_defaults="DefMemPerGPU=64000", def_mem="UNLIMITED", max_mem="UNLIMITED"),
    dict(name="legacy", default="NO", deftime="NONE", max_nodes="UNLIMITED",
         max_time="12:00:00", nodes="v[01-03]", tier=10, preempt="OFF", cpus=120, count=3,
         job_defaults="(null)", def_mem="4500", max_mem="UNLIMITED"),
    dict(name="standby", default="NO", deftime="NONE", max_nodes="UNLIMITED",
         max_time="04:00:00", nodes="c[01-04],g[01-02],h[01-02]", tier=5, preempt="REQUEUE",
         cpus=576, count=8, job_defaults="(null)", def_mem="3900", max_mem="UNLIMITED"),
    dict(name="scavenge", default="NO", deftime="NONE", max_nodes="UNLIMITED",
         max_time="1-00:00:00", nodes="c[01-04],g[01-02],h[01-02],v[01-03]", tier=1,
         preempt="CANCEL", cpus=696, count=11, job_defaults="(null)", def_mem="3900",
         max_mem="UNLIMITED"),
))

_NODE = ("NodeName={name} Arch=x86_64 CoresPerSocket={cores} CPUAlloc={alloc} "
         "CPUEfctv={cpus} CPUTot={cpus} CPULoad=0.02 AvailableFeatures={feats} "
         "ActiveFeatures={feats} Gres={gres} GresDrain=N/A GresUsed={used} NodeAddr={name} "
         "NodeHostName={name} Version=23.11.6 OS=Linux 5.14.0-427.el9.x86_64 "
         "RealMemory={mem} AllocMem={amem} FreeMem=1000 Sockets=2 Boards=1 State={state} "
         "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
         "Partitions={parts} BootTime=2026-02-20T08:00:00 SlurmdStartTime=2026-02-20T08:01:00")
# c01-c04: 64 CPUs 256000 MB, icelake avx512 ib, rack r1 (c01-c02) or r2 (c03-c04);
# m01-m02: 64 CPUs 1031000 MB, icelake avx512 bigmem; g01-g02: 64 CPUs 512000 MB, 4 A100
# (a100 ib); h01-h02: 96 CPUs 768000 MB, 4 H100 (h100 ib nvlink); v01-v03: 40 CPUs
# 192000 MB, 2 V100 (v100 skylake)
_CPU_PARTS = "cpu,standby,scavenge"
_GPU_PARTS = "gpu,standby,scavenge"
_KINDS = {
    "c": (64, 256000, "(null)", "gpu:0"),
    "m": (64, 1031000, "(null)", "gpu:0"),
    "g": (64, 512000, "gpu:a100:4(S:0-1)", "gpu:a100:{g}(IDX:N/A)"),
    "h": (96, 768000, "gpu:h100:4(S:0-1)", "gpu:h100:{g}(IDX:N/A)"),
    "v": (40, 192000, "gpu:v100:2(S:0-1)", "gpu:v100:{g}(IDX:N/A)"),
}
_NODES = (
    ("c01", "icelake,avx512,ib,r1", _CPU_PARTS), ("c02", "icelake,avx512,ib,r1", _CPU_PARTS),
    ("c03", "icelake,avx512,ib,r2", _CPU_PARTS), ("c04", "icelake,avx512,ib,r2", _CPU_PARTS),
    ("m01", "icelake,avx512,bigmem", "bigmem"), ("m02", "icelake,avx512,bigmem", "bigmem"),
    ("g01", "a100,ib", _GPU_PARTS), ("g02", "a100,ib", _GPU_PARTS),
    ("h01", "h100,ib,nvlink", _GPU_PARTS), ("h02", "h100,ib,nvlink", _GPU_PARTS),
    ("v01", "v100,skylake", "legacy,scavenge"), ("v02", "v100,skylake", "legacy,scavenge"),
    ("v03", "v100,skylake", "legacy,scavenge"),
)


def node_lines(alloc: dict[str, int], galloc: dict[str, int], amem: dict[str, int],
               states: dict[str, str]) -> str:
    lines = []
    for name, feats, parts in _NODES:
        cpus, mem, gres, used = _KINDS[name[0]]
        state = states.get(name) or ("MIXED" if alloc.get(name) or galloc.get(name)
                                     else "IDLE")
        if alloc.get(name) == cpus and name not in states:
            state = "ALLOCATED"
        lines.append(_NODE.format(name=name, cores=cpus // 2, alloc=alloc.get(name, 0),
                                  cpus=cpus, feats=feats, gres=gres,
                                  used=used.format(g=galloc.get(name, 0)), mem=mem,
                                  amem=amem.get(name, 0), state=state, parts=parts))
    return "\n".join(lines) + "\n"


def running(jid: str, node: str, cpus: int, left_h: float, *, partition: str = "cpu",
            limit_h: int = 24, user: str = "bob", gpus: int = 0, gtype: str = "") -> str:
    """A running job as `squeue -h -a -o SQUEUE_FIELDS` prints it: `left_h` hours of its
    `limit_h` left."""
    tres = (f"gres/gpu:{gtype}:{gpus}" if gtype else f"gres/gpu:{gpus}") if gpus else "N/A"
    started = left_h - limit_h
    return (f"{jid}|RUNNING|{at(started)}|{at(left_h)}|{at(started - 1)}|{limit_h}:00:00|1|"
            f"{cpus}|{user}|{partition}|{tres}|{node}|None|(null)|job{jid}")


def lyra(*jobs: tuple[str, str, int, float, dict], states: dict[str, str] | None = None):
    """lyra read from its commands' outputs, probed as alice; `jobs`: (id, node, CPUs,
    hours left, running()'s other fields) of each running job, whose CPUs, GPUs and memory
    (8000 MB a CPU) its node then shows allocated."""
    alloc: dict[str, int] = {}
    galloc: dict[str, int] = {}
    amem: dict[str, int] = {}
    lines = []
    for jid, node, cpus, left_h, more in jobs:
        alloc[node] = alloc.get(node, 0) + cpus
        galloc[node] = galloc.get(node, 0) + more.get("gpus", 0)
        amem[node] = amem.get(node, 0) + cpus * 1000
        lines.append(running(jid, node, cpus, left_h, **more))
    outputs = {"partitions": PARTITIONS, "nodes": node_lines(alloc, galloc, amem, states or {}),
               "queue": "\n".join(lines), "reservations": "No reservations in the system\n",
               "qos": "normal||||||||||\n", "assoc": "user|alice\nalice|proj||normal|normal\n"}
    snap = slurm.parse_snapshot("lyra", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="lyra", metadata={"architecture": "x86_64"}), snap


def job(jid: str, node: str, cpus: int, left_h: float, **more) -> tuple:
    return (jid, node, cpus, left_h, more)


def verdict(script: str, site=None):
    p = run(script, site or lyra())
    return p.verdict("lyra")


def said(v, text: str) -> bool:
    return any(text in x for x in v.reasons + v.notes + v.waits_for)


def test_the_outputs_are_read_as_lyra_is():
    _, snap = lyra()
    cpu, bigmem, gpu, legacy, standby, scavenge = snap.partitions
    assert (cpu.default, cpu.max_nodes, cpu.def_mem_per_cpu_mb, cpu.default_time_s) == \
        (True, 4, 3900, 3600)
    assert (bigmem.max_nodes, bigmem.max_mem_per_node_mb, gpu.def_mem_per_gpu_mb) == \
        (1, 1000000, 64000)
    assert [(p.priority_tier, p.preempt_mode) for p in (gpu, standby, scavenge)] == \
        [(10, "OFF"), (5, "REQUEUE"), (1, "CANCEL")]
    h01 = next(n for n in snap.nodes if n.name == "h01")
    assert (h01.cpus, h01.memory_mb, h01.gpus, h01.gpu_type) == (96, 768000, 4, "h100")
