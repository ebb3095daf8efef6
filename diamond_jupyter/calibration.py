"""Calibrated start predictions: correcting a queue view built from walltime requests.

A scheduler's start estimates, and a backfill simulation of its queue, assume every job
runs to its walltime request. Users over-request several-fold at every real center, so
both predict starts far too late at a busy site. What jobs actually did corrects that:
per site, partition and job-size class, the ratio runtime / requested walltime of recently
finished jobs (all users', from the site's accounting, and the store's own).

- The calibrated simulation gives the start predicted for a new job. A queued job runs
  its request times the mean ratio of its class: what matters of the work ahead is its
  sum, and a sum of runtimes is near the sum of their means (with heavy-tailed ratios the
  median, often "ended at once", makes a deep queue look empty). Spreading the class's
  ratios over its queued jobs instead (`ratio_fn` "spread": a few long jobs, many short
  ones) predicted worse on real centers' logs (`benchmarks.prediction`), so it is only
  measured there. A running job ends when
  the jobs of its class that ran at least as long as it has ended (`Ratio.end_share`):
  the median of the distribution conditioned on the time it has survived.
- The bound uses an upper quantile of the ratio in the spirit of QBETS (Nurmi, Brevik,
  Wolski): the order statistic that, with 95% confidence, at least 90% of runtimes stay
  below (for a running job: of those that ran as long). With too few samples for that
  confidence the bound is the walltime itself (ratio 1), which no job exceeds.

A class's history is the most recent of its jobs in the window, since its workload last
changed: where the ratios of the latest jobs differ from those before them beyond chance
(`regime_start`, a rank test over every split), the jobs before the change are dropped, as
QBETS drops a queue's history at a change point. Otherwise a campaign of short jobs, or
the workload a site ran an hour ago, would be averaged with the one it runs now.

The user's own jobs queued or running at a site are not other users' work: they run what
their kind ran before (`own_runtimes`, from the store: the application's runtime, else the
share of their walltime the user's jobs ran), not their class's ratio.

A site with fewer than MIN_SAMPLES finished jobs of its own (a fresh accounting, or only the
user's) borrows the other sites' ratios, of its size class over every site, else of all
their jobs (`PooledRatios`): users over-request everywhere, so they say more than the
walltime. Its 90% bound rests on the sites, not their jobs, and is the walltime with fewer
than 29 of them.

Waits are calibrated the same way: per site, partition and size class, the ratio actual
wait / the scheduler's estimated wait, from pending jobs (all users') whose estimate the
engine saw in a queue view and whose actual start it learned later (`WaitSample`). Where a
site's start rests on its scheduler's estimates, the median ratio corrects that estimate
and the upper quantile bounds it (the same QBETS-style order statistic).

A queue model misses what a real scheduler does besides (priorities, fair share, limits,
jobs arriving later that start first): on real centers' logs the simulated bound covered
about 60% of new jobs' starts. So a waiting job's bound is also at least the QBETS bound
of how long this site's recent jobs waited (`RecentWaits`: those that started in the
window, and those still waiting, for as long as they have), per partition and size class.
A wait still going on is right-censored: the job waits at least that long. Counted as a
finished wait of that length, a jammed queue's many waiting jobs pulled the bound down to
what they had waited so far; the bound is read from the Kaplan-Meier estimate instead.
A quiet site (or a quiet window) may have fewer waits than the QBETS bound needs (29 for 90%
at 95% confidence, even every size together); there the bound is the conformal one over all
of them (`few_waits_bound`, 9 or more: 90% on average, not at 95% confidence), said so, and
with fewer no bound comes from waits (on KTH's log the jobs without one were covered about
half the time by the simulation's bound alone: benchmarks/README.md, session 42).

A site that limits how many jobs a user runs at once (or shares by user) starts a user's
backlog at that user's rate, which no queue view shows: on HPC2N's log most of the missed
starts were bursts of hundreds of one user's jobs. So the bound of a job queued behind its
user's own waiting jobs is also at least the time those take to start at the rate the
site started that user's jobs lately (`own_drain_bound`, the rate's lower 95% bound).

Pure: samples in, ratios out. `Federation` gathers the samples; `placement` uses them.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Mapping
from copy import copy
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from heapq import heappop, heappush
from statistics import median
from typing import Protocol

from .model import (  # noqa: F401 (describe_start, hms_short: formerly here)
    Job,
    JobState,
    JobStatus,
    describe_start,
    hms_short,
    placed_verdict,
)
from .placement_fit import aware

SIZE_CLASS_LIMITS = (1, 4, 16, 64)  # CPUs: 1, 2-4, 5-16, 17-64, 65+
MIN_SAMPLES = 5  # a key with fewer samples falls back to the coarser one
MAX_SAMPLES = 400  # per key: the most recent ones
MIN_REGIME = 10  # a change in a class's ratios is looked for with at least this many after it
CHANGE_P = 0.05  # ... and kept when `_change_point` gives it a p-value below this
QUANTILE = 0.9
CONFIDENCE = 0.95
MIN_RATIO = 0.01  # a wait far shorter than its scheduler's estimate (no zero ratios)
MIN_HOLD_S = 1.0  # a job that ended at once still held its nodes for a moment
WAIT_FLOOR_S = 30.0  # an estimated wait shorter than this counts as this (no huge ratios)
MAX_WAIT_RATIO = 50.0
CLOCK_SLACK_S = 2.0  # schedulers stamp starts and ends in whole seconds: a job seen
# running t s has surely run t - 1 s, and one recorded as running r s ran under r + 1 s
AT_LONGEST = 1.25  # a running job this far past its class's longest run is ending now
GOLDEN = (math.sqrt(5) - 1) / 2  # the spread's step: successive draws fill [0, 1) evenly


# walltime requests, in seconds: up to 4 min, 16 min, 64 min, ~4 h, ~17 h, longer (x4 steps:
# the share of its request a job runs differs by how much it asked, not by a unit of time)
REQUEST_CLASS_LIMITS_S = (240.0, 960.0, 3840.0, 15360.0, 61440.0)


def request_class(walltime_s: float | None) -> str | None:
    """The class of a walltime request (its upper limit in seconds, "long" past the last)."""
    if not walltime_s or walltime_s <= 0:
        return None
    i = bisect_right(REQUEST_CLASS_LIMITS_S, walltime_s - 1e-9)
    return f"<={REQUEST_CLASS_LIMITS_S[i]:.0f}s" if i < len(REQUEST_CLASS_LIMITS_S) else "long"


# a scheduler's estimated wait, in seconds: bands of half a decade. The wait shrinks less
# than in proportion as the estimate grows (past the running jobs' real runtimes an
# estimate is only their requests adding up), so one ratio per class is too high under
# long estimates and too low under short ones (benchmarks/README.md, wait_by_estimate)
ESTIMATE_BAND_LIMITS_S = (300.0, 1000.0, 3000.0, 10000.0, 30000.0)


def estimate_band(estimated_s: float | None,
                  limits: tuple[float, ...] = ESTIMATE_BAND_LIMITS_S) -> str | None:
    """The band of a scheduler's estimated wait: "300-1000s", "<300s", ">=30000s"."""
    if estimated_s is None:
        return None
    i = bisect_right(limits, estimated_s)
    if i == 0:
        return f"<{limits[0]:.0f}s"
    return f"{limits[i - 1]:.0f}-{limits[i]:.0f}s" if i < len(limits) else f">={limits[-1]:.0f}s"


def band_words(band: str) -> str:
    """An estimate band for people: "estimates of 1,000-3,000 s"."""
    def n(x: str) -> str:
        return f"{int(x):,}"
    b = band.removesuffix("s")
    if b.startswith("<"):
        return f"estimates under {n(b[1:])} s"
    if b.startswith(">="):
        return f"estimates of {n(b[2:])} s or more"
    lo, hi = b.split("-")
    return f"estimates of {n(lo)}-{n(hi)} s"


WAIT_BASIS_NOTE_START = "scheduler's estimate "


def wait_basis(estimate_s: float, r: Ratio) -> str:
    """What a calibrated scheduler's estimate rests on, for people: "scheduler's estimate
    1,750 s: calibrated by 41 jobs of 1 CPU with estimates of 1,000-3,000 s (wait ratio
    0.07)"."""
    parts = r.key.split("/")
    size = parts[1] if len(parts) > 1 and parts[1] != "*" else None
    basis = ("of any size" if size is None else f"of {size} CPU{'' if size == '1' else 's'}") \
        + (f" with {band_words(parts[2])}" if len(parts) == 3 else ", any estimate")
    return (f"{WAIT_BASIS_NOTE_START}{estimate_s:,.0f} s: calibrated by {r.samples} jobs {basis} "
            f"(wait ratio {r.median:.2g})")


def size_class(cpus: int | None) -> str:
    c = max(1, cpus or 1)
    i = bisect_right(SIZE_CLASS_LIMITS, c - 1)
    if i == 0:
        return "1"
    lo = SIZE_CLASS_LIMITS[i - 1] + 1
    return f"{lo}-{SIZE_CLASS_LIMITS[i]}" if i < len(SIZE_CLASS_LIMITS) else f"{lo}+"


@dataclass(frozen=True)
class RunSample:
    """One finished job: what it asked for and what it used."""

    partition: str | None
    cpus: int | None
    requested_s: float
    runtime_s: float
    ended_at: float = 0.0  # epoch seconds: the most recent samples are kept
    running: bool = False  # still running: `runtime_s` is how long it has run so far

    @property
    def ratio(self) -> float:
        """runtime / request, the runtime at least MIN_HOLD_S: a share of the request
        would be no floor (at real centers 8-62% of jobs run under 1% of their request:
        a day asked, minutes used). Of a running job: the share it has surely run."""
        if self.running:
            return min(1.0, max(0.0, self.runtime_s - CLOCK_SLACK_S) / self.requested_s)
        return min(1.0, max(MIN_HOLD_S, self.runtime_s) / self.requested_s)


def with_survivors(ended: list[float], running: list[float], tail: str = "request"
                   ) -> list[float]:
    """A class's runtime/request ratios with its running jobs counted, each as a ratio
    drawn from what the jobs that ran longer than it has did.

    The jobs that ended in a window are mostly its short ones: the long ones of the same
    time are still running, so the finished alone put a class's runtimes too short (most
    where a site's long jobs started together, as a replayed log's standing queue does).
    A running job is a right-censored sample: its ratio is at least its elapsed share. The
    Kaplan-Meier estimate over both gives the distribution; a running job's share of it
    beyond its elapsed share (what is left when no finished job ran longer: the request,
    ratio 1, which no job passes) is spread over the running jobs at evenly spread
    quantiles, so they count as ratios as the finished do and every reader of a class's
    ratios (median, mean, bound, conditioned end) sees the corrected distribution.

    `tail` "halfway": a running job past every finished one ends halfway from its elapsed
    share to the request (as `Ratio.end_share` takes an outlier), not at the request.

    Measured by `benchmarks.prediction` (models `survivors`, `survivors_half`, `cohort`,
    `cohort_half`), not used by placement (the engine passes no running samples): on the
    real logs none predicted better than the finished jobs alone on both logs and seeds
    (benchmarks/README.md, session 22)."""
    if not running:
        return list(ended)
    # (ratio, 0 = ended, 1 = running): at a tie the end comes first (the running job
    # survived it)
    obs = sorted([(r, 0) for r in ended] + [(r, 1) for r in running])
    at_risk, surv = len(obs), 1.0
    curve: list[tuple[float, float]] = []  # (ratio of an end, survival just after it)
    i = 0
    while i < len(obs):
        r, ends = obs[i][0], 0
        j = i
        while j < len(obs) and obs[j] == (r, 0):
            ends, j = ends + 1, j + 1
        if ends:
            surv *= 1 - ends / at_risk
            curve.append((r, surv))
        while j < len(obs) and obs[j][0] == r:  # the running jobs at this ratio
            j += 1
        at_risk -= j - i
        i = j
    drawn: list[float] = []
    for k, c in enumerate(sorted(running)):
        s_c = 1.0  # survival at c: just after the last end at or below it
        for r, s in curve:
            if r > c:
                break
            s_c = s
        q = (0.5 + k * GOLDEN) % 1.0
        # past every finished job that ran longer: the request ("request"), or halfway
        # to it from what the job has run ("halfway", as `Ratio.end_share` takes an outlier)
        value = 1.0 if tail == "request" else (1.0 + c) / 2
        for r, s in curve:
            if r > c and s <= (1 - q) * s_c:
                value = r
                break
        drawn.append(value)
    return list(ended) + drawn


def started_within(samples: list, window_s: float) -> list:
    """The samples of jobs that started in the `window_s` before the newest sample's time:
    finished ones (an event) and running ones (censored). Jobs that ended in a window are
    its ended jobs of every length alike only while a site runs as it has for long; those
    running at a moment are its long ones, so running jobs counted beside every job that
    ended would count the long ones twice. Of the jobs that started in the window, each
    length is counted once: ended if it has, running if not."""
    if not samples:
        return samples
    newest = max(s.ended_at for s in samples)
    return [s for s in samples
            if not isinstance(s, RunSample) or s.ended_at - s.runtime_s >= newest - window_s]


def run_sample(j: JobStatus) -> RunSample | None:
    """A finished job from accounting as a sample; None when it never ran (one cancelled
    while it waited: Slurm writes its start as its cancel) or its request is unknown."""
    if not (j.started_at and j.ended_at and j.walltime_s) or not (j.cpus or j.nodes):
        return None
    if j.state == JobState.CANCELLED and j.started_at == j.ended_at:
        return None
    return RunSample(j.partition, j.cpus, float(j.walltime_s),
                     (j.ended_at - j.started_at).total_seconds(), j.ended_at.timestamp())


def running_samples(jobs: Iterable[JobStatus], now: datetime) -> list[RunSample]:
    """The jobs running in a view as right-censored samples (`RunSample.running`: each
    has run at least its elapsed time), stamped `now`; those without a start or a
    request are left out."""
    out = []
    for j in jobs:
        if j.state == JobState.RUNNING and j.started_at and j.walltime_s and (j.cpus or j.nodes):
            out.append(RunSample(j.partition, j.cpus, float(j.walltime_s), max(
                0.0, (now - aware(j.started_at)).total_seconds()), now.timestamp(),
                running=True))
    return out


@dataclass(frozen=True)
class WaitSample:
    """One pending job: the wait its scheduler estimated when the engine first saw it, and
    the wait it had (both from that moment)."""

    partition: str | None
    cpus: int | None
    estimated_s: float
    actual_s: float
    ended_at: float = 0.0  # epoch seconds of the start: the most recent samples are kept

    @property
    def requested_s(self) -> float:  # the names SiteCalibration groups by
        return max(self.estimated_s, WAIT_FLOOR_S)

    @property
    def runtime_s(self) -> float:
        return self.actual_s

    @property
    def ratio(self) -> float:
        return min(MAX_WAIT_RATIO, max(MIN_RATIO, self.actual_s / self.requested_s))


def wait_samples(rows: Iterable[tuple[str | None, int | None, float, float, float]]
                 ) -> list[WaitSample]:
    """(partition, cpus, seen at, estimated start, started at) -> samples; a start before
    the estimate was seen (a reused id) or a negative wait is left out."""
    out = []
    for part, cpus, seen, est, started in rows:
        if started >= seen and est >= seen:
            out.append(WaitSample(part, cpus, est - seen, started - seen, started))
    return out


@dataclass(frozen=True)
class Ratio:
    """runtime / request for one class of jobs: the median, an upper bound, their basis."""

    median: float
    upper: float
    samples: int
    key: str  # which class they come from ("batch/2-4", "batch/*", "*")
    bounded: bool = True  # False: too few samples for the quantile bound (`upper` is 1)
    values: tuple[float, ...] = ()  # the ratios themselves, sorted
    mean: float = 0.0

    def end_share(self, elapsed_share: float, which: str, q: float = 0.5) -> float:
        """For a job of this class still running after `elapsed_share` of its walltime: the
        share of the walltime at which it ends, from the finished jobs that ran at least as
        long (the distribution conditioned on what the job has already survived). `which`
        "median": their median; "upper": the QBETS-style bound over them, or the walltime
        (1) with too few of them. When none ran that long: a job just past the longest of
        its class (within `AT_LONGEST`) is ending, or has ended and the view lags the
        scheduler (Grid Engine lists a finished job for a moment): by the median it ends
        now. Further past, it is an outlier, which says nothing of its end: the median is
        halfway to the walltime. The bound is then the walltime."""
        if which == "upper" and not self.bounded:
            return 1.0  # too few jobs (or, borrowed, too few sites) for a bound
        v = self.values
        i = bisect_right(v, elapsed_share)  # v[i:] ran longer (no copy: on every release)
        if i == len(v):
            if which not in ("median", "prior"):
                return 1.0
            if v and elapsed_share <= v[-1] * AT_LONGEST:
                return elapsed_share
            return min(1.0, (1.0 + elapsed_share) / 2)
        if which == "median":
            return _median(v, i)
        if which == "prior":  # few ran as long: the walltime as one more of them
            n = len(v) - i
            return _median(v, i) if n >= MIN_SAMPLES else _median((*v[i:], 1.0))  # ratios <= 1
        if which == "quantile":  # the q-quantile of those that ran as long
            return v[i + min(len(v) - i - 1, int(q * (len(v) - i)))]
        k = quantile_upper_index(len(v) - i)
        return 1.0 if k is None else v[i + k]


@lru_cache(maxsize=1024)  # per running job in every simulation: the same few n
def quantile_upper_index(n: int, q: float = QUANTILE, confidence: float = CONFIDENCE
                         ) -> int | None:
    """The 0-based index k into n sorted samples such that P(the q-quantile <= x_(k)) >=
    `confidence`: the smallest k with P(Binomial(n, q) <= k) >= confidence. None when even
    the largest sample is not enough (too few samples)."""
    lq, lp = math.log(q), math.log1p(-q)
    cdf = 0.0
    for k in range(n):
        # P(Binomial(n, q) = k) in log space: (1 - q)^n underflows for large n
        cdf += math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                        + k * lq + (n - k) * lp)
        if cdf >= confidence:
            return k
    return None


# the fewest samples with a QBETS bound (`quantile_upper_index`: 29 for 90% at 95%)
MIN_QBETS_WAITS = next(n for n in range(1, 1000) if quantile_upper_index(n) is not None)


def _median(v: tuple[float, ...], start: int = 0) -> float:
    """The median of the sorted v[start:]."""
    n = len(v) - start
    m = start + n // 2
    return v[m] if n % 2 else (v[m - 1] + v[m]) / 2


def _change_point(x: list[float], min_side: int) -> tuple[int, float]:
    """The most likely change in the distribution of the sequence `x`, between x[k - 1] and
    x[k] (each side at least `min_side` long), and its p-value: (k, p). Each split is
    scored by the Mann-Whitney statistic of the samples before it against those after it
    (on ranks, ties averaged: U_k = 2 * (the sum of the first k ranks) - k (n + 1), of
    variance k (n - k) (n + 1) / 3), standardised, so a change among the last few samples
    is seen as well as one in the middle (Pettitt's test, unstandardised, misses those);
    the p-value of the best split is multiplied by the number of splits tried."""
    n = len(x)
    order = sorted(range(n), key=x.__getitem__)
    rank = [0.0] * n
    i = 0
    while i < n:  # tied values share their average rank
        j = i
        while j + 1 < n and x[order[j + 1]] == x[order[i]]:
            j += 1
        for m in range(i, j + 1):
            rank[order[m]] = (i + j) / 2 + 1
        i = j + 1
    best_k, best_z, cum = 0, 0.0, 0.0
    for k in range(1, n - min_side + 1):
        cum += rank[k - 1]
        if k >= min_side:
            z = abs(2 * cum - k * (n + 1)) / math.sqrt(k * (n - k) * (n + 1) / 3)
            if z > best_z:
                best_k, best_z = k, z
    splits = n - 2 * min_side + 1
    if best_k == 0:
        return 0, 1.0
    return best_k, min(1.0, splits * math.erfc(best_z / math.sqrt(2)))


def regime_start(x: list[float], min_side: int = MIN_REGIME, p: float = CHANGE_P) -> int:
    """Where the latest regime of the time-ordered sequence `x` starts: history before
    a change (`_change_point`, p-value below `p`) is trimmed, again within what is left,
    as QBETS trims a queue's history at a change point. A class's ratios change when its
    workload does (a campaign of short jobs, a user who leaves): what came before the
    change describes the queue no more."""
    start = 0
    while len(x) - start >= 2 * min_side:
        k, pv = _change_point(x[start:], min_side)
        if pv >= p:
            break
        start += k
    return start


def _ratio(values: list[float], key: str) -> Ratio:
    v = tuple(sorted(values))
    median = _median(v)
    k = quantile_upper_index(len(v))
    return Ratio(median=median, upper=1.0 if k is None else max(v[k], median), samples=len(v),
                 key=key, bounded=k is not None, values=v, mean=sum(v) / len(v))


class SiteCalibration:
    """The ratios of one site, from its recent finished jobs; `wait`: those of its
    scheduler's start estimates (None without any samples); `queued`: how long its recent
    jobs waited (`queue_waits` of its accounting), by native id."""

    def __init__(self, samples: Iterable[RunSample | WaitSample],
                 wait: Iterable[WaitSample] = (),
                 queued: dict[str, QueueWait] | None = None,
                 own: Iterable[PredictionSample] = (), by_request: bool = False,
                 tail: str = "request", cohort_s: float | None = None,
                 own_runtimes: dict[str, float] | None = None,
                 change_points: bool = True, min_regime: int = MIN_REGIME,
                 shrink: int = 0, at_limit: Mapping[str, float] | None = None,
                 recent_cap: bool = False,
                 estimate_bands: tuple[float, ...] | None = None,
                 min_band: int = MIN_SAMPLES) -> None:
        # measured by the benchmarks only: change_points False keeps every class's latest
        # jobs whole, with no cut at a change of its workload (`regime_start`); min_regime,
        # the fewest jobs on each side of a cut; shrink k > 0 gives each size class of a
        # partition k more samples, evenly spaced quantiles of the partition's pooled
        # ratios (a class of n jobs weighs n / (n + k) against its partition); at_limit
        # (partition -> its time limit, s): jobs asking the limit (no request of their own)
        # a class apart from those that asked less, finest
        self.by_request = by_request  # also per request class (`request_class`), finest
        # wait samples also per band of the scheduler's estimate (`estimate_band` of these
        # limits), finest, a band with fewer than min_band samples falling back to its class
        self.estimate_bands = estimate_bands
        # measured by the benchmarks only: a calibrated start capped at the bound of the
        # site's recent waits of its class (`capped_by_waits`)
        self.recent_cap = recent_cap
        self.at_limit = dict(at_limit or {})
        # other sites' ratios, for a site with too few finished jobs of its own (`borrowed`)
        self.pool: PooledRatios | None = None
        # the first door whose ratios a thin second door to its cluster reads (`through`)
        self.ratios_of: str | None = None
        samples, waits = list(samples), list(wait)
        self._set_recent(queued, own, own_runtimes)
        if cohort_s is not None and any(getattr(s, "running", False) for s in samples):
            cohort = started_within(samples, cohort_s)
            # too few jobs started in the window to say anything: the ended ones, as before
            samples = cohort if sum(isinstance(s, RunSample) and not s.running
                                    for s in cohort) >= MIN_SAMPLES else \
                [s for s in samples if not getattr(s, "running", False)]
        self.wait: SiteCalibration | None = SiteCalibration(waits) if waits else None
        by_key: dict[tuple[str, ...], list[RunSample]] = {}
        running: dict[tuple[str, ...], list[float]] = {}
        for s in samples:
            if s.requested_s <= 0 or s.runtime_s < 0:
                continue
            part, cls = s.partition or "", size_class(s.cpus)
            keys: tuple[tuple[str, ...], ...] = ((part, cls), (part, "*"), ("*", cls), ("*", "*"))
            if (tag := self.request_tag(part, s.requested_s)) is not None:
                keys += ((part, cls, tag),)
            for key in keys:
                if getattr(s, "running", False):
                    running.setdefault(key, []).append(s.ratio)
                else:
                    by_key.setdefault(key, []).append(s)
        self._ratios: dict[tuple[str, ...], Ratio] = {}
        for key, ss in by_key.items():
            if len(ss) >= MIN_SAMPLES:  # finished jobs decide whether a class is known
                recent = sorted(ss, key=lambda s: s.ended_at)[-MAX_SAMPLES:]
                if change_points:
                    recent = recent[regime_start([s.ratio for s in recent], min_regime):]
                name = "*" if key == ("*", "*") else "/".join(key)
                self._ratios[key] = _ratio(
                    with_survivors([s.ratio for s in recent], running.get(key, []), tail),
                    name)
        if shrink > 0:
            self._shrink(shrink)
        if estimate_bands:
            self._banded(min_band)

    def _shrink(self, k: int) -> None:
        """Each (partition, size class) ratio mixed with k evenly spaced quantiles of its
        partition's pooled ratio (`shrink`)."""
        for key, r in list(self._ratios.items()):
            if len(key) != 2 or "*" in key or (key[0], "*") not in self._ratios:
                continue
            pool = self._ratios[(key[0], "*")].values
            prior = [pool[min(len(pool) - 1, int((i + 0.5) * len(pool) / k))]
                     for i in range(k)]
            self._ratios[key] = _ratio([*r.values, *prior], r.key)

    def _banded(self, min_band: int) -> None:
        """Estimate bands with fewer than `min_band` samples dropped (their class decides);
        a band with too few for a QBETS bound takes its class's bound."""
        for key, r in list(self._ratios.items()):
            if len(key) != 3:
                continue
            coarse = self._ratios.get(key[:2])
            if r.samples < min_band:
                del self._ratios[key]
            elif not r.bounded and coarse is not None and coarse.bounded:
                self._ratios[key] = replace(r, upper=max(coarse.upper, r.median), bounded=True)

    def _set_recent(self, queued: dict[str, QueueWait] | None, own: Iterable[PredictionSample],
                    own_runtimes: dict[str, float] | None) -> None:
        """What changes between accounting queries: the recent jobs' waits, the user's own
        jobs against the model, the user's queued and running jobs' expected runtimes."""
        self.queued: dict[str, QueueWait] = queued or {}  # recent jobs' waits, by native id
        own = list(own)
        self.own: OwnError | None = own_error(own)  # the user's jobs here, vs the model
        # the user's jobs queued here now: (age s, CPUs asked or None), oldest first
        self.own_queued: tuple[tuple[float, int | None], ...] = tuple(sorted(
            ((s.observed_s, s.cpus) for s in own if s.waiting and not s.gated),
            key=lambda a: -a[0]))
        # the user's own queued and running jobs here: how long each is expected to run (s,
        # by native id, as their kind ran before), not as other users' jobs of their class
        self.own_runtimes: dict[str, float] = dict(own_runtimes or {})

    def with_recent(self, queued: dict[str, QueueWait] | None,
                    own: Iterable[PredictionSample] = (),
                    own_runtimes: dict[str, float] | None = None) -> SiteCalibration:
        """A copy with these recent waits, own jobs and own runtimes; its ratios (built
        from the finished jobs and the wait samples) are this one's."""
        out = copy(self)
        out._set_recent(queued, own, own_runtimes)
        return out

    def own_queued_ahead_s(self, cpus: int) -> float | None:
        """How long the oldest of the user's jobs queued here now that asked no more CPUs
        than `cpus` (or an unknown number) has waited: a new job of `cpus` queues behind it
        (the same user's, submitted later). None: none is queued, or none for longer than
        OWN_QUEUED_MIN_S (a scheduler's cycle, no evidence of a slow queue)."""
        return next((age for age, c in self.own_queued
                     if age >= OWN_QUEUED_MIN_S and (c is None or c <= cpus)), None)

    @property
    def samples(self) -> int:
        r = self._ratios.get(("*", "*"))
        return r.samples if r else 0

    def exact(self, key: tuple[str, str]) -> Ratio | None:
        """The ratio of one class (partition, size class), "*" for any; None with fewer
        than MIN_SAMPLES samples."""
        return self._ratios.get(key)

    def ratio(self, partition: str | None, cpus: int | None, walltime_s: float | None = None
              ) -> Ratio | None:
        """The finest class with enough samples for a job of this partition and size (and
        walltime request, `by_request`)."""
        part, cls = (partition or "").split(",")[0], size_class(cpus)
        tag = self.request_tag(part, walltime_s)
        finest = ((part, cls, tag),) if tag is not None else ()
        for key in (*finest, (part, cls), (part, "*"), ("*", "*")):
            if key in self._ratios:
                return self._ratios[key]
        return self.pool.ratio(cpus) if self.pool is not None else None

    def request_tag(self, part: str, walltime_s: float | None) -> str | None:
        """The finest key's part from a job's request: its request class (`by_request`),
        "limit" or "asked" (`at_limit`), None without either."""
        if self.estimate_bands:
            return estimate_band(walltime_s, self.estimate_bands)
        if self.by_request:
            return request_class(walltime_s) or ""
        if part in self.at_limit:
            return "limit" if walltime_s and walltime_s >= self.at_limit[part] else "asked"
        return None

    @property
    def borrows(self) -> bool:
        """Whether its ratios are other sites' (too few finished jobs of its own)."""
        return self.pool is not None and not self._ratios

    def through(self, first: SiteCalibration, name: str) -> SiteCalibration:
        """A copy whose runtime ratios are those of `first`, the entry `name` this one is a
        second door to: the same cluster's jobs, for a door with too few finished jobs of
        its own (one whose accounting reads fewer, a slurmrestd door). Its waits and own
        jobs stay its own."""
        out = copy(self)
        out._ratios, out.by_request, out.ratios_of = first._ratios, first.by_request, name
        out.at_limit = first.at_limit
        return out


class CalibrationCache:
    """Each site's SiteCalibration, kept while what it was built from is unchanged. Its
    ratios (sorted, cut at the last change point, per class) come from the finished jobs
    and the wait samples, which change only when new accounting or a newly started job
    arrives; a decision between those reuses them. Keyed on what the samples are made of
    when the caller says it (`inputs`: compared instead of the samples, which are then not
    even built), else on the samples themselves, so new samples are never answered with
    the old ratios: equal inputs give the same object, new recent waits or own jobs a copy
    with the same ratios (`with_recent`), anything else a calibration built anew."""

    def __init__(self) -> None:
        # site: (its inputs, what the ratios are built from, what the rest is, the
        # calibration)
        self._kept: dict[str, tuple[object, tuple, tuple, SiteCalibration]] = {}

    def site(self, name: str,
             samples: Iterable[RunSample | WaitSample] | Callable[
                 [], Iterable[RunSample | WaitSample]],
             wait: Iterable[WaitSample] = (), queued: dict[str, QueueWait] | None = None,
             own: Iterable[PredictionSample] = (), cohort_s: float | None = None,
             own_runtimes: dict[str, float] | None = None, *,
             inputs: object = None) -> SiteCalibration:
        """Site `name`'s calibration from these inputs (SiteCalibration's). `inputs`: what
        `samples`, `wait` and `cohort_s` are made of, cheap to compare (the accounting read
        as the caller holds it, the store's rows it used): while equal to the kept one's,
        the kept ratios stand and `samples` (here a function that builds them) is not
        called; None (or when they differ): the samples built are compared instead."""
        kept = self._kept.get(name)
        if inputs is not None and kept is not None and kept[0] == inputs:
            ratios_key, same = kept[1], True
        else:
            built = samples() if callable(samples) else samples
            ratios_key = (tuple(built), tuple(wait), cohort_s)
            same = kept is not None and kept[1] == ratios_key
        recent_key = (dict(queued or {}), tuple(own), dict(own_runtimes or {}))
        if kept is not None and same:
            if kept[2] == recent_key:
                cal = kept[3]
            else:
                cal = kept[3].with_recent(queued, recent_key[1], own_runtimes)
        else:
            cal = SiteCalibration(ratios_key[0], wait=ratios_key[1], queued=queued,
                                  own=recent_key[1], cohort_s=cohort_s,
                                  own_runtimes=own_runtimes)
        self._kept[name] = (inputs, ratios_key, recent_key, cal)
        return cal


class PooledRatios:
    """The runtime/request ratios of every site's recent jobs together, by size class: what
    a site with fewer than MIN_SAMPLES finished jobs of its own borrows (a site with a fresh
    accounting, or whose only ended jobs were the user's). Users over-request walltime
    everywhere, so the federation's jobs of the same size say more of a site's queue than
    the walltime does; the size class over every site first, then every site's jobs, as
    `pooled_share` does for the job's own runtime.

    The median and mean are the pool's. The 90% bound is not the pool's: the borrower's
    jobs may be unlike the mixture and unlike every one site's (on the test bed, a site of
    whole-node jobs that run half their request, beside sites whose jobs run under a
    fifth), so for the bound the sites are the samples: the QBETS order statistic over
    the sites' own bounds (each site's, the walltime where it has too few jobs for one),
    the least that, with 95% confidence, at least 90% of sites stay below. That needs 29
    sites; short of them the bound is the walltime (ratio 1, `bounded` False), which no
    job passes, for queued and running jobs alike."""

    def __init__(self, cals: Iterable[SiteCalibration]) -> None:
        self._cals = [c for c in cals if c.exact(("*", "*")) is not None]
        self._memo: dict[str, Ratio | None] = {}

    def __bool__(self) -> bool:
        return bool(self._cals)

    @property
    def samples(self) -> int:
        """How many finished jobs the lending sites have in all."""
        return sum(c.samples for c in self._cals)

    def ratio(self, cpus: int | None) -> Ratio | None:
        """The pooled ratio of this size class over every site with at least MIN_SAMPLES of
        it together, else of every site's jobs; None without any."""
        cls = size_class(cpus)
        if cls not in self._memo:
            self._memo[cls] = None
            for key in (("*", cls), ("*", "*")):
                rs = [r for r in (c.exact(key) for c in self._cals) if r is not None]
                values = [x for r in rs for x in r.values]
                if len(values) >= MIN_SAMPLES:
                    pooled = _ratio(values, f"other sites' {'/'.join(key)}")
                    uppers = sorted(r.upper for r in rs)
                    k = quantile_upper_index(len(uppers))
                    self._memo[cls] = replace(
                        pooled, bounded=k is not None,
                        upper=1.0 if k is None else max(pooled.upper, uppers[k]))
                    break
        return self._memo[cls]


def borrowed(cals: dict[str, SiteCalibration], doors: Collection[str] = ()
             ) -> dict[str, SiteCalibration]:
    """The calibrations with, for each site with fewer than MIN_SAMPLES finished jobs of
    its own, the other sites' ratios to borrow (`PooledRatios`); the rest as they are.
    `doors`: entries that are second doors to a cluster listed already (`Sites.second_doors`,
    each mapped to its first door): their jobs are that cluster's, pooled once, through its
    first door; a thin one reads its first door's own ratios where that has them (`through`),
    else borrows the pool like any thin site."""
    thin = [n for n, c in cals.items() if c is not None and c.exact(("*", "*")) is None]
    if not thin:
        return cals
    firsts: Mapping[str, str] = doors if isinstance(doors, Mapping) else {}
    out = dict(cals)
    for n in thin:
        first = cals.get(firsts[n]) if n in firsts else None
        if first is not None and first.exact(("*", "*")) is not None:
            out[n] = cals[n].through(first, firsts[n])
    pool = PooledRatios(c for n, c in cals.items()
                        if c is not None and n not in thin and n not in doors)
    if pool:
        for n in thin:
            if out[n] is cals[n]:
                out[n] = copy(cals[n])
                out[n].pool = pool
    return out


def pooled_share(cals: Iterable[SiteCalibration], cpus: int | None) -> tuple[float, int] | None:
    """(the mean runtime / request of recent jobs of this size, on every site together,
    how many jobs): what a job with no history of its own may expect to use of its
    walltime. None without samples."""
    cals = list(cals)
    for key in (("*", size_class(cpus)), ("*", "*")):  # of its size if any site has those
        rs = [r for r in (c.exact(key) for c in cals) if r is not None]
        if n := sum(r.samples for r in rs):
            return sum(r.mean * r.samples for r in rs) / n, n
    return None


@dataclass(frozen=True)
class QueueWait:
    """How long one job waited in a site's queue: from its submission to its start, or
    to now for a job still waiting (a wait at least this long)."""

    partition: str | None
    cpus: int | None
    wait_s: float
    waiting: bool = False  # still waiting: `wait_s` is how long so far (right-censored)
    submitted_at: float = 0.0  # epoch seconds (0: unknown, left out of `RecentWaits.adapted`)
    user: str | None = None  # who submitted it (None: not known)
    # cancelled while it waited: `wait_s` is how long until it left the queue. Right-censored,
    # as a job still waiting is: it would have waited at least that long, and its start is
    # never seen (counted as a start of that wait, a queue its users gave up on would look
    # short; left out, as long)
    left: bool = False
    nodes: int | None = None  # the nodes it asked (None: not known)
    walltime_s: float | None = None  # the time it asked (None: not known)

    @property
    def censored(self) -> bool:
        """Its start is not known: it waits still, or it left the queue unstarted."""
        return self.waiting or self.left


def queue_waits(jobs: Iterable[JobStatus], now: datetime, window_s: float,
                every_waiting: bool = False) -> dict[str, QueueWait]:
    """By native id, the waits of the jobs that started in the `window_s` before `now`,
    and of those submitted in it and still waiting (counted up to now); `every_waiting`:
    of every job still waiting, however long ago it was submitted (measured with the
    adaptive level, `RecentWaits.adapted`; not used by placement)."""
    recent, every = view_waits(jobs, now, window_s)
    return every if every_waiting else recent


def view_waits(jobs: Iterable[JobStatus], now: datetime, window_s: float
               ) -> tuple[dict[str, QueueWait], dict[str, QueueWait]]:
    """`queue_waits` both ways at once (without, then with `every_waiting`): each job's
    wait worked out once."""
    recent: dict[str, QueueWait] = {}
    every: dict[str, QueueWait] = {}
    for j in jobs:
        if j.submitted_at is None:
            continue
        if j.state == JobState.CANCELLED and j.ended_at is not None and (
                j.started_at is None or j.started_at == j.ended_at):
            # cancelled while it waited (Slurm writes such a job's start as its cancel): a
            # censored wait up to the cancel, in the window where it left the queue
            if 0 <= (now - j.ended_at).total_seconds() <= window_s:
                recent[j.native_id] = every[j.native_id] = QueueWait(
                    j.partition, j.cpus, max(0.0, (j.ended_at - j.submitted_at)
                                             .total_seconds()),
                    submitted_at=j.submitted_at.timestamp(), user=j.user, left=True,
                    nodes=j.nodes, walltime_s=j.walltime_s)
        elif j.started_at is not None:
            if 0 <= (now - j.started_at).total_seconds() <= window_s:
                recent[j.native_id] = every[j.native_id] = QueueWait(
                    j.partition, j.cpus, max(0.0, (j.started_at - j.submitted_at)
                                             .total_seconds()),
                    submitted_at=j.submitted_at.timestamp(), user=j.user, nodes=j.nodes,
                    walltime_s=j.walltime_s)
        elif j.state == JobState.PENDING and (
                waited := (now - j.submitted_at).total_seconds()) >= 0:
            every[j.native_id] = w = QueueWait(j.partition, j.cpus, waited, waiting=True,
                                               submitted_at=j.submitted_at.timestamp(),
                                               user=j.user, nodes=j.nodes,
                                               walltime_s=j.walltime_s)
            if waited <= window_s:
                recent[j.native_id] = w
    return recent, every


RECENT_WAITS_S = 6 * 3600.0  # the window of recent waits a start's bound rests on


def site_waits(queued: dict[str, QueueWait] | None, jobs: Iterable[JobStatus],
               now: datetime) -> RecentWaits:
    """A site's recent waits: those its accounting gave (`SiteCalibration.queued`) and
    those its view shows (`queue_waits`), each job once."""
    return RecentWaits({**(queued or {}), **queue_waits(jobs, now, RECENT_WAITS_S)}.values())


def site_drain(queued: dict[str, QueueWait] | None, jobs: Iterable[JobStatus],
               now: datetime, user: str | None) -> tuple[float, int] | None:
    """`own_drain_bound` of a new job of `user` at a site: behind every job of theirs its
    view shows waiting, at the rate its accounting and view say their jobs started."""
    return site_waits_and_drain(queued, jobs, now, user)[1]


def site_waits_and_drain(queued: dict[str, QueueWait] | None, jobs: Iterable[JobStatus],
                         now: datetime, user: str | None
                         ) -> tuple[RecentWaits, tuple[float, int] | None]:
    """`site_waits` and `site_drain` together, the view's waits worked out once (and not
    at all for the drain without a user or any job of theirs waiting)."""
    jobs = list(jobs)
    ahead = own_ahead((j for j in jobs if j.state == JobState.PENDING), user)
    if user is None or not ahead:  # nothing to drain (`own_drain_bound`)
        return site_waits(queued, jobs, now), None
    recent, every = view_waits(jobs, now, RECENT_WAITS_S)
    drain = own_drain_bound({**(queued or {}), **every}.values(), user, ahead,
                            now.timestamp())
    return RecentWaits({**(queued or {}), **recent}.values()), drain


MIN_CAP_WAITS = 29  # `capped_by_waits`: the fewest waits with a measured 90% bound


def queue_when_waited(waits: Iterable[QueueWait], partition: str | None) -> int | None:
    """The median number of jobs of `partition` (the first named) waiting when each started
    one of `waits` of that partition was submitted (those submitted before it and not
    started by then); None without a started wait. Jobs ended before the window are not
    among the waits, so this counts low: a queue measured this way was no longer."""
    part = (partition or "").split(",")[0]
    mine = [w for w in waits if w.submitted_at > 0
            and (w.partition or "").split(",")[0] == part]
    counts = [sum(1 for k in mine if k is not w and k.submitted_at < w.submitted_at
                  and (k.waiting or k.submitted_at + k.wait_s > w.submitted_at))
              for w in mine if not w.censored]
    return None if not counts else int(median(counts))


def capped_by_waits(start_s: float, waited: tuple[float, int] | None, queued_now: int,
                    queued_then: int | None, min_waits: int = MIN_CAP_WAITS) -> float:
    """A calibrated start no later than the bound of the site's recent waits of its class
    (`RecentWaits.bound`: (bound, waits)) where that bound rests on `min_waits` waits and
    the queue ahead now (`queued_now`) is no longer than when those jobs queued
    (`queue_when_waited`): a burst since would make the bound too soon. Measured by the
    benchmarks (`SiteCalibration.recent_cap`), not used by placement."""
    if waited is None or waited[1] < min_waits or queued_then is None \
            or queued_now > queued_then:
        return start_s
    return min(start_s, waited[0])


AHEAD_CLASS_LIMITS = (0, 3, 15, 63)  # own jobs queued ahead: none, 1-3, 4-15, 16-63, 64+
Key = tuple[str, str, str]  # (partition, size class, class of own jobs ahead), "*" for any


def ahead_class(ahead: int | None) -> str:
    """The class of how many of its user's own jobs a job queues behind ("*": not known)."""
    if ahead is None:
        return "*"
    i = bisect_right(AHEAD_CLASS_LIMITS, ahead - 1)
    if i == 0:
        return "0"
    lo = AHEAD_CLASS_LIMITS[i - 1] + 1
    return f"{lo}-{AHEAD_CLASS_LIMITS[i]}" if i < len(AHEAD_CLASS_LIMITS) else f"{lo}+"


@lru_cache(maxsize=4096)  # per wait of every job in a site's view: few distinct classes
def _wait_keys(partition: str | None, cpus: int | None, ahead: str = "*") -> tuple[Key, ...]:
    """A wait's classes, finest first: partition and size, partition, all; each of jobs
    behind as many of their user's own first (`ahead_class`), then of any."""
    part, cls = (partition or "").split(",")[0], size_class(cpus)
    kinds = (part, cls), (part, "*"), ("*", "*")
    return (*((*k, ahead) for k in kinds if ahead != "*"), *((*k, "*") for k in kinds))


@dataclass(frozen=True)
class Adapted:
    """A kind of job's bound level (`RecentWaits.adapted`) and the outcomes that set it."""

    level: float = QUANTILE
    outcomes: int = 0
    misses: int = 0


def own_ahead(pending: Iterable[JobStatus], user: str | None) -> int | None:
    """How many jobs of `user` a new job of that user queues behind (`pending`: the jobs
    waiting ahead of it); None where the user is not known."""
    return None if user is None else sum(1 for j in pending if j.user == user)


def _aheads(timed: list[QueueWait]) -> list[str]:
    """For waits sorted by submission, the class of how many of its user's own jobs each
    queued behind when submitted (those of the list submitted before it, not started by
    then); "*" where its user is not known."""
    out = []
    for i, w in enumerate(timed):
        if w.user is None:
            out.append("*")
            continue
        at = w.submitted_at
        out.append(ahead_class(sum(1 for e in timed[:i] if e.user == w.user and (
            e.waiting or e.submitted_at + e.wait_s > at))))
    return out


def _seen(w: QueueWait, at: float) -> tuple[float, bool]:
    """What was known at `at` of a job submitted before: its wait if it had started, else
    the wait so far (still waiting)."""
    if not w.waiting and w.submitted_at + w.wait_s <= at:
        return w.wait_s, w.left
    return at - w.submitted_at, True


def _adapt(timed: list[QueueWait], aheads: list[str]) -> dict[str, Adapted]:
    """`RecentWaits.adapted` over waits sorted by submission (`aheads`: their classes of own
    jobs ahead): per class, the level and its outcomes."""
    miss_level: dict[str, float] = {}
    outcomes: dict[str, int] = {}
    misses: dict[str, int] = {}
    known: list[tuple[float, str, bool]] = []  # a heap of (when known, class, missed)

    def learn(until: float) -> None:
        while known and known[0][0] <= until:
            _, kind, missed = heappop(known)
            outcomes[kind] = outcomes.get(kind, 0) + 1
            misses[kind] = misses.get(kind, 0) + missed
            miss_level[kind] = 1 - next_level(1 - miss_level.get(kind, MISS_TARGET), missed,
                                              ADAPT_STEP, (1 - MAX_MISS, 1 + ADAPT_STEP))

    keys = [_wait_keys(w.partition, w.cpus, k) for w, k in zip(timed, aheads, strict=True)]
    members: dict[Key, list[int]] = {}  # the waits of each class, in submission order
    for i, its in enumerate(keys):
        for key in its:
            members.setdefault(key, []).append(i)
    for i, w in enumerate(timed):
        at, kind = w.submitted_at, aheads[i]
        learn(at)
        bound = None
        for key in keys[i]:  # the finest class with enough waits known at this submission
            before = members[key][:bisect_left(members[key], i)]
            if len(before) >= MIN_WAITS:
                bound = level_bound(sorted(_seen(timed[j], at) for j in before),
                                    1 - miss_level.get(kind, MISS_TARGET))
                break
        if bound is None:
            continue
        if w.wait_s > bound:  # a miss, known when the bound passed (waiting or not)
            heappush(known, (at + bound, kind, True))
        elif not w.censored:  # within it, known at its start
            heappush(known, (at + w.wait_s, kind, False))
    learn(math.inf)  # every outcome pushed is known by now (the latest start or wait seen)
    return {k: Adapted(1 - miss_level[k], outcomes[k], misses[k]) for k in miss_level}


def censored_quantile(obs: list[tuple[float, bool]], k: int) -> float:
    """The QBETS order statistic x_(k) of sorted (wait, still waiting) pairs, read from
    their Kaplan-Meier estimate: the least wait by which (k + 1) / n of the jobs have
    started. Without waiting jobs that is x_(k) itself; each one still waiting moves its
    share onto the longer waits. Where the estimate never gets there (the longest waits are
    still going on), the longest wait seen: every such job waits at least that long."""
    level, at_risk, started = (k + 1) / len(obs), len(obs), 0.0
    for wait_s, waiting in obs:
        if not waiting:
            started += (1 - started) / at_risk
            if started >= level - 1e-12:
                return wait_s
        at_risk -= 1
    return obs[-1][0]


MISS_TARGET = 1 - QUANTILE  # the share of starts a "90%" bound may miss
ADAPT_STEP = 0.05  # how far one outcome moves the level (the step of adaptive conformal
# inference): after a miss the level rises by 0.045, after a start within the bound it falls
# by 0.005, so it settles where a tenth of the outcomes are misses
MAX_MISS = 0.5  # the level never falls below the median
MIN_WAITS = 19  # a class's bound needs this many waits: the longest of 19 is the
# conformal bound at 95%, room for the level to rise over 0.9 (with fewer, no level
# can get the misses down to a tenth)
ADAPT_JOBS = 400  # the most recent submissions `RecentWaits.adapted` replays


ACI_GAMMA = 0.005  # the step of adaptive conformal inference in Gibbs and Candès (2021)
ACI_LEVELS = (0.5, 0.999)  # an online level stays between the median and nearly every wait


def next_level(level: float, missed: bool, step: float = ACI_GAMMA,
               within: tuple[float, float] = ACI_LEVELS) -> float:
    """Adaptive conformal inference's update of a bound's nominal level after one outcome
    (Gibbs and Candès, 2021: alpha_t+1 = alpha_t + step (alpha - err_t), the level being
    1 - alpha_t): up step x 0.9 after a miss, down step x 0.1 after a start within the
    bound, so that over many outcomes about a tenth are misses; kept `within`."""
    return min(within[1], max(within[0], level + step * (float(missed) - MISS_TARGET)))


@dataclass
class OnlineLevels:
    """Per class of job (`size_class`), the nominal level of a site's recent-wait bound
    carried along every outcome seen (`next_level`), and how many outcomes and misses set
    it. Measured by `benchmarks.prediction` (models `online`, `online_floor`, run along a
    whole log), not used by placement (see benchmarks/README.md)."""

    levels: dict[str, float] = field(default_factory=dict)
    outcomes: int = 0
    misses: int = 0

    def level(self, kind: str) -> float:
        return self.levels.get(kind, QUANTILE)

    def learn(self, kind: str, missed: bool) -> float:
        """One outcome of a bound given to a job of class `kind`: its level moved."""
        self.outcomes += 1
        self.misses += bool(missed)
        self.levels[kind] = next_level(self.level(kind), missed)
        return self.levels[kind]


def level_bound(obs: list[tuple[float, bool]], level: float) -> float | None:
    """The bound at `level` over sorted (wait, still waiting) pairs: the conformal order
    statistic x_(k), k = ceil(level (n + 1)) (1-based; a new wait as likely to fall in any
    of the n + 1 gaps), read from their Kaplan-Meier estimate (`censored_quantile`); past
    the longest (k > n, or a level of 1 and more), the longest wait seen. None with fewer
    than MIN_WAITS."""
    n = len(obs)
    if n < MIN_WAITS:
        return None
    return censored_quantile(obs, min(n, math.ceil(level * (n + 1) - 1e-9)) - 1)


def regime_waits(waits: Iterable[QueueWait]) -> list[QueueWait]:
    """The waits of each size class since that class's waits last changed, as QBETS keeps
    a queue's history (Nurmi, Brevik, Wolski): per partition and size class, the latest
    MAX_SAMPLES waits in submission order are cut at their latest change point
    (`regime_start`: a rank test, a wait still going on ranked by how long it has waited
    so far), the ones before it dropped. Waits without a submission time are kept as they
    are. Measured by `benchmarks.prediction` (model `qbets`, over a week of history), not
    used by placement: on KTH's log it covered 0.92-0.99 where 0.9 was asked, its bound up
    to 2.6x wider, and on HPC2N's it covered less on three seeds of eight."""
    groups: dict[tuple[str, str], list[QueueWait]] = {}
    kept = []
    for w in waits:
        if w.submitted_at > 0:
            key = ((w.partition or "").split(",")[0], size_class(w.cpus))
            groups.setdefault(key, []).append(w)
        else:
            kept.append(w)
    for group in groups.values():
        group = sorted(group, key=lambda w: w.submitted_at)[-MAX_SAMPLES:]
        kept += group[regime_start([w.wait_s for w in group]):]
    return kept


def poisson_rate_lower(count: int, span_s: float, confidence: float = CONFIDENCE) -> float:
    """The rate (per second) that, with `confidence`, events seen `count` times in
    `span_s` seconds come at least at: the least rate r with P(Poisson(r span) >= count)
    >= 1 - confidence (found by bisection); 0 without any event."""
    if count <= 0 or span_s <= 0:
        return 0.0

    def at_least(mean: float) -> float:  # P(Poisson(mean) >= count)
        term = total = math.exp(-mean)
        for k in range(1, count):
            term *= mean / k
            total += term
        return 1.0 - total

    lo, hi = 0.0, float(count)
    while at_least(hi) < 1 - confidence:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if at_least(mid) < 1 - confidence else (lo, mid)
    return hi / span_s


MIN_DRAIN_STARTS = MIN_SAMPLES  # a user's start rate needs this many recent starts


def own_drain_bound(waits: Iterable[QueueWait], user: str | None, ahead: int | None,
                    now: float, window_s: float = RECENT_WAITS_S) -> tuple[float, int] | None:
    """(how long a new job of `user` queued behind `ahead` of their own jobs waits at most
    for those to start, at the rate the site has started that user's jobs lately; how many
    starts that rate rests on), None where not known.

    A site that limits how many jobs a user runs at once (or shares by user) starts a
    user's backlog at that user's rate, whatever the free nodes: a burst of hundreds of
    one user's jobs waits in line behind its own, longer than any queue view shows. The
    rate is measured over the user's busy span (since the earliest submission of their
    jobs in `waits`, at most `window_s`), counting the starts in it; its lower 95%
    confidence bound (`poisson_rate_lower`) gives the time for `ahead` starts. Needs a
    known user, jobs ahead and MIN_DRAIN_STARTS starts."""
    if user is None or not ahead:
        return None
    mine = [w for w in waits if w.user == user and w.submitted_at > 0]
    if not mine:
        return None
    since = max(now - window_s, min(w.submitted_at for w in mine))
    starts = sum(1 for w in mine if not w.censored and since <= w.submitted_at + w.wait_s <= now)
    if starts < MIN_DRAIN_STARTS or now <= since:
        return None
    return ahead / poisson_rate_lower(starts, now - since), starts


SIMILAR_SIZE_FACTORS = (2, 4, 8, 16)  # a job like it asks within this factor of its nodes
# (or CPUs where nodes are not known), the narrowest first
MIN_SIMILAR_WAITS = 46  # the fewest waits whose QBETS 90% bound (95% confidence) is not
# the single longest (`quantile_upper_index`); with 29, the fewest with any bound, coverage
# fell on KTH's log (benchmarks/README.md, session 41)


@dataclass(frozen=True)
class SimilarBound:
    """A bound on a new job's wait from the waits of jobs like it: (seconds, how many
    waits, which jobs in words: "4-16 nodes")."""

    seconds: float
    samples: int
    of: str


@dataclass(frozen=True)
class SimilarClass:
    """Jobs whose size (`unit`: "nodes" or "CPUs") lies in [low, high]."""

    unit: str
    low: int
    high: int

    def holds(self, nodes: int | None, cpus: int | None) -> bool:
        """Whether a job of `nodes` and `cpus` is of it."""
        size = nodes if self.unit == "nodes" else cpus
        return size is not None and self.low <= size <= self.high

    @property
    def words(self) -> str:
        return f"{self.low}-{self.high} {self.unit}"


def similar_classes(nodes: int | None, cpus: int | None) -> list[SimilarClass]:
    """The classes of jobs like one of `nodes` (else `cpus`), narrowest first: within each
    of SIMILAR_SIZE_FACTORS of its size. Empty where its size is not known. (Classes of
    the time asked too, narrowest first, lowered the bound's coverage on HPC2N's log:
    benchmarks/README.md, session 41.)"""
    unit, size = ("nodes", nodes) if nodes else ("CPUs", cpus)
    if not size:
        return []
    return [SimilarClass(unit, max(1, math.ceil(size / f)), size * f)
            for f in SIMILAR_SIZE_FACTORS]


MIN_CONFORMAL_WAITS = 9  # the fewest waits whose longest is a conformal 90% bound on a new
# one: of n + 1 exchangeable waits the new one is the longest with probability 1 / (n + 1), so
# x_(k), k = ceil(0.9 (n + 1)), holds it with probability at least 0.9, and k <= n from n = 9


def few_waits_bound(obs: list[tuple[float, bool]], q: float = QUANTILE
                    ) -> tuple[float, int] | None:
    """(the conformal `q` bound on a new wait, how many waits it rests on) from sorted
    (wait, still waiting) pairs too few for the QBETS bound (29 for 90% at 95% confidence):
    the order statistic x_(k), k = ceil(q (n + 1)) (1-based), read from their Kaplan-Meier
    estimate (`censored_quantile`). A new job whose wait is exchangeable with these stays
    within it with probability at least `q`, on average over the waits that could have been
    seen, not with 95% confidence for these ones: a looser promise, said as such. None with
    fewer than MIN_CONFORMAL_WAITS."""
    n = len(obs)
    if n < MIN_CONFORMAL_WAITS:
        return None
    return censored_quantile(obs, min(n, math.ceil(q * (n + 1) - 1e-9)) - 1), n


class RecentWaits:
    """A site's recent waits, grouped by class once; `bound` per class on first use: the
    QBETS order statistic (90%, 95% confidence), or with `adaptive` (measured by
    `benchmarks.prediction`, model `adaptive`; not used by placement: on HPC2N's log it
    covered less on two seeds of four) at the level `adapted` sets per class of own jobs
    ahead, over the waits of jobs behind as many of their own."""

    def __init__(self, waits: Iterable[QueueWait], adaptive: bool = False,
                 regime: bool = False) -> None:
        waits = list(waits)
        if regime:  # each class's waits since its latest change (`regime_waits`)
            waits = regime_waits(waits)
        timed = sorted((w for w in waits if w.submitted_at > 0),
                       key=lambda w: w.submitted_at)[-ADAPT_JOBS:] if adaptive else []
        aheads = _aheads(timed)
        ahead_of = {id(w): k for w, k in zip(timed, aheads, strict=True)}
        # the waits of each (partition, size, jobs ahead) together first, then each such
        # group in its classes: a class's waits are only ever read sorted
        groups: dict[tuple[str | None, int | None, str], list[tuple[float, bool]]] = {}
        for w in waits:
            groups.setdefault((w.partition, w.cpus, ahead_of.get(id(w), "*") if ahead_of
                               else "*"), []).append((w.wait_s, w.censored))
        self._by: dict[Key, list[tuple[float, bool]]] = {}
        for (partition, cpus, ahead), obs in groups.items():
            for key in _wait_keys(partition, cpus, ahead):
                self._by.setdefault(key, []).extend(obs)
        self._waits, self._adaptive = waits, adaptive
        self.waits = waits  # as given (`queue_when_waited`)
        self._timed, self._aheads = timed, aheads
        self._bounds: dict[tuple[Key, str], tuple[float, int] | None] = {}
        self._levels: dict[str, Adapted] | None = None
        self._kinds: dict[str, dict[tuple[int | None, int | None],
                                    list[tuple[float, bool]]]] = {}
        self._similar: dict[tuple[str, int | None, int | None], SimilarBound | None] = {}

    def adapted(self, ahead: int | None = None) -> Adapted:
        """The nominal level of the site's bound for a job queued behind `ahead` jobs of
        its own user (None: not known), by adaptive conformal inference (Gibbs and Candès,
        2021) replayed over the jobs submitted here recently, in order, each class of jobs
        ahead (`ahead_class`) apart.

        At each job's submission the bound is computed from what was known then (the waits
        of the jobs that had started, and of those still waiting, censored, each in the
        window given), at its class's current level; its outcome is known when the job
        starts or when the bound passes first, and then moves that level: up ADAPT_STEP x
        0.9 after a miss, down ADAPT_STEP x 0.1 after a start within it, so the misses
        among the outcomes it sees tend to a tenth (an outcome is known only when the job
        starts or its bound passes: a burst that waits for days is learnt from late). A
        job behind its user's own waits as those do (bursts of one user's jobs wait
        together; on the logs the median wait of a job behind 16-63 of its own was hours
        where one behind none started at once), so its bound rests on the waits of jobs
        behind as many of their own (where MIN_WAITS are known, else on all), at its
        class's level. A level starts at 0.9, stays at or above the median, and may pass 1
        (then the bound is the longest wait seen). Jobs without a submission time are left
        out; one whose user is not known counts in no class of jobs ahead."""
        if self._levels is None:
            self._levels = _adapt(self._timed, self._aheads)
        return self._levels.get(ahead_class(ahead), Adapted())

    def _of(self, key: Key, ahead: int | None) -> tuple[float, int] | None:
        kind = ahead_class(ahead)
        if (key, kind) not in self._bounds:
            obs = sorted(self._by.get(key, ()))  # at a tie a start comes first: the
            # waiting job outlasted it
            level = self.adapted(ahead)
            if level.outcomes:
                b = level_bound(obs, level.level)
            else:  # nothing to adapt to: the QBETS bound (90%, 95% confidence)
                k = quantile_upper_index(len(obs)) if len(obs) >= MIN_SAMPLES else None
                b = None if k is None else censored_quantile(obs, k)
            self._bounds[key, kind] = None if b is None else (b, len(obs))
        return self._bounds[key, kind]

    def no_larger_than(self, cpus: int) -> RecentWaits:
        """These waits of the jobs that asked for at most `cpus` CPUs (size known): the
        evidence for a job of that size without larger jobs' waits (measured beside the
        bound by `benchmarks.placement`, not used by placement)."""
        return RecentWaits((w for w in self._waits if w.cpus is not None and w.cpus <= cpus),
                           self._adaptive)

    def similar_bound(self, partition: str | None, nodes: int | None, cpus: int | None
                      ) -> SimilarBound | None:
        """The QBETS bound (90%, 95% confidence) on a new job's wait from the waits of jobs
        of the partition like it (`similar_classes`): the first class, narrowest first,
        with at least MIN_SIMILAR_WAITS waits; None where none has (the caller falls back
        to `bound`, every size)."""
        part = (partition or "").split(",")[0]
        key = (part, nodes, cpus)
        if key in self._similar:
            return self._similar[key]
        if part not in self._kinds:  # the partition's waits by (nodes, CPUs)
            kinds: dict[tuple[int | None, int | None], list[tuple[float, bool]]] = {}
            for w in self._waits:
                if (w.partition or "").split(",")[0] == part:
                    kinds.setdefault((w.nodes, w.cpus), []).append((w.wait_s, w.censored))
            self._kinds[part] = kinds
        found = None
        for cls in similar_classes(nodes, cpus):
            groups = [obs for kind, obs in self._kinds[part].items() if cls.holds(*kind)]
            if sum(map(len, groups)) < MIN_SIMILAR_WAITS:
                continue
            obs = sorted(o for g in groups for o in g)
            if (k := quantile_upper_index(len(obs))) is not None:
                found = SimilarBound(censored_quantile(obs, k), len(obs), cls.words)
                break
        self._similar[key] = found
        return found

    @property
    def count(self) -> int:
        """How many recent waits the site has (every partition and size)."""
        return len(self._by.get(("*", "*", "*"), ()))

    def few_bound(self) -> tuple[float, int] | None:
        """Where no class of these waits, not even every size together, holds enough for
        the QBETS bound (`bound` gives None): the conformal 90% bound over every one of them
        (`few_waits_bound`), the widest source the window has; None with fewer than
        MIN_CONFORMAL_WAITS."""
        return few_waits_bound(sorted(self._by.get(("*", "*", "*"), ())))

    def quantile(self, partition: str | None, cpus: int | None, q: float
                 ) -> tuple[float, int] | None:
        """(the `q` quantile of these waits, how many it rests on), from the finest class
        with enough of them (as `bound`); None without. Measured as a floor of a start
        (`benchmarks.prediction`, models `waits_q*`)."""
        for key in _wait_keys(partition, cpus):
            v = sorted(w for w, _ in self._by.get(key, ()))
            if len(v) >= MIN_SAMPLES:
                return v[min(len(v) - 1, int(q * len(v)))], len(v)
        return None

    def bound_at(self, partition: str | None, cpus: int | None, level: float
                 ) -> tuple[float, int] | None:
        """(the conformal bound at `level` on a new job's wait (`level_bound`), how many
        waits it rests on), from the finest class (partition and size, partition, all) with
        MIN_WAITS of them; None without. The level is an online one (`OnlineLevels`;
        measured by `benchmarks.prediction`, not used by placement)."""
        for key in _wait_keys(partition, cpus):
            obs = self._by.get(key, ())
            if len(obs) >= MIN_WAITS:
                return level_bound(sorted(obs), level), len(obs)
        return None

    def bound(self, partition: str | None, cpus: int | None, ahead: int | None = None
              ) -> tuple[float, int] | None:
        """(the bound on a new job's wait: the QBETS order statistic that, with 95%
        confidence, at least the `level` quantile of these waits stays below, `level` as
        the site's recent outcomes set it for a job queued behind `ahead` of its user's
        own (`adapted`, 0.9 without any); how many waits it rests on), from the finest
        class (of jobs behind as many of their own, then of any; partition and size,
        partition, all) with enough of them; None without."""
        for key in _wait_keys(partition, cpus, ahead_class(ahead)):
            if (b := self._of(key, ahead)) is not None:
                return b
        return None


@dataclass(frozen=True)
class PredictionSample:
    """One of the user's own jobs on a site: the wait placement's model predicted for it
    (before this correction) and the wait it had, or has had so far (`started` False: it
    is still waiting, so it waits at least that long)."""

    predicted_s: float
    observed_s: float
    started: bool
    submitted_at: float = 0.0  # epoch seconds: the most recent samples are kept
    # still queued now (not started, not ended): `observed_s` is its age, and a new job of
    # the user's no smaller than it queues behind it (`SiteCalibration.own_queued_ahead_s`)
    waiting: bool = field(default=False, compare=False)
    cpus: int | None = field(default=None, compare=False)  # CPUs asked (None: not known)
    # it waits on itself, not on the queue (held, a dependency, a begin time): a new job does
    # not queue behind it and its age says nothing of how the queue moves
    gated: bool = field(default=False, compare=False)


# words of a waiting job's reason that keep it back whatever is free (Slurm's JobHeldUser,
# JobHeldAdmin, Dependency, BeginTime; PBS's and the others' held states)
WAITS_ON_ITSELF = ("held", "dependency", "begintime")


def waits_on_itself(reason: str | None) -> bool:
    """Whether a waiting job's `reason` says it is held, or waits on a dependency or its
    begin time (not on the queue)."""
    return bool(reason) and any(word in reason.lower() for word in WAITS_ON_ITSELF)


OWN_QUEUED_MIN_S = 10.0  # a job of the user's queued for less is in a scheduler's cycle
OWN_ERROR_SAMPLES = 20  # the most recent own jobs per site the correction rests on
PLACED_TO_SUBMITTED_S = 60.0  # a job submitted later than this after its placement waited
# for something else first (an approval): its prediction is not scored


def prediction_sample(job: Job, now: datetime) -> PredictionSample | None:
    """The user's job as a sample of the model's error on its site: the wait its
    placement's model predicted (`model_start`, the start before this correction, else
    the estimated start) against the wait from its submission to its start, or so far
    (to now while it waits; to its end when it was cancelled waiting). None without a
    prediction for its site, or when it was submitted long after it."""
    basis = sample_basis(job)
    return None if basis is None else basis.at(now)


@dataclass(frozen=True)
class SampleBasis:
    """What `prediction_sample` reads of a job, the moment aside: the same for as long as
    the job is (a reader keeps it per job and asks `at(now)`)."""

    predicted_s: float
    submitted: datetime
    until: datetime | None  # None: it waits still (to `now`)
    started: bool
    cpus: int | None = None
    gated: bool = False  # `PredictionSample.gated`

    def at(self, now: datetime) -> PredictionSample:
        until = aware(now) if self.until is None else self.until
        return PredictionSample(predicted_s=self.predicted_s,
                                observed_s=max(0.0, (until - self.submitted).total_seconds()),
                                started=self.started, submitted_at=self.submitted.timestamp(),
                                waiting=self.until is None, cpus=self.cpus,
                                gated=self.gated)


def sample_basis(job: Job) -> SampleBasis | None:
    """`prediction_sample`'s reading of `job` (None: the job is no sample)."""
    mine = placed_verdict(job)
    if mine is None or job.submitted_at is None:
        return None
    try:
        decided = aware(datetime.fromisoformat((job.placement or {})["now"]))
        model = aware(datetime.fromisoformat(mine.get("model_start") or mine["estimated_start"]))
    except (KeyError, TypeError, ValueError):
        return None
    submitted = aware(job.submitted_at)
    if abs((submitted - decided).total_seconds()) > PLACED_TO_SUBMITTED_S:
        return None
    if job.started_at is not None:
        until, started = aware(job.started_at), True
    elif job.state == JobState.PENDING:
        until, started = None, False
    elif job.ended_at is not None and job.state == JobState.CANCELLED:
        until, started = aware(job.ended_at), False
    else:
        return None
    res = job.spec.resources if job.spec else None
    tasks = None if res is None else res.tasks or (res.nodes or 1) * (res.tasks_per_node or 1)
    cpus = None if res is None else tasks * (res.cpus_per_task or 1)
    spec = job.spec
    gated = until is None and (spec is not None and bool(spec.hold or spec.begin
                                                         or spec.dependencies)
                               or waits_on_itself(job.reason))
    return SampleBasis(max(0.0, (model - decided).total_seconds()), submitted, until, started,
                       cpus, gated)


@dataclass(frozen=True)
class OwnError:
    """How the user's own recent jobs on a site waited against what the model predicted:
    the median of (observed + WAIT_FLOOR_S) / (predicted + WAIT_FLOOR_S), and how many
    jobs that rests on. The model misses what a view does not show (per-user limits,
    priorities, a scheduler's cadence); the user's own jobs meet exactly that. `sooner`:
    where every one of them started sooner than predicted, the largest of their ratios
    (below 1: the least any of them gained), else None. With fewer than MIN_SAMPLES jobs
    that say anything there is no `ratio` but `shift_s`, seconds (`own_error`)."""

    ratio: float | None
    samples: int
    sooner: float | None = None
    # `sooner` where none of the recent jobs is still waiting (one not yet due, which
    # `ratio` leaves out, has not started sooner yet either)
    sooner_started: float | None = None
    shift_s: float | None = None  # seconds later (below 0: sooner) from 1-4 jobs

    def corrected(self, wait_s: float, ratio: float | None = None) -> float:
        return max(0.0, (wait_s + WAIT_FLOOR_S) * (ratio or self.ratio or 1.0) - WAIT_FLOOR_S)

    def engine_ratio(self) -> float | None:
        """The ratio placement applies: a later one always; a sooner one only where every
        job started sooner, and by the least any gained (`sooner`): a short wait before is
        no promise (a queue refills), and a wrong "soon" costs more than a wrong "late"."""
        return None if self.ratio is None else self.ratio if self.ratio > 1 else self.sooner

    def applied(self, start_s: float, bound_s: float | None, ratio: float | None,
                keep_sooner_bound: bool = False) -> tuple[float, float | None]:
        """A start and its 90% bound (seconds from now) moved by `ratio` where one is given,
        else, with no ratio of its own, by `shift_s` seconds; unchanged otherwise. The start
        stays at or after now, the bound at or after the start; `keep_sooner_bound` keeps
        the bound where the move is sooner. Whether to move at all (a start at once with
        nothing queued stays) is the caller's to say."""
        if ratio is not None:
            start, sooner = self.corrected(start_s, ratio), ratio < 1
            moved = None if bound_s is None else bound_s if keep_sooner_bound and sooner \
                else self.corrected(bound_s, ratio)
        elif self.ratio is None and self.shift_s is not None:
            start, sooner = max(0.0, start_s + self.shift_s), self.shift_s < 0
            moved = None if bound_s is None else bound_s if keep_sooner_bound and sooner \
                else bound_s + self.shift_s
        else:
            return start_s, bound_s
        return start, None if moved is None else max(moved, start)


OWN_SHIFT_MIN_S = 10.0  # a few own jobs' lateness (or gain) under this is no evidence


def own_error(samples: Iterable[PredictionSample]) -> OwnError | None:
    """The correction the user's own recent jobs on one site call for, None where they
    call for none. A job still waiting counts once it has waited longer than predicted
    (its ratio is then at least its ratio so far, a lower bound, so the median is one
    too); before that it is not yet due and says nothing.

    From MIN_SAMPLES jobs that say anything, a ratio. From fewer, `shift_s`: the median of
    how many seconds later than predicted the late ones started (or have waited so far),
    else, where every recent job started sooner, the least any gained (negative); None
    within OWN_SHIFT_MIN_S. Replayed on every kept run, this ranked better on both
    backgrounds (benchmarks/README.md, miss_classes)."""
    recent = sorted(samples, key=lambda s: s.submitted_at)[-OWN_ERROR_SAMPLES:]
    telling = [s for s in recent if s.started or s.observed_s > s.predicted_s]
    if not telling:
        return None
    if len(telling) < MIN_SAMPLES:
        late = tuple(sorted(s.observed_s - max(0.0, s.predicted_s) for s in telling
                            if s.observed_s > s.predicted_s))
        if late:
            shift, on = _median(late), len(late)
        elif all(s.started for s in recent):
            shift, on = max(s.observed_s - max(0.0, s.predicted_s) for s in recent), len(recent)
        else:
            return None
        return OwnError(None, on, shift_s=shift) if abs(shift) > OWN_SHIFT_MIN_S else None
    ratios = sorted((s.observed_s + WAIT_FLOOR_S) / (max(0.0, s.predicted_s) + WAIT_FLOOR_S)
                    for s in telling)
    sooner = ratios[-1] if ratios[-1] < 1 else None
    return OwnError(min(MAX_WAIT_RATIO, _median(tuple(ratios))), len(ratios), sooner,
                    sooner if all(s.started for s in recent) else None)


class RatioFn(Protocol):
    """(partition, cpus) -> the share of its walltime a job of that class runs; with
    `elapsed_share`, the share at which a job that has already run that much ends."""

    def __call__(self, partition: str | None, cpus: int | None,
                 elapsed_share: float | None = None, walltime_s: float | None = None
                 ) -> float: ...


def ratio_fn(cal: SiteCalibration | None, which: str) -> RatioFn | None:
    """A function (partition, cpus[, elapsed share]) -> runtime/request ratio for the
    simulation, or None (no samples: run to the request). `which` is "median", "mean",
    "upper" or "spread"; conditioned on an elapsed share, "mean" and "spread" are "median"
    (`Ratio.end_share`). "spread" gives the k-th job of a class asked for the value at an
    evenly spread quantile of its class's ratios (k times the golden ratio, modulo 1): a
    queue of n jobs runs about n times the mean in sum, as a few long jobs and many short
    ones (measured by `benchmarks.prediction`, not used by placement). "spread_running"
    does the same for running jobs over their distribution conditioned on their elapsed
    share (queued jobs at the mean): measured there too, not used. "prior" is "median"
    with the walltime counted as one more finished job wherever fewer than MIN_SAMPLES
    ran as long as a running job has (a shrinkage toward the request where the history
    says little): measured there, not used."""
    if cal is None or not (cal.samples or cal.borrows):
        return None

    memo: dict[tuple[str | None, int | None, str | None], Ratio | None] = {}
    drawn: dict[tuple[str | None, int | None, str | None] | None, int] = {}

    def f(partition: str | None, cpus: int | None, elapsed_share: float | None = None,
          walltime_s: float | None = None) -> float:
        key = (partition, cpus, cal.request_tag((partition or "").split(",")[0], walltime_s))
        if key not in memo:
            memo[key] = cal.ratio(partition, cpus, walltime_s)
        r = memo[key]
        if r is None:
            return 1.0
        if elapsed_share is not None:
            if walltime_s:  # what the job surely survived, at the stamps' resolution
                elapsed_share = max(0.0, elapsed_share - CLOCK_SLACK_S / walltime_s)
            if which == "spread_running":  # each running job at a spread quantile
                k = drawn[None] = drawn.get(None, -1) + 1
                return r.end_share(elapsed_share, "quantile", (0.5 + k * GOLDEN) % 1.0)
            return r.end_share(elapsed_share, which if which in ("upper", "prior")
                               else "median")
        if which == "prior":
            return r.median
        if which == "spread_running":
            return r.mean
        if which == "spread":
            if not r.values:
                return r.mean
            k = drawn[key] = drawn.get(key, -1) + 1
            return r.values[int(((0.5 + k * GOLDEN) % 1.0) * len(r.values))]
        return getattr(r, which)
    return f


MIN_TRANSFER_BYTES = 1_000_000  # smaller copies measure latency, not bandwidth


def measured_bandwidth(transfers: Iterable[tuple[str | None, str | None, int, float]]
                       ) -> dict[tuple[str | None, str | None], float]:
    """Median megabits/s per (source site, destination site) from finished copies given as
    (source site, destination site, bytes, seconds); None is the server."""
    rates: dict[tuple[str | None, str | None], list[float]] = {}
    for src, dst, nbytes, secs in transfers:
        if nbytes >= MIN_TRANSFER_BYTES and secs > 0 and src != dst:
            rates.setdefault((src, dst), []).append(nbytes * 8 / secs / 1e6)
    return {k: sorted(v)[len(v) // 2] for k, v in rates.items()}
