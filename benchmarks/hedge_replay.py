"""Which sites should a hedged job's copies go to? Rules replayed on recorded rounds, with
the seeds split into a design half and a held-out half before any result was read
(issue 15, item 3).

A hedge's value is in covering the first copy's risk, and the N best sites by median
finish are often the same bet twice. Each rule picks the two sites of a `--hedge 2`
from a round's recorded estimates, and is scored on the round's matched probes exactly as
`benchmarks.placement` scores hedge2 (`placement._matched_hedge`: of the chosen sites, the
probe that started first runs, its completion is the hedge's; none started within the
bound: censored at it). Regret: that completion less the round's fastest probe's.

Each site's start is a distribution read from what the engine predicts (`start_dist`):
its median start m and its 90% bound b (without a bound, m + FINISH_NOISE_S, the engine's
own spread for an unmeasured start, `placement_rank._start_spread_s`); a bound within half a
second of the start is a certain start; otherwise the wait plus WAIT_FLOOR_S (the
calibration's floor) is log-normal with median m + floor and 90% quantile b + floor
(waits below 0 count as 0). Runtimes are the engine's (finish less start). Sites are taken
as independent.

Rules:
- `two best` (the engine today): the first two of the engine's ranking (`placement_rank.rank`);
- `least expected hedge completion` (the candidate, declared before any result was read):
  the pair whose expected completion of the copy that starts first is least
  (`expected_first_start`), which is what a hedge runs;
- `least expected minimum completion`: the pair whose expected minimum of completions is
  least (the same when the runtimes are equal);
- `best + surest start`: the engine's best and the other site with the smallest 90% bound;
- `best + least expected complement`: the engine's best and the other site whose pair with
  it has the least expected hedge completion (the second copy covers the first's risk;
  added after the candidate's held-out outcome had been printed, and judged on the design
  half first, where it lost on both backgrounds).

The candidate goes into the engine only if, on the held-out half of BOTH backgrounds, its
mean of run means is below `two best`'s and it meets the issue's target (the hedge's mean
regret at least 2x below diamond's recorded mean, 1 s floor) on at least as many runs.

Every kept `benchmarks.placement` run with its probes' start times recorded is scored,
real hedges' runs too (their matched probes were sent all the same); runs without start
times are listed, not scored.

    python -m benchmarks.hedge_replay [--results DIR] [--half design|'held out'|both] [--json]
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from statistics import NormalDist
from typing import Any

from diamond_jupyter.calibration import WAIT_FLOOR_S
from diamond_jupyter.placement_rank import FINISH_NOISE_S, rank

from .common import emit, markdown_table, mean, median, parser, ratio
from .decision_replay import HEDGE_TARGET, NOW, scored_rounds, verdicts
from .halves import (
    add_results_arguments,
    difference_from_engine,
    difference_rows,
    runs_by_half,
    won_lost,
)
from .placement import FLOOR_S, HEDGE, _matched_hedge

QUANTILE_POINTS = 64  # equally likely points a site's start distribution is read at
CERTAIN_S = 0.5  # a bound this close to the start: a certain start
Z90 = NormalDist().inv_cdf(0.9)


@dataclass(frozen=True)
class StartDist:
    """A site's start as equally likely points (seconds from now, sorted) and the runtime
    that follows it."""

    points: tuple[float, ...]
    runtime_s: float


def start_dist(start_s: float, bound_s: float | None, runtime_s: float,
               floor_s: float = WAIT_FLOOR_S, n: int = QUANTILE_POINTS) -> StartDist:
    """The start distribution of a site predicted to start at `start_s` (the median) with
    90% bound `bound_s`: certain when the bound is within CERTAIN_S of the start, else the
    wait plus `floor_s` log-normal through those two quantiles, read at n quantiles."""
    m = max(0.0, start_s)
    b = max(m, m + FINISH_NOISE_S if bound_s is None else bound_s)
    if b - m <= CERTAIN_S:
        return StartDist((m,), max(0.0, runtime_s))
    sigma = math.log((b + floor_s) / (m + floor_s)) / Z90
    unit = NormalDist()
    pts = tuple(max(0.0, (m + floor_s) * math.exp(sigma * unit.inv_cdf((k + 0.5) / n))
                    - floor_s) for k in range(n))
    return StartDist(pts, max(0.0, runtime_s))


def expected_first_start(dists: Sequence[StartDist]) -> float:
    """The expected completion of the copy that starts first (its start plus its own
    runtime), the sites independent; equal starts go to the one listed first."""
    total = 0.0
    for i, d in enumerate(dists):
        p = 1.0 / len(d.points)
        for t in d.points:
            win = p
            for j, o in enumerate(dists):
                if j == i:
                    continue
                # an earlier-listed site must start strictly later; a later-listed one
                # no earlier
                at = bisect_right(o.points, t) if j < i else bisect_left(o.points, t)
                win *= (len(o.points) - at) / len(o.points)
                if win == 0.0:
                    break
            total += win * (t + d.runtime_s)
    return total


def expected_min_completion(dists: Sequence[StartDist]) -> float:
    """The expected least completion (start plus runtime) over the sites, independent."""
    return expected_first_start([StartDist(tuple(sorted(t + d.runtime_s for t in d.points)),
                                           0.0) for d in dists])


def least_set(dists: dict[str, StartDist], copies: int, order: Sequence[str],
              value: Callable[[Sequence[StartDist]], float] = expected_first_start
              ) -> list[str]:
    """The `copies` sites (listed in `order`, the engine's ranking) whose `value` is least;
    equal values go to the set that comes first in `order`."""
    names = [s for s in order if s in dists]
    best: tuple[float, list[str]] | None = None
    for combo in combinations(names, min(copies, len(names))):
        v = value([dists[s] for s in combo])
        if best is None or v < best[0] - 1e-9:
            best = (v, list(combo))
    return best[1] if best else []


Estimates = dict[str, dict[str, Any]]
HedgeRule = Callable[[Estimates], list[str]]


def dists_of(est: Estimates) -> dict[str, StartDist]:
    return {s: start_dist(e["start_s"], e.get("bound_s"), e["finish_s"] - e["start_s"])
            for s, e in est.items() if e.get("finish_s") is not None}


def ranked(est: Estimates) -> list[str]:
    return [v.site for v in rank(verdicts(est), NOW)[0]]


def two_best(est: Estimates) -> list[str]:
    return ranked(est)[:HEDGE]


def least_expected(value: Callable[[Sequence[StartDist]], float]) -> HedgeRule:
    return lambda est: least_set(dists_of(est), HEDGE, ranked(est), value)


def best_and_least_expected(est: Estimates) -> list[str]:
    """The engine's best site, and the other whose pair with it has the least expected
    completion of the copy that starts first: the second copy covers the first's risk."""
    order, dists = ranked(est), dists_of(est)
    if not order:
        return []
    others = least_set({s: d for s, d in dists.items() if s != order[0]}, HEDGE - 1,
                       order[1:], lambda ds: expected_first_start([dists[order[0]], *ds]))
    return [order[0], *others]


def best_and_surest(est: Estimates) -> list[str]:
    best, *others = ranked(est)
    return [best, *sorted(others, key=lambda s: math.inf if est[s].get("bound_s") is None
                          else est[s]["bound_s"])[:HEDGE - 1]]


CANDIDATE = "least expected hedge completion"
RULES: dict[str, HedgeRule] = {
    "two best": two_best,
    CANDIDATE: least_expected(expected_first_start),
    "least expected minimum completion": least_expected(expected_min_completion),
    "best + surest start": best_and_surest,
    "best + least expected complement": best_and_least_expected,
}


def score_run(run: dict, rules: dict[str, HedgeRule] = RULES) -> dict[str, Any] | None:
    """Each rule's regret per scored round, the recorded diamond's, and the recorded
    hedge2's; None for a run without its probes' start times."""
    rounds = [r for r in scored_rounds(run) if r.get("started_s") is not None]
    if not rounds:
        return None
    max_wait = run.get("max_wait_s") or max(c for r in rounds for c in
                                            r["completion_s"].values())
    regret: dict[str, list[float]] = {n: [] for n in rules}
    differs: dict[str, int] = {n: 0 for n in rules}
    agree = 0  # rounds whose replayed two best are the recorded ranking's first two
    for r in rounds:
        comp = r["completion_s"]
        today = set(two_best(r["estimate"]))
        agree += today == set((r.get("ranking") or [])[:HEDGE])
        for name, rule in rules.items():
            sites = rule(r["estimate"])
            differs[name] += set(sites) != today
            h = _matched_hedge(sites, comp, r["started_s"], list(r.get("censored") or ()),
                               max_wait)
            regret[name].append(h["completion_s"] - min(comp.values()))
    diamond = [(r.get("additional_s") or {}).get("diamond") for r in rounds]
    recorded = [(r.get("additional_s") or {}).get(f"hedge{HEDGE}") for r in rounds]
    return {"seed": run.get("seed"), "rounds": len(rounds), "regret": regret,
            "pairs_unlike_two_best": differs, "two_best_as_recorded": agree,
            "diamond_mean_s": mean([d for d in diamond if d is not None]),
            "recorded_hedge_mean_s": mean([h for h in recorded if h is not None]),
            "hedge_mode": run.get("hedge_mode") or "real"}


def _summary(runs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    pooled = [x for r in runs for x in r["regret"][name]]
    today = [x for r in runs for x in r["regret"]["two best"]]
    run_means = [mean(r["regret"][name]) or 0.0 for r in runs]
    won, lost = won_lost(pooled, today)
    return {
        "rounds": len(pooled), "won": won, "lost": lost,
        "pairs_unlike_two_best": sum(r["pairs_unlike_two_best"][name] for r in runs),
        "mean_of_run_means_s": mean(run_means), "median_s": median(pooled),
        "runs_2x_below_diamond": sum(
            1 for r, m in zip(runs, run_means, strict=True)
            if (ratio(r["diamond_mean_s"], m, FLOOR_S) or 0.0) >= HEDGE_TARGET)}


def passes(group: dict[str, Any], name: str = CANDIDATE) -> bool:
    """The declared test on one background's half: a lower mean of run means than `two
    best`, and the issue's 2x target met on at least as many runs."""
    rule, today = group["rules"][name], group["rules"]["two best"]
    return (rule["mean_of_run_means_s"] < today["mean_of_run_means_s"]
            and rule["runs_2x_below_diamond"] >= today["runs_2x_below_diamond"])


def summarize(results: Path, rules: dict[str, HedgeRule] = RULES) -> dict[str, Any]:
    groups, unscored = runs_by_half(results, lambda run: score_run(run, rules))
    out: dict[str, Any] = {"groups": [], "unscored_runs": unscored, "candidate": CANDIDATE,
                           "differences": {}}
    for bg in sorted({bg for bg, _ in groups}):
        every = [r for (b, _), runs in groups.items() if b == bg for r in runs]
        out["differences"][bg] = {name: difference_from_engine(every, name,
                                                               reference="two best")
                                  for name in rules if name != "two best"}
    for (bg, half), runs in sorted(groups.items()):
        group = {"background": bg, "half": half, "runs": len(runs),
                 "seeds": sorted(r["seed"] for r in runs),
                 "real_hedge_runs": sum(1 for r in runs if r["hedge_mode"] == "real"),
                 "two_best_as_recorded": sum(r["two_best_as_recorded"] for r in runs),
                 "diamond_mean_of_run_means_s": mean([r["diamond_mean_s"] or 0.0
                                                      for r in runs]),
                 "rules": {name: _summary(runs, name) for name in rules}}
        out["groups"].append({**group, "candidate_passes": passes(group)})
    return out


def test_outcomes(data: dict[str, Any]) -> str:
    """The declared test's outcome on each half present (held out: the one that decides)."""
    lines = []
    for half in ("design", "held out"):
        got = [g for g in data["groups"] if g["half"] == half]
        if got:
            ok = [g["background"] for g in got if g["candidate_passes"]]
            lines.append(f"\nThe candidate ({data['candidate']}) on the {half} half: better "
                         f"than two best on {len(ok)} of {len(got)} backgrounds"
                         + (f" ({', '.join(ok)})" if ok else "") + ".")
    return "".join(lines)


def table(data: dict[str, Any]) -> str:
    rows = []
    for g in data["groups"]:
        for name, s in g["rules"].items():
            rows.append((g["background"], g["half"], name, s["pairs_unlike_two_best"],
                         s["won"], s["lost"], f"{s['mean_of_run_means_s']:.2f}",
                         f"{s['median_s']:.2f}", f"{s['runs_2x_below_diamond']} of {g['runs']}"))
    notes = "".join(
        f"\n{g['background']}, {g['half']}: {g['runs']} runs ({g['real_hedge_runs']} with a "
        f"real hedge beside the matched probes), {g['rules']['two best']['rounds']} rounds "
        f"(the replayed two best are the recorded ranking's first two in "
        f"{g['two_best_as_recorded']}); "
        f"diamond's recorded mean of run means {g['diamond_mean_of_run_means_s']:.2f} s."
        for g in data["groups"])
    skipped = ", ".join(data["unscored_runs"]) or "none"
    diffs = difference_rows(data.get("differences", {}))
    return ("## hedged copies' sites on held-out seeds (even seeds: design; odd: held out)"
            "\n\n" + markdown_table(
                ["background", "half", "copies to", "pairs unlike two best",
                 "rounds won vs two best", "lost", "mean of run means s", "median s",
                 "runs with diamond's mean 2x the hedge's"], rows)
            + notes + f"\n\nRuns without probe start times (not scored): {skipped}.\n"
            + test_outcomes(data) + ("\n\n## each rule less two best, every run of both halves "
                                "(mean of run means; 95% interval, paired bootstrap over "
                                "runs)\n\n" + markdown_table(
                                    ["background", "copies to", "difference s",
                                     "95% interval s"], diffs) if diffs else "") + "\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    add_results_arguments(p)
    args = p.parse_args(argv)
    data = summarize(Path(args.results))
    if args.half != "both":  # nothing of the other half, pooled figures included
        data["groups"] = [g for g in data["groups"] if g["half"] == args.half]
        data["differences"] = {}
    emit("hedge_replay", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
