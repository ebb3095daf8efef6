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


def check_tool_calls(turn: Turn, earlier: list[dict[str, Any]]) -> None:
    """LLMError unless each tool call of the model's `turn` has a name (text) and an id of
    its own, used by no other call of the turn or of the `earlier`
    messages: a call's id keys what it did (its step, its approval, the submit it made), so
    a repeated id hid a call from the task's steps or answered a new submit with an earlier
    job; a name that is no text crashed the loop. (An input that is no object is the call's
    own error, told to the model.)"""
    seen = {b.get("id") for m in earlier if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
    for n, call in enumerate(turn.tool_calls, 1):
        cid, name = call.get("id"), call.get("name")
        if not isinstance(cid, str) or not cid or len(cid) > 256:
            raise LLMError(f"the model's tool call {n} has no usable id ({cid!r:.80})")
        if cid in seen:
            raise LLMError(f"the model's tool call {n} repeats the id {cid!r:.80} of an "
                           "earlier call (each call needs its own)")
        if not isinstance(name, str):
            raise LLMError(f"the model's tool call {n} names no tool ({name!r:.80})")
        seen.add(cid)


class Provider(Protocol):
    async def complete(self, *, system: str, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]]) -> Turn: ...

    async def aclose(self) -> None: ...
