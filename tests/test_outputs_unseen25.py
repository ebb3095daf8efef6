"""Sweep 25 of scheduler outputs: the commands sweeps 15-24 met least (counted in their
files, by the reader each goes through: none of slurmrestd's shares, associations or
submit warnings, `scontrol show config`'s bf_window and bf_max_job_user, `squeue -O`'s
licenses, `bqueues -l`'s TASKLIMIT and select[], `flux job id`; at most three of
`sacctmgr show qos`, `scontrol show licenses`, slurmrestd's QOS and licenses, `squeue
--start`, `bhosts -s`, `bqueues -l`'s JL/P and windows, Torque's text `qstat -f`), written
here in the forms each scheduler documents, none captured: 64-bit TRES-minutes, limits
UNLIMITED or unset, numbers printed signed or unsigned, warnings and errors arrays beside
the data, names with non-ASCII letters. Each row of OUTPUTS is one output and what a user
would read from it; the focused tests after it are the faults this sweep found (each failed
before): a slurmrestd association's or QOS's TRES-minutes past 2**32 read as no limit (the
text of sacctmgr read them); sshare's 64-bit "not set" read as a usage of 2**64 minutes; an
exit status printed unsigned (4294967295 for -1) read by PBS, Torque and Grid Engine as
killed by signal 4294967039; qacct's start of a job that never started, printed as the
epoch (`Thu Jan  1 01:00:00 1970`), read as a start in 1970; squeue --json's time limit
printed signed (-1) read as a limit of -60 s; slurmrestd's error whose text and
description are one said it twice; pbsnodes' resources_assigned gone negative (after a
server restart), bhosts' job counts of -1, and Slurm's CPUAlloc, AllocMem or alloc_cpus
below 0 read as more free than the node has; a partition's MaxNodes=-1 read as a limit
no job meets; a JSON job id written as a whole float (12.0) read as job '12.0', so job 12
looked gone."""

from __future__ import annotations

import json
from zoneinfo import ZoneInfo

import pytest
from outputs_helpers import at, error_of, flux, lsf, pbs, sge, slurm, torque, wrapped

from diamond_jupyter.dialects import lsf_commands as lsf_cmds
from diamond_jupyter.dialects import pbs_text
from diamond_jupyter.dialects import slurm_rest as rest
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import (
    parse_exit,
    parse_job_licenses,
    parse_qos,
    parse_usage,
)
from diamond_jupyter.model import JobStatus


def epoch(*parts: int) -> int:
    return int(at(*parts).timestamp())


def brief(jobs: list[JobStatus]) -> list[tuple]:
    """(id, state, exit code, reason, start, end) of each record."""
    return [(j.native_id, j.state.value, j.exit_code, j.reason, j.started_at, j.ended_at)
            for j in jobs]


# -- Slurm text -------------------------------------------------------------------------------

# `sacctmgr -nP show qos format=QOS_FIELDS` of 23.11: a QOS of every kind of limit, one of
# 64-bit TRES-minutes, one of none (UNLIMITED wall), a name with non-ASCII letters and a
# negative count, then sacctmgr's error for the database
QOS = "\n".join([
    "normal|cpu=256,gres/gpu=8|||cpu=2048|2-00:00:00|||10|50||DenyOnLimit||cpu=100000|",
    "long|||cpu=64||7-00:00:00|100|500|2|10|cpu=8|NoDecay,OverPartQOS|cpu=6000000000||"
    "cpu=99999",
    "inf|||||UNLIMITED|||||||||",
    "prüfung|cpu=-1|||||||||||||",
    "sacctmgr: error: Problem talking to the database: Connection refused",
])

CONFIG = "\n".join([
    "Configuration data as of 2026-12-06T09:00:00",
    "ClusterName             = Perlmutter",
    "MaxArraySize            = 4000001",
    "SchedulerParameters     = bf_continue,bf_window=4320,bf_max_job_user=20,"
    "bf_resolution=300",
])

LICENSES = "\n".join([
    "LicenseName=matlab@flexlm Total=100 Used=97 Free=3 Reserved=0 Remote=yes",
    "LicenseName=comsol Total=4 Used=1 Reserved=2 Remote=no",
])

# `squeue --start -h -o '%i|%S|%r'`: a waiting array with a throttle, a het component
ESTIMATES = "\n".join([
    "700|2026-12-07T03:00:00|Resources",
    "701_[1-50%4]|N/A|JobArrayTaskLimit",
    "702+0|Unknown|Dependency",
])

# `squeue -h -a -O QUEUE_JOB_FIELDS`: licenses of a remote server and local ones, a job
# asking either of two (`a|b`, which makes its line a field longer), a job of none
QUEUE_JOBS = "\n".join([
    "800|normal|chem|OK|R|cpu=8|N/A|N/A|N/A|8|*|matlab@flexlm:2,comsol:1|(null)|",
    "801_[1-9%2]|normal|chem|OK|PD|cpu=8|N/A|N/A|N/A|8|*|ansys:1|ansys|(null)|",
    "802|normal|chem|OK|PD|cpu=8|N/A|N/A|N/A|8|*|(null)|(null)|",
])

# `sshare -nP -o Account,User,GrpTRESRaw,TRESRunMins`: an account past 2**32 CPU-minutes
SSHARE = "\n".join([
    "bigproj||cpu=6000000000,mem=0,gres/gpu=48000000|cpu=86400",
    "bigproj|ana|cpu=5000000000|",
])

# -- slurmrestd (v0.0.40-v0.0.42 data parsers) -------------------------------------------------

SHARES = json.dumps({"shares": {"shares": [
    {"id": 1, "cluster": "c", "name": "root", "parent": "", "partition": "",
     "shares_normalized": wrapped(1), "shares": wrapped(1), "type": ["ASSOCIATION"],
     "tres": {"run_seconds": [{"name": "cpu", "value": wrapped(43200)}],
              "group_minutes": [],
              "usage": [{"name": "cpu", "value": 7200000.0},
                        {"name": "gres/gpu", "value": 1.0e6}]},
     "effective_usage": 1.0, "fairshare": {"factor": 1, "level": 1}},
    {"name": "ana", "parent": "chem", "type": ["USER"],
     "tres": {"usage": [{"name": "cpu", "value": 360000000000.5}],
              "run_seconds": [{"name": "cpu", "value": wrapped(18446744073709551614)},
                              {"name": "mem", "value": wrapped(0, infinite=True)}]}},
    {"name": "bo", "parent": "chem", "type": "USER",
     "tres": {"usage": [{"name": "cpu", "value": -5}]}},
    {"name": "", "parent": "chem", "type": ["USER"]},
]}, "warnings": [{"description": "Unknown field \"x\"", "source": "query"}], "errors": [],
    "meta": {"plugin": {"type": "openapi/slurmctld", "data_parser": "data_parser/v0.0.41"}}})

ASSOCIATIONS = json.dumps({"associations": [
    {"account": "chem", "cluster": "c", "user": "ana", "partition": "gpu",
     "default": {"qos": "normal"}, "qos": ["normal", "long"],
     "max": {"jobs": {"per": {"count": wrapped(50), "submitted": wrapped(100)},
                      "active": wrapped(0, set_=False), "total": wrapped(20)},
             "tres": {"total": [{"type": "cpu", "count": 512},
                                {"type": "gres", "name": "gpu", "count": 16},
                                {"type": "mem", "count": wrapped(0, infinite=True)}],
                      "per": {"job": [{"type": "cpu", "count": 128}]},
                      "group": {"minutes": [{"type": "cpu", "count": 6000000000}],
                                "active": [{"type": "cpu", "count": 20000}]},
                      "minutes": {"per": {"job": [{"type": "cpu", "count": -1}]}}}}},
    {"account": "chem", "user": "", "parent_account": "root", "max": {}},
    {"account": "bio", "user": "cy"},
    {"user": "ana"},
], "warnings": [], "errors": []})

REST_QOS = json.dumps({"qos": [
    {"name": "normal", "flags": ["DENY_LIMIT", "NO_DECAY"],
     "limits": {"max": {"wall_clock": {"per": {"job": wrapped(2880)}},
                        "jobs": {"active_jobs": {"per": {"user": wrapped(10)}},
                                 "per": {"user": wrapped(50)}},
                        "tres": {"per": {"job": [{"type": "cpu", "count": 256}]},
                                 "total": [{"type": "gres", "name": "gpu", "count": 64}],
                                 "minutes": {"per": {"job": [
                                     {"type": "cpu", "count": 5000000000}]}}},
                        "active_jobs": {"count": wrapped(0, infinite=True)}},
                "min": {"tres": {"per": {"job": [{"type": "cpu", "count": 4}]}}}}},
    {"name": "scavenger",
     "limits": {"max": {"wall_clock": {"per": {"job": wrapped(0, infinite=True)}}}}},
    {"limits": {}},
]})

REST_LICENSES = json.dumps({"licenses": [
    {"LicenseName": "matlab", "Total": 100, "Used": 98, "Free": 2, "Reserved": 0,
     "Remote": True, "LastConsumed": 98, "LastUpdate": wrapped(1765008000)},
    {"LicenseName": "ansys@lic", "Total": wrapped(12), "Used": wrapped(4),
     "Reserved": wrapped(2)},
], "warnings": [], "errors": []})


def rest_job(**fields) -> str:
    """A `squeue --json` (data_parser v0.0.42) listing of one running job with `fields`."""
    job = {"job_id": 903, "job_state": ["RUNNING"], "start_time": wrapped(
        epoch(2026, 12, 6, 8)), "name": "d", "nodes": "c[1-2]", **fields}
    return json.dumps({"jobs": [job], "warnings": [], "errors": [],
                       "meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}}})


# -- LSF --------------------------------------------------------------------------------------

BQUEUES_L = """QUEUE: short
  -- Jobs under 2 hours. Déjà vu: ünïcode here

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 50   10  Open:Active       -    -  0.5    -    12     2    10     0     0    0    2
Interval for a host to accept two jobs is 0 seconds

 RUNLIMIT
 120.0 min

 TASKLIMIT
 2   4   64

RUN_WINDOWS:  (22:00-06:00 ) 5:18:00-1:8:00
DISPATCH_WINDOW:  (20:00-08:00 )
USERS: all
HOSTS:  all
RES_REQ:  select[model==EPYC && ngpus>0] order[-slots]
------------------------------------------------------------------------------

QUEUE: big
  -- big jobs

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 30    0  Closed:Inact_Win  -    -    -    -     0     0     0     0     0    0    0

 PROCLIMIT
 256

USERS: all
HOSTS:  all
------------------------------------------------------------------------------

QUEUE: odd
  -- a task limit falling

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 30    0  Open:Active       -    -    -    -     0     0     0     0     0    0    0

 TASKLIMIT
 64  4

USERS: all
HOSTS:  all
"""

BHOSTS_S = """RESOURCE                 TOTAL       RESERVED       LOCATION
matlab_lic                 25           3.0           hostA hostB
                                                        hostC
matlab_lic                 10           0.0           hostD
scratch_gb            15000.0         100.0           all
tmp_pool                    -           0.0           hostE
"""

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 4, "RECORDS": [
    {"JOBID": "3001", "STAT": "EXIT", "EXIT_CODE": "-1", "EXIT_REASON": "TERM_CHKPNT",
     "SUBMIT_TIME": "Dec  6 08:00", "START_TIME": "Dec  6 08:01",
     "FINISH_TIME": "Dec  6 08:30 L"},
    {"JOBID": "3002[17]", "STAT": "DONE", "EXIT_CODE": "", "SUBMIT_TIME": "Dec  6 08:00",
     "START_TIME": "Dec  6 08:01", "FINISH_TIME": "Dec  6 08:30 L",
     "RUNTIMELIMIT": "1440.0/hostA"},
    {"JOBID": "3004", "STAT": "RUN", "SUBMIT_TIME": "Dec  6 08:00", "START_TIME": "Dec  6 08:01",
     "FINISH_TIME": "Dec  6 09:01 E", "RUNTIMELIMIT": "60.0/hostA", "JOB_NAME": "x" * 600},
    {"JOBID": "3007", "STAT": "EXIT", "EXIT_CODE": "130",
     "EXIT_REASON": "TERM_OWNER: job killed by owner", "FINISH_TIME": "Dec  6 08:30"},
]})

# -- Flux -------------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 1234567890123456789, "state": "INACTIVE", "result": "COMPLETED", "returncode": 0,
     "waitstatus": 0, "t_run": epoch(2026, 12, 6, 8), "t_inactive": epoch(2026, 12, 6, 9)},
    {"id": 12, "state": "INACTIVE", "result": "FAILED", "returncode": -1, "waitstatus": -1,
     "t_run": 0.0, "t_inactive": epoch(2026, 12, 6, 9) + 0.5,
     "exception": {"occurred": True, "severity": 0, "type": "exec",
                   "note": "task 0 (host n1): start failed: /bin/nope: No such file"}},
    {"id": 13, "state": "INACTIVE", "result": "CANCELED", "t_inactive": epoch(2026, 12, 6, 9),
     "exception": {"occurred": True, "severity": 0, "type": "cancel", "note": ""}},
    {"id": 16, "state": "SCHED", "annotations": {"sched": {
        "reason_pending": "insufficient resources", "t_estimate": epoch(2026, 12, 6, 10)}}},
    {"id": 15, "state": "DEPEND", "dependencies": ["afterok:ƒabc"]},
]})

# -- PBS and Torque ---------------------------------------------------------------------------

# Torque 6's text `qstat -f`: a value wrapped over a line led by a tab
QSTAT_F_TEXT = """Job Id: 123.pbs01.example.org
    Job_Name = very-long-name-ααα
    job_state = R
    Resource_List.walltime = 48:00:00
    Resource_List.select = 2:ncpus=64:mpiprocs=64:ngpus=4
    exec_host = n001/0*64+n002/0*64
    Variable_List = PBS_O_HOME=/home/ana,PBS_O_PATH=/usr/bin:/bin,
\tPBS_O_WORKDIR=/home/ana/run

Job Id: 124[].pbs01.example.org
    job_state = B
    array_indices_submitted = 1-10000%50
"""


def pbs_job(jid: str, **attrs) -> tuple[str, dict]:
    job = {"Job_Name": "n", "Job_Owner": "a@h", "queue": "workq",
           "Resource_List": {"walltime": "01:00:00", "ncpus": 1, "nodect": 1}}
    return jid, {**job, **attrs}


PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2024.1.0", "pbs_server": "s",
                       "Jobs": dict([
    pbs_job("1.s", job_state="F", Exit_status=-3, stime="Sun Dec  6 08:00:00 2026",
            obittime="Sun Dec  6 08:00:05 2026"),
    pbs_job("3.s", job_state="F", Exit_status=265),
    pbs_job("5[2].s", job_state="X", Exit_status=0),
    pbs_job("6.s", job_state="Q", Resource_List={"walltime": "9999:00:00"},
            comment="Not Running: Insufficient amount of resource: ncpus (R: 512 A: 256 "
                    "T: 4096)"),
])})

# -- Grid Engine ------------------------------------------------------------------------------


def qacct_record(number: str, **fields: str) -> str:
    record = {"qname": "all.q", "hostname": "c01", "owner": "ana", "jobname": "j",
              "jobnumber": number, "taskid": "undefined",
              "qsub_time": "Sun Dec  6 07:00:00 2026", "start_time": "Sun Dec  6 07:01:00 2026",
              "end_time": "Sun Dec  6 07:31:00 2026", "slots": "1", "failed": "0",
              "exit_status": "0", **fields}
    return "=" * 62 + "\n" + "".join(f"{k:<13}{v}\n" for k, v in record.items())


QACCT = "".join([
    qacct_record("8001", exit_status="-1"),
    qacct_record("8004", taskid="17", jobname="ünïcode " + "y" * 300),
    qacct_record("8005", failed="37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
                 exit_status="137"),
    # Univa's times: month/day/year with milliseconds
    qacct_record("8101", qsub_time="12/06/2026 07:00:00.471",
                 start_time="12/06/2026 07:01:00.000", end_time="12/06/2026 07:31:00.999"),
])

OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm text
    ("sacctmgr show qos: every limit of a QOS, memory-free TRES by name",
     lambda: (lambda q: (q.max_tres_per_job, q.grp_tres, q.max_wall_s, q.max_jobs_per_user,
                         q.max_submit_jobs_per_user, q.flags, q.grp_tres_run_mins))(
         parse_qos(QOS)["normal"]),
     ({"cpu": 256, "gres/gpu": 8}, {"cpu": 2048}, 172800, 10, 50, ["DenyOnLimit"],
      {"cpu": 100000})),
    ("sacctmgr show qos: 64-bit GrpTRESMins and per-user, minimum and job counts",
     lambda: (lambda q: (q.max_tres_per_user, q.grp_jobs, q.grp_submit_jobs,
                         q.min_tres_per_job, q.grp_tres_mins, q.max_tres_mins_per_job))(
         parse_qos(QOS)["long"]),
     ({"cpu": 64}, 100, 500, {"cpu": 8}, {"cpu": 6000000000}, {"cpu": 99999})),
    ("sacctmgr show qos: UNLIMITED wall is no limit",
     lambda: parse_qos(QOS)["inf"].max_wall_s, None),
    ("sacctmgr show qos: a non-ASCII name kept, a negative count not a limit",
     lambda: parse_qos(QOS)["prüfung"].max_tres_per_job, {}),
    ("sacctmgr show qos: its database error names no QOS",
     lambda: sorted(parse_qos(QOS)), ["inf", "long", "normal", "prüfung"]),
    ("scontrol show config: bf_window in minutes, read as seconds",
     lambda: slurm.parse_bf_window(CONFIG), 259200.0),
    ("scontrol show config: bf_max_job_user; 0 is no cap",
     lambda: (slurm.parse_bf_max_job_user(CONFIG),
              slurm.parse_bf_max_job_user("SchedulerParameters = bf_max_job_user=0\n")),
     (20, None)),
    ("scontrol show config: SchedulerParameters (null) keeps backfill's default window",
     lambda: slurm.parse_bf_window("SchedulerParameters     = (null)\n"), 86400.0),
    ("scontrol show config: MaxArraySize and ClusterName (kept lower case)",
     lambda: (slurm.parse_max_array_size(CONFIG), slurm.parse_cluster_name(CONFIG)),
     (4000001, "perlmutter")),
    ("scontrol show licenses: totals, a remote server's name with '@'",
     lambda: slurm.parse_licenses(LICENSES), {"matlab@flexlm": 100, "comsol": 4}),
    ("scontrol show licenses: free is Free=, else Total less Used and Reserved",
     lambda: slurm.parse_licenses(LICENSES, free=True), {"matlab@flexlm": 3, "comsol": 1}),
    ("scontrol show licenses: none configured is none; the controller down is not known",
     lambda: (slurm.parse_licenses("No licenses configured\n"), slurm.parse_licenses(
         "slurm_load_licenses error: Unable to contact slurm controller\n")), ({}, None)),
    ("squeue --start: an estimate kept; N/A and Unknown are none, ids with their suffixes",
     lambda: slurm.parse_estimates(ESTIMATES),
     {"700": at(2026, 12, 7, 3), "701_[1-50%4]": None, "702+0": None}),
    ("squeue -O: each job's licenses; one asking either of two is left out",
     lambda: parse_job_licenses(QUEUE_JOBS),
     {"800": {"matlab@flexlm": 2, "comsol": 1}, "802": {}}),
    ("sshare: CPU-minutes past 2**32 read exactly",
     lambda: parse_usage(SSHARE)[("bigproj", "")],
     ({"cpu": 6000000000, "mem": 0, "gres/gpu": 48000000}, {"cpu": 86400})),
    ("sshare: a user's line with nothing running",
     lambda: parse_usage(SSHARE)[("bigproj", "ana")], ({"cpu": 5000000000}, {})),
    ("sacct ExitCode: a signal is 128 + it; OUT_OF_MEMORY's 0:125 is none; empty none",
     lambda: [parse_exit(x) for x in ("0:15", "255:0", "0:125", "")], [143, 255, None, None]),
    # slurmrestd
    ("GET shares: TRES-seconds as minutes; root's run_seconds wrapped",
     lambda: rest.parse_shares(SHARES)[("root", "")],
     ({"cpu": 120000, "gres/gpu": 16666}, {"cpu": 720})),
    ("GET shares: a user's 64-bit usage exact; NO_VAL64 and infinite left out",
     lambda: rest.parse_shares(SHARES)[("chem", "ana")], ({"cpu": 6000000000}, {})),
    ("GET shares: a negative usage is none; a row without a name is left out",
     lambda: sorted(rest.parse_shares(SHARES)),
     [("chem", "ana"), ("chem", "bo"), ("root", "")]),
    ("GET shares: an errors array is the reply, its text and number said",
     lambda: error_of(lambda: rest.parse_shares(json.dumps({"shares": {"shares": []},
         "errors": [{"description": "Unable to query shares", "error_number": 1007,
                     "error": "Protocol authentication error"}]}))),
     "slurmrestd: shares: Protocol authentication error: Unable to query shares (1007)"),
    ("GET shares: a reply without the list says so",
     lambda: error_of(lambda: rest.parse_shares('{"meta": {}, "errors": [], "warnings": []}')),
     "slurmrestd: shares: the reply has no 'shares.shares' list"),
    ("GET associations: a user's limits, unset and infinite ones none",
     lambda: (lambda a: (a.account, a.partition, a.default_qos, a.qos, a.grp_tres, a.grp_jobs,
                         a.grp_submit_jobs, a.max_jobs, a.max_submit_jobs,
                         a.max_tres_per_job, a.grp_tres_run_mins,
                         a.max_tres_mins_per_job))(
         rest.parse_associations(ASSOCIATIONS, "ana")[0]),
     ("chem", "gpu", "normal", ["normal", "long"], {"cpu": 512, "gres/gpu": 16}, 50, 100,
      None, 20, {"cpu": 128}, {"cpu": 20000}, {})),
    ("GET associations: the account's own line, its parent; another user's left out",
     lambda: [(a.account, a.level, a.parent)
              for a in rest.parse_associations(ASSOCIATIONS, "ana")],
     [("chem", "user", None), ("chem", "account", "root")]),
    ("GET associations: an errors array (no slurmdbd) is no list of none",
     lambda: error_of(lambda: rest.parse_associations(json.dumps({"associations": [],
         "errors": [{"error": "Unable to connect to database", "error_number": 7000}]}))),
     "slurmrestd: associations: Unable to connect to database (7000)"),
    ("GET qos: limits under limits.max, flags as sacctmgr names them",
     lambda: (lambda q: (q.max_wall_s, q.max_jobs_per_user, q.max_submit_jobs_per_user,
                         q.max_tres_per_job, q.grp_tres, q.grp_jobs, q.min_tres_per_job,
                         q.flags))(rest.parse_qos(REST_QOS, "v0.0.41")["normal"]),
     (172800, 10, 50, {"cpu": 256}, {"gres/gpu": 64}, None, {"cpu": 4},
      ["DenyOnLimit", "NoDecay"])),
    ("GET qos: an infinite wall clock is no limit; a QOS without a name left out",
     lambda: (lambda q: (sorted(q), q["scavenger"].max_wall_s))(
         rest.parse_qos(REST_QOS, "v0.0.41")), (["normal", "scavenger"], None)),
    ("GET licenses: totals, plain and wrapped",
     lambda: rest.parse_licenses(REST_LICENSES)[0], {"matlab": 100, "ansys@lic": 12}),
    ("GET licenses: free as Free, else Total less Used and Reserved",
     lambda: rest.parse_licenses(REST_LICENSES)[1], {"matlab": 2, "ansys@lic": 6}),
    ("job/submit: the plugin's message and each warning kept, where it came from",
     lambda: rest.parse_submit(json.dumps({
         "job_id": 4242, "step_id": "batch",
         "job_submit_user_msg": "Job routed to partition 'short' ✓",
         "warnings": [{"description": "Field \"gpus_per_node\" is deprecated",
                       "source": "job"}], "errors": []})),
     ("4242", ["Job routed to partition 'short' ✓",
               "slurmrestd: Field \"gpus_per_node\" is deprecated (at job)"])),
    ("job/submit: v0.0.41's result object, held (2042) is no failure",
     lambda: rest.parse_submit(json.dumps({
         "result": {"job_id": 4243, "step_id": "batch"}, "warnings": [],
         "errors": [{"error": "Job is in held state, pending scheduler release",
                     "error_number": 2042}]})), ("4243", [])),
    ("GET jobs: slurmctld not answering is an error, not an empty queue",
     lambda: error_of(lambda: rest.parse_jobs(json.dumps({"jobs": [], "errors": [{
         "description": "Unable to contact slurm controller (connect failure)",
         "error_number": 1001, "source": "slurm_load_jobs"}]}))),
     "slurmrestd: jobs: Unable to contact slurm controller (connect failure) (1001)"),
    ("squeue --json v0.0.42: an array waiting on its throttle, unlimited, one record",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.reason)
              for j in slurm.parse_status_json(rest_job(
                  job_id=900, array_job_id=wrapped(900),
                  array_task_id=wrapped(0, set_=False), array_task_string="1-1000000%100",
                  job_state=["PENDING"], state_reason="JobArrayTaskLimit",
                  time_limit=wrapped(0, infinite=True), nodes=""))],
     [("900_[1-1000000%100]", "PENDING", None, "JobArrayTaskLimit")]),
    ("squeue --json v0.0.42: RUNNING+COMPLETING runs; NO_VAL limit none; warnings aside",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.started_at, j.node_list)
              for j in slurm.parse_status_json(rest_job(
                  job_state=["RUNNING", "COMPLETING"], time_limit=wrapped(4294967294)))],
     [("903", "RUNNING", None, at(2026, 12, 6, 8), "c[1-2]")]),
    # LSF
    ("bqueues -l: TASKLIMIT of three numbers: minimum, default, maximum",
     lambda: lsf_cmds.parse_task_sections(BQUEUES_L)["short"], (2, 4, 64)),
    ("bqueues -l: PROCLIMIT (before 9.1.3) of one number is the maximum",
     lambda: (lsf_cmds.parse_task_limits(BQUEUES_L)["big"],
              lsf_cmds.parse_task_defaults(BQUEUES_L)["big"]), ((None, 256), 1)),
    ("bqueues -l: a task limit falling is not read as one",
     lambda: "odd" in lsf_cmds.parse_task_sections(BQUEUES_L), False),
    ("bqueues -l: JL/P a fraction; '-' none",
     lambda: lsf_cmds.parse_jl_p(BQUEUES_L), {"short": 0.5}),
    ("bqueues -l: RUN_WINDOWS and DISPATCH_WINDOW, each window as written",
     lambda: lsf_cmds.parse_queue_windows(BQUEUES_L),
     {"short": [["22:00-06:00", "5:18:00-1:8:00"], ["20:00-08:00"]]}),
    ("bqueues -l: select[] of RES_REQ; a queue without RES_REQ has none",
     lambda: lsf_cmds.parse_queue_selects(BQUEUES_L),
     {"short": "select[model==EPYC && ngpus>0]"}),
    ("bhosts -s: a resource's instances, hosts over two lines, '-' TOTAL left out",
     lambda: {k: [(i.total, i.reserved, i.hosts) for i in v]
              for k, v in (lsf_cmds.parse_shared_instances(BHOSTS_S) or {}).items()},
     {"matlab_lic": [(25.0, 3.0, ["hostA", "hostB", "hostC"]), (10.0, 0.0, ["hostD"])],
      "scratch_gb": [(15000.0, 100.0, ["all"])]}),
    ("bhosts -s: the largest instance is what one job can take",
     lambda: lsf_cmds.parse_shared_resources(BHOSTS_S),
     {"matlab_lic": 25.0, "scratch_gb": 15000.0}),
    ("bhosts -s: 'No resource' is none; 'LSF is down' not known",
     lambda: (lsf_cmds.parse_shared_resources("No resource\n"),
              lsf_cmds.parse_shared_resources("LSF is down. Please wait ...\n")), ({}, None)),
    ("bjobs -json: EXIT -1 of a checkpoint, its times; a FINISH_TIME with ' L'",
     lambda: brief(lsf.parse_status(BJOBS))[0],
     ("3001", "FAILED", -1, "TERM_CHKPNT", at(2026, 12, 6, 8, 1), at(2026, 12, 6, 8, 30))),
    ("bjobs -json: an array element done, its limit per host",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.walltime_s)
              for j in lsf.parse_status(BJOBS)][1], ("3002[17]", "COMPLETED", 0, 86400)),
    ("bjobs -json: a 600-character name kept; an estimated FINISH_TIME is no end",
     lambda: [(len(j.name or ""), j.state.value, j.walltime_s, j.ended_at)
              for j in lsf.parse_status(BJOBS)][2], (600, "RUNNING", 3600, None)),
    ("bjobs -json: TERM_OWNER is cancelled",
     lambda: brief(lsf.parse_status(BJOBS))[3][:4],
     ("3007", "CANCELLED", 130, "TERM_OWNER: job killed by owner")),
    # Flux
    ("flux job id --to=words and --to=emoji: the id as given",
     lambda: (FluxCommands.parse_id("academy-photo-mask--ninja-memo-academy\n", "words"),
              FluxCommands.parse_id("😪🏭🐭🍔\n", "emoji")),
     ("academy-photo-mask--ninja-memo-academy", "😪🏭🐭🍔")),
    ("flux job id: an error is no id",
     lambda: error_of(lambda: FluxCommands.parse_id("flux-job: error: invalid jobid\n",
                                                    "words")),
     "flux: cannot parse flux job id --to=words: no job id in its words form"),
    ("flux jobs --json: a 64-bit id exact, its times",
     lambda: brief(flux.parse_status(FLUX_JOBS))[0],
     ("1234567890123456789", "COMPLETED", 0, None, at(2026, 12, 6, 8), at(2026, 12, 6, 9))),
    ("flux jobs --json: an exec exception: failed, the note kept, t_run 0 no start",
     lambda: brief(flux.parse_status(FLUX_JOBS))[1][1:5],
     ("FAILED", -1, "exec: task 0 (host n1): start failed: /bin/nope: No such file", None)),
    ("flux jobs --json: cancelled; waiting with the scheduler's estimate and reason",
     lambda: [(j.state.value, j.reason, j.estimated_start)
              for j in flux.parse_status(FLUX_JOBS)][2:4],
     [("CANCELLED", "cancel", None),
      ("PENDING", "insufficient resources", at(2026, 12, 6, 10))]),
    ("flux jobs --json: DEPEND names its dependency",
     lambda: [(j.state.value, j.reason) for j in flux.parse_status(FLUX_JOBS)][4],
     ("PENDING", "dependency: afterok:ƒabc")),
    # PBS and Torque
    ("qstat -f text: a wrapped value joined, Resource_List nested, unicode kept",
     lambda: (lambda f: (f["Job_Name"], f["Resource_List"], f["Variable_List"]))(
         pbs_text.parse_full(QSTAT_F_TEXT)["123.pbs01.example.org"]),
     ("very-long-name-ααα", {"walltime": "48:00:00",
                             "select": "2:ncpus=64:mpiprocs=64:ngpus=4"},
      "PBS_O_HOME=/home/ana,PBS_O_PATH=/usr/bin:/bin,PBS_O_WORKDIR=/home/ana/run")),
    ("qstat -f text: an array's block by its id",
     lambda: pbs_text.parse_full(QSTAT_F_TEXT)["124[].pbs01.example.org"],
     {"job_state": "B", "array_indices_submitted": "1-10000%50"}),
    ("qstat -F json: Exit_status -3 is PBS failing the job",
     lambda: brief(pbs.parse_status(PBS_JOBS))[0][:4],
     ("1.s", "FAILED", -3, "job never ran (Exit_status -3)")),
    ("qstat -F json: 265 is killed by signal 9 (128 + 9)",
     lambda: brief(pbs.parse_status(PBS_JOBS))[1][:4],
     ("3.s", "FAILED", 137, "killed by signal 9")),
    ("qstat -F json: a finished subjob (X) of exit 0 completed",
     lambda: brief(pbs.parse_status(PBS_JOBS))[2][:3], ("5[2].s", "COMPLETED", 0)),
    ("qstat -F json: a 9999-hour limit and the scheduler's comment kept",
     lambda: [(j.state.value, j.walltime_s, j.reason) for j in pbs.parse_status(PBS_JOBS)][3],
     ("PENDING", 35996400, "Not Running: Insufficient amount of resource: ncpus "
      "(R: 512 A: 256 T: 4096)")),
    ("qstat -x (Torque XML): -1 is Torque failing the job before it ran",
     lambda: brief(torque.parse_status(
         '<?xml version="1.0"?>\n<Data><Job><Job_Id>5001.t</Job_Id><job_state>C</job_state>'
         "<exit_status>-1</exit_status></Job></Data>"))[0][:4],
     ("5001.t", "FAILED", -1, "job never ran (Exit_status -1)")),
    # Grid Engine
    ("qacct -j: exit_status -1 is an exit code, not a signal",
     lambda: brief(sge.parse_accounting(QACCT))[0][:4], ("8001", "FAILED", -1, "exit code -1")),
    ("qacct -j: an array task of a 308-character name",
     lambda: [(j.native_id, j.state.value, len(j.name or "")) for j in
              sge.parse_accounting(QACCT)][1], ("8004.17", "COMPLETED", 308)),
    ("qacct -j: failed 37 is qmaster's limit: timed out",
     lambda: brief(sge.parse_accounting(QACCT))[2][:3], ("8005", "TIMEOUT", 137)),
    ("qacct -j: Univa's month/day/year times with milliseconds",
     lambda: brief(sge.parse_accounting(QACCT))[3][4:],
     (at(2026, 12, 6, 7, 1), at(2026, 12, 6, 7, 31, 0, 999000))),
]


@pytest.mark.parametrize(("what", "run", "expected"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(what: str, run, expected) -> None:
    assert run() == expected, what


def test_the_sweep_has_fifty_outputs() -> None:
    assert len(OUTPUTS) >= 50


# -- faults this sweep found ------------------------------------------------------------------

def test_rest_tres_minutes_past_32_bits_are_limits() -> None:
    """Before, slurmdb's 64-bit TRES counts past 2**32 read as no limit over REST (the
    text of sacctmgr read them), so a job was not checked against its allocation."""
    [mine, _] = rest.parse_associations(ASSOCIATIONS, "ana")
    assert mine.grp_tres_mins == {"cpu": 6000000000}
    assert not mine.tres_mins_used_known  # what was used of it is slurmctld's
    qos = rest.parse_qos(REST_QOS, "v0.0.41")["normal"]
    assert qos.max_tres_mins_per_job == {"cpu": 5000000000}


@pytest.mark.parametrize("mark", ["18446744073709551614", "18446744073709551615"])
def test_sshare_64_bit_marks_are_no_usage(mark: str) -> None:
    """Before, NO_VAL64 / INFINITE64 read as 2**64 minutes used (a float's rounding), so
    the account looked far past its limit."""
    used, running = parse_usage(f"chem|ana|cpu={mark},mem=10|cpu={mark}\n")[("chem", "ana")]
    assert (used, running) == ({"mem": 10}, {})


def test_unsigned_exit_status_is_the_signed_one() -> None:
    """Before, -1 printed unsigned read as killed by signal 4294967039."""
    pbs_jobs = json.dumps({"Jobs": dict([pbs_job("4.s", job_state="F",
                                                 Exit_status=4294967295)])})
    assert brief(pbs.parse_status(pbs_jobs))[0][:4] == (
        "4.s", "FAILED", -1, "job never ran (Exit_status -1)")
    torque_jobs = ('<?xml version="1.0"?>\n<Data><Job><Job_Id>5000.t</Job_Id><job_state>C'
                   "</job_state><exit_status>4294967295</exit_status></Job></Data>")
    assert brief(torque.parse_status(torque_jobs))[0][:4] == (
        "5000.t", "FAILED", -1, "job never ran (Exit_status -1)")
    assert brief(sge.parse_accounting(qacct_record("8002", exit_status="4294967295")))[0][
        :4] == ("8002", "FAILED", -1, "exit code -1")


def test_qacct_epoch_start_is_no_start() -> None:
    """Before, a job that never started (qacct prints the epoch in the cluster's zone)
    read as started and ended in 1970."""
    text = qacct_record("8003", start_time="Thu Jan  1 01:00:00 1970",
                        end_time="Thu Jan  1 01:00:00 1970",
                        failed="1       : assumedly before job")
    [job] = SgeCommands(tz=ZoneInfo("Europe/Berlin")).parse_accounting(text)
    assert (job.state.value, job.started_at, job.ended_at) == ("FAILED", None, None)
    assert job.submitted_at == at(2026, 12, 6, 6)


@pytest.mark.parametrize("limit", [-1, -2, wrapped(-5)])
def test_squeue_json_signed_time_limit_is_none(limit) -> None:
    """Before, a limit printed signed (INFINITE as -1) read as -60 s."""
    [job] = slurm.parse_status_json(rest_job(time_limit=limit))
    assert (job.state.value, job.walltime_s) == ("RUNNING", None)


def test_rest_error_said_once() -> None:
    """Before, an error whose text and description are one read 'X: X (2051)'."""
    why = "Requested time limit is invalid (missing or exceeds some limit)"
    assert error_of(lambda: rest.parse_submit(json.dumps({"errors": [
        {"description": why, "error_number": 2051, "error": why,
         "source": "slurm_submit_batch_job()"}], "warnings": []}))) == (
        f"slurmrestd refused the job: {why} (2051)")


def test_pbs_negative_assigned_is_nothing_taken() -> None:
    """PBS's count of what is assigned can go negative after a server restart; before, a
    node of 64 CPUs with -2 assigned had 66 free, and -1 GPUs were -1."""
    nodes = json.dumps({"pbs_version": "2024.1.0", "nodes": {
        "n1": {"state": "free", "pcpus": 64,
               "resources_available": {"host": "n1", "mem": "256gb", "ncpus": 64,
                                       "ngpus": "-1"},
               "resources_assigned": {"ncpus": -2, "ngpus": -1, "mem": "-1kb"}}}})
    [node] = pbs.parse_nodes(nodes)
    assert (node.cpus, node.cpus_allocated, node.gpus, node.gpus_allocated,
            node.memory_allocated) == (64, 0, 0, 0, 0)


def test_lsf_negative_job_counts_are_no_slots_taken() -> None:
    """Before, a bhosts record of RUN and NJOBS -1 read as -1 slots taken (one more free
    than the host has)."""
    hosts = json.dumps({"COMMAND": "bhosts", "HOSTS": 1, "RECORDS": [
        {"HOST_NAME": "h2", "STATUS": "ok", "MAX": "16", "NJOBS": "-1", "RUN": "-1"}]})
    assert [(n.cpus, n.cpus_allocated) for n in lsf.parse_hosts(hosts)] == [(16, 0)]


def test_slurm_negative_allocation_is_nothing_taken() -> None:
    """Before, scontrol's CPUAlloc=-1 / AllocMem=-10, sinfo's -1 allocated CPUs and
    slurmrestd's alloc_cpus -1 read as below 0 taken: more free than the node has."""
    [node] = slurm.parse_nodes("NodeName=c1 Arch=x86_64 CPUAlloc=-1 CPUTot=64 CPUEfctv=64 "
                               "RealMemory=256000 AllocMem=-10 State=IDLE Partitions=p")
    assert (node.cpus, node.cpus_allocated, node.memory_mb, node.memory_allocated) == (
        64, 0, 256000, 0)
    [node] = slurm.parse_sinfo_nodes(
        "g01|mixed|128|1031000|gpu:a100:4|a100|gpu|-1/64/0/128|2-00:00:00|1")
    assert (node.cpus, node.cpus_allocated, node.gpus) == (128, 0, 4)
    [node] = rest.parse_nodes(json.dumps({"nodes": [
        {"name": "n1", "state": ["IDLE"], "cpus": 64, "alloc_cpus": -1,
         "real_memory": wrapped(256000), "alloc_memory": -4, "partitions": ["p"]}]}))
    assert (node.cpus_allocated, node.memory_allocated) == (0, 0)


def test_partition_limit_below_zero_is_no_limit() -> None:
    """Before, MaxNodes=-1 (and the like) read as a limit of -1 nodes, which no job meets."""
    [part] = slurm.parse_partitions(
        "PartitionName=short Default=YES DefaultTime=00:30:00 MaxTime=04:00:00 MaxNodes=-1 "
        "MinNodes=1 Nodes=c[001-002] State=UP TotalCPUs=128 TotalNodes=2 MaxCPUsPerNode=-1 "
        "DefMemPerCPU=-1")
    assert (part.max_nodes, part.max_cpus_per_node, part.def_mem_per_cpu_mb,
            part.max_time_s, part.default_time_s) == (None, None, None, 14400, 1800)


def test_json_job_id_written_as_a_whole_float_is_the_job() -> None:
    """A JSON writer may print a number as 12.0; before, squeue --json's job 12.0 (and an
    array task 3.0) and flux's id 12.0 were jobs '12.0' and '12_3.0', so jobs 12 and 12_3
    looked gone. A fractional id is no job: said, not read as another."""
    squeue = json.dumps({"jobs": [
        {"job_id": 13.0, "array_job_id": 12.0, "array_task_id": 3.0, "job_state": "RUNNING"},
        {"job_id": 12.0, "job_state": ["PENDING"]}, {"job_id": 14.5, "job_state": "RUNNING"}]})
    said: list[str] = []
    assert [(j.native_id, j.state.value) for j in slurm.parse_status_json(squeue, said)] == [
        ("12_3", "RUNNING"), ("12", "PENDING")]
    assert [s.split(" (got ")[0] for s in said] == [
        "slurm: cannot parse squeue --json job 3: no job_id"]
    flux_jobs = json.dumps({"jobs": [{"id": 12.0, "state": "RUN"}, {"id": 12.5, "state": "RUN"}]})
    said = []
    assert [j.native_id for j in flux.parse_status(flux_jobs, said)] == ["12"]
    assert [s.split(" (got ")[0] for s in said] == [
        "flux: cannot parse flux jobs --json job 2: not a job with an id"]
