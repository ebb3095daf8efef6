"""The sites file as a long-lived engine read it (the Jupyter server's, a kernel's, `diamond
mcp`'s): such an engine keeps the sites it read at its start, so a site added to the file
later is missing from every listing, unsaid. `SitesFileWatch.note` says when the file was
edited, removed or created since, and what to do; an edited or created file that would not
load (a YAML slip, a key refused) is said with its error, so a restart is not what finds it.

Asked on every listing (the sidebar polls for one every few seconds): the file is stat'ed
each time and hashed only when its (mtime_ns, size) differ from both the read's and the last
asked, so an unchanged file costs one stat, and a file saved with the same bytes is hashed
once."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import NamedTuple

from .config import load_config, sites_file_path
from .model import DiamondError
from .store.codec import redact

Stat = tuple[int, int]  # (st_mtime_ns, st_size)


# A sites file is a few kilobytes; past this its bytes are not hashed (its stat alone says
# whether it changed), so a file swapped for a huge one costs no more than a stat
MOST_HASHED = 16 << 20
# past this an edited file is not loaded to say why it would not load (a listing asks; a
# 4 MB YAML file takes seconds to parse, the server waiting): a restart will say
MOST_LOADED = 1 << 20


def file_stat(path: Path) -> Stat | None:
    """The file's (mtime_ns, size); None when there is no file there."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:  # there, but not to be looked at (a directory it is in closed to us)
        return (-1, -1)
    return (st.st_mtime_ns, st.st_size)


def file_digest(path: Path) -> tuple[Stat | None, str | None]:
    """The file's stat and the sha256 of its bytes, both of the one file opened (a file
    replaced between a stat and a read is not taken for the one stat'ed); the digest None
    when it cannot be read, or is not a regular file (a FIFO would block the read forever,
    /dev/zero never end it) or is larger than MOST_HASHED (its stat alone is compared)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, None
    except OSError:
        return file_stat(path), None
    try:
        st = os.fstat(fd)
        stat = (st.st_mtime_ns, st.st_size)
        if not S_ISREG(st.st_mode) or st.st_size > MOST_HASHED:
            return stat, None
        digest, read = hashlib.sha256(), 0
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
            read += len(chunk)
            if read > MOST_HASHED:  # it grew since the fstat
                return stat, None
        return stat, digest.hexdigest()
    except OSError:
        return file_stat(path), None
    finally:
        os.close(fd)


class _Look(NamedTuple):
    """What the file was found to be at one stat (see `SitesFileWatch.change`)."""

    stat: Stat | None
    kind: str | None  # "changed", "removed", "created"; None: as read
    problem: str | None  # why the edited or created file would not load; None: it loads
    too_large: bool  # larger than MOST_LOADED, so not loaded to find a problem


@dataclass
class SitesFileWatch:
    """The sites file at `path` as `reader` (how the note names the process that read it,
    e.g. "Jupyter server", "kernel") read it: its stat and digest then (None: no file)."""

    path: Path
    reader: str
    read_stat: Stat | None
    read_digest: str | None
    _seen: _Look | None = field(default=None, repr=False)  # the last stat looked at

    @classmethod
    def now(cls, path: str | Path, reader: str) -> SitesFileWatch:
        """The file at `path` as it is now: made just before the engine reads it."""
        p = sites_file_path(path)
        return cls(p, reader, *file_digest(p))

    def change(self) -> str | None:
        """"changed", "removed" or "created" since the read; None when it is as read."""
        stat = file_stat(self.path)
        if stat == self.read_stat:
            return None
        if self._seen is None or self._seen.stat != stat:
            digest = None
            if stat is not None:
                # the stat of the bytes hashed: a save between the two is seen next time
                stat, digest = file_digest(self.path)
            same = self.read_stat is not None and digest is not None and \
                digest == self.read_digest
            kind = None if stat is None and self.read_stat is None else \
                "removed" if stat is None else \
                "created" if self.read_stat is None else \
                None if same else "changed"
            # only a file that was hashed (regular) and of a sites file's size is loaded to
            # say why it would not load: a FIFO or a device in its place is never read, and a
            # huge one (seconds of YAML parsing inside a listing) is not parsed
            too_large = stat is not None and stat[1] > MOST_LOADED
            problem = self._load_problem() if kind in ("changed", "created") and \
                digest is not None and not too_large else None
            self._seen = _Look(stat, kind, problem, too_large)
        return self._seen.kind

    def _load_problem(self) -> str | None:
        """Why the file now at `path` would not load (None: it loads): what a restart of
        the reader would meet. Its secrets *** as the store keeps them: the note reaches every
        listing, the agent's too, and an error may quote the file (a folded preamble's
        `export SLURM_JWT=...`)."""
        try:
            load_config(self.path)
        except (DiamondError, OSError) as e:
            return redact(" ".join(str(e).split()))
        return None

    def note(self) -> str | None:
        """What to tell the user when the file is not as read (None when it is)."""
        kind = self.change()
        where = f"the sites file {self.path}"
        seen = self._seen if kind is not None else None
        problem = seen.problem if seen is not None else None
        if kind == "changed" and problem is not None:
            return (f"{where} changed since this {self.reader} read it, and the edited file "
                    f"would not load: {problem}; the sites shown are those it read: mend the "
                    f"file before restarting the {self.reader}")
        if kind == "created" and problem is not None:
            return (f"{where} was created after this {self.reader} started without it, and "
                    f"it would not load: {problem}; mend it, then restart the {self.reader}")
        unchecked = " (it is too large to check here that it loads)" \
            if seen is not None and seen.too_large else ""
        if kind == "changed":
            return (f"{where} changed since this {self.reader} read it{unchecked}; the sites "
                    f"shown are those it read: restart the {self.reader} to use the edited "
                    "file")
        if kind == "removed":
            return (f"{where} was removed since this {self.reader} read it; the sites shown "
                    f"are those it read: put the file back, or restart the {self.reader} "
                    "once another is there (without one it starts with no sites)")
        if kind == "created":
            return (f"{where} was created after this {self.reader} started without it: "
                    f"restart the {self.reader} to use its sites")
        return None
