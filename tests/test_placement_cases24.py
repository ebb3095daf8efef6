"""Placement cases worked by hand, twenty-fourth sweep: lyra, a Slurm center of several
node kinds read whole from what its commands print (`scontrol show partition/node -o`,
`squeue`): CPU nodes of two racks, large-memory nodes, A100, H100 and V100 GPU nodes named
by gres and by features, partitions of different MaxNodes, MaxTime, MaxMemPerNode and
DefMemPerCPU, and three PriorityTiers whose lower two are preempted (CANCEL, REQUEUE);
then federations mixing lyra with a PBS Pro and a flux site of other architectures, and
sites whose probe timed out or was refused. Each case asserts the decision and what a
user reads of it."""

from __future__ import annotations

import json
from datetime import timezone

import pytest
from test_placement_cases import NOW, at, hours, only, reasons, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, SiteError, SiteSnapshot
from diamond_jupyter.needs import with_options
from diamond_jupyter.placement import SiteVerdict, place

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


def lyra(*jobs: tuple[str, str, int, float, dict], states: dict[str, str] | None = None,
         partitions: str = PARTITIONS):
    """lyra read from its commands' outputs, probed as alice; `jobs`: (id, node, CPUs,
    hours left, running()'s other fields) of each running job, whose CPUs, GPUs and memory
    (1000 MB a CPU) its node then shows allocated."""
    alloc: dict[str, int] = {}
    galloc: dict[str, int] = {}
    amem: dict[str, int] = {}
    lines = []
    for jid, node, cpus, left_h, more in jobs:
        alloc[node] = alloc.get(node, 0) + cpus
        galloc[node] = galloc.get(node, 0) + more.get("gpus", 0)
        amem[node] = amem.get(node, 0) + cpus * 1000
        lines.append(running(jid, node, cpus, left_h, **more))
    outputs = {"partitions": partitions, "nodes": node_lines(alloc, galloc, amem, states or {}),
               "queue": "\n".join(lines), "reservations": "No reservations in the system\n",
               "qos": "normal||||||||||\n", "assoc": "user|alice\nalice|proj||normal|normal\n"}
    snap = slurm.parse_snapshot("lyra", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="lyra", metadata={"architecture": "x86_64"}), snap


def on_lyra(script: str, partition: str,
            site: tuple[SiteConfig, SiteSnapshot] | None = None) -> SiteVerdict:
    """The verdict of `script` on lyra (`site`, else idle `lyra()`), the only site that can
    run it, in `partition`."""
    return only(run(script, lyra() if site is None else site), "lyra", partition)


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


# ---- GPU kinds: gres types, features, memory a GPU ------------------------------------------

def test_h100s_go_to_gpu_and_the_preemptible_partitions_are_passed_over_naming_gpu():
    """standby and scavenge hold the H100 nodes too, but gpu (PriorityTier 10) preempts
    them there: the engine keeps the job in gpu and says which partition would preempt it
    elsewhere (before: 'by jobs of partition cpu', whose nodes have no GPU)."""
    v = on_lyra("#SBATCH --gres=gpu:h100:2 -t 2:00:00", "gpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "partition standby passed over: the job may be preempted (PreemptMode=REQUEUE) by " \
        "jobs of partition gpu (PriorityTier 10 above its 5) on the same nodes" in v.notes
    assert "partition scavenge passed over: the job may be preempted (PreemptMode=CANCEL) by " \
        "jobs of partition gpu (PriorityTier 10 above its 1) on the same nodes" in v.notes
    assert "partition gpu: no memory asked, it gets DefMemPerGPU 64000 MB x 2 GPUs = 128000 " \
        "MB a node" in v.notes


def test_three_h100_nodes_are_more_than_any_partition_gives():
    """gpu allows 2 nodes a job; standby and scavenge have only the two H100 nodes."""
    assert reasons(run("#SBATCH --gres=gpu:h100:2 -N 3 -t 2:00:00", lyra()), "lyra") == (
        "partition cpu: no GPU of type 'h100' (its nodes have: none); no GPUs on any node | "
        "needs 3 nodes, partition bigmem allows at most 1 | "
        "needs 3 nodes, partition gpu allows at most 2 | "
        "partition legacy: no GPU of type 'h100' (its nodes have: v100) | "
        "needs 3 nodes, partition standby has only 2 that can run it (others: no GPU of type "
        "'h100' (its nodes have: a100)) | "
        "needs 3 nodes, partition scavenge has only 2 that can run it (others: no GPU of type "
        "'h100' (its nodes have: a100, v100))")


def test_a_v100_day_runs_only_in_scavenge_and_legacy_is_what_preempts_it():
    """legacy allows 12 h and standby has no V100: a day on a V100 fits only scavenge,
    whose V100 nodes it shares with legacy, not with cpu (before: 'by jobs of partition
    cpu', which never runs on v01-v03)."""
    v = on_lyra("#SBATCH --gres=gpu:v100:1 -t 1-00:00:00", "scavenge")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "walltime 1-00:00:00 above partition legacy MaxTime 12:00:00" in v.notes
    assert "partition scavenge: the job may be preempted (PreemptMode=CANCEL) by jobs of " \
        "partition legacy (PriorityTier 10 above its 1) on the same nodes" in v.notes


def test_features_and_across_gpu_kinds():
    """nvlink is an H100 node's feature: with h100 it runs, with a100 no node has both."""
    assert reasons(run("#SBATCH -C 'a100&nvlink' --gres=gpu:1 -t 1:00:00", lyra()),
                   "lyra") == ("no single node meets all the requirements together (feature "
                               "'a100' on g01, g02; feature 'nvlink' on h01, h02; 1 GPU on "
                               "g01, g02, h01, h02 and 3 more)")
    v = on_lyra("#SBATCH -C 'h100&nvlink' --gres=gpu:1 -t 1:00:00", "gpu")
    assert v.estimated_start == NOW


def test_matching_or_in_brackets_needs_one_rack_for_all_nodes():
    """[r1|r2]: every node of one rack; each has two CPU nodes, so three never run, two
    do; a count of each ([r1*2&r2*1]) takes nodes of both."""
    assert reasons(run("#SBATCH -N 3 -C '[r1|r2]' -t 1:00:00", lyra()), "lyra").startswith(
        "constraint '[r1|r2]' needs all 3 nodes with the same one of them, partition cpu has "
        "at most 2 (r1: 2, r2: 2)")
    assert on_lyra("#SBATCH -N 2 -C '[r1|r2]' -t 1:00:00", "cpu").estimated_start == NOW
    assert on_lyra("#SBATCH -N 3 -C '[r1*2&r2*1]' -t 1:00:00", "cpu").estimated_start == NOW


def test_feature_counts_of_two_gpu_kinds_in_one_job():
    """[a100*1&h100*1] on two nodes: one of each, in gpu; legacy has neither."""
    v = on_lyra("#SBATCH -N 2 -C '[a100*1&h100*1]' --gres=gpu:2 -t 1:00:00", "gpu")
    assert v.estimated_start == NOW
    assert "constraint 'a100*1' needs 1 node with it, partition legacy has 0" in v.notes


# ---- feature counts beyond the job's nodes -------------------------------------------------

_BEYOND = ("; Slurm refuses it at submission (Requested node configuration is not available) "
           "or holds it for good (BadConstraints). ")


def test_feature_counts_adding_up_to_more_nodes_than_asked_are_bad_input():
    """[v100*2&icelake*1] gives each count nodes of its own: 3, where -N 2 caps the job at 2
    (before: READY in scavenge, which holds both kinds). No site can ever run it: bad input
    (exit 2), the constraint, the counts' sum and -N named, and what would do."""
    err = run("#SBATCH -N 2 -C '[v100*2&icelake*1]' -t 1:00:00", lyra()).no_choice()
    assert isinstance(err, BadInput) and err.exit_code == 2
    assert str(err) == (
        "no site can run this job: lyra: constraint '[v100*2&icelake*1]': its counts add up to "
        "3 nodes (v100*2 + icelake*1, each on nodes of its own), more than the job's -N 2"
        + _BEYOND + "Ask -N 3, or counts adding up to at most 2")


@pytest.mark.parametrize("script, said_", [
    ("-N 1 -C 'v100*2'", "constraint 'v100*2': it needs 2 nodes, more than the job's -N 1"
     + _BEYOND + "Ask -N 2, or counts of at most 1"),
    # counts without brackets may share nodes: the largest alone is too many
    ("-N 1 -C 'v100*2&skylake*1'", "constraint 'v100*2&skylake*1': 'v100*2' alone needs 2 "
     "nodes, more than the job's -N 1" + _BEYOND + "Ask -N 2, or counts of at most 1"),
    # a node range caps them at its largest
    ("-N 1-2 -C '[v100*2&icelake*1]'", "constraint '[v100*2&icelake*1]': its counts add up to "
     "3 nodes (v100*2 + icelake*1, each on nodes of its own), more than the job's -N 1-2 (at "
     "most 2)" + _BEYOND + "Ask -N 3, or counts adding up to at most 2"),
])
def test_a_count_beyond_the_most_nodes_the_job_asks_is_refused(script, said_):
    assert reasons(run(f"#SBATCH {script} -t 1:00:00", lyra()), "lyra") == said_


@pytest.mark.parametrize("script, partition", [
    ("-N 3 -C '[v100*2&icelake*1]'", "scavenge"),  # just enough: the only partition of both
    ("-N 2-3 -C '[v100*2&icelake*1]'", "scavenge"),  # within the range
    ("-N 4 -C '[r1*1&r2*1]'", "cpu"),  # fewer: the other two nodes need neither rack
    ("-N 2 -C 'h100*2&nvlink*1'", "gpu"),  # without brackets the H100 nodes hold both
])
def test_counts_within_the_nodes_asked_still_run(script, partition):
    assert on_lyra(f"#SBATCH {script} -t 1:00:00", partition).estimated_start == NOW


def _h100s_busy():
    """h01 full until +2 h, h02 until +3 h (gpu jobs); the A100 nodes free."""
    return lyra(job("5", "h01", 96, 2, partition="gpu", gpus=4, gtype="h100"),
                job("6", "h02", 96, 3, partition="gpu", gpus=4, gtype="h100"))


def test_memory_a_gpu_chooses_the_node_kind():
    """150 GB a GPU x 4 = 614400 MB: above an A100 node's 512000, so the free A100 nodes
    cannot take it and it waits for h01 (+2 h); 100 GB a GPU fits the A100 nodes now; 200
    GB a GPU is above every GPU node."""
    v = on_lyra("#SBATCH --mem-per-gpu=150G --gres=gpu:4 -t 1:00:00", "gpu", _h100s_busy())
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    v = on_lyra("#SBATCH --mem-per-gpu=100G --gres=gpu:4 -t 1:00:00", "gpu", _h100s_busy())
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert reasons(run("#SBATCH --mem-per-gpu=200G --gres=gpu:4 -t 1:00:00", lyra()),
                   "lyra") == ("no single node meets all the requirements together (4 GPUs "
                               "on g01, g02, h01, h02; 819200 MB memory on m01, m02)")


def test_gpus_in_all_with_memory_a_gpu_spread_over_two_h100_nodes():
    v = on_lyra("#SBATCH --gpus=6 --mem-per-gpu=200G -t 1:00:00", "gpu")
    assert v.estimated_start == NOW
    assert "its 6 GPUs (the job's, no node count) take 2 nodes here, 3 GPUs on each" in v.notes
    assert "partition legacy: needs 3 GPUs per node, largest node has 2; needs 614400 MB " \
        "memory per node, largest node has 192000 MB" in v.notes


def test_exclusive_waits_for_the_first_h100_node_to_empty():
    """A one-GPU job on each H100 node (+3 h, +5 h): --exclusive waits for h01, a shared
    job of one H100 starts now beside them."""
    site = lyra(job("1", "h01", 1, 3, partition="gpu", gpus=1, gtype="h100"),
                job("2", "h02", 1, 5, partition="gpu", gpus=1, gtype="h100"))
    v = on_lyra("#SBATCH --exclusive -C h100 -t 2:00:00", "gpu", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    v = on_lyra("#SBATCH --exclusive --gres=gpu:h100:4 -N 2 -t 2:00:00", "gpu", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(5))
    v = on_lyra("#SBATCH --gres=gpu:h100:3 -N 2 -t 2:00:00", "gpu", site)
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_tasks_a_node_only_the_h100_nodes_hold():
    """96 tasks a node of 8000 MB each: only an H100 node has 96 CPUs and 768000 MB."""
    v = on_lyra("#SBATCH --ntasks-per-node=96 --mem-per-cpu=8000 -N 2 -t 1:00:00", "gpu")
    assert v.estimated_start == NOW
    assert "partition cpu: needs 96 CPUs per node, largest node has 64; needs 768000 MB " \
        "memory per node, largest node has 256000 MB" in v.notes
    assert "partition standby passed over: the job may be preempted (PreemptMode=REQUEUE) by " \
        "jobs of partition gpu (PriorityTier 10 above its 5) on the same nodes" in v.notes


# ---- three PriorityTiers: gpu and cpu (10) over standby (5, REQUEUE) over scavenge (1, CANCEL)

def _scavenge_on(*nodes: str, left_h: float = 6):
    """A whole-node scavenge job on each of `nodes` for `left_h` hours more."""
    cpus = {"c": 64, "g": 64, "h": 96}
    return lyra(*[job(str(i), n, cpus[n[0]], left_h, partition="scavenge",
                      **({"gpus": 4, "gtype": "a100" if n[0] == "g" else "h100"}
                         if n[0] in "gh" else {}))
                  for i, n in enumerate(nodes, 1)])


def test_a_gpu_job_preempts_scavenge_jobs_and_names_only_the_partition_running_there():
    """The A100 nodes full of scavenge jobs for 6 h: a gpu job cancels them and starts
    now; the note names scavenge alone (before: 'scavenge ..., partition standby', though
    no standby job ran there)."""
    v = on_lyra("#SBATCH --gres=gpu:a100:2 -t 1:00:00", "gpu", _scavenge_on("g01", "g02"))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "partition gpu: its jobs preempt the running jobs of partition scavenge " \
        "(PreemptMode=CANCEL, PriorityTier 1) on its nodes (its PriorityTier 10): they count as " \
        "free" in v.notes


def test_standby_preempts_scavenge_but_scavenge_never_preempts_standby():
    site = _scavenge_on("c01", "c02", "c03", "c04")
    v = on_lyra("#SBATCH -p standby -N 2 -t 1:00:00", "standby", site)
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "partition standby: its jobs preempt the running jobs of partition scavenge " \
        "(PreemptMode=CANCEL, PriorityTier 1) on its nodes (its PriorityTier 5): they count as " \
        "free" in v.notes
    assert "partition standby: the job may be preempted (PreemptMode=REQUEUE) by jobs of " \
        "partition cpu (PriorityTier 10 above its 5) on the same nodes" in v.notes
    # the other way round: standby jobs on every CPU node until +3 h hold a scavenge job
    site = lyra(*[job(str(i), f"c0{i}", 64, 3, partition="standby") for i in range(1, 5)])
    v = on_lyra("#SBATCH -p scavenge -N 2 -C icelake -t 1:00:00", "scavenge", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))


def test_jobs_of_the_same_tier_are_not_preempted():
    """scavenge's own jobs on the H100 nodes until +6 h: a scavenge job of H100s waits."""
    site = _scavenge_on("h01", "h02")
    v = on_lyra("#SBATCH -p scavenge --gres=gpu:h100:2 -t 2:00:00", "scavenge", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(6))
    assert "partition scavenge: the job may be preempted (PreemptMode=CANCEL) by jobs of " \
        "partition gpu (PriorityTier 10 above its 1) on the same nodes" in v.notes


def test_five_nodes_go_to_standby_with_the_risk_said():
    """cpu allows 4 nodes, gpu 2, legacy has 3: only standby (8 nodes) and scavenge hold 5;
    standby is the higher tier, so the less likely to be preempted."""
    v = on_lyra("#SBATCH -N 5 -t 1:00:00", "standby")
    assert v.estimated_start == NOW
    assert v.notes[:4] == ["needs 5 nodes, partition cpu allows at most 4",
                           "needs 5 nodes, partition bigmem allows at most 1",
                           "needs 5 nodes, partition gpu allows at most 2",
                           "needs 5 nodes, partition legacy has only 3"]
    assert "partition standby: the job may be preempted (PreemptMode=REQUEUE) by jobs of " \
        "partition cpu (PriorityTier 10 above its 5) on the same nodes" in v.notes


def test_of_two_preemptible_partitions_starting_it_at_once_the_higher_tier_wins():
    """slurm.conf lists scavenge before standby: both start 5 nodes now, and the engine
    takes standby, which only cpu and gpu preempt and which requeues, over scavenge, which
    standby preempts too and which cancels (before: scavenge, the first printed)."""
    cpu, bigmem, gpu, legacy, standby, scavenge = PARTITIONS.splitlines(keepends=True)
    printed = cpu + bigmem + gpu + legacy + scavenge + standby
    v = on_lyra("#SBATCH -N 5 -t 1:00:00", "standby", lyra(partitions=printed))
    assert v.estimated_start == NOW
    # standby's CPU nodes held by its own jobs until +3 h: scavenge's seven other nodes
    # start the job now, before standby could
    site = lyra(*[job(str(i), f"c0{i}", 64, 3, partition="standby") for i in range(1, 5)],
                partitions=printed)
    v = on_lyra("#SBATCH -N 5 -t 1:00:00", "scavenge", site)
    assert v.estimated_start == NOW


# ---- partition limits: MaxTime, MaxNodes, MaxMemPerNode, DefMemPerCPU ---------------------

def test_max_time_of_every_partition_and_of_the_one_named():
    assert reasons(run("#SBATCH -t 3-00:00:00", lyra()), "lyra") == \
        "walltime 3-00:00:00 above every partition's MaxTime here (the longest: cpu, 2-00:00:00)"
    assert reasons(run("#SBATCH -p legacy --gres=gpu:1 -t 13:00:00", lyra()), "lyra") == \
        "walltime 13:00:00 above partition legacy MaxTime 12:00:00"


def test_bigmem_takes_one_node_a_job():
    assert reasons(run("#SBATCH -p bigmem -N 2 -t 1:00:00", lyra()), "lyra") == \
        "needs 2 nodes, partition bigmem allows at most 1"


def test_max_mem_per_node_below_what_the_bigmem_nodes_have():
    """m01-m02 have 1031000 MB, bigmem lets a job have 1000000 of them."""
    assert reasons(run("#SBATCH -p bigmem --mem=1010000 -t 1:00:00", lyra()), "lyra") == \
        "partition bigmem: needs 1010000 MB memory per node, its MaxMemPerNode is 1000000 MB"
    v = on_lyra("#SBATCH -p bigmem --mem=1000000 -t 1:00:00", "bigmem")
    assert v.estimated_start == NOW
    # 64 CPUs at 16000 MB each pass it too; at bigmem's default 15600 they do not
    assert reasons(run("#SBATCH -p bigmem -c 64 --mem-per-cpu=16000 -t 1:00:00", lyra()),
                   "lyra") == ("partition bigmem: needs 1024000 MB memory per node, its "
                               "MaxMemPerNode is 1000000 MB")
    v = on_lyra("#SBATCH -p bigmem -c 64 -t 1:00:00", "bigmem")
    assert "partition bigmem: no memory asked, it gets DefMemPerCPU 15600 MB x 64 CPUs = " \
        "998400 MB a node" in v.notes


def test_def_mem_per_cpu_against_the_jobs_own_request():
    """legacy gives 4500 MB a CPU when the job asks none: 40 CPUs take 180000 of a V100
    node's 192000 MB; asking 5000 a CPU (200000 MB) no V100 node holds."""
    v = on_lyra("#SBATCH -p legacy --gres=gpu:2 -c 40 -t 1:00:00", "legacy")
    assert v.estimated_start == NOW
    assert "partition legacy: no memory asked, it gets DefMemPerCPU 4500 MB x 40 CPUs = " \
        "180000 MB a node" in v.notes
    assert reasons(run("#SBATCH -p legacy --gres=gpu:2 -c 40 --mem-per-cpu=5000 -t 1:00:00",
                       lyra()), "lyra") == \
        "partition legacy: needs 200000 MB memory per node, largest node has 192000 MB"


# ---- a federation of lyra (Slurm, x86_64), kite (PBS Pro, aarch64), fir (flux, ppc64le) ----

def kite(architecture: str | None = "aarch64"):
    """kite read from `pbsnodes -a -F json`, `qstat -Q -f -F json`, `qstat -B -f -F json`
    and `qstat -f -F json`: k1-k4, 72 ncpus 240 GB each, free. PBS writes `arch = linux`
    (the OS, not the CPU): the CPU is the sites file's `metadata.architecture`."""
    nodes = {f"k{i}": {"state": "free", "resources_available": {
        "arch": "linux", "host": f"k{i}", "vnode": f"k{i}", "ncpus": 72,
        "mem": "251658240kb"}, "resources_assigned": {"ncpus": 0}} for i in range(1, 5)}
    queues = {"workq": {"queue_type": "Execution", "enabled": "True", "started": "True",
                        "resources_max": {"walltime": "48:00:00"}}}
    out = {"nodes": json.dumps({"nodes": nodes}), "queues": json.dumps({"Queue": queues}),
           "server": json.dumps({"Server": {"kite": {"default_queue": "workq"}}}),
           "queue": json.dumps({"Jobs": {}}), "user": "alice\n"}
    snap = PbsCommands(tz=timezone.utc).parse_snapshot("kite", out)
    meta = {"architecture": architecture} if architecture else {}
    return (SiteConfig(name="kite", scheduler="pbs", metadata=meta),
            snap.model_copy(update={"taken_at": NOW}))


def fir():
    """fir read from `flux resource list -n -o RESOURCE_FORMAT`: f1-f4, 44 cores and 4
    GPUs each, free; its admins mark the CPU with a property (ppc64le)."""
    out = "free|ppc64le,ib|4|176|16|f[1-4]\n"
    snap = FluxCommands().parse_snapshot("fir", {"resources": out, "queue": "", "queues": ""})
    return SiteConfig(name="fir", scheduler="flux"), snap.model_copy(update={"taken_at": NOW})


def place_for(arch: str, script: str = "#SBATCH -n 8 -t 1:00:00", sites=None):
    """The job of `script` with `--arch ARCH` (as `diamond submit --arch` adds it)."""
    spec = with_options(Federation.parse(f"#!/bin/bash\n{script}\n./app\n"), arch=arch)
    return place(spec, sites or [lyra(), kite(), fir()], now=NOW)


@pytest.mark.parametrize("arch, site, lines", [
    ("aarch64", "kite", ["  lyra INCOMPATIBLE architecture mismatch: job needs aarch64, site "
                         "has x86_64",
                         "  fir  INCOMPATIBLE architecture mismatch: job needs aarch64, site "
                         "has ppc64le"]),
    ("ppc64le", "fir", ["  lyra INCOMPATIBLE architecture mismatch: job needs ppc64le, site "
                        "has x86_64",
                        "  kite INCOMPATIBLE architecture mismatch: job needs ppc64le, site "
                        "has aarch64"]),
    ("amd64", "lyra", ["  kite INCOMPATIBLE architecture mismatch: job needs x86_64, site "
                       "has aarch64",
                       "  fir  INCOMPATIBLE architecture mismatch: job needs x86_64, site "
                       "has ppc64le"]),
])
def test_only_the_site_of_the_jobs_architecture_runs_it(arch, site, lines):
    """Each site's architecture from where it is said: lyra's nodes (Arch=), kite's sites
    file (its vnodes say only `linux`), fir's node properties; amd64 is x86_64."""
    p = place_for(arch)
    assert p.choice == site and p.verdict(site).estimated_start == NOW
    assert p.explain().splitlines()[3:] == lines


def test_a_pbs_script_asking_aarch64_goes_to_kite():
    p = place(Federation.parse("#!/bin/bash\n#PBS -l select=1:ncpus=8:arch=aarch64\n"
                               "#PBS -l walltime=1:00:00\n./app\n"),
              [lyra(), kite(), fir()], now=NOW)
    assert p.choice == "kite" and p.needs == ["architecture aarch64"]


def test_a_site_of_no_known_architecture_is_said_not_checked():
    """kite's sites file naming no architecture: its vnodes' `linux` says nothing of the
    CPU, so an aarch64 job may run there, and the user is told it was not checked
    (before: kite READY, nothing said)."""
    p = place_for("aarch64", sites=[lyra(), kite(architecture=None), fir()])
    assert p.choice == "kite"
    assert p.verdict("kite").not_checked == [
        "the job's architecture aarch64: k1, k2, k3, k4 report none and the sites file's "
        "metadata.architecture names none, so it may run on another"]
    assert p.explain().splitlines()[-1] == (
        "  kite not checked: the job's architecture aarch64: k1, k2, k3, k4 report none and "
        "the sites file's metadata.architecture names none, so it may run on another")
    assert place_for("aarch64").verdict("kite").not_checked == []


# ---- sites whose probe timed out or was refused --------------------------------------------

# as a site's error names it (`Site.snapshot` keeps the SiteError's text)
TIMED_OUT = "lyra: squeue timed out after 30 s"
REFUSED = "kite: connection refused by kite.example.org:22 (is sshd running?)"
# what placement says of them, the site named once
TIMED_OUT_SAID = "squeue timed out after 30 s"
REFUSED_SAID = "connection refused by kite.example.org:22 (is sshd running?)"


def _unreachable():
    """lyra timed out (its last capabilities kept, as a site keeps them), kite refused
    the connection (never read), fir answered."""
    cfg, snap = lyra()
    return [(cfg, snap.model_copy(update={"reachable": False, "error": TIMED_OUT})),
            (kite()[0], SiteSnapshot(site="kite", taken_at=NOW, reachable=False,
                                     error=REFUSED)),
            fir()]


def test_a_job_goes_to_the_site_that_answered_and_the_others_are_said_unreachable():
    p = place(Federation.parse("#!/bin/bash\n#SBATCH -n 8 -t 1:00:00\n./app\n"),
              _unreachable(), now=NOW)
    assert (p.choice, p.unreachable()) == ("fir", ["lyra", "kite"])
    # the site named once (before: "lyra UNREACHABLE site unreachable: lyra: squeue ...")
    assert p.explain().splitlines()[3:] == [
        f"  lyra UNREACHABLE site unreachable: {TIMED_OUT_SAID}",
        f"  kite UNREACHABLE site unreachable: {REFUSED_SAID}"]


def test_no_site_that_answered_runs_it_a_site_failure_naming_each():
    """x86_64: fir cannot, lyra and kite could not be asked: a site failure (exit 1, try
    again later), not bad input, each site's reason in the one line."""
    p = place_for("x86_64", sites=_unreachable())
    assert p.choice is None
    err = p.no_choice()
    assert isinstance(err, SiteError) and err.exit_code == 1
    assert str(err) == (
        "no site can run this job: fir: architecture mismatch: job needs x86_64, site has "
        f"ppc64le | lyra: site unreachable: {TIMED_OUT_SAID} | kite: site unreachable: "
        f"{REFUSED_SAID}")
    # every site answering and refusing: bad input (exit 2)
    err = place_for("riscv64").no_choice()
    assert isinstance(err, BadInput) and err.exit_code == 2


def test_a_timed_out_site_whose_last_read_refuses_the_job_says_so():
    """aarch64: lyra timed out, but as last read its nodes are all x86_64: the user is told
    that waiting for lyra will not help (before: only 'site unreachable'); kite, never
    read, stays unknown, so the whole is still a site failure."""
    p = place_for("aarch64", sites=_unreachable())
    assert p.verdict("lyra").reasons == [
        f"site unreachable: {TIMED_OUT_SAID}",
        "as last read, it could not run the job either: architecture mismatch: job needs "
        "aarch64, site has x86_64"]
    assert p.verdict("kite").reasons == [f"site unreachable: {REFUSED_SAID}"]
    assert isinstance(p.no_choice(), SiteError)
    # a job lyra's last read takes: nothing more is said
    p = place_for("x86_64", sites=_unreachable())
    assert p.verdict("lyra").reasons == [f"site unreachable: {TIMED_OUT_SAID}"]


def test_every_unreachable_site_ruled_out_by_its_last_read_is_bad_input():
    """aarch64 with kite left out: fir (ppc64le) refuses it and lyra, timed out, is x86_64
    as last read: no known site can ever run it, so it is bad input (exit 2), each site's
    reason said (before: a site failure, exit 1, as if trying again could place it)."""
    lyra_down, _, fir_up = _unreachable()
    p = place_for("aarch64", sites=[lyra_down, fir_up])
    err = p.no_choice()
    assert isinstance(err, BadInput) and err.exit_code == 2
    assert str(err) == (
        "no site can run this job: fir: architecture mismatch: job needs aarch64, site has "
        f"ppc64le | lyra: site unreachable: {TIMED_OUT_SAID}; as last read, it could not run "
        "the job either: architecture mismatch: job needs aarch64, site has x86_64")
    assert p.verdict("lyra").last_read_refuses and p.unreachable() == ["lyra"]
    # a job lyra's last read takes is still a site failure: lyra may run it when it answers
    err = place_for("x86_64", sites=[lyra_down, fir_up]).no_choice()
    assert isinstance(err, SiteError) and err.exit_code == 1


# ---- preemption named from the nodes the job can use ---------------------------------------

@pytest.mark.parametrize("script, preemptor", [
    # every node of the job is a V100 node: legacy shares them, cpu never does
    ("#SBATCH -p scavenge -N 2 -C 'v100*2' -t 1:00:00", "legacy (PriorityTier 10 above its 1)"),
    # two of three are V100 nodes: legacy surely shares the job's nodes
    ("#SBATCH -p scavenge -N 3 -C 'v100*2' -t 1:00:00", "legacy (PriorityTier 10 above its 1)"),
    # the H100 nodes are gpu's; standby's CPU nodes are cpu's
    ("#SBATCH -p standby -N 2 -C 'h100*2' -t 1:00:00", "gpu (PriorityTier 10 above its 5)"),
    ("#SBATCH -p standby -N 3 -C '[h100*2&ib*1]' -t 1:00:00",
     "gpu (PriorityTier 10 above its 5)"),
    ("#SBATCH -p standby -N 2 -C '[a100*2&ib]' -t 1:00:00", "gpu (PriorityTier 10 above its 5)"),
])
def test_a_count_constraint_names_the_partition_preempting_the_nodes_that_meet_it(
        script, preemptor):
    """(before: 'by jobs of partition cpu' for the counted forms, named from every node of
    the partition, the CPU nodes the job never runs on included)"""
    v = only(run(script, lyra()), "lyra")
    assert v.estimated_start == NOW
    risk = [n for n in v.notes if "the job may be preempted" in n]
    assert len(risk) == 1 and f"by jobs of partition {preemptor} on the same nodes" in risk[0], \
        risk


def test_a_count_constraint_on_the_default_partitions_passes_standby_over_naming_gpu():
    v = on_lyra("#SBATCH -N 2 -C 'h100*2' -t 1:00:00", "gpu")
    assert "partition standby passed over: the job may be preempted (PreemptMode=REQUEUE) by " \
        "jobs of partition gpu (PriorityTier 10 above its 5) on the same nodes" in v.notes
    assert "partition scavenge passed over: the job may be preempted (PreemptMode=CANCEL) by " \
        "jobs of partition gpu (PriorityTier 10 above its 1) on the same nodes" in v.notes


PREEMPTS_SCAVENGE = "its jobs preempt the running jobs of partition scavenge"


@pytest.mark.parametrize("script, busy", [
    ("#SBATCH --gres=gpu:a100:2 -t 1:00:00", ("h01", "h02")),  # a GPU type not asked
    ("#SBATCH -C a100 -t 1:00:00", ("h01", "h02")),  # a feature not asked
    ("#SBATCH -p standby -C a100 -t 1:00:00", ("h01", "c01")),
    ("#SBATCH -p gpu -C 'a100*1' -t 1:00:00", ("h01", "h02")),  # its one node an A100 one
])
def test_scavenge_jobs_on_nodes_the_job_cannot_use_are_not_said_preempted(script, busy):
    """scavenge jobs fill nodes the job cannot run on: it starts now on the free A100
    nodes, and no note says it preempts them (before: 'its jobs preempt the running jobs
    of partition scavenge')."""
    v = only(run(script, _scavenge_on(*busy)), "lyra")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert not said(v, PREEMPTS_SCAVENGE), v.notes
    # scavenge on an A100 node too: said, as the job may take that node
    v = only(run(script, _scavenge_on(*busy, "g01")), "lyra")
    assert said(v, PREEMPTS_SCAVENGE)


async def test_a_site_read_then_gone_whose_last_read_refuses_the_job_is_bad_input(tmp_path):
    """A Slurm site on the local transport answers, then its scheduler fails: a job its
    one 8-CPU node never holds is bad input (exit 2) for `place` and `submit --site auto`,
    nothing submitted; one it holds stays a site failure (exit 1)."""
    from diamond_jupyter.config import FederationConfig, TransportConfig
    from diamond_jupyter.store import Store

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    tools = {"squeue": "exit 0", "sacct": "exit 0", "sbatch": f"touch {tmp_path}/sbatch-ran",
             "scontrol": """case "$*" in
  *partition*) echo 'PartitionName=batch Default=YES MaxTime=01:00:00 Nodes=c1 State=UP' ;;
  *node*) echo 'NodeName=c1 CPUTot=8 CPUAlloc=0 RealMemory=16000 State=IDLE Partitions=batch' ;;
esac"""}
    for name, body in tools.items():
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    cfg = SiteConfig(name="solo", workdir=str(tmp_path), transport=TransportConfig(kind="local"),
                     commands={name: str(bin_ / name) for name in tools})
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))
    wide = Federation.parse("#!/bin/bash\n#SBATCH -c 64 -t 10\n./app\n")
    narrow = Federation.parse("#!/bin/bash\n#SBATCH -c 4 -t 10\n./app\n")
    try:
        assert (await fed.place(narrow, max_age_s=0)).choice == "solo"
        for name in ("squeue", "scontrol"):  # the scheduler stops answering
            (bin_ / name).write_text("#!/bin/sh\necho 'slurm_load_jobs error' >&2\nexit 1\n")
        p = await fed.place(wide, max_age_s=0)
        assert p.unreachable() == ["solo"] and p.verdict("solo").last_read_refuses
        assert p.no_choice().exit_code == 2
        with pytest.raises(BadInput, match="as last read, it could not run the job either: "):
            await fed.submit(wide, site="auto")
        with pytest.raises(SiteError, match="solo: site unreachable: ") as err:
            await fed.submit(narrow, site="auto")
        assert err.value.exit_code == 1 and not isinstance(err.value, BadInput)
        assert not (tmp_path / "sbatch-ran").exists()
    finally:
        await fed.close()
