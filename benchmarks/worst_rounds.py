"""Where diamond's mean is lost: the rounds of every kept placement run ranked by the seconds
diamond lost, and the queue-length ranks judged on both backgrounds, both seed halves and the
runs recorded after a rule was proposed.

For each of the worst rounds (`additional_s["diamond"]`, as recorded): the chosen and the
fastest site's recorded start / 90% bound / raw plan and queue, both completions, the site
today's engine picks on the same record (`decision_replay.own_corrected`, the engine's
own-jobs correction replayed), `miss_classes`' class, and which simple signal would have
picked the fastest site: fewest queued, soonest raw plan, soonest 90% bound, and the
queue-length rank `C s x ln(1 + queued)` at C = 10 s.

Each rule of `RULES` ranks today's engine's estimates through `placement_rank.rank`
(queue ranks move a site's finish later by their penalty) and is scored as
`decision_replay` scores it; per background: the mean of run means, the same on even and odd
seeds, on runs of seeds after FRESH_AFTER (recorded after session 36 proposed the queue
rank, so held out in time), the median and the mean of run medians, and the runs whose mean
is below every baseline's.

    python -m benchmarks.worst_rounds [--worst N] [--results DIR] [--json]
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from diamond_jupyter.placement_rank import rank

from .common import RESULTS, emit, markdown_table, mean, median, parser
from .decision_replay import NOW, _best_baseline, own_corrected, scored_rounds, verdicts
from .miss_classes import classified

FRESH_AFTER = 135  # the last seed session 36's queue-rank replay saw
QUEUE_RANK_S = 10.0  # session 36's best constant for C s x ln(1 + queued)

Estimates = dict[str, dict[str, Any]]
Pick = Callable[[Estimates, dict[str, int]], str | None]


def penalised(penalty: Callable[[str, Estimates, dict[str, int]], float]) -> Pick:
    """The engine's rank with each site's finish moved `penalty` seconds later."""
    def pick(est: Estimates, queued: dict[str, int]) -> str | None:
        moved = {s: dict(e, finish_s=e["finish_s"] + penalty(s, est, queued))
                 for s, e in est.items() if e.get("finish_s") is not None}
        return rank(verdicts(moved), NOW)[1]
    return pick


def per_queued(c: float) -> Pick:
    return penalised(lambda s, est, q: c * math.log1p(q.get(s, 0)))


def per_shorter_queue(c: float) -> Pick:
    return penalised(lambda s, est, q: c * sum(q.get(o, 0) < q.get(s, 0) for o in est))


def fewest_queued_within(window_s: float) -> Pick:
    """Among the sites finishing within `window_s` of the earliest finish, the fewest queued."""
    def pick(est: Estimates, queued: dict[str, int]) -> str | None:
        ok = {s: e["finish_s"] for s, e in est.items() if e.get("finish_s") is not None}
        if not ok:
            return None
        first = min(ok.values())
        return min((s for s, f in ok.items() if f <= first + window_s),
                   key=lambda s: (queued.get(s, 0), ok[s]))
    return pick


RULES: dict[str, Pick] = {
    "today's engine": penalised(lambda s, est, q: 0.0),
    **{f"{c:g} s x ln(1 + queued)": per_queued(c) for c in (2.0, 5.0, QUEUE_RANK_S, 15.0, 20.0)},
    **{f"{c:g} s per site with a shorter queue": per_shorter_queue(c) for c in (5.0, 10.0)},
    **{f"fewest queued within {w:g} s": fewest_queued_within(w) for w in (15.0, 30.0, 60.0)},
}


def _soonest(est: Estimates, key: str) -> str | None:
    have = {s: e[key] for s, e in est.items() if e.get(key) is not None}
    return min(have, key=have.__getitem__) if have else None


def signals(est: Estimates, queued: dict[str, int]) -> dict[str, str | None]:
    """The site each simple recorded signal puts first."""
    return {"fewest queued": min(queued, key=queued.__getitem__) if queued else None,
            "soonest raw plan": _soonest(est, "raw_start_s"),
            "soonest 90% bound": _soonest(est, "bound_s"),
            f"{QUEUE_RANK_S:g} s x ln(1 + queued)": per_queued(QUEUE_RANK_S)(est, queued)}


def load_runs(results: Path) -> list[tuple[str, dict, list[dict]]]:
    """(background, run, scored rounds) of every kept placement run."""
    out = []
    for path in sorted(results.glob("placement-*seed*.json")):
        run = json.loads(path.read_text())
        rounds = scored_rounds(run) if "per_round" in run else []
        if rounds:
            out.append(("real logs" if run.get("traces") else "depth_misleads", run, rounds))
    return out


def _view(e: dict[str, Any] | None) -> str:
    if not e:
        return "-"
    return " / ".join("-" if e.get(k) is None else f"{e[k]:.0f}"
                      for k in ("start_s", "bound_s", "raw_start_s"))


def worst(runs: list[tuple[str, dict, list[dict]]], n: int,
          classes: dict[tuple[str, Any, Any], str]) -> list[dict[str, Any]]:
    """The n rounds diamond lost most seconds in, with what the record held at the decision."""
    lost = [(r["additional_s"]["diamond"], bg, run, r) for bg, run, rounds in runs
            for r in rounds if (r.get("additional_s") or {}).get("diamond") is not None]
    lost.sort(key=lambda t: -t[0])
    out = []
    for s, bg, run, r in lost[:n]:
        comp, est, queued = r["completion_s"], r["estimate"], r.get("pending") or {}
        chosen, fastest = r["choice"]["diamond"], min(comp, key=comp.__getitem__)
        today = own_corrected(run, r, "unanimous")
        out.append({
            "background": bg, "seed": run.get("seed"), "round": r.get("round"), "lost_s": s,
            "chosen": chosen, "chosen_estimate": _view(est.get(chosen)),
            "chosen_queued": queued.get(chosen), "chosen_completion_s": comp.get(chosen),
            "chosen_never_started": chosen in (r.get("censored") or ()),
            "fastest": fastest, "fastest_estimate": _view(est.get(fastest)),
            "fastest_queued": queued.get(fastest), "fastest_completion_s": comp[fastest],
            "todays_engine": RULES["today's engine"](today, queued),
            "class": classes.get((bg, run.get("seed"), r.get("round"))),
            "picked_by": [k for k, v in signals(today, queued).items() if v == fastest]})
    return out


def judge(runs: list[tuple[str, dict, list[dict]]], rules: dict[str, Pick] = RULES
          ) -> dict[str, dict[str, dict[str, Any]]]:
    """Per background and rule: the figures the issue and the brief judge a rule by."""
    per: dict[str, dict[str, list[tuple[int, float, float, bool]]]] = {}
    for bg, run, rounds in runs:
        ests = [own_corrected(run, r, "unanimous") for r in rounds]
        best = _best_baseline(rounds)
        for name, pick in rules.items():
            regret = []
            for r, est in zip(rounds, ests, strict=True):
                comp, chosen = r["completion_s"], pick(est, r.get("pending") or {})
                regret.append(comp[chosen] - min(comp.values()) if chosen in comp
                              else max(comp.values()))
            m = mean(regret) or 0.0
            per.setdefault(bg, {}).setdefault(name, []).append(
                (run.get("seed") or 0, m, median(regret) or 0.0, best is not None and m < best))
    return {bg: {name: {
        "runs": len(rows), "mean_of_run_means_s": mean([m for _, m, _, _ in rows]),
        "even_s": mean([m for s, m, _, _ in rows if s % 2 == 0]),
        "odd_s": mean([m for s, m, _, _ in rows if s % 2]),
        "fresh_runs": sum(s > FRESH_AFTER for s, *_ in rows),
        "fresh_s": mean([m for s, m, _, _ in rows if s > FRESH_AFTER]),
        "median_of_run_medians_s": median([d for _, _, d, _ in rows]),
        "mean_of_run_medians_s": mean([d for _, _, d, _ in rows]),
        "runs_mean_below_every_baseline": sum(b for *_, b in rows)}
        for name, rows in by_rule.items()} for bg, by_rule in per.items()}


def passes(judged: dict[str, dict[str, dict[str, Any]]], name: str,
           base: str = "today's engine") -> bool:
    """Lower mean on every background and on both seed halves, the median not raised."""
    return all(d[name][k] < d[base][k] for d in judged.values()
               for k in ("mean_of_run_means_s", "even_s", "odd_s")) and all(
        d[name]["median_of_run_medians_s"] <= d[base]["median_of_run_medians_s"]
        for d in judged.values())


def table(data: dict[str, Any]) -> str:
    rows = [(f"{'real' if w['background'] == 'real logs' else 'dm'} {w['seed']}/{w['round']}",
             f"{w['lost_s']:.0f}",
             f"{w['chosen']} {w['chosen_estimate']}, {w['chosen_queued']} queued",
             f"{w['fastest']} {w['fastest_estimate']}, {w['fastest_queued']} queued",
             f"{w['chosen_completion_s']:.0f}{' (never)' if w['chosen_never_started'] else ''}"
             f" / {w['fastest_completion_s']:.0f}", w["todays_engine"], w["class"],
             ", ".join(w["picked_by"]) or "none") for w in data["worst"]]
    judged = [(bg, name, r["mean_of_run_means_s"], r["even_s"], r["odd_s"],
               "-" if r["fresh_s"] is None else f"{r['fresh_s']:.3f} ({r['fresh_runs']})",
               r["median_of_run_medians_s"],
               r["mean_of_run_medians_s"], f"{r['runs_mean_below_every_baseline']} of {r['runs']}",
               "yes" if name in data["passing"] else "")
              for bg, d in data["rules"].items() for name, r in d.items()]
    return ("## the worst rounds (start / 90% bound / raw plan s, as recorded)\n\n"
            + markdown_table(["seed/round", "lost s", "chosen", "fastest",
                              "completion s chosen / fastest", "today's engine", "class",
                              "picked by"], rows)
            + "\n## rules on today's engine's estimates\n\n"
            + markdown_table(["background", "rule", "mean s", "even", "odd",
                              f"seeds > {FRESH_AFTER} (runs)", "median of run medians",
                              "mean of run medians", "runs below every baseline",
                              "lower on both, both halves"], judged))


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=str(RESULTS), help="where the placement runs are")
    p.add_argument("--worst", type=int, default=20, help="how many of the worst rounds")
    args = p.parse_args(argv)
    runs = load_runs(Path(args.results))
    classes = {(r["background"], r["seed"], r["round"]): r["class"]
               for r in classified(Path(args.results))}
    judged = judge(runs)
    data = {"worst": worst(runs, args.worst, classes), "rules": judged,
            "passing": [n for n in RULES if n != "today's engine" and passes(judged, n)]}
    emit("worst_rounds", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
