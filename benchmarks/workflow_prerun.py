"""What each recorded workflow run waited before the workflow was recorded, and the ratio
without that wait (issue 17; offline: reads the JSON files `python -m benchmarks.workflow`
wrote; no test bed, no new runs).

`workflow run` checks every step against its sites' snapshots and capabilities before any
step is submitted (`Federation.check_steps_runnable`); the workflow is recorded after it.
The runs since session 36 keep, per step, when its first submit began in seconds after the
workflow was recorded (`since_workflow_start.submit_began`) beside the same moment in seconds
after the benchmark asked for the run (`phases.submitting`): their difference is the wait
before the record ("pre-run", s). A warm run waited 0.0-0.2 s. The benchmark's first run (a
new Federation: no site discovered yet) waited 4.6-12.3 s; some later queue-ahead runs, about
600 s on (discovery's TTL), 1.8-7.5 s: most likely the capabilities of a site whose discovery had
outlived its TTL, asked again and waited for (up to 10 s, `DISCOVERY_WAIT_S`; the store does
not say which part of the check took it). Since issue 17's change an expired discovery is used
at once and asked again behind (`tests/test_discovery_refresh_behind.py`); a site never
discovered is still waited for, so the first run's wait stays.

Per seed: the pre-run waits of its queue-ahead and after-upstream runs (by round), the ratio
after-upstream / queue-ahead of the medians as measured, and as it would have been with each
run's pre-run wait past its round's warm one (the least of the round's modes) taken off its
makespan: of every run but the benchmark's first (what the change removes), and of every run.
The queue each step met is taken as it was (a run started earlier meets the background
earlier; this is the shift alone, not a replay).

    python -m benchmarks.workflow_prerun [FILE.json ...] [--json] [--out DIR] [--tag T]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .common import markdown_table, median, ratio
from .workflow_parts import TARGET, recorded_runs_main

MODES = ("queue_ahead", "after_upstream")


def prerun_wait(run: dict[str, Any]) -> float | None:
    """Seconds from the benchmark's ask to the workflow's record (None for a run without
    the times: recorded before they were kept, or no step submitted)."""
    waits = []
    for st in (run.get("steps") or {}).values():
        began = (st.get("since_workflow_start") or {}).get("submit_began")
        at = (st.get("phases") or {}).get("submitting")
        if began is not None and at is not None:
            waits.append(at - began)
    return round(max(0.0, min(waits)), 2) if waits else None


def seed_prerun(data: dict[str, Any]) -> dict[str, Any] | None:
    """One seed's pre-run waits by mode and round, and its ratios measured and without the
    waits past each round's warm one (None for a seed whose runs lack the times)."""
    runs = data.get("runs") or []
    first = runs[0] if runs else None  # the runs are kept in the order they ran
    waits: dict[str, dict[int, float]] = {m: {} for m in MODES}
    spans: dict[str, dict[int, float]] = {m: {} for m in MODES}
    firsts: set[tuple[str, int]] = set()
    for run in runs:
        mode, wait = run.get("mode"), prerun_wait(run)
        if mode in MODES and wait is not None and run.get("makespan_s"):
            waits[mode][run["round"]] = wait
            spans[mode][run["round"]] = run["makespan_s"]
            if run is first:
                firsts.add((mode, run["round"]))
    if not waits["queue_ahead"] or not waits["after_upstream"]:
        return None
    shifted: dict[str, dict[str, list[float]]] = {"later": {m: [] for m in MODES},
                                                  "all": {m: [] for m in MODES}}
    for mode in MODES:
        for rnd, span in spans[mode].items():
            past_warm = waits[mode][rnd] - min(w[rnd] for w in waits.values() if rnd in w)
            shifted["all"][mode].append(span - past_warm)
            shifted["later"][mode].append(span - (0.0 if (mode, rnd) in firsts else past_warm))
    measured = {m: median(list(spans[m].values())) for m in MODES}
    without = {k: {m: median(v[m]) for m in MODES} for k, v in shifted.items()}
    return {"seed": data.get("seed"), "background": data.get("background"),
            "prerun_s": {m: [waits[m][r] for r in sorted(waits[m])] for m in MODES},
            "first_run": sorted(f"{m} round {r}" for m, r in firsts),
            "median_makespan_s": measured,
            "median_makespan_without_later_prerun_s": without["later"],
            "median_makespan_without_prerun_s": without["all"],
            "ratio": ratio(measured["after_upstream"], measured["queue_ahead"]),
            "ratio_without_later_prerun": ratio(without["later"]["after_upstream"],
                                                without["later"]["queue_ahead"]),
            "ratio_without_prerun": ratio(without["all"]["after_upstream"],
                                          without["all"]["queue_ahead"])}


def analyse(files: list[Path]) -> dict[str, Any]:
    seeds = [s for f in files if (s := seed_prerun(json.loads(f.read_text()))) is not None]
    return {"target": TARGET, "seeds": seeds,
            "met": sum((s["ratio"] or 0) >= TARGET for s in seeds),
            "met_without_later_prerun": sum((s["ratio_without_later_prerun"] or 0) >= TARGET
                                            for s in seeds),
            "met_without_prerun": sum((s["ratio_without_prerun"] or 0) >= TARGET
                                      for s in seeds)}


def markdown(r: dict[str, Any]) -> str:
    def f(x: float | None, nd: int = 1) -> str:
        return "-" if x is None else f"{x:.{nd}f}"

    rows = [(s["background"], s["seed"], ", ".join(f(w) for w in s["prerun_s"]["queue_ahead"]),
             ", ".join(f(w) for w in s["prerun_s"]["after_upstream"]),
             ", ".join(s["first_run"]) or "-", f(s["median_makespan_s"]["queue_ahead"]),
             f(s["ratio"], 2), f(s["ratio_without_later_prerun"], 2),
             f(s["ratio_without_prerun"], 2)) for s in r["seeds"]]
    return ("## workflow: the wait before the workflow was recorded (the check before any step)"
            "\n\n" + markdown_table(
                ("background", "seed", "queue-ahead pre-run s, by round",
                 "after-upstream pre-run s, by round", "the benchmark's first run",
                 "queue-ahead median makespan s", "ratio",
                 "ratio without the later runs' pre-run past the warm one",
                 "ratio without every run's"), rows)
            + f"\nMet ({r['target']}x): {r['met']} seeds as measured, "
              f"{r['met_without_later_prerun']} without the later runs' pre-run waits (what "
              f"an expired discovery used at once removes), {r['met_without_prerun']} without "
              "every run's (the queue taken as it was: a shift, not a replay).\n")


def main(argv: list[str] | None = None) -> dict:
    return recorded_runs_main("workflow_prerun", __doc__.splitlines()[0], analyse, markdown, argv)


if __name__ == "__main__":
    main()
