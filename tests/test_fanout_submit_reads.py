"""What a workflow's submits read and write, step by step (issue 17: a 1000-step fan-out's
start): a bind decodes its job's spec once (for the job it returns), the states of many jobs
are read without decoding a job, the estimates that come together are recorded together,
and a shared (read-only) job is built with every field its plain read has.

On a real SQLite store on disk and, for the estimates, the real engine over one Slurm site
whose `sbatch` and `squeue` are written here (tests/local_slurm.py; no test bed)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError
from test_workflow_submit_batch import WIDTH, _engine, _fan_out, _queue

from diamond_jupyter.model import JobSpec, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.store import codec as codec_module


def _spec(name: str) -> JobSpec:
    return JobSpec(name=name, script="#!/bin/bash\necho hi\n",
                   metadata={"note": "API_TOKEN=abcdefgh1234"})


def _count_spec_decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    decoded: list[str] = []
    validate = JobSpec.model_validate_json

    def counted(text, *a, **kw):
        decoded.append(text)
        return validate(text, *a, **kw)

    monkeypatch.setattr(codec_module.JobSpec, "model_validate_json", counted)
    return decoded


def test_a_bind_decodes_its_jobs_spec_once_and_returns_it_whole(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    try:
        store.record_intent("alpha", "tok1", _spec("one"))
        decoded = _count_spec_decodes(monkeypatch)
        job = store.bind_native_id("tok1", "101", warnings=["a note"])
        assert len(decoded) == 1  # the job it returns; its checks read no spec
        assert job.id == "alpha:101" and job.state == JobState.PENDING
        assert job.spec is not None and job.spec.name == "one"
        assert job.spec.metadata["note"] == "API_TOKEN=***"  # the store shows it redacted
        assert store.bind_native_id("tok1", "101").id == "alpha:101"  # again: the same
        kinds = [e.kind for e in store.events_since(0, job_id="alpha:101")]
        assert kinds == ["job.submitting", "job.submitted", "job.warnings", "job.state"]
    finally:
        store.close()


def test_a_filled_intent_is_not_read_back(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    try:
        store.record_intent("alpha", "tok1", _spec("one"))
        decoded = _count_spec_decodes(monkeypatch)
        assert store.fill_intent("tok1", _spec("one-prepared")) is None
        assert decoded == []
        assert store.job_by_token("tok1").spec.name == "one-prepared"
        store.bind_native_id("tok1", "7")
        with pytest.raises(Exception, match="no open intent"):
            store.fill_intent("tok1", _spec("late"))  # bound: nothing filled after
    finally:
        store.close()


def test_the_states_of_many_tokens_are_read_without_decoding_a_job(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    try:
        for n in range(3):
            store.record_intent("alpha", f"tok{n}", _spec(f"s{n}"))
        store.bind_native_id("tok0", "100")
        store.bind_native_id("tok1", "101")
        store.apply_state("alpha:101", JobState.RUNNING)
        decoded: list[object] = []
        monkeypatch.setattr(codec_module, "_decoded_job",
                            lambda *a, **kw: decoded.append(a) or None)
        states = store.states_of_tokens(["tok0", "tok1", "tok2", "nope"])
        assert states == {"tok0": JobState.PENDING, "tok1": JobState.RUNNING,
                          "tok2": JobState.UNKNOWN}
        assert decoded == []
        assert store.states_of_tokens([]) == {}
    finally:
        store.close()


def test_a_shared_job_has_every_field_of_its_plain_read_and_refuses_changes(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    try:
        store.record_intent("alpha", "tok1", _spec("one"))
        store.bind_native_id("tok1", "5")
        plain, shared = store.get_job("alpha:5"), store.get_job("alpha:5", read_only=True)
        assert shared == plain and shared.model_dump() == plain.model_dump()
        assert shared.model_fields_set == plain.model_fields_set
        with pytest.raises((TypeError, ValidationError)):
            shared.spec.resources.nodes = 3
        thawed = shared.model_copy(deep=True)
        thawed.spec.resources.nodes = 3  # a deep copy is the caller's own
        assert thawed.spec.resources.nodes == 3 and shared.spec.resources.nodes is None
    finally:
        store.close()


async def test_a_fan_outs_estimates_are_recorded_in_few_writes(tmp_path: Path, monkeypatch):
    """The steps alike share one estimate, which comes for each as its submit goes: those
    that come within ESTIMATES_WRITTEN_WITHIN_S are written together, each step with its
    estimate and its `estimated` event."""
    q = _queue(tmp_path)
    fed = _engine(tmp_path, q)
    writes: list[list[str]] = []
    update_steps = Store.update_steps

    def counted(self, wid, updates, fence=None):
        updates = list(updates)
        if any("estimated" in (kw.get("event") or {}) for _, kw in updates):
            writes.append([name for name, _ in updates])
        return update_steps(self, wid, updates, fence)

    monkeypatch.setattr(Store, "update_steps", counted)
    try:
        await fed.start(recover=False)
        view = await fed.run_workflow(_fan_out(), origin={"face": "test"})
        engine = fed.workflow_engine
        while engine._estimates:  # each back once recorded
            await asyncio.gather(*engine._estimates.values(), return_exceptions=True)
        written = [n for w in writes for n in w]
        assert sorted(written) == sorted(s.name for s in view.steps)  # each once
        assert len(writes) < WIDTH + 1  # not one write a step
        rec = fed.store.get_workflow(view.id)
        assert all(rec.step(s.name).data["estimating"] is False for s in view.steps)
        events = [e for e in fed.store.events_since(0, kinds=["workflow.step"])
                  if "estimated" in e.data]
        assert sorted(e.data["step"] for e in events) == sorted(written)
    finally:
        await fed.close()


def test_a_steps_job_is_a_copy_of_its_own_to_any_depth():
    """`Step.spec()`: each submit's own copy (`copied`), equal to the parsed job and sharing
    nothing that can change with it or with another step's of the same script."""
    from diamond_jupyter.workflow.model import load_workflow

    script = '"#!/bin/bash\\n#SBATCH -N 2\\n./a\\n"'
    wf = load_workflow(f"name: w\nsteps:\n  - {{name: a, site: alpha, script: {script}}}\n"
                       f"  - {{name: b, site: alpha, script: {script}}}\n")
    one, two = wf.step("a").spec(), wf.step("a").spec()
    assert one == two and one.model_fields_set == two.model_fields_set
    assert one.model_dump() == wf.step("a").parsed_spec().model_dump()
    one.resources.nodes = 9
    one.metadata["x"] = [1]
    again = wf.step("a").spec()
    assert again.resources.nodes == 2 and "x" not in again.metadata
    assert wf.step("b").spec().resources.nodes == 2
