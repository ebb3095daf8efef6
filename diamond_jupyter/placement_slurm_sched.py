"""What a Slurm site's own configuration changes in when a job starts, beyond the queue:
the flags of the job's QOS that lift its partition's limits (PartitionTimeLimit,
PartitionMaxNodes, PartitionMinNodes) or ask for a reservation (RequiresReservation);
memory that is not a consumable resource (SelectTypeParameters CR_Core, CR_CPU); whole
nodes to every job (SelectType=select/linear); the
waiting jobs Slurm's backfill keeps no slot for (their QOS's NoReserve, a priority below
bf_min_prio_reserve, a wait shorter than bf_min_age_reserve); the grid its backfill plans
on (bf_resolution); a job's --contiguous. All read from the snapshot's one batch of
commands; pure functions."""

from __future__ import annotations

import math
from collections.abc import Collection
from datetime import datetime

from .model import Job, JobSpec, JobState, Partition, SiteSnapshot, hms
from .placement_fit import Req, time_limit
from .placement_limits import job_qos
from .placement_sim import Demand, held_reason

# QOS flag (lower case) -> the partition limit it lifts for the QOS's jobs, and its name
_LIFTS = {"partitiontimelimit": ("max_time_s", "MaxTime"),
          "partitionmaxnodes": ("max_nodes", "MaxNodes"),
          "partitionminnodes": ("min_nodes", "MinNodes")}


def _flags(snap: SiteSnapshot, qos: str | None) -> set[str]:
    q = (snap.qos or {}).get(qos or "")
    return {f.lower() for f in q.flags} if q is not None else set()


def _beyond(spec: JobSpec, p: Partition, field: str) -> bool:
    """Whether the job asks past the partition limit `field`."""
    r = spec.resources
    limit = getattr(p, field)
    if field == "max_time_s":
        return bool(r.walltime_s and r.walltime_s > limit)
    nodes = r.nodes or 1
    return nodes > limit if field == "max_nodes" else nodes < limit


def slurm_config_view(spec: JobSpec, snap: SiteSnapshot, account: str | None
                      ) -> tuple[SiteSnapshot, list[str]]:
    """The snapshot as the job meets it, and what the user reads of it: each partition
    with the limits its QOS's flags lift for it (PartitionTimeLimit: the QOS's MaxWall
    holds instead; PartitionMaxNodes, PartitionMinNodes: its own node limits); under
    SelectType=select/linear, every partition that shares no nodes (OverSubscribe NO or
    EXCLUSIVE) giving whole nodes and each node a job runs on held whole; and, where
    memory is not consumable, no node's memory counted as held by its jobs."""
    said: list[str] = []
    parts = []
    for p in snap.partitions:
        qos = job_qos(spec.qos, p, snap, account)[0]
        flags = _flags(snap, qos)
        lifted = {field: None for flag, (field, _) in _LIFTS.items()
                  if flag in flags and getattr(p, field) is not None}
        for flag, (field, name) in _LIFTS.items():
            if field in lifted and _beyond(spec, p, field):
                value = hms(p.max_time_s or 0) if field == "max_time_s" else getattr(p, field)
                said.append(f"partition {p.name}: QOS {qos} has flag "
                            f"{_spelled(snap, qos, flag)}: the partition's {name} {value} "
                            "does not hold its jobs")
        parts.append(p.model_copy(update=lifted) if lifted else p)
    if snap.select_type == "select/linear" and (linear := [
            p.name for p in parts if not _shares_nodes(p)]):
        parts = [p.model_copy(update={"oversubscribe": LINEAR_WHOLE}) if p.name in linear
                 else p for p in parts]
        shared = {n for p in parts if p.name not in linear for n in p.nodes}
        # a node a job runs on is that job's whole (no other job shares it)
        update_nodes = [n.model_copy(update={"cpus_allocated": n.cpus,
                                             "gpus_allocated": n.gpus})
                        if (n.cpus_allocated or n.gpus_allocated) and n.name not in shared
                        else n for n in snap.nodes]
        snap = snap.model_copy(update={"nodes": update_nodes})
        said.append("Slurm gives every job whole nodes here (SelectType=select/linear): a "
                    "job, yours and each waiting one, takes each of its nodes whole, whatever "
                    "CPUs it asks")
    update: dict = {"partitions": parts}
    if snap.memory_consumable is False and any(n.memory_allocated for n in snap.nodes):
        update["nodes"] = [n.model_copy(update={"memory_allocated": 0}) for n in snap.nodes]
        said.append("memory is not a consumable resource here (SelectTypeParameters without "
                    "_Memory): what running jobs hold does not keep the job off a node, "
                    "only each node's own size counts")
    return snap.model_copy(update=update), said


# what a partition's OverSubscribe reads as where SelectType=select/linear gives every job
# whole nodes (its OverSubscribe NO or EXCLUSIVE): whole nodes, as EXCLUSIVE does
LINEAR_WHOLE = "EXCLUSIVE (SelectType=select/linear)"


def _shares_nodes(p: Partition) -> bool:
    """Whether a partition lets jobs share nodes under select/linear (OverSubscribe YES or
    FORCE: node by node, time-sliced or not)."""
    return (p.oversubscribe or "").upper().startswith(("YES", "FORCE"))


def _spelled(snap: SiteSnapshot, qos: str | None, lower: str) -> str:
    """A flag of the QOS as the site spells it."""
    q = (snap.qos or {}).get(qos or "")
    return next((f for f in (q.flags if q is not None else []) if f.lower() == lower), lower)


def requires_reservation(spec: JobSpec, qos: str | None, snap: SiteSnapshot) -> str | None:
    """Why the job's QOS refuses it: flag RequiresReservation and no --reservation named."""
    if spec.reservation or "requiresreservation" not in _flags(snap, qos):
        return None
    return (f"QOS {qos} has flag RequiresReservation: sbatch refuses a job of it that names "
            "no reservation (name one with --reservation)")


def unreserved_jobs(snap: SiteSnapshot, now: datetime) -> dict[str, str]:
    """The waiting jobs Slurm's backfill keeps no slot for, by native id, with why: their
    QOS has flag NoReserve, their priority (sprio) is below bf_min_prio_reserve, they
    have waited less than bf_min_age_reserve (since their submit, as squeue gives it), or
    bf_job_part_count_reserve jobs of their partition come before them (by priority, as
    the backfill takes them, highest first; in queue order where the snapshot has none or
    two are equal; held jobs not counted: the backfill does not plan them; nor those kept
    from a slot for one of the reasons before: Slurm's backfill counts a job as it
    reserves its slot)."""
    out: dict[str, str] = {}
    least, young = snap.bf_min_prio_reserve, snap.bf_min_age_reserve_s
    top, ahead = snap.bf_job_part_count_reserve, dict[str, int]()
    known = snap.job_priorities or {}

    def priority(j: Job) -> int | None:  # sprio's by job id; slurmrestd's by task id too
        return known.get(j.native_id, known.get(j.native_id.split("_")[0]))

    waiting = [j for j in snap.jobs if j.state == JobState.PENDING]
    # a stable sort: the queue's own order kept among equals (slurmrestd lists by job id)
    waiting.sort(key=lambda j: -p if (p := priority(j)) is not None else 1)
    for j in waiting:
        prio = priority(j)
        part = (j.partition or "").split(",")[0]
        if "noreserve" in _flags(snap, j.qos):
            out[j.native_id] = f"QOS {j.qos} NoReserve"
        elif least and prio is not None and prio < least:
            out[j.native_id] = f"priority {prio} below bf_min_prio_reserve {least}"
        elif young and j.submitted_at is not None \
                and (now - j.submitted_at).total_seconds() < young:
            out[j.native_id] = f"waiting less than bf_min_age_reserve {hms(young)}"
        elif top and not held_reason(j.reason):
            # counted only here: a job kept from a slot above takes none of the first N
            ahead[part] = ahead.get(part, 0) + 1
            if ahead[part] > top:
                out[j.native_id] = (f"after the first {top} waiting job"
                                    f"{'s' if top > 1 else ''} of partition {part}, "
                                    f"bf_job_part_count_reserve={top}")
    return out


def behind_unreserved(queue: list[Demand], at: int | None, unreserved: Collection[str]
                      ) -> tuple[list[Demand], int | None]:
    """The queue with the jobs ahead of the probe that keep no slot moved behind it (they
    start only where they delay no job that keeps one), and the probe's place."""
    k = len(queue) if at is None else at
    ahead = queue[:k]
    moved = [d for d in ahead if d.native_id in unreserved]
    if not moved:
        return queue, at
    kept = [d for d in ahead if d.native_id not in unreserved]
    return kept + moved + queue[k:], len(kept)


# how the notes begin (after their partition) that the job keeps no slot in the backfill
# plan, and that waiting jobs ahead keep none
OWN_UNRESERVED_SAID = "the job keeps no slot in Slurm's backfill plan"
UNRESERVED_AHEAD_SAID = "Slurm's backfill keeps no slot for"


def own_unreserved(snap: SiteSnapshot, qos: str | None, priority: int | None) -> str | None:
    """Why the new job itself keeps no slot in the backfill plan: its QOS's NoReserve, or
    its priority below bf_min_prio_reserve."""
    if "noreserve" in _flags(snap, qos):
        return f"its QOS {qos} has flag NoReserve"
    least = snap.bf_min_prio_reserve
    if least and priority is not None and priority < least:
        return f"its priority, about {priority}, is below bf_min_prio_reserve {least}"
    if snap.bf_min_age_reserve_s:
        return (f"none until it has waited bf_min_age_reserve "
                f"{hms(snap.bf_min_age_reserve_s)}")
    return None


def on_resolution(start_s: float, now: datetime, resolution: int | None) -> float:
    """A backfill start (seconds from now) on Slurm's bf_resolution grid (the times its
    plan keeps are rounded up to it); a start now, or no resolution read, as it is."""
    if start_s <= 0 or not resolution or resolution <= 60:
        return start_s
    at = now.timestamp() + start_s
    return math.ceil(at / resolution - 1e-9) * resolution - now.timestamp()


def partition_limit_missed(req: Req, p: Partition) -> str | None:
    """Which limit of `p` the job is past (MaxTime, MaxNodes, MinNodes; as its QOS's
    flags leave them), said for EnforcePartLimits=ALL; None where it meets them."""
    if req.walltime and p.max_time_s and time_limit(req, p.max_time_s) is None:
        return f"its time limit {hms(req.walltime)} is above MaxTime {hms(p.max_time_s)}"
    if p.max_nodes is not None and req.nodes > p.max_nodes:
        return f"its {req.nodes} nodes are more than MaxNodes {p.max_nodes}"
    if p.min_nodes is not None and req.nodes < p.min_nodes:
        return f"its {req.nodes} nodes are fewer than MinNodes {p.min_nodes}"
    return None


def enforced_everywhere(reqs: dict[str, Req], parts: list[Partition], snap: SiteSnapshot
                        ) -> str | None:
    """Why sbatch refuses a job that names several partitions under EnforcePartLimits=ALL:
    one of them has a limit the job is past (under ANY or NO it runs in those it meets)."""
    if snap.enforce_part_limits != "ALL" or len(parts) < 2:
        return None
    missed = [f"partition {p.name}: {why}" for p in parts
              if p.name in reqs and (why := partition_limit_missed(reqs[p.name], p))]
    if not missed:
        return None
    return ("EnforcePartLimits=ALL: sbatch refuses a job past the limits of any partition it "
            "names, though another could run it (" + "; ".join(missed) + "); name only "
            "those whose limits it meets")


# the most runs of contiguous nodes a --contiguous job is planned on, each apart (beyond
# them the start is planned as if any nodes would do, and that is said)
MAX_CONTIGUOUS_RUNS = 24


def asks_contiguous(spec: JobSpec) -> bool:
    """Whether a Slurm job asks --contiguous (its nodes adjacent in the node order)."""
    return any(d.dialect == "slurm" and d.option == "--contiguous" for d in spec.unknown)


def contiguous_runs(eligible: Collection[int], count: int) -> list[list[int]]:
    """Each run of `count` adjacent node indices (Slurm's node order, as `scontrol show
    node` lists them) all of which are `eligible`."""
    ok = set(eligible)
    return [list(range(i, i + count)) for i in sorted(ok)
            if all(i + k in ok for k in range(count))]


def contiguous_room(room: list[str], count: int, order: dict[str, int] | None
                    ) -> list[str]:
    """Of the nodes with room for the job now (`room`), those of the first run of `count`
    adjacent in Slurm's node order (`order`: a node's place; None: the job does not ask
    --contiguous, `room` as it is); none where no run has room."""
    if order is None:
        return room
    places = {order[n]: n for n in room if n in order}
    runs = contiguous_runs(places, count)
    return [places[i] for i in runs[0]] if runs else []
