"""Sweep 20 of scheduler outputs: outputs written here in the forms each scheduler
documents (Slurm 23.x-24.x `scontrol -o`, `squeue`, `sacct -P`, `sinfo -N`, `scontrol show
config|licenses|reservation`; `squeue --json` and slurmrestd replies of v0.0.38, v0.0.39
and v0.0.41; PBS Pro 2024 `qstat -f -F json` and `pbsnodes -a -F json`; LSF 10.1 `bjobs`,
`bhosts`, `lshosts` and `bqueues` `-json`; flux-core `flux jobs --json`, `flux queue list`
and `flux resource list`; Grid Engine and Univa `qstat -xml` and `qacct -j`), none of them
captured and none met by sweeps 1-19: odd but real forms (fields missing or `-`, `N/A`,
`(null)`, `Unknown`, unit suffixes, padded node ranges in several brackets, non-ASCII
names, outputs cut short, a warning where the output should start). Each row of OUTPUTS is
one output and what a user would read from it; the focused tests after it are the faults
this sweep found (each failed before). Changed since: the row "squeue --json after a
warning line" asserted that the whole output was refused naming line 1; JSON is now read
where its document starts, so it asserts the jobs read and the warning line said."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from outputs_helpers import UTC, at, ended, flux, lsf, node_verdicts, pbs, sge, slurm, wrapped

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.outputs_common import expand_hostlist, memory_mb
from diamond_jupyter.model import SiteError
from diamond_jupyter.placement_fit import node_usable

OOM = "out of memory: the job used more than the memory it was given"


def error_of(read) -> str:
    """The SiteError `read` raises (its text), or a note that it raised none."""
    try:
        read()
    except SiteError as e:
        return str(e)
    return "no error"


# -- Slurm text -----------------------------------------------------------------------------

# 23.11 `scontrol -d show node -o` of a powered-down cloud GPU node: Arch (null), FreeMem
# N/A, CPUEfctv below CPUTot, MemSpecLimit kept for the system, an empty AllocTRES
NODE_23 = (
    "NodeName=gpu-a100-007 Arch=(null) CoresPerSocket=32 CPUAlloc=0 CPUEfctv=124 CPUTot=128 "
    "CPULoad=N/A AvailableFeatures=a100,ib ActiveFeatures=a100,ib Gres=gpu:a100:4(S:0-1) "
    "GresDrain=N/A GresUsed=gpu:a100:0(IDX:N/A) NodeAddr=gpu-a100-007 "
    "NodeHostName=gpu-a100-007 Version=23.11.4 OS=Linux 5.14.0-362.el9.x86_64 #1 SMP "
    "RealMemory=515000 AllocMem=0 FreeMem=N/A Sockets=2 Boards=1 MemSpecLimit=8192 "
    "State=IDLE+CLOUD+POWERED_DOWN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=gpu,gpu-preempt BootTime=None SlurmdStartTime=None "
    "CfgTRES=cpu=128,mem=515000M,billing=128,gres/gpu=4 AllocTRES= CapWatts=n/a "
    "CurrentWatts=0 AveWatts=0 Reason=power save [root@2026-12-01T10:00:00]")

# `scontrol --all show partition -o`: two padded ranges of different widths, UNLIMITED and
# NONE, per-GPU defaults; and a partition of no nodes yet, `Nodes=(null)`
PARTITIONS_23 = "\n".join([
    "PartitionName=gpu AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
    "Default=NO QoS=N/A DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 "
    "Hidden=NO MaxNodes=UNLIMITED MaxTime=2-00:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED "
    "Nodes=gpu-a100-[001-003],gpu-h100-[09-11] PriorityJobFactor=1 PriorityTier=1 "
    "RootOnly=NO ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP "
    "TotalCPUs=768 TotalNodes=6 SelectTypeParameters=NONE "
    "JobDefaults=DefMemPerGPU=64000,DefCpuPerGPU=16 DefMemPerNode=UNLIMITED "
    "MaxMemPerNode=UNLIMITED TRES=cpu=768,mem=3090000M,node=6,gres/gpu=24 "
    "TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=8.0",
    "PartitionName=future Nodes=(null) State=INACTIVE MaxTime=UNLIMITED TotalCPUs=0 "
    "TotalNodes=0",
])

# `squeue` lines of the fields before %M was added (15 '|' fields, then the name, which
# holds '|' and non-ASCII), an array's waiting range, a hetjob component with %M
SQUEUE_OLD = "\n".join([
    "1001|PENDING|N/A|N/A|2026-12-01T09:00:00|1-00:00:00|1|4|alice|gpu|gres/gpu:a100:2|"
    "(null)|Priority|(null)|Ångström | run",
    "1002_[3-100%5]|PENDING|2026-12-02T10:00:00|2026-12-03T10:00:00|2026-12-01T09:00:00|"
    "UNLIMITED|2|64|bob|cpu*|N/A||ReqNodeNotAvail, UnavailableNodes:c[001-004]|N/A|0:00|arr",
    "1003+1|RUNNING|2026-12-01T09:30:00|2026-12-01T21:30:00|2026-12-01T09:00:00|12:00:00|1|"
    "1|carol|debug|gpu:1|c017||a comment|1-02:03:04|het",
])

# `sacct -X -P -n --format=jobid,state,exitcode,start,end,nodelist,jobname,jobid`
SACCT = "\n".join([
    "2002|CANCELLED by 12345|0:15|2026-12-01T09:00:00|2026-12-01T09:10:00|c[002-003]|cx|2002",
    "2003|PENDING|0:0|Unknown|Unknown|None assigned|wait|2003",
    "2004|OUT_OF_MEMORY|0:125|2026-12-01T09:00:00|2026-12-01T09:05:00|c004|oom|2004",
    "2005|NODE_FAIL|1:0|2026-12-01T09:00:00|2026-12-01T09:05:00|c005|nf|2005",
    "2009|PREEMPTED|0:0|2026-12-01T09:00:00|2026-12-01T09:05:00|c009|pre|2009",
    "2008|FAILED|2:0|None|2026-12-01T09:00:01|None assigned|failed-launch|2008",
]) + "\n"

# `sacct -X -a -P -n -S ... --format=HISTORY_FIELDS`: Partition_Limit (no limit of its
# own), a job cancelled before it started, an array task and a hetjob component
HISTORY = "\n".join([
    "3002|cpu|Partition_Limit|2026-12-01T08:00:00|2026-12-01T09:00:00|2026-12-01T10:00:00|"
    "64|1|COMPLETED",
    "3003|cpu|UNLIMITED|2026-12-01T08:00:00|None|2026-12-01T10:00:00|64|1|CANCELLED by 0",
    "3004_7|cpu|01:00:00|2026-12-01T08:00:00|2026-12-01T09:00:00|2026-12-01T10:00:00|2|1|"
    "TIMEOUT",
])

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'`: a node in two partitions (the default's
# `*`), the planned mark `-`, a powered-down `~`
SINFO = "\n".join([
    "c001|mixed-|128|257000|gpu:a100:4(S:0-1)|a100,ib|gpu*|64/64/0/128|UNLIMITED|1",
    "c001|mixed-|128|257000|gpu:a100:4(S:0-1)|a100,ib|debug|64/64/0/128|1:00:00|1",
    "c002|idle~|128|257000|(null)|(null)|cpu|0/128/0/128|UNLIMITED|1",
])

# `scontrol show config` (24.05: the cluster's name in capitals, padded '=')
CONFIG = "\n".join([
    "Configuration data as of 2026-12-06T09:00:00", "ClusterName             = Perlmutter",
    "MaxArraySize            = 40001", "ResumeTimeout           = 1800 sec",
    "SlurmctldTimeout        = 120 sec", "SlurmdTimeout           = 300 sec",
    "SuspendTimeout          = 30 sec"])

RESERVATION = (
    "ReservationName=maint_dec StartTime=2026-12-10T08:00:00 EndTime=2026-12-10T20:00:00 "
    "Duration=12:00:00 Nodes=nid[001000-001999],login[01-02] NodeCnt=1002 CoreCnt=128256 "
    "Features=(null) PartitionName=(null) Flags=MAINT,IGNORE_JOBS,SPEC_NODES TRES=cpu=256512 "
    "Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
    "BurstBuffer=(null) MaxStartDelay=(null)")

# -- squeue --json and slurmrestd -----------------------------------------------------------

SQUEUE_V41 = json.dumps({
    "meta": {"plugin": {"data_parser": "data_parser/v0.0.41"},
             "slurm": {"release": "24.05.1", "cluster": "perlmutter"}},
    "jobs": [
        {"job_id": 5001, "name": "train", "user_name": "alice", "partition": "gpu",
         "job_state": ["PENDING"], "state_reason": "Priority", "state_description": "",
         "time_limit": wrapped(120), "submit_time": wrapped(1764579600),
         "start_time": wrapped(0, set_=False), "end_time": wrapped(0),
         "node_count": wrapped(2), "cpus": wrapped(64), "tasks": wrapped(8),
         "tres_per_node": "gres/gpu:4", "tres_per_job": "", "tres_alloc_str": "",
         "nodes": "", "array_task_id": wrapped(0, set_=False), "array_job_id": wrapped(0),
         "exit_code": {"status": ["PENDING"], "return_code": wrapped(0, set_=False),
                       "signal": {"id": wrapped(0, set_=False), "name": ""}}},
        {"job_id": 5002, "name": "sim", "user_name": "bob", "partition": "cpu",
         "job_state": ["RUNNING", "COMPLETING"], "state_reason": "None",
         "time_limit": wrapped(0, infinite=True), "start_time": wrapped(1764583200),
         "end_time": wrapped(1764669600), "node_count": wrapped(1), "cpus": wrapped(128),
         "tres_alloc_str": "cpu=128,mem=500G,node=1,billing=128,gres/gpu=4,gres/gpu:a100=4",
         "nodes": "nid[001234]"},
        {"job_id": 5003, "name": "arr", "user_name": "bob", "partition": "cpu",
         "job_state": ["FAILED"], "state_reason": "NonZeroExitCode", "time_limit": wrapped(60),
         "start_time": wrapped(1764583200), "end_time": wrapped(1764586800),
         "node_count": wrapped(1), "cpus": wrapped(1), "nodes": "nid001235",
         "array_job_id": wrapped(5000), "array_task_id": wrapped(7), "array_task_string": "",
         "exit_code": {"status": ["SIGNALED"], "return_code": wrapped(0),
                       "signal": {"id": wrapped(9), "name": "KILL"}}},
    ], "warnings": [], "errors": []})

# v0.0.38 (22.05): INFINITE as 0xffffffff, a waiting job's start its estimate
SQUEUE_V38 = json.dumps({"errors": [], "jobs": [
    {"job_id": 6001, "name": "x", "user_name": "u", "partition": "p", "job_state": "PENDING",
     "state_reason": "Resources", "time_limit": 4294967295, "submit_time": 1764579600,
     "start_time": 1764590000, "end_time": 0, "node_count": 1, "cpus": 4, "exit_code": 0,
     "array_task_id": None, "array_job_id": 0, "nodes": ""}]})

REST_NODES_V41 = json.dumps({"nodes": [{
    "name": "nid001234", "state": ["IDLE", "DRAIN"], "cpus": 128, "effective_cpus": 124,
    "real_memory": 512000, "specialized_memory": 8192, "alloc_cpus": 0, "alloc_memory": 0,
    "gres": "gpu:a100:4(S:0-1)", "gres_used": "gpu:a100:0(IDX:N/A)",
    "features": ["a100", "ss11"], "active_features": ["a100", "ss11"], "partitions": ["gpu"],
    "architecture": "x86_64", "threads": 2, "sockets": 1, "cores": 64, "temporary_disk": 0,
    "reason": "hw"}], "errors": [], "warnings": []})

REST_PARTITIONS_V41 = json.dumps({"partitions": [{
    "name": "gpu", "nodes": {"configured": "nid[001234-001236]", "total": 3},
    "partition": {"state": ["UP"]},
    "maximums": {"time": wrapped(0, infinite=True), "nodes": wrapped(0, infinite=True),
                 "oversubscribe": {"jobs": 1, "flags": []}},
    "defaults": {"time": wrapped(30)}, "minimums": {"nodes": 0}, "cpus": {"total": 384},
    "flags": ["default"], "accounts": {"allowed": "", "deny": ""},
    "qos": {"allowed": "", "deny": "", "assigned": ""}, "priority": {"tier": 1}}]})

# -- PBS Pro 2024 -----------------------------------------------------------------------------

QSTAT_F_JSON = """{
    "timestamp":1764579600,
    "pbs_version":"2024.1.0",
    "pbs_server":"pbs01",
    "Jobs":{
        "1001.pbs01":{
            "Job_Name":"données-été",
            "Job_Owner":"alice@login01.cluster.example.org",
            "job_state":"R",
            "queue":"workq",
            "Resource_List":{
                "mem":"64gb",
                "ncpus":128,
                "nodect":2,
                "place":"scatter:excl",
                "select":"2:ncpus=64:ngpus=2:mem=32gb",
                "walltime":"48:00:00"
            },
            "exec_host":"n001/0*64+n002/0*64",
            "stime":"Mon Dec  1 10:00:00 2025",
            "qtime":"Mon Dec  1 09:00:00 2025"
        },
        "1002[].pbs01":{
            "Job_Name":"arr",
            "Job_Owner":"bob@login01",
            "job_state":"B",
            "queue":"workq",
            "array_indices_submitted":"1-100:2",
            "array_indices_remaining":"51-99:2",
            "Resource_List":{"ncpus":1,"nodect":1,"walltime":"00:30:00","mem":"1024kb"},
            "qtime":"Mon Dec  1 09:00:00 2025"
        },
        "1003.pbs01":{
            "Job_Name":"done",
            "Job_Owner":"carol@x",
            "job_state":"F",
            "queue":"workq",
            "Exit_status":271,
            "substate":91,
            "resources_used":{"walltime":"00:10:00"},
            "Resource_List":{"walltime":"01:00:00","ncpus":4},
            "obittime":"Mon Dec  1 11:00:00 2025",
            "stime":"Mon Dec  1 10:50:00 2025"
        },
        "1004.pbs01":{
            "Job_Name":"held",
            "Job_Owner":"d@x",
            "job_state":"H",
            "Hold_Types":"u",
            "queue":"gpu",
            "Resource_List":{"walltime":"10:00","ncpus":"8","mem":"16GB"},
            "comment":"Job held by d on Mon Dec  1 09:00:00 2025",
            "estimated":{"exec_vnode":"(n003:ncpus=8)","start_time":"Tue Dec  2 09:00:00 2025"}
        }
    }
}"""

PBSNODES_JSON = json.dumps({"pbs_version": "2024.1.0", "pbs_server": "pbs01", "nodes": {
    "n001": {"Mom": "n001.cluster", "state": "job-busy", "pcpus": 64,
             "resources_available": {"arch": "linux", "host": "n001", "mem": "515890mb",
                                     "ncpus": 64, "ngpus": 2, "vnode": "n001",
                                     "gpu_model": "a100", "Qlist": "workq,gpu"},
             "resources_assigned": {"ncpus": 64, "mem": "32gb", "ngpus": 2}},
    "n002": {"Mom": "n002", "state": "offline,down", "pcpus": 64,
             "comment": "node down: communication closed",
             "resources_available": {"host": "n002", "mem": "512gb", "ncpus": 64}},
    "n003": {"Mom": "n003", "state": "free", "pcpus": 128,
             "resources_available": {"host": "n003", "mem": "1tb", "ncpus": 128,
                                     "bigmem": True, "model": "genoa"},
             "resources_assigned": {"ncpus": 0}}}})

# -- LSF 10.1 -------------------------------------------------------------------------------

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 6, "RECORDS": [
    {"JOBID": "7001", "STAT": "RUN", "USER": "alice", "QUEUE": "normal", "JOB_NAME": "Ωmega-模拟",
     "EXIT_CODE": "", "PEND_REASON": "", "SUBMIT_TIME": "Dec  5 23:59",
     "START_TIME": "Dec  6 00:01 L", "FINISH_TIME": "Dec  6 12:01 E", "SLOTS": "32",
     "EXEC_HOST": "16*hostA:16*hostB", "RUNTIMELIMIT": "720.0/hostA"},
    {"JOBID": "7002", "STAT": "EXIT", "USER": "bob", "QUEUE": "short", "JOB_NAME": "x",
     "EXIT_CODE": "130", "EXIT_REASON": "TERM_OWNER: job killed by owner",
     "SUBMIT_TIME": "Dec 31 10:00", "START_TIME": "Dec 31 10:01",
     "FINISH_TIME": "Dec 31 10:02", "SLOTS": "1", "EXEC_HOST": "hostC", "RUNTIMELIMIT": "-"},
    {"JOBID": "7003", "STAT": "EXIT", "USER": "bob", "QUEUE": "short", "JOB_NAME": "y",
     "EXIT_CODE": "", "EXIT_REASON": "TERM_RUNLIMIT: job killed after reaching LSF run "
     "time limit", "SUBMIT_TIME": "2026/12/05 10:00:00", "START_TIME": "2026/12/05 10:01:00",
     "FINISH_TIME": "2026/12/05 11:01:00", "SLOTS": "1", "EXEC_HOST": "hostC",
     "RUNTIMELIMIT": "60.0 min"},
    {"JOBID": "7004", "STAT": "PEND", "USER": "carol", "QUEUE": "gpu", "JOB_NAME": "arr[12]",
     "PEND_REASON": "New job is waiting for scheduling;", "SUBMIT_TIME": "Dec  6 08:00",
     "ESSTART_TIME": "Dec  6 10:30 E", "SLOTS": "", "EXEC_HOST": "",
     "RUNTIMELIMIT": "1440.0 min"},
    {"JOBID": "7005", "STAT": "DONE", "USER": "d", "QUEUE": "q", "JOB_NAME": "z",
     "EXIT_CODE": "", "SUBMIT_TIME": "-", "START_TIME": "-", "FINISH_TIME": "-", "SLOTS": "-",
     "EXEC_HOST": "-", "RUNTIMELIMIT": "-"},
    {"ERROR": "Job <7999> is not found"}]})

BHOSTS = json.dumps({"COMMAND": "bhosts", "HOSTS": 3, "RECORDS": [
    {"HOST_NAME": "hostA", "STATUS": "ok", "MAX": "64", "NJOBS": "16", "RUN": "16",
     "SSUSP": "0", "USUSP": "0", "RSV": "0"},
    {"HOST_NAME": "hostB", "STATUS": "closed_Full", "MAX": "64", "NJOBS": "64", "RUN": "64",
     "SSUSP": "0", "USUSP": "0", "RSV": "0"},
    {"HOST_NAME": "hostC", "STATUS": "unavail", "MAX": "-", "NJOBS": "0", "RUN": "0"}]})
LSHOSTS = json.dumps({"COMMAND": "lshosts", "HOSTS": 3, "RECORDS": [
    {"HOST_NAME": "hostA", "type": "X86_64", "model": "Intel_EM64T", "ncpus": "64",
     "maxmem": "251.5G", "RESOURCES": "(mg gpu)"},
    {"HOST_NAME": "hostB", "type": "LINUXPPC64LE", "model": "POWER9", "ncpus": "64",
     "maxmem": "1T", "RESOURCES": "()"},
    {"HOST_NAME": "hostC", "type": "UNKNOWN", "model": "UNKNOWN_AUTO_DETECT", "ncpus": "-",
     "maxmem": "-", "RESOURCES": "-"}]})
BQUEUES = json.dumps({"COMMAND": "bqueues", "QUEUES": 3, "RECORDS": [
    {"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": "-", "RUNLIMIT": "-"},
    {"QUEUE_NAME": "short", "STATUS": "Closed:Active", "MAX": "128", "RUNLIMIT": "60.0 min"},
    {"QUEUE_NAME": "night", "STATUS": "Open:Inact_Win", "MAX": "-",
     "RUNLIMIT": "720.0/hostA"}]})

# -- flux-core --------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 1234567890123, "userid": 1001, "username": "alice", "urgency": 16,
     "t_submit": 1764579600.12, "t_run": 1764579700.5, "state": "RUN", "name": "lammps",
     "queue": "pbatch", "ntasks": 64, "ncores": 64, "nnodes": 2, "ngpus": 0,
     "nodelist": "tioga[18-19]", "expiration": 1764583300.5, "duration": 3600.0,
     "result": ""},
    {"id": 1234567890124, "userid": 1002, "state": "SCHED", "name": "w", "ncores": 4,
     "nnodes": 1, "duration": 0.0, "urgency": 0, "t_submit": 1764579600},
    {"id": 1234567890125, "username": "bob", "state": "INACTIVE", "result": "TIMEOUT",
     "returncode": 143, "waitstatus": 36608,
     "exception": {"occurred": True, "severity": 0, "type": "timeout",
                   "note": "resource allocation expired"},
     "t_run": 1764579700, "t_cleanup": 1764583300, "t_inactive": 1764583301,
     "duration": 3600},
    {"id": 1234567890126, "username": "bob", "state": "INACTIVE", "result": "CANCELED",
     "exception": {"occurred": True, "severity": 0, "type": "cancel", "note": ""},
     "t_inactive": 1764583301}]})

FLUX_QUEUES = "\n".join([
    "    QUEUE    EN ST TDEFAULT   TLIMIT     NNODES     NCORES      NGPUS",
    "   pdebug*    ✔  ✔      30m       1h       0-16      0-inf      0-inf",
    "   pbatch     ✔  ✗       1h       1d      0-inf      0-inf      0-inf",
    "     pall     ✗  ✔      inf      inf        1-4      0-inf      0-inf"])

# -- Grid Engine ----------------------------------------------------------------------------

# Univa's qstat -xml prints times to the millisecond; an FQDN execution host
QSTAT_XML = """<?xml version='1.0'?>
<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd">
  <queue_info>
    <job_list state="running">
      <JB_job_number>501</JB_job_number>
      <JB_name>Ünïcode job</JB_name>
      <JB_owner>alice</JB_owner>
      <state>r</state>
      <JAT_start_time>2026-12-01T10:00:00.405</JAT_start_time>
      <queue_name>all.q@node-001.cluster.example.org</queue_name>
      <slots>16</slots>
    </job_list>
    <job_list state="running">
      <JB_job_number>502</JB_job_number>
      <JB_name>del</JB_name>
      <JB_owner>bob</JB_owner>
      <state>dr</state>
      <JAT_start_time>2026-12-01T10:00:00</JAT_start_time>
      <queue_name>long.q@node-002</queue_name>
      <slots>1</slots>
    </job_list>
  </queue_info>
  <job_info>
    <job_list state="pending">
      <JB_job_number>503</JB_job_number>
      <JB_name>err</JB_name>
      <JB_owner>carol</JB_owner>
      <state>Eqw</state>
      <JB_submission_time>2026-12-01T09:00:00.123</JB_submission_time>
      <queue_name></queue_name>
      <slots>4</slots>
    </job_list>
    <job_list state="pending">
      <JB_job_number>504</JB_job_number>
      <JB_name>arr</JB_name>
      <JB_owner>carol</JB_owner>
      <state>hqw</state>
      <JB_submission_time>2026-12-01T09:00:00</JB_submission_time>
      <queue_name></queue_name>
      <slots>1</slots>
      <tasks>5-100:5</tasks>
    </job_list>
  </job_info>
</job_info>"""

# qacct -j: Son of Grid Engine's ctime dates, then Univa's with milliseconds and a failed
# code 100 (killed by a signal after the job started), padded values
QACCT = "\n".join([
    "=" * 62, "qname        all.q               ", "hostname     node-001.cluster     ",
    "owner        alice               ", "jobname      done                ",
    "jobnumber    490                 ", "taskid       undefined",
    "qsub_time    Mon Dec  1 08:00:00 2026", "start_time   Mon Dec  1 08:01:00 2026",
    "end_time     Mon Dec  1 09:01:00 2026", "slots        1                   ",
    "failed       0    ", "exit_status  0                   ",
    "category     -u alice -l h_rt=7200,h_vmem=4G -q all.q",
    "=" * 62, "qname        all.q", "hostname     node-002", "owner        bob",
    "jobname      killed", "jobnumber    491", "taskid       3",
    "qsub_time    12/01/2026 08:00:00.123", "start_time   12/01/2026 08:01:00.456",
    "end_time     12/01/2026 08:02:00.789", "slots        2",
    "failed       100 : assumedly after job", "exit_status  137                 (Killed)",
    "category     -l h_rt=3600"])


OUTPUTS = [
    # -- Slurm: scontrol, squeue, sacct, sinfo, config ----------------------------------
    ("scontrol node 23.11: CPUEfctv, MemSpecLimit, Arch (null), GresUsed IDX:N/A",
     lambda: [(n.cpus, n.memory_mb, n.gpus, n.gpus_allocated, n.gpu_type, n.architecture,
               n.partitions, n.state) for n in slurm.parse_nodes(NODE_23)],
     [(124, 506808, 4, 0, "a100", None, ["gpu", "gpu-preempt"], "idle+cloud+powered_down")]),
    ("a powered-down cloud node takes a job once booted",
     lambda: node_verdicts("idle+cloud+powered_down"), (True, (60.0, False))),
    ("DOWN+NOT_RESPONDING neither takes a job nor is said to come back",
     lambda: node_verdicts("down+not_responding"), (False, None)),
    ("scontrol partition: padded ranges of two widths, UNLIMITED, per-GPU defaults",
     lambda: [(p.nodes, p.max_time_s, p.max_nodes, p.default_time_s, p.def_mem_per_gpu_mb,
               p.def_cpus_per_gpu, p.max_mem_per_node_mb, p.qos)
              for p in slurm.parse_partitions(PARTITIONS_23)][0],
     (["gpu-a100-001", "gpu-a100-002", "gpu-a100-003", "gpu-h100-09", "gpu-h100-10",
       "gpu-h100-11"], 172800, None, None, 64000, 16, None, None)),
    ("scontrol partition Nodes=(null) State=INACTIVE",
     lambda: [(p.name, p.nodes, p.state, p.max_time_s)
              for p in slurm.parse_partitions(PARTITIONS_23)][1],
     ("future", [], "INACTIVE", None)),
    ("memory sizes with and without units", lambda: [memory_mb(x) for x in (
        "515000M", "500G", "1.5T", "64GiB", "64 GB", "4096MB", "N/A", "0", "1000+")],
     [515000, 512000, 1572864, 65536, 65536, 4096, None, 0, None]),
    ("hostlist of several brackets, padded, and letters in brackets",
     lambda: expand_hostlist("rack[01-02]-node[001-002],login[a,b]"),
     ["rack01-node001", "rack01-node002", "rack02-node001", "rack02-node002", "logina",
      "loginb"]),
    ("hostlist whose padding holds past the width change",
     lambda: expand_hostlist("n[098-101],m[8-10]"),
     ["n098", "n099", "n100", "n101", "m8", "m9", "m10"]),
    ("squeue line of the fields before %M: the name holding '|' and non-ASCII kept whole",
     lambda: [(j.native_id, j.name, j.walltime_s, j.gpus, j.time_used_s, j.reason)
              for j in slurm.parse_status(SQUEUE_OLD)][0],
     ("1001", "Ångström | run", 86400, 2, None, "Priority")),
    ("squeue array range: UNLIMITED, N/A TRES, its ReqNodeNotAvail reason",
     lambda: [(j.native_id, j.walltime_s, j.gpus, j.estimated_start, j.time_used_s, j.reason)
              for j in slurm.parse_status(SQUEUE_OLD)][1],
     ("1002_[3-100%5]", None, None, at(2026, 12, 2, 10), 0,
      "ReqNodeNotAvail, UnavailableNodes:c[001-004]")),
    ("squeue hetjob component with days of time used",
     lambda: [(j.native_id, j.state.value, j.started_at, j.time_used_s, j.comment)
              for j in slurm.parse_status(SQUEUE_OLD)][2],
     ("1003+1", "RUNNING", at(2026, 12, 1, 9, 30), 93784, "a comment")),
    ("sacct: cancelled by a uid after a signal, never started, OOM, node fail, preempted",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.reason, j.node_list, j.started_at)
              for j in slurm.parse_accounting(SACCT)],
     [("2002", "CANCELLED", 143, "cancelled by uid 12345", "c[002-003]",
       at(2026, 12, 1, 9)),
      ("2003", "PENDING", None, None, None, None),
      ("2004", "FAILED", None, OOM, "c004", at(2026, 12, 1, 9)),
      ("2005", "FAILED", None, "the node failed", "c005", at(2026, 12, 1, 9)),
      ("2009", "FAILED", None, "preempted by the scheduler", "c009", at(2026, 12, 1, 9)),
      ("2008", "FAILED", 2, None, None, None)]),
    ("sacct cut short names the line",
     lambda: error_of(lambda: slurm.parse_accounting(SACCT + "2010|COMPLETED|0:0|2026-12")),
     "slurm: cannot parse sacct line 7: not a whole record of 8 fields "
     "(got '2010|COMPLETED|0:0|2026-12')"),
    ("sacct history: Partition_Limit and UNLIMITED are no limit of the job's own",
     lambda: [(j.native_id, j.walltime_s, j.started_at, j.state.value)
              for j in slurm.parse_history(HISTORY)],
     [("3002", None, at(2026, 12, 1, 9), "COMPLETED"), ("3003", None, None, "CANCELLED"),
      ("3004_7", 3600, at(2026, 12, 1, 9), "TIMEOUT")]),
    ("sinfo -N: a node in two partitions is one node, the default's '*' dropped",
     lambda: [(n.name, n.state, n.cpus_allocated, n.gpus, n.features, n.partitions)
              for n in slurm.parse_sinfo_nodes(SINFO)],
     [("c001", "mixed-", 64, 4, ["a100", "ib"], ["gpu", "debug"]),
      ("c002", "idle~", 0, 0, [], ["cpu"])]),
    ("squeue --start: N/A is no estimate",
     lambda: slurm.parse_estimates("4001|2026-12-02T10:00:00|Resources\n4002|N/A|Priority\n"),
     {"4001": at(2026, 12, 2, 10), "4002": None}),
    ("scontrol show config: name, array size, timeouts in sec",
     lambda: (slurm.parse_cluster_name(CONFIG), slurm.parse_max_array_size(CONFIG),
              slurm.parse_node_timeouts(CONFIG)),
     ("perlmutter", 40001, {"ResumeTimeout": 1800.0, "SlurmdTimeout": 300.0,
                            "SuspendTimeout": 30.0})),
    ("scontrol show licenses of 23.11 (remote, LastConsumed): Free read",
     lambda: slurm.parse_licenses("LicenseName=ansys@flexlm Total=10 Used=3 Free=7 Reserved=0 "
                                  "Remote=yes LastConsumed=3 LastDeficit=0 "
                                  "LastUpdate=2026-12-01T10:00:00\n", free=True),
     {"ansys@flexlm": 7}),
    ("scontrol show reservation: (null) groups and accounts are none",
     lambda: [(r.name, r.start, r.nodes, r.users, r.accounts, r.groups, r.flags)
              for r in slurm.parse_reservations(RESERVATION)],
     [("maint_dec", at(2026, 12, 10, 8), ["nid[001000-001999],login[01-02]"], ["root"], None,
       None, ["MAINT", "IGNORE_JOBS", "SPEC_NODES"])]),
    ("sbatch --parsable on a federation prints id;cluster",
     lambda: slurm.parse_submit("124;perlmutter\n"), "124"),
    # -- squeue --json / slurmrestd ------------------------------------------------------
    ("squeue --json v0.0.41 waiting: GPUs per node x nodes, wrapped limit",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.gpus, j.estimated_start, j.reason)
              for j in slurm.parse_status_json(SQUEUE_V41)][0],
     ("5001", "PENDING", 7200, 8, None, "Priority")),
    ("squeue --json v0.0.41 RUNNING+COMPLETING, infinite limit, typed GPUs counted once",
     lambda: [(j.native_id, j.state.value, j.native_state, j.walltime_s, j.gpus, j.reason)
              for j in slurm.parse_status_json(SQUEUE_V41)][1],
     ("5002", "RUNNING", "RUNNING+COMPLETING", None, 4, None)),
    ("squeue --json v0.0.41 array task killed by signal 9",
     lambda: ended(slurm.parse_status_json(SQUEUE_V41))[2],
     ("5000_7", "FAILED", 137, "NonZeroExitCode")),
    ("squeue --json v0.0.38: INFINITE limit, a waiting job's start is its estimate",
     lambda: [(j.walltime_s, j.estimated_start, j.started_at)
              for j in slurm.parse_status_json(SQUEUE_V38)],
     [(None, datetime.fromtimestamp(1764590000, UTC), None)]),
    ("squeue --json with only errors names them",
     lambda: error_of(lambda: slurm.parse_status_json(json.dumps({"jobs": [], "errors": [
         {"error": "Unable to contact slurm controller (connect failure)",
          "error_number": 1007, "source": "slurm_load_jobs"}]}))),
     "slurm: cannot parse squeue --json: errors: [{'error': 'Unable to contact slurm "
     "controller (connect failure)', 'error_number': 1007, 'source': 'slurm_load_jobs'}]"),
    # changed: a warning line before the JSON used to reject the whole output naming line
    # 1; now the document is read where it starts and the line is said with its number
    ("squeue --json after a warning line: the jobs read, the line said",
     lambda: (lambda said: ([j.native_id for j in slurm.parse_status_json(
         "squeue: warning: x\n" + SQUEUE_V38, said)], said))([]),
     (["6001"], ["slurm: cannot parse squeue --json line 1: a message before the JSON, "
                 "not read (got 'squeue: warning: x')"])),
    ("slurmrestd v0.0.41 node: state list, effective CPUs, specialised memory",
     lambda: [(n.state, n.cpus, n.memory_mb, n.gpus, n.features, n.threads_per_core)
              for n in slurm_rest.parse_nodes(REST_NODES_V41)],
     [("idle+drain", 124, 503808, 4, ["a100", "ss11"], 2)]),
    ("slurmrestd v0.0.41 partition: infinite time, default flag, one job a CPU",
     lambda: [(p.name, p.max_time_s, p.default_time_s, p.default, p.nodes, p.oversubscribe,
               p.max_nodes) for p in slurm_rest.parse_partitions(REST_PARTITIONS_V41)],
     [("gpu", None, 1800, True, ["nid001234", "nid001235", "nid001236"], "NO", None)]),
    ("slurmrestd v0.0.41 reservation: wrapped times, flag list, a denied user",
     lambda: [(r.name, r.start, r.end, r.nodes, r.users, r.accounts, r.flags)
              for r in slurm_rest.parse_reservations(json.dumps({"reservations": [{
                  "name": "maint", "node_list": "nid[001000-001003]",
                  "flags": ["MAINT", "SPEC_NODES"], "start_time": wrapped(1765353600),
                  "end_time": wrapped(1765396800), "users": "root,-bob", "accounts": "",
                  "groups": "", "partition": ""}], "errors": []}))],
     [("maint", at(2025, 12, 10, 8), at(2025, 12, 10, 20), ["nid[001000-001003]"],
       ["root", "-bob"], None, ["MAINT", "SPEC_NODES"])]),
    ("slurmrestd v0.0.38 reservation: epoch seconds, 0 for no end, flags as text",
     lambda: [(r.start, r.end, r.nodes, r.accounts, r.flags)
              for r in slurm_rest.parse_reservations(json.dumps({"reservations": [{
                  "name": "train", "node_list": "", "flags": "DAILY,REPLACE",
                  "start_time": 1765353600, "end_time": 0, "users": "", "accounts": "ml",
                  "groups": ""}]}))],
     [(at(2025, 12, 10, 8), None, [], ["ml"], ["DAILY", "REPLACE"])]),
    ("a squeue line that is a message: said, the jobs after it read",
     lambda: (lambda snap: (len(snap.jobs), snap.warnings))(slurm.parse_snapshot("alpha", {
         "queue": "squeue: error: Invalid user: x\n" + SQUEUE_OLD,
         "partitions": PARTITIONS_23, "nodes": NODE_23})),
     (3, ["alpha: slurm: cannot parse squeue line 1: 1 of 15 fields "
          "(got 'squeue: error: Invalid user: x')"])),
    # -- PBS Pro --------------------------------------------------------------------------
    ("qstat -F json: non-ASCII name, owner at an FQDN, GPUs from select, 64gb",
     lambda: [(j.name, j.user, j.nodes, j.cpus, j.gpus, j.memory_mb, j.walltime_s, j.started_at)
              for j in pbs.parse_status(QSTAT_F_JSON)][0],
     ("données-été", "alice", 2, 128, 4, 65536, 172800, at(2025, 12, 1, 10))),
    ("qstat -F json: array parent B runs, 1024kb",
     lambda: [(j.native_id, j.state.value, j.memory_mb, j.walltime_s)
              for j in pbs.parse_status(QSTAT_F_JSON)][1],
     ("1002[].pbs01", "RUNNING", 1, 1800)),
    ("qstat -F json: substate 91 is a qdel, its SIGTERM (271) exit 143",
     lambda: ended(pbs.parse_status(QSTAT_F_JSON))[2],
     ("1003.pbs01", "CANCELLED", 143, "deleted (qdel)")),
    ("qstat -F json: held with comment, estimated start, MM:SS walltime, 16GB",
     lambda: [(j.state.value, j.reason, j.estimated_start, j.walltime_s, j.memory_mb)
              for j in pbs.parse_status(QSTAT_F_JSON)][3],
     ("PENDING", "held (u): Job held by d on Mon Dec  1 09:00:00 2025", at(2025, 12, 2, 9),
      600, 16384)),
    ("pbsnodes -F json: job-busy holds all, offline,down, 1tb, custom resources",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.memory_mb, n.memory_allocated, n.gpus,
               n.gpu_type, n.features, n.partitions, node_usable(n))
              for n in pbs.parse_nodes(PBSNODES_JSON)],
     [("n001", 64, 64, 515890, 32768, 2, "a100", ["gpu_model=a100"], ["workq", "gpu"], True),
      ("n002", 64, 0, 524288, 0, 0, None, [], [], False),
      ("n003", 128, 0, 1048576, 0, 0, None, ["bigmem", "model=genoa"], [], True)]),
    ("qsub's array id with the server's FQDN",
     lambda: pbs.parse_submit("1006[].pbs01.cluster.example.org\n"),
     "1006[].pbs01.cluster.example.org"),
    # -- LSF ------------------------------------------------------------------------------
    ("bjobs -json: non-ASCII name, 16*A:16*B, a normalised limit, the L mark",
     lambda: [(j.name, j.nodes, j.cpus, j.walltime_s, j.submitted_at, j.started_at, j.ended_at)
              for j in lsf.parse_status(BJOBS)][0],
     ("Ωmega-模拟", 2, 32, 43200, at(2026, 12, 5, 23, 59), at(2026, 12, 6, 0, 1), None)),
    ("bjobs -json: a year-less Dec 31 seen on Dec 6 is last year's; TERM_OWNER cancels",
     lambda: [(j.state.value, j.exit_code, j.submitted_at, j.ended_at)
              for j in lsf.parse_status(BJOBS)][1],
     ("CANCELLED", 130, at(2025, 12, 31, 10), at(2025, 12, 31, 10, 2))),
    ("bjobs -json: TERM_RUNLIMIT is a timeout (LSB_DISPLAY_YEAR dates)",
     lambda: [(j.state.value, j.walltime_s, j.ended_at) for j in lsf.parse_status(BJOBS)][2],
     ("TIMEOUT", 3600, at(2026, 12, 5, 11, 1))),
    ("bjobs -json: an array element's record, its estimate with the E mark",
     lambda: [(j.native_id, j.state.value, j.cpus, j.estimated_start, j.reason)
              for j in lsf.parse_status(BJOBS)][3],
     ("7004[12]", "PENDING", None, at(2026, 12, 6, 10, 30),
      "New job is waiting for scheduling;")),
    ("bjobs -json: '-' everywhere, and a not-found record dropped",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.cpus, j.walltime_s, j.node_list)
              for j in lsf.parse_status(BJOBS)][4:],
     [("7005", "COMPLETED", 0, None, None, None)]),
    ("bjobs: No unfinished job found", lambda: lsf.parse_status("No unfinished job found\n"),
     []),
    ("bhosts/lshosts -json: closed_Full, '-' MAX, 251.5G, POWER9",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.memory_mb, n.features, n.architecture,
               node_usable(n)) for n in lsf.parse_hosts(BHOSTS, LSHOSTS)],
     [("hostA", 64, 16, 257536, ["mg", "gpu"], "x86_64", True),
      ("hostB", 64, 64, 1048576, [], "ppc64le", True),
      ("hostC", 0, 0, 0, [], None, False)]),
    ("bqueues -json: Closed:Active, Open:Inact_Win, a limit normalised to a host",
     lambda: [(p.name, p.state, p.max_time_s, p.total_cpus) for p in lsf.parse_queues(BQUEUES)],
     [("normal", "UP", None, 0), ("short", "CLOSED", 3600, 128),
      ("night", "INACTIVE", 43200, 0)]),
    ("bjobs -json cut short names the command and line",
     lambda: error_of(lambda: lsf.parse_status(BJOBS[:120])).split(" (got ")[0],
     "lsf: cannot parse bjobs -json: invalid JSON (Unterminated string starting at line 1)"),
    ("bhosts saying LSF is down where its JSON should be",
     lambda: error_of(lambda: lsf.parse_snapshot("wren", {
         "hosts": "LSF is down. Please wait ...\n", "lshosts": LSHOSTS, "queues": BQUEUES,
         "queue": BJOBS})),
     "lsf: cannot parse bhosts -json: invalid JSON (Expecting value at line 1) "
     "(got 'LSF is down. Please wait ...')"),
    ("bsub after a warning line",
     lambda: lsf.parse_submit("Warning: ...\nJob <124> is submitted to queue <gpu>.\n"), "124"),
    # -- Flux -----------------------------------------------------------------------------
    ("flux jobs --json: float times, no name for userid-only, urgency 0 held",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.nodes, j.user, j.node_list,
               j.reason, j.submitted_at) for j in flux.parse_status(FLUX_JOBS)][:2],
     [("1234567890123", "RUNNING", 3600, 2, "alice", "tioga[18-19]", None,
       datetime.fromtimestamp(1764579600.12, UTC)),
      ("1234567890124", "PENDING", None, 1, "1002", None, "held (urgency 0)",
       at(2025, 12, 1, 9))]),
    ("flux jobs --json: TIMEOUT with its exception, CANCELED with one L",
     lambda: ended(flux.parse_status(FLUX_JOBS))[2:],
     [("1234567890125", "TIMEOUT", 143, "timeout: resource allocation expired"),
      ("1234567890126", "CANCELLED", None, "cancel")]),
    ("flux queue list: default '*', stopped and disabled queues, 1-4 nodes",
     lambda: [(p.name, p.default, p.max_time_s, p.max_nodes, p.state)
              for p in flux.parse_queues(FLUX_QUEUES)],
     [("pdebug", True, 3600, 16, "UP"), ("pbatch", False, 86400, None, "DOWN"),
      ("pall", False, None, 4, "DOWN")]),
    ("flux queue list of the one anonymous queue",
     lambda: [(p.name, p.default, p.max_time_s, p.max_nodes) for p in flux.parse_queues(
         "EN ST TDEFAULT   TLIMIT     NNODES     NCORES      NGPUS\n"
         " ✔  ✔      inf      inf      0-inf      0-inf      0-inf\n")],
     [("default", True, None, None)]),
    ("flux resource list: properties, a down rank",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.gpus, n.features)
              for n in flux.parse_resources("free|amd,mi300a|2|192|8|tuo[1001-1002]\n"
                                            "allocated|amd,mi300a|1|96|4|tuo1003\n"
                                            "down||1|96|4|tuo1004\n")],
     [("tuo1001", "free", 96, 0, 4, ["amd", "mi300a"]),
      ("tuo1002", "free", 96, 0, 4, ["amd", "mi300a"]),
      ("tuo1003", "allocated", 96, 96, 4, ["amd", "mi300a"]),
      ("tuo1004", "down", 96, 0, 4, [])]),
    ("a flux resource list line that is a warning: said, the nodes read",
     lambda: (lambda snap: ([n.name for n in snap.nodes], snap.warnings))(flux.parse_snapshot(
         "tioga", {"queue": FLUX_JOBS, "queues": FLUX_QUEUES,
                   "resources": "free||2|64|0|n[1-2]\nflux-resource: WARNING: x\n"})),
     (["n1", "n2"], ["tioga: flux: cannot parse flux resource list line 2: expected 6 '|' "
                     "fields (got 'flux-resource: WARNING: x')"])),
    ("flux jobs --json cut short",
     lambda: error_of(lambda: flux.parse_status('{"jobs": [{"id": 1}, {"id": 2, "sta'))
     .split(" (got ")[0],
     "flux: cannot parse flux jobs --json: invalid JSON (Unterminated string starting at "
     "line 1)"),
    # -- Grid Engine ----------------------------------------------------------------------
    ("qstat -xml: Univa's milliseconds, FQDN host, dr, Eqw, hqw task range",
     lambda: [(j.native_id, j.state.value, j.partition, j.node_list, j.started_at, j.reason)
              for j in sge.parse_status(QSTAT_XML)],
     [("501", "RUNNING", "all.q", "node-001.cluster.example.org",
       datetime(2026, 12, 1, 10, 0, 0, 405000, UTC), None),
      ("502", "RUNNING", "long.q", "node-002", at(2026, 12, 1, 10), "being deleted"),
      ("503", "PENDING", None, None, None,
       "error state (Eqw): `qstat -j` says why; it runs only after `qmod -cj`"),
      ("504.5-100:5", "PENDING", None, None, None, "held (hqw)")]),
    ("qacct -j: ctime and Univa dates, failed 100 after a SIGKILL, h_rt from category",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.reason, j.walltime_s, j.ended_at)
              for j in sge.parse_accounting(QACCT)],
     [("490", "COMPLETED", 0, None, 7200, at(2026, 12, 1, 9, 1)),
      ("491.3", "FAILED", 137, "killed by signal 9", 3600,
       datetime(2026, 12, 1, 8, 2, 0, 789000, UTC))]),
    ("qstat -xml cut short",
     lambda: error_of(lambda: sge.parse_status(QSTAT_XML[:200])).split(" (got ")[0],
     "sge: cannot parse qstat -xml: no closing </job_info>"),
    ("qstat's commlib error where the XML should be",
     lambda: error_of(lambda: sge.parse_status(
         "error: commlib error: got select error (Connection refused)\n")).split(" (got ")[0],
     "sge: cannot parse qstat -xml: not XML"),
    ("qsub -terse of an array", lambda: sge.parse_submit("506.1-10:1\n"), "506"),
]


@pytest.mark.parametrize("label,read,expected", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(label, read, expected):
    assert read() == expected


# -- focused: the faults this sweep found ---------------------------------------------------

def test_a_v0039_job_killed_by_a_signal_is_not_exit_0():
    """v0.0.39 (Slurm 23.02) names the signal's number `signal_id` (v0.0.40 on: `id`).
    Before: only `id` was read, so a job killed by SIGKILL read as exit code 0."""
    killed = json.dumps({"jobs": [{
        "job_id": 9, "job_state": "FAILED", "end_time": wrapped(1764583200),
        "exit_code": {"status": "SIGNALED", "return_code": 0,
                      "signal": {"signal_id": 9, "name": "KILL"}}}]})
    assert ended(slurm.parse_status_json(killed)) == [("9", "FAILED", 137, None)]
    # the same through slurmrestd's GET jobs; a plain exit code of v0.0.39 unchanged
    plain = killed.replace('"return_code": 0', '"return_code": 3').replace(
        '"signal_id": 9', '"signal_id": 0')
    assert ended(slurm_rest.parse_jobs(killed)) == [("9", "FAILED", 137, None)]
    assert ended(slurm_rest.parse_jobs(plain)) == [("9", "FAILED", 3, None)]


def test_a_pbs_listing_cut_short_names_the_line_where_it_breaks():
    """Before: "invalid JSON (Unterminated string starting at)", no line: which record, and
    where in it, could not be told. The jobs before it are still read."""
    cut = QSTAT_F_JSON[:QSTAT_F_JSON.index('"1003.pbs01"') + 60]
    assert cut.split("\n")[34].strip() == '"J'  # line 35: the string cut short
    jobs = pbs.parse_status(cut)
    assert [(j.native_id, j.state.value) for j in jobs] == [
        ("1001.pbs01", "RUNNING"), ("1002[].pbs01", "RUNNING"), ("1003.pbs01", "UNKNOWN")]
    assert "pbs: cannot parse qstat -F json job 1003.pbs01: invalid JSON (Unterminated " \
        "string starting at line 35)" in jobs[2].reason
    # a whole listing that is no JSON names its first line
    assert error_of(lambda: pbs.parse_status("qstat: Unknown Job Id 9.pbs01\n")).split(
        " (got ")[0] == "pbs: cannot parse qstat -F json: invalid JSON (Expecting value at " \
        "line 1)"


def test_a_slurmrestd_reply_cut_short_says_what_and_where():
    """Before: "slurmrestd: jobs: not JSON: '...'" with no word of what broke where (a
    reply cut short and a proxy's HTML error page read the same)."""
    assert error_of(lambda: slurm_rest.parse_jobs('{"jobs": [\n{"job_id": 1,\n"name": "x')) \
        == "slurmrestd: jobs: not JSON (Unterminated string starting at line 3): " \
        "'{\"jobs\": [\\n{\"job_id\": 1,\\n\"name\": \"x'"
    assert error_of(lambda: slurm_rest.parse_nodes("<html><body>502 Bad Gateway</body></html>")
                    ) == "slurmrestd: nodes: not JSON (Expecting value at line 1): " \
        "'<html><body>502 Bad Gateway</body></html>'"


@pytest.mark.parametrize("exit_status,substate,read", [
    (271, 91, ("CANCELLED", 143, "deleted (qdel)")),  # qdel of a running job: SIGTERM
    (265, 91, ("CANCELLED", 137, "deleted (qdel)")),  # qdel -W force: SIGKILL
    (None, 91, ("CANCELLED", None, "deleted (qdel)")),  # deleted while it waited
    (271, 92, ("FAILED", 143, "killed by signal 15")),  # the same signal, not a qdel
])
def test_a_qdeleted_job_says_its_signal_as_other_jobs_do(exit_status, substate, read):
    """Before: a job qdel killed read exit code 271 (PBS's 256 + 15) while any other job
    killed by SIGTERM read 143 (128 + 15, as a shell and the other dialects say it)."""
    job = {"job_state": "F", "substate": substate, "Job_Owner": "u@h"}
    if exit_status is not None:
        job["Exit_status"] = exit_status
    listing = json.dumps({"Jobs": {"20.pbs01": job}}, indent=4)
    assert ended(pbs.parse_status(listing)) == [("20.pbs01", *read)]


def test_a_requeued_job_in_sacct_has_not_ended():
    """sacct's record of a job requeued (after a node failure, or `scontrol requeue`) keeps
    its last run's start and end while the job waits again. Before: the waiting job read
    as started and ended (the job card counted it as run, not queued), unlike squeue's
    reading of the same job."""
    requeued = ("2010|REQUEUED|0:0|2026-12-01T09:00:00|2026-12-01T09:05:00|c010|rq|2010\n"
                "2011|PENDING|0:0|2026-12-01T09:00:00|2026-12-01T09:05:00|c011|rq2|2011\n")
    assert [(j.state.value, j.native_state, j.started_at, j.ended_at, j.exit_code)
            for j in slurm.parse_accounting(requeued)] == [
        ("PENDING", "REQUEUED", None, None, None), ("PENDING", "PENDING", None, None, None)]
    # a running job keeps its start; an ended one its end
    running = "2012|RUNNING|0:0|2026-12-01T09:00:00|Unknown|c012|r|2012\n"
    assert [(j.started_at, j.ended_at) for j in slurm.parse_accounting(running)] == [
        (at(2026, 12, 1, 9), None)]


# squeue lines (the fields before %M) of a heterogeneous job's two components: the CPU part
# runs, the GPU part waits for its nodes
HET_QUEUE = (
    "1234+0|RUNNING|2026-12-01T09:30:00|2026-12-01T10:30:00|2026-12-01T09:00:00|1:00:00|1|4|"
    "me|batch|N/A|n001|None|dmd:tok|het.dmd-tok\n"
    "1234+1|RUNNING|2026-12-01T09:30:00|2026-12-01T10:30:00|2026-12-01T09:00:00|1:00:00|2|64|"
    "me|gpu|gres/gpu:a100:2|g[01-02]|None||het.dmd-tok\n")
HET_ACCOUNTING = (
    "1234+0|COMPLETED|0:0|2026-12-01T09:30:00|2026-12-01T10:00:00|n001|het.dmd-tok|1234+0\n"
    "1234+1|FAILED|3:0|2026-12-01T09:30:00|2026-12-01T10:01:00|g[01-02]|het.dmd-tok|1234+1\n")


async def test_a_heterogeneous_job_is_followed_under_the_id_sbatch_gave(tmp_path):
    """sbatch answers a heterogeneous job's submit with its leader's id (1234), while squeue
    and sacct list only its components, 1234+0 and 1234+1. Before: no record was 1234's,
    in the queue or in accounting, so the engine never saw the job it submitted run or
    end; now its components are one job, as an array's tasks are (a real Site on the local
    transport, its squeue and sacct printing those lines)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from local_slurm import LocalSlurmQueue

    alpha = LocalSlurmQueue(tmp_path)
    alpha.queue.write_text(HET_QUEUE)
    (job,) = await alpha.site.statuses(["1234"])
    assert (job.native_id, job.state.value, job.started_at, job.reason) == (
        "1234", "RUNNING", at(2026, 12, 1, 9, 30), "het job components: 2 running")
    assert alpha.site.job_id_of("1234+1") == "1234"
    # it left the queue: accounting's two records are its end, the failed part's code
    alpha.queue.write_text("")
    (alpha.bin_dir / "sacct").write_text(f"#!/bin/sh\nprintf '%s' '{HET_ACCOUNTING}'\n")
    (job,) = await alpha.site.statuses(["1234"])
    assert (job.native_id, job.state.value, job.exit_code, job.ended_at, job.reason) == (
        "1234", "FAILED", 3, at(2026, 12, 1, 10, 1), "het job components: 1 completed, "
        "1 not completed; component 1234+1: FAILED")
    # the snapshot's queue keeps each component apart (placement counts each one's nodes)
    snap = slurm.parse_snapshot("alpha", {"queue": HET_QUEUE})
    assert [(j.native_id, j.nodes, j.partition) for j in snap.jobs] == [
        ("1234+0", 1, "batch"), ("1234+1", 2, "gpu")]


def test_json_lists_a_heterogeneous_jobs_components_as_squeue_does():
    """`squeue --json` and slurmrestd list each component under a job id of its own (the
    second component of 1234 is job 1235), with het_job_id and het_job_offset. Before: read
    as jobs 1234 and 1235, so following 1234 over REST saw only its first component (the
    job ran on while that part had ended); now `1234+0` and `1234+1`, as squeue's %i, one
    job once folded. A plain job's het_job_id 0 (v0.0.38) changes nothing."""
    listing = json.dumps({"jobs": [
        {"job_id": 1234, "het_job_id": wrapped(1234), "het_job_offset": wrapped(0),
         "job_state": ["COMPLETED"], "exit_code": {"return_code": wrapped(0)},
         "end_time": wrapped(1764583200)},
        {"job_id": 1235, "het_job_id": wrapped(1234), "het_job_offset": wrapped(1),
         "job_state": ["RUNNING"], "start_time": wrapped(1764579600)},
        {"job_id": 1236, "het_job_id": 0, "het_job_offset": 0, "job_state": "PENDING"}]})
    jobs = slurm_rest.parse_jobs(listing)
    assert [(j.native_id, j.state.value) for j in jobs] == [
        ("1234+0", "COMPLETED"), ("1234+1", "RUNNING"), ("1236", "PENDING")]
    from diamond_jupyter.dialects.outputs_common import fold_array_tasks
    from diamond_jupyter.dialects.slurm_commands import followed_under
    assert [(j.native_id, j.state.value, j.reason) for j in fold_array_tasks(
        jobs, followed_under)] == [("1234", "RUNNING", "het job components: 1 running, "
                                    "1 completed"), ("1236", "PENDING", None)]


def _pbs_site(groups: str, user_group: str | None = "physics"):
    """A PBS Pro site of one free 128-CPU node whose one queue, workq, takes the jobs of
    `groups` (acl_groups, enabled), probed as a user of primary group `user_group`."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_placement_cases import NOW as PLACE_NOW

    from diamond_jupyter.config import SiteConfig

    nodes = json.dumps({"nodes": {"n003": {"state": "free", "resources_available": {
        "host": "n003", "mem": "1tb", "ncpus": 128}, "resources_assigned": {}}}})
    queues = json.dumps({"Queue": {"workq": {
        "queue_type": "Execution", "enabled": "True", "started": "True",
        "acl_group_enable": "True", "acl_groups": groups}}})
    snap = pbs.parse_snapshot("pro", {
        "nodes": nodes, "queues": queues, "queue": "",
        "server": json.dumps({"Server": {"pbs01": {"default_queue": "workq"}}}),
        "user": "alice\n", **({"group": user_group + "\n"} if user_group else {})})
    return (SiteConfig(name="pro", scheduler="pbs", metadata={"architecture": "x86_64"}),
            snap.model_copy(update={"taken_at": PLACE_NOW}))


@pytest.mark.parametrize("groups,user_group,script,verdict,said", [
    # the user's own group is granted: before, refused as "account 'none' not allowed"
    ("physics,+chem", "physics", "", "READY", None),
    ("physics,+chem", "bio", "", "RESTRICTED",
     "queue 'workq' takes the jobs of groups physics, chem only (acl_groups); the job runs "
     "as group 'bio' (name another with -W group_list=)"),
    # the group the job names to run as is the one PBS checks
    ("physics,+chem", "bio", "#PBS -W group_list=chem\n", "READY", None),
    # the group not known: placed, said as unchecked
    ("physics", None, "", "READY",
     "queue workq takes the jobs of groups physics only (acl_groups); the group the job "
     "runs as is not known here"),
    # a list that denies is not read (not checked): placed
    ("-bio", "bio", "", "READY", None),
])
def test_a_pbs_queues_acl_groups_are_groups_not_accounts(groups, user_group, script,
                                                         verdict, said):
    """PBS's acl_groups names the groups whose jobs a queue takes, checked against the
    group the job runs as. Before: read as the queue's allowed accounts, so every job
    without that account (`-A`) was refused, whatever its group, and one naming an account
    of that name was let in."""
    from test_placement_cases import run as run_any

    site = _pbs_site(groups, user_group)
    assert site[1].partitions[0].allowed_accounts is None
    v = run_any(script + "#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00", site
                ).verdict("pro")
    assert v.verdict == verdict, (v.reasons, v.notes)
    if said is not None:
        assert said in v.reasons + v.notes, (v.reasons, v.notes)
