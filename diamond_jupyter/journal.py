"""The journal: every change of a job becomes an event in the store first, then is published.

Below the facade. It owns event intake (one `SiteMonitor` per site: the jobs' own event
lines and the safety-net polls), the application of states to the store, the recovery of
submissions whose result was lost, and publication to in-process subscribers (callbacks
and queues), in store order. Events other processes (the CLI, kernels) write to the shared
store are published too (`follow_store`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

from .aio import KeptTasks, within
from .attention_journal import Attention
from .dependency_journal import dependency_events, task_dependency_events
from .dialects.flux_commands import UnsureArrayTask
from .dialects.reasons import says_held
from .events import EventBus
from .leases import Fence
from .log_lines import one_line_logger
from .model import BadInput, DiamondError, Event, Job, JobState, JobStatus, SiteError, task_ids
from .monitor import SiteMonitor
from .sites import Site, prepared_notes
from .store import Store

STORE_RECHECK_S = 5.0  # a waiter also reads the shared store this often (local, cheap)
# A submit whose answer was lost (its engine died, or the connection dropped) may still be
# running on the login node: its intent is closed as never submitted only once it is this
# old (by the time the store recorded it), so that a job reaching the queue late is found
# instead of being submitted a second time.
UNSURE_SUBMIT_SETTLE_S = 30.0  # as FederationConfig's default
UNSURE_TASK = "unsure-"  # a task key of a job flux lists for an array, its index unknown

log = one_line_logger(__name__)


class Journal:
    def __init__(self, store: Store, sites: Mapping[str, Site], *,
                 poll_interval_s: float = 60.0, min_poll_s: float = 2.0,
                 unsure_submit_settle_s: float = UNSURE_SUBMIT_SETTLE_S) -> None:
        self.store = store
        self.unsure_submit_settle_s = unsure_submit_settle_s
        self.sites = sites
        self.bus = EventBus()
        self.monitors = {n: SiteMonitor(self, s, poll_interval_s, min_poll_s)
                         for n, s in sites.items()}
        self.published = store.last_seq()  # the last event published in this process
        self._drain_lock = asyncio.Lock()
        self._drains = KeptTasks()  # drains `apply` and `append` started, running
        # tokens whose submit, or the search for its lost answer, runs in this process
        self.in_flight: set[str] = set()
        self.attention = Attention(self)

    async def stop(self) -> None:
        self.attention.stop()
        await asyncio.gather(*(m.stop() for m in self.monitors.values()))
        await self._drains.close(cancel=False)  # every stored event is published
        await self.bus.close()

    # -- reads the intake needs --------------------------------------------------------
    def job(self, job_id: str, read_only: bool = False) -> Job:
        """The job by id, provisional id or token (BadInput when unknown); `read_only`: a
        shared, unchangeable one (`Store.job_by_token`)."""
        return self.store.get_job(job_id, read_only)

    def job_by_token(self, token: str, read_only: bool = False) -> Job | None:
        return self.store.job_by_token(token, read_only)

    def states_of_tokens(self, tokens: Iterable[str]) -> dict[str, JobState]:
        """The stored state of the jobs of `tokens` by token (an unknown one left out)."""
        return self.store.states_of_tokens(tokens)

    def cancel_intent(self, job_id: str) -> Event | None:
        """The job's standing cancel request: its last `job.cancel-requested` (recorded
        before the cancel is sent; a hedged copy's loser carries the reason it is cancelled
        with) when no `job.cancel-failed` (the scheduler refused it, or could not be
        reached) follows it; else None."""
        evs = self.store.events_since(0, kinds=["job.cancel-requested", "job.cancel-failed"],
                                      job_id=job_id, limit=None)
        return evs[-1] if evs and evs[-1].kind == "job.cancel-requested" else None

    @staticmethod
    def is_loser_cancel(intent: Event | None) -> bool:
        """Whether a cancel request is a hedged copy's loser's (its hedge finishes it)."""
        return intent is not None and bool((intent.data or {}).get("loser"))

    def cancel_requested(self, job_id: str) -> bool:
        """Whether the engine asked the job's scheduler to cancel it (`cancel_intent`)."""
        return self.cancel_intent(job_id) is not None

    async def release_once(self, job: Job) -> None:
        """Release held job `job` on its site, recorded first (`job.releasing`), so that a
        release sent again (after a restart) is known for one: the job is looked up first,
        and one no longer held, or ended, is not released again; a refusal of the scheduler
        (PBS, LSF: the job is not held) is then taken as the first release's success unless
        the job is seen still held. DiamondError when the site refuses a first release, or
        refuses again a job seen still held, or cannot be reached."""
        again = bool(self.store.events_since(0, kinds=["job.releasing", "job.released"],
                                             job_id=job.id, limit=1))
        if again:
            try:
                job = await self.refresh(job.id)
            except DiamondError:
                pass  # not seen: released again (a refusal is looked at below)
            else:
                if job.state.terminal or not says_held(job.reason):
                    return
        else:
            self.store.append_event(Event(kind="job.releasing", job_id=job.id, site=job.site,
                                          data={"native_id": job.native_id}))
        try:
            site = self.sites[job.site]
            await site.release(site.native_ids_of(job), tasks=task_ids(job))  # each task's
        except DiamondError as refused:
            if not again:
                raise
            try:
                job = await self.refresh(job.id)
            except DiamondError:
                return  # not seen: the refusal is taken as the first release's success
            if not job.state.terminal and says_held(job.reason):
                raise refused from None

    def release_requested(self, job_id: str) -> bool:
        """Whether the user asked to release the job (held by `hold`) while its stage-in
        was still copying: its staging releases it once the input is there."""
        return bool(self.store.events_since(0, kinds=["job.release-requested"],
                                            job_id=job_id, limit=1))

    def stage_in_pending(self, job: Job) -> bool:
        """The job's own stage-in (its stage entries, a script's staging lines) is still to
        arrive: its staging runs (or will resume) and has not said `stage.in.done`."""
        if job.spec is None or not job.spec.stage_in or job.state.terminal or not job.token:
            return False
        try:
            staging = self.store.get_transfer(f"stage-{job.token}")
        except BadInput:
            return False
        return staging.state in ("PENDING", "ACTIVE") and not self.store.events_since(
            0, kinds=["stage.in.done"], job_id=job.id, limit=1)

    # -- intake ------------------------------------------------------------------------
    def apply(self, job_id: str, state: JobState, **kw: Any) -> Event | None:
        """Apply a state the job reached (see `Store.apply_state`); its event, if any, is
        published soon after, followed by the `job.attention` event it calls for (a start,
        a pending reason that means "never", a failure) and a `job.dependency` event for
        each queued job whose dependency on it turned satisfied or never."""
        ev = self.store.apply_state(job_id, state, **kw)
        if ev is not None:
            self.attention.after(ev)
            for turn in dependency_events(self.store, ev, self._scheduler_of):
                self.store.append_event(turn)
        # Also when nothing changed: another process sharing the store may have applied
        # this very state first, and its event still has to be published here.
        self._drains.start(self.drain())
        return ev

    def apply_tasks(self, job_id: str, tasks: dict[str, JobState]) -> bool:
        """Record the states of a job array's tasks as its scheduler lists them now, and a
        `job.dependency` event for each queued job whose dependency on one of them turned
        satisfied or never; whether a task's state changed."""
        changed = self.store.record_task_states(job_id, tasks)
        if changed is None:
            return False
        for turn in task_dependency_events(self.store, *changed, self._scheduler_of):
            self.store.append_event(turn)
        self._drains.start(self.drain())
        return True

    def _scheduler_of(self, site: str) -> str | None:
        return found.script.name if (found := self.sites.get(site)) else None

    def append(self, event: Event, fence: Fence | None = None) -> Event:
        """Store an event (with `fence`, only while that lease holds: else LeaseLost); it is
        published soon after."""
        ev = self.store.append_event(event, fence)
        self._drains.start(self.drain())
        return ev

    async def publish(self, event: Event) -> Event:
        """Store an event, then publish it (and any earlier unpublished ones) in order."""
        ev = self.store.append_event(event)
        await self.drain()
        return ev

    def track(self, job: Job) -> None:
        """Follow a submitted job until it ends (its site's monitor)."""
        if job.site in self.monitors:
            self.monitors[job.site].track(job)

    def await_end(self, job: Job) -> None:
        """Follow a submitted job whose end someone waits on: learned soon, even on a site
        without an event channel (its monitor's awaited pace)."""
        if job.site in self.monitors:
            self.monitors[job.site].await_end(job)

    async def refresh(self, job_id: str) -> Job:
        """The job, after asking its site once when it is unfinished (and following it)."""
        job = self.store.get_job(job_id)
        if not job.state.terminal and job.native_id and job.site in self.monitors:
            mon = self.monitors[job.site]
            mon.track(job)
            await mon.poll_once()
            job = self.store.get_job(job.token or job.id)
        return job

    def kick(self, job: Job) -> None:
        """Follow the job and ask its site soon, and again until it has ended (after a
        cancel: its end is the scheduler's to say, `SiteMonitor.end_due`)."""
        self.monitors[job.site].end_due(job)

    # -- lost submissions ----------------------------------------------------------------
    async def recover_intents(self, grace_s: float) -> None:
        """Resolve each intent left without a native id for longer than `grace_s` (younger
        ones may be another process's submit in flight) that no submit here runs."""
        for job in self.store.intents_without_native_id(older_than_s=grace_s):
            if job.site in self.sites and job.token not in self.in_flight:
                await self.recover_intent(job)

    async def recover_intent(self, job: Job) -> float:
        """A crash or a dropped connection between recording the token and the submit's
        return: the token finds the job, which is bound and followed. Found nowhere, the
        intent is closed as never submitted, but only once it is `unsure_submit_settle_s`
        old: until then its submit may still reach the queue, so it is left open and the
        seconds left are returned (look again then). Else 0.0, also when the site cannot be
        reached (the next pass tries again)."""
        site = self.sites[job.site]
        token = job.token or ""
        # the age when the lookup starts: a job queued after that is not in its answer
        age = self.store.intent_age_s(token)
        try:
            found = await site.find_by_token(job.name, token)
        except DiamondError:
            return 0.0  # site unreachable: try again on the next pass
        array = site.flux_array(job.spec) if job.spec is not None else None
        try:  # a Flux array's tasks queued may all be purged from flux's listing: its record
            recorded = array is not None and not found \
                and await site.flux_submit_begun(token)
        except DiamondError:
            return 0.0
        if array is not None and job.spec is not None and (found or recorded):
            try:  # a job array's tasks on Flux: those not queued yet queued now
                sub = await site.resume_flux_array(job.spec, token, found)
            except BadInput as e:  # a refusal (an unsure task, a listing that disagrees):
                self._close_unsure_array(job, e, found)  # not looked at again: said instead
                await self.drain()
                return 0.0
            except DiamondError as e:  # the site failed it: the next pass tries again, and
                # the job says why meanwhile (once: the same reason again records nothing)
                log.info("%s: array submit %s not resumed: %s", job.site, token, e)
                self.store.apply_state(job.id, job.state, source="recovery", reason=(
                    f"array submit not resumed yet: {e}; tried again on each recovery pass"))
                await self.drain()
                return 0.0
            bound = self.store.bind_native_id(token, sub.native_id, task_ids=sub.tasks,
                                              warnings=prepared_notes(job.spec))
            if not bound.state.terminal:
                self.track(bound)
        elif found:
            bound = self.store.bind_native_id(token, found[0].native_id,
                                              warnings=prepared_notes(job.spec))
            if not bound.state.terminal:
                self.track(bound)
        else:
            left = self.unsure_submit_settle_s - age if age is not None else 0.0
            if left > 0:
                return left
            self.store.mark_never_submitted(token, "the submit did not reach the scheduler")
        await self.drain()
        return 0.0

    def _close_unsure_array(self, job: Job, refusal: BadInput, found: list[JobStatus]
                            ) -> None:
        """A cut-short Flux array whose resume was refused (asking again would refuse
        again), bound so nothing it queued runs unseen: to the tasks known queued (an
        UnsureArrayTask's) by their indexes, else to every job carrying its token that
        flux lists (`found`: which task each is cannot be told), as tasks `unsure-1`,
        `unsure-2`, ... (followed, each id kept, `diamond cancel` reaching them all). The
        refusal is said as a warning and the reason. With nothing found the intent is
        closed as FAILED with that reason, unless another engine bound it meanwhile (the
        store looks under its write transaction). Either way no later pass looks again."""
        token, said = job.token or "", f"array submit not resumed: {refusal}"
        queued = refusal.queued if isinstance(refusal, UnsureArrayTask) else {}
        tasks = {str(i): jid for i, jid in sorted(queued.items())} or {
            f"{UNSURE_TASK}{n}": s.native_id for n, s in enumerate(found, 1)}
        if not tasks:
            with contextlib.suppress(DiamondError):  # bound meanwhile by another engine
                self.store.mark_never_submitted(token, said)
            return
        if not queued:
            said += (f"; the {len(tasks)} job(s) carrying its token that flux lists are "
                     f"followed as its tasks {UNSURE_TASK}1..{len(tasks)}")
        try:
            bound = self.store.bind_native_id(
                token, next(iter(tasks.values())), task_ids=tasks,
                warnings=[*prepared_notes(job.spec), said])
        except DiamondError as e:  # another engine bound it meanwhile: its binding stands
            log.info("%s: array %s not bound here: %s", job.site, token, e)
            return
        if task_ids(bound) != tasks:  # another engine bound it, its own way: its reason stands
            return
        self.store.apply_state(bound.id, bound.state, reason=said, source="recovery")
        if not bound.state.terminal:
            self.track(bound)

    async def recover_intent_settled(self, job: Job) -> Job:
        """`recover_intent`, waiting while the intent is too young to be closed as never
        submitted; the job as stored then: bound, closed, or still open when its site could
        not be reached."""
        token = job.token or ""
        while (left := await self.recover_intent(job)) > 0:
            await asyncio.sleep(left)
            job = self.store.job_by_token(token) or job
            if job.native_id is not None or job.state.terminal:  # another pass decided
                break
        return self.store.job_by_token(token) or job

    async def look_for_lost_submit(self, job: Job, *,
                                   on_look: Callable[[float], Any] | None = None) -> Job:
        """`recover_intent` again and again, the waits between looks doubling from 0.5 s up
        to 5 s, until the job is bound or closed, or, its site not answering, its intent is
        the settle time old (then left open). `on_look(seconds left)` before each look."""
        token = job.token or ""
        wait = 0.5
        while True:
            age = self.store.intent_age_s(token) or 0.0
            left = max(self.unsure_submit_settle_s - age, 0.0)
            if on_look is not None:
                on_look(left)
            await self.recover_intent(job)
            job = self.store.job_by_token(token) or job
            if job.native_id is not None or job.state.terminal or left <= 0:
                return job
            await asyncio.sleep(min(wait, left))
            wait = min(wait * 2, 5.0)

    # -- publication ---------------------------------------------------------------------
    async def close_never_submitted(self, token: str, reason: str) -> None:
        """The intent of `token` closed as never submitted (`reason`), its event published."""
        self.store.mark_never_submitted(token, reason)
        await self.drain()

    async def drain(self) -> None:
        """Publish every stored event not yet published, in order."""
        async with self._drain_lock:
            while True:
                batch = self.store.events_since(self.published, limit=500)
                for ev in batch:
                    self.published = ev.seq or self.published
                    self.bus.publish(ev)
                if len(batch) < 500:
                    return

    async def follow_store(self, interval_s: float) -> None:
        """Deliver events other processes (CLI, kernels) wrote to the shared store."""
        while True:
            await asyncio.sleep(interval_s)
            await self.drain()

    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Call `callback(event)` for each published event; returns an unsubscribe function."""
        return self.bus.subscribe(callback)

    async def events(self, since: int | None = None) -> AsyncIterator[Event]:
        """Stored events after `since` (replay), then live ones, with no gap."""
        q = self.bus.queue()
        try:
            last = since if since is not None else self.published
            if since is not None:
                for ev in self.store.events_since(since, limit=None):
                    last = ev.seq or last
                    yield ev
            while True:
                ev = await q.get()
                if ev.seq is not None and ev.seq <= last:
                    continue
                yield ev
        finally:
            self.bus.unqueue(q)

    def site_trouble(self, site: str) -> str | None:
        """Why `site` cannot be asked about its jobs now, with for how long (None: its last
        query was answered, or it has no monitor)."""
        mon = self.monitors.get(site)
        if mon is None or mon.trouble is None:
            return None
        return f"{site} has not answered for {mon.trouble_for_s():.0f}s ({mon.trouble})"

    def _trouble_note(self, job: Job) -> str | None:
        mon = self.monitors.get(job.site)
        if mon is None or mon.trouble is None or job.state.terminal:
            return None
        return (f"{job.site} is unreachable ({mon.trouble}); still following {job.id}: "
                f"asking again with backoff until it answers")

    async def wait(self, job_id: str, *, until: Callable[[Job], bool] | Iterable[JobState]
                   | None = None, timeout: float | None = None,
                   on_trouble: Callable[[str], Any] | None = None) -> Job:
        """Suspend until the job satisfies `until` (default: a terminal state). Event-driven;
        while it waits, the job's end is awaited (`SiteMonitor.waiting_on`: on a site without
        an event channel, a running job is asked about at the awaited pace). A site that
        cannot be asked does not end the wait: its monitor keeps asking, with backoff, and
        `on_trouble(note)` is called once, the first time the wait sees it."""
        if until is None:
            def cond(j: Job) -> bool:
                return j.state.terminal
        elif callable(until):
            cond = until
        else:
            states = set(until)

            def cond(j: Job) -> bool:
                return j.state in states or j.state.terminal
        q = self.bus.queue()
        waiting = contextlib.ExitStack()  # the job's end awaited while this wait lasts
        try:
            job = self.store.get_job(job_id)
            if job.native_id and not job.state.terminal and job.site in self.monitors:
                waiting.enter_context(self.monitors[job.site].waiting_on(job))
            key, names = job.token or job.id, {job_id, job.id}  # the token survives renames
            loop = asyncio.get_running_loop()
            deadline = None if timeout is None else loop.time() + timeout
            told = False
            while not cond(job):
                if on_trouble is not None and not told:
                    note = self._trouble_note(job)
                    if note is not None:
                        told = True
                        on_trouble(note)
                left = None if deadline is None else deadline - loop.time()
                if left is not None and left <= 0:
                    raise asyncio.TimeoutError
                try:
                    ev = await within(q.get(), min(left or STORE_RECHECK_S, STORE_RECHECK_S))
                except asyncio.TimeoutError:
                    await self.drain()  # what other processes wrote to the shared store
                    job = self.store.get_job(key)
                    continue
                if ev.job_id in names or ev.data.get("previous_id") in names:
                    job = self.store.get_job(key)
                    names.add(job.id)
            return job
        except asyncio.TimeoutError:
            trouble = self.site_trouble(job.site)
            raise SiteError(f"timed out after {timeout:.0f}s waiting for {job_id} "
                            f"(state {job.state.value}" + (f", as last seen; {trouble})"
                                                           if trouble else ")")) from None
        finally:
            waiting.close()
            self.bus.unqueue(q)
