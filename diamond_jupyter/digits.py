"""Digits as schedulers and users write them: 0-9 only. Python's `str.isdigit()`, `int()`,
`float()` and the regex `\\d` also take Arabic-Indic, full-width or superscript digits (and
`int()` an underscore), which no scheduler prints or reads."""

from __future__ import annotations


def ascii_digits(text: str) -> bool:
    """Whether `text` is one or more of the digits 0-9 and nothing else."""
    return text.isascii() and text.isdigit()


def foreign_digit(text: str) -> str | None:
    """The first character of `text` that Python reads as a digit but is none of 0-9
    (`'٣'`, `'９'`, `'²'`), else None."""
    return next((c for c in text if c.isdigit() and not c.isascii()), None)
