"""Which of a job's result files a fetch may write, and where it must not.

What a job wrote is untrusted: its names are its own choice. Fetched with the destination
"." under a server root that is the user's home, a job's `.bashrc`, `.ssh/authorized_keys` or
`.jupyter/...` would replace the user's own. So a fetch, on every face, skips (and lists in
its result, one "REL: why" line each) a result file
- whose name has a hidden component (`.x`), unless the user named that file;
- whose local path already exists and is not the file an earlier fetch of the same job left
  there unchanged, unless the user asked to overwrite (a directory there is never replaced);
- whose directory would be reached through a link leading out of the destination.
- that is not a regular file: a FIFO, a device or a socket (reading it could wait for ever
  or never end; `not_regular`).
- that is a symbolic link: never followed nor made again here (a job's `out -> ~/.ssh` or
  `-> /etc/passwd` would copy the user's own files), and named with where it leads on the
  site: inside the job's directory (its target is fetched under its own name when it is a
  result file), out of it, or nowhere (`link_line`).
- larger than the fetch's bound (the sites file's `fetch_max_file_bytes`, or the fetch's
  own), by its size as listed (a sparse file's holes are written out whole), or than the
  room left at the destination after the files before it (`bounded`).
A file this job's earlier fetch wrote and nobody changed since is replaced: fetching again
after the job wrote more works as before."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .model import BadInput
from .transports.base import special_kind


@dataclass
class FetchResult:
    """What a fetch did: the destination directory, the local files written, and one
    "RELATIVE-PATH: reason" line per result file it did not write."""

    dest: Path
    paths: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def hidden(rel: str) -> bool:
    """Whether a relative path has a component starting with a dot."""
    return any(part.startswith(".") for part in PurePosixPath(rel).parts)


def canonical(path: Path) -> str:
    """The absolute path a fetched file is recorded under (its directory's links resolved,
    the file's own name kept as it is)."""
    return os.path.join(os.path.realpath(path.parent), path.name)


def named_files(files: Iterable[str] | None) -> set[str] | None:
    """The relative paths a user named (`--file`), normalised; BadInput for one that is not
    a relative path inside the destination."""
    if files is None:
        return None
    out = set()
    for name in files:
        rel = PurePosixPath(name)
        if not name or rel.is_absolute() or ".." in rel.parts or "\x00" in name:
            raise BadInput(f"files: {name!r} is not a result file's relative path (as a fetch "
                           "lists them: e.g. out/result.txt or .env)")
        out.add(rel.as_posix())
    return out


def choose(job_id: str, dest_dir: Path, pairs: list[tuple[str, Path]], *,
           files: Iterable[str] | None, overwrite: bool,
           ours: Callable[[str, str], bool]) -> tuple[list[tuple[str, Path]], list[str]]:
    """The (remote, local) pairs to write and one "REL: why" line per pair skipped (see the
    module's rules). `files`: only these relative paths (hidden ones included); BadInput
    names one the job does not have. `ours(path, job_id)`: whether an earlier fetch of
    `job_id` wrote the local file `path` and it is unchanged."""
    named = named_files(files)
    rels = [(remote, local, local.relative_to(dest_dir).as_posix()) for remote, local in pairs]
    if named is not None:
        missing = sorted(named - {rel for _, _, rel in rels})
        if missing:
            have = ", ".join(rel for _, _, rel in rels[:10]) or "none"
            raise BadInput(f"files: job {job_id} has no result file {missing[0]!r} (its files: "
                           f"{have}{', ...' if len(rels) > 10 else ''})")
    root = os.path.realpath(dest_dir)
    chosen: list[tuple[str, Path]] = []
    skipped: list[str] = []
    for remote, local, rel in rels:
        if named is not None and rel not in named:
            continue
        why = None
        if hidden(rel) and named is None:
            why = "a hidden name, not fetched unless named (--file)"
        elif os.path.commonpath([root, os.path.realpath(local.parent)]) != root:
            why = f"its directory leads out of {dest_dir} through a link"
        elif os.path.lexists(local):
            kind = special_kind(os.stat(local).st_mode) if os.path.exists(local) else None
            if kind is not None:  # renamed over, /dev/null or a FIFO would be a file
                why = f"{kind} is there; not replaced (remove it to fetch the file there)"
            elif os.path.isdir(local) and not os.path.islink(local):
                why = "a directory is there"
            elif not overwrite and not ours(canonical(local), job_id):
                why = ("a file is there that no fetch of this job wrote (or it changed "
                       "since); not replaced unless asked to overwrite")
        if why is None:
            chosen.append((remote, local))
        else:
            skipped.append(f"{rel}: {why}")
    return chosen, skipped


MAX_LINK_TEXT = 200  # characters of a link's text quoted in its line


def link_line(text: str | None, resolved: str | None, job_dir: str | None) -> str:
    """Why a result file that is a symbolic link is not fetched, saying where it leads:
    `text` what it holds, `resolved` the path it leads to on the site (None: nowhere, or not
    looked at when `text` is None too), `job_dir` the job's directory resolved there."""
    if text is None:
        return "a symbolic link, not followed; not fetched"
    shown = repr(text[:MAX_LINK_TEXT]) + ("..." if len(text) > MAX_LINK_TEXT else "")
    if resolved is None:
        return (f"a symbolic link to {shown}, which leads nowhere on the site (a missing "
                "target, a loop or a directory the login may not look into); not fetched")
    if job_dir and (resolved == job_dir or resolved.startswith(job_dir.rstrip("/") + "/")):
        return (f"a symbolic link to {shown}, inside the job's directory; links are not "
                "followed (fetch its target by its own name)")
    return (f"a symbolic link to {shown}, leading out of the job's directory (to "
            f"{resolved[:MAX_LINK_TEXT]!r}); not followed, not fetched")


def not_regular(dest_dir: Path, chosen: list[tuple[str, Path]], modes: dict[str, int],
                links: dict[str, str] | None = None
                ) -> tuple[list[tuple[str, Path]], list[str]]:
    """`chosen` without the files whose listed mode (`modes`, by remote path) is not a
    regular file's: one "REL: why" line each, saying what it is (a link: its line in
    `links`, by remote path, else `link_line` of nothing looked at)."""
    kept: list[tuple[str, Path]] = []
    skipped: list[str] = []
    for remote, local in chosen:
        mode = modes.get(remote)
        if mode is None or stat.S_ISREG(mode):
            kept.append((remote, local))
            continue
        if stat.S_ISLNK(mode):
            why = (links or {}).get(remote) or link_line(None, None, None)
            skipped.append(f"{local.relative_to(dest_dir).as_posix()}: {why}")
            continue
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a character device"
                if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
        skipped.append(f"{local.relative_to(dest_dir).as_posix()}: {kind}, not a regular file "
                       "(reading it could wait for ever or never end); not fetched")
    return kept, skipped


def size_text(n: int) -> str:
    """A byte count for people: '512 B', '3.0 KiB', '1.0 TiB'."""
    value, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            break
        value /= 1024
    return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"


def too_large_line(rel: str, size: int | None, bound: int, setting: str) -> str:
    """The skip line for a file above the fetch's bound."""
    held = f"{size_text(size)} ({size} bytes)" if size is not None else "grew while copied"
    return (f"{rel}: {held}, above the fetch's bound of {size_text(bound)} ({setting}); not "
            "fetched")


def free_bytes(path: Path) -> int | None:
    """The bytes free on the file system of `path` (its nearest existing directory)."""
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return None


def bounded(dest_dir: Path, chosen: list[tuple[str, Path]], sizes: dict[str, int], *,
            bound: int, setting: str) -> tuple[list[tuple[str, Path]], list[str]]:
    """`chosen` without the files above `bound` bytes, nor those that would not fit in what
    the destination has free after the files kept before them (a file they replace gives its
    room back); one "REL: why" line each, naming the file, its size and the bound."""
    free = free_bytes(dest_dir)
    kept: list[tuple[str, Path]] = []
    skipped: list[str] = []
    for remote, local in chosen:
        rel = local.relative_to(dest_dir).as_posix()
        size = sizes.get(remote)
        if size is None:
            kept.append((remote, local))
            continue
        if size > bound:
            skipped.append(too_large_line(rel, size, bound, setting))
            continue
        if free is not None:
            there = local.stat().st_size if local.is_file() and not local.is_symlink() else 0
            if size - there > free:
                skipped.append(f"{rel}: {size_text(size)} ({size} bytes), more than the "
                               f"{size_text(free)} free at {dest_dir} after the files before "
                               "it; not fetched")
                continue
            free -= max(0, size - there)
        kept.append((remote, local))
    return kept, skipped
