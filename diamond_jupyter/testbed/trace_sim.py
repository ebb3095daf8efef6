"""Starts for a log's jobs whose waits it does not record (field 3 is -1): its machine
simulated, first come first served with EASY backfilling, over a bounded stretch of the log.

A log that records submissions and runs only (a model's output, LLNL-Thunder) says nothing of
the queue that stood at a moment. Taking each job to start at its submission leaves no queue
at a window's start and, where the work offered passes the machine, runs more at once than
the machine held. Here the log's machine (its processors) runs its jobs in submit order: the
first waiting job starts as soon as it fits; a later one starts ahead of it only where it
fits now and, by its request, ends before the first one's reserved start or uses processors
that reservation leaves over (EASY). Jobs whose wait the log records start when it says,
whatever the simulation holds. The machine is taken empty at the stretch's start but for the
jobs then running as the log (or a start at submission) has them.

Bounded: at most `SIM_MAX_JOBS` jobs before the moment asked and as many after it are
simulated, a backfill pass looks at `BACKFILL_DEPTH` waiting jobs, and the state held is the
jobs running and waiting (no list of the log's every job). Pure: a table in, waits out.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field

SIM_WARMUP_S = 7 * 86400.0  # log seconds simulated before a window (a queue forms in less)
SIM_MAX_JOBS = 20_000  # jobs simulated at most before the window, and as many in it
BACKFILL_DEPTH = 100  # waiting jobs a backfill pass looks at after the first
UNKNOWN = -1 + 1e-6  # a wait at most this is SWF's "unknown" (-1)


@dataclass
class Simulated:
    """What a simulation gave: row -> simulated wait, and what it covered."""

    waits: dict[int, float] = field(default_factory=dict)
    since: float = 0.0  # log second the simulation started from
    jobs: int = 0  # jobs it ran (simulated or placed at their recorded starts)
    cut: bool = False  # fewer jobs than the stretch holds (SIM_MAX_JOBS)
    from_log_start: bool = False  # the stretch began at the log's first submission
    partitions: int = 0  # partitions simulated each on its own (0: the log's one machine)


def unknown_waits(t, lo_t: float, hi_t: float) -> bool:
    """Whether a job that ran, submitted in [lo_t, hi_t), has no recorded wait."""
    lo = bisect.bisect_left(t.submit, lo_t)
    hi = bisect.bisect_left(t.submit, hi_t)
    wait, run, procs = t.wait, t.run, t.procs
    return any(unknown(wait[i]) and run[i] > 0 and procs[i] > 0 for i in range(lo, hi))


def unknown(wait: float) -> bool:
    """A wait the log does not record: -1, or below it (a clock set back); one a fraction
    of a second below zero is a rounded start at submission, recorded."""
    return wait <= UNKNOWN


def simulate_waits(t, machine: int, since: float, moment: float, until: float,
                   partition: int | None = None, unasked_s: float | None = None,
                   queue_limits: dict[int, float] | None = None) -> Simulated:
    """Simulated waits of the jobs of table `t` (in submit order) that ran with no recorded
    wait, submitted in [since, until), on a machine of `machine` processors; at most
    SIM_MAX_JOBS submitted before `moment` (the latest) and as many from it on. A job still
    waiting at `until` gets a start of `until` (it did not start before). `partition`: the
    jobs of that partition (field 16) alone, `machine` being its processors. `unasked_s`:
    what a job without a request (field 9) is planned on, the log's MaxRuntime (its
    center's limit; the job's run where longer), else its run; `queue_limits` (queue,
    field 15 -> seconds): the limit of a job's queue instead, where its header gives one."""
    submit, wait, run, procs, req = t.submit, t.wait, t.run, t.procs, t.req_time
    part, queue_of = t.partition, t.queue
    queue_limits = queue_limits or {}

    def ran(i: int) -> bool:
        return run[i] > 0 and procs[i] > 0 and (partition is None or part[i] == partition)

    at = bisect.bisect_left(submit, moment)
    lo = max(bisect.bisect_left(submit, since), at - SIM_MAX_JOBS)
    hi = min(bisect.bisect_left(submit, until), at + SIM_MAX_JOBS)
    out = Simulated(since=submit[lo] if lo < len(submit) else since,
                    cut=lo > bisect.bisect_left(submit, since)
                    or hi < bisect.bisect_left(submit, until),
                    from_log_start=lo == 0)
    free = machine
    ends: list[tuple[float, int, int]] = []  # (end, row, processors) of every running job
    # (its end by its request, row, processors): what a reservation is planned on
    planned: list[tuple[float, int, int]] = []
    plan_of: dict[int, tuple[float, int, int]] = {}  # row -> its entry in `planned`
    events: list[tuple[float, int, int]] = []  # (time, 0 recorded start / 1 arrival, row)
    start_at = out.since
    # jobs running at the stretch's start, as the log has them (unknown waits: at submission)
    for i in range(lo):
        if ran(i):
            begin = submit[i] + max(wait[i], 0.0)
            if begin + run[i] > start_at:
                events.append((begin, 0, i))
    for i in range(lo, hi):
        if ran(i):
            known = not unknown(wait[i])
            events.append((submit[i] + max(wait[i], 0.0) if known else submit[i],
                           0 if known else 1, i))
    heapq.heapify(events)
    queue: list[int] = []  # rows waiting, in submit order (started ones stay, marked)
    head = 0  # queue[:head] have started
    started: set[int] = set()

    def size(i: int) -> int:
        return min(procs[i], machine)

    def estimate(i: int) -> float:
        if req[i] > 0:
            return req[i]
        return max(queue_limits.get(queue_of[i]) or unasked_s or 0.0, run[i])

    changes = 0  # starts and ends so far: a reservation is planned again only after one
    reserved: tuple[int, int, float, int] = (-1, -1, 0.0, 0)  # (head, changes, shadow, extra)

    def begin(i: int, now: float, recorded: bool = False) -> None:
        nonlocal free, changes
        changes += 1
        free -= size(i)
        heapq.heappush(ends, (now + run[i], i, size(i)))
        entry = (now + estimate(i), i, size(i))
        bisect.insort(planned, entry)
        plan_of[i] = entry
        if not recorded:
            out.waits[i] = now - submit[i]

    def schedule(now: float) -> None:
        nonlocal head, reserved
        while head < len(queue) and (queue[head] in started or size(queue[head]) <= free):
            if queue[head] not in started:
                begin(queue[head], now)
                started.add(queue[head])
            head += 1
        if head >= len(queue):
            return
        # the first waiting job's reservation: when enough planned ends free its size (the
        # same as last time where nothing started or ended since: an arrival alone)
        if reserved[:2] == (queue[head], changes):
            shadow, extra = max(reserved[2], now), reserved[3]
        else:
            need, have = size(queue[head]), free
            shadow, extra = float("inf"), 0
            for end, _, held in planned:
                have += held
                if have >= need:
                    shadow, extra = max(end, now), have - need
                    break
            reserved = (queue[head], changes, shadow, extra)
        looked = 0
        for k in range(head + 1, len(queue)):
            if looked >= BACKFILL_DEPTH or free <= 0:
                break
            i = queue[k]
            if i in started:
                continue
            looked += 1
            held = procs[i] if procs[i] < machine else machine
            if held > free:
                continue
            fits_before = now + estimate(i) <= shadow
            if fits_before or held <= extra:
                begin(i, now)
                started.add(i)
                if not fits_before:
                    extra -= held

    while events or ends:
        now = min(events[0][0] if events else float("inf"), ends[0][0] if ends else float("inf"))
        if now >= until:
            break
        while ends and ends[0][0] <= now:  # at one moment, ends first
            _, i, held = heapq.heappop(ends)
            free += held
            changes += 1
            entry = plan_of.pop(i)
            del planned[bisect.bisect_left(planned, entry)]
        while events and events[0][0] <= now:
            _, kind, i = heapq.heappop(events)
            out.jobs += 1
            if kind == 0:  # a recorded start (or one running at the stretch's start)
                begin(i, now, recorded=True)
            else:
                queue.append(i)
        schedule(now)
        if head > 1024 and head * 2 > len(queue):  # drop the started head: bounded memory
            del queue[:head]
            head = 0
            started &= set(queue)
    for k in range(head, len(queue)):
        i = queue[k]
        if i not in started:
            out.waits[i] = max(until - submit[i], 0.0)
    return out
