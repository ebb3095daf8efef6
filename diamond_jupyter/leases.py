"""Which engine runs a transfer, a staged job or an agent task, and whether it still lives.

Several engines may share one store (the server, a CLI or a kernel running the engine
in-process). Work that outlives a request (a copy, a job's staging, an agent task) is claimed
by the engine that runs it: its id is written into the record. When the engine closes it gives
its claims back; when its process dies the claim dies with it. Recovery at start takes only
unclaimed work, or work whose owner is gone, so nothing runs twice.

An engine id is "HOST:PID:START:NONCE" (START: the process's start time, so a reused pid does
not look alive). On this host the process table says whether it lives. An engine on another
host (a server that ran on another node of a cluster, with the store on a shared filesystem)
lives while its heartbeat file beside the store is fresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import stat
import time
from pathlib import Path

HOST = socket.gethostname()
BEAT_S = 20.0  # an engine touches its heartbeat file this often
STALE_S = 90.0  # a heartbeat older than this: the engine (on another host) is gone
_LIVE: set[str] = set()  # engines of this process that are running


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot ("" where /proc has none)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def new_engine_id() -> str:
    pid = os.getpid()
    return f"{HOST}:{pid}:{_start_time(pid)}:{secrets.token_hex(4)}"


def register(engine_id: str) -> None:
    _LIVE.add(engine_id)


def unregister(engine_id: str) -> None:
    _LIVE.discard(engine_id)


def own_directory(beats: Path) -> bool:
    """Whether the heartbeat directory `beats` is the user's own, a directory (no link) that
    others cannot write. Beside a store in a shared directory with the sticky bit (allowed),
    another local user could make it first: their fresh files would keep a dead engine's
    claims "alive" for ever (its workflows, transfers and tasks never taken over)."""
    try:
        st = os.lstat(beats)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def beat(beats: Path, engine_id: str) -> None:
    """Touch the engine's heartbeat file (in the directory `beats` beside the store; not in
    one another user made, see `own_directory`)."""
    with contextlib.suppress(OSError):
        beats.mkdir(mode=0o700, exist_ok=True)
        if own_directory(beats):
            (beats / engine_id).touch()


def stop_beating(beats: Path, engine_id: str) -> None:
    with contextlib.suppress(OSError):
        (beats / engine_id).unlink()


def sweep(beats: Path, older_than_s: float = 24 * 3600) -> None:
    """Remove heartbeat files of engines long gone (killed without closing)."""
    now = time.time()
    if not own_directory(beats):
        return
    with contextlib.suppress(OSError):
        for f in beats.iterdir():
            with contextlib.suppress(OSError):
                if now - f.stat().st_mtime > older_than_s:
                    f.unlink()


def alive(owner: str | None, beats: Path | None = None) -> bool:
    """Is the engine `owner` still running? A process that is gone, this process's closed
    engines, and engines of other hosts without a fresh heartbeat are not; an owner of an
    unknown shape is (never run someone's work twice)."""
    if not owner:
        return False
    parts = owner.split(":")
    if len(parts) != 4 or not parts[1].isdigit():
        return True
    host, pid, start, _ = parts
    if host != HOST:  # its heartbeat, in a directory only the user writes
        try:
            return beats is not None and own_directory(beats) and \
                time.time() - (beats / owner).lstat().st_mtime < STALE_S
        except OSError:
            return False
    if int(pid) == os.getpid():
        return owner in _LIVE
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, another user's: compare start times below
    return _start_time(int(pid)) == start


class EngineLease:
    """This engine's claim on the work it runs: its id is made (registered, its heartbeat
    file touched) on first use and given back by `release` (a later use makes a new one)."""

    def __init__(self, beats: Path) -> None:
        self.beats = beats
        self._id: str | None = None

    @property
    def id(self) -> str:
        if self._id is None:
            self._id = new_engine_id()
            register(self._id)
            beat(self.beats, self._id)
        return self._id

    async def heartbeat(self) -> None:
        """Keep the heartbeat file fresh while the engine runs (and sweep long-dead ones)."""
        sweep(self.beats)
        while True:
            beat(self.beats, self.id)
            await asyncio.sleep(BEAT_S)

    def release(self) -> None:
        if self._id is not None:
            unregister(self._id)
            stop_beating(self.beats, self._id)
            self._id = None
