"""One user of the test bed at a time.

Its namespaces, addresses and state directory are fixed, so two test sessions or benchmarks
on one machine would tear it down under each other. `hold()` takes an exclusive lock on a
file for the rest of the process (re-entrant within it); another process waits for it.
"""

from __future__ import annotations

import fcntl
import os
from typing import IO

LOCK_PATH = os.environ.get("DIAMOND_TESTBED_LOCK", "/tmp/diamond-testbed.lock")
_held: IO[str] | None = None


def hold() -> None:
    """Block until this process holds the test bed; a no-op when it already does."""
    global _held
    if _held is not None:
        return
    fh = open(LOCK_PATH, "a")  # noqa: SIM115 - kept open: the lock lives as long as the file
    fcntl.flock(fh, fcntl.LOCK_EX)
    _held = fh


def release() -> None:
    global _held
    if _held is not None:
        fcntl.flock(_held, fcntl.LOCK_UN)
        _held.close()
        _held = None
