"""Sweep 30 of scheduler outputs: outputs written here in the forms each scheduler documents
(Slurm 20.11-24.05 `squeue`, `squeue --json` of openapi v0.0.40, `sacct -P`, `sinfo`,
`scontrol show node -o`; PBS Pro 2024 `qstat -f -F json` and `pbsnodes -av -F json`; Torque
`qstat -f -x`; LSF 10.1 `bjobs -o -json` and `bhosts -json`; flux-core `flux jobs --json`
and `flux resource list -o`; Grid Engine `qstat -xml` and `qacct -j`), none captured, most
not met by sweeps 1-29: heterogeneous components and a throttled array's pending tasks of
v0.0.40, an infinite limit in its `{set, infinite, number}` form, OUT_OF_MEMORY and
SUSPENDED in squeue, a name holding `|`, NO_VAL nodes, limits of INVALID and UNLIMITED;
sacct's Unknown ends, "None assigned", OOM by signal 125, REVOKED;
sinfo's blocked, mixed-, idle~, powering_up, unknown*, perfctrs and a MIG profile; nodes
of dynamic_norm, not_responding and reserved; PBS arrays begun (B) with a subjob expired
(X), a moved job (M), an exiting one (E), nodes job-busy, resv-exclusive, stale,
wait-provisioning; Torque's W and H with their times and hold types, a name of escaped
accents and 1000 nodes; LSF UNKWN, pending reasons, a year's limit on 120 slots, owner,
memory and run limit kills, bhosts unavail, closed_Full, closed_Cu_excl, closed_RC; flux
CLEANUP, a wait status, urgency 0, ten thousand nodes, exec exceptions, DEPEND; Grid Engine
Rr, t, s, z, Rq, hqw, dr, Rhqw, a million slots, `failed 100` with SIGKILL, `failed 26`.

Each row of OUTPUTS is one output and what a user would read from it; the focused tests
after it are the faults this sweep found (each failed before): an exit status past any
signal was named as one (Grid Engine's exit 255 as "killed by signal 127", PBS's
Exit_status 600 as "killed by signal 344" and exit code 472); now a shell's 128 + N or
PBS's 256 + N is a signal only where N is one (1 to 64), and an Exit_status that is
neither an exit code nor a signal's is said, not read."""

from __future__ import annotations

import json

import pytest
from outputs_helpers import (
    at,
    ended,
    epoch,
    flux,
    lsf,
    node_verdicts,
    pbs,
    qacct,
    qacct_record,
    sge,
    sge_job_xml,
    slurm,
    sweep_output_tests,
    torque,
    wrapped,
)

from diamond_jupyter.dialects.pbs_outcome import finished_state as pbs_ending
from diamond_jupyter.dialects.reasons import scheduler_sentence
from diamond_jupyter.dialects.sge_commands import finished_state as sge_ending
from diamond_jupyter.model import JobState

# -- Slurm ------------------------------------------------------------------------------------

# squeue records of SQUEUE_FIELDS: a heterogeneous job's components (the older `gres:gpu:4`
# per node), limits squeue cannot say (UNLIMITED, INVALID), OUT_OF_MEMORY still listed, a
# suspended array task named with a `|`, NO_VAL nodes of a job not yet placed
SQUEUE = "\n".join([
    "2001+0|RUNNING|2026-12-06T08:00:00|2026-12-06T10:00:00|2026-12-06T07:59:00|2:00:00|1|8|u|"
    "cpu|N/A|c01|None|(null)|1:00:00|het",
    "2001+1|RUNNING|2026-12-06T08:00:00|2026-12-06T10:00:00|2026-12-06T07:59:00|2:00:00|2|128|"
    "u|gpu|gres:gpu:4|g[01-02]|None|(null)|1:00:00|het",
    "2002|PENDING|N/A|N/A|2026-12-06T07:00:00|UNLIMITED|1|8|u|cpu|N/A||Resources|(null)|0:00|"
    "forever",
    "2003|OUT_OF_MEMORY|2026-12-06T05:00:00|2026-12-06T05:10:00|2026-12-06T04:00:00|1:00:00|1|"
    "1|u|cpu|N/A|c03|OutOfMemory|(null)|10:00|oom",
    "2004_17|SUSPENDED|2026-12-06T05:00:00|2026-12-06T08:00:00|2026-12-06T04:00:00|3:00:00|1|4|"
    "u|cpu|N/A|c04|None|(null)|1:30:00|a|b",
    "2005|PENDING|N/A|N/A|2026-12-06T07:00:00|INVALID|1|1|u|cpu|N/A||BadConstraints|(null)|"
    "0:00|bad",
    "2006|PENDING|2027-01-01T00:00:00|N/A|2026-12-06T07:00:00|7-00:00:00|4294967294|1|u|cpu|"
    "N/A||Priority|(null)|0:00|noval",
]) + "\n"

# `squeue --json` of Slurm 23.11 (data_parser v0.0.40): a component under its het job id, an
# infinite limit, a throttled array's pending tasks, SIGTERM's `id`, an end with no start
SQUEUE_JSON_2311 = json.dumps({"meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}},
                               "errors": [], "warnings": [], "jobs": [
    {"job_id": 3101, "job_state": ["RUNNING"], "name": "het", "het_job_id": wrapped(3100),
     "het_job_offset": wrapped(1), "node_count": wrapped(2), "cpus": wrapped(128),
     "time_limit": {"set": True, "infinite": True, "number": 0},
     "start_time": wrapped(epoch(2026, 12, 6, 6)), "tres_per_node": "gres/gpu:a100:2",
     "nodes": "g[01-02]"},
    {"job_id": 3200, "job_state": ["PENDING"], "name": "arr", "array_job_id": wrapped(3200),
     "array_task_id": wrapped(0, set_=False), "array_task_string": "1-1000%10",
     "array_max_tasks": wrapped(10), "node_count": wrapped(1), "cpus": wrapped(1),
     "time_limit": wrapped(30), "state_reason": "JobArrayTaskLimit"},
    {"job_id": 3300, "job_state": ["CANCELLED"], "name": "sig",
     "exit_code": {"status": ["SIGNALED"], "return_code": wrapped(0),
                   "signal": {"id": wrapped(15), "name": "TERM"}},
     "node_count": wrapped(1), "cpus": wrapped(1), "time_limit": wrapped(60),
     "start_time": wrapped(epoch(2026, 12, 6, 6)), "end_time": wrapped(epoch(2026, 12, 6, 6, 5))},
    {"job_id": 3400, "job_state": ["COMPLETED"], "name": "e",
     "exit_code": {"status": ["SUCCESS"], "return_code": wrapped(0)},
     "end_time": wrapped(epoch(2026, 12, 6, 7))},
]})

# `sacct -X -P -n --format=SACCT_FIELDS`: a running job's Unknown end, a throttled array's
# pending tasks on "None assigned", a het component, OOM by a signal 125, a suspended job,
# a federation sibling revoked before it ran
SACCT = "\n".join([
    "4001|RUNNING|0:0|2026-12-06T01:00:00|Unknown|c01|run|4001",
    "4002_[1-5%2]|PENDING|0:0|Unknown|Unknown|None assigned|arr|4002_[1-5%2]",
    "4003+1|COMPLETED|0:0|2026-12-06T01:00:00|2026-12-06T02:00:00|g01|het|4003+1",
    "4004|OUT_OF_MEMORY|0:125|2026-12-06T01:00:00|2026-12-06T01:10:00|c02|oom|4004",
    "4009|SUSPENDED|0:0|2026-12-06T01:00:00|Unknown|c04|s|4009",
    "4010|REVOKED|0:0|None|2026-12-06T01:00:00|None assigned|fed|4010",
]) + "\n"

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'`: states of 22.05-24.05 few sites print
SINFO = "\n".join([
    "b01|blocked|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "b02|mixed-|64|256000|(null)|(null)|cpu*|32/32/0/64|infinite|1",
    "b03|idle~|64|256000|(null)|(null)|cloud|0/64/0/64|infinite|1",
    "b04|powering_up|64|256000|(null)|(null)|cloud|0/0/64/64|infinite|1",
    "b05|unknown*|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "b06|completing|64|256000|gpu:a100_3g.40gb:2|(null)|gpu|64/0/0/64|1-00:00:00|1",
    "b07|perfctrs|64|256000|(null)|(null)|cpu*|64/0/0/64|infinite|1",
    "b08|drained*|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
]) + "\n"

# `scontrol show node -o`: a dynamic GH200 node (aarch64), one not responding, MIG slices on a
# node in a reservation
SCONTROL = "\n".join([
    "NodeName=d01 Arch=aarch64 CoresPerSocket=72 CPUAlloc=0 CPUEfctv=72 CPUTot=72 CPULoad=0.00 "
    "AvailableFeatures=gh200 ActiveFeatures=gh200 Gres=gpu:gh200:1 NodeAddr=d01 NodeHostName=d01 "
    "RealMemory=491520 AllocMem=0 FreeMem=480000 Sockets=1 Boards=1 State=IDLE+DYNAMIC_NORM "
    "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=gh",
    "NodeName=d02 CoresPerSocket=32 CPUAlloc=0 CPUEfctv=64 CPUTot=64 CPULoad=N/A "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=d02 NodeHostName=d02 "
    "RealMemory=256000 AllocMem=0 FreeMem=N/A Sockets=2 Boards=1 State=DOWN+NOT_RESPONDING "
    "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=cpu "
    "Reason=Not responding [slurm@2026-12-06T04:00:00]",
    "NodeName=d03 CoresPerSocket=32 CPUAlloc=16 CPUEfctv=64 CPUTot=64 CPULoad=15.00 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:a100_3g.40gb:4 "
    "GresUsed=gpu:a100_3g.40gb:1(IDX:0) NodeAddr=d03 NodeHostName=d03 RealMemory=256000 "
    "AllocMem=64000 FreeMem=100000 Sockets=2 Boards=1 State=MIXED+RESERVED ThreadsPerCore=1 "
    "TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=gpu",
])

# -- PBS Pro and Torque -----------------------------------------------------------------------

PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2024.1.0", "pbs_server": "s", "Jobs": {
    "90[].s": {"Job_Name": "arr", "job_state": "B", "array_indices_submitted": "0-99999:1",
               "array_state_count": "Queued:99000 Running:990 Exiting:0 Expired:10",
               "Resource_List": {"ncpus": 1, "walltime": "00:10:00"}},
    "90[7].s": {"Job_Name": "arr", "job_state": "X", "Exit_status": 0},
    "91.s": {"Job_Name": "mv", "job_state": "M", "queue": "remote@other"},
    "92.s": {"Job_Name": "exiting", "job_state": "E", "Exit_status": 271,
             "stime": "Sun Dec  6 08:00:00 2026"},
    "93.s": {"Job_Name": "ab" * 40, "job_state": "F", "Exit_status": -29},
    "94.s": {"Job_Name": "neg", "job_state": "F", "Exit_status": -3},
}})

# `pbsnodes -av -F json` of PBS Pro 2024: busy, reserved, stale, provisioning, and an offline
# node whose comment holds a dash and a Greek letter
PBSNODES = json.dumps({"pbs_version": "2024.1.0", "pbs_server": "s", "nodes": {
    "w001": {"Mom": "w001", "state": "job-busy", "pcpus": 128,
             "resources_available": {"host": "w001", "ncpus": 128, "mem": "515000mb"},
             "resources_assigned": {"ncpus": 128, "mem": "500000mb"}, "jobs": ["1.s/0"]},
    "w002": {"Mom": "w002", "state": "resv-exclusive", "pcpus": 128,
             "resources_available": {"host": "w002", "ncpus": 128, "mem": "515000mb"}},
    "w003": {"Mom": "w003", "state": "stale", "pcpus": 0,
             "resources_available": {"host": "w003"}},
    "w004": {"Mom": "w004", "state": "wait-provisioning", "pcpus": 64,
             "resources_available": {"host": "w004", "ncpus": 64, "mem": "256gb", "ngpus": 4,
                                     "gpu_model": "h100"}},
    "w005": {"Mom": "w005", "state": "offline,job-exclusive", "pcpus": 64,
             "comment": "ECC errors — Ω", "resources_available": {"host": "w005", "ncpus": 64,
                                                                  "mem": "1tb"},
             "resources_assigned": {"ncpus": 64}},
}})

# Torque `qstat -f -x`: SIGTERM (271), a wait for its start, a system hold, an exiting job, a
# name of escaped accents on 1000 nodes with a 30-day limit
TORQUE_XML = (
    '<?xml version="1.0"?>\n<Data>'
    "<Job><Job_Id>1001.t</Job_Id><Job_Name>sig15</Job_Name><job_state>C</job_state>"
    "<exit_status>271</exit_status></Job>"
    "<Job><Job_Id>1002.t</Job_Id><Job_Name>w</Job_Name><job_state>W</job_state>"
    f"<Execution_Time>{epoch(2026, 12, 7, 6)}</Execution_Time></Job>"
    "<Job><Job_Id>1003.t</Job_Id><Job_Name>h</Job_Name><job_state>H</job_state>"
    "<Hold_Types>s</Hold_Types></Job>"
    "<Job><Job_Id>1004.t</Job_Id><Job_Name>e</Job_Name><job_state>E</job_state>"
    "<exit_status>0</exit_status></Job>"
    "<Job><Job_Id>1007.t</Job_Id><Job_Name>Caf&#233; &amp; cr&#232;me</Job_Name>"
    "<job_state>R</job_state><Resource_List><walltime>720:00:00</walltime>"
    "<nodect>1000</nodect></Resource_List><exec_host>n1/0-63+n2/0-63</exec_host></Job>"
    "</Data>")

# -- LSF --------------------------------------------------------------------------------------

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 9, "RECORDS": [
    {"JOBID": "7001", "STAT": "UNKWN", "JOB_NAME": "lost", "EXEC_HOST": "h9"},
    {"JOBID": "7002", "STAT": "PEND", "JOB_NAME": "arr[1-1000]%10",
     "PEND_REASON": "Job's requirements for reserving resource (mem) not satisfied;"},
    {"JOBID": "7003", "STAT": "RUN", "JOB_NAME": "wide", "EXEC_HOST": "40*h1:40*h2:40*h3",
     "SLOTS": "120", "RUNTIMELIMIT": "525600.0 min", "START_TIME": "Dec  6 08:00"},
    {"JOBID": "7004", "STAT": "EXIT", "JOB_NAME": "sig", "EXIT_CODE": "130",
     "EXIT_REASON": "TERM_OWNER: job killed by owner"},
    {"JOBID": "7006", "STAT": "EXIT", "JOB_NAME": "mem", "EXIT_CODE": "",
     "EXIT_REASON": "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit"},
    {"JOBID": "7007", "STAT": "RUN", "JOB_NAME": "x", "EXEC_HOST": "", "SLOTS": "-"},
    {"JOBID": "7008", "STAT": "EXIT", "JOB_NAME": "rl", "EXIT_CODE": "140",
     "EXIT_REASON": "TERM_RUNLIMIT: job killed after reaching LSF run time limit"},
]})

# `bhosts -json`: a host whose LIM is gone (no slots known), a full one, one closed for another
# job's compute-unit exclusivity, one the resource connector is giving back
BHOSTS = json.dumps({"COMMAND": "bhosts", "HOSTS": 4, "RECORDS": [
    {"HOST_NAME": "h1", "STATUS": "unavail", "MAX": "-", "NJOBS": "-", "RUN": "-"},
    {"HOST_NAME": "h4", "STATUS": "closed_Full", "MAX": "64", "NJOBS": "64", "RUN": "64"},
    {"HOST_NAME": "h7", "STATUS": "closed_Cu_excl", "MAX": "64", "NJOBS": "0", "RUN": "0"},
    {"HOST_NAME": "h8", "STATUS": "closed_RC", "MAX": "64", "NJOBS": "0", "RUN": "0"},
]})

# -- Flux -------------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 5001, "state": "CLEANUP", "result": "CANCELED", "name": "c",
     "t_run": epoch(2026, 12, 6, 6),
     "exception": {"occurred": True, "severity": 0, "type": "cancel", "note": ""}},
    {"id": 5002, "state": "INACTIVE", "result": "FAILED", "waitstatus": 256, "returncode": 1,
     "name": "😀 run", "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 7)},
    {"id": 5003, "state": "SCHED", "urgency": 0, "name": "held", "duration": 0.0},
    {"id": 5004, "state": "RUN", "name": "big", "nnodes": 10000, "ntasks": 1000000,
     "ncores": 1000000, "duration": 31536000.0, "t_run": epoch(2026, 12, 6, 6),
     "nodelist": "n[0-9999]"},
    {"id": 5005, "state": "INACTIVE", "result": "FAILED", "name": "noexec", "returncode": 127,
     "exception": {"occurred": True, "severity": 0, "type": "exec",
                   "note": "task 0: start failed: ./a: No such file or directory"}},
    {"id": 5006, "state": "DEPEND", "name": "dep", "dependencies": ["afterok:ƒ2ZxHGm"]},
]})

# `flux resource list -n -o RESOURCE_FORMAT`: a thousand MI300A nodes, a down list of singles
FLUX_RESOURCES = "\n".join([
    "free|amd,mi300a|1000|96000|4000|t[0001-1000]", "allocated||2|192|8|t[1001-1002]",
    "down|amd|3|288|12|t[1003,1005,1007]", "free||1|0|0|login1", ""])

# -- Grid Engine ------------------------------------------------------------------------------

# `qstat -xml`: restarted, transferring, suspended, zombie; a task of a million slots; waiting
# rescheduled, held, being deleted, held after a restart
QSTAT_XML = (
    "<?xml version='1.0'?>\n<job_info><queue_info>"
    + sge_job_xml(1, "Rr", "restarted", queue="all.q@n1")
    + sge_job_xml(2, "t", "transfer", queue="all.q@n2")
    + sge_job_xml(3, "s", "susp", queue="all.q@n3")
    + sge_job_xml(4, "z", "zombie", queue="all.q@n4")
    + sge_job_xml(5, "r", "big", slots=1000000, queue="all.q@n5", tasks="7")
    + sge_job_xml(8, "dr", "del", queue="all.q@n6")
    + "</queue_info><job_info>" + sge_job_xml(6, "Rq", "resched") + sge_job_xml(7, "hqw", "hold")
    + sge_job_xml(9, "Rhqw", "rh") + "</job_info></job_info>")


def acct(number: int, name: str, *rest: str) -> list[str]:
    """A qacct record of a job that ran from 08:00 to 09:00."""
    return qacct_record(number, name, "Sun Dec  6 07:00:00 2026", "Sun Dec  6 08:00:00 2026",
                        "Sun Dec  6 09:00:00 2026", *rest)


# `qacct -j`: a kill after the job began (h_rt enforced by execd: failed 100, SIGKILL), an
# output file that could not be opened (failed 26), exit 255 (no signal: 127 is none)
QACCT = qacct(
    acct(11, "after", "failed       100 : assumedly after job", "exit_status  137"),
    acct(13, "ckpt", "failed       26   : opening input/output file", "exit_status  0"),
    acct(12, "e255", "failed       0", "exit_status  255"))


def statuses(rows) -> list[tuple]:
    return [(j.native_id, j.state.value, j.name, j.nodes, j.cpus, j.walltime_s, j.reason)
            for j in rows]


OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm
    ("squeue: het components apart, 4 GPUs a node of the older gres form on 2 nodes",
     lambda: [(j.native_id, j.partition, j.nodes, j.cpus, j.gpus, j.node_list)
              for j in slurm.parse_status(SQUEUE, [])][:2],
     [("2001+0", "cpu", 1, 8, None, "c01"), ("2001+1", "gpu", 2, 128, 8, "g[01-02]")]),
    ("squeue: UNLIMITED and INVALID limits are none; NO_VAL nodes unknown; a planned start",
     lambda: [(j.native_id, j.walltime_s, j.nodes, j.estimated_start)
              for j in slurm.parse_status(SQUEUE, []) if j.state.value == "PENDING"],
     [("2002", None, 1, None), ("2005", None, 1, None),
      ("2006", 7 * 86400, None, at(2027, 1, 1))]),
    ("squeue: OUT_OF_MEMORY said; a suspended array task named 'a|b' still holds its node",
     lambda: [(j.native_id, j.state.value, j.name, j.reason, j.time_used_s)
              for j in slurm.parse_status(SQUEUE, [])][3:5],
     [("2003", "FAILED", "oom",
       "out of memory: the job used more than the memory it was given (OutOfMemory)", 600),
      ("2004_17", "RUNNING", "a|b", None, 5400)]),
    ("squeue --json v0.0.40: a component under its het id; infinite is no limit; 2 A100s a node",
     lambda: [(j.native_id, j.state.value, j.nodes, j.cpus, j.gpus, j.walltime_s)
              for j in slurm.parse_status_json(SQUEUE_JSON_2311, [])][0],
     ("3100+1", "RUNNING", 2, 128, 4, None)),
    ("squeue --json v0.0.40: a throttled array waits as one; SIGTERM's id is 143; no start",
     lambda: ended(slurm.parse_status_json(SQUEUE_JSON_2311, []))[1:]
     + [(j.started_at, j.ended_at) for j in slurm.parse_status_json(SQUEUE_JSON_2311, [])][3:],
     [("3200_[1-1000%10]", "PENDING", None, "JobArrayTaskLimit"),
      ("3300", "CANCELLED", 143, None), ("3400", "COMPLETED", 0, None),
      (None, at(2026, 12, 6, 7))]),
    ("sacct: Unknown ends are none; 'None assigned' is no node list; a het component ends",
     lambda: [(j.native_id, j.state.value, j.ended_at, j.node_list, j.exit_code)
              for j in slurm.parse_accounting(SACCT, [])][:3],
     [("4001", "RUNNING", None, "c01", None), ("4002_[1-5%2]", "PENDING", None, None, None),
      ("4003+1", "COMPLETED", at(2026, 12, 6, 2), "g01", 0)]),
    ("sacct: OUT_OF_MEMORY said with no exit code; SUSPENDED holds on; REVOKED never ran",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.reason, j.started_at)
              for j in slurm.parse_accounting(SACCT, [])][3:],
     [("4004", "FAILED", None, "out of memory: the job used more than the memory it was given",
       at(2026, 12, 6, 1)), ("4009", "RUNNING", None, None, at(2026, 12, 6, 1)),
      ("4010", "CANCELLED", 0, None, None)]),
    ("sinfo: blocked, mixed-, completing and perfctrs take jobs; unknown* and drained* none; "
     "idle~ and powering_up return",
     lambda: [(n.state, node_verdicts(n.state)) for n in slurm.parse_sinfo_nodes(SINFO, [])],
     [("blocked", (True, None)), ("mixed-", (True, None)), ("idle~", (True, (60.0, False))),
      ("powering_up", (True, (60.0, False))), ("unknown*", (False, None)),
      ("completing", (True, None)), ("perfctrs", (True, None)), ("drained*", (False, None))]),
    ("sinfo: a MIG profile of a digit first is a GPU type; 64 of 64 CPUs in use",
     lambda: [(n.gpus, n.gpu_type, n.cpus_allocated)
              for n in slurm.parse_sinfo_nodes(SINFO, [])][5],
     (2, "a100_3g.40gb", 64)),
    ("scontrol node: a dynamic GH200 node takes jobs; not responding and reserved ones do not",
     lambda: [(n.name, n.state, n.cpus, n.gpus, n.gpu_type, n.reason, node_verdicts(n.state)[0])
              for n in slurm.parse_nodes(SCONTROL, [])],
     [("d01", "idle+dynamic_norm", 72, 1, "gh200", None, True),
      ("d02", "down+not_responding", 64, 0, None, "Not responding", False),
      ("d03", "mixed+reserved", 64, 4, "a100_3g.40gb", None, False)]),
    # PBS Pro
    ("qstat -F json: a begun array of 100000 runs, its expired subjob done; M unknown; E runs",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.partition)
              for j in pbs.parse_status(PBS_JOBS, [])][:4]
     + [dict(pbs.parse_status(PBS_JOBS, [])[0].tasks)],
     [("90[].s", "RUNNING", 600, None), ("90[7].s", "COMPLETED", None, None),
      ("91.s", "UNKNOWN", None, "remote@other"), ("92.s", "RUNNING", None, None),
      {"7": pbs.parse_status(PBS_JOBS, [])[1].state}]),
    ("qstat -F json: -29 a walltime kill of an 80-letter name; -3 never ran",
     lambda: [(len(j.name or ""), *e) for j, e in zip(
         pbs.parse_status(PBS_JOBS, [])[4:], ended(pbs.parse_status(PBS_JOBS, []))[4:],
         strict=True)],
     [(80, "93.s", "TIMEOUT", -29, "killed by PBS: walltime exceeded"),
      (3, "94.s", "FAILED", -3, "job never ran (Exit_status -3)")]),
    ("pbsnodes json: job-busy full; resv-exclusive, stale, provisioning; offline's comment",
     lambda: [(n.name, n.cpus, n.memory_mb, n.gpus, n.gpu_type, n.cpus_allocated, n.reason)
              for n in pbs.parse_nodes(PBSNODES, [])],
     [("w001", 128, 515000, 0, None, 128, None), ("w002", 128, 515000, 0, None, 0, None),
      ("w003", 0, 0, 0, None, 0, None), ("w004", 64, 262144, 4, "h100", 0, None),
      ("w005", 64, 1048576, 0, None, 64, "ECC errors — Ω")]),
    # Torque
    ("Torque XML: 271 is SIGTERM; W waits for its time; H held by the system; E still runs",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.reason, j.estimated_start)
              for j in torque.parse_status(TORQUE_XML, [])][:4],
     [("1001.t", "FAILED", 143, "killed by signal 15", None),
      ("1002.t", "PENDING", None, "waiting for its start time (qsub -a)", at(2026, 12, 7, 6)),
      ("1003.t", "PENDING", None, "held (s)", None), ("1004.t", "RUNNING", None, None, None)]),
    ("Torque XML: escaped accents in a name; 1000 nodes; a 30-day limit",
     lambda: statuses(torque.parse_status(TORQUE_XML, []))[4],
     ("1007.t", "RUNNING", "Café & crème", 1000, None, 720 * 3600, None)),
    # LSF
    ("bjobs -json: UNKWN unknown on its host; a pending reason kept; a year's limit on 120 slots",
     lambda: statuses(lsf.parse_status(BJOBS, []))[:3],
     [("7001", "UNKNOWN", "lost", 1, None, None, None),
      ("7002", "PENDING", "arr[1-1000]%10", None, None, None,
       "Job's requirements for reserving resource (mem) not satisfied;"),
      ("7003", "RUNNING", "wide", 3, 120, 525600 * 60, None)]),
    ("bjobs -json: the owner's kill is a cancel; memory and run limit kills; '-' slots unknown",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.cpus)
              for j in lsf.parse_status(BJOBS, [])][3:],
     [("7004", "CANCELLED", 130, None), ("7006", "FAILED", None, None),
      ("7007", "RUNNING", None, None), ("7008", "TIMEOUT", 140, None)]),
    ("bhosts -json: unavail takes none; closed_Full, closed_Cu_excl and closed_RC return",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, node_verdicts(n.state)[0])
              for n in lsf.parse_hosts(BHOSTS, "", [])],
     [("h1", "unavail", 0, 0, False), ("h4", "closed_full", 64, 64, True),
      ("h7", "closed_cu_excl", 64, 64, True), ("h8", "closed_rc", 64, 64, True)]),
    # Flux
    ("flux jobs: CLEANUP of a cancel; wait status 256 is exit 1 of an emoji name; urgency 0 held",
     lambda: [(j.native_id, j.state.value, j.name, j.exit_code, j.reason)
              for j in flux.parse_status(FLUX_JOBS, [])][:3],
     [("5001", "CANCELLED", "c", None, "ending (cleanup): cancel"),
      ("5002", "FAILED", "😀 run", 1, None),
      ("5003", "PENDING", "held", None, "held (urgency 0)")]),
    ("flux jobs: ten thousand nodes for a year; an exec failure said; DEPEND names its wait",
     lambda: statuses(flux.parse_status(FLUX_JOBS, []))[3:],
     [("5004", "RUNNING", "big", 10000, 1000000, 31536000, None),
      ("5005", "FAILED", "noexec", None, None, None,
       "exec: task 0: start failed: ./a: No such file or directory"),
      ("5006", "PENDING", "dep", None, None, None, "dependency: afterok:ƒ2ZxHGm")]),
    ("flux resource list: a thousand nodes of 96 cores and 4 GPUs; a down list of singles",
     lambda: (len(nodes := flux.parse_resources(FLUX_RESOURCES, [])),
              [(n.name, n.state, n.cpus, n.gpus, n.features) for n in nodes[999:]]),
     (1006, [("t1000", "free", 96, 4, ["amd", "mi300a"]), ("t1001", "allocated", 96, 4, []),
             ("t1002", "allocated", 96, 4, []), ("t1003", "down", 96, 4, ["amd"]),
             ("t1005", "down", 96, 4, ["amd"]), ("t1007", "down", 96, 4, ["amd"]),
             ("login1", "free", 0, 0, [])])),
    # Grid Engine
    ("qstat -xml: Rr and t run; s suspended; z unknown; dr being deleted",
     lambda: [(j.native_id, j.state.value, j.reason, j.node_list)
              for j in sge.parse_status(QSTAT_XML, [])][:6],
     [("1", "RUNNING", None, "n1"), ("2", "RUNNING", None, "n2"),
      ("3", "RUNNING", "suspended (s)", "n3"), ("4", "UNKNOWN", None, "n4"),
      ("5.7", "RUNNING", None, "n5"), ("8", "RUNNING", "being deleted", "n6")]),
    ("qstat -xml: a million slots; Rq waits; hqw and Rhqw held",
     lambda: [(j.native_id, j.state.value, j.cpus, j.reason)
              for j in sge.parse_status(QSTAT_XML, [])][4:5]
     + [(j.native_id, j.state.value, j.cpus, j.reason)
        for j in sge.parse_status(QSTAT_XML, [])][6:],
     [("5.7", "RUNNING", 1000000, None), ("6", "PENDING", 1, None),
      ("7", "PENDING", 1, "held (hqw)"), ("9", "PENDING", 1, "held (Rhqw)")]),
    ("qacct -j: failed 100 with 137 is SIGKILL; failed 26 never ran its script",
     lambda: ended(sge.parse_accounting(QACCT, []))[:2],
     [("11", "FAILED", 137, "killed by signal 9"),
      ("13", "FAILED", None, "Grid Engine failed the job (26: opening input/output file)")]),
]


test_output_read, test_the_sweep_has_twenty_outputs = sweep_output_tests(OUTPUTS)


# -- faults this sweep found ------------------------------------------------------------------

def test_a_grid_engine_exit_past_any_signal_is_an_exit_code() -> None:
    """Before: qacct's `exit_status 255` (a job's `exit -1`) read as "killed by signal 127",
    a signal Linux does not have."""
    [e255] = ended(sge.parse_accounting(QACCT, []))[2:]
    assert e255 == ("12", "FAILED", 255, "exit code 255")


@pytest.mark.parametrize(("exit_status", "said"), [
    (129, "killed by signal 1"), (192, "killed by signal 64"), (193, "exit code 193"),
    (255, "exit code 255")])
def test_grid_engine_signals_end_at_sigrtmax(exit_status: int, said: str) -> None:
    assert sge_ending("0", exit_status) == (JobState.FAILED, exit_status, said)


@pytest.mark.parametrize("flavor", ["pro", "torque"])
def test_a_pbs_exit_status_past_any_signal_is_said_not_read(flavor: str) -> None:
    """Before: Exit_status 600 read as "killed by signal 344" with an exit code of 472;
    now neither is guessed and the reason says why."""
    said = ("Exit_status 600 not read: above 256 it is 256 + the signal that killed the job, "
            "and 344 is no signal")
    assert pbs_ending(600, None, None, None, torque=flavor == "torque") == (
        JobState.FAILED, None, said)
    assert pbs_ending(600, 91, None, None) == (JobState.CANCELLED, None,
                                               f"deleted (qdel); {said}")
    xml = ("<Data><Job><Job_Id>1006.t</Job_Id><Job_Name>nsig</Job_Name><job_state>C"
           "</job_state><exit_status>600</exit_status></Job></Data>")
    reader = torque if flavor == "torque" else pbs
    assert ended(reader.parse_torque_xml(xml, [])) == [("1006.t", "FAILED", None, said)]


@pytest.mark.parametrize(("exit_status", "code", "said"), [
    (257, 129, "killed by signal 1"), (320, 192, "killed by signal 64"),
    (271, 143, "killed by signal 15")])
def test_pbs_signals_up_to_sigrtmax_are_still_read(exit_status: int, code: int, said: str
                                                   ) -> None:
    assert pbs_ending(exit_status, None, None, None) == (JobState.FAILED, code, said)
    assert pbs_ending(exit_status, 91, None, None) == (JobState.CANCELLED, code,
                                                       "deleted (qdel)")


def test_the_new_pbs_wording_is_the_dialects_own() -> None:
    """A reason the reader writes reaches the model as the scheduler's (reasons.py)."""
    _, _, said = pbs_ending(600, None, None, None)
    assert said is not None and scheduler_sentence(said)
    _, _, deleted = pbs_ending(600, 91, None, None)
    assert deleted is not None and scheduler_sentence(deleted)
