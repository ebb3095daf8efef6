"""A copy's wait before its next try (its backoff): a user's cancel ends it at once, and a
wait nobody cancels lasts its whole time without waking the engine meanwhile. Before, the
wait looked for a cancel every 0.1 s: ten wakeups a second for each copy waiting.

No test bed: sites with a local transport; the copy's connection drop is a stand-in for
`sftp_copy` that raises what a dropped connection raises."""

from __future__ import annotations

import asyncio
import time
import types
from collections.abc import Awaitable, Generator
from typing import Any

from test_lease_fencing import _fed, _fed_sites

import diamond_jupyter.transfer as transfer_mod
from diamond_jupyter.transfer import TransferManager

WAIT_S = 30  # far below the backoff of an hour the cancel must not wait out


def _counting_suspensions(aw: Awaitable[Any], suspensions: list[int]) -> Awaitable[Any]:
    """`aw`, adding one to `suspensions[0]` each time it hands control back to the event
    loop (each time the loop must later wake it)."""
    @types.coroutine
    def counted() -> Generator[Any, Any, Any]:
        inner = aw.__await__()
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            try:
                waits_on = inner.send(sent) if thrown is None else inner.throw(thrown)
            except StopIteration as done:
                return done.value
            suspensions[0] += 1
            sent, thrown = None, None
            try:
                sent = yield waits_on
            except BaseException as e:  # a timeout's or a task's cancel, passed on
                thrown = e
    return counted()


async def test_a_wait_nobody_cancels_lasts_its_time_and_wakes_only_at_its_end(tmp_path):
    fed = _fed(_fed_sites(tmp_path))
    suspensions = [0]
    began = time.monotonic()
    await _counting_suspensions(fed.mover._wait_unless_cancelled("t-idle", 0.3), suspensions)
    assert time.monotonic() - began >= 0.3  # its whole time (a lower bound only)
    assert suspensions == [1]  # woken once, at its end; polling woke it every 0.1 s


async def test_a_cancel_during_an_hour_long_backoff_ends_the_copy_at_once(tmp_path, monkeypatch):
    """The copy's connection drops; its next try is an hour away. The transfer's cancel,
    which waits for the copy to stop, returns at once with the record CANCELLED, and no
    second try is made."""
    tries: list[str] = []

    async def connection_drops(src_t: Any, src_path: str, *a: Any, **kw: Any) -> Any:
        tries.append(src_path)
        raise ConnectionResetError("the connection dropped mid-copy")
    monkeypatch.setattr(transfer_mod, "sftp_copy", connection_drops)
    backing_off = asyncio.Event()
    real_wait = TransferManager._wait_unless_cancelled

    async def noted_wait(self: TransferManager, transfer_id: str, seconds: float) -> None:
        backing_off.set()
        await real_wait(self, transfer_id, seconds)
    monkeypatch.setattr(TransferManager, "_wait_unless_cancelled", noted_wait)

    sites = _fed_sites(tmp_path)
    fed = _fed(sites)
    fed.config.transfers.attempts, fed.config.transfers.backoff_s = 3, 3600
    fed.config.transfers.backoff_max_s = 3600
    await fed.start(recover=False)
    try:
        src = tmp_path / "in.bin"
        src.write_bytes(b"payload " * 64)
        rec = await fed.transfer(f"alpha:{src}", f"beta:{tmp_path / 'out.bin'}", wait=False)
        await asyncio.wait_for(backing_off.wait(), WAIT_S)
        [retry] = fed.store.events_since(0, kinds=["transfer.retry"], limit=None)
        assert retry.data["in_s"] == 3600
        done = await asyncio.wait_for(fed.cancel_transfer(rec.id), WAIT_S)
        assert done.state == "CANCELLED"
        assert (await asyncio.wait_for(fed.mover.wait(rec.id), WAIT_S)).state == "CANCELLED"
        assert tries == [str(src)]  # the cancel came during the backoff: no second try
        assert not (tmp_path / "out.bin").exists()
    finally:
        await fed.close()
