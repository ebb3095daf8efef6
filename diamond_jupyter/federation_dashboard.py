"""The Federation's dashboard (a mixin): every site's whole queue with predicted starts, and
each site's usage over time, kept from the snapshots the engine takes anyway."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from .calibration import SiteCalibration, WaitSample
from .dashboard import Dashboard, Usage, downsample, site_entry, usage_point
from .model import BadInput, DiamondError, SiteSnapshot, utcnow

if TYPE_CHECKING:
    from .sites import Sites
    from .store import Store

log = logging.getLogger(__name__)

WAIT_WINDOW_S = 6 * 3600.0  # starts this recent calibrate the scheduler's estimates
MAX_USAGE_HOURS = 7 * 24.0


class DashboardMixin:
    """Mixed into Federation."""

    store: Store
    sites: Sites

    if TYPE_CHECKING:  # Federation's and WaitNotesMixin's
        async def snapshots(self, *, max_age_s: float = 15.0) -> dict[str, SiteSnapshot]: ...

        def wait_calibration_samples(self, site: str, since: float) -> list[WaitSample]: ...

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
        except DiamondError as e:  # a busy store must not fail a queue view
            log.info("%s: usage point not kept: %s", site, e)

    async def dashboard(self, *, user: str, max_age_s: float = 15.0) -> Dashboard:
        """Every usable site's queue, all users' jobs in the scheduler's order, from snapshots
        at most `max_age_s` old (the cached ones the other faces use; no extra command when
        they are fresh enough): per site its totals, what is busy, and one row per job with
        its waited and running time, its predicted start while pending (the scheduler's
        estimate corrected by the site's wait calibration, `source` "calibrated", else the
        estimate alone, `source` "scheduler", else None) and, for this user's diamond jobs,
        `mine` and the job's id. An unreachable site says so in `reachable` and `error`
        (its rows are the last ones seen). `user` is echoed for the face. Never raises for a
        site."""
        snaps = await self.snapshots(max_age_s=max_age_s)
        now = utcnow()
        mine: dict[str, dict[str, str]] = {}
        for job in self.store.unfinished_jobs():
            if job.native_id and not job.reused_by:
                mine.setdefault(job.site, {})[job.native_id] = job.id
        since = time.time() - WAIT_WINDOW_S
        sites = []
        for name, site in self.sites.items():
            waits = self.wait_calibration_samples(name, since)
            cal = SiteCalibration([], wait=waits).wait if waits else None
            sites.append(site_entry(name, site.cfg.scheduler, snaps[name], now,
                                    mine.get(name, {}), cal))
        return {"generated": now.isoformat(), "user": user, "sites": sites}

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
