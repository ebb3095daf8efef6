"""Flux command lines and output parsers (pure: argv in, models out).

Ids: `flux batch` prints an F58 id ('ƒ2Jc8CuU1'; 'f2Jc8CuU1' in an ASCII
locale); every flux command also accepts the decimal form that
`flux jobs --json` reports in "id". Parsers return the decimal id, and
`parse_submit` keeps the id as printed (both forms are valid input).

`flux jobs --json` prints {"jobs": [...]}, or one bare job object when exactly
one job id was given. Fields missing from a job simply do not apply yet.
Flux has no separate accounting: inactive jobs stay in `flux jobs -a`.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Collection
from typing import Any

from ..digits import ascii_digits
from ..model import (
    UNREPORTED_QUEUE_REQUIRES,
    BadInput,
    JobState,
    JobStatus,
    Node,
    Partition,
    SiteSnapshot,
    arch_name,
)
from .base import AccountingReach
from .dependencies import flux_begin_time, flux_dependency
from .flux_ids import flux_f58, flux_id_form, flux_id_problem, flux_id_value, is_flux_id
from .outputs_common import (
    MOST_SECONDS,
    OUT_OF_MEMORY,
    FailureReading,
    array_expression_ranges,
    clean,
    count_array_tasks,
    decode_wait_status,
    expand_hostlist,
    fail,
    fold_indexed_tasks,
    from_epoch,
    known_count,
    limit_count,
    load_json,
    parse_fsd,
    signal_number,
    to_int,
    unread,
    user_filter,
    whole_number,
)
from .reasons import says_held

# RFC 21 state bits / result bits as they appear when printed numerically.
_STATE_BITS = {1: "NEW", 2: "DEPEND", 4: "PRIORITY", 8: "SCHED", 16: "RUN", 32: "CLEANUP",
               64: "INACTIVE"}
_RESULT_BITS = {1: "COMPLETED", 2: "FAILED", 4: "CANCELED", 8: "TIMEOUT"}
_ACTIVE = {"NEW": JobState.PENDING, "DEPEND": JobState.PENDING, "PRIORITY": JobState.PENDING,
           "SCHED": JobState.PENDING, "RUN": JobState.RUNNING, "CLEANUP": JobState.RUNNING}
_RESULTS = {"COMPLETED": JobState.COMPLETED, "FAILED": JobState.FAILED,
            "CANCELED": JobState.CANCELLED, "CANCELLED": JobState.CANCELLED,
            "TIMEOUT": JobState.TIMEOUT}
_ID_RE = re.compile(
    r"(?:[ƒf][1-9A-HJ-NP-Za-km-z]+|[0-9]+|0x[0-9a-fA-F]+|[0-9a-f]{4}(\.[0-9a-f]{4}){3})")
RESOURCE_FORMAT = "{state}|{properties}|{nnodes}|{ncores}|{ngpus}|{nodelist}"
# spellings of a job id from flux's own lists (flux-job-id(1)) that only flux can spell
# (words are spelled here: flux_ids.flux_words)
ID_SPELLINGS = ("emoji",)


def _mapping(value: Any) -> dict[str, Any]:
    """A JSON object of a job, or {} where the output has something else (mangled)."""
    return value if isinstance(value, dict) else {}


def _job_id(value: Any) -> str | None:
    """A job's "id": a number as its digits (12.0 is job 12), text (an f58 id) as given;
    None for none or a number no job has (12.5, a negative one or one past 64 bits: flux
    ids are unsigned 64-bit numbers) or text no spelling of a flux id reads (`5 --uid=0`)."""
    if isinstance(value, str):
        text = clean(value)
        return text if text is not None and is_flux_id(text) else None
    number = whole_number(value)
    return None if number is None or not 0 <= number < 2**64 else str(number)


def _out_of_memory(exc: dict[str, Any]) -> bool:
    """Whether a job's exception says it ran out of memory: of type `oom` (raised by a
    site's shell or jobtap plugin on a memory cgroup kill, as `flux job raise --type=oom`),
    or of another type whose note says so ("Memory cgroup out of memory: killed 1 task on
    HOST", the words of flux-shell's own oom plugin)."""
    kind, note = str(exc.get("type") or "").lower(), str(exc.get("note") or "").lower()
    return kind == "oom" or "out of memory" in note


# the line flux-shell's oom plugin logs when the kernel's OOM killer killed tasks of the job
# (`shell_log_error`, rank and level before the plugin's name), written into the job's
# stderr file where that is a file (flux batch's always is), else as a `log` event of its
# output eventlog
_SHELL_OOM_LINE = re.compile(
    r"flux-shell(?:\[[0-9]{1,7}\])?: (?:ERROR|FATAL): oom: "
    r"(Memory cgroup out of memory: killed [0-9]{1,9} tasks? on [\w.\-]{1,128}\.)")
KILLED_EXIT = 137  # 128 + SIGKILL: how flux reports a job whose last task the kernel killed


def shell_oom(log_text: str) -> str | None:
    """The oom plugin's words in a job's stderr (a whole line each, the last one), else
    None. Job output is untrusted: the caller holds them only against a job flux says was
    killed (`log_ending_wanted`)."""
    found = [m.group(1) for line in log_text.splitlines()
             if (m := _SHELL_OOM_LINE.fullmatch(line.strip()))]
    return found[-1] if found else None


def _killed_by(job: dict[str, Any]) -> int | None:
    """The signal that killed a finished job's program: its wait status's signal (139 is
    signal 11, core dumped; an exit code's 139 is 139 << 8 there), or the `signaled` field's
    number where flux prints one; None for a program that exited, or where flux says
    neither (a return code of 139 alone may be an exit's)."""
    status = job.get("waitstatus")
    if isinstance(status, int) and not isinstance(status, bool) and status & 0x7F != 0x7F:
        return signal_number(status & 0x7F)
    signaled = job.get("signaled")
    return signal_number(signaled) if isinstance(signaled, int) \
        and not isinstance(signaled, bool) else None


def _seconds(value: Any) -> float | None:
    """A positive finite JSON number (a bool, NaN or infinity is none), else None."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(
        value, bool) and 0 < value < math.inf else None


def _time_limit(job: dict[str, Any]) -> int | None:
    """The job's limit in seconds: its `duration`, or for a job run without one (0 or
    absent: the enclosing instance's end bounds it) `expiration` (the epoch its allocation
    ends) less `t_run` (the epoch it was allocated). A job not started has no expiration."""
    if (duration := _seconds(job.get("duration"))) is not None:
        return int(duration) if duration <= MOST_SECONDS else None  # 1e308: none
    expiration, started = _seconds(job.get("expiration")), _seconds(job.get("t_run"))
    if expiration is None or started is None or not 0 < expiration - started <= MOST_SECONDS:
        return None
    return round(expiration - started)


class FluxCommands(FailureReading, AccountingReach):
    name = "flux"
    submit_stdin = False

    @staticmethod
    def _ids(native_ids: list[str]) -> list[str]:
        ids = [str(i).strip() for i in native_ids if str(i).strip()]
        if not ids:
            raise BadInput("flux: no job ids given")
        for i in ids:
            if (problem := flux_id_problem(i)) is not None:
                raise BadInput(f"flux: not a job id: {problem}")
        return ids

    def id_argv(self, job_id: str, to: str) -> list[str]:
        """`flux job id --to=FORM ID`: the id in a spelling only flux can give (ID_SPELLINGS)."""
        if to not in ID_SPELLINGS:
            raise BadInput(f"flux job id --to={to!r}: accepted: {', '.join(ID_SPELLINGS)}")
        return ["flux", "job", "id", f"--to={to}", *self._ids([job_id])]

    @staticmethod
    def parse_id(stdout: str, to: str) -> str:
        """`flux job id --to=FORM`'s answer: the id in that form (words: word-word-word--...;
        emoji: no ASCII character), else SiteError (it goes into a file's name)."""
        text = stdout.strip()
        ok = flux_id_form(text) == "words" if to == "words" else \
            bool(text) and not any(c.isascii() for c in text)
        if not ok:
            raise fail("flux", f"flux job id --to={to}", f"no job id in its {to} form", stdout)
        return text

    def submit_argv(self, script_path: str, *, hold: bool = False) -> list[str]:
        return ["flux", "batch", *(["--urgency=hold"] if hold else []), script_path]

    def status_argv(self, native_ids: list[str]) -> list[str]:
        return ["flux", "jobs", "--json", "-a", *self._ids(native_ids)]

    def accounting_argv(self, native_ids: list[str]) -> list[str] | None:
        return self.status_argv(native_ids)

    def cancel_argv(self, native_ids: list[str]) -> list[str]:
        return ["flux", "cancel", *self._ids(native_ids)]

    @staticmethod
    def cancel_missed_only_ended(stderr: str) -> bool:
        """Whether a failed `flux cancel ID...` failed only for jobs that had already ended
        (flux names each: "job is inactive", or "unknown job id" once purged), the others
        cancelled: a job array's tasks some of which ended first."""
        said = [line for line in stderr.splitlines() if line.strip()]
        return bool(said) and all(_CANCEL_OF_ENDED.search(line) for line in said)

    def release_argv(self, native_ids: list[str]) -> list[str]:
        """`flux job urgency ID default` takes one id; several (a job array's tasks) go
        through one sh loop that releases every one it can, printing `not released: ID`
        for each flux refused and failing at the end if any was."""
        ids = self._ids(native_ids)
        if len(ids) == 1:
            return ["flux", "job", "urgency", ids[0], "default"]
        loop = ('n=0; for i; do flux job urgency "$i" default '
                f'|| {{ n=$((n+1)); echo "{_NOT_RELEASED}$i" >&2; }}; done; [ "$n" = 0 ]')
        return ["sh", "-c", loop, "sh", *ids]

    @staticmethod
    def release_missed(stderr: str) -> list[str]:
        """The ids a failed release of several jobs (`release_argv`'s loop) did not
        release, as it named them."""
        return [line.strip()[len(_NOT_RELEASED):] for line in stderr.splitlines()
                if line.strip().startswith(_NOT_RELEASED)
                and _ID_RE.fullmatch(line.strip()[len(_NOT_RELEASED):])]

    def find_by_name_argv(self, name: str, user: str | None = None) -> list[str]:
        """Jobs named `name`: `user`'s (--user), else the login's (flux jobs' default)."""
        if not name:
            raise BadInput("flux: empty job name")
        mine = [f"--user={u}"] if (u := user_filter("flux", user)) else []
        return ["flux", "jobs", "--json", "-a", *mine, f"--name={name}"]

    def snapshot_argvs(self) -> dict[str, list[str]]:
        return {
            "resources": ["flux", "resource", "list", "-n", "-o", RESOURCE_FORMAT],
            "queues": ["flux", "queue", "list"],
            # the queues' configuration (their `requires`); an error said in the output
            "queue_config": ["sh", "-c", "flux config get --default={} queues 2>&1; exit 0"],
            "queue": ["flux", "jobs", "--json", "-A"],
        }

    def followup_argvs(self, outputs: dict[str, str]) -> dict[str, list[str]]:
        """Where nodes are down, which are drained and why (`flux resource drain`; the
        scheduler's `resource list` says only "down"), as "drained"; an instance refusing
        -o leaves it unread."""
        down = any(line.strip().startswith("down|")
                   for line in outputs.get("resources", "").splitlines())
        return {"drained": ["sh", "-c", "flux resource drain -n -o "
                            "'{state}|{nodelist}|{reason}' 2>/dev/null; exit 0"]} if down else {}

    @staticmethod
    def log_ending_wanted(status: JobStatus) -> bool:
        """Whether the job's stderr may say how it ended where `flux jobs` does not: it
        failed, killed (exit KILLED_EXIT), and no exception said out of memory. An OOM kill
        by the kernel raises no exception; flux-shell's oom plugin only logs it."""
        return status.state == JobState.FAILED and status.exit_code == KILLED_EXIT and \
            not (status.reason or "").startswith(OUT_OF_MEMORY)

    @staticmethod
    def with_log_ending(status: JobStatus, log_text: str) -> JobStatus:
        """`status` said out of memory where its stderr (`log_text`, the file's tail) holds
        flux-shell's oom line; unchanged otherwise (an ordinary failure keeps its own)."""
        words = shell_oom(log_text) if FluxCommands.log_ending_wanted(status) else None
        if words is None:
            return status
        return status.model_copy(update={"reason": f"{OUT_OF_MEMORY} (flux-shell oom: {words})"})

    # -- parsers ------------------------------------------------------------
    def parse_submit(self, stdout: str) -> str:
        for line in stdout.splitlines():
            if _ID_RE.fullmatch(line.strip()):
                return line.strip()
        raise fail("flux", "flux batch output", "no job id", stdout)

    def parse_status(self, stdout: str, skipped: list[str] | None = None
                     ) -> list[JobStatus]:
        """`flux jobs --json`; `skipped`: where to say a job without an id, or a line before
        the JSON (a warning), left out (else SiteError)."""
        if not stdout.strip():
            return []
        data = load_json("flux", "flux jobs --json", stdout, skipped=skipped)
        if isinstance(data, dict) and isinstance(data.get("jobs"), list):
            jobs = data["jobs"]
        elif isinstance(data, dict) and "id" in data:
            jobs = [data]
        else:
            raise fail("flux", "flux jobs --json", "neither {'jobs': [...]} nor a job", stdout)
        out = []
        for n, j in enumerate(jobs, 1):
            if not isinstance(j, dict) or _job_id(j.get("id")) is None:
                unread(skipped, "flux", f"flux jobs --json job {n}", "not a job with an id",
                       str(j))
                continue
            out.append(self._job(j))
        return out

    parse_accounting = parse_status

    @staticmethod
    def _job(j: dict[str, Any]) -> JobStatus:
        if (jid := _job_id(j.get("id"))) is None:
            raise fail("flux", "flux jobs --json", "job without id", str(j))
        st = j.get("state")
        st = _STATE_BITS.get(st, str(st)) if isinstance(st, int) else str(st or "").upper()
        result = j.get("result")
        if isinstance(result, int):
            result = _RESULT_BITS.get(result, str(result))
        result = str(result or "").upper()
        if st == "INACTIVE" or (st == "CLEANUP" and result in _RESULTS):
            # in CLEANUP the job has finished (its result and status are known) while its
            # epilog runs and its nodes are freed, which a stuck epilog can hold up for long
            state = _RESULTS.get(result, JobState.FAILED if result else JobState.UNKNOWN)
        else:
            state = _ACTIVE.get(st, JobState.UNKNOWN)
        exc = _mapping(j.get("exception"))
        reason = None
        if exc.get("occurred"):
            reason = f"{exc.get('type', 'exception')}: {exc.get('note') or ''}".rstrip(": ")
            if _out_of_memory(exc):
                reason = f"{OUT_OF_MEMORY} (flux exception {reason})"
        elif state == JobState.PENDING and j.get("urgency") == 0:
            reason = "held (urgency 0)"
        elif state == JobState.PENDING and j.get("dependencies"):
            deps = j["dependencies"]
            reason = "dependency: " + (",".join(map(str, deps)) if isinstance(deps, list)
                                       else str(deps))
        sched = _mapping(_mapping(j.get("annotations")).get("sched"))
        if reason is None and state == JobState.PENDING:
            # fluxion's `sched.reason_pending` ("insufficient resources": it waits for
            # nodes, as Slurm's Resources); sched-simple sets none
            reason = clean(sched.get("reason_pending"))
        if st == "CLEANUP":
            reason = f"ending (cleanup): {reason}" if reason else "ending (cleanup)"
        exit_code = to_int(j.get("returncode"))
        if exit_code is None and isinstance(j.get("waitstatus"), int):
            exit_code = decode_wait_status(j["waitstatus"])
        if reason is None and state == JobState.FAILED and (sig := _killed_by(j)):
            reason = f"killed by signal {sig}"  # as PBS and Grid Engine say it
        estimate = j.get("t_estimate", sched.get("t_estimate"))
        if reason and reason.startswith("dependency: ") and isinstance(
                j.get("dependencies"), list) \
                and (begin := flux_begin_time(j["dependencies"])) is not None:
            estimate = begin  # it waits for its begin time alone: it starts no sooner
        walltime = _time_limit(j)
        return JobStatus(
            native_id=jid, state=state,
            native_state=f"{st}:{result}" if st in ("INACTIVE", "CLEANUP") and result
            else st or None,
            name=clean(j.get("name")), user=clean(j.get("username")) or clean(j.get("userid")),
            partition=clean(j.get("queue")), nodes=known_count(j.get("nnodes")),
            cpus=known_count(j.get("ncores")), gpus=known_count(j.get("ngpus")),
            walltime_s=walltime, submitted_at=from_epoch(j.get("t_submit")),
            started_at=from_epoch(j.get("t_run")),
            ended_at=from_epoch(j.get("t_inactive") or j.get("t_cleanup"))
            if state.terminal else None,
            estimated_start=from_epoch(estimate) if state == JobState.PENDING else None,
            exit_code=exit_code if state.terminal else None, reason=reason,
            node_list=clean(j.get("nodelist")),
            dependency=flux_dependency(j["dependencies"])
            if (reason or "").startswith("dependency: ") and isinstance(
                j.get("dependencies"), list) else None,
        )

    def parse_resources(self, stdout: str, skipped: list[str] | None = None) -> list[Node]:
        """`flux resource list -n -o RESOURCE_FORMAT`: one line per state (and properties),
        its counts summed over the line's nodes. A partly busy node is in a 'free' and an
        'allocated' line at once, so a line's cores are not even over its nodes: nodes the
        lines link (by a node in two of them) are read as of one size, their cores in all
        over their number, a node whole in one state having that size in it and the nodes
        in several sharing what is left of each line (before, a line's cores were split
        evenly: 4 idle nodes of 64 cores beside an 8-core job read as 62-core nodes and one
        of 70). `skipped`: where to say a line of another shape, and a header (`STATE
        PROPERTIES NNODES ...`, printed without -n, again on each page), left out (else
        SiteError)."""
        lines: list[tuple[str, str | None, list[str], int, int]] = []
        for n, line in enumerate(stdout.splitlines(), 1):
            if not line.strip():
                continue
            f = [x.strip() for x in line.split("|")]
            if len(f) != 6:
                unread(skipped, "flux", f"flux resource list line {n}", "expected 6 '|' fields",
                       line)
                continue
            state, props, nnodes, ncores, ngpus, nodelist = f
            if all(re.fullmatch(r"[A-Z]+", x) for x in (nnodes, ncores, ngpus)):
                unread(skipped, "flux", f"flux resource list line {n}", "a header, no "
                       "resources", line, message=True)
                continue
            names = list(dict.fromkeys(expand_hostlist(nodelist)))
            if not names or not (known_count(nnodes) or len(names)):
                continue
            lines.append((state, clean(props), names, known_count(ncores) or 0,
                          known_count(ngpus) or 0))
        lines_of: dict[str, list[int]] = {}
        for i, (_, _, names, _, _) in enumerate(lines):
            for name in names:
                lines_of.setdefault(name, []).append(i)
        group = list(range(len(lines)))  # lines linked by a node they share: one group

        def root(i: int) -> int:
            while group[i] != i:
                group[i] = group[group[i]]
                i = group[i]
            return i

        for where in lines_of.values():
            for j in where[1:]:
                group[root(j)] = root(where[0])
        members: dict[int, list[str]] = {}
        totals: dict[int, list[int]] = {}
        for i, (_, _, names, cores, gpus) in enumerate(lines):
            g = root(i)
            members.setdefault(g, [])
            members[g] += [h for h in names if h not in members[g]]
            got = totals.setdefault(g, [0, 0])
            got[0], got[1] = got[0] + cores, got[1] + gpus
        size = {h: (totals[g][0] // len(hs), totals[g][1] // len(hs))
                for g, hs in members.items() for h in hs}
        nodes: dict[str, Node] = {}
        for state, props, names, cores, gpus in lines:
            shares = _shares(names, lines_of, size, cores, gpus)
            for name in names:
                node = nodes.setdefault(name, Node(name=name, state=state, cpus=size[name][0],
                                                   gpus=size[name][1]))
                if state == "allocated":
                    node.cpus_allocated = min(node.cpus, node.cpus_allocated + shares[name][0])
                    node.gpus_allocated = min(node.gpus, node.gpus_allocated + shares[name][1])
                node.state = _merge_state(node.state, state)
                for p in (props or "").split(","):
                    if p and p not in node.features:
                        node.features.append(p)
        for node in nodes.values():
            node.architecture = property_arch(node.features)
        return list(nodes.values())

    def parse_queues(self, stdout: str, skipped: list[str] | None = None
                     ) -> list[Partition]:
        """`flux queue list` table: header row names the columns (QUEUE, TLIMIT, ...).
        `skipped`: where to say a table of another shape, whose queues are not known (else
        SiteError)."""
        lines = [ln for ln in stdout.splitlines() if ln.strip()]
        if not lines:
            return []
        header = lines[0].split()
        if "TLIMIT" not in header:
            unread(skipped, "flux", "flux queue list", "no header with TLIMIT", stdout)
            return []
        out = []
        for line in lines[1:]:
            row = dict(zip(header, line.split(), strict=False))
            name = row.get("QUEUE", "default")
            default = name.endswith("*")
            limit, default_limit = (_fsd_or_none(row.get(k)) for k in ("TLIMIT", "TDEFAULT"))
            up = row.get("EN", "✔") in ("✔", "y", "yes", "True") and \
                row.get("ST", "✔") in ("✔", "y", "yes", "True")
            out.append(Partition(name=name.rstrip("*"), default=default, max_time_s=limit,
                                 default_time_s=default_limit,
                                 max_nodes=_range_most(row.get("NNODES")),
                                 max_cpus=_range_most(row.get("NCORES")),
                                 max_gpus=_range_most(row.get("NGPUS")),
                                 min_nodes=_range_least(row.get("NNODES")),
                                 min_cpus=_range_least(row.get("NCORES")),
                                 min_gpus=_range_least(row.get("NGPUS")),
                                 state="UP" if up else "DOWN"))
        if len(out) == 1 and not any(p.default for p in out):
            out[0].default = True
        return out

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot:
        skipped: list[str] = []
        jobs = [j for j in self.parse_status(outputs.get("queue", ""), skipped)
                if not j.state.terminal]
        parts = self.parse_queues(outputs.get("queues", ""), skipped)
        requires, why = parse_queue_requires(outputs.get("queue_config"))
        if requires is not None:
            parts = [p.model_copy(update={"requires": requires.get(p.name, [])})
                     for p in parts]
        nodes = self.parse_resources(outputs.get("resources", ""), skipped)
        if drained := parse_drained(outputs.get("drained", "")):
            nodes = [_drained(n, *drained[n.name]) if n.name in drained else n for n in nodes]
        return SiteSnapshot(
            site=site, nodes=nodes,
            partitions=parts, jobs=jobs, warnings=[f"{site}: {w}" for w in skipped],
            unreported={UNREPORTED_QUEUE_REQUIRES: why} if why else {},
        )


def _range_most(text: str | None) -> int | None:
    """The most of a `flux queue list` limit range (`MIN-MAX`, as NNODES, NCORES and NGPUS
    print a job's nodes, cores and GPUs in all); None for no limit (`inf`, or none). A
    minimum of -1 prints `inf` too (`inf-4`): only the end after the dash is the most."""
    most = (text or "").strip().rpartition("-")[2]
    return limit_count(most) if ascii_digits(most) else None


def _range_least(text: str | None) -> int | None:
    """The least of a `flux queue list` limit range (`MIN-MAX`: policy.limits.job-size.min,
    which a job below is refused at submission); None for no lower limit (`0`, or `inf`,
    as flux prints a minimum of -1)."""
    least = (text or "").strip().partition("-")[0]
    return (limit_count(least) or None) if ascii_digits(least) else None


def parse_drained(text: str) -> dict[str, tuple[str, str | None]]:
    """`flux resource drain -n -o '{state}|{nodelist}|{reason}'`: each drained node's
    state (drained, or draining while jobs still run there; the `*` of an offline one
    dropped) and the reason it was drained with ("offline" for an offline one drained
    without one; None: none given), by node name."""
    out: dict[str, tuple[str, str | None]] = {}
    for line in text.splitlines():
        state, sep, rest = line.strip().partition("|")
        nodelist, sep2, reason = rest.partition("|")
        offline = state.strip().endswith("*")
        state = state.strip().rstrip("*").lower()
        if not sep or not sep2 or not state.startswith("drain"):
            continue
        for name in expand_hostlist(nodelist.strip()):
            out[name] = (state, clean(reason) or ("offline" if offline else None))
    return out


def _drained(node: Node, state: str, reason: str | None) -> Node:
    """`node` as `flux resource drain` says it is: its reason, and its state drained or
    draining where the scheduler's view says only down."""
    update: dict[str, object] = {"reason": reason}
    if node.state.lower() == "down":
        update["state"] = state
    return node.model_copy(update=update)


def parse_queue_requires(text: str | None) -> tuple[dict[str, list[str]] | None, str | None]:
    """`flux config get --default={} queues`: each configured queue's `requires` (the node
    properties all of its jobs' nodes have; `^NAME`: not that one), [] for none; a virtual
    queue (RFC 33 `parent`) without its own has its parent's. `{}`: no queues configured.
    (None, why) where it did not answer a table of queues (why as it said, one line)."""
    if text is None:
        return None, "`flux config get queues` was not run"
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        said = next((ln.strip() for ln in text.splitlines() if ln.strip()), "no output")
        return None, f"`flux config get queues` said: {said[:200]}"
    own = {str(n): [str(r) for r in q["requires"]] if isinstance(q, dict)
           and isinstance(q.get("requires"), list) else None for n, q in data.items()}
    out = {}
    for name, q in data.items():
        parent = q.get("parent") if isinstance(q, dict) else None
        got = own[str(name)]
        out[str(name)] = got if got is not None else own.get(str(parent)) or []
    return out, None


def property_arch(properties: list[str]) -> str | None:
    """The CPU architecture a node's Flux properties name, or None (unknown). Flux itself
    reports none (R and `flux resource list` hold ranks, cores, GPUs and the properties an
    admin set), so only a property naming one says it: `x86_64`, `amd64`, `arch=aarch64`;
    two that disagree say none."""
    found = {arch_name(p[5:] if p.lower().startswith("arch=") else p) for p in properties}
    found.discard(None)
    return found.pop() if len(found) == 1 else None


def _shares(names: list[str], lines_of: dict[str, list[int]],
            size: dict[str, tuple[int, int]], cores: int, gpus: int
            ) -> dict[str, tuple[int, int]]:
    """Each node's (cores, GPUs) of one `flux resource list` line: a node in this line
    only has its whole size here; the nodes also in other lines share what is left."""
    whole = [h for h in names if len(lines_of[h]) == 1]
    part = [h for h in names if len(lines_of[h]) > 1]
    out = {h: size[h] for h in whole}
    left = [max(0, cores - sum(size[h][0] for h in whole)),
            max(0, gpus - sum(size[h][1] for h in whole))]
    for k, h in enumerate(part):
        out[h] = tuple(x // len(part) + (1 if k < x % len(part) else 0) for x in left)
    return out


def _merge_state(old: str, new: str) -> str:
    """free + allocated on one node = mixed; down/drain win."""
    if old == new:
        return old
    if "down" in (old, new) or "drain" in old + new:
        return "down" if "down" in (old, new) else "drain"
    return "mixed"


flux_commands = FluxCommands()


def _fsd_or_none(text: str | None) -> int | None:
    """Seconds from a Flux duration (`30m`, `1h`, `1d`); None for `inf`, `-` or unreadable."""
    try:
        return parse_fsd(text)
    except ValueError:
        return None


# A job array on Flux (which has none): one `flux batch` of the same script per index, in
# order, each told its index in the variable `flux submit --cc` sets (the translated body
# reads it as the array's index), a `%N` limit kept by making each task wait for the end of
# the task N places before it (`--dependency=afterany:ID`).
ARRAY_INDEX_VARIABLE = "FLUX_JOB_CC"
# what `flux cancel` says of a job that had ended (flux-core's job-manager, old and new)
_CANCEL_OF_ENDED = re.compile(r"job is inactive|unknown job id")
_NOT_RELEASED = "not released: "  # release_argv's loop: each job flux refused
MAX_FLUX_ARRAY_TASKS = 1000  # one `flux batch` each, in one remote shell: bounded


def array_tasks(expr: str) -> tuple[list[int], int | None]:
    """The indexes an array expression names, in order, and its `%N` limit (None: none);
    BadInput where it does not read or names more than MAX_FLUX_ARRAY_TASKS tasks."""
    ranges = array_expression_ranges(expr)
    count = count_array_tasks(expr)
    if ranges is None or count is None:
        raise BadInput(f"job array {expr!r}: not an index expression (accepted: 1-8, "
                       "1-9:2, 1,3,5-7, each with an optional %N limit)")
    if count > MAX_FLUX_ARRAY_TASKS:
        raise BadInput(f"job array {expr}: {count} tasks; a Flux site submits one job per "
                       f"task, at most {MAX_FLUX_ARRAY_TASKS}: split the array")
    limit_text = expr.partition("%")[2].strip()
    if limit_text and not (ascii_digits(limit_text) and int(limit_text) > 0):
        raise BadInput(f"job array {expr!r}: the limit after '%' must be a whole number "
                       "above 0")
    indexes = list(dict.fromkeys(i for r in ranges for i in r))  # '1-3,2' names 2 once
    return indexes, int(limit_text) if limit_text else None


def array_task_waits(indexes: list[int], limit: int | None) -> dict[int, int]:
    """Which task each task waits for the end of (index -> index) to keep `limit` tasks at
    most at once: the one `limit` places before it."""
    if not limit:
        return {}
    return {i: indexes[k - limit] for k, i in enumerate(indexes) if k >= limit}


def array_submissions(expr: str, script: str, *, hold: bool = False) -> list[str]:
    """The `flux batch` commands an array's tasks are submitted with, one line each, as a
    plan shows them (a dependency names the task it waits for: its id is known only once
    that one is submitted)."""
    indexes, limit = array_tasks(expr)
    waits = array_task_waits(indexes, limit)
    held = " --urgency=hold" if hold else ""
    return [f"flux batch{held} --env={ARRAY_INDEX_VARIABLE}={i}"
            + (f" --dependency=afterany:<id of task {waits[i]}>" if i in waits else "")
            + f" {script}" for i in indexes]


def array_submit_script(indexes: list[int], limit: int | None, submitted: dict[int, str],
                        script: str, *, hold: bool = False, record: str | None = None,
                        unrecorded: Collection[int] = ()) -> str:
    """Shell that submits the batch script at `script` (shell text, quoted), in order, each
    task of `indexes` not in `submitted` (index -> flux id, those a cut-short submit queued
    already), printing `task INDEX ID` as each is queued (and appending it to the file at
    `record`, shell text, quoted: the tasks' ids kept where flux's listing may lose them,
    first those of `unrecorded`, submitted tasks known from the listing alone) and stopping
    at the first failure (its status). In the record `begin INDEX` comes before each
    `flux batch` and `failed INDEX` after one that failed: a begun task with neither is one
    whose submit was cut short mid-way (`unsure_tasks`). Indexes are numbers and ids flux
    ids: nothing else enters the text."""
    for i, jid in submitted.items():
        if i not in indexes or flux_id_problem(jid) is not None:
            raise BadInput(f"flux array task {i}: {jid!r} is not one of its tasks' ids")
    waits = array_task_waits(indexes, limit)
    lines = [f"printf 'task {i} %s\\n' {shlex.quote(submitted[i])} >> {record}" for i in indexes
             if record and i in unrecorded and i in submitted]
    for i in indexes:
        if i in submitted:
            continue
        opts = ["--urgency=hold"] if hold else []
        opts.append(f"--env={ARRAY_INDEX_VARIABLE}={i}")
        if i in waits:
            before = waits[i]
            opts.append("--dependency=afterany:" + (
                submitted.get(before, f"$t{before}")))
        begin, failed = (f"printf 'begin {i}\\n' >> {record}; ",
                         f"printf 'failed {i}\\n' >> {record}; ") if record else ("", "")
        lines.append(f'{begin}t{i}=$(flux batch {" ".join(opts)} {script}) || '
                     f'{{ __dmd_rc=$?; {failed}exit $__dmd_rc; }}; '
                     f't{i}=${{t{i}##*[[:space:]]}}; printf "task {i} %s\\n" "$t{i}"'
                     + (f" | tee -a {record}" if record else ""))
    return "\n".join(lines) + "\n"


def parse_array_submit(stdout: str, indexes: list[int]) -> dict[int, str]:
    """The tasks an array submit queued (`task INDEX ID` lines), index -> id; a line of
    another form is not read (a message flux printed)."""
    wanted, queued = set(indexes), {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "task" and ascii_digits(words[1]) \
                and int(words[1]) in wanted and _ID_RE.fullmatch(words[2]):
            queued[int(words[1])] = words[2]
    return queued


def unsure_tasks(record: str, indexes: list[int]) -> list[int]:
    """The tasks whose `flux batch` a submit began but that its record (the file
    `array_submit_script` appends to) names neither as queued nor as failed: the submit was
    cut short as flux took it, so it may have been queued."""
    wanted, begun = set(indexes), set()
    for line in record.splitlines():
        words = line.split()
        if len(words) >= 2 and ascii_digits(words[1]) and int(words[1]) in wanted:
            if words[0] == "begin":
                begun.add(int(words[1]))
            elif words[0] in ("task", "failed"):
                begun.discard(int(words[1]))
    return sorted(begun)


class UnsureArrayTask(BadInput):
    """A cut-short job array's resume refused for a task that may have been queued;
    `queued`: the tasks known queued (index -> id), which the refusal does not undo."""

    def __init__(self, message: str, queued: dict[int, str]) -> None:
        super().__init__(message)
        self.queued = queued


def refuse_unsure_tasks(unsure: Collection[int], queued: dict[int, str]) -> None:
    """UnsureArrayTask for a task whose submit was cut short as flux took it (`unsure`)
    that nothing found (`queued`, from the record and flux's listing): it may have run and
    been purged, so it is not submitted again (a job never runs twice by our doing)."""
    if left := sorted(set(unsure) - set(queued)):
        raise UnsureArrayTask(
            f"array task {left[0]}: unknown, not resubmitted: its flux batch was cut short "
            "before its id was recorded, and flux lists no job of the array for it (it may "
            "have run and been purged); look with `flux jobs -a` and cancel or resubmit "
            "the array by hand", dict(queued))


def queued_tasks(recorded: dict[int, str], found: list[JobStatus],
                 indexes: list[int]) -> dict[int, str]:
    """The tasks a cut-short array submit queued (index -> id, each spelt as flux batch
    spells it, in F58): those its record names (`recorded`, read by `parse_array_submit`
    from the file the submit appends to), whether or not flux still lists them (it purges
    ended jobs); and the queue's jobs carrying its token (`found`) that the record does not
    name (queued as the submit was cut short), taken by submit order: they were queued one
    after another in index order after every recorded task, and a flux id grows with its
    submit time. BadInput where the two disagree (an unrecorded job older than a recorded
    one, or more jobs than tasks): nothing is then resubmitted."""
    known = {v for jid in recorded.values() if (v := flux_id_value(jid)) is not None}
    values = {v for s in found if (v := flux_id_value(s.native_id)) is not None} - known
    left = [i for i in indexes if i not in recorded]
    if len(values) > len(left):
        raise BadInput(f"{len(values) + len(known)} queued jobs carry the array's token, "
                       f"more than its {len(indexes)} tasks: not resubmitting any")
    if values and known and min(values) < max(known):
        raise BadInput(f"job {flux_f58(min(values), ascii_prefix=True)} carries the array's "
                       "token but is older than a task its record names: not telling which "
                       "task it is, not resubmitting any")
    ordered = [flux_f58(v, ascii_prefix=True) for v in sorted(values)]
    return {**recorded, **dict(zip(left, ordered, strict=False))}


def fold_array_records(records: list[JobStatus], task_of: dict[int, tuple[str, str]],
                       ended: dict[str, dict[str, JobState]] | None = None
                       ) -> list[JobStatus]:
    """`flux jobs` records with those of a followed job array's tasks (`task_of`: a task's
    id as a number -> the array's native id and the task's index) folded into one status
    per array, under its native id, in the first listed task's place; other records
    unchanged (an array flux lists no task of is folded, last, where each task is known to
    have ended). A task of an array flux lists others of but not it was purged once ended
    (`flux job purge`, or the limit of inactive jobs flux keeps): its outcome is the one
    last known (`ended`: an array's native id -> index -> the ended state an earlier
    listing or the task's end line gave), else unknown, and the array is never read
    COMPLETED while one is (`fold_task_jobs`)."""
    groups: dict[str, dict[str, JobStatus]] = {}
    tasks: dict[str, dict[str, str]] = {}  # an array's tasks in order: index -> id
    for value, (array, index) in task_of.items():
        tasks.setdefault(array, {})[index] = flux_f58(value, ascii_prefix=True)
    out: list[JobStatus | str] = []
    for r in records:
        value = flux_id_value(r.native_id)
        if value is None or value not in task_of:
            out.append(r)
            continue
        array, index = task_of[value]
        if array not in groups:
            groups[array] = {}
            out.append(array)
        groups[array][index] = r
    known = {a: st for a, st in (ended or {}).items() if a in tasks}
    # an array none of whose tasks flux lists any more, each known to have ended
    out += [a for a in tasks if a not in groups and all(
        (st := known.get(a, {}).get(i)) is not None and st.terminal for i in tasks[a])]
    return [x if isinstance(x, JobStatus) else fold_task_jobs(
        x, groups.get(x, {}), tasks[x], known.get(x, {})) for x in out]


def fold_task_jobs(array: str, listed: dict[str, JobStatus], tasks: dict[str, str],
                   ended: dict[str, JobState]) -> JobStatus:
    """The status of a Flux-run job array from the records of its tasks flux listed
    (`listed`, by index; `tasks`: each task's id by index, in order). A task not listed
    was purged once ended: its outcome is the ended state `ended` (by index) holds for it
    (an earlier listing's, or its end line's), else UNKNOWN in the array's task states,
    and an array with such a task is never COMPLETED: still running or waiting where a
    listed task is, else FAILED (ended, not every task known to have completed), its
    reason naming the tasks not known. Tasks still held make the reason start `held (`,
    naming them (a release is then still wanted), whichever task's reason the fold shows."""
    by_index: dict[str, JobStatus] = {}
    for index, jid in tasks.items():
        if index in listed:
            by_index[index] = listed[index]
        elif (state := ended.get(index)) is not None and state.terminal:
            by_index[index] = JobStatus(native_id=jid, state=state, reason=None if state ==
                                        JobState.COMPLETED else f"{state.value} as last "
                                        "seen (flux no longer lists it)")
    unknown = [i for i in tasks if i not in by_index]
    folded = fold_indexed_tasks(array, by_index)
    held = [i for i, r in by_index.items() if not r.state.terminal and says_held(r.reason)]
    if held:  # which tasks: a task's own "held (urgency 0)" names none
        rest = None if says_held(folded.reason) else folded.reason
        folded = folded.model_copy(update={"reason": (
            f"held (task{'s' if len(held) > 1 else ''} {_some(held)} of {len(tasks)})"
            + (f"; {rest}" if rest else ""))})
    if not unknown:
        return folded
    said = (f"{len(unknown)} not listed by flux (purged once ended, its outcome not seen): "
            f"task{'s' if len(unknown) > 1 else ''} {_some(unknown)}")
    update: dict[str, Any] = {
        "tasks": {i: (folded.tasks or {}).get(i, JobState.UNKNOWN) for i in tasks},
        "reason": f"{folded.reason}; {said}" if folded.reason else f"array tasks: {said}"}
    if folded.state == JobState.COMPLETED:
        update |= {"state": JobState.FAILED, "exit_code": None, "native_state": None}
    return folded.model_copy(update=update)


def _some(indexes: list[str], shown: int = 10) -> str:
    """Task indexes in words: the first `shown`, then how many more."""
    more = len(indexes) - shown
    return ", ".join(indexes[:shown]) + (f" and {more} more" if more > 0 else "")
