"""Model changes replayed on recorded rounds: would a change to a site's estimates, made
where the record shows its cause, have chosen better?

`decision_replay` varies the rule over fixed estimates; this varies the estimates, where a
kept run records what a change reads, and scores the engine's own rule (`placement_rank.rank`)
on them, every kept run of both backgrounds, none dropped (issue 15, session 27's misses):

- `queued now, bound B s`: a site predicted to start at once (start and 90% bound 0) while
  jobs wait in its queue (the round's `pending`) gets a bound of B s: the queued jobs, or
  the scheduler's cycle, may take the room first (alpha's round 1 of real logs 112);
- `queued now, bound B s a job`: the same bound, B s for each job queued;
- `queued now, start +S s`: also its start (and finish) S s later;
- `no recent-wait bound on SITE`: where a bound was above the raw plan's start and the
  start (set by the site's recent waits, `calibration.site_waits`), it falls back to them:
  the most a restriction of those waits (to jobs no larger than the probe) could lower it.

- `recent-wait bound of jobs no larger`: that restriction itself, on the rounds that
  record both bounds (`benchmarks.placement` since session 27); other rounds unchanged.

Session 35's `VARIANTS` (`--variants`: only those beside the record), for the classes of
`miss_classes` losing the most: a rank between the median start and the 90% bound (a fixed
share of the way, or k / (n + k) of it for n own jobs); a site whose own probes of the
run's earlier rounds started later than predicted ranked later (in seconds, or as a damped
`own_error` ratio), also sooner (always, or only when every one started sooner); a
calibrated ratio to the plan shrunk towards the round's pooled one. Each change's mean is
also given per half of the runs by seed parity: a gain in one half only is noise. Since
session 36 the engine applies `own probes, sooner only when all were: ranked 1x` from 1-4
own jobs (`calibration.own_error`'s `shift_s`); `recorded` is the runs' record as the
engine of its day made it, `engine` the record with the engine's own-jobs correction of
today replayed (`ENGINE`: `decision_replay.own_corrected`, which calls `own_error`).

`RECENCY` (`--recency`), for the largest class (both starts wrong, the bounds too), each
beside `engine` and counting the picks it moves from it: the own-jobs correction from the
last K jobs only, or their lateness weighted by recency (a half-life in rounds); a start
raised to the site's recent-wait bound (every user's jobs, where recorded); a start
raised by the queue's length, or ranked later for it; and, from the views the runs since
session 33 record, the waits of every user's jobs started lately (all, or of the probe's
size) and how long those of its size still pending have waited.

The records hold each round's queue length, not the jobs ahead of the probe; runs before
session 27's follow-up hold no recent waits by size, so there the restriction is bounded
(`no recent-wait bound`), not replayed.

    python -m benchmarks.model_replay [--results DIR] [--variants | --recency] [--json]
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from diamond_jupyter.calibration import OwnError, PredictionSample, own_error

from .common import RESULTS, emit, markdown_table, mean, median, parser
from .decision_replay import (
    BASELINE_SKIP,
    OwnErrorFn,
    engine,
    own_corrected,
    round_views,
    scored_rounds,
    view_waits,
)
from .placement import PROBE_CPUS

Change = Callable[[dict], dict]  # a run in, the run with its estimates changed out
SITES = ("alpha", "beta", "gamma", "delta")


def _queued_now(r: dict, site: str, e: dict) -> bool:
    return (e.get("finish_s") is not None and e.get("bound_s") is not None
            and e["start_s"] <= 0.5 and e["bound_s"] <= 0.5
            and (r.get("pending") or {}).get(site, 0) > 0)


def queued_now(bound_s: float = 0.0, per_job_s: float = 0.0, later_s: float = 0.0
               ) -> Change:
    """A start at once behind queued jobs given a bound of `bound_s` plus `per_job_s` a
    queued job, and moved `later_s` later."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for site, e in (r.get("estimate") or {}).items():
                if _queued_now(r, site, e):
                    e["start_s"] += later_s
                    e["finish_s"] += later_s
                    e["bound_s"] = max(e["start_s"], bound_s + per_job_s * r["pending"][site])
        return run
    return change


def no_recent_wait_bound(sites: tuple[str, ...] = SITES) -> Change:
    """Bounds set by recent waits (above the raw plan's start and the start) on `sites`
    lowered to the larger of those two."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for site, e in (r.get("estimate") or {}).items():
                raw, bound = e.get("raw_start_s"), e.get("bound_s")
                if site in sites and raw is not None and bound is not None \
                        and bound > max(raw, e["start_s"]) + 0.5:
                    e["bound_s"] = max(raw, e["start_s"])
        return run
    return change


def recent_bound_no_larger(run: dict) -> dict:
    """Where a round records the site's recent-wait bound over every job and over those no
    larger than the probe (`benchmarks.placement.recent_bounds`, runs since session 27),
    the bound raised by the latter instead: a bound the former set (equal to it, above the
    raw plan's start and the start) falls back to the larger of those two first (the bound
    before the raise is not recorded; it was at most the raw plan's start)."""
    run = copy.deepcopy(run)
    for r in run.get("per_round") or []:
        for e in (r.get("estimate") or {}).values():
            every, bound = e.get("recent_bound_s"), e.get("bound_s")
            if bound is None or "recent_bound_no_larger_s" not in e:
                continue
            plan = max(e["start_s"], e.get("raw_start_s") or 0.0)
            if every is not None and abs(bound - every) <= 0.5 and bound > plan + 0.5:
                bound = plan
            e["bound_s"] = max(bound, e["recent_bound_no_larger_s"] or 0.0)
    return run


def start_capped_by_recent_bound(run: dict) -> dict:
    """Where a round records the site's recent-wait bound (runs since session 27), a
    calibrated start above it moved down to it, its finish with it (session 32's
    `recent_cap`, `calibration.capped_by_waits`, without its two conditions: the record
    keeps neither how many waits the bound rests on nor the queue they were measured at,
    so this caps every such round, the most the rule could move)."""
    run = copy.deepcopy(run)
    for r in run.get("per_round") or []:
        for e in (r.get("estimate") or {}).values():
            cap = e.get("recent_bound_s")
            if cap is not None and e.get("source") == "calibrated" and e["start_s"] > cap:
                moved = e["start_s"] - cap
                e["start_s"] = cap
                if e.get("finish_s") is not None:
                    e["finish_s"] -= moved
    return run


def own_samples(e: dict) -> int:
    """The finished jobs of a site's own its calibration rested on: none where it borrowed
    the other sites' ratios (`samples` then counts theirs)."""
    return 0 if e.get("borrowed") else int(e.get("samples") or 0)


def _moved_start(e: dict, start: float) -> None:
    """A start set to `start`, the finish moved with it, the bound kept at least the start."""
    shift = start - e["start_s"]
    e["start_s"] = start
    e["finish_s"] += shift
    if e.get("bound_s") is not None:
        e["bound_s"] = max(e["bound_s"], start)


def toward_plan(k: float, borrowed_only: bool = False) -> Change:
    """A calibrated start shrunk towards the walltime plan (the raw start) with a prior of
    `k` jobs that ran their whole request: with n of the site's own finished jobs
    (`own_samples`), start + k / (n + k) x (plan - start); borrowed ratios count no jobs of
    the site's own, so a borrowing site ranks at its plan. `borrowed_only`: only there."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for e in (r.get("estimate") or {}).values():
                raw = e.get("raw_start_s")
                if e.get("source") != "calibrated" or raw is None or e.get(
                        "finish_s") is None or (borrowed_only and not e.get("borrowed")):
                    continue
                n = own_samples(e)
                _moved_start(e, e["start_s"] + k / (n + k) * max(0.0, raw - e["start_s"]))
        return run
    return change


def at_bound_below(samples: int, borrowed_only: bool = False) -> Change:
    """A calibrated start with fewer than `samples` of the site's own finished jobs
    (`own_samples`) ranked at its 90% bound: below 29 (`calibration.quantile_upper_index`)
    that bound is no measured quantile but the walltime plan (or the recent waits')."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for e in (r.get("estimate") or {}).values():
                if e.get("source") == "calibrated" and e.get("bound_s") is not None \
                        and e.get("finish_s") is not None and own_samples(e) < samples \
                        and (e.get("borrowed") or not borrowed_only):
                    _moved_start(e, max(e["start_s"], e["bound_s"]))
        return run
    return change



def _ranked_at(e: dict, start: float) -> None:
    """A start (and finish) moved to `start` for ranking; the bound kept at least it."""
    if e.get("finish_s") is not None and e.get("start_s") is not None:
        _moved_start(e, start)


def toward_bound(weight: float | None = None, prior: float = 0.0) -> Change:
    """Each site ranked at a quantile between its median start and its 90% bound: the
    start moved `weight` of the way there, or, with `prior`, prior / (n + prior) of it for
    n of the site's own finished jobs (`own_samples`): the thinner, the nearer the bound."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for e in (r.get("estimate") or {}).values():
                bound = e.get("bound_s")
                if bound is None or e.get("start_s") is None:
                    continue
                w = weight if weight is not None else prior / (own_samples(e) + prior)
                _ranked_at(e, e["start_s"] + w * max(0.0, bound - e["start_s"]))
        return run
    return change


LATE_TOLERANCE_S = 10.0  # as `misses.TOLERANCE_S`: lateness under this is no evidence


def probe_lateness(run: dict, k: int, site: str, both_ways: bool = False,
                   ratio: bool = False) -> float | None:
    """The median of how much later than predicted `site`'s probes of the rounds before
    round `k` started, as they stood at round k (one still waiting counts once overdue, by
    its wait so far); `both_ways` also counts those that started sooner (negative);
    `ratio`: the median of (seen + 30 s) / (predicted + 30 s) instead, as
    `calibration.own_error` reads them. None without any."""
    interval = run.get("interval_s") or 12.0
    late: list[float] = []
    for r in run.get("per_round") or []:
        e = (r.get("estimate") or {}).get(site)
        if r.get("round") is None or r["round"] >= k or e is None or e.get("start_s") is None:
            continue
        age, started = (k - r["round"]) * interval, (r.get("started_s") or {}).get(site)
        done = started is not None and started <= age
        seen = started if done else age
        if done and (both_ways or seen > e["start_s"]) or not done and seen > e["start_s"]:
            late.append((seen + ERROR_FLOOR_S) / (e["start_s"] + ERROR_FLOOR_S) if ratio
                        else seen - e["start_s"])
    return median(late) if late else None


def sooner_all(run: dict, k: int, site: str) -> float | None:
    """Where every probe of `site` in the rounds before round `k` had started by round k,
    each over LATE_TOLERANCE_S sooner than predicted: the least any gained (negative),
    else None (as `calibration.OwnError.sooner_started`, in seconds)."""
    interval = run.get("interval_s") or 12.0
    gains = []
    for r in run.get("per_round") or []:
        e = (r.get("estimate") or {}).get(site)
        if r.get("round") is None or r["round"] >= k or e is None or e.get("start_s") is None:
            continue
        started = (r.get("started_s") or {}).get(site)
        if started is None or started > (k - r["round"]) * interval:
            return None
        gains.append(started - e["start_s"])
    return max(gains) if gains and max(gains) < -LATE_TOLERANCE_S else None


def _numbered_estimates(run: dict) -> Iterator[tuple[int, str, dict]]:
    """(round, site, estimate) of each estimate of a round of `run` that has its number;
    the estimate is the run's own (a change made to it is made to the run)."""
    for r in run.get("per_round") or []:
        if r.get("round") is None:
            continue
        for site, e in (r.get("estimate") or {}).items():
            yield r["round"], site, e


def late_probes(scale: float, both_ways: bool = False, sooner_when_all: bool = False
                ) -> Change:
    """A site whose own probes of the run's earlier rounds started later than predicted
    (median lateness over LATE_TOLERANCE_S) ranked `scale` x that lateness later;
    `both_ways`: one whose probes started sooner also that much sooner (not below 0);
    `sooner_when_all`: sooner only where every one of them started sooner, by `scale` x
    the least any gained (`sooner_all`)."""
    def change(run: dict) -> dict:
        out = copy.deepcopy(run)
        for k, site, e in _numbered_estimates(out):
            if e.get("finish_s") is None:
                continue
            late = probe_lateness(run, k, site, both_ways)
            if late is None or abs(late) <= LATE_TOLERANCE_S or not (both_ways or late > 0):
                late = sooner_all(run, k, site) if sooner_when_all else None
            if late is not None:
                _ranked_at(e, max(0.0, e["start_s"] + scale * late))
        return out
    return change


def late_probes_ratio(power: float, min_probes: int = 1) -> Change:
    """`calibration.own_error`'s correction (later only) from as few as `min_probes` of the
    site's own probes of the run's earlier rounds, damped: the start's (start + 30 s)
    multiplied by the median ratio to the power `power`, where that ratio is above 1."""
    def change(run: dict) -> dict:
        out = copy.deepcopy(run)
        for k, site, e in _numbered_estimates(out):
            if e.get("finish_s") is None or _probes_before(run, k, site) < min_probes:
                continue
            ratio = probe_lateness(run, k, site, ratio=True)
            if ratio is not None and ratio > 1:
                _ranked_at(e, (e["start_s"] + ERROR_FLOOR_S) * ratio ** power - ERROR_FLOOR_S)
        return out
    return change


def _probes_before(run: dict, k: int, site: str) -> int:
    return sum(1 for r in run.get("per_round") or [] if r.get("round") is not None
               and r["round"] < k and site in (r.get("estimate") or {}))


def _log_ratio(e: dict) -> float:
    return math.log((e["start_s"] + ERROR_FLOOR_S) / (e["raw_start_s"] + ERROR_FLOOR_S))


def shrink_to_pooled(prior: float) -> Change:
    """A calibrated start's ratio to its walltime plan (log of (start + 30 s) / (plan +
    30 s)) shrunk towards the round's pooled ratio (the calibrated sites' own, weighted by
    their own finished jobs) with a prior of `prior` jobs: a site of n own jobs keeps
    n / (n + prior) of its own."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            cal = [e for e in (r.get("estimate") or {}).values()
                   if e.get("source") == "calibrated" and e.get("raw_start_s") is not None
                   and e.get("finish_s") is not None and e.get("start_s") is not None]
            weight = sum(own_samples(e) for e in cal)
            if not weight:
                continue
            pooled = sum(own_samples(e) * _log_ratio(e) for e in cal) / weight
            for e in cal:
                n = own_samples(e)
                log_ratio = (n * _log_ratio(e) + prior * pooled) / (n + prior)
                _ranked_at(e, max(0.0, math.exp(log_ratio) * (
                    e["raw_start_s"] + ERROR_FLOOR_S) - ERROR_FLOOR_S))
        return run
    return change


def own_replayed(error: OwnErrorFn = own_error) -> Change:
    """Each round's estimates with the recorded own-jobs correction undone and the engine's
    applied (`decision_replay.own_corrected`, mode `unanimous`: the ratio from MIN_SAMPLES
    jobs, else the move by seconds), from the probes of the rounds before as `error` reads
    them (the engine's `calibration.own_error` unless another is given)."""
    def change(run: dict) -> dict:
        out = copy.deepcopy(run)  # each round read from the record, not from rounds changed
        for r, was in zip(out.get("per_round") or [], run.get("per_round") or [], strict=True):
            if was.get("estimate") and was.get("round") is not None:
                r["estimate"] = own_corrected(run, was, "unanimous", error)
        return out
    return change


ENGINE = own_replayed()  # the engine's own-jobs correction today, replayed on every round


def last_own(k: int) -> OwnErrorFn:
    """`own_error` from the `k` most recent own jobs only."""
    return lambda samples: own_error(sorted(samples, key=lambda s: s.submitted_at)[-k:])


def _weighted_median(values: list[tuple[float, float]]) -> float:
    """The median of (value, weight) pairs: the least value with half the weight at or
    below it."""
    ordered, total, seen = sorted(values), sum(w for _, w in values), 0.0
    for value, weight in ordered:
        seen += weight
        if seen >= total / 2:
            return value
    return ordered[-1][0]


def recency_weighted(half_life: float) -> OwnErrorFn:
    """The own jobs' lateness in seconds (as `own_error` counts them: a job still waiting
    once overdue), each weighted by 2^-(age / `half_life`), age in the record's `submitted_at`
    units (rounds), from any number of jobs: a weighted median over OWN_SHIFT_MIN_S later
    moves the start by it (a gain moves nothing); no ratio."""
    def error(samples: list[PredictionSample]) -> OwnError | None:
        telling = [s for s in samples if s.started or s.observed_s > s.predicted_s]
        if not telling:
            return None
        newest = max(s.submitted_at for s in telling)
        shift = _weighted_median([(s.observed_s - max(0.0, s.predicted_s),
                                   0.5 ** ((newest - s.submitted_at) / half_life))
                                  for s in telling])
        return OwnError(None, len(telling), shift_s=shift) if shift > LATE_TOLERANCE_S \
            else None
    return error


def then(*changes: Change) -> Change:
    """`changes` applied in turn."""
    def change(run: dict) -> dict:
        for c in changes:
            run = c(run)
        return run
    return change


def raised_to_recent_waits(share: float, no_larger: bool = True) -> Change:
    """Where a round records the site's recent-wait bound (the 90% bound of the waits of
    its jobs, all users', that started or waited lately: `calibration.site_waits`; of those
    no larger than the probe with `no_larger`), a start below `share` of it raised to it."""
    key = "recent_bound_no_larger_s" if no_larger else "recent_bound_s"

    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for e in (r.get("estimate") or {}).values():
                recent = e.get(key)
                if recent is not None and e.get("finish_s") is not None \
                        and e["start_s"] < share * recent:
                    _moved_start(e, share * recent)
        return run
    return change


def queue_depth(per_job_s: float) -> Change:
    """A start raised to at least `per_job_s` for each job queued at the site in the round
    (the record's `pending`: the queue's length, not the jobs ahead of the probe)."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for site, e in (r.get("estimate") or {}).items():
                least = per_job_s * (r.get("pending") or {}).get(site, 0)
                if e.get("finish_s") is not None and e["start_s"] < least:
                    _moved_start(e, least)
        return run
    return change


def recent_view_waits(window_s: float, both_ways: bool = False, similar: bool = False,
                      least: int = 3) -> Change:
    """Where a run records its views: a site's start raised to the median wait of its jobs
    (every user's, `view_waits`) that started in the `window_s` seconds before the round,
    from `least` of them; `both_ways`: set to it, sooner too; `similar`: of jobs of half
    to twice the probe's CPUs only."""
    def change(run: dict) -> dict:
        waits = view_waits(run)
        out = copy.deepcopy(run)
        interval = run.get("interval_s") or 12.0
        for r in out.get("per_round") or []:
            for site, e in (r.get("estimate") or {}).items():
                at = (r.get("round") or 0) * interval
                recent = [w for s, w, cpus in waits.get((r.get("round"), site), [])
                          if at - window_s <= s <= at and (not similar or PROBE_CPUS / 2
                                                           <= cpus <= 2 * PROBE_CPUS)]
                if len(recent) < least or e.get("finish_s") is None:
                    continue
                typical = median(recent) or 0.0
                if both_ways or e["start_s"] < typical:
                    _moved_start(e, typical)
        return out
    return change


def waiting_ages(run: dict) -> dict[tuple[int, str], list[tuple[float, int]]]:
    """From the views a run records: per (round, site) the jobs of every user pending at
    that round's view and first seen pending at a later view than the first, as (waited
    so far, CPUs): what the jobs still waiting say that `view_waits`' started ones do not."""
    first_seen: dict[tuple[str, str], float] = {}
    out: dict[tuple[int, str], list[tuple[float, int]]] = {}
    for k, first, at, site, view in round_views(run):
        ages = []
        for job in view.get("pending") or []:
            since = first_seen.setdefault((site, job["id"]),
                                          math.nan if k == first else at)
            if not math.isnan(since):
                ages.append((at - since, int(job.get("cpus") or 0)))
        out[(k, site)] = ages
    return out


def waited_so_far(quantile: float, least: int = 3) -> Change:
    """Where a run records its views: a site's start raised to the `quantile` of how long
    its pending jobs of half to twice the probe's CPUs (every user's, `waiting_ages`) have
    waited so far, from `least` of them."""
    def change(run: dict) -> dict:
        ages = waiting_ages(run)
        out = copy.deepcopy(run)
        for r in out.get("per_round") or []:
            for site, e in (r.get("estimate") or {}).items():
                similar = sorted(a for a, cpus in ages.get((r.get("round"), site), [])
                                 if PROBE_CPUS / 2 <= cpus <= 2 * PROBE_CPUS)
                if len(similar) < least or e.get("finish_s") is None:
                    continue
                at_q = similar[min(len(similar) - 1, int(quantile * len(similar)))]
                if e["start_s"] < at_q:
                    _moved_start(e, at_q)
        return out
    return change


def queue_penalty(per_site_s: float = 0.0, per_log_s: float = 0.0) -> Change:
    """Each site ranked later by its queue in the round (the record's `pending`):
    `per_site_s` for each site with a shorter queue, plus `per_log_s` x ln(1 + queued)."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            queued = r.get("pending") or {}
            for site, e in (r.get("estimate") or {}).items():
                if site not in queued or e.get("start_s") is None:
                    continue
                shorter = sum(1 for q in queued.values() if q < queued[site])
                _ranked_at(e, e["start_s"] + per_site_s * shorter
                           + per_log_s * math.log1p(queued[site]))
        return run
    return change


# the variants for `miss_classes`' largest class (both starts wrong, the bounds too; issue
# 15): each replaces, or adds to, the engine's own-jobs correction (`ENGINE`)
RECENCY: dict[str, Change] = {
    **{f"own jobs: the last {k} only": own_replayed(last_own(k)) for k in (2, 3, 5)},
    **{f"own jobs' lateness, half-life {h:g} rounds": own_replayed(recency_weighted(h))
       for h in (1, 2, 4)},
    **{f"start at least {q:g}x the recent waits of jobs no larger": then(
        ENGINE, raised_to_recent_waits(q)) for q in (0.25, 0.5, 1.0)},
    "start at least the recent waits of every job": then(
        ENGINE, raised_to_recent_waits(1.0, no_larger=False)),
    **{f"start at least {c:g} s a queued job": then(ENGINE, queue_depth(c))
       for c in (2, 5, 10)},
    **{f"start {'at' if both else 'at least'} the median wait of {size}jobs started in the "
       f"last {n:g} s (views)": then(ENGINE, recent_view_waits(n, both, bool(size)))
       for size in ("", "4-16 CPU ") for n in (60, 180) for both in (False, True)},
    **{f"start at least the {q:g} quantile of the waits so far of 4-16 CPU jobs pending "
       "(views)": then(ENGINE, waited_so_far(q)) for q in (0.5, 0.9)},
    **{f"ranked {c:g} s later for each site with a shorter queue": then(
        ENGINE, queue_penalty(per_site_s=c)) for c in (5, 15, 30)},
    **{f"ranked {c:g} s x ln(1 + queued) later": then(ENGINE, queue_penalty(per_log_s=c))
       for c in (2, 5, 10)},
}


# session 35's variants, aimed at the two classes of `miss_classes` losing the most seconds
# (both starts wrong: the chosen too soon, the fastest too late; bounds wrong too, or right)
VARIANTS: dict[str, Change] = {
    **{f"rank at {w:g} of the way to the bound": toward_bound(w) for w in (0.1, 0.25, 0.5)},
    **{f"rank toward the bound, prior of {k:g} jobs": toward_bound(prior=k)
       for k in (2, 5, 20)},
    **{f"late own probes: ranked {s:g}x their lateness later": late_probes(s)
       for s in (0.25, 0.5, 0.75, 1.0)},
    **{f"late own probes, ratio^{p:g} from {n} probe{'s' if n > 1 else ''}":
       late_probes_ratio(p, n) for p in (0.5, 1.0) for n in (1, 3)},
    **{f"own probes both ways: ranked {s:g}x their lateness": late_probes(s, both_ways=True)
       for s in (0.5, 1.0)},
    **{f"own probes, sooner only when all were: ranked {s:g}x": late_probes(
        s, sooner_when_all=True) for s in (0.5, 1.0)},
    **{f"ratio shrunk to the pooled, prior of {k:g} jobs": shrink_to_pooled(k)
       for k in (5, 20, 50)},
}

CHANGES: dict[str, Change] = {
    "recorded": lambda run: run,
    "engine": ENGINE,
    **{f"queued now, bound {b:g} s": queued_now(bound_s=b) for b in (2, 10, 30, 60, 120)},
    **{f"queued now, bound {b:g} s a job": queued_now(per_job_s=b)
       for b in (2, 5, 10, 20, 30, 60)},
    **{f"queued now, bound 10 s, start +{s:g} s": queued_now(10.0, later_s=s)
       for s in (2, 5, 10)},
    "no recent-wait bound anywhere": no_recent_wait_bound(),
    **{f"no recent-wait bound on {s}": no_recent_wait_bound((s,)) for s in SITES},
    "recent-wait bound of jobs no larger (where recorded)": recent_bound_no_larger,
    "start capped at the recent-wait bound (where recorded)": start_capped_by_recent_bound,
    **{f"thin: start toward the plan, prior of {k:g} at their request": toward_plan(k)
       for k in (1, 2, 5)},
    "borrowed: start at the plan": toward_plan(1.0, borrowed_only=True),
    "borrowed: start at its bound": at_bound_below(1, borrowed_only=True),
    **{f"under {n} own jobs: start at its bound": at_bound_below(n) for n in (5, 10, 29)},
    **VARIANTS,
}


def regrets(run: dict) -> list[float]:
    """The engine's regret in each scored round of `run` (its pick's completion less the
    fastest's; a site without a probe scores the round's slowest)."""
    pick, out = engine(), []
    for r in scored_rounds(run):
        comp, chosen = r["completion_s"], pick(r["estimate"])
        out.append(comp[chosen] - min(comp.values()) if chosen in comp else max(comp.values()))
    return out


def best_baseline_mean(run: dict) -> float | None:
    """The lowest mean regret of the run's baselines (each fixed home, fewest_pending,
    random) over its scored rounds, as `decision_replay` counts it; None without any."""
    baselines: dict[str, list[float]] = {}
    for r in scored_rounds(run):
        for name, v in (r.get("additional_s") or {}).items():
            if name not in BASELINE_SKIP and v is not None:
                baselines.setdefault(name, []).append(v)
    return min((mean(v) for v in baselines.values() if v), default=None)


def below_every_baseline(runs: list[dict], change: Change) -> int:
    """The runs whose mean regret under `change` is below every baseline's (the issue's
    target)."""
    count = 0
    for run in runs:
        best = best_baseline_mean(run)
        count += best is not None and mean(regrets(change(run))) < best
    return count


EVIDENCE_CLASSES = ((10, "under 10 own jobs"), (29, "10-28 own jobs"),
                    (100, "29-99 own jobs"), (math.inf, "100 or more own jobs"))
ERROR_FLOOR_S = 30.0  # as `calibration.WAIT_FLOOR_S`: a second off a start at once is no 2x


def evidence_class(e: dict) -> str:
    if e.get("borrowed"):
        return "borrowed"
    return next(name for limit, name in EVIDENCE_CLASSES if own_samples(e) < limit)


def start_errors(runs: list[dict]) -> dict[str, dict[str, float | int]]:
    """How far the calibrated starts and their walltime plans (raw starts) were from the
    probes' recorded starts, by how much of its own evidence the site had
    (`evidence_class`): the median and the mean absolute of log((predicted + 30 s) /
    (started + 30 s)), over the scored rounds' probes that started (those that never did
    are left out, so both read a little early)."""
    logs: dict[str, list[tuple[float, float]]] = {}
    for run in runs:
        for r in scored_rounds(run):
            started = r.get("started_s") or {}
            for site, e in r["estimate"].items():
                if e.get("source") != "calibrated" or started.get(site) is None:
                    continue
                actual = started[site] + ERROR_FLOOR_S
                plan = max(e["start_s"], e.get("raw_start_s") or 0.0)
                logs.setdefault(evidence_class(e), []).append(
                    (math.log((e["start_s"] + ERROR_FLOOR_S) / actual),
                     math.log((plan + ERROR_FLOOR_S) / actual)))
    return {cls: {"starts": len(v),
                  "calibrated_median_log": median([c for c, _ in v]),
                  "calibrated_mean_abs_log": mean([abs(c) for c, _ in v]),
                  "plan_median_log": median([p for _, p in v]),
                  "plan_mean_abs_log": mean([abs(p) for _, p in v])}
            for cls, v in logs.items()}


def changed_rounds(run: dict, change: Change, base: Change | None = None
                   ) -> list[dict[str, Any]]:
    """The rounds where `change` moves the engine's pick from the record's (or `base`'s):
    from which site to which, and the regret before and after."""
    pick, out = engine(), []
    for before, after in zip(scored_rounds(base(run) if base else run),
                             scored_rounds(change(run)), strict=True):
        a, b = pick(before["estimate"]), pick(after["estimate"])
        if a != b:
            comp = before["completion_s"]
            worst, best = max(comp.values()), min(comp.values())
            out.append({"seed": run.get("seed"), "round": before.get("round"), "from": a,
                        "to": b, "regret_before_s": comp.get(a, worst) - best,
                        "regret_after_s": comp.get(b, worst) - best})
    return out


def _records_recent_bounds(run: dict) -> bool:
    return any("recent_bound_no_larger_s" in e for r in run.get("per_round") or []
               for e in (r.get("estimate") or {}).values())


def summarize(results: Path, changes: dict[str, Change] = CHANGES,
              base: Change | None = None) -> dict[str, Any]:
    """Per background, each change's mean of run means (and by seed parity), its runs
    below every baseline, and the picks it moves from the record's (or `base`'s)."""
    runs: dict[str, list[dict]] = {}
    for path in sorted(results.glob("placement-*seed*.json")):
        run = json.loads(path.read_text())
        if "per_round" in run and scored_rounds(run):
            runs.setdefault("real logs" if run.get("traces") else "depth_misleads",
                            []).append(run)
    out: dict[str, Any] = {"backgrounds": {}, "picks_from": "engine" if base else "recorded"}
    for bg, kept in runs.items():
        per = {}
        for name, change in changes.items():
            moved = [c for run in kept for c in changed_rounds(run, change, base)]
            means = [mean(regrets(change(run))) for run in kept]
            per[name] = {
                "mean_of_run_means_s": mean(means),
                # halves of the runs by their seed: a change that helps one half only is noise
                "mean_of_run_means_by_seed_parity_s": {
                    parity: mean([m for run, m in zip(kept, means, strict=True)
                                  if (run.get("seed") or 0) % 2 == odd])
                    for parity, odd in (("even", 0), ("odd", 1))},
                "runs_mean_below_every_baseline": below_every_baseline(kept, change),
                "rounds_changed": len(moved),
                "rounds_better": sum(c["regret_after_s"] < c["regret_before_s"] for c in moved),
                "rounds_worse": sum(c["regret_after_s"] > c["regret_before_s"] for c in moved)}
        out["backgrounds"][bg] = {"runs": len(kept), "changes": per, "runs_with_recent_bounds":
                                  sum(1 for run in kept if _records_recent_bounds(run)),
                                  "start_errors": start_errors(kept)}
    return out


def table(data: dict[str, Any]) -> str:
    def halves(c: dict) -> str:
        h = c.get("mean_of_run_means_by_seed_parity_s") or {}
        return " / ".join("-" if h.get(k) is None else f"{h[k]:.2f}" for k in ("even", "odd"))

    rows = [(bg, name, f"{c['mean_of_run_means_s']:.3f}", halves(c),
             f"{c['runs_mean_below_every_baseline']} of {d['runs']}", c["rounds_changed"],
             c["rounds_better"], c["rounds_worse"])
            for bg, d in data["backgrounds"].items() for name, c in d["changes"].items()]
    runs = ", ".join(f"{bg} {d['runs']} runs ({d['runs_with_recent_bounds']} recording the "
                     "recent-wait bounds by size)" for bg, d in data["backgrounds"].items())
    errors = [(bg, cls, e["starts"], f"{e['calibrated_median_log']:+.2f}",
               f"{e['calibrated_mean_abs_log']:.2f}", f"{e['plan_median_log']:+.2f}",
               f"{e['plan_mean_abs_log']:.2f}")
              for bg, d in data["backgrounds"].items()
              for cls, e in sorted(d.get("start_errors", {}).items(), key=lambda kv: [
                  "borrowed", *(n for _, n in EVIDENCE_CLASSES)].index(kv[0]))]
    return ("## model changes replayed on recorded rounds\n\n" + markdown_table(
        ["background", "change", "mean of run means s", "even / odd seeds",
         "runs with mean below every baseline",
         f"picks changed from the {data.get('picks_from', 'recorded')}", "better", "worse"],
        rows) + f"\n{runs}.\n\n## calibrated starts against the probes' starts, by the "
        "site's own evidence\n\nlog((predicted + 30 s) / (started + 30 s)) over the probes "
        "that started: above 0 too late, below too soon.\n\n" + markdown_table(
            ["background", "evidence", "starts", "calibrated: median", "mean |.|",
             "walltime plan: median", "mean |.|"], errors) + "\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=str(RESULTS), help="where the placement runs are")
    p.add_argument("--variants", action="store_true",
                   help="only the recorded estimates, the engine's and session 35's "
                   "VARIANTS")
    p.add_argument("--recency", action="store_true",
                   help="only the recorded estimates, the engine's and RECENCY's")
    args = p.parse_args(argv)
    changes = {"recorded": CHANGES["recorded"], "engine": ENGINE, **VARIANTS} \
        if args.variants else {"recorded": CHANGES["recorded"], "engine": ENGINE,
                               **RECENCY} if args.recency else CHANGES
    data = summarize(Path(args.results), changes, ENGINE if args.recency else None)
    emit("model_replay", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
