"""Why diamond missed: every round of kept placement runs where diamond's site was not the
fastest, its choice explained from what the run recorded (issue 15).

For each such round: the site chosen and the fastest one, each one's predicted start, 90%
bound and finish beside its recorded start and completion, the engine's own reason the
fastest lost (`placement_rank._lost_because` on the recorded estimates: a later finish, or a
finish within noise with a less sure start), and which input was wrong:

- `tie: surer bound`: the fastest was predicted to finish first, within noise of the
  chosen one, and lost on its wider 90% bound; `(recent waits)` where that bound was
  above its raw plan's start, so set by the site's recent waits (`calibration.site_waits`),
  not by its plan;
- `chosen too soon` / `fastest too late`: a predicted start more than TOLERANCE_S off the
  recorded one (a probe that never started counts as starting at the run's bound), put down
  to the estimate's source: `queue view` (it was to start now: start and bound 0, or a
  walltime plan of 0 where the start came later), `walltime plan` also where a start too
  soon was too soon before any calibration (the raw plan already was),
  `own jobs` (moved by the user's own recent jobs, where the start before that correction
  was right), `borrowed ratios` (other sites'),
  `walltime plan` (no calibration: the plan of the scheduler's limits), else
  `calibration ratios` (the calibrated plan);
- `runtime gap`: the two sites' predicted runtimes (finish less start) apart by more than
  TOLERANCE_S from how far apart they ran (speed factors, or the runtime prior before the
  user's jobs ended; a prior off by the same factor on every site moves no choice).

    python -m benchmarks.misses --runs results/placement-depth_misleads-seed112.json ...
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from diamond_jupyter.placement_rank import _lost_because

from .common import emit, markdown_table, parser
from .decision_replay import NOW, scored_rounds, verdicts

TOLERANCE_S = 10.0  # a predicted start this far from the recorded one is wrong
AT_ONCE_S = 5.0  # a chosen site predicted to start within this ...
WAITED_S = 30.0  # ... whose probe started after this (or never): its recorded view is shown
VIEW_AHEAD = 10  # waiting jobs shown of such a view (the first in the view's order)


def _source(e: dict[str, Any], seen: float) -> str:
    """What set the start `e` predicted, which the probe's start `seen` shows was wrong."""
    if e.get("start_s") == 0 and e.get("bound_s") == 0:
        return "queue view"
    raw = e.get("raw_start_s")
    if raw is not None and e["start_s"] < seen and raw + TOLERANCE_S < seen:
        # too soon before any calibration: the plan of the view with the scheduler's own
        # limits already was (session 31: beta's HPC2N replay, 22 of 47 rounds lost)
        return "queue view" if raw == 0 else "walltime plan"
    model = e.get("model_start_s")  # before the own jobs' correction, where recorded
    if (e.get("own_wait_ratio") is not None or e.get("own_shift_s") is not None) and \
            (model is None or abs(model - seen) <= TOLERANCE_S):
        return "own jobs"  # the correction made the miss (seed 117's delta: it moved 1 s)
    if e.get("borrowed"):
        return "borrowed ratios"
    if e.get("source") == "simulation" or e.get("start_s") == e.get("raw_start_s"):
        return "walltime plan"
    return "calibration ratios"


def _started(r: dict[str, Any], site: str, bound_s: float) -> float:
    s = (r.get("started_s") or {}).get(site)
    return bound_s if s is None else s


def _ran(r: dict[str, Any], site: str) -> float | None:
    """How long the site's probe ran, where it started and ended within the run."""
    done, started = r["completion_s"].get(site), (r.get("started_s") or {}).get(site)
    if done is None or started is None or site in (r.get("censored") or ()):
        return None
    return done - started


def explain(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The rounds of `run` where diamond's recorded choice was not the fastest site, each
    with its reason and causes."""
    bound = run.get("max_wait_s") or 240.0
    out = []
    for r in scored_rounds(run):
        chosen, fastest = r["choice"].get("diamond"), r.get("fastest")
        lost = (r.get("additional_s") or {}).get("diamond")
        est = r["estimate"]
        if not lost or chosen not in est or fastest not in est:
            continue
        by_site = {v.site: v for v in verdicts(est)}
        why = _lost_because(by_site[fastest], by_site[chosen], NOW, "diamond")
        causes = []
        if why.startswith("same finish within noise") and \
                est[fastest]["finish_s"] < est[chosen]["finish_s"]:
            f = est[fastest]
            raised = f.get("bound_s") is not None and f["bound_s"] > max(
                f.get("raw_start_s") or 0.0, f["start_s"])
            causes.append("tie: surer bound" + (" (recent waits)" if raised else ""))
        for site, side in ((chosen, "chosen"), (fastest, "fastest")):
            e, seen = est[site], _started(r, site, bound)
            if side == "chosen" and e["start_s"] + TOLERANCE_S < seen:
                causes.append(f"chosen too soon: {_source(e, seen)}")
            if side == "fastest" and e["start_s"] > seen + TOLERANCE_S:
                causes.append(f"fastest too late: {_source(e, seen)}")
        ran = {s: _ran(r, s) for s in (chosen, fastest)}
        if None not in ran.values():
            gap = est[chosen]["finish_s"] - est[chosen]["start_s"] - (
                est[fastest]["finish_s"] - est[fastest]["start_s"])
            if abs(gap - (ran[chosen] - ran[fastest])) > TOLERANCE_S:  # type: ignore[operator]
                causes.append(f"runtime gap: {gap:+.1f} s predicted, "
                              f"{ran[chosen] - ran[fastest]:+.1f} s ran")  # type: ignore[operator]
        out.append({"background": "real logs" if run.get("traces") else
                    run.get("profile") or "?", "seed": run.get("seed"),
                    "round": r.get("round"), "chosen": chosen, "fastest": fastest,
                    "lost_s": lost, "why": why,
                    "chosen_estimate": est[chosen], "fastest_estimate": est[fastest],
                    "chosen_started_s": (r.get("started_s") or {}).get(chosen),
                    "fastest_started_s": (r.get("started_s") or {}).get(fastest),
                    "causes": causes, "view": view_at_fault(r, chosen, bound)})
    return out


def view_at_fault(r: dict[str, Any], site: str, bound_s: float) -> dict[str, Any] | None:
    """What round `r`'s recorded view of `site` held (`placement.view_record`), where the
    engine planned its probe to start within AT_ONCE_S and it started after WAITED_S: its
    running own jobs, the other running jobs counted, the first VIEW_AHEAD waiting jobs
    (the view's order, which placement reads as priority), and the nodes placement did not
    use (a `*` on one of alpha's four left seed 123's whole-machine jobs blocking nobody:
    `tests/test_view_fault`). None: not such a round, or a run that kept no view."""
    e, view = r["estimate"].get(site), (r.get("view") or {}).get(site)
    if e is None or view is None or e.get("start_s") is None or e["start_s"] > AT_ONCE_S or \
            _started(r, site, bound_s) <= WAITED_S:
        return None
    running, pending = view["running"], view["pending"]
    own = [j for j in running if j["user"] == "own"]
    return {"own_running": own, "others_running": len(running) - len(own),
            "ended_dropped": [j["id"] for j in running if j.get("ended")],
            "waiting": len(pending), "waiting_ahead": pending[:VIEW_AHEAD],
            "unusable_nodes": [f"{n['name']} ({n['state']})" for n in view.get("nodes") or ()
                               if not n.get("usable", True)],
            "left_out": view.get("left_out") or {}}


def _view_text(v: dict[str, Any]) -> str:
    def job(j: dict[str, Any]) -> str:
        start = "-" if j.get("start_s") is None else f"{j['start_s']:.0f}"
        return (f"{j['id']} {j.get('user') or '?'} {j.get('nodes')}N/{j.get('cpus')}c"
                f"{'/' + str(j['gpus']) + 'g' if j.get('gpus') else ''} "
                f"{j.get('reason') or j['state']} start {start} limit {j.get('walltime_s')}")
    own = ", ".join(job(j) for j in v["own_running"]) or "none"
    ahead = "; ".join(job(j) for j in v["waiting_ahead"]) or "none"
    dropped = ", ".join(v["ended_dropped"]) or "none"
    unusable = ", ".join(v.get("unusable_nodes") or ()) or "none"
    return (f"own running: {own}; others running: {v['others_running']}; counted as ended: "
            f"{dropped}; nodes not used: {unusable}; waiting {v['waiting']}, first: {ahead}")


def cause_counts(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per cause (runtime gaps as one), the rounds it was found in and the seconds those
    rounds lost."""
    counts: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    for row in rows:
        for c in {c.split(":")[0] if c.startswith("runtime gap") else c for c in row["causes"]}:
            counts[c] += 1
            lost[c] += row["lost_s"]
    return {c: {"rounds": counts[c], "lost_s": round(lost[c], 1)} for c in sorted(counts)}


def table(rows: list[dict[str, Any]], counts: dict[str, dict[str, float]]) -> str:
    def est(e: dict[str, Any], started: float | None) -> str:
        b = "-" if e.get("bound_s") is None else f"{e['bound_s']:.1f}"
        s = "none" if started is None else f"{started:.1f}"
        return f"{e['start_s']:.1f} ({b}), started {s}"
    body = markdown_table(
        ["background", "seed", "round", "chosen: predicted start (bound), started", "fastest: same",
         "lost s", "engine's reason", "wrong inputs"],
        [(r["background"], r["seed"], r["round"], f"{r['chosen']}: " + est(r["chosen_estimate"],
                                                         r["chosen_started_s"]),
          f"{r['fastest']}: " + est(r["fastest_estimate"], r["fastest_started_s"]),
          f"{r['lost_s']:.1f}", r["why"], "; ".join(r["causes"]) or "none found")
         for r in rows])
    summary = markdown_table(["cause", "rounds", "s lost in them"],
                             [(c, v["rounds"], f"{v['lost_s']:.1f}") for c, v in counts.items()])
    views = "".join(f"- {r['background']} seed {r['seed']} round {r['round']}, {r['chosen']}: "
                    f"{_view_text(r['view'])}\n" for r in rows if r.get("view"))
    views = (f"\n## views of chosen sites planned to start within {AT_ONCE_S:g} s that waited "
             f"over {WAITED_S:g} s (start and limit in s from the decision)\n\n{views}"
             if views else "")
    return (f"## rounds diamond missed the fastest site\n\n{body}\n\n## per cause\n\n"
            f"{summary}\n{views}")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--runs", required=True, nargs="+", help="kept placement runs (JSON)")
    p.add_argument("--name", default="misses", help="the result's file name")
    args = p.parse_args(argv)
    rows = [row for path in args.runs for row in explain(json.loads(Path(path).read_text()))]
    counts = cause_counts(rows)
    data = {"rounds": rows, "causes": counts}
    emit(args.name, args, data, table(rows, counts))
    return data


if __name__ == "__main__":
    main()
