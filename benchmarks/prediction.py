"""Start predictions against what real centers did: replayed queue views from SWF logs.

No test bed and no scheduler: a log records, for every job, when it was submitted, how
long it waited and ran, and what it asked for. At a moment T of the log the queue view is
therefore known exactly: the jobs running at T (with their requests and elapsed times)
and those waiting (submitted before T, started after it, in submit order). The log also
says when each waiting job really started. So each seeded moment gives a real center's
queue and the true starts of every job in it, and a prediction model can be scored
against them, as QBETS was (Nurmi, Brevik, Wolski), without any of it being tuned here.

Each moment: a `SiteSnapshot` of the log's machine (MaxNodes nodes of MaxProcs / MaxNodes
CPUs, at most `SIM_NODES` nodes, the running jobs placed first-fit), the calibration
samples of the jobs that ended in the 6 h before T (the engine's window), and the backfill
simulation of `placement_sim` run under each model:
- `walltime`: every job runs to its request (a scheduler's own plan);
- `median`: every running and queued job runs the median runtime/request of its class,
  a running job past that ending within a second (the model before this benchmark);
- `conditioned`: queued jobs run the median, running jobs end as the jobs of their class
  that ran at least as long did (the runtime distribution conditioned on survival);
- `sim_bound`: conditioned running jobs, queued jobs at the mean ratio of their class
  (the work ahead is a sum), the bound from the simulation alone (the engine before
  session 9);
- `engine`: what `placement` uses: `sim_bound`'s starts, each bound at least the QBETS
  bound of the site's recent waits (`calibration.RecentWaits`: jobs that started in the
  6 h before T, and those submitted in them still waiting, for as long as they have), and
  at least the time the jobs of its user queued ahead of it take to start at the rate the
  site started that user's jobs lately (the lower 95% confidence bound of the rate,
  `calibration.own_drain_bound`: per-user limits and fair share hold a burst of one
  user's jobs in line behind its own; session 27);
- `waits_only`: `engine` without that user's-backlog bound (the engine before session 27);
- `spread`: conditioned running jobs, the queued jobs of a class at evenly spread
  quantiles of its ratios (`ratio_fn` "spread": the same sum, as a few long jobs and many
  short ones). Not in the engine: on the test bed it fixed a queue the mean made look
  uniformly slow, on these logs it predicted worse;
- `learned`: `sim_bound`, corrected by its own record at this site: the views of the
  `LOOKBACK` hours before T are simulated too, and every waiting job of theirs that started
  by T gives a pair (simulated wait, actual wait); per size class the median of actual /
  simulated (waits under 30 s count as 30 s) scales the start, and the QBETS-style upper
  quantile of it the bound (`calibration.WaitSample`, as the scheduler's estimates are
  calibrated in the engine). Not in the engine yet: this measures whether it should be.
- `prior`: `sim_bound`, but a running job of which fewer than 5 finished jobs of its class
  ran as long ends at the median of those and its walltime (one pseudo-sample at the
  request): a few survivors of a mixed class put the end of a long job too soon (gamma
  under `depth_misleads` on the test bed). Not in the engine: measured here.
- `by_request`: `sim_bound`, the classes also split by walltime request (x4 steps,
  `calibration.request_class`; a class with under 5 jobs falls back to the coarser one):
  at real centers the share of its request a job runs differs with how much it asked.
- `survivors`: `engine`, its classes' ratios also counting the jobs running at T as
  right-censored runtimes (Kaplan-Meier, `calibration.with_survivors`): the jobs that
  ended in the window are mostly the short ones. `survivors_half`: a running job past
  every finished one ends halfway to its request (not at it). `cohort`, `cohort_half`: the
  same over the jobs that started in the window only, ended or running (each length once).
  Not in the engine: measured here.
- `waits_q25`, `waits_q50`: `engine`, each start at least the 25% (50%) quantile of the
  site's recent waits of its class (`RecentWaits.quantile`): where the finished jobs that
  calibrate the runtimes are the short ones, the simulation drains a queue too soon, while
  the jobs that waited say how long the queue really held them. Measured here.
- `adaptive`: `engine`, the recent-wait bound's level set online by adaptive conformal
  inference (`RecentWaits.adapted`), per class of the user's own jobs queued ahead, over
  the waits of jobs behind as many of theirs, every job still waiting counted however long
  ago it was submitted. Measured here, not used by placement.
- `qbets`: `waits_only`, the recent-wait bound read from a week of waits per size class
  (at most the latest 400), cut at the class's latest change point
  (`calibration.regime_waits`), as QBETS keeps a queue's history. `qbets_drain`: the same
  with `engine`'s user's-backlog bound. Measured here, not used by placement.
- `online`: `engine`, its recent-wait bound the conformal one at a level carried along the
  whole log by adaptive conformal inference with the literature's step (Gibbs and Candès:
  0.005), per size class, kept in [0.5, 0.999] (`online_levels`, `calibration.OnlineLevels`):
  each job's outcome, from its submission on, moves its class's level once known, as a
  site's accounting would feed it. `online_floor`: the same, never below the fixed QBETS
  bound. Measured here, not used by placement.
- `uncut` (session 31): `engine` with every class's latest jobs kept whole, no cut at a
  change point of its workload (`SiteCalibration(change_points=False)`); the bound is
  `engine`'s simulation. Measured here, not used by placement.
- `cut_wide`, `shrunk`, `wide_shrunk` (session 32): `engine` with a change-point cut only
  where each side holds at least WIDE_REGIME jobs (`SiteCalibration(min_regime=...)`);
  each size class mixed with SHRINK_K quantiles of its partition's pooled ratios
  (`shrink`); both. The bound is `engine`'s simulation. Measured here, not used by placement.
- `every_size` (session 41): `engine` with its recent-wait bound from the waits of the
  job's size class (CPUs: 1, 2-4, 5-16, 17-64, 65+), else of every size, as placement
  drew it before; `engine` now draws it from jobs of a similar size
  (`RecentWaits.similar_bound`). Measured here beside `engine`.
- `no_few` (session 42): `engine` without a bound from fewer recent waits than the QBETS
  bound needs (29); `engine` now gives those the conformal 90% bound over every recent
  wait where there are 9 or more (`RecentWaits.few_bound`), as placement does.
Every model's 90% bound but `engine`'s, `learned`'s and `survivors`' is the same upper-quantile
simulation. A moment with no job ended
in the 6 h before it has no calibration: only `walltime` is scored there, so its count of
scored jobs is larger; the calibrated models are scored on the same jobs.

Scored per waiting job with a known request (with `--new-jobs`, only the jobs submitted
in the minute before T, at moments a second after a job's submission: the view a new job
is placed from, as placement predicts; without it, every job waiting at a random moment,
most of which have waited long already): the error of the predicted start (median
and mean absolute error, and the share predicted within a factor of two of the true
wait, waits under 5 min counting as 5 min), and the bound's coverage (the share of jobs
that started by it; the target of a 90% bound is 0.9). A real center's queue is in
priority order, not submit order, and its scheduler has reservations, fair-share and
limits the log does not record: these figures are the models' errors under that.

    python -m benchmarks.prediction --trace LOG.swf.gz [--trace ...] [--moments 40] [--seed S]
        [--new-jobs] [--models engine,survivors,...]
"""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from math import ceil
from pathlib import Path
from typing import Any

from diamond_jupyter.calibration import WAIT_FLOOR_S
from diamond_jupyter.testbed.trace import header_count, header_fields, open_swf

from .common import emit, markdown_table, mean, median, parser

WINDOW_S = 6 * 3600.0  # calibration samples: jobs that ended this long before T
MIN_LOG_S = 86400.0  # moments start a day in: the calibration has a window of history
FLOOR_WAIT_S = 300.0  # "within 2x" counts waits under this as this
WIDE_REGIME = 40  # `cut_wide`: a tenth of a class's MAX_SAMPLES on each side of a cut
SHRINK_K = 29  # `shrunk`: a class's weight against its partition's is n / (n + 29), 29
# the fewest samples with a measured 90% bound (`calibration.quantile_upper_index`)
VARIANTS: dict[str, dict[str, int]] = {  # session 32's calibration variants
    "cut_wide": {"min_regime": WIDE_REGIME}, "shrunk": {"shrink": SHRINK_K},
    "wide_shrunk": {"min_regime": WIDE_REGIME, "shrink": SHRINK_K}}
MODELS = ("walltime", "median", "conditioned", "sim_bound", "engine", "spread", "spread_run",
          "learned", "prior", "by_request", "survivors", "survivors_half", "cohort",
          "cohort_half", "waits_q25", "waits_q50", "adaptive", "waits_only", "qbets",
          "qbets_drain", "online", "online_floor", "uncut", "cut_wide", "shrunk", "wide_shrunk",
          "recent_cap", "every_size", "no_few")
LOOKBACK = (1.5, 3.0, 4.5, 6.0)  # hours before T whose views the `learned` model scores
QBETS_HISTORY_S = 7 * 86400.0  # `qbets`: the waits of the jobs started this long before T
NEW_S = 60.0  # with --new-jobs: the jobs submitted this long before a moment are scored
EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)  # log second 0 (any fixed origin)
# The backfill simulation goes node by node: a machine of more nodes (a Blue Gene's 40,960)
# is simulated as this many, each of several of its own
SIM_NODES = 1024


def max_nodes(path: Path, key_wanted: str = "MaxNodes") -> int | None:
    """The log header's MaxNodes, or another count (None when absent), its key spelled as
    `read_swf` reads it ("Max Nodes", "maxnodes = 16", "MaxNodes 16")."""
    with open_swf(path) as fh:
        for line in map(str.strip, fh):
            line = line.strip("\ufeff")
            if line and not line.startswith(";"):
                return None
            for key, value in header_fields(line[1:]):
                if key == key_wanted and header_count(value):
                    return header_count(value)
    return None


def history_start(log) -> float:
    """The first moment scored: a day (`MIN_LOG_S`) after the log's second 0, or after its
    first submission where that comes later than a day (a log counting Unix seconds)."""
    first = log.span[0]
    return MIN_LOG_S if first < MIN_LOG_S else first + MIN_LOG_S


def machine(procs: int, nodes: int | None) -> tuple[int, int]:
    """(nodes, processors a node) of the simulated machine of a log of `procs` processors
    (as `read_swf` sizes it) and a MaxNodes header: no more nodes than processors (a header
    of more nodes holds no more), at most `SIM_NODES`, and nodes enough together for
    `procs` (rounded up to whole nodes: the largest job fits)."""
    nodes_n = min(nodes or procs, procs, SIM_NODES)
    return nodes_n, ceil(procs / nodes_n)


def native_id(j) -> str:
    """A log job's id in a queue view: its number, and which repeat of it for a number
    the log gives again (logs joined, each numbered from 1; jobs numbered -1)."""
    return str(j.number) if j.copy == 0 else f"{j.number}.{j.copy}"


def never_started(j) -> bool:
    """A job cancelled while it waited (status 5, no run): its wait ends at the cancel,
    no start."""
    return j.status == 5 and j.run <= 0


def with_requests(log) -> tuple[Any, str | None]:
    """A log that records no requested time at all (field 9 is -1 on every line) with each
    job asking what its center gave a job without a request: its queue's MaxRuntime (the
    header's Queue lines), else the log's MaxRuntime, else its longest run. A log with some
    requests is kept as it is (its jobs without one are left out of the scoring)."""
    if any(j.req_time > 0 for j in log.jobs):
        return log, None
    longest = max(j.run for j in log.jobs)
    limits = [log.unasked_s(j.queue) or longest for j in log.jobs]
    if max(limits) <= 0:
        return log, None
    jobs = tuple(dataclasses.replace(j, req_time=float(limit))
                 for j, limit in zip(log.jobs, limits, strict=True))
    said = sorted(set(limits))
    return log.with_jobs(jobs), (
        "the log records no requested times: every job counts as asking "
        + ", ".join(f"{limit:.0f} s" for limit in said)
        + " (its queue's MaxRuntime, else the log's MaxRuntime header, else its longest run)")


def moment(log, nodes_n: int, cpn: int, t: float) -> tuple[Any, list, dict[str, float]]:
    """The queue view at log second `t`: (snapshot, calibration samples, true start of each
    waiting job by native id)."""
    from diamond_jupyter.calibration import RunSample
    from diamond_jupyter.model import JobState, JobStatus, Node, Partition, SiteSnapshot

    now = EPOCH + timedelta(seconds=t)
    free = [cpn] * nodes_n
    running, pending, truth, samples = [], [], {}, []
    for j in log.jobs:
        if j.submit > t:
            break
        start, end = j.submit + max(j.wait, 0.0), j.submit + max(j.wait, 0.0) + max(j.run, 0.0)
        procs = max(1, j.procs)
        req = j.req_time if j.req_time > 0 else None
        if end <= t:
            if req and t - end <= WINDOW_S and j.run >= 0:
                samples.append(RunSample("all", procs, req, j.run, end))  # as the jobs are
            continue
        if start <= t and req:  # what a queue view shows of a running job's runtime
            samples.append(RunSample("all", procs, req, t - start, t, running=True))
        k = min(nodes_n, ceil(procs / cpn))
        if start <= t:  # running: first fit, whole nodes for what does not fit one
            hosts, need = [], procs
            for i in range(nodes_n):
                if need <= 0:
                    break
                take = min(free[i], need)
                if take and (k == 1 and take == procs or k > 1):
                    free[i] -= take
                    need -= take
                    hosts.append(f"n{i}")
            running.append(JobStatus(
                native_id=native_id(j), state=JobState.RUNNING, cpus=procs, nodes=k,
                walltime_s=req, node_list=",".join(hosts), partition="all",
                started_at=EPOCH + timedelta(seconds=start)))
        else:
            pending.append(JobStatus(
                native_id=native_id(j), state=JobState.PENDING, cpus=procs, nodes=k,
                walltime_s=req, partition="all", reason="Priority", user=_user(j)))
            if req and not never_started(j):
                truth[native_id(j)] = start - t
    node_objs = [Node(name=f"n{i}", cpus=cpn, cpus_allocated=cpn - f,
                      state="idle" if f == cpn else "allocated" if f == 0 else "mixed",
                      partitions=["all"]) for i, f in enumerate(free)]
    snap = SiteSnapshot(site="log", taken_at=now, nodes=node_objs, jobs=running + pending,
                        partitions=[Partition(name="all", default=True)])
    return snap, samples, truth


def _unconditioned(fn):
    """The model before conditioning: a running job ends at its class's median share of
    its walltime, or within a second once past it."""
    def f(partition, cpus, elapsed_share=None, walltime_s=None):
        share = fn(partition, cpus, None, walltime_s)
        return share if elapsed_share is None else max(share, elapsed_share)
    return f


def predict(snap, samples, now, models: tuple[str, ...] = MODELS
            ) -> dict[str, dict[str, tuple[float, float | None]]]:
    """model -> native id -> (predicted start, 90% bound) in seconds after `now`."""
    from diamond_jupyter.calibration import SiteCalibration, ratio_fn
    from diamond_jupyter.placement_fit import partition_members, site_nodes
    from diamond_jupyter.placement_sim import (
        build_state,
        pending_demands,
        queue_starts,
        recalibrated,
    )

    nodes = site_nodes(snap)
    members = partition_members(snap, nodes)
    st = build_state(snap, nodes, members, now, {})
    queue = pending_demands(snap, st, members, now, {})
    raw = queue_starts(st, queue)
    out: dict[str, dict[str, tuple[float, float | None]]] = {
        "walltime": {n: (s, None) for n, s in raw.items()}}
    ended = [s for s in samples if not s.running]
    cal = SiteCalibration(ended)
    med, mean_, up = (ratio_fn(cal, w) for w in ("median", "mean", "upper"))
    if med is None or up is None or mean_ is None:
        return out
    bound = queue_starts(*recalibrated(st, queue, up))
    runs = {"median": (_unconditioned(med), med), "conditioned": (med, med),
            "engine": (med, mean_), "spread": (med, ratio_fn(cal, "spread") or mean_),
            "spread_run": (ratio_fn(cal, "spread_running") or med, mean_),
            "prior": (ratio_fn(cal, "prior") or med, mean_)}
    by_req = SiteCalibration(ended, by_request=True)  # also per walltime-request class
    runs["by_request"] = (ratio_fn(by_req, "median") or med, ratio_fn(by_req, "mean") or mean_)
    if "uncut" in models:  # every class's latest jobs whole, no change-point cut
        whole = SiteCalibration(ended, change_points=False)
        runs["uncut"] = (ratio_fn(whole, "median") or med, ratio_fn(whole, "mean") or mean_)
    for model, keywords in VARIANTS.items():
        if model in models:
            cal_v = SiteCalibration(ended, **keywords)
            runs[model] = (ratio_fn(cal_v, "median") or med, ratio_fn(cal_v, "mean") or mean_)
    runs = {m: r for m, r in runs.items() if m in models or m == "engine"}
    for name, (running, queued) in runs.items():
        starts = queue_starts(*recalibrated(st, queue, running, queued))
        out[name] = {n: (s, max(bound.get(n, s), s)) for n, s in starts.items()}
    for model, tail, cohort in (("survivors", "request", None),
                                ("survivors_half", "halfway", None),
                                ("cohort", "request", WINDOW_S),
                                ("cohort_half", "halfway", WINDOW_S)):
        if model not in models:  # the running jobs counted in their classes' ratios
            continue
        cal_s = SiteCalibration(samples, tail=tail, cohort_s=cohort)
        med_s, mean_s, up_s = (ratio_fn(cal_s, w) for w in ("median", "mean", "upper"))
        if med_s and mean_s and up_s:
            bound_s = queue_starts(*recalibrated(st, queue, up_s))
            starts = queue_starts(*recalibrated(st, queue, med_s, mean_s))
            out[model] = {n: (s, max(bound_s.get(n, s), s)) for n, s in starts.items()}
    return out


Predictions = dict[str, tuple[float, float | None]]  # native id -> (start, 90% bound), s


def learned(log, nodes_n: int, cpn: int, t: float, snap, engine: Predictions) -> Predictions:
    """`engine`'s predictions at `t` scaled by how its predictions of the views before `t`
    turned out (see the module doc); unchanged where no earlier job has started yet."""
    from diamond_jupyter.calibration import SiteCalibration, WaitSample

    waits = []
    for h in LOOKBACK:
        t0 = t - h * 3600
        if t0 < log.span[0]:
            continue
        snap0, samples0, truth0 = moment(log, nodes_n, cpn, t0)
        pred0 = predict(snap0, samples0, snap0.taken_at).get("engine", {})
        cpus = {j.native_id: j.cpus for j in snap0.pending}
        waits += [WaitSample(None, cpus[n], pred0[n][0], a, t0 + a)
                  for n, a in truth0.items() if n in pred0 and t0 + a <= t]
    if not waits:
        return engine
    cal = SiteCalibration(waits)
    cpus = {j.native_id: j.cpus for j in snap.pending}
    out = {}
    for n, (start, bound) in engine.items():
        r = cal.ratio(None, cpus.get(n))
        if r is None:
            out[n] = (start, bound)
            continue
        base = max(start, WAIT_FLOOR_S)
        fixed = base * r.median
        ups = [u for u in (bound, base * r.upper if r.bounded else None) if u is not None]
        out[n] = (fixed, max(*ups, fixed) if ups else None)
    return out


def recent_waits(log, t: float, every_waiting: bool = False, window_s: float = WINDOW_S,
                 cpn: int | None = None):
    """What the engine knows of the site's recent waits at log second `t`
    (`calibration.queue_waits`): the jobs that started in the window before `t`, and
    those submitted in it still waiting; each with the nodes it asked where `cpn` (CPUs a
    node) is given, and the time it asked."""
    from diamond_jupyter.calibration import queue_waits
    from diamond_jupyter.model import JobState, JobStatus

    now, jobs = EPOCH + timedelta(seconds=t), []
    for j in log.jobs:
        if j.submit > t:
            break
        if t - j.submit > window_s + max(j.wait, 0.0):
            continue  # started before the window
        start = j.submit + max(j.wait, 0.0)
        if never_started(j) and start <= t:
            continue  # cancelled while waiting: no wait of a job the site started
        jobs.append(JobStatus(
            native_id=native_id(j), state=JobState.RUNNING if start <= t
            else JobState.PENDING, cpus=max(1, j.procs), partition="all", user=_user(j),
            nodes=ceil(max(1, j.procs) / cpn) if cpn else None,
            walltime_s=int(j.req_time) if j.req_time > 0 else None,
            submitted_at=EPOCH + timedelta(seconds=j.submit),
            started_at=EPOCH + timedelta(seconds=start) if start <= t else None))
    return queue_waits(jobs, now, window_s, every_waiting)


def _user(j) -> str | None:
    return str(j.user) if j.user >= 0 else None


def with_wait_bound(sim: Predictions, snap, waits, adaptive: bool = False,
                    regime: bool = False, drain: dict | None = None,
                    similar: bool = True, few: bool = True) -> Predictions:
    """`sim`'s starts, each bound raised to the QBETS bound of the recent waits of its
    class, as `placement` does for a job that may wait; `adaptive`: to the bound of the
    waits of its class and of the jobs queued behind as many of their user's own as it
    (the jobs of its user listed before it), at the level the site's recent outcomes set
    for those (`RecentWaits.adapted`); `regime`: each class's waits since its latest
    change only (`calibration.regime_waits`); `drain` (every job's wait, those still
    waiting however long ago submitted): also to the time the user's own jobs ahead take
    to start at that user's recent rate (`calibration.own_drain_bound`). `similar` (as
    placement): the waits of jobs of a similar size first
    (`RecentWaits.similar_bound`), with too few of those, of its size class; without
    (model `every_size`, placement before session 41), of its size class. `few` (as
    placement): where no class has the waits a QBETS bound needs, the conformal 90% bound
    over every recent wait (`RecentWaits.few_bound`); without (model `no_few`, placement
    before session 42), none from waits."""
    from diamond_jupyter.calibration import RecentWaits, own_ahead, own_drain_bound

    recent = RecentWaits(waits.values(), adaptive, regime)
    now = snap.taken_at.timestamp()
    out = {}
    ahead = list(snap.pending)  # in submission order
    for i, j in enumerate(ahead):
        if (n := j.native_id) not in sim:
            continue
        start, bound = sim[n]
        own = own_ahead(ahead[:i], j.user)
        b = None
        if similar and not adaptive and not regime:
            sb = recent.similar_bound("all", j.nodes, j.cpus)
            b = None if sb is None else (sb.seconds, sb.samples)
        b = b or recent.bound("all", j.cpus, own) or (recent.few_bound() if few else None)
        bound = bound if b is None else max(b[0], bound or start)
        if drain is not None and (d := own_drain_bound(drain.values(), j.user, own, now)):
            bound = max(d[0], bound or start)
        out[n] = (start, bound)
    return out


def with_wait_cap(sim: Predictions, snap, waits) -> Predictions:
    """`sim`'s starts, each capped at the QBETS bound of the recent waits of its class where
    that rests on MIN_CAP_WAITS waits and no more jobs wait ahead of it than the view's
    started jobs found when submitted (`calibration.capped_by_waits`, the session 32
    variant `recent_cap`)."""
    from diamond_jupyter.calibration import RecentWaits, capped_by_waits, queue_when_waited

    recent = RecentWaits(waits.values())
    then = {p: queue_when_waited(waits.values(), p) for p in {j.partition for j in snap.pending}}
    out = dict(sim)
    for i, j in enumerate(snap.pending):  # in submission order: i jobs ahead
        if (n := j.native_id) in sim:
            start, bound = sim[n]
            start = capped_by_waits(start, recent.bound("all", j.cpus), i, then[j.partition])
            out[n] = (start, None if bound is None else max(bound, start))
    return out


def with_online_bound(sim: Predictions, snap, waits, levels: dict[str, float],
                      drain: dict, floor: bool = False) -> Predictions:
    """`engine`, its recent-wait bound the conformal one at the level the site's online
    replay reached for the job's size class (`online_levels`), not the fixed QBETS one;
    `floor`: at least the fixed QBETS one."""
    from diamond_jupyter.calibration import (
        QUANTILE,
        RecentWaits,
        own_ahead,
        own_drain_bound,
        size_class,
    )

    recent = RecentWaits(waits.values())
    now = snap.taken_at.timestamp()
    out = {}
    ahead = list(snap.pending)
    for i, j in enumerate(ahead):
        if (n := j.native_id) not in sim:
            continue
        start, bound = sim[n]
        b = recent.bound_at("all", j.cpus, levels.get(size_class(j.cpus), QUANTILE))
        bound = bound if b is None else max(b[0], bound or start)
        if floor and (q := recent.bound("all", j.cpus)) is not None:
            bound = max(q[0], bound or start)
        own = own_ahead(ahead[:i], j.user)
        if (d := own_drain_bound(drain.values(), j.user, own, now)):
            bound = max(d[0], bound or start)
        out[n] = (start, bound)
    return out


def online_levels(log, window_s: float = WINDOW_S, floor: bool = False):
    """Adaptive conformal inference run along the whole log, as a site would run it from
    its accounting (`calibration.OnlineLevels`): at each job's submission its recent-wait
    bound is the conformal one (`calibration.level_bound`) over what was known then (the
    waits of the jobs that started in the `window_s` before, and of those submitted in it
    still waiting, censored), of its size class where MIN_WAITS are known, else of all, at
    its size class's level (`floor`: at least the fixed QBETS bound, `RecentWaits.bound`);
    the outcome (a miss when the bound passes first, else a start
    within it) moves that level when it becomes known. Returns (a function of a log second
    giving the levels by size class then, the final `OnlineLevels`, every outcome as (known
    at, missed))."""
    from bisect import bisect_right
    from heapq import heappop, heappush

    import numpy as np

    from diamond_jupyter.calibration import (
        MIN_WAITS,
        OnlineLevels,
        quantile_upper_index,
        size_class,
    )

    fixed_index = lru_cache(maxsize=None)(quantile_upper_index)  # by count of waits

    jobs = list(log.jobs)
    submit = np.array([j.submit for j in jobs], dtype=float)
    start = np.array([j.submit + max(j.wait, 0.0) for j in jobs], dtype=float)
    gone = np.array([never_started(j) for j in jobs])  # cancelled waiting: no start
    kinds = [size_class(max(1, j.procs)) for j in jobs]
    kind_ids = {k: i for i, k in enumerate(sorted(set(kinds)))}
    kind_of = np.array([kind_ids[k] for k in kinds])
    online = OnlineLevels()
    pending: list[tuple[float, int, bool]] = []  # heap of (when known, job, missed)
    times: list[float] = []
    snaps: list[dict[str, float]] = []
    outcomes: list[tuple[float, bool]] = []
    alive = np.zeros(0, dtype=int)  # jobs submitted that may still count in a window
    added: list[int] = []
    for i, s in enumerate(submit):
        while pending and pending[0][0] <= s:
            at, k, missed = heappop(pending)
            online.learn(kinds[k], missed)
            outcomes.append((at, missed))
        times.append(s)
        snaps.append(dict(online.levels))
        if len(added) >= 256:
            alive = np.concatenate([alive, np.array(added, dtype=int)])
            alive = alive[start[alive] >= s - window_s]
            added = []
        idx = np.concatenate([alive, np.array(added, dtype=int)]) if added else alive
        added.append(i)
        if len(idx) == 0:
            continue
        st, sb = start[idx], submit[idx]
        began = (st <= s) & ~gone[idx]
        known = (began & (st >= s - window_s)) | (~began & (sb >= s - window_s)
                                                 & ~(gone[idx] & (st <= s)))
        bound = fixed = None
        for mask in (known & (kind_of[idx] == kind_of[i]), known):
            n = int(mask.sum())
            if n < MIN_WAITS:
                continue
            waits = np.where(began[mask], st[mask] - sb[mask], s - sb[mask])
            if bound is None:
                bound = _km_bound(waits, ~began[mask], _conformal_index(
                    n, online.level(kinds[i])))
            if floor and (k := fixed_index(n)) is not None:
                fixed = _km_bound(waits, ~began[mask], k)
                break
            if not floor:
                break
        if fixed is not None:
            bound = fixed if bound is None else max(bound, fixed)
        if bound is None:
            continue
        wait = start[i] - s
        if wait > bound:
            heappush(pending, (s + bound, i, True))
        elif not gone[i]:
            heappush(pending, (start[i], i, False))

    def at(t: float) -> dict[str, float]:
        k = bisect_right(times, t) - 1
        return snaps[k] if k >= 0 else {}
    return at, online, outcomes


def _conformal_index(n: int, level: float) -> int:
    """`calibration.level_bound`'s 0-based order statistic of n waits at `level`."""
    return min(n, ceil(level * (n + 1) - 1e-9)) - 1


def _km_level_bound(waits, waiting, level: float) -> float:
    """`calibration.level_bound` over arrays (waits, still waiting), vectorized."""
    return _km_bound(waits, waiting, _conformal_index(len(waits), level))


def _km_bound(waits, waiting, k: int) -> float:
    """`calibration.censored_quantile` over arrays (waits, still waiting), vectorized."""
    import numpy as np

    n = len(waits)
    order = np.lexsort((waiting, waits))
    w, c = waits[order], waiting[order]
    target = (k + 1) / n
    ended = ~c
    started = 1 - np.cumprod(1 - ended / (n - np.arange(n)))
    hit = np.nonzero(ended & (started >= target - 1e-12))[0]
    return float(w[hit[0]]) if len(hit) else float(w[-1])


def with_wait_floor(engine: Predictions, snap, waits, q: float) -> Predictions:
    """`engine`'s starts, each at least the `q` quantile of the recent waits of its class
    (the site's own record of how long such jobs waited lately)."""
    from diamond_jupyter.calibration import RecentWaits

    recent = RecentWaits(waits.values())
    cpus = {j.native_id: j.cpus for j in snap.pending}
    out = {}
    for n, (start, bound) in engine.items():
        f = recent.quantile("all", cpus.get(n), q)
        s = start if f is None else max(start, f[0])
        out[n] = (s, None if bound is None else max(bound, s))
    return out


def score(pairs: list[tuple[float, float, float | None]]) -> dict[str, Any]:
    """(predicted, actual, bound) -> error figures and the bound's coverage."""
    if not pairs:
        return {"jobs": 0}
    err = [abs(p - a) for p, a, _ in pairs]
    within = [max(p, FLOOR_WAIT_S) / max(a, FLOOR_WAIT_S) for p, a, _ in pairs]
    bounded = [(a, b) for _, a, b in pairs if b is not None]
    return {"jobs": len(pairs), "median_abs_error_s": median(err), "mean_abs_error_s": mean(err),
            "within_2x": sum(1 for w in within if 0.5 <= w <= 2.0) / len(pairs),
            "under_predicted": sum(1 for p, a, _ in pairs if p < a) / len(pairs),
            "bound_coverage": (sum(1 for a, b in bounded if a <= b) / len(bounded))
            if bounded else None,
            "bound_median_s": median([b for _, b in bounded]),
            # how loose the bound is: its median over the wait it bounds (each at least
            # 5 min, as in "within 2x")
            "bound_over_actual_median": median([max(b, FLOOR_WAIT_S) / max(a, FLOOR_WAIT_S)
                                                for a, b in bounded])}


def run_log(path: Path, moments: int, seed: int, new_jobs: bool = False,
            models: tuple[str, ...] = MODELS) -> dict[str, Any]:
    from diamond_jupyter.testbed.trace import read_swf

    log, note = with_requests(read_swf(path))
    nodes_n, cpn = machine(log.max_procs, max_nodes(path))
    end = max(j.submit for j in log.jobs)
    if not any(j.wait > 0 for j in log.jobs):  # e.g. LLNL-Thunder's cleaned log: all 0
        return {"log": log.name, "nodes": nodes_n, "cpus_per_node": cpn, "moments": 0,
                "note": "the log records no waits: nothing to score", "models": {
                    m: score([]) for m in MODELS}}
    since = history_start(log)
    if end <= since:
        return {"log": log.name, "nodes": nodes_n, "cpus_per_node": cpn, "moments": 0,
                "note": f"the log's submissions end {end - since + MIN_LOG_S:.0f} s after its "
                        f"start, within its first {MIN_LOG_S / 86400:.0f} day(s): no moment "
                        "has that history before it; nothing to score",
                "models": {m: score([]) for m in MODELS}}
    rng = random.Random(seed)
    pairs: dict[str, list[tuple[float, float, float | None]]] = {m: [] for m in models}
    # per model, (actual, bound) of the job whose submission each moment follows: every
    # arrival counts once, where `pairs` counts a burst's jobs at each of its moments
    firsts: dict[str, list[tuple[float, float | None]]] = {m: [] for m in models}
    used, skipped = 0, 0
    replays: dict = {}  # model -> `online_levels`, run once when the model is asked
    arrivals = [j for j in log.jobs if j.submit >= since and j.req_time > 0]
    if new_jobs and not arrivals:
        return {"log": log.name, "nodes": nodes_n, "cpus_per_node": cpn, "moments": 0,
                "note": "no job with a requested time arrives after the log's first "
                        f"{MIN_LOG_S / 86400:.0f} day(s): nothing to score",
                "models": {m: score([]) for m in MODELS}}
    while used < moments and skipped < 20 * moments:
        if new_jobs:  # just after a job's submission: the view a new job is placed from
            first = rng.choice(arrivals)
            t = first.submit + 1.0
        else:
            t = rng.uniform(since, end)
        snap, samples, truth = moment(log, nodes_n, cpn, t)
        if new_jobs:
            fresh = {native_id(j) for j in log.jobs if t - NEW_S <= j.submit <= t}
            truth = {n: a for n, a in truth.items() if n in fresh}
        if not truth:
            skipped += 1
            continue
        used += 1
        preds = predict(snap, samples, snap.taken_at, models)
        if "engine" in preds:
            if "learned" in models:
                preds["learned"] = learned(log, nodes_n, cpn, t, snap, preds["engine"])
            preds["sim_bound"] = preds["engine"]
            waits = recent_waits(log, t, cpn=cpn)
            every = recent_waits(log, t, every_waiting=True, cpn=cpn)
            if "adaptive" in models:
                preds["adaptive"] = with_wait_bound(preds["engine"], snap, every, True)
            for model, floor in (("online", False), ("online_floor", True)):
                if model in models:
                    if model not in replays:
                        replays[model] = online_levels(log, floor=floor)
                    preds[model] = with_online_bound(preds["engine"], snap, waits,
                                                     replays[model][0](t), every, floor)
            history = recent_waits(log, t, window_s=QBETS_HISTORY_S) \
                if {"qbets", "qbets_drain"} & set(models) else waits
            for model, regime, drain in (("waits_only", False, None), ("qbets", True, None),
                                         ("qbets_drain", True, every)):
                if model in models:
                    preds[model] = with_wait_bound(preds["engine"], snap,
                                                   history if regime else waits,
                                                   regime=regime, drain=drain)
            if "recent_cap" in models:
                preds["recent_cap"] = with_wait_bound(with_wait_cap(
                    preds["engine"], snap, waits), snap, waits, drain=every)
            if "every_size" in models:
                preds["every_size"] = with_wait_bound(preds["engine"], snap, waits,
                                                      drain=every, similar=False)
            if "no_few" in models:
                preds["no_few"] = with_wait_bound(preds["engine"], snap, waits, drain=every,
                                                  few=False)
            preds["engine"] = with_wait_bound(preds["engine"], snap, waits, drain=every)
            for model in ("survivors", "survivors_half", "cohort", "cohort_half"):
                if model in preds:
                    preds[model] = with_wait_bound(preds[model], snap, waits, drain=every)
            for model, q in (("waits_q25", 0.25), ("waits_q50", 0.5)):
                if model in models:
                    preds[model] = with_wait_floor(preds["engine"], snap, waits, q)
        for m, p in preds.items():
            if m not in pairs:
                continue
            pairs[m] += [(p[n][0], a, p[n][1]) for n, a in truth.items() if n in p]
            if new_jobs and (n := native_id(first)) in p and n in truth:
                firsts[m].append((truth[n], p[n][1]))
    scores = {m: score(v) for m, v in pairs.items()}
    for m, v in firsts.items():
        bounded = [(a, b) for a, b in v if b is not None]
        if bounded:
            scores[m]["arrival_bound_coverage"] = sum(a <= b for a, b in bounded) / len(bounded)
    if not used:  # every moment drawn found no job waiting: say so, not a bare 0
        waits = sorted(j.wait for j in log.jobs if j.wait >= 0)
        said = f"; its jobs' median wait is {waits[len(waits) // 2]:g} s" if waits else ""
        note = "; ".join(filter(None, [note, (
            f"none of the {skipped} moment(s) drawn found a job waiting whose start the log "
            f"records{said}: nothing to score (a log whose jobs start at once, or almost, "
            "has no wait to predict)")]))
    return {"log": log.name, "nodes": nodes_n, "cpus_per_node": cpn, "moments": used,
            **({"note": note} if note else {}), "models": scores}


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--trace", action="append", required=True, metavar="FILE.swf[.gz]")
    p.add_argument("--moments", type=int, default=40, help="queue views per log")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--new-jobs", action="store_true",
                   help="score only jobs just submitted, each at a moment a second after "
                        "a job's submission (what placement predicts), not every waiting job")
    p.add_argument("--models", default=",".join(MODELS),
                   help="the models to score, comma-separated (walltime and engine always)")
    args = p.parse_args(argv)
    args.tag = args.tag or f"{'new-' if args.new_jobs else ''}seed{args.seed}"
    models = tuple(m for m in MODELS if m in {"walltime", "engine", *args.models.split(",")})
    logs = [run_log(Path(t), args.moments, args.seed, args.new_jobs, models)
            for t in args.trace]
    r = {"seed": args.seed, "moments_per_log": args.moments, "new_jobs": args.new_jobs,
         "logs": logs}
    rows = []
    for lg in logs:
        for m, s in lg["models"].items():
            rows.append((lg["log"], m, s["jobs"], s.get("median_abs_error_s"),
                         s.get("mean_abs_error_s"), s.get("within_2x"),
                         s.get("under_predicted"), s.get("bound_coverage"),
                         s.get("bound_median_s"), s.get("bound_over_actual_median"),
                         s.get("arrival_bound_coverage")))
    md = (f"## start predictions on replayed logs, seed {args.seed}, {args.moments} moments "
          "per log\n\n" + markdown_table(
              ["log", "model", "waiting jobs", "median abs error s", "mean abs error s",
               "within 2x", "under-predicted", "90% bound coverage",
               "90% bound median s", "bound / wait, median",
               "coverage, one arrival a moment"], rows)
          + "\nThe engine's model is `engine`. Waits under 5 min count as 5 min in "
          "\"within 2x\".\n" + "".join(f"\n{lg['log']}: {lg['note']}\n"
                                       for lg in logs if lg.get("note")))

    def plot(ax) -> None:
        xs = range(len(logs))
        shown = [m for m in MODELS if all(m in lg["models"] for lg in logs)]
        width = 0.8 / len(shown)
        for i, m in enumerate(shown):
            ax.bar([x + i * width for x in xs],
                   [(lg["models"][m].get("median_abs_error_s") or 0) / 60 for lg in logs],
                   width, label=m)
        ax.set_xticks([x + 0.4 - width / 2 for x in xs], [lg["log"][:16] for lg in logs])
        ax.set_ylabel("median abs error of the start (min)")
        ax.legend()
    emit("prediction", args, r, md, plot)
    return r


if __name__ == "__main__":
    main()
