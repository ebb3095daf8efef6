"""`%diamond` magics over a test's own Federation, without a kernel or an engine thread: the
faces' tests (release, transfer cancel, fetch, transfer) call the magic as a notebook would
and look at what the federation did."""

from __future__ import annotations

import asyncio
from typing import Any

from diamond_jupyter.kernel import magics
from diamond_jupyter.kernel.inprocess import LocalEngine


def magics_over(fed: Any, loop: asyncio.AbstractEventLoop) -> magics.DiamondMagics:
    """Magics whose engine is `fed`, its coroutines run on `loop`: the test's running loop
    (call the magic from another thread then, e.g. asyncio.to_thread) or a loop of the
    test's own that is not running (call the magic in the test's thread)."""

    class Engine(LocalEngine):
        def __init__(self) -> None:  # no engine thread: the test's federation and loop
            self._lookouts = {}

        async def fed(self) -> Any:
            return fed

        def call(self, coro: Any) -> Any:
            if loop.is_running():  # the magic's blocking call, off that loop
                return asyncio.run_coroutine_threadsafe(coro, loop).result(60)
            return loop.run_until_complete(coro)

    m = magics.DiamondMagics.__new__(magics.DiamondMagics)
    m._engine = Engine()
    return m
