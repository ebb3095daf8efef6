"""Flux job ids (FLUIDs, 64-bit numbers) in the spellings flux prints and reads (pure).

One id, several encodings (flux-job-id(1)): F58 with its `ƒ` prefix (`f` where the locale
is ASCII), decimal, hex `0x...`, dotted hex `0000.0001.5e2a.0000`, the KVS key
`job.0000.0001.5e2a.0000` and words (`word-word-word--word-word-word`: mnemonicode, whose
1626-word list the `mnemonicode` package carries). Every flux command takes any of them.

The words form: flux encodes the id's 8 bytes as they lie in memory (little-endian), four
bytes a group; each group, read as a little-endian 32-bit number x, is three words of
indices x % 1626, x // 1626 % 1626 and x // 1626**2. So the first three words spell the
id's low 32 bits and the last three its high 32 bits.
"""

from __future__ import annotations

import re
from functools import cache

F58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
MAX_FLUID = 2**64 - 1
WORD_BASE = 1626  # mnemonicode's words for whole 4-byte groups
_F58 = re.compile(r"[f\u0192]([1-9A-HJ-NP-Za-km-z]+)")
_DECIMAL = re.compile(r"[0-9]+")
_HEX = re.compile(r"0x([0-9a-fA-F]+)")
_DOTHEX = re.compile(r"(job\.)?([0-9a-fA-F]{4})\.([0-9a-fA-F]{4})\.([0-9a-fA-F]{4})"
                     r"\.([0-9a-fA-F]{4})")
_WORDS = re.compile(r"([a-z]+)-([a-z]+)-([a-z]+)--([a-z]+)-([a-z]+)-([a-z]+)")
ACCEPTED = ("F58 (ƒ2X4PLSfCDw or f2X4PLSfCDw), decimal (12345), hex (0x1a2b), dotted hex "
            "(0000.0001.5e2a.0000), its KVS key (job.0000.0001.5e2a.0000) or words "
            "(airline-alibi-index--tuna-maximum-adam: six words of flux's list)")


@cache
def _word_list() -> tuple[str, ...]:
    """mnemonicode's words in index order, read through its public encoder: a two-byte
    group of value i < 1626 encodes as word i followed by word 0. Imported when first
    needed: the rest of the engine does without it."""
    import mnemonicode

    return tuple(next(mnemonicode.mnencode(i.to_bytes(2, "little")))[0]
                 for i in range(WORD_BASE))


@cache
def _word_index() -> dict[str, int]:
    return {w: i for i, w in enumerate(_word_list())}


def _words_value(text: str) -> int | None:
    """The number a words-form id spells; None where a word is not in the list or a group
    passes 32 bits."""
    m = _WORDS.fullmatch(text)
    if m is None:
        return None
    index = _word_index()
    if any(w not in index for w in m.groups()):
        return None
    low, high = (index[a] + index[b] * WORD_BASE + index[c] * WORD_BASE**2
                 for a, b, c in (m.groups()[:3], m.groups()[3:]))
    if low >= 2**32 or high >= 2**32:
        return None
    return low | high << 32


def flux_words(value: int) -> str:
    """`value` in flux's words form (`flux job id --to=words`)."""
    words = _word_list()

    def group(x: int) -> str:
        return "-".join(words[x // WORD_BASE**k % WORD_BASE] for k in range(3))

    return f"{group(value & 0xFFFFFFFF)}--{group(value >> 32)}"


def flux_id_form(text: str) -> str | None:
    """Which spelling of a Flux job id `text` is ("f58", "decimal", "hex", "dothex", "kvs",
    "words"); None when it is none of them or its number passes 64 bits."""
    if flux_id_value(text) is None:
        return None
    if m := _DOTHEX.fullmatch(text):
        return "kvs" if m.group(1) else "dothex"
    for form, rx in (("words", _WORDS), ("f58", _F58), ("decimal", _DECIMAL), ("hex", _HEX)):
        if rx.fullmatch(text):
            return form
    return None


def flux_id_value(text: str) -> int | None:
    """The number a Flux job id spells, in any of its spellings; None for text that is no
    id of 64 bits."""
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
        value = int("".join(m.groups()[1:]), 16)
    elif _WORDS.fullmatch(text):
        value = _words_value(text)
    return value if value is not None and value <= MAX_FLUID else None


# one task of an array job as other schedulers name it: Slurm's `ID_4`, LSF's `ID[4]`
_TASK_FORM = re.compile(r"(.+?)(?:_([0-9]+)|\[([0-9]+)\])")


def flux_id_problem(text: str) -> str | None:
    """Why `text` is no Flux job id, naming the part that is wrong and the spellings
    accepted; None when it is one."""
    if flux_id_value(text) is not None:
        return None
    if (m := _TASK_FORM.fullmatch(text)) and flux_id_value(m.group(1)) is not None:
        task = m.group(2) or m.group(3)
        return (f"{text!r} is not a Flux job id: it names task {task} of job {m.group(1)} as "
                "Slurm or LSF would, and flux has no job arrays; a job array on a Flux site "
                f"runs each task as a job of its own: name task {task} by its own id (`flux "
                f"jobs` lists it; accepted spellings: {ACCEPTED})")
    if m := _WORDS.fullmatch(text):
        unknown = [w for w in m.groups() if w not in _word_index()]
        why = (f"{', '.join(repr(w) for w in unknown)} not in flux's word list" if unknown
               else "a group of three words spells more than 32 bits")
    elif re.fullmatch(r"[a-z]+(?:--?[a-z]+)+", text):
        n = len(re.findall(r"[a-z]+", text))
        why = (f"{n} words; the words form is six, two groups of three joined by '--'"
               if n != 6 else "the words form is two groups of three words joined by '--'")
    elif any(rx.fullmatch(text) for rx in (_F58, _HEX, _DOTHEX)) or (
            _DECIMAL.fullmatch(text) and text.isascii()):
        why = "its number passes 64 bits"
    else:
        why = "no spelling of a Flux job id"
    return f"{text!r} is not a Flux job id ({why}; accepted: {ACCEPTED})"


def flux_f58(value: int, *, ascii_prefix: bool = False) -> str:
    """`value` in F58, prefixed `ƒ` (flux's default) or, `ascii_prefix`, `f` (its f58plain)."""
    digits = ""
    while True:
        value, rest = divmod(value, 58)
        digits = F58_ALPHABET[rest] + digits
        if not value:
            return ("f" if ascii_prefix else "\u0192") + digits


def flux_spellings(value: int) -> list[str]:
    """Every spelling flux gives the id `value`: F58 (`ƒ` and `f`), decimal, hex, dotted
    hex, its KVS key and words."""
    hexa = f"{value:016x}"
    dothex = ".".join(hexa[i:i + 4] for i in range(0, 16, 4))
    return [flux_f58(value), flux_f58(value, ascii_prefix=True), str(value), f"0x{value:x}",
            dothex, f"job.{dothex}", flux_words(value)]


def is_flux_id(text: str) -> bool:
    return flux_id_form(text) is not None
