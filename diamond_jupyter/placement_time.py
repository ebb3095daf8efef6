"""When a Slurm job may start and must end: `--begin` (no start before it) and `--deadline`
(sbatch: the job is removed when it cannot end by then, its time limit cut down to
`--time-min` at most), read as sbatch reads their times. Pure code."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

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
            return now + timedelta(seconds=int(m.group(1) or 0) * unit)
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


# each scheduler's option for "start no sooner than", as its script keeps it
BEGIN_OPTION = {"slurm": "--begin", "pbs": "-a", "lsf": "-b", "sge": "-a",
                "flux": "--begin-time"}


def pbs_time_at(text: str, now: datetime) -> datetime:
    """qsub -a `[[[[CC]YY]MM]DD]hhmm[.SS]` (qsub(1B)): a day, month or year left out is
    the current one while the time it names is still to come, else the next one."""
    m = re.fullmatch(r"(\d{0,8}?)(\d{2})(\d{2})(?:\.(\d{2}))?", text.strip())
    head = m.group(1) if m else ""
    if not m or len(head) % 2 or int(m.group(2)) > 23 or int(m.group(3)) > 59 \
            or int(m.group(4) or 0) > 59:
        raise BadInput(f"-a {text!r}: not a time qsub reads (accepted: "
                       "[[[[CC]YY]MM]DD]hhmm[.SS], e.g. 202603011130 or 1130)")
    parts = [int(head[i:i + 2]) for i in range(0, len(head), 2)]
    year = None
    if len(parts) == 4:
        year = parts[0] * 100 + parts[1]
        parts = parts[2:]
    elif len(parts) == 3:
        year = 2000 + parts[0]
        parts = parts[1:]
    month = parts[-2] if len(parts) >= 2 else None
    day = parts[-1] if parts else None
    return _next_at(now, year, month, day, int(m.group(2)), int(m.group(3)),
                    int(m.group(4) or 0), f"-a {text!r}")


def sge_time_at(text: str, now: datetime) -> datetime:
    """qsub -a `[[CC]YY]MMDDhhmm[.SS]` (sge_types(1) date_time): month, day, hour and
    minute always given; the year left out is the current one."""
    m = re.fullmatch(r"(\d{2}|\d{4})?(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{2}))?", text.strip())
    if not m:
        raise BadInput(f"-a {text!r}: not a time Grid Engine's qsub reads (accepted: "
                       "[[CC]YY]MMDDhhmm[.SS], e.g. 03011130)")
    y = m.group(1)
    year = (int(y) if len(y) == 4 else 2000 + int(y)) if y else now.year
    return _exact(now, year, int(m.group(2)), int(m.group(3)), int(m.group(4)),
                  int(m.group(5)), int(m.group(6) or 0), f"-a {text!r}")


def lsf_time_at(text: str, now: datetime) -> datetime:
    """bsub -b `[[year:][month:]day:]hour:minute`: the fields left out are the current
    ones (bsub(1))."""
    fields = text.strip().split(":")
    if not 2 <= len(fields) <= 5 or not all(f.isdigit() for f in fields):
        raise BadInput(f"-b {text!r}: not a time bsub reads (accepted: "
                       "[[year:][month:]day:]hour:minute, e.g. 11:30 or 3:1:11:30)")
    n = [int(f) for f in fields]
    year = n[-5] if len(n) == 5 else now.year
    month = n[-4] if len(n) >= 4 else now.month
    day = n[-3] if len(n) >= 3 else now.day
    return _exact(now, year, month, day, n[-2], n[-1], 0, f"-b {text!r}")


def flux_time_at(text: str, now: datetime) -> datetime | None:
    """flux --begin-time: `+DURATION` (RFC 23: a number, s/m/h/d), an ISO date and time or
    HH:MM (the next one to come); None for the other datetime phrases flux takes (not read
    here)."""
    t = text.strip()
    m = re.fullmatch(r"\+(\d+(?:\.\d+)?)([smhd]?)", t)
    if m:
        unit = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
        return now + timedelta(seconds=float(m.group(1)) * unit)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2})?|\d{1,2}:\d{2}", t):
        try:
            return slurm_time_at(t.replace(" ", "T"), now, "--begin-time")
        except BadInput:
            return None
    return None


def _exact(now: datetime, year: int, month: int, day: int, hour: int, minute: int,
           second: int, said: str) -> datetime:
    try:
        return now.replace(year=year, month=month, day=day, hour=hour, minute=minute,
                           second=second, microsecond=0)
    except ValueError:
        raise BadInput(f"{said}: no such date or time") from None


def _next_at(now: datetime, year: int | None, month: int | None, day: int | None,
             hour: int, minute: int, second: int, said: str) -> datetime:
    """The first moment to come at hour:minute:second on the day, month and year given,
    the missing ones taken from now, moved on by a day (month, year) when it has passed."""
    at = _exact(now, year or now.year, month or now.month, day or now.day, hour, minute,
                second, said)
    if at > now or year is not None:
        return at
    if day is None:
        return at + timedelta(days=1)
    if month is None:  # next month's same day
        nxt = (now.month % 12) + 1
        return _exact(now, now.year + (now.month == 12), nxt, day, hour, minute, second,
                      said)
    return _exact(now, now.year + 1, month, day, hour, minute, second, said)


def begin_at(spec: JobSpec, now: datetime, scheduler: str) -> datetime | None:
    """When a job may start at a site of `scheduler`: its own start-time option as that
    scheduler's script kept it (another scheduler's is dropped in the translation, and
    said there); None without one, or a flux phrase not read here."""
    option = BEGIN_OPTION.get(scheduler)
    value = next((d.value or "" for d in spec.unknown if d.dialect == scheduler
                  and d.option == option), None)
    if value is None:
        return None
    read = {"slurm": slurm_time_at, "pbs": pbs_time_at, "lsf": lsf_time_at,
            "sge": sge_time_at, "flux": flux_time_at}[scheduler]
    return read(value, now)


def job_window(spec: JobSpec, now: datetime, scheduler: str = "slurm"
               ) -> tuple[datetime | None, datetime | None]:
    """A job's start-time option at a site of `scheduler` (Slurm `--begin`, PBS and Grid
    Engine `-a`, LSF `-b`, flux `--begin-time`) and Slurm's `--deadline`, as moments (None
    where not given)."""
    kept = {d.option: d.value or "" for d in spec.unknown if d.dialect == "slurm"}
    deadline = slurm_time_at(kept["--deadline"], now, "--deadline") \
        if "--deadline" in kept and scheduler == "slurm" else None
    return begin_at(spec, now, scheduler), deadline
