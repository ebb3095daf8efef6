"""The Federation's discovery skills: what each site has, found live and merged with the
sites file (a mixin of `Federation`; the work is in `discovery_site.py`)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from .capabilities import SiteCapabilities
from .discovery import SiteDescription

log = logging.getLogger(__name__)
DISCOVERY_WAIT_S = 10.0  # placement waits this long for a site's first discovery

if TYPE_CHECKING:
    from .sites import Site


class DiscoverMixin:
    sites: dict[str, Site]

    def site(self, name: str) -> Site:  # provided by Federation
        raise NotImplementedError

    async def describe(self, site: str, *, refresh: bool = False) -> SiteDescription:
        """What discovery found on site `site`: architecture, features, GPU models, software
        modules, container runtimes, MPI stacks and the cluster -> partition -> node type
        hierarchy, cached for the site's `discovery.ttl_s` (`refresh` asks the site now).
        BadInput for an unknown site; SiteError when the site cannot be described."""
        return await self.site(site).discovery.describe(refresh=refresh)

    async def capabilities(self, *, only: list[str] | None = None,
                           max_wait_s: float = DISCOVERY_WAIT_S) -> dict[str, SiteCapabilities]:
        """What placement matches a job's needs against, per site (only `only`, when given):
        discovery merged with the sites file. A discovery slower than `max_wait_s` goes on in
        the background (the next call has it) and its site is left out here, as is a site whose
        discovery failed: placement then reads that site's sites-file metadata alone."""
        names = [n for n in self.sites if not only or n in only]
        tasks = {n: asyncio.ensure_future(self.describe(n)) for n in names}
        if tasks:
            await asyncio.wait(tasks.values(), timeout=max_wait_s)
        out = {}
        for n, t in tasks.items():
            if not t.done():
                t.add_done_callback(_quiet)
                log.info("%s: discovery still running; placed on its sites file", n)
            elif t.exception() is not None:
                log.info("%s: discovery failed: %s", n, t.exception())
            else:
                out[n] = t.result().capabilities
        return out


def _quiet(t: asyncio.Future) -> None:
    if not t.cancelled():
        t.exception()  # retrieved: a late failure is not reported as unhandled
