"""Which engine runs a transfer, a staged job or an agent task, and whether it still lives.

Several engines may share one store (the server, a CLI or a kernel running the engine
in-process). Work that outlives a request (a copy, a job's staging, an agent task) is claimed
by the engine that runs it: its id is written into the record. When the engine closes it gives
its claims back; when its process dies the claim dies with it. Recovery at start takes only
unclaimed work, or work whose owner is gone, so nothing runs twice.

An engine id is "HOST:PID:START:NONCE" (START: the process's start time, so a reused pid does
not look alive). A running engine touches its heartbeat file beside the store every BEAT_S.
On this host an engine whose process is gone is dead at once; one whose process lives (this
process included: an engine dropped without closing) is dead once its heartbeat file is
older than STALE_S. An engine on another host (a server that ran on another node of a
cluster, with the store on a shared filesystem) lives while its heartbeat file is fresh.
The claim itself is a field of the item's row in the store, set in one write transaction
(`claim_transfer`, `claim_workflow`, `claim_task`): one owner at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import stat
import time
import weakref
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
        return owner in _LIVE and not _beat_stale(beats, owner, missing=False)
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, another user's: compare start times below
    return _start_time(int(pid)) == start and not _beat_stale(beats, owner, missing=True)


def _beat_stale(beats: Path | None, owner: str, *, missing: bool) -> bool:
    """Has the engine, whose process lives, stopped beating (dropped without closing, its loop
    gone)? An engine writes its file when it is made and removes it when it closes, so a
    missing file is `missing` (another process's closed engine; for this process's engines
    the registry says)."""
    if beats is None:
        return False
    try:
        return time.time() - (beats / owner).stat().st_mtime >= STALE_S
    except FileNotFoundError:
        return missing
    except OSError:
        return False


async def _beat_while(ref: weakref.ref[EngineLease], beats: Path, engine_id: str) -> None:
    """Touch the heartbeat file every BEAT_S while the lease is held and its object lives (an
    engine dropped without closing stops beating, so its claims go stale)."""
    sweep(beats)
    while True:
        await asyncio.sleep(BEAT_S)  # the first beat was written when the task was made
        if ref() is None or engine_id not in _LIVE:
            return
        beat(beats, engine_id)


class EngineLease:
    """This engine's claim on the work it runs: its id is made (registered, its heartbeat
    file touched and kept fresh while a loop runs) on first use and given back by `release`
    (a later use makes a new one). An engine dropped without `release` holds its claims no
    longer: its id is unregistered when the object is collected, and its heartbeat stops."""

    def __init__(self, beats: Path) -> None:
        self.beats = beats
        self._id: str | None = None
        self._beater: asyncio.Task | None = None
        self._finalizer: weakref.finalize | None = None

    @property
    def id(self) -> str:
        if self._id is None:
            self._id = new_engine_id()
            register(self._id)
            beat(self.beats, self._id)
            self._finalizer = weakref.finalize(self, unregister, self._id)
        self.ensure_beating()
        return self._id

    @property
    def held_id(self) -> str | None:
        """The id while the lease is held, else None (never makes one)."""
        return self._id

    def ensure_beating(self) -> None:
        """Keep the heartbeat fresh from the running loop (none running: the next use does)."""
        if self._id is None:
            self.id  # noqa: B018 (makes the id, which starts beating)
            return
        if self._beater is not None and not self._beater.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        beat(self.beats, self._id)
        self._beater = loop.create_task(_beat_while(weakref.ref(self), self.beats, self._id))

    def release(self) -> None:
        if self._beater is not None:
            self._beater.cancel()
            self._beater = None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._id is not None:
            unregister(self._id)
            stop_beating(self.beats, self._id)
            self._id = None
