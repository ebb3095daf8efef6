"""One user of the test bed at a time.

Its namespaces, addresses and state directory are fixed, so two test sessions or benchmarks
on one machine would tear it down under each other. `hold()` takes an exclusive lock on a
file for the rest of the process (re-entrant within it); another process waits for it.
A process started under a holder (`flock /tmp/diamond-testbed.lock python -m benchmarks.x`)
shares its hold instead of waiting for its own parent forever.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

LOCK_PATH = os.environ.get("DIAMOND_TESTBED_LOCK", "/tmp/diamond-testbed.lock")
_held: IO[str] | None = None


def ancestors() -> set[int]:
    """This process and its ancestors."""
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def holders(path: str | os.PathLike[str]) -> set[int]:
    """Pids holding a flock on `path` (granted, not waiting), from /proc/locks."""
    st = os.stat(path)
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    out = set()
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == ident:
            out.add(int(fields[4]))  # waiters are listed as "N: -> FLOCK ..." and skipped
    return out


def hold() -> None:
    """Block until this process holds the test bed; a no-op when it already does, or when
    an ancestor holds it for us (a `flock` wrapper)."""
    global _held
    if _held is not None:
        return
    fh = open(LOCK_PATH, "a")  # noqa: SIM115 - kept open: the lock lives as long as the file
    if holders(LOCK_PATH) & ancestors():
        _held = fh  # the ancestor's hold covers us; taking our own would wait for ever
        return
    fcntl.flock(fh, fcntl.LOCK_EX)
    _held = fh


def release() -> None:
    global _held
    if _held is not None:
        fcntl.flock(_held, fcntl.LOCK_UN)  # a no-op when an ancestor's hold covered us
        _held.close()
        _held = None
