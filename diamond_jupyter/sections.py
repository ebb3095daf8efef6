"""Several commands run in one shell, each output ended by a marker line: the shell text
that ends a section and the splitting of the output back into sections (pure)."""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Iterable


def fresh_marker(prefix: str) -> str:
    """`prefix` and a random part: chosen per run, so no command's output can forge it."""
    return f"{prefix}{secrets.token_hex(16)}@"


def section_end(marker: str, name: str) -> str:
    """Shell text ending section `name` with the last command's status: the marker on a
    line of its own, even after output with no final newline."""
    return f"printf '\\n{marker}%s:%s\\n' {shlex.quote(name)} $?"


def batch_sections(stdout: str, marker: str) -> Iterable[tuple[str, str, str]]:
    """(name, output, exit status) of each command of a batch, in order. Each command's
    output is followed by a newline and `marker` + "name:status" on its own line, so an
    output with no final newline (a wrapper's printf) still ends where its command did;
    the one newline added is dropped, as is a CR before each newline (a login shell that
    sends CRLF). `marker` holds a random part chosen per batch: no output can forge it."""
    text = stdout.replace("\r\n", "\n")
    start, opening = 0, f"\n{marker}"
    while (at := text.find(opening, start)) >= 0:
        head_end = text.find("\n", at + len(opening))
        head_end = len(text) if head_end < 0 else head_end
        name, _, code = text[at + len(opening):head_end].rpartition(":")
        section = text[start:at]
        yield name, section[:-1] if section.endswith("\n") else section, code
        start = head_end + 1
