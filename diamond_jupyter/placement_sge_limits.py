"""Grid Engine resource quota sets and calendars as they bear on a job.

A resource quota set (sge_resource_quota(5)) binds a job by its first rule whose filters
(users, projects, pes, queues, hosts; `!` negates, `{}` limits each apart) match it; the
running jobs that rule binds count against its limit; every enabled set applies. A
calendar (calendar_conf(5)) disables (`off`) or suspends a queue's instances at set
times; Grid Engine starts a job of a known h_rt in an instance only for an on-duty
stretch that holds it (with resource reservation on). Pure code.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo

from .config import SiteConfig, known_zone
from .dialects.outputs_common import UNLIMITED, limit_count, not_set_mark
from .dialects.sge_commands import amount
from .dialects.sge_script import sge_arch
from .digits import ascii_digits
from .model import (
    JobSpec,
    JobStatus,
    Node,
    Partition,
    SgeCalendar,
    SgeComplex,
    SgeQuotaRule,
    SgeQuotaSet,
    SiteSnapshot,
    hms,
)
from .placement_fit import Req, _few
from .placement_limits import Wait, _room_after, sge_project
from .placement_sge_names import (
    forced_misses,
    forced_said,
    full_names,
    text_admits,
    value_misses,
    value_said,
)
from .sge_expression import ExpressionError, ge_bool, parse_expression

_STATES = ("on", "off", "suspended")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
HORIZON_DAYS = 60  # how far ahead a calendar is searched for a stretch that holds a job


@dataclass
class SgeQueueLimits:
    """By queue: why the job can never run there (`refused`; `restricted`: by a quota
    of the user's), what it waits for
    (`waits`), its instances that can never take it (`never_hosts`), and what is said."""

    refused: dict[str, list[str]] = field(default_factory=dict)
    restricted: dict[str, list[str]] = field(default_factory=dict)
    waits: dict[str, list[Wait]] = field(default_factory=dict)
    never_hosts: dict[str, set[str]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    not_checked: list[str] = field(default_factory=list)


# -- calendars -----------------------------------------------------------------------
def site_zone(cfg: SiteConfig, snap: SiteSnapshot | None = None
              ) -> tuple[tzinfo | None, str]:
    """The cluster's time zone and where it comes from (said with a calendar's times): its
    sites entry's `metadata.timezone`, else the zone its hosts report (`site_time_zone`);
    None: neither, this machine's (the engine's) zone, as its outputs' times are read."""
    if (zone := cfg.metadata_zone()) is not None:
        return zone, "the cluster's time"
    told = snap.site_time_zone if snap is not None else None
    if told:
        m = re.fullmatch(r"([+-])([0-9]{2})([0-9]{2})", told)
        try:  # an offset past a day (+9999) is a ValueError
            zone: tzinfo | None = known_zone(told) if m is None else timezone(
                (1 if m.group(1) == "+" else -1)
                * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
        except ValueError:
            zone = None
        if zone is not None:
            return zone, f"the cluster's time, {told} as its hosts report it"
    return None, ("read in the engine's time zone: the sites entry sets no "
                  "metadata.timezone and the site reported none")


def _clock(text: str) -> float:
    """`6`, `6:30`, `6:30:15` -> seconds into the day."""
    parts = [int(x) for x in text.split(":")]
    return sum(v * m for v, m in zip(parts, (3600, 60, 1), strict=False))


def _time_ranges(text: str) -> list[tuple[float, float]] | None:
    """`6-20,22-23:30` -> [(start, end)] seconds into the day, a range whose end comes
    before its start wrapping past midnight; None: not time ranges."""
    out = []
    for item in text.split(","):
        m = re.fullmatch(r"([0-9]{1,2}(?::[0-9]{1,2}){0,2})-([0-9]{1,2}(?::[0-9]{1,2}){0,2})", item)
        if not m:
            return None
        a, b = _clock(m.group(1)), _clock(m.group(2))
        out += [(a, b)] if a < b else [(a, 86400.0), (0.0, b)]
    return out


def _year_day(text: str) -> date | None:
    m = re.fullmatch(r"([0-9]{1,2})\.(\w+)\.([0-9]{4})", text)
    if not m:
        return None
    month = m.group(2).lower()
    number = int(month) if ascii_digits(month) else _MONTHS.index(month) + 1 \
        if month in _MONTHS else 0
    try:
        return date(int(m.group(3)), number, int(m.group(1)))
    except ValueError:
        return None


def _day_match(text: str, day: date, basis: str) -> bool | None:
    """Whether `day` is in a day range list (`mon-fri,sun`; `24.12.2026-26.12.2026`);
    None: not such a list."""
    for item in text.split(","):
        a, _, b = item.partition("-")
        if basis == "week":
            if a not in _WEEKDAYS or (b and b not in _WEEKDAYS):
                return None
            i, j, d = _WEEKDAYS.index(a), _WEEKDAYS.index(b or a), day.weekday()
            if (i <= d <= j) if i <= j else (d >= i or d <= j):
                return True
        else:
            first, last = _year_day(a), _year_day(b) if b else _year_day(a)
            if first is None or last is None:
                return None
            if first <= day <= last:
                return True
    return False


def _entry(text: str, basis: str) -> tuple[str | None, list[tuple[float, float]], str] | None:
    """A calendar entry -> (its day list, its time ranges, its state); None: unreadable."""
    days, ranges, state = None, [(0.0, 86400.0)], "off"
    for part in text.split("="):
        if part in _STATES:
            state = part
        elif (r := _time_ranges(part)) is not None:
            ranges = r
        elif _day_match(part, date(2000, 1, 3), basis) is not None:
            days = part
        else:
            return None
    return days, ranges, state


def calendar_state(cal: SgeCalendar, at: datetime) -> str:
    """The state ("on", "off", "suspended") calendar `cal` puts a queue in at local
    time `at`: its year entries for a day they name, else its week entries; where
    several cover the moment, on wins over suspended, suspended over off; none: on."""
    day, secs = at.date(), at.hour * 3600 + at.minute * 60 + at.second
    for basis, entries in (("year", cal.year), ("week", cal.week)):
        read = [e for x in entries if (e := _entry(x, basis)) is not None]
        for_day = [e for e in read if e[0] is None or _day_match(e[0], day, basis)]
        if for_day:  # a year entry for the day: its week entries do not count
            covering = {s for _, ranges, s in for_day for a, b in ranges if a <= secs < b}
            return next((s for s in ("on", "suspended", "off") if s in covering), "on")
    return "on"


def _changes(cal: SgeCalendar, start: datetime, days: int) -> list[datetime]:
    """The moments from `start` on at which `cal` may change state: each midnight and
    each bound of its time ranges, for `days` days."""
    bounds = {0.0} | {x for entries, basis in ((cal.year, "year"), (cal.week, "week"))
                      for t in entries if (e := _entry(t, basis)) is not None
                      for a, b in e[1] for x in (a, b) if x < 86400.0}
    midnight = datetime.combine(start.date(), time(), start.tzinfo)
    out = [midnight + timedelta(days=d, seconds=x) for d in range(days + 1)
           for x in sorted(bounds)]
    return [t for t in out if t > start]


def first_stretch(cal: SgeCalendar, now: datetime, wall: float | None
                  ) -> tuple[datetime | None, datetime | None]:
    """(when `cal` first keeps a queue on for `wall` seconds from then on — now, or
    the start of an on-duty stretch; None: not within HORIZON_DAYS; without a walltime,
    the next moment it is on), and when that stretch ends (None: not within the
    horizon)."""
    marks = [now, *_changes(cal, now, HORIZON_DAYS)]
    states = [calendar_state(cal, t) for t in marks]
    for i, (t, s) in enumerate(zip(marks, states, strict=True)):
        if s != "on" or (i and states[i - 1] == "on"):
            continue
        end = next((marks[k] for k in range(i + 1, len(marks)) if states[k] != "on"), None)
        if wall is None or end is None or (end - t).total_seconds() >= wall:
            return t, end
    return None, None


def _calendar_misses(p: Partition, hosts: list[str], wall: float | None,
                     snap: SiteSnapshot, now: datetime, zone: tuple[tzinfo | None, str],
                     out: SgeQueueLimits) -> None:
    """What the calendars of queue `p`'s instances on `hosts` make of a job of `wall`."""
    if not p.instance_calendars or not hosts:
        return
    local = now.astimezone(zone[0]) if zone[0] is not None else now.astimezone()
    starts: dict[str, datetime] = {}
    never: dict[str, str] = {}
    unread: set[str] = set()
    found: dict[str, datetime | None] = {}  # by calendar: hosts share a few
    for h in hosts:
        name = p.instance_calendars.get(h)
        if name is None:
            starts[h] = local
            continue
        cal = (snap.sge_calendars or {}).get(name)
        if cal is None:
            unread.add(name)
            starts[h] = local
            continue
        if name not in found:
            found[name] = first_stretch(cal, local, wall)[0]
        t = found[name]
        if t is None:
            never[h] = name
        else:
            starts[h] = t
    if unread:
        why = snap.limits_unread.get("calendars") or "not listed by qconf -scall"
        out.not_checked.append(f"calendar{'s' if len(unread) > 1 else ''} "
                               f"{', '.join(sorted(unread))} of queue {p.name} ({why})")
    length = f"its walltime {hms(wall)}" if wall else "it"
    if never:
        names = ", ".join(sorted(set(never.values())))
        if not starts:
            out.refused.setdefault(p.name, []).append(
                f"queue {p.name}: its calendar {names} (qconf -scal) leaves no on-duty "
                f"stretch that holds {length} in the next {HORIZON_DAYS} days on any of its "
                "instances")
            return
        out.never_hosts.setdefault(p.name, set()).update(never)
        out.notes.setdefault(p.name, []).append(
            f"queue {p.name}: its instances on {', '.join(sorted(never))} are passed over: "
            f"calendar {names} leaves them no on-duty stretch that holds {length}")
    first = min(starts.values())
    if first > local:
        late = sorted(h for h, t in starts.items() if t == first)
        cal = p.instance_calendars.get(late[0]) or ""
        state = calendar_state((snap.sge_calendars or {})[cal], local)
        closed = "disabled" if state == "off" else "suspended" if state == "suspended" \
            else "on, but not for long enough"
        out.waits.setdefault(p.name, []).append(Wait(
            (first - local).total_seconds(),
            f"queue {p.name}'s calendar {cal} (qconf -scal): now {closed}; Grid Engine "
            f"starts the job there at {first:%a %Y-%m-%d %H:%M} ({zone[1]}), the "
            f"first on-duty stretch that holds {length}"))


def reopened(snap: SiteSnapshot, cfg: SiteConfig, now: datetime) -> SiteSnapshot:
    """`snap` with the queue instances a calendar holds closed now (disabled or
    suspended by it: qstat's D and C) counted as the queue's again: they take the job once
    the calendar opens them (the wait is `sge_queue_limits`')."""
    if cfg.scheduler != "sge" or not snap.sge_calendars:
        return snap
    zone = site_zone(cfg, snap)[0]
    local = now.astimezone(zone) if zone is not None else now.astimezone()
    parts, back = [], set()
    state_of = {name: calendar_state(c, local) for name, c in snap.sge_calendars.items()}
    for p in snap.partitions:
        # the instances closed by their calendar alone (qstat's D, C), which it closes now
        shut = set(p.calendar_closed or [])
        closed = [h for h, c in (p.instance_calendars or {}).items()
                  if c in state_of and h in shut and state_of[c] != "on"]
        if closed:
            back |= set(closed)
            opened = [*(p.nodes if p.state == "UP" else []), *closed]
            p = p.model_copy(update={"nodes": opened, "state": "UP"})
        parts.append(p)
    if not back:
        return snap
    nodes = [n.model_copy(update={"state": "idle" if not n.cpus_allocated else "mixed"})
             if n.name in back and n.state == "drain" else n for n in snap.nodes]
    return snap.model_copy(update={"partitions": parts, "nodes": nodes})


# -- resource quota sets ---------------------------------------------------------------
def _matches(names: list[str], value: str | None,
             groups: Mapping[str, list[str]] | None = None) -> bool | None:
    """Whether `value` passes a filter's names (`*`, wildcards, `!` denies, `@NAME` a host
    group's hosts or an access list's users, from `groups`); None where a group's members
    are not known (not read, or themselves groups: a Unix group of an access list)."""
    expanded = []
    for n in names:
        bare, no = n.lstrip("!"), "!" if n.startswith("!") else ""
        if not bare.startswith("@"):
            expanded.append(n)
            continue
        members = (groups or {}).get(bare)
        if members is None or any(m.startswith("@") for m in members):
            return None
        expanded += [no + m for m in members] or [f"{no}\0none"]  # an empty group: none
    names = expanded
    if value is None:
        return False
    yes = [n for n in names if not n.startswith("!")]
    no = [n[1:] for n in names if n.startswith("!")]
    return (not yes or any(fnmatch.fnmatchcase(value, n) for n in yes)) \
        and not any(fnmatch.fnmatchcase(value, n) for n in no)


# filters a job may fall outside of by asking none (sge_resource_quota(5): `projects *` is
# every job of a project, `!*` the jobs of none; a job of none passes a filter that only
# excludes, `!p1`, and no filter that names a project, `*` included)
_ASKED_ONLY = ("projects", "pes")


def _rule_binds(rule: SgeQuotaRule, attrs: Mapping[str, str | None],
                groups: Mapping[str, Mapping[str, list[str]]],
                unknown: frozenset[str] = frozenset()) -> bool | None:
    """Whether `rule`'s filters match a job of `attrs` (scope -> its value); scopes in
    `unknown` match (not known of that job); None where a filter cannot be told.
    `groups`: by scope, the `@NAME`s its filters may name and their members."""
    for scope, f in rule.filters.items():
        if scope in unknown:
            continue
        value = attrs.get(scope)
        if value is None and scope in _ASKED_ONLY:  # a job that names no project (PE)
            hit: bool | None = not any(not n.startswith("!") for n in f.names)
        else:
            hit = _matches(f.names, value, groups.get(scope))
        if hit is None:
            return None
        if not hit:
            return False
    return True


def _rule_text(s: SgeQuotaSet, i: int, rule: SgeQuotaRule) -> str:
    filters = " ".join(f"{k} {'{' if f.each else ''}{','.join(f.names)}{'}' if f.each else ''}"
                       for k, f in rule.filters.items())
    limits = ",".join(f"{k}={v}" for k, v in rule.limits.items())
    return f"resource quota set {s.name} rule {rule.name or i + 1} ({filters} to {limits})"


def _quota_groups(snap: SiteSnapshot) -> dict[str, dict[str, list[str]]]:
    """The `@NAME`s a quota rule's filters may name, by scope: host groups (`qconf
    -shgrp_resolved`) for hosts, access lists (`qconf -su`) for users."""
    return {"hosts": dict(snap.sge_host_groups or {}),
            "users": {f"@{k}": v for k, v in (snap.sge_access_lists or {}).items()}}


def _theirs(j: JobStatus, scope: str) -> str | None:
    """A running job's value of a quota filter's scope (its project and granted PE as
    `qstat -r` prints them: absent, none)."""
    return {"users": j.user, "queues": j.partition, "hosts": j.node_list,
            "projects": j.account, "pes": j.pe}.get(scope)


def _first_rules(s: SgeQuotaSet, jobs: list[JobStatus],
                 groups: Mapping[str, Mapping[str, list[str]]]) -> list[int | None]:
    """The rule of `s` each running job is counted under: the first that matches it."""
    scopes = ("users", "queues", "hosts", "projects", "pes")
    return [next((k for k, r in enumerate(s.rules) if _rule_binds(
        r, {x: _theirs(j, x) for x in scopes}, groups)), None) for j in jobs]


_MEMORY = ("h_vmem", "s_vmem", "h_data", "s_data", "mem_free", "m_mem_free", "virtual_free",
           "mem_total")


def _say(name: str, x: float) -> str:
    """An amount of complex `name` as Grid Engine writes it (memory in G)."""
    return f"{x / 2**30:.4g}G" if name in _MEMORY else f"{x:g}"


def _host_value(name: str, node: Node | None) -> float | None:
    """Complex `name`'s value on a host (qhost -F): num_proc, mem_total, a load value, a
    host consumable (what it has); None: not known here."""
    if node is None:
        return None
    return (node.host_values or {}).get(name, (node.consumables_total or {}).get(name))


def _dynamic(expr: str, node: Node | None) -> float | None:
    """A dynamic limit (sge_resource_quota(5): a sum of weights and `$complex[*weight]`
    terms, `$num_proc*2`) on host `node`; None where a term is not known or not read."""
    total, sign = 0.0, 1.0
    for tok in re.split(r"([+-])", expr.replace(" ", "")):
        if tok in ("+", "-"):
            sign = 1.0 if tok == "+" else -1.0
            continue
        m = re.fullmatch(r"(?:\$(\w+)(?:\*([0-9]+(?:\.[0-9]*)?))?|([0-9]+(?:\.[0-9]*)?))", tok)
        if not m:
            return None
        if m.group(3):
            total += sign * float(m.group(3))
            continue
        x = _host_value(m.group(1), node)
        if x is None:
            return None
        total += sign * x * float(m.group(2) or 1)
    return total


def _no_limit(name: str, raw: str) -> bool:
    """Whether limit `name=raw` says no limit: INFINITY, or a number that is a mark of none
    (Grid Engine's 4294967295, INT_MAX): past any count of slots (`limit_count`), one of
    the marks exactly for an amount (a memory in bytes may pass 2^31)."""
    text = raw.strip()
    if text.lower() in UNLIMITED:
        return True
    if not ascii_digits(text):
        return False
    return limit_count(text) is None if name == "slots" else not_set_mark(text)


def _job_asks(name: str, req: Req, complexes: Mapping[str, SgeComplex], slots: int
              ) -> float:
    """What the job asks of consumable `name` over `slots` slots: its request per slot
    times them (consumable YES), once (JOB, HOST); a default it does not ask included."""
    x = (dict(req.consumables) | dict(req.own)).get(name, 0.0)
    cx = complexes.get(name)
    return x if cx is not None and cx.per != "slot" else x * slots


@dataclass
class _Bound:
    """The rule of a set that binds the job in one queue instance, and what it counts."""

    what: str
    need_slots: int
    each_host: bool
    jobs: list[JobStatus]
    mine: str
    node: Node | None
    texts: Mapping[str, str] = field(default_factory=dict)  # the job's `-l NAME=TEXT`
    kinds: Mapping[str, str] = field(default_factory=dict)  # complex types (qconf -sc)


def _one_limit(b: _Bound, name: str, raw: str, req: Req | None,
               complexes: Mapping[str, SgeComplex] | None, now: datetime,
               part_max: dict[str, float]) -> tuple[str | None, float, str | None, str | None]:
    """How one limit (`slots=8`, `h_vmem=64G`, `slots=$num_proc*2`) of a binding rule
    takes the job: (why never, seconds to wait, what is said of it, what is not checked)."""
    on_host = " on a host" if b.each_host else ""
    if "$" in raw:
        if not b.each_host:
            return None, 0.0, None, f"{b.what}: {name}={raw} (a host's own value) not " \
                "counted here: a dynamic limit needs an expanded host list ({})"
        limit = _dynamic(raw, b.node)
        if limit is None:
            return None, 0.0, None, f"{b.what}: {name}={raw} not counted here (the " \
                "host's value of it is not read)"
    else:
        if _no_limit(name, raw):  # INFINITY, or a mark of none (4294967295): it binds nothing
            return None, 0.0, None, None
        if name != "slots" and amount(raw) is None:  # a string or boolean complex
            why, skip = _text_limit(b, name, raw.strip(), complexes)
            return why, 0.0, None, skip
        limit = float(raw) if name == "slots" and ascii_digits(raw) else \
            None if name == "slots" else amount(raw)
        if limit is None:
            return None, 0.0, None, f"{b.what}: {name}={raw} not counted here (not a " \
                "number)"
    if name == "slots":
        need = float(b.need_slots)

        def used(j: JobStatus) -> float:
            return float(j.cpus or 1)
    else:
        if complexes is None or req is None:
            return None, 0.0, None, f"{b.what}: {name}={raw} not counted here (the " \
                "complexes, qconf -sc, not read)"
        if name not in complexes:  # not consumable: the request is held to it as asked
            asked = (dict(req.consumables) | dict(req.own)).get(name)
            if asked is not None and asked > limit:
                return (f"{b.what}: the job asks {name}={_say(name, asked)}, above its "
                        f"limit of {_say(name, limit)}", 0.0, None, None)
            return None, 0.0, None, None
        need = _job_asks(name, req, complexes, b.need_slots)
        if not need:
            return None, 0.0, None, None
        if any(j.shared_use is None for j in b.jobs):
            return None, 0.0, None, f"{b.what}: {name}={raw} not counted here (what " \
                "the running jobs take of it is not read)"

        def used(j: JobStatus) -> float:
            return (j.shared_use or {}).get(name, 0.0)
    of = "" if name == "slots" else f" of {name}"
    asks = f"the job's {b.need_slots} slot{'s' if b.need_slots > 1 else ''}{on_host} " \
        f"{'are' if b.need_slots > 1 else 'is'}" if name == "slots" \
        else f"the job's {_say(name, need)}{of}{on_host} is"
    if need > limit:
        return f"{b.what}: {asks} above its limit of {_say(name, limit)}", 0.0, None, None
    wait = _room_after(b.jobs, used, need, limit, now, part_max)  # type: ignore[arg-type]
    if wait is None or wait <= 0:
        return None, 0.0, None, None
    held = sum(used(j) for j in b.jobs)
    total = f"{limit:g} slots" if name == "slots" else f"{_say(name, limit)}{of}"
    return None, wait, (f"{b.what}: {b.mine} running jobs hold {_say(name, held)} of its "
                        f"{total}{on_host}; the job's "
                        f"{b.need_slots if name == 'slots' else _say(name, need)} fit once "
                        "enough of them end"), None


def job_texts(spec: JobSpec, bools: Collection[str] | None = None) -> dict[str, str]:
    """A Grid Engine job's requests of string and boolean complexes as its script asks
    them (`-l arch=lx-amd64`, `-l exclusive=true`, `-l ssd`: TRUE), by complex name;
    `bools`: the site's BOOL complexes, whose 1 and 0 are TRUE and FALSE (None: not read,
    any request of 1 or 0 taken as one)."""
    out: dict[str, str] = {}
    if arch := sge_arch(spec.constraints.architecture):
        out["arch"] = arch
    key = spec.metadata.get("sge_exclusive")
    if spec.constraints.exclusive and isinstance(key, str) and key:
        out[key] = "true"
    for d in spec.unknown:
        if d.dialect == "sge" and d.option.startswith("-l "):
            name, eq, value = (d.value or "").partition("=")
            value = value.strip()
            boolean = value in ("0", "1") and (bools is None or name in bools)
            if name == d.option[3:] and (amount(value) is None or boolean):
                out[name] = value if eq else "true"
    return out


def site_bools(snap: SiteSnapshot) -> list[str] | None:
    """The names of a Grid Engine site's BOOL complexes (qconf -sc); None: not read."""
    table = snap.sge_complex_names
    return None if table is None else [n for n, c in table.items() if c.type == "BOOL"]


def bool_misread(spec: JobSpec, snap: SiteSnapshot) -> str | None:
    """Why no queue of a Grid Engine site takes the job: it asks a BOOL complex of the
    site's (qconf -sc) a value that is no BOOL (`-l ssd=yes`); None: it asks none so."""
    table = snap.sge_complex_names or {}
    for name, value in job_texts(spec, site_bools(snap)).items():
        if name in table and table[name].type == "BOOL" and ge_bool(value) is None:
            return (f"the job's -l {name}={value} is no value of {name}, a BOOL complex in "
                    f"qconf -sc: Grid Engine takes TRUE, FALSE (any case), 1 or 0")
    return None


def _text_limit(b: _Bound, name: str, raw: str,
                complexes: Mapping[str, SgeComplex] | None) -> tuple[str | None, str | None]:
    """How a limit of a string or boolean complex (`arch=lx-amd64`, `ssd=true`) takes the
    job: (why never, what is not checked). Grid Engine holds a job's request of such a
    complex to the limit's value as to a queue's (relop ==, the request's wildcards and
    `|` alternatives matched against it); a job not asking it is not bound by it."""
    boolean = raw.lower() in ("true", "false")
    if boolean and (complexes is None or name in complexes):
        why = "the complexes, qconf -sc, not read: whether it is consumable is not " \
            "known" if complexes is None else "a consumable of boolean value in qconf -sc, " \
            "as an exclusive complex is: what the running jobs hold of it is not read"
        return None, f"{b.what}: {name}={raw} not checked here ({why})"
    asked = b.texts.get(name)
    if asked is None:
        return None, None
    # a CSTRING or HOST complex's limit matches in any case, as a queue's value does
    kind = b.kinds.get(name)
    admitted = text_admits(asked, raw, "BOOL" if boolean else kind if kind in (
        "CSTRING", "HOST", "RESTRING") else "STRING")
    if admitted is None:
        return None, f"{b.what}: {name}={raw} not checked here (the job asks " \
            f"{name}={asked}, which Grid Engine reads as no {'BOOL' if boolean else 'string'})"
    if admitted:
        return None, None
    return (f"{b.what}: the job asks {name}={asked}, which the limit {name}={raw} does not "
            "admit: Grid Engine never starts it under this rule"), None


def _quota_misses(s: SgeQuotaSet, attrs: dict[str, str | None], slots: int, per_host: int,
                  snap: SiteSnapshot, firsts: list[int | None],
                  groups: Mapping[str, Mapping[str, list[str]]], now: datetime,
                  part_max: dict[str, float], req: Req | None = None,
                  node: Node | None = None, texts: Mapping[str, str] | None = None
                  ) -> tuple[str | None, float, str | None, str | None]:
    """How set `s` binds the job of `attrs` (on one host, `node`): (why it never fits,
    else None; seconds to wait for room (0: none); what is said of the wait; what is not
    checked). `firsts`: the rule each of the site's running jobs is counted under."""
    for i, rule in enumerate(s.rules):
        binds = _rule_binds(rule, attrs, groups)
        if binds is None:
            return None, 0.0, None, f"{_rule_text(s, i, rule)}: names a host group or " \
                "access list whose members are not known here"
        if not binds:
            continue
        each_host = "hosts" in rule.filters and rule.filters["hosts"].each
        same = [k for k, f in rule.filters.items() if f.each]  # each apart: the job's
        jobs = [j for j, first in zip(snap.running, firsts, strict=True) if first == i
                and all(_theirs(j, k) == attrs.get(k) for k in same)]
        mine = "your" if "users" in rule.filters and rule.filters["users"].each else "its"
        b = _Bound(_rule_text(s, i, rule), per_host if each_host else slots, each_host,
                   jobs, mine, node, texts or {},
                   {n: c.type for n, c in (snap.sge_complex_names or {}).items()})
        waits: list[tuple[float, str]] = []
        unchecked: list[str] = []
        names = full_names(snap)
        for written, raw in rule.limits.items():  # a limit may name a shortcut (`s=8`)
            name = names.get(written, written)
            why, wait, said, skip = _one_limit(b, name, raw, req, snap.sge_complexes, now,
                                               part_max)
            if why:
                return why, 0.0, None, None
            if skip:
                unchecked.append(skip)
            if wait > 0:
                waits.append((wait, said or ""))
        longest = max(waits, default=(0.0, None))
        return None, longest[0], longest[1], "; ".join(unchecked) or None
    return None, 0.0, None, None


def _quota_checks(spec: JobSpec, p: Partition, hosts: list[str], slots: int,
                  per_host: int, snap: SiteSnapshot, now: datetime,
                  part_max: dict[str, float], out: SgeQueueLimits,
                  req: Req | None = None) -> None:
    """What the enabled resource quota sets make of the job in queue `p` on `hosts`."""
    pe = spec.metadata.get("sge_pe")
    base = {"users": snap.user, "projects": sge_project(spec),
            "pes": pe if isinstance(pe, str) and pe else None, "queues": p.name}
    never: dict[str, str] = {}
    waits: dict[str, tuple[float, str]] = {}
    by_host = any("hosts" in r.filters for q in snap.sge_quotas or [] for r in q.rules)
    running = snap.running
    groups = _quota_groups(snap)
    texts = job_texts(spec, site_bools(snap))
    by_name = {n.name: n for n in snap.nodes} if by_host else {}
    firsts = [_first_rules(s, running, groups) if s.enabled else []
              for s in snap.sge_quotas or []]
    for h in hosts if by_host and hosts else [""]:
        attrs = {**base, "hosts": h or None}
        for s, first in zip(snap.sge_quotas or [], firsts, strict=True):
            if not s.enabled:
                continue
            why, wait, said, unchecked = _quota_misses(s, attrs, slots, per_host, snap,
                                                       first, groups, now, part_max, req,
                                                       by_name.get(h), texts)
            if unchecked:
                out.not_checked.append(unchecked)
            if why:
                never[h] = why
                break
            if wait > waits.get(h, (0.0, ""))[0]:
                waits[h] = (wait, said or "")
    if not by_host or not hosts:  # one answer for every host
        never = {h: never[""] for h in hosts} if "" in never and hosts else never
        waits = {h: waits[""] for h in hosts} if "" in waits and hosts else waits
    if never and len(never) == len(hosts or [""]):
        out.restricted.setdefault(p.name, []).append(next(iter(never.values())))
        return
    if never:
        out.never_hosts.setdefault(p.name, set()).update(never)
        out.notes.setdefault(p.name, []).append(
            f"queue {p.name}: passed over on {', '.join(sorted(never))}: "
            + next(iter(never.values())))
    ready = [h for h in hosts or [""] if h not in never and h not in waits]
    if not ready and waits:
        h = min(waits, key=lambda x: waits[x][0])
        out.waits.setdefault(p.name, []).append(Wait(waits[h][0], waits[h][1]))


# why a queue instance whose qtype lacks BATCH never runs the job
_NO_BATCH = ("takes no batch jobs (its qtype, qconf -sq, is INTERACTIVE or NONE there): "
             "a qsub job is never scheduled to it")


def project_misses(p: Partition, hosts: list[str], project: str | None) -> set[str]:
    """The hosts of `p` that never run a job of `project` (None: of none): their
    instance's `projects` lists others only, or its `xprojects` names it."""
    allowed, denied = p.projects_by_host or {}, p.xprojects_by_host or {}
    return {h for h in hosts if (h in allowed and project not in allowed[h])
            or (project is not None and project in denied.get(h, ()))}


def _project_said(project: str | None) -> str:
    return (f"its projects / xprojects, qconf -sq, do not take project {project}"
            if project else "takes only the jobs of the projects it lists (projects, qconf "
            "-sq), and the job names none: give one with -P")


def sge_queue_limits(spec: JobSpec, cfg: SiteConfig, snap: SiteSnapshot,
                     parts: list[Partition], members: Mapping[str, list[str]],
                     fit: Collection[str], slots: int, per_host: int, now: datetime,
                     part_max: dict[str, float], req: Req | None = None) -> SgeQueueLimits:
    """The resource quotas and calendars of a Grid Engine site, for a job of `slots`
    slots (`per_host` on one host), in each of `parts` (on its `members` that can run it,
    `fit`); `req`: what it asks, as the site's complexes take it (its consumables
    against a quota's limits of them)."""
    out = SgeQueueLimits()
    if cfg.scheduler != "sge":
        return out
    if snap.sge_quotas is None and not spec.reservation \
            and (why := snap.limits_unread.get("resource quotas")):
        out.not_checked.append(f"resource quotas ({why})")
    zone = site_zone(cfg, snap)
    # a job of an advance reservation (-ar) is neither bound by the quotas nor counted
    quotas = bool(snap.sge_quotas) and not spec.reservation
    texts = job_texts(spec, site_bools(snap))
    if misread := bool_misread(spec, snap):
        for p in parts:
            out.refused.setdefault(p.name, []).append(misread)
        return out
    for name, asked in texts.items():  # a string request GE would not read: not compared
        if ge_bool(asked) is None:
            try:
                parse_expression(asked)
            except ExpressionError as e:
                out.not_checked.append(f"-l {name}: {e}")
    project = sge_project(spec)
    for p in parts:
        hosts = [h for h in members.get(p.name, []) if h in fit]
        for missed, why in ((set(p.no_batch_hosts or ()) & set(hosts), _NO_BATCH),
                            (project_misses(p, hosts, project), _project_said(project))):
            if not missed:
                continue
            if len(missed) == len(hosts):
                out.refused.setdefault(p.name, []).append(f"queue {p.name} {why}")
                break
            out.never_hosts.setdefault(p.name, set()).update(missed)
            out.notes.setdefault(p.name, []).append(
                f"queue {p.name}: its instances on {_few(missed)} never run the job ("
                f"{why}): passed over")
            hosts = [h for h in hosts if h not in missed]
        if p.name in out.refused:
            continue
        if missed := forced_misses(spec, snap, p, hosts):  # FORCED complexes not asked
            if len(missed) == len(hosts):
                out.refused.setdefault(p.name, []).append(forced_said(p, missed, snap))
                continue
            out.never_hosts.setdefault(p.name, set()).update(missed)
            out.notes.setdefault(p.name, []).append(forced_said(p, missed, snap, True))
            hosts = [h for h in hosts if h not in missed]
        if hosts and (unmatched := value_misses(spec, snap, p, hosts, texts)):
            if len(unmatched) == len(hosts):  # string or boolean values the job's -l miss
                out.refused.setdefault(p.name, []).append(value_said(p, unmatched))
                continue
            out.never_hosts.setdefault(p.name, set()).update(unmatched)
            out.notes.setdefault(p.name, []).append(value_said(p, unmatched, True))
            hosts = [h for h in hosts if h not in unmatched]
        if quotas:
            _quota_checks(spec, p, hosts, slots, per_host, snap, now, part_max, out, req)
        wall = spec.resources.walltime_s or p.max_time_s
        _calendar_misses(p, hosts, float(wall) if wall else None, snap, now, zone, out)
    out.not_checked = list(dict.fromkeys(out.not_checked))
    return out
