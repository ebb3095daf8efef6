"""Stage a job's data around it, overlapping the stage-in with the queue wait.

The job is submitted HELD while its stage-in runs; when every entry has arrived it is
released, so the time in the queue and the time moving data overlap. A failed stage-in fails
the job ("stage-in of X failed: ...") and cancels the held job. After a COMPLETED job the
stage-out entries run; a failure there is recorded as the job's reason and an event.

Paths: a stage-in source is "SITE:PATH" or a path on the server; its destination, when it
names no site, is on the job's site, relative to the job's working directory. A stage-out
source without a site is on the job's site (relative to the working directory); its
destination without a site is on the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
from typing import TYPE_CHECKING

from ..model import DiamondError, JobSpec, JobState, StageEntry
from . import Location, parse_location

if TYPE_CHECKING:
    from ..federation import Federation
    from . import TransferManager


def _on_site(loc: Location, site: str, workdir: str) -> Location:
    if loc.site is not None:
        return loc
    p = loc.path
    if not (p.startswith("/") or p == "~" or p.startswith("~/")):
        p = posixpath.join(workdir, p)
    return Location(site, p)


def resolve(entry: StageEntry, sites: dict, site: str, workdir: str,
            direction: str) -> tuple[Location, Location]:
    src = parse_location(entry.source, sites)
    dst = parse_location(entry.destination or posixpath.basename(entry.source.rstrip("/")),
                         sites)
    if direction == "in":
        return src, _on_site(dst, site, workdir)
    return _on_site(src, site, workdir), dst


class StagedJob:
    """One submission's staging; created by Federation.submit before the (held) submit."""

    def __init__(self, fed: Federation, mgr: TransferManager, site: str, token: str,
                 spec: JobSpec, user_hold: bool) -> None:
        self.fed, self.mgr, self.site, self.token = fed, mgr, site, token
        self.spec, self.user_hold = spec, user_hold
        wd = spec.working_directory or fed.site(site).job_dir(token)
        self.ins = [(e, *resolve(e, fed.sites, site, wd, "in")) for e in spec.stage_in]
        self.outs = [(e, *resolve(e, fed.sites, site, wd, "out")) for e in spec.stage_out]
        self.bound: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.task = asyncio.ensure_future(self._run())
        key = f"stage-{token}"  # the manager's close() stops it with the engine
        mgr._tasks[key] = self.task
        self.task.add_done_callback(lambda _t: mgr._tasks.pop(key, None))

    @property
    def hold(self) -> bool:
        """Submit held: yes while there is data to bring in first."""
        return bool(self.ins) or self.user_hold

    def job_id(self) -> str:
        job = self.fed.store.job_by_token(self.token)
        return job.id if job else f"{self.site}:pending-{self.token}"

    def submitted(self, job_id: str) -> None:
        if not self.bound.done():
            self.bound.set_result(job_id)

    def abort(self) -> None:
        """The submit failed: nothing to release; stop moving data."""
        self.task.cancel()

    def _emit(self, kind: str, **data) -> None:
        self.mgr.emit(kind, data, self.job_id(), self.site)

    async def _stage(self, entries, direction: str) -> str | None:
        """Run the entries concurrently; the first failure as a reason, or None."""
        if not entries:
            return None
        self._emit(f"stage.{direction}.started", entries=[str(s) for _, s, _ in entries])
        recs = await asyncio.gather(*(
            self.mgr.transfer(src, dst, recursive=e.recursive, job_id=self.job_id(),
                              transfer_id=f"{self.token}-{direction}-{i}")
            for i, (e, src, dst) in enumerate(entries)))
        for (e, _, _), rec in zip(entries, recs, strict=True):
            if rec.state != "SUCCEEDED":
                why = rec.error or rec.state.lower()
                reason = f"stage-{direction} of {e.source} failed: {why}"
                if direction == "out":
                    self._emit("stage.out.failed", transfer_id=rec.id, reason=reason)
                return reason
        self._emit(f"stage.{direction}.done", transfers=[r.id for r in recs],
                   bytes=sum(r.bytes or 0 for r in recs))
        return None

    async def _fail(self, job_id: str, reason: str) -> None:
        # FAILED first: the first terminal state is final, so the scheduler's CANCELLED of
        # the held job (seen later by the monitor) cannot hide the reason
        self.fed._apply(job_id, JobState.FAILED, reason=reason, source="staging")
        job = self.fed.store.get_job(job_id)
        if job.native_id:
            with contextlib.suppress(DiamondError):
                await self.fed.site(self.site).cancel([job.native_id])
        self._emit("stage.in.failed", reason=reason, cancelled=job.native_id)  # after the cancel

    async def _run(self) -> None:
        try:
            reason = await self._stage(self.ins, "in")
        except asyncio.CancelledError:
            if self.bound.done() and not self.bound.cancelled():
                await asyncio.shield(self._fail(self.bound.result(),
                                                "stage-in interrupted (engine closed)"))
            raise
        except Exception as e:  # a bug or an unexpected error must still fail the job
            reason = f"stage-in failed: {e}"
        job_id = await self.bound
        if reason:
            await self._fail(job_id, reason)
            return
        if self.ins and not self.user_hold:
            job = self.fed.store.get_job(job_id)
            try:
                await self.fed.site(self.site).release([job.native_id])
            except DiamondError as e:
                await self._fail(job_id, f"release after stage-in failed: {e}")
                return
            self._emit("job.released", native_id=job.native_id)
        if self.outs:
            job = await self.fed.wait(job_id)
            if job.state == JobState.COMPLETED:
                reason = await self._stage(self.outs, "out")
                if reason:  # the job itself completed: the reason says what is missing
                    self.fed._apply(job_id, JobState.COMPLETED, reason=reason,
                                    source="staging")
