"""`KeyedLocks`: one lock a key, kept only while a task holds or waits on it."""

from __future__ import annotations

import asyncio
import contextlib

from diamond_jupyter.aio import KeyedLocks


async def _begun() -> None:
    """Until the tasks created before this call have run to their first wait (tasks start
    in the order they were created)."""
    started = asyncio.Event()
    asyncio.get_running_loop().call_soon(started.set)
    await started.wait()


async def test_holders_of_a_key_take_turns_and_the_lock_goes_after_the_last():
    locks, inside, most, order = KeyedLocks(), [0], [0], []
    release = asyncio.Event()

    async def hold(name: str) -> None:
        async with locks.held("g"):
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            order.append(name)
            await release.wait()
            inside[0] -= 1
    tasks = [asyncio.ensure_future(hold(n)) for n in ("a", "b", "c")]
    await _begun()  # the first holds it, the others wait on the same lock
    assert "g" in locks and len(locks) == 1 and order == ["a"]
    release.set()
    await asyncio.gather(*tasks)
    assert order == ["a", "b", "c"] and most == [1]
    assert len(locks) == 0 and "g" not in locks


async def test_a_waiter_cancelled_leaves_no_lock_behind_and_others_keep_theirs():
    locks = KeyedLocks()
    held, go = asyncio.Event(), asyncio.Event()

    async def holder() -> None:
        async with locks.held("g"):
            held.set()
            await go.wait()

    async def waiter() -> None:
        async with locks.held("g"):
            raise AssertionError("never reached: cancelled while waiting")
    first = asyncio.ensure_future(holder())
    await held.wait()
    second = asyncio.ensure_future(waiter())
    other = asyncio.ensure_future(holder())  # a third, still waiting after the cancel
    await _begun()
    assert locks._locks["g"][1] == 3
    second.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await second
    assert locks._locks["g"][1] == 2  # the holder and the third
    go.set()
    await asyncio.gather(first, other)
    assert len(locks) == 0
