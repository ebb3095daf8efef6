"""An OpenAI-compatible chat-completions endpoint (vLLM, Ollama, an HPC center's own models)
behind the same interface, over plain httpx. Messages stay Anthropic-shaped; translated here."""

from __future__ import annotations

import json
from typing import Any

import httpx

from .base import LLMError, Turn

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def to_openai(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            out.append({"role": m["role"], "content": content})
            continue
        texts = [b["text"] for b in content if b.get("type") == "text"]
        if m["role"] == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
            calls = [{"id": b["id"], "type": "function",
                      "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                     for b in content if b.get("type") == "tool_use"]
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
            continue
        for b in content:
            if b.get("type") == "tool_result":
                body = b.get("content")
                if isinstance(body, list):
                    body = "\n".join(x.get("text", "") for x in body)
                out.append({"role": "tool", "tool_call_id": b["tool_use_id"],
                            "content": str(body)})
        if texts:
            out.append({"role": "user", "content": "\n".join(texts)})
    return out


def to_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t["name"], "description":
             t.get("description", ""), "parameters": t["input_schema"]}} for t in tools]


class OpenAICompatProvider:
    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg
        key = cfg.api_key()
        self.client = httpx.AsyncClient(
            base_url=(cfg.base_url or DEFAULT_BASE_URL).rstrip("/") + "/", timeout=600,
            headers={"Authorization": f"Bearer {key}"} if key else {})

    async def complete(self, *, system: str, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]]) -> Turn:
        body = {"model": self.cfg.model_name, "max_tokens": self.cfg.max_tokens,
                "messages": to_openai(system, messages), "tools": to_tools(tools)}
        try:
            resp = await self.client.post("chat/completions", json=body)
        except httpx.HTTPError as e:
            raise LLMError(f"the model endpoint failed: {e}") from None
        if resp.status_code >= 400:
            raise LLMError(f"the model endpoint answered {resp.status_code}: "
                           f"{resp.text[:300]}")
        try:
            choice = resp.json()["choices"][0]
            msg = choice["message"]
            content: list[dict[str, Any]] = []
            if msg.get("content"):
                content.append({"type": "text", "text": msg["content"]})
            for c in msg.get("tool_calls") or []:
                args = c["function"].get("arguments") or "{}"
                content.append({"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                                "input": json.loads(args) if isinstance(args, str) else args})
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise LLMError(f"unusable answer from the model endpoint: {e}") from None
        except RecursionError:  # a tool call's arguments (or the answer) nested past reading
            raise LLMError("unusable answer from the model endpoint: it nests lists or "
                           "objects too deeply to read (a tool call's arguments are one "
                           "flat JSON object)") from None
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else (
            "max_tokens" if choice.get("finish_reason") == "length" else "end_turn")
        u = resp.json().get("usage") or {}
        return Turn(content, stop, {"input": u.get("prompt_tokens", 0),
                                    "output": u.get("completion_tokens", 0)})

    async def aclose(self) -> None:
        await self.client.aclose()
