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
        """Submit for the agent tool call `key`, once: when that call runs again (its task
        resumed after a restart), the job its first run submitted is returned instead."""
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
        """Store an event, then publish it (and any earlier unpublished ones) in order."""
        return await self.journal.publish(event)

    async def start_agent(self, llm: Any = None, *, provider: Any = None,
                          rearm: bool = True) -> Any:
        """The agent runner for this Federation (created once). `llm`: an agent.LLMConfig
        (default: from the environment). With `rearm`, waiting tasks are resumed if their job
        has ended (after a restart) and followed otherwise."""
        from .agent.loop import AgentRunner

        runner = getattr(self, "_agent", None)
        if runner is None:
            runner = self._agent = AgentRunner(self, llm, provider=provider)
        await runner.start(rearm=rearm)
        return runner

    async def close_agent(self) -> None:
        runner = getattr(self, "_agent", None)
        if runner is not None:
            self._agent = None
            await runner.close()

    async def ask(self, prompt: str, *, approval: str = "ask",
                  origin: dict[str, Any] | None = None) -> dict[str, Any]:
        """Start an agent task; returns it at once (it runs on this loop). `approval`: "ask"
        (each costly action waits for approve/reject), "auto" or "dry-run"."""
        runner = getattr(self, "_agent", None) or await self.start_agent(rearm=False)
        rec = await runner.ask(prompt, approval=approval, origin=origin)
        return self.task(rec.id)

    async def approve(self, task_id: str) -> dict[str, Any]:
        runner = getattr(self, "_agent", None) or await self.start_agent(rearm=False)
        await runner.approve(task_id)
        return self.task(task_id)

    async def reject(self, task_id: str, reason: str = "") -> dict[str, Any]:
        runner = getattr(self, "_agent", None) or await self.start_agent(rearm=False)
        await runner.reject(task_id, reason)
        return self.task(task_id)

    async def wait_task(self, task_id: str, *, timeout: float | None = None,
                        settled: bool = False, states: set[str] | None = None
                        ) -> dict[str, Any]:
        """Until the task is done/failed/rejected; with `settled`, also asleep (waiting on a
        job or on approval); with `states`, until it is in one of them."""
        runner = getattr(self, "_agent", None) or await self.start_agent(rearm=False)
        if settled or states:
            await runner.settled(task_id, timeout, states)
        else:
            await runner.wait(task_id, timeout)
        return self.task(task_id)

    def task(self, task_id: str, *, steps: bool = True) -> dict[str, Any]:
        """A task for the faces: its conversation stays in the store."""
        rec = self.store.get_task(task_id, steps=steps)
        out = rec.model_dump(mode="json")
        data = out.pop("data", {})
        out.update({k: data.get(k) for k in ("approval", "answer", "error", "origin",
                                             "model_calls", "llm")})
        out["pending"] = {k: v for k, v in (data.get("pending") or {}).items()
                          if k in ("tool", "plan", "input")} or None
        return out

    def tasks(self, *, limit: int | None = 50, offset: int = 0) -> list[dict[str, Any]]:
        return [t.model_dump(mode="json", exclude={"steps"})
                for t in self.store.list_tasks(limit=limit, offset=offset)]
