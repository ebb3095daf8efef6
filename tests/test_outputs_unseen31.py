"""Sweep 31 of scheduler outputs: outputs written here in the forms each scheduler documents
(Slurm 20.11-24.05 `squeue`, `squeue --json` of data_parser v0.0.41, `sacct -P`, `sinfo`,
`scontrol show node -o`; PBS Pro 2022 `qstat -f -F json`; Torque `qstat -f -x`; LSF 10.1
`bjobs -o -json`; flux-core `flux jobs --json`; Grid Engine `qstat -xml` and `qacct -j`),
none captured, most not met by sweeps 1-30: squeue's PREEMPTED, DEADLINE, BOOT_FAIL,
REQUEUE_HOLD, SPECIAL_EXIT and STAGE_OUT, a name in Chinese, the older per-node `gpu:tesla:2`,
a throttled list array, days in the time used, a NOT_SET limit; sacct's "CANCELLED by",
NODE_FAIL, a timeout two seconds over, PREEMPTED, a DEADLINE that never ran, an instant job;
v0.0.41's state flags (REQUEUED, COMPLETING), an unset limit and return code with SIGKILL;
sinfo's planned, inval, future, reboot^, maint, draining@, fail and down$; a powered-down
cloud node of eight H100s with socket bindings, a node draining for a reboot; PBS Pro S,
U, T, W and H of three hold types, Exit_status 265; Torque T and S, -11 and -10, a name of
an escaped emoji, 59 seconds; LSF USUSP, SSUSP, ZOMBI, WAIT, TERM_PREEMPT, a run limit of
"-" and one normalized to a host; flux PRIORITY, a timeout's wait status, a job of no
duration and one of an expiration, a segfault; Grid Engine dt, Rr on 64 slots, Eqw, hRwq,
an escaped and a CDATA name, no slots at all, qacct's SIGXCPU, failed 37 and 1, a task.

Each row of OUTPUTS is one output and what a user would read from it. This sweep found no
reader fault: every value above was read or, where the output does not say it (a limit
NOT_SET, a run limit of "-", an unset return code, no slots), left unknown.
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

from diamond_jupyter.dialects.reasons import says_held, scheduler_sentence
from diamond_jupyter.dialects.slurm_commands import SPECIAL_EXIT_HELD

# squeue (Slurm 20.11-24.05): rare states and an old-style per-node gres
SQUEUE = "\n".join([
    "6001|PREEMPTED|2026-12-06T05:00:00|2026-12-06T06:00:00|2026-12-06T04:00:00|1-00:00:00|2|"
    "64|u|preempt|gpu:tesla:2|c[10-11]|None|(null)|1:00:00|模拟-run",
    "6002|DEADLINE|2026-12-06T05:00:00|2026-12-06T06:00:00|2026-12-06T04:00:00|2:00:00|1|1|u|"
    "cpu|N/A|c12|DeadLine|(null)|1:00:00|late",
    "6003|BOOT_FAIL|N/A|2026-12-06T06:00:00|2026-12-06T04:00:00|30:00|1|1|u|cloud|N/A|cl1|"
    "None|(null)|0:00|boot",
    "6004|REQUEUE_HOLD|N/A|N/A|2026-12-06T04:00:00|30:00|1|1|u|cpu|N/A||JobHeldAdmin|(null)|"
    "0:00|rq",
    "6005|SPECIAL_EXIT|N/A|N/A|2026-12-06T04:00:00|30:00|1|1|u|cpu|N/A||None|(null)|0:00|se",
    "6006|STAGE_OUT|2026-12-06T05:00:00|2026-12-06T06:00:00|2026-12-06T04:00:00|1:00:00|1|4|u|"
    "cpu|N/A|c13|None|(null)|1:00:00|bb",
    "6007_[3,7-9%2]|PENDING|N/A|N/A|2026-12-06T04:00:00|15:00|1|1|u|cpu|N/A||"
    "JobArrayTaskLimit|(null)|0:00|arr",
]) + "\n"

# `sacct -X -P -n --format=SACCT_FIELDS`: a cancel by a uid with SIGTERM, a node failure, a
# timeout two seconds over, exit 2, preempted, a DEADLINE that never started, an instant job
SACCT = "\n".join([
    "7001|CANCELLED by 1234|0:15|2026-12-06T01:00:00|2026-12-06T01:30:00|c01|c|7001",
    "7002|NODE_FAIL|1:0|2026-12-06T01:00:00|2026-12-06T01:10:00|c02|nf|7002",
    "7003|TIMEOUT|0:0|2026-12-06T01:00:00|2026-12-06T02:00:02|c03|to|7003",
    "7004|FAILED|2:0|2026-12-06T01:00:00|2026-12-06T01:00:05|c04|f2|7004",
    "7005|PREEMPTED|0:0|2026-12-06T01:00:00|2026-12-06T01:20:00|c05|pre|7005",
    "7006|DEADLINE|0:0|None|2026-12-06T01:00:00|None assigned|dl|7006",
    "7007|COMPLETED|0:0|2026-12-06T01:00:00|2026-12-06T01:00:00|c06|instant|7007",
]) + "\n"

# `squeue --json` of Slurm 24.05 (data_parser v0.0.41): state flags beside the state, an unset
# limit, 4096 CPUs with 8 GPUs a node, SIGKILL with no return code
SQUEUE_JSON_2405 = json.dumps({"meta": {"plugin": {"data_parser": "data_parser/v0.0.41"}},
                               "errors": [], "warnings": [], "jobs": [
    {"job_id": 8001, "job_state": ["PENDING", "REQUEUED"], "name": "again",
     "node_count": wrapped(1), "cpus": wrapped(2), "time_limit": wrapped(0, set_=False),
     "state_reason": "BeginTime", "start_time": wrapped(epoch(2026, 12, 7, 0))},
    {"job_id": 8002, "job_state": ["RUNNING", "COMPLETING"], "name": "tail",
     "node_count": wrapped(4), "cpus": wrapped(4096), "time_limit": wrapped(2880),
     "start_time": wrapped(epoch(2026, 12, 6, 6)), "nodes": "n[0001-0004]",
     "tres_per_node": "gres/gpu:8"},
    {"job_id": 8003, "job_state": ["FAILED"], "name": "sig9",
     "exit_code": {"status": ["SIGNALED"], "return_code": wrapped(0, set_=False),
                   "signal": {"id": wrapped(9), "name": "KILL"}},
     "start_time": wrapped(epoch(2026, 12, 6, 6)), "end_time": wrapped(epoch(2026, 12, 6, 6, 1))},
]})

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'`: states of 20.11-24.05 few sites print
SINFO = "\n".join([
    "p01|planned|128|512000|(null)|(null)|cpu*|0/128/0/128|infinite|1",
    "p02|inval|128|512000|(null)|(null)|cpu*|0/0/128/128|infinite|1",
    "p03|future|128|512000|(null)|(null)|cpu*|0/0/128/128|infinite|1",
    "p04|reboot^|128|512000|(null)|(null)|cpu*|0/0/128/128|infinite|1",
    "p05|maint|128|512000|(null)|(null)|cpu*|0/128/0/128|infinite|1",
    "p06|draining@|128|512000|(null)|(null)|cpu*|64/64/0/128|infinite|1",
    "p07|fail|128|512000|(null)|(null)|cpu*|0/0/128/128|infinite|1",
    "p08|down$|128|512000|(null)|(null)|cpu*|0/0/128/128|infinite|1",
]) + "\n"

# `scontrol show node -o`: a powered-down cloud node of 8 H100s bound to sockets, a node
# allocated and draining for a reboot
SCONTROL = "\n".join([
    "NodeName=x01 Arch=x86_64 CoresPerSocket=96 CPUAlloc=0 CPUEfctv=384 CPUTot=384 "
    "CPULoad=0.01 AvailableFeatures=h100,nvlink ActiveFeatures=h100,nvlink "
    "Gres=gpu:nvidia_h100_80gb_hbm3:8(S:0-1) NodeAddr=x01 NodeHostName=x01 "
    "RealMemory=2063000 AllocMem=0 FreeMem=2000000 Sockets=2 Boards=1 "
    "State=IDLE+CLOUD+POWERED_DOWN ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=gpu",
    "NodeName=x02 CoresPerSocket=64 CPUAlloc=128 CPUEfctv=128 CPUTot=128 CPULoad=127.90 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=x02 NodeHostName=x02 "
    "RealMemory=256000 AllocMem=256000 FreeMem=1024 Sockets=2 Boards=1 "
    "State=ALLOCATED+DRAIN+REBOOT_REQUESTED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=cpu Reason=kernel update [root@2026-12-06T03:00:00]",
])

# `qstat -f -F json` of PBS Pro 2022: suspended (S, U), moving (T), waiting (W), SIGKILL as
# 265 on a select of GPU chunks, held by user, operator and system
PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2022.1.3", "pbs_server": "s", "Jobs": {
    "300.s": {"Job_Name": "susp", "job_state": "S", "Resource_List": {"ncpus": 8,
              "nodect": 1, "walltime": "10:00:00"}, "exec_host": "n1/0*8"},
    "301.s": {"Job_Name": "usr", "job_state": "U"},
    "302.s": {"Job_Name": "moving", "job_state": "T"},
    "303.s": {"Job_Name": "waiting", "job_state": "W", "Execution_Time":
              "Mon Dec  7 06:00:00 2026"},
    "304.s": {"Job_Name": "killed9", "job_state": "F", "Exit_status": 265,
              "Resource_List": {"select": "2:ncpus=4:ngpus=1", "walltime": "48:00:00"}},
    "305.s": {"Job_Name": "held", "job_state": "H", "Hold_Types": "uos"},
}})

# Torque `qstat -f -x`: in transit, suspended, killed over its walltime (-11) and memory (-10),
# a name of an escaped emoji on 4 nodes of 28 for 59 seconds
TORQUE_XML = (
    '<?xml version="1.0"?>\n<Data>'
    "<Job><Job_Id>2001.t</Job_Id><Job_Name>transit</Job_Name><job_state>T</job_state></Job>"
    "<Job><Job_Id>2002.t</Job_Id><Job_Name>susp</Job_Name><job_state>S</job_state>"
    "<exec_host>n3/0-7</exec_host></Job>"
    "<Job><Job_Id>2003.t</Job_Id><Job_Name>wt</Job_Name><job_state>C</job_state>"
    "<exit_status>-11</exit_status></Job>"
    "<Job><Job_Id>2004.t</Job_Id><Job_Name>mem</Job_Name><job_state>C</job_state>"
    "<exit_status>-10</exit_status></Job>"
    "<Job><Job_Id>2005.t</Job_Id><Job_Name>&#x1F680; launch</Job_Name><job_state>Q</job_state>"
    "<Resource_List><nodes>4:ppn=28</nodes><walltime>00:00:59</walltime></Resource_List></Job>"
    "</Data>")

# `bjobs -o BJOBS_FIELDS -json`: suspended by the user and by the system, a zombie, a preempted
# kill, a chunk job waiting, 128 slots with no run limit, a limit normalized to a host
BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 6, "RECORDS": [
    {"JOBID": "9001", "STAT": "USUSP", "JOB_NAME": "paused", "EXEC_HOST": "h1"},
    {"JOBID": "9002", "STAT": "SSUSP", "JOB_NAME": "bumped", "EXEC_HOST": "h2",
     "PEND_REASON": "Job was suspended due to load"},
    {"JOBID": "9003", "STAT": "ZOMBI", "JOB_NAME": "z"},
    {"JOBID": "9004", "STAT": "EXIT", "JOB_NAME": "pre", "EXIT_CODE": "",
     "EXIT_REASON": "TERM_PREEMPT: job killed after preemption"},
    {"JOBID": "9005", "STAT": "WAIT", "JOB_NAME": "chunk"},
    {"JOBID": "9006", "STAT": "RUN", "JOB_NAME": "huge", "EXEC_HOST": "64*h1:64*h2",
     "SLOTS": "128", "RUNTIMELIMIT": "-", "START_TIME": "Dec  6 08:00"},
    {"JOBID": "9007", "STAT": "RUN", "JOB_NAME": "norm", "EXEC_HOST": "h3",
     "RUNTIMELIMIT": "60.0/hostA", "START_TIME": "Dec  6 08:30"},
]})

# `flux jobs --json`: PRIORITY, a timeout killed by SIGKILL, a success, no duration, an
# expiration two hours after its start, a segfault (wait status 139: signal 11, core dumped)
FLUX_JOBS = json.dumps({"jobs": [
    {"id": 6001, "state": "PRIORITY", "name": "prio"},
    {"id": 6002, "state": "INACTIVE", "result": "TIMEOUT", "name": "slow", "waitstatus": 9,
     "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 7),
     "exception": {"occurred": True, "severity": 0, "type": "timeout",
                   "note": "resource allocation expired"}},
    {"id": 6003, "state": "INACTIVE", "result": "COMPLETED", "name": "ok", "waitstatus": 0,
     "returncode": 0, "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 6, 30)},
    {"id": 6004, "state": "RUN", "name": "nodur", "nnodes": 1, "ntasks": 1,
     "t_run": epoch(2026, 12, 6, 6), "duration": 0.0},
    {"id": 6006, "state": "RUN", "name": "expires", "t_run": epoch(2026, 12, 6, 6),
     "expiration": epoch(2026, 12, 6, 8)},
    {"id": 6005, "state": "INACTIVE", "result": "FAILED", "name": "segv", "waitstatus": 139,
     "returncode": 139, "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 6, 1)},
]})

# `qstat -xml`: deleted in transfer, restarted on 64 slots, an error state, held and restarted,
# an escaped and a CDATA name, a job without <slots>
QSTAT_XML = (
    "<?xml version='1.0'?>\n<job_info><queue_info>"
    + sge_job_xml(21, "dt", "deltrans", queue="all.q@n1")
    + sge_job_xml(22, "Rr", "rr", slots=64, queue="mpi.q@n2")
    + "</queue_info><job_info>" + sge_job_xml(23, "Eqw", "broken")
    + sge_job_xml(24, "hRwq", "hrw") + sge_job_xml(25, "qw", "Tâche &amp; co")
    + '<job_list state="pending"><JB_job_number>26</JB_job_number>'
      "<JB_name><![CDATA[a<b]]></JB_name><JB_owner>ana</JB_owner><state>qw</state>"
      "<slots>4</slots></job_list>"
    + '<job_list state="pending"><JB_job_number>27</JB_job_number><JB_name>n</JB_name>'
      "<JB_owner>ana</JB_owner><state>qw</state></job_list>"
    + "</job_info></job_info>")


def acct(number: int, name: str, *rest: str) -> list[str]:
    """A qacct record of a job that ran from 08:00 to 09:00."""
    return qacct_record(number, name, "Sun Dec  6 07:00:00 2026", "Sun Dec  6 08:00:00 2026",
                        "Sun Dec  6 09:00:00 2026", *rest)


# `qacct -j`: SIGXCPU (152), qmaster's h_rt kill (failed 37), a failure before the job (failed
# 1), an array task
QACCT = qacct(
    acct(31, "xcpu", "failed       0", "exit_status  152"),
    acct(32, "rtkill", "failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
         "exit_status  137"),
    acct(33, "nofile", "failed       1   : assumedly before job", "exit_status  0"),
    [line.replace("taskid       undefined", "taskid       7")
     for line in acct(34, "task", "failed       0", "exit_status  1")],
)


def rows(jobs, *fields: str) -> list[tuple]:
    return [tuple(getattr(j, f) for f in fields) for j in jobs]


def squeue(*fields: str) -> list[tuple]:
    return rows(slurm.parse_status(SQUEUE, []), *fields)


def sacct(*fields: str) -> list[tuple]:
    return rows(slurm.parse_accounting(SACCT, []), *fields)


def nodes_seen(parse) -> list[tuple]:
    return [(n.name, n.state, n.cpus, n.gpus, n.gpu_type, n.cpus_allocated, n.reason,
             node_verdicts(n.state)) for n in parse()]


PREEMPTED = "preempted by the scheduler"
OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm
    ("squeue: PREEMPTED ends; a Chinese name; the older gpu:tesla:2 on 2 nodes is 4 GPUs",
     lambda: squeue("native_id", "state", "name", "nodes", "gpus", "walltime_s", "reason")[0],
     ("6001", "FAILED", "模拟-run", 2, 4, 86400, PREEMPTED)),
    ("squeue: DEADLINE a timeout; BOOT_FAIL never started, said",
     lambda: squeue("native_id", "state", "started_at", "reason")[1:3],
     [("6002", "TIMEOUT", at(2026, 12, 6, 5), "DeadLine"),
      ("6003", "FAILED", None, "the node failed to boot")]),
    ("squeue: REQUEUE_HOLD and SPECIAL_EXIT wait; STAGE_OUT still holds its node",
     lambda: squeue("native_id", "state", "native_state", "reason", "node_list")[3:6],
     [("6004", "PENDING", "REQUEUE_HOLD", "JobHeldAdmin", None),
      ("6005", "PENDING", "SPECIAL_EXIT", SPECIAL_EXIT_HELD, None),
      ("6006", "RUNNING", "STAGE_OUT", None, "c13")]),
    ("squeue: a throttled list array waits as one record under its expression",
     lambda: squeue("native_id", "state", "walltime_s", "reason")[6],
     ("6007_[3,7-9%2]", "PENDING", 900, "JobArrayTaskLimit")),
    ("squeue: a day in the time used; a NOT_SET limit is none",
     lambda: rows(slurm.parse_status(
         "9001|RUNNING|2026-12-05T05:00:00|2026-12-08T05:00:00|2026-12-05T04:00:00|3-00:00:00|1|"
         "1|u|cpu|N/A|c1|None|(null)|1-02:03:04|d\n"
         "9002|PENDING|N/A|N/A|2026-12-05T04:00:00|NOT_SET|1|1|u|cpu|N/A||Priority|(null)|0:00|"
         "ns\n", []), "native_id", "walltime_s", "time_used_s"),
     [("9001", 3 * 86400, 86400 + 2 * 3600 + 3 * 60 + 4), ("9002", None, 0)]),
    ("sacct: a cancel by uid 1234 with SIGTERM; NODE_FAIL; a timeout 2 s over; exit 2",
     lambda: ended(slurm.parse_accounting(SACCT, []))[:4],
     [("7001", "CANCELLED", 143, "cancelled by uid 1234"),
      ("7002", "FAILED", None, "the node failed"), ("7003", "TIMEOUT", 0, None),
      ("7004", "FAILED", 2, None)]),
    ("sacct: PREEMPTED; a DEADLINE job that never started; a job that ended as it began",
     lambda: sacct("native_id", "state", "started_at", "ended_at", "node_list", "reason")[4:],
     [("7005", "FAILED", at(2026, 12, 6, 1), at(2026, 12, 6, 1, 20), "c05", PREEMPTED),
      ("7006", "TIMEOUT", None, at(2026, 12, 6, 1), None, None),
      ("7007", "COMPLETED", at(2026, 12, 6, 1), at(2026, 12, 6, 1), "c06", None)]),
    ("squeue --json v0.0.41: flags beside the state; an unset limit none; 8 GPUs a node on 4",
     lambda: rows(slurm.parse_status_json(SQUEUE_JSON_2405, []), "native_id", "state",
                  "native_state", "walltime_s", "cpus", "gpus", "estimated_start")[:2],
     [("8001", "PENDING", "PENDING+REQUEUED", None, 2, None, at(2026, 12, 7)),
      ("8002", "RUNNING", "RUNNING+COMPLETING", 2880 * 60, 4096, 32, None)]),
    ("squeue --json v0.0.41: SIGKILL with an unset return code is 137",
     lambda: ended(slurm.parse_status_json(SQUEUE_JSON_2405, []))[2],
     ("8003", "FAILED", 137, None)),
    ("sinfo: planned takes jobs; inval, future, maint, draining@, fail, down$ none; reboot^ "
     "returns",
     lambda: [(n.state, n.cpus_allocated, node_verdicts(n.state))
              for n in slurm.parse_sinfo_nodes(SINFO, [])],
     [("planned", 0, (True, None)), ("inval", 0, (False, None)), ("future", 0, (False, None)),
      ("reboot^", 0, (False, (60.0, True))), ("maint", 0, (False, None)),
      ("draining@", 64, (False, None)), ("fail", 0, (False, None)),
      ("down$", 0, (False, None))]),
    ("scontrol node: a powered-down cloud node of 8 H100s (S:0-1) returns; a reboot drain not",
     lambda: nodes_seen(lambda: slurm.parse_nodes(SCONTROL, [])),
     [("x01", "idle+cloud+powered_down", 384, 8, "nvidia_h100_80gb_hbm3", 0, None,
       (True, (60.0, False))),
      ("x02", "allocated+drain+reboot_requested", 128, 0, None, 128, "kernel update",
       (False, None))]),
    # PBS Pro
    ("qstat -F json: S and U suspended on their nodes; T moving waits; W waits for its time",
     lambda: rows(pbs.parse_status(PBS_JOBS, []), "native_id", "state", "nodes", "cpus",
                  "walltime_s", "estimated_start")[:4],
     [("300.s", "RUNNING", 1, 8, 36000, None), ("301.s", "RUNNING", None, None, None, None),
      ("302.s", "PENDING", None, None, None, None),
      ("303.s", "PENDING", None, None, None, at(2026, 12, 7, 6))]),
    ("qstat -F json: 265 is SIGKILL; GPUs of a select's chunks; held by u, o and s",
     lambda: ended(pbs.parse_status(PBS_JOBS, []))[4:]
     + rows(pbs.parse_status(PBS_JOBS, [])[4:5], "gpus", "walltime_s"),
     [("304.s", "FAILED", 137, "killed by signal 9"), ("305.s", "PENDING", None, "held (uos)"),
      (2, 48 * 3600)]),
    # Torque
    ("Torque XML: T waits; S holds its node; -11 the walltime; -10 the memory",
     lambda: ended(torque.parse_status(TORQUE_XML, []))[:4],
     [("2001.t", "PENDING", None, None), ("2002.t", "RUNNING", None, None),
      ("2003.t", "TIMEOUT", -11, "killed by PBS: walltime exceeded"),
      ("2004.t", "FAILED", -10, "out of memory: the job used more than the memory it was "
       "given (killed by PBS over its memory limit, Exit_status -10)")]),
    ("Torque XML: an escaped emoji name; nodes=4:ppn=28 is 112 CPUs; 59 seconds",
     lambda: rows(torque.parse_status(TORQUE_XML, []), "name", "nodes", "cpus",
                  "walltime_s")[4],
     ("🚀 launch", 4, 112, 59)),
    # LSF
    ("bjobs -json: USUSP and SSUSP hold their hosts; ZOMBI unknown; WAIT pending",
     lambda: rows(lsf.parse_status(BJOBS, []), "native_id", "state", "node_list",
                  "reason")[:3] + rows(lsf.parse_status(BJOBS, []), "native_id", "state")[4:5],
     [("9001", "RUNNING", "h1", None),
      ("9002", "RUNNING", "h2", "Job was suspended due to load"),
      ("9003", "UNKNOWN", None, None), ("9005", "PENDING")]),
    ("bjobs -json: a preemption's kill said; 128 slots on 2 hosts, a '-' limit none; a limit "
     "normalized to a host",
     lambda: ended(lsf.parse_status(BJOBS, []))[3:4]
     + rows(lsf.parse_status(BJOBS, []), "native_id", "nodes", "cpus", "walltime_s",
            "started_at")[5:],
     [("9004", "FAILED", None, "TERM_PREEMPT: job killed after preemption"),
      ("9006", 2, 128, None, at(2026, 12, 6, 8)), ("9007", 1, None, 3600,
                                                   at(2026, 12, 6, 8, 30))]),
    # Flux
    ("flux jobs: PRIORITY waits; a timeout by SIGKILL is 137; a success 0",
     lambda: ended(flux.parse_status(FLUX_JOBS, []))[:3],
     [("6001", "PENDING", None, None),
      ("6002", "TIMEOUT", 137, "timeout: resource allocation expired"),
      ("6003", "COMPLETED", 0, None)]),
    ("flux jobs: no duration is no limit; an expiration 2 h after the start; a segfault 139 "
     "killed by signal 11",
     lambda: rows(flux.parse_status(FLUX_JOBS, []), "native_id", "state", "walltime_s",
                  "exit_code", "reason")[3:],
     [("6004", "RUNNING", None, None, None), ("6006", "RUNNING", 7200, None, None),
      ("6005", "FAILED", None, 139, "killed by signal 11")]),
    # Grid Engine
    ("qstat -xml: dt being deleted; Rr on 64 slots of mpi.q; Eqw said; hRwq held",
     lambda: rows(sge.parse_status(QSTAT_XML, []), "native_id", "state", "partition", "cpus",
                  "reason")[:4],
     [("21", "RUNNING", "all.q", 1, "being deleted"), ("22", "RUNNING", "mpi.q", 64, None),
      ("23", "PENDING", None, 1,
       "error state (Eqw): `qstat -j` says why; it runs only after `qmod -cj`"),
      ("24", "PENDING", None, 1, "held (hRwq)")]),
    ("qstat -xml: an escaped name and a CDATA one; no <slots> is no CPU count",
     lambda: rows(sge.parse_status(QSTAT_XML, []), "native_id", "name", "cpus")[4:],
     [("25", "Tâche & co", 1), ("26", "a<b", 4), ("27", "n", None)]),
    ("qacct -j: 152 is SIGXCPU; failed 37 a limit's kill; failed 1 no exit code; a task",
     lambda: ended(sge.parse_accounting(QACCT, [])),
     [("31", "FAILED", 152, "killed by signal 24"),
      ("32", "TIMEOUT", 137, "time or memory limit (qmaster enforced h_rt, h_cpu, or h_vmem "
       "limit)"),
      ("33", "FAILED", None, "Grid Engine failed the job (1: assumedly before job)"),
      ("34.7", "FAILED", 1, "exit code 1")]),
]


test_output_read, test_the_sweep_has_twenty_outputs = sweep_output_tests(OUTPUTS)


# ------------------------------------------ follow-ups: a flux signal, Slurm's SPECIAL_EXIT

@pytest.mark.parametrize(("fields", "reason"), [
    ({"waitstatus": 139, "returncode": 139}, "killed by signal 11"),  # SIGSEGV, core dumped
    ({"waitstatus": 9}, "killed by signal 9"),
    ({"signaled": 15, "returncode": 143}, "killed by signal 15"),
    ({"waitstatus": 139 << 8, "returncode": 139}, None),  # the program's own exit(139)
    ({"returncode": 139}, None),  # no wait status: an exit's 139 or a signal's, unsaid
])
def test_a_flux_job_killed_by_a_signal_says_which(fields: dict, reason: str | None):
    """Before: flux's wait status gave exit 139 and no reason, unlike PBS and Grid Engine."""
    job = {"id": 7001, "state": "INACTIVE", "result": "FAILED", "name": "j", **fields}
    read = flux.parse_status(json.dumps({"jobs": [job]}), [])[0]
    assert (read.state.value, read.reason) == ("FAILED", reason)
    assert reason is None or scheduler_sentence(reason)  # the engine's words, not the job's


def test_special_exit_says_it_is_held_and_what_frees_it():
    """Before: SPECIAL_EXIT read as pending with no reason."""
    read = slurm.parse_status(SQUEUE, [])[4]
    assert read.native_state == "SPECIAL_EXIT" and says_held(read.reason), read.reason
    assert "scontrol release" in (read.reason or "") and "special" in (read.reason or "")
    json_read = slurm.parse_status_json(json.dumps({"jobs": [
        {"job_id": 6005, "job_state": ["SPECIAL_EXIT"], "name": "se"}]}), [])[0]
    assert json_read.reason == SPECIAL_EXIT_HELD
