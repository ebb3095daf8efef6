"""The recorded workflow rounds a single home site won: where queue-ahead's extra seconds went
(offline: reads the JSON files `python -m benchmarks.workflow` wrote; no test bed, no runs).

Each matched round runs queue-ahead (`queue_ahead`: prep on alpha, train on gamma, analyse
`auto`) and `fixed_home` (every step on gamma, the input copied there first, counted) against
the same background. For every round both completed, and per round the home plan finished
sooner, the two makespans' parts side by side (`workflow_parts.run_parts`), plus:
- before the record: from the benchmark's call to `run_workflow` to the workflow's record
  (its `workflow.created` event), i.e. the check before any step runs (`check_steps_runnable`:
  every site a step may go to asked for its snapshot; the home plan asks gamma alone), read as
  prep's "submitting" phase less its `since_workflow_start.submit_began`;
- the copy: queue-ahead's transfer part (prep's features to gamma, train's model to analyse's
  site); the home plan's copy of the input is inside its "submit" part;
- end detection on the makespan: an upstream's end line to the engine's "done" (the last
  step's is not on the makespan: a makespan ends at the last step's own end line); and, per
  site whose detection was ever slow, its median per seed.

Replay: queue-ahead's makespan had its check waited at most CHECK_WAIT_S for each site's
snapshot and first discovery (the engine since 1115799c): the seconds before the record past
CHECK_WAIT_S taken off, every later point moved earlier by as much, the queues each step met
taken as they were. That assumes the same queues that many seconds earlier: a shift, not a
replay of the background. Seeds 61 and 62 (round 0), where the home plan queued 12.6 and
9.0 s on gamma, may well have met part of that queue had they come sooner.

    python -m benchmarks.workflow_home [FILE.json ...] [--json] [--out DIR] [--tag T]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diamond_jupyter.federation_workflow import CHECK_WAIT_S

from .common import markdown_table, median
from .seeds import _workflow_background
from .workflow import PIPELINE
from .workflow_parts import PARTS, end_detection, recorded_runs_main, run_parts

SLOW_DETECTION_S = 0.1  # a site whose steps' ends reach the engine later than this: polled


def before_record(run: dict[str, Any]) -> float | None:
    """Seconds from the call to `run_workflow` to the workflow's record (None: not recorded)."""
    first = (run.get("steps") or {}).get(PIPELINE[0]) or {}
    began = (first.get("phases") or {}).get("submitting")
    since = (first.get("since_workflow_start") or {}).get("submit_began")
    if began is None or since is None:
        return None
    return max(0.0, began - since)


def detect_on_path(parts: dict[str, Any]) -> float:
    """End detection on the makespan's path: the upstreams' (every edge's `detect`)."""
    return sum(e.get("detect", 0.0) for e in parts["edges"].values())


def compare(qa: dict[str, Any], home: dict[str, Any]) -> dict[str, Any] | None:
    """One round's two runs side by side (None unless both completed with every part)."""
    pq, ph = run_parts(qa), run_parts(home)
    if pq is None or ph is None:
        return None
    rec_q, rec_h = before_record(qa), before_record(home)
    saved = max(0.0, rec_q - CHECK_WAIT_S) if rec_q is not None else 0.0
    return {"round": qa.get("round"), "sites": qa.get("sites"),
            "queue_ahead_s": pq["makespan_s"], "fixed_home_s": ph["makespan_s"],
            "home_won": ph["makespan_s"] < pq["makespan_s"],
            "extra_s": pq["makespan_s"] - ph["makespan_s"],
            "parts_extra_s": {k: pq["parts"][k] - ph["parts"][k] for k in PARTS},
            "runs_extra_s": pq["run_s"] - ph["run_s"],
            "before_record_s": {"queue_ahead": rec_q, "fixed_home": rec_h},
            "detect_on_path_s": {"queue_ahead": detect_on_path(pq),
                                 "fixed_home": detect_on_path(ph)},
            "replay_queue_ahead_s": pq["makespan_s"] - saved}


def rounds_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every round of a recorded file that has both a queue-ahead and a home run, compared."""
    by_round: dict[Any, dict[str, dict]] = {}
    for r in data.get("runs") or []:
        by_round.setdefault(r.get("round"), {})[r.get("mode")] = r
    out = []
    for _, modes in sorted(by_round.items(), key=lambda kv: kv[0] or 0):
        if "queue_ahead" in modes and "fixed_home" in modes:
            c = compare(modes["queue_ahead"], modes["fixed_home"])
            if c is not None:
                out.append(c)
    return out


def slow_detection_by_seed(datas: list[dict[str, Any]]) -> dict[str, list[tuple[Any, float]]]:
    """Per site whose steps' end detection took over SLOW_DETECTION_S (median) in some seed,
    every seed's median, in seed order: when that site's ends began to be pushed."""
    per: dict[str, dict[Any, list[float]]] = {}
    for data in datas:
        for r in data.get("runs") or []:
            for site, s in end_detection(r):
                per.setdefault(site, {}).setdefault(data.get("seed"), []).append(s)
    out = {}
    for site, seeds in sorted(per.items()):
        meds = sorted(((seed, median(v) or 0.0) for seed, v in seeds.items()),
                      key=lambda x: x[0] or 0)
        if any(m > SLOW_DETECTION_S for _, m in meds):
            out[site] = meds
    return out


def seed_ratios(name: str, data: dict[str, Any], rounds: list[dict[str, Any]]
                ) -> dict[str, Any]:
    """fixed_home / queue_ahead of the medians over a seed's compared rounds, measured and
    with queue-ahead replayed (see module)."""
    home = median([c["fixed_home_s"] for c in rounds])
    measured = median([c["queue_ahead_s"] for c in rounds])
    replayed = median([c["replay_queue_ahead_s"] for c in rounds])
    return {"file": name, "seed": data.get("seed"), "background": _workflow_background(data),
            "ratio": home / measured if home and measured else None,
            "ratio_replayed": home / replayed if home and replayed else None}


def analyse(files: list[Path]) -> dict[str, Any]:
    rounds, datas, seeds = [], [], []
    for f in files:
        data = json.loads(f.read_text())
        datas.append(data)
        mine = rounds_of(data)
        for c in mine:
            rounds.append({"file": f.name, "seed": data.get("seed"),
                           "background": _workflow_background(data), **c})
        if any(c["home_won"] for c in mine):
            seeds.append(seed_ratios(f.name, data, mine))
    won = [c for c in rounds if c["home_won"]]
    still = [c for c in won if c["replay_queue_ahead_s"] > c["fixed_home_s"]]
    slow_record = [c for c in won
                   if (c["before_record_s"]["queue_ahead"] or 0.0) > CHECK_WAIT_S]
    return {"rounds": len(rounds), "home_won": len(won),
            "home_won_replayed": len(still), "check_wait_s": CHECK_WAIT_S,
            "won_with_record_past_wait": len(slow_record),
            "won_median_extra_s": median([c["extra_s"] for c in won]),
            "won_median_parts_extra_s": {
                k: median([c["parts_extra_s"][k] for c in won]) for k in PARTS},
            "won_median_before_record_s": {
                m: median([c["before_record_s"][m] for c in won
                           if c["before_record_s"][m] is not None])
                for m in ("queue_ahead", "fixed_home")},
            "won_on_beta_rest": sum(1 for c in won if "beta-rest" in (c["sites"] or [])),
            "slow_detection_by_seed": slow_detection_by_seed(datas),
            "seeds": sorted(seeds, key=lambda x: (x["background"], x["seed"] or 0)),
            "won": won}


def markdown(r: dict[str, Any]) -> str:
    def f(x: float | None, nd: int = 1) -> str:
        return "-" if x is None else f"{x:.{nd}f}"
    rows = [(c["background"], c["seed"], c["round"], " ".join(c["sites"] or []),
             f(c["queue_ahead_s"]), f(c["fixed_home_s"]), f(c["extra_s"]),
             f"{f(c['before_record_s']['queue_ahead'])} / "
             f"{f(c['before_record_s']['fixed_home'])}",
             " / ".join(f(c["parts_extra_s"][k]) for k in PARTS),
             f(c["detect_on_path_s"]["queue_ahead"], 2), f(c["replay_queue_ahead_s"]))
            for c in r["won"]]
    out = ("## workflow: the rounds a single home site won\n\n"
           f"{r['home_won']} of {r['rounds']} recorded matched rounds: fixed_home's makespan "
           "under queue-ahead's. Extra parts: queue-ahead's less the home plan's, in order "
           + " / ".join(PARTS) + " (s). Before the record: queue-ahead / home (s). Replay: "
           f"queue-ahead with its check waiting at most {r['check_wait_s']:g} s per site.\n\n"
           + markdown_table(["background", "seed", "round", "queue-ahead sites",
                             "queue-ahead s", "fixed_home s", "extra s",
                             "before the record s", "extra parts s",
                             "end detection on the path s", "replay s"], rows))
    m = r["won_median_parts_extra_s"]
    out += ("\nMedians over those rounds: extra " + f(r["won_median_extra_s"]) + " s; parts "
            + " / ".join(f(m[k]) for k in PARTS) + " s; before the record "
            + f(r["won_median_before_record_s"]["queue_ahead"]) + " s against "
            + f(r["won_median_before_record_s"]["fixed_home"]) + " s. "
            + f"{r['won_with_record_past_wait']} of them spent more than "
            f"{r['check_wait_s']:g} s before the record; replayed, the home plan still wins "
            f"{r['home_won_replayed']}. Rounds with a step on beta-rest: "
            f"{r['won_on_beta_rest']}.\n")
    changed = [x for x in r["seeds"] if x["ratio"] is not None and x["ratio_replayed"]
               is not None and abs(x["ratio"] - x["ratio_replayed"]) >= 0.005]
    out += ("\nfixed_home / queue_ahead of the medians, measured -> replayed, where the replay "
            "moves it: " + (", ".join(f"seed {x['seed']} {x['ratio']:.2f} -> "
                                      f"{x['ratio_replayed']:.2f}" for x in changed)
                            or "none") + ".\n")
    for site, meds in r["slow_detection_by_seed"].items():
        out += (f"\nEnd detection on {site} by seed (median s): "
                + ", ".join(f"{seed}: {m:.2f}" for seed, m in meds) + ".\n")
    return out


def main(argv: list[str] | None = None) -> dict:
    return recorded_runs_main("workflow_home", __doc__.splitlines()[0], analyse, markdown, argv)


if __name__ == "__main__":
    main()
