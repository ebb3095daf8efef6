"""The placement seed report judges each kept run against the targets, ties included."""

from __future__ import annotations

import json

from benchmarks import placement_seeds


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
    r = placement_seeds.judge(run(3, (0.5, 2.0), (0.0, 0.5),
                                  {"alpha": (100, 120), "gamma": (20, 9.0)}))
    assert r["background"] == "KTH@alpha+LLNL@gamma" and r["best_home_in_hindsight"] == "gamma"
    assert r["baselines_not_beaten"] == []
    # average home median 60 s over diamond's 0.5 s floored at 1 s; 2 s over hedge's 0.5->1 s
    assert r["avg_home_median_over_diamond"] == 60.0 and r["diamond_mean_over_hedge"] == 2.0
    assert r["meets"] == {"mean_below_every_baseline": True, "median_10x_below_avg_home": True,
                          "hedge_2x_below_diamond": True}
    assert (r["censored_probes"], r["rounds_all_censored"]) == (2, 1)


def test_a_tie_with_the_best_home_is_not_below_it():
    r = placement_seeds.judge(run(4, (0.0, 0.0), (0.0, 0.0),
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
    data = placement_seeds.main(["--results", str(tmp_path), "--out", str(tmp_path)])
    rows = data["runs"]
    assert [(r["background"], r["seed"]) for r in rows] == [
        ("KTH@alpha+LLNL@gamma", 7), ("depth_misleads", 1)]
    assert set(rows[1]["meets"].values()) == {None}
    assert rows[0]["meets"]["mean_below_every_baseline"] is True
    md = (tmp_path / "placement_seeds.md").read_text()
    assert "| depth_misleads | 1 | 10 |" in md and "| - | - | - |" in md
