"""Grid Engine command lines and output parsers (pure: argv in, models out).

Recorded on Son of Grid Engine 8.1.9 (Debian 12 `gridengine-*`). `qstat -xml -u '*'`
lists running jobs (queue_info) and pending ones (job_info); an array shows one entry per
running task and one for its pending range. A job leaves qstat the moment it ends;
`qacct -j ID` then reads the accounting file (the test bed flushes it at once; a site's
`accounting_flush_time` may delay it). A pending job deleted with qdel leaves no
accounting record at all, and a running one killed by qdel looks like any job killed by
SIGKILL (`failed 100`, exit_status 137): only the engine knows it asked for the cancel.
Times are the cluster's local time: `2026-12-01T18:26:49` in XML, ctime in qacct.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import datetime, tzinfo
from typing import Any, Literal

from ..digits import ascii_digits
from ..model import (
    BadInput,
    JobState,
    JobStatus,
    Node,
    Partition,
    SgeComplex,
    SgeComplexName,
    SiteError,
    SiteSnapshot,
    UserAcl,
    arch_name,
)
from .base import AccountingReach
from .dependencies import ListedJob, sge_dependency, sge_named
from .limits_text import parse_sge_calendars, parse_sge_quotas, with_status
from .outputs_common import (
    OUT_OF_MEMORY,
    FailureReading,
    clean,
    count_array_tasks,
    fail,
    known_count,
    limit_count,
    memory_mb,
    not_set_mark,
    outcome_rank,
    parse_duration,
    parse_iso,
    parse_local_time,
    signal_number,
    signed32,
    takes_records,
    to_int,
    unread,
    user_filter,
    xml_document,
)

# SGE 8.1.9 and Sun GE (`Sat Dec  5 10:00:00 2026`); Univa/Altair Grid Engine print
# `12/05/2026 10:00:00.123`
# qacct's dates: SGE's ctime, Univa/Altair's MM/DD/YYYY, Open Cluster Scheduler 9's
# YYYY-MM-DD with microseconds (sge_ctime64)
CTIME_FORMATS = ("%a %b %d %H:%M:%S %Y", "%m/%d/%Y %H:%M:%S.%f", "%m/%d/%Y %H:%M:%S",
                 "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S")
_NO_TIME = "-/-"  # qacct's start or end of a job that never ran
QACCT_SEP = "=" * 62
# failed codes (sge_shepherd / qmaster) that are not the job's own doing
_TIMEOUT_FAILED = {37}  # qmaster enforced h_rt, h_cpu, or h_vmem limit
# a run Grid Engine puts back in the queue (sge_status(5)): failed 25, "rescheduling" (ran,
# will be rescheduled), and a job script's own exit status 99, which asks for a requeue
_RESCHEDULED_FAILED = 25
REQUEUE_EXIT = 99
_XML_END = "</job_info>"
# an array task's record: JOB.TASK, or JOB.TASKS for its waiting ones (qstat's ja-task-ID:
# '4,5', '6-10:1', '1-9:2'); the engine follows the array, JOB, as one job
_TASK_ID = re.compile(r"([0-9]+)\.([0-9]+(?:-[0-9]+(?::[0-9]+)?)?"
                      r"(?:,[0-9]+(?:-[0-9]+(?::[0-9]+)?)?)*)")


def array_of(native_id: str) -> str | None:
    """The array a task's record belongs to: '9.3', '9.4,5', '9.6-10:1' -> '9'; None for a
    plain job ('9'; qsub answers an array's submit '9.1-10:1', read as '9')."""
    m = _TASK_ID.fullmatch(native_id)
    return m.group(1) if m else None


def array_tasks(native_id: str) -> int:
    """How many tasks a record stands for: '9.6-10:1' five, '9.4,5' two, '9.3' one."""
    m = _TASK_ID.fullmatch(native_id)
    return (count_array_tasks(m.group(2)) or 1) if m else 1
_HOLD_LINE = "'^#\\$(.*[[:space:]])?-h([[:space:]]|$)'"  # a #$ line with -h (for grep -E)


def _holds(j: ET.Element, tag: str) -> list[str]:
    """A job's `-hold_jid` (`predecessor_jobs`) or `-hold_jid_ad` (`ad_predecessor_jobs`)
    predecessors as `qstat -r` lists them: the job numbers Grid Engine found for them, else
    the entries as requested (`..._req`: numbers, names, patterns)."""
    found = [p.text or "" for p in j.iter(tag)]
    return found or [p.text or "" for p in j.iter(f"{tag}_req")]


def _with_named_holds(root: ET.Element, jobs: list[JobStatus],
                      skipped: list[str] | None) -> list[JobStatus]:
    """`jobs` (the listing's records) with each held job (hqw) whose `-hold_jid` or
    `-hold_jid_ad` names jobs by name or pattern waiting for the jobs of its owner that
    the listing holds of those names (`dependencies.sge_named`). A name standing for no
    such job holds it back for nobody: said in `skipped`, and a job left holding for no one
    is read as waiting for room alone."""
    named: dict[str, tuple[list[str], list[str]]] = {}  # job number -> its holds asked
    for j in root.iter("job_list"):
        pred, ad = _holds(j, "predecessor_jobs"), _holds(j, "ad_predecessor_jobs")
        if (j.findtext("state") or "").strip() == "hqw" \
                and not all(ascii_digits(p.strip()) for p in [*pred, *ad]):
            named[(j.findtext("JB_job_number") or "").strip()] = (pred, ad)
    if not named:
        return jobs
    listed = [ListedJob(array_of(x.native_id) or x.native_id, x.name, x.user) for x in jobs]
    out = []
    said: set[str] = set()
    for x in jobs:
        number = array_of(x.native_id) or x.native_id
        if number not in named or x.native_state != "hqw":
            out.append(x)
            continue
        pred, ad = named[number]
        ids, lost = sge_named(pred, number, x.user, listed)
        ad_ids, ad_lost = sge_named(ad, number, x.user, listed)
        for_nobody = [f"-hold_jid {n}" for n in lost] + [f"-hold_jid_ad {n}" for n in ad_lost]
        if for_nobody and skipped is not None and number not in said:
            said.add(number)  # once for an array's records
            skipped.append(
                f"sge: qstat -r: job {x.native_id} ({x.user or 'owner unknown'}) holds on "
                f"{', '.join(for_nobody)}, which names no job of its owner submitted before "
                "it in the queue: it holds the job back for nobody")
        dependency = sge_dependency(ids, ad_ids)
        if dependency is None and not ids and not ad_ids:  # held for no one
            out.append(x.model_copy(update={
                "reason": f"waits on {', '.join(for_nobody)}, which names no job in the "
                          "queue: taken as met"}))
        else:
            out.append(x.model_copy(update={"dependency": dependency}))
    return out


def map_state(code: str) -> tuple[JobState, str | None]:
    """A qstat state code (r, t, qw, hqw, Eqw, dr, Rr, s, S, T ...) -> (state, reason)."""
    c = code.strip()
    if not c:
        return JobState.UNKNOWN, None
    if "E" in c:
        return JobState.PENDING, f"error state ({c}): `qstat -j` says why; it runs only " \
                                 "after `qmod -cj`"
    reason = "being deleted" if "d" in c else None
    if any(x in c for x in "rtsST"):
        if any(x in c for x in "sST"):
            reason = reason or f"suspended ({c})"
        return JobState.RUNNING, reason
    if "q" in c or "w" in c:
        if "h" in c:
            reason = reason or f"held ({c})"
        return JobState.PENDING, reason
    return JobState.UNKNOWN, reason


def finished_state(failed: str | None, exit_status: int | None
                   ) -> tuple[JobState, int | None, str | None]:
    """(state, exit code, reason) of a qacct record."""
    if exit_status is not None:  # (-1 printed unsigned is still -1)
        exit_status = signed32(exit_status)
    code = to_int((failed or "").split(":")[0]) or 0
    why = (failed or "").partition(":")[2].strip() or None
    if code == _RESCHEDULED_FAILED or (not code and exit_status == REQUEUE_EXIT):
        # not how the job ended: that run's record; the job waits in the queue again
        said = f"failed {code}: {why}" if code else f"its exit status {REQUEUE_EXIT}"
        return JobState.PENDING, exit_status, (
            f"requeued: Grid Engine put the job back in the queue after a run ({said})")
    if code in _TIMEOUT_FAILED:
        return JobState.TIMEOUT, exit_status, f"time or memory limit ({why or code})"
    if code and code != 100:  # the job never ran its script (or not to the end)
        return JobState.FAILED, None, f"Grid Engine failed the job ({code}: {why})"
    if exit_status is None:
        return JobState.UNKNOWN, None, why
    if exit_status == 0 and not code:
        return JobState.COMPLETED, 0, None
    if exit_status > 128 and (sig := signal_number(exit_status - 128)):
        return JobState.FAILED, exit_status, f"killed by signal {sig}"
    return JobState.FAILED, exit_status, f"exit code {exit_status}"  # 255: no signal 127


# `qstat -j` of the arrays with tasks waiting ("$1": their ids, digits joined by commas),
# only the lines `parse_throttles` reads
THROTTLES_SH = ("qstat -j \"$1\" 2>/dev/null "
                "| grep -E '^(job_number|maximum concurrency):'; exit 0")
MAX_THROTTLE_ARRAYS = 1000  # the arrays one `qstat -j` asks about


# the queue instances in error (E) alone, with qstat's explanation of each (running jobs
# only: the pending list is not wanted)
QUEUE_ERRORS_SH = "qstat -f -xml -explain E -qs E -s r 2>/dev/null; exit 0"


def any_instance_in_error(queue_xml: str) -> bool:
    """Whether `qstat -f -xml` lists a queue instance in error (state E; a job's Eqw is
    not one)."""
    if not re.search(r"<state>[^<]*E", queue_xml):
        return False
    try:
        root = _xml(queue_xml.strip(), "qstat -f -xml", [])
    except SiteError:
        return False
    return any("E" in (q.findtext("state") or "") for q in root.iter("Queue-List"))


def waiting_arrays(queue_xml: str) -> list[str]:
    """The job numbers (ascending, at most MAX_THROTTLE_ARRAYS) of the arrays with tasks
    waiting in `qstat -f -xml`'s pending list: its records with a task range; none when the
    text has no task element at all (no array queued) or is not XML (its parse says so)."""
    if "<tasks>" not in queue_xml:
        return []
    try:
        info = _xml(queue_xml.strip(), "qstat -f -xml", []).find("job_info")
    except SiteError:
        return []
    ids = {int(n) for j in (info.iter("job_list") if info is not None else ())
           if clean(j.findtext("tasks"))
           and ascii_digits(n := clean(j.findtext("JB_job_number")) or "")}
    return [str(n) for n in sorted(ids)[:MAX_THROTTLE_ARRAYS]]


def parse_throttles(stdout: str) -> dict[str, int]:
    """`qstat -j`'s `maximum concurrency:` of each job (`qsub -tc N`: at most N of the
    array's tasks run at once), by its `job_number:`; 0 (no limit) left out."""
    out: dict[str, int] = {}
    job = None
    for line in stdout.splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key.strip() == "job_number":
            job = value if ascii_digits(value) else None
        elif key.strip() == "maximum concurrency" and job and ascii_digits(value) \
                and (most := limit_count(value)):
            out[job] = most
    return out


class SgeCommands(FailureReading, AccountingReach):
    """Grid Engine argv builders and parsers. `tz`: the cluster's time zone for its naive
    timestamps (None = this machine's)."""

    name = "sge"
    submit_stdin = False

    array_of = staticmethod(array_of)  # the engine follows an array as one job
    array_tasks = staticmethod(array_tasks)
    # outputs that change with the queue: read with every snapshot
    live_outputs = frozenset({"queue"})
    # an ended task leaves qstat at once: its outcome is in qacct while the array runs on
    ended_tasks_leave_queue = True

    def __init__(self, *, tz: tzinfo | None = None, gpu_complex: str | None = None) -> None:
        self.tz = tz
        # the complex the site counts GPUs in (the sites file's `gpu_complex`); without it
        # the usual names are read as GPUs and a host's GPUs are its `gpu`
        self.gpu_complex = gpu_complex or "gpu"
        self.gpu_complexes = (gpu_complex,) if gpu_complex else _GPU_COMPLEXES

    @staticmethod
    def _ids(native_ids: list[str]) -> list[str]:
        ids = [str(i).strip() for i in native_ids if str(i).strip()]
        if not ids:
            raise BadInput("sge: no job ids given")
        for i in ids:
            if not re.fullmatch(r"[0-9]+(\.[0-9]+(-[0-9]+(:[0-9]+)?)?)?", i):
                raise BadInput(f"sge: not a job id: {i!r}")
        return [i.split(".")[0] for i in ids]

    # -- argv ---------------------------------------------------------------
    def submit_argv(self, script_path: str, *, hold: bool = False) -> list[str]:
        """qsub's `-h` toggles: given on the command line AND in the script, the job is
        NOT held (measured on 8.1.9). A held submit adds it only when the script lacks it."""
        if not hold:
            return ["qsub", "-terse", script_path]
        return ["sh", "-c", f'if grep -Eq {_HOLD_LINE} "$1"; then exec qsub -terse "$1"; '
                'else exec qsub -terse -h "$1"; fi', "sh", script_path]

    def status_argv(self, native_ids: list[str]) -> list[str]:
        """The login's own queued and running jobs (qstat has no id filter for its list; its
        default is `-u $user`): following them never depends on how large everyone's queue
        is, which only the snapshot's `queue` reads."""
        self._ids(native_ids)
        return ["qstat", "-xml"]

    def accounting_argv(self, native_ids: list[str]) -> list[str] | None:
        """`qacct -j` takes one job: one shell loop, the ids as arguments (never code);
        a job without a record prints nothing."""
        return ["sh", "-c", 'for j do qacct -j "$j" 2>/dev/null; done; exit 0', "sh",
                *dict.fromkeys(self._ids(native_ids))]

    def history_argv(self, since: datetime) -> list[str]:
        """Every user's jobs that started since `since` (qacct filters by start time), in
        one query: the calibration's samples. qacct reads the whole accounting file, so it
        runs at the calibration's slow interval only."""
        local = since.astimezone(self.tz) if self.tz else since.astimezone()
        return ["qacct", "-j", "-b", local.strftime("%Y%m%d%H%M.%S")]

    def parse_history(self, stdout: str, skipped: list[str] | None = None
                      ) -> list[JobStatus]:
        """`qacct -j` records with their request (h_rt from the category), times and slots;
        the summary qacct prints when no job matches is no record. `skipped`: where to say
        a record of no job number, left out (else SiteError)."""
        return self.parse_accounting(stdout, skipped)

    def cancel_argv(self, native_ids: list[str]) -> list[str]:
        return ["qdel", *self._ids(native_ids)]

    def release_argv(self, native_ids: list[str]) -> list[str]:
        return ["qrls", *self._ids(native_ids)]

    def find_by_name_argv(self, name: str, user: str | None = None) -> list[str]:
        """The login's queue (`user`'s: `-u`), then the accounting records of jobs of that
        name (`qacct -j NAME`; `user`'s: `-o`): a job that ended since its submit's answer
        was lost is found too. Name and user travel as "$1" and "$2", never as code."""
        if not name or "\n" in name or name.startswith("-"):
            raise BadInput(f"sge: unusable job name {name!r}")
        if user_filter("sge", user):
            return ["sh", "-c", 'qstat -xml -u "$2" || exit 1; qacct -o "$2" -j "$1" '
                    "2>/dev/null; exit 0", "sh", name, user]
        return ["sh", "-c", 'qstat -xml || exit 1; qacct -j "$1" 2>/dev/null; exit 0',
                "sh", name]

    def snapshot_argvs(self) -> dict[str, list[str]]:
        return {
            # -q: each host's queue instances with their slots in use, read at the same
            # moment as its slots left (qstat's moment differs: a job starting or ending in
            # between made a host's total 0 or double)
            "hosts": ["qhost", "-xml", "-F", "-q"],
            "queues": ["sh", "-c", 'for q in $(qconf -sql); do qconf -sq "$q"; echo; done'],
            "pes": ["qconf", "-spl"],
            # each PE's allocation_rule: how its slots spread over hosts
            "pe_rules": ["sh", "-c", 'for p in $(qconf -spl 2>/dev/null); do qconf -sp "$p"; '
                         "echo; done; exit 0"],
            # -r: each job's hard requests, its h_rt among them (the simulation needs walltimes)
            "queue": ["qstat", "-f", "-xml", "-r", "-u", "*"],
            # max_reservation: whether waiting jobs are protected from backfill at all (a
            # site that hides its scheduler configuration leaves it unknown)
            # and the global configuration after it (max_u_jobs, max_jobs: the active jobs
            # qsub admits); their keys differ, so one output holds both
            "sconf": ["sh", "-c", "qconf -ssconf 2>/dev/null; qconf -sconf global "
                      "2>/dev/null; exit 0"],
            # the complexes: which are consumable, per slot or once a job, and their
            # defaults (one table, whatever the site's size)
            "complexes": ["sh", "-c", "qconf -sc 2>/dev/null; exit 0"],
            # each host group's hosts, resolved (a queue's complex_values may set a value
            # for the hosts of a group: `[@gpu=lic=2]`)
            "hostgroups": ["sh", "-c", 'for g in $(qconf -shgrpl 2>/dev/null); do echo '
                           '"group_name $g"; qconf -shgrp_resolved "$g"; done; exit 0'],
            # the access lists (a queue's user_lists and xuser_lists name them) and who the
            # probe runs as, checked against them
            "access_lists": ["sh", "-c", 'for u in $(qconf -sul 2>/dev/null); do qconf -su '
                             '"$u"; echo; done; exit 0'],
            "user": ["id", "-un"],
            # each project's acl and xacl: who may submit jobs under it (-P)
            "projects": ["sh", "-c", 'for p in $(qconf -sprjl 2>/dev/null); do qconf -sprj '
                         '"$p"; echo; done; exit 0'],
            # the resource quota sets (a user's running slots count against their rules)
            # and the calendars that close or suspend queues at set times
            "quotas": with_status("qconf -srqs"),
            # (a name is one word: qconf's "no calendar defined" is none)
            "calendars": with_status("for c in $(qconf -scall 2>/dev/null | grep -v ' '); "
                                     'do qconf -scal "$c"; echo; done'),
            # the hosts' time zone: a calendar's hours are local time there
            "clock": ["sh", "-c", 'date +%z; echo "TZ=${TZ:-}"; readlink /etc/localtime '
                      "2>/dev/null; exit 0"],
        }

    def followup_argvs(self, outputs: dict[str, str]) -> dict[str, list[str]]:
        """What the snapshot asks after its batch, from what that read: the -tc throttle
        of each array with tasks waiting in the queue read (qstat lists it only with -j:
        `maximum concurrency:`), as "throttles"; nothing when no array waits. Where a queue
        instance is in error (E), why (`qstat -explain E` of those alone), as
        "queue_errors"."""
        ids = waiting_arrays(outputs.get("queue", ""))
        out = {"throttles": ["sh", "-c", THROTTLES_SH, "sh", ",".join(ids)]} if ids else {}
        if any_instance_in_error(outputs.get("queue", "")):  # why: qstat -explain E
            out["queue_errors"] = ["sh", "-c", QUEUE_ERRORS_SH]
        return out

    # -- parsers ------------------------------------------------------------
    def parse_submit(self, stdout: str) -> str:
        """`qsub -terse`: '123', or '123.1-10:1' for an array (warnings may come first)."""
        for line in stdout.splitlines():
            m = re.fullmatch(r"\s*([0-9]+)(?:\.[0-9]+-[0-9]+:[0-9]+)?\s*", line)
            if m:
                return m.group(1)
        raise fail("sge", "qsub -terse output", "no job id", stdout)

    def parse_status(self, stdout: str, skipped: list[str] | None = None
                     ) -> list[JobStatus]:
        """`qstat -xml` (either form), optionally followed by qacct records. `skipped`:
        where to say a job record that cannot be read, left out (else SiteError)."""
        text = stdout.strip()
        if not text:
            return []
        lines = text.count("\n")
        text = xml_document("sge", "qstat -xml", text, skipped, keep_after=True).strip()
        xml_part, acct = text, ""
        if text.startswith("<"):
            end = text.rfind(_XML_END)
            if end < 0:
                raise fail("sge", "qstat -xml", "no closing </job_info>", text)
            xml_part, acct = text[:end + len(_XML_END)], text[end + len(_XML_END):]
        else:
            said = len(skipped or [])
            found = self.parse_accounting(text, skipped)
            if not found and len(skipped or []) == said:  # a message where XML should be
                raise fail("sge", "qstat -xml", "not XML", text)
            return found
        root = _xml(xml_part, "qstat -xml", skipped)
        jobs: dict[str, JobStatus] = {}
        for j in root.iter("job_list"):  # an array: its running tasks, its pending range
            if (st := self._xml_job_or_skip(j, skipped)) is None:
                continue
            prev = jobs.get(st.native_id)
            if prev is None or (st.state == JobState.RUNNING != prev.state):
                jobs[st.native_id] = st
        listed = _with_named_holds(root, list(jobs.values()), skipped)
        acct = _qacct_part(acct, lines - acct.count("\n") + 1, skipped)
        # a qacct record that cannot be read is said, the others stand (its job, not
        # listed, stays unknown)
        return listed + (self.parse_accounting(acct, skipped) if acct.strip() else [])

    def _xml_job_or_skip(self, j: ET.Element, skipped: list[str] | None) -> JobStatus | None:
        """`_xml_job` under its task record's id (an array's task `9.3`, its waiting tasks
        `9.4-8:1`: one record a task), or None with why said in `skipped` (without it,
        SiteError)."""
        try:
            st = self._xml_job(j)
        except SiteError as e:
            if not takes_records(skipped):  # none, or messages only (a job followed)
                raise
            skipped.append(str(e))
            return None
        tasks = clean(j.findtext("tasks"))
        if tasks and _TASK_ID.fullmatch(f"{st.native_id}.{tasks}"):
            st = st.model_copy(update={"native_id": f"{st.native_id}.{tasks}"})
        return st

    def _xml_job(self, j: ET.Element) -> JobStatus:
        jid = (j.findtext("JB_job_number") or "").strip()
        if not ascii_digits(jid):
            raise fail("sge", "qstat -xml", "a job without JB_job_number",
                       " ".join(f"{c.tag}={(c.text or '').strip()}" for c in j))
        code = (j.findtext("state") or "").strip()
        state, reason = map_state(code)
        start = parse_iso(j.findtext("JAT_start_time"), self.tz)
        tasks = clean(j.findtext("tasks"))
        return JobStatus(
            native_id=jid, state=state, native_state=code or None,
            name=clean(j.findtext("JB_name")), user=clean(j.findtext("JB_owner")),
            partition=(clean(j.findtext("queue_name")) or "").split("@")[0] or None,
            cpus=known_count(j.findtext("slots")),
            submitted_at=parse_iso(j.findtext("JB_submission_time"), self.tz),
            started_at=start if state == JobState.RUNNING else None,
            reason=reason, comment=f"tasks {tasks}" if tasks else None,
            node_list=(clean(j.findtext("queue_name")) or "").partition("@")[2] or None,
            walltime_s=_hard_runtime(j),
            # -r: its project and granted PE (absent: none), which quota filters count
            account=clean(j.findtext("JB_project")),
            pe=(g.get("name") or None) if (g := j.find("granted_pe")) is not None else None,
            # -r: its -hold_jid and -hold_jid_ad predecessors, read on a job held (hqw)
            # with some (a hold of another kind on top is not told apart there); names
            # are found among the listing's jobs after (`_with_named_holds`)
            dependency=sge_dependency(_holds(j, "predecessor_jobs"),
                                      _holds(j, "ad_predecessor_jobs")) if code == "hqw"
            else None,
        )

    def parse_accounting(self, stdout: str, skipped: list[str] | None = None
                         ) -> list[JobStatus]:
        """`qacct -j` records ("key value" lines between ===== separators); an array's
        task is a record of its own, JOB.TASK (`taskid`; accounting(5)'s task_number), for
        the engine to fold (`array_of`). Several records of one id (a reused id): the
        worst outcome; a requeued run's record (failed 25, or exit status 99) gives way to
        any other, and alone is no ending: qacct is asked of jobs qstat no longer lists, so
        such a job left the queue after it without a run of its own (deleted while waiting
        again) and is left out, to be followed as any job gone from the queue (read as
        waiting, it was followed for ever and a cancel never applied)."""
        out: dict[str, JobStatus] = {}
        for block in stdout.split(QACCT_SEP):
            rec: dict[str, str] = {}
            for line in block.splitlines():
                key, _, value = line.strip().partition(" ")
                if key and re.fullmatch(r"[a-z_]+", key):
                    rec[key] = value.strip()
            if "jobnumber" not in rec:
                continue
            jid = rec["jobnumber"]
            if not ascii_digits(jid):
                unread(skipped, "sge", "qacct -j", f"bad jobnumber {jid!r}", block)
                continue
            task = rec.get("taskid", "")
            if ascii_digits(task) and int(task) > 0:  # 'undefined' for a plain job
                jid = f"{jid}.{int(task)}"
            exit_status = to_int(((rec.get("exit_status") or "").split() or [None])[0])
            state, code, reason = finished_state(rec.get("failed"), exit_status)
            if (over := _over_memory(rec)) and (state == JobState.FAILED and code == 137 or
                                                state == JobState.TIMEOUT and
                                                not _past_runtime(rec)):
                state, reason = JobState.FAILED, f"{OUT_OF_MEMORY} ({over})"
            start = parse_local_time(rec.get("start_time"), self.tz, CTIME_FORMATS)
            unreadable = [f"its {key} {rec[key]!r} was not read (no date form qacct prints)"
                          for key in ("qsub_time", "start_time", "end_time")
                          if clean(rec.get(key)) not in (None, _NO_TIME)
                          and parse_local_time(rec[key], self.tz, CTIME_FORMATS) is None]
            reason = "; ".join(x for x in (reason, *unreadable) if x) or None
            st = JobStatus(
                native_id=jid, state=state, native_state=clean(rec.get("failed")),
                name=clean(rec.get("jobname")), user=clean(rec.get("owner")),
                partition=clean(rec.get("qname")), cpus=known_count(rec.get("slots")),
                submitted_at=parse_local_time(rec.get("qsub_time"), self.tz, CTIME_FORMATS),
                started_at=start,
                ended_at=parse_local_time(rec.get("end_time"), self.tz, CTIME_FORMATS)
                if start else None,
                exit_code=code, reason=reason, node_list=clean(rec.get("hostname")),
                walltime_s=_category_runtime(rec.get("category")),
            )
            prev = out.get(jid)
            if prev is None or _speaks_over(st, prev):
                out[jid] = st
        return [st for st in out.values() if st.state != JobState.PENDING]

    # -- snapshot -----------------------------------------------------------
    def parse_queue_configs(self, stdout: str) -> dict[str, dict[str, str]]:
        """`qconf -sq` of each queue (blank-line separated, '\\' continues a line)."""
        text = re.sub(r"\\\n\s*", " ", stdout)
        out: dict[str, dict[str, str]] = {}
        cur: dict[str, str] = {}
        for line in text.splitlines() + [""]:
            key, _, value = line.strip().partition(" ")
            if key == "qname":
                if cur.get("qname"):
                    out[cur["qname"]] = cur
                cur = {}
            if key:
                cur[key] = value.strip()
        if cur.get("qname"):
            out[cur["qname"]] = cur
        return out

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot:
        queue_text = outputs.get("queue", "")
        skipped: list[str] = []
        instances: list[dict[str, Any]] = []
        jobs: list[JobStatus] = []
        # host -> complex -> what its running jobs asked of it (per slot x their slots
        # there: a consumable is asked per slot unless the complex says JOB)
        asked: dict[str, dict[str, float]] = {}
        by_job: dict[str, dict[str, float]] = {}  # the same, by running job
        # (queue, host) -> running job -> complex -> what it took in that queue instance
        by_instance: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
        # (queue, host) -> running job -> its slots in that queue instance
        slots_in: dict[tuple[str, str], dict[str, int]] = {}
        counted: set[tuple[str, str]] = set()
        complexes = parse_complexes(outputs.get("complexes", ""))
        complex_names = parse_complex_names(outputs.get("complexes", ""))
        root: ET.Element | None = None
        if queue_text.strip():
            root = _xml(queue_text.strip(), "qstat -f -xml", skipped)
            for n, q in enumerate(root.iter("Queue-List"), 1):
                qname, _, host = (q.findtext("name") or "").strip().partition("@")
                if not qname or not host:  # before: a queue (or a host) named ""
                    unread(skipped, "sge", f"qstat -f -xml queue instance {n}",
                           "no name QUEUE@HOST", " ".join(
                               f"{c.tag}={(c.text or '').strip()}" for c in q
                               if c.tag != "job_list"))
                    continue
                instances.append({
                    "queue": qname, "host": host, "state": (q.findtext("state") or "").strip(),
                    "said": _explained(q),
                    "used": known_count(q.findtext("slots_used")) or 0,
                    "resv": known_count(q.findtext("slots_resv")) or 0,
                    "total": known_count(q.findtext("slots_total")) or 0,
                    "arch": clean(q.findtext("arch")),
                })
                for j in q.iter("job_list"):
                    if (st := self._xml_job_or_skip(j, skipped)) is None:
                        continue
                    mine_here = slots_in.setdefault((qname, host), {})
                    mine_here[st.native_id] = mine_here.get(st.native_id, 0) + (st.cpus or 1)
                    took = asked.setdefault(host, {})
                    # its first (master) instance: an array's tasks are jobs of their own
                    key = (st.native_id, st.comment or "")
                    first = key not in counted
                    counted.add(key)
                    gpus = 0.0
                    entry: dict[str, float] = {}  # what this entry takes, in this instance
                    for name, amount, per in _taken(_hard_amounts(j), complexes,
                                                     self.gpu_complexes):
                        # once a job (on its first, master, instance), once a host, or
                        # per slot
                        amount *= (1.0 if first else 0.0) if per == "job" else \
                            1.0 if per == "host" else float(st.cpus or 1)
                        gpus += amount if name in self.gpu_complexes else 0.0
                        took[name] = took.get(name, 0.0) + amount
                        mine = by_job.setdefault(st.native_id, {})
                        mine[name] = mine.get(name, 0.0) + amount
                        there = by_instance.setdefault((qname, host), {}).setdefault(
                            st.native_id, {})
                        there[name] = there.get(name, 0.0) + amount
                        entry[name] = entry.get(name, 0.0) + amount
                    if gpus:  # they free when it ends
                        st = st.model_copy(update={"gpus": round(gpus)})
                    jobs.append(st.model_copy(update={"partition": qname,
                                                      "node_list": host or None,
                                                      "shared_use": entry}))
            info = root.find("job_info")
            throttles = parse_throttles(outputs.get("throttles", ""))
            for j in (info.iter("job_list") if info is not None else ()):
                if (st := self._xml_job_or_skip(j, skipped)) is not None:
                    if (limit := throttles.get(array_of(st.native_id) or "")) is not None:
                        st = st.model_copy(update={"array_limit": limit})
                    jobs.append(st)
        partitions = self._partitions(
            outputs.get("queues", ""), instances, complexes,
            parse_hostgroups(outputs.get("hostgroups", "")), by_instance, slots_in,
            parse_access_lists(outputs["access_lists"]) if "access_lists" in outputs
            else None, complex_names)
        user = (outputs.get("user") or "").strip()
        quotas, quotas_unread = parse_sge_quotas(outputs["quotas"]) if "quotas" in outputs \
            else (None, None)
        calendars, calendars_unread = parse_sge_calendars(outputs["calendars"]) \
            if "calendars" in outputs else (None, None)
        unread_limits = {k: v for k, v in (("resource quotas", quotas_unread),
                                           ("calendars", calendars_unread)) if v}
        return SiteSnapshot(
            sge_quotas=quotas, sge_calendars=calendars, limits_unread=unread_limits,
            site_time_zone=parse_time_zone(outputs.get("clock", "")),
            sge_host_groups=parse_hostgroups(outputs["hostgroups"]) if "hostgroups" in outputs
            else None,
            sge_access_lists=parse_access_lists(outputs["access_lists"])
            if "access_lists" in outputs else None,
            user=user if re.fullmatch(r"[\w.-]+", user) else None,
            project_acls=parse_project_acls(outputs["projects"], parse_access_lists(
                outputs["access_lists"])) if "projects" in outputs and "access_lists"
            in outputs else None,
            site=site, nodes=_queue_gpus(
                self._nodes(outputs.get("hosts", ""), instances, asked, skipped,
                            outputs.get("queue_errors", "")), partitions,
                self.gpu_complexes),
            gpu_complex=self.gpu_complex if self.gpu_complexes != _GPU_COMPLEXES else None,
            partitions=partitions, jobs=jobs if root is None
            else _with_named_holds(root, jobs, skipped),
            parallel_environments=parse_pe_names(outputs["pes"]) if "pes" in outputs
            else None,
            pe_rules=parse_pe_rules(outputs["pe_rules"]) if "pe_rules" in outputs else None,
            sge_complexes=complexes,
            sge_complex_names=complex_names,
            **_global_consumables(outputs.get("hosts", ""), asked, by_job),
            backfill=backfill_policy(outputs.get("sconf", "")),
            queue_order=queue_order(outputs.get("sconf", "")),
            sge_max_user_jobs=max_user_jobs(outputs.get("sconf", "")),
            sge_max_u_jobs=max_user_jobs(outputs.get("sconf", ""), "max_u_jobs"),
            sge_max_jobs=max_user_jobs(outputs.get("sconf", ""), "max_jobs"),
            sge_submit_run_s=scheduler_runs(outputs.get("sconf", ""))[0],
            sge_finish_run_s=scheduler_runs(outputs.get("sconf", ""))[1],
            warnings=[f"{site}: {w}" for w in skipped])

    def _nodes(self, text: str, instances: list[dict[str, Any]],
               asked: dict[str, dict[str, float]] | None = None,
               skipped: list[str] | None = None, errors_text: str = "") -> list[Node]:
        if not text.strip():
            return []
        explained = parse_queue_errors(errors_text)
        root = _xml(text.strip(), "qhost -xml", skipped)
        out = []
        everywhere = {cx for h in root.iter("host") if h.get("name") == "global"
                      for v in h.findall("resourcevalue")
                      if (v.get("dominance") or "")[:2] in _CONFIGURED and (cx := v.get("name"))}
        # the fixed values the global host's complex_values set (gf), a host's own over them
        global_texts = {cx: (v.text or "").strip() for h in root.iter("host")
                        if h.get("name") == "global" for v in h.findall("resourcevalue")
                        if (v.get("dominance") or "")[:2] == "gf" and (cx := v.get("name"))}
        for h in root.iter("host"):
            name = h.get("name") or ""
            if not name or name == "global":
                continue
            hv = {v.get("name"): (v.text or "").strip() for v in h.findall("hostvalue")}
            rv = {v.get("name"): (v.text or "").strip() for v in h.findall("resourcevalue")}
            # what the host's and the global complex_values set: fixed (f) and consumable
            # (c) values, not load values (l)
            configured = sorted(everywhere | {cx for v in h.findall("resourcevalue")
                                              if (v.get("dominance") or "")[:2] in _CONFIGURED
                                              and (cx := v.get("name"))})
            # host consumables (dominance hc): what is left of each now; what the host has
            # is that plus what its running jobs asked
            left = {cx: x for v in h.findall("resourcevalue")
                    if (v.get("dominance") or "").startswith("hc") and (cx := v.get("name"))
                    and cx != "slots" and (x := amount(v.text)) is not None}
            took = (asked or {}).get(name, {})
            total = {k: x + took.get(k, 0.0) for k, x in left.items()}
            mine = [i for i in instances if i["host"] == name]
            # its size from qhost alone (slots in use per `-q` queue instance plus the slots
            # left, one moment); what is in use from qstat, whose jobs explain it (the two
            # commands run a moment apart: mixing them made a busy host 0, 1 or 14 CPUs, or
            # left slots taken by jobs the list did not show, never to be freed)
            own = _host_queues(h)
            used = sum(i["used"] for i in mine) if mine else sum(u for u, _ in own)
            free = known_count(rv.get("slots"))  # the host's own slot cap, what is left of it
            totals = [t for _, t in own] or [i["total"] for i in mine]
            size = sum(u for u, _ in own) if own else used
            # without that cap the host runs what its queue instances hold together (each
            # instance's own slots bind the jobs of its queue: `instance_slots_short`)
            cpus = size + free if free is not None else sum(totals) if totals else known_count(
                hv.get("num_proc"))
            used = min(used, cpus) if cpus else used
            states = "".join(i["state"] for i in mine)
            errors = explained.get(name, {})
            load = clean(hv.get("load_avg"))
            if load is None or re.search(r"[uo]", states):
                state = "down"
            elif mine and all(_CLOSED.search(i["state"]) for i in mine):
                # no queue instance here takes a job (one that does keeps the host usable
                # for its queue: the others leave it out of their hosts, `_partitions`)
                state = "drain"
            else:
                state = "idle" if not used else ("allocated" if used >= (cpus or 0) else "mixed")
            # hc:gpu is what is left: the host's GPUs are that plus its jobs' (before, what
            # was left was taken as the host's GPUs, none in use)
            gpu = self.gpu_complex
            gpu_total = round(total[gpu]) if gpu in total else known_count(rv.get(gpu))
            arch = clean(hv.get("arch_string"))
            # h_vmem a host consumable: the memory Grid Engine schedules by (a job's h_vmem
            # per slot times its slots there must be left of it), not the physical memory
            vmem = "h_vmem" in left
            out.append(Node(
                name=name, state=state, cpus=cpus or 0, cpus_allocated=used,
                memory_mb=round(total["h_vmem"] / 2**20) if vmem
                else memory_mb(hv.get("mem_total")) or 0,
                memory_allocated=round(took.get("h_vmem", 0.0) / 2**20) if vmem else 0,
                consumables_left=left or None, consumables_total=total or None,
                host_values={k: x for k, v in (hv | rv).items() if k
                             and (x := amount(v)) is not None} or None,
                complex_values=configured or None,
                complex_texts=global_texts | {
                    cx: (v.text or "").strip() for v in h.findall("resourcevalue")
                    if (v.get("dominance") or "")[:2] in ("hf", "gf") and (cx := v.get("name"))
                } or None,
                gpus=gpu_total or 0,
                gpus_allocated=min(round(took.get(gpu, 0.0)), gpu_total or 0)
                if gpu in total else 0,
                partitions=sorted({i["queue"] for i in mine}),
                architecture=arch_name(arch), arch_string=arch,
                reason=instance_states_said(mine, errors) if state in ("down", "drain")
                else None,
            ))
        return out

    def _partitions(self, text: str, instances: list[dict[str, Any]],
                    complexes: dict[str, SgeComplex] | None = None,
                    groups: dict[str, list[str]] | None = None,
                    by_instance: dict[tuple[str, str], dict[str, dict[str, float]]] | None
                    = None, slots_in: dict[tuple[str, str], dict[str, int]] | None = None,
                    access_lists: dict[str, list[str]] | None = None,
                    complex_names: dict[str, SgeComplexName] | None = None
                    ) -> list[Partition]:
        configs = self.parse_queue_configs(text)
        names = list(configs) or list(dict.fromkeys(i["queue"] for i in instances))
        out = []
        for n, name in enumerate(names):
            cfg = configs.get(name, {})
            mine = [i for i in instances if i["queue"] == name]
            h_rt, s_rt, notify = (_limit(cfg.get(k)) for k in ("h_rt", "s_rt", "notify"))
            by_host = _host_limits(cfg.get("h_rt"), [i["host"] for i in mine if i["host"]],
                                   groups or {})
            if by_host:  # the longest any instance gives (None: one has no limit)
                h_rt = None if None in by_host.values() else max(
                    t for t in by_host.values() if t is not None)
            # disabled (d, D: by its calendar), suspended (s, S, C: by its calendar), in
            # error (E), unknown (u) or in load alarm (a: above its load_threshold, no job
            # is scheduled to it) in every instance: it starts no job; in some, those hosts
            # are not its own until they take jobs again
            open_ = [i for i in mine if not _CLOSED.search(i["state"])]
            hosts = [i["host"] for i in mine if i["host"]]
            alarm = bool(mine) and not open_ and all(
                re.fullmatch(r"[aA]+", i["state"]) for i in mine)
            out.append(Partition(
                name=name, default=n == 0,
                state="UP" if open_ else "ALARM" if alarm else "DOWN", max_time_s=h_rt,
                soft_time_s=s_rt, notify_s=notify if s_rt is not None else None,
                max_mem_per_slot_mb=memory_mb(cfg.get("h_vmem"), default_unit="b")
                if (cfg.get("h_vmem") or "").upper() not in ("", "INFINITY") else None,
                nodes=[i["host"] for i in open_ or mine], total_nodes=len(mine),
                total_cpus=sum(i["total"] for i in mine),
                parallel_environments=pe_list(cfg["pe_list"]) if "pe_list" in cfg else None,
                instance_slots={i["host"]: i["total"] for i in mine if i["host"]} or None,
                instance_time_s=by_host,
                instance_slots_taken={i["host"]: i.get("used", 0) + i.get("resv", 0)
                                      for i in mine if i["host"]} or None,
                instance_slots_held={h: got for i in mine if (h := i["host"])
                                     and (got := (slots_in or {}).get((name, h)))} or None,
                user_acls=_user_acls(cfg, access_lists),
                instance_calendars=_calendars(cfg.get("calendar"), [i["host"] for i in mine
                                                                     if i["host"]], groups or {}),
                calendar_closed=[i["host"] for i in mine if i["host"]
                                 and re.fullmatch(r"[DC]+", i["state"])] or None,
                no_batch_hosts=[h for h in hosts if "BATCH" not in host_value(
                    cfg["qtype"], h, groups or {}).upper().replace(",", " ").split()]
                or None if cfg.get("qtype") else None,
                projects_by_host=_host_names(cfg.get("projects"), hosts, groups or {}),
                xprojects_by_host=_host_names(cfg.get("xprojects"), hosts, groups or {}),
                instance_complexes=_instance_complexes(
                    cfg.get("complex_values"), [i["host"] for i in mine if i["host"]],
                    groups or {}, complex_names),
                instance_complex_values=_instance_complex_values(
                    cfg.get("complex_values"), [i["host"] for i in mine if i["host"]],
                    groups or {}, complex_names),
                **_queue_consumables(cfg.get("complex_values"), [i["host"] for i in mine],
                                     groups or {}, complexes,
                                     {i["host"]: (by_instance or {}).get((name, i["host"]), {})
                                      for i in mine}),
            ))
        return out


# a queue instance that takes no new job: disabled (d, D), suspended (s, S, C), in error
# (E), unknown (u), in load or suspend alarm (a, A), of an ambiguous configuration (c),
# orphaned (o: gone from the configuration, kept for the jobs still in it) or, in Univa and
# Altair Grid Engine, preempted (P: suspended by a preemption)
_CLOSED = re.compile(r"[dDuEsSCaAcoP]")
# a queue instance's state letters (qstat(1)) as words, for a host that takes no job
_INSTANCE_STATES = {"u": "unknown", "o": "orphaned", "d": "disabled", "E": "in error",
                    "a": "in load alarm", "A": "in suspend alarm", "s": "suspended",
                    "S": "suspended by a subordinate queue", "C": "suspended by its calendar",
                    "D": "disabled by its calendar", "c": "configuration ambiguous",
                    "P": "preempted"}


def _explained(q: ET.Element) -> str | None:
    """What `qstat -explain` said of a queue instance (`<message>`, `<load-alarm-reason>`),
    one line; None: nothing."""
    said = [" ".join((e.text or "").split()) for e in q
            if e.tag in ("message", "load-alarm-reason")]
    return "; ".join(dict.fromkeys(x for x in said if x)) or None


def parse_queue_errors(text: str) -> dict[str, dict[str, str]]:
    """`qstat -f -xml -explain E`: by host, then queue, why its queue instance is in error
    (`queue all.q marked QERROR as result of job 42's failure at host n01`); unreadable
    output reads as nothing said."""
    if not text.strip().startswith("<"):
        return {}
    try:
        root = ET.fromstring(text.strip())
    except ET.ParseError:
        return {}
    out: dict[str, dict[str, str]] = {}
    for q in root.iter("Queue-List"):
        qname, _, host = (q.findtext("name") or "").strip().partition("@")
        if qname and host and (said := _explained(q)):
            out.setdefault(host, {})[qname] = said
    return out


def instance_states_said(instances: list[dict[str, Any]], errors: dict[str, str]) -> str | None:
    """Why a host's queue instances take no job, in qstat's words: `all.q disabled (d);
    long.q in error (E): queue long.q marked QERROR ...` (`errors`: what -explain E said
    by queue); None: no instance state says."""
    said = []
    for i in instances:
        letters = [c for c in dict.fromkeys(i["state"]) if c in _INSTANCE_STATES]
        if not letters:
            continue
        words = ", ".join(f"{_INSTANCE_STATES[c]} ({c})" for c in letters)
        why = errors.get(i["queue"]) or i.get("said")
        said.append(f"{i['queue']} {words}" + (f": {why}" if why else ""))
    return "; ".join(said) or None


def parse_time_zone(stdout: str) -> str | None:
    """The zone the probe's `date +%z`, `TZ=` and `readlink /etc/localtime` lines report:
    TZ's name, else the link's zone (`.../zoneinfo/Europe/Berlin`), else the offset
    (`+0100`); None: none of them."""
    offset = link = tz = None
    for line in stdout.splitlines():
        line = line.strip()
        if re.fullmatch(r"[+-][0-9]{4}", line):
            offset = line
        elif line.startswith("TZ="):
            tz = line[3:].lstrip(":") or None
        elif "zoneinfo/" in line:
            link = line.rpartition("zoneinfo/")[2] or None
    return tz or link or offset


def _named_blocks(stdout: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The blocks of a `qconf -s...` listing (blank-line separated, '\\' continues a line),
    each as its `name` and its fields; a block without a one-word name is skipped."""
    for block in re.sub(r"\\\n\s*", " ", stdout).split("\n\n"):
        fields = dict(line.strip().partition(" ")[::2] for line in block.splitlines()
                      if line.strip())
        name = (fields.get("name") or "").strip()
        if name and " " not in name:
            yield name, fields


def parse_access_lists(stdout: str) -> dict[str, list[str]]:
    """`qconf -su` of each access list (blank-line separated, '\\' continues a line): its
    name -> its entries (user names, `@group` for a Unix group); NONE is none."""
    out: dict[str, list[str]] = {}
    for name, fields in _named_blocks(stdout):
        entries = [e for e in re.split(r"[\s,]+", fields.get("entries", "")) if e]
        out[name] = [] if [e.upper() for e in entries] == ["NONE"] else entries
    return out


def parse_project_acls(stdout: str, lists: dict[str, list[str]]
                       ) -> dict[str, list[UserAcl]]:
    """`qconf -sprj` of each project (blank-line separated): its name -> its `acl` (the
    users who may submit under it) and `xacl` (those who may not) as the access lists'
    entries. A project whose acl names a list not read is left out (not checked)."""
    out: dict[str, list[UserAcl]] = {}
    for name, fields in _named_blocks(stdout):
        acls = _named_lists(fields, lists, ("acl", "xacl"))
        if acls is not None:
            out[name] = acls
    return out


def _named_lists(cfg: dict[str, str], lists: dict[str, list[str]],
                 keys: tuple[str, str]) -> list[UserAcl] | None:
    """The access lists `cfg` names under `keys` (those that take users, those that refuse
    them) as their entries; None where they cannot be told: one set per host
    (`[host=list]`), or a list that takes users not read (its users would be refused
    wrongly; a refusing list not read is left out)."""
    out: list[UserAcl] = []
    for key, deny in zip(keys, (False, True), strict=True):
        value = (cfg.get(key) or "").strip()
        if not value or value.upper() == "NONE":
            continue
        if "[" in value:
            return None
        names = [n for n in re.split(r"[\s,]+", value) if n]
        if not deny and any(n not in lists for n in names):
            return None
        out += [UserAcl(source=f"{key} {n}", users=lists[n], deny=deny)
                for n in names if n in lists]
    return out


def _user_acls(cfg: dict[str, str], lists: dict[str, list[str]] | None
               ) -> list[UserAcl] | None:
    """A queue's user_lists (users it takes) and xuser_lists (users it refuses, which win)
    as the access lists' entries; None where neither is set or they cannot be told (the
    lists not read, or as `_named_lists` says)."""
    if lists is None:
        return None
    return _named_lists(cfg, lists, ("user_lists", "xuser_lists")) or None


def _host_limits(text: str | None, hosts: list[str], groups: dict[str, list[str]]
                 ) -> dict[str, int | None] | None:
    """A queue's time limit on each of its hosts where `qconf -sq` gives some their own
    (`24:00:00,[@short=1:00:00],[dn2=2:00:00]`); None for one limit on every host."""
    if not text or "[" not in text or not hosts:
        return None
    return {h: _limit(host_value(text, h, groups)) for h in hosts}


def _calendars(text: str | None, hosts: list[str], groups: dict[str, list[str]]
               ) -> dict[str, str | None] | None:
    """A queue's calendar on each of its hosts (`NONE,[@night=night]`; None: NONE), where
    some host has one; None where none has."""
    if not text or not hosts or text.strip().upper() == "NONE":
        return None
    out = {h: (None if (c := host_value(text, h, groups).strip()).upper() in ("", "NONE")
               else c) for h in hosts}
    return out if any(out.values()) else None


def _host_names(text: str | None, hosts: list[str], groups: dict[str, list[str]]
                ) -> dict[str, list[str]] | None:
    """A queue's list of names (`projects`, `xprojects`: `NONE`, `p1 p2`, `p1,[@g=p2]`)
    on each of its hosts that has one; None where none has."""
    if not text or text.strip().upper() == "NONE" or not hosts:
        return None
    out = {h: names for h in hosts if (names := [
        x for x in re.split(r"[\s,]+", host_value(text, h, groups)) if x and x.upper() != "NONE"])}
    return out or None


def _limit(text: str | None) -> int | None:
    """A queue's time limit as `qconf -sq` prints it (h_rt, s_rt, notify): seconds, None
    for INFINITY, unset or unreadable."""
    if text is None or text.strip().upper() in ("", "INFINITY"):
        return None
    try:
        return parse_duration(text)
    except ValueError:
        return None

def parse_pe_names(stdout: str) -> list[str]:
    """`qconf -spl`: one parallel environment per line (a name has no blanks: a message
    such as "no parallel environment defined" names none)."""
    return [ln.strip() for ln in stdout.splitlines() if len(ln.split()) == 1]


def parse_pe_rules(stdout: str) -> dict[str, str]:
    """`qconf -sp` of each PE (blank-line separated): its name -> its allocation_rule."""
    out: dict[str, str] = {}
    name = None
    for line in stdout.splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "pe_name":
            name = value.strip() or None
        elif key == "allocation_rule" and name and value.strip():
            out[name] = value.strip()
    return out


def pe_list(value: str) -> list[str]:
    """A queue's `pe_list` ("smp mpi", "make,smp", "NONE", or with host-specific values
    "smp,[node1=mpi smp]"): every PE it names for any of its hosts (none for NONE)."""
    names = re.split(r"[\s,]+", re.sub(r"[\[\]]|[\w.-]+=", " ", value))
    return [x for x in dict.fromkeys(names) if x and x.upper() != "NONE"]


# a line qacct prints: its record separator, or a "key value" line of a record
_QACCT_LINE = re.compile(rf"\s*(?:{QACCT_SEP}|[a-z_]+(?:\s.*)?)\s*")


def _qacct_part(text: str, first_line: int, skipped: list[str] | None) -> str:
    """The text after qstat's XML without the lines qacct does not print (a wrapper's
    note), each said in `skipped` as a message after the XML (else SiteError);
    `first_line`: the output's line number of `text`'s first line."""
    kept = []
    for n, line in enumerate(text.split("\n"), first_line):
        if not line.strip() or _QACCT_LINE.fullmatch(line):
            kept.append(line)
        else:
            unread(skipped, "sge", f"qstat -xml line {n}", "a message after the XML, "
                   "not read", line, message=True)
    return "\n".join(kept)


def _xml(text: str, what: str, skipped: list[str] | None) -> ET.Element:
    """Parsed XML, or a SiteError naming the command (undecodable bytes included); a line
    before the document (a warning) said in `skipped` (else SiteError)."""
    try:
        return ET.fromstring(xml_document("sge", what, text, skipped).strip())
    except (ET.ParseError, ValueError) as exc:
        raise fail("sge", what, str(exc), text) from None


def _sconf(sconf: str, key: str) -> str | None:
    for line in sconf.splitlines():
        k, _, value = line.strip().partition(" ")
        if k == key:
            return value.strip()
    return None


def queue_order(sconf: str) -> Literal["submit", "slots"] | None:
    """From `qconf -ssconf`: "slots" when urgency weighs in (`weight_urgency` above 0, 0.1
    by default: with the `slots` complex's default urgency of 1000 per slot a job asking
    more slots is ahead of smaller ones), "submit" when it does not; None when unknown."""
    w = _sconf(sconf, "weight_urgency")
    try:
        return None if w is None else "slots" if float(w) > 0 else "submit"
    except ValueError:
        return None


def _host_queues(host: ET.Element) -> list[tuple[int, int]]:
    """(slots in use, slots) of each queue instance `qhost -q` lists under the host."""
    out = []
    for q in host.findall("queue"):
        vals = {v.get("name"): (v.text or "").strip() for v in q.findall("queuevalue")}
        out.append((known_count(vals.get("slots_used")) or 0,
                    known_count(vals.get("slots")) or 0))
    return out


def max_user_jobs(sconf: str, key: str = "maxujobs") -> int | None:
    """From `qconf -ssconf`: `maxujobs`, the jobs a user may have running at once in the
    cell (or from `qconf -sconf global`, read with it: `max_u_jobs`, `max_jobs`, the active
    jobs qsub admits of a user, of everyone); None where it is 0 (no limit, the default) or
    not given."""
    n = to_int(_sconf(sconf, key))
    return n if n is not None and n > 0 else None


def scheduler_runs(sconf: str) -> tuple[int | None, int | None]:
    """From `qconf -ssconf`: the longest a job that can start waits for a scheduler run
    after its submit and after another job's end (sched_conf(5): schedule_interval, the
    regular run; flush_submit_sec / flush_finish_sec, not 0, an extra run that long after
    a submit / an end); (None, None) where schedule_interval is not given."""
    every = _limit(_sconf(sconf, "schedule_interval"))
    if every is None:
        return None, None

    def first(key: str) -> int:
        flush = to_int(_sconf(sconf, key))
        return min(flush, every) if flush else every

    return first("flush_submit_sec"), first("flush_finish_sec")


def backfill_policy(sconf: str) -> Literal["easy", "none"] | None:
    """From `qconf -ssconf`: "none" when `max_reservation` is 0 (Grid Engine's default:
    whatever fits starts, past any big job that waits), "easy" when reservations are on
    (jobs that ask with `-R y` hold their start, the highest-priority ones first: taken
    as EASY, since the view does not say which asked); None when the output gives none."""
    n = to_int(_sconf(sconf, "max_reservation"))
    return None if n is None else "easy" if n > 0 else "none"


# GPU complexes a job asks as its own (`-l gpu=N`, read as the job's N GPUs: type JOB)
_GPU_COMPLEXES = ("gpu", "gpus", "ngpus")

_UNITS = {"k": 1000, "K": 1024, "m": 1000**2, "M": 1024**2, "g": 1000**3, "G": 1024**3,
          "t": 1000**4, "T": 1024**4}


def amount(text: str | None) -> float | None:
    """A complex's value as Grid Engine writes it (complex(5)): a number, for a memory
    complex with a multiplier (k, m, g, t: powers of 1000; K, M, G, T: of 1024) in bytes;
    None where it is not one (a string or boolean complex, INFINITY)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([kKmMgGtT]?)\s*", text or "")
    if not m or not_set_mark(m.group(1)):  # 4294967295: Grid Engine's INFINITY as a number
        return None
    return float(m.group(1)) * _UNITS.get(m.group(2), 1)


def parse_complexes(stdout: str) -> dict[str, SgeComplex] | None:
    """`qconf -sc`: the consumable complexes (a line a complex: name, shortcut, type,
    relop, requestable, consumable, default, urgency; `#` lines are headers). Consumable
    YES is taken per slot, JOB once a job, HOST once a host; NO (and a row of another
    shape) is left out. None when the table says nothing (not known)."""
    out: dict[str, SgeComplex] = {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) < 8 or words[0].startswith("#"):
            continue
        per = {"YES": "slot", "JOB": "job", "HOST": "host"}.get(words[5].upper())
        if per is not None:
            out[words[0]] = SgeComplex(name=words[0], shortcut=words[1], per=per,
                                       default=amount(words[6]) or 0.0)
    return out or None


# `qhost -F` dominances of values a complex_values sets: global or host, fixed or consumable
_CONFIGURED = ("gf", "gc", "hf", "hc")


def parse_complex_names(stdout: str) -> dict[str, SgeComplexName] | None:
    """`qconf -sc`: every complex by its full name, with its shortcut and whether a job may
    request it (requestable YES, NO, FORCED: complex(5)); None when the table says nothing
    (not known)."""
    out: dict[str, SgeComplexName] = {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) < 8 or words[0].startswith("#"):
            continue
        asked = words[4].upper()
        out[words[0]] = SgeComplexName(
            name=words[0], shortcut=words[1], type=words[2].upper(),
            requestable=asked if asked in ("NO", "FORCED") else "YES")  # type: ignore[arg-type]
    return out or None


def _taken(asks: dict[str, float], complexes: dict[str, SgeComplex] | None,
           gpus: tuple[str, ...] = _GPU_COMPLEXES) -> list[tuple[str, float, str]]:
    """What a running job takes of each consumable: (complex, amount, "slot" | "job" |
    "host"), a shortcut asked read as its complex, a consumable not asked at its default.
    Without the complexes: every request per slot, a GPU complex once a job (read so)."""
    if complexes is None:
        return [(n, x, "job" if n in gpus else "slot") for n, x in asks.items()]
    by_short = {c.shortcut: c.name for c in complexes.values() if c.shortcut}
    named = {by_short.get(n, n): x for n, x in asks.items()}
    return [(c.name, named.get(c.name, c.default), c.per) for c in complexes.values()
            if named.get(c.name, c.default) > 0]


def _global_consumables(text: str, asked: dict[str, dict[str, float]],
                        by_job: dict[str, dict[str, float]]) -> dict[str, Any]:
    """`qhost -F`'s global host: each global consumable (dominance gc) left now, what the
    cluster has of it (that plus what the running jobs took, on every host) and what each
    running job holds of them."""
    if not text.strip():
        return {}
    glob = next((h for h in _xml(text.strip(), "qhost -xml", []).iter("host")
                 if h.get("name") == "global"), None)
    left = {cx: x for v in (glob.findall("resourcevalue") if glob is not None else ())
            if (v.get("dominance") or "").startswith("gc") and (cx := v.get("name"))
            and (x := amount(v.text)) is not None}
    if not left:
        return {}
    took = {k: sum(h.get(k, 0.0) for h in asked.values()) for k in left}
    held = {jid: got for jid, x in by_job.items()
            if (got := {k: v for k, v in x.items() if k in left and v > 0})}
    return {"global_consumables_left": left,
            "global_consumables_total": {k: x + took[k] for k, x in left.items()},
            "global_consumables_held": held or None}


def parse_hostgroups(stdout: str) -> dict[str, list[str]]:
    """Each host group's hosts: a `group_name @NAME` line, then what `qconf -shgrp_resolved`
    prints (the hosts, blank-separated)."""
    out: dict[str, list[str]] = {}
    name = None
    for line in stdout.splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "group_name":
            name = value.strip() or None
            if name:
                out[name] = []
        elif name and line.strip():
            out[name] += line.split()
    return out


def host_value(value: str, host: str, groups: dict[str, list[str]]) -> str:
    """A queue parameter's value for one of its hosts (queue_conf(5)'s enhanced syntax,
    `default,[@group=value],[host=value]`): the host's own, else its group's, else the
    default."""
    own = {k.strip(): v for k, _, v in (m.partition("=") for m in
                                         re.findall(r"\[([^\]]*)\]", value))}
    default = re.sub(r"\[[^\]]*\]", "", value).strip(" ,")
    if host in own:
        return own[host]
    return next((v for k, v in own.items() if k.startswith("@")
                 and host in groups.get(k, [])), default)


def _queue_consumables(value: str | None, hosts: list[str], groups: dict[str, list[str]],
                       complexes: dict[str, SgeComplex] | None,
                       took: dict[str, dict[str, dict[str, float]]]) -> dict[str, Any]:
    """A queue's consumables (its complex_values, qc:) on each host it has an instance
    on: what the instance has, what is left (less what its running jobs took) and what
    each of them holds. Only the complexes `qconf -sc` says are consumable (without the
    table: none read)."""
    if not value or not complexes or value.strip().upper() == "NONE":
        return {}
    by_short = {c.shortcut: c.name for c in complexes.values() if c.shortcut}
    total: dict[str, dict[str, float]] = {}
    for host in hosts:
        for item in re.split(r"[\s,]+", host_value(value, host, groups)):
            name, _, text = item.partition("=")
            name = by_short.get(name, name)
            if name in complexes and (x := amount(text)) is not None:
                total.setdefault(host, {})[name] = x
    if not total:
        return {}
    left = {h: {k: x - sum(j.get(k, 0.0) for j in took.get(h, {}).values())
                for k, x in have.items()} for h, have in total.items()}
    held = {h: got for h in total if (got := {
        jid: mine for jid, x in took.get(h, {}).items()
        if (mine := {k: v for k, v in x.items() if k in total[h] and v > 0})})}
    return {"queue_consumables": total, "queue_consumables_left": left,
            "queue_consumables_held": held or None}


def _instance_complexes(value: str | None, hosts: list[str], groups: dict[str, list[str]],
                        names: dict[str, SgeComplexName] | None
                        ) -> dict[str, list[str]] | None:
    """The complexes a queue's complex_values sets in its instance on each host, by full
    name (a shortcut read as its complex); None: it sets none."""
    values = _instance_complex_values(value, hosts, groups, names)
    return {h: sorted(v) for h, v in values.items()} if values else None


def _instance_complex_values(value: str | None, hosts: list[str],
                             groups: dict[str, list[str]],
                             names: dict[str, SgeComplexName] | None
                             ) -> dict[str, dict[str, str]] | None:
    """What a queue's complex_values sets in its instance on each host: by host, each
    complex's value as written (`ssd=TRUE` -> {"ssd": "TRUE"}), by full name; None: none."""
    if not value or value.strip().upper() == "NONE":
        return None
    full = {c.shortcut: c.name for c in (names or {}).values() if c.shortcut}
    out = {}
    for host in hosts:
        set_here = {full.get(n, n): v.strip() for item in re.split(
            r"[\s,]+", host_value(value, host, groups))
            for n, _, v in [item.partition("=")] if n and n.upper() != "NONE"}
        if set_here:
            out[host] = set_here
    return out or None


def _queue_gpus(nodes: list[Node], partitions: list[Partition],
                gpus: tuple[str, ...] = _GPU_COMPLEXES) -> list[Node]:
    """A host whose GPUs are a queue consumable alone (`complex_values gpu=4` of its queue
    instances, no hc:gpu): as many as its largest instance has, those its jobs there
    took in use (instances of one host are taken to share its GPUs, not to add up)."""
    out = []
    for n in nodes:
        have = [(x, (p.queue_consumables_left or {}).get(n.name, {}).get(k, x))
                for p in partitions for k, x in (p.queue_consumables or {}).get(n.name, {}).items()
                if k in gpus]
        if n.gpus or not have:
            out.append(n)
            continue
        total = round(max(x for x, _ in have))
        used = round(max(x - left for x, left in have))
        out.append(n.model_copy(update={"gpus": total, "gpus_allocated": min(used, total)}))
    return out


def _hard_amounts(j: ET.Element) -> dict[str, float]:
    """A job's numeric hard requests (`qstat -r`), by complex name, as `amount` reads
    them (its time limits are not consumables: left out)."""
    out = {}
    for req in j.iter("hard_request"):
        name = req.get("name")
        if name and name not in ("h_rt", "s_rt", "h_cpu", "s_cpu") \
                and (x := amount(req.text)) is not None:
            out[name] = x
    return out


def _hard_runtime(j: ET.Element) -> int | None:
    """The job's run-time limit from `qstat -r`'s hard requests (h_rt, else s_rt), seconds."""
    for name in ("h_rt", "s_rt"):
        for req in j.iter("hard_request"):
            if req.get("name") == name:
                try:
                    return parse_duration(req.text)
                except ValueError:
                    return None
    return None


def _category_runtime(category: str | None) -> int | None:
    """The run-time limit (h_rt, else s_rt) in a qacct category ("-l h_rt=900,h_vmem=4G
    -pe smp 3"), seconds; None when it names none or it is not a duration."""
    requests = _category_requests(category)
    for name in ("h_rt", "s_rt"):
        if name in requests:
            try:
                return parse_duration(requests[name])
            except ValueError:
                return None
    return None


def _category_requests(category: str | None) -> dict[str, str]:
    """The `-l` requests of a qacct category ("-l h_rt=900,h_vmem=4G -pe smp 3")."""
    return dict(kv.partition("=")[::2] for m in re.finditer(r"-l\s+(\S+)", category or "")
                for kv in m.group(1).split(","))


def _over_memory(rec: dict[str, str]) -> str | None:
    """What a qacct record says of a job whose peak memory (maxvmem) reached its h_vmem
    limit (per slot, so times its slots): "maxvmem 4.1G, h_vmem 4G"; None otherwise or
    where either is not recorded."""
    limit = _category_requests(rec.get("category")).get("h_vmem")
    limit_mb = memory_mb(limit, default_unit="b")
    peak_mb = memory_mb(rec.get("maxvmem"), default_unit="b")
    slots = known_count(rec.get("slots")) or 1
    if not limit_mb or peak_mb is None or peak_mb < limit_mb * slots:
        return None
    each = f"h_vmem {limit}" + (f" a slot, {slots} slots" if slots > 1 else "")
    return f"maxvmem {clean(rec.get('maxvmem'))}, {each}"


def _past_runtime(rec: dict[str, str]) -> bool:
    """Whether a qacct record's job ran as long as its run-time limit (h_rt, s_rt)."""
    limit = _category_runtime(rec.get("category"))
    ran = to_int((rec.get("ru_wallclock") or "").split(".")[0].rstrip("s"))
    return limit is not None and (ran is None or ran >= limit)


def _speaks_over(a: JobStatus, b: JobStatus) -> bool:
    """Which of two `qacct -j` records of one id speaks for the job: any over a requeued
    run's (the job ran again after it, or waits to), else the worse outcome."""
    if JobState.PENDING in (a.state, b.state):
        return b.state == JobState.PENDING and a.state != JobState.PENDING
    return _worse(a, b)


def _worse(a: JobStatus, b: JobStatus) -> bool:
    """Which of two array-task records speaks for the job: a failure over a success."""
    return outcome_rank(a.state) > outcome_rank(b.state)


sge_commands = SgeCommands()
