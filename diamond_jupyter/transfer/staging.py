"""Stage a job's data around it, overlapping the stage-in with the queue wait.

The job is submitted HELD while its stage-in runs; when every entry has arrived it is
released, so the time in the queue and the time moving data overlap. A job the user held
too stays held, unless the user asked to release it during the stage-in
(`job.release-requested`): it is released then, once its input is there. A failed stage-in fails
the job ("stage-in of X failed: ...") and cancels the held job. After a COMPLETED job the
stage-out entries run; a failure there is recorded as the job's reason and an event. Each
copy retries a lost connection (resuming it) before it counts as failed.

A staging outlives its engine: it has a record of kind "stage" in the transfers table
(claimed by the engine running it), its copies have fixed transfer ids, and each phase ends
with an event of the job (`stage.in.done`, `job.released`, `stage.out.done|failed`). The
next engine to start resumes an unfinished staging at the phase it had reached. Its writes
(phase events, its record's end) carry the lease generation of its claim, and its actions
on the job (release, fail, cancel) check it first: an engine that stalled past the takeover
drops the staging when it wakes (`lease.lost`), leaving it to the engine that took it.

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

from ..leases import Fence, LeaseLost
from ..log_lines import one_line_logger
from ..model import DiamondError, Job, JobSpec, JobState, StageEntry
from ..store.seal import SealError
from . import Location, parse_location

if TYPE_CHECKING:
    from ..store import TransferRecord
    from . import TransferManager

log = one_line_logger(__name__)
PHASE_EVENTS = ["stage.in.started", "stage.in.done", "job.released", "stage.out.done",
                "stage.out.failed"]


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


def _left_out(skipped: list[str]) -> str:
    """The job's reason after a stage-out that left entries out: the hidden ones (a tool
    call's job) and the files left as they were, each counted, the first named."""
    from .sftp import HIDDEN_LEFT

    hidden = [s for s in skipped if s.endswith(HIDDEN_LEFT)]
    kept = [s for s in skipped if not s.endswith(HIDDEN_LEFT)]
    said = []
    for group, what in ((hidden, "left out {n} hidden entr{ies} (a tool call's job copies "
                                 "none)"),
                        (kept, "left {n} file(s) as they were")):
        if group:
            shown = "; ".join(x.removesuffix(f": {HIDDEN_LEFT}") for x in group[:5])
            more = f"; and {len(group) - 5} more" if len(group) > 5 else ""
            said.append(what.format(n=len(group), ies="y" if len(group) == 1 else "ies")
                        + f": {shown}{more}")
    return "stage-out " + "; ".join(said)


class StagedJob:
    """One submission's staging; created by the submit before the (held) submit, or by
    `resume_staged` after a restart (`resumed`: the job as stored). It runs its copies with
    the transfer manager `mgr`, and reaches the jobs through that manager's journal and
    sites."""

    def __init__(self, mgr: TransferManager, site: str, token: str, spec: JobSpec,
                 user_hold: bool, *, resumed: Job | None = None,
                 claimed: TransferRecord | None = None) -> None:
        self.mgr, self.site, self.token = mgr, site, token
        self.journal, self.store, self.sites = mgr.journal, mgr.store, mgr.sites
        self.spec, self.user_hold, self.resumed = spec, user_hold, resumed
        wd = spec.working_directory or self.sites.require(site).job_dir(token)
        self.ins = [(e, *resolve(e, self.sites, site, wd, "in")) for e in spec.stage_in]
        self.outs = [(e, *resolve(e, self.sites, site, wd, "out")) for e in spec.stage_out]
        self.key = f"stage-{token}"
        if claimed is None:  # a new staging (resumed: `claimed` by `resume_staged`)
            self.store.record_transfer("stage", token, site, transfer_id=self.key,
                                       state="ACTIVE", data={"stage_of": token, "site": site,
                                                             "user_hold": user_hold})
            claimed = self.store.claim_transfer(self.key, mgr.lease.id)
        # its writes carry this lease (none: another live engine holds it; it is not run)
        self.fence: Fence | None = mgr.hold(claimed) if claimed is not None else None
        self.bound: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._final_abort = False
        self.task = asyncio.ensure_future(self._run())
        mgr.adopt(self.key, self.task)  # the manager's close() stops it with the engine

    @property
    def hold(self) -> bool:
        """Submit held: yes while there is data to bring in first."""
        return bool(self.ins) or self.user_hold

    def job_id(self) -> str:
        job = self.store.job_by_token(self.token)
        return job.id if job else f"{self.site}:pending-{self.token}"

    def submitted(self, job_id: str) -> None:
        if not self.bound.done():
            self.bound.set_result(job_id)

    def abort(self, *, final: bool = True) -> None:
        """The submit failed: stop moving data. `final`: nothing was submitted; else (the
        site was lost mid-submit) the staging resumes once recovery has found the job."""
        self._final_abort = final
        self.task.cancel()

    def _emit(self, kind: str, **data) -> None:
        self.mgr.emit(kind, data, self.job_id(), self.site, fence=self.fence)

    def _settle(self, state: str, error: str | None = None) -> None:
        self.store.update_transfer(self.key, state=state, error=error, fence=self.fence)

    def _check(self) -> None:
        """LeaseLost before an action on the job (release, fail, cancel) when another engine
        took the staging over while this one stalled."""
        self.store.check_fence(self.fence)

    async def _copy(self, src: Location, dst: Location, **kw) -> TransferRecord:
        """One copy of the staging. A copy another engine took over (this one stalled) is
        followed where it runs now, unless the staging itself was taken over too."""
        while True:
            try:
                return await self.mgr.transfer(src, dst, **kw)
            except LeaseLost:
                self._check()

    async def _stage(self, entries, direction: str, *, again: bool = False) -> str | None:
        """Run the entries concurrently; the first failure as a reason, or None."""
        if not entries:
            return None
        kind = f"stage.{direction}.{'resumed' if again else 'started'}"
        self._emit(kind, entries=[str(s) for _, s, _ in entries])
        recs = await asyncio.gather(*(
            self._copy(src, dst, recursive=e.recursive, job_id=self.job_id(),
                              transfer_id=f"{self.token}-{direction}-{i}",
                              skip_hidden=e.skip_hidden,
                              # the job's inputs are put where it reads them; what a job
                              # wrote replaces only what an earlier copy there wrote
                              overwrite=direction == "in")
            for i, (e, src, dst) in enumerate(entries)))
        for (e, _, _), rec in zip(entries, recs, strict=True):
            if rec.state != "SUCCEEDED":
                why = rec.error or rec.state.lower()
                reason = f"stage-{direction} of {e.source} failed: {why}"
                if direction == "out":
                    self._emit("stage.out.failed", transfer_id=rec.id, reason=reason)
                return reason
        skipped = [f"{e.destination}: {line}" for (e, _, _), r in zip(entries, recs, strict=True)
                   for line in r.data.get("skipped") or []]
        self._emit(f"stage.{direction}.done", transfers=[r.id for r in recs],
                   bytes=sum(r.bytes or 0 for r in recs), skipped=skipped)
        if skipped and direction == "out":  # said with the job, never silent
            self._check()
            self.journal.apply(self.job_id(), JobState.COMPLETED, source="staging",
                               reason=_left_out(skipped))
        return None

    async def _fail(self, job_id: str, reason: str) -> str:
        """Fail the held job with `reason` and cancel it; the staging's end ("FAILED"), or
        "CANCELLED" when the user had asked to cancel the job (the cancel the user was told
        of stands: its copies were stopped by it, or ended as it came)."""
        if self._user_cancelled(job_id):
            return "CANCELLED"
        # FAILED first: the first terminal state is final, so the scheduler's CANCELLED of
        # the held job (seen later by the monitor) cannot hide the reason
        self._check()
        self.journal.apply(job_id, JobState.FAILED, reason=reason, source="staging")
        job = self.store.get_job(job_id)
        if job.native_id:
            with contextlib.suppress(DiamondError):
                await (site := self.sites.require(self.site)).cancel(site.native_ids_of(job))
        self._emit("stage.in.failed", reason=reason, cancelled=job.native_id)  # after the cancel
        return "FAILED"

    def _user_cancelled(self, job_id: str) -> bool:
        """The user asked to cancel the held job (`job.cancel-requested`): it is recorded
        CANCELLED (its scheduler was told), never released nor failed by the staging."""
        if not self.journal.cancel_requested(job_id):
            return False
        self._check()
        self.journal.apply(job_id, JobState.CANCELLED, source="staging",
                           reason="cancelled by request during its stage-in (never released)")
        return True

    def _seen(self) -> set[str]:
        """The phases this job's staging has finished (by their events), when resumed."""
        if self.resumed is None:
            return set()
        evs = self.store.events_since(0, kinds=PHASE_EVENTS, job_id=self.resumed.id,
                                          limit=None)
        return {e.kind for e in evs}

    async def _run(self) -> None:
        try:
            await self._phases()
        except LeaseLost as lost:  # taken over while this engine stalled: its to drive now
            self.mgr.lost(lost, self.job_id())
        except asyncio.CancelledError:
            if self._final_abort:
                self._settle("FAILED", "the submit failed")
            else:  # the engine is closing: the next one resumes this staging
                self.store.release_transfer(self.key, self.mgr.lease.id)
            raise
        except Exception as e:  # a bug must not leave the job held for ever
            log.exception("staging of %s failed", self.token)
            with contextlib.suppress(DiamondError):
                job_id = self.job_id()
                if not self.store.get_job(job_id).state.terminal:
                    await self._fail(job_id, f"staging failed: {e}")
            self._settle("FAILED", str(e))
        finally:  # ended here (or stopped with the engine): its lease goes with its run
            self.mgr.let_go(self.key, self.fence)

    async def _phases(self) -> None:
        if self.resumed is not None and self.resumed.native_id is None:
            # resumed while its submit may still reach the queue: recovery decides then
            self.resumed = await self.journal.recover_intent_settled(self.resumed)
            if self.resumed.native_id is None:
                self._settle("FAILED", "the job was never submitted")
                return
        seen, job = self._seen(), self.resumed
        if job is not None and job.state.terminal:  # ended while no engine ran the staging
            if job.state == JobState.FAILED and (job.reason or "").startswith("stage-in"):
                with contextlib.suppress(DiamondError):  # its cancel may not have been sent
                    await (site := self.sites.require(self.site)).cancel(site.native_ids_of(job))
        elif self.ins and "stage.in.done" not in seen:
            try:
                reason = await self._stage(self.ins, "in", again="stage.in.started" in seen)
            except (asyncio.CancelledError, LeaseLost):
                raise
            except Exception as e:  # a bug or an unexpected error must still fail the job
                reason = f"stage-in failed: {e}"
            job_id = await self.bound if job is None else job.id
            if reason:
                end = await self._fail(job_id, reason)
                self._settle(end, reason if end == "FAILED" else "the job was cancelled")
                return
        job_id = await self.bound if job is None else job.id
        # held by the user too: released now only if the user asked during the stage-in
        # (read with no wait since stage.in.done: a later ask releases the job itself)
        wanted = not self.user_hold or self.journal.release_requested(job_id)
        released = not self.ins or not wanted or "job.released" in seen
        if not released:
            end = "CANCELLED" if self._user_cancelled(job_id) else await self._release(job_id)
            if end is not None:
                self._settle(end, "release after stage-in failed" if end == "FAILED"
                             else "the job was cancelled")
                return
        if self.outs and "stage.out.done" not in seen and "stage.out.failed" not in seen:
            done = await self.journal.wait(job_id)
            if done.state == JobState.COMPLETED:
                reason = await self._stage(self.outs, "out",
                                           again=self.resumed is not None)
                if reason:  # the job itself completed: the reason says what is missing
                    self._check()
                    self.journal.apply(job_id, JobState.COMPLETED, reason=reason,
                                    source="staging")
        self._settle("SUCCEEDED")

    async def _release(self, job_id: str) -> str | None:
        """Release the held job; None when released (or it had ended), else the staging's
        end: "FAILED" (the job is failed with the reason), or "CANCELLED" (the user's cancel
        of the job came as the release was sent, and the release failed for it)."""
        job = self.store.get_job(job_id)
        if job.state.terminal:
            return None
        self._check()
        try:
            self.sites.require(self.site)
            await self.journal.release_once(job)  # once: a restart's look finds it sent
        except DiamondError as e:
            # the scheduler's answer first: ended (a cancel of the user's through another
            # engine reached it before its request was stored), or released before a restart
            with contextlib.suppress(DiamondError):
                job = await self.journal.refresh(job_id)
            if job.state == JobState.CANCELLED:
                return "CANCELLED"
            if job.state.terminal or (self.resumed is not None
                                      and job.state != JobState.PENDING):
                return None
            return await self._fail(job_id, f"release after stage-in failed: {e}")
        self._emit("job.released", native_id=job.native_id)
        return None


async def resume_staged(mgr: TransferManager, limit: int | None = None) -> list[str]:
    """After a restart: resume each unfinished staging that no live engine runs (at most
    `limit`, oldest first: the rest is left for a later call)."""
    resumed: list[str] = []
    store, taken = mgr.store, 0
    for rec in reversed(store.list_transfers(states=["PENDING", "ACTIVE"], limit=None,
                                             kinds=["stage"])):
        if limit is not None and taken >= limit:
            break
        if mgr.running(rec.id):
            continue
        claimed = store.claim_transfer(rec.id, mgr.lease.id)
        if claimed is None:
            continue
        taken += 1
        fence = mgr.hold(claimed)
        try:
            started = await _resume_one(mgr, rec, claimed, fence)
        except LeaseLost as lost:  # taken over while this engine stalled in the lookup
            mgr.lost(lost)
            continue
        if started is None:  # settled without a run: nothing holds its lease here now
            mgr.let_go(rec.id, fence)
        else:
            resumed.append(started)
    return resumed


async def _resume_one(mgr: TransferManager, rec: TransferRecord, claimed: TransferRecord,
                      fence: Fence) -> str | None:
    """Resume the staging `rec`, just claimed: its job's id, or None when it cannot run."""
    store, journal = mgr.store, mgr.journal
    token = str(rec.data.get("stage_of"))
    job = store.job_by_token(token)
    if job is None or job.site not in mgr.sites or job.spec is None:
        store.update_transfer(rec.id, fence=fence, state="FAILED", error=(
            "cannot resume the staging: " + ("the job is unknown" if job is None else
                                             f"site {job.site} is not configured here")))
        return None
    unsure = 0.0  # > 0: its submit may still reach the queue (the staging waits)
    if job.native_id is None and not job.state.terminal:
        # its engine is gone, so its submit is not in flight: ask the site now
        unsure = await journal.recover_intent(job)
        job = store.job_by_token(token) or job
    if job.native_id is None and unsure <= 0:
        store.update_transfer(rec.id, fence=fence, state="FAILED",
                              error="the job was never submitted")
        return None
    try:
        spec = store.spec_to_run(job)  # as given, secrets included
    except SealError as e:  # never the redacted text
        store.update_transfer(rec.id, fence=fence, state="FAILED",
                              error=f"cannot resume the staging: {e}")
        return None
    StagedJob(mgr, job.site, token, spec, bool(rec.data.get("user_hold")), resumed=job,
              claimed=claimed)
    return job.id
