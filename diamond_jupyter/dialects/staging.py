"""File staging written in a batch script, read into the job's own stage entries.

PBS `-W stagein=`/`stageout=` (execution_path@storage_host:storage_path, comma lists) and
LSF `-f "local OP [remote]"` name plain files the scheduler copies around the job. Read
into `JobSpec.stage_in`/`stage_out`, the engine moves them (the job held until its input
is there) and the placer counts the transfer time, whichever scheduler runs the job. An
entry the stage entries cannot say (a wildcard, a variable or job-id token the scheduler
fills in, LSF's append) is kept as written and reported. A path that climbs out with `..`
is refused: staging touches only the paths the script declares.

Slurm's burst buffer lines (`#DW stage_in`/`stage_out`, `#BB`) copy into and out of a
buffer on the cluster the script was written for; they are checked here (a malformed one
is refused naming its line) and reported line by line when another scheduler runs the job.
Pure: text in, entries and notes out.
"""

from __future__ import annotations

import re

from ..model import BadInput, JobSpec, StageEntry
from .scripts_common import STAGING_LINES, Item, note

# a `-W` value holds attributes `name=value[,name=value...]`: a comma starts the next one
# only where a name and `=` follow it, so a staging list keeps its own commas
_NEXT_ATTRIBUTE = re.compile(r",(?=[A-Za-z_][A-Za-z0-9_]*=)")
_PBS_STAGING = ("stagein", "stageout")
# execution_path@storage_host:storage_path (the host: a name, no blank, `:` or `@`)
_PBS_ENTRY = re.compile(r"(?P<job>[^@]+)@(?P<host>[^\s:@/]+):(?P<storage>.+)")
_PBS_FORM = ("execution_path@storage_host:storage_path, several separated by commas "
             "(e.g. in.dat@fs01:/data/in.dat)")
_WILDCARD = re.compile(r"[*?\[]")
# the spec's metadata key of what was said of its staging (carried, kept): shown with the
# submit's warnings as well as the translation's
STAGING_NOTES = "staging_notes"
# set while a script is read for its own scheduler (a translation submitted by hand): its
# staging lines are kept as written, for that scheduler to move the files
_AS_WRITTEN = "staging_as_written"
# the schedulers whose scripts' staging lines are read into stage entries
STAGING_DIALECTS = ("pbs", "lsf")
# LSF's operators: > copies in before the job, < copies back after it, << appends back,
# >< and <> do both
_LSF_OPERATORS = {">": ("in",), "<": ("out",), "<<": ("append",), "><": ("in", "out"),
                  "<>": ("in", "out")}
_LSF_FORM = ('"local_file OP [remote_file]", OP one of > < << >< <> with blanks around it '
             '(e.g. -f "in.dat > in.dat")')


def _climbs(path: str) -> bool:
    return ".." in path.replace("\\", "/").split("/")


def _not_expressible(path: str, dialect: str) -> str | None:
    """Why a stage entry cannot hold `path` as written, else None."""
    if re.search(r"<[^<>]*>|\{\{", path):
        return "is a template placeholder, not a path yet"
    if _WILDCARD.search(path):
        return "names files by a wildcard, which a diamond stage entry cannot"
    if "$" in path:
        return "holds a variable the job's shell would expand, which a stage entry does not"
    if dialect == "lsf" and re.search(r"%[JI]", path):
        return "holds %J or %I (the job's id or index, filled in by LSF), unknown before submit"
    return None


def _check_paths(item: Item, entry: str, paths: list[str]) -> None:
    for path in paths:
        if _climbs(path):
            raise BadInput(f"line {item.lineno}: staging path {path!r} of {entry!r} in "
                           f"`{item.raw.strip()}` climbs out with '..'; staging touches only "
                           "the paths the script declares: write the path without '..'")


def keep_as_written(spec: JobSpec, keep: bool) -> None:
    """While `keep`, the staging lines read into `spec` stay as written (for their own
    scheduler), none carried; call again with False once the script is read."""
    if keep:
        spec.metadata[_AS_WRITTEN] = True
    else:
        spec.metadata.pop(_AS_WRITTEN, None)


def _as_written(spec: JobSpec) -> bool:
    return bool(spec.metadata.get(_AS_WRITTEN))


def _carry(spec: JobSpec, item: Item, entry: str, direction: str, source: str,
           destination: str, *, recursive: bool = False) -> None:
    staged = StageEntry(source=source, destination=destination, recursive=recursive)
    (spec.stage_in if direction == "in" else spec.stage_out).append(staged)
    spec.metadata.setdefault(STAGING_LINES, []).append(
        {"line": item.lineno, "entry": entry, "directive": item.raw.strip(),
         "direction": direction, "source": source, "destination": destination})
    _say(spec, f"carried: line {item.lineno}: {entry!r} as the job's stage-{direction} "
               f"{source} -> {destination} (diamond moves it and counts its time in "
               "placement)")


def _kept(spec: JobSpec, item: Item, entry: str, why: str, dialect: str) -> None:
    _say(spec, f"kept: line {item.lineno}: staging entry {entry!r} {why}; left to {dialect} "
               "as written (another scheduler does not move it)")


def _say(spec: JobSpec, text: str) -> None:
    note(spec, text)
    spec.metadata.setdefault(STAGING_NOTES, []).append(text)


def pbs_attributes(value: str) -> list[str]:
    """A `-W` value's attributes (`name=...` each; a comma inside one's list stays)."""
    return _NEXT_ATTRIBUTE.split(value)


def read_pbs_staging(spec: JobSpec, item: Item) -> str | None:
    """`-W stagein=...`/`stageout=...` read into the spec's stage entries. None when the
    `-W` value holds no staging attribute; else what of it is left (its other attributes,
    and a staging list of the entries kept as written), "" for nothing. BadInput naming the
    line for a malformed entry or a path that climbs out with '..'."""
    attributes = pbs_attributes(item.value or "")
    if not any(a.partition("=")[0] in _PBS_STAGING for a in attributes):
        return None
    keep_all = _as_written(spec)
    rest: list[str] = []
    for attribute in attributes:
        name, _, listed = attribute.partition("=")
        if name not in _PBS_STAGING:
            rest.append(attribute)
            continue
        if not listed.strip():
            raise BadInput(f"line {item.lineno}: {name} with no file in `{item.raw.strip()}`; "
                           f"expected {name}={_PBS_FORM}")
        kept = []
        for entry in listed.split(","):
            entry = entry.strip()
            m = _PBS_ENTRY.fullmatch(entry)
            if m is None:
                raise BadInput(f"line {item.lineno}: {name} entry {entry!r} in "
                               f"`{item.raw.strip()}` is not a file to stage; expected "
                               f"{_PBS_FORM}")
            job, host, storage = m["job"].strip(), m["host"], m["storage"].strip()
            _check_paths(item, entry, [job, storage])
            if keep_all:  # for PBS itself: written back as is, nothing to say
                kept.append(entry)
                continue
            if why := _not_expressible(job, "pbs") or _not_expressible(storage, "pbs"):
                kept.append(entry)
                _kept(spec, item, entry, why, "PBS")
                continue
            # PBS copies as scp -r does: a destination that ends in '/' (and a source that
            # does not) is a directory the source goes into, under its own name
            if name == "stagein":
                job = _into_directory(storage, job)
            else:
                storage = _into_directory(job, storage)
            # a directory whole, as PBS copies it: a trailing '/' on both sides would copy
            # it into a directory of its own name
            job, storage = job.rstrip("/") or job, storage.rstrip("/") or storage
            if name == "stagein":
                _carry(spec, item, entry, "in", f"{host}:{storage}", job, recursive=True)
            else:
                _carry(spec, item, entry, "out", job, f"{host}:{storage}", recursive=True)
        if kept:
            rest.append(f"{name}={','.join(kept)}")
    return ",".join(rest)


def _into_directory(source: str, destination: str) -> str:
    """`destination` as scp names the copy of `source`: a directory (a trailing '/') takes
    the source under its own name (`out.tar` into `/keep/` is `/keep/out.tar`), unless the
    source is a directory's contents too (`mesh/` into `/data/mesh/`: kept as it was)."""
    if not destination.endswith("/") or source.endswith("/") or destination.strip("/") == "":
        return destination
    return destination + source.rstrip("/").rsplit("/", 1)[-1]


def read_lsf_file(spec: JobSpec, item: Item) -> bool:
    """`-f "local OP [remote]"` read into the spec's stage entries: the local file is on the
    submitting machine (the server here), the remote one on the job's side (its working
    directory when relative; the local file's name when left out). True when carried; False
    when kept as written (append, a %J/%I or wildcard name), noted. BadInput naming the line
    for a malformed value or a path that climbs out with '..'."""
    words = (item.value or "").split()
    if len(words) not in (2, 3) or words[1] not in _LSF_OPERATORS:
        raise BadInput(f"line {item.lineno}: -f {item.value!r} in `{item.raw.strip()}` is "
                       f"not a file to stage; expected {_LSF_FORM}")
    local, operator = words[0], words[1]
    remote = words[2] if len(words) == 3 else local
    entry = " ".join(words)
    _check_paths(item, entry, [local, remote])
    if _as_written(spec):  # for LSF itself: written back as is, nothing to say
        return False
    why = _not_expressible(local, "lsf") or _not_expressible(remote, "lsf")
    if why is None and "append" in _LSF_OPERATORS[operator]:
        why = "appends the job's file to the local one (<<), which a stage entry cannot"
    if why is not None:
        _kept(spec, item, entry, why, "LSF")
        return False
    for direction in _LSF_OPERATORS[operator]:
        if direction == "in":
            _carry(spec, item, entry, "in", local, remote)
        else:
            _carry(spec, item, entry, "out", remote, local)
    return True


# Slurm's burst buffer lines (the datawarp plugin's `#DW`, `#BB` for persistent buffers)
_BB_LINE = re.compile(r"^#(?P<sentinel>BB_LUA|BB|DW)(?:\s+(?P<rest>.*))?$")
_DW_STAGE_KEYS = {"source", "destination", "type"}
_DW_TYPES = ("file", "directory", "list")


def check_burst_buffer_line(lineno: int, line: str) -> dict[str, str] | None:
    """A `#DW stage_in`/`stage_out` line's settings (source, destination, type), None for
    another burst buffer line or none. BadInput naming the line when a staging line lacks a
    setting, repeats one, gives one without a value or an unknown type: sbatch's burst
    buffer plugin refuses it at submit."""
    m = _BB_LINE.match(line.strip())
    if m is None or m["sentinel"] == "BB_LUA":
        return None
    words = (m["rest"] or "").split()
    if not words or words[0] not in ("stage_in", "stage_out"):
        return None
    settings: dict[str, str] = {}
    shown = f"line {lineno}: `{line.strip()}`"
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if key not in _DW_STAGE_KEYS or not eq or not value:
            raise BadInput(f"{shown}: {word!r} is not a staging setting; expected "
                           "source=PATH destination=PATH type=file|directory|list")
        if key in settings:
            raise BadInput(f"{shown}: {key} given twice; give it once")
        settings[key] = value
    missing = [k for k in ("source", "destination") if k not in settings]
    if missing:
        raise BadInput(f"{shown}: no {' and no '.join(missing)}; expected "
                       "source=PATH destination=PATH type=file|directory|list")
    if settings.get("type", "file") not in _DW_TYPES:
        raise BadInput(f"{shown}: type {settings['type']!r}; expected file, directory or "
                       "list")
    return settings


def burst_buffer_stage_reason(settings: dict[str, str]) -> str:
    """Why a `#DW stage_in`/`stage_out` line is not carried as a diamond stage entry."""
    outside = settings["source"] if not settings["source"].startswith("$DW_") \
        else settings["destination"]
    if settings.get("type") == "list":
        return "its files are listed in a file on that cluster, which diamond does not read"
    return (f"{outside} is on the file system of the cluster the script was written for, "
            "which the line does not name as a host diamond can reach; give it as the job's "
            "stage_in/stage_out SITE:PATH to have diamond move it")


def check_burst_buffer_block(text: str) -> None:
    """Every `#DW stage_in`/`stage_out` line of a Slurm script's leading block (where sbatch
    reads them) checked by `check_burst_buffer_line`."""
    for lineno, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return
        check_burst_buffer_line(lineno, line)
