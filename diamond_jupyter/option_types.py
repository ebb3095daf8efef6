"""Value types of the options the command line and the magics share (argparse `type=`s):
one definition, so `%diamond submit --hedge 0` is refused as `diamond submit --hedge 0` is."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

MAX_HEDGE_COPIES = 8  # the facade's own bound (federation_hedge.MAX_HEDGE)


# The option that gives each JobSpec field (a Resources field for the counts) on the command
# line and in the magics: an error names what the user wrote, not the spec's word
SPEC_OPTIONS = {"queue": "--partition", "name": "--name", "nodes": "--nodes",
                "walltime_s": "--time", "gpus_per_node": "--gpus", "arch": "--arch",
                "software": "--software", "container": "--container", "gpu_type": "--gpu-type",
                "memory": "--memory"}


MAX_LISTED = 2**63 - 1  # a listing's `--limit` at most: what SQLite's integers hold


def list_limit_refusal(given: str, most: int) -> str | None:
    """None when `given` is a list's limit, a whole number from 1 to `most` in digits 0-9;
    else the words every face says of it (`diamond jobs --limit 0`, `GET jobs?limit=0`,
    `%diamond jobs --limit x`), after the face's own name of the option."""
    text = given.strip()
    if re.fullmatch(r"[+-]?[0-9]{1,40}", text) and 1 <= int(text) <= most:
        return None
    shown = f"{text[:20]!r}... ({len(text)} characters)" if len(text) > 40 else repr(given)
    return f"expected how many to list, a whole number from 1 to {most}, not {shown}"


def list_limit(most: int = MAX_LISTED) -> Callable[[str], int]:
    """An argparse type: a list's `--limit`, refused in `list_limit_refusal`'s words."""
    def parse(text: str) -> int:
        if (problem := list_limit_refusal(text, most)) is not None:
            raise argparse.ArgumentTypeError(problem)
        return int(text)
    return parse


def job_state(text: str) -> str:
    """An argparse type: job states in any case, one or several joined by commas
    (`%diamond jobs --state running,pending`), as `GET jobs?state=` reads them; given back
    upper case, comma-joined. Refused naming the states (it was Python's "'running' is not
    a valid JobState", and a list was "unknown state 'running,pending'")."""
    from .model import JobState

    known = [s.value for s in JobState]
    words = [w.strip().upper() for w in text.split(",")]
    if (bad := next((w for w in words if w not in known), None)) is not None:
        which = f"unknown state {text!r}" if len(words) == 1 else \
            f"unknown state {bad.lower() or '(empty)'!r} in {text!r}"
        raise argparse.ArgumentTypeError(f"{which}; expected {', '.join(known)} (several "
                                         "joined by commas, e.g. running,pending)")
    return ",".join(dict.fromkeys(words))


def count(least: int, most: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number `least` or more, and `most` at most when given
    (`--lines -5` printed nothing and `--limit -1` blamed an `order` the user never gave;
    `--limit 10**23` was refused as "from 0", the 0 it refuses itself)."""
    def parse(text: str) -> int:
        # ASCII digits only, as the REST API reads them: int() also takes `1_0` (10),
        # Arabic-Indic or full-width digits, which no scheduler reads
        digits = re.fullmatch(r"\s*[+-]?[0-9]+\s*", text)
        if digits and len(text.strip()) > 40:  # past any bound (and int()'s 4300 digits)
            bound = f" from {least} to {most}" if most is not None else \
                f", {least} or more, of at most 40 digits"
            raise argparse.ArgumentTypeError(f"expected a whole number{bound}, not "
                                             f"{text.strip()[:20]!r}... ({len(text.strip())} "
                                             "characters)")
        value = int(text) if digits else None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(f"expected a whole number, {least} or more, not "
                                             f"{text!r}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"expected a whole number from {least} to {most}, "
                                             f"not {text[:40]!r}")
        return value
    return parse


def too_many_arguments(prog: str, positionals: list[argparse.Action], extra: list[str]) -> str:
    """`status a:1 a:2 ... a:1000`: the arguments past what `prog` takes (the first and last
    few, not a line of 1,000 ids), and what it takes; the command line's and the magics'
    words."""
    takes = " ".join((a.metavar or a.dest).upper() if a.nargs is None else
                     f"[{(a.metavar or a.dest).upper()}]" for a in positionals)
    shown = extra if len(extra) <= 6 else [*extra[:3], "...", *extra[-2:]]
    return (f"unrecognized arguments: {' '.join(shown)} ({len(extra)} more than "
            f"{prog} takes: {takes or 'no argument'})")


class StoreOnce(argparse._StoreAction):
    """An option that takes one value: given twice with different values it is bad input
    (`--site beta --site alpha` submitted to alpha without a word, on the command line and
    in the magics alike)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        given: dict[str, Any] = namespace.__dict__.setdefault("_given_once", {})
        if self.dest in given and given[self.dest][0] != values:
            first, said = given[self.dest]
            # `--memory 4G --mem 8G`: both spellings named, as typed
            which = f"{option_string} is" if said == option_string else \
                f"{said} and {option_string} are one option,"
            parser.error(f"{which} given twice ({first!r} and {values!r}); give it once")
        given[self.dest] = (values, option_string)
        super().__call__(parser, namespace, values, option_string)


def filled(what: str) -> Callable[[str], str]:
    """An argparse type: a value that is not empty nor blanks (`--partition "$PART"` with
    PART unset was an empty value, and the job went, unsaid, to the default partition)."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(
                f"expected {what}, not {text!r} (an empty or blank value: a shell variable "
                "that is not set?); give the value, or leave the option out for the default")
        return text
    return parse


def hedge_count(text: str) -> int:
    """An argparse type: `--hedge N`, the number of copies, 1 (no hedge) to 8."""
    if not re.fullmatch(r"[0-9]+", text) or not 1 <= int(text) <= MAX_HEDGE_COPIES:
        raise argparse.ArgumentTypeError(f"--hedge takes a number of copies from 1 to "
                                         f"{MAX_HEDGE_COPIES}, not {text!r}")
    return int(text)


# dashes a web page or a word processor puts where `--` was typed: en and em dash, minus...
LOOKALIKE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"


def pasted_dash(words: list[str], options: Mapping[str, argparse.Action], *,
                every: bool = True) -> str | None:
    """Why the first word written with a typographic dash where an option was meant (`—site`,
    `–-time`) is refused, naming the option of `options` meant; None when there is none. A
    file of that name is left alone (a file may be called `—notes.sh`); so, unless `every`
    (a parser with subcommands, whose words past the command are the subcommand's), is a
    word meaning none of `options`. The value of an option (`--name —x`) is a value."""
    import os
    import unicodedata

    for before, word in zip(["", *words], words, strict=False):
        if word == "--":  # what follows is no option
            break
        if before in options and options[before].nargs != 0:
            continue
        head = word.lstrip("-" + LOOKALIKE_DASHES)
        dash = next((c for c in word[:len(word) - len(head)] if c in LOOKALIKE_DASHES), None)
        if dash is None or not head[:1].isalpha():
            continue
        name = head.split("=", 1)[0]
        meant = next((o for o in (f"--{name}", f"-{name}") if o in options), None)
        if meant is None and (not every or os.path.lexists(word)):
            continue
        said = f"{word.split('=', 1)[0]!r} starts with {unicodedata.name(dash).lower()} " \
               f"(U+{ord(dash):04X}), not '-'"
        why = "(a dash pasted from a web page or a word processor is not the hyphen options " \
              "start with)"
        if meant is not None:
            return f"{said}: did you mean {meant}? {why}"
        known = sorted(o for o in options if o.startswith("--") and o != "--help")
        return f"{said}, and names no option {why}; accepted: {', '.join(known)}"
    return None


def near_choice(message: str, actions: list[argparse.Action], given: list[str]) -> str:
    """argparse's "argument COMMAND: invalid choice: 'sitez' (choose from ...)" with the choice
    it likely means (`diamond sitez`, `%diamond sitez`): `given`, the words parsed."""
    from .wording import meant

    named, _, rest = message.partition(": invalid choice: ")
    for action in actions:
        if action.choices and named == f"argument {argparse._get_action_name(action)}":
            word = next((a for a in given if repr(a) in rest and a not in action.choices), None)
            hint = meant(word, [str(c) for c in action.choices]) if word else ""
            if hint:
                return message.replace(" (choose from ", f" ({hint}choose from ", 1)
    return message


def unknown_option(given: str, options: Collection[str]) -> str:
    """`--mem`: unknown option, with the one of `options` it likely means and the accepted
    ones (the command line's and the magics' words)."""
    import difflib

    known = sorted({o for o in options if o.startswith("--") and o != "--help"})
    near = [o for o in known if o.startswith(given)] if given.startswith("--") else []
    near = near or difflib.get_close_matches(given, known, n=1, cutoff=0.6)
    hint = f"did you mean {' or '.join(near[:2])}? " if near else ""
    return f"unknown option {given} ({hint}accepted: {', '.join(known) or 'none'})"
