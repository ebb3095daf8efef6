"""Placement cases worked by hand, fourteenth sweep: vega, a Slurm center read from what
its commands print (`scontrol show partition/node -o`, `squeue`, `sacctmgr`), whose nodes
differ in what sbatch's node minimums ask (sockets, cores a socket, threads a core, local
temporary disk: `-B`, `--sockets-per-node`, `--cores-per-socket`, `--threads-per-core`,
`--tmp`, `--mincpus`), with a node of two GPU types and partitions open to root only or
to reservations only. Each case: the job, the verdict, the partition, the start and the
reason, worked out from sbatch(1) and slurm.conf(5)."""

from __future__ import annotations

from datetime import timezone

import pytest
from test_placement_cases import NOW, at, hours, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands

slurm = SlurmCommands(tz=timezone.utc)


_PART = ("PartitionName={name} AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default={default} "
         "QoS=N/A DefaultTime=01:00:00 MaxNodes={max_nodes} MaxTime={max_time} MinNodes=0 "
         "LLN=NO MaxCPUsPerNode=UNLIMITED Nodes={nodes} PriorityJobFactor=1 PriorityTier=1 "
         "RootOnly={root} ReqResv={resv} Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP "
         "TotalCPUs=0 TotalNodes=0")
# vega's partitions: main (default) c01-c04, 1 day, at most 3 nodes; fat f01, 2 days; gpu
# g01-g02, 12 h; admin c01-c04, root's jobs only; resv c03-c04, jobs of a reservation only
PARTITIONS = "\n".join(_PART.format(**p) for p in (
    dict(name="main", default="YES", max_nodes=3, max_time="1-00:00:00", nodes="c[01-04]",
         root="NO", resv="NO"),
    dict(name="fat", default="NO", max_nodes="UNLIMITED", max_time="2-00:00:00",
         nodes="f01", root="NO", resv="NO"),
    dict(name="gpu", default="NO", max_nodes="UNLIMITED", max_time="12:00:00",
         nodes="g[01-02]", root="NO", resv="NO"),
    dict(name="admin", default="NO", max_nodes="UNLIMITED", max_time="UNLIMITED",
         nodes="c[01-04]", root="YES", resv="NO"),
    dict(name="resv", default="NO", max_nodes="UNLIMITED", max_time="1-00:00:00",
         nodes="c[03-04]", root="NO", resv="YES"),
)) + "\n"

_NODE = ("NodeName={name} Arch=x86_64 CoresPerSocket={cores} CPUAlloc={alloc} "
         "CPUEfctv={cpus} CPUTot={cpus} CPULoad=0.01 AvailableFeatures={feats} "
         "ActiveFeatures={feats} Gres={gres} GresDrain=N/A GresUsed={used} NodeAddr={name} "
         "NodeHostName={name} RealMemory={mem} AllocMem=0 FreeMem=1000 Sockets={sockets} "
         "Boards=1 State={state} ThreadsPerCore={threads} TmpDisk={tmp} Weight=1 "
         "Partitions={parts}")
# c01-c02: 2 sockets x 16 cores x 2 threads (64 CPUs), 400000 MB of local disk (ssd);
# c03-c04: 2 x 16 x 1 (32 CPUs), no local disk; f01: 4 x 24 x 1 (96 CPUs), 100000 MB;
# g01: 2 x 16 x 1, two A100s and two V100s; g02: 2 x 16 x 1, four A100s; both 200000 MB
_NODES = {
    "c01": dict(sockets=2, cores=16, threads=2, cpus=64, mem=192000, tmp=400000,
                feats="ssd", gres="(null)", used="gpu:0", parts="main,admin"),
    "c03": dict(sockets=2, cores=16, threads=1, cpus=32, mem=192000, tmp=0, feats="(null)",
                gres="(null)", used="gpu:0", parts="main,admin,resv"),
    "f01": dict(sockets=4, cores=24, threads=1, cpus=96, mem=1536000, tmp=100000,
                feats="bigmem", gres="(null)", used="gpu:0", parts="fat"),
    "g01": dict(sockets=2, cores=16, threads=1, cpus=32, mem=512000, tmp=200000,
                feats="(null)", gres="gpu:a100:2(S:0),gpu:v100:2(S:1)",
                used="gpu:a100:{a}(IDX:N/A),gpu:v100:{v}(IDX:N/A)", parts="gpu"),
    "g02": dict(sockets=2, cores=16, threads=1, cpus=32, mem=512000, tmp=200000,
                feats="(null)", gres="gpu:a100:4(S:0-1)", used="gpu:a100:{a}(IDX:N/A)",
                parts="gpu"),
}
_NODES["c02"] = _NODES["c01"]
_NODES["c04"] = dict(_NODES["c03"], parts="main,admin,resv")


def node_lines(alloc: dict[str, int], gpus: dict[str, tuple[int, int]]) -> str:
    lines = []
    for name in sorted(_NODES):
        k = dict(_NODES[name])
        a, v = gpus.get(name, (0, 0))
        k["used"] = k["used"].format(a=a, v=v)
        state = "MIXED" if alloc.get(name) else "IDLE"
        lines.append(_NODE.format(name=name, alloc=alloc.get(name, 0), state=state, **k))
    return "\n".join(lines) + "\n"


def running(jid: str, node: str, cpus: int, left_h: float, partition: str = "main",
            gres: str = "N/A") -> str:
    """bob's job as `squeue` prints it: running, `left_h` hours of its 4 left."""
    return (f"{jid}|RUNNING|{at(left_h - 4)}|{at(left_h)}|{at(left_h - 5)}|4:00:00|1|{cpus}|"
            f"bob|{partition}|{gres}|{node}|None|(null)|job{jid}")


def vega(*queue: str, alloc=None, gpus=None):
    outputs = {
        "partitions": PARTITIONS, "nodes": node_lines(alloc or {}, gpus or {}),
        "queue": "\n".join(queue), "queue_qos": "", "qos": "normal||||||||\n",
        "reservations": "No reservations in the system\n",
        "assoc": "user|alice\nalice|proj||normal|normal\n"}
    snap = slurm.parse_snapshot("vega", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="vega", metadata={"architecture": "x86_64"}), snap


# c01 and c02 half used by bob until +2 h and +3 h (40 of 64 CPUs each); g02 holds two
# A100s for bob until +1 h
BUSY = dict(alloc={"c01": 40, "c02": 40, "g02": 8}, gpus={"g02": (2, 0)})
BUSY_QUEUE = (running("7", "c01", 40, 2), running("8", "c02", 40, 3),
              running("9", "g02", 8, 1, "gpu", "gres/gpu:2"))


def _place(script: str, busy: bool = True):
    site = vega(*BUSY_QUEUE, **BUSY) if busy else vega()
    return run(script, site).verdict("vega")


# (the job's directives, verdict, partition, start in hours from now (None: no start),
#  the reason or a note that names the cause)
CASES = [
    # --tmp: local disk a node (MB unless a unit is given; TmpDisk). c01-c02 have 400000 MB
    # (bob's jobs leave 24 CPUs each: a 1-CPU job starts now); 300G is 307200 MB
    ("--tmp=300G -N 1", "READY", "main", 0,
     "partition fat: needs 307200 MB of temporary disk a node (--tmp=300G), the most a node "
     "has is 100000"),
    # 500G is more than any node's disk: sbatch says the configuration is not available
    ("--tmp=500G", "INCOMPATIBLE", None, None,
     "needs 512000 MB of temporary disk a node (--tmp=500G), the most a node has is 400000"),
    # three nodes of 300G: main has two (c03-c04 have no local disk) and no other
    # partition a disk that large
    ("--tmp=300G -N 3", "INCOMPATIBLE", None, None,
     "needs 3 nodes, partition main has only 2 that can run it (others: needs 307200 MB of "
     "temporary disk a node (--tmp=300G), the most a node has is 0)"),
    # 150000 MB without a unit: the GPU nodes' 200000 hold it
    ("--tmp=150000 -p gpu --gres=gpu:a100:1", "READY", "gpu", 0, None),
    # -B sockets[:cores[:threads]] and the named options: only f01 has 4 sockets, or more
    # than 16 cores a socket; only c01-c02 two threads a core
    ("-B 4 -n 8", "READY", "fat", 0,
     "partition main: needs 4 sockets a node (-B 4), the most a node has is 2"),
    ("--cores-per-socket=20", "READY", "fat", 0,
     "partition gpu: needs 20 cores a socket (--cores-per-socket=20), the most a node has "
     "is 16"),
    ("--threads-per-core=2 -n 4", "READY", "main", 0,
     "partition fat: needs 2 threads a core (--threads-per-core=2), the most a node has is 1"),
    ("-B *:*:2 -n 2", "READY", "main", 0,
     "partition gpu: needs 2 threads a core (-B *:*:2), the most a node has is 1"),
    ("-B 2:32", "INCOMPATIBLE", None, None,
     "needs 32 cores a socket (-B 2:32), the most a node has is 24"),
    ("--sockets-per-node=2 --cores-per-socket=16 -p gpu --gres=gpu:1", "READY", "gpu", 0,
     None),
    # --mincpus: at least 48 CPUs on its node. c03-c04 have 32, c01-c02 24 free until bob's
    # jobs end (c01 at +2 h); the job asking 4 CPUs starts now on c03
    ("--mincpus=48 -N 1 -p main", "BUSY", "main", 2, None),
    ("-N 1 -n 4 -p main", "READY", "main", 0, None),
    ("--mincpus=100", "INCOMPATIBLE", None, None, "needs 100 CPUs per node, largest node has 96"),
    # a node of two GPU types: g01's two A100s and two V100s. Three V100s: no node; three
    # A100s: g02 once bob's two end (+1 h); four of any type: g01 now
    ("-p gpu --gres=gpu:v100:3 -N 1", "INCOMPATIBLE", None, None,
     "needs 3 GPUs of type 'v100' per node, largest node has 2 of them"),
    ("-p gpu --gres=gpu:a100:3 -N 1", "BUSY", "gpu", 1, None),
    ("-p gpu --gres=gpu:4 -N 1", "READY", "gpu", 0, None),
    ("-p gpu --gres=gpu:a100:2 -N 2", "READY", "gpu", 0, None),
    ("-p gpu --gres=gpu:v100:2 -N 2", "INCOMPATIBLE", None, None,
     "needs 2 nodes, partition gpu has only 1 that can run it (others: no GPU of type 'v100' "
     "(its nodes have: a100))"),
    # --cpus-per-gpu beyond a GPU node: 2 x 20 CPUs, the GPU nodes have 32
    ("-p gpu --cpus-per-gpu=20 --gres=gpu:2 -N 1", "INCOMPATIBLE", None, None, "40 CPUs"),
    ("-p gpu --cpus-per-gpu=16 --gres=gpu:a100:2 -N 1", "READY", "gpu", 0, None),
    # RootOnly=YES and ReqResv=YES: refused when named, passed over (said) otherwise
    ("-p admin -N 1", "RESTRICTED", None, None,
     "partition 'admin' takes root's jobs only (RootOnly=YES)"),
    ("-p resv -N 1", "RESTRICTED", None, None,
     "partition 'resv' takes only jobs of a reservation (ReqResv=YES); name one with "
     "--reservation"),
    # 40 CPUs on one node: c01-c02 have 24 free until +2 h, c03-c04 32 in all: fat's f01
    # now; admin (root's alone, on the same nodes) is passed over, and said
    ("-N 1 -n 40", "READY", "fat", 0,
     "partition 'admin' takes root's jobs only (RootOnly=YES)"),
    # --ntasks-per-socket / --ntasks-per-core: the most tasks a socket or a core takes, so
    # a node takes sockets x N (cores x N). Eight tasks on one node at two a socket: main's
    # and gpu's nodes have 2 sockets (4 tasks), f01 4 (8)
    ("-N 1 -n 8 --ntasks-per-socket=2", "READY", "fat", 0,
     "partition main: needs 8 tasks a node, --ntasks-per-socket=2 lets the most a node has "
     "take 4"),
    # 20 tasks at three a socket without a node count: 6 to a node in main, 4 nodes, above
    # its MaxNodes 3 (before, all 20 went to one 32-CPU node)
    ("-n 20 --ntasks-per-socket=3 -p main", "INCOMPATIBLE", None, None,
     "needs 4 nodes, partition main allows at most 3"),
    # 12 tasks at two a socket: 4 to a node, three of main's nodes (c01-c02's 24 free CPUs
    # each hold 4) now
    ("-n 12 --ntasks-per-socket=2 -p main", "READY", "main", 0, None),
    # one task a core: c01's 64 CPUs are 32 cores, so 40 tasks fit only f01's 96 cores
    ("-N 1 -n 40 --ntasks-per-core=1 -p main", "INCOMPATIBLE", None, None,
     "partition main: needs 40 tasks a node, --ntasks-per-core=1 lets the most a node has "
     "take 32"),
    ("-N 1 -n 40 --ntasks-per-core=1", "READY", "fat", 0,
     "partition main: needs 40 tasks a node, --ntasks-per-core=1 lets the most a node has "
     "take 32"),
    # a job that names its partitions is refused in their nodes' words, not the site's
    # (before: "largest node has 96", f01's, a node of fat)
    ("--mincpus=100 -p main", "INCOMPATIBLE", None, None,
     "partition main: needs 100 CPUs per node, largest node has 64"),
    ("--tmp=200G -p fat", "INCOMPATIBLE", None, None,
     "partition fat: needs 204800 MB of temporary disk a node (--tmp=200G), the most a node "
     "has is 100000"),
    ("--mincpus=100 -p main,gpu", "INCOMPATIBLE", None, None,
     "partition gpu: needs 100 CPUs per node, largest node has 32"),
]


@pytest.mark.parametrize("job, verdict, partition, start_h, said", CASES,
                         ids=[c[0] for c in CASES])
def test_vega(job, verdict, partition, start_h, said):
    v = _place(f"#SBATCH {job} -t 1:00:00")
    assert (v.verdict, v.partition) == (verdict, partition), v.reasons + v.notes
    assert v.estimated_start == (None if start_h is None else hours(start_h))
    if said:
        assert any(said in x for x in v.reasons + v.notes), v.reasons + v.notes


def test_the_outputs_are_read_as_vega_is():
    _, snap = vega()
    c01 = next(n for n in snap.nodes if n.name == "c01")
    assert (c01.sockets, c01.cores_per_socket, c01.threads_per_core, c01.tmp_disk_mb) == \
        (2, 16, 2, 400000)
    admin, resv = (next(p for p in snap.partitions if p.name == x) for x in ("admin", "resv"))
    assert (admin.root_only, admin.req_resv, resv.root_only, resv.req_resv) == \
        (True, False, False, True)


# --------------------------------------------------------------- LSF queue RES_REQ

# wren (the eighth sweep's LSF site: w1-w2 XeonGold 32 CPUs, w3-w4 EPYC 64, w3 bigmem):
# its queue normal's RES_REQ, as `bqueues -l` prints it, keeps jobs on the EPYC hosts
# (lsb.queues(5): a host must meet the queue's select and the job's)
WREN_RES_REQ = (
    "QUEUE: normal\n  -- For normal jobs\n\nPARAMETERS/STATISTICS\n"
    "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV\n"
    " 30   20  Open:Active       -    -    -    -     0     0     0     0     0    0\n"
    "\nSCHEDULING PARAMETERS\n           r15s   r1m  r15m   ut      pg    io   ls\n"
    " loadSched   -     -     -     -       -     -    -\n\n"
    " RES_REQ:  select[model==EPYC] rusage[mem=1000]\n\n")

LSF_CASES = [
    # bob fills w3 until +2 h and w4 until +3 h; w1-w2 are idle but not EPYC: 8 slots
    # wait for w3 (before, the queue's RES_REQ was not read: now on w1)
    ('#BSUB -n 8\n#BSUB -R "span[hosts=1]"', "BUSY", 2, None),
    ('#BSUB -n 8\n#BSUB -R "select[bigmem]"', "BUSY", 2, None),
    # the job's select and the queue's leave no host in common: refused, both named
    ('#BSUB -n 8\n#BSUB -R "select[model==XeonGold]"', "INCOMPATIBLE", None,
     "queue normal: no host that can run the job (w1, w2) meets its RES_REQ "
     "select[model==EPYC] (bqueues -l)"),
]


@pytest.mark.parametrize("job, verdict, start_h, said", LSF_CASES,
                         ids=[c[0].split("\n")[1] for c in LSF_CASES])
def test_lsf_queue_res_req_select(job, verdict, start_h, said):
    from test_placement_cases8 import _wjob, wren

    site = wren(_wjob("1", "bob", 64, "w3", 2), _wjob("2", "bob", 64, "w4", 3),
                queue_long=WREN_RES_REQ)
    assert site[1].partitions[0].res_req_select == "select[model==EPYC]"
    v = run(job + "\n#BSUB -W 1:00", site).verdict("wren")
    assert v.verdict == verdict, v.reasons
    assert v.estimated_start == (None if start_h is None else hours(start_h))
    if said:
        assert v.reasons == [said]
    # without the RES_REQ line the XeonGold hosts take the first two now
    plain = wren(_wjob("1", "bob", 64, "w3", 2), _wjob("2", "bob", 64, "w4", 3))
    if start_h is not None and "bigmem" not in job:
        assert run(job + "\n#BSUB -W 1:00", plain).verdict("wren").estimated_start == NOW


def test_a_queue_select_term_not_checked_is_said_not_checked_of_its_queue_only():
    # a load index (r15s) is not in the recorded outputs: said once as not checked, naming
    # the queue
    from test_placement_cases8 import _wjob, wren

    text = WREN_RES_REQ.replace("select[model==EPYC]", "select[model==EPYC && r15s<1.0]")
    v = run("#BSUB -n 8\n#BSUB -W 1:00", wren(_wjob("1", "bob", 64, "w3", 2),
                                             queue_long=text)).verdict("wren")
    assert v.verdict == "READY", v.reasons
    assert [n for n in v.not_checked if "r15s" in n] == [
        "queue normal's RES_REQ select[] term 'r15s<1.0': the hosts' recorded outputs "
        "(lshosts, bhosts) do not give it (bsub decides)"], v.not_checked
    assert not [n for n in v.notes if "r15s" in n], v.notes


def test_slurmrestd_gives_the_same_node_minimums_and_partition_flags():
    # slurmrestd's node object (the recorded fixture: 4 sockets of 1 core, no local disk)
    # and a partition's flags root_only and reservation_required
    import json
    from pathlib import Path

    from diamond_jupyter.dialects.slurm_rest import parse_nodes, parse_partitions

    fixtures = Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"
    node = parse_nodes((fixtures / "nodes.json").read_text())[0]
    assert (node.sockets, node.cores_per_socket, node.threads_per_core, node.tmp_disk_mb) == \
        (4, 1, 1, 0)
    doc = json.loads((fixtures / "partitions.json").read_text())
    doc["partitions"][0]["flags"] = ["default", "root_only", "reservation_required"]
    p = parse_partitions(json.dumps(doc))[0]
    assert (p.default, p.root_only, p.req_resv) == (True, True, True)
    assert not parse_partitions((fixtures / "partitions.json").read_text())[0].root_only


@pytest.mark.parametrize("line, said", [
    ("--tmp=abc", "bad --tmp 'abc' in `#SBATCH --tmp=abc`; expected a size: MB, or a number "
                  "with K, M, G or T"),
    ("--tmp=100GB", "bad --tmp '100GB'"),
    ("--mincpus=x4", "bad --mincpus 'x4' in `#SBATCH --mincpus=x4`; expected a whole number "
                     "of CPUs a node"),
    ("--threads-per-core=1.5", "bad --threads-per-core '1.5'"),
    ("-B 2:x", "bad --extra-node-info '2:x' in `#SBATCH -B 2:x`; expected "
               "sockets[:cores[:threads]], each a whole number or *"),
])
def test_node_minimums_sbatch_would_refuse_are_bad_input(line, said):
    # placement reads them: a value sbatch refuses is named, not left to pass unchecked
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import BadInput

    with pytest.raises(BadInput) as e:
        Federation.parse(f"#!/bin/bash\n#SBATCH {line}\n./app\n")
    assert str(e.value).startswith("line 2: ") and said in str(e.value)


# wren's queue normal with a RES_REQ of memory and span (bqueues -l): bsub merges the
# queue's sections with the job's (lsb.queues(5)), the job's own section of a kind winning.
# rusage[mem=8000] is per slot, as a job's; bob holds 16 slots of w3 until +2 h and of w4
# until +3 h (48 free on each, 512G); w1-w2 have 32 slots and 192G (196608 MB)
WREN_RUSAGE_SPAN = WREN_RES_REQ.replace("select[model==EPYC] rusage[mem=1000]",
                                        "rusage[mem=8000] span[hosts=1]")

LSF_MERGED = [
    # 56 slots on one host: none has 56 free until bob's job on w3 ends (as tasks without a
    # span were already placed: on as few hosts as the largest holds)
    ("#BSUB -n 56", WREN_RUSAGE_SPAN, "BUSY", 2, None),
    # 28 slots x 8000 MB = 224000 MB on one host: more than a XeonGold host has, said of
    # the hosts the job's select[] leaves (it said "no single node meets all ...")
    ('#BSUB -n 28\n#BSUB -R "select[model==XeonGold]"', WREN_RUSAGE_SPAN, "INCOMPATIBLE",
     None, "queue normal: needs 224000 MB memory per host, largest host has 196608 MB"),
    # the job's own rusage[mem] wins over the queue's: 28 x 1000 MB fits w1 now
    ('#BSUB -n 28\n#BSUB -R "select[model==XeonGold] rusage[mem=1000]"', WREN_RUSAGE_SPAN,
     "READY", 0, None),
    # the job's own span wins: 28 to a host on w3 and w4 now (not 56 on one at +2 h)
    ('#BSUB -n 56\n#BSUB -R "span[ptile=28]"', WREN_RUSAGE_SPAN, "READY", 0, None),
    # a queue's span[ptile=16]: 80 slots take 5 hosts, the queue has 4 (before: spread
    # over w3, w4 and w1 as their slots allow)
    ("#BSUB -n 80", WREN_RES_REQ.replace("select[model==EPYC] rusage[mem=1000]",
                                         "span[ptile=16]"), "INCOMPATIBLE", None,
     "needs 5 hosts (80 tasks, 16 to a host), queue normal has only 4"),
]


@pytest.mark.parametrize("job, res_req, verdict, start_h, said", LSF_MERGED,
                         ids=[c[0].replace("\n", " ") for c in LSF_MERGED])
def test_lsf_queue_res_req_rusage_and_span(job, res_req, verdict, start_h, said):
    from test_placement_cases8 import _wjob, wren

    site = wren(_wjob("1", "bob", 16, "w3", 2), _wjob("2", "bob", 16, "w4", 3),
                queue_long=res_req)
    v = run(job + "\n#BSUB -W 1:00", site).verdict("wren")
    assert v.verdict == verdict, v.reasons + v.notes
    assert v.estimated_start == (None if start_h is None else hours(start_h))
    if said:
        assert any(said in x for x in v.reasons), v.reasons


def test_lsf_queue_res_req_sections_are_read():
    from diamond_jupyter.dialects.lsf_commands import parse_queue_res_req, queue_rusage_mem_mb

    text = WREN_RES_REQ.replace("rusage[mem=1000]", "rusage[ngpus_physical=1,mem=2GB] "
                                "span[ptile=8] same[model]")
    assert parse_queue_res_req(text) == {"normal": {
        "select": "[model==EPYC]", "rusage": "[ngpus_physical=1,mem=2GB]",
        "span": "[ptile=8]", "same": "[model]"}}
    assert queue_rusage_mem_mb("[ngpus_physical=1,mem=2GB]") == 2048
    assert queue_rusage_mem_mb("[mem=4000:duration=10]") == 4000
    assert queue_rusage_mem_mb("[ngpus_physical=1]") is None
