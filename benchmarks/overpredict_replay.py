"""Calibrated starts far above what happened, and rules that would cap them, replayed on the
recorded rounds (issue 15, seed 163: gamma predicted 358-395 s, started after 16-48 s).

Two parts, no test bed:

- where the calibrated start was far off: every probe of every kept run, per background and
  site, as over-predicted ((start + 30 s) above twice (started + 30 s), probes that started),
  right (within 2x either way), or under-predicted (a probe that never started counts as
  starting at the run's bound), with what the record showed beside each: the site's queue
  empty, its recent-wait bound (`recent_bound_s`, every user's jobs) below the start, and,
  from the views (runs since session 33), the work ahead drained at the rate jobs started
  since the first view (`drain_s`) below the start; and, per order of size of the
  scheduler's estimate, the ratio the calibration took off it against the probes' own
  (`ratio_by_horizon`);
- candidate caps on the calibrated start, each applied on top of the engine's own estimates
  (`model_replay.ENGINE`) and ranked by the engine's rule: the start capped at the recent-wait
  bound where at most Q jobs wait (or where the calibration rests on fewer than the 29
  jobs a measured 90% bound needs), and capped at the drain time (CPUs, or jobs, ahead of the
  probe over the CPUs, or jobs, started per second since the run's first view, once that
  span is long enough), times a factor. Scored per half of the runs by seed parity (even:
  design, odd: held out) and on the seeds above 150, with the rounds each moved, won and
  lost, by the site pair moved between.

A cap is adopted only if it lowers the mean of run means on both halves of both
backgrounds and on the late seeds, and raises none (`wins_everywhere`).

The views' running jobs carry their start, but the replayed load starts together when the
background is loaded (the rebuilt queue's running jobs, half a minute before round 0), so
the jobs already running at the first view are left out of every rate here: only starts
seen after it count.

    python -m benchmarks.overpredict_replay [--results DIR] [--json] [--tag T]
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from diamond_jupyter.calibration import MIN_QBETS_WAITS

from .common import emit, markdown_table, mean, median, parser
from .decision_replay import engine, round_views, scored_rounds
from .halves import add_results_arguments, background_of, half_of
from .model_replay import ENGINE, ERROR_FLOOR_S
from .placement import PROBE_CPUS

Change = Callable[[dict], dict]
LATE_SEEDS = 150  # seeds above it: the runs after session 40's engine, both halves
GROUPS = ("design", "held out", f"seeds > {LATE_SEEDS}")


def groups_of(run: dict) -> list[str]:
    seed = run.get("seed")
    return [half_of(seed)] + ([GROUPS[2]] if seed is not None and seed > LATE_SEEDS else [])


def started_since_first_view(run: dict) -> dict[tuple[int, str], tuple[list[int], float]]:
    """Per (round, site): the CPUs of each job first seen running after the run's first
    view, up to that round, and the seconds since the first view (the span they started
    in). Jobs running at the first view are left out: the replayed load started them
    together."""
    seen: dict[tuple[str, str], int | None] = {}
    first_at: dict[str, float] = {}
    out: dict[tuple[int, str], tuple[list[int], float]] = {}
    for k, first, at, site, view in round_views(run):
        first_at.setdefault(site, at)
        for job in view.get("running") or []:
            seen.setdefault((site, job["id"]), None if k == first
                            else int(job.get("cpus") or 0))
        out[(k, site)] = ([c for (s, _), c in seen.items() if s == site and c is not None],
                          at - first_at[site])
    return out


def drain_s(run_starts: tuple[list[int], float] | None, view: dict, by_cpus: bool = True,
            least_span_s: float = 48.0) -> float | None:
    """The time to start the work ahead of the probe (every job pending in the view, and
    the probe) at the rate jobs started since the first view; None before `least_span_s`
    or without a start."""
    if not run_starts or run_starts[1] < least_span_s or not run_starts[0]:
        return None
    cpus, span = run_starts
    pending = view.get("pending") or []
    if by_cpus:
        return (sum(int(j.get("cpus") or 0) for j in pending) + PROBE_CPUS) * span / sum(cpus) \
            if sum(cpus) > 0 else None
    return (len(pending) + 1) * span / len(cpus)


def _cap(e: dict, cap: float | None) -> None:
    """A calibrated start above `cap` moved down to it, its finish with it."""
    if cap is None or e.get("finish_s") is None or e.get("source") != "calibrated" \
            or e["start_s"] <= cap:
        return
    e["finish_s"] -= e["start_s"] - cap
    e["start_s"] = cap


def recent_cap_when_queued(at_most: int | None, thin: bool = False) -> Change:
    """The start capped at the site's recent-wait bound where at most `at_most` jobs wait
    there in the round (the record's `pending`; None: any queue), and with `thin` only
    where its calibration rests on fewer jobs than a measured 90% bound needs (seed 163's
    gamma: 26)."""
    def change(run: dict) -> dict:
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for site, e in (r.get("estimate") or {}).items():
                if (at_most is None or (r.get("pending") or {}).get(site, 0) <= at_most) \
                        and (not thin or int(e.get("samples") or 0) < MIN_QBETS_WAITS):
                    _cap(e, e.get("recent_bound_s"))
        return run
    return change


def drain_cap(by_cpus: bool, least_span_s: float, factor: float) -> Change:
    """The start capped at `factor` x `drain_s` where the run records views."""
    def change(run: dict) -> dict:
        starts = started_since_first_view(run)
        run = copy.deepcopy(run)
        for r in run.get("per_round") or []:
            for site, e in (r.get("estimate") or {}).items():
                view = (r.get("view") or {}).get(site)
                drain = None if view is None else drain_s(
                    starts.get((r.get("round"), site)), view, by_cpus, least_span_s)
                _cap(e, None if drain is None else factor * drain)
        return run
    return change


CHANGES: dict[str, Change] = {
    **{f"recent-wait bound where at most {q} wait": recent_cap_when_queued(q)
       for q in (0, 2, 5)},
    **{f"recent-wait bound where under {MIN_QBETS_WAITS} jobs calibrate, "
       f"{'any queue' if q is None else f'at most {q} wait'}": recent_cap_when_queued(q, True)
       for q in (None, 5)},
    **{f"drain of {'CPUs' if cpus else 'jobs'} from {span:g} s of starts, x{f:g}":
       drain_cap(cpus, span, f) for cpus in (True, False) for span in (24.0, 48.0)
       for f in (1.0, 2.0)},
}


def _probe_class(e: dict, started: float | None, bound_s: float) -> str:
    actual = (bound_s if started is None else started) + ERROR_FLOOR_S
    predicted = e["start_s"] + ERROR_FLOOR_S
    if started is not None and predicted > 2 * actual:
        return "over"
    return "under" if actual > 2 * predicted else "right"


def _probes(run: dict) -> Iterator[tuple[str, dict, dict, float | None, float | None]]:
    """Each calibrated estimate of the run's scored rounds: (site, round, estimate, started,
    drain time)."""
    starts = started_since_first_view(run)
    for r in scored_rounds(run):
        for site, e in r["estimate"].items():
            if e.get("finish_s") is None or e.get("source") != "calibrated":
                continue
            view = (r.get("view") or {}).get(site)
            drain = None if view is None else drain_s(starts.get((r.get("round"), site)), view)
            yield site, r, e, (r.get("started_s") or {}).get(site), drain


def where_over(runs: list[dict]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per background and site: the calibrated starts over-predicted, right and under
    (`_probe_class`), each with how many had the queue empty, the recent-wait bound below
    the start, and the drain time below half the start."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for run in runs:
        bound_s = float(run.get("max_wait_s") or 240.0)
        for site, r, e, started, drain in _probes(run):
            cls = _probe_class(e, started, bound_s)
            cell = out.setdefault(background_of(run), {}).setdefault(site, {}).setdefault(
                cls, Counter())
            cell["probes"] += 1
            cell["queue empty"] += (r.get("pending") or {}).get(site, 0) == 0
            recent = e.get("recent_bound_s")
            cell["recent bound below"] += recent is not None and recent < e["start_s"]
            cell["drain below half"] += drain is not None and drain < e["start_s"] / 2
    return {bg: {site: {cls: dict(c) for cls, c in cells.items()}
                 for site, cells in sorted(sites.items())} for bg, sites in out.items()}


HORIZONS_S = (300.0, 1000.0, 3000.0)  # the scheduler's estimate, binned by its order of size


def horizon_of(raw_s: float) -> str:
    low = max((h for h in HORIZONS_S if h <= raw_s), default=None)
    high = min((h for h in HORIZONS_S if h > raw_s), default=None)
    return f"{low or 30:g}-{high:g} s" if high is not None else f"{low:g} s or more"


def ratio_by_horizon(runs: list[dict]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per background, site and order of size of the scheduler's estimate (30 s and over):
    the median ratio the calibration gave (start / estimate) and the median ratio the probes
    showed (started / estimate, a probe that never started at the run's bound, so at least
    that: a lower bound where any did not start, None where half did not)."""
    cells: dict[str, dict[str, dict[str, list[tuple[float, float, bool]]]]] = {}
    for run in runs:
        bound_s = float(run.get("max_wait_s") or 240.0)
        for site, _r, e, started, _drain in _probes(run):
            raw = e.get("raw_start_s") or 0.0
            if raw < 30.0:
                continue
            cells.setdefault(background_of(run), {}).setdefault(site, {}).setdefault(
                horizon_of(raw), []).append((e["start_s"] / raw, (
                    bound_s if started is None else started) / raw, started is None))
    return {bg: {site: {h: {"probes": len(v), "not_started": sum(c for *_, c in v),
                            "calibrated_ratio": median([c for c, _, _ in v]),
                            "started_ratio_at_least": None if 2 * sum(
                                c for *_, c in v) >= len(v) else median([a for _, a, _ in v])}
                        for h, v in sorted(hs.items(), key=lambda kv: float(
                            kv[0].split("-")[0].split(" ")[0]))}
                 for site, hs in sorted(sites.items())} for bg, sites in cells.items()}


def _regrets_and_picks(run: dict) -> list[tuple[float, str]]:
    pick, out = engine(), []
    for r in scored_rounds(run):
        comp, chosen = r["completion_s"], pick(r["estimate"])
        best = min(comp.values())
        out.append((comp.get(chosen, max(comp.values())) - best, chosen))
    return out


def score(runs: list[dict], changes: dict[str, Change] = CHANGES) -> dict[str, Any]:
    """Per background, change and group (`GROUPS`): the mean of run means against the
    engine's, the rounds moved, won and lost, and the site pairs moved between."""
    out: dict[str, Any] = {}
    for run in runs:
        base_run = ENGINE(run)
        base = _regrets_and_picks(base_run)
        bg = out.setdefault(background_of(run), {})
        for name, change in {"engine": None, **changes}.items():
            got = base if change is None else _regrets_and_picks(change(base_run))
            for group in groups_of(run):
                cell = bg.setdefault(name, {}).setdefault(group, {
                    "runs": 0, "run_means": [], "won": 0, "lost": 0, "won_s": 0.0,
                    "lost_s": 0.0, "moves": Counter()})
                cell["runs"] += 1
                cell["run_means"].append(mean([g for g, _ in got]) or 0.0)
                for (was, a), (now, b) in zip(base, got, strict=True):
                    if a == b:
                        continue
                    verdict = "won" if now < was else "lost" if now > was else "tied"
                    cell["moves"][f"{a}->{b} {verdict}"] += 1
                    if now < was:
                        cell["won"] += 1
                        cell["won_s"] += was - now
                    elif now > was:
                        cell["lost"] += 1
                        cell["lost_s"] += now - was
    for bg in out.values():
        for cells in bg.values():
            for cell in cells.values():
                cell["mean_of_run_means_s"] = mean(cell.pop("run_means"))
                cell["moves"] = dict(sorted(cell["moves"].items()))
    return out


def wins_everywhere(scored: dict[str, Any], name: str) -> bool:
    """Whether `name` lowers the engine's mean of run means on both halves of every
    background and raises it on no group."""
    lowered = False
    for bg in scored.values():
        for group, cell in bg[name].items():
            delta = cell["mean_of_run_means_s"] - bg["engine"][group]["mean_of_run_means_s"]
            if delta > 1e-9 or (group != GROUPS[2] and delta > -1e-9):
                return False
            lowered = True
    return lowered


def summarize(results: Path, changes: dict[str, Change] = CHANGES) -> dict[str, Any]:
    runs = [run for path in sorted(results.glob("placement-*seed*.json"))
            if "per_round" in (run := json.loads(path.read_text())) and scored_rounds(run)]
    scored = score(runs, changes)
    return {"runs": Counter(background_of(r) for r in runs), "where_over": where_over(runs),
            "ratio_by_horizon": ratio_by_horizon(runs),
            "changes": scored,
            "adopted": [n for n in changes if wins_everywhere(scored, n)]}


def table(data: dict[str, Any]) -> str:
    over = [(bg, site, cls, c["probes"], c.get("queue empty", 0),
             c.get("recent bound below", 0), c.get("drain below half", 0))
            for bg, sites in data["where_over"].items() for site, cells in sites.items()
            for cls, c in sorted(cells.items())]
    horizons = [(bg, site, h, c["probes"], c["not_started"], f"{c['calibrated_ratio']:.3f}",
                 "-" if c["started_ratio_at_least"] is None
                 else f"{c['started_ratio_at_least']:.3f}")
                for bg, sites in data["ratio_by_horizon"].items()
                for site, hs in sites.items() for h, c in hs.items()]
    rows = []
    for bg, changes in data["changes"].items():
        for name, cells in changes.items():
            for group in GROUPS:
                if (c := cells.get(group)) is None:
                    continue
                rows.append((bg, name, group, c["runs"], f"{c['mean_of_run_means_s']:.2f}",
                             f"{c['won']} ({c['won_s']:.0f} s)",
                             f"{c['lost']} ({c['lost_s']:.0f} s)",
                             ", ".join(f"{k} {v}" for k, v in c["moves"].items()) or "-"))
    return ("## where the calibrated start was far off\n\n" + markdown_table(
        ["background", "site", "class", "probes", "queue empty", "recent bound below start",
         "drain below half the start"], over)
        + "\n## the calibration's ratio against the probes', by the scheduler's estimate\n\n"
        + markdown_table(["background", "site", "estimate", "probes", "not started",
                          "calibrated ratio (median)", "started ratio (median, at least)"],
                         horizons)
        + "\n## caps on the calibrated start, replayed\n\n" + markdown_table(
            ["background", "change", "group", "runs", "mean of run means s",
             "rounds won", "rounds lost", "moves"], rows)
        + f"\nAdopted (lower on both halves of both backgrounds, higher nowhere): "
        f"{', '.join(data['adopted']) or 'none'}.\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    add_results_arguments(p, half=False)
    args = p.parse_args(argv)
    data = summarize(Path(args.results))
    emit("overpredict_replay", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
