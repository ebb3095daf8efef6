"""What the replays of kept placement runs share (`rule_holdout`, `hedge_replay`,
`feedback_replay`): the runs split by background and by seed into a design half and a
held-out half, the best baseline of a run, rounds won and lost against a reference rule,
and each rule's difference from a reference with a paired bootstrap interval."""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .common import RESULTS, mean
from .decision_replay import BASELINE_SKIP

BOOTSTRAP_DRAWS = 2000
HALVES = ("design", "held out", "both")


def half_of(seed: int | None) -> str:
    """The half a run's seed falls in: fixed by parity before any result was read."""
    return "design" if seed is not None and seed % 2 == 0 else "held out"


def background_of(run: dict) -> str:
    return "real logs" if run.get("traces") else "depth_misleads"


def runs_by_half(results: Path, score: Callable[[dict], dict[str, Any] | None]
                 ) -> tuple[dict[tuple[str, str], list[dict[str, Any]]], list[str]]:
    """Every kept placement run with rounds under `results`, scored by `score`, grouped by
    (background, half); and the files of the runs `score` gave None (not scored)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    unscored: list[str] = []
    for path in sorted(results.glob("placement-*seed*.json")):
        run = json.loads(path.read_text())
        if "per_round" not in run:
            continue
        got = score(run)
        if got is None:
            unscored.append(path.name)
            continue
        groups.setdefault((background_of(run), half_of(run.get("seed"))), []).append(got)
    return groups, unscored


def best_baseline_mean(rounds: Sequence[dict]) -> float | None:
    """The least mean regret of a baseline (each fixed home, fewest_pending, random) over
    these rounds; None without one."""
    baselines: dict[str, list[float]] = {}
    for r in rounds:
        for k, v in (r.get("additional_s") or {}).items():
            if k not in BASELINE_SKIP and not k.startswith("diamond_") and v is not None:
                baselines.setdefault(k, []).append(v)
    return min((m for v in baselines.values() if (m := mean(v)) is not None), default=None)


def won_lost(pooled: Sequence[float], reference: Sequence[float]) -> tuple[int, int]:
    """Rounds whose regret is below / above the reference's in the same round."""
    return (sum(a < b - 1e-9 for a, b in zip(pooled, reference, strict=True)),
            sum(a > b + 1e-9 for a, b in zip(pooled, reference, strict=True)))


def runs_below_every_baseline(runs: Sequence[dict[str, Any]], run_means: Sequence[float]
                              ) -> int:
    """The runs whose mean regret is strictly below their best baseline's (the issue's mean
    target; `best_baseline_mean_s` of each run)."""
    return sum(1 for r, m in zip(runs, run_means, strict=True)
               if r["best_baseline_mean_s"] is not None and m < r["best_baseline_mean_s"])


def difference_from_engine(runs: list[dict[str, Any]], name: str, seed: int = 0,
                           reference: str = "engine") -> dict[str, float | None]:
    """The mean over runs of (the rule's run mean less the `reference` rule's, the engine's
    by default), with its 95% interval from a paired bootstrap over the runs (seeded: the
    same every time)."""
    d = [(mean(r["regret"][name]) or 0.0) - (mean(r["regret"][reference]) or 0.0)
         for r in runs]
    if not d:
        return {"mean_s": None, "low_s": None, "high_s": None}
    rng = random.Random(seed)
    draws = sorted(sum(d[rng.randrange(len(d))] for _ in d) / len(d)
                   for _ in range(BOOTSTRAP_DRAWS))
    return {"mean_s": mean(d), "low_s": draws[int(0.025 * BOOTSTRAP_DRAWS)],
            "high_s": draws[int(0.975 * BOOTSTRAP_DRAWS) - 1]}


def difference_rows(differences: dict[str, dict[str, dict[str, float | None]]]
                    ) -> list[tuple[str, str, str, str]]:
    """Table rows (group, rule, difference, 95% interval) of `difference_from_engine`'s
    answers by group and rule; those without runs left out."""
    return [(group, name, f"{d['mean_s']:+.2f}", f"{d['low_s']:+.2f} to {d['high_s']:+.2f}")
            for group, per in differences.items() for name, d in per.items()
            if d["mean_s"] is not None]


def add_results_arguments(p: argparse.ArgumentParser, *, half: bool = True) -> None:
    """--results (where the placement runs are) and, with `half`, --half."""
    p.add_argument("--results", default=str(RESULTS), help="where the placement runs are")
    if half:
        p.add_argument("--half", choices=HALVES, default="both",
                       help="report only this half (design: choose a rule without the other)")
