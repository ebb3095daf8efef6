"""When a job may start: sbatch `--begin`, PBS and Grid Engine `qsub -a`, LSF `bsub -b`, flux
`--begin-time`. The neutral form (`JobSpec.begin`) is a value sbatch's `--begin` reads; each
dialect's own form is read into it and written from its parts. Pure: no clock is read here,
so a time relative to the submission (`now+1hour`, flux `+1h`) reaches only the dialects that
have a relative form, and a time of day or a date without a year only those that take the
next one to come as sbatch does."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ..digits import ascii_digits
from ..model import BadInput

_UNITS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
          "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
          "h": 3600, "hour": 3600, "hours": 3600,
          "d": 86400, "day": 86400, "days": 86400,
          "w": 604800, "week": 604800, "weeks": 604800}
# sbatch's named times of day (the next one to come)
NAMED_HOURS = {"midnight": 0, "noon": 12, "elevenses": 11, "fika": 15, "teatime": 16}
SLURM_ACCEPTED = ("now[+N[seconds|minutes|hours|days|weeks]], HH:MM[:SS] [AM|PM], "
                  "YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], MMDD[YY], MM.DD[.YY], today, "
                  "tomorrow, midnight, noon, elevenses, fika, teatime")

# The latest a start after the submission may be (100 years): past it sbatch's and flux's
# numbers wrap or clip (a start long ago or at once), and no job waits so long
MOST_BEGIN_AFTER_S = 100 * 366 * 86400


@dataclass(frozen=True)
class Begin:
    """One start time by its parts. `after_s`: seconds after the submission; `days`: that
    many midnights on (sbatch today/tomorrow); else a date (`month` and `day`, `year` when
    given: without it the next such date to come) or, without a date, the next such time of
    day to come."""

    after_s: int | None = None
    days: int | None = None
    year: int | None = None
    month: int | None = None
    day: int | None = None
    hour: int = 0
    minute: int = 0
    second: int = 0

    @property
    def dated(self) -> bool:
        return self.month is not None

    @property
    def clock(self) -> bool:
        """A time of day alone (the next one to come)."""
        return self.after_s is None and self.days is None and self.month is None


def _valid(b: Begin) -> Begin | None:
    if b.after_s is not None or b.days is not None:
        return b
    if not (b.hour < 24 and b.minute < 60 and b.second < 60):
        return None
    if b.month is not None and not (1 <= b.month <= 12 and 1 <= (b.day or 0) <= 31):
        return None
    if b.year is not None and not 1970 <= b.year <= 9999:
        return None
    try:  # a day the month has (29 February in a leap year; any leap year without one)
        date(b.year or 2000, b.month or 1, b.day or 1)
    except ValueError:
        return None
    return b


def _clock(text: str) -> tuple[int, int, int] | None:
    m = re.fullmatch(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?", text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def slurm_parts(value: str) -> Begin | None:
    """The parts of an sbatch `--begin` value (every form sbatch documents); None where
    sbatch would refuse it."""
    text = value.strip().lower()
    m = re.fullmatch(r"now(?:\+([0-9]+)\s*([a-z]*))?", text)
    if m:
        unit = _UNITS.get(m.group(2) or "s")
        return Begin(after_s=int(m.group(1) or 0) * unit) if unit is not None else None
    if text in ("today", "tomorrow"):
        return Begin(days=int(text == "tomorrow"))
    if text in NAMED_HOURS:
        return Begin(hour=NAMED_HOURS[text])
    m = re.fullmatch(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?\s*(am|pm)?", text)
    if m:
        h = int(m.group(1))
        if m.group(4):
            h = h % 12 + (12 if m.group(4) == "pm" else 0)
        return _valid(Begin(hour=h, minute=int(m.group(2)), second=int(m.group(3) or 0)))
    date, _, clock = text.partition("t")
    hms = _clock(clock) if clock else (0, 0, 0)
    if hms is None:
        return None
    m = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", date)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        m = re.fullmatch(r"([0-9]{2})([/.]?)([0-9]{2})(?:\2([0-9]{2}))?", date)
        if not m:
            return None
        mo, d = int(m.group(1)), int(m.group(3))
        y = 2000 + int(m.group(4)) if m.group(4) else None
    return _valid(Begin(year=y, month=mo, day=d, hour=hms[0], minute=hms[1], second=hms[2]))


def neutral(b: Begin) -> str:
    """The sbatch `--begin` value of `b` (the neutral form)."""
    if b.after_s is not None:
        return f"now+{b.after_s}"
    if b.days is not None:
        return "tomorrow" if b.days else "today"
    clock = f"{b.hour:02d}:{b.minute:02d}:{b.second:02d}"
    if b.year is not None:
        return f"{b.year:04d}-{b.month:02d}-{b.day:02d}T{clock}"
    if b.month is not None:
        return f"{b.month:02d}/{b.day:02d}T{clock}"
    return clock


def same_time(a: str | None, b: str | None) -> bool:
    """Two neutral values naming the same start time (the same parts)."""
    if a is None or b is None:
        return a == b
    return slurm_parts(a) == slurm_parts(b)


# ------------------------------------------------------------------ the other dialects

PBS_ACCEPTED = "[[[[CC]YY]MM]DD]hhmm[.SS], e.g. 202612240830 or 2230"
SGE_ACCEPTED = "[[CC]YY]MMDDhhmm[.SS], e.g. 202612240830 or 12240830"
LSF_ACCEPTED = "[[year:][month:]day:]hour:minute, e.g. 2026:12:24:08:30 or 20:00"


def _digits(value: str, lengths: tuple[int, ...], option: str, accepted: str,
            where: str) -> tuple[list[int], int] | None:
    """qsub's `-a` digits in pairs from the right (hhmm, then DD, MM, YY, CC) and the
    seconds; BadInput where qsub would refuse the value."""
    m = re.fullmatch(r"([0-9]+)(?:\.([0-9]{2}))?", value.strip())
    if not m or len(m.group(1)) not in lengths:
        raise BadInput(f"{where}: {option} {value!r} is not a date and time qsub reads "
                       f"(accepted: {accepted})")
    digits = m.group(1)
    pairs = [int(digits[i:i + 2]) for i in range(0, len(digits), 2)]
    return pairs, int(m.group(2) or 0)


def _from_pairs(pairs: list[int], second: int) -> Begin | None:
    """hhmm with up to CC YY MM DD before it; None for a day without a month (no neutral
    form: sbatch has none)."""
    *date, hour, minute = pairs
    if len(date) == 1:
        return None
    year = None
    if len(date) >= 3:
        year = (date[-4] * 100 if len(date) == 4 else 2000) + date[-3]
    month, day = (date[-2], date[-1]) if len(date) >= 2 else (None, None)
    return Begin(year=year, month=month, day=day, hour=hour, minute=minute, second=second)


def pbs_parts(value: str, where: str) -> Begin | None:
    """PBS `qsub -a [[[[CC]YY]MM]DD]hhmm[.SS]` (YY without CC: this century). None: a day
    without a month (kept as written). BadInput where qsub would refuse it."""
    pairs, second = _digits(value, (4, 6, 8, 10, 12), "-a", PBS_ACCEPTED, where)
    b = _from_pairs(pairs, second)
    if b is not None and _valid(b) is None:
        raise BadInput(f"{where}: -a {value!r} names no real date and time "
                       f"(accepted: {PBS_ACCEPTED})")
    return b


def sge_parts(value: str, where: str) -> Begin:
    """Grid Engine `qsub -a [[CC]YY]MMDDhhmm[.SS]` (sge_types DATE_TIME)."""
    pairs, second = _digits(value, (8, 10, 12), "-a", SGE_ACCEPTED, where)
    b = _from_pairs(pairs, second)
    if b is None or _valid(b) is None:
        raise BadInput(f"{where}: -a {value!r} names no real date and time "
                       f"(accepted: {SGE_ACCEPTED})")
    return b


def lsf_parts(value: str, where: str) -> Begin | None:
    """LSF `bsub -b [[year:][month:]day:]hour:minute` (two fields are hour:minute, three
    day:hour:minute, four month:..., five year:...). None: a day without a month (kept as
    written). BadInput where bsub would refuse it."""
    fields = value.strip().split(":")
    if not 2 <= len(fields) <= 5 or not all(ascii_digits(f) for f in fields):
        raise BadInput(f"{where}: -b {value!r} is not a time bsub reads "
                       f"(accepted: {LSF_ACCEPTED})")
    n = [int(f) for f in fields]
    if len(n) == 3:
        return None
    year = n[0] if len(n) == 5 else None
    month, day = (n[-4], n[-3]) if len(n) >= 4 else (None, None)
    b = _valid(Begin(year=year, month=month, day=day, hour=n[-2], minute=n[-1]))
    if b is None:
        raise BadInput(f"{where}: -b {value!r} names no real date and time (year after "
                       f"1970, month 1-12, day 1-31, hour 0-23, minute 0-59; accepted: "
                       f"{LSF_ACCEPTED})")
    return b


def day_of_month(dialect: str, value: str) -> Begin | None:
    """A start time of a day of the month without its month, as the scheduler reads it
    (PBS `qsub -a DDhhmm[.SS]`, LSF `bsub -b day:hour:minute`): its day, hour, minute and
    second (no month: that month's day if still to come, else the next month's, which only
    a clock can tell); None for any other form or dialect. Pure: the value as written."""
    text = value.strip()
    if dialect == "pbs" and (m := re.fullmatch(r"([0-9]{2})([0-9]{2})([0-9]{2})"
                                               r"(?:\.([0-9]{2}))?", text)):
        b = Begin(day=int(m.group(1)), hour=int(m.group(2)), minute=int(m.group(3)),
                  second=int(m.group(4) or 0))
    elif dialect == "lsf" and (m := re.fullmatch(r"([0-9]+):([0-9]+):([0-9]+)", text)):
        b = Begin(day=int(m.group(1)), hour=int(m.group(2)), minute=int(m.group(3)))
    else:
        return None
    ok = 1 <= (b.day or 0) <= 31 and b.hour < 24 and b.minute < 60 and b.second < 60
    return b if ok else None


# the option of each scheduler that takes a day of the month without its month
DAY_OPTION = {"pbs": "-a", "lsf": "-b"}


def kept_day_of_month(unknown: list, source: str | None) -> tuple[object, Begin] | None:
    """The last day-of-the-month start time a script kept as written (PBS `-a DDhhmm`, LSF
    `-b d:h:m`: the last one wins, as qsub and bsub read them): (its Directive, its parts);
    None where there is none."""
    option = DAY_OPTION.get(source or "")
    kept = [d for d in unknown if d.dialect == source and d.option == option]
    b = day_of_month(source or "", kept[-1].value or "") if kept else None
    return (kept[-1], b) if b is not None else None


def render_day_of_month(unknown: list, source: str | None, target: str,
                        warnings: list[str]) -> tuple[str, object] | None:
    """A day of the month kept as written by PBS or LSF, in the other's form (both read it
    as that day of this month if still to come, else of the next month: no clock needed):
    (`target`'s value, the Directive it carries over); None where nothing carries over."""
    got = kept_day_of_month(unknown, source) if target != source else None
    if got is None or target not in DAY_OPTION:
        return None
    d, b = got
    out = f"{b.day:02d}" + _hhmm(b) if target == "pbs" else \
        f"{b.day}:{b.hour:02d}:{b.minute:02d}"
    said = "; bsub -b takes no seconds" if b.second and target == "lsf" else ""
    warnings.append(f"approximated: {d.raw.strip()} as {DAY_OPTION[target]} {out} (a day of "
                    f"the month without its month: qsub and bsub read it as this month's if "
                    f"still to come, else the next month's{said})")
    return out, d


_FSD = re.compile(r"\+([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ms|s|m|h|d)?")
_FSD_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def flux_parts(value: str) -> Begin | None:
    """flux `--begin-time`: `+FSD` (a Flux Standard Duration after the submission) or a
    date and time written `YYYY-MM-DD[ |T]HH:MM[:SS]`; None for the other phrases flux's
    date parser reads ('tomorrow 8am'): kept as written."""
    text = value.strip()
    m = _FSD.fullmatch(text)
    if m:
        return Begin(after_s=int(-(-float(m.group(1)) * _FSD_UNITS[m.group(2)] // 1)))
    m = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{1,2}):([0-9]{2})"
                     r"(?::([0-9]{2}))?", text)
    if m:
        y, mo, d, h, mi, s = (int(g or 0) for g in m.groups())
        return _valid(Begin(year=y, month=mo, day=d, hour=h, minute=mi, second=s))
    return None


# ------------------------------------------------------------------ rendering

def _hhmm(b: Begin) -> str:
    return f"{b.hour:02d}{b.minute:02d}" + (f".{b.second:02d}" if b.second else "")


def render_begin(value: str, target: str, warnings: list[str]) -> str | None:
    """`value` (neutral) as `target`'s own option value, or None with a warning saying why
    it is left out."""
    b = slurm_parts(value)
    why = None
    if b is None:
        why = "not a time sbatch reads"
    elif target == "slurm":
        return value
    elif target in ("pbs", "sge"):
        if b.year is not None:
            return f"{b.year:04d}{b.month:02d}{b.day:02d}" + _hhmm(b)
        if b.dated:
            return f"{b.month:02d}{b.day:02d}" + _hhmm(b)
        if b.clock and target == "pbs":
            return _hhmm(b)
        why = ("qsub -a takes a date and time: no time relative to the submission"
               if not b.clock else "Grid Engine's qsub -a needs a month and day")
    elif target == "lsf":
        if b.after_s is None and b.days is None:
            fields = [b.hour, b.minute]
            if b.dated:
                fields = [b.month, b.day, *fields]
            if b.year is not None:
                fields = [b.year, *fields]
            out = ":".join(f"{f:02d}" for f in fields)
            if b.second:
                warnings.append(f"approximated: begin time {value} as -b {out} (bsub -b "
                                "takes no seconds)")
            return out
        why = "bsub -b takes a date and time: no time relative to the submission"
    elif target == "flux":
        if b.after_s is not None:
            return f"+{b.after_s}s"
        if b.year is not None:
            return f"{b.year:04d}-{b.month:02d}-{b.day:02d} {b.hour:02d}:{b.minute:02d}:" \
                   f"{b.second:02d}"
        why = "a day relative to the submission (today, tomorrow) has no flux form here" \
            if b.days is not None else "flux reads a time of day or a date without a year " \
            "as today's or this year's, not the next one to come"
    else:
        why = f"no {target} form"
    warnings.append(f"dropped: begin time {value} ({why}; the job may start at once)")
    return None
