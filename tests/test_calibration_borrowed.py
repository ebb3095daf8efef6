"""A site with too few finished jobs of its own borrows other sites' runtime/request ratios.

On the test bed's Grid Engine site (`depth_misleads` seeds 106 and 107) the accounting held
no finished jobs of other users yet: its queued and running jobs were planned to their full
walltime requests, and the site was predicted 38-4,673 s away while it started every probe
in under 20 s. Users over-request everywhere: the federation's jobs of the same size (else
all of them) say more than the walltime (benchmarks/README.md, issue 15)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from test_calibration_doors import grid_engine_queue

from diamond_jupyter.calibration import (
    MIN_SAMPLES,
    PooledRatios,
    RunSample,
    SiteCalibration,
    borrowed,
    quantile_upper_index,
    ratio_fn,
)
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.model import (
    JobSpec,
    Resources,
    SiteSnapshot,
)
from diamond_jupyter.placement import place

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def samples(cpus: int, ratios: list[float], asked_s: float = 1000.0) -> list[RunSample]:
    return [RunSample("batch", cpus, asked_s, r * asked_s, float(i))
            for i, r in enumerate(ratios)]


def test_a_site_without_enough_jobs_borrows_its_size_class_over_every_site() -> None:
    a = SiteCalibration(samples(8, [0.1] * 6) + samples(1, [0.9] * 6))
    # enough jobs here, but too few of 5-16 CPUs: none of b's in that class's pool
    b = SiteCalibration(samples(8, [0.3] * 4) + samples(1, [0.5] * 2))
    thin = SiteCalibration(samples(8, [1.0] * (MIN_SAMPLES - 1)))  # too few of its own
    cals = borrowed({"a": a, "b": b, "thin": thin})
    assert cals["a"] is a and cals["b"] is b  # enough of their own: as they were
    assert thin.ratio("batch", 8) is None and thin.pool is None  # the caller's untouched
    r = cals["thin"].ratio("batch", 8)
    assert r is not None and cals["thin"].borrows
    # the 5-16 class over every site: a's six (b has four, under MIN_SAMPLES; the thin
    # site's own are not "other sites'")
    assert (r.samples, r.mean, r.key) == (6, pytest.approx(0.1), "other sites' */5-16")
    # no site has 5 jobs of 65+ CPUs: every site's jobs, a's 12 and b's 6
    r = cals["thin"].ratio("batch", 128)
    assert r.samples == 18 and r.mean == pytest.approx(
        (6 * 0.1 + 6 * 0.9 + 4 * 0.3 + 2 * 0.5) / 18)


def test_the_borrowed_bound_rests_on_sites_not_on_their_pooled_jobs() -> None:
    # 800 jobs at 0.05 on two sites, 30 at 0.5 on a third: the pooled jobs' QBETS bound
    # (the 90% quantile, with 95% confidence) is 0.05, which the third site's jobs pass one
    # in one. For the borrower the sites are the samples: three are too few for a 90%
    # bound with 95% confidence (29 are needed), so its bound is the walltime
    low = SiteCalibration(samples(8, [0.05] * 400))
    high = SiteCalibration(samples(8, [0.5] * 30))
    more_low = SiteCalibration(samples(8, [0.05] * 400))
    r = PooledRatios([low, high, more_low]).ratio(8)
    assert r.samples == 830 and r.median == pytest.approx(0.05)
    assert r.values[quantile_upper_index(830)] == pytest.approx(0.05)  # the jobs' bound
    assert (r.upper, r.bounded) == (1.0, False)
    assert r.end_share(0.01, "upper") == 1.0  # a running job's bound too
    assert r.end_share(0.01, "median") == pytest.approx(0.05)  # the median is the pool's
    # 29 sites: their largest bound, 0.5 (the 29th of 29 sorted: k = 28)
    assert quantile_upper_index(29) == 28
    r = PooledRatios([low, high, *[more_low] * 27]).ratio(8)
    assert (r.upper, r.bounded) == (pytest.approx(0.5), True)
    # a site too small for a bound of its own counts as the walltime among the sites
    few_high = SiteCalibration(samples(8, [0.5] * 6))
    r = PooledRatios([low, few_high, *[more_low] * 27]).ratio(8)
    assert (r.upper, r.bounded) == (1.0, True)


def test_no_pool_without_any_site_with_enough_jobs() -> None:
    few = SiteCalibration(samples(8, [0.1] * 3))
    none = SiteCalibration([])
    cals = borrowed({"few": few, "none": none})
    assert ratio_fn(cals["none"], "mean") is None  # runs to the request, as before
    assert ratio_fn(cals["few"], "median") is None


def grid_engine_site(name: str = "sgeq") -> tuple[SiteConfig, SiteSnapshot]:
    """test_calibration_doors' Grid Engine queue at NOW, as site `name`."""
    return SiteConfig(name=name, scheduler="sge"), grid_engine_queue(NOW, name)


PROBE = JobSpec(name="probe", command="sleep 20",
                resources=Resources(nodes=1, tasks=1, cpus_per_task=8, walltime_s=60))


def test_placement_plans_a_thin_sites_queue_at_other_sites_ratios() -> None:
    # worked by hand: the walltime plan ends the running job at 900 s and runs the two
    # waiting jobs 1000 s each: the probe at 2,900 s. Borrowed: 15 8-slot jobs of another
    # site ran 2% of 1000 s and 15 20%; mean 0.11, so each waiting job 110 s. The running
    # job has run 0.098 of its request (100 s less the 2 s the stamps may be off): of the
    # jobs that ran longer, the 15 at 0.2, so it ends at 200 s, 100 s from now; the probe
    # at 100 + 110 + 110 = 320 s.
    other = SiteCalibration(samples(8, [0.02, 0.2] * 15))  # one workload, no change
    thin = SiteCalibration([])
    cals = {"sgeq": thin, "other": other}
    pl = place(PROBE, [grid_engine_site()], now=NOW, calibration=cals)
    v = pl.verdict("sgeq")
    assert v is not None and v.feasible, pl.explain()
    assert (v.raw_start - NOW).total_seconds() == pytest.approx(2900.0, abs=1)
    assert (v.estimated_start - NOW).total_seconds() == pytest.approx(320.0, abs=1)
    assert v.start_source == "calibrated"
    assert (v.calibration_samples, v.calibration_borrowed) == (30, True)
    # one site is too few for a bound on what another site's jobs run: the walltime plan
    assert (v.start_bound - NOW).total_seconds() == pytest.approx(2900.0, abs=1)
    text = pl.explain()
    assert "30 elsewhere" in text
    assert "sgeq: its runtimes rest on 30 jobs of other sites (other sites' */5-16)" in text
    # without the other site: the walltime plan, as before
    alone = place(PROBE, [grid_engine_site()], now=NOW, calibration={"sgeq": thin})
    v = alone.verdict("sgeq")
    assert (v.estimated_start - NOW).total_seconds() == pytest.approx(2900.0, abs=1)
    assert not v.calibration_borrowed and "elsewhere" not in alone.explain()


def test_a_site_with_enough_jobs_of_its_own_keeps_them() -> None:
    own = SiteCalibration(samples(8, [0.5] * 10))
    other = SiteCalibration(samples(8, [0.01] * 50))
    pl = place(PROBE, [grid_engine_site()], now=NOW,
               calibration={"sgeq": own, "other": other})
    v = pl.verdict("sgeq")
    assert (v.calibration_samples, v.calibration_borrowed) == (10, False)
    # the running job past 0.098: the jobs at 0.5 end it at 500 s; each waiting one 500 s
    assert (v.estimated_start - NOW).total_seconds() == pytest.approx(400 + 500 + 500, abs=1)
