"""Follow jobs without loading login nodes.

Push: each job script reports its own start and end to a per-user event file on the
site's shared filesystem; one long-lived SSH channel per site follows it (`tail -F`).
Safety net: one batched scheduler query per site (all tracked jobs, then accounting for
those gone from the queue) at a slow adaptive interval, for jobs that never run their
wrapper (cancelled while pending, failed to start, node failure, preemption).
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from .model import DiamondError, JobState

if TYPE_CHECKING:
    from .federation import Federation
    from .sites import Site

log = logging.getLogger(__name__)

MISSES_BEFORE_LOST = 3


def wrapper_prologue(event_file: str, token: str) -> str:
    """Shell lines placed before the job body: report start now and end (with exit code)."""
    ev = shlex.quote(event_file)
    jid = "${SLURM_JOB_ID:-${PBS_JOBID:-${LSB_JOBID:-${FLUX_JOB_ID:-}}}}"
    return (
        f"__dmd_ev={ev}; __dmd_tok={token}\n"
        f'printf "%s start %s %s 0\\n" "$(date +%s.%N)" "$__dmd_tok" "{jid}" >> "$__dmd_ev"\n'
        "__dmd_end() { __dmd_rc=$?; "
        f'printf "%s end %s %s %s\\n" "$(date +%s.%N)" "$__dmd_tok" "{jid}" "$__dmd_rc" '
        '>> "$__dmd_ev"; }\n'
        "trap __dmd_end EXIT\n"
        # a signal (scancel, time limit, preemption) ends the job with 128+N, never "0"
        "trap 'exit 143' TERM; trap 'exit 130' INT; trap 'exit 129' HUP\n"
    )


def parse_event_line(line: str) -> tuple[datetime, str, str, str, int] | None:
    parts = line.split()
    if len(parts) != 5 or parts[1] not in ("start", "end"):
        return None
    try:
        at = datetime.fromtimestamp(float(parts[0]), timezone.utc)
        return at, parts[1], parts[2], parts[3], int(parts[4])
    except ValueError:
        return None


class SiteMonitor:
    def __init__(self, fed: Federation, site: Site, poll_interval_s: float,
                 min_poll_s: float) -> None:
        self.fed, self.site = fed, site
        self.poll_interval_s, self.min_poll_s = poll_interval_s, min_poll_s
        self.tracked: dict[str, str] = {}  # native id -> job id
        self.misses: dict[str, int] = {}
        self._kick = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._lines_seen = 0
        self.stream_connected = asyncio.Event()
        self.polls = 0

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [asyncio.ensure_future(self._follow()),
                           asyncio.ensure_future(self._poll_loop())]

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    def track(self, native_id: str, job_id: str) -> None:
        self.tracked[native_id] = job_id
        self.start()

    def kick(self) -> None:
        """Ask for a safety-net poll soon (after a cancel, a signal-killed wrapper, ...)."""
        self._kick.set()

    # -- push channel -------------------------------------------------------------
    async def _follow(self) -> None:
        delay = 0.5
        while True:
            try:
                await self.site.transport.run(["mkdir", "-p", self.site.workdir], check=True)
                await self.site.transport.run(["touch", self.site.event_file], check=True)
                argv = ["tail", "-n", f"+{self._lines_seen + 1}", "-F", self.site.event_file]
                self.stream_connected.set()
                async for line in self.site.transport.open_stream(argv):
                    self._lines_seen += 1
                    delay = 0.5
                    await self._on_line(line)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # dropped connection: reconnect with backoff, then poll
                log.info("%s: event stream lost (%s); reconnecting", self.site.name, e)
            self.stream_connected.clear()
            self.kick()  # anything may have happened while we were blind
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

    async def _on_line(self, line: str) -> None:
        ev = parse_event_line(line)
        if ev is None:
            return
        at, kind, token, _native, rc = ev
        job = self.fed.store.job_by_token(token)
        if job is None:
            return
        if kind == "start":
            self.fed._apply(job.id, JobState.RUNNING, started_at=at, source="wrapper")
        elif rc == 0:
            self.fed._apply(job.id, JobState.COMPLETED, ended_at=at, exit_code=0,
                            source="wrapper")
        elif rc < 128:
            self.fed._apply(job.id, JobState.FAILED, ended_at=at, exit_code=rc,
                            reason=f"exit code {rc}", source="wrapper")
        else:  # killed by a signal: cancelled, timed out or preempted; the scheduler knows
            self.kick()

    # -- safety net --------------------------------------------------------------
    async def _poll_loop(self) -> None:
        interval = self.min_poll_s
        while True:
            if await self._kicked_within(interval):
                await asyncio.sleep(self.min_poll_s)  # batch kicks that arrive together
            self._kick.clear()
            self._drop_finished()
            if not self.tracked:
                interval = self.poll_interval_s
                continue
            try:
                await self.poll_once()
                interval = self.poll_interval_s
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.info("%s: poll failed: %s", self.site.name, e)
                interval = min(max(interval * 2, self.min_poll_s), self.poll_interval_s)

    async def _kicked_within(self, timeout: float) -> bool:
        # asyncio.wait, not wait_for: on 3.11 wait_for can swallow a cancellation that
        # arrives together with the kick, and stop() would then hang
        waiter = asyncio.ensure_future(self._kick.wait())
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
            return bool(done)
        finally:
            waiter.cancel()

    def _drop_finished(self) -> None:
        for native, job_id in list(self.tracked.items()):
            try:
                if self.fed.store.get_job(job_id).state.terminal:
                    del self.tracked[native]
                    self.misses.pop(native, None)
            except DiamondError:
                del self.tracked[native]

    async def poll_once(self) -> None:
        ids = list(self.tracked)
        if not ids:
            return
        self.polls += 1
        t0 = time.time()
        seen = {s.native_id: s for s in await self.site.statuses(ids)}
        for native in ids:
            job_id = self.tracked.get(native)
            if job_id is None:
                continue
            st = seen.get(native)
            if st is not None:
                self.misses.pop(native, None)
                self.fed._apply(job_id, st.state, exit_code=st.exit_code, reason=st.reason,
                                started_at=st.started_at, ended_at=st.ended_at,
                                native_state=st.native_state, source="poll")
                continue
            job = self.fed.store.get_job(job_id)
            age = t0 - job.submitted_at.timestamp() if job.submitted_at else 0
            self.misses[native] = self.misses.get(native, 0) + 1
            if self.misses[native] >= MISSES_BEFORE_LOST and age > 60:
                self.fed._apply(job_id, JobState.FAILED, source="poll",
                                reason="job left the queue and accounting has no record of it")
        self._drop_finished()
