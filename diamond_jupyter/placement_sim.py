"""Backfill simulation: when would a probe job start on a site, given its live queue?

Pure code over a `SiteSnapshot`. Times are float seconds after `now` (t = 0).

Model (EASY backfill, node-level; Slurm's reservations for the probe):
- Every usable node has CPUs and GPUs; the snapshot's `cpus_allocated`/`gpus_allocated`
  are the state at t = 0. Running jobs give them back at started_at + walltime (else
  now + walltime/2, else now + 1 h; a job past its walltime as Slurm plans it, `Overrun`) on
  their
  `node_list` nodes (else on the nodes of their partition that carry unexplained
  allocations). Calibrated (`recalibrated`), a running job ends when the finished jobs of
  its class that ran at least as long as it has ended: its runtime distribution
  conditioned on the time it has already survived, never past its walltime. Allocations
  no running job explains (other users, filtered queues) are released after
  `UNKNOWN_HOLD_S`.
- Pending jobs start in list (= priority) order. The first one that cannot start gets a
  reservation (its shadow time); later jobs, and always the probe, may start now if they
  fit and either end before the shadow time or leave enough nodes for the reservation.
  A pending job carrying a scheduler `estimated_start` is not started before it, so the
  simulation follows the scheduler's own plan where it has one; except at t = 0 for a job
  pending only for priority or resources (`_STALE_OK` reasons): if it fits what is free
  now it starts (or backfills) now, ahead of the probe. Its estimate was planned from
  walltimes before those resources came free (jobs end early), and the scheduler's next
  cycle, seconds away, starts it; honouring the estimate would hand the probe resources
  that queued work takes first. With a calibration, such a job is held no later than the
  calibrated plan starts it (`held_no_later`): later, the room the running jobs free
  early is its, not the probe's.
- Reservation "plan" (Slurm, whose backfill reserves for every job it tests): the probe may
  start early only where it delays none of the jobs ahead as the scheduler plans them,
  with walltimes (`Demand.limit`, `SimState.planned`), however early the calibrated jobs
  end (`_Plan`). A job waiting for priority or resources alone whose scheduler estimate
  falls inside the backfill window, and which the plan has no room for then, keeps its
  slot there all the same, on the nodes of the most CPUs free then: Slurm's backfill
  reserved that start for it (StartTime), with room the view does not show (node counts
  a moment apart from the queue, a running job's node not known), and backfills no job
  into it; the probe starts early only in a gap that ends by then (`_Plan._kept_hosts`).
  A later plan keeps it on the same nodes. Once its estimate has come and the view still
  has no room for it, it starts when those nodes free up (or where room comes sooner):
  its slot moves to the next time they fit it, and no probe is planned into that room
  (`_Plan._kept_again`).
  Every such job of the plan keeps its slot, as Slurm reserves for every job it tests;
  an array record's once, for its next task (squeue gives the record one StartTime).
- No backfill ("fifo", Slurm's sched/builtin): jobs start in priority order; one that
  cannot start holds its partition's nodes from the jobs behind it (`_fifo_earliest`).
- A job of tasks without a node count (`Demand.spread`: Slurm `-n N` alone, Grid Engine's
  `$fill_up` and `$round_robin`) fits where its nodes hold its tasks together, so many on
  each (`tasks_held`), the nodes with the most room first, at most its partition's node
  limit (`spread_over`): 5 CPUs free on one node and 3 on another start 8 one-CPU tasks.
  In a plan each node counts the tasks it holds through the walltime (`_Plan._hosts`;
  the probe's plan at an event recounts only the nodes each reservation takes,
  `_planned_start`), and the slot is the first step of any of its nodes where enough do
  (`_first_spread`).
- Memory is checked by the caller at t = 0, not tracked over time: a node whose free memory
  holds fewer of the probe's tasks than its free CPUs keeps the rest of them until its last
  running job ends (`build_state`'s `task_fit`), and a spread job's tasks on a node are at
  most what its whole memory holds (`Demand.most`).
- A record of a job array's waiting tasks (Slurm `123_[5-100%4]`, Grid Engine `9.6-10:1`,
  read by `array_record`; PBS's `123[]` by its counts, `JobStatus.array_waiting`, queued
  or begun) stands for each of its tasks, each of the record's size and walltime, in the
  record's place (Slurm gives an array's tasks consecutive priorities). They run in lanes
  (`array_lanes`): at most as many at once as the record has tasks, as the nodes it may
  use hold at once, as its throttle (`%k`, `max_run_subjobs`, Grid Engine's `-tc`, LSF's
  `%k`, the last two carried by the record: `JobStatus.array_limit`) allows (k less the
  array's tasks running; the lanes past that start when those tasks' walltimes end,
  whatever the record's reason), and
  `MAX_ARRAY_LANES`. A lane is one demand running its share of the tasks back to back, as
  the array's next task takes the room its last one freed ahead of lower-priority work.
  So a huge range (`_[1-100000]`) simulates as a bounded number of demands, and only the
  tasks that could run at once are kept apart. A lane waiting for room on a busy site
  keeps its share (its tasks are not taken over by lanes that started): the array ends a
  little late. LSF lists a throttled array's waiting elements one by one (`500[7]`): they
  count together, in the first one's place (`_gathered`).

Cost: every event (a job end or a scheduler-estimated start) is handled once. At each
event the blocked head's shadow time is computed once per head (walking the sorted
release list from now, touching only released nodes) and at most `BACKFILL_DEPTH`
waiting jobs plus the probe are tested. A test is O(1) when the job cannot fit (total
free CPUs, or a job of the same shape already failed since the last release), else
O(nodes with free CPUs). So about O((jobs + events) * BACKFILL_DEPTH) plus
O(jobs * nodes_free): 10,000 queued jobs simulate in about half a second on 4 nodes
and about one second on 1,000 nodes (CPython 3.11).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from math import ceil
from typing import Literal

from .calibration import AT_LONGEST, RatioFn, SiteCalibration, ratio_fn, waits_on_itself
from .dialects.outputs_common import array_record, job_hosts
from .model import OVER_TIME_UNLIMITED, JobState, JobStatus, Node, SiteSnapshot
from .placement_deps import (
    Dependency,
    DependencyGate,
    Term,
    chain_depths,
    gate_for,
    ids_of,
    parse_dependency,
    singleton_parents,
)
from .placement_fit import aware, node_returning, node_usable, seen_out_at, timeouts_by_node

_ELEMENT = re.compile(r"[0-9]+\[[0-9]+\]")  # LSF's record of one array element, `500[7]`


@lru_cache(maxsize=8192)
def _hosts(node_list: str | None) -> tuple[str, ...]:
    """Host names of a node list (any scheduler's form); cached: every simulation of a
    snapshot expands the same."""
    return tuple(job_hosts(node_list))



WHOLE = -1  # per-node CPU demand meaning "the whole node" (exclusive, or size unknown)
RESERVED = -1  # a plan's free CPUs and GPUs on a node a waiting job has reserved: none fits
DEFAULT_DURATION_S = 3600.0  # a job with no walltime and no partition limit
UNKNOWN_HOLD_S = 3600.0  # unexplained allocations are assumed to end after this
# the native id's start of the job a reservation's hold on a node is read as (Slurm's and
# PBS's reservations, `placement_resv`, `placement_pbs_resv`)
RESERVATION_HOLD = "reservation-hold-"
OVERDUE_S = 30.0  # a running job past its walltime is being killed (Slurm's KillWait)
MIN_LEFT_S = 1.0  # a running job expected to end now still frees its nodes a moment later
BACKFILL_DEPTH = 100  # waiting jobs tested for backfill per event (like bf_max_job_test)
WHOLE_PLAN_REACHES = 4  # the probe's own plan: this many times `_plan_reach`'s jobs ahead
PLAN_BUDGET = 2000  # nodes x jobs ahead a Slurm plan (`_Plan`) reserves for, per event
PLAN_MIN_DEPTH = 4  # jobs ahead it reserves for however big the site
# nodes x (jobs waiting)^2, about the work of planning every waiting job at every event:
# up to this, Slurm's scheduling is played out whole (`_planned_earliest`)
PLAN_WORK = 200_000
MAX_ARRAY_LANES = 1000  # demands standing for one array record's waiting tasks, at most

# reasons that wait for nothing else (flux's: fluxion's sched.reason_pending)
_STALE_OK = ("", "none", "priority", "resources", "insufficient resources")


def held_reason(reason: str | None) -> bool:
    """A waiting job's reason that keeps it back whatever is free (held, a dependency, a
    begin time, a per-job limit it is over, minutes of usage used up, a request its
    partition or association can never run): it takes nothing before the jobs behind it."""
    return bool(reason) and (waits_on_itself(reason)
                             or bool(_NEVER_LIMIT.match(reason))
                             or bool(NEVER_AS_ASKED.fullmatch(reason))
                             or bool(OUT_OF_SERVICE.fullmatch(reason)))


# Slurm reasons of a job that starts nowhere until an admin acts or that is about to be
# removed (job_reason_codes): its partition DOWN or INACTIVE (PartitionDown,
# PartitionInactive), its --deadline past reach (DeadLine: cancelled); or that waits for
# its reservation to begin and then runs inside it (Reservation), on nodes the reservation
# keeps from other jobs: it takes no node before the jobs behind it
OUT_OF_SERVICE = re.compile(
    r"\s*(?:PartitionDown|PartitionInactive|DeadLine|Reservation)\s*")


# Slurm reasons of a job that never starts as asked (job_reason_codes): a time limit or node
# count past its partition's, features no node has, a QOS or account not valid or not
# allowed there; it waits until changed, and the schedulers pass over it
NEVER_AS_ASKED = re.compile(r"\s*(?:PartitionTimeLimit|PartitionNodeLimit|BadConstraints"
                            r"|InvalidQOS|InvalidAccount|AccountNotAllowed)\s*")


# Slurm limits a waiting job is over by itself (QOSMaxCpuPerJobLimit, QOSMaxGRESPerNode,
# QOSMinCpuNotSatisfied...) or that usage in minutes has used up (AssocGrpCPUMinutesLimit,
# not RunMinutes): not freed by any job's end
_NEVER_LIMIT = re.compile(r"\s*(?:QOS|Assoc)(?:\w*Per(?:Job|Node)|Min)"
                          r"|\s*(?:QOS|Assoc)Grp\w*?(?<!Run)Minutes")
# Slurm limits the running jobs reach (job_reason_codes): the waiting job starts once one
# of those its limit counts ends (its user's, its account's, its QOS's), not before
_LIMIT_REACHED = re.compile(r"\s*(?:QOS|Assoc)(?:Grp|Max)\w*|\s*Max\w*Per(?:Account|User)")


def limit_reached_until(j: JobStatus, running: list[tuple[JobStatus, float]]
                        ) -> float | None:
    """When a waiting Slurm job held by a limit its running jobs reach (its reason: a QOS
    or association group or per-user/per-account limit) may start: once the first running
    job counted by that limit ends (its user's for a per-user limit, its QOS's for a QOS
    group limit, else its account's; any job's where none is seen). `running`: each running
    job with its end in seconds from now. None for another reason."""
    counted = limit_counted(j, running)
    return min(end for _, end in counted) if counted else None


def limit_counted(j: JobStatus, running: list[tuple[JobStatus, float]]
                  ) -> list[tuple[JobStatus, float]]:
    """The running jobs (with their ends) whose first end frees the limit a waiting Slurm
    job is held by (see `limit_reached_until`); empty for another reason."""
    reason = (j.reason or "").strip()
    if not _LIMIT_REACHED.match(reason) or held_reason(reason):
        return []
    if "PerUser" in reason:
        same = [(r, end) for r, end in running if r.user and r.user == j.user]
    elif reason.startswith("QOSGrp"):
        same = [(r, end) for r, end in running if r.qos and r.qos == j.qos]
    else:
        same = [(r, end) for r, end in running if r.account and r.account == j.account]
    return same or list(running)


# a Slurm reason code (one word; the other dialects' reasons are phrases): a Slurm job
# held by another than Dependency waits on its dependency and on that too
_SLURM_REASON = re.compile(r"\w*")


def dependency_gate(j: JobStatus, snap: SiteSnapshot, running: list[tuple[JobStatus, float]],
                    now: datetime, waiting: set[str], listed: list[JobStatus], ahead: int
                    ) -> DependencyGate | None:
    """For a job waiting on a dependency (Slurm: reason Dependency, squeue's field read;
    the other schedulers: the dependency their dialects read where nothing else holds the
    job): its parents found (`placement_deps`), running (`running`: with their ends) or
    waiting (`waiting`: the ids the queue's waiting jobs answer to; `listed`, the waiting
    jobs: a singleton's namesakes submitted before it, wherever listed; `ahead`: its place
    among them, which Slurm's singleton does not go by). None for another job, a field not
    read, or a parent not seen: nothing known of when it comes."""
    reason = (j.reason or "").strip()
    if reason != "Dependency" and _SLURM_REASON.fullmatch(reason) \
            or (dep := parse_dependency(j.dependency)) is None:
        return None
    if "singleton" in dep.kinds():
        same = singleton_parents(j, snap.running, listed)
        if same:
            dep = Dependency(tuple(Term("afterany", same) if t.kind == "singleton" else t
                                   for t in dep.terms), dep.every)
        elif dep.every and len(dep.terms) > 1:
            # no namesake: singleton met, the job waits on its other terms
            dep = Dependency(tuple(t for t in dep.terms if t.kind != "singleton"), True)
        else:
            return None  # met alone (or joined by '?'): freed at slurmctld's next pass
    starts = {r.native_id: (aware(r.started_at) - now).total_seconds()
              for r, _ in running if r.started_at}
    return gate_for(j, dep, running, starts, waiting, listed)


def _after_ends(ids: tuple[str, ...], every: bool, ends: dict[str, float]) -> float | None:
    """When the jobs of `ids` free a job waiting for them: the last of their `ends` (by
    native id) when it waits for every one, else the first; None when none is known."""
    known = [ends[i] for i in ids if i in ends]
    if not known:
        return None
    return max(known) if every else min(known)


@dataclass(eq=False)
class Demand:
    """A job to place in the simulation: `nodes` nodes, each with cpus/gpus free."""

    nodes: int
    cpus: int  # per node, or WHOLE
    gpus: int  # per node
    duration: float
    eligible: list[int]  # node indices it may use
    not_before: float = 0.0  # scheduler-estimated start (seconds after now)
    sched: bool = False  # carries a scheduler estimate
    done: bool = False
    now_ok: bool = False  # may start at t = 0 whatever its estimate (see the module doc)
    partition: str | None = None  # of the queued job it stands for (calibration)
    job_cpus: int | None = None
    native_id: str | None = None  # the queued job it stands for
    start: float | None = None  # when the simulation started it
    limit: float | None = None  # what the scheduler plans with (walltime); else `duration`
    held: list[tuple[int, int, int]] | None = None  # (node, cpus, gpus) the simulation gave it
    tasks: int = 1  # array tasks it runs back to back (`duration` is all of theirs)
    floor: float = 0.0  # not before this, calibrated or not: the begin time its user set
    # a lane its array's throttle holds: the array's running tasks (native ids) and which of
    # their ends, soonest first, frees its turn (a calibrated view moves those ends)
    after_tasks: tuple[tuple[str, ...], int] | None = None
    # running jobs (native ids) whose first end frees the limit it waits for, and False
    # (the first, not every one): a calibrated view moves them
    after_jobs: tuple[tuple[str, ...], bool] | None = None
    # the dependency it waits on (Slurm): its parents, running or waiting (the simulation
    # sets `not_before` when those start: `_Sim.link`), and its start but for them
    gate: DependencyGate | None = None
    gate_floor: float = 0.0
    # tasks over any of its nodes (Slurm `-n N` without `-N`, Grid Engine `$fill_up` and
    # `$round_robin`): `cpus`/`gpus` are then each task's, `nodes` the most nodes it may
    # take; 0: exactly `nodes` nodes of `cpus`/`gpus` each
    spread: int = 0
    shares: dict[int, int] | None = None  # node -> its tasks where it was last found room
    # a spread job's tasks each node's memory holds when all of it is free (node -> tasks;
    # a node not named: memory does not bound them there, or it is not known)
    most: dict[int, int] | None = None

    @property
    def need(self) -> int:
        """What must be found free together: its tasks where spread, else its nodes."""
        return self.spread or self.nodes

    @property
    def planned(self) -> float:
        return self.duration if self.limit is None else self.limit

    def ready(self, t: float) -> bool:
        return self.not_before <= t or (self.now_ok and t == 0.0)


def tasks_held(d: Demand, n: int, fc: int, fg: int) -> int:
    """How many of a spread d's tasks fit in fc CPUs and fg GPUs of node n (a plan's
    RESERVED: none), at most what its memory holds (`Demand.most`)."""
    if fc <= 0:
        return 0
    held = fc // max(d.cpus, 1)
    if d.gpus:
        held = min(held, fg // d.gpus)
    return held if d.most is None else min(held, d.most.get(n, held))


def spread_over(d: Demand, room: list[tuple[int, int]]) -> dict[int, int] | None:
    """Where a spread d's tasks go, from `room` (node, tasks it holds): the nodes holding
    the most first (lowest index on ties), so the fewest nodes, at most `d.nodes`; node ->
    its tasks. None: they do not fit."""
    shares: dict[int, int] = {}
    left = d.spread
    for held, n in sorted((-k, n) for n, k in room if k > 0)[: d.nodes]:
        shares[n] = min(-held, left)
        left -= shares[n]
        if not left:
            return shares
    return None


def spread_words(d: Demand, names: list[str]) -> str:
    """`8 tasks over a01 (5) and a02 (3)`: where a spread d's tasks went."""
    parts = [f"{names[n]} ({k})" for n, k in sorted((d.shares or {}).items())]
    over = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{d.spread} task{'s' if d.spread != 1 else ''} over {over}"


@dataclass(frozen=True)
class Overrun:
    """When a running job already past its time limit gives its nodes back, as Slurm's
    backfill plans it (select plugin's `_guess_job_end`): after the rest of the
    OverTimeLimit it may still run (its partition's, else the site's) and KillWait; under
    an UNLIMITED one, a whole time limit from now (nothing tells its end); with none, or
    once it is used up, within KillWait (it is being killed). Other schedulers: KillWait's
    default, `OVERDUE_S`."""

    by_partition: tuple[tuple[str, float], ...] = ()  # partition -> its OverTimeLimit (s)
    site: float = 0.0  # the site's OverTimeLimit (s)
    kill_wait: float = OVERDUE_S

    @staticmethod
    def of(snap: SiteSnapshot) -> Overrun:
        timeouts = snap.node_timeouts or {}
        return Overrun(tuple((p.name, p.over_time_s) for p in snap.partitions
                             if p.over_time_s is not None),
                       timeouts.get("OverTimeLimit", 0.0),
                       timeouts.get("KillWait", OVERDUE_S))

    def allowed(self, partition: str | None) -> float:
        """The OverTimeLimit (s, OVER_TIME_UNLIMITED) the jobs of `partition` run under."""
        return next((s for name, s in self.by_partition if name == partition), self.site)

    def after(self, partition: str | None, w: float, left: float) -> float:
        """Seconds from now to the end of a job of walltime `w` `-left` s past it."""
        over = self.allowed(partition)
        if over == OVER_TIME_UNLIMITED:
            return max(w, MIN_LEFT_S)
        return left + over + self.kill_wait if over > 0 and left + over > 0 else self.kill_wait


NO_OVERRUN = Overrun()


@dataclass
class SimState:
    names: list[str]
    cap_c: list[int]
    cap_g: list[int]
    free_c: list[int]
    free_g: list[int]
    releases: list[tuple[float, int, int, int, int]] = field(default_factory=list)
    # per release: (walltime, elapsed or None, partition, cpus) of the running job it ends;
    # None for allocations no running job explains
    owners: list[tuple[float | None, float | None, str | None, int | None] | None] = \
        field(default_factory=list)
    # per release (by its sequence number): when the scheduler expects it, from walltimes;
    # None: the release times themselves are the walltime-based ones
    planned: dict[int, float] | None = None
    # per release of a running job (by its sequence number): that job's native id
    job_ids: dict[int, str] = field(default_factory=dict)
    # per release of a suspended job (Slurm PreemptMode=SUSPEND): the releases of the jobs
    # that suspended it, whose last end resumes it (its own end is that far later)
    resume_after: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # per suspended job (native id): when it resumes (None: not known, suspended by hand)
    # and ends, as planned by time limits (seconds from now)
    suspended: dict[str, tuple[float | None, float]] = field(default_factory=dict)
    # how far ahead of each event a plan keeps slots for waiting jobs (Slurm's bf_window):
    # a job whose slot starts later keeps none, and a job behind it may take its room
    window: float = math.inf
    # each partition's usable nodes (indices): what a blocked job holds back from the jobs
    # behind it on a site without backfill (`_fifo_earliest`)
    partition_nodes: dict[str, frozenset[int]] = field(default_factory=dict)
    # how long running jobs past their time limit still run (Slurm's OverTimeLimit)
    overrun: Overrun = field(default_factory=lambda: Overrun())

    def index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.names)}


def _member_idx(idx: dict[str, int], members: dict[str, list[str]], part: str | None,
                usable: list[bool]) -> list[int]:
    names: list[str] = []
    for p in filter(None, (part or "").split(",")):
        names += members.get(p, [])
    cand = [idx[n] for n in dict.fromkeys(names)] if names else list(range(len(idx)))
    return [i for i in cand if usable[i]]


def build_state(snap: SiteSnapshot, nodes: list[Node], members: dict[str, list[str]],
                now: datetime, part_max: dict[str, float], ratio: RatioFn | None = None,
                ended: Collection[str] = (), in_reservation: bool = False,
                probe_mem: int = 0, short: Collection[str] = (),
                short_until: dict[str, str] | None = None,
                task_fit: tuple[int, int, dict[str, int]] | None = None) -> SimState:
    """Node capacities, free resources at t = 0 and the release times of running jobs.

    `ratio` (calibration): a running job is expected to end after that share of its
    walltime, not at the walltime; never later than the walltime. `ended`: native ids of
    running jobs known to have ended already (the engine's own, whose end it heard before
    the scheduler's view dropped them): their resources are free now. `in_reservation`:
    the probe is a job of a reservation (reserved nodes are open to it). `probe_mem`: the
    memory a node must have free for the probe (MB): a node whose running jobs hold more of
    its memory (Slurm AllocMem) than leaves that keeps its free CPUs and GPUs until the
    last of those jobs ends (the snapshot does not say which job holds how much). `short`:
    nodes held so for another resource the probe needs more of than is left (Grid Engine
    host consumables); `short_until`: of those, the ones held only until the running job
    named (native id) ends, not the last one there (Grid Engine queue consumables, which
    that job's end gives enough of back). `task_fit`: a spread probe's CPUs and GPUs a
    task and, by node name, how many of its tasks the node's free memory holds now: the
    free CPUs and GPUs past those tasks' are held so too (`-n 8 --mem-per-cpu=2G` takes 2
    of a node's 8 free CPUs while 4 GB of its memory is free)."""
    seen = seen_out_at(snap.read_at or snap.taken_at, now)
    own_timeouts = timeouts_by_node(snap.partitions, snap.node_timeouts)
    back = [node_returning(n, in_reservation, own_timeouts.get(n.name, snap.node_timeouts), now,
                           seen) for n in nodes]
    usable = [node_usable(n, in_reservation) or b is not None for n, b in zip(nodes, back,
                                                                             strict=True)]
    cap_c = [n.cpus if u else 0 for n, u in zip(nodes, usable, strict=True)]
    cap_g = [n.gpus if u else 0 for n, u in zip(nodes, usable, strict=True)]
    alloc_c, alloc_g = [], []
    for n, cc, cg in zip(nodes, cap_c, cap_g, strict=True):
        full = "alloc" in n.state.lower() and not n.cpus_allocated
        alloc_c.append(cc if full else min(n.cpus_allocated, cc))
        alloc_g.append(cg if full and not n.gpus_allocated else min(n.gpus_allocated, cg))
    idx = {n.name: i for i, n in enumerate(nodes)}
    expl_c, expl_g = [0] * len(nodes), [0] * len(nodes)
    rel: list[tuple[float, int, int, int, int]] = []
    owners: list[tuple[float | None, float | None, str | None, int | None] | None] = []
    planned: dict[int, float] | None = {} if ratio is not None else None
    seq_of: dict[tuple[str, int], int] = {}  # (running job, node) -> its release's seq
    job_ids: dict[int, str] = {}  # release's seq -> its running job's native id
    started: dict[int, JobStatus] = {}  # release's seq -> its job, of the jobs not suspended
    resume_after: dict[int, tuple[int, ...]] = {}
    suspended: dict[str, tuple[float | None, float]] = {}
    tiers = {q.name: q.priority_tier for q in snap.partitions}
    overrun = Overrun.of(snap)
    # jobs suspended last: the jobs that suspended them are read first
    for j in sorted(snap.running, key=_suspended):
        w = j.walltime_s or part_max.get(j.partition or "")
        # the time it ran (squeue %M: a suspension not counted, exact over several), else
        # the time since it started
        elapsed = float(j.time_used_s) if j.time_used_s is not None else \
            (now - aware(j.started_at)).total_seconds() if j.started_at else None
        gone = j.native_id in ended
        hosts = [idx[h] for h in _hosts(j.node_list) if h in idx]
        by = _suspended_by(j, hosts, rel, started, tiers) if _suspended(j) and not gone else ()
        resume = planned_resume = 0.0
        if by:  # it runs again when they end; its limit counts only the time it ran
            resume = max(rel[k][0] for k in by)
            planned_resume = max((planned or {}).get(k, rel[k][0]) for k in by)
            suspended_at = max(aware(started[k].started_at) for k in by  # type: ignore[arg-type]
                               if started[k].started_at)
            if j.time_used_s is None:  # it ran until the first of them started
                elapsed = max((suspended_at - aware(j.started_at)).total_seconds(), 0.0)
        end = 0.0 if gone else resume + _release_after(w, elapsed, j.partition, j.cpus, ratio,
                                                       overrun)
        by_limit = planned_resume + _release_after(w, elapsed, j.partition, j.cpus, None,
                                                   overrun) \
            if planned is not None and not gone else end
        by_hand = _suspended(j) and not by and not gone
        if by_hand:  # it resumes at a time not known: held (the safe side) for all its
            # limit left from now, what it ran (%M) counted where read
            end = by_limit = _release_after(w, float(j.time_used_s or 0), j.partition,
                                            j.cpus, None, overrun)
        if _suspended(j) and not gone:
            suspended[j.native_id] = (None if by_hand else planned_resume, by_limit)
        k = len(hosts) or max(1, j.nodes or 1)
        if not hosts:  # attribute to nodes whose allocations are not yet explained
            cand = _member_idx(idx, members, j.partition, usable)
            cand.sort(key=lambda i: expl_c[i] - alloc_c[i])
            hosts = cand[:k]
        # an ended job's end is known: no calibration moves it (`recalibrated`)
        owner = None if gone or by_hand or j.native_id.startswith(RESERVATION_HOLD) \
            else (w, elapsed, j.partition, j.cpus)
        for h in hosts:
            c = min(ceil(j.cpus / k), cap_c[h]) if j.cpus else cap_c[h]
            g = min(ceil(j.gpus / k), cap_g[h]) if j.gpus else (0 if j.cpus else cap_g[h])
            # a suspended job's CPUs and GPUs are those its suspenders run on: they pass to
            # it when they end (what they do not cover it holds besides)
            taken_c, taken_g = _hand_over(rel, [x for x in by if rel[x][2] == h], c, g)
            expl_c[h] += c - taken_c
            expl_g[h] += g - taken_g
            owners.append(owner)
            seq = len(rel)
            if planned is not None:
                planned[seq] = by_limit
            seq_of[(j.native_id, h)] = seq
            job_ids[seq] = j.native_id
            if by:
                resume_after[seq] = by
            elif not _suspended(j):
                started[seq] = j
            rel.append((end, seq, h, c, g))
    last: dict[int, tuple[float, int]] = {}  # node -> (end, seq) of its last release
    by_host: dict[int, list[int]] = {}  # node -> the seqs of its running jobs' releases
    for r in rel:
        by_host.setdefault(r[2], []).append(r[1])
    _held_past_jobs(rel, by_host, job_ids, owners, planned)
    for r in rel:
        if r[0] >= last.get(r[2], (-1.0, 0))[0]:
            last[r[2]] = (r[0], r[1])
    for h in range(len(nodes)):
        alloc_c[h] = min(cap_c[h], max(alloc_c[h], expl_c[h]))
        alloc_g[h] = min(cap_g[h], max(alloc_g[h], expl_g[h]))
        lc, lg = alloc_c[h] - min(expl_c[h], alloc_c[h]), alloc_g[h] - min(expl_g[h], alloc_g[h])
        if lc or lg:
            owners.append(None)
            rel.append((UNKNOWN_HOLD_S, len(rel), h, lc, lg))
            by_host.setdefault(h, []).append(rel[-1][1])
            if last.get(h, (-1.0, 0))[0] <= UNKNOWN_HOLD_S:
                last[h] = (UNKNOWN_HOLD_S, rel[-1][1])
        n = nodes[h]
        mem_short = probe_mem and n.memory_mb and n.memory_allocated \
            and n.memory_mb - n.memory_allocated < probe_mem
        lacks = n.name in short or mem_short
        hc, hg = cap_c[h] - alloc_c[h], cap_g[h] - alloc_g[h]
        freed_by = None if mem_short or not lacks else (short_until or {}).get(n.name)
        if freed_by is not None and (freed_by, h) in seq_of:
            # held until that job ends: what other jobs there give back before is held as
            # long (a Grid Engine queue instance full of its own jobs takes none of the
            # probe's slots while another queue's job frees the host's)
            seq = seq_of[(freed_by, h)]
            end = rel[seq][0]
            for k in by_host.get(h, ()):
                if k != seq and rel[k][0] < end:
                    rel[k] = (end, k, h, rel[k][3], rel[k][4])
                    owners[k] = owners[seq]
                    if planned is not None:
                        planned[k] = max(planned.get(k, 0.0), planned.get(seq, end))
        if not lacks and task_fit and n.name in task_fit[2]:
            # its memory holds fewer of the probe's tasks than its free CPUs (GPUs) do:
            # those past them are held as below
            tasks = task_fit[2][n.name]
            hc = max(0, hc - tasks * task_fit[0])
            hg = max(0, hg - tasks * task_fit[1]) if task_fit[1] else 0
            lacks = bool(hc or hg)
        if lacks and (hc or hg):
            # its memory frees with the jobs holding it: its free CPUs and GPUs are held
            # as long (the job that ends last: calibrated as that job, when it is known)
            end, seq = last.get(h, (UNKNOWN_HOLD_S, -1))
            if freed_by is not None and (freed_by, h) in seq_of:
                seq = seq_of[(freed_by, h)]
                end = rel[seq][0]
            owners.append(owners[seq] if 0 <= seq < len(owners) else None)
            if planned is not None:
                planned[len(rel)] = planned.get(seq, end)
            rel.append((end, len(rel), h, hc, hg))
            alloc_c[h] += hc
            alloc_g[h] += hg
    for h, b in enumerate(back):
        if b is not None:
            _held_until_back(h, *b, rel, owners, planned, cap_c, cap_g, alloc_c, alloc_g)
    rel.sort()
    return SimState([n.name for n in nodes], cap_c, cap_g,
                    [c - a for c, a in zip(cap_c, alloc_c, strict=True)],
                    [g - a for g, a in zip(cap_g, alloc_g, strict=True)], rel, owners,
                    planned, job_ids, resume_after, suspended,
                    snap.bf_window_s if snap.bf_window_s else math.inf,
                    _partition_nodes(nodes, members), overrun)


def _partition_nodes(nodes: list[Node], members: dict[str, list[str]]
                     ) -> dict[str, frozenset[int]]:
    """Each partition's nodes, by their index in `nodes`."""
    idx = {n.name: i for i, n in enumerate(nodes)}
    return {p: frozenset(idx[x] for x in names if x in idx) for p, names in members.items()}


def _held_past_jobs(rel: list[tuple[float, int, int, int, int]], by_host: dict[int, list[int]],
                    job_ids: dict[int, str], owners: list, planned: dict[int, float] | None
                    ) -> None:
    """A node a reservation holds (its `RESERVATION_HOLD` job) frees nothing before that
    ends: the running jobs there that end sooner give their CPUs and GPUs back with it
    (else the node would count free while reserved)."""
    for seqs in by_host.values():
        holds = [k for k in seqs if job_ids.get(k, "").startswith(RESERVATION_HOLD)]
        if not holds:
            continue
        end = max(rel[k][0] for k in holds)
        for k in seqs:
            if rel[k][0] < end:
                rel[k] = (end, k, rel[k][2], rel[k][3], rel[k][4])
                owners[k] = None  # its end is the reservation's: no calibration moves it
                if planned is not None:
                    planned[k] = max(planned.get(k, 0.0), end)


def _suspended(j: JobStatus) -> bool:
    """Whether Slurm has suspended the running job (state SUSPENDED, squeue's S)."""
    return (j.native_state or "").upper() in ("SUSPENDED", "S")


def _suspended_by(j: JobStatus, hosts: list[int], rel: list[tuple[float, int, int, int, int]],
                  started: dict[int, JobStatus], tiers: dict[str, int | None]
                  ) -> tuple[int, ...]:
    """The releases of the running jobs that suspended `j` (Slurm PreemptMode=SUSPEND):
    on its nodes, started after it, of a partition of a higher PriorityTier where both
    tiers are known. Empty where none is seen (suspended by hand: its resumption is not
    known, its resources are held for all its limit left from now)."""
    mine = tiers.get(j.partition or "")
    out = []
    for k, other in started.items():
        if rel[k][2] not in hosts or not other.started_at or not j.started_at \
                or aware(other.started_at) < aware(j.started_at):
            continue
        theirs = tiers.get(other.partition or "")
        if mine is None or theirs is None or theirs > mine:
            out.append(k)
    return tuple(out)


def _hand_over(rel: list[tuple[float, int, int, int, int]], by: list[int], c: int, g: int
               ) -> tuple[int, int]:
    """Take up to `c` CPUs and `g` GPUs out of the releases `by` (of one node): what a
    suspended job gets back when they end. Returns what was taken."""
    taken_c = taken_g = 0
    for k in by:
        end, seq, h, rc, rg = rel[k]
        tc, tg = min(rc, c - taken_c), min(rg, g - taken_g)
        rel[k] = (end, seq, h, rc - tc, rg - tg)
        taken_c, taken_g = taken_c + tc, taken_g + tg
    return taken_c, taken_g


def _held_until_back(h: int, after: float, reboot: bool,
                     rel: list[tuple[float, int, int, int, int]], owners: list,
                     planned: dict[int, float] | None, cap_c: list[int], cap_g: list[int],
                     alloc_c: list[int], alloc_g: list[int]) -> None:
    """Node `h`, out now but back by itself (`node_returning`), takes jobs `after` seconds
    from now; one rebooted first (after its running jobs end) `after` seconds past its last
    job's end, its jobs' resources held as long. `rel` is still in sequence order."""
    back_at = planned_back = after
    if reboot:
        mine = [k for k, r in enumerate(rel) if r[2] == h]
        back_at = max((rel[k][0] for k in mine), default=0.0) + after
        if planned is not None:
            planned_back = max((planned.get(k, rel[k][0]) for k in mine), default=0.0) + after
        for k in mine:
            rel[k] = (back_at, k, h, rel[k][3], rel[k][4])
            if planned is not None:
                planned[k] = planned_back
    hc, hg = cap_c[h] - alloc_c[h], cap_g[h] - alloc_g[h]
    if hc or hg:
        owners.append(None)
        if planned is not None:
            planned[len(rel)] = planned_back
        rel.append((back_at, len(rel), h, hc, hg))
        alloc_c[h] += hc
        alloc_g[h] += hg


def preempted(st: SimState, partitions: Collection[str],
              held: Collection[str] = (), grace: Mapping[str, float] | None = None,
              exempt: float = 0.0, jobs: Mapping[str, float] | None = None) -> SimState:
    """`st` with the running jobs of `partitions` (ones the probe's partition preempts:
    Slurm's preempt/partition_prio, a lower PriorityTier whose PreemptMode is not OFF),
    and those of `jobs` (native id -> its GraceTime: preempt/qos), stopped: their CPUs and
    GPUs free at t = 0, except on the nodes `held` (named), where what they keep
    (suspended jobs' memory) leaves too little for the probe. A job stops later where
    Slurm lets it run on: its partition's GraceTime (`grace`, seconds), after it has run
    `exempt` seconds (PreemptExemptTime); never after its own end."""
    free_c, free_g = list(st.free_c), list(st.free_g)
    kept_at = {i for i, n in enumerate(st.names) if n in held}
    kept, later = [], False
    planned = dict(st.planned) if st.planned is not None else None
    for r in st.releases:
        owner = st.owners[r[1]] if r[1] < len(st.owners) else None
        by_qos = (jobs or {}).get(st.job_ids.get(r[1], ""))
        if owner is None or (owner[2] not in partitions and by_qos is None) \
                or r[2] in kept_at:
            kept.append(r)
            continue
        ran = owner[1] if owner[1] is not None else exempt  # not known: taken as past it
        stop = (by_qos if by_qos is not None else (grace or {}).get(owner[2], 0.0)) \
            + max(0.0, exempt - ran)
        if stop <= 0:
            free_c[r[2]] = min(st.cap_c[r[2]], free_c[r[2]] + r[3])
            free_g[r[2]] = min(st.cap_g[r[2]], free_g[r[2]] + r[4])
            continue
        if stop < r[0]:
            r, later = (stop, *r[1:]), True
            if planned is not None:
                planned[r[1]] = min(planned.get(r[1], stop), stop)
        kept.append(r)
    if later:
        kept.sort()
    return replace(st, free_c=free_c, free_g=free_g, releases=kept, planned=planned)


def _release_after(w: float | None, elapsed: float | None, partition: str | None,
                   cpus: int | None, ratio: RatioFn | None,
                   overrun: Overrun = NO_OVERRUN) -> float:
    """When a running job gives its resources back. Without `ratio`: at its walltime `w`.
    With it: when jobs of its class that ran at least as long as this one has ended
    (`ratio` conditioned on the elapsed share), never after the walltime. Past its
    walltime: as `overrun` says, calibrated or not."""
    if elapsed is not None and w:
        left = w - elapsed
        if left <= 0:
            return overrun.after(partition, w, left)
        share = ratio(partition, cpus, elapsed / w, w) if ratio else 1.0
        return min(max(w * share - elapsed, MIN_LEFT_S), left)
    expected = w * ratio(partition, cpus, None, w) if w and ratio else w
    return max(expected / 2 if expected else UNKNOWN_HOLD_S, MIN_LEFT_S)


def recalibrated(st: SimState, queue: list[Demand], ratio: RatioFn,
                 queued: RatioFn | None = None, own: dict[str, float] | None = None,
                 bound: bool = False) -> tuple[SimState, list[Demand]]:
    """The state and queue of `build_state`/`pending_demands` (built without a ratio) as
    they would be with `ratio` (`queued`, when given, for the queued jobs): the same nodes
    and shapes, other end times, and no scheduler estimates followed. Cheaper than building
    them again. `own`: the user's own jobs' expected runtimes (s, by native id), which
    they run instead of their class's ratio (`_own_left`); `bound`: never sooner than
    their class's ratio has them (the upper view)."""
    queued, own = queued or ratio, own or {}
    planned = st.planned if st.planned is not None else {r[1]: r[0] for r in st.releases}
    rel = []
    owners, n_owners = st.owners, len(st.owners)
    for end, seq, h, c, g in st.releases:
        o = owners[seq] if seq < n_owners else None
        if o is not None:
            w, elapsed, part, cpus = o
            end = _release_after(w, elapsed, part, cpus, ratio, st.overrun)
            mine = _own(own, st.job_ids.get(seq, "")) if own else None
            if mine is not None and (left := _own_left(mine, w, elapsed)) is not None:
                end = max(end, left) if bound else left
        rel.append((end, seq, h, c, g))
    if st.resume_after:  # a suspended job runs its rest after its suspenders' new ends
        ends = {r[1]: r[0] for r in rel}
        rel = [(end + max((ends.get(k, 0.0) for k in st.resume_after[seq]), default=0.0),
                 seq, h, c, g)
               if seq in st.resume_after else (end, seq, h, c, g)
               for end, seq, h, c, g in rel]
    rel.sort()
    new_st = SimState(st.names, st.cap_c, st.cap_g, st.free_c, st.free_g, rel, st.owners,
                      planned, st.job_ids, st.resume_after, st.suspended, st.window,
                      st.partition_nodes, st.overrun)
    new_q = []
    task_ends: dict[str, float] | None = None
    freed_at: dict[tuple[int, bool], float | None] = {}
    for d in queue:
        nb = d.floor
        if (d.after_tasks is not None or d.after_jobs is not None or d.gate is not None) \
                and task_ends is None:
            task_ends = {}
            for end, seq, *_ in rel:
                if (nid := st.job_ids.get(seq)) is not None:
                    task_ends[nid] = max(task_ends.get(nid, 0.0), end)
        if d.after_tasks is not None and task_ends is not None:
            # a throttled lane: its array's tasks' new ends
            ids, rank = d.after_tasks
            ends = sorted(task_ends.get(nid, 0.0) for nid in ids)
            nb = max(nb, ends[rank] if rank < len(ends) else 0.0)
        if d.after_jobs is not None and task_ends is not None:
            # its limit's running jobs' new ends (none of them known: the wait the
            # scheduler's view gave it); jobs held alike share their ids' tuple
            key = (id(d.after_jobs[0]), d.after_jobs[1])
            if key not in freed_at:
                freed_at[key] = _after_ends(*d.after_jobs, task_ends)
            freed = freed_at[key]
            nb = max(nb, d.not_before if freed is None else freed)
        gate = d.gate
        floor = nb
        if gate is not None and task_ends is not None:  # its running parents' new ends
            gate = gate.moved(task_ends)
            nb = max(nb, gate.at() or 0.0)
        dur = d.duration * queued(d.partition, d.job_cpus, None, d.duration / d.tasks)
        if own and d.tasks == 1 and (mine := _own(own, d.native_id or "")) is not None:
            mine = min(d.duration, max(mine, MIN_LEFT_S))
            dur = max(dur, mine) if bound else mine
        new_q.append(Demand(d.nodes, d.cpus, d.gpus, dur, d.eligible, nb, False,
                            now_ok=d.now_ok, partition=d.partition, job_cpus=d.job_cpus,
                            native_id=d.native_id, limit=d.planned, tasks=d.tasks,
                            floor=d.floor, after_tasks=d.after_tasks,
                            after_jobs=d.after_jobs, gate=gate, gate_floor=floor))
    return new_st, new_q


def _own(own: dict[str, float], native_id: str) -> float | None:
    """The user's own job's expected runtime, by its id or, for an array's task (`123_7`,
    Grid Engine's `9.3`, LSF's `500[3]`), by its array's (what the engine submitted)."""
    if (mine := own.get(native_id)) is not None or not native_id:
        return mine
    arr = array_record(native_id)
    return own.get(arr[0]) if arr else None


def _own_left(runtime: float, w: float | None, elapsed: float | None) -> float | None:
    """How long a running job of the user's own, expected to run `runtime` s, still holds
    its nodes (never past its walltime `w`); None once it has run well past that
    (`AT_LONGEST`), or past its walltime: then nothing is known of its end but its class's
    (or the kill, `OVERDUE_S`)."""
    if elapsed is None:
        return max(runtime / 2, MIN_LEFT_S)
    if elapsed > runtime * AT_LONGEST or (w and elapsed >= w):
        return None
    left = max(runtime - elapsed, MIN_LEFT_S)
    return min(left, max(w - elapsed, MIN_LEFT_S)) if w else left


View = tuple[SimState, list[Demand]]


def calibrated_views(st: SimState, queue: list[Demand], cal: SiteCalibration | None
                     ) -> tuple[View, View] | None:
    """The state and queue as `cal` predicts them (running jobs conditioned on their
    elapsed time, queued work at its class's mean ratio, the user's own jobs at their
    expected runtimes, `SiteCalibration.own_runtimes`) and as its 90% bound does (the
    upper ratios); None without samples. See `calibration`."""
    median = calibrated_view(st, queue, cal)
    upper = calibrated_view(st, queue, cal, bound=True)
    return None if median is None or upper is None else (median, upper)


def calibrated_view(st: SimState, queue: list[Demand], cal: SiteCalibration | None,
                    bound: bool = False) -> View | None:
    """One of `calibrated_views`: the predicted view, or with `bound` its 90% bound's (a
    bound is simulated for the chosen partition only: built when it is); None without
    samples."""
    own = cal.own_runtimes if cal is not None else {}
    if bound:
        upper = ratio_fn(cal, "upper")
        return None if upper is None else recalibrated(st, queue, upper, own=own, bound=True)
    median, mean = ratio_fn(cal, "median"), ratio_fn(cal, "mean")
    return None if median is None else recalibrated(st, queue, median, mean, own)


def held_no_later(queue: list[Demand], starts: dict[str, float]) -> list[Demand]:
    """`queue` (following the scheduler's estimates) with each job that waits only for
    priority or resources (`Demand.now_ok`) held by its estimate no later than `starts`
    (by native id: its start in the calibrated plan, `queue_starts`). Its estimate was
    planned from walltimes; where the running jobs end sooner, the scheduler's next cycles
    start it sooner, in the room that opens, which a walltime plan still holding it would
    leave to a lower-priority probe. The same list when no hold moves."""
    out, moved = [], False
    for d in queue:
        s = starts.get(d.native_id) if d.sched and d.now_ok and d.native_id else None
        if s is not None and s < d.not_before:
            d, moved = replace(d, not_before=max(s, 0.0)), True
        out.append(d)
    return out if moved else queue


def hold_horizon(queue: list[Demand]) -> float:
    """The latest estimate `held_no_later` may move: a calibrated start at or after it
    moves none, so the play-out giving the starts (`queue_starts`) may stop there."""
    return max((d.not_before for d in queue if d.sched and d.now_ok and d.native_id),
               default=0.0)


def whole_node_partitions(snap: SiteSnapshot) -> set[str]:
    """The Slurm partitions that give every job whole nodes (OverSubscribe=EXCLUSIVE): a
    job waiting there takes each of its nodes whole, whatever CPUs it asks."""
    return {p.name for p in snap.partitions
            if (p.oversubscribe or "").upper().startswith("EXCLUSIVE")}


def pending_demands(snap: SiteSnapshot, st: SimState, members: dict[str, list[str]],
                    now: datetime, part_max: dict[str, float], ratio: RatioFn | None = None
                    ) -> list[Demand]:
    """The pending queue as demands, in priority (list) order; held jobs are skipped. A
    record of an array's waiting tasks stands for each task (`array_lanes`).

    `ratio` (calibration): each job runs that share of its walltime, and the scheduler's
    start estimates, planned from walltimes, are not followed."""
    idx = st.index()
    arrays_running = _arrays_running(snap, st)
    usable = [c > 0 for c in st.cap_c]
    biggest = max(st.cap_c, default=0) or 1
    most_gpus = max(st.cap_g, default=0)
    out: list[Demand] = []
    shared: dict[tuple[str | None, int, int], list[int]] = {}
    # by reason: (held, waiting for nothing but priority or resources); a queue has few
    reasons: dict[str | None, tuple[bool, bool]] = {}
    limited: list[tuple[JobStatus, float]] | None = None  # running jobs and their ends
    same_ids: dict[tuple[str, ...], tuple[str, ...]] = {}
    by_name = {n.name: n for n in snap.nodes} \
        if any("ReqNodeNotAvail" in (j.reason or "") for j in snap.pending) else {}
    # the ids the waiting jobs answer to, for a dependency on one of them
    waiting = {i for j in snap.pending for i in ids_of(j.native_id)} \
        if any(j.dependency for j in snap.pending) else set()
    listed = snap.pending if waiting else []  # a singleton's namesakes among them
    gates: dict[str, DependencyGate] = {}
    whole_parts = whole_node_partitions(snap)
    for j in _gathered(snap.jobs):
        arr = _waiting_tasks(j)
        if (arr[1] == 0) if arr else j.state != JobState.PENDING:
            continue  # running, or an array record with no task waiting
        held, now_ok = reasons.get(j.reason) or reasons.setdefault(j.reason, (
            held_reason(j.reason),
            (j.reason or "").strip().lower() in _STALE_OK))
        begins = begins_in(j, now) if held else None
        if limited is None and (not held or begins is None):
            limited = [(r, _release_after(
                r.walltime_s or part_max.get(r.partition or ""),
                (now - aware(r.started_at)).total_seconds() if r.started_at else None,
                r.partition, r.cpus, ratio, st.overrun)) for r in snap.running]
        gate = dependency_gate(j, snap, limited or [], now, waiting, listed, 0) \
            if held and begins is None and j.dependency else None
        if held and begins is None and gate is None \
                or not held and waits_for_nodes_out(j, by_name, snap.node_timeouts):
            continue
        k = j.nodes or (ceil(j.cpus / biggest) if j.cpus else 1)
        if j.gpus and most_gpus and j.gpus > k * most_gpus:
            # GPUs asked per job or per task (`--gpus=8`) over more nodes than squeue's
            # count for a waiting job (its least): as many as they take
            k = ceil(j.gpus / most_gpus)
        cpus = ceil(j.cpus / k) if j.cpus else (WHOLE if j.nodes else 1)
        if whole_parts and j.partition and whole_parts.issuperset(j.partition.split(",")):
            cpus = WHOLE  # its partition gives every job whole nodes
        gpus = ceil(j.gpus / k) if j.gpus else 0
        shape = (j.partition, cpus, gpus)
        elig = shared.get(shape)
        if elig is None:  # one list per shape: the simulation caches by its identity
            elig = shared[shape] = [
                i for i in _member_idx(idx, members, j.partition, usable)
                if (cpus == WHOLE or st.cap_c[i] >= cpus) and st.cap_g[i] >= gpus]
        if len(elig) < k:
            continue  # can never start here: it blocks nobody
        planned = j.estimated_start if ratio is None else None
        nb = (aware(planned) - now).total_seconds() if planned else 0.0
        if limited is None:
            limited = [(r, _release_after(
                r.walltime_s or part_max.get(r.partition or ""),
                (now - aware(r.started_at)).total_seconds() if r.started_at else None,
                r.partition, r.cpus, ratio, st.overrun)) for r in snap.running]
        after_jobs = None
        if counted := limit_counted(j, limited):  # not before its limit frees
            ids = tuple(r.native_id for r, _ in counted)
            after_jobs = (same_ids.setdefault(ids, ids), False)  # one tuple a set of jobs
            ends = {r.native_id: end for r, end in limited}
            nb, now_ok = max(nb, _after_ends(*after_jobs, ends) or 0.0), False
        if begins is not None:
            nb, now_ok = max(nb, begins), False
        floor = nb
        if gate is not None:  # not before its running parents allow (waiting ones: the sim)
            if (freed := gate.at()) == math.inf:
                continue  # it waits for a parent to fail: parents are taken to succeed
            nb, now_ok = max(nb, freed or 0.0), False
            gates[j.native_id] = gate
        dur = j.walltime_s or part_max.get((j.partition or "").split(",")[0]) \
            or DEFAULT_DURATION_S
        limit = float(dur)
        if ratio is not None:
            dur *= ratio(j.partition, j.cpus, None, limit)
        running_tasks = arrays_running.get(arr[0], []) if arr is not None else []
        lanes = [(1, 0.0)] if arr is None else array_lanes(
            arr[1], arr[2], [end for end, _ in running_tasks],
            _at_once(st, elig, k, cpus, gpus))
        ids = tuple(nid for _, nid in running_tasks if nid is not None)
        free = None if arr is None or arr[2] is None else max(arr[2] - len(running_tasks), 0)
        corr = gate is not None and "aftercorr" in gate.dependency.kinds()
        for lane, (tasks, after) in enumerate(lanes):
            lane_gate, lane_nb = gate, nb
            if corr and gate is not None and (lane or tasks > 1):
                # task by task: each of the lane's tasks after its parent task's end
                lane_gate = replace(gate, rank=lane, stride=len(lanes), lane_tasks=tasks,
                                    task_s=float(dur))
                lane_nb = max(nb, lane_gate.at() or 0.0)
            # a lane its throttle holds (`after`) waits for the array's running tasks,
            # whatever its reason says
            out.append(Demand(k, cpus, gpus, float(dur) * tasks, elig,
                              max(lane_nb, after, 0.0),
                              planned is not None, now_ok=after <= 0 and now_ok,
                              partition=j.partition, job_cpus=j.cpus, native_id=j.native_id,
                              limit=limit * tasks, tasks=tasks, floor=begins or 0.0,
                              after_tasks=(ids, lane - free) if after > 0 and free is not None
                              and len(ids) == len(running_tasks) else None,
                              after_jobs=after_jobs, gate=lane_gate, gate_floor=floor))
    if any(g.queued for g in gates.values()):
        out = _chained(out, gates)
    return out


def _chained(queue: list[Demand], gates: dict[str, DependencyGate]) -> list[Demand]:
    """`queue` without the jobs whose chain of waiting parents cannot be followed (a
    cycle, deeper than `placement_deps.MAX_CHAIN`, a parent left out of the queue)."""
    answers: dict[str, list[str]] = {}
    for d in queue:
        for pid in ids_of(d.native_id or ""):
            if d.native_id not in answers.setdefault(pid, []):
                answers[pid].append(d.native_id or "")
    kept = chain_depths({i: g for i, g in gates.items() if g.queued}, answers)
    return [d for d in queue if d.gate is None or not d.gate.queued or d.native_id in kept]


_FLUX_BEGIN = re.compile(r"dependency: begin-time=[0-9.]+")  # its one dependency


def begins_in(j: JobStatus, now: datetime) -> float | None:
    """For a job waiting for the begin time its user set (Slurm: reason BeginTime,
    `--begin`; Flux: its one dependency `begin-time=`, `--begin-time`): the seconds until
    then (squeue's StartTime of such a job is its begin time; the Flux dialect reads it
    as the estimate), from when it takes its place in the queue by priority; None for
    another job, or a begin time not printed."""
    reason = (j.reason or "").strip()
    if reason != "BeginTime" and not _FLUX_BEGIN.fullmatch(reason) \
            or j.estimated_start is None:
        return None
    return max((aware(j.estimated_start) - now).total_seconds(), 0.0)


_UNAVAILABLE = re.compile(r"\s*ReqNodeNotAvail,\s*UnavailableNodes:(\S+)")


def unavailable_nodes(j: JobStatus) -> list[str]:
    """The nodes a waiting Slurm job names as unavailable (`ReqNodeNotAvail,
    UnavailableNodes:n[05-06]`): nodes it needs that take no job now."""
    m = _UNAVAILABLE.match(j.reason or "")
    return list(job_hosts(m.group(1))) if m else []


def waits_for_nodes_out(j: JobStatus, nodes: dict[str, Node],
                        timeouts: dict[str, float] | None = None) -> bool:
    """Whether a waiting job waits for nodes out until an admin acts (its unavailable
    nodes, `nodes` by name, all down, drained or failed, none coming back by itself; a
    node in a reservation is not out: it ends): it can start nowhere else, so it holds
    back no job behind it."""
    out = unavailable_nodes(j)
    return bool(out) and all(
        (n := nodes.get(h)) is not None and not node_usable(n, True)
        and node_returning(n, True, timeouts) is None for h in out)


def array_lanes(tasks: int, limit: int | None, running_ends: list[float], at_once: int
                ) -> list[tuple[int, float]]:
    """How an array record's `tasks` waiting tasks run (see the module doc): one
    (tasks run back to back, start no sooner than) per lane. `limit`: its throttle `%k`;
    `running_ends`: when the array's running tasks end (walltimes, soonest first);
    `at_once`: how many of its tasks the nodes it may use hold together."""
    width = min(tasks, max(at_once, 1), MAX_ARRAY_LANES, limit or tasks)
    width = max(width, 1)
    free = width if limit is None else max(limit - len(running_ends), 0)
    out = []
    for i in range(width):
        after = 0.0 if i < free else \
            (running_ends[i - free] if i - free < len(running_ends) else 0.0)
        out.append((tasks // width + (i < tasks % width), after))
    return out


def probe_lanes(st: SimState, probe: Demand, tasks: int, limit: int | None) -> list[Demand]:
    """A new job array of `tasks` tasks of `probe`'s shape as the lanes it runs in, as a
    queued array's (`array_lanes`): at most `limit` (its `%k` throttle) and as many as the
    nodes it may use hold together, each lane its tasks back to back, most tasks first."""
    return [replace(probe, duration=count * probe.duration, tasks=count, done=False,
                    start=None, held=None)
            for count, _ in array_lanes(tasks, limit, [], _at_once(
                st, probe.eligible, probe.nodes, probe.cpus, probe.gpus))]


def _waiting_tasks(j: JobStatus) -> tuple[str, int, int | None] | None:
    """A queue record's waiting array tasks: (the array's id, how many, its throttle), from
    the record's counts (PBS `123[]`, running or not; LSF's waiting elements gathered by
    `_gathered`) or its id (`array_record`); the throttle from the id (Slurm `%k`), else
    as the record carries it (Grid Engine `-tc`, LSF `%k`); None for a plain job's
    record."""
    if j.array_waiting is not None:
        arr = array_record(j.native_id)
        return (arr[0] if arr else j.native_id), j.array_waiting, j.array_limit
    if j.state != JobState.PENDING or not j.native_id \
            or (arr := array_record(j.native_id)) is None:
        return None
    return arr if arr[2] is not None else (arr[0], arr[1], j.array_limit)


def _gathered(jobs: list[JobStatus]) -> list[JobStatus]:
    """The queue with the waiting elements of each throttled array listed one by one (LSF:
    `500[7]`, `500[8]` ..., each carrying its array's limit) as one record of them all, in
    the first one's place (`array_waiting`): their lanes share the throttle."""
    counts: dict[str, int] = {}
    for j in jobs:
        if j.array_limit and j.array_waiting is None and j.state == JobState.PENDING \
                and (arr := array_record(j.native_id)) and _ELEMENT.fullmatch(j.native_id):
            counts[arr[0]] = counts.get(arr[0], 0) + arr[1]
    if not counts:
        return jobs
    out, placed = [], set()
    for j in jobs:
        arr = array_record(j.native_id) if j.native_id else None
        if arr is None or arr[0] not in counts or j.state != JobState.PENDING \
                or not _ELEMENT.fullmatch(j.native_id):
            out.append(j)
        elif arr[0] not in placed:
            placed.add(arr[0])
            out.append(j.model_copy(update={"array_waiting": counts[arr[0]]}))
    return out


def _arrays_running(snap: SiteSnapshot, st: SimState
                    ) -> dict[str, list[tuple[float, str | None]]]:
    """The running tasks of each job array (by the array's id): when each ends as the
    state plans it (walltimes), soonest first, with its native id; a task whose nodes are
    not known, at 0; one only counted (PBS's `array_running`, no id), halfway through its
    walltime."""
    out: dict[str, list[tuple[float, str | None]]] = {}
    tasks = []  # (a running task's record, its array's id, how many tasks it stands for)
    for j in snap.running:
        if j.array_running:
            out.setdefault(j.native_id, []).extend(
                [((j.walltime_s or 0) / 2, None)] * j.array_running)
        elif j.native_id and (arr := array_record(j.native_id)) is not None:
            tasks.append((j.native_id, arr[0], arr[1]))
            out.setdefault(arr[0], [])
    if tasks:  # when each running job ends: only where an array's tasks run
        ends: dict[str, float] = {}
        for end, seq, *_ in st.releases:
            nid = st.job_ids.get(seq)
            if nid is not None:
                end = st.planned.get(seq, end) if st.planned is not None else end
                ends[nid] = max(ends.get(nid, 0.0), end)
        for nid, array, count in tasks:
            out[array].extend([(ends.get(nid, 0.0), nid if count == 1 else None)] * count)
    for v in out.values():
        v.sort(key=lambda x: x[0])
    return out


def _at_once(st: SimState, elig: list[int], nodes: int, cpus: int, gpus: int) -> int:
    """How many jobs of one shape (`nodes` nodes, `cpus`/`gpus` per node) the nodes
    `elig` hold together when empty."""
    if nodes > 1 or cpus == WHOLE:
        return len(elig) // nodes
    return sum(min(st.cap_c[i] // max(cpus, 1),
                   st.cap_g[i] // gpus if gpus else st.cap_c[i]) for i in elig)


class _Sim:
    def __init__(self, st: SimState) -> None:
        self.cap_c, self.cap_g = st.cap_c, st.cap_g
        self.free_c, self.free_g = list(st.free_c), list(st.free_g)
        self.rel = list(st.releases)
        self.window = st.window
        self.plan = dict(st.planned) if st.planned is not None else {}  # seq -> walltime end
        self.rp = 0
        self.seq = len(self.rel)
        self.tot = sum(self.free_c)
        self.avail = {n for n, c in enumerate(self.free_c) if c > 0}  # nodes with free CPUs
        self.failed: set[tuple[int, ...]] = set()  # shapes that did not fit now
        self.sets: dict[int, frozenset[int]] = {}
        self.released = False
        # for the plans (`_Plan`), made when the first is: per node, the releases still to
        # come (seq -> end, cpus, gpus), and its free CPUs and GPUs over time as the last
        # plan found them before any reservation (`plan_base`), made again only for a node
        # a release or a start has changed since (`_changed`)
        self._pending: dict[int, dict[int, tuple[float, int, int]]] | None = None
        self._bases: dict[int, tuple[list[float], list[int], list[int]]] = {}
        self._changed: set[int] = set()
        # the nodes a release or a start changed since the last plan of `_planned_start`
        # (its `_PlanMemory` reads and clears them)
        self.touched: set[int] = set()
        # dependencies on waiting jobs (`link`): parent id -> the jobs waiting on it, and
        # the demands standing for it; the times a started parent lets a job start
        self._children: dict[str, list[Demand]] = {}
        self._parents: dict[str, list[Demand]] = {}
        self.gate_wakes: list[float] = []
        # a parent's waiting tasks' ends, soonest first, by how many of its lanes started
        self._ends: dict[str, tuple[int, list[float]]] = {}
        # waiting job -> the nodes its slot at its scheduler estimate was last kept on
        # without room in the plan (`_Plan._kept_hosts`): past that estimate it still
        # waits for them (`_Plan._kept_again`)
        self.kept: dict[Demand, list[int]] = {}

    def link(self, wait: list[Demand]) -> None:
        """Follow the dependencies of `wait`'s jobs on jobs waiting among them: each such
        job may not start (`not_before` infinite) until its parents have started in this
        simulation, then from when its dependency says (`DependencyGate.at`). A parent not
        among them (behind the probe) never frees it here."""
        for d in wait:
            if d.gate is not None and d.gate.queued:
                d.not_before, d.now_ok = math.inf, False
                for pid in d.gate.queued:
                    self._children.setdefault(pid, []).append(d)
        if not self._children:
            return
        for d in wait:
            for pid in ids_of(d.native_id or ""):
                if pid in self._children:
                    self._parents.setdefault(pid, []).append(d)
        for kids in self._children.values():
            for c in kids:
                self._gate(c)

    def _gate(self, c: Demand) -> None:
        """Set waiting job c's earliest start from what its parents have done so far."""
        got = c.gate.at(self._when) if c.gate is not None else None
        if got is not None and got < math.inf:
            c.not_before = max(c.gate_floor, got)
            bisect.insort(self.gate_wakes, c.not_before)

    def _when(self, event: str, pid: str, rank: int) -> float | None:
        """When the waiting jobs standing for parent `pid` start (the first), end (the
        last: None until every one has started) or end the first task of their lane of
        `rank` (in the order they started; the last lane's beyond); None: not yet."""
        ds = self._parents.get(pid, [])
        started = [d for d in ds if d.start is not None]
        if not started:
            return None
        if event == "start":
            return min(d.start for d in started)  # type: ignore[type-var]
        if event == "first_end":
            return self._task_end(pid, ds, started, rank)
        if len(started) < len(ds):
            return None
        return max(d.start + d.duration for d in started)  # type: ignore[operator]

    def _task_end(self, pid: str, ds: list[Demand], started: list[Demand], rank: int
                  ) -> float | None:
        """When the `rank`-th of parent `pid`'s waiting tasks ends (the last beyond them):
        each lane runs its tasks back to back, so under a throttle (`%N`: N lanes) task
        N+1 starts when the first ends. None while a lane still to start could end one
        sooner (no sooner than the latest start and a task)."""
        known = self._ends.get(pid)
        if known is None or known[0] != len(started):
            ends = sorted(d.start + (m + 1) * d.duration / d.tasks  # type: ignore[operator]
                          for d in started for m in range(d.tasks))
            if len(started) < len(ds):
                soonest = max(d.start for d in started) + min(  # type: ignore[type-var]
                    d.duration / d.tasks for d in ds if d.start is None)
                ends = [e for e in ends if e <= soonest]
            known = self._ends[pid] = (len(started), ends)
        ends = known[1]
        if rank < len(ends):
            return ends[rank]
        return ends[-1] if ends and len(started) == len(ds) else None

    def fits(self, d: Demand, n: int, fc: int, fg: int) -> bool:
        if d.cpus == WHOLE:
            return fc == self.cap_c[n] > 0 and fg == self.cap_g[n]
        return fc >= d.cpus and fg >= d.gpus

    def count(self, d: Demand, n: int, fc: int, fg: int) -> int:
        """What node n with fc/fg free gives toward `d.need`: its tasks, or 1 if it fits."""
        return tasks_held(d, n, fc, fg) if d.spread else int(self.fits(d, n, fc, fg))

    def use(self, d: Demand, n: int) -> tuple[int, int]:
        if d.spread:
            k = (d.shares or {}).get(n, 0)
            return d.cpus * k, d.gpus * k
        return (self.cap_c[n], self.cap_g[n]) if d.cpus == WHOLE else (d.cpus, d.gpus)

    def candidates(self, d: Demand) -> list[int] | None:
        """Nodes where `d` fits now, or None if fewer than it needs (failures cached). A
        spread `d`: the nodes its tasks take (`spread_over`), their shares in `d.shares`."""
        if (d.nodes if d.cpus == WHOLE else d.need * d.cpus) > self.tot:
            return None
        key = (d.cpus, d.gpus, d.nodes, d.spread, id(d.eligible))
        if key in self.failed:
            return None
        es = self.elig(d)
        fc, fg, c, g = self.free_c, self.free_g, d.cpus, d.gpus
        if d.spread:
            shares = spread_over(d, [(n, tasks_held(d, n, fc[n], fg[n]))
                                     for n in self.avail if n in es])
            if shares is None:
                self.failed.add(key)
                return None
            d.shares = shares
            return sorted(shares)
        # the nodes both eligible and with free CPUs (the set intersection scans the
        # smaller of the two), those with room kept (sorted after)
        both = es.intersection(self.avail)
        if c == WHOLE:
            cc, cg = self.cap_c, self.cap_g
            cand = [n for n in both if fc[n] == cc[n] and fg[n] == cg[n]]
        else:
            cand = [n for n in both if fc[n] >= c and fg[n] >= g]
        if len(cand) < d.nodes:
            self.failed.add(key)
            return None
        cand.sort()
        return cand

    def alloc(self, d: Demand, hosts: list[int], t: float) -> None:
        d.held = []
        for n in hosts:
            c, g = self.use(d, n)
            d.held.append((n, c, g))
            self.free_c[n] -= c
            self.free_g[n] -= g
            self.tot -= c
            if not self.free_c[n]:
                self.avail.discard(n)
            self.seq += 1
            bisect.insort(self.rel, (t + d.duration, self.seq, n, c, g), lo=self.rp)
            if d.limit is not None:
                self.plan[self.seq] = t + d.limit
            if self._pending is not None:
                self._pending.setdefault(n, {})[self.seq] = (t + d.duration, c, g)
                self._changed.add(n)
                self.touched.add(n)
        d.done, d.start = True, t
        if self._children and d.native_id:  # a parent started: its children's turn
            for pid in ids_of(d.native_id):
                for c in self._children.get(pid, ()):
                    self._gate(c)

    def next_event(self, t: float, wakes: list[float]) -> float | None:
        """The next release, or the next of the sorted `wakes` after t; None: nothing."""
        nxt = [self.rel[self.rp][0]] if self.rp < len(self.rel) else []
        for ws in (wakes, self.gate_wakes) if self.gate_wakes else (wakes,):
            w = bisect.bisect_right(ws, t)
            if w < len(ws):
                nxt.append(ws[w])
        return min(nxt) if nxt else None

    def release_until(self, t: float, stop: int | None = None) -> None:
        """Give back every release due by t (`stop`: only those before that index)."""
        rel = self.rel
        end = len(rel) if stop is None else min(stop, len(rel))
        while self.rp < end and rel[self.rp][0] <= t:
            _, seq, n, c, g = rel[self.rp]
            if self._pending is not None:
                del self._pending[n][seq]
                self._changed.add(n)
                self.touched.add(n)
            nc = min(self.cap_c[n], self.free_c[n] + c)
            self.tot += nc - self.free_c[n]
            self.free_c[n] = nc
            self.free_g[n] = min(self.cap_g[n], self.free_g[n] + g)
            if nc:
                self.avail.add(n)
            self.failed.clear()
            self.rp += 1
            self.released = True

    def plan_base(self, n: int, t: float) -> tuple[list[float], list[int], list[int]]:
        """Node n's free CPUs and GPUs from t as a step function (times, cpus, gpus), the
        releases still to come given back at their planned (walltime) ends: what a plan
        starts from (`_Plan`). Shared: never changed in place. Made anew where a release or
        a start changed the node; else the last one, its steps up to t merged into one
        (the same steps: what is given back is only ever added, capped at the node's
        size, so the order it comes in does not change the sums); its first step then
        begins at t (changed in place: a plan is read only until the sim's next one is
        made)."""
        if self._pending is None:
            self._pending = {}
            for end, seq, m, c, g in itertools.islice(self.rel, self.rp, None):
                self._pending.setdefault(m, {})[seq] = (end, c, g)
            self._changed.clear()
        base = self._bases.get(n)
        if base is not None and n not in self._changed and base[0][0] <= t:
            times, fc, fg = base
            if len(times) > 1 and times[1] <= t:
                k = bisect.bisect_right(times, t) - 1
                self._bases[n] = base = [t, *times[k + 1:]], fc[k:], fg[k:]
            else:
                times[0] = t
            return base
        self._changed.discard(n)
        planned_end = self.plan.get
        ev = sorted([(max(planned_end(seq, end), t), c, g)
                     for seq, (end, c, g) in self._pending.setdefault(n, {}).items()])
        cap_c, cap_g = self.cap_c[n], self.cap_g[n]
        times, fc, fg = [t], [self.free_c[n]], [self.free_g[n]]
        for when, c, g in ev:
            c2, g2 = min(cap_c, fc[-1] + c), min(cap_g, fg[-1] + g)
            if when == times[-1]:
                fc[-1], fg[-1] = c2, g2
            else:
                times.append(when)
                fc.append(c2)
                fg.append(g2)
        self._bases[n] = base = times, fc, fg
        return base

    def elig(self, d: Demand) -> frozenset[int]:
        es = self.sets.get(id(d.eligible))
        if es is None:
            es = self.sets[id(d.eligible)] = frozenset(d.eligible)
        return es

    def shadow(self, d: Demand, t: float) -> _Shadow | None:
        """Earliest time (>= t, >= not_before) the blocked head fits, with free at that time.

        Free resources at that time are kept only for nodes a release touches (`fc`, `fg`);
        any other eligible node still has its current free resources.
        """
        es, free_c, free_g = self.elig(d), self.free_c, self.free_g
        fc: dict[int, int] = {}
        fg: dict[int, int] = {}
        count = sum(self.count(d, n, free_c[n], free_g[n]) for n in self.avail if n in es)
        rel, i, when = self.rel, self.rp, max(t, d.not_before)
        while True:
            while i < len(rel) and rel[i][0] <= when:
                _, _, n, c, g = rel[i]
                i += 1
                if n in es:
                    oc, og = fc.get(n, free_c[n]), fg.get(n, free_g[n])
                    fc[n] = min(self.cap_c[n], oc + c)
                    fg[n] = min(self.cap_g[n], og + g)
                    count += self.count(d, n, fc[n], fg[n]) - self.count(d, n, oc, og)
            if count >= d.need and (not d.spread or spread_over(d, [
                    (n, tasks_held(d, n, fc.get(n, free_c[n]), fg.get(n, free_g[n])))
                    for n in es]) is not None):  # (spread: within its most nodes too)
                return _Shadow(d, when, es, fc, fg, count)
            if i >= len(rel):
                return None
            when = rel[i][0]

    def try_backfill(self, d: Demand, sh: _Shadow, t: float) -> bool:
        key = (d.cpus, d.gpus, d.nodes, d.spread, id(d.eligible))
        late = t + d.duration > sh.when  # still running at the head's reserved start
        if late and key in sh.failed:
            return False
        cand = self.candidates(d)
        if cand is None:
            return False
        h, es, free_c, free_g = sh.head, sh.es, self.free_c, self.free_g

        def at(n: int) -> tuple[int, int]:  # free on a head's node at the shadow time
            return sh.fc.get(n, free_c[n]), sh.fg.get(n, free_g[n])

        if not late:
            hosts = cand[: d.nodes]
        elif d.spread or h.spread:  # tasks taken or lost, node by node
            hosts = cand[: d.nodes]
            lost = 0
            for n in hosts:
                if n in es:
                    a, (c, g) = at(n), self.use(d, n)
                    lost += self.count(h, n, *a) - self.count(h, n, a[0] - c, a[1] - g)
            if sh.count - lost < h.need:
                sh.failed.add(key)
                return False
            sh.count -= lost
        else:
            safe, risky = [], []
            for n in cand:  # nodes whose loss past the shadow time would hurt the head
                if n in es and self.fits(h, n, *(a := at(n))):
                    c, g = self.use(d, n)
                    (safe if self.fits(h, n, a[0] - c, a[1] - g) else risky).append(n)
                else:
                    safe.append(n)
                if len(safe) == d.nodes:
                    break  # the hosts are the first safe ones: the rest cannot change them
            hosts = (safe + risky)[: d.nodes]
            lost = sum(1 for n in hosts if n in risky)
            if sh.count - lost < h.nodes:  # would delay the head: same shape fails too
                sh.failed.add(key)
                return False
            sh.count -= lost
        for n in hosts:  # record free-at-shadow before the allocation changes free_c
            if n in es:
                fc, fg = at(n)
                c, g = self.use(d, n) if late else (0, 0)
                sh.fc[n], sh.fg[n] = fc - c, fg - g
        self.alloc(d, hosts, t)
        return True


class _Steps(dict):
    """Node -> one of a plan's step lists (`part` of `_Sim.plan_base`: times, free CPUs,
    free GPUs), made when first read; only the plan's `nodes`. `rest`: the dicts of the
    parts after this one, filled at once (a plan reads a node's times first). It holds
    nothing of the plan (no cycle to leave to the garbage collector)."""

    def __init__(self, sim: _Sim, t: float, nodes: frozenset[int], part: int,
                 rest: tuple[dict, ...] = ()) -> None:
        super().__init__()
        self.sim, self.t, self.nodes, self.part, self.rest = sim, t, nodes, part, rest

    def __missing__(self, n: int) -> list:
        if n not in self.nodes:
            raise KeyError(n)
        base = self.sim.plan_base(n, self.t)
        for k, other in enumerate(self.rest, self.part + 1):
            other.setdefault(n, base[k])
        steps = self[n] = base[self.part]
        return steps


class _Plan:
    """The scheduler's own plan at time t, as Slurm's backfill builds it: running jobs end
    at their walltimes (`_Sim.plan`), and every waiting job ahead, in priority order, holds
    the earliest slot where it fits for its whole walltime (`Demand.planned`). A job further
    back may start now only where it delays none of them. Per node, free CPUs and GPUs as a
    step function of time (`times[i]` to `times[i + 1]`).

    A slot in the future is kept as Slurm's backfill keeps it: the reserved job's nodes
    leave its map of available nodes for the slot's whole window (a node set, not CPU
    counts), so no job further back starts on them if its walltime reaches that slot,
    however many CPUs are free there. A 1-CPU job behind GPU jobs waiting for a GPU thus
    waits for them even on nodes with idle CPUs (measured on the test bed's gamma)."""

    def __init__(self, sim: _Sim, t: float, nodes: frozenset[int], lazy: bool = False
                 ) -> None:
        self.sim, self.t, self.nodes = sim, t, nodes
        self._order: dict[int, list[int]] = {}
        # node -> how often a reservation changed it; (node, version, shape, t0) -> its
        # earliest fit, exact or a lower bound: queues repeat shapes (arrays, scripts
        # submitted many times), and a reservation changes only its own nodes
        self._version: dict[int, int] = {}
        self._memo: dict[tuple[int, int, int, int, float, float],
                         tuple[float | None, bool]] = {}
        self._heaps: dict[tuple[int, int, float, float, int], list[tuple[float, int, int]]] = {}
        self._heaps_due: set[tuple[int, int, float, float, int]] = set()
        # per node, shared with the sim's bases until a reservation changes them; `lazy`:
        # each made when first read (the sim must not change meanwhile)
        self.fc: dict[int, list[int]] = _Steps(sim, t, nodes, 1)
        self.fg: dict[int, list[int]] = _Steps(sim, t, nodes, 2)
        self.times: dict[int, list[float]] = _Steps(sim, t, nodes, 0, (self.fc, self.fg))
        if not lazy:
            for n in nodes:
                self.times[n], self.fc[n], self.fg[n] = sim.plan_base(n, t)
        self._own: set[int] = set()  # the nodes whose steps are this plan's own copies
        # the queued jobs (native ids) whose scheduler estimate a slot has answered: an
        # array record's lanes share its one estimate (its next task's), kept for one
        self.estimated: set[str] = set()

    def _need(self, d: Demand, n: int) -> tuple[int, int] | None:
        """The free CPUs and GPUs d needs on node n (a plan's free never exceeds the
        node's capacity, so "the whole node" is "all of it free"); None: it never fits."""
        if d.cpus != WHOLE:
            return d.cpus, d.gpus
        c = self.sim.cap_c[n]
        return (c, self.sim.cap_g[n]) if c > 0 else None

    def fits_through(self, d: Demand, n: int, start: float) -> bool:
        """Whether d fits on node n for its whole planned run from `start`."""
        c, g = d.cpus, d.gpus
        if c == WHOLE:  # (`_need`, inline: a hot path)
            c, g = self.sim.cap_c[n], self.sim.cap_g[n]
            if c <= 0:
                return False
        times, fc, fg = self.times[n], self.fc[n], self.fg[n]
        i = bisect.bisect_right(times, start) - 1
        j = bisect.bisect_left(times, start + d.planned)
        for k in range(i, max(j, i + 1)):  # noqa: SIM110 (no generator: a hot path)
            if fc[k] < c or fg[k] < g:
                return False
        return True

    def _hosts(self, d: Demand, start: float, es: list[int]) -> list[int] | None:
        """The first d.nodes of `es` (in index order) where d fits through from `start`;
        a spread d: the nodes of `es` its tasks take through from then (`spread_over`)."""
        if d.spread:
            shares = spread_over(d, [(n, self._tasks_through(d, n, start)) for n in es])
            if shares is None:
                return None
            d.shares = shares
            return sorted(shares)
        hosts = []
        for n in es:
            if self.fits_through(d, n, start):
                hosts.append(n)
                if len(hosts) == d.nodes:
                    return hosts
        return None

    def _tasks_through(self, d: Demand, n: int, start: float) -> int:
        """How many of a spread d's tasks node n holds for their whole planned run."""
        times, fc, fg = self.times[n], self.fc[n], self.fg[n]
        i = bisect.bisect_right(times, start) - 1
        j = bisect.bisect_left(times, start + d.planned)
        return min(tasks_held(d, n, fc[k], fg[k]) for k in range(i, max(j, i + 1)))

    def _first_spread(self, d: Demand, t0: float, es: list[int]) -> Slot | None:
        """Where a spread d's tasks fit soonest from t0: the first step of any of its
        nodes at which enough of them hold its tasks through its walltime."""
        for start in sorted({t0} | {x for n in es for x in self.times[n] if x > t0}):
            if (found := self._hosts(d, start, es)) is not None:
                return start, found
        return None

    def _earliest_on(self, d: Demand, n: int, t0: float, before: float = math.inf
                     ) -> float | None:
        """The earliest time >= t0 at which d fits on node n for its whole planned run;
        None when it never does, or not before `before`."""
        c, g = d.cpus, d.gpus
        if c == WHOLE:  # (`_need`, inline: a hot path)
            c, g = self.sim.cap_c[n], self.sim.cap_g[n]
            if c <= 0:
                return None
        times, fc, fg, planned = self.times[n], self.fc[n], self.fg[n], d.planned
        k, when, last = bisect.bisect_right(times, t0) - 1, t0, len(times)
        end = when + planned
        while k < last and times[k] < end:
            k += 1
            if fc[k - 1] < c or fg[k - 1] < g:
                if k == last:
                    return None  # not even once everything planned has ended
                when = times[k]
                if when >= before:
                    return None
                end = when + planned
        return when

    def _earliest_known(self, d: Demand, n: int, t0: float, before: float = math.inf
                        ) -> float | None:
        """`_earliest_on`, remembered until a reservation changes node n."""
        key = (n, self._version.get(n, 0), d.cpus, d.gpus, d.planned, t0)
        hit = self._memo.get(key)
        if hit is not None:
            e, exact = hit
            if exact:
                return e
            if e is not None and before <= e:  # not before `e`, so not before `before`
                return None
        e = self._earliest_on(d, n, t0, before)
        self._memo[key] = (e, True) if e is not None or before == math.inf else (before, False)
        return e

    def _first_node(self, d: Demand, t0: float, es: list[int]) -> tuple[float, int] | None:
        """Where a one-node d fits soonest from t0 (lowest node index on ties): (start,
        node). The first time a shape comes, its nodes are scanned; when it comes again
        (an array, one script submitted many times), a heap of every node's earliest fit
        is kept, and a reservation only makes its own nodes' entries stale (a reservation
        only takes room, so a stale entry is too early, never too late)."""
        shape = (d.cpus, d.gpus, d.planned, t0, id(d.eligible))
        heap = self._heaps.get(shape)
        if heap is None:
            if shape not in self._heaps_due:
                self._heaps_due.add(shape)
                best: tuple[float, int] | None = None
                for n in es:
                    e = self._earliest_known(d, n, t0, best[0] if best else math.inf)
                    if e is not None and (best is None or e < best[0]):
                        best = (e, n)
                        if e == t0:
                            break  # none can be earlier
                return best
            heap = [(e, n, self._version.get(n, 0)) for n in es
                    if (e := self._earliest_known(d, n, t0)) is not None]
            heapq.heapify(heap)
            self._heaps[shape] = heap
        while heap:
            e, n, seen = heap[0]
            if seen == self._version.get(n, 0):
                return e, n
            heapq.heappop(heap)
            if (e := self._earliest_known(d, n, t0)) is not None:
                heapq.heappush(heap, (e, n, self._version.get(n, 0)))
        return None

    def _split(self, n: int, when: float) -> int:
        if n not in self._own:  # copied before the first change (the base is shared)
            self._own.add(n)
            self.times[n], self.fc[n], self.fg[n] = \
                list(self.times[n]), list(self.fc[n]), list(self.fg[n])
        times = self.times[n]
        i = bisect.bisect_right(times, when) - 1
        if times[i] != when:
            i += 1
            times.insert(i, when)
            self.fc[n].insert(i, self.fc[n][i - 1])
            self.fg[n].insert(i, self.fg[n][i - 1])
        return i

    def reserve(self, d: Demand, t0: float | None = None) -> tuple[float, list[int]] | None:
        """d's earliest slot from `t0` (else from now, or its scheduler estimate), taken
        from the plan: (start, nodes), or None when it never fits; a slot starting past the
        plan's window (Slurm's bf_window) is not kept: (start, []). Each node's own earliest
        fit bounds the search: a one-node job takes the first; a wider one starts at a
        time when enough of them fit together. A job waiting for priority or resources
        whose scheduler estimate inside the window finds no room in the plan keeps its
        slot at that estimate all the same (`_kept_hosts`): Slurm reserved it there; past
        that estimate, its slot is on the same nodes when they free up, unless room
        elsewhere comes sooner (`_kept_again`)."""
        t0 = max(self.t, d.not_before) if t0 is None else t0
        if t0 == math.inf:
            return None  # its waiting parents have not started: the backfill skips it
        es = self.nodes_of(d)
        keeps = d.sched and d.now_ok and t0 <= d.not_before \
            and self.t < d.not_before <= self.t + self.sim.window \
            and d.native_id not in self.estimated
        if d.spread:
            best = self._first_spread(d, t0, es)
        elif d.nodes == 1:  # the first node (lowest index on ties) where it fits soonest
            one = self._first_node(d, t0, es)
            best = None if one is None else (one[0], [one[1]])
        else:
            best = self._first_nodes(d, t0, es)
        if keeps and (best is None or best[0] > d.not_before) \
                and (kept := self._kept_hosts(d, d.not_before, es)) is not None:
            best = d.not_before, kept
            self.sim.kept[d] = kept
        elif d.not_before <= self.t and (again := self._kept_again(d, t0)) is not None \
                and (best is None or again[0] <= best[0]):
            best = again
        self.answered(d)
        if best is None:
            return None
        start, hosts = best
        if start > self.t + self.sim.window:
            return start, []  # past the backfill's window: no slot kept, its room open
        self._take(d, start, hosts)
        return start, hosts

    def answered(self, d: Demand) -> None:
        """d's slot is planned: its record's estimate is answered for (`reserve`)."""
        if d.sched and d.native_id is not None:
            self.estimated.add(d.native_id)

    def _first_nodes(self, d: Demand, t0: float, es: list[int]) -> Slot | None:
        """Where a wider d fits soonest from t0: a time when enough nodes fit together
        (a node fits at a time only if its own earliest fit is no later). When its shape
        comes again, the heap of every node's earliest fit (`_shape_heap`) gives the
        earliest time enough of them may fit without a scan; the nodes are scanned only
        where those do not fit through together then."""
        if (heap := self._shape_heap(d, t0, es)) is not None:
            got = self._soonest(d, t0, heap)
            if got is None:
                return None
            lo, able = got
            found = self._hosts(d, lo, able) if lo > t0 else able[: d.nodes]
            if found is not None:
                return lo, found
        return self._first_nodes_scanned(d, t0, es)

    def _shape_heap(self, d: Demand, t0: float, es: list[int]
                    ) -> list[tuple[float, int, int]] | None:
        """The heap of (earliest fit, node, its version) of d's shape from t0 over `es`:
        None the first time the shape comes (a plain scan then), made the second."""
        shape = (d.cpus, d.gpus, d.planned, t0, id(d.eligible))
        heap = self._heaps.get(shape)
        if heap is None:
            if shape not in self._heaps_due:
                self._heaps_due.add(shape)
                return None
            heap = [(e, n, self._version.get(n, 0)) for n in es
                    if (e := self._earliest_known(d, n, t0)) is not None]
            heapq.heapify(heap)
            self._heaps[shape] = heap
        return heap

    def _soonest(self, d: Demand, t0: float, heap: list[tuple[float, int, int]]
                 ) -> tuple[float, list[int]] | None:
        """From a shape's heap: the earliest time `lo` at which d.nodes nodes' own earliest
        fits have come, and every node whose fit has come by then, in index order (at t0
        only the first d.nodes of them: they fit through from then). Stale entries (their
        node reserved since) are made anew; the entries read are put back."""
        version, taken = self._version, []
        lo = None
        while heap:
            e, n, seen = heap[0]
            if seen != version.get(n, 0):
                heapq.heappop(heap)
                if (e := self._earliest_known(d, n, t0)) is not None:
                    heapq.heappush(heap, (e, n, version.get(n, 0)))
                continue
            if lo is not None and e > lo:
                break
            taken.append(heapq.heappop(heap))
            if len(taken) == d.nodes:
                lo = e
                if lo == t0:
                    break
        for entry in taken:
            heapq.heappush(heap, entry)
        if lo is None:
            return None
        return lo, sorted(n for _, n, _ in taken)

    def _first_nodes_scanned(self, d: Demand, t0: float, es: list[int]) -> Slot | None:
        """`_first_nodes` by a scan of every node of `es`."""
        firsts, at_t0 = [], 0
        for n in es:
            if (e := self._earliest_known(d, n, t0)) is not None:
                firsts.append((e, n))
                at_t0 += e == t0
                if at_t0 == d.nodes:  # enough nodes fit at once: none can be earlier
                    break
        if len(firsts) < d.nodes:
            return None
        firsts.sort()
        lo = firsts[d.nodes - 1][0]
        able = sorted(n for e, n in firsts[:bisect.bisect_right(firsts, (lo, math.inf))])
        if (found := self._hosts(d, lo, able)) is not None:
            return lo, found  # (the first time tried: the later ones are read only if not)
        for start in sorted({x for _, n in firsts for x in self.times[n] if x > lo}):
            able = sorted(n for e, n in firsts[:bisect.bisect_right(firsts, (start, math.inf))])
            if (found := self._hosts(d, start, able)) is not None:
                return start, found
        return None

    def _kept_hosts(self, d: Demand, t0: float, es: list[int]) -> list[int] | None:
        """Where d's slot at its scheduler estimate t0 is kept when this plan has no room
        for it then: the scheduler planned it there, with room the view does not show
        (node counts taken a moment apart from the queue, a running job's nodes not
        known). The nodes an earlier plan kept it on where still free of other slots then
        (a reservation stays where it was made), else those of the most CPUs free then
        (lowest index on ties), those the view misses the least of: no job further back
        takes that room first. None: too few nodes are free of other slots then."""
        before = set(self.sim.kept.get(d, ()))
        free: list[tuple[bool, int, int]] = []
        for n in es:
            if self._need(d, n) is None:
                continue
            c = self.fc[n][bisect.bisect_right(self.times[n], t0) - 1]
            if c != RESERVED:
                free.append((n not in before, -c, n))
        if len(free) < d.nodes:
            return None
        return sorted(n for *_, n in sorted(free)[:d.nodes])

    def _kept_again(self, d: Demand, t0: float) -> Slot | None:
        """d's slot once its scheduler estimate has come without room in the view, where a
        slot was kept for it there (`_kept_hosts`): Slurm reserved it those nodes, so it
        starts when they free up, its reservation moved to the first time from t0 they
        all fit it through its walltime; no job further back is planned into that room.
        None: none was kept, or they never fit it."""
        hosts = self.sim.kept.get(d)
        if hosts is None or not all(n in self.nodes for n in hosts):
            return None
        firsts = [self._earliest_known(d, n, t0) for n in hosts]
        if any(e is None for e in firsts):
            return None
        lo = max(firsts)  # type: ignore[type-var]
        for start in sorted({lo} | {x for n in hosts for x in self.times[n] if x > lo}):
            if all(self.fits_through(d, n, start) for n in hosts):
                return start, list(hosts)
        return None

    def start_now(self, d: Demand) -> list[int] | None:
        """Nodes where d starts now, fitting through its walltime without touching any
        slot kept for a job ahead (taken from the plan); None: it does not, and it keeps
        nothing for later (a job past a scheduler's backfill depth)."""
        es = self.nodes_of(d)
        if d.not_before > self.t or (hosts := self._hosts(d, self.t, es)) is None:
            return None
        self._take(d, self.t, hosts)
        return hosts

    def nodes_of(self, d: Demand) -> list[int]:
        """The plan's nodes d may use, in index order (cached per node list)."""
        es = self._order.get(id(d.eligible))
        if es is None:
            es = self._order[id(d.eligible)] = sorted(
                n for n in self.sim.elig(d) if n in self.nodes)
        return es

    def _take(self, d: Demand, start: float, hosts: list[int]) -> None:
        """d's room on `hosts` from `start` through its walltime, out of the plan."""
        whole = start > self.t  # a reservation, not a start: its nodes are kept whole
        for n in hosts:
            c, g = self.sim.use(d, n)
            self._version[n] = self._version.get(n, 0) + 1
            a, b = self._split(n, start), self._split(n, start + d.planned)
            for k in range(a, b):
                if whole:
                    self.fc[n][k], self.fg[n][k] = RESERVED, RESERVED
                else:
                    self.fc[n][k] -= c
                    self.fg[n][k] -= g


def _plan_reach(nodes: frozenset[int]) -> int:
    """How many waiting jobs a plan over `nodes` reserves for: a bounded effort per event,
    as Slurm bounds its own (bf_max_job_test, bf_max_time); on a big site only the first."""
    return max(PLAN_MIN_DEPTH, PLAN_BUDGET // max(1, len(nodes)))


Slot = tuple[float, list[int]]  # a reservation: its start and its nodes


class _PlanMemory:
    """The reservations `_planned_start` made for one probe at its last plan, kept for the
    next one. Between two events a release or a start changes a few nodes, so most jobs
    ahead take the same slot again: a kept slot is taken again without a search where
    nothing it depends on can have changed, else it is searched for anew.

    `dirty`: the nodes whose steps may differ, at this point of the queue, from the last
    plan's at the same job: those a release or a start changed since (`_Sim.touched`),
    and those of every reservation that moved, or that the last plan made and this one
    does not (a job that has started since). Any other node has the same steps from the
    plan's time on, so a job's earliest fit there is the same, where it is no earlier
    than that time."""

    def __init__(self) -> None:
        # job -> (the plan's time, the search's start, its slot), in the order made
        self.made: dict[Demand, tuple[float, float, Slot | None]] = {}
        self._old: list[tuple[Demand, tuple[float, float, Slot | None]]] = []
        self._at: dict[Demand, int] = {}
        self._next = 0
        self.dirty: set[int] = set()
        self.meets: dict[int, bool] = {}  # per node list: shares a node with the probe's

    def begin(self, sim: _Sim) -> None:
        """A new plan: the last one's reservations become the ones to compare with."""
        self._old, self.made = list(self.made.items()), {}
        self._at = {d: i for i, (d, _) in enumerate(self._old)}
        self._next = 0
        self.dirty = set(sim.touched)
        sim.touched.clear()

    def reserve(self, plan: _Plan, d: Demand) -> Slot | None:
        """`plan.reserve(d)`, the last plan's slot taken again where it is still d's."""
        t0 = max(plan.t, d.not_before)
        if t0 == math.inf:
            return None  # waiting for parents that have not started: nothing kept of it
        i = self._at.get(d, -1)
        if i < self._next:  # not in the last plan (or out of its order): searched for
            got = plan.reserve(d, t0)
            self.dirty.update(got[1] if got else ())
        else:
            for _, (_, _, gone) in self._old[self._next:i]:  # reserved then, not now
                self.dirty.update(gone[1] if gone else ())
            self._next = i + 1
            was_t, _, was = self._old[i][1]
            got = self._again(plan, d, t0, was)
            if got != was or (got is not None and was is not None
                              and (got[0] > plan.t) != (was[0] > was_t)):
                # moved, or a start now where it was a reservation (or back): its nodes
                # differ from here on
                self.dirty.update(was[1] if was else ())
                self.dirty.update(got[1] if got else ())
        plan.answered(d)  # (where its slot was taken again without `plan.reserve`)
        self.made[d] = (plan.t, t0, got)
        return got

    def _again(self, plan: _Plan, d: Demand, t0: float, was: Slot | None) -> Slot | None:
        """d's slot from t0 given its last one (`was`, searched for from no later than t0
        on the same steps outside `dirty`): only the dirty nodes are searched where that
        decides it, else the whole plan is."""
        if was is not None and d.sched and was[0] == d.not_before or d in plan.sim.kept:
            return plan.reserve(d, t0)  # kept at its estimate maybe without room: anew
        dirty = self.dirty
        hit = [n for n in plan.nodes_of(d) if n in dirty] if dirty else []
        if was is None:
            if not hit:
                return None  # nowhere it fits then, nothing changed: nowhere now
        elif was[1] and was[0] >= t0 and dirty.isdisjoint(was[1]):
            # the kept slot is still there; a dirty node beats it only by fitting as soon
            bound = math.nextafter(was[0], math.inf)
            if d.nodes == 1:  # the soonest fit, lowest index on ties
                best = (was[0], was[1][0])
                for n in hit:
                    e = plan._earliest_known(d, n, t0, bound)
                    if e is not None and (e, n) < best:
                        best = (e, n)
                plan._take(d, best[0], [best[1]])
                return best[0], [best[1]]
            if all(plan._earliest_known(d, n, t0, bound) is None for n in hit):
                # none fits as soon: no earlier start, and the same first nodes then
                plan._take(d, was[0], was[1])
                return was[0], list(was[1])
        return plan.reserve(d, t0)


def _planned_start(sim: _Sim, ahead: list[Demand], probe: Demand, t: float,
                   depth: int, memory: _PlanMemory | None = None) -> list[int] | None:
    """Where the probe starts at t under a plan reserving for the first `depth` jobs
    waiting ahead of it (Slurm's backfill: no lower-priority job may delay any of them).
    A reservation only takes room away: once the probe fits on too few nodes, it waits.
    `memory`: the probe's reservations at its last plan (same sim), taken again where
    they still hold (`_PlanMemory`). The plan goes past the reach of `_planned_earliest`'s
    plans (`WHOLE_PLAN_REACHES` times it, at most `depth` jobs), as Slurm's backfill,
    testing far more jobs (bf_max_job_test), keeps their slots; it stops at the first
    job that leaves the probe too little room. Every job ahead planned costs 70% more
    CPU than the bound (`benchmarks/README.md`, placement follow-ups 26)."""
    if sim.candidates(probe) is None:
        return None  # does not even fit now (cheap, cached)
    mine = sim.elig(probe)
    meets = memory.meets if memory is not None else {}
    ahead = list(itertools.islice((d for d in ahead if not d.done and d is not probe
                                   and _meets(meets, mine, sim, d)), depth))
    nodes = mine.union(*{id(d.eligible): sim.elig(d) for d in ahead}.values())
    ahead = ahead[:WHOLE_PLAN_REACHES * _plan_reach(nodes)]
    plan = _Plan(sim, t, nodes, lazy=True)
    if memory is not None:
        memory.begin(sim)
    # the first probe.nodes nodes (index order) where the probe fits through from t, found
    # by scanning `order` no further than needed: a reservation only takes room away, so a
    # node passed over never fits again
    order, room, scan = plan.nodes_of(probe), [], 0
    if probe.spread:  # its tasks over any of its nodes: room for them all after each slot
        # node -> the tasks it holds through; a slot changes only its own nodes' room
        held = {n: k for n in order if (k := plan._tasks_through(probe, n, t))}
        fits = spread_over(probe, list(held.items())) is not None
        for d in ahead:
            got = memory.reserve(plan, d) if memory is not None else plan.reserve(d)
            if got is None or not got[1]:
                continue
            changed = False
            for n in got[1]:
                if n in held and (k := plan._tasks_through(probe, n, t)) != held[n]:
                    changed = True
                    if k:
                        held[n] = k
                    else:
                        del held[n]
            if changed:
                fits = spread_over(probe, list(held.items())) is not None
            if not fits:
                return None
        shares = spread_over(probe, list(held.items()))
        if shares is None:
            return None
        probe.shares = shares
        return sorted(shares)
    for d in [None, *ahead]:
        if d is not None:
            got = memory.reserve(plan, d) if memory is not None else plan.reserve(d)
            if got is None or not any(n in room for n in got[1]):
                continue
            room = [n for n in room if plan.fits_through(probe, n, t)]
        while len(room) < probe.nodes and scan < len(order):
            scan += 1
            if plan.fits_through(probe, order[scan - 1], t):
                room.append(order[scan - 1])
        if len(room) < probe.nodes:
            return None
    return room


def _meets(cache: dict[int, bool], mine: frozenset[int], sim: _Sim, d: Demand) -> bool:
    """Whether d may use a node of `mine` (cached per node list)."""
    hit = cache.get(id(d.eligible))
    if hit is None:
        hit = cache[id(d.eligible)] = not mine.isdisjoint(sim.elig(d))
    return hit


@dataclass
class _Shadow:
    head: Demand
    when: float
    es: frozenset[int]
    fc: dict[int, int]
    fg: dict[int, int]
    count: int
    failed: set[tuple[int, ...]] = field(default_factory=set)  # until a release


def _not_yet_eligible(d: Demand, t: float) -> bool:
    """Whether a waiting Slurm job is not yet eligible at `t` s from now: its begin time
    (BeginTime) or its dependency's release is still to come. Slurm's schedulers skip such
    a job ("not independent"): it keeps no slot, so a job that fits before it may start
    and delay it; from its time on it takes its place by priority."""
    return d.floor > t or d.gate is not None and d.not_before > t


def _planned_earliest(st: SimState, queue: list[Demand], probe: Demand | None,
                      top: int | None = None, top_by: dict[str, int] | None = None,
                      until: float = math.inf, probe_at: int | None = None) -> float | None:
    """Slurm's scheduling at every event (a job's end, a scheduler estimate's time): the
    waiting jobs in priority order each take their earliest walltime-long slot in the plan,
    and those whose slot is now start now; the probe is the last, or before
    `queue[probe_at]` (its own priority: `placement_priority`). Jobs end by their
    (calibrated) durations, so the plan is made again at each end, as Slurm's backfill
    cycle does. Only the first jobs ahead are planned on a big site (`PLAN_BUDGET`); the
    jobs past them start where they fit now without delaying those, else keep nothing;
    the probe past them starts only where it delays none of the jobs ahead that its own
    plan reaches (`_planned_start`).
    Without a probe the queue is played out to its end (each job's `start`); None.

    `top` (PBS's `backfill_depth`): only the first `top` jobs that cannot start now keep a
    slot; every job after them starts now where it delays none of those, else waits
    keeping nothing. `top_by`: the queues with their own depth, each counting the top jobs
    among its own jobs (`top` is then shared by the jobs of the other queues). `until`:
    no event at or after it is played out (None then)."""
    sim = _Sim(st)
    k = len(queue) if probe_at is None else max(0, min(probe_at, len(queue)))
    wait = [*queue[:k], probe, *queue[k:]] if probe is not None else list(queue)
    if not wait:
        return None
    sim.link(wait)
    nodes = frozenset().union(*(sim.elig(d) for d in wait))
    reach = _plan_reach(nodes)
    memory = _PlanMemory()  # the probe's plan past the reach, event to event
    wakes = sorted({d.not_before for d in wait if 0 < d.not_before < math.inf})
    t = 0.0
    for _ in range(4 * (len(wait) + len(st.releases)) + 1000):
        sim.release_until(t)
        wait = [d for d in wait if not d.done]
        if not wait:
            return None  # every job played out (no probe)
        plan = _Plan(sim, t, nodes)
        blocked: dict[str | None, int] = {}  # blocked jobs so far, by the depth they count in
        for i, d in enumerate(wait):
            if _not_yet_eligible(d, t):
                continue  # Slurm plans no slot for it (backfill skips a job not independent)
            key = d.partition if top_by and d.partition in top_by else None
            most = top_by[key] if key is not None and top_by else top
            # past the top jobs, or (without a depth) the plan's reach: now or never, as
            # Slurm's backfill still tests them (bf_max_job_test is far deeper)
            if most is not None and blocked.get(key, 0) >= most or most is None and i >= reach:
                if (hosts := plan.start_now(d)) is not None and d is probe and most is None:
                    # the probe, past the reach, starts only where it delays none of the
                    # jobs its own plan reaches either (Slurm backfills deeper)
                    hosts = _planned_start(sim, wait[:i], probe, t, BACKFILL_DEPTH,
                                           memory)
                if hosts is not None:
                    sim.alloc(d, hosts, t)
                    if d is probe:
                        return t
                continue
            got = plan.reserve(d, t if d.now_ok and t == 0.0 else None)
            if got is None:
                if d is probe:
                    return None  # never fits, even with everything planned ended
                continue
            if got[0] == t:
                sim.alloc(d, got[1], t)
                if d is probe:
                    return t
            else:
                blocked[key] = blocked.get(key, 0) + 1
        nxt = sim.next_event(t, wakes)
        if nxt is None or nxt >= until:
            return None
        t = max(nxt, t)
    return None


Reservation = Literal["plan", "easy", "none", "fifo"]


def reservation_for(scheduler: str) -> Reservation:
    """How a scheduler protects waiting jobs from backfill: Slurm's backfill delays no job
    ahead as it plans them ("plan"); Grid Engine's `max_reservation` is 0 unless set, so
    whatever fits starts ("none"); the others protect the blocked head (EASY). A site
    without backfill (Slurm's sched/builtin) says so in its snapshot ("fifo")."""
    return {"slurm": "plan", "sge": "none"}.get(scheduler, "easy")


def earliest_start(st: SimState, queue: list[Demand], probe: Demand,
                   depth: int = BACKFILL_DEPTH,
                   reservation: Reservation = "easy",
                   probe_at: int | None = None, top: int = 1,
                   top_by: dict[str, int] | None = None, until: float = math.inf
                   ) -> float | None:
    """Seconds after now at which `probe` starts; None if never. The probe is last in
    priority, or before `queue[probe_at]` (Grid Engine: `slots_position`, LSF fair share,
    Slurm's multifactor priority): the jobs behind it are planned after it.

    "plan" (Slurm): every job starts only where it delays none of the jobs ahead of it as
    the scheduler plans them, from walltimes (`_planned_earliest`); where that is more
    work than `PLAN_WORK` (a big site, a deep queue), for a bounded effort only the probe
    is held to that plan and the queue ahead runs EASY. "none" (Grid Engine, whose
    `max_reservation` is 0 unless set, and then only for jobs that ask with `-R y`):
    nothing is protected, every job that fits starts, in priority order. "easy": only the
    blocked head's start is protected, with the simulation's own durations; with `top`
    above 1 (PBS's `backfill_depth`), the first `top` blocked jobs each keep their
    walltime-long slot (`_planned_earliest`), where the site is small enough to plan;
    `top_by`: the queues whose own backfill_depth counts their own top jobs. `until`: no
    event at or after it is played out (None then: for a play-out of the queue alone).
    "fifo" (Slurm's sched/builtin, no backfill): jobs start in priority order, none on the
    nodes of a partition whose higher-priority job waits (`_fifo_earliest`)."""
    if reservation not in ("plan", "easy", "none", "fifo"):
        raise ValueError(f"reservation {reservation!r}: accepted: plan, easy, none, fifo")
    reserve_all = reservation == "plan"
    for d in queue:
        d.done, d.start, d.held = False, None, None
    probe.done = False
    k = len(queue) if probe_at is None else max(0, min(probe_at, len(queue)))
    if reservation == "none":
        return _greedy_earliest(st, [*queue[:k], probe, *queue[k:]], probe, until)
    if reservation == "fifo":
        return _fifo_earliest(st, [*queue[:k], probe, *queue[k:]], probe, until)
    if reserve_all and len(st.names) * (len(queue) + 1) ** 2 <= PLAN_WORK:
        return _planned_earliest(st, queue, probe, until=until, probe_at=k)
    if reserve_all and k < len(queue):
        # a bounded effort (a big site, a deep queue): the jobs behind the probe cannot
        # delay it, and are left out
        queue = queue[:k]
    if reservation == "easy" and (top > 1 or top_by) and probe_at is None \
            and len(st.names) * (len(queue) + 1) ** 2 <= PLAN_WORK:
        return _planned_earliest(st, queue, probe, top=top, top_by=top_by, until=until)
    sim = _Sim(st)
    memory = _PlanMemory() if reserve_all else None  # the probe's plan, event to event
    wait = [*queue[:k], probe, *queue[k:]]
    sim.link(wait)
    n_wait = len(wait)  # (a hot loop: read once per change of `wait`)
    wakes = sorted({d.not_before for d in wait if 0 < d.not_before < math.inf})
    t, head, sh = 0.0, 0, None
    for _ in range(4 * (len(wait) + len(st.releases)) + 1000):
        sim.release_until(t)
        if sh is not None and sim.released:
            sh.failed.clear()
        sim.released = False
        while head < n_wait:  # start jobs in priority order while they fit
            d = wait[head]
            if not d.done:
                cand = sim.candidates(d) if d.ready(t) else None
                if cand is None:
                    break
                sim.alloc(d, cand[: d.nodes], t)
                if d is probe:
                    return t
            head += 1
        h = wait[head]
        if sh is None or sh.head is not h or sh.when == math.inf > h.not_before:
            # (a head its waiting parents held: their start sets its time)
            sh = sim.shadow(h, t)
            if sh is None:  # the head can never start: it blocks nobody
                h.done = True
                if h is probe:
                    return None
                continue
        if h is probe:
            return sh.when
        skipped, tested, i, failed = 0, 0, head + 1, sim.failed
        while sim.tot > 0 and i < n_wait and tested < depth:
            d = wait[i]
            i += 1
            if d.done or not (d.not_before <= t or (d.now_ok and t == 0.0)):  # d.ready(t)
                skipped += d.done
                continue
            if d is probe and reserve_all:
                continue
            tested += 1
            if (d.cpus, d.gpus, d.nodes, d.spread, id(d.eligible)) in failed:
                continue  # its shape found no room since the last release: it fails again
            if sim.try_backfill(d, sh, t) and d is probe:
                return t
        if sim.tot > 0 and not probe.done:
            if reserve_all:
                hosts = _planned_start(sim, wait[head:], probe, t, depth, memory)
                if hosts is not None:
                    sim.alloc(probe, hosts, t)
                    return t
            elif sim.try_backfill(probe, sh, t):
                return t
        if skipped > 64:  # drop started jobs so scans stay short
            wait = [d for d in wait[head:] if not d.done]
            head, n_wait = 0, len(wait)
        nxt = sim.next_event(t, wakes)
        if nxt is None or nxt >= until:
            return None
        t = nxt
    return None


def _greedy_earliest(st: SimState, wait: list[Demand], probe: Demand,
                     until: float = math.inf) -> float | None:
    """No reservation: at each event every waiting job (`wait`, the probe among them), in
    priority order, starts if it fits then; one that does not fit holds nothing for later
    (a small job passes a big one that waits for a whole node). Jobs the plan ends at the
    same moment give their hosts back one job at a time, each offered to the queue before
    the next: ends coincide in a plan (every job expected to end now ends at MIN_LEFT_S),
    seldom on the cluster, whose scheduler meets them one by one, so the whole cluster
    freed at once would start a job wider than any host that in fact waits while narrower
    ones take each host as it frees (seed 117's delta: four 16-slot jobs planned ahead of
    every 8-slot one, the probe 125-147 s away, started after 9-23 s). `until`: no event
    at or after it is played out."""
    sim = _Sim(st)
    sim.link(wait)
    wakes = sorted({d.not_before for d in wait if 0 < d.not_before < math.inf})
    owner: dict[int, object] = dict(st.job_ids)  # release's seq -> the job it ends
    t = 0.0
    for _ in range(4 * (len(wait) + len(st.releases)) + 1000):
        while True:
            stop = _one_job(sim, t, owner)
            sim.release_until(t, stop)
            for d in wait:
                if sim.tot <= 0:
                    break
                if d.done or not d.ready(t):
                    continue
                cand = sim.candidates(d)
                if cand is not None:
                    sim.alloc(d, cand[: d.nodes], t)
                    for seq in range(sim.seq - len(d.held or ()) + 1, sim.seq + 1):
                        owner[seq] = d
                    if d is probe:
                        return t
            wait = [d for d in wait if not d.done]
            if sim.rp >= len(sim.rel) or sim.rel[sim.rp][0] > t:
                break
        nxt = sim.next_event(t, wakes)
        if nxt is None or nxt >= until:
            return None
        t = nxt
    return None


def _fifo_earliest(st: SimState, wait: list[Demand], probe: Demand,
                   until: float = math.inf) -> float | None:
    """No backfill (Slurm's sched/builtin): at each event the waiting jobs (`wait`, the
    probe among them) start in priority order while they fit; one that does not fit now
    takes its partition's nodes from every job behind it (Slurm leaves them out of the
    rest of its pass), so no job starts ahead of a higher-priority one waiting on the same
    nodes. A job that can never run there (too big for its nodes), or that is not yet
    eligible (a begin time, a dependency), holds nothing back; one waiting for the
    scheduler's own estimated start does. `until`: no event at or after it is played
    out."""
    sim = _Sim(st)
    sim.link(wait)
    wakes = sorted({d.not_before for d in wait if 0 < d.not_before < math.inf})
    ever: dict[tuple[int, ...], bool] = {}  # shape -> whether its nodes can hold it
    t = 0.0
    for _ in range(4 * (len(wait) + len(st.releases)) + 1000):
        sim.release_until(t)
        blocked: set[int] = set()
        everywhere = len(st.names)
        for d in wait:
            if sim.tot <= 0 or len(blocked) >= everywhere:
                break  # nothing more starts at this event
            if d.done:
                continue
            if not d.ready(t):
                if d.sched and d.gate is None and d.floor <= t:  # waits for room
                    blocked |= _held_back(sim, st, d)
                    sim.avail -= blocked
                continue
            cand = sim.candidates(d) if sim.tot > 0 else None
            if cand is not None:
                sim.alloc(d, cand[: d.nodes], t)
                if d is probe:
                    return t
                continue
            key = (d.cpus, d.gpus, d.nodes, d.spread, id(d.eligible))
            if key not in ever:
                ever[key] = _could_ever_fit(sim, d)
            if not ever[key]:
                if d is probe:
                    return None
                continue
            blocked |= _held_back(sim, st, d)
            sim.avail -= blocked
        sim.avail |= {n for n in blocked if sim.free_c[n] > 0}
        sim.failed.clear()  # (shapes failed on the blocked nodes may fit next time)
        wait = [d for d in wait if not d.done]
        nxt = sim.next_event(t, wakes)
        if nxt is None or nxt >= until:
            return None
        t = nxt
    return None


def fifo_jobs_ahead(st: SimState, ahead: list[Demand], probe: Demand) -> int:
    """How many waiting jobs of `ahead` (in priority order, before the probe) a job start
    waits for without backfill (`_fifo_earliest`): those whose partitions' nodes overlap
    the probe's and that are not waiting on a dependency or a begin time (an array record
    counts once)."""
    sim = _Sim(st)
    mine = sim.elig(probe)
    ids: set[str | int] = set()
    for d in ahead:
        if d.gate is None and not d.floor and not mine.isdisjoint(_held_back(sim, st, d)):
            ids.add(d.native_id if d.native_id is not None else id(d))
    return len(ids)


def _held_back(sim: _Sim, st: SimState, d: Demand) -> frozenset[int]:
    """The nodes a waiting job that cannot start holds back from the jobs behind it under
    FIFO: its partitions' (its own eligible nodes where its partition is not known)."""
    parts = [st.partition_nodes[p] for p in (d.partition or "").split(",")
             if p in st.partition_nodes]
    return frozenset().union(*parts) if parts else sim.elig(d)


def _could_ever_fit(sim: _Sim, d: Demand) -> bool:
    """Whether enough of d's nodes could hold it once empty."""
    es = sim.elig(d)
    if d.spread:
        return spread_over(d, [(n, tasks_held(d, n, sim.cap_c[n], sim.cap_g[n]))
                               for n in es]) is not None
    if d.cpus == WHOLE:
        return sum(1 for n in es if sim.cap_c[n] > 0) >= d.nodes
    return sum(1 for n in es if sim.cap_c[n] >= d.cpus and sim.cap_g[n] >= d.gpus) >= d.nodes


def _one_job(sim: _Sim, t: float, owner: dict[int, object]) -> int:
    """The index in `sim`'s releases just past the next job's due by t (its hosts come back
    together); `sim.rp` when none is due. A release of no known job stands alone."""
    rel, i = sim.rel, sim.rp
    if i >= len(rel) or rel[i][0] > t:
        return i
    job = owner.get(rel[i][1])
    i += 1
    while job is not None and i < len(rel) and rel[i][0] <= t and owner.get(rel[i][1]) == job:
        i += 1
    return i


def slots_position(queue: list[Demand], slots: int, cap_c: list[int] | None = None) -> int:
    """Where a new job asking `slots` joins a Grid Engine queue (in priority order) under
    its default urgency, 1000 per slot requested, which outweighs waiting time: after the
    last waiting job that asks as many slots or more (measured on the test bed's qmaster:
    `qstat -urg` lists 16-slot jobs, then 8-slot ones, a new 8-slot job last of those,
    then 4-, 2- and 1-slot jobs however long they have waited). A queued job's slots are
    its CPUs where known; one that takes whole nodes asks all of their CPUs (`cap_c`, per
    node: the largest of the nodes it may use)."""
    k = 0
    for i, d in enumerate(queue):
        if d.job_cpus:
            asks = d.job_cpus
        elif d.cpus == WHOLE:
            caps = [cap_c[j] for j in d.eligible] if cap_c else []
            asks = d.nodes * max(caps or cap_c or [1])
        else:
            asks = d.nodes * max(d.cpus, 1)
        if asks >= slots:
            k = i + 1
    return k


def queue_starts(st: SimState, queue: list[Demand], reservation: Reservation = "easy",
                 top: int = 1, until: float = math.inf) -> dict[str, float]:
    """When each queued job starts in the simulation (seconds after now), by native id; a
    job the simulation never starts is left out. The whole queue is played out behind a
    probe that fits nowhere, under the scheduler's `reservation` (`earliest_start`);
    `until`: only the starts before it (the play-out stops there)."""
    deep = reservation == "easy" and top > 1  # PBS backfill_depth: the first `top` kept
    if (reservation == "plan" or deep) and len(st.names) * (len(queue) + 1) ** 2 <= PLAN_WORK:
        for d in queue:
            d.done, d.start, d.held = False, None, None
        _planned_earliest(st, queue, None, top=top if deep else None, until=until)
    else:
        never = Demand(nodes=len(st.names) + 1, cpus=WHOLE, gpus=0, duration=1.0,
                       eligible=[])
        earliest_start(st, queue, never, reservation=reservation, top=top, until=until)
    out: dict[str, float] = {}
    for d in queue:  # an array record's lanes share its id: its first task's start
        if d.native_id is not None and d.start is not None and d.start < until:
            out[d.native_id] = min(out.get(d.native_id, d.start), d.start)
    return out


@dataclass(frozen=True)
class Shape:
    """One part of a job placed with the others at once: `count` pieces of `cpus` (WHOLE:
    an empty node each, shared with nothing) and `gpus` each, on the node indices
    `eligible`; `apart`: its pieces on distinct nodes (a Slurm component's nodes), else
    several may share a node while it has room (PBS chunks placed freely)."""

    count: int
    cpus: int
    gpus: int
    eligible: frozenset[int]
    apart: bool = True


def _fit_all(shapes: list[Shape], free_c: list[int], free_g: list[int], cap_c: list[int],
             cap_g: list[int], how: str, empty_only: bool = False) -> bool:
    """Whether every piece of `shapes` finds room at once in what is free (first fit,
    largest pieces first). `how`: "free" (pieces of different shapes may share a node),
    "scatter" (one piece a node) or "pack" (all on one node); `empty_only`: only nodes
    nothing else runs on (PBS `place=excl`: the job's own pieces may share them)."""
    if empty_only:
        shapes = [Shape(s.count, s.cpus, s.gpus, frozenset(
            h for h in s.eligible if free_c[h] == cap_c[h] and free_g[h] == cap_g[h]),
            s.apart) for s in shapes]
    pieces = sorted(((s, i) for i, s in enumerate(shapes) for _ in range(s.count)),
                    key=lambda x: (x[0].cpus == WHOLE, x[0].gpus, x[0].cpus), reverse=True)
    if how == "pack":
        need_c = sum(s.cpus for s, _ in pieces if s.cpus != WHOLE)
        need_g = sum(s.gpus for s, _ in pieces)
        whole = any(s.cpus == WHOLE for s, _ in pieces)
        hosts = frozenset.intersection(*(s.eligible for s in shapes)) if shapes else frozenset()
        return any((free_c[h] == cap_c[h] and free_g[h] == cap_g[h]) if whole else
                   (free_c[h] >= need_c and free_g[h] >= need_g) for h in hosts)
    left_c, left_g = list(free_c), list(free_g)
    taken: set[int] = set()  # nodes a piece holds whole, or one piece each (scatter)
    used_by: dict[int, set[int]] = {}  # shape -> nodes its pieces hold
    for s, i in pieces:
        mine = used_by.setdefault(i, set())
        host = None
        for h in sorted(s.eligible):
            if h in taken or (s.apart and h in mine):
                continue
            if s.cpus == WHOLE:
                if left_c[h] == cap_c[h] and left_g[h] == cap_g[h] and cap_c[h] > 0:
                    host = h
                    break
            elif left_c[h] >= s.cpus and left_g[h] >= s.gpus:
                host = h
                break
        if host is None:
            return False
        if s.cpus == WHOLE or how == "scatter":
            taken.add(host)
        left_c[host] -= cap_c[host] if s.cpus == WHOLE else s.cpus
        left_g[host] -= cap_g[host] if s.cpus == WHOLE else s.gpus
        mine.add(host)
    return True


# a queued job's (start, end, node, cpus, gpus, its place in the queue)
Held = tuple[float, float, int, int, int, int]


def queue_held(st: SimState, queue: list[Demand], reservation: Reservation = "easy",
               probe_at: int | None = None, top: int = 1) -> list[Held]:
    """What the queued jobs ahead take, and when, as the scheduler's `reservation` starts
    them (the whole queue played out behind a probe that fits nowhere; under "plan", each
    through its walltime, as Slurm plans it): a job that starts with others at once must
    leave them the room the scheduler keeps for them (`together_start`). `probe_at`: the
    new job joins the queue there (Grid Engine, `slots_position`): the jobs behind it are
    not ahead."""
    queue_starts(st, queue, reservation, top)
    ahead = queue if probe_at is None else queue[:probe_at]
    return [(d.start, d.start + (d.planned if reservation == "plan" else d.duration), n, c,
             g, rank) for rank, d in enumerate(ahead)
            if d.start is not None and d.held for n, c, g in d.held]


def _kept_for(held: list[Held], t: float, reservation: Reservation, st: SimState,
              top: int = 1) -> list[Held]:
    """The room of the queued jobs ahead that the scheduler keeps from a job starting at
    t: what those started by then hold, and, of those still waiting, every one's under
    Slurm's plan (its nodes whole for its window, as Slurm's backfill map keeps them:
    `_Plan`), the first one's (the blocked head) under EASY, the first `top` ones' under
    PBS's `backfill_depth`, none's without reservations (Grid Engine's max_reservation
    0)."""
    kept = [h for h in held if h[0] <= t]
    if reservation == "plan":
        return kept + [(a, b, n, st.cap_c[n], st.cap_g[n], r) for a, b, n, _, _, r in held
                       if a > t]
    waiting = [h for h in held if h[0] > t]
    if reservation == "easy" and waiting:
        heads = set(sorted({h[5] for h in waiting})[:max(1, top)])
        kept += [h for h in waiting if h[5] in heads]
    return kept


def _held_peak(held: list[Held], t: float, until: float, n_nodes: int
               ) -> tuple[list[int], list[int]]:
    """Per node, the most CPUs and GPUs the queued jobs ahead hold at once in [t, until)."""
    peak_c, peak_g = [0] * n_nodes, [0] * n_nodes
    by_node: dict[int, list[Held]] = {}
    for h in held:
        if h[0] < until and h[1] > t:
            by_node.setdefault(h[2], []).append(h)
    for n, hs in by_node.items():
        for p in {t, *(h[0] for h in hs if h[0] > t)}:  # a peak begins where a job starts
            on = [h for h in hs if h[0] <= p < h[1]]
            peak_c[n] = max(peak_c[n], sum(h[3] for h in on))
            peak_g[n] = max(peak_g[n], sum(h[4] for h in on))
    return peak_c, peak_g


def together_start(st: SimState, shapes: list[Shape], t0: float, how: str = "free",
                   empty_only: bool = False, held: list[Held] | None = None,
                   duration: float = 0.0, reservation: Reservation = "plan",
                   top: int = 1) -> tuple[float | None, bool]:
    """The earliest time from `t0` at which every part of a job (PBS chunks of several
    shapes, a Slurm heterogeneous job's components) finds room at once in what the running
    jobs leave free then and the queued jobs ahead (`held`, from `queue_held`) leave free
    through its `duration`: the parts start together, so none may count on what another
    holds, nor delay a job ahead the scheduler protects (`reservation`: every one under
    Slurm's plan, the blocked head under EASY, none under Grid Engine's default; those
    started by then always hold their room). None: not even when every running job has
    ended. The flag: whether the queued jobs ahead moved the start (room the running jobs
    alone leave sooner)."""
    held = held or []
    free_c, free_g = list(st.free_c), list(st.free_g)
    rel = st.releases  # sorted by end
    k = 0
    times = sorted({t0, *(r[0] for r in rel if r[0] > t0),
                    *(h[1] for h in held if h[1] > t0)})
    by_queue = False
    for t in times:
        while k < len(rel) and rel[k][0] <= t:
            _, _, h, c, g = rel[k]
            free_c[h] += c
            free_g[h] += g
            k += 1
        if not _fit_all(shapes, free_c, free_g, st.cap_c, st.cap_g, how, empty_only):
            continue
        peak_c, peak_g = _held_peak(_kept_for(held, t, reservation, st, top), t,
                                    t + max(duration, 1.0), len(free_c))
        left_c = [max(0, f - p) for f, p in zip(free_c, peak_c, strict=True)]
        left_g = [max(0, f - p) for f, p in zip(free_g, peak_g, strict=True)]
        if _fit_all(shapes, left_c, left_g, st.cap_c, st.cap_g, how, empty_only):
            return t, by_queue
        by_queue = True
    return None, by_queue
