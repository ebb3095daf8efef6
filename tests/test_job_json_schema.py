"""Every face's job JSON (`model.job_json`) is what server/openapi.yaml says a Job is: a
field added to the Job model without the API description fails here, not only in the
test-bed REST tests."""

from __future__ import annotations

from datetime import datetime, timezone

import jsonschema
import yaml

from diamond_jupyter.model import Job, JobSpec, JobState, Resources, job_json
from diamond_jupyter.server.handlers import OPENAPI


def _validate(data: dict) -> None:
    doc = yaml.safe_load(OPENAPI.read_text())
    jsonschema.validate(data, {**doc, "$ref": "#/components/schemas/Job"},
                        cls=jsonschema.Draft202012Validator)


def test_a_placed_hedged_job_matches_the_api_description():
    at = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
    job = Job(id="alpha:7", site="alpha", native_id="7", state=JobState.PENDING,
              submitted_at=at, hedge_group="g1", reused_by=None,
              spec=JobSpec(script="true", resources=Resources(walltime_s=600)),
              placement={"now": at.isoformat(), "ranked": [
                  {"site": "alpha", "feasible": True,
                   "estimated_start": "2026-12-01T10:03:00+00:00",
                   "start_bound": "2026-12-01T10:11:00+00:00"}]})
    data = job_json(job)
    assert data["predicted_start"]["text"] and data["time_limit_s"] == 600
    _validate(data)


def test_a_bare_job_matches_the_api_description():
    data = job_json(Job(id="beta:pending-abc", site="beta"))
    assert data["predicted_start"] is None
    _validate(data)


def test_an_arrays_tasks_are_counted_by_state_and_match_the_api_description():
    """A job array whose tasks its scheduler listed one by one (a Flux array runs one job
    per task) says how many tasks it has and how many are in each state, not only the one
    state folded from them all; a job that is no array says none."""
    tasks = {"0": JobState.RUNNING, "1": JobState.RUNNING, "2": JobState.PENDING,
             "3": JobState.PENDING, "4": JobState.PENDING, "5": JobState.COMPLETED}
    data = job_json(Job(id="flux:f3Zk", site="flux", native_id="f3Zk",
                        state=JobState.RUNNING, tasks=tasks))
    assert data["array_tasks"] == {"total": 6, "states": {
        "COMPLETED": 1, "PENDING": 3, "RUNNING": 2}}
    assert "tasks" not in data  # each task's state stays in the store
    _validate(data)
    assert job_json(Job(id="flux:f9", site="flux"))["array_tasks"] is None
