"""Placement's decision rule replayed on recorded rounds: would another rule, given the same
estimates, have chosen better?

Every kept `benchmarks.placement` run records, per round, each site's estimates as diamond
saw them (median start and finish, the scheduler's raw start, the 90% bound) and the
completion of a probe submitted to every site at that moment (matched probes). So any rule
that picks among those sites can be scored exactly on those rounds, without the test bed:
its regret is its site's completion less the fastest one's. The rules differ only in how
they read the estimates; the estimates themselves are what each run's code made of them.

Rules (each ranks through `placement_rank.rank`, the engine's own ranking):
- `engine`: the engine's rule (earliest median finish; finishes within noise go to the
  surer start);
- `tie xK capC`: a wider tie, K times the starts' uncertainty up to C seconds;
- `risk A`: the finish plus A times the start's uncertainty (its bound past its start);
- `raw A`: the finish plus A times what the calibration took off the raw start.

The correction by the user's own jobs (`calibration.own_error`) is replayed from the
rounds themselves, whose probes are the user's jobs on every site: at round k, each
site's probes of the rounds before (started by then, or overdue) give the median of
(observed + floor) / (predicted + floor), and the site's start (its finish and bound with
it) moves by that ratio. `own: one way` applies it only where the jobs waited longer than
predicted (the engine's rule until session 19); `own: both ways` also where they started
sooner; `own: later, or sooner when all were` (the engine's rule since session 19) also
where every one of them started sooner, by the largest of their ratios; `own: none` not at
all. From fewer jobs than a ratio needs, every mode but `none` moves the start by the
seconds `own_error` gives (`OwnError.shift_s`, the engine's rule since session 36; `one
way` a later move only); `...; ratio only` is the engine's rule before it, beside it.
Measured beside the engine's rule (session 25, seed 94's beta pulled in while its latest probe still
waited): `sooner only when all started` (no pull-in while one of the jobs still waits,
`OwnError.sooner_started`), `sooner, its bound kept` (a pull-in moves the start, not the
90% bound) and both together. All three use the replayed samples (the engine's own, recorded in
`engine`, also counted jobs of the run's other rounds as they were at each moment).

Hedged submission is replayed the same way (`HEDGE_RULES`): which sites get the copies,
scored as the placement benchmark's matched hedge scores them (the first copy to start
runs): the engine's two best, the best with the surest other start (smallest 90% bound),
the best with the other whose finish at its bound is soonest, and the three best (one copy
more, for reference). Its per-run figure is the issue's ratio, diamond's mean over the
hedge's (1 s floor), and whether that reaches 2.

Rules for a site calibrated on other sites' ratios (too few finished jobs of its own:
`borrowed` in the record; `CANDIDATE_RULES`) rank today's engine's estimates (the record
with the engine's own-jobs correction), beside `today's engine` on them: a borrower's bound
raised, its start raised to its recent waits' median (from the run's views), the tie going
to own evidence, its finish ranked later by a share of its start's uncertainty, and the
last two for every site thin in jobs of its own. Each is given per background with even
and odd seeds apart, with the runs meeting each of the issue's targets and the rounds it
picks better or worse than `today's engine`.

Per background (`depth_misleads` and real logs): the mean of the runs' mean regrets, the
pooled p90, the median of the runs' medians, the runs whose mean is below every baseline's
(the issue's target: each fixed home, fewest_pending, random), and how often `engine`'s
choice is the one recorded (the replay's fidelity: runs of older code ranked with older
rules).

    python -m benchmarks.decision_replay [--results DIR] [--json]
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from diamond_jupyter.calibration import OWN_QUEUED_MIN_S, OwnError, PredictionSample, own_error
from diamond_jupyter.placement import OWN_QUEUED_FACTOR, SiteVerdict
from diamond_jupyter.placement_rank import FINISH_NOISE_FRACTION, rank

from .common import RESULTS, emit, markdown_table, mean, median, parser, pct, ratio
from .placement import FLOOR_S, VARIANTS, _matched_hedge

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)  # every estimate is relative to its round
# not baselines: diamond itself, its hedge, diamond on other calibrations
BASELINE_SKIP = ("diamond", "hedge2", "hedge", *VARIANTS)

Rule = Callable[[dict[str, dict[str, Any]]], str | None]


def _at(s: float | None) -> datetime | None:
    return None if s is None else NOW + timedelta(seconds=s)


def verdicts(est: dict[str, dict[str, Any]], penalty: Callable[[dict], float] = lambda e: 0.0
             ) -> list[SiteVerdict]:
    """The recorded estimates as verdicts, each finish moved out by `penalty(estimate)`."""
    return [SiteVerdict(site=s, feasible=True, verdict="BUSY", cost=0.0,
                        estimated_start=_at(e["start_s"]),
                        estimated_finish=_at(e["finish_s"] + penalty(e)),
                        start_bound=_at(e.get("bound_s")), raw_start=_at(e.get("raw_start_s")))
            for s, e in est.items() if e.get("finish_s") is not None]


def _spread(e: dict) -> float:
    b = e.get("bound_s")
    return 0.0 if b is None else max(0.0, b - e["start_s"])


def engine() -> Rule:
    return lambda est: rank(verdicts(est), NOW)[1]


def wide_tie(k: float, cap: float) -> Rule:
    def noise(best_s: float, spread_s: float) -> float:
        return max(min(cap, k * spread_s), FINISH_NOISE_FRACTION * max(best_s, 0.0))
    return lambda est: rank(verdicts(est), NOW, noise=noise)[1]


def risk(alpha: float) -> Rule:
    return lambda est: rank(verdicts(est, lambda e: alpha * _spread(e)), NOW)[1]


def raw(alpha: float) -> Rule:
    def taken_off(e: dict) -> float:
        r = e.get("raw_start_s")
        return 0.0 if r is None else alpha * max(0.0, r - e["start_s"])
    return lambda est: rank(verdicts(est, taken_off), NOW)[1]


RULES: dict[str, Rule] = {
    "engine": engine(),
    **{f"tie x{k:g} cap{c:g}": wide_tie(k, c) for k in (0.25, 1.0) for c in (30.0, 120.0)},
    **{f"risk {a:g}": risk(a) for a in (0.1, 0.3, 1.0)},
    **{f"raw {a:g}": raw(a) for a in (0.1, 0.3, 1.0)},
}


HedgeRule = Callable[[dict[str, dict[str, Any]]], list[str]]
HEDGE_TARGET = 2.0  # diamond's mean over the hedge's
MEDIAN_TARGET = 10.0  # the average home's median over diamond's


def _ranked(est: dict[str, dict[str, Any]]) -> list[str]:
    return [v.site for v in rank(verdicts(est), NOW)[0]]


def _finish_at_bound(e: dict) -> float:
    return e["finish_s"] + _spread(e)


def best_and(key: Callable[[dict], float]) -> HedgeRule:
    """The engine's best site, and the other whose `key(estimate)` is smallest."""
    def pick(est: dict[str, dict[str, Any]]) -> list[str]:
        best, *others = _ranked(est)
        return [best, *sorted(others, key=lambda s: key(est[s]))[:1]]
    return pick


HEDGE_RULES: dict[str, HedgeRule] = {
    "two best": lambda est: _ranked(est)[:2],
    "best + surest start": best_and(
        lambda e: math.inf if e.get("bound_s") is None else e["bound_s"]),
    "best + soonest finish at bound": best_and(_finish_at_bound),
    "three best": lambda est: _ranked(est)[:3],
}


def replay_hedges(run: dict, rules: dict[str, HedgeRule] = HEDGE_RULES) -> dict[str, Any]:
    """Each hedge rule's regret per scored round of a run with matched probes (their start
    times recorded), and the run's diamond mean over each rule's."""
    rounds = [r for r in scored_rounds(run) if r.get("started_s") is not None]
    max_wait = run.get("max_wait_s") or max(
        (c for r in rounds for c in r["completion_s"].values()), default=0.0)
    regret: dict[str, list[float]] = {n: [] for n in rules}
    for r in rounds:
        comp = r["completion_s"]
        for name, rule in rules.items():
            h = _matched_hedge(rule(r["estimate"]), comp, r["started_s"],
                               list(r.get("censored") or ()), max_wait)
            regret[name].append(h["completion_s"] - min(comp.values()))
    diamond = mean([r["additional_s"]["diamond"] for r in rounds]) if rounds else None
    return {"rounds": len(rounds), "regret": regret,
            "diamond_over_hedge": {n: ratio(diamond, mean(v), FLOOR_S) if v else None
                                   for n, v in regret.items()}}


def scored_rounds(run: dict) -> list[dict]:
    """The rounds that count: some site's probe not censored (an all-censored round is no
    tie), with estimates recorded."""
    out = []
    for r in run.get("per_round") or []:
        comp, cens = r.get("completion_s") or {}, set(r.get("censored") or [])
        if r.get("estimate") and comp and not set(comp) <= cens:
            out.append(r)
    return out


OWN_MODES = {"own: none": "none", "own: one way": "later", "own: both ways": "both",
             "own: later, or sooner when all were": "unanimous",
             "own: later, or sooner when all were; ratio only": "unanimous_ratio_only",
             "own: sooner only when all started": "all_started",
             "own: sooner, its bound kept": "bound_kept",
             "own: sooner only when all started, its bound kept": "all_started_bound_kept"}


OwnErrorFn = Callable[[list[PredictionSample]], OwnError | None]


def own_error_at(run: dict, k: int, site: str, error: OwnErrorFn = own_error
                 ) -> OwnError | None:
    """The engine's own-error correction (`calibration.own_error`, or another `error`) at
    round k on `site`, from the probes of the rounds before it, as they stood then:
    started, or still waiting (`age` so far)."""
    interval = run.get("interval_s") or 12.0
    samples = []
    for r in run.get("per_round") or []:
        e = (r.get("estimate") or {}).get(site)
        if r.get("round", k) >= k or e is None or e.get("start_s") is None:
            continue
        predicted = e["start_s"] if e.get("model_start_s") is None else e["model_start_s"]
        age, started = (k - r["round"]) * interval, (r.get("started_s") or {}).get(site)
        done = started is not None and started <= age
        samples.append(PredictionSample(predicted_s=max(0.0, predicted),
                                        observed_s=started if done else age, started=done,
                                        submitted_at=float(r["round"])))
    return error(samples)


def own_ratio(run: dict, k: int, site: str) -> float | None:
    err = own_error_at(run, k, site)
    return None if err is None else err.ratio


def own_corrected(run: dict, r: dict, mode: str, error: OwnErrorFn = own_error
                  ) -> dict[str, dict[str, Any]]:
    """Round r's estimates with the recorded own-error correction undone, and `mode`'s
    applied (none, later: only a ratio above 1, both). Where `error` gives no ratio but a
    move by seconds (`OwnError.shift_s`, from fewer than MIN_SAMPLES jobs), the start moves
    by it as the engine moves it (`OwnError.applied`); `later` takes a later one only."""
    out = {}
    for site, e in r["estimate"].items():
        if e.get("finish_s") is None:
            continue
        e = dict(e)
        if e.get("model_start_s") is not None:  # the model's start, before the engine's
            shift = e["model_start_s"] - e["start_s"]
            e["start_s"] += shift
            e["finish_s"] += shift
        err = None if mode == "none" or "round" not in r else \
            own_error_at(run, r["round"], site, error)
        sooner = None if err is None else err.sooner if mode in (
            "unanimous", "unanimous_ratio_only", "bound_kept") else \
            err.sooner_started if mode.startswith("all_started") else None
        ratio = None if err is None or err.ratio is None else \
            err.ratio if err.ratio > 1 or mode == "both" else sooner
        keep = mode.endswith("bound_kept")  # only a later start moves the bound
        if ratio is not None and e["start_s"] > 0:
            moved(e, *err.applied(e["start_s"], e.get("bound_s"), ratio, keep))
        elif err is not None and err.ratio is None and err.shift_s is not None and (
                mode != "later" or err.shift_s > 0) and not mode.endswith("ratio_only") \
                and not (e["start_s"] <= 0 and (r.get("pending") or {}).get(site, 0) <= 0):
            moved(e, *err.applied(e["start_s"], e.get("bound_s"), None, keep))
        out[site] = e
    return out


def moved(e: dict[str, Any], start_s: float, bound_s: float | None) -> None:
    """A recorded estimate given the start and bound `OwnError.applied` moved it to, as
    `placement._estimate` moves them; its finish moves with the start."""
    e["finish_s"] += start_s - e["start_s"]
    e["start_s"] = start_s
    if bound_s is not None:
        e["bound_s"] = bound_s


def round_views(run: dict) -> Iterator[tuple[int, int, float, str, dict]]:
    """Each view a run records (runs since session 33), in the record's order: (its round,
    the first round with views, the round's seconds from the run's start, site, view)."""
    interval = run.get("interval_s") or 12.0
    first = None
    for r in run.get("per_round") or []:
        k = r.get("round")
        if k is None or not r.get("view"):
            continue
        first = k if first is None else first
        for site, view in r["view"].items():
            yield k, first, k * interval, site, view


def view_waits(run: dict) -> dict[tuple[int, str], list[tuple[float, float, int]]]:
    """From the views a run records (its rounds' snapshots, runs since session 33), per
    (round, site) the jobs of every user seen to start by that round: (start, wait, CPUs),
    start in seconds from the run's start. A job's submission is taken as the first view that
    showed it pending (so a wait reads short by up to a round); a job first seen running
    that had not been running at the view before waited under a round, counted 0; jobs
    already there at the first view are left out (their submission is not seen)."""
    interval = run.get("interval_s") or 12.0
    first_pending: dict[tuple[str, str], float] = {}
    seen_running: dict[tuple[str, str], tuple[float, float, int]] = {}
    out: dict[tuple[int, str], list[tuple[float, float, int]]] = {}
    for k, first, at, site, view in round_views(run):
        for job in view.get("pending") or []:
            first_pending.setdefault((site, job["id"]), math.nan if k == first else at)
        for job in view.get("running") or []:
            key = (site, job["id"])
            if key in seen_running or job.get("start_s") is None:
                continue
            started, cpus = at + job["start_s"], int(job.get("cpus") or 0)
            submitted = first_pending.get(key)
            if submitted is not None:  # nan: pending at the first view, left out
                seen_running[key] = (started, started - submitted if math.isnan(
                    submitted) else max(0.0, started - submitted), cpus)
            elif k > first and started > at - interval:
                seen_running[key] = (started, 0.0, cpus)
            else:
                seen_running[key] = (started, math.nan, cpus)  # submission not seen
        out[(k, site)] = [w for (s, _), w in seen_running.items()
                          if s == site and not math.isnan(w[1])]
    return out


# Candidate rules for a site with too few finished jobs of its own, calibrated with the
# other sites' ratios (`borrowed` in the record; issue 15, session 37). Each ranks today's
# engine's estimates (the recorded ones with the engine's own-jobs correction,
# `own: later, or sooner when all were`), so `today's engine` is the row each must beat.
Ranking = Callable[[dict[str, dict[str, Any]]], list[str]]
RECENT_WINDOW_S = 180.0  # a site's recent waits: its jobs seen to start in this window
RECENT_LEAST = 3  # ... from at least this many
THIN_JOBS = 29  # the fewest jobs a QBETS 90% bound at 95% confidence rests on
FAR_S = 1e7  # a bound past every other's: last among sites that tie


def _ranked_after(change: Callable[[dict[str, Any]], None]) -> Ranking:
    """The engine's ranking of the estimates, each first changed by `change`."""
    def ranking(est: dict[str, dict[str, Any]]) -> list[str]:
        est = {s: dict(e) for s, e in est.items()}
        for e in est.values():
            change(e)
        return _ranked(est)
    return ranking


def _widened(e: dict[str, Any], *to: float | None) -> None:
    """e's 90% bound at least each of `to` (and its start)."""
    got = [b for b in (e.get("bound_s"), *to) if b is not None]
    if got:
        e["bound_s"] = max(*got, e["start_s"])


def borrowed_less_sure(with_plan: bool) -> Ranking:
    """A borrowing site's 90% bound at least the QBETS bound of its recent waits (every
    user's, `recent_bound_s`), and `with_plan` its walltime plan too: less sure in a tie."""
    def change(e: dict[str, Any]) -> None:
        if e.get("borrowed"):
            _widened(e, e.get("recent_bound_s"), e.get("raw_start_s") if with_plan else None)
    return _ranked_after(change)


def borrowed_no_sooner_than_waits(e: dict[str, Any]) -> None:
    """A borrowing site's start (its finish with it) no sooner than the median of its
    recent waits (`recent_wait_median_s`, from the run's views)."""
    typical = e.get("recent_wait_median_s")
    if e.get("borrowed") and typical is not None and e["start_s"] < typical:
        moved(e, typical, None if e.get("bound_s") is None else max(e["bound_s"], typical))


def last_in_a_tie(thin: Callable[[dict[str, Any]], bool]) -> Ranking:
    """Among finishes equal within noise, the sites `thin` says lack evidence of their own
    go last: their bound put past every other's (their start's uncertainty, so the noise,
    then FINISH_NOISE_S at most)."""
    def change(e: dict[str, Any]) -> None:
        if thin(e):
            e["bound_s"] = FAR_S
    return _ranked_after(change)


def _borrows(e: dict[str, Any]) -> bool:
    return bool(e.get("borrowed"))


def _thin(jobs: int) -> Callable[[dict[str, Any]], bool]:
    """Borrowing, or calibrated on fewer than `jobs` jobs of its own (`samples`)."""
    return lambda e: _borrows(e) or (e.get("samples") or 0) < jobs


def at_risk(alpha: float, thin: Callable[[dict[str, Any]], bool] = _borrows) -> Ranking:
    """A site `thin` says lacks evidence of its own ranked at its finish plus `alpha` times
    its start's uncertainty (its bound past its start): less sure in the rank itself, not
    only in a tie."""
    def change(e: dict[str, Any]) -> None:
        if thin(e):
            e["finish_s"] += alpha * _spread(e)
    return _ranked_after(change)


def borrowed_wider_tie(cap_s: float) -> Ranking:
    """Where the engine's best borrows: every site finishing within its start's uncertainty
    (up to `cap_s`) of it ties with it, and the tie goes to own evidence, then the surer
    start (the lower bound, else the start)."""
    def ranking(est: dict[str, dict[str, Any]]) -> list[str]:
        order = _ranked(est)
        best = est[order[0]] if order else {}
        if not best.get("borrowed"):
            return order
        window = min(cap_s, _spread(best))
        tied = [s for s in order if est[s]["finish_s"] - best["finish_s"] <= window]
        tied.sort(key=lambda s: (bool(est[s].get("borrowed")),
                                 est[s].get("bound_s") or est[s]["start_s"]))
        return tied + [s for s in order if s not in tied]
    return ranking


def own_queued_at(run: dict, k: int, site: str) -> float | None:
    """How long the oldest of the run's probes on `site` submitted before round k that had
    not started by round k had waited then (what `SiteCalibration.own_queued_ahead_s`
    gives placement live: the probes are all one size, and OWN_QUEUED_MIN_S is under the
    rounds' interval); None: none was waiting."""
    interval = run.get("interval_s") or 12.0
    ages = [(k - r["round"]) * interval for r in run.get("per_round") or []
            if r.get("round", k) < k and site in (r.get("estimate") or {})
            and (k - r["round"]) * interval >= OWN_QUEUED_MIN_S
            and ((r.get("started_s") or {}).get(site) is None
                 or r["started_s"][site] > (k - r["round"]) * interval)]
    return max(ages, default=None)


def own_queued_floor(factor: float) -> Ranking:
    """A site with a probe of the run's still queued starts no sooner than `factor` times
    its wait so far (its bound with it): `placement.OWN_QUEUED_FACTOR` is the engine's."""
    def change(e: dict[str, Any]) -> None:
        queued = e.get("own_queued_s")
        if queued is not None and e["start_s"] < factor * queued:
            moved(e, factor * queued, None if e.get("bound_s") is None
                  else max(e["bound_s"], factor * queued))
    return _ranked_after(change)


CANDIDATE_RULES: dict[str, Ranking] = {
    "today's engine": _ranked,
    "borrowed: bound >= recent waits' QBETS bound": borrowed_less_sure(False),
    "borrowed: bound >= that and its plan": borrowed_less_sure(True),
    "borrowed: start >= recent waits' median": _ranked_after(borrowed_no_sooner_than_waits),
    "tie: own evidence first": last_in_a_tie(_borrows),
    **{f"tie: own evidence first, within its doubt up to {c:g} s": borrowed_wider_tie(c)
       for c in (30.0, 120.0)},
    **{f"borrowed: finish + {a:g} x its start's doubt": at_risk(a) for a in (0.1, 0.3)},
    **{f"own job queued: start >= {c:g}x its wait": own_queued_floor(c)
       for c in (1.0, 2.0, OWN_QUEUED_FACTOR, 4.0)},
    f"tie: under {THIN_JOBS} jobs of its own last": last_in_a_tie(_thin(THIN_JOBS)),
    **{f"under {n} jobs of its own: finish + 0.1 x its start's doubt": at_risk(0.1, _thin(n))
       for n in (10, THIN_JOBS)},
}


def _best_baseline(rounds: list[dict]) -> float | None:
    """The lowest mean over the rounds of every baseline (each fixed home, fewest_pending,
    random)."""
    baselines: dict[str, list[float]] = {}
    for r in rounds:
        for k, v in r["additional_s"].items():
            if k not in BASELINE_SKIP and v is not None:
                baselines.setdefault(k, []).append(v)
    return min((mean(v) for v in baselines.values() if v), default=None)


def _avg_home_median(rounds: list[dict]) -> float | None:
    homes: dict[str, list[float]] = {}
    for r in rounds:
        for k, v in r["additional_s"].items():
            if k.startswith("home:") and v is not None:
                homes.setdefault(k, []).append(v)
    return mean([median(v) for v in homes.values() if v])  # type: ignore[misc]


def recent_wait_medians(run: dict) -> dict[tuple[int, str], float]:
    """Per (round, site) where the run records views: the median wait of the site's jobs
    (every user's, `view_waits`) seen to start in the RECENT_WINDOW_S before the round, from
    RECENT_LEAST of them."""
    interval = run.get("interval_s") or 12.0
    out = {}
    for (k, site), jobs in view_waits(run).items():
        recent = [w for started, w, _ in jobs if k * interval - RECENT_WINDOW_S <= started]
        if len(recent) >= RECENT_LEAST:
            out[(k, site)] = median(recent) or 0.0
    return out


def replay_candidates(run: dict, rules: dict[str, Ranking] = CANDIDATE_RULES
                      ) -> dict[str, Any]:
    """Each candidate's regret per scored round of `run`, ranked on today's engine's
    estimates; where the run's hedges are matched, its two best as the hedge; and the
    run's figures the issue judges: mean below every baseline, median 10x below the average
    home's (1 s floor), mean 2x the hedge's."""
    rounds = scored_rounds(run)
    waits = recent_wait_medians(run)
    matched = run.get("hedge_mode", "real") == "matched"
    max_wait = run.get("max_wait_s") or max(
        (c for r in rounds for c in r["completion_s"].values()), default=0.0)
    regret: dict[str, list[float]] = {n: [] for n in rules}
    hedged: dict[str, list[tuple[float, float]]] = {n: [] for n in rules}
    for r in rounds:
        est = own_corrected(run, r, "unanimous")
        for site, e in est.items():
            e["recent_wait_median_s"] = waits.get((r.get("round", -1), site))
            e["own_queued_s"] = own_queued_at(run, r["round"], site) if "round" in r \
                else None
        comp = r["completion_s"]
        fastest = min(comp.values())
        for name, rule in rules.items():
            order = rule(est)
            chosen = comp[order[0]] - fastest if order and order[0] in comp \
                else max(comp.values())  # as `replay_run` scores it
            regret[name].append(chosen)
            if matched and r.get("started_s") is not None:
                h = _matched_hedge(order[:2], comp, r["started_s"],
                                   list(r.get("censored") or ()), max_wait)
                hedged[name].append((chosen, h["completion_s"] - fastest))
    best, homes = _best_baseline(rounds), _avg_home_median(rounds)
    out = {}
    for name, got in regret.items():
        pairs = hedged[name]
        out[name] = {
            "regret": got,
            "below_every_baseline": best is not None and bool(got) and mean(got) < best,
            "median_target": (ratio(homes, median(got), FLOOR_S) or 0.0) >= MEDIAN_TARGET,
            "hedge_target": None if not pairs else (ratio(
                mean([a for a, _ in pairs]), mean([b for _, b in pairs]), FLOOR_S) or 0.0
            ) >= HEDGE_TARGET}
    return {"rounds": len(rounds), "rules": out}


def summarize_candidates(runs: list[tuple[dict, dict]]) -> dict[str, Any]:
    """Per rule over (run, `replay_candidates` of it) pairs: the mean of run means, the same
    for even and odd seeds apart (a held-out check), the runs meeting each target, and the
    rounds whose pick moved from today's engine's, better and worse."""
    base = next(iter(CANDIDATE_RULES))
    out = {}
    for name in CANDIDATE_RULES:
        halves: dict[str, list[float]] = {"even": [], "odd": []}
        better = worse = 0
        for run, got in runs:
            mine = got["rules"][name]["regret"]
            halves["odd" if (run.get("seed") or 0) % 2 else "even"].append(mean(mine) or 0.0)
            for a, b in zip(mine, got["rules"][base]["regret"], strict=True):
                better, worse = better + (a < b), worse + (a > b)
        rows = [got["rules"][name] for _, got in runs]
        out[name] = {
            "runs": len(runs), "mean_of_run_means_s": mean(halves["even"] + halves["odd"]),
            "by_half": {h: mean(v) for h, v in halves.items()},
            "runs_mean_below_every_baseline": sum(r["below_every_baseline"] for r in rows),
            "runs_median_target": sum(r["median_target"] for r in rows),
            "runs_hedge_target": sum(bool(r["hedge_target"]) for r in rows),
            "hedged_runs": sum(r["hedge_target"] is not None for r in rows),
            "rounds_better": better, "rounds_worse": worse}
    return out


def replay_run(run: dict, rules: dict[str, Rule]) -> dict[str, Any]:
    rounds = scored_rounds(run)
    regret: dict[str, list[float]] = {n: [] for n in (*rules, *OWN_MODES)}
    agree = 0
    pick = engine()
    for r in rounds:
        comp = r["completion_s"]
        fastest = min(comp.values())
        chosen = {name: rule(r["estimate"]) for name, rule in rules.items()}
        chosen |= {name: pick(own_corrected(run, r, mode)) for name, mode in OWN_MODES.items()}
        for name, c in chosen.items():
            regret[name].append(comp[c] - fastest if c in comp else max(comp.values()))
        agree += chosen["engine"] == r["choice"].get("diamond")
    return {"rounds": len(rounds), "agree": agree, "regret": regret,
            "best_baseline_mean_s": _best_baseline(rounds)}


def summarize(results: Path, rules: dict[str, Rule] = RULES) -> dict[str, Any]:
    by_bg: dict[str, list[dict]] = {}
    candidates: dict[str, list[tuple[dict, dict]]] = {}
    for path in sorted(results.glob("placement-*seed*.json")):
        run = json.loads(path.read_text())
        if "per_round" not in run:
            continue
        bg = "real logs" if run.get("traces") else "depth_misleads"
        got = replay_run(run, rules)
        if got["rounds"]:
            hedged = replay_hedges(run) if run.get("hedge_mode", "real") == "matched" else None
            by_bg.setdefault(bg, []).append({"file": path.name, "seed": run.get("seed"),
                                             **got, "hedges": hedged})
            candidates.setdefault(bg, []).append((run, replay_candidates(run)))
    out: dict[str, Any] = {"backgrounds": {}}
    for bg, runs in by_bg.items():
        per_rule = {}
        for name in (*rules, *OWN_MODES):
            means = [mean(r["regret"][name]) for r in runs]
            pooled = [x for r in runs for x in r["regret"][name]]
            per_rule[name] = {
                "mean_of_run_means_s": mean(means), "p90_s": pct(pooled, 90),
                "median_of_run_medians_s": median([median(r["regret"][name]) for r in runs]),
                "runs_mean_below_every_baseline": sum(
                    1 for r, m in zip(runs, means, strict=True)
                    if r["best_baseline_mean_s"] is not None and m < r["best_baseline_mean_s"])}
        hedged = [r["hedges"] for r in runs if r["hedges"] and r["hedges"]["rounds"]]
        per_hedge = {name: {
            "runs": len(hedged),
            "mean_of_run_means_s": mean([mean(h["regret"][name]) for h in hedged]),
            "runs_2x_below_diamond": sum(1 for h in hedged if (h["diamond_over_hedge"][name]
                                                              or 0) >= HEDGE_TARGET)}
            for name in HEDGE_RULES} if hedged else {}
        engine_means = [mean(r["regret"]["engine"]) for r in runs]
        best = [r["best_baseline_mean_s"] for r in runs]
        out["backgrounds"][bg] = {
            "runs": len(runs), "rounds": sum(r["rounds"] for r in runs),
            # a baseline at 0 s (one site fastest in every round): none can be below it
            "runs_with_a_baseline_at_0": sum(1 for b in best if b == 0.0),
            "runs_engine_at_or_below_every_baseline": sum(
                1 for m, b in zip(engine_means, best, strict=True) if b is not None and m <= b),
            "engine_agrees_with_record": sum(r["agree"] for r in runs), "rules": per_rule,
            "hedge_rules": per_hedge, "candidate_rules": summarize_candidates(candidates[bg])}
    return out


def table(data: dict[str, Any]) -> str:
    rows = []
    for bg, d in data["backgrounds"].items():
        for name, r in d["rules"].items():
            rows.append((bg, name, f"{r['mean_of_run_means_s']:.2f}", f"{r['p90_s']:.1f}",
                         f"{r['median_of_run_medians_s']:.2f}",
                         f"{r['runs_mean_below_every_baseline']} of {d['runs']}"))
    notes = "".join(
        f"\n{bg}: {d['runs']} runs, {d['rounds']} scored rounds; the engine's rule chose the "
        f"recorded site in {d['engine_agrees_with_record']} of them. A baseline scored 0 s "
        f"(one site fastest in every round) in {d['runs_with_a_baseline_at_0']} runs; the "
        f"engine's mean was at or below every baseline's in "
        f"{d['runs_engine_at_or_below_every_baseline']}."
        for bg, d in data["backgrounds"].items())
    candidates = [(bg, name, *(f"{x:.3f}" if x is not None else "-" for x in (
                       r["mean_of_run_means_s"], r["by_half"]["even"], r["by_half"]["odd"])),
                   f"{r['runs_mean_below_every_baseline']} of "
                   f"{r['runs']}", f"{r['runs_median_target']}",
                   f"{r['runs_hedge_target']} of {r['hedged_runs']}",
                   f"{r['rounds_better']} / {r['rounds_worse']}")
                  for bg, d in data["backgrounds"].items()
                  for name, r in d["candidate_rules"].items()]
    hedges = [(bg, name, f"{r['mean_of_run_means_s']:.2f}",
               f"{r['runs_2x_below_diamond']} of {r['runs']}")
              for bg, d in data["backgrounds"].items()
              for name, r in d.get("hedge_rules", {}).items()]
    return ("## placement decisions replayed on recorded rounds\n\n" + markdown_table(
        ["background", "rule", "mean of run means s", "p90 s", "median of run medians s",
         "runs with mean below every baseline"], rows) + notes + "\n\n"
        "## hedged copies replayed (runs with matched hedges)\n\n" + markdown_table(
            ["background", "copies to", "mean of run means s",
             "runs with diamond's mean 2x the hedge's"], hedges) + "\n\n"
        "## thin evidence: candidate rules on today's engine's estimates\n\n" + markdown_table(
            ["background", "rule", "mean of run means s", "even seeds", "odd seeds",
             "runs below every baseline", "runs with median 10x below the average home",
             "runs with mean 2x the hedge's", "rounds better / worse"], candidates) + "\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=str(RESULTS), help="where the placement runs are")
    args = p.parse_args(argv)
    data = summarize(Path(args.results))
    emit("decision_replay", args, data, table(data))
    return data


if __name__ == "__main__":
    main()

