"""The agent service of a test's Federation: one per Federation, as a face owns one; an
engine and its agent service over a user's files, closed after; or an engine of one site
whose scheduler answers every command with success and nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from diamond_jupyter.agent.service import AgentService
from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.sites import Site
from diamond_jupyter.store import Store
from diamond_jupyter.transports.base import CommandResult

_services: WeakKeyDictionary[Federation, AgentService] = WeakKeyDictionary()


def agent(fed: Federation) -> AgentService:
    """The agent service over `fed` (made on first use, like the server app's)."""
    if fed not in _services:
        _services[fed] = AgentService(fed)
    return _services[fed]


@asynccontextmanager
async def engine_and_agent(sites: Path, store_path: Path
                           ) -> AsyncIterator[tuple[Federation, AgentService]]:
    """An engine over the sites file and store given, and an agent service over it; both
    closed after."""
    fed = Federation(sites, store=Store(store_path))
    service = AgentService(fed)
    try:
        yield fed, service
    finally:
        await service.close()
        await fed.close()


class SilentTransport:
    """A site's transport that answers every command with success and nothing, keeping
    each argv in `argvs`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.argvs: list[list[str]] = []

    async def run(self, argv: list[str], **kw: Any) -> CommandResult:
        self.argvs.append(list(argv))
        return CommandResult(list(argv), 0, "", "", 0.0)


@asynccontextmanager
async def silent_site_engine(tmp_path: Path, site: str, scheduler: str
                             ) -> AsyncIterator[Federation]:
    """A started engine of one site, `site`, running `scheduler` behind a SilentTransport,
    its store in tmp_path; it and its agent service closed after."""
    cfg = SiteConfig(name=site, scheduler=scheduler, transport=TransportConfig(kind="local"))
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))
    fed.sites[site] = Site(cfg, transport=SilentTransport(site))
    await fed.start(recover=False)
    try:
        yield fed
    finally:
        await agent(fed).close()
        await fed.close()
