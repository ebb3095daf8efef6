"""PBS text outputs as Slurm's own Torque wrappers print them (slurm-wlm-torque: `qstat -f`,
`qstat -q`, `pbsnodes -a`), recorded from the real wrappers of Slurm 22.05.8.

Where they differ from PBS Pro / OpenPBS / Torque (whose parsers stay in pbs_commands):
- no `-F json` and no `-x` (both are usage errors, exit 2); `qstat -f` prints text only;
- job ids are bare numbers ("900005", no ".server"); `qstat -f 123.server` finds nothing;
  an id it does not know gives no output and exit 153;
- a finished job is `job_state = C` with NO exit status (Torque prints `exit_status`), and
  `ctime`/`mtime` mean end/start time (Pro: creation/modification). A running job's
  `ctime` is its expected end;
- a held job shows `Q` (Priority = 0), not `H`; there is no `qselect`, no comment;
- `qsub` always hands sbatch `-o NAME.oID -e NAME.eID` (in the directory it runs in) unless
  given `-o`/`-e` itself, which override the script's `#PBS -o/-e`; its arguments go
  through a shell unquoted;
- `qdel` of an unknown id exits 1 silently; `pbsnodes` has no JSON, no allocated CPUs;
- `qstat` runs `hostname -f` first, whose complaint (a host name that does not resolve)
  lands before the jobs when stderr is merged.
Pure: text in, models out.
"""

from __future__ import annotations

import re
from datetime import tzinfo
from typing import Any

from ..digits import ascii_digits
from ..model import JobState, JobStatus, Node, Partition
from .outputs_common import (
    clean,
    fail,
    known_count,
    limit_count,
    parse_duration,
    parse_local_time,
    unread,
)

CTIME_FORMATS = ("%a %b %d %H:%M:%S %Y",)
_ACTIVE = {"Q": JobState.PENDING, "H": JobState.PENDING, "W": JobState.PENDING,
           "T": JobState.PENDING, "R": JobState.RUNNING, "E": JobState.RUNNING,
           "S": JobState.RUNNING}
# what the qsub wrapper's shell keeps as one word: no quoting can be relied upon there
SAFE_WRAPPER_PATH = re.compile(r"[A-Za-z0-9_./%@+=:,-]+")


def parse_full(stdout: str, command: str = "qstat -f", block: str = "Job Id"
               ) -> dict[str, dict[str, Any]]:
    """`qstat -f` text -> {job id: {attribute: value}}; `Resource_List.x = v` becomes
    {"Resource_List": {"x": v}}. A line that starts with white space and has no " = "
    continues the previous value (Torque wraps long values). `block`: what starts a block
    ("Queue" for `qstat -Q -f`, "Server" for `qstat -B -f`)."""
    jobs: dict[str, dict[str, Any]] = {}
    twice: set[str] = set()  # ids given two blocks: one is forged (in some job's name)
    cur: dict[str, Any] | None = None
    last: tuple[dict[str, Any], str] | None = None
    message = False  # a message came before the first block
    for n, line in enumerate(stdout.split("\n"), 1):
        if not line.strip():
            continue
        m = re.match(rf"{block}:\s*(\S+)\s*$", line)
        if m:
            if m.group(1) in jobs:
                twice.add(m.group(1))
            cur = jobs.setdefault(m.group(1), {})
            last = None
            continue
        if cur is None:
            # a message before the jobs (the wrapper's `hostname -f` complaining; perl's
            # locale warning, whose indented lines go on with it): no job's attributes
            if not line[:1].isspace() or message:
                message = True
                continue
            raise fail("pbs", f"{command} line {n}", f"an attribute before any '{block}:'", line)
        key, sep, value = line.strip().partition(" = ")
        if not sep:
            if last is not None:
                # indented: Torque wrapped a long value; not indented: a value (a job's name,
                # anyone's, in a queue listing) holding a newline goes on
                d, k = last
                d[k] = f"{d[k]}{line.strip()}" if line[:1].isspace() else f"{d[k]}\n{line}"
                continue
            raise fail("pbs", f"{command} line {n}", "expected 'name = value'", line)
        head, dot, sub = key.partition(".")
        if dot:
            group = cur.setdefault(head, {})
            group[sub] = value.strip()
            last = (group, sub)
        else:
            cur[key] = value.strip()
            last = (cur, key)
    # which of two blocks of one id is the scheduler's cannot be told: neither is believed
    return {jid: attrs for jid, attrs in jobs.items() if jid not in twice}


def _hosts(exec_host: str | None) -> str | None:
    """'sn1/2+sn2/0-1' -> 'sn1,sn2'."""
    if not exec_host:
        return None
    names = []
    for part in exec_host.split("+"):
        name = part.split("/", 1)[0]
        if name and name not in names:
            names.append(name)
    return ",".join(names) or None


def wrapper_job(jid: str, a: dict[str, Any], tz: tzinfo | None) -> JobStatus:
    """One job of the wrapper's `qstat -f`. A finished job (C) carries no exit status: it
    is UNKNOWN here, for accounting (or the job's own end report) to settle."""
    def when(key: str):
        v = clean(a.get(key))
        return parse_local_time(v, tz, CTIME_FORMATS) if v else None

    code = str(a.get("job_state", "")).strip()
    rl = a.get("Resource_List") or {}
    try:
        limit = parse_duration(rl.get("walltime"))
    except ValueError:
        limit = None
    hosts = _hosts(clean(a.get("exec_host")))
    reason = None
    if code == "C":
        state = JobState.UNKNOWN
        reason = "ended (Slurm's qstat wrapper shows no exit status)"
    else:
        state = _ACTIVE.get(code, JobState.UNKNOWN)
        if code == "Q" and str(a.get("Priority", "")).strip() == "0":
            reason = "held (priority 0)"
    started = when("mtime") if (code in ("R", "E", "S") or (code == "C" and hosts)) else None
    return JobStatus(
        native_id=jid, state=state, native_state=code or None, name=clean(a.get("Job_Name")),
        user=(clean(a.get("Job_Owner")) or "").split("@")[0] or None,
        partition=clean(a.get("queue")), nodes=known_count(rl.get("nodect")),
        cpus=known_count(rl.get("ncpus")), walltime_s=limit, submitted_at=when("qtime"),
        started_at=started, ended_at=when("ctime") if code == "C" else None,
        reason=reason, node_list=hosts,
    )


def parse_wrapper_status(stdout: str, tz: tzinfo | None = None) -> list[JobStatus]:
    return [wrapper_job(jid, a, tz) for jid, a in parse_full(stdout).items()]


# a node's name as pbsnodes prints it on a line of its own (a host name)
_NODE_NAME = re.compile(r"[A-Za-z0-9_][\w.-]*")


def parse_wrapper_nodes(stdout: str, skipped: list[str] | None = None) -> list[Node]:
    """`pbsnodes -a` of the wrapper (and Torque's): a node name line, then indented
    `key = value` lines. `skipped`: where to say a line of another shape, left out (else
    SiteError)."""
    nodes: list[Node] = []
    cur: dict[str, str] | None = None
    name = ""
    message = False  # within a message (stderr merged): its indented lines go on with it

    def flush() -> None:
        if cur is None:
            return
        status = dict(kv.split("=", 1) for kv in cur.get("status", "").split(",") if "=" in kv)
        feats = [f for f in re.split(r"[\s,]+", cur.get("properties", "")) if f]
        mem = re.fullmatch(r"([0-9]+)mb", status.get("availmem", ""))
        phys = re.fullmatch(r"([0-9]+)kb", status.get("physmem", ""))  # Torque's own pbsnodes
        state = cur.get("state", "unknown")
        cpus = known_count(cur.get("np")) or known_count(status.get("ncpus")) or 0
        busy = state in ("job-exclusive", "busy", "allocated")
        nodes.append(Node(
            name=name, state=status.get("slurmstate", state), cpus=cpus,
            cpus_allocated=cpus if busy else min(cpus, _slots(cur.get("jobs", ""))),
            memory_mb=int(mem.group(1)) if mem else int(phys.group(1)) // 1024 if phys else 0,
            gpus=known_count(cur.get("gpus")) or 0, features=feats,
            architecture=clean(status.get("arch")),
            # an admin's word on it: PBS's `comment`, Torque's `note` (pbsnodes -N)
            reason=clean(cur.get("comment")) or clean(cur.get("note")),
        ))

    for n, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        if not line[:1].isspace():
            flush()
            cur, message = None, not _NODE_NAME.fullmatch(line.strip())
            if message:  # not a node's name: perl's locale warning, a command's complaint
                unread(skipped, "pbs", f"pbsnodes line {n}", "not a node's name", line)
            else:
                name, cur = line.strip(), {}
            continue
        if message:
            continue
        key, sep, value = line.strip().partition(" = ")
        if cur is None or not sep:
            unread(skipped, "pbs", f"pbsnodes line {n}", "expected 'name = value' under a node",
                   line)
            continue
        cur[key] = value
    flush()
    return nodes


def _slots(jobs: str) -> int:
    """The CPU slots Torque's `jobs = 0-3/12.srv,4/13.srv` says are taken."""
    total = 0
    for entry in jobs.split(","):
        slots, sep, _ = entry.strip().partition("/")
        lo, _, hi = slots.partition("-")
        if sep and ascii_digits(lo) and (not hi or ascii_digits(hi)):
            total += int(hi) - int(lo) + 1 if hi else 1
    return total


# Torque's queue and server limits as PBS Pro writes them (`max_run = [u:PBS_GENERIC=N]`)
_TORQUE_LIMITS = {"max_running": ("max_run", "o:PBS_ALL"),
                  "max_user_run": ("max_run", "u:PBS_GENERIC"),
                  "max_group_run": ("max_run", "g:PBS_GENERIC"),
                  "max_queuable": ("max_queued", "o:PBS_ALL"),
                  "max_user_queuable": ("max_queued", "u:PBS_GENERIC")}


def torque_as_pro(attrs: dict[str, Any]) -> dict[str, Any]:
    """A Torque queue's or server's `qstat -Q -f`/`-B -f` attributes in PBS Pro's terms:
    its max_running, max_user_run, max_group_run, max_queuable and max_user_queuable as
    `max_run`/`max_queued` entries, `resources_max.nodes` (a count) as `nodect`."""
    out = dict(attrs)
    for name, (attr, who) in _TORQUE_LIMITS.items():
        value = str(attrs.get(name) or "").strip()
        if ascii_digits(value):
            entries = [e for e in str(out.get(attr) or "").split(",") if e.startswith("[")]
            out[attr] = ",".join([*entries, f"[{who}={value}]"])
    mx = dict(attrs.get("resources_max") or {})
    if ascii_digits(str(mx.get("nodes", ""))) and "nodect" not in mx:
        mx["nodect"] = mx["nodes"]
    out["resources_max"] = mx
    return out


def parse_wrapper_queues(stdout: str) -> list[Partition]:
    """`qstat -q` of the wrapper: `NAME -- -- WALLTIME|-- NODES|-- RUN QUE -- E|D R|S`."""
    out = []
    for line in stdout.splitlines():
        f = line.split()
        if len(f) < 9 or f[0].startswith(("Queue", "-")) or set(f[0]) == {"-"}:
            continue
        try:
            limit = None if f[3] == "--" else parse_duration(f[3])
        except ValueError:
            continue
        out.append(Partition(
            name=f[0], state="UP" if f[-2] == "E" else "DOWN", max_time_s=limit,
            max_nodes=limit_count(f[4]) if f[4] != "--" else None,
        ))
    return out
