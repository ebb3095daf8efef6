"""Placement's decision rule replayed on recorded rounds (benchmarks/decision_replay.py):
each rule picks among the sites a round's matched probes measured, and is scored exactly."""

from __future__ import annotations

import json

from benchmarks import decision_replay as dr


def est(start, finish, bound=None, raw=None):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": raw}


def round_(estimate, completion, diamond, censored=(), **baselines):
    return {"estimate": estimate, "completion_s": completion, "censored": list(censored),
            "choice": {"diamond": diamond},
            "additional_s": {"diamond": 0.0, **baselines}}


def test_each_rule_is_scored_by_the_probe_of_the_site_it_picks(tmp_path):
    # a: sooner by its median (40 s) but unsure (bound 300 s); b: 55 s, sure (bound 20 s)
    unsure = {"a": est(30, 40, bound=300, raw=280), "b": est(15, 55, bound=20, raw=20)}
    rounds = [
        round_(unsure, {"a": 200.0, "b": 60.0}, "a", **{"home:a": 140.0, "home:b": 0.0}),
        # every probe censored: no tie, not scored
        round_(unsure, {"a": 240.0, "b": 240.0}, "a", censored=("a", "b"),
               **{"home:a": 0.0, "home:b": 0.0}),
        round_({"a": est(0, 10, bound=0), "b": est(0, 20, bound=0)}, {"a": 12.0, "b": 25.0},
               "a", **{"home:a": 0.0, "home:b": 13.0}),
    ]
    run = {"seed": 1, "traces": None, "per_round": rounds}
    (tmp_path / "placement-depth_misleads-seed1.json").write_text(json.dumps(run))
    got = dr.replay_run(run, dr.RULES)
    assert got["rounds"] == 2 and got["agree"] == 2
    assert got["regret"]["engine"] == [140.0, 0.0]  # the median's pick, a, lost 140 s
    assert got["regret"]["risk 1"] == [0.0, 0.0]  # a's 270 s of doubt outweighs 15 s
    assert got["best_baseline_mean_s"] == 6.5  # home:b, (0 + 13) / 2
    data = dr.summarize(tmp_path)
    rules = data["backgrounds"]["depth_misleads"]["rules"]
    assert rules["engine"]["mean_of_run_means_s"] == 70.0
    assert rules["engine"]["runs_mean_below_every_baseline"] == 0
    assert rules["risk 1"]["runs_mean_below_every_baseline"] == 1
    assert "| depth_misleads | engine | 70.00 |" in dr.table(data)
