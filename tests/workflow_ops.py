"""A workflow engine's operations below the facade (`WorkflowOps`), on a real store and no
site: the workflow tests' (test_workflow_unseen.py, _outputs, _approval, _gate) fakes start
from `RecordedOps` and override what each test looks at or changes; `next_engine` is the one
resuming their workflows after an engine stopped."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

from diamond_jupyter.model import Dependency, Job, JobSpec, JobState
from diamond_jupyter.sites import Sites
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import Estimate, WorkflowEngine


class RecordedOps:
    """Every site takes dependencies and none a gate; placement takes the first site not
    excluded, with no estimate; a submit is recorded in the store, its working directory
    ROOT/SITE/TOKEN, and PENDING at once (`submitted` sees it first); a cancel is
    CANCELLED (noted in `cancels`); a copy SUCCEEDS; every declared output is there."""

    sites: tuple[str, ...] = ("alpha", "beta", "gamma")
    root = "/w"

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine_id = "engine-1"
        self.ids = itertools.count(100)
        self.cancels: list[str] = []

    def site_names(self) -> list[str]:
        return list(self.sites)

    def site_absence(self, site: str) -> str:
        return Sites(configured=self.sites).absence(site)

    def supports_dependency(self, site: str) -> bool:
        return True

    def supports_gate(self, site: str) -> bool:
        return False

    def supports_dependency_update(self, site: str) -> bool:
        return False

    async def update_dependencies(self, job: Job, deps: list[Dependency]) -> None:
        raise AssertionError("no site here changes a queued job's dependencies")

    def new_token(self) -> str:
        return f"tok{next(self.ids)}"

    async def place(self, spec: JobSpec, sources: dict, exclude: set, ready_at: Any = None
                    ) -> Estimate:
        return Estimate(next(s for s in self.sites if s not in exclude), None, None)

    async def expected(self, spec: JobSpec, site: str, sources: dict, ready_at: Any
                       ) -> Estimate:
        return Estimate(site, None, None)

    async def submit(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                     origin: dict[str, Any], fence: Any = None) -> Job:
        spec = spec.model_copy(update={"working_directory": f"{self.root}/{site}/{token}"})
        self.store.record_intent(site, token, spec, origin=origin, fence=fence)
        self.submitted(spec, site, hold=hold, token=token, origin=origin)
        job = self.store.bind_native_id(token, str(next(self.ids)))
        self.store.apply_state(job.id, JobState.PENDING)
        return self.store.get_job(job.id)

    def submitted(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                  origin: dict[str, Any]) -> None:
        """A submit recorded as an intent, before its job is bound (a test notes it here,
        or raises to lose the submit's answer)."""

    async def cancel(self, job: Job) -> None:
        self.cancels.append(job.id)
        self.store.apply_state(job.id, JobState.CANCELLED)

    async def release(self, job: Job) -> None:
        pass

    async def refresh(self, job: Job) -> Job:
        return self.store.get_job(job.id)

    async def recover_submit(self, job: Job) -> float:
        return 0.0

    def follow(self, job: Job) -> None:
        pass

    async def transfer(self, src: str, dst: str, **kw: Any) -> Any:
        return SimpleNamespace(id=kw["transfer_id"], src=src, state="SUCCEEDED", bytes=1,
                               error=None)

    async def can_start_now(self, job: Job) -> bool:
        return True

    async def missing_files(self, site: str, paths: list[str]) -> list[str]:
        return []  # every declared output was written

    def subscribe(self, callback: Any) -> Any:
        return lambda: None

    async def publish(self) -> None:
        pass


class Held:
    """Mixed in before a `RecordedOps`: an operation that awaits `held_until_done()` waits
    for `done` first (`started` is set as it begins), so an engine may stop or a workflow
    be cancelled in the middle of it."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)  # type: ignore[call-arg]
        self.started = asyncio.Event()
        self.done = asyncio.Event()

    async def held_until_done(self) -> None:
        self.started.set()
        await self.done.wait()


class HeldCopy(Held):
    """Each copy held: it ends once `done` is set."""

    async def transfer(self, src: str, dst: str, **kw: Any) -> Any:
        await self.held_until_done()
        return await super().transfer(src, dst, **kw)  # type: ignore[misc]


@asynccontextmanager
async def next_engine(ops: RecordedOps, resumed: list[str]) -> AsyncIterator[WorkflowEngine]:
    """The engine started after another stopped: engine-2 on `ops` (on the first engine's
    store), having resumed just the workflows `resumed`; closed when the block ends."""
    ops.engine_id = "engine-2"
    engine = WorkflowEngine(ops)
    try:
        assert await engine.resume() == resumed
        yield engine
    finally:
        await engine.close()
