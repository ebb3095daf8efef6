"""The engines sharing a store and their heartbeats: one row each in its `engines` table.

The heartbeat lives in the same SQLite file as the work it vouches for, so a store copied or
moved keeps it, and the store's own owner checks (`private_files`) cover it: nothing beside
the store can make a gone engine look alive. Times are the writer's clock (`time.time()`);
an engine on another host sharing the store writes its own, which may disagree with ours:
its beats are judged by `silent_for_s` (the row changing, watched on our own clock), never
by comparing its time with ours.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .db import Database


class Heartbeats:
    """The heartbeat rows of the engines sharing one store (see `leases`). `clock`: this
    reader's own monotonic clock, for `silent_for_s`."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.monotonic) -> None:
        self._db = db
        self.clock = clock
        # engine -> (its last beat as written, our clock when we first saw that beat)
        self._seen: dict[str, tuple[float, float]] = {}

    def touch(self, engine_id: str) -> None:
        """The engine `engine_id` is alive now."""
        with self._db._write() as c:
            c.execute("INSERT INTO engines (id, beat_at) VALUES (?, ?) ON CONFLICT(id) "
                      "DO UPDATE SET beat_at = excluded.beat_at", (engine_id, time.time()))

    def remove(self, engine_id: str) -> None:
        """The engine closed: its row goes."""
        with self._db._write() as c:
            c.execute("DELETE FROM engines WHERE id = ?", (engine_id,))

    def age_s(self, engine_id: str) -> float | None:
        """Seconds since the engine's last heartbeat; None when it has none (never beat,
        or closed)."""
        rows = self._db._read("SELECT beat_at FROM engines WHERE id = ?", (engine_id,))
        return time.time() - float(rows[0][0]) if rows else None

    def silent_for_s(self, engine_id: str) -> float | None:
        """For how many seconds of this reader's own clock the engine's heartbeat has not
        changed (0 when it changed since we last looked, or we never looked: its beats are
        watched from then on); None when it has none. The beat's time is only compared with
        itself, so a writer whose clock is off (another host) is judged rightly."""
        rows = self._db._read("SELECT beat_at FROM engines WHERE id = ?", (engine_id,))
        if not rows:
            self._seen.pop(engine_id, None)
            return None
        stamp, now = float(rows[0][0]), self.clock()
        seen = self._seen.get(engine_id)
        if seen is None or seen[0] != stamp:
            self._seen[engine_id] = (stamp, now)
            return 0.0
        return now - seen[1]

    def sweep(self, older_than_s: float) -> None:
        """Remove the rows of engines long gone (killed without closing)."""
        with self._db._write() as c:
            c.execute("DELETE FROM engines WHERE beat_at < ?", (time.time() - older_than_s,))
