"""What a job meets of the jobs ahead of it in a queue, and the notes that say it: the
partitions a Slurm job preempts (and where suspended jobs keep their memory), the
suspended jobs it waits for, the waiting jobs past which Slurm's backfill tests no more
and so passes the job over (bf_max_job_user: the user's; bf_max_job_part: a partition's;
bf_max_job_user_part: the user's in a partition; bf_max_job_test: the site's), and the
jobs waiting for a begin time, a dependency or nodes out, or in a partition DOWN, past
their deadline or for their reservation, which come ahead of it from then or hold back
no job. Pure code."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import datetime

from .config import SiteConfig
from .dialects.outputs_common import job_hosts
from .model import JobStatus, Partition, SiteSnapshot, hms
from .placement_deps import DependencyGate, ids_of, parse_dependency, singleton_parents
from .placement_fit import _few, aware
from .placement_sim import (
    NEVER_AS_ASKED,
    OUT_OF_SERVICE,
    Demand,
    Reservation,
    SimState,
    begins_in,
    dependency_gate,
    held_reason,
    queue_starts,
    unavailable_nodes,
    waits_for_nodes_out,
)
from .placement_time import READY_TOLERANCE_S, plus_seconds

PARTITION_PRIO = "preempt/partition_prio"
QOS_PREEMPT = "preempt/qos"


def tiers_preempt(snap: SiteSnapshot) -> bool:
    """Whether partitions of a higher PriorityTier preempt the jobs of lower ones: Slurm's
    PreemptType is preempt/partition_prio, or was not read (then assumed so, as before).
    preempt/none preempts nothing; preempt/qos goes by QOS, not by partition."""
    return snap.preempt_type in (None, PARTITION_PRIO)


def _tier_victims(p: Partition, snap: SiteSnapshot, members: dict[str, list[str]]
                  ) -> frozenset[str]:
    """The partitions a job in `p` would preempt by PriorityTier alone: a lower tier, a
    PreemptMode not OFF, nodes shared with p (PreemptType aside)."""
    if p.priority_tier is None:
        return frozenset()
    mine = set(members.get(p.name, []))
    return frozenset(q.name for q in snap.partitions if q.name != p.name
                     and (q.preempt_mode or "OFF").upper() != "OFF"
                     and q.tier < p.priority_tier
                     and mine & set(members.get(q.name, [])))


def _preempts(p: Partition, snap: SiteSnapshot, members: dict[str, list[str]]
              ) -> frozenset[str]:
    """The partitions whose running jobs a Slurm job in `p` preempts (preempt/
    partition_prio): a lower PriorityTier, a PreemptMode not OFF, nodes shared with p."""
    return _tier_victims(p, snap, members) if tiers_preempt(snap) else frozenset()


def preemption_off_note(p: Partition, snap: SiteSnapshot, members: dict[str, list[str]]
                        ) -> str | None:
    """What a job in `p` is told where PriorityTier alone would have it preempt the jobs
    of lower partitions but the site's PreemptType does not (None: nothing to say)."""
    lower = _tier_victims(p, snap, members)
    if tiers_preempt(snap) or not lower:
        return None
    how = "preempts no job" if snap.preempt_type == "preempt/none" else \
        "preempts by QOS, not by partition" if snap.preempt_type == QOS_PREEMPT \
        else "does not preempt by partition"
    unless = " unless their QOS is one the job's QOS preempts" \
        if snap.preempt_type == QOS_PREEMPT else ""
    return (f"partition {p.name}: PreemptType={snap.preempt_type} {how}: the running jobs "
            f"of partition {', '.join(sorted(lower))} (a lower PriorityTier) keep their "
            f"nodes until they end{unless}")


def qos_victims(job_qos: str | None, snap: SiteSnapshot) -> dict[str, float]:
    """Under PreemptType=preempt/qos, the running jobs a job of QOS `job_qos` preempts
    (native id -> their QOS's GraceTime, s): those of the QOS its Preempt names whose
    PreemptMode is not OFF (a PreemptMode of `cluster` is the site's, `scontrol show
    config`'s). {} elsewhere, or where the QOS or the jobs' QOS are not known."""
    known = snap.qos or {}
    mine = known.get(job_qos or "")
    if snap.preempt_type != QOS_PREEMPT or mine is None or not mine.preempts:
        return {}
    return {j.native_id: float(q.grace_time_s or 0) for j in snap.running
            if j.qos in mine.preempts and (q := known.get(j.qos)) is not None
            and _qos_mode(q.preempt_mode, snap) != "OFF"}


def _qos_mode(mode: str | None, snap: SiteSnapshot) -> str:
    """A QOS's PreemptMode as it acts: `cluster` is the site-wide PreemptMode (as if not
    OFF where that was not read, as before it was)."""
    mode = (mode or "").upper()
    return (snap.site_preempt_mode or "") if mode == "CLUSTER" else mode


def preemption_delays(victims: Collection[str], snap: SiteSnapshot) -> dict[str, float]:
    """Each preempted partition's GraceTime (seconds; 0 where none or not read): how long
    its jobs chosen for preemption run on before they stop."""
    return {q.name: float(q.grace_time_s or 0) for q in snap.partitions if q.name in victims}


def _suspended_hold(snap: SiteSnapshot, victims: Collection[str], mem: int
                    ) -> dict[str, list[str]]:
    """The nodes (by the partition preempted there) where preempting does not make room
    for a job needing `mem` MB a node: the running jobs there are of partitions whose
    PreemptMode is SUSPEND, and suspended jobs keep their memory (Slurm's preemption
    page), so the node's memory in use (AllocMem) leaves less than `mem`."""
    suspend = {q.name for q in snap.partitions if q.name in victims
               and "SUSPEND" in (q.preempt_mode or "").upper().split(",")}
    if not suspend or mem <= 0:
        return {}
    short = {n.name for n in snap.nodes
             if n.memory_mb and n.memory_mb - n.memory_allocated < mem}
    held: dict[str, list[str]] = {}
    for j in snap.running:
        if j.partition in suspend:
            for h in job_hosts(j.node_list):
                if h in short and h not in held.setdefault(j.partition, []):
                    held[j.partition].append(h)
    return {q: sorted(hs) for q, hs in held.items() if hs}


def _suspended_notes(part: str, st: SimState, snap: SiteSnapshot, nodes: Collection[str],
                     start: float) -> list[str]:
    """What the job starting `start` s from now in partition `part` (of `nodes`) meets of
    the suspended jobs there (`st.suspended`, planned by time limits): one suspended by
    hand resumes at a time not known (its resources held, the safe side); one it waits for
    (it starts no sooner than that job's planned end) resumes when planned."""
    out = []
    for j in snap.running:
        plan = st.suspended.get(j.native_id)
        hosts = [h for h in job_hosts(j.node_list) if h in nodes]
        if plan is None or not hosts:
            continue
        resume, end = plan
        where = f"partition {part}: job {j.native_id} on {_few(set(hosts))} is suspended"
        if resume is None:
            out.append(f"{where}, by no job seen there (by hand?): it resumes at a time not "
                       f"known; its resources are planned as held (not free) for all its "
                       f"time limit left ({hms(end)}) from now, the safe side")
        elif start >= end - READY_TOLERANCE_S:
            out.append(f"{where}: the job waits for it, planned to resume in {hms(resume)} "
                       f"(when the jobs that suspended it end) and end in {hms(end)}")
    return out


def _backfill_passes_over(cfg: SiteConfig, snap: SiteSnapshot) -> set[str] | None:
    """The user's waiting jobs (native ids) on a Slurm site whose backfill tests no more of
    theirs (SchedulerParameters bf_max_job_user, reached by them): it passes the job over
    (the newest, the lowest of theirs by age); None where it tests it, or where there is no
    backfill (sched/builtin: every job waits its turn anyway)."""
    cap = snap.bf_max_job_user
    if cfg.scheduler != "slurm" or not cap or not snap.user or snap.backfill == "fifo":
        return None
    # the backfill tests only jobs that may start: not those held, waiting for a
    # dependency or a begin time, or that can never start as asked
    mine = {j.native_id for j in snap.pending if j.user == snap.user
            and not held_reason(j.reason)}
    return mine if len(mine) >= cap else None


def partition_passes_over(cfg: SiteConfig, snap: SiteSnapshot, partition: str,
                          behind: Callable[[str], bool] | None = None) -> set[str] | None:
    """The jobs waiting in `partition` ahead of the new job (native ids) on a Slurm site
    whose backfill tests no more of one partition's (SchedulerParameters bf_max_job_part,
    reached by them): it passes the job over; None where it tests it, or where there is no
    backfill. The backfill tests jobs in priority order: a job `behind` says waits behind
    the new job (of a lower priority) is tested after it, so it is not counted."""
    return _partition_cap(cfg, snap, partition, snap.bf_max_job_part, None, behind)


def site_passes_over(cfg: SiteConfig, snap: SiteSnapshot,
                     behind: Callable[[str], bool] | None = None) -> set[str] | None:
    """As `partition_passes_over`, of every job waiting ahead in any partition where the
    backfill tests no more waiting jobs in all (bf_max_job_test)."""
    return _partition_cap(cfg, snap, None, snap.bf_max_job_test, None, behind)


def user_partition_passes_over(cfg: SiteConfig, snap: SiteSnapshot, partition: str,
                               behind: Callable[[str], bool] | None = None
                               ) -> set[str] | None:
    """As `partition_passes_over`, of the user's own jobs waiting in `partition` where the
    backfill tests no more of one user's in one partition (bf_max_job_user_part)."""
    if not snap.user:
        return None
    return _partition_cap(cfg, snap, partition, snap.bf_max_job_user_part, snap.user, behind)


def _partition_cap(cfg: SiteConfig, snap: SiteSnapshot, partition: str | None,
                   cap: int | None, user: str | None, behind: Callable[[str], bool] | None
                   ) -> set[str] | None:
    """The jobs waiting in `partition` (None: in any) ahead of the new job (`user`'s only,
    where given) once they are `cap` or more; None below it, or where there is no
    backfill."""
    if cfg.scheduler != "slurm" or not cap or snap.backfill == "fifo":
        return None
    waiting = {j.native_id for j in snap.pending if not held_reason(j.reason)
               and (partition is None or partition in (j.partition or "").split(","))
               and (user is None or j.user == user)
               and not (behind is not None and behind(j.native_id))}
    return waiting if len(waiting) >= cap else None


def _backfill_tests_from(st: SimState, queue: list[Demand], partition: str,
                         res: Reservation, top: int, mine: set[str], snap: SiteSnapshot,
                         cap: int | None = None) -> float:
    """When a job passed over by Slurm's backfill (`_backfill_passes_over`: `mine` wait)
    may start (seconds from now, the queue played out): once so many of `mine` have started
    that fewer than bf_max_job_user (`cap`: bf_max_job_part, `mine` the partition's jobs)
    still wait (the backfill tests it then), or once every
    job waiting ahead in `partition` has (Slurm's main scheduler starts a partition's jobs
    in priority order, none after one that cannot start)."""
    ahead = [replace(d, done=False, start=None, held=None) for d in queue]
    queue_starts(st, ahead, res, top=top)
    own: dict[str, float] = {}
    for d in ahead:
        if d.native_id in mine:
            s = math.inf if d.start is None else d.start
            own[d.native_id] = min(own.get(d.native_id, s), s)
    started = sorted(own.values()) + [math.inf] * (len(mine) - len(own))
    tested = started[len(mine) - (cap or snap.bf_max_job_user or 0)]
    in_order = max((d.start for d in ahead if d.start is not None
                    and partition in (d.partition or "").split(",")), default=0.0)
    return min(tested, in_order)


def _dependency_note(where: str, j: JobStatus, gate: DependencyGate, at: float) -> str:
    """What a job waiting on its dependency (`gate`), free from `at` s from now, means for
    a job starting later in the queue `where` (`partition p`): it is ahead of it from
    then."""
    dep = gate.dependency
    ids = dep.parent_ids()
    kinds = dep.kinds()
    which = _few(set(ids))
    their = "their" if len(ids) > 1 else "its"
    if kinds == {"after"}:
        waits = f"job {which} to start"
        planned = f"{their} planned start"
    elif "aftercorr" in kinds:
        waits = f"the tasks of job {which} to end, task by task (aftercorr)"
        planned = f"{their} first task's planned end"
    else:
        waits = f"job {which} to end"
        planned = f"{their} planned end"
    if gate.queued:
        planned += (f" in the plan (job {_few(set(gate.queued))} waiting "
                    + ("themselves)" if len(gate.queued) > 1 else "itself)"))
    ok = sorted({p for t in dep.terms if t.kind == "afterok" for p, _ in t.parents})
    assumed = (f"; job {_few(set(ok))} taken to succeed (afterok: should it fail, job "
               f"{j.native_id} never starts, and the job may start sooner)" if ok else "")
    if gate.gone:
        assumed += (f"; job {_few(set(gate.gone))} gone from the queue, taken to have "
                    "succeeded (aftercorr: squeue cannot tell; a failed task would hold "
                    "its child task for good)")
    return (f"{where}: job {j.native_id} waits for {waits} (Dependency "
            f"{j.dependency}): from {planned}, +{hms(at)}, it takes its place in the queue "
            f"by priority, ahead of the job{assumed}")


def _waits_on_dependency(j: JobStatus) -> bool:
    """Whether a waiting job's reason says it waits on a dependency: Slurm's Dependency,
    LSF's pending reason, Flux's `dependency: ...`, or its dependency read (PBS, Grid
    Engine: held, what it waits for read by the dialect; PBS: jobs to come, `on:N`)."""
    reason = (j.reason or "").strip().lower()
    return bool(j.dependency) or reason in ("dependency", _LSF_DEPENDENCY_WAIT) \
        or reason.startswith("dependency: ") or bool(_PBS_ON_COUNT.search(j.reason or ""))


_LSF_DEPENDENCY_WAIT = "job dependency condition not satisfied"
# the PBS dialect's reason for a job still counting down `on:N` (`pbs_commands`)
_PBS_ON_COUNT = re.compile(r"\(depend=on:([0-9]+)\): not known when")


def _waiting_notes(part: str, snap: SiteSnapshot, members: dict[str, list[str]],
                   start: float, now: datetime, queue: list[Demand] | None = None,
                   st: SimState | None = None, res: Reservation = "plan",
                   where: str | None = None) -> list[str]:
    """What the job starting `start` s from now in partition `part` meets of the Slurm jobs
    waiting there for something other than room: one whose begin time, or whose
    dependency's parents' start or end, comes first is ahead of it from then; one waiting
    for nodes out until an admin acts, or that can never start as asked, holds back no
    job; one waiting for a parent to fail (afternotok) is not counted (parents are taken
    to succeed). `queue`, `st`: the walltime view, whose play-out (`res`) says when a
    parent still waiting starts or ends. `where`: the queue as another scheduler names it
    (`queue q`), for its site: the jobs waiting on a dependency, with those whose
    dependency is not known left out (said)."""
    mine = set(members.get(part, []))
    at_part = where or f"partition {part}"
    by_name = {n.name: n for n in snap.nodes}
    begin: list[str] = []
    out_for: dict[str, set[str]] = {}  # the nodes waited for -> the jobs waiting
    never: dict[str, set[str]] = {}  # reason -> the jobs
    # (the other schedulers') jobs waiting on a dependency the output does not say in
    # full, or on a parent not in the queue: left out
    unread: set[str] = set()
    lone: set[str] = set()  # Slurm singletons of no namesake to wait for: met, not yet freed
    to_come: dict[str, int] = {}  # PBS jobs still counting down `on:N`: N jobs to come
    # the running jobs' planned ends (their walltimes'), which a dependency waits for
    planned_ends = [(r, (aware(r.started_at) - now).total_seconds() + r.walltime_s)
                    for r in snap.running if r.started_at and r.walltime_s] \
        if any(j.dependency for j in snap.pending) else []
    waiting = {i for j in snap.pending for i in ids_of(j.native_id)} \
        if any(j.dependency for j in snap.pending) else set()
    freed: dict[str, float] | None = None  # a chained job's time, the walltime plan's
    for n, j in enumerate(snap.pending):
        # (a job of no queue, Flux's without queues or one Grid Engine has not yet put in
        # one, may start on any of the site's nodes)
        if j.partition and not any(mine.intersection(members.get(q, []))
                                   for q in j.partition.split(",")):
            continue
        begins = begins_in(j, now)
        gate = dependency_gate(j, snap, planned_ends, now, waiting, snap.pending, n) \
            if j.dependency else None
        at = gate.at() if gate is not None else None
        if gate is not None and gate.queued and queue is not None and st is not None:
            if freed is None:  # played out once: each chained job's time is its not_before
                ahead = [replace(d, done=False, start=None, held=None) for d in queue]
                queue_starts(st, ahead, res)
                freed = {d.native_id: d.not_before for d in ahead
                         if d.gate is not None and d.gate.queued and d.native_id}
            at = freed.get(j.native_id)
        if begins is not None and 0 < begins < start:
            begin.append(f"{at_part}: job {j.native_id} waits for its begin time "
                         f"{plus_seconds(now, begins):%Y-%m-%d %H:%M} "
                         f"({(j.reason or '').strip()}): from then it takes its place in "
                         "the queue by priority, ahead of the job")
        elif gate is not None and at == math.inf:
            begin.append(f"{at_part}: job {j.native_id} waits for job "
                         f"{_few(set(gate.dependency.parent_ids()))} to fail (Dependency "
                         f"{j.dependency}): parents are taken to succeed, so it is not "
                         "counted ahead of the job")
        elif gate is not None and at is not None and at < start:
            begin.append(_dependency_note(at_part, j, gate, at))
        elif waits_for_nodes_out(j, by_name, snap.node_timeouts):
            out_for.setdefault(_few(set(unavailable_nodes(j))), set()).add(j.native_id)
        elif NEVER_AS_ASKED.fullmatch(j.reason or "") or \
                OUT_OF_SERVICE.fullmatch(j.reason or ""):
            never.setdefault((j.reason or "").strip(), set()).add(j.native_id)
        elif where is not None and (on := _PBS_ON_COUNT.search(j.reason or "")):
            to_come[j.native_id] = int(on.group(1))
        elif where is not None and gate is None and _waits_on_dependency(j):
            unread.add(j.native_id)
        elif gate is None and _lone_singleton(j, snap):
            lone.add(j.native_id)
    said = begin[:4] + ([f"{at_part}: {len(begin) - 4} more jobs wait for a begin "
                         "time before the job's start (BeginTime), ahead of it from then"]
                        if len(begin) > 4 else [])
    for nodes, ids in sorted(out_for.items()):
        said.append(f"{at_part}: {_jobs_wait(ids)} for {nodes} (ReqNodeNotAvail), down or "
                    "drained until an admin acts: it can start nowhere else, so it holds "
                    "back no job" if len(ids) == 1 else
                    f"{at_part}: {_jobs_wait(ids)} for {nodes} (ReqNodeNotAvail), down or "
                    "drained until an admin acts: they can start nowhere else, so they hold "
                    "back no job")
    for reason, ids in sorted(never.items()):
        who = f"job {next(iter(ids))}" if len(ids) == 1 else f"jobs {_few(ids)}"
        why = _OUT_OF_SERVICE_SAID.get(reason, "can never start as asked")
        said.append(f"{at_part}: {who} {why} ({reason}): "
                    + ("it holds" if len(ids) == 1 else "they hold") + " back no job")
    if unread:
        said.append(f"{where}: {_jobs_wait(unread)} on a dependency that the queue's output does "
                    "not say in full (or on a job not in the queue): not known when, so "
                    + ("it is" if len(unread) == 1 else "they are")
                    + " left out, not counted ahead of the job")
    if len(to_come) == 1:
        [(jid, n)] = to_come.items()
        said.append(f"{where}: job {jid} waits for {n} more job(s), not submitted yet, to "
                    f"name it with a before kind (depend=on:{n}): not known when, so it is "
                    "left out, not counted ahead of the job")
    elif to_come:
        said.append(f"{where}: jobs {_few(set(to_come))} wait for jobs not submitted yet to "
                    "name them with a before kind (depend=on:N): not known when, so they "
                    "are left out, not counted ahead of the job")
    if lone:
        said.append(f"{at_part}: {_jobs_wait(lone)} on singleton (its other dependencies met) "
                    "with no job of its name and user running or submitted before it: met, "
                    "freed at slurmctld's next pass, not known when, so "
                    + ("it is" if len(lone) == 1 else "they are")
                    + " left out, not counted ahead of the job")
    return said


# what a waiting job's reason of OUT_OF_SERVICE means
_OUT_OF_SERVICE_SAID = {
    "PartitionDown": "starts nowhere until an admin sets its partition UP",
    "PartitionInactive": "starts nowhere until an admin sets its partition UP",
    "DeadLine": "cannot end by its --deadline and is being cancelled",
    "Reservation": "waits for its reservation to begin and runs inside it"}


def _lone_singleton(j: JobStatus, snap: SiteSnapshot) -> bool:
    """Whether a Slurm job waits on singleton alone (its other terms met, or any one term
    enough: joined by '?') with no job of its name and user running or waiting submitted
    before it: the dependency is met, the job still waiting until slurmctld frees it."""
    dep = parse_dependency(j.dependency) if (j.reason or "").strip() == "Dependency" else None
    return dep is not None and "singleton" in dep.kinds() \
        and (dep.kinds() == {"singleton"} or not dep.every) and bool(j.name and j.user) \
        and not singleton_parents(j, snap.running, snap.pending)


def _jobs_wait(ids: set[str]) -> str:
    """`job 30 waits` or `jobs 30, 31 wait`."""
    return f"job {next(iter(ids))} waits" if len(ids) == 1 else f"jobs {_few(ids)} wait"


def _preempted_by(p: Partition, parts: list[Partition], members: dict[str, list[str]],
                  able: Collection[str] | None = None) -> str | None:
    """Why a job in `p` may be preempted (its PreemptMode is not OFF and a partition of a
    higher PriorityTier shares the nodes of `p` that can run it, `able`, else any of p's:
    Slurm's preempt/partition_prio), else None. The partition named is one sharing those
    nodes: a V100 job is preempted by the V100 nodes' other partition, not the CPU one's."""
    mode = (p.preempt_mode or "OFF").upper()
    if mode == "OFF":
        return None
    mine, tier = set(members.get(p.name, [])), p.tier
    if able is not None:
        mine &= set(able)
    over = [q for q in parts if q.name != p.name and q.tier > tier
            and mine & set(members.get(q.name, []))]
    if not over:
        return None
    top = max(over, key=lambda q: q.tier)
    return (f"the job may be preempted (PreemptMode={mode}) by jobs of partition {top.name} "
            f"(PriorityTier {top.priority_tier} above its {tier}) on the same nodes")


def _preempted_on(p: Partition, parts: list[Partition], members: dict[str, list[str]],
                  able: set[str], counted: list[set[str]], only_counted: bool) -> str | None:
    """`_preempted_by`, the partition named from the nodes the job surely runs on: those
    meeting a counted term of its constraint (`counted`, from `counted_nodes`), the
    fewest first; from the rest of `able` only when the counts leave some of its nodes
    free to be any."""
    for met in sorted((able & m for m in counted), key=len):
        if met and (by := _preempted_by(p, parts, members, met)) is not None:
            return by
    return None if only_counted else _preempted_by(p, parts, members, able)
