"""The online level of the recent-wait bound (adaptive conformal inference, Gibbs and
Candès 2021): misses raise it, starts within the bound lower it, it stays in [0.5, 0.999],
and on a queue whose waits do not change its misses settle near a tenth."""

from __future__ import annotations

import gzip
import random
from dataclasses import replace

import pytest

from benchmarks import prediction
from diamond_jupyter.calibration import (
    ACI_GAMMA,
    ACI_LEVELS,
    MIN_WAITS,
    QUANTILE,
    OnlineLevels,
    QueueWait,
    RecentWaits,
    level_bound,
    next_level,
)
from diamond_jupyter.testbed.trace import read_swf


def test_a_run_of_misses_raises_the_level_and_starts_within_lower_it():
    level, seen = QUANTILE, [QUANTILE]
    for _ in range(10):
        level = next_level(level, True)
        seen.append(level)
    assert all(b > a for a, b in zip(seen, seen[1:], strict=False))
    assert level == pytest.approx(QUANTILE + 10 * 0.9 * ACI_GAMMA)
    for _ in range(10):
        level = next_level(level, False)
    assert level == pytest.approx(QUANTILE + 10 * 0.9 * ACI_GAMMA - 10 * 0.1 * ACI_GAMMA)
    # one miss in ten leaves it where it was
    start = level
    for k in range(100):
        level = next_level(level, k % 10 == 0)
    assert level == pytest.approx(start)


def test_the_level_stays_between_the_median_and_0999():
    up = QUANTILE
    for _ in range(10_000):
        up = next_level(up, True)
    assert up == ACI_LEVELS[1] == 0.999
    down = QUANTILE
    for _ in range(100_000):
        down = next_level(down, False)
    assert down == ACI_LEVELS[0] == 0.5


def test_levels_are_kept_per_class():
    online = OnlineLevels()
    for _ in range(20):
        online.learn("1", True)
    online.learn("2-4", False)
    assert online.level("1") > QUANTILE > online.level("2-4")
    assert online.level("17-64") == QUANTILE  # a class never seen: the nominal level
    assert (online.outcomes, online.misses) == (21, 20)


def test_the_conformal_bound_at_a_higher_level_is_no_lower_and_needs_min_waits():
    rng = random.Random(4)
    waits = [QueueWait("p", 1, rng.expovariate(1 / 600)) for _ in range(60)]
    waits += [QueueWait("p", 32, 5000.0 + k) for k in range(MIN_WAITS - 1)]  # too few
    recent = RecentWaits(waits)
    low, n = recent.bound_at("p", 1, 0.6)
    high, _ = recent.bound_at("p", 1, 0.99)
    assert n == 60 and low < high
    assert high == level_bound(sorted((w.wait_s, False) for w in waits[:60]), 0.99)
    # the wide jobs' class holds too few waits: the partition's, all 78, decide
    assert recent.bound_at("p", 32, 0.9)[1] == 60 + MIN_WAITS - 1
    assert RecentWaits(waits[:MIN_WAITS - 1]).bound_at("p", 1, 0.9) is None


def _steady_log(path, n: int, seed: int, mean_wait_s: float, mean_gap_s: float = 120.0):
    """A log of one-CPU jobs arriving at random, each waiting an exponential time."""
    rng = random.Random(seed)
    lines, t = ["; MaxNodes: 64", "; MaxProcs: 64"], 0.0
    for k in range(1, n + 1):
        t += rng.expovariate(1 / mean_gap_s)
        wait = rng.expovariate(1 / mean_wait_s)
        lines.append(f"{k} {t:.0f} {wait:.0f} 60 1 -1 -1 1 600 -1 1 {k % 7}")
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def test_along_a_steady_log_the_misses_settle_near_a_tenth(tmp_path):
    """Started from 0.9 or pushed away, the replay's misses over a log whose waits do not
    change come to about a tenth of its outcomes."""
    log = read_swf(_steady_log(tmp_path / "steady.swf.gz", 4000, 5, 900.0))
    at, online, outcomes = prediction.online_levels(log)
    assert len(outcomes) > 3500
    late = [m for _, m in outcomes[1000:]]
    assert 0.07 <= sum(late) / len(late) <= 0.13
    assert ACI_LEVELS[0] < online.level("1") < ACI_LEVELS[1]
    assert at(-1.0) == {}


def test_when_waits_grow_the_level_rises_and_when_they_shrink_it_falls(tmp_path):
    """A log whose waits jump tenfold halfway: the bounds from the short waits before miss,
    the level of the class rises above where it stood before the jump."""
    short = read_swf(_steady_log(tmp_path / "short.swf.gz", 2000, 6, 300.0))
    at_short, _, _ = prediction.online_levels(short)
    half = short.jobs[1000].submit
    rng = random.Random(8)
    jumped = short.with_jobs(tuple(
        j if j.submit < half else replace(j, wait=rng.expovariate(1 / 3000.0))
        for j in short.jobs))
    at_jump, _, _ = prediction.online_levels(jumped)
    before = at_jump(half)["1"]
    soon = at_jump(short.jobs[1150].submit)["1"]
    assert soon > before + 0.02 and soon > at_short(short.jobs[1150].submit)["1"]


def test_the_benchmark_scores_the_online_model(tmp_path):
    path = _steady_log(tmp_path / "steady.swf.gz", 3000, 9, 900.0)
    r = prediction.run_log(path, moments=20, seed=1, new_jobs=True,
                           models=("walltime", "engine", "online"))
    assert r["moments"] == 20
    online = r["models"]["online"]
    assert online["jobs"] == r["models"]["engine"]["jobs"] > 0
    assert online["bound_coverage"] is not None
