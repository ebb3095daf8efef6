"""IBM Spectrum LSF command lines and output parsers (pure: argv in, models out).

Submission: LSF reads `#BSUB` directives only when the script comes on standard
input (`bsub < script`); `bsub script` would treat it as a plain command. So
`submit_argv()` is just `["bsub"]` (plus `-H` to hold) and `submit_stdin = True`
tells the site layer to feed the script's bytes to that command's stdin.

Status uses `bjobs -o "..." -json -a IDS`. Every field is a string and may be
"" or "-" (PSI/J once crashed on an empty EXIT_CODE): parsers never int() raw.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import Any

from ..model import BadInput, JobState, JobStatus, Node, Partition, SiteSnapshot, utcnow
from .outputs_common import (
    clean,
    fail,
    finite_int,
    load_json,
    memory_mb,
    parse_local_time,
    to_int,
    unanswered,
    year_fix,
)

BJOBS_FIELDS = ("jobid stat user queue job_name exit_code pend_reason submit_time start_time "
                "finish_time esstart_time slots exec_host runtimelimit")
BHOSTS_FIELDS = "host_name status max njobs run"
LSHOSTS_FIELDS = "HOST_NAME type model ncpus maxmem RESOURCES"
BQUEUES_FIELDS = "queue_name status max runlimit"
# a queue's hosts and limits on a job's memory and tasks, asked apart: a release of LSF
# that does not know one of these fields fails only this command (then none is checked)
BQUEUES_LIMIT_FIELDS = "queue_name hosts max_memlimit max_tasklimit min_tasklimit"

_STATES = {"PEND": JobState.PENDING, "PSUSP": JobState.PENDING, "WAIT": JobState.PENDING,
           "PROV": JobState.PENDING, "RUN": JobState.RUNNING, "USUSP": JobState.RUNNING,
           "SSUSP": JobState.RUNNING, "DONE": JobState.COMPLETED, "EXIT": JobState.FAILED,
           "ZOMBI": JobState.UNKNOWN, "UNKWN": JobState.UNKNOWN}
_CANCEL_REASONS = ("TERM_OWNER", "TERM_ADMIN", "TERM_FORCE_OWNER", "TERM_FORCE_ADMIN",
                   "TERM_REQUEUE_OWNER", "TERM_REQUEUE_ADMIN")
# Year-less by default ('Nov 29 17:18'); with LSB_DISPLAY_YEAR or -hms variants too.
TIME_FORMATS = ("%b %d %H:%M:%S %Y", "%b %d %H:%M %Y", "%Y/%m/%d-%H:%M:%S",
                "%Y/%m/%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")


class LsfCommands:
    """`now` supplies the year for LSF's year-less timestamps (injectable for tests)."""

    name = "lsf"
    submit_stdin = True  # the script goes to bsub's standard input


    @staticmethod
    def status_unanswered(exit_status: int, stderr: str) -> bool:
        """Whether a failed status or accounting query means the server did not answer
        (not "no such job"): nothing can be concluded about the jobs asked."""
        return unanswered("lsf", exit_status, stderr)

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
            if not re.fullmatch(r"\d+(\[\d+\])?", i):
                raise BadInput(f"lsf: not a job id: {i!r}")
        return ids

    def submit_argv(self, script_path: str, *, hold: bool = False) -> list[str]:
        """`bsub [-H]`; the script (script_path's content) must be sent on stdin."""
        return ["bsub", *(["-H"] if hold else [])]

    def status_argv(self, native_ids: list[str]) -> list[str]:
        return ["bjobs", "-o", BJOBS_FIELDS, "-json", "-a", *self._ids(native_ids)]

    def accounting_argv(self, native_ids: list[str]) -> list[str] | None:
        """None: `bjobs -a` already covers recently finished jobs (bhist is not parsed)."""
        return None

    def cancel_argv(self, native_ids: list[str]) -> list[str]:
        return ["bkill", *self._ids(native_ids)]

    def release_argv(self, native_ids: list[str]) -> list[str]:
        return ["bresume", *self._ids(native_ids)]

    def find_by_name_argv(self, name: str) -> list[str]:
        if not name:
            raise BadInput("lsf: empty job name")
        return ["bjobs", "-o", BJOBS_FIELDS, "-json", "-a", "-J", name]

    def snapshot_argvs(self) -> dict[str, list[str]]:
        return {
            "hosts": ["bhosts", "-o", BHOSTS_FIELDS, "-json"],
            "lshosts": ["lshosts", "-o", LSHOSTS_FIELDS, "-json"],
            "queues": ["bqueues", "-o", BQUEUES_FIELDS, "-json"],
            "queue_limits": ["sh", "-c", f"bqueues -o '{BQUEUES_LIMIT_FIELDS}' -json "
                             "2>/dev/null; exit 0"],
            "queue": ["bjobs", "-u", "all", "-o", BJOBS_FIELDS, "-json"],
        }

    # -- parsers ------------------------------------------------------------
    def parse_submit(self, stdout: str) -> str:
        """'Job <123> is submitted to queue <normal>.' -> '123'."""
        m = re.search(r"Job <(\d+)> is submitted", stdout)
        if not m:
            raise fail("lsf", "bsub output", "no 'Job <ID> is submitted'", stdout)
        return m.group(1)

    def _records(self, what: str, stdout: str) -> list[dict[str, Any]]:
        if not stdout.strip() or re.match(r"\s*No \w+ (job|host|queue)", stdout):
            return []
        data = load_json("lsf", what, stdout)
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
        if re.search(r"\d{4}", s):
            return parse_local_time(s, self.tz, TIME_FORMATS)
        now = self.now()
        dt = parse_local_time(f"{s} {now.year}", self.tz, TIME_FORMATS)
        return year_fix(dt, now) if dt else None

    def parse_status(self, stdout: str) -> list[JobStatus]:
        out = []
        for r in self._records("bjobs -json", stdout):
            r = {k.upper(): v for k, v in r.items()}
            if "ERROR" in r and not clean(r.get("STAT")):
                continue  # e.g. "Job <999> is not found": the job is gone
            jid = clean(r.get("JOBID"))
            if jid is None:
                raise fail("lsf", "bjobs -json", "record without JOBID", str(r))
            stat = (clean(r.get("STAT")) or "").upper()
            state = _STATES.get(stat, JobState.UNKNOWN)
            exit_code = to_int(r.get("EXIT_CODE"))
            reason = clean(r.get("PEND_REASON")) or clean(r.get("EXIT_REASON"))
            if stat == "DONE":
                exit_code = 0
            elif stat == "EXIT":
                exit_reason = clean(r.get("EXIT_REASON")) or ""
                if exit_reason.startswith(_CANCEL_REASONS):
                    state = JobState.CANCELLED
                elif exit_reason.startswith("TERM_RUNLIMIT"):
                    state = JobState.TIMEOUT
            elif stat == "PSUSP":
                reason = reason or "held (PSUSP)"
            hosts = clean(r.get("EXEC_HOST"))
            limit = clean(r.get("RUNTIMELIMIT"))
            out.append(JobStatus(
                native_id=jid, state=state, native_state=stat or None,
                name=clean(r.get("JOB_NAME")), user=clean(r.get("USER")),
                partition=clean(r.get("QUEUE")), cpus=to_int(r.get("SLOTS")),
                nodes=len(hosts.split(":")) if hosts else None,
                walltime_s=_runlimit(limit),
                submitted_at=self._time(r.get("SUBMIT_TIME")),
                started_at=self._time(r.get("START_TIME")),
                ended_at=self._time(r.get("FINISH_TIME")) if state.terminal else None,
                estimated_start=self._time(r.get("ESSTART_TIME"))
                if state == JobState.PENDING else None,
                exit_code=exit_code if state.terminal else None, reason=reason,
                node_list=hosts,
            ))
        return out

    parse_accounting = parse_status

    def parse_hosts(self, bhosts: str, lshosts: str = "") -> list[Node]:
        """`bhosts -o ... -json` joined with `lshosts -o ... -json` by host name."""
        static = {}
        for r in self._records("lshosts -json", lshosts):
            r = {k.upper(): v for k, v in r.items()}
            static[r.get("HOST_NAME")] = r
        out = []
        for r in self._records("bhosts -json", bhosts):
            r = {k.upper(): v for k, v in r.items()}
            name = clean(r.get("HOST_NAME"))
            if name is None:
                continue
            s = static.get(name, {})
            res = clean(s.get("RESOURCES")) or ""
            ngpus = to_int(s.get("NGPUS")) or to_int(s.get("MAXGPU")) or 0
            htype = clean(s.get("TYPE"))
            out.append(Node(
                name=name, state=(clean(r.get("STATUS")) or "unknown").lower(),
                cpus=to_int(r.get("MAX")) or to_int(s.get("NCPUS")) or 0,
                cpus_allocated=to_int(r.get("NJOBS")) or 0,
                memory_mb=memory_mb(s.get("MAXMEM")) or 0, gpus=ngpus,
                features=[f for f in re.split(r"[\s()]+", res) if f],
                architecture=_arch(htype) or _arch(clean(s.get("MODEL"))),
            ))
        return out

    def parse_queues(self, stdout: str, limits: str = "") -> list[Partition]:
        """`bqueues -o ... -json`, with each queue's hosts and limits from `limits` (the
        same command asked for HOSTS, MAX_MEMLIMIT, MAX/MIN_TASKLIMIT) where given."""
        extra: dict[str, dict[str, Any]] = {}
        if limits.strip():
            for r in self._records("bqueues -json", limits):
                r = {k.upper(): v for k, v in r.items()}
                extra[str(r.get("QUEUE_NAME"))] = r
        out = []
        for r in self._records("bqueues -json", stdout):
            r = {k.upper(): v for k, v in r.items()}
            status = clean(r.get("STATUS")) or ""
            name = str(r.get("QUEUE_NAME"))
            x = extra.get(name, {})
            out.append(Partition(
                name=name, state="UP" if "Active" in status else "DOWN",
                max_time_s=_runlimit(clean(r.get("RUNLIMIT"))),
                total_cpus=to_int(r.get("MAX")) or 0,
                nodes=_queue_hosts(clean(x.get("HOSTS"))),
                # MEMLIMIT: a process above it is killed (KB unless a unit is given)
                max_mem_per_process_mb=memory_mb(x.get("MAX_MEMLIMIT")
                                                 or x.get("MEMLIMIT"), default_unit="k"),
                max_cpus=_task_limit(x.get("MAX_TASKLIMIT") or x.get("TASKLIMIT")),
                min_cpus=_task_limit(x.get("MIN_TASKLIMIT")),
            ))
        return out

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot:
        return SiteSnapshot(
            site=site, nodes=self.parse_hosts(outputs.get("hosts", ""), outputs.get("lshosts", "")),
            partitions=self.parse_queues(outputs.get("queues", ""),
                                         outputs.get("queue_limits", "")),
            jobs=self.parse_status(outputs.get("queue", "")),
        )


def _queue_hosts(text: str | None) -> list[str]:
    """A queue's HOSTS: its host names; none (every host) for `all`, or where it names a
    host group (`grp/`, whose members bqueues does not list) or another cluster's hosts."""
    names = [re.sub(r"\+\d+$", "", h) for h in (text or "").split()]
    if not names or any(h in ("all", "allremote", "others", "-") or h.endswith("/")
                        or "@" in h or h.startswith("~") for h in names):
        return []
    return names


def _task_limit(value: Any) -> int | None:
    """A queue's TASKLIMIT field: a number, or '-' for none."""
    n = to_int(value)
    return n if n and n > 0 else None


def _runlimit(text: str | None) -> int | None:
    """'720.0 min' / '720.0' (minutes) / '12:00' (HH:MM) / '-' -> seconds."""
    if text is None:
        return None
    m = re.match(r"([0-9.]+)\s*(min|s|h)?", text)
    if ":" in text:
        parts = [int(p) for p in re.findall(r"\d+", text)][:3]
        return parts[0] * 3600 + parts[1] * 60 if len(parts) >= 2 else None
    if not m:
        return None
    return finite_int(m.group(1), {"s": 1, "h": 3600}.get(m.group(2) or "min", 60))


def _arch(text: str | None) -> str | None:
    t = (text or "").lower()
    for key, arch in (("x86_64", "x86_64"), ("x86", "x86_64"), ("linux64", "x86_64"),
                      ("aarch64", "aarch64"), ("arm64", "aarch64"), ("ppc64le", "ppc64le")):
        if key in t:
            return arch
    return None


lsf_commands = LsfCommands()
