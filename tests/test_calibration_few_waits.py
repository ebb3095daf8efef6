"""The 90% start bound where few of a site's jobs started lately (issue 15, session 42):
with fewer recent waits than the QBETS bound needs (29 for 90% at 95% confidence), the
conformal 90% bound over every one of them (`few_waits_bound`, 9 or more), said as a looser
promise; with fewer than 9, no bound from waits, and `explain` says why."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diamond_jupyter.calibration import (
    MIN_CONFORMAL_WAITS,
    MIN_QBETS_WAITS,
    QUANTILE,
    QueueWait,
    RecentWaits,
    RunSample,
    SiteCalibration,
    few_waits_bound,
    quantile_upper_index,
)

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
HOUR = 3600.0


def test_the_thresholds_are_the_order_statistics_own():
    """29 is the fewest waits with a QBETS 90% bound at 95% confidence, 9 the fewest whose
    conformal 90% bound is one of them (k = ceil(0.9 (n + 1)) <= n)."""
    assert MIN_QBETS_WAITS == 29
    assert quantile_upper_index(28) is None and quantile_upper_index(29) is not None
    assert MIN_CONFORMAL_WAITS == 9
    assert math.ceil(QUANTILE * 9) > 8 and math.ceil(QUANTILE * 10) <= 9


@settings(max_examples=25, deadline=None)
@given(n=st.integers(MIN_CONFORMAL_WAITS, MIN_QBETS_WAITS - 1),
       shape=st.sampled_from(["exponential", "lognormal", "pareto", "uniform"]),
       seed=st.integers(0, 2**32 - 1))
def test_a_new_wait_like_the_recent_ones_is_within_the_bound_nine_times_in_ten(n, shape, seed):
    """Whatever the waits' distribution, a new wait drawn like n recent ones stays within
    their conformal bound with probability k / (n + 1) >= 0.9 (over both): 3,000 trials,
    coverage at least 0.9 less three standard errors, and not far above k / (n + 1)."""
    rng = random.Random(seed)
    draw = {"exponential": lambda: rng.expovariate(1 / 600.0),
            "lognormal": lambda: rng.lognormvariate(6.0, 2.0),
            "pareto": lambda: 60.0 * rng.paretovariate(1.1),
            "uniform": lambda: rng.uniform(0.0, 86400.0)}[shape]
    trials, hits = 3000, 0
    for _ in range(trials):
        bound, samples = few_waits_bound(sorted((draw(), False) for _ in range(n)))
        assert samples == n
        hits += draw() <= bound
    k = math.ceil(QUANTILE * (n + 1))
    se = math.sqrt(0.1 * 0.9 / trials)
    assert QUANTILE - 3 * se <= hits / trials <= k / (n + 1) + 3 * se


def test_too_few_waits_give_no_bound_and_waiting_jobs_lengthen_it():
    """8 waits: none. 12 started within minutes: the 12th (k = ceil(0.9 x 13) = 12) is the
    longest. Three of them still waiting after 5 h: the bound is at least that."""
    assert few_waits_bound([(60.0 + i, False) for i in range(MIN_CONFORMAL_WAITS - 1)]) is None
    started = [(60.0 + i, False) for i in range(12)]
    assert few_waits_bound(started) == (71.0, 12)
    waiting = sorted([(60.0 + i, False) for i in range(9)] + [(5 * HOUR, True)] * 3)
    bound, n = few_waits_bound(waiting)
    assert n == 12 and bound >= 5 * HOUR


def test_the_site_falls_back_to_every_wait_only_where_no_class_has_a_qbets_bound():
    """15 recent waits of every size: `bound` has none, `few_bound` the conformal one over
    all 15. With 40 waits `bound` has one (and placement never asks `few_bound`)."""
    few = RecentWaits([QueueWait("batch", 1 + i % 3, 100.0 * (i + 1)) for i in range(15)])
    assert few.bound("batch", 1) is None and few.count == 15
    assert few.few_bound() == (1500.0, 15)  # k = ceil(0.9 x 16) = 15: the longest
    many = RecentWaits([QueueWait("batch", 1, 100.0 * (i + 1)) for i in range(40)])
    assert many.bound("batch", 1) is not None


# --- in the engine: placement's bound and its words ------------------------------------

def _site(waiting: int):
    """One 8-CPU node, all busy for 2 h; `waiting` 1-CPU jobs of others queued ahead,
    submitted 10 min ago."""
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.model import JobState, JobStatus, Node, Partition, SiteSnapshot

    node = Node(name="n1", cpus=8, cpus_allocated=8, state="allocated", partitions=["all"])
    running = [JobStatus(native_id="r1", state=JobState.RUNNING, cpus=8, walltime_s=3 * HOUR,
                         partition="all", user="other", node_list="n1",
                         started_at=NOW - timedelta(hours=1))]
    queued = [JobStatus(native_id=f"w{k}", state=JobState.PENDING, cpus=1, walltime_s=600.0,
                        partition="all", user="other", submitted_at=NOW - timedelta(minutes=10))
              for k in range(waiting)]
    return SiteConfig(name="s", scheduler="slurm"), SiteSnapshot(
        site="s", taken_at=NOW, nodes=[node], jobs=running + queued, user="me",
        partitions=[Partition(name="all", default=True)])


def _calibration(started: int) -> SiteCalibration:
    """20 finished runs (half their hour asked) and `started` jobs that started in the last
    6 h after waits of up to 4 h (evenly spread)."""
    runs = [RunSample("all", 8, HOUR, HOUR / 2, NOW.timestamp() - 600.0 * k) for k in range(20)]
    waits = {f"d{k}": QueueWait("all", 8, 4 * HOUR * (k + 1) / started,
                                submitted_at=NOW.timestamp() - 5 * HOUR, user="other")
             for k in range(started)}
    return SiteCalibration(runs, queued=waits)


def _placed(started: int):
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place

    spec = JobSpec(name="j", command="true",
                   resources=Resources(nodes=1, tasks=1, cpus_per_task=1, walltime_s=600))
    cfg, snap = _site(2)
    return place(spec, [(cfg, snap)], now=NOW, calibration={"s": _calibration(started)})


def test_placement_bounds_by_few_waits_and_says_how_few():
    """10 jobs started lately (plus the 2 waiting in the view: 12 waits), too few for 95%
    confidence: the bound is the conformal one, the longest wait (4 h, past the
    simulation's 2 h), and `explain` and the JSON say from how few and that it is 90% on
    average only."""
    from diamond_jupyter.placement import FEW_WAITS_CLASS

    p = _placed(10)
    v = p.verdict("s")
    assert v is not None and v.feasible, p.explain()
    assert v.bound_class == FEW_WAITS_CLASS
    assert (v.start_bound - NOW).total_seconds() == 4 * HOUR, p.explain()
    text = p.explain()
    assert ("  s: 90% bound 4:00:00: the waits of 12 jobs of every size (only 12: too few for "
            "95% confidence (29 needed), so 90% on average) here recently") in text, text
    assert p.model_dump(mode="json")["ranked"][0]["bound_class"] == FEW_WAITS_CLASS


@pytest.mark.parametrize("started", [0, 4])
def test_placement_says_why_no_bound_comes_from_too_few_waits(started):
    """Fewer than 9 waits (the 2 waiting in the view and `started`): no bound from them,
    and `explain` says how many there were and how many a bound needs."""
    p = _placed(started)
    v = p.verdict("s")
    assert v is not None and v.bound_class is None and v.start_bound is not None
    n = started + 2
    assert (f"  s: 90% bound without recent waits: only {n} jobs started or waited here in "
            f"the last 6 h, fewer than the 9 a bound from them needs") in p.explain(), \
        p.explain()


def test_with_no_recent_waits_explain_says_so_and_uncalibrated_says_nothing():
    """A calibrated site whose every recent job started elsewhere (none here, none waiting
    in the view that the bound could rest on) and a job that waits behind a full node: the
    simulation's bound stands; `explain` says that no job waited here lately."""
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place

    spec = JobSpec(name="j", command="true",
                   resources=Resources(nodes=1, tasks=1, cpus_per_task=1, walltime_s=600))
    cfg, snap = _site(0)
    p = place(spec, [(cfg, snap)], now=NOW, calibration={"s": _calibration(0)})
    assert ("  s: 90% bound without recent waits: no job started or waited here in the last "
            "6 h, fewer than the 9 a bound from them needs") in p.explain(), p.explain()
    # uncalibrated (no accounting read): no bound from waits is tried, nothing said of it
    bare = place(spec, [(cfg, snap)], now=NOW)
    assert bare.verdict("s").start_bound is None
    assert "a bound from them needs" not in bare.explain()


def test_a_site_with_neither_runtimes_nor_waits_says_no_bound_is_given():
    """A calibrated site whose accounting held nothing (no finished job, no wait): no
    simulation to bound by, none from waits; `explain` says no bound is given and why."""
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place

    spec = JobSpec(name="j", command="true",
                   resources=Resources(nodes=1, tasks=1, cpus_per_task=1, walltime_s=600))
    cfg, snap = _site(0)
    p = place(spec, [(cfg, snap)], now=NOW, calibration={"s": SiteCalibration([])})
    v = p.verdict("s")
    assert v is not None and v.feasible and v.start_bound is None, p.explain()
    assert ("  s: 90% bound not given: no job started or waited here in the last 6 h, fewer "
            "than the 9 a bound from them needs") in p.explain(), p.explain()
