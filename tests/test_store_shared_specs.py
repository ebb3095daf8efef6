"""Each of a workflow's submits reads the store's newest jobs for its estimates (calibration,
runtimes, the model's own error). Their specs are validated once per stored text: a workflow
of many independent steps validated every stored spec again at every submit (500 steps took
minutes), and a row changed on disk is still validated again when read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sweep_helpers import noted_calls, run_independent_steps
from test_workflow_unrunnable import _fed

from diamond_jupyter.model import Job, JobSpec, JobState, job_json
from diamond_jupyter.store import Store
from diamond_jupyter.store.codec import forget_shared_reads


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stored spec texts validated from here on (every `JobSpec.model_validate_json`)."""
    forget_shared_reads()
    return noted_calls(monkeypatch, JobSpec, "model_validate_json",
                       note=lambda data, **kw: data)


async def test_a_submit_validates_each_stored_spec_once_not_every_submit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, validations: list[str]) -> None:
    """30 independent steps: each spec is validated about 15 times (its own writes and
    reads), not once per later submit (before: every submit validated the newest jobs again
    in two reads of them, ~2,200 validations here, growing with the square of the steps)."""
    fed = _fed(tmp_path, monkeypatch)
    steps = 30
    try:
        await run_independent_steps(fed, steps)
    finally:
        await fed.close()
    assert len(validations) <= 20 * steps, len(validations)


def _completed(store: Store, n: int) -> list[str]:
    ids = []
    for i in range(n):
        job = store.record_intent("alpha", f"t{i}", JobSpec(name=f"j{i}", command="hostname"))
        job = store.bind_native_id(job.token, str(100 + i))
        store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
        ids.append(job.id)
    return ids


def test_reads_for_estimates_validate_a_text_once(tmp_path: Path,
                                                  validations: list[str]) -> None:
    store = Store(tmp_path / "s.sqlite")
    try:
        _completed(store, 5)
        forget_shared_reads()  # read as another process would: the texts validated
        validations.clear()
        for _ in range(3):
            assert len(store.finished_jobs(10).ended) == 5
            assert len(store.list_jobs(limit=10, read_only=True)) == 5
        assert len(validations) == 5  # one per stored text, the first time it is read
        store.list_jobs(limit=10)  # a reader that may change what it gets: its own specs
        assert len(validations) == 10
        assert store.list_jobs(limit=1)[0] is not store.list_jobs(limit=1)[0]
        with sqlite3.connect(store.path) as c:  # a row's state changed on disk: read anew
            c.execute("UPDATE jobs SET state = 'FAILED', exit_code = 3 WHERE id = ?",
                      (store.list_jobs(limit=1)[0].id,))
        newest = store.list_jobs(limit=1, read_only=True)[0]
        assert (newest.state, newest.exit_code) == (JobState.FAILED, 3)
        assert store.finished_jobs(10).ended[0] is newest
    finally:
        store.close()


def test_a_row_changed_on_disk_is_validated_again(tmp_path: Path, validations: list[str],
                                                  caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "s.sqlite"
    store = Store(path)
    try:
        ids = _completed(store, 2)
        assert {j.spec.name for j in store.finished_jobs(10).ended} == {"j0", "j1"}
        with sqlite3.connect(path) as c:  # another hand edits the rows
            spec = json.loads(c.execute("SELECT spec FROM jobs WHERE id = ?",
                                        (ids[0],)).fetchone()[0])
            c.execute("UPDATE jobs SET spec = ? WHERE id = ?",
                      (json.dumps({**spec, "name": "renamed"}), ids[0]))
            c.execute("UPDATE jobs SET spec = ? WHERE id = ?",
                      (json.dumps({**spec, "nodes_wanted": 3}), ids[1]))
        validations.clear()
        jobs = {j.id: j for j in store.list_jobs(limit=10, read_only=True)}
        assert jobs[ids[0]].spec.name == "renamed"
        assert jobs[ids[1]].spec is None  # no longer a spec: kept on disk, said in the log
        assert "no longer validates" in caplog.text
        assert len(validations) == 2
        ended = {j.id: j for j in store.finished_jobs(10).ended}
        assert ended[ids[0]].spec.name == "renamed" and ended[ids[1]].spec is None
    finally:
        store.close()


async def test_a_submit_plans_only_new_jobs_runtimes(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """30 independent steps: each queued job's runtime is planned about once
    (`own_runtimes`), not again at every later submit (before: 870 plans here, every
    queued job again at each submit, growing with the square of the steps)."""
    import diamond_jupyter.placement as placement

    plan = placement.planned_runtime
    plans = noted_calls(monkeypatch, placement, "planned_runtime",
                        note=lambda spec, *args: spec.name)
    fed = _fed(tmp_path, monkeypatch)
    steps = 30
    try:
        await run_independent_steps(fed, steps)
        assert len(plans) <= 2 * steps, len(plans)
        # a queued job whose history changed is planned again (its kind ran since)
        before = len(plans)
        fed.own_runtimes(({"an application": 60.0}, 0.5))
        assert len(plans) - before == steps
        got = fed.own_runtimes(({"an application": 60.0}, 0.5))
        assert len(plans) - before == steps  # the same history: nothing planned again
        assert sorted(got["alpha"].values()) == sorted(
            plan(j.spec, {}, 0.5, 1.0) for j in fed.store.list_jobs(
                states=[JobState.PENDING], limit=None) if j.spec)
    finally:
        await fed.close()


def _placed(store: Store) -> str:
    """One completed job with a placement, metadata, mail events and a time limit."""
    spec = JobSpec(name="shared", command="hostname", mail_events=["end"],
                   metadata={"application": "md", "inputs": ["a.dat"]},
                   resources={"nodes": 2, "walltime_s": 600})
    job = store.record_intent("alpha", "tshared", spec,
                              placement={"choice": "alpha", "ranked": [{"site": "alpha"}]})
    job = store.bind_native_id(job.token, "700")
    store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
    return job.id


CHANGES = {
    "a field": lambda j: setattr(j, "state", JobState.FAILED),
    "a field deleted": lambda j: delattr(j, "exit_code"),
    "the spec's resources": lambda j: setattr(j.spec.resources, "nodes", 64),
    "the spec replaced": lambda j: setattr(j, "spec", None),
    "the spec's metadata": lambda j: j.spec.metadata.update(application="other"),
    "a list in the metadata": lambda j: j.spec.metadata["inputs"].append("b.dat"),
    "the spec's mail events": lambda j: j.spec.mail_events.clear(),
    "the placement": lambda j: j.placement.__setitem__("choice", "beta"),
    "a verdict in the placement": lambda j: j.placement["ranked"][0].pop("site"),
    "a list in place": lambda j: j.placement["ranked"].__iadd__([{}]),
}


@pytest.mark.parametrize("what", CHANGES)
def test_a_shared_job_cannot_be_changed_under_another_reader(tmp_path: Path,
                                                             what: str) -> None:
    """Readers of `list_jobs(read_only=True)` and `finished_jobs` get one decoded object:
    a change by one, at any depth, raises instead of changing what the others read."""
    forget_shared_reads()
    store = Store(tmp_path / "s.sqlite")
    try:
        job_id = _placed(store)
        mine = store.list_jobs(limit=1, read_only=True)[0]
        theirs = store.finished_jobs(10).completed[0]
        assert mine is theirs and mine.id == job_id  # shared: decoded once
        before = mine.model_dump()
        with pytest.raises(TypeError, match="shared with every other reader .* list_jobs()"):
            CHANGES[what](mine)
        assert theirs.model_dump() == before
        assert store.list_jobs(limit=1, read_only=True)[0].model_dump() == before
        assert store.get_job(job_id).model_dump() == before
    finally:
        store.close()


def test_a_copy_of_a_shared_job_is_the_reader_s_own_to_change(tmp_path: Path) -> None:
    forget_shared_reads()
    store = Store(tmp_path / "s.sqlite")
    try:
        _placed(store)
        shared = store.list_jobs(limit=1, read_only=True)[0]
        plain = store.list_jobs(limit=1)[0]
        assert shared == plain and plain == shared  # the same job, frozen or not
        assert type(plain) is Job and type(plain.spec) is JobSpec
        mine = shared.model_copy(deep=True)
        assert type(mine) is Job and type(mine.spec) is JobSpec
        mine.state, mine.spec.resources.nodes = JobState.FAILED, 64
        mine.placement["ranked"].append({"site": "beta"})
        mine.spec.metadata["inputs"].append("b.dat")
        plain.spec.resources.nodes = 32  # a plain read is its own too
        again = store.list_jobs(limit=1, read_only=True)[0]
        assert again is shared and again.state == JobState.COMPLETED
        assert again.spec.resources.nodes == 2 and len(again.placement["ranked"]) == 1
        assert again.spec.metadata["inputs"] == ["a.dat"]
        assert job_json(again) == job_json(store.get_job(again.id))
    finally:
        store.close()


def test_a_spec_written_here_is_read_back_without_validating_its_text(
        tmp_path: Path, validations: list[str]) -> None:
    """A bind returns its job, and the monitor and the estimates read it: the spec this
    process wrote is copied, not validated again, and reads as its text validated would;
    each plain read is its own to change. A spec redaction changed is read from its text."""
    store = Store(tmp_path / "s.sqlite")
    try:
        spec = JobSpec(name="kept", command="hostname", mail_events=["end"],
                       metadata={"inputs": ["a.dat"]}, resources={"nodes": 2},
                       environment={"variables": {"MODE": "fast"}})
        job = store.bind_native_id(store.record_intent("alpha", "tkept", spec).token, "800")
        spec.resources.nodes = 9  # the caller's own spec changed after the write
        assert validations == []
        text = sqlite3.connect(store.path).execute(
            "SELECT spec FROM jobs WHERE id = ?", (job.id,)).fetchone()[0]
        validated = JobSpec.model_validate_json(text, context={"stored": True})
        assert job.spec == validated and job.spec.resources.nodes == 2
        job.spec.metadata["inputs"].append("b.dat")  # the bind's job is its own
        again = store.get_job(job.id)
        assert again.spec == validated and again.spec is not job.spec
        assert store.list_jobs(limit=1, read_only=True)[0].spec == validated
        secret = JobSpec(name="s", command="hostname",
                         environment={"variables": {"API_TOKEN": "abc123"}})
        validations.clear()
        read = store.get_job(store.record_intent("alpha", "tsecret", secret).id)
        assert validations and read.spec.environment.variables["API_TOKEN"] == "***"
    finally:
        store.close()
