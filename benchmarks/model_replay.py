"""Model changes replayed on recorded rounds: would a change to a site's estimates, made
where the record shows its cause, have chosen better?

`decision_replay` varies the rule over fixed estimates; this varies the estimates, where a
kept run records what a change reads, and scores the engine's own rule (`placement.rank`)
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import RESULTS, emit, markdown_table, mean, parser
from .decision_replay import engine, scored_rounds

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
}


def regrets(run: dict) -> list[float]:
    """The engine's regret in each scored round of `run` (its pick's completion less the
    fastest's; a site without a probe scores the round's slowest)."""
    pick, out = engine(), []
    for r in scored_rounds(run):
        comp, chosen = r["completion_s"], pick(r["estimate"])
        out.append(comp[chosen] - min(comp.values()) if chosen in comp else max(comp.values()))
    return out


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
                "rounds_changed": len(moved),
                "rounds_better": sum(c["regret_after_s"] < c["regret_before_s"] for c in moved),
                "rounds_worse": sum(c["regret_after_s"] > c["regret_before_s"] for c in moved)}
        out["backgrounds"][bg] = {"runs": len(kept), "changes": per, "runs_with_recent_bounds":
                                  sum(1 for run in kept if _records_recent_bounds(run))}
    return out


def table(data: dict[str, Any]) -> str:
    rows = [(bg, name, f"{c['mean_of_run_means_s']:.3f}", c["rounds_changed"],
             c["rounds_better"], c["rounds_worse"])
            for bg, d in data["backgrounds"].items() for name, c in d["changes"].items()]
    runs = ", ".join(f"{bg} {d['runs']} runs ({d['runs_with_recent_bounds']} recording the "
                     "recent-wait bounds by size)" for bg, d in data["backgrounds"].items())
    return ("## model changes replayed on recorded rounds\n\n" + markdown_table(
        ["background", "change", "mean of run means s", "picks changed", "better", "worse"],
        rows) + f"\n{runs}.\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=str(RESULTS), help="where the placement runs are")
    args = p.parse_args(argv)
    data = summarize(Path(args.results))
    emit("model_replay", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
