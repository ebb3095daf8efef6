"""Whose turn it is to be looked up in a site's accounting, where one query reaches only the
jobs it has time for (PBS's `tracejob`, within its budget): the jobs not asked about for the
longest come first, so each is asked within a few polls, however many keep missing."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

# seconds after which a job no longer asked about is forgotten (it was found, or lost)
FORGET_AFTER_S = 3600.0


class AccountingTurns:
    """For each job waiting to be looked up: since when it has waited for an answer (its
    last lookup, else when it was first wanted), and when it was last wanted."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._waiting_since: dict[str, float] = {}
        self._wanted_at: dict[str, float] = {}

    def order(self, native_ids: Iterable[str]) -> list[str]:
        """`native_ids`, those waiting longest first (ties in the given order)."""
        now = self._clock()
        for gone in [i for i, t in self._wanted_at.items() if now - t > FORGET_AFTER_S]:
            self._forget(gone)
        ids = list(dict.fromkeys(native_ids))
        for i in ids:
            self._waiting_since.setdefault(i, now)
            self._wanted_at[i] = now
        return sorted(ids, key=self._waiting_since.__getitem__)

    def asked(self, native_ids: Iterable[str]) -> None:
        """These were looked up now: their wait starts again."""
        now = self._clock()
        for i in native_ids:
            if i in self._wanted_at:
                self._waiting_since[i] = now

    def answered(self, native_ids: Iterable[str]) -> None:
        """These were found: no longer waiting."""
        for i in native_ids:
            self._forget(i)

    def _forget(self, native_id: str) -> None:
        self._waiting_since.pop(native_id, None)
        self._wanted_at.pop(native_id, None)
