"""benchmarks.wait_history: the wait calibration's history chosen by window, by count or by
age weight, and the two-site ranking it is judged by."""

from __future__ import annotations

import pytest

from benchmarks.wait_history import ClassRatio, history, predict_stretch, rank_pairs

HOUR = 3600.0


def _by_start(records):
    order = sorted(range(len(records)), key=lambda i: records[i][3] + records[i][2])
    return order, [records[i][3] + records[i][2] for i in order]


def test_history_by_window_by_count_and_within_the_stores_keep():
    # (CPUs, estimate, wait, seen at): one job started every hour for 100 hours
    recs = [(1, 1000.0, 100.0, h * HOUR - 100.0) for h in range(1, 101)]
    order, starts = _by_start(recs)
    at = 100 * HOUR
    window = history(recs, starts, order, at, 72 * HOUR, 6 * HOUR, None)
    assert [s for *_, s in window] == [h * HOUR for h in range(94, 101)]
    last = history(recs, starts, order, at, 72 * HOUR, None, 10)
    assert [s for *_, s in last] == [h * HOUR for h in range(91, 101)]
    # the store forgets what it saw more than its keep ago, however many are asked for
    kept = history(recs, starts, order, at, 24 * HOUR, None, 400)
    assert len(kept) == 24 and kept[0][3] == 77 * HOUR  # job 76 was seen 100 s before
    # a job that has not started by then is not a sample
    assert history(recs, starts, order, 50.5 * HOUR, 72 * HOUR, None, 400)[-1][3] == 50 * HOUR


def test_an_age_weight_follows_the_recent_ratio():
    at = 100 * HOUR
    old = [(1, 1000.0, 900.0, at - 48 * HOUR)] * 30  # ratio 0.9, two days ago
    new = [(1, 1000.0, 100.0, at - HOUR)] * 10  # ratio 0.1, an hour ago
    weighted = ClassRatio(old + new, at, half_life_s=12 * HOUR)(1, 1000.0)
    assert weighted[0] == pytest.approx(100.0)  # not the median of 40 jobs (0.9)
    # a weight of each sample's age, not of a change point: spread in time, one ratio
    mixed = [(1, 1000.0, 900.0 if h % 2 else 100.0, at - h * HOUR) for h in range(40)]
    assert ClassRatio(mixed, at, half_life_s=HOUR)(1, 1000.0)[0] == pytest.approx(100.0)
    assert ClassRatio(mixed, at, half_life_s=1e9)(1, 1000.0)[0] == pytest.approx(100.0)
    assert ClassRatio(mixed[1:], at, half_life_s=1e9)(1, 1000.0)[0] == pytest.approx(900.0)
    # the effective count of 10 recent jobs (the old weigh 1/16 each) is too few to bound
    assert weighted[1] is None
    assert ClassRatio([], at)(1, 1000.0) is None
    assert ClassRatio([], at, half_life_s=HOUR)(1, 1000.0) is None


def test_targets_take_the_schedulers_estimate_without_samples_and_are_scored_once():
    t0 = 0.0
    # seen 1 h in, started 10 min later (estimate 1 h), then targets on day 2
    recs = [(1, 3600.0, 600.0, HOUR), (1, 7200.0, 60.0, 25 * HOUR), (4, 100.0, 30.0, 26 * HOUR)]
    out = predict_stretch({"t0": t0, "records": recs}, keep_d=1.0, min_fit=10)
    assert len(out["scheduler"]) == 2
    assert [r[:2] for r in out["scheduler"]] == [(7200.0, 60.0), (100.0, 30.0)]
    # the 6 h window holds nothing at 25 h: the scheduler's estimate, no bound
    assert out["class/6h"][0][:3] == (7200.0, 60.0, None)
    # the last 50 do hold the job started at 1 h 10 min; one sample is a class of none
    # (fewer than 5), so still the scheduler's estimate
    assert out["class/last50"][0][0] == pytest.approx(7200.0)
    assert {len(v) for v in out.values()} == {2}


def test_ranking_counts_a_placement_right_where_the_earlier_prediction_started_first():
    # two sites, one target each: "good" predicts the truth, "bad" the opposite
    a = {"scheduler": [(10.0, 5.0, None, 0.0)], "good": [(10.0, 5.0, None, 0.0)],
         "bad": [(90.0, 5.0, None, 0.0)]}
    b = {"scheduler": [(20.0, 50.0, None, 0.0)], "good": [(20.0, 50.0, None, 0.0)],
         "bad": [(15.0, 50.0, None, 0.0)]}
    got = rank_pairs([("X", a), ("Y", b)], draws=50, seed=1, cross=True)
    assert got["good"] == {"right": 1.0, "mean_extra_wait_s": 0}
    assert got["bad"] == {"right": 0.0, "mean_extra_wait_s": 45}
    assert rank_pairs([("X", a), ("Y", b)], draws=50, seed=1, cross=False) == {}
