"""The local files each fetch wrote: a later fetch of the same job may replace them, as long
as they are still the files it left (nothing else in the user's directories is replaced
without the user's say-so)."""

from __future__ import annotations

import hashlib
import os

from ..model import utcnow
from .codec import to_ts
from .db import Database


def _key(path: str) -> str:
    """The stored key of a local path: its sha256 (the names are a job's own choice)."""
    return hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()


class FetchesMixin(Database):
    """Files written by fetches."""

    def note_fetched(self, job_id: str, path: str) -> None:
        """Record that a fetch of `job_id` wrote the local file `path` (absolute), as it is
        on disk now."""
        st = os.lstat(path)
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO fetched (path_sha256, job_id, inode, size, "
                      "mtime_ns, fetched_at) VALUES (?,?,?,?,?,?)",
                      (_key(path), job_id, st.st_ino, st.st_size, st.st_mtime_ns, to_ts(utcnow())))

    def fetched_by(self, path: str, job_id: str) -> bool:
        """Whether the local file `path` (absolute) is one a fetch of `job_id` wrote and
        nobody changed or replaced since."""
        rows = self._read("SELECT job_id, inode, size, mtime_ns FROM fetched "
                          "WHERE path_sha256 = ?", (_key(path),))
        if not rows or rows[0]["job_id"] != job_id:
            return False
        try:
            st = os.lstat(path)
        except OSError:
            return False
        return (st.st_ino, st.st_size, st.st_mtime_ns) == (rows[0]["inode"], rows[0]["size"],
                                                            rows[0]["mtime_ns"])
