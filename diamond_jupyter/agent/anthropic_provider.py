"""Anthropic Messages API with tool use (the `anthropic` SDK; honours ANTHROPIC_BASE_URL)."""

from __future__ import annotations

from typing import Any

import anthropic

from .base import LLMError, Turn


class AnthropicProvider:
    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg
        kw: dict[str, Any] = {"api_key": cfg.api_key(), "max_retries": 2}
        if cfg.base_url:
            kw["base_url"] = cfg.base_url
        self.client = anthropic.AsyncAnthropic(**kw)

    async def complete(self, *, system: str, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]]) -> Turn:
        try:
            resp = await self.client.messages.create(
                model=self.cfg.model_name, max_tokens=self.cfg.max_tokens, system=system,
                messages=messages, tools=tools)
        except anthropic.APIStatusError as e:
            raise LLMError(f"the Anthropic API answered {e.status_code}: {e.message}") from None
        except anthropic.APIError as e:
            raise LLMError(f"the Anthropic API failed: {e}") from None
        content = []
        for b in resp.content:
            if b.type == "text":
                content.append({"type": "text", "text": b.text})
            elif b.type == "tool_use":
                content.append({"type": "tool_use", "id": b.id, "name": b.name,
                                "input": dict(b.input or {})})
        usage = {"input": resp.usage.input_tokens, "output": resp.usage.output_tokens}
        return Turn(content, resp.stop_reason or "end_turn", usage)

    async def aclose(self) -> None:
        await self.client.close()
