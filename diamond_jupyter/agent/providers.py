"""The provider factory: the configured LLM provider for an LLMConfig."""

from __future__ import annotations

from .base import Provider
from .config import LLMConfig


def make_provider(cfg: LLMConfig) -> Provider:
    """Build the provider for an LLMConfig (reads the key from its env var, now). Each
    provider's SDK is imported only when that provider is used."""
    if cfg.provider == "openai":
        from .openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(cfg)
    from .anthropic_provider import AnthropicProvider

    return AnthropicProvider(cfg)
