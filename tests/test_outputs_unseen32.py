"""Sweep 32 of scheduler outputs: outputs written here in the forms each scheduler documents
(Slurm 20.11-24.05 `squeue`, `squeue --json` of openapi v0.0.38 and data_parser v0.0.40,
`sacct -P`, `sinfo`, `scontrol show node -o`; PBS Pro 2024 `qstat -f -F json -x`; Torque
`qstat -f -x`; LSF 10.1 `bjobs -o -json`; flux-core `flux jobs --json`; Grid Engine `qstat
-xml` and `qacct -j`), none captured, most not met by sweeps 1-31: squeue's CONFIGURING,
RESIZING, STOPPED with an UNLIMITED limit, REVOKED, RESV_DEL_HOLD, a week over the QOS
limit, two GPU types of a job on four nodes with its start estimate, SUSPENDED; sacct's
OUT_OF_MEMORY with 0:125, REQUEUED, a cancel by root with SIGKILL (0:9), an array task and a
het job component, a job still running, a cancel before the start; v0.0.38's plain numbers
with an infinite limit; v0.0.40's infinite limit, NODE_FAIL and an array task's id; sinfo's
idle#, drained*, blocked, reserved, mixed- of typed GPUs, completing, idle~ and perfctrs; a
Grace-Hopper node with specialized cores not responding, a MIG node of two GPU profiles;
PBS Pro Exit_status -3 and 271, an array begun (B) and an expired subjob (X), exiting,
moved (M), a waiting job's estimate; Torque E, W with an epoch start, H, 271, -1 and an
array task; LSF PSUSP, TERM_OWNER 130, TERM_RUNLIMIT, TERM_MEMLIMIT, an array element
done, 9 slots over three hosts with a normalized limit; flux SCHED, DEPEND, CLEANUP, a
cancel, an alloc exception that never ran, a four-node success; Grid Engine t, s, S, T, dr,
a running task, a held job, a stepped waiting range; qacct's failed 19, 100 and 26, a
requeued run.

Each row of OUTPUTS is one output and what a user would read from it. What the sweep found
(each test below the table failed before): Grid Engine's record of a run it requeued
(`failed 25 : rescheduling`, or the job's own exit status 99) read as the job failed, and
spoke over the record of the run that followed, so a job that then succeeded was reported
failed; now that record reads as the job waiting again, and gives way to any later one. And
PBS Pro's M (moved to another server) read as unknown with no word why; now said.
"""

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

from diamond_jupyter.dialects.sge_commands import finished_state

# squeue (Slurm 20.11-24.05): states met in clouds, federations and reservations
SQUEUE = "\n".join([
    "6101|CONFIGURING|2026-12-06T08:59:00|2026-12-06T10:59:00|2026-12-06T08:00:00|2:00:00|2|"
    "16|u|cloud|N/A|cl[1-2]|None|(null)|0:45|boot",
    "6102|RESIZING|2026-12-06T08:00:00|2026-12-06T09:00:00|2026-12-06T07:00:00|1:00:00|1|8|u|"
    "cpu|N/A|c1|None|(null)|1:00|grow",
    "6103|STOPPED|2026-12-06T08:00:00|Unknown|2026-12-06T07:00:00|UNLIMITED|1|1|u|cpu|N/A|c2|"
    "None|(null)|10:00|stop",
    "6104|REVOKED|N/A|N/A|2026-12-06T07:00:00|1:00:00|1|1|u|cpu|N/A||None|(null)|0:00|fed",
    "6105|RESV_DEL_HOLD|N/A|N/A|2026-12-06T07:00:00|1:00:00|1|1|u|cpu|N/A||ResvDeleted|"
    "(null)|0:00|rdh",
    "6106|PENDING|N/A|N/A|2026-12-06T07:00:00|7-00:00:00|1|1|u|cpu|N/A||"
    "QOSMaxWallDurationPerJobLimit|(null)|0:00|week",
    "6107|PENDING|2026-12-07T01:02:03|N/A|2026-12-06T07:00:00|30:00|4|256|u|cpu|"
    "gres/gpu:a100:2,gres/gpu:v100:1|(null)|ReqNodeNotAvail, UnavailableNodes:c[01-02]|"
    "(null)|0:00|mixgpu",
    "6108|SUSPENDED|2026-12-06T08:00:00|2026-12-06T10:00:00|2026-12-06T07:00:00|2:00:00|1|4|"
    "u|cpu|N/A|c3|None|(null)|5:00|susp",
]) + "\n"

# `sacct -X -P -n --format=SACCT_FIELDS`
SACCT = "\n".join([
    "7101|OUT_OF_MEMORY|0:125|2026-12-06T01:00:00|2026-12-06T01:05:00|c01|oom|7101",
    "7102|REQUEUED|0:0|2026-12-06T01:00:00|2026-12-06T01:05:00|c02|rq|7102",
    "7103|CANCELLED by 0|0:9|2026-12-06T01:00:00|2026-12-06T01:30:00|c03|root|7103",
    "7104_4|COMPLETED|0:0|2026-12-06T01:00:00|2026-12-06T01:10:00|c04|arr|7104_4",
    "7105+1|FAILED|3:0|2026-12-06T01:00:00|2026-12-06T01:10:00|c05|het|7105+1",
    "7106|RUNNING|0:0|2026-12-06T01:00:00|Unknown|c06|run|7106",
    "7107|CANCELLED|0:0|None|2026-12-06T01:00:00|None assigned|never|7107",
]) + "\n"

INFINITE = 4294967295  # Slurm's INFINITE of a 32-bit field, as openapi v0.0.38 prints it
# `squeue --json` of Slurm 22.05 (openapi v0.0.38): plain numbers, a per-node gres
SQUEUE_JSON_2205 = json.dumps({"meta": {"plugin": {"type": "openapi/v0.0.38"}}, "errors": [],
                               "jobs": [
    {"job_id": 8101, "job_state": "RUNNING", "name": "old", "node_count": 2, "cpus": 64,
     "time_limit": 60, "start_time": epoch(2026, 12, 6, 8), "end_time": epoch(2026, 12, 6, 9),
     "nodes": "c[1-2]", "partition": "cpu", "tres_per_node": "gpu:2"},
    {"job_id": 8102, "job_state": "PENDING", "name": "oldp", "node_count": 1, "cpus": 1,
     "time_limit": INFINITE, "start_time": 0, "state_reason": "Dependency"},
    {"job_id": 8103, "job_state": "TIMEOUT", "name": "oldt", "exit_code": 0,
     "start_time": epoch(2026, 12, 6, 7), "end_time": epoch(2026, 12, 6, 8), "time_limit": 60},
]})

# `squeue --json` of Slurm 23.11 (data_parser v0.0.40): an infinite limit, a node failure
# without an exit code, an array task named by its array's id and index
SQUEUE_JSON_2311 = json.dumps({"meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}},
                               "errors": [], "warnings": [], "jobs": [
    {"job_id": 8201, "job_state": ["PENDING"], "name": "inf",
     "time_limit": wrapped(0, set_=False, infinite=True), "node_count": wrapped(1),
     "cpus": wrapped(1), "state_reason": "Resources",
     "start_time": wrapped(epoch(2026, 12, 6, 12))},
    {"job_id": 8202, "job_state": ["NODE_FAIL"], "name": "nf",
     "start_time": wrapped(epoch(2026, 12, 6, 7)), "end_time": wrapped(epoch(2026, 12, 6, 7, 10))},
    {"job_id": 8203, "array_job_id": wrapped(8200), "array_task_id": wrapped(3),
     "job_state": ["COMPLETED"], "name": "at",
     "exit_code": {"status": ["SUCCESS"], "return_code": wrapped(0)},
     "start_time": wrapped(epoch(2026, 12, 6, 7)), "end_time": wrapped(epoch(2026, 12, 6, 7, 10))},
]})

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'`
SINFO = "\n".join([
    "q01|idle#|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "q02|drained*|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "q03|blocked|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "q04|reserved|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "q05|mixed-|64|256000|gpu:a100:4(S:0-1)|a100|gpu|32/32/0/64|2-00:00:00|1",
    "q06|completing|64|256000|(null)|(null)|cpu*|64/0/0/64|infinite|1",
    "q07|idle~|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "q08|perfctrs|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
]) + "\n"

# `scontrol show node -o`: a Grace-Hopper node with two specialized cores, not responding;
# a node of two MIG profiles, one slice in use, planned for a waiting job
SCONTROL = "\n".join([
    "NodeName=g01 Arch=aarch64 CoresPerSocket=72 CPUAlloc=0 CPUEfctv=142 CPUTot=144 "
    "CPULoad=0.00 AvailableFeatures=gh200 ActiveFeatures=gh200 Gres=gpu:gh200:1 NodeAddr=g01 "
    "NodeHostName=g01 RealMemory=480000 AllocMem=0 FreeMem=470000 Sockets=1 Boards=1 "
    "CoreSpecCount=2 CPUSpecList=0-1 State=DOWN+NOT_RESPONDING ThreadsPerCore=1 TmpDisk=0 "
    "Weight=1 Owner=N/A MCS_label=N/A Partitions=gh "
    "Reason=Not responding [slurm@2026-12-06T02:00:00]",
    "NodeName=m01 CoresPerSocket=32 CPUAlloc=16 CPUEfctv=64 CPUTot=64 CPULoad=15.00 "
    "AvailableFeatures=(null) ActiveFeatures=(null) "
    "Gres=gpu:a100_3g.40gb:2,gpu:a100_1g.10gb:1 NodeAddr=m01 NodeHostName=m01 "
    "RealMemory=512000 AllocMem=64000 FreeMem=400000 Sockets=2 Boards=1 State=MIXED+PLANNED "
    "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=mig "
    "GresUsed=gpu:a100_3g.40gb:1(IDX:0),gpu:a100_1g.10gb:0",
])

# `qstat -f -F json -x` of PBS Pro 2024: a retry (-3), SIGTERM (256 + 15), an array begun and
# a subjob expired, exiting, moved, a waiting job's estimate beside its comment
PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2024.1.0", "pbs_server": "s", "Jobs": {
    "400.s": {"Job_Name": "retry", "job_state": "F", "Exit_status": -3,
              "stime": "Sun Dec  6 07:00:00 2026"},
    "401.s": {"Job_Name": "term", "job_state": "F", "Exit_status": 271,
              "stime": "Sun Dec  6 07:00:00 2026", "obittime": "Sun Dec  6 07:30:00 2026",
              "exec_host": "n1/0*4+n2/0*4", "Resource_List": {
                  "select": "2:ncpus=4", "walltime": "01:00:00", "nodect": 2, "ncpus": 8}},
    "402[].s": {"Job_Name": "arr", "job_state": "B", "array": "True",
                "array_indices_submitted": "1-10",
                "Resource_List": {"ncpus": 1, "nodect": 1, "walltime": "00:10:00"}},
    "402[3].s": {"Job_Name": "arr", "job_state": "X", "Exit_status": 0},
    "403.s": {"Job_Name": "exiting", "job_state": "E", "exec_host": "n3/0"},
    "404.s": {"Job_Name": "moved", "job_state": "M"},
    "405.s": {"Job_Name": "waitq", "job_state": "Q",
              "comment": "Not Running: Insufficient amount of resource: ngpus (R: 4 A: 2 T: 8)",
              "estimated": {"start_time": "Mon Dec  7 02:00:00 2026"}},
}})

# Torque `qstat -f -x`: exiting, waiting for an epoch start, user-held, SIGTERM (271), a
# failed start (-1), an array task on two slots of one node
TORQUE_XML = (
    '<?xml version="1.0"?>\n<Data>'
    "<Job><Job_Id>3001.t</Job_Id><Job_Name>exiting</Job_Name><job_state>E</job_state>"
    "<exec_host>n1/0-3</exec_host></Job>"
    "<Job><Job_Id>3002.t</Job_Id><Job_Name>wait</Job_Name><job_state>W</job_state>"
    f"<Execution_Time>{epoch(2026, 12, 7, 9)}</Execution_Time></Job>"
    "<Job><Job_Id>3003.t</Job_Id><Job_Name>held</Job_Name><job_state>H</job_state>"
    "<Hold_Types>u</Hold_Types></Job>"
    "<Job><Job_Id>3004.t</Job_Id><Job_Name>sigterm</Job_Name><job_state>C</job_state>"
    "<exit_status>271</exit_status></Job>"
    "<Job><Job_Id>3005.t</Job_Id><Job_Name>fail1</Job_Name><job_state>C</job_state>"
    "<exit_status>-1</exit_status></Job>"
    "<Job><Job_Id>3006[2].t</Job_Id><Job_Name>ta-2</Job_Name><job_state>R</job_state>"
    "<exec_host>n4/0+n4/1</exec_host><Resource_List><nodes>1:ppn=2</nodes>"
    "<walltime>01:00:00</walltime></Resource_List></Job>"
    "</Data>")

# `bjobs -o BJOBS_FIELDS -json`
BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 7, "RECORDS": [
    {"JOBID": "9101", "STAT": "PSUSP", "JOB_NAME": "uhold",
     "PEND_REASON": "The job was suspended by the user while pending;"},
    {"JOBID": "9102", "STAT": "EXIT", "JOB_NAME": "ctrlc", "EXIT_CODE": "130",
     "EXIT_REASON": "TERM_OWNER: job killed by owner"},
    {"JOBID": "9103", "STAT": "EXIT", "JOB_NAME": "rl", "EXIT_CODE": "140",
     "EXIT_REASON": "TERM_RUNLIMIT: job killed after reaching LSF run time limit"},
    {"JOBID": "9104", "STAT": "EXIT", "JOB_NAME": "ml", "EXIT_CODE": "137",
     "EXIT_REASON": "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit"},
    {"JOBID": "9105[3]", "STAT": "DONE", "JOB_NAME": "arr[3]", "EXIT_CODE": ""},
    {"JOBID": "9106", "STAT": "RUN", "JOB_NAME": "spread", "EXEC_HOST": "4*h1:4*h2:h3",
     "SLOTS": "9", "RUNTIMELIMIT": "1440.0/h1", "START_TIME": "Dec  6 07:15"},
    {"JOBID": "9107", "STAT": "PEND", "JOB_NAME": "dep",
     "PEND_REASON": "Job dependency condition not satisfied;", "DEPENDENCY": "done(9106)"},
]})

# `flux jobs --json`
FLUX_JOBS = json.dumps({"jobs": [
    {"id": 7101, "state": "SCHED", "name": "sched", "nnodes": 2, "ntasks": 8},
    {"id": 7102, "state": "DEPEND", "name": "dep", "dependencies": ["afterok:7101"]},
    {"id": 7103, "state": "CLEANUP", "name": "clean", "t_run": epoch(2026, 12, 6, 6),
     "nodelist": "f[1-2]"},
    {"id": 7104, "state": "INACTIVE", "result": "CANCELED", "name": "cx",
     "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 6, 5), "waitstatus": 15,
     "exception": {"occurred": True, "severity": 0, "type": "cancel", "note": ""}},
    {"id": 7105, "state": "INACTIVE", "result": "FAILED", "name": "never",
     "t_inactive": epoch(2026, 12, 6, 6, 5),
     "exception": {"occurred": True, "severity": 0, "type": "alloc",
                   "note": "unsatisfiable request"}},
    {"id": 7106, "state": "INACTIVE", "result": "COMPLETED", "name": "ok4", "waitstatus": 0,
     "returncode": 0, "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 7),
     "nnodes": 4, "ntasks": 4, "ncores": 4, "duration": 7200.0, "nodelist": "f[1-4]"},
]})

# `qstat -xml`: transferring, suspended three ways, deleted while running, a running task,
# a held job, a stepped range of waiting tasks
QSTAT_XML = (
    "<?xml version='1.0'?>\n<job_info><queue_info>"
    + sge_job_xml(41, "t", "transfer", queue="all.q@n1")
    + sge_job_xml(42, "s", "susp", queue="all.q@n2")
    + sge_job_xml(43, "S", "qsusp", queue="all.q@n3")
    + sge_job_xml(44, "T", "thresh", queue="all.q@n4")
    + sge_job_xml(45, "dr", "delrun", queue="all.q@n5")
    + sge_job_xml(46, "r", "arr", slots=2, queue="all.q@n6", tasks="5")
    + "</queue_info><job_info>" + sge_job_xml(47, "hqw", "hold")
    + sge_job_xml(48, "qw", "pend", tasks="1-99:2")
    + "</job_info></job_info>")


def acct(number: int, name: str, *rest: str) -> list[str]:
    """A qacct record of a job that ran from 08:00 to 09:00."""
    return qacct_record(number, name, "Sun Dec  6 07:00:00 2026", "Sun Dec  6 08:00:00 2026",
                        "Sun Dec  6 09:00:00 2026", *rest)


# `qacct -j`: the shepherd's report lost (19), a kill after the job (100 with 137), a job
# killed by SIGKILL on its own, an output file not opened before the job ran (26)
QACCT = qacct(
    acct(52, "beforew", "failed       19  : before writing exit_status", "exit_status  0"),
    acct(53, "qdel", "failed       100 : assumedly after job", "exit_status  137"),
    acct(54, "sigkill", "failed       0", "exit_status  137"),
    qacct_record(55, "nostart", "Sun Dec  6 07:00:00 2026", "-/-", "-/-",
                 "failed       26  : opening input/output file", "exit_status  0"),
)


def rows(jobs, *fields: str) -> list[tuple]:
    return [tuple(getattr(j, f) for f in fields) for j in jobs]


def squeue(*fields: str) -> list[tuple]:
    return rows(slurm.parse_status(SQUEUE, []), *fields)


def sacct(*fields: str) -> list[tuple]:
    return rows(slurm.parse_accounting(SACCT, []), *fields)


def nodes_seen(parse) -> list[tuple]:
    return [(n.name, n.state, n.cpus, n.cpus_allocated, n.gpus, n.gpus_allocated, n.gpu_type,
             n.gpu_types, n.architecture, n.reason, node_verdicts(n.state)) for n in parse()]


OOM = "out of memory: the job used more than the memory it was given"
OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm
    ("squeue: CONFIGURING and RESIZING run; STOPPED runs with an UNLIMITED limit (none)",
     lambda: squeue("native_id", "state", "native_state", "nodes", "cpus", "walltime_s",
                    "time_used_s")[:3],
     [("6101", "RUNNING", "CONFIGURING", 2, 16, 7200, 45),
      ("6102", "RUNNING", "RESIZING", 1, 8, 3600, 60),
      ("6103", "RUNNING", "STOPPED", 1, 1, None, 600)]),
    ("squeue: REVOKED (run by another cluster of the federation) ends as cancelled; "
     "RESV_DEL_HOLD waits with its reason",
     lambda: squeue("native_id", "state", "reason", "started_at")[3:5],
     [("6104", "CANCELLED", None, None), ("6105", "PENDING", "ResvDeleted", None)]),
    ("squeue: a week's limit over the QOS's; two GPU types on 4 nodes are 12 GPUs, with the "
     "start estimate and the unavailable nodes said",
     lambda: squeue("native_id", "walltime_s", "reason", "gpus", "estimated_start")[5:7],
     [("6106", 7 * 86400, "QOSMaxWallDurationPerJobLimit", None, None),
      ("6107", 1800, "ReqNodeNotAvail, UnavailableNodes:c[01-02]", 4 * 3,
       at(2026, 12, 7, 1, 2, 3))]),
    ("squeue: SUSPENDED keeps its node",
     lambda: squeue("native_id", "state", "native_state", "node_list")[7],
     ("6108", "RUNNING", "SUSPENDED", "c3")),
    ("sacct: OUT_OF_MEMORY with 0:125 (no exit code); REQUEUED waits; a cancel by root "
     "with SIGKILL",
     lambda: ended(slurm.parse_accounting(SACCT, []))[:3],
     [("7101", "FAILED", None, OOM), ("7102", "PENDING", None, None),
      ("7103", "CANCELLED", 137, "cancelled by uid 0")]),
    ("sacct: an array task and a het job's component by their ids; a job running has no end; "
     "a cancel before the start has neither start nor node",
     lambda: sacct("native_id", "state", "exit_code", "started_at", "ended_at",
                   "node_list")[3:],
     [("7104_4", "COMPLETED", 0, at(2026, 12, 6, 1), at(2026, 12, 6, 1, 10), "c04"),
      ("7105+1", "FAILED", 3, at(2026, 12, 6, 1), at(2026, 12, 6, 1, 10), "c05"),
      ("7106", "RUNNING", None, at(2026, 12, 6, 1), None, "c06"),
      ("7107", "CANCELLED", 0, None, at(2026, 12, 6, 1), None)]),
    ("squeue --json v0.0.38: plain numbers; gpu:2 a node on 2 is 4; INFINITE no limit; a "
     "start of 0 no estimate",
     lambda: rows(slurm.parse_status_json(SQUEUE_JSON_2205, []), "native_id", "state",
                  "nodes", "cpus", "gpus", "walltime_s", "started_at", "estimated_start",
                  "reason"),
     [("8101", "RUNNING", 2, 64, 4, 3600, at(2026, 12, 6, 8), None, None),
      ("8102", "PENDING", 1, 1, None, None, None, None, "Dependency"),
      ("8103", "TIMEOUT", None, None, None, 3600, at(2026, 12, 6, 7), None, None)]),
    ("squeue --json v0.0.40: an infinite limit none; NODE_FAIL without an exit code; an "
     "array task as ARRAY_TASK",
     lambda: rows(slurm.parse_status_json(SQUEUE_JSON_2311, []), "native_id", "state",
                  "walltime_s", "exit_code", "reason", "estimated_start"),
     [("8201", "PENDING", None, None, "Resources", at(2026, 12, 6, 12)),
      ("8202", "FAILED", None, None, "the node failed", None),
      ("8200_3", "COMPLETED", None, 0, None, None)]),
    ("sinfo: idle# and idle~ return; drained* and reserved take none; mixed- of 4 typed "
     "GPUs, blocked, completing and perfctrs take jobs",
     lambda: [(n.name, n.cpus_allocated, n.gpus, n.gpu_type, node_verdicts(n.state))
              for n in slurm.parse_sinfo_nodes(SINFO, [])],
     [("q01", 0, 0, None, (True, (60.0, False))), ("q02", 0, 0, None, (False, None)),
      ("q03", 0, 0, None, (True, None)), ("q04", 0, 0, None, (False, None)),
      ("q05", 32, 4, "a100", (True, None)), ("q06", 64, 0, None, (True, None)),
      ("q07", 0, 0, None, (True, (60.0, False))), ("q08", 0, 0, None, (True, None))]),
    ("scontrol node: 142 of 144 CPUs usable (2 specialized), not responding said; two MIG "
     "profiles counted apart (one type: no split), one slice in use",
     lambda: nodes_seen(lambda: slurm.parse_nodes(SCONTROL, [])),
     [("g01", "down+not_responding", 142, 0, 1, 0, "gh200", None, "aarch64",
       "Not responding", (False, None)),
      ("m01", "mixed+planned", 64, 16, 3, 1, "a100_3g.40gb",
       {"a100_3g.40gb": 2, "a100_1g.10gb": 1}, None, None, (True, None))]),
    # PBS Pro
    ("qstat -F json -x: -3 never ran; 271 is SIGTERM on 2 chunks of 4",
     lambda: ended(pbs.parse_status(PBS_JOBS, []))[:2]
     + rows(pbs.parse_status(PBS_JOBS, [])[1:2], "nodes", "cpus", "walltime_s", "ended_at"),
     [("400.s", "FAILED", -3, "job never ran (Exit_status -3)"),
      ("401.s", "FAILED", 143, "killed by signal 15"), (2, 8, 3600, at(2026, 12, 6, 7, 30))]),
    ("qstat -F json -x: an array begun runs; its expired subjob done; E still runs",
     lambda: rows(pbs.parse_status(PBS_JOBS, []), "native_id", "state", "exit_code",
                  "node_list")[2:5],
     [("402[].s", "RUNNING", None, None), ("402[3].s", "COMPLETED", 0, None),
      ("403.s", "RUNNING", None, "n3/0")]),
    ("qstat -F json -x: a waiting job's estimate and the scheduler's comment",
     lambda: rows(pbs.parse_status(PBS_JOBS, []), "native_id", "state", "estimated_start",
                  "reason")[6],
     ("405.s", "PENDING", at(2026, 12, 7, 2),
      "Not Running: Insufficient amount of resource: ngpus (R: 4 A: 2 T: 8)")),
    # Torque
    ("Torque XML: E runs; W waits for its epoch start; H held by the user",
     lambda: rows(torque.parse_status(TORQUE_XML, []), "native_id", "state",
                  "estimated_start", "reason")[:3],
     [("3001.t", "RUNNING", None, None),
      ("3002.t", "PENDING", at(2026, 12, 7, 9), "waiting for its start time (qsub -a)"),
      ("3003.t", "PENDING", None, "held (u)")]),
    ("Torque XML: 271 SIGTERM; -1 never ran; an array task on 2 slots of one node",
     lambda: ended(torque.parse_status(TORQUE_XML, []))[3:5]
     + rows(torque.parse_status(TORQUE_XML, [])[5:], "native_id", "nodes", "cpus",
            "walltime_s"),
     [("3004.t", "FAILED", 143, "killed by signal 15"),
      ("3005.t", "FAILED", -1, "job never ran (Exit_status -1)"),
      ("3006[2].t", 1, 2, 3600)]),
    # LSF
    ("bjobs -json: PSUSP waits; TERM_OWNER a cancel; TERM_RUNLIMIT a timeout; TERM_MEMLIMIT "
     "out of memory",
     lambda: rows(lsf.parse_status(BJOBS, []), "native_id", "state", "exit_code")[:4]
     + [ended(lsf.parse_status(BJOBS, []))[3][3]],
     [("9101", "PENDING", None), ("9102", "CANCELLED", 130), ("9103", "TIMEOUT", 140),
      ("9104", "FAILED", 137),
      f"{OOM} (TERM_MEMLIMIT: job killed after reaching LSF memory usage limit)"]),
    ("bjobs -json: an array element done; 9 slots on 3 hosts, a limit normalized to h1; a "
     "dependency's wait",
     lambda: rows(lsf.parse_status(BJOBS, []), "native_id", "state", "nodes", "cpus",
                  "walltime_s", "started_at", "reason")[4:],
     [("9105[3]", "COMPLETED", None, None, None, None, None),
      ("9106", "RUNNING", 3, 9, 86400, at(2026, 12, 6, 7, 15), None),
      ("9107", "PENDING", None, None, None, None, "Job dependency condition not satisfied;")]),
    # Flux
    ("flux jobs: SCHED and DEPEND wait (its dependency said); CLEANUP still holds its nodes",
     lambda: rows(flux.parse_status(FLUX_JOBS, []), "native_id", "state", "reason",
                  "node_list")[:3],
     [("7101", "PENDING", None, None), ("7102", "PENDING", "dependency: afterok:7101", None),
      ("7103", "RUNNING", "ending (cleanup)", "f[1-2]")]),
    ("flux jobs: a cancel by SIGTERM; an alloc exception before any start; 4 nodes done in "
     "an hour of a two-hour limit",
     lambda: rows(flux.parse_status(FLUX_JOBS, []), "native_id", "state", "exit_code",
                  "started_at", "reason", "nodes", "walltime_s")[3:],
     [("7104", "CANCELLED", 143, at(2026, 12, 6, 6), "cancel", None, None),
      ("7105", "FAILED", None, None, "alloc: unsatisfiable request", None, None),
      ("7106", "COMPLETED", 0, at(2026, 12, 6, 6), None, 4, 7200)]),
    # Grid Engine
    ("qstat -xml: t runs; s, S and T suspended on their hosts; dr being deleted",
     lambda: rows(sge.parse_status(QSTAT_XML, []), "native_id", "state", "reason",
                  "node_list")[:5],
     [("41", "RUNNING", None, "n1"), ("42", "RUNNING", "suspended (s)", "n2"),
      ("43", "RUNNING", "suspended (S)", "n3"), ("44", "RUNNING", "suspended (T)", "n4"),
      ("45", "RUNNING", "being deleted", "n5")]),
    ("qstat -xml: a running task of 2 slots; a held job; a stepped range of waiting tasks",
     lambda: rows(sge.parse_status(QSTAT_XML, []), "native_id", "state", "cpus",
                  "reason")[5:],
     [("46.5", "RUNNING", 2, None), ("47", "PENDING", 1, "held (hqw)"),
      ("48.1-99:2", "PENDING", 1, None)]),
    ("qacct -j: failed 19 no exit code; failed 100 with 137 a kill; 137 alone SIGKILL; "
     "failed 26 never started",
     lambda: rows(sge.parse_accounting(QACCT, []), "native_id", "state", "exit_code",
                  "reason", "started_at"),
     [("52", "FAILED", None, "Grid Engine failed the job (19: before writing exit_status)",
       at(2026, 12, 6, 8)),
      ("53", "FAILED", 137, "killed by signal 9", at(2026, 12, 6, 8)),
      ("54", "FAILED", 137, "killed by signal 9", at(2026, 12, 6, 8)),
      ("55", "FAILED", None, "Grid Engine failed the job (26: opening input/output file)",
       None)]),
]


test_output_read, test_the_sweep_has_twenty_outputs = sweep_output_tests(OUTPUTS)


# ------------------------------------------------- follow-ups: a requeued run, a moved job

RESCHEDULED = qacct_record(61, "again", "Sun Dec  6 07:00:00 2026", "Sun Dec  6 07:10:00 2026",
                           "Sun Dec  6 07:20:00 2026", "failed       25  : rescheduling",
                           "exit_status  99")
SELF_REQUEUED = [x.replace("failed       25  : rescheduling", "failed       0")
                 for x in RESCHEDULED]
RAN_AGAIN = qacct_record(61, "again", "Sun Dec  6 07:00:00 2026", "Sun Dec  6 07:30:00 2026",
                         "Sun Dec  6 08:20:00 2026", "failed       0", "exit_status  0")


@pytest.mark.parametrize("requeued", [RESCHEDULED, SELF_REQUEUED], ids=["failed25", "exit99"])
@pytest.mark.parametrize("order", ["requeued_first", "requeued_last"])
def test_a_grid_engine_run_requeued_then_successful_reads_completed(requeued, order):
    """Before: the requeued run's record (read as a failure) spoke over the run that
    followed it, and a job that succeeded was reported failed."""
    records = (requeued, RAN_AGAIN) if order == "requeued_first" else (RAN_AGAIN, requeued)
    read = sge.parse_accounting(qacct(*records), [])
    assert ended(read) == [("61", "COMPLETED", 0, None)]
    assert read[0].started_at == at(2026, 12, 6, 7, 30)


@pytest.mark.parametrize(("requeued", "said"), [
    (RESCHEDULED, "failed 25: rescheduling"), (SELF_REQUEUED, "its exit status 99")],
    ids=["failed25", "exit99"])
def test_a_grid_engine_run_requeued_alone_is_no_ending(requeued, said):
    """Before: FAILED (failed 25: "ran, will be rescheduled"; exit 99: the job asks to be
    requeued). qacct is asked of jobs qstat no longer lists: one whose only record is a run
    Grid Engine requeued left the queue without a run of its own (deleted while waiting
    again). Read as waiting (review), it was followed for ever and a cancel never applied;
    it is left out, a job gone from the queue as any other."""
    assert sge.parse_accounting(qacct(requeued), []) == []
    failed = "25 : rescheduling" if "25" in said else "0"
    assert finished_state(failed, 99)[2] == (  # what a run of it requeued says
        f"requeued: Grid Engine put the job back in the queue after a run ({said})")


def test_a_requeued_run_does_not_hide_a_later_failure():
    failed = [x.replace("exit_status  0", "exit_status  2") for x in RAN_AGAIN]
    assert ended(sge.parse_accounting(qacct(RESCHEDULED, failed), [])) == \
        [("61", "FAILED", 2, "exit code 2")]


def test_a_pbs_job_moved_to_another_server_says_so():
    """Before: M read as UNKNOWN with no reason."""
    read = pbs.parse_status(PBS_JOBS, [])[5]
    assert (read.native_id, read.state.value, read.native_state) == ("404.s", "UNKNOWN", "M")
    assert read.reason == "moved to another server (M): its state there is not read here"
    commented = pbs.parse_status(json.dumps({"Jobs": {"1.s": {
        "job_state": "M", "comment": "Job run at Sun Dec 06 at 07:00 on (peer)"}}}), [])[0]
    assert commented.reason == ("moved to another server (M): its state there is not read "
                                "here: Job run at Sun Dec 06 at 07:00 on (peer)")
