"""Agent tasks in the store: steps as events, continuations (resume on a job's end, also
after a restart) and approval. The model loop itself is in `loop.py`.

Task states: running -> (waiting | awaiting_approval -> running)* -> done | failed | rejected.
A task's conversation (Anthropic-shaped messages) and its unfinished tool calls live in the
task's `data`, so any process with the store can resume it. The engine running a task claims
it (see `leases`); a task left running by an engine that stopped (mid model call, mid tool
call) is taken up by the next engine's `start`, from what the store holds. Each claim gets the
task's next lease generation, which every write that drives the task (its steps, states and
saved conversation) carries, and which is checked before each tool call and model call: an
engine that stalled past a takeover stops driving the task when it wakes (`lease.lost`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..aio import KeptTasks, within
from ..attention import make as attention_event
from ..attention import never_reason
from ..federation_lookout import LOOKOUT_EVENT
from ..leases import Fence, LeaseLost, fence_of
from ..log_lines import one_line_logger
from ..model import BadInput, DiamondError, Event, JobState
from ..store import TaskRecord

if TYPE_CHECKING:
    from ..journal import Journal
    from ..leases import EngineLease

log = one_line_logger(__name__)

FINAL_STATES = frozenset({"done", "failed", "rejected"})
PREVIEW = 2000  # characters of a tool result kept in a step / event


def preview(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= PREVIEW else text[:PREVIEW] + f"… ({len(text)} chars)"


def found_cause(job_id: str, previous_id: str, site: str | None,
                seq: int | None = None) -> dict[str, Any]:
    """Why a task asleep on `previous_id`, the provisional id of a submit whose answer was
    lost, woke: its job was found in `site`'s queue as `job_id`."""
    return {"cause": "job found", "lookout": "found", "job_id": job_id,
            "previous_id": previous_id, "site": site, "event_seq": seq,
            "text": f"the job of {previous_id}, whose submit answer was lost, was found in "
                    f"{site}'s queue as {job_id}"}


def pending_plan(rec: TaskRecord) -> Any:
    """The plan task `rec` awaits approval of, as the faces show it (None: no plan)."""
    return (rec.data.get("pending") or {}).get("plan")


class TaskBook:
    """Store-side bookkeeping shared by the runner: steps, states, waiters, resumes. Task
    records are kept in the journal's store, steps and states published as its events;
    `lease` claims the tasks this engine runs."""

    def __init__(self, journal: Journal, lease: EngineLease) -> None:
        self.journal, self.store, self.lease = journal, journal.store, lease
        self._active: dict[str, object] = {}  # task id -> the token of its running coroutine
        self._running = KeptTasks()  # task loops, resumes and steps started by events
        self._waiters: dict[str, list[asyncio.Future[TaskRecord]]] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._armed = False
        self._fences: dict[str, Fence] = {}  # the lease of each task this engine drives

    # -- life cycle -------------------------------------------------------------------------
    async def start(self, *, rearm: bool = True) -> None:
        """Follow job events; re-arm every waiting task (resume those whose job ended) and
        resume every running task no live engine runs (its engine stopped mid-way)."""
        if self._unsubscribe is None:
            self._unsubscribe = self.journal.subscribe(self._on_event)
        if not rearm or self._armed:
            return
        self._armed = True
        for task in self.store.tasks_waiting():
            await self._rearm(task)
        for task in self.store.list_tasks(states=["running"], limit=None):
            if task.id in self._active:
                continue
            claimed = self.store.claim_task(task.id, self.lease.id)
            if claimed is None:
                continue  # another live engine runs it
            token = self._claim(claimed)
            await self.step(task.id, "resume", cause="restart", after="restart")
            self.spawn(task.id, token)

    async def _rearm(self, task: TaskRecord) -> None:
        for job_id in task.waiting_on:
            try:
                job = self.journal.job(job_id)
                if not job.state.terminal:  # let the monitor follow it; ask the site once
                    job = await self.journal.refresh(job.id)
            except DiamondError as e:
                log.warning("agent: task %s waits on %s: %s", task.id, job_id, e)
                continue
            if job.state.terminal:
                await self._resume(task.id, {"cause": "job ended", "job_id": job.id,
                                             "state": job.state.value, "after": "restart"})
                return
            if job.state == JobState.PENDING and never_reason(job.reason):
                self._on_attention(attention_event("stuck", job, job.reason))
                return

    async def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        await self._running.close()

    # -- steps and states -------------------------------------------------------------------
    def fence(self, task_id: str) -> Fence | None:
        """This engine's lease on the task while it drives it (None: a face's request)."""
        return self._fences.get(task_id)

    def check(self, task_id: str) -> None:
        """LeaseLost before an action the store cannot see (a tool call, a model call) when
        this engine's lease on the task is stale."""
        self.store.check_fence(self._fences.get(task_id))

    async def step(self, task_id: str, kind: str, **data: Any) -> None:
        """Store one step and publish it as an `agent.step` event."""
        s = self.store.add_step(task_id, kind, data, fence=self._fences.get(task_id))
        await self.journal.publish(Event(kind="agent.step", job_id=data.get("job_id"), data={
            "task_id": task_id, "step": s.n, "step_kind": kind, **s.data}))

    async def set_state(self, task_id: str, state: str, *, kind: str = "agent.task",
                        waiting_on: list[str] | None = None, **data: Any) -> TaskRecord:
        rec = self.store.update_task(task_id, state=state, waiting_on=waiting_on,
                                     data=data or None, fence=self._fences.get(task_id))
        public = {k: v for k, v in data.items() if k in ("answer", "error", "plan", "tool")}
        await self.journal.publish(Event(kind=kind, data={"task_id": task_id, "state": state,
                                                      "waiting_on": rec.waiting_on, **public}))
        if state in FINAL_STATES:
            for fut in self._waiters.pop(task_id, []):
                if not fut.done():
                    fut.set_result(rec)
        return rec

    async def finish(self, task_id: str, state: str, **data: Any) -> TaskRecord:
        return await self.set_state(task_id, state, waiting_on=[], **data)

    async def wait(self, task_id: str, timeout: float | None = None) -> TaskRecord:
        """Until the task is done, failed or rejected (event-driven, no polling)."""
        fut: asyncio.Future[TaskRecord] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(task_id, []).append(fut)
        rec = self.store.get_task(task_id, steps=False)
        if rec.state in FINAL_STATES:
            self._waiters[task_id].remove(fut)
            return rec
        return await within(fut, timeout)

    async def settled(self, task_id: str, timeout: float | None = None,
                      states: set[str] | None = None) -> TaskRecord:
        """Until the task is in one of `states` (default: any but running: final, or asleep
        on a job or on approval)."""
        fut: asyncio.Future[TaskRecord] = asyncio.get_running_loop().create_future()

        def reached(state: str) -> bool:
            return state in states if states is not None else state != "running"

        def on(ev: Event) -> None:
            if (ev.kind in ("agent.task", "agent.approval") and ev.data.get("task_id") == task_id
                    and reached(str(ev.data.get("state"))) and not fut.done()):
                fut.set_result(self.store.get_task(task_id, steps=False))
        unsub = self.journal.subscribe(on)
        try:
            rec = self.store.get_task(task_id, steps=False)
            if reached(rec.state) and (rec.state != "waiting" or task_id not in self._active):
                return rec
            return await within(fut, timeout)
        finally:
            unsub()

    # -- continuations ----------------------------------------------------------------------
    def _on_event(self, ev: Event) -> None:
        """A job reached a terminal state: resume the tasks waiting on it. A job that needs
        attention (it can never start where it is; with the task's `until`, it started or
        nears its time limit) resumes them too, with the reason."""
        if ev.kind == "job.attention" and ev.job_id:
            self._on_attention(ev)
            return
        if ev.kind == "job.submitted" and ev.job_id and ev.data.get("previous_id"):
            self._on_found(ev)
            return
        if ev.kind != "job.state" or not ev.job_id:
            return
        try:
            if not JobState(ev.data.get("state")).terminal:
                return
        except ValueError:
            return
        for task in self.store.tasks_waiting(on=ev.job_id):
            self._running.start(self._resume(task.id, {
                "cause": "job ended", "job_id": ev.job_id, "state": ev.data.get("state"),
                "event_seq": ev.seq}))

    def _on_found(self, ev: Event) -> None:
        """The job of a submit whose answer was lost was found in its site's queue: the tasks
        asleep on it (their wait moved to the job's id as the store bound it) wake, their
        wait_for saying so (`woke.lookout` "found": its id and site)."""
        waiting = self.store.tasks_waiting(on=ev.job_id)
        if not waiting or not self.store.events_since(0, kinds=[LOOKOUT_EVENT],
                                                      job_id=ev.job_id, limit=1):
            return
        for task in waiting:
            cause = found_cause(ev.job_id, ev.data["previous_id"], ev.site, ev.seq)
            self.store.update_task(task.id, data={"wake": cause})
            self._running.start(self._resume(task.id, cause))

    def _on_attention(self, ev: Event) -> None:
        kind = ev.data.get("attention")
        for task in self.store.tasks_waiting(on=ev.job_id):
            until = task.data.get("wait_until") or "end"
            policy = task.data.get("on_stuck") or "ask"
            wakes = (kind == "stuck" and policy != "wait"
                     or kind == "started" and until in ("start", "attention")
                     or kind == "walltime" and until == "attention")
            cause = {"cause": f"job {kind}", "job_id": ev.job_id, "attention": kind,
                     "reason": ev.data.get("reason"), "event_seq": ev.seq}
            if not wakes:
                if kind == "stuck":  # policy "wait": say so, sleep on
                    self._running.start(self.step(task.id, "stuck", **cause, policy=policy))
                continue
            wake = {**cause, "policy": policy, "explanation": ev.data.get("explanation")}
            self.store.update_task(task.id, data={"wake": wake})
            self._running.start(self._resume(task.id, cause))

    async def _resume(self, task_id: str, cause: dict[str, Any]) -> None:
        # Check-and-set without an await in between: one resume per wake-up in this process;
        # the claim in the store makes it one among engines sharing the store.
        if task_id in self._active:
            return
        claimed = self.store.claim_task(task_id, self.lease.id, states=("waiting",),
                                        to_state="running")
        if claimed is None:
            return
        token = self._claim(claimed)
        await self.set_state(task_id, "running")
        await self.step(task_id, "resume", **cause)
        self.spawn(task_id, token)

    def _claim(self, rec: TaskRecord) -> object:
        """This engine drives `rec`, just claimed (or made) by it: its writes carry its lease."""
        self._active[rec.id] = token = object()
        self._fences[rec.id] = fence_of("task", rec.id, rec.data)
        return token

    def spawn(self, task_id: str, token: object | None = None) -> None:
        """Run the task's loop here; `token` from `_claim` when the caller claimed it."""
        if token is None:
            if task_id in self._active:
                return
            token = self._claim(self.store.get_task(task_id, steps=False))
        self._running.start(self._guarded(task_id, token))

    async def _guarded(self, task_id: str, token: object) -> None:
        try:
            await self.drive(task_id)
        except asyncio.CancelledError:
            raise
        except LeaseLost as lost:  # another engine drives it now: stop, say so once
            await self._lost(task_id, lost)
        except Exception as e:  # never leave a task "running" after a crash of the loop
            log.exception("agent: task %s failed", task_id)
            try:
                await self.step(task_id, "error", text=str(e))
                await self.finish(task_id, "failed", error=str(e))
            except DiamondError:
                log.exception("agent: could not record the failure of %s", task_id)
        finally:
            if self._active.get(task_id) is token:
                del self._active[task_id]
                # done, asleep, or stopped with the engine: any engine may take it up next
                # (a lost one is another engine's: the owner check leaves it alone)
                self.store.release_task(task_id, self.lease.id)
                self._fences.pop(task_id, None)

    async def _lost(self, task_id: str, lost: LeaseLost) -> None:
        """Another engine took the task over while this one stalled: nothing more of this
        engine's is written to it; a `lease.lost` event says so."""
        if self._fences.pop(task_id, None) is None:
            return  # said already
        log.warning("agent: task %s: %s", task_id, lost)
        try:
            await self.journal.publish(Event(kind="lease.lost", data={
                **lost.event_data(self.lease.held_id), "task_id": task_id}))
        except DiamondError:
            log.exception("agent: could not record the lost lease of task %s", task_id)

    async def drive(self, task_id: str) -> None:
        raise NotImplementedError

    # -- approval ---------------------------------------------------------------------------
    def _pending(self, task_id: str) -> TaskRecord:
        rec = self.store.get_task(task_id, steps=False)
        if rec.state != "awaiting_approval":
            raise BadInput(f"task {task_id} is {rec.state}, not awaiting approval")
        return rec

    async def approve(self, task_id: str, plan_sha256: str | None = None) -> TaskRecord:
        """Run the plan the task awaits; with `plan_sha256` (the pending plan's, as shown)
        only when it is still that plan: PlanChanged when the task now awaits another (a
        retried or stale approval would approve a plan no one was shown)."""
        from ..federation_plan import PlanChanged, check_plan_sha256
        from ..federation_plan import plan_sha256 as digest

        def shown(r: TaskRecord) -> bool:
            return plan_sha256 is None or digest(pending_plan(r)) == plan_sha256

        if plan_sha256 is not None:
            check_plan_sha256(plan_sha256, task_id)
        rec = self._pending(task_id)
        if not shown(rec):
            raise PlanChanged(f"task {task_id} now awaits another plan than the one approved "
                              f"(its plan_sha256 is now {digest(pending_plan(rec))}): show it "
                              "again before approving; nothing was approved")
        claimed = self.store.claim_task(task_id, self.lease.id, states=("awaiting_approval",),
                                        to_state="running", data={"decision": "approved"},
                                        expect=shown)
        if claimed is None:
            raise BadInput(f"task {task_id} was approved, changed or taken up meanwhile; "
                           "nothing was approved")
        token = self._claim(claimed)
        await self.set_state(task_id, "running")
        await self.step(task_id, "resume", cause="approved",
                        tool=(rec.data.get("pending") or {}).get("tool"))
        self.spawn(task_id, token)
        return self.store.get_task(task_id, steps=False)

    async def reject(self, task_id: str, reason: str = "") -> TaskRecord:
        rec = self._pending(task_id)
        tool = (rec.data.get("pending") or {}).get("tool")
        await self.step(task_id, "rejected", tool=tool, text=reason or None)
        answer = f"Rejected: the {tool} was not done." + (f" ({reason})" if reason else "")
        return await self.finish(task_id, "rejected", answer=answer, decision="rejected")
