"""Every kept run of a seeded benchmark, by background, judged against its targets.

Reads the JSON files the benchmarks wrote in benchmarks/results (no test bed, no new runs)
and reports every seed of every background, none dropped.

`placement` (each `placement-*.json` of `python -m benchmarks.placement`):
- diamond's median, mean and p90 regret (extra completion time over the fastest site);
- whether its mean is below every baseline's (fixed, fewest_pending, random and each site
  as a fixed home, so the best home in hindsight too): a tie is not "below", and the
  baselines it does not beat are named;
- the average fixed home's median over diamond's (1 s floor; target at least 10x);
- diamond's mean over hedging's (1 s floor; target at least 2x);
- censored probes and rounds where every site was censored (not scored), apart.
Runs written before the benchmark scored fixed homes or a real hedge lack those figures;
they are listed with "-" there and never count as meeting a target.

`workflow` (each `workflow-*.json` of `python -m benchmarks.workflow` with at least two
rounds): makespan medians per mode, after-upstream over queue-ahead of the medians, of the
means and per round (target at least 1.5x), and a gang's wasted node-seconds (target 0).

    python -m benchmarks.seeds placement|workflow [--json] [--results DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .common import RESULTS, emit, markdown_table, mean, ratio
from .workflow import NO_QUEUE_S, ceiling, queue_wait

FLOOR_S = 1.0  # as benchmarks.placement: the schedulers' start granularity
BASELINES = ("fixed", "fewest_pending", "random")
MEDIAN_TARGET = 10.0
HEDGE_TARGET = 2.0
QUEUE_AHEAD_TARGET = 1.5


def background(run: dict[str, Any]) -> str:
    """The background's name: `LOG@site+...` for trace replays, else the load profile, with
    the sites it loaded when the run recorded them (`depth_misleads` loads the Grid Engine
    site too since it joined the profile; older runs left it idle)."""
    if traces := run.get("traces"):
        return _trace_names(traces)
    loaded = run.get("loaded_sites")
    return (run.get("profile") or "unknown") + (f" ({'+'.join(loaded)})" if loaded else "")


def _mean(run: dict[str, Any], key: str) -> float | None:
    v = run.get("policies", {}).get(key) or run.get("homes", {}).get(key.removeprefix("home:"))
    return None if v is None else v.get("mean_s")


def judge_placement(run: dict[str, Any]) -> dict[str, Any]:
    """One run's figures and its verdict on each target (None: the run cannot tell)."""
    pol, homes = run.get("policies", {}), run.get("homes") or {}
    d = pol.get("diamond", {})
    hedge = next((v for k, v in pol.items() if k.startswith("hedge")), None)
    baselines = {b: pol[b]["mean_s"] for b in BASELINES if b in pol}
    baselines |= {f"home:{s}": h["mean_s"] for s, h in homes.items()}
    not_beaten = sorted(b for b, m in baselines.items()
                        if m is not None and d.get("mean_s") is not None and d["mean_s"] >= m)
    home_medians = [h["median_s"] for h in homes.values() if h.get("median_s") is not None]
    avg_home = mean(home_medians) if home_medians else None
    median_ratio = ratio(avg_home, d.get("median_s"), FLOOR_S)
    hedge_ratio = ratio(d.get("mean_s"), hedge and hedge.get("mean_s"), FLOOR_S)
    return {
        "background": background(run), "seed": run.get("seed"), "rounds": run.get("rounds"),
        "scored_rounds": d.get("n"),
        "diamond_median_s": d.get("median_s"), "diamond_mean_s": d.get("mean_s"),
        "diamond_p90_s": d.get("p90_s"),
        "best_home_in_hindsight": run.get("best_home_in_hindsight"),
        "best_home_mean_s": _mean(run, f"home:{run['best_home_in_hindsight']}")
        if run.get("best_home_in_hindsight") else None,
        "hedge_mean_s": hedge and hedge.get("mean_s"),
        # older runs with a hedge made a real `submit --hedge` beside the matched probes
        "hedge_mode": run.get("hedge_mode") or ("real" if hedge else None),
        "avg_home_median_over_diamond": median_ratio,
        "diamond_mean_over_hedge": hedge_ratio,
        "baselines_not_beaten": not_beaten,
        "censored_probes": run.get("censored"),
        "rounds_all_censored": run.get("rounds_all_censored"),
        "meets": {
            "mean_below_every_baseline": (not not_beaten) if homes and d else None,
            "median_10x_below_avg_home": None if median_ratio is None
            else median_ratio >= MEDIAN_TARGET,
            "hedge_2x_below_diamond": None if hedge_ratio is None or "homes" not in run
            else hedge_ratio >= HEDGE_TARGET,
        },
    }


def _trace_names(traces: list[dict[str, Any]]) -> str:
    """`LOG@site+...`: each replayed log by its short name (not its path) and its site."""
    return "+".join(f"{t['log'].split('-')[0]}@{t.get('site', '?')}" for t in traces)


def _workflow_background(run: dict[str, Any]) -> str:
    """The load profile, or `LOG@site` for a log replayed."""
    traces = [t for t in run.get("trace") or [] if isinstance(t, dict) and t.get("log")]
    # one replay per round in a matched run: each log and site named once
    once = list({(t["log"], t.get("site")): t for t in traces}.values())
    return _trace_names(once) if once else str(run.get("background") or "none")


def judge_workflow(run: dict[str, Any]) -> dict[str, Any]:
    """One workflow run's makespans, its queue-ahead ratios and gang waste, and verdicts."""
    gang = run.get("gang") or {}
    waste = gang.get("gang", {}).get("waste_node_s")
    med_ratio = run.get("median_ratio_after_upstream")
    after = [x for x in run.get("runs") or [] if x.get("mode") == "after_upstream"]
    waits = {x["round"]: queue_wait(x.get("steps") or {}) for x in after}
    ceilings = [ceiling(x) for x in sorted(after, key=lambda x: x["round"])]
    return {
        "background": _workflow_background(run), "seed": run.get("seed"),
        "design": (run.get("params") or {}).get("design", "back to back"),
        "no_queue_rounds": sorted(r for r, w in waits.items() if w is not None
                                  and w < NO_QUEUE_S),
        "rounds": run.get("rounds"), "median_makespan_s": run.get("median_makespan_s"),
        "ratio_medians": med_ratio, "ratio_means": run.get("mean_ratio_after_upstream"),
        "round_ratios": run.get("round_ratios_after_upstream") or [],
        "round_ceilings": ceilings,
        "failed_runs": len(run.get("failed_runs") or []),
        "gang_waste_node_s": waste,
        "naive_waste_node_s": gang.get("naive", {}).get("waste_node_s"),
        "meets": {
            "queue_ahead_1_5x": None if med_ratio is None else med_ratio >= QUEUE_AHEAD_TARGET,
            "gang_wastes_nothing": None if waste is None else waste == 0,
        },
    }


def collect(results: Path, kind: str) -> list[dict[str, Any]]:
    """Every kept run of the kind, judged, ordered by background then seed."""
    rows = []
    for path in sorted(results.glob(f"{kind}-*.json")):
        run = json.loads(path.read_text())
        if kind == "placement" and "policies" in run:
            rows.append({"file": path.name, **judge_placement(run)})
        elif kind == "workflow" and "median_ratio_after_upstream" in run:
            rows.append({"file": path.name, **judge_workflow(run)})  # older quick runs lack it
    return sorted(rows, key=lambda r: (r["background"], r["seed"] or 0, r["file"]))


def _verdict(v: bool | None) -> str:
    return "-" if v is None else ("yes" if v else "no")


def placement_table(rows: list[dict[str, Any]]) -> str:
    return "## placement: every kept run, by background\n\n" + markdown_table(
        ["background", "seed", "rounds scored", "diamond median / mean / p90 s",
         "best home (mean s)", "hedge mean s", "avg home / diamond (medians)",
         "diamond / hedge (means)", "not beaten by diamond's mean", "censored probes",
         "all-censored rounds", "mean below all", "median >= 10x", "hedge >= 2x"],
        [(r["background"], r["seed"], r["scored_rounds"],
          " / ".join("-" if r[k] is None else f"{r[k]:.1f}"
                     for k in ("diamond_median_s", "diamond_mean_s", "diamond_p90_s")),
          "-" if r["best_home_in_hindsight"] is None
          else f"{r['best_home_in_hindsight']} ({r['best_home_mean_s']:.1f})",
          "-" if r["hedge_mean_s"] is None else f"{r['hedge_mean_s']:.3f} ({r['hedge_mode']})",
          r["avg_home_median_over_diamond"], r["diamond_mean_over_hedge"],
          ", ".join(r["baselines_not_beaten"]) or "none", r["censored_probes"],
          r["rounds_all_censored"], *(_verdict(v) for v in r["meets"].values()))
         for r in rows]) + (
        "\nA tie with a baseline is not below it. \"-\": the run was written before the "
        "benchmark scored fixed homes or a real hedge, so it cannot tell. Hedge mode: "
        "\"real\", a real `submit --hedge 2` beside the matched probes (its copies load the "
        "sites diamond chose); \"matched\", the first of diamond's two best sites' own "
        "probes to start (see `benchmarks/placement.py`).\n")


def workflow_table(rows: list[dict[str, Any]]) -> str:
    return "## workflow: every kept run, by background\n\n" + markdown_table(
        ["background", "seed", "design", "rounds",
         "makespan medians s (queue-ahead / after upstream / fixed home)",
         "after upstream / queue-ahead: medians, means", "per round",
         "per round, at most",
         "rounds after upstream met no queue", "failed runs", "gang waste node-s (naive)",
         "queue-ahead >= 1.5x", "gang wastes 0"],
        [(r["background"], r["seed"], r["design"], r["rounds"],
          " / ".join("-" if (r["median_makespan_s"] or {}).get(m) is None
                     else f"{r['median_makespan_s'][m]:.1f}"
                     for m in ("queue_ahead", "after_upstream", "fixed_home")),
          f"{r['ratio_medians'] or 0:.2f}, {r['ratio_means'] or 0:.2f}",
          ", ".join("-" if x is None else f"{x:.2f}" for x in r["round_ratios"]),
          ", ".join("-" if x is None else f"{x:.2f}" for x in r["round_ceilings"]) or "-",
          ", ".join(map(str, r["no_queue_rounds"])) or "none", r["failed_runs"],
          "-" if r["gang_waste_node_s"] is None
          else f"{r['gang_waste_node_s']:.2f} ({r['naive_waste_node_s']:.2f})",
          *(_verdict(v) for v in r["meets"].values()))
         for r in rows]) + (
        "\n\"-\": not measured in that run (`--no-gang`). Design: \"matched\", every mode of "
        "a round met the same background window afresh; \"back to back\", the modes of a round "
        "ran one after another on one running background. No queue: the after-upstream run's "
        f"steps waited under {NO_QUEUE_S:.0f} s in all (rounds counted from 0), so queue-ahead "
        "had nothing to gain. At most: the after-upstream makespan over that makespan less "
        "what queue-ahead could have hidden of its waits (each step's queue wait, up to the "
        "time its upstream ended), the best ratio that round's queues allowed had queue-ahead "
        "met them too.\n")


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=("placement", "workflow"), help="which benchmark's runs")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--results", default=str(RESULTS), help="where the runs' JSON files are")
    p.add_argument("--out", default=str(RESULTS), help="where to write KIND_seeds.*")
    p.add_argument("--tag", default="")
    args = p.parse_args(argv)
    rows = collect(Path(args.results), args.kind)
    md = placement_table(rows) if args.kind == "placement" else workflow_table(rows)
    data = {"kind": args.kind, "runs": rows, "floor_s": FLOOR_S,
            "targets": {"median_ratio": MEDIAN_TARGET, "hedge_ratio": HEDGE_TARGET,
                        "queue_ahead_ratio": QUEUE_AHEAD_TARGET}}
    emit(f"{args.kind}_seeds", args, data, md)
    return data


if __name__ == "__main__":
    main()
