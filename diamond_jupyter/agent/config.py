"""The agent's LLM settings: provider, model, token limit and the *name* of the key's
environment variable (the key itself is read only when a provider is built)."""

from __future__ import annotations

import os
import re
from typing import Literal

from pydantic import BaseModel, Field

from ..model import BadInput, visible

HOW_TO = ("no LLM configured: set ANTHROPIC_API_KEY (or DIAMOND_LLM_PROVIDER=openai with "
          "OPENAI_BASE_URL/OPENAI_API_KEY)")
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}
MAX_TOKENS_LIMIT = 1_000_000  # a model's answer in tokens: far above any provider's


class LLMConfig(BaseModel):
    provider: Literal["anthropic", "openai"] = "anthropic"
    model: str = ""  # "" = the provider's default
    max_tokens: int = Field(4096, ge=1, le=MAX_TOKENS_LIMIT)
    api_key_env: str = "ANTHROPIC_API_KEY"
    base_url: str | None = None  # None: the SDK's default (ANTHROPIC_BASE_URL is honoured)
    max_model_calls: int = Field(40, ge=1, description="per task, a runaway guard")

    @classmethod
    def from_env(cls, **overrides: object) -> LLMConfig:
        """DIAMOND_LLM_PROVIDER, DIAMOND_LLM_MODEL, DIAMOND_LLM_MAX_TOKENS; for "openai":
        OPENAI_BASE_URL and OPENAI_API_KEY. Overrides that are None are ignored."""
        env = os.environ
        provider = str(overrides.get("provider") or env.get("DIAMOND_LLM_PROVIDER")
                       or "anthropic").lower()
        if provider not in DEFAULT_MODELS:  # a bad variable is one line, not a traceback
            raise BadInput(f"DIAMOND_LLM_PROVIDER {visible(provider[:80])!r} is not a provider "
                           f"(accepted: {', '.join(DEFAULT_MODELS)})")
        data: dict[str, object] = {"provider": provider,
                                   "model": env.get("DIAMOND_LLM_MODEL", "")}
        raw = env.get("DIAMOND_LLM_MAX_TOKENS", "").strip()
        if raw:
            if not (re.fullmatch(r"[0-9]{1,7}", raw) and 1 <= int(raw) <= MAX_TOKENS_LIMIT):
                raise BadInput(f"DIAMOND_LLM_MAX_TOKENS {visible(raw[:80])!r} is not a token "
                               f"limit (accepted: a whole number from 1 to {MAX_TOKENS_LIMIT})")
            data["max_tokens"] = int(raw)
        if provider == "openai":
            data.update(api_key_env="OPENAI_API_KEY", base_url=env.get("OPENAI_BASE_URL"))
        data.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(data)

    @property
    def model_name(self) -> str:
        return self.model or DEFAULT_MODELS[self.provider]

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def missing(self) -> str | None:
        """Why no model can be called (HOW_TO), or None when configured."""
        if self.provider == "anthropic" and not self.api_key():
            return HOW_TO
        if self.provider == "openai" and not (self.base_url or self.api_key()):
            return HOW_TO
        return None

    def public(self) -> dict[str, str]:
        """What may be shown or stored: never the key."""
        return {"provider": self.provider, "model": self.model_name}
