"""Agent tasks on the Federation: the once-only submit of an agent's tool call, and the
task records for the faces. The agent itself runs above the facade (`agent.service`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import Job, JobSpec, SiteError

if TYPE_CHECKING:
    from .journal import Journal
    from .store import Store


class AgentMixin:
    store: Store
    journal: Journal

    async def submit(self, spec: JobSpec, site: str = "auto", *,
                     origin: dict | None = None, hold: bool = False) -> Job: ...

    async def submit_once(self, spec: JobSpec, site: str = "auto", *, key: str,
                          origin: dict[str, Any] | None = None, hold: bool = False
                          ) -> Job:
        """Submit `spec` for the agent tool call `key`, once: when that call runs again (its
        task resumed after a restart), the job its first run submitted is returned instead of a
        second one. Otherwise as `submit` (`hold`: submitted held)."""
        job = self.store.job_by_call(key)
        if job is not None and job.native_id is None and not job.state.terminal:
            # the engine that ran the call is gone, so this submit is not in flight: the
            # token tells whether it reached the scheduler (once it could have)
            job = await self.journal.recover_intent_settled(job)
            if job.native_id is None and not job.state.terminal:
                raise SiteError(f"cannot tell yet whether the earlier submit of this call "
                                f"reached {job.site} (unreachable); try again later")
        if job is not None and job.native_id is not None:
            return job
        return await self.submit(spec, site, origin={**(origin or {}), "call": key},
                                 hold=hold)

    def task(self, task_id: str, *, steps: bool = True) -> dict[str, Any]:
        """Task `task_id` as the faces show it: state, approval, answer or error, origin and the
        pending action's plan (its conversation stays in the store unless `steps`). BadInput for
        an unknown task."""
        rec = self.store.get_task(task_id, steps=steps)
        out = rec.model_dump(mode="json")
        data = out.pop("data", {})
        out.update({k: data.get(k) for k in ("approval", "answer", "error", "origin",
                                             "model_calls", "llm", "on_stuck")})
        out["pending"] = with_plan_sha256({k: v for k, v in (data.get("pending") or {}).items()
                                           if k in ("tool", "plan", "input")}) or None
        return out

    def tasks(self, *, limit: int | None = 50, offset: int = 0) -> list[dict[str, Any]]:
        """Stored tasks, newest first, without their steps: at most `limit` (None: all) after
        skipping `offset`. A pending plan carries its `plan_sha256`, as in `task`."""
        out = [t.model_dump(mode="json", exclude={"steps"})
               for t in self.store.list_tasks(limit=limit, offset=offset)]
        for t in out:
            if isinstance((t.get("data") or {}).get("pending"), dict):
                t["data"]["pending"] = with_plan_sha256(t["data"]["pending"])
        return out


def with_plan_sha256(pending: dict[str, Any]) -> dict[str, Any]:
    """`pending` (a task's pending action, or an event's data) with the sha256 of its plan
    as shown, which an approval names; unchanged when it holds no plan."""
    if pending.get("plan") is None:
        return pending
    from .federation_plan import plan_sha256

    return {**pending, "plan_sha256": plan_sha256(pending["plan"])}
