"""What a job waits for, as every face shows it (pure): each scheduler dependency its spec
holds (`--dependency`, `-W depend=`, a workflow's same-site afterok) and, for a workflow
step, each upstream step its workflow holds it behind. Each says whether it is satisfied,
and whether it never can be (the job it waits for ended the wrong way, or the scheduler
says so: DependencyNeverSatisfied).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import islice

from pydantic import BaseModel

from .attention import never_reason
from .dialects.flux_ids import flux_id_value, flux_spellings
from .dialects.outputs_common import TASKS_EXPANDED, array_expression_ranges
from .dialects.pbs_commands import subjob_of
from .model import TASKS_NAMED, Job, JobState

WORKFLOW = "workflow"  # the type of a step held by its workflow (not by the scheduler)
STEP_DONE = "done"
STEP_NEVER = ("failed", "cancelled")  # an upstream step in these phases never lets it go
PER_TASK = "aftercorr"  # the type of a task-by-task afterok (each task after its own)
# one task of an array job: Slurm's `123_4`, LSF's `123[4]`
_ARRAY_TASK = re.compile(r"([0-9]+)(?:_([0-9]+)|\[([0-9]+)\])")


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
    task: str | None = None  # the one task of the array job `job` waited for (`123_4`)
    # that task's state as its scheduler last listed it (None: not known yet)
    task_state: JobState | None = None
    # aftercorr: how the tasks of `job` the waiting array's tasks each wait for stand
    # (`2 satisfied, 1 waiting, 5 unknown yet; never: 3 FAILED`); None for another type
    tasks: str | None = None


class UpstreamStep(BaseModel):
    """An upstream step of a workflow step, as its workflow record holds it."""

    name: str
    phase: str
    job: Job | None = None


def _state_outcome(kind: str, state: JobState, started: bool = False) -> tuple[bool, bool]:
    """(satisfied, never) of a dependency of `kind` on a job (or task) in `state`."""
    ended = state.terminal and state != JobState.UNKNOWN
    ok = state == JobState.COMPLETED
    if kind == "afterok":
        return ok, ended and not ok
    if kind == "afternotok":
        return ended and not ok, ok
    if kind == "afterany":
        return ended, False
    # "after": once it started (or ended without starting: cancelled)
    return ended or started or state == JobState.RUNNING, False


def _kind_outcome(kind: str, up: Job) -> tuple[bool, bool]:
    """(satisfied, never) of a dependency of `kind` on job `up`, from its state."""
    return _state_outcome(kind, up.state, up.started_at is not None)


def _array_outcome(kind: str, array: Job) -> tuple[bool, bool] | None:
    """(satisfied, never) of a dependency of `kind` on any task of job array `array`, from
    the array's state alone: where every task ended one way (COMPLETED: each succeeded) or
    any end will do; None where it does not tell (which task failed, which still runs)."""
    if array.state == JobState.COMPLETED:
        return _kind_outcome(kind, array)
    if array.state.terminal and array.state != JobState.UNKNOWN and kind in (
            "afterany", "after"):
        return True, False
    return None


def _task_outcome(kind: str, array: Job, task: str) -> tuple[bool, bool, JobState | None]:
    """(satisfied, never, the task's state) of a dependency of `kind` on task `task` of
    job array `array`: by the task's own state where its scheduler listed it, else by the
    array's where that decides every task; else (False, False, None): not known yet."""
    state = (array.tasks or {}).get(task)
    if state is not None:
        return (*_state_outcome(kind, state), state)
    whole = _array_outcome(kind, array)
    if whole is None:
        return False, False, None
    return (*whole, JobState.COMPLETED if array.state == JobState.COMPLETED else None)


def _corresponding_outcome(kind: str, array: Job, down: Job) -> tuple[bool, bool, str | None]:
    """(satisfied, never, how its tasks stand) of a task-by-task dependency (aftercorr) of
    job array `down` on job array `array`: task i of `down` waits on task i of `array`.
    Satisfied once each is, never once one is never (that task will not run); `down`
    with no array of its own is judged on the whole of `array`."""
    ranges = array_expression_ranges(down.spec.array.expression) \
        if down.spec and down.spec.array else None
    if not ranges:
        whole = _array_outcome(kind, array)
        return (*(whole or (False, False)), None)
    counts = {"satisfied": 0, "waiting": 0, "unknown yet": 0}
    never: list[str] = []
    indices = (i for r in ranges for i in r)
    for index in islice(indices, TASKS_EXPANDED):
        satisfied, no, state = _task_outcome(kind, array, str(index))
        if no:
            never.append(f"{index} {state.value if state else ''}".strip())
        else:
            counts["satisfied" if satisfied else "waiting" if state else "unknown yet"] += 1
    said = ", ".join(f"{n} {what}" for what, n in counts.items() if n)
    if never:
        shown = ", ".join(never[:5]) + (f" and {len(never) - 5} more" if len(never) > 5 else "")
        said = f"{said}; never: {shown}" if said else f"never: {shown}"
    all_met = not never and counts["waiting"] == counts["unknown yet"] == 0
    return all_met, bool(never), said


def _flux_spellings(native: str) -> list[str]:
    """Each spelling of Flux job id `native` a stored job may carry (F58 with `ƒ` or `f`,
    decimal, hex, dotted hex, KVS key, words); [] for text that is no Flux job id."""
    value = flux_id_value(native)
    return [] if value is None else flux_spellings(value)


def upstream_ids(site: str, native: str, scheduler: str | None) -> list[tuple[str, str | None]]:
    """The stored ids the job `native` of `site` may be under, as its scheduler reads the id,
    each with the array task it names (None: the whole job): as written; a Flux id (where
    the scheduler is flux or not known) in every spelling of its number; an array task
    (`123_4`, `123[4]`, PBS's `123[4].server`) as its array job's task."""
    ids: list[tuple[str, str | None]] = [(native, None)]
    if scheduler in (None, "flux"):
        ids += [(s, None) for s in _flux_spellings(native)]
    if m := _ARRAY_TASK.fullmatch(native):
        ids.append((m.group(1), m.group(2) or m.group(3)))
    if sub := subjob_of(native):  # PBS's subjob `123[4].server` of array `123[].server`
        ids.append(sub)
    return [(f"{site}:{i}", task) for i, task in dict.fromkeys(ids)]


def named_ids(job: Job, native: str, scheduler: str | None) -> list[tuple[str, str | None]]:
    """`upstream_ids` of a dependency of `job` on `native`, and where `native` is one task
    of a job array its Flux site runs as one job per task (by the task's own id, as found
    at the submit: TASKS_NAMED), that array's task."""
    ids = upstream_ids(job.site, native, scheduler)
    named = (job.spec.metadata.get(TASKS_NAMED) or {}).get(native) if job.spec else None
    if isinstance(named, list) and len(named) == 2:
        ids.append((f"{job.site}:{named[0]}", str(named[1])))
    return ids


def wanted_ids(jobs: Iterable[Job], scheduler_of: Callable[[str], str | None]) -> set[str]:
    """Every stored id the dependencies of `jobs` may name (`scheduler_of(site)`: the
    site's scheduler, None where not known): what one read fetches for `dependencies_of`."""
    return {jid for job in jobs for dep in (job.spec.dependencies if job.spec else [])
            for native in dep.job_ids if native
            for jid, _ in named_ids(job, native, scheduler_of(job.site) or dep.scheduler)}


def awaited_tasks(site: str, waiting: Iterable[Job], scheduler: str | None
                  ) -> dict[str, set[str]]:
    """The array tasks `waiting` jobs of `site` wait for, by the array's native id (its
    index -> the tasks): one task named (`afterok:123_4`), and each corresponding task of
    an aftercorr (the waiting array's indexes, up to TASKS_EXPANDED)."""
    tasks: dict[str, set[str]] = {}
    prefix = f"{site}:"
    for job in waiting:
        for dep in job.spec.dependencies if job.spec else []:
            ranges = array_expression_ranges(job.spec.array.expression) \
                if dep.per_task and job.spec.array else None
            for native in dep.job_ids:
                named = [(jid.removeprefix(prefix), task) for jid, task in named_ids(
                    job, native, scheduler or dep.scheduler) if native]
                for array, task in named:
                    if task is not None:
                        tasks.setdefault(array, set()).add(task)
                if ranges:  # aftercorr on the whole array `native`
                    indices = islice((i for r in ranges for i in r), TASKS_EXPANDED)
                    tasks.setdefault(native, set()).update(map(str, indices))
    return tasks


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
        kind = PER_TASK if dep.per_task and dep.kind == "afterok" else dep.kind
        for native in dep.job_ids:
            up, task = _upstream(job, native, find, scheduler or dep.scheduler)
            if up is not None and (up.origin or {}).get("gate"):
                continue  # its workflow's gate: said as the upstream steps below
            task_state, tasks = None, None
            if up is None:
                satisfied, never = False, False
            elif task is not None:
                satisfied, never, task_state = _task_outcome(dep.kind, up, task)
            elif dep.per_task:
                satisfied, never, tasks = _corresponding_outcome(dep.kind, up, job)
            else:
                satisfied, never = _kind_outcome(dep.kind, up)
            rows.append(JobDependency(job=up.id if up else f"{job.site}:{native}",
                                      type=kind, satisfied=satisfied, never=never,
                                      state=up.state if up else None, task=task,
                                      task_state=task_state, tasks=tasks))
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


def _upstream(job: Job, native: str, find: Callable[[str], Job | None],
              scheduler: str | None) -> tuple[Job | None, str | None]:
    """The stored job `job`'s dependency on `native` names, and the array task it names
    (None: the whole job); (None, None) where none is stored, or the id now names a job
    newer than `job` (the scheduler reused it: not the one waited for)."""
    for jid, task in named_ids(job, native, scheduler) if native else []:
        up = find(jid)
        if up is None:
            continue
        if up.submitted_at and job.submitted_at and up.submitted_at > job.submitted_at:
            return None, None
        return up, task
    return None, None


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
    task = f" task {d.task} of" if d.task is not None else ""
    if d.task is not None and d.state is not None:
        # the task's own state; the array's beside it
        state = f" (task {d.task_state.value if d.task_state else 'unknown yet'}, array " \
            f"{d.state.value})"
        if d.task_state is None and not (d.satisfied or d.never):
            said = "waiting (the task's state is unknown yet)"
    tasks = f" (tasks: {d.tasks})" if d.tasks else ""
    return f"{d.type}{task} {d.job}{state}{tasks}{step}: {said}"


def dependencies_json(deps: list[JobDependency]) -> list[dict[str, object]]:
    """The `depends_on` list of a job's JSON."""
    return [d.model_dump(mode="json") for d in deps]


def turned(down: Job, before: Job, find: Callable[[str], Job | None],
           scheduler: str | None = None) -> list[JobDependency]:
    """The dependencies of `down` on the job `find` now gives for `before`'s id that turned
    satisfied or never since that job was `before`: what a `job.dependency` event says."""
    was = {(d.job, d.type, d.task): (d.satisfied, d.never) for d in dependencies_of(
        down, lambda jid: before if jid == before.id else find(jid), scheduler=scheduler)}
    return [d for d in dependencies_of(down, find, scheduler=scheduler)
            if d.job == before.id and (d.satisfied or d.never)
            and was.get((d.job, d.type, d.task)) != (d.satisfied, d.never)]


def names_job(down: Job, up: Job, scheduler: str | None = None) -> bool:
    """Whether a scheduler dependency of `down` may name `up` (in any spelling of its id)."""
    return down.site == up.site and up.id in wanted_ids([down], lambda _: scheduler)
