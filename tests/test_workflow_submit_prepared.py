"""A workflow's batch of submits is prepared before it is reserved (issue 17): each step's
spec is checked and prepared for its site first, the reservation records those prepared
specs, and each submit sends its spec as recorded (no second preparation, no fill of the
intent: one transaction a step less). The batch's step writes read the steps in one query
and write them with one statement.

On the real engine and store over one Slurm site on the local transport whose `sbatch`
queues what it is given (tests/local_slurm.py; no test bed)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from lease_helpers import age_heartbeat
from test_workflow_submit_batch import (
    WIDTH,
    _assert_each_step_submitted_once,
    _engine,
    _fan_out,
    _queue,
    _queued_ids,
)

from diamond_jupyter import leases
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput
from diamond_jupyter.store import Store


def _spy(monkeypatch, cls: type, name: str) -> list[tuple]:
    """Each call of `cls.name` (its arguments but self), the method still run."""
    calls: list[tuple] = []
    real = getattr(cls, name)

    def spied(self, *a, **kw):
        calls.append(a)
        return real(self, *a, **kw)
    monkeypatch.setattr(cls, name, spied)
    return calls


async def test_a_batch_is_reserved_with_the_specs_its_submits_send(tmp_path, monkeypatch):
    q = _queue(tmp_path)
    reserved = _spy(monkeypatch, Store, "reserve_step_submits")
    fills = _spy(monkeypatch, Store, "fill_intent")
    fed = _engine(tmp_path, q)
    try:
        await fed.start(recover=False)
        view = await fed.run_workflow(_fan_out(), origin={"face": "test"})
        _assert_each_step_submitted_once(q, view)
        assert fills == []  # every intent held its prepared spec from its reservation
        site = fed.sites["alpha"]
        batch = [s for _, submits, *_ in reserved for s in list(submits)]
        assert len(batch) == WIDTH + 1
        for s in batch:
            job = fed.store.job_by_token(s.token)
            # recorded prepared: the token in its comment, the wrapper before the body
            assert s.token in (s.spec.comment or "") and s.spec.script != "./w\n"
            assert job.spec == s.spec
            # what ran is what was recorded: the script uploaded is the stored spec's
            uploaded = Path(site.job_dir(s.token), "job.sh").read_text()
            assert uploaded == site.render(site.scheduler_spec(job.spec, s.token)).script
    finally:
        await fed.close()


async def test_a_step_that_fails_to_prepare_is_prepared_again_at_its_submit(
        tmp_path, monkeypatch):
    """One step's preparation ahead of the reservation fails (a site that could not be
    read then): its intent is recorded as given, and its submit prepares it as a single
    submit does and fills the intent; the others go as prepared."""
    q = _queue(tmp_path)
    fills = _spy(monkeypatch, Store, "fill_intent")
    prepare = Federation.prepare_reserved
    refused: list[str] = []

    async def flaky(self, spec, site, token):
        if not refused and spec.name == "w003":
            refused.append(token)
            raise BadInput("the site could not be read just now")
        return await prepare(self, spec, site, token)
    monkeypatch.setattr(Federation, "prepare_reserved", flaky)
    fed = _engine(tmp_path, q)
    try:
        await fed.start(recover=False)
        view = await fed.run_workflow(_fan_out(), origin={"face": "test"})
        _assert_each_step_submitted_once(q, view)
        assert [token for token, *_ in fills] == refused
        job = fed.store.job_by_token(refused[0])
        assert job.native_id and refused[0] in (job.spec.comment or "")
    finally:
        await fed.close()


def test_a_batch_of_step_updates_is_applied_in_order_with_its_events(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    wid = store.create_workflow("w", {}, ["a", "b", "c"]).id
    store.update_step(wid, "c", data={"kept": {"x": 1}})
    seq = store.last_seq()
    out = store.update_steps(wid, [
        ("a", {"phase": "submitting", "token": "t1", "data": {"n": 1}}),
        ("b", {"reason": "waits"}),
        ("a", {"phase": "queued", "job_id": "alpha:1", "data": {"m": 2}}),
        ("c", {"phase": "queued", "event": {"job": "alpha:2"}})])
    assert [(r.name, r.phase) for r in out] == [("a", "submitting"), ("b", "waiting"),
                                                ("a", "queued"), ("c", "queued")]
    rec = store.get_workflow(wid)
    assert rec.step("a").phase == "queued" and rec.step("a").data == {"n": 1, "m": 2}
    assert rec.step("a").token == "t1" and rec.step("b").reason == "waits"
    assert rec.step("c").data == {"kept": {"x": 1}}  # its stored data untouched
    said = [(e.job_id, e.data["step"], e.data["previous"], e.data["phase"])
            for e in store.events_since(seq, kinds=["workflow.step"])]
    # b's reason alone says nothing, as a single update's does
    assert said == [(None, "a", "waiting", "submitting"), ("alpha:1", "a", "submitting",
                                                           "queued"),
                    (None, "c", "waiting", "queued")]
    with pytest.raises(BadInput, match="no step 'nope'"):
        store.update_steps(wid, [("a", {"phase": "done"}), ("nope", {"phase": "done"})])
    assert store.get_workflow(wid).step("a").phase == "queued"  # all or nothing
    store.close()


async def test_a_batch_left_by_an_error_keeps_none_of_its_prepared_specs(
        tmp_path, monkeypatch):
    """Review: an error other than DiamondError while the batch is prepared (a bug, a
    cancel) left the specs prepared before it held by the federation, for good."""
    q = _queue(tmp_path)
    prepare = Federation.prepare_reserved
    prepared: list[str] = []

    async def breaks_at_the_third(self, spec, site, token):
        if len(prepared) == 2:
            raise RuntimeError("broke while preparing")
        prepared.append(token)
        return await prepare(self, spec, site, token)
    monkeypatch.setattr(Federation, "prepare_reserved", breaks_at_the_third)
    fed = _engine(tmp_path, q)
    try:
        await fed.start(recover=False)
        with contextlib.suppress(RuntimeError):  # (the engine may log it: "advance failed")
            await fed.run_workflow(_fan_out(), origin={"face": "test"})
        assert len(prepared) == 2 and len(_queued_ids(q)) == 1  # the top step only
        assert fed._reserved_ready == {}
        assert not set(prepared) & fed.journal.in_flight
    finally:
        await fed.close()


async def test_a_batch_whose_lease_is_lost_while_sent_keeps_none_of_its_prepared_specs(
        tmp_path, monkeypatch):
    """Review: another engine takes the workflow over after the 3rd of the fan-out's
    submits was sent: the send loop is left by LeaseLost, the steps not sent stay
    "submitting" for the new owner, and their prepared specs were kept here for good."""
    q = _queue(tmp_path)
    fed = _engine(tmp_path, q)
    transport = fed.sites["alpha"].transport
    sent_once, sbatches = transport.run_fast, []
    other = leases.new_engine_id()
    leases.register(other)

    async def run_fast(argv, **kw):
        res = await sent_once(argv, **kw)
        if argv and argv[0] == "sbatch" and "--parsable" in argv:
            sbatches.append(argv)
            if len(sbatches) == 4:  # the top step's, then the fan-out's 3rd: taken over
                leases.beat(fed.store.beats, other)
                age_heartbeat(fed.store, fed.engine_id)
                wid = fed.store.list_workflows()[0].id
                assert fed.store.claim_workflow(wid, other) is not None
        return res
    monkeypatch.setattr(transport, "run_fast", run_fast)
    try:
        await fed.start(recover=False)
        with contextlib.suppress(leases.LeaseLost):  # (the engine may drop it quietly)
            await fed.run_workflow(_fan_out(), origin={"face": "test"})
        wid = fed.store.list_workflows()[0].id
        steps = fed.store.get_workflow(wid).steps
        assert len(sbatches) == 4 and [s.phase for s in steps].count("submitting") > 0
        assert fed._reserved_ready == {}
    finally:
        monkeypatch.undo()
        await fed.close()
        leases.unregister(other)
