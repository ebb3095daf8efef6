"""A workflow: a DAG of job steps with data edges, read from YAML (or built in Python).

Validation is pure (no site is contacted) and every problem is a BadInput naming it: a cycle
(with its steps), a step that needs an unknown one, an input from a step that is not
upstream, an input naming its upstream's declared directory as a file (or a file as a
directory), a site that is not configured, an unknown field, a bad path, a gang whose members
depend on each other, a step script that does not parse, a name YAML read as a number, a
list given as one value, a misspelt key or another tool's (named with the key meant), a
script holding another tool's placeholder (`{{ params.n }}`, a Jinja template's
`#PBS -N {{job_name}}`: never filled here); in
the file itself, a key given twice, a second document, text that is not UTF-8, nesting too
deep, a file too large, a quote, `{` or `[` never closed (the line it opened on), a value
holding ': ' unquoted. A file's problems give the line of the field (`_line_note`).
Every graph query (step, order, upstream, downstream) is linear in the workflow's size.
"""

from __future__ import annotations

import os
import posixpath
import re
import reprlib
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..model import MAX_COUNT, BadInput, JobSpec, JobState, check_text, copied
from ..script_body import runs_commands
from ..strict_yaml import (
    NumberNotAsWritten,
    alias_hint,
    boolean_word,
    odd_blank_hint,
    strict_read,
    tab_hint,
)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_SAFE_PATH = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./-]{0,200}")  # shown back in a hint
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?(?:e\+?[0-9]+)?)\s*([kmgt]?)i?b?", re.I)  # 1e9 too
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
FAILURE_POLICIES = ("resubmit-elsewhere", "stop")
_DIALECTS = ("slurm", "pbs", "lsf", "flux", "sge")  # a step's `dialect:`
MAX_RETRIES = 10
MAX_WORKFLOW_BYTES = 1 << 20  # a workflow file (or YAML text); REST bodies have the same bound
MAX_STEPS = 2000
# how an item that is not a step is shown in an error: a few levels and items of it
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxstring, _SHOWN.maxother = 2, 4, 60, 60
MAX_DEPTH = 64  # nesting of YAML collections (a workflow needs 5)
_GLOB = re.compile(r"[*?\[]")
# a template's `{{ name }}` or `{% tag %}` in a Slurm, PBS, LSF or Grid Engine directive (a
# Jinja batch template, `#PBS -N {{job_name}}`, given unrendered), where no braces belong
# (Flux's own `--output=o.{{id}}.log` templates are its scheduler's to fill)
_DIRECTIVE_TEMPLATE = re.compile(r"(?m)^[ \t]*#(?:SBATCH|PBS|BSUB|\$)[^\n]*?"
                                 r"(\{\{[^}\n]*\}\}|\{%[^%\n]*%\})")
PLACEHOLDER_ERROR = "workflow_placeholder"  # the kind of its validation error
# a placeholder another workflow tool fills in (`{{ params.n }}`, `${{ inputs.mesh }}`,
# `{{ matrix.size }}`): never filled here. Go templates' `{{.Id}}` (docker --format) start
# with a dot and are not one.
_PLACEHOLDER = re.compile(r"\$?\{\{-?\s*(?:params|parameters|inputs|input|env|vars|matrix|"
                          r"steps|workflow|secrets|outputs|var|item)(?:\.[A-Za-z0-9_-]+|"
                          r"\[[^]\n]*\])*\s*-?\}\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _closest_step(name: str, names: list[str]) -> str | None:
    """The step an unknown name was probably meant for: the same in another case, the one
    step it begins or ends (`prep` for `prepare`), else a near spelling (`s25O`)."""
    import difflib
    import unicodedata

    # blanks around it, full-width letters (`ｐｒｅｐ` from an input method) as they read
    fold = unicodedata.normalize("NFKC", name).strip().casefold()
    same = [n for n in names if n.casefold() == fold]
    part = [n for n in names if len(fold) >= 3 and (n.casefold().startswith(fold) or
                                                    fold.startswith(n.casefold()))]
    # a letter wrong, missing, added or two swapped, when only one step is that close
    slip = [n for n in names if len(fold) >= 3 and _one_slip(fold, n.casefold())]
    if len(slip) > 1:  # `s9` among s0..s4: which one is not known
        return same[0] if same else None
    near = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return (same or (part if len(part) == 1 else []) or slip or near or [None])[0]


def _look_alikes(name: str) -> str:
    """`in it 'е' is U+0435 CYRILLIC SMALL LETTER IE: not ASCII; ` for a name holding
    letters that may look like ASCII ones (pasted, or planted to pass for another step's
    name); "" for an ASCII name."""
    import unicodedata

    odd = list(dict.fromkeys(c for c in name if not c.isascii()))
    if not odd or unicodedata.normalize("NFKC", name).isascii():
        return ""  # ASCII, or full-width letters (an input method's), read as what they are
    said = ", ".join(f"{c!r} is U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}"
                     for c in odd[:3])
    return f"in it {said}: not ASCII, as step names are; "


# Slurm's, PBS's and LSF's words for a dependency's kind, written beside a step's name
_DEPENDENCY_KINDS = {"after", "afterok", "afterany", "afternotok", "aftercorr", "afterburstbuffer",
                     "singleton", "beforeok", "beforeany", "beforenotok", "done", "ended",
                     "exit", "started", "ok", "any", "notok", "success", "failure", "failed"}


def _need_not_a_name(need: str, known: set[str]) -> str | None:
    """Why an entry of `needs` that names no step is no step's name at all: empty, or a
    step's name with a dependency's kind (`afterany:prep`, `prep:afterok`, `done(prep)`);
    None for a name merely unknown (the step meant is looked for then)."""
    if not need.strip():
        return "is empty: write the name of a step there, or remove it"
    words = [w for w in re.split(r"[:()\s]+", need) if w]
    kinds = [w for w in words if w.casefold() in _DEPENDENCY_KINDS]
    steps = [w for w in words if w in known]
    if kinds and steps and len(kinds) + len(steps) == len(words):
        return (f"{need!r} is step {steps[0]!r} with a dependency's kind ({kinds[0]!r}), "
                "which is not read: a step starts once every step it needs has COMPLETED; "
                f"write needs: [{steps[0]}] (a step whose failure may be ignored has its "
                "script exit 0)")
    return None


def _one_slip(a: str, b: str) -> bool:
    """Whether `a` is `b` with one character changed, missing, added, or two swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and
                                  a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1:]


# a whole path part that is a shell variable (`$SCRATCH/out.h5`, `${RUN}/x`): never expanded
_VARIABLE_PART = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
# inside a name: `${NAME}` or a scheduler's job variable (`out-$SLURM_JOB_ID.txt`), which
# only a shell expands; a `$` alone may be part of a name (`$HOME.txt` is kept)
_EXPANDED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$(?:(?:SLURM|PBS|LSB|LSF|FLUX|SGE)_"
                       r"[A-Za-z0-9_]+|JOB_ID|JOB_NAME|TASK_ID)(?![A-Za-z0-9_])")
_BRACE = re.compile(r"\{[^{}]*\}")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_HOST_PATH = re.compile(r"[A-Za-z0-9_.@-]+:/")


def _relative_path(value: str, what: str) -> str:
    """A path inside a step's working directory: relative, no '..', not an option, not a
    glob (copied by its exact name). ValueError, so that pydantic says where it is."""
    try:
        check_text(what, value)
    except BadInput as e:
        raise ValueError(str(e)) from None
    if not value.strip():
        raise ValueError(f"{what} is empty")
    if _URL.match(value):  # Nextflow's and Snakemake's remote files
        raise ValueError(f"{what} {value!r} is a URL, but a path names a file in the step's "
                         "working directory (an input: one its upstream step wrote, copied "
                         "there); move remote data in the step's script (curl, aws s3 cp, "
                         "globus transfer...)")
    if _HOST_PATH.match(value):  # `alpha:/scratch/x.h5`, as scp and `diamond transfer` write
        raise ValueError(f"{what} {value!r} names a file on a host (HOST:/PATH), but a path "
                         "is relative to the step's working directory (an input comes from "
                         "the step named by `from`); copy other files with `diamond transfer` "
                         "or in the step's script")
    if "\\" in value:  # a path from Windows: `results\x.h5`, `C:\data\x.h5`
        slashed = value.replace("\\", "/")
        fix = "a path relative to the step's working directory" if \
            re.match(r"[A-Za-z]:/", slashed) else repr(slashed)
        raise ValueError(f"{what} {value!r} has a backslash, which is part of a file's name "
                         f"on the sites (they separate directories with /): write {fix}")
    if value.startswith(("/", "~", "-")):
        raise ValueError(f"{what} {value!r} must be relative to the step's working directory "
                         "(no leading /, ~ or -)")
    if ".." in posixpath.normpath(value).split("/") or posixpath.normpath(value) == ".":
        raise ValueError(f"{what} {value!r} must name a file inside the step's working "
                         "directory (no '..')")
    parts = value.split("/")
    var = next((p for p in parts if _VARIABLE_PART.fullmatch(p)), None)
    if var is not None:
        rest = "/".join(p for p in parts if p and p != var and p != ".") or "out.bin"
        raise ValueError(f"{what} {value!r}: {var} is an environment variable, but a path is "
                         "never expanded (a file is copied by its exact name, inside the "
                         "step's working directory); write the path inside that directory, "
                         f"e.g. {rest}")
    inner = _EXPANDED.search(value)
    if inner is not None:  # `out-$SLURM_JOB_ID.txt`: a name known only when the job runs
        raise ValueError(f"{what} {value!r}: {inner.group()} is an environment variable, but "
                         "a path is never expanded (a file is copied by its exact name); "
                         "have the script write the file under a fixed name, e.g. "
                         f"{_VARIABLE_PART.sub('run', value)}")
    brace = _BRACE.search(value)
    if brace is not None:  # Snakemake's `{sample}`, the shell's `{1,2}`
        raise ValueError(f"{what} {value!r} has {brace.group()!r}, a wildcard (Snakemake's "
                         "{name}) or a brace expansion, which is never expanded: files are "
                         "copied by their exact names, so name each file")
    glob = _GLOB.search(value)
    if glob:
        raise ValueError(f"{what} {value!r} has the glob character {glob.group()!r}; files are "
                         "copied by their exact names, so name each file")
    return value


def _not_text(v: Any) -> None:
    """A name YAML read as a number or a truth value (`name: 1`, `needs: [2]`, `gang: yes`):
    refused with the way to write it, since YAML changes some on the way (`010` is 8)."""
    if v is None:  # `name:`, `name: ~`, `name: null`
        raise ValueError("is empty (YAML reads nothing, ~ and null as no value): write a name "
                         "of letters, digits, _ . -, e.g. prep")
    if isinstance(v, bool):
        raise ValueError(f"{v!r} is not text (YAML reads unquoted yes, no, on, off, "
                         "true and false as truth values); quote it as written, e.g. 'yes'")
    if isinstance(v, (int, float)):
        raise ValueError(f"{v!r} is a number, not text (YAML reads unquoted digits as "
                         f"numbers); quote it as written, e.g. '{v}'")
    import datetime

    if isinstance(v, datetime.date):  # `name: 2024-01-01`, a run named by its day
        shown = v.isoformat(sep=" ") if isinstance(v, datetime.datetime) else v.isoformat()
        raise ValueError(f"{shown} is read by YAML as a date, not text; quote it as "
                         f"written, e.g. '{shown}'")


def _bad_name(v: str) -> str:
    """Why `v` is not a name, and what one is (a long one is not shown whole)."""
    shown = repr(v) if len(v) <= 70 else f"{v[:40]!r}... ({len(v)} characters)"
    why = ""
    if len(v) > 63:
        why = f"; it has {len(v)} characters"
    elif (odd := next((c for c in v if not (c.isascii() and (c.isalnum() or c in "_.-"))),
                      None)) is not None:
        why = f"; {odd!r} is not one of them" + (" (use - or _ for a blank)"
                                                 if odd.isspace() else "")
    return (f"{shown} is not a valid name (letters, digits, _ . -, ASCII only, starting with "
            f"a letter or digit, at most 63 characters{why})")


def _unordered(v: Any, field: str) -> None:
    """A YAML set (`!!set {a, b}`) where a list goes: its order changes from one run to the
    next (and with it the workflow's sha256, which an approval pins), so it is refused."""
    if isinstance(v, (set, frozenset)):
        items = sorted(str(x) for x in v)
        shown = ", ".join(items) if all(_NAME.fullmatch(x) or _SAFE_PATH.fullmatch(x)
                                        for x in items) else "..."
        raise ValueError(f"{field} is a YAML set (!!set), which keeps no order: write a "
                         f"list, {field}: [{shown}]")


def _list_of(v: Any, field: str, example: str) -> Any:
    """A list field given one value (`needs: prep`) or nothing (`needs:`), or with an empty
    item (a `-` alone on its line): refused, saying how to write the list."""
    _unordered(v, field)
    if isinstance(v, list) and None in v:
        i = v.index(None)
        raise ValueError(f"{field}[{i}] is empty (a `-` with nothing after it): write "
                         f"{'the name of a step' if field == 'needs' else 'a path'} there, "
                         "or remove the line")
    if isinstance(v, str):
        parts = [p for p in re.split(r"[,\s]+", v.strip()) if p]  # `needs: a, b`: [a, b]
        if parts and all(_NAME.fullmatch(p) or _SAFE_PATH.fullmatch(p) for p in parts):
            one = ", ".join(parts)
        else:
            one = example
        raise ValueError(f"{field} is a list: write {field}: [{one}], not {v!r}")
    if v is None:
        raise ValueError(f"{field} is a list, e.g. {field}: [{example}]; leave the key out "
                         "for none")
    if isinstance(v, dict):  # `needs: {prep: done}` or `needs:` then `prep:` lines
        keys = [str(k) for k in v]
        one = ", ".join(keys) if keys and all(_NAME.fullmatch(k) or _SAFE_PATH.fullmatch(k)
                                              for k in keys) else example
        raise ValueError(f"{field} is a list: write {field}: [{one}], not a mapping")
    return v


def _whole_bytes(written: Any, size: float) -> int:
    """An input's size as a whole number of bytes from 0 to MAX_COUNT; else what to write."""
    if not (0 <= size <= MAX_COUNT and size == int(size)):
        raise ValueError(f"size {written!r} is not a number of bytes: a whole number from 0 "
                         f"to {MAX_COUNT} (e.g. 1048576, 100M, 2G)")
    return int(size)


class StepInput(_Strict):
    """A file another step wrote, copied into this step's working directory first."""

    from_: str = Field(alias="from")  # the upstream step
    path: str  # relative to that step's working directory
    as_: str | None = Field(default=None, alias="as")  # name here (default: the same path)
    size: int | None = Field(default=None, ge=0, le=MAX_COUNT)  # expected bytes (placement
    # counts its transfer time)

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, v: Any) -> Any:
        """`inputs: [prep:out.bin]` or `inputs: [out.bin]`: say how an input is written."""
        if isinstance(v, dict) and "size" in v and any(
                isinstance(k, int) and not isinstance(k, bool) and x is None
                for k, x in v.items()):  # `{from: a, path: x, size: 1,500}`
            raise ValueError("size: a number written with commas inside `{...}` is read by "
                             "YAML as several entries (each comma ends one, and the digits "
                             "after it become keys); write it without commas, e.g. size: "
                             "1500000 or size: 1.5M")
        if isinstance(v, (dict, StepInput)):
            return v
        up, sep, path = str(v).partition(":") if isinstance(v, str) else ("", "", "")
        if sep and _NAME.fullmatch(up.strip()) and _SAFE_PATH.fullmatch(path.strip()):
            hint = f"{{from: {up.strip()}, path: {path.strip()}}}"
        else:
            hint = "{from: STEP, path: FILE}"
        raise ValueError(f"an input is a mapping, e.g. {hint}, not {v!r}")

    @field_validator("from_", mode="before")
    @classmethod
    def _from_text(cls, v: Any) -> Any:
        _not_text(v)
        return v

    @field_validator("path", "as_")
    @classmethod
    def _path(cls, v: str | None) -> str | None:
        return None if v is None else _relative_path(v, "path")

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: Any) -> Any:
        """Bytes as a number or with a unit: 100M, 2.5 GB, 512k, 1e9 (YAML reads it as
        text)."""
        if isinstance(v, bool):
            raise ValueError(f"size {v!r} is not a number of bytes (e.g. 1048576, 100M, 2G)")
        if isinstance(v, str):
            m = _SIZE.fullmatch(v.strip())
            if m is None and re.fullmatch(r"[0-9]{1,3}(?:,[0-9]{3})+", v.strip()):
                raise ValueError(f"size {v!r} is written with commas: write the number "
                                 f"without them, size: {v.strip().replace(',', '')}")
            if m is None:
                raise ValueError(f"size {v!r} is not a number of bytes (e.g. 1048576, 100M, "
                                 "2G)")
            from ..dialects.outputs_common import finite_int

            size = finite_int(m.group(1), _UNITS[m.group(2).lower()])
            if size is None:  # 400 digits: no number of bytes
                raise ValueError(f"size {v!r} is not a number of bytes (e.g. 1048576, "
                                 "100M, 2G)")
            return _whole_bytes(v, size)
        if isinstance(v, (int, float)):
            return _whole_bytes(v, v)
        return v

    @property
    def dest(self) -> str:
        """Its name here: `as`, else its path; `as: data/` for a file is data/FILE (the
        same on this site and across sites)."""
        if self.as_ and self.as_.endswith("/") and not self.is_dir:
            return self.as_ + posixpath.basename(self.path)
        return self.as_ or self.path

    @property
    def is_dir(self) -> bool:
        """A directory, copied with everything in it: its path ends with /."""
        return self.path.endswith("/")


class Step(_Strict):
    name: str
    script: str  # a batch script in any dialect, or a plain script
    # a site's name; "auto" (placement chooses among all sites); or a list of sites
    # (placement chooses among these only, as do its moves and resubmit-elsewhere)
    site: str | list[str] = "auto"
    needs: list[str] = Field(default_factory=list)
    inputs: list[StepInput] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    gang: str | None = None
    retries: int = Field(default=0, ge=0, le=MAX_RETRIES)
    on_failure: Literal["resubmit-elsewhere", "stop"] = "stop"
    dialect: str | None = None  # the script's dialect (default: detected)

    @field_validator("name", "gang", mode="before")
    @classmethod
    def _name_text(cls, v: Any, info: ValidationInfo) -> Any:
        if v is not None or info.field_name == "name":  # `gang: ~`: in no gang
            _not_text(v)
        return v

    @field_validator("site", mode="before")
    @classmethod
    def _one_site(cls, v: Any) -> Any:
        """`site:` (null) or a mapping: say what a site is; a list of sites: not empty, each
        a name given once (`auto` is not one)."""
        if isinstance(v, tuple):
            v = list(v)
        _unordered(v, "site")
        if isinstance(v, dict) or v is None:
            raise ValueError(f"site is one site's name, a list of sites ([alpha, beta]: "
                             f"placement chooses among them), or auto (placement chooses "
                             f"among all sites), not {_SHOWN.repr(v)}")
        if not isinstance(v, list):
            _not_text(v)
            if isinstance(v, str) and not v.strip():
                raise ValueError("site is empty: name a site, a list of sites ([alpha, beta]), "
                                 "or write auto (placement chooses among all sites)")
            return v
        if not v:
            raise ValueError("site: [] lists no site: name at least one ([alpha, beta]), or "
                             "write auto (placement chooses among all sites)")
        seen: set[str] = set()
        for i, item in enumerate(v):
            if item is None:
                raise ValueError(f"site[{i}] is empty: a list of sites holds site names "
                                 "([alpha, beta])")
            _not_text(item)
            if not isinstance(item, str):
                raise ValueError(f"site[{i}] is {_SHOWN.repr(item)}: a list of sites holds "
                                 "site names ([alpha, beta])")
            if not item.strip():
                raise ValueError(f"site[{i}] is empty: a list of sites holds site names "
                                 "([alpha, beta])")
            if item == "auto":
                raise ValueError("auto in a list of sites: write site: auto alone (every "
                                 "site), or list only the sites placement may choose")
            if item in seen:
                raise ValueError(f"site lists {item!r} twice: name each site once")
            seen.add(item)
        return v

    @property
    def is_auto(self) -> bool:
        """Whether placement chooses the step's site (`auto`, or a list of sites)."""
        return self.site == "auto" or isinstance(self.site, list)

    @property
    def among(self) -> list[str] | None:
        """The sites a step given a list of sites may run on (None: not limited so)."""
        return list(self.site) if isinstance(self.site, list) else None

    @field_validator("needs", mode="before")
    @classmethod
    def _needs(cls, v: Any) -> Any:
        v = _list_of(v, "needs", "prep")
        if isinstance(v, list):
            for n in v:
                _not_text(n)
                if isinstance(n, dict) and isinstance(n.get("name"), str) and \
                        ("script" in n or "script_file" in n):  # `needs: [*prep]`
                    raise ValueError(f"needs lists the steps' names, not a step's whole "
                                     f"mapping (an alias of step {n['name'][:63]!r}'s anchor): "
                                     f"write needs: [{n['name'][:63]}]")
                if isinstance(n, (dict, list)):
                    # `- {step: a, status: afterany}`, `- {job: a, condition: done}`
                    # bounded (aliases can nest a billion items); as written when it is
                    # short (reprlib sorts a mapping's keys)
                    shown = _SHOWN.repr(n)
                    shown = repr(n) if "..." not in shown else shown
                    raise ValueError(f"needs lists the steps' names (needs: [prep, fit]), not "
                                     f"{shown}: a dependency's kind is not read (a step "
                                     "starts once every step it needs has COMPLETED)")
        return v

    @field_validator("outputs", mode="before")
    @classmethod
    def _outputs_list(cls, v: Any) -> Any:
        return _list_of(v, "outputs", "out.bin")

    @field_validator("name", "gang")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is not None and not _NAME.fullmatch(v):
            raise ValueError(_bad_name(v))
        return v

    @field_validator("dialect", mode="before")
    @classmethod
    def _dialect_name(cls, v: Any) -> Any:
        """`dialect: PBSPro`, `torque`, `Grid Engine`, `SLURM`: the scheduler's dialect, as the
        sites file's `scheduler:` reads them (they were refused as unknown dialects)."""
        if not isinstance(v, str):
            return v
        from ..config import _scheduler_name

        name = _scheduler_name(v)
        if name not in _DIALECTS:
            import difflib

            near = difflib.get_close_matches(name, _DIALECTS, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ValueError(f"unknown dialect {v!r} (accepted: {', '.join(_DIALECTS)}, or "
                             f"the names centers use: PBSPro, OpenPBS, torque, Grid Engine, "
                             f"UGE...){hint}")
        return name

    @field_validator("on_failure", mode="before")
    @classmethod
    def _policy(cls, v: Any) -> Any:
        """`resubmit_elsewhere`, `Stop`, `retry`: refused naming the policy meant."""
        if isinstance(v, bool):
            raise ValueError(f"Input should be 'resubmit-elsewhere' or 'stop', not {v!r} (YAML "
                             "reads an unquoted no/off/yes/on as a truth value)")
        if v is None:
            raise ValueError("Input should be 'resubmit-elsewhere' or 'stop', not empty "
                             "(leave the key out for the default, stop)")
        if not isinstance(v, str):
            raise ValueError(f"Input should be 'resubmit-elsewhere' or 'stop', one of them, "
                             f"not {_SHOWN.repr(v)}")
        folded = v.strip().lower().replace("_", "-").replace(" ", "-")
        if folded in ("retry", "retries", "resubmit", "rerun", "restart", "requeue"):
            # Nextflow's errorStrategy 'retry', Airflow's and Parsl's retries
            raise ValueError(f"Input should be 'resubmit-elsewhere' or 'stop', not {v!r}: "
                             "retries: N says how many times a failed step is resubmitted, "
                             "and on_failure where: stop (the same site) or "
                             "resubmit-elsewhere (a site not tried yet)")
        if folded in ("ignore", "continue", "skip", "finish", "ignore-errors", "allow-failure",
                      "continue-on-error"):
            raise ValueError(f"Input should be 'resubmit-elsewhere' or 'stop', not {v!r}: a "
                             "step still failing after its retries stops the workflow (the "
                             "other steps are cancelled), there is no going on past it; where "
                             "a failure may be ignored, have the script exit 0")
        if v not in FAILURE_POLICIES:
            import difflib

            near = [p for p in FAILURE_POLICIES if p == folded] or difflib.get_close_matches(
                folded, FAILURE_POLICIES, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ValueError(f"Input should be 'resubmit-elsewhere' or 'stop', not {v!r}{hint}")
        return v

    @field_validator("retries", mode="before")
    @classmethod
    def _retries(cls, v: Any) -> Any:
        """A whole number as written: not "3", not true, not 2.0 (each a likely slip)."""
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_RETRIES:
            raise ValueError(f"retries must be a whole number from 0 to {MAX_RETRIES}, not "
                             f"{_SHOWN.repr(v)}")
        return v

    @field_validator("outputs")
    @classmethod
    def _outputs(cls, v: list[str]) -> list[str]:
        """Each a relative path, listed once: `[o, ./o]` or `[o, o/]` (a file and a directory
        of one name) were both kept and checked, the second saying nothing new or the
        opposite of the first."""
        paths = [_relative_path(p, "output") for p in v]
        first: dict[str, int] = {}
        for i, path in enumerate(paths):
            j = first.setdefault(posixpath.normpath(path), i)
            if j == i:
                continue
            if paths[j].endswith("/") != path.endswith("/"):
                raise ValueError(f"outputs[{j}] {paths[j]!r} and outputs[{i}] {path!r} are one "
                                 "path, once a file and once a directory; list it once, with "
                                 "a trailing / if it is a directory")
            raise ValueError(f"outputs[{i}] {path!r} is outputs[{j}] {paths[j]!r} again (one "
                             "path); list each output once")
        return paths

    @field_validator("script", mode="before")
    @classmethod
    def _script_text(cls, v: Any) -> Any:
        """`script:` given as a list of lines (as CI files write `run:`) or a mapping."""
        if isinstance(v, (list, dict)):
            shape = "a list of lines" if isinstance(v, list) else "a mapping"
            raise ValueError(f"the script is one text, not {shape}: write `script: |` and "
                             "the script's lines under it, indented")
        if v is None:
            raise ValueError("the script is empty (write `script: |` and its lines under it)")
        if isinstance(v, (bool, int, float)):  # `script: 42`, `script: yes`
            raise ValueError(f"the script is text, not {v!r}: write `script: |` and the "
                             "script's lines under it, indented")
        return v

    @field_validator("inputs", mode="before")
    @classmethod
    def _inputs_list(cls, v: Any) -> Any:
        """`inputs: {from: a, path: x}` (one input as a mapping) or `inputs:` (nothing)."""
        if isinstance(v, dict):
            raise ValueError("inputs is a list of mappings: write inputs: [{from: STEP, "
                             "path: FILE}] (or one `- from: ...` item per input), not one "
                             "mapping")
        if v is None:
            raise ValueError("inputs is a list, e.g. inputs: [{from: prep, path: out.bin}]; "
                             "leave the key out for none")
        if not isinstance(v, (list, tuple)):  # `inputs: out.bin`, `inputs: 3`
            up, sep, path = str(v).partition(":")
            one = (f"{{from: {up.strip()}, path: {path.strip()}}}" if sep and
                   _NAME.fullmatch(up.strip()) and _SAFE_PATH.fullmatch(path.strip())
                   else "{from: STEP, path: FILE}")
            raise ValueError(f"inputs is a list of mappings: write inputs: [{one}] (one "
                             f"mapping per file another step wrote), not {str(v)[:80]!r}")
        return v

    @field_validator("script")
    @classmethod
    def _script(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the script is empty")
        if found := _PLACEHOLDER.search(v) or _DIRECTIVE_TEMPLATE.search(v):
            from pydantic_core import PydanticCustomError

            # its own kind: a key not read beside it (`matrix:`, `params:`) is named first
            raise PydanticCustomError(PLACEHOLDER_ERROR, "{said}", {"said": (
                f"the script holds {found[found.lastindex or 0]!r}, a placeholder another "
                "tool fills in (GitHub Actions, Argo, Airflow, a Jinja batch template): "
                "nothing fills it here (a workflow file has no parameters or variables to "
                "put in a script), so the job would run with it as written; write the value "
                "itself, or set a shell variable in the script (export N=4, then $N)")})
        try:
            check_text("script", v, multiline=True)
        except BadInput as e:
            raise ValueError(str(e)) from None
        return v

    def spec(self) -> JobSpec:
        """The step's job, parsed from its script (BadInput naming the step): a copy of its
        own, the script parsed once for every reader of the same step (`_parsed_spec`)."""
        return copied(self.parsed_spec())

    def parsed_spec(self) -> JobSpec:
        """`spec()`, its parts shared with every other reader of the same script: never to be
        changed."""
        try:
            spec = _parsed_script(self.script, self.dialect)
        except BadInput:
            return self._parse()  # raised again, naming this step
        return spec if spec.name else spec.model_copy(update={"name": self.name})

    def _parse(self) -> JobSpec:
        from ..dialects import get_script_dialect
        from ..dialects.scripts_common import plain_script
        from ..dialects.translate import count_sentinels, detect_dialect

        counts = count_sentinels(self.script)
        try:
            named = get_script_dialect(self.dialect).name if self.dialect else None
        except BadInput as e:
            raise BadInput(f"step {self.name!r}: {e}") from None
        others = {n: c for n, c in counts.items() if c and n != named}
        if named is not None and others and not counts.get(named):
            # `dialect: pbs` over #SBATCH lines: PBS reads them as comments, and the job
            # would run without the time, nodes and memory they ask for
            theirs = ", ".join(f"{n} ({c} line{'s' if c > 1 else ''})"
                               for n, c in others.items())
            raise BadInput(f"step {self.name!r}: dialect: {self.dialect}, but its script's "
                           f"directives are {theirs} and none is {named}'s: they would "
                           f"be read as comments; write dialect: {next(iter(others))}, or "
                           "leave `dialect:` out (the script's own is found)")
        try:
            if self.dialect is None and not any(counts.values()):
                spec = plain_script(self.script)
            else:
                dialect = get_script_dialect(self.dialect or detect_dialect(self.script))
                spec = dialect.parse_script(self.script)
        except BadInput as e:
            why = str(e).replace("pass the source dialect explicitly", "name it with the "
                                 f"step's `dialect:` ({', '.join(_DIALECTS)})")
            raise BadInput(f"step {self.name!r}: {why}") from None
        return spec if spec.name else spec.model_copy(update={"name": self.name})


# the step scripts parsed lately: a workflow's steps are read again at its load, its check,
# its run and each engine's adoption of it, and a fan-out's steps share one script (issue 17:
# a 1,000-step fan-out parsed the same script 3,000 times)
PARSED_KEPT = 1024


@lru_cache(maxsize=PARSED_KEPT)
def _parsed_script(script: str, dialect: str | None) -> JobSpec:
    """The job of a step of that script and dialect (`Step._parse`), unnamed unless its
    script names it; BadInput is not kept (raised again at each call)."""
    return Step.model_construct(name="", script=script, dialect=dialect)._parse()


class Misplaced(BadInput):
    """A workflow's problem and where it is (a field's path, as pydantic gives it), so that a
    file's loader can add the line."""

    def __init__(self, message: str, loc: tuple[Any, ...]) -> None:
        super().__init__(message)
        self.loc = loc


class _Memo:
    """A workflow's derived index: not part of what it is (equal to any other memo)."""

    def __init__(self) -> None:
        self.key: Any = None
        self.value: Any = None

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


# the files the engine itself keeps in a job's directory (the sites' job_dir, a step's
# working directory), which an input copied in first would overwrite under the job
ENGINE_FILES = {"job.sh": "the job's own script (job.sh, which the shell is reading)",
                "stdout.log": "the job's own output (stdout.log, being written)",
                "stderr.log": "the job's own error output (stderr.log, being written)",
                "secret": "the job's key for its events (secret)"}


def _one_place_each(s: Step, k: int) -> None:
    """Refuse two inputs of step `s` (the workflow's `k`th) that arrive at one place: the
    same destination (`./x` and `x` too), or one inside another's (a file cannot hold one;
    in a directory input, which copy wins would be undefined). Both inputs are named."""
    dests = [posixpath.normpath(inp.dest) for inp in s.inputs]  # ./x is x

    def named(i: int) -> str:
        return f"inputs[{i}], {s.inputs[i].from_}'s {s.inputs[i].path}"

    for i, d in enumerate(dests):
        if d in ENGINE_FILES or posixpath.dirname(d) in ENGINE_FILES:
            base = posixpath.basename(s.inputs[i].path.rstrip("/")) or "in"
            fix = f"{s.inputs[i].from_}-{base}"
            raise Misplaced(f"step {s.name!r}: input {d!r} ({named(i)}) collides with "
                            f"{ENGINE_FILES[d if d in ENGINE_FILES else posixpath.dirname(d)]},"
                            " which the engine keeps in the step's own directory, where the "
                            f"job runs; name it with `as:`, e.g. as: {fix}",
                            ("steps", k, "inputs", i))
    first: dict[str, int] = {}
    for i, d in enumerate(dests):
        j = first.setdefault(d, i)
        if j != i:
            raise Misplaced(f"step {s.name!r}: two inputs arrive as {d!r} ({named(j)}, and "
                            f"{named(i)}); name one with `as:`", ("steps", k, "inputs", i))
    for i, d in enumerate(dests):
        parent = posixpath.dirname(d)
        while parent and parent not in first:
            parent = posixpath.dirname(parent)
        if not parent:
            continue
        j = first[parent]
        pair = f"{named(min(i, j))}, and {named(max(i, j))}"
        if s.inputs[j].is_dir:
            raise Misplaced(f"step {s.name!r}: input {d!r} would land inside the directory "
                            f"input {parent + '/'!r} ({pair}), and which copy wins there is "
                            "undefined; give one an `as:` outside the other",
                            ("steps", k, "inputs", max(i, j)))
        raise Misplaced(f"step {s.name!r}: input {parent!r} is a file, but input {d!r} would "
                        f"be inside it ({pair}); name one with `as:` (a path ending with / is "
                        "a directory)", ("steps", k, "inputs", max(i, j)))


class Workflow(_Strict):
    name: str
    steps: list[Step] = Field(min_length=1)
    # false: a step is submitted only when every step it needs has ended (no queue-ahead;
    # what a plain script does; kept to compare)
    queue_ahead: bool = True

    @model_validator(mode="before")
    @classmethod
    def _extensions(cls, v: Any) -> Any:
        """Top-level keys starting with `x-` hold YAML anchors (`x-common: &common {...}`,
        then `<<: *common` in a step) and are otherwise ignored."""
        if isinstance(v, dict):
            return {k: x for k, x in v.items() if not (isinstance(k, str)
                                                        and k.startswith("x-"))}
        return v

    @field_validator("name", mode="before")
    @classmethod
    def _name_text(cls, v: Any) -> Any:
        _not_text(v)
        return v

    @field_validator("steps", mode="before")
    @classmethod
    def _steps_list(cls, v: Any) -> Any:
        """`steps: {prep: {...}}` (keyed by name, as some tools write it): say how to write."""
        if isinstance(v, dict):
            raise ValueError("Input should be a valid list: write each step as an item "
                             "(`- name: prep`), not as a key of a mapping")
        if v is None or v == []:
            raise ValueError("no steps: a workflow has at least one, each an item under "
                             "`steps:` (`- name: prep` with its `script:`)")
        if not isinstance(v, (list, tuple)):  # `steps: prep`, `steps: 3`
            raise ValueError(f"steps is a list of steps, each a mapping of its fields "
                             f"(`- name: prep` with its `script:` under it), not "
                             f"{_SHOWN.repr(v)}")
        return v

    @field_validator("queue_ahead", mode="before")
    @classmethod
    def _queue_ahead(cls, v: Any) -> Any:
        """true or false as YAML writes them; `maybe`, `1`, `"no"` said so."""
        if not isinstance(v, bool):
            raise ValueError(f"queue_ahead is true (submit each step once the steps it needs "
                             f"are queued) or false (once they have ended), unquoted, not "
                             f"{_SHOWN.repr(v)}")
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.fullmatch(v):
            raise ValueError(_bad_name(v))
        return v

    _index: _Memo = PrivateAttr(default_factory=lambda: _Memo())

    def _steps_by_name(self) -> dict[str, Step]:
        """Each name's (first) step, rebuilt when the list of steps changed."""
        memo, key = self._index, (id(self.steps), len(self.steps))
        if memo.key != key:
            memo.value = {}
            for s in self.steps:
                memo.value.setdefault(s.name, s)
            memo.key = key
        return memo.value

    def step(self, name: str) -> Step:
        s = self._steps_by_name().get(name)
        if s is None or s.name != name:
            self._index.key = None
            s = next(s for s in self.steps if s.name == name)
        return s

    def upstream(self, name: str) -> set[str]:
        """Every step `name` waits for, directly or through others."""
        idx = self._steps_by_name()
        seen: set[str] = set()
        todo = list(self.step(name).needs)
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                up = idx.get(n)
                if up is not None:
                    todo += up.needs
        return seen

    def _upstream_masks(self) -> tuple[dict[str, int], dict[str, int]]:
        """Every step's upstream steps at once, as bit masks over the steps' places in the
        file (each step's the union of those it needs and theirs, in dependency order), and
        each step's bit: one pass over the edges, where asking `upstream` per input was
        quadratic (500 steps taking their inputs from two levels up: 15 s)."""
        bit = {s.name: 1 << i for i, s in enumerate(self.steps)}
        masks: dict[str, int] = {}
        for name in self.order():
            mask = 0
            for n in self.step(name).needs:
                if n in bit:
                    mask |= masks.get(n, 0) | bit[n]
            masks[name] = mask
        return masks, bit

    def downstream(self, name: str) -> set[str]:
        """Every step that waits for `name`, directly or through others."""
        after: dict[str, list[str]] = {}
        for s in self.steps:
            for n in set(s.needs):
                after.setdefault(n, []).append(s.name)
        seen: set[str] = set()
        todo = list(after.get(name, ()))
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += after.get(n, ())
        return seen

    def order(self) -> list[str]:
        """Step names, every step after the steps it needs (file order among equals): by
        rounds, each round the steps whose needs all came in earlier rounds."""
        names = [s.name for s in self.steps]
        known = set(names)
        after: dict[str, list[str]] = {}
        waiting: dict[str, int] = {}
        for s in self.steps:
            needs = set(s.needs) & known
            waiting[s.name] = len(needs)
            for n in needs:
                after.setdefault(n, []).append(s.name)
        level: dict[str, int] = {}
        ready = [n for n in names if waiting[n] == 0]
        for n in ready:
            level[n] = 0
        while ready:
            n = ready.pop()
            for m in after.get(n, ()):
                level[m] = max(level.get(m, 0), level[n] + 1)
                waiting[m] -= 1
                if waiting[m] == 0:
                    ready.append(m)
        pos = {n: i for i, n in reversed(list(enumerate(names)))}
        placed = sorted(level, key=lambda n: (level[n], pos[n]))
        return placed + [n for n in names if n not in level]  # a cycle: never ready

    def gangs(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for s in self.steps:
            if s.gang:
                out.setdefault(s.gang, []).append(s.name)
        return out

    def check(self, sites: Iterable[str] | None = None) -> Workflow:
        """The graph's rules (BadInput naming the problem); `sites`: the configured ones."""
        if len(self.steps) > MAX_STEPS:
            raise BadInput(f"workflow {self.name!r} has {len(self.steps)} steps; a workflow "
                           f"holds at most {MAX_STEPS} steps")
        self._index.key = None
        names = [s.name for s in self.steps]
        seen: set[str] = set()
        dup = sorted({n for n in names if n in seen or seen.add(n)})
        if dup:
            first, again = names.index(dup[0]), names.index(dup[0], names.index(dup[0]) + 1)
            # both places: a name merged or aliased from an anchor has the anchor's line
            raise Misplaced(f"workflow {self.name!r}: step name {dup[0]!r} is used twice "
                            f"(steps[{first}] and steps[{again}]); rename one",
                            ("steps", again, "name"))
        folded: dict[str, str] = {}
        for k, n in enumerate(names):  # `needs: [Prep]` for a step `prep` is a slip
            other = folded.setdefault(n.casefold(), n)
            if other != n:
                raise Misplaced(f"workflow {self.name!r}: step names {other!r} and {n!r} "
                               "differ only in case; rename one (a `needs` or `from` naming "
                               "either is easily mistaken, and a case-insensitive file "
                               "system mixes their files)", ("steps", k, "name"))
        known = set(names)
        for k, s in enumerate(self.steps):
            for j, n in enumerate(s.needs):
                if n not in known and (why := _need_not_a_name(n, known)) is not None:
                    raise Misplaced(f"step {s.name!r}: needs[{j}] {why}",
                                    ("steps", k, "needs", j))
                if n not in known:
                    meant = _closest_step(n, names)
                    if meant == s.name:  # `needs: [" prep"]` in prep: fixed, still a cycle
                        raise Misplaced(f"step {s.name!r}: needs[{j}] {n!r} names no step; "
                                        "the nearest is the step itself, which it cannot need "
                                        "(a cycle): name the step it waits for, or remove it",
                                        ("steps", k, "needs", j))
                    hint = f"did you mean {meant!r}? " if meant else ""
                    raise Misplaced(f"step {s.name!r} needs unknown step {n!r} ({hint}"
                                    f"{_look_alikes(n)}steps: {_listing(names)})",
                                    ("steps", k, "needs", j))
                if n == s.name:
                    raise Misplaced(f"step {s.name!r} needs itself (a cycle)",
                                    ("steps", k, "needs", j))
                if n in s.needs[:j]:  # `needs: [a, a]`: a slip for another step, likely
                    raise Misplaced(f"step {s.name!r} needs {n!r} twice (needs[{s.needs.index(n)}] "
                                    f"and needs[{j}]): list each step once",
                                    ("steps", k, "needs", j))
        cycle = _find_cycle(self)
        if cycle:  # the line of one `needs` entry that closes it: cycle[1] needs cycle[0]
            k = next(i for i, s in enumerate(self.steps) if s.name == cycle[1])
            shown = cycle if len(cycle) <= 12 else [
                *cycle[:8], f"... ({len(cycle) - 11} steps more) ...", *cycle[-3:]]
            raise Misplaced(f"workflow {self.name!r} has a cycle of {len(cycle) - 1} steps: "
                            f"{' -> '.join(shown)}" if len(cycle) > 12 else
                            f"workflow {self.name!r} has a cycle: {' -> '.join(shown)}",
                            ("steps", k, "needs", self.steps[k].needs.index(cycle[0])))
        masks, bit = self._upstream_masks()  # no cycle: each step's upstream is final
        declared: dict[str, dict[str, str]] = {}  # a step's outputs by their normal path
        for k, s in enumerate(self.steps):
            for i, inp in enumerate(s.inputs):
                at = ("steps", k, "inputs", i, "from")
                if inp.from_ not in known:
                    meant = _closest_step(inp.from_, names)
                    if meant == s.name:
                        raise Misplaced(f"step {s.name!r}: inputs[{i}] is from {inp.from_!r}, "
                                        "which names no step; the nearest is the step itself, "
                                        "but an input comes from a step upstream (its own "
                                        "files are in its directory already)", at)
                    hint = f"did you mean {meant!r}? " if meant else ""
                    raise Misplaced(f"step {s.name!r}: inputs[{i}] is from unknown step "
                                    f"{inp.from_!r} ({hint}{_look_alikes(inp.from_)}steps: "
                                    f"{_listing(names)})", at)
                if inp.from_ == s.name:
                    raise Misplaced(f"step {s.name!r}: inputs[{i}] is from the step itself; "
                                    "an input comes from a step upstream (one in its needs, or "
                                    "further up); its own files are in its directory already",
                                    at)
                if masks[inp.from_] & bit[s.name]:  # needing it would close a cycle
                    raise Misplaced(f"step {s.name!r}: inputs[{i}] is from {inp.from_!r}, "
                                    f"which runs after it ({inp.from_!r} needs {s.name!r}, "
                                    f"directly or through others): an input comes only from "
                                    f"a step upstream, and needing {inp.from_!r} here would "
                                    f"close a cycle", at)
                if not masks[s.name] & bit[inp.from_]:
                    raise Misplaced(f"step {s.name!r}: inputs[{i}] is from {inp.from_!r}, "
                                    f"which is not upstream of it (add it to needs; needs: "
                                    f"{', '.join(s.needs) or 'none'})", at)
                if inp.from_ not in declared:  # each upstream's outputs read once
                    declared[inp.from_] = {posixpath.normpath(o): o
                                           for o in self.step(inp.from_).outputs}
                if (why := _kind_differs(inp, inp.from_, declared[inp.from_])) is not None:
                    raise Misplaced(f"step {s.name!r}: inputs[{i}] {why}",
                                    ("steps", k, "inputs", i, "path"))
            _one_place_each(s, k)
        gangs = self.gangs()
        by_fold: dict[str, str] = {}
        for gang in gangs:
            other = by_fold.setdefault(gang.casefold(), gang)
            if other != gang:
                raise BadInput(f"gangs {other!r} ({', '.join(gangs[other])}) and {gang!r} "
                               f"({', '.join(gangs[gang])}) differ only in case: one gang "
                               "or two? Spell them alike, or rename one")
        for gang, members in gangs.items():
            for m in members:
                inside = sorted(x for x in members if masks[m] & bit[x])
                if inside:
                    step = self.steps[names.index(m)]
                    # a wait through steps outside the gang names the need it goes through
                    via = next((n for n in step.needs if n == inside[0]
                                or masks[n] & bit[inside[0]]), inside[0])
                    through = f" (through {via!r})" if via != inside[0] else ""
                    raise Misplaced(f"gang {gang!r}: step {m!r} waits for {inside[0]!r}"
                                    f"{through} of the same gang, but a gang's steps start "
                                    "together", ("steps", names.index(m), "needs"))
        locked = _gang_lock(self)
        if locked:  # a cycle of gangs: each hop's step needs one in the next gang (or step)
            hops = "; ".join(f"{_unit_name(u)} waits for "
                             f"{_unit_name(locked[(i + 1) % len(locked)][0])} ({a} needs {b})"
                             for i, (u, (a, b)) in enumerate(locked))
            raise Misplaced(f"workflow {self.name!r}: {hops}: a gang starts only when every "
                            "one of its steps can, so none of them ever starts; put the steps "
                            "in one gang, or take one out of its gang",
                            ("steps", names.index(locked[0][1][0]), "needs"))
        if sites is not None:
            from ..config import closest_site

            allowed = list(sites)
            unknown = {k: [(j, n) for j, n in enumerate(s.among or [s.site])
                           if n != "auto" and n not in allowed]
                       for k, s in enumerate(self.steps)}
            lost = [k for k, bad in unknown.items() if bad]
            if lost:
                k = lost[0]
                s, (j, name) = self.steps[k], unknown[k][0]
                meant = closest_site(name, [*allowed, "auto"]) or \
                    ("auto" if name.strip().lower() in _ANY_SITE else None)
                hint = f"did you mean {meant}? " if meant else ""
                every = ""
                if len(lost) == len(self.steps) and len(self.steps) > 1:
                    every = ("; no step names a site of this sites file: was the "
                             "workflow written for another one (--config)?")
                parts = [p for p in re.split(r"[\s,|;+]+", name) if p]
                if len(parts) > 1 and s.among is None:  # `alpha beta`, `alpha|beta`
                    every += (f"; a list of sites is written [{', '.join(parts)}]"
                              if all(_NAME.fullmatch(p) for p in parts) else
                              "; a list of sites is written [alpha, beta]")
                site, more = _site_with_more(name, allowed)
                if site is not None and not meant:
                    hint, every = f"did you mean {site}? ", f"; {more}{every}"
                where = f" in its list of sites [{_listing(s.among)}]" if s.among else ""
                raise Misplaced(f"step {s.name!r}: unknown site {name!r}{where} ({hint}known: "
                                f"{', '.join(allowed) or 'none'}, or auto){every}",
                                ("steps", k, "site", *([j] if s.among else [])))
        for k, s in enumerate(self.steps):  # checked here, not when a stored one is read
            if s.on_failure == "resubmit-elsewhere" and s.retries == 0:
                raise Misplaced(f"step {s.name!r}: on_failure: resubmit-elsewhere needs "
                                "retries: 1 or more (each retry is one resubmission; with "
                                "retries: 0 the step runs once)", ("steps", k, "on_failure"))
        for k, s in enumerate(self.steps):
            if (why := _joined_first_line(s.script or "")) is not None:
                raise Misplaced(f"step {s.name!r}: {why}", ("steps", k, "script"))
            try:
                spec = s.parsed_spec()  # each script parses (read only here)
            except BadInput as e:
                raise Misplaced(str(e), ("steps", k, "script")) from None
            ids = [i for d in spec.dependencies for i in d.job_ids]
            if ids:  # kept beside the engine's own: it waited on another cluster's job
                raise Misplaced(f"step {s.name!r}: its script waits on job "
                                f"{', '.join(ids)} (its own dependency directive); steps "
                                "wait on each other through `needs` (a job id is one "
                                "cluster's job, and the step may run on another site): "
                                "remove the directive", ("steps", k, "script"))
            if not runs_commands(spec.script or spec.command or ""):  # its submit would
                # refuse it, mid-run, after the steps before it were submitted
                raise Misplaced(f"step {s.name!r}: its script runs nothing (only directives, "
                                "comments and blank lines); write the commands the step runs "
                                "after its directives", ("steps", k, "script"))
            if spec.hold:  # never released: the engine releases only what it held
                raise Misplaced(f"step {s.name!r}: its script submits the job held (a hold "
                                "directive, e.g. #SBATCH --hold); nothing in the workflow "
                                "would release it: remove the directive",
                                ("steps", k, "script"))
        return self


# a first line holding a '#' word after the `#!` line's interpreter, or a second
# directive: the lines a folded block (`script: >`) joined into one
_JOINED_SHEBANG = re.compile(r"#!\s*\S+(?:\s+[^#\s]\S*)*\s+#")
_JOINED_DIRECTIVES = re.compile(r"#(?:SBATCH|PBS|BSUB|\$|flux:)\s.*\s#(?:SBATCH|PBS|BSUB|\$|"
                                r"flux:)(?:\s|$)")


def _kind_differs(inp: StepInput, up: str, outputs: dict[str, str]) -> str | None:
    """Why an input names its upstream's declared output (`outputs`: by normal path) as the
    other kind: `d` for the directory `d/` (copied as one file, which fails) or `x.h5/` for
    the file `x.h5`."""
    path = posixpath.normpath(inp.path)
    out = outputs.get(path)
    if out is None or out.endswith("/") == inp.is_dir:
        return None
    kind, fix = ("a directory", f"{path}/") if out.endswith("/") else ("a file", path)
    return (f"path {inp.path!r} is {kind} in {up}'s outputs ({out!r}), but a path ending "
            "with / is a directory (copied with everything in it) and one without is a file: "
            f"write path: {fix}")


def _joined_first_line(script: str) -> str | None:
    """Why a step's script cannot run as meant: its first line is several lines joined
    (YAML's folded block `>` joins lines with blanks), so the `#!` line takes the rest as
    its argument, or the directives and commands become one comment that runs nothing."""
    first = script.lstrip("\n").split("\n", 1)[0]
    if not (_JOINED_SHEBANG.match(first) or _JOINED_DIRECTIVES.match(first)):
        return None
    shown = first if len(first) <= 60 else first[:57] + "..."
    return (f"its script's first line {shown!r} holds a '#' word after the "
            f"{'#! line' if first.startswith('#!') else 'directive'}: lines joined into "
            "one (a folded block, `script: >`, joins them with blanks) run nothing; write "
            "`script: |` to keep each line")


def _unit_name(unit: tuple[str, str]) -> str:
    return f"gang {unit[1]!r}" if unit[0] == "gang" else f"step {unit[1]!r}"


def _gang_lock(wf: Workflow) -> list[tuple[tuple[str, str], tuple[str, str]]] | None:
    """Gangs that wait on each other, as a cycle of the graph where each gang is one node
    (a gang starts when all its steps can): [(gang or step, (step, the step it needs that
    leads to the next one))], or None. No step waits for itself here (checked before)."""
    unit = {s.name: ("gang", s.gang) if s.gang else ("step", s.name) for s in wf.steps}
    out: dict[tuple[str, str], list[tuple[tuple[str, str], tuple[str, str]]]] = {}
    for s in wf.steps:
        for n in dict.fromkeys(s.needs):
            if n in unit and unit[n] != unit[s.name]:
                out.setdefault(unit[s.name], []).append((unit[n], (s.name, n)))
    if not any(u[0] == "gang" for u in out):
        return None
    color: dict[tuple[str, str], int] = {}
    for start in out:
        if color.get(start):
            continue
        path: list[tuple[tuple[str, str], tuple[str, str]]] = []
        stack = [(start, iter(out.get(start, ())))]
        color[start] = 1
        while stack:
            u, edges = stack[-1]
            nxt = next(edges, None)
            if nxt is None:
                color[u] = 2
                stack.pop()
                if path:
                    path.pop()
                continue
            v, edge = nxt
            if color.get(v) == 1:  # back to a unit on the path: the cycle from v
                path.append((u, edge))
                at = next(i for i, (x, _) in enumerate(path) if x == v)
                return path[at:]
            if not color.get(v):
                color[v] = 1
                path.append((u, edge))
                stack.append((v, iter(out.get(v, ()))))
    return None


# what people write for "any site": auto
_ANY_SITE = ("any", "*", "all", "anywhere", "any-site", "any_site", "best", "default")


def _site_with_more(name: str, sites: list[str]) -> tuple[str | None, str]:
    """The site in a `site:` holding more than a site's name, and what to do with the rest:
    `alpha:gpu`, `alpha/gpu` and PBS's `gpu@alpha` name a partition or queue (the script's
    own directive), `me@alpha.example.org` a login (the sites file's); (None, "") else."""
    from ..config import site_and_partition

    if (split := site_and_partition(name, sites)) is not None:
        site, queue = split
        what = queue if _NAME.fullmatch(queue) else "NAME"
        return site, (f"a partition or queue ({queue!r}) is asked for in the step's script "
                      f"(#SBATCH -p {what}, #PBS -q {what}, #BSUB -q {what}), not in `site:`")
    m = re.fullmatch(r"[^:/@\s]+@([^:/@\s]+)", name.strip())
    host = m[1].split(".")[0] if m else None
    if host in sites:
        return host, ("a site is named as the sites file names it: its login and host are "
                      "the file's (transport: {host: ..., user: ...})")
    return None, ""


def site_list(site: str | list[str]) -> str:
    """A step's `site` as written: a name, auto, or [alpha, beta]."""
    return f"[{', '.join(site)}]" if isinstance(site, list) else site


def _listing(names: list[str], most: int = 20) -> str:
    """Names for a message: at most `most` of them, and how many more."""
    if len(names) <= most:
        return ", ".join(names)
    return ", ".join(names[:most]) + f" and {len(names) - most} more"


def _find_cycle(wf: Workflow) -> list[str] | None:
    """One cycle as a path that ends where it starts, or None (depth-first, without
    recursion: a chain of any length)."""
    color: dict[str, int] = {}
    for s in wf.steps:
        if color.get(s.name) is not None:
            continue
        path: list[str] = [s.name]
        on_path: dict[str, int] = {s.name: 0}
        todo = [iter(wf.step(s.name).needs)]
        color[s.name] = 1
        while todo:
            m = next(todo[-1], None)
            if m is None:
                todo.pop()
                color[path[-1]] = 2
                on_path.pop(path.pop())
            elif color.get(m) == 1:
                found = path[on_path[m]:] + [m]
                return list(reversed(found))  # in the direction the work flows
            elif color.get(m) is None:
                color[m] = 1
                on_path[m] = len(path)
                path.append(m)
                todo.append(iter(wf.step(m).needs))
    return None


def _where(wf_data: Any, loc: tuple[Any, ...]) -> str:
    """A pydantic error location in the file's own words: steps[train].retries."""
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            name = None
            if loc[:i] == ("steps",) and isinstance(wf_data, dict):
                steps = wf_data.get("steps")
                if isinstance(steps, list) and part < len(steps) and \
                        isinstance(steps[part], dict):
                    name = steps[part].get("name")
            out += f"[{name!r}]" if isinstance(name, str) and len(name) <= 63 else f"[{part}]"
        else:
            out += ("." if out else "") + _shown_key(
                {"from_": "from", "as_": "as"}.get(str(part), str(part)))
    return out or "the workflow"


def _shown_key(key: str) -> str:
    """`key` with each character that shows nothing written as its code (U+200D)."""
    return "".join(c if c.isprintable() else f"<U+{ord(c):04X}>" for c in key)


def _invisible(key: str) -> str:
    """The first character of `key` that shows nothing, named ('U+200D (ZERO WIDTH
    JOINER)'); "" when every one shows."""
    import unicodedata

    c = next((c for c in key if not c.isprintable()), None)
    return "" if c is None else f"U+{ord(c):04X} ({unicodedata.name(c, 'unnamed')})"


def _script_files(data: dict[str, Any], base: Path | None, source: str,
                  lines: Callable[[], Any] | None, root: Path | None = None
                  ) -> dict[str, Any]:
    """The data with each step's `script_file: PATH` read into its `script` (a path relative
    to the workflow file's directory, its `$VARIABLES` expanded (`_expanded_script_path`),
    an empty file refused naming it; absolute for a workflow given as text, which has no
    directory, and then inside `root`, the server's root directory, when there is one: a
    body or a tool call names no file of this server outside it, links followed). A
    `script:` that is only a relative path to a file beside the workflow is refused: it
    would run in the step's own fresh directory on the site, where that file is not."""
    steps = data.get("steps")
    if not isinstance(steps, list):
        return data
    out = []
    for k, item in enumerate(steps):
        if not isinstance(item, dict):
            out.append(item)
            continue
        name = item.get("name")
        who = f"step {name!r}" if isinstance(name, str) and len(name) <= 63 else f"steps[{k}]"
        script = item.get("script")
        if "script_file" not in item:
            word = script.strip() if isinstance(script, str) else ""
            if base is not None and word and not re.search(r"\s", word) and \
                    not word.startswith(("/", "~", "$")) and (base / word).is_file():
                raise BadInput(
                    f"{source}: {who}: script {word!r} runs a file by a path relative to the "
                    "step's own directory on the site, where it is not (each step runs in a "
                    f"fresh directory); it is beside the workflow: to send it as the step's "
                    f"script, write script_file: {word}{_line_note(lines, ('steps', k, 'script'))}")
            out.append(item)
            continue
        at = _line_note(lines, ("steps", k, "script_file"))
        path = item["script_file"]
        if "script" in item:
            raise BadInput(f"{source}: {who}: give script or script_file, not both{at}")
        if not isinstance(path, str) or not path.strip():
            raise BadInput(f"{source}: {who}: script_file is the path of a script file "
                           f"(relative to the workflow file's directory), not {path!r}{at}")
        file = Path(_expanded_script_path(path, base, f"{source}: {who}", at)).expanduser()
        if not file.is_absolute():
            if base is None:
                raise BadInput(f"{source}: {who}: script_file {path!r} is relative, but this "
                               "workflow has no file to be relative to (it came as text): give "
                               f"an absolute path, or put the script under `script: |`{at}")
            file = base / file
        elif base is None and root is not None:
            top, real = root.expanduser().resolve(), file.resolve()
            if real != top and top not in real.parents:
                raise BadInput(f"{source}: {who}: script_file {path!r} is outside the server's "
                               f"root directory ({top}); a workflow given as text reads "
                               f"script files inside it only{at}")
        try:
            if not file.is_file():
                raise BadInput(f"{source}: {who}: script_file {path!r}: "
                               f"{'not a file' if file.exists() else 'no such file'} "
                               f"({file}){at}")
            with file.open("rb") as f:
                raw = f.read(MAX_WORKFLOW_BYTES + 1)
        except OSError as e:
            raise BadInput(f"{source}: {who}: script_file {path!r}: cannot read {file}: "
                           f"{e.strerror or e}{at}") from None
        if len(raw) > MAX_WORKFLOW_BYTES:
            raise BadInput(f"{source}: {who}: script_file {path!r} holds more than "
                           f"{MAX_WORKFLOW_BYTES} bytes{at}")
        text = _utf8(raw, f"{source}: {who}: script_file {file}")
        if not text.strip():  # said of the file named, not of a `script` never written
            raise BadInput(f"{source}: {who}: script_file {path!r} ({file}) is empty: write "
                           f"the step's commands in it{at}")
        out.append({key: v for key, v in item.items() if key != "script_file"} |
                   {"script": text})
    return {**data, "steps": out}


# `$NAME` or `${NAME}` in a script_file's path
_PATH_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _expanded_script_path(path: str, base: Path | None, who: str, at: str) -> str:
    """A script_file's path with its environment variables (`$SCRIPTS/prep.sh`) expanded
    from the environment of whoever reads the workflow's file, as a shell would; a file
    named so literally beside the workflow is taken as named. A variable not set, or one in
    a workflow given as text (read by a server, whose environment is not the writer's and
    whose values are no caller's to see), is refused naming it."""
    names = [m[1] or m[2] for m in _PATH_VARIABLE.finditer(path)]
    if not names or (Path(path) if base is None else base / path).exists():
        return path
    if base is None:
        raise BadInput(f"{who}: script_file {path!r} names the environment variable "
                       f"${names[0]}, which is not expanded in a workflow given as text; "
                       f"give the script's path itself{at}")
    unset = next((n for n in names if n not in os.environ), None)
    if unset is not None:
        raise BadInput(f"{who}: script_file {path!r}: the environment variable ${unset} is "
                       "not set here (a script_file's variables are expanded from the "
                       f"environment `diamond` runs in): set it, or give the path itself{at}")
    return _PATH_VARIABLE.sub(lambda m: os.environ[m[1] or m[2]], path)


def parse_workflow(data: Any, *, sites: Iterable[str] | None = None,
                   source: str = "the workflow",
                   lines: Callable[[], Any] | None = None,
                   base: Path | None = None, root: Path | None = None) -> Workflow:
    """A Workflow from parsed YAML/JSON data, checked; BadInput naming the first problem
    (`lines`: the YAML node tree the data came from, for the line of a field's problem;
    `base`: the workflow file's directory, which a step's `script_file` is relative to)."""
    if isinstance(data, Workflow):
        return data.check(sites)
    if not isinstance(data, dict):
        raise BadInput(f"{source}: expected a mapping with `name` and `steps`, got "
                       f"{type(data).__name__}")
    data = _script_files(data, base, source, lines, root)
    steps = data.get("steps")
    if isinstance(steps, list) and len(steps) > MAX_STEPS:  # before validating each
        raise BadInput(f"{source}: steps: {len(steps)} steps; a workflow holds at most "
                       f"{MAX_STEPS} steps")
    for k, item in enumerate(steps if isinstance(steps, list) else []):
        if item is None or isinstance(item, (str, int, float, list)):  # `- prep`, a bare `-`:
            # pydantic's "a valid dictionary or instance of Step" named a class, not the file
            what = "an empty item (a `-` with nothing after it)" if item is None else \
                _SHOWN.repr(item)  # bounded: aliases can nest a billion items
            raise BadInput(f"{source}: steps[{k}]: a step is a mapping of its fields, e.g. "
                           f"`- name: prep` with `script: ...` under it, not {what}"
                           f"{_line_note(lines, ('steps', k))}")
    if isinstance(steps, list):
        _inputs_named_by_output(steps, data, source, lines)
    try:
        wf = Workflow.model_validate(data)
    except ValidationError as e:
        err = _first_error(e.errors())
        if err["type"] == "invalid_key" or err["loc"][-1:] == ("[key]",):
            _keys_are_text(data, source, lines)  # `1:`, `true:` named as written
        msg = str(err["msg"]).removeprefix("Value error, ")
        unknown = err["type"] == "extra_forbidden"
        if unknown:
            msg = "unknown field"
            fields = {"steps": Step, "inputs": StepInput}
            parent = next((str(p) for p in reversed(err["loc"][:-1])
                           if str(p) in fields), None)
            model = fields.get(parent or "", Workflow)
            if parent == "steps" and len(err["loc"]) > 3 and err["loc"][2] == "inputs":
                model = StepInput
            accepted = [f.alias or n for n, f in model.model_fields.items()]
            if model is Step:  # read into `script` before the step is validated
                accepted.insert(accepted.index("script") + 1, "script_file")
            msg += f" (accepted: {', '.join(accepted)}"
            msg += ", and x-* keys to hold YAML anchors)" if model is Workflow else ")"
            meant = _meant(str(err["loc"][-1]), accepted)
            unsupported = _UNSUPPORTED.get(str(err["loc"][-1]).casefold())
            if unsupported:  # another tool's feature: say what to do here instead
                msg = f"not supported: {unsupported}"
            elif hidden := _invisible(key := str(err["loc"][-1])):
                seen = "".join(c for c in key if c.isprintable())
                msg += (f"; it holds {hidden}, an invisible character (pasted from a web page "
                        "or a PDF?): delete it" + (f" to write {seen!r}" if seen in accepted
                                                   else f"; did you mean {meant!r}?" if meant
                                                   else ""))
            elif meant:
                msg += f"; did you mean {meant!r}?"
        elif err["type"] == "missing":
            msg = "is required" + _MISSING.get(
                (len(err["loc"]) > 1, str(err["loc"][-1])), "")
        msg = _as_written(msg, lines, tuple(err["loc"]))
        raise BadInput(f"{source}: {_where(data, tuple(err['loc']))}: {msg}"
                       f"{_line_note(lines, tuple(err['loc']), at_key=unknown, said=msg)}"
                       ) from None
    # a file's name starts every message (a graph problem named only the step)
    head = f"{source}: " if source != "the workflow" else ""
    try:
        return wf.check(sites)
    except Misplaced as e:
        raise BadInput(f"{head}{e}{_line_note(lines, e.loc)}") from None
    except BadInput as e:
        raise BadInput(f"{head}{e}") from None


def _keys_are_text(data: dict[str, Any], source: str,
                   lines: Callable[[], Any] | None) -> None:
    """A key YAML read as a number, a boolean or null (`1:`, `yes:`, `~:` in a step), once
    validation found one: BadInput naming the step, the key as written and its line, with
    the fields there are (pydantic said "[1]: Keys should be strings", and `true:` was
    named as 1)."""
    from ..strict_yaml import first_key_not_text, key_not_text

    found = first_key_not_text(data, skip=lambda loc: len(loc) == 1 and
                               str(loc[0]).startswith("x-"))
    if found is None:
        return
    loc, key = found
    said, line = key_not_text(lines() if lines is not None else None, loc, key)
    model = {0: Workflow, 2: Step, 4: StepInput}.get(len(loc)) \
        if loc[:1] in ((), ("steps",)) and loc[2:3] in ((), ("inputs",)) else None
    if model is not None:
        whose = {Workflow: "a workflow's", Step: "a step's", StepInput: "an input's"}[model]
        accepted = [f.alias or n for n, f in model.model_fields.items()]
        if model is Step:  # read into `script` before the step is validated
            accepted.insert(accepted.index("script") + 1, "script_file")
        hint = f"{whose} fields are named: {', '.join(accepted)}" + (
            ", and x-* keys hold YAML anchors" if model is Workflow else "")
    else:
        hint = "quote it if it is meant as text"
    raise BadInput(f"{source}: {_where(data, loc)}: key {said}, not a name; {hint}{line}")


def _inputs_named_by_output(steps: list[Any], data: Any, source: str,
                            lines: Callable[[], Any] | None) -> None:
    """`inputs: [a.out]` (Parsl's and Snakemake's way: a file, found by its name) where one
    other step lists a.out in its outputs: refused naming the input as it is written here,
    `{from: STEP, path: a.out}` (an input is copied from one step's directory)."""
    written: dict[str, list[str]] = {}
    for item in steps:
        outs = item.get("outputs") if isinstance(item, dict) else None
        if isinstance(item, dict) and isinstance(item.get("name"), str) and \
                isinstance(outs, list):
            for out in outs:
                if isinstance(out, str):
                    written.setdefault(posixpath.normpath(out), []).append(item["name"])
    for k, item in enumerate(steps):
        inputs = item.get("inputs") if isinstance(item, dict) else None
        for i, inp in enumerate(inputs if isinstance(inputs, list) else []):
            if not isinstance(inp, str) or not inp.strip():
                continue
            makers = [n for n in written.get(posixpath.normpath(inp.strip()), [])
                      if n != item.get("name")]
            if makers and _SAFE_PATH.fullmatch(inp.strip()):
                # several steps listing it: which one's copy is meant is the user's to say
                listed = (f"step {makers[0]!r} lists it in its outputs" if len(makers) == 1
                          else f"steps {', '.join(map(repr, makers))} each list it in their "
                          f"outputs: name the one meant, as {makers[0]!r} here")
                raise BadInput(f"{source}: {_where(data, ('steps', k, 'inputs', i))}: an input "
                               f"is a mapping naming the step it comes from: write {{from: "
                               f"{makers[0]}, path: {inp.strip()}}} ({listed}), not {inp!r}"
                               f"{_line_note(lines, ('steps', k, 'inputs', i))}")


_READ_AS = re.compile(r"^(.+?) is (a number|not text)")


def _as_written(msg: str, lines: Callable[[], Any] | None, loc: tuple[Any, ...]) -> str:
    """A name YAML changed on the way (`010` read as 8, `12:30` as 750, `on` as True) shown as
    the file writes it, so that the advice to quote it names what to write."""
    import yaml

    m = _READ_AS.match(msg)
    node = _node_at(lines, loc) if m else None
    if node is None:
        return msg
    read = m.group(1)
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    for item in items:
        if not isinstance(item, yaml.ScalarNode) or item.style or not item.value:
            continue
        try:
            value = yaml.safe_load(item.value)
        except yaml.YAMLError:
            continue
        if repr(value) == read and item.value != read:
            why = "unquoted digits, 0-led octals and 12:30-like times as numbers" \
                if m.group(2) == "a number" else \
                "unquoted yes, no, on, off, true and false as truth values"
            return (f"{item.value} is read by YAML as {read}, not as text (it reads {why}); "
                    f"quote it as written: '{item.value}'")
    return msg


def _node_at(lines: Callable[[], Any] | None, loc: tuple[Any, ...]) -> Any:
    """The YAML node at `loc` (a field's path), or None."""
    import yaml

    node = lines() if lines is not None else None
    for part in loc:
        part = {"from_": "from", "as_": "as"}.get(part, part)
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode)
                         and k.value == str(part) and k.tag != "tag:yaml.org,2002:merge"),
                        None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and \
                part < len(node.value):
            node = node.value[part]
        else:
            return None
    return node


def _first_error(errors: list[Any]) -> Any:
    """The error to name: the first, except that a misspelt key (`Name:`, `need:`) is named
    rather than the key it leaves missing, and a key not read (`matrix:`) rather than the
    placeholder its script uses (`${{ matrix.lr }}`)."""
    first = errors[0]
    if first["type"] in ("missing", PLACEHOLDER_ERROR):
        parent = tuple(first["loc"][:-1])
        for err in errors:
            if err["type"] == "extra_forbidden" and tuple(err["loc"][:-1]) == parent:
                return err
    return first


# what other workflow tools call a field (CWL, Snakemake, GitHub Actions, Nextflow, Airflow)
_OTHER_NAMES = {"rule": "name", "process": "name", "basecommand": "script",
                "arguments": "script", "in": "inputs", "out": "outputs",
                "publishdir": "outputs", "depends_on": "needs", "depends": "needs",
                "after": "needs", "requires": "needs", "dependencies": "needs", "run": "script",
                "command": "script", "cmd": "script", "shell": "script", "host": "site",
                "cluster": "site", "machine": "site", "max_retries": "retries",
                "retry": "retries", "id": "name", "src": "from", "source": "from",
                "file": "path", "dest": "as", "to": "as", "jobs": "steps", "tasks": "steps",
                "rules": "steps", "group": "gang", "input": "inputs", "output": "outputs",
                "script_path": "script_file", "scriptfile": "script_file",
                # Airflow, Nextflow, Fireworks, Maestro
                "dag_id": "name", "task_id": "name", "bash_command": "script",
                "upstream": "needs", "errorstrategy": "on_failure", "maxretries": "retries",
                "fws": "steps", "study": "steps", "_fworker": "site", "spec": "script"}


# fields other workflow tools have that this one does not: what to write instead
_CONDITIONS = ("conditions are not read (every step runs once the steps it needs have "
               "COMPLETED); test inside the step's script instead")
_SWEEP = ("parameter sweeps are not expanded; write one step per value (an x-* anchor "
          "shares their fields), or a job array in the script (#SBATCH --array=1-10)")
_RESOURCES = ("a step's resources and time limit are its script's own directives "
              "(#SBATCH -t 1-00:00:00, #PBS -l walltime=..., #BSUB -W ...), not fields")
_INCLUDE = ("a workflow is one file; share fields between steps with an x-* key holding "
            "a YAML anchor")
# PyYAML's words for a tag it has no constructor for, and the tags meaning "another file"
_UNREAD_TAG = re.compile(r"could not determine a constructor for the tag '(.*)'")
_INCLUDE_TAG = re.compile(r"includ|import|ref|file|load|extend", re.IGNORECASE)
_SITES_FILE = ("the sites and their schedulers are the sites file's (--config), not the "
               "workflow's; a step names where it may run with site: NAME, a list of sites, or "
               "auto")
# what to write for a required field left out, by (inside a step?, field)
_MISSING = {
    (False, "name"): ": a name of letters, digits, _ . - for the workflow, e.g. name: my-pipeline",
    (False, "steps"): ": a list of steps, e.g. steps: [{name: prep, script_file: prep.sh}]",
    (True, "name"): ": every step has a name of letters, digits, _ . -, e.g. name: prep",
    (True, "script"): ": the job's text (script: |) or its file (script_file: prep.sh)",
}
_UNSUPPORTED = {
    **dict.fromkeys(("when", "if", "condition", "conditions", "only_if", "skip_if",
                     "unless", "trigger_rule", "depends_on_past"), _CONDITIONS),
    **dict.fromkeys(("matrix", "parameters", "params", "foreach", "for_each", "sweep",
                     "strategy", "with_items", "scatter", "global.parameters"), _SWEEP),
    **dict.fromkeys(("walltime", "time", "time_limit", "timeout", "nodes", "ntasks", "cpus",
                     "threads", "mem", "memory", "gpus", "partition", "queue", "account",
                     "resources", "clusteroptions", "cluster_options", "_queueadapter"),
                    _RESOURCES),
    **dict.fromkeys(("requirements", "hints"),
                    "CWL's requirements and hints are not read: a step's resources are its "
                    "script's own directives (#SBATCH ...), and an image is run in the script "
                    "(apptainer exec IMAGE COMMAND)"),
    **dict.fromkeys(("executor", "executors", "batch", "provider", "providers"), _SITES_FILE),
    "default_args": ("a workflow has no defaults for its steps; share fields through an x-* "
                     "key holding a YAML anchor (x-common: &common {retries: 2}, then "
                     "<<: *common in each step)"),
    **dict.fromkeys(("retry_delay", "retry_exponential_backoff", "max_retry_delay"),
                    "a failed step is resubmitted as soon as its failure is seen (retries: N); "
                    "a delay between tries is not read"),
    **dict.fromkeys(("schedule", "schedule_interval", "cron", "start_date", "catchup"),
                    "a workflow runs once, when `diamond workflow run` is given it; to run it "
                    "on a schedule, run that command from cron (or Slurm's scrontab)"),
    **dict.fromkeys(("email", "email_on_failure", "email_on_retry", "mail", "notify",
                     "on_failure_callback", "on_success_callback", "on_retry_callback"),
                    "mail comes from the scheduler: ask for it in the step's script (#SBATCH "
                    "--mail-type=FAIL --mail-user=ADDRESS, #PBS -m ae -M ADDRESS); `diamond "
                    "workflow status` and the workflow's events say the rest"),
    **dict.fromkeys(("stdout", "stderr", "log", "logs"),
                    "a step's output and error files are its script's own directives (#SBATCH "
                    "-o FILE -e FILE; `diamond logs JOB` shows them); list a file under "
                    "outputs to have it checked"),
    **dict.fromkeys(("priority", "nice"),
                    "a job's priority is its script's own directive (#SBATCH --nice=N, #PBS -p "
                    "N, #BSUB -sp N)"),
    **dict.fromkeys(("description", "doc", "label", "labels", "message", "comment", "tag",
                     "tags"), "a description is not read: write it as a YAML comment (# ...)"),
    "links": ("Fireworks' links (a parent and its children) are written the other way here: "
              "each step lists the steps it waits for, needs: [PARENT]"),
    **dict.fromkeys(("env", "environment", "variables", "vars"),
                    "set variables in the step's script (export NAME=value)"),
    **dict.fromkeys(("include", "includes", "import", "imports", "extends"), _INCLUDE),
    **dict.fromkeys(("hedge", "hedges"),
                    "a step is one job, whose id the steps after it wait on, so it is never "
                    "hedged (`diamond submit --hedge N` is for a job alone); to have "
                    "placement choose the site expected to start it first, write site: auto "
                    "or a list of sites (site: [alpha, beta]), and for another site after a "
                    "failure, retries: 1 with on_failure: resubmit-elsewhere"),
    **dict.fromkeys(("envmodules", "modules", "module"),
                    "load modules in the step's script (module load NAME/VERSION)"),
    **dict.fromkeys(("conda", "mamba", "spack"),
                    "activate the environment in the step's script (conda activate NAME, "
                    "spack env activate NAME)"),
    **dict.fromkeys(("container", "singularity", "apptainer", "docker", "image"),
                    "run the image in the step's script (apptainer exec IMAGE COMMAND, or "
                    "srun --container-image=IMAGE where the site has pyxis)"),
    "benchmark": ("Snakemake's benchmark file is not written: each step's run time and "
                  "memory are in the scheduler's accounting (sacct -j JOB, qstat -x -f JOB, "
                  "bhist -l JOB); for them in a file, time the command in the step's script "
                  "(/usr/bin/time -v COMMAND 2> FILE) and list FILE under outputs"),
    "wrapper": ("Snakemake wrappers are not fetched: write the commands the wrapper runs in "
                "the step's script (script: | or script_file: PATH)"),
    **dict.fromkeys(("maxforks", "max_forks"),
                    "a step is one job, so it never runs in several copies; to cap a job "
                    "array's tasks running at once, write it in the step's script (#SBATCH "
                    "--array=1-100%10, #BSUB -J \"name[1-100]%10\", #$ -tc 10)"),
    "cache": ("nothing is cached between runs: every `diamond workflow run` submits every "
              "step; to skip a step whose results are already there, test for them at the "
              "top of its script ([ -e RESULT ] && exit 0)"),
    **dict.fromkeys(("cwlversion", "class"),
                    "a CWL document is not read here: a workflow is `name:` and `steps:`, "
                    "each step's command lines under `script: |`"),
}


def _meant(key: str, accepted: list[str]) -> str | None:
    """The accepted key a misspelt one most likely meant: the same but for case, another
    tool's name for it, or a close spelling."""
    import difflib

    same = [a for a in accepted if a.casefold() == key.casefold()]
    other = [_OTHER_NAMES[key.casefold()]] if _OTHER_NAMES.get(key.casefold()) in accepted \
        else []
    close = difflib.get_close_matches(key.casefold(), accepted, n=1, cutoff=0.75)
    return (same or other or close or [None])[0]


def _line_note(lines: Any, loc: tuple[Any, ...], *, at_key: bool = False,
               said: str = "") -> str:
    """' (line N)': where in the file `loc` is, when the file's YAML nodes are known;
    `at_key`: the line of the last key itself (an unknown field: its value, a block
    mapping or list under it, starts on the next line). A value YAML read as a boolean
    from another word (`on`) is named too, unless the message `said` tells it already."""
    import yaml

    node = lines() if lines is not None else None
    line = None
    for part in loc:
        part = {"from_": "from", "as_": "as"}.get(part, part)
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)
                         and k.value == str(part) and k.tag != "tag:yaml.org,2002:merge"),
                        None)
            if pair is None and isinstance(part, str):  # an unknown key: the key's line
                return f" (line {line})" if line else ""
            node = pair[1] if pair else None
            key_line = pair[0].start_mark.line + 1 if pair and at_key else None
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and \
                part < len(node.value):
            node = node.value[part]
            key_line = None
        else:
            node = None
        if node is None:
            break
        line = key_line or node.start_mark.line + 1
    word = boolean_word(node) if "YAML" not in said else ""
    return f" (line {line}{word})" if line else ""


_OPENERS = {"while scanning a quoted scalar": "the quoted value",
            "while parsing a flow mapping": "the `{`",
            "while parsing a flow sequence": "the `[`"}


# PyYAML's words for a `{` or `[` met where a flow mapping's `,` or `}` was expected
_FLOW_GOT_BRACKET = ("expected ',' or '}', but got '{'", "expected ',' or '}', but got '['")


def _opened_hint(e: Any, text: str) -> str:
    """Where the error began when PyYAML's mark is only where it gave up: a quote, `{` or `[`
    opened lines before and never closed (its line said); a value holding ': ' unquoted
    (the line shown quoted); a shell `${NAME}` unquoted inside `{ }` (the value shown
    quoted)."""
    start, mark = getattr(e, "context_mark", None), getattr(e, "problem_mark", None)
    what = _OPENERS.get(getattr(e, "context", None) or "")
    if what and start is not None and mark is not None and start.line != mark.line:
        return (f" ({what} opened at line {start.line + 1}, column {start.column + 1} is "
                "never closed before it)")
    problem = getattr(e, "problem", None)
    if mark is None:
        return ""
    line = text.splitlines()[mark.line] if mark.line < len(text.splitlines()) else ""
    if problem in _FLOW_GOT_BRACKET and line[mark.column - 1:mark.column] == "$":
        # `{name: a, script_file: ${SCRIPTS}/a.sh}`: a shell variable's brace read as YAML's
        key = re.search(r"([A-Za-z_]+):\s*\$$", line[:mark.column])
        value = re.match(r"[^,}\s]*(?:\}[^,}\s]*)?", line[mark.column - 1:])
        shown = f"{key[1]}: \"{value[0] if value else '${NAME}'}\"" if key else '"${NAME}"'
        return (" (inside { } a value holding a shell variable's braces is quoted: "
                f"{shown})")
    if problem != "mapping values are not allowed here":
        return ""
    key, sep, value = line.strip().removeprefix("- ").partition(": ")
    if not sep or not value.strip() or '"' in value or not _NAME.fullmatch(key):
        return " (a value holding ': ' must be quoted)"
    return f" (a value holding ': ' must be quoted: {key}: \"{value.strip()}\")"


def _utf8(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise BadInput(f"{source}: not UTF-8 text: byte 0x{raw[e.start]:02x} at line {line}, "
                       f"column {col}; save it as UTF-8") from None


_WORKFLOW_SUFFIXES = (".yaml", ".yml", ".json")


def _workflow_files(directory: Path) -> list[str]:
    """The names of the files in `directory` that may be workflows (by their suffix)."""
    try:
        return sorted(p.name for p in directory.iterdir()
                      if p.suffix.lower() in _WORKFLOW_SUFFIXES and p.is_file())
    except OSError:
        return []


def _directory_given(path: Path) -> str:
    """What a workflow path that is a directory is refused with: the workflow files in it."""
    found = _workflow_files(path)
    shown = ", ".join(found[:5]) + (f" ... ({len(found)} in all)" if len(found) > 5 else "")
    given = str(path).rstrip("/") or "/"
    return (f"{given} is a directory, not a workflow file: give the workflow's YAML file "
            f"(e.g. {given}/{found[0] if found else 'workflow.yaml'})"
            + (f"; workflow files in it: {shown}" if found else ""))


def _file_meant(path: Path) -> str:
    """' (did you mean flow.yml?)' for a workflow file not found whose directory holds one of
    a close name (`.yaml` for `.yml`, a slip of a letter); else ""."""
    import difflib

    found = _workflow_files(path.parent if str(path.parent) else Path("."))
    near = [f for f in found if Path(f).stem == path.stem] or \
        difflib.get_close_matches(path.name, found, n=1, cutoff=0.75)
    return f" (did you mean {path.parent / near[0]}?)" if near else ""


def _json_blanks(text: str) -> str:
    """A JSON document as YAML reads it: JSON allows tabs between tokens (editors and
    `json.dump(indent="\t")` indent with them), YAML does not. JSON strings hold no raw tab,
    so in a text that is JSON every tab is a blank; each becomes a space, lines and columns
    kept. Any other text is returned as it is."""
    import json

    body = text.lstrip("\ufeff \r\n")
    if "\t" not in text or not body.startswith(("{", "[")):
        return text
    try:
        json.loads(body)
    except ValueError:
        return text
    return text.replace("\t", " ")


def _without_byte_order_marks(text: str, source: str) -> str:
    """`text` without the byte-order marks (U+FEFF) it starts with (an editor's, or two where
    files were joined); one anywhere else is refused where it stands (YAML reads it as text,
    and an invisible key or a broken line is all it would say)."""
    body = text.lstrip("\ufeff")
    at = body.find("\ufeff")
    if at < 0:
        return body
    line, column = body.count("\n", 0, at) + 1, at - body.rfind("\n", 0, at)
    raise BadInput(f"{source}: line {line}, column {column} holds a byte-order mark (U+FEFF, "
                   "an invisible character left where files saved with one were joined): "
                   "delete it; a workflow may start with one, nowhere else")


def load_workflow(text_or_path: str | Path, *, sites: Iterable[str] | None = None,
                  root: Path | None = None) -> Workflow:
    """A workflow from a YAML file (a Path) or YAML text (a str), at most
    MAX_WORKFLOW_BYTES; `root`: the directory a text's `script_file`s must be in."""
    import yaml

    from ..transports.base import read_named_file

    source = "the workflow"
    text = str(text_or_path)
    too_big = f"; a workflow holds at most {MAX_WORKFLOW_BYTES} bytes"
    if isinstance(text_or_path, Path):
        path = text_or_path.expanduser()
        source = str(path)
        if str(path) == "-" and not os.path.lexists(path):  # the habit: `... | run -`
            if os.isatty(0):
                raise BadInput("- reads the workflow from standard input, which is a terminal "
                               "here: pipe it in (./make_workflow.py | diamond workflow run "
                               "-), or name its file")
            source, path = "the workflow on standard input", Path("/dev/stdin")
            text_or_path = Path("-")  # its script_files are beside the current directory
        try:
            raw = read_named_file(path, MAX_WORKFLOW_BYTES, name=source,
                                  instead="give the workflow's YAML file, or a pipe its "
                                  "writer fills")
        except IsADirectoryError:
            raise BadInput(_directory_given(path)) from None
        except FileNotFoundError as e:
            raise BadInput(f"cannot read {path}: {e.strerror}{_file_meant(path)}") from None
        except OSError as e:
            raise BadInput(f"cannot read {path}: {e.strerror or e}") from None
        if len(raw) > MAX_WORKFLOW_BYTES:
            raise BadInput(f"{source}: more than {MAX_WORKFLOW_BYTES} bytes{too_big}")
        text = _utf8(raw, source)
    elif len(text) > MAX_WORKFLOW_BYTES or len(text.encode("utf-8", "replace")) > \
            MAX_WORKFLOW_BYTES:
        raise BadInput(f"{source}: more than {MAX_WORKFLOW_BYTES} bytes{too_big}")
    text = _json_blanks(_without_byte_order_marks(text, source))
    try:
        data, tree = strict_read(text, MAX_DEPTH)  # the value, and its lines from one reading
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        if isinstance(e, NumberNotAsWritten):  # valid YAML, but not the number written
            raise BadInput(f"{source}: line {mark.line + 1}, column {mark.column + 1}: "
                           f"{problem}") from None
        if problem == "but found another document":
            raise BadInput(f"{source}: a second YAML document (`---`){where}; a workflow file "
                           "holds one workflow: remove the `---`, or split the file") from None
        tag = _UNREAD_TAG.fullmatch(problem)
        if tag and mark:  # `steps: !include common.yaml`: PyYAML's words say nothing to do
            fix = _INCLUDE if _INCLUDE_TAG.search(tag[1]) else \
                "write the value itself (quoted if it starts with '!')"
            raise BadInput(f"{source}: line {mark.line + 1}, column {mark.column + 1}: the "
                           f"YAML tag {tag[1]!r} is not read: {fix}") from None
        if "'\\t'" in problem:
            problem += " " + tab_hint(text, mark, "(indent with spaces: YAML does not allow "
                                      "tabs for indentation)")
        raise BadInput(f"{source}: not valid YAML{where}: {problem}{_opened_hint(e, text)}"
                       f"{alias_hint(text, problem, mark)}{odd_blank_hint(text)}") from None
    except RecursionError:
        raise BadInput(f"{source}: not valid YAML: nested too deeply (a workflow's "
                       "collections nest a few levels)") from None
    base = text_or_path.expanduser().resolve().parent if isinstance(text_or_path, Path) \
        else None
    try:
        return parse_workflow(data, sites=sites, source=source, lines=lambda: tree, base=base,
                              root=root)
    except BadInput as e:  # a no-break space read as text, not indentation: said where
        hint = odd_blank_hint(text, indentation_only=True)
        if not hint:
            raise
        raise BadInput(f"{e}{hint}") from None


# -- the view the faces print ----------------------------------------------------------------

WorkflowState = Literal["PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                        "UNKNOWN"]


class StepView(BaseModel):
    """One step as the faces show it: `job` is what `diamond status JOB` takes."""

    name: str
    site: str | None = None
    job: str | None = None
    state: JobState = JobState.PENDING
    needs: list[str] = Field(default_factory=list)
    gang: str | None = None
    attempt: int = 0
    reason: str | None = None


class WorkflowView(BaseModel):
    id: str
    name: str
    state: JobState
    steps: list[StepView]
    reason: str | None = None
    # steps whose site or rendered script is not the approved one: they wait for a new
    # approval (`Federation.approve_workflow`)
    awaiting_approval: list[str] = Field(default_factory=list)

    def contract(self) -> dict[str, Any]:
        """The CLI's JSON: {"id", "state", "steps": [{"name", "site", "job", "state"}]}."""
        return {"id": self.id, "state": self.state.value, "name": self.name,
                "reason": self.reason, "awaiting_approval": self.awaiting_approval,
                "steps": [{"name": s.name, "site": s.site, "job": s.job,
                           "state": s.state.value, "needs": s.needs, "gang": s.gang,
                           "attempt": s.attempt, "reason": s.reason} for s in self.steps]}
