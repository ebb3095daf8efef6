"""Follow jobs without loading login nodes.

Push: each job script reports its own start and end to a per-user event file on the
site's shared filesystem; one long-lived SSH channel per site follows it (`tail -F`).
Safety net: one batched scheduler query per site (all tracked jobs, then accounting for
those gone from the queue) at a slow adaptive interval, for jobs that never run their
wrapper (cancelled while pending, failed to start, node failure, preemption), and just
after each running job's time limit (LIMIT_CHECKS_S): a scheduler that kills at the limit
with SIGKILL (Grid Engine's h_rt) leaves the wrapper no line to write.
A slurmrestd site's event channel is its file door (`files:`), while its stream is up (a door
that runs no command has none). A site without one is followed by that query alone, at an
adaptive interval: `min_poll_s` after a change or a new job, doubling while nothing
changes, up to `poll_interval_s`; while a job whose end someone awaits runs (a workflow's
step, whose next step or the workflow's end waits on it; a job a face waits on: `diamond
wait`, a notebook's job card, an agent's wait), no longer than a tenth of its run so far,
and at most AWAITED_MAX_S (its end is learned that soon, not a poll interval late). A job a
face waits on is awaited only while that wait lasts; a queued job keeps the slow pace.
A job asked to cancel, or whose wrapper reported a signal's end, ends when its scheduler says
so (its end line is not its ending), on any site: it is asked about at the doubling pace from
`min_poll_s` until it has ended (`end_due`). Slurm shows a cancelled running job COMPLETING
while its processes are killed (seconds on a busy node, KillWait for one that ignores
SIGTERM): the poll just after the cancel found it still running, and the end was learned a
whole poll interval late (a workflow's gang member, cancelled by a retry, was still shown
RUNNING after its workflow had completed).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import math
import re
import time
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .aio import KeptTasks
from .dialects.flux_ids import flux_id_form, flux_id_value
from .digits import ascii_digits
from .job_dependencies import awaited_tasks
from .log_lines import one_line_logger
from .model import DiamondError, Job, JobState, JobStatus, SiteSnapshot, task_ids
from .sites import EventChannel, carries_token, owns
from .wrapper import EventLine, event_mac, parse_event_line, wrapper_prologue

if TYPE_CHECKING:
    from .journal import Journal
    from .sites import Site

log = one_line_logger(__name__)

__all__ = ["EventLine", "SiteMonitor", "event_mac", "parse_event_line", "same_native",
           "wrapper_prologue"]

MISSES_BEFORE_LOST = 3
EARLY_LINES_KEPT = 1000  # verified lines whose job's submit has not returned yet
# polls this long after a running job's time limit (its start + its walltime), until one
# finds it ended: the scheduler needs a moment to kill it and say so
LIMIT_CHECKS_S = (2.0, 5.0, 15.0, 40.0)
# a job that states no limit runs to its queue's (Grid Engine's h_rt, Slurm's DefaultTime or
# MaxTime): where its queue is not known, the checks follow at most this many of the limits
# of the queues it may run in, shortest first
QUEUE_LIMITS_FOLLOWED = 4
# without an event channel, a running job whose end is awaited is asked about after at most
# this share of its run so far, and at least every AWAITED_MAX_S (never under min_poll_s)
AWAITED_SHARE = 0.1
AWAITED_MAX_S = 5.0


def _numeric_id(text: str) -> int | None:
    """A job id as a number where its spelling varies: "123.server" (PBS), Flux's
    decimal, hex, dotted hex, KVS key, F58 ("ƒ2Xh5") or words."""
    if flux_id_form(text) in ("f58", "hex", "dothex", "kvs", "words"):
        return flux_id_value(text)
    t = text.split(".")[0] if re.fullmatch(r"[0-9]+\.[\w.-]+", text) else text
    return int(t) if t.isascii() and ascii_digits(t) else None


def same_native(line_id: str, job_id: str) -> bool:
    """A wrapper's id against the submitted one, whatever the spelling; a task of a job
    array is the array's (PBS's subjob `123[4].server` is `123[].server`'s)."""
    if line_id == job_id:
        return True
    line_id, job_id = (_ARRAY_INDEX.sub(r"\1", x, count=1) for x in (line_id, job_id))
    if line_id == job_id:
        return True
    a, b = _numeric_id(line_id), _numeric_id(job_id)
    return a is not None and a == b


_ARRAY_INDEX = re.compile(r"^([0-9]+)\[[0-9]*\]")  # 123[4].server, 123[].server, 123[4] (LSF)


class SiteMonitor:
    """Follows one site's jobs; what it learns goes into the journal."""

    def __init__(self, journal: Journal, site: Site, poll_interval_s: float,
                 min_poll_s: float) -> None:
        self.journal, self.site = journal, site
        self.poll_interval_s, self.min_poll_s = poll_interval_s, min_poll_s
        # job (its token, else its id: both survive a rename) -> native id. Keyed by job, as
        # a reused native id can name an older unfinished job and a newer one at once.
        self.tracked: dict[str, str] = {}
        self.misses: dict[str, int] = {}
        self._kick = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._lines_seen = 0
        self.stream_connected = asyncio.Event()
        self.polls = 0
        # token -> the job's event secret (None: not on the site); kept in memory only
        self._secrets: dict[str, str | None] = {}
        self._early: dict[str, list[EventLine]] = {}  # verified, before the native id is known
        self._replays = KeptTasks()  # `_replay_early` runs `track` started
        self._task_failures: dict[str, int] = {}  # job id -> a failed array task's exit code
        self.rejected_lines = 0
        self.quiet_polls = 0  # polls in a row that changed nothing (no event channel)
        self.trouble: str | None = None  # why the last query failed (None: the site answered)
        self.trouble_since: float | None = None  # monotonic time of the first failure in a row
        self.last_poll_at = 0.0  # epoch seconds of the last poll's start
        self.awaited: set[str] = set()  # tracked keys whose end is awaited until it comes
        self.ending: set[str] = set()  # tracked keys whose end the scheduler says soon
        self.waiters: Counter[str] = Counter()  # tracked keys -> the waits under way on them
        self._repace = asyncio.Event()  # the pace may have quickened: the next poll's time anew
        # tracked key -> (time limit s, queue) of the job as the last poll saw it running
        self._seen_running: dict[str, tuple[int | None, str | None]] = {}
        self._viewed: tuple[SiteSnapshot | None, dict[str, list[JobStatus]]] = (None, {})

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [asyncio.ensure_future(self._poll_loop())]
            if self.site.event_channel is not EventChannel.NONE:
                self._tasks.append(asyncio.ensure_future(self._follow()))

    def _interval(self, now: float | None = None) -> float:
        """Time to the next poll: fixed where the event channel reports starts and ends,
        unless a job's end is due from its scheduler (`end_due`); else short after a
        change, doubling while nothing changes, and no longer than an awaited running job
        calls for (`_awaited_pace`)."""
        adaptive = min(self.min_poll_s * 2 ** min(self.quiet_polls, 30), self.poll_interval_s)
        if self._ends_pushed():
            return adaptive if self.ending & self.tracked.keys() else self.poll_interval_s
        return min(adaptive, self._awaited_pace(now))

    def _awaited_pace(self, now: float | None = None) -> float:
        """The longest wait that learns an awaited running job's end soon enough: a tenth of
        its run so far, at most AWAITED_MAX_S, never under `min_poll_s` (inf: none runs)."""
        now = time.time() if now is None else now
        pace = math.inf
        for key in (self.awaited | set(self.waiters)) & set(self.tracked):
            job = self._job(key)
            if job is None or job.state != JobState.RUNNING or job.started_at is None:
                continue
            ran = max(0.0, now - job.started_at.timestamp())
            pace = min(pace, max(self.min_poll_s, min(AWAITED_SHARE * ran, AWAITED_MAX_S)))
        return pace

    def await_end(self, job: Job) -> None:
        """`job`'s end is awaited until it comes (a workflow's step): followed, and on a site
        without an event channel asked about at the awaited pace while it runs."""
        key = self._awaitable(job)
        if key is not None and key not in self.awaited:
            self.awaited.add(key)
            self._repace.set()

    @contextlib.contextmanager
    def waiting_on(self, job: Job) -> Iterator[None]:
        """While the block runs, someone waits on `job`'s end (`await_end`'s pace); after it,
        the pace is the adaptive one again unless another wait or a workflow awaits it."""
        key = self._awaitable(job)
        if key is None:
            yield
            return
        self.waiters[key] += 1
        if self.waiters[key] == 1:
            self._repace.set()
        try:
            yield
        finally:
            self.waiters[key] -= 1
            if self.waiters[key] <= 0:
                del self.waiters[key]

    def _awaitable(self, job: Job) -> str | None:
        """The job followed; its key where an awaited pace would quicken its polls (None on a
        site whose event channel reports its end, or a job with no scheduler id yet)."""
        key = job.token or job.id
        if key not in self.tracked:
            self.track(job)
        pushed_always = self.site.event_channel is EventChannel.ALWAYS
        return None if pushed_always or key not in self.tracked else key

    def _ends_pushed(self) -> bool:
        """Whether the jobs' own end lines reach the monitor: the site's event channel (one
        that may be refused, a slurmrestd site's file door, only while its stream is up)."""
        channel = self.site.event_channel
        return channel is EventChannel.ALWAYS or (channel is EventChannel.OPTIONAL
                                                  and self.stream_connected.is_set())

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self._replays.close(cancel=False)  # early lines waiting are applied

    def track(self, job: Job) -> None:
        if job.native_id:
            self.tracked[job.token or job.id] = job.native_id
            self.quiet_polls = 0
            self.start()
        if self._early:
            self._replays.start(self._replay_early())

    def expect(self, token: str, secret: str) -> None:
        """The secret of a job being submitted: its wrapper's lines are checked with it."""
        self._secrets[token] = secret

    def kick(self) -> None:
        """Ask for a safety-net poll soon (after a cancel, a signal-killed wrapper, ...)."""
        self._kick.set()

    def end_due(self, job: Job) -> None:
        """`job` was asked to cancel, or its wrapper was killed by a signal: its end is its
        scheduler's to say, and comes soon. Polled now, then at the doubling pace from
        `min_poll_s` (a site whose end lines are pushed included) until it has ended."""
        self.track(job)  # (the doubling starts over)
        if (key := job.token or job.id) in self.tracked:  # (one with a scheduler id)
            self.ending.add(key)
        self.kick()

    # -- push channel -------------------------------------------------------------
    async def _follow(self) -> None:
        delay = 0.5
        while True:
            try:
                await self.site.know_home()
                files = self.site.file_transport  # (a slurmrestd site's: its file door)
                # the event file and its directory are private (umask 077), created once
                await files.run(
                    ["sh", "-c", 'umask 077 && mkdir -p -- "$1" && touch -- "$2" && '
                     'chmod 600 -- "$2"', "sh", self.site.workdir, self.site.event_file],
                    check=True, timeout=30.0)
                argv = ["tail", "-n", f"+{self._lines_seen + 1}", "-F", "--",
                        self.site.event_file]
                self.stream_connected.set()
                async for line in files.open_stream(argv):
                    self._lines_seen += 1
                    delay = 0.5
                    await self._on_line(line)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # dropped connection: reconnect with backoff, then poll
                log.info("%s: event stream lost (%s); reconnecting", self.site.name, e)
            was_streaming = self.stream_connected.is_set()
            self.stream_connected.clear()
            if was_streaming or self.site.event_channel is not EventChannel.OPTIONAL:
                self.kick()  # anything may have happened while we were blind
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

    async def _secret(self, token: str) -> str | None:
        """The job's secret: from memory, else (after a restart) from its job directory."""
        if token not in self._secrets:
            try:
                raw = await self.site.file_transport.get_bytes(
                    f"{self.site.job_dir(token)}/secret")
                text = raw.decode("ascii", "replace").strip()
                self._secrets[token] = text if re.fullmatch(r"[0-9a-f]{32,128}", text) else None
            except (DiamondError, OSError):
                self._secrets[token] = None
        return self._secrets[token]

    async def _on_line(self, line: str) -> None:
        ev = parse_event_line(line)
        if ev is None:
            return
        job = self.journal.job_by_token(ev.token)
        if job is None or job.site != self.site.name or job.state.terminal:
            return  # (a finished job's old lines, replayed from the file's start: no news)
        secret = await self._secret(ev.token)
        if secret is None or not hmac.compare_digest(event_mac(secret, ev.body), ev.mac):
            self.rejected_lines += 1
            log.warning("%s: ignored an event line for %s that its job did not write",
                        self.site.name, job.id)
            return
        if job.native_id is None:  # the submit has not returned yet: apply once bound
            early = self._early.setdefault(ev.token, [])
            if len(early) < EARLY_LINES_KEPT:
                early.append(ev)
            return
        self._apply_line(job, ev)

    async def _replay_early(self) -> None:
        for token in list(self._early):
            job = self.journal.job_by_token(token)
            if job is None or job.native_id is not None:
                for ev in self._early.pop(token, []):
                    if job is not None:
                        self._apply_line(job, ev)

    def _apply_line(self, job: Job, ev: EventLine) -> None:
        job_id, native_id = job.id, job.native_id or ""
        tasks = task_ids(job) or {}  # a Flux site's array: each task a job of its own id
        if not same_native(ev.native_id, native_id) and \
                not any(same_native(ev.native_id, t) for t in tasks.values()):
            self.rejected_lines += 1
            log.warning("%s: ignored an event line for %s from job %s", self.site.name,
                        job_id, ev.native_id)
            return
        if ev.kind == "start":
            self.journal.apply(job_id, JobState.RUNNING, started_at=ev.at, source="wrapper")
        elif job.spec is not None and job.spec.array is not None:
            if ev.rc:  # kept for an outcome whose exit code the scheduler lost
                self._task_failures.setdefault(job_id, ev.rc)
            task = next((i for i, t in tasks.items() if same_native(ev.native_id, t)), None)
            if task is not None and ev.rc < 128:  # its own end: kept should flux purge it
                self.journal.apply_tasks(job_id, {task: JobState.COMPLETED if ev.rc == 0
                                                  else JobState.FAILED})
            self.kick()  # one task of an array ended: the scheduler knows if all have
        elif self.journal.cancel_requested(job_id):
            # asked to cancel: the code its shell reports is no sure ending (a signal may
            # reach the wrapper anywhere; one written before the job's own end line once
            # said "exit 1"); the scheduler knows whether the cancel or the job's own end
            # came first
            self.end_due(job)
        elif ev.rc == 0:
            self.journal.apply(job_id, JobState.COMPLETED, ended_at=ev.at, exit_code=0,
                            source="wrapper")
        elif ev.rc < 128:
            self.journal.apply(job_id, JobState.FAILED, ended_at=ev.at, exit_code=ev.rc,
                            reason=f"exit code {ev.rc}", source="wrapper")
        else:  # killed by a signal: cancelled, timed out or preempted; the scheduler knows
            self.end_due(job)

    # -- safety net --------------------------------------------------------------
    def until_limit_check(self, now: float | None = None) -> float | None:
        """Seconds (epoch clock) to the next poll a running job's time limit calls for: the
        first of LIMIT_CHECKS_S after its limit that no poll has started since; None when
        no followed job is running with a time limit."""
        now = time.time() if now is None else now
        due: list[float] = []
        for key, state in self._states(list(self.tracked)).items():
            job = self._job(key) if state == JobState.RUNNING else None
            if job is None or job.state != JobState.RUNNING or job.started_at is None:
                continue
            for limit in self._limits_s(key, job):
                end = job.started_at.timestamp() + limit
                due += [t for c in LIMIT_CHECKS_S if (t := end + c) > self.last_poll_at][:1]
        return max(0.0, min(due) - now) if due else None

    def _limits_s(self, key: str, job: Job) -> list[int]:
        """The time limits (s) a running job may be killed at: the one it asked; else the
        one the scheduler said it runs to (a poll or the last queue view: Slurm fills in
        DefaultTime); else its queue's default or maximum (a Grid Engine queue's h_rt kills
        a job that asked none with SIGKILL, no end line written), from the site's last
        snapshot: the queue it was seen in or was sent to, else every queue (at most
        QUEUE_LIMITS_FOLLOWED, the shortest). [] when none is
        known (no snapshot taken since the engine started, or no limit anywhere)."""
        if job.spec and job.spec.resources.walltime_s:
            return [job.spec.resources.walltime_s]
        seen_limit, seen_queue = self._seen_running.get(key, (None, None))
        snap = self.site.last_snapshot
        if snap is not None and job.native_id:
            if self._viewed[0] is not snap:  # the last view's jobs by id, made once a view
                self._viewed = (snap, {})
                for st in snap.jobs:
                    self._viewed[1].setdefault(st.native_id, []).append(st)
            for st in self._viewed[1].get(job.native_id, []):
                if owns(st, job) and st.state == JobState.RUNNING:
                    seen_limit = seen_limit or st.walltime_s
                    seen_queue = seen_queue or st.partition
        if seen_limit:
            return [seen_limit]
        if snap is None:
            return []
        # a Grid Engine `-q` list (`all.q,long.q`, instances `all.q@node01`) names queues
        named = {q.split("@")[0].strip() for q in (
            seen_queue or (job.spec.queue if job.spec else None) or "").split(",")} - {""}
        # sent to no queue: any may take it (Grid Engine has no default queue); a few polls
        # too many cost less than an end learnt at the slow poll
        queues = [p for p in snap.partitions if p.name in named or not named]
        # a Grid Engine queue's hosts may each have an h_rt of their own
        limits = {t for p in queues for t in (p.default_time_s or p.max_time_s,
                                              *(p.instance_time_s or {}).values())}
        return sorted(t for t in limits if t)[:QUEUE_LIMITS_FOLLOWED]

    async def _poll_loop(self) -> None:
        interval = gap = self.min_poll_s  # gap: the one chosen after the last poll
        while True:
            limit_check = self.until_limit_check()
            if limit_check is not None and limit_check < interval:
                interval = limit_check  # a job at its time limit: looked at just after it
            woken = await self._kicked_within(interval)
            if self._repace.is_set() and not self._kick.is_set():
                # a wait began: the next poll comes at the pace now due, from the last one
                # (a site that does not answer keeps its backoff)
                self._repace.clear()
                pace = gap if self.trouble is not None else min(gap, self._interval())
                interval = max(0.0, self.last_poll_at + pace - time.time())
                if interval > 0.0:
                    continue
            elif woken:
                await asyncio.sleep(self.min_poll_s)  # batch kicks that arrive together
            self._kick.clear()
            self._repace.clear()
            self._drop_finished()
            if not self.tracked:
                interval = gap = self.poll_interval_s if self._ends_pushed() \
                    else self.min_poll_s
                continue
            try:
                changed = await self.poll_once()
                self.quiet_polls = 0 if changed else self.quiet_polls + 1
                interval = gap = self._interval()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.info("%s: poll failed: %s", self.site.name, e)
                interval = gap = min(max(gap * 2, self.min_poll_s), self.poll_interval_s)

    async def _kicked_within(self, timeout: float) -> bool:
        # asyncio.wait, not wait_for: on 3.11 wait_for can swallow a cancellation that
        # arrives together with the kick, and stop() would then hang
        # (woken by a kick, or by a quickened pace: `_repace`)
        waiters = {asyncio.ensure_future(self._kick.wait()),
                   asyncio.ensure_future(self._repace.wait())}
        try:
            done, _ = await asyncio.wait(waiters, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            return bool(done)
        finally:
            for w in waiters:
                w.cancel()

    def _drop_finished(self) -> None:
        for key, state in self._states(list(self.tracked)).items():
            if state is None or state.terminal:  # unknown (no longer followed), or ended
                self.tracked.pop(key, None)
                self._seen_running.pop(key, None)
                if state is not None:
                    self.misses.pop(key, None)
        self.awaited &= set(self.tracked)
        self.ending &= set(self.tracked)
        # a failed task's exit code matters only until its array's outcome is applied: kept
        # for the engine's life, one entry per failed array ever seen
        for job_id in list(self._task_failures):
            try:
                ended = self.journal.job(job_id, read_only=True).state.terminal
            except DiamondError:  # no longer in the store
                ended = True
            if ended:
                del self._task_failures[job_id]
        # a job's secret and its early lines serve only until it ends: an ended job's lines
        # are ignored (`_on_line`), so neither is kept for the engine's life
        tokens = [*self._secrets, *self._early]
        states = self.journal.states_of_tokens(tokens)
        for token in tokens:
            if (state := states.get(token)) is None or state.terminal:
                self._secrets.pop(token, None)
                self._early.pop(token, None)

    def _states(self, keys: list[str]) -> dict[str, JobState | None]:
        """The stored state of each followed job of `keys` (its token, else its id): the
        tokens' read together, no job decoded; None for one not stored (no longer followed,
        as `_job` does)."""
        found = self.journal.states_of_tokens(keys)
        out: dict[str, JobState | None] = {}
        for key in keys:
            if (state := found.get(key)) is None and (job := self._job(key)) is not None:
                state = job.state  # followed by its id (a job without a token)
            out[key] = state
        return out

    def _job(self, key: str) -> Job | None:
        """The followed job `key`, shared and unchangeable (read at every poll: decoded
        again only when its row changed); None, and no longer followed, when unknown."""
        try:
            return self.journal.job(key, read_only=True)
        except DiamondError:
            self.tracked.pop(key, None)
            return None

    def _cancel_intent(self, job: Job) -> tuple[bool, str | None]:
        """Whether the engine asked the scheduler to cancel this job, and the reason recorded
        with the request (a hedged copy's loser names the copy that started first). Some
        schedulers say no more: Grid Engine forgets a deleted pending job and records a
        killed running one like any job killed by SIGKILL."""
        intent = self.journal.cancel_intent(job.id)
        return intent is not None, (intent.data or {}).get("reason") if intent else None

    def _awaited_tasks(self) -> dict[str, set[str]]:
        """The array tasks the site's waiting jobs wait for (array's native id -> indexes):
        read only when a followed array's task left the queue unseen ended."""
        site = self.site.name
        return awaited_tasks(site, self.journal.store.waiting_jobs(site),
                             self.site.cfg.scheduler)

    def _failed(self, error: Exception) -> None:
        """Remember why the site could not be asked (its name, which the transports put
        first, left out), and since when it has not answered."""
        reason = " ".join(str(error).split()) or type(error).__name__
        prefix = f"{self.site.name}: "
        self.trouble = reason[len(prefix):] if reason.startswith(prefix) else reason
        if self.trouble_since is None:
            self.trouble_since = time.monotonic()

    def trouble_for_s(self) -> float:
        """Seconds since the site last answered (0.0 while it answers)."""
        return 0.0 if self.trouble_since is None else time.monotonic() - self.trouble_since

    async def poll_once(self) -> int:
        """One batched query for every tracked job; returns how many changed."""
        jobs = [j for j in (self._job(k) for k in list(self.tracked)) if j and j.native_id]
        if not jobs:
            return 0
        self.polls += 1
        changed = 0
        t0 = self.last_poll_at = time.time()
        seen: dict[str, list[JobStatus]] = {}
        natives = sorted({j.native_id for j in jobs if j.native_id})
        unasked: set[str] = set()  # gone from the queue, accounting not reached this poll
        try:
            found = await self.site.statuses(natives, following=jobs, unasked=unasked,
                                             awaited=self._awaited_tasks)
        except DiamondError as e:  # unreachable, or no answer: the poll loop asks again later
            self._failed(e)
            raise
        self.trouble = self.trouble_since = None
        for st in found:
            seen.setdefault(st.native_id, []).append(st)
        for job in jobs:
            key = job.token or job.id
            if key not in self.tracked:
                continue
            # another job holding the same native id (it was reused) is not this one
            mine = [s for s in seen.get(job.native_id, []) if owns(s, job)]
            if mine:  # its own token's record first; else accounting's last (the newest)
                st = ([s for s in mine if carries_token(s, job)] or mine)[-1]
                self.misses.pop(key, None)
                if st.state == JobState.RUNNING:
                    self._seen_running[key] = (st.walltime_s, st.partition)
                state, reason = st.state, st.reason
                # killed (by a signal, or ended by the scheduler: no exit code of its own)
                killed = state == JobState.FAILED and (st.exit_code or 128) >= 128
                if killed or state in (JobState.CANCELLED, JobState.FAILED):
                    asked, why = self._cancel_intent(job)
                    if asked and killed:
                        # the user's cancel is what they asked and what stopped their work;
                        # an ending the scheduler reports instead (a node failed while it
                        # killed the job) is said beside it
                        state, reason = JobState.CANCELLED, (
                            f"cancelled; the scheduler reports: {st.reason}" if st.reason
                            else "cancelled (killed)")
                    elif asked and state == JobState.FAILED:
                        # its program's own error code (it may have ended before the cancel
                        # reached it): the failure the scheduler recorded stands, and the
                        # cancel it did not record is said
                        reason = (f"{st.reason}; " if st.reason else "") + (
                            f"the scheduler recorded a failure (exit {st.exit_code}), not the "
                            "cancel request")
                    if asked and why and state == JobState.CANCELLED:
                        reason = why
                if st.tasks:  # before its state: each task's dependents are judged by it
                    self.journal.apply_tasks(job.id, st.tasks)
                exit_code = st.exit_code
                if exit_code is None and state == JobState.FAILED:
                    exit_code = self._task_failures.get(job.id)  # a failed array task's
                changed += self.journal.apply(
                    job.id, state, exit_code=exit_code, reason=reason,
                    started_at=st.started_at, ended_at=st.ended_at,
                    native_state=st.native_state, source="poll") is not None
                continue
            asked, why = self._cancel_intent(job)
            if asked:
                self.misses.pop(key, None)
                changed += self.journal.apply(
                    job.id, JobState.CANCELLED, source="poll",
                    reason=why or "cancelled: it left the queue after the cancel request (the "
                                  "scheduler keeps no record of it)") is not None
                continue
            if job.native_id in unasked:  # no answer yet is no miss: asked at a later poll
                continue
            age = t0 - job.submitted_at.timestamp() if job.submitted_at else 0
            self.misses[key] = self.misses.get(key, 0) + 1
            if self.misses[key] >= MISSES_BEFORE_LOST and age > 60:
                reason = "job left the queue and accounting has no record of it"
                if reach := self.site.accounting_reach:
                    reason += f" ({reach})"
                if job.reused_by:
                    reason += f" (its native id now belongs to {job.reused_by})"
                changed += self.journal.apply(job.id, JobState.FAILED, source="poll",
                                           reason=reason) is not None
        self._drop_finished()
        return changed
