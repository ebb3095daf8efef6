"""Calibration of jobs whose view names no partition: a Grid Engine job waiting for any queue
(qstat names a queue only once the job runs; the accounting names the one it ran in).

Before, such a job matched no class of its partition and took the site's mix of every size:
on the test bed's Grid Engine site (`depth_misleads` seed 103), 1-16 slot jobs that ran
about 0.5% of their requests were each planned at the share the site's 8-slot jobs ran (the
user's 60 s probes of earlier runs, about 40%), and the site was predicted 380-1,045 s away
where it started every probe in 23-38 s (benchmarks/README.md, issue 15)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from diamond_jupyter.calibration import RunSample, SiteCalibration
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.model import (
    JobSpec,
    JobState,
    JobStatus,
    Node,
    Partition,
    Resources,
    SiteSnapshot,
)
from diamond_jupyter.placement import place

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def history() -> list[RunSample]:
    # all.q's accounting: six 8-slot jobs that ran 1% of their 1000 s request, and thirty
    # 1-slot jobs that ran 90% of a 60 s one (the site's mix: mean (6 x 0.01 + 30 x 0.9) / 36)
    return [RunSample("all.q", 8, 1000.0, 10.0, float(i)) for i in range(6)] + \
        [RunSample("all.q", 1, 60.0, 54.0, float(10 + i)) for i in range(30)]


def test_a_job_without_a_partition_is_classed_by_its_size() -> None:
    cal = SiteCalibration(history())
    r = cal.ratio(None, 8)
    assert (r.key, r.samples, r.mean) == ("*/5-16", 6, pytest.approx(0.01))
    r = cal.ratio(None, 1)
    assert (r.key, r.samples, r.mean) == ("*/1", 30, pytest.approx(0.9))
    # no job of its size anywhere: the site's
    r = cal.ratio(None, 32)
    assert (r.key, r.samples, r.mean) == ("*", 36, pytest.approx((0.06 + 27) / 36))
    # a job of a named partition keeps its partition's classes, then the site's
    assert cal.ratio("all.q", 8).key == "all.q/5-16"
    assert cal.ratio("short.q", 8).key == "*"


def grid_engine_site(queued: int) -> tuple[SiteConfig, SiteSnapshot]:
    """One 8-slot host, idle; `queued` 8-slot jobs waiting for any queue (no partition),
    each asking 1000 s."""
    node = Node(name="s1", cpus=8, cpus_allocated=0, state="idle", partitions=["all.q"])
    jobs = [JobStatus(native_id=str(100 + i), state=JobState.PENDING, cpus=8,
                      walltime_s=1000.0, reason="") for i in range(queued)]
    return SiteConfig(name="sgeq", scheduler="sge"), SiteSnapshot(
        site="sgeq", taken_at=NOW, nodes=[node], jobs=jobs,
        partitions=[Partition(name="all.q", default=True)], backfill="none")


def test_grid_engine_queue_of_jobs_without_a_queue_runs_at_their_sizes_share() -> None:
    # Worked by hand: the two waiting 8-slot jobs go before the probe (8 slots, asked after
    # them), one after the other on the one host. Their size's jobs ran 1% of 1000 s: 10 s
    # each, so the probe starts at 20 s. With the site's mix (0.7517 of 1000 s each) it
    # started at 1,503 s; with their walltimes at 2,000 s (the raw plan).
    probe = JobSpec(name="probe", command="sleep 20",
                    resources=Resources(nodes=1, tasks=1, cpus_per_task=8, walltime_s=60))
    pl = place(probe, [grid_engine_site(2)], now=NOW, calibration={"sgeq": SiteCalibration(
        history())})
    v = pl.verdict("sgeq")
    assert v is not None and v.feasible, pl.explain()
    assert (v.raw_start - NOW).total_seconds() == pytest.approx(2000.0)
    assert (v.estimated_start - NOW).total_seconds() == pytest.approx(20.0, abs=0.5)
