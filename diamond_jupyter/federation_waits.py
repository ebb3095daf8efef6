"""What the queues said against what happened: the scheduler's start estimates for pending
jobs (every user's), noted when a queue view shows them, and each job's actual start,
noted when a later view (or the site's accounting) shows it. The pairs calibrate the
scheduler's estimates per site, partition and job size (`calibration.WaitSample`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .calibration import WaitSample, wait_samples
from .log_lines import one_line_logger
from .model import DiamondError, JobStatus, SiteSnapshot
from .placement_fit import aware

if TYPE_CHECKING:
    from .store import Store

log = one_line_logger(__name__)


class WaitNotesMixin:
    """Mixed into Federation."""

    store: Store
    _waits_noted: dict[str, float]  # site -> the taken_at of the last view noted

    def note_waits(self, snaps: Mapping[str, SiteSnapshot]) -> None:
        """Note each view once: new pending jobs' estimates, and starts of noted ones."""
        for name, snap in snaps.items():
            taken = snap.taken_at.timestamp()
            if not snap.reachable or snap.queue_error or self._waits_noted.get(name) == taken:
                continue
            self._waits_noted[name] = taken
            seen = [(j.native_id, j.partition, j.cpus, taken,
                     aware(j.estimated_start).timestamp())
                    for j in snap.pending if j.estimated_start is not None]
            try:
                self.store.note_wait_estimates(name, seen)
                self.note_starts(name, snap.running)
            except DiamondError as e:  # a busy store must not fail a queue view
                log.info("%s: scheduler estimates not noted: %s", name, e)

    def note_starts(self, site: str, jobs: Iterable[JobStatus]) -> None:
        """Actual starts of jobs whose estimate was noted (from a view or accounting)."""
        open_ids = self.store.open_wait_ids(site)
        if open_ids:
            self.store.note_starts(site, {j.native_id: aware(j.started_at).timestamp()
                                          for j in jobs
                                          if j.started_at and j.native_id in open_ids})

    def wait_calibration_samples(self, site: str, since: float) -> list[WaitSample]:
        """The jobs of `site` (every user's) whose scheduler start estimate was noted and that
        started after `since` (epoch seconds): each its partition, size, estimated and actual
        wait, what the wait calibration learns from. Reads the store only."""
        return wait_samples(self.store.wait_samples(site, since))
