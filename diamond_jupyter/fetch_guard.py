"""Which of a job's result files a fetch may write, and where it must not.

What a job wrote is untrusted: its names are its own choice. Fetched with the destination
"." under a server root that is the user's home, a job's `.bashrc`, `.ssh/authorized_keys` or
`.jupyter/...` would replace the user's own. So a fetch, on every face, skips (and lists in
its result, one "REL: why" line each) a result file
- whose name has a hidden component (`.x`), unless the user named that file;
- whose local path already exists and is not the file an earlier fetch of the same job left
  there unchanged, unless the user asked to overwrite (a directory there is never replaced);
- whose directory would be reached through a link leading out of the destination;
- whose size (as the site states it: a sparse file's too) is more than the space left free
  at the destination by the files fetched before it (it would fill the disk, and the user's
  other files with it, before the copy failed).
A file this job's earlier fetch wrote and nobody changed since is replaced: fetching again
after the job wrote more works as before."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .model import BadInput


@dataclass
class FetchResult:
    """What a fetch did: the destination directory, the local files written, and one
    "RELATIVE-PATH: reason" line per result file it did not write."""

    dest: Path
    paths: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def free_bytes(dest: Path) -> int | None:
    """The bytes free at `dest` (its nearest existing directory); None when unknown."""
    here = dest
    while not here.exists() and here != here.parent:
        here = here.parent
    try:
        return shutil.disk_usage(here).free
    except OSError:
        return None


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
            if os.path.isdir(local) and not os.path.islink(local):
                why = "a directory is there"
            elif not overwrite and not ours(canonical(local), job_id):
                why = ("a file is there that no fetch of this job wrote (or it changed "
                       "since); not replaced unless asked to overwrite")
        if why is None:
            chosen.append((remote, local))
        else:
            skipped.append(f"{rel}: {why}")
    return chosen, skipped
