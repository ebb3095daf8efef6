"""The agent: an LLM loop over the typed skills that sleeps while jobs run.

`AgentService` (service.py) is the agent of one engine, owned by the faces that offer it;
`AgentRunner` (loop.py) runs its tasks. `ask(engine, text)` / `approve(engine, task_id)` serve
the magics.
"""

from __future__ import annotations

from .base import LLMError, Provider, Turn
from .config import HOW_TO, LLMConfig
from .loop import AgentRunner, LLMNotConfigured
from .notebook import approve, ask, ask_in_notebook, reject
from .providers import make_provider
from .service import AgentService

__all__ = ["HOW_TO", "AgentRunner", "AgentService", "LLMConfig", "LLMError", "LLMNotConfigured",
           "Provider", "Turn", "approve", "ask", "ask_in_notebook", "make_provider", "reject"]
