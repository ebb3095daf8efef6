"""Decision rules judged on held-out seeds (benchmarks/rule_holdout.py): hand-worked rounds
where each rule's pick, the won / lost / tied count against the recorded decision and the
engine's choices against their predictions are known in advance."""

from __future__ import annotations

import json
import math

from benchmarks import halves
from benchmarks import rule_holdout as rh


def est(start, finish, bound=None, samples=0):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": bound,
            "samples": samples}


def round_(k, estimate, completion, recorded, started=None, censored=(), **baselines):
    return {"round": k, "estimate": estimate, "completion_s": completion,
            "started_s": started or {}, "censored": list(censored),
            "choice": {"diamond": None},
            "additional_s": {"diamond": recorded, **baselines}}


def test_the_halves_are_fixed_by_seed_parity():
    assert [halves.half_of(s) for s in (2, 3, 112, 113)] == \
        ["design", "held out", "design", "held out"]
    assert halves.half_of(None) == "held out"  # a run without a seed is never designed on


def test_the_expected_tail_and_the_qbets_minimum_come_from_their_models():
    # an exponential tail above the median, P(T > m + x) = 0.5 exp(-x / theta), through
    # the 90% bound b = m + 1: P(T > b) = 0.1; the tail adds 0.5 theta to the mean
    theta = 2 * rh.EXPECTED_TAIL
    assert abs(0.5 * math.exp(-1 / theta) - 0.1) < 1e-12
    assert abs(rh.EXPECTED_TAIL - 0.3107) < 1e-4
    assert rh.QBETS_MIN_SAMPLES == 29  # 0.9 ** 29 < 0.05 <= 0.9 ** 28


def test_a_tie_goes_to_the_surer_bound_or_to_the_expected_finish():
    # a: finish 20 s, start 10, bound 12; b: finish 15 s, start 5, bound 15. Within the
    # noise (10 s): the engine takes a (bound 12 < 15); the expected finishes are
    # a 20 + 0.31 x 2 = 20.6, b 15 + 0.31 x 10 = 18.1: b
    tie = {"a": est(10, 20, bound=12, samples=40), "b": est(5, 15, bound=15, samples=40)}
    assert rh.engine(tie) == "a"
    assert rh.tie_expected(tie) == "b"
    assert rh.median_finish(tie) == "b"
    assert rh.tie_expected_where_measured(tie) == "b"
    # with b's bound from 28 samples (the walltime plan, a worst case) the engine's rule
    few = {**tie, "b": est(5, 15, bound=15, samples=28)}
    assert rh.tie_expected_where_measured(few) == "a"
    # out of the noise (b 11 s sooner) no tie: every rule takes b's median finish... but
    # `expected` weighs b's doubt: 9 + 0.31 x 60 = 27.6 against a's 20.6
    apart = {"a": est(10, 20, bound=12, samples=40), "b": est(0, 9, bound=60, samples=40)}
    assert rh.engine(apart) == "b" and rh.expected(apart) == "a"
    assert rh.expected_where_measured(apart) == "a"
    assert rh.expected_where_measured(
        {**apart, "b": est(0, 9, bound=60, samples=5)}) == "b"  # b's bound not measured


def test_a_certain_start_is_measured_whatever_its_samples():
    assert rh._measured(est(0, 10, bound=0, samples=0))
    assert not rh._measured(est(0, 10, bound=30, samples=3))
    assert not rh._measured(est(0, 10, bound=None, samples=100))


def test_one_overdue_own_job_moves_its_site_later():
    # round 0: x predicted to start in 5 s, still waiting 12 s later (overdue); round 1:
    # x 5 s / finish 15 s, y 8 s / finish 16 s, both certain (no tie at 0.75 s of noise).
    # One overdue job: x's start (5 + 30) x (12 + 30) / (5 + 30) - 30 = 12 s, finish 22 s
    r0 = round_(0, {"x": est(5, 15, bound=5), "y": est(8, 16, bound=8)},
                {"x": 30.0, "y": 20.0}, 10.0, started={"y": 8.0})
    r1 = round_(1, {"x": est(5, 15, bound=5), "y": est(8, 16, bound=8)},
                {"x": 40.0, "y": 20.0}, 20.0, started={"y": 8.0})
    run = {"seed": 2, "interval_s": 12.0, "per_round": [r0, r1]}
    assert rh.engine_own(run, r1) == "x"  # fewer than MIN_SAMPLES own jobs: no correction
    assert rh.own_later_from_one(run, r1) == "y"
    assert rh.own_later_from_one(run, r0) == "x"  # nothing overdue yet


def test_a_run_is_scored_against_its_recorded_decisions_and_baselines(tmp_path):
    tie = {"a": est(10, 20, bound=12, samples=40), "b": est(5, 15, bound=15, samples=40)}
    rounds = [
        # a (the engine's) completes at 60 s, b at 30 s: the engine loses 30 s; the
        # recorded decision (b) lost nothing
        round_(0, tie, {"a": 60.0, "b": 30.0}, 0.0, started={"a": 40.0, "b": 5.0},
               **{"home:a": 30.0, "home:b": 0.0}),
        # a completes first; the recorded decision lost 5 s
        round_(1, tie, {"a": 25.0, "b": 30.0}, 5.0, started={"a": 10.0, "b": 20.0},
               **{"home:a": 0.0, "home:b": 5.0}),
        # every probe censored: not scored
        round_(2, tie, {"a": 240.0, "b": 240.0}, 0.0, censored=("a", "b")),
    ]
    run = {"seed": 4, "traces": None, "max_wait_s": 240.0, "per_round": rounds}
    (tmp_path / "placement-depth_misleads-seed4.json").write_text(json.dumps(run))
    odd = {**run, "seed": 5, "traces": ["log"]}
    (tmp_path / "placement-logs-seed5.json").write_text(json.dumps(odd))
    got = rh.score_run(run, rh.RULES)
    assert got["regret"]["engine"] == [30.0, 0.0]
    assert got["regret"]["tie: expected"] == [0.0, 5.0]
    assert got["recorded"] == [0.0, 5.0]
    assert got["best_baseline_mean_s"] == 2.5  # home:b: (0 + 5) / 2
    # a was chosen twice: started 30 s after its 10 s start once (past its bound of 12),
    # on time once; b, not chosen, started on time once and at 20 s once (past its 15)
    assert got["selection"] == {"chosen": [2, 1, 1], "others": [2, 1, 1]}
    data = rh.summarize(tmp_path)
    groups = {(g["background"], g["half"]): g for g in data["groups"]}
    assert set(groups) == {("depth_misleads", "design"), ("real logs", "held out")}
    g = groups[("depth_misleads", "design")]
    assert g["recorded"]["mean_of_run_means_s"] == 2.5
    assert g["recorded"]["runs_mean_below_every_baseline"] == 0  # 2.5 is not below 2.5
    eng = g["rules"]["engine"]
    assert (eng["won"], eng["lost"], eng["tied"]) == (1, 1, 0)
    assert eng["mean_of_run_means_s"] == 15.0 and eng["median_s"] == 15.0
    exp = g["rules"]["tie: expected"]
    assert (exp["won"], exp["lost"], exp["tied"]) == (0, 0, 2)
    assert g["engine_starts"] == {"chosen": [2, 1, 1], "others": [2, 1, 1]}
    # tie: expected less the engine, one run: (0 + 5) / 2 - (30 + 0) / 2 = -12.5
    assert data["differences"]["depth_misleads"]["tie: expected"] == {
        "mean_s": -12.5, "low_s": -12.5, "high_s": -12.5}
    md = rh.table(data)
    assert "| depth_misleads | design | engine | 1 | 1 | 0 | 15.00 | 15.00 | 0 of 1 |" in md
    assert "| real logs | held out | chosen | 2 | 0.50 | 0.50 |" in md


def test_the_difference_from_the_engine_is_paired_by_run_and_seeded():
    # every run 2 s worse under the rule: the mean and both ends of the interval are +2
    same = [{"regret": {"engine": [e, e], "r": [e + 2, e + 2]}} for e in (0.0, 10.0, 50.0)]
    assert halves.difference_from_engine(same, "r") == {"mean_s": 2.0, "low_s": 2.0,
                                                         "high_s": 2.0}
    # one run 6 s better, two unchanged: mean -2, the interval spans -6 to 0
    mixed = [{"regret": {"engine": [6.0], "r": [0.0]}},
             {"regret": {"engine": [1.0], "r": [1.0]}},
             {"regret": {"engine": [3.0], "r": [3.0]}}]
    got = halves.difference_from_engine(mixed, "r")
    assert got["mean_s"] == -2.0 and -6.0 <= got["low_s"] < got["high_s"] <= 0.0
    assert got == halves.difference_from_engine(mixed, "r")  # seeded: the same every time
    assert halves.difference_from_engine([], "r")["mean_s"] is None
