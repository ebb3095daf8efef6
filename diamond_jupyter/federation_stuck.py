"""Resubmitting a job that can never start where it is (a mixin of `Federation`): the same
job, as its user wrote it, placed among the other sites; the new job is submitted before the
stuck one is cancelled, so the work is never without a job."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import TASK_IDS, BadInput, Job, JobSpec

if TYPE_CHECKING:
    from .sites import Site
    from .store import Store

SITE_BOUND = ("queue", "account", "qos", "reservation")  # names that mean nothing elsewhere


class StuckMixin:
    store: Store  # provided by Federation

    def job(self, job_id: str) -> Job:  # provided by Federation
        raise NotImplementedError

    def site(self, name: str) -> Site:  # provided by Federation
        raise NotImplementedError

    def original_spec(self, job: Job) -> JobSpec:
        """The job as its user gave it: without the wrapper, token, job-directory paths and
        the names (partition, account, QOS, reservation) that belong to its site."""
        from .sites import token_tag
        from .wrapper import wrapper_prologue

        if job.spec is None or not job.token:
            raise BadInput(f"{job.id}: the store has no description of this job to resubmit")
        spec = self.store.spec_to_run(job) or job.spec  # secrets as given, not redacted
        site = self.site(job.site) if job.site in getattr(self, "sites", {}) else None
        body = spec.script or ""
        if site is not None:
            jd = site.job_dir(job.token)
            prologue = wrapper_prologue(site.event_file, job.token, f"{jd}/secret")
            body = body.removeprefix(prologue)
        else:
            jd = None
        upd: dict[str, Any] = {k: None for k in SITE_BOUND}
        upd["script"] = body
        comment = (spec.comment or "").replace(token_tag(job.token), "").strip()
        upd["comment"] = comment or None
        for field in ("working_directory", "stdout", "stderr"):
            value = getattr(spec, field)
            if jd is not None and value and (value == jd or value.startswith(jd + "/")):
                upd[field] = None
        if upd.get("stdout") is None and upd.get("stderr") is None and jd is not None:
            upd["join_output"] = False
        if TASK_IDS in spec.metadata:  # its tasks' ids here: the new job's are its own
            upd["metadata"] = {k: v for k, v in spec.metadata.items() if k != TASK_IDS}
        return spec.model_copy(update=upd)

    async def plan_resubmit(self, job_id: str) -> dict[str, Any]:
        """Where and what a resubmission of `job_id` elsewhere would run: the submit plan
        on the site placement ranks first among the others, and the cancel of the job."""
        job = self.job(job_id)
        if job.state.terminal:
            raise BadInput(f"{job.id} has ended ({job.state.value}): nothing to move")
        spec = self.original_spec(job)
        others = [n for n in getattr(self, "sites", {}) if n != job.site]
        if not others:
            raise BadInput(f"{job.id}: there is no other site to move it to")
        pl = await self.place(spec, sites=others)  # type: ignore[attr-defined]
        if pl.choice is None:
            raise BadInput(f"{job.id}: no other site can run it: {pl.summary()}")
        submit = await self.plan_submit(spec, pl.choice)  # type: ignore[attr-defined]
        return {"action": "resubmit", "job_id": job.id, "from_site": job.site,
                "job_state": job.state.value, "why": job.reason, "site": pl.choice,
                "submit": submit, "cancel": job.id}

    async def resubmit(self, job_id: str, *, plan: dict[str, Any] | None = None,
                       key: str | None = None, origin: dict | None = None
                       ) -> tuple[Job, Job, str | None]:
        """Submit `job_id` again elsewhere (exactly `plan` when it was approved), then
        cancel it; returns (new job, old job, None). The old job is cancelled only in the
        state it was in before the submit (the one the plan showed): one that started or
        ended while the new job was submitted is left as it is, beside the new one, and the
        third item says so, naming both jobs."""
        old = self.job(job_id)
        if plan is not None:
            _check_still_as_planned(old, plan)
        spec = self.original_spec(old)
        origin = {**(old.origin or {}), **(origin or {}), "resubmitted_from": old.id}
        if plan is not None:
            new = await self.submit_approved(spec, plan["submit"],  # type: ignore[attr-defined]
                                             origin=origin)
        else:
            fresh = await self.plan_resubmit(job_id)
            if key:
                new = await self.submit_once(spec, fresh["site"],  # type: ignore[attr-defined]
                                             key=key, origin=origin)
            else:
                new = await self.submit(spec, fresh["site"],  # type: ignore[attr-defined]
                                        origin=origin)
        now = self.job(old.id)
        if now.state.terminal or now.state != old.state:  # not what was approved to cancel
            return new, now, _kept_both(new, now)
        return new, await self.cancel(old.id), None  # type: ignore[attr-defined]


def _kept_both(new: Job, old: Job) -> str:
    """What a move says that left its old job `old` uncancelled (it started or ended while
    `new` was submitted): both jobs, and how to stop the one not wanted."""
    if old.state.terminal:
        return (f"{old.id} ended ({old.state.value}) on {old.site} while {new.id} was "
                f"submitted on {new.site}: if its work is done, cancel {new.id}")
    return (f"{old.id} became {old.state.value} on {old.site} while {new.id} was submitted "
            f"on {new.site}, so it was not cancelled: both jobs are kept. Cancel the one "
            f"not wanted: cancel {old.id} or cancel {new.id}")


def _check_still_as_planned(job: Job, plan: dict[str, Any]) -> None:
    """PlanChanged, before anything is sent, when the approved move of `plan` is no longer
    the one shown: it names another job, or the job has ended or changed state since (a
    job that went on to finish would run twice; one that started would be cancelled
    running, its work lost)."""
    from .federation_plan import PlanChanged

    if plan.get("job_id", job.id) != job.id:
        raise PlanChanged(f"the approved move was of {plan.get('job_id')}, not {job.id}; "
                          "nothing was submitted or cancelled")
    shown = plan.get("job_state")
    if job.state.terminal or (shown is not None and job.state.value != shown):
        was = f" (it was {shown} when the move was shown)" if shown else ""
        raise PlanChanged(f"{job.id} is {job.state.value} now{was}: the approved move "
                          "no longer fits it; nothing was submitted or cancelled. Look "
                          "at the job, and plan the move again if it is still wanted")
