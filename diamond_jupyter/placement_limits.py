"""Limits on what is running or queued already: a Slurm QOS's group and per-user limits
(GrpTRES, GrpJobs, MaxTRESPerUser, MaxJobsPerUser, the submit limits) and the user's
associations (default QOS, the QOS allowed), PBS queues' per-user and queued-job limits.

A limit the running jobs exhaust makes a job wait until enough of them end (their ends
from their start and time limit); a submit limit already reached refuses the submit. What
one job alone can never pass (a QOS's MaxTRES, MaxWall and MinTRES, a partition's or
queue's limits on a job's memory and totals) is `_qos_misses`'s and `_limit_misses`'s: it
never runs. Pure code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from heapq import heapify, heappop, heappush
from math import floor
from typing import TypeVar

from diamond_jupyter.wording import agree, quantity

from .digits import ascii_digits
from .model import (
    UNREPORTED_TRES_MINS_USED,
    Association,
    JobSpec,
    JobState,
    JobStatus,
    LsfLimit,
    Partition,
    QosLimits,
    QueueLimit,
    SiteSnapshot,
    UserAcl,
    hms,
)
from .placement_fit import SLURM_WORDS, Req, Words, aware, time_limit
from .placement_sim import held_reason

T = TypeVar("T")
DEFAULT_RUNTIME_S = 3600.0  # a running job whose end cannot be told (no start, no limit)

# Slurm's pending reasons by the TRES a limit is on (squeue's REASON column)
_GRP_REASON = {"cpu": "QOSGrpCpuLimit", "node": "QOSGrpNodeLimit", "gres/gpu": "QOSGrpGRES",
               "mem": "QOSGrpMemLimit"}
_USER_REASON = {"cpu": "QOSMaxCpuPerUserLimit", "node": "QOSMaxNodePerUserLimit",
                "gres/gpu": "QOSMaxGRESPerUser", "mem": "QOSMaxMemoryPerUser"}
UNITS = {"cpu": ("CPU", "CPUs"), "node": ("node", "nodes"), "gres/gpu": ("GPU", "GPUs"),
         "mem": ("MB memory", "MB memory")}


def counted(n: float, key: str, table: dict[str, tuple[str, str]] = UNITS) -> str:
    """`n` of the resource `key` in the words of `table` (singular, plural), in the
    number `n` takes: "1 node", "2 CPUs"; a key not in the table is its own word."""
    one, many = table.get(key, (key, key))
    return quantity(n, one, many)


@dataclass(frozen=True)
class Wait:
    """A job must wait `seconds` from now for room under a limit; `why` says which."""

    seconds: float
    why: str


def end_in(j: JobStatus, now: datetime, part_max: dict[str, float]) -> float:
    """Seconds from now until running job `j` ends at the latest (its time limit, else its
    partition's MaxTime); a job of unknown start counts DEFAULT_RUNTIME_S."""
    if j.started_at is None:
        return DEFAULT_RUNTIME_S
    limit = j.walltime_s or part_max.get(j.partition or "") or DEFAULT_RUNTIME_S
    return max(0.0, (aware(j.started_at) - now).total_seconds() + float(limit))


def _room_after(jobs: list[JobStatus], used: Callable[[JobStatus], int], need: int,
                limit: int, now: datetime, part_max: dict[str, float]) -> float | None:
    """When `need` more fits under `limit` as the running `jobs` (each holding `used(j)`)
    end, earliest first: seconds from now; 0 when it fits now; None when it never does."""
    held = sum(used(j) for j in jobs)
    if held + need <= limit:
        return 0.0
    if need > limit:
        return None
    for j in sorted(jobs, key=lambda j: end_in(j, now, part_max)):
        held -= used(j)
        if held + need <= limit:
            return end_in(j, now, part_max)
    return None


def _own_waiting(q: QosLimits, snap: SiteSnapshot) -> list[JobStatus]:
    """The user's waiting jobs under QOS `q` that nothing but their turn keeps back: older
    than a job submitted now, each starts before it under a per-user limit."""
    return [j for j in under_qos(q, snap) if j.state == JobState.PENDING
            and j.user == snap.user and not held_reason(j.reason)]


def _own_turn(running: list[JobStatus], ahead: list[JobStatus], most: int, now: datetime,
              part_max: dict[str, float]) -> float | None:
    """When a new job of the user starts under a limit of `most` running jobs a user: after
    the `ahead` waiting jobs, first come first, each run for its time limit as the `running`
    ones end (seconds from now); None when the limit lets none run."""
    if most < 1:
        return None
    ends = sorted(end_in(j, now, part_max) for j in running)
    heapify(ends)
    t = 0.0
    for j in [*sorted(ahead, key=lambda j: j.submitted_at or now), None]:
        while len(ends) >= most:
            t = max(t, heappop(ends))
        if j is None:
            return t
        heappush(ends, t + float(j.walltime_s or part_max.get(j.partition or "")
                                 or DEFAULT_RUNTIME_S))
    return t


def _tres_of(j: JobStatus) -> dict[str, int]:
    return {"cpu": j.cpus or 0, "node": j.nodes or 1, "gres/gpu": j.gpus or 0,
            "mem": (j.memory_mb or 0) * (j.nodes or 1)}


def _need(req: Req, jobs: list[JobStatus]) -> dict[str, int]:
    """What the job adds to a limit's TRES in use. Memory only where every running job it
    counts with says what it holds (squeue's tres-alloc was read): else it is not known
    what they hold, and memory is not counted (as before that was read)."""
    need = {"cpu": req.nodes * req.cpn, "node": req.nodes, "gres/gpu": req.nodes * req.gpn}
    if all(j.memory_mb is not None for j in jobs):
        need["mem"] = req.nodes * req.mem
    return need


def _partition_qos(snap: SiteSnapshot) -> dict[str, str]:
    return {p.name: p.qos for p in snap.partitions if p.qos}


def under_qos(q: QosLimits, snap: SiteSnapshot) -> list[JobStatus]:
    """The queue's jobs whose use counts against QOS `q`: those run under it, and every
    job of a partition whose QOS it is (a partition QOS limits each job there)."""
    by_part = _partition_qos(snap)
    return [j for j in snap.jobs if j.qos == q.name or any(
        by_part.get(x) == q.name for x in (j.partition or "").split(","))]


def qos_wait(req: Req, p: Partition, job_qos: str | None, snap: SiteSnapshot,
             now: datetime, part_max: dict[str, float]) -> Wait | None:
    """How long the job waits in partition `p` for room under the group and per-user
    limits of its QOS and the partition's, as the jobs running under them end; None when
    there is room now (or nothing is known of those limits)."""
    known = snap.qos or {}
    waits: list[Wait] = []
    for name in dict.fromkeys(x for x in (p.qos, job_qos) if x):
        q = known.get(name)
        if q is None:
            continue
        running = [j for j in under_qos(q, snap) if j.state == JobState.RUNNING]
        mine = [j for j in running if snap.user and j.user == snap.user]
        need = _need(req, running)
        for jobs, caps, what, codes, whose in (
                (running, q.grp_tres, "GrpTRES", _GRP_REASON, "running jobs under it hold"),
                (mine if snap.user else None, q.max_tres_per_user, "MaxTRESPerUser",
                 _USER_REASON, "your running jobs under it hold")):
            if jobs is None:
                continue
            for tres, most in caps.items():
                if tres not in need or not need[tres]:
                    continue
                held = sum(_tres_of(j)[tres] for j in jobs)
                at = _room_after(jobs, lambda j, t=tres: _tres_of(j)[t], need[tres], most,
                                 now, part_max)
                if at:
                    waits.append(Wait(at, (
                        f"QOS {name}'s {what} {tres}={most} is in use: {whose} "
                        f"{counted(held, tres)}, the job needs {need[tres]}: it waits until enough "
                        f"of them end ({codes[tres]})")))
        minutes = job_minutes(req, p)[0]
        for tres, most in q.grp_tres_run_mins.items() if minutes else ():
            asks = need.get(tres, 0) * minutes
            if not asks or asks > most:
                continue  # one job alone above it: qos_minutes_held says so
            at = _run_mins_room_after(running, tres, asks, most, now, part_max)
            if at:
                waits.append(Wait(at, (
                    f"QOS {name}'s GrpTRESRunMins {tres}={most}: its running jobs have "
                    f"{_still_to_run(q.tres_run_mins, running, tres, now, part_max)} "
                    f"{tres}-minutes still to run, the job "
                    f"asks {asks:.0f}: it waits as they run down "
                    f"({_QOS_RUN_MINS.get(tres, 'QOSGrpTRESRunMinutes')})")))
        for jobs, most, what, code, whose in (
                (running, q.grp_jobs, "GrpJobs", "QOSGrpJobsLimit", "jobs run under it"),
                (mine if snap.user else None, q.max_jobs_per_user, "MaxJobsPerUser",
                 "QOSMaxJobsPerUserLimit", "of your jobs run under it")):
            if jobs is None or most is None:
                continue
            at = _room_after(jobs, lambda j: 1, 1, most, now, part_max)
            ahead = _own_waiting(q, snap) if at and jobs is mine else []
            if at and ahead:  # the user's older jobs held by the limit take its turns first
                at = _own_turn(jobs, ahead, most, now, part_max)
                waits.append(Wait(at, (
                    f"QOS {name}'s {what} is {most} and {len(jobs)} {whose}, "
                    f"{quantity(len(ahead), 'older job')} of yours waiting under it ahead: it "
                    f"starts when they have had their turns ({code})")))
            elif at:
                waits.append(Wait(at, (
                    f"QOS {name}'s {what} is {most} and {len(jobs)} {whose}: it waits "
                    f"until {'one' if len(jobs) + 1 - most == 1 else len(jobs) + 1 - most} "
                    f"of them end{'s' if len(jobs) + 1 - most == 1 else ''} ({code})")))
    if not waits:
        return None
    last = max(w.seconds for w in waits)
    return Wait(last, "; ".join(w.why for w in waits))


def sge_user_jobs_wait(snap: SiteSnapshot, now: datetime, part_max: dict[str, float]
                       ) -> Wait | None:
    """How long a new Grid Engine job waits for the cell's `maxujobs` (qconf -ssconf): the
    user's running jobs, in any queue, leave room for one more as they end, the user's
    older waiting jobs first; None when there is room now (or no limit, or no user)."""
    most = snap.sge_max_user_jobs
    if not most or not snap.user:
        return None
    mine = [j for j in snap.running if j.user == snap.user]
    at = _room_after(mine, lambda j: 1, 1, most, now, part_max)
    if not at:
        return None
    ahead = [j for j in snap.jobs if j.state == JobState.PENDING and j.user == snap.user
             and not held_reason(j.reason)]
    if ahead:  # the user's older jobs the limit holds take their turns first
        return Wait(_own_turn(mine, ahead, most, now, part_max) or 0.0, (
            f"the cell's maxujobs is {most} and {len(mine)} of your jobs run, "
            f"{quantity(len(ahead), 'older job')} of yours waiting ahead: it starts when they "
            "have had their turns"))
    return Wait(at, f"the cell's maxujobs is {most} and {len(mine)} of your jobs run: it "
                    "waits until one of them ends")


def sge_submit_refused(snap: SiteSnapshot) -> str | None:
    """Why qsub refuses a new job (one job, an array too) at a Grid Engine cell: the
    global configuration's max_u_jobs reached by the user's active jobs, or max_jobs by
    everyone's; None where it admits it (or the limits or the user are not known)."""
    active = {j.native_id.split(".")[0]: j for j in snap.jobs if not j.state.terminal}
    mine = [j for j in active.values() if snap.user and j.user == snap.user]
    for most, held, whose, key in ((snap.sge_max_u_jobs, len(mine), "your", "max_u_jobs"),
                                   (snap.sge_max_jobs, len(active), "the cell's", "max_jobs")):
        if most and held >= most:
            return (f"qsub refuses the job: {whose} active jobs (waiting or running) are "
                    f"{held}, and the cell's {key} (qconf -sconf) admits {most}: it can be "
                    "submitted once one of them ends")
    return None


def job_count(j: JobStatus) -> int:
    """How many jobs a queue entry is for submit limits: a pending array's listing
    (`123_[1-5,9%2]`) holds each task still to run, and Slurm counts each one."""
    m = re.search(r"_\[([0-9,-]+)(?:%[0-9]+)?\]$", j.native_id)
    if m is None:
        return 1
    total = 0
    for part in m.group(1).split(","):
        lo, _, hi = part.partition("-")
        if ascii_digits(lo) and (not hi or ascii_digits(hi)):
            total += int(hi) - int(lo) + 1 if hi else 1
    return max(total, 1)


# what a submit of several jobs is, said with their count: a job array's tasks, or a Slurm
# heterogeneous job's components (each a job against the limits: heterogeneous_jobs.html)
ARRAY_PARTS = "the job array's {n} tasks"
HET_PARTS = "the heterogeneous job's {n} components"


def _until(have: int, adds: int, most: int, parts: str = ARRAY_PARTS) -> str:
    """When a submit of `adds` jobs (`parts`: what they are) is taken where `have` of the
    `most` allowed are queued or running."""
    if adds == 1:
        return "the submit is refused until one ends"
    many = parts.format(n=adds)
    if adds > most:
        return (f"{many} count as {quantity(adds, 'job')}, more than the {most} it allows: the "
                "submit is refused whatever ends")
    n = have + adds - most
    return (f"{many} count as {quantity(adds, 'job')}: the submit is refused until {n} of them "
            f"end{'s' if n == 1 else ''}")


def qos_submit_refused(p: Partition, job_qos: str | None, snap: SiteSnapshot,
                       adds: int = 1, parts: str = ARRAY_PARTS,
                       adds_under: Callable[[str], int] | None = None) -> list[str]:
    """Why sbatch refuses the job now: its QOS (or the partition's) holds too many queued
    and running jobs for its MaxSubmitJobsPerUser (the user's) or GrpSubmitJobs
    (everyone's) to take `adds` more (`parts`: a job array's tasks, or a heterogeneous
    job's components, count one each; `adds_under`: how many by the QOS's name, where
    that differs from one QOS to the other)."""
    out = []
    for name in dict.fromkeys(x for x in (p.qos, job_qos) if x):
        q = (snap.qos or {}).get(name)
        if q is None:
            continue
        if adds_under is not None:
            adds = adds_under(name)
        jobs = [j for j in under_qos(q, snap) if not j.state.terminal]
        every = sum(job_count(j) for j in jobs)
        mine = sum(job_count(j) for j in jobs if snap.user and j.user == snap.user)
        if snap.user and (most := q.max_submit_jobs_per_user) is not None \
                and mine + adds > most:
            out.append(f"QOS {name}'s MaxSubmitJobsPerUser is {most} and you have "
                       f"{quantity(mine, 'job')} queued or running under it: "
                       f"{_until(mine, adds, most, parts)} "
                       "(QOSMaxSubmitJobPerUserLimit)")
        if (most := q.grp_submit_jobs) is not None and every + adds > most:
            out.append(f"QOS {name}'s GrpSubmitJobs is {most} and "
                       f"{quantity(every, 'job')} {agree(every)} queued or running under it: "
                       f"{_until(every, adds, most, parts)} "
                       "(QOSGrpSubmitJobsLimit)")
    return out


def _assocs_for(snap: SiteSnapshot, account: str | None, partition: str
                ) -> list[Association]:
    """The user's associations a job of `account` (None: not said) in `partition` may
    run under: one of that partition where there is one, else the account's own."""
    got = [a for a in snap.associations or [] if a.level == "user"
           and (account is None or a.account == account)]
    exact = [a for a in got if a.partition == partition]
    return exact or [a for a in got if a.partition is None]


def job_qos(spec_qos: str | None, p: Partition, snap: SiteSnapshot, account: str | None
            ) -> tuple[str | None, str | None]:
    """The QOS the job runs under in `p` and a note when it is not the job's own: the one
    it names, else its association's default QOS (when the user's associations that may
    take it agree on one); None when not known."""
    if spec_qos:
        return spec_qos, None
    defaults = {a.default_qos for a in _assocs_for(snap, account, p.name) if a.default_qos}
    if len(defaults) != 1:
        return None, None
    qos = defaults.pop()
    return qos, (f"the job names no QOS: it runs under its association's default QOS {qos}")


def assoc_misses(spec_qos: str | None, p: Partition, snap: SiteSnapshot,
                 account: str | None) -> list[str]:
    """Why the user's associations refuse the job here: no association of its account, or
    a QOS it names that none of them may use (sbatch: "Invalid qos specification")."""
    if snap.associations is None:
        return []
    assocs = _assocs_for(snap, account, p.name)
    if not assocs:
        if account is None:
            return []
        mine = sorted({a.account for a in snap.associations if a.account
                       and a.level == "user"})
        return [f"you have no association with account '{account}' for partition "
                f"{p.name} (your accounts: {', '.join(mine) or 'none'}): sbatch refuses it "
                "(Invalid account or account/partition combination)"]
    allowed = [a.qos for a in assocs]
    if spec_qos and all(q is not None and spec_qos not in q for q in allowed):
        names = sorted({x for q in allowed for x in q or []})
        return [f"QOS '{spec_qos}' is not one your association may use here (its QOS: "
                f"{', '.join(names)}): sbatch refuses it (Invalid qos specification)"]
    return []


# Slurm's pending reasons for association limits, by the TRES a limit is on
_ASSOC_GRP = {"cpu": "AssocGrpCpuLimit", "node": "AssocGrpNodeLimit", "gres/gpu": "AssocGrpGRES",
              "mem": "AssocGrpMemLimit"}
_ASSOC_JOB = {"cpu": "AssocMaxCpuPerJobLimit", "node": "AssocMaxNodePerJobLimit",
              "gres/gpu": "AssocMaxGRESPerJob", "mem": "AssocMaxMemPerJob"}


def _chain(snap: SiteSnapshot, account: str | None, partition: str
           ) -> list[Association]:
    """The association a job of `account` in `partition` runs under, then the account
    lines above it, nearest first (as far as the listing shows them); empty when the
    account cannot be told (the user has several and the job names none)."""
    mine = _assocs_for(snap, account, partition)
    if len({a.account for a in mine}) != 1:
        return []
    first = mine[0]
    accounts = {a.account: a for a in snap.associations or [] if a.level == "account"}
    out, name = [first], first.account
    while name in accounts and accounts[name] not in out:
        out.append(accounts[name])
        name = accounts[name].parent
    return out


def _assoc_name(a: Association, user: str | None) -> str:
    if a.level == "account":
        return f"account {a.account}'s association"
    return f"your association (user {user}, account {a.account}" + (
        f", partition {a.partition})" if a.partition else ")")


def _in_scope(j: JobStatus, a: Association, below: set[str | None], user: str | None
              ) -> bool:
    """Does job `j` count against association `a`: a user association, the user's jobs
    of its account (and partition); an account's, the jobs of it and the accounts under
    it the listing shows (`below`). A job whose account is not known counts only for the
    user's own association."""
    if a.level == "user":
        return user is not None and j.user == user and (
            j.account is None or j.account == a.account) and (
            a.partition is None or a.partition in (j.partition or "").split(","))
    return j.account is not None and j.account in below


def _nearest(chain: list[Association], get: Callable[[Association], T | None]
             ) -> tuple[Association, T] | None:
    """The per-user and per-job limits a parent sets hold below it unless a nearer
    association sets its own: the nearest that sets one."""
    for a in chain:
        value = get(a)
        if value is not None:
            return a, value
    return None


def assoc_job_misses(req: Req, p: Partition, account: str | None, snap: SiteSnapshot
                     ) -> list[str]:
    """Why the job alone can never run under its association: above a MaxTRES (per job)
    or a GrpTRES of it or of an account above it."""
    chain = _chain(snap, account, p.name)
    job = {"cpu": req.nodes * req.cpn, "node": req.nodes, "gres/gpu": req.nodes * req.gpn,
           "mem": req.nodes * req.mem}
    out = []
    got = _nearest(chain, lambda a: a.max_tres_per_job or None)
    if got is not None:
        a, caps = got
        for tres, most in caps.items():
            if job.get(tres) and job[tres] > most:
                out.append(f"needs {counted(job[tres], tres)} in all, {_assoc_name(a, snap.user)} "
                           f"allows {most} a job (MaxTRES {tres}={most}): it would never start "
                           f"({_ASSOC_JOB[tres]})")
    for a in chain:
        for tres, most in a.grp_tres.items():
            if job.get(tres) and job[tres] > most:
                out.append(f"needs {counted(job[tres], tres)} in all, {_assoc_name(a, snap.user)} "
                           f"allows {most} at once (GrpTRES {tres}={most}): it would never "
                           f"start ({_ASSOC_GRP[tres]})")
    minutes, asked = job_minutes(req, p)
    got = _nearest(chain, lambda a: a.max_tres_mins_per_job or None)
    for tres, most in got[1].items() if got and minutes else ():
        if (asks := job.get(tres, 0) * minutes) > most:
            out.append(f"needs {asks:.0f} {tres}-minutes ({counted(job[tres], tres)} for "
                       f"{asked}), {_assoc_name(got[0], snap.user)} allows {most} a job "
                       f"(MaxTRESMins {tres}={most}): Slurm keeps it pending "
                       f"({_ASSOC_JOB_MINS.get(tres, 'AssocMaxTRESMinutesPerJob')})")
    return out


def job_minutes(req: Req, p: Partition) -> tuple[float, str]:
    """The minutes the job runs at most in partition `p` (its time limit there; asking
    none, the partition's DefaultTime is already its walltime, else Slurm gives it the
    MaxTime) and how to say them; 0 when neither is known."""
    limit = time_limit(req, p.max_time_s) or req.walltime
    if limit:
        return limit / 60.0, f"{limit / 60.0:.0f} min"
    if p.max_time_s:
        return p.max_time_s / 60.0, (f"{p.max_time_s / 60.0:.0f} min, partition {p.name}'s "
                                     "MaxTime: it asks no time limit")
    return 0.0, ""


def assoc_minutes_held(req: Req, p: Partition, account: str | None, snap: SiteSnapshot
                       ) -> list[str]:
    """Why Slurm would hold the job under its association's TRES-minutes: its walltime x
    TRES passes what is left of a GrpTRESMins (usage decays, if the site has a half-life:
    not known when) or alone passes a GrpTRESRunMins, of it or an account above it. A job
    asking no time limit is taken at the time Slurm gives it (`job_minutes`). Where what
    was used is not known, only a job past the whole GrpTRESMins is said."""
    chain = _chain(snap, account, p.name)
    job = {"cpu": req.nodes * req.cpn, "node": req.nodes, "gres/gpu": req.nodes * req.gpn,
           "mem": req.nodes * req.mem}
    out = []
    minutes, asked = job_minutes(req, p)
    for a in chain if minutes else ():
        for tres, most in a.grp_tres_run_mins.items():
            if (asks := job.get(tres, 0) * minutes) > most:
                out.append(
                    f"needs {asks:.0f} {tres}-minutes ({counted(job[tres], tres)} for "
                    f"{asked}), {_assoc_name(a, snap.user)}'s GrpTRESRunMins "
                    f"{tres}={most} allows less at once: it would never start "
                    f"({_ASSOC_RUN_MINS.get(tres, 'AssocGrpTRESRunMinutes')})")
        for tres, most in a.grp_tres_mins.items():
            asks = job.get(tres, 0) * minutes
            code = _ASSOC_MINS.get(tres, "AssocGrpTRESMinutes")
            if not a.tres_mins_used_known:
                if asks > most:
                    out.append(
                        f"needs {asks:.0f} {tres}-minutes ({counted(job[tres], tres)} for "
                        f"{asked}), more than {_assoc_name(a, snap.user)}'s whole "
                        f"GrpTRESMins {tres}={most}: Slurm holds it ({code}) for good")
                continue
            used = a.tres_mins_used.get(tres, 0)
            if asks and asks > most - used:
                out.append(
                    f"needs {asks:.0f} {tres}-minutes ({counted(job[tres], tres)} for "
                    f"{asked}), {_assoc_name(a, snap.user)}'s GrpTRESMins "
                    f"{tres}={most} has {max(most - used, 0)} left ({used} used): Slurm "
                    f"holds it ({code}) until usage decays, or for good if it does not")
    return out


def qos_minutes_held(req: Req, p: Partition, job_qos: str | None, snap: SiteSnapshot
                     ) -> list[str]:
    """Why Slurm would hold the job under the TRES-minutes of its QOS or the partition's:
    its walltime x TRES passes what is left of a GrpTRESMins (usage decays unless the QOS
    has NoDecay; with DenyOnLimit sbatch refuses it) or alone passes a GrpTRESRunMins. A
    job asking no time limit is taken at the time Slurm gives it (`job_minutes`); where
    what was used is not known, only a job past the whole GrpTRESMins is said."""
    job = {"cpu": req.nodes * req.cpn, "node": req.nodes, "gres/gpu": req.nodes * req.gpn,
           "mem": req.nodes * req.mem}
    minutes, asked = job_minutes(req, p)
    out = []
    for name in dict.fromkeys(x for x in (p.qos, job_qos) if x) if minutes else ():
        q = (snap.qos or {}).get(name)
        if q is None:
            continue
        flags = {f.lower() for f in q.flags}
        for tres, most in q.grp_tres_run_mins.items():
            if (asks := job.get(tres, 0) * minutes) > most:
                out.append(
                    f"needs {asks:.0f} {tres}-minutes ({counted(job[tres], tres)} for "
                    f"{asked}), QOS {name}'s GrpTRESRunMins {tres}={most} allows "
                    "less at once: it would never start "
                    f"({_QOS_RUN_MINS.get(tres, 'QOSGrpTRESRunMinutes')})")
        for tres, most in q.grp_tres_mins.items():
            asks = job.get(tres, 0) * minutes
            used = q.tres_mins_used.get(tres, 0)
            code = _QOS_MINS.get(tres, "QOSGrpTRESMinutes")
            held = (f"sbatch refuses it (DenyOnLimit; {code})" if "denyonlimit" in flags
                    else f"Slurm holds it ({code})")
            if not q.tres_mins_used_known:
                if asks > most:
                    out.append(
                        f"needs {asks:.0f} {tres}-minutes ({counted(job[tres], tres)} for "
                        f"{asked}), more than QOS {name}'s whole GrpTRESMins {tres}={most}: "
                        f"{held} for good")
                continue
            if not asks or asks <= most - used:
                continue
            out.append(
                f"needs {asks:.0f} {tres}-minutes ({counted(job[tres], tres)} for "
                f"{asked}), QOS {name}'s GrpTRESMins {tres}={most} has "
                f"{max(most - used, 0)} left ({used} used): {held} " + (
                    "until an administrator raises the limit or resets its usage (NoDecay)"
                    if "nodecay" in flags else "until usage decays, or for good if it does "
                    "not"))
    return out


def minutes_used_unread(p: Partition, job_qos: str | None, account: str | None,
                        snap: SiteSnapshot) -> list[tuple[str, str, str]]:
    """The GrpTRESMins the job meets in `p` (its QOS, the partition's, its association and
    the accounts above it) whose use is not known, so the job was checked against each
    whole limit only: (whose: "qos" or "associations", its holder, the limit), one a
    limit; `minutes_unread_said` words them once every partition is seen."""
    out = []
    for name in dict.fromkeys(x for x in (p.qos, job_qos) if x):
        q = (snap.qos or {}).get(name)
        if q is not None and q.grp_tres_mins and not q.tres_mins_used_known:
            out.append(("qos", f"QOS {name}", _tres_said(q.grp_tres_mins)))
    for a in _chain(snap, account, p.name):
        if a.grp_tres_mins and not a.tres_mins_used_known:
            out.append(("associations", _assoc_name(a, snap.user),
                        _tres_said(a.grp_tres_mins)))
    return out


def minutes_unread_said(unread: list[tuple[str, str, str]], snap: SiteSnapshot) -> list[str]:
    """`minutes_used_unread`'s limits as said under the table: one line a limit whose use
    the site's interface does not report; one line, with the reason, for all those whose
    use could not be read for the same reason (SiteSnapshot.tres_mins_unread)."""
    who = snap.unreported.get(UNREPORTED_TRES_MINS_USED, "the site")
    out: list[str] = []
    by_reason: dict[str, list[tuple[str, str]]] = {}
    for whose, holder, caps in unread:
        if why := snap.tres_mins_unread.get(whose):
            by_reason.setdefault(why, []).append((holder, caps))
        else:
            out.append(f"{who} does not report what {holder} has used of its GrpTRESMins "
                       f"{caps}: the job is checked against the whole limit only")
    for why, limits in by_reason.items():
        if len(limits) == 1:
            said = f"{limits[0][0]} has used of its GrpTRESMins {limits[0][1]}"
        else:
            holders = [h for h, _ in limits]
            said = (f"{', '.join(holders[:-1])} and {holders[-1]} have used of their "
                    f"GrpTRESMins ({'; '.join(c for _, c in limits)})")
        out.append(f"what {said} could not be read ({why}): the job is checked against "
                   f"{'the' if len(limits) == 1 else 'each'} whole limit only")
    return out


def _tres_said(caps: dict[str, int]) -> str:
    return ",".join(f"{tres}={most}" for tres, most in caps.items())


_QOS_MINS = {"cpu": "QOSGrpCPUMinutesLimit", "node": "QOSGrpNodeMinutes",
             "gres/gpu": "QOSGrpGRESMinutes", "mem": "QOSGrpMemoryMinutes"}
_QOS_RUN_MINS = {"cpu": "QOSGrpCPURunMinutesLimit", "node": "QOSGrpNodeRunMinutes",
                 "gres/gpu": "QOSGrpGRESRunMinutes", "mem": "QOSGrpMemoryRunMinutes"}
_QOS_JOB_MINS = {"cpu": "QOSMaxCpuMinutesPerJobLimit", "node": "QOSMaxNodeMinutesPerJob",
                 "gres/gpu": "QOSMaxGRESMinutesPerJob", "mem": "QOSMaxMemoryMinutesPerJob"}
_ASSOC_MINS = {"cpu": "AssocGrpCPUMinutesLimit", "node": "AssocGrpNodeMinutesLimit",
               "gres/gpu": "AssocGrpGRESMinutes", "mem": "AssocGrpMemMinutes"}
_ASSOC_RUN_MINS = {"cpu": "AssocGrpCPURunMinutesLimit", "node": "AssocGrpNodeRunMinutes",
                   "gres/gpu": "AssocGrpGRESRunMinutes", "mem": "AssocGrpMemRunMinutes"}
_ASSOC_JOB_MINS = {"cpu": "AssocMaxCpuMinutesPerJobLimit", "node": "AssocMaxNodeMinutesPerJob",
                   "gres/gpu": "AssocMaxGRESMinutesPerJob", "mem": "AssocMaxMemMinutesPerJob"}


def _still_to_run(reported: dict[str, int], jobs: list[JobStatus], tres: str,
                  now: datetime, part_max: dict[str, float]) -> int:
    """The running jobs' TRES-minutes still to run under a GrpTRESRunMins: as the site
    reports them, else (slurmrestd reports none of a QOS's) as their ends in the queue
    give them."""
    if tres in reported:
        return reported[tres]
    return round(sum(_tres_of(j)[tres] * max(0.0, end_in(j, now, part_max)) / 60.0
                     for j in jobs))


def _run_mins_room_after(jobs: list[JobStatus], tres: str, asks: float, most: int,
                         now: datetime, part_max: dict[str, float]) -> float:
    """Seconds from now until the running `jobs`' TRES-minutes still to run (each holding
    its TRES to its planned end) leave room for `asks` under `most`; 0 for now."""
    held = [(_tres_of(j)[tres], end_in(j, now, part_max)) for j in jobs]
    held = [(n, end) for n, end in held if n and end > 0]

    def left_at(t: float) -> float:
        return sum(n * (end - t) / 60.0 for n, end in held if end > t)

    if not held or left_at(0.0) + asks <= most:
        return 0.0
    low, high = 0.0, max(end for _, end in held)
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (low, mid) if left_at(mid) + asks <= most else (mid, high)
    return high


def assoc_wait(req: Req, p: Partition, account: str | None, snap: SiteSnapshot,
               now: datetime, part_max: dict[str, float]) -> Wait | None:
    """How long the job waits for room under its association's limits and those of the
    accounts above it (GrpTRES, GrpJobs of each; the nearest MaxJobs, the user's), as the
    running jobs they count end; None when there is room now or nothing is known."""
    chain = _chain(snap, account, p.name)
    if not chain:
        return None
    running = [j for j in snap.jobs if j.state == JobState.RUNNING]
    need = _need(req, running)
    waits: list[Wait] = []
    below: set[str | None] = set()
    for a in chain:
        below.add(a.account)
        jobs = [j for j in running if _in_scope(j, a, below, snap.user)]
        name = _assoc_name(a, snap.user)
        for tres, most in a.grp_tres.items():
            if not need.get(tres) or need[tres] > most:
                continue  # one job alone above it: assoc_job_misses says so
            at = _room_after(jobs, lambda j, t=tres: _tres_of(j)[t], need[tres], most,
                             now, part_max)
            if at:
                held = sum(_tres_of(j)[tres] for j in jobs)
                waits.append(Wait(at, (
                    f"{name}'s GrpTRES {tres}={most} is in use: its running jobs hold "
                    f"{counted(held, tres)}, the job needs {need[tres]}: it waits until "
                    f"enough of them end ({_ASSOC_GRP[tres]})")))
        minutes = job_minutes(req, p)[0]
        for tres, most in a.grp_tres_run_mins.items() if minutes else ():
            asks = need.get(tres, 0) * minutes
            if not asks or asks > most:
                continue  # one job alone above it: never (not said here)
            at = _run_mins_room_after(jobs, tres, asks, most, now, part_max)
            if at:
                waits.append(Wait(at, (
                    f"{name}'s GrpTRESRunMins {tres}={most}: its running jobs have "
                    f"{_still_to_run(a.tres_run_mins, jobs, tres, now, part_max)} "
                    f"{tres}-minutes still to run, the job "
                    f"asks {asks:.0f}: it waits as they run down "
                    f"({_ASSOC_RUN_MINS.get(tres, 'AssocGrpTRESRunMinutes')})")))
        if a.grp_jobs is not None:
            at = _room_after(jobs, lambda j: 1, 1, a.grp_jobs, now, part_max)
            if at:
                waits.append(Wait(at, (
                    f"{name}'s GrpJobs is {a.grp_jobs} and {len(jobs)} of its jobs run: it "
                    "waits until one of them ends (AssocGrpJobsLimit)")))
    got = _nearest(chain, lambda a: a.max_jobs)
    if got is not None and snap.user:
        a, most = got
        scope = chain[0]  # each user's jobs under the association the job runs under
        mine = [j for j in running if _in_scope(j, scope, {scope.account}, snap.user)]
        at = _room_after(mine, lambda j: 1, 1, most, now, part_max)
        if at:
            waits.append(Wait(at, (
                f"{_assoc_name(a, snap.user)}'s MaxJobs is {most} and {len(mine)} of your "
                f"jobs run under account {scope.account}: it waits until one of them ends "
                "(AssocMaxJobsLimit)")))
    if not waits:
        return None
    return Wait(max(w.seconds for w in waits), "; ".join(w.why for w in waits))


def assoc_submit_refused(p: Partition, account: str | None, snap: SiteSnapshot,
                         adds: int = 1, parts: str = ARRAY_PARTS) -> list[str]:
    """Why sbatch refuses the job now: its association (or an account above it) holds too
    many queued and running jobs for its GrpSubmitJobs, or the user for the nearest
    MaxSubmitJobs, to take `adds` more (`parts`: what they are, as for
    `qos_submit_refused`)."""
    chain = _chain(snap, account, p.name)
    out: list[str] = []
    if not chain:  # no association to hold it: the queue is not counted
        return out
    live = [j for j in snap.jobs if not j.state.terminal]
    below: set[str | None] = set()
    for a in chain:
        below.add(a.account)
        if a.grp_submit_jobs is None:
            continue
        have = sum(job_count(j) for j in live if _in_scope(j, a, below, snap.user))
        if have + adds > a.grp_submit_jobs:
            out.append(f"{_assoc_name(a, snap.user)}'s GrpSubmitJobs is {a.grp_submit_jobs} "
                       f"and {have} of its jobs {agree(have)} queued or running: "
                       f"{_until(have, adds, a.grp_submit_jobs, parts)} "
                       "(AssocGrpSubmitJobsLimit)")
    got = _nearest(chain, lambda a: a.max_submit_jobs)
    if got is not None and snap.user:
        a, most = got
        scope = chain[0]
        have = sum(job_count(j) for j in live
                   if _in_scope(j, scope, {scope.account}, snap.user))
        if have + adds > most:
            out.append(f"{_assoc_name(a, snap.user)}'s MaxSubmitJobs is {most} and you have "
                       f"{quantity(have, 'job')} queued or running under account {scope.account}: "
                       f"{_until(have, adds, most, parts)} (AssocMaxSubmitJobLimit)")
    return out


PBS_DEFAULT_PROJECT = "_pbs_project_default"  # a PBS Pro job's project when it names none


def _entry(p: Partition, attribute: str, resource: str, scope: str, on: str,
           who: str | None) -> QueueLimit | None:
    """The limit entry that holds for `who` (a user, group or project; None: not known): an
    entry naming it wins over PBS_GENERIC; everyone's (scope "o") is PBS_ALL's."""
    got = [x for x in p.limits if x.attribute == attribute and x.resource == resource
           and x.scope == scope and x.on == on]
    if scope == "o":
        return got[0] if got else None
    if who is None:
        return None
    return next((x for x in got if x.who == who), None) or \
        next((x for x in got if x.who == "PBS_GENERIC"), None)


def _pbs_count(j: JobStatus, resource: str) -> int:
    return 1 if resource == "jobs" else (j.cpus or 0) if resource == "ncpus" else \
        (j.gpus or 0) if resource == "ngpus" else (j.memory_mb or 0) if resource == "mem" \
        else 0


def _pbs_text(x: QueueLimit) -> str:
    name = x.attribute if x.resource == "jobs" else f"{x.attribute}_res.{x.resource}"
    value = f"{x.value}mb" if x.resource == "mem" else str(x.value)
    return f"{name} [{x.scope}:{x.who}={value}]"


_PBS_UNITS = {"jobs": ("job", "jobs"), "ncpus": ("CPU", "CPUs"), "ngpus": ("GPU", "GPUs"),
              "mem": ("MB memory", "MB memory")}


def pbs_limits(p: Partition, need: dict[str, int], snap: SiteSnapshot, now: datetime,
               part_max: dict[str, float], *, group: str | None = None,
               project: str | None = None
               ) -> tuple[list[str], list[str], Wait | None]:
    """A PBS queue's and its server's max_queued / max_run limits (of everyone's jobs, or
    of the user's, the job's group's or its project's) against what is queued and running:
    (why qsub refuses the job now, why it can never run there, how long it waits for
    running jobs to end). `need`: the job's totals ("jobs" 1, "ncpus", "ngpus", "mem");
    `group` and `project`: the job's (None: not known, their limits are not checked)."""
    refused: list[str] = []
    never: list[str] = []
    waits: list[Wait] = []
    if not p.limits:
        return refused, never, None
    live = [j for j in snap.jobs if not j.state.terminal]
    pools = {"queue": [j for j in live if j.partition == p.name], "server": live}
    whose_id = {"o": None, "u": snap.user, "g": group, "p": project}
    for on, pool in pools.items():
        where = f"queue {p.name}'s" if on == "queue" else "the server's"
        for scope, who in whose_id.items():
            jobs = [j for j in pool if scope == "o" or (scope == "u" and j.user == who)
                    or (scope == "g" and j.group == who)
                    or (scope == "p" and (j.account or PBS_DEFAULT_PROJECT) == who)]
            holder = {"o": "", "u": "your ", "g": f"group {who}'s ",
                      "p": f"project {who}'s "}[scope]
            has = {"o": f"the {on} holds", "u": "you have", "g": f"group {who} has",
                   "p": f"project {who} has"}[scope]
            in_it = "in it" if on == "queue" else "on it"
            for resource, asked in need.items():
                if not asked:
                    continue
                x = _entry(p, "max_queued", resource, scope, on, who)
                if x is not None:
                    have = sum(_pbs_count(j, resource) for j in jobs)
                    if have + asked > x.value:
                        refused.append(
                            f"{where} {_pbs_text(x)}: {has} {counted(have, resource, _PBS_UNITS)} "
                            f"queued or running "
                            f"{in_it} and the job adds {asked}: qsub refuses it until some of "
                            "them end")
                x = _entry(p, "max_run", resource, scope, on, who)
                if x is None or (resource == "jobs" and scope == "o" and on == "queue"):
                    continue
                if asked > x.value:
                    never.append(f"needs {counted(asked, resource, _PBS_UNITS)}, {where} "
                                 f"{_pbs_text(x)} allows less "
                                 "running at once")
                    continue
                run = [j for j in jobs if j.state == JobState.RUNNING]
                at = _room_after(run, lambda j, r=resource: _pbs_count(j, r), asked, x.value,
                                 now, part_max)
                if at:
                    held = sum(_pbs_count(j, resource) for j in run)
                    waits.append(Wait(at, f"{where} {_pbs_text(x)}: {holder}running jobs "
                                          f"{in_it} hold {counted(held, resource, _PBS_UNITS)}: "
                                          "it waits until "
                                          "enough of them end"))
    wait = Wait(max(w.seconds for w in waits), "; ".join(w.why for w in waits)) \
        if waits else None
    return refused, never, wait


def lsf_user_misses(p: Partition, snap: SiteSnapshot) -> tuple[list[str], list[str]]:
    """An LSF queue's USERS against the user the probe ran as: (why it refuses the job,
    what cannot be told); nothing when everyone may use it or the user is not known."""
    if p.allowed_users is None or not snap.user:
        return [], []
    me, groups = snap.user, snap.user_groups
    excluded = {n[1:] for n in p.allowed_users if n.startswith("~")}
    if me in excluded:
        return [f"queue {p.name} excludes you ({me}) in its USERS "
                f"({' '.join(p.allowed_users)}): bsub refuses it"], []
    unknown = []
    for name in (n for n in p.allowed_users if not n.startswith("~")):
        group = name.rstrip("/")
        if name in (me, "all"):
            return [], []
        if groups is not None and group in groups:
            if me in groups[group] or "all" in groups[group]:
                return [], []
        elif name.endswith("/"):
            unknown.append(group)
    if unknown:
        return [], [f"queue {p.name} takes the users of {', '.join(unknown)} (USERS), whose "
                     "members are not known here"]
    return [f"you ({me}) are not among queue {p.name}'s USERS ({' '.join(p.allowed_users)})"
            ": bsub refuses it"], []


def _acl_user(entry: str) -> tuple[str, str | None]:
    """A PBS ACL entry `name@host` -> (name, host: None where any host matches)."""
    name, _, host = entry.partition("@")
    return name, (host if host and host != "*" else None)


def queue_user_misses(p: Partition, snap: SiteSnapshot) -> tuple[list[str], list[str]]:
    """A PBS queue's acl_users, a Grid Engine queue's user_lists and xuser_lists, against
    the user the probe ran as: (why the queue refuses the job, what cannot be told)."""
    return user_acl_misses(f"queue {p.name}", p.user_acls or [], snap)


def user_acl_misses(what: str, acls: list[UserAcl], snap: SiteSnapshot
                    ) -> tuple[list[str], list[str]]:
    """Lists of users that `what` (a queue, a Grid Engine project) takes or refuses the
    jobs of, against the user the probe ran as: (why it refuses the job, what cannot be
    told). A user named in a list that refuses is refused (Grid Engine's xuser_lists win
    over its user_lists); where lists that take users exist, a user named in none of them
    is refused. A Unix group (`@group`) or a host (`name@host`) whose match is not known
    here is said, never refused on."""
    if not acls:
        return [], []
    me = snap.user
    said = ", ".join(a.source for a in acls)
    if not me:
        return [], [f"{what} takes or refuses users by {said}; who you are is not known "
                    "here"]
    unsure: list[str] = []
    for acl in (a for a in acls if a.deny):
        if me in acl.users:
            return [f"{what} refuses your jobs: you ({me}) are in its {acl.source}"], []
        if groups := [u for u in acl.users if u.startswith("@")]:
            unsure.append(f"{what} refuses the jobs of groups {', '.join(groups)} "
                          f"({acl.source}); whether you are in one is not known here")
    takes = [a for a in acls if not a.deny]
    if not takes:
        return [], unsure
    hosts: list[str] = []
    for acl in takes:
        for name, host in map(_acl_user, acl.users):
            if name == me and host is None:
                return [], unsure
            if name == me:
                hosts.append(f"{me}@{host}")
    groups = [u for a in takes for u in a.users if u.startswith("@")]
    if hosts or groups:
        return [], unsure + [f"{what} takes the jobs of {', '.join(hosts + groups)} "
                             f"({said}); whether that takes yours (your group or the host "
                             "you submit from) is not known here"]
    listed = "; ".join(f"{a.source}: {', '.join(a.users) or 'none'}" for a in takes)
    return [f"{what} takes the jobs of listed users only and you ({me}) are in none of its "
            f"lists ({listed}): the scheduler refuses it"], unsure


def sge_project(spec: JobSpec) -> str | None:
    """A Grid Engine job's project (`-P`); None where it names none."""
    return next((d.value.strip() for d in spec.unknown if d.dialect == "sge"
                 and d.option == "-P" and d.value and d.value.strip()), None)


def force_share(p: Partition, asked: bool = False) -> int | None:
    """How many jobs may share each CPU of a Slurm partition of OverSubscribe=FORCE[:N], or
    of OverSubscribe=YES[:N] for a job that asks to share (`asked`: --oversubscribe); N
    alone is 4; None when the job gets CPUs of its own."""
    text = (p.oversubscribe or "").upper()
    if not (text.startswith("FORCE") or (asked and text.startswith("YES"))):
        return None
    count = text.partition(":")[2]
    return int(count) if ascii_digits(count) and int(count) > 0 else 4


def shares_by_force(p: Partition) -> bool:
    return (p.oversubscribe or "").upper().startswith("FORCE")


def _jobs_on(snap: SiteSnapshot) -> dict[str, list[JobStatus]]:
    from .dialects.outputs_common import job_hosts

    out: dict[str, list[JobStatus]] = {}
    for j in snap.running:
        try:
            hosts = job_hosts(j.node_list)
        except ValueError:
            hosts = []
        for h in hosts:
            out.setdefault(h, []).append(j)
    return out


def shared_room_now(req: Req, nodes: list, snap: SiteSnapshot, *, force: int | None,
                    own_only: bool, every_job_shares: bool = True) -> list[str]:
    """The nodes among `nodes` (a partition's, that can run the job) where it starts now
    by the sharing rule: `force` jobs to a CPU (OverSubscribe=FORCE:N: a node holds CPUs x
    N of its jobs' CPUs), or `own_only` (`--exclusive=user`: nodes none of whose running
    jobs is another user's, their free CPUs). GPUs and memory are never shared: `--mem=0`
    takes a node none of whose memory is held. Not `every_job_shares` (OverSubscribe=YES:N):
    only the running jobs that asked to share (squeue's OVER_SUBSCRIBE "YES") share their
    CPUs; another's CPUs are its own alone."""
    on = _jobs_on(snap)
    room = []
    for n in nodes:
        jobs = on.get(n.name, [])
        if own_only and any(not snap.user or j.user != snap.user for j in jobs):
            continue
        if force:
            used = sum(-(-(j.cpus or 0) // max(j.nodes or 1, 1))
                       * (1 if every_job_shares or j.shares else force) for j in jobs) \
                if jobs else n.cpus_allocated * (1 if every_job_shares else force)
            cpus_ok = n.cpus * force - used >= (n.cpus if req.whole else req.cpn)
        else:
            cpus_ok = n.cpus - n.cpus_allocated >= (n.cpus if req.whole and not own_only
                                                    else req.cpn)
        if cpus_ok and n.gpus - n.gpus_allocated >= req.gpn and (
                not req.mem or not n.memory_mb or n.memory_mb - n.memory_allocated >= req.mem
        ) and not (req.all_memory and n.memory_allocated):
            room.append(n.name)
    return room if len(room) >= req.nodes else []


def pbs_group(spec: JobSpec, snap: SiteSnapshot) -> str | None:
    """The group a job runs as at a PBS site: the first of its `-W group_list=`, else the
    user's primary group (None: not known)."""
    for d in spec.unknown:
        if d.dialect == "pbs" and d.option == "-W" and (d.value or "").startswith(
                "group_list="):
            first = d.value.partition("=")[2].split(",")[0].split("@")[0].strip()
            if first:
                return first
    return snap.group


def pbs_project(spec: JobSpec, flavor: str | None) -> str | None:
    """A PBS Pro job's project: its `-P`, else the default project; Torque has none."""
    if flavor == "torque":
        return None
    given = next((d.value for d in spec.unknown if d.dialect == "pbs" and d.option == "-P"
                  and d.value), None)
    return given or PBS_DEFAULT_PROJECT


def _lsf_member(name: str, user: str, groups: dict[str, list[str]] | None) -> bool:
    if name.endswith("/"):
        members = (groups or {}).get(name.rstrip("/"), [])
        return user in members or "all" in members
    return name == user


def _freed_at(jobs: list[JobStatus], used: Callable[[JobStatus], int], held: int, need: int,
              most: int, now: datetime, part_max: dict[str, float]) -> float:
    """When `held` (a use the scheduler reports) falls low enough for `need` more under
    `most` as the running `jobs` end (each freeing `used(j)`); the last end when the jobs
    known free too little (others hold the rest)."""
    ends = sorted(jobs, key=lambda j: end_in(j, now, part_max))
    for j in ends:
        held -= used(j)
        if held + need <= most:
            return end_in(j, now, part_max)
    return end_in(ends[-1], now, part_max) if ends else DEFAULT_RUNTIME_S


def lsf_limits(req: Req, slots: int, p: Partition, project: str | None, snap: SiteSnapshot,
               now: datetime, part_max: dict[str, float]) -> tuple[list[str], Wait | None]:
    """An LSF queue's JL/U and the lsb.resources limits `blimits` shows for the user, the
    queue and the job's project (`-P`, the spec's account): (why the job can never run
    there, how long it waits for running jobs to end); `slots`: what the job asks. A limit
    on hosts is not checked (where the job lands is not known); per-user ones only when
    the user is known."""
    never: list[str] = []
    waits: list[Wait] = []
    running = [j for j in snap.jobs if j.state == JobState.RUNNING]
    mine = [j for j in running if snap.user and j.user == snap.user]
    most = p.max_slots_per_user
    if most is not None and snap.user:
        here = [j for j in mine if j.partition == p.name]
        if slots > most:
            never.append(f"needs {quantity(slots, 'slot')}, queue {p.name}'s JL/U allows "
                         f"{quantity(most, 'slot')} of "
                         "a user's running jobs at once")
        elif at := _room_after(here, lambda j: j.cpus or 0, slots, most, now, part_max):
            held = sum(j.cpus or 0 for j in here)
            waits.append(Wait(at, f"queue {p.name}'s JL/U is {quantity(most, 'slot')} and your "
                                  f"running "
                                  f"jobs in it hold {held}: it waits until enough of them end "
                                  "(the user's job slot limit of the queue)"))
    need = {"slots": slots, "jobs": 1, "mem": req.nodes * req.mem}
    for x in snap.lsf_limits or []:
        if x.hosts or not need[x.resource] or not _lsf_applies(x, p, project, snap):
            continue
        whose = f"limit {x.name} (lsb.resources, blimits)"
        if need[x.resource] > x.limit:
            never.append(f"needs {counted(need[x.resource], x.resource, _LSF_UNITS)}, "
                         f"{whose} allows "
                         f"{x.limit}")
            continue
        if x.used + need[x.resource] <= x.limit:
            continue
        scope = [j for j in running if (x.queues is None or j.partition in x.queues) and (
            x.users is None or any(_lsf_member(u, j.user or "", snap.user_groups)
                                   for u in x.users))]
        used = {"slots": lambda j: j.cpus or 0, "jobs": lambda j: 1,
                "mem": lambda j: j.memory_mb or 0}[x.resource]
        at = _freed_at(scope, used, x.used, need[x.resource], x.limit, now, part_max)
        waits.append(Wait(at, f"{whose}: {x.used} of its "
                              f"{counted(x.limit, x.resource, _LSF_UNITS)} {agree(x.used)} "
                              f"in use and the job needs {need[x.resource]}: it waits until "
                              "enough of its jobs end"))
    wait = Wait(max(w.seconds for w in waits), "; ".join(w.why for w in waits)) \
        if waits else None
    return never, wait


_LSF_UNITS = {"slots": ("slot", "slots"), "jobs": ("job", "jobs"),
              "mem": ("MB memory", "MB memory")}


def _lsf_applies(x: LsfLimit, p: Partition, project: str | None, snap: SiteSnapshot) -> bool:
    """Whether a `blimits` limit's consumers (users, queues, projects) take in this job."""
    if x.users is not None and not (snap.user and any(
            _lsf_member(u, snap.user, snap.user_groups) for u in x.users)):
        return False
    if x.queues is not None and p.name not in x.queues:
        return False
    return x.projects is None or project in x.projects


def lsf_host_limits(req: Req, p: Partition, project: str | None, snap: SiteSnapshot,
                    now: datetime, part_max: dict[str, float]
                    ) -> tuple[dict[str, str], dict[str, tuple[str, float]]]:
    """The `blimits` limits on hosts (lsb.resources HOSTS) that take in the job in queue
    `p`: the hosts it can never use there (the limit is below what it asks of one host),
    and the hosts it cannot use now (in use up to the limit), each with why and when
    enough of the jobs running there end. What it asks of a host: its slots on one
    host, one job, its memory on one host."""
    never: dict[str, str] = {}
    full: dict[str, tuple[str, float]] = {}
    need = {"slots": req.cpn, "jobs": 1, "mem": req.mem}
    running = [j for j in snap.jobs if j.state == JobState.RUNNING]
    for x in snap.lsf_limits or []:
        if not x.hosts or not need[x.resource] or not _lsf_applies(x, p, project, snap):
            continue
        whose = f"limit {x.name} on hosts {', '.join(x.hosts)} (lsb.resources, blimits)"
        if need[x.resource] > x.limit:
            for h in x.hosts:
                never[h] = f"needs {counted(need[x.resource], x.resource, _LSF_UNITS)} on a " \
                    "host, " \
                    f"{whose} allows {x.limit}"
            continue
        if x.used + need[x.resource] <= x.limit:
            continue
        on = [j for j in running if set(_exec_hosts(j)) & set(x.hosts)]
        used = {"slots": lambda j: j.cpus or 0, "jobs": lambda j: 1,
                "mem": lambda j: j.memory_mb or 0}[x.resource]
        at = _freed_at(on, used, x.used, need[x.resource], x.limit, now, part_max)
        for h in x.hosts:
            full[h] = (f"{whose}: {x.used} of its {counted(x.limit, x.resource, _LSF_UNITS)} "
                       f"{agree(x.used)} in use and the job needs {need[x.resource]}", at)
    _queue_host_limits(req, p, snap, running, now, part_max, never, full)
    return never, full


def _queue_host_limits(req: Req, p: Partition, snap: SiteSnapshot, running: list[JobStatus],
                       now: datetime, part_max: dict[str, float], never: dict[str, str],
                       full: dict[str, tuple[str, float]]) -> None:
    """An LSF queue's slots on one host: its PJOB_LIMIT (JL/P), at most floor(limit x N)
    on a host of N CPUs, and its HJOB_LIMIT (JL/H), at most that many on any host. A host
    whose PJOB share is below what the job asks of one host is never used (HJOB_LIMIT below
    it rules the whole queue out: `_cpus_cap_miss`); one where the queue's running jobs
    leave too little of either waits for them to end."""
    per, most = p.max_slots_per_processor, p.max_slots_per_host
    if (per is None and most is None) or not req.cpn:
        return
    mine = [j for j in running if (j.partition or "") == p.name]
    for n in snap.nodes:
        if not n.cpus or n.name in never:
            continue
        caps = []
        if per is not None:
            cap = floor(per * n.cpus + 1e-9)
            whose = f"queue {p.name}'s PJOB_LIMIT (JL/P) {per:g} allows {quantity(cap, 'slot')} " \
                f"on {n.name} ({per:g} x its {quantity(n.cpus, 'CPU')})"
            if req.cpn > cap:
                never[n.name] = f"needs {quantity(req.cpn, 'slot')} on a host, {whose}"
                continue
            caps.append((cap, whose))
        if most is not None and req.cpn <= most:
            caps.append((most, f"queue {p.name}'s HJOB_LIMIT (JL/H) allows "
                               f"{quantity(most, 'slot')} on "
                               f"{n.name}"))
        on = [j for j in mine if n.name in _exec_hosts(j)]
        used = sum(_slots_on(j, n.name) for j in on)
        for cap, whose in caps:
            if used + req.cpn > cap and n.name not in full:
                at = _freed_at(on, lambda j, h=n.name: _slots_on(j, h), used, req.cpn, cap,
                               now, part_max)
                full[n.name] = (f"{whose}: its running jobs hold {used} and the job needs "
                                f"{req.cpn}", at)


def _slots_on(j: JobStatus, host: str) -> int:
    """The slots a running LSF job holds on `host` (`4*h1:2*h2`; a bare name: one slot, or
    all of its slots when it runs on that host alone)."""
    parts = [h for h in re.split(r"[\s:]+", j.node_list or "") if h]
    got = 0
    for h in parts:
        m = re.fullmatch(r"([0-9]+)\*(.+)", h)
        count, name = (int(m.group(1)), m.group(2)) if m else (1, h)
        got += count if name == host else 0
    if len(parts) == 1 and got == 1 and j.cpus:
        return j.cpus
    return got


def _exec_hosts(j: JobStatus) -> list[str]:
    """The hosts a running LSF job runs on (`exec_host`: `4*h1:2*h2` or `h1 h2`)."""
    return [re.sub(r"^[0-9]+\*", "", h) for h in re.split(r"[\s:]+", j.node_list or "") if h]


def lsf_slots(req: Req, spec: JobSpec) -> int:
    """The job slots an LSF job asks: its tasks (`-n`) times their CPUs, not the whole of
    the hosts its tasks are spread over."""
    tasks = spec.resources.tasks or req.nodes * req.tpn
    return tasks * req.cpt


def license_misses(spec: JobSpec, snap: SiteSnapshot
                   ) -> tuple[list[str], list[str], list[str]]:
    """Why a Slurm job's `--licenses` (`-L`) keep it from this Slurm site, what of them is
    not checked (the site's licenses not known), and what is said of them: sbatch refuses
    a license the site does not define, or more of one than it has in all (Invalid
    license specification). Entries are `name[:count]` (count 1),
    all of them (`,` or `;`) or any one (`|`, Slurm trying them in the order written), not
    both (sbatch(1): "AND and OR cannot both be used"); a remote license is `name@server`.
    How many are free now: `license_wait`."""
    asked = _licenses_asked(spec)
    if not asked:
        return [], [], []
    said = f"--licenses={asked}"
    if "|" in asked and re.search(r"[,;]", asked):
        return [f"{said}: asks all of some licenses (',') and any one of others ('|') at "
                "once, which Slurm does not take (AND and OR cannot both be used): sbatch "
                "refuses the job (Invalid license specification); ask either all of them, "
                "a,b, or any one, a|b"], [], []
    if snap.licenses is None:
        return [], [f"{said}: the site's licenses are not known (sbatch refuses a license "
                    "the site does not define)"], []
    have = snap.licenses
    any_one = "|" in asked
    misses = []
    for name, wanted in _license_entries(asked):
        if name not in have:
            misses.append(f"license '{name}' is not defined here")
        elif wanted > have[name]:
            misses.append(f"{wanted} of license '{name}' asked, the site has {have[name]} "
                          "in all")
    entries = len(re.split(r"[,;|]", asked))
    if misses and (not any_one or len(misses) == entries):
        known = ", ".join(f"{k} ({v})" for k, v in sorted(have.items())) or "none"
        return [f"{said}: {'; '.join(misses)} (licenses here: {known}): sbatch refuses the "
                "job (Invalid license specification)"], [], []
    if snap.licenses_free is not None:
        return [], [], []  # license_wait says whether it waits for them
    return [], [], [f"{said}: the licenses in use are not read here; if fewer are free the "
                    "job waits for them (Reason=Licenses)"]


# what an LSF rusage[] reserves besides a site's own resources: the built-in load indices
# and the usage's own keywords (GPUs, ngpus*, are read apart)
_LSF_BUILTIN = frozenset(("r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp", "swp",
                          "mem", "swap", "slots", "duration", "decay"))


def lsf_resource_misses(spec: JobSpec, snap: SiteSnapshot) -> tuple[list[str], list[str]]:
    """Why an LSF job's `-R rusage[name=N]` of the site's own resources (licenses and
    the like: `lsf.shared`) keeps it from this LSF site, and what of them is not checked: a
    resource the site does not define (`lsinfo -r`) is refused by LSF; more than any
    instance of a shared one has (`bhosts -s` TOTAL) never starts. Alternatives (`||`):
    refused only when each one is. Where neither is known, said."""
    out_refused: list[str] = []
    unread: list[str] = []
    names, shared = snap.lsf_resource_names, snap.lsf_shared
    for text in _rusages_asked(spec):
        alternatives = [_rusage_asks(alt, spec) for alt in text[len("rusage["):-1].split("||")]
        if not any(alternatives):
            continue
        if names is None and shared is None:
            unread.append(f"-R {text}: the site's shared resources are not known (LSF runs "
                          "no job asking a resource it does not define)")
            continue
        misses = [_lsf_misses(asks, names, shared) for asks in alternatives if asks]
        if all(misses):
            known = ", ".join(f"{k} ({v:g})" for k, v in sorted((shared or {}).items())) \
                or "none"
            out_refused.append(f"-R {text}: {' or '.join('; '.join(m) for m in misses)} "
                               f"(shared resources here: {known})")
    return out_refused, unread


def lsf_resource_wait(spec: JobSpec, snap: SiteSnapshot, now: datetime,
                      part_max: dict[str, float]) -> tuple[Wait | None, str | None]:
    """How long an LSF job waits for the site's shared resources its `-R rusage[...]`
    reserves (licenses and the like), as `license_wait` for Slurm: where an instance of one
    (`bhosts -s`) has less free now (TOTAL less RESERVED) than it asks, until enough of the
    running jobs reserving it there (their effective rusage[], `bjobs -o`) end by their run
    limits; of alternatives (`||`) the soonest. (None, why) when it waits but for how long
    is not known (which jobs hold it is not read, or no running job here holds enough);
    (None, None) when it may take them now, or what is free is not known."""
    instances = snap.lsf_shared_now
    if not instances:
        return None, None
    running = [j for j in snap.jobs if j.state == JobState.RUNNING]
    waits: list[Wait] = []
    unknown: list[str] = []
    for text in _rusages_asked(spec):
        alternatives = [a for alt in text[len("rusage["):-1].split("||")
                        if (a := {k: v for k, v in _rusage_asks(alt, spec).items()
                                  if k in instances})]
        if not alternatives:
            continue
        best: Wait | None = None
        why: list[str] = []
        for asks in alternatives:
            at, said, unsure = 0.0, [], []
            for name, amount in asks.items():
                t, line = _shared_wait(name, amount, instances[name], running, now, part_max)
                if t is None and line:
                    unsure.append(line)
                elif t:
                    at, said = max(at, t), said + [line]
            if unsure:
                why += unsure
            elif at == 0.0:
                return None, None  # this alternative's resources are free now
            elif best is None or at < best.seconds:
                best = Wait(at, f"-R {text}: " + "; ".join(s for s in said if s))
        if best is not None:
            waits.append(best)
        else:
            unknown.append(f"-R {text}: " + " or ".join(why))
    if unknown:
        return None, "; ".join(unknown)
    return (max(waits, key=lambda w: w.seconds), None) if waits else (None, None)


def _shared_wait(name: str, amount: float, instances: list, running: list[JobStatus],
                 now: datetime, part_max: dict[str, float]) -> tuple[float | None, str]:
    """When `amount` of shared resource `name` is free in one of its `instances` (0: now),
    the running jobs reserving it in an instance giving it back as they end; (None, why)
    when that is not known, (0.0, "") when it is free now."""
    frees = [i.total - i.reserved for i in instances]
    if any(amount <= f for f in frees):
        return 0.0, ""
    best: tuple[float, str] | None = None
    unknown = f"{amount:g} of shared resource '{name}' asked, more than any instance has now"
    for inst, free in zip(instances, frees, strict=True):
        if amount > inst.total:
            continue  # never in this instance
        hosts = set(inst.hosts)
        # the jobs of this instance: on its hosts (`all`, or none said: every job)
        mine = [j for j in running if not hosts or "all" in hosts
                or hosts & set(_exec_hosts(j))]
        short = (f"{amount:g} of shared resource '{name}' asked, {max(free, 0.0):g} free now "
                 f"({inst.total:g} for scheduling, {inst.reserved:g} reserved: bhosts -s)")
        if any(j.shared_use is None for j in mine):
            unknown = (f"{short}: it waits until enough is given back, by jobs whose "
                       "reservations are not read here (when is not known)")
            continue
        holders = sorted((end_in(j, now, part_max), (j.shared_use or {}).get(name, 0.0))
                         for j in mine if (j.shared_use or {}).get(name))
        held = sum(h for _, h in holders)
        back, at = free, None
        for end, h in holders:
            back += h
            if back >= amount:
                at = end
                break
        if at is None:
            unknown = (f"{short}: it waits until LSF sees enough free, more than the running "
                       f"jobs here reserve ({held:g}) gives back (when is not known)")
        elif best is None or at < best[0]:
            best = (at, f"{short}: it waits until enough of the running jobs reserving it "
                        f"({held:g}) end")
    return best if best is not None else (None, unknown)


def _rusages_asked(spec: JobSpec) -> list[str]:
    """The job's rusage[] strings kept as written (its memory and GPUs read apart)."""
    return [d.value for d in spec.unknown if d.dialect == "lsf" and d.value
            and d.option.startswith("-R rusage") and d.value.startswith("rusage[")
            and d.value.endswith("]")]


def _rusage_asks(alternative: str, spec: JobSpec) -> dict[str, float]:
    """One alternative of a usage string (`lic=2:duration=5, scratch=10/task`) -> the
    site resources it reserves, name -> amount for the job (`/task`: each task's)."""
    asks: dict[str, float] = {}
    for part in re.split(r"[,:]", alternative):
        name, eq, value = part.strip().partition("=")
        m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*(?:/(task|host))?", value.strip())
        if not eq or not m or name in _LSF_BUILTIN or name.startswith(("ngpus", "gpu")):
            continue
        tasks = (spec.resources.tasks or 1) if m.group(2) == "task" else 1
        asks[name] = asks.get(name, 0.0) + float(m.group(1)) * tasks
    return asks


def _lsf_misses(asks: dict[str, float], names: list[str] | None,
                shared: dict[str, float] | None) -> list[str]:
    misses = []
    for name, amount in asks.items():
        if shared is not None and name in shared:
            if amount > shared[name]:
                misses.append(f"{amount:g} of shared resource '{name}' asked, the site has at "
                              f"most {shared[name]:g} (bhosts -s TOTAL): LSF keeps it "
                              "pending, it never starts")
        elif names is not None and name not in names:
            misses.append(f"resource '{name}' is not defined here (lsinfo): LSF does not "
                          "take the job")
    return misses


def _licenses_asked(spec: JobSpec) -> str | None:
    return next((d.value for d in spec.unknown if d.dialect == "slurm"
                 and d.option == "--licenses" and d.value), None)


def _license_entries(asked: str) -> list[tuple[str, int]]:
    """`a:2,b`, `a:2;b` or `a|b:3` -> [(name, count)] (a count not given: 1; Slurm takes
    `=` for `:` too)."""
    out = []
    for entry in re.split(r"[,;|]", asked):
        name, _, count = entry.strip().replace("=", ":").partition(":")
        out.append((name, int(count) if ascii_digits(count.strip()) else 1))
    return out


def license_wait(spec: JobSpec, snap: SiteSnapshot, now: datetime,
                 part_max: dict[str, float]) -> tuple[Wait | None, str | None]:
    """How long a Slurm job waits for its `--licenses` (Reason=Licenses): until enough of
    them are free after the running jobs holding them end and the waiting jobs ahead of it
    that ask them (not held back; slurmctld starts jobs in priority order) have taken
    theirs, each job's licenses read from squeue -O Licenses; at least until the first
    running job ends when those are not read. (None, why) when it waits but for how long
    is not known (no running job here releases enough: remote or reserved licenses);
    (None, None) when it may take them now, or what is free is not known."""
    asked = _licenses_asked(spec)
    free, total = snap.licenses_free, snap.licenses or {}
    if not asked or free is None:
        return None, None
    running = [j for j in snap.jobs if j.state == JobState.RUNNING]
    known = all(j.licenses is not None for j in running)
    ahead = [j for j in snap.jobs if j.state == JobState.PENDING and j.licenses
             and not held_reason(j.reason)]
    own_s = float(spec.resources.walltime_s or max(part_max.values(), default=0.0)
                  or DEFAULT_RUNTIME_S)
    waits: list[Wait] = []
    unknown: list[str] = []
    for name, wanted in _license_entries(asked):
        takers = [j for j in ahead if (j.licenses or {}).get(name)] if known else []
        if name not in free or (wanted <= free[name] and not takers):
            if "|" in asked and name in free:
                return None, None  # any one of them: this one is free now
            continue
        short = (f"--licenses={asked}: {wanted} of license '{name}' asked, {free[name]} free "
                 f"now ({total.get(name, '?')} in all)")
        if known:
            holders = [j for j in running if (j.licenses or {}).get(name)]
            held = sum((j.licenses or {})[name] for j in holders)
            at, taken = _license_start(name, wanted, own_s, free[name] + held, holders,
                                       takers, now, part_max)
            if at == 0.0:
                if "|" in asked:
                    return None, None
                continue
            if at is not None:
                by = (f" and the {taken} waiting jobs ahead of it asking them have taken "
                      "theirs") if taken else ""
                waits.append(Wait(at, f"{short}: it waits until enough of the running jobs "
                                      f"holding them ({held}) end{by} (Reason=Licenses)"))
                continue
        elif running and wanted > free[name]:
            first = min(end_in(j, now, part_max) for j in running)
            waits.append(Wait(first, f"{short}: it waits (Reason=Licenses) at least until "
                                     "the first running job ends (which jobs hold them is "
                                     "not read)"))
            continue
        elif wanted <= free[name]:
            continue
        unknown.append(f"{short}: it waits (Reason=Licenses) until they are released, which "
                       "no running job here is seen to hold (when is not known)")
    if "|" in asked:  # none of them free now: the soonest of them
        if len(waits) + len(unknown) < len(_license_entries(asked)):
            return None, None  # one of them is not known here: sbatch checks it
        if waits:
            return min(waits, key=lambda w: w.seconds), None
        return None, "; ".join(unknown)
    if unknown:
        return None, "; ".join(unknown)
    return (max(waits, key=lambda w: w.seconds), None) if waits else (None, None)


def _license_start(name: str, wanted: int, own_s: float, pool: int,
                   holders: list[JobStatus], takers: list[JobStatus], now: datetime,
                   part_max: dict[str, float]) -> tuple[float | None, int]:
    """When `wanted` of license `name` are free for `own_s` seconds, out of the `pool`
    the jobs here may use: the running `holders` keep theirs until they end, then each
    waiting job of `takers` (in priority order) takes its own for its time limit as soon
    as they are free for it (no sooner than the scheduler's estimate of its start). Seconds
    from now (None: never, more asked than the pool) and how many takers it waits behind."""
    if wanted > pool:
        return None, 0
    use = [(0.0, end_in(j, now, part_max), (j.licenses or {})[name]) for j in holders]
    alone = _first_free(use, wanted, own_s, pool, 0.0)
    for j in takers:
        count = (j.licenses or {})[name]
        if count > pool:
            continue  # it never starts here: it takes nothing
        after = max(0.0, (aware(j.estimated_start) - now).total_seconds()) \
            if j.estimated_start else 0.0
        limit = float(j.walltime_s or part_max.get((j.partition or "").split(",")[0])
                      or DEFAULT_RUNTIME_S)
        at = _first_free(use, count, limit, pool, after)
        use.append((at, at + limit, count))
    at = _first_free(use, wanted, own_s, pool, 0.0)
    return at, sum(1 for s, _, _ in use[len(holders):] if s < at) if at > alone else 0


def _first_free(use: list[tuple[float, float, int]], count: int, span: float, pool: int,
                after: float) -> float:
    """The first time from `after` at which `count` more of a license fit under `pool` for
    `span` seconds, beside the uses (start, end, count) already planned."""
    for t in sorted({after, *(e for _, e, _ in use if e > after)}):
        points = [t, *(s for s, _, _ in use if t < s < t + span)]
        if all(sum(c for s, e, c in use if s <= x < e) + count <= pool for x in points):
            return t
    return max((e for _, e, _ in use), default=after)


def _limit_misses(req: Req, p: Partition, chunks: tuple | None,
                  words: Words = SLURM_WORDS) -> list[str]:
    """Why the partition's memory limit per node (Slurm MaxMemPerNode) or a queue's limits
    on a job's totals (PBS resources_max and resources_min: ncpus, mem, ngpus; a walltime
    below resources_min's) rule the job out."""
    out = []
    if p.min_time_s is not None and req.walltime is not None and req.walltime < p.min_time_s:
        out.append(f"walltime {hms(req.walltime)} below {words.where(p.name)} "
                   f"resources_min.walltime {hms(p.min_time_s)}")
    slot = req.mem // max(req.cpn, 1) if req.mem else 0  # memory per slot (CPU)
    if vmem := dict(req.own).get("h_vmem"):  # Grid Engine: h_vmem asked once is per slot too
        slot = round(vmem / 2**20)
    if p.max_mem_per_slot_mb is not None and slot > p.max_mem_per_slot_mb:
        out.append(f"queue {p.name}: needs {slot} MB memory per slot, its h_vmem is "
                   f"{p.max_mem_per_slot_mb} MB")
    if p.max_mem_per_process_mb is not None and slot > p.max_mem_per_process_mb:
        out.append(f"queue {p.name}: needs {slot} MB memory per task slot, its MEMLIMIT is "
                   f"{p.max_mem_per_process_mb} MB (a process above it is killed)")
    if p.max_mem_per_node_mb is not None and req.mem > p.max_mem_per_node_mb:
        out.append(f"partition {p.name}: needs {req.mem} MB memory per node, its "
                   f"MaxMemPerNode is {p.max_mem_per_node_mb} MB")
    totals = _totals(req, chunks)
    for total, most, least, what in zip(totals, (p.max_cpus, p.max_mem_mb, p.max_gpus),
                                        (p.min_cpus, p.min_mem_mb, p.min_gpus),
                                        (words.cpus, "MB memory", "GPUs"), strict=True):
        if most is not None and total > most:
            out.append(f"needs {total} {what} in all, {words.where(p.name)} allows a job at "
                       f"most {most}")
        if least is not None and total < least:
            out.append(f"needs {total} {what} in all, {words.where(p.name)} takes only jobs "
                       f"of at least {least}")
    return out


def _totals(req: Req, chunks: tuple | None) -> list[int]:
    """The job's CPUs, MB memory and GPUs in all (of a PBS job of chunks: every chunk's
    share, as written)."""
    if chunks is not None:
        return [sum(get(c) * c.nodes for c, _ in chunks[0])
                for get in (lambda c: c.cpn, lambda c: c.mem, lambda c: c.gpn)]
    return [req.nodes * req.cpn, req.nodes * req.mem, req.nodes * req.gpn]


# the reason a job below a QOS's MinTRESPerJob pends with, by TRES
_MIN_REASON = {"cpu": "QOSMinCpuNotSatisfied", "node": "QOSMinNode", "mem": "QOSMinMemory",
               "gres/gpu": "QOSMinGRES"}


def _qos_misses(req: Req, p: Partition, job_qos: str | None, snap: SiteSnapshot
                ) -> list[str]:
    """Why the limits of the partition's QOS and the job's (Slurm MaxTRES per job, per node
    and per user, GrpTRES, MaxWall, MinTRESPerJob) keep it from ever running: each is what
    one job alone may never pass (with the QOS flag DenyOnLimit, Slurm refuses it at
    submit; without, it pends until changed); a QOS the snapshot does not know is not
    checked (the job's default QOS is its association's, not known here)."""
    out: list[str] = []
    known = snap.qos or {}
    job = {"cpu": req.nodes * req.cpn, "node": req.nodes, "gres/gpu": req.nodes * req.gpn,
           "mem": req.nodes * req.mem}
    node = {"cpu": req.cpn, "gres/gpu": req.gpn, "mem": req.mem}
    units = dict(UNITS)
    if req.gpu_type and req.gpn:  # a limit on one GPU type (`gres/gpu:a100=4`) counts them
        typed = f"gres/gpu:{req.gpu_type}"
        job[typed], node[typed] = job["gres/gpu"], node["gres/gpu"]
        units[typed] = (f"{req.gpu_type} GPU", f"{req.gpu_type} GPUs")
    limit = time_limit(req, p.max_time_s) or req.walltime
    for name, whose in ((p.qos, f"partition {p.name}'s QOS"), (job_qos, "the job's QOS")):
        q = known.get(name or "")
        if q is None:
            continue
        refused = ": Slurm refuses it at submit (DenyOnLimit)" if "denyonlimit" in {
            f.lower() for f in q.flags} else ""
        for have, caps, what, where in (
                (job, q.max_tres_per_job, "MaxTRESPerJob", "in all"),
                (node, q.max_tres_per_node, "MaxTRESPerNode", "per node"),
                (job, q.max_tres_per_user, "MaxTRESPerUser", "in all"),
                (job, q.grp_tres, "GrpTRES", "in all")):
            for tres, most in caps.items():
                asked = have.get(tres)
                if asked and asked > most:
                    out.append(f"needs {counted(asked, tres, units)} {where}, {whose} {name} "
                               f"allows "
                               f"{most} ({what} {tres}={most}){refused}")
        if q.max_wall_s is not None and limit and limit > q.max_wall_s:
            out.append(f"walltime {hms(limit)} above {whose} {name} MaxWall "
                       f"{hms(q.max_wall_s)}{refused}")
        minutes, asked = job_minutes(req, p)
        for tres, most in q.max_tres_mins_per_job.items() if minutes else ():
            if (asks := job.get(tres, 0) * minutes) > most:
                out.append(f"needs {asks:.0f} {tres}-minutes "
                           f"({counted(job[tres], tres, units)} for "
                           f"{asked}), {whose} {name} allows {most} a job "
                           f"(MaxTRESMins {tres}={most})" + (
                               refused or ": Slurm keeps it pending ("
                               + _QOS_JOB_MINS.get(tres, "QOSMaxTRESMinutesPerJob") + ")"))
        for tres, least in q.min_tres_per_job.items():
            asked = job.get(tres, 0)
            if asked < least:
                out.append(f"asks {counted(asked, tres, units)} in all, {whose} {name} takes "
                           f"only jobs of at "
                           f"least {least} (MinTRESPerJob {tres}={least})" + (
                               refused or ": Slurm keeps it pending (" + _MIN_REASON.get(
                                   tres, "QOSMin*") + ") until it asks more"))
    return out
