"""benchmarks.wait_by_estimate: the methods that calibrate a scheduler's estimated wait by
its size, and their scoring."""

from __future__ import annotations

import math

import pytest

from benchmarks.wait_by_estimate import ClassRatio, LogLog, bin_ratio, score, theil_sen


def test_theil_sen_ignores_an_outlier_and_pairs_of_equal_x():
    xs, ys = [1.0, 2.0, 3.0, 4.0, 5.0, 5.0], [2.0, 2.5, 3.0, 3.5, 40.0, 4.0]
    assert theil_sen(xs, ys) == pytest.approx(0.5)
    assert theil_sen([1.0, 1.0], [0.0, 5.0]) is None


def test_loglog_shrinks_the_wait_less_than_in_proportion_to_the_estimate():
    # waits grow as the square root of the estimate: one ratio per class cannot say that
    train = [(1, e, 10 * math.sqrt(e)) for e in (100, 400, 900, 1600, 2500, 3600, 6400,
                                                10000, 40000, 90000)]
    fit = LogLog(train, min_n=5)
    for est in (200.0, 5000.0, 50000.0):
        start, _ = fit(1, est)
        assert start == pytest.approx(10 * math.sqrt(est), rel=1e-6)
    one = ClassRatio(train)
    short, long_ = one(1, 200.0)[0], one(1, 50000.0)[0]
    # one ratio: too low under a short estimate, too high under a long one
    assert short < 10 * math.sqrt(200.0) / 2 and long_ > 10 * math.sqrt(50000.0) * 2
    # a slope above 1 (waits growing faster than the estimate) is kept at 1
    steep = LogLog([(1, e, e * e / 1000) for e in (100, 300, 1000, 3000, 10000)], min_n=5)
    assert steep(1, 2000.0)[0] / steep(1, 1000.0)[0] == pytest.approx(2.0)


def test_bins_fall_back_to_the_class_with_few_jobs_in_a_band():
    train = [(1, 200.0, 100.0)] * 12 + [(1, 2000.0, 100.0)] * 3
    banded, plain = bin_ratio((300.0, 1000.0, 3000.0), 10)(train), ClassRatio(train)
    assert banded(1, 200.0)[0] == pytest.approx(100.0)  # its own band: ratio 0.5
    assert banded(1, 2000.0) == plain(1, 2000.0)  # 3 jobs: the class's ratio


def test_score_floors_short_waits_and_counts_coverage_where_bounded():
    s = score([(10.0, 20.0, 25.0), (300.0, 30.0, None), (60.0, 600.0, 100.0)])
    assert s["jobs"] == 3 and s["bounded"] == pytest.approx(0.667, abs=1e-3)
    assert s["bound_coverage"] == 0.5 and s["within_2x"] == pytest.approx(0.333, abs=1e-3)
    assert s["median_abs_log_error"] == pytest.approx(round(math.log(10), 3))
