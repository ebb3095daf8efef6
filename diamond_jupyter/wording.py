"""Small helpers for the words a user reads (pure: no I/O)."""

from __future__ import annotations


def quantity(n: float, noun: str, plural: str | None = None) -> str:
    """`n` with `noun` in the number it takes: "1 GPU", "2 GPUs", "0 nodes" (`plural`
    where adding an "s" is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def agree(n: float, one: str = "is", many: str = "are") -> str:
    """The verb that agrees with a count of `n`: "1 job is", "3 jobs are"."""
    return one if n == 1 else many
