"""The agent: an LLM loop over the typed skills that sleeps while jobs run.

`AgentRunner` (loop.py) runs tasks for a Federation; `Federation.ask/approve/reject` are the
faces' entry points. `ask(engine, text)` / `approve(engine, task_id)` serve the magics.
"""

from __future__ import annotations

from .base import LLMError, Provider, Turn, make_provider
from .config import HOW_TO, LLMConfig
from .loop import AgentRunner, LLMNotConfigured
from .notebook import approve, ask, ask_in_notebook, reject

__all__ = ["HOW_TO", "AgentRunner", "LLMConfig", "LLMError", "LLMNotConfigured", "Provider",
           "Turn", "approve", "ask", "ask_in_notebook", "make_provider", "reject"]
