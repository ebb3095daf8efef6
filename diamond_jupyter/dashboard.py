"""The dashboard's data: every job in each site's queue (all users') with its predicted
start, and a compact usage time series per site.

Pure: snapshots, calibrations and the store's own jobs in; JSON-ready rows out.

Predicted start of a pending job (seconds from the moment the dashboard is built), as
placement predicts a new job's:
- the scheduler's own estimate for that job (its `estimated_start` in the queue view),
  corrected by the site's wait calibration (the median of actual wait / the scheduler's
  estimate for jobs of that partition and size, all users', `calibration.SiteCalibration`)
  and bounded by its upper quantile: source "calibrated";
- else, where the site's runtime calibration has samples (recent jobs' runtime / walltime
  request), the job's start in the calibrated backfill simulation of the whole queue
  (`simulated_starts`: every job ends after the median share of its request; the bound
  with the upper quantile's): source "calibrated"; with the other sites' ratios where
  the site has too few finished jobs of its own (`calibration.borrowed`, as placement
  does): source "borrowed" (its bound the walltime plan's);
- a "calibrated" or "borrowed" start's 90% bound is at least the QBETS bound of the
  site's recent waits (`calibration.site_waits`), as placement bounds a new job's;
- else the scheduler's estimate alone: source "scheduler" (no bound);
- else None.

Usage series: one point per snapshot (busy CPUs and GPUs, pending and running jobs), thinned
by age so a site never keeps more than about 900 points: one a minute for the last 6 hours,
one per 5 minutes to a day, one per half hour to a week; nothing older (`thin`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Literal, TypedDict

from .calibration import Ratio, RecentWaits, SiteCalibration
from .dialects.outputs_common import array_record
from .model import JobState, JobStatus, SiteSnapshot
from .placement_fit import aware, partition_members, site_nodes
from .placement_sim import build_state, calibrated_views, pending_demands, queue_starts
from .summary import row_warnings

# (age below which, one point per this many seconds); older than the last: dropped
TIERS: tuple[tuple[float, float], ...] = ((6 * 3600.0, 60.0), (86400.0, 300.0),
                                          (7 * 86400.0, 1800.0))
MAX_POINTS = 720  # at most this many points in one usage answer (evenly thinned)


class PredictedStart(TypedDict):
    median_s: int  # seconds from now
    p90_s: int | None  # 90% upper bound (None without enough calibration samples)
    source: Literal["calibrated", "borrowed", "scheduler"]


class QueueRow(TypedDict):
    id: str  # the scheduler's job id
    user: str | None
    name: str | None
    partition: str | None
    nodes: int | None
    cpus: int | None
    gpus: int | None
    state: str  # the job vocabulary: PENDING, RUNNING, ...
    waited_s: int | None  # queued (pending: so far; running: until it started)
    running_s: int | None
    predicted_start: PredictedStart | None
    mine: bool  # one of this user's diamond jobs
    job: str | None  # its diamond job id


class Counts(TypedDict):
    nodes: int
    cpus: int
    gpus: int


class Busy(TypedDict):
    cpus: int
    gpus: int


class DashboardSite(TypedDict):
    name: str
    scheduler: str
    reachable: bool
    error: str | None
    queue_error: str | None  # reachable, but its queue is unknown: why
    warnings: list[str]  # records of its outputs left out (the first few: summary.py)
    warnings_total: int
    taken_at: str | None
    totals: Counts
    busy: Busy
    queue: list[QueueRow]


class Dashboard(TypedDict):
    generated: str
    user: str
    sites: list[DashboardSite]


class UsagePoint(TypedDict):
    t: float  # epoch seconds
    busy_cpus: int
    busy_gpus: int
    pending: int
    running: int


class Usage(TypedDict):
    site: str
    points: list[UsagePoint]


# -- queue rows --------------------------------------------------------------------------------

def predicted_start(job: JobStatus, now: datetime,
                    wait: SiteCalibration | None) -> PredictedStart | None:
    """A pending job's start from its scheduler's estimate (see the module doc)."""
    if job.state != JobState.PENDING or job.estimated_start is None:
        return None
    return _predict(aware(job.estimated_start).timestamp() - now.timestamp(),
                    wait.ratio(job.partition, job.cpus) if wait is not None else None)


def _predict(raw_s: float, r: Ratio | None) -> PredictedStart:
    raw = max(0.0, raw_s)
    if r is None:
        return {"median_s": round(raw), "p90_s": None, "source": "scheduler"}
    median = raw * r.median
    return {"median_s": round(median),
            "p90_s": round(max(raw * r.upper, median)) if r.bounded else None,
            "source": "calibrated"}


Simulated = Mapping[str, tuple[float, float]]  # native id -> (median, bound) start, s


def simulated_starts(snap: SiteSnapshot, cal: SiteCalibration, now: datetime) -> dict[
        str, tuple[float, float]]:
    """Each pending job's start (seconds after `now`) in the backfill simulation of the
    site's queue calibrated with `cal`'s runtime ratios, its own or borrowed: (the predicted
    one, the 90% bound; see `calibration`); empty without any. Jobs the simulation never
    starts are left out."""
    if not (cal.samples or cal.borrows) or not snap.pending:
        return {}
    nodes = site_nodes(snap)
    members = partition_members(snap, nodes) if snap.partitions else \
        {"": [n.name for n in nodes]}
    part_max = {p.name: float(p.max_time_s) for p in snap.partitions if p.max_time_s}
    st = build_state(snap, nodes, members, now, part_max)
    queue = pending_demands(snap, st, members, now, part_max)
    views = calibrated_views(st, queue, cal)
    if views is None:
        return {}
    mid, high = (queue_starts(*v) for v in views)
    return {n: (t, max(high.get(n, t), t)) for n, t in mid.items()}


def queue_rows(snap: SiteSnapshot, now: datetime, mine: Mapping[str, str],
               wait: SiteCalibration | None = None,
               simulated: Simulated | None = None,
               waits: RecentWaits | None = None, borrowed: bool = False) -> list[QueueRow]:
    """Every job of the snapshot's queue, in its order; `mine` maps native ids to this
    user's diamond job ids, `wait` is the site's wait calibration, `simulated` the starts
    of `simulated_starts` (`borrowed`: simulated with other sites' ratios), `waits` the
    site's recent waits (`calibration.site_waits`): a calibrated or borrowed start's 90%
    bound is at least their QBETS bound, as in placement. Times in
    whole seconds. (10,000 rows are built in about 0.1 s: the dashboard's first paint
    waits for them.)"""
    t = now.timestamp()
    ratios: dict[tuple[str | None, int | None], Ratio | None] = {}

    def ts(d: datetime | None) -> float | None:
        return None if d is None else (d if d.tzinfo else d.replace(tzinfo=timezone.utc)
                                       ).timestamp()
    rows: list[QueueRow] = []
    for j in snap.jobs:
        state = j.state
        sub, start = ts(j.submitted_at), ts(j.started_at)
        predicted: PredictedStart | None = None
        if state is JobState.PENDING:
            r = None
            if j.estimated_start is not None and wait is not None:
                key = (j.partition, j.cpus)
                if key not in ratios:
                    ratios[key] = wait.ratio(*key)
                r = ratios[key]
            sim = simulated.get(j.native_id) if simulated else None
            if j.estimated_start is not None and (r is not None or sim is None):
                predicted = _predict(ts(j.estimated_start) - t, r)  # type: ignore[operator]
            elif sim is not None:
                predicted = {"median_s": round(sim[0]), "p90_s": round(sim[1]),
                             "source": "borrowed" if borrowed else "calibrated"}
            if predicted is not None and predicted["source"] != "scheduler" and waits and (
                    b := waits.bound(j.partition, j.cpus)) is not None:
                predicted["p90_s"] = max(predicted["p90_s"] or predicted["median_s"],
                                         round(b[0]))
        job = mine.get(j.native_id)
        if job is None and (arr := array_record(j.native_id)) is not None:
            job = mine.get(arr[0])  # a task of the user's array (`123_7`, `9.4-8:1`)
        rows.append({
            "id": j.native_id, "user": j.user, "name": j.name, "partition": j.partition,
            "nodes": j.nodes, "cpus": j.cpus, "gpus": j.gpus, "state": state.value,
            "waited_s": None if sub is None else round(max(0.0, (start or t) - sub)),
            "running_s": round(max(0.0, t - start))
            if start is not None and state is JobState.RUNNING else None,
            "predicted_start": predicted, "mine": job is not None, "job": job,
        })
    return rows


def busy(snap: SiteSnapshot) -> Busy:
    """CPUs and GPUs in use (a node 'allocated' without counts is wholly in use)."""
    cpus = gpus = 0
    for n in snap.nodes:
        whole = "alloc" in n.state.lower() and not n.cpus_allocated
        cpus += n.cpus if whole else min(n.cpus_allocated, n.cpus or n.cpus_allocated)
        gpus += n.gpus if whole and not n.gpus_allocated else \
            min(n.gpus_allocated, n.gpus or n.gpus_allocated)
    if not snap.nodes:  # no node view: what the running jobs hold
        cpus = sum(j.cpus or 0 for j in snap.running)
        gpus = sum(j.gpus or 0 for j in snap.running)
    return {"cpus": cpus, "gpus": gpus}


def site_entry(name: str, scheduler: str, snap: SiteSnapshot, now: datetime,
               mine: Mapping[str, str], wait: SiteCalibration | None = None,
               simulated: Simulated | None = None,
               waits: RecentWaits | None = None, borrowed: bool = False) -> DashboardSite:
    warnings, warnings_total = row_warnings(snap)
    return {
        "name": name, "scheduler": scheduler, "reachable": snap.reachable, "error": snap.error,
        "queue_error": snap.queue_error, "warnings": warnings, "warnings_total": warnings_total,
        "taken_at": snap.taken_at.isoformat() if snap.taken_at else None,
        "totals": {"nodes": len(snap.nodes), "cpus": sum(n.cpus for n in snap.nodes),
                   "gpus": sum(n.gpus for n in snap.nodes)},
        "busy": busy(snap),
        "queue": queue_rows(snap, now, mine, wait, simulated, waits, borrowed),
    }


# -- usage series ------------------------------------------------------------------------------

def usage_point(snap: SiteSnapshot) -> UsagePoint | None:
    """The point one snapshot adds to its site's series; None for an unreachable site or
    one whose queue is unknown."""
    if not snap.reachable or snap.queue_error:
        return None
    b = busy(snap)
    return {"t": snap.taken_at.timestamp(), "busy_cpus": b["cpus"], "busy_gpus": b["gpus"],
            "pending": len(snap.pending), "running": len(snap.running)}


def step_at(age_s: float) -> float | None:
    """The spacing kept for points this old (None: too old to keep)."""
    for limit, step in TIERS:
        if age_s < limit:
            return step
    return None


def thin(times: Iterable[float], now: float) -> set[float]:
    """The times (epoch seconds) of one site's series to drop: in each tier one point per
    step-long bucket is kept, the latest; points older than the last tier all go."""
    kept: dict[tuple[float, int], float] = {}
    drop: set[float] = set()
    for t in sorted(times):
        step = step_at(now - t)
        if step is None:
            drop.add(t)
            continue
        key = (step, math.floor(t / step))
        if key in kept:
            drop.add(kept[key])
        kept[key] = t
    return drop


def downsample(points: list[UsagePoint], max_points: int = MAX_POINTS) -> list[UsagePoint]:
    """At most `max_points` of `points` (in time order), evenly spread, the last kept."""
    n = len(points)
    if n <= max_points:
        return points
    if max_points <= 1:
        return points[-max_points:] if max_points else []
    idx = {round(i * (n - 1) / (max_points - 1)) for i in range(max_points)}
    return [points[i] for i in sorted(idx)]
