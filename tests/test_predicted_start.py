"""The start a placement predicted, as every face shows it: the job's JSON, the kernel's job
card (while the job waits) and the agent's plan text."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from test_placement import NOW, H, busy_alpha, gamma, pending, spec

from diamond_jupyter.calibration import SiteCalibration, WaitSample
from diamond_jupyter.federation_plan import describe_plan
from diamond_jupyter.kernel.jobcard import render_html, render_text, waiting_for
from diamond_jupyter.model import Job, JobState, job_json, predicted_start
from diamond_jupyter.placement import place


def placed_job(state: JobState = JobState.PENDING, **kw) -> Job:
    """A job placed on alpha, whose scheduler said 2 h and whose estimates come true after
    a quarter of the wait (so: ≈ 30 min, 90% < 42 min)."""
    cfg, snap = busy_alpha(left_s=3 * H)
    snap.jobs += [pending("w1", 1, 32, 4 * H, part="compute", est=NOW + timedelta(hours=1))]
    waits = [WaitSample("compute", 32, 1000.0, r * 1000.0, float(i))
             for i, r in enumerate([0.2, 0.25, 0.3, 0.35] * 10)]
    pl = place(spec(), [(cfg, snap)], now=NOW, estimates={"alpha": NOW + timedelta(hours=2)},
               calibration={"alpha": SiteCalibration([], wait=waits)})
    return Job(id="alpha:7", site="alpha", native_id="7", state=state, submitted_at=NOW,
               placement=pl.model_dump(mode="json"), **kw)


def test_the_prediction_is_counted_from_the_decision_or_from_now():
    job = placed_job()
    p = predicted_start(job)
    assert p["text"] == "≈ 33 min (90%: < 42 min)"
    assert datetime.fromisoformat(p["at"]) == NOW + timedelta(hours=2 * 0.275)
    later = predicted_start(job, NOW + timedelta(minutes=20))
    assert later["text"] == "≈ 13 min (90%: < 22 min)" and later["at"] == p["at"]
    assert job_json(job)["predicted_start"] == p


def test_no_prediction_without_a_placement_or_for_another_site():
    assert predicted_start(Job(id="alpha:1", site="alpha")) is None
    assert job_json(Job(id="alpha:1", site="alpha"))["predicted_start"] is None
    pl = place(spec(), [busy_alpha(), gamma()], now=NOW).model_dump(mode="json")
    infeasible = {**pl, "ranked": [dict(v, feasible=False) for v in pl["ranked"]]}
    assert predicted_start(Job(id="gamma:1", site="gamma", placement=infeasible)) is None


def test_the_card_shows_the_prediction_while_the_job_waits_only():
    job = placed_job()
    now = datetime.now(timezone.utc)
    assert waiting_for(job, NOW) == "≈ 33 min (90%: < 42 min)"
    # the card counts from the time it is drawn (here long after NOW: "now")
    assert "predicted start ≈ 0 s" in render_text(job, {})
    assert "data-diamond-predicted" in render_html(job, {})
    started = placed_job(JobState.RUNNING, started_at=now)
    assert waiting_for(started) is None and "predicted start" not in render_text(started, {})


def test_the_plan_text_says_when_the_job_should_start():
    text = describe_plan({"action": "submit", "site": "alpha", "scheduler": "slurm",
                          "partition": "compute",
                          "predicted_start": "≈ 3 min (90%: < 11 min)"})
    assert "predicted_start: ≈ 3 min (90%: < 11 min)" in text


def test_a_job_sent_to_a_site_by_name_gets_that_sites_prediction():
    """An explicit site is placed alone just after the submit; the job's JSON, card and
    events show its prediction, and the card still says the site was chosen by name."""
    from diamond_jupyter.federation_predict import explicit_placement
    from diamond_jupyter.kernel.jobcard import why

    pl = place(spec(), [busy_alpha()], now=NOW)
    recorded = explicit_placement(pl, "alpha")
    assert recorded["policy"] == "explicit" and recorded["choice"] == "alpha"
    job = Job(id="alpha:7", site="alpha", native_id="7", state=JobState.PENDING,
              submitted_at=NOW, placement=recorded)
    p = predicted_start(job)
    assert p is not None and p["text"] == pl.predicted_start("alpha")
    assert job_json(job)["predicted_start"] == p
    assert why(job) == "chosen explicitly (--site)"
    assert "predicted start" in render_text(job, {})
    assert explicit_placement(pl, "gamma") is None  # no estimate there: nothing recorded


def test_the_event_that_records_an_explicit_prediction_carries_it(tmp_path):
    from types import SimpleNamespace

    from diamond_jupyter.federation_predict import explicit_placement
    from diamond_jupyter.server.events import to_emission
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite")
    store.record_intent("alpha", "tok1", spec())
    job = store.bind_native_id("tok1", "7")
    recorded = explicit_placement(place(spec(), [busy_alpha()], now=NOW), "alpha")
    said = predicted_start(job.model_copy(update={"placement": recorded}))
    ev = store.set_placement(job.id, recorded, {"predicted_start": said})
    assert store.get_job(job.id).placement == recorded
    fed = SimpleNamespace(job=store.get_job)
    schema, payload = to_emission(ev, fed)
    assert schema.endswith("/job-state") and payload["kind"] == "job.updated"
    assert payload["predicted_start"] == said and payload["placement"]["policy"] == "explicit"


def test_where_the_schedulers_estimate_is_all_there_is_the_prediction_says_so():
    """No calibration at the site: the scheduler's own estimate, worded as such, with its
    source, in the job's JSON (what `diamond status --json` prints) and on its card."""
    cfg, snap = busy_alpha(left_s=3 * H)
    pl = place(spec(), [(cfg, snap)], now=NOW, estimates={"alpha": NOW + timedelta(hours=2)})
    assert pl.verdict("alpha").start_source == "scheduler"
    job = Job(id="alpha:7", site="alpha", native_id="7", state=JobState.PENDING,
              submitted_at=NOW, placement=pl.model_dump(mode="json"))
    p = predicted_start(job)
    assert p["source"] == "scheduler" and p["bound"] is None
    assert p["text"] == "≈ 2.0 h (scheduler's estimate)" == pl.predicted_start("alpha")
    assert job_json(job)["predicted_start"] == p
    assert waiting_for(job, NOW) == p["text"]
    calibrated = predicted_start(placed_job())
    assert calibrated["source"] == "calibrated" and "scheduler" not in calibrated["text"]
