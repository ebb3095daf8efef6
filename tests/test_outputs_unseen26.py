"""Sweep 26 of scheduler outputs, and the readers of finished jobs: how each scheduler tells
an ended job's outcome once its queue has forgotten it. Written in the forms each scheduler
documents (none captured): Slurm's array ranges with a throttle (`123_[1-3%2]`), het job
components (`123+1`), `(null)`, `N/A`, `Unknown` and `None assigned` fields, a `-M`
cluster heading, slurmrestd's v0.0.38 to v0.0.40 exit codes (a wait status, then an object
whose numbers are wrapped); PBS Pro's `qstat -f -F json -x` of every way a job ends
(Exit_status -1, -3, 271 and the limit kills, qdel's substate 91, a finished array) and
Torque's XML; LSF's `bjobs -json` of each end reason and its new reader, `bhist -l`; Grid
Engine's `qstat -xml` of array task ranges and `-hold_jid`; Flux's `flux jobs --json`.

What this sweep found: an LSF job that ended while the engine was away longer than
CLEAN_PERIOD (an hour by default) dropped out of `bjobs -a`, and with no history asked it was
marked failed as lost ("left the queue and accounting has no record of it") whatever its
end; LSF now reads `bhist -l` for jobs bjobs no longer lists. PBS Pro's status is already its
history (`qstat -x`, where the server keeps one: job_history_enable), Torque keeps a finished
job as C for keep_completed seconds, Slurm asks sacct. And a PBS job waiting for its
`qsub -a` time (state W) read as waiting with no reason and no start estimate, though its
Execution_Time says when it can start at the earliest.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from outputs_helpers import at, ended, flux, lsf, pbs, sge, slurm, torque, wrapped

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects import slurm_rest as rest
from diamond_jupyter.dialects.lsf_commands import BHIST_LOG_FILES, array_of
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import BadInput, Job, JobState, JobStatus, utcnow
from diamond_jupyter.sites import Site
from diamond_jupyter.store import Store
from diamond_jupyter.transports.base import CommandResult


def epoch(*parts: int) -> int:
    return int(at(*parts).timestamp())


def times(jobs: list[JobStatus]) -> list[tuple]:
    """(id, state, start, end) of each record."""
    return [(j.native_id, j.state.value, j.started_at, j.ended_at) for j in jobs]


# -- Slurm text -------------------------------------------------------------------------------

# `squeue -h -t all -o SQUEUE_FIELDS` as squeue prints it with `-M` (SLURM_CLUSTERS set on
# the login node): a CLUSTER heading before the records; a throttled array, a het component,
# a job whose name holds '|'
SQUEUE = "\n".join([
    "CLUSTER: perlmutter",
    "123_[1-3%2]|PENDING|N/A|N/A|2026-12-06T08:00:00|1:00:00|1|4|ana|gpu|N/A||"
    "JobArrayTaskLimit|(null)|0:00|arr",
    "456+1|RUNNING|2026-12-06T08:00:00|2026-12-06T09:00:00|2026-12-06T07:00:00|UNLIMITED|2|64|"
    "ana|cpu|N/A|c[1-2]|None|(null)|15:02|het|x",
])

# `sacct -X -P -n --format=SACCT_FIELDS`: a waiting throttled array (no node, Unknown end), a
# het component cancelled by a user, NODE_FAIL, OUT_OF_MEMORY, TIMEOUT and a FAILED job whose
# end was not recorded
SACCT = "\n".join([
    "123_[1-3%2]|PENDING|0:0|None|Unknown|None assigned|arr|123_[1-3%2]",
    "124+1|CANCELLED by 1000|0:15|2026-12-06T08:00:00|2026-12-06T08:10:00|c1|het|124+1",
    "125|NODE_FAIL|1:0|2026-12-06T08:00:00|2026-12-06T08:10:00|c[1-2]|nf|125",
    "126|OUT_OF_MEMORY|0:125|2026-12-06T08:00:00|2026-12-06T08:10:00|c1|oom|126",
    "127|TIMEOUT|0:0|2026-12-06T08:00:00|2026-12-06T08:10:00|c1|to|127",
    "128|FAILED|2:0|2026-12-06T08:00:00|Unknown|c1|f|128",
])

# -- slurmrestd and squeue --json, v0.0.38 to v0.0.40 -----------------------------------------

V38 = json.dumps({"meta": {"plugin": {"data_parser": ""}}, "errors": [], "jobs": [
    {"job_id": 300, "job_state": "COMPLETED", "exit_code": 0, "array_job_id": 0,
     "array_task_id": None, "het_job_id": 0, "time_limit": 4294967295,
     "start_time": epoch(2026, 12, 6, 6), "end_time": epoch(2026, 12, 6, 8)},
    {"job_id": 301, "job_state": "FAILED", "exit_code": 256},
    {"job_id": 302, "job_state": "FAILED",
     "exit_code": {"status": "SIGNALED", "return_code": 0,
                   "signal": {"signal_id": 15, "name": "TERM"}}},
]})

V40 = json.dumps({"meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}}, "errors": [],
                  "warnings": [], "jobs": [
    {"job_id": 200, "job_state": ["FAILED"], "time_limit": wrapped(60),
     "exit_code": {"status": ["SIGNALED"], "return_code": wrapped(0),
                   "signal": {"id": wrapped(9), "name": "KILL"}},
     "start_time": wrapped(epoch(2026, 12, 6, 7)), "end_time": wrapped(epoch(2026, 12, 6, 8))},
    {"job_id": 203, "job_state": ["PENDING"], "het_job_id": wrapped(203),
     "het_job_offset": wrapped(0)},
    {"job_id": 204, "job_state": ["PENDING"], "het_job_id": wrapped(203),
     "het_job_offset": wrapped(1)},
    {"job_id": 205, "job_state": ["PENDING"], "array_job_id": wrapped(205),
     "array_task_id": wrapped(0, set_=False), "array_task_string": "1-3%2"},
    {"job_id": 206, "job_state": ["RUNNING"], "array_job_id": wrapped(205),
     "array_task_id": wrapped(4)},
    {"job_id": 207, "job_state": "PENDING", "array_job_id": 0, "array_task_id": None,
     "het_job_id": 0, "het_job_offset": None, "array_task_string": ""},
    {"job_id": 208, "job_state": ["COMPLETED"], "exit_code": {"status": "SUCCESS",
                                                              "return_code": 0}},
]})

# -- PBS Pro and Torque -----------------------------------------------------------------------


def pbs_job(jid: str, **attrs) -> tuple[str, dict]:
    job = {"Job_Name": "n", "Job_Owner": "ana@login", "queue": "workq",
           "Resource_List": {"walltime": "01:00:00", "ncpus": 1, "nodect": 1,
                             "select": "1:ncpus=1"}}
    return jid, {**job, **attrs}


# `qstat -f -F json -x` of PBS Pro 2022.1: finished jobs (F) of each ending, a finished and a
# running array, a job held after failed attempts, one waiting for its `qsub -a` time
PBS_JOBS = json.dumps({"timestamp": 1, "pbs_version": "2022.1.3", "pbs_server": "s",
                       "Jobs": dict([
    pbs_job("10.s", job_state="F", substate=92, Exit_status=271,
            resources_used={"walltime": "00:10:00"}),
    pbs_job("11.s", job_state="F", substate=92, Exit_status=271,
            resources_used={"walltime": "01:00:05"}),
    pbs_job("12.s", job_state="F", substate=91, Exit_status=271),
    pbs_job("13.s", job_state="F", substate=93, Exit_status=-1),
    pbs_job("14[].s", job_state="F", substate=92, Exit_status=1, array=True,
            array_indices_submitted="1-3"),
    pbs_job("15[].s", job_state="B", array=True, array_indices_submitted="1-10:2%3",
            array_indices_remaining="5-9:2",
            array_state_count="Queued:2 Running:1 Exiting:0 Expired:2", max_run_subjobs=3),
    pbs_job("16.s", job_state="H", Hold_Types="s",
            comment="job held, too many failed attempts to run"),
    pbs_job("17.s", job_state="W", Execution_Time="Sun Dec  6 12:00:00 2026"),
    pbs_job("18.s", job_state="F", substate=92, Exit_status=0,
            stime="Sun Dec  6 08:00:00 2026", obittime="Sun Dec  6 08:30:00 2026"),
    pbs_job("20.s", job_state="F", substate=92, Exit_status=-29,
            resources_used={"walltime": "01:00:05"}),
    pbs_job("22.s", job_state="F", substate=92, Exit_status=137),
    pbs_job("24.s", job_state="F", substate=91),
    pbs_job("25.s", job_state="F", substate=92, Exit_status=-3),
])})

TORQUE_XML = ('<?xml version="1.0"?>\n<Data>'
              "<Job><Job_Id>7001.t</Job_Id><job_state>C</job_state><exit_status>271"
              "</exit_status><Resource_List><walltime>01:00:00</walltime></Resource_List>"
              "<resources_used><walltime>01:00:02</walltime></resources_used></Job>"
              "<Job><Job_Id>7002.t</Job_Id><job_state>C</job_state><exit_status>-11"
              "</exit_status></Job>"
              "<Job><Job_Id>7003.t</Job_Id><job_state>W</job_state><Execution_Time>"
              f"{epoch(2026, 12, 6, 12)}</Execution_Time></Job>"
              "</Data>")

# -- LSF --------------------------------------------------------------------------------------

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 10, "RECORDS": [
    {"JOBID": "5001", "STAT": "PEND", "PEND_REASON": "Job dependency condition not satisfied;",
     "DEPENDENCY": "done(5000)", "SUBMIT_TIME": "Dec  6 08:00:10 2026"},
    {"JOBID": "5002", "STAT": "PSUSP",
     "PEND_REASON": "The job was suspended by the user while pending;"},
    {"JOBID": "5003", "STAT": "EXIT", "EXIT_CODE": "",
     "EXIT_REASON": "TERM_OWNER: job killed by owner", "START_TIME": "-",
     "FINISH_TIME": "Dec  6 08:02"},
    {"JOBID": "5004", "STAT": "EXIT", "EXIT_CODE": "143",
     "EXIT_REASON": "TERM_RUNLIMIT: job killed after reaching LSF run time limit",
     "START_TIME": "Dec  6 07:00", "FINISH_TIME": "Dec  6 08:00"},
    {"JOBID": "5005", "STAT": "UNKWN"},
    {"JOBID": "5007", "STAT": "DONE", "EXIT_CODE": "", "JOB_NAME": "arr[12]"},
    {"JOBID": "5008", "STAT": "EXIT", "EXIT_CODE": "1",
     "EXIT_REASON": "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit"},
    {"JOBID": "5009", "STAT": "RUN", "EXEC_HOST": "4*hostA:2*hostB", "SLOTS": "6",
     "RUNTIMELIMIT": "-"},
    {"JOBID": "5010", "ERROR": "Job <5010> is not found"},
    {"JOBID": "5011", "STAT": "PEND",
     "PEND_REASON": "New job is waiting for scheduling;\nNot enough job slot(s): 3 hosts;",
     "ESSTART_TIME": "Dec  7 01:00 E"},
]})

# `bhist -l` (LSF 10.1) of jobs bjobs no longer lists: each block's lines wrapped at 80
# columns (inside words and numbers), blocks split by dashes
BHIST = """Job <4101>, User <ana>, Project <default>, Command <echo hello>, Esub <esub
                     >
Sun Dec  6 07:47:38: Submitted from host <login-01>, to Queue <research-rh
                     74>, CWD <$HOME>, Requested Resources <rusage[numcpus=1:du
                     ration=480]>;
Sun Dec  6 07:47:39: Dispatched to <hx-05-14>, Effective RES_REQ <select[t
                     ype == local] order[r15s:pg] >;
Sun Dec  6 07:47:39: Starting (Pid 110245);
Sun Dec  6 07:47:39: Running with execution home </homes/ana>, Execution CWD
                     </homes/ana>, Execution Pid <110245>;
Sun Dec  6 07:57:39: Done successfully. The CPU time used is 0.0 seconds;
Sun Dec  6 07:57:40: Post job process done successfully;


 CORELIMIT
      0 M

Summary of time in seconds spent in various states by  Sun Dec  6 07:57:40
  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL
  1        0        600      0        0        0        601
------------------------------------------------------------------------------

Job <4102>, Job Name <wc>, User <ana>, Project <default>, Command <./run.sh>
Sat Dec  5 14:46:40: Submitted from host <login>, to Queue <normal>, CWD <$HOME>;
Sat Dec  5 14:46:43: Dispatched 12 Task(s) on Host(s) <12*n19>, Allocate
                     d 12 Slot(s) on Host(s) <12*n19>, Effective RES_REQ
                      <select[type == local] >;
Sat Dec  5 14:46:43: Starting (Pid 258999);
Sat Dec  5 16:34:13: Exited with exit code 1. The CPU time used is 31911.0 seco
                     nds;
Sat Dec  5 16:34:13: Completed <exit>; TERM_MEMLIMIT: job killed after reaching
                      LSF memory usage limit;
------------------------------------------------------------------------------

Job <4103>, Job Name <sleepy>, User <ana>, Project <default>, Command <sleep 9
                     999>
Sun Dec  6 06:00:00: Submitted from host <login>, to Queue <short>, CWD <$HOME>;
Sun Dec  6 06:00:02: Dispatched to <n3>;
Sun Dec  6 06:00:02: Starting (Pid 4242);
Sun Dec  6 06:30:02: Signal <KILL> requested by user or administrator <ana>;
Sun Dec  6 06:30:03: Exited with exit code 13
                     7. The CPU time used is 0.1 seconds;
Sun Dec  6 06:30:03: Completed <exit>; TERM_OWNER: job killed by owner.
------------------------------------------------------------------------------

Job <4104>, Job Name <long>, User <ana>, Project <default>, Command <./sim>
Sun Dec  6 05:00:00: Submitted from host <login>, to Queue <short>, CWD <$HOME>;
Sun Dec  6 05:00:01: Dispatched to <n4>;
Sun Dec  6 05:00:01: Starting (Pid 777);
Sun Dec  6 07:00:01: Exited by signal 2. The CPU time used is 7200.0 seconds;
Sun Dec  6 07:00:01: Completed <exit>; TERM_RUNLIMIT: job killed after reaching LSF run
                      time limit.
------------------------------------------------------------------------------

Job <4105>, Job Name <never>, User <ana>, Project <default>, Command <./x>
Sun Dec  6 04:00:00: Submitted from host <login>, to Queue <short>, CWD <$HOME>;
Sun Dec  6 04:10:00: Completed <exit>; TERM_OWNER: job killed by owner.
------------------------------------------------------------------------------

Job <4106[3]>, Job Name <arr[3]>, User <ana>, Project <default>, Command <./t>
Sun Dec  6 03:00:00: Submitted from host <login>, to Queue <short>, CWD <$HOME>;
Sun Dec  6 03:00:05: Dispatched to <n5>;
Sun Dec  6 03:00:05: Starting (Pid 1);
Sun Dec  6 03:05:00: Exited with exit code 99. The CPU time used is 1.0 seconds;
Sun Dec  6 03:05:01: Pending: Job has been requeued;
Sun Dec  6 03:06:00: Dispatched to <n6>;
Sun Dec  6 03:06:00: Starting (Pid 2);
Sun Dec  6 03:20:00: Done successfully. The CPU time used is 840.0 seconds;
"""

# -- Grid Engine ------------------------------------------------------------------------------


def sge_job(number: int, state: str, tasks: str | None = None, extra: str = "",
            queue: str = "") -> str:
    when = "JAT_start_time" if "r" in state else "JB_submission_time"
    return (f'<job_list state="{"running" if "r" in state else "pending"}">'
            f"<JB_job_number>{number}</JB_job_number><JAT_prio>0.55500</JAT_prio>"
            f"<JB_name>j{number}</JB_name><JB_owner>ana</JB_owner><state>{state}</state>"
            f"<{when}>2026-12-06T08:00:00</{when}><queue_name>{queue}</queue_name>"
            "<slots>1</slots>" + (f"<tasks>{tasks}</tasks>" if tasks else "") + extra
            + "</job_list>")


QSTAT_XML = ("<?xml version='1.0'?>\n<job_info xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/"
             "sge/source/dist/util/resources/schemas/qstat/qstat.xsd\">\n<queue_info>"
             + sge_job(501, "r", "3", queue="all.q@c01") + sge_job(501, "r", "4",
                                                                  queue="all.q@c02")
             + sge_job(506, "dr", queue="all.q@c03")
             + "</queue_info>\n<job_info>"
             + sge_job(501, "qw", "5-10:1")
             + sge_job(502, "hqw", extra="<predecessor_jobs_req>501</predecessor_jobs_req>"
                                         "<predecessor_jobs>501</predecessor_jobs>")
             + sge_job(503, "hqw", "1-100:2",
                       extra="<ad_predecessor_jobs_req>501</ad_predecessor_jobs_req>"
                             "<ad_predecessor_jobs>501</ad_predecessor_jobs>")
             + sge_job(504, "Eqw") + sge_job(505, "hRwq")
             + "</job_info>\n</job_info>\n")

# -- Flux -------------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 2001, "state": "INACTIVE", "result": "TIMEOUT", "returncode": 142,
     "t_run": epoch(2026, 12, 6, 7), "t_inactive": epoch(2026, 12, 6, 8),
     "exception": {"occurred": True, "severity": 0, "type": "timeout",
                   "note": "resource allocation expired"}},
    {"id": 2002, "state": 64, "result": 2, "waitstatus": 256,
     "t_inactive": epoch(2026, 12, 6, 8)},
    {"id": 2003, "state": "SCHED", "urgency": 0},
    {"id": 2004, "state": "RUN", "t_run": epoch(2026, 12, 6, 8), "duration": 0.0,
     "expiration": epoch(2026, 12, 6, 9)},
    {"id": 2005, "state": "INACTIVE", "result": "COMPLETED", "returncode": 0,
     "name": "\x1b[31mred\x07" + "z" * 5000, "t_inactive": epoch(2026, 12, 6, 8)},
]})

OUTPUTS: list[tuple[str, object, object]] = [
    # Slurm text
    ("squeue -M: the CLUSTER heading said, the records under it read",
     lambda: (lambda said: (ended(slurm.parse_status(SQUEUE, said)), len(said)))([]),
     ([("123_[1-3%2]", "PENDING", None, "JobArrayTaskLimit"), ("456+1", "RUNNING", None,
                                                               None)], 1)),
    ("squeue: a throttled array waits unstarted, no estimate from N/A",
     lambda: [(j.started_at, j.estimated_start, j.walltime_s)
              for j in slurm.parse_status(SQUEUE, [])][0], (None, None, 3600)),
    ("squeue: a het component runs with no limit (UNLIMITED), its '|' name whole",
     lambda: [(j.walltime_s, j.name, j.node_list, j.time_used_s, j.reason)
              for j in slurm.parse_status(SQUEUE, [])][1],
     (None, "het|x", "c[1-2]", 902, None)),
    ("sacct: a waiting array range, none assigned, Unknown end: no start, no end",
     lambda: times(slurm.parse_accounting(SACCT))[0],
     ("123_[1-3%2]", "PENDING", None, None)),
    ("sacct: a het component CANCELLED by a uid, killed by SIGTERM",
     lambda: ended(slurm.parse_accounting(SACCT))[1],
     ("124+1", "CANCELLED", 143, "cancelled by uid 1000")),
    ("sacct: NODE_FAIL is a failure saying why, its 1:0 no program's exit code",
     lambda: ended(slurm.parse_accounting(SACCT))[2],
     ("125", "FAILED", None, "the node failed")),
    ("sacct: OUT_OF_MEMORY's 0:125 is no exit code; out of memory said",
     lambda: ended(slurm.parse_accounting(SACCT))[3],
     ("126", "FAILED", None, "out of memory: the job used more than the memory it was given")),
    ("sacct: TIMEOUT with 0:0",
     lambda: ended(slurm.parse_accounting(SACCT))[4], ("127", "TIMEOUT", 0, None)),
    ("sacct: an Unknown end is no end, the start kept",
     lambda: times(slurm.parse_accounting(SACCT))[5],
     ("128", "FAILED", at(2026, 12, 6, 8), None)),
    ("scontrol show config: bf_window absent from SchedulerParameters is a day",
     lambda: slurm.parse_bf_window("SchedulerParameters     = bf_continue,defer\n"), 86400.0),
    # slurmrestd and squeue --json
    ("v0.0.38: exit_code a wait status (256: exit 1); INFINITE limit none",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.walltime_s)
              for j in rest.parse_jobs(V38)][:2],
     [("300", "COMPLETED", 0, None), ("301", "FAILED", 1, None)]),
    ("v0.0.38: a signal's id under signal_id",
     lambda: ended(rest.parse_jobs(V38))[2], ("302", "FAILED", 143, None)),
    ("v0.0.38: times as plain epochs",
     lambda: times(rest.parse_jobs(V38))[0],
     ("300", "COMPLETED", at(2026, 12, 6, 6), at(2026, 12, 6, 8))),
    ("v0.0.40: SIGNALED with a wrapped signal id: killed by SIGKILL, its wrapped limit",
     lambda: [(j.state.value, j.exit_code, j.walltime_s, j.ended_at)
              for j in slurm.parse_status_json(V40)][0],
     ("FAILED", 137, 3600, at(2026, 12, 6, 8))),
    ("v0.0.40: het components under their leader, as squeue's %i",
     lambda: [j.native_id for j in slurm.parse_status_json(V40)][1:3], ["203+0", "203+1"]),
    ("v0.0.40: an array's waiting range with its throttle, a running task",
     lambda: [j.native_id for j in slurm.parse_status_json(V40)][3:5],
     ["205_[1-3%2]", "205_4"]),
    ("v0.0.38 zeros of no array and no het job: the plain job",
     lambda: [j.native_id for j in slurm.parse_status_json(V40)][5], "207"),
    ("v0.0.40: status as a string, return_code plain",
     lambda: ended(slurm.parse_status_json(V40))[6], ("208", "COMPLETED", 0, None)),
    ("GET jobs: an errors array with jobs beside it: the jobs read",
     lambda: [j.native_id for j in rest.parse_jobs(json.dumps({
         "jobs": [{"job_id": 1, "job_state": ["RUNNING"]}], "errors": [],
         "warnings": [{"description": "slow", "source": "x"}]}))], ["1"]),
    # PBS Pro
    ("qstat -x: 271 under the limit is killed by SIGTERM",
     lambda: ended(pbs.parse_status(PBS_JOBS))[0],
     ("10.s", "FAILED", 143, "killed by signal 15")),
    ("qstat -x: 271 past the walltime is a timeout",
     lambda: ended(pbs.parse_status(PBS_JOBS))[1],
     ("11.s", "TIMEOUT", 143, "walltime exceeded (signal 15)")),
    ("qstat -x: substate 91 is deleted by qdel",
     lambda: ended(pbs.parse_status(PBS_JOBS))[2],
     ("12.s", "CANCELLED", 143, "deleted (qdel)")),
    ("qstat -x: Exit_status -1, the job never ran",
     lambda: ended(pbs.parse_status(PBS_JOBS))[3],
     ("13.s", "FAILED", -1, "job never ran (Exit_status -1)")),
    ("qstat -x: a finished array of a failed subjob",
     lambda: ended(pbs.parse_status(PBS_JOBS))[4], ("14[].s", "FAILED", 1, None)),
    ("qstat -x: a running array's subjobs waiting, running and its throttle",
     lambda: [(j.state.value, j.array_waiting, j.array_running, j.array_limit)
              for j in pbs.parse_status(PBS_JOBS)][5], ("RUNNING", 3, 1, 3)),
    ("qstat -x: held by the system after failed attempts, its comment kept",
     lambda: ended(pbs.parse_status(PBS_JOBS))[6],
     ("16.s", "PENDING", None, "held (s): job held, too many failed attempts to run")),
    ("qstat -x: completed with its start and end",
     lambda: times(pbs.parse_status(PBS_JOBS))[8],
     ("18.s", "COMPLETED", at(2026, 12, 6, 8), at(2026, 12, 6, 8, 30))),
    ("qstat -x: -29 is the walltime kill",
     lambda: ended(pbs.parse_status(PBS_JOBS))[9],
     ("20.s", "TIMEOUT", -29, "killed by PBS: walltime exceeded")),
    ("qstat -x: 137 is the script's own exit code (under 256)",
     lambda: ended(pbs.parse_status(PBS_JOBS))[10], ("22.s", "FAILED", 137, None)),
    ("qstat -x: deleted before it ran: no exit status",
     lambda: ended(pbs.parse_status(PBS_JOBS))[11],
     ("24.s", "CANCELLED", None, "deleted (qdel)")),
    ("qstat -x: -3 (retried) without history of a run",
     lambda: ended(pbs.parse_status(PBS_JOBS))[12],
     ("25.s", "FAILED", -3, "job never ran (Exit_status -3)")),
    # Torque
    ("Torque qstat -x: 271 past the walltime is a timeout",
     lambda: ended(torque.parse_status(TORQUE_XML))[0],
     ("7001.t", "TIMEOUT", 143, "walltime exceeded (signal 15)")),
    ("Torque qstat -x: -11 is its walltime kill",
     lambda: ended(torque.parse_status(TORQUE_XML))[1],
     ("7002.t", "TIMEOUT", -11, "killed by PBS: walltime exceeded")),
    # LSF
    ("bjobs -json: waiting on done(5000) is afterok",
     lambda: [(j.state.value, j.dependency, j.submitted_at)
              for j in lsf.parse_status(BJOBS)][0],
     ("PENDING", "afterok:5000(unfulfilled)", at(2026, 12, 6, 8, 0, 10))),
    ("bjobs -json: PSUSP is waiting, suspended by its user",
     lambda: ended(lsf.parse_status(BJOBS))[1],
     ("5002", "PENDING", None, "The job was suspended by the user while pending;")),
    ("bjobs -json: killed by its owner before it ran: cancelled, no start",
     lambda: times(lsf.parse_status(BJOBS))[2],
     ("5003", "CANCELLED", None, at(2026, 12, 6, 8, 2))),
    ("bjobs -json: TERM_RUNLIMIT is a timeout",
     lambda: ended(lsf.parse_status(BJOBS))[3][:3], ("5004", "TIMEOUT", 143)),
    ("bjobs -json: UNKWN is not known",
     lambda: ended(lsf.parse_status(BJOBS))[4], ("5005", "UNKNOWN", None, None)),
    ("bjobs -json: an array element done under its array's JOBID",
     lambda: ended(lsf.parse_status(BJOBS))[5], ("5007[12]", "COMPLETED", 0, None)),
    ("bjobs -json: TERM_MEMLIMIT is a failure",
     lambda: ended(lsf.parse_status(BJOBS))[6][:3], ("5008", "FAILED", 1)),
    ("bjobs -json: two hosts of 4*hostA:2*hostB, no run limit ('-')",
     lambda: [(j.nodes, j.cpus, j.walltime_s) for j in lsf.parse_status(BJOBS)][7],
     (2, 6, None)),
    ("bjobs -json: a job not found is no record; an estimate flagged E kept",
     lambda: [(j.native_id, j.estimated_start) for j in lsf.parse_status(BJOBS)][8:],
     [("5011", at(2026, 12, 7, 1))]),
    ("bhist -l: done, its queue name joined over a wrap",
     lambda: [(j.state.value, j.exit_code, j.partition, j.user, j.submitted_at, j.started_at,
               j.ended_at) for j in lsf.parse_accounting(BHIST)][0],
     ("COMPLETED", 0, "research-rh74", "ana", at(2026, 12, 6, 7, 47, 38),
      at(2026, 12, 6, 7, 47, 39), at(2026, 12, 6, 7, 57, 39))),
    ("bhist -l: exit code 1 and TERM_MEMLIMIT, its reason joined over a wrap",
     lambda: ended(lsf.parse_accounting(BHIST))[1],
     ("4102", "FAILED", 1, "out of memory: the job used more than the memory it was given "
                           "(TERM_MEMLIMIT: job killed after reaching LSF memory usage "
                           "limit)")),
    ("bhist -l: killed by its owner: cancelled, an exit code wrapped inside its digits",
     lambda: ended(lsf.parse_accounting(BHIST))[2],
     ("4103", "CANCELLED", 137, "TERM_OWNER: job killed by owner")),
    ("bhist -l: exited by signal 2 at its run limit: a timeout",
     lambda: ended(lsf.parse_accounting(BHIST))[3],
     ("4104", "TIMEOUT", 130, "TERM_RUNLIMIT: job killed after reaching LSF run time "
                              "limit")),
    ("bhist -l: killed while waiting: cancelled, never started",
     lambda: times(lsf.parse_accounting(BHIST))[4],
     ("4105", "CANCELLED", None, at(2026, 12, 6, 4, 10))),
    ("bhist -l: an element requeued after exit 99 then done: its last run counts",
     lambda: [(j.native_id, j.state.value, j.exit_code, j.name, j.started_at, j.ended_at)
              for j in lsf.parse_accounting(BHIST)][5],
     ("4106[3]", "COMPLETED", 0, "arr[3]", at(2026, 12, 6, 3, 6), at(2026, 12, 6, 3, 20))),
    ("bhist -l: no job found (said on stderr) is no record",
     lambda: lsf.parse_accounting("No matching job found\n"), []),
    # Grid Engine
    ("qstat -xml: an array's running tasks each, its waiting range one record",
     lambda: [j.native_id for j in sge.parse_status(QSTAT_XML)][:4],
     ["501.3", "501.4", "506", "501.5-10:1"]),
    ("qstat -xml: dr is running, being deleted",
     lambda: ended(sge.parse_status(QSTAT_XML))[2], ("506", "RUNNING", None, "being deleted")),
    ("qstat -xml: -hold_jid waits on its job ending whatever its exit",
     lambda: [(j.state.value, j.dependency) for j in sge.parse_status(QSTAT_XML)][4],
     ("PENDING", "afterany:501(unfulfilled)")),
    ("qstat -xml: -hold_jid_ad: each task after the same task",
     lambda: [(j.native_id, j.dependency) for j in sge.parse_status(QSTAT_XML)][5],
     ("503.1-100:2", "aftercorr:501(unfulfilled)")),
    ("qstat -xml: Eqw waits in error; hRwq is held",
     lambda: [(j.state.value, (j.reason or "")[:17]) for j in sge.parse_status(QSTAT_XML)][6:],
     [("PENDING", "error state (Eqw)"), ("PENDING", "held (hRwq)")]),
    # Flux
    ("flux jobs --json: TIMEOUT with its exception note",
     lambda: ended(flux.parse_status(FLUX_JOBS))[0],
     ("2001", "TIMEOUT", 142, "timeout: resource allocation expired")),
    ("flux jobs --json: states as bits (64 INACTIVE, result 2 FAILED), exit from waitstatus",
     lambda: ended(flux.parse_status(FLUX_JOBS))[1], ("2002", "FAILED", 1, None)),
    ("flux jobs --json: urgency 0 is held",
     lambda: ended(flux.parse_status(FLUX_JOBS))[2], ("2003", "PENDING", None,
                                                       "held (urgency 0)")),
    ("flux jobs --json: no duration: the limit is its allocation's expiration",
     lambda: [j.walltime_s for j in flux.parse_status(FLUX_JOBS)][3], 3600),
    ("flux jobs --json: a name of control characters and 5000 letters kept as data",
     lambda: [(len(j.name or ""), (j.name or "")[:4]) for j in
              flux.parse_status(FLUX_JOBS)][4], (5009, "\x1b[31")),
]


@pytest.mark.parametrize(("what", "run", "expected"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(what: str, run, expected) -> None:
    assert run() == expected, what


def test_the_sweep_has_forty_outputs() -> None:
    assert len(OUTPUTS) >= 40


# -- faults this sweep found ------------------------------------------------------------------

def test_lsf_asks_bhist_for_jobs_bjobs_forgot() -> None:
    """Before, LSF had no accounting command: a job bjobs -a no longer listed (it ended more
    than CLEAN_PERIOD ago) was taken as lost. bhist fails its whole answer when one id is
    not found, so its status is dropped; the ids go to the shell as arguments, never as
    its text."""
    argv = lsf.accounting_argv(["4101", "4106[3]"])
    assert argv == ["sh", "-c", f'"$0" -l -n {BHIST_LOG_FILES} "$@" 2>/dev/null; exit 0',
                    "bhist", "4101", "4106[3]"]
    with pytest.raises(BadInput, match="lsf: not a job id: '1; rm -rf ~'"):
        lsf.accounting_argv(["1; rm -rf ~"])


def test_bhist_records_fold_into_their_array() -> None:
    """An element's history is `ID[INDEX]`, for the engine to fold into the array it
    follows, as bjobs' are."""
    [element] = [j for j in lsf.parse_accounting(BHIST) if j.native_id.startswith("4106")]
    assert array_of(element.native_id) == "4106"


def test_bhist_free_text_cannot_forge_an_end() -> None:
    """A command or name holds anyone's text; bhist wraps it on lines indented by 21
    spaces, so text that looks like an event is never read as one."""
    text = ("Job <4200>, Job Name <x>, User <ana>, Project <default>, Command <echo 'Sun D\n"
            "                     ec  6 06:00:00: Done successfully. The CPU time used is 0'"
            ">\n"
            "Sun Dec  6 05:00:00: Submitted from host <login>, to Queue <short>, CWD <$HOME>;\n"
            "Sun Dec  6 05:00:01: Dispatched to <n4>;\n")
    assert times(lsf.parse_accounting(text)) == [("4200", "RUNNING", at(2026, 12, 6, 5, 0, 1),
                                                  None)]


def test_bhist_block_without_a_job_line_is_said() -> None:
    said: list[str] = []
    text = ("Sun Dec  6 05:00:00: Submitted from host <login>, to Queue <short>;\n"
            + "-" * 78 + "\n" + BHIST.split("-" * 78)[0])
    assert [j.native_id for j in lsf.parse_accounting(text, said)] == ["4101"]
    assert [s.split(" (got ")[0] for s in said] == [
        "lsf: cannot parse bhist -l block 1: no 'Job <ID>' line"]


def test_bhist_with_the_year_printed() -> None:
    """LSB_DISPLAY_YEAR=y prints the year after each event's time."""
    text = ("Job <4300>, User <ana>, Project <default>, Command <x>\n"
            "Fri Dec  5 23:00:00 2025: Submitted from host <l>, to Queue <q>, CWD <$HOME>;\n"
            "Fri Dec  5 23:00:01 2025: Dispatched to <n1>;\n"
            "Fri Dec  5 23:10:00 2025: Exited with exit code 3. The CPU time used is 1 s;\n")
    assert times(lsf.parse_accounting(text)) == [
        ("4300", "FAILED", at(2025, 12, 5, 23, 0, 1), at(2025, 12, 5, 23, 10))]


def test_pbs_waiting_for_its_start_time() -> None:
    """Before, a job in W (its `qsub -a` time not reached) read as waiting with no reason
    and no estimate; it starts no sooner than its Execution_Time."""
    job = [j for j in pbs.parse_status(PBS_JOBS) if j.native_id == "17.s"][0]
    assert (job.state.value, job.reason, job.estimated_start) == (
        "PENDING", "waiting for its start time (qsub -a)", at(2026, 12, 6, 12))
    [_, _, waiting] = torque.parse_status(TORQUE_XML)
    assert (waiting.state.value, waiting.estimated_start) == ("PENDING", at(2026, 12, 6, 12))
    # W without an Execution_Time (a stage-in failed) is not read as a wait for a time
    stage_in = json.dumps({"Jobs": dict([pbs_job("30.s", job_state="W")])})
    [job] = pbs.parse_status(stage_in)
    assert (job.state.value, job.reason, job.estimated_start) == ("PENDING", None, None)


# -- the engine: a job bjobs forgot ends as bhist tells -----------------------------------------

class RecordedLsf:
    """Hands each command the recorded output of the LSF program its command line runs
    (bjobs, or bhist inside its `sh -c`); keeps the programs asked, in order."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def run(self, argv: list[str], **_: Any) -> CommandResult:
        words = " ".join(argv).split()
        program = next(p for p in self.answers if p in words)
        self.asked.append(program)
        return CommandResult(list(argv), 0, self.answers[program], "", 0.0)

    async def close(self) -> None:
        pass


BJOBS_FORGOT = json.dumps({"COMMAND": "bjobs", "JOBS": 1, "RECORDS": [
    {"JOBID": "4102", "ERROR": "Job <4102> is not found"}]})


async def test_a_job_bjobs_forgot_ends_as_bhist_says(tmp_path) -> None:
    """The monitor follows a running LSF job; when it polls again, bjobs no longer knows it
    (it ended more than CLEAN_PERIOD ago). Before, three such polls marked it FAILED as lost
    ("left the queue and accounting has no record of it"); now its end is read from bhist
    at the first: its exit code and LSF's reason."""
    transport = RecordedLsf({"bjobs": BJOBS_FORGOT, "bhist": BHIST})
    site = Site(SiteConfig(name="wren", scheduler="lsf", workdir=str(tmp_path / "w"),
                           transport=TransportConfig(kind="local")), transport=transport)
    store = Store(tmp_path / "store.sqlite")
    store.upsert_job(Job(id="wren:4102", site="wren", native_id="4102", name="wc",
                         submitted_at=utcnow() - timedelta(hours=3)))
    store.apply_state("wren:4102", JobState.RUNNING)
    journal = Journal(store, {"wren": site}, poll_interval_s=3600, min_poll_s=3600)
    try:
        journal.monitors["wren"].track(store.get_job("wren:4102"))
        assert await journal.monitors["wren"].poll_once() == 1
        job = store.get_job("wren:4102")
        assert (job.state, job.exit_code, job.reason) == (
            JobState.FAILED, 1, "out of memory: the job used more than the memory it was "
                                "given (TERM_MEMLIMIT: job killed after reaching LSF memory "
                                "usage limit)")
        assert transport.asked == ["bjobs", "bhist"]
    finally:
        await journal.stop()


def test_bhist_huge_command_is_data() -> None:
    """A command of a million characters holding what looks like LSF's fields is the job's
    text: the name and user are LSF's own, read at once."""
    forged = ", Job Name <forged>, User <root" * 40000
    text = (f"Job <4400>, Job Name <real>, User <ana>, Project <p>, Command <{forged}>\n"
            "Sun Dec  6 05:00:00: Submitted from host <l>, to Queue <q>, CWD <$HOME>;\n"
            "Sun Dec  6 05:10:00: Completed <exit>; TERM_OWNER: job killed by owner.\n")
    [job] = lsf.parse_accounting(text)
    assert (job.name, job.user, job.state.value) == ("real", "ana", "CANCELLED")
    [job] = lsf.parse_accounting(text.replace("Job Name <real>, ", ""))
    assert (job.name, job.user) == (None, "ana")
