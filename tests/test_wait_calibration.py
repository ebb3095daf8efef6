"""Wait calibration: the scheduler's start estimates against the actual starts, noted from
queue views and accounting into the store, and the placement's use of them."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_placement import NOW, H, busy_alpha, pending, spec, verdict

from diamond_jupyter.calibration import (
    ESTIMATE_BAND_LIMITS_S,
    MAX_WAIT_RATIO,
    MIN_RATIO,
    WAIT_FLOOR_S,
    SiteCalibration,
    WaitSample,
    estimate_band,
    wait_basis,
    wait_samples,
)
from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobState, JobStatus, SiteSnapshot
from diamond_jupyter.placement import place
from diamond_jupyter.store import Store


def waits(ratios: list[float], est_s: float = 1000.0, part: str = "compute",
          cpus: int = 32) -> list[WaitSample]:
    return [WaitSample(part, cpus, est_s, r * est_s, float(i)) for i, r in enumerate(ratios)]


@given(st.floats(0, 1e6), st.floats(0, 1e6))
def test_a_wait_ratio_is_bounded_and_short_estimates_do_not_explode(est, actual):
    r = WaitSample(None, 1, est, actual).ratio
    assert MIN_RATIO <= r <= MAX_WAIT_RATIO
    if est >= WAIT_FLOOR_S and MIN_RATIO <= actual / est <= MAX_WAIT_RATIO:
        assert r == pytest.approx(actual / est)


def test_rows_become_samples_from_the_moment_the_estimate_was_seen():
    rows = [("p", 4, 100.0, 700.0, 250.0),   # estimated 600 s, waited 150 s
            ("p", 4, 100.0, 700.0, 50.0),    # started before it was seen: another job
            ("p", 4, 100.0, 90.0, 300.0)]    # an estimate in the past: no estimate
    [s] = wait_samples(rows)
    assert (s.estimated_s, s.actual_s, s.ratio) == (600.0, 150.0, 0.25)


def _scheduler_site():
    """alpha full for 3 h; its scheduler says a new job starts in 2 h."""
    cfg, snap = busy_alpha(left_s=3 * H)
    snap.jobs += [pending("w1", 1, 32, 4 * H, part="compute", est=NOW + timedelta(hours=1))]
    return cfg, snap


def test_the_schedulers_estimate_is_corrected_by_how_its_estimates_turned_out():
    cfg, snap = _scheduler_site()
    est = {"alpha": NOW + timedelta(hours=2)}
    raw = verdict(place(spec(), [(cfg, snap)], now=NOW, estimates=est), "alpha")
    assert raw.start_source == "scheduler" and raw.wait_ratio is None
    assert raw.estimated_start == NOW + timedelta(hours=2)
    # here the scheduler's estimates came true after a quarter of the wait, 40 times
    cal = SiteCalibration([], wait=waits([0.2, 0.25, 0.3, 0.35] * 10))
    p = place(spec(), [(cfg, snap)], now=NOW, estimates=est, calibration={"alpha": cal})
    v = verdict(p, "alpha")
    assert v.start_source == "calibrated" and v.raw_start == NOW + timedelta(hours=2)
    assert v.wait_samples == 40 and v.wait_ratio == pytest.approx(0.275)
    assert v.estimated_start == NOW + timedelta(hours=2 * 0.275)
    assert v.estimated_start < v.start_bound <= NOW + timedelta(hours=2 * 0.35)
    assert "WAIT×(N)" in p.explain() and "0.28(40)" in p.explain()


def test_few_wait_samples_correct_the_median_but_give_no_bound():
    cfg, snap = _scheduler_site()
    cal = SiteCalibration([], wait=waits([0.5] * 6))
    v = verdict(place(spec(), [(cfg, snap)], now=NOW, estimates={"alpha": NOW + timedelta(
        hours=2)}, calibration={"alpha": cal}), "alpha")
    assert v.estimated_start == NOW + timedelta(hours=1) and v.start_bound is None


def test_a_simulated_start_is_not_scaled_by_the_schedulers_ratio():
    cfg, snap = busy_alpha(left_s=3 * H)  # no scheduler estimate anywhere
    cal = SiteCalibration([], wait=waits([0.1] * 40))
    v = verdict(place(spec(), [(cfg, snap)], now=NOW, calibration={"alpha": cal}), "alpha")
    assert v.start_source == "simulation" and v.estimated_start == NOW + timedelta(hours=3)
    assert v.wait_ratio == pytest.approx(0.1)  # shown, not applied


def test_store_keeps_the_first_estimate_and_matches_starts(tmp_path):
    s = Store(tmp_path / "s.db")
    now = time.time()
    assert s.note_wait_estimates("a", [("1", "p", 4, now, now + 600)]) == 1
    assert s.note_wait_estimates("a", [("1", "p", 4, now + 60, now + 900),
                                       ("2", "p", 4, now + 60, now + 120)]) == 1
    assert s.open_wait_ids("a") == {"1", "2"}
    assert s.note_starts("a", {"1": now + 150, "9": now}) == 1
    assert s.note_starts("a", {"1": now + 999}) == 0  # a start is noted once
    assert s.wait_samples("a") == [("p", 4, now, now + 600, now + 150)]
    assert s.open_wait_ids("a") == {"2"} and s.wait_samples("b") == []


async def test_federation_notes_views_once_and_learns_starts(tmp_path):
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite3"))
    try:
        t0 = datetime.now(timezone.utc).replace(microsecond=0)
        view = SiteSnapshot(site="alpha", taken_at=t0, jobs=[
            JobStatus(native_id="7", state=JobState.PENDING, partition="p", cpus=4,
                      estimated_start=t0 + timedelta(seconds=1000)),
            JobStatus(native_id="8", state=JobState.PENDING, partition="p", cpus=4)])
        fed.note_waits({"alpha": view})
        fed.note_waits({"alpha": view})  # the same view again: nothing new
        assert fed.store.open_wait_ids("alpha") == {"7"}
        later = SiteSnapshot(site="alpha", taken_at=t0 + timedelta(seconds=400), jobs=[
            JobStatus(native_id="7", state=JobState.RUNNING, partition="p", cpus=4,
                      started_at=t0 + timedelta(seconds=250))])
        fed.note_waits({"alpha": later})
        [sample] = fed.wait_calibration_samples("alpha", 0.0)
        assert (sample.estimated_s, sample.actual_s) == (1000.0, 250.0)
        assert sample.ratio == 0.25
    finally:
        await fed.close()


async def test_the_view_of_a_job_the_engine_heard_end_is_known_stale(tmp_path):
    """A view taken after the store recorded a job's end still lists it running (Grid Engine
    does for a moment): `ended_in_view` names it. A running job whose native id was reused
    (another start) and a job still running in the store are not named."""
    from diamond_jupyter.model import Job

    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite3"))
    try:
        t0 = datetime.now(timezone.utc).replace(microsecond=0)
        for nid, state, end in (("5", JobState.COMPLETED, t0 + timedelta(seconds=20)),
                                ("6", JobState.COMPLETED, t0 + timedelta(seconds=20)),
                                ("7", JobState.RUNNING, None)):
            fed.store.upsert_job(Job(id=f"alpha:{nid}", site="alpha", native_id=nid,
                                     state=state, started_at=t0, ended_at=end))
        view = SiteSnapshot(site="alpha", taken_at=t0 + timedelta(seconds=21), jobs=[
            JobStatus(native_id="5", state=JobState.RUNNING, started_at=t0),
            JobStatus(native_id="6", state=JobState.RUNNING,  # the id, reused an hour later
                      started_at=t0 + timedelta(hours=1)),
            JobStatus(native_id="7", state=JobState.RUNNING, started_at=t0)])
        assert fed.ended_in_view({"alpha": view}) == {"alpha": {"5"}}
        earlier = view.model_copy(update={"taken_at": t0 + timedelta(seconds=10)})
        assert fed.ended_in_view({"alpha": earlier}) == {}  # the view predates the end
    finally:
        await fed.close()


def test_explain_says_what_the_calibrated_estimate_rests_on():
    cfg, snap = _scheduler_site()
    cal = SiteCalibration([], wait=waits([0.2, 0.25, 0.3, 0.35] * 10))
    p = place(spec(), [(cfg, snap)], now=NOW, estimates={"alpha": NOW + timedelta(hours=2)},
              calibration={"alpha": cal})
    # the job asks another size than the 40 jobs: their partition's ratio, of any size
    assert ("alpha: scheduler's estimate 7,200 s: calibrated by 40 jobs of any size, any "
            "estimate (wait ratio 0.28)") in p.explain()


def test_wait_samples_banded_by_the_size_of_the_estimate():
    short = waits([0.5, 0.6, 0.4, 0.5, 0.55] * 6, est_s=200.0)  # 30 under 300 s
    long_ = [replace(w, ended_at=0.5 + 2.5 * i) for i, w in
             enumerate(waits([0.04, 0.05, 0.06] * 4, est_s=2000.0))]  # 12 of 1,000-3,000 s
    few = waits([3.0] * 4, est_s=5000.0)  # 4 of 3,000-10,000 s: too few for a band
    samples = short + long_ + few
    plain = SiteCalibration(samples)
    banded = SiteCalibration(samples, estimate_bands=ESTIMATE_BAND_LIMITS_S, min_band=10)
    cls = plain.ratio("compute", 32)
    assert banded.ratio("compute", 32, 200.0).median == pytest.approx(0.5)
    r = banded.ratio("compute", 32, 1750.0)
    assert r.median == pytest.approx(0.05) and r.samples == 12
    # 12 jobs are too few for a QBETS bound of their own: the class's bound holds
    assert r.bounded and r.upper == cls.upper
    assert banded.ratio("compute", 32, 5000.0) == cls  # too few: the class decides
    assert wait_basis(1750.0, r) == (
        "scheduler's estimate 1,750 s: calibrated by 12 jobs of 17-64 CPUs with estimates of "
        "1,000-3,000 s (wait ratio 0.05)")
    assert estimate_band(20.0) == "<300s" and estimate_band(30000.0) == ">=30000s"
