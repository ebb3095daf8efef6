"""The agent service: the agent of one engine, above the facade as the MCP server is.

Its tools are the skills over the `Federation`; its task records and events go through the
engine's journal. The faces that offer the agent each own one: the server app, `diamond
ask` and the magics' in-process engine. The facade knows nothing of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Provider
from .config import LLMConfig
from .loop import AgentRunner

if TYPE_CHECKING:
    from ..federation import Federation


class AgentService:
    def __init__(self, fed: Federation, llm: LLMConfig | None = None, *,
                 provider: Provider | None = None) -> None:
        """`llm`: the LLM setup (default: from the environment, when the runner is made);
        `provider` overrides the configured one."""
        self.fed, self.llm, self.provider = fed, llm, provider
        self.runner: AgentRunner | None = None

    async def start(self, llm: LLMConfig | None = None, *, provider: Provider | None = None,
                    rearm: bool = True) -> AgentRunner:
        """The runner (made once: a later `llm` or `provider` is not used then). With
        `rearm`, waiting tasks are resumed if their job has ended (after a restart) and
        followed otherwise, and running tasks no live engine runs are taken up."""
        if self.runner is None:
            self.runner = AgentRunner(self.fed, llm or self.llm,
                                      provider=provider or self.provider)
        await self.runner.start(rearm=rearm)
        return self.runner

    async def close(self) -> None:
        """Stop the runner, if any; its unfinished tasks stay in the store for the next engine
        to resume."""
        runner, self.runner = self.runner, None
        if runner is not None:
            await runner.close()

    async def _runner(self) -> AgentRunner:
        return self.runner or await self.start(rearm=False)

    async def ask(self, prompt: str, *, approval: str = "ask",
                  origin: dict[str, Any] | None = None, on_stuck: str = "ask") -> dict[str, Any]:
        """Start an agent task for `prompt` and return it at once (it runs on this loop; follow
        it by its events or `wait`). `approval`: "ask" (each costly action waits for `approve`
        or `reject`), "auto" or "dry-run"; `origin` says which face and cell asked;
        `on_stuck`: when a job the task waits on can never start where it is, "ask" (moving
        it elsewhere waits for approval), "resubmit-elsewhere" (under `approval`, like a
        submit) or "wait". BadInput when no LLM is configured."""
        rec = await (await self._runner()).ask(prompt, approval=approval, origin=origin,
                                               on_stuck=on_stuck)
        return self.fed.task(rec.id)

    async def approve(self, task_id: str, plan_sha256: str | None = None) -> dict[str, Any]:
        """Approve the action task `task_id` is waiting on (exactly the plan it showed runs)
        and return the task; with `plan_sha256` (its `pending.plan_sha256` as shown), only
        while it awaits that plan (PlanChanged for another). BadInput for an unknown task or
        one not awaiting approval."""
        await (await self._runner()).approve(task_id, plan_sha256)
        return self.fed.task(task_id)

    async def reject(self, task_id: str, reason: str = "") -> dict[str, Any]:
        """Reject the action task `task_id` is waiting on, with `reason` for the agent, and
        return the task. BadInput for an unknown task or one not awaiting approval."""
        await (await self._runner()).reject(task_id, reason)
        return self.fed.task(task_id)

    async def wait(self, task_id: str, *, timeout: float | None = None, settled: bool = False,
                   states: set[str] | None = None) -> dict[str, Any]:
        """Suspend until task `task_id` is done, failed or rejected (with `settled`, also
        asleep: waiting on a job or on approval; with `states`, until it is in one of them)
        and return it. asyncio.TimeoutError after `timeout` seconds; BadInput for an unknown
        task."""
        runner = await self._runner()
        if settled or states:
            await runner.settled(task_id, timeout, states)
        else:
            await runner.wait(task_id, timeout)
        return self.fed.task(task_id)

    def task(self, task_id: str, *, steps: bool = True) -> dict[str, Any]:
        return self.fed.task(task_id, steps=steps)

    def tasks(self, *, limit: int | None = 50, offset: int = 0) -> list[dict[str, Any]]:
        return self.fed.tasks(limit=limit, offset=offset)
