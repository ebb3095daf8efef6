"""Flux job ids (FLUIDs, 64-bit numbers) in the spellings flux prints and reads (pure).

One id, several encodings (flux-job-id(1)): F58 with its `ƒ` prefix (`f` where the locale
is ASCII), decimal, hex `0x...`, dotted hex `0000.0001.5e2a.0000` (also as the KVS key
`job.0000.0001.5e2a.0000`) and words (`word-word-word--word-word-word`, a mnemonic
encoding whose word list only flux holds: recognised by its shape, never decoded here).
Every flux command takes any of them.
"""

from __future__ import annotations

import re

F58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
MAX_FLUID = 2**64 - 1
_F58 = re.compile(r"[f\u0192]([1-9A-HJ-NP-Za-km-z]+)")
_DECIMAL = re.compile(r"[0-9]+")
_HEX = re.compile(r"0x([0-9a-fA-F]+)")
_DOTHEX = re.compile(r"(?:job\.)?([0-9a-fA-F]{4})\.([0-9a-fA-F]{4})\.([0-9a-fA-F]{4})"
                     r"\.([0-9a-fA-F]{4})")
_WORDS = re.compile(r"[a-z]+-[a-z]+-[a-z]+--[a-z]+-[a-z]+-[a-z]+")
ACCEPTED = ("F58 (ƒ2X4PLSfCDw or f2X4PLSfCDw), decimal, hex (0x1a2b), dotted hex "
            "(0000.0001.5e2a.0000) or words (word-word-word--word-word-word)")


def flux_id_form(text: str) -> str | None:
    """Which spelling of a Flux job id `text` is ("f58", "decimal", "hex", "dothex",
    "words"); None when it is none of them or its number passes 64 bits."""
    if _WORDS.fullmatch(text):
        return "words"
    for form, rx in (("f58", _F58), ("decimal", _DECIMAL), ("hex", _HEX),
                     ("dothex", _DOTHEX)):
        if rx.fullmatch(text):
            return form if flux_id_value(text) is not None else None
    return None


def flux_id_value(text: str) -> int | None:
    """The number a Flux job id spells; None for the words form (its word list is flux's)
    or for text that is no id of 64 bits."""
    value: int | None = None
    if m := _F58.fullmatch(text):
        value = 0
        for ch in m.group(1):
            value = value * 58 + F58_ALPHABET.index(ch)
    elif _DECIMAL.fullmatch(text) and text.isascii():
        value = int(text)
    elif m := _HEX.fullmatch(text):
        value = int(m.group(1), 16)
    elif m := _DOTHEX.fullmatch(text):
        value = int("".join(m.groups()), 16)
    return value if value is not None and value <= MAX_FLUID else None


def flux_f58(value: int, *, ascii_prefix: bool = False) -> str:
    """`value` in F58, prefixed `ƒ` (flux's default) or, `ascii_prefix`, `f` (its f58plain)."""
    digits = ""
    while True:
        value, rest = divmod(value, 58)
        digits = F58_ALPHABET[rest] + digits
        if not value:
            return ("f" if ascii_prefix else "\u0192") + digits


def is_flux_id(text: str) -> bool:
    return flux_id_form(text) is not None
