"""Job dependencies of waiting jobs, read as Slurm means them (sbatch --dependency), for
the backfill simulation: from when a job waiting on one takes its place in the queue. The
other schedulers' dependencies come in the same words, each read by its dialect as that
scheduler means it (`dialects.dependencies`: PBS depend, LSF bsub -w, Grid Engine
-hold_jid and -hold_jid_ad, Flux's after* dependencies).

Pure code over squeue's dependency field (`JobStatus.dependency`, `-O Dependency`): terms
of a kind and parent ids, each with its state, joined by ',' (every term must be met) or
'?' (any one): `afterok:12:13(unfulfilled),after:14+5(unfulfilled)`, `singleton(unfulfilled)`.

- `after`: once every parent has started (`+M`: M minutes after its start);
- `afterany`, `afterok`: once every parent has ended. An `afterok` parent is taken to
  succeed (a failed one would leave the job waiting for good: DependencyNeverSatisfied);
- `afternotok`: once a parent has failed, which, parents taken to succeed, never comes;
- `aftercorr`: an array's task by task, each after the parent's task of the same task id
  ends (task 5 after the parent's task 5, whatever of either has run): a parent task
  running ends with its walltime, one waiting as it runs in the plan (under a throttle
  `%N`, N at a time, each lane's back to back), one gone from the queue has ended (its
  child task is free), a whole parent array gone too (taken to have succeeded: squeue
  cannot tell; a failed task would hold its child task for good); a lane of several
  tasks may start once each of them, run in turn, finds its parent task ended. Where a
  record's task ids do not read, tasks pair in order;
- `singleton`: once every earlier job of its name and user has ended (one of them runs at
  a time, in submit order): their running ones and those waiting submitted before it
  (a smaller job id), wherever they wait in the queue. With none, it is met: the job
  waits on its other terms (or, none left, for slurmctld's next pass: not known when).

A parent still waiting is counted from its start or end in the simulation (`DependencyGate`
holds the parents by kind; `placement_sim._Sim` sets the job's earliest start when they
start). Chains of waiting parents are followed `MAX_CHAIN` deep; a cycle, which Slurm
refuses at submit but a stale or bad read could show, leaves its jobs out (nothing known
of when they come), as a parent not seen does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from .dialects.outputs_common import array_record, array_task_ids
from .model import JobStatus

MAX_CHAIN = 16  # waiting parents deep a chain is followed; deeper: left out, not known

# one term as squeue prints it: kind, ids (`12`, an array's `12_*` or task `12_3`, a delay
# `+5`; the other schedulers' ids as the dialects give them: PBS's `12.srv`, `12[].srv`,
# LSF's `12[3]`) joined by ':', and its state (unfulfilled, fulfilled, failed)
_TERM = re.compile(r"(after|afterany|afterok|afternotok|aftercorr):([\w.\[\]*+:-]+)"
                   r"\((\w+)\)|singleton\((\w+)\)")
_PARENT = re.compile(r"([0-9]+(?:\[[0-9]*\])?(?:\.[\w.-]+)?)(?:_([0-9]+|\*))?(?:\+([0-9]+))?")
# what of a parent each kind waits for: its start, its (last task's) end, its first task's
# end, or never (a failure, parents taken to succeed)
_EVENT = {"after": "start", "afterany": "end", "afterok": "end", "aftercorr": "first_end",
          "afternotok": "never", "singleton": "end"}

# (event, parent id, rank) -> when, in seconds from now; None: not known (yet). rank: of
# "first_end", which of the parent's tasks' ends, soonest first (an aftercorr lane's)
When = Callable[[str, str, int], float | None]


@dataclass(frozen=True)
class Term:
    """One term still to be met: its kind and its parents (id, delay in seconds); a
    singleton's parents are found in the queue (`singleton_parents`)."""

    kind: str
    parents: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Dependency:
    """A waiting job's dependency still to be met: its terms, all of them (`every`) or
    any one."""

    terms: tuple[Term, ...]
    every: bool

    def parent_ids(self) -> list[str]:
        return list(dict.fromkeys(p for t in self.terms for p, _ in t.parents))

    def kinds(self) -> set[str]:
        return {t.kind for t in self.terms}


def parse_dependency(text: str | None) -> Dependency | None:
    """squeue's dependency field -> the terms still to be met; None for none, a field that
    does not read, or both joiners at once (not read). Met terms (fulfilled) are dropped;
    met, a term joined by '?' frees the job (then no terms, `every` False)."""
    text = (text or "").strip()
    if not text or text == "(null)" or ("," in text and "?" in text):
        return None
    every = "?" not in text
    terms: list[Term] = []
    for part in text.split("," if every else "?"):
        m = _TERM.fullmatch(part.strip())
        if m is None:
            return None
        state = (m.group(3) or m.group(4)).lower()
        if state == "fulfilled":
            if not every:
                return Dependency((), False)
            continue
        if state != "unfulfilled":
            return None  # failed: it never starts (its reason says so)
        if m.group(4) is not None:
            terms.append(Term("singleton"))
            continue
        parents = []
        for tok in m.group(2).split(":"):
            p = _PARENT.fullmatch(tok)
            if p is None:
                return None
            task = p.group(2)
            pid = p.group(1) if task in (None, "*") else f"{p.group(1)}_{task}"
            parents.append((pid, float(p.group(3) or 0) * 60.0))
        terms.append(Term(m.group(1), tuple(parents)))
    return Dependency(tuple(terms), every)


def ids_of(native_id: str) -> tuple[str, ...]:
    """The parent ids a queue record answers to: a plain job's own; an array task's
    (`12_3`; LSF's element `12[3]`, Grid Engine's task `12.3`) own and its array's (`12`);
    an array's waiting record (`12_[4-9]`, Grid Engine's `12.4-9:1`) its array's."""
    if "_" in native_id:
        arr = array_record(native_id)
        one = arr is not None and arr[1] == 1 and "[" not in native_id
    elif _TASK.fullmatch(native_id):
        arr = array_record(native_id)
        one = arr is not None and arr[1] == 1 and not re.search(r"[-:,]", native_id)
    else:
        return (native_id,)
    if arr is None:
        return (native_id,)
    return (native_id, arr[0]) if one else (arr[0],)


# an LSF element's record (`12[3]`) or a Grid Engine task's or waiting range's (`12.3`,
# `12.4-9:1`); PBS's ids (`12.srv`, `12[].srv`) are no task's
_TASK = re.compile(r"[0-9]+\[[0-9]+\]|[0-9]+\.[0-9][0-9,:-]*")


def singleton_parents(j: JobStatus, running: Iterable[JobStatus],
                      waiting: Iterable[JobStatus]) -> tuple[tuple[str, float], ...]:
    """A singleton job's parents, as slurmctld finds them: the jobs of its name and user
    running (or suspended), and those waiting that were submitted before it (a smaller job
    id, whatever their place in the queue), so that one runs at a time, in submit order."""
    if not j.name or not j.user or (own := _job_number(j.native_id)) is None:
        return ()
    same = [r.native_id for r in running
            if r.name == j.name and r.user == j.user and r.native_id != j.native_id]
    same += [w.native_id for w in waiting
             if w.name == j.name and w.user == j.user and w.native_id != j.native_id
             and (n := _job_number(w.native_id)) is not None and n < own]
    return tuple((i, 0.0) for i in dict.fromkeys(same))


def _job_number(native_id: str | None) -> int | None:
    """A Slurm record's job id as a number (an array's or a hetjob's leading one: `12_3`,
    `12_[4-9%2]`, `12+1` -> 12); None for none."""
    m = re.match(r"[0-9]+", native_id or "")
    return int(m.group()) if m else None


@dataclass(eq=False)
class DependencyGate:
    """A waiting job's dependency with its parents found: the running ones' starts and
    ends (seconds from now; `task_ends`: each of its tasks', soonest first), and the
    waiting ones (`queued`: ids the simulation answers for). `rank`: the lane of an array
    it stands for (aftercorr: lane k waits for the parent's k-th task end). `at` says from
    when the job may start."""

    dependency: Dependency
    starts: dict[str, float] = field(default_factory=dict)
    ends: dict[str, float] = field(default_factory=dict)
    task_ends: dict[str, tuple[float, ...]] = field(default_factory=dict)
    queued: frozenset[str] = frozenset()
    gone: frozenset[str] = frozenset()  # aftercorr parent arrays gone: taken to succeed
    rank: int = 0
    stride: int = 1  # aftercorr: the lanes of its array (lane k runs tasks k, k+stride ...)
    lane_tasks: int = 1  # its lane's tasks, run back to back
    task_s: float = 0.0  # each task's run
    # aftercorr by task id: the job's waiting task ids, in order (rank k: the k-th), and
    # each parent's running tasks' ends by task id and its waiting task ids, in order
    own_tasks: tuple[range, ...] = ()
    parent_tasks: dict[str, tuple[dict[int, float], tuple[range, ...]]] = field(
        default_factory=dict)

    def at(self, queued_when: When | None = None) -> float | None:
        """From when the job may start (seconds from now): math.inf never (a failure
        waited for); None not known yet (a waiting parent the simulation has not started,
        `queued_when` answering for those)."""
        times = [self._term_at(t, queued_when) for t in self.dependency.terms]
        if not times:
            return 0.0  # met
        if self.dependency.every:
            if math.inf in times:
                return math.inf
            return None if any(x is None for x in times) else max(times)  # type: ignore[type-var]
        known = [x for x in times if x is not None]  # the first met: a later one may be sooner
        return min(known) if known else None

    def moved(self, ends: dict[str, float]) -> DependencyGate:
        """This gate with its running parents ending as `ends` says (by the running jobs'
        native ids: a calibrated view's ends); a parent not there keeps its end."""
        by_pid: dict[str, list[float]] = {}
        for nid, end in ends.items():
            for pid in ids_of(nid):
                if pid in self.ends:
                    by_pid.setdefault(pid, []).append(end)
        tasks = {**self.task_ends, **{p: tuple(sorted(e)) for p, e in by_pid.items()}}
        paired = self.parent_tasks
        if paired and any(pid in paired for nid in ends for pid in ids_of(nid)):
            paired = {p: (dict(by_id), waits) for p, (by_id, waits) in paired.items()}
            for nid, end in ends.items():
                task = _one_task(nid)
                for pid in ids_of(nid):
                    if task is not None and pid in paired and task in paired[pid][0]:
                        paired[pid][0][task] = end
        return replace(self, ends={**self.ends, **{p: max(e) for p, e in by_pid.items()}},
                       task_ends=tasks, parent_tasks=paired)

    def _term_at(self, term: Term, queued_when: When | None) -> float | None:
        event = _EVENT[term.kind]
        if event == "never":
            return math.inf
        out = 0.0
        for pid, delay in term.parents:
            if event == "first_end":  # each of the lane's tasks after its parent task
                got = self._lane_at(pid, queued_when)
            else:
                got = self._when(event, pid, queued_when)
            if got is None:
                return None
            out = max(out, got + delay)
        return out

    def _lane_at(self, pid: str, queued_when: When | None) -> float | None:
        """From when this lane may start for parent `pid` (aftercorr): its m-th task, run
        m tasks after its start, once the parent's task of its rank has ended."""
        out = 0.0
        for m in range(self.lane_tasks):
            got = self._when("first_end", pid, queued_when, self.rank + m * self.stride)
            if got is None:
                return None
            out = max(out, got - m * self.task_s)
        return out

    def _when(self, event: str, pid: str, queued_when: When | None, rank: int = 0
              ) -> float | None:
        if event == "first_end" and pid in self.parent_tasks \
                and (task := _nth(self.own_tasks, rank)) is not None:
            by_id, waits = self.parent_tasks[pid]  # the parent's task of the same id
            if task in by_id:
                return by_id[task]
            if (i := _index(waits, task)) is not None:
                return queued_when(event, pid, i) if queued_when is not None else None
            return 0.0  # gone from the queue: it has ended
        if event == "first_end":  # its task of this rank (the last it has, beyond)
            tasks = self.task_ends.get(pid, ())
            running = tasks[min(rank, len(tasks) - 1)] if tasks else None
            if pid in self.queued and (running is None or rank >= len(tasks)):
                # past its running tasks: its waiting ones' (the simulation's)
                more = queued_when(event, pid, rank - len(tasks)) \
                    if queued_when is not None else None
                return more
            return running
        running = (self.starts if event == "start" else self.ends).get(pid)
        if pid not in self.queued:
            return running
        queued = queued_when(event, pid, 0) if queued_when is not None else None
        if queued is None:
            # an array's tasks running and waiting: the first start is known
            return running if event == "start" else None
        if running is None:
            return queued
        return max(running, queued) if event == "end" else min(running, queued)


def gate_for(j: JobStatus, dependency: Dependency, running: list[tuple[JobStatus, float]],
             starts: dict[str, float], waiting: set[str], listed: Iterable[JobStatus] = ()
             ) -> DependencyGate | None:
    """The gate of waiting job `j` on `dependency` (singleton's parents already in its
    terms): `running` each running job with its end (seconds from now), `starts` their
    starts (negative), `waiting` the ids the queue's waiting jobs answer to (`ids_of`),
    `listed` those jobs (an aftercorr parent's waiting task ids). None when a parent is
    neither running nor waiting (not seen: nothing known), but for an aftercorr parent
    array wholly gone from the queue: ended, taken to have succeeded (squeue cannot say;
    a failed task would leave its child task waiting for good), so it frees the child."""
    ends: dict[str, float] = {}
    tasks: dict[str, list[float]] = {}
    started: dict[str, float] = {}
    wanted = set(dependency.parent_ids())
    for r, end in running:
        for pid in ids_of(r.native_id):
            if pid in wanted:
                ends[pid] = max(ends.get(pid, end), end)
                tasks.setdefault(pid, []).append(end)
                if r.native_id in starts:
                    started[pid] = min(started.get(pid, starts[r.native_id]),
                                       starts[r.native_id])
    queued = frozenset(p for p in wanted if p in waiting)
    gone = {p for p in wanted if p not in ends and p not in queued}
    if gone - _only_aftercorr(dependency):
        return None
    for pid in gone:  # an aftercorr parent array gone from the queue: ended, taken to
        ends[pid] = 0.0  # have succeeded (squeue cannot tell), so every child task is free
        tasks[pid] = [0.0]
    gate = DependencyGate(dependency, started, ends,
                          {p: tuple(sorted(e)) for p, e in tasks.items()}, queued,
                          frozenset(gone))
    if "aftercorr" in dependency.kinds() and (own := array_task_ids(j.native_id or "")):
        corr = {p for t in dependency.terms if t.kind == "aftercorr" for p, _ in t.parents}
        paired = {p: got for p in corr
                  if (got := _parent_tasks(p, running, listed)) is not None}
        if paired:
            gate = replace(gate, own_tasks=own, parent_tasks=paired)
    return gate


def _only_aftercorr(dependency: Dependency) -> set[str]:
    """The parents `dependency` names in aftercorr terms only."""
    corr = {p for t in dependency.terms if t.kind == "aftercorr" for p, _ in t.parents}
    return corr - {p for t in dependency.terms if t.kind != "aftercorr"
                   for p, _ in t.parents}


def _parent_tasks(pid: str, running: list[tuple[JobStatus, float]],
                  listed: Iterable[JobStatus]
                  ) -> tuple[dict[int, float], tuple[range, ...]] | None:
    """Array `pid`'s running tasks' ends by task id and its waiting task ids, in order;
    None when a record of it does not say its task ids (tasks then pair in order)."""
    by_id: dict[int, float] = {}
    for r, end in running:
        if pid in ids_of(r.native_id):
            if (task := _one_task(r.native_id)) is None:
                return None
            by_id[task] = end
    waits: list[range] = []
    for w in listed:
        if pid in ids_of(w.native_id):
            if (ids := array_task_ids(w.native_id)) is None:
                return None
            waits.extend(ids)
    return by_id, tuple(waits)


def _one_task(native_id: str) -> int | None:
    """The task id of a record of one array task (`12_3`, `12[3]`, `12.3`), else None."""
    ids = array_task_ids(native_id)
    return ids[0].start if ids and len(ids) == 1 and len(ids[0]) == 1 else None


def _nth(ids: tuple[range, ...], k: int) -> int | None:
    """The k-th task id of `ids` (0: the first), None past them."""
    for r in ids:
        if k < len(r):
            return r[k]
        k -= len(r)
    return None


def _index(ids: tuple[range, ...], task: int) -> int | None:
    """Where task id `task` comes in `ids` (0: the first), None when not there."""
    before = 0
    for r in ids:
        if task in r:
            return before + r.index(task)
        before += len(r)
    return None


def chain_depths(gates: dict[str, DependencyGate], answers: dict[str, list[str]]
                 ) -> dict[str, int]:
    """How deep each gated job's chain of waiting parents goes (by native id; 0: every
    parent runs); a job in a cycle, deeper than MAX_CHAIN, or behind a waiting parent not
    gated and not in the queue is left out (nothing known of when it comes). `answers`:
    parent id -> the queue's job ids answering to it."""
    depth: dict[str, int] = {}
    doomed: set[str] = set()

    def visit(jid: str, path: set[str]) -> int | None:
        if jid in depth:
            return depth[jid]
        if jid in doomed or jid in path or len(path) > MAX_CHAIN:
            doomed.update(path | {jid})  # a cycle, or too deep: every job on the path
            return None
        gate = gates.get(jid)
        if gate is None:
            return 0  # a waiting parent of no dependency
        deepest = 0
        for pid in gate.queued:
            if not answers.get(pid):  # waiting, but never started here (held for good)
                doomed.add(jid)
                return None
            for parent in answers[pid]:
                d = visit(parent, path | {jid})
                if d is None:
                    doomed.add(jid)
                    return None
                deepest = max(deepest, d + 1)
        if deepest > MAX_CHAIN:
            doomed.add(jid)
            return None
        depth[jid] = deepest
        return deepest

    for jid in gates:
        visit(jid, set())
    return {j: d for j, d in depth.items() if j not in doomed}
