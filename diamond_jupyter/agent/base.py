"""The provider interface: one model turn in, Anthropic-shaped content blocks out.

Messages are kept in the Anthropic Messages format (the canonical form stored with a task);
other providers translate to and from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..model import SiteError


class LLMError(SiteError):
    """The model endpoint failed or answered something unusable."""


@dataclass
class Turn:
    content: list[dict[str, Any]]  # {"type": "text", "text"} | {"type": "tool_use", ...}
    stop_reason: str = "end_turn"  # end_turn | tool_use | max_tokens
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text").strip()

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]


class Provider(Protocol):
    async def complete(self, *, system: str, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]]) -> Turn: ...

    async def aclose(self) -> None: ...
