"""A step's earlier run whose cancel the site refuses, once the step runs as a new job: the
user is told (a "stuck" attention on that job, with what diamond does about it) and the
cancel is asked again at each later advance (an event's, or the engine's 15 s sweep's)
until the job ended, so two runs of a step are never left queued unsaid. On the real
engine, store and journal, the operations below the facade recorded (`workflow_ops`).

Before, a kept step whose dependency move and cancel were both refused, Slurm having said
DependencyNeverSatisfied during the move (an alert held back while the engine mends it),
raised no alert at all, and its job stayed queued beside the resubmitted one for good."""

from __future__ import annotations

from typing import Any

from test_workflow_retry_keeps import (
    NEVER,
    ORDERED,
    _each_job_once,
    _Redepends,
    _stuck,
)
from test_workflow_unseen import _until
from test_workflow_unseen15 import runs_fixture  # noqa: F401 (the `runs` fixture)

from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Job, JobState, SiteError
from diamond_jupyter.server.events import attention_payload


class _NeverThenRefused(_Redepends):
    """alpha refuses the dependency change, Slurm having said meanwhile that the job's
    dependency can never be satisfied (through the journal, as a poll says it); and it
    refuses every cancel while `cancel_refused`."""

    journal: Journal
    cancel_refused = True

    async def update_dependencies(self, job: Job, deps: list[Any]) -> None:
        self.journal.apply(job.id, JobState.PENDING, reason=NEVER, source="poll")
        await super().update_dependencies(job, deps)

    async def cancel(self, job: Job) -> None:
        if self.cancel_refused:
            raise SiteError(f"{job.site}: scancel {job.native_id} exited with status 1: "
                            "Access/permission denied")
        await super().cancel(job)


class _EndsAsCancelled(_Redepends):
    """alpha refuses the cancel of a job that ended just before it was asked."""

    async def cancel(self, job: Job) -> None:
        self.store.apply_state(job.id, JobState.FAILED, exit_code=1)
        raise SiteError(f"{job.site}: scancel {job.native_id} exited with status 1: Job "
                        "has already finished")


async def _join_left_queued(runs, ops: type[_Redepends] = _NeverThenRefused,
                            steps: dict[str, str] | None = None) -> tuple[Any, Job, Job]:
    """The ORDERED workflow on `ops` refusing alpha's dependency moves, once `left` failed
    and the engine reached `steps` (join held, left and post queued by default): the run
    and the first jobs of join and post."""
    run = await runs(ORDERED, ops)
    run.ops.journal = Journal(run.store, {})
    run.ops.refusing.add("alpha")
    join, post = run.job("join"), run.job("post")
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid,
                 steps or {"left": "queued", "join": "held", "post": "queued"})
    return run, join, post


async def _complete(run) -> None:
    """The workflow run to its end: mid and left, then join (released) and post."""
    await run.finish("mid", "left")
    await _until(run.eng, run.wid, {"join": "released"})
    await run.finish("join", "post")


async def test_fault_a_kept_job_left_queued_is_said_and_cancelled_at_a_later_advance(runs):
    run, join, post = await _join_left_queued(runs)
    new_join = run.job("join")
    assert new_join.id != join.id and run.store.get_job(join.id).state == JobState.PENDING
    [said] = _stuck(run, join.id)  # before: none (held back while the move was under way)
    assert said == (f"{NEVER}; step join of workflow {run.wid} runs as a new job, and alpha "
                    f"refused to cancel this one (alpha: scancel {join.native_id} exited "
                    "with status 1: Access/permission denied)")
    [ev] = [e for e in run.store.events_since(0, kinds=["job.attention"])
            if e.job_id == join.id]
    shown = attention_payload(ev)  # what the sidebar, the cards and the agent get
    assert (shown["attention"], shown["never"], shown["state"]) == ("stuck", NEVER,
                                                                   "PENDING")
    assert shown["explanation"] == (
        "an earlier run of a workflow step left queued beside its new run: diamond asks "
        f"alpha to cancel it again at each poll (or run diamond cancel {join.id})")
    steps = run.store.get_workflow(run.wid)
    assert (steps.step("join").data["uncancelled"], steps.step("post").data["uncancelled"]
            ) == ([join.id], [post.id])

    await run.eng.advance(run.wid)  # still refused: still noted, said once
    assert run.store.get_workflow(run.wid).step("join").data["uncancelled"] == [join.id]
    assert len(_stuck(run, join.id)) == 1 and run.ops.cancels == []

    run.ops.cancel_refused = False
    await run.eng.advance(run.wid)  # as the sweep does: asked again, now cancelled
    assert sorted(run.ops.cancels) == sorted([join.id, post.id])
    assert run.store.get_job(join.id).state == JobState.CANCELLED
    assert not run.store.get_workflow(run.wid).step("join").data.get("uncancelled")
    assert run.job("join").id == new_join.id  # the step's new run is never cancelled
    await _complete(run)
    assert run.state() == ("COMPLETED", None)
    assert new_join.id not in run.ops.cancels
    _each_job_once(run)


async def test_a_refused_cancel_of_a_job_that_ended_meanwhile_is_not_said(runs):
    run, join, _ = await _join_left_queued(runs, _EndsAsCancelled)
    assert _stuck(run, join.id) == []
    assert not run.store.get_workflow(run.wid).step("join").data.get("uncancelled")
    _each_job_once(run)


async def test_cancelling_the_workflow_asks_a_left_queued_run_once_more(runs):
    run, join, _ = await _join_left_queued(runs, steps={"left": "queued", "join": "held"})
    assert run.store.get_workflow(run.wid).step("join").data["uncancelled"] == [join.id]
    run.ops.cancel_refused = False
    await run.eng.cancel(run.wid)
    assert join.id in run.ops.cancels  # before this, only the steps' current jobs
    assert run.state()[0] == "CANCELLED"
    _each_job_once(run)


async def test_fault_a_run_left_queued_is_asked_again_after_its_workflow_completed(runs):
    """The cancel stays refused until the workflow completed: the sweep asks it again,
    each time later (backed off), cancels only that run, and lets it go once cancelled, its
    "stuck" attention ended by the CANCELLED state. Before: never asked after completion."""
    run, join, _ = await _join_left_queued(runs)
    await _complete(run)
    assert run.state() == ("COMPLETED", None)
    assert run.store.get_job(join.id).state == JobState.PENDING  # still refused
    eng, done = run.eng, {run.job(n).id for n in ("left", "mid", "join", "post")}
    [(due, first)] = eng._left_queued.values()
    await eng.cancel_left_queued(due - 1)  # not due yet: not asked
    assert eng._left_queued[run.wid] == (due, first)
    await eng.cancel_left_queued(due)  # refused again: the next ask waits twice as long
    assert eng._left_queued[run.wid] == (due + 2 * first, 2 * first)
    assert run.store.get_workflow(run.wid).step("join").data["uncancelled"] == [join.id]
    run.ops.cancel_refused = False
    await eng.cancel_left_queued(due + 2 * first)
    assert join.id in run.ops.cancels and not done & set(run.ops.cancels)
    assert run.store.get_job(join.id).state == JobState.CANCELLED  # the card's "stuck" ends
    assert not run.store.get_workflow(run.wid).step("join").data.get("uncancelled")
    assert run.wid not in eng._left_queued
    cancels = list(run.ops.cancels)
    await eng.cancel_left_queued(10**9)  # let go: never asked again
    assert run.ops.cancels == cancels
    _each_job_once(run)


async def test_a_run_left_queued_that_the_scheduler_says_ended_is_let_go(runs):
    """Its cancel still refused, but the scheduler now says it ended: not asked again."""
    run, join, _ = await _join_left_queued(runs, steps={"left": "queued", "join": "held"})
    await _complete(run)
    assert run.state()[0] == "COMPLETED"
    ended = run.store.get_job(join.id)

    async def refresh(job: Job) -> Job:  # what the scheduler says now: it ended
        run.store.apply_state(job.id, JobState.FAILED, exit_code=1)
        return run.store.get_job(job.id)
    run.ops.refresh = refresh
    await run.eng.cancel_left_queued(10**9)
    assert ended.state == JobState.PENDING and run.ops.cancels.count(join.id) == 0
    assert run.store.get_job(join.id).state == JobState.FAILED
    assert not run.store.get_workflow(run.wid).step("join").data.get("uncancelled")
    assert run.wid not in run.eng._left_queued
