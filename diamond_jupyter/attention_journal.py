"""The journal's side of `attention`: a `job.attention` event after each stored job event
that calls for one, and a timer per running job for "nearing its time limit". A workflow
step kept in its queue while its afterok moves to a retried parent's new job (the step's
`redepend` in the store) is not called stuck for that afterok meanwhile: the engine mends it."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import TYPE_CHECKING

from .attention import attention_for, make, walltime_margin_s
from .log_lines import one_line_logger
from .model import DiamondError, Event, Job, JobState, utcnow
from .store.workflows import WORKFLOW_DONE

if TYPE_CHECKING:
    from .journal import Journal

log = one_line_logger(__name__)


class Attention:
    def __init__(self, journal: Journal, margin=walltime_margin_s) -> None:
        self.journal = journal
        self.margin = margin  # seconds before the limit, from the walltime (s)
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def after(self, ev: Event) -> Event | None:
        """Store the attention event `ev` (just stored) calls for; arm or drop the job's
        walltime timer."""
        try:
            job = self.journal.store.get_job(ev.job_id or "")
        except DiamondError:
            return None
        if job.state.terminal:
            self.disarm(job.id)
        att = attention_for(ev, job)
        if att is None or self.dependency_being_moved(att, job):
            return None
        if att.data["attention"] == "started":
            self.arm(job)
        return self.journal.store.append_event(att)

    def dependency_being_moved(self, att: Event, job: Job) -> bool:
        """Whether `att` says `job` waits on a dependency never satisfied while its workflow,
        still running, moves that dependency to the retried parent's new job."""
        if att.data.get("never") != "DependencyNeverSatisfied" or not job.token:
            return False
        step_of = self.journal.store.workflow_of_token(job.token)
        if step_of is None:
            return False
        rec = self.journal.store.get_workflow(step_of[0])
        return rec.state not in WORKFLOW_DONE and bool(rec.step(step_of[1]).data.get("redepend"))

    def arm(self, job: Job) -> None:
        """A timer that says "nearing the time limit" for a running job with a walltime."""
        wall = job.spec.resources.walltime_s if job.spec else None
        if not wall or job.state != JobState.RUNNING or job.id in self._timers:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        started = job.started_at or utcnow()
        margin = self.margin(wall)
        warn_at = started + timedelta(seconds=wall - margin)
        delay = max((warn_at - utcnow()).total_seconds(), 0.0)
        self._timers[job.id] = loop.call_later(delay, self._fire, job.id, wall)

    def disarm(self, job_id: str) -> None:
        t = self._timers.pop(job_id, None)
        if t is not None:
            t.cancel()

    def rearm(self) -> None:
        """After a restart: the timers of the running jobs in the store."""
        for job in self.journal.store.list_jobs(states=[JobState.RUNNING], limit=None):
            self.arm(job)

    def _fire(self, job_id: str, wall: int) -> None:
        self._timers.pop(job_id, None)
        try:
            job = self.journal.store.get_job(job_id)
        except DiamondError:
            return
        if job.state != JobState.RUNNING:
            return
        left = None
        if job.started_at:
            left = round(wall - (utcnow() - job.started_at).total_seconds())
        reason = f"{max(left, 0)} s of its {wall} s time limit left" if left is not None \
            else "near its time limit"
        self.journal.append(make("walltime", job, reason, remaining_s=left, walltime_s=wall))

    def stop(self) -> None:
        for t in self._timers.values():
            t.cancel()
        self._timers.clear()
