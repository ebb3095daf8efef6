"""The Federation's discovery skills: what each site has, found live and merged with the
sites file (a mixin of `Federation`; the work is in `discovery_site.py`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .capabilities import SiteCapabilities
from .discovery import TREE_LIST_TIMEOUT_S, TREES_ASKED, SiteDescription
from .log_lines import one_line_logger

log = one_line_logger(__name__)
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

    def discover_behind(self) -> list[asyncio.Future]:
        """Start the discovery of every site not discovered yet (its discovery enabled, no
        one-time code awaited) and return at once: a long-lived engine calls it as it starts,
        so a workflow's first submit finds its sites discovered, or shares the discovery in
        flight, still waiting no longer than DISCOVERY_WAIT_S (issue 17). A site that cannot
        be reached is logged and stays unknown: the next use asks it again, as before."""
        started = []
        for name, site in self.sites.items():
            discovery = site.discovery
            if site.cfg.discovery.enabled and discovery.cached() is None \
                    and not site.needs_login:
                task = asyncio.ensure_future(discovery.describe())
                task.add_done_callback(_said_why(name))
                started.append(task)
        return started

    async def capabilities(self, *, only: list[str] | None = None,
                           max_wait_s: float = DISCOVERY_WAIT_S,
                           trees: list[str] | None = None) -> dict[str, SiteCapabilities]:
        """What placement matches a job's needs against, per site (only `only`, when given):
        discovery merged with the sites file. A discovery slower than `max_wait_s` goes on in
        the background (the next call has it) and its site is left out here, as is a site whose
        discovery failed: placement then reads that site's sites-file metadata alone. A site
        whose last discovery outlived its TTL is asked again in the background and its last
        discovery used meanwhile: nobody waits on a refresh (a workflow's first submit waited
        up to `max_wait_s` for one in the recorded runs, issue 17); but with a TTL of 0, which
        asks for each use, it is waited for.
        `trees`: module trees the job adds (`module use DIR`); each one a site's listing does
        not name is listed there alone (`add_trees`)."""
        names = [n for n in self.sites if not only or n in only]
        out: dict[str, SiteCapabilities] = {}
        for n in names:
            discovery = self.sites[n].discovery
            # TTL 0: asked for each use, and waited for
            stale = discovery.cached() if discovery.expired() and discovery.ttl_s else None
            if stale is not None:
                refresh = asyncio.ensure_future(self.describe(n))
                refresh.add_done_callback(_quiet)
                out[n] = stale.capabilities
        tasks = {n: asyncio.ensure_future(self.describe(n)) for n in names if n not in out}
        if tasks:
            await asyncio.wait(tasks.values(), timeout=max_wait_s)
        for n, t in tasks.items():
            if not t.done():
                t.add_done_callback(_quiet)
                log.info("%s: discovery still running; placed on its sites file", n)
            elif t.exception() is not None:
                log.info("%s: discovery failed: %s", n, t.exception())
            else:
                out[n] = t.result().capabilities
        out = {n: out[n] for n in names if n in out}  # the sites' order
        if trees:
            await self.add_trees(out, trees, max_wait_s=min(max_wait_s, TREE_LIST_TIMEOUT_S))
        return out

    async def add_trees(self, caps: dict[str, SiteCapabilities], trees: list[str], *,
                        max_wait_s: float = TREE_LIST_TIMEOUT_S) -> None:
        """Each site's capabilities with the module trees `trees` (the first TREES_ASKED) it
        does not list yet, where its module system was discovered: the tree's modules added
        to its software and the tree to its module trees, so the loads after a job's `module
        use DIR` are checked there (a tree not at the site lists nothing: they fail there).
        A listing slower than `max_wait_s` goes on (the next call has it); one that could
        not be made leaves the tree unknown, and its loads unchecked, as before."""
        asked: dict[tuple[str, str], asyncio.Future] = {}
        for name, c in caps.items():
            if not c.module_system or c.software is None or name not in self.sites:
                continue
            listed = {t.rstrip("/") for t in c.module_trees or []}
            for tree in list(dict.fromkeys(trees))[:TREES_ASKED]:
                if tree.rstrip("/") not in listed:
                    task = self.sites[name].discovery.tree_listing(tree)
                    if task is not None:
                        asked[(name, tree)] = task
        if not asked:
            return
        await asyncio.wait(asked.values(), timeout=max_wait_s)
        for (name, tree), task in asked.items():
            if not task.done():
                task.add_done_callback(_quiet)
                continue
            found = None if task.cancelled() or task.exception() else task.result()
            if found is None:
                continue
            c = caps[name]
            have = {m.full for m in c.software or []}
            c.software = [*(c.software or []), *(m for m in found if m.full not in have)]
            c.module_trees = [*(c.module_trees or []), tree.rstrip("/")]


def _said_why(site: str):
    """A background discovery's end: its failure logged (one line), never left unretrieved."""
    def done(t: asyncio.Future) -> None:
        if not t.cancelled() and t.exception() is not None:
            log.info("%s: discovery at start failed (asked again at its next use): %s",
                     site, t.exception())
    return done


def _quiet(t: asyncio.Future) -> None:
    if not t.cancelled():
        t.exception()  # retrieved: a late failure is not reported as unhandled
