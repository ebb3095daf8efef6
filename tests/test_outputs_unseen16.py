"""Sweep 16 of scheduler outputs: outputs written here from each scheduler's documented
formats (Slurm 20-25 text and slurmrestd's data_parser v0.0.39-v0.0.42 shapes, PBS Pro
and Torque, LSF 10.1, Grid Engine 8 / Univa / Altair, flux-core), not captured, fed
through the parsers and what reads them (node usability, the snapshot a placement reads,
placement's QOS checks). Each row of OUTPUTS is one output and what must be read from it;
the focused tests after it are the faults this sweep found (each failed before)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import (
    LsfCommands,
    parse_jl_p,
    parse_jl_u,
    parse_queue_res_req,
    parse_task_limits,
)
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.pbs_text import parse_wrapper_nodes
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands, parse_qos
from diamond_jupyter.model import JobState, Node
from diamond_jupyter.placement_fit import node_usable

UTC = timezone.utc
slurm = SlurmCommands(tz=UTC)
sge = SgeCommands(tz=UTC)
lsf = LsfCommands(tz=UTC, now=lambda: datetime(2026, 12, 5, 12, 0, tzinfo=UTC))
pbs = PbsCommands(tz=UTC)
torque = PbsCommands(flavor="torque", tz=UTC)
flux = FluxCommands()


def _usable(state: str) -> bool:
    return node_usable(Node(name="n", state=state))


def _wrapped(n: int | None, *, infinite: bool = False) -> dict:
    """A number as data_parser v0.0.39 and later wrap it."""
    return {"set": n is not None or infinite, "infinite": infinite, "number": n or 0}


# -- Slurm ---------------------------------------------------------------------------------

SCONTROL_NODES_24 = "\n".join([
    # Slurm 24.05: CPUEfctv, the power-save flags, a node planned by the backfill scheduler
    "NodeName=cn101 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUEfctv=62 CPUTot=64 "
    "CPULoad=0.00 AvailableFeatures=genoa,ib ActiveFeatures=genoa,ib Gres=(null) "
    "NodeAddr=cn101 NodeHostName=cn101 RealMemory=385000 AllocMem=0 FreeMem=N/A Sockets=2 "
    "Boards=1 CoreSpecCount=1 State=IDLE+CLOUD+POWERED_DOWN ThreadsPerCore=1 TmpDisk=0 "
    "Weight=10 Owner=N/A MCS_label=N/A Partitions=cloud BootTime=None SlurmdStartTime=None "
    "LastBusyTime=2026-12-04T23:10:11 ResumeAfterTime=None CfgTRES=cpu=62,mem=385000M "
    "AllocTRES= CurrentWatts=0 AveWatts=0",
    "NodeName=cn102 CPUAlloc=32 CPUEfctv=64 CPUTot=64 RealMemory=385000 AllocMem=128000 "
    "State=MIXED+DRAIN Partitions=batch Reason=bad IB link [admin@2026-12-05T08:00:00]",
    "NodeName=cn103 CPUAlloc=0 CPUTot=64 RealMemory=385000 State=DOWN+NOT_RESPONDING "
    "Partitions=batch Reason=Not responding [slurm@2026-12-05T07:00:00]",
    "NodeName=cn104 CPUAlloc=0 CPUTot=64 RealMemory=385000 State=IDLE+PLANNED "
    "Partitions=batch",
    "NodeName=cn105 CPUAlloc=0 CPUTot=64 RealMemory=385000 State=DOWN+REBOOT_ISSUED "
    "Partitions=batch NextState=RESUME",
    "NodeName=gpu201 CPUAlloc=48 CPUTot=96 Gres=gpu:h100:4(S:0-1),shard:h100:32 "
    "GresUsed=gpu:h100:2(IDX:0-1),shard:h100:0(0/8,0/8,0/8,0/8) RealMemory=1000000 "
    "State=MIXED Partitions=gpu",
])

SCONTROL_PARTITIONS_24 = "\n".join([
    "PartitionName=batch AllowGroups=ALL DenyAccounts=guest AllowQos=ALL AllocNodes=ALL "
    "Default=YES QoS=N/A DefaultTime=01:00:00 DisableRootJobs=NO ExclusiveUser=NO "
    "GraceTime=0 Hidden=NO MaxNodes=16 MaxTime=7-00:00:00 MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=48 MaxCPUsPerSocket=UNLIMITED Nodes=cn[101-105] PriorityJobFactor=1 "
    "PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=FORCE:4 OverTimeLimit=NONE "
    "PreemptMode=OFF State=UP TotalCPUs=320 TotalNodes=5 SelectTypeParameters=NONE "
    "JobDefaults=DefCpuPerGPU=8,DefMemPerGPU=64000 DefMemPerCPU=4000 MaxMemPerNode=UNLIMITED "
    "TRES=cpu=320,mem=1925000M,node=5,billing=320 PowerDownOnIdle=NO",
    "PartitionName=old Default=NO MaxTime=UNLIMITED Nodes=cn[101-102] State=DRAIN "
    "TotalCPUs=128 TotalNodes=2",
])

SQUEUE_24 = "\n".join([
    # %i|%T|%S|%e|%V|%l|%D|%C|%u|%P|%b|%N|%r|%k|%j
    "900_[3-40%5]|PENDING|2026-12-05T14:00:00|2026-12-05T15:00:00|2026-12-05T09:00:00|"
    "1:00:00|1|4|alice|batch|N/A||JobArrayTaskLimit||sweep",
    "901|RUNNING|2026-12-05T10:00:00|2026-12-12T10:00:00|2026-12-05T09:30:00|7-00:00:00|2|96|"
    "bob|gpu|gres/gpu:h100:2|gpu[201-202]|None||train",
    "902|PENDING|N/A|N/A|2026-12-05T09:40:00|NOT_SET|1-2|8|carol|batch|N/A||"
    "ReqNodeNotAvail, Reserved for maintenance||upd",
    "903|SUSPENDED|2026-12-05T09:00:00|2026-12-05T11:00:00|2026-12-05T08:00:00|2:00:00|1|4|"
    "dave|batch|N/A|cn102|None||s",
])

SACCT_HISTORY = "\n".join([
    # HISTORY_FIELDS: jobid,partition,timelimit,submit,start,end,ncpus,nnodes,state
    "501|batch|Partition_Limit|2026-12-05T08:00:00|2026-12-05T08:10:00|2026-12-05T09:00:00|"
    "64|2|COMPLETED",
    "502|gpu|2-00:00:00|2026-12-05T08:00:00|None|2026-12-05T08:30:00|0|0|CANCELLED by 0",
    "503_7|batch|01:00:00|2026-12-05T08:00:00|2026-12-05T08:01:00|2026-12-05T08:02:00|4|1|"
    "NODE_FAIL",
    "504+0|batch|00:30:00|2026-12-05T08:00:00|2026-12-05T08:01:00|2026-12-05T08:31:00|8|1|"
    "TIMEOUT",
    "505|batch|UNLIMITED|2026-12-05T08:00:00|2026-12-05T08:01:00|2026-12-05T08:02:00|8|1|"
    "OUT_OF_MEMORY",
])

RESERVATIONS = "\n".join([
    "ReservationName=maint_dec StartTime=2026-12-08T06:00:00 EndTime=2026-12-08T18:00:00 "
    "Duration=12:00:00 Nodes=cn[101-105],gpu[201-202] NodeCnt=7 CoreCnt=416 Features=(null) "
    "PartitionName=(null) Flags=MAINT,IGNORE_JOBS,SPEC_NODES,ALL_NODES TRES=cpu=416 "
    "Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
    "BurstBuffer=(null) MaxStartDelay=(null)",
    "ReservationName=flexy StartTime=2026-12-05T00:00:00 EndTime=2026-12-12T00:00:00 "
    "Duration=7-00:00:00 Nodes=gpu[201-202] NodeCnt=2 CoreCnt=96 Features=(null) "
    "PartitionName=gpu Flags=FLEX,MAGNETIC,SPEC_NODES TRES=cpu=192 Users=-bob "
    "Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE BurstBuffer=(null) "
    "MaxStartDelay=(null)",
])

QOS = "\n".join([  # QOS_FIELDS
    "normal|||||||||",
    "long|cpu=512,gres/gpu=8|gres/gpu:h100=2|cpu=1024||7-00:00:00|||20|50",
    "debug|node=2||||00:30:00|10||2|4",
])


def _squeue_json(*jobs: dict, version: str = "v0.0.41") -> str:
    return json.dumps({"jobs": list(jobs), "last_backfill": _wrapped(1796000000),
                       "last_update": _wrapped(1796000100),
                       "meta": {"plugin": {"data_parser": f"data_parser/{version}"}},
                       "errors": [], "warnings": []})


SQUEUE_JSON_41 = _squeue_json(
    {"job_id": 700, "array_job_id": _wrapped(700), "array_task_id": _wrapped(None),
     "array_task_string": "1-8", "job_state": ["PENDING"], "name": "arr", "user_name": "alice",
     "partition": "batch", "node_count": _wrapped(1), "cpus": _wrapped(4),
     "time_limit": _wrapped(90), "submit_time": _wrapped(1796000000),
     "start_time": _wrapped(0), "end_time": _wrapped(0), "state_reason": "Priority",
     "tres_per_node": "gres/gpu:h100=1", "nodes": "",
     "exit_code": {"status": ["PENDING"], "return_code": _wrapped(None)}},
    {"job_id": 705, "array_job_id": _wrapped(700), "array_task_id": _wrapped(3),
     "job_state": ["RUNNING"], "name": "arr", "user_name": "alice", "partition": "batch",
     "node_count": _wrapped(1), "cpus": _wrapped(4), "time_limit": _wrapped(None, infinite=True),
     "start_time": _wrapped(1796000050), "nodes": "cn101"},
    {"job_id": 710, "array_job_id": _wrapped(0), "job_state": ["FAILED"],
     "end_time": _wrapped(1796000090), "start_time": _wrapped(1796000060),
     "exit_code": {"status": ["SIGNALED"], "return_code": _wrapped(0),
                   "signal": {"id": _wrapped(9), "name": "KILL"}}},
)

REST_PARTITIONS_40 = json.dumps({"partitions": [
    {"name": "gpu", "cluster": "vega",
     "nodes": {"allowed_allocation": "", "configured": "gpu[201-204]", "total": 4},
     "accounts": {"allowed": "", "deny": "guest"}, "groups": {"allowed": ""},
     "qos": {"allowed": "", "deny": "", "assigned": "gpuq"},
     "cpus": {"task_binding": 0, "total": 384},
     "defaults": {"memory_per_cpu": 0, "partition_memory_per_cpu": _wrapped(4000),
                  "partition_memory_per_node": _wrapped(None), "time": _wrapped(60),
                  "job": ""},
     "maximums": {"cpus_per_node": _wrapped(48), "cpus_per_socket": _wrapped(None, infinite=True),
                  "memory_per_cpu": 0, "partition_memory_per_cpu": _wrapped(None),
                  "partition_memory_per_node": _wrapped(None, infinite=True),
                  "nodes": _wrapped(2), "shares": 1,
                  "oversubscribe": {"jobs": 4, "flags": ["force"]}, "time": _wrapped(2880),
                  "over_time_limit": _wrapped(None)},
     "minimums": {"nodes": 0}, "priority": {"job_factor": 1, "tier": 2},
     "partition": {"state": ["DRAIN"]}, "suspend_time": _wrapped(None)},
    {"name": "cpu", "nodes": {"configured": "cn[101-105]", "total": 5},
     "maximums": {"time": _wrapped(None, infinite=True), "nodes": _wrapped(None, infinite=True),
                  "oversubscribe": {"jobs": 1, "flags": []}},
     "defaults": {"time": _wrapped(None)}, "partition": {"state": ["UP"]}},
]})

REST_NODES_41 = json.dumps({"nodes": [
    {"name": "gpu201", "state": ["IDLE", "DRAIN"], "features": ["h100", "ib"],
     "active_features": ["h100", "ib"], "partitions": ["gpu"], "cpus": 96, "alloc_cpus": 0,
     "effective_cpus": 96, "real_memory": 1000000, "alloc_memory": 0,
     "gres": "gpu:h100:4(S:0-1)", "gres_used": "gpu:h100:0(IDX:N/A)", "threads": 1,
     "sockets": 2, "cores": 48, "architecture": "x86_64"},
    {"name": "gpu202", "state": ["MIXED"], "features": ["h100", "ib"], "active_features": [],
     "partitions": ["gpu", "gpu-long"], "cpus": 96, "alloc_cpus": 48,
     "real_memory": 1000000, "gres": "gpu:h100:4(S:0-1)", "gres_used": "gpu:h100:2(IDX:0-1)"},
]})


# -- PBS Pro and Torque ---------------------------------------------------------------------

PBSNODES_JSON = json.dumps({"timestamp": 1796000000, "pbs_version": "2022.1.3",
                            "pbs_server": "pbs01", "nodes": {
    "n001": {"Mom": "n001.cluster", "Port": 15002, "pbs_version": "2022.1.3", "ntype": "PBS",
             "state": "job-busy,offline", "pcpus": 128, "jobs": ["11.pbs01/0"],
             "resources_available": {"arch": "linux", "host": "n001", "mem": "515635mb",
                                     "ncpus": 128, "vnode": "n001", "scratch": "1800gb",
                                     "Qlist": "workq"},
             "resources_assigned": {"ncpus": 128, "mem": "100gb"}, "comment": "DIMM"},
    "n002": {"state": "job-exclusive", "resources_available": {
        "host": "n002", "mem": "515635mb", "ncpus": 128, "vnode": "n002", "Qlist": "workq"},
             "resources_assigned": {"ncpus": 16}, "jobs": ["12.pbs01/0"]},
    "n003": {"state": "unresolvable", "resources_available": {
        "host": "n003", "mem": "515635mb", "ncpus": 128}},
    "n004": {"state": "stale", "resources_available": {"host": "n004", "ncpus": 128}},
    "n005": {"state": "free", "resources_available": {
        "host": "n005", "mem": "515635mb", "ncpus": 128, "Qlist": "workq"}},
    "g001[0]": {"state": "free", "resources_available": {
        "host": "g001", "ncpus": 32, "ngpus": 2, "gpu_model": "a100", "mem": "256gb",
        "vnode": "g001[0]"}, "resources_assigned": {"ncpus": 8, "ngpus": 1}},
    "g001[1]": {"state": "free", "resources_available": {
        "host": "g001", "ncpus": 32, "ngpus": 2, "gpu_model": "a100", "mem": "256gb",
        "vnode": "g001[1]"}},
}})

PBS_QUEUES_JSON = json.dumps({"Queue": {
    "workq": {"queue_type": "Execution", "total_jobs": 3, "enabled": "True",
              "started": "True", "resources_max": {"walltime": "72:00:00"},
              "resources_default": {"walltime": "01:00:00"}, "max_run": "[o:PBS_ALL=50]"},
    "gpuq": {"queue_type": "Execution", "enabled": "True", "started": "False",
             "resources_max": {"ngpus": 8}},
    "route": {"queue_type": "Route", "enabled": "True", "started": "True",
              "route_destinations": "workq,gpuq"},
}})

PBS_SERVER_JSON = json.dumps({"Server": {"pbs01": {
    "server_state": "Active", "default_queue": "route", "resources_max": {"walltime": "168:00:00"},
    "resources_default": {"ncpus": 1}, "pbs_version": "2022.1.3", "backfill_depth": 10}}})

PBS_JOBS_JSON = """{
    "timestamp":1796000000,
    "pbs_version":"2022.1.3",
    "pbs_server":"pbs01",
    "Jobs":{
        "11.pbs01":{
            "Job_Name":"cfd",
            "Job_Owner":"alice@login01",
            "job_state":"R",
            "queue":"workq",
            "Resource_List":{"ncpus":128, "nodect":1, "place":"excl",
                "select":"1:ncpus=128:mem=100gb", "walltime":"48:00:00", "mem":"100gb"},
            "stime":"Sat Dec  5 09:00:00 2026",
            "exec_host":"n001/0*128"
        },
        "13[].pbs01":{
            "Job_Name":"sweep",
            "Job_Owner":"bob@login01",
            "job_state":"B",
            "queue":"workq",
            "array_indices_remaining":"4-10",
            "array_state_count":"Queued:7 Running:3 Exiting:0 Expired:0 ",
            "Resource_List":{"ncpus":4, "select":"1:ncpus=4", "walltime":"7200"},
            "qtime":"Sat Dec  5 08:00:00 2026"
        },
        "14.pbs01":{
            "Job_Name":"gpu",
            "Job_Owner":"carol@login01",
            "job_state":"Q",
            "queue":"gpuq",
            "Resource_List":{"ncpus":16, "ngpus":2, "select":"2:ncpus=8:ngpus=1",
                "walltime":"12:00:00"},
            "estimated":{"start_time":"Sat Dec  5 13:00:00 2026",
                "exec_vnode":"(g001[0]:ncpus=8:ngpus=1)+(g001[1]:ncpus=8:ngpus=1)"}
        }
    }
}"""

TORQUE_XML = (
    "<Data><Job><Job_Id>301.torque01</Job_Id><Job_Name>md</Job_Name>"
    "<Job_Owner>alice@login</Job_Owner><job_state>R</job_state><queue>batch</queue>"
    "<Resource_List><nodes>2:ppn=16</nodes><nodect>2</nodect><walltime>24:00:00</walltime>"
    "</Resource_List><exec_host>n01/0-15+n02/0-15</exec_host><start_time>1796000000"
    "</start_time><qtime>1795999000</qtime></Job>"
    "<Job><Job_Id>302.torque01</Job_Id><Job_Name>done</Job_Name><job_state>C</job_state>"
    "<queue>batch</queue><exit_status>271</exit_status><Resource_List><walltime>00:10:00"
    "</walltime></Resource_List><resources_used><walltime>00:10:02</walltime>"
    "</resources_used><comp_time>1796000700</comp_time></Job></Data>")

TORQUE_PBSNODES = "\n".join([
    "n01", "     state = job-exclusive", "     power_state = Running", "     np = 16",
    "     properties = batch,ib", "     ntype = cluster",
    "     jobs = 0-15/301.torque01", "     status = rectime=1796000000,ncpus=16,"
    "physmem=131072000kb,availmem=120000mb,state=free", "     mom_service_port = 15002",
    "     total_sockets = 2", "",
    "n03", "     state = down,offline", "     np = 16", "     properties = batch", "",
])


# -- LSF ------------------------------------------------------------------------------------

BQUEUES_LONG = """QUEUE: night
  -- Night queue: dispatches only outside working hours.

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 30   20  Open:Inact_Win   -    8    -    -     0     0     0     0     0    0     0
Interval for a host to accept two jobs is 0 seconds

RUN_WINDOWS:  20:00-08:00
DISPATCH_WINDOW:  (22:00-06:00 )

SCHEDULING PARAMETERS
           r15s   r1m  r15m   ut      pg    io   ls    it    tmp    swp    mem
 loadSched   -     -     -     -       -     -    -     -     -      -      -
 loadStop    -     -     -     -       -     -    -     -     -      -      -

SCHEDULING POLICIES:  FAIRSHARE  NO_INTERACTIVE
USER_SHARES:  [default, 1]

SHARE_INFO_FOR: night/
 USER/GROUP   SHARES  PRIORITY  STARTED  RESERVED  CPU_TIME  RUN_TIME   ADJUST  GPU_RUN_TIME
 alice          1       0.333      2        0        12.4      3600     0.000          0
 bob            1       0.500      0        0         0.0         0     0.000          0

USERS: all
HOSTS:  all
RES_REQ:  select[type==any] rusage[mem=2000]

QUEUE: gpu
  -- GPU queue

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 40    0  Open:Active       -    -  0.5    4     8     0     8     0     0    0     0
Interval for a host to accept two jobs is 0 seconds

 RUNLIMIT
 1440.0 min

 TASKLIMIT
 1 4 64

USERS: all
HOSTS:  gpuhosts/
"""


def _lsf(command: str, *records: dict) -> str:
    return json.dumps({"COMMAND": command, "RECORDS": list(records)})


BHOSTS = _lsf(
    "bhosts",
    {"HOST_NAME": "hA", "STATUS": "closed_Excl", "MAX": "32", "NJOBS": "4", "RUN": "4"},
    {"HOST_NAME": "hB", "STATUS": "closed_Wind", "MAX": "32", "NJOBS": "0", "RUN": "0"},
    {"HOST_NAME": "hC", "STATUS": "closed_Busy", "MAX": "32", "NJOBS": "2", "RUN": "2"},
    {"HOST_NAME": "hD", "STATUS": "ok", "MAX": "32", "NJOBS": "8", "RUN": "8"},
    {"HOST_NAME": "hE", "STATUS": "closed_Full", "MAX": "32", "NJOBS": "32", "RUN": "32"},
    {"HOST_NAME": "hF", "STATUS": "unavail", "MAX": "-", "NJOBS": "0", "RUN": "0"},
)
LSHOSTS = _lsf(
    "lshosts",
    *[{"HOST_NAME": h, "type": "X86_64", "model": "EPYC_7763", "ncpus": "32",
       "maxmem": "250.9G", "RESOURCES": "(mg ib)"} for h in ("hA", "hB", "hC", "hD", "hE")],
    {"HOST_NAME": "hF", "type": "X86_64", "model": "-", "ncpus": "-", "maxmem": "-",
     "RESOURCES": "()"},
)

# -- Grid Engine ----------------------------------------------------------------------------


def _instance(name: str, state: str, used: int = 0, total: int = 16, load: str = "0.05"
              ) -> str:
    return (f"<Queue-List><name>{name}</name><qtype>BIP</qtype><slots_used>{used}"
            f"</slots_used><slots_resv>0</slots_resv><slots_total>{total}</slots_total>"
            f"<load_avg>{load}</load_avg><arch>lx-amd64</arch>"
            + (f"<state>{state}</state>" if state else "") + "</Queue-List>")


SGE_QSTAT = (
    "<?xml version='1.0'?>\n<job_info xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/sge/"
    "source/dist/util/resources/schemas/qstat/qstat.xsd\"><queue_info>"
    + _instance("all.q@n01", "C") + _instance("all.q@n02", "c")
    + _instance("all.q@n03", "au") + _instance("all.q@n04", "")
    + _instance("night.q@n01", "o") + _instance("night.q@n02", "A")
    + _instance("night.q@n03", "S") + _instance("sub.q@n04", "d")
    + _instance("sub.q@n05", "E")
    + "</queue_info><job_info>"
    "<job_list state=\"pending\"><JB_job_number>40</JB_job_number><JB_name>w</JB_name>"
    "<JB_owner>ann</JB_owner><state>qw</state><JB_submission_time>2026-12-05T09:00:00"
    "</JB_submission_time><slots>8</slots><hard_request name=\"h_rt\" resource_contribution"
    "=\"0.000000\">3600</hard_request><hard_request name=\"gpu\" resource_contribution="
    "\"0.000000\">1</hard_request></job_list>"
    "</job_info></job_info>")


# -- flux -----------------------------------------------------------------------------------

FLUX_QUEUES = """QUEUE    EN ST TDEFAULT   TLIMIT     NNODES     NCORES      NGPUS
batch*    ✔  ✔       1h       1d      0-inf      0-inf      0-inf
debug     ✔  ✗      10m      30m        0-2      0-inf      0-inf
gpu       ✗  ✔       1h      12h      0-inf      0-inf      1-inf
"""

FLUX_ANON_QUEUE = """     EN ST TDEFAULT   TLIMIT     NNODES     NCORES      NGPUS
      ✔  ✔      inf      inf      0-inf      0-inf      0-inf
"""

FLUX_RESOURCES = ("free|genoa,ib|2|128|8|n[01-02]\nallocated|genoa,ib|1|64|4|n03\n"
                  "free|genoa|1|32|0|n04\nallocated|genoa|1|32|0|n04\n"
                  "down||2|128|0|n[05-06]\n")

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 2203318222848, "userid": 1001, "urgency": 16, "priority": 16,
     "t_submit": 1796000000.12, "t_depend": 1796000000.13, "state": 8, "name": "wait",
     "ntasks": 4, "ncores": 4, "duration": 0.0, "queue": "batch",
     "annotations": {"sched": {"t_estimate": 1796003600.0, "resource_summary": ""}}},
    {"id": 2203318222849, "userid": 1002, "username": "bob", "state": "RUN",
     "t_run": 1796000100.5, "nnodes": 2, "ncores": 64, "ngpus": 4, "duration": 3600.0,
     "nodelist": "n[01-02]"},
    {"id": 2203318222850, "state": 64, "result": 8, "t_run": 1796000100.0,
     "t_inactive": 1796003700.0, "returncode": 143, "duration": 3600.0},
]})


SINFO_NODES = "\n".join([
    # %N|%T|%c|%m|%G|%f|%P|%C|%l|%D: a node in two partitions (two lines), sinfo's marks
    "cn01|mixed-|64|385000|gpu:h100:4(S:0-1)|genoa,ib|gpu*|32/32/0/64|7-00:00:00|1",
    "cn01|mixed-|64|385000|gpu:h100:4(S:0-1)|genoa,ib|gpu-long|32/32/0/64|14-00:00:00|1",
    "cn02|drained$|64|385000|(null)|genoa|batch|0/0/64/64|7-00:00:00|1",
    "cn03|idle~|64|385000|(null)|genoa|cloud|0/64/0/64|infinite|1",
    "cn04|reserved|64|385000|(null)|genoa|batch|0/64/0/64|7-00:00:00|1",
])

QACCT_ALTAIR = """==============================================================
qname        gpu.q
hostname     g01.cluster
group        chem
owner        ann
project      NONE
jobname      relax
jobnumber    4711
taskid       undefined
submit_cmd   qsub -l h_rt=7200,gpu=1 relax.sh
qsub_time    12/05/2026 08:00:00.000
start_time   12/05/2026 08:05:00.250
end_time     12/05/2026 09:05:00.750
granted_pe   NONE
slots        1
failed       0
deleted_by   NONE
exit_status  0
ru_wallclock 3600.500
category     -u ann -l gpu=1,h_rt=7200 -q gpu.q
==============================================================
qname        all.q
hostname     n01
owner        bob
jobname      arr
jobnumber    4712
taskid       3
qsub_time    Sat Dec  5 08:00:00 2026
start_time   Sat Dec  5 08:01:00 2026
end_time     Sat Dec  5 10:01:00 2026
slots        4
failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit
exit_status  137
category     -l h_rt=7200
"""

TORQUE_QUEUES = """Queue: batch
    queue_type = Execution
    total_jobs = 3
    state_count = Transit:0 Queued:1 Held:0 Waiting:0 Running:2 Exiting:0 Complete:0
    resources_max.walltime = 72:00:00
    resources_default.nodes = 1
    resources_default.walltime = 01:00:00
    enabled = True
    started = True

Queue: debug
    queue_type = Execution
    resources_max.walltime = 00:30:00
    resources_max.nodect = 2
    max_user_run = 2
    enabled = True
    started = False

"""
TORQUE_SERVER = """Server: torque01
    server_state = Active
    scheduling = True
    default_queue = batch
    pbs_version = 6.1.3
"""


# (label, what is read, expected): each a value read from an output written here
OUTPUTS = [
    # Slurm node states as scontrol and sinfo write them
    ("scontrol IDLE+CLOUD+POWERED_DOWN takes jobs (resumed on demand)",
     lambda: _usable("idle+cloud+powered_down"), True),
    ("scontrol MIXED+DRAIN takes none", lambda: _usable("mixed+drain"), False),
    ("sinfo down* takes none", lambda: _usable("down*"), False),
    ("sinfo idle* (not responding) takes none", lambda: _usable("idle*"), False),
    ("scontrol IDLE+PLANNED takes jobs", lambda: _usable("idle+planned"), True),
    ("scontrol DOWN+REBOOT_ISSUED takes none", lambda: _usable("down+reboot_issued"), False),
    ("sinfo idle^ (reboot issued) takes none", lambda: _usable("idle^"), False),
    ("sinfo idle$ (in a maintenance reservation) takes none but its reservation's",
     lambda: (_usable("idle$"), node_usable(Node(name="n", state="idle$"), True)),
     (False, True)),
    # sweep 18: an idle node with a reboot pending is rebooted first (it is idle), so it
    # takes no job now; it is capacity again after ResumeTimeout (tests/test_outputs_unseen18)
    ("sinfo idle@ (reboot pending, node idle) takes no job now", lambda: _usable("idle@"),
     False),
    ("scontrol nodes of Slurm 24.05",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.gpus, n.gpus_allocated, n.gres,
               node_usable(n)) for n in slurm.parse_nodes(SCONTROL_NODES_24)],
     [("cn101", 62, 0, 0, 0, {}, True), ("cn102", 64, 32, 0, 0, {}, False),
      ("cn103", 64, 0, 0, 0, {}, False), ("cn104", 64, 0, 0, 0, {}, True),
      ("cn105", 64, 0, 0, 0, {}, False),
      ("gpu201", 96, 48, 4, 2, {"shard": 32}, True)]),
    ("scontrol partitions: FORCE:4, MaxCPUsPerNode, a DRAIN partition",
     lambda: [(p.name, p.state, p.default, p.oversubscribe, p.max_cpus_per_node,
               p.max_time_s, p.default_time_s, p.max_nodes, p.def_cpus_per_gpu,
               p.def_mem_per_gpu_mb, p.denied_accounts, len(p.nodes))
              for p in slurm.parse_partitions(SCONTROL_PARTITIONS_24)],
     [("batch", "UP", True, "FORCE:4", 48, 7 * 86400, 3600, 16, 8, 64000, ["guest"], 5),
      ("old", "DRAIN", False, None, None, None, None, None, None, None, None, 2)]),
    ("squeue: a throttled waiting range, SUSPENDED, NOT_SET, a node range",
     lambda: [(j.native_id, j.state, j.walltime_s, j.nodes, j.gpus, j.estimated_start)
              for j in slurm.parse_status(SQUEUE_24)],
     [("900_[3-40%5]", JobState.PENDING, 3600, 1, None,
       datetime(2026, 12, 5, 14, 0, tzinfo=UTC)),
      ("901", JobState.RUNNING, 7 * 86400, 2, 4, None),  # 2 GPUs a node (%b), on 2
      ("902", JobState.PENDING, None, None, None, None),
      ("903", JobState.RUNNING, 7200, 1, None, None)]),
    ("sacct history: Partition_Limit, never started, NODE_FAIL, a het component, OOM",
     lambda: [(j.native_id, j.state, j.walltime_s, j.started_at is not None, j.cpus)
              for j in slurm.parse_history(SACCT_HISTORY)],
     [("501", JobState.COMPLETED, None, True, 64),
      ("502", JobState.CANCELLED, 172800, False, 0),
      ("503_7", JobState.FAILED, 3600, True, 4),
      ("504+0", JobState.TIMEOUT, 1800, True, 8),
      ("505", JobState.FAILED, None, True, 8)]),
    ("scontrol reservations: MAINT over every node, FLEX with an excluded user",
     lambda: [(r.name, r.state, r.flags, r.users, r.nodes)
              for r in slurm.parse_reservations(RESERVATIONS)],
     [("maint_dec", "INACTIVE", ["MAINT", "IGNORE_JOBS", "SPEC_NODES", "ALL_NODES"],
       ["root"], ["cn[101-105],gpu[201-202]"]),
      ("flexy", "ACTIVE", ["FLEX", "MAGNETIC", "SPEC_NODES"], ["-bob"], ["gpu[201-202]"])]),
    ("sacctmgr QOS: typed GPU limit per node, MaxWall in days",
     lambda: [(q.name, q.max_tres_per_job, q.max_tres_per_node, q.max_wall_s,
               q.max_jobs_per_user) for q in parse_qos(QOS).values()],
     [("normal", {}, {}, None, None),
      ("long", {"cpu": 512, "gres/gpu": 8}, {"gres/gpu:h100": 2}, 7 * 86400, 20),
      ("debug", {"node": 2}, {}, 1800, 2)]),
    ("squeue --json v0.0.41: a waiting range, a running task of no limit, a killed job",
     lambda: [(j.native_id, j.state, j.walltime_s, j.gpus, j.exit_code)
              for j in slurm.parse_status_json(SQUEUE_JSON_41)],
     [("700_[1-8]", JobState.PENDING, 5400, 1, None),
      ("700_3", JobState.RUNNING, None, None, None),
      ("710", JobState.FAILED, None, None, 137)]),
    ("slurmrestd v0.0.40 partitions: a DRAIN partition, limits in wrapped numbers",
     lambda: [(p.name, p.state, p.nodes, p.max_time_s, p.default_time_s, p.max_nodes,
               p.max_cpus_per_node, p.oversubscribe, p.denied_accounts, p.qos,
               p.def_mem_per_cpu_mb, p.priority_tier)
              for p in slurm_rest.parse_partitions(REST_PARTITIONS_40)],
     [("gpu", "DRAIN", ["gpu201", "gpu202", "gpu203", "gpu204"], 172800, 3600, 2, 48,
       "FORCE:4", ["guest"], "gpuq", 4000, 2),
      ("cpu", "UP", ["cn101", "cn102", "cn103", "cn104", "cn105"], None, None, None, None,
       "NO", None, None, None, None)]),
    ("slurmrestd v0.0.41 nodes: features and partitions as lists, state flags",
     lambda: [(n.name, n.state, n.features, n.partitions, n.gpus, n.gpus_allocated,
               node_usable(n)) for n in slurm_rest.parse_nodes(REST_NODES_41)],
     [("gpu201", "idle+drain", ["h100", "ib"], ["gpu"], 4, 0, False),
      ("gpu202", "mixed", ["h100", "ib"], ["gpu", "gpu-long"], 4, 2, True)]),
    ("squeue --json v0.0.38: a limit of INFINITE (4294967295 minutes) is none",
     lambda: [(j.native_id, j.walltime_s) for j in slurm.parse_status_json(json.dumps(
         {"jobs": [{"job_id": 5, "job_state": "RUNNING", "time_limit": 4294967295,
                    "start_time": 1796000000},
                   {"job_id": 6, "job_state": "PENDING", "time_limit": 30}]}))],
     [("5", None), ("6", 1800)]),
    ("sinfo -N: a node of two partitions, planned (-), drained in a maintenance ($)",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.gpus, n.partitions, node_usable(n))
              for n in slurm.parse_sinfo_nodes(SINFO_NODES)],
     [("cn01", 64, 32, 4, ["gpu", "gpu-long"], True), ("cn02", 64, 0, 0, ["batch"], False),
      ("cn03", 64, 0, 0, ["cloud"], True), ("cn04", 64, 0, 0, ["batch"], False)]),
    ("qacct: Altair's times and category h_rt; killed by qmaster at h_rt (failed 37)",
     lambda: [(j.native_id, j.state, j.exit_code, j.walltime_s, j.cpus)
              for j in sge.parse_accounting(QACCT_ALTAIR)],
     [("4711", JobState.COMPLETED, 0, 7200, 1), ("4712.3", JobState.TIMEOUT, 137, 7200, 4)]),
    ("Torque qstat -Q -f / -B -f text: a stopped queue, a per-user run limit",
     lambda: [(p.name, p.state, p.default, p.max_time_s, p.default_time_s, p.max_nodes,
               [(q.attribute, q.scope, q.value) for q in p.limits])
              for p in torque.parse_queues(TORQUE_QUEUES, TORQUE_SERVER)],
     [("batch", "UP", True, 72 * 3600, 3600, None, []),
      ("debug", "NOT_STARTED", False, 1800, None, 2, [("max_run", "u", 2)])]),
    ("bjobs -json: run limit reached, killed by its owner, suspended, a job gone",
     lambda: [(j.native_id, j.state, j.exit_code, j.reason) for j in lsf.parse_status(_lsf(
         "bjobs",
         {"JOBID": "8001", "STAT": "EXIT", "EXIT_CODE": "140",
          "EXIT_REASON": "TERM_RUNLIMIT: job killed after reaching LSF run time limit"},
         {"JOBID": "8002", "STAT": "EXIT", "EXIT_CODE": "130",
          "EXIT_REASON": "TERM_OWNER: job killed by owner"},
         {"JOBID": "8003", "STAT": "USUSP", "JOB_NAME": "x"},
         {"JOBID": "8004", "STAT": "PSUSP", "JOB_NAME": "y"},
         {"JOBID": "8005", "ERROR": "Job <8005> is not found"}))],
     [("8001", JobState.TIMEOUT, 140,
       "TERM_RUNLIMIT: job killed after reaching LSF run time limit"),
      ("8002", JobState.CANCELLED, 130, "TERM_OWNER: job killed by owner"),
      ("8003", JobState.RUNNING, None, None), ("8004", JobState.PENDING, None,
                                               "held (PSUSP)")]),
    ("qstat -x -F json: finished jobs, killed by signal 15 (271), never ran (-11)",
     lambda: [(j.native_id, j.state, j.exit_code) for j in pbs.parse_status(json.dumps(
         {"Jobs": {"20.pbs01": {"job_state": "F", "Exit_status": 271, "substate": 92,
                                "Resource_List": {"walltime": "01:00:00"},
                                "resources_used": {"walltime": "00:20:00"}},
                   "21.pbs01": {"job_state": "F", "Exit_status": -11, "substate": 92}}}))],
     [("20.pbs01", JobState.FAILED, 143), ("21.pbs01", JobState.FAILED, -11)]),
    ("flux jobs --json: one job asked, a bare object held at urgency 0",
     lambda: [(j.native_id, j.state, j.reason) for j in flux.parse_status(json.dumps(
         {"id": 9, "state": "SCHED", "urgency": 0}))],
     [("9", JobState.PENDING, "held (urgency 0)")]),
    # PBS Pro and Torque
    ("pbsnodes -F json: busy+offline, job-exclusive, unresolvable, stale, vnodes of a host",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.gpus, n.gpus_allocated, node_usable(n))
              for n in pbs.parse_nodes(PBSNODES_JSON)],
     [("n001", 128, 128, 0, 0, False), ("n002", 128, 128, 0, 0, True),
      ("n003", 128, 0, 0, 0, False), ("n004", 128, 0, 0, 0, False),
      ("n005", 128, 0, 0, 0, True), ("g001", 64, 8, 4, 1, True)]),
    ("pbsnodes -F json: custom resources are features, PBS's arch `linux` is none",
     lambda: [(n.features, n.architecture, n.memory_mb)
              for n in pbs.parse_nodes(PBSNODES_JSON)][0],
     (["scratch=1800gb"], None, 515635)),
    ("qstat -Qf/-Bf json: a stopped queue, a routing default, the server's walltime",
     lambda: [(p.name, p.state, p.default, p.max_time_s, p.default_time_s, p.max_gpus,
               p.max_running, p.routes_to)
              for p in pbs.parse_queues(PBS_QUEUES_JSON, PBS_SERVER_JSON)],
     [("workq", "UP", False, 72 * 3600, 3600, None, 50, None),
      ("gpuq", "NOT_STARTED", False, 168 * 3600, None, 8, None, None),
      ("route", "UP", True, None, None, None, None, ["workq", "gpuq"])]),
    ("qstat -f -F json: an exclusive job, an array's record, GPUs of chunks, a start estimate",
     lambda: [(j.native_id, j.state, j.cpus, j.gpus, j.walltime_s, j.user, j.array_waiting,
               j.array_running, j.estimated_start) for j in pbs.parse_status(PBS_JOBS_JSON)],
     [("11.pbs01", JobState.RUNNING, 128, None, 48 * 3600, "alice", None, None, None),
      ("13[].pbs01", JobState.RUNNING, 4, None, 7200, "bob", 7, 3, None),
      ("14.pbs01", JobState.PENDING, 16, 2, 12 * 3600, "carol", None, None,
       datetime(2026, 12, 5, 13, 0, tzinfo=UTC))]),
    ("Torque qstat -x: a job on two nodes, one killed by signal 15 (271) past its walltime",
     lambda: [(j.native_id, j.state, j.walltime_s, j.node_list, j.exit_code)
              for j in torque.parse_status(TORQUE_XML)],
     [("301.torque01", JobState.RUNNING, 86400, "n01/0-15+n02/0-15", None),
      ("302.torque01", JobState.TIMEOUT, 600, None, 143)]),
    ("Torque pbsnodes: job-exclusive is full, down,offline takes none",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.memory_mb, node_usable(n))
              for n in parse_wrapper_nodes(TORQUE_PBSNODES)],
     [("n01", 16, 16, 120000, True), ("n03", 16, 0, 0, False)]),
    # LSF
    ("bhosts: hosts closed for now have no free slot; unavail takes none",
     lambda: [(n.name, n.cpus, n.cpus - n.cpus_allocated, node_usable(n))
              for n in lsf.parse_hosts(BHOSTS, LSHOSTS)],
     [("hA", 32, 0, True), ("hB", 32, 0, True), ("hC", 32, 0, True), ("hD", 32, 24, True),
      ("hE", 32, 0, True), ("hF", 0, 0, False)]),
    ("bqueues -l: JL/U, JL/H, JL/P and TASKLIMIT around fairshare and window blocks",
     lambda: (parse_jl_u(BQUEUES_LONG), parse_jl_u(BQUEUES_LONG, "JL/H"),
              parse_jl_p(BQUEUES_LONG), parse_task_limits(BQUEUES_LONG)),
     ({"night": 8}, {"gpu": 4}, {"gpu": 0.5}, {"gpu": (1, 64)})),
    ("bqueues -l: RES_REQ sections", lambda: parse_queue_res_req(BQUEUES_LONG),
     {"night": {"select": "[type==any]", "rusage": "[mem=2000]"}}),
    ("bqueues -json: Open:Inact_Win dispatches nothing now",
     lambda: [(p.name, p.state, p.max_time_s) for p in lsf.parse_queues(_lsf(
         "bqueues", {"QUEUE_NAME": "night", "STATUS": "Open:Inact_Win", "MAX": "-",
                     "RUNLIMIT": "-"},
         {"QUEUE_NAME": "gpu", "STATUS": "Open:Active", "MAX": "-",
          "RUNLIMIT": "1440.0 min"},
         {"QUEUE_NAME": "old", "STATUS": "Closed:Inact_Adm", "MAX": "-", "RUNLIMIT": "-"}))],
     [("night", "INACTIVE", None), ("gpu", "UP", 86400), ("old", "CLOSED", None)]),
    ("bjobs -json: run limits normalised to a host, a window's estimated start",
     lambda: [(j.native_id, j.state, j.walltime_s, j.estimated_start, j.nodes)
              for j in lsf.parse_status(_lsf(
                  "bjobs",
                  {"JOBID": "7001", "STAT": "RUN", "JOB_NAME": "t", "SLOTS": "8",
                   "EXEC_HOST": "8*gpu01", "RUNTIMELIMIT": "720.0/gpu01",
                   "START_TIME": "Dec  5 09:01", "FINISH_TIME": "Dec  5 21:01 L"},
                  {"JOBID": "7002", "STAT": "PEND", "JOB_NAME": "p", "SLOTS": "4",
                   "PEND_REASON": "Queue's dispatch window is closed;",
                   "ESSTART_TIME": "Dec  5 22:00 E", "RUNTIMELIMIT": "2:00/hostA"}))],
     [("7001", JobState.RUNNING, 43200, None, 1),
      ("7002", JobState.PENDING, 7200, datetime(2026, 12, 5, 22, 0, tzinfo=UTC), None)]),
    # Grid Engine
    ("qstat -f -xml: queues whose every instance is calendar-suspended, ambiguous, "
     "orphaned, in alarm, subordinate, disabled or in error start nothing",
     lambda: [(p.name, p.state, p.nodes) for p in sge.parse_snapshot(
         "ge", {"queue": SGE_QSTAT}).partitions],
     [("all.q", "UP", ["n04"]), ("night.q", "DOWN", ["n01", "n02", "n03"]),
      ("sub.q", "DOWN", ["n04", "n05"])]),
    ("qstat -xml -r: a waiting job's h_rt and slots",
     lambda: [(j.native_id, j.state, j.walltime_s, j.cpus)
              for j in sge.parse_snapshot("ge", {"queue": SGE_QSTAT}).jobs],
     [("40", JobState.PENDING, 3600, 8)]),
    # flux
    ("flux queue list: default mark, a stopped and a disabled queue",
     lambda: [(p.name, p.default, p.state, p.max_time_s, p.max_nodes)
              for p in flux.parse_queues(FLUX_QUEUES)],
     [("batch", True, "UP", 86400, None), ("debug", False, "DOWN", 1800, 2),
      ("gpu", False, "DOWN", 43200, None)]),
    ("flux queue list: the one anonymous queue",
     lambda: [(p.name, p.default, p.state, p.max_time_s)
              for p in flux.parse_queues(FLUX_ANON_QUEUE)],
     [("default", True, "UP", None)]),
    ("flux resource list: 4 nodes of 64 cores, one running a job of 8: their sizes",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated) for n in flux.parse_resources(
         "free|genoa|4|248|0|n[01-04]\nallocated|genoa|1|8|0|n01\n")],
     [("n01", "mixed", 64, 8), ("n02", "free", 64, 0), ("n03", "free", 64, 0),
      ("n04", "free", 64, 0)]),
    ("flux resource list: GPU nodes partly busy share what their lines leave",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.gpus, n.gpus_allocated)
              for n in flux.parse_resources("free||3|100|6|g[1-3]\nallocated||2|92|2|g[1-2]\n")],
     [("g1", 64, 46, 2, 1), ("g2", 64, 46, 2, 1), ("g3", 64, 0, 2, 0)]),
    ("flux resource list: a node in two state lines is mixed; down takes none",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.gpus, node_usable(n))
              for n in flux.parse_resources(FLUX_RESOURCES)],
     [("n01", "free", 64, 0, 4, True), ("n02", "free", 64, 0, 4, True),
      ("n03", "allocated", 64, 64, 4, True), ("n04", "mixed", 64, 32, 0, True),
      ("n05", "down", 64, 0, 0, False), ("n06", "down", 64, 0, 0, False)]),
    ("flux jobs --json: numeric states, no limit, an estimate, a timeout",
     lambda: [(j.native_id, j.state, j.walltime_s, j.estimated_start is not None,
               j.exit_code, j.user) for j in flux.parse_status(FLUX_JOBS)],
     [("2203318222848", JobState.PENDING, None, True, None, "1001"),
      ("2203318222849", JobState.RUNNING, 3600, False, None, "bob"),
      ("2203318222850", JobState.TIMEOUT, 3600, False, 143, None)]),
]


@pytest.mark.parametrize("label, read, expected", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(label, read, expected):
    assert read() == expected


# -- focused: what placement makes of each fault this sweep found -------------------------

def _place(script: str, *sites):
    from test_placement_cases import run

    return run(script, *sites)


def _site(name: str, scheduler: str, snap):
    from test_placement_cases import NOW

    from diamond_jupyter.config import SiteConfig

    return (SiteConfig(name=name, scheduler=scheduler, metadata={"architecture": "x86_64"}),
            snap.model_copy(update={"taken_at": NOW}))


def test_slurmrestd_drained_partition_of_v0040_is_not_placed_in():
    # v0.0.39 on, a partition's state is `partition.state`, a list: before, read UP, and its
    # nodes `nodes.configured` read as junk names (a node list of the dict's text)
    snap = slurm_rest.parse_snapshot("vega", {
        "partitions": REST_PARTITIONS_40, "nodes": json.dumps({"nodes": [
            {"name": f"gpu20{i}", "state": ["IDLE"], "cpus": 96, "real_memory": 1000000,
             "gres": "gpu:h100:4", "partitions": ["gpu"]} for i in range(1, 5)] + [
            {"name": f"cn10{i}", "state": ["IDLE"], "cpus": 64, "real_memory": 385000,
             "partitions": ["cpu"]} for i in range(1, 6)]})})
    site = _site("vega", "slurm", snap)
    p = _place("#SBATCH -p gpu --gres=gpu:h100:1 -t 1:00:00", site)
    v = p.verdict("vega")
    assert not v.feasible and "DRAIN" in " ".join(v.reasons), p.explain()
    # a job of no partition goes to the one that is up, and GPUs are only in the drained one
    assert not _place("#SBATCH --gres=gpu:h100:1 -t 1:00:00", site).verdict("vega").feasible
    v = _place("#SBATCH -n 4 -t 1:00:00", site).verdict("vega")
    assert (v.verdict, v.partition) == ("READY", "cpu")


def test_slurmrestd_v0041_node_features_are_read_as_names():
    # before: `['h100'`, ` 'ib']` (the list's text split at its commas): no job asking
    # `-C ib` could run there
    snap = slurm_rest.parse_snapshot("vega", {"nodes": REST_NODES_41, "partitions": json.dumps(
        {"partitions": [{"name": "gpu", "nodes": {"configured": "gpu[201-202]"},
                         "partition": {"state": ["UP"]}, "flags": ["default"]}]})})
    v = _place("#SBATCH -C ib --gres=gpu:h100:2 -t 1:00:00",
               _site("vega", "slurm", snap)).verdict("vega")
    assert (v.verdict, v.partition) == ("READY", "gpu")


def test_lsf_hosts_closed_for_now_are_not_free_now():
    # hB (dispatch window closed) and hC (load past its threshold) have no job but take
    # none now; hA runs an exclusive job of 4 slots. Before, 32 slots were free on hB: a
    # job of 32 slots READY now
    snap = lsf.parse_snapshot("lsfsite", {"hosts": BHOSTS, "lshosts": LSHOSTS,
                                          "queues": _lsf("bqueues", {
                                              "QUEUE_NAME": "normal", "STATUS": "Open:Active",
                                              "MAX": "-", "RUNLIMIT": "-"})})
    v = _place("#BSUB -n 32 -R \"span[hosts=1]\" -W 1:00",
               _site("lsfsite", "lsf", snap)).verdict("lsfsite")
    assert v.feasible and v.verdict != "READY", v


def test_pbs_job_exclusive_vnode_is_not_free_and_stale_is_not_used():
    # n002 runs a job of 16 CPUs with place=excl: the vnode is the job's whole. Before, its
    # other 112 CPUs were free (READY now), and stale n004 / unresolvable n003 took jobs
    snap = pbs.parse_snapshot("pro", {"nodes": PBSNODES_JSON, "queues": json.dumps({"Queue": {
        "workq": {"queue_type": "Execution", "enabled": "True", "started": "True"}}}),
        "server": json.dumps({"Server": {"pbs01": {"default_queue": "workq"}}})})
    free = {n.name: n.cpus - n.cpus_allocated for n in snap.nodes if node_usable(n)}
    assert free == {"n002": 0, "n005": 128, "g001": 56}
    v = _place("#PBS -l select=2:ncpus=100\n#PBS -l walltime=1:00:00",
               _site("pro", "pbs", snap)).verdict("pro")
    assert v.verdict != "READY", v


def test_sge_orphaned_and_ambiguous_instances_take_no_job():
    snap = sge.parse_snapshot("ge", {"queue": SGE_QSTAT})
    parts = {p.name: p for p in snap.partitions}
    # all.q: n01 calendar-suspended (C), n02 of an ambiguous configuration (c), n03 unknown
    # and in alarm: only n04 takes its jobs (before: n02 too); night.q: orphaned (o) and in
    # suspend alarm (A) were read open
    assert parts["all.q"].nodes == ["n04"] and parts["night.q"].state == "DOWN"


def test_qos_limit_on_one_gpu_type_is_checked():
    from test_placement_cases import hera

    from diamond_jupyter.model import QosLimits

    cfg, snap = hera()
    for p in snap.partitions:
        if p.name == "gpu":
            p.qos = "gpuq"
    snap.qos = {"gpuq": QosLimits(name="gpuq", max_tres_per_node={"gres/gpu:a100": 2})}
    # before: READY (the limit on a100s was read, never checked); Slurm holds the job
    # (QOSMaxGRESPerNode) for good
    p = _place("#SBATCH -p gpu --gres=gpu:a100:4 -t 1:00:00", (cfg, snap))
    v = p.verdict("hera")
    assert not v.feasible and any("a100 GPUs per node" in r and "gres/gpu:a100=2" in r
                                  for r in v.reasons), p.explain()
    # within it, and GPUs of another type, are not held by it
    assert _place("#SBATCH -p gpu --gres=gpu:a100:2 -t 1:00:00", (cfg, snap)).verdict(
        "hera").verdict == "READY"
    assert _place("#SBATCH -p gpu --gres=gpu:v100:2 -t 1:00:00", (cfg, snap)).verdict(
        "hera").verdict == "READY"


def test_flux_partly_busy_nodes_keep_their_size():
    # an 8-core job on n01: the free line says 248 cores on n01-n04. Before, each node was
    # read as 62 cores (n01 70): a job of a whole 64-core node waited for n01's job to end
    snap = flux.parse_snapshot("fl", {
        "resources": "free|genoa|4|248|0|n[01-04]\nallocated|genoa|1|8|0|n01\n",
        "queues": FLUX_ANON_QUEUE})
    v = _place("#flux: -N 1 -n 1 -c 64 -t 10m", _site("fl", "flux", snap)).verdict("fl")
    assert v.verdict == "READY", v


# -- focused: a record that cannot be read is said, the rest of the view stands ---------

def test_records_without_their_name_are_said_not_read_as_named_none():
    # LSF: a bqueues record without QUEUE_NAME was a queue named "None"
    snap = lsf.parse_snapshot("lsfsite", {"hosts": BHOSTS, "lshosts": LSHOSTS,
                                          "queues": _lsf("bqueues",
                                                         {"QUEUE_NAME": "gpu", "STATUS":
                                                          "Open:Active", "MAX": "-"},
                                                         {"STATUS": "Open:Active"})})
    assert [p.name for p in snap.partitions] == ["gpu"]
    assert [w.split(" (got")[0] for w in snap.warnings] == [
        "lsfsite: lsf: cannot parse bqueues -json record 2: no QUEUE_NAME"]
    # Grid Engine: a queue instance without QUEUE@HOST was a queue (and a host) named ""
    broken = SGE_QSTAT.replace("<name>all.q@n04</name>", "<name></name>")
    snap = sge.parse_snapshot("ge", {"queue": broken})
    assert [p.name for p in snap.partitions] == ["all.q", "night.q", "sub.q"]
    assert [w.split(" (got")[0] for w in snap.warnings] == [
        "ge: sge: cannot parse qstat -f -xml queue instance 4: no name QUEUE@HOST"]
    # PBS: a queue entry that is no object was dropped unsaid
    snap = pbs.parse_snapshot("pro", {"nodes": PBSNODES_JSON, "queues": json.dumps(
        {"Queue": {"workq": {"queue_type": "Execution", "enabled": "True",
                             "started": "True"}, "bad": "mangled"}})})
    assert [p.name for p in snap.partitions] == ["workq"]
    assert [w.split(" (got")[0] for w in snap.warnings] == [
        "pro: pbs: cannot parse qstat -Q -F json queue bad: not an object of attributes"]


def test_flux_queue_table_of_another_shape_keeps_the_sites_view():
    # before: SiteError, the whole site unreachable for a queue table it could not read
    with pytest.raises(Exception, match="TLIMIT"):
        flux.parse_queues("QUEUE STATE\nbatch up\n")
    snap = flux.parse_snapshot("fl", {"resources": FLUX_RESOURCES,
                                      "queues": "QUEUE STATE\nbatch up\n",
                                      "queue": FLUX_JOBS})
    assert snap.reachable and len(snap.nodes) == 6 and len(snap.jobs) == 2
    assert snap.partitions == []
    assert [w.split(" (got")[0] for w in snap.warnings] == [
        "fl: flux: cannot parse flux queue list: no header with TLIMIT"]


def test_slurm_partition_of_all_nodes_holds_them():
    # slurm.conf's `Nodes=ALL` printed as such: before, read as one node named "ALL", so
    # the partition had none and every job was refused
    parts = "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    nodes = "\n".join(f"NodeName=linux{i} CPUTot=8 CPUAlloc=0 RealMemory=16000 State=IDLE "
                      "Partitions=debug" for i in (1, 2))
    snap = slurm.parse_snapshot("small", {"partitions": parts, "nodes": nodes})
    assert snap.partitions[0].nodes == []
    v = _place("#SBATCH -N 2 -n 16 -t 10", _site("small", "slurm", snap)).verdict("small")
    assert (v.verdict, v.partition) == ("READY", "debug")
    rest = slurm_rest.parse_partitions(json.dumps({"partitions": [
        {"name": "debug", "nodes": {"configured": "ALL"}, "partition": {"state": ["UP"]}}]}))
    assert rest[0].nodes == []


def test_squeue_gpus_per_node_count_for_each_node():
    # %b is the job's TRES per node: a waiting job of 2 nodes x 4 GPUs takes all 8 GPUs of
    # g1-g2 when it starts. Before, read as 4 GPUs in all (2 a node): a 1-GPU job was READY
    # beside it, where Slurm starts the waiting job first and fills both nodes
    nodes = "\n".join(f"NodeName=g{i} CPUTot=64 CPUAlloc=0 RealMemory=256000 "
                      "Gres=gpu:a100:4 State=IDLE Partitions=gpu" for i in (1, 2))
    parts = "PartitionName=gpu Default=YES MaxTime=1-00:00:00 Nodes=g[1-2] State=UP"
    queue = ("77|PENDING|N/A|N/A|2026-03-01T08:00:00|1:00:00|2|2|bob|gpu|gres/gpu:a100:4||"
             "Priority||big")
    snap = slurm.parse_snapshot("hpc", {"partitions": parts, "nodes": nodes, "queue": queue})
    assert snap.jobs[0].gpus == 8
    v = _place("#SBATCH -n 1 --gres=gpu:a100:1 -t 2:00:00", _site("hpc", "slurm", snap)
               ).verdict("hpc")
    assert v.feasible and v.verdict != "READY", v
