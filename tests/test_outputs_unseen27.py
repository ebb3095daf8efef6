"""Sweep 27 of scheduler outputs: outputs written here in the forms each scheduler documents
(Slurm 22.05-24.11 `scontrol -d show node -o`, `scontrol show partition -o`, `sinfo -N`,
`squeue`, `sacct -P`; PBS Pro 2024 `qstat -f -F json` and `pbsnodes -av -F json`; LSF 10.1
`bjobs -o -json`; Grid Engine `qstat -xml`; flux-core `flux jobs --json` and `flux resource
list`), none captured and none met by sweeps 1-26: GPUs typed and indexed in GresUsed
(`gpu:a100:4(IDX:0-3)`, `IDX:0,2-3`, `IDX:N/A`, two types on one node), node names in
hostlist ranges across racks (`n[001-010,020]`), numbers padded to a column, PBS's
`exec_vnode` of parenthesised chunks joined by `+`, an LSF job on several hosts
(`4*h1 4*h2`), Grid Engine jobs and array tasks in `Eqw`, Flux jobs in SCHED, DEPEND and
CLEANUP, outputs cut short mid-line and a header printed again mid-output (sinfo and flux
resource list without their no-header option, each page or `-i` round). Each row of
OUTPUTS is one output and what a user would read from it; the focused tests after it are
the faults this sweep found (each failed before): a header line sinfo or flux resource
list printed again was read as a node named NODELIST in state STATE, with no CPUs; a
`scontrol show node` record cut short before its CPU count was read as a node with no CPUs
and no memory, and nothing said it was cut."""

from __future__ import annotations

import json

import pytest
from outputs_helpers import at, ended, error_of, flux, lsf, pbs, sge, slurm

from diamond_jupyter.model import SiteError


def epoch(*parts: int) -> int:
    return int(at(*parts).timestamp())


# -- Slurm ------------------------------------------------------------------------------------

# `scontrol -d show node -o` (Slurm 23.02+: CPUEfctv; -d adds GresUsed with each GPU's index)
_G01 = ("NodeName=g01 Arch=x86_64 CoresPerSocket=32 CPUAlloc=16 CPUEfctv=64 CPUTot=64 "
        "CPULoad=3.02 AvailableFeatures=a100 ActiveFeatures=a100 Gres=gpu:a100:4(S:0-1) "
        "GresDrain=N/A GresUsed=gpu:a100:4(IDX:0-3) NodeAddr=g01 NodeHostName=g01 "
        "RealMemory=512000 AllocMem=128000 FreeMem=N/A Sockets=2 Boards=1 State=MIXED "
        "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=gpu "
        "BootTime=2026-12-01T00:00:00 SlurmdStartTime=2026-12-01T00:01:00 "
        "CfgTRES=cpu=64,mem=500G,billing=64,gres/gpu=4 AllocTRES=cpu=16,mem=125G,gres/gpu=4")
SCONTROL_NODES = "\n".join([
    _G01,
    _G01.replace("g01", "g02").replace("Gres=gpu:a100:4(S:0-1)", "Gres=gpu:a100:2(S:0),"
                                       "gpu:v100:2(S:1)")
    .replace("GresUsed=gpu:a100:4(IDX:0-3)", "GresUsed=gpu:a100:1(IDX:0),gpu:v100:2(IDX:2-3)")
    .replace(",gres/gpu=4", ",gres/gpu=3"),
    _G01.replace("g01", "g03").replace("GresUsed=gpu:a100:4(IDX:0-3)",
                                       "GresUsed=gpu:a100:0(IDX:N/A)")
    .replace("AllocTRES=cpu=16,mem=125G,gres/gpu=4", "AllocTRES="),
    _G01.replace("g01", "g04").replace("GresUsed=gpu:a100:4(IDX:0-3)",
                                       "GresUsed=gpu:a100:3(IDX:0,2-3)"),
]) + "\n"
# the same, cut short mid-record (a connection dropped, a pipe closed)
SCONTROL_CUT = SCONTROL_NODES + "NodeName=g05 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUEfctv="

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'` with the counts padded to a column (an
# SINFO_FORMAT's `%6c` kept in a site's wrapper), one line of nodes across racks
SINFO_RACKS = ("n[001-010,020]|idle|    64|  256000|gpu:a100:4(S:0-1)|a100|gpu*|0/64/0/64|"
               "infinite|11\n")
# the same without -h under `sinfo -i 60`: its header again at each round
_SINFO_HEADER = ("NODELIST|STATE|CPUS|MEMORY|GRES|AVAIL_FEATURES|PARTITION|CPUS(A/I/O/T)|"
                 "TIMELIMIT|NODES")
SINFO_PAGED = "\n".join([
    _SINFO_HEADER, "c1|idle|8|16000|(null)|(null)|debug*|0/8/0/8|1:00:00|1",
    _SINFO_HEADER, "c2|mixed|8|16000|(null)|(null)|debug*|4/4/0/8|1:00:00|1"]) + "\n"

# squeue records of SQUEUE_FIELDS (old order, no separators): a job on 11 nodes across racks
# holding 4 typed GPUs a node, and a waiting one cut short after its partition
SQUEUE = ("777|RUNNING|2026-12-06T08:00:00|2026-12-06T20:00:00|2026-12-06T07:59:00|12:00:00|11|"
          "704|ana|gpu|gres/gpu:a100:4|n[001-010,020]|None|(null)|1:00:00|big\n")
SQUEUE_CUT = SQUEUE + "778|PENDING|N/A|N/A|2026-12-06T07:59:00|12:00:00|1|4|ana|gp"

PARTITION = ("PartitionName=gpu AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
             "Default=NO QoS=N/A DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO "
             "GraceTime=0 Hidden=NO MaxNodes=UNLIMITED MaxTime=2-00:00:00 MinNodes=0 LLN=NO "
             "MaxCPUsPerNode=UNLIMITED Nodes=n[001-010,020] PriorityJobFactor=1 PriorityTier=1 "
             "RootOnly=NO ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF "
             "State=UP TotalCPUs=704 TotalNodes=11 SelectTypeParameters=NONE "
             "JobDefaults=DefCpuPerGPU=16,DefMemPerGPU=65536 DefMemPerNode=UNLIMITED "
             "MaxMemPerNode=UNLIMITED TRES=cpu=704,mem=5500G,node=11,billing=704,gres/gpu=44")

# `sacct -X -P -n --format=SACCT_FIELDS`: a job id padded, a requeued and a DEADLINE end
SACCT = "\n".join([
    "  901|COMPLETED|0:0|2026-12-06T08:00:00|2026-12-06T09:00:00|n[001-010,020]|big|901",
    "904|REQUEUED|0:0|2026-12-06T08:00:00|2026-12-06T08:05:00|n001|rq|904",
    "906|DEADLINE|0:0|2026-12-06T08:00:00|2026-12-06T08:05:00|n001|dl|906",
]) + "\n"
# the same fields without -n, its header printed again mid-output (two runs joined)
_SACCT_HEADER = "JobID|State|ExitCode|Start|End|NodeList|JobName|JobID"
SACCT_PAGED = "\n".join([
    _SACCT_HEADER, "910|COMPLETED|0:0|2026-12-06T08:00:00|2026-12-06T09:00:00|n1|a|910",
    _SACCT_HEADER, "911|FAILED|2:0|2026-12-06T08:00:00|2026-12-06T09:00:00|n1|b|911"]) + "\n"

# -- PBS Pro ----------------------------------------------------------------------------------

PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2024.1.0", "pbs_server": "s", "Jobs": {
    "41.s": {"Job_Name": "mpi", "Job_Owner": "ana@l", "job_state": "R", "queue": "workq",
             "exec_host": "n001/0*4+n002/0*4",
             "exec_vnode": "(n001[0]:ncpus=4:mem=8gb)+(n002[0]:ncpus=2:mem=4gb+"
                           "n002[1]:ncpus=2:mem=4gb)",
             "Resource_List": {"ncpus": 8, "nodect": 2, "select": "2:ncpus=4:mem=8gb",
                               "walltime": "24:00:00", "place": "scatter"},
             "stime": "Sun Dec  6 08:00:00 2026", "resources_used": {"walltime": "01:00:00"}},
    "42.s": {"Job_Name": "q", "Job_Owner": "ana@l", "job_state": "Q", "queue": "workq",
             "comment": "Not Running: Insufficient amount of resource: ncpus (R: 128 A: 64 "
                        "T: 64)",
             "Resource_List": {"ncpus": 128, "nodect": 2, "walltime": "00:30:00"}},
    "43.s": {"Job_Name": "e", "Job_Owner": "ana@l", "job_state": "E", "queue": "workq",
             "Exit_status": 0, "Resource_List": {"ncpus": 1, "walltime": "1:00:00"}},
}})

PBS_NODES = json.dumps({"timestamp": 1, "pbs_version": "2024.1.0", "pbs_server": "s",
                        "nodes": {
    "n001": {"Mom": "n001", "state": "job-busy", "pcpus": 64,
             "resources_available": {"ncpus": 64, "mem": "263921620kb", "ngpus": 4,
                                     "host": "n001", "vnode": "n001"},
             "resources_assigned": {"ncpus": 64, "mem": "8388608kb", "ngpus": 0}},
    "n002": {"Mom": "n002", "state": "down,offline",
             "comment": "node down: communication closed",
             "resources_available": {"ncpus": 64, "mem": "256gb", "host": "n002",
                                     "vnode": "n002"},
             "resources_assigned": {}},
}})

# -- LSF --------------------------------------------------------------------------------------

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 4, "RECORDS": [
    {"JOBID": "6001", "STAT": "RUN", "EXEC_HOST": "4*h1 4*h2", "SLOTS": "8"},
    {"JOBID": "6002", "STAT": "RUN", "EXEC_HOST": "4*h1:4*h2:h3", "SLOTS": "9"},
    {"JOBID": "6003", "STAT": "PEND", "PEND_REASON": "-", "EXEC_HOST": "-", "SLOTS": "-",
     "RUNTIMELIMIT": "600.0/h1"},
    {"JOBID": "6004", "STAT": "ZOMBI"},
]})

# -- Grid Engine ------------------------------------------------------------------------------


def sge_job(number: int, state: str, *, tasks: str = "", queue: str = "", slots: int = 1,
            name: str = "j") -> str:
    running = "r" in state and "q" not in state
    when = "JAT_start_time" if running else "JB_submission_time"
    return (f'<job_list state="{"running" if running else "pending"}">'
            f"<JB_job_number>{number}</JB_job_number><JAT_prio>0.50500</JAT_prio>"
            f"<JB_name>{name}</JB_name><JB_owner>ana</JB_owner><state>{state}</state>"
            f"<{when}>2026-12-06T08:00:00</{when}><queue_name>{queue}</queue_name>"
            f"<slots>{slots}</slots>" + (f"<tasks>{tasks}</tasks>" if tasks else "")
            + "</job_list>")


QSTAT_XML = ("<?xml version='1.0'?>\n<job_info xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/"
             "sge/source/dist/util/resources/schemas/qstat/qstat.xsd\">\n<queue_info>"
             + sge_job(701, "r", queue="all.q@n001.rack1", slots=16, name="mpi")
             + "</queue_info>\n<job_info>"
             + sge_job(702, "Eqw", name="bad dir") + sge_job(703, "Eqw", tasks="2-4:1")
             + sge_job(704, "Rq") + "</job_info>\n</job_info>\n")
QSTAT_XML_CUT = QSTAT_XML[:QSTAT_XML.index("<JB_job_number>703") + 12]

# -- Flux -------------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 3001, "state": "CLEANUP", "result": "FAILED", "returncode": 1,
     "t_run": epoch(2026, 12, 6, 7), "t_cleanup": epoch(2026, 12, 6, 8)},
    {"id": 3002, "state": "SCHED", "urgency": 16, "priority": 4294967295},
    {"id": 3003, "state": "DEPEND", "dependencies": ["afterok:f123"]},
    {"id": 3005, "state": "CLEANUP", "result": "COMPLETED", "returncode": 0,
     "nodelist": "n[001-010,020]", "nnodes": 11},
]})

# `flux resource list -o '{state}|{properties}|{nnodes}|{ncores}|{ngpus}|{nodelist}'`: nodes
# across racks; then the same without -n, its header again on the next page
FLUX_RACKS = "free|a100|11|704|44|n[001-010,020]\n"
_FLUX_HEADER = "STATE|PROPERTIES|NNODES|NCORES|NGPUS|NODELIST"
FLUX_PAGED = "\n".join([_FLUX_HEADER, "free||2|128|8|n[001-002]",
                        _FLUX_HEADER, "allocated||1|64|4|n003"]) + "\n"


def said(run) -> tuple[object, list[str]]:
    """What `run(skipped)` read, and what it said it left out (each up to its sample)."""
    skipped: list[str] = []
    got = run(skipped)
    return got, [s.split(" (got ")[0] for s in skipped]


def gpus_of(nodes) -> list[tuple]:
    return [(n.name, n.gpus, n.gpus_allocated, n.gpu_type, n.gpu_types) for n in nodes]


OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm
    ("scontrol node: gpu:a100:4 all in use (IDX:0-3)",
     lambda: gpus_of(slurm.parse_nodes(SCONTROL_NODES))[0], ("g01", 4, 4, "a100", None)),
    ("scontrol node: two GPU types, each with its indexes in use",
     lambda: gpus_of(slurm.parse_nodes(SCONTROL_NODES))[1],
     ("g02", 4, 3, "a100", {"a100": 2, "v100": 2})),
    ("scontrol node: none in use (IDX:N/A), AllocTRES empty",
     lambda: gpus_of(slurm.parse_nodes(SCONTROL_NODES))[2], ("g03", 4, 0, "a100", None)),
    ("scontrol node: indexes as a list of ranges (IDX:0,2-3) count three",
     lambda: gpus_of(slurm.parse_nodes(SCONTROL_NODES))[3], ("g04", 4, 3, "a100", None)),
    ("scontrol node: CPUs and memory beside the GPUs",
     lambda: [(n.cpus, n.cpus_allocated, n.memory_mb, n.memory_allocated, n.state)
              for n in slurm.parse_nodes(SCONTROL_NODES)][0],
     (64, 16, 512000, 128000, "mixed")),
    ("scontrol node: a record cut before its CPU count is said, the others read",
     lambda: said(lambda s: [n.name for n in slurm.parse_nodes(SCONTROL_CUT, s)]),
     (["g01", "g02", "g03", "g04"],
      ["slurm: cannot parse scontrol show node line 5: no CPUTot or CPUEfctv (cut short?)"])),
    ("sinfo -N: padded counts read, a line of nodes across racks kept whole",
     lambda: [(n.name, n.cpus, n.memory_mb, n.gpus, n.gpu_type, n.partitions)
              for n in slurm.parse_sinfo_nodes(SINFO_RACKS, [])],
     [("n[001-010,020]", 64, 256000, 4, "a100", ["gpu"])]),
    ("sinfo: a header printed again is said, never a node",
     lambda: said(lambda s: [(n.name, n.state, n.cpus)
                             for n in slurm.parse_sinfo_nodes(SINFO_PAGED, s)]),
     ([("c1", "idle", 8), ("c2", "mixed", 8)],
      ["slurm: cannot parse sinfo line 1: a header, no node",
       "slurm: cannot parse sinfo line 3: a header, no node"])),
    ("squeue: 11 nodes across racks, 4 typed GPUs a node: 44 GPUs",
     lambda: [(j.state.value, j.nodes, j.cpus, j.gpus, j.node_list, j.reason, j.comment)
              for j in slurm.parse_status(SQUEUE, [])],
     [("RUNNING", 11, 704, 44, "n[001-010,020]", None, None)]),
    ("squeue: a record cut mid-line is refused, saying it may be cut",
     lambda: error_of(lambda: slurm.parse_status(SQUEUE_CUT)),
     "slurm: cannot parse squeue output: its last line begins a record of fewer than 15 "
     "fields (cut short?) or ends a job name: which cannot be told"),
    ("scontrol partition: Nodes across racks are 11, QoS=N/A none, GPU defaults read",
     lambda: [(p.nodes[:2] + p.nodes[-2:], len(p.nodes), p.total_nodes, p.max_time_s,
               p.def_cpus_per_gpu, p.def_mem_per_gpu_mb, p.qos)
              for p in slurm.parse_partitions(PARTITION)],
     [(["n001", "n002", "n010", "n020"], 11, 11, 172800, 16, 65536, None)]),
    ("sacct: a padded job id is the job's id, its node list kept",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.node_list)
              for j in slurm.parse_accounting(SACCT)][0],
     ("901", "COMPLETED", 0, "n[001-010,020]")),
    ("sacct: REQUEUED waits again, its last run's end not its end",
     lambda: [(j.state.value, j.started_at, j.ended_at)
              for j in slurm.parse_accounting(SACCT)][1], ("PENDING", None, None)),
    ("sacct: DEADLINE is a timeout, ended",
     lambda: [(j.state.value, j.ended_at) for j in slurm.parse_accounting(SACCT)][2],
     ("TIMEOUT", at(2026, 12, 6, 8, 5))),
    ("sacct: a header before the records and again mid-output is said, the records read",
     lambda: said(lambda s: ended(slurm.parse_accounting(SACCT_PAGED, s))),
     ([("910", "COMPLETED", 0, None), ("911", "FAILED", 2, None)],
      ["slurm: cannot parse sacct line 1: a header, no record",
       "slurm: cannot parse sacct line 3: a header, no record"])),
    # PBS Pro
    ("qstat -f: exec_vnode of chunks in parentheses joined by '+': 2 hosts, 8 CPUs",
     lambda: [(j.state.value, j.nodes, j.cpus, j.node_list, j.walltime_s, j.started_at)
              for j in pbs.parse_status(PBS_JOBS)][0],
     ("RUNNING", 2, 8, "n001/0*4+n002/0*4", 86400, at(2026, 12, 6, 8))),
    ("qstat -f: waiting, the scheduler's comment its reason",
     lambda: ended(pbs.parse_status(PBS_JOBS))[1],
     ("42.s", "PENDING", None,
      "Not Running: Insufficient amount of resource: ncpus (R: 128 A: 64 T: 64)")),
    ("qstat -f: E (exiting) still runs, its exit status not yet its end",
     lambda: ended(pbs.parse_status(PBS_JOBS))[2], ("43.s", "RUNNING", None, None)),
    ("pbsnodes: kb memory in MB, GPUs, every CPU assigned",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.memory_mb, n.gpus)
              for n in pbs.parse_nodes(PBS_NODES, [])][0],
     ("n001", "job-busy", 64, 64, 257735, 4)),
    ("pbsnodes: down,offline with its comment, nothing assigned",
     lambda: [(n.state, n.cpus_allocated, n.memory_mb, n.reason)
              for n in pbs.parse_nodes(PBS_NODES, [])][1],
     ("down,offline", 0, 262144, "node down: communication closed")),
    # LSF
    ("bjobs: several hosts separated by blanks (4*h1 4*h2): 2 hosts, 8 slots",
     lambda: [(j.nodes, j.cpus, j.node_list) for j in lsf.parse_status(BJOBS)][0],
     (2, 8, "4*h1 4*h2")),
    ("bjobs: 4*h1:4*h2:h3 is 3 hosts",
     lambda: [(j.nodes, j.cpus) for j in lsf.parse_status(BJOBS)][1], (3, 9)),
    ("bjobs: '-' fields none; a run limit normalised to a host (600.0/h1) in minutes",
     lambda: [(j.state.value, j.reason, j.nodes, j.cpus, j.walltime_s)
              for j in lsf.parse_status(BJOBS)][2], ("PENDING", None, None, None, 36000)),
    ("bjobs: ZOMBI (killed, its end not confirmed) is not known",
     lambda: ended(lsf.parse_status(BJOBS))[3], ("6004", "UNKNOWN", None, None)),
    # Grid Engine
    ("qstat -xml: a running job's host from its queue instance, its slots its CPUs",
     lambda: [(j.native_id, j.state.value, j.cpus, j.node_list, j.started_at)
              for j in sge.parse_status(QSTAT_XML)][0],
     ("701", "RUNNING", 16, "n001.rack1", at(2026, 12, 6, 8))),
    ("qstat -xml: Eqw waits in error, saying how it runs again",
     lambda: ended(sge.parse_status(QSTAT_XML))[1],
     ("702", "PENDING", None,
      "error state (Eqw): `qstat -j` says why; it runs only after `qmod -cj`")),
    ("qstat -xml: an array's tasks in Eqw, one record for their range",
     lambda: [(j.native_id, (j.reason or "")[:17]) for j in sge.parse_status(QSTAT_XML)][2],
     ("703.2-4:1", "error state (Eqw)")),
    ("qstat -xml: Rq (rescheduled, waiting again) is waiting",
     lambda: ended(sge.parse_status(QSTAT_XML))[3], ("704", "PENDING", None, None)),
    ("qstat -xml: an output cut mid-record is refused",
     lambda: error_of(lambda: sge.parse_status(QSTAT_XML_CUT)),
     "sge: cannot parse qstat -xml: no closing </job_info>"),
    # Flux
    ("flux jobs: CLEANUP has its result: failed, exit 1, ending said",
     lambda: ended(flux.parse_status(FLUX_JOBS))[0],
     ("3001", "FAILED", 1, "ending (cleanup)")),
    ("flux jobs: SCHED waits; DEPEND waits on its dependency",
     lambda: ended(flux.parse_status(FLUX_JOBS))[1:3],
     [("3002", "PENDING", None, None), ("3003", "PENDING", None, "dependency: afterok:f123")]),
    ("flux jobs: CLEANUP of 11 nodes across racks",
     lambda: [(j.state.value, j.nodes, j.node_list) for j in flux.parse_status(FLUX_JOBS)][3],
     ("COMPLETED", 11, "n[001-010,020]")),
    ("flux resource list: 11 nodes across racks, 64 cores and 4 GPUs each",
     lambda: [(n.name, n.cpus, n.gpus) for n in flux.parse_resources(FLUX_RACKS, [])][9:],
     [("n010", 64, 4), ("n020", 64, 4)]),
    ("flux resource list: its header again on a page is said, never a node",
     lambda: said(lambda s: [(n.name, n.state, n.cpus, n.gpus)
                             for n in flux.parse_resources(FLUX_PAGED, s)]),
     ([("n001", "free", 64, 4), ("n002", "free", 64, 4), ("n003", "allocated", 64, 4)],
      ["flux: cannot parse flux resource list line 1: a header, no resources",
       "flux: cannot parse flux resource list line 3: a header, no resources"])),
]


@pytest.mark.parametrize(("what", "run", "expected"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(what: str, run, expected) -> None:
    assert run() == expected, what


def test_the_sweep_has_twenty_outputs() -> None:
    assert len(OUTPUTS) >= 20


# -- faults this sweep found ------------------------------------------------------------------

def test_a_repeated_header_is_no_node() -> None:
    """Before, sinfo's and flux resource list's header lines were read as a node named
    NODELIST in state STATE with no CPUs; placement counted it among the site's nodes."""
    for nodes in (slurm.parse_sinfo_nodes(SINFO_PAGED, []), flux.parse_resources(FLUX_PAGED, [])):
        assert "NODELIST" not in [n.name for n in nodes]
    # without a list to say it in, a header is no silent node either
    with pytest.raises(SiteError, match="sinfo line 1: a header"):
        slurm.parse_sinfo_nodes(SINFO_PAGED)


def test_a_node_record_cut_short_is_said_in_the_snapshot() -> None:
    """Before, `scontrol show node` cut before its CPU count gave a node g05 of 0 CPUs and
    0 MB, silently; now the snapshot leaves it out and its warnings say so."""
    snap = slurm.parse_snapshot("alpha", {"nodes": SCONTROL_CUT, "partitions": PARTITION})
    assert [n.name for n in snap.nodes] == ["g01", "g02", "g03", "g04"]
    assert any("scontrol show node line 5: no CPUTot or CPUEfctv (cut short?)" in w
               for w in snap.warnings)
