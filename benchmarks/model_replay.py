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

The records hold each round's queue length, not the jobs ahead of the probe; runs before
session 27's follow-up hold no recent waits by size, so there the restriction is bounded
(`no recent-wait bound`), not replayed.

    python -m benchmarks.model_replay [--results DIR] [--json]
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import RESULTS, emit, markdown_table, mean, median, parser
from .decision_replay import BASELINE_SKIP, engine, scored_rounds

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


CHANGES: dict[str, Change] = {
    "recorded": lambda run: run,
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


def changed_rounds(run: dict, change: Change) -> list[dict[str, Any]]:
    """The rounds where `change` moves the engine's pick: from which site to which, and the
    regret before and after."""
    pick, out = engine(), []
    for before, after in zip(scored_rounds(run), scored_rounds(change(run)), strict=True):
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


def summarize(results: Path, changes: dict[str, Change] = CHANGES) -> dict[str, Any]:
    runs: dict[str, list[dict]] = {}
    for path in sorted(results.glob("placement-*seed*.json")):
        run = json.loads(path.read_text())
        if "per_round" in run and scored_rounds(run):
            runs.setdefault("real logs" if run.get("traces") else "depth_misleads",
                            []).append(run)
    out: dict[str, Any] = {"backgrounds": {}}
    for bg, kept in runs.items():
        per = {}
        for name, change in changes.items():
            moved = [c for run in kept for c in changed_rounds(run, change)]
            per[name] = {
                "mean_of_run_means_s": mean([mean(regrets(change(run))) for run in kept]),
                "runs_mean_below_every_baseline": below_every_baseline(kept, change),
                "rounds_changed": len(moved),
                "rounds_better": sum(c["regret_after_s"] < c["regret_before_s"] for c in moved),
                "rounds_worse": sum(c["regret_after_s"] > c["regret_before_s"] for c in moved)}
        out["backgrounds"][bg] = {"runs": len(kept), "changes": per, "runs_with_recent_bounds":
                                  sum(1 for run in kept if _records_recent_bounds(run)),
                                  "start_errors": start_errors(kept)}
    return out


def table(data: dict[str, Any]) -> str:
    rows = [(bg, name, f"{c['mean_of_run_means_s']:.3f}",
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
        ["background", "change", "mean of run means s", "runs with mean below every baseline",
         "picks changed", "better", "worse"],
        rows) + f"\n{runs}.\n\n## calibrated starts against the probes' starts, by the "
        "site's own evidence\n\nlog((predicted + 30 s) / (started + 30 s)) over the probes "
        "that started: above 0 too late, below too soon.\n\n" + markdown_table(
            ["background", "evidence", "starts", "calibrated: median", "mean |.|",
             "walltime plan: median", "mean |.|"], errors) + "\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=str(RESULTS), help="where the placement runs are")
    args = p.parse_args(argv)
    data = summarize(Path(args.results))
    emit("model_replay", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
