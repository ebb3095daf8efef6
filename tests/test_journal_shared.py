"""Two engines sharing one store (the server and `diamond wait`, two kernels): a state one
of them applies first still wakes the other's waiters. A real store on disk, no test bed."""

from __future__ import annotations

import asyncio

import pytest

from diamond_jupyter.aio import within
from diamond_jupyter.journal import STORE_RECHECK_S, Journal
from diamond_jupyter.model import JobSpec, JobState
from diamond_jupyter.store import Store


@pytest.fixture
def pair(tmp_path):
    path = tmp_path / "shared.sqlite"
    return Journal(Store(path), {}), Journal(Store(path), {})


def _job(journal: Journal) -> str:
    journal.store.record_intent("alpha", "tok1", JobSpec(name="j", command="true"))
    return journal.store.bind_native_id("tok1", "100").id


async def test_the_end_another_engine_applied_first_wakes_this_one(pair):
    mine, other = pair
    jid = _job(mine)
    await mine.drain()
    waiter = asyncio.ensure_future(mine.wait(jid, timeout=STORE_RECHECK_S * 4))
    await asyncio.sleep(0)  # the waiter is listening
    other.apply(jid, JobState.COMPLETED, exit_code=0, source="event")
    # this engine's monitor sees the same end line: nothing changes in the store any more
    assert mine.apply(jid, JobState.COMPLETED, exit_code=0, source="event") is None
    done = await within(waiter, STORE_RECHECK_S / 2)  # well before the store re-check
    assert done.state == JobState.COMPLETED


async def test_a_waiter_reads_the_shared_store_when_no_event_comes(pair):
    mine, other = pair
    jid = _job(mine)
    await mine.drain()
    waiter = asyncio.ensure_future(mine.wait(jid, timeout=STORE_RECHECK_S * 4))
    await asyncio.sleep(0)
    other.apply(jid, JobState.FAILED, exit_code=3, source="poll")  # nothing here sees it
    done = await within(waiter, STORE_RECHECK_S * 3)
    assert done.state == JobState.FAILED and done.exit_code == 3


async def test_within_never_swallows_a_cancellation_that_meets_the_result():
    """The flaw of 3.11's wait_for: cancelled as the awaited thing finishes, the caller
    would go on as if not cancelled. `within` re-raises the cancellation."""
    for _ in range(50):
        ready = asyncio.Event()

        async def loop_until_cancelled(ready: asyncio.Event = ready) -> None:
            while True:
                await within(ready.wait(), 10)
                ready.clear()

        task = asyncio.ensure_future(loop_until_cancelled())
        await asyncio.sleep(0)
        ready.set()  # the wait finishes ...
        task.cancel()  # ... in the same turn as the cancellation
        with pytest.raises(asyncio.CancelledError):
            await within(task, 5)
