"""Agent tasks on the Federation: the agent runs here; faces call these."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import Event, Job, JobSpec, SiteError

if TYPE_CHECKING:
    from .journal import Journal
    from .store import Store


class AgentMixin:
    store: Store
    journal: Journal

    async def submit(self, spec: JobSpec, site: str = "auto", *,
                     origin: dict | None = None, hold: bool = False) -> Job: ...

    async def submit_once(self, spec: JobSpec, site: str = "auto", *, key: str,
                          origin: dict[str, Any] | None = None) -> Job:
        """Submit `spec` for the agent tool call `key`, once: when that call runs again (its
        task resumed after a restart), the job its first run submitted is returned instead of a
        second one. Otherwise as `submit`."""
        job = self.store.job_by_call(key)
        if job is not None and job.native_id is None and not job.state.terminal:
            # the engine that ran the call is gone, so this submit is not in flight: the
            # token tells whether it reached the scheduler
            await self.journal.recover_intent(job)
            job = self.store.job_by_token(job.token or "") or job
            if job.native_id is None and not job.state.terminal:
                raise SiteError(f"cannot tell yet whether the earlier submit of this call "
                                f"reached {job.site} (unreachable); try again later")
        if job is not None and job.native_id is not None:
            return job
        return await self.submit(spec, site, origin={**(origin or {}), "call": key})

    async def publish(self, event: Event) -> Event:
        """Store `event`, then publish it (and any earlier unpublished ones) in order to every
        subscriber; returns it with its sequence number."""
        return await self.journal.publish(event)

    async def start_agent(self, llm: Any = None, *, provider: Any = None,
                          rearm: bool = True) -> Any:
        """The agent runner of this engine, created once: `llm` is an agent.LLMConfig (default:
        from the environment), `provider` a ready provider (tests). With `rearm`, tasks that
        were waiting on a job or an approval when the engine stopped are resumed. BadInput when
        no LLM is configured."""
        from .agent.loop import AgentRunner

        runner = getattr(self, "_agent", None)
        if runner is None:
            runner = self._agent = AgentRunner(self, llm, provider=provider)
        await runner.start(rearm=rearm)
        return runner

    async def close_agent(self) -> None:
        """Stop the agent runner, if any; its unfinished tasks stay in the store for the next
        engine to resume."""
        runner = getattr(self, "_agent", None)
        if runner is not None:
            self._agent = None
            await runner.close()

    async def ask(self, prompt: str, *, approval: str = "ask",
                  origin: dict[str, Any] | None = None) -> dict[str, Any]:
        """Start an agent task for `prompt` and return it at once (it runs on this loop; follow
        it by its events or `wait_task`). `approval`: "ask" (each costly action waits for
        `approve` or `reject`), "auto" or "dry-run"; `origin` says which face and cell asked."""
        runner = getattr(self, "_agent", None) or await self.start_agent(rearm=False)
        rec = await runner.ask(prompt, approval=approval, origin=origin)
        return self.task(rec.id)

    async def approve(self, task_id: str) -> dict[str, Any]:
        """Approve the action task `task_id` is waiting on (exactly the plan it showed runs) and
        return the task. BadInput for an unknown task or one not awaiting approval."""
        runner = getattr(self, "_agent", None) or await self.start_agent(rearm=False)
        await runner.approve(task_id)
        return self.task(task_id)

    async def reject(self, task_id: str, reason: str = "") -> dict[str, Any]:
        """Reject the action task `task_id` is waiting on, with `reason` for the agent, and
        return the task. BadInput for an unknown task or one not awaiting approval."""
        runner = getattr(self, "_agent", None) or await self.start_agent(rearm=False)
        await runner.reject(task_id, reason)
        return self.task(task_id)

    async def wait_task(self, task_id: str, *, timeout: float | None = None,
                        settled: bool = False, states: set[str] | None = None
                        ) -> dict[str, Any]:
        """Suspend until task `task_id` is done, failed or rejected (with `settled`, also
        asleep: waiting on a job or on approval; with `states`, until it is in one of them) and
        return it. asyncio.TimeoutError after `timeout` seconds; BadInput for an unknown task."""
        runner = getattr(self, "_agent", None) or await self.start_agent(rearm=False)
        if settled or states:
            await runner.settled(task_id, timeout, states)
        else:
            await runner.wait(task_id, timeout)
        return self.task(task_id)

    def task(self, task_id: str, *, steps: bool = True) -> dict[str, Any]:
        """Task `task_id` as the faces show it: state, approval, answer or error, origin and the
        pending action's plan (its conversation stays in the store unless `steps`). BadInput for
        an unknown task."""
        rec = self.store.get_task(task_id, steps=steps)
        out = rec.model_dump(mode="json")
        data = out.pop("data", {})
        out.update({k: data.get(k) for k in ("approval", "answer", "error", "origin",
                                             "model_calls", "llm")})
        out["pending"] = {k: v for k, v in (data.get("pending") or {}).items()
                          if k in ("tool", "plan", "input")} or None
        return out

    def tasks(self, *, limit: int | None = 50, offset: int = 0) -> list[dict[str, Any]]:
        """Stored tasks, newest first, without their steps: at most `limit` (None: all) after
        skipping `offset`."""
        return [t.model_dump(mode="json", exclude={"steps"})
                for t in self.store.list_tasks(limit=limit, offset=offset)]
