"""A queue view read long ago: what may have arrived since.

A view shows the jobs that had been submitted when it was read. Read longer ago than the
site's usual gap between two submissions, it most likely misses jobs that arrived since and
may now hold the room it shows free. Their shape is unknown; the site's own recent arrivals
are the best guess of them: the jobs the view shows submitted in a window as long as the
view's age, just before it was read, are replayed as having arrived again since, queued
ahead of the new job. The start the view gives stays the median; its 90% bound is the later
of the start with them ahead and the start put off by the view's age: the view keeps only
the jobs not yet ended, so it shows fewer arrivals, and smaller ones (the big jobs arrive
seldom), than came, and the replay alone is too short (KTH's SP2 read 2 h before: 7 jobs
replayed, none delays an 8-node job that in fact waited 1:29:14). Either grows with the age.

Pure code: snapshots in, snapshots and numbers out.
"""

from __future__ import annotations

from datetime import datetime

from .model import JobState, SiteSnapshot, hms

REPLAYED_SUFFIX = "+since"  # a replayed arrival's native id: the job's own, then this


def view_read_at(snap: SiteSnapshot) -> datetime:
    return snap.read_at or snap.taken_at


def replayed_arrivals(snap: SiteSnapshot, now: datetime) -> tuple[SiteSnapshot, int]:
    """`snap` with the jobs it shows submitted in the window as long as its age just before
    it was read, each again as a waiting job submitted as long after (its age later),
    queued behind the jobs the view shows waiting; and how many were replayed."""
    read_at = view_read_at(snap)
    age = now - read_at
    since = read_at - age
    replayed = [j.model_copy(update={
        "native_id": f"{j.native_id}{REPLAYED_SUFFIX}", "state": JobState.PENDING,
        "submitted_at": j.submitted_at + age, "started_at": None, "node_list": None,
        "estimated_start": None, "reason": "Priority"})
        for j in snap.jobs
        if j.submitted_at is not None and since <= j.submitted_at < read_at
        and j.state in (JobState.PENDING, JobState.RUNNING)]
    replayed.sort(key=lambda j: j.submitted_at or read_at)
    return snap.model_copy(update={"jobs": [*snap.jobs, *replayed]}), len(replayed)


STALE_NOTE_START = "the view misses what arrived since it was read: "


def is_stale_note(note: str) -> bool:
    return note.startswith(STALE_NOTE_START)


def stale_note(age_s: float, arrived: int, replayed_s: float, bound_s: float) -> str:
    """What `explain` says of a start widened by the arrivals a stale view cannot show."""
    return (f"{STALE_NOTE_START}{arrived} job{'s were' if arrived != 1 else ' was'} "
            f"submitted in the {hms(age_s)} before (one every {hms(age_s / arrived)}); as "
            f"many again queued ahead of the job start it at +{hms(replayed_s)}; 90% bound "
            f"+{hms(bound_s)} (its start put off by the view's age, at least)")
