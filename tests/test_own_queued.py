"""A site where the user's own earlier job (no larger) still queues starts a new one no
sooner than OWN_QUEUED_FACTOR times that job's wait so far (issue 15, the rounds whose
chosen site never started the probe): the calibration keeps the user's queued jobs, the
placement moves the start and says so, and the recorded round where it picks the fastest
site is replayed."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from test_placement import NOW, alpha, pending, running, spec, verdict
from test_placement_risk import _idle

from benchmarks import decision_replay as dr
from diamond_jupyter.calibration import OWN_QUEUED_MIN_S, PredictionSample, SiteCalibration
from diamond_jupyter.model import JobState
from diamond_jupyter.placement import OWN_QUEUED_FACTOR, place

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _queued(age_s: float, cpus: int | None, waiting: bool = True) -> PredictionSample:
    return PredictionSample(predicted_s=5.0, observed_s=age_s, started=False,
                            submitted_at=NOW.timestamp() - age_s, waiting=waiting, cpus=cpus)


def test_the_oldest_queued_job_no_larger_is_the_one_a_new_job_queues_behind():
    cal = SiteCalibration([], own=[_queued(30, 4), _queued(90, 16), _queued(60, None),
                                   _queued(300, 4, waiting=False)])  # the last: cancelled
    assert cal.own_queued_ahead_s(4) == 60  # the 16-CPU job does not hold a 4-CPU one
    assert cal.own_queued_ahead_s(16) == 90
    assert SiteCalibration([], own=[_queued(30, 4, waiting=False)]).own_queued_ahead_s(4) \
        is None
    # queued for under a scheduler's cycle: no evidence yet
    assert SiteCalibration([], own=[_queued(OWN_QUEUED_MIN_S - 1, 4)]).own_queued_ahead_s(4) \
        is None


def test_a_queued_job_waiting_on_itself_holds_no_new_job_back():
    """A job of the user's held, waiting on a dependency or for its begin time has not
    started for its own reason, not the queue's: a new job does not queue behind it."""
    from test_own_error import _placed

    from diamond_jupyter.calibration import prediction_sample
    from diamond_jupyter.model import Dependency

    later = NOW + timedelta(hours=1)
    plain = prediction_sample(_placed("alpha", 60), later)
    assert SiteCalibration([], own=[plain]).own_queued_ahead_s(64) is not None
    gated = [_placed("alpha", 60, dependencies=[Dependency(kind="afterok", job_ids=["7"])]),
             _placed("alpha", 60, begin="tomorrow"), _placed("alpha", 60, hold=True),
             _placed("alpha", 60).model_copy(update={"reason": "JobHeldAdmin"}),
             _placed("alpha", 60).model_copy(update={"reason": "Dependency"})]
    for job in gated:
        sample = prediction_sample(job, later)
        assert SiteCalibration([], own=[sample]).own_queued_ahead_s(64) is None, job
    # once it has started its wait is a sample as before
    ran = prediction_sample(_placed("alpha", 60, begin="tomorrow", started_after_s=90,
                                    state=JobState.RUNNING), later)
    assert ran is not None and ran.started and ran.observed_s == 90


def test_a_site_holding_the_users_queued_job_ranks_behind_one_that_does_not():
    """alpha's plan starts the job in 60 s (its nodes' running jobs end then) and the other
    site in 100 s; the user's job of the same size queued on alpha 40 s ago has not started:
    alpha's start becomes 3 x 40 s, past the other's, and explain says why."""
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=60) for i in range(1, 5)]
    jobs.append(pending("mine", 1, 4, 3600))
    a_cfg, a_snap = alpha(jobs, alloc=(32, 32, 32, 32))
    b_jobs = [running(f"b{i}", f"a{i}", 32, left_s=100) for i in range(1, 5)]
    b_cfg, b_snap = alpha(b_jobs, alloc=(32, 32, 32, 32))
    b_cfg = b_cfg.model_copy(update={"name": "beta"})
    b_snap = b_snap.model_copy(update={"site": "beta"})
    sites = [(a_cfg, a_snap), (b_cfg, b_snap)]
    plain = place(spec(), sites, now=NOW)
    assert plain.choice == "alpha"
    cal = {"alpha": SiteCalibration([], own=[_queued(40, 4)])}
    p = place(spec(), sites, now=NOW, calibration=cal)
    a = verdict(p, "alpha")
    assert a.own_queued_s == 40
    assert a.estimated_start == NOW + timedelta(seconds=OWN_QUEUED_FACTOR * 40)
    assert a.start_bound is None or a.start_bound >= a.estimated_start
    assert p.choice == "beta"
    assert "alpha: your job queued here 0:00:40 ago (no larger than this one) has not " \
           "started: this one queues behind it" in p.explain()
    # a larger queued job of the user's does not hold this one back
    big = {"alpha": SiteCalibration([], own=[_queued(40, 64)])}
    assert place(spec(), sites, now=NOW, calibration=big).choice == "alpha"


def test_an_idle_site_with_nothing_queued_still_starts_now():
    cfg, snap = _idle("delta")
    cal = {"delta": SiteCalibration([], own=[_queued(120, 4)])}
    v = verdict(place(spec(), [(cfg, snap)], now=NOW, calibration=cal), "delta")
    assert v.estimated_start == NOW and v.own_queued_s is None


def test_recorded_round_the_floor_moves_off_a_site_that_never_started():
    """Real logs, seed 131 round 3: the engine's estimates put delta (KTH) first at 77 s
    with the run's probe of round 0 still queued there after 36 s; delta never started the
    probe within 240 s, gamma (LLNL, 102 s, its probe of round 2 queued 12 s) started it
    first. With the floor delta is at 108 s, behind gamma."""
    run = json.loads((RESULTS / "placement-KTH@alpha+HPC2N@beta+LLNL@gamma+KTH@delta-seed131"
                      ".json").read_text())
    r = next(r for r in dr.scored_rounds(run) if r["round"] == 3)
    est = dr.own_corrected(run, r, "unanimous")
    for site, e in est.items():
        e["own_queued_s"] = dr.own_queued_at(run, 3, site)
    assert est["delta"]["own_queued_s"] == 36 and est["gamma"]["own_queued_s"] == 12
    assert dr._ranked(est)[0] == "delta" and "delta" in r["censored"]
    floored = dr.own_queued_floor(OWN_QUEUED_FACTOR)(est)
    assert floored[0] == "gamma" == r["fastest"]
    assert est["delta"]["start_s"] == pytest.approx(77, abs=1)  # the ranking copies
