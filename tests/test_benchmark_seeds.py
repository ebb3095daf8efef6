"""The seed reports judge each kept benchmark run against its targets, ties included."""

from __future__ import annotations

import json

from benchmarks import seeds


def stats(median: float, mean: float, n: int = 10) -> dict:
    return {"median_s": median, "p90_s": mean * 2, "mean_s": mean, "best_choice_rounds": 0,
            "n": n}


def run(seed: int, diamond: tuple, hedge: tuple, homes: dict, **policies) -> dict:
    pol = {"fixed": stats(*homes["alpha"]), "fewest_pending": stats(30, 40),
           "random": stats(50, 60), "diamond": stats(*diamond), "hedge2": stats(*hedge)}
    pol |= {k: stats(*v) for k, v in policies.items()}
    return {"seed": seed, "rounds": 10, "policies": pol,
            "homes": {s: stats(*v) for s, v in homes.items()},
            "best_home_in_hindsight": min(homes, key=lambda s: homes[s][1]),
            "censored": 2, "rounds_all_censored": 1, "profile": None,
            "traces": [{"log": "KTH-SP2-1996", "site": "alpha"},
                       {"log": "LLNL-Thunder", "site": "gamma"}]}


def test_every_target_met_when_diamond_beats_everything():
    r = seeds.judge_placement(run(3, (0.5, 2.0), (0.0, 0.5),
                                  {"alpha": (100, 120), "gamma": (20, 9.0)}))
    assert r["background"] == "KTH@alpha+LLNL@gamma" and r["best_home_in_hindsight"] == "gamma"
    assert r["baselines_not_beaten"] == []
    # average home median 60 s over diamond's 0.5 s floored at 1 s; 2 s over hedge's 0.5->1 s
    assert r["avg_home_median_over_diamond"] == 60.0 and r["diamond_mean_over_hedge"] == 2.0
    assert r["meets"] == {"mean_below_every_baseline": True, "median_10x_below_avg_home": True,
                          "hedge_2x_below_diamond": True}
    assert (r["censored_probes"], r["rounds_all_censored"]) == (2, 1)


def test_a_tie_with_the_best_home_is_not_below_it():
    r = seeds.judge_placement(run(4, (0.0, 0.0), (0.0, 0.0),
                                  {"alpha": (200, 200), "gamma": (0.0, 0.0)},
                                  fewest_pending=(0.0, 0.0)))
    assert r["baselines_not_beaten"] == ["fewest_pending", "home:gamma"]
    assert r["meets"]["mean_below_every_baseline"] is False
    assert r["meets"]["median_10x_below_avg_home"] is True  # 100 s / floor 1 s
    assert r["meets"]["hedge_2x_below_diamond"] is False  # 0 / floor 1 s


def test_runs_from_before_homes_were_scored_cannot_meet_a_target(tmp_path):
    old = {"seed": 1, "rounds": 12, "profile": "depth_misleads", "censored": 10,
           "policies": {"fixed": stats(30, 40), "fewest_pending": stats(1, 5),
                        "random": stats(9, 9), "diamond": stats(0, 3)}}
    new = run(7, (1.0, 2.0), (0.0, 0.2), {"alpha": (100, 120), "gamma": (20, 30)})
    (tmp_path / "placement-seed1.json").write_text(json.dumps(old))
    (tmp_path / "placement-X-seed7.json").write_text(json.dumps(new))
    (tmp_path / "placement_seeds.json").write_text(json.dumps({"runs": []}))  # its own output
    (tmp_path / "placement-seed1.md").write_text("not json")
    data = seeds.main(["placement", "--results", str(tmp_path), "--out", str(tmp_path)])
    rows = data["runs"]
    assert [(r["background"], r["seed"]) for r in rows] == [
        ("KTH@alpha+LLNL@gamma", 7), ("depth_misleads", 1)]
    assert seeds.background({**old, "loaded_sites": ["alpha", "delta"]}) == \
        "depth_misleads (alpha+delta)"
    assert set(rows[1]["meets"].values()) == {None}
    assert rows[0]["meets"]["mean_below_every_baseline"] is True
    md = (tmp_path / "placement_seeds.md").read_text()
    assert "| depth_misleads | 1 | 10 |" in md and "| - | - | - |" in md


def workflow_run(seed: int, med_ratio: float, gang: dict | None) -> dict:
    return {"rounds": 3, "seed": seed, "background": "gpu_queue",
            "median_makespan_s": {"queue_ahead": 40.0, "after_upstream": 40.0 * med_ratio,
                                  "fixed_home": 50.0},
            "median_ratio_after_upstream": med_ratio, "mean_ratio_after_upstream": 1.1,
            "round_ratios_after_upstream": [med_ratio, None, 1.0], "failed_runs": [],
            "gang": gang}


def test_workflow_runs_judged_on_queue_ahead_and_gang_waste(tmp_path):
    runs = {"workflow-gpu_queue-seed12.json": workflow_run(12, 2.4, None),
            "workflow-gpu_queue-seed11.json": workflow_run(
                11, 1.2, {"naive": {"waste_node_s": 30.3}, "gang": {"waste_node_s": 0.34}}),
            "workflow-gpu_queue-seed13.json": workflow_run(
                13, 1.5, {"naive": {"waste_node_s": 12.0}, "gang": {"waste_node_s": 0}}),
            "workflow-quick.json": {"rounds": 1, "seed": 1, "speedup_vs_after_upstream": 1.0}}
    for name, run in runs.items():
        (tmp_path / name).write_text(json.dumps(run))
    data = seeds.main(["workflow", "--results", str(tmp_path), "--out", str(tmp_path)])
    got = {r["seed"]: r["meets"] for r in data["runs"]}
    assert got == {11: {"queue_ahead_1_5x": False, "gang_wastes_nothing": False},
                   12: {"queue_ahead_1_5x": True, "gang_wastes_nothing": None},
                   13: {"queue_ahead_1_5x": True, "gang_wastes_nothing": True}}
    md = (tmp_path / "workflow_seeds.md").read_text()
    assert ("| gpu_queue | 11 | back to back | 3 | 40.0 / 48.0 / 50.0 | 1.20, 1.10 | "
            "1.20, -, 1.00 | - | none | 0 |") in md  # no after-upstream runs kept: no ceiling
    assert "0.34 (30.30)" in md


def test_a_matched_workflow_run_lists_the_rounds_that_met_no_queue(tmp_path):
    """A round whose after-upstream run queued under NO_QUEUE_S in all is named, read from
    the steps' own times."""
    def steps(train_start: float) -> dict:
        return {"prep": {"submitted": 0.1, "started": 0.5, "ended": 30.5},
                "train": {"submitted": 31.0, "started": train_start, "ended": train_start + 10,
                          "phases": {"released": 31.4}},
                "analyse": {"submitted": train_start + 10.5, "started": train_start + 11,
                            "ended": train_start + 16}}
    run = workflow_run(21, 1.4, None) | {"params": {"design": "matched"}, "runs": [
        {"round": 0, "mode": "after_upstream", "steps": steps(32.0)},
        {"round": 1, "mode": "after_upstream", "steps": steps(56.0)}]}
    (tmp_path / "workflow-gpu_queue-matched-seed21.json").write_text(json.dumps(run))
    data = seeds.main(["workflow", "--results", str(tmp_path), "--out", str(tmp_path)])
    assert [(r["design"], r["no_queue_rounds"]) for r in data["runs"]] == [("matched", [0])]
    assert "| gpu_queue | 21 | matched | 3 |" in (tmp_path / "workflow_seeds.md").read_text()


def test_a_workflow_run_on_a_replayed_log_is_named_by_the_log_not_its_path(tmp_path):
    run = workflow_run(13, 1.1, None) | {
        "background": "/work/shared/traces/LLNL-Thunder-2007-1.1-cln.swf.gz",
        "trace": [{"site": "gamma", "log": "LLNL-Thunder-2007-1.1-cln"}]}
    (tmp_path / "workflow-trace_llnl-seed13.json").write_text(json.dumps(run))
    data = seeds.main(["workflow", "--results", str(tmp_path), "--out", str(tmp_path)])
    assert [r["background"] for r in data["runs"]] == ["LLNL@gamma"]
    matched = run | {"trace": [{"round": r, "site": "gamma", "log": "LLNL-Thunder-2007-1.1-cln"}
                               for r in range(3)]}  # a window per round, one log
    (tmp_path / "workflow-trace_llnl-seed13.json").write_text(json.dumps(matched))
    data = seeds.main(["workflow", "--results", str(tmp_path), "--out", str(tmp_path)])
    assert [r["background"] for r in data["runs"]] == ["LLNL@gamma"]


def test_a_matched_hedge_runs_the_copy_that_starts_first():
    """hedge2 from the matched probes: of diamond's two best sites the one whose probe
    started first runs, even if the other's would have ended sooner; a copy starting within
    CANCEL_S of it counts as a started loser; none started: censored at the bound."""
    from benchmarks.placement import CANCEL_S, _matched_hedge

    done = {"a": 50.0, "b": 30.0, "c": 10.0}
    h = _matched_hedge(["a", "b"], done, {"a": 5.0, "b": 6.0, "c": 1.0}, [], 240.0)
    assert h["winner"] == "a" and h["completion_s"] == 50.0 and not h["censored"]
    assert CANCEL_S >= 1.0 and h["losers_started"] == 1 and h["copies"] == 2
    h = _matched_hedge(["a", "b"], done, {"a": 5.0, "b": 20.0}, [], 240.0)
    assert h["losers_started"] == 0
    h = _matched_hedge(["a", "b"], {"a": 240.0, "b": 240.0}, {}, ["a", "b"], 240.0)
    assert h["censored"] and h["winner"] is None and h["completion_s"] == 240.0
    # it started but did not end within the bound: censored at the bound
    h = _matched_hedge(["a", "b"], {"a": 240.0, "b": 240.0}, {"a": 200.0}, ["a", "b"], 240.0)
    assert h["winner"] == "a" and h["censored"] and h["completion_s"] == 240.0
