"""Helpers shared by the scheduler output parsers (pure functions, no I/O)."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any

from ..digits import ascii_digits, foreign_digit
from ..model import TASKS_EXPANDED, BadInput, JobState, JobStatus, SiteError

NULLISH = frozenset({"", "-", "n/a", "none", "(null)", "unknown", "null", "nan"})
UNLIMITED = frozenset({"unlimited", "infinite", "inf", "infinity"})


def fail(scheduler: str, what: str, detail: str, sample: str = "") -> SiteError:
    """A SiteError naming the scheduler, the output that could not be parsed and why."""
    snippet = sample.strip().replace("\n", "\\n")[:120]
    msg = f"{scheduler}: cannot parse {what}: {detail}"
    return SiteError(f"{msg} (got {snippet!r})" if snippet else msg)


class MessagesOnly(list[str]):
    """A `skipped` list that takes messages only: lines of no record's shape before or
    after the records (a wrapper's or a locale's warning). A record that cannot be read is
    not left out but raised, as without a list: where a job is followed, a record left out
    would make the job look gone."""


def takes_records(skipped: list[str] | None) -> bool:
    """Whether `skipped` is a list a record that cannot be read is said in (left out)."""
    return skipped is not None and not isinstance(skipped, MessagesOnly)


def unread(skipped: list[str] | None, scheduler: str, what: str, detail: str,
           sample: str = "", *, message: bool = False) -> None:
    """A record of `what` that could not be read: said in `skipped` (the record is left
    out and the rest of the output stands), or, without a list to say it in, raised as the
    SiteError `fail` makes. `message`: the line is no record but a message; a list that
    takes messages only (`MessagesOnly`) raises for anything else."""
    err = fail(scheduler, what, detail, sample)
    if skipped is None or not (message or takes_records(skipped)):
        raise err
    skipped.append(str(err))


USER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._@-]*")  # a login name as `id -un` prints it


def user_filter(scheduler: str, user: str | None) -> str | None:
    """`user` checked as a login name (it goes to a scheduler's user filter); BadInput
    otherwise."""
    if user is not None and not USER_NAME.fullmatch(user):
        raise BadInput(f"{scheduler}: not a user name: {user!r} (letters, digits and "
                       "._@- only, not starting with . @ or -)")
    return user


def clean(value: Any) -> str | None:
    """A stripped string, or None for the many spellings of 'no value'."""
    if value is None:
        return None
    text = str(value).strip()
    return None if text.lower() in NULLISH else text


def to_int(value: Any) -> int | None:
    """int from int/float/str ('4', '4.0', '-'), unwrapping Slurm's {set, infinite, number};
    None for NaN and infinity (JSON's 1e999, NaN, Infinity: no count)."""
    return _integer(value, lambda f: int(f) if math.isfinite(f) else None, _int_of_text)


def _int_of_text(text: str) -> int | None:
    if re.fullmatch(r"[+-]?[0-9]+", text):  # exact: a 64-bit count past a float's 53 bits
        return int(text)
    if not text.isascii() or "_" in text:  # float() reads '١' and '1_0' too: no count
        return None
    try:
        return int(float(text))
    except (ValueError, OverflowError):  # junk, or inf/1e999 (no integer)
        return None


def _integer(value: Any, of_float: Callable[[float], int | None],
             of_text: Callable[[str], int | None]) -> int | None:
    """`value` unwrapped (Slurm's {set, infinite, number}) as an int: an int as it is, a
    float by `of_float`, anything else by `of_text` of its cleaned text; None for none, a
    bool or text that says no value."""
    value = unwrap(value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return of_float(value)
    text = clean(value)
    return None if text is None else of_text(text)


# Numbers a scheduler prints for "not set" or "no limit" in place of a value: Slurm's
# NO_VAL and INFINITE of 32 and 64 bits, Torque's ULONG_MAX, PBS's and LSF's INT_MAX
# ("unlimited"), Grid Engine's 4294967295 (INFINITY of a 32-bit number), LONG_MAX
NOT_SET_MARKS = frozenset({2**31 - 1, 2**32 - 2, 2**32 - 1, 2**63 - 1, 2**64 - 2, 2**64 - 1})
NOT_SET_MARKS_16 = frozenset({2**16 - 2, 2**16 - 1})  # Slurm's NO_VAL16, INFINITE16
MOST_COUNT = 2**31 - 2  # CPUs, nodes, jobs, MB of a limit: past this it is a mark
MOST_COUNT_64 = 2**63 - 2  # a 64-bit count (Slurm's TRES-minutes): past this, a mark
MOST_SECONDS = 100 * 366 * 86400  # a time past a century is a mark (no limit, not known)
MOST_MEMORY_MB = 2**40  # 1 EiB: past it a memory is a mark, not an amount


def _plain_count(value: Any, bits: int) -> int | None:
    n = to_int(value)
    if n is None or n < 0 or n > (MOST_COUNT_64 if bits == 64 else MOST_COUNT):
        return None
    return None if bits == 16 and n in NOT_SET_MARKS_16 else n


def limit_count(value: Any, *, bits: int = 32) -> int | None:
    """A limit a scheduler printed as a number (nodes, CPUs, jobs, minutes, MB); None for
    no limit: a mark of none (NOT_SET_MARKS, Slurm's {"set": false} / {"infinite": true};
    NO_VAL16 and INFINITE16 where the field has 16 `bits`), a negative number (LSF's -1,
    Slurm's marks printed signed) or one past MOST_COUNT (MOST_COUNT_64 where 64 `bits`)."""
    return _plain_count(value, bits)


def known_count(value: Any, *, bits: int = 32) -> int | None:
    """A count or size a scheduler printed (a node's CPUs or MB, a job's nodes); None for
    not known, read as `limit_count` reads a limit: never a mark taken for a number."""
    return _plain_count(value, bits)


def limit_seconds(value: Any, unit: int = 1) -> int | None:
    """A time limit printed as a number of `unit`s (60: Slurm's minutes) in seconds; None
    for no limit (a mark, a negative number, past MOST_SECONDS)."""
    n = limit_count(value)
    return None if n is None or n * unit > MOST_SECONDS else n * unit


def not_set_mark(digits: str) -> bool:
    """Whether `digits` (text) is one of NOT_SET_MARKS, signed or not."""
    text = digits.strip().lstrip("+")
    return ascii_digits(text) and int(text) in NOT_SET_MARKS


def whole_number(value: Any) -> int | None:
    """A job id or task index as JSON gives it: an int, a float that is whole (12.0, which
    is job 12) or digits; None for anything else (12.5, '12abc', true: no id to follow)."""
    return _integer(value, lambda f: int(f) if f.is_integer() else None,
                    lambda t: int(t.split(".")[0]) if re.fullmatch(r"[0-9]+(\.0*)?", t) else None)


def unwrap(value: Any) -> Any:
    """Slurm openapi >= v0.0.39 wraps numbers as {"set": b, "infinite": b, "number": n}."""
    if isinstance(value, dict) and "number" in value:
        if value.get("infinite") or value.get("set") is False:
            return None
        return value.get("number")
    return value


def parse_duration(text: Any, bare_unit: int = 1) -> int | None:
    """Seconds from '[D-]HH:MM:SS', 'MM:SS', '1-02:03', a bare number (times bare_unit).

    UNLIMITED/infinite/N/A/Unknown/NONE, a mark of none (NOT_SET_MARKS: Torque's
    18446744073709551615) and a time past MOST_SECONDS give None: no limit, or not known.
    Raises ValueError on other garbage.
    """
    seconds = _duration(text, bare_unit)
    return None if seconds is None or seconds > MOST_SECONDS else seconds


def _duration(text: Any, bare_unit: int) -> int | None:
    s = clean(unwrap(text))
    if s is None or s.lower() in UNLIMITED or not_set_mark(s):
        return None
    if (digit := foreign_digit(s)) is not None or "_" in s:
        raise ValueError(f"bad duration {text!r}: "
                         + (f"{digit!r} is not one of the digits 0-9" if digit else
                            "'_' is no part of a time"))
    days = 0
    if "-" in s:
        d, _, s = s.partition("-")
        if not all(ascii_digits(p) for p in [d, *s.split(":")]):
            raise ValueError(f"bad duration {text!r}: expected D-HH[:MM[:SS]] in digits 0-9")
        days = int(d)
        parts = [int(p) for p in s.split(":")]
        parts += [0] * (3 - len(parts))  # D-HH, D-HH:MM
        h, m, sec = parts[:3]
        return days * 86400 + h * 3600 + m * 60 + sec
    parts = s.split(":")
    nums = [finite_int(p, bare_unit if len(parts) == 1 else 1) for p in parts]
    if None in nums:  # junk, inf, nan, 1e999
        raise ValueError(f"bad duration {text!r}: not a finite number")
    if len(nums) == 1:
        return nums[0]
    if len(nums) == 2:
        return nums[0] * 60 + nums[1]
    if len(nums) == 3:
        return nums[0] * 3600 + nums[1] * 60 + nums[2]
    raise ValueError(f"bad duration {text!r}")


def unread_time_note(field: str, value: Any) -> str | None:
    """Words for a job's reason when the time `field` a scheduler printed holds a digit
    other than 0-9 (float() and int() would read `'١٢:٠٠'`, a regex `\\d` half of it): the
    time is not read, and that is said rather than a guess kept. None otherwise."""
    text = clean(unwrap(value))
    digit = foreign_digit(text) if text is not None else None
    return None if digit is None else \
        f"its {field} {text[:40]!r} was not read ({digit!r} is not one of the digits 0-9)"


def finite_int(number: str, unit: float = 1) -> int | None:
    """int(number * unit), None when `number` is no number ('.', '1.2.3', 'nan') or too
    big for one ('inf', 400 digits: float infinity), or written otherwise than in digits 0-9
    (float() reads '١' and '1_0')."""
    if not number.isascii() or "_" in number:
        return None
    try:
        x = float(number) * unit
    except ValueError:
        return None
    return int(x) if math.isfinite(x) else None


_FSD = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_fsd(text: Any) -> int | None:
    """Flux Standard Duration ('30s', '1.5h', '2d'; 'inf', '0' and past MOST_SECONDS: unlimited)
    -> seconds."""
    s = clean(text)
    if s is None or s.lower() in UNLIMITED:
        return None
    m = re.fullmatch(r"([0-9.]+)\s*([smhd]?)", s)
    if not m:
        raise ValueError(f"bad duration {text!r}")
    seconds = finite_int(m.group(1), _FSD.get(m.group(2) or "s", 1))
    if seconds is None:  # '.', or 400 digits
        raise ValueError(f"bad duration {text!r}: not a finite number")
    return seconds if 0 < seconds <= MOST_SECONDS else None  # 0 and a mark: no limit


def from_epoch(value: Any) -> datetime | None:
    """UTC datetime from seconds since the epoch; 0, negatives, junk and a mark of none
    (NOT_SET_MARKS: Slurm's NO_VAL and INFINITE of 32 bits, plain or wrapped, would read as
    a day in 2106) give None."""
    value = unwrap(value)
    if isinstance(value, str) and (not value.isascii() or "_" in value):
        return None  # float() reads '١٧٠٠' and '1_700': no time a scheduler printed
    try:
        num = float(value)
    except (TypeError, ValueError):
        return None
    if not num > 0 or num > 32503680000:  # NaN; year 3000: sentinel "infinite" values
        return None
    if num.is_integer() and int(num) in NOT_SET_MARKS:
        return None
    return datetime.fromtimestamp(num, timezone.utc)


def parse_local_time(text: Any, tz: tzinfo | None, formats: tuple[str, ...]) -> datetime | None:
    """First of `formats` that matches; naive results get `tz` (None = this machine's zone)."""
    s = clean(text)
    if s is None:
        return None
    s = " ".join(s.split())
    for fmt in formats:
        try:
            dt = datetime.strptime(s, fmt)
        except ValueError:
            continue
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=tz) if tz is not None else dt.astimezone()
        dt = dt.astimezone(timezone.utc)
        # a time of 0 printed as a date (`Thu Jan  1 01:00:00 1970` in the cluster's zone)
        return None if dt < _EPOCH_DAY else dt
    return None


def parse_iso(text: Any, tz: tzinfo | None = None) -> datetime | None:
    """Slurm's '2026-11-29T17:18:41' (cluster-local time unless tz-aware)."""
    s = clean(text)
    if s is None:
        return None
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=tz) if tz is not None else dt.astimezone()
    dt = dt.astimezone(timezone.utc)
    # a time of 0 printed as a date (`1970-01-01T01:00:00` in the cluster's zone): none
    return None if dt < _EPOCH_DAY else dt


_EPOCH_DAY = datetime(1970, 1, 2, tzinfo=timezone.utc)


def signed32(number: int) -> int:
    """An exit status a scheduler printed as an unsigned 32-bit number (4294967295 for -1)
    as the signed one it holds; any other number as it is."""
    return number - 2**32 if 2**31 <= number < 2**32 else number


# the highest signal number Linux has (SIGRTMAX): an exit status of a shell's 128 + N, or
# PBS's 256 + N, past it is no signal at all
SIGNAL_MAX = 64


def signal_number(number: int) -> int | None:
    """NUMBER as a signal (1 to SIGNAL_MAX), or None where it can be none."""
    return number if 1 <= number <= SIGNAL_MAX else None


def decode_wait_status(status: int) -> int:
    """POSIX wait status -> shell-style exit code (signal N -> 128+N)."""
    if status & 0x7F:
        return 128 + (status & 0x7F)
    return (status >> 8) & 0xFF


# a type holds a letter somewhere: a MIG profile starts with a digit (`gpu:4g.40gb:2`)
_GPU_RE = re.compile(r"gpu(?::([\w.-]*[A-Za-z][\w.-]*))?[:=]([0-9]+)")


def gpu_count(text: Any) -> tuple[int, str | None]:
    """GPUs (and type) from 'gpu:2', 'gpu:a100:4(S:0-1)', 'gres/gpu=1', 'gres:gpu:1'."""
    s = clean(text)
    if s is None:
        return 0, None
    total, kind, untyped_tres = 0, None, 0
    for m in _GPU_RE.finditer(s):
        total += int(m.group(2))
        kind = kind or m.group(1)
        if m.group(1) is None and m.group(0).endswith(f"={m.group(2)}"):
            untyped_tres += int(m.group(2))
    # a TRES string counts typed GPUs twice: in all (`gres/gpu=2`) and by type
    # (`gres/gpu:a100=2`, where accounting tracks the type)
    return (untyped_tres if untyped_tres and kind else total), kind


def gpu_types(text: Any) -> dict[str, int] | None:
    """GPUs by type where a node has more than one type ('gpu:a100:2(S:0),gpu:v100:2(S:1)'
    -> {'a100': 2, 'v100': 2}); None for one type or none (its count says it all)."""
    out: dict[str, int] = {}
    for m in _GPU_RE.finditer(clean(text) or ""):
        if m.group(1):
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out if len(out) > 1 else None


def gpu_sockets(text: Any) -> dict[int, int] | None:
    """GPUs by the one socket each is bound to ('gpu:a100:2(S:0),gpu:a100:2(S:1)' ->
    {0: 2, 1: 2}); None where a GPU is bound to several sockets or none is said (its CPUs
    may then come from any socket)."""
    out: dict[int, int] = {}
    for entry in re.split(r",(?![^()]*\))", clean(text) or ""):
        m = _GPU_RE.search(entry)
        if not m or not entry.strip().startswith("gpu"):
            continue
        where = re.search(r"\(S:([0-9]+)\)", entry)
        if where is None:
            return None
        out[int(where.group(1))] = out.get(int(where.group(1)), 0) + int(m.group(2))
    return out or None


_GRES_ENTRY = re.compile(r"([A-Za-z][\w-]*)(?::[^:,()]+)*?:([0-9]+)(?:\([^()]*\))?")


def other_gres(text: Any) -> dict[str, int]:
    """Generic resources other than GPUs, counted per name, from a Slurm node's Gres
    ('gpu:a100:4(S:0-1),mps:400,shard:a100:16' -> {'mps': 400, 'shard': 16}); '(null)': {}."""
    s = clean(text)
    out: dict[str, int] = {}
    for entry in re.split(r",(?![^()]*\))", s or ""):  # not a comma inside (S:0,1)
        m = _GRES_ENTRY.fullmatch(entry.strip())
        if m and m.group(1) != "gpu":
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out


_MEM_UNITS = {"b": 1 / 2**20, "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024**2, "p": 1024**3}


def memory_mb(text: Any, default_unit: str = "m") -> int | None:
    """MB from '16000', '62.50G', '16384000kb', '15.6 GB', '64000M'; a decimal comma of a
    locale that writes one ('3,8G' from a command run under de_DE) where it cannot be a
    thousands separator (one or two digits after it; '1,024M' says neither). None for a
    mark of none (NOT_SET_MARKS in any unit: Slurm's NO_VAL64, Torque's ULONG_MAX) and past
    MOST_MEMORY_MB: not known, or no limit."""
    s = clean(unwrap(text))
    if s is None:
        return None
    m = re.fullmatch(r"([0-9]+,[0-9]{1,2}|[0-9.]+)\s*([bkmgtp]?)(?:i?b)?", s.lower())
    if not m or not_set_mark(m.group(1)):
        return None
    mb = finite_int(m.group(1).replace(",", "."), _MEM_UNITS[m.group(2) or default_unit])
    return mb if mb is None or mb <= MOST_MEMORY_MB else None


_BRACKETS = re.compile(r"\[([^\[\]]*)\]")  # linear: no '[' inside []
MAX_HOSTS = 100_000  # a name expanding to more hosts than this is kept as written


def _hostlist_items(s: str) -> list[str]:
    """Split at the commas outside brackets (one pass)."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            items.append(s[start:i])
            start = i + 1
    items.append(s[start:])
    return items


def _bracket(body: str, budget: int) -> list[str]:
    """'1-3,07' -> ['1', '2', '3', '07'] (zero padding kept); at most `budget` entries."""
    out: list[str] = []
    for part in body.split(","):
        lo, _, hi = part.partition("-")
        if hi and ascii_digits(lo) and ascii_digits(hi) and int(hi) - int(lo) < budget - len(out):
            out += [f"{i:0{len(lo)}d}" for i in range(int(lo), int(hi) + 1)]
        else:
            out.append(part)
    return out


def expand_hostlist(text: Any) -> list[str]:
    """Slurm/Flux hostlist -> host names: 'c[1-3,07],gpu01' -> ['c1', 'c2', 'c3', 'c07',
    'gpu01']; several brackets in a name multiply ('r[1-2]n[1-2]' -> r1n1 r1n2 r2n1 r2n2).
    Linear in the text; a name that would expand past MAX_HOSTS, or with unbalanced
    brackets, is kept as written."""
    s = clean(text)
    if s is None:
        return []
    if "[" not in s and "]" not in s and "," not in s:  # one plain name (stripped)
        return [s] if s else []
    out: list[str] = []
    for item in _hostlist_items(s):
        item = item.strip()
        if not item:
            continue
        pieces = _BRACKETS.split(item)  # literal, body, literal, body, ..., literal
        if any("[" in p or "]" in p for p in pieces[::2]):
            out.append(item)
            continue
        names = [pieces[0]]
        for body, literal in zip(pieces[1::2], pieces[2::2], strict=True):
            heads = _bracket(body, max((MAX_HOSTS - len(out)) // len(names), 1))
            if len(names) * len(heads) > MAX_HOSTS - len(out):
                names = [item]
                break
            names = [n + h + literal for n in names for h in heads]
        out += names
    return out


_TRAILING_NUMBER = re.compile(r"^(.*?)([0-9]+)$")


def compact_hostlist(names: Iterable[str], most_runs: int | None = None) -> tuple[str, int]:
    """Host names -> a Slurm hostlist, `expand_hostlist`'s inverse: ['n01', 'n02', 'n04',
    'g1'] -> 'n[01-02,04],g1' (each name once; names of one prefix and number width share
    a bracket, their numbers in order; zero padding kept). With `most_runs`, only that many
    runs (a range or a lone name) are written; returns (the hostlist, names left out)."""
    # (prefix, width; 0: unpadded) -> numbers; a name not prefix + number: (name, -1)
    groups: dict[tuple[str, int], set[int]] = {}
    split = [(name, _TRAILING_NUMBER.match(name)) for name in dict.fromkeys(names)]
    padded = {(m.group(1), len(m.group(2))) for _, m in split
              if m is not None and m.group(2).startswith("0") and len(m.group(2)) > 1}
    for name, m in split:
        if m is None or any(c in name for c in "[],"):
            groups.setdefault((name, -1), set())
            continue
        prefix, digits = m.groups()
        # a number as wide as a padded one of its prefix (n10 beside n02) shares its width
        width = max((w for p, w in padded if p == prefix and w <= len(digits)), default=0)
        groups.setdefault((prefix, width), set()).add(int(digits))
    items: list[str] = []
    budget = most_runs if most_runs is not None else len(groups) + sum(map(len, groups.values()))
    left = 0
    for (prefix, width), numbers in groups.items():
        runs = _runs(sorted(numbers)) if width >= 0 else [(0, 0)]
        shown, budget = runs[:budget], max(0, budget - len(runs))
        left += sum(hi - lo + 1 for lo, hi in runs[len(shown):])
        if not shown:
            continue
        if width < 0:
            items.append(prefix)
            continue
        text = [f"{lo:0{width}d}" + (f"-{hi:0{width}d}" if hi > lo else "") for lo, hi in shown]
        items.append(prefix + text[0] if text == [f"{shown[0][0]:0{width}d}"]
                     else f"{prefix}[{','.join(text)}]")
    return ",".join(items), left


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Sorted numbers -> their consecutive runs as (first, last)."""
    out: list[tuple[int, int]] = []
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def job_hosts(text: Any) -> list[str]:
    """The hosts a running job's node list names, as each scheduler writes it: a Slurm or
    flux hostlist (`c[1-3],g01`), PBS's exec_host (`k1/0*8+k2/1*8`, Torque's
    `k1/0+k1/1`), LSF's (`4*h1:2*h2`, `h1 h2`), a Grid Engine host. Each host once."""
    s = clean(text)
    if s is None:
        return []
    if not re.search(r"[/*+:\s]", s):
        return expand_hostlist(s)
    hosts = (re.sub(r"^[0-9]+\*", "", part).split("/")[0] for part in re.split(r"[+:\s]+", s))
    return list(dict.fromkeys(h for h in hosts if h))


_KV_RE = re.compile(r"(?:^|\s)([A-Za-z][\w.:/-]*)=")


def parse_kv_line(line: str, free_text: tuple[str, ...] = ()) -> dict[str, str]:
    """'A=1 B=x y C=' -> {'A': '1', 'B': 'x y', 'C': ''} (scontrol -o; values may hold spaces).
    A key in `free_text` takes the rest of the line: what an admin wrote there (a node's
    `Reason=swapped DIMM, RealMemory=64000 until fixed`) names no field of its own."""
    matches = list(_KV_RE.finditer(line))
    out: dict[str, str] = {}
    for i, m in enumerate(matches):
        if m.group(1) in free_text:
            out[m.group(1)] = line[m.end():].strip()
            break
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        out[m.group(1)] = line[m.end() : end].strip()
    return out


_BAD_ESCAPE = re.compile(r'\\(?!["\\/bfnrtu])')
_JSON_LINE = re.compile(r'^(\s*"[^"]+"\s*:\s*")(.*)("\s*,?\s*)$')
# a value of digits only that PBS Pro printed bare (an environment variable's `005`, a
# number to it, none to JSON, which allows no leading zero)
_ZERO_LED_NUMBER = re.compile(r'^(\s*"[^"]+"\s*:\s*)(0[0-9]+)(\s*,?\s*)$')


def repair_json_lines(text: str) -> str:
    """Re-escape string values printed one per line with raw backslashes or quotes.

    PBS Pro's `qstat -F json` copies variable_list values (and job names,
    comments) verbatim, so `"PATH":"C:\\x"` or `"X":"say "hi""` break the JSON; it prints
    a value of digits bare, so `-v X=005` gives `"X":005`, read as the string it was.
    """
    fixed = []
    for line in text.splitlines():
        if z := _ZERO_LED_NUMBER.match(line):
            fixed.append(f'{z.group(1)}"{z.group(2)}"{z.group(3)}')
            continue
        m = _JSON_LINE.match(line)
        if m:
            inner = _BAD_ESCAPE.sub(r"\\\\", m.group(2))
            inner = re.sub(r'(?<!\\)"', r'\\"', inner)
            line = m.group(1) + inner + m.group(3)
        fixed.append(line)
    return "\n".join(fixed)


# a scheduler's JSON whose lists or objects nest past what json reads (RecursionError): a
# value printed with raw quotes (a name, a comment, another user's `-v`) can open thousands
NESTED_TOO_DEEP = "invalid JSON (lists or objects nested too deeply to read)"


def json_error(exc: json.JSONDecodeError, line_offset: int = 0) -> str:
    """What is wrong with a JSON text and on which line of the output (`line_offset` added:
    a part of it read apart): 'invalid JSON (Unterminated string starting at line 38)'."""
    return f"invalid JSON ({exc.msg.removesuffix(' at')} at line {exc.lineno + line_offset})"


# a line that may open a JSON document (an object or a list) / an XML one (its
# declaration or root element); whether it does is found by reading on from it
_JSON_OPENS = re.compile(r"[ \t]*[\[{]")
_XML_OPENS = re.compile(r"[ \t]*<[?A-Za-z_]")


def _document_start(text: str, opens: re.Pattern[str],
                    breaks_at: Callable[[int], int | None]) -> int:
    """Where a document starts in `text`: the first line that `opens` and whose reading
    (`breaks_at(offset)`: the line, counted from the candidate, where reading breaks, None
    when it reads) gets past that line. A line that breaks on itself is a message that
    happens to start with a bracket ('[warn] ...'). Only lines before the document are
    candidates, so a job's own text (a name holding '{' or '<?xml', inside the document)
    never is one. 0 when no line qualifies: the whole text is read, and its error said."""
    offset = 0
    for line in text.splitlines(keepends=True):
        if opens.match(line):
            broke = breaks_at(offset)
            if broke is None or broke > 1:  # read, or a document that breaks further on
                return offset
        offset += len(line)
    return 0


def _json_breaks_at(text: str, offset: int) -> int | None:
    try:
        json.JSONDecoder(strict=False).raw_decode(text, len(text) -
                                                  len(text[offset:].lstrip(" \t")))
    except json.JSONDecodeError as exc:
        return exc.lineno - text.count("\n", 0, offset)
    except (ValueError, RecursionError):  # beyond json's limits: the loader says so
        return None
    return None


def _xml_breaks_at(text: str, offset: int) -> int | None:
    try:
        ET.fromstring(text[offset:].lstrip())
    except ET.ParseError as exc:
        return exc.position[0]
    except ValueError:  # undecodable bytes: the loader says so
        return None
    return None


def _preamble(scheduler: str, what: str, text: str, start: int, kind: str,
              skipped: list[str] | None) -> int:
    """Each line before a document (a locale warning, a wrapper's note, a deprecation
    message) said in `skipped` with its line number (else SiteError); how many lines
    there were."""
    before = text[:start].split("\n")[:-1] if start else []
    for n, line in enumerate(before, 1):
        if line.strip():
            unread(skipped, scheduler, f"{what} line {n}",
                   f"a message before the {kind}, not read", line, message=True)
    return len(before)


# what a line after a JSON document starts with when it goes on with JSON (a document cut
# at a value that holds raw quotes), not a message
_JSON_GOES_ON = re.compile(r"\s*[\"{}\[\],:]")


def _json_after(scheduler: str, what: str, text: str, skipped: list[str] | None,
                line_offset: int) -> str:
    """`text` (a document from its start) without the lines after the document's end,
    each said in `skipped` as a message (a wrapper's note after the JSON). The document
    must end a line, and no line after it may read as more JSON; else `text` unchanged
    (its reading says why). `line_offset`: the output's lines before `text`."""
    try:
        _, end = json.JSONDecoder(strict=False).raw_decode(text, len(text) -
                                                           len(text.lstrip()))
    except (ValueError, RecursionError):
        return text
    rest_of_line, newline, after = text[end:].partition("\n")
    lines = after.split("\n")
    if rest_of_line.strip() or not newline or not after.strip() \
            or any(_JSON_GOES_ON.match(ln) for ln in lines):
        return text
    at = line_offset + text.count("\n", 0, end) + 2
    for n, line in enumerate(lines, at):
        if line.strip():
            unread(skipped, scheduler, f"{what} line {n}", "a message after the JSON, "
                   "not read", line, message=True)
    return text[:end + 1]


def json_document(scheduler: str, what: str, text: str, skipped: list[str] | None
                  ) -> tuple[str, int]:
    """The JSON document in a command's output and how many lines came before it, each
    of them said in `skipped` (else SiteError)."""
    start = _document_start(text, _JSON_OPENS, lambda at: _json_breaks_at(text, at))
    lines_before = _preamble(scheduler, what, text, start, "JSON", skipped)
    document = text[start:]
    if skipped is not None:
        document = _json_after(scheduler, what, document, skipped, lines_before)
    return document, lines_before


_JUNK_AFTER_ROOT = 9  # expat's XML_ERROR_JUNK_AFTER_DOC_ELEMENT


def _xml_after(scheduler: str, what: str, text: str, skipped: list[str] | None,
               line_offset: int) -> str:
    """`text` (a document from its start) without the lines after the document's end,
    each said in `skipped` as a message (a wrapper's note after the XML). The text after
    the document must start a line, and none of its lines may open more XML; else `text`
    unchanged (its reading says why: a cut-off document still fails). `line_offset`: the
    output's lines before `text`."""
    lead = len(text) - len(text.lstrip())
    try:
        ET.fromstring(text[lead:])
    except ET.ParseError as exc:
        if exc.code != _JUNK_AFTER_ROOT:
            return text
        junk_line, column = exc.position
        junk_line += text.count("\n", 0, lead)
    except ValueError:  # undecodable bytes: the loader says so
        return text
    else:
        return text
    kept = text.split("\n")
    lines = kept[junk_line - 1:]
    if lines[0][:column].strip() or any(ln.lstrip().startswith("<") for ln in lines):
        return text
    for n, line in enumerate(lines, line_offset + junk_line):
        if line.strip():
            unread(skipped, scheduler, f"{what} line {n}", "a message after the XML, "
                   "not read", line, message=True)
    return "\n".join(kept[:junk_line - 1])


def xml_document(scheduler: str, what: str, text: str, skipped: list[str] | None, *,
                 keep_after: bool = False) -> str:
    """The XML document in a command's output, each line before it said in `skipped`
    (else SiteError), and each line after it too unless `keep_after` (a caller that reads
    another program's output there)."""
    start = _document_start(text, _XML_OPENS, lambda at: _xml_breaks_at(text, at))
    lines_before = _preamble(scheduler, what, text, start, "XML", skipped)
    if skipped is None or keep_after:
        return text[start:]
    return _xml_after(scheduler, what, text[start:], skipped, lines_before)


def load_json(scheduler: str, what: str, text: str, *, lenient: bool = False,
              skipped: list[str] | None = None) -> Any:
    """json.loads with a clear SiteError naming the line of the output where the JSON
    breaks; lines before the document are said in `skipped` (else SiteError); `lenient`
    retries after repair_json_lines."""
    if not text.strip():
        raise fail(scheduler, what, "empty output")
    text, lines_before = json_document(scheduler, what, text, skipped)
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        if lenient:
            try:
                return json.loads(repair_json_lines(text), strict=False)
            except (ValueError, RecursionError):
                pass
        raise fail(scheduler, what, json_error(exc, lines_before), text) from None
    except ValueError as exc:  # valid JSON beyond Python's limits (a 5,000-digit number)
        raise fail(scheduler, what, f"invalid JSON ({exc})", text) from None
    except RecursionError:  # lists or objects nested past reading (a value that broke out)
        raise fail(scheduler, what, NESTED_TOO_DEEP, text) from None


def load_record_json(scheduler: str, what: str, text: str, records: str, *,
                     line_offset: int = 0, skipped: list[str] | None = None) -> Any:
    """PBS Pro's `-F json`, whose string values may hold raw quotes (PBS copies names,
    comments and `-v` values verbatim). Such a value can read as valid JSON that holds more
    than it says: another user's `-v X='"},"9.srv":{"...'` made a job that does not exist,
    or set a key twice to replace a real one. So an answer counts only where no object
    repeats a key and each record under `records` (a job) opens on a line of its own, as
    the scheduler prints them (JSON on one line: not asked); else each line's string value
    is taken whole (`repair_json_lines`) and checked again; else SiteError, naming the
    line where the JSON breaks (`line_offset` added: `text` a part of the output, read
    apart). Lines before the document are said in `skipped` (else SiteError)."""
    if not text.strip():
        raise fail(scheduler, what, "empty output")
    text, lines_before = json_document(scheduler, what, text, skipped)
    line_offset += lines_before
    headers = set(re.findall(r'(?m)^\s*"([^"\n]+)"\s*:\s*\{\s*$', text))
    repeated: list[str] = []

    def no_repeats(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) < len(items):
            repeated.append(next(k for k, _ in items if sum(k == j for j, _ in items) > 1))
        return out

    error = ""
    for candidate in (text, repair_json_lines(text)):
        repeated.clear()
        try:
            data = json.loads(candidate, strict=False, object_pairs_hook=no_repeats)
        except json.JSONDecodeError as exc:
            error = error or json_error(exc, line_offset)
            continue
        except ValueError as exc:  # valid JSON beyond Python's limits (a 5,000-digit number)
            error = error or f"invalid JSON ({exc})"
            continue
        except RecursionError:  # a value holding raw quotes and thousands of brackets
            error = error or NESTED_TOO_DEEP
            continue
        group = data.get(records) if isinstance(data, dict) else None
        inside = [k for k in group if k not in headers] \
            if isinstance(group, dict) and "\n" in text.strip() else []  # one line: as given
        if not repeated and not inside:
            return data
        error = (f"key {repeated[0]!r} given twice in one object" if repeated else
                 f"{records} entry {inside[0]!r} does not start a line of its own") + \
            " (a value holding raw quotes)"
    raise fail(scheduler, what, error, text)


def year_fix(dt: datetime, now: datetime) -> datetime:
    """For year-less timestamps parsed as this year: a date far in the future is last year's."""
    if dt - now > timedelta(days=2):
        try:
            return dt.replace(year=dt.year - 1)
        except ValueError:  # Feb 29
            return dt - timedelta(days=365)
    return dt


# which array task speaks for a finished array: a failure over a success
_OUTCOME_RANK = {JobState.COMPLETED: 0, JobState.UNKNOWN: 1, JobState.TIMEOUT: 2,
                 JobState.FAILED: 3, JobState.CANCELLED: 4}


def outcome_rank(state: JobState) -> int:
    """How bad an ended job's outcome is (a failure over a success)."""
    return _OUTCOME_RANK.get(state, 1)


_TASK_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?")
MAX_ARRAY_TASKS = 10**9  # above any scheduler's array size: a count past it does not read


def count_array_tasks(expr: str) -> int | None:
    """How many tasks an array index expression names: '7', '1-10', '1-10:3' (every third),
    '4,5', '1,3,5-7%2' (a %limit of tasks at once changes nothing). None when it does not
    read as one."""
    ranges = _task_ranges(expr)
    if ranges is None:
        return None
    total = sum(len(r) for r in ranges)
    return total if total <= MAX_ARRAY_TASKS else None


def array_expression_ranges(expr: str) -> tuple[range, ...] | None:
    """The task ids an array index expression names, as ranges ('1-10:3,12%2' ->
    (range(1, 11, 3), range(12, 13))); None when it does not read."""
    return _task_ranges(expr)


def _task_ranges(expr: str) -> tuple[range, ...] | None:
    """An array index expression's parts as ranges, in order ('1-10:3,12%2' ->
    (range(1, 11, 3), range(12, 13))); None when a part does not read."""
    ranges = []
    for part in expr.partition("%")[0].split(","):
        m = _TASK_RANGE.fullmatch(part.strip())
        if m is None:
            return None
        lo, hi, step = int(m.group(1)), int(m.group(2) or m.group(1)), int(m.group(3) or 1)
        if hi < lo or step < 1:
            return None
        ranges.append(range(lo, hi + 1, step))
    return tuple(ranges)


def highest_array_index(expr: str) -> int | None:
    """The largest index an array index expression names ('1-10:3' -> 10, '4,5' -> 5);
    None when it does not read as one."""
    if count_array_tasks(expr) is None:
        return None
    return max(r.stop - 1 for r in _task_ranges(expr) or ())


# a record standing for an array's waiting tasks: Slurm's '123_[5-100%4]', Grid Engine's
# '9.6-10:1' / '9.4,5' (its one waiting or running task: '9.3')
_WAITING_TASKS = (re.compile(r"([0-9]+)_\[([^\]]*)\]"), re.compile(r"([0-9]+)\.([0-9][0-9,:-]*)"))
_ONE_TASK = re.compile(r"([0-9]+)(?:_([0-9]+)|\[([0-9]+)\])")  # Slurm '123_7', LSF '500[3]'


def array_task_ids(native_id: str) -> tuple[range, ...] | None:
    """The task ids a queue record of an array's tasks stands for, in order, as ranges
    (not expanded: an array may hold millions): '123_[4-9%2]' -> (range(4, 10),),
    '9.1-7:3' -> (range(1, 8, 3),), '123_7' and '500[3]' -> (range(7, 8),); None for a
    plain job's id or a range that does not read."""
    expr = None
    for form in _WAITING_TASKS:
        if m := form.fullmatch(native_id):
            expr = m.group(2).partition("%")[0]
    if expr is None:
        m = _ONE_TASK.fullmatch(native_id)
        return (range(int(m.group(2) or m.group(3)), int(m.group(2) or m.group(3)) + 1),) \
            if m else None
    return _task_ranges(expr)


def array_record(native_id: str) -> tuple[str, int, int | None] | None:
    """What a queue record of a job array's tasks stands for, read from its id in any
    scheduler's form: (the array's id, how many tasks, at most how many of the array run at
    once: Slurm's '%k', else None). '123_[5-100%4]' -> ('123', 96, 4), '9.6-10:1' ->
    ('9', 5, None), '123_7' and '500[3]' -> one task; None for a plain job's id or a range
    that does not read."""
    if ascii_digits(native_id):  # a plain job's id (most of a queue): no form reads it
        return None
    for form in _WAITING_TASKS:
        if m := form.fullmatch(native_id):
            expr = m.group(2)
            tasks = count_array_tasks(expr)
            if tasks is None:
                return None
            limit = expr.partition("%")[2]
            return m.group(1), tasks, int(limit) if ascii_digits(limit) else None
    if m := _ONE_TASK.fullmatch(native_id):
        return m.group(1), 1, None
    return None


def fold_array_tasks(statuses: list[JobStatus],
                     array_of: Callable[[str], str | None],
                     tasks_in: Callable[[str], int] | None = None) -> list[JobStatus]:
    """One status per job array from its tasks' records (`array_of` names the array a
    record's id belongs to, None for a plain job), as the engine follows an array: running
    while any task runs, pending while tasks wait and none runs, and once every task has
    ended the worst outcome (a failure over a success: its exit code), ended when the last
    task ended. Other records pass unchanged; an array takes its first task's place. The
    reason counts tasks: a record of waiting tasks (`123_[5-9]`, Grid Engine's `9.4-8:1`)
    counts as many as `tasks_in` reads in its id (else one). A Slurm heterogeneous job's
    components (`123+0`, `123+1`) fold the same way, the reason counting components."""
    groups: dict[str, list[JobStatus]] = {}
    out: list[JobStatus | str] = []
    for s in statuses:
        parent = array_of(s.native_id)
        if parent is None:
            out.append(s)
            continue
        if parent not in groups:
            groups[parent] = []
            out.append(parent)
        groups[parent].append(s)
    return [x if isinstance(x, JobStatus) else _fold(x, groups[x], tasks_in)
            for x in out]


def fold_indexed_tasks(parent: str, by_index: dict[str, JobStatus]) -> JobStatus:
    """One status of a job array whose tasks are jobs of their own (a Flux site's), from
    each task's record by its index, as `fold_array_tasks` folds an array's records; its
    task states by index."""
    folded = _fold(parent, list(by_index.values()))
    return folded.model_copy(update={"tasks": {i: r.state for i, r in by_index.items()}})




def task_states(records: list[JobStatus]) -> dict[str, JobState] | None:
    """The state of each task of an array its records name (index -> state, in order of
    the records, a later record of a task replacing an earlier), up to TASKS_EXPANDED;
    None when no record names a task (a het job's components)."""
    states: dict[str, JobState] = {}
    for record in records:
        for ids in array_task_ids(record.native_id) or ():
            for index in ids[:max(0, TASKS_EXPANDED - len(states))]:
                states[str(index)] = record.state
    return states or None


def _fold(parent: str, tasks: list[JobStatus],
          tasks_in: Callable[[str], int] | None = None) -> JobStatus:
    first = tasks[0]
    starts = [t.started_at for t in tasks if t.started_at]
    live = [t for t in tasks if not t.state.terminal]
    running = [t for t in live if t.state == JobState.RUNNING]
    ended = [t for t in tasks if t.state.terminal]
    bad = [t for t in ended if t.state != JobState.COMPLETED]

    def n(records: list[JobStatus]) -> int:
        return sum(tasks_in(t.native_id) if tasks_in else 1 for t in records)

    counts = ", ".join(f"{k} {what}" for k, what in (
        (n(running), "running"), (n(live) - n(running), "waiting"),
        (n(ended) - n(bad), "completed"), (n(bad), "not completed")) if k)
    # Slurm's heterogeneous job (`123+0`, `123+1`: no other scheduler's id holds '+')
    parts, part = ("het job components", "component") if "+" in first.native_id \
        else ("array tasks", "task")
    common = dict(native_id=parent, name=first.name, user=first.user,
                  partition=first.partition, submitted_at=first.submitted_at,
                  started_at=min(starts) if starts else None, comment=first.comment,
                  tasks=task_states(tasks))
    if live:
        pending = live[0] if not running else None
        return JobStatus(
            **common, state=JobState.RUNNING if running else pending.state,
            native_state=(running or live)[0].native_state,
            estimated_start=pending.estimated_start if pending else None,
            reason=f"{parts}: {counts}" if running else
            (pending.reason or f"{parts}: {counts}"))
    worst = max(ended, key=lambda t: outcome_rank(t.state))
    ends = [t.ended_at for t in ended if t.ended_at]
    exits = [t.exit_code for t in ended]
    return JobStatus(
        **common, state=worst.state, native_state=worst.native_state,
        ended_at=max(ends) if ends else None,
        exit_code=None if None in exits else worst.exit_code,
        reason=(f"{parts}: {counts}; {part} {worst.native_id}: "
                f"{worst.reason or worst.native_state or worst.state.value}") if bad
        else f"{parts}: {counts}")


# What each scheduler's query commands print when its server cannot be reached (restarting,
# down, overloaded): no answer about any job, unlike "no such job". Slurm's Torque wrappers
# print Slurm's.
NO_ANSWER = {
    "slurm": re.compile(r"Unable to contact slurm controller|Socket timed out|Zero Bytes were "
                        r"transmitted|Connection refused|Connection timed out|Problem talking "
                        r"to the database|Slurm backup controller in standby mode|"
                        # configless Slurm whose controller's DNS record is not found
                        r"Could not establish a configuration source"),
    "pbs": re.compile(r"cannot connect to server|Communication failure|Connection refused|"
                      r"Unable to contact slurm controller|Socket timed out"),
    "lsf": re.compile(r"LSF is down|Cannot connect to LSF|LIM is down|Failed in an LSF "
                      r"library call"),
    "sge": re.compile(r"unable to contact qmaster|commlib error|unable to send message to "
                      r"qmaster|failed sending gdi request"),
    # flux-core: no broker socket ("Unable to connect to Flux: broker socket ... was not
    # found", "[Errno 2] Unable to connect to Flux: No such file or directory"), a broker that
    # refuses or drops the connection, its upstream broker offline (Flux's EHOSTUNREACH
    # text), and ENOSYS: the job-list / job-manager service not loaded while the instance
    # starts or shuts down; flux-core's C commands (`flux job info`, `flux job urgency`) say
    # "flux-job: flux_open: STRERROR" when they cannot open the broker connection at all
    "flux": re.compile(r"Unable to connect to Flux|flux_open: |broker socket \S* ?was not "
                       r"found|Upstream Flux broker is offline|Function not implemented|"
                       r"Connection refused|"
                       r"Connection reset by peer|Connection timed out|No route to host|"
                       r"Broken pipe"),
}


# What a submit command prints when its request went out to the server but no answer came
# back (the server may have queued the job, unlike a connect failure, where nothing was
# sent and NO_ANSWER's texts apply): Slurm's read timeout and a reply cut short; PBS's
# reply unreadable (PBSE_PROTOCOL, 15031, "Batch protocol error", or the DIS reader's
# "End of File" / "Premature end of message"), Slurm's Torque wrappers printing Slurm's;
# LSF's LSBE_TIME_OUT ("Timeout in contacting mbatchd": connected, the answer late), not
# LSBE_CONN_TIMEOUT ("Timeout on connect() call") nor "LSF is down"; Grid Engine's "failed
# receiving gdi request response" (sent, no answer), not "unable to contact qmaster" nor
# "failed sending gdi request"; Flux's RPC that timed out or whose broker connection was
# reset once sent, not "Unable to connect to Flux" nor "Connection refused".
SUBMIT_ANSWER_LOST = {
    "slurm": re.compile(r"Socket timed out on send/recv operation|Zero Bytes were "
                        r"transmitted or received"),
    "pbs": re.compile(r"Batch protocol error|End of File|Premature end of message|"
                      r"Socket timed out on send/recv operation|Zero Bytes were "
                      r"transmitted or received"),
    "lsf": re.compile(r"Timeout in contacting mbatchd"),
    "sge": re.compile(r"failed receiving gdi request response"),
    "flux": re.compile(r"Connection timed out|Connection reset by peer"),
}


def submit_answer_lost(scheduler: str, exit_status: int, stderr: str) -> bool:
    """Whether a failed submit may still have queued the job: its request was sent and the
    answer was lost (see SUBMIT_ANSWER_LOST); False for a refusal or a failure to connect."""
    lost = SUBMIT_ANSWER_LOST.get(scheduler)
    return exit_status != 0 and lost is not None and lost.search(stderr) is not None


def unanswered(scheduler: str, exit_status: int, stderr: str) -> bool:
    """Whether a failed status or accounting query means the scheduler did not answer (then
    nothing can be concluded about the jobs asked), by what its commands print."""
    return exit_status != 0 and NO_ANSWER[scheduler].search(stderr) is not None


class FailureReading:
    """What a scheduler's failed command says about the server, for the commands classes:
    each names its scheduler in `name` (a key of NO_ANSWER and SUBMIT_ANSWER_LOST)."""

    name: str

    @classmethod
    def submit_unsure(cls, exit_status: int, stderr: str) -> bool:
        """Whether a failed submit may have queued the job all the same: the request reached
        the server, whose answer was lost (a read timeout), so the job's token decides."""
        return submit_answer_lost(cls.name, exit_status, stderr)

    @classmethod
    def status_unanswered(cls, exit_status: int, stderr: str) -> bool:
        """Whether a failed status or accounting query means the server did not answer,
        rather than an answer such as "unknown job id" (a job no longer in the queue): then
        nothing can be concluded about the jobs asked."""
        return unanswered(cls.name, exit_status, stderr)


# an ending the job's program caused but the scheduler saw and recorded: said, its exit
# code kept
OUT_OF_MEMORY = "out of memory: the job used more than the memory it was given"
