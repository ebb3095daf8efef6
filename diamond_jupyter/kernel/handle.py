"""JobHandle: what a submit gives back (`job = _`). Follows its job through engine events;
for a hedged submission, the copy that started first once it is known (the card with it)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Protocol

from ..model import DiamondError, Job, JobState, SiteError, hedge_winner_of, one_line
from .engine import Engine

TAIL_LINES = 20
ALL_LINES = 1_000_000


class JobFailed(DiamondError):
    """The job ended in a state other than COMPLETED."""

    def __init__(self, job: Job, stderr: str = "") -> None:
        self.job = job
        code = f" with exit code {job.exit_code}" if job.exit_code is not None else ""
        reason = f" ({job.reason})" if job.reason else ""
        last = stderr.strip().splitlines()[-1:] if stderr else []
        tail = f"; stderr: {last[0]}" if last else ""
        super().__init__(f"job {job.id} {job.state.value}{code}{reason}{tail}")


class Card(Protocol):
    def update(self, handle: JobHandle, here: bool = False) -> None: ...
    def show(self) -> None: ...


class JobHandle:
    def __init__(self, engine: Engine, job: Job) -> None:
        self._engine = engine
        self._job = job
        # the time limit; the stdout and stderr tails and the files once the job has ended
        self._extras: dict[str, Any] = {"time_limit_s": engine.time_limit(job),
                                        "lookout": engine.lookout(job)}
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._error: BaseException | None = None
        self._card: Card | None = None
        self._follow: Future | None = None

    # -- following ------------------------------------------------------------------------
    def follow(self) -> JobHandle:
        """Start following the job's events on the engine loop (idempotent)."""
        if self._follow is None:
            self._follow = self._engine.spawn(self._run())
        return self

    async def _run(self) -> None:
        try:
            job = await self._engine.watch(self.id, self._on_job)
            while (won := hedge_winner_of(job)) is not None:  # follow the copy that started
                try:
                    winner: Job | None = await self._engine.job(won)
                except DiamondError:
                    winner = None
                if winner is None or winner.hedge_group != job.hedge_group:
                    self._on_job(job, follow_hedge=False)  # the copy as it ended
                    break
                with self._lock:
                    self._job = winner
                self._changed()
                job = await self._engine.watch(winner.id, self._on_job)
            extras: dict[str, Any] = {"time_limit_s": self._engine.time_limit(self._job),
                                      "lookout": self._engine.lookout(self._job)}
            if self._job.native_id is None:  # closed as never submitted: no results to read
                with self._lock:
                    self._extras = extras
                self._changed()
                return
            try:
                logs = await self._engine.logs(self.id, TAIL_LINES)
                extras["stdout"] = logs.get("stdout", "")
                extras["stderr"] = logs.get("stderr", "")
                extras["files"] = await self._engine.files(self.id)
            except DiamondError as e:
                extras.setdefault("stdout", "")
                extras["error"] = f"could not read the results: {e}"
            with self._lock:
                self._extras = extras
            self._changed()
        except Exception as e:  # surfaced by wait()
            self._error = e
            self._ended.set()

    def _on_job(self, job: Job, follow_hedge: bool = True) -> None:
        if follow_hedge and hedge_winner_of(job) is not None:
            return  # a hedged copy cancelled because another started: `_run` follows that one
        with self._lock:
            if job == self._job and not (job.state.terminal and not self._ended.is_set()):
                return
            self._job = job
            if (lookout := self._engine.lookout(job)) is not None:  # its lost answer's search
                self._extras["lookout"] = lookout
        if job.state.terminal:
            self._ended.set()
        self._changed()

    def _changed(self) -> None:
        card = self._card
        if card is not None:
            try:
                card.update(self)
            except Exception:  # a display problem must not stop following the job
                import logging

                logging.getLogger(__name__).debug("card update failed", exc_info=True)

    def _attach(self, card: Card) -> None:
        self._card = card

    def snapshot(self) -> tuple[Job, dict[str, Any]]:
        with self._lock:
            return self._job, dict(self._extras)

    # -- the public API ---------------------------------------------------------------------
    @property
    def job(self) -> Job:
        return self._job

    @property
    def id(self) -> str:
        return self._job.id

    @property
    def site(self) -> str:
        return self._job.site

    @property
    def state(self) -> str:
        return self._job.state.value

    @property
    def exit_code(self) -> int | None:
        return self._job.exit_code

    @property
    def done(self) -> bool:
        return self._job.state.terminal

    def wait(self, timeout: float | None = None) -> JobHandle:
        """Block until the job ends (woken by its events, not by polling); returns self."""
        self.follow()
        if not self._ended.wait(timeout):
            raise SiteError(f"timed out after {timeout:.0f}s waiting for {self.id} "
                            f"(state {self.state})")
        if self._error is not None and not self.done:
            raise self._error
        if self._follow is not None:  # the results' tails and files are read just after
            try:
                self._follow.result(timeout)
            except Exception:  # reported on the card; the job itself has ended
                pass
        card = self._card
        if card is not None and getattr(card, "live", False):
            # also from this cell: tools that run cells one by one (nbclient) keep only
            # the updates of the running cell, and so save the final card
            card.update(self, here=True)
        return self

    def result(self, timeout: float | None = None) -> str:
        """Wait, then the job's stdout; JobFailed when it did not complete."""
        self.wait(timeout)
        logs = self._engine.call(self._engine.logs(self.id, ALL_LINES))
        if self._job.state != JobState.COMPLETED:
            raise JobFailed(self._job, logs.get("stderr", ""))
        return logs.get("stdout", "")

    def logs(self, lines: int = 100) -> dict[str, str]:
        return self._engine.call(self._engine.logs(self.id, lines))

    def files(self) -> list[str]:
        return self._engine.call(self._engine.files(self.id))

    def fetch(self, dest: str | Path | None = None, *, files: list[str] | None = None,
              overwrite: bool = False) -> list[Path]:
        """The local files written; each result file skipped (a hidden name not in `files`,
        a local file no fetch of this job wrote, without `overwrite`) is printed, one line."""
        got = self._engine.call(self._engine.fetch(self.id, str(dest) if dest else None,
                                                   files=files, overwrite=overwrite))
        for line in got["skipped"]:  # the job's names: one line each, shown as they are
            print(f"skipped {one_line(line)}")
        return [Path(p) for p in got["paths"]]

    def cancel(self) -> JobHandle:
        self._on_job(self._engine.call(self._engine.cancel(self.id)))
        return self

    def card(self) -> None:
        """Show (another view of) the live card, e.g. in a new cell after a restart."""
        from IPython.display import display

        display(self)

    def refresh(self) -> JobHandle:
        self._on_job(self._engine.call(self._engine.job(self.id, refresh=True)))
        return self

    # -- display -----------------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        from .jobcard import show

        show(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        from .jobcard import render_text

        p.text(render_text(*self.snapshot()))

    def __repr__(self) -> str:
        return f"<JobHandle {self.id} {self.state}>"
