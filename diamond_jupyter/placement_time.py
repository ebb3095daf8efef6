"""When a Slurm job may start and must end: `--begin` (no start before it) and `--deadline`
(sbatch: the job is removed when it cannot end by then, its time limit cut down to
`--time-min` at most), read as sbatch reads their times. Pure code."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from .model import BadInput, JobSpec

_UNITS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
          "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
          "h": 3600, "hour": 3600, "hours": 3600,
          "d": 86400, "day": 86400, "days": 86400,
          "w": 604800, "week": 604800, "weeks": 604800}
# sbatch's named times of day (the next one to come)
_NAMED = {"midnight": 0, "noon": 12, "elevenses": 11, "fika": 15, "teatime": 16}
ACCEPTED = ("now[+N[seconds|minutes|hours|days|weeks]], HH:MM[:SS] [AM|PM], "
            "YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], MMDD[YY], MM.DD[.YY], today, tomorrow, "
            "midnight, noon, elevenses, fika, teatime")


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
    raw = text
    text = text.strip().lower()
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    m = re.fullmatch(r"now(?:\+(\d+)\s*([a-z]*))?", text)
    if m:
        unit = _UNITS.get(m.group(2) or "s")
        if unit is not None:
            return plus_seconds(now, int(m.group(1) or 0) * unit)
    if text == "today":
        return day
    if text == "tomorrow":
        return day + timedelta(days=1)
    if text in _NAMED:
        at = day + timedelta(hours=_NAMED[text])
        return at if at > now else at + timedelta(days=1)
    m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?", text)
    if m:
        h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        if m.group(4):
            h = h % 12 + (12 if m.group(4) == "pm" else 0)
        if h < 24 and mi < 60 and s < 60:
            at = day.replace(hour=h, minute=mi, second=s)
            return at if at > now else at + timedelta(days=1)
    date, _, clock = text.partition("t")
    got = _date(date, now)
    if got is not None:
        if not clock:
            return got
        c = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", clock)
        if c and int(c.group(1)) < 24 and int(c.group(2)) < 60 and int(c.group(3) or 0) < 60:
            return got.replace(hour=int(c.group(1)), minute=int(c.group(2)),
                               second=int(c.group(3) or 0))
    raise BadInput(f"{option} {raw!r}: not a time sbatch reads (accepted: {ACCEPTED})")


def _date(text: str, now: datetime) -> datetime | None:
    """A date as sbatch writes it (YYYY-MM-DD, MM/DD[/YY], MMDD[YY], MM.DD[.YY]), at
    midnight in `now`'s zone; a date without a year is the next one to come."""
    yearless = False
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        m = re.fullmatch(r"(\d{2})([/.]?)(\d{2})(?:\2(\d{2}))?", text)
        if not m:
            return None
        mo, d, yearless = int(m.group(1)), int(m.group(3)), m.group(4) is None
        y = now.year if yearless else 2000 + int(m.group(4))
    try:
        at = now.replace(year=y, month=mo, day=d, hour=0, minute=0, second=0, microsecond=0)
        if yearless and at + timedelta(days=1) <= now:
            at = at.replace(year=y + 1)  # a month and day gone by: next year's
    except ValueError:
        return None
    return at


def job_window(spec: JobSpec, now: datetime) -> tuple[datetime | None, datetime | None]:
    """A Slurm job's `--begin` and `--deadline` as moments (None where not given)."""
    kept = {d.option: d.value or "" for d in spec.unknown if d.dialect == "slurm"}
    begin = slurm_time_at(kept["--begin"], now) if "--begin" in kept else None
    deadline = slurm_time_at(kept["--deadline"], now, "--deadline") \
        if "--deadline" in kept else None
    return begin, deadline
