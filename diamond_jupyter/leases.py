"""Which engine runs a transfer, a staged job or an agent task, and whether it still lives.

Several engines may share one store (the server, a CLI or a kernel running the engine
in-process). Work that outlives a request (a copy, a job's staging, an agent task) is claimed
by the engine that runs it: its id is written into the record. When the engine closes it gives
its claims back; when its process dies the claim dies with it. Recovery at start takes only
unclaimed work, or work whose owner is gone, so nothing runs twice.

An engine id is "HOST:PID:START:NONCE" (START: the process's start time, so a reused pid does
not look alive). A running engine writes its heartbeat, a row in the store's `engines` table
(`store.engines.Heartbeats`), every BEAT_S. On this host an engine whose process is gone is
dead at once; one whose process lives (this process included: an engine dropped without
closing, or one stalled: stopped, paused) is dead once its heartbeat is older than STALE_S.
An engine on another host (a server that ran on another node of a cluster, with the store on
a shared filesystem) lives while its heartbeat changes: it is dead once this engine has seen
the same beat for STALE_S of its own clock (the hosts' clocks may disagree, so its beat's
time is never compared with ours; an engine seen for the first time is watched from then).
The claim itself is a field of the item's row in the store, set in one write transaction
(`claim_transfer`, `claim_workflow`, `claim_task`): one owner at a time.

Fencing: an engine that stalls (stopped, a long pause) past STALE_S loses its claims to
another engine, but wakes still believing it holds them. So each claim of a transfer, a
staging, a workflow or an agent task by a new owner (and each hand-back) increments the
item's lease generation (`data.lease`), and every write that drives the item carries the
generation its engine got (a `Fence`): the store refuses it (`LeaseLost`) once the
generation moved on, and the stale engine drops the item, saying so with a `lease.lost`
event.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import sqlite3
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .digits import ascii_digits
from .model import DiamondError

if TYPE_CHECKING:
    from .store.engines import Heartbeats

HOST = socket.gethostname()
BEAT_S = 20.0  # an engine writes its heartbeat this often
STALE_S = 90.0  # a heartbeat this old (of another host: unchanged this long): engine gone
_LIVE: set[str] = set()  # engines of this process that are running
LEASE_KINDS = ("transfer", "workflow", "task")  # items whose writes are fenced


@dataclass(frozen=True)
class Fence:
    """What a write that drives a held item carries: the item (`kind` "transfer", a staging
    included, "workflow", or "task": an agent task; its id) and the lease generation its
    engine got at its claim."""

    kind: str
    item: str
    generation: int


class LeaseLost(DiamondError):
    """A write carried a stale lease generation: another engine took the item over while
    this one stalled. The engine must stop driving the item."""

    def __init__(self, fence: Fence, current: int, owner: str | None) -> None:
        self.fence, self.current, self.owner = fence, current, owner
        super().__init__(f"{fence.kind} {fence.item}: lease generation {fence.generation} is "
                         f"stale (now {current}, held by {owner or 'no engine'}): this engine "
                         "stalled past the takeover and no longer drives it")

    def event_data(self, engine: str | None) -> dict[str, Any]:
        """The `lease.lost` event's data."""
        return {"item": self.fence.kind, "id": self.fence.item, "engine": engine,
                "generation": self.fence.generation, "current": self.current,
                "owner": self.owner}


class LeaseWatch:
    """The lease checked from inside a copy loop, cheaply: `check` (a store read: LeaseLost
    when the lease is stale, else whether the copy was asked to stop) runs at the first block
    and then at most once every `every_s` seconds of this engine's clock or `every_bytes`
    bytes moved, whichever comes first; a block in between costs two comparisons. So a
    stale engine writes at most `every_bytes` (plus one block) after its loss."""

    EVERY_S = 1.0
    EVERY_BYTES = 4 << 20

    def __init__(self, check: Callable[[], bool], *, every_s: float = EVERY_S,
                 every_bytes: int = EVERY_BYTES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.check, self.every_s, self.every_bytes, self.clock = check, every_s, every_bytes, clock
        self.checks = 0  # how many times the store was asked
        self._at: float | None = None
        self._done = 0

    def __call__(self, done: int, *, force: bool = False) -> bool:
        """`done` bytes moved so far (a retry may start lower): True when the copy was asked
        to stop; LeaseLost when the lease is stale (both only when a check is due, or
        `force`d: at a progress report)."""
        now = self.clock()
        if (not force and self._at is not None and now - self._at < self.every_s
                and abs(done - self._done) < self.every_bytes):
            return False
        self._at, self._done = now, done
        self.checks += 1
        return self.check()


def generation(data: dict[str, Any]) -> int:
    """An item's lease generation, from its stored data (0: never claimed)."""
    try:
        return int(data.get("lease") or 0)
    except (TypeError, ValueError):
        return 0


def claimed(data: dict[str, Any], engine: str) -> dict[str, Any]:
    """The item's data once `engine` claims it: a new owner gets the next generation; the
    same owner keeps its own."""
    if data.get("owner") == engine and generation(data):
        return data
    return {**data, "owner": engine, "lease": generation(data) + 1}


def handed_back(data: dict[str, Any]) -> dict[str, Any]:
    """The item's data once its owner gives it back: no owner, and the next generation (a
    write of that owner's still under way is refused)."""
    return {**data, "owner": None, "lease": generation(data) + 1}


def fence_of(kind: str, item: str, data: dict[str, Any]) -> Fence:
    """The fence of a claim just made, from the claimed item's data."""
    return Fence(kind, item, generation(data))


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


def beat(beats: Heartbeats, engine_id: str) -> None:
    """Write the engine's heartbeat (its row in the store's `engines` table)."""
    with contextlib.suppress(DiamondError, sqlite3.Error):  # a busy store: the next beat
        beats.touch(engine_id)


def stop_beating(beats: Heartbeats, engine_id: str) -> None:
    with contextlib.suppress(DiamondError, sqlite3.Error):
        beats.remove(engine_id)


def sweep(beats: Heartbeats, older_than_s: float = 24 * 3600) -> None:
    """Remove the heartbeats of engines long gone (killed without closing)."""
    with contextlib.suppress(DiamondError, sqlite3.Error):
        beats.sweep(older_than_s)


def alive(owner: str | None, beats: Heartbeats | None = None) -> bool:
    """Is the engine `owner` still running? A process that is gone, this process's closed
    engines, and engines of other hosts without a fresh heartbeat are not; an owner of an
    unknown shape is (never run someone's work twice)."""
    if not owner:
        return False
    parts = owner.split(":")
    if len(parts) != 4 or not ascii_digits(parts[1]):
        return True
    host, pid, start, _ = parts
    if host != HOST:  # its heartbeat in the store is all there is to go by
        silent = _silent(beats, owner)
        return silent is not None and silent < STALE_S
    if int(pid) == os.getpid():
        return owner in _LIVE and not _beat_stale(beats, owner, missing=False)
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, another user's: compare start times below
    return _start_time(int(pid)) == start and not _beat_stale(beats, owner, missing=True)


def _silent(beats: Heartbeats | None, owner: str) -> float | None:
    if beats is None:
        return None
    try:
        return beats.silent_for_s(owner)
    except (DiamondError, sqlite3.Error):
        return None


def _beat_stale(beats: Heartbeats | None, owner: str, *, missing: bool) -> bool:
    """Has the engine, whose process lives, stopped beating (dropped without closing, its loop
    gone or stalled)? An engine writes its heartbeat when it is made and removes it when it
    closes, so a missing one is `missing` (another process's closed engine; for this
    process's engines the registry says)."""
    if beats is None:
        return False
    try:
        age = beats.age_s(owner)
    except (DiamondError, sqlite3.Error):
        return False
    return missing if age is None else age >= STALE_S


async def _beat_while(ref: weakref.ref[EngineLease], beats: Heartbeats, engine_id: str
                      ) -> None:
    """Write the heartbeat every BEAT_S while the lease is held and its object lives (an
    engine dropped without closing stops beating, so its claims go stale). Written from a
    thread: a store busy with another process's write does not stall the loop."""
    await asyncio.to_thread(sweep, beats)
    while True:
        await asyncio.sleep(BEAT_S)  # the first beat was written when the task was made
        if ref() is None or engine_id not in _LIVE:
            return
        await asyncio.to_thread(beat, beats, engine_id)


class EngineLease:
    """This engine's claim on the work it runs: its id is made (registered, its heartbeat
    written and kept fresh while a loop runs) on first use and given back by `release`
    (a later use makes a new one). An engine dropped without `release` holds its claims no
    longer: its id is unregistered when the object is collected, and its heartbeat stops."""

    def __init__(self, beats: Heartbeats) -> None:
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
