"""LocalEngine: the Federation run in this process, on the engine's own loop (no server)."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from ..aio import within
from ..job_dependencies import JobDependency
from ..model import Job, SubmitUnsure, visible
from ..option_types import SPEC_OPTIONS
from .engine import Engine, JobCallback


def _no_library_tracebacks() -> None:
    """paramiko logs an unreachable host's handshake as an ERROR and its traceback: in a
    kernel with no logging set up, Python's last-resort handler printed them in the cell of
    whatever magic ran next, beside the one line the engine says. A handler of none keeps
    them out of the cell; a handler the user set up still gets them."""
    logger = logging.getLogger("paramiko")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


class LocalEngine(Engine):
    kind = "local"

    def __init__(self, config: str | Path | None = None, note: str = "") -> None:
        super().__init__(note)
        self._config = config
        self._fed: Any = None
        self._fed_lock = asyncio.Lock()
        self._agent: Any = None  # agent.service.AgentService, made on first use

    async def fed(self) -> Any:
        async with self._fed_lock:
            if self._fed is None:
                from ..federation import Federation

                _no_library_tracebacks()
                fed = Federation(self._config, poll_interval_s=30.0, min_poll_s=1.0,
                                 use_login_holders=False, read_by="kernel")
                await fed.start(recover=False, resume_held=True, discover_sites=True)  # long-lived
                self._fed = fed
            return self._fed

    async def agent(self) -> Any:
        """This engine's agent service (made on first use)."""
        if self._agent is None:
            from ..agent.service import AgentService

            self._agent = AgentService(await self.fed())
        return self._agent

    async def _aclose(self) -> None:
        if self._agent is not None:
            await self._agent.close()
        if self._fed is not None:
            await self._fed.close()

    async def sites(self) -> list[dict[str, Any]]:
        fed = await self.fed()
        if note := fed.sites_file_changed():  # the file is not what is listed: said as REST's
            print(f"diamond: {visible(note)}", file=sys.stderr)
        return [s.model_dump(mode="json") | {"partitions": [p.name for p in s.partitions]}
                for s in await fed.site_summaries()]

    async def snapshot(self, site: str) -> dict[str, Any]:
        fed = await self.fed()
        return (await fed.snapshot(site, max_age_s=0)).model_dump(mode="json")

    async def place(self, text: str) -> dict[str, Any]:
        fed = await self.fed()
        return (await fed.place(fed.spec_from_text(text))).model_dump(mode="json")

    async def jobs(self, site: str | None = None, state: str | None = None,
                   limit: int = 50) -> list[Job]:
        fed = await self.fed()
        return fed.jobs(site=site, states=state.split(",") if state else None, limit=limit)

    async def submit(self, text: str, *, site: str = "auto", name: str | None = None,
                     overrides: dict[str, Any] | None = None,
                     origin: dict[str, Any] | None = None, hedge: int | None = None,
                     hold: bool = False) -> Job:
        fed = await self.fed()
        spec = fed.spec_from_text(text, name=name, overrides=overrides, said_as=SPEC_OPTIONS)
        force = bool((overrides or {}).get("force"))  # submit to a site lacking a need
        try:
            return await fed.submit(spec, site, origin=origin, force=force, hedge=hedge,
                                    hold=hold)
        except SubmitUnsure as lost:  # the site may have the job: looked for meanwhile
            return self._seen(fed, fed.start_looking_for(lost), lost=True)

    def _seen(self, fed: Any, job: Job, lost: bool = False) -> Job:
        """`job`, its lookout read again when its submit's answer was lost (an unbound job
        may be one, submitted by another face)."""
        key = job.token or job.id
        if lost or key in self._lookouts or job.native_id is None:
            self._lookouts[key] = fed.lookout(job.id)
        return job

    async def job(self, job_id: str, refresh: bool = False) -> Job:
        fed = await self.fed()
        return self._seen(fed, await fed.status(job_id, refresh=refresh))

    async def dependencies(self, job_id: str) -> list[JobDependency]:
        return (await self.fed()).dependencies(job_id)

    async def cancel(self, job_id: str) -> Job:
        return await (await self.fed()).cancel(job_id)

    async def release(self, job_id: str) -> tuple[Job, str | None]:
        fed = await self.fed()
        job = await fed.release(job_id)
        return job, fed.release_waiting(job.id)

    async def submit_notes(self, job_id: str) -> list[str]:
        return (await self.fed()).submit_notes(job_id)

    async def logs(self, job_id: str, lines: int = 100) -> dict[str, str]:
        return await (await self.fed()).logs(job_id, lines=lines)

    async def files(self, job_id: str) -> list[str]:
        return await (await self.fed()).files(job_id)

    async def fetch(self, job_id: str, dest: str | None = None, *,
                    files: list[str] | None = None, overwrite: bool = False) -> dict[str, Any]:
        got = await (await self.fed()).fetch(job_id, dest, files=files, overwrite=overwrite)
        return {"dest": str(got.dest), "paths": [str(p) for p in got.paths],
                "skipped": got.skipped}

    async def transfer(self, src: str, dst: str, via: str | None = None,
                       recursive: bool = False, *, overwrite: bool = False
                       ) -> dict[str, Any]:
        rec = await (await self.fed()).transfer(src, dst, via, recursive=recursive,
                                                overwrite=overwrite,
                                                said_as={"recursive": "--recursive"})
        return rec.model_dump(mode="json")

    async def cancel_transfer(self, transfer_id: str) -> dict[str, Any]:
        return (await (await self.fed()).cancel_transfer(transfer_id)).model_dump(mode="json")

    async def translate(self, text: str, to: str,
                        from_: str | None = None) -> tuple[str, list[str]]:
        from ..federation import Federation

        script, warnings, _ = Federation.translate(text, to, from_)
        return script, warnings

    async def watch(self, job_id: str, callback: JobCallback) -> Job:
        fed = await self.fed()

        def until(job: Job) -> bool:  # called now and after each event for this job
            callback(self._seen(fed, job))
            return job.state.terminal
        return await fed.wait(job_id, until=until)

    # -- workflows ---------------------------------------------------------------------------
    async def run_workflow(self, text: str, origin: dict[str, Any] | None = None
                           ) -> dict[str, Any]:
        fed = await self.fed()
        return (await fed.run_workflow(text, origin=origin)).contract()

    async def workflow(self, workflow_id: str) -> dict[str, Any]:
        return (await self.fed()).workflow(workflow_id).contract()

    async def cancel_workflow(self, workflow_id: str) -> dict[str, Any]:
        return (await (await self.fed()).cancel_workflow(workflow_id)).contract()

    async def watch_workflow(self, workflow_id: str, callback: Any) -> dict[str, Any]:
        """This process's engine drives the workflow; each advance (a job event) wakes us."""
        fed = await self.fed()
        engine = fed.workflow_engine
        while True:
            engine.changed.clear()
            wf = fed.workflow(workflow_id).contract()
            callback(wf)
            if wf["state"] in ("COMPLETED", "FAILED", "CANCELLED"):
                return wf
            try:
                await within(engine.changed.wait(), 5.0)
            except asyncio.TimeoutError:
                await engine.advance(workflow_id)  # a safety net: adopt it if no one drives it
