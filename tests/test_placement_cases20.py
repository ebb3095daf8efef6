"""Placement cases worked by hand, twentieth sweep: kestrel, a Slurm center read whole
from what its commands print (`scontrol show partition/node/reservation -o`, `squeue`,
`sacctmgr show qos/assoc`), unlike the earlier sites: a partition of OverSubscribe=FORCE:4,
nodes with specialised cores and memory (CoreSpecCount, MemSpecLimit) in MIXED states,
GPUs of two types named by gres and by features, a QOS whose MaxWall is below its
partition's, FLEX, MAGNETIC and MAINT reservations; then the jobs real users send it
(--exclusive=user, --spread-job, --switches, --mem=0, --gpus without a type); and corvus,
a PBS Pro site whose routing queue sends jobs on to execution queues; tern, an LSF site
whose hosts close by their load; plover, a flux site of node properties. Each case
asserts the verdict, the reason a user reads and, where the case makes it clear, the
start, each against what Slurm documents."""

from __future__ import annotations

import json
from datetime import timezone
from functools import partial

import pytest
from test_placement_cases import NOW, at, hours, reasons, reservation, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands

H = 3600
slurm = SlurmCommands(tz=timezone.utc)

_PART = ("PartitionName={name} AllowGroups=ALL AllowAccounts=ALL AllowQos={qos} "
         "Default={default} QoS=N/A DefaultTime=01:00:00 MaxNodes=UNLIMITED "
         "MaxTime={max_time} MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED Nodes={nodes} "
         "PriorityJobFactor=1 PriorityTier=1 Hidden=NO OverSubscribe={over} "
         "PreemptMode=OFF State=UP TotalCPUs=0 TotalNodes=0 ExclusiveUser={xuser}")
# kestrel, as `scontrol --all show partition -o` prints it:
#  compute (default): c01-c04, 2 days, OverSubscribe=NO;
#  shared: c01-c04, 12 h, OverSubscribe=FORCE:4 (up to four jobs a CPU);
#  gpu: g01-g03, 1 day; debug: c04, 2 days but only for QOS debugq (MaxWall 30 min)
PARTITIONS = "".join(_PART.format(**p) + "\n" for p in (
    dict(name="compute", qos="ALL", default="YES", max_time="2-00:00:00", nodes="c[01-04]",
         over="NO", xuser="NO"),
    dict(name="shared", qos="ALL", default="NO", max_time="12:00:00", nodes="c[01-04]",
         over="FORCE:4", xuser="NO"),
    dict(name="gpu", qos="ALL", default="NO", max_time="1-00:00:00", nodes="g[01-03]",
         over="NO", xuser="NO"),
    dict(name="debug", qos="debugq", default="NO", max_time="2-00:00:00", nodes="c04",
         over="NO", xuser="NO"),
))

_NODE = ("NodeName={name} Arch=x86_64 CoresPerSocket={cores} CPUAlloc={alloc} "
         "CPUTot={cpus} CPULoad=0.50 AvailableFeatures={feats} ActiveFeatures={feats} "
         "Gres={gres} GresDrain=N/A GresUsed={used} NodeAddr={name} NodeHostName={name} "
         "RealMemory={mem} AllocMem={amem} FreeMem=1000 Sockets=2 Boards=1 "
         "CoreSpecCount={spec} MemSpecLimit={mspec} State={state} ThreadsPerCore=1 "
         "TmpDisk=0 Weight=1 Partitions={parts}")
# c01-c04: 48 CPUs 192000 MB, 2 cores and 8000 MB kept for the system (46 CPUs, 184000 MB
# for jobs), switch s1 (c01-c02) or s2 (c03-c04); g01-g02: 32 CPUs 256000 MB, 4 A100
# each (feature a100); g03: 32 CPUs 256000 MB, 2 V100 (feature v100)
_NODES = (
    ("c01", 48, 192000, "(null)", "gpu:0", "s1", "compute,shared"),
    ("c02", 48, 192000, "(null)", "gpu:0", "s1", "compute,shared"),
    ("c03", 48, 192000, "(null)", "gpu:0", "s2", "compute,shared"),
    ("c04", 48, 192000, "(null)", "gpu:0", "s2", "compute,shared,debug"),
    ("g01", 32, 256000, "gpu:a100:4(S:0-1)", "gpu:a100:{g}(IDX:N/A)", "a100", "gpu"),
    ("g02", 32, 256000, "gpu:a100:4(S:0-1)", "gpu:a100:{g}(IDX:N/A)", "a100", "gpu"),
    ("g03", 32, 256000, "gpu:v100:2(S:0-1)", "gpu:v100:{g}(IDX:N/A)", "v100", "gpu"),
)


def node_lines(states=None, alloc=None, galloc=None, amem=None) -> str:
    states, alloc, galloc, amem = states or {}, alloc or {}, galloc or {}, amem or {}
    lines = []
    for name, cpus, mem, gres, used, feats, parts in _NODES:
        spec, mspec = (2, 8000) if name.startswith("c") else (0, 0)
        state = states.get(name) or ("MIXED" if alloc.get(name) or galloc.get(name)
                                     else "IDLE")
        lines.append(_NODE.format(name=name, cores=cpus // 2, alloc=alloc.get(name, 0),
                                  cpus=cpus, feats=feats, gres=gres,
                                  used=used.format(g=galloc.get(name, 0)), mem=mem,
                                  amem=amem.get(name, 0), spec=spec, mspec=mspec,
                                  state=state, parts=parts))
    return "\n".join(lines) + "\n"


def running(jid: str, node: str, cpus: int, left_h: float, limit_h: int = 10,
            partition: str = "compute", user: str = "bob", gpus: int = 0) -> str:
    """A running job as `squeue -h -a -o SQUEUE_FIELDS` prints it."""
    tres = f"gres/gpu:{gpus}" if gpus else "N/A"
    started = left_h - limit_h
    return (f"{jid}|RUNNING|{at(started)}|{at(left_h)}|{at(started - 1)}|{limit_h}:00:00|1|"
            f"{cpus}|{user}|{partition}|{tres}|{node}|None|(null)|job{jid}")


# `sacctmgr -nP show qos`: Name, MaxTRES, MaxTRESPerNode, MaxTRESPerUser, GrpTRES, MaxWall,
# GrpJobs, GrpSubmitJobs, MaxJobsPerUser, MaxSubmitJobsPerUser
QOS = "normal||||||||||\ndebugq|||||00:30:00||||\n"


resv = partial(reservation, node_count=1, cores=48)  # one of kestrel's reservations


def kestrel(*queue: str, states=None, alloc=None, galloc=None, amem=None, reservations="",
            partitions: str = PARTITIONS):
    """kestrel read from its commands' outputs, probed as alice (account proj, QOS normal
    and debugq)."""
    outputs = {
        "partitions": partitions, "nodes": node_lines(states, alloc, galloc, amem),
        "queue": "\n".join(queue), "qos": QOS,
        "reservations": reservations or "No reservations in the system\n",
        "assoc": "user|alice\nalice|proj||normal|normal,debugq\n"}
    snap = slurm.parse_snapshot("kestrel", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="kestrel", metadata={"architecture": "x86_64"}), snap


def verdict(script: str, site=None):
    """kestrel's verdict on `script` (alone, its best partition)."""
    p = run(script, site or kestrel())
    return next(v for v in p.ranked if v.site == "kestrel")


def said(v, text: str) -> bool:
    return any(text in x for x in v.reasons + v.notes)


def running_on_every_c(*left_h: float, partition: str = "compute", cpus: int = 46) -> list[str]:
    """A job of `cpus` CPUs on each of c01-c04 per value of `left_h`, the i-th one on a node
    ending i hours later than the value."""
    return [running(f"{k}{i}", f"c0{i}", cpus, h + i - 1, partition=partition)
            for k, h in enumerate(left_h, 1) for i in range(1, 5)]


def test_the_outputs_are_read_as_kestrel_is():
    _, snap = kestrel()
    compute, shared, gpu, debug = snap.partitions
    assert (compute.default, compute.max_time_s, shared.oversubscribe, gpu.max_time_s) == (
        True, 48 * H, "FORCE:4", 24 * H)
    c01 = next(n for n in snap.nodes if n.name == "c01")
    # 48 CPUs less 2 specialised cores, 192000 MB less MemSpecLimit 8000
    assert (c01.cpus, c01.memory_mb, c01.spec_cores, c01.features) == (46, 184000, 2, ["s1"])
    assert [(n.name, n.gpu_type, n.gpus) for n in snap.nodes if n.gpus] == [
        ("g01", "a100", 4), ("g02", "a100", 4), ("g03", "v100", 2)]
    assert snap.qos["debugq"].max_wall_s == 1800


# ---- specialised cores and memory: what jobs may have --------------------------------------

@pytest.mark.parametrize("job, verdict_, said_", [
    ("#SBATCH -p compute -N 1 -n 46 -t 1:00:00", "READY", None),
    ("#SBATCH -p compute -N 1 -n 47 -t 1:00:00", "INCOMPATIBLE",
     "needs 47 CPUs per node, largest node has 46"),
    ("#SBATCH -p compute -N 1 --mem=184000 -t 1:00:00", "READY", None),
    # (the GPU nodes have more: the reason names the partition)
    ("#SBATCH -p compute -N 1 --mem=185000 -t 1:00:00", "INCOMPATIBLE",
     "partition compute: needs 185000 MB memory per node, largest node has 184000 MB"),
])
def test_core_spec_and_mem_spec_are_the_systems(job, verdict_, said_):
    """CoreSpecCount=2 and MemSpecLimit=8000 keep 2 of 48 CPUs and 8000 of 192000 MB from
    jobs: 46 CPUs and 184000 MB fit, one more does not, and the reason says the node's
    46 and 184000."""
    v = verdict(job)
    assert v.verdict == verdict_, v.reasons
    assert said_ is None or reasons(run(job, kestrel()), "kestrel") == said_


def test_a_mixed_node_with_spec_cores_has_its_free_cpus_now():
    """c01 MIXED, 40 of its 46 CPUs held until +2 h; c02-c04 full until +3 h..+5 h: 6 CPUs
    start now on c01, 7 wait for c01's job, +2 h."""
    site = kestrel(running("1", "c01", 40, 2), *[running(str(i), f"c0{i}", 46, i + 1)
                                                 for i in (2, 3, 4)],
                   alloc={"c01": 40, "c02": 46, "c03": 46, "c04": 46})
    assert (verdict("#SBATCH -p compute -N 1 -n 6 -t 1:00:00", site).estimated_start
            == NOW)
    v = verdict("#SBATCH -p compute -N 1 -n 7 -t 1:00:00", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_mixed_and_drained_nodes_take_no_new_job():
    """c01 MIXED+DRAIN and c03 MIXED+DRAIN finish their jobs but take no new one, c04 is
    DOWN: a whole node waits for c02, ALLOCATED until +2 h. With c02 down too, nothing is
    left: INCOMPATIBLE, said."""
    jobs = [running("1", "c01", 4, 1), running("2", "c02", 46, 2), running("3", "c03", 4, 3)]
    alloc = {"c01": 4, "c02": 46, "c03": 4}
    drained = {"c01": "MIXED+DRAIN", "c02": "ALLOCATED", "c03": "MIXED+DRAIN", "c04": "DOWN"}
    v = verdict("#SBATCH -p compute -N 1 -n 46 -t 1:00:00",
                kestrel(*jobs, alloc=alloc, states=drained))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    gone = kestrel(jobs[0], alloc={"c01": 4}, states={"c01": "MIXED+DRAIN", "c02": "DOWN",
                                                      "c03": "DOWN", "c04": "DOWN"})
    assert reasons(run("#SBATCH -p compute -N 1 -n 2 -t 1:00:00", gone), "kestrel") == \
        "needs 1 node, partition compute has only 0 usable (others draining c01; down " \
        "c[02-04])"


# ---- OverSubscribe=FORCE:4 ------------------------------------------------------------------

def test_force_4_starts_a_job_on_cpus_every_job_holds():
    """Every CPU of c01-c04 held by one job until +3 h..+6 h: compute (OverSubscribe=NO)
    waits for c01's, +3 h; shared (FORCE:4) starts the job now beside them, said."""
    site = kestrel(*running_on_every_c(3), alloc={f"c0{i}": 46 for i in range(1, 5)})
    v = verdict("#SBATCH -p compute -n 4 -t 1:00:00", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    v = verdict("#SBATCH -p shared -n 4 -t 1:00:00", site)
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert said(v, "partition shared: it starts now on c01, c02, c03, c04, sharing CPUs with "
                   "the jobs there (OverSubscribe=FORCE:4, time-sliced or oversubscribed)")


def test_force_4_holds_four_jobs_a_cpu_and_no_fifth():
    """Three whole-node jobs on each node leave a fourth's room: now; four fill it: the
    job waits for the first to end, c01's at +1 h."""
    three = running_on_every_c(1, 2, 3, partition="shared")
    alloc = {f"c0{i}": 46 for i in range(1, 5)}
    job = "#SBATCH -p shared -N 1 -n 46 -t 1:00:00"
    assert verdict(job, kestrel(*three, alloc=alloc)).estimated_start == NOW
    v = verdict(job, kestrel(*running_on_every_c(1, 2, 3, 4, partition="shared"),
                             alloc=alloc))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert said(v, "partition shared shares CPUs between jobs (OverSubscribe=FORCE:4): the "
                   "job may run time-sliced with others")


def test_force_4_shares_cpus_not_memory():
    """8 CPUs and 16000 MB held on each node until +1 h..+4 h: 180000 MB is more than any
    node has left (168000): the job waits for c01's job, +1 h, FORCE or not."""
    site = kestrel(*running_on_every_c(1, partition="shared", cpus=8),
                   alloc={f"c0{i}": 8 for i in range(1, 5)},
                   amem={f"c0{i}": 16000 for i in range(1, 5)})
    v = verdict("#SBATCH -p shared -N 1 --mem=180000 -t 1:00:00", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))


def test_mem_zero_under_force_waits_for_a_node_of_free_memory():
    """--mem=0 asks all of a node's memory, and OverSubscribe shares no memory: with 16000
    MB held on each node it waits for c01's job, +1 h (before: it started now, beside
    them, as if FORCE:4 shared memory too); with c03's memory free it starts there now."""
    jobs = running_on_every_c(1, partition="shared", cpus=8)
    alloc = {f"c0{i}": 8 for i in range(1, 5)}
    held = {f"c0{i}": 16000 for i in range(1, 5)}
    job = "#SBATCH -p shared -N 1 --mem=0 -t 1:00:00"
    v = verdict(job, kestrel(*jobs, alloc=alloc, amem=held))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1)), v.notes
    assert not said(v, "it starts now")
    v = verdict(job, kestrel(*jobs, alloc=alloc, amem={**held, "c03": 0}))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert said(v, "partition shared: it starts now on c03, sharing CPUs")


def test_mem_zero_on_compute_waits_for_empty_nodes():
    """Two whole nodes of all their memory: c03, c04 down, c01 and c02 each with a job
    (until +1 h, +3 h): +3 h."""
    site = kestrel(running("1", "c01", 4, 1), running("2", "c02", 4, 3),
                   alloc={"c01": 4, "c02": 4}, amem={"c01": 1000, "c02": 1000},
                   states={"c03": "DOWN", "c04": "DOWN"})
    v = verdict("#SBATCH -p compute --mem=0 -N 2 -t 1:00:00", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))


# ---- GPUs by gres and by features -------------------------------------------------------

def _a100s_busy(*left_h: float):
    """g01 (and g02 with a second value) with all 4 A100 held until +`left_h`."""
    jobs = [running(str(50 + i), f"g0{i + 1}", 8, h, partition="gpu", gpus=4)
            for i, h in enumerate(left_h)]
    names = [f"g0{i + 1}" for i in range(len(left_h))]
    return kestrel(*jobs, alloc=dict.fromkeys(names, 8), galloc=dict.fromkeys(names, 4))


@pytest.mark.parametrize("job, start_h", [
    # any type: g03's two V100s take it now
    ("#SBATCH -p gpu --gpus=2 -N 1 -t 1:00:00", 0),
    # four on one node: only an A100 node has four, g01's at +2 h
    ("#SBATCH -p gpu --gpus=4 -N 1 -t 1:00:00", 2),
    # by feature: the v100 node, now
    ("#SBATCH -p gpu --gres=gpu:2 -C v100 -t 1:00:00", 0),
    # by feature a100: both A100 nodes busy, g01 at +2 h
    ("#SBATCH -p gpu --gres=gpu:1 -C a100 -t 1:00:00", 2),
    # by gres type: the same
    ("#SBATCH -p gpu --gres=gpu:a100:1 -t 1:00:00", 2),
])
def test_gpus_without_a_type_take_any_type(job, start_h):
    """Both A100 nodes full (g01 until +2 h, g02 +3 h): a job of GPUs of no type runs on
    the V100s, one naming a100 (gres or feature) waits."""
    v = verdict(job, _a100s_busy(2, 3))
    assert (v.verdict, v.estimated_start) == ("READY" if not start_h else "BUSY",
                                              hours(start_h)), v.notes


def test_gpus_without_a_type_on_the_a100_node_left():
    """g01 full: four GPUs of no type in all (no node count) start now on g02."""
    v = verdict("#SBATCH -p gpu --gpus=4 -t 1:00:00", _a100s_busy(2))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


@pytest.mark.parametrize("job, said_", [
    # a gres type the feature's node lacks
    ("#SBATCH -p gpu --gres=gpu:v100:2 -C a100 -t 1:00:00",
     "no single node meets all the requirements together (feature 'a100' on g01, g02; GPU "
     "v100 on g03; 2 GPUs on g03)"),
    # three V100s: g03 has two, and no other node has V100s
    ("#SBATCH -p gpu --gpus=v100:3 -t 1:00:00",
     "needs 2 nodes, partition gpu has only 1 that can run it (others: no GPU of type "
     "'v100' (its nodes have: a100))"),
])
def test_gpu_type_and_feature_at_odds(job, said_):
    assert verdict(job).verdict == "INCOMPATIBLE"
    assert reasons(run(job, kestrel()), "kestrel") == said_


# ---- QOS MaxWall below the partition's MaxTime ----------------------------------------------

def test_qos_max_wall_below_the_partition_max_time():
    """debug allows 2 days but only QOS debugq, whose MaxWall is 30 min: 20 min runs now,
    1 h is turned away by the QOS (the partition would take it), said with both limits'
    names; without -q the default QOS normal is not allowed there."""
    assert verdict("#SBATCH -p debug -q debugq -t 0:20:00").verdict == "READY"
    job = "#SBATCH -p debug -q debugq -t 1:00:00"
    assert verdict(job).verdict == "INCOMPATIBLE"
    assert reasons(run(job, kestrel()), "kestrel") == \
        "walltime 1:00:00 above the job's QOS debugq MaxWall 0:30:00"
    v = verdict("#SBATCH -p debug -t 0:20:00")
    assert v.verdict == "RESTRICTED"
    assert reasons(run("#SBATCH -p debug -t 0:20:00", kestrel()), "kestrel") == (
        "QOS 'normal' not allowed in partition 'debug' (allowed: debugq): the job names no "
        "QOS: it runs under its association's default QOS normal")


def test_qos_max_wall_holds_in_every_partition():
    """debugq's 30 min bind in compute too, whose MaxTime is 2 days."""
    job = "#SBATCH -p compute -q debugq -t 1:00:00"
    assert verdict(job).verdict == "INCOMPATIBLE"
    assert verdict("#SBATCH -p compute -q debugq -t 0:30:00").estimated_start == NOW


# ---- reservations: MAINT, FLEX, MAGNETIC ------------------------------------------------

MAINT_LATER = resv("pm", "c[01-04]", 3, 9, "MAINT,IGNORE_JOBS,SPEC_NODES")


def test_an_upcoming_maintenance_lets_a_job_that_ends_before_it_start():
    """Maintenance on c01-c04 from +3 h to +9 h: a 2 h job on all four starts now; a 4 h
    one would run into it and starts after, +9 h, said."""
    assert verdict("#SBATCH -p compute -N 4 -t 2:00:00",
                   kestrel(reservations=MAINT_LATER)).estimated_start == NOW
    v = verdict("#SBATCH -p compute -N 4 -t 4:00:00", kestrel(reservations=MAINT_LATER))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(9))
    assert said(v, "reservation pm (MAINT,IGNORE_JOBS,SPEC_NODES) takes c[01-04] from "
                   "2026-03-01 12:00 to 2026-03-01 18:00: the job, of a time limit of "
                   "4:00:00, would run into it, so Slurm starts it there only after it ends")


@pytest.mark.parametrize("state", ["IDLE+MAINT+RESERVED", "MAINT", "IDLE+MAINT"])
def test_a_node_in_a_running_maintenance_comes_back_at_its_end(state):
    """c01 in maintenance by reservation pm (MAINT), running until +9 h: a job of all four
    nodes starts then, BUSY (before: INCOMPATIBLE, c01 taken as out for good, though the
    reservation that put it there was read with its end)."""
    site = kestrel(states={"c01": state}, reservations=resv("pm", "c01", -1, 9,
                                                            "MAINT,SPEC_NODES"))
    v = verdict("#SBATCH -p compute -N 4 -t 1:00:00", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(9)), v.reasons


def test_a_node_in_maintenance_of_no_known_end_is_out():
    """No MAINT reservation read (or one without the MAINT flag): its end is not known,
    the node is out, said."""
    job = "#SBATCH -p compute -N 4 -t 1:00:00"
    for r in ("", resv("pm", "c01", -1, 9, "SPEC_NODES")):
        site = kestrel(states={"c01": "IDLE+MAINT+RESERVED"}, reservations=r)
        assert reasons(run(job, site), "kestrel") == \
            "needs 4 nodes, partition compute has only 3 usable (others in maintenance: c01)"


def test_a_flex_reservation_lets_its_job_use_other_nodes_and_start_before_it():
    """alice's FLEX reservation of c01-c02 starts at +2 h: a job of four nodes naming it
    starts now (FLEX: nodes outside it and before its start)."""
    site = kestrel(reservations=resv("fl", "c[01-02]", 2, 9, "FLEX,SPEC_NODES",
                                     users="alice"))
    v = verdict("#SBATCH -p compute -N 4 -t 1:00:00 --reservation=fl", site)
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_a_plain_reservation_keeps_its_job_on_its_nodes():
    site = kestrel(states={"c01": "IDLE+RESERVED", "c02": "IDLE+RESERVED"},
                   reservations=resv("fx", "c[01-02]", -1, 9, "SPEC_NODES", users="alice"))
    assert reasons(run("#SBATCH -p compute -N 4 -t 1:00:00 --reservation=fx", site),
                   "kestrel") == ("needs 4 nodes, partition compute has only 2 that can "
                                  "run it (others: not in reservation fx: c03, c04)")


@pytest.mark.parametrize("users, start_h", [("alice", 0), ("bob", 3)])
def test_a_magnetic_reservation_takes_the_jobs_of_its_users(users, start_h):
    """c03-c04 full until +3 h, c01-c02 in a MAGNETIC reservation: alice's, her job of two
    nodes starts there now without --reservation, said; bob's, it waits for c03, c04."""
    site = kestrel(running("2", "c03", 46, 3), running("3", "c04", 46, 3),
                   alloc={"c03": 46, "c04": 46},
                   states={"c01": "IDLE+RESERVED", "c02": "IDLE+RESERVED"},
                   reservations=resv("mag", "c[01-02]", -1, 9, "MAGNETIC,SPEC_NODES",
                                     users=users))
    v = verdict("#SBATCH -p compute -N 2 -t 1:00:00", site)
    assert v.estimated_start == hours(start_h)
    assert said(v, "reservation mag is MAGNETIC and open to you") == (users == "alice")


# ---- what the job asks: --exclusive=user, --exclusive, --spread-job, --switches -------------

def _four_cpus_each(alice_on_c04: bool):
    """4 CPUs held on each of c01-c04 (c01-c03 bob's until +2 h; c04 alice's until +3 h,
    or bob's until +5 h)."""
    jobs = [running(str(i), f"c0{i}", 4, 2) for i in (1, 2, 3)]
    jobs.append(running("4", "c04", 4, 3, user="alice") if alice_on_c04
                else running("4", "c04", 4, 5))
    return kestrel(*jobs, alloc={f"c0{i}": 4 for i in range(1, 5)})


def test_exclusive_user_shares_a_node_with_the_users_own_jobs_only():
    """--exclusive=user: c04 runs only alice's job: now there, said; with bob's job on
    every node it waits for c01-c03's, +2 h. --exclusive waits for an empty node even
    beside her own job: +2 h."""
    v = verdict("#SBATCH -p compute -n 4 --exclusive=user -t 1:00:00", _four_cpus_each(True))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert said(v, "partition compute: it starts now on c04, whose running jobs are all "
                   "yours (--exclusive=user)")
    v = verdict("#SBATCH -p compute -n 4 --exclusive=user -t 1:00:00",
                _four_cpus_each(False))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    v = verdict("#SBATCH -p compute -n 4 --exclusive -t 1:00:00", _four_cpus_each(True))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_spread_job_over_the_nodes_there_are():
    """c01 full until +2 h: --spread-job of 8 tasks takes c02-c04 now; with -N 4 it needs
    c01 too, +2 h."""
    site = kestrel(running("1", "c01", 46, 2), alloc={"c01": 46})
    assert verdict("#SBATCH -p compute -n 8 --spread-job -t 1:00:00",
                   site).estimated_start == NOW
    v = verdict("#SBATCH -p compute -N 4 -n 8 --spread-job -t 1:00:00", site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


@pytest.mark.parametrize("switches, wait", [
    ("1@10:00", "for at most 10:00"),
    ("1", "for at most max_switch_wait (300 s unless the site sets another)"),
])
def test_switches_is_said_not_checked(switches, wait):
    """kestrel's topology is not read: a job of 3 nodes on one switch (two nodes a switch)
    is placed now and told what Slurm would do."""
    v = verdict(f"#SBATCH -p compute -N 3 --switches={switches} -t 1:00:00")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert f"--switches={switches}: the site's network topology is not read; under a tree " \
        "topology Slurm holds the job until its nodes hang off at most 1 leaf switch, " \
        f"{wait}, then starts it where it can" in v.not_checked, v.not_checked


# ---- PBS: a routing queue and the execution queues it sends jobs to -----------------------

# corvus as `qstat -Q -f -F json` prints it: route (the server's default queue) sends a job
# to the first of express (1 h, 32 ncpus at most) and long (over 1 h, up to 72 h) that
# takes it; held is enabled but not started (it queues jobs and runs none)
CORVUS_QUEUES = {
    "route": {"queue_type": "Route", "enabled": "True", "started": "True",
              "route_destinations": "express,long"},
    "express": {"queue_type": "Execution", "enabled": "True", "started": "True",
                "resources_max": {"walltime": "01:00:00", "ncpus": 32}},
    "long": {"queue_type": "Execution", "enabled": "True", "started": "True",
             "resources_min": {"walltime": "01:00:01"},
             "resources_max": {"walltime": "72:00:00"}},
    "held": {"queue_type": "Execution", "enabled": "True", "started": "False",
             "resources_max": {"walltime": "72:00:00"}},
}


def corvus():
    """corvus read from `pbsnodes -a -F json`, `qstat -Q -f -F json`, `qstat -B -f -F json`
    and `qstat -f -F json`: x1-x4, 48 ncpus 192 GB each, free."""
    nodes = {h: {"state": "free", "resources_available": {"ncpus": 48, "mem": "201326592kb"},
                 "resources_assigned": {"ncpus": 0}} for h in ("x1", "x2", "x3", "x4")}
    out = {"nodes": json.dumps({"nodes": nodes}),
           "queues": json.dumps({"Queue": CORVUS_QUEUES}),
           "server": json.dumps({"Server": {"srv": {"default_queue": "route"}}}),
           "queue": json.dumps({"Jobs": {}}), "user": "alice\n"}
    snap = PbsCommands(tz=timezone.utc).parse_snapshot("corvus", out)
    return SiteConfig(name="corvus", scheduler="pbs"), snap.model_copy(update={"taken_at": NOW})


def _pbs(ncpus: int, walltime: str, queue: str = "route") -> str:
    return f"#PBS -q {queue}\n#PBS -l select=1:ncpus={ncpus}\n#PBS -l walltime={walltime}"


@pytest.mark.parametrize("job, queue, said_", [
    (_pbs(8, "0:30:00"), "express", "routing queue route sends it to express (the first of "
                                    "express, long that takes it)"),
    (_pbs(8, "4:00:00"), "long", "walltime 4:00:00 above queue express "
                                 "resources_max.walltime 1:00:00"),
])
def test_a_routing_queue_sends_the_job_to_the_first_queue_that_takes_it(job, queue, said_):
    v = next(x for x in run(job, corvus()).ranked if x.site == "corvus")
    assert (v.verdict, v.partition, v.estimated_start) == ("READY", queue, NOW)
    assert said(v, said_)


def test_a_job_no_destination_takes_is_refused_with_each_queues_reason():
    """40 ncpus for 30 min: above express's 32 ncpus, below long's resources_min walltime
    (over 1 h): PBS routes it nowhere and qsub refuses it (before: placed in long, its
    resources_min.walltime unread), each queue's reason said."""
    p = run(_pbs(40, "0:30:00"), corvus())
    assert p.choice is None
    assert reasons(p, "corvus") == (
        "needs 40 ncpus in all, queue express allows a job at most 32 | walltime 0:30:00 "
        "below queue long resources_min.walltime 1:00:01")
    assert corvus()[1].partitions[2].min_time_s == 3601


def test_a_walltime_above_every_destination_names_the_longest():
    assert reasons(run(_pbs(8, "100:00:00"), corvus()), "corvus") == (
        "walltime 4-04:00:00 above the resources_max.walltime of every destination of "
        "routing queue route (the longest: long, 3-00:00:00)")


# ---- LSF: hosts closed by a load threshold or a dispatch window ---------------------------

def tern(status: dict[str, str]):
    """tern, an LSF site read from `bhosts -o ... -json`, `lshosts -json` and `bqueues
    -json`: t1-t3, 32 slots each, no job running; `status`: bhosts STATUS by host (else
    ok)."""
    hosts = {"RECORDS": [{"HOST_NAME": h, "STATUS": status.get(h, "ok"), "MAX": "32",
                          "NJOBS": "0", "RUN": "0"} for h in ("t1", "t2", "t3")]}
    lshosts = {"RECORDS": [{"HOST_NAME": h, "type": "X86_64", "model": "XeonGold",
                            "ncpus": "32", "maxmem": "192G", "RESOURCES": "(mpi)"}
                           for h in ("t1", "t2", "t3")]}
    queues = {"RECORDS": [{"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": "-",
                           "RUNLIMIT": "1440.0 min"}]}
    out = {"hosts": json.dumps(hosts), "lshosts": json.dumps(lshosts),
           "queues": json.dumps(queues), "queue": json.dumps({"RECORDS": []}),
           "user": "alice\n"}
    snap = LsfCommands(tz=timezone.utc).parse_snapshot("tern", out)
    snap = snap.model_copy(update={"taken_at": NOW})
    snap.partitions[0].default = True
    return SiteConfig(name="tern", scheduler="lsf"), snap


LSF_32 = '#BSUB -n 32\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00'


def test_hosts_closed_by_their_load_hold_the_job_and_say_why():
    """Every host closed_Busy (a load index past its threshold): no slot is dispatched
    now; when the load falls is not read, so the engine plans them free in an hour and
    says so (before: BUSY at +1 h with no word of why). One host open: now there."""
    v = next(x for x in run(LSF_32, tern(dict.fromkeys(("t1", "t2", "t3"), "closed_Busy")))
             .ranked if x.site == "tern")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert said(v, "queue normal: t1, t2, t3 closed_Busy (a load index past its threshold): "
                   "LSF dispatches no job to a closed host until it opens again, which is "
                   "not foreseen here: the slots its jobs do not hold are planned free in 1 h")
    v = next(x for x in run(LSF_32, tern({"t1": "closed_Busy", "t2": "closed_Wind"})).ranked
             if x.site == "tern")
    assert (v.verdict, v.estimated_start) == ("READY", NOW) and not said(v, "closed_")


def test_hosts_closed_for_good_leave_no_host():
    """closed_Adm, closed_LIM and unavail take no job until an admin acts: INCOMPATIBLE."""
    p = run(LSF_32, tern({"t1": "closed_Adm", "t2": "closed_LIM", "t3": "unavail"}))
    assert reasons(p, "tern") == \
        "needs 1 host, queue normal has only 0 usable (others closed_adm t1; closed_lim t2; " \
        "unavail t3)"


# ---- flux: property constraints ----------------------------------------------------------

def plover():
    """plover, a flux site read from `flux resource list -n -o RESOURCE_FORMAT`: p1-p2 64
    cores (properties amd, ib), p3-p4 32 cores (intel), free; p5 (amd, ib) down."""
    out = ("free|amd,ib|2|128|0|p[1-2]\nfree|intel|2|64|0|p[3-4]\n"
           "down|amd,ib|1|64|0|p5\n")
    snap = FluxCommands().parse_snapshot("plover", {"resources": out, "queue": "",
                                                    "queues": ""})
    return SiteConfig(name="plover", scheduler="flux"), snap.model_copy(
        update={"taken_at": NOW})


@pytest.mark.parametrize("job, verdict_, said_", [
    ("#flux: -N 2 -n 2 -c 64 --requires=amd -t 60m", "READY", None),
    # p5 is amd but down
    ("#flux: -N 3 -n 3 --requires=amd -t 60m", "INCOMPATIBLE",
     "needs 3 nodes, the site has only 2 usable (others down p5)"),
    ("#flux: -N 1 -n 1 --requires=arm -t 60m", "INCOMPATIBLE",
     "missing feature 'arm' (site offers: amd, ib, intel)"),
    ("#flux: -N 1 -n 1 -c 64 --requires=intel -t 60m", "INCOMPATIBLE",
     "no single node meets all the requirements together (feature 'intel' on p3, p4; 64 "
     "cores on p1, p2, p5)"),
])
def test_flux_property_constraints(job, verdict_, said_):
    p = run(job, plover())
    assert next(v for v in p.ranked if v.site == "plover").verdict == verdict_
    assert said_ is None or reasons(p, "plover") == said_


@pytest.mark.parametrize("query", ["^intel", "amd&intel", "amd intel"])
def test_a_flux_query_not_read_is_said(query):
    """A query of negation or several properties is kept unread: the job is placed as if
    it asked none, and told so (before: nothing said, though `^intel` on 3 nodes leaves
    only 2 and no node is both amd and intel)."""
    v = next(v for v in run(f"#flux: -N 1 -n 1 --requires='{query}' -t 60m", plover()).ranked
             if v.site == "plover")
    assert f"--requires={query}: only a query of one property is read; flux may give the " \
        "job none of the nodes counted for it" in v.not_checked, v.not_checked
