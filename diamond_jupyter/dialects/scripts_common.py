"""Shared machinery for batch-script dialects: header split, tokenizing, units, rendering."""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..digits import ascii_digits, foreign_digit
from ..model import (
    _SHELL,
    CPU_TIME,
    DEPENDENCY_ANY,
    GPUS_PER_JOB,
    PBS_GPU_MODEL_KEYS,
    PER_GPU,
    TASK_RANGE,
    ArraySpec,
    BadInput,
    Dependency,
    Directive,
    JobSpec,
    Resources,
    check_array,
    check_dependency_kinds,
    check_spec,
    leading_dash_advice,
)
from ..wording import quantity
from .flux_ids import flux_f58, flux_id_form, flux_id_value, flux_words

# the spec's metadata key of each stage entry carried from a script line: {line, entry,
# directive, direction, source, destination}; a refusal of its path names the line
STAGING_LINES = "staging_lines"

# Values that are clearly template placeholders rather than real settings; %NAME% has two
# characters at least and does not end in `_` (Slurm's %A_%a and %x_%j are file patterns).
_PLACEHOLDER = re.compile(
    r"\{\{|\{%|\{[A-Za-z_][\w.]*\}|\$\{?[A-Za-z_]\w*|<[^<>]*>|%[A-Za-z_]\w*[A-Za-z0-9]%"
    r"|![A-Za-z_]\w*|\bTBG_\w+|@[A-Za-z_]\w*@"
)
_LOOSE = re.compile(r"\b[A-Z][A-Z0-9_]{3,}\b")  # e.g. ENSEMBLEMEMBERNO where a number belongs


# White space in a job name other than the plain blank (a tab, a no-break space): the
# queue listings (squeue, bjobs, flux jobs) show names in columns, which a tab shifts
_ODD_BLANKS = re.compile(r"[^\S ]")
ODD_BLANK_REASON = "a tab or other white space in a name shifts the columns of queue listings"


def listed_name(name: str) -> str:
    """`name` with each white space character but the plain blank made '_'."""
    return _ODD_BLANKS.sub("_", name)


def words(text: str) -> list[str]:
    return text.split()


# an ISO 8601 duration (PT2H, P1DT12H, PT90M): no scheduler's time; not a placeholder
_ISO_DURATION = re.compile(r"P(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)S)?)?",
                           re.IGNORECASE)


_ISO_WORD = re.compile(r"\bP(?=[0-9]|T[0-9])(?:[0-9]+D)?"
                       r"(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+S)?)?\b")


def iso_duration_s(value: str | None) -> int | None:
    """Seconds of an ISO 8601 duration of days, hours, minutes and seconds (`PT2H30M`);
    None where `value` is not one."""
    m = _ISO_DURATION.fullmatch((value or "").strip())
    if m is None or not any(m.groups()) or value.strip().upper().endswith("T"):
        return None
    d, h, mi, sec = (int(g or 0) for g in m.groups())
    return d * 86400 + h * 3600 + mi * 60 + sec


def is_placeholder(value: str | None, loose: bool = False) -> bool:
    """Template placeholder ({{x}}, ${X}, <x>, %X%, TBG_x ...); `loose` also takes ALLCAPS
    words, for values that should have been numbers (not an ISO 8601 duration: `PT2H` is a
    time written in a form the schedulers do not read)."""
    v = value or ""
    return bool(_PLACEHOLDER.search(v) or (loose and _LOOSE.search(_ISO_WORD.sub("", v))))


@dataclass
class Item:
    """One option found on a directive line."""

    option: str  # canonical key in the dialect's table, or the spelled option if unknown
    value: str | None
    lineno: int
    raw: str  # the whole directive line (no line terminator)
    known: bool = True


@dataclass
class Header:
    shebang: str | None
    directives: list[tuple[int, str, str]]  # (lineno, raw line, text after sentinel)
    body: str
    late: list[tuple[int, str]] = field(default_factory=list)  # directives after 1st command


def split_header(
    text: str, match: Callable[[str], str | None], *, flux_rules: bool = False
) -> Header:
    """Split a script into shebang, leading-block directives and the untouched body.

    `match(line)` returns the text after the sentinel, or None when the line is not a
    directive. Only the leading block (blank and comment lines) holds directives.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    shebang = None
    start = 0
    if lines and lines[0].startswith("#!"):
        shebang = lines[0].rstrip("\r\n")[2:].strip()
        start = 1
    directives: list[tuple[int, str, str]] = []
    body: list[str] = []
    late: list[tuple[int, str]] = []
    in_block = True
    for idx in range(start, len(lines)):
        line = lines[idx]
        bare = line.rstrip("\r\n")
        stripped = bare.strip()
        payload = match(bare)
        if in_block and stripped and not stripped.startswith("#"):
            in_block = bool(flux_rules and not directives)
        if payload is not None:
            if in_block:
                directives.append((idx + 1, bare, payload))
                continue
            late.append((idx + 1, bare))
        body.append(line)
    return Header(shebang, directives, "".join(body), late)


def tokenize(text: str) -> list[str]:
    """Shell-like split: quotes group and are removed; an unquoted `#` token starts a comment;
    inside double quotes a backslash escapes `"` and `\\` (what `quote` writes).

    Never raises: an unbalanced quote runs to the end of the line.
    """
    tokens: list[str] = []
    cur: list[str] = []
    has = False
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and text[i + 1:i + 2] in ('"', "\\"):
                i += 1
                cur.append(text[i])
            else:
                cur.append(ch)
        elif ch in "\"'":
            quote, has = ch, True
        elif ch.isspace():
            if has:
                tokens.append("".join(cur))
                cur, has = [], False
        elif ch == "#" and not has:
            break
        elif ch == "<" and (end := text.find(">", i)) > 0:
            cur.append(text[i:end + 1])  # a <placeholder with spaces> stays one token
            has, i = True, end
        elif ch == "\\" and i + 1 < len(text):
            i += 1
            cur.append(text[i])
            has = True
        else:
            cur.append(ch)
            has = True
        i += 1
    if has:
        tokens.append("".join(cur))
    return tokens


@dataclass(frozen=True)
class Opt:
    key: str
    arg: str = "required"  # "required" | "none" | "optional"


# a word argparse reads as a negative number, not as an option (its own pattern)
_NEGATIVE_NUMBER = re.compile(r"^-[0-9]+$|^-[0-9]*\.[0-9]+$")


class OptionTable:
    """getopt-like option lookup: long names (unique prefixes allowed) and short letters."""

    def __init__(self, longs: dict[str, Opt], shorts: dict[str, Opt], *, prefix: bool = True,
                 getopt_short: bool = False, argparse: bool = False):
        self.longs, self.shorts, self.prefix = longs, shorts, prefix
        # getopt (sbatch, qsub) gives a short option everything after its letter: `-n=4`
        # is the value "=4"; argparse (flux) splits `-n=4` at the "="
        self.getopt_short = getopt_short
        # argparse (flux) takes a separate word starting with '-' (not a negative number)
        # for an option, never for the value before it; getopt takes any next word
        self.argparse = argparse

    def _separate_value(self, option: str, tokens: list[str], i: int, lineno: int,
                        raw: str) -> None:
        """Refuse what argparse refuses: `--job-name -x` (`expected one argument`)."""
        word = tokens[i]
        if self.argparse and word.startswith("-") and not _NEGATIVE_NUMBER.match(word):
            raise BadInput(
                f"line {lineno}: {option} is followed by {word!r}, which flux's option reader "
                f"(argparse) takes for an option, not for {option}'s value (flux says "
                f"`argument {option}: expected one argument`): {raw.strip()}; join them with "
                f"'=' ({option}={word}) if {word!r} is the value meant")

    def find_long(self, name: str) -> Opt | None:
        if name in self.longs:
            return self.longs[name]
        if not self.prefix:
            return None
        hits = {self.longs[n] for n in self.longs if n.startswith(name)}
        return hits.pop() if len(hits) == 1 else None

    def abbreviates(self, name: str) -> list[str]:
        """The options `name` is a prefix of, one name each (aliases counted once)."""
        if not self.prefix or not name:
            return []
        seen: dict[Opt, str] = {}
        for n in sorted(self.longs):
            if n.startswith(name):
                seen.setdefault(self.longs[n], "--" + n)
        return sorted(seen.values())

    def parse(self, tokens: list[str], lineno: int, raw: str, dash: str = "--") -> list[Item]:
        items: list[Item] = []
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            i += 1
            if dash == "--" and tok.startswith("--") and len(tok) > 2:
                name, eq, val = tok[2:].partition("=")
                opt = self.find_long(name)
                if opt is None and len(many := self.abbreviates(name)) > 1:
                    # getopt_long (sbatch) and argparse (flux) refuse an ambiguous prefix
                    raise BadInput(f"line {lineno}: option --{name} is ambiguous (it begins "
                                   f"{', '.join(many)}); write the option in full: "
                                   f"{raw.strip()}")
                if opt is None:
                    value = val if eq else None
                    if not eq and i < len(tokens) and not tokens[i].startswith("-"):
                        value, i = tokens[i], i + 1
                    items.append(Item("--" + name, value, lineno, raw, known=False))
                    continue
                if opt.arg in ("none", "optional") or eq:
                    items.append(Item(opt.key, val if eq else None, lineno, raw))
                elif i < len(tokens):
                    self._separate_value("--" + name, tokens, i, lineno, raw)
                    items.append(Item(opt.key, tokens[i], lineno, raw))
                    i += 1
                else:
                    raise BadInput(f"line {lineno}: option --{name} needs a value: {raw.strip()}")
                continue
            if tok.startswith("-") and len(tok) > 1:
                word = tok[1:]
                opt = self.longs.get(word) if dash == "-" else None
                rest = ""
                if opt is None and dash == "-" and "=" in word:
                    name, _, rest = word.partition("=")
                    opt = self.longs.get(name)
                if opt is None:
                    opt, rest = self.shorts.get(word[0]), word[1:]
                if opt is None:
                    value = None
                    if i < len(tokens) and not tokens[i].startswith("-"):
                        value, i = tokens[i], i + 1
                    items.append(Item(tok, value, lineno, raw, known=False))
                    continue
                if opt.arg == "none":
                    items.append(Item(opt.key, None, lineno, raw))
                    for extra in rest:  # bundled flags such as -Vh
                        o = self.shorts.get(extra)
                        ok = o is not None and o.arg == "none"
                        items.append(Item(o.key if ok else "-" + extra, None, lineno, raw, ok))
                elif rest:
                    value = rest if self.getopt_short and word[0] == tok[1] and \
                        self.shorts.get(word[0]) is opt else rest.removeprefix("=")
                    items.append(Item(opt.key, value, lineno, raw))
                elif i < len(tokens) and (opt.arg == "required" or not tokens[i].startswith("-")):
                    self._separate_value(tok, tokens, i, lineno, raw)
                    items.append(Item(opt.key, tokens[i], lineno, raw))
                    i += 1
                elif opt.arg == "optional":
                    items.append(Item(opt.key, None, lineno, raw))
                else:
                    raise BadInput(f"line {lineno}: option {tok} needs a value: {raw.strip()}")
                continue
            items.append(Item(tok, None, lineno, raw, known=False))
        return items


# ---------------------------------------------------------------- values and units

def bad(item: Item, what: str, accepted: str) -> BadInput:
    given = (item.value or "").rpartition("=")[2]
    seconds = iso_duration_s(given)
    iso = f" ({given!r} is an ISO 8601 duration, {seconds // 3600} h {seconds // 60 % 60} " \
        f"min {seconds % 60} s, which no scheduler reads)" if seconds is not None else ""
    digit = foreign_digit(given)
    foreign = f" ({digit!r}, U+{ord(digit):04X}, is no digit 0-9: schedulers read those " \
        "only)" if digit else ""
    return BadInput(
        f"line {item.lineno}: {what} {item.value!r} in `{item.raw.strip()}`; expected "
        f"{accepted}{iso}{foreign}"
    )


def read_array(item: Item, expression: str, accepted: str) -> ArraySpec:
    """The job array `item` asks for, `expression` in the neutral (Slurm) syntax. One that
    no scheduler runs (a step or a limit of 0, a range that runs backwards: 1-10:0, 5-1,
    %0) is bad input naming the line and the form its scheduler takes (it was read, and
    every translation failed without naming the line, its own dialect's too)."""
    try:
        check_array(expression)
    except BadInput:
        raise bad(item, "bad job array", accepted) from None
    return ArraySpec(expression=expression)


# metadata: the script asked for no mail at all (PBS/Grid Engine `-m n`), which PBS must be
# told (qsub mails on abort unless -m n)
NO_MAIL = "no_mail"
SGE_MAIL_SUSPEND = "sge_mail_suspend"  # metadata: Grid Engine's `-m s` (no neutral form)


def has_index_zero(expression: str) -> bool:
    """Whether the job array `expression` (neutral: `0-99:4%10`, `0,3,5`) holds index 0,
    which Slurm and PBS run but Grid Engine (qsub -t: 1 <= n) and LSF (positive indexes)
    refuse."""
    return any(int(part.partition("-")[0]) == 0
               for part in expression.partition("%")[0].split(","))


def array_from_one_refused(expression: str, dialect: str, scheduler: str, rule: str,
                           variable: str) -> BadInput:
    """The refusal to render an array holding index 0 for `dialect`, whose `scheduler`
    refuses it by `rule`; `variable` is its index's shell variable."""
    return BadInput(f"{dialect} cannot express the array {expression}: {scheduler} starts "
                    f"array indexes at 1 ({rule}); number the array from 1 and have the "
                    f"script use ${{{variable}}} less one, or keep it for Slurm or PBS")


def guarded(item: Item, fn: Callable[..., bool], *args: object) -> bool:
    """Map one directive with `fn`; a value Python cannot hold (a 5000-digit count, an
    overflowing size) is bad input naming the directive, never a crash."""
    try:
        return fn(*args)
    except (ValueError, ArithmeticError):
        raise bad(item, "unreadable value", "a value of a sensible size") from None


# the JobSpec fields a directive may not set to a word starting with '-' (model.py's
# rule), in a message's words
_FIELD_WORDS = {"working_directory": "working directory", "stdout": "output file",
                "stderr": "error file", "queue": "queue", "account": "account", "qos": "QOS",
                "reservation": "reservation", "mail_user": "mail user"}
_DASHLESS_FIELDS = tuple(_FIELD_WORDS)
# the command that reads each dialect's directives, as a message names it
SUBMIT_TOOL = {"slurm": "sbatch", "pbs": "qsub", "lsf": "bsub", "flux": "flux batch",
               "sge": "qsub"}


def mapped_or_placeholder(item: Item, dialect: str, spec: JobSpec,
                          fn: Callable[..., bool], *args: object) -> bool:
    """Map a known directive with `guarded(item, fn, *args)` (False for an unknown one). A
    value `fn` refuses that is a template placeholder is noted, and False (kept as
    unknown); any other refusal is raised."""
    before = {f: getattr(spec, f) for f in _DASHLESS_FIELDS}
    try:
        mapped = item.known and guarded(item, fn, *args)
    except BadInput:
        if not is_placeholder(item.value, loose=True):
            raise
        note(spec, placeholder_note(item, dialect))
        return False
    for field_name, was in before.items():
        now = getattr(spec, field_name)
        if now != was and (give := leading_dash_advice(field_name, now)) is not None:
            raise dash_value_refused(item, dialect, _FIELD_WORDS[field_name], now, give)
    return mapped


# What each dialect's submit command does with a value starting with '-' ({field}: the
# value's name, {option}: the directive's option)
_DASH_VALUE_READ = {
    "slurm": "sbatch takes it as the {field}",
    "pbs": "qsub takes it as the {field}",
    "sge": "Grid Engine's qsub takes the word after {option} as the {field} whatever it is",
    "flux": "flux batch takes it as the {field} (joined to its option with '=')",
    "lsf": "bsub can read it as an option of its own",
}


def dash_value_refused(item: Item, dialect: str, field_words: str, value: str,
                       give: str) -> BadInput:
    """The refusal of a directive that sets `field_words` to `value`, which starts with
    '-': what the dialect's own submit command does with it, why a job here holds no such
    value (bsub reads it as an option), and `give`, what to write instead."""
    read = _DASH_VALUE_READ.get(dialect, f"{SUBMIT_TOOL.get(dialect, dialect)} takes it as "
                                          "the {field}")
    why = "" if dialect == "lsf" else (
        "; but a job here holds only what every scheduler could be given, and bsub reads a "
        "word starting with '-' as an option of its own")
    return BadInput(
        f"line {item.lineno}: `{item.raw.strip()}` sets the {field_words} to {value!r}, which "
        f"starts with '-' ({read.format(field=field_words, option=item.option)}{why}); {give}")


def to_int(item: Item, accepted: str = "a positive integer") -> int:
    """A directive's count: 0 is refused as any other non-count (sbatch refuses
    --ntasks=0 and --cpus-per-task=0; read as nothing it vanished unsaid)."""
    v = (item.value or "").strip()
    if not ascii_digits(v) or not int(v):
        raise bad(item, "bad number", accepted)
    return int(v)


_MEM = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*([kmgtpe]?)(i?b?|w)?$", re.I)


def parse_mem_mb(text: str, default_unit: str = "m", whole: bool = False,
                 iec: bool = True) -> int | None:
    """'4G', '4gb', '4000', '2000mb', '512k' -> megabytes (rounded up); None if unreadable,
    or if `whole` (a scheduler that takes integers only) and the number has a fraction, or
    if not `iec` (PBS's and LSF's units: k, m, g, t... then b or w) and it is written
    `4GiB`, `4Gi` (which qsub and bsub refuse)."""
    m = _MEM.match(text.strip())
    if not m or (whole and "." in m.group(1)) or (not iec and "i" in (m.group(3) or "").lower()):
        return None
    num, unit, tail = float(m.group(1)), m.group(2).lower(), (m.group(3) or "").lower()
    if not math.isfinite(num):  # more digits than a float holds: no size at all
        return None
    if not unit:
        unit = "b" if tail.endswith("b") else default_unit
    if tail == "w":
        num *= 8
    power = {"b": -2, "k": -1, "m": 0, "g": 1, "t": 2, "p": 3, "e": 4}[unit]
    return max(1, math.ceil(num * 1024**power)) if num else 0


def no_memory_asked(spec: JobSpec, lineno: int, written: str) -> None:
    """A memory of 0 outside Slurm (PBS's `mem=0`, LSF's `rusage[mem=0]`, Grid Engine's
    `h_vmem=0`) reserves nothing: read as no memory request, said so, since the spec's 0 is
    Slurm's `--mem=0`, all memory of each node."""
    note(spec, f"line {lineno}: {written} reserves no memory: read as no memory request "
               "(not Slurm's --mem=0, all memory of each node)")


def fmt_mem(mb: int, style: str = "slurm") -> str:
    """Megabytes -> '4G' (slurm), '4gb' (pbs), '4GB' (lsf); exact units only."""
    unit = "G" if mb % 1024 == 0 and mb else "M"
    num = mb // 1024 if unit == "G" else mb
    return {"slurm": f"{num}{unit}", "pbs": f"{num}{unit.lower()}b", "lsf": f"{num}{unit}B"}[style]


def parse_hms(text: str) -> int | None:
    """[[[D:]H:]M:]S[.FFF] or plain seconds (PBS/Torque walltime) -> seconds, as qsub's
    decode_time reads it: whole numbers but for a fraction of the seconds, whose first
    three digits (milliseconds) round to the nearest second (`1:00:00.5` is 3601, `.4`
    3600). A fraction of hours or minutes (`1.5:00:00`) is no PBS time: None."""
    whole, dot, fraction = text.strip().partition(".")
    parts = whole.split(":")
    if len(parts) > 4 or not all(ascii_digits(p) for p in parts) \
            or (fraction and not ascii_digits(fraction)):
        return None
    total = sum(int(n) * mult for n, mult in zip(reversed(parts), (1, 60, 3600, 86400),
                                                   strict=False))
    return total + (int(fraction[:3].ljust(3, "0")) >= 500)


def pbs_shrink_to_fit(spec: JobSpec) -> tuple[int, int | None, list[Directive]] | None:
    """A PBS Pro shrink-to-fit job (`-l min_walltime=`, maybe `-l max_walltime=`, no
    walltime; the last of each holds), kept as written: (min seconds, max seconds or None:
    up to the queue's limit, the directives). None for any other job, or a max below the
    min (qsub refuses it)."""
    if spec.source_dialect != "pbs" or spec.resources.walltime_s is not None:
        return None
    got: dict[str, tuple[Directive, int]] = {}
    for d in spec.unknown:
        key, _, val = (d.value or "").partition("=")
        if d.dialect == "pbs" and d.option == "-l" and key in ("min_walltime",
                                                                "max_walltime") \
                and (secs := parse_hms(val)) is not None and secs > 0:
            got[key] = (d, secs)
    if "min_walltime" not in got:
        return None  # a max alone asks nothing PBS acts on
    least = got["min_walltime"][1]
    most = got["max_walltime"][1] if "max_walltime" in got else None
    if most is not None and most < least:
        return None
    return least, most, [d for d, _ in got.values()]


def sge_time(text: str) -> int | None:
    """A Grid Engine time (sge_types(1)) as qsub reads it: seconds, or exactly H:M:S where
    a zero field may be left out with its colon kept (`1::1` is an hour and a second, `::90`
    90 seconds); a field may hold a fraction (`1.5:00:00`), each field's seconds cut to a
    whole one, as Grid Engine does. A plain number that starts with 0 is octal to Grid
    Engine (`0600` is 384 seconds), one of 0x hexadecimal. Two fields (`90:00`) are no
    Grid Engine time: None."""
    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3 or not any(parts) or not all(
                not p or _DECIMAL.fullmatch(p) for p in parts):
            return None
        return sum(int(float(p or "0") * mult) for p, mult in zip(parts, (3600, 60, 1),
                                                                    strict=True))
    if len(text) > 1 and text[0] == "0" and "." not in text:  # octal or hexadecimal
        hexa = text[1:2] in ("x", "X")
        digits = text[2:] if hexa else text[1:]
        allowed = "0123456789abcdefABCDEF" if hexa else "01234567"
        if not digits or any(c not in allowed for c in digits):
            return None
        return int(digits, 16 if hexa else 8)
    return int(float(text)) if _DECIMAL.fullmatch(text) else None


_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


def fmt_hms(seconds: int) -> str:
    h, rem = divmod(seconds, 3600)
    return f"{h:02d}:{rem // 60:02d}:{rem % 60:02d}"


def placeholder_note(item: Item, dialect: str, kept_as: str = "") -> str:
    how = kept_as or f"kept verbatim as an unknown {dialect} directive"
    return f"line {item.lineno}: template placeholder in `{item.raw.strip()}` {how}"


def note(spec: JobSpec, text: str) -> None:
    spec.metadata.setdefault("parse_notes", []).append(text)


def no_gpus_for_zero(spec: JobSpec, spelled: str) -> None:
    """A request for 0 GPUs (`ngpus=0`, `--gres=gpu:0`, `-l gpu=0`, `-g 0`) asks for none,
    as no GPU request does: read so, and said, rather than as a count of 0 that other
    schedulers would be given (Grid Engine `-l gpu=0`, refused where no gpu complex is) or
    told was dropped. Its components' zeros likewise; a per-GPU request (--cpus-per-gpu)
    keeps its count as written."""
    if PER_GPU in spec.metadata:
        return
    shapes = [spec.resources, *spec.components]
    zeros = [r for r in shapes if 0 in (r.gpus_per_node, r.gpus_per_task)]
    if not zeros:
        return
    for r in zeros:
        for key in ("gpus_per_node", "gpus_per_task"):
            if getattr(r, key) == 0:
                setattr(r, key, None)
        if r.gpus_per_node is None and r.gpus_per_task is None:
            r.gpu_type = None
    if spec.metadata.get(GPUS_PER_JOB) == 0:
        del spec.metadata[GPUS_PER_JOB]
    note(spec, f"a request for 0 GPUs ({spelled}) asks for none: read as no GPU request "
               "(no scheduler is asked for a GPU count)")


def without_zero_gpus(spec: JobSpec) -> JobSpec:
    """A copy of `spec` with each GPU count of 0 (a face's `--gpus 0`, a JSON spec's
    `gpus_per_node: 0`) made no count: 0 GPUs asks for none, as no request does, and a
    scheduler is not handed a count of 0 (sbatch's `--gpus-per-node=0`). Its GPU type stays,
    for the renderer to say it dropped."""
    def zeros_unset(r: Resources) -> Resources:
        unset = {k: None for k in ("gpus_per_node", "gpus_per_task") if getattr(r, k) == 0}
        return r.model_copy(update=unset) if unset else r

    if not any(0 in (r.gpus_per_node, r.gpus_per_task)
               for r in (spec.resources, *spec.components)):
        return spec
    metadata = {k: v for k, v in spec.metadata.items()
                if not (k == GPUS_PER_JOB and v == 0)}
    return spec.model_copy(update={
        "resources": zeros_unset(spec.resources),
        "components": [zeros_unset(r) for r in spec.components], "metadata": metadata})


def unknown(spec: JobSpec, dialect: str, item: Item, option: str | None = None) -> None:
    spec.unknown.append(
        Directive(dialect=dialect, option=option or item.option, value=item.value, raw=item.raw)
    )


# ---------------------------------------------------------------- options that wait

@dataclass(frozen=True)
class SubmitWait:
    """An option that makes the submit command wait: at a terminal for an interactive
    session (`refuse`: the job needs that terminal, which the engine has none of; `instead`
    says what to do), or for the job's end (dropped: the job runs the same, the engine
    follows it itself). `rest`: what of the directive's value stays once its waiting part
    is dropped (`-W block=true,umask=022` keeps `umask=022`), None for nothing. `why`: why
    the engine refuses it (an option that submits no job says so instead)."""

    refuse: bool
    what: str
    instead: str = ""
    rest: str | None = None
    why: str = "the engine submits batch jobs and follows them itself, with no terminal to hold"


SubmitWaitRule = Callable[[Directive], "SubmitWait | None"]


def without_submit_waits(spec: JobSpec, dialect: str, rule: SubmitWaitRule
                         ) -> tuple[JobSpec, list[str]]:
    """`spec` without its `dialect`'s kept options that only make the submit command wait
    for the job (what else their directive says stays), and a warning for each; options the
    job needs a terminal for, or after which no job is submitted, are left and said (the
    submit path refuses them first)."""
    kept: list[Directive] = []
    said: list[str] = []
    for d in spec.unknown:
        w = rule(d) if d.dialect == dialect else None
        if w is None or w.refuse:
            kept.append(d)
            if w is not None:
                said.append(f"kept: {d.raw.strip()} ({w.what}: refused at submit, since "
                            f"{w.why}; {w.instead})")
            continue
        said.append(f"dropped: {d.raw.strip()} ({w.what}; the engine follows the job itself "
                    "and its submit must not wait)")
        if w.rest:
            head = d.raw[:len(d.raw) - len(d.raw.lstrip())]
            sentinel = d.raw.strip().split(None, 1)[0]
            kept.append(d.model_copy(update={"value": w.rest,
                                             "raw": f"{head}{sentinel} {d.option} {w.rest}"}))
    if kept == spec.unknown:  # nothing dropped
        return spec, said
    return spec.model_copy(update={"unknown": kept}), said


def socket_gpus_per_node(spec: JobSpec, dialect: str) -> tuple[JobSpec, list[str]]:
    """A Slurm script's kept `--gpus-per-socket=[type:]N` beside `--sockets-per-node=S`
    (sbatch wants both) as N x S GPUs per node for `dialect`, which ties no GPU to a
    socket: said approximated, where it was dropped and the job reached a scheduler
    without its GPUs. Left as it is where the job asks GPUs otherwise, has several
    components, or the count is not one plain number."""
    r = spec.resources
    if dialect == "slurm" or spec.components or r.gpus_per_node or r.gpus_per_task:
        return spec, []
    kept = {d.option: d for d in spec.unknown if d.dialect == "slurm"}
    if "hetjob" in kept or "packjob" in kept:
        return spec, []
    per_socket, sockets = kept.get("--gpus-per-socket"), kept.get("--sockets-per-node")
    if per_socket is None or sockets is None or not ascii_digits(sockets.value or ""):
        return spec, []
    kind, _, num = (per_socket.value or "").rpartition(":")
    if ":" in kind or "," in kind or not ascii_digits(num) or not int(num) \
            or not int(sockets.value or "0"):
        return spec, []
    gpus = int(num) * int(sockets.value or "0")
    resources = r.model_copy(update={"gpus_per_node": gpus, "gpu_type": kind or r.gpu_type})
    typed = f" of type {kind}" if kind else ""
    said = (f"approximated: {per_socket.raw.strip()} with --sockets-per-node={sockets.value} "
            f"as {quantity(gpus, 'GPU')}{typed} per node ({dialect} ties no GPU to a socket)")
    return spec.model_copy(update={"resources": resources, "unknown": [
        d for d in spec.unknown if d is not per_socket]}), [said]


# ---------------------------------------------------------------- rendering

def own_unknown_lines(
    spec: JobSpec, dialect: str, sentinel: str, tokens_of: Callable[[str], int],
    skip: Callable[[Directive], bool] = lambda d: False,
    written: Callable[[str], str] | None = None,
) -> list[str]:
    """Unknown directives of this dialect as lines: the raw line when every option on it
    was unknown (verbatim round trip), else `SENTINEL option value` rebuilt, the value as
    `written` (else `quote`) quotes it for the dialect's reader."""
    out: list[str] = []
    by_raw: dict[str, list[Directive]] = {}
    for d in spec.unknown:
        if d.dialect == dialect and not skip(d):
            by_raw.setdefault(d.raw, []).append(d)
    for raw, ds in by_raw.items():
        if tokens_of(raw) == len(ds):
            out.append(raw)
            continue
        for d in ds:
            sep = "=" if d.option.startswith("--") else " "
            value = "" if d.value is None else sep + (written or quote)(d.value)
            out.append(f"{sep_sentinel(sentinel)}{d.option}{value}")
    return out


def sep_sentinel(sentinel: str) -> str:
    return sentinel + " "


def pbs_gpu_model_key(d: Directive) -> str | None:
    """The resource name of a kept PBS GPU-model request, in a chunk (`-l select:gpu_type`)
    or job-wide (NCAR's `-l gpu_type=v100`); None for any other directive."""
    if d.dialect != "pbs" or not d.value:
        return None
    if d.option.startswith("-l select:"):
        key = d.option.rpartition(":")[2]
    elif d.option == "-l":
        key = d.value.partition("=")[0]
    else:
        return None
    return key if key.lower() in PBS_GPU_MODEL_KEYS else None


def _carried_gpu_model(spec: JobSpec, d: Directive) -> bool:
    """A kept PBS GPU-model resource the spec's GPU type carries (each renderer writes the
    type or says it is dropped)."""
    return pbs_gpu_model_key(d) is not None and spec.resources.gpu_type is not None \
        and (d.value or "").rpartition("=")[2] == spec.resources.gpu_type


def foreign_warnings(spec: JobSpec, target: str, skip: Iterable[str] = ()) -> list[str]:
    """One line per unknown directive of another dialect: it is not carried over."""
    seen: set[tuple[str, str, str | None]] = set()
    out = []
    skipped = set(skip)
    for d in spec.unknown:
        if d.dialect == target or (d.option, d.value) in skipped or d.option in skipped:
            continue
        if _carried_gpu_model(spec, d):  # said here; the renderer writes the type or says why not
            out.append(f"approximated: {d.raw.strip()} ({pbs_gpu_model_key(d)}="
                       f"{spec.resources.gpu_type}: a site's GPU model resource, read as the "
                       "GPU type)")
            continue
        key = (d.raw, d.option, d.value)
        if key in seen:
            continue
        seen.add(key)
        if d.dialect == "pbs" and d.option == "-S" and d.value == spec.shell:
            # PBS's shell, the script's own #! line too: the translation's #! line
            out.append(f"kept: {d.raw.strip()} as the #! line (the same interpreter)")
            continue
        what = d.option if d.value is None else f"{d.option} {d.value}"
        out.append(f"dropped: {d.raw.strip()} ({what}: no {target} equivalent"
                   f"{_why_no_equivalent(d, target)})")
    return out



def _why_no_equivalent(d: Directive, target: str) -> str:
    """Why a look-alike of another scheduler is no translation, where one is near."""
    if d.dialect == "slurm" and d.option == "--switches" and target == "pbs":
        return ("; PBS place=group= puts every chunk on hosts sharing one value of a "
                "resource each site defines for itself, where Slurm waits a while at most "
                "for that many leaf switches, then starts the job anyway")
    if d.dialect == "sge" and d.option in ("-hard", "-soft"):
        # a switch, no request: what follows it on the line is read (-hard) or said (-soft)
        return ("; a switch for the -l, -q and -masterq after it: " + (
            "the requests after it are read as limits" if d.option == "-hard" else
            "each preference after it is said on its own"))
    if d.dialect == "pbs" and d.option.startswith("-l place:group=") and target == "slurm":
        return ("; the group's resource is the PBS site's own, and Slurm's --switches counts "
                "leaf switches of its topology, waiting for them a while at most")
    return ""


_SAFE = re.compile(r"^[\w@%+=:,./\-\[\]{}*!$&|<>^~]+$")


_COUNTED_GROUPS = re.compile(r"\[([^\[\]]*\*[0-9]+[^\[\]]*)\]")


def counted_groups_as_or(feature: str, target: str, warnings: list[str]) -> str:
    """A Slurm constraint's brackets of counts (`[rack1*2&rack2*4]`: two nodes with rack1
    and four with rack2, sbatch(1) "multiple counts") for a scheduler of one requirement
    for every node: each node has one of them, so their `&` is an OR there (as an AND,
    every node had to have both, and no node may). Said; the counts are dropped later."""
    def group(m: re.Match[str]) -> str:
        return "(" + m.group(1).replace("&", "|") + ")"

    text = _COUNTED_GROUPS.sub(group, feature)
    if text != feature:
        warnings.append(f"approximated: constraint {feature} (so many nodes with each) as "
                        f"every node having one of them ({target} cannot split the nodes "
                        "among requirements)")
    return text


def quote(value: str) -> str:
    """A directive value as the scheduler's own directive reader takes it (not for shell
    lines: use `sh_quote`)."""
    if _SAFE.match(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sh_quote(value: str) -> str:
    """A value quoted for a shell line of the script; a leading "~/" stays expandable."""
    if value.startswith("~/"):
        return "~/" + shlex.quote(value[2:])
    return shlex.quote(value)


# interpreters that run shell lines (a preamble's `cd`, `module load`) as they are
POSIX_SHELLS = {"sh", "bash", "dash", "ash", "ksh", "ksh93", "mksh", "pdksh", "zsh", "yash",
                "posh"}
# where a body in another language is written, then run: a new file each run (mktemp's
# template), so array tasks and jobs started in one directory never share one
BODY_FILE = ".diamond-step-body"
# opened read-write on a descriptor bash picks (10 or above), then removed: the body is
# written through the descriptor and read back by its interpreter from /dev/fd/N (Linux
# opens the file anew there, from its start)
BODY_OPEN = ('exec {diamond_fd}<>"$diamond_body" && rm -f -- "$diamond_body" '
             '|| exit 1')


def runs_shell_lines(interpreter: str) -> bool:
    """Whether `interpreter` (a `#!` line's, or a spec's shell) runs POSIX shell lines:
    /bin/bash and /usr/bin/env zsh do; /usr/bin/env python3 and /bin/tcsh do not."""
    return shell_program(interpreter) in POSIX_SHELLS


def shell_program(interpreter: str) -> str:
    """The program's name a `#!` line runs (`zsh` of /usr/bin/env zsh); sh where none."""
    words = interpreter.split()
    if not words:
        return "sh"
    prog = words[0].rsplit("/", 1)[-1]
    if prog == "env":
        prog = next((w for w in words[1:] if not w.startswith("-") and "=" not in w),
                    "sh").rsplit("/", 1)[-1]
    return prog


def shell_lines_then(lines: str, body: str, interpreter: str) -> str:
    """Bash text that runs `lines` (shell), then `body` with `interpreter` (Python, csh,
    R): the body is written by a quoted here-document (nothing in it expanded) whose end
    marker is no line of the body into a file of its own (BODY_FILE.XXXXXX, made by mktemp
    in the directory the job runs in: array tasks and jobs started there each have theirs).
    The file is opened on a descriptor and removed before the body is written, then the
    interpreter is `exec`ed on /dev/fd/N: it IS the batch shell, so a signal sent to that
    shell alone (Slurm's --signal=B:USR1@60) reaches the body's own handler, the job ends
    with the body's exit status, and no file is left whatever ends the job."""
    if not body.endswith("\n"):
        body += "\n"
    end, n = "DIAMOND_STEP_BODY", 0
    while f"\n{end}\n" in "\n" + body or f"\n{end}\r\n" in "\n" + body:
        n += 1
        end = f"DIAMOND_STEP_BODY_{n}"
    run = " ".join(shlex.quote(w) for w in interpreter.split())
    return (f"{lines}diamond_body=$(mktemp {BODY_FILE}.XXXXXX) || exit 1\n"
            f"{BODY_OPEN}\n"
            f"cat >&\"$diamond_fd\" <<'{end}' || exit 1\n{body}{end}\n"
            f"exec {run} \"/dev/fd/$diamond_fd\"\n")


def assemble(spec: JobSpec, lines: list[str], preamble: list[str] | None = None, *,
             enter: str | None = None) -> str:
    """Shebang, directive lines, optional preamble lines, then the preserved body. Refuses
    (BadInput naming the field) a spec whose values could add a line or a command. A body
    whose interpreter does not read shell lines gets its preamble from bash, then runs with
    that interpreter (`shell_lines_then`). `enter`: a `cd` line, which csh reads as sh does:
    the body's first line where it is the only line added, else the preamble's first."""
    check_spec(spec)
    body = spec.script if spec.script is not None else (spec.command or "") + "\n"
    shell = spec.shell or "/bin/bash"
    after = _after_submit_directory_lines(body, enter) \
        if enter and not spec.environment.container_image else None
    if after is not None:
        body = after
    elif enter and not preamble and not spec.environment.container_image \
            and shell_program(shell) in (*POSIX_SHELLS, "csh", "tcsh"):
        body = f"{enter}\n{body}"
    elif enter:
        preamble = [enter, *(preamble or [])]
    if spec.environment.container_image:  # bash inside runs a body in another language
        inner = shell
        if not runs_shell_lines(shell):
            body, inner, shell = shell_lines_then("", body, shell), "/bin/bash", "/bin/bash"
        body = in_container(body, spec.environment.container_image,
                            pick_runtime(spec.metadata.get("container_runtime"), None),
                            inner)
    # LF line ends (a body written with CRLF is said by common_render_warnings): bash
    # reads a carriage return as part of each line, and sbatch refuses such a script
    body = body.replace("\r\n", "\n")
    if preamble and not runs_shell_lines(shell):
        body = shell_lines_then("".join(p + "\n" for p in preamble), body, shell)
        shell, preamble = "/bin/bash", []
    head = [f"#!{shell}", *lines, *(preamble or [])]
    return "\n".join(head) + "\n" + body


# ---------------------------------------------------------------- containers

RUNTIMES = ("apptainer", "singularity", "podman", "docker")


def pick_runtime(wanted: str | None, available: list[str] | None) -> str:
    """The runtime a container runs with: the one asked for, else the site's first known
    one (apptainer, singularity, podman, docker in that order), else apptainer."""
    if wanted:
        if str(wanted).lower() not in RUNTIMES:
            raise BadInput(f"container runtime {wanted!r} is not one of {', '.join(RUNTIMES)}")
        return str(wanted).lower()
    have = {r.lower() for r in available or []}
    return next((r for r in RUNTIMES if r in have), "apptainer")


def in_container(body: str, image: str, runtime: str, shell: str = "/bin/bash") -> str:
    """`body` run by `shell` inside `image` (the body goes in on stdin, as a quoted here
    document, so nothing in it is expanded on the way)."""
    nl = "\r\n" if "\r\n" in body else "\n"
    end = "DIAMOND_CONTAINER_BODY"
    lines = set(body.splitlines())
    n = 0
    while (end + (str(n) if n else "")) in lines:
        n += 1
    end += str(n) if n else ""
    sh = sh_quote(shell.split()[0] if shell else "/bin/bash")
    img = sh_quote(image)
    if runtime in ("podman", "docker"):
        cmd = f'{runtime} run --rm -i -v "$PWD:$PWD" -w "$PWD" {img} {sh} -s'
    else:
        cmd = f"{runtime} exec {img} {sh} -s"
    text = body if body.endswith(("\n", "\r")) or not body else body + nl
    return f"{cmd} <<'{end}'{nl}{text}{end}{nl}"


# ---------------------------------------------------------------- neutral extras

_PAT = re.compile(r"%%|%[0-9]*[A-Za-z]")
_TO_TARGET = {
    "lsf": {"j": "%J", "A": "%J", "a": "%I"},
    "flux": {"j": "{{id}}", "x": "{{name}}"},
    "pbs": {"a": "^array_index^"},  # PBS Pro's subjob index in -o/-e paths
    "torque": {},  # Torque has no pattern in -o/-e paths
    "sge": {"j": "$JOB_ID", "A": "$JOB_ID", "x": "$JOB_NAME", "a": "$TASK_ID",
            "u": "$USER", "N": "$HOSTNAME"},
}
_FROM_SOURCE = {
    "lsf": [("%J", "%j"), ("%I", "%a")],
    # {{id.f58}} is {{id}} (f58 is flux's default form of a job id)
    "flux": [("{{id}}", "%j"), ("{{id.f58}}", "%j"), ("{{jobid}}", "%j"), ("{{name}}", "%x")],
    "pbs": [("^array_index^", "%a")],
    # Grid Engine's execd matches each name at a `$` as a prefix, braces unknown: `$JOB_ID_x`
    # is the id then `_x`, `${JOB_ID}` stays in the name as written (sge_execd expand_path)
    "sge": [("$JOB_ID", "%j"), ("$JOB_NAME", "%x"), ("$TASK_ID", "%a"), ("$USER", "%u"),
            ("$HOSTNAME", "%N")],
}
# a Grid Engine pseudo variable in braces, which Grid Engine does not expand
_SGE_BRACED = re.compile(r"\$\{(HOME|USER|JOB_ID|JOB_NAME|HOSTNAME|TASK_ID)\}")


# A `%` each scheduler other than Slurm writes into the file's name as it is: all but
# LSF's own %J and %I (PBS, Grid Engine and flux have no %-tokens)
_LITERAL_PERCENT = {"lsf": re.compile(r"%(?![JI])")}
_ANY_PERCENT = re.compile("%")


def neutral_out_pattern(path: str, source: str) -> str:
    """A dialect's file-name pattern (LSF %J, Flux {{id}}) -> neutral Slurm-style %j; a `%`
    the source's scheduler keeps in the name as written made `%%` (sbatch would read
    `%x` in PBS's `load_%x.log` as the job's name)."""
    if source != "slurm":
        path = _LITERAL_PERCENT.get(source, _ANY_PERCENT).sub("%%", path)
    for old, new in _FROM_SOURCE.get(source, []):
        path = path.replace(old, new)
    return path


def set_output_path(spec: JobSpec, item: Item, host_prefix: re.Pattern[str],
                    source: str) -> None:
    """PBS's and Grid Engine's `-o`/`-e [HOST:]PATH`: the host prefix (`host_prefix`, each
    dialect's own form) is dropped with a note; the path's file-name pattern made neutral."""
    value = item.value or ""
    path = host_prefix.sub("", value, count=1)
    if path != value:
        note(spec, f"line {item.lineno}: host prefix dropped from {value}")
    if source == "sge":
        for braced in dict.fromkeys(m.group(0) for m in _SGE_BRACED.finditer(path)):
            note(spec, f"line {item.lineno}: {braced} in {item.option} {value} is not "
                       f"expanded by Grid Engine (it expands ${braced[2:-1]}, without "
                       "braces); the file's name holds it as written")
    setattr(spec, "stdout" if item.option == "-o" else "stderr",
            neutral_out_pattern(path, source))


# What each scheduler does to an output file that exists when the job writes it, by its
# documentation: sbatch truncates it (unless the site sets JobFileAppend=1), PBS copies the
# job's output over it, flux truncates it (its shell's output.mode), LSF's -o/-e and Grid
# Engine's -o/-e append to it.
DEFAULT_OUTPUT_MODE = {"slurm": "truncate", "pbs": "truncate", "flux": "truncate",
                       "lsf": "append", "sge": "append"}


def output_mode_of(spec: JobSpec) -> str | None:
    """What the job does to an existing output file: what the spec says, else what the
    scheduler it was written for does to a file it names; None when it names none and says
    nothing (the scheduler's own file names hold the job id), or comes from no dialect."""
    if spec.output_mode:
        return spec.output_mode
    if not (spec.stdout or spec.stderr):
        return None
    return DEFAULT_OUTPUT_MODE.get(spec.source_dialect or "")


def output_mode_warning(spec: JobSpec, target: str, how: str) -> list[str]:
    """A note when `target`, which can only `how` ("append", "truncate") an existing
    output file, renders the files of a job that does the other."""
    mode = output_mode_of(spec)
    if not (spec.stdout or spec.stderr) or mode in (None, how):
        return []
    verb = {"append": "appended to", "truncate": "overwritten"}
    return [f"approximated: output files {verb[how]} ({target} cannot be told otherwise); "
            f"the {spec.source_dialect or 'source'} script had an existing file {verb[mode]}"]


# flux's job id in one of its other forms in a file name: {{id.dec}}, {{id.hex}}, ...
_FLUX_ID_FORM = re.compile(r"\{\{id\.(\w+)\}\}")
# any other of flux's template fields ({{taskid}}, {{size}}, {{node.name}} ...)
_FLUX_FIELD = re.compile(r"\{\{[\w.]+\}\}")


def _flux_fields_elsewhere(path: str, target: str, warnings: list[str]) -> str:
    """flux's template fields in a file name for another scheduler: a form of the job id
    becomes that scheduler's own id where its file names have one (it was kept as the
    characters `{{id.dec}}`, every job writing the same file); each other field, and an id
    form where there is no id, is kept as written, said."""
    has_id = target == "slurm" or "j" in _TO_TARGET.get(target, {})
    said = path
    for form in dict.fromkeys(_FLUX_ID_FORM.findall(path)):
        how = f"as {target}'s own job id" if has_id else \
            f"has no {target} equivalent; kept literally"
        warnings.append(f"approximated: {{{{id.{form}}}}} in output path {said!r} (flux's "
                        f"job id in its {form} form) {how}")
    if has_id:
        path = _FLUX_ID_FORM.sub("%j", path)
    for tag in dict.fromkeys(_FLUX_FIELD.findall(path)):
        if not _FLUX_ID_FORM.fullmatch(tag):
            warnings.append(f"approximated: {tag} in output path {said!r} (a flux template "
                            f"field) has no {target} equivalent; kept literally")
    return path


def map_out_pattern(path: str, target: str, warnings: list[str]) -> str:
    """Neutral (Slurm) file-name pattern -> target syntax; untranslatable ones warned."""
    if target != "flux" and "{{" in path:
        path = _flux_fields_elsewhere(path, target, warnings)
    if target == "slurm":
        return path
    table = _TO_TARGET[target]

    def sub(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok == "%%":  # a `%` of the name: as written where nothing reads it as a token
            if target == "lsf" and path[m.end():m.end() + 1] in ("J", "I"):
                warnings.append(f"approximated: %% before {path[m.end()]} in output path "
                                f"{path!r} kept as %%: lsf would read %{path[m.end()]} as "
                                "a token")
                return tok
            return "%"
        new = table.get(tok[-1])
        if new is None:
            warnings.append(f"approximated: {tok} in output path {path!r} has no {target} "
                            "equivalent; kept literally")
            return tok
        if len(tok) > 2:  # a padded number (%4a): the value unpadded, each task its own file
            warnings.append(f"approximated: {tok} in output path {path!r} as {new}, "
                            f"unpadded ({target} cannot pad it: 7 is written 7, not "
                            f"{'7'.zfill(int(tok[1:-1]))})")
        return new

    return _PAT.sub(sub, path)


# What each target's scheduler makes of a neutral token once rendered (map_out_pattern):
# the job's id, its name; tokens missing here stay in the file's name as written
_EXPANDED_BY = {"slurm": {"j": "id", "A": "id", "x": "name"},
                "lsf": {"j": "id", "A": "id"}, "flux": {"j": "id", "x": "name"},
                "pbs": {}, "torque": {}, "sge": {"j": "id", "A": "id", "x": "name"}}
_ONLY_THE_JOB_KNOWS = {"a": "its array task's index", "b": "its array task's index",
                       "u": "the user name", "N": "the node's name", "n": "the node's index",
                       "t": "the task's rank", "s": "the step's id", "J": "the step's id"}


def output_file_name(path: str, target: str, *, job_id: str, name: str | None,
                     array: bool = False) -> tuple[str, str | None]:
    """The name `target`'s scheduler gives the file of the neutral (Slurm-style) output
    path `path` for the job `job_id` named `name`: the tokens it expands (the job's id and
    name) replaced, the others left as the characters of the name they are; with, when a
    token is one only the running job knows (an array task's index or id, the user, the
    node), what it is, and `path` unchanged."""
    expands = _EXPANDED_BY[target]

    def sub(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok == "%%":  # every writer puts a `%` of the name as one `%`
            return "%"
        what = expands.get(tok[-1])
        if what is None and target != "slurm" and tok[-1] not in _TO_TARGET[target]:
            return tok  # no such token there: the file's name holds it as written
        if what is None or (what == "id" and tok[-1] == "j" and array and target == "slurm"):
            raise LookupError(_ONLY_THE_JOB_KNOWS.get(tok[-1], f"{tok}'s value")
                              if what is None else "each array task's own job id")
        value = job_id if what == "id" else (name or "")
        width = tok[1:-1]
        return value.zfill(int(width)) if width and ascii_digits(value) else value

    try:
        named = _flux_id_forms(path, job_id) if target == "flux" else path
        return _PAT.sub(sub, named), None
    except LookupError as exc:
        return path, str(exc)


def _flux_id_forms(path: str, job_id: str) -> str:
    """flux's `{{id.dec}}`, `{{id.hex}}`, `{{id.dothex}}`, `{{id.kvs}}`, `{{id.f58}}`,
    `{{id.f58plain}}`, `{{id.words}}` in a file name: the job's id in that form
    (flux-job-id(1)); emoji is flux's own list."""
    value = flux_id_value(job_id)

    def form(m: re.Match[str]) -> str:
        hexa = f"{value:016x}" if value is not None else ""
        dothex = ".".join(hexa[i:i + 4] for i in range(0, 16, 4))
        spelled = {"dec": str(value), "hex": f"0x{value:x}" if value is not None else "",
                   "dothex": dothex, "kvs": f"job.{dothex}", "f58": job_id,
                   "f58plain": flux_f58(value, ascii_prefix=True) if value is not None
                   else "",
                   "words": flux_words(value) if value is not None else ""}.get(m.group(1))
        if value is None or spelled is None:
            raise LookupError(f"the job id in flux's {m.group(1)} form")
        return spelled

    return _FLUX_ID_FORM.sub(form, path)


# the file PBS, Grid Engine and LSF write into a directory given as -o / -e: their default
# name there (PBS and Grid Engine NAME.oID / NAME.eID, LSF ID.out / ID.err)
_DIR_FILES = {"pbs": ("%x.o%j", "%x.e%j"), "sge": ("%x.o%j", "%x.e%j"),
              "lsf": ("%j.out", "%j.err")}


def file_for_directory(path: str, stream: str, source: str | None, target: str,
                       warnings: list[str]) -> str:
    """`-o logs/` names a directory on PBS, Grid Engine and LSF (the default file is written
    in it); Slurm and flux take a file name only, and fail to open a directory: the
    source's default name inside it, with a warning. Among the three, LSF names the file
    `<id>.out` where PBS and Grid Engine name it `<name>.o<id>`: Grid Engine gets the
    source's name written out, PBS and LSF (which cannot write the other's) the directory,
    said. `stream`: "stdout" or "stderr"."""
    files = _DIR_FILES.get(source or "")
    if not path.endswith("/") or files is None or target == source:
        return path
    name = path + files[stream == "stderr"]
    if (own := _DIR_FILES.get(target)) is not None:
        mine, theirs = own[stream == "stderr"], files[stream == "stderr"]
        if mine == theirs:
            return path
        if target == "sge":
            warnings.append(f"kept: {stream} directory {path} as the file {name} (the name "
                            f"{source} gives it there; {target} would name it {mine})")
            return name
        warnings.append(f"approximated: {stream} directory {path}: {target} names the file "
                        f"in it {mine}, where {source} named it {theirs}")
        return path
    warnings.append(f"approximated: {stream} directory {path} as the file {name} ({target} "
                    "takes a file name, not a directory)")
    return name


_VAR_NAME = re.compile(r"[A-Za-z_]\w*")


def take_variables(spec: JobSpec, text: str, *, quoted_values: bool = False) -> bool:
    """qsub's `-v A=1,B` (PBS and Grid Engine alike) into the spec's environment: the pairs
    set, the bare names copied from qsub's environment. False (the option is kept as
    written) when it is not such a list. `quoted_values`: a value may be quoted to hold
    commas (PBS's qsub: `LIST='a,b',X=1`)."""
    got = split_quoted_variables(text) if quoted_values else split_variables(text)
    if not got or not (got[0] or got[1]):
        return False
    env = spec.environment
    env.variables.update(got[0])
    env.passed += [n for n in got[1] if n not in env.passed]
    return True


def split_variables(text: str) -> tuple[dict[str, str], list[str]] | None:
    """A comma-separated variable list (`A=1,B`): the NAME=VALUE pairs and the bare names
    (copied from the submitting shell); None when a name is not a variable name."""
    return _pairs_and_names(text.split(","))


def split_quoted_variables(text: str) -> tuple[dict[str, str], list[str]] | None:
    """A PBS qsub variable list, whose values may be in single or double quotes to hold
    commas (`LIST='a,b',X=1`: LIST is `a,b`, X is 1; qsub drops the quotes); None where a
    quote is left open or a quoted value runs on past its closing quote, or a name is not
    a variable name."""
    parts: list[str] = []
    rest = text
    while rest:
        name, eq, value = rest.partition("=")
        if eq and "," not in name and value[:1] in ("'", '"'):
            close = value.find(value[0], 1)
            if close < 0 or value[close + 1:close + 2] not in ("", ","):
                return None
            parts.append(f"{name}={value[1:close]}")
            rest = value[close + 2:]
            continue
        part, _, rest = rest.partition(",")
        parts.append(part)
    return _pairs_and_names(parts)


def _pairs_and_names(parts: list[str]) -> tuple[dict[str, str], list[str]] | None:
    """A variable list's parts (`A=1`, `B`; empty ones passed over): the NAME=VALUE pairs
    and the bare names, each once; None when a name is not a variable name."""
    pairs: dict[str, str] = {}
    names: list[str] = []
    for part in (p for p in parts if p):
        k, eq, val = part.partition("=")
        if not _VAR_NAME.fullmatch(k):
            return None
        if eq:
            pairs[k] = val
        elif k not in names:
            names.append(k)
    return pairs, names


def passed_names(spec: JobSpec) -> list[str]:
    """The names to write where the environment is not exported whole (with it, they go)."""
    env = spec.environment
    return [] if env.export_all else [n for n in env.passed if n not in env.variables]


def listed_variables(spec: JobSpec) -> dict[str, str]:
    """The variables a scheduler's comma-separated list (Slurm's --export, PBS's and Grid
    Engine's -v, LSF's -env) carries whole: those whose value holds no comma."""
    return {k: v for k, v in spec.environment.variables.items() if "," not in v}


def add_qsub_environment(spec: JobSpec, add: Callable[..., None]) -> None:
    """qsub's environment options, PBS's and Grid Engine's alike: -V to export the whole
    submitting environment, -v NAME[=VALUE],... for the names passed and values set."""
    if spec.environment.export_all:
        add("-V")
    if listed := passed_names(spec) + [f"{k}={v}" for k, v in
                                       listed_variables(spec).items()]:
        add("-v", ",".join(listed))


def launcher_only_warnings(r: Resources, scheduler: str) -> list[str]:
    """The CPU binding, GPU binding and task distribution `r` asks, which `scheduler` has
    no directive for: each dropped, said."""
    return [f"dropped: {what} {val} (no {scheduler} directive; pass it to the MPI launcher)"
            for what, val in (("CPU binding", r.cpu_bind), ("GPU binding", r.gpu_bind),
                              ("task distribution", r.distribution)) if val]


# a cd a body starts with, to a directory that is not relative to where the job started
# (`cd $PBS_O_WORKDIR`, `cd "${SLURM_SUBMIT_DIR}"`, `cd /scratch/run`, `cd ~/x`)
_ENTERS_A_DIRECTORY = re.compile(r"""^\s*cd\s+["']?[/~$]""")


def runs_where_submitted(spec: JobSpec) -> bool | None:
    """Whether the job, as its own scheduler runs it, starts in the directory it was
    submitted from (Slurm, LSF, flux; Grid Engine with -cwd) rather than in the home
    (PBS Pro and Torque; Grid Engine without -cwd); None where no scheduler wrote it."""
    source = spec.source_dialect
    if source == "sge":
        return bool(spec.metadata.get("sge_cwd"))
    return None if source is None else source != "pbs"


def enters_a_directory(body: str | None) -> bool:
    """Whether the body's first command moves into a directory of its own choosing (so
    where the job started does not matter to it); a `submit_directory_line` is not one."""
    for line in (body or "").splitlines():
        if line.strip() and not line.lstrip().startswith("#") \
                and not is_submit_directory_line(line):
            return bool(_ENTERS_A_DIRECTORY.match(line))
    return False


# flux sets no variable of the directory a job was submitted from, but starts the job there:
# a body reading another scheduler's (cd $PBS_O_WORKDIR) gets it set, as its first line
_SUBMIT_DIRECTORY_SAID = "  # flux starts the job in the directory it was submitted from"
_SUBMIT_DIRECTORY_LINE = re.compile(r'(?:export (?P<sh>[A-Z_]+)="\$PWD"|setenv (?P<csh>[A-Z_]+) '
                                    r'"\$cwd")' + re.escape(_SUBMIT_DIRECTORY_SAID))


def submit_directory_line(name: str, csh: bool) -> str:
    """The line that sets `name` (a scheduler's variable of the submit directory) to the
    directory a flux job starts in, for sh or csh."""
    return (f'setenv {name} "$cwd"' if csh else f'export {name}="$PWD"') \
        + _SUBMIT_DIRECTORY_SAID


def is_submit_directory_line(line: str) -> bool:
    return submit_directory_name(line) is not None


def submit_directory_name(line: str) -> str | None:
    """The variable a `submit_directory_line` sets (`PBS_O_WORKDIR`); None for any other
    line."""
    m = _SUBMIT_DIRECTORY_LINE.fullmatch(line)
    return m and (m["sh"] or m["csh"])


def _after_submit_directory_lines(body: str, enter: str) -> str | None:
    """`body` with `enter` after the `submit_directory_line`s it starts with (they read
    where the job starts, before it moves); None where it starts with none."""
    lines = body.split("\n")
    n = 0
    while n < len(lines) and is_submit_directory_line(lines[n]):
        n += 1
    return "\n".join([*lines[:n], enter, *lines[n:]]) if n else None


# the line a PBS job enters its submit directory with: `${VAR:-.}` stays put where the
# variable is unset (Slurm's qsub wrapper sets none; its job starts there already) and
# under `set -u`; csh has no `:-` and stops at an unset `$VAR`, so it asks printenv
_PBS_ENTER_SH = 'cd "${PBS_O_WORKDIR:-.}"'
_PBS_ENTER_CSH = 'cd "`printenv PBS_O_WORKDIR | grep . || echo .`"'
HOME_ENTER = 'cd "$HOME"'
_DIALECT_NAMES = {"slurm": "Slurm", "pbs": "PBS", "lsf": "LSF", "flux": "Flux",
                  "sge": "Grid Engine"}


def csh_reads_enter(spec: JobSpec, preamble: list[str] | None) -> bool:
    """Whether `assemble` puts its `enter` line where csh or tcsh reads it (the body's first
    line), rather than in a preamble sh reads."""
    return not preamble and not spec.environment.container_image \
        and shell_program(spec.shell or "/bin/bash") in ("csh", "tcsh")


def start_directory(spec: JobSpec, target: str, preamble: list[str] | None = None
                    ) -> tuple[str | None, list[str]]:
    """The `cd` line (for `assemble`'s `enter`) that starts the job, under `target`, in the
    directory its own scheduler started it in, and the note saying so. Slurm, LSF, Flux and
    Grid Engine's -cwd start a job where it was submitted, PBS Pro, Torque and Grid Engine
    without -cwd in the home directory: a PBS translation enters $PBS_O_WORKDIR, a Slurm, LSF
    or Flux one of a home-started job enters $HOME (none of their directives can name the
    home: --chdir, -cwd and --cwd expand no variable). None where the spec names a working
    directory (diamond's submit always does: the job runs there), where the body's first
    command enters a directory of its own, or where both schedulers start it alike."""
    where = runs_where_submitted(spec)
    source = _DIALECT_NAMES.get(spec.source_dialect or "", spec.source_dialect)
    if spec.working_directory or where is None or enters_a_directory(spec.script):
        return None, []
    if target == "pbs" and where:
        line = _PBS_ENTER_CSH if csh_reads_enter(spec, preamble) else _PBS_ENTER_SH
        return line, [f"kept: the directory the job runs in ({source} starts it where it "
                      f"was submitted, PBS in the home directory): a {line} line was added "
                      "before the body"]
    if target in ("slurm", "lsf", "flux") and not where:
        return HOME_ENTER, [
            f"kept: the directory the job runs in ({source} starts it in the home directory"
            + (" without -cwd" if spec.source_dialect == "sge" else "")
            + f", {_DIALECT_NAMES[target]} where it was submitted): a {HOME_ENTER} line was "
            "added before the body"]
    return None, []


def neutral_preamble(spec: JobSpec, *, variables_listed: bool = False) -> list[str]:
    """Shell lines before the body: the modules to load and, when the dialect lists the
    variables comma-separated, an `export` for each whose value holds a comma (the list
    would split it into a variable and the names of others)."""
    exports = [f"export {k}={sh_quote(v)}" for k, v in spec.environment.variables.items()
               if variables_listed and "," in v]
    return exports + [f"module load {sh_quote(m)}" for m in spec.environment.modules]


# the dialects with a job's CPU-time limit (PBS cput, Grid Engine h_cpu, LSF -c)
CPU_TIME_DIALECTS = ("pbs", "sge", "lsf")


def cpu_time_limit(spec: JobSpec) -> int | None:
    """The job's CPU-time limit in seconds (metadata CPU_TIME), if any."""
    secs = spec.metadata.get(CPU_TIME)
    return secs if isinstance(secs, int) and not isinstance(secs, bool) and secs > 0 else None


def cpu_time_warnings(spec: JobSpec, target: str) -> list[str]:
    """What becomes of the job's CPU-time limit in `target`: dropped where it has none;
    LSF's, normalized by a host's CPU factor, carried as plain CPU time (said); Grid
    Engine's soft s_cpu (a signal first) carried as a hard limit elsewhere (said)."""
    secs = cpu_time_limit(spec)
    if secs is None or target == spec.source_dialect:
        return []
    if target not in CPU_TIME_DIALECTS:
        written = {"pbs": "-l cput", "lsf": "-c",
                   "sge": f"-l {spec.metadata.get('sge_cpu') or 'h_cpu'}"}.get(
            spec.source_dialect or "")
        return [f"dropped: CPU-time limit {fmt_hms(secs)}"
                + (f" ({spec.source_dialect} {written})" if written else "")
                + f" ({target} has no per-job CPU-time limit option)"]
    out = []
    if spec.source_dialect == "lsf":
        out.append(f"approximated: CPU-time limit {fmt_hms(secs)} (LSF -c) is normalized CPU "
                   "time, scaled by the CPU factor of the host the job runs on; "
                   f"{target} gets it as plain CPU time")
    if spec.source_dialect == "sge" and spec.metadata.get("sge_cpu") == "s_cpu":
        out.append(f"approximated: soft CPU-time limit s_cpu={fmt_hms(secs)} (Grid Engine "
                   f"sends SIGXCPU first) as {target}'s CPU-time limit")
    return out


_SGE_HOME = re.compile(r"\$HOME")  # `$HOMEDIR` too (a prefix); `${HOME}` is not expanded
# Grid Engine's other pseudo variables in an -o/-e path, each matched as a prefix, as it does
_SGE_PSEUDO = re.compile(r"\$(USER|JOB_ID|JOB_NAME|HOSTNAME|TASK_ID)")
_SGE_PSEUDO_MEANS = {"USER": ("the job owner's user name", "%u"),
                     "JOB_ID": ("the job id", "%j"), "JOB_NAME": ("the job's name", "%x"),
                     "HOSTNAME": ("the host the job runs on", "%N"),
                     "TASK_ID": ("the array task's index", "%a")}
OUTPUT_LINES = "output_lines"  # metadata: the line of a Slurm script's --output, --error
# each scheduler that writes a `$` in an output path literally: its submit command, its
# options for the two files and its name in a sentence
_LITERAL_PATHS = {"slurm": ("sbatch", "--output", "--error", "Slurm"),
                  "pbs": ("qsub", "-o", "-e", "PBS"), "lsf": ("bsub", "-o", "-e", "LSF"),
                  "flux": ("flux batch", "--output", "--error", "flux")}


def sge_pseudo_variables_literal(spec: JobSpec) -> list[str]:
    """A path naming $JOB_ID, $USER ... in a script of a scheduler that writes them
    literally (every one but Grid Engine) reaches Grid Engine, which expands them: said,
    naming the option (and for Slurm its line) and the variable."""
    command, out_opt, err_opt, scheduler = _LITERAL_PATHS[spec.source_dialect or "slurm"]
    lines = spec.metadata.get(OUTPUT_LINES) or {}
    out = []
    for key, option, path in (("output", out_opt, spec.stdout),
                              ("error", err_opt, spec.stderr)):
        where = f"line {lines[key]}: " if key in lines else ""
        for name in dict.fromkeys(m.group(1) for m in _SGE_PSEUDO.finditer(path or "")):
            means, token = _SGE_PSEUDO_MEANS[name]
            means += f" (Slurm's {token})" if scheduler == "Slurm" else ""
            out.append(f"approximated: {where}${name} in {option} {path} ({command} writes "
                       f"it literally) is expanded by Grid Engine to {means}; the file is "
                       f"named otherwise (write a name without $ to keep the {scheduler} "
                       "file's name)")
    return out


def sge_home_in_output_paths(spec: JobSpec, target: str) -> list[str]:
    """Grid Engine reads $HOME in an -o/-e path as the job owner's home directory (one of
    its pseudo variables, with $USER, $JOB_ID ...); the other schedulers expand nothing in
    a directive, so their job would write under a directory named `$HOME`: said, naming
    the path (its other pseudo variables have their tokens: %u, %j ...). The mirror: a
    path naming $HOME in a script of another scheduler (which writes it literally) reaches
    Grid Engine, which expands it."""
    paths = dict.fromkeys(filter(None, (spec.stdout, spec.stderr)))
    source = spec.source_dialect
    if source in _LITERAL_PATHS and target == "sge":
        command, _, _, scheduler = _LITERAL_PATHS[source]
        return sge_pseudo_variables_literal(spec) + [
            f"approximated: $HOME in output path {path!r} ({command} writes it literally, "
            "under a directory named $HOME) is expanded by Grid Engine to the job owner's "
            "home directory; the output goes there (write the directory's path without $ to "
            f"keep the {scheduler} file's place)"
            for path in paths if _SGE_HOME.search(path)]
    if source != "sge" or target == "sge":
        return []
    return [f"approximated: $HOME in output path {path!r} (Grid Engine's pseudo variable: "
            f"the job owner's home directory) has no {target} equivalent; kept literally, "
            f"so {target} writes under a directory named $HOME (give the home directory's "
            "path)"
            for path in paths if _SGE_HOME.search(path)]


def staging_not_said(spec: JobSpec, target: str) -> str | None:
    """The job's stage entries no script line's note has said carried (those the face gave),
    said once: diamond moves them around the job, not a directive of `target`."""
    lines = spec.metadata.get(STAGING_LINES) or []
    ins = len(spec.stage_in) - sum(1 for r in lines if r.get("direction") == "in")
    outs = len(spec.stage_out) - sum(1 for r in lines if r.get("direction") == "out")
    if ins <= 0 and outs <= 0:
        return None
    return (f"carried by diamond: file staging ({max(ins, 0)} in, {max(outs, 0)} out): "
            f"diamond moves the files before and after the job, not a {target} directive")


REPLACEMENT_CHAR = "\ufffd"  # what reading a script put in place of each byte not UTF-8


def replaced_bytes_said(spec: JobSpec) -> str | None:
    """The job's text holding U+FFFD, the character a byte that was not UTF-8 became when
    the script was read (a file saved as Latin-1 or cp1252): said once, naming the first
    line that holds it, as the script now carries the character, not the byte."""
    texts = [spec.name, spec.comment, spec.stdout, spec.stderr, spec.working_directory,
             *(d.raw for d in spec.unknown), spec.script, spec.command]
    lines = [x for t in texts if t for x in t.splitlines() if REPLACEMENT_CHAR in x]
    if not lines:
        return None
    count = sum(x.count(REPLACEMENT_CHAR) for x in lines)
    first = lines[0].strip()
    first = first if len(first) <= 80 else first[:77] + "..."
    return (f"approximated: {count} U+FFFD character(s) ({REPLACEMENT_CHAR}), first in "
            f"`{first}`: bytes that were not UTF-8 (a file saved as Latin-1 or cp1252?) "
            "were replaced when the script was read, and the job gets U+FFFD in their "
            "place; save the script as UTF-8 (iconv -f latin1 -t utf-8) to keep its text")


def common_render_warnings(spec: JobSpec, target: str) -> list[str]:
    out = []
    if "\r\n" in (spec.script or spec.command or ""):
        why = "sbatch rejects DOS line breaks" if target == "slurm" else \
            "bash reads a carriage return as part of each line: `./app\\r` is not found"
        out.append(f"approximated: CRLF line endings converted to LF ({why})")
    if said := replaced_bytes_said(spec):
        out.append(said)
    if said := staging_not_said(spec, target):
        out.append(said)
    if spec.environment.container_image:
        runtime = pick_runtime(spec.metadata.get("container_runtime"), None)
        out.append(f"approximated: container image {spec.environment.container_image}: the "
                   f"body runs in it through `{runtime}` (no {target} directive)")
    kept_apart = {"pbs": "PBS kept them apart without -j oe",
                  "sge": "Grid Engine kept them apart without -j y"}
    if target not in ("pbs", "sge") and spec.source_dialect in kept_apart \
            and not spec.join_output and spec.stderr is None:
        out.append(f"approximated: stderr now goes with stdout ({target} joins them unless an "
                   f"error file is named; {kept_apart[spec.source_dialect]})")
    comps = live_components(spec)
    whole_memory = [i for i, c in enumerate(comps) if c.memory_mb == 0] if comps else \
        [0] if spec.resources.memory_mb == 0 else []
    if whole_memory and target != "slurm":  # of a component too (it passed unsaid)
        of = f" of component {', '.join(map(str, whole_memory))}" if comps else ""
        out.append(f"dropped: memory 0{of} (Slurm's 'all memory of the node'; no {target} "
                   "form)")
    if spec.resources.memory_per_cpu_mb == 0 and target != "slurm":  # it passed unsaid
        out.append(f"dropped: memory 0 per CPU (Slurm's --mem-per-cpu=0; no {target} form)")
    if spec.constraints.architecture:
        out.append(f"dropped: architecture {spec.constraints.architecture} "
                   f"(no {target} directive)")
    if spec.source_dialect == "sge" and spec.reservation and target in ("slurm", "lsf"):
        out.append(f"approximated: reservation {spec.reservation} (Grid Engine's -ar: the "
                   f"number its site gave an advance reservation) written as the {target} "
                   f"reservation named {spec.reservation}; give the name of the {target} "
                   "site's reservation")
    out += working_directory_patterns(spec, target)
    out += sge_home_in_output_paths(spec, target)
    out += cpu_time_warnings(spec, target)
    out += stdout_left_to_default(spec, target)
    if target != "slurm":
        shown = {"pbs": "PBS", "lsf": "LSF", "sge": "Grid Engine"}.get(target, target)
        out += component_settings_dropped(spec, lambda what: f"{shown} has one {what} per job")
    return out


# Where each scheduler puts a job's stdout when only an error file is named (bsub: the
# job's output is mailed to the submitter, as without -o at all)
_DEFAULT_STDOUT = {"slurm": "writes it to its default file, slurm-%j.out",
                   "pbs": "writes it to its default file, <job name>.o<job number>",
                   "sge": "writes it to its default file, <job name>.o<job id>",
                   "flux": "writes it to its default file, flux-{{id}}.out",
                   "lsf": "mails it to the submitter (no -o)"}


def stdout_left_to_default(spec: JobSpec, target: str) -> list[str]:
    """No output file named (an error file or none) leaves stdout where the scheduler puts
    it by default: a file everywhere but LSF, which mails it. Between LSF and the others
    that moves the output: said."""
    source = spec.source_dialect
    if spec.stdout or source == target or "lsf" not in (source, target) \
            or source not in _DEFAULT_STDOUT:
        return []
    if not spec.stderr:  # nothing named: a file became a mail, or the other way
        return [f"approximated: stdout: no output file is named; {source} "
                f"{_DEFAULT_STDOUT[source]}, {target} {_DEFAULT_STDOUT[target]}"]
    if spec.join_output:
        return []
    return [f"approximated: stdout: only an error file is named ({spec.stderr}); {source} "
            f"{_DEFAULT_STDOUT[source]}, {target} {_DEFAULT_STDOUT[target]}"]


# bsub -cwd's dynamic patterns (job id, group, index, execution id and index, project,
# user, user group, first host): LSF fills them in and makes the directory
_LSF_CWD_PATTERN = re.compile(r"%(?:JG|EJ|EI|[JIPUGH])")


def zero_time_limit(spec: JobSpec, item: Item, limit: str) -> bool:
    """A limit of zero (`walltime=0`, `-W 0`, `h_rt=0`): Slurm and flux read 0 as no limit
    at all, so it is not the job's time here: kept as written, said. Always False (for a
    reader's `return`)."""
    note(spec, f"line {item.lineno}: {limit} is a zero time limit: not read as the job's "
               "time (Slurm and flux take 0 as no limit at all); kept as written")
    return False


def working_directory_patterns(spec: JobSpec, target: str) -> list[str]:
    """An LSF working directory's patterns (`-cwd /scratch/%U/%J`): no other scheduler
    fills them in a working directory, so they are kept literally, and said; the same
    characters in another scheduler's directory (taken as written) reaching LSF, said."""
    path = spec.working_directory or ""
    source = spec.source_dialect
    found = list(dict.fromkeys(_LSF_CWD_PATTERN.findall(path)))
    if not found or source == target or "lsf" not in (source, target):
        return []
    them = "it" if len(found) == 1 else "them"
    if target == "lsf":  # the other way: characters the source took as they are
        return [f"approximated: {', '.join(found)} in working directory {path!r}: {source} "
                f"takes {them} as written; LSF fills {them} in and makes the directory"]
    return [f"approximated: {', '.join(found)} in working directory {path!r}: LSF fills "
            f"{them} in and makes the directory; {target} does neither (kept literally)"]


def component_settings_dropped(spec: JobSpec, why: Callable[[str], str]) -> list[str]:
    """One line for each component's own partition, account, QOS, reservation, constraint,
    time limit or exclusivity that a scheduler taking one of each per job cannot carry
    (`why("queue")`: e.g. "PBS has one queue per job"; the whole job goes with the job's),
    and for its own generic resources (Slurm `--gres` entries beside its GPUs)."""
    out = []
    for i, c in enumerate(live_components(spec)):
        if c.queue and c.queue != spec.queue or c.default_queue and spec.queue:
            own = f"partition {c.queue}" if c.queue else "the default partition"
            out.append(f"dropped: {own} of component {i} ({why('queue')}: the whole job "
                       f"goes to {spec.queue or 'the default queue'})")
        for what, attr in (("account", "account"), ("QOS", "qos"),
                           ("reservation", "reservation")):
            value, job = getattr(c, attr), getattr(spec, attr)
            if value and value != job:
                out.append(f"dropped: {what} {value} of component {i} ({why(what)}: the "
                           f"whole job has {f'{what} {job}' if job else f'the default {what}'})")
        job_features = spec.constraints.features
        if c.features is not None and c.features != job_features:
            own = f"constraint {'&'.join(c.features)}" if c.features else "no constraint"
            whole = f"constraint {'&'.join(job_features)}" if job_features else "no constraint"
            out.append(f"approximated: {own} of component {i} as the job's {whole} "
                       f"({why('constraint')})")
        if c.exclusive is not None and c.exclusive != spec.constraints.exclusive:
            own, whole = ("exclusive", "shared") if c.exclusive else ("shared", "exclusive")
            out.append(f"approximated: {own} nodes of component {i} as the job's {whole} "
                       f"ones ({why('exclusivity')})")
        if c.gres:
            out.append(f"dropped: --gres {c.gres} of component {i} (Slurm generic resources: "
                       "no neutral form)")
    times, job_time = component_times(spec), spec.resources.walltime_s
    for i, own in enumerate(times):
        if own is not None and own != job_time:
            out.append(f"approximated: time limit {fmt_hms(own)} of component {i} as the "
                       f"job's {fmt_hms(job_time)} ({why('time limit')}: the longest)")
    return out


def component_times(spec: JobSpec) -> list[int | None]:
    """Each live component's own time limit (None: not given), the first's included, while
    some later one has its own and the job's is still the longest of them (a face's
    --time then is the whole job's); else []."""
    comps = live_components(spec)
    if not any(c.walltime_s is not None for c in comps[1:]):
        return []
    times = [c.walltime_s for c in comps]
    return times if spec.resources.walltime_s == max(t for t in times if t) else []


def kept_project(spec: JobSpec, target: str, warnings: list[str]) -> tuple[str, Directive] | None:
    """A project kept as written that `target` takes as it is: PBS Pro's `-P project` and
    Grid Engine's `-P project` both name the project the job belongs to (not its account,
    `-A` in both); Torque's `-P` names a user to run as instead, so a Torque script's is
    not carried. (the value, the Directive carried over, said), or None."""
    source = spec.source_dialect
    if {source, target} != {"pbs", "sge"} or \
            source == "pbs" and spec.metadata.get("pbs_flavor") != "pro":
        return None
    kept = [d for d in spec.unknown if d.dialect == source and d.option == "-P" and d.value]
    if not kept:
        return None
    d = kept[-1]  # the last one wins, as qsub reads them
    shown = "PBS Pro" if source == "pbs" else "Grid Engine"
    warnings.append(f"approximated: {d.raw.strip()} as -P {d.value} (the job's project, as "
                    f"{shown}'s -P; a project of that name must exist there)")
    return d.value or "", d


# `qsub -p`: PBS (Pro and Torque) takes -1024..1023, Grid Engine -1023..1024 of which a
# user may give 0 and below only (qsub(1) of each): the job's priority among the others
_PRIORITY = {"pbs": (-1024, 1023), "sge": (-1023, 0)}


def kept_priority(spec: JobSpec, target: str, warnings: list[str]
                  ) -> tuple[str | None, Directive] | None:
    """A priority kept as written that `target` takes as it is: PBS's and Grid Engine's
    `-p N` both rank the job among the others by N. (the value, or None where `target`
    refuses it, said; the Directive carried over), or None where there is none."""
    source = spec.source_dialect
    if {source, target} != {"pbs", "sge"}:
        return None
    kept = [d for d in spec.unknown if d.dialect == source and d.option == "-p" and d.value]
    if not kept:
        return None
    d = kept[-1]  # the last one wins, as qsub reads them
    low, high = _PRIORITY[target]
    try:
        value = int(d.value or "")
    except ValueError:
        return None  # not a number: said dropped as any other option
    if not low <= value <= high:
        why = ("Grid Engine lets a user only lower a job's priority (0 and below)"
               if target == "sge" and value > 0 else f"{target} takes {low} to {high}")
        warnings.append(f"dropped: {d.raw.strip()} (-p {value}: {why})")
        return None, d
    warnings.append(f"kept: {d.raw.strip()} as -p {value} (the job's priority among the "
                    "others, as qsub -p ranks it there)")
    return str(value), d


# The option that gives a batch job its standard input from a file (sbatch --input, bsub
# -i, Grid Engine's qsub -i); PBS and flux batch have none
STDIN_OPTION = {"slurm": "--input", "lsf": "-i", "sge": "-i"}


def kept_stdin(spec: JobSpec, target: str, warnings: list[str]
               ) -> tuple[str, Directive] | None:
    """The job's standard-input file, kept as written in its own dialect, for a `target`
    that takes one: (the path, the Directive carried), said; else None (said dropped as
    any other kept option). A path holding a file-name pattern (`%j`, `$JOB_ID`, which
    each fills in its own way) or a Grid Engine host prefix stays where it is."""
    source = spec.source_dialect or ""
    if source == target or source not in STDIN_OPTION or target not in STDIN_OPTION:
        return None
    kept = [d for d in spec.unknown if d.dialect == source
            and d.option == STDIN_OPTION[source] and d.value]
    if not kept:
        return None
    d = kept[-1]  # the last one wins, as each submit command reads them
    path = d.value or ""
    if "%" in path or "$" in path or (source == "sge" and ":" in path):
        return None
    warnings.append(f"kept: {d.raw.strip()} as {STDIN_OPTION[target]} {path} (the job's "
                    "standard input)")
    return path, d


# The job ids each scheduler's dependency option takes: another's (PBS's 123.server, Flux's
# f58 f2X4PLSfCDw) would be refused there, or read as a job name by LSF and Grid Engine.
_JOB_ID = {"slurm": r"[0-9]+(?:_[0-9]+)?", "lsf": r"[0-9]+(?:_[0-9]+)?", "sge": r"[0-9]+",
           "pbs": r"[0-9]+(?:\[[0-9]*\])?(?:\.[\w.-]+)?(?:@[\w.-]+)?"}
# The largest job id each scheduler gives (a number past it names none of its jobs): Slurm's
# are 32-bit (0xfffffffe and up mean "no value"), LSF's MAX_JOBID is at most 2147483646,
# PBS's max_job_sequence_id at most 999999999999, Grid Engine's are 32-bit.
MAX_JOB_ID = {"slurm": 0xFFFFFFFD, "lsf": 2147483646, "pbs": 999999999999,
              "sge": 0xFFFFFFFF}


def _dependency_id(jid: str, kind: str, target: str, warnings: list[str]) -> str | None:
    """`jid` as `target`'s dependency option takes it: as written where that is its own
    spelling; a Flux id in hex, dotted hex or F58 as its number where `target` takes
    numbers and has jobs of that number; else None, warned (dropped, with why)."""
    form = flux_id_form(jid)
    if target == "flux":
        if form is not None:
            return jid  # flux reads every spelling of its ids: kept as written
        warnings.append(f"dropped: dependency {kind}:{jid} (not a flux job id)")
        return None
    number = flux_id_value(jid) if form not in (None, "decimal") else None
    if number is None and re.fullmatch(r"[0-9]+_[0-9]+", jid) and target in ("pbs", "sge"):
        # one task of an array job (Slurm's 778812_3, LSF's 778812[3])
        warnings.append(f"dropped: dependency {kind}:{jid} (one task of an array job: "
                        f"{target} waits on whole jobs only)")
        return None
    if number is None and not re.fullmatch(_JOB_ID[target], jid):
        warnings.append(f"dropped: dependency {kind}:{jid} (not a {target} job id)")
        return None
    value = number if number is not None else int(re.match(r"[0-9]+", jid).group())
    if value > MAX_JOB_ID[target]:
        what = f"the Flux job id {jid} is {value}" if number is not None else \
            f"job id {value} is"
        warnings.append(f"dropped: dependency {kind}:{jid} ({what}, beyond {target}'s job "
                        f"ids (at most {MAX_JOB_ID[target]}): {target} cannot refer to that "
                        "job)")
        return None
    if number is not None:
        warnings.append(f"approximated: dependency {kind}:{jid} (a Flux job id) as "
                        f"{kind}:{number}, its decimal form")
        return str(number)
    return jid


def unusable_dependency(spec: JobSpec, target: str, site: str) -> str | None:
    """Why a dependency given in the ids of the scheduler the job goes to (its `scheduler`
    unset: an API caller's, a tool call's) names no job `target` can wait for, naming the
    field; None when every such id can be given. Rendered, such an id was dropped with a
    warning, and the job started at once instead of after the job meant."""
    for i, dep in enumerate(spec.dependencies):
        if dep.scheduler is not None:  # read from a script: translated, each drop said
            continue
        for k, jid in enumerate(dep.job_ids):
            said: list[str] = []
            if not jid or _dependency_id(jid, dep.kind, target, said) is not None:
                continue
            why = said[0].partition(" (")[2].removesuffix(")") if said else "not a job id"
            site_id = re.fullmatch(r"([^:\s]+):(\S+)", jid)
            hint = f"did you mean {site_id[2]}, {site_id[1]}'s own id? " if site_id else ""
            return (f"dependencies[{i}].job_ids[{k}] {jid!r} names no job {site} can wait "
                    f"for ({why}), so the job would start at once instead of after it; "
                    f"{hint}give the {target} job id of a job on {site} (e.g. 42 for "
                    f"{site}:42), or leave the dependency out")
    return None


# the option each scheduler's script names the jobs it waits for with
DEPENDENCY_OPTION = {"slurm": "--dependency", "pbs": "-W depend", "lsf": "-w",
                     "sge": "-hold_jid", "flux": "--dependency"}


def foreign_dependency_notes(deps: list[Dependency], target: str) -> list[str]:
    """One report line per dependency on jobs of another scheduler's site (read from a
    script written for it): its ids name no job of `target`, or another user's."""
    out = []
    for d in deps:
        if d.scheduler is None or d.scheduler == target:
            continue
        option = "-hold_jid_ad" if d.scheduler == "sge" and d.per_task else \
            DEPENDENCY_OPTION[d.scheduler]
        ids = ", ".join(d.job_ids)
        out.append(f"dropped: dependency {d.kind}:{':'.join(d.job_ids)} ({d.scheduler} "
                   f"{option}: job {ids} is a job of the {d.scheduler} site the script was "
                   f"written for; on {target} that id names no job, or another user's: give "
                   f"the {target} job's id, or translate with the ids taken as {target}'s)")
    return out


def dependencies_for(spec: JobSpec, target: str, warnings: list[str]) -> list[Dependency]:
    """The spec's dependencies on job ids `target` takes (a Flux id in another spelling as
    its number); each other id dropped, warned, and so is each dependency read from a
    script of another scheduler (its site's jobs). BadInput for a kind of dependency no
    dialect knows."""
    check_dependency_kinds(spec)
    foreign = foreign_dependency_notes(spec.dependencies, target)
    warnings += foreign
    own = [d for d in spec.dependencies if d.scheduler in (None, target)]
    if not own:
        return []
    if any_of_dependencies(spec) and target not in ANY_OF_DIALECTS:
        warnings.append(f"dropped: dependency {dependency_text(own, '?')} (any "
                        f"one of them suffices; {target} waits for all of a job's "
                        "dependencies and has no any-of)")
        return []
    out = []
    for d in own:
        ids = [x for i in d.job_ids if (x := _dependency_id(i, d.kind, target, warnings))]
        if ids:
            out.append(d.model_copy(update={"job_ids": ids}))
    return out


# the dialects that wait for any one of several dependencies (sbatch's `?`, bsub's `||`)
ANY_OF_DIALECTS = ("slurm", "lsf")


def any_of_dependencies(spec: JobSpec) -> bool:
    """Whether any one of the spec's several dependencies suffices (DEPENDENCY_ANY)."""
    return bool(spec.metadata.get(DEPENDENCY_ANY)) and \
        sum(len(d.job_ids) for d in spec.dependencies) > 1


def dependency_text(deps: list[Dependency], separator: str = ",") -> str:
    """Dependencies as Slurm writes them (`afterok:1:2`, `?` between any-of ones)."""
    return separator.join(f"{d.kind}:{':'.join(d.job_ids)}" for d in deps)


def whole_job_dependencies(deps: list[Dependency], target: str, warnings: list[str]
                           ) -> list[Dependency]:
    """`deps` for a scheduler without task-by-task dependencies: each task-by-task one as
    the same dependency on the whole job (every task then waits for the whole array:
    later than asked, never earlier), warned."""
    out = []
    for d in deps:
        if d.per_task:
            warnings.append(f"approximated: dependency {d.kind}:{':'.join(d.job_ids)} task by "
                            f"task as one on the whole job ({target} has no task-by-task "
                            "dependency; each task waits for the whole array)")
            d = d.model_copy(update={"per_task": False})
        out.append(d)
    return out


def queue_names(queue: str | None) -> list[str]:
    """The queues of the model's `queue`: a comma list (Slurm `-p a,b`, Grid Engine `-q a,b`,
    LSF `-q "a b"`) means any one of them."""
    return [q.strip() for q in (queue or "").split(",") if q.strip()]


def one_queue(spec: JobSpec, target: str, warnings: list[str]) -> str | None:
    """The queue for a scheduler that takes one: the first of a list, the others named in
    a warning (the list written whole was an unknown queue there)."""
    names = queue_names(spec.queue)
    if len(names) > 1:
        warnings.append(f"approximated: queue list {spec.queue} as the queue {names[0]} "
                        f"({target} takes one queue)")
    return names[0] if names else None


def job_name_warning(given: str, written: str, why: str) -> list[str]:
    """A note when the job name `given` is `written` otherwise, for reason `why`."""
    if written == given:
        return []
    return [f"approximated: job name {given!r} as {written!r} ({why})"]


def mail_warning(events: list[str], allowed: set[str], target: str) -> list[str]:
    extra = [e for e in events if e not in allowed]
    return [f"dropped: mail event {e} (no {target} equivalent)" for e in extra]


def plain_script(text: str) -> JobSpec:
    """A script without directives, run as is: its interpreter line, when it names one as a
    batch script's may (an absolute path, plain arguments), is the job's shell, so that a
    `#!/usr/bin/env python3` script is run by Python, not by the renderer's `#!/bin/bash`."""
    first, nl, rest = text.lstrip("\ufeff").partition("\n")
    shell = first[2:].strip() if first.startswith("#!") else ""
    if nl and _SHELL.fullmatch(shell):
        return JobSpec(script=rest, shell=shell)
    return JobSpec(script=text)


def begin_parse(text: str, sentinel: re.Pattern[str], dialect: str, late_note: str, *,
                flux_rules: bool = False) -> tuple[Header, JobSpec]:
    """The start every dialect's parse shares: split off the leading directive block,
    a JobSpec holding the body and shell, and a note per directive the scheduler ignores."""
    header = split_header(text, lambda s: (m.group(1) or "") if (m := sentinel.match(s))
                          else None, flux_rules=flux_rules)
    spec = JobSpec(script=header.body, source_dialect=dialect)
    if header.shebang:
        spec.shell = header.shebang
    for lineno, raw in header.late:
        note(spec, f"line {lineno}: ignored `{raw.strip()}` ({late_note})")
    return header, spec



def ends_in_backslash(payload: str) -> bool:
    """Whether a directive's text ends in a backslash that escapes nothing on its line (an
    odd run of them at the very end: `\\\\` is an escaped backslash)."""
    return (len(payload) - len(payload.rstrip("\\"))) % 2 == 1


def read_alone(text: str, directives: list[tuple[int, str, str]], spec: JobSpec, reader: str,
               sentinel: str) -> list[tuple[int, str, str]]:
    """`directives` as a submit command that reads each directive line alone (no
    continuation) takes them: a trailing backslash escapes nothing and is dropped; where
    the next line is no directive, what it holds is not read as options, which is said,
    naming both lines (before another directive line the backslash changes nothing)."""
    lines = text.lstrip("\ufeff").splitlines()
    given = {n for n, _, _ in directives}
    out = []
    for lineno, raw, payload in directives:
        if ends_in_backslash(payload):
            payload = payload[:-1]
            after = lines[lineno].strip() if lineno < len(lines) else None
            if lineno + 1 not in given:
                what = "it is the last line" if after is None else \
                    f"line {lineno + 1} is empty" if not after else \
                    f"line {lineno + 1} (`{after}`) is no {sentinel} line: its words are " \
                    "not read as options"
                note(spec, f"line {lineno}: `{raw.strip()}` ends in a backslash, but "
                           f"{reader} reads each {sentinel} line alone and {what}; the "
                           f"backslash is dropped (write each option on a {sentinel} line)")
        out.append((lineno, raw, payload))
    return out


# ---------------------------------------------------------------- jobs of several shapes

def resource_totals(r: Resources) -> dict[str, int | None]:
    """One shape's nodes, tasks, CPUs, GPUs and memory (MB) in all; None where it does not
    say (the scheduler's default applies)."""
    nodes = r.nodes
    if nodes is None and r.tasks and r.tasks_per_node:  # e.g. LSF -n 8 span[ptile=4]
        nodes = -(-r.tasks // r.tasks_per_node)
    tasks = r.tasks or ((nodes or 1) * r.tasks_per_node if r.tasks_per_node else None)
    # no task count: one task per node (sbatch's default with --nodes, flux's slot per node)
    implied = tasks or nodes or 1
    cpus = implied * r.cpus_per_task if r.cpus_per_task else tasks
    gpus = None
    if r.gpus_per_node is not None:
        gpus = r.gpus_per_node * (nodes or 1)
    elif r.gpus_per_task is not None:
        gpus = r.gpus_per_task * implied  # each of those tasks has its GPUs
    mem = None
    if r.memory_mb:
        mem = r.memory_mb * (nodes or 1)
    elif r.memory_per_cpu_mb:
        mem = r.memory_per_cpu_mb * (cpus or implied)  # each of those tasks' CPUs
    return {"nodes": nodes, "tasks": tasks, "cpus": cpus, "gpus": gpus, "memory_mb": mem}


def summed_totals(components: list[Resources]) -> dict[str, int | None]:
    """A job of several shapes in all: each quantity summed over the components that say
    it; a component silent on its tasks (CPUs) counts one task (CPU) per node."""
    each = [resource_totals(c) for c in components]
    # a component without a node count: as many nodes as the scheduler picks
    out: dict[str, int | None] = {"nodes": None if any(t["nodes"] is None for t in each)
                                  else sum(t["nodes"] for t in each)}
    for q in ("tasks", "cpus"):
        out[q] = sum(t[q] or t["nodes"] or 1 for t in each) \
            if any(t[q] is not None for t in each) else None
    for q in ("gpus", "memory_mb"):
        said = [t[q] for t in each if t[q] is not None]
        out[q] = sum(said) if said else None
    return out


def _per_node(c: Resources) -> tuple[int, int, int, int | None, int | None]:
    """A component's (nodes, tasks per node, CPUs per node, GPUs per node, memory per
    node) with what it leaves out as the scheduler's one task of one CPU per node."""
    t = resource_totals(c)
    nodes = t["nodes"] or 1
    tpn = c.tasks_per_node or -(-(t["tasks"] or nodes) // nodes)
    cpn = tpn * (c.cpus_per_task or 1)
    gpn = c.gpus_per_node if c.gpus_per_node is not None else \
        (c.gpus_per_task * tpn if c.gpus_per_task else None)
    mpn = c.memory_mb or (c.memory_per_cpu_mb * cpn if c.memory_per_cpu_mb else None)
    return nodes, tpn, cpn, gpn, mpn


def superset_shape(components: list[Resources]) -> dict[str, int | None]:
    """One shape no component outgrows: every component's nodes, each holding the largest
    component's tasks, CPUs, GPUs and memory per node (what each node must offer)."""
    shapes = [_per_node(c) for c in components]
    tpn = max(s[1] for s in shapes)
    cpn = max(s[2] for s in shapes)
    gpus = [s[3] for s in shapes if s[3] is not None]
    mems = [s[4] for s in shapes if s[4] is not None]
    return {"nodes": sum(s[0] for s in shapes), "tasks": None, "tasks_per_node": tpn,
            "cpus_per_task": -(-cpn // tpn), "gpus_per_node": max(gpus) if gpus else None,
            "gpus_per_task": None, "memory_mb": max(mems) if mems else None,
            "memory_per_cpu_mb": None}


def component_sizes(c: Resources) -> dict[str, int | None]:
    """A component's sizes (what sbatch resets in each hetjob component, a PBS chunk's)."""
    return {k: getattr(c, k) for k in ("nodes", "tasks", "tasks_per_node", "cpus_per_task",
                                       "gpus_per_node", "gpus_per_task", "memory_mb",
                                       "memory_per_cpu_mb")}


def set_components(spec: JobSpec, components: list[Resources]) -> None:
    """Give `spec` its components, and its resources the shape none of them outgrows (the
    other settings, walltime and bindings, stay)."""
    spec.components = [c.model_copy() for c in components]
    for k, v in superset_shape(components).items():
        setattr(spec.resources, k, v)


def sizes_off_components(spec: JobSpec) -> dict[str, int]:
    """The sizes `spec.resources` gives that differ from the shape its components make
    (all of them given, none: {}); a job with such a size is that one shape."""
    made = superset_shape(spec.components)
    return {k: v for k, v in component_sizes(spec.resources).items()
            if v is not None and v != made[k]}


def refuse_sizes_beside_components(spec: JobSpec, said_as: str = "spec") -> None:
    """BadInput when a spec given whole (an API caller's) has `components` and a size in
    its `resources` other than the shape they make: that size would make the job one shape
    and its components be dropped. A size equal to theirs (a spec sent back as shown) and
    the job's other settings (walltime, bindings) are taken; `said_as` names the spec."""
    if not spec.components or not (clash := sizes_off_components(spec)):
        return
    made = superset_shape(spec.components)
    given = ", ".join(f"{said_as}.resources.{k}={v}" for k, v in clash.items())
    theirs = ", ".join(f"{k}={made[k] if made[k] is not None else 'unset'}" for k in clash)
    raise BadInput(
        f"{given} given beside {said_as}.components: a job of components takes its sizes "
        f"from them (they make {theirs}), and a size of its own would run it as one shape, "
        f"its components dropped; give the sizes in {said_as}.components alone (each its "
        f"nodes, tasks, CPUs, GPUs and memory; {said_as}.resources may still give the "
        f"walltime and bindings), or a size in {said_as}.resources alone without components")


def live_components(spec: JobSpec) -> list[Resources]:
    """The spec's components while its resources are still the shape made from them (a
    changed request, e.g. a face's --memory, is then the job's one shape)."""
    if len(spec.components) < 2:
        return []
    r = spec.resources
    want = superset_shape(spec.components)
    return spec.components if all(getattr(r, k) == v for k, v in want.items()) else []


def describe_totals(t: dict[str, int | None]) -> str:
    """'5 nodes, 129 tasks, 136 CPUs, 4 GPUs, 65536MB' (what is said only)."""
    parts = [f"{t[q]} {w if t[q] != 1 else w.rstrip('s')}" for q, w in
             (("nodes", "nodes"), ("tasks", "tasks"), ("cpus", "CPUs"), ("gpus", "GPUs"))
             if t[q] is not None]
    if t["memory_mb"] is not None:
        parts.append(f"{t['memory_mb']}MB of memory")
    return ", ".join(parts)


# metadata: each later Slurm hetjob component's own --nodelist (None: it names none), in
# order
COMPONENT_NODELISTS = "slurm_component_nodelists"


def one_shape(spec: JobSpec, target: str, warnings: list[str]) -> JobSpec:
    """A job of several shapes for a scheduler that asks for one: its nodes and tasks as
    they are, each node's CPUs, GPUs and memory the job's totals spread evenly (rounded
    down: never more than the job asked), said in one warning. Else `spec` itself."""
    comps = live_components(spec)
    if not comps:
        return spec
    t = summed_totals(comps)
    nodes, tasks = t["nodes"], t["tasks"] or t["nodes"] or len(comps)
    cpt = max(1, (t["cpus"] or tasks) // tasks) if t["cpus"] else None
    flat = spec.resources.model_copy(update=dict(
        nodes=nodes, tasks=tasks, tasks_per_node=None, cpus_per_task=cpt,
        gpus_per_node=(t["gpus"] // nodes or None) if t["gpus"] and nodes else None,
        gpus_per_task=(t["gpus"] // tasks or None) if t["gpus"] and not nodes else None,
        memory_mb=None,  # per CPU: every scheduler's per-slot memory says it
        memory_per_cpu_mb=(t["memory_mb"] // (tasks * (cpt or 1)) or None)
        if t["memory_mb"] else None))
    # a later Slurm hetjob component's own --nodelist has no place in one shape: said
    own_hosts = spec.metadata.get(COMPONENT_NODELISTS) or []
    metadata = {k: v for k, v in spec.metadata.items() if k != COMPONENT_NODELISTS}
    out = spec.model_copy(update={"resources": flat, "components": [], "metadata": metadata})
    warnings += [f"dropped: --nodelist={hosts} of hetjob component {i} ({target} is asked "
                 "for one shape here: no hosts of one component)"
                 for i, hosts in enumerate(own_hosts, start=1) if hosts]
    got = resource_totals(flat)
    lost = [f"{w} {t[q]} -> {got[q] or 0}" for q, w in
            (("cpus", "CPUs"), ("gpus", "GPUs"), ("memory_mb", "memory MB")) if t[q] != got[q]]
    shapes = " + ".join(describe_totals(resource_totals(c)) for c in comps)
    on = (f"{quantity(nodes, 'node')} and {quantity(tasks, 'task')}" if nodes
          else quantity(tasks, "task"))
    warnings.append(f"approximated: a job of {len(comps)} shapes ({shapes}) as one shape of "
                    f"{on} ({target} is asked for one shape here"
                    + (f"; spread evenly and rounded down: {', '.join(lost)}" if lost else "")
                    + ")")
    return out


def carried_task_range(spec: JobSpec, tasks: int, source: str, option: str, said_as: str,
                       warnings: list[str]) -> list[int] | None:
    """The range of task counts another scheduler's script asked (TASK_RANGE: LSF `-n
    MIN,MAX`, a Grid Engine MPI PE's `MIN-MAX`), while its minimum is still the task count
    and each task one CPU: said with the directive it carries (`said_as` formats MIN, MAX);
    None otherwise (the minimum alone is rendered, the directive named as dropped)."""
    rng = spec.metadata.get(TASK_RANGE)
    if spec.source_dialect != source or not isinstance(rng, list) or len(rng) != 2 \
            or rng[0] != tasks or (spec.resources.cpus_per_task or 1) != 1:
        return None
    kept = next((d for d in spec.unknown if d.dialect == source and d.option == option), None)
    if kept is None:
        return None
    warnings.append(f"approximated: {kept.raw.strip()} as {said_as.format(*rng)} (the same "
                    "range of task counts; the scheduler spreads them by its own rules)")
    return rng


_SLURM_TIME = re.compile(
    r"^(?:([0-9]+)-([0-9]+)(?::([0-9]+)(?::([0-9]+))?)?|([0-9]+)(?::([0-9]+)(?::([0-9]+))?)?)$",
    re.ASCII,  # digits 0-9 only, as sbatch reads them (not `９０`)
)


def parse_slurm_time(text: str) -> int | None:
    """Every sbatch --time form: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S -> seconds."""
    m = _SLURM_TIME.match(text.strip())
    if not m:
        return None
    d, dh, dm, ds, a, b, c = (int(g) if g else None for g in m.groups())
    if d is not None:
        return d * 86400 + (dh or 0) * 3600 + (dm or 0) * 60 + (ds or 0)
    if c is not None:  # H:M:S
        return (a or 0) * 3600 + (b or 0) * 60 + c
    if b is not None:  # M:S
        return (a or 0) * 60 + b
    return (a or 0) * 60
