"""The notes a verdict carries about the nodes a job may take: nodes power saving has off
(booted first), not responding or to be rebooted (back by themselves, after the site's
timeouts), LSF hosts closed by their load or dispatch window, and which free nodes a job
that starts now lands on (LLN, node Weight), running jobs past their time limit that Slurm's
OverTimeLimit lets run on. Pure code."""

from __future__ import annotations

from datetime import datetime

from diamond_jupyter.wording import quantity

from .dialects.outputs_common import job_hosts
from .model import OVER_TIME_UNLIMITED, Node, Partition, SiteSnapshot, hms
from .placement_fit import (
    SUSPEND_S,
    Req,
    _few,
    aware,
    node_power,
    node_usable,
    returning_timeouts,
)
from .placement_sim import UNKNOWN_HOLD_S, Overrun


def _boot_note(partition: str, req: Req, nodes: list[Node],
               timeouts: dict[str, float] | None = None) -> list[str]:
    """A job that starts now only on nodes power saving has off starts once they boot
    (within a ResumeTimeout short enough to count as now)."""
    free = [n for n in nodes if n.cpus - n.cpus_allocated >= req.cpn
            and n.gpus - n.gpus_allocated >= req.gpn]
    asleep = [n.name for n in free if node_power(n) is not None]
    if not asleep or len(free) - len(asleep) >= req.nodes:
        return []
    return [f"partition {partition}: its free nodes that can run it are powered down "
            f"({', '.join(asleep[:4])}{', ...' if len(asleep) > 4 else ''}): the job starts "
            f"once they boot, within {_resume_said(timeouts)}"]


def _resume_said(timeouts: dict[str, float] | None) -> str:
    t = timeouts or {}
    return (f"{returning_timeouts(t)[1]:.0f} s ("
            + _whose(t, "ResumeTimeout") + " ResumeTimeout)")


def _whose(timeouts: dict[str, float], key: str) -> str:
    """Whose timeout `key` bounds the nodes: their partition's own, the site's, Slurm's."""
    return "their partition's own" if f"Partition{key}" in timeouts else \
        "the site's" if key in timeouts else "Slurm's default"


def _returning_note(partition: str, out: list[Node], back: dict[str, tuple[float, bool]],
                    timeouts: dict[str, float] | None = None,
                    power: dict[str, str] | None = None,
                    seen_at: datetime | None = None) -> list[str]:
    """Nodes of the partition that could run the job but take none now, back by themselves
    (`timeouts`: the site's own SlurmdTimeout, ResumeTimeout and SuspendTimeout, where read;
    `power`: of them, those power saving has off, booting or going off, by that; `seen_at`:
    when they were seen out: a ResumeAfterTime already past then, Slurm did not keep)."""
    t, power = timeouts or {}, power or {}
    silent_s, reboot_s = returning_timeouts(t)
    kinds = {kind: {n.name for n in out if power.get(n.name) == kind}
             for kind in ("off", "booting", "going_off")}
    resuming = [n for n in out if n.resume_after is not None and n.name not in power
                and not node_usable(n)
                and (seen_at is None or aware(n.resume_after) > seen_at)]
    silent = [n.name for n in out if not back[n.name][1] and n.name not in power
              and n not in resuming]
    reboot = [n.name for n in out if back[n.name][1] and n.name not in power]
    said = []
    for n in resuming:
        why = f", {n.reason}" if n.reason else ""
        said.append(f"partition {partition}: {n.name} is out of service ({n.state}{why}) "
                    f"until {aware(n.resume_after):%Y-%m-%d %H:%M} (its ResumeAfterTime): "
                    "Slurm returns it to service then, and no job starts there before")
    if silent:
        said.append(f"partition {partition}: {_few(set(silent))} not responding: Slurm starts "
                    "no job there until it answers again (planned free after SlurmdTimeout, "
                    f"{silent_s:.0f} s"
                    + (" as the site sets it" if "SlurmdTimeout" in t else " by default")
                    + "; set DOWN if it stays silent)")
    if reboot:
        said.append(f"partition {partition}: {_few(set(reboot))} to be rebooted: no new job "
                    "there until the reboot, after the jobs on it end (planned back "
                    f"{reboot_s:.0f} s later, "
                    + _whose(t, "ResumeTimeout")
                    + " ResumeTimeout)")
    if kinds["off"]:
        said.append(f"partition {partition}: {_few(kinds['off'])} powered down: Slurm boots "
                    f"the nodes it gives the job first, planned to take {_resume_said(t)}, "
                    "the longest a boot may take (how long one takes there is not read)")
    if kinds["booting"]:
        said.append(f"partition {partition}: {_few(kinds['booting'])} being powered up: how "
                    "much of the boot is left is not known, so it is planned to take "
                    f"{_resume_said(t)}, the bound")
    if kinds["going_off"]:
        suspend_s = t.get("SuspendTimeout", SUSPEND_S)
        said.append(f"partition {partition}: {_few(kinds['going_off'])} being powered down: "
                    "no job there until it is off, within "
                    f"{suspend_s:.0f} s ("
                    + _whose(t, "SuspendTimeout")
                    + f" SuspendTimeout), and booted again, within {_resume_said(t)}")
    return said


# LSF bhosts states closed for a while, not for good: what closed the host
_CLOSED_FOR_NOW = {"closed_busy": "a load index past its threshold",
                   "closed_wind": "outside its dispatch window"}


def _closed_note(queue: str, nodes: list[Node]) -> list[str]:
    """LSF hosts among `nodes` (those of the queue that can run the job) closed by their
    load or their dispatch window: when they open again is not read, so the slots their
    jobs do not hold are planned free after UNKNOWN_HOLD_S."""
    said = []
    for status, why in _CLOSED_FOR_NOW.items():
        hosts = {n.name for n in nodes if n.state.lower() == status}
        if hosts:
            shown = "closed_" + status.removeprefix("closed_").capitalize()
            said.append(f"queue {queue}: {_few(hosts)} {shown} ({why}): LSF dispatches no "
                        "job to a closed host until it opens again, which is not foreseen "
                        "here: the slots its jobs do not hold are planned free in "
                        f"{UNKNOWN_HOLD_S / 3600:g} h")
    return said


def _landing_note(p: Partition, req: Req, nodes: list[Node]) -> list[str]:
    """Which of `nodes` (those that can run it) a job that starts now lands on, where the
    partition's rule tells: LLN=YES the least loaded (most idle CPUs), else the lowest
    Weight first where the nodes differ in it (Slurm's order)."""
    free = [n for n in nodes if n.cpus - n.cpus_allocated >= (n.cpus if req.whole else req.cpn)
            and n.gpus - n.gpus_allocated >= req.gpn and (not req.mem or not n.memory_mb
                                                        or n.memory_mb - n.memory_allocated
                                                        >= req.mem)]
    if len(free) < max(req.nodes, 1) or len(free) < 2:
        return []
    if p.lln:
        free.sort(key=lambda n: -(n.cpus - n.cpus_allocated))
        picked = free[:req.nodes]
        return [f"partition {p.name} puts jobs on the least loaded nodes (LLN): it starts on "
                + ", ".join(f"{n.name} ({n.cpus - n.cpus_allocated} of {quantity(n.cpus, 'CPU')} "
                            f"idle)"
                            for n in picked)]
    weights = {n.weight for n in free if n.weight is not None}
    if len(weights) < 2:
        return []
    free.sort(key=lambda n: n.weight if n.weight is not None else 1)
    low = free[req.nodes - 1].weight
    picked = [n.name for n in free if (n.weight or 1) <= (low or 1)]
    return [f"partition {p.name}: nodes of the lowest Weight are used first: it starts on "
            f"{'one of ' if len(picked) > req.nodes else ''}{_few(set(picked))} "
            f"(Weight {low})"]


def _minutes(seconds: float) -> str:
    return quantity(max(round(seconds / 60), 1), "min", "min")


def _overrun_note(partition: str, hosts: set[str], snap: SiteSnapshot,
                  now: datetime) -> list[str]:
    """The running jobs on `hosts` (the partition's nodes that could run the job) already
    past their time limit that an OverTimeLimit lets run on: until when Slurm plans them
    (`Overrun`), which the job's start waits for where it needs their nodes."""
    overrun, out = Overrun.of(snap), []
    for j in snap.running:
        elapsed = float(j.time_used_s) if j.time_used_s is not None else \
            (now - aware(j.started_at)).total_seconds() if j.started_at else None
        on = [h for h in job_hosts(j.node_list) if h in hosts]
        if not (on and j.walltime_s and elapsed is not None and elapsed > j.walltime_s):
            continue
        past, over = elapsed - j.walltime_s, overrun.allowed(j.partition)
        late = f"partition {partition}: job {j.native_id} is {_minutes(past)} past its time limit"
        where = f"its nodes ({_few(set(on))}) count as busy until then"
        if over == OVER_TIME_UNLIMITED:
            out.append(f"{late} and OverTimeLimit is UNLIMITED: no end is known, so Slurm "
                       f"plans it a whole time limit ({hms(j.walltime_s)}) from now; "
                       + where)
        elif over > past:
            out.append(f"{late}; OverTimeLimit {_minutes(over)} lets it run up to "
                       f"{_minutes(over - past)} more, then KillWait "
                       f"{overrun.kill_wait:.0f} s: " + where)
    return out
