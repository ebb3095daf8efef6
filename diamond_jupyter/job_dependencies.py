"""What a job waits for, as every face shows it (pure): each scheduler dependency its spec
holds (`--dependency`, `-W depend=`, a workflow's same-site afterok) and, for a workflow
step, each upstream step its workflow holds it behind. Each says whether it is satisfied,
and whether it never can be (the job it waits for ended the wrong way, or the scheduler
says so: DependencyNeverSatisfied).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from .attention import never_reason
from .model import Job, JobState

WORKFLOW = "workflow"  # the type of a step held by its workflow (not by the scheduler)
STEP_DONE = "done"
STEP_NEVER = ("failed", "cancelled")  # an upstream step in these phases never lets it go


class JobDependency(BaseModel):
    """One thing job waits for: `job` (SITE:NATIVE; None for an upstream step with no job
    yet), `type` (afterok, afterany, afternotok, after; "workflow": held by its workflow
    until the upstream step's job completed and its outputs were copied)."""

    job: str | None
    type: str
    satisfied: bool
    never: bool = False  # it can never be satisfied: the job will not start as asked
    state: JobState | None = None  # the state of the job waited for (None: not known here)
    step: str | None = None  # the upstream workflow step, for a workflow's step


class UpstreamStep(BaseModel):
    """An upstream step of a workflow step, as its workflow record holds it."""

    name: str
    phase: str
    job: Job | None = None


def _kind_outcome(kind: str, up: Job) -> tuple[bool, bool]:
    """(satisfied, never) of a dependency of `kind` on job `up`, from its state."""
    ended = up.state.terminal and up.state != JobState.UNKNOWN
    ok = up.state == JobState.COMPLETED
    if kind == "afterok":
        return ok, ended and not ok
    if kind == "afternotok":
        return ended and not ok, ok
    if kind == "afterany":
        return ended, False
    # "after": once it started (or ended without starting: cancelled)
    return ended or up.started_at is not None or up.state == JobState.RUNNING, False


def _started(job: Job) -> bool:
    return job.started_at is not None or job.state in (JobState.RUNNING, JobState.COMPLETED)


def dependencies_of(job: Job, find: Callable[[str], Job | None],
                    upstream: list[UpstreamStep] | None = None,
                    scheduler: str | None = None) -> list[JobDependency]:
    """What `job` waits for. `find(job id)` is the stored job of that id (None: unknown);
    `upstream`, for a workflow step's job, its workflow's upstream steps; `scheduler`, its
    site's (a dependency read from another scheduler's script names that site's jobs: it
    was dropped at the submit, said then, and is not shown). A job that started had every
    dependency satisfied; a scheduler that says DependencyNeverSatisfied makes each one not
    satisfied never."""
    started = _started(job)
    scheduler_never = never_reason(job.reason) == "DependencyNeverSatisfied"
    rows: list[JobDependency] = []
    for dep in job.spec.dependencies if job.spec else []:
        if scheduler is not None and dep.scheduler not in (None, scheduler):
            continue
        for native in dep.job_ids:
            up = find(f"{job.site}:{native}") if native else None
            if up is not None and (up.origin or {}).get("gate"):
                continue  # its workflow's gate: said as the upstream steps below
            if up is not None and up.submitted_at and job.submitted_at \
                    and up.submitted_at > job.submitted_at:
                up = None  # the native id now names a newer job: not the one waited for
            satisfied, never = _kind_outcome(dep.kind, up) if up else (False, False)
            rows.append(JobDependency(job=up.id if up else f"{job.site}:{native}",
                                      type=dep.kind, satisfied=satisfied, never=never,
                                      state=up.state if up else None))
    for st in upstream or []:
        listed = next((r for r in rows if st.job is not None and r.job == st.job.id), None)
        if listed is not None:  # a same-site afterok: the scheduler holds it
            listed.step = st.name
            continue
        rows.append(JobDependency(
            job=st.job.id if st.job else None, type=WORKFLOW, step=st.name,
            satisfied=st.phase == STEP_DONE, never=st.phase in STEP_NEVER,
            state=st.job.state if st.job else None))
    for r in rows:
        if started:
            r.satisfied, r.never = True, False
        elif scheduler_never and not r.satisfied:
            r.never = True
    return rows


def dependency_line(d: JobDependency) -> str:
    """One dependency in words: `afterok alpha:12 RUNNING: waiting`, `afterok alpha:12
    FAILED: never satisfied`, `step prep: beta:7 RUNNING, held by its workflow: waiting`."""
    state = f" {d.state.value}" if d.state is not None else ""
    said = ("satisfied" if d.satisfied else "never satisfied" if d.never
            else "waiting" if d.state is not None or d.type == WORKFLOW
            else "waiting (a job diamond does not know)")
    if d.type == WORKFLOW:
        return f"step {d.step}: {d.job or 'no job yet'}{state}, held by its workflow: {said}"
    step = f" (step {d.step})" if d.step else ""
    return f"{d.type} {d.job}{state}{step}: {said}"


def dependencies_json(deps: list[JobDependency]) -> list[dict[str, object]]:
    """The `depends_on` list of a job's JSON."""
    return [d.model_dump(mode="json") for d in deps]
