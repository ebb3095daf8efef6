"""Small asyncio pieces every layer uses."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

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
