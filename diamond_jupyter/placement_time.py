"""When a job may start and must end: `--begin` (no start before it) and `--deadline`
(sbatch: the job is removed when it cannot end by then, its time limit cut down to
`--time-min` at most), read as sbatch reads their times. Pure code."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from .dialects.begin_time import SLURM_ACCEPTED, slurm_parts
from .model import BadInput, JobSpec

ACCEPTED = SLURM_ACCEPTED


# the latest moment an estimate names: a time limit of thousands of years (Slurm takes up to
# 2^32 - 2 minutes, about 8,000 years) would pass datetime's year 9999
FAR_FUTURE = datetime(9000, 1, 1, tzinfo=timezone.utc)


def plus_seconds(t: datetime, seconds: float) -> datetime:
    """`t` plus `seconds`, at most FAR_FUTURE (in `t`'s time zone): adding a walltime or a
    wait of thousands of years raised OverflowError out of placement."""
    far = FAR_FUTURE.replace(tzinfo=t.tzinfo)
    if seconds >= (far - t).total_seconds():
        return max(far, t)
    return t + timedelta(seconds=seconds)


def slurm_time_at(text: str, now: datetime, option: str = "--begin") -> datetime:
    """The moment a `--begin`/`--deadline` value names, in `now`'s time zone (sbatch reads
    it in the cluster's local time). BadInput, naming what is accepted, where sbatch would
    refuse it."""
    b = slurm_parts(text)
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if b is not None and b.after_s is not None:
        return plus_seconds(now, b.after_s)
    if b is not None and b.days is not None:
        return day + timedelta(days=b.days)
    if b is not None and b.clock:
        at = day.replace(hour=b.hour, minute=b.minute, second=b.second)
        return at if at > now else at + timedelta(days=1)
    if b is not None:
        try:  # a date without a year: the next such day to come
            at = day.replace(year=b.year or now.year, month=b.month, day=b.day)
            if b.year is None and at + timedelta(days=1) <= now:
                at = at.replace(year=now.year + 1)
            return at.replace(hour=b.hour, minute=b.minute, second=b.second)
        except ValueError:
            pass
    raise BadInput(f"{option} {text!r}: not a time sbatch reads (accepted: {ACCEPTED})")


def job_window(spec: JobSpec, now: datetime) -> tuple[datetime | None, datetime | None]:
    """A job's start time (`JobSpec.begin`, read from any scheduler's option; else a Slurm
    `--begin` kept as written) and its Slurm `--deadline` as moments (None where not
    given)."""
    kept = {d.option: d.value or "" for d in spec.unknown if d.dialect == "slurm"}
    begin = slurm_time_at(spec.begin, now) if spec.begin else \
        slurm_time_at(kept["--begin"], now) if "--begin" in kept else None
    deadline = slurm_time_at(kept["--deadline"], now, "--deadline") \
        if "--deadline" in kept else None
    return begin, deadline
