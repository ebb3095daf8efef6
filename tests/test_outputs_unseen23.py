"""Sweep 23 of scheduler outputs: outputs written here in the forms each scheduler
documents (Slurm 22.05-24.11 text and --json, slurmrestd, PBS Pro and Torque, LSF,
flux-core, Grid Engine), none captured and none met by sweeps 1-22: heterogeneous jobs'
components (`+N`), array tasks finished and waiting, COMPLETING/CONFIGURING/STAGE_OUT
jobs, limits UNLIMITED/INVALID/infinite/unset, OUT_OF_MEMORY and NODE_FAIL ends, nodes
powered down, planned or cloud, names of 300 characters, with `|` and non-ASCII letters,
records with fields missing and with fields no parser knows, warnings around the output
and outputs cut short. Each row of OUTPUTS is one output and what a user would read
from it; the focused tests after it are the faults this sweep found (each failed
before): PBS Pro's bare `"FOO":005` (a `-v` value of digits) left its job UNKNOWN at
every poll; JSON's 1e999/NaN/Infinity in a count or a time raised out of the Slurm,
slurmrestd, Flux and LSF parsers; a memory size with a decimal comma (`3,8G`) read as
none. squeue's old 15-field form (no separators) cannot tell a last record cut short
from a name going on over lines: since sweep 24 such a last line fails the read (the
engine's own queries use separators, and there a cut record is refused too)."""

from __future__ import annotations

import json

import pytest
from outputs_helpers import at, error_of, flux, lsf, pbs, sge, slurm, torque, wrapped

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.slurm_commands import parse_usage
from diamond_jupyter.model import JobStatus
from diamond_jupyter.placement_fit import node_usable

LONG_NAME = "ensemble-" + "α" * 150 + "-" + "x" * 141  # 301 characters


def epoch(*parts: int) -> int:
    return int(at(*parts).timestamp())


def brief(jobs: list[JobStatus]) -> list[tuple]:
    """(id, state, native state, exit code, reason) of each record."""
    return [(j.native_id, j.state.value, j.native_state, j.exit_code, j.reason) for j in jobs]


def timed(jobs: list[JobStatus]) -> list[tuple]:
    """(id, state, limit, start, end, estimated start) of each record."""
    return [(j.native_id, j.state.value, j.walltime_s, j.started_at, j.ended_at,
             j.estimated_start) for j in jobs]


def said_and_read(parse, text: str) -> tuple[list[str], list[str]]:
    """(the ids or names `parse` read, what it said it left out, each up to its sample)."""
    said: list[str] = []
    got = [getattr(r, "native_id", None) or r.name for r in parse(text, said)]
    return got, [s.split(" (got ")[0] for s in said]


# -- Slurm text -------------------------------------------------------------------------------

# squeue in the 15-field form of before %M (the name last): a het job's components, an
# array task completing, a week's limit with a 301-character name, INVALID and UNLIMITED
# limits, a job configuring (its nodes booting), one in STAGE_OUT, a name holding '|'
SQUEUE = "\n".join([
    "77+0|RUNNING|2026-12-06T08:00:00|2026-12-07T08:00:00|2026-12-06T07:00:00|UNLIMITED|1|"
    "4|ana|cpu|N/A|c01|None|(null)|het lead",
    "77+1|RUNNING|2026-12-06T08:00:00|2026-12-07T08:00:00|2026-12-06T07:00:00|UNLIMITED|2|"
    "128|ana|gpu|gres/gpu:a100:2|g[01-02]|None|(null)|het gpu part",
    "88_12|COMPLETING|2026-12-06T08:00:00|2026-12-06T08:59:59|2026-12-06T07:00:00|1:00:00|1|"
    "1|bo|cpu|N/A|c02|None|(null)|sweep",
    "89|PENDING|N/A|N/A|2026-12-06T07:00:00|7-00:00:00|16|2048|cy|big|N/A|(null)|Resources|"
    f"(null)|{LONG_NAME}",
    "90|PENDING|N/A|N/A|2026-12-06T07:00:00|INVALID|1|1|di|cpu|N/A|(null)|"
    "PartitionTimeLimit|(null)|too long",
    "91|CONFIGURING|2026-12-06T08:59:00|2026-12-06T09:59:00|2026-12-06T07:00:00|1:00:00|1|8|"
    "ed|cloud|N/A|cl-001|None|(null)|booting",
    "92|STAGE_OUT|2026-12-06T06:00:00|2026-12-06T08:00:00|2026-12-06T05:00:00|2:00:00|1|8|"
    "fa|bb|N/A|c03|None|(null)|a|b|c",
])

# `sacct -X -P -n --format=jobid,state,exitcode,start,end,nodelist,jobname,jobid`
SACCT = "\n".join([
    "99+0|COMPLETED|0:0|2026-12-06T06:00:00|2026-12-06T07:00:00|c01|het|99+0",
    "99+1|FAILED|2:0|2026-12-06T06:00:00|2026-12-06T06:30:00|g01|het|99+1",
    "100_[3-5]|PENDING|0:0|Unknown|Unknown|None assigned|arr|100_[3-5]",
    "100_1|OUT_OF_MEMORY|0:125|2026-12-06T06:00:00|2026-12-06T06:10:00|c04|arr|100_1",
    "101|NODE_FAIL|0:0|2026-12-06T06:00:00|2026-12-06T06:05:00|c05|nf|101",
    "102|CANCELLED by 4242|0:0|None|2026-12-06T06:00:00|None assigned|never|102",
    "103|RUNNING|0:0|2026-12-06T06:00:00|Unknown|c06|still|103",
]) + "\n"

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'`: a node in two partitions (two lines),
# one powered down (idle~), one planned for a waiting job, one inval with no size
SINFO = "\n".join([
    "g01|mixed|128|1031000|gpu:a100:4(S:0-1),shard:a100:16|a100,ib|gpu|64/64/0/128|"
    "2-00:00:00|1",
    "g01|mixed|128|1031000|gpu:a100:4(S:0-1),shard:a100:16|a100,ib|debug|64/64/0/128|"
    "30:00|1",
    "c10|idle~|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "c11|planned|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "c12|inval|0|1|(null)|(null)|cpu*|0/0/0/0|infinite|1",
])

# `scontrol -d show node -o` of 24.11: a cloud node powered down, an aarch64 node, a
# 32-bit one
SCONTROL_NODES = "\n".join([
    "NodeName=cl-001 Arch=x86_64 CoresPerSocket=8 CPUAlloc=0 CPUEfctv=16 CPUTot=16 "
    "CPULoad=N/A AvailableFeatures=cloud,spot ActiveFeatures=cloud,spot Gres=(null) "
    "NodeAddr=cl-001 NodeHostName=cl-001 RealMemory=64000 AllocMem=0 FreeMem=N/A Sockets=2 "
    "Boards=1 State=IDLE+CLOUD+POWERED_DOWN ThreadsPerCore=1 TmpDisk=0 Weight=1 "
    "Owner=N/A MCS_label=N/A Partitions=cloud CfgTRES=cpu=16,mem=62.50G,billing=16 "
    "AllocTRES= CurrentWatts=0 AveWatts=0",
    "NodeName=arm01 Arch=aarch64 CoresPerSocket=72 CPUAlloc=36 CPUEfctv=144 CPUTot=144 "
    "AvailableFeatures=grace,arch=aarch64 ActiveFeatures=grace,arch=aarch64 "
    "Gres=gpu:gh200:1(S:0) GresUsed=gpu:gh200:1(IDX:0) RealMemory=491520 AllocMem=65536 "
    "Sockets=2 State=MIXED ThreadsPerCore=1 Partitions=grace "
    "Reason=rack 4: fan at 90% [root@2026-12-01T10:00:00]",
    "NodeName=old32 Arch=i686 CPUAlloc=0 CPUTot=2 RealMemory=2000 State=IDLE+DRAIN "
    "Partitions=legacy Reason=32-bit, kept for one code",
])

# -- squeue --json (22.05's v0.0.38, 24.11's v0.0.42) and slurmrestd --------------------------

SQUEUE_JSON_2411 = json.dumps({"jobs": [
    {"job_id": 201, "het_job_id": wrapped(200), "het_job_offset": wrapped(1),
     "job_state": ["RUNNING"], "name": "het:gpu", "node_count": wrapped(2), "cpus":
     wrapped(64), "time_limit": wrapped(0, infinite=True),
     "start_time": wrapped(epoch(2026, 12, 6, 8)), "tres_per_node": "gres/gpu:4"},
    {"job_id": 202, "job_state": ["COMPLETED"], "exit_code": {"status": ["SUCCESS"],
     "return_code": wrapped(0), "signal": {"id": wrapped(0, set_=False), "name": ""}},
     "time_limit": wrapped(30), "start_time": wrapped(epoch(2026, 12, 6, 7)),
     "end_time": wrapped(epoch(2026, 12, 6, 7, 20)), "a_field_of_25_05": {"x": 1}},
    {"job_id": 203, "job_state": ["FAILED"], "exit_code": {"status": ["EXITED"],
     "return_code": wrapped(3)}, "start_time": wrapped(epoch(2026, 12, 6, 7)),
     "end_time": wrapped(epoch(2026, 12, 6, 7, 1))},
    {"job_id": 204, "job_state": ["PENDING"], "state_reason": "Dependency",
     "state_description": "", "time_limit": wrapped(1440),
     "start_time": wrapped(0, set_=False)},
], "warnings": [{"description": "cgroup plugin not loaded", "source": "slurmctld"}],
    "errors": [], "meta": {"slurm": {"version": {"major": "24", "micro": "0",
                                                 "minor": "11"}}}})

SQUEUE_JSON_2205 = json.dumps({"meta": {"plugin": {"type": "openapi/v0.0.38"}},
                               "errors": [], "jobs": [
    {"job_id": 301, "job_state": "PENDING", "time_limit": 4294967295, "state_reason":
     "Priority", "start_time": 0, "submit_time": epoch(2026, 12, 6, 7), "name": "ελ"},
    {"job_id": 302, "job_state": "RUNNING", "time_limit": 120, "start_time":
     epoch(2026, 12, 6, 8), "nodes": "n[1-3]", "node_count": 3},
    {"job_id": 303, "job_state": "TIMEOUT", "time_limit": 10, "exit_code": 15,
     "start_time": epoch(2026, 12, 6, 7), "end_time": epoch(2026, 12, 6, 7, 10)},
]})

REST_NODES = json.dumps({"nodes": [
    {"name": "r1", "state": ["IDLE", "DRAIN"], "cpus": 32, "real_memory": 128000,
     "architecture": "aarch64", "gres": "gpu:2", "features": ["hbm"], "partitions": ["p"]},
    {"name": "r2", "state": ["IDLE", "POWERED_DOWN", "CLOUD"], "cpus": 16,
     "real_memory": 64000, "architecture": "", "partitions": ["p"]},
], "warnings": [], "errors": []})

SSHARE = "\n".join([
    "root||cpu=1000,mem=2000|cpu=10",
    "chem|ana|cpu=52000,mem=880000,gres/gpu=310|cpu=1200,gres/gpu=60",
    "physics.hep|bo|cpu=0|cpu=0",
    "sshare: warning: a line of another shape",
])

OUTPUTS: list[tuple[str, object, object]] = [
    ("squeue: a het job's two components, UNLIMITED: no limit, each its own hosts",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.nodes, j.cpus, j.gpus, j.node_list)
              for j in slurm.parse_status(SQUEUE)][:2],
     [("77+0", "RUNNING", None, 1, 4, None, "c01"),
      ("77+1", "RUNNING", None, 2, 128, 4, "g[01-02]")]),
    ("squeue: an array task COMPLETING still runs, not ended",
     lambda: timed(slurm.parse_status(SQUEUE))[2],
     ("88_12", "RUNNING", 3600, at(2026, 12, 6, 8), None, None)),
    ("squeue: a week's limit and a 301-character name kept whole",
     lambda: [(j.state.value, j.walltime_s, j.nodes, j.cpus, j.reason, len(j.name or ""))
              for j in slurm.parse_status(SQUEUE)][3],
     ("PENDING", 604800, 16, 2048, "Resources", 301)),
    ("squeue: an INVALID limit is no limit, its reason kept",
     lambda: [(j.walltime_s, j.reason, j.estimated_start)
              for j in slurm.parse_status(SQUEUE)][4],
     (None, "PartitionTimeLimit", None)),
    ("squeue: CONFIGURING (nodes booting) is running",
     lambda: timed(slurm.parse_status(SQUEUE))[5],
     ("91", "RUNNING", 3600, at(2026, 12, 6, 8, 59), None, None)),
    ("squeue: STAGE_OUT still runs; a name holding '|' kept",
     lambda: [(j.state.value, j.native_state, j.name) for j in slurm.parse_status(SQUEUE)][6],
     ("RUNNING", "STAGE_OUT", "a|b|c")),
    ("sacct: a het job's components end apart",
     lambda: brief(slurm.parse_accounting(SACCT))[:2],
     [("99+0", "COMPLETED", "COMPLETED", 0, None), ("99+1", "FAILED", "FAILED", 2, None)]),
    ("sacct: an array's waiting tasks: no start, no end, no hosts",
     lambda: [(j.native_id, j.state.value, j.started_at, j.ended_at, j.node_list)
              for j in slurm.parse_accounting(SACCT)][2],
     ("100_[3-5]", "PENDING", None, None, None)),
    ("sacct: OUT_OF_MEMORY's 0:125 is no signal: failed, no made-up code, saying why",
     lambda: brief(slurm.parse_accounting(SACCT))[3],
     ("100_1", "FAILED", "OUT_OF_MEMORY", None,
      "out of memory: the job used more than the memory it was given")),
    ("sacct: NODE_FAIL failed, saying why, its 0:0 no exit code",
     lambda: brief(slurm.parse_accounting(SACCT))[4],
     ("101", "FAILED", "NODE_FAIL", None, "the node failed")),
    ("sacct: cancelled before it started (Start None), by whom kept",
     lambda: [(j.state.value, j.started_at, j.ended_at, j.reason, j.node_list)
              for j in slurm.parse_accounting(SACCT)][5],
     ("CANCELLED", None, at(2026, 12, 6, 6), "cancelled by uid 4242", None)),
    ("sacct: RUNNING with End Unknown has no end",
     lambda: timed(slurm.parse_accounting(SACCT))[6],
     ("103", "RUNNING", None, at(2026, 12, 6, 6), None, None)),
    ("sinfo -N: a node of two partitions read once, in both",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.gpus, n.gpu_type, n.partitions, n.features)
              for n in slurm.parse_sinfo_nodes(SINFO)][0],
     ("g01", 128, 64, 4, "a100", ["gpu", "debug"], ["a100", "ib"])),
    ("sinfo -N: idle~ (powered down), planned and inval with no size",
     lambda: [(n.name, n.state, n.cpus, n.memory_mb) for n in slurm.parse_sinfo_nodes(SINFO)][1:],
     [("c10", "idle~", 64, 256000), ("c11", "planned", 64, 256000), ("c12", "inval", 0, 1)]),
    ("scontrol show node: IDLE+CLOUD+POWERED_DOWN with CPUEfctv",
     lambda: [(n.name, n.state, n.cpus, n.memory_mb, n.architecture, n.features)
              for n in slurm.parse_nodes(SCONTROL_NODES)][0],
     ("cl-001", "idle+cloud+powered_down", 16, 64000, "x86_64", ["cloud", "spot"])),
    ("scontrol show node: aarch64 with one GH200 in use and a reason holding '%' and ':'",
     lambda: [(n.architecture, n.cpus, n.cpus_allocated, n.gpus, n.gpus_allocated, n.gpu_type)
              for n in slurm.parse_nodes(SCONTROL_NODES)][1],
     ("aarch64", 144, 36, 1, 1, "gh200")),
    ("scontrol show node: Arch=i686 is 32-bit x86, not x86_64",
     lambda: [(n.name, n.architecture, n.state) for n in slurm.parse_nodes(SCONTROL_NODES)][2],
     ("old32", "i686", "idle+drain")),
    ("squeue --json (24.11): a het component named by squeue's +N, an infinite limit, GPUs",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.nodes, j.cpus, j.gpus, j.name)
              for j in slurm.parse_status_json(SQUEUE_JSON_2411)][0],
     ("200+1", "RUNNING", None, 2, 64, 8, "het:gpu")),
    ("squeue --json (24.11): a field no version before printed is passed over",
     lambda: brief(slurm.parse_status_json(SQUEUE_JSON_2411))[1],
     ("202", "COMPLETED", "COMPLETED", 0, None)),
    ("squeue --json (24.11): EXITED with 3 failed, 3 kept",
     lambda: brief(slurm.parse_status_json(SQUEUE_JSON_2411))[2],
     ("203", "FAILED", "FAILED", 3, None)),
    ("squeue --json (24.11): an empty description leaves the reason",
     lambda: [(j.state.value, j.reason, j.walltime_s, j.estimated_start)
              for j in slurm.parse_status_json(SQUEUE_JSON_2411)][3],
     ("PENDING", "Dependency", 86400, None)),
    ("squeue --json (22.05, v0.0.38): INFINITE limit none, start 0 no estimate",
     lambda: [(j.native_id, j.walltime_s, j.estimated_start, j.submitted_at, j.name)
              for j in slurm.parse_status_json(SQUEUE_JSON_2205)][0],
     ("301", None, None, at(2026, 12, 6, 7), "ελ")),
    ("squeue --json (22.05): plain numbers for limit, nodes and times",
     lambda: [(j.walltime_s, j.nodes, j.node_list, j.started_at)
              for j in slurm.parse_status_json(SQUEUE_JSON_2205)][1],
     (7200, 3, "n[1-3]", at(2026, 12, 6, 8))),
    ("squeue --json (22.05): TIMEOUT with a wait status of signal 15 says 143",
     lambda: brief(slurm.parse_status_json(SQUEUE_JSON_2205))[2],
     ("303", "TIMEOUT", "TIMEOUT", 143, None)),
    ("slurmrestd nodes: IDLE+DRAIN aarch64 with 2 GPUs and its features",
     lambda: [(n.name, n.state, n.cpus, n.memory_mb, n.gpus, n.architecture, n.features)
              for n in slurm_rest.parse_nodes(REST_NODES)][0],
     ("r1", "idle+drain", 32, 128000, 2, "aarch64", ["hbm"])),
    ("slurmrestd nodes: powered-down cloud node with an empty architecture: none",
     lambda: [(n.name, n.state, n.architecture) for n in slurm_rest.parse_nodes(REST_NODES)][1],
     ("r2", "idle+powered_down+cloud", None)),
    ("sshare -nP: TRES-minutes used and still to run, per account and user",
     lambda: parse_usage(SSHARE),
     {("root", ""): ({"cpu": 1000, "mem": 2000}, {"cpu": 10}),
      ("chem", "ana"): ({"cpu": 52000, "mem": 880000, "gres/gpu": 310},
                        {"cpu": 1200, "gres/gpu": 60}),
      ("physics.hep", "bo"): ({"cpu": 0}, {"cpu": 0})}),
]


# -- PBS Pro, Torque --------------------------------------------------------------------------

PBS_FINISHED = {"timestamp": 1764579600, "pbs_version": "2024.1.0", "pbs_server": "p1",
                "Jobs": {
    "500[7].p1": {"Job_Name": "arr", "job_state": "F", "queue": "work", "Exit_status": 0,
                  "stime": "Sun Dec  6 07:00:00 2026", "obittime": "Sun Dec  6 07:30:00 2026",
                  "resources_used": {"walltime": "00:30:00", "cput": "00:29:10"},
                  "Resource_List": {"walltime": "01:00:00", "ncpus": 2, "nodect": 1}},
    "501.p1": {"Job_Name": "over", "job_state": "F", "queue": "work", "Exit_status": -29,
               "stime": "Sun Dec  6 07:00:00 2026",
               "Resource_List": {"walltime": "00:10:00", "ncpus": 1}},
    "502.p1": {"Job_Name": "never", "job_state": "F", "queue": "work", "Exit_status": -3},
    "503.p1": {"Job_Name": "moved", "job_state": "M", "queue": "work"},
    "504.p1": {"Job_Name": "x" * 236, "job_state": "Q", "queue": "work",
               "comment": "Not Running: Insufficient amount of resource: ngpus (R: 8 A: 4 "
                          "T: 4)", "Resource_List": {"walltime": "720:00:00", "ngpus": 8,
                                                      "select": "2:ncpus=64:ngpus=4",
                                                      "nodect": 2, "ncpus": 128}},
}}
PBSNODES_MIXED = {"pbs_version": "2024.1.0", "nodes": {
    "v001": {"state": "free", "resources_available": {"ncpus": 96, "mem": "768gb",
                                                      "arch": "linux", "ngpus": 0},
             "resources_assigned": {"ncpus": 24, "mem": "96gb"}, "jobs": ["600.p1/0"]},
    "v002": {"state": "offline", "resources_available": {"ncpus": 96, "mem": "786432mb"},
             "comment": "PM: firmware"},
    "v003": {"state": "free", "resources_available": {"ncpus": "96", "mem": "768GB",
                                                      "arch": "x86_64"}},
}}
TORQUE_DONE = "".join([
    "<Data><Job><Job_Id>700.t</Job_Id><Job_Name>done</Job_Name><job_state>C</job_state>",
    "<queue>batch</queue><exit_status>0</exit_status><start_time>1764999000</start_time>",
    "<comp_time>1765000800</comp_time><Resource_List><walltime>01:00:00</walltime>",
    "<nodes>1:ppn=4</nodes></Resource_List></Job>",
    "<Job><Job_Id>701[3].t</Job_Id><Job_Name>arr-3</Job_Name><job_state>R</job_state>",
    "<queue>batch</queue><exec_host>n5/0-3</exec_host><start_time>1764999000</start_time>",
    "<Resource_List><walltime>00:30:00</walltime></Resource_List>",
    "<unknown_new_attribute>x</unknown_new_attribute></Job>",
    "<Job><Job_Id>702.t</Job_Id><job_state>W</job_state><queue>batch</queue>",
    "<Execution_Time>1765100000</Execution_Time></Job></Data>"])

OUTPUTS += [
    ("qstat -x -F json: a finished subjob with its used walltime",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.walltime_s, j.started_at)
              for j in pbs.parse_status(json.dumps(PBS_FINISHED))][0],
     ("500[7].p1", "COMPLETED", 0, 3600, at(2026, 12, 6, 7))),
    ("qstat -x -F json: Exit_status -29 (JOB_EXEC_KILL_WALLTIME) is a timeout",
     lambda: brief(pbs.parse_status(json.dumps(PBS_FINISHED)))[1][:3],
     ("501.p1", "TIMEOUT", "F")),
    ("qstat -x -F json: Exit_status -3 (never ran) failed, not done",
     lambda: brief(pbs.parse_status(json.dumps(PBS_FINISHED)))[2][:3],
     ("502.p1", "FAILED", "F")),
    ("qstat -x -F json: M (moved to another server) is not known here, never gone",
     lambda: brief(pbs.parse_status(json.dumps(PBS_FINISHED)))[3][:3],
     ("503.p1", "UNKNOWN", "M")),
    ("qstat -F json: a 236-character name, a 30-day limit, the scheduler's comment",
     lambda: [(j.state.value, len(j.name or ""), j.walltime_s, j.nodes, j.cpus, j.gpus,
               j.reason) for j in pbs.parse_status(json.dumps(PBS_FINISHED))][4],
     ("PENDING", 236, 2592000, 2, 128, 8,
      "Not Running: Insufficient amount of resource: ngpus (R: 8 A: 4 T: 4)")),
    ("pbsnodes -av -F json: a quarter of a node taken, arch linux names no CPU",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.memory_mb, n.architecture)
              for n in pbs.parse_nodes(json.dumps(PBSNODES_MIXED))][0],
     ("v001", "free", 96, 24, 786432, None)),
    ("pbsnodes -av -F json: offline with memory in mb",
     lambda: [(n.name, n.state, n.cpus, n.memory_mb)
              for n in pbs.parse_nodes(json.dumps(PBSNODES_MIXED))][1],
     ("v002", "offline", 96, 786432)),
    ("pbsnodes -av -F json: counts as strings, GB in capitals, arch x86_64",
     lambda: [(n.cpus, n.memory_mb, n.architecture)
              for n in pbs.parse_nodes(json.dumps(PBSNODES_MIXED))][2],
     (96, 786432, "x86_64")),
    ("Torque qstat -x: C with exit 0 done, its end from comp_time",
     lambda: timed(torque.parse_status(TORQUE_DONE))[0],
     ("700.t", "COMPLETED", 3600, at(2025, 12, 6, 5, 30), at(2025, 12, 6, 6, 0), None)),
    ("Torque qstat -x: an array element running, an attribute no parser knows",
     lambda: [(j.native_id, j.state.value, j.node_list, j.walltime_s)
              for j in torque.parse_status(TORQUE_DONE)][1],
     ("701[3].t", "RUNNING", "n5/0-3", 1800)),
    ("Torque qstat -x: W (waiting for its execution time) waits",
     lambda: brief(torque.parse_status(TORQUE_DONE))[2][:3], ("702.t", "PENDING", "W")),
]


# -- LSF --------------------------------------------------------------------------------------

BJOBS = {"COMMAND": "bjobs", "JOBS": 6, "RECORDS": [
    {"JOBID": "900", "STAT": "DONE", "JOB_NAME": "ok", "EXIT_CODE": "", "START_TIME":
     "Dec  6 07:00", "FINISH_TIME": "Dec  6 07:45 L", "EXEC_HOST": "h1"},
    {"JOBID": "901", "STAT": "EXIT", "JOB_NAME": "oom", "EXIT_CODE": "137",
     "EXIT_REASON": "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit"},
    {"JOBID": "902", "STAT": "EXIT", "JOB_NAME": "slow", "EXIT_CODE": "140",
     "EXIT_REASON": "TERM_RUNLIMIT: job killed after reaching LSF run time limit"},
    {"JOBID": "903", "STAT": "PEND", "JOB_NAME": "wide", "PEND_REASON":
     "Not enough job slot(s): 12 hosts;", "RUNTIMELIMIT": "1440.0/host"},
    {"JOBID": "904", "STAT": "RUN", "JOB_NAME": "arr[17]", "START_TIME": "Dec  6 08:00",
     "EXEC_HOST": "h2:h2:h3", "RUNTIMELIMIT": "-"},
    {"JOBID": "905", "STAT": "USUSP", "JOB_NAME": "stopped", "START_TIME": "Dec  6 06:00",
     "EXEC_HOST": "h4"},
]}
BHOSTS = {"COMMAND": "bhosts", "HOSTS": 3, "RECORDS": [
    {"HOST_NAME": "h1", "STATUS": "closed_Adm", "MAX": "32", "NJOBS": "0", "RUN": "0"},
    {"HOST_NAME": "h2", "STATUS": "unreach", "MAX": "32", "NJOBS": "8", "RUN": "8"},
    {"HOST_NAME": "h3", "STATUS": "ok", "MAX": "32", "NJOBS": "4", "RUN": "4"},
]}
LSHOSTS = {"COMMAND": "lshosts", "HOSTS": 3, "RECORDS": [
    {"HOST_NAME": "h1", "type": "LINUX86", "model": "PC6000", "ncpus": "32", "maxmem": "2G"},
    {"HOST_NAME": "h2", "type": "LINUX64", "model": "Itanium2", "ncpus": "32",
     "maxmem": "64G"},
    {"HOST_NAME": "h3", "type": "X86_64", "model": "Intel_EM64T", "ncpus": "32",
     "maxmem": "1T"},
]}

OUTPUTS += [
    ("bjobs -json: DONE with an empty EXIT_CODE is 0, its finish kept",
     lambda: [(j.state.value, j.exit_code, j.started_at, j.ended_at)
              for j in lsf.parse_status(json.dumps(BJOBS))][0],
     ("COMPLETED", 0, at(2026, 12, 6, 7), at(2026, 12, 6, 7, 45))),
    ("bjobs -json: TERM_MEMLIMIT failed with 137 and its reason",
     lambda: brief(lsf.parse_status(json.dumps(BJOBS)))[1],
     ("901", "FAILED", "EXIT", 137,
      "out of memory: the job used more than the memory it was given (TERM_MEMLIMIT: job "
      "killed after reaching LSF memory usage limit)")),
    ("bjobs -json: TERM_RUNLIMIT is a timeout",
     lambda: brief(lsf.parse_status(json.dumps(BJOBS)))[2][:2], ("902", "TIMEOUT")),
    ("bjobs -json: PEND with its reason and a day's limit per host",
     lambda: [(j.state.value, j.reason, j.walltime_s)
              for j in lsf.parse_status(json.dumps(BJOBS))][3],
     ("PENDING", "Not enough job slot(s): 12 hosts;", 86400)),
    ("bjobs -json: an array element on two hosts, no limit ('-')",
     lambda: [(j.native_id, j.state.value, j.nodes, j.node_list, j.walltime_s)
              for j in lsf.parse_status(json.dumps(BJOBS))][4],
     ("904[17]", "RUNNING", 2, "h2:h2:h3", None)),
    ("bjobs -json: USUSP (stopped by its user) still holds its host",
     lambda: brief(lsf.parse_status(json.dumps(BJOBS)))[5][:3], ("905", "RUNNING", "USUSP")),
    ("bhosts -json with lshosts -json: closed_Adm, unreach, ok and each type's CPU",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.memory_mb, n.architecture,
               node_usable(n))
              for n in lsf.parse_hosts(json.dumps(BHOSTS), json.dumps(LSHOSTS))],
     [("h1", "closed_adm", 32, 32, 2048, "i686", False),
      ("h2", "unreach", 32, 8, 65536, "ia64", False),
      ("h3", "ok", 32, 4, 1048576, "x86_64", True)]),
]


# -- Flux -------------------------------------------------------------------------------------

FLUX_JOBS = {"jobs": [
    {"id": 2468, "state": "INACTIVE", "result": "CANCELED", "t_run": 1764999000,
     "t_inactive": 1765000000, "exception_type": "cancel", "exception_note": "by user"},
    {"id": 2469, "state": "INACTIVE", "result": "FAILED", "exception_type": "exec",
     "exception_note": "node failure on rank 3", "returncode": 137, "waitstatus": 9,
     "t_run": 1764999000, "t_inactive": 1765000000},
    {"id": 2470, "state": "DEPEND", "dependencies": ["afterok:2469"], "name": "after"},
    {"id": 2471, "state": "CLEANUP", "t_run": 1764999000, "nnodes": 2, "nodelist": "n[3-4]"},
    {"id": 2472, "state": "RUN", "t_run": 1764999000, "duration": 0.0, "expiration": 0,
     "name": "no limit"},
]}

OUTPUTS += [
    ("flux jobs --json: CANCELED is cancelled",
     lambda: brief(flux.parse_status(json.dumps(FLUX_JOBS)))[0][:2], ("2468", "CANCELLED")),
    ("flux jobs --json: FAILED by a node failure, killed by signal 9",
     lambda: brief(flux.parse_status(json.dumps(FLUX_JOBS)))[1][:4],
     ("2469", "FAILED", "INACTIVE:FAILED", 137)),
    ("flux jobs --json: DEPEND waits",
     lambda: brief(flux.parse_status(json.dumps(FLUX_JOBS)))[2][:2], ("2470", "PENDING")),
    ("flux jobs --json: CLEANUP still holds its nodes",
     lambda: [(j.state.value, j.nodes, j.node_list, j.ended_at)
              for j in flux.parse_status(json.dumps(FLUX_JOBS))][3],
     ("RUNNING", 2, "n[3-4]", None)),
    ("flux jobs --json: duration 0 and expiration 0 is no limit",
     lambda: [(j.state.value, j.walltime_s, j.name)
              for j in flux.parse_status(json.dumps(FLUX_JOBS))][4],
     ("RUNNING", None, "no limit")),
    ("flux resource list: properties naming an architecture, down and drained nodes",
     lambda: [(n.name, n.state, n.cpus, n.architecture) for n in flux.parse_resources(
         "free|x86_64|1|64|0|c1\ndown|x86_64|1|64|0|c2\ndrained|arch=aarch64|1|72|0|a1\n")],
     [("c1", "free", 64, "x86_64"), ("c2", "down", 64, "x86_64"),
      ("a1", "drained", 72, "aarch64")]),
    ("flux resource list: an empty instance is no node", lambda: flux.parse_resources(""), []),
]


# -- Grid Engine ------------------------------------------------------------------------------

QSTAT_XML = (
    '<?xml version="1.0"?><job_info><queue_info>'
    '<job_list state="running"><JB_job_number>1200</JB_job_number><JB_name>ün</JB_name>'
    "<JB_owner>u</JB_owner><state>t</state><JAT_start_time>2026-12-06T08:00:00"
    "</JAT_start_time><queue_name>all.q@n7</queue_name><slots>4</slots>"
    "<tasks>3</tasks></job_list>"
    '<job_list state="running"><JB_job_number>1201</JB_job_number><JB_name>dr</JB_name>'
    "<JB_owner>u</JB_owner><state>dr</state><JAT_start_time>2026-12-06T07:00:00"
    "</JAT_start_time><queue_name>all.q@n8</queue_name><slots>1</slots></job_list>"
    "</queue_info><job_info>"
    '<job_list state="pending"><JB_job_number>1202</JB_job_number><JB_name>w</JB_name>'
    "<JB_owner>u</JB_owner><state>qw</state><JB_submission_time>2026-12-06T07:00:00"
    "</JB_submission_time><slots>16</slots><tasks>1-9:2</tasks></job_list>"
    "</job_info></job_info>")
QACCT = "\n".join([
    "=" * 62, "qname        all.q", "hostname     n9", "jobname      killed",
    "jobnumber    1203", "taskid       undefined", "qsub_time    Sun Dec  6 06:00:00 2026",
    "start_time   Sun Dec  6 06:01:00 2026", "end_time     Sun Dec  6 06:31:00 2026",
    "failed       100 : assumedly after job", "exit_status  137",
])

OUTPUTS += [
    ("qstat -xml: t (transferring to its host) runs, task 3 of an array",
     lambda: [(j.native_id, j.state.value, j.native_state, j.cpus, j.node_list)
              for j in sge.parse_status(QSTAT_XML)][0],
     ("1200.3", "RUNNING", "t", 4, "n7")),
    ("qstat -xml: dr (deleted while running) still holds its slot",
     lambda: [(j.native_id, j.state.value, j.native_state)
              for j in sge.parse_status(QSTAT_XML)][1],
     ("1201", "RUNNING", "dr")),
    ("qstat -xml: qw of tasks 1-9 stepping 2",
     lambda: [(j.native_id, j.state.value, j.cpus) for j in sge.parse_status(QSTAT_XML)][2],
     ("1202.1-9:2", "PENDING", 16)),
    ("qacct -j: failed 100 with exit 137 is a kill, its end kept",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.ended_at)
              for j in sge.parse_accounting(QACCT + "\n")],
     [("1203", "FAILED", 137, at(2026, 12, 6, 6, 31))]),
]


# -- garbled records fail loudly or are said; none makes a job look gone ----------------------

OUTPUTS += [
    ("squeue --json with one job lacking job_id: said, the rest read",
     lambda: said_and_read(slurm.parse_status_json, json.dumps(
         {"jobs": [{"job_state": ["RUNNING"]}, {"job_id": 5, "job_state": ["RUNNING"]}]})),
     (["5"], ["slurm: cannot parse squeue --json job 1: no job_id"])),
    ("squeue --json whose errors say why there are no jobs fails, naming them",
     lambda: error_of(lambda: slurm.parse_status_json(json.dumps(
         {"jobs": [], "errors": [{"error": "Unable to contact slurm controller",
                                  "error_number": 1007}]}))),
     "slurm: cannot parse squeue --json: errors: [{'error': 'Unable to contact slurm "
     "controller', 'error_number': 1007}]"),
    ("sacct cut inside a record: refused, nothing read as ended",
     lambda: error_of(lambda: slurm.parse_accounting(SACCT[:SACCT.index("|c06") + 2])),
     "slurm: cannot parse sacct line 7: not a whole record of 8 fields"),
    ("qstat -x -F json cut short is refused",
     lambda: error_of(lambda: pbs.parse_status(json.dumps(PBS_FINISHED)[:300])),
     "pbs: cannot parse qstat -F json: invalid JSON (Unterminated string starting at line 1)"),
    ("bjobs -json cut short is refused",
     lambda: error_of(lambda: lsf.parse_status(json.dumps(BJOBS)[:150])),
     "lsf: cannot parse bjobs -json: invalid JSON (Unterminated string starting at line 1)"),
    ("flux jobs --json cut short is refused",
     lambda: error_of(lambda: flux.parse_status(json.dumps(FLUX_JOBS)[:120])),
     "flux: cannot parse flux jobs --json: invalid JSON (Unterminated string starting at "
     "line 1)"),
    ("qstat -xml cut short is refused",
     lambda: error_of(lambda: sge.parse_status(QSTAT_XML[:200])),
     "sge: cannot parse qstat -xml: no closing </job_info>"),
]


# -- partitions, queues, hosts and estimates ---------------------------------------------------

SCONTROL_PARTITIONS = "\n".join([
    "PartitionName=debug Default=YES DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=UNLIMITED "
    "Nodes=c[01-03] State=UP TotalCPUs=192 TotalNodes=3 OverTimeLimit=NONE",
    "PartitionName=long MaxTime=14-00:00:00 DefaultTime=1-00:00:00 State=DRAIN Nodes=c[01-03] "
    "TotalCPUs=192 TotalNodes=3 MaxNodes=2",
    "PartitionName=gone State=INACTIVE Nodes=(null) TotalCPUs=0 TotalNodes=0 MaxTime=INVALID",
])
BQUEUES = {"COMMAND": "bqueues", "QUEUES": 3, "RECORDS": [
    {"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": "-", "RUNLIMIT": "720.0 min"},
    {"QUEUE_NAME": "long", "STATUS": "Open:Inact_Win", "MAX": "1000",
     "RUNLIMIT": "10080.0 min of hostA"},
    {"QUEUE_NAME": "night", "STATUS": "Closed:Inact_Adm", "MAX": "", "RUNLIMIT": "-"},
]}
PBSNODES_QUOTED = json.dumps({"pbs_version": "18.1.4", "nodes": {
    "n1": {"state": "offline", "comment": "@", "resources_available": {"ncpus": 8}},
    "n2": {"state": "free", "resources_available": {"ncpus": 8}}}}, indent=4).replace(
    '"@"', '"HEALTH-CHECK: reboot "scratch full" (Dec 04 14:13 SCHEDULED)"')
PBS_ESCAPES = json.dumps({"pbs_version": "19.1.1", "Jobs": {
    "8.s": {"job_state": "R", "Variable_List": {"A": "@1", "B": "@2"}},
    "9.s": {"job_state": "Q"}}}, indent=4).replace(
    '"@1"', r'"\'\"q\"\'"').replace('"@2"', r'"ab\,c"')

# SQUEUE's first three records as this engine asks them: %M added (16 fields), each field
# ended by the query's own separator
SEP = "#dj-0123456789abcdef#"
SEPARATED = "".join(
    "".join(x + SEP for x in [*f[:14], "1:00", f[14]]) + "\n"
    for f in (line.split("|", 14) for line in SQUEUE.split("\n")[:3]))

OUTPUTS += [
    ("squeue (separated fields): the same three records read",
     lambda: [(j.native_id, j.state.value, j.time_used_s, j.name)
              for j in slurm.parse_status(SEPARATED)],
     [("77+0", "RUNNING", 60, "het lead"), ("77+1", "RUNNING", 60, "het gpu part"),
      ("88_12", "RUNNING", 60, "sweep")]),
    ("scontrol show partition: MaxTime UNLIMITED and DefaultTime NONE are none",
     lambda: [(p.name, p.state, p.max_time_s, p.default_time_s, p.max_nodes, p.default)
              for p in slurm.parse_partitions(SCONTROL_PARTITIONS)],
     [("debug", "UP", None, None, None, True), ("long", "DRAIN", 1209600, 86400, 2, False),
      ("gone", "INACTIVE", None, None, None, False)]),
    ("squeue --start: N/A and Unknown are no estimate, an array's range kept",
     lambda: slurm.parse_estimates("5|N/A|Priority\n6|2026-12-07T10:00:00|Resources\n"
                                   "7_[1-3]|Unknown|None\n"),
     {"5": None, "6": at(2026, 12, 7, 10), "7_[1-3]": None}),
    ("squeue (this engine's separated fields) cut inside a record: refused, none read",
     lambda: error_of(lambda: slurm.parse_status(SEPARATED[:SEPARATED.index("ana" + SEP)]))
     .split(" of 16 fields")[0],
     "slurm: cannot parse squeue output: not whole records"),
    ("bqueues -json: Open:Inact_Win takes jobs but runs none now, Closed:Inact_Adm none",
     lambda: [(p.name, p.state, p.max_time_s, p.total_cpus)
              for p in lsf.parse_queues(json.dumps(BQUEUES))],
     [("normal", "UP", 43200, 0), ("long", "INACTIVE", 604800, 1000),
      ("night", "CLOSED", None, 0)]),
    ("pbsnodes -a -F json: a comment holding raw quotes (PBS before 19) still reads",
     lambda: [(n.name, n.state, n.cpus) for n in pbs.parse_nodes(PBSNODES_QUOTED)],
     [("n1", "offline", 8), ("n2", "free", 8)]),
    ("qstat -F json: `\\'` and `\\,` in qsub -V's variables (PBS before 2020) still read",
     lambda: [(j.native_id, j.state.value) for j in pbs.parse_status(PBS_ESCAPES)],
     [("8.s", "RUNNING"), ("9.s", "PENDING")]),
]

@pytest.mark.parametrize(("what", "run", "expected"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(what: str, run, expected) -> None:
    assert run() == expected, what


def test_the_sweep_has_fifty_outputs() -> None:
    assert len(OUTPUTS) >= 50


# -- faults this sweep found ------------------------------------------------------------------


def _pbs_listing(variable: str) -> str:
    """`qstat -f -F json` as PBS Pro prints it, one attribute a line, job 4.s carrying
    `variable` (as printed) in its Variable_List."""
    doc = {"timestamp": 1764579600, "pbs_version": "19.1.1", "pbs_server": "s", "Jobs": {
        "4.s": {"Job_Name": "STDIN", "job_state": "R", "queue": "workq",
                "stime": "Sun Dec  6 08:00:00 2026",
                "Variable_List": {"PBS_O_HOME": "/home/a", "FOO": "@"}},
        "5.s": {"Job_Name": "b", "job_state": "Q", "queue": "workq"}}}
    return json.dumps(doc, indent=4).replace('"@"', variable)


@pytest.mark.parametrize("variable", ["005", "0", "00000000000000000000042"])
def test_pbs_env_value_of_digits_printed_bare_keeps_the_job_read(variable: str) -> None:
    """PBS Pro prints a `-v FOO=005` value of digits bare (`"FOO":005`, no JSON number).
    Before, the job holding it read as UNKNOWN at every poll (its record 'could not be
    read'), however it ran; now the value is the string it was and the job is read."""
    jobs = pbs.parse_status(_pbs_listing(variable))
    assert [(j.native_id, j.state.value, j.started_at, j.reason) for j in jobs] == [
        ("4.s", "RUNNING", at(2026, 12, 6, 8), None), ("5.s", "PENDING", None, None)]


def test_pbs_listing_broken_otherwise_still_says_which_job() -> None:
    """A value no repair reads (a bare word) keeps its job UNKNOWN, saying so; the other
    job is read, and none looks gone."""
    jobs = pbs.parse_status(_pbs_listing("05x"))
    assert [(j.native_id, j.state.value) for j in jobs] == [("4.s", "UNKNOWN"),
                                                             ("5.s", "PENDING")]
    assert "could not be read" in (jobs[0].reason or "")


NOT_FINITE = ["1e999", "-1e999", "NaN", "Infinity"]


@pytest.mark.parametrize("number", NOT_FINITE)
def test_json_number_without_a_value_is_no_count_not_a_crash(number: str) -> None:
    """JSON's 1e999 (valid JSON, float infinity to Python) and the NaN/Infinity Python's
    reader takes: before, a count or a time holding one raised OverflowError/ValueError out
    of the parser (no SiteError, nothing said); now it is no count and the job is read."""
    squeue = slurm.parse_status_json(
        f'{{"jobs": [{{"job_id": 5, "job_state": ["RUNNING"], "cpus": {number}, '
        f'"node_count": {number}, "time_limit": {number}, "start_time": {number}}}]}}')
    assert [(j.native_id, j.state.value, j.cpus, j.nodes, j.walltime_s, j.started_at)
            for j in squeue] == [("5", "RUNNING", None, None, None, None)]
    rest = slurm_rest.parse_nodes(
        f'{{"nodes": [{{"name": "a", "state": ["IDLE"], "cpus": {number}, '
        f'"real_memory": {number}}}]}}')
    assert [(n.name, n.cpus, n.memory_mb) for n in rest] == [("a", 0, 0)]
    fluxed = flux.parse_status(
        f'{{"jobs": [{{"id": 6, "state": "RUN", "nnodes": {number}, "t_run": {number}, '
        f'"duration": {number}, "expiration": {number}}}]}}')
    assert [(j.native_id, j.state.value, j.nodes, j.started_at, j.walltime_s)
            for j in fluxed] == [("6", "RUNNING", None, None, None)]
    hosts = lsf.parse_hosts(
        f'{{"RECORDS": [{{"HOST_NAME": "h", "STATUS": "ok", "MAX": {number}}}]}}')
    assert [(n.name, n.cpus) for n in hosts] == [("h", 0)]


def _qhost_memory(mem_total: str) -> int:
    """The memory `qhost -xml` (with qstat's queue instance) gives host n1 of `mem_total`."""
    qhost = ("<?xml version='1.0'?><qhost><host name='n1'>"
             "<hostvalue name='arch_string'>lx-amd64</hostvalue>"
             "<hostvalue name='num_proc'>4</hostvalue><hostvalue name='load_avg'>0,50</hostvalue>"
             f"<hostvalue name='mem_total'>{mem_total}</hostvalue></host></qhost>")
    qstat = ("<?xml version='1.0'?><job_info><queue_info><Queue-List><name>all.q@n1</name>"
             "<qtype>BIP</qtype><slots_used>0</slots_used><slots_total>4</slots_total>"
             "</Queue-List></queue_info><job_info></job_info></job_info>")
    [node] = sge.parse_snapshot("ge", {"hosts": qhost, "queue": qstat}).nodes
    return node.memory_mb


@pytest.mark.parametrize(("mem_total", "mb"), [
    ("3,8G", 3891),  # a decimal comma (Grid Engine run under de_DE)
    ("1007,5G", 1031680),
    ("3.8G", 3891),
    ("1,024M", 0),  # a thousands separator or a decimal comma: not said, so no size
])
def test_grid_engine_memory_with_a_decimal_comma(mem_total: str, mb: int) -> None:
    """Before, a host's memory printed with a locale's decimal comma read as none (0 MB):
    every job asking memory found no host for it."""
    assert _qhost_memory(mem_total) == mb


def test_lsf_host_memory_with_a_decimal_comma() -> None:
    [host] = lsf.parse_hosts(
        json.dumps({"RECORDS": [{"HOST_NAME": "h", "STATUS": "ok", "MAX": "8"}]}),
        json.dumps({"RECORDS": [{"HOST_NAME": "h", "type": "X86_64", "ncpus": "8",
                                 "maxmem": "503,2G"}]}))
    assert host.memory_mb == 515276
