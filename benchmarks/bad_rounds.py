"""The one bad round per run: what placement knew when it chose a site that then started
its probe minutes after the fastest, and rules that read it, judged on both seed halves
(issue 15).

Every round of every kept placement run is ranked on today's engine's estimates: the record
with the engine's own-jobs correction replayed (`decision_replay.own_corrected`) and the
own-queued floor (a site where one of the run's probes still waits starts no sooner than
`placement.OWN_QUEUED_FACTOR` times its wait so far, `decision_replay.own_queued_floor`).
A round is bad where that pick finished over BAD_S after the fastest, good within GOOD_S.

`signals`: per background, how well each number the engine had for its pick at decision
time tells its bad rounds from its good ones (the AUC: the chance a bad round's value is
above a good one's; 0.5 says nothing): the start's spread to its 90% bound, its calibration
samples (fewer reads higher), borrowed ratios, the user's own jobs there, what the
calibration took off the walltime plan, the start itself, the queue's length, the gap to
the runner-up's finish, and, in runs that record every user's queue (`view`, seeds since
session 33), how long the queue would take to drain at the starts seen in the last
DRAIN_WINDOW_S (queued x window / (starts + 1)).

`RULES` rank the same estimates, each changed in one way with one constant taken from a
model, not from these rounds (the exponential tail's mean, 0.31 of the spread; the QBETS
29 samples; the queue ranks and drain floors as a grid). `MODELS` rebuild the estimates
with another own-jobs correction: `pull-in from the jobs due only` (`due_only`) and `pull-in
by the gain so far` (`gain_so_far`), where 1-4 of the user's jobs all started sooner than
predicted but a later one has not yet waited its prediction out, which today holds the
pull-in back. `CHANGES` set a site's start to its own jobs' median wait where all of its
last ones started; `COMBINED` pairs a model with a rule. Each is scored per background on
even seeds, odd seeds and seeds above FRESH_AFTER (recorded after every earlier rule was
proposed): the mean of run means, the runs whose mean is strictly below every baseline's
(the issue's target), the runs whose median is 10x below the average home's, and the
seconds won and lost against today's engine in each class of round per seed half (the
engine's own pick sorted as `miss_classes` sorts a lost round, `engine fastest` where it
was not lost). A rule passes where its mean is lower on both backgrounds and both halves
and it loses no run on either target.

    python -m benchmarks.bad_rounds [--results DIR] [--json]
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from diamond_jupyter.calibration import (
    MIN_SAMPLES,
    OWN_ERROR_SAMPLES,
    OWN_SHIFT_MIN_S,
    OwnError,
    PredictionSample,
    own_error,
)
from diamond_jupyter.placement import OWN_QUEUED_FACTOR

from .common import RESULTS, emit, markdown_table, mean, median, parser, ratio
from .decision_replay import (
    FLOOR_S,
    MEDIAN_TARGET,
    THIN_JOBS,
    OwnErrorFn,
    _avg_home_median,
    _best_baseline,
    _ranked,
    _spread,
    moved,
    own_corrected,
    own_queued_at,
    scored_rounds,
    view_waits,
)
from .halves import half_of
from .misses import TOLERANCE_S

BAD_S = 60.0  # a pick this much after the fastest is a bad round
GOOD_S = 5.0  # ... within this, a good one
DRAIN_WINDOW_S = 120.0  # a site's recent starts: those its views saw in this window
FRESH_AFTER = 140  # seeds recorded after the rules of sessions 36-42 were proposed
DEFAULT_BOUND_S = 240.0  # a run that kept no bound of its own: the benchmark's default
# An exponential tail above the median through the 90% bound puts the mean start
# 0.5 / ln 5 of the bound's spread past the median (`rule_holdout`).
EXPONENTIAL_MEAN_SHARE = 0.5 / math.log(5)

Estimates = dict[str, dict[str, Any]]
Ranking = Callable[[Estimates], list[str]]


def due_only(samples: list[PredictionSample]) -> OwnError | None:
    """`calibration.own_error` on the jobs that say anything only (started, or waited past
    their prediction): a job not yet due no longer holds back a pull-in from 1-4 jobs that
    all started sooner, as it already does not from MIN_SAMPLES on (`OwnError.sooner`)."""
    return own_error([s for s in samples if s.started or s.observed_s > s.predicted_s])


def gain_so_far(samples: list[PredictionSample]) -> OwnError | None:
    """`calibration.own_error`, but where 1-4 jobs say anything and none of them started
    late, a job not yet due no longer holds back the pull-in: it counts at its wait so far,
    a gain it has surely had (the pull-in is the least gain, so it only shrinks it)."""
    got = own_error(samples)
    if got is not None:
        return got
    recent = sorted(samples, key=lambda s: s.submitted_at)[-OWN_ERROR_SAMPLES:]
    telling = [s for s in recent if s.started or s.observed_s > s.predicted_s]
    if not telling or len(telling) >= MIN_SAMPLES or any(
            s.observed_s > s.predicted_s for s in telling):
        return None
    shift = max(s.observed_s - max(0.0, s.predicted_s) for s in recent)
    return OwnError(None, len(recent), shift_s=shift) if shift < -OWN_SHIFT_MIN_S else None


def shift_both_ways(samples: list[PredictionSample]) -> OwnError | None:
    """`calibration.own_error`, but from 1-4 jobs that say anything the shift is the median
    of every one's lateness, sooner ones too (today: the late ones' only, if any)."""
    recent = sorted(samples, key=lambda s: s.submitted_at)[-OWN_ERROR_SAMPLES:]
    telling = [s for s in recent if s.started or s.observed_s > s.predicted_s]
    if not telling or len(telling) >= MIN_SAMPLES:
        return own_error(samples)
    shift = median([s.observed_s - max(0.0, s.predicted_s) for s in telling]) or 0.0
    return OwnError(None, len(telling), shift_s=shift) if abs(shift) > OWN_SHIFT_MIN_S \
        else None


# How a round's estimates are rebuilt from the record: the engine's own-jobs correction,
# and variants of it
MODELS: dict[str, OwnErrorFn] = {"today's engine": own_error,
                                 "pull-in from the jobs due only": due_only,
                                 "pull-in by the gain so far": gain_so_far,
                                 "shift by every job's lateness, sooner too": shift_both_ways}


def own_waits(run: dict, k: int, site: str, last: int) -> list[tuple[float, bool]]:
    """The waits of the run's last `last` probes on `site` before round k as they stood
    at round k: (wait, started), a probe still waiting at its wait so far."""
    interval = run.get("interval_s") or 12.0
    got = []
    for r in run.get("per_round") or []:
        if r.get("round", k) >= k or site not in (r.get("estimate") or {}):
            continue
        age, started = (k - r["round"]) * interval, (r.get("started_s") or {}).get(site)
        got.append((started, True) if started is not None and started <= age
                   else (age, False))
    return got[-last:]


def own_waits_start(least: int) -> Callable[[dict, dict, Estimates], None]:
    """Where the user's last `least` or more jobs on a site (up to 5) have all started,
    the start is their median wait, whatever the model said (its bound no sooner)."""
    def change(run: dict, r: dict, est: Estimates) -> None:
        for site, e in est.items():
            waits = own_waits(run, r.get("round", 0), site, max(least, 5))
            if len(waits) >= least and all(done for _, done in waits):
                typical = median([w for w, _ in waits]) or 0.0
                moved(e, typical, None if e.get("bound_s") is None
                      else max(e["bound_s"], typical))
    return change


# Changes to today's estimates from the run's own record, each ranked by today's rule
CHANGES: dict[str, Callable[[dict, dict, Estimates], None]] = {
    **{f"start = the median wait of the last {n}+ own jobs, all started": own_waits_start(n)
       for n in (1, 2, 3)},
}


def todays_estimates(run: dict, r: dict, drains: dict[tuple[int, str], float],
                     error: OwnErrorFn = own_error) -> Estimates:
    """Round r's estimates as today's engine has them: own-jobs correction (`error`) and
    own-queued floor replayed; each with `own_queued_s`, the round's `queued` and, where
    the run's views say, `drain_s`."""
    est = own_corrected(run, r, "unanimous", error)
    for site, e in est.items():
        queued = own_queued_at(run, r["round"], site) if "round" in r else None
        e["own_queued_s"] = queued
        e["queued"] = (r.get("pending") or {}).get(site)
        e["drain_s"] = drains.get((r.get("round", -1), site))
        floor = None if queued is None else OWN_QUEUED_FACTOR * queued
        if floor is not None and e["start_s"] < floor:
            moved(e, floor, None if e.get("bound_s") is None else max(e["bound_s"], floor))
    return est


def drain_times(run: dict) -> dict[tuple[int, str], float]:
    """Per (round, site) of a run with views: the seconds its queue takes to drain at the
    starts its views saw in the last DRAIN_WINDOW_S (or since the first view):
    queued x window / (starts + 1). Rounds with no window behind them are left out."""
    interval = run.get("interval_s") or 12.0
    rounds = {r.get("round"): r for r in run.get("per_round") or []}
    first = min((k for k, r in rounds.items() if k is not None and r.get("view")),
                default=None)
    out = {}
    for (k, site), jobs in view_waits(run).items():
        now = k * interval
        window = min(DRAIN_WINDOW_S, now - first * interval) if first is not None else 0.0
        if window <= 0:
            continue
        starts = sum(1 for at, _, _ in jobs if now - window <= at <= now)
        queued = ((rounds.get(k) or {}).get("pending") or {}).get(site, 0)
        out[(k, site)] = queued * window / (starts + 1)
    return out


def _changed(change: Callable[[dict[str, Any]], None]) -> Ranking:
    def ranking(est: Estimates) -> list[str]:
        est = {s: dict(e) for s, e in est.items()}
        for e in est.values():
            change(e)
        return _ranked(est)
    return ranking


def _thin(e: dict[str, Any]) -> bool:
    return bool(e.get("borrowed")) or (e.get("samples") or 0) < THIN_JOBS


def risk(share: float, only: Callable[[dict[str, Any]], bool] = lambda e: True) -> Ranking:
    """The finish ranked `share` of the start's spread to its bound later, where `only`."""
    def change(e: dict[str, Any]) -> None:
        if only(e):
            e["finish_s"] += share * _spread(e)
    return _changed(change)


def drain_floor(share: float) -> Ranking:
    """The start no sooner than `share` of its queue's drain time at the recent starts."""
    def change(e: dict[str, Any]) -> None:
        floor = None if e.get("drain_s") is None else share * e["drain_s"]
        if floor is not None and e["start_s"] < floor:
            moved(e, floor, None if e.get("bound_s") is None else max(e["bound_s"], floor))
    return _changed(change)


def per_queued(c: float) -> Ranking:
    """The finish ranked c x ln(1 + queued) later (session 36's queue rank)."""
    def change(e: dict[str, Any]) -> None:
        e["finish_s"] += c * math.log1p(e.get("queued") or 0)
    return _changed(change)


RULES: dict[str, Ranking] = {
    "today's engine": _ranked,
    "finish + 0.31 x spread (exponential tail's mean)": risk(EXPONENTIAL_MEAN_SHARE),
    f"finish + 0.31 x spread, under {THIN_JOBS} samples or borrowed":
        risk(EXPONENTIAL_MEAN_SHARE, _thin),
    f"finish at the 90% bound, under {THIN_JOBS} samples or borrowed": risk(1.0, _thin),
    "finish + 0.31 x spread, borrowed": risk(EXPONENTIAL_MEAN_SHARE,
                                            lambda e: bool(e.get("borrowed"))),
    "finish + 0.31 x spread, where an own job is queued": risk(
        EXPONENTIAL_MEAN_SHARE, lambda e: e.get("own_queued_s") is not None),
    **{f"start >= {s:g} x the queue's drain time (views)": drain_floor(s)
       for s in (0.25, 0.5, 1.0)},
    **{f"{c:g} s x ln(1 + queued)": per_queued(c) for c in (5.0, 10.0)},
}


# today's rule on one of `MODELS`' estimates with one of `RULES`' changes
COMBINED: dict[str, tuple[str, str]] = {
    f"{m}; {r}": (m, r) for m in ("pull-in from the jobs due only", "pull-in by the gain so far")
    for r in ("finish + 0.31 x spread, borrowed",)}


def round_class(est: Estimates, r: dict, chosen: str, bound_s: float) -> str:
    """The class of the pick `chosen` as `miss_classes.classify` sorts a lost round, by
    which start was wrong and whether the bounds ordered the two right; `engine fastest`
    where it finished first."""
    comp = r["completion_s"]
    fastest = min(comp, key=comp.__getitem__)
    if chosen not in comp or comp[chosen] <= comp[fastest]:
        return "engine fastest"
    started = r.get("started_s") or {}
    c, f = est[chosen], est.get(fastest)
    if f is None:
        return "fastest not estimated"
    soon = c["start_s"] + TOLERANCE_S < started.get(chosen, bound_s)
    late = f["start_s"] > started.get(fastest, bound_s) + TOLERANCE_S
    if not (soon or late):
        return "tie, runtime or within tolerance"
    side = "both wrong" if soon and late else "chosen too soon" if soon else "fastest too late"
    right = f["finish_s"] + _spread(f) < c["finish_s"] + _spread(c)
    return f"{side}; bounds {'right' if right else 'wrong too'}"


def _regret(comp: dict[str, float], site: str | None) -> float:
    return comp[site] - min(comp.values()) if site in comp else max(comp.values())


def _auc(bad: list[float], good: list[float]) -> float | None:
    if not bad or not good:
        return None
    return sum((b > g) + 0.5 * (b == g) for b in bad for g in good) / len(bad) / len(good)


SIGNALS: dict[str, Callable[[dict[str, Any], dict[str, Any] | None], float | None]] = {
    "spread to the 90% bound": lambda e, _: _spread(e),
    "fewer calibration samples": lambda e, _: -(e.get("samples") or 0),
    "borrowed ratios": lambda e, _: float(bool(e.get("borrowed"))),
    "fewer own jobs": lambda e, _: -(e.get("own_samples") or 0),
    "plan less start": lambda e, _: None if e.get("raw_start_s") is None
    else e["raw_start_s"] - e["start_s"],
    "start": lambda e, _: e["start_s"],
    "queued": lambda e, _: e.get("queued"),
    "closer runner-up": lambda e, ru: None if ru is None else e["finish_s"] - ru["finish_s"],
    "own job queued (s)": lambda e, _: e.get("own_queued_s") or 0.0,
    "drain time (views)": lambda e, _: e.get("drain_s"),
}


def load(results: Path) -> list[dict[str, Any]]:
    """Every kept run's scored rounds with today's estimates (`todays_estimates`)."""
    out = []
    for path in sorted(results.glob("placement-*seed*.json")):
        run = json.loads(path.read_text())
        rounds = scored_rounds(run) if "per_round" in run else []
        if not rounds:
            continue
        drains = drain_times(run)
        out.append({"background": "real logs" if run.get("traces") else "depth_misleads",
                    "seed": run.get("seed") or 0, "rounds": rounds,
                    "bound_s": run.get("max_wait_s") or DEFAULT_BOUND_S,
                    "estimates": [todays_estimates(run, r, drains) for r in rounds],
                    "models": {name: [todays_estimates(run, r, drains, error) for r in rounds]
                               for name, error in MODELS.items() if error is not own_error}})
        for name, change in CHANGES.items():
            changed = [{s: dict(e) for s, e in est.items()} for est in out[-1]["estimates"]]
            for r, est in zip(rounds, changed, strict=True):
                change(run, r, est)
            out[-1]["models"][name] = changed
    return out


def signals(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per background: bad and good rounds of today's engine, and each signal's AUC."""
    out: dict[str, dict[str, Any]] = {}
    for bg in sorted({r["background"] for r in runs}):
        values: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in SIGNALS}
        bad_s = total_s = 0.0
        counts = [0, 0]
        for run in (r for r in runs if r["background"] == bg):
            for r, est in zip(run["rounds"], run["estimates"], strict=True):
                order = _ranked(est)
                if not order:
                    continue
                lost = _regret(r["completion_s"], order[0])
                total_s += lost
                if GOOD_S < lost <= BAD_S:
                    continue
                which = 0 if lost > BAD_S else 1
                counts[which] += 1
                bad_s += lost if which == 0 else 0.0
                ru = est[order[1]] if len(order) > 1 else None
                for name, f in SIGNALS.items():
                    v = f(est[order[0]], ru)
                    if v is not None:
                        values[name][which].append(v)
        out[bg] = {"bad_rounds": counts[0], "good_rounds": counts[1], "bad_s": bad_s,
                   "lost_s": total_s,
                   "auc": {n: _auc(*v) for n, v in values.items()},
                   "measured": {n: (len(v[0]), len(v[1])) for n, v in values.items()}}
    return out


def judge(runs: list[dict[str, Any]], rules: dict[str, Ranking] | None = None
          ) -> dict[str, dict[str, dict[str, Any]]]:
    """Per background and rule (`RULES`, and today's rank on each of `MODELS`' estimates):
    run means by half, runs meeting the targets, and the seconds won / lost against today's
    engine per class of round."""
    rules = rules or {**RULES, **{m: _ranked for m in (*MODELS, *CHANGES) if m not in RULES},
                      **{n: RULES[r] for n, (_, r) in COMBINED.items()}}
    model_of = {n: m for n, (m, _) in COMBINED.items()}
    base = next(iter(rules))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for run in runs:
        bg, half = run["background"], half_of(run["seed"])
        best, homes = _best_baseline(run["rounds"]), _avg_home_median(run["rounds"])
        regrets: dict[str, list[float]] = {n: [] for n in rules}
        classes: list[str] = []
        for k, (r, est) in enumerate(zip(run["rounds"], run["estimates"], strict=True)):
            for name, ranking in rules.items():
                model = model_of.get(name, name)
                order = ranking(run["models"][model][k] if model in run["models"] else est)
                regrets[name].append(_regret(r["completion_s"], order[0] if order else None))
            order = rules[base](est)
            classes.append(round_class(est, r, order[0], run["bound_s"]) if order
                           else "no pick")
        for name, got in regrets.items():
            row = out.setdefault(bg, {}).setdefault(name, {
                "means": {"design": [], "held out": [], "fresh": []},
                "below_every_baseline": 0, "median_target": 0, "classes": {}})
            m = mean(got) or 0.0
            row["means"][half].append(m)
            if run["seed"] > FRESH_AFTER:
                row["means"]["fresh"].append(m)
            row["below_every_baseline"] += best is not None and m < best
            row["median_target"] += (ratio(homes, median(got), FLOOR_S) or 0.0) >= MEDIAN_TARGET
            seeds = "even seeds" if half == "design" else "odd seeds"
            for cls, mine, theirs in zip(classes, got, regrets[base], strict=True):
                won_lost = row["classes"].setdefault(
                    f"{seeds}: {cls}", {"won_s": 0.0, "lost_s": 0.0, "rounds": 0})
                won_lost["won_s"] += max(0.0, theirs - mine)
                won_lost["lost_s"] += max(0.0, mine - theirs)
                won_lost["rounds"] += mine != theirs
    for per in out.values():
        for row in per.values():
            means = row.pop("means")
            row["runs"] = len(means["design"]) + len(means["held out"])
            row["mean_s"] = mean(means["design"] + means["held out"])
            row["even_s"], row["odd_s"] = mean(means["design"]), mean(means["held out"])
            row["fresh_s"], row["fresh_runs"] = mean(means["fresh"]), len(means["fresh"])
    return out


def passes(judged: dict[str, dict[str, dict[str, Any]]], name: str,
           base: str = "today's engine") -> bool:
    """Lower mean on both backgrounds and both halves; no run lost on the mean target (below
    every baseline) or the median target."""
    return all(d[name][k] < d[base][k] for d in judged.values()
               for k in ("mean_s", "even_s", "odd_s")) and all(
        d[name][k] >= d[base][k] for d in judged.values()
        for k in ("below_every_baseline", "median_target"))


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def table(data: dict[str, Any]) -> str:
    sig = [(bg, name, "-" if a is None else f"{a:.2f}", "{} / {}".format(*d["measured"][name]))
           for bg, d in data["signals"].items() for name, a in d["auc"].items()]
    heads = "".join(
        f"\n{bg}: today's engine lost {d['lost_s']:.0f} s, {d['bad_s']:.0f} s of it in "
        f"{d['bad_rounds']} bad rounds (over {BAD_S:g} s); {d['good_rounds']} good rounds "
        f"(within {GOOD_S:g} s)." for bg, d in data["signals"].items())
    rules = [(bg, name, _s(r["mean_s"]), _s(r["even_s"]), _s(r["odd_s"]),
              f"{_s(r['fresh_s'])} ({r['fresh_runs']})",
              f"{r['below_every_baseline']} of {r['runs']}", str(r["median_target"]),
              "yes" if name in data["passing"] else "")
             for bg, per in data["rules"].items() for name, r in per.items()]
    classes = [(bg, name, cls, str(c["rounds"]), f"+{c['won_s']:.0f}", f"-{c['lost_s']:.0f}")
               for bg, per in data["rules"].items() for name, r in per.items()
               if name != "today's engine"
               for cls, c in sorted(r["classes"].items()) if c["rounds"]]
    return ("## what today's engine knew in its bad rounds (AUC, bad over good)\n\n"
            + markdown_table(["background", "signal of the chosen site", "AUC",
                              "measured in bad / good rounds"], sig) + heads
            + "\n\n## rules on today's engine's estimates\n\n"
            + markdown_table(["background", "rule", "mean of run means s", "even seeds",
                              "odd seeds", f"seeds > {FRESH_AFTER} (runs)",
                              "runs below every baseline", "runs with median 10x below",
                              "lower on both, both halves"], rules)
            + "\n\n## seconds won / lost against today's engine, by its round's class\n\n"
            + markdown_table(["background", "rule", "class of the engine's pick",
                              "rounds moved", "won s", "lost s"], classes) + "\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=str(RESULTS), help="where the placement runs are")
    args = p.parse_args(argv)
    runs = load(Path(args.results))
    judged = judge(runs)
    data = {"signals": signals(runs), "rules": judged,
            "passing": [n for n in judged[next(iter(judged))]
                        if n != "today's engine" and passes(judged, n)]}
    emit("bad_rounds", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
