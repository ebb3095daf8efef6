"""The lookout: the job of a submit whose answer was lost (`SubmitUnsure`), looked for by its
token in the background, so that a face that must answer at once (the magics' job card, the
REST API) does not wait for it.

`start_looking_for` records a `job.submit-unsure` event (the job is being looked for)
and returns the open intent; a task on the engine's loop then looks for the job until it
is bound (`job.submitted`) or closed as never submitted once the settle time has passed
(`job.state` FAILED). A started engine looks again for every intent left open so, after a
restart included (`resume_lookouts`). `lookout(job_id)` says where the search stands.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .log_lines import one_line_logger
from .model import DiamondError, Event, Job, JobState, SubmitUnsure

if TYPE_CHECKING:
    from .journal import Journal
    from .store import Store

log = one_line_logger(__name__)

LOOKOUT_EVENT = "job.submit-unsure"
RETRY_MAX_S = 60.0  # a site that did not answer by the settle time: asked again this often


class LookoutMixin:
    store: Store
    journal: Journal
    _lookouts: dict[str, asyncio.Task]

    def start_looking_for(self, lost: SubmitUnsure) -> Job:
        """Start looking, in the background, for the job of the submit whose answer was
        `lost`: a `job.submit-unsure` event says so (once per job); the open intent as
        stored now. Looking again for a job already looked for starts nothing new."""
        job = self.store.get_job(lost.job_id)
        if not self._lookout_events(job.id):
            self.journal.append(Event(kind=LOOKOUT_EVENT, job_id=job.id, site=job.site,
                                      data={"state": JobState.UNKNOWN.value,
                                            "reason": lost.lost, "settle_s": lost.settle_s}))
        self._start_lookout(job)
        return self.store.get_job(job.id)

    def resume_lookouts(self) -> list[str]:
        """Look again for each intent a lookout had started on that is still open (the
        engine that looked stopped, or the server restarted); the ids looked for."""
        resumed = []
        for job in self.store.intents_without_native_id():
            if self._lookout_events(job.id) and self._start_lookout(job):
                resumed.append(job.id)
        return resumed

    def lookout(self, job_id: str) -> dict[str, Any] | None:
        """Where the search for job `job_id` stands when its submit's answer was lost, None
        for any other job: {"state": "looking" | "found" | "never-submitted", "since" (when
        the search began, ISO 8601), "settle_s", "message" (what a face shows)}."""
        job = self.store.get_job(job_id)
        said = self._lookout_events(job.id)
        if not said:
            return None
        data, settle_s = said[0].data, float(said[0].data.get("settle_s") or 0)
        if job.native_id is not None:
            state = "found"
            message = f"{job.site} had taken the job: found in its queue as {job.id}"
        elif job.state.terminal:
            state = "never-submitted"
            message = (f"no job carrying the submit's token showed in {job.site}'s queue "
                       f"within {settle_s:g}s: {job.id} is closed as never submitted; "
                       "nothing was submitted, so a new submit is safe")
        else:
            state = "looking"
            message = (f"{data.get('reason') or 'the submit answer was lost'}: the scheduler "
                       f"may have taken the job; looking for it in {job.site}'s queue by its "
                       f"token (up to {settle_s:g}s): do not submit it again")
        return {"state": state, "since": said[0].at.isoformat(), "settle_s": settle_s,
                "message": message}

    def _lookout_events(self, job_id: str) -> list[Event]:
        return self.store.events_since(0, kinds=[LOOKOUT_EVENT], job_id=job_id, limit=1)

    def _start_lookout(self, job: Job) -> bool:
        """A lookout task for `job` unless one runs; whether one was started."""
        token = job.token or ""
        if token in self._lookouts or token in self.journal.in_flight:
            return False
        self.journal.in_flight.add(token)  # the intent sweep leaves it to the lookout
        self._lookouts[token] = asyncio.ensure_future(self._look(job))
        return True

    async def _look(self, job: Job) -> None:
        """Look until the job is bound or closed; a site still not answering at the settle
        time is asked again, waits doubling up to RETRY_MAX_S (the intent stays open)."""
        token, pause = job.token or "", 5.0
        try:
            while True:
                try:
                    job = await self.journal.look_for_lost_submit(
                        self.store.job_by_token(token) or job)
                except DiamondError as e:  # e.g. bound or closed meanwhile by another engine
                    log.info("looking for %s: %s", job.id, e)
                    job = self.store.job_by_token(token) or job
                if job.native_id is not None or job.state.terminal:
                    return
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_MAX_S)
        finally:
            self.journal.in_flight.discard(token)
            self._lookouts.pop(token, None)

    async def _stop_lookouts(self) -> None:
        tasks = list(self._lookouts.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
