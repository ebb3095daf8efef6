"""The Federation's dashboard (a mixin): every site's whole queue with predicted starts, and
each site's usage over time, kept from the snapshots the engine takes anyway."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import TYPE_CHECKING

from .calibration import SiteCalibration, borrowed, site_waits
from .dashboard import (
    Dashboard,
    Simulated,
    Usage,
    downsample,
    simulated_starts,
    site_entry,
    usage_point,
)
from .log_lines import one_line_logger
from .model import BadInput, SiteSnapshot, utcnow

if TYPE_CHECKING:
    from .sites import Sites
    from .store import Store

log = one_line_logger(__name__)

MAX_USAGE_HOURS = 7 * 24.0
# A queue longer than this is not simulated for predicted starts (the simulation takes
# about 0.1 s per 1,000 queued jobs, twice: median and bound); its jobs keep the
# scheduler's estimates.
MAX_SIMULATED_PENDING = 3000


class DashboardMixin:
    """Mixed into Federation."""

    store: Store
    sites: Sites

    if TYPE_CHECKING:  # Federation's and WaitNotesMixin's
        async def snapshots(self, *, max_age_s: float = 15.0) -> dict[str, SiteSnapshot]: ...

        async def calibration(self, *, max_age_s: float = ..., fetch: bool = True
                              ) -> dict[str, SiteCalibration]: ...

    def keep_usage(self) -> None:
        """Add a point to a site's usage series for every snapshot its Site takes from now
        on (whoever asked for it); Federation calls it once."""
        for name, site in self.sites.items():
            site.snapshot_observers.append(
                lambda snap, name=name: self._note_usage(name, snap))

    def _note_usage(self, site: str, snap: SiteSnapshot) -> None:
        point = usage_point(snap)
        if point is None:
            return
        try:
            self.store.note_usage(site, point)
        except Exception as e:  # a busy or broken store must not fail a queue view
            log.info("%s: usage point not kept: %s", site, e)

    async def dashboard(self, *, user: str, max_age_s: float = 15.0) -> Dashboard:
        """Every usable site's queue, all users' jobs in the scheduler's order, from snapshots
        at most `max_age_s` old (the cached ones the other faces use; no extra command when
        they are fresh enough): per site its totals, what is busy, and one row per job with
        its waited and running time, its predicted start while pending (as placement
        predicts: the scheduler's estimate corrected by the site's wait calibration, else
        the job's start in the queue's backfill simulation calibrated with recent runtimes,
        both `source` "calibrated" with a 90% bound, the simulation's "borrowed" where the
        site borrows other sites' ratios as placement does; else the scheduler's estimate
        alone, `source` "scheduler"; else None; see `dashboard`. Calibrations are those
        placement last read: no site is asked for them) and, for this user's diamond jobs,
        `mine` and the job's id. An unreachable site says so in `reachable` and `error`
        (its rows are the last ones seen). `user` is echoed for the face. Never raises for a
        site."""
        snaps = await self.snapshots(max_age_s=max_age_s)
        # what placement read (no site is asked), a thin site borrowing as placement does
        cals = borrowed(await self.calibration(fetch=False), self.sites.second_doors())
        now = utcnow()
        mine: dict[str, dict[str, str]] = {}
        for job in self.store.unfinished_jobs():
            if job.native_id and not job.reused_by:
                mine.setdefault(job.site, {})[job.native_id] = job.id
        sims = await asyncio.gather(*(self._simulated(n, snaps[n], cals.get(n), now)
                                      for n in self.sites))
        sites = []
        for (name, site), sim in zip(self.sites.items(), sims, strict=True):
            cal = cals.get(name)
            sites.append(site_entry(name, site.cfg.scheduler, snaps[name], now,
                                    mine.get(name, {}), cal.wait if cal else None, sim,
                                    site_waits(cal.queued if cal else None,
                                               snaps[name].jobs, now),
                                    bool(sim) and cal is not None and cal.borrows))
        return {"generated": now.isoformat(), "user": user, "sites": sites}

    async def _simulated(self, site: str, snap: SiteSnapshot, cal: SiteCalibration | None,
                         now: datetime) -> Simulated:
        """The calibrated simulation's starts for `site`'s queue, from seconds after `now`:
        computed once per snapshot and calibration (in a worker thread), then shifted."""
        if cal is None or not (cal.samples or cal.borrows) or not snap.reachable \
                or len(snap.pending) > MAX_SIMULATED_PENDING:
            return {}
        cache: dict[str, tuple[tuple, datetime, Simulated]] = \
            self.__dict__.setdefault("_dashboard_sims", {})
        key = (snap.taken_at, cal.samples, cal.wait.samples if cal.wait else 0,
               cal.pool.samples if cal.borrows and cal.pool else 0)
        hit = cache.get(site)
        if hit is None or hit[0] != key:
            at = now
            starts = await asyncio.to_thread(simulated_starts, snap, cal, at)
            cache[site] = hit = (key, at, starts)
        age = (now - hit[1]).total_seconds()
        return {n: (max(m - age, 0.0), max(b - age, 0.0)) for n, (m, b) in hit[2].items()}

    def usage(self, site: str, *, hours: float = 6.0) -> Usage:
        """Site `site`'s usage over the last `hours` (at most a week): a point per snapshot
        taken (busy CPUs and GPUs, pending and running jobs; epoch seconds), oldest first,
        thinned with age and to at most `dashboard.MAX_POINTS`. Reads the store only.
        BadInput for an unknown site or hours out of range."""
        self.sites.require(site)
        if not (0 < hours <= MAX_USAGE_HOURS):
            raise BadInput(f"hours must be above 0 and at most {MAX_USAGE_HOURS:g} "
                           f"(a week), not {hours:g}")
        points = self.store.usage(site, since=time.time() - hours * 3600.0)
        return {"site": site, "points": downsample(points)}
