"""Slurm reservations as they bear on a job: the one it names (refused, bound to its nodes,
waiting for its start, ending the job at its end), the MAGNETIC ones that take it without
being named, and the others, whose nodes are held as by a running job until the job could
start there. Pure code."""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import datetime, timedelta, timezone, tzinfo

from .config import SiteConfig
from .dialects.outputs_common import compact_hostlist, expand_hostlist
from .dialects.slurm_script import parse_slurm_time
from .model import JobSpec, JobState, JobStatus, SiteSnapshot, hms
from .model import Reservation as SlurmReservation
from .placement_fit import NEVER_ROOM, aware, node_reserved, node_usable
from .placement_limits import Wait
from .placement_sim import RESERVATION_HOLD
from .placement_time import plus_seconds

_RESV_END = ("Slurm runs a job of a reservation inside it and ends the job at the "
             "reservation's end (after the site's ResvOverRun, if set); a FLEX reservation "
             "lets it run on")


def _reservation_end(spec: JobSpec, cfg: SiteConfig, snap: SiteSnapshot) -> datetime | None:
    """The end of the (not FLEX) Slurm reservation a job names, where known: the job must
    end by then (Slurm's reservation guide: a job of a reservation is contained in it)."""
    if not spec.reservation or cfg.scheduler != "slurm" or snap.reservations is None:
        return None
    r = next((x for x in snap.reservations if x.name == spec.reservation), None)
    if r is None or r.end is None or "FLEX" in r.flags:
        return None
    return aware(r.end)


def _past_reservation_end(spec: JobSpec, snap: SiteSnapshot, now: datetime, end: datetime
                          ) -> str | None:
    """Why a job's walltime can never fit what is left of its reservation, else None."""
    r = next(x for x in snap.reservations or [] if x.name == spec.reservation)
    opens = max(now, aware(r.start)) if r.start is not None else now
    wall = spec.resources.walltime_s
    if not wall or plus_seconds(opens, wall) <= end:
        return None
    left = max(0.0, (end - opens).total_seconds())
    return (f"walltime {hms(wall)} runs past reservation {r.name}'s end at "
            f"{end:%Y-%m-%d %H:%M} ({hms(left)} of it left from "
            f"{'now' if opens == now else f'its start at {opens:%H:%M}'}): {_RESV_END}")


def _named_reservation(spec: JobSpec, cfg: SiteConfig, snap: SiteSnapshot, now: datetime
                       ) -> tuple[list[str], set[str] | None, Wait | None]:
    """A Slurm job's `--reservation`, where the site's reservations are known: why sbatch
    refuses it (no such reservation, or not for this user or account), the nodes it is
    bound to (None: any; FLEX lets it use others too) and the wait for the reservation to
    start (FLEX lets it start before)."""
    name = spec.reservation
    if not name or cfg.scheduler != "slurm" or snap.reservations is None:
        return [], None, None
    r = next((x for x in snap.reservations if x.name == name), None)
    if r is None:
        return [f"reservation '{name}' not found (site has: "
                f"{', '.join(x.name for x in snap.reservations) or 'none'})"], None, None
    if r.end is not None and aware(r.end) <= now:
        return [f"reservation '{name}' ended at {aware(r.end):%Y-%m-%d %H:%M}"], None, None
    refused = _resv_refusals(r, snap.user, spec.account or cfg.default_account)
    groups = cfg.metadata.get("groups")  # the user's Unix groups, where the site says
    if r.groups is not None and isinstance(groups, list) and not set(r.groups) & set(groups):
        refused.append(f"reservation '{name}' is not open to your groups ({', '.join(groups)};"
                       f" its groups: {', '.join(r.groups)})")
    if refused:
        return refused, None, None
    flex = "FLEX" in r.flags
    hosts = None if flex else {h for e in r.nodes for h in expand_hostlist(e)}
    wait = None
    if r.start is not None and aware(r.start) > now and not flex:
        wait = Wait((aware(r.start) - now).total_seconds(),
                    f"reservation {name} starts at {aware(r.start):%Y-%m-%d %H:%M}: its jobs "
                    "start no sooner")
    return [], hosts, wait


def _resv_refusals(r: SlurmReservation, user: str | None, account: str | None,
                   *, unknown_open: bool = True) -> list[str]:
    """Why reservation `r` is not open to `user` of `account` (its Users and Accounts, a
    `-name` denying); [] when it is. Who is not known passes (`unknown_open`) or not."""
    refused = []
    for who, allowed, what in ((user, r.users, "users"), (account, r.accounts, "accounts")):
        if allowed is None:
            continue
        if who is None:
            if not unknown_open:
                refused.append(f"reservation '{r.name}' is for {what} {', '.join(allowed)}; "
                               f"the job's {what[:-1]} is not known here")
            continue
        denied = {a[1:] for a in allowed if a.startswith("-")}
        granted = [a for a in allowed if not a.startswith("-")]
        if who in denied or (granted and who not in granted):
            refused.append(f"reservation '{r.name}' is not open to {who} (its {what}: "
                           f"{', '.join(allowed)})")
    return refused


def _magnetic(spec: JobSpec, cfg: SiteConfig, snap: SiteSnapshot, now: datetime
              ) -> list[SlurmReservation]:
    """The MAGNETIC Slurm reservations running now that are open to the job's user and
    account, for a job that names no reservation: Slurm considers it for them as if it had
    named one (`Flags=MAGNETIC`), so their reserved nodes take it."""
    if spec.reservation or cfg.scheduler != "slurm" or not snap.reservations:
        return []
    account = spec.account or cfg.default_account
    groups = cfg.metadata.get("groups")  # the user's Unix groups, where the site says
    return [r for r in snap.reservations if "MAGNETIC" in r.flags
            and (aware(r.start) <= now if r.start is not None else r.state == "ACTIVE")
            and (r.end is None or aware(r.end) > now)
            and not _resv_refusals(r, snap.user, account, unknown_open=False)
            # one for groups: open only when the user's groups are known to hold one
            and (r.groups is None or isinstance(groups, list) and bool(set(r.groups)
                                                                      & set(groups)))]


def _magnetic_open(snap: SiteSnapshot, magnetic: list[SlurmReservation]) -> SiteSnapshot:
    """`snap` with the nodes of `magnetic` reservations no longer marked reserved (the job
    may run there as one of theirs); a node down or drained stays so."""
    hosts = {h for r in magnetic for e in r.nodes for h in expand_hostlist(e)}
    if not hosts or not snap.nodes:
        return snap
    nodes = []
    for n in snap.nodes:
        if n.name in hosts and node_reserved(n):
            words = [w for w in re.split(r"\+", n.state.lower().replace("$", ""))
                     if w and w not in ("reserved", "resv")]
            n = n.model_copy(update={"state": "+".join(words) or "idle"})
        nodes.append(n)
    return snap.model_copy(update={"nodes": nodes})


def _reservations_held(spec: JobSpec, snap: SiteSnapshot, now: datetime,
                       magnetic: Collection[str] = (), zone: tzinfo | None = None
                       ) -> tuple[SiteSnapshot, list[str]]:
    """`snap` with the nodes of the reservations the job is not in held as by a running
    job, from now until the job could start there: past the end of each reservation it
    could not end before (a job of no time limit never can), one after another (Slurm
    starts no job that would overlap one; `--time-min` lets it lower the limit to fit).
    The job is in those it names and in the `magnetic` ones (names) open to it. And a note
    for each reservation yet to start that holds nodes so. A recurring one repeats on the
    cluster's clock, `zone` (None: the engine's, as its times are read)."""
    named = {q.strip() for q in (spec.queue or "").split(",") if q.strip()}
    parts_of = {n.name: n.partitions for n in snap.nodes}
    at_host: dict[str, list[SlurmReservation]] = {}
    for r in snap.reservations or []:
        if r.name == spec.reservation or r.name in magnetic or r.end is None \
                or aware(r.end) <= now:
            continue
        for h in (h for e in r.nodes for h in expand_hostlist(e)):
            if not named or named & set(parts_of.get(h, ())):  # else the job cannot use it
                at_host.setdefault(h, []).append(r)
    time_min = next((parse_slurm_time(d.value or "") for d in spec.unknown
                     if d.dialect == "slurm" and d.option == "--time-min"), None)
    held: dict[str, datetime] = {}
    given: dict[tuple[str, ...], int | None] = {}  # by a node's partitions
    limits: dict[str, set[int | None]] = {}  # the reservations that hold: the job's limits
    lowered: dict[str, tuple[int, datetime]] = {}  # those it fits before by --time-min
    never: dict[str, str] = {}  # nodes a recurring or floating one never leaves room on
    recurs_to: dict[str, datetime] = {}  # each one's latest gap the job fits in
    free_from: dict[tuple[tuple[int, ...], int | None, int | None],
                    tuple[datetime | None, list[str], tuple[str, datetime] | None]] = {}
    for h, rs in at_host.items():
        limit = spec.resources.walltime_s
        if not limit:
            key = tuple(parts_of.get(h, ()))
            if key not in given:
                given[key] = _limit_given(snap, named, key)
            limit = given[key]
        least = min(limit, time_min) if limit and time_min else limit
        which = (tuple(id(r) for r in rs), limit, least)
        if which not in free_from:
            free_from[which] = _free_from(rs, now, limit, least, zone)
        t, touched, fits_before = free_from[which]
        for name in touched:
            limits.setdefault(name, set()).add(limit)
        if fits_before is not None:
            lowered[fits_before[0]] = (limit or 0, fits_before[1])
        if t is None:
            never[h] = touched[-1]
        elif t > now:
            held[h] = t
            for name in touched:
                recurs_to[name] = max(t, recurs_to.get(name, t))
    said: list[str] = []
    for r in snap.reservations or []:
        if r.name in never.values():
            continue  # said below
        if r.name in limits and r.start is not None and r.end is not None \
                and aware(r.start) > now:
            known = sorted(x for x in limits[r.name] if x)
            limit = f"a time limit of {hms(known[-1])}" if known and None not in \
                limits[r.name] else "no time limit"
            flags = f" ({','.join(r.flags)})" if r.flags else ""
            recurs = _recurrence(r)
            after = f"; it recurs ({recurs}): the first gap between its windows long enough " \
                f"for the job opens at {recurs_to[r.name]:%Y-%m-%d %H:%M}, so Slurm starts " \
                "it there no sooner" if recurs and r.name in recurs_to else \
                ", so Slurm starts it there only after it ends"
            said.append(f"reservation {r.name}{flags} takes {','.join(r.nodes)} from "
                        f"{aware(r.start):%Y-%m-%d %H:%M} to {aware(r.end):%Y-%m-%d %H:%M}: "
                        f"the job, of {limit}, would run into it{after}")
        elif r.name in limits and "MAINT" in r.flags and r.end is not None \
                and (r.start is None or aware(r.start) <= now):  # a maintenance under way
            mine = [h for h, rs in at_host.items() if r in rs and h in held]
            said.append(f"reservation {r.name} ({','.join(r.flags)}) holds "
                        f"{compact_hostlist(mine)[0]} in maintenance until "
                        f"{aware(r.end):%Y-%m-%d %H:%M}: it takes no job before then")
    for name in dict.fromkeys(never.values()):
        r = next(x for x in snap.reservations or [] if x.name == name)
        hosts = compact_hostlist([h for h, x in never.items() if x == name])[0]
        known = sorted(x for x in limits.get(name, set()) if x)
        limit = f"a time limit of {hms(known[-1])}" if known and None not in \
            limits.get(name, {None}) else "no time limit"
        how = f"its start floats {hms((aware(r.start) - now).total_seconds())} ahead " \
            "(TIME_FLOAT)" if "TIME_FLOAT" in r.flags and r.start is not None else \
            f"it recurs ({_recurrence(r)}) from {aware(r.start or now):%Y-%m-%d %H:%M}"
        said.append(f"reservation {name} takes {hosts}: {how}, and the job, of {limit}, "
                    "never fits between its windows, so Slurm never starts it there")
    for name, (limit, start) in lowered.items():
        said.append(f"--time-min {hms(time_min or 0)}: Slurm may lower the job's time limit "
                    f"{hms(limit)} to end before reservation {name} starts at "
                    f"{start:%Y-%m-%d %H:%M}")
    if not (held or never) or not snap.nodes:
        return snap, said
    jobs, nodes = list(snap.jobs), []
    for n in snap.nodes:
        if n.name in never:  # out for this job, as a node whose reservation never ends
            nodes.append(n.model_copy(update={"state": f"{n.state}+{NEVER_ROOM}"}))
            continue
        if n.name not in held:
            nodes.append(n)
            continue
        # held as by a job (a node reserved now takes jobs again once it ends; one in
        # maintenance too, when a MAINT reservation that ends holds it); one down or
        # drained stays so
        state = _out_of_maintenance(n.state) if any(
            "MAINT" in r.flags for r in at_host[n.name]) else n.state
        nodes.append(n.model_copy(update={
            "cpus_allocated": n.cpus, "gpus_allocated": n.gpus,
            "state": "allocated" if node_usable(n.model_copy(update={"state": state}), True)
            else n.state}))
        jobs.append(JobStatus(native_id=f"{RESERVATION_HOLD}{n.name}", state=JobState.RUNNING,
                              node_list=n.name, cpus=n.cpus, gpus=n.gpus, nodes=1,
                              started_at=now, walltime_s=max(1, int(
                                  (held[n.name] - now).total_seconds()))))
    return snap.model_copy(update={"nodes": nodes, "jobs": jobs}), said


# Slurm's recurring reservations (scontrol(1) Flags=): each occurrence as far after the one
# shown; WEEKDAY and WEEKEND repeat daily on those days only
_REPEAT_S = {"HOURLY": 3600, "DAILY": 86400, "WEEKDAY": 86400, "WEEKEND": 86400,
             "WEEKLY": 7 * 86400}
_ON_DAYS = {"WEEKDAY": frozenset(range(5)), "WEEKEND": frozenset((5, 6))}
# how far recurring occurrences are laid out: past two weeks the pattern only repeats, so
# a job that found no gap by then never does
_RECUR_SPAN_S = 15 * 86400


def _recurrence(r: SlurmReservation) -> str | None:
    """The flag by which `r` repeats (DAILY ...), or TIME_FLOAT (its start stays as far
    ahead of now as it was: it is never reached), else None."""
    return next((f for f in r.flags if f in _REPEAT_S or f == "TIME_FLOAT"), None)


def _occurrences(r: SlurmReservation, now: datetime, zone: tzinfo | None = None
                 ) -> list[tuple[datetime, datetime]]:
    """The windows `r` holds its nodes in, from the one shown (a reservation of no start
    shown: from now), recurring ones laid out `_RECUR_SPAN_S` ahead. Slurm moves a daily
    or weekly one on by calendar days on the controller's clock (`zone`; None: the
    engine's), so it keeps its hours across a change to or from summer time, and WEEKDAY
    and WEEKEND are that clock's days, not UTC's; HOURLY moves on by the hour."""
    start = aware(r.start) if r.start is not None else now
    end = aware(r.end) if r.end is not None else start
    step = _REPEAT_S.get(_recurrence(r) or "")
    if step is None:
        return [(start, end)]
    if step < 86400:
        return [(start + timedelta(seconds=k * step), end + timedelta(seconds=k * step))
                for k in range(_RECUR_SPAN_S // step + 1)]
    days = _ON_DAYS.get(_recurrence(r) or "")
    first, last = _wall(start, zone), _wall(end, zone)
    shifted = ((first + timedelta(days=k * step // 86400), last + timedelta(days=k * step // 86400))
               for k in range(_RECUR_SPAN_S // step + 1))
    return [(_instant(a, zone), _instant(b, zone)) for a, b in shifted
            if days is None or a.weekday() in days]


def _wall(at: datetime, zone: tzinfo | None) -> datetime:
    """`at` as the clock of `zone` (None: the engine's) reads it, without a zone."""
    return (at.astimezone(zone) if zone is not None else at.astimezone()).replace(tzinfo=None)


def _instant(wall: datetime, zone: tzinfo | None) -> datetime:
    """The UTC time the clock of `zone` (None: the engine's) shows as `wall`."""
    return (wall.replace(tzinfo=zone) if zone is not None else wall).astimezone(timezone.utc)


def _free_from(rs: list[SlurmReservation], now: datetime, limit: int | None,
               least: int | None, zone: tzinfo | None = None
               ) -> tuple[datetime | None, list[str], tuple[str, datetime] | None]:
    """When a job of time limit `limit` (`least` where --time-min lowers it) may start on
    a node the reservations `rs` hold: at the end of each window it could not end before,
    in turn (None: never, a recurring or floating one leaves no gap long enough); the
    names of those it waits for, and the one it fits before only by lowering its limit
    (with that one's start)."""
    windows = sorted(((a, b, r) for r in rs for a, b in _occurrences(r, now, zone)),
                     key=lambda w: (w[0], w[1]))
    endless = any(_recurrence(r) for r in rs)
    t, touched, lowered = now, [], None
    for a, b, r in windows:
        if b <= t:
            continue
        if least and plus_seconds(t, least) <= a and (r.start is not None or a > now):
            if limit and plus_seconds(t, limit) > a:
                lowered = (r.name, a)
            return t, touched, lowered
        if "TIME_FLOAT" in r.flags:  # its start moves on as time does
            return None, [*touched, r.name], None
        t = b
        if r.name not in touched:
            touched.append(r.name)
    return (None if endless else t), touched, lowered


def _out_of_maintenance(state: str) -> str:
    """A Slurm node state without the MAINT (MAINTENANCE) its maintenance reservation sets
    (and sinfo's `$`): what the node is once that reservation ends."""
    words = [w for w in re.split(r"\+", state.lower().replace("$", ""))
             if w and w not in ("maint", "maintenance")]
    return "+".join(words) or "idle"


def _limit_given(snap: SiteSnapshot, named: set[str], parts: Collection[str]
                 ) -> int | None:
    """The time limit (s) Slurm gives a job that sets none on a node of partitions `parts`:
    its partition's DefaultTime, else its MaxTime; the longest of those it may run in (the
    ones it names, `named`, else any); None where one of them gives none."""
    limits = [p.default_time_s or p.max_time_s for p in snap.partitions
              if p.name in parts and (not named or p.name in named)]
    return None if not limits or None in limits else max(x for x in limits if x)


def reservations_waited_for(said: list[str], snap: SiteSnapshot, hosts: Collection[str]
                            ) -> list[str]:
    """Of `said` (`_reservations_held`'s lines), those of the reservations holding some of
    `hosts` (the chosen partition's nodes): what a job that waits with no limit in use
    waits for."""
    mine = set(hosts)
    held = {f"reservation {r.name} " for r in snap.reservations or []
            if mine & {h for e in r.nodes for h in expand_hostlist(e)}}
    return [s for s in said if s.startswith(tuple(held))] if held else []
