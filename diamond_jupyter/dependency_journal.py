"""The journal's side of `job_dependencies`: after a job's state changes, a `job.dependency`
event for each queued job of its site whose dependency on it turned satisfied or never
(store reads: the site's unfinished jobs that have dependencies, through their own index,
and only when there are some the job itself, then the jobs those wait for, once each)."""

from __future__ import annotations

from collections.abc import Callable

from .job_dependencies import dependencies_json, names_job, turned, wanted_ids
from .model import DiamondError, Event, Job, JobState
from .store import Store

DEPENDENCY_EVENT = "job.dependency"
SCHEMA_VERSION = "1"


def dependency_events(store: Store, ev: Event,
                      scheduler_of: Callable[[str], str | None]) -> list[Event]:
    """The `job.dependency` events state event `ev` (job.state, just stored) calls for:
    one per queued job whose dependency on `ev`'s job turned satisfied or never."""
    previous = (ev.data or {}).get("previous")
    if ev.kind != "job.state" or not ev.job_id or not ev.site or previous is None:
        return []
    # the site's waiting jobs first (an indexed read of those rows only): most state
    # changes have none to turn, and then nothing else is read
    waiting = [d for d in store.waiting_jobs(ev.site) if d.id != ev.job_id]
    if not waiting:
        return []
    try:
        up = store.get_job(ev.job_id)
    except DiamondError:
        return []
    return task_dependency_events(store, up.model_copy(update={"state": JobState(previous)}),
                                  up, scheduler_of, waiting)


def task_dependency_events(store: Store, before: Job, up: Job,
                           scheduler_of: Callable[[str], str | None],
                           waiting: list[Job] | None = None) -> list[Event]:
    """The `job.dependency` events a change of job `up` from `before` (its state, or the
    state of one of its array's tasks) calls for; `waiting`: the site's waiting jobs
    other than `up`, when already read."""
    if waiting is None:
        waiting = [d for d in store.waiting_jobs(up.site) if d.id != up.id]
    scheduler = scheduler_of(up.site)
    downs = [d for d in waiting if names_job(d, up, scheduler)]
    if not downs:
        return []
    found = store.jobs_with_ids(wanted_ids(downs, scheduler_of))
    found[up.id] = up
    return [_event(down, dep, up) for down in downs
            for dep in dependencies_json(turned(down, before, found.get, scheduler))]


def _event(down: Job, dep: dict[str, object], up: Job) -> Event:
    return Event(kind=DEPENDENCY_EVENT, job_id=down.id, site=down.site, data={
        "version": SCHEMA_VERSION, "outcome": "satisfied" if dep["satisfied"] else "never",
        "dependency": dep, "state": down.state.value, "upstream_state": up.state.value})
