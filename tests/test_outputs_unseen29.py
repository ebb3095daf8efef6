"""Sweep 29 of scheduler outputs: outputs written here in the forms each scheduler documents
(Slurm 20.11-24.05 `squeue`, `squeue --json` of openapi v0.0.36 and v0.0.39, `sacct -P`,
`sinfo`, `scontrol show node -o`; PBS Pro 2022 `qstat -f -F json` and `pbsnodes -av -F
json`; Torque `qstat -f -x`; LSF 10.1 `bjobs -o -json`, `bhosts -json` and `bhist -l`;
flux-core `flux jobs --json`; Grid Engine `qstat -xml` with its schema attribute and `qacct
-j` of SGE and of Open Cluster Scheduler 9), none captured and none met by sweeps 1-28:
states they rarely print (SPECIAL_EXIT, STAGE_OUT, RESV_DEL_HOLD, RESIZING, NODE_FAIL,
BOOT_FAIL, DEADLINE; sinfo's planned, inval, reboot^, down$, idle#, draining@; FUTURE and
REBOOT_REQUESTED nodes; PBS H, W, T, U; LSF PSUSP, SSUSP, ZOMBI, WAIT, closed_Wind,
closed_LIM; flux PRIORITY; Grid Engine S, T, dt, hr), huge counts (a million CPUs, 1024
nodes, a year's limit, a million array tasks), names in Cyrillic, Japanese and emoji, a
node reason holding `=`, plain 32-bit INFINITE and NO_VAL of an old squeue --json. Each
row of OUTPUTS is one output and what a user would read from it; the focused tests after
it are the faults this sweep found (each failed before): `qacct -j` of Open Cluster
Scheduler 9 prints its dates as `2026-12-06 08:00:00.654321`, which was read as no date
at all (a finished job with no start or end, nothing said); a qacct date of a form no
version prints is now said in the job's reason rather than left out unsaid."""

from __future__ import annotations

import json

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

from diamond_jupyter.dialects.slurm_commands import SPECIAL_EXIT_HELD

# -- Slurm ------------------------------------------------------------------------------------

# squeue records of SQUEUE_FIELDS: states squeue rarely prints, a year's limit, 1024 nodes of a
# million CPUs, a Cyrillic name and user, an array's pending tasks under a throttle
SQUEUE = "\n".join([
    "1201|SPECIAL_EXIT|N/A|N/A|2026-12-06T07:00:00|365-00:00:00|1|1|ана|cpu|N/A||"
    "launch failed requeued held|(null)|0:00|расчёт",
    "1202|STAGE_OUT|2026-12-06T06:00:00|2026-12-06T08:00:00|2026-12-06T05:59:00|2:00:00|1024|"
    "1048576|u|big|N/A|n[0001-1024]|None|(null)|1-23:59:59|huge",
    "1203|RESV_DEL_HOLD|N/A|N/A|2026-12-06T07:00:00|1:00:00|1|4|u|cpu|N/A||ReservationDeleted|"
    "(null)|0:00|r",
    "1204_[3-9%2]|PENDING|2026-12-07T01:00:00|N/A|2026-12-06T07:00:00|30:00|1|1|u|cpu|"
    "gres/gpu:h100:2||JobArrayTaskLimit|(null)|0:00|arr",
    "1205|RESIZING|2026-12-06T06:00:00|2026-12-06T10:00:00|2026-12-06T05:00:00|4:00:00|2|64|u|"
    "cpu|N/A|c[01-02]|None|(null)|2:00:00|grow",
]) + "\n"

# `squeue --json` of Slurm 20.11 (openapi v0.0.36): plain numbers, INFINITE (4294967295) and
# NO_VAL (4294967294) as they are, the exit code a wait status
SQUEUE_JSON_2011 = json.dumps({
    "meta": {"Slurm": {"version": {"major": 20, "micro": 8, "minor": 11}}}, "errors": [],
    "jobs": [
        {"job_id": 1301, "job_state": "COMPLETING", "name": "日本語ジョブ", "node_count": 2,
         "cpus": 8, "time_limit": 4294967295, "start_time": epoch(2026, 12, 6, 8),
         "submit_time": epoch(2026, 12, 6, 7, 50), "end_time": 0, "nodes": "n[1-2]",
         "state_reason": "None", "partition": "cpu", "user_name": "ana"},
        {"job_id": 1302, "job_state": "PENDING", "name": "w", "node_count": 1, "cpus": 1,
         "time_limit": 4294967294, "start_time": 0, "end_time": 0,
         "state_reason": "Dependency"},
        {"job_id": 1303, "job_state": "TIMEOUT", "name": "t", "node_count": 1, "cpus": 1,
         "time_limit": 30, "start_time": epoch(2026, 12, 6, 6),
         "end_time": epoch(2026, 12, 6, 6, 30), "exit_code": 15, "state_reason": "TimeLimit"},
    ]})

# `squeue --json` of Slurm 23.02 (v0.0.39): a signal's `signal_id`, a state with a flag, unset
# counts of a job not yet placed, a limit of a year in minutes
SQUEUE_JSON_2302 = json.dumps({"meta": {}, "errors": [], "warnings": [], "jobs": [
    {"job_id": 1401, "job_state": ["FAILED"], "name": "oom", "node_count": wrapped(1),
     "cpus": wrapped(4), "time_limit": wrapped(60), "start_time": wrapped(epoch(2026, 12, 6, 6)),
     "end_time": wrapped(epoch(2026, 12, 6, 6, 10)),
     "exit_code": {"status": ["SIGNALED"], "return_code": wrapped(0),
                   "signal": {"signal_id": wrapped(9), "name": "KILL"}},
     "state_reason": "OutOfMemory"},
    {"job_id": 1402, "job_state": ["RUNNING", "SIGNALING"], "name": "s",
     "node_count": wrapped(1), "cpus": wrapped(2), "time_limit": wrapped(0, set_=False),
     "start_time": wrapped(epoch(2026, 12, 6, 6))},
    {"job_id": 1403, "job_state": ["PENDING"], "name": "", "node_count": wrapped(0, set_=False),
     "cpus": wrapped(0, set_=False), "time_limit": wrapped(525600), "start_time": wrapped(0),
     "state_reason": "Priority"},
]})

# `sacct -X -P -n --format=SACCT_FIELDS`: endings sacct rarely prints; a batch step left out
SACCT = "\n".join([
    "1501|NODE_FAIL|0:0|2026-12-06T01:00:00|2026-12-06T02:00:00|c[07-08]|nf|1501",
    "1502|PREEMPTED|0:15|2026-12-06T01:00:00|2026-12-06T01:30:00|g01|pre|1502",
    "1503|BOOT_FAIL|0:0|None|2026-12-06T01:00:00|c09|boot|1503",
    "1504|DEADLINE|0:0|2026-12-06T01:00:00|2026-12-06T03:00:00|c10|dl|1504",
    "1505|REQUEUED|0:0|2026-12-06T01:00:00|2026-12-06T01:05:00|c11|rq|1505",
    "1506|FAILED|2:0|2026-12-06T01:00:00|2026-12-06T01:00:01|c12|Ωmega ✓|1506",
    "1506.batch|FAILED|2:0|2026-12-06T01:00:00|2026-12-06T01:00:01|c12|batch|1506.batch",
]) + "\n"

# `sacct -X -a -P -n --format=HISTORY_FIELDS`: a year's limit, a million CPUs, 4096 nodes
HISTORY = "\n".join([
    "1601|long|365-00:00:00|2026-12-01T00:00:00|2026-12-01T00:10:00|2026-12-06T00:00:00|"
    "1048576|4096|COMPLETED",
    "1603|cpu|1:00:00|2026-12-06T00:00:00|None|2026-12-06T00:00:05|2|1|CANCELLED by 0",
]) + "\n"

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'`: states with the marks few sites see, a
# node of 2048 CPUs and 3 TB, MI250X GPUs beside shards, a feature of a non-ASCII letter
SINFO = "\n".join([
    "x[001-004]|planned|128|512000|(null)|(null)|cpu*|0/512/0/512|infinite|4",
    "y01|inval|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "y02|reboot^|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "y03|down$|64|256000|(null)|(null)|cpu*|0/0/64/64|infinite|1",
    "y04|idle#|64|256000|(null)|(null)|cpu*|0/64/0/64|infinite|1",
    "y05|draining@|64|256000|(null)|(null)|cpu*|32/0/32/64|infinite|1",
    "z01|mixed|2048|3000000|gpu:mi250x:8(S:0-7),shard:mi250x:64|mi250x,ß-feature|gpu|"
    "1024/1024/0/2048|2-00:00:00|1",
]) + "\n"

# `scontrol show node -o`: a FUTURE node of Slurm's defaults, a powered-down cloud node of
# long-named H100s beside shards, a reboot asked of a busy node whose reason holds '='; a node
# of 256 CPUs of which 240 are effective (CoreSpecCount) and memory less MemSpecLimit
SCONTROL = "\n".join([
    "NodeName=f01 CoresPerSocket=1 CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=N/A "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=f01 NodeHostName=f01 "
    "RealMemory=1 AllocMem=0 FreeMem=N/A Sockets=1 Boards=1 State=FUTURE ThreadsPerCore=1 "
    "TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=cloud BootTime=None "
    "SlurmdStartTime=None",
    "NodeName=f02 Arch=x86_64 CoresPerSocket=48 CPUAlloc=0 CPUEfctv=96 CPUTot=96 CPULoad=0.01 "
    "AvailableFeatures=h100 ActiveFeatures=h100 Gres=gpu:h100:8(S:0-1),shard:h100:64(S:0-1) "
    "NodeAddr=f02 NodeHostName=f02 RealMemory=2063000 AllocMem=0 FreeMem=2000000 Sockets=2 "
    "Boards=1 State=IDLE+CLOUD+POWERED_DOWN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=gpu,gpu-long",
    "NodeName=f03 Arch=x86_64 CoresPerSocket=16 CPUAlloc=32 CPUEfctv=32 CPUTot=32 CPULoad=31.9 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=f03 NodeHostName=f03 "
    "RealMemory=128000 AllocMem=128000 FreeMem=1000 Sockets=2 Boards=1 "
    "State=ALLOCATED+REBOOT_REQUESTED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=cpu Reason=kernel=6.8 update [root@2026-12-06T05:00:00]",
    "NodeName=k01 Arch=x86_64 CoresPerSocket=64 CPUAlloc=0 CPUEfctv=240 CPUTot=256 "
    "CPULoad=0.00 AvailableFeatures=(null) ActiveFeatures=(null) "
    "Gres=gpu:nvidia_h100_80gb_hbm3:4(S:0-1) NodeAddr=k01 NodeHostName=k01 RealMemory=1031000 "
    "AllocMem=0 FreeMem=1000000 Sockets=2 Boards=1 CoreSpecCount=8 CPUSpecList=0-7,128-135 "
    "MemSpecLimit=16000 State=IDLE ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=gpu",
]) + "\n"

# -- PBS Pro and Torque -----------------------------------------------------------------------

PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2022.1.3", "pbs_server": "s", "Jobs": {
    "61.s": {"Job_Name": "held user", "job_state": "H", "Hold_Types": "u", "queue": "workq",
             "Resource_List": {"ncpus": 8, "nodect": 1, "walltime": "12:00:00",
                               "select": "1:ncpus=8"}},
    "62.s": {"Job_Name": "waits", "job_state": "W", "queue": "workq",
             "Execution_Time": "Mon Dec  7 06:00:00 2026",
             "Resource_List": {"ncpus": 1, "walltime": "00:05:00"}},
    "63.s": {"Job_Name": "transit", "job_state": "T", "queue": "workq"},
    "64.s": {"Job_Name": "susp", "job_state": "U", "queue": "workq",
             "stime": "Sun Dec  6 08:00:00 2026",
             "Resource_List": {"ncpus": 4, "walltime": "2:00:00"}},
    "65.s": {"Job_Name": "ok", "job_state": "F", "Exit_status": 0, "queue": "workq",
             "stime": "Sun Dec  6 08:00:00 2026", "obittime": "Sun Dec  6 08:20:00 2026",
             "Resource_List": {"ncpus": 1, "walltime": "1440:00:00"}},
    "67.s": {"Job_Name": "segv", "job_state": "F", "Exit_status": 267, "queue": "workq",
             "stime": "Sun Dec  6 08:00:00 2026", "obittime": "Sun Dec  6 08:01:00 2026"},
    "68.s": {"Job_Name": "mem kill", "job_state": "F", "Exit_status": -27, "queue": "workq"},
    "71.s": {"Job_Name": "wide", "job_state": "R", "exec_host": "n001/0*128+n002/0*128",
             "exec_vnode": "(n001:ncpus=128)+(n002:ncpus=128)",
             "Resource_List": {"ncpus": 256, "nodect": 2, "walltime": "720:00:00"},
             "stime": "Sun Dec  6 08:00:00 2026"},
}})

# `pbsnodes -av -F json`: a node of no CPUs in state-unknown, one of 256 CPUs and 2 TB,
# nodes being provisioned and under maintenance
PBSNODES = json.dumps({"pbs_version": "2022.1.3", "pbs_server": "s", "nodes": {
    "v001": {"Mom": "v001", "state": "state-unknown,down", "pcpus": 0,
             "resources_available": {"host": "v001", "ncpus": 0, "mem": "0kb", "vnode": "v001"}},
    "v002": {"Mom": "v002", "state": "free", "pcpus": 256,
             "resources_available": {"host": "v002", "ncpus": 256, "mem": "2097152mb",
                                     "ngpus": 8, "vnode": "v002"},
             "resources_assigned": {"ncpus": 17, "ngpus": 1, "mem": "65536mb"}},
    "v003": {"Mom": "v003", "state": "provisioning", "pcpus": 64,
             "resources_available": {"host": "v003", "ncpus": 64, "mem": "256gb"}},
}})

# Torque `qstat -f -x`: an array of 100000 under a throttle, a walltime kill (-11), a German
# name, a suspended job, SIGKILL as 265, a completed job that printed no exit status
TORQUE_XML = (
    '<?xml version="1.0"?>\n<Data>'
    "<Job><Job_Id>900[].t</Job_Id><Job_Name>arr</Job_Name><job_state>Q</job_state>"
    "<Resource_List><walltime>00:30:00</walltime><nodes>1:ppn=2</nodes></Resource_List>"
    "<job_array_request>1-100000%5</job_array_request></Job>\n"
    "<Job><Job_Id>901.t</Job_Id><Job_Name>Überlauf</Job_Name><job_state>C</job_state>"
    f"<exit_status>-11</exit_status><start_time>{epoch(2026, 12, 6, 8)}</start_time>"
    f"<comp_time>{epoch(2026, 12, 6, 9)}</comp_time></Job>\n"
    "<Job><Job_Id>902.t</Job_Id><Job_Name>s</Job_Name><job_state>S</job_state>"
    f"<start_time>{epoch(2026, 12, 6, 8)}</start_time></Job>\n"
    "<Job><Job_Id>903.t</Job_Id><Job_Name>c0</Job_Name><job_state>C</job_state>"
    "<exit_status>265</exit_status></Job>\n"
    "<Job><Job_Id>904.t</Job_Id><job_state>C</job_state></Job>\n"
    "</Data>")

# -- LSF --------------------------------------------------------------------------------------

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 7, "RECORDS": [
    {"JOBID": "8001", "STAT": "PSUSP", "JOB_NAME": "ps", "SUBMIT_TIME": "Dec  6 08:00"},
    {"JOBID": "8002", "STAT": "SSUSP", "JOB_NAME": "ss", "START_TIME": "Dec  6 08:00",
     "EXEC_HOST": "h1:h1:h2", "SLOTS": "3"},
    {"JOBID": "8003", "STAT": "ZOMBI", "JOB_NAME": "z"},
    {"JOBID": "8004", "STAT": "WAIT", "JOB_NAME": "w"},
    {"JOBID": "8005", "STAT": "EXIT", "JOB_NAME": "проба", "EXIT_CODE": "139",
     "EXIT_REASON": "", "START_TIME": "Dec  6 08:00", "FINISH_TIME": "Dec  6 08:01",
     "EXEC_HOST": "64*h3", "SLOTS": "64"},
    {"JOBID": "8006", "STAT": "RUN", "JOB_NAME": "lim", "RUNTIMELIMIT": "2880.0 min",
     "START_TIME": "Dec  6 08:00", "EXEC_HOST": "h4"},
    {"JOBID": "8007", "STAT": "EXIT", "JOB_NAME": "cpu", "EXIT_CODE": "152",
     "EXIT_REASON": "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit"},
    {"JOBID": "9001", "STAT": "DONE", "SUBMIT_TIME": "Dec  6 08:00 2026",
     "START_TIME": "Dec  6 08:01 2026", "FINISH_TIME": "Dec  6 08:30 2026", "EXIT_CODE": "-"},
]})

BHOSTS = json.dumps({"COMMAND": "bhosts", "HOSTS": 4, "RECORDS": [
    {"HOST_NAME": "h1", "STATUS": "closed_Wind", "MAX": "48", "NJOBS": "0", "RUN": "0"},
    {"HOST_NAME": "h2", "STATUS": "closed_LIM", "MAX": "48", "NJOBS": "0", "RUN": "0"},
    {"HOST_NAME": "h4", "STATUS": "ok", "MAX": "100000", "NJOBS": "99999", "RUN": "99999"},
]})

# `bhist -l`: an array element on two hosts exiting 139, CPU-limit kill by signal 24 (SIGXCPU),
# a job requeued and pending again
BHIST = """Job <4201[3]>, Job Name <sweep[3]>, User <ana>, Project <default>, Command <./s
                     weep>
Sun Dec  6 06:00:00: Submitted from host <login>, to Queue <normal>, CWD <$HOME>;
Sun Dec  6 06:00:02: Dispatched 2 Task(s) on Host(s) <n1> <n2>, Allocated 2 Slot(s) on Host(s)
                      <n1> <n2>;
Sun Dec  6 06:00:02: Starting (Pid 11);
Sun Dec  6 06:10:02: Exited with exit code 139. The CPU time used is 1.0 seconds;
Sun Dec  6 06:10:02: Completed <exit>;
------------------------------------------------------------------------------

Job <4202>, Job Name <Ωmega cpu>, User <ana>, Project <default>, Command <./c>
Sun Dec  6 06:00:00: Submitted from host <login>, to Queue <normal>, CWD <$HOME>;
Sun Dec  6 06:00:02: Dispatched to <n3>;
Sun Dec  6 06:00:02: Starting (Pid 12);
Sun Dec  6 07:00:02: Exited by signal 24. The CPU time used is 3600.0 seconds;
Sun Dec  6 07:00:02: Completed <exit>; TERM_CPULIMIT: job killed after reaching LSF CPU usage
                      limit.
------------------------------------------------------------------------------

Job <4203>, Job Name <rq>, User <ana>, Project <default>, Command <./r>
Sun Dec  6 06:00:00: Submitted from host <login>, to Queue <normal>, CWD <$HOME>;
Sun Dec  6 06:00:02: Dispatched to <n4>;
Sun Dec  6 06:00:02: Starting (Pid 13);
Sun Dec  6 06:05:00: Job has been requeued;
Sun Dec  6 06:05:01: Pending: Job has been requeued;
------------------------------------------------------------------------------
"""

# -- Flux -------------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 3000, "state": "PRIORITY", "name": "prio"},
    {"id": 3002, "state": "INACTIVE", "result": "FAILED", "returncode": 137, "waitstatus": 9,
     "name": "k", "t_run": epoch(2026, 12, 6, 6), "t_inactive": epoch(2026, 12, 6, 6, 1),
     "nodelist": "x[1-2]", "nnodes": 2, "ntasks": 4},
    {"id": 3004, "state": "RUN", "name": "名前", "t_run": epoch(2026, 12, 6, 6),
     "expiration": epoch(2026, 12, 6, 7), "nodelist": "", "nnodes": 0},
    {"id": 3005, "state": "INACTIVE", "result": "COMPLETED", "returncode": 0,
     "t_run": epoch(2026, 12, 6, 6), "t_cleanup": epoch(2026, 12, 6, 6, 1, 40)},
    {"id": 4001, "state": "SCHED", "urgency": 31, "name": "exp", "t_submit": epoch(2026, 12, 6)},
    {"id": 4003, "state": "INACTIVE", "result": "TIMEOUT", "t_run": epoch(2026, 12, 6, 6),
     "t_inactive": epoch(2026, 12, 6, 7), "returncode": 142,
     "exception": {"occurred": True, "severity": 0, "type": "timeout",
                   "note": "resource allocation expired"}},
]})

# -- Grid Engine ------------------------------------------------------------------------------


# `qstat -xml` as SGE 6.2 prints it, its root holding the schema's attribute: queue and
# threshold suspension, a deletion of a suspended job, a hold on a running one; a million
# tasks waiting in error; escaped markup and an emoji in a name
QSTAT_XML = (
    "<?xml version='1.0'?>\n<job_info  xmlns:xsd=\"http://gridengine.sunsource.net/source/"
    "browse/*checkout*/gridengine/source/dist/util/resources/schemas/qstat/qstat.xsd"
    "?revision=1.11\">\n<queue_info>"
    + sge_job_xml(701, "S", "qsusp", queue="all.q@n1")
    + sge_job_xml(702, "T", "thr", queue="all.q@n2")
    + sge_job_xml(703, "dt", "dt", queue="all.q@n3")
    + sge_job_xml(704, "hr", "hr", queue="all.q@n4")
    + sge_job_xml(711, "r", "&lt;script&gt; &#x1F600;", slots=16, queue="all.q@n1.example.org")
    + "</queue_info><job_info>" + sge_job_xml(705, "Eqw", "模拟", tasks="1-1000000:1")
    + "</job_info></job_info>\n")


# `qacct -j` of SGE 8.1: an h_rt kill (failed 37), a job failed before it started
QACCT = qacct(
    qacct_record(801, "rt", "Sun Dec  6 07:00:00 2026", "Sun Dec  6 08:00:00 2026",
         "Sun Dec  6 09:00:00 2026", "slots        4",
         "failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit", "exit_status  137"),
    qacct_record(802, "never", "Sun Dec  6 07:00:00 2026", "-/-", "-/-", "slots        1",
         "failed       1    : assumedly before job", "exit_status  0"))

# `qacct -j` of Open Cluster Scheduler 9.0 (sge_ctime64: ISO dates with microseconds)
QACCT_OCS = qacct(qacct_record(
    901, "iso", "2026-12-06 07:00:00.123456", "2026-12-06 08:00:00.654321",
    "2026-12-06 09:00:00.000000", "granted_pe   mpi", "slots        32",
    "failed       0", "exit_status  0", "ru_wallclock 3600", "wallclock    3600.002"))


def jobs(rows) -> list[tuple]:
    return [(j.native_id, j.state.value, j.name, j.nodes, j.cpus, j.walltime_s, j.node_list)
            for j in rows]


OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm
    ("squeue: SPECIAL_EXIT waits with its reason; a year's limit; a Cyrillic name",
     lambda: [(j.state.value, j.name, j.walltime_s, j.reason, j.user)
              for j in slurm.parse_status(SQUEUE, [])][0],
     ("PENDING", "расчёт", 365 * 86400,
      f"{SPECIAL_EXIT_HELD} (launch failed requeued held)", "ана")),
    ("squeue: STAGE_OUT runs; 1024 nodes of 1048576 CPUs; a day's run time",
     lambda: [(j.state.value, j.name, j.nodes, j.cpus, j.walltime_s, j.node_list, j.time_used_s)
              for j in slurm.parse_status(SQUEUE, [])][1],
     ("RUNNING", "huge", 1024, 1048576, 7200, "n[0001-1024]", 86400 + 86399)),
    ("squeue: RESV_DEL_HOLD waits; RESIZING runs",
     lambda: [(j.state.value, j.reason) for j in slurm.parse_status(SQUEUE, [])][2::2],
     [("PENDING", "ReservationDeleted"), ("RUNNING", None)]),
    ("squeue: an array's throttled tasks wait, expected to start, two H100s a node",
     lambda: [(j.native_id, j.state.value, j.reason, j.gpus, j.estimated_start)
              for j in slurm.parse_status(SQUEUE, [])][3],
     ("1204_[3-9%2]", "PENDING", "JobArrayTaskLimit", 2, at(2026, 12, 7, 1))),
    ("squeue --json 20.11: COMPLETING runs; plain INFINITE is no limit; a Japanese name",
     lambda: [(j.state.value, j.name, j.nodes, j.cpus, j.walltime_s, j.started_at)
              for j in slurm.parse_status_json(SQUEUE_JSON_2011, [])][0],
     ("RUNNING", "日本語ジョブ", 2, 8, None, at(2026, 12, 6, 8))),
    ("squeue --json 20.11: plain NO_VAL is no limit; a wait status 15 is SIGTERM",
     lambda: [(j.walltime_s, j.reason) for j in slurm.parse_status_json(SQUEUE_JSON_2011, [])]
     [1:] + ended(slurm.parse_status_json(SQUEUE_JSON_2011, []))[2:],
     [(None, "Dependency"), (1800, "TimeLimit"), ("1303", "TIMEOUT", 143, "TimeLimit")]),
    ("squeue --json 23.02: SIGKILL's signal_id is 137; SIGNALING runs; unset counts unknown",
     lambda: [(j.state.value, j.exit_code, j.nodes, j.cpus, j.walltime_s)
              for j in slurm.parse_status_json(SQUEUE_JSON_2302, [])],
     [("FAILED", 137, 1, 4, 3600), ("RUNNING", None, 1, 2, None),
      ("PENDING", None, None, None, 365 * 86400)]),
    ("sacct: NODE_FAIL, PREEMPTED, BOOT_FAIL fail with their reasons; a batch step left out",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.reason, j.started_at)
              for j in slurm.parse_accounting(SACCT, [])][:3],
     [("1501", "FAILED", None, "the node failed", at(2026, 12, 6, 1)),
      ("1502", "FAILED", 143, "preempted by the scheduler", at(2026, 12, 6, 1)),
      ("1503", "FAILED", None, "the node failed to boot", None)]),
    ("sacct: DEADLINE times out; REQUEUED waits again; exit 2 of a Greek name",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.name, j.started_at)
              for j in slurm.parse_accounting(SACCT, [])][3:],
     [("1504", "TIMEOUT", 0, "dl", at(2026, 12, 6, 1)), ("1505", "PENDING", None, "rq", None),
      ("1506", "FAILED", 2, "Ωmega ✓", at(2026, 12, 6, 1))]),
    ("sacct history: a year's limit, a million CPUs; a cancel before it started",
     lambda: [(j.state.value, j.walltime_s, j.cpus, j.nodes, j.started_at)
              for j in slurm.parse_history(HISTORY, [])],
     [("COMPLETED", 365 * 86400, 1048576, 4096, at(2026, 12, 1, 0, 10)),
      ("CANCELLED", 3600, 2, 1, None)]),
    ("sinfo: planned takes jobs; inval, down$ and draining@ none; reboot^ and idle# return",
     lambda: [(n.state, n.cpus, node_verdicts(n.state))
              for n in slurm.parse_sinfo_nodes(SINFO, [])][:6],
     [("planned", 128, (True, None)), ("inval", 64, (False, None)),
      ("reboot^", 64, (False, (60.0, True))), ("down$", 64, (False, None)),
      ("idle#", 64, (True, (60.0, False))), ("draining@", 64, (False, None))]),
    ("sinfo: 2048 CPUs and 3 TB, 8 MI250X beside shards, a feature 'ß-feature'",
     lambda: [(n.cpus, n.memory_mb, n.gpus, n.gpu_type, n.cpus_allocated, n.features)
              for n in slurm.parse_sinfo_nodes(SINFO, [])][6],
     (2048, 3000000, 8, "mi250x", 1024, ["mi250x", "ß-feature"])),
    ("scontrol node: FUTURE takes no job; a powered-down cloud node of 8 H100s does",
     lambda: [(n.name, n.state, n.gpus, n.gpu_type, n.partitions, node_verdicts(n.state)[0])
              for n in slurm.parse_nodes(SCONTROL, [])][:2],
     [("f01", "future", 0, None, ["cloud"], False),
      ("f02", "idle+cloud+powered_down", 8, "h100", ["gpu", "gpu-long"], True)]),
    ("scontrol node: a reason holding '=' kept whole; REBOOT_REQUESTED still busy",
     lambda: [(n.state, n.reason, n.cpus_allocated) for n in slurm.parse_nodes(SCONTROL, [])][2],
     ("allocated+reboot_requested", "kernel=6.8 update", 32)),
    ("scontrol node: 240 effective CPUs of 256; memory less MemSpecLimit; a long GPU type",
     lambda: [(n.cpus, n.memory_mb, n.gpus, n.gpu_type)
              for n in slurm.parse_nodes(SCONTROL, [])][3],
     (240, 1031000 - 16000, 4, "nvidia_h100_80gb_hbm3")),
    # PBS Pro
    ("qstat -F json: a user hold, a wait for its start time, a job in transit",
     lambda: [(j.state.value, j.reason, j.walltime_s) for j in pbs.parse_status(PBS_JOBS, [])]
     [:3],
     [("PENDING", "held (u)", 43200), ("PENDING", "waiting for its start time (qsub -a)", 300),
      ("PENDING", None, None)]),
    ("qstat -F json: U (suspended by its user) still runs; 1440 hours finished fine",
     lambda: [(j.state.value, j.walltime_s, j.exit_code, j.started_at, j.ended_at)
              for j in pbs.parse_status(PBS_JOBS, [])][3:5],
     [("RUNNING", 7200, None, at(2026, 12, 6, 8), None),
      ("COMPLETED", 1440 * 3600, 0, at(2026, 12, 6, 8), at(2026, 12, 6, 8, 20))]),
    ("qstat -F json: 267 is SIGSEGV (139); -27 a memory kill, said so",
     lambda: ended(pbs.parse_status(PBS_JOBS, []))[5:7],
     [("67.s", "FAILED", 139, "killed by signal 11"),
      ("68.s", "FAILED", -27, "out of memory: the job used more than the memory it was given "
                              "(killed by PBS over its mem limit, Exit_status -27)")]),
    ("qstat -F json: two chunks of 128 CPUs, a 30-day walltime",
     lambda: jobs(pbs.parse_status(PBS_JOBS, []))[7],
     ("71.s", "RUNNING", "wide", 2, 256, 720 * 3600, "n001/0*128+n002/0*128")),
    ("pbsnodes json: state-unknown of 0 CPUs; 256 CPUs and 2 TB, 17 in use; provisioning",
     lambda: [(n.name, n.state, n.cpus, n.memory_mb, n.gpus, n.cpus_allocated)
              for n in pbs.parse_nodes(PBSNODES, [])],
     [("v001", "state-unknown,down", 0, 0, 0, 0), ("v002", "free", 256, 2097152, 8, 17),
      ("v003", "provisioning", 64, 262144, 0, 0)]),
    # Torque
    ("Torque XML: an array of 100000 waits as one; -11 is Torque's walltime kill",
     lambda: [(j.native_id, j.state.value, j.name, j.reason, j.walltime_s)
              for j in torque.parse_status(TORQUE_XML, [])][:2],
     [("900[].t", "PENDING", "arr", None, 1800),
      ("901.t", "TIMEOUT", "Überlauf", "killed by PBS: walltime exceeded", None)]),
    ("Torque XML: S runs; 265 is SIGKILL; C without an exit status is not known",
     lambda: ended(torque.parse_status(TORQUE_XML, []))[2:],
     [("902.t", "RUNNING", None, None), ("903.t", "FAILED", 137, "killed by signal 9"),
      ("904.t", "UNKNOWN", None, None)]),
    # LSF
    ("bjobs -json: PSUSP is held; SSUSP runs on 2 hosts of 3 slots; ZOMBI unknown; WAIT waits",
     lambda: [(j.state.value, j.reason, j.nodes, j.cpus)
              for j in lsf.parse_status(BJOBS, [])][:4],
     [("PENDING", "held (PSUSP)", None, None), ("RUNNING", None, 2, 3),
      ("UNKNOWN", None, None, None), ("PENDING", None, None, None)]),
    ("bjobs -json: exit 139 of a Cyrillic name on 64 slots; a 2880-minute limit",
     lambda: [(j.state.value, j.name, j.exit_code, j.nodes, j.cpus, j.walltime_s)
              for j in lsf.parse_status(BJOBS, [])][4:6],
     [("FAILED", "проба", 139, 1, 64, None), ("RUNNING", "lim", None, 1, None, 172800)]),
    ("bjobs -json: TERM_CPULIMIT fails with 152; times printed with their year read",
     lambda: [(j.state.value, j.exit_code, j.started_at, j.ended_at)
              for j in lsf.parse_status(BJOBS, [])][6:],
     [("FAILED", 152, None, None),
      ("COMPLETED", 0, at(2026, 12, 6, 8, 1), at(2026, 12, 6, 8, 30))]),
    ("bhosts -json: closed_Wind opens again, closed_LIM does not; 100000 slots",
     lambda: [(n.state, n.cpus, n.cpus_allocated, node_verdicts(n.state)[0])
              for n in lsf.parse_hosts(BHOSTS, "", [])],
     [("closed_wind", 48, 48, True), ("closed_lim", 48, 48, False), ("ok", 100000, 99999, True)]),
    ("bhist -l: an array element exits 139; SIGXCPU at the CPU limit; requeued waits",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.reason, j.ended_at)
              for j in lsf.parse_accounting(BHIST, [])],
     [("4201[3]", "FAILED", 139, None, at(2026, 12, 6, 6, 10, 2)),
      ("4202", "FAILED", 152, "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit",
       at(2026, 12, 6, 7, 0, 2)),
      ("4203", "PENDING", None, None, None)]),
    # Flux
    ("flux jobs: PRIORITY waits; FAILED by SIGKILL on two nodes",
     lambda: [(j.state.value, j.exit_code, j.nodes, j.node_list, j.ended_at)
              for j in flux.parse_status(FLUX_JOBS, [])][:2],
     [("PENDING", None, None, None, None),
      ("FAILED", 137, 2, "x[1-2]", at(2026, 12, 6, 6, 1))]),
    ("flux jobs: a Japanese name, an hour's limit, no node list yet; ended at its cleanup",
     lambda: [(j.name, j.walltime_s, j.node_list, j.ended_at)
              for j in flux.parse_status(FLUX_JOBS, [])][2:4],
     [("名前", 3600, None, None), (None, None, None, at(2026, 12, 6, 6, 1, 40))]),
    ("flux jobs: SCHED at urgency 31 waits; TIMEOUT says its exception",
     lambda: ended(flux.parse_status(FLUX_JOBS, []))[4:],
     [("4001", "PENDING", None, None),
      ("4003", "TIMEOUT", 142, "timeout: resource allocation expired")]),
    # Grid Engine
    ("qstat -xml of a root with the schema attribute: S and T suspended, dt deleted",
     lambda: [(j.native_id, j.state.value, j.reason, j.node_list)
              for j in sge.parse_status(QSTAT_XML, [])][:4],
     [("701", "RUNNING", "suspended (S)", "n1"), ("702", "RUNNING", "suspended (T)", "n2"),
      ("703", "RUNNING", "being deleted", "n3"), ("704", "RUNNING", None, "n4")]),
    ("qstat -xml: escaped markup and an emoji in a name; 16 slots on a host's full name",
     lambda: [(j.name, j.cpus, j.node_list, j.started_at)
              for j in sge.parse_status(QSTAT_XML, [])][4],
     ("<script> 😀", 16, "n1.example.org", at(2026, 12, 6, 8))),
    ("qstat -xml: a million tasks in error wait as one record",
     lambda: [(j.native_id, j.state.value, j.name) for j in sge.parse_status(QSTAT_XML, [])][5],
     ("705.1-1000000:1", "PENDING", "模拟")),
    ("qacct -j: failed 37 is a time limit; failed 1 before the job, never started",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.reason, j.started_at, j.cpus)
              for j in sge.parse_accounting(QACCT, [])],
     [("801", "TIMEOUT", 137, "time or memory limit (qmaster enforced h_rt, h_cpu, or h_vmem "
       "limit)", at(2026, 12, 6, 8), 4),
      ("802", "FAILED", None, "Grid Engine failed the job (1: assumedly before job)", None,
       1)]),
]


test_output_read, test_the_sweep_has_twenty_outputs = sweep_output_tests(OUTPUTS)


# -- faults this sweep found ------------------------------------------------------------------

def test_open_cluster_scheduler_qacct_dates_are_read() -> None:
    """Before, OCS 9's `2026-12-06 08:00:00.654321` was no date the reader knew: a job that
    ran an hour was read with no submit, start or end time, and nothing said so."""
    [job] = sge.parse_accounting(QACCT_OCS, [])
    assert (job.native_id, job.state.value, job.cpus, job.reason) == ("901", "COMPLETED", 32,
                                                                      None)
    assert (job.submitted_at, job.started_at, job.ended_at) == (
        at(2026, 12, 6, 7, 0, 0, 123456), at(2026, 12, 6, 8, 0, 0, 654321), at(2026, 12, 6, 9))


def test_a_qacct_date_of_no_known_form_is_said_not_dropped() -> None:
    """A date no qacct version prints (a site's locale, a wrapper's reformatting) is said
    in the job's reason, each field by name; `-/-` (never ran) says nothing."""
    text = qacct(qacct_record(902, "de", "06.12.2026 07:00", "06.12.2026 08:00", "-/-",
                      "failed       0", "exit_status  0"))
    [job] = sge.parse_accounting(text, [])
    assert (job.started_at, job.ended_at) == (None, None)
    assert job.reason == ("its qsub_time '06.12.2026 07:00' was not read (no date form qacct "
                          "prints); its start_time '06.12.2026 08:00' was not read (no date "
                          "form qacct prints)")
    [never] = sge.parse_accounting(QACCT, [])[1:]
    assert "was not read" not in (never.reason or "")
