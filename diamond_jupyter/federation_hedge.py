"""Hedged submission: copies of one job on the N best sites, the first to start wins.

How "never two copies run the payload" holds across sites that share nothing:
- each copy's wrapper reports its start (the signed event line the monitor follows) and
  then waits for a decision file in its own private job directory before the body runs;
- the engine that sees a copy start (the wrapper's line, or a poll that finds it running)
  claims the group for that copy in the store: one conditional UPDATE, atomic across
  every process sharing the store, so exactly one copy ever wins;
- the engine then writes "go TOKEN" into the winner's job directory and, at the same
  time, cancels each other copy and writes "no TOKEN" into its directory (over each
  site's own transport). A late starter that finds "no" exits without running the body;
  one that is still queued is cancelled before it starts.
A copy whose decision cannot be written (its site unreachable) waits, never runs the
body on its own, and is settled by the next engine start (`recover`) or state change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .aio import KeptTasks, KeyedLocks, within
from .federation_needs import scan_off_loop
from .journal import STORE_RECHECK_S
from .log_lines import one_line_logger
from .model import (
    BadInput,
    DiamondError,
    Event,
    Job,
    JobSpec,
    JobState,
    SiteError,
    hedge_winner_of,
    hedged_reason,
    utcnow,
)
from .option_types import MAX_HEDGE_COPIES
from .sites import EventChannel
from .store import HedgeRecord

if TYPE_CHECKING:
    from .journal import Journal
    from .placement import Placement
    from .sites import Sites
    from .store import Store

log = one_line_logger(__name__)

MAX_HEDGE = MAX_HEDGE_COPIES  # the CLI's and the magics' --hedge bound too


@dataclass(frozen=True)
class HedgeAction:
    """What settling a group does to one copy: "go" (write go), "stop" (cancel the copy
    and write no), or nothing (the copy is already over)."""

    token: str
    kind: str  # go | stop


def hedge_actions(winner: str | None, copies: Iterable[tuple[str, JobState]]
                  ) -> list[HedgeAction]:
    """Pure: what the engine does for a group whose winner is `winner` (None: undecided),
    given each copy's (token, state). Only the winner ever gets "go"; every unfinished
    other copy is stopped; an undecided group does nothing."""
    if winner is None:
        return []
    out = []
    for token, state in copies:
        if token == winner:
            out.append(HedgeAction(token, "go"))
        elif not state.terminal:
            out.append(HedgeAction(token, "stop"))
    return out


FORBIDDEN = "the sites file forbids hedged copies there (hedge: false)"
NO_CHANNEL = ("no job-side channel there (the wrapper cannot hold a copy before its body "
              "runs)")


def hedge_sites(ranked_feasible: list[str], refusals: dict[str, str], copies: int
                ) -> tuple[list[str], dict[str, str]]:
    """Pure: the `copies` best feasible sites with no reason to refuse a copy
    (`refusals`: site -> why not), and the sites skipped with the reason."""
    chosen, skipped = [], {}
    for name in ranked_feasible:
        if len(chosen) == copies:
            break
        if name in refusals:
            skipped[name] = refusals[name]
        else:
            chosen.append(name)
    return chosen, skipped


class HedgeMixin:
    """Mixed into Federation (which provides what is declared here)."""

    store: Store
    sites: Sites
    journal: Journal
    _hedge_gated: set[tuple[str, str]]  # (token, decision) written this process, till its end
    _hedge_locks: KeyedLocks
    _hedge_retries: dict[str, asyncio.TimerHandle]  # group: a pending settle after a failure
    _hedge_retry_delay: dict[str, float]  # group: the next retry's backoff, till it settles
    _hedge_settles: KeptTasks  # settles started by events and retries, running
    _hedges_closing: bool  # `close` began: no settle is started (`_hedge_settle_soon`)

    def check_hedge_site(self, copies: int, site: str) -> None:
        """BadInput for hedged copies asked of an explicit site (placement picks the copies'
        sites), naming that site's own policy when its sites-file entry forbids copies."""
        if site == "auto":
            return
        own = self.sites.get(site)
        policy = (f"; and {site} forbids hedged copies (hedge: false in its sites-file "
                  "entry): submit it there without a hedge"
                  if own is not None and not own.cfg.hedge else "")
        raise BadInput(f"hedge {copies} needs site 'auto' (placement picks the sites for the "
                       f"copies), not an explicit site {site!r}{policy}")

    async def _hedge_choice(self, spec: JobSpec, copies: int
                            ) -> tuple[list[tuple[str, JobSpec]], dict[str, str], Placement]:
        """The sites of `copies` copies (best first, each with the partition placement
        chose there), the sites skipped and why, and the placement; BadInput when fewer
        than two sites can take a copy."""
        if not isinstance(copies, int) or not 2 <= copies <= MAX_HEDGE:
            raise BadInput(f"hedge: the number of copies must be 2 to {MAX_HEDGE} "
                           f"(got {copies!r})")
        await scan_off_loop(spec)
        self.check_submittable(spec)  # type: ignore[attr-defined]
        bound = self.dependency_bound(spec)  # type: ignore[attr-defined]
        if bound is not None:  # a copy elsewhere would run without it (or wait on another job)
            raise BadInput(f"hedge {copies}: {bound[1]}; copies cannot go to other sites: "
                           "submit it without a hedge")
        pl = await self.place(spec)  # type: ignore[attr-defined]
        feasible = [v.site for v in pl.ranked if v.feasible]
        refusals = {n: FORBIDDEN if not s.cfg.hedge else NO_CHANNEL
                    for n, s in self.sites.items()
                    if not s.cfg.hedge or s.event_channel is EventChannel.NONE}
        chosen, skipped = hedge_sites(feasible, refusals, copies)
        if len(chosen) < 2:
            why = "; ".join(f"{s}: {r}" for s, r in skipped.items())
            infeasible = [f"{v.site}: {'; '.join(v.reasons) or v.verdict.lower()}"
                          + (f"; {FORBIDDEN}" if refusals.get(v.site) == FORBIDDEN else "")
                          for v in pl.ranked if not v.feasible]
            took = f"only 1 site can take a copy ({chosen[0]})" if chosen else \
                "no site can take a copy"
            raise BadInput(
                f"hedge {copies}: {took}, and hedging needs two"
                + (f"; skipped {why}" if why else "")
                + (f"; cannot run it: {' | '.join(infeasible)}" if infeasible else ""))
        specs = []
        for name in chosen:
            v = pl.verdict(name)
            s = spec
            if not spec.queue and v is not None and v.partition:
                s = spec.model_copy(update={"queue": v.partition})
            specs.append((name, s))
        return specs, skipped, pl

    async def plan_hedged(self, spec: JobSpec, copies: int) -> dict[str, Any]:
        """What `submit_hedged(spec, copies)` would run, as a plan to approve: the best
        copy's plan (as `plan_submit`) with `hedge` listing every copy (site, partition,
        scheduler, the rendered script and its sha256, the submission token, data
        movements). The approved plan runs on exactly those sites with those scripts
        (`submit_hedged(..., pins=)`)."""
        specs, skipped, _ = await self._hedge_choice(spec, copies)
        plans = [await self.plan_submit(s, name, hedged=True)  # type: ignore[attr-defined]
                 for name, s in specs]
        keep = ("site", "scheduler", "partition", "submission", "script", "script_sha256",
                "data_movements", "warnings")
        return {**plans[0], "hedge": {
            "copies": len(plans), "skipped": skipped,
            "note": f"a copy on each of these {len(plans)} sites; the first to start runs the "
                    "job, the others are cancelled",
            "plans": [{k: p.get(k) for k in keep} for p in plans]}}

    async def _pinned_copies(self, spec: JobSpec, pins: list[dict[str, Any]]
                             ) -> list[tuple[str, JobSpec, str, str]]:
        """(site, spec, token, script sha256) of each approved copy, checked again before
        anything is recorded: PlanChanged when a copy's site is gone or its script or data
        movements would now differ."""
        from .federation_plan import PlanChanged, _moves, check_script_shown

        if not isinstance(pins, list) or len(pins) < 2 \
                or not all(isinstance(p, dict) for p in pins):
            raise PlanChanged("the approved hedged plan lists no copies to run")
        out = []
        for pin in pins:
            fresh = await self.plan_submit(spec, pin=pin, hedged=True)  # type: ignore
            if fresh["script_sha256"] != pin.get("script_sha256"):
                raise PlanChanged(f"the batch script of the copy for {fresh['site']} would "
                                  "differ from the approved one")
            check_script_shown(fresh, pin, f"of the copy for {fresh['site']}")
            if _moves(fresh) != _moves(pin):
                raise PlanChanged(f"the data movements of the copy for {fresh['site']} would "
                                  "differ from the approved ones")
            s = spec if spec.queue or not fresh["partition"] else \
                spec.model_copy(update={"queue": fresh["partition"]})
            out.append((fresh["site"], s, fresh["submission"], fresh["script_sha256"]))
        if len({site for site, *_ in out}) != len(out):
            raise PlanChanged("the approved hedged plan names a site twice")
        return out

    async def submit_hedged(self, spec: JobSpec, copies: int, *, origin: dict | None = None,
                            hold: bool = False, pins: list[dict[str, Any]] | None = None
                            ) -> Job:
        """Submit `copies` copies of `spec` to the best feasible sites that allow it (a
        site whose `hedge` is false in the sites file is skipped, and said so). Returns the
        best-ranked copy at once; `hedge_winner` waits for the copy that starts first.
        With `pins` (an approved plan's `hedge.plans`): exactly those copies, each on its
        site with its token and script (PlanChanged, before anything is recorded, if one
        would differ), not placed again."""
        from .federation_plan import new_token

        if pins is not None:
            pinned = await self._pinned_copies(spec, pins)
            runs = [(site, s, {"token": tok, "script_sha256": sha})
                    for site, s, tok, sha in pinned]
            skipped: dict[str, str] = {}
            placement = None
        else:
            specs, skipped, pl = await self._hedge_choice(spec, copies)
            runs = [(name, s, {}) for name, s in specs]
            placement = pl.model_dump(mode="json")
        chosen = [name for name, _, _ in runs]
        group = new_token()
        self.store.create_hedge(group, {"copies": copies, "sites": chosen,
                                        "skipped": skipped})
        specs = [(name, s) for name, s, _ in runs]
        got = await asyncio.gather(
            *(self.submit(s, name, origin=origin, hold=hold,  # type: ignore[attr-defined]
                          hedge_group=group, placement=placement, **pin)
              for name, s, pin in runs),
            return_exceptions=True)
        jobs = [j for j in got if isinstance(j, Job)]
        errors = {name: e for (name, _), e in zip(specs, got, strict=True)
                  if isinstance(e, BaseException)}
        for e in errors.values():
            if not isinstance(e, DiamondError):
                raise e
        self.store.hedge_event("hedge.submitted", group, {
            "copies": [j.id for j in jobs], "sites": [j.site for j in jobs],
            "skipped": skipped, "failed": {n: str(e) for n, e in errors.items()}})
        await self.journal.drain()
        if not jobs:
            raise next(iter(errors.values()))
        await self._hedge_settle(group)  # a copy may have started already
        rec = self.store.hedge(group)
        return rec.winner_job or jobs[0]

    def hedge(self, group_or_job: str) -> HedgeRecord:
        """A hedged submission by its group id, or by the id of any of its copies."""
        try:
            return self.store.hedge(group_or_job)
        except BadInput:
            job = self.store.get_job(group_or_job)
            if not job.hedge_group:
                raise BadInput(f"{job.id} is not a copy of a hedged submission") from None
            return self.store.hedge(job.hedge_group)

    async def hedge_winner(self, group: str, *, timeout: float | None = None) -> Job:
        """Wait until the group is settled: a copy started and every other copy is over
        (or no copy can start any more). The winner, else the best-ranked copy."""
        def settled(rec: HedgeRecord) -> bool:
            others = [j for j in rec.copies if j.token != rec.winner]
            return all(j.state.terminal for j in others) and (
                rec.decided or all(j.state.terminal for j in rec.copies))
        q = self.journal.bus.queue()
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        try:
            rec = self.store.hedge(group)
            for j in rec.copies:
                if j.native_id and not j.state.terminal:
                    self.journal.track(j)
            await self._hedge_settle(group)
            rec = self.store.hedge(group)
            while not settled(rec):
                left = None if deadline is None else deadline - loop.time()
                if left is not None and left <= 0:
                    raise SiteError(f"timed out after {timeout:.0f}s waiting for hedged "
                                    f"submission {group} to settle")
                try:
                    await within(q.get(), min(left or STORE_RECHECK_S, STORE_RECHECK_S))
                except asyncio.TimeoutError:
                    await self.journal.drain()  # what other processes wrote to the store
                rec = self.store.hedge(group)
            return rec.winner_job or rec.copies[0]
        finally:
            self.journal.bus.unqueue(q)

    async def cancel_hedge(self, group: str, job_id: str | None = None) -> Job:
        """Cancel every unfinished copy of a hedged submission; the copy `job_id` (default:
        the winner, else the best-ranked) as it is now."""
        rec = self.store.hedge(group)
        live = [j for j in rec.copies if not j.state.terminal and j.native_id
                and j.site in self.sites and not j.reused_by]
        for j in live:  # recorded before it is sent: recovery sends it again (`_finish_cancels`)
            if not self.journal.cancel_requested(j.id):
                self.store.hedge_event("job.cancel-requested", group, {}, j.id, j.site)
        got = await asyncio.gather(*(self.sites[j.site].cancel(self.sites[j.site].native_ids_of(j))
                                     for j in live), return_exceptions=True)
        for j, r in zip(live, got, strict=True):
            if isinstance(r, BaseException):
                if not isinstance(r, DiamondError):
                    raise r
                log.info("%s: cancelling hedged copy %s failed: %s", j.site, j.id, r)
                self.store.append_event(Event(kind="job.cancel-failed", job_id=j.id,
                                              site=j.site, data={"reason": str(r)}))
                continue
            self.journal.kick(j)
        await self.journal.drain()
        rec = self.store.hedge(group)
        pick = job_id or (rec.winner_job.id if rec.winner_job else rec.copies[0].id)
        return self.store.get_job(pick)

    # -- settling -----------------------------------------------------------------------
    def _hedge_on_event(self, ev: Event) -> None:
        """A published event (subscribed to the journal): when a copy of a hedged job
        started, settle its group (decide, go, stop the others); also when one ended."""
        if ev.kind != "job.state" or not ev.job_id:
            return
        try:
            state = JobState(ev.data.get("state"))
        except ValueError:
            return
        if state != JobState.RUNNING and not state.terminal:
            return
        try:
            job = self.store.get_job(ev.job_id)
        except BadInput:
            return
        if job.hedge_group:
            started = job.token if state == JobState.RUNNING else None
            self._hedge_settle_soon(job.hedge_group, started, job)

    def _hedge_settle_soon(self, group: str, started: str | None = None,
                           job: Job | None = None) -> None:
        """Settle `group` in a task this engine keeps until it ends (`close` cancels and
        awaits it; one cut short is finished by the next engine's `recover`). None once
        `close` began: the group stays open in the store for the next engine."""
        if self._hedges_closing:
            return
        self._hedge_settles.start(self._hedge_settle(group, started, job))

    async def _hedge_settle(self, group: str, started: str | None = None,
                            job: Job | None = None) -> None:
        async with self._hedge_locks.held(group):
            try:
                if started is not None:
                    self.store.claim_hedge(group, started, site=job.site if job else None,
                                           job_id=job.id if job else None,
                                           started_at=job.started_at if job else None)
                rec = self.store.hedge(group)
                acts = hedge_actions(rec.winner, [(j.token or "", j.state) for j in rec.copies])
                by_token = {j.token: j for j in rec.copies}
                await asyncio.gather(*(self._hedge_act(rec, by_token[a.token], a.kind)
                                       for a in acts))
                for j in self._losers_ended_unfinished(self.store.hedge(group)):
                    asked = self.journal.is_loser_cancel(self.journal.cancel_intent(j.id))
                    self._hedge_cancelled(rec, j, gated=False,
                                          cancelled=asked and j.state == JobState.CANCELLED)
                self._hedge_forget_ended(self.store.hedge(group))
            except DiamondError as e:
                log.warning("hedged submission %s: settling failed (%s); retried on the "
                            "next change or start", group, e)
            self._hedge_forget_backoff(group)
            await self.journal.drain()

    def _hedge_forget_backoff(self, group: str) -> None:
        """A group no copy of which is unfinished keeps no backoff (nor pending retry): its
        winner's "go" that kept failing has nobody left to tell."""
        try:
            over = all(j.state.terminal for j in self.store.hedge(group).copies)
        except DiamondError:
            return
        if over:
            self._hedge_retry_delay.pop(group, None)
            handle = self._hedge_retries.pop(group, None)
            if handle is not None:
                handle.cancel()

    async def _hedge_gate(self, job: Job, decision: str) -> bool:
        """Write "go TOKEN" / "no TOKEN" where the copy's wrapper waits (once)."""
        key = (job.token or "", decision)
        if key in self._hedge_gated or job.site not in self.sites:
            return key in self._hedge_gated
        try:
            await self.sites[job.site].decide_hedge(job.token or "", decision)
        except DiamondError as e:
            log.info("%s: cannot write the hedge decision for %s: %s", job.site, job.id, e)
            return False
        self._hedge_gated.add(key)
        return True

    def _hedge_forget_ended(self, rec: HedgeRecord) -> None:
        """The decisions written for the copies of `rec` that have ended go (under the
        group's lock): a loser is stopped only while unfinished, and an ended winner whose
        "go" was said is not written again (`_hedge_act`)."""
        for j in rec.copies:
            if j.state.terminal:
                self._hedge_gated.difference_update({(j.token or "", "go"),
                                                     (j.token or "", "no")})

    async def _hedge_act(self, rec: HedgeRecord, job: Job, kind: str) -> None:
        if kind == "go":
            if job.state.terminal and self.store.events_since(0, kinds=["hedge.go"],
                                                              job_id=job.id, limit=1):
                self._hedge_retry_delay.pop(rec.id, None)
                return  # it ended, its "go" written and said: nothing to tell it
            if await self._hedge_gate(job, "go"):
                self._hedge_once(rec, job, "hedge.go", {})
                self._hedge_retry_delay.pop(rec.id, None)
            else:  # the winner waits for "go" and nothing else will happen: try again
                self._hedge_retry_later(rec.id)
            return
        await self._hedge_stop(rec, job)

    async def _hedge_stop(self, rec: HedgeRecord, job: Job) -> None:
        """Stop loser `job`: its cancel recorded first (`job.cancel-requested`, carrying the
        reason it ends with), then sent, then finished (CANCELLED, `hedge.cancelled`). A
        cancel recorded before (this engine's earlier try, or one that died after recording
        it) is sent again only to a loser its site, asked first, still has queued or running
        under its own id; "no" is written where a loser that started meanwhile waits, so it
        never runs the body beside the winner."""
        winner = rec.winner_job
        why = hedged_reason(winner.id if winner else None)
        if self.journal.cancel_requested(job.id):
            try:
                job = await self.journal.refresh(job.id)
            except DiamondError as e:  # its state unknown: nothing is sent blind
                log.info("%s: cannot look up hedged copy %s: %s", job.site, job.id, e)
                self._hedge_retry_later(rec.id)
                return
        else:
            self.store.hedge_event("job.cancel-requested", rec.id,
                                   {"reason": why, "loser": True}, job.id, job.site)
        cancelled = job.state == JobState.CANCELLED  # ended: by the cancel sent before
        if not job.state.terminal and job.native_id and job.site in self.sites \
                and not job.reused_by:
            try:
                await self.sites[job.site].cancel(self.sites[job.site].native_ids_of(job))
                cancelled = True
            except DiamondError as e:
                log.info("%s: cancelling hedged copy %s failed: %s", job.site, job.id, e)
        gated = await self._hedge_gate(job, "no")  # also once ended: the guard of the body
        if not job.state.terminal:
            if not (cancelled or gated):  # the copy waits (never runs the body on its own)
                self._hedge_retry_later(rec.id)
                return
            self.journal.apply(job.id, JobState.CANCELLED, reason=why, source="hedge")
            self.journal.kick(job)
        self._hedge_cancelled(rec, job, cancelled=cancelled, gated=gated)

    def _hedge_cancelled(self, rec: HedgeRecord, job: Job, *, cancelled: bool,
                         gated: bool) -> None:
        """Finish loser `job`'s recorded cancel: `hedge.cancelled`, once."""
        winner = rec.winner_job
        after = None
        if winner is not None and winner.started_at is not None:
            after = round((utcnow() - winner.started_at).total_seconds(), 3)
        self._hedge_once(rec, job, "hedge.cancelled", {
            "winner": winner.id if winner else None, "cancelled_by_scheduler": cancelled,
            "decision_written": gated, "after_winner_start_s": after})

    def _losers_ended_unfinished(self, rec: HedgeRecord) -> list[Job]:
        """The losers of decided group `rec` that ended (their scheduler cancelled them, as
        an engine that died had asked, or they left when told "no": the store records that
        end CANCELLED for the winner) while their cancel is not finished (seen by a poll
        first)."""
        if not rec.decided:
            return []
        return [j for j in rec.copies if j.token != rec.winner and j.state.terminal
                and (self.journal.is_loser_cancel(self.journal.cancel_intent(j.id))
                     or hedge_winner_of(j) is not None)
                and not self.store.events_since(0, kinds=["hedge.cancelled"], job_id=j.id,
                                                limit=1)]

    def _hedge_retry_later(self, group: str) -> None:
        """Settle the group again after a backoff (2 s doubling to 30 s) while this engine
        runs: a decision that could not be written (site unreachable) is written later."""
        if group in self._hedge_retries:
            return
        delay = self._hedge_retry_delay[group] = min(
            self._hedge_retry_delay.get(group, 1.0) * 2, 30.0)

        def again() -> None:
            self._hedge_retries.pop(group, None)
            self._hedge_settle_soon(group)
        self._hedge_retries[group] = asyncio.get_running_loop().call_later(delay, again)

    def _stop_hedge_retries(self) -> None:
        for handle in self._hedge_retries.values():
            handle.cancel()
        self._hedge_retries.clear()
        self._hedge_retry_delay.clear()

    async def _close_hedges(self) -> None:
        """Stop the pending retries and cancel and await the settles running; what one
        cut short left undone the next engine finishes (`_recover_hedges`)."""
        self._hedges_closing = True
        self._stop_hedge_retries()
        await self._hedge_settles.close()

    def _hedge_once(self, rec: HedgeRecord, job: Job, kind: str, data: dict[str, Any]
                    ) -> None:
        if not self.store.events_since(0, kinds=[kind], job_id=job.id, limit=1):
            self.store.hedge_event(kind, rec.id, data, job.id, job.site)

    async def _recover_hedges(self) -> None:
        for rec in self.store.open_hedges():
            for j in rec.copies:
                if j.state == JobState.RUNNING and rec.winner is None:
                    await self._hedge_settle(rec.id, j.token, j)
                    break
            else:
                await self._hedge_settle(rec.id)
