"""Every placement run kept in benchmarks/results, by background, against the targets.

Reads each `placement-*.json` that `python -m benchmarks.placement` wrote (no test bed, no
new runs) and reports every seed of every background, none dropped:
- diamond's median, mean and p90 regret (extra completion time over the fastest site);
- whether its mean is below every baseline's (fixed, fewest_pending, random and each site
  as a fixed home, so the best home in hindsight too): a tie is not "below", and the
  baselines it does not beat are named;
- the average fixed home's median over diamond's (1 s floor; target at least 10x);
- diamond's mean over hedging's (1 s floor; target at least 2x);
- censored probes and rounds where every site was censored (not scored), apart.
Runs written before the benchmark scored fixed homes or a real hedge lack those figures;
they are listed with "-" there and never count as meeting a target.

    python -m benchmarks.placement_seeds [--json] [--results DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .common import RESULTS, emit, markdown_table, mean, ratio

FLOOR_S = 1.0  # as benchmarks.placement: the schedulers' start granularity
BASELINES = ("fixed", "fewest_pending", "random")
MEDIAN_TARGET = 10.0
HEDGE_TARGET = 2.0


def background(run: dict[str, Any]) -> str:
    """The background's name: `LOG@site+...` for trace replays, else the load profile."""
    traces = run.get("traces") or []
    if traces:
        return "+".join(f"{t['log'].split('-')[0]}@{t['site']}" for t in traces)
    return run.get("profile") or "unknown"


def _mean(run: dict[str, Any], key: str) -> float | None:
    v = run.get("policies", {}).get(key) or run.get("homes", {}).get(key.removeprefix("home:"))
    return None if v is None else v.get("mean_s")


def judge(run: dict[str, Any]) -> dict[str, Any]:
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


def collect(results: Path) -> list[dict[str, Any]]:
    """Every kept run, judged, ordered by background then seed."""
    rows = []
    for path in sorted(results.glob("placement-*.json")):
        run = json.loads(path.read_text())
        if "policies" not in run:  # not a run of benchmarks.placement
            continue
        rows.append({"file": path.name, **judge(run)})
    return sorted(rows, key=lambda r: (r["background"], r["seed"] or 0, r["file"]))


def _verdict(v: bool | None) -> str:
    return "-" if v is None else ("yes" if v else "no")


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--results", default=str(RESULTS), help="where the runs' JSON files are")
    p.add_argument("--out", default=str(RESULTS), help="where to write placement_seeds.*")
    p.add_argument("--tag", default="")
    args = p.parse_args(argv)
    rows = collect(Path(args.results))
    md = "## placement: every kept run, by background\n\n" + markdown_table(
        ["background", "seed", "rounds scored", "diamond median / mean / p90 s",
         "best home (mean s)", "hedge mean s", "avg home / diamond (medians)",
         "diamond / hedge (means)", "not beaten by diamond's mean", "censored probes",
         "all-censored rounds", "mean below all", "median >= 10x", "hedge >= 2x"],
        [(r["background"], r["seed"], r["scored_rounds"],
          " / ".join("-" if r[k] is None else f"{r[k]:.1f}"
                     for k in ("diamond_median_s", "diamond_mean_s", "diamond_p90_s")),
          "-" if r["best_home_in_hindsight"] is None
          else f"{r['best_home_in_hindsight']} ({r['best_home_mean_s']:.1f})",
          r["hedge_mean_s"], r["avg_home_median_over_diamond"], r["diamond_mean_over_hedge"],
          ", ".join(r["baselines_not_beaten"]) or "none", r["censored_probes"],
          r["rounds_all_censored"], *(_verdict(v) for v in r["meets"].values()))
         for r in rows])
    md += ("\nA tie with a baseline is not below it. \"-\": the run was written before the "
           "benchmark scored fixed homes or a real hedge, so it cannot tell.\n")
    data = {"runs": rows, "floor_s": FLOOR_S,
            "targets": {"median_ratio": MEDIAN_TARGET, "hedge_ratio": HEDGE_TARGET}}
    args.config = None
    emit("placement_seeds", args, data, md)
    return data


if __name__ == "__main__":
    main()
