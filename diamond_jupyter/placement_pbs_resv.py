"""PBS Pro reservations as they bear on a job (`pbs_rstat -f`). A job asking a
reservation's queue (`-q R123`, `-q S45.server`) runs only there: while the reservation
is confirmed or running, if it admits the user, within its window, on its nodes and what
it holds of them. Every other job finds a reservation's share of its nodes taken while
the job would overlap it. Pure code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from .config import SiteConfig
from .dialects.outputs_common import job_hosts
from .model import JobSpec, JobState, JobStatus, Node, Partition, PbsReservation, SiteSnapshot, hms
from .placement_fit import aware
from .placement_limits import Wait
from .placement_sim import RESERVATION_HOLD
from .placement_time import FAR_FUTURE, plus_seconds

# the queue of an advance (R), standing (S) or maintenance (M) reservation
_RESV_QUEUE = re.compile(r"[RSM][0-9]+(?:\.[\w.-]+)?")
# states whose queue takes and runs jobs (DEGRADED: confirmed, some of its nodes lost)
_OPEN_STATES = {"RESV_CONFIRMED", "RESV_RUNNING", "RESV_DEGRADED", "RESV_TIME_TO_RUN",
                "RESV_BEING_ALTERED", "RESV_IN_CONFLICT"}
_STATE_SAID = {"RESV_UNCONFIRMED": "not confirmed (RESV_UNCONFIRMED): the scheduler has not "
               "found it room, and its queue runs no job until it does",
               "RESV_FINISHED": "finished (RESV_FINISHED)",
               "RESV_BEING_DELETED": "being deleted (RESV_BEING_DELETED)",
               "RESV_DELETED": "deleted (RESV_DELETED)",
               "RESV_DELETING_JOBS": "deleting its jobs (RESV_DELETING_JOBS)"}


@dataclass
class PbsResvView:
    """What the site's reservations make of a job: `refused` (why it cannot run here),
    `snap` (the site as the job sees it), `hosts` (where it may run; None: anywhere),
    `wait` (for its reservation to start), `queue` (the reservation's), `notes` and
    `not_checked`."""

    snap: SiteSnapshot
    queue: str | None = None
    refused: list[str] = field(default_factory=list)
    hosts: set[str] | None = None
    wait: Wait | None = None
    notes: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)


def pbs_reservations(spec: JobSpec, cfg: SiteConfig, snap: SiteSnapshot, now: datetime
                     ) -> PbsResvView:
    """The job at a PBS Pro site, seen through the site's reservations."""
    view = PbsResvView(snap=snap)
    if cfg.scheduler != "pbs":
        return view
    asked = [q.strip() for q in (spec.queue or "").split(",") if q.strip()]
    named = next((q for q in asked if _RESV_QUEUE.fullmatch(q)), None)
    if snap.pbs_reservations is None:
        why = snap.limits_unread.get("reservations")
        if named and why:
            view.not_checked.append(f"reservations ({why}): queue {named}'s reservation "
                                    "window, users and nodes")
        return view
    if named is None:
        return _held_for_others(spec, snap, now, view)
    r = next((x for x in snap.pbs_reservations
              if named in (x.queue, x.name, x.name.split(".")[0])), None)
    if r is None:
        listed = ", ".join(x.queue or x.name for x in snap.pbs_reservations) or "none"
        view.refused.append(f"queue {named} names a reservation this site does not have "
                            f"(pbs_rstat -f lists: {listed})")
        return view
    view.refused = _refusals(r, spec, snap, now)
    if view.refused:
        return view
    if r.start is not None and aware(r.start) > now:
        view.wait = Wait((aware(r.start) - now).total_seconds(),
                         f"reservation {r.queue} starts at {aware(r.start):%Y-%m-%d %H:%M}: "
                         "its queue starts no job before then")
    elif r.start is None or r.state == "RESV_RUNNING" or aware(r.start) <= now:
        why, view.wait, said = _room_in_running(r, spec, snap, now)
        if why:
            view.refused = [why]
            return view
        view.notes += said
    if r.state == "RESV_DEGRADED":
        view.notes.append(f"reservation {r.queue} is degraded (RESV_DEGRADED): some of its "
                          "nodes are down, the scheduler looks for others")
    if not spec.resources.walltime_s:
        view.not_checked.append(f"the job's walltime against reservation {r.queue}'s end "
                                "(it gives none)")
    view.hosts, view.queue = set(r.nodes) or None, r.queue
    view.snap = _inside(r, snap)
    return view


def _refusals(r: PbsReservation, spec: JobSpec, snap: SiteSnapshot, now: datetime
              ) -> list[str]:
    """Why a job in reservation `r`'s queue cannot run: its state, its end passed, the
    user not admitted, the walltime past its end."""
    if r.state not in _OPEN_STATES:
        return [f"reservation {r.queue} is "
                + _STATE_SAID.get(r.state, f"in state {r.state or 'unknown'}: its queue runs "
                                  "jobs only while it is confirmed or running")]
    if r.end is not None and aware(r.end) <= now:
        return [f"reservation {r.queue} ended at {aware(r.end):%Y-%m-%d %H:%M}"]
    if (why := _not_admitted(r, snap)) is not None:
        return [why]
    wall = spec.resources.walltime_s
    if r.end is not None and wall:
        opens = max(now, aware(r.start)) if r.start is not None else now
        if plus_seconds(opens, wall) > aware(r.end):
            left = max(0.0, (aware(r.end) - opens).total_seconds())
            return [f"walltime {hms(wall)} runs past reservation {r.queue}'s end at "
                    f"{aware(r.end):%Y-%m-%d %H:%M} ({hms(left)} of it left from "
                    + ("now" if opens == now else f"its start at {opens:%H:%M}")
                    + "): PBS ends a reservation's jobs when it ends; ask at most that"]
    return []


def _not_admitted(r: PbsReservation, snap: SiteSnapshot) -> str | None:
    """Why the user may not submit to `r` (its Authorized_Users, else its owner alone;
    `-name` denies; Authorized_Groups admits the user's group); None when they may or
    who they are is not known."""
    user = snap.user
    if user is None:
        return None
    owner = (r.owner or "").split("@")[0] or None
    entries = r.users if r.users is not None else [owner] if owner else None
    if entries is None:
        return None

    def names(e: str) -> bool:
        who = e.lstrip("+-").split("@")[0]
        return who in ("*", user)

    denied = any(e.startswith("-") and names(e) for e in entries)
    granted = any(not e.startswith("-") and names(e) for e in entries)
    in_group = snap.group is not None and any(
        g.lstrip("+").split("@")[0] == snap.group for g in r.groups or [])
    if not denied and (granted or in_group):
        return None
    said = ", ".join(entries) + (f"; Authorized_Groups: {', '.join(r.groups)}"
                                 if r.groups else "")
    return (f"reservation {r.queue} does not admit {user} "
            f"({'Authorized_Users' if r.users is not None else 'its owner alone'}: {said})")


def _inside(r: PbsReservation, snap: SiteSnapshot) -> SiteSnapshot:
    """The site as a job of reservation `r` sees it: its queue, on its nodes, which hold
    what the reservation holds there, less what its running jobs take."""
    queue = r.queue or r.name
    hosts = set(r.nodes)
    ours = [j for j in snap.jobs if j.partition in (queue, r.name)]
    nodes: list[Node] = []
    for n in snap.nodes:
        if n.name not in hosts:
            nodes.append(n)
            continue
        held = r.nodes[n.name]
        running = [j for j in ours if j.state == JobState.RUNNING
                   and n.name in job_hosts(j.node_list)]
        cpus = held.get("ncpus", n.cpus)
        taken = sum((j.cpus or 0) // max(1, len(job_hosts(j.node_list))) for j in running)
        gpus = held.get("ngpus", 0)
        nodes.append(n.model_copy(update={
            "cpus": cpus, "cpus_allocated": min(cpus, taken), "gpus": gpus,
            "gpus_allocated": min(gpus, sum(j.gpus or 0 for j in running)),
            "state": _outside_resv_state(n.state), "partitions": [queue]}))
    parts = [p for p in snap.partitions if p.name != queue]
    window = int((aware(r.end) - aware(r.start)).total_seconds()) \
        if r.start is not None and r.end is not None else None
    mine = next((p for p in snap.partitions if p.name == queue), None)
    parts.append((mine or Partition(name=queue)).model_copy(update={
        "state": "UP", "nodes": sorted(hosts), "total_nodes": len(hosts),
        "max_time_s": (mine.max_time_s if mine and mine.max_time_s else window)}))
    others = [j for j in snap.jobs if j.partition in (queue, r.name)
              or not set((j.node_list or "").split(",")) & hosts]
    return snap.model_copy(update={"nodes": nodes, "partitions": parts, "jobs": others})


@dataclass
class _Held:
    """What one job of a reservation holds of its hosts, from when until when: `cpus` and
    `gpus` on each entry of `hosts` (a host named twice holds twice that)."""

    job: str
    hosts: list[str]
    cpus: int
    gpus: int
    until: datetime
    start: datetime | None = None  # None: running already


@dataclass
class _Room:
    """What reservation `have` holds (host -> CPUs, GPUs) and its jobs' shares over time."""

    have: dict[str, tuple[int, int]]
    held: list[_Held]

    def _free(self, h: str, at: datetime) -> tuple[int, int]:
        on = [x for x in self.held if h in x.hosts and (x.start is None or x.start <= at)
              and x.until > at]
        c, g = self.have[h]
        return (c - sum(x.cpus * x.hosts.count(h) for x in on),
                g - sum(x.gpus * x.hosts.count(h) for x in on))

    def hosts_for(self, chunks: int, cpus: int, gpus: int, at: datetime | None,
                  until: datetime | None) -> list[str] | None:
        """The hosts (one a chunk) that hold `chunks` chunks of `cpus` CPUs and `gpus` GPUs
        from `at` to `until` beside its jobs' shares (`at` None: none of them running);
        None: they do not."""
        marks = [at] if at is not None else []
        marks += [x.start for x in self.held if x.start is not None and at is not None
                  and at < x.start and (until is None or x.start < until)]
        out: list[str] = []
        for h, (c, g) in self.have.items():
            frees = [self._free(h, m) for m in marks] or [(c, g)]
            room = min(min(fc // max(cpus, 1), fg // gpus if gpus else chunks)
                       if fc >= 0 and fg >= 0 else 0 for fc, fg in frees)
            out += [h] * max(0, min(room, chunks - len(out)))
        return out if len(out) >= chunks else None


def _room_in_running(r: PbsReservation, spec: JobSpec, snap: SiteSnapshot, now: datetime
                     ) -> tuple[str | None, Wait | None, list[str]]:
    """A job of running reservation `r`: (why it can never start inside it, the wait for
    room in it, what is said). `pbs_rstat -f` gives what the reservation holds (resv_nodes),
    not what its jobs use of it: that is its queue's running jobs (qstat: queue R123, their
    exec_host, start and walltime), and the jobs queued there before it, which PBS starts
    first (in submission order) as room comes free. The job starts once enough of them
    end, within the reservation's end; a job of no known end holds its share until then."""
    res = spec.resources
    chunks = res.nodes or 1
    cpus = (res.tasks_per_node or 1) * (res.cpus_per_task or 1)
    gpus = res.gpus_per_node or 0
    sizes = {n.name: n for n in snap.nodes}
    have = {h: (x.get("ncpus", sizes[h].cpus if h in sizes else 0), x.get("ngpus", 0))
            for h, x in r.nodes.items()}
    end = aware(r.end) if r.end is not None else None
    queue = (r.queue, r.name)
    ours = [_held(j, end) for j in snap.jobs
            if j.state == JobState.RUNNING and j.partition in queue]
    ours = [x for x in ours if set(x.hosts) & set(have)]
    room = _Room(have, list(ours))
    if not have or room.hosts_for(chunks, cpus, gpus, None, None) is None:
        return None, None, []  # it never holds enough: the site's checks say so
    ahead = _queued_ahead(snap, queue, room, end, now)
    if not ours and not ahead:
        return None, None, []
    wall = spec.resources.walltime_s
    total = sum(c for c, _ in have.values())
    used = sum(x.cpus * len(set(x.hosts) & set(have)) for x in ours)
    gpu_said = f" and {gpus * chunks} GPUs" if gpus else ""
    holding = (f"reservation {r.queue} is running: its jobs (qstat, queue {r.queue}) use "
               f"{used} of its {total} CPUs (pbs_rstat -f, resv_nodes)")
    if ahead:
        holding += "; queued there before it, PBS starts first " + ", ".join(
            f"job {x.job} ({x.cpus * len(x.hosts)} CPUs"
            + (f", at {x.start:%Y-%m-%d %H:%M}" if x.start and x.start > now else ", now")
            + ")" for x in ahead)
    asks = f"the job's {chunks * cpus} CPUs{gpu_said}"

    def lasts(at: datetime) -> datetime | None:
        return plus_seconds(at, wall) if wall else end

    if room.hosts_for(chunks, cpus, gpus, now, lasts(now)) is not None:
        return None, None, [f"{holding}; {asks} fit beside them"]
    for x in sorted(room.held, key=lambda x: x.until):
        if end is not None and x.until >= end:
            break
        if x.until <= now or room.hosts_for(chunks, cpus, gpus, x.until,
                                            lasts(x.until)) is None:
            continue
        if wall and end is not None and plus_seconds(x.until, wall) > end:
            return (f"{holding}; {asks} fit once job {x.job} ends at {x.until:%Y-%m-%d %H:%M}"
                    f", but walltime {hms(wall)} would then run past its end at "
                    f"{end:%Y-%m-%d %H:%M}: PBS ends a reservation's jobs when it ends; ask "
                    f"at most {hms((end - x.until).total_seconds())}"), None, []
        return None, Wait((x.until - now).total_seconds(),
                          f"{holding}; {asks} fit once job {x.job} ends at "
                          f"{x.until:%Y-%m-%d %H:%M}"), []
    until = f" before its end at {end:%Y-%m-%d %H:%M}" if end is not None else ""
    return (f"{holding}; none of them ends{until} to leave room for {asks}: PBS ends a "
            "reservation's jobs when it ends"), None, []


def _queued_ahead(snap: SiteSnapshot, queue: tuple[str | None, str], room: _Room,
                  end: datetime | None, now: datetime) -> list[_Held]:
    """The jobs queued (qstat Q, not held) in a reservation's queue before a new one, in
    the order PBS starts them (submission), each placed in `room` at the first end of a
    job of it that leaves it room for its whole walltime (kept there: later ones, and the
    new job, find it taken); one that never fits is left out."""
    waiting = sorted((j for j in snap.jobs if j.state == JobState.PENDING
                      and j.partition in queue and (j.native_state or "Q") == "Q"),
                     key=lambda j: (aware(j.submitted_at) if j.submitted_at else now,
                                    j.native_id))
    placed = []
    for j in waiting:
        chunks = max(1, j.nodes or 1)
        cpus, gpus = -(-(j.cpus or 1) // chunks), -(-(j.gpus or 0) // chunks)
        for at in [now, *sorted({x.until for x in room.held if x.until > now})]:
            if end is not None and at >= end:
                break
            until = plus_seconds(at, j.walltime_s) if j.walltime_s else end
            hosts = room.hosts_for(chunks, cpus, gpus, at, until)
            if hosts is not None:
                until = min(until, end) if until is not None and end is not None else until
                x = _Held(j.native_id, hosts, cpus, gpus, until or FAR_FUTURE, at)
                room.held.append(x)
                placed.append(x)
                break
    return placed


def _held(j: JobStatus, end: datetime | None) -> _Held:
    """Running job `j` of a reservation ending at `end`: its share of each host it runs on
    (its CPUs and GPUs spread evenly), until its walltime ends, at the latest the
    reservation's end (a job of no known walltime: then; of neither: never)."""
    hosts = job_hosts(j.node_list)
    share = max(1, len(hosts))
    until = plus_seconds(aware(j.started_at), j.walltime_s) \
        if j.started_at is not None and j.walltime_s else end
    until = min(until, end) if until is not None and end is not None else until or end
    return _Held(j.native_id, hosts, -(-(j.cpus or 0) // share), -(-(j.gpus or 0) // share),
                 until or FAR_FUTURE)


def _outside_resv_state(state: str) -> str:
    """A vnode state without the `resv-exclusive` that keeps other jobs off it."""
    words = [w for w in re.split(r"[,\s]+", state) if w and w != "resv-exclusive"]
    return ",".join(words) or "free"


def _held_for_others(spec: JobSpec, snap: SiteSnapshot, now: datetime, view: PbsResvView
                     ) -> PbsResvView:
    """`snap` with what each reservation holds of its nodes taken, for a job of no
    reservation, from now until the reservation ends, where the job would overlap it (a
    running one's share is in its nodes' resources_assigned already: it is kept there until
    the reservation ends). Said for each reservation yet to start."""
    wall = spec.resources.walltime_s or _limit_given(snap, spec.queue)
    # host -> [CPUs, GPUs] to add to its assigned ones, [CPUs, GPUs] the reservations
    # hold in all, and until when
    held: dict[str, tuple[list[int], list[int], datetime]] = {}
    for r in snap.pbs_reservations or []:
        if r.state not in _OPEN_STATES or r.end is None or aware(r.end) <= now:
            continue
        started = r.start is None or aware(r.start) <= now or r.state == "RESV_RUNNING"
        if not started and wall and plus_seconds(now, wall) <= aware(r.start):
            continue  # the job ends before it starts
        for host, have in r.nodes.items():
            add, hold, until = held.get(host, ([0, 0], [0, 0], now))
            share = [have.get("ncpus", 0), have.get("ngpus", 0)]
            held[host] = ([a + (0 if started else s) for a, s in zip(add, share, strict=True)],
                          [h + s for h, s in zip(hold, share, strict=True)],
                          max(until, aware(r.end)))
        if not started:
            view.notes.append(
                f"reservation {r.queue} holds {_share(r)} from "
                f"{aware(r.start):%Y-%m-%d %H:%M} to {aware(r.end):%Y-%m-%d %H:%M}: the job"
                + (f", of walltime {hms(wall)}," if wall else ", of no known walltime,")
                + " would run into it, so PBS gives it none of that before it ends")
    if not held or not snap.nodes:
        return view
    nodes, jobs = [], list(snap.jobs)
    for n in snap.nodes:
        if n.name not in held:
            nodes.append(n)
            continue
        add, hold, until = held[n.name]
        nodes.append(n.model_copy(update={
            "cpus_allocated": min(n.cpus, n.cpus_allocated + add[0]),
            "gpus_allocated": min(n.gpus, n.gpus_allocated + add[1])}))
        jobs.append(JobStatus(native_id=f"{RESERVATION_HOLD}{n.name}", state=JobState.RUNNING,
                              node_list=n.name, cpus=min(n.cpus, hold[0]),
                              gpus=min(n.gpus, hold[1]), nodes=1, started_at=now,
                              walltime_s=max(1, int((until - now).total_seconds()))))
    view.snap = snap.model_copy(update={"nodes": nodes, "jobs": jobs})
    return view


def _share(r: PbsReservation) -> str:
    parts = [f"{h} ({', '.join(f'{k}={v}' for k, v in have.items())})" if have else h
             for h, have in sorted(r.nodes.items())[:4]]
    return ", ".join(parts) + (", ..." if len(r.nodes) > 4 else "") if parts else "nodes"


def _limit_given(snap: SiteSnapshot, queue: str | None) -> int | None:
    """The walltime PBS gives a job that asks none: its queue's (the default one's)
    resources_default.walltime, else its resources_max.walltime; None: none."""
    p = next((q for q in snap.partitions if q.name == queue), None) if queue else \
        next((q for q in snap.partitions if q.default), None)
    return (p.default_time_s or p.max_time_s) if p is not None else None
