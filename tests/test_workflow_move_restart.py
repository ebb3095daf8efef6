"""A step's move (its job cancelled on one site, submitted on another) across an engine
that stops midway, on the real engine, store and journal (the operations below the facade
recorded, `test_workflow_gate.Filling`; no test bed).

The move wrote its step waiting without the mark the retry path leaves for the next engine:
one that stopped while the steps below the moved one were cancelled left them to be read as
cancelled from outside (the workflow CANCELLED), or queued behind the cancelled job. The
tests named `fault` failed before."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_workflow_gate import CHAIN, SITES, Filling, complete, engine_with, phase
from workflow_ops import next_engine

from diamond_jupyter.model import Job, JobSpec
from diamond_jupyter.workflow.engine import WorkflowEngine
from diamond_jupyter.workflow.model import load_workflow

# the gate tests' chain, then post: analyse is placed `auto` (alpha, queued ahead behind a
# gate); post waits on it on alpha
MOVING = CHAIN.replace("name: chain", "name: moving", 1) + (
    '  - {name: post, site: alpha, needs: [analyse], script: "#!/bin/bash\\ntrue\\n"}\n')


class Stopping(Filling):
    """The engine stops (`stopped` is set, the call never returns) in the cancel of a job
    of step `cancel_of`, before or after the scheduler took it (`after_cancel`), or in the
    submit of step `submit_of` to gamma once the scheduler has queued it, before its
    answer comes back."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.cancel_of: str | None = None
        self.after_cancel = True
        self.submit_of: str | None = None
        self.stopped = asyncio.Event()

    async def _stop_here(self) -> None:
        self.stopped.set()
        await asyncio.Event().wait()  # cancelled with the engine

    async def cancel(self, job: Job) -> None:
        origin = job.origin or {}
        if origin.get("step") != self.cancel_of or origin.get("gate"):
            return await super().cancel(job)
        self.cancel_of = None  # once: the next engine's cancels go through
        if self.after_cancel:
            await super().cancel(job)
        await self._stop_here()

    async def submit(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                     origin: dict[str, Any], fence: Any = None) -> Job:
        if origin.get("step") != self.submit_of or origin.get("gate") or site != "gamma":
            return await super().submit(spec, site, hold=hold, token=token, origin=origin,
                                        fence=fence)
        self.submit_of = None
        spec = spec.model_copy(update={"working_directory": f"{self.root}/{site}/{token}"})
        self.store.record_intent(site, token, spec, origin=origin, fence=fence)
        self.submits.append({"site": site, "hold": hold, "origin": origin, "spec": spec,
                             "token": token})
        self.queue.add(str(next(self.ids)), token, spec.name)  # in gamma's queue
        await self._stop_here()
        raise AssertionError("unreachable")


@pytest.fixture
async def stopping(tmp_path):
    async for pair in engine_with(Stopping, tmp_path):
        yield pair


async def _move_and_stop(eng: WorkflowEngine, ops: Stopping) -> str:
    """analyse queued ahead on alpha, post behind it; once train ended gamma is expected to
    end analyse far sooner: the engine moves it and stops where `ops` says."""
    ops.ends = {"alpha": 10.0, "gamma": 20.0}
    wid = await eng.run(load_workflow(MOVING, sites=SITES))
    await complete(eng, ops, "prep", wid)
    await phase(eng, wid, "post", "queued")
    ops.ends = {"alpha": 200.0, "gamma": 15.0}
    await complete(eng, ops, "train", wid)
    await asyncio.wait_for(ops.stopped.wait(), 10)
    await eng.close()
    return wid


def _live(ops: Stopping, step: str) -> list[Job]:
    return [j for j in ops.store.list_jobs(limit=None)
            if (j.origin or {}).get("step") == step and not (j.origin or {}).get("gate")
            and not j.state.terminal]


async def _settled(eng: WorkflowEngine, wid: str) -> dict[str, str]:
    """The steps' phases once analyse is queued and post has a job (or the workflow
    ended): post held behind analyse's new job, or still queued behind its old one."""
    async def reached() -> dict[str, str]:
        while True:
            rec = eng.store.get_workflow(wid)
            phases = {s.name: s.phase for s in rec.steps}
            if rec.state in ("COMPLETED", "FAILED", "CANCELLED") or (
                    phases["analyse"] == "queued"
                    and phases["post"] not in ("waiting", "submitting")):
                return phases
            eng.changed.clear()
            await eng.changed.wait()
    return await asyncio.wait_for(reached(), 10)


async def _finishes_once(ops: Stopping, wid: str) -> None:
    """The next engine ends the move: analyse has one live job, on gamma; post one, behind
    it; the workflow goes on and completes."""
    async with next_engine(ops, [wid]) as eng:
        phases = await _settled(eng, wid)
        assert ops.store.get_workflow(wid).state not in ("FAILED", "CANCELLED"), \
            ops.store.get_workflow(wid).reason
        assert (phases["analyse"], phases["post"]) == ("queued", "held")
        [analyse], [post] = _live(ops, "analyse"), _live(ops, "post")
        assert analyse.site == "gamma" and post.site == "alpha"
        assert [s["site"] for s in ops.of("analyse")] == ["alpha", "gamma"]
        st = ops.store.get_workflow(wid).step("analyse")
        assert st.data["moved_from"] == "alpha" and not st.data.get("requeue_below")
        await complete(eng, ops, "analyse", wid)
        await phase(eng, wid, "post", "released")
        await complete(eng, ops, "post", wid)
        assert ops.store.get_workflow(wid).state == "COMPLETED"
        assert ops.of("post")[-1]["token"] == post.token


@pytest.mark.parametrize("after_cancel", [True, False])
async def test_an_engine_stopped_in_the_moved_steps_cancel_leaves_the_move_to_the_next(
        stopping, after_cancel):
    eng, ops = stopping
    ops.cancel_of, ops.after_cancel = "analyse", after_cancel
    wid = await _move_and_stop(eng, ops)
    assert ops.store.get_workflow(wid).step("analyse").data["moving_to"] == "gamma"
    await _finishes_once(ops, wid)


@pytest.mark.parametrize("after_cancel", [True, False])
async def test_fault_an_engine_stopped_cancelling_the_step_below_a_move_leaves_it_to_the_next(
        stopping, after_cancel):
    """Moved (written waiting, its new site pinned), the engine stops while cancelling
    post, queued behind its old job: the next one submits post again behind the new job,
    not reading its cancel as one from outside."""
    eng, ops = stopping
    ops.cancel_of, ops.after_cancel = "post", after_cancel
    wid = await _move_and_stop(eng, ops)
    st = ops.store.get_workflow(wid).step("analyse")
    assert (st.phase, st.data["pin"]) == ("waiting", "gamma")
    await _finishes_once(ops, wid)
    assert len(ops.of("post")) == 2


async def test_an_engine_stopped_after_the_new_submit_before_its_answer_binds_it_once(
        stopping):
    """The engine stops once gamma queued analyse's new job, before the answer came: the
    next engine finds it by its token in gamma's queue and submits it no second time."""
    eng, ops = stopping
    ops.submit_of = "analyse"
    wid = await _move_and_stop(eng, ops)
    assert ops.store.get_workflow(wid).step("analyse").phase == "submitting"
    await _finishes_once(ops, wid)
