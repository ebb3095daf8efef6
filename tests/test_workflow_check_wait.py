"""The check before a workflow's first submit waits at most CHECK_WAIT_S for a site's snapshot.

Recorded (benchmarks/results, session 40): in the rounds a single home site beat queue-ahead by
the most, queue-ahead's workflow was recorded 7 to 15 s after `run_workflow` was called, its
`auto` step's check waiting on every site's snapshot; the home plan (every step pinned to one
site) waited on that site alone. A slow site now leaves the steps that may go there to their
submits, as a site that did not answer does, and its query goes on for them."""

from __future__ import annotations

import asyncio
from typing import Any

from test_placement import alpha, gamma
from test_workflow_unrunnable import PLAIN, WITH_GPU, _fed

from diamond_jupyter import federation_workflow
from diamond_jupyter.aio import within
from diamond_jupyter.model import SiteSnapshot

FLOW = ("name: w\nsteps:\n"
        f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
        f"  - {{name: train, needs: [prep], site: gamma, script: \"{WITH_GPU}\"}}\n"
        f"  - {{name: analyse, needs: [train], site: auto, script: \"{PLAIN}\"}}\n")


def _slow_gamma(fed: Any, monkeypatch: Any) -> tuple[asyncio.Event, list[str]]:
    """gamma's snapshot comes only once the returned event is set; the names asked, in order."""
    recorded = {"alpha": alpha()[1], "gamma": gamma()[1]}
    answer, asked = asyncio.Event(), []

    async def snapshots(*, only: Any = None, **kw: Any) -> dict[str, SiteSnapshot]:
        names = [n for n in recorded if only is None or n in only]
        asked.extend(names)
        if "gamma" in names:
            await answer.wait()
        return {n: recorded[n] for n in names}

    monkeypatch.setattr(fed, "snapshots", snapshots)
    return answer, asked


def _queued(fed: Any, step: str) -> asyncio.Event:
    """Set once a `workflow.step` event says `step` is queued (its job submitted)."""
    seen = asyncio.Event()

    def on_event(e: Any) -> None:
        if e.kind == "workflow.step" and e.data.get("step") == step and \
                e.data.get("phase") == "queued":
            seen.set()
    fed.journal.subscribe(on_event)
    return seen


async def test_a_slow_site_does_not_hold_the_first_submit(tmp_path, monkeypatch):
    monkeypatch.setattr(federation_workflow, "CHECK_WAIT_S", 0.2)
    fed = _fed(tmp_path, monkeypatch)
    answer, asked = _slow_gamma(fed, monkeypatch)
    prep_queued = _queued(fed, "prep")
    run = asyncio.ensure_future(fed.run_workflow(FLOW, origin={"face": "test"}))
    try:
        # before: the check waited for gamma's snapshot, so prep was never submitted
        await within(prep_queued.wait(), 10.0)
        assert not answer.is_set() and fed.sbatch_calls.exists()
        why = ("not checked before the run: gamma did not answer within 0.2 s; its submit "
               "checks it")
        said = {e.data["step"]: e.data["unchecked"]
                for e in fed.store.events_since(0, kinds=["workflow.step"])
                if e.data.get("unchecked")}
        assert said == {"train": why, "analyse": why}
        assert sorted(set(asked)) == ["alpha", "gamma"]
        pending = list(fed._check_snapshots)  # the query the check stopped waiting for
        assert pending
        answer.set()  # gamma answers: that query ends, and the steps placed there go on
        done = await within(asyncio.gather(*pending), 10.0)
        assert any("gamma" in d for d in done)
        view = await within(run, 10.0)
        steps = {s.name: s for s in view.steps}
        assert steps["prep"].job is not None and steps["prep"].reason is None
        assert steps["train"].job is not None  # submitted once gamma answered: its check
    finally:
        answer.set()
        await within(asyncio.gather(run, return_exceptions=True), 10.0)
        await fed.close()


async def test_sites_answering_in_time_are_checked_as_before(tmp_path, monkeypatch):
    """Both sites answer within the wait: a step pinned to a site without GPUs is refused
    before any step runs, as without the bound."""
    import pytest

    from diamond_jupyter.model import BadInput

    fed = _fed(tmp_path, monkeypatch)
    answer, _ = _slow_gamma(fed, monkeypatch)
    answer.set()
    try:
        with pytest.raises(BadInput, match="step 'train' cannot run on site alpha"):
            await fed.run_workflow(FLOW.replace("site: gamma", "site: alpha"),
                                   origin={"face": "test"})
        assert not fed.sbatch_calls.exists()
    finally:
        await fed.close()


async def test_close_ends_a_check_query_still_running(tmp_path, monkeypatch):
    """The check's query of a site that never answers is ended by `close`, not waited for."""
    monkeypatch.setattr(federation_workflow, "CHECK_WAIT_S", 0.1)
    fed = _fed(tmp_path, monkeypatch)
    _slow_gamma(fed, monkeypatch)  # gamma never answers
    prep_queued = _queued(fed, "prep")
    run = asyncio.ensure_future(fed.run_workflow(FLOW, origin={"face": "test"}))
    await within(prep_queued.wait(), 10.0)
    pending = list(fed._check_snapshots)
    assert pending
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    await within(fed.close(), 10.0)
    assert all(t.done() for t in pending)


async def test_a_slow_first_discovery_does_not_hold_the_record(tmp_path, monkeypatch):
    """gamma's discovery (never asked before) answers only once the workflow is recorded:
    the check leaves what gamma would lack in software to the submits instead of waiting
    DISCOVERY_WAIT_S (10 s) for it, so the workflow is recorded at once."""
    from diamond_jupyter.model import SiteError

    monkeypatch.setattr(federation_workflow, "CHECK_WAIT_S", 0.2)
    fed = _fed(tmp_path, monkeypatch)
    monkeypatch.setattr(fed, "capabilities", type(fed).capabilities.__get__(fed))
    answer = asyncio.Event()

    async def describe(site: str, **kw: Any) -> Any:
        if site == "gamma":
            await answer.wait()
        raise SiteError(f"{site}: no discovery in this test")

    def on_event(e: Any) -> None:
        if e.kind == "workflow.created":
            answer.set()  # gamma answers the submits that follow
    monkeypatch.setattr(fed, "describe", describe)
    fed.journal.subscribe(on_event)
    prep_queued = _queued(fed, "prep")
    run = asyncio.ensure_future(fed.run_workflow(FLOW, origin={"face": "test"}))
    try:
        await within(answer.wait(), 5.0)  # before: 10 s, the discovery's own wait
        await within(prep_queued.wait(), 10.0)
        view = await within(run, 10.0)
        assert {s.name for s in view.steps if s.job} == {"prep", "train", "analyse"}
    finally:
        answer.set()
        await within(asyncio.gather(run, return_exceptions=True), 20.0)
        await fed.close()


def _gamma_discovery_held(fed: Any, monkeypatch: Any) -> tuple[asyncio.Event, asyncio.Event]:
    """gamma's discovery (never asked before) answers only once the first returned event is
    set; the second is set when it is asked. alpha's fails at once."""
    from diamond_jupyter.model import SiteError

    monkeypatch.setattr(fed, "capabilities", type(fed).capabilities.__get__(fed))
    answer, asked = asyncio.Event(), asyncio.Event()

    async def describe(site: str, **kw: Any) -> Any:
        if site == "gamma":
            asked.set()
            await answer.wait()
        raise SiteError(f"{site}: no discovery in this test")
    monkeypatch.setattr(fed, "describe", describe)
    return answer, asked


async def test_steps_asking_only_what_the_snapshot_tells_wait_on_no_discovery(
        tmp_path, monkeypatch):
    """Every step asks only for time, CPUs or GPUs (the snapshot's nodes tell them): a
    discovery that never answers holds nothing, however long the check's wait is, and the
    step's site is still checked (its snapshot answered)."""
    from diamond_jupyter.federation_needs import needs_discovery
    from diamond_jupyter.workflow.model import load_workflow

    monkeypatch.setattr(federation_workflow, "CHECK_WAIT_S", 60.0)
    fed = _fed(tmp_path, monkeypatch)
    answer, asked = _gamma_discovery_held(fed, monkeypatch)
    assert not any(needs_discovery(load_workflow(FLOW).step(n).spec())
                   for n in ("prep", "train", "analyse"))
    recorded = asyncio.Event()

    def on_event(e: Any) -> None:
        if e.kind == "workflow.created":
            recorded.set()
    fed.journal.subscribe(on_event)
    run = asyncio.ensure_future(fed.run_workflow(FLOW, origin={"face": "test"}))
    try:
        await within(recorded.wait(), 10.0)  # before: 60 s, the check's wait for gamma
        assert asked.is_set() and not answer.is_set()  # asked, for the submits: never waited
        answer.set()
        view = await within(run, 20.0)
        assert {s.name for s in view.steps if s.job} == {"prep", "train", "analyse"}
        assert not [e for e in fed.store.events_since(0, kinds=["workflow.step"])
                    if e.data.get("unchecked")]
    finally:
        answer.set()
        await within(asyncio.gather(run, return_exceptions=True), 20.0)
        await fed.close()


async def test_a_step_loading_software_still_waits_for_its_sites_discovery(
        tmp_path, monkeypatch):
    """A step that loads a module is checked against what its site's discovery lists: the
    check waits for it (within CHECK_WAIT_S), the workflow recorded only after it answered."""
    monkeypatch.setattr(federation_workflow, "CHECK_WAIT_S", 60.0)
    fed = _fed(tmp_path, monkeypatch)
    answer, asked = _gamma_discovery_held(fed, monkeypatch)
    answered_when_recorded: list[bool] = []

    def on_event(e: Any) -> None:
        if e.kind == "workflow.created":
            answered_when_recorded.append(answer.is_set())
    fed.journal.subscribe(on_event)
    flow = FLOW.replace("--gpus=1\\n", "--gpus=1\\nmodule load gcc\\n")
    assert flow != FLOW
    run = asyncio.ensure_future(fed.run_workflow(flow, origin={"face": "test"}))
    try:
        await within(asked.wait(), 10.0)
        answer.set()
        await within(run, 20.0)
        assert answered_when_recorded == [True]
    finally:
        answer.set()
        await within(asyncio.gather(run, return_exceptions=True), 20.0)
        await fed.close()
