"""Sweep 21 of scheduler outputs: outputs written here in the forms each scheduler
documents, none captured and none met by sweeps 1-20: empty queues, node states with
their marks (`down*`, `drained+`, `draining@`, `unknown*`), names with spaces, colons and
non-ASCII letters, job ids at the top of their range, arrays waiting, running, throttled
and finished, jobs requeued or preempted, limits `UNLIMITED`/`Partition_Limit`/unset,
dates of another locale, outputs cut short and a message where the output should be.
Each row of OUTPUTS is one output and what a user would read from it; the focused tests
after it are the faults this sweep found (each failed before). Changed since: the rows
of a warning line before `bjobs -json` and `flux jobs --json` asserted the whole output
refused naming line 1; the JSON is now read where its document starts, so they assert
the jobs read and the line said."""

from __future__ import annotations

import json

import pytest
from outputs_helpers import (
    UTC,
    at,
    ended,
    error_of,
    flux,
    lsf,
    node_verdicts,
    pbs,
    sge,
    slurm,
    torque,
    wrapped,
)

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.lsf_commands import array_of as lsf_array_of
from diamond_jupyter.dialects.lsf_commands import array_tasks as lsf_array_tasks
from diamond_jupyter.dialects.lsf_commands import parse_jl_u, parse_task_limits
from diamond_jupyter.dialects.outputs_common import fold_array_tasks
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.pbs_text import parse_wrapper_nodes
from diamond_jupyter.dialects.sge_commands import array_of as sge_array_of
from diamond_jupyter.dialects.sge_commands import array_tasks as sge_array_tasks
from diamond_jupyter.dialects.slurm_commands import array_of as slurm_array_of
from diamond_jupyter.dialects.slurm_commands import array_tasks as slurm_array_tasks
from diamond_jupyter.placement_fit import node_usable


def epoch(*parts: int) -> int:
    return int(at(*parts).timestamp())


# -- Slurm text -----------------------------------------------------------------------------

# squeue lines of the fields before %M (15 '|' fields, then the name): the largest job id
# Slurm gives, a Partition_Limit time, a name with colons and spaces; an array's waiting
# tasks held back by its %-throttle; a requeued job waiting again; a preempted job
# suspended (PreemptMode=SUSPEND)
SQUEUE = "\n".join([
    "4294967294|PENDING|N/A|N/A|2026-12-01T09:00:00|Partition_Limit|1|4|alice|gpu|N/A|"
    "(null)|Priority|(null)|0:00|step 1: prepare : α",
    "55_[1-3,7,9-1000%8]|PENDING|2026-12-02T10:00:00|N/A|2026-12-01T09:00:00|INVALID|1|4|"
    "bob|cpu|N/A|(null)|JobArrayTaskLimit|(null)|0:00|sweep",
    "56|PENDING|2026-12-06T12:00:00|N/A|2026-12-01T09:00:00|30:00|1|1|carol|cpu|N/A|(null)|"
    "BeginTime|(null)|0:00|requeued",
    "57|SUSPENDED|2026-12-06T08:00:00|2026-12-06T10:00:00|2026-12-06T07:00:00|2:00:00|2|"
    "128|dave|scavenger|gres/gpu:4|g[07-08]|Preempted|(null)|45:10|low prio",
])

# `sacct -X -P -n --format=jobid,state,exitcode,start,end,nodelist,jobname,jobid` of
# states not read in earlier sweeps
SACCT = "\n".join([
    "60|RESIZING|0:0|2026-12-01T09:00:00|Unknown|c1|grow|60",
    "61|DEADLINE|0:0|2026-12-01T09:00:00|2026-12-01T10:00:00|c1|late|61",
    "62|BOOT_FAIL|0:0|None|2026-12-01T09:00:00|c2|boot|62",
    "63|REVOKED|0:0|None|None|None assigned|fed|63",
    "64|SUSPENDED|0:0|2026-12-01T09:00:00|Unknown|c3|susp|64",
    "65_4|CANCELLED by 0|0:9|2026-12-01T09:00:00|2026-12-01T09:30:00|c4|arr|65_4",
    "66|TIMEOUT|0:1|2026-12-01T09:00:00|2026-12-01T10:00:03|c5|slow|66",
]) + "\n"

# `sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'` with every mark a state can carry
SINFO = "\n".join([
    "c001|down*|64|256000|(null)|(null)|cpu*|0/0/64/64|2-00:00:00|1",
    "c003|drained+|64|256000|gpu:h100:8|h100|gpu|0/0/64/64|UNLIMITED|1",
    "c004|draining@|64|256000|gpu:h100:8(S:0-1)|h100|gpu|32/0/32/64|UNLIMITED|1",
    "c005|unknown*|N/A|N/A|N/A|N/A|gpu|0/0/0/0|UNLIMITED|1",
])

# -- squeue --json (24.05) and slurmrestd -----------------------------------------------------

SQUEUE_JSON = json.dumps({"jobs": [
    {"job_id": 4294967290, "name": "naïve: a name with spaces", "job_state":
     ["PENDING", "REQUEUED"], "state_reason": "BeginTime", "time_limit": wrapped(0, set_=False),
     "start_time": wrapped(epoch(2026, 12, 6, 12)), "submit_time": wrapped(epoch(2026, 12, 1))},
    {"job_id": 7, "job_state": ["PREEMPTED"], "time_limit": wrapped(60),
     "exit_code": {"status": ["SIGNALED"], "return_code": wrapped(0),
                   "signal": {"id": wrapped(15), "name": "TERM"}},
     "start_time": wrapped(epoch(2026, 12, 6, 7)), "end_time": wrapped(epoch(2026, 12, 6, 8))},
    {"job_id": 9, "job_state": ["TIMEOUT"], "time_limit": wrapped(60),
     "exit_code": {"status": ["SIGNALED"], "return_code": wrapped(0),
                   "signal": {"id": wrapped(9), "name": "KILL"}},
     "start_time": wrapped(epoch(2026, 12, 6, 7)), "end_time": wrapped(epoch(2026, 12, 6, 8))},
    {"job_id": 10, "array_job_id": wrapped(10), "array_task_id": wrapped(0, set_=False),
     "array_task_string": "1-1000%10", "job_state": ["PENDING"],
     "state_reason": "JobArrayTaskLimit"},
    {"job_id": 11, "array_job_id": wrapped(10), "array_task_id": wrapped(0),
     "job_state": ["RUNNING"], "start_time": wrapped(epoch(2026, 12, 6, 8))},
], "errors": [], "warnings": []})

REST_NODES = json.dumps({"nodes": [
    {"name": "a", "state": ["DOWN", "NOT_RESPONDING"], "cpus": 4, "real_memory": 1000},
    {"name": "b", "state": ["MIXED", "PLANNED"], "cpus": 4, "alloc_cpus": 2,
     "real_memory": 1000},
    {"name": "c", "state": ["IDLE", "POWERED_DOWN", "CLOUD"], "cpus": 4, "real_memory": 1000},
]})

# -- PBS Pro 2024 and Torque 6 ------------------------------------------------------------------

QSTAT_PRO = json.dumps({"timestamp": 1764579600, "pbs_version": "2024.1.0", "pbs_server": "s",
                        "Jobs": {
    "201.s": {"job_state": "Q", "Resource_List": {"walltime": "720:00:00",
                                                  "select": "1:ncpus=256"},
              "comment": "Not Running: Insufficient amount of resource: ncpus (R: 256 A: 128 "
                         "T: 128)"},
    "202.s": {"job_state": "F", "Exit_status": -3, "substate": 92,
              "stime": "Tue Dec  2 09:00:00 2025", "obittime": "Tue Dec  2 10:00:00 2025"},
    "203.s": {"job_state": "F", "Exit_status": 1, "substate": 93,
              "obittime": "Tue Dec  2 10:00:00 2025"},
    "204.s": {"job_state": "M", "queue": "workq@other"},
    "205.s": {"job_state": "S", "stime": "Tue Dec  2 09:00:00 2025"},
    "206.s": {"job_state": "F", "Exit_status": -29, "substate": 92,
              "resources_used": {"walltime": "01:00:05"},
              "Resource_List": {"walltime": "01:00:00"},
              "stime": "Di Dez  2 09:00:00 2025", "obittime": "Di Dez  2 10:00:05 2025"},
    "207.s": {"job_state": "R", "stime": "Tue Dec  2 09:00:00 2025",
              "exec_host": "n1/0*4+n2/0*4",
              "Resource_List": {"nodect": 2, "ncpus": 8, "walltime": "00:00:30"}},
    "200[4].s": {"job_state": "X", "Exit_status": 0, "substate": 92,
                 "stime": "Tue Dec  2 09:00:00 2025", "obittime": "Tue Dec  2 10:00:00 2025"},
}}, indent=4)

# `qstat -f -x` of Torque 6: epoch times, a 10-digit id at an FQDN, a completed array
# element, a job waiting for its -a time, one exiting
TORQUE_XML = (
    '<?xml version="1.0"?>\n<Data>'
    "<Job><Job_Id>4294967295.torque01.example.org</Job_Id><Job_Name>run: α β</Job_Name>"
    "<Job_Owner>alice@login1</Job_Owner><job_state>C</job_state><queue>batch</queue>"
    "<Resource_List><nodect>2</nodect><nodes>2:ppn=16</nodes><walltime>01:00:00</walltime>"
    "</Resource_List><resources_used><walltime>00:59:59</walltime></resources_used>"
    "<exec_host>n01/0-15+n02/0-15</exec_host><exit_status>0</exit_status>"
    f"<qtime>{epoch(2026, 12, 1, 9)}</qtime><start_time>{epoch(2026, 12, 1, 9, 1)}</start_time>"
    f"<comp_time>{epoch(2026, 12, 1, 10, 1)}</comp_time></Job>\n"
    "<Job><Job_Id>101[3].torque01</Job_Id><Job_Name>arr-3</Job_Name><job_state>R</job_state>"
    "<Resource_List><walltime>24:00:00</walltime></Resource_List><exec_host>n03/5</exec_host>"
    f"<start_time>{epoch(2026, 12, 1, 9)}</start_time></Job>\n"
    "<Job><Job_Id>102.torque01</Job_Id><Job_Name>held</Job_Name><job_state>H</job_state>"
    "<Hold_Types>s</Hold_Types><Resource_List><walltime>100:00:00</walltime>"
    "</Resource_List></Job>\n"
    "<Job><Job_Id>105.torque01</Job_Id><job_state>W</job_state></Job>\n"
    "<Job><Job_Id>106.torque01</Job_Id><job_state>E</job_state></Job>\n"
    "<Job><Job_Id>104.torque01</Job_Id><job_state>C</job_state><exit_status>271</exit_status>"
    f"<start_time>{epoch(2026, 12, 1, 9)}</start_time>"
    f"<comp_time>{epoch(2026, 12, 1, 9, 10)}</comp_time></Job>\n"
    "</Data>")

# -- LSF 10.1 -----------------------------------------------------------------------------------

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 6, "RECORDS": [
    {"JOBID": "2147483647", "STAT": "RUN", "USER": "a", "QUEUE": "q",
     "JOB_NAME": "name with spaces: and colons", "EXIT_CODE": "", "SUBMIT_TIME": "Dec  6 08:00",
     "START_TIME": "Dec  6 08:01", "FINISH_TIME": "-", "SLOTS": "1", "EXEC_HOST": "h1",
     "RUNTIMELIMIT": "UNLIMITED"},
    {"JOBID": "11", "STAT": "EXIT", "EXIT_CODE": "137",
     "EXIT_REASON": "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit",
     "SUBMIT_TIME": "Dec  6 08:00", "START_TIME": "Dec  6 08:01",
     "FINISH_TIME": "Dec  6 08:30", "SLOTS": "4", "EXEC_HOST": "4*h2",
     "RUNTIMELIMIT": "30.0/h2"},
    {"JOBID": "12", "STAT": "EXIT", "EXIT_CODE": "",
     "EXIT_REASON": "TERM_PREEMPT: job killed after preemption",
     "SUBMIT_TIME": "Dec  6 08:00", "START_TIME": "Dec  6 08:01", "FINISH_TIME": "Dec  6 08:30"},
    {"JOBID": "14", "STAT": "USUSP", "JOB_NAME": "s", "SUBMIT_TIME": "Dec  6 08:00",
     "START_TIME": "Dec  6 08:01"},
    {"JOBID": "15", "STAT": "EXIT", "EXIT_CODE": "",
     "EXIT_REASON": "TERM_REQUEUE_OWNER: job killed and requeued by owner",
     "FINISH_TIME": "Dec  6 08:30"},
    {"JOBID": "17", "STAT": "EXIT", "EXIT_CODE": "1", "EXIT_REASON": "TERM_RUNLIMIT",
     "SUBMIT_TIME": "Dec 31 08:30", "START_TIME": "Jan  1 08:30", "FINISH_TIME": "Jan  2 08:30"},
]})

BHOSTS = json.dumps({"COMMAND": "bhosts", "HOSTS": 5, "RECORDS": [
    {"HOST_NAME": "h1", "STATUS": "closed_Adm", "MAX": "32", "NJOBS": "0", "RUN": "0"},
    {"HOST_NAME": "h2", "STATUS": "unreach", "MAX": "32", "NJOBS": "8", "RUN": "8"},
    {"HOST_NAME": "h3", "STATUS": "closed_Busy", "MAX": "32", "NJOBS": "2", "RUN": "2"},
    {"HOST_NAME": "h5", "STATUS": "closed_Lock", "MAX": "32", "NJOBS": "2", "RUN": "2"},
    {"HOST_NAME": "h8", "STATUS": "closed_Excl", "MAX": "32", "NJOBS": "1", "RUN": "1"},
]})

# `bqueues -l` of LSF 10.1.0.13: the PJOBS column at the end, a queue without limits
BQUEUES_L = "\n".join([
    "QUEUE: gpu_night",
    "  -- GPU jobs at night: 22:00 to 06:00",
    "",
    "PARAMETERS/STATISTICS",
    "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS",
    " 40    0  Open:Inact_Win  256   16    -    4    40    24    16     0     0    0     0",
    "Interval for a host to accept two jobs is 0 seconds",
    "",
    "TASKLIMIT",
    " 2 4 64 ",
    "",
    "QUEUE: normal",
    "  -- default",
    "",
    "PARAMETERS/STATISTICS",
    "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS",
    " 30   20  Open:Active       -    -    -    -     0     0     0     0     0    0     0",
])

# -- flux-core 0.6x ------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 9223372036854775807, "state": "INACTIVE", "result": "FAILED", "name": "a: b c",
     "exception": {"occurred": True, "severity": 0, "type": "alloc",
                   "note": "unsatisfiable request"},
     "t_submit": epoch(2026, 12, 1, 9), "t_inactive": epoch(2026, 12, 1, 9, 0, 1)},
    {"id": 2, "state": "INACTIVE", "result": "FAILED", "waitstatus": 9,
     "t_run": epoch(2026, 12, 1, 9), "t_inactive": epoch(2026, 12, 1, 9, 5)},
    {"id": 4, "state": "DEPEND", "dependencies": ["after-ok:ƒ2Jc8CuU1"],
     "t_submit": epoch(2026, 12, 1, 9)},
    {"id": 5, "state": 16, "t_run": epoch(2026, 12, 1, 9), "duration": 0, "nnodes": 1},
    {"id": 6, "state": 64, "result": 4, "t_inactive": epoch(2026, 12, 1, 9, 5)},
    {"id": 7, "state": "SCHED", "t_submit": epoch(2026, 12, 1, 9),
     "annotations": {"sched": {"reason_pending": "insufficient resources",
                               "t_estimate": epoch(2026, 12, 1, 12)}}},
    {"id": 8, "state": "CLEANUP", "result": "", "t_run": epoch(2026, 12, 1, 9),
     "exception": {"occurred": True, "severity": 0, "type": "timeout",
                   "note": "resource allocation expired"}},
]})

# -- Grid Engine ----------------------------------------------------------------------------------


def _jl(num: int, code: str, extra: str = "", kind: str = "running") -> str:
    return (f'<job_list state="{kind}"><JB_job_number>{num}</JB_job_number><JB_name>n{num}'
            f"</JB_name><JB_owner>u</JB_owner><state>{code}</state>{extra}<slots>1</slots>"
            "</job_list>")


_RUN = "<JAT_start_time>2026-12-01T10:00:00</JAT_start_time><queue_name>all.q@{}</queue_name>"
_WAIT = "<JB_submission_time>2026-12-01T09:00:00</JB_submission_time>"
QSTAT_XML = (
    '<?xml version="1.0"?><job_info><queue_info>'
    + _jl(1, "Rr", _RUN.format("n1")) + _jl(2, "t", _RUN.format("n2"))
    + _jl(3, "s", _RUN.format("n2")) + _jl(4, "dr", _RUN.format("n2") + "<tasks>3</tasks>")
    + "</queue_info><job_info>"
    + _jl(5, "Rq", _WAIT, "pending") + _jl(6, "hRwq", _WAIT, "pending")
    + _jl(4, "qw", _WAIT + "<tasks>4-10:2</tasks>", "pending")
    + _jl(7, "Eqw", _WAIT + "<tasks>1,3</tasks>", "pending")
    + "</job_info></job_info>")

def _hv(name: str, value: str) -> str:
    return f"<hostvalue name='{name}'>{value}</hostvalue>"


def _qv(name: str, value: str) -> str:
    return f"<queuevalue qname='all.q' name='{name}'>{value}</queuevalue>"


QHOST = "\n".join([
    "<?xml version='1.0'?>",
    '<qhost xmlns:xsd="http://gridengine.sunsource.net/source/browse/*checkout*/gridengine/'
    'source/dist/util/resources/schemas/qhost/qhost.xsd?revision=1.2">',
    " <host name='global'>" + _hv("arch_string", "-") + _hv("num_proc", "-"),
    "  " + _hv("load_avg", "-") + _hv("mem_total", "-") + "</host>",
    " <host name='n1'>" + _hv("arch_string", "lx-amd64") + _hv("num_proc", "32"),
    "  " + _hv("load_avg", "4.01") + _hv("mem_total", "251.6G"),
    "  <resourcevalue name='slots' dominance='hc'>28</resourcevalue>",
    "  <queue name='all.q'>" + _qv("slots_used", "4") + _qv("slots", "32"),
    "   " + _qv("state_string", "") + "</queue></host>",
    " <host name='n2'>" + _hv("arch_string", "lx-arm64") + _hv("num_proc", "64"),
    "  " + _hv("load_avg", "-") + _hv("mem_total", "-"),
    "  <queue name='all.q'>" + _qv("slots_used", "0") + _qv("slots", "64"),
    "   " + _qv("state_string", "au") + "</queue></host>",
    "</qhost>"])

QACCT_NEVER_RAN = "\n".join([
    "=" * 62, "qname        all.q", "hostname     n1", "jobnumber    12",
    "taskid       undefined", "qsub_time    Mon Dec  1 08:00:00 2026", "start_time   -/-",
    "end_time     -/-", "failed       26  : opening input/output file", "exit_status  0"])


OUTPUTS = [
    # -- Slurm text ------------------------------------------------------------------------
    ("squeue: an empty queue is no job", lambda: slurm.parse_status(""), []),
    ("squeue: blank lines only are no job", lambda: slurm.parse_status("\n\n"), []),
    ("squeue: the largest id, Partition_Limit (no limit of its own), a name with colons",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.name, j.estimated_start)
              for j in slurm.parse_status(SQUEUE)][0],
     ("4294967294", "PENDING", None, "step 1: prepare : α", None)),
    ("squeue: an array's waiting tasks in several ranges with a throttle",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.reason, j.estimated_start)
              for j in slurm.parse_status(SQUEUE)][1],
     ("55_[1-3,7,9-1000%8]", "PENDING", None, "JobArrayTaskLimit", at(2026, 12, 2, 10))),
    ("squeue: a requeued job waiting for its begin time: its start is an estimate",
     lambda: [(j.state.value, j.started_at, j.estimated_start, j.walltime_s, j.reason)
              for j in slurm.parse_status(SQUEUE)][2],
     ("PENDING", None, at(2026, 12, 6, 12), 1800, "BeginTime")),
    ("squeue: a job preempted by suspension still holds its nodes",
     lambda: [(j.state.value, j.native_state, j.started_at, j.time_used_s, j.gpus,
               j.node_list, j.reason) for j in slurm.parse_status(SQUEUE)][3],
     ("RUNNING", "SUSPENDED", at(2026, 12, 6, 8), 2710, 8, "g[07-08]", "Preempted")),
    ("squeue: an error message where a line should be names the line",
     lambda: error_of(lambda: slurm.parse_status(
         "squeue: error: slurm_receive_msg: Socket timed out on send/recv operation\n")),
     "slurm: cannot parse squeue line 1: 1 of 15 fields"),
    ("sacct: RESIZING runs, DEADLINE is a timeout, BOOT_FAIL failed, REVOKED cancelled",
     lambda: [(j.native_id, j.state.value, j.started_at, j.ended_at)
              for j in slurm.parse_accounting(SACCT)][:4],
     [("60", "RUNNING", at(2026, 12, 1, 9), None),
      ("61", "TIMEOUT", at(2026, 12, 1, 9), at(2026, 12, 1, 10)),
      ("62", "FAILED", None, at(2026, 12, 1, 9)),
      ("63", "CANCELLED", None, None)]),
    ("sacct: SUSPENDED is still running, not ended",
     lambda: [(j.state.value, j.ended_at, j.exit_code)
              for j in slurm.parse_accounting(SACCT)][4],
     ("RUNNING", None, None)),
    ("sacct: an array task cancelled by root after SIGKILL",
     lambda: ended(slurm.parse_accounting(SACCT))[5],
     ("65_4", "CANCELLED", 137, "cancelled by uid 0")),
    ("sacct: a timeout killed by SIGHUP says 129",
     lambda: ended(slurm.parse_accounting(SACCT))[6], ("66", "TIMEOUT", 129, None)),
    ("sacct: the database unreachable, said with its line",
     lambda: error_of(lambda: slurm.parse_accounting(
         "sacct: error: Problem talking to the database: Connection refused\n")),
     "slurm: cannot parse sacct line 1: not a whole record of 8 fields"),
    ("sacct: a warning after the records names its line, the record is not taken as read",
     lambda: error_of(lambda: slurm.parse_accounting(SACCT + "sacct: warning: x\n")),
     "slurm: cannot parse sacct line 8: not a whole record of 8 fields"),
    ("sinfo -N: down*, drained+, draining@ and unknown* with N/A sizes",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.gpus, n.partitions)
              for n in slurm.parse_sinfo_nodes(SINFO)],
     [("c001", "down*", 64, 0, 0, ["cpu"]), ("c003", "drained+", 64, 0, 8, ["gpu"]),
      ("c004", "draining@", 64, 32, 8, ["gpu"]), ("c005", "unknown*", 0, 0, 0, ["gpu"])]),
    ("sinfo -N: the controller's error line is said, the nodes before it kept",
     lambda: (lambda skipped: ([n.name for n in slurm.parse_sinfo_nodes(
         SINFO + "\nsinfo: error: Unable to contact slurm controller (connect failure)",
         skipped)], skipped))([]),
     (["c001", "c003", "c004", "c005"],
      ["slurm: cannot parse sinfo line 5: expected 10 '|' fields (got 'sinfo: error: Unable "
       "to contact slurm controller (connect failure)')"])),
    ("node down* (not responding) takes no job and is not said to come back",
     lambda: node_verdicts("down*"), (False, None)),
    ("node drained+ takes no job", lambda: node_verdicts("drained+"), (False, None)),
    ("node draining@ takes no new job", lambda: node_verdicts("draining@"), (False, None)),
    ("node mixed- (planned for a waiting job) still takes jobs",
     lambda: node_verdicts("mixed-"), (True, None)),
    ("node reboot^ takes no job now, comes back", lambda: node_verdicts("reboot^"),
     (False, (60.0, True))),
    ("scontrol node DOWN+DRAIN+NOT_RESPONDING with its reason",
     lambda: [(n.name, n.state, n.cpus, node_usable(n)) for n in slurm.parse_nodes(
         "NodeName=c9 CPUTot=64 CPUAlloc=0 RealMemory=1 State=DOWN+DRAIN+NOT_RESPONDING "
         "Reason=Not responding [slurm@2026-12-01T10:00:00] Partitions=cpu\n")],
     [("c9", "down+drain+not_responding", 64, False)]),
    ("squeue --start: an estimate and N/A",
     lambda: slurm.parse_estimates("4294967294|2026-12-06T12:00:00|Priority\n55_9|N/A|"
                                   "JobArrayTaskLimit\n"),
     {"4294967294": at(2026, 12, 6, 12), "55_9": None}),
    ("sbatch --parsable of the largest id", lambda: slurm.parse_submit("4294967294\n"),
     "4294967294"),
    # -- squeue --json / slurmrestd ----------------------------------------------------------
    ("squeue --json: PENDING+REQUEUED, an unset limit, its begin time as the estimate",
     lambda: [(j.native_id, j.state.value, j.native_state, j.walltime_s, j.started_at,
               j.estimated_start, j.name, j.reason)
              for j in slurm.parse_status_json(SQUEUE_JSON)][0],
     ("4294967290", "PENDING", "PENDING+REQUEUED", None, None, at(2026, 12, 6, 12),
      "naïve: a name with spaces", "BeginTime")),
    ("squeue --json: PREEMPTED after SIGTERM failed 143; TIMEOUT after SIGKILL 137",
     lambda: ended(slurm.parse_status_json(SQUEUE_JSON))[1:3],
     [("7", "FAILED", 143, "preempted by the scheduler"), ("9", "TIMEOUT", 137, None)]),
    ("squeue --json: an array's waiting range and a running task",
     lambda: [(j.native_id, j.state.value, j.reason, j.started_at)
              for j in slurm.parse_status_json(SQUEUE_JSON)][3:],
     [("10_[1-1000%10]", "PENDING", "JobArrayTaskLimit", None),
      ("10_0", "RUNNING", None, at(2026, 12, 6, 8))]),
    ("squeue --json: an empty queue", lambda: slurm.parse_status_json(
        '{"jobs": [], "errors": [], "warnings": []}'), []),
    ("squeue --json cut short names the line",
     lambda: error_of(lambda: slurm.parse_status_json(
         SQUEUE_JSON[:SQUEUE_JSON.index(": a name") + 3])),
     "slurm: cannot parse squeue --json: invalid JSON (Unterminated string starting at "
     "line 1)"),
    ("slurmrestd GET jobs: the same records as squeue --json",
     lambda: [j.native_id for j in slurm_rest.parse_jobs(SQUEUE_JSON)],
     ["4294967290", "7", "9", "10_[1-1000%10]", "10_0"]),
    ("slurmrestd nodes: flag lists joined, DOWN+NOT_RESPONDING unusable",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, node_usable(n))
              for n in slurm_rest.parse_nodes(REST_NODES)],
     [("a", "down+not_responding", 4, 0, False), ("b", "mixed+planned", 4, 2, True),
      ("c", "idle+powered_down+cloud", 4, 0, True)]),
    ("slurmrestd: an empty node list", lambda: slurm_rest.parse_nodes(
        '{"nodes": [], "errors": []}'), []),
    # -- PBS Pro ------------------------------------------------------------------------------
    ("qstat -F json: Can-Never-Run comment, 720-hour walltime",
     lambda: [(j.state.value, j.walltime_s, j.reason)
              for j in pbs.parse_status(QSTAT_PRO)][0],
     ("PENDING", 2592000, "Not Running: Insufficient amount of resource: ncpus (R: 256 A: "
      "128 T: 128)")),
    ("qstat -F json: Exit_status -3 (JOB_EXEC_RETRY) never ran",
     lambda: ended(pbs.parse_status(QSTAT_PRO))[1],
     ("202.s", "FAILED", -3, "job never ran (Exit_status -3)")),
    ("qstat -F json: substate 93 with its exit code",
     lambda: ended(pbs.parse_status(QSTAT_PRO))[2], ("203.s", "FAILED", 1, None)),
    ("qstat -F json: a job moved to another server is not known here",
     lambda: [(j.state.value, j.native_state, j.partition)
              for j in pbs.parse_status(QSTAT_PRO)][3],
     ("UNKNOWN", "M", "workq@other")),
    ("qstat -F json: suspended is still running",
     lambda: [(j.state.value, j.started_at) for j in pbs.parse_status(QSTAT_PRO)][4],
     ("RUNNING", at(2025, 12, 2, 9))),
    ("qstat -F json: -29 is a walltime kill; German dates are not read as any date",
     lambda: [(j.state.value, j.exit_code, j.reason, j.started_at, j.ended_at)
              for j in pbs.parse_status(QSTAT_PRO)][5],
     ("TIMEOUT", -29, "killed by PBS: walltime exceeded", None, None)),
    ("qstat -F json: a 30-second walltime, two chunks",
     lambda: [(j.walltime_s, j.nodes, j.cpus, j.node_list)
              for j in pbs.parse_status(QSTAT_PRO)][6],
     (30, 2, 8, "n1/0*4+n2/0*4")),
    ("qstat -F json: a finished subjob (X)",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.ended_at)
              for j in pbs.parse_status(QSTAT_PRO)][7],
     ("200[4].s", "COMPLETED", 0, at(2025, 12, 2, 10))),
    ("qstat -F json with no job", lambda: pbs.parse_status(json.dumps(
        {"timestamp": 1764579600, "pbs_version": "2024.1.0", "pbs_server": "s"})), []),
    # -- Torque ---------------------------------------------------------------------------
    ("Torque XML: a 10-digit id at an FQDN, epoch times, C with exit 0",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.name, j.nodes, j.walltime_s,
               j.submitted_at, j.started_at, j.ended_at)
              for j in torque.parse_status(TORQUE_XML)][0],
     ("4294967295.torque01.example.org", "COMPLETED", 0, "run: α β", 2, 3600,
      at(2026, 12, 1, 9), at(2026, 12, 1, 9, 1), at(2026, 12, 1, 10, 1))),
    ("Torque XML: an array element running, a system hold, a 100-hour limit",
     lambda: [(j.native_id, j.state.value, j.reason, j.walltime_s)
              for j in torque.parse_status(TORQUE_XML)][1:3],
     [("101[3].torque01", "RUNNING", None, 86400),
      ("102.torque01", "PENDING", "held (s)", 360000)]),
    ("Torque XML: W waits, E is still running",
     lambda: [(j.native_id, j.state.value) for j in torque.parse_status(TORQUE_XML)][3:5],
     [("105.torque01", "PENDING"), ("106.torque01", "RUNNING")]),
    ("Torque XML: 256 + 15 is a SIGTERM, said as 143",
     lambda: ended(torque.parse_status(TORQUE_XML))[5],
     ("104.torque01", "FAILED", 143, "killed by signal 15")),
    ("Torque XML: an empty Data", lambda: torque.parse_status("<Data></Data>"), []),
    ("Torque: qstat's message where the XML should be",
     lambda: error_of(lambda: torque.parse_status("qstat: Unknown Job Id Error 99.t\n")),
     "pbs: cannot parse qstat -x (Torque XML): syntax error: line 1, column 0"),
    ("Torque XML cut short names the line and column",
     lambda: error_of(lambda: torque.parse_status(TORQUE_XML[:300])),
     "pbs: cannot parse qstat -x (Torque XML): unclosed token: line 2, column 268"),
    # -- LSF ------------------------------------------------------------------------------
    ("bjobs -json: the largest id, UNLIMITED run limit, a name with colons",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.name, j.started_at, j.ended_at)
              for j in lsf.parse_status(BJOBS)][0],
     ("2147483647", "RUNNING", None, "name with spaces: and colons", at(2026, 12, 6, 8, 1),
      None)),
    ("bjobs -json: TERM_MEMLIMIT failed with its code; a limit normalised to a host",
     lambda: [(j.state.value, j.exit_code, j.walltime_s, j.nodes, j.cpus)
              for j in lsf.parse_status(BJOBS)][1],
     ("FAILED", 137, 1800, 1, 4)),
    ("bjobs -json: TERM_PREEMPT failed, its reason kept",
     lambda: ended(lsf.parse_status(BJOBS))[2],
     ("12", "FAILED", None, "TERM_PREEMPT: job killed after preemption")),
    ("bjobs -json: USUSP is still running",
     lambda: [(j.state.value, j.started_at) for j in lsf.parse_status(BJOBS)][3],
     ("RUNNING", at(2026, 12, 6, 8, 1))),
    ("bjobs -json: killed and requeued by its owner is a cancel",
     lambda: ended(lsf.parse_status(BJOBS))[4],
     ("15", "CANCELLED", None, "TERM_REQUEUE_OWNER: job killed and requeued by owner")),
    ("bjobs -json: a run over New Year read in the right years",
     lambda: [(j.state.value, j.submitted_at, j.started_at, j.ended_at)
              for j in lsf.parse_status(BJOBS)][5],
     ("TIMEOUT", at(2025, 12, 31, 8, 30), at(2026, 1, 1, 8, 30), at(2026, 1, 2, 8, 30))),
    ("bjobs -json: dates of a French locale are not read as any date",
     lambda: [(j.state.value, j.submitted_at, j.ended_at) for j in lsf.parse_status(
         json.dumps({"RECORDS": [{"JOBID": "16", "STAT": "DONE", "SUBMIT_TIME": "déc.  6 08:00",
                                  "FINISH_TIME": "déc.  6 08:30"}]}))],
     [("COMPLETED", None, None)]),
    # changed: once refused whole naming line 1; the JSON is now read where it starts
    ("bjobs: a warning line before the JSON is said by its line, the jobs read",
     lambda: (lambda said: (len(lsf.parse_status("Warning: LSF_UNIT_FOR_LIMITS\n" + BJOBS,
                                                 said)) > 0, said))([]),
     (True, ["lsf: cannot parse bjobs -json line 1: a message before the JSON, not read "
             "(got 'Warning: LSF_UNIT_FOR_LIMITS')"])),
    ("bhosts -json: closed_Adm, unreach, closed_Busy, closed_Lock, closed_Excl",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, node_usable(n))
              for n in lsf.parse_hosts(BHOSTS)],
     [("h1", "closed_adm", 32, 32, False), ("h2", "unreach", 32, 8, False),
      ("h3", "closed_busy", 32, 32, True), ("h5", "closed_lock", 32, 32, False),
      ("h8", "closed_excl", 32, 32, True)]),
    ("bqueues -l: JL/U read with the PJOBS column; '-' is none",
     lambda: parse_jl_u(BQUEUES_L), {"gpu_night": 16}),
    ("bqueues -l: JL/H", lambda: parse_jl_u(BQUEUES_L, "JL/H"), {"gpu_night": 4}),
    ("bqueues -l: TASKLIMIT of three numbers (min, default, max)",
     lambda: parse_task_limits(BQUEUES_L), {"gpu_night": (2, 64)}),
    ("bsub of the largest id",
     lambda: lsf.parse_submit("Job <2147483647> is submitted to default queue <normal>.\n"),
     "2147483647"),
    # -- Flux -------------------------------------------------------------------------------
    ("flux jobs --json: an alloc exception before the job ran, the largest id",
     lambda: [(j.native_id, j.state.value, j.reason, j.started_at, j.ended_at, j.name)
              for j in flux.parse_status(FLUX_JOBS)][0],
     ("9223372036854775807", "FAILED", "alloc: unsatisfiable request", None,
      at(2026, 12, 1, 9, 0, 1), "a: b c")),
    ("flux jobs --json: a wait status of SIGKILL is 137, said as the signal (sweep 31)",
     lambda: ended(flux.parse_status(FLUX_JOBS))[1], ("2", "FAILED", 137, "killed by signal 9")),
    ("flux jobs --json: DEPEND names what it waits for",
     lambda: [(j.state.value, j.reason) for j in flux.parse_status(FLUX_JOBS)][2],
     ("PENDING", "dependency: after-ok:ƒ2Jc8CuU1")),
    ("flux jobs --json: numeric state RUN with no duration has no limit",
     lambda: [(j.state.value, j.walltime_s, j.nodes) for j in flux.parse_status(FLUX_JOBS)][3],
     ("RUNNING", None, 1)),
    ("flux jobs --json: numeric INACTIVE with result bit CANCELED",
     lambda: [(j.state.value, j.native_state, j.ended_at)
              for j in flux.parse_status(FLUX_JOBS)][4],
     ("CANCELLED", "INACTIVE:CANCELED", at(2026, 12, 1, 9, 5))),
    ("flux jobs --json: fluxion's reason and estimate",
     lambda: [(j.state.value, j.reason, j.estimated_start)
              for j in flux.parse_status(FLUX_JOBS)][5],
     ("PENDING", "insufficient resources", at(2026, 12, 1, 12))),
    ("flux jobs --json: CLEANUP after a timeout exception, no result yet: ending, said",
     lambda: [(j.state.value, j.reason, j.ended_at) for j in flux.parse_status(FLUX_JOBS)][6],
     ("RUNNING", "ending (cleanup): timeout: resource allocation expired", None)),
    ("flux jobs --json: one bare job object",
     lambda: [(j.native_id, j.state.value) for j in flux.parse_status(
         '{"id": 12, "state": "RUN", "t_run": 1764579600}')], [("12", "RUNNING")]),
    ("flux jobs --json: an empty queue", lambda: flux.parse_status('{"jobs": []}'), []),
    # changed: once refused whole naming line 1; the JSON is now read where it starts
    ("flux jobs --json after a warning is said by its line, the (no) jobs read",
     lambda: (lambda said: (flux.parse_status('flux-jobs: WARNING: x\n{"jobs": []}', said),
                            said))([]),
     ([], ["flux: cannot parse flux jobs --json line 1: a message before the JSON, not read "
           "(got 'flux-jobs: WARNING: x')"])),
    ("flux queue list of an ASCII locale (y/n) with a PRIO column",
     lambda: [(p.name, p.default, p.max_time_s, p.max_nodes, p.state) for p in flux.parse_queues(
         "    QUEUE EN ST PRIO TDEFAULT   TLIMIT     NNODES     NCORES      NGPUS\n"
         "   batch*  y  y    0       1h      12h       1-64      0-inf      0-inf\n"
         "    debug  n  y    0       5m      30m        0-2      0-inf      0-inf\n")],
     [("batch", True, 43200, 64, "UP"), ("debug", False, 1800, 2, "DOWN")]),
    ("flux resource list: a free range and an allocated node of one size",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated) for n in flux.parse_resources(
         "free||3|96|0|node[1-3]\nallocated||1|32|0|node4\ndown||0|0|0|\n")],
     [("node1", "free", 32, 0), ("node2", "free", 32, 0), ("node3", "free", 32, 0),
      ("node4", "allocated", 32, 32)]),
    # -- Grid Engine ----------------------------------------------------------------------
    ("qstat -xml: Rr restarted runs, t transferring runs, s suspended",
     lambda: [(j.native_id, j.state.value, j.reason, j.node_list)
              for j in sge.parse_status(QSTAT_XML)][:3],
     [("1", "RUNNING", None, "n1"), ("2", "RUNNING", None, "n2"),
      ("3", "RUNNING", "suspended (s)", "n2")]),
    ("qstat -xml: an array's task being deleted and its waiting tasks apart",
     lambda: [(j.native_id, j.state.value, j.reason)
              for j in sge.parse_status(QSTAT_XML) if j.native_id.startswith("4.")],
     [("4.3", "RUNNING", "being deleted"), ("4.4-10:2", "PENDING", None)]),
    ("qstat -xml: Rq rescheduled waits, hRwq held, Eqw tasks in error",
     lambda: [(j.native_id, j.state.value, j.reason)
              for j in sge.parse_status(QSTAT_XML) if j.native_id[0] in "567"],
     [("5", "PENDING", None), ("6", "PENDING", "held (hRwq)"),
      ("7.1,3", "PENDING", "error state (Eqw): `qstat -j` says why; it runs only after "
       "`qmod -cj`")]),
    ("qstat -xml of an empty queue",
     lambda: sge.parse_status('<?xml version="1.0"?><job_info><queue_info/><job_info/>'
                              "</job_info>"), []),
    ("qhost -xml: the global host left out, a host without load is down, arm64",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.memory_mb, n.architecture)
              for n in sge.parse_snapshot("ge", {"hosts": QHOST, "queue": ""}).nodes],
     [("n1", "mixed", 32, 4, 257638, "x86_64"), ("n2", "down", 64, 0, 0, "aarch64")]),
    ("qhost -xml cut short names the line",
     lambda: error_of(lambda: sge.parse_snapshot(
         "ge", {"hosts": QHOST[:QHOST.index("251.6G")], "queue": ""})),
     "sge: cannot parse qhost -xml: no element found: line 6, column 73"),
    ("qacct -j: failed 26 before the job started: failed, no start or end",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.reason, j.started_at, j.ended_at)
              for j in sge.parse_accounting(QACCT_NEVER_RAN)],
     [("12", "FAILED", None, "Grid Engine failed the job (26: opening input/output file)",
       None, None)]),
]


# -- arrays in every state, folded as the engine follows them --------------------------------

ARRAY_SACCT = "\n".join([
    "70_1|COMPLETED|0:0|2026-12-01T09:00:00|2026-12-01T09:10:00|c1|arr|70_1",
    "70_2|FAILED|3:0|2026-12-01T09:00:00|2026-12-01T09:11:00|c1|arr|70_2",
    "70_3|CANCELLED by 1000|0:15|2026-12-01T09:00:00|2026-12-01T09:12:00|c1|arr|70_3",
    "70_4|TIMEOUT|0:0|2026-12-01T09:00:00|2026-12-01T10:00:00|c1|arr|70_4",
    "70_[5-9]|PENDING|0:0|Unknown|Unknown|None assigned|arr|70_[5-9]",
]) + "\n"

ARRAY_BJOBS = json.dumps({"RECORDS": [
    {"JOBID": "80", "STAT": "DONE", "JOB_NAME": "a[1]", "START_TIME": "Dec  6 08:00",
     "FINISH_TIME": "Dec  6 08:10"},
    {"JOBID": "80", "STAT": "EXIT", "JOB_NAME": "a[2]", "EXIT_CODE": "2",
     "START_TIME": "Dec  6 08:00", "FINISH_TIME": "Dec  6 08:20"},
    {"JOBID": "80", "STAT": "RUN", "JOB_NAME": "a[3]", "START_TIME": "Dec  6 08:30"},
    {"JOBID": "80", "STAT": "PEND", "JOB_NAME": "a[4]",
     "PEND_REASON": "The job array has reached its job slot limit;"},
    {"JOBID": "80", "STAT": "PSUSP", "JOB_NAME": "a[5]"},
]})

ARRAY_QSTAT_XML = (
    '<?xml version="1.0"?><job_info><queue_info>'
    + _jl(90, "r", _RUN.format("n1") + "<tasks>1</tasks>") + "</queue_info><job_info>"
    + _jl(90, "qw", _WAIT + "<tasks>2-10:1</tasks>", "pending")
    + _jl(90, "hqw", _WAIT + "<tasks>11</tasks>", "pending") + "</job_info></job_info>")

# Torque 6 `pbsnodes -a`: a node held whole and loaded, one down and offline with a note,
# one with a slot taken; availmem in kb (the Slurm wrapper's is in mb)
TORQUE_NODES = """n01
     state = job-exclusive,busy
     power_state = Running
     np = 16
     properties = ib,haswell
     ntype = cluster
     jobs = 0-7/123.torque01,8-15/124.torque01
     status = opsys=linux,uname=Linux n01 3.10.0 #1 SMP x86_64,sessions=1 2,nsessions=2,\
totmem=131072000kb,availmem=120000000kb,physmem=131072000kb,ncpus=16,loadave=17.00,state=free
     mom_service_port = 15002
     gpus = 2

n02
     state = down,offline
     np = 16
     ntype = cluster
     note = bad DIMM, ticket 123

n03
     state = free
     np = 16
     ntype = cluster
     jobs = 0/125.torque01
     status = physmem=65536000kb,availmem=60000000kb
"""

PBSNODES = json.dumps({"pbs_version": "2024.1.0", "nodes": {
    "v1": {"state": "resv-exclusive", "resources_available": {"host": "v1", "ncpus": 8}},
    "v2": {"state": "sleep", "resources_available": {"host": "v2", "ncpus": 8}},
    "v3": {"state": "state-unknown,down", "resources_available": {"host": "v3", "ncpus": 8}},
    "v4": {"state": "free", "pcpus": 8, "resources_available": {"host": "v4", "mem": "0kb"},
           "resources_assigned": {}},
}})

OUTPUTS += [
    ("sacct: an array's tasks in every state, waiting ones left: the array waits",
     lambda: [(j.native_id, j.state.value, j.reason, j.started_at, j.ended_at)
              for j in fold_array_tasks(slurm.parse_accounting(ARRAY_SACCT),
                                        slurm_array_of, slurm_array_tasks)],
     [("70", "PENDING", "array tasks: 5 waiting, 1 completed, 3 not completed",
       at(2026, 12, 1, 9), None)]),
    ("sacct: an array's tasks all ended: the worst outcome, the last end",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.ended_at, j.reason)
              for j in fold_array_tasks(slurm.parse_accounting(ARRAY_SACCT)[:4],
                                        slurm_array_of, slurm_array_tasks)],
     [("70", "CANCELLED", 143, at(2026, 12, 1, 10), "array tasks: 1 completed, 3 not "
       "completed; task 70_3: cancelled by uid 1000")]),
    ("bjobs: an array's elements done, failed, running, throttled and held: it runs",
     lambda: [(j.native_id, j.state.value, j.reason, j.started_at)
              for j in fold_array_tasks(lsf.parse_status(ARRAY_BJOBS), lsf_array_of,
                                        lsf_array_tasks)],
     [("80", "RUNNING", "array tasks: 1 running, 2 waiting, 1 completed, 1 not completed",
       at(2026, 12, 6, 8))]),
    ("qstat -xml: an array's running task, waiting range and held task: it runs",
     lambda: [(j.native_id, j.state.value, j.reason)
              for j in fold_array_tasks(sge.parse_status(ARRAY_QSTAT_XML), sge_array_of,
                                        sge_array_tasks)],
     [("90", "RUNNING", "array tasks: 1 running, 10 waiting")]),
    # -- node lists ----------------------------------------------------------------------
    ("Torque pbsnodes -a: job-exclusive,busy holds all, down,offline, a slot taken",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.memory_mb, n.gpus, n.features,
               node_usable(n)) for n in parse_wrapper_nodes(TORQUE_NODES)],
     [("n01", "job-exclusive,busy", 16, 16, 128000, 2, ["ib", "haswell"], True),
      ("n02", "down,offline", 16, 0, 0, 0, [], False),
      ("n03", "free", 16, 1, 64000, 0, [], True)]),
    ("pbsnodes -F json: resv-exclusive, sleep, state-unknown,down; pcpus when no ncpus",
     lambda: [(n.name, n.cpus, node_usable(n)) for n in pbs.parse_nodes(PBSNODES)],
     [("v1", 8, False), ("v2", 8, True), ("v3", 8, False), ("v4", 8, True)]),
    ("scontrol partition: Nodes=ALL, bare minutes, days-hours, DRAIN and DOWN",
     lambda: [(p.name, p.nodes, p.state, p.max_time_s, p.default_time_s, p.default,
               p.allowed_accounts) for p in slurm.parse_partitions(
         "PartitionName=all AllowAccounts=ALL Default=YES DefaultTime=NONE MaxTime=UNLIMITED "
         "Nodes=ALL State=UP TotalCPUs=256 TotalNodes=4\n"
         "PartitionName=maint Nodes=c[1-2] State=DRAIN MaxTime=30 DefaultTime=00:10:00 "
         "AllowAccounts=ops,admin\n"
         "PartitionName=off Nodes=c[3-4] State=DOWN MaxTime=1-12\n")],
     [("all", [], "UP", None, None, True, None),
      ("maint", ["c1", "c2"], "DRAIN", 1800, 600, False, ["ops", "admin"]),
      ("off", ["c3", "c4"], "DOWN", 129600, None, False, None)]),
]


@pytest.mark.parametrize("label,read,expected", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(label, read, expected):
    assert read() == expected


# -- focused: the faults this sweep found ---------------------------------------------------

@pytest.mark.parametrize("exit_status,read", [
    (-11, ("TIMEOUT", -11, "killed by PBS: walltime exceeded")),  # JOB_EXEC_OVERLIMIT_WT
    (-10, ("FAILED", -10, "out of memory: the job used more than the memory it was given "
                          "(killed by PBS over its memory limit, Exit_status -10)")),
    (-12, ("FAILED", -12, "killed by PBS: resource limit (-12)")),  # OVERLIMIT_CPUT
    (-3, ("FAILED", -3, "job never ran (Exit_status -3)")),  # JOB_EXEC_RETRY, as before
])
def test_a_torque_job_killed_over_a_limit_says_so(exit_status, read):
    """Torque's mom ends a job over its walltime with exit_status -11 (memory -10, CPU time
    -12: Torque's own codes; PBS Pro's are -24 to -29). Before: read as PBS Pro's, a job
    that ran its hour and was killed read FAILED "job never ran (Exit_status -11)"."""
    xml = (f"<Data><Job><Job_Id>103.torque01</Job_Id><job_state>C</job_state>"
           f"<exit_status>{exit_status}</exit_status><Resource_List><walltime>00:10:00"
           f"</walltime></Resource_List><start_time>{epoch(2026, 12, 1, 9)}</start_time>"
           f"<comp_time>{epoch(2026, 12, 1, 9, 10, 2)}</comp_time></Job></Data>")
    assert ended(torque.parse_status(xml)) == [("103.torque01", *read)]
    # a PBS Pro listing keeps PBS Pro's meaning of the same numbers
    pro = json.dumps({"Jobs": {"9.s": {"job_state": "F", "Exit_status": -11,
                                       "substate": 92}}}, indent=4)
    assert ended(pbs.parse_status(pro)) == [(  # JOB_EXEC_RERUN (sweep 33: it had run)
        "9.s", "FAILED", -11, "ended by PBS after it started: rerun by PBS (Exit_status -11)")]


def test_a_pbs_array_with_no_subjob_left_to_start_counts_its_running_ones():
    """PBS Pro prints `array_indices_remaining` as '-' once every subjob has started. Before:
    '-' was taken for no value at all, so such an array read as no array (neither its 0
    subjobs waiting nor its 3 running were known: its share of the queue was lost)."""
    listing = json.dumps({"Jobs": {"200[].s": {
        "job_state": "B", "array": "True", "array_indices_submitted": "0-9",
        "array_indices_remaining": "-", "max_run_subjobs": 4,
        "array_state_count": "Queued:0 Running:3 Exiting:0 Expired:7 "}}}, indent=4)
    assert [(j.native_id, j.state.value, j.array_waiting, j.array_running, j.array_limit)
            for j in pbs.parse_status(listing)] == [("200[].s", "RUNNING", 0, 3, 4)]


def test_a_requeued_lsf_job_waiting_again_has_not_started():
    """bjobs keeps a requeued job's last START_TIME while it waits again (PEND, "Job was
    requeued"). Before: the waiting job read as started at 08:01 (the job card counted it
    as run), unlike sacct's reading of a requeued Slurm job."""
    listing = json.dumps({"RECORDS": [
        {"JOBID": "13", "STAT": "PEND", "PEND_REASON": "Job was requeued;",
         "JOB_NAME": "arr[7]", "SUBMIT_TIME": "Dec  6 08:00", "START_TIME": "Dec  6 08:01",
         "FINISH_TIME": "-"}]})
    assert [(j.native_id, j.state.value, j.submitted_at, j.started_at, j.ended_at, j.reason)
            for j in lsf.parse_status(listing)] == [
        ("13[7]", "PENDING", at(2026, 12, 6, 8), None, None, "Job was requeued;")]


@pytest.mark.parametrize("said", ["No job found", "No unfinished job found",
                                  "No pending job found"])
def test_bjobs_saying_it_found_no_job_is_an_empty_queue(said):
    """bjobs prints "No job found" (no word between) when nothing matches `-a`. Before:
    only "No <word> job found" was known; this one read as a broken answer (invalid
    JSON), so a site with an empty queue could not be read."""
    assert lsf.parse_status(said + "\n") == []


def test_a_requeued_pbs_job_waiting_again_has_not_started():
    """`qrerun` (or a lost node) puts a PBS job back in the queue with its last run's
    `stime` (Torque's `start_time`) and a run_count above 0. Before: the waiting job read
    as started then, as the LSF and sacct readings did before theirs were mended."""
    pro = json.dumps({"Jobs": {"30.s": {
        "job_state": "Q", "run_count": 1, "stime": "Tue Dec  2 09:00:00 2025",
        "qtime": "Tue Dec  2 08:00:00 2025", "comment": "Job requeued"}}}, indent=4)
    assert [(j.state.value, j.submitted_at, j.started_at)
            for j in pbs.parse_status(pro)] == [("PENDING", at(2025, 12, 2, 8), None)]
    xml = (f"<Data><Job><Job_Id>31.t</Job_Id><job_state>Q</job_state><start_count>1"
           f"</start_count><start_time>{epoch(2026, 12, 1, 9)}</start_time></Job></Data>")
    assert [(j.state.value, j.started_at) for j in torque.parse_status(xml)] == [
        ("PENDING", None)]
    # a running job keeps its start
    running = xml.replace("<job_state>Q", "<job_state>R")
    assert [j.started_at for j in torque.parse_status(running)] == [at(2026, 12, 1, 9)]


@pytest.mark.parametrize("reason,state", [
    ("TERM_DEADLINE: job killed after deadline expires", "TIMEOUT"),
    ("TERM_RUNLIMIT: job killed after reaching LSF run time limit", "TIMEOUT"),
    ("TERM_CPULIMIT: job killed after reaching LSF CPU usage limit", "FAILED"),
])
def test_an_lsf_job_killed_at_its_termination_time_timed_out(reason, state):
    """`bsub -t` sets the time a job is killed at: LSF ends it with TERM_DEADLINE, as Slurm
    ends a job past its --deadline (DEADLINE, read TIMEOUT). Before: read FAILED, as if the
    job's own code had failed."""
    listing = json.dumps({"RECORDS": [{"JOBID": "40", "STAT": "EXIT", "EXIT_CODE": "140",
                                       "EXIT_REASON": reason}]})
    assert ended(lsf.parse_status(listing)) == [("40", state, 140, reason)]


def _separated_queue(sep: str) -> str:
    """squeue's answer to the engine's own query (a fresh separator after every field): a
    running job whose name spans two lines, then a waiting one."""
    records = [
        ["12", "RUNNING", "2026-12-01T09:00:00", "2026-12-01T10:00:00", "2026-12-01T08:00:00",
         "1:00:00", "1", "4", "alice", "cpu", "N/A", "c1", "None", "(null)", "5:00",
         "first line\nsecond line"],
        ["13", "PENDING", "N/A", "N/A", "2026-12-01T08:00:00", "UNLIMITED", "1", "4", "bob",
         "cpu", "N/A", "(null)", "Priority", "(null)", "0:00", "wait"]]
    return "".join("".join(f + sep for f in r) + "\n" for r in records)


def test_squeue_messages_merged_around_the_records_are_said_and_the_jobs_read():
    """The site's batch merges each command's stderr into its output (`2>&1`): Slurm's
    warnings (a slurm.conf option deprecated, a plugin's complaint) come before squeue's
    records, or after them. Before: one line before the records made the whole answer read
    as '|'-separated lines, every job lost (the queue read empty); one after them refused
    the whole answer. Now each message is said with its line, the jobs are read."""
    sep = "#dj-0123456789abcdef#"
    queue = _separated_queue(sep)
    before = "squeue: warning: MinJobAge is deprecated\n\nsqueue: error: plugin y\n"
    skipped: list[str] = []
    jobs = slurm.parse_status(before + queue + "squeue: warning: z\n", skipped)
    assert [(j.native_id, j.state.value, j.name) for j in jobs] == [
        ("12", "RUNNING", "first line\nsecond line"), ("13", "PENDING", "wait")]
    assert skipped == [
        "slurm: cannot parse squeue line 1: not a record (got 'squeue: warning: MinJobAge is "
        "deprecated')", "slurm: cannot parse squeue line 3: not a record (got 'squeue: error: "
        "plugin y')", "slurm: cannot parse squeue line 7: not a record (got 'squeue: warning: "
        "z')"]
    # the same in a snapshot: said as the site's warnings, the queue whole
    snap = slurm.parse_snapshot("alpha", {"queue": before + queue})
    assert [j.native_id for j in snap.jobs] == ["12", "13"]
    assert snap.warnings[0] == "alpha: slurm: cannot parse squeue line 1: not a record (got " \
        "'squeue: warning: MinJobAge is deprecated')"
    # without a place to say them, the message is the error, naming its line
    assert error_of(lambda: slurm.parse_status(before + queue)) == \
        "slurm: cannot parse squeue line 1: not a record"
    # an answer cut short is still refused whole: its last record is not all there
    assert error_of(lambda: slurm.parse_status(before + queue[:-30], [])) == \
        "slurm: cannot parse squeue output: not whole records of 16 fields"


# perl's warning when the login's locale (sent over ssh: LANG, LC_*) is not installed there,
# as every perl program prints it on stderr, which the site's batch merges (`2>&1`): Slurm's
# Torque wrappers (qstat, pbsnodes) are perl scripts
PERL_LOCALE = """perl: warning: Setting locale failed.
perl: warning: Please check that your locale settings:
\tLANGUAGE = (unset),
\tLC_ALL = (unset),
\tLC_CTYPE = "UTF-8",
\tLANG = "en_US.UTF-8"
    are supported and installed on your system.
perl: warning: Falling back to the standard locale ("C").
"""


def test_perls_locale_warning_before_pbsnodes_is_no_node():
    """Before: each of its unindented lines read as a node (three nodes named "perl:
    warning: ..." of 0 CPUs in the site's node list) and its indented lines as their
    attributes. Now each such line is said as not a node's name, its indented lines go on
    with it, and the real nodes are read."""
    nodes = "c1\n    state = free\n    np = 4\n    status = slurmstate=idle,availmem=1000mb\n"
    skipped: list[str] = []
    assert [(n.name, n.state, n.cpus) for n in parse_wrapper_nodes(PERL_LOCALE + nodes,
                                                                   skipped)] == [
        ("c1", "idle", 4)]
    assert skipped == [
        "pbs: cannot parse pbsnodes line 1: not a node's name (got 'perl: warning: Setting "
        "locale failed.')", "pbs: cannot parse pbsnodes line 2: not a node's name (got "
        "'perl: warning: Please check that your locale settings:')",
        "pbs: cannot parse pbsnodes line 8: not a node's name (got 'perl: warning: Falling "
        "back to the standard locale (\"C\").')"]
    # the wrapper site's snapshot: said as its warnings, no node invented
    wrapper = PbsCommands(flavor="slurm", tz=UTC)
    snap = wrapper.parse_snapshot("w", {"nodes": PERL_LOCALE + nodes, "queues": "",
                                        "queue": ""})
    assert [n.name for n in snap.nodes] == ["c1"] and len(snap.warnings) == 3


def test_perls_locale_warning_before_qstat_f_leaves_the_jobs_read():
    """Before: the warning's indented lines read as attributes before any `Job Id:`, and
    the whole listing was refused (every job of the wrapper site unknown). Now the warning
    is passed over as the other messages before the jobs are."""
    wrapper = PbsCommands(flavor="slurm", tz=UTC)
    listing = "Job Id: 900005\n    Job_Name = x\n    job_state = R\n    queue = debug\n"
    assert [(j.native_id, j.state.value, j.partition) for j in wrapper.parse_status(
        PERL_LOCALE + listing)] == [("900005", "RUNNING", "debug")]
    # Torque's text of `qstat -Q -f` after it reads the same way
    queues = "Queue: batch\n    queue_type = Execution\n    enabled = True\n" \
        "    started = True\n"
    assert [(p.name, p.state) for p in torque.parse_queues(PERL_LOCALE + queues)] == [
        ("batch", "UP")]
    # an attribute before any block with no message before it is still refused
    assert error_of(lambda: wrapper.parse_status("    job_state = R\n" + listing)) == \
        "pbs: cannot parse qstat -f line 1: an attribute before any 'Job Id:'"
