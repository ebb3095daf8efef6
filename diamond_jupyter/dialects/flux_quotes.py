"""Triple-quoted strings in flux submission directives (flux-batch(1), RFC 36).

flux batch reads a string between triple quotes (three double or three single quotes) on
one directive line as one quoted word. A directive that ends in a triple quote opens a
string that runs over the next directive lines, verbatim but for the opening line's
indent, up to the line that ends in the same triple quote (`# flux: --setattr=user.conf=`
then the triple quote, the string's lines, then `# flux:` and the triple quote). Pure:
directive tuples in, directive tuples out.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from ..model import BadInput

_PAIRED = re.compile(r"""(["']{3})(.*)\1""")
_OPENING = re.compile(r"""["']{3}.""")  # a triple quote with text after it on its line

Directive = tuple[int, str, str]  # (line number, raw line, text after the sentinel)


def _inline(lineno: int, raw: str, payload: str) -> str:
    """`payload` with a triple-quoted string on its line as one shell-quoted word; BadInput
    for a triple quote flux batch refuses (one not at the end of its line, unpaired)."""
    for triple in ('"""', "'''"):
        count = payload.count(triple)
        if count and count % 2 == 0:
            return _PAIRED.sub(lambda m: shlex.quote(m.group(2)), payload)
    if _OPENING.search(payload):
        raise BadInput(f"line {lineno}: `{raw.strip()}` opens a triple-quoted string with "
                       "text after it: flux batch refuses it (a string over several lines "
                       "opens with the triple quote at the end of its line); close it on "
                       "the same line, or end the line with the triple quote")
    return payload


def join_triple_quotes(directives: list[Directive]) -> tuple[list[Directive], set[int]]:
    """The directives as flux batch reads them, and the line numbers of those that open a
    string over several lines. Each such string is one directive: its opening line's raw
    line and text, the string as one shell-quoted word of its lines joined by `\\n`
    (`escaped`: a kept value is one line). BadInput names the line of a string left open
    or broken by a line that is no directive."""
    out: list[Directive] = []
    opened: list[Directive] = []  # the open string's directives, its opening line first
    triple = indent = ""
    for lineno, raw, payload in directives:
        if opened and lineno != opened[-1][0] + 1:
            _unterminated(opened[0], f"line {opened[-1][0] + 1} is no directive")
        text = _inline(lineno, raw, payload)
        ending = text[-3:] if text.endswith(('"""', "'''")) else ""
        if not opened:
            if not ending:
                out.append((lineno, raw, text))
                continue
            triple, indent = ending, text[:len(text) - len(text.lstrip())]
            opened.append((lineno, raw, text[:-3]))
            continue
        closes = ending == triple
        opened.append((lineno, raw, text[:-3] if closes else text))
        if closes:
            out.append(_finished(opened, indent))
            opened = []
    if opened:
        _unterminated(opened[0], "the directives end before its closing line")
    return out, {d[0] for d in out if is_opening(d[1])}


def _finished(lines: list[Directive], indent: str) -> Directive:
    parts = [t[len(indent):] if t.startswith(indent) else t for _, _, t in lines]
    first_line, raw_first, _ = lines[0]
    # no line holds the string's own triple quote: alone it would end the string, paired it
    # is quoted, and anywhere else `_inline` refuses it
    return first_line, raw_first, lines[0][2] + shlex.quote(escaped("\n".join(parts[1:])))


def _unterminated(opening: Directive, why: str) -> None:
    lineno, raw, _ = opening
    raise BadInput(f"line {lineno}: `{raw.strip()}` opens a triple-quoted string that is "
                   f"never closed ({why}): flux batch refuses it; end it with a directive "
                   "line that ends in the same triple quote")


def escaped(content: str) -> str:
    """A string of several lines as one: each backslash doubled, each line break `\\n`."""
    return content.replace("\\", "\\\\").replace("\n", "\\n")


def unescaped(text: str) -> str:
    """The lines `escaped` wrote as one."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def is_opening(raw: str) -> bool:
    """Whether a directive line opens a string over several lines: it ends in a triple
    quote, its only one (a pair on one line is a string of that line)."""
    triple = raw[-3:]
    return triple in ('"""', "'''") and raw.count(triple) == 1


def string_lines(sentinel: str, raw: str, option: str, prefix: str, value: str) -> list[str]:
    """A kept option whose value is a string over several lines (`value`: `prefix`, the
    part on the opening line, then the `escaped` string) as the directive lines flux batch
    reads back as it: the opening line, the string's lines, the closing triple quote, each
    under `sentinel` and the opening line's indent (the last line of the string
    ends in the triple quote)."""
    payload = raw.split(":", 1)[1] if ":" in raw else raw
    indent = payload[:len(payload) - len(payload.lstrip())]
    triple = raw[-3:]
    head = f"{option}={prefix}" if prefix else f"{option} "
    *body, last = unescaped(value[len(prefix):]).split("\n")  # the last ends the string
    return [f"{sentinel}{indent}{head}{triple}",
            *(f"{sentinel}{indent}{line}" for line in body), f"{sentinel}{indent}{last}{triple}"]


_QUOTE_RUN = re.compile(r"""["']{3}""")


def flux_word(value: str, quote: Callable[[str], str]) -> str:
    """`value` written by `quote` for a flux directive, but where that would hold three
    quote characters in a row (flux batch reads them as a triple quote: a paired one
    changes the value, a lone one is refused), each quote character of the value escaped
    outside the quotes (`a'''b` as `a\\'\\'\\'b`)."""
    written = quote(value)
    if not _QUOTE_RUN.search(written):
        return written
    return "".join(f"\\{part}" if part in ("'", '"') else quote(part) if part else ""
                   for part in re.split(r"""(["'])""", value))
