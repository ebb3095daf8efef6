"""Slurm command lines and output parsers (pure: argv in, models out).

Recorded on Slurm 22.05.8 (Debian 12). Text formats are used for status because
they are stable across versions (each squeue query with its own fresh field separator, which
no job name can forge; sacct, whose delimiter could only go on its command line, with the
job id around the name, see SACCT_FIELDS); `squeue --json` (openapi v0.0.38 .. v0.0.40+
shapes) is parsed too.
Output-format variables in the caller's environment (SQUEUE_FORMAT, SLURM_TIME_FORMAT,
...) would change what these commands print, so by default every query argv starts with
`env -u VAR ...` (`clean_env=False` turns that off when the transport clears them itself).
"""

from __future__ import annotations

import re
import secrets
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any, Literal

from ..digits import ascii_digits
from ..model import (
    OVER_TIME_UNLIMITED,
    Association,
    BadInput,
    Dependency,
    JobState,
    JobStatus,
    Node,
    Partition,
    QosLimits,
    Reservation,
    SiteSnapshot,
)
from .base import AccountingReach, PrivateArgv
from .outputs_common import (
    NOT_SET_MARKS,
    OUT_OF_MEMORY,
    FailureReading,
    clean,
    count_array_tasks,
    decode_wait_status,
    expand_hostlist,
    fail,
    from_epoch,
    gpu_count,
    gpu_sockets,
    gpu_types,
    known_count,
    limit_count,
    limit_seconds,
    load_json,
    memory_mb,
    other_gres,
    parse_duration,
    parse_iso,
    parse_kv_line,
    takes_records,
    to_int,
    unread,
    user_filter,
    whole_number,
)
from .scripts_common import parse_slurm_time
from .slurm_priority import (
    MULTIFACTOR,
    PRIORITY_PROBE,
    SPRIO_PROBE,
    parse_job_priorities,
    parse_priority,
    priority_plugin,
)

# Variables that change squeue/sinfo/sacct/scontrol output (Parsl's Slurm provider met them).
FORMAT_ENV = (
    "SQUEUE_FORMAT", "SQUEUE_FORMAT2", "SQUEUE_SORT", "SINFO_FORMAT", "SINFO_SORT",
    "SACCT_FORMAT", "SLURM_TIME_FORMAT", "SQUEUE_STATES", "SLURM_CLUSTERS",
)

# The job name (free text, may contain '|') is last so it absorbs extra separators. %M is
# the time the job has run (suspended time not counted); outputs of the fields before it
# was added (`|`-separated lines, one field fewer) are still read (`_with_time_used`).
SQUEUE_FIELDS = "%i|%T|%S|%e|%V|%l|%D|%C|%u|%P|%b|%N|%r|%k|%M|%j"
_NF = SQUEUE_FIELDS.count("|") + 1
# what squeue's %M prints: [days-][hours:]minutes:seconds
_TIME_USED = re.compile(r"[0-9]+-[0-9]+:[0-9]+:[0-9]+|([0-9]+:)?[0-9]+:[0-9]+")
# What a query asks for: each field followed by a separator made afresh for that query
# (`#dj-` and 16 random hex digits). Names and comments are anyone's free text (newlines,
# '|', whole forged records), but nobody knows the separator before the query runs, so
# no text a user wrote beforehand can end a field or start a record.
_SEP = re.compile(r"#dj-[0-9a-f]{16}#")
_FIRST_FIELD = re.compile(r"[0-9][\w.\[\]%,+-]*?(" + _SEP.pattern + ")")
# the same at a line's start: the first record after messages (stderr, merged by the site's
# batch) that came before it
_FIRST_RECORD = re.compile(r"(?m)^" + _FIRST_FIELD.pattern)
# a job id as squeue prints it: 123, an array's 123_4 or 123_[1-5%2], a het job's 123+0
_JOB_ID = re.compile(r"[0-9]+(_([0-9]+|\[[0-9,%-]+\]))?(\+[0-9]+)?")
_STEP_ID = re.compile(_JOB_ID.pattern + r"(\.\w+)?")  # sacct's steps: 123.batch, 123.0
# sacct takes its delimiter only on its command line, which every user of the login node can
# read (`ps`), so it gets none (`-P`, '|'): the name, the only free text, comes after the five
# fixed fields (none holds '|' or a newline) and the job id is printed again after it. A name
# cannot end its own record early without writing its job's id at a line's end, which makes
# its lines ambiguous, and those are read as such (`_sacct_records`).
SACCT_FIELDS = "jobid,state,exitcode,start,end,nodelist,jobname,jobid"
_SACCT_FIXED = 6  # the fields before the name
UNSURE_ACCOUNTING = ("sacct's record of this job could not be read: a job name in the same "
                     "answer spans lines and could have written it")
# every user's finished jobs, for calibrating predictions (request vs use)
HISTORY_FIELDS = "jobid,partition,timelimit,submit,start,end,ncpus,nnodes,state"

_STATES: dict[str, JobState] = {}
for _state, _names in {
    JobState.PENDING: "PENDING PD REQUEUED RQ REQUEUE_FED RF REQUEUE_HOLD RH SPECIAL_EXIT SE "
    "RESV_DEL_HOLD RD",
    JobState.RUNNING: "RUNNING R CONFIGURING CF COMPLETING CG SUSPENDED S STOPPED ST SIGNALING SI "
    "STAGE_OUT SO RESIZING RS POWER_UP_NODE UPDATE_DB",
    JobState.COMPLETED: "COMPLETED CD",
    JobState.FAILED: "FAILED F OUT_OF_MEMORY OOM NODE_FAIL NF BOOT_FAIL BF PREEMPTED PR",
    JobState.CANCELLED: "CANCELLED CA REVOKED RV",
    JobState.TIMEOUT: "TIMEOUT TO DEADLINE DL",
}.items():
    for _n in _names.split():
        _STATES[_n] = _state


# endings the scheduler caused, not the job's program: FAILED, saying why, with no exit code
# but a signal that killed the program (sacct prints 0:0 or 1:0 for them otherwise)
_SCHEDULER_ENDINGS = {"NODE_FAIL": "the node failed", "NF": "the node failed",
                      "BOOT_FAIL": "the node failed to boot", "BF": "the node failed to boot",
                      "PREEMPTED": "preempted by the scheduler",
                      "PR": "preempted by the scheduler"}


_STATE_WORD_END = re.compile(r"[\s+]")  # 'CANCELLED by 1000', 'CANCELLED+'


def _state_word(native: Any) -> str:
    """The state word of a Slurm state as any of its commands print it ('CANCELLED by 1000',
    'cd', ['PENDING', 'REQUEUED'] -> 'CANCELLED', 'CD', 'PENDING'; '' when there is none)."""
    if isinstance(native, list):
        native = native[0] if native else ""
    s = (clean(native) or "").upper()
    return _STATE_WORD_END.split(s, maxsplit=1)[0] if s else ""


def scheduler_ending(native: Any) -> str | None:
    """Why the scheduler ended a job it reports in `native` ('NODE_FAIL', 'PR',
    ['PREEMPTED']), or None for any other state."""
    return _SCHEDULER_ENDINGS.get(_state_word(native))


def ending_reason(native: Any) -> str | None:
    """What a job's ending state says beyond FAILED: the scheduler's ending, or the
    job running out of memory ('OUT_OF_MEMORY', 'OOM'); None for any other state."""
    word = _state_word(native)
    if ending := _SCHEDULER_ENDINGS.get(word):
        return ending
    return OUT_OF_MEMORY if word in ("OUT_OF_MEMORY", "OOM") else None


# a state Slurm holds a job in, said with what frees it: SPECIAL_EXIT is a job requeued and
# held after its program ended with an exit code the site treats as special (a prolog or
# epilog's `scontrol requeuehold State=SpecialExit`); squeue prints no reason beside it
SPECIAL_EXIT_HELD = ("held (special exit): requeued after ending with an exit code the site "
                     "treats as special; it runs again only once released (diamond release, "
                     "or scontrol release)")
_HELD_STATES = {"SPECIAL_EXIT": SPECIAL_EXIT_HELD, "SE": SPECIAL_EXIT_HELD}


def state_reason(native: Any) -> str | None:
    """What a job's state says beyond its mapped state: `ending_reason`'s ending, or why a
    job in a held state (SPECIAL_EXIT) waits and what frees it; None for any other state."""
    return ending_reason(native) or _HELD_STATES.get(_state_word(native))


def _signal_only(exit_code: int | None) -> int | None:
    """A scheduler-ended job's exit code: the signal that killed its program (128+N) is
    its own; the 0 or 1 the scheduler writes in place of one is not."""
    return exit_code if exit_code is not None and exit_code >= 128 else None


def _with_ending(ending: str | None, reason: str | None) -> str | None:
    """The scheduler's ending first, then the reason it printed beside it (if another)."""
    if ending is None:
        return reason
    return f"{ending} ({reason})" if reason and reason.lower() != "none" else ending


BF_WINDOW_DEFAULT_MIN = 1440  # Slurm's bf_window when SchedulerParameters sets none

NO_VAL64 = 0xFFFFFFFFFFFFFFFE  # Slurm's "not set" of a 64-bit number (and INFINITE64 above)


def _scheduler_parameters(config: str) -> dict[str, str] | None:
    """The `SchedulerParameters = a=1,b,...` line of `scontrol show config`, each parameter to
    its value ('' for a bare flag; the first where one is set twice); None without the line."""
    for line in config.splitlines():
        key, eq, value = line.partition("=")
        if eq and key.strip() == "SchedulerParameters":
            params: dict[str, str] = {}
            for param in value.split(","):
                name, _, n = param.strip().partition("=")
                params.setdefault(name, n)
            return params
    return None


def map_state(native: Any) -> JobState:
    """Slurm state ('CANCELLED by 1000', 'OUT_OF_MEMORY', 'CD', ['PENDING', 'REQUEUED'])."""
    return _STATES.get(_state_word(native), JobState.UNKNOWN)


def _json_state(value: Any) -> str | list[str] | None:
    """A job's `job_state` as squeue --json and slurmrestd give it (a word, or a list of
    words from v0.0.40 on); None for any other shape (a number, an object, a list holding
    one), which a site sent no state in."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return value
    return None


def parse_exit(text: Any) -> int | None:
    """'3:0' -> 3, '0:9' (signal 9) -> 137; None when absent, or for a "signal" no signal
    number can be (Slurm's own marks: OUT_OF_MEMORY's '0:125', its SIG_OOM 253 in 7 bits)."""
    s = clean(text)
    if s is None:
        return None
    code, _, sig = s.partition(":")
    try:
        c, g = int(code), int(sig or 0)
    except ValueError:
        return None
    if c == 0 and g > 64:
        return None
    return 128 + g if c == 0 and g else c


_ARRAY_TASK = re.compile(r"([0-9]+)_(?:[0-9]+|\[[^\]]*\])")


def array_of(native_id: str) -> str | None:
    """The job array a task's record belongs to: '123_4' / '123_[1-5%2]' -> '123'; None
    for a plain job. (sbatch answers an array's submit with its array id, '123'.)"""
    m = _ARRAY_TASK.fullmatch(native_id)
    return m.group(1) if m else None


_HET_COMPONENT = re.compile(r"([0-9]+)\+[0-9]+")  # squeue's and sacct's `LEADER+OFFSET`


def followed_under(native_id: str) -> str | None:
    """The job a record is part of, which the engine follows as one: a task's array
    ('123_4' -> '123') or a heterogeneous job's components ('123+1' -> '123': sbatch
    answers with the leader's id, and squeue and sacct list each component as
    `LEADER+OFFSET`, none under the leader's id alone); None for a plain job."""
    if m := _HET_COMPONENT.fullmatch(native_id):
        return m.group(1)
    return array_of(native_id)


def array_tasks(native_id: str) -> int:
    """How many tasks a record stands for: a waiting range '123_[5-9%2]' five, a task one."""
    m = re.fullmatch(r"[0-9]+_\[([^\]]*)\]", native_id)
    return (count_array_tasks(m.group(1)) or 1) if m else 1


def _gpus_of(*texts: Any) -> int | None:
    for t in texts:
        n, _ = gpu_count(t)
        if n:
            return n
    return None


def gpus_asked(nodes: int | None, *, per_node: Any = None, per_job: Any = None,
               per_task: Any = None, tasks: int | None = None, per_socket: Any = None,
               sockets: int | None = None, in_all: Any = None) -> int | None:
    """A Slurm job's GPUs in all from the TRES strings it asked them in (`gres/gpu:4`,
    `gres:gpu:a100:2`, `cpu=4,gres/gpu=1`, `N/A`): per node x `nodes`, per job, per task x
    `tasks` (at least one task a node), per socket x `sockets` a node x `nodes`, or a
    total (`in_all`: tres-alloc, tres_req_str). Slurm gives the job at least each form it
    asked and makes them agree at submission (a per-job count a multiple of the per-node
    one sets the node count to their quotient, one a multiple of the per-task one the task
    count), so the job's GPUs are the largest; None when it asked none."""
    n = max(nodes or 1, 1)
    return max((_gpus_of(per_job) or 0, _gpus_of(in_all) or 0,
                (_gpus_of(per_node) or 0) * n,
                (_gpus_of(per_task) or 0) * max(tasks or 0, n),
                (_gpus_of(per_socket) or 0) * max(sockets or 0, 1) * n)) or None


class SlurmCommands(FailureReading, AccountingReach):
    """Slurm argv builders and parsers. `jobcomp=True` reads finished jobs with
    `sacct -c` (no slurmdbd; JobCompType=jobcomp/filetxt), else plain `sacct -X`.
    `tz` is the cluster's time zone for its naive timestamps (None = this machine's)."""

    name = "slurm"
    submit_stdin = False
    # the engine follows an array as one job, and a heterogeneous job's components too
    array_of = staticmethod(followed_under)
    array_tasks = staticmethod(array_tasks)

    def __init__(self, *, jobcomp: bool = False, tz: tzinfo | None = None,
                 clean_env: bool = True) -> None:
        self.jobcomp = jobcomp
        self.tz = tz
        self.clean_env = clean_env

    # -- argv ---------------------------------------------------------------
    def _q(self, *argv: str, keep: tuple[str, ...] = ()) -> list[str]:
        """`argv` with the output-format variables unset (but those in `keep`)."""
        if not self.clean_env:
            return list(argv)
        unset = [a for var in FORMAT_ENV if var not in keep for a in ("-u", var)]
        return ["env", *unset, *argv]

    def _squeue(self, *argv: str) -> PrivateArgv:
        """`squeue ARGV` printing SQUEUE_FIELDS, each followed by a fresh separator (see
        `_SEP`), given in SQUEUE_FORMAT (same as `-o`; squeue reads it when no format option
        is given), never on the command line: every user of the login node can read that
        (`ps`) while squeue waits for the controller, and write the separator into a job's
        name in time to forge a record."""
        return PrivateArgv(self._q("squeue", *argv, keep=("SQUEUE_FORMAT",)),
                           {"SQUEUE_FORMAT": self._squeue_format()})

    @staticmethod
    def _ids(native_ids: list[str]) -> str:
        ids = [str(i).strip() for i in native_ids if str(i).strip()]
        if not ids:
            raise BadInput("slurm: no job ids given")
        bad = [i for i in ids
               if not re.fullmatch(r"[0-9]+(_([0-9]+|\[[0-9,%-]+\]))?(\+[0-9]+)?", i)]
        if bad:
            raise BadInput(f"slurm: not a job id: {bad[0]!r}")
        return ",".join(ids)

    def submit_argv(self, script_path: str, *, hold: bool = False) -> list[str]:
        return ["sbatch", "--parsable", *(["--hold"] if hold else []), script_path]

    @staticmethod
    def _squeue_format() -> str:
        """SQUEUE_FIELDS with a fresh separator after every field (see `_SEP`)."""
        sep = new_separator()
        return "".join(f"{f}{sep}" for f in SQUEUE_FIELDS.split("|"))

    def status_argv(self, native_ids: list[str]) -> list[str]:
        return self._squeue("-h", "-t", "all", "-j", self._ids(native_ids))

    def status_json_argv(self) -> list[str]:
        """All jobs as JSON (before 24.05 squeue --json ignores -j/-t filters)."""
        return self._q("squeue", "--json")

    def estimates_argv(self, native_ids: list[str] | None = None) -> list[str]:
        ids = ["-j", self._ids(native_ids)] if native_ids else []
        return self._q("squeue", "-h", "--start", *ids, "-o", "%i|%S|%r")

    def accounting_argv(self, native_ids: list[str]) -> list[str] | None:
        """No secret on the command line (see SACCT_FIELDS): '|' between fields."""
        if self.jobcomp:
            return self._q("sacct", "-c", "-P", "-n", "-o", SACCT_FIELDS,
                           "-j", self._ids(native_ids))
        return self._q("sacct", "-X", "-P", "-n", f"--format={SACCT_FIELDS}",
                       "-j", self._ids(native_ids))

    @staticmethod
    def unsure_ids(statuses: list[JobStatus]) -> list[str]:
        """The jobs whose accounting record `parse_accounting` could not tell apart from
        another job's name: asked alone (`-j ID`), only that job's records are in the
        answer, and no other job's name can be among them."""
        return [s.native_id for s in statuses if s.reason == UNSURE_ACCOUNTING
                and s.state == JobState.UNKNOWN]

    def history_argv(self, since: datetime) -> list[str]:
        """Every user's jobs that ended since `since` (one query; calibration samples)."""
        start = since.astimezone(self.tz).strftime("%Y-%m-%dT%H:%M:%S") if self.tz \
            else since.astimezone().strftime("%Y-%m-%dT%H:%M:%S")
        if self.jobcomp:
            return self._q("sacct", "-c", "-a", "-P", "-n", "-S", start,
                           "-o", HISTORY_FIELDS)
        return self._q("sacct", "-X", "-a", "-P", "-n", "-S", start, "-s", "CD,F,TO,CA",
                       f"--format={HISTORY_FIELDS}")

    def parse_history(self, stdout: str, skipped: list[str] | None = None
                      ) -> list[JobStatus]:
        """sacct -P lines of HISTORY_FIELDS: jobs with their request, times and size.
        `skipped`: where to say a line of another shape, and a header (sacct without -n),
        left out (else SiteError)."""
        out = []
        for n, line in enumerate(stdout.splitlines(), 1):
            if not line.strip():
                continue
            f = [x.strip() for x in line.split("|")]
            if len(f) != 9 or not f[0]:
                unread(skipped, "slurm", f"sacct line {n}", "expected 9 '|' fields", line)
                continue
            if [x.lower() for x in f] == HISTORY_FIELDS.split(","):
                unread(skipped, "slurm", f"sacct line {n}", "a header, no record", line,
                       message=True)
                continue
            jid, part, limit, submit, start, end, ncpus, nnodes, st = f
            if "." in jid:
                continue
            limit_s = _minutes(limit) if limit and ascii_digits(limit[0]) else None
            submitted = parse_iso(submit, self.tz)
            if self.jobcomp and submit == start:
                # `sacct -c` reports a jobcomp record's start as its submission (the
                # SubmitTime the file holds is not read back): its wait is unknown, not 0
                submitted = None
            out.append(JobStatus(
                native_id=jid, state=map_state(st), native_state=st, partition=part or None,
                walltime_s=limit_s, submitted_at=submitted,
                started_at=parse_iso(start, self.tz), ended_at=parse_iso(end, self.tz),
                cpus=known_count(ncpus) if ascii_digits(ncpus) else None,
                nodes=known_count(nnodes) if ascii_digits(nnodes) else None))
        return out

    def cancel_argv(self, native_ids: list[str]) -> list[str]:
        return ["scancel", *self._ids(native_ids).split(",")]

    def release_argv(self, native_ids: list[str]) -> list[str]:
        return ["scontrol", "release", self._ids(native_ids)]

    def update_dependency_argv(self, native_id: str, deps: list[Dependency]) -> list[str]:
        """A queued job's dependencies replaced by `deps` (every one must hold), as sbatch's
        --dependency takes them: Slurm lets the owner change a pending job's dependency,
        one that can never be met included (its job stays queued where it was)."""
        return ["scontrol", "update", f"JobId={self._ids([native_id])}",
                f"Dependency={self.dependency_value(deps)}"]

    def dependency_value(self, deps: list[Dependency]) -> str:
        """`deps` as one value of sbatch's --dependency (every one must hold), e.g.
        `afterok:12:13,afterany:14`: whole-job kinds only, each with job ids."""
        if not deps or not all(d.job_ids for d in deps) or any(d.per_task for d in deps):
            raise BadInput("slurm: a dependency update takes whole-job kinds (afterok, "
                           "afterany, afternotok, after), each with at least one job id")
        return ",".join(f"{d.kind}:{self._ids(d.job_ids).replace(',', ':')}" for d in deps)

    token_in_comment = True  # the idempotency token travels in --comment, not the name

    def find_by_name_argv(self, name: str, user: str | None = None) -> list[str]:
        """Jobs named `name` (`user`'s only, when given); a name holding a comma (which
        --name reads as a list of names) is not filtered by the scheduler: the caller tells
        the jobs apart by their token."""
        if not name or "\n" in name:
            raise BadInput(f"slurm: unusable job name {name!r}")
        mine = [f"--user={u}"] if (u := user_filter("slurm", user)) else []
        if "," in name:
            return self._squeue("-h", "-t", "all", *mine)
        return self._squeue("-h", "-t", "all", *mine, f"--name={name}")

    def snapshot_argvs(self) -> dict[str, list[str]]:
        return {
            # --all: hidden partitions too (a job may name one), and those of other groups
            # (their AllowGroups says so)
            "partitions": self._q("scontrol", "--all", "show", "partition", "-o"),
            "nodes": self._q("scontrol", "-d", "show", "node", "-o"),
            "queue": self._squeue("-h", "-a"),
            # the QOS limits a job meets (a site without accounting answers nothing; a
            # slurmdbd that does not answer in 10 s never holds up the rest of the probe)
            "qos": self._q("sh", "-c", "timeout 10 sacctmgr -nP show qos "
                           f"format={QOS_FIELDS} 2>/dev/null; exit 0"),
            # per job, the QOS and account it is under (its use counts against the
            # limits of both), whether it shares its CPUs and, for a running job, what it
            # holds (tres-alloc: its memory above all, which the queue listing lacks and a
            # QOS's or association's `mem` TRES counts), in one query beside the queue
            # (squeue itself, so a configured path for it applies)
            "queue_qos": self._q("squeue", "-h", "-a", "-O", QUEUE_JOB_FIELDS),
            # the advanced reservations: a job naming one runs on its nodes in its window,
            # and a job that does not name one cannot run on them then
            "reservations": self._q("sh", "-c", "scontrol show reservation -o 2>/dev/null; "
                                    "exit 0"),
            # the licenses defined (sbatch refuses a job asking one the site lacks)
            "licenses": self._q("sh", "-c", "scontrol show licenses -o 2>/dev/null; exit 0"),
            # who the probe runs as, that user's associations (default QOS, QOS allowed,
            # limits), then the accounts above them up to the root (their limits too)
            "assoc": self._q("sh", "-c", ASSOC_PROBE),
            # their TRES-minutes used (GrpTRESMins, GrpTRESRunMins hold a job past them);
            # a failure says why (its error and exit status) and fails nothing else
            "assoc_usage": self._q("sh", "-c", f"timeout 10 sshare -nP -o {USAGE_FIELDS} "
                                   f"2>&1 || echo \"{PROBE_EXIT} $?\"; exit 0"),
            # each QOS's TRES-minutes used (its GrpTRESMins, GrpTRESRunMins hold a job past
            # them), as slurmctld counts them now
            "qos_usage": self._q("sh", "-c", "timeout 10 scontrol -o show assoc_mgr "
                                 f"flags=qos 2>&1 || echo \"{PROBE_EXIT} $?\"; exit 0"),
            # the site's own SlurmdTimeout, ResumeTimeout, SuspendTimeout and SuspendTime:
            # how long a node not responding, rebooting or powered down stays out, and
            # how long one idles before it powers down; its MaxArraySize
            # (cached like the partitions, not per queue)
            "config": self._q("sh", "-c", "scontrol show config 2>/dev/null; exit 0"),
            # what a new job's multifactor priority is weighed by: the user's fair share,
            # the QOS priorities, the user's default account (`slurm_priority`)
            "priority_factors": self._q("sh", "-c", PRIORITY_PROBE),
            # each waiting job's priority (sprio), where the new job goes among them
            "job_priorities": self._q("sh", "-c", SPRIO_PROBE),
        }

    # outputs that change with the queue: read with every snapshot (the rest is cached)
    # (the licenses' use too: one short scontrol query in the same batch)
    live_outputs = frozenset({"queue", "queue_qos", "licenses", "job_priorities"})

    @staticmethod
    def unasked_outputs(cached: Mapping[str, str]) -> frozenset[str]:
        """The snapshot outputs not asked, given the cached ones: sprio where the cached
        `scontrol show config` names a priority plugin other than multifactor (sprio then
        reads nothing); asked while the plugin is not known."""
        plugin = priority_plugin(cached.get("config", ""))
        return frozenset({"job_priorities"}) if plugin and plugin != MULTIFACTOR \
            else frozenset()

    # the snapshot output discovery reads the cluster's own name from (`scontrol show
    # config`, already asked for the node timeouts): the name a job reads as
    # $SLURM_CLUSTER_NAME (the sites file's name for the site need not be it); a failure
    # leaves the name unknown, nothing else
    cluster_name_output = "config"

    @staticmethod
    def parse_cluster_name(text: str) -> str | None:
        """`ClusterName = alpha` from `scontrol show config`; None when the line is not
        there or its value is not a name (Slurm keeps ClusterName lower case)."""
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            if eq and key.strip() == "ClusterName":
                value = value.strip()
                return value.lower() if re.fullmatch(r"[A-Za-z0-9][\w.-]*", value) else None
        return None

    @staticmethod
    def parse_node_timeouts(text: str) -> dict[str, float]:
        """`SlurmdTimeout = 300 sec`, `ResumeTimeout = 60 sec`, `SuspendTimeout = 30 sec`,
        `SuspendTime = 600 sec` (how long a node stays idle before it is powered down),
        `KillWait = 30 sec` (from a job's kill at its limit to its end) and `OverTimeLimit =
        0 min` (how long past its limit a job runs before that kill; UNLIMITED:
        OVER_TIME_UNLIMITED)
        from `scontrol show config` as seconds, by those names; a line missing or not a
        number (`SuspendTime = NONE`: power saving off) is left out (placement then takes
        Slurm's default)."""
        out: dict[str, float] = {}
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            key = key.strip()
            if eq and key == "OverTimeLimit":
                # `0 min`, `UNLIMITED`: how long a job may run past its limit (seconds)
                over = over_time_s(value.strip().removesuffix("min").strip())
                if over is not None:
                    out[key] = over
                continue
            m = re.fullmatch(r"\s*([0-9]+)(?:\s*sec)?\s*", value)
            if eq and m and key in ("SlurmdTimeout", "ResumeTimeout", "SuspendTimeout",
                                    "SuspendTime", "KillWait"):
                out[key] = float(m.group(1))
        return out

    @staticmethod
    def parse_preemption(text: str) -> tuple[str | None, float | None]:
        """`PreemptType = preempt/partition_prio` and `PreemptExemptTime = 00:10:00` (or
        `-1`/`NONE`: none) from `scontrol show config`: the type (None: no such line) and
        the exempt time in seconds (None: none, or not read)."""
        kind = exempt = None
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            key, value = key.strip(), value.strip()
            if eq and key == "PreemptType" and re.fullmatch(r"preempt/[a-z_]+", value):
                kind = value
            elif eq and key == "PreemptExemptTime" and value not in ("", "-1", "NONE"):
                seconds = parse_slurm_time(value)
                exempt = float(seconds) if seconds else None
        return kind, exempt

    @staticmethod
    def parse_site_preempt_mode(text: str) -> str | None:
        """`PreemptMode = REQUEUE` (or `OFF`, `GANG,SUSPEND` ...) from `scontrol show config`:
        the site-wide mode a QOS of PreemptMode=cluster takes; None when the line is not there."""
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            if eq and key.strip() == "PreemptMode" and value.strip():
                return value.strip().upper()
        return None

    @staticmethod
    def parse_max_array_size(text: str) -> int | None:
        """`MaxArraySize = 1001` from `scontrol show config`; None when the line is not
        there or is not a whole number above 0."""
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            if eq and key.strip() == "MaxArraySize":
                m = re.fullmatch(r"\s*([0-9]{1,10})\s*", value)
                return limit_count(m.group(1)) or None if m else None
        return None

    @staticmethod
    def parse_bf_max_job_user(text: str) -> int | None:
        """`bf_max_job_user=N` of `SchedulerParameters = ...` in `scontrol show config`:
        how many of one user's waiting jobs Slurm's backfill tests at most; None when not
        set, 0 (no cap) or not a whole number."""
        n = (_scheduler_parameters(text) or {}).get("bf_max_job_user", "")
        return int(n) if re.fullmatch(r"[0-9]{1,9}", n) and int(n) else None

    @staticmethod
    def parse_backfill(text: str) -> Literal["fifo"] | None:
        """"fifo" where `SchedulerType = sched/builtin` in `scontrol show config` (no
        backfill: jobs start in priority order); None for sched/backfill, or when the line
        is not there (placement then models Slurm's backfill, its default)."""
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            if eq and key.strip() == "SchedulerType":
                return "fifo" if value.strip() == "sched/builtin" else None
        return None

    @staticmethod
    def parse_backfill_limits(text: str) -> dict[str, int]:
        """`bf_max_job_part=N`, `bf_resolution=S` (seconds), `bf_min_prio_reserve=P`,
        `bf_min_age_reserve=S` (seconds), `bf_job_part_count_reserve=N`,
        `bf_max_job_user_part=N` and `bf_max_job_test=N` of `SchedulerParameters = ...` in
        `scontrol show config`, by those names; one not set, 0 or not a whole number is left
        out (up to ten digits: a job's priority, and so bf_min_prio_reserve, runs to
        2**32 - 1)."""
        params = _scheduler_parameters(text) or {}
        return {k: int(n) for k in ("bf_max_job_part", "bf_resolution", "bf_min_prio_reserve",
                                    "bf_min_age_reserve", "bf_job_part_count_reserve",
                                    "bf_max_job_user_part", "bf_max_job_test")
                if re.fullmatch(r"[0-9]{1,10}", n := params.get(k, "")) and int(n)}

    @staticmethod
    def parse_config_words(text: str) -> tuple[bool | None, str | None]:
        """From `scontrol show config`: whether memory is consumable (`SelectTypeParameters
        = CR_CORE_MEMORY`: True; CR_CORE, CR_CPU ...: False; None without the line) and
        EnforcePartLimits (`ALL`, `ANY`, `NO`; None without the line)."""
        memory = enforce = None
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            key, value = key.strip(), value.strip().upper()
            if eq and key == "SelectTypeParameters" and value.startswith("CR_"):
                memory = any(w.strip().endswith("MEMORY") for w in value.split(","))
            elif eq and key == "EnforcePartLimits" and value in ("ALL", "ANY", "NO"):
                enforce = value
        return memory, enforce

    @staticmethod
    def parse_select_type(text: str) -> str | None:
        """`SelectType = select/linear` of `scontrol show config`: the resource selection
        plugin, lower case; None without the line (or a value that names no plugin)."""
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            if eq and key.strip() == "SelectType" and \
                    re.fullmatch(r"select/[a-z_]+", value := value.strip().lower()):
                return value
        return None

    @staticmethod
    def parse_bf_window(text: str) -> float | None:
        """`bf_window=M` (minutes) of `SchedulerParameters = ...` in `scontrol show
        config`, in seconds: how far ahead Slurm's backfill plans; its default, 1440
        minutes, where the line is there without it; None when there is no such line (or
        the value is not a whole number above 0)."""
        params = _scheduler_parameters(text)
        if params is None:
            return None
        if "bf_window" not in params:
            return BF_WINDOW_DEFAULT_MIN * 60.0
        n = params["bf_window"]
        return int(n) * 60.0 if re.fullmatch(r"[0-9]{1,9}", n) and int(n) else None

    # -- parsers ------------------------------------------------------------
    def parse_submit(self, stdout: str) -> str:
        """'123' or '123;cluster' -> '123' (ten digits at most: a Slurm job id is a 32-bit
        number; a longer one is no id of any job there)."""
        for line in stdout.splitlines():
            m = re.fullmatch(r"\s*([0-9]{1,10})(?:;\S+)?\s*", line)
            if m:
                return m.group(1)
        raise fail("slurm", "sbatch output", "no job id", stdout)

    def parse_status(self, stdout: str, skipped: list[str] | None = None
                     ) -> list[JobStatus]:
        """Lines of SQUEUE_FIELDS; an empty output is an empty list. `skipped`: where to
        say the lines that are no record (else SiteError)."""
        out = []
        if is_separated(stdout):  # a query of this engine's: every field there
            records = _records(stdout, _NF, "squeue", skipped=skipped)
        else:
            records = [_with_time_used(f)
                       for f in _lines(stdout, _NF - 1, "squeue", skipped=skipped)]
        for f in records:
            jid, st, start, end, submit, limit, nn, cpus, user, part, tres, nodes, reason, \
                comment, used, name = f
            state = map_state(st)
            t_start = parse_iso(start, self.tz)
            try:
                walltime = parse_duration(limit)
            except ValueError:
                walltime = None
            out.append(JobStatus(
                native_id=jid, state=state, native_state=st or None, name=name or None,
                user=clean(user), partition=clean(part), nodes=known_count(nn),
                cpus=known_count(cpus),
                # %b is the job's TRES per node (its GPUs asked otherwise, `gpus_of_jobs`)
                gpus=gpus_asked(known_count(nn), per_node=tres),
                walltime_s=walltime, submitted_at=parse_iso(submit, self.tz),
                started_at=t_start if state != JobState.PENDING else None,
                ended_at=parse_iso(end, self.tz) if state.terminal else None,
                estimated_start=t_start if state == JobState.PENDING else None,
                reason=_with_ending(state_reason(st), clean(reason)),
                comment=clean(comment), node_list=clean(nodes),
                time_used_s=parse_duration(used) if _TIME_USED.fullmatch(used) else None,
            ))
        return out

    def parse_estimates(self, stdout: str) -> dict[str, datetime | None]:
        """`squeue --start -o '%i|%S|%r'` -> {id: estimated start or None}."""
        out: dict[str, datetime | None] = {}
        for line in stdout.splitlines():
            if line.strip():
                jid, _, rest = line.partition("|")
                out[jid.strip()] = parse_iso(rest.split("|", 1)[0], self.tz)
        return out

    def parse_status_json(self, stdout: str, skipped: list[str] | None = None
                          ) -> list[JobStatus]:
        """`squeue --json` (openapi v0.0.38 and later shapes); `skipped`: where to say a
        job without a job_id, or a line before the JSON (a warning), left out (else
        SiteError)."""
        data = load_json("slurm", "squeue --json", stdout, skipped=skipped)
        if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
            raise fail("slurm", "squeue --json", "no 'jobs' list", stdout)
        errors = [e for e in data.get("errors") or [] if e]
        if errors and not data["jobs"]:
            raise fail("slurm", "squeue --json", f"errors: {errors}")
        out = []
        for n, j in enumerate(data["jobs"], 1):
            if not isinstance(j, dict) or whole_number(j.get("job_id")) is None:
                unread(skipped, "slurm", f"squeue --json job {n}", "no job_id", str(j)[:200])
                continue
            out.append(self._json_job(j))
        return out

    def _json_job(self, j: dict[str, Any]) -> JobStatus:
        jid = str(whole_number(j.get("job_id")))
        task, parent = whole_number(j.get("array_task_id")), to_int(j.get("array_job_id"))
        if task is not None and task in NOT_SET_MARKS:  # v0.0.38's NO_VAL: no task
            task = None
        het, offset = to_int(j.get("het_job_id")), to_int(j.get("het_job_offset"))
        if clean(j.get("array_task_string")):
            jid = f"{jid}_[{j['array_task_string']}]"
        elif parent and task is not None:
            jid = f"{parent}_{task}"
        elif het and offset is not None:  # a component under its own job id: as squeue's %i
            jid = f"{het}+{offset}"
        raw_state = _json_state(j.get("job_state"))
        state = map_state(raw_state)
        native = "+".join(raw_state) if isinstance(raw_state, list) else raw_state
        ec = j.get("exit_code")
        if isinstance(ec, dict):  # v0.0.39+: {status, return_code, signal}
            signal = ec.get("signal") if isinstance(ec.get("signal"), dict) else {}
            # the signal's number: `id` from v0.0.40 on, `signal_id` in v0.0.39
            sig = to_int(signal.get("id", signal.get("signal_id")))
            exit_code = 128 + sig if sig else to_int(ec.get("return_code"))
        else:
            exit_code = decode_wait_status(ec) if isinstance(ec, int) else None
        # v0.0.38's INFINITE / NO_VAL (or either printed signed, -1 / -2): none
        limit = limit_seconds(j.get("time_limit"), 60)
        start = from_epoch(j.get("start_time"))
        ending = scheduler_ending(raw_state)
        reason = _with_ending(state_reason(raw_state), clean(j.get("state_description"))
                              or clean(j.get("state_reason")))
        if ending:
            exit_code = _signal_only(exit_code)
        return JobStatus(
            native_id=jid, state=state, native_state=native, name=clean(j.get("name")),
            user=clean(j.get("user_name")), partition=clean(j.get("partition")),
            nodes=known_count(j.get("node_count")), cpus=known_count(j.get("cpus")),
            # the job's GPUs in all: what it holds, else what it asks, in whichever form
            gpus=_gpus_of(j.get("tres_alloc_str")) or gpus_asked(
                known_count(j.get("node_count")), per_node=j.get("tres_per_node"),
                per_job=j.get("tres_per_job"), per_task=j.get("tres_per_task"),
                tasks=known_count(j.get("tasks")), per_socket=j.get("tres_per_socket"),
                sockets=known_count(j.get("sockets_per_node"), bits=16)),
            walltime_s=limit or None,
            submitted_at=from_epoch(j.get("submit_time")),
            started_at=start if state != JobState.PENDING else None,
            ended_at=from_epoch(j.get("end_time")) if state.terminal else None,
            estimated_start=start if state == JobState.PENDING else None,
            exit_code=exit_code if state.terminal else None,
            reason=reason, comment=clean(j.get("comment")), node_list=clean(j.get("nodes")),
        )

    def parse_accounting(self, stdout: str, skipped: list[str] | None = None
                         ) -> list[JobStatus]:
        """sacct -P records of SACCT_FIELDS; job steps (123.batch) are skipped. A job whose
        record cannot be told apart from text in a name (`_sacct_records`) is an UNKNOWN
        record saying so, for a later query (or the job's own end report) to settle.
        `skipped`: where to say the lines before the first record and after the last that
        are none (messages; else SiteError)."""
        out = []
        records, unsure = _sacct_records(stdout, one_line_names=self.jobcomp,
                                         skipped=skipped)
        for jid in unsure:
            if "." not in jid:
                out.append(JobStatus(native_id=jid, state=JobState.UNKNOWN,
                                     reason=UNSURE_ACCOUNTING))
        for f in records:
            jid, st, ec, start, end, nodes, name = f
            if "." in jid:
                continue
            state = map_state(st)
            m = re.search(r"by ([0-9]+)", st)
            ending = scheduler_ending(st)
            out.append(JobStatus(
                native_id=jid, state=state, native_state=st, name=name or None,
                # a requeued job waits again: its last run's times are not this one's
                started_at=parse_iso(start, self.tz) if state != JobState.PENDING else None,
                ended_at=parse_iso(end, self.tz) if state.terminal else None,
                exit_code=(_signal_only(parse_exit(ec)) if ending else parse_exit(ec))
                if state.terminal else None,
                reason=state_reason(st) or (f"cancelled by uid {m.group(1)}" if m else None),
                node_list=self._node_list(nodes),
            ))
        return out

    # -- snapshot -----------------------------------------------------------
    def parse_reservations(self, stdout: str) -> list[Reservation]:
        """`scontrol show reservation -o`: one reservation a line ("No reservations in the
        system" names none)."""
        out = []
        for line in stdout.splitlines():
            kv = parse_kv_line(line)
            if "ReservationName" not in kv:
                continue

            def names(key: str, kv: dict[str, str] = kv) -> list[str] | None:
                got = [x for x in (clean(kv.get(key)) or "").split(",") if x]
                return got or None
            out.append(Reservation(
                name=kv["ReservationName"], start=parse_iso(kv.get("StartTime"), self.tz),
                end=parse_iso(kv.get("EndTime"), self.tz),
                nodes=[x for x in [clean(kv.get("Nodes"))] if x],
                users=names("Users"), accounts=names("Accounts"), groups=names("Groups"),
                flags=[f.upper() for f in names("Flags") or []],
                state=(kv.get("State") or "INACTIVE").upper()))
        return out

    def parse_licenses(self, stdout: str, free: bool = False) -> dict[str, int] | None:
        """`scontrol show licenses -o`: a license a line (LicenseName=, Total=), or "No
        licenses configured" ({}); None when it said neither (not known). `free`: how many
        are free now instead (Free=, which 20.11 and later print; else Total less Used and
        Reserved, each 0 when not printed); a line without Used= or Free= leaves it None."""
        out: dict[str, int] = {}
        for line in stdout.splitlines():
            kv = parse_kv_line(line)
            total = known_count(kv.get("Total"))
            if "LicenseName" not in kv or total is None:
                continue
            if not free:
                out[kv["LicenseName"]] = total
            elif (now := known_count(kv.get("Free"))) is not None:
                out[kv["LicenseName"]] = now
            elif (used := known_count(kv.get("Used"))) is not None:
                reserved = known_count(kv.get("Reserved")) or 0
                out[kv["LicenseName"]] = max(0, total - used - reserved)
            else:
                return None
        if out or "no licenses" in stdout.lower():
            return out
        return None

    def parse_partitions(self, stdout: str) -> list[Partition]:
        out = []
        for line in stdout.splitlines():
            kv = parse_kv_line(line)
            if "PartitionName" not in kv:
                continue
            accounts = clean(kv.get("AllowAccounts"))
            defaults = parse_kv_line((clean(kv.get("JobDefaults")) or "").replace(",", " "))
            out.append(Partition(
                name=kv["PartitionName"], default=kv.get("Default") == "YES",
                state=kv.get("State", "UP"), max_time_s=_minutes(kv.get("MaxTime")),
                default_time_s=_minutes(kv.get("DefaultTime")),
                max_nodes=limit_count(kv.get("MaxNodes")),
                min_nodes=limit_count(kv.get("MinNodes")) or None,  # 0: no lower bound
                max_cpus_per_node=limit_count(kv.get("MaxCPUsPerNode")),
                nodes=partition_nodes(kv.get("Nodes")),
                total_nodes=known_count(kv.get("TotalNodes")) or 0,
                total_cpus=known_count(kv.get("TotalCPUs")) or 0,
                allowed_accounts=None if accounts in (None, "ALL") else accounts.split(","),
                denied_accounts=_names(kv.get("DenyAccounts")),
                allowed_qos=_names(kv.get("AllowQos")), denied_qos=_names(kv.get("DenyQos")),
                def_mem_per_cpu_mb=limit_count(kv.get("DefMemPerCPU")),
                def_mem_per_node_mb=limit_count(kv.get("DefMemPerNode")),
                def_cpus_per_gpu=limit_count(defaults.get("DefCpuPerGPU")),
                def_mem_per_gpu_mb=limit_count(defaults.get("DefMemPerGPU")),
                allowed_groups=_names(kv.get("AllowGroups")),
                max_mem_per_cpu_mb=limit_count(kv.get("MaxMemPerCPU")),
                max_mem_per_node_mb=limit_count(kv.get("MaxMemPerNode")),
                oversubscribe=clean(kv.get("OverSubscribe")),
                over_time_s=over_time_s(kv.get("OverTimeLimit")),
                preempt_mode=clean(kv.get("PreemptMode")),
                grace_time_s=known_count(kv.get("GraceTime")),
                # GLOBAL (none set) reads as None; a 0 is the partition's own, which
                # slurmctld gives its nodes in place of the site's (power_save.c)
                resume_timeout_s=known_count(kv.get("ResumeTimeout")),
                suspend_timeout_s=known_count(kv.get("SuspendTimeout")),
                priority_tier=known_count(kv.get("PriorityTier"), bits=16),
                priority_job_factor=known_count(kv.get("PriorityJobFactor"), bits=16),
                max_cpus_per_socket=limit_count(kv.get("MaxCPUsPerSocket")),
                hidden=kv.get("Hidden") == "YES", lln=kv.get("LLN") == "YES",
                exclusive_user=kv.get("ExclusiveUser") == "YES",
                root_only=kv.get("RootOnly") == "YES", req_resv=kv.get("ReqResv") == "YES",
                qos=clean(kv.get("QoS")) if clean(kv.get("QoS")) not in (None, "N/A")
                else None,
            ))
        return out

    def parse_nodes(self, stdout: str, skipped: list[str] | None = None) -> list[Node]:
        """`scontrol -d show node -o` (GresUsed needs -d; AllocTRES is the fallback). Its
        free text (Reason, Comment, Extra) comes after every field read here. A record
        without its CPU count (CPUTot, CPUEfctv: an output cut short) is said in `skipped`
        and left out (else SiteError), never read as a node of no CPUs."""
        out = []
        for n, line in enumerate(stdout.splitlines(), 1):
            kv = parse_kv_line(line, free_text=_NODE_FREE_TEXT)
            if "NodeName" not in kv:
                continue
            if not (clean(kv.get("CPUTot")) or clean(kv.get("CPUEfctv"))):
                unread(skipped, "slurm", f"scontrol show node line {n}",
                       "no CPUTot or CPUEfctv (cut short?)", line)
                continue
            gpus, kind = gpu_count(kv.get("Gres"))
            used = gpu_count(kv.get("GresUsed"))[0] or gpu_count(kv.get("AllocTRES"))[0]
            feats = clean(kv.get("ActiveFeatures")) or clean(kv.get("AvailableFeatures"))
            active = feats.split(",") if feats else []
            # features a reboot makes active (KNL modes, node_features plugins): a job that
            # asks one gets the node rebooted into it
            later = [f for f in (clean(kv.get("AvailableFeatures")) or "").split(",")
                     if f and f not in active]
            parts = clean(kv.get("Partitions"))
            # what jobs may have: the CPUs and memory left by core and memory
            # specialisation (CoreSpecCount / CPUSpecList, MemSpecLimit) are the system's
            cpus = known_count(kv.get("CPUEfctv"), bits=16) \
                or known_count(kv.get("CPUTot"), bits=16) or 0
            tpc = known_count(kv.get("ThreadsPerCore"), bits=16) or 1
            # a CpuSpecList without a core count: whole cores are kept for the system
            spec_cores = known_count(kv.get("CoreSpecCount"), bits=16) \
                or -(-_cpu_ids(kv.get("CPUSpecList")) // tpc)
            if "CPUEfctv" not in kv and spec_cores:
                cpus = max(0, cpus - spec_cores * tpc)
            memory = (known_count(kv.get("RealMemory")) or 0) \
                - (known_count(kv.get("MemSpecLimit")) or 0)
            out.append(Node(
                name=kv["NodeName"], state=kv.get("State", "UNKNOWN").lower(),
                cpus=cpus, cpus_allocated=known_count(kv.get("CPUAlloc"), bits=16) or 0,
                memory_mb=max(0, memory), gpus=gpus, gpus_allocated=used,
                gpu_type=kind, features=active + later, reboot_features=later,
                partitions=parts.split(",") if parts else [], architecture=clean(kv.get("Arch")),
                gres=other_gres(kv.get("Gres")),
                memory_allocated=known_count(kv.get("AllocMem")) or 0,
                memory_allocated_unknown="AllocMem" not in kv,
                threads_per_core=known_count(kv.get("ThreadsPerCore"), bits=16),
                gpu_types=gpu_types(kv.get("Gres")),
                sockets=known_count(kv.get("Sockets"), bits=16), weight=to_int(kv.get("Weight")),
                gpu_sockets=gpu_sockets(kv.get("Gres")),
                cores_per_socket=known_count(kv.get("CoresPerSocket"), bits=16),
                tmp_disk_mb=known_count(kv.get("TmpDisk")), spec_cores=spec_cores or 0,
                reason=clean(_STAMP.sub("", kv.get("Reason") or "")),
                resume_after=parse_iso(kv.get("ResumeAfterTime"), self.tz),
            ))
        return out

    @staticmethod
    def _node_list(text: Any) -> str | None:
        """A job's node list; None for none (sacct's `None assigned` of a job that never
        ran, `(null)`)."""
        s = clean(text)
        return None if s is None or s.lower() == "none assigned" else s

    def parse_sinfo_nodes(self, stdout: str, skipped: list[str] | None = None) -> list[Node]:
        """`sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%C|%l|%D'` (one line per node and partition).
        `skipped`: where to say the lines of another shape, and a header (`NODELIST|STATE|
        CPUS|...`, which sinfo without -h prints, again each time with -i), left out (else
        SiteError)."""
        nodes: dict[str, Node] = {}
        for n, line in enumerate(stdout.splitlines(), 1):
            if not line.strip():
                continue
            f = line.split("|")
            if len(f) < 8:
                unread(skipped, "slurm", f"sinfo line {n}", "expected 10 '|' fields", line)
                continue
            if re.fullmatch(r"[A-Z]+", f[2].strip()):
                unread(skipped, "slurm", f"sinfo line {n}", "a header, no node", line,
                       message=True)
                continue
            # `64+`: the nodes of a line grouped without -N have 64 CPUs or more (the least)
            cpus = known_count(f[2].strip().removesuffix("+")) or 0
            alloc = (f[7].split("/") + ["0"])[0]
            gpus, kind = gpu_count(f[4])
            node = nodes.setdefault(f[0], Node(
                name=f[0], state=f[1], cpus=cpus, cpus_allocated=known_count(alloc) or 0,
                memory_mb=memory_mb(f[3].strip().removesuffix("+")) or 0, gpus=gpus,
                gpu_type=kind, memory_allocated_unknown=True,
                features=[x for x in (clean(f[5]) or "").split(",") if x]))
            node.partitions.append(f[6].rstrip("*"))
        return list(nodes.values())

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot:
        skipped: list[str] = []
        jobs = self.parse_status(outputs.get("queue", ""), skipped)
        under = parse_job_qos(outputs.get("queue_qos", ""))
        accounts = parse_job_qos(outputs.get("queue_qos", ""), field=2)
        shares = parse_job_qos(outputs.get("queue_qos", ""), field=3)
        if under or accounts or shares:
            jobs = [j.model_copy(update={
                "qos": under.get(j.native_id), "account": accounts.get(j.native_id),
                "shares": shares[j.native_id] == "YES" if j.native_id in shares else None})
                for j in jobs]
        jobs = gpus_of_jobs(outputs.get("queue_qos", ""), jobs)
        if licensed := parse_job_licenses(outputs.get("queue_qos", "")):
            jobs = [j.model_copy(update={"licenses": licensed[j.native_id]})
                    if j.native_id in licensed else j for j in jobs]
        if waits_for := parse_job_dependencies(outputs.get("queue_qos", "")):
            jobs = [j.model_copy(update={"dependency": waits_for[j.native_id]})
                    if j.native_id in waits_for else j for j in jobs]
        held = parse_tres_alloc(outputs.get("queue_qos", ""))
        if held:  # a running job's memory a node (tres-alloc's is the job's in all)
            jobs = [j.model_copy(update={"memory_mb": -(-held[j.native_id] // (j.nodes or 1))})
                    if j.state == JobState.RUNNING and j.native_id in held else j
                    for j in jobs]
        user, assocs = parse_assoc(outputs.get("assoc", ""))
        minutes_unread: dict[str, str] = {}  # why a GrpTRESMins' use could not be read
        if assocs:
            usage = parse_usage(outputs.get("assoc_usage", ""))
            assocs = with_usage(assocs, usage, user)
            if any(not a.tres_mins_used_known for a in assocs):
                minutes_unread["associations"] = usage_unread(
                    outputs.get("assoc_usage", ""), "sshare", read_any=bool(usage))
        qos = None
        if outputs.get("qos", "").strip():
            qos_usage = parse_qos_usage(outputs.get("qos_usage", ""))
            qos = with_qos_usage(parse_qos(outputs["qos"]), qos_usage)
            if any(not q.tres_mins_used_known for q in qos.values()):
                minutes_unread["qos"] = usage_unread(
                    outputs.get("qos_usage", ""), "scontrol show assoc_mgr",
                    read_any=bool(qos_usage))
        resv = self.parse_reservations(outputs["reservations"]) \
            if "reservations" in outputs else None
        timeouts = self.parse_node_timeouts(outputs.get("config", ""))
        priority = parse_priority(outputs.get("config", ""), outputs.get("priority_factors"))
        if priority is not None and "weights" in priority.unread:  # said, not left out
            skipped.append(f"scontrol show config: priority weights left out, "
                           f"{priority.unread['weights']}")
        preempt_type, preempt_exempt = self.parse_preemption(outputs.get("config", ""))
        backfill_more = self.parse_backfill_limits(outputs.get("config", ""))
        memory_consumable, enforce_part_limits = self.parse_config_words(
            outputs.get("config", ""))
        return SiteSnapshot(
            reservations=resv, node_timeouts=timeouts or None,
            preempt_type=preempt_type, preempt_exempt_s=preempt_exempt,
            site_preempt_mode=self.parse_site_preempt_mode(outputs.get("config", "")),
            max_array_size=self.parse_max_array_size(outputs.get("config", "")),
            bf_max_job_user=self.parse_bf_max_job_user(outputs.get("config", "")),
            bf_window_s=self.parse_bf_window(outputs.get("config", "")),
            bf_max_job_part=backfill_more.get("bf_max_job_part"),
            bf_resolution_s=backfill_more.get("bf_resolution"),
            bf_min_prio_reserve=backfill_more.get("bf_min_prio_reserve"),
            bf_min_age_reserve_s=backfill_more.get("bf_min_age_reserve"),
            bf_job_part_count_reserve=backfill_more.get("bf_job_part_count_reserve"),
            bf_max_job_user_part=backfill_more.get("bf_max_job_user_part"),
            bf_max_job_test=backfill_more.get("bf_max_job_test"),
            memory_consumable=memory_consumable, enforce_part_limits=enforce_part_limits,
            select_type=self.parse_select_type(outputs.get("config", "")),
            backfill=self.parse_backfill(outputs.get("config", "")),
            priority=priority,
            job_priorities=parse_job_priorities(outputs.get("job_priorities", "")),
            licenses=self.parse_licenses(outputs.get("licenses", "")),
            licenses_free=self.parse_licenses(outputs.get("licenses", ""), free=True),
            site=site,
            partitions=self.parse_partitions(outputs.get("partitions", "")),
            nodes=self.parse_nodes(outputs.get("nodes", ""), skipped),
            jobs=jobs,
            qos=qos, user=user, associations=assocs, tres_mins_unread=minutes_unread,
            warnings=[f"{site}: {w}" for w in skipped],
        )


def over_time_s(text: str | None) -> float | None:
    """Slurm's OverTimeLimit as a partition prints it (minutes, `UNLIMITED`, `NONE`: the
    site's) -> seconds, OVER_TIME_UNLIMITED, or None (the site's, or not a count)."""
    text = (text or "").strip().upper()
    if text == "UNLIMITED":
        return OVER_TIME_UNLIMITED
    return float(int(text) * 60) if re.fullmatch(r"[0-9]{1,5}", text) else None


QOS_FIELDS = ("Name,MaxTRES,MaxTRESPerNode,MaxTRESPerUser,GrpTRES,MaxWall,GrpJobs,"
              "GrpSubmitJobs,MaxJobsPerUser,MaxSubmitJobsPerUser,MinTRES,Flags,"
              "GrpTRESMins,GrpTRESRunMins,MaxTRESMins,Preempt,PreemptMode,GraceTime")
ASSOC_FIELDS = ("User,Account,Partition,DefaultQOS,QOS,ParentName,GrpTRES,GrpJobs,"
                "GrpSubmitJobs,MaxJobs,MaxSubmitJobs,MaxTRES,GrpTRESMins,GrpTRESRunMins,"
                "MaxTRESMins")
# what the user's associations and the accounts above them have used of their TRES-minutes
# limits: `sshare -nP` (the user's own rows and their accounts'), Slurm 22.05's fields:
#   Account|User|GrpTRESRaw|TRESRunMins
#   physics||cpu=91500,mem=0,energy=0,node=2300,billing=91500,fs/disk=0,vmem=0,pages=0|cpu=7680,...
#    physics|bob|cpu=61000,mem=0,...|cpu=3840,...
# (accounts indented by depth); GrpTRESRaw taken in TRES-minutes, as GrpTRESMins counts it
USAGE_FIELDS = "Account,User,GrpTRESRaw,TRESRunMins"
# the user's associations, then the account lines (User empty) of their accounts and of
# each parent in turn, at most 8 levels up; sacctmgr's silence or slowness gives nothing
ASSOC_PROBE = (
    'u=$(id -un); echo "user|$u"; f=' + ASSOC_FIELDS + '; '
    'mine=$(timeout 10 sacctmgr -nP show assoc where user="$u" format=$f 2>/dev/null); '
    'echo "$mine"; a=$(echo "$mine" | awk -F"|" \'$2!="" {print $2}\' | sort -u | '
    "paste -sd, -); i=0; "
    'while [ -n "$a" ] && [ $i -lt 8 ]; do '
    'up=$(timeout 10 sacctmgr -nP show assoc where account="$a" format=$f 2>/dev/null | '
    'awk -F"|" \'$1==""\'); [ -n "$up" ] && echo "$up"; '
    'a=$(echo "$up" | awk -F"|" \'$6!="" {print $6}\' | sort -u | paste -sd, -); '
    "i=$((i+1)); done; exit 0")


# squeue -O, in the order of `%i|%q|%a|%h` (JobArrayID prints what %i does: `A_T` for an
# array task, `A_[1-3]` for a waiting range, `H+O` for a hetjob component), then the
# compact state, the TRES a job holds (a waiting job: asks), and the GPUs it asks other
# than per node (%b: `--gpus=N`, `--gpus-per-task`, `--gpus-per-socket`) with the tasks
# and sockets a node these multiply (`*` when not set), then the licenses it holds or
# asks (`name:count,...`; `(null)` for none), then what its dependency still waits for
# (%E: `afterok:12(unfulfilled)`, `(null)`); width 0: each as long as it is, ended by '|'
QUEUE_JOB_FIELDS = ("JobArrayID:0|,QOS:0|,Account:0|,OverSubscribe:0|,StateCompact:0|,"
                    "tres-alloc:0|,tres-per-job:0|,tres-per-task:0|,tres-per-socket:0|,"
                    "NumTasks:0|,Sockets:0|,Licenses:0|,Dependency:0|")
# squeue's dependency field as it prints it: none, or terms of a kind and job ids (with
# an array task's `_N` or `_*`, a delay's `+M`) and their state, joined by ',' or '?'
_DEPENDENCY = re.compile(r"\(null\)|(?:after\w*:[0-9_*+:]+|singleton)\(\w+\)"
                         r"(?:[,?](?:after\w*:[0-9_*+:]+|singleton)\(\w+\))*")


def parse_tres_alloc(stdout: str) -> dict[str, int]:
    """`squeue -h -a -O QUEUE_JOB_FIELDS` -> {job id as %i prints it: the MB of memory the
    running job holds in all}; a waiting job (its tres-alloc is what it asks), a line of
    another shape (`%i|%q|%a|%h`), or one without `mem=` is skipped."""
    out: dict[str, int] = {}
    for line in stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) < 6 or f[4] != "R" or not _JOB_ID.fullmatch(f[0]):
            continue
        mem = _tres(f[5]).get("mem")
        if mem is not None:
            out[f[0]] = mem
    return out


def gpus_of_jobs(stdout: str, jobs: list[JobStatus]) -> list[JobStatus]:
    """`jobs` (the queue) with the GPUs each holds or asks in all, as `squeue -h -a -O
    QUEUE_JOB_FIELDS` says them (tres-alloc, tres-per-job, tres-per-task x NumTasks,
    tres-per-socket x Sockets x its nodes), where more than its GPUs per node (%b) x its
    nodes; a job without such a line (an older recording of fewer fields: those fields
    not asked) or whose fields say no GPU (`N/A`, empty) is left as it is."""
    lines: dict[str, list[str]] = {}
    for line in stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) >= 6 and _JOB_ID.fullmatch(f[0]):
            lines[f[0]] = (f + [""] * 5)[5:11]
    out = []
    for j in jobs:
        f = lines.get(j.native_id)
        gpus = gpus_asked(j.nodes, in_all=f[0], per_job=f[1], per_task=f[2],
                          tasks=known_count(f[4]), per_socket=f[3], sockets=known_count(f[5])) \
            if f else None
        out.append(j.model_copy(update={"gpus": gpus}) if (gpus or 0) > (j.gpus or 0)
                   else j)
    return out


def parse_job_licenses(stdout: str) -> dict[str, dict[str, int]]:
    """`squeue -h -a -O QUEUE_JOB_FIELDS` -> {job id: {license: count}} ({} for a job
    without licenses); a job whose entry is `a|b` (any one: which it holds is not said; its
    `|` makes the line a field longer), or a line without the field (an older recording),
    is left out."""
    out: dict[str, dict[str, int]] = {}
    for line in stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        # 13: a recording from before the dependency field was asked
        if not (len(f) == 13 or len(f) == 14 and _DEPENDENCY.fullmatch(f[12])) \
                or not _JOB_ID.fullmatch(f[0]):
            continue
        if (held := job_licenses(f[11])) is not None:
            out[f[0]] = held
    return out


def job_licenses(field: str) -> dict[str, int] | None:
    """A job's licenses as Slurm prints them (`matlab:2,ansys`, `*` for `:` too; `(null)`
    or N/A for none) -> {license: count}; None when an entry is not a license as Slurm
    prints one (`a|b`, any one of them: which it holds is not said)."""
    held: dict[str, int] = {}
    for entry in filter(None, field.split(",")):
        if entry in ("(null)", "N/A"):
            continue
        name, _, count = entry.replace("*", ":").partition(":")
        if not re.fullmatch(r"[\w.@-]+", name) or (count and not ascii_digits(count)):
            return None  # this job's are not known
        held[name] = held.get(name, 0) + (int(count) if count else 1)
    return held


def job_dependency(value: object) -> str | None:
    """What a job's dependency still waits for, as squeue prints it (`afterok:12(unfulfilled)`);
    None for none, or for a value of another shape."""
    text = value.strip() if isinstance(value, str) else ""
    return text if _DEPENDENCY.fullmatch(text) and text != "(null)" else None


def parse_job_dependencies(stdout: str) -> dict[str, str]:
    """`squeue -h -a -O QUEUE_JOB_FIELDS` -> {job id: what its dependency still waits for}
    for each job that has one (the last field, as squeue prints it); a line without the
    field (an older recording) or whose last field is not one is left out."""
    out: dict[str, str] = {}
    for line in stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) >= 14 and _JOB_ID.fullmatch(f[0]) and _DEPENDENCY.fullmatch(f[-2]) \
                and f[-2] != "(null)":
            out[f[0]] = f[-2]
    return out


def parse_job_qos(stdout: str, field: int = 1) -> dict[str, str]:
    """`squeue -h -a -O QUEUE_JOB_FIELDS` (or `-o '%i|%q|%a|%h'`) -> {job id: QOS} (`field`
    2: {job id: account}, 3: {job id: OVER_SUBSCRIBE}); lines of another shape are skipped
    (a recording of `%i|%q` has no accounts)."""
    out: dict[str, str] = {}
    for line in stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) > field and _JOB_ID.fullmatch(f[0]) and re.fullmatch(r"[\w.-]+", f[field]):
            out[f[0]] = f[field]
    return out


def parse_assoc(stdout: str) -> tuple[str | None, list[Association] | None]:
    """The probe's `user|NAME` line, then `sacctmgr -nP show assoc format=ASSOC_FIELDS`
    lines of that user: (the user, their associations; None when accounting said
    nothing, so nothing is known of them)."""
    user, out = None, []
    for line in stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) == 2 and f[0] == "user" and f[1]:
            user = f[1]
            continue
        if len(f) < 5 or " " in f[0] or " " in f[1]:
            continue
        if not f[0] and not f[1]:  # an account line names its account
            continue
        if f[0] and user is not None and f[0] != user:
            continue
        qos = [q for q in f[4].split(",") if q]
        lim = (f[5:15] + [""] * 10)[:10]  # ParentName and the limits (older recordings: none)
        counts = [limit_count(x) for x in lim[2:6]]
        out.append(Association(
            account=f[1] or None, partition=f[2] or None, default_qos=f[3] or None,
            qos=qos or None, level="user" if f[0] else "account", parent=lim[0] or None,
            grp_tres=_tres(lim[1]), grp_jobs=counts[0], grp_submit_jobs=counts[1],
            max_jobs=counts[2], max_submit_jobs=counts[3], max_tres_per_job=_tres(lim[6]),
            grp_tres_mins=_tres(lim[7]), grp_tres_run_mins=_tres(lim[8]),
            max_tres_mins_per_job=_tres(lim[9])))
    return user, out or None


def parse_usage(stdout: str) -> dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]]:
    """`sshare -nP -o USAGE_FIELDS` -> {(account, user or ''): (TRES-minutes used, running
    jobs' TRES-minutes still to run)}; lines of another shape are skipped."""
    out: dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]] = {}
    for line in stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) == 4 and re.fullmatch(r"[\w.-]+", f[0]) and "=" in f[2] + f[3]:
            out[(f[0], f[1])] = (_tres(f[2]), _tres(f[3]))
    return out


def with_usage(assocs: list[Association],
               usage: dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]],
               user: str | None) -> list[Association]:
    """The associations with what sshare says each has used of its TRES-minutes; one with
    a GrpTRESMins that sshare says nothing of has its use not known (never taken as 0)."""
    out = []
    for a in assocs:
        got = usage.get((a.account or "", user or "" if a.level == "user" else ""))
        if got:
            a = a.model_copy(update={"tres_mins_used": got[0], "tres_run_mins": got[1]})
        elif a.grp_tres_mins:
            a = a.model_copy(update={"tres_mins_used_known": False})
        out.append(a)
    return out


# the last line of a TRES-minutes probe whose command failed: `exit status N` (its error
# lines, kept, come before it)
PROBE_EXIT = "exit status"
PROBE_TIMEOUT = "124"  # timeout(1)'s status for a command it stopped


def usage_unread(stdout: str, command: str, *, read_any: bool) -> str:
    """Why a TRES-minutes probe (`command`, as `snapshot_argvs` runs it) says nothing of a
    QOS or an association: it answered for others only (`read_any`), did not answer in
    its 10 s, failed (its exit status and last error line: a fatal one comes last), or
    printed nothing it reads."""
    if read_any:
        return f"not in {command}'s output"
    lines = [x.strip() for x in stdout.splitlines() if x.strip()]
    status = lines.pop()[len(PROBE_EXIT):].strip() \
        if lines and lines[-1].startswith(PROBE_EXIT) else None
    said = lines[-1][:200] if lines else ""
    if status == PROBE_TIMEOUT:
        return f"{command} did not answer within 10 s"
    if status:
        return f"{command} failed (exit {status})" + (f": {said}" if said else "")
    return f"{command} printed " + (f"no usage line: {said}" if said else "nothing")


def parse_qos(stdout: str) -> dict[str, QosLimits]:
    """`sacctmgr -nP show qos format=QOS_FIELDS`: one QOS a line, `|` between fields. A
    line of another shape (a message in place of the table) names no QOS: its limits are
    not checked, and the rest of the snapshot stands."""
    out: dict[str, QosLimits] = {}
    for line in stdout.splitlines():
        f = line.split("|")
        if len(f) < 6 or not f[0].strip() or " " in f[0].strip():
            continue
        counts = [limit_count(x) for x in (f[6:10] + [""] * 4)[:4]]  # older recordings: none
        least, flags, grp_mins, grp_run_mins, job_mins, preempts, mode, grace = (
            f[10:18] + [""] * 8)[:8]
        out[f[0].strip()] = QosLimits(
            name=f[0].strip(), max_tres_per_job=_tres(f[1]), max_tres_per_node=_tres(f[2]),
            max_tres_per_user=_tres(f[3]), grp_tres=_tres(f[4]), max_wall_s=_minutes(f[5]),
            grp_jobs=counts[0], grp_submit_jobs=counts[1], max_jobs_per_user=counts[2],
            max_submit_jobs_per_user=counts[3], min_tres_per_job=_tres(least),
            flags=[x.strip() for x in flags.split(",") if x.strip()],
            grp_tres_mins=_tres(grp_mins), grp_tres_run_mins=_tres(grp_run_mins),
            max_tres_mins_per_job=_tres(job_mins),
            preempts=[x.strip() for x in preempts.split(",") if x.strip()],
            preempt_mode=mode.strip() or None,
            grace_time_s=parse_slurm_time(grace) if grace.strip() else None)
    return out


# `scontrol -o show assoc_mgr flags=qos`, Slurm 22.05: a heading, then one line a QOS,
# `KEY=VALUE` words; a TRES-minutes limit says each TRES as `name=LIMIT(USED)`, LIMIT `N`
# for none, USED in TRES-minutes (slurmctld's TRES-seconds / 60):
#   QOS=normal(1) UsageRaw=5940000.000000 GrpJobs=N(1) GrpSubmitJobs=N(1) GrpWall=N(99.00)
#   GrpTRES=cpu=N(8),mem=N(0),... GrpTRESMins=cpu=100000(99000),mem=N(0),...
#   GrpTRESRunMins=cpu=N(480),mem=N(0),... MaxWallPJ= MaxTRESPJ= ... MinTRESPJ=
# (without -o the same words, indented over several lines)
_QOS_RECORD = re.compile(r"^QOS=([^\s(]+)\([0-9]+\)", re.MULTILINE)
_TRES_USED = re.compile(r"([\w/:.-]+)=(?:[0-9]+|N)\(([0-9]+)\)")


def parse_qos_usage(stdout: str) -> dict[str, tuple[dict[str, int], dict[str, int]]]:
    """`scontrol -o show assoc_mgr flags=qos` -> {QOS: (TRES-minutes used of its
    GrpTRESMins, its running jobs' TRES-minutes still to run)}; a record without those
    words (another version's, a message) is left out: its usage is not known."""
    out: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
    starts = list(_QOS_RECORD.finditer(stdout))
    ends = [s.start() for s in starts[1:]] + [len(stdout)] if starts else []
    for m, end in zip(starts, ends, strict=True):
        words = dict(w.partition("=")[::2] for w in stdout[m.end():end].split())
        if "GrpTRESMins" not in words or "GrpTRESRunMins" not in words:
            continue
        used, to_run = ({t: int(n) for t, n in _TRES_USED.findall(words[key])}
                        for key in ("GrpTRESMins", "GrpTRESRunMins"))
        out[m.group(1)] = (used, to_run)
    return out


def with_qos_usage(qos: dict[str, QosLimits],
                   usage: dict[str, tuple[dict[str, int], dict[str, int]]]
                   ) -> dict[str, QosLimits]:
    """The QOS with what slurmctld says each has used of its TRES-minutes; one with a
    GrpTRESMins that slurmctld says nothing of has its use not known (never taken as 0)."""
    return {name: q.model_copy(update={"tres_mins_used": usage[name][0],
                                       "tres_run_mins": usage[name][1]})
            if name in usage else q.model_copy(update={"tres_mins_used_known": False})
            if q.grp_tres_mins else q for name, q in qos.items()}


def _tres(text: str) -> dict[str, int]:
    """'cpu=16,mem=64G,node=2,gres/gpu=4' -> counts by name (mem in MB); unreadable
    entries are left out (not checked)."""
    out: dict[str, int] = {}
    for item in (text or "").split(","):
        name, _, value = item.strip().partition("=")
        # (Slurm's NO_VAL64 / INFINITE64 printed as numbers are no count)
        n = memory_mb(value) if name == "mem" else known_count(value, bits=64)
        if name and n is not None:
            out[name] = n
    return out


def new_separator() -> str:
    """A field separator no one can have written into a job's name or comment before the
    query that asks for it runs (see `_SEP`)."""
    return f"#dj-{secrets.token_hex(8)}#"


def is_separated(stdout: str) -> bool:
    """Whether squeue or sacct output is that of a query with a fresh separator (its first
    record at the start, or after lines of messages)."""
    return _first_record(stdout) is not None


def _first_record(stdout: str) -> re.Match[str] | None:
    """Where the first record of a query with a fresh separator starts: at the output's
    start, or at the start of the first line that is one (the lines before it are messages:
    no name or comment comes before the first record's id, so no one's text can be it)."""
    return _FIRST_FIELD.match(stdout) or _FIRST_RECORD.search(stdout)


_MAX_SACCT_PAIRS = 200_000  # candidate (start, end) line pairs read in one ambiguous stretch


def _sacct_records(stdout: str, *, one_line_names: bool = False,
                   skipped: list[str] | None = None) -> tuple[list[list[str]], list[str]]:
    """The records of `sacct -P` output of SACCT_FIELDS (id, five fixed fields, the name,
    the id again), and the ids whose records cannot be told apart from a name's text.

    A record is a line starting `ID|` (with the five fixed fields) through the first line
    ending `|ID` after a name that may hold '|' and newlines. A name written over several
    lines lies between the first line starting `X|` and the last line ending `|X` of its
    job X; only such stretches (merged where they overlap) can hold forged text. Every
    other line must be one whole record, and is the scheduler's. Within a stretch, the
    records every reading of its lines into whole records agrees on are kept (a name that
    merely spans lines reads one way); the ids that start a line in a stretch read in more
    ways than one, and have no sure record, are returned as unsure. SiteError when a line
    outside the stretches is not a whole record.

    `one_line_names`: `sacct -c` reads the job-completion log line by line, so none of its
    names holds a newline: every line is one whole record (an id's several records, its
    runs, are all kept), and there are no stretches.

    `skipped`: where to say the lines before the first record and after the last that
    neither end one nor start like one, `ID|` (messages: a wrapper's warning), else they
    are not whole records."""
    lines = stdout.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    # sacct without -n prints its header, again for each run when runs are joined: it is
    # no record and no name's text (dropping it only drops a line from a name, which can
    # add readings of a stretch, never make one sure), said where the caller takes it
    numbers = []  # each kept line's number in the output
    kept = []
    for n, ln in enumerate(lines, 1):
        if _is_sacct_header(ln):
            unread(skipped, "slurm", f"sacct line {n}", "a header, no record", ln,
                   message=True)
            continue
        numbers.append(n)
        kept.append(ln)
    lines = kept
    starts: list[str | None] = []
    ends: list[str | None] = []
    for ln in lines:
        f = ln.split("|", _SACCT_FIXED)
        sid = f[0].strip()
        starts.append(sid if len(f) > _SACCT_FIXED and _STEP_ID.fullmatch(sid) else None)
        eid = ln.rpartition("|")[2].strip() if "|" in ln else ""
        ends.append(eid if _STEP_ID.fullmatch(eid) else None)
    if skipped is not None:
        # a message: a line that neither ends a record nor starts like one (`ID|`)
        record_like = [b is not None or ("|" in ln and bool(_STEP_ID.fullmatch(
            ln.split("|", 1)[0].strip()))) for ln, b in zip(lines, ends, strict=True)]
        lead = next((k for k, like in enumerate(record_like) if like), len(lines))
        tail = next((k + 1 for k in range(len(lines) - 1, lead - 1, -1)
                     if record_like[k]), lead)
        for k in [*range(lead), *range(tail, len(lines))]:
            if lines[k].strip():
                unread(skipped, "slurm", f"sacct line {numbers[k]}", "not a record",
                       lines[k], message=True)
        lines, starts, ends = lines[lead:tail], starts[lead:tail], ends[lead:tail]
        numbers = numbers[lead:tail]
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, (sid, eid) in enumerate(zip(starts, ends, strict=True)):
        if sid is not None:
            first.setdefault(sid, i)
        if eid is not None:
            last[eid] = i
    spans = [] if one_line_names else \
        sorted((first[x], last[x]) for x in first if last.get(x, -1) > first[x])
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    records: list[list[str]] = []
    unsure: list[str] = []
    i = 0
    for a, b in [*merged, [len(lines), len(lines)]]:
        for k in range(i, min(a, len(lines))):
            if starts[k] is None or ends[k] != starts[k]:
                raise fail("slurm", f"sacct line {numbers[k]}",
                           f"not a whole record of {SACCT_FIELDS.count(',') + 1} fields",
                           lines[k])
            records.append(_sacct_fields(lines[k:k + 1]))
        if a < len(lines):
            sure, unsure_here = _sacct_stretch(lines, starts, ends, a, b)
            records += sure
            unsure += unsure_here
        i = b + 1
    have = {r[0] for r in records}
    return records, [x for x in dict.fromkeys(unsure) if x not in have]


def _is_sacct_header(line: str) -> bool:
    """sacct's header line of SACCT_FIELDS (`JobID|State|...|JobName|JobID`)."""
    return [f.strip().lower() for f in line.split("|")] == SACCT_FIELDS.split(",")


def _sacct_fields(lines: list[str]) -> list[str]:
    """One record's lines -> its fields (the trailing id dropped), each stripped."""
    f = "\n".join(lines).split("|", _SACCT_FIXED)
    f[-1] = f[-1].rpartition("|")[0]
    return [x.strip() for x in f]


def _sacct_stretch(lines: list[str], starts: list[str | None], ends: list[str | None],
                   a: int, b: int) -> tuple[list[list[str]], list[str]]:
    """Lines a..b read every way they split into whole records: (the records in every
    reading, the ids starting a line that is in no such record)."""
    ends_of: dict[str, list[int]] = {}
    for j in range(a, b + 1):
        if ends[j] is not None:
            ends_of.setdefault(ends[j], []).append(j)
    pairs = [(i, j) for i in range(a, b + 1) if starts[i] is not None
             for j in ends_of.get(starts[i], ()) if j >= i]
    ids = [s for s in starts[a:b + 1] if s is not None]
    if len(pairs) > _MAX_SACCT_PAIRS:
        return [], ids
    after: dict[int, int] = {b + 1: 1}  # readings of lines k..b
    for i, j in sorted(pairs, reverse=True):
        after[i] = after.get(i, 0) + after.get(j + 1, 0)
    before: dict[int, int] = {a: 1}  # readings of lines a..k-1
    for i, j in sorted(pairs):
        before[j + 1] = before.get(j + 1, 0) + before.get(i, 0)
    total = after.get(a, 0)
    sure = [(i, j) for i, j in pairs
            if total and before.get(i, 0) * after.get(j + 1, 0) == total]
    covered = {k for i, j in sure for k in range(i, j + 1)}
    return ([_sacct_fields(lines[i:j + 1]) for i, j in sure],
            [s for k in range(a, b + 1) if (s := starts[k]) is not None and k not in covered])


def _with_time_used(f: list[str]) -> list[str]:
    """A '|'-separated squeue record read with one field fewer than SQUEUE_FIELDS (its
    name taking the rest), with %M put back: the field before the name where it is one
    (this engine's lines), else "" (not known: a line of the fields before %M was added,
    whose name is then kept whole)."""
    used, sep, name = f[-1].partition("|")
    if sep and _TIME_USED.fullmatch(used.strip()):
        return [*f[:-1], used.strip(), name.strip()]
    return [*f[:-1], "", f[-1]]


def _records(stdout: str, fields: int, what: str, *, steps: bool = False,
             skipped: list[str] | None = None) -> list[list[str]]:
    """The records of squeue or sacct output: those of a query with a fresh separator
    (`_separated`), else '|'-separated lines (recorded outputs, an older engine's argv),
    read as below. `skipped`: where to say a record naming no job, left out (else
    SiteError)."""
    first = _first_record(stdout)
    if first is None:
        return _lines(stdout, fields, what, steps=steps, skipped=skipped)
    lead = stdout[:first.start()].split("\n")[:-1]
    for n, line in enumerate(lead, 1):  # messages before the records: said, not read
        if line.strip():
            unread(skipped, "slurm", f"{what} line {n}", "not a record", line, message=True)
    return _separated(stdout[first.start():], first.group(1), fields, what, steps=steps,
                      skipped=skipped, line_offset=len(lead))


def _separated(stdout: str, sep: str, fields: int, what: str, *, steps: bool,
               skipped: list[str] | None = None, line_offset: int = 0) -> list[list[str]]:
    """Output whose every field ends with `sep` and every record then with a newline. No
    field can hold `sep`, so the split is exact whatever a name holds (newlines, '|', a
    whole forged record): each record is the scheduler's, and a job a name invents is no
    record. Lines after the last whole record (messages, stderr merged) are said in
    `skipped`, as is a record naming no job (else SiteError); SiteError when the output is
    not whole records (cut short). `line_offset`: the lines of output before `stdout`."""
    ident = _STEP_ID if steps else _JOB_ID
    parts = stdout.split(sep)
    tail = parts.pop()
    if len(parts) % fields or (tail.strip() and not tail.startswith("\n")):
        raise fail("slurm", f"{what} output", f"not whole records of {fields} fields",
                   stdout[-200:])
    before = line_offset + stdout.count("\n", 0, len(stdout) - len(tail))
    for n, line in enumerate(tail.split("\n")[1:], before + 2):
        if line.strip():
            unread(skipped, "slurm", f"{what} line {n}", "not a record", line, message=True)
    out = []
    for n in range(0, len(parts), fields):
        f = parts[n:n + fields]
        if n:  # the newline after the previous record
            f[0] = f[0].removeprefix("\n")
        f = [x.strip() for x in f]
        if not ident.fullmatch(f[0]):
            unread(skipped, "slurm", f"{what} record {n // fields + 1}", "no job id",
                   f[0][:200])
            continue
        out.append(f)
    return out


def _lines(stdout: str, fields: int, what: str, *, steps: bool = False,
           skipped: list[str] | None = None) -> list[list[str]]:
    """The '|'-separated records of squeue or sacct output, each field stripped, the last
    (the job's name) taking what is left. Both end a record with a newline and print a name
    as it was given: a name holding newlines (anyone's job in a queue listing; a job renamed
    by itself) goes on over the next lines, which belong to it whatever they look like (kept
    apart, joined once: a long name is not copied per line); a queue's id given twice is
    dropped (said in `skipped`). Lines before the first record are said in `skipped`, else
    SiteError; a last line going on a name that begins with a job id (a record cut short?)
    is SiteError."""
    ident = _STEP_ID if steps else _JOB_ID
    records: list[tuple[list[str], list[str]]] = []
    last_joined = ""  # the last line with text, when it went on a name
    for n, line in enumerate(stdout.split("\n"), 1):
        f = line.split("|", fields - 1)
        if len(f) == fields and ident.fullmatch(f[0].strip()):
            records.append((f, [f[-1]]))
            last_joined = ""
        elif records:
            records[-1][1].append(line)
            if line.strip():
                last_joined = line
        elif line.strip():
            why = "no job id" if len(f) == fields else f"{len(f)} of {fields} fields"
            # a message has not every field, nor a job id before its first '|'
            message = len(f) < fields and not (len(f) > 1 and ident.fullmatch(f[0].strip()))
            unread(skipped, "slurm", f"{what} line {n}", why, line, message=message)
    if ident.fullmatch(last_joined.split("|", 1)[0].strip()):
        # a job's record cut short, or a name's last line that looks like one: which, cannot
        # be told, and read as a name's text the job would look gone
        raise fail("slurm", f"{what} output", f"its last line begins a record of fewer than "
                   f"{fields} fields (cut short?) or ends a job name: which cannot be told",
                   last_joined)
    out = [[x.strip() for x in (*f[:-1], "\n".join(name))] for f, name in records]
    if steps:  # accounting keeps each run of a reused id: several records are real
        return out
    # a queue lists a job once: an id given twice was also written into some job's name,
    # and which record is the scheduler's cannot be told, so neither is believed
    count = Counter(f[0] for f in out)
    for jid in sorted(x for x, k in count.items() if k > 1 and takes_records(skipped)):
        unread(skipped, "slurm", f"{what} job {jid}", "listed twice (one written into some "
               "job's name): neither record is believed")
    return [f for f in out if count[f[0]] == 1]


def partition_nodes(text: Any) -> list[str]:
    """A partition's node list; none for `ALL` (as slurm.conf may name them, and a reply
    may print them): its members are then the nodes that name it (a node's Partitions),
    not a node called "ALL"."""
    s = clean(text)
    return [] if s is None or s.upper() == "ALL" else expand_hostlist(s)


def _minutes(text: Any) -> int | None:
    """Seconds from a Slurm time limit as scontrol prints it (UNLIMITED, NONE: None)."""
    try:
        return parse_duration(text, bare_unit=60)
    except ValueError:
        return None


def _names(text: Any) -> list[str] | None:
    """A partition's list of accounts or QOS names; None for ALL or absent."""
    s = clean(text)
    return None if s is None or s.upper() == "ALL" else [x for x in s.split(",") if x]


slurm_commands = SlurmCommands()
# what scontrol prints last on a node's line, as an admin or a tool wrote it
_NODE_FREE_TEXT = ("Reason", "Comment", "Extra")
_STAMP = re.compile(r"\s*\[[^\[\]@]*@[^\[\]]*\]\s*$")  # a Reason's `[slurm@2026-12-01T10:00:00]`


def _cpu_ids(text: str | None) -> int:
    """How many CPU ids a Slurm id list names (`0-3,64-67`: 8); 0 for none or unreadable."""
    count = 0
    for part in (clean(text) or "").split(","):
        lo, _, hi = part.strip().partition("-")
        if not ascii_digits(lo) or (hi and not ascii_digits(hi)):
            return 0
        count += int(hi) - int(lo) + 1 if hi else 1
    return count
