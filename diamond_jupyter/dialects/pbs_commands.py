"""PBS Pro (and Torque) command lines and output parsers (pure: argv in, models out).

PBS Pro: `qstat -f -F json -x IDS` shows queued, running AND finished jobs
(`-x` = job history). On Torque the same `-x` means *XML output* and there is
no JSON at all: use `PbsCommands(flavor="torque")`, whose status command is
`qstat -f -x IDS` parsed by `parse_torque_xml` (finished jobs stay visible as
state C for `keep_completed` seconds). Slurm's own Torque wrappers
(`flavor="slurm"`) print text only and no exit status: see pbs_text.py; their
finished jobs are settled from Slurm's accounting (`sacct`, which the wrappers'
package always brings along).

Ids: qsub prints the full id ('123.server'); qstat accepts both '123' and
'123.server'. Parsers keep the id as printed; `short_id()` strips the server.
Exit_status: 0 ok; >256 means killed by signal (265 = 256+9; past 256+64 it names no
signal and is said unread); negative means PBS itself failed the job, usually before it
ever ran (-29 = walltime kill).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import tzinfo
from typing import Any, Literal

from ..digits import ascii_digits
from ..model import (
    NOT_STARTED,
    BadInput,
    JobState,
    JobStatus,
    Node,
    Partition,
    QueueLimit,
    SiteError,
    SiteSnapshot,
    UserAcl,
    arch_name,
)
from .base import AccountingReach
from .dependencies import pbs_awaited, pbs_dependencies
from .limits_text import parse_pbs_reservations, with_status
from .outputs_common import (
    TASKS_EXPANDED,
    FailureReading,
    clean,
    count_array_tasks,
    fail,
    from_epoch,
    gpu_count,
    known_count,
    limit_count,
    load_json,
    load_record_json,
    memory_mb,
    parse_duration,
    parse_local_time,
    to_int,
    unread,
    unread_time_note,
    user_filter,
    xml_document,
)
from .pbs_outcome import finished_state
from .pbs_text import (
    SAFE_WRAPPER_PATH,
    parse_full,
    parse_wrapper_nodes,
    parse_wrapper_queues,
    parse_wrapper_status,
    torque_as_pro,
)
from .pbs_trace import (
    REACHED_MARK,
    TRACEJOB_BUDGET_S,
    TRACEJOB_DAYS,
    parse_tracejob,
    reached_ids,
)
from .slurm_commands import SlurmCommands, is_separated

CTIME_FORMATS = ("%a %b %d %H:%M:%S %Y",)
# one subjob of a job array, as `qstat -t` lists it (PBS Pro and Torque): `123[4].server`;
# its array is `123[].server`
_SUBJOB = re.compile(r"([0-9]+)\[([0-9]+)\](\..*)?")
_ACTIVE = {"Q": JobState.PENDING, "H": JobState.PENDING, "W": JobState.PENDING,
           "T": JobState.PENDING, "R": JobState.RUNNING, "E": JobState.RUNNING,
           "S": JobState.RUNNING, "U": JobState.RUNNING, "B": JobState.RUNNING}
_FINISHED = {"F", "X", "C"}  # Pro: finished / finished subjob; Torque: completed
# PBS Pro's M: the job went to another server (qmove, peer scheduling); its state there
# is that server's to say
_MOVED = "moved to another server (M): its state there is not read here"
_STD_RESOURCES = {"arch", "host", "mem", "ncpus", "ngpus", "vnode", "vmem", "Qlist",
                  "naccelerators", "accelerator_memory", "hbmem", "vntype"}


# PBS node states of a vnode that takes no new job now, whatever it has unassigned: a job
# holds it whole (`job-exclusive`), its CPUs are all taken (`job-busy`), or its load is
# past its mom's max_load (`busy`, as the Torque text reader already took it)
_HELD_WHOLE = frozenset({"job-exclusive", "job-busy", "busy"})


def short_id(native_id: str) -> str:
    """'123.server' -> '123', '45[].pbs01' -> '45[]'."""
    return native_id.split(".", 1)[0]


def _array_counts(a: dict[str, Any]) -> dict[str, int | None]:
    """A job array's record (`123[]`): its subjobs waiting (`array_indices_remaining`, an
    index expression, '-' once none is left), running (`array_state_count`'s 'Running:N')
    and at most running at once (`max_run_subjobs`); {} for a plain job's."""
    raw = a.get("array_indices_remaining")
    remaining = str(raw).strip() if isinstance(raw, (str, int)) else ""
    if not remaining:
        return {}
    waiting = 0 if remaining == "-" else count_array_tasks(remaining)
    running = re.search(r"\bRunning:([0-9]+)", str(a.get("array_state_count") or ""))
    limit = limit_count(a.get("max_run_subjobs"))
    return {"array_waiting": waiting, "array_running": int(running.group(1)) if running
            else None, "array_limit": limit if limit and limit > 0 else None}


def _count(value: Any) -> int:
    """A node's count of CPUs or GPUs; 0 where not given or below 0 (PBS's own count of
    what is assigned can go negative after a server restart: nothing is taken then)."""
    return known_count(value) or 0


def _acl_groups(queue: dict[str, Any]) -> list[str] | None:
    """The groups a queue takes jobs of (`acl_groups` where `acl_group_enable` is True):
    PBS checks the group the job runs as, not its account. `+name` grants; a list that
    denies (`-name`) is not read (None: not checked), nor is one with no name."""
    if str(queue.get("acl_group_enable")) != "True":
        return None
    names = [g.strip() for g in str(clean(queue.get("acl_groups")) or "").split(",")
             if g.strip()]
    if not names or any(g.startswith("-") for g in names):
        return None
    return [g.removeprefix("+") for g in names]


def _acl_users(queue: dict[str, Any]) -> list[UserAcl] | None:
    """The users a queue takes jobs of (`acl_users`, `[+]name[@host]` each, where
    `acl_user_enable` is True). A list that denies (`-name`) is not read (None: not
    checked): PBS reads an ACL in order, first match wins, which is not modelled; nor is
    an empty one."""
    if str(queue.get("acl_user_enable")) != "True":
        return None
    names = [u.strip() for u in str(clean(queue.get("acl_users")) or "").split(",")
             if u.strip()]
    if not names or any(u.startswith("-") for u in names):
        return None
    return [UserAcl(source="acl_users", users=[u.removeprefix("+") for u in names])]


def _obj(value: Any) -> dict[str, Any]:
    """A JSON object of the output, or {} where a mangled output has something else."""
    return value if isinstance(value, dict) else {}


TOKEN_VARIABLE = "DIAMOND_TOKEN"  # the engine's token where a job's name has no room for it
_TOKEN = re.compile(r"[0-9a-f]{12}")


def carried_token(variables: Any) -> str | None:
    """The engine's token in a job's Variable_List (PBS Pro's JSON object, or Torque's
    `NAME=VALUE,...` text, a comma in a value escaped as `\\,`); None when absent or not a
    token's shape."""
    if isinstance(variables, dict):
        value = variables.get(TOKEN_VARIABLE)
    elif isinstance(variables, str):
        pairs = (item.partition("=") for item in re.split(r"(?<!\\),", variables))
        value = next((v for k, _, v in pairs if k.strip() == TOKEN_VARIABLE), None)
    else:
        value = None
    value = value.strip() if isinstance(value, str) else None
    return value if value and _TOKEN.fullmatch(value) else None


def _dur(value: Any) -> int | None:
    try:
        return parse_duration(value)
    except ValueError:
        return None


# Job names of 15 characters at most: PBS Pro before 13 (its `pbs_version` reads
# `PBSPro_12.2.1.140292`) and Torque before 4 (2.x and 3.x qsub documentation: "up to and
# including 15 characters"); PBS Pro 13 on, OpenPBS and Torque 4 on take 230 and more.
OLD_NAME_LIMIT = 15
_VERSION = re.compile(r"(PBSPro_|pbspro_|PBS_Pro_)?v?([0-9]+)(?:\.[0-9]+)*[\w.+-]*")


def server_version(flavor: str, server_output: str) -> str | None:
    """The server's `pbs_version` from `qstat -B -f` (Torque's text) or `qstat -B -f -F
    json` (PBS Pro's: also at the top of every JSON answer); None where it says none or
    does not read (a wrapper's, or a mangled answer: the limit stays unknown)."""
    text = server_output.strip()
    if not text:
        return None
    found: Any = None
    if text.startswith("{"):
        try:
            data = load_json("pbs", "qstat -B -f -F json", text, lenient=True)
        except SiteError:
            return None
        data = _obj(data)
        found = data.get("pbs_version")
        for attrs in _obj(data.get("Server")).values():
            found = _obj(attrs).get("pbs_version") or found
    elif flavor == "torque":
        try:
            servers = parse_full(text, "qstat -B -f", block="Server")
        except SiteError:
            return None
        for attrs in servers.values():
            found = attrs.get("pbs_version") or found
    value = str(found).strip() if isinstance(found, (str, int, float)) else ""
    return value if _VERSION.fullmatch(value) else None


def job_name_limit(flavor: str, version: str | None) -> int | None:
    """The longest job name the server takes, where its version is one with the old
    15-character limit; None where it takes long names (or the version is not known).
    A `PBSPro_` version is PBS Pro's whatever the flavor; PBS Pro and OpenPBS numbers
    (13 on, 19.1, 2021.1) are never Torque's (2 to 7)."""
    m = _VERSION.fullmatch(version or "")
    if m is None:
        return None
    major = int(m.group(2))
    if m.group(1) or flavor == "pro" or major >= 13:
        return OLD_NAME_LIMIT if major < 13 else None
    return OLD_NAME_LIMIT if major < 4 else None


class PbsCommands(FailureReading, AccountingReach):
    """PBS Pro by default; `flavor="torque"` switches status to Torque's XML."""

    name = "pbs"
    submit_stdin = False

    def __init__(self, *, flavor: Literal["pro", "torque", "slurm"] | None = "pro",
                 tz: tzinfo | None = None, jobcomp: bool = False) -> None:
        flavor = flavor or "pro"
        if flavor not in ("pro", "torque", "slurm"):
            raise BadInput(f"pbs: unknown flavor {flavor!r} (accepted: pro, torque, slurm)")
        self.flavor = flavor
        self.tz = tz
        # Slurm's wrappers: finished jobs from Slurm's accounting
        self._acct = SlurmCommands(jobcomp=jobcomp, tz=tz) if flavor == "slurm" else None

    @property
    def empty_exit_codes(self) -> tuple[int, ...]:
        """Slurm's qstat wrapper exits 153 when it printed no job (or, with -q, always)."""
        return (153,) if self.flavor == "slurm" else ()

    @property
    def lists_known_on_failure(self) -> bool:
        """Whether a status query that fails still lists the jobs it knows: PBS Pro's and
        Torque's qstat say each id it does not know (a finished job it no longer keeps) on
        stderr, list the others and exit non-zero."""
        return self._acct is None

    @property
    def submit_paths(self) -> bool:
        """Whether the submit command must be given the output paths (Slurm's qsub wrapper
        overrides the script's `#PBS -o/-e` with its own defaults otherwise)."""
        return self.flavor == "slurm"

    @staticmethod
    def _ids(native_ids: list[str]) -> list[str]:
        ids = [str(i).strip() for i in native_ids if str(i).strip()]
        if not ids:
            raise BadInput("pbs: no job ids given")
        for i in ids:
            if not re.fullmatch(r"[0-9]+(\[[0-9]*\])?(\.[\w.-]+)?", i):
                raise BadInput(f"pbs: not a job id: {i!r}")
        return ids

    def submit_argv(self, script_path: str, *, hold: bool = False, stdout: str | None = None,
                    stderr: str | None = None) -> list[str]:
        """`stdout`/`stderr`: given on the command line only where `submit_paths`; None
        stderr joins it to stdout."""
        paths: list[str] = []
        if self.submit_paths and stdout:
            for p in (stdout, stderr, script_path):
                if p is not None and not SAFE_WRAPPER_PATH.fullmatch(p):
                    raise BadInput(f"pbs: path {p!r} cannot go through Slurm's qsub wrapper "
                                   "(it runs sbatch through a shell unquoted); use letters, "
                                   "digits and ._/%@+=:,- only")
            paths = ["-o", stdout, *(["-e", stderr] if stderr else ["-j", "oe"])]
        return ["qsub", *(["-h"] if hold else []), *paths, script_path]

    def status_argv(self, native_ids: list[str]) -> list[str]:
        """The jobs' full status; on PBS Pro, where one is a job array (`123[].server`),
        its subjobs too (`-t`: each subjob's record, whose state `parse_status` keeps as
        the array's task's). Torque is not given `-t` (it may list the subjobs in the
        array's place); the subjobs it lists beside their array are read the same way."""
        ids = self._ids(native_ids)
        if self.flavor == "slurm":
            return ["qstat", "-f", *(short_id(i) for i in ids)]
        if self.flavor == "torque":
            return ["qstat", "-f", "-x", *ids]
        subjobs = ["-t"] if any("[]" in i for i in ids) else []
        return ["qstat", "-f", "-F", "json", "-x", *subjobs, *ids]

    def accounting_argv(self, native_ids: list[str]) -> list[str] | None:
        """How jobs the queue no longer lists ended. Slurm's wrappers do not say: Slurm's
        accounting does. PBS Pro without job history and Torque past `keep_completed` no
        longer list a finished job: `tracejob` reads the server's logs of the last
        TRACEJOB_DAYS days, one job at a time (Torque's takes one), unwrapped (`-w 0`),
        in the order given, within TRACEJOB_BUDGET_S in all, so a slow log never fails
        the poll. Each job asked is followed by a REACHED_MARK line (`accounting_reached`);
        a run cut at the budget prints nothing else (a cut line could read as another
        exit status), and counts as asked only for the first job, which had the whole
        budget; a job not reached is asked at a later poll. A job not found is said on
        stderr, dropped with the exit status (the ids are checked, passed as the shell's
        arguments; tracejob is its $0, where the site's configured path goes)."""
        if self._acct is not None:
            return self._acct.accounting_argv([short_id(i) for i in self._ids(native_ids)])
        return ["sh", "-c", f"end=$(($(date +%s) + {TRACEJOB_BUDGET_S})); for id do "
                'now=$(date +%s); [ "$now" -lt "$end" ] || break; '
                f'out=$(timeout $((end - now)) "$0" -n {TRACEJOB_DAYS} -w 0 "$id"); '
                'cut=$(($? == 124)); [ "$cut" = 0 ] && printf "%s\\n" "$out"; '
                f'[ "$cut" = 0 ] || [ "$id" = "$1" ] && printf "\\n{REACHED_MARK} %s\\n" "$id"; '
                "done 2>/dev/null; exit 0", "tracejob", *self._ids(native_ids)]

    @property
    def accounting_takes_turns(self) -> bool:  # type: ignore[override]
        """tracejob's loop reaches only the jobs its budget has time for (Slurm's wrappers
        ask sacct, which answers for every job)."""
        return self._acct is None

    def accounting_reached(self, stdout: str) -> list[str] | None:
        """The jobs `accounting_argv`'s command asked about (None: it asks every job it is
        given, as Slurm's accounting does)."""
        return None if self._acct is not None else reached_ids(stdout)

    @property
    def accounting_reach(self) -> str | None:
        """Where `accounting_argv` looks, as the reason a job it did not find is lost says."""
        if self._acct is not None:
            return None
        return (f"tracejob read the PBS logs of the past {TRACEJOB_DAYS} days, where this "
                "login may read them: a job that ended before them, or whose logs it may not "
                "read, is not there")

    def cancel_argv(self, native_ids: list[str]) -> list[str]:
        return ["qdel", *self._ids(native_ids)]

    def release_argv(self, native_ids: list[str]) -> list[str]:
        return ["qrls", *self._ids(native_ids)]

    def find_by_name_argv(self, name: str, user: str | None = None) -> list[str]:
        """`qselect -N NAME` (`-u USER`: that user's jobs only) picks the ids server-side,
        then qstat reports them (no ids: empty output, which parses as no jobs). The name
        and the user travel as "$1" and "$2", never as code."""
        if not name or "\n" in name:
            raise BadInput(f"pbs: unusable job name {name!r}")
        user = user_filter("pbs", user)
        if self._acct is not None:
            # the wrappers have no qselect, and their `qstat -f` prints every job with
            # anyone's name as given (a name can hold a whole forged 'Job Id:' block):
            # Slurm's own squeue, whose records no name can forge, finds it
            return self._acct.find_by_name_argv(name, user)
        mine = ' -u "$2"' if user else ""
        if self.flavor == "torque":
            script = (f'ids=$(qselect{mine} -N "$1") || exit 1; '
                      '[ -z "$ids" ] || exec qstat -f -x $ids')
        else:
            script = (f'ids=$(qselect{mine} -x -N "$1") || exit 1; '
                      '[ -z "$ids" ] || exec qstat -f -F json -x $ids')
        return ["sh", "-c", script, "sh", name, *([user] if user else [])]

    def snapshot_argvs(self) -> dict[str, list[str]]:
        if self._acct is not None:  # every user's jobs from squeue (see find_by_name_argv)
            return {"nodes": ["pbsnodes", "-a"], "queues": ["qstat", "-q"],
                    "queue": self._acct.snapshot_argvs()["queue"]}
        if self.flavor == "torque":  # no JSON: text, and the jobs as XML
            return {"queue": ["qstat", "-f", "-x"], "nodes": ["pbsnodes", "-a"],
                    "queues": ["qstat", "-Q", "-f"], "server": ["qstat", "-B", "-f"],
                    "user": ["id", "-un"], "group": ["id", "-gn"]}
        return {
            "nodes": ["pbsnodes", "-a", "-F", "json"],
            "queues": ["qstat", "-Q", "-f", "-F", "json"],
            "server": ["qstat", "-B", "-f", "-F", "json"],
            "queue": ["qstat", "-f", "-F", "json"],
            # who the probe runs as: their jobs count against the queues' per-user limits,
            # and their group against the group limits
            "user": ["id", "-un"],
            "group": ["id", "-gn"],
            # the reservations: a job of one (`-q R123`) runs in its window on its nodes,
            # which other jobs do not get meanwhile
            "reservations": with_status("pbs_rstat -f"),
        }

    def server_argv(self) -> list[str] | None:
        """What gives the server's version (`name_limit`): the snapshot's own server query;
        None for Slurm's wrappers (no PBS server, and sbatch takes long names)."""
        return None if self._acct is not None else self.snapshot_argvs()["server"]

    def name_limit(self, server_output: str) -> tuple[str | None, int | None]:
        """(the server's version, the longest job name it takes where that is limited)."""
        if self._acct is not None:
            return None, None
        version = server_version(self.flavor, server_output)
        return version, job_name_limit(self.flavor, version)

    # -- parsers ------------------------------------------------------------
    def parse_submit(self, stdout: str) -> str:
        for line in stdout.splitlines():
            m = re.fullmatch(r"\s*([0-9]+(?:\[[0-9]*\])?(?:\.[\w.-]+)?)\s*", line)
            if m:
                return m.group(1)
        raise fail("pbs", "qsub output", "no job id", stdout)

    def parse_status(self, stdout: str, skipped: list[str] | None = None
                     ) -> list[JobStatus]:
        """`qstat -f -F json` (Torque: `qstat -f -x`); `skipped`: where to say a job entry
        that is no record, left out (else SiteError)."""
        if self._acct is not None:
            if is_separated(stdout):  # squeue's own records (the queue, a name lookup)
                return self._acct.parse_status(stdout, skipped)
            return parse_wrapper_status(stdout, self.tz)
        if self.flavor == "torque" or stdout.lstrip().startswith("<"):
            return fold_subjobs(self.parse_torque_xml(stdout, skipped))
        if not stdout.strip():
            return []
        try:
            data = load_record_json("pbs", "qstat -F json", stdout, "Jobs", skipped=skipped)
        except SiteError as whole:
            # one value holding a raw newline (and quotes) spoils the whole document: each
            # job's lines alone, the unreadable ones said as such
            by_record = self._parse_by_record(stdout)
            if by_record is None:
                raise whole from None
            return fold_subjobs(by_record)
        jobs = data.get("Jobs") if isinstance(data, dict) else None
        if jobs is None:
            return []
        if not isinstance(jobs, dict):
            raise fail("pbs", "qstat -F json", "'Jobs' is not an object", stdout)
        out = []
        for jid, attrs in jobs.items():
            if isinstance(attrs, dict):
                out.append(self._job(jid, attrs))
            else:
                unread(skipped, "pbs", f"qstat -F json job {jid}", "not an object of "
                       "attributes", str(attrs))
        return fold_subjobs(_with_dependencies(out, jobs))

    def _parse_by_record(self, stdout: str) -> list[JobStatus] | None:
        """`qstat -F json` read job by job, for a listing that does not read whole: PBS
        prints each job's id on a line of its own (`        "ID":{`) under `"Jobs":{`, so
        the lines from one such header to the next are that job's. Each is read alone
        (with the same checks as a whole listing); one that does not read is kept as an
        UNKNOWN record saying why, every other job as read. An id with two records (one
        forged in some value) is believed in neither. None: no job header found."""
        lines = stdout.split("\n")
        start = next((i for i, ln in enumerate(lines)
                      if re.fullmatch(r'\s*"Jobs"\s*:\s*\{\s*', ln)), None)
        if start is None:
            return None
        indent = None
        heads: list[tuple[int, str]] = []
        for i in range(start + 1, len(lines)):
            m = _JOB_HEAD.fullmatch(lines[i])
            if m and (indent is None or m.group(1) == indent):
                indent = m.group(1)
                heads.append((i, m.group(2)))
        if not heads:
            return None
        out: list[JobStatus] = []
        read: dict[str, Any] = {}  # each job's attributes, as read
        for n, (i, jid) in enumerate(heads):
            end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
            body = "\n".join(lines[i:end]).rstrip()
            if n + 1 == len(heads):  # the last job: the closers of "Jobs" and the document
                body = re.sub(r"\s*\}\s*\}\s*$", "", body)
            body = body.removesuffix(",")
            try:
                # the job's first line is line i + 1 of the output, the second here
                data = load_record_json("pbs", f"qstat -F json job {jid}",
                                        '{"Jobs":{\n' + body + "\n}}", "Jobs",
                                        line_offset=i - 1)
                jobs = data["Jobs"]
                if set(jobs) != {jid} or not isinstance(jobs[jid], dict):
                    raise fail("pbs", f"qstat -F json job {jid}", "not one job's record")
                out.append(self._job(jid, jobs[jid]))
                read[jid] = jobs[jid]
            except SiteError as e:
                out.append(_unreadable(jid, str(e).split(" (got ", 1)[0]))
        twice = {j.native_id for j in out if sum(o.native_id == j.native_id for o in out) > 1}
        out = _with_dependencies(out, {j: a for j, a in read.items() if j not in twice})
        return [j for j in out if j.native_id not in twice] + [
            _unreadable(jid, "pbs: qstat -F json gave two records for this id (one written "
                        "into some job's value): neither is believed") for jid in sorted(twice)]

    def _time(self, value: Any):
        return from_epoch(value) if ascii_digits(str(value).strip()) else \
            parse_local_time(value, self.tz, CTIME_FORMATS)

    def _job(self, jid: str, a: dict[str, Any], *, torque: bool = False) -> JobStatus:
        code = str(a.get("job_state", "")).strip()
        rl, used = _obj(a.get("Resource_List")), _obj(a.get("resources_used"))
        limit = _dur(rl.get("walltime"))
        exit_code, reason = None, clean(a.get("comment"))
        if code in _FINISHED:
            exit_status = to_int(a.get("Exit_status", a.get("exit_status")))
            state, exit_code, why = finished_state(
                exit_status, to_int(a.get("substate")), _dur(used.get("walltime")), limit,
                torque=torque)
            reason = why or reason
        else:
            state = _ACTIVE.get(code, JobState.UNKNOWN)
            if code == "M":  # unknown here, and said why
                reason = f"{_MOVED}: {reason}" if reason else _MOVED
            if code == "H":
                reason = f"held ({a.get('Hold_Types', '?')})" + (f": {reason}" if reason else "")
        est = _obj(a.get("estimated"))
        estimate = self._time(est.get("start_time"))
        if code == "W" and (begin := self._time(a.get("Execution_Time"))) is not None:
            # W with an Execution_Time: it waits for the time `qsub -a` gave (W without one
            # is a failed stage-in), and starts no sooner
            reason = "waiting for its start time (qsub -a)" + (f": {reason}" if reason else "")
            estimate = max(estimate, begin) if estimate else begin
        gpus = known_count(rl.get("ngpus")) or chunk_gpus(rl.get("select"), "ngpus") \
            or chunk_gpus(rl.get("nodes"), "gpus") or gpu_count(rl.get("select"))[0] or None
        hosts = clean(a.get("exec_host"))
        if note := unread_time_note("walltime", rl.get("walltime")):
            reason = f"{reason.rstrip('; ')}; {note}" if reason else note
        return JobStatus(
            native_id=jid, state=state, native_state=code or None,
            name=clean(a.get("Job_Name")), user=(clean(a.get("Job_Owner")) or "").split("@")[0]
            or None, partition=clean(a.get("queue")),
            # Torque without nodect/ncpus (older servers, `-l procs=N`): from its request
            nodes=known_count(rl.get("nodect")) or torque_chunks(rl.get("nodes"))[0] or None,
            cpus=known_count(rl.get("ncpus")) or known_count(rl.get("procs"))
            or torque_chunks(rl.get("nodes"))[1] or None, gpus=gpus, walltime_s=limit,
            submitted_at=self._time(a.get("qtime") or a.get("ctime")),
            # a requeued job (qrerun, a node lost) waits again: its last run's start is not
            # this one's
            started_at=self._time(a.get("stime") or a.get("start_time"))
            if state != JobState.PENDING else None,
            ended_at=self._time(a.get("obittime")) if state.terminal else None,
            estimated_start=estimate if state == JobState.PENDING else None,
            exit_code=exit_code, reason=reason, node_list=hosts,
            account=clean(a.get("project")), group=clean(a.get("egroup")),
            memory_mb=memory_mb(rl.get("mem"), default_unit="b"),
            token=carried_token(a.get("Variable_List")),
            **_array_counts(a) if state in (JobState.PENDING, JobState.RUNNING) else {},
        )

    def parse_torque_xml(self, stdout: str, skipped: list[str] | None = None
                         ) -> list[JobStatus]:
        """Torque `qstat -f -x`: <Data><Job><Job_Id>..</Job_Id>...</Job></Data>; `skipped`:
        where to say a Job without Job_Id, left out (else SiteError)."""
        if not stdout.strip():
            return []
        try:
            root = ET.fromstring(xml_document("pbs", "qstat -x (Torque XML)", stdout,
                                              skipped).strip())
        except (ET.ParseError, ValueError) as exc:  # ValueError: undecodable bytes
            raise fail("pbs", "qstat -x (Torque XML)", str(exc), stdout) from None
        out = []
        read: dict[str, Any] = {}  # each job's attributes, as read
        for job in root.iter("Job"):
            a: dict[str, Any] = {}
            for child in job:
                if len(child):
                    a[child.tag] = {c.tag: (c.text or "").strip() for c in child}
                else:
                    a[child.tag] = (child.text or "").strip()
            jid = a.pop("Job_Id", None)
            if not jid:
                unread(skipped, "pbs", "qstat -x (Torque XML)", "a Job without Job_Id",
                       " ".join(f"{k}={v}" for k, v in a.items() if isinstance(v, str)))
                continue
            a.setdefault("stime", a.get("start_time"))
            a.setdefault("obittime", a.get("comp_time"))
            out.append(self._job(jid, a, torque=True))
            read[jid] = a
        return _with_dependencies(out, read)

    def parse_accounting(self, stdout: str, skipped: list[str] | None = None
                         ) -> list[JobStatus]:
        """`tracejob` (see `accounting_argv`); Slurm's wrappers: Slurm's accounting,
        `skipped` as `parse_status`'s."""
        if self._acct is not None:
            return self._acct.parse_accounting(stdout, skipped)
        return parse_tracejob(stdout, self.tz, torque=self.flavor == "torque")

    def parse_nodes(self, stdout: str, skipped: list[str] | None = None) -> list[Node]:
        """`pbsnodes -a -F json`; `skipped`: where to say a node entry that is no object of
        attributes, left out (else SiteError)."""
        if not stdout.strip():
            return []
        data = load_json("pbs", "pbsnodes -F json", stdout, lenient=True, skipped=skipped)
        nodes = data.get("nodes") if isinstance(data, dict) else None
        if not isinstance(nodes, dict):
            raise fail("pbs", "pbsnodes -F json", "no 'nodes' object", stdout)
        out, hosts = [], []
        for name, a in nodes.items():
            if not isinstance(a, dict):  # not a node's attributes: a mangled entry
                unread(skipped, "pbs", f"pbsnodes -F json node {name}", "not an object of "
                       "attributes", str(a))
                continue
            avail, assigned = _obj(a.get("resources_available")), _obj(a.get("resources_assigned"))
            hosts.append(clean(avail.get("host")) or name)
            feats = [k if v is True or str(v) == "True" else f"{k}={v}"
                     for k, v in avail.items()
                     if k not in _STD_RESOURCES and str(v) not in ("False", "")]
            arch = clean(avail.get("arch"))
            queues = clean(a.get("queue")) or clean(avail.get("Qlist"))
            state = str(a.get("state", "unknown"))
            cpus = _count(avail.get("ncpus")) or _count(a.get("pcpus"))
            gpus = _count(avail.get("ngpus"))
            # a vnode a job holds whole (`job-exclusive`: place=excl), whose CPUs are all
            # taken (`job-busy`) or whose load is too high (`busy`) has nothing left for
            # another job now, whatever it was assigned
            whole = bool(set(re.split(r"[,\s]+", state.lower())) & _HELD_WHOLE)
            out.append(Node(
                name=name, state=state, cpus=cpus,
                cpus_allocated=cpus if whole else _count(assigned.get("ncpus")),
                memory_mb=memory_mb(avail.get("mem"), default_unit="b") or 0,
                # the memory its jobs were given (PBS's own accounting of `mem`)
                memory_allocated=memory_mb(assigned.get("mem"), default_unit="b") or 0,
                gpus=gpus, gpus_allocated=gpus if whole else _count(assigned.get("ngpus")),
                gpu_type=clean(avail.get("gpu_model")) or clean(avail.get("gpu_type")),
                features=sorted(feats), partitions=queues.split(",") if queues else [],
                architecture=arch_name(arch),
                # why it is offline or down: an admin's `pbsnodes -o -C TEXT`, or the
                # server's own (`node down: communication closed`)
                reason=clean(a.get("comment")),
            ))
        return _by_host(out, hosts)

    def parse_queues(self, stdout: str, server: str = "", skipped: list[str] | None = None
                     ) -> list[Partition]:
        """`qstat -Q -f -F json` (+ `qstat -B -f -F json` for default_queue); Torque's
        text of `qstat -Q -f` and `qstat -B -f` (no JSON there). `skipped`: where to say a
        queue entry that is no object of attributes, left out."""
        if not stdout.strip():
            return []
        if self.flavor == "torque" and not stdout.lstrip().startswith("{"):
            queues = {k: torque_as_pro(v) for k, v in
                      parse_full(stdout, "qstat -Q -f", block="Queue").items()}
            srv_text = parse_full(server, "qstat -B -f", block="Server") if server.strip() \
                else {}
            return self._queues(queues, [torque_as_pro(v) for v in srv_text.values()],
                                skipped)
        data = load_json("pbs", "qstat -Q -F json", stdout, lenient=True, skipped=skipped)
        queues = data.get("Queue") if isinstance(data, dict) else None
        if not isinstance(queues, dict):
            raise fail("pbs", "qstat -Q -F json", "no 'Queue' object", stdout)
        servers: list[dict[str, Any]] = []
        if server.strip():
            srv = load_json("pbs", "qstat -B -F json", server, lenient=True, skipped=skipped)
            servers = [_obj(attrs) for attrs in _obj(_obj(srv).get("Server")).values()]
        return self._queues(queues, servers, skipped)

    def _queues(self, queues: dict[str, Any], servers: list[dict[str, Any]],
                skipped: list[str] | None = None) -> list[Partition]:
        """The queues' attributes (and the servers') as PBS Pro names them -> partitions."""
        default = None
        # the server's resources_max / resources_default: a queue that sets none of a
        # resource takes the server's (PBS checks a job against the queue's, else the
        # server's)
        srv_max: dict[str, Any] = {}
        srv_dflt: dict[str, Any] = {}
        srv_limits: list[QueueLimit] = []  # the server's own max_run / max_queued
        srv_depth: int | None = None  # the server's backfill_depth
        for attrs in servers:
            srv_depth = _depth(attrs.get("backfill_depth"), srv_depth)
            default = attrs.get("default_queue") or default
            srv_max = {**_obj(attrs.get("resources_max")), **srv_max}
            srv_dflt = {**_obj(attrs.get("resources_default")), **srv_dflt}
            srv_limits += _queue_limits(attrs, on="server")
        out = []
        for name, a in queues.items():
            if not isinstance(a, dict):  # not a queue's attributes: a mangled entry
                if skipped is not None:
                    skipped.append(str(fail("pbs", f"qstat -Q -F json queue {name}",
                                            "not an object of attributes", str(a))))
                continue
            up = str(a.get("enabled")) == "True" and str(a.get("started")) == "True"
            if str(a.get("queue_type", "Execution")).lower().startswith("r"):
                # a routing queue runs nothing: it sends a job on (`dest@server` names a
                # queue of another server, which this snapshot cannot see)
                dests = [d.strip() for d in str(clean(a.get("route_destinations")) or "")
                         .split(",") if d.strip()]
                # its own resources_max: a job past it is refused at qsub, whichever
                # destination would take it (the server's is its destinations' already)
                mx = _obj(a.get("resources_max"))
                out.append(Partition(name=name, default=name == default,
                                     state="UP" if str(a.get("enabled")) == "True"
                                     else "DOWN", routes_to=dests,
                                     max_time_s=_dur(mx.get("walltime")),
                                     max_nodes=limit_count(mx.get("nodect")),
                                     max_cpus=limit_count(mx.get("ncpus")),
                                     max_gpus=limit_count(mx.get("ngpus"))))
                continue
            mx, mn = {**srv_max, **_obj(a.get("resources_max"))}, _obj(a.get("resources_min"))
            groups = _acl_groups(a)
            dflt = {**srv_dflt, **_obj(a.get("resources_default"))}
            out.append(Partition(
                name=name, default=name == default,
                state="UP" if up else NOT_STARTED if str(a.get("enabled")) == "True" else "DOWN",
                max_time_s=_dur(mx.get("walltime")), max_nodes=limit_count(mx.get("nodect")),
                default_time_s=_dur(dflt.get("walltime")),
                # a job's totals (summed over its chunks) the queue takes at most
                max_cpus=limit_count(mx.get("ncpus")), max_gpus=limit_count(mx.get("ngpus")),
                max_mem_mb=memory_mb(mx.get("mem"), default_unit="b"),
                max_running=_max_run(a.get("max_run")), limits=_queue_limits(a) + srv_limits,
                min_cpus=limit_count(mn.get("ncpus")) or None,
                min_gpus=limit_count(mn.get("ngpus")) or None,
                min_mem_mb=memory_mb(mn.get("mem"), default_unit="b") or None,
                min_time_s=_dur(mn.get("walltime")) or None,
                total_cpus=known_count(_obj(a.get("resources_available")).get("ncpus")) or 0,
                allowed_groups=groups,
                user_acls=_acl_users(a),
                # PBS Pro prints `Priority`, Torque `priority`
                queue_priority=_priority(a.get("Priority", a.get("priority"))),
                # a queue's own backfill_depth overrides the server's for its jobs
                backfill_depth=_depth(a.get("backfill_depth"), srv_depth),
                backfill_depth_own=_depth(a.get("backfill_depth"), None) is not None,
            ))
        return out

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot:
        skipped: list[str] = []
        jobs = [j for j in self.parse_status(outputs.get("queue", ""), skipped)
                if not j.state.terminal and j.native_state not in _FINISHED]
        if self.flavor == "torque":  # pbsnodes -a prints text, as the wrapper's does
            user = (outputs.get("user") or "").strip()
            group = (outputs.get("group") or "").strip()
            return SiteSnapshot(
                site=site, nodes=parse_wrapper_nodes(outputs.get("nodes", ""), skipped),
                partitions=self.parse_queues(outputs.get("queues", ""),
                                             outputs.get("server", ""), skipped),
                jobs=jobs, user=user if re.fullmatch(r"[\w.-]+", user) else None,
                group=group if re.fullmatch(r"[\w.-]+", group) else None,
                warnings=[f"{site}: {w}" for w in skipped])
        if self.flavor == "slurm":
            nodes = parse_wrapper_nodes(outputs.get("nodes", ""), skipped)
            return SiteSnapshot(site=site, nodes=nodes,
                                partitions=parse_wrapper_queues(outputs.get("queues", "")),
                                jobs=jobs, warnings=[f"{site}: {w}" for w in skipped])
        user = (outputs.get("user") or "").strip()
        group = (outputs.get("group") or "").strip()
        nodes = self.parse_nodes(outputs.get("nodes", ""), skipped)
        resv, resv_unread = parse_pbs_reservations(outputs["reservations"], self.tz) \
            if "reservations" in outputs else (None, None)
        return SiteSnapshot(
            pbs_reservations=resv,
            limits_unread={"reservations": resv_unread} if resv_unread else {},
            site=site, nodes=nodes,
            partitions=free_vnodes_to_free_queues(
                self.parse_queues(outputs.get("queues", ""), outputs.get("server", ""),
                                  skipped), nodes),
            jobs=jobs, user=user if re.fullmatch(r"[\w.-]+", user) else None,
            group=group if re.fullmatch(r"[\w.-]+", group) else None,
            warnings=[f"{site}: {w}" for w in skipped],
        )



def subjob_of(native_id: str) -> tuple[str, str] | None:
    """(the array's id, the index) of a subjob's id (`123[4].server` -> (`123[].server`,
    `4`)); None for any other id."""
    m = _SUBJOB.fullmatch(native_id)
    return (f"{m.group(1)}[]{m.group(3) or ''}", m.group(2)) if m else None


def fold_subjobs(records: list[JobStatus]) -> list[JobStatus]:
    """The states of the subjobs a listing holds (`qstat -t`: `123[4].server`) as their
    listed array's task states (index -> state, up to TASKS_EXPANDED); every record kept
    as listed (a subjob is a job of its own in the queue's view)."""
    listed = {r.native_id for r in records if "[]" in r.native_id}
    tasks: dict[str, dict[str, JobState]] = {}
    for r in records:
        if (sub := subjob_of(r.native_id)) is not None and sub[0] in listed:
            states = tasks.setdefault(sub[0], {})
            if len(states) < TASKS_EXPANDED:
                states[sub[1]] = r.state
    return [r.model_copy(update={"tasks": tasks[r.native_id]}) if r.native_id in tasks
            else r for r in records]


def free_vnodes_to_free_queues(queues: list[Partition], nodes: list[Node]) -> list[Partition]:
    """PBS Pro's vnode-queue association (a vnode's `queue` attribute): where some vnodes
    name a queue, a queue none names runs jobs on the vnodes that name none (Admin Guide,
    "Associating Vnodes with Queues"), listed as its nodes; else every queue may use
    every vnode, and the queues are left as they are."""
    if not any(n.partitions for n in nodes):
        return queues
    named = {q for n in nodes for q in n.partitions}
    free = [n.name for n in nodes if not n.partitions]
    return [q.model_copy(update={"nodes": free}) if q.name not in named and not q.nodes
            and q.routes_to is None else q for q in queues]


def chunk_gpus(spec: Any, key: str) -> int:
    """The GPUs a job's chunks ask in all: PBS Pro's select (`2:ncpus=4:ngpus=1+1:ngpus=2`,
    `key` ngpus) or Torque's nodes (`2:ppn=4:gpus=1`, `key` gpus), each chunk's count
    times its GPUs; 0 for none."""
    total = 0
    for chunk in (clean(spec) or "").split("+"):
        head, *rest = chunk.strip().split(":")
        count = int(head) if ascii_digits(head) else 1
        terms = rest if ascii_digits(head) else [head, *rest]
        for term in terms:
            name, _, value = term.partition("=")
            if name.strip() == key and ascii_digits(value.strip()):
                total += count * int(value)
    return total


def torque_chunks(spec: Any) -> tuple[int, int]:
    """(nodes, processors) a Torque `nodes` request asks in all (`2:ppn=8:gpus=2+n07:ppn=4`:
    a count or a host name, then `ppn`, 1 where unset); (0, 0) for none or a chunk that is
    not one (a count of 0, a ppn not a number)."""
    nodes = cpus = 0
    for chunk in (clean(spec) or "").split("+"):
        head, *rest = chunk.strip().split(":")
        count = int(head) if ascii_digits(head) else 1
        ppn = [v for k, _, v in (t.partition("=") for t in rest) if k.strip() == "ppn"]
        if not head.strip() or count < 1 or (ppn and not ascii_digits(ppn[-1].strip())):
            return 0, 0
        nodes += count
        cpus += count * (int(ppn[-1]) if ppn else 1)
    return nodes, cpus


def _depth(value: Any, otherwise: int | None) -> int | None:
    """A backfill_depth (a whole number, 0 or more); `otherwise` where unset or not one."""
    text = str(value).strip() if value is not None else ""
    return int(text) if ascii_digits(text) else otherwise


def _priority(value: Any) -> int | None:
    """A queue's Priority (an integer, PBS Pro allows -1024 to 1023); None where unset or
    not a number."""
    text = str(value).strip() if value is not None else ""
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else None


_JOB_HEAD = re.compile(r'(\s*)"([^"\n]+)"\s*:\s*\{\s*')  # a job's first line in -F json


def _with_dependencies(jobs: list[JobStatus], attrs: dict[str, Any]) -> list[JobStatus]:
    """`jobs` (of one listing, `attrs` their attributes by id), each held by its dependency
    alone (job_state H, Hold_Types s: the system hold PBS puts on a job whose dependency
    is not met) with what it still waits for (`dependencies.pbs_dependencies`)."""
    depends = {jid: str(a["depend"]) for jid, a in attrs.items()
               if isinstance(a, dict) and a.get("depend")}
    if not depends:
        return jobs
    held = [jid for jid in depends if str(attrs[jid].get("job_state", "")).strip() == "H"
            and str(attrs[jid].get("Hold_Types", "")).strip() == "s"]
    waits = pbs_dependencies(depends, held, attrs)
    awaited = {jid: n for jid in held if (n := pbs_awaited(depends[jid]))}
    return [j.model_copy(update={"dependency": waits[j.native_id]})
            if j.native_id in waits else j.model_copy(update={"reason": (
                f"{j.reason}; waits for {awaited[j.native_id]} more job(s), not submitted "
                f"yet, to name it with a before kind (depend=on:{awaited[j.native_id]}): "
                "not known when")}) if j.native_id in awaited else j for j in jobs]


def _unreadable(jid: str, why: str) -> JobStatus:
    """A job whose record in the listing could not be read: its state is not known."""
    return JobStatus(native_id=jid, state=JobState.UNKNOWN,
                     reason=f"the scheduler's record of this job could not be read ({why}; "
                     "a value holding a raw newline?)")


_LIMIT = re.compile(r"\[([ougp]):([^=\]]+)=([^\]]+)\]")


def _limit_value(resource: str, text: str) -> int | None:
    """A limit's value: a count, or for `mem` a size (`64gb`; bytes without a unit) in MB."""
    text = text.strip()
    if resource == "mem":
        return memory_mb(text, default_unit="b")
    return limit_count(text) if ascii_digits(text) else None


def _queue_limits(a: dict[str, Any], on: Literal["queue", "server"] = "queue"
                  ) -> list[QueueLimit]:
    """A queue's (or, `on` "server", the server's) max_run / max_queued limits and their
    `_res` forms, each entry of `[u:PBS_GENERIC=5],[u:bob=2],[g:chem=4],[p:proj=8]` on its
    own (a bare value is everyone's); a queue's `max_run` of everyone's jobs stays
    `max_running`'s. An entry whose value cannot be read is left out (not checked)."""
    out: list[QueueLimit] = []
    for attr in ("max_run", "max_queued"):
        found: list[tuple[str, Any]] = [("jobs", a.get(attr))]
        res = a.get(f"{attr}_res")
        found += [(str(k), v) for k, v in _obj(res).items()]
        found += [(k.split(".", 1)[1], v) for k, v in a.items()
                  if isinstance(k, str) and k.startswith(f"{attr}_res.")]
        for resource, value in found:
            text = str(value or "").strip()
            entries = _LIMIT.findall(text) if "[" in text else \
                [("o", "PBS_ALL", text)] if text else []
            for scope, who, raw in entries:
                if attr == "max_run" and resource == "jobs" and scope == "o" and on == "queue":
                    continue  # max_running
                n = _limit_value(resource, raw)
                if n is not None:
                    out.append(QueueLimit(attribute=attr, resource=resource, scope=scope,
                                          who=who.strip(), value=n, on=on))
    return out


def _max_run(value: object) -> int | None:
    """A queue's `max_run`: a number (old style) or `[o:PBS_ALL=N]` (N for everyone's jobs
    together); limits per user or group (`[u:...]`, `[g:...]`) are not the queue's."""
    if re.fullmatch(r"\s*[+-]?[0-9]+\s*", str(value)):
        return limit_count(value) or None
    m = re.search(r"\[o:PBS_ALL=([0-9]+)\]", str(value or ""))
    return int(m.group(1)) if m else None


pbs_commands = PbsCommands()


def _by_host(vnodes: list[Node], hosts: list[str]) -> list[Node]:
    """The vnodes of one host (`resources_available.host`: a host split by socket or
    board, `gpu1[0]`, `gpu1[1]`) as that host: a chunk may take its resources from several
    vnodes of one host, never from two hosts, and running jobs name hosts (`exec_host`).
    Only the vnodes that take jobs count, while any does; a host of one vnode is kept."""
    def takes_jobs(n: Node) -> bool:  # PBS states that take none (`offline,down` ...)
        return not set(re.split(r"[,\s]+", n.state.lower())) & {
            "down", "offline", "state-unknown", "unresolvable", "stale", "maintenance",
            "unknown"}

    groups: dict[str, list[Node]] = {}
    for n, h in zip(vnodes, hosts, strict=True):
        groups.setdefault(h, []).append(n)
    out = []
    for host, parts in groups.items():
        if len(parts) == 1:
            out.append(parts[0])
            continue
        up = [n for n in parts if takes_jobs(n)] or parts
        states = list(dict.fromkeys(n.state for n in up))
        out.append(Node(
            name=host, state="free" if "free" in states else states[0],
            cpus=sum(n.cpus for n in up), cpus_allocated=sum(n.cpus_allocated for n in up),
            memory_mb=sum(n.memory_mb for n in up),
            memory_allocated=sum(n.memory_allocated for n in up), gpus=sum(n.gpus for n in up),
            gpus_allocated=sum(n.gpus_allocated for n in up),
            gpu_type=next((n.gpu_type for n in up if n.gpu_type), None),
            features=sorted({f for n in up for f in n.features}),
            partitions=list(dict.fromkeys(q for n in parts for q in n.partitions)),
            architecture=next((n.architecture for n in up if n.architecture), None),
            reason=next((n.reason for n in up if n.reason), None)))
    return out
