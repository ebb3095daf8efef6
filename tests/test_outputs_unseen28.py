"""Sweep 28 of scheduler outputs: outputs written here in the forms each scheduler documents
(Slurm 20.11-24.05 `squeue`, `squeue --json`, `sacct -P`, `sinfo`, `scontrol show node -o`;
PBS Pro 2025 `qstat -f -F json`; LSF 10.1 `bjobs -o -json`; flux-core `flux jobs --json`;
Grid Engine `qstat -xml`), none captured and none met by sweeps 1-27: job names holding `|`,
`&` and emoji, node lists of brackets and ranges across groups (`c[01-02],d07`,
`tioga[18-19,21]`), time limits of UNLIMITED, Partition_Limit and INVALID, numbers past
what a field holds (Slurm's NO_VAL 4294967294, a PBS ncpus of 11 digits, Grid Engine's
4294967295 slots, LSF's -1 slots, flux's expiration of 1e300), negative exit statuses
(PBS's -3: never ran), and fields a newer version added. Each row of OUTPUTS is one output
and what a user would read from it; the focused tests after it are the faults this sweep
found (each failed before): sinfo's `64+` and `256000+` (a line of nodes grouped without
-N, each with 64 CPUs or more) read as nodes of 0 CPUs and 0 MB; a flux job of id -5 read
as a job."""

from __future__ import annotations

import json

from outputs_helpers import (
    at,
    ended,
    error_of,
    flux,
    lsf,
    pbs,
    sge,
    slurm,
    sweep_output_tests,
    wrapped,
)

# -- Slurm ------------------------------------------------------------------------------------

# squeue records of SQUEUE_FIELDS (the job name last: a `|` in it stays the name's)
SQUEUE = "\n".join([
    "801|RUNNING|2026-12-06T08:00:00|Unknown|2026-12-06T07:59:00|UNLIMITED|3|96|ana|cpu|N/A|"
    "c[01-02],d07|None|(null)|1:00:00|a|b 🧪",
    "802|PENDING|N/A|N/A|2026-12-06T07:59:00|Partition_Limit|1|1|ana|cpu|N/A||Resources|"
    "(null)|0:00|x",
    "803|PENDING|N/A|N/A|2026-12-06T07:59:00|INVALID|1|1|ana|cpu|N/A||(Nodes required for "
    "job are DOWN, DRAINED or reserved for jobs in higher priority partitions)|(null)|0:00|y",
]) + "\n"

# `squeue --json` of Slurm 24.05: numbers wrapped, an unlimited time, NO_VAL CPUs, a key of
# a later version
SQUEUE_JSON = json.dumps({
    "meta": {"slurm": {"version": {"major": "24", "micro": "1", "minor": "05"}}},
    "errors": [], "warnings": [], "jobs": [
        {"job_id": 1001, "job_state": ["RUNNING"], "name": "a|b 🧪", "user_name": "ana",
         "partition": "cpu", "node_count": wrapped(3), "cpus": wrapped(96),
         "nodes": "c[01-02],d07", "time_limit": wrapped(0, infinite=True),
         "start_time": wrapped(1796544000), "submit_time": wrapped(1796543000),
         "end_time": wrapped(0, set_=False), "state_reason": "None",
         "new_field_25": {"x": 1}},
        {"job_id": 1002, "job_state": ["PENDING", "REQUEUED"], "name": "x",
         "node_count": wrapped(1), "cpus": wrapped(4294967294),
         "time_limit": wrapped(0, set_=False), "state_reason": "BeginTime",
         "start_time": wrapped(0, set_=False)},
    ]})

# `sacct -X -a -P -n --format=HISTORY_FIELDS`: limits of no number, NO_VAL CPUs
HISTORY = "\n".join([
    "901|cpu|Partition_Limit|2026-12-06T07:00:00|2026-12-06T07:10:00|2026-12-06T08:00:00|4|1|"
    "COMPLETED",
    "902|cpu|UNLIMITED|2026-12-06T07:00:00|Unknown|Unknown|4294967294|1|CANCELLED by 1001",
]) + "\n"

# `sacct -X -P -n --format=SACCT_FIELDS`: a name holding `|`, an unassigned node list, and
# OUT_OF_MEMORY's exit code 0:125 (no signal: Slurm's own mark)
SACCT = "\n".join([
    "911|CANCELLED by 1001|0:15|2026-12-06T08:00:00|2026-12-06T08:30:00|None assigned|a|b|911",
    "912|OUT_OF_MEMORY|0:125|2026-12-06T08:00:00|2026-12-06T08:30:00|g[001-004]|oom 🧠|912",
]) + "\n"

# `sinfo -h -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'` without -N: a group of 128 nodes of 64 CPUs
# or more (`64+`), powered down (`~`); a drained node not responding (`*`); memory -1
SINFO = "\n".join([
    "c[001-128]|idle~|64+|256000+|(null)|(null)|cpu*|0/8192/0/8192|infinite|128",
    "d01|drained*|32|128000|(null)|(null)|cpu*|0/0/32/32|7-00:00:00|1",
    "e01|mixed-|48|-1|gpu:h100:4|h100|gpu|4/44/0/48|UNLIMITED|1",
]) + "\n"

# `scontrol show node -o` of Slurm 24.05: fields 20.11 had not (RestrictedCoresPerGPU,
# ResumeAfterTime, InstanceId ...), FreeMem of NO_VAL64, a reason of blanks and `|`
SCONTROL_NODE = (
    "NodeName=n1 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUEfctv=64 CPUTot=64 CPULoad=0.00 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=n1 NodeHostName=n1 "
    "Version=24.05.3 OS=Linux RealMemory=257000 AllocMem=0 FreeMem=18446744073709551614 "
    "Sockets=2 Boards=1 RestrictedCoresPerGPU=0 State=DOWN+DRAIN+NOT_RESPONDING "
    "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=cpu "
    "BootTime=None SlurmdStartTime=None LastBusyTime=2026-12-06T07:00:00 "
    "ResumeAfterTime=None CfgTRES=cpu=64,mem=257000M,billing=64 AllocTRES= CurrentWatts=0 "
    "AveWatts=0 InstanceId=i-0abc InstanceType=c6i "
    "Reason=disk fail | smart [root@2026-12-06T06:00:00]\n")

# -- PBS Pro ----------------------------------------------------------------------------------

PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2025.1.0", "pbs_server": "s", "Jobs": {
    "51.s": {"Job_Name": "a|b 🧪", "job_state": "F", "Exit_status": 271, "queue": "workq",
             "substate": 93, "exec_host": "n[001]/0*4",
             "Resource_List": {"ncpus": 4, "walltime": "1000:00:00", "nodect": 1},
             "stime": "Sun Dec  6 08:00:00 2026", "obittime": "Sun Dec  6 09:00:00 2026",
             "new_attr_2025": {"x": [1, 2]}},
    "52.s": {"Job_Name": "retry", "job_state": "F", "Exit_status": -3, "queue": "workq",
             "Resource_List": {"ncpus": 1, "walltime": "00:10:00"}},
    "53[].s": {"Job_Name": "arr", "job_state": "B", "array": True,
               "array_indices_submitted": "0-99:3",
               "array_state_count": "Queued:20 Running:5 Exiting:0 Expired:9 ",
               "queue": "workq", "Resource_List": {"ncpus": 1, "walltime": "-1"}},
    "54.s": {"Job_Name": "big", "job_state": "Q", "queue": "workq",
             "Resource_List": {"ncpus": 99999999999, "walltime": "24:00:00",
                               "mem": "18446744073709551615b"}},
}})

# -- LSF --------------------------------------------------------------------------------------

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 5, "RECORDS": [
    {"JOBID": "7001", "STAT": "EXIT", "JOB_NAME": "a|b 🧪", "EXIT_CODE": "130",
     "EXIT_REASON": "", "EXEC_HOST": "16*n01:16*n02", "SLOTS": "32", "RUNTIMELIMIT": "-",
     "NEW_FIELD": "x"},
    {"JOBID": "7002", "STAT": "RUN", "JOB_NAME": "sweep[17]", "EXEC_HOST": "n03",
     "SLOTS": "1", "RUNTIMELIMIT": "99999999.0/n03"},
    {"JOBID": "7003", "STAT": "PEND", "JOB_NAME": "p", "SLOTS": "-1",
     "PEND_REASON": "Job dependency condition not satisfied;", "DEPENDENCY": "done(7001)"},
    {"JOBID": "7004", "STAT": "UNKWN", "JOB_NAME": "u"},
    {"JOBID": "7005", "STAT": "DONE", "JOB_NAME": "d", "EXIT_CODE": "-",
     "START_TIME": "Dec  6 08:00", "FINISH_TIME": "Dec  6 08:30 L"},
]})

# -- Flux -------------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 123456789012, "state": "INACTIVE", "result": "TIMEOUT", "returncode": 143,
     "name": "a|b 🧪", "nodelist": "tioga[18-19,21]", "nnodes": 3, "ntasks": 96,
     "expiration": 0, "t_run": 0},
    {"id": 2, "state": "RUN", "nodelist": "n[1-2]", "nnodes": 2, "expiration": 1e300,
     "t_run": 1797652800.5, "extra_new": None},
    {"id": 4, "state": "WEIRD"},
    {"id": -5, "state": "RUN"},
    {"id": 2**64, "state": "RUN"},
]})

# -- Grid Engine ------------------------------------------------------------------------------


def sge_job(number: int, state: str, name: str, *, slots: int = 1, queue: str = "",
            tasks: str = "") -> str:
    return (f'<job_list state="running"><JB_job_number>{number}</JB_job_number>'
            f"<JAT_prio>-0.50500</JAT_prio><JB_name>{name}</JB_name><JB_owner>ana</JB_owner>"
            f"<state>{state}</state><JAT_start_time>2026-12-06T08:00:00.123</JAT_start_time>"
            f"<queue_name>{queue}</queue_name><slots>{slots}</slots>"
            + (f"<tasks>{tasks}</tasks>" if tasks else "") + "<new_tag>1</new_tag></job_list>")


QSTAT_XML = ("<?xml version='1.0'?>\n<job_info><queue_info>"
             + sge_job(801, "dr", "a|b &amp; 🧪", slots=4294967295, queue="all.q@n[01].x")
             + sge_job(802, "hqw", "h") + sge_job(803, "Rr", "rr", slots=8, queue="gpu.q@g01")
             + "</queue_info><job_info>" + sge_job(804, "qw", "t", tasks="1-1000:7")
             + "</job_info></job_info>\n")


def said(run) -> tuple[object, list[str]]:
    """What `run(skipped)` read, and what it said it left out (each up to its sample)."""
    skipped: list[str] = []
    got = run(skipped)
    return got, [s.split(" (got ")[0] for s in skipped]


def jobs(rows) -> list[tuple]:
    return [(j.native_id, j.state.value, j.name, j.nodes, j.cpus, j.walltime_s, j.node_list)
            for j in rows]


OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm
    ("squeue: a name holding '|' and an emoji is the name; nodes across groups; UNLIMITED",
     lambda: jobs(slurm.parse_status(SQUEUE, []))[0],
     ("801", "RUNNING", "a|b 🧪", 3, 96, None, "c[01-02],d07")),
    ("squeue: Partition_Limit and INVALID limits are none, not numbers",
     lambda: [j.walltime_s for j in slurm.parse_status(SQUEUE, [])][1:], [None, None]),
    ("squeue: a reason in parentheses with commas is the reason",
     lambda: slurm.parse_status(SQUEUE, [])[2].reason,
     "(Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
     "partitions)"),
    ("squeue --json 24.05: an infinite limit none, a key of a later version passed over",
     lambda: jobs(slurm.parse_status_json(SQUEUE_JSON, []))[0],
     ("1001", "RUNNING", "a|b 🧪", 3, 96, None, "c[01-02],d07")),
    ("squeue --json: NO_VAL CPUs and an unset limit are not known; requeued waits",
     lambda: [(j.state.value, j.cpus, j.walltime_s, j.reason, j.started_at)
              for j in slurm.parse_status_json(SQUEUE_JSON, [])][1],
     ("PENDING", None, None, "BeginTime", None)),
    ("sacct history: Partition_Limit is no limit, the job's times read",
     lambda: [(j.walltime_s, j.cpus, j.started_at, j.ended_at)
              for j in slurm.parse_history(HISTORY, [])][0],
     (None, 4, at(2026, 12, 6, 7, 10), at(2026, 12, 6, 8))),
    ("sacct history: NO_VAL CPUs, Unknown times: none, never 4294967294",
     lambda: [(j.state.value, j.cpus, j.nodes, j.started_at, j.ended_at)
              for j in slurm.parse_history(HISTORY, [])][1],
     ("CANCELLED", None, 1, None, None)),
    ("sacct: a name holding '|' is the name; 'None assigned' is no node list",
     lambda: [(j.native_id, j.state.value, j.name, j.node_list, j.exit_code, j.reason)
              for j in slurm.parse_accounting(SACCT, [])][0],
     ("911", "CANCELLED", "a|b", None, 143, "cancelled by uid 1001")),
    ("sacct: OUT_OF_MEMORY fails, its 0:125 no signal, its state kept as printed",
     lambda: [(j.state.value, j.native_state, j.exit_code, j.node_list)
              for j in slurm.parse_accounting(SACCT, [])][1],
     ("FAILED", "OUT_OF_MEMORY", None, "g[001-004]")),
    ("sinfo: `64+` and `256000+` are the least of the group, never 0",
     lambda: [(n.name, n.state, n.cpus, n.memory_mb)
              for n in slurm.parse_sinfo_nodes(SINFO, [])][0],
     ("c[001-128]", "idle~", 64, 256000)),
    ("sinfo: drained and not responding, mixed with GPUs; memory -1 is not known (0)",
     lambda: [(n.name, n.state, n.cpus, n.memory_mb, n.gpus, n.gpu_type, n.cpus_allocated)
              for n in slurm.parse_sinfo_nodes(SINFO, [])][1:],
     [("d01", "drained*", 32, 128000, 0, None, 0), ("e01", "mixed-", 48, 0, 4, "h100", 4)]),
    ("scontrol node 24.05: new fields passed over; a reason of blanks and '|', its author cut",
     lambda: [(n.name, n.state, n.cpus, n.memory_mb, n.reason, n.partitions)
              for n in slurm.parse_nodes(SCONTROL_NODE, [])],
     [("n1", "down+drain+not_responding", 64, 257000,
       "disk fail | smart", ["cpu"])]),
    # PBS Pro
    ("qstat -f json: a name of '|' and emoji; Exit_status 271 is signal 15; 1000 hours",
     lambda: [(j.name, j.state.value, j.exit_code, j.reason, j.walltime_s, j.ended_at)
              for j in pbs.parse_status(PBS_JOBS, [])][0],
     ("a|b 🧪", "FAILED", 143, "killed by signal 15", 3600000, at(2026, 12, 6, 9))),
    ("qstat -f json: Exit_status -3 never ran, said so",
     lambda: ended(pbs.parse_status(PBS_JOBS, []))[1],
     ("52.s", "FAILED", -3, "job never ran (Exit_status -3)")),
    ("qstat -f json: an array begun (B) runs; walltime -1 is none",
     lambda: jobs(pbs.parse_status(PBS_JOBS, []))[2],
     ("53[].s", "RUNNING", "arr", None, 1, None, None)),
    ("qstat -f json: ncpus of 11 digits is not known, never a number",
     lambda: jobs(pbs.parse_status(PBS_JOBS, []))[3],
     ("54.s", "PENDING", "big", None, None, 86400, None)),
    # LSF
    ("bjobs -json: a name of '|' and emoji, 2 hosts of 16 slots, exit 130, a new field",
     lambda: [(j.name, j.state.value, j.nodes, j.cpus, j.exit_code, j.walltime_s)
              for j in lsf.parse_status(BJOBS, [])][0],
     ("a|b 🧪", "FAILED", 2, 32, 130, None)),
    ("bjobs -json: an array element; a run limit past any real one is none",
     lambda: jobs(lsf.parse_status(BJOBS, []))[1],
     ("7002[17]", "RUNNING", "sweep[17]", 1, 1, None, "n03")),
    ("bjobs -json: SLOTS -1 is not known; UNKWN is unknown",
     lambda: [(j.state.value, j.cpus) for j in lsf.parse_status(BJOBS, [])][2:4],
     [("PENDING", None), ("UNKNOWN", None)]),
    ("bjobs -json: DONE with EXIT_CODE '-' is exit 0; a finish time marked L read",
     lambda: [(j.exit_code, j.started_at, j.ended_at) for j in lsf.parse_status(BJOBS, [])][4],
     (0, at(2026, 12, 6, 8), at(2026, 12, 6, 8, 30))),
    # Flux
    ("flux jobs: TIMEOUT of 3 nodes in two ranges; expiration 0 and t_run 0 none",
     lambda: [(j.native_id, j.state.value, j.name, j.nodes, j.node_list, j.exit_code,
               j.walltime_s, j.started_at) for j in flux.parse_status(FLUX_JOBS, [])][0],
     ("123456789012", "TIMEOUT", "a|b 🧪", 3, "tioga[18-19,21]", 143, None, None)),
    ("flux jobs: an expiration of 1e300 is no limit; a state of a later version unknown",
     lambda: [(j.native_id, j.state.value, j.walltime_s)
              for j in flux.parse_status(FLUX_JOBS, [])][1:3],
     [("2", "RUNNING", None), ("4", "UNKNOWN", None)]),
    ("flux jobs: an id below 0 or past 64 bits is said, no job",
     lambda: said(lambda s: [j.native_id for j in flux.parse_status(FLUX_JOBS, s)]),
     (["123456789012", "2", "4"],
      ["flux: cannot parse flux jobs --json job 4: not a job with an id",
       "flux: cannot parse flux jobs --json job 5: not a job with an id"])),
    # Grid Engine
    ("qstat -xml: dr is being deleted; '&amp;' read; 4294967295 slots not known",
     lambda: [(j.native_id, j.state.value, j.name, j.cpus, j.node_list, j.reason)
              for j in sge.parse_status(QSTAT_XML, [])][0],
     ("801", "RUNNING", "a|b & 🧪", None, "n[01].x", "being deleted")),
    ("qstat -xml: hqw held; Rr runs again on its queue's host",
     lambda: [(j.state.value, j.reason, j.node_list) for j in sge.parse_status(QSTAT_XML, [])][1:3],
     [("PENDING", "held (hqw)", None), ("RUNNING", None, "g01")]),
    ("qstat -xml: a waiting array of 143 tasks, one record for its range",
     lambda: ended(sge.parse_status(QSTAT_XML, []))[3], ("804.1-1000:7", "PENDING", None, None)),
]


test_output_read, test_the_sweep_has_twenty_outputs = sweep_output_tests(OUTPUTS)


# -- faults this sweep found ------------------------------------------------------------------

def test_a_grouped_sinfo_line_is_never_a_node_of_no_cpus() -> None:
    """Before, `64+` and `256000+` (sinfo without -N: 128 nodes of 64 CPUs or more) were
    read as 0 CPUs and 0 MB: placement saw 128 nodes that could run nothing."""
    node = slurm.parse_sinfo_nodes(SINFO, [])[0]
    assert (node.cpus, node.memory_mb) == (64, 256000)


def test_a_flux_id_no_job_has_is_no_job() -> None:
    """Before, `{"id": -5}` was read as a running job `-5`, one the monitor then followed."""
    assert error_of(lambda: flux.parse_status(json.dumps({"jobs": [{"id": -5}]}))) == \
        "flux: cannot parse flux jobs --json job 1: not a job with an id"
    assert [j.native_id for j in flux.parse_status(json.dumps(
        {"jobs": [{"id": 2**64 - 1, "state": "RUN"}]}))] == [str(2**64 - 1)]
