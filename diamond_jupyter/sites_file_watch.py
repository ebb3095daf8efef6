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

from .config import load_config
from .model import DiamondError

Stat = tuple[int, int]  # (st_mtime_ns, st_size)


def file_stat(path: Path) -> Stat | None:
    """The file's (mtime_ns, size); None when there is no file there."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:  # there, but not to be looked at (a directory it is in closed to us)
        return (-1, -1)
    return (st.st_mtime_ns, st.st_size)


def file_digest(path: Path) -> str | None:
    """The sha256 of the file's bytes; None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@dataclass
class SitesFileWatch:
    """The sites file at `path` as `reader` (how the note names the process that read it,
    e.g. "Jupyter server", "kernel") read it: its stat and digest then (None: no file)."""

    path: Path
    reader: str
    read_stat: Stat | None
    read_digest: str | None
    # the stat last looked at, what it was found to be (see `note`) and why the file there
    # would not load (None: it loads, or is not there)
    _seen: tuple[Stat | None, str | None, str | None] | None = field(default=None,
                                                                      repr=False)

    @classmethod
    def now(cls, path: str | Path, reader: str) -> SitesFileWatch:
        """The file at `path` as it is now: made just before the engine reads it."""
        p = Path(path).expanduser()
        return cls(p, reader, file_stat(p), file_digest(p))

    def change(self) -> str | None:
        """"changed", "removed" or "created" since the read; None when it is as read."""
        stat = file_stat(self.path)
        if stat == self.read_stat:
            return None
        if self._seen is None or self._seen[0] != stat:
            kind = None if stat is None and self.read_stat is None else \
                "removed" if stat is None else \
                "created" if self.read_stat is None else \
                None if file_digest(self.path) == self.read_digest else "changed"
            self._seen = (stat, kind, self._load_problem() if kind in ("changed", "created")
                          else None)
        return self._seen[1]

    def _load_problem(self) -> str | None:
        """Why the file now at `path` would not load (None: it loads): what a restart of
        the reader would meet."""
        try:
            load_config(self.path)
        except (DiamondError, OSError) as e:
            return " ".join(str(e).split())
        return None

    def note(self) -> str | None:
        """What to tell the user when the file is not as read (None when it is)."""
        kind = self.change()
        where = f"the sites file {self.path}"
        problem = self._seen[2] if kind is not None and self._seen is not None else None
        if kind == "changed" and problem is not None:
            return (f"{where} changed since this {self.reader} read it, and the edited file "
                    f"would not load: {problem}; the sites shown are those it read: mend the "
                    f"file before restarting the {self.reader}")
        if kind == "created" and problem is not None:
            return (f"{where} was created after this {self.reader} started without it, and "
                    f"it would not load: {problem}; mend it, then restart the {self.reader}")
        if kind == "changed":
            return (f"{where} changed since this {self.reader} read it; the sites shown are "
                    f"those it read: restart the {self.reader} to use the edited file")
        if kind == "removed":
            return (f"{where} was removed since this {self.reader} read it; the sites shown "
                    f"are those it read: put the file back, or restart the {self.reader} "
                    "once another is there (without one it starts with no sites)")
        if kind == "created":
            return (f"{where} was created after this {self.reader} started without it: "
                    f"restart the {self.reader} to use its sites")
        return None
