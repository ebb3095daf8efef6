"""Placement learns from the user's own jobs: where they waited longer (or shorter) than
the model predicted for them, a new job's start there is corrected by the median of that
error. A queue view misses what a scheduler does besides (per-user limits, priorities, its
cadence); the user's own jobs meet exactly that."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from test_placement import NOW, alpha, pending, running, spec, verdict
from test_placement_risk import _idle

from diamond_jupyter.calibration import (
    MIN_SAMPLES,
    OWN_SHIFT_MIN_S,
    WAIT_FLOOR_S,
    OwnError,
    PredictionSample,
    SiteCalibration,
    own_error,
    prediction_sample,
)
from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Job, JobSpec, JobState, Resources
from diamond_jupyter.placement import place
from diamond_jupyter.store import Store


def _s(predicted: float, observed: float, started: bool = True, at: float = 0.0):
    return PredictionSample(predicted, observed, started, at)


def test_the_error_is_the_median_of_what_started_and_of_what_is_overdue():
    """Started jobs count; a job still waiting counts once it has waited past its
    prediction (a lower bound on its ratio), not before (it is not due yet)."""
    started = [_s(30, 90), _s(30, 150), _s(0, 30)]  # ratios 2, 3, 1
    overdue = [_s(30, 270, started=False)]  # at least 5
    not_due = [_s(600, 60, started=False)] * 10
    few = own_error(started + not_due)  # three that say anything: too few for a ratio
    assert few is not None and few.ratio is None and few.shift_s == 60  # late 60, 120, 30
    e = own_error(started + overdue + [_s(30, 210, started=False)] + not_due)  # and 4
    assert e is not None and e.samples == MIN_SAMPLES
    assert e.ratio == pytest.approx(3.0)
    assert e.corrected(30) == pytest.approx((30 + WAIT_FLOOR_S) * 3 - WAIT_FLOOR_S)
    assert OwnError(0.25, 5).corrected(10) == 0.0  # never before now


def test_only_the_most_recent_own_jobs_count():
    old = [_s(30, 600, at=i) for i in range(100)]  # long ago the model was 10x short
    new = [_s(30, 60, at=1000 + i) for i in range(20)]  # now it is right within the floor
    e = own_error(old + new)
    assert e is not None and e.samples == 20 and e.ratio == pytest.approx(1.5)


def _placed(site: str, predicted_s: float, *, submitted_after_s: float = 1.0,
            started_after_s: float | None = None, state=JobState.PENDING,
            ended_after_s: float | None = None, model_s: float | None = None,
            decided: datetime = NOW, **spec_fields) -> Job:
    start = decided + timedelta(seconds=predicted_s)
    ranked = [{"site": site, "feasible": True, "estimated_start": start.isoformat(),
               **({"model_start": (decided + timedelta(seconds=model_s)).isoformat()}
                  if model_s is not None else {})}]
    submitted = decided + timedelta(seconds=submitted_after_s)
    return Job(id=f"{site}:{predicted_s}", site=site, native_id="1", state=state,
               spec=JobSpec(command="true", **spec_fields),
               placement={"now": decided.isoformat(), "choice": site, "ranked": ranked},
               submitted_at=submitted,
               started_at=submitted + timedelta(seconds=started_after_s)
               if started_after_s is not None else None,
               ended_at=submitted + timedelta(seconds=ended_after_s)
               if ended_after_s is not None else None)


def test_a_jobs_sample_comes_from_its_placement_and_its_start():
    now = NOW + timedelta(seconds=500)
    s = prediction_sample(_placed("beta", 60, started_after_s=200, state=JobState.RUNNING), now)
    assert s == PredictionSample(60, 200, True, (NOW + timedelta(seconds=1)).timestamp())
    waiting = prediction_sample(_placed("beta", 60), now)
    assert waiting.observed_s == pytest.approx(499) and not waiting.started
    gone = prediction_sample(_placed("beta", 60, state=JobState.CANCELLED, ended_after_s=90),
                             now)
    assert gone.observed_s == 90 and not gone.started  # a hedge's loser: waited 90 s at least
    corrected = prediction_sample(_placed("beta", 600, model_s=60, started_after_s=200), now)
    assert corrected.predicted_s == 60  # the model's own start, before any correction
    assert prediction_sample(_placed("beta", 60, submitted_after_s=3600), now) is None
    assert prediction_sample(_placed("beta", 60, state=JobState.FAILED), now) is None


def test_a_site_where_the_users_jobs_waited_longer_is_corrected_and_says_so():
    """alpha's model says 10 min (a running job holds every node); the user's last jobs
    there waited about 3x what was predicted (1,860 s for 600 s), so alpha's start moves
    out by that ratio (30 s floor) and the idle site wins by more."""
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=600) for i in range(1, 5)]
    a_cfg, a_snap = alpha(jobs, alloc=(32, 32, 32, 32))
    other = _idle("other")
    errs = [_s(600, 1860)] * MIN_SAMPLES
    cal = {"alpha": SiteCalibration([], own=errs)}
    plain = place(spec(), [(a_cfg, a_snap), other], now=NOW)
    assert plain.verdict("alpha").estimated_start == NOW + timedelta(seconds=600)
    assert cal["alpha"].own.ratio == pytest.approx((1860 + WAIT_FLOOR_S) / (600 + WAIT_FLOOR_S))
    p = place(spec(), [(a_cfg, a_snap), other], now=NOW, calibration=cal)
    a = verdict(p, "alpha")
    r = cal["alpha"].own.ratio
    assert a.own_wait_ratio == pytest.approx(r) and a.own_samples == MIN_SAMPLES
    assert a.model_start == NOW + timedelta(seconds=600)
    assert (a.estimated_start - NOW).total_seconds() == pytest.approx(
        (600 + WAIT_FLOOR_S) * r - WAIT_FLOOR_S, abs=1e-3)
    assert "OWN×(N)" in p.explain() and f"{r:.2f}({MIN_SAMPLES})" in p.explain()
    assert any("recent jobs here waited" in n for n in a.notes)
    assert p.choice == "other"


def test_a_certain_start_and_a_shorter_wait_than_predicted_are_not_corrected():
    """Idle resources with nothing queued start now whatever the history. Where the user's
    jobs started sooner than predicted, but not every one of them, the model's start
    stands: on the test bed a site whose long predictions came early and whose one short
    prediction came late got a ratio of 0.47, and its next "41 s" became 3 s; the probe
    started after 141 s."""
    idle_cfg, idle_snap = _idle("delta")
    cal = {"delta": SiteCalibration([], own=[_s(600, 6000)] * MIN_SAMPLES)}
    v = verdict(place(spec(), [(idle_cfg, idle_snap)], now=NOW, calibration=cal), "delta")
    assert v.estimated_start == NOW and v.own_wait_ratio is None
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=3600) for i in range(1, 5)]
    jobs.append(pending("p1", 1, 4, 3600))
    cfg, snap = alpha(jobs, alloc=(32, 32, 32, 32))
    # four started sooner (1/6 of the predicted wait), one later: no correction
    mixed = {"alpha": SiteCalibration([], own=[_s(3570, 570)] * (MIN_SAMPLES - 1)
                                      + [_s(11, 140)])}
    assert mixed["alpha"].own.ratio == pytest.approx(600 / 3600)
    assert mixed["alpha"].own.sooner is None
    plain = verdict(place(spec(), [(cfg, snap)], now=NOW), "alpha")
    v = verdict(place(spec(), [(cfg, snap)], now=NOW, calibration=mixed), "alpha")
    assert v.estimated_start == plain.estimated_start and v.own_wait_ratio is None
    assert v.model_start is None


def test_every_recent_job_sooner_moves_the_start_in_by_the_least_gain():
    """Where every one of the user's recent jobs on a site started sooner than predicted
    (the LLNL replay on gamma: predicted minutes away, probes started within seconds), the
    start moves in by the largest of their ratios, the least any of them gained."""
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=3600) for i in range(1, 5)]
    jobs.append(pending("p1", 1, 4, 3600))
    cfg, snap = alpha(jobs, alloc=(32, 32, 32, 32))
    own = [_s(3570, 570)] * (MIN_SAMPLES - 1) + [_s(3570, 1170)]  # 1/6 and 1/3
    cal = {"alpha": SiteCalibration([], own=own)}
    assert cal["alpha"].own.sooner == pytest.approx(1200 / 3600)
    plain = verdict(place(spec(), [(cfg, snap)], now=NOW), "alpha")
    v = verdict(place(spec(), [(cfg, snap)], now=NOW, calibration=cal), "alpha")
    model_s = (plain.estimated_start - NOW).total_seconds()
    assert model_s > 0 and v.model_start == plain.estimated_start
    assert (v.estimated_start - NOW).total_seconds() == pytest.approx(
        (model_s + 30) / 3 - 30, abs=1)
    assert v.own_wait_ratio == pytest.approx(1 / 3)
    assert any("waited 0.33x what was predicted" in n for n in v.notes)


async def test_the_federation_scores_the_users_own_placed_jobs(tmp_path):
    """The store's own jobs, submitted just after their placement, become samples of their
    site; held jobs and jobs waiting on others wait for something else and are left out."""
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="beta", scheduler="slurm", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite"))
    now = datetime.now(timezone.utc)
    try:
        for i in range(MIN_SAMPLES):
            job = _placed("beta", 30, decided=now - timedelta(seconds=300))
            fed.store.upsert_job(job.model_copy(update={"id": f"beta:{i}",
                                                        "native_id": str(i)}))
        held = _placed("beta", 30, decided=now - timedelta(seconds=300), hold=True)
        fed.store.upsert_job(held.model_copy(update={"id": "beta:h", "native_id": "h"}))
        samples = fed.prediction_samples()
        assert len(samples["beta"]) == MIN_SAMPLES
        cal = (await fed.calibration(fetch=False))["beta"]
        assert cal.own is not None and cal.own.samples == MIN_SAMPLES
        assert cal.own.ratio == pytest.approx((299 + WAIT_FLOOR_S) / (30 + WAIT_FLOOR_S),
                                              rel=0.02)
    finally:
        await fed.close()


def test_a_job_with_a_walltime_only_spec_is_scored_too():
    job = _placed("beta", 30, started_after_s=45, state=JobState.COMPLETED,
                  resources=Resources(walltime_s=60))
    assert prediction_sample(job, NOW + timedelta(hours=1)).observed_s == 45


async def test_a_gang_member_is_ready_by_the_model_not_by_past_waits():
    """A gang is released when every member's resources are free now; the user's past
    waits only forecast a queued job's start, and would hold a gang back for as long as
    they are recent. A member whose model start is now is ready, whatever the correction;
    one whose model start is later is not."""
    from types import SimpleNamespace

    from diamond_jupyter.federation_workflow import _Ops
    from diamond_jupyter.placement import Placement, SiteVerdict

    def placement(model_s: float, corrected_s: float) -> Placement:
        v = SiteVerdict(site="beta", feasible=True, verdict="BUSY",
                        estimated_start=NOW + timedelta(seconds=corrected_s),
                        raw_start=NOW + timedelta(seconds=model_s),
                        model_start=NOW + timedelta(seconds=model_s), own_wait_ratio=2.0)
        return Placement(policy="diamond", choice="beta", now=NOW, ranked=[v])

    for model_s, ready in ((0.0, True), (60.0, False)):
        async def place(spec, *, sites, max_age_s, model_s=model_s):
            return placement(model_s, (model_s + WAIT_FLOOR_S) * 2 - WAIT_FLOOR_S)
        fed = SimpleNamespace(sites={"beta": object()}, place=place, store=None)
        job = _placed("beta", 0).model_copy(update={"spec": JobSpec(command="true")})
        assert await _Ops(fed).can_start_now(job) is ready


def test_a_job_still_waiting_leaves_no_unanimous_sooner_start_to_pull_in_by():
    """`sooner_started` (measured by `benchmarks.decision_replay`, not used by placement):
    every recent job started sooner, and none still waits. A job not yet due says nothing
    of the median, but it has not started sooner either."""
    early = [_s(120, 10, at=float(k)) for k in range(5)]
    all_in = own_error(early)
    assert all_in.sooner == all_in.sooner_started == pytest.approx(40 / 150)
    one_waits = own_error([*early, _s(120, 12, started=False, at=9.0)])
    assert one_waits.samples == 5 and one_waits.sooner == pytest.approx(40 / 150)
    assert one_waits.sooner_started is None


# --- from 1-4 jobs: seconds, not a ratio -------------------------------------------------

def test_one_late_job_moves_its_site_by_its_lateness_in_seconds():
    e = own_error([_s(30, 100)])
    assert e == OwnError(None, 1, shift_s=70.0)
    assert e.corrected(200) == 200  # no ratio to scale by
    assert own_error([_s(30, 30 + OWN_SHIFT_MIN_S)]) is None  # within the tolerance


def test_three_and_four_jobs_give_the_median_of_the_late_ones():
    """The median of how much later the late jobs started (the rule replayed in
    benchmarks/README.md, miss_classes); jobs that started sooner are left out of it, and
    do not stop it: they were not all sooner."""
    three = own_error([_s(60, 100, at=0), _s(60, 300, at=1), _s(60, 20, at=2)])
    assert three.samples == 2 and three.shift_s == pytest.approx((40 + 240) / 2)
    four = [_s(0, 50, at=0), _s(100, 190, at=1), _s(10, 500, at=2), _s(300, 0, at=3)]
    e = own_error(four)
    assert e.ratio is None and e.samples == 3 and e.shift_s == 90  # 50, 90, 490
    assert own_error([*four, _s(0, 40, at=4)]).shift_s is None  # five: the ratio's turn


def test_a_job_still_waiting_counts_by_its_wait_so_far_once_overdue():
    assert own_error([_s(60, 45, started=False)]) is None  # not due: says nothing
    overdue = own_error([_s(60, 180, started=False)])
    assert overdue.shift_s == 120 and overdue.samples == 1


def test_only_all_sooner_pulls_in_and_by_the_least_gain():
    """Where every recent job started sooner, the start moves in by the least any gained;
    one that started late or on time, or one still waiting, stops it."""
    sooner = own_error([_s(600, 100, at=0), _s(600, 450, at=1)])
    assert sooner == OwnError(None, 2, shift_s=-150.0)
    assert own_error([_s(600, 100, at=0), _s(600, 595, at=1)]) is None  # 5 s: no gain
    waits = own_error([_s(600, 100, at=0), _s(600, 300, at=1), _s(900, 10, started=False,
                                                                   at=2)])
    assert waits is None  # the one waiting has not started sooner yet
    mixed = own_error([_s(600, 100, at=0), _s(60, 200, at=1)])
    assert mixed.shift_s == 140  # one late: later by it, not sooner


def _busy(name: str, left_s: float):
    """A site whose four nodes are held by running jobs for `left_s` more seconds."""
    cfg, snap = alpha([running(f"r{i}", f"a{i}", 32, left_s=left_s) for i in range(1, 5)],
                      alloc=(32, 32, 32, 32))
    return cfg.model_copy(update={"name": name}), snap.model_copy(update={"site": name})


def test_a_few_late_own_jobs_rank_their_site_behind_another_and_explain_says_so():
    """near's model starts the job in 600 s, far's in 900 s. The user's two jobs on near
    started 480 s and 520 s later than predicted: near moves 500 s out, behind far."""
    sites = [_busy("near", 600), _busy("far", 900)]
    plain = place(spec(), sites, now=NOW)
    assert plain.choice == "near"
    cal = {"near": SiteCalibration([], own=[_s(60, 540, at=0), _s(60, 580, at=1)])}
    p = place(spec(), sites, now=NOW, calibration=cal)
    near = verdict(p, "near")
    assert p.choice == "far"
    assert near.model_start == plain.verdict("near").estimated_start
    assert (near.estimated_start - near.model_start).total_seconds() == 500
    assert near.own_shift_s == 500 and near.own_samples == 2 and near.own_wait_ratio is None
    assert "near: own jobs here started 500 s later than predicted (2 jobs)" in p.explain()
    assert any(n.startswith("own jobs here started 500 s later") for n in near.notes)


def test_a_few_own_jobs_all_sooner_pull_their_site_ahead():
    sites = [_busy("near", 600), _busy("far", 900)]
    cal = {"far": SiteCalibration([], own=[_s(900, 400, at=0), _s(900, 500, at=1),
                                           _s(900, 450, at=2)])}
    assert place(spec(), sites, now=NOW).choice == "near"
    p = place(spec(), sites, now=NOW, calibration=cal)
    far = verdict(p, "far")
    assert p.choice == "far"
    assert (far.model_start - far.estimated_start).total_seconds() == 400  # least gain
    assert "far: own jobs here started 400 s sooner than predicted (3 jobs)" in p.explain()


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
async def test_the_federation_hands_on_the_samples_the_correction_rests_on(tmp_path,
                                                                           monkeypatch,
                                                                           seed):
    """Only the OWN_ERROR_SAMPLES most recently submitted jobs per site are made samples (a
    sample per queued job, each to now, made every submit slower as they grew): exactly
    the ones, in the order, `own_error` takes from every recent job's sample, ties in the
    submission times included."""
    import random

    from diamond_jupyter import federation
    from diamond_jupyter.calibration import OWN_ERROR_SAMPLES

    rng = random.Random(seed)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    monkeypatch.setattr(federation, "utcnow", lambda: now)
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name=n, scheduler="slurm", transport=TransportConfig(kind="local"))
        for n in ("alpha", "beta")]), store=Store(tmp_path / "s.sqlite"))
    try:
        for i in range(120):
            site = rng.choice(["alpha", "beta"])
            started = rng.choice([None, rng.uniform(0, 400)])
            job = _placed(site, rng.uniform(0, 300), decided=now - timedelta(
                seconds=rng.choice([100, 200, 300, 400])), started_after_s=started,
                submitted_after_s=rng.choice([1.0, 2.0]), hold=rng.random() < 0.1)
            fed.store.upsert_job(job.model_copy(update={"id": f"{site}:{i}",
                                                        "native_id": str(i)}))
        every: dict[str, list[PredictionSample]] = {}  # as read before: a sample each
        for job in fed.store.list_jobs(limit=500, read_only=True):
            if not job.spec.hold and (s := prediction_sample(job, now)) is not None:
                every.setdefault(job.site, []).append(s)
        got = fed.prediction_samples()
        assert set(got) == set(every) == {"alpha", "beta"}
        for site, samples in every.items():
            assert len(samples) > OWN_ERROR_SAMPLES == len(got[site])
            assert sorted(got[site], key=lambda s: s.submitted_at) == \
                sorted(samples, key=lambda s: s.submitted_at)[-OWN_ERROR_SAMPLES:]
            assert own_error(got[site]) == own_error(samples)
    finally:
        await fed.close()


# --- OwnError.applied: the one place the correction is applied --------------------------

def test_applied_moves_start_and_bound_by_the_ratio_the_engine_takes():
    """A later ratio always, a sooner one only as `sooner` (every job started sooner):
    the engine and the decision replay both apply it through `applied`."""
    late = OwnError(3.0, 5)
    assert late.engine_ratio() == 3.0
    start, bound = late.applied(30, 60, late.engine_ratio())
    assert start == pytest.approx(late.corrected(30, 3.0))
    assert bound == pytest.approx(late.corrected(60, 3.0))
    assert OwnError(0.5, 5).engine_ratio() is None  # not every one sooner: no pull-in
    all_sooner = OwnError(0.4, 5, sooner=0.6)
    assert all_sooner.engine_ratio() == 0.6
    start, bound = all_sooner.applied(600, 900, 0.6, keep_sooner_bound=True)
    assert start == pytest.approx(all_sooner.corrected(600, 0.6)) and bound == 900
    assert late.applied(30, 10, 3.0)[1] == late.applied(30, 10, 3.0)[0]  # bound >= start
    assert late.applied(30, None, None) == (30, None)  # no ratio given, none of seconds


def test_applied_moves_by_seconds_without_a_ratio():
    later = OwnError(None, 2, shift_s=70.0)
    assert later.applied(100, 200, None) == (170.0, 270.0)
    sooner = OwnError(None, 2, shift_s=-150.0)
    assert sooner.applied(100, 400, None) == (0.0, 250.0)  # never before now
    assert sooner.applied(100, 400, None, keep_sooner_bound=True) == (0.0, 400)
    assert sooner.applied(100, 50, None) == (0.0, 0.0)  # the bound never before the start
