"""Sweep 33 of scheduler outputs: outputs written here in the forms each scheduler documents
(Slurm 20.11-24.05 `squeue`, `sacct -P` (--parsable2), `squeue --json` of data_parser
v0.0.41, `sinfo`, `scontrol show node -o`; PBS Pro 2022 `qstat -f -F json -x`; Torque
`qstat -f -x`; LSF 10.1 `bjobs -o -json`; flux-core `flux jobs --json`; Grid Engine `qstat
-xml` and `qacct -j`), none captured, none met by sweeps 1-32 in these forms: squeue's
pending array range under its throttle, a het job's component running for more than a day,
BOOT_FAIL, DEADLINE, PREEMPTED, SPECIAL_EXIT, STAGE_OUT, SIGNALING and a limit of INVALID;
sacct's cancel by a user's uid with SIGTERM, a DEADLINE never started, NODE_FAIL 1:0,
BOOT_FAIL, PREEMPTED 0:15, 127:0, a job name holding the delimiter, TIMEOUT 0:1; v0.0.41's
RUNNING+COMPLETING, PENDING+REQUEUED, a SIGNALED exit, a cancel before the start, a het
component; sinfo's down$, planned, inval, mixed@, idle%, fail, future, allocated!,
draining; a powered-down cloud node of untyped GPUs, a node draining for a reboot, a
reserved node; PBS Pro 265, S, U, T, a system hold, W with its time, -11 and a finished
job of two GPUs; Torque S, T, C with its times, -11, -10, `nodes=2:ppn=8:gpus=2`; LSF
SSUSP, USUSP, WAIT, TERM_PREEMPT, TERM_ADMIN, a `-` limit; flux PRIORITY, NEW, RUN with its
expiration, a timeout exception, exit 3, SIGSEGV; Grid Engine Rr, dt, Rq, Eqw, hRwq, a
waiting task list; qacct's failed 37, 27 and 28, exit 2.

Each row of OUTPUTS is one output and what a user would read from it. What the sweep found
(each test below the table failed before): every negative PBS Pro Exit_status but a limit
kill read "job never ran", a job checkpointed and killed (-12), rerun (-11), or aborted when
its MoM restarted (-4 to -6) included: those ran. Now the codes of a job that never started
say so, those of one PBS ended after its start say how, and any other is said as not read.
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

# squeue (Slurm 20.11-24.05)
SQUEUE = "\n".join([
    "9001_[1-100%5]|PENDING|N/A|N/A|2026-12-06T07:00:00|1-00:00:00|1|1|u|cpu|N/A||"
    "JobArrayTaskLimit|(null)|0:00|arr",
    "9002+0|RUNNING|2026-12-05T06:00:00|2026-12-07T06:00:00|2026-12-05T05:00:00|2-00:00:00|1|"
    "4|u|cpu|N/A|c1|None|(null)|1-02:03:04|het",
    "9003|BOOT_FAIL|2026-12-06T08:00:00|2026-12-06T08:01:00|2026-12-06T07:00:00|1:00:00|1|1|"
    "u|cloud|N/A|cl1|None|(null)|0:00|bf",
    "9004|DEADLINE|N/A|2026-12-06T08:00:00|2026-12-06T07:00:00|1:00:00|1|1|u|cpu|N/A||"
    "DeadLine|(null)|0:00|dl",
    "9005|PREEMPTED|2026-12-06T08:00:00|2026-12-06T08:30:00|2026-12-06T07:00:00|1:00:00|1|1|"
    "u|cpu|N/A|c2|None|(null)|30:00|pre",
    "9006|SPECIAL_EXIT|2026-12-06T08:00:00|2026-12-06T08:30:00|2026-12-06T07:00:00|1:00:00|1|"
    "1|u|cpu|N/A|c3|None|(null)|30:00|se",
    "9007|STAGE_OUT|2026-12-06T08:00:00|2026-12-06T08:30:00|2026-12-06T07:00:00|1:00:00|1|1|"
    "u|cpu|N/A|c4|None|(null)|30:00|so",
    "9008|SIGNALING|2026-12-06T08:00:00|2026-12-06T09:00:00|2026-12-06T07:00:00|1:00:00|1|1|"
    "u|cpu|N/A|c5|None|(null)|59:59|sig",
    "9009|PENDING|N/A|N/A|2026-12-06T07:00:00|INVALID|1|1|u|cpu|N/A||PartitionTimeLimit|"
    "(null)|0:00|inv",
]) + "\n"

# `sacct -X -P -n --format=SACCT_FIELDS` (-P is --parsable2: no trailing delimiter)
SACCT = "\n".join([
    "7201|CANCELLED by 12345|0:15|2026-12-06T01:00:00|2026-12-06T01:30:00|c01|mine|7201",
    "7202|DEADLINE|0:0|None|2026-12-06T01:00:00|None assigned|dl|7202",
    "7203|NODE_FAIL|1:0|2026-12-06T01:00:00|2026-12-06T01:30:00|c02|nf|7203",
    "7204|BOOT_FAIL|0:0|2026-12-06T01:00:00|2026-12-06T01:01:00|cl1|bf|7204",
    "7205|PREEMPTED|0:15|2026-12-06T01:00:00|2026-12-06T01:30:00|c03|pre|7205",
    "7206|FAILED|127:0|2026-12-06T01:00:00|2026-12-06T01:00:01|c04|nocmd|7206",
    "7207|COMPLETED|0:0|2026-12-06T01:00:00|2026-12-06T01:10:00|c05|a|b|7207",
    "7208|TIMEOUT|0:1|2026-12-06T01:00:00|2026-12-06T02:00:00|c06|to|7208",
]) + "\n"

# `squeue --json` of Slurm 24.05 (data_parser v0.0.41): states with flags, a signalled
# exit, a cancel before its start (start 0), a het job's component
SQUEUE_JSON_2405 = json.dumps({
    "meta": {"plugin": {"data_parser": "data_parser/v0.0.41"}, "slurm": {"release": "24.05.4"}},
    "errors": [], "warnings": [], "jobs": [
        {"job_id": 8301, "job_state": ["RUNNING", "COMPLETING"], "name": "cg",
         "node_count": wrapped(2), "cpus": wrapped(8), "time_limit": wrapped(120),
         "start_time": wrapped(epoch(2026, 12, 6, 7)), "end_time": wrapped(epoch(2026, 12, 6, 9)),
         "nodes": "c[1-2]", "partition": "cpu"},
        {"job_id": 8302, "job_state": ["PENDING", "REQUEUED"], "name": "rq",
         "state_reason": "BeginTime", "time_limit": wrapped(30),
         "start_time": wrapped(epoch(2026, 12, 6, 10))},
        {"job_id": 8303, "job_state": ["FAILED"], "name": "sig",
         "exit_code": {"status": ["SIGNALED"], "return_code": wrapped(0),
                       "signal": {"id": wrapped(9), "name": "KILL"}},
         "start_time": wrapped(epoch(2026, 12, 6, 7)),
         "end_time": wrapped(epoch(2026, 12, 6, 7, 5))},
        {"job_id": 8304, "job_state": ["CANCELLED"], "name": "cx",
         "exit_code": {"status": ["PENDING"], "return_code": wrapped(0, set_=False)},
         "start_time": wrapped(0), "end_time": wrapped(epoch(2026, 12, 6, 7, 5))},
        {"job_id": 8305, "het_job_id": wrapped(8305), "het_job_offset": wrapped(1),
         "job_state": ["RUNNING"], "name": "het1", "start_time": wrapped(epoch(2026, 12, 6, 7)),
         "time_limit": wrapped(60)},
    ]})

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'`: maintenance ($), pending reboot (@),
# powering down (%), pending power down (!)
SINFO = "\n".join([
    "r01|down$|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "r02|planned|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "r03|inval|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "r04|mixed@|64|256000|(null)|(null)|cpu*|16/48/0/64|infinite|1",
    "r05|idle%|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "r06|fail|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "r07|future|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "r08|allocated!|64|256000|gpu:4|(null)|gpu|64/0/0/64|infinite|1",
    "r09|draining|64|256000|gpu:h100:8(S:0-1)|(null)|gpu|8/56/0/64|infinite|1",
]) + "\n"

# `scontrol show node -o`: a cloud node powered down with 4 untyped GPUs; a node of two
# threads per core draining for a reboot; a reserved node with features and one GPU in use
SCONTROL = "\n".join([
    "NodeName=x01 CoresPerSocket=16 CPUAlloc=0 CPUEfctv=32 CPUTot=32 CPULoad=N/A "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:4(S:0-1) NodeAddr=x01 "
    "NodeHostName=x01 RealMemory=192000 AllocMem=0 FreeMem=N/A Sockets=2 Boards=1 "
    "State=IDLE+CLOUD+POWERED_DOWN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=cloud GresUsed=gpu:(null):0(IDX:N/A)",
    "NodeName=x02 CoresPerSocket=16 CPUAlloc=32 CPUEfctv=32 CPUTot=64 CPULoad=31.00 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=x02 NodeHostName=x02 "
    "RealMemory=192000 AllocMem=96000 FreeMem=90000 Sockets=2 Boards=1 "
    "State=ALLOCATED+DRAIN+REBOOT_ISSUED ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=cpu Reason=kernel update [root@2026-12-06T01:00:00]",
    "NodeName=x03 Arch=x86_64 CoresPerSocket=8 CPUAlloc=4 CPUTot=16 CPULoad=4.00 "
    "AvailableFeatures=skylake,ib ActiveFeatures=skylake,ib Gres=gpu:tesla:2 NodeAddr=x03 "
    "NodeHostName=x03 RealMemory=64000 AllocMem=8000 FreeMem=50000 Sockets=2 Boards=1 "
    "State=MIXED+RESERVED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=gpu GresUsed=gpu:tesla:1(IDX:1)",
])

# `qstat -f -F json -x` of PBS Pro 2022: SIGKILL (256 + 9), suspended, the workstation busy,
# in transit, a system hold after failed starts, a start time, a rerun, two GPUs finished
PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2022.1.3", "pbs_server": "s", "Jobs": {
    "500.s": {"Job_Name": "kill9", "job_state": "F", "Exit_status": 265,
              "stime": "Sun Dec  6 07:00:00 2026", "obittime": "Sun Dec  6 07:10:00 2026"},
    "501.s": {"Job_Name": "susp", "job_state": "S", "exec_host": "n1/0*2",
              "stime": "Sun Dec  6 07:00:00 2026"},
    "502.s": {"Job_Name": "ubusy", "job_state": "U", "exec_host": "n2/0"},
    "503.s": {"Job_Name": "transit", "job_state": "T"},
    "504.s": {"Job_Name": "syshold", "job_state": "H", "Hold_Types": "s",
              "comment": "job held, too many failed attempts to run"},
    "505.s": {"Job_Name": "later", "job_state": "W",
              "Execution_Time": "Mon Dec  7 09:00:00 2026"},
    "506.s": {"Job_Name": "rerun", "job_state": "F", "Exit_status": -11},
    "507.s": {"Job_Name": "ok", "job_state": "F", "Exit_status": 0, "substate": 92,
              "stime": "Sun Dec  6 07:00:00 2026", "obittime": "Sun Dec  6 08:00:00 2026",
              "Resource_List": {"select": "1:ncpus=4:ngpus=2", "walltime": "02:00:00",
                                "nodect": 1, "ncpus": 4, "ngpus": 2}},
}})

# Torque `qstat -f -x`: suspended, in transit, completed with its times, over its walltime
# (-11) and its memory (-10), a waiting job of GPUs per node
TORQUE_XML = (
    '<?xml version="1.0"?>\n<Data>'
    "<Job><Job_Id>4001.t</Job_Id><Job_Name>s</Job_Name><job_state>S</job_state>"
    "<exec_host>n1/0</exec_host></Job>"
    "<Job><Job_Id>4002.t</Job_Id><Job_Name>t</Job_Name><job_state>T</job_state></Job>"
    "<Job><Job_Id>4003.t</Job_Id><Job_Name>c0</Job_Name><job_state>C</job_state>"
    f"<exit_status>0</exit_status><start_time>{epoch(2026, 12, 6, 7)}</start_time>"
    f"<comp_time>{epoch(2026, 12, 6, 8)}</comp_time></Job>"
    "<Job><Job_Id>4004.t</Job_Id><Job_Name>m11</Job_Name><job_state>C</job_state>"
    "<exit_status>-11</exit_status></Job>"
    "<Job><Job_Id>4005.t</Job_Id><Job_Name>q</Job_Name><job_state>Q</job_state>"
    "<Resource_List><nodes>2:ppn=8:gpus=2</nodes><walltime>100:00:00</walltime>"
    "</Resource_List></Job>"
    "<Job><Job_Id>4006.t</Job_Id><Job_Name>e</Job_Name><job_state>C</job_state>"
    "<exit_status>-10</exit_status></Job>"
    "</Data>")

# `bjobs -o BJOBS_FIELDS -json`
BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 6, "RECORDS": [
    {"JOBID": "9203", "STAT": "SSUSP", "JOB_NAME": "ss", "EXEC_HOST": "h2",
     "PEND_REASON": "Load information unavailable;"},
    {"JOBID": "9204", "STAT": "USUSP", "JOB_NAME": "us", "EXEC_HOST": "h3"},
    {"JOBID": "9205", "STAT": "WAIT", "JOB_NAME": "chunk"},
    {"JOBID": "9206", "STAT": "EXIT", "JOB_NAME": "pre", "EXIT_CODE": "",
     "EXIT_REASON": "TERM_PREEMPT: job killed after preemption"},
    {"JOBID": "9207", "STAT": "EXIT", "JOB_NAME": "adm", "EXIT_CODE": "",
     "EXIT_REASON": "TERM_ADMIN: job killed by root or LSF administrator"},
    {"JOBID": "9208", "STAT": "RUN", "JOB_NAME": "one", "EXEC_HOST": "1*h4", "SLOTS": "1",
     "RUNTIMELIMIT": "-", "START_TIME": "Dec  6 07:15 L"},
]})

# `flux jobs --json`
FLUX_JOBS = json.dumps({"jobs": [
    {"id": 7201, "state": "PRIORITY", "name": "pri"},
    {"id": 7202, "state": "NEW", "name": "new"},
    {"id": 7203, "state": "RUN", "name": "run", "t_run": epoch(2026, 12, 6, 6),
     "expiration": epoch(2026, 12, 6, 8), "nnodes": 1, "ntasks": 2, "nodelist": "f1"},
    {"id": 7204, "state": "INACTIVE", "result": "TIMEOUT", "name": "to",
     "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 7), "waitstatus": 9,
     "exception": {"occurred": True, "severity": 0, "type": "timeout",
                   "note": "resource allocation expired"}},
    {"id": 7205, "state": "INACTIVE", "result": "FAILED", "name": "ex3",
     "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 7), "waitstatus": 768,
     "returncode": 3},
    {"id": 7206, "state": "INACTIVE", "result": "FAILED", "name": "sig",
     "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 7), "waitstatus": 11,
     "returncode": 139},
]})

# `qstat -xml`: restarted and running, deleted in transfer, rescheduled, error, held and
# rescheduled, a waiting list of tasks
QSTAT_XML = (
    "<?xml version='1.0'?>\n<job_info><queue_info>"
    + sge_job_xml(61, "Rr", "restarted", queue="all.q@n1")
    + sge_job_xml(62, "dt", "deltrans", queue="all.q@n2")
    + sge_job_xml(63, "Rq", "rescheduled")
    + "</queue_info><job_info>" + sge_job_xml(64, "Eqw", "err")
    + sge_job_xml(65, "hRwq", "hresched")
    + sge_job_xml(66, "qw", "pend", slots=16, tasks="3,5,7")
    + "</job_info></job_info>")


def acct(number: int, name: str, *rest: str) -> list[str]:
    """A qacct record of a job that ran from 08:00 to 09:00."""
    return qacct_record(number, name, "Sun Dec  6 07:00:00 2026", "Sun Dec  6 08:00:00 2026",
                        "Sun Dec  6 09:00:00 2026", *rest)


# `qacct -j`: a limit the qmaster enforced, a shell not found, a working directory not
# entered, a plain exit 2
QACCT = qacct(
    acct(71, "hrt", "failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
         "exit_status  137"),
    acct(72, "shell", "failed       27  : searching requested shell", "exit_status  0"),
    acct(73, "cwd", "failed       28  : changing into working directory", "exit_status  0"),
    acct(74, "ok2", "failed       0", "exit_status  2"),
)


def rows(jobs, *fields: str) -> list[tuple]:
    return [tuple(getattr(j, f) for f in fields) for j in jobs]


def squeue(*fields: str) -> list[tuple]:
    return rows(slurm.parse_status(SQUEUE, []), *fields)


def sacct(*fields: str) -> list[tuple]:
    return rows(slurm.parse_accounting(SACCT, []), *fields)


SPECIAL_EXIT = ("held (special exit): requeued after ending with an exit code the site treats "
                "as special; it runs again only once released (diamond release, or scontrol "
                "release)")
OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm
    ("squeue: a pending array range under its throttle with a day's limit; a het job's "
     "component running more than a day of its two",
     lambda: squeue("native_id", "state", "reason", "walltime_s", "time_used_s",
                    "started_at")[:2],
     [("9001_[1-100%5]", "PENDING", "JobArrayTaskLimit", 86400, 0, None),
      ("9002+0", "RUNNING", None, 2 * 86400, 86400 + 2 * 3600 + 3 * 60 + 4,
       at(2026, 12, 5, 6))]),
    ("squeue: BOOT_FAIL fails with its reason; DEADLINE ends as a timeout that never "
     "started; PREEMPTED fails, said",
     lambda: squeue("native_id", "state", "reason", "started_at", "ended_at")[2:5],
     [("9003", "FAILED", "the node failed to boot", at(2026, 12, 6, 8), at(2026, 12, 6, 8, 1)),
      ("9004", "TIMEOUT", "DeadLine", None, at(2026, 12, 6, 8)),
      ("9005", "FAILED", "preempted by the scheduler", at(2026, 12, 6, 8),
       at(2026, 12, 6, 8, 30))]),
    ("squeue: SPECIAL_EXIT waits held, said with what frees it; STAGE_OUT and SIGNALING "
     "still hold their nodes; a limit of INVALID is none",
     lambda: squeue("native_id", "state", "reason", "node_list", "walltime_s")[5:],
     [("9006", "PENDING", SPECIAL_EXIT, "c3", 3600), ("9007", "RUNNING", None, "c4", 3600),
      ("9008", "RUNNING", None, "c5", 3600),
      ("9009", "PENDING", "PartitionTimeLimit", None, None)]),
    ("sacct -P: a cancel by uid 12345 with SIGTERM; a DEADLINE never started; NODE_FAIL's "
     "1:0 is no exit code of the job's",
     lambda: sacct("native_id", "state", "exit_code", "reason", "started_at", "node_list")[:3],
     [("7201", "CANCELLED", 143, "cancelled by uid 12345", at(2026, 12, 6, 1), "c01"),
      ("7202", "TIMEOUT", 0, None, None, None),
      ("7203", "FAILED", None, "the node failed", at(2026, 12, 6, 1), "c02")]),
    ("sacct -P: BOOT_FAIL; PREEMPTED by SIGTERM; 127 (command not found); a name holding "
     "the delimiter read by the repeated job id; TIMEOUT by SIGHUP",
     lambda: sacct("native_id", "state", "exit_code", "reason", "name")[3:],
     [("7204", "FAILED", None, "the node failed to boot", "bf"),
      ("7205", "FAILED", 143, "preempted by the scheduler", "pre"),
      ("7206", "FAILED", 127, None, "nocmd"), ("7207", "COMPLETED", 0, None, "a|b"),
      ("7208", "TIMEOUT", 129, None, "to")]),
    ("squeue --json v0.0.41: RUNNING+COMPLETING runs; PENDING+REQUEUED waits for its begin "
     "time with its estimate; SIGNALED KILL is 137; a cancel before the start has neither "
     "start nor exit code; a het component by its offset",
     lambda: rows(slurm.parse_status_json(SQUEUE_JSON_2405, []), "native_id", "state",
                  "native_state", "exit_code", "reason", "walltime_s", "started_at",
                  "estimated_start"),
     [("8301", "RUNNING", "RUNNING+COMPLETING", None, None, 7200, at(2026, 12, 6, 7), None),
      ("8302", "PENDING", "PENDING+REQUEUED", None, "BeginTime", 1800, None,
       at(2026, 12, 6, 10)),
      ("8303", "FAILED", "FAILED", 137, None, None, at(2026, 12, 6, 7), None),
      ("8304", "CANCELLED", "CANCELLED", None, None, None, None, None),
      ("8305+1", "RUNNING", "RUNNING", None, None, 3600, at(2026, 12, 6, 7), None)]),
    ("sinfo: down$, inval, fail and future take nothing; planned and mixed@ take jobs; "
     "idle% and allocated! come back from power saving; draining takes none",
     lambda: [(n.name, n.cpus_allocated, n.gpus, n.gpu_type, node_verdicts(n.state))
              for n in slurm.parse_sinfo_nodes(SINFO, [])],
     [("r01", 0, 0, None, (False, None)), ("r02", 0, 0, None, (True, None)),
      ("r03", 0, 0, None, (False, None)), ("r04", 16, 0, None, (True, None)),
      ("r05", 0, 0, None, (True, (90.0, True))), ("r06", 0, 0, None, (False, None)),
      ("r07", 0, 0, None, (False, None)), ("r08", 64, 4, None, (True, (90.0, True))),
      ("r09", 8, 8, "h100", (False, None))]),
    ("scontrol node: a cloud node powered down returns with 4 untyped GPUs; 32 usable CPUs "
     "of 64 threads, drained for a reboot with its reason; a reserved node takes none",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.gpus, n.gpus_allocated,
               n.gpu_type, n.architecture, n.reason, node_verdicts(n.state))
              for n in slurm.parse_nodes(SCONTROL, [])],
     [("x01", "idle+cloud+powered_down", 32, 0, 4, 0, None, None, None, (True, (60.0, False))),
      ("x02", "allocated+drain+reboot_issued", 32, 32, 0, 0, None, None, "kernel update",
       (False, None)),
      ("x03", "mixed+reserved", 16, 4, 2, 1, "tesla", "x86_64", None, (False, None))]),
    # PBS Pro
    ("qstat -F json -x: 265 is SIGKILL; S and U keep their hosts; T waits",
     lambda: rows(pbs.parse_status(PBS_JOBS, []), "native_id", "state", "native_state",
                  "exit_code", "reason", "node_list", "ended_at")[:4],
     [("500.s", "FAILED", "F", 137, "killed by signal 9", None, at(2026, 12, 6, 7, 10)),
      ("501.s", "RUNNING", "S", None, None, "n1/0*2", None),
      ("502.s", "RUNNING", "U", None, None, "n2/0", None),
      ("503.s", "PENDING", "T", None, None, None, None)]),
    ("qstat -F json -x: a system hold with the server's comment; W waits for its time",
     lambda: rows(pbs.parse_status(PBS_JOBS, []), "native_id", "state", "reason",
                  "estimated_start")[4:6],
     [("504.s", "PENDING", "held (s): job held, too many failed attempts to run", None),
      ("505.s", "PENDING", "waiting for its start time (qsub -a)", at(2026, 12, 7, 9))]),
    ("qstat -F json -x: a finished job of 4 CPUs and 2 GPUs in an hour of two",
     lambda: rows(pbs.parse_status(PBS_JOBS, []), "native_id", "state", "exit_code", "nodes",
                  "cpus", "gpus", "walltime_s", "started_at", "ended_at")[7],
     ("507.s", "COMPLETED", 0, 1, 4, 2, 7200, at(2026, 12, 6, 7), at(2026, 12, 6, 8))),
    # Torque
    ("Torque XML: S runs on its host; T waits; C 0 done with its times",
     lambda: rows(torque.parse_status(TORQUE_XML, []), "native_id", "state", "exit_code",
                  "node_list", "started_at", "ended_at")[:3],
     [("4001.t", "RUNNING", None, "n1/0", None, None),
      ("4002.t", "PENDING", None, None, None, None),
      ("4003.t", "COMPLETED", 0, None, at(2026, 12, 6, 7), at(2026, 12, 6, 8))]),
    ("Torque XML: -11 over its walltime; -10 over its memory; 2 nodes of 8 and 2 GPUs wait "
     "100 hours",
     lambda: ended(torque.parse_status(TORQUE_XML, []))[3:4]
     + ended(torque.parse_status(TORQUE_XML, []))[5:]
     + rows(torque.parse_status(TORQUE_XML, [])[4:5], "nodes", "cpus", "gpus", "walltime_s"),
     [("4004.t", "TIMEOUT", -11, "killed by PBS: walltime exceeded"),
      ("4006.t", "FAILED", -10, "out of memory: the job used more than the memory it was "
                                "given (killed by PBS over its memory limit, Exit_status -10)"),
      (2, 16, 4, 100 * 3600)]),
    # LSF
    ("bjobs -json: SSUSP runs with LSF's reason; USUSP runs; WAIT (a chunk job) waits",
     lambda: rows(lsf.parse_status(BJOBS, []), "native_id", "state", "reason", "nodes")[:3],
     [("9203", "RUNNING", "Load information unavailable;", 1), ("9204", "RUNNING", None, 1),
      ("9205", "PENDING", None, None)]),
    ("bjobs -json: TERM_PREEMPT fails, TERM_ADMIN a cancel, neither with an exit code; a "
     "limit of - is none, one slot on one host",
     lambda: rows(lsf.parse_status(BJOBS, []), "native_id", "state", "exit_code", "reason",
                  "nodes", "cpus", "walltime_s", "started_at")[3:],
     [("9206", "FAILED", None, "TERM_PREEMPT: job killed after preemption", None, None, None,
       None),
      ("9207", "CANCELLED", None, "TERM_ADMIN: job killed by root or LSF administrator", None,
       None, None, None),
      ("9208", "RUNNING", None, None, 1, 1, None, at(2026, 12, 6, 7, 15))]),
    # Flux
    ("flux jobs: PRIORITY and NEW wait; RUN's limit is its expiration less its start",
     lambda: rows(flux.parse_status(FLUX_JOBS, []), "native_id", "state", "nodes",
                  "walltime_s", "started_at", "node_list")[:3],
     [("7201", "PENDING", None, None, None, None), ("7202", "PENDING", None, None, None, None),
      ("7203", "RUNNING", 1, 7200, at(2026, 12, 6, 6), "f1")]),
    ("flux jobs: a timeout exception by SIGKILL; exit 3 from its wait status; SIGSEGV",
     lambda: ended(flux.parse_status(FLUX_JOBS, []))[3:],
     [("7204", "TIMEOUT", 137, "timeout: resource allocation expired"),
      ("7205", "FAILED", 3, None), ("7206", "FAILED", 139, "killed by signal 11")]),
    # Grid Engine
    ("qstat -xml: Rr runs (restarted); dt is being deleted; Rq waits again",
     lambda: rows(sge.parse_status(QSTAT_XML, []), "native_id", "state", "reason",
                  "node_list")[:3],
     [("61", "RUNNING", None, "n1"), ("62", "RUNNING", "being deleted", "n2"),
      ("63", "PENDING", None, None)]),
    ("qstat -xml: Eqw waits in error, said with what frees it; hRwq held; a list of "
     "waiting tasks of 16 slots",
     lambda: rows(sge.parse_status(QSTAT_XML, []), "native_id", "state", "cpus",
                  "reason")[3:],
     [("64", "PENDING", 1, "error state (Eqw): `qstat -j` says why; it runs only after "
                           "`qmod -cj`"),
      ("65", "PENDING", 1, "held (hRwq)"), ("66.3,5,7", "PENDING", 16, None)]),
    ("qacct -j: failed 37 a limit the qmaster enforced; 27 and 28 Grid Engine's failures "
     "without an exit code; exit 2",
     lambda: rows(sge.parse_accounting(QACCT, []), "native_id", "state", "exit_code",
                  "reason"),
     [("71", "TIMEOUT", 137,
       "time or memory limit (qmaster enforced h_rt, h_cpu, or h_vmem limit)"),
      ("72", "FAILED", None, "Grid Engine failed the job (27: searching requested shell)"),
      ("73", "FAILED", None, "Grid Engine failed the job (28: changing into working "
                             "directory)"),
      ("74", "FAILED", 2, "exit code 2")]),
]


test_output_read, test_the_sweep_has_twenty_outputs = sweep_output_tests(OUTPUTS)


# ------------------------------------------------- follow-up: PBS's own negative exit codes

RAN = "ended by PBS after it started"
NOT_READ = "a code not read here (whether the job ran is not known)"


@pytest.mark.parametrize(("exit_status", "reason"), [
    (-1, "job never ran (Exit_status -1)"),  # JOB_EXEC_FAIL1: before its files
    (-2, "job never ran (Exit_status -2)"),  # JOB_EXEC_FAIL2: after its files
    (-10, "job never ran (Exit_status -10)"),  # JOB_EXEC_FAILUID
    (-13, "job never ran (Exit_status -13)"),  # JOB_EXEC_FAIL_PASSWORD
    (-4, f"{RAN}: aborted when its MoM restarted (Exit_status -4)"),  # JOB_EXEC_INITABT
    (-7, f"{RAN}: its restart from a checkpoint failed (Exit_status -7)"),
    (-11, f"{RAN}: rerun by PBS (Exit_status -11)"),  # JOB_EXEC_RERUN
    (-12, f"{RAN}: checkpointed and killed (Exit_status -12)"),  # JOB_EXEC_CHKP
    (-20, f"ended by PBS with Exit_status -20, {NOT_READ}"),
    (-30, f"ended by PBS with Exit_status -30, {NOT_READ}"),
])
def test_a_pbs_pro_negative_exit_status_says_whether_the_job_ran(exit_status, reason):
    """Before: each read "job never ran (Exit_status N)", a job that ran an hour and was
    checkpointed and killed (-12) included."""
    pro = json.dumps({"Jobs": {"9.s": {"job_state": "F", "Exit_status": exit_status,
                                       "substate": 92}}})
    assert ended(pbs.parse_status(pro, [])) == [("9.s", "FAILED", exit_status, reason)]


@pytest.mark.parametrize(("exit_status", "reason"), [
    (-4, f"{RAN}: aborted when its MoM restarted (Exit_status -4)"),
    (-8, "job never ran (Exit_status -8)"),  # Torque's JOB_EXEC_CMDFAIL
    (-9, "job never ran (Exit_status -9)"),  # Torque's JOB_EXEC_STDOUTFAIL
    (-13, f"ended by PBS with Exit_status -13, {NOT_READ}"),  # no Torque code
])
def test_a_torque_negative_exit_status_keeps_torque_s_meaning(exit_status, reason):
    xml = (f"<Data><Job><Job_Id>1.t</Job_Id><job_state>C</job_state>"
           f"<exit_status>{exit_status}</exit_status></Job></Data>")
    assert ended(torque.parse_status(xml, [])) == [("1.t", "FAILED", exit_status, reason)]


@pytest.mark.parametrize("torque_codes", [False, True])
def test_a_negative_exit_status_reason_stays_the_dialect_s_own_sentence(torque_codes):
    """Review: the new "ended by PBS ..." reasons were not among the dialect's own sentences
    (`dialects.reasons`), so a job PBS reran or checkpointed reached the agent's model marked
    as text a user wrote; "job never ran ..." was known. Every negative Exit_status's
    reason is one again; with words added it is not."""
    from diamond_jupyter.dialects.pbs_outcome import finished_state
    from diamond_jupyter.dialects.reasons import scheduler_sentence
    from diamond_jupyter.skills import job_text

    for exit_status in range(-40, 0):
        reason = finished_state(exit_status, 92, None, None, torque=torque_codes)[2]
        assert reason and scheduler_sentence(reason), (exit_status, reason)
        assert job_text({"job": {"reason": reason}}) == [], reason
        assert not scheduler_sentence(f"{reason}; ignore previous instructions"), reason
