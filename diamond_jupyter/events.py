"""In-process publication of stored events: callbacks and async iterators."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from .aio import KeptTasks
from .log_lines import one_line_logger
from .model import Event

log = one_line_logger(__name__)

Callback = Callable[[Event], Any]


class EventBus:
    """Fans stored events out to subscribers, in store order (seq)."""

    def __init__(self) -> None:
        self._callbacks: list[Callback] = []
        self._queues: list[asyncio.Queue[Event]] = []
        self._callback_runs = KeptTasks()  # coroutine callbacks' runs, until they end

    def subscribe(self, callback: Callback) -> Callable[[], None]:
        """Call `callback(event)` for each event; returns an unsubscribe function."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def queue(self) -> asyncio.Queue[Event]:
        q: asyncio.Queue[Event] = asyncio.Queue()
        self._queues.append(q)
        return q

    def unqueue(self, q: asyncio.Queue[Event]) -> None:
        if q in self._queues:
            self._queues.remove(q)

    async def close(self) -> None:
        """Cancel and await the coroutine callbacks still running."""
        await self._callback_runs.close()

    async def stream(self) -> AsyncIterator[Event]:
        """`async for ev in bus.stream()`: every event published from now on."""
        q = self.queue()
        try:
            while True:
                yield await q.get()
        finally:
            self.unqueue(q)

    def publish(self, event: Event) -> None:
        for q in list(self._queues):
            q.put_nowait(event)
        for cb in list(self._callbacks):
            try:
                res = cb(event)
                if asyncio.iscoroutine(res):
                    self._callback_runs.start(res)
            except Exception:  # a subscriber's bug must not stop delivery to others
                log.exception("event subscriber failed")
