"""Helpers for tests of engines' leases: an engine's heartbeat made old explicitly (the
engine stalled: stopped, paused), without sleeping."""

from __future__ import annotations

from diamond_jupyter import leases
from diamond_jupyter.store import Store


def age_heartbeat(store: Store, engine_id: str, seconds: float = leases.STALE_S + 1) -> None:
    """Move the engine's last heartbeat `seconds` into the past (a row must exist)."""
    with store._write() as c:
        n = c.execute("UPDATE engines SET beat_at = beat_at - ? WHERE id = ?",
                      (seconds, engine_id)).rowcount
    assert n == 1, f"engine {engine_id} has no heartbeat row"
