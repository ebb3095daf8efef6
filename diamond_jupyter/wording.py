"""Small helpers for the words a user reads (pure: no I/O)."""

from __future__ import annotations


def quantity(n: int, noun: str, plural: str | None = None) -> str:
    """`n` with `noun` in the number it takes: "1 GPU", "2 GPUs", "0 nodes" (`plural`
    where adding an "s" is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
