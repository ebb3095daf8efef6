"""Which sites a hedged job's copies go to (benchmarks/hedge_replay.py): the expected
completion of a set of copies on hand-worked start distributions, the set that minimises
it, and the replay's scoring and halves on hand-made runs."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from benchmarks import hedge_replay as hr
from diamond_jupyter.placement_rank import FINISH_NOISE_S

SURE = hr.StartDist((60.0,), 10.0)  # starts at 60 s for certain, runs 10 s: done at 70
RISKY = hr.StartDist((0.0, 0.0, 0.0, 400.0), 10.0)  # at once 3 times in 4, else at 400 s


def test_a_sure_site_covers_a_risky_cheaper_one():
    # alone: the risky site 3/4 x 10 + 1/4 x 410 = 110 s, the sure one 70 s; together the
    # risky copy starts first 3 times in 4 (done at 10), else the sure one does (done at 70)
    assert hr.expected_first_start([RISKY]) == pytest.approx(110.0)
    assert hr.expected_first_start([SURE]) == pytest.approx(70.0)
    assert hr.expected_first_start([SURE, RISKY]) == pytest.approx(0.75 * 10 + 0.25 * 70)
    assert hr.expected_first_start([RISKY, SURE]) == pytest.approx(25.0)  # order: ties only


def test_two_identical_risky_sites_lose_to_one_of_them_with_a_sure_one():
    # the two risky sites have the best medians (0 s against 60 s), but both are late
    # together 1 time in 16 (done at 410): 15/16 x 10 + 1/16 x 410 = 35 s, against 25 s
    # for a risky one covered by the sure one
    assert hr.expected_first_start([RISKY, RISKY]) == pytest.approx(35.0)
    sites = {"a": RISKY, "b": RISKY, "c": SURE}
    assert hr.least_set(sites, 2, ["a", "b", "c"]) == ["a", "c"]
    # with three copies every site is taken; with one, the sure site alone
    assert hr.least_set(sites, 3, ["a", "b", "c"]) == ["a", "b", "c"]
    assert hr.least_set(sites, 1, ["a", "b", "c"]) == ["c"]


def test_the_first_copy_to_start_runs_even_when_another_would_finish_sooner():
    # a site certain to start at once but running 100 s, and one that starts at once or at
    # 400 s (even odds) running 10 s: when both start at once the one listed first runs,
    # so the hedge ends at 100 s; the least completion would be 10 s half the time
    slow = hr.StartDist((0.0,), 100.0)
    coin = hr.StartDist((0.0, 400.0), 10.0)
    assert hr.expected_first_start([slow, coin]) == pytest.approx(100.0)
    assert hr.expected_first_start([coin, slow]) == pytest.approx(0.5 * 10 + 0.5 * 100)
    assert hr.expected_min_completion([slow, coin]) == pytest.approx(0.5 * 10 + 0.5 * 100)


def test_equal_values_go_to_the_set_listed_first():
    sites = {"x": SURE, "y": SURE, "z": SURE}
    assert hr.least_set(sites, 2, ["z", "x", "y"]) == ["z", "x"]
    assert hr.least_set({}, 2, ["x"]) == []


def test_a_start_distribution_passes_through_the_median_and_the_90_percent_bound():
    d = hr.start_dist(40.0, 120.0, 15.0)
    assert len(d.points) == hr.QUANTILE_POINTS and list(d.points) == sorted(d.points)
    assert statistics.median(d.points) == pytest.approx(40.0, rel=0.03)
    # the 90% quantile: 9 points in 10 below it
    assert sum(t <= 120.0 for t in d.points) / len(d.points) == pytest.approx(0.9, abs=0.02)
    assert d.runtime_s == 15.0
    # log-normal in wait + floor: (40 + 30) and (120 + 30) are 1.2816 sigmas apart
    sigma = math.log(150 / 70) / hr.Z90
    assert max(d.points) == pytest.approx(70 * math.exp(sigma * statistics.NormalDist()
                                                        .inv_cdf(1 - 0.5 / 64)) - 30)


def test_certain_and_unmeasured_starts():
    assert hr.start_dist(5.0, 5.3, 10.0) == hr.StartDist((5.0,), 10.0)  # bound within 0.5 s
    assert hr.start_dist(-3.0, None, -1.0).runtime_s == 0.0
    # no bound: the engine's spread for an unmeasured start, FINISH_NOISE_S
    d = hr.start_dist(20.0, None, 10.0)
    assert sum(t <= 20.0 + FINISH_NOISE_S for t in d.points) / len(d.points) == \
        pytest.approx(0.9, abs=0.02)
    # a start predicted now: the early half of its waits is 0, none below
    now = hr.start_dist(0.0, 200.0, 10.0)
    assert min(now.points) == 0.0 and sum(t == 0.0 for t in now.points) == 32


def est(start, finish, bound=None):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": bound,
            "samples": 50}


def _run(seed, traces=False):
    # a and b: the best medians, both risky and both late this time; c sure at 60 s
    r = {"round": 0, "estimate": {"a": est(0, 10, 400), "b": est(1, 11, 400),
                                  "c": est(60, 70, 60)},
         "completion_s": {"a": 240.0, "b": 230.0, "c": 71.0},
         "started_s": {"b": 220.0, "c": 61.0}, "censored": ["a"],
         "additional_s": {"diamond": 169.0, "hedge2": 159.0}, "ranking": ["a", "b", "c"]}
    return {"seed": seed, "traces": [{"x": 1}] if traces else [], "max_wait_s": 240.0,
            "hedge_mode": "matched", "per_round": [r]}


def test_a_run_is_scored_as_the_placement_benchmark_scores_its_hedge():
    got = hr.score_run(_run(4))
    assert hr.two_best(_run(4)["per_round"][0]["estimate"]) == ["a", "b"]
    # two best: b starts first (a never did), done at 230, the fastest 71: 159 s lost
    assert got["regret"]["two best"] == [pytest.approx(159.0)]
    # the set rule takes c beside a risky one: c starts first, 0 s lost
    assert hr.RULES[hr.CANDIDATE](_run(4)["per_round"][0]["estimate"]) == ["a", "c"]
    assert got["regret"][hr.CANDIDATE] == [pytest.approx(0.0)]
    assert got["pairs_unlike_two_best"] == {"two best": 0, hr.CANDIDATE: 1,
                                            "least expected minimum completion": 1,
                                            "best + surest start": 1,
                                            "best + least expected complement": 1}
    assert got["diamond_mean_s"] == 169.0
    assert got["two_best_as_recorded"] == 1  # the replayed pair is the recorded one
    no_starts = _run(4)
    no_starts["per_round"][0]["started_s"] = None
    assert hr.score_run(no_starts) is None


def test_the_halves_backgrounds_and_unscored_runs(tmp_path):
    for name, run in {"placement-depth_misleads-seed4.json": _run(4),
                      "placement-depth_misleads-seed5.json": _run(5),
                      "placement-X@alpha-seed6.json": _run(6, traces=True)}.items():
        (tmp_path / name).write_text(json.dumps(run))
    bare = _run(7)
    bare["per_round"][0]["started_s"] = None
    (tmp_path / "placement-seed7.json").write_text(json.dumps(bare))
    data = hr.summarize(tmp_path)
    assert [(g["background"], g["half"], g["seeds"]) for g in data["groups"]] == [
        ("depth_misleads", "design", [4]), ("depth_misleads", "held out", [5]),
        ("real logs", "design", [6])]
    assert data["unscored_runs"] == ["placement-seed7.json"]
    g = data["groups"][0]
    # diamond's mean 169 s: the set rule's 0 s (floored at 1 s) is 2x below, two best's not
    assert g["rules"][hr.CANDIDATE]["runs_2x_below_diamond"] == 1
    assert g["rules"]["two best"]["runs_2x_below_diamond"] == 0
    assert g["rules"][hr.CANDIDATE]["won"] == 1 and g["candidate_passes"]
    assert data["differences"]["depth_misleads"][hr.CANDIDATE]["mean_s"] == \
        pytest.approx(-159.0)
    text = hr.table(data)
    assert "on the design half: better than two best on 2 of 2 backgrounds" in text
    assert "placement-seed7.json" in text


def test_the_command_writes_json_and_a_table_and_shows_one_half_alone(tmp_path, capsys):
    runs, out = tmp_path / "runs", tmp_path / "out"
    runs.mkdir()
    for seed in (4, 5):
        (runs / f"placement-depth_misleads-seed{seed}.json").write_text(json.dumps(_run(seed)))
    data = hr.main(["--results", str(runs), "--out", str(out), "--json", "--half", "design"])
    assert json.loads(capsys.readouterr().out)["groups"][0]["seeds"] == [4]
    assert [g["half"] for g in data["groups"]] == ["design"] and data["differences"] == {}
    table = (out / "hedge_replay.md").read_text()
    assert "| design |" in table and "| held out |" not in table
    assert "on the held out half" not in table and "every run of both halves" not in table
    assert json.loads((out / "hedge_replay.json").read_text())["candidate"] == hr.CANDIDATE
