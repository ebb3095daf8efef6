"""Feasibility: what a JobSpec asks of one node, and why a site's nodes cannot give it.

Pure helpers shared by `placement` and `placement_sim`: the request a spec makes per
node, node and metadata checks that return exact human reasons, and the reading of a
snapshot (usable nodes, partition membership, Slurm hostlists).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import lru_cache, partial
from math import ceil
from typing import Any

from diamond_jupyter.wording import quantity

from .dialects.outputs_common import (
    count_array_tasks,
    expand_hostlist,
    highest_array_index,
)
from .dialects.scripts_common import parse_mem_mb, pbs_shrink_to_fit
from .dialects.sge_commands import amount
from .dialects.slurm_script import parse_slurm_time
from .digits import ascii_digits
from .model import (
    GPUS_PER_JOB,
    PER_GPU,
    BadInput,
    JobSpec,
    Node,
    Partition,
    SgeComplex,
    SiteSnapshot,
    hms,
)
from .needs import (
    Constraint,
    Feature,
    Op,
    constraint_of,
    feature_names,
    gpu_matches,
    gpus_of,
    kept_gpu_mix,
    kept_slurm_gpu_total,
    kept_slurm_gpus,
    node_arch,
    node_gpu_models,
    norm_arch,
    pbs_chunk_needs,
    required_arch,
)
from .placement_explain import NEVER_ROOM

# Node states (any scheduler's, lower case, each word of a compound state such as Slurm's
# `idle+drain` or PBS's `offline,job-exclusive`) in which a node takes no new job: Slurm's
# down/drain/fail/maint/reboot/not responding, PBS's offline, state-unknown, stale (its mom
# no longer reports) and unresolvable (its host name does not resolve), LSF's
# unavail/unreach/closed_Adm/closed_Lock/closed_LIM/unlicensed, Flux's excluded. A node
# powered down to save power (`idle~`, `IDLE+POWERED_DOWN`) or busy (`closed_Full`) still
# takes jobs (resumed on demand, or once it frees).
_DOWN = {"down", "drain", "drained", "draining", "drng", "fail", "failing", "maint",
         "maintenance", "inval", "invalid", "future", "unknown", "unk", "reboot",
         "reboot_requested", "reboot_issued", "not_responding", "offline", "unavail",
         "unreach", "closed_adm", "closed_lock", "closed_lim", "unlicensed", "excluded",
         "unresolvable", "stale", NEVER_ROOM}


def aware(dt: datetime) -> datetime:
    """Naive datetimes are taken as UTC."""
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


# In an advanced reservation (Slurm's RESERVED, `resv` in sinfo): only for the jobs of that
# reservation until it ends
_RESERVED = {"reserved", "resv"}


def node_usable(node: Node, in_reservation: bool = False) -> bool:
    """Whether `node` takes new jobs; a reserved node only those of a reservation
    (`in_reservation`: the job names one)."""
    return _state_usable(node.state, in_reservation)


@lru_cache(maxsize=1024)  # per node of every site at each decision: few distinct states
def _state_usable(state: str, in_reservation: bool) -> bool:
    state = state.lower()
    words = set(re.split(r"[^a-z_]+", state))
    if "@" in state:  # sinfo's mark for a reboot pending: scontrol's REBOOT_REQUESTED
        words.add("reboot_requested")
    if "idle" not in words:
        # a reboot requested without ASAP (which adds DRAIN): the node keeps taking jobs
        # and is rebooted once idle (scontrol(1)); an idle one is about to be rebooted
        words.discard("reboot_requested")
    words |= {p for w in words if w not in _POWER for p in w.split("_")} - {"down"}
    # sinfo's marks after a state: `*` not responding, `^` being rebooted (REBOOT_ISSUED),
    # `$` in a maintenance reservation (only that reservation's jobs run there)
    return "*" not in state and "^" not in state and not (words & _DOWN) \
        and (in_reservation or not (words & _RESERVED) and "$" not in state)


# Slurm nodes that take no job now but come back by themselves (slurm.conf, sinfo(1)): one
# not responding (sinfo's `*`, NOT_RESPONDING) that is not also DOWN, DRAIN or FAIL answers
# again within SlurmdTimeout (300 s by default) or slurmctld sets it DOWN then; one to be
# rebooted (REBOOT_REQUESTED, REBOOT_ISSUED, sinfo's `@` and `^`) is rebooted once its jobs
# end and is back within ResumeTimeout (60 s by default). Neither is gone from capacity.
NOT_RESPONDING_S = 300.0
REBOOT_S = 60.0
# Power saving (slurm.conf, sinfo(1)): an idle node powered off (POWERED_DOWN, sinfo's `~`)
# takes a job but boots for it first, within ResumeTimeout (60 s by default: the bound, the
# boot's own length is not read); one powering up (POWERING_UP, `#`) is part way through
# that boot (how far is not read: the same bound); one to be powered off (POWER_DOWN, `!`)
# or powering off (POWERING_DOWN, `%`) takes no job until it is off, within SuspendTimeout
# (30 s by default), and booted again.
SUSPEND_S = 30.0
_RETURN_WORDS = {"not_responding", "reboot_requested", "reboot_issued", "reboot"}
_BOOT_WORDS = {"powered_down": "off", "powering_up": "booting", "power_up": "booting",
               "power_down": "going_off", "powering_down": "going_off"}
_BOOT_MARKS = {"~": "off", "#": "booting", "!": "going_off", "%": "going_off"}


def node_power(node: Node) -> str | None:
    """Where power saving has Slurm node `node`: "off" (powered down), "booting" (powering
    up), "going_off" (to be powered down, or powering down); None: on."""
    return _power_kind(node.state)


@lru_cache(maxsize=1024)
def _power_kind(state: str) -> str | None:
    state = state.lower()
    words = set(re.split(r"[^a-z_]+", state))
    kinds = {_BOOT_WORDS[w] for w in words if w in _BOOT_WORDS}
    if m := re.fullmatch(r"[a-z_]+([*~#!%$@^+-]+)", state):  # sinfo's marks after a state
        kinds |= {_BOOT_MARKS[c] for c in m.group(1) if c in _BOOT_MARKS}
    for kind in ("going_off", "off", "booting"):  # the longest way back first
        if kind in kinds:
            return kind
    return None


def node_returning(node: Node, in_reservation: bool = False,
                   timeouts: dict[str, float] | None = None,
                   now: datetime | None = None, seen_at: datetime | None = None
                   ) -> tuple[float, bool] | None:
    """For a node that takes no job now but comes back by itself: (the seconds after which
    its free resources take jobs again at the latest, whether it reboots first, after the
    jobs on it end); None for a node usable now or out for good. `timeouts`: the site's
    SlurmdTimeout and ResumeTimeout (`SiteSnapshot.node_timeouts`), else the defaults.
    `now`: a node set DOWN or DRAIN until a time (Slurm's ResumeAfterTime) is back then
    (`seen_at`: `seen_out_at`)."""
    if (at := resume_after_s(node, in_reservation, now, seen_at)) is not None:
        return at, False
    silent_s, reboot_s = returning_timeouts(timeouts)
    return _returning(node.state, in_reservation, silent_s, reboot_s,
                      (timeouts or {}).get("SuspendTimeout", SUSPEND_S))


def resume_after_s(node: Node, in_reservation: bool = False, now: datetime | None = None,
                   seen_at: datetime | None = None) -> float | None:
    """Seconds from `now` until an out-of-service node whose ResumeAfterTime is set
    returns to service (Slurm resumes it then: DOWN and DRAIN cleared); None for a node
    usable now, without the time, or not judged at a time. A time already past when the
    node was seen still out (`seen_at`, else `now`) is one Slurm did not resume it at:
    nothing says it comes back, and it is read as without one."""
    if now is None or node.resume_after is None or _state_usable(node.state, in_reservation):
        return None
    at = aware(node.resume_after)
    if at <= (seen_at or now):
        return None
    return max((at - now).total_seconds(), 0.0)


def seen_out_at(read_at: datetime, now: datetime) -> datetime:
    """When a snapshot read at `read_at` (`SiteSnapshot.read_at or taken_at`) last saw
    its nodes, as judged at `now` (never after it)."""
    return min(aware(read_at), now)


_OWN_TIMEOUTS = (("ResumeTimeout", "resume_timeout_s", REBOOT_S),
                 ("SuspendTimeout", "suspend_timeout_s", SUSPEND_S))


def timeouts_by_node(partitions: list[Partition], site: dict[str, float] | None
                     ) -> dict[str, dict[str, float]]:
    """The timeouts of each node a partition setting its own ResumeTimeout or
    SuspendTimeout holds (slurm.conf: a partition's own is used for its nodes; a node of
    several partitions is bounded by the longest, GLOBAL being the site's): the site's
    `node_timeouts` with those in their place, `Partition<name>` marking a partition's own
    value; {} where no partition sets one (every node then goes by the site's)."""
    own = [p for p in partitions if p.resume_timeout_s is not None
           or p.suspend_timeout_s is not None]
    if not own:
        return {}
    site = site or {}
    holders: dict[str, list[Partition]] = {}
    for p in partitions:
        for name in p.nodes:
            holders.setdefault(name, []).append(p)
    out: dict[str, dict[str, float]] = {}
    for name in {n for p in own for n in p.nodes}:
        t = dict(site)
        for key, field, default in _OWN_TIMEOUTS:
            values = [(float(v), True) if (v := getattr(p, field)) is not None
                      else (site.get(key, default), False) for p in holders[name]]
            longest, is_own = max(values, key=lambda vo: (vo[0], not vo[1]))
            if is_own:
                t[key] = t[f"Partition{key}"] = longest
        out[name] = t
    return out


def timeouts_of(by_node: dict[str, dict[str, float]], names: Collection[str],
                site: dict[str, float] | None) -> dict[str, float] | None:
    """The timeouts bounding every node of `names` at once: the longest of theirs
    (`timeouts_by_node`, the site's for a node not in it); the site's where none has its
    own."""
    each = [by_node.get(n, site or {}) for n in names]
    if not any(n in by_node for n in names):
        return site
    out = dict(site or {})
    for key, _, default in _OWN_TIMEOUTS:
        longest, is_own = max(((t.get(key, default), f"Partition{key}" in t) for t in each),
                              key=lambda vo: (vo[0], not vo[1]))
        if is_own:
            out[key] = out[f"Partition{key}"] = longest
    return out


def returning_timeouts(timeouts: dict[str, float] | None) -> tuple[float, float]:
    """(SlurmdTimeout, ResumeTimeout) of a site: its own where read, else Slurm's default."""
    t = timeouts or {}
    return t.get("SlurmdTimeout", NOT_RESPONDING_S), t.get("ResumeTimeout", REBOOT_S)


@lru_cache(maxsize=1024)
def _returning(state: str, in_reservation: bool, silent_s: float, reboot_s: float,
               suspend_s: float = SUSPEND_S) -> tuple[float, bool] | None:
    if _state_usable(state, in_reservation) and (power := _power_kind(state)) is not None:
        # power saving: booted (after being powered off, and its jobs' end) before a job
        # starts there
        return (suspend_s + reboot_s, True) if power == "going_off" else (reboot_s, False)
    state = state.lower()
    words = set(re.split(r"[^a-z_]+", state))
    silent = "*" in state or "not_responding" in words
    reboot = "^" in state or "@" in state or bool(words & (_RETURN_WORDS - {"not_responding"}))
    if not (silent or reboot) or _state_usable(state, in_reservation):
        return None
    rest = "+".join(w for w in re.split(r"[+,\s]+", re.sub(r"[*^@]", "", state))
                    if w and w not in _RETURN_WORDS)
    if not _state_usable(rest or "idle", in_reservation):
        return None  # also down, drained, failing...: out until an admin acts
    return (silent_s if silent else reboot_s), reboot


def node_reserved(node: Node) -> bool:
    state = node.state.lower()
    return bool(set(re.split(r"[^a-z_]+", state)) & _RESERVED) or "$" in state


_POWER = {"powered_down", "power_down", "powering_down", "powering_up", "power_up"}


class NodeNames(list):
    """Node names in the site's order that answer `in` from a set (placement asks, for
    each node, whether it is a partition's member: a list's scan made that quadratic in
    the nodes). Read-only, so the set cannot fall out of step: changing one raises."""

    __slots__ = ("_set",)

    def __init__(self, names: Iterable[str] = ()) -> None:
        super().__init__(names)
        self._set = frozenset(self)

    def __contains__(self, name: object) -> bool:
        return name in self._set

    def _read_only(self, *_: object, **__: object) -> None:
        raise TypeError("a partition's member names are read-only (copy with list())")

    append = extend = insert = remove = pop = clear = sort = reverse = _read_only
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only


def partition_members(snap: SiteSnapshot, nodes: list[Node]) -> dict[str, list[str]]:
    """Partition name -> node names (from Partition.nodes, else from Node.partitions); a
    Flux queue's only those with the properties it requires."""
    names = NodeNames(n.name for n in nodes)
    any_membership = any(n.partitions for n in nodes)
    out: dict[str, list[str]] = {}
    for p in snap.partitions:
        listed = {h for entry in p.nodes for h in expand_hostlist(entry)}
        if listed:
            out[p.name] = NodeNames(x for x in names if x in listed)
        elif any_membership:
            out[p.name] = NodeNames(n.name for n in nodes if p.name in n.partitions)
        else:
            out[p.name] = names
        if p.requires:
            meet = {n.name for n in nodes if meets_requires(n, p.requires)}
            out[p.name] = NodeNames(x for x in out[p.name] if x in meet)
    return out


def flux_requires_miss(p: Partition, nodes: list[Node]) -> str:
    """Why a Flux queue whose `requires` no node meets runs no job, naming what it requires
    and the properties the nodes have."""
    have = sorted({f for n in nodes for f in n.features})
    return (f"queue {p.name} requires node properties {', '.join(p.requires or [])} "
            "(flux config get queues: requires), which no node has (their properties: "
            f"{', '.join(have) or 'none'}): it runs no job")


def meets_requires(node: Node, requires: list[str]) -> bool:
    """Whether a node has every property a Flux queue requires (`^NAME`: lacks it)."""
    return all((r[1:] not in node.features) if r.startswith("^") else r in node.features
               for r in requires)


def site_nodes(snap: SiteSnapshot) -> list[Node]:
    """The snapshot's nodes, or idle nodes synthesised from partition totals when none."""
    if snap.nodes:
        return snap.nodes
    out: dict[str, Node] = {}
    for p in snap.partitions:
        names = [h for e in p.nodes for h in expand_hostlist(e)] \
            or [f"{p.name}-{i}" for i in range(p.total_nodes)]
        for h in names:
            n = out.setdefault(h, Node(name=h, state="idle", cpus=p.total_cpus // len(names)))
            n.partitions.append(p.name)
    return list(out.values())


@dataclass(frozen=True)
class Words:
    """How a site's own scheduler names what placement reasons speak of: its queues of
    jobs with their limits, the longest time limit one gives a job, a machine of the
    site, a job's pieces, and a machine's processors."""
    part: str = "partition"
    time_cap: str = "MaxTime"
    node: str = "node"
    tasks: str = "tasks"
    cpus: str = "CPUs"

    def where(self, name: str) -> str:
        """A queue as a reason names it; a site without queues (flux) is the site."""
        return f"{self.part} {name}" if name else "the site"

    def nodes(self, n: int) -> str:
        return quantity(n, self.node)

    def cpus_counted(self, n: int) -> str:
        """`n` processors in the site's word: "1 CPU", "1 slot" (PBS's ncpus is a name)."""
        one = self.cpus if self.cpus == "ncpus" else self.cpus.removesuffix("s")
        return quantity(n, one, self.cpus)


SITE_WORDS = {
    "slurm": Words(),
    "pbs": Words("queue", "resources_max.walltime", "vnode", "MPI processes", "ncpus"),
    "torque": Words("queue", "resources_max.walltime", "node", "processes", "processors"),
    "lsf": Words("queue", "RUNLIMIT", "host", "tasks", "slots"),
    "sge": Words("queue", "h_rt", "host", "tasks", "slots"),
    "flux": Words("queue", "TLIMIT", "node", "tasks", "cores"),
}
SLURM_WORDS = SITE_WORDS["slurm"]


def words_of(scheduler: str, flavor: str | None = None) -> Words:
    """The vocabulary of a site's scheduler kind (PBS flavors: Torque's own, a PBS front
    on Slurm Slurm's)."""
    kind = flavor if scheduler == "pbs" and flavor in ("torque", "slurm") else scheduler
    return SITE_WORDS.get(kind, SLURM_WORDS)


@dataclass
class Req:
    nodes: int
    tpn: int
    cpt: int
    cpn: int  # CPUs per node
    gpn: int
    mem: int  # MB per node, 0 = not asked
    whole: bool
    walltime: float | None
    arch: str | None
    constraint: Constraint | None = None  # the feature expression every node must meet
    gpu_type: str | None = None
    # a constraint refused as written: unreadable, or counts beyond the job's nodes
    unreadable: str | None = None
    spread: bool = False  # the job's GPUs (`--gpus=N`) spread over `nodes` nodes
    all_memory: bool = False  # Slurm `--mem=0`: all the memory of each node, none shared
    time_min: float | None = None  # Slurm --time-min: the walltime may be cut down to it
    time_min_name: str = "--time-min"  # as the script asks it (PBS Pro: min_walltime)
    nodelist: tuple[str, ...] = ()  # hosts the job must have (Slurm --nodelist)
    exclude: tuple[str, ...] = ()  # hosts it must not get (Slurm --exclude)
    # generic resources other than GPUs per node, from a Slurm `--gres` (mps:50, shard:2)
    gres: tuple[tuple[str, int], ...] = ()
    # a Grid Engine job's other numeric `-l NAME=VALUE` requests, per slot (a consumable
    # is asked per slot): checked where NAME is a host consumable (`Node.consumables_*`)
    consumables: tuple[tuple[str, float], ...] = ()
    # of those, the ones asked once (a complex of consumable JOB or HOST), not per slot
    job_wide: frozenset[str] = frozenset()
    # of those, the ones not asked but taken at the complex's default: a host without the
    # complex is not held to them
    implicit: frozenset[str] = frozenset()
    # of the ones asked once, those of consumable JOB: taken on the master task's host
    # alone, not on the other hosts a job of several hosts gets
    master_only: frozenset[str] = frozenset()
    # a Grid Engine job's memory and GPUs as the complexes that ask them (h_vmem per slot,
    # bytes; the GPU complex as written): checked against queue consumables (a host's
    # hc:h_vmem and hc:gpu are its memory and GPUs, checked as those)
    own: tuple[tuple[str, float], ...] = ()
    # the Grid Engine complex its memory is asked by (`-l h_vmem`, `h_data`, `mem_free`,
    # `m_mem_free`)
    mem_complex: str = "h_vmem"
    # what a node must have at least (Slurm `--tmp`, `--sockets-per-node`,
    # `--cores-per-socket`, `--threads-per-core`, `-B S:C:T`): (Node field, amount, the
    # option as written); a node that does not report the field is not held to it
    node_minimums: tuple[tuple[str, int, str], ...] = ()
    # the most tasks a socket and a core take (Slurm `--ntasks-per-socket`,
    # `--ntasks-per-core`; 0: no limit): with a node's sockets and cores, its tasks
    tasks_per_socket: int = 0
    tasks_per_core: int = 0
    # cores and threads a node keeps from the job (Slurm `--core-spec=N`,
    # `--thread-spec=N`: specialized for the system, not the job's), as written
    spec_cores: int = 0
    spec_threads: int = 0
    spec_option: str = ""
    # Slurm --overcommit: the CPUs of one task a node asked, whatever its tasks a node
    overcommit: bool = False
    # GPUs of several types a node must hold, (type, count), from a Slurm option kept as
    # written (`--gres=gpu:a100:2,gpu:v100:1`); their sum is in `gpn`
    gpu_mix: tuple[tuple[str, int], ...] = ()
    # the fewest nodes its feature counts take (`[a100*2&ib*1]`: 3), 0 without counts: no
    # spreading of its tasks gives it fewer
    counted_floor: int = 0
    # tasks over any nodes, `cpt` CPUs and `gpt` GPUs each (Slurm `-n N` without `-N` or
    # `--ntasks-per-node`, a Grid Engine `$fill_up`/`$round_robin` PE): the scheduler may
    # place them wherever room is, so many here and so many there; 0: the exact shape
    free_tasks: int = 0
    gpt: int = 0
    mem_per_node: bool = False  # `mem` asked of each node whatever it holds (Slurm --mem)

    def usable_cpus(self, n: Node) -> int:
        """The CPUs of node `n` the job's tasks may use: all but its specialized cores'
        threads (`--core-spec`) and specialized threads (`--thread-spec`). The node's own
        CoreSpecCount (already out of `n.cpus`) is the default a job's --core-spec takes
        the place of (where the site allows it, AllowSpecResourcesUsage, which is not
        read; else the job's is ignored): the larger of the two is kept, not their sum."""
        more = max(0, self.spec_cores - n.spec_cores)
        return n.cpus - more * (n.threads_per_core or 1) - self.spec_threads

    def task_cap(self, n: Node) -> int | None:
        """The most tasks node `n` takes under `--ntasks-per-socket`/`--ntasks-per-core`
        (its sockets, its cores), None where neither is asked or the node does not say."""
        caps = []
        if self.tasks_per_socket and n.sockets:
            caps.append(self.tasks_per_socket * n.sockets)
        cores = n.sockets * n.cores_per_socket if n.sockets and n.cores_per_socket else \
            n.cpus // n.threads_per_core if n.threads_per_core else None
        if self.tasks_per_core and cores:
            caps.append(self.tasks_per_core * cores)
        return min(caps, default=None)

    def on_master_only(self, name: str) -> bool:
        """Whether consumable `name` binds one of the job's hosts only (its master's)."""
        return name in self.master_only and self.nodes > 1

    def host_consumables(self) -> tuple[tuple[str, float], ...]:
        """What is checked against the hosts' consumables (qhost -F hc:): the consumables
        it asks, and its memory and GPUs where their complex is of type JOB and it spans
        several hosts (its master task's host alone is debited: `mem`/`gpn` ask none of
        the others)."""
        return self.consumables + tuple(o for o in self.own if self.on_master_only(o[0]))

    def consumable_need(self, name: str, amount: float) -> float:
        """What a host gives this job of a consumable: per slot times its slots there, or
        the amount once for a complex asked once."""
        return amount if name in self.job_wide else amount * max(self.cpn, 1)


def request(spec: JobSpec, biggest_node: int, most_gpus: int = 0, *,
            spread_gpus: bool = False, most_memory: int = 0) -> Req:
    """What the job asks of each node. Tasks without a node count are spread as the
    scheduler would: as many to a node as the largest node's CPUs (`biggest_node`),
    for tasks of GPUs its GPUs (`most_gpus`: of the type it asks, if any) and, for memory
    per CPU, its memory (`most_memory`, MB) hold.
    `spread_gpus` (a Slurm site): the job's GPUs without a node count (`--gpus=N`) take as
    many nodes as they need, N shared among them as evenly as the nodes allow."""
    r = spec.resources
    cpt = r.cpus_per_task or 1
    tpn, nodes = r.tasks_per_node, r.nodes
    total = r.gpus_per_node if spread_gpus and nodes is None and r.gpus_per_node \
        and spec.metadata.get(GPUS_PER_JOB) == r.gpus_per_node and tpn is None else None
    per_gpu = spec.metadata.get(PER_GPU)
    per_gpu = per_gpu if isinstance(per_gpu, dict) else {}
    if total and most_gpus and total > most_gpus:
        if isinstance(per_gpu.get("cpus-per-gpu"), int):
            cpt = 1  # the CPUs come with the GPUs, node by node (below)
        nodes = max(ceil(total / most_gpus), ceil((r.tasks or 1) * cpt / max(biggest_node, 1)))
    else:
        total = None
    if tpn is None and r.tasks:
        fits = biggest_node // cpt
        if r.gpus_per_task and most_gpus:
            fits = min(fits, most_gpus // r.gpus_per_task)
        if r.memory_per_cpu_mb and most_memory and not r.memory_mb:
            fits = min(fits, most_memory // (r.memory_per_cpu_mb * cpt))
        tpn = ceil(r.tasks / nodes) if nodes else min(r.tasks, max(1, fits))
    tpn = tpn or 1
    nodes = nodes or (ceil(r.tasks / tpn) if r.tasks else 1)
    kept = {d.option: d.value or "" for d in spec.unknown if d.dialect == "slurm"}
    het = any(o in kept for o in ("hetjob", "packjob"))
    unreadable = None
    try:
        constraint = constraint_of(spec.constraints.features)
    except BadInput as e:
        constraint, unreadable = None, str(e)
    # feature counts (`v100*3`, `[a100*2&ib*1]`) take nodes of their own: Slurm raises the
    # job's node count to them when its tasks need fewer (up to a -N range's largest)
    counted_floor = 0 if het or constraint is None else counts_node_need(constraint)
    if counted_floor > nodes and (r.nodes is None or counted_floor <= (
            _range_most(kept.get("--nodes")) or 0)):
        nodes = counted_floor
        if r.tasks and r.tasks_per_node is None:
            tpn = ceil(r.tasks / nodes)
    kept_type, kept_gpn = kept_slurm_gpus(spec, nodes)  # --gpus not dividing, per socket
    kept_total = kept_slurm_gpu_total(spec)
    if kept_total and r.nodes is None and r.tasks and most_gpus \
            and (kept_gpn or 0) > most_gpus:
        # a job total of GPUs over a node count Slurm picks: as many nodes as the GPUs
        # need, up to one per task
        nodes = max(nodes, min(r.tasks, ceil(kept_total / most_gpus)))
        tpn, kept_gpn = ceil(r.tasks / nodes), ceil(kept_total / nodes)
    gpn = ceil(total / nodes) if total else \
        r.gpus_per_node or (r.gpus_per_task or 0) * tpn or kept_gpn or 0
    mem = r.memory_mb or (r.memory_per_cpu_mb or 0) * cpt * tpn
    cpn = cpt * tpn
    if total:  # --mem-per-gpu / --cpus-per-gpu: of the GPUs each node gets
        if isinstance(m := per_gpu.get("mem-per-gpu"), int):
            mem = m * gpn
        if isinstance(c := per_gpu.get("cpus-per-gpu"), int):
            cpt = max(1, ceil(c * gpn / tpn))
            cpn = cpt * tpn
    # --cpus-per-gpu / --mem-per-gpu a Slurm script kept (the model had no exact form for
    # them): a node gets C CPUs and M of memory per GPU it holds, so it needs at least that
    for d in spec.unknown:
        if d.dialect == "slurm" and d.option == "--cpus-per-gpu" and ascii_digits(d.value or ""):
            cpn = max(cpn, int(d.value or 0) * gpn)
        elif d.dialect == "slurm" and d.option == "--mem-per-gpu":
            mem = max(mem, (parse_mem_mb(d.value or "") or 0) * gpn)
    mix = kept_gpu_mix(spec, tpn, nodes)  # GPUs of several types, kept as written
    if mix:
        gpn = max(gpn, sum(c for _, c in mix))
    overcommit = "--overcommit" in kept and bool(r.tasks)
    if overcommit:
        # sbatch -O: CPUs allocated as for one task a node (its --cpus-per-task), the
        # tasks a node options ignored; the tasks run on the nodes asked (one by default);
        # with --exclusive the same nodes, each whole
        nodes = max(r.nodes or 1, counted_floor)
        tpn, cpn = ceil(r.tasks / nodes), cpt
        mem = r.memory_mb or (r.memory_per_cpu_mb or 0) * cpt
    if constraint is not None and not het:
        unreadable = counts_beyond_nodes(constraint, r.nodes, kept.get("--nodes"))
    pbs_type, pbs_arch = pbs_chunk_needs(spec)  # a PBS site's custom chunk resources
    arch = norm_arch(spec.constraints.architecture or spec.metadata.get("architecture")) \
        or required_arch(constraint) or pbs_arch
    # `--mem=0` (Slurm: all the memory of each node) leaves no node to share: whole nodes
    whole = spec.constraints.exclusive or r.memory_mb == 0
    # --core-spec / --thread-spec: so many cores (threads) of each node kept from the job,
    # which sbatch then gives whole nodes (the option sets --exclusive)
    spec_cores, spec_threads = _whole(kept.get("--core-spec")), _whole(kept.get("--thread-spec"))
    spec_option = f"--core-spec={spec_cores}" if spec_cores else \
        f"--thread-spec={spec_threads}" if spec_threads else ""
    whole = whole or bool(spec_option)
    time_min = parse_slurm_time(kept["--time-min"]) if "--time-min" in kept else None
    walltime, time_min_name = r.walltime_s, "--time-min"
    if shrink := pbs_shrink_to_fit(spec):  # PBS Pro gives it from its min up to its max
        time_min, walltime, _ = shrink
        time_min_name = "min_walltime"
    if ascii_digits(mincpus := kept.get("--mincpus", "")):  # at least that many a node
        cpn = max(cpn, int(mincpus))
    return Req(nodes, tpn, cpt, cpn, gpn, mem, whole, walltime, arch, constraint,
               r.gpu_type or kept_type or pbs_type, unreadable, spread=total is not None,
               all_memory=r.memory_mb == 0,
               time_min=time_min, time_min_name=time_min_name,
               nodelist=_hosts(kept.get("--nodelist")),
               exclude=_hosts(kept.get("--exclude")), gres=_other_gres(kept.get("--gres")),
               consumables=_sge_asks(spec), mem_complex=_sge_memory(spec) or "h_vmem",
               node_minimums=_node_minimums(kept),
               tasks_per_socket=_whole(kept.get("--ntasks-per-socket")),
               tasks_per_core=_whole(kept.get("--ntasks-per-core")),
               spec_cores=spec_cores, spec_threads=spec_threads, spec_option=spec_option,
               overcommit=overcommit, counted_floor=counted_floor,
               gpu_mix=tuple((t, c) for t, c in mix if t is not None),
               free_tasks=r.tasks if r.tasks and r.nodes is None and r.tasks_per_node is None
               and not (total or overcommit or whole or het or mix or counted_floor
                        or kept_gpn or per_gpu or (gpn and not r.gpus_per_task)
                        or kept.keys() & {"--ntasks-per-socket", "--ntasks-per-core"})
               and cpn == cpt * tpn else 0,
               gpt=r.gpus_per_task or 0, mem_per_node=bool(r.memory_mb) and not total)


def _whole(value: str | None) -> int:
    """A kept option's whole number, 0 where it is absent or not one."""
    return int(value.strip()) if value and ascii_digits(value.strip()) else 0


# a node's minimums a Slurm job may ask (sbatch(1): they restrict node selection alone)
_MINIMUM_OPTIONS = (("--sockets-per-node", "sockets"), ("--cores-per-socket", "cores_per_socket"),
                    ("--threads-per-core", "threads_per_core"))
_B_FIELDS = ("sockets", "cores_per_socket", "threads_per_core")


def _node_minimums(kept: dict[str, str]) -> tuple[tuple[str, int, str], ...]:
    """(Node field, the least a node has of it, the option) from a Slurm job's `--tmp`
    (MB unless a unit is given), `--sockets-per-node`, `--cores-per-socket`,
    `--threads-per-core` and `-B sockets[:cores[:threads]]` (`*`: any)."""
    out: dict[str, tuple[str, int, str]] = {}
    b = kept.get("--extra-node-info", "")
    for field, value in zip(_B_FIELDS, b.split(":") if b else (), strict=False):
        if ascii_digits(value.strip()):
            out[field] = (field, int(value), f"-B {b}")
    for option, field in _MINIMUM_OPTIONS:  # the named option over -B (sbatch's order)
        if ascii_digits(value := kept.get(option, "").strip()):
            out[field] = (field, int(value), f"{option}={value}")
    if tmp := kept.get("--tmp"):
        mb = parse_mem_mb(tmp)
        if mb:
            out["tmp_disk_mb"] = ("tmp_disk_mb", mb, f"--tmp={tmp}")
    return tuple(x for x in out.values() if x[1] > 0)


def _sge_memory(spec: JobSpec) -> str | None:
    """The complex other than h_vmem a Grid Engine job asks its memory by (`-l mem_free`,
    `h_data`, `m_mem_free`: `spec.resources.memory_per_cpu_mb`), if any."""
    key = spec.metadata.get("sge_memory") if spec.source_dialect == "sge" else None
    return key if isinstance(key, str) and key != "h_vmem" else None


def _sge_asks(spec: JobSpec) -> tuple[tuple[str, float], ...]:
    """A Grid Engine job's numeric `-l NAME=VALUE` requests the model has no field for
    (`mem_free=2G`, `scratch=10G`, `licence=1`), per slot, in the complex's own units."""
    out = []
    if (key := _sge_memory(spec)) and spec.resources.memory_per_cpu_mb:  # its memory's
        out.append((key, spec.resources.memory_per_cpu_mb * 2.0**20))
    for d in spec.unknown:
        if d.dialect == "sge" and d.option.startswith("-l "):
            name, _, value = (d.value or "").partition("=")
            if name == d.option[3:] and (x := amount(value)) is not None:
                out.append((name, x))
    return tuple(out)


def _other_gres(text: str | None) -> tuple[tuple[str, int], ...]:
    """The non-GPU entries of a Slurm `--gres` (`mps:50`, `shard:2`, `nvme`): (name, count
    per node) each; an entry whose count is no number is left to sbatch."""
    out: dict[str, int] = {}
    for entry in (text or "").split(","):
        name, *rest = entry.strip().split(":")
        count = rest[-1] if rest else "1"
        if name and name != "gpu" and ascii_digits(count):
            out[name] = out.get(name, 0) + int(count)
    return tuple(out.items())


def _hosts(text: str | None) -> tuple[str, ...]:
    """A Slurm host list (`c[01-03],g01`); none for a file of names (`./hosts`), which the
    scheduler reads on its side."""
    if not text or "/" in text:
        return ()
    try:
        return tuple(dict.fromkeys(h for h in expand_hostlist(text) if h))
    except ValueError:
        return ()


def time_limit(req: Req, max_time_s: int | None) -> float | None:
    """The time limit the job runs with in a partition of `max_time_s`: its walltime, or,
    above that limit, its --time-min where that fits (Slurm 22.05 on the test bed started
    `-t 100:00:00 --time-min 0:10:00` in a partition of MaxTime 1 h with a limit of
    10 min), a PBS Pro shrink-to-fit job the limit itself (PBS sets its walltime as long
    as it may be, up to its max_walltime); None when the partition cannot take it."""
    if not req.walltime or max_time_s is None or req.walltime <= max_time_s:
        return req.walltime
    if req.time_min is not None and req.time_min <= max_time_s:
        # PBS Pro gives a shrink-to-fit job the longest walltime the queue allows
        return float(max_time_s) if req.time_min_name == "min_walltime" else req.time_min
    return None


def no_time_limit(spec: JobSpec) -> str | None:
    """The kept `--time` of a Slurm job that asks no time limit (`0`, `UNLIMITED`,
    `INFINITE`: sbatch sends INFINITE), as written; None otherwise. slurmctld holds such a
    job in a partition of a finite MaxTime (PartitionTimeLimit) for as long as it waits."""
    kept = [d for d in spec.unknown if d.dialect == "slurm" and d.option == "--time"]
    return f"--time={kept[-1].value}" if kept else None


def most_gpus(spec: JobSpec, nodes: list[Node]) -> int:
    """The most GPUs one node has (of the GPU type the job asks, when it asks one)."""
    kind = spec.resources.gpu_type or kept_slurm_gpus(spec)[0] or pbs_chunk_needs(spec)[0]
    return max((gpus_of(n, kind) for n in nodes if kind is None
                or any(gpu_matches(kind, m) for m in node_gpu_models(n))), default=0)


def partition_misses(req: Req, nodes: list[Node], site_arch: str | None,
                     words: Words = SLURM_WORDS, task: bool = False) -> str:
    """Why none of `nodes` (a partition's nodes that cannot run the job) hosts one node's
    share of it, in one phrase ("needs 4 GPUs per node, largest node has 2"); `task`: as
    `node_checks`'."""
    found, _ = node_checks(req, nodes, site_arch, whole_site=False, words=words, task=task)
    return "; ".join(found) or "no single node meets all the requirements together"


def node_checks(req: Req, nodes: list[Node], site_arch: str | None, *,
                whole_site: bool = True, words: Words = SLURM_WORDS,
                shape: str | None = None, task: bool = False) -> tuple[list[str], set[str]]:
    """Reasons no node can host one node's share of the job; names of nodes that can.
    `task`: `req` is one task of a job whose tasks go over any nodes (a node takes part if
    it holds one of them), said per task.
    `whole_site`: `nodes` are all the site's (features no node has are refused, as sbatch
    does); else a part of them (a partition's), judged node by node only. `words`: the
    site's scheduler's names; `shape`: how the job's script asks one node's share (PBS
    `select=2:ncpus=40, place=pack`), said instead of its tasks x CPUs."""
    reasons, ok = [], {n.name for n in nodes}
    if not nodes:
        return ["no nodes reported"], set()
    has = "site has" if whole_site else f"its {words.node}s have"
    node = words.node
    per = f"per task (its tasks go over any {node}s)" if task else f"per {node}"
    each: list[tuple[str, set[str]]] = []  # (what, the nodes that have it) of every check

    def check(pred: Any, reason: str, what: str = "") -> None:
        good = {n.name for n in nodes if pred(n)}
        if not good:
            reasons.append(reason)
        ok.intersection_update(good)
        each.append((what, good))

    if req.arch:
        archs = sorted({a for n in nodes if (a := node_arch(n, site_arch))})
        check(lambda n: node_arch(n, site_arch) in (None, req.arch),
              f"architecture mismatch: job needs {req.arch}, {has} {', '.join(archs)}")
    offers = ", ".join(sorted({f for n in nodes for f in n.features})) or "none"
    if req.unreadable:
        reasons.append(req.unreadable)
    expr = req.constraint
    parts = _parts(expr)
    if whole_site and expr is not None and parts == [expr] and not isinstance(expr, Feature):
        # Slurm refuses a constraint that names a feature no node of the cluster has, even
        # as an alternative (`avx2|sve` where no node has avx2)
        known = {f.lower() for n in nodes for f in n.features}
        known_archs = {node_arch(n, site_arch) for n in nodes}
        unknown = [f for f in dict.fromkeys(feature_names(expr)) if f.lower() not in known
                   and not (f.lower().startswith("arch=") and norm_arch(f[5:]) in known_archs)]
        if unknown:
            reasons.append(f"constraint '{expr.text()}' names feature(s) the site does not "
                           f"have: {', '.join(unknown)} (site offers: {offers})")
            ok.clear()
    if req.arch:  # `arch=X` is the architecture check's
        parts = [p for p in parts if not (isinstance(p, Feature) and p.name.lower()
                                          .startswith("arch=") and norm_arch(p.name[5:])
                                          == req.arch)]
    for part in parts:  # each required feature on its own, or the whole expression
        def meets(n: Node, part: Constraint = part) -> bool:
            return part_met(part, n, site_arch)
        what = f"missing feature '{_uncounted(part)}'" if isinstance(part, Feature) else \
            f"no node meets the constraint '{_uncounted(part)}'"
        reason = f"{what} ({'site offers' if whole_site else 'its nodes offer'}: {offers})"
        if part.count is not None:  # `a100*2`: that many of the job's nodes, not each one
            good = {n.name for n in nodes if meets(n)}
            if not good:
                reasons.append(reason)
            elif whole_site and len(good) < part.count:
                reasons.append(f"constraint '{part.text()}' needs {quantity(part.count, 'node')} "
                               f"with '{_uncounted(part)}', {has} {len(good)}")
            continue
        check(meets, reason, f"feature '{part.text()}'")
    def of_type(n: Node) -> int:  # its GPUs of the type asked (of a node of that type)
        return gpus_of(n, req.gpu_type) if req.gpu_type is None or any(
            gpu_matches(req.gpu_type, m) for m in node_gpu_models(n)) else 0

    if req.gpu_type and not any(of_type(n) for n in nodes):
        of_type = partial(gpus_of, kind=req.gpu_type)  # the type check says why
    max_g = max(of_type(n) for n in nodes)
    if req.gpu_type:  # model names compared across spellings (`needs.gpu_key`)
        wanted = req.gpu_type
        types = ", ".join(sorted({m for n in nodes for m in node_gpu_models(n)})) or "none"
        check(lambda n: any(gpu_matches(wanted, m) for m in node_gpu_models(n)),
              f"no GPU of type '{wanted}' ({has}: {types})", f"GPU {wanted}")
    if req.gpn:
        all_g = max(n.gpus for n in nodes)
        check(lambda n: of_type(n) >= req.gpn, "no GPUs on any node"
              if not all_g else
              # a node of several types holds more GPUs than of the type asked: say so
              f"needs {quantity(req.gpn, 'GPU')} of type '{req.gpu_type}' per {node}, largest "
              f"{node} "
              f"has {max_g} of them" if req.gpu_type and all_g > max_g else
              f"needs {quantity(req.gpn, 'GPU')} {per}, largest {node} has {max_g}",
              f"{quantity(req.gpn, 'GPU')}")
    def typed(n: Node, kind: str) -> int:  # its GPUs of that model, none of another's
        return gpus_of(n, kind) if any(gpu_matches(kind, m) for m in node_gpu_models(n)) else 0

    for kind, count in req.gpu_mix:  # GPUs of several types: each type's own count
        most = max(typed(n, kind) for n in nodes)
        check(lambda n, kind=kind, count=count: typed(n, kind) >= count,
              f"needs {quantity(count, 'GPU')} of type '{kind}' per {node} (beside its other "
              f"types), largest {node} has {most} of them", f"{quantity(count, 'GPU')} {kind}")
    for name, count in req.gres:  # a node's generic resources (its `Gres`), unknown: met
        check(lambda n, name=name, count=count: _gres_met(n, name, count),
              _gres_miss(nodes, name, count, has), f"gres {name}:{count}")
    for name, per_slot in req.host_consumables():  # Grid Engine host consumables (hc:)
        offered = [n for n in nodes if name in (n.consumables_total or {})]
        if offered:  # a host consumable here: a host must have enough of it in all
            need = req.consumable_need(name, per_slot)
            most = max((n.consumables_total or {})[name] for n in offered)
            how = "once a job" if name in req.job_wide else \
                f"{quantity(req.cpn, 'slot')} x {amount_text(per_slot)}"
            # a default it does not ask binds only the hosts that have the complex
            absent = math.inf if name in req.implicit else 0.0

            def holds(n: Node, name: str = name, need: float = need,
                      absent: float = absent) -> bool:
                return (n.consumables_total or {}).get(name, absent) >= need
            if req.on_master_only(name):  # one host must hold it, the master's
                if not any(holds(n) for n in nodes):
                    reasons.append(f"needs {amount_text(need)} of host consumable {name} "
                                   f"on its master host (once a job), the most a host has "
                                   f"is {amount_text(most)}")
                continue
            check(holds, f"needs {amount_text(need)} of host consumable {name} per host "
                  f"({how}), the most a host has is {amount_text(most)}",
                  f"{name} {amount_text(need)}")
    split = f" ({shape})" if shape else f" ({req.tpn} {words.tasks} x {req.cpt} " \
        f"{words.cpus})" if req.tpn > 1 and req.cpt > 1 and not req.overcommit else ""
    if req.spec_option:  # specialized cores or threads: the rest of each node is the job's
        best = max(nodes, key=req.usable_cpus)
        check(lambda n: req.usable_cpus(n) >= req.cpn,
              f"needs {req.cpn} {words.cpus} per {node}{split}, {req.spec_option} leaves "
              f"the largest {node} {req.usable_cpus(best)} of its {best.cpus}",
              f"{req.cpn} {words.cpus}")
    else:
        check(lambda n: n.cpus >= req.cpn,
              f"needs {req.cpn} {words.cpus} {per}{split}, largest {node} has "
              f"{max(n.cpus for n in nodes)}", f"{req.cpn} {words.cpus}")
    if req.mem:
        max_m = max(n.memory_mb for n in nodes)
        check(lambda n: not n.memory_mb or n.memory_mb >= req.mem,
              f"needs {req.mem} MB memory {per}, largest {node} has {max_m} MB",
              f"{req.mem} MB memory")
    for field, least, option in req.node_minimums:
        known = [v for n in nodes if (v := getattr(n, field)) is not None]
        what = _MINIMUM_WORDS[field]
        check(lambda n, f=field, least=least: getattr(n, f) is None or getattr(n, f) >= least,
              f"needs {least} {what} ({option}), the most a {node} has is "
              f"{max(known, default=0)}", f"{least} {what}")
    if req.tasks_per_socket or req.tasks_per_core:
        limit = ", ".join(f"--ntasks-per-{w}={x}" for w, x in (
            ("socket", req.tasks_per_socket), ("core", req.tasks_per_core)) if x)
        most = max((c for n in nodes if (c := req.task_cap(n)) is not None), default=None)
        check(lambda n: (c := req.task_cap(n)) is None or c >= req.tpn,
              f"needs {quantity(req.tpn, 'task')} a {node}, {limit} lets the most a {node} has "
              f"take {most}", f"{quantity(req.tpn, 'task')} ({limit})")
    if not reasons and not ok:
        # each need is met somewhere, never all on one node: say where each one is
        where = [f"{what} on {_few(good)}" for what, good in each
                 if what and len(good) < len(nodes)]
        reasons.append("no single node meets all the requirements together"
                       + (f" ({'; '.join(where)})" if where else ""))
    return reasons, ok


_MINIMUM_WORDS = {"sockets": "sockets a node", "cores_per_socket": "cores a socket",
                  "threads_per_core": "threads a core",
                  "tmp_disk_mb": "MB of temporary disk a node"}


def amount_text(x: float) -> str:
    """A complex's amount as written back: whole GiB or MiB where it is a memory size."""
    for unit, size in (("G", 1024**3), ("M", 1024**2)):
        if x >= size and x % size == 0:
            return f"{int(x // size)}{unit}"
    return f"{x:g}"


def with_complexes(req: Req, complexes: dict[str, SgeComplex] | None,
                   consumable_here: Collection[str] = (), gpu_complex: str | None = None
                   ) -> Req:
    """`req` as a Grid Engine site's consumables (`qconf -sc`) take it: a shortcut asked
    (`mf`) is its complex (`mem_free`); a complex of consumable JOB or HOST is asked once;
    a consumable with a default the job does not ask is taken at its default. The job's
    memory (`-l h_vmem`, or the `h_data`/`mem_free` it asks instead, per slot) and GPUs
    (`-l gpu=N`, read as the job's N) are taken as their complexes say too: memory of
    consumable JOB or HOST once, not times the slots (so is a mem_free that is no
    consumable: a host's load value); a GPU complex of consumable YES N per slot, N times
    the slots. Of a job of several hosts, h_vmem or a GPU complex of consumable JOB where
    it is a host or queue consumable here (`consumable_here`) is its master task's host's
    alone (sge_complex(5)): asked of no other host."""
    if not complexes:
        return req
    own: list[tuple[str, float]] = []
    mem, gpn = req.mem, req.gpn
    if req.mem and req.mem_complex in complexes:  # h_vmem, or the mem_free/h_data it asks
        slot_mb = req.mem / max(req.cpn, 1)
        if req.mem_complex == "h_vmem":  # the others are among its consumables already
            own.append(("h_vmem", slot_mb * 2**20))
        if complexes[req.mem_complex].per != "slot":
            mem = ceil(slot_mb)
        if req.mem_complex == "h_vmem" and _master_alone(req, complexes["h_vmem"],
                                                         consumable_here):
            mem = 0
    elif req.mem and req.mem_complex == "mem_free":
        # not a consumable here: a host's load value, its free memory compared with the
        # amount asked once (complex(5)), not times the slots
        mem = ceil(req.mem / max(req.cpn, 1))
    gpu = next((n for n in ((gpu_complex,) if gpu_complex else GPU_COMPLEXES)
                if n in complexes), None)
    if req.gpn and gpu is not None:
        own.append((gpu, float(req.gpn)))
        if complexes[gpu].per == "slot":
            gpn = req.gpn * max(req.cpn, 1)
        if _master_alone(req, complexes[gpu], consumable_here):
            gpn = 0
    by_short = {c.shortcut: c.name for c in complexes.values() if c.shortcut}
    asked = {by_short.get(n, n): x for n, x in req.consumables}
    implicit = {c.name: c.default for c in complexes.values()
                if c.default > 0 and c.name not in asked and c.name not in _READ_ELSEWHERE
                and c.name != gpu_complex}
    asked |= implicit
    every = set(asked) | {n for n, _ in own}
    return replace(req, consumables=tuple(asked.items()), implicit=frozenset(implicit),
                   job_wide=frozenset(n for n in every
                                      if n in complexes and complexes[n].per != "slot"),
                   master_only=frozenset(n for n in every
                                         if n in complexes and complexes[n].per == "job"),
                   own=tuple(own), mem=mem, gpn=gpn)


def _master_alone(req: Req, cx: SgeComplex, consumable_here: Collection[str]) -> bool:
    """Whether complex `cx`, asked by a job of several hosts, binds its master's host
    alone: of type JOB and consumable at the site (a host's or a queue's)."""
    return cx.per == "job" and req.nodes > 1 and cx.name in consumable_here


def complex_notes(before: Req, after: Req, complexes: dict[str, SgeComplex] | None
                  ) -> list[str]:
    """What the site's complexes changed in the job's memory or GPUs a host gives it."""
    out = []
    own = dict(after.own)
    if after.mem != before.mem and after.on_master_only("h_vmem") and not after.mem:
        out.append(f"h_vmem is a consumable of type JOB here (qconf -sc): the job's "
                   f"{amount_text(own['h_vmem'])} is taken once, on its master task's host "
                   f"alone (the other {after.nodes - 1} of its hosts need none)")
    elif after.mem != before.mem:
        name = after.mem_complex
        kind = f"a consumable of type {complexes[name].per.upper()}" if name in (
            complexes or {}) else "no consumable (a host's load value)"
        out.append(f"{name} is {kind} here (qconf -sc): the job's "
                   f"{amount_text(after.mem * 2**20)} is taken once, not times its "
                   f"{quantity(before.cpn, 'slot')}")
    gpus = {n for n, _ in after.own} - {"h_vmem", "h_data", "mem_free", "m_mem_free"}
    gpu = next((n for n in own if n in gpus), None)
    if after.gpn != before.gpn and gpu is not None and after.on_master_only(gpu) \
            and not after.gpn:
        out.append(f"-l {gpu}={before.gpn}: {gpu} is a consumable of type JOB here (qconf "
                   f"-sc): its master task's host alone gives them (the other "
                   f"{after.nodes - 1} of its hosts need none)")
    elif after.gpn != before.gpn:
        name = next(n for n, _ in after.own if n in gpus)
        out.append(f"-l {name}={before.gpn}: {name} is a consumable of type YES here (qconf "
                   f"-sc): Grid Engine gives {before.gpn} per slot, {after.gpn} for the "
                   f"{quantity(before.cpn, 'slot')} on a host")
    return out


# complexes a job asks its GPUs by (`-l gpu=N`)
GPU_COMPLEXES = ("gpu", "gpus", "ngpus")


# complexes the job's own fields stand for (h_vmem is its memory, gpu its GPUs, slots
# its CPUs): checked as those, not again as consumables
_READ_ELSEWHERE = ("h_vmem", "gpu", "gpus", "ngpus", "slots")


def consumables_short(req: Req, nodes: list[Node]) -> set[str]:
    """The hosts whose host consumables left now (`qhost -F` hc:) are less than the job
    asks of one host: it starts there only once running jobs give some back."""
    out: set[str] = set()
    for name, per_slot in req.host_consumables():
        need = req.consumable_need(name, per_slot)
        short = {n.name for n in nodes if name in (n.consumables_left or {})
                 and (n.consumables_left or {})[name] < need}
        # a JOB consumable of a job of several hosts: its master takes it, on any host
        # with enough left; only when none has do those short of it hold the job
        if req.on_master_only(name) and any(
                (n.consumables_left or {}).get(name, 0.0) >= need for n in nodes):
            continue
        out |= short
    return out


def global_need(req: Req, name: str, amount: float) -> float:
    """What the whole job takes of a global consumable: once (JOB, HOST), else per slot
    times all its slots."""
    return amount if name in req.job_wide else amount * max(req.cpn, 1) * max(req.nodes, 1)


def global_misses(req: Req, total: dict[str, float] | None) -> list[str]:
    """Why a job asks more of a Grid Engine global consumable than the cluster has."""
    return [f"needs {amount_text(need)} of global consumable {name}, the cluster has "
            f"{amount_text(total[name])}" for name, x in req.consumables
            if name in (total or {}) and (need := global_need(req, name, x)) > (total or {})[name]]


def global_wait(req: Req, snap: SiteSnapshot, now: datetime, part_max: dict[str, float]
                ) -> tuple[float, list[str]]:
    """Seconds until enough of each Grid Engine global consumable the job asks is left:
    the running jobs holding it give it back as they end (by their time limits), with
    a note for each it waits for; 0 where enough is left now."""
    left = snap.global_consumables_left or {}
    held = snap.global_consumables_held or {}
    wait, notes = 0.0, []
    for name, x in req.consumables:
        need = global_need(req, name, x)
        if name not in left or left[name] >= need:
            continue
        ends = sorted((end, got[name]) for j in snap.running
                      if (got := held.get(j.native_id, {})).get(name)
                      and (end := expected_end(j, now, part_max)) is not None)
        have, at = left[name], None
        for end, given in ends:
            have += given
            if have >= need:
                at = end
                break
        if at is None:
            continue  # not freed by the jobs known: the totals' check says why
        wait = max(wait, at)
        notes.append(f"global consumable {name}: {amount_text(left[name])} left, it needs "
                     f"{amount_text(need)}: it waits for running jobs to give it back "
                     f"(+{at / 3600:.1f} h)")
    return wait, notes


def expected_end(job: Any, now: datetime, part_max: dict[str, float]) -> float | None:
    """Seconds after now a running job ends by its time limit (now if past it)."""
    limit = job.walltime_s or part_max.get(job.partition or "")
    if not limit or job.started_at is None:
        return None
    started = job.started_at if job.started_at.tzinfo else job.started_at.replace(
        tzinfo=now.tzinfo)
    return max(0.0, (started - now).total_seconds() + limit)


def _gres_met(n: Node, name: str, count: int) -> bool:
    """Whether node `n` holds `count` of gres `name` for one job: MPS comes from one GPU
    (Slurm: a job's MPS share on a node is taken from a single GPU, each GPU holding an
    equal part of the node's MPS count)."""
    if n.gres is None:
        return True
    have = n.gres.get(name, 0)
    return (have // max(n.gpus, 1) if name == "mps" else have) >= count


def _gres_miss(nodes: list[Node], name: str, count: int, has: str) -> str:
    known = [n for n in nodes if n.gres is not None]
    if not any(n.gres and n.gres.get(name) for n in known):
        names = sorted({g for n in known for g in n.gres or {}})
        return f"no node has gres '{name}' ({has}: {', '.join(names) or 'none'})"
    if name == "mps":
        most = max((n.gres or {}).get(name, 0) // max(n.gpus, 1) for n in known)
        return (f"needs mps:{count} from one GPU, the most one GPU has is {most} (a node's "
                "MPS count is shared equally by its GPUs)")
    most = max((n.gres or {}).get(name, 0) for n in known)
    return f"needs {name}:{count} per node, the most a node has is {most}"


def _few(names: set[str], at_most: int = 4) -> str:
    listed = sorted(names)
    return ", ".join(listed[:at_most]) + (f" and {len(listed) - at_most} more"
                                          if len(listed) > at_most else "")


def _uncounted(part: Constraint) -> str:
    """An expression's text without its `*N` count."""
    return (Feature(part.name) if isinstance(part, Feature) else
            Op(part.items, part.ops, part.kind)).text()


def part_met(part: Constraint, node: Node, site_arch: str | None) -> bool:
    return part.matches({f.lower() for f in node.features}, node_arch(node, site_arch))


def bracket_parts(req: Req) -> list[Op]:
    """The and-ed terms of the job's constraint that are `[a|b|c]`: every node of the job
    meets the same one of them (sbatch's "matching OR")."""
    expr = req.constraint
    terms = [expr] if isinstance(expr, Op) and expr.kind == "[" else list(expr.items) \
        if isinstance(expr, Op) and set(expr.ops) == {"&"} else []
    return [t for t in terms if isinstance(t, Op) and t.kind == "[" and set(t.ops) == {"|"}
            and all(i.count is None for i in t.items)]


def counted_parts(req: Req) -> list[Constraint]:
    """The and-ed terms of the job's constraint that carry a count (`a100*2`): that many
    of its nodes must meet them, the others need not (sbatch: "at least N of those
    nodes")."""
    return [t for t in _parts(req.constraint) if t.count is not None]


def counted_nodes(req: Req, nodes: Iterable[Node], site_arch: str | None
                  ) -> tuple[list[set[str]], bool]:
    """The nodes that meet each counted term of the job's constraint (`h100*2`: the H100
    nodes), and whether the counts take all the job's nodes (it runs on those alone)."""
    counted = counted_parts(req)
    met = [{n.name for n in nodes if part_met(c, n, site_arch)} for c in counted]
    return met, bool(counted) and sum(c.count or 0 for c in counted) >= req.nodes


def _counted_terms(expr: Constraint) -> tuple[list[Constraint], bool]:
    """The and-ed terms of a job's constraint that carry a count, and whether each takes
    nodes of its own (`[a*2&b*1]`, Slurm's multiple counts) or they may share them
    (`a*2&b*1`)."""
    terms = list(expr.items) if isinstance(expr, Op) and expr.count is None and \
        set(expr.ops) == {"&"} else [expr]
    return [t for t in terms if t.count is not None], isinstance(expr, Op) and expr.kind == "["


def counts_node_need(expr: Constraint) -> int:
    """The fewest nodes a job's feature counts take: their sum where each has nodes of its
    own (`[a*2&b*1]`: 3), else the largest (`a*2&b*1`: 2); 0 without counts."""
    counted, disjoint = _counted_terms(expr)
    counts = [t.count or 0 for t in counted]
    return (sum(counts) if disjoint else max(counts)) if counts else 0


def _range_most(node_range: str | None) -> int | None:
    """The largest node count a kept `-N MIN-MAX` (or sizes `1,4,8`) allows; None for a
    placeholder or a form not read here."""
    if node_range is None or not re.fullmatch(r"[0-9,:-]+", node_range):
        return None
    highs = [int(x) for x in re.findall(r"(?:^|,|-)([0-9]+)", node_range.split(":")[0])]
    return max(highs) if highs else None


def counts_beyond_nodes(expr: Constraint, nodes: int | None, node_range: str | None
                       ) -> str | None:
    """Why a job's feature counts ask more nodes than its `-N` allows, else None. Slurm
    gives each count its own nodes (`[a*2&b*1]`: disjoint, so their sum; `a*2&b*1`: they
    may share, so the largest) and raises the job's node count to them, which past the
    most it asks fails: sbatch refuses it ("Requested node configuration is not
    available") or, tried later, holds it for good (reason BadConstraints). Counts adding
    up to fewer nodes are fine: the others need not meet them. Without `-N` nothing caps
    them; `node_range` is a kept `-N MIN-MAX` (or sizes `1,4,8`), its largest the cap."""
    counted, disjoint = _counted_terms(expr)
    if not counted or nodes is None:
        return None
    most, asked = nodes, f"-N {nodes}"
    if node_range is not None:
        if (highest := _range_most(node_range)) is None:
            return None  # a placeholder, or a form not read here: left to the scheduler
        most, asked = max(highest, nodes), f"-N {node_range}"
    need = counts_node_need(expr)
    if need <= most:
        return None
    largest = max(counted, key=lambda t: t.count or 0)
    how = (f"its counts add up to {quantity(need, 'node')} "
           f"({' + '.join(t.text() for t in counted)}, each on nodes of its own)" if disjoint
           else f"it needs {quantity(need, 'node')}" if largest is expr
           else f"'{largest.text()}' alone needs {quantity(need, 'node')}")
    cap = f" (at most {most})" if node_range is not None else ""
    return (f"constraint '{expr.text()}': {how}, more than the job's {asked}{cap}; Slurm "
            "refuses it at submission (Requested node configuration is not available) or "
            f"holds it for good (BadConstraints). Ask -N {need}, or counts "
            f"{'adding up to' if disjoint else 'of'} at most {most}")


def _parts(expr: Constraint | None) -> list[Constraint]:
    """The terms checked one by one: each feature of a plain `a&b&c`, or of Slurm's
    multiple counts `[a*2&b*4]` (so many nodes with each), else the whole."""
    plain = [expr] if isinstance(expr, Feature) else list(expr.items) \
        if isinstance(expr, Op) and expr.count is None and (
            set(expr.ops) == {"&"} and expr.kind != "[" or set(expr.ops) <= {"&"}
            and expr.kind == "[" and all(i.count is not None for i in expr.items)) else []
    return plain if all(isinstance(p, Feature) for p in plain) and plain else \
        [expr] if expr is not None else []


def pack_chunks(chunks: list[tuple[Req, set[str]]], nodes: list[Node], how: str,
                apart: list[bool] | None = None) -> int | None:
    """Whether PBS chunks of different shapes find hosts among `nodes`: each chunk a Req
    (its `nodes` the count) with the names of the nodes it may use; `how` "free" (chunks
    share a host while its CPUs, GPUs and memory last), "scatter" (a host each) or "pack"
    (one host for all); `apart`: for each chunk, whether its pieces take distinct hosts
    (an LSF term's span[ptile]). The number of hosts used (first fit, largest chunks
    first), None when they do not fit."""
    used, _ = first_fit(chunks, nodes, how, apart)
    return used


def first_fit(chunks: list[tuple[Req, set[str]]], nodes: list[Node], how: str,
              apart: list[bool] | None = None) -> tuple[int | None, int | None]:
    """`pack_chunks`' hosts used, and the index of the chunk (in `chunks`) that found no
    host left when they do not fit (None: they fit, or place=pack and no host holds all)."""
    by_name = {n.name: n for n in nodes}
    items = sorted(((r, i) for i, (r, _) in enumerate(chunks) for _ in range(r.nodes)),
                   key=lambda x: (x[0].gpn, x[0].cpn, x[0].mem), reverse=True)
    if how == "pack":
        need = (sum(r.cpn for r, _ in items), sum(r.gpn for r, _ in items),
                sum(r.mem for r, _ in items))
        hosts = set(by_name).intersection(*(chunks[i][1] for _, i in items))
        return (1, None) if any(_room(by_name[h], need) for h in hosts) else (None, None)
    left = {h: [n.cpus, n.gpus, n.memory_mb or 0] for h, n in by_name.items()}
    used: list[str] = []
    held: dict[int, set[str]] = {}  # the hosts each chunk's pieces hold
    for r, i in items:
        mine = held.setdefault(i, set())
        allowed = chunks[i][1] - (mine if apart and apart[i] else set())
        fresh = [h for h in sorted(left) if h in allowed and h not in used]
        order = fresh if how == "scatter" else [h for h in used if h in allowed] + fresh
        host = next((h for h in order if left[h][0] >= r.cpn and left[h][1] >= r.gpn
                     and (not by_name[h].memory_mb or left[h][2] >= r.mem)), None)
        if host is None:
            return None, i
        left[host][0] -= r.cpn
        left[host][1] -= r.gpn
        left[host][2] -= r.mem
        mine.add(host)
        if host not in used:
            used.append(host)
    return len(used), None


def _room(n: Node, need: tuple[int, int, int]) -> bool:
    return n.cpus >= need[0] and n.gpus >= need[1] and (not n.memory_mb or
                                                         n.memory_mb >= need[2])


def array_span_said(spec: JobSpec) -> list[str]:
    """The explanation's word on a job array (one phrase, or none): START and FINISH are its
    first task's; under a throttle `%K` its tasks run K at a time, so all of them take at
    least ceil(tasks / K) walltimes back to back."""
    if spec.array is None or (tasks := count_array_tasks(spec.array.expression)) is None \
            or tasks < 2:
        return []
    said = f"array of {tasks} tasks (START and FINISH are its first task's"
    limit = spec.array.expression.partition("%")[2].strip()
    wall = spec.resources.walltime_s
    if ascii_digits(limit) and 0 < int(limit) < tasks:
        rounds = ceil(tasks / int(limit))
        said += f"; %{limit}: {limit} at a time, {rounds} rounds"
        if wall:
            said += f", all done at least {hms(rounds * wall)} after it starts"
    return [said + ")"]


def array_too_large(spec: JobSpec, snap: SiteSnapshot) -> str | None:
    """Why sbatch refuses the job's array on this Slurm site (an index at or above the
    site's MaxArraySize); None when it does not or the limit is not known."""
    size = snap.max_array_size
    if spec.array is None or size is None:
        return None
    top = highest_array_index(spec.array.expression)
    if top is None or top < size:
        return None
    return (f"array index {top} (--array={spec.array.expression}) is above this site's "
            f"largest, {size - 1} (MaxArraySize={size} in `scontrol show config`): sbatch "
            f"refuses it; keep its indexes within 0-{size - 1} (several arrays, each job "
            "adding its own offset to $SLURM_ARRAY_TASK_ID)")
