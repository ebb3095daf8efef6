"""The engines sharing a store and their heartbeats: one row each in its `engines` table.

The heartbeat lives in the same SQLite file as the work it vouches for, so a store copied or
moved keeps it, and the store's own owner checks (`private_files`) cover it: nothing beside
the store can make a gone engine look alive. Times are this machine's clock
(`time.time()`); an engine on another host sharing the store writes its own.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .db import Database


class Heartbeats:
    """The heartbeat rows of the engines sharing one store (see `leases`)."""

    def __init__(self, db: Database) -> None:
        self._db = db

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

    def sweep(self, older_than_s: float) -> None:
        """Remove the rows of engines long gone (killed without closing)."""
        with self._db._write() as c:
            c.execute("DELETE FROM engines WHERE beat_at < ?", (time.time() - older_than_s,))
