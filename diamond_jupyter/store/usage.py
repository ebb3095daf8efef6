"""Each site's usage over time: one point per snapshot, thinned by age (`dashboard.thin`),
so the series stays small and survives a restart."""

from __future__ import annotations

import time

from ..dashboard import UsagePoint, thin
from .db import Database


class UsageMixin(Database):
    """The usage series of every site."""

    def note_usage(self, site: str, point: UsagePoint, now: float | None = None) -> None:
        """Add one point (a point at the same time replaces it) and thin the site's series."""
        now = time.time() if now is None else now
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO usage (site, t, busy_cpus, busy_gpus, pending, "
                      "running) VALUES (?,?,?,?,?,?)",
                      (site, point["t"], point["busy_cpus"], point["busy_gpus"],
                       point["pending"], point["running"]))
            times = [r[0] for r in c.execute("SELECT t FROM usage WHERE site = ?", (site,))]
            drop = thin(times, now)
            if drop:
                c.executemany("DELETE FROM usage WHERE site = ? AND t = ?",
                              [(site, t) for t in drop])

    def usage(self, site: str, since: float = 0.0) -> list[UsagePoint]:
        """The site's points at or after `since` (epoch seconds), oldest first."""
        return [{"t": r[0], "busy_cpus": r[1], "busy_gpus": r[2], "pending": r[3],
                 "running": r[4]} for r in self._read(
            "SELECT t, busy_cpus, busy_gpus, pending, running FROM usage WHERE site = ? "
            "AND t >= ? ORDER BY t", (site, since))]
