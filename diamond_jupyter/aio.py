"""Small asyncio pieces every layer uses."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Coroutine, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

T = TypeVar("T")


async def within(aw: Awaitable[T], timeout: float | None) -> T:
    """`await aw`, raising `asyncio.TimeoutError` after `timeout` seconds (None: no limit).

    Use this, not `asyncio.wait_for`: on Python 3.11, wait_for swallows a cancellation that
    arrives just as the awaited thing finishes, so a loop cancelled by a shutdown keeps
    going and the shutdown waits for it forever. `asyncio.timeout` has no such flaw."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout):
            return await aw
    return await asyncio.wait_for(aw, timeout)  # pragma: no cover - Python 3.10


class KeyedLocks:
    """One asyncio lock per key, kept only while a task holds it or waits on it (unlike a
    plain dict of locks, it does not grow by every key ever used)."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # key: (lock, holders+waiters)

    def __len__(self) -> int:
        return len(self._locks)

    def __contains__(self, key: object) -> bool:
        return key in self._locks

    @asynccontextmanager
    async def held(self, key: str) -> AsyncIterator[None]:
        """Hold `key`'s lock (waiting for it); it goes once nobody holds or waits on it."""
        lock, users = self._locks.get(key, (None, 0))
        lock = lock or asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:  # also when cancelled while waiting
            users = self._locks[key][1] - 1
            if users:
                self._locks[key] = (lock, users)
            else:
                del self._locks[key]


class KeptTasks:
    """Background tasks an owner starts and keeps until they end (the event loop holds only
    a weak reference to a task: one nobody keeps may be collected while it runs)."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        return len(self._running)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        """The tasks running now (a copy: one ending meanwhile does not disturb it)."""
        return iter(list(self._running))

    def start(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run `coro` as a task kept here till it is done."""
        task = asyncio.ensure_future(coro)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    async def close(self, *, cancel: bool = True) -> None:
        """Cancel (or, with cancel=False, let finish) every task running, and await them;
        also those they start meanwhile."""
        while self._running:
            running = list(self._running)
            if cancel:
                for task in running:
                    task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
