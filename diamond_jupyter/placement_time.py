"""When a job may start and must end: `--begin` (no start before it) and `--deadline`
(sbatch: the job is removed when it cannot end by then, its time limit cut down to
`--time-min` at most), read as sbatch reads their times. Pure code."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from .dialects.begin_time import DAY_OPTION, SLURM_ACCEPTED, Begin, kept_day_of_month, slurm_parts
from .model import BadInput, JobSpec

ACCEPTED = SLURM_ACCEPTED
READY_TOLERANCE_S = 30.0  # a start this close to now is a start now (READY)
HORIZON_S = 30 * 86400.0  # the start assumed where the simulation finds none


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


def day_of_month_at(b: Begin, now: datetime) -> datetime:
    """When a day of the month without its month (PBS `-a DDhhmm`, LSF `-b d:h:m`) starts
    the job, as qsub and bsub read it: that day of this month if it is still to come, else
    of the next month that has such a day (31: the next month of 31 days)."""
    at = now.replace(day=1, hour=b.hour, minute=b.minute, second=b.second, microsecond=0)
    for _ in range(13):  # every day 1-31 comes within a year
        try:
            moment = at.replace(day=b.day or 1)
            if moment > now:
                return moment
        except ValueError:  # this month has no such day
            pass
        at = (at + timedelta(days=32)).replace(day=1)
    raise BadInput(f"day {b.day}: no month has it")  # not reached: day_of_month checks 1-31


def kept_day_at(spec: JobSpec, scheduler: str | None, now: datetime) -> datetime | None:
    """The start a day of the month kept as written (PBS `-a DDhhmm`, LSF `-b d:h:m`; the
    dialects read no clock, so it has no neutral form) gives at a PBS or LSF site (each
    gets it in its own form) as qsub and bsub read it; None elsewhere (`scheduler` another
    one: its translation drops it, said) or where there is none. `scheduler` None: any."""
    if scheduler not in (None, *DAY_OPTION):
        return None
    got = kept_day_of_month(spec.unknown, spec.source_dialect)
    return day_of_month_at(got[1], now) if got else None


def job_window(spec: JobSpec, now: datetime, scheduler: str | None = None
               ) -> tuple[datetime | None, datetime | None]:
    """A job's start time (`JobSpec.begin`, read from any scheduler's option; else a Slurm
    `--begin` kept as written, or a day of the month without its month at a PBS or LSF
    site, `scheduler`) and its Slurm `--deadline` as moments (None where
    not given)."""
    kept = {d.option: d.value or "" for d in spec.unknown if d.dialect == "slurm"}
    begin = slurm_time_at(spec.begin, now) if spec.begin else \
        slurm_time_at(kept["--begin"], now) if "--begin" in kept else \
        kept_day_at(spec, scheduler, now)
    deadline = slurm_time_at(kept["--deadline"], now, "--deadline") \
        if "--deadline" in kept else None
    return begin, deadline
