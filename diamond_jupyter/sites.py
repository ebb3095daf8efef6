"""A Site = a transport + a scheduler dialect + discovery + the queue snapshot."""

from __future__ import annotations

import asyncio
import base64
import binascii
import enum
import posixpath
import re
import shlex
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .accounting_turns import AccountingTurns
from .config import SiteConfig, unknown_site_message, workdir_variable
from .dialects import get_commands, get_script_dialect
from .dialects.base import (
    PrivateArgv,
    Rendered,
    private_lines,
    private_shell,
    private_values,
)
from .dialects.body import FLUX_COPIES as FLUX_CC
from .dialects.flux_commands import (
    array_submit_script,
    array_tasks,
    fold_array_records,
    parse_array_submit,
    queued_tasks,
    refuse_unsure_tasks,
    unsure_tasks,
)
from .dialects.flux_ids import flux_id_value
from .dialects.flux_script import array_refusal as flux_array_refusal
from .dialects.flux_script import orphan_directive
from .dialects.outputs_common import (
    MessagesOnly,
    array_task_ids,
    count_array_tasks,
    fold_array_tasks,
    outcome_rank,
)
from .dialects.pbs_commands import TOKEN_VARIABLE, subjob_of
from .dialects.pbs_script import TARGET_FLAVOR
from .dialects.scripts_common import unusable_dependency
from .dialects.staging import STAGING_NOTES
from .digits import ascii_digits
from .discovery_site import SiteDiscovery
from .log_lines import one_line_logger
from .model import (
    BadInput,
    Dependency,
    DiamondError,
    Job,
    JobSpec,
    JobState,
    JobStatus,
    SiteError,
    SiteSnapshot,
    utcnow,
)
from .model import task_ids as task_ids_of
from .sections import batch_sections, fresh_marker, section_end
from .transports import CommandFailed, CommandTimeout, OutputTooLarge, Transport, make_transport
from .transports.base import CommandResult, FileStat, result_or_raise
from .wrapper import hedge_gate_file, output_offsets_file, wrapper_prologue

log = one_line_logger(__name__)

SEP = "@@diamond-section@@"
RETRY_UNREACHABLE_S = 3.0  # an unreachable site is asked again after this, whatever max_age
QUERY_TIMEOUT_S = 60.0  # a batch of scheduler queries (at most the site's command timeout)
QUEUE_UNREAD = "queue_unread"  # in the snapshot outputs: why the queue was not read

TAIL_MAX_BYTES = 1 << 20
RECORD_LINES = 1 << 20  # a Flux array's record read whole (within TAIL_MAX_BYTES)


class EventChannel(enum.Enum):
    """Whether jobs report their own start and end through the site's event file, which the
    monitor follows: NONE (it polls only), OPTIONAL (the channel may be refused, e.g. a
    slurmrestd site's file door running no command: counted on only while its stream is
    up), ALWAYS."""
    NONE = "none"
    OPTIONAL = "optional"
    ALWAYS = "always"


def last_lines(text: str, n: int) -> str:
    """The last `n` newline-ended lines of `text`, as `tail -n` counts them."""
    body, nl = (text[:-1], "\n") if text.endswith("\n") else (text, "")
    return "\n".join(body.split("\n")[-n:]) + nl if text else ""


@dataclass
class Submitted:
    native_id: str
    script_path: str
    stdout_path: str | None
    stderr_path: str | None
    warnings: list[str]
    # a job array a Flux site runs as one job per task: each task's id by its index
    tasks: dict[str, str] | None = None


# the tail of a job's stderr read for how it ended (`_log_endings`): flux-shell's lines
# come last, after the job's own output
ENDING_LOG_LINES = 50
ENDING_LOG_BYTES = 16384
ENDING_LOGS_KEPT = 1024  # the endings read so remembered at most (then forgotten at once)
UNSURE_ASKED = 8  # accounting records asked again alone, per query (see _ask_unsure_alone)
# seconds before accounting is asked again about the same vanished tasks it did not list
# (they are asked at once when another task vanishes)
TASKS_REASKED_AFTER_S = 120.0
MAX_SAID_MESSAGES = 256  # distinct poll messages remembered as said (see Site._read)
NAME_KEPT = 40  # characters of the user's job name kept (the token may be appended)
# where a shell script starts a command: its start, after ; & | ( ` { ! or a newline, after
# then/do/else/exec/time, or after `timeout [OPTION [VALUE]...] DURATION`
_COMMAND_LEAD = (r"(?:^|[;&|(`{!\n]|\b(?:then|do|else|exec|time)\b"
                 r"|\btimeout(?:\s+-\S+(?:\s+[^\s-]\S*)?)*\s+[0-9]\S*)\s*")


def with_command_paths(script: str, paths: dict[str, str]) -> str:
    """`script` (a `sh -c` wrapper's fixed text) with each program of `paths` run from its
    path, shell-quoted, wherever the script starts it as a command (`qconf -sql`,
    `$(qconf -sql)`, `exec qsub`, `timeout 10 sacctmgr`); other mentions stay, and so does
    every single-quoted text (an awk program, a value shlex.quote gave)."""
    parts = re.split(r"('[^']*')", script)  # odd indices: the single-quoted texts
    for name, path in paths.items():
        pattern = re.compile(f"({_COMMAND_LEAD}){re.escape(name)}(?=[\\s;&|)`]|$)")
        quoted = shlex.quote(path)
        parts = [p if n % 2 else pattern.sub(lambda m, q=quoted: m.group(1) + q, p)
                 for n, p in enumerate(parts)]
    return "".join(parts)


def token_tag(token: str) -> str:
    """How the token appears in a scheduler comment."""
    return f"diamond:{token}"


def bears_token(status: JobStatus, token: str) -> bool:
    """Whether a listed job carries the idempotency `token`, wherever a site keeps it: the
    name's suffix, the comment, or the environment (a name cut to the site's limit)."""
    return ((status.name or "").endswith(f".dmd-{token}")
            or token_tag(token) in (status.comment or "") or status.token == token)


def scheduler_name(name: str | None, token: str) -> str:
    return f"{name or 'job'}.dmd-{token}"


def prepared_notes(spec: JobSpec | None) -> list[str]:
    """What `Site.prepare` changed or left out to fit the site, one line each (staging lines,
    modules renamed, the name, body lines), from the prepared spec's metadata."""
    meta = spec.metadata if spec is not None else {}
    return [str(n) for key in (STAGING_NOTES, "module_rewrites", "name_notes", "body_notes")
            for n in meta.get(key) or []]


def _sh_path(path: str) -> str:
    """A path quoted for sh; a leading "~/" stays expandable."""
    return "~/" + shlex.quote(path[2:]) if path.startswith("~/") else shlex.quote(path)


def enter_dir(path: str) -> str:
    """Shell that moves into `path` when it exists (and stays put otherwise): a submit
    command run there makes it the job's submit directory ($SLURM_SUBMIT_DIR,
    $PBS_O_WORKDIR, $LS_SUBCWD, $SGE_O_WORKDIR, Flux's cwd)."""
    return f"cd -- {_sh_path(path)} 2>/dev/null || :"


def carries_a_token(status: JobStatus) -> bool:
    """Whether a scheduler record carries an idempotency token (comment, name suffix, or
    PBS's environment): a job some engine submitted."""
    return token_tag("") in (status.comment or "") or ".dmd-" in (status.name or "") \
        or bool(status.token)


def owns(status: JobStatus, job: Job) -> bool:
    """Whether a scheduler record can be `job`'s, when its native id may have been reused.
    A record carrying a token (comment, or name suffix) is the job with that token. One
    carrying none (accounting keeps neither comment nor the scheduler-side name) cannot be
    told apart: it is the newest job's, never a job whose native id went to a newer one."""
    if carries_a_token(status):
        return carries_token(status, job)
    return not job.reused_by


def carries_token(status: JobStatus, job: Job) -> bool:
    return bool(job.token) and bears_token(status, job.token or "")


def vanished_tasks(seen: list[JobStatus], following: Collection[Job],
                   awaited: Callable[[], dict[str, set[str]]]) -> dict[str, set[str]]:
    """The awaited tasks of each followed array the queue lists not ended (`seen`) that it
    no longer lists, though they were last seen not ended (the stored task states): by
    the array's native id. `awaited` is called only when there are such tasks."""
    listed = {s.native_id: s for s in seen if not s.state.terminal}
    gone: dict[str, set[str]] = {}
    for job in following:
        st = listed.get(job.native_id or "")
        if st is None or not job.tasks:
            continue
        now = st.tasks or {}
        if left := {t for t, state in job.tasks.items() if t not in now
                    and not (state.terminal and state != JobState.UNKNOWN)}:
            gone[st.native_id] = left
    if not gone:
        return {}
    wanted = awaited()
    return {a: left & wanted[a] for a, left in gone.items() if left & wanted.get(a, set())}


def ended_tasks(records: list[JobStatus], vanished: dict[str, set[str]],
                array_of: Callable[[str], str | None] | None) -> dict[str, dict[str, JobState]]:
    """The states accounting `records` give the `vanished` tasks (array's native id ->
    indexes), those ended only: a task's record (Slurm's `123_4`, LSF's `123[4]`, PBS's
    subjob `123[4].server`) by its array's id and its index."""
    ended: dict[str, dict[str, JobState]] = {}
    for r in records:
        if not r.state.terminal or r.state == JobState.UNKNOWN:
            continue
        task = subjob_of(r.native_id)
        if task is None and array_of is not None and (a := array_of(r.native_id)):
            ids = array_task_ids(r.native_id) or ()
            if len(ids) == 1 and len(ids[0]) == 1:
                task = (a, str(ids[0][0]))
        if task is not None and task[1] in vanished.get(task[0], ()):
            ended.setdefault(task[0], {})[task[1]] = r.state
    return ended


def _same_run(queued: JobStatus, acct: JobStatus) -> bool:
    """Can a queue record and an accounting record be the same job (ids may be reused)?"""
    def agree(a: object, b: object) -> bool:
        return a is None or b is None or a == b
    return (queued.native_id == acct.native_id and agree(queued.started_at, acct.started_at)
            and agree(queued.name, acct.name))


def _array_outcome(acct: JobStatus, queued: list[JobStatus], arrays: set[str]) -> JobStatus:
    """An ended array's accounting record, unless the queue showed a task failing that
    accounting missed (a job-completion log keeps each task under an id of its own, so the
    array's id finds only one of them): then the queue's outcome, with accounting's end."""
    if acct.native_id not in arrays:
        return acct
    q = next((s for s in queued if s.native_id == acct.native_id and s.state.terminal), None)
    if q is None or outcome_rank(q.state) <= outcome_rank(acct.state):
        return acct
    return q.model_copy(update={"ended_at": max(filter(None, (q.ended_at, acct.ended_at)),
                                                default=None)})


# what a site's description says for an unset `allowed_partitions`
EVERY_PARTITION = "every partition"


class Site:
    """Everything the engine does on one cluster; knows its scheduler through the dialect."""

    def __init__(self, cfg: SiteConfig, transport: Transport | None = None,
                 capability_ttl_s: float = 60.0, private_vars: Iterable[str] = ()) -> None:
        """`private_vars`: this process's environment variables no local command gets."""
        self.cfg = cfg
        self.name = cfg.name
        self.transport = transport or make_transport(cfg.transport, site=cfg.name,
                                                     private_vars=private_vars)
        # its scheduler's times without a zone (sacct's, scontrol's StartTime=...) are read
        # in the cluster's zone its entry gives, else the engine's
        self.commands = get_commands(cfg.scheduler, jobcomp=cfg.jobcomp, flavor=cfg.flavor,
                                     gpu_complex=cfg.gpu_complex, tz=cfg.metadata_zone())
        self.script = get_script_dialect(cfg.scheduler)
        self.capability_ttl_s = capability_ttl_s
        self._snapshot: SiteSnapshot | None = None
        self._snapshot_at = 0.0
        # called with each snapshot taken (not a cached one), e.g. to keep a usage series
        self.snapshot_observers: list[Callable[[SiteSnapshot], None]] = []
        self._caps: dict[str, str] = {}
        self._caps_at = -1e9
        self._lock = asyncio.Lock()
        # followed arrays still queued (Grid Engine): the task count the queue showed when
        # their ended tasks were read from accounting, and those records
        self._task_records: dict[str, tuple[int, list[JobStatus]]] = {}
        # whose turn it is in an accounting query that reaches only some jobs (tracejob)
        self._accounting_turns = AccountingTurns()
        # each followed array's awaited tasks that left the queue unseen ended: the set last
        # asked of accounting, and when
        self._tasks_asked: dict[str, tuple[frozenset[str], float]] = {}
        # the reason a job's stderr tail gave it (read once), where the dialect says how a
        # job ended from it (`log_ending_wanted`: Flux's kernel OOM kills), by native id
        self._ending_logs: dict[str, str | None] = {}
        # the messages a job poll or lookup read around its records, each logged once
        self._said_messages: set[str] = set()
        self._home: str | None = None
        self._login: str | None = None  # the login's user name ("" once it cannot be told)
        self._uid: str | None = None  # the login's user number (likewise)
        self._workdir_base: str | None = None  # the value of workdir's $VAR, when it has one
        self._uploaded: dict[str, Rendered] = {}  # token -> its script, written by upload()
        self.scheduler_commands = 0  # how many scheduler invocations this process made
        self.discovery = SiteDiscovery(self)  # what the site has, found live (TTL cache)
        # the server's version and the job-name limit it implies (PBS: `pbs_version` from
        # the snapshot's or discovery's server query); the sites file's max_job_name wins
        self.scheduler_version: str | None = None
        self._name_limit: int | None = None
        self._name_limit_read = False

    # -- logins (sites whose door asks for a one-time code) ------------------
    def set_interactive_handler(self, ask: Any) -> None:
        """How the transport asks the user for a one-time code (None: it never asks)."""
        if hasattr(self.transport, "interactive_handler"):
            self.transport.interactive_handler = ask

    def use_login_holder(self, use: bool) -> None:
        """Whether connections go through a login holder (`keep_login`) when one is there."""
        if hasattr(self.transport, "use_holder"):
            self.transport.use_holder = use

    async def login(self, ask: Any = None) -> bool:
        """Connect now, one attempt, asking `ask` for a code if wanted; True: a new connection."""
        login = getattr(self.transport, "login", None)
        return bool(await login(ask)) if login is not None else False

    async def keep_login(self, idle_s: float, ask: Any = None) -> dict[str, Any]:
        """Log in and leave a holder keeping the connection for later processes until unused
        `idle_s` seconds (math.inf: until `end_kept_login`; SSH only)."""
        hold = getattr(self.transport, "keep_login", None)
        if hold is None:
            raise BadInput(f"site {self.name}: a login can be kept only on an ssh transport, "
                           f"and this site's is {self.cfg.transport.kind}")
        return await hold(idle_s, ask)

    def ssh_config_keeps(self) -> dict[str, Any] | None:
        """What the user's ssh_config says of keeping the login (ControlPersist; SSH only)."""
        read = getattr(self.transport, "ssh_config_keeps", None)
        return read() if read is not None else None

    async def end_kept_login(self) -> bool:
        """End the login holder (`keep_login`); False when none was running or none can be."""
        release = getattr(self.transport, "end_kept_login", None)
        return bool(await release()) if release is not None else False

    @property
    def needs_login(self) -> bool:
        return bool(getattr(self.transport, "needs_login", False))

    # -- paths --------------------------------------------------------------
    async def home(self) -> str:
        """The login's home directory on the site (asked once, then remembered); with it the
        variable a `workdir: $VAR/...` starts with (e.g. $SCRATCH), in the same command."""
        if self._home is None:
            var = workdir_variable(self.cfg.workdir)
            # `var` is an identifier (the sites file's check), so it can sit in the script
            script = 'printf "%s\\n" "$HOME"' + (f' "${{{var}}}"' if var else "")
            res = await self.transport.run(["sh", "-c", script], check=True, timeout=30.0)
            home, _, value = res.stdout.strip("\n").partition("\n")
            home = home.strip()
            if not home.startswith("/"):
                raise SiteError(f"{self.name}: cannot tell the home directory (got {home!r})")
            if var:
                value = value.strip()
                if not value.startswith("/"):
                    raise SiteError(f"{self.name}: workdir {self.cfg.workdir} needs ${var}, "
                                    f"which the login's environment on the site does not set "
                                    f"to an absolute path (got {value!r}); give the path")
                self._workdir_base = value.rstrip("/") or "/"
            self._home = home.rstrip("/") or "/"
        return self._home

    async def know_home(self, *paths: str | None) -> None:
        """Ask for the home only when the workdir or one of `paths` needs it."""
        wd = self.cfg.workdir
        if not wd.startswith("/") or any(p and not p.startswith("/") for p in paths):
            await self.home()

    async def resolve(self, path: str) -> str:
        """`expand`, asking the site for its home first when the path needs it."""
        if path == "~" or path.startswith("~/"):
            await self.home()
        return self.expand(path)

    def expand(self, path: str) -> str:
        """"~" and "~/x" mean the login's home on the site, for every path the engine uses
        (rendered directives, the event file, listings, tails); other paths stay as given.
        `await home()` first when the path may start with "~"."""
        if path != "~" and not path.startswith("~/"):
            if path.startswith("~"):
                raise BadInput(f"{self.name}: ~user paths are not supported: {path!r}")
            return path
        if self._home is None:
            raise RuntimeError(f"{self.name}: Site.home() must be awaited before expand()")
        return self._home.rstrip("/") + path[1:]

    @property
    def workdir(self) -> str:
        """The engine's directory on the site, absolute (a relative one is in the home:
        commands run there, but jobs run in their own directories)."""
        wd = self.cfg.workdir
        var = workdir_variable(wd)
        if var:
            if self._workdir_base is None:
                raise RuntimeError(f"{self.name}: Site.home() must be awaited before workdir "
                                   f"(${var})")
            return self._workdir_base.rstrip("/") + wd[wd.index("/"):] if "/" in wd \
                else self._workdir_base
        return self.expand(wd if wd.startswith(("/", "~")) else f"~/{wd}")

    @property
    def accounting_reach(self) -> str | None:
        """How far back the scheduler's accounting was read for a job the queue no longer
        lists (bhist's event log files, tracejob's days), where that is bounded."""
        return self.commands.accounting_reach

    @property
    def event_file(self) -> str:
        return f"{self.workdir}/events.log"

    def job_dir(self, token: str) -> str:
        return f"{self.workdir}/jobs/{token}"

    def working_directory(self, given: str | None, token: str) -> str:
        """Where a job runs, absolute: `given` as written when absolute, in the home when
        "~/..." or relative (`await know_home(given)` first), else the job's own directory."""
        if not given:
            return self.job_dir(token)
        if given.startswith("/"):
            return given
        home_relative = given if given.startswith("~") else f"~/{given}"
        return posixpath.normpath(self.expand(home_relative))  # no '..' (check_spec): ./ only

    def output_path(self, token: str, stream: str) -> str:
        """Where a job's `stream` (stdout, stderr) goes when the user named no file."""
        return f"{self.job_dir(token)}/{stream}.log"

    def describe(self) -> dict[str, Any]:
        """The site's configuration as the faces show it (the transport described by itself:
        no secrets)."""
        return self.cfg.model_dump(exclude={"transport"}) | {
            # unset allows every partition: said so, not shown as null
            "allowed_partitions": EVERY_PARTITION if self.cfg.allowed_partitions is None
            else self.cfg.allowed_partitions,
            "transport": self.transport.describe()}

    # -- preparing a job -----------------------------------------------------
    def prepare(self, spec: JobSpec, token: str, hedged: bool = False) -> JobSpec:
        """The spec as submitted: the wrapper before the body, the token in the comment,
        the job's own directory for what the user left unset, every path absolute ("~/"
        expanded with the home: `await know_home(...)` first), and the partition and
        account the site's policy gives. `hedged`: a copy of a hedged job, whose wrapper
        waits for `decide_hedge` before the body runs."""
        if (why := unusable_dependency(spec, self.cfg.scheduler, self.name)) is not None:
            raise BadInput(why)
        jd = self.job_dir(token)
        base = (spec.name or "job").replace(" ", "_")[:NAME_KEPT]
        notes = self.name_notes(spec.name, base)
        prologue = (wrapper_prologue(self.event_file, token, f"{jd}/secret",
                                     hedge_gate_file(jd) if hedged else None)
                    if self.event_channel is not EventChannel.NONE else "")
        body = spec.script if spec.script is not None else (spec.command or "")
        if spec.script is None and spec.command:
            body = spec.command + "\n"
        body, body_notes = self._body_for_site(spec, body)
        if self.cfg.scheduler == "flux" and (orphan := orphan_directive(body)):
            raise BadInput(f"site {self.name!r} (flux): {orphan}")
        if self.cfg.scheduler == "flux" and (array := flux_array_refusal(spec)):
            raise BadInput(f"site {self.name!r} (flux): {array}")  # --force too
        upd: dict[str, Any] = {
            "name": base,  # the user's name; the token goes in the comment (or is added)
            "comment": f"{token_tag(token)} {spec.comment or ''}".strip(),
            "script": prologue + body,
            "command": None,
            "working_directory": self.working_directory(spec.working_directory, token),
            "stdout": self.expand(spec.stdout or self.output_path(token, "stdout")),
        }
        if spec.stdout is None and spec.stderr is None:  # the user chose neither: keep apart
            upd["join_output"] = False
            upd["stderr"] = self.output_path(token, "stderr")
        elif not spec.join_output:
            upd["stderr"] = self.expand(spec.stderr or self.output_path(token, "stderr"))
        upd["queue"] = self.partition(spec.queue)
        if not spec.account and self.cfg.default_account:
            upd["account"] = self.cfg.default_account
        if notes:  # a name changed to fit is said, never silent (`name_notes`)
            upd["metadata"] = spec.metadata | {"name_notes": notes}
        if body_notes:  # so is a body line kept for another scheduler
            upd["metadata"] = upd.get("metadata", spec.metadata) | {"body_notes": body_notes}
        if spec.metadata.get("body_dialect") or (spec.source_dialect and
                                                 spec.source_dialect != self.cfg.scheduler):
            upd["metadata"] = upd.get("metadata", spec.metadata) | {
                "body_dialect": self.cfg.scheduler}
        return spec.model_copy(update=upd)

    def _body_for_site(self, spec: JobSpec, body: str) -> tuple[str, list[str]]:
        """A script written for another scheduler (a PBS step on a Slurm site) gets this
        site's variables and launchers, as `diamond translate` gives them (`mpiexec -n
        $PBS_NP` ran `mpiexec -n` on Slurm, `$LSB_JOBID` was empty); what has no equivalent
        is kept and reported, one note a line."""
        # a body translated for an earlier site (a job moved elsewhere) is in that one's terms
        source = spec.metadata.get("body_dialect") or spec.source_dialect
        target = self.cfg.scheduler
        if not source or source == target or not body:
            return body, []
        from .dialects.body import flux_copies, one_task_cpus, program_notes, translate_body

        try:
            # a Flux site's array tasks read FLUX_JOB_CC, as a body translated for one (a
            # job moved on from there) does: there it is the array's index
            new, notes = translate_body(body, source, target,
                                        one_task_cpus=one_task_cpus(spec),
                                        copies=flux_copies(spec) or bool(
                                            "flux" in (source, target) and spec.array),
                                        shell=spec.shell)
            notes += program_notes(body, source, target, spec.shell)
        except KeyError:  # a dialect the body table does not know: kept as written
            return body, []
        return new, [f"{n} (the {source} script's body, run on {self.name})" for n in notes]

    def name_notes(self, given: str | None, kept: str) -> list[str]:
        """One line per change the job's name goes through on its way to this site's
        scheduler: blanks to '_' and at most NAME_KEPT characters here, then what the
        scheduler refuses (its dialect's `job_name`). Empty when it arrives as given."""
        notes = []
        if given is not None and kept != given:
            # a name pasted thousands of characters long is named by its start and length
            shown = repr(given) if len(given) <= 2 * NAME_KEPT else \
                f"{given[:NAME_KEPT]!r}... ({len(given)} characters)"
            notes.append(f"job name {shown} is submitted to {self.name} as {kept!r} (blanks "
                         f"become '_', at most {NAME_KEPT} characters are kept)")
        held = self.script.job_name(kept)
        if held != kept:
            notes.append(f"job name {kept!r} is {held!r} in {self.name}'s queue (a name "
                         f"{self.cfg.scheduler} accepts)")
        return notes

    async def decide_hedge(self, token: str, decision: str) -> None:
        """Write a hedged copy's decision ("go" or "no") where its wrapper waits: its
        private job directory, whole (a rename), so it never reads half a line."""
        if decision not in ("go", "no"):
            raise BadInput(f"a hedge decision is go or no, not {decision!r}")
        await self.know_home()
        jd = self.job_dir(token)
        shell = ('umask 077 && mkdir -p -- "$1" && printf "%s\\n" "$2" > "$3.tmp" && '
                 'mv -f -- "$3.tmp" "$3"')
        await self.run(["sh", "-c", shell, "sh", jd, f"{decision} {token}",
                        hedge_gate_file(jd)], check=True, scheduler=False, timeout=30.0)

    def _lacks_partition(self, name: str) -> bool:
        """Whether the last snapshot lists the site's partitions without `name` (renamed or
        retired since the sites file was written); False when none has listed them."""
        known = {p.name for p in self._snapshot.partitions} if self._snapshot else set()
        return bool(known) and name not in known

    def _default_partition(self) -> str | None:
        """The sites file's `default_partition`, unless the site lacks it: then None, the
        scheduler's own default, as placement says ("not used: the default is ...";
        sbatch refused the name)."""
        name = self.cfg.default_partition
        return None if name and self._lacks_partition(name) else name

    def partition(self, queue: str | None) -> str | None:
        """The partition a job goes to, within the site's `allowed_partitions`: without one
        named, the site's default partition when allowed, else the first allowed one the
        site has (never the scheduler's own default, which may be a forbidden one)."""
        allowed = self.cfg.allowed_partitions
        chosen = queue or self._default_partition()
        if allowed is None:
            return chosen
        if not allowed:
            raise BadInput(f"site {self.name!r} allows no partition (allowed_partitions is "
                           "empty)")
        if queue is None and chosen not in allowed:
            chosen = next((p for p in allowed if not self._lacks_partition(p)), allowed[0])
        if chosen not in allowed:
            raise BadInput(f"partition {chosen!r} is not allowed on site {self.name!r} "
                           f"(allowed: {', '.join(allowed)})")
        return chosen

    # -- running ------------------------------------------------------------
    @staticmethod
    def _program_index(argv: list[str]) -> int:
        """Where the program is in `argv`, past an `env -u VAR ...` prefix; in a shell
        wrapper (`sh -c SCRIPT PROGRAM ARG...`, whose script runs it as "$0"), its $0."""
        i = 0
        if argv and argv[0] == "env":
            i = 1
            while i < len(argv) and argv[i] == "-u":
                i += 2
        if argv[i:i + 2] == ["sh", "-c"] and len(argv) > i + 3:
            i += 3
        return i

    @staticmethod
    def _shell_script_index(argv: list[str]) -> int | None:
        """Where a shell wrapper's script is in `argv` (`[env -u VAR ...] sh -c SCRIPT`)."""
        i = 0
        if argv and argv[0] == "env":
            i = 1
            while i < len(argv) and argv[i] == "-u":
                i += 2
        return i + 2 if argv[i:i + 2] == ["sh", "-c"] and len(argv) > i + 2 else None

    def _programs_run(self, argv: list[str]) -> set[str]:
        """The configured programs `argv` runs: its program, and those its shell wrapper's
        script starts."""
        i = self._program_index(argv)
        names = {argv[i]} if i < len(argv) and argv[i] in self.cfg.commands else set()
        if (s := self._shell_script_index(argv)) is not None:
            names |= {n for n in self.cfg.commands
                      if with_command_paths(argv[s], {n: "/"}) != argv[s]}
        return names

    async def _know_command_home(self, argv: list[str]) -> None:
        """Ask for the home when a program `argv` runs has a configured path relative to
        it, so that `_argv(..., elsewhere=True)` can make that path absolute."""
        if any(not self.cfg.commands[n].startswith("/") for n in self._programs_run(argv)):
            await self.home()

    def _command_path(self, name: str, elsewhere: bool) -> str:
        """The configured path of program `name` as a command line gives it."""
        path = self.cfg.commands[name]
        # commands run in the login's home, where ~/x (never expanded once quoted) is ./x
        path = "./" + path[2:] if path.startswith("~/") else path
        if elsewhere and "/" in path and not path.startswith("/"):
            path = self.expand("~/" + path.removeprefix("./"))
        return path

    def _argv(self, argv: list[str], *, elsewhere: bool = False) -> list[str]:
        """Apply configured command paths (e.g. sbatch -> /opt/slurm/bin/sbatch), also to
        the programs a `sh -c` wrapper's script starts (quoted there). `elsewhere`: the
        command runs outside the home, so a path relative to it is made absolute
        (`await _know_command_home(argv)` first)."""
        out = list(argv)
        i = self._program_index(out)
        if i < len(out) and out[i] in self.cfg.commands:
            out[i] = self._command_path(out[i], elsewhere)
        if (s := self._shell_script_index(out)) is not None and self.cfg.commands:
            out[s] = with_command_paths(out[s], {n: self._command_path(n, elsewhere)
                                                 for n in self.cfg.commands})
        return out

    @property
    def _run_fast(self):
        """Submits and scheduler queries are short, bounded, non-streaming: the transport's
        fast path (SSH: the site's long-lived shell; busy -> a plain channel)."""
        return getattr(self.transport, "run_fast", self.transport.run)

    async def run(self, argv: list[str], *, stdin: bytes | None = None, check: bool = True,
                  scheduler: bool = True, timeout: float | None = None,
                  cwd: str | None = None, paths_applied: bool = False):
        """`cwd`: an absolute directory the command runs in, when it exists (else the home,
        as every command). `timeout` None: the site's `command_timeout_s` (a submit, cancel or
        release: CommandTimeout once it has passed); queries pass `query_timeout_s`.
        `paths_applied`: `argv` already runs its programs from their configured paths (a
        script around a submit line `_argv` gave): left as it is."""
        timeout = self.cfg.transport.command_timeout_s if timeout is None else timeout
        if scheduler:
            self.scheduler_commands += 1
        preamble = self.cfg.preamble
        if cwd:
            await self._know_command_home(argv)
            preamble = f"{preamble.rstrip()}\n{enter_dir(cwd)}".lstrip("\n")
        mapped = list(argv) if paths_applied else self._argv(argv, elsewhere=bool(cwd))
        if private_values(argv):  # values only on stdin (a query's own stdin is unused)
            if stdin is not None:
                raise BadInput(f"{mapped[0]}: a command with private values takes no stdin")
            mapped, stdin = private_shell(PrivateArgv(mapped, private_values(argv)))
        return await self._run_fast(mapped, stdin=stdin, env=self.cfg.env, preamble=preamble,
                                    check=check, timeout=timeout)

    async def job_id_spelled(self, native_id: str, form: str) -> str:
        """`native_id` in `form` as the scheduler spells it (flux's words or emoji, from its
        own lists); SiteError saying why not (a scheduler with no such spelling included)."""
        argv_of = getattr(self.commands, "id_argv", None)
        if argv_of is None:
            raise SiteError(f"{self.name}: its scheduler has no {form} form of a job id")
        argv = argv_of(native_id, form)
        res = await self.run(argv, check=False, timeout=self.query_timeout_s)
        if res.exit_status != 0:
            why = res.stderr.strip().splitlines()[-1:] or [f"exit {res.exit_status}"]
            raise SiteError(f"{' '.join(argv[:4])}: {why[0]}")
        return self.commands.parse_id(res.stdout, form)

    @property
    def query_timeout_s(self) -> float:
        """How long a batch of scheduler queries may take: QUERY_TIMEOUT_S, or the site's
        shorter `command_timeout_s`."""
        return min(QUERY_TIMEOUT_S, self.cfg.transport.command_timeout_s)

    async def run_batch(self, named: dict[str, list[str]]) -> dict[str, str]:
        """Several scheduler commands in ONE remote invocation; outputs split by name. The
        values a command needs off the command line (`PrivateArgv`) are sent on stdin and
        read first, each given to its command alone."""
        reads, parts, values = [], [], []
        marker = fresh_marker(SEP)
        for name, argv in named.items():
            env = private_values(argv)
            r, prefix = private_lines(list(env), first=len(values))
            reads += r
            values += env.values()
            line = shlex.join(self._argv(argv))
            parts.append(f"{prefix + ' ' if prefix else ''}{line} 2>&1; "
                         + section_end(marker, name))
        self.scheduler_commands += len(named)
        stdin = "".join(f"{v}\n" for v in values).encode() if values else None
        try:
            res = await self._run_fast(["sh", "-c", "\n".join(reads + parts)], stdin=stdin,
                                       env=self.cfg.env, preamble=self.cfg.preamble,
                                       timeout=self.query_timeout_s)
        except OutputTooLarge as e:  # "sh printed ...": say which queries it was
            raise OutputTooLarge(
                f"{self.name}: the {', '.join(named)} queries (one batch) printed more than "
                f"{e.cap} bytes on {e.stream} (the transport's max_output_bytes; raise it for "
                "a site this busy): stopped reading them", cap=e.cap, stream=e.stream) from None
        except CommandTimeout:
            raise CommandTimeout(
                f"{self.name}: the {', '.join(named)} queries (one batch) did not answer "
                f"within {self.query_timeout_s:g} s") from None
        out: dict[str, str] = {}
        for name, section, code in batch_sections(res.stdout, marker):
            if code != "0" and code not in self._quiet_codes:
                tail = " ".join(section.split("\n"))[-300:]
                raise SiteError(f"{self.name}: {name} query failed (exit {code}): {tail}")
            out[name] = section
        missing = set(named) - set(out)
        if missing:
            err = res.stderr.strip()[-200:]
            raise SiteError(f"{self.name}: no output for {sorted(missing)}: {err}")
        return out

    # -- discovery ----------------------------------------------------------
    @property
    def last_snapshot(self) -> SiteSnapshot | None:
        """The last snapshot taken, however old, without asking the site (None: none yet)."""
        return self._snapshot

    async def snapshot(self, *, max_age_s: float = 15.0) -> SiteSnapshot:
        """Capabilities and queue in one remote command; cached for `max_age_s`."""
        async with self._lock:
            age = time.monotonic() - self._snapshot_at
            if self._snapshot and age < max_age_s and (
                    self._snapshot.reachable or age < RETRY_UNREACHABLE_S):
                return self._snapshot
            try:
                outputs = await self._snapshot_outputs()
                if "server" in outputs and self.cfg.max_job_name is None:
                    self.learn_server(outputs["server"])
                queue_error = outputs.pop(QUEUE_UNREAD, None)
                snap = self.commands.parse_snapshot(self.name, outputs)
                said = set(self._snapshot.warnings) if self._snapshot else set()
                for warning in snap.warnings:  # records left out: said once, when new
                    if warning not in said:
                        log.warning("%s", warning)
                if queue_error is not None:  # the site answered; only its queue is unknown
                    snap = snap.model_copy(update={"jobs": [], "queue_error": queue_error})
            except SiteError as e:
                failed_at = utcnow()
                snap = SiteSnapshot(site=self.name, reachable=False, error=str(e),
                                    taken_at=failed_at, unreachable_since=failed_at)
                if self._snapshot:  # keep the last known capabilities, mark unreachable
                    last = self._snapshot
                    snap = last.model_copy(update={
                        "reachable": False, "error": str(e), "taken_at": snap.taken_at,
                        # placement says how old the view kept is, and since when
                        "read_at": last.taken_at if last.reachable else last.read_at,
                        "unreachable_since": snap.taken_at if last.reachable
                        else last.unreachable_since or last.taken_at})
            # a failure is cached too (briefly): callers see the site unreachable, never
            # the last good snapshot
            self._snapshot, self._snapshot_at = snap, time.monotonic()
            for observe in self.snapshot_observers:
                observe(snap)
            return snap

    async def _snapshot_outputs(self) -> dict[str, str]:
        """Capabilities (partitions, nodes) are re-read only after `capability_ttl_s`; the
        queue every time. Both, when needed, in one remote invocation. A batch over the
        transport's output cap (a queue of millions of jobs), or one that timed out, is
        asked again without the queue: when the rest answers, the capabilities stand and the
        queue is unknown with that reason (under QUEUE_UNREAD; its output is then empty,
        which every dialect reads as no job); when the rest fails too (the login or the
        scheduler does not answer at all), the site is unreachable."""
        argvs = self.commands.snapshot_argvs()
        # what the cached outputs make not worth asking (Slurm: sprio, priority/basic)
        if (unasked := getattr(self.commands, "unasked_outputs", None)) is not None:
            skipped = unasked(self._caps)
            argvs = {k: v for k, v in argvs.items() if k not in skipped}
        fresh = time.monotonic() - self._caps_at < self.capability_ttl_s
        live = getattr(self.commands, "live_outputs", frozenset({"queue"}))
        wanted = {k: v for k, v in argvs.items() if k in live or not fresh}
        try:
            outputs = await self.run_batch(wanted)
        except (OutputTooLarge, CommandTimeout) as e:
            if "queue" not in wanted:
                raise
            # the queue (and what lists every queued job beside it) is too large or too
            # slow. Too large: the site answered, the rest is asked only if stale. Too
            # slow: the rest, asked anew even when cached, says whether the site answers
            slow = isinstance(e, CommandTimeout)
            rest = {k: v for k, v in (argvs if slow else wanted).items() if k not in live}
            if rest:
                outputs = await self.run_batch(rest)
                fresh = False  # what was just read replaces the cached capabilities
            else:
                outputs = await self._login_answers() if slow else {}
            outputs |= {k: "" for k in live if k in wanted}
            outputs[QUEUE_UNREAD] = queue_too_large(self.name, e) \
                if isinstance(e, OutputTooLarge) else queue_timed_out(self.name,
                                                                      self.query_timeout_s)
        if not fresh:
            self._caps = {k: v for k, v in outputs.items()
                          if k not in live and k != QUEUE_UNREAD}
            self._caps_at = time.monotonic()
        if QUEUE_UNREAD not in outputs:
            outputs |= await self._followup_outputs(outputs)
        return {**self._caps, **outputs}

    async def _followup_outputs(self, outputs: dict[str, str]) -> dict[str, str]:
        """What the dialect asks only when the batch's answer calls for it (Grid Engine: the
        throttles of the arrays waiting in the queue read), never cached; when it does not
        answer, it stays unread (empty: the dialect reads nothing there) and the site's
        log says why."""
        follow = getattr(self.commands, "followup_argvs", None)
        wanted = follow({**self._caps, **outputs}) if follow is not None else {}
        if not wanted:
            return {}
        try:
            return await self.run_batch(wanted)
        except SiteError as e:
            log.warning("%s: %s not read: %s", self.name, ", ".join(wanted), e)
            return {k: "" for k in wanted}

    async def _login_answers(self) -> dict[str, str]:
        """Nothing, once the login ran a command of no cost (SiteError when it does not:
        a dialect whose snapshot is its queue alone cannot tell otherwise)."""
        await self.run(["true"], check=True, scheduler=False, timeout=self.query_timeout_s)
        return {}

    # -- jobs ---------------------------------------------------------------
    def render(self, spec: JobSpec) -> Rendered:
        if self.cfg.scheduler == "pbs" and self.cfg.flavor == "torque":
            # a Torque server takes Torque's requests (`nodes=`, `-t`), not PBS Pro's
            spec = spec.model_copy(update={"metadata": {**spec.metadata,
                                                        TARGET_FLAVOR: "torque"}})
        if self.cfg.gpu_complex:  # the job's GPUs asked by the site's own complex
            spec = spec.model_copy(update={"metadata": {**spec.metadata,
                                                        "sge_gpu": self.cfg.gpu_complex}})
        if self.flux_array(spec) is not None:  # one flux batch per task: none has an array
            spec = spec.model_copy(update={"array": None})
        return self.script.render_script(spec)

    @property
    def token_in_comment(self) -> bool:
        """Whether the scheduler keeps the token in the job's comment (else in its name)."""
        return bool(getattr(self.commands, "token_in_comment", False))

    def scheduler_spec(self, spec: JobSpec, token: str) -> JobSpec:
        """The spec as the scheduler gets it: the token in the comment where the scheduler
        has one, else appended to the name (`NAME.dmd-TOKEN`), or, where that is longer
        than the site's `max_job_name`, in the job's environment with the name cut to fit
        (`short_name`); users see the plain name."""
        if self.token_in_comment:
            tag = token_tag(token)
            if tag in (spec.comment or ""):
                return spec
            return spec.model_copy(update={"comment": f"{tag} {spec.comment or ''}".strip()})
        short = self.short_name(spec.name, token)
        if short is not None:
            env = spec.environment.model_copy(update={"variables": {
                **spec.environment.variables, TOKEN_VARIABLE: token}})
            return spec.model_copy(update={"name": short, "comment": None,
                                           "environment": env})
        return spec.model_copy(update={"name": scheduler_name(spec.name, token),
                                       "comment": None})

    @property
    def max_job_name(self) -> int | None:
        """The longest job name the scheduler takes: the sites file's `max_job_name`, else
        what the server's version says (`know_name_limit`); None: no limit known."""
        return self.cfg.max_job_name if self.cfg.max_job_name is not None \
            else self._name_limit

    @property
    def max_job_name_source(self) -> str | None:
        if self.cfg.max_job_name is not None:
            return "configured"
        if self._name_limit is not None:
            return f"discovered: server version {self.scheduler_version}"
        return None

    def learn_server(self, server_output: str) -> None:
        """Read the scheduler server's version, and the job-name limit it implies, from the
        answer to the dialect's server query (`server_argv`)."""
        read = getattr(self.commands, "name_limit", None)
        if read is None:
            return
        self.scheduler_version, self._name_limit = read(server_output)
        self._name_limit_read = True

    async def know_name_limit(self) -> None:
        """Learn the server's job-name limit before a job's name is rendered, once: from
        the last snapshot's server answer, else by its server query alone (bounded by the
        query timeout; a failure leaves it unknown until the next snapshot reads it).
        Nothing to do where the sites file sets it or the token travels in the comment."""
        argv = getattr(self.commands, "server_argv", lambda: None)()
        if self.cfg.max_job_name is not None or self._name_limit_read or argv is None \
                or self.token_in_comment:
            return
        if "server" in self._caps:
            self.learn_server(self._caps["server"])
            return
        self._name_limit_read = True  # asked once; snapshots read it again
        try:
            res = await self.run(argv, check=False, timeout=self.query_timeout_s)
        except SiteError as e:
            log.info("%s: server version not read: %s", self.name, e)
            return
        if res.exit_status == 0:
            self.learn_server(res.stdout)

    def short_name(self, name: str | None, token: str) -> str | None:
        """The job's name cut to the site's `max_job_name`, where the name with the token
        (as the scheduler keeps it) would be longer; None where it fits whole."""
        limit = self.max_job_name
        if limit is None or len(self.script.job_name(scheduler_name(name, token))) <= limit:
            return None
        return self.script.job_name(name or "job")[:limit]

    event_channel = EventChannel.ALWAYS

    def _submit_argv(self, path: str, hold: bool, spec: JobSpec | None) -> list[str]:
        """The submit command; with the job's output paths where the scheduler's submit
        command must be told them (Slurm's qsub wrapper)."""
        if spec is not None and getattr(self.commands, "submit_paths", False):
            return self.commands.submit_argv(path, hold=hold, stdout=spec.stdout,
                                             stderr=None if spec.join_output else spec.stderr)
        return self.commands.submit_argv(path, hold=hold)

    def _submit_line(self, path: str, hold: bool, spec: JobSpec | None = None) -> str:
        """The submit command as shell text, to run in the job's directory (`enter_dir`): a
        command path relative to the home is made absolute (`_know_command_home` first)."""
        argv = self._argv(self._submit_argv(path, hold, spec), elsewhere=True)
        submit = " ".join(_sh_path(a) if a == path else shlex.quote(a) for a in argv)
        if getattr(self.commands, "submit_stdin", False):
            submit += f" < {_sh_path(path)}"
        return submit

    def _write_line(self, jd: str, path: str) -> str:
        """Shell that writes stdin's first line (the secret), then the rest (the script),
        into the job's private directory, under umask 077; every path quoted."""
        sec = _sh_path(f"{jd}/secret")
        return (f"umask 077 && mkdir -p -- {_sh_path(jd)} && chmod 700 -- {_sh_path(jd)} && "
                f"IFS= read -r s && printf '%s\\n' \"$s\" > {sec} && "
                f"cat > {_sh_path(path)} && chmod 700 -- {_sh_path(path)}")

    def _payload(self, spec: JobSpec, token: str, secret: str) -> tuple[Rendered, bytes]:
        """The rendered script, and what travels on stdin: the secret, then the script
        (never on a command line)."""
        if not all(c in "0123456789abcdef" for c in secret):
            raise BadInput("the event secret must be hexadecimal")
        rendered = self.render(self.scheduler_spec(spec, token))
        short = None if self.token_in_comment else self.short_name(spec.name, token)
        if short is not None:
            rendered.warnings.append(
                f"approximated: job name cut to {short!r} ({self.max_job_name} characters, "
                + ("the site's max_job_name" if self.cfg.max_job_name is not None else
                   f"the most server version {self.scheduler_version} takes")
                + f"); the engine's token travels as {TOKEN_VARIABLE} in the job's "
                "environment")
        return rendered, f"{secret}\n".encode() + rendered.script.encode()

    async def upload(self, spec: JobSpec, token: str, *, secret: str = "") -> Rendered | None:
        """Write the job's secret and script to its directory on the site, without
        submitting it, so that a `submit` of the same token runs the submit command alone.
        Nothing runs: it may go ahead while the submit intent is being made durable. None
        (nothing done: `submit` sends both itself) when the transport's fast path is busy,
        where two commands would cost more than one."""
        if getattr(self.transport, "fast_path_busy", lambda: False)():
            return None
        await self.home()
        await self.know_name_limit()
        jd = self.job_dir(token)
        rendered, stdin = self._payload(spec, token, secret)
        await self.run(["sh", "-c", self._write_line(jd, f"{jd}/job.sh")], stdin=stdin,
                       check=True, scheduler=False)
        self._uploaded[token] = rendered
        return rendered

    def forget_upload(self, token: str) -> None:
        """The submit of an uploaded script will not happen (its intent failed)."""
        self._uploaded.pop(token, None)

    async def submit(self, spec: JobSpec, token: str, *, hold: bool = False,
                     secret: str = "") -> Submitted:
        """`secret`: the job's event secret, written to `secret` in its private job
        directory (the wrapper signs its event lines with it)."""
        await self.know_home()
        await self.know_name_limit()
        jd = self.job_dir(token)
        path = f"{jd}/job.sh"
        await self._know_command_home(self._submit_argv(path, hold, spec))
        submit = self._submit_line(path, hold, spec)
        # submitted from the job's working directory, which scripts find as their submit
        # directory (`cd $SLURM_SUBMIT_DIR`, `cd $PBS_O_WORKDIR`: common first lines)
        here = spec.working_directory or jd
        enter = f"{{ {enter_dir(here)}; }} && " if here.startswith(("/", "~/")) else ""
        rendered = self._uploaded.pop(token, None)
        if (array := self.flux_array(spec)) is not None:
            return await self._submit_flux_array(spec, token, array, rendered, hold=hold,
                                                 secret=secret, enter=enter)
        if rendered is not None and not getattr(self.commands, "submit_stdin", False):
            # secret and script are there already (`upload`): the submit command alone,
            # started by no other process
            if path.startswith("/") and here.startswith("/"):
                res = await self.run(self._submit_argv(path, hold, spec), check=True, cwd=here)
            else:  # a "~/" path: relative to the home the command starts in
                res = await self.run(["sh", "-c", f"{enter}exec {submit}"], check=True,
                                     paths_applied=True)
        elif rendered is not None:
            res = await self.run(["sh", "-c", f"{enter}exec {submit}"], check=True,
                                 paths_applied=True)
        else:
            # one round trip: the secret then the script travel on stdin and are written,
            # then submitted, by one remote shell
            rendered, stdin = self._payload(spec, token, secret)
            res = await self.run(
                ["sh", "-c", f"{self._write_line(jd, path)} && {enter}exec {submit}"],
                stdin=stdin, check=True, paths_applied=True)
        native = self.commands.parse_submit(res.stdout)
        if not self.usable_id(native):
            raise SiteError(f"{self.name}: the submit answered with {native!r}, which is not "
                            f"a {self.cfg.scheduler} job id")
        return Submitted(native, path, spec.stdout, spec.stderr, rendered.warnings)

    def _flux_tasks(self, native_ids: list[str], following: Collection[Job]
                    ) -> dict[int, tuple[str, tuple[str, str]]]:
        """The tasks of the followed job arrays among `native_ids` a Flux site runs as jobs
        of their own: each task's id as a number -> (its id, (the array's native id, its
        index)); empty elsewhere."""
        if self.cfg.scheduler != "flux":
            return {}
        asked, out = set(native_ids), {}
        for job in following:
            if job.native_id in asked and (ids := task_ids_of(job)):
                for index, jid in ids.items():
                    if (value := flux_id_value(jid)) is not None:
                        out[value] = (jid, (job.native_id, index))
        return out

    def native_ids_of(self, job: Job) -> list[str]:
        """The scheduler's ids of `job`: each task's of a job array a Flux site runs as
        jobs of their own (a cancel reaches them all), else its own native id."""
        ids = task_ids_of(job)
        return list(ids.values()) if ids else [job.native_id or ""]

    def flux_array(self, spec: JobSpec) -> tuple[list[int], int | None] | None:
        """A job array on a Flux site, which has none: its indexes in order and its `%N`
        limit, for one `flux batch` per task; None for another job or site (a flux
        script's own --cc is refused as flux batch refuses it)."""
        if self.cfg.scheduler != "flux" or spec.array is None or FLUX_CC in spec.metadata:
            return None
        return array_tasks(spec.array.expression)

    async def _submit_flux_array(self, spec: JobSpec, token: str,
                                 array: tuple[list[int], int | None],
                                 rendered: Rendered | None, *, hold: bool, secret: str,
                                 enter: str) -> Submitted:
        """Submit a job array's tasks on a Flux site: the script once to the job's
        directory, then one `flux batch` per index not queued yet, in order, in one remote
        shell. A submit cut short (the server died, the connection dropped) is resumed by
        submitting it again: the tasks queued already, by the record the submit keeps of
        them in the job's directory (and the token in their names for one queued as it was
        cut short: `queued_tasks`), are never submitted twice. The first task's
        id is the job's native id; `tasks` holds each task's id by its index (the record:
        `flux_tasks_record`)."""
        indexes, limit = array
        jd = self.job_dir(token)
        if rendered is None:  # the script and secret written alone: nothing submitted yet
            rendered, stdin = self._payload(spec, token, secret)
            await self.run(["sh", "-c", self._write_line(jd, f"{jd}/job.sh")], stdin=stdin,
                           check=True, scheduler=False)
        found = await self.find_by_token(spec.name, token)
        sub = await self._queue_flux_tasks(spec, token, array, found, hold=hold, enter=enter)
        sub.warnings = rendered.warnings
        return sub

    async def resume_flux_array(self, spec: JobSpec, token: str,
                                found: list[JobStatus]) -> Submitted:
        """A job array's submit on a Flux site cut short (the server died, the connection
        dropped) after it queued the tasks `found` (its token's jobs): the rest queued from
        the script already in the job's directory, none twice; the Submitted of the whole
        array (SiteError when a task is still not queued)."""
        array = self.flux_array(spec)
        if array is None:
            raise BadInput(f"{self.name}: not a job array of a Flux site")
        await self.know_home()
        here = spec.working_directory or self.job_dir(token)
        enter = f"{{ {enter_dir(here)}; }} && " if here.startswith(("/", "~/")) else ""
        return await self._queue_flux_tasks(spec, token, array, found, hold=spec.hold,
                                            enter=enter)

    def flux_tasks_record(self, token: str) -> str:
        """Where the submit of a job array on a Flux site records its tasks' ids: a hidden
        file of the job's directory (the job's default working directory) named with the
        array's token, which no job writes by chance (a plain `tasks` might be its own)."""
        return f"{self.job_dir(token)}/.dmd-tasks-{token}"

    async def read_flux_record(self, token: str, lines: int = RECORD_LINES
                               ) -> tuple[str, bool]:
        """The last `lines` lines of the record of job array `token`'s tasks ("" when there
        is none), and whether it is the job directory's plain `tasks` file an array cut
        short under an earlier version kept (read only when `flux_tasks_record` is missing;
        the job may have written it, so each id in it is checked as the record's are)."""
        text = await self.tail(self.flux_tasks_record(token), lines=lines)
        if text is not None:
            return text, False
        return await self.tail(f"{self.job_dir(token)}/tasks", lines=lines) or "", True

    async def flux_submit_begun(self, token: str) -> bool:
        """Whether the submit of job array `token` on a Flux site began a `flux batch` (its
        record holds a line): flux may have purged every task it queued."""
        return bool((await self.read_flux_record(token, lines=1))[0].strip())

    async def recorded_flux_tasks(self, token: str, indexes: list[int],
                                  found: list[JobStatus] = (), *,
                                  text: str | None = None) -> dict[int, str]:
        """The tasks of a job array on a Flux site its submit recorded as queued (index ->
        id, from `flux_tasks_record`, or its `text` when read already), listed by flux or
        not (flux purges ended jobs); empty where none was. A recorded id flux lists as a
        job that is not the login's or does not carry the array's token (in its name, comment
        or env: `bears_token`; `found`: the jobs that do) is another job's: left out, and
        said."""
        if text is None:
            text = (await self.read_flux_record(token))[0]
        recorded = parse_array_submit(text, indexes)
        ours = {flux_id_value(s.native_id) for s in found}
        unsure = sorted({jid for jid in recorded.values() if flux_id_value(jid) not in ours})
        if not unsure:
            return recorded
        res = await self.run(self.commands.status_argv(unsure), check=False,
                             timeout=self.query_timeout_s)
        listed = self._read(self.commands.parse_status, res.stdout) if res.ok else []
        kept = await self.owned([s for s in listed if bears_token(s, token)],
                                await self.login_user())
        others = {flux_id_value(s.native_id) for s in listed} - \
            {flux_id_value(s.native_id) for s in kept}
        for i, jid in list(recorded.items()):
            if flux_id_value(jid) in others:
                log.warning("%s: the record of array %s names job %s as task %s, but flux "
                            "lists it as another job's (not carrying the array's token): "
                            "left out",
                            self.name, token, jid, i)
                del recorded[i]
        return recorded

    async def _queue_flux_tasks(self, spec: JobSpec, token: str,
                                array: tuple[list[int], int | None], found: list[JobStatus],
                                *, hold: bool, enter: str) -> Submitted:
        """Queue the tasks of a job array on a Flux site that `found` (the jobs carrying its
        token) does not hold yet, in index order, in one remote shell."""
        indexes, limit = array
        path, record = f"{self.job_dir(token)}/job.sh", self.flux_tasks_record(token)
        text, earlier = await self.read_flux_record(token)
        recorded = await self.recorded_flux_tasks(token, indexes, found, text=text)
        queued = queued_tasks(recorded, found, indexes)
        refuse_unsure_tasks(unsure_tasks(text, indexes), queued)
        if len(queued) < len(indexes):
            loop = array_submit_script(indexes, limit, queued, _sh_path(path), hold=hold,
                                       record=_sh_path(record),
                                       # an earlier version's record copied to this one
                                       unrecorded=set(queued) - (set() if earlier
                                                                 else set(recorded)))
            argv = ["sh", "-c", f"{enter.removesuffix(' && ')}\n{loop}".lstrip()]
            await self._know_command_home(argv)
            res = await self.run(self._argv(argv, elsewhere=True), check=False,
                                 paths_applied=True)
            queued |= parse_array_submit(res.stdout, indexes)
            if len(queued) < len(indexes):
                missing = [i for i in indexes if i not in queued]
                said = " ".join(res.stderr.split())[-300:] or f"exit {res.exit_status}"
                raise SiteError(
                    f"{self.name}: {len(queued)} of the array's {len(indexes)} tasks were "
                    f"queued, not task {missing[0]} and those after it ({said}); submitting "
                    "it again queues those alone")
        ids = {str(i): queued[i] for i in indexes}
        return Submitted(queued[indexes[0]], path, spec.stdout, spec.stderr, [], tasks=ids)

    def usable_id(self, native_id: str) -> bool:
        """Whether a job id a site sent has the shape of this scheduler's ids (digits, an
        array's index, a server's name): an id becomes part of the job's id, of commands and
        of the local directory a fetch writes to, so `../x` or `1;id` never gets that far."""
        try:
            self.commands._ids([native_id])
        except BadInput:
            return False
        return True

    @property
    def _quiet_codes(self) -> tuple[str, ...]:
        """Exit statuses of a query that mean "nothing to show", not a failure (Slurm's
        qstat wrapper exits 153 when it printed no job or queue)."""
        return tuple(str(c) for c in getattr(self.commands, "empty_exit_codes", ()))

    async def find_by_name(self, name: str, user: str | None = None) -> list[JobStatus]:
        """The jobs named `name` (`user`'s only, when given: the scheduler's user filter)."""
        argv = self.commands.find_by_name_argv(name, user) if user else \
            self.commands.find_by_name_argv(name)
        res = await self.run(argv, check=False, timeout=self.query_timeout_s)
        if not res.ok and str(res.exit_status) not in self._quiet_codes:
            raise CommandFailed(f"{self.name}: looking a job up by name failed (exit "
                                f"{res.exit_status}): {res.stderr.strip()[-200:]}", res)
        return self.fold_arrays(self._read(self.commands.parse_status, res.stdout))

    def _read(self, parse: Callable[..., list[JobStatus]], stdout: str) -> list[JobStatus]:
        """A job query's records by `parse`, the lines around them that are messages (a
        wrapper's or a locale's warning on every command) said as the site's warnings, each
        distinct one once; a record that cannot be read still raises SiteError (the job
        would otherwise look gone)."""
        messages = MessagesOnly()
        records = parse(stdout, messages)
        for message in dict.fromkeys(messages):
            if message not in self._said_messages:
                if len(self._said_messages) >= MAX_SAID_MESSAGES:  # ever-new text: kept small
                    self._said_messages.clear()
                self._said_messages.add(message)
                log.warning("%s: %s", self.name, message)
        return records

    def job_id_of(self, native_id: str) -> str:
        """The id the engine follows a record under: its array's for an array task's
        record ('123_4', Grid Engine's '9.3'), else its own."""
        array_of = getattr(self.commands, "array_of", None)
        return (array_of(native_id) if array_of else None) or native_id

    def fold_arrays(self, statuses: list[JobStatus]) -> list[JobStatus]:
        """A job array's task records as one status (the scheduler's `array_of` says which
        records are tasks); unchanged where it names none."""
        array_of = getattr(self.commands, "array_of", None)
        return fold_array_tasks(statuses, array_of, getattr(self.commands, "array_tasks",
                                                            None)) if array_of else statuses

    async def _ended_tasks(self, raw: list[JobStatus],
                           following: Collection[Job]) -> list[JobStatus]:
        """Where an ended task leaves the queue at once (Grid Engine), the accounting records
        of the tasks that left it, for each followed array still in the queue with fewer
        tasks there than it was submitted with: its reason counts them, a failed one makes
        it FAILED at its end. Asked once each time a task leaves (the count the queue shows
        changes); kept for the polls between."""
        array_of = getattr(self.commands, "array_of", None)
        if not (array_of and getattr(self.commands, "ended_tasks_leave_queue", False)):
            return []
        shown: dict[str, int] = {}
        for st in raw:
            if (a := array_of(st.native_id)) is not None:
                shown[a] = shown.get(a, 0) + self.commands.array_tasks(st.native_id)
        ask = []
        for job in following:
            expr = job.spec.array.expression if job.spec and job.spec.array else None
            total = count_array_tasks(expr) if expr else None
            nid = job.native_id or ""
            if nid in shown and total is not None and shown[nid] < total \
                    and self._task_records.get(nid, (None, []))[0] != shown[nid]:
                ask.append(nid)
        for gone in set(self._task_records) - set(shown):  # the array left the queue
            del self._task_records[gone]
        if ask and (argv := self.commands.accounting_argv(ask)):
            res = await self.run(argv, check=False, timeout=self.query_timeout_s)
            self._check_answered(res)
            if res.ok:
                records = self._read(self.commands.parse_accounting, res.stdout)
                for nid in ask:
                    self._task_records[nid] = (shown[nid], [
                        r for r in records if array_of(r.native_id) == nid])
        return [r for nid in shown for r in self._task_records.get(nid, (0, []))[1]]

    async def _plain_id(self, flag: str, plain: Callable[[str], bool]) -> str | None:
        """`id FLAG` on the site: its answer when `plain` accepts it, "" when not; None
        when the site cannot be reached (asked again next time)."""
        try:
            res = await self.run(["id", flag], check=False, scheduler=False, timeout=30.0)
        except DiamondError:
            return None
        answer = res.stdout.strip()
        return answer if res.ok and plain(answer) else ""

    @property
    def known_login(self) -> str | None:
        """The login's user name if `login_user` has learnt it (no command runs)."""
        return self._login or None

    async def login_user(self) -> str | None:
        """The login's user name on the site (`id -un`, asked once); None when the site
        does not tell it plainly."""
        if self._login is None:
            self._login = await self._plain_id("-un", lambda name: bool(
                re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._@-]*", name)))
        return self._login or None

    async def login_uid(self) -> str | None:
        """The login's user number on the site (`id -u`, asked once); None when the site
        does not tell it plainly."""
        if self._uid is None:
            self._uid = await self._plain_id("-u", lambda uid: ascii_digits(uid) and uid.isascii())
        return self._uid or None

    async def find_by_token(self, name: str | None, token: str) -> list[JobStatus]:
        """The login's jobs carrying the idempotency `token` (in the comment, or the name's
        suffix for schedulers without comments and for jobs submitted before the comment was
        used). The token shows in the queue, so another user can copy it into a job of
        theirs: the scheduler is asked for the login's own jobs only (its user filter), and
        a job whose owner is named otherwise (by name, or by number: `id -u`) is not this
        one. A job whose owner is not named is the login's by that filter."""
        await self.know_name_limit()
        login = await self.login_user()
        short = None if self.token_in_comment or (name or "").endswith(f".dmd-{token}") \
            else self.short_name(name, token)
        if short is not None:  # the name cut to the site's limit, the token in the job's env
            found = await self.find_by_name(short, login)
            return await self.owned([s for s in found if s.token == token], login)
        # asked by the name the scheduler holds: the rendered one (`-x` is `j-x` on PBS)
        if not self.token_in_comment or (name or "").endswith(f".dmd-{token}"):
            full = name if (name or "").endswith(f".dmd-{token}") else \
                scheduler_name(name, token)
            found = await self.find_by_name(self.script.job_name(full or ""), login)
            return await self.owned(
                [s for s in found if (s.name or "").endswith(f".dmd-{token}")], login)
        found = await self.find_by_name(self.script.job_name(name or "job"), login)
        return await self.owned([s for s in found if token_tag(token) in (s.comment or "")],
                                login)

    async def owned(self, found: list[JobStatus], login: str | None) -> list[JobStatus]:
        """The jobs of `found` that are the `login`'s (None: not known, all are): a job
        whose owner is named otherwise (by name, or by number: `id -u`) is not; one whose
        owner is not named is, by the user filter it was asked with. Only ids of this
        scheduler's shape are kept."""
        uid, kept = None, []
        for s in found:
            owner = (s.user or "").split("@")[0]
            if ascii_digits(owner) and login is not None and uid is None:
                uid = await self.login_uid()
            mine = (login is None or not owner or owner == login
                    or (ascii_digits(owner) and (uid is None or owner == uid)))
            if mine and self.usable_id(s.native_id):
                kept.append(s)
        return kept

    async def statuses(self, native_ids: list[str], *, following: Collection[Job] = (),
                       unasked: set[str] | None = None,
                       awaited: Callable[[], dict[str, set[str]]] | None = None
                       ) -> list[JobStatus]:
        """Queue state for all given jobs; those gone from the queue from accounting.

        `following`: the jobs asked about; a native id is also looked up in accounting when
        the queue's job of that id is not one of them (the id was reused). Accounting may
        then return several records per id, oldest first. Where accounting reaches only
        the jobs it has time for (the dialect's `accounting_takes_turns`), those waiting
        longest are asked first, and `unasked` receives those it did not reach: no record
        of them is no news. `awaited()`: the array tasks jobs wait for (array's native id
        -> indexes), read only when a followed array still queued no longer lists a task
        last seen not ended; such an awaited task is asked of accounting in the same query
        (its array's id, in its turn), and the state accounting gives it, once ended, is
        added to the array's task states (not listed there, it keeps the last one seen).
        """
        if not native_ids:
            return []
        task_of = self._flux_tasks(native_ids, following)
        asked = list(dict.fromkeys([*native_ids, *(ids for ids, _ in task_of.values())]))
        res = await self.run(self.commands.status_argv(asked), check=False,
                             timeout=self.query_timeout_s)
        self._check_answered(res)
        listed = res.ok or (getattr(self.commands, "lists_known_on_failure", False)
                            and bool(res.stdout.strip()))
        raw = self._read(self.commands.parse_status, res.stdout) if listed else []
        if task_of:  # a task flux no longer lists: as last seen ended, else unknown
            ended = {j.native_id or "": j.tasks for j in following if j.tasks}
            raw = fold_array_records(raw, {v: (a, i) for v, (_, (a, i)) in task_of.items()},
                                     ended)
        raw += await self._ended_tasks(raw, following)
        seen = self.fold_arrays(raw)
        array_of = getattr(self.commands, "array_of", None)
        arrays = {a for s in raw if array_of and (a := array_of(s.native_id))}
        # gone from the queue, ended without an exit code there (or ended in a way the queue
        # does not tell: UNKNOWN), or now another job: accounting
        # (a Flux-run array's tasks folded: as flux lists them, no accounting knows more)
        folded = {a for _, (a, _) in task_of.values()}
        final = [s for s in seen if not (s.state.terminal and s.exit_code is None)
                 and s.state != JobState.UNKNOWN or s.native_id in folded]
        missing = [i for i in native_ids if not any(s.native_id == i for s in final)
                   or any(j.native_id == i and not any(s.native_id == i and owns(s, j)
                                                       for s in final) for j in following)]
        vanished = self._tasks_to_ask(vanished_tasks(seen, following, awaited)
                                      if awaited else {})
        ask = missing + [a for a in vanished if a not in missing]
        if ask and self.commands.accounting_takes_turns:
            ask = self._accounting_turns.order(ask)
        acct = self.commands.accounting_argv(ask) if ask else None
        if acct:
            r2 = await self.run(acct, check=False, timeout=self.query_timeout_s)
            self._check_answered(r2)
            if (asked := self.commands.accounting_reached(r2.stdout)) is not None:
                self._accounting_turns.asked(asked)
                if unasked is not None:
                    unasked.update(set(missing) - set(asked))
            if r2.ok:
                raw = await self._ask_unsure_alone(
                    self._read(self.commands.parse_accounting, r2.stdout))
                if vanished:
                    ended = ended_tasks(raw, vanished, getattr(self.commands, "array_of",
                                                                None))
                    seen = [s.model_copy(update={"tasks": {**(s.tasks or {}),
                                                           **ended[s.native_id]}})
                            if s.native_id in ended and not s.state.terminal else s
                            for s in seen]
                    self._accounting_turns.answered(
                        a for a in vanished if a not in missing
                        and vanished[a] <= set(ended.get(a, {})))
                found = [s for s in self.fold_arrays(raw) if s.native_id in missing]
                found = [_array_outcome(f, seen, arrays) for f in found]
                # accounting's record of a job the queue shows ended replaces the queue's
                seen = [s for s in seen if s in final or not any(_same_run(s, f)
                                                                 for f in found)]
                seen += found
                self._accounting_turns.answered(f.native_id for f in found)
        return await self._log_endings(seen, following)

    async def _log_endings(self, seen: list[JobStatus], following: Collection[Job]
                           ) -> list[JobStatus]:
        """`seen` with the endings a followed job's stderr file tells where its scheduler
        does not (the dialect's `log_ending_wanted` and `with_log_ending`: a Flux job the
        kernel's OOM killer killed). Each file is read once (its last ENDING_LOG_BYTES), only
        where its path is fixed (no pattern a scheduler fills in); a file missing or not
        read leaves the status as it is."""
        wanted = getattr(self.commands, "log_ending_wanted", None)
        if wanted is None or not any(wanted(s) for s in seen):
            return seen
        jobs = {j.native_id: j for j in following if j.native_id}
        out = []
        for s in seen:
            job = jobs.get(s.native_id)
            path = job and (job.stderr_path or job.stdout_path)
            if wanted(s) and path and not re.search(r"[{}%]", path):
                if s.native_id not in self._ending_logs:
                    try:
                        text = await self.tail(path, ENDING_LOG_LINES,
                                               max_bytes=ENDING_LOG_BYTES)
                    except DiamondError:
                        text = None
                    if len(self._ending_logs) >= ENDING_LOGS_KEPT:
                        self._ending_logs.clear()  # long ended: no poll asks of them again
                    self._ending_logs[s.native_id] = self.commands.with_log_ending(
                        s, text or "").reason
                s = s.model_copy(update={"reason": self._ending_logs[s.native_id]})
            out.append(s)
        return out

    def _tasks_to_ask(self, vanished: dict[str, set[str]]) -> dict[str, set[str]]:
        """Those of the `vanished` tasks (by array) to ask accounting about now: an array's
        whose set changed since last asked, else once TASKS_REASKED_AFTER_S have passed."""
        now = time.monotonic()
        for gone in set(self._tasks_asked) - set(vanished):
            del self._tasks_asked[gone]
        due = {}
        for array, tasks in vanished.items():
            asked = self._tasks_asked.get(array)
            if asked is None or asked[0] != tasks or now - asked[1] >= TASKS_REASKED_AFTER_S:
                self._tasks_asked[array] = (frozenset(tasks), now)
                due[array] = tasks
        return due

    async def _ask_unsure_alone(self, records: list[JobStatus]) -> list[JobStatus]:
        """Accounting `records` where each job whose record the dialect could not tell apart
        from text in another job's name (`unsure_ids`) is asked about alone (at most
        UNSURE_ASKED of them): its own answer replaces its UNKNOWN record where it reads."""
        unsure = getattr(self.commands, "unsure_ids", None)
        for jid in (unsure(records) if unsure else [])[:UNSURE_ASKED]:
            res = await self.run(self.commands.accounting_argv([jid]), check=False,
                                 timeout=self.query_timeout_s)
            self._check_answered(res)
            if not res.ok:
                continue
            alone = [s for s in self._read(self.commands.parse_accounting, res.stdout)
                     if s.native_id == jid]
            if alone:
                records = [s for s in records if s.native_id != jid] + alone
        return records

    def _check_answered(self, res: CommandResult) -> None:
        """SiteError when a failed query means the scheduler did not answer (its dialect's
        `status_unanswered`): an empty answer would read as every job gone, and jobs would be
        taken as lost while the controller restarts."""
        unanswered = getattr(self.commands, "status_unanswered", None)
        if unanswered is not None and unanswered(res.exit_status, res.stderr):
            said = " ".join(res.stderr.split())[-300:]
            raise SiteError(f"{self.name}: the scheduler did not answer ({said})")

    async def stat(self, path: str) -> FileStat | None:
        """A file's size and kind on the site (None when it does not exist)."""
        await self.home()
        return await self.transport.stat(self.expand(path))

    async def missing_files(self, paths: list[str], *,
                            timeout: float | None = None) -> list[str]:
        """Those of `paths` the site does not have (one ending with / must be a directory),
        asked in ONE command through the file transport, within `timeout` (else the
        query timeout): SiteError when it cannot say, CommandTimeout when it is slower."""
        if not paths:
            return []
        await self.home()
        real = [self.expand(p) for p in paths]
        # each missing path is said by its place in the list (a name may hold any byte)
        script = ('i=0; for p do i=$((i+1)); case $p in */) [ -d "$p" ];; *) [ -e "$p" ];; '
                  'esac || echo "$i"; done; echo done')
        files = self.file_transport
        res = await getattr(files, "run_fast", files.run)(
            ["sh", "-c", script, "sh", *real], env=self.cfg.env, preamble=self.cfg.preamble,
            timeout=self.query_timeout_s if timeout is None else timeout)
        lines = res.stdout.split()
        if res.exit_status != 0 or not lines or lines[-1] != "done" \
                or not all(ascii_digits(x) and 0 < int(x) <= len(paths) for x in lines[:-1]):
            said = " ".join((res.stderr or res.stdout).split())[-300:]
            raise SiteError(f"{self.name}: could not look for {len(paths)} file(s) "
                            f"(exit {res.exit_status}): {said or 'no answer'}")
        return [paths[int(x) - 1] for x in lines[:-1]]

    async def recent_jobs(self, since: datetime) -> list[JobStatus]:
        """Every user's jobs that ended since `since`, from the site's accounting, in one
        query ([] where the scheduler's commands offer none)."""
        argv_for = getattr(self.commands, "history_argv", None)
        if argv_for is None:
            return []
        res = await self.run(argv_for(since), check=True, timeout=self.query_timeout_s)
        skipped: list[str] = []
        jobs = self.commands.parse_history(res.stdout, skipped)
        for warning in skipped:  # a line of another shape: the rest still calibrates
            log.warning("%s: %s", self.name, warning)
        return jobs

    async def cancel(self, native_ids: list[str]) -> None:
        """Cancel `native_ids` (CommandFailed when the scheduler refuses). Several ids are a
        Flux-run job array's tasks: those that had ended are not cancelled, the others are,
        and that is no failure."""
        res = await self.run(self.commands.cancel_argv(native_ids), check=False)
        missed_ended = getattr(self.commands, "cancel_missed_only_ended", None)
        if res.exit_status != 0 and len(native_ids) > 1 and missed_ended is not None \
                and missed_ended(res.stderr):
            return
        result_or_raise(self.name, res, check=True)

    async def release(self, native_ids: list[str], *,
                      tasks: dict[str, str] | None = None) -> None:
        """Release held jobs `native_ids` (CommandFailed when the scheduler refuses). Several
        ids are a Flux-run job array's tasks (`tasks`: index -> id): every task flux takes is
        released, and a refusal of any names the tasks it left held."""
        res = await self.run(self.commands.release_argv(native_ids), check=False)
        missed_of = getattr(self.commands, "release_missed", None)
        if res.exit_status != 0 and len(native_ids) > 1 and missed_of is not None \
                and (missed := missed_of(res.stderr)):
            index_of = {jid: i for i, jid in (tasks or {}).items()}
            named = ", ".join(f"task {index_of[m]} ({m})" if m in index_of else m
                              for m in missed)
            said = [ln.strip() for ln in res.stderr.splitlines()
                    if ln.strip() and not missed_of(ln)]
            raise CommandFailed(
                f"{self.name}: released {len(native_ids) - len(missed)} of the array's "
                f"{len(native_ids)} tasks; still held: {named}"
                + (f" (flux said: {said[-1][:300]})" if said else "")
                + "; release the job again to retry them", res)
        result_or_raise(self.name, res, check=True)

    @property
    def updates_dependencies(self) -> bool:
        """Whether a queued job's dependencies can be changed here (`update_dependencies`)."""
        return hasattr(self.commands, "update_dependency_argv")

    async def update_dependencies(self, native_id: str, deps: list[Dependency]) -> None:
        """Replace the dependencies of queued job `native_id` with `deps`."""
        if not self.updates_dependencies:
            raise BadInput(f"{self.name}: {self.cfg.scheduler} jobs' dependencies are not "
                           "changed once queued here (the job is submitted again instead)")
        await self.run(self.commands.update_dependency_argv(native_id, deps), check=True)

    @property
    def file_transport(self) -> Transport:
        """What moves the site's files (transfers, staging): its own transport here."""
        return self.transport

    async def list_files(self, root: str, *, max_depth: int = 3) -> list[str]:
        """Regular files under `root` on the site, listed over SFTP (no command runs)."""
        return [f.path for f in await self.file_stats(root, max_depth=max_depth)]

    async def file_stats(self, root: str, *, max_depth: int = 3, special: bool = False
                         ) -> list[FileStat]:
        """`list_files` with each file's size and mode (the same SFTP listing); with
        `special`, the FIFOs, devices and sockets too (to be named, never read)."""
        return await self.transport.list_files(await self.resolve(root), max_depth=max_depth,
                                               special=special)

    async def job_files(self, job: Job) -> list[str]:
        """A job's result files: those in its working directory, 3 levels deep (paths on the
        site), without the engine's own (its script, its event secret and the output
        lengths the wrapper recorded at the start)."""
        return [f.path for f in await self.job_file_stats(job)]

    async def job_file_stats(self, job: Job, *, special: bool = False) -> list[FileStat]:
        """`job_files` with each file's size and mode, from the same listing (sorted by
        path); with `special`, the FIFOs, devices and sockets among them too."""
        wd = job.workdir or (job.spec.working_directory if job.spec else None)
        if not wd:
            return []
        private = (f"/jobs/{job.token}/job.sh", f"/jobs/{job.token}/secret",
                   output_offsets_file(f"/jobs/{job.token}"))
        return sorted((f for f in await self.file_stats(wd, max_depth=3, special=special)
                       if not (job.token and f.path.endswith(private))), key=lambda f: f.path)

    async def fetch(self, remote: str, local: str, *, max_bytes: int | None = None,
                    within: str | None = None) -> None:
        """Copy one file from the site to this machine (OutputTooLarge past `max_bytes`;
        LeftItsDirectory when, as it is opened, it is a link or out of `within`)."""
        await self.transport.get_file(remote, local, max_bytes=max_bytes, within=within)

    async def link_target(self, path: str) -> tuple[str, str | None] | None:
        """What the link `path` on the site holds and where it leads, resolved there
        (Transport.link_target; nothing read through it); None when it is gone."""
        try:
            return await self.transport.link_target(path)
        except FileNotFoundError:
            return None

    async def real_path(self, path: str) -> str | None:
        """`path` on the site with every link in it resolved (None: it does not resolve)."""
        return await self.transport.real_path(await self.resolve(path))

    async def tail(self, path: str, lines: int = 100, *,
                   max_bytes: int = TAIL_MAX_BYTES, start: int = 0) -> str | None:
        """The last `lines` lines of a file on the site, within its last `max_bytes` bytes
        (the first line kept may then be cut) and after its first `start` bytes; None when
        the file does not exist."""
        read = 'tail -c +"$1" -- "$2" | tail -c "$3"' if start > 0 else 'tail -c "$3" -- "$2"'
        res = await self._read_file(read, path, start, max_bytes)
        return None if res is None else last_lines(res.stdout, lines)

    follow_refusal: str | None = None  # why `read_from` cannot follow a log here, if not

    async def read_from(self, path: str, start: int, max_bytes: int) -> bytes | None:
        """At most `max_bytes` bytes of a file on the site from byte `start` on, exactly as
        it holds them (what a follower has not read yet; base64 on the way, so a character
        cut at either end is not lost); None when the file does not exist."""
        res = await self._read_file('tail -c +"$1" -- "$2" | head -c "$3" | base64', path,
                                    start, max_bytes)
        if res is None:
            return None
        try:
            return base64.b64decode(res.stdout, validate=False)
        except binascii.Error as e:
            raise SiteError(f"{self.name}: reading {path} gave no base64 ({e})") from None

    async def _read_file(self, read: str, path: str, start: int, max_bytes: int
                         ) -> CommandResult | None:
        """Run the shell pipeline `read` over a file (`$1`: its first byte to read, 1-based;
        `$2`: its path; `$3`: a byte count); None when the file does not exist."""
        path = await self.resolve(path)
        # only a regular file is read: a FIFO (no writer: `tail` waits for ever) or a device
        # (/dev/zero never ends), which the job may have put in its output's place, is not;
        # nor a link (the job's output is untrusted: a link to ~/.ssh/id_rsa would show the
        # key to whoever reads the logs)
        argv = ["sh", "-c", f'if [ -e "$2" ] && [ ! -f "$2" ]; then echo "{NOT_A_FILE}" >&2; '
                f'exit 3; fi; if [ -L "$2" ]; then echo "{A_LINK}" >&2; exit 3; fi; {read}',
                "sh", str(int(start) + 1), path, str(int(max_bytes))]
        res = await self.transport.run(argv, check=False)
        if not res.ok:
            if "No such file" in res.stderr:
                return None
            if NOT_A_FILE in res.stderr:
                raise NotARegularFile.at(self.name, path)
            if A_LINK in res.stderr:
                raise NotARegularFile.link_at(self.name, path)
            raise SiteError(f"{self.name}: cannot read {path}: {res.stderr.strip()}")
        if "No such file" in res.stderr:  # a pipe's status is its last command's
            return None
        return res

    async def close(self) -> None:
        await self.transport.close()


NOT_A_FILE = "diamond: not a regular file"
A_LINK = "diamond: a symbolic link"


class NotARegularFile(SiteError):
    """A job's log is a FIFO, a device or a symbolic link (never read: it may never end, or
    show a file the job was not given, such as the user's SSH key)."""

    @classmethod
    def at(cls, site: str, path: str) -> NotARegularFile:
        return cls(f"{site}: {path} is not a regular file (a FIFO, a device or a link to "
                   "one): not read")

    @classmethod
    def link_at(cls, site: str, path: str) -> NotARegularFile:
        return cls(f"{site}: {path} is a symbolic link, not the file the job wrote: not "
                   "read (job output is untrusted; a link could show any file of yours, "
                   "such as ~/.ssh/id_rsa)")


def queue_too_large(site: str, e: OutputTooLarge) -> str:
    """Why a site's whole queue is unknown: it printed more than the transport's cap (a
    command's stream, or a reply, which `e` names)."""
    said = (f"{site}: the whole queue is more than {e.cap} bytes on {e.stream} (the "
            "transport's max_output_bytes; raise it for a site this busy)") if e.stream \
        else str(e)
    return f"queue not read: {said}. Your own jobs are still followed, asked by id"


def queue_timed_out(site: str, timeout_s: float) -> str:
    """Why a site's whole queue is unknown: its query did not end in time, while the site's
    other queries answered."""
    return (f"queue not read: {site}: the queue query did not answer within {timeout_s:g} s, "
            "while the site's other queries did. Your own jobs are still followed, asked by id")


class Sites(dict[str, Site]):
    """The sites this engine may use, by name. `allowed`: the names an operator allowed
    (None: every site of the sites file); `configured`: every name in the sites file, in its
    order (None: the sites given)."""

    def __init__(self, sites: Iterable[Site] = (), *, allowed: Collection[str] | None = None,
                 configured: Collection[str] | None = None) -> None:
        super().__init__((s.name, s) for s in sites)
        self.allowed = allowed
        self.configured = list(self if configured is None else dict.fromkeys(configured))

    def absence(self, name: str) -> str:
        """Why `name`, none of these sites, is not used here, said after the name: the sites
        file lists it but an operator left it out of the allowed ones, or the sites file
        lacks it (a workflow or a job outlives the file it was started with)."""
        if name in self.configured:
            return f"is not allowed here (allowed: {', '.join(self) or 'none'})"
        return f"is not in this sites file (configured: {', '.join(self.configured) or 'none'})"

    def require(self, name: str) -> Site:
        """The site `name`; BadInput naming the sites there are when it is unknown or not
        allowed here."""
        if name not in self:
            known = ", ".join(self) or "none"
            if self.allowed is not None and name not in self.allowed \
                    and name in self.configured:
                raise BadInput(f"site {name!r} is not allowed here (allowed: {known})")
            raise BadInput(unknown_site_message(name, list(self)))
        return self[name]

    def site_of_host(self, host: str) -> str | None:
        """The site whose SSH host is `host` (its full name, or its first label: `fs01` for
        `fs01.hpc.example`), when exactly one is: a script's staging names a machine, not a
        site. None otherwise."""
        found = self.sites_of_host(host)
        return found[0] if len(found) == 1 else None

    def sites_of_host(self, host: str) -> list[str]:
        """Every site whose SSH host is `host` (its full name or its first label)."""
        wanted = host.lower()
        return [n for n, h in self.ssh_hosts().items()
                if h and wanted in (h.lower(), h.lower().split(".")[0])]

    def ssh_hosts(self) -> dict[str, str | None]:
        """Each site's SSH host as configured (None where it has none, e.g. a local one)."""
        return {n: s.cfg.transport.host for n, s in self.items()}

    def second_doors(self) -> dict[str, str]:
        """The entries that are second doors to a cluster listed already (a
        `metadata.door_to` naming another entry), each with that entry: the same machines,
        whose queue and jobs are counted once, through the first door. `auto: false` alone
        says nothing of the machines (an entry may be kept out of `--site auto` for its
        cost or its account)."""
        out: dict[str, str] = {}
        for n, s in self.items():
            first = s.cfg.metadata.get("door_to")
            if isinstance(first, str) and first != n and first in self:
                out[n] = first
        return out
