"""Decision rules judged on held-out seeds: would a rule justified by principle have beaten
the recorded decisions on seeds it was not chosen on? (issue 15, item 5)

Every kept `benchmarks.placement` run (both backgrounds) is split by seed, before any
result is read: even seeds are the design half, where a rule may be chosen; odd seeds are
held out, reported without changing anything. Each rule picks from a round's recorded
estimates (`decision_replay.verdicts`) and is scored on the round's matched probes: its
regret is its site's completion less the fastest one's. Per background and half:

- rounds won / lost / tied against the recorded decision (diamond's recorded regret);
- mean and median regret of the rule, of the recorded decisions and of the engine's
  current rule replayed on the same estimates (`engine`);
- the runs whose mean regret is strictly below every baseline's (each fixed home,
  fewest_pending, random: the issue's mean target), and those where a baseline scored
  0 s (one site fastest in every round: no rule can be strictly below it);
- over every run of a background, each rule's mean of run means less the engine's, with a
  95% interval from a paired bootstrap over the runs (seeded).

Rules, each with its constant taken from a model of the start distribution, none fitted on
these rounds (`EXPECTED_TAIL`): a start's median m and 90% bound b, with an exponential
tail above the median (P(start > m + x) = 0.5 exp(-x / theta), so P(start > b) = 0.1 gives
theta = (b - m) / ln 5), have a mean of m + 0.5 theta = m + 0.31 (b - m) when the lower
half sits at the median (less, the lower half earlier: the same for every site).

- `engine`: earliest median finish; finishes within noise (`placement_rank.finish_noise_s`) go
  to the lower 90% bound (`placement_rank.rank`);
- `tie: expected`: the same ties, broken by the expected finish (finish + 0.31 x spread,
  the spread being the bound past the start) instead of the bound;
- `tie: expected where measured`: so, where every tied site's bound is a measured
  quantile (at least QBETS_MIN_SAMPLES calibration samples: fewer give the walltime plan,
  a worst case), else the engine's;
- `expected`: the expected finish for every site, no tie rule;
- `expected where measured`: the expected finish where the bound is measured, the median
  finish elsewhere, then the engine's ties;
- `median finish`: the earliest median finish, no tie rule (what the ties add);
- `engine, own jobs replayed`: the engine's rule with its own-jobs correction replayed from
  the earlier rounds' probes (`decision_replay.own_corrected`);
- `own: later from one overdue job`: the same, but below MIN_SAMPLES own jobs any overdue
  ones already move the site later (a wrong "soon" costs more than a wrong "late").

    python -m benchmarks.rule_holdout [--results DIR] [--half design|'held out'|both] [--json]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from diamond_jupyter.calibration import (
    MAX_WAIT_RATIO,
    OWN_ERROR_SAMPLES,
    WAIT_FLOOR_S,
    OwnError,
    PredictionSample,
    own_error,
    quantile_upper_index,
)
from diamond_jupyter.placement_rank import FINISH_NOISE_S, finish_noise_s, rank

from .common import emit, markdown_table, mean, median, parser
from .decision_replay import NOW, own_corrected, scored_rounds, verdicts
from .halves import (
    add_results_arguments,
    best_baseline_mean,
    difference_from_engine,
    difference_rows,
    runs_below_every_baseline,
    runs_by_half,
    won_lost,
)

Estimates = dict[str, dict[str, Any]]
Rule = Callable[[Estimates], str | None]
RoundRule = Callable[[dict, dict], str | None]  # (run, round) -> site: reads earlier rounds

EXPECTED_TAIL = 0.5 / math.log(5.0)  # mean excess of an exponential tail, per (b - m)
# the fewest samples with a 90% / 95%-confidence order statistic (29)
QBETS_MIN_SAMPLES = next(n for n in range(1, 1000) if quantile_upper_index(n) is not None)


def _spread(e: dict[str, Any]) -> float:
    """The start's uncertainty: its bound past its start (FINISH_NOISE_S without one)."""
    b = e.get("bound_s")
    return FINISH_NOISE_S if b is None else max(0.0, b - e["start_s"])


def _measured(e: dict[str, Any]) -> bool:
    """The bound is a measured quantile: a certain start, or enough samples behind it."""
    return e.get("bound_s") is not None and (
        e["bound_s"] <= e["start_s"] + 0.5 or (e.get("samples") or 0) >= QBETS_MIN_SAMPLES)


def _expected(e: dict[str, Any]) -> float:
    return e["finish_s"] + EXPECTED_TAIL * _spread(e)


def _feasible(est: Estimates) -> list[tuple[str, dict[str, Any]]]:
    return [(s, e) for s, e in est.items() if e.get("finish_s") is not None]


def _tied(est: Estimates) -> list[tuple[int, str, dict[str, Any]]]:
    """The sites whose finishes tie the earliest one's as the engine counts ties, each
    with its position (the engine's last key)."""
    feas = [(i, s, e) for i, (s, e) in enumerate(_feasible(est))]
    if not feas:
        return []
    first = min(feas, key=lambda x: (x[2]["finish_s"], x[0]))
    best = first[2]["finish_s"]
    return [x for x in feas if x[2]["finish_s"] - best <= finish_noise_s(
        best, max(_spread(first[2]), _spread(x[2])))]


def engine(est: Estimates) -> str | None:
    return rank(verdicts(est), NOW)[1]


def median_finish(est: Estimates) -> str | None:
    feas = _feasible(est)
    return min(enumerate(feas), key=lambda x: (x[1][1]["finish_s"], x[0]))[1][0] \
        if feas else None


def tie_expected(est: Estimates) -> str | None:
    tied = _tied(est)
    return min(tied, key=lambda x: (_expected(x[2]), x[2]["finish_s"], x[0]))[1] \
        if tied else None


def tie_expected_where_measured(est: Estimates) -> str | None:
    tied = _tied(est)
    if tied and all(_measured(e) for _, _, e in tied):
        return tie_expected(est)
    return engine(est)


def expected(est: Estimates) -> str | None:
    feas = _feasible(est)
    return min(enumerate(feas), key=lambda x: (_expected(x[1][1]), x[0]))[1][0] \
        if feas else None


def expected_where_measured(est: Estimates) -> str | None:
    return rank(verdicts(est, lambda e: EXPECTED_TAIL * _spread(e) if _measured(e)
                         else 0.0), NOW)[1]


def own_later_from_one(run: dict, r: dict) -> str | None:
    """The engine's rule on the round's estimates with the user's own-jobs correction
    replayed (`decision_replay.own_corrected`, the engine's mode), except that where fewer
    than MIN_SAMPLES of the user's jobs on a site say anything, any that are overdue (or
    started late) already move its start later by their median ratio: a wrong "soon" costs
    more than a wrong "late", so one overdue job is acted on."""
    def own_error_later(samples: list[PredictionSample]) -> OwnError | None:
        err = own_error(samples)
        if err is not None and err.ratio is not None:  # (a few jobs' shift_s: not replayed)
            return err
        recent = sorted(samples, key=lambda x: x.submitted_at)[-OWN_ERROR_SAMPLES:]
        ratios = sorted((x.observed_s + WAIT_FLOOR_S) / (max(0.0, x.predicted_s)
                                                          + WAIT_FLOOR_S)
                        for x in recent if x.started or x.observed_s > x.predicted_s)
        m = median(ratios)
        return OwnError(min(MAX_WAIT_RATIO, m), len(ratios)) if m and m > 1 else None
    return engine(own_corrected(run, r, "unanimous", own_error_later))


def engine_own(run: dict, r: dict) -> str | None:
    """The engine's rule with its own-jobs correction replayed from the earlier rounds
    (the reference for `own: later from one overdue job`)."""
    return engine(own_corrected(run, r, "unanimous"))


def _on_estimates(rule: Rule) -> RoundRule:
    return lambda run, r: rule(r["estimate"])


RULES: dict[str, RoundRule] = {
    "engine": _on_estimates(engine),
    "tie: expected": _on_estimates(tie_expected),
    "tie: expected where measured": _on_estimates(tie_expected_where_measured),
    "expected": _on_estimates(expected),
    "expected where measured": _on_estimates(expected_where_measured),
    "median finish": _on_estimates(median_finish),
    "engine, own jobs replayed": engine_own,
    "own: later from one overdue job": own_later_from_one,
}


def selection_bias(run: dict, rule: RoundRule | None = None) -> dict[str, list[int]]:
    """How the sites `rule` chose started against their predictions, beside the sites it
    did not choose: per side, [probes, started later than predicted (over 1 s: the
    stamps' resolution), later than the 90% bound]. A probe that never started within
    the run's bound counts as starting then. Calibrated predictions start later about half
    the time; the earliest of several noisy ones is the one most often too soon (the
    optimizer's curse)."""
    out = {"chosen": [0, 0, 0], "others": [0, 0, 0]}
    rule = rule or _on_estimates(engine)
    limit = run.get("max_wait_s") or 240.0
    for r in scored_rounds(run):
        chosen = rule(run, r)
        for site, e in r["estimate"].items():
            started = (r.get("started_s") or {}).get(site)
            if started is None and site in (r.get("censored") or ()):
                started = limit
            if e.get("finish_s") is None or started is None:
                continue
            side = out["chosen" if site == chosen else "others"]
            side[0] += 1
            side[1] += started > e["start_s"] + 1.0
            side[2] += e.get("bound_s") is not None and started > e["bound_s"] + 1.0
    return out


def score_run(run: dict, rules: dict[str, RoundRule]) -> dict[str, Any]:
    """Per rule, its regret in each scored round; the recorded regret; the best
    baseline's mean."""
    rounds = scored_rounds(run)
    regret: dict[str, list[float]] = {n: [] for n in rules}
    recorded: list[float] = []
    for r in rounds:
        comp = r["completion_s"]
        fastest, worst = min(comp.values()), max(comp.values())
        for name, rule in rules.items():
            c = rule(run, r)
            regret[name].append(comp[c] - fastest if c in comp else worst - fastest)
        rec = (r.get("additional_s") or {}).get("diamond")
        recorded.append(worst - fastest if rec is None else rec)
    return {"seed": run.get("seed"), "regret": regret, "recorded": recorded,
            "best_baseline_mean_s": best_baseline_mean(rounds),
            "selection": selection_bias(run)}


def _summary(runs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    def means(key: str | None) -> list[float]:
        return [mean(r["recorded"] if key is None else r["regret"][key]) or 0.0 for r in runs]
    pooled = [x for r in runs for x in r["regret"][name]]
    rec = [x for r in runs for x in r["recorded"]]
    won, lost = won_lost(pooled, rec)
    run_means = means(name)
    return {
        "rounds": len(pooled), "won": won, "lost": lost, "tied": len(pooled) - won - lost,
        "mean_of_run_means_s": mean(run_means), "mean_s": mean(pooled),
        "median_s": median(pooled),
        "runs_mean_below_every_baseline": runs_below_every_baseline(runs, run_means)}


def summarize(results: Path, rules: dict[str, RoundRule] = RULES) -> dict[str, Any]:
    groups, _ = runs_by_half(results, lambda run: score_run(run, rules)
                             if scored_rounds(run) else None)
    out: dict[str, Any] = {"groups": [], "differences": {}}
    for bg in sorted({bg for bg, _ in groups}):
        every = [r for (b, _), runs in groups.items() if b == bg for r in runs]
        out["differences"][bg] = {name: difference_from_engine(every, name)
                                  for name in rules if name != "engine"}
    for (bg, half), runs in sorted(groups.items()):
        rec_means = [mean(r["recorded"]) or 0.0 for r in runs]
        rec = [x for r in runs for x in r["recorded"]]
        out["groups"].append({
            "background": bg, "half": half, "runs": len(runs),
            "seeds": sorted(r["seed"] for r in runs),
            "runs_with_a_baseline_at_0": sum(1 for r in runs if r["best_baseline_mean_s"] == 0),
            "recorded": {"mean_of_run_means_s": mean(rec_means), "mean_s": mean(rec),
                         "median_s": median(rec), "runs_mean_below_every_baseline":
                             runs_below_every_baseline(runs, rec_means)},
            "rules": {name: _summary(runs, name) for name in rules},
            "engine_starts": {side: [sum(r["selection"][side][i] for r in runs)
                                     for i in range(3)] for side in ("chosen", "others")}})
    return out


def table(data: dict[str, Any]) -> str:
    rows = []
    for g in data["groups"]:
        rec = g["recorded"]
        rows.append((g["background"], g["half"], "recorded decisions", "-", "-", "-",
                     f"{rec['mean_of_run_means_s']:.2f}", f"{rec['median_s']:.2f}",
                     f"{rec['runs_mean_below_every_baseline']} of {g['runs']}"))
        for name, s in g["rules"].items():
            rows.append((g["background"], g["half"], name, s["won"], s["lost"], s["tied"],
                         f"{s['mean_of_run_means_s']:.2f}", f"{s['median_s']:.2f}",
                         f"{s['runs_mean_below_every_baseline']} of {g['runs']}"))
    notes = "".join(f"\n{g['background']}, {g['half']}: {g['runs']} runs, "
                    f"{g['rules']['engine']['rounds']} scored rounds; a baseline at 0 s in "
                    f"{g['runs_with_a_baseline_at_0']}." for g in data["groups"])
    bias = [(g["background"], g["half"], side, n, f"{late / n:.2f}", f"{past / n:.2f}")
            for g in data["groups"] for side, (n, late, past) in g["engine_starts"].items()
            if n]
    return ("## decision rules on held-out seeds (even seeds: design; odd: held out)\n\n"
            + markdown_table(["background", "half", "rule", "won", "lost", "tied",
                              "mean of run means s", "median s",
                              "runs with mean below every baseline"], rows) + notes
            + "\n\n## each rule less the engine, every run (mean of run means; 95% "
            "interval, paired bootstrap over runs)\n\n" + markdown_table(
                ["background", "rule", "difference s", "95% interval s"],
                difference_rows(data.get("differences", {})))
            + "\n\n## the engine's choices against their predictions (the optimizer's "
            "curse)\n\n" + markdown_table(
                ["background", "half", "sites", "probes", "started after the predicted start",
                 "started after the 90% bound"], bias) + "\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    add_results_arguments(p)
    args = p.parse_args(argv)
    data = summarize(Path(args.results))
    if args.half != "both":
        data["groups"] = [g for g in data["groups"] if g["half"] == args.half]
    emit("rule_holdout", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
