"""The newest jobs of the store (of some states, or all), kept between reads and brought up to
date from the rows changed since (the jobs table's clock, schema v11): each of a workflow's
submits reads the user's newest jobs for its estimates, and reading the whole window again
(500 rows: fetched, keyed, looked up) made every submit slower as the jobs grew."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..model import Job, JobState
from .codec import row_to_job
from .db import Database

SortKey = tuple[str, int]  # (created_at, rowid): the window's order, newest last


@dataclass
class NewestJobs:
    """What `WindowsMixin.newest_jobs` keeps of one window: the newest `limit` jobs in
    `states` (None: any), newest first. `rows_read` and `full_reads` count the work done,
    for tests and benchmarks."""

    states: frozenset[JobState] | None
    limit: int
    source: object | None = None  # the store it was read from (another: read whole)
    clock: int = -1  # the jobs table's clock when last read (-1: never)
    deleted: int = -1  # its deletion tick then
    full: bool = False  # the store held at least `limit` such jobs then
    members: dict[int, tuple[SortKey, Job]] = field(default_factory=dict)  # by rowid
    order: list[tuple[SortKey, Job]] = field(default_factory=list)  # the members, oldest first
    jobs: list[Job] = field(default_factory=list)  # the answer, newest first
    rows_read: int = 0
    full_reads: int = 0

    @classmethod
    def of(cls, states: Collection[JobState | str] | None, limit: int) -> NewestJobs:
        return cls(None if states is None else frozenset(JobState(s) for s in states), limit)


class WindowsMixin(Database):
    """Windows of the newest jobs, kept up to date from the jobs table's clock."""

    if TYPE_CHECKING:
        def _per_state(self, states: list[str], site: str | None, name_like: str | None,
                       order: str, limit: int) -> tuple[str, list[Any]]: ...

    def newest_jobs(self, window: NewestJobs) -> list[Job]:
        """The newest `window.limit` jobs in `window.states`, newest first, as `list_jobs(
        states=..., limit=..., read_only=True)` reads them (shared, read-only), from the
        rows changed since the window was last read: none when nothing changed. A row
        deleted, or a member that moved back in time or left the states of a full window,
        reads the window whole again."""
        with self._lock:
            clock, deleted = self._read("SELECT n, deleted FROM jobs_clock")[0]
            if window.source is not self:
                window.source, window.clock = self, -1
            elif clock == window.clock:
                return window.jobs
            if clock < window.clock or deleted != window.deleted or not self._merge(window):
                self._read_whole(window)
            window.clock, window.deleted = clock, deleted  # rows written meanwhile: again
        return window.jobs

    def _merge(self, window: NewestJobs) -> bool:
        """Bring the rows changed since `window.clock` into it, each moved to its place in the
        kept order (the window is not sorted again); False where that cannot tell the window
        (a full window lost a member: a job beyond it may come in), the window then left
        to be read whole."""
        if window.clock < 0:
            return False
        rows = self._read("SELECT *, rowid AS row_order FROM jobs WHERE changed > ?",
                          (window.clock,))
        window.rows_read += len(rows)
        members, order = window.members, window.order
        lost = touched = False
        for r in rows:
            key: SortKey = (r["created_at"], r["row_order"])
            was = members.pop(r["row_order"], None)
            if was is not None:
                del order[bisect_left(order, was[0], key=_sort_key)]
            # a row of another state is not decoded (a workflow's new jobs, queued, come by
            # the thousand while the windows of ended ones stay the same)
            job = row_to_job(r, shared=True) if _in_states(r["state"], window.states) \
                else None
            if job is not None:
                members[r["row_order"]] = (key, job)
                insort(order, (key, job), key=_sort_key)
                lost = lost or (was is not None and was[0] != key)  # moved in time
                touched = True
            else:
                lost, touched = lost or was is not None, touched or was is not None
        if lost and window.full:
            return False
        if touched:  # else the answer stays the same object (readers key on it)
            self._trim(window)
        return True

    def _read_whole(self, window: NewestJobs) -> None:
        states = None if window.states is None else sorted(s.value for s in window.states)
        if states is None:
            sql, args = "SELECT *, rowid AS row_order FROM jobs", []
        elif not states:
            sql, args = "SELECT *, rowid AS row_order FROM jobs WHERE 0", []
        else:
            sql, args = self._per_state(states, None, None, "DESC", window.limit)
        rows = self._read(f"{sql} ORDER BY created_at DESC, row_order DESC LIMIT ?",
                          (*args, window.limit))
        window.rows_read += len(rows)
        window.full_reads += 1
        window.full = len(rows) >= window.limit
        self._keep(window, {r["row_order"]: ((r["created_at"], r["row_order"]),
                                             row_to_job(r, shared=True)) for r in rows})

    @staticmethod
    def _keep(window: NewestJobs, members: dict[int, tuple[SortKey, Job]]) -> None:
        """Keep the newest `limit` of `members`, sorted once (a whole read)."""
        window.members = members
        window.order = sorted(members.values(), key=_sort_key)
        WindowsMixin._trim(window)

    @staticmethod
    def _trim(window: NewestJobs) -> None:
        """Drop the oldest beyond `limit` (a full window stays full: a job pushed out was
        older than every member) and make the answer, newest first."""
        order = window.order
        window.full = window.full or len(order) >= window.limit
        if (extra := len(order) - window.limit) > 0:
            for (_, row), _ in order[:extra]:
                del window.members[row]
            del order[:extra]
        window.jobs = [job for _, job in reversed(order)]


def _in_states(state: str, states: frozenset[JobState] | None) -> bool:
    """Whether a row's stored `state` is among `states` (None: any); a state this version
    does not know reads as UNKNOWN, as `row_to_job` reads it."""
    if states is None:
        return True
    try:
        return JobState(state) in states
    except ValueError:
        return JobState.UNKNOWN in states


def _sort_key(member: tuple[SortKey, Job]) -> SortKey:
    return member[0]
