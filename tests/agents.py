"""The agent service of a test's Federation: one per Federation, as a face owns one."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from diamond_jupyter.agent.service import AgentService
from diamond_jupyter.federation import Federation

_services: WeakKeyDictionary[Federation, AgentService] = WeakKeyDictionary()


def agent(fed: Federation) -> AgentService:
    """The agent service over `fed` (made on first use, like the server app's)."""
    if fed not in _services:
        _services[fed] = AgentService(fed)
    return _services[fed]
