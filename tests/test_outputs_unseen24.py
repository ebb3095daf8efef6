"""Sweep 24 of scheduler outputs: the commands sweeps 1-23 met least (counted in their
files: none of `qconf -sc/-sp/-spl/-su/-sprj`, host groups, `qstat -j`'s concurrency,
`sacctmgr show assoc`, `scontrol show assoc_mgr`, squeue's `-O` job fields, `blimits`,
`bmgroup`/`bugroup`, `bjobs -A`, `lsinfo -r`; two of `sshare`), written here in the forms
each scheduler documents, none captured: sacct with job steps (.batch, .extern, .0, a het
component's step), array ranges with a throttle and every end state; sshare's TRES-minutes;
associations with every limit; reservations of 23.11/24.05 with flags and negated
accounts; PBS Pro vnodes of one host with resources_assigned; qacct records of a job that
never started. Each row of OUTPUTS is one output and what a user would read from it; the
focused tests after it are the faults this sweep found (each failed before): squeue's old
15-field output (no separators) cut short in its last record joined that job to the name
of the job before it, so the job looked gone; blimits' MEM with a unit (`40G/64G`) was
not read, so a user's memory limit was unknown; a bmgroup/bugroup message was read as a
group named after its first word; flux queue list's TDEFAULT was not read."""

from __future__ import annotations

import json

import pytest
from outputs_helpers import at, flux, pbs, sge, slurm

from diamond_jupyter.dialects import lsf_commands as lsf_cmds
from diamond_jupyter.dialects import sge_commands as sge_cmds
from diamond_jupyter.dialects.slurm_commands import (
    parse_assoc,
    parse_job_dependencies,
    parse_job_qos,
    parse_qos_usage,
    parse_tres_alloc,
    parse_usage,
)
from diamond_jupyter.model import SiteError

# -- Slurm ------------------------------------------------------------------------------------

# `sacct -P -n --format=jobid,state,exitcode,start,end,nodelist,jobname,jobid` (no -X: steps)
SACCT = "\n".join([
    "500|COMPLETED|0:0|2026-12-06T06:00:00|2026-12-06T07:00:00|c01|train|500",
    "500.batch|COMPLETED|0:0|2026-12-06T06:00:00|2026-12-06T07:00:00|c01|batch|500.batch",
    "500.extern|COMPLETED|0:0|2026-12-06T06:00:00|2026-12-06T07:00:00|c01|extern|500.extern",
    "500.0|COMPLETED|0:0|2026-12-06T06:01:00|2026-12-06T06:59:00|c01|python|500.0",
    "501+0|RUNNING|0:0|2026-12-06T08:00:00|Unknown|c02|het|501+0",
    "501+0.0|RUNNING|0:0|2026-12-06T08:00:00|Unknown|c02|srun|501+0.0",
    "502_[1-100%5]|PENDING|0:0|Unknown|Unknown|None assigned|arr|502_[1-100%5]",
    "503|CANCELLED by 1000|0:15|2026-12-06T06:00:00|2026-12-06T06:30:00|c03|x|503",
    "503.batch|CANCELLED|0:15|2026-12-06T06:00:00|2026-12-06T06:30:00|c03|batch|503.batch",
    "504|TIMEOUT|0:0|2026-12-06T06:00:00|2026-12-06T07:00:01|c04|t|504",
    "505|REQUEUED|0:0|2026-12-06T06:00:00|2026-12-06T06:10:00|c05|rq|505",
    "506|PREEMPTED|0:0|2026-12-06T06:00:00|2026-12-06T06:10:00|c06|pre|506",
    "507|BOOT_FAIL|0:0|2026-12-06T06:00:00|2026-12-06T06:00:00|cl-1|bf|507",
    "508|DEADLINE|0:0|None|2026-12-06T06:00:00|None assigned|dl|508",
    "509|FAILED|127:0|2026-12-06T06:00:00|2026-12-06T06:00:02|c07|nocmd|509",
    "510|RESIZING|0:0|2026-12-06T06:00:00|Unknown|c08|rs|510",
    "511|SUSPENDED|0:0|2026-12-06T06:00:00|Unknown|c09|sus|511",
]) + "\n"


def sacct_of(jid: str) -> tuple:
    """(state, native state, exit code, start, end, hosts) of job `jid` in SACCT."""
    [j] = [j for j in slurm.parse_accounting(SACCT) if j.native_id == jid]
    return j.state.value, j.native_state, j.exit_code, j.started_at, j.ended_at, j.node_list


# `sshare -nP -o Account,User,GrpTRESRaw,TRESRunMins` of 23.11: the root line with every TRES
SSHARE = "\n".join([
    "root||cpu=120000,mem=0,energy=0,node=3000,billing=120000,fs/disk=0,vmem=0,pages=0,"
    "gres/gpu=400|cpu=9600,mem=40960000,node=75,billing=9600,gres/gpu=64",
    "chem||cpu=52000,mem=880000,gres/gpu=310|cpu=1200",
    "chem|ana|cpu=51000,gres/gpu=300|cpu=1200,gres/gpu=60",
    "lab-2.x|bo.b|cpu=0|",
    "  Account  User  RawShares",
    "chem|cy|garbage|x",
])

# the probe's user line, then `sacctmgr -nP show assoc format=ASSOC_FIELDS`
ASSOC = "\n".join([
    "user|ana",
    "ana|chem|gpu|normal|normal,long|chem|cpu=512,gres/gpu=16|50|100|10|20|cpu=128,mem=500G|"
    "cpu=1000000|cpu=20000|cpu=60000",
    "ana|chem||normal|normal||||||||||",
    "ana|bio|||debug|root|||||||||",
])

# `scontrol -o show assoc_mgr flags=qos` (23.02 on): N is no limit, (n) what is used
QOS_USAGE = "\n".join([
    "QOS=normal(1) UsageRaw=1234.000000 GrpJobs=N(3) GrpJobsAccrue=N(0) GrpSubmitJobs=N(4) "
    "GrpWall=N(20.6) GrpTRES=cpu=N(12),mem=N(48000),energy=N(0),node=N(2),billing=N(12),"
    "gres/gpu=N(2) GrpTRESMins=cpu=N(5000),mem=N(2000000),gres/gpu=100(90) "
    "GrpTRESRunMins=cpu=N(720),gres/gpu=N(120) MaxWallPJ=1440",
    "QOS=long(7) UsageRaw=0 GrpTRESMins=cpu=1000000(999999) GrpTRESRunMins=cpu=N(0)",
    "QOS=gpu-hi.x(12) UsageRaw=2 GrpTRES=cpu=N(0)",
])

# `squeue -h -a -O QUEUE_JOB_FIELDS`: array task, het component, waiting jobs' dependencies
QUEUE_JOBS = "\n".join([
    "600|normal|chem|OK|R|cpu=8,mem=32G,node=1,billing=8|N/A|N/A|N/A|8|*|(null)|(null)|",
    "601_3|long|chem|NO|R|cpu=4,mem=1500M,node=1|N/A|N/A|N/A|4|*|(null)|(null)|",
    "602|normal|bio|OK|PD|cpu=16,mem=64G,node=1|gres/gpu:2|N/A|N/A|16|*|(null)|"
    "afterok:600(unfulfilled)|",
    "603+1|normal|bio|USER|R|cpu=2,mem=2T,node=1|N/A|N/A|N/A|1|*|matlab:1|(null)|",
    "604|debug|chem|OK|PD|cpu=1,mem=1G,node=1|N/A|N/A|N/A|1|*|(null)|"
    "afterany:600_*(unfulfilled),singleton(unfulfilled)|",
    "605|normal|chem|OK|R|cpu=1,node=1|N/A|N/A|N/A|1|*|(null)|(null)|",
])

# `scontrol show reservation -o` of 24.05: maintenance on all nodes, a daily course with a
# negated account, a FLEX reservation of no nodes with licenses
RESERVATIONS = "\n".join([
    "ReservationName=maint StartTime=2026-12-08T06:00:00 EndTime=2026-12-08T18:00:00 "
    "Duration=12:00:00 Nodes=c[001-128] NodeCnt=128 CoreCnt=8192 Features=(null) "
    "PartitionName=(null) Flags=MAINT,IGNORE_JOBS,SPEC_NODES,ALL_NODES TRES=cpu=8192 "
    "Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
    "BurstBuffer=(null) MaxStartDelay=(null)",
    "ReservationName=course StartTime=2026-12-06T08:00:00 EndTime=2026-12-06T12:00:00 "
    "Duration=04:00:00 Nodes=g[01-02] NodeCnt=2 CoreCnt=256 Features=(null) "
    "PartitionName=gpu Flags=DAILY,REPLACE_DOWN,PURGE_COMP=00:05:00 TRES=cpu=256 "
    "Users=(null) Groups=(null) Accounts=course,-chem Licenses=(null) State=ACTIVE",
    "ReservationName=flex StartTime=2026-12-06T08:00:00 EndTime=2027-12-06T08:00:00 "
    "Duration=365-00:00:00 Nodes=(null) NodeCnt=0 CoreCnt=0 Features=(null) "
    "PartitionName=(null) Flags=FLEX,ANY_NODES TRES=(null) Users=ana,-bo Groups=(null) "
    "Accounts=(null) Licenses=matlab:4 State=ACTIVE",
])

# -- PBS --------------------------------------------------------------------------------------

# `pbsnodes -a -F json` of PBS Pro 2022: host `big` as its natural vnode and two vnodes
# (resources_assigned on each), a node down and offline, a node with a Qlist
PBSNODES = json.dumps({"pbs_version": "2022.1.3", "pbs_server": "s", "nodes": {
    "big": {"Mom": "big.lab", "ntype": "PBS", "state": "free", "pcpus": 0,
            "resources_available": {"arch": "linux", "host": "big", "mem": "0kb",
                                    "ncpus": 0, "vnode": "big"}, "resources_assigned": {}},
    "big[0]": {"Mom": "big.lab", "ntype": "PBS", "state": "job-busy", "pcpus": 64,
               "jobs": ["12.s/0", "12.s/1"],
               "resources_available": {"arch": "linux", "host": "big",
                                       "mem": "257798144kb", "ncpus": 64, "ngpus": 2,
                                       "vnode": "big[0]"},
               "resources_assigned": {"mem": "257798144kb", "ncpus": 64, "ngpus": 2},
               "sharing": "default_shared"},
    "big[1]": {"Mom": "big.lab", "ntype": "PBS", "state": "free", "pcpus": 64,
               "resources_available": {"arch": "linux", "host": "big",
                                       "mem": "257798144kb", "ncpus": 64, "ngpus": 2,
                                       "vnode": "big[1]"},
               "resources_assigned": {"mem": "8388608kb", "ncpus": 8},
               "sharing": "default_shared"},
    "c01": {"Mom": "c01.lab", "state": "down,offline", "pcpus": 32,
            "comment": "node down: communication closed",
            "resources_available": {"arch": "linux", "host": "c01", "mem": "131072000kb",
                                    "ncpus": 32}, "resources_assigned": {}},
    "a01": {"Mom": "a01.lab", "state": "free", "pcpus": 72,
            "resources_available": {"arch": "linux", "host": "a01", "mem": "500gb",
                                    "ncpus": 72, "ngpus": 4, "Qlist": "gpu"},
            "resources_assigned": {"ncpus": "0"}, "last_state_change_time": 1764990000},
}})


def pbs_node(name: str) -> tuple:
    """(state, CPUs, CPUs taken, MB, MB taken, GPUs, GPUs taken, queues) of node `name`."""
    [n] = [n for n in pbs.parse_nodes(PBSNODES) if n.name == name]
    return (n.state, n.cpus, n.cpus_allocated, n.memory_mb, n.memory_allocated, n.gpus,
            n.gpus_allocated, n.partitions)


# -- LSF --------------------------------------------------------------------------------------

BLIMITS = """
INTERNAL RESOURCE LIMITS:

NAME               USERS          QUEUES         HOSTS          PROJECTS       SLOTS        MEM          TMP          SWP          JOBS
gpu_cap            ana            gpu            -              -              12/16        -            -            -            -
per_user           bo             normal         -              -              -            40960/65536  -            -            3/10
all_proj           -              -              -              chem           100/100      -            -            -            -
"""  # noqa: E501

BMGROUP = """GROUP_NAME    HOSTS
gpu_hosts    g01 g02 g03
all_hosts    all
rack1       (c001 c002 c003)
both        gpu_hosts/ rack1/ g03
"""

BJOBS_A = """JOBID     ARRAY_SPEC  OWNER  NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP
1201      sweep[1-500]%20 ana  500   470  10    20   0    0     0     0
1202      single[1-3] bo     3     0    3     0    0    0     0     0
1203      big[1-10000:2]%1 cy 5000 4999 0 1 0 0 0 0
"""

LSINFO = """RESOURCE_NAME  TYPE   ORDER  DESCRIPTION
r15s         Numeric   Inc   15-second CPU run queue length
mem          Numeric   Dec   Available memory (Mbytes)
ngpus        Numeric   Dec   Number of GPUs
matlab_lic   Numeric   Dec   Matlab licenses
TYPE_NAME
X86_64
LINUXPPC64
"""

BQUEUES_L = """QUEUE: gpu
  -- GPU jobs

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 40    0  Open:Active       -   16    -    -    24     8    16     0     0    0    8

 RUNLIMIT
 1440.0 min

RES_REQ:  select[ngpus>0 && type==X86_64] rusage[mem=4096:ngpus_physical=1]
USERS: all
HOSTS:  gpu_hosts/
------------------------------------------------------------------------------

QUEUE: normal
  -- default

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 30    0  Open:Active       -    -    -    -     0     0     0     0     0    0    0

USERS: all
HOSTS:  all
"""

# -- Grid Engine ------------------------------------------------------------------------------

QSTAT_J = """==============================================================
job_number:                 7001
exec_file:                  job_scripts/7001
submission_time:            Sun Dec  6 07:00:00 2026
owner:                      ana
job_name:                   sweep
job-array tasks:            1-100:1
maximum concurrency:        8
==============================================================
job_number:                 7002
owner:                      bo
job_name:                   one
maximum concurrency:        0
"""

QCONF_SQ = """qname                 all.q
hostlist              @allhosts
seq_no                0
slots                 1,[c01.lab=16],[c02.lab=32]
h_rt                  INFINITY
pe_list               make smp mpi
user_lists            NONE

qname                 gpu.q
hostlist              g01 g02 \\
                      g03
slots                 4
h_rt                  48:00:00
user_lists            gpuusers
"""

QCONF_SP = """pe_name            mpi
slots              9999
allocation_rule    $fill_up
control_slaves     TRUE

pe_name            smp
slots              9999
allocation_rule    $pe_slots

pe_name            rr4
allocation_rule    4
"""

QCONF_SC = """#name               shortcut   type        relop   requestable consumable default  urgency
#----------------------------------------------------------------------------------------
arch                a          RESTRING    ==      YES         NO         NONE     0
gpu                 gpu        INT         <=      YES         YES        0        0
h_vmem              h_vmem     MEMORY      <=      YES         YES        2G       0
lic_matlab          matlab     INT         <=      YES         JOB        0        0
scratch             scr        MEMORY      <=      YES         HOST       0        0
slots               s          INT         <=      YES         YES        1        1000
# >#< starts a comment but comments are not saved across edits --------
"""  # noqa: E501

HOSTGROUPS = """group_name @allhosts
c01.lab c02.lab g01.lab
group_name @gpu
g01.lab
group_name @empty
"""

QCONF_SU = """name    gpuusers
type    ACL
fshare  0
oticket 0
entries ana,bo,@chem

name    nobody
type    ACL
entries NONE
"""

QCONF_SPRJ = """name    chemproj
oticket 0
fshare  0
acl     gpuusers
xacl    NONE

name    other
acl     missinglist
xacl    NONE
"""

QACCT = """==============================================================
qname        all.q
hostname     c01.lab
owner        ana
jobname      sweep
jobnumber    7001
taskid       3
qsub_time    Sun Dec  6 07:00:00 2026
start_time   Sun Dec  6 07:01:00 2026
end_time     Sun Dec  6 07:31:00 2026
granted_pe   smp
slots        8
failed       0
exit_status  0
category     -l h_rt=3600,h_vmem=2G -pe smp 8
==============================================================
qname        all.q
hostname     c02.lab
owner        bo
jobname      oom
jobnumber    7003
taskid       undefined
qsub_time    Sun Dec  6 07:00:00 2026
start_time   Sun Dec  6 07:01:00 2026
end_time     Sun Dec  6 07:02:00 2026
slots        1
failed       100 : assumedly after job
exit_status  137
==============================================================
qname        all.q
hostname     c02.lab
owner        bo
jobname      never
jobnumber    7004
taskid       undefined
qsub_time    Sun Dec  6 07:00:00 2026
start_time   -/-
end_time     -/-
failed       26  : opening input/output file
exit_status  0
"""


def qacct_of(jid: str) -> tuple:
    """(state, exit code, start, end, limit, CPUs, reason) of job `jid` in QACCT."""
    [j] = [j for j in sge.parse_history(QACCT) if j.native_id == jid]
    return j.state.value, j.exit_code, j.started_at, j.ended_at, j.walltime_s, j.cpus, j.reason


# -- Flux -------------------------------------------------------------------------------------

FLUX_QUEUES = """QUEUE    EN ST TDEFAULT TLIMIT NNODES NCORES NGPUS
batch*   ✔  ✔  1h       1d     0-32   0-inf  0-inf
debug    ✔  ✗  30m      30m    0-2    0-inf  0-inf
gpu      ✗  ✔  inf      inf    0-inf  0-inf  1-8
"""

OUTPUTS: list[tuple[str, object, object]] = [
    ("sacct: a job and its .batch/.extern/.0 steps are one job, read from its own line",
     lambda: [j.native_id for j in slurm.parse_accounting(SACCT)][:3],
     ["500", "501+0", "502_[1-100%5]"]),
    ("sacct: the job's end, not its steps', is what a user sees",
     lambda: sacct_of("500"),
     ("COMPLETED", "COMPLETED", 0, at(2026, 12, 6, 6), at(2026, 12, 6, 7), "c01")),
    ("sacct: a het component running (its step too) still runs, no end",
     lambda: sacct_of("501+0"),
     ("RUNNING", "RUNNING", None, at(2026, 12, 6, 8), None, "c02")),
    ("sacct: an array range with a throttle waits, on no hosts",
     lambda: sacct_of("502_[1-100%5]"), ("PENDING", "PENDING", None, None, None, None)),
    ("sacct: CANCELLED by a uid, signal 15: cancelled, 128+15",
     lambda: sacct_of("503")[:3], ("CANCELLED", "CANCELLED by 1000", 143)),
    ("sacct: TIMEOUT one second past the hour ends at that second",
     lambda: sacct_of("504")[0::4], ("TIMEOUT", at(2026, 12, 6, 7, 0, 1))),
    ("sacct: REQUEUED waits again, no end",
     lambda: sacct_of("505")[:2] + sacct_of("505")[4:5], ("PENDING", "REQUEUED", None)),
    ("sacct: PREEMPTED has ended, failed",
     lambda: sacct_of("506")[:2], ("FAILED", "PREEMPTED")),
    ("sacct: BOOT_FAIL of a cloud node has failed on that node",
     lambda: sacct_of("507")[0::5], ("FAILED", "cl-1")),
    ("sacct: DEADLINE never started: timed out, no start, its end",
     lambda: sacct_of("508")[:2] + sacct_of("508")[3:5],
     ("TIMEOUT", "DEADLINE", None, at(2026, 12, 6, 6))),
    ("sacct: exit 127 (command not found) is the job's exit code",
     lambda: sacct_of("509")[:3], ("FAILED", "FAILED", 127)),
    ("sacct: RESIZING and SUSPENDED have not ended",
     lambda: [sacct_of(j)[:2] + sacct_of(j)[4:5] for j in ("510", "511")],
     [("RUNNING", "RESIZING", None), ("RUNNING", "SUSPENDED", None)]),
    ("sacct: slurmdbd's error alone is said, and names no job",
     lambda: (lambda said: ([j.native_id for j in slurm.parse_accounting(
         "sacct: error: slurmdbd: Getting response to message type: DBD_GET_JOBS_COND\n",
         said)], len(said)))([]),
     ([], 1)),
    ("sshare: the root line's TRES-minutes, every TRES",
     lambda: parse_usage(SSHARE)[("root", "")][0]["gres/gpu"], 400),
    ("sshare: a user's used and still-running TRES-minutes",
     lambda: parse_usage(SSHARE)[("chem", "ana")],
     ({"cpu": 51000, "gres/gpu": 300}, {"cpu": 1200, "gres/gpu": 60})),
    ("sshare: an account and user with dots and dashes, nothing running",
     lambda: parse_usage(SSHARE)[("lab-2.x", "bo.b")], ({"cpu": 0}, {})),
    ("sshare: a header and a line of garbage are no account",
     lambda: sorted(parse_usage(SSHARE)),
     [("chem", ""), ("chem", "ana"), ("lab-2.x", "bo.b"), ("root", "")]),
    ("sacctmgr: an association with every limit, memory in MB",
     lambda: (lambda a: (a.account, a.partition, a.qos, a.grp_tres, a.grp_jobs,
                         a.max_submit_jobs, a.max_tres_per_job, a.grp_tres_run_mins))(
         parse_assoc(ASSOC)[1][0]),
     ("chem", "gpu", ["normal", "long"], {"cpu": 512, "gres/gpu": 16}, 50, 20,
      {"cpu": 128, "mem": 512000}, {"cpu": 20000})),
    ("sacctmgr: an association of no limits has none",
     lambda: (lambda a: (a.partition, a.grp_tres, a.max_jobs, a.parent))(
         parse_assoc(ASSOC)[1][1]), (None, {}, None, None)),
    ("sacctmgr: the user named by the probe, three associations",
     lambda: (parse_assoc(ASSOC)[0], len(parse_assoc(ASSOC)[1])), ("ana", 3)),
    ("sacctmgr: no association lines: nothing is known, not 'none'",
     lambda: parse_assoc("user|ana\n"), ("ana", None)),
    ("assoc_mgr: a QOS's TRES-minutes used of a limit, and to run",
     lambda: parse_qos_usage(QOS_USAGE)["normal"],
     ({"cpu": 5000, "mem": 2000000, "gres/gpu": 90}, {"cpu": 720, "gres/gpu": 120})),
    ("assoc_mgr: a QOS without TRES-minutes fields: its usage not known",
     lambda: sorted(parse_qos_usage(QOS_USAGE)), ["long", "normal"]),
    ("squeue -O: memory held by running jobs only, in MB (2T, 1500M)",
     lambda: parse_tres_alloc(QUEUE_JOBS), {"600": 32768, "601_3": 1500, "603+1": 2097152}),
    ("squeue -O: dependencies still waited on, singleton too",
     lambda: parse_job_dependencies(QUEUE_JOBS),
     {"602": "afterok:600(unfulfilled)",
      "604": "afterany:600_*(unfulfilled),singleton(unfulfilled)"}),
    ("squeue -O: each job's QOS",
     lambda: parse_job_qos(QUEUE_JOBS)["601_3"], "long"),
    ("squeue -O: each job's account and OverSubscribe",
     lambda: (parse_job_qos(QUEUE_JOBS, 2)["603+1"], parse_job_qos(QUEUE_JOBS, 3)["603+1"]),
     ("bio", "USER")),
    ("scontrol show reservation: maintenance on all nodes, not yet active",
     lambda: (lambda r: (r.name, r.start, r.end, r.nodes, r.users, r.state, r.flags))(
         slurm.parse_reservations(RESERVATIONS)[0]),
     ("maint", at(2026, 12, 8, 6), at(2026, 12, 8, 18), ["c[001-128]"], ["root"],
      "INACTIVE", ["MAINT", "IGNORE_JOBS", "SPEC_NODES", "ALL_NODES"])),
    ("scontrol show reservation: a negated account is kept as written",
     lambda: slurm.parse_reservations(RESERVATIONS)[1].accounts, ["course", "-chem"]),
    ("scontrol show reservation: FLEX of no nodes, users with one negated",
     lambda: (lambda r: (r.nodes, r.users, r.flags))(slurm.parse_reservations(RESERVATIONS)[2]),
     ([], ["ana", "-bo"], ["FLEX", "ANY_NODES"])),
    ("scontrol show reservation: 'No reservations in the system' names none",
     lambda: slurm.parse_reservations("No reservations in the system\n"), []),
    ("pbsnodes: a host's vnodes are one node, their CPUs, memory and GPUs summed",
     lambda: pbs_node("big"), ("free", 128, 72, 503512, 259948, 4, 2, [])),
    ("pbsnodes: down,offline with nothing assigned",
     lambda: pbs_node("c01"), ("down,offline", 32, 0, 128000, 0, 0, 0, [])),
    ("pbsnodes: a node's Qlist is its queues; ncpus assigned as a string \"0\"",
     lambda: pbs_node("a01"), ("free", 72, 0, 512000, 0, 4, 0, ["gpu"])),
    ("pbsnodes: vnodes are not listed apart from their host",
     lambda: sorted(n.name for n in pbs.parse_nodes(PBSNODES)), ["a01", "big", "c01"]),
    ("blimits: slots used of a limit, per user and queue",
     lambda: [(x.name, x.users, x.queues, x.resource, x.used, x.limit)
              for x in lsf_cmds.parse_blimits(BLIMITS)][0],
     ("gpu_cap", ["ana"], ["gpu"], "slots", 12, 16)),
    ("blimits: a row's MEM (MB) and JOBS are two limits",
     lambda: sorted((x.resource, x.used, x.limit) for x in lsf_cmds.parse_blimits(BLIMITS)
                    if x.name == "per_user"),
     [("jobs", 3, 10), ("mem", 40960, 65536)]),
    ("blimits: a project's limit, any user",
     lambda: [(x.users, x.projects, x.used, x.limit)
              for x in lsf_cmds.parse_blimits(BLIMITS) if x.name == "all_proj"],
     [(None, ["chem"], 100, 100)]),
    ("blimits: 'No resource usage found.' is no limit",
     lambda: lsf_cmds.parse_blimits("No resource usage found.\n"), []),
    ("bmgroup: groups, a parenthesised list, nested groups expanded",
     lambda: lsf_cmds.parse_groups(BMGROUP),
     {"gpu_hosts": ["g01", "g02", "g03"], "all_hosts": ["all"],
      "rack1": ["c001", "c002", "c003"],
      "both": ["g01", "g02", "g03", "c001", "c002", "c003"]}),
    ("bugroup: user groups",
     lambda: lsf_cmds.parse_groups("GROUP_NAME    USERS\nchem    ana bo cy\nphys    dee\n"),
     {"chem": ["ana", "bo", "cy"], "phys": ["dee"]}),
    ("bjobs -A: each array's %k; an array without one has no throttle",
     lambda: lsf_cmds.parse_array_limits(BJOBS_A), {"1201": 20, "1203": 1}),
    ("lsinfo -r: the resource names, not the type table after them",
     lambda: lsf_cmds.parse_resource_names(LSINFO), ["r15s", "mem", "ngpus", "matlab_lic"]),
    ("bqueues -l: a queue's select[] and rusage[]; a queue without RES_REQ has none",
     lambda: lsf_cmds.parse_queue_res_req(BQUEUES_L),
     {"gpu": {"select": "[ngpus>0 && type==X86_64]",
              "rusage": "[mem=4096:ngpus_physical=1]"}}),
    ("bqueues -l: JL/U of a queue, none where '-'",
     lambda: lsf_cmds.parse_jl_u(BQUEUES_L), {"gpu": 16}),
    ("qstat -j: an array's maximum concurrency; 0 is no limit",
     lambda: sge_cmds.parse_throttles(QSTAT_J), {"7001": 8}),
    ("qconf -sq: per-host slots kept; a line continued with '\\' joined",
     lambda: (lambda q: (q["all.q"]["slots"], q["gpu.q"]["hostlist"].split()))(
         sge.parse_queue_configs(QCONF_SQ)),
     ("1,[c01.lab=16],[c02.lab=32]", ["g01", "g02", "g03"])),
    ("qconf -spl: one PE a line; 'no parallel environment defined' is none",
     lambda: (sge_cmds.parse_pe_names("make\nmpi\nsmp\n"),
              sge_cmds.parse_pe_names("no parallel environment defined\n")),
     (["make", "mpi", "smp"], [])),
    ("qconf -sp: each PE's allocation rule, a fixed number too",
     lambda: sge_cmds.parse_pe_rules(QCONF_SP),
     {"mpi": "$fill_up", "smp": "$pe_slots", "rr4": "4"}),
    ("qconf -sc: consumables per slot, job and host; non-consumables left out",
     lambda: {n: (c.shortcut, c.per, c.default)
              for n, c in (sge_cmds.parse_complexes(QCONF_SC) or {}).items()},
     {"gpu": ("gpu", "slot", 0.0), "h_vmem": ("h_vmem", "slot", 2147483648.0),
      "lic_matlab": ("matlab", "job", 0.0), "scratch": ("scr", "host", 0.0),
      "slots": ("s", "slot", 1.0)}),
    ("qconf -shgrp_resolved: hosts of each group, an empty group has none",
     lambda: sge_cmds.parse_hostgroups(HOSTGROUPS),
     {"@allhosts": ["c01.lab", "c02.lab", "g01.lab"], "@gpu": ["g01.lab"], "@empty": []}),
    ("qconf -su: entries with a @group; NONE is none",
     lambda: sge_cmds.parse_access_lists(QCONF_SU),
     {"gpuusers": ["ana", "bo", "@chem"], "nobody": []}),
    ("qconf -sprj: a project's acl as its list's users; one naming a list not read: "
     "not checked",
     lambda: {p: [(a.source, a.users, a.deny) for a in acls] for p, acls in
              sge_cmds.parse_project_acls(QCONF_SPRJ,
                                          sge_cmds.parse_access_lists(QCONF_SU)).items()},
     {"chemproj": [("acl gpuusers", ["ana", "bo", "@chem"], False)]}),
    ("qacct: an array task done: its id with the task, h_rt and slots",
     lambda: (sge.parse_history(QACCT)[0].native_id,) + qacct_of("7001.3")[:6],
     ("7001.3", "COMPLETED", 0, at(2026, 12, 6, 7, 1), at(2026, 12, 6, 7, 31), 3600, 8)),
    ("qacct: exit 137 is killed by signal 9",
     lambda: qacct_of("7003")[0::6], ("FAILED", "killed by signal 9")),
    ("qacct: failed 26 never started: failed, saying why",
     lambda: qacct_of("7004")[0:3:2] + qacct_of("7004")[6:],
     ("FAILED", None, "Grid Engine failed the job (26: opening input/output file)")),
    ("flux queue list: default queue, limits, a stopped queue and a disabled one",
     lambda: [(p.name, p.default, p.state, p.max_time_s, p.max_nodes)
              for p in flux.parse_queues(FLUX_QUEUES)],
     [("batch", True, "UP", 86400, 32), ("debug", False, "DOWN", 1800, 2),
      ("gpu", False, "DOWN", None, None)]),
]


@pytest.mark.parametrize(("what", "run", "expected"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(what: str, run, expected) -> None:
    assert run() == expected, what


def test_the_sweep_has_fifty_outputs() -> None:
    assert len(OUTPUTS) >= 50


# -- faults this sweep found ------------------------------------------------------------------

SQUEUE_OLD = (  # the 15 fields of before %M, no separators: the name last
    "77|RUNNING|2026-12-06T08:00:00|2026-12-07T08:00:00|2026-12-06T07:00:00|1:00:00|1|4|"
    "ana|cpu|N/A|c01|None|(null)|lead\n")


@pytest.mark.parametrize("cut", [
    "78|PENDING|N/A|N/A|2026-12-06T07:00:00|1:00:00|1|4|ana|cpu",  # cut in its fields
    "78_3|RUN",
    "78",  # cut after its id
])
def test_old_squeue_cut_in_its_last_record_fails_loudly(cut: str) -> None:
    """Before, the cut record became the last line of job 77's name and job 78 looked gone;
    now the read fails, saying the last line could be either."""
    for end in ("", "\n", "\n\n"):
        with pytest.raises(SiteError, match="last line begins a record of fewer than 15 "
                           "fields .* or ends a job name"):
            slurm.parse_status(SQUEUE_OLD + cut + end, [])


def test_old_squeue_name_over_lines_still_reads() -> None:
    """A name going on over lines that look like no record is still the job's name."""
    [job] = slurm.parse_status(SQUEUE_OLD + "second line of the name\n")
    assert (job.native_id, job.name) == ("77", "lead\nsecond line of the name")


def test_blimits_memory_with_a_unit_is_read_in_mb() -> None:
    """LSF_UNIT_FOR_LIMITS prints MEM with its unit; before, such a limit was not read."""
    text = BLIMITS.replace("40960/65536", "40G/64G    ")
    mem = [(x.name, x.used, x.limit) for x in lsf_cmds.parse_blimits(text)
           if x.resource == "mem"]
    assert mem == [("per_user", 40960, 65536)]


@pytest.mark.parametrize("message", ["No such user/host group\n",
                                     "LSF is down. Please wait ...\n"])
def test_group_command_message_is_no_group(message: str) -> None:
    """Before, `bmgroup`'s message made a group named 'No' (or 'LSF') of its other words."""
    assert lsf_cmds.parse_groups(message) is None
    assert lsf_cmds.parse_groups(message + BMGROUP)["gpu_hosts"] == ["g01", "g02", "g03"]


def test_flux_queue_default_time_is_read() -> None:
    """A job asking no time gets its queue's TDEFAULT; before, it was not read."""
    assert [p.default_time_s for p in flux.parse_queues(FLUX_QUEUES)] == [3600, 1800, None]
