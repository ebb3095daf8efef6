"""What the kernel's faces (magics, handles, job cards) call: an `Engine`. Two implement it:
the user's Jupyter server over REST (`rest.ServerClient`), and a Federation in-process
(`inprocess.LocalEngine`); `connect.connect` picks one.

Both engines run their I/O on a private asyncio loop in a daemon thread, so the kernel's own
loop is never blocked by, nor re-entered from, engine work. `call(coro)` bridges sync code.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any

from ..job_dependencies import JobDependency
from ..log_lines import one_line_logger
from ..model import Job

log = one_line_logger(__name__)

JobCallback = Callable[[Job], Any]
_JOB_FIELDS = set(Job.model_fields)


def job_from_json(data: dict[str, Any]) -> Job:
    """A Job from REST JSON, tolerating fields this client does not know."""
    return Job.model_validate({k: v for k, v in data.items() if k in _JOB_FIELDS})


class _LoopThread:
    """An asyncio loop in a daemon thread."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


async def _cancel_others() -> None:
    """Cancel every other task of this loop (handles following jobs) and let them end."""
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


class Engine:
    """What magics and handles call. Async methods run on the engine's loop."""

    kind = "engine"

    def __init__(self, note: str = "") -> None:
        self.note = note  # why this engine was chosen
        # token: where the search for a job whose submit's answer was lost stands (last read)
        self._lookouts: dict[str, dict[str, Any]] = {}
        self._lt = _LoopThread(f"diamond-{self.kind}")

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any:
        """Run `coro` on the engine loop and wait for its result (from any other thread)."""
        fut = self._lt.submit(coro)
        try:
            return fut.result(timeout)
        except KeyboardInterrupt:
            fut.cancel()
            raise

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> Future:
        return self._lt.submit(coro)

    def close(self) -> None:
        try:
            self.call(self._aclose(), timeout=10)
            self.call(_cancel_others(), timeout=10)  # cards still following their jobs
        except Exception:  # closing is best effort
            log.debug("engine close failed", exc_info=True)
        self._lt.stop()

    async def _aclose(self) -> None:
        pass

    def lookout(self, job: Job) -> dict[str, Any] | None:
        """Where the search for `job` stands when its submit's answer was lost, as last read
        (Federation.lookout: state looking, found or never-submitted, and its message);
        None for any other job."""
        return self._lookouts.get(job.token or job.id)

    def time_limit(self, job: Job) -> int | None:
        """The job's time limit in seconds, when it asked for one."""
        return job.spec.resources.walltime_s if job.spec else None

    # The API (implemented by both engines) ---------------------------------------------
    async def sites(self) -> list[dict[str, Any]]: raise NotImplementedError
    async def snapshot(self, site: str) -> dict[str, Any]: raise NotImplementedError
    async def place(self, text: str) -> dict[str, Any]: raise NotImplementedError
    async def jobs(self, site: str | None = None, state: str | None = None,
                   limit: int = 50) -> list[Job]: raise NotImplementedError
    async def submit(self, text: str, *, site: str = "auto", name: str | None = None,
                     overrides: dict[str, Any] | None = None,
                     origin: dict[str, Any] | None = None, hedge: int | None = None,
                     hold: bool = False) -> Job:
        """The submitted job (with `hold`, held until `release`); a submit whose answer was
        lost gives its open intent, looked for in the background (`lookout`)."""
        raise NotImplementedError
    async def job(self, job_id: str, refresh: bool = False) -> Job: raise NotImplementedError
    async def submit_notes(self, job_id: str) -> list[str]:
        """What the submit changed or dropped to fit the site (Federation.submit_notes)."""
        raise NotImplementedError
    async def dependencies(self, job_id: str) -> list[JobDependency]:
        """What the job waits for (Federation.dependencies)."""
        raise NotImplementedError
    async def cancel(self, job_id: str) -> Job: raise NotImplementedError
    async def release(self, job_id: str) -> tuple[Job, str | None]:
        """Release a job submitted held: the job, and what a release kept during its
        stage-in waits for (None: sent to the scheduler) (Federation.release)."""
        raise NotImplementedError
    async def logs(self, job_id: str, lines: int = 100) -> dict[str, str]:
        raise NotImplementedError
    async def files(self, job_id: str) -> list[str]: raise NotImplementedError
    async def fetch(self, job_id: str, dest: str | None = None, *,
                    files: list[str] | None = None, overwrite: bool = False) -> dict[str, Any]:
        """{"dest", "paths", "skipped"}: the local paths written and one "REL: why" per
        result file not written (Federation.fetch)."""
        raise NotImplementedError
    async def translate(self, text: str, to: str,
                        from_: str | None = None) -> tuple[str, list[str]]:
        raise NotImplementedError
    async def watch(self, job_id: str, callback: JobCallback) -> Job:
        """Call `callback(job)` with the job now and after each change; return it at its end."""
        raise NotImplementedError
    async def transfer(self, src: str, dst: str, via: str | None = None,
                       recursive: bool = False, *, overwrite: bool = False
                       ) -> dict[str, Any]:
        """Copy SITE:PATH (or a server path) to another; returns the finished record (files
        left in a destination directory, without `overwrite`, in its data.skipped)."""
        raise NotImplementedError
    async def cancel_transfer(self, transfer_id: str) -> dict[str, Any]:
        """Cancel a transfer; its record, CANCELLED (BadInput when unknown or ended)."""
        raise NotImplementedError
    async def run_workflow(self, text: str, origin: dict[str, Any] | None = None
                           ) -> dict[str, Any]:
        """Start a workflow (YAML text); {"id", "state", "steps": [...]}."""
        raise NotImplementedError
    async def workflow(self, workflow_id: str) -> dict[str, Any]: raise NotImplementedError
    async def cancel_workflow(self, workflow_id: str) -> dict[str, Any]:
        raise NotImplementedError
    async def watch_workflow(self, workflow_id: str,
                             callback: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        """Call `callback(workflow)` now and after each change; return it at its end."""
        raise NotImplementedError
