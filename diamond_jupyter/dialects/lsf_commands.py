"""IBM Spectrum LSF command lines and output parsers (pure: argv in, models out).

Submission: LSF reads `#BSUB` directives only when the script comes on standard
input (`bsub < script`); `bsub script` would treat it as a plain command. So
`submit_argv()` is just `["bsub"]` (plus `-H` to hold) and `submit_stdin = True`
tells the site layer to feed the script's bytes to that command's stdin.

Status uses `bjobs -o "..." -json -a IDS`. Every field is a string and may be
"" or "-" (PSI/J once crashed on an empty EXIT_CODE): parsers never int() raw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from typing import Any, Literal

from ..digits import ascii_digits
from ..model import (
    BadInput,
    JobState,
    JobStatus,
    LsfLimit,
    LsfSharedInstance,
    Node,
    Partition,
    SiteError,
    SiteSnapshot,
    arch_name,
    utcnow,
)
from .base import AccountingReach
from .dependencies import lsf_dependency
from .lsf_fairshare import with_fair_share
from .lsf_history import CANCEL_REASONS, TIMEOUT_REASONS, parse_bhist, with_memory_ending
from .outputs_common import (
    MOST_SECONDS,
    FailureReading,
    clean,
    fail,
    finite_int,
    job_hosts,
    known_count,
    limit_count,
    load_json,
    memory_mb,
    parse_local_time,
    to_int,
    unread,
    unread_time_note,
    user_filter,
    year_fix,
)

# dependency: the job's `bsub -w` expression (a waiting job's read: `lsf_dependency`)
BJOBS_FIELDS = ("jobid stat user queue job_name exit_code pend_reason submit_time start_time "
                "finish_time esstart_time slots exec_host runtimelimit dependency")
# ssusp/ususp/rsv: the slots of suspended jobs and those LSF reserves for waiting jobs (the
# default columns since bhosts -o began, 10.1.0.2)
BHOSTS_FIELDS = "host_name status max njobs run ssusp ususp rsv"
LSHOSTS_FIELDS = "HOST_NAME type model ncpus maxmem RESOURCES"
BQUEUES_FIELDS = "queue_name status max runlimit"
# a queue's hosts and limits on a job's memory and tasks, asked apart: a release of LSF
# that does not know one of these fields fails only this command (then none is checked)
BQUEUES_LIMIT_FIELDS = "queue_name hosts max_memlimit max_tasklimit min_tasklimit"

# lsb.events files bhist reads back through (the current one and those switched before it:
# mbatchd switches it every MAX_JOB_NUM finished jobs, 1000 by default)
BHIST_LOG_FILES = 10

_STATES = {"PEND": JobState.PENDING, "PSUSP": JobState.PENDING, "WAIT": JobState.PENDING,
           "PROV": JobState.PENDING, "RUN": JobState.RUNNING, "USUSP": JobState.RUNNING,
           "SSUSP": JobState.RUNNING, "DONE": JobState.COMPLETED, "EXIT": JobState.FAILED,
           "ZOMBI": JobState.UNKNOWN, "UNKWN": JobState.UNKNOWN}
# Year-less by default ('Nov 29 17:18'); with LSB_DISPLAY_YEAR or -hms variants too.
TIME_FORMATS = ("%b %d %H:%M:%S %Y", "%b %d %H:%M %Y", "%Y/%m/%d-%H:%M:%S",
                "%Y/%m/%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")


def closed_for_now(status: str) -> bool:
    """Whether a bhosts STATUS (lower case) dispatches no new job now, though the host may
    have free slots: LSF's guide, "a closed host does not accept new batch jobs", whatever
    the reason (an exclusive job, closed_Excl or closed_cu_Excl; its dispatch window,
    closed_Wind; its load, closed_Busy), or none said (a plain `closed`, as bhosts prints
    it without -l). It takes jobs again once that ends; those closed for good (closed_Adm,
    closed_Lock, closed_LIM) are down in node usability."""
    return status == "closed" or status.startswith("closed_")

def _slots_taken(record: dict[str, Any]) -> int:
    """A bhosts record's slots no new job takes: those of its started jobs and those LSF
    reserves there for waiting jobs (RSV), kept for those jobs (only a backfill job that
    ends before theirs start may use them). IBM's docs differ on whether NJOBS counts RSV (its
    bhosts examples add it in; openlava's page does not), so the larger of NJOBS and
    RUN+SSUSP+USUSP+RSV; an output without those fields (an older field list) gives
    NJOBS."""
    parts = sum(known_count(record.get(k)) or 0 for k in ("RUN", "SSUSP", "USUSP", "RSV"))
    return max(known_count(record.get("NJOBS")) or 0, parts)  # (a count below 0: none)


_ELEMENT = re.compile(r"([0-9]+)\[([0-9]+)\]")  # an array element's record: JOBID[INDEX]


# the pending reason of a job its dependency keeps waiting (lsbatch.h PEND_JOB_DEPEND)
_DEPENDENCY_WAIT = "job dependency condition not satisfied"


def array_of(native_id: str) -> str | None:
    """The array an element's record belongs to: '500[3]' -> '500'; None for a plain job
    (bsub answers an array's submit with its array's id, '500')."""
    m = _ELEMENT.fullmatch(native_id)
    return m.group(1) if m else None


def array_tasks(native_id: str) -> int:
    """An element's record stands for one element."""
    return 1


class LsfCommands(FailureReading, AccountingReach):
    """`now` supplies the year for LSF's year-less timestamps (injectable for tests)."""

    name = "lsf"
    submit_stdin = True  # the script goes to bsub's standard input
    # outputs that change with the queue: read with every snapshot (blimits: the use)
    # (bhosts -s: the shared resources jobs reserve now; and what each running job reserves)
    live_outputs = frozenset({"queue", "limits", "arrays", "shared_resources", "job_rusage"})
    array_of = staticmethod(array_of)  # the engine follows an array as one job
    array_tasks = staticmethod(array_tasks)

    def __init__(self, *, tz: tzinfo | None = None,
                 now: Callable[[], datetime] = utcnow) -> None:
        self.tz = tz
        self.now = now

    @staticmethod
    def _ids(native_ids: list[str]) -> list[str]:
        ids = [str(i).strip() for i in native_ids if str(i).strip()]
        if not ids:
            raise BadInput("lsf: no job ids given")
        for i in ids:
            if not re.fullmatch(r"[0-9]+(\[[0-9]+\])?", i):
                raise BadInput(f"lsf: not a job id: {i!r}")
        return ids

    def submit_argv(self, script_path: str, *, hold: bool = False) -> list[str]:
        """`bsub [-H]`; the script (script_path's content) must be sent on stdin."""
        return ["bsub", *(["-H"] if hold else [])]

    def status_argv(self, native_ids: list[str]) -> list[str]:
        return ["bjobs", "-o", BJOBS_FIELDS, "-json", "-a", *self._ids(native_ids)]

    def accounting_argv(self, native_ids: list[str]) -> list[str] | None:
        """`bhist -l` over the last BHIST_LOG_FILES event logs: how a job ended once `bjobs
        -a` forgets it (after CLEAN_PERIOD). bhist fails the whole answer when one job is
        not found, so its status is not read (the ids are checked digits, passed as the
        shell's arguments; bhist is its $0, where the site's configured path goes)."""
        return ["sh", "-c", f'"$0" -l -n {BHIST_LOG_FILES} "$@" 2>/dev/null; exit 0', "bhist",
                *self._ids(native_ids)]

    @property
    def accounting_reach(self) -> str:
        """Where `accounting_argv` looks, as the reason a job it did not find is lost says."""
        return (f"bhist -n {BHIST_LOG_FILES} read the {BHIST_LOG_FILES} newest event log "
                f"files (lsb.events to lsb.events.{BHIST_LOG_FILES - 1}): a job that ended "
                "before them is not there")

    def cancel_argv(self, native_ids: list[str]) -> list[str]:
        return ["bkill", *self._ids(native_ids)]

    def release_argv(self, native_ids: list[str]) -> list[str]:
        return ["bresume", *self._ids(native_ids)]

    def find_by_name_argv(self, name: str, user: str | None = None) -> list[str]:
        """Jobs named `name`: `user`'s (bjobs -u), else the login's (bjobs' default)."""
        if not name:
            raise BadInput("lsf: empty job name")
        mine = ["-u", u] if (u := user_filter("lsf", user)) else []
        return ["bjobs", *mine, "-o", BJOBS_FIELDS, "-json", "-a", "-J", name]

    def snapshot_argvs(self) -> dict[str, list[str]]:
        return {
            "hosts": ["bhosts", "-o", BHOSTS_FIELDS, "-json"],
            "lshosts": ["lshosts", "-o", LSHOSTS_FIELDS, "-json"],
            "queues": ["bqueues", "-o", BQUEUES_FIELDS, "-json"],
            "queue_limits": ["sh", "-c", f"bqueues -o '{BQUEUES_LIMIT_FIELDS}' -json "
                             "2>/dev/null; exit 0"],
            "queue": ["bjobs", "-u", "all", "-o", BJOBS_FIELDS, "-json"],
            # host groups (a queue's HOSTS and `bsub -m` name them) and user groups (its
            # USERS), nested ones expanded; the queues' USERS; who the probe runs as
            "host_groups": ["sh", "-c", "bmgroup -w -r 2>/dev/null; exit 0"],
            "user_groups": ["sh", "-c", "bugroup -w -r 2>/dev/null; exit 0"],
            "queue_users": ["sh", "-c", "bqueues -o 'queue_name users' -json 2>/dev/null; "
                            "exit 0"],
            "user": ["id", "-un"],
            # each queue's JL/U and fair share (bqueues -l), and the lsb.resources limits in
            # use (blimits)
            "queue_long": ["sh", "-c", "bqueues -l 2>/dev/null; exit 0"],
            # host partition fair share (lsb.hosts): each partition's hosts and accounts
            "host_partitions": ["sh", "-c", "bhpart -r 2>/dev/null; exit 0"],
            "limits": ["sh", "-c", "blimits -w 2>/dev/null; exit 0"],
            # each array's spec in full (-w), its `%k` throttle with it: `name[1-100]%5`
            # (each element's own record names only its index)
            "arrays": ["sh", "-c", "bjobs -A -w -u all 2>/dev/null; exit 0"],
            # the resources the site defines (lsinfo -r, cached with the hosts) and its
            # numeric shared ones with each instance's amount and what jobs reserve of it
            # now (bhosts -s, read with every queue): a job's rusage[] names them (licenses)
            "resource_names": ["sh", "-c", "lsinfo -r 2>/dev/null; exit 0"],
            "shared_resources": ["sh", "-c", "bhosts -s 2>/dev/null; exit 0"],
            # what each running job reserves (its effective rusage[]), asked apart: an LSF
            # that does not know the field fails this command only (then it is not read)
            "job_rusage": ["sh", "-c", "bjobs -u all -r -o 'jobid job_name slots "
                           "effective_resreq' -json 2>/dev/null; exit 0"],
        }

    def followup_argvs(self, outputs: dict[str, str]) -> dict[str, list[str]]:
        """Where hosts are closed by an admin or gone, why: `bhosts -l` of those alone (its
        ADMIN ACTION COMMENT, `badmin hclose -C`), as "host_comments"; nothing else."""
        try:
            records = self._records("bhosts -json", outputs.get("hosts", ""), [])
        except SiteError:
            return {}
        held = [name for r in records
                if (clean(r.get("STATUS")) or "").lower() in _COMMENTED_STATES
                and (name := clean(r.get("HOST_NAME")))][:MAX_COMMENTED_HOSTS]
        return {"host_comments": ["sh", "-c", 'bhosts -l "$@" 2>/dev/null; exit 0', "sh",
                                  *held]} if held else {}

    # -- parsers ------------------------------------------------------------
    def parse_submit(self, stdout: str) -> str:
        """'Job <123> is submitted to queue <normal>.' -> '123'."""
        m = re.search(r"Job <([0-9]+)> is submitted", stdout)
        if not m:
            raise fail("lsf", "bsub output", "no 'Job <ID> is submitted'", stdout)
        return m.group(1)

    def _records(self, what: str, stdout: str, skipped: list[str] | None = None
                 ) -> list[dict[str, Any]]:
        """The RECORDS of a `-json` answer; a line before the JSON (a warning) said in
        `skipped` (else SiteError)."""
        if not stdout.strip() or re.match(r"\s*No (\w+ )?(job|host|queue)", stdout):
            return []
        data = load_json("lsf", what, stdout, skipped=skipped)
        recs = data.get("RECORDS") if isinstance(data, dict) else None
        if not isinstance(recs, list):
            raise fail("lsf", what, "no RECORDS list", stdout)
        return [r for r in recs if isinstance(r, dict)]

    def _time(self, value: Any) -> datetime | None:
        s = clean(value)
        if s is None:
            return None
        if len(s) >= 2 and "A" <= s[-1] <= "Z" and s[-2].isspace():
            s = s[:-1].rstrip()  # trailing flag letter: E (estimated), L, X
        if re.search(r"[0-9]{4}", s):
            return parse_local_time(s, self.tz, TIME_FORMATS)
        now = self.now()
        dt = parse_local_time(f"{s} {now.year}", self.tz, TIME_FORMATS)
        return year_fix(dt, now) if dt else None

    def parse_status(self, stdout: str, skipped: list[str] | None = None
                     ) -> list[JobStatus]:
        """`bjobs -o BJOBS_FIELDS -json`. An array's element is listed under its array's
        JOBID (unless LSB_BJOBS_DISPLAY_ENH puts its index there) with the name `NAME[i]`:
        its record is `JOBID[i]`, for the engine to fold into the array (`array_of`).
        `skipped`: where to say a record without JOBID, left out (else SiteError)."""
        out = []
        for n, r in enumerate(self._records("bjobs -json", stdout, skipped), 1):
            r = {k.upper(): v for k, v in r.items()}
            if "ERROR" in r and not clean(r.get("STAT")):
                continue  # e.g. "Job <999> is not found": the job is gone
            jid = clean(r.get("JOBID"))
            if jid is None:
                unread(skipped, "lsf", f"bjobs -json record {n}", "no JOBID", str(r))
                continue
            element = re.search(r"\[([0-9]+)\]$", clean(r.get("JOB_NAME")) or "")
            if element and ascii_digits(jid):
                jid = f"{jid}[{element.group(1)}]"
            stat = (clean(r.get("STAT")) or "").upper()
            state = _STATES.get(stat, JobState.UNKNOWN)
            exit_code = to_int(r.get("EXIT_CODE"))
            reason = clean(r.get("PEND_REASON")) or clean(r.get("EXIT_REASON"))
            if stat == "DONE":
                exit_code = 0
            elif stat == "EXIT":
                exit_reason = clean(r.get("EXIT_REASON")) or ""
                if exit_reason.startswith(CANCEL_REASONS):
                    state = JobState.CANCELLED
                elif exit_reason.startswith(TIMEOUT_REASONS):
                    # its run limit, or the termination time `bsub -t` set (Slurm's DEADLINE)
                    state = JobState.TIMEOUT
                else:
                    reason = with_memory_ending(reason)
            elif stat == "PSUSP":
                reason = reason or "held (PSUSP)"
            hosts = clean(r.get("EXEC_HOST"))
            limit = clean(r.get("RUNTIMELIMIT"))
            note = unread_time_note("run limit", limit)
            out.append(JobStatus(
                native_id=jid, state=state, native_state=stat or None,
                name=clean(r.get("JOB_NAME")), user=clean(r.get("USER")),
                partition=clean(r.get("QUEUE")), cpus=known_count(r.get("SLOTS")),
                nodes=len(job_hosts(hosts)) if hosts else None,  # `4*a:2*b`, `a:a:b`
                walltime_s=_runlimit(limit),
                submitted_at=self._time(r.get("SUBMIT_TIME")),
                # a requeued job waits again: its last run's start is not this one's
                started_at=self._time(r.get("START_TIME"))
                if state != JobState.PENDING else None,
                ended_at=self._time(r.get("FINISH_TIME")) if state.terminal else None,
                # `esstart_time` is the alias of estimated_sim_start_time (the JSON key
                # of an alias asked is not documented: either read)
                estimated_start=self._time(r.get("ESSTART_TIME")
                                           or r.get("ESTIMATED_SIM_START_TIME"))
                if state == JobState.PENDING else None,
                exit_code=exit_code if state.terminal else None,
                reason=f"{reason.rstrip('; ')}; {note}" if reason and note else reason or note,
                node_list=hosts,
                # read only where its dependency alone keeps it waiting
                dependency=lsf_dependency(clean(r.get("DEPENDENCY")))
                if state == JobState.PENDING and stat == "PEND"
                and (reason or "").strip().rstrip(";").lower() == _DEPENDENCY_WAIT else None,
            ))
        return out

    def parse_accounting(self, stdout: str, skipped: list[str] | None = None
                         ) -> list[JobStatus]:
        """`bhist -l` (see `accounting_argv`); `skipped` as in `parse_bhist`."""
        return parse_bhist(stdout, self._time, skipped)

    def parse_hosts(self, bhosts: str, lshosts: str = "", skipped: list[str] | None = None
                    ) -> list[Node]:
        """`bhosts -o ... -json` joined with `lshosts -o ... -json` by host name;
        `skipped`: where to say a bhosts record without HOST_NAME, left out (else
        SiteError)."""
        static = {}
        for r in self._records("lshosts -json", lshosts, skipped):
            r = {k.upper(): v for k, v in r.items()}
            static[r.get("HOST_NAME")] = r
        out = []
        for n, r in enumerate(self._records("bhosts -json", bhosts, skipped), 1):
            r = {k.upper(): v for k, v in r.items()}
            name = clean(r.get("HOST_NAME"))
            if name is None:
                unread(skipped, "lsf", f"bhosts -json record {n}", "no HOST_NAME", str(r))
                continue
            s = static.get(name, {})
            res = clean(s.get("RESOURCES")) or ""
            ngpus = known_count(s.get("NGPUS")) or known_count(s.get("MAXGPU")) or 0
            htype = clean(s.get("TYPE"))
            status = (clean(r.get("STATUS")) or "unknown").lower()
            cpus = known_count(r.get("MAX")) or known_count(s.get("NCPUS")) or 0
            out.append(Node(
                name=name, state=status, cpus=cpus,
                # a host closed to new jobs for now has no slot free, whatever NJOBS says
                cpus_allocated=cpus if closed_for_now(status) else _slots_taken(r),
                memory_mb=memory_mb(s.get("MAXMEM")) or 0, gpus=ngpus,
                features=[f for f in re.split(r"[\s()]+", res) if f],
                architecture=_arch(htype) or _arch(clean(s.get("MODEL"))),
                host_model=clean(s.get("MODEL")),
            ))
        return out

    def parse_queues(self, stdout: str, limits: str = "", users: str = "",
                     groups: dict[str, list[str]] | None = None,
                     hosts: list[str] | None = None, skipped: list[str] | None = None
                     ) -> list[Partition]:
        """`bqueues -o ... -json`, with each queue's hosts and limits from `limits` (the
        same command asked for HOSTS, MAX_MEMLIMIT, MAX/MIN_TASKLIMIT) where given, its
        USERS from `users`; host groups in HOSTS expanded by `groups` (`bmgroup`) over the
        site's `hosts`. `skipped`: where to say a record without QUEUE_NAME, left out (else
        SiteError)."""
        extra: dict[str, dict[str, Any]] = {}
        for text in (limits, users):
            if text.strip():
                for r in self._records("bqueues -json", text):
                    r = {k.upper(): v for k, v in r.items()}
                    extra.setdefault(str(r.get("QUEUE_NAME")), {}).update(r)
        out = []
        for n, r in enumerate(self._records("bqueues -json", stdout, skipped), 1):
            r = {k.upper(): v for k, v in r.items()}
            status = clean(r.get("STATUS")) or ""
            name = clean(r.get("QUEUE_NAME"))
            if name is None:  # before: a queue named "None"
                unread(skipped, "lsf", f"bqueues -json record {n}", "no QUEUE_NAME", str(r))
                continue
            x = extra.get(name, {})
            # Open:Active takes and dispatches jobs; Closed:* refuses new ones (bsub says
            # the queue is closed); Open:Inact* takes them but dispatches none until it is
            # activated (by its run window or an administrator)
            opened, _, active = status.partition(":")
            state = "CLOSED" if opened.lower() == "closed" else \
                "UP" if active.lower() == "active" else "INACTIVE" if active else "DOWN"
            out.append(Partition(
                name=name, state=state,
                max_time_s=_runlimit(clean(r.get("RUNLIMIT"))),
                total_cpus=known_count(r.get("MAX")) or 0,
                nodes=_queue_hosts(clean(x.get("HOSTS")), groups, hosts),
                allowed_users=_queue_users(clean(x.get("USERS"))),
                # MEMLIMIT: a process above it is killed (KB unless a unit is given)
                max_mem_per_process_mb=memory_mb(x.get("MAX_MEMLIMIT")
                                                 or x.get("MEMLIMIT"), default_unit="k"),
                max_cpus=_task_limit(x.get("MAX_TASKLIMIT") or x.get("TASKLIMIT")),
                min_cpus=_task_limit(x.get("MIN_TASKLIMIT")),
            ))
        return out

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot:
        skipped: list[str] = []
        nodes = self.parse_hosts(outputs.get("hosts", ""), outputs.get("lshosts", ""), skipped)
        if comments := parse_host_comments(outputs.get("host_comments", "")):
            nodes = [n.model_copy(update={"reason": comments[n.name]}) if n.name in comments
                     else n for n in nodes]
        hgroups = parse_groups(outputs.get("host_groups", ""))
        user = (outputs.get("user") or "").strip()
        per_user = parse_jl_u(outputs.get("queue_long", ""))
        per_host = parse_jl_u(outputs.get("queue_long", ""), "JL/H")
        per_cpu = parse_jl_p(outputs.get("queue_long", ""))
        tasks = parse_task_limits(outputs.get("queue_long", ""))
        defaults = parse_task_defaults(outputs.get("queue_long", ""))
        selects = parse_queue_selects(outputs.get("queue_long", ""))
        res_req = parse_queue_res_req(outputs.get("queue_long", ""))
        parts = [p.model_copy(update={"max_slots_per_user": per_user.get(p.name),
                                      "max_slots_per_host": per_host.get(p.name),
                                      "max_slots_per_processor": per_cpu.get(p.name),
                                      # `bqueues -o` where it answered, else `-l`
                                      "min_cpus": p.min_cpus if p.min_cpus is not None
                                      else tasks.get(p.name, (None, None))[0],
                                      "max_cpus": p.max_cpus if p.max_cpus is not None
                                      else tasks.get(p.name, (None, None))[1],
                                      # a job without -n: the default, else the minimum
                                      "default_tasks": defaults.get(p.name) or p.min_cpus
                                      or tasks.get(p.name, (None, None))[0],
                                      "res_req_select": selects.get(p.name),
                                      "res_req_mem_mb": queue_rusage_mem_mb(
                                          res_req.get(p.name, {}).get("rusage")),
                                      "res_req_span": _queue_span(
                                          res_req.get(p.name, {}).get("span")),
                                      "res_req_unchecked": [
                                          k + v for k, v in res_req.get(p.name, {}).items()
                                          if k in UNCHECKED_SECTIONS] or None})
                 for p in self.parse_queues(outputs.get("queues", ""),
                                            outputs.get("queue_limits", ""),
                                            outputs.get("queue_users", ""), hgroups,
                                            [n.name for n in nodes], skipped)]
        parts = self._window_opens(parts, outputs.get("queue_long", ""))
        parts = with_fair_share(parts, outputs.get("queue_long", ""),
                                outputs.get("host_partitions", ""), hgroups,
                                [n.name for n in nodes])
        return SiteSnapshot(
            site=site, nodes=nodes,
            partitions=parts,
            lsf_limits=parse_blimits(outputs["limits"]) if "limits" in outputs else None,
            jobs=with_shared_use(
                with_array_limits(self.parse_status(outputs.get("queue", ""), skipped),
                                  parse_array_limits(outputs.get("arrays", ""))),
                parse_job_rusage(outputs.get("job_rusage", ""))),
            host_groups=hgroups, user_groups=parse_groups(outputs.get("user_groups", "")),
            lsf_resource_names=parse_resource_names(outputs.get("resource_names", "")),
            lsf_shared=parse_shared_resources(outputs.get("shared_resources", "")),
            lsf_shared_now=parse_shared_instances(outputs.get("shared_resources", "")),
            user=user if re.fullmatch(r"[\w.-]+", user) else None,
            warnings=[f"{site}: {w}" for w in skipped],
        )


    def _window_opens(self, parts: list[Partition], queue_long: str) -> list[Partition]:
        """The queues inactive outside their run or dispatch windows (`Open:Inact_Win` in
        `bqueues -l`) with the time those next open (the windows in the cluster's time)."""
        status = _jl_column(queue_long, "STATUS")
        windows = parse_queue_windows(queue_long)
        now = self.now()
        local = now.astimezone(self.tz) if self.tz is not None else now.astimezone()
        return [p.model_copy(update={"opens_at": at}) if p.state == "INACTIVE"
                and status.get(p.name, "").lower().endswith("inact_win")
                and (at := next_window_open(windows.get(p.name, []), local)) is not None
                else p for p in parts]


_ARRAY_SPEC = re.compile(r"\S*\[[^\[\]]*\]%([0-9]+)")  # `name[1-100:2,200]%5`


def parse_array_limits(stdout: str) -> dict[str, int]:
    """`bjobs -A -w`: each job array's `%k` (at most k of its elements run at once) by its
    JOBID, from the ARRAY_SPEC column (`JOBID ARRAY_SPEC OWNER NJOBS PEND DONE RUN EXIT
    SSUSP USUSP PSUSP`); an array without one is left out."""
    out: dict[str, int] = {}
    for line in stdout.splitlines():
        cols = line.split()
        if len(cols) >= 2 and ascii_digits(cols[0]) and (m := _ARRAY_SPEC.fullmatch(cols[1])) \
                and int(m.group(1)) > 0:
            out[cols[0]] = int(m.group(1))
    return out


def with_array_limits(jobs: list[JobStatus], limits: dict[str, int]) -> list[JobStatus]:
    """Each array element's record (`500[7]`) with its array's throttle (`array_limit`)."""
    if not limits:
        return jobs
    return [j.model_copy(update={"array_limit": limits[a]})
            if (a := array_of(j.native_id)) in limits else j for j in jobs]


def parse_jl_u(stdout: str, column: str = "JL/U") -> dict[str, int]:
    """`bqueues -l`: each queue's JL/U (job slots a user may hold running in it; `column`
    "JL/H": the slots its jobs may hold on one host, HJOB_LIMIT) from the
    PARAMETERS/STATISTICS table under its `QUEUE: NAME` line; `-` (none) is left out."""
    return {q: n for q, v in _jl_column(stdout, column).items()
            if ascii_digits(v) and (n := limit_count(v)) is not None}


def parse_queue_selects(stdout: str) -> dict[str, str]:
    """`bqueues -l`: the select[] section of each queue's `RES_REQ:` line, as written
    (`select[model==EPYC && ngpus>0]`); a queue whose RES_REQ has none is left out."""
    return {q: f"select{x['select']}" for q, x in parse_queue_res_req(stdout).items()
            if "select" in x}


def parse_queue_windows(stdout: str) -> dict[str, list[list[str]]]:
    """`bqueues -l`: each queue's time windows, one list a kind (RUN_WINDOWS and
    DISPATCH_WINDOW: it dispatches while every kind it has is open), each window
    `[day:]hour[:minute]-[day:]hour[:minute]` as written (`(22:00-06:00 )` unwrapped)."""
    out: dict[str, list[list[str]]] = {}
    queue = None
    for line in stdout.splitlines():
        if m := re.match(r"QUEUE:\s*(\S+)", line):
            queue = m.group(1)
        elif queue and (m := re.match(r"\s*(?:RUN|DISPATCH)_WINDOWS?:\s*(.*)$", line)):
            found = re.findall(r"[0-9:]+-[0-9:]+", m.group(1))
            if found:
                out.setdefault(queue, []).append(found)
    return out


def _window_minutes(text: str) -> list[tuple[int, int]]:
    """One window as (start, end) minutes of the week (Sunday 00:00 = 0; LSF's day 0 is
    Sunday), a window without days once for each day; [] when it does not read."""
    def point(side: str) -> tuple[int | None, int] | None:
        parts = side.split(":")
        if not all(ascii_digits(x) for x in parts) or not 1 <= len(parts) <= 3:
            return None
        day = int(parts[0]) if len(parts) == 3 else None
        hour, minute = (int(parts[-2]), int(parts[-1])) if len(parts) >= 2 \
            else (int(parts[0]), 0)
        if (day is not None and day > 6) or hour > 23 or minute > 59:
            return None
        return day, hour * 60 + minute
    start_text, _, end_text = text.partition("-")
    a, b = point(start_text), point(end_text)
    if a is None or b is None or (a[0] is None) != (b[0] is None):
        return []
    if a[0] is None:  # every day
        return [(d * 1440 + a[1], d * 1440 + b[1] + (1440 if b[1] <= a[1] else 0))
                for d in range(7)]
    start, end = a[0] * 1440 + a[1], (b[0] or 0) * 1440 + b[1]
    return [(start, end if end > start else end + 7 * 1440)]


def next_window_open(windows: list[list[str]], local: datetime) -> datetime | None:
    """When a queue whose windows are `windows` (`parse_queue_windows`) next dispatches,
    from `local` (the cluster's time): now when every kind is open, else the first window
    start at which each is; None when a window does not read or none ever opens."""
    week = 7 * 1440
    read = [[_window_minutes(text) for text in kind] for kind in windows]
    if not read or any(not w for kind in read for w in kind):
        return None
    kinds = [[w for one in kind for w in one] for kind in read]
    now_min = ((local.weekday() + 1) % 7) * 1440 + local.hour * 60 + local.minute

    def is_open(t: int) -> bool:
        return all(any(s <= t % week + k < e for s, e in kind for k in (0, week))
                   for kind in kinds)
    starts = sorted({s % week + k for kind in kinds for s, _ in kind for k in (0, week)
                     if s % week + k >= now_min})
    for t in [now_min, *starts]:
        if is_open(t):
            return local if t == now_min else (local.replace(second=0, microsecond=0)
                                               + timedelta(minutes=t - now_min))
    return None


def parse_resource_names(stdout: str) -> list[str] | None:
    """`lsinfo -r`: the names of the resources the site defines (its first column under
    `RESOURCE_NAME`, up to the next table); None when it did not answer so."""
    names: list[str] | None = None
    for line in stdout.splitlines():
        words = line.split()
        if words[:1] == ["RESOURCE_NAME"]:
            names = []
        elif names is not None and (not words or words[0] in ("TYPE_NAME", "MODEL_NAME")):
            break
        elif names is not None and re.fullmatch(r"[A-Za-z_][\w.-]*", words[0]):
            names.append(words[0])
    return names


def parse_shared_resources(stdout: str) -> dict[str, float] | None:
    """`bhosts -s` (RESOURCE TOTAL RESERVED LOCATION): each numeric shared resource's
    TOTAL (the amount for scheduling, what jobs reserve included), the largest of its
    instances (one a line, each shared by the hosts LOCATION names; a job takes from one);
    lines naming only more hosts of a LOCATION, or a TOTAL of `-`, add nothing. {}: none
    defined ("No resource"); None when it did not answer so."""
    out: dict[str, float] | None = None
    for line in stdout.splitlines():
        words = line.split()
        if words[:2] == ["RESOURCE", "TOTAL"]:
            out = {}
        elif out is None and re.match(r"\s*No (shared )?resources?\b", line, re.I):
            return {}
        elif out is not None and len(words) >= 3 \
                and re.fullmatch(r"[0-9]+(\.[0-9]+)?", words[1]) \
                and re.fullmatch(r"-|[0-9]+(\.[0-9]+)?", words[2]):
            out[words[0]] = max(out.get(words[0], 0.0), float(words[1]))
    return out


def parse_shared_instances(stdout: str) -> dict[str, list[LsfSharedInstance]] | None:
    """`bhosts -s` (RESOURCE TOTAL RESERVED LOCATION; bhosts(1): TOTAL is the amount used
    for scheduling, what jobs reserve included; RESERVED what jobs reserve): each numeric
    shared resource's instances, one a line, a line of hosts only continuing the last
    one's LOCATION; a TOTAL of `-` (no value now) is left out. {}: none defined; None when
    it did not answer so."""
    out: dict[str, list[LsfSharedInstance]] | None = None
    last: LsfSharedInstance | None = None
    for line in stdout.splitlines():
        words = line.split()
        if words[:2] == ["RESOURCE", "TOTAL"]:
            out, last = {}, None
        elif out is None and re.match(r"\s*No (shared )?resources?\b", line, re.I):
            return {}
        elif out is not None and len(words) >= 3 \
                and re.fullmatch(r"[0-9]+(\.[0-9]+)?", words[1]) \
                and re.fullmatch(r"-|[0-9]+(\.[0-9]+)?", words[2]):
            last = LsfSharedInstance(total=float(words[1]), hosts=words[3:],
                                     reserved=0.0 if words[2] == "-" else float(words[2]))
            out.setdefault(words[0], []).append(last)
        elif out is not None and words and line[:1].isspace() and last is not None:
            last.hosts += words  # more hosts of the last instance's LOCATION
        elif out is not None and words:
            last = None  # a line of another shape (`-` TOTAL): its hosts are not the last's
    return out


# rusage[] keywords that are no resource (a reservation's length and its decay)
_RUSAGE_KEYWORDS = frozenset(("duration", "decay"))


def parse_job_rusage(stdout: str) -> dict[str, dict[str, float]] | None:
    """`bjobs -r -o 'jobid job_name slots effective_resreq' -json`: each running job's
    numeric rusage[] entries, name -> amount for the job (`/task`: times its slots), by the
    job's record id (an array element's `JOBID[i]`, as `parse_status` names it); a job
    whose usage holds alternatives (`||`, which one it holds is not said) is left out.
    None when it did not answer so (an LSF without the field, or no JSON)."""
    if not stdout.strip():
        return None
    if re.match(r"\s*No \w+ job", stdout):
        return {}
    try:
        data = json.loads(stdout)
    except ValueError:
        return None
    recs = data.get("RECORDS") if isinstance(data, dict) else None
    if not isinstance(recs, list):
        return None
    out: dict[str, dict[str, float]] = {}
    for r in recs:
        if not isinstance(r, dict):
            continue
        r = {str(k).upper(): v for k, v in r.items()}
        jid, resreq = clean(r.get("JOBID")), clean(r.get("EFFECTIVE_RESREQ")) or ""
        if jid is None or "||" in resreq:
            continue
        element = re.search(r"\[([0-9]+)\]$", clean(r.get("JOB_NAME")) or "")
        if element and ascii_digits(jid):
            jid = f"{jid}[{element.group(1)}]"
        slots = known_count(r.get("SLOTS")) or 1
        use: dict[str, float] = {}
        for section in re.findall(r"rusage\[([^\]]*)\]", resreq):
            for part in re.split(r"[,:]", section):
                name, eq, value = part.strip().partition("=")
                m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*(?:/(task|host))?", value.strip())
                if eq and m and name not in _RUSAGE_KEYWORDS:
                    amount = float(m.group(1)) * (slots if m.group(2) == "task" else 1)
                    use[name] = use.get(name, 0.0) + amount
        out[jid] = use
    return out


def with_shared_use(jobs: list[JobStatus], use: dict[str, dict[str, float]] | None
                    ) -> list[JobStatus]:
    """The running `jobs` with what each reserves of the site's resources (`use`, by job;
    a running job it does not list, or a `use` not read, stays None: not known)."""
    if use is None:
        return jobs
    return [j.model_copy(update={"shared_use": use[j.native_id]})
            if j.state == JobState.RUNNING and j.native_id in use else j for j in jobs]


# RES_REQ sections placement does not model (lsb.queues(5), bsub -R): kept for bsub, said
UNCHECKED_SECTIONS = ("same", "order", "cu")


def parse_queue_res_req(stdout: str) -> dict[str, dict[str, str]]:
    """`bqueues -l`: each queue's `RES_REQ:` sections by name (select, rusage, span, ...),
    each with its brackets as written (`{"rusage": "[mem=1000]"}`)."""
    out: dict[str, dict[str, str]] = {}
    queue = None
    for line in stdout.splitlines():
        if m := re.match(r"QUEUE:\s*(\S+)", line):
            queue = m.group(1)
        elif queue and (m := re.match(r"\s*RES_REQ:\s*(.*)$", line)):
            text, sections, i = m.group(1), {}, 0
            while (w := re.compile(r"([a-z]+)\[").search(text, i)) is not None:
                depth, end = 0, -1
                for j in range(w.end() - 1, len(text)):
                    depth += {"[": 1, "]": -1}.get(text[j], 0)
                    if depth == 0:
                        end = j
                        break
                if end < 0:
                    break
                sections.setdefault(w.group(1), text[w.end() - 1:end + 1])
                i = end + 1
            if sections:
                out[queue] = sections
    return out


def _queue_span(span: str | None) -> str | None:
    """A queue RES_REQ's `span[hosts=1]` or `span[ptile=N]` as `hosts=1`/`ptile=N`; None
    for none or another form (ptile by host type, `hosts=-1`)."""
    body = (span or "")[1:-1].strip()
    return body if re.fullmatch(r"hosts=1|ptile=[1-9][0-9]*", body) else None


def queue_rusage_mem_mb(rusage: str | None) -> int | None:
    """A queue RES_REQ's `rusage[mem=N]` (MB unless a unit is given; per slot, as a
    job's), None where it asks no memory or in a form not read (multi-phase, `||`)."""
    m = re.search(r"(?:^\[|[,:\s])mem=([0-9.]+[KMGTkmgt]?[Bb]?)(?=[\]:,/\s])", rusage or "")
    return memory_mb(m.group(1)) if m else None


def parse_jl_p(stdout: str) -> dict[str, float]:
    """`bqueues -l`: each queue's JL/P (PJOB_LIMIT: the slots its jobs may hold per
    processor of a host; a fraction, as `0.5`, is allowed); `-` (none) is left out."""
    out: dict[str, float] = {}
    for queue, value in _jl_column(stdout, "JL/P").items():
        if re.fullmatch(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+", value) and float(value) > 0:
            out[queue] = float(value)
    return out


def parse_task_limits(stdout: str) -> dict[str, tuple[int | None, int | None]]:
    """`bqueues -l`: each queue's task limit, (minimum, maximum) tasks a job may ask (see
    `parse_task_sections`)."""
    return {q: (lo, hi) for q, (lo, _, hi) in parse_task_sections(stdout).items()}


def parse_task_defaults(stdout: str) -> dict[str, int]:
    """`bqueues -l`: the tasks a job that gives no `-n` gets in each queue with a task
    limit: its default (the middle of three numbers; of two, the minimum; of one, 1)."""
    return {q: d for q, (_, d, _) in parse_task_sections(stdout).items()}


def parse_task_sections(stdout: str) -> dict[str, tuple[int | None, int, int]]:
    """`bqueues -l`: each queue's task limit, (minimum, default, maximum) tasks, from
    its `TASKLIMIT` section (`PROCLIMIT` before LSF 9.1.3: the same limit in processors),
    the line under the title holding lsb.queues' `[minimum [default]] maximum`: one
    number is the maximum (the minimum is 1), two the minimum and the maximum, three the
    minimum, the default and the maximum. A section whose numbers are not 1-3 whole
    numbers of at least 1, rising, is left out (not read as a limit)."""
    out: dict[str, tuple[int | None, int, int]] = {}
    queue, title = None, False
    for line in stdout.splitlines():
        m = re.match(r"QUEUE:\s*(\S+)", line)
        if m:
            queue, title = m.group(1), False
            continue
        words = line.split()
        if words in (["TASKLIMIT"], ["PROCLIMIT"]):
            title = True
            continue
        if title and words:
            title = False
            # the numbers, then perhaps a unit word ("8 processors", "2 4 8 tasks")
            nums = words[:-1] if words[-1].isalpha() and len(words) > 1 else words
            if queue is None or not 1 <= len(nums) <= 3 or not all(
                    ascii_digits(x) for x in nums):
                continue
            vals = [int(x) for x in nums]
            if vals[0] < 1 or vals != sorted(vals):
                continue
            out[queue] = (vals[0] if len(vals) > 1 else None,
                          vals[1] if len(vals) == 3 else vals[0] if len(vals) == 2 else 1,
                          vals[-1])
    return out


def _jl_column(stdout: str, column: str) -> dict[str, str]:
    """One column of each queue's PARAMETERS/STATISTICS table in `bqueues -l`, as written."""
    out: dict[str, str] = {}
    queue, header = None, None
    for line in stdout.splitlines():
        m = re.match(r"QUEUE:\s*(\S+)", line)
        if m:
            queue, header = m.group(1), None
            continue
        words = line.split()
        if "JL/U" in words:
            header = words
            continue
        if queue and header and len(words) == len(header) and column in header:
            out[queue] = words[header.index(column)]
            header = None
    return out


_BLIMIT_RESOURCES: dict[str, Literal["slots", "jobs", "mem"]] = {
    "SLOTS": "slots", "JOBS": "jobs", "MEM": "mem"}


def parse_blimits(stdout: str) -> list[LsfLimit]:
    """`blimits -w`: a header (NAME USERS QUEUES HOSTS PROJECTS SLOTS MEM ... JOBS), then
    a row a limit and consumer; `used/most` in a resource's column ("-": not limited).
    Rows of another shape are skipped."""
    out: list[LsfLimit] = []
    header: list[str] | None = None
    for line in stdout.splitlines():
        words = line.split()
        if words[:1] == ["NAME"]:
            header = words
            continue
        if header is None or len(words) != len(header):
            continue
        row = dict(zip(header, words, strict=True))
        for column, resource in _BLIMIT_RESOURCES.items():
            used, slash, most = row.get(column, "-").partition("/")
            # MEM as LSF_UNIT_FOR_LIMITS prints it: MB bare, else with its unit (`40G/64G`)
            amounts = [memory_mb(x) if resource == "mem" else
                       (known_count(x) if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", x) else None)
                       for x in (used, most)]
            if slash and None not in amounts:
                out.append(LsfLimit(
                    name=row["NAME"], users=_consumers(row, "USERS"),
                    queues=_consumers(row, "QUEUES"), hosts=_consumers(row, "HOSTS"),
                    projects=_consumers(row, "PROJECTS"),
                    resource=resource, used=amounts[0], limit=amounts[1]))
    return out


def _consumers(row: dict[str, str], column: str) -> list[str] | None:
    """A blimits consumer column: its names; None for any (`-`, `all`)."""
    text = row.get(column, "-").strip("{}")
    got = [x for x in re.split(r"[,\s]+", text) if x and x != "-"]
    return None if not got or "all" in got else got


def parse_groups(stdout: str) -> dict[str, list[str]] | None:
    """`bmgroup -w -r` / `bugroup -w -r`: a header (GROUP_NAME HOSTS|USERS), then one group
    a line, its members after its name (a nested group `name/` is expanded here too, `all`
    kept); None when the command said nothing (groups not known), as when it printed no
    header (a message only)."""
    out: dict[str, list[str]] = {}
    header = False  # a line before the header is a message ("No such user/host group")
    for line in stdout.splitlines():
        words = line.replace("(", " ").replace(")", " ").split()
        if words[:1] == ["GROUP_NAME"]:
            header = True
        elif header and len(words) >= 2 and re.fullmatch(r"[\w.-]+", words[0]):
            out[words[0]] = words[1:]

    def expand(name: str, seen: frozenset[str]) -> list[str]:
        members: list[str] = []
        for m in out.get(name, []):
            inner = m.rstrip("/")
            if m.endswith("/") and inner in out and inner not in seen:
                members += expand(inner, seen | {inner})
            else:
                members.append(m)
        return list(dict.fromkeys(members))

    return {g: expand(g, frozenset({g})) for g in out} or None


def expand_hosts(names: list[str], groups: dict[str, list[str]] | None,
                 hosts: list[str] | None) -> list[str] | None:
    """LSF host names, host groups (`grp` or `grp/`), `all` / `others` (every host) and
    `~name` exclusions as the hosts they mean, in the site's order; None when that cannot
    be told (a group not known, every host where the hosts are not known)."""
    take: list[str] = []
    drop: set[str] = set()
    for raw in names:
        h = re.sub(r"\+[0-9]+$", "", raw)  # `host+2`: a preference, not a limit
        out, h = (drop, h[1:]) if h.startswith("~") else (None, h)
        if h in ("all", "others", "allremote") or "@" in h:
            if hosts is None or h != "all" and h != "others":
                return None
            got = list(hosts)
        elif groups is not None and h.rstrip("/") in groups:
            got = expand_hosts(groups[h.rstrip("/")], groups, hosts) or []
        elif h.endswith("/"):
            return None  # a group not known
        else:
            got = [h]
        if out is None:
            take += got
        else:
            drop.update(got)
    kept = [h for h in dict.fromkeys(take or (hosts or [])) if h not in drop]
    return kept


def _queue_hosts(text: str | None, groups: dict[str, list[str]] | None = None,
                 hosts: list[str] | None = None) -> list[str]:
    """A queue's HOSTS: its host names, host groups expanded; none (every host) for `all`
    or `others`, and where a host group or another cluster's hosts cannot be told."""
    names = (text or "").split()
    if not names or names == ["-"] or names == ["all"]:
        return []
    got = expand_hosts(names, groups, hosts)
    if not got or hosts is not None and set(got) >= set(hosts):
        return []
    return got


def _queue_users(text: str | None) -> list[str] | None:
    """A queue's USERS: the users and groups (`grp/`) it takes, `~name` excluded; None
    for everyone (`all` alone, or not said)."""
    names = (text or "").split()
    return None if not names or names in (["all"], ["-"]) else names


def _task_limit(value: Any) -> int | None:
    """A queue's TASKLIMIT field: a number, or '-' for none."""
    return limit_count(value) or None


def _runlimit(text: str | None) -> int | None:
    """'720.0 min' / '720.0' (minutes) / '12:00' (HH:MM) / '-' -> seconds."""
    if text is None or not text.isascii():  # '٧٢٠.0 min': not read (said in the reason)
        return None
    m = re.match(r"([0-9.]+)\s*(min|s|h)?", text)
    if ":" in text:
        parts = [int(p) for p in re.findall(r"[0-9]+", text)][:3]
        return parts[0] * 3600 + parts[1] * 60 if len(parts) >= 2 else None
    if not m:
        return None
    seconds = finite_int(m.group(1), {"s": 1, "h": 3600}.get(m.group(2) or "min", 60))
    return seconds if seconds is not None and seconds <= MOST_SECONDS else None  # a mark


def _arch(text: str | None) -> str | None:
    """An lshosts TYPE/MODEL -> `uname -m` name. LSF names 64-bit x86 Linux hosts X86_64,
    32-bit x86 ones LINUX86 (i686) and Itanium ones LINUX64 (ia64, as NTIA64 is Itanium
    Windows), so `x86` alone is no architecture and `64` alone not x86_64; those two are
    read as whole names only (a site's own SLINUX64 says nothing of its CPU). LINUXPPC64 is
    big-endian POWER (ppc64), told from LINUXPPC64LE by the suffix, so that is tried
    first."""
    t = (text or "").lower()
    if arch_name(t):  # a whole name: X86_64, LINUX64, LINUX_ARM64, ...
        return arch_name(t)
    for key, arch in (("x86_64", "x86_64"), ("aarch64", "aarch64"), ("arm64", "aarch64"),
                      ("ppc64le", "ppc64le"), ("ppc64", "ppc64"), ("ia64", "ia64")):
        if key in t:
            return arch
    return None


lsf_commands = LsfCommands()


# hosts closed by an admin or gone, whose `bhosts -l` is asked for its admin's comment
_COMMENTED_STATES = ("closed_adm", "closed_lock", "unavail", "unreach")
MAX_COMMENTED_HOSTS = 200  # in one `bhosts -l`; the rest are named without a comment
_HOST_LINE = re.compile(r"^HOST\s+(\S+)\s*$")
_ADMIN_COMMENT = re.compile(r"^\s*ADMIN ACTION COMMENT:\s*(.*?)\s*$")


def parse_host_comments(text: str) -> dict[str, str]:
    """`bhosts -l`: each host's ADMIN ACTION COMMENT (`badmin hclose -C "disk swap"`), by
    host name, without its quotes; hosts without one left out."""
    out: dict[str, str] = {}
    host = None
    for line in text.splitlines():
        if m := _HOST_LINE.match(line):
            host = m.group(1)
        elif host and (m := _ADMIN_COMMENT.match(line)):
            said = m.group(1)
            if len(said) >= 2 and said[0] == said[-1] == '"':
                said = said[1:-1]
            if said.strip():
                out[host] = said.strip()
    return out
