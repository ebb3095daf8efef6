"""The scheduler's start estimates for pending jobs (all users'), and when they started.

The engine notes the first estimate it sees for each pending job in a site's queue and,
later, the job's actual start (from a later queue view or the site's accounting). Pairs of
the two calibrate the scheduler's estimates (`calibration.wait_samples`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from .db import Database

WAIT_KEEP_S = 2 * 86400.0  # estimates older than this are dropped
START_SLACK_S = 60.0  # a start before the estimate was seen (less this) is another job's


class WaitsMixin(Database):
    """Scheduler start estimates and actual starts."""

    def note_wait_estimates(self, site: str,
                            seen: Iterable[tuple[str, str | None, int | None, float, float]]
                            ) -> int:
        """(native id, partition, cpus, seen at, estimated start) of pending jobs, epoch
        seconds; only the first estimate seen for a job is kept. Returns how many are new."""
        rows = list(seen)
        if not rows:
            return 0
        with self._write() as c:
            before = c.total_changes
            c.executemany(
                "INSERT INTO wait_estimates (site, native_id, partition, cpus, seen_at, "
                "estimated_start) SELECT ?,?,?,?,?,? WHERE NOT EXISTS (SELECT 1 FROM "
                "wait_estimates WHERE site = ? AND native_id = ?)",
                [(site, n, p, cpus, at, est, site, n) for n, p, cpus, at, est in rows])
            added = c.total_changes - before
            c.execute("DELETE FROM wait_estimates WHERE seen_at < ?",
                      (time.time() - WAIT_KEEP_S,))
            return added

    def note_starts(self, site: str, started: dict[str, float]) -> int:
        """Actual starts (epoch seconds) by native id, for the estimates still open."""
        if not started:
            return 0
        with self._write() as c:
            before = c.total_changes
            c.executemany(
                "UPDATE wait_estimates SET started_at = ? WHERE site = ? AND native_id = ? "
                "AND started_at IS NULL AND seen_at <= ? + ?",
                [(at, site, n, at, START_SLACK_S) for n, at in started.items()])
            return c.total_changes - before

    def open_wait_ids(self, site: str) -> set[str]:
        """Native ids whose estimate is noted and whose start is not yet known."""
        return {r[0] for r in self._read(
            "SELECT native_id FROM wait_estimates WHERE site = ? AND started_at IS NULL",
            (site,))}

    def wait_samples(self, site: str, since: float = 0.0
                     ) -> list[tuple[str | None, int | None, float, float, float]]:
        """(partition, cpus, seen at, estimated start, started at) of the jobs that started
        after `since` (epoch seconds)."""
        return [tuple(r) for r in self._read(  # type: ignore[misc]
            "SELECT partition, cpus, seen_at, estimated_start, started_at FROM "
            "wait_estimates WHERE site = ? AND started_at IS NOT NULL AND started_at >= ? "
            "ORDER BY started_at", (site, since))]
