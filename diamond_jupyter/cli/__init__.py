"""The `diamond` command line: `main` parses and runs one subcommand."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
