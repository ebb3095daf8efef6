"""The agent service of a test's Federation: one per Federation, as a face owns one; or an
engine and its agent service over a user's files, closed after."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from weakref import WeakKeyDictionary

from diamond_jupyter.agent.service import AgentService
from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store

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
