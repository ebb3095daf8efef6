"""A copy's wait before its next try (its backoff): a user's cancel ends it at once, and a
wait nobody cancels lasts its whole time without waking the engine meanwhile. Before, the
wait looked for a cancel every 0.1 s: ten wakeups a second for each copy waiting.

What a transfer or a staging leaves in its manager once it has ended: nothing.

No test bed: sites with a local transport; the copy's connection drop is a stand-in for
`sftp_copy` that raises what a dropped connection raises."""

from __future__ import annotations

import asyncio
import time
import types
from collections.abc import Awaitable, Collection, Generator
from typing import Any

import pytest
from held_staging import HeldStaging
from one_site_engine import journal_waiter
from test_lease_fencing import _fed, _fed_sites

import diamond_jupyter.transfer as transfer_mod
from diamond_jupyter.model import BadInput
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


def _kept(mover: TransferManager, ids: Collection[str]) -> dict[str, set[str]]:
    """Each of the manager's maps and sets that keeps something for a transfer of `ids`,
    and what it keeps for them."""
    kept = {name: set(value) & set(ids) for name, value in vars(mover).items()
            if isinstance(value, (dict, set))}
    return {name: tids for name, tids in kept.items() if tids}


async def test_ended_transfers_leave_nothing_in_their_manager(tmp_path, monkeypatch):
    """Before, a transfer cancelled while its copy ran here stayed in the manager's set of
    cancelled ones, and every transfer it ran kept its lease there, for as long as the engine
    ran: a server's grew by one a transfer. Now a copy's marks go at its end; a cancel after
    the end is answered as before (the cancelled one as it is, the others refused)."""
    real_copy = transfer_mod.sftp_copy

    async def drops_for_one(src_t: Any, src_path: str, *a: Any, **kw: Any) -> Any:
        if src_path.endswith("drops.bin"):
            raise ConnectionResetError("the connection dropped mid-copy")
        return await real_copy(src_t, src_path, *a, **kw)
    monkeypatch.setattr(transfer_mod, "sftp_copy", drops_for_one)
    fed = _fed(_fed_sites(tmp_path))
    fed.config.transfers.attempts, fed.config.transfers.backoff_s = 3, 3600
    fed.config.transfers.backoff_max_s = 3600
    await fed.start(recover=False)
    try:
        ended: dict[str, str] = {}
        for n in range(3):
            src = tmp_path / f"in{n}.bin"
            src.write_bytes(b"payload " * 64)
            rec = await fed.transfer(f"alpha:{src}", f"beta:{tmp_path / f'out{n}.bin'}")
            ended[rec.id] = rec.state
        rec = await fed.transfer(f"alpha:{tmp_path / 'absent.bin'}", f"beta:{tmp_path / 'x'}")
        ended[rec.id] = rec.state
        (tmp_path / "drops.bin").write_bytes(b"payload")
        _, wait = journal_waiter(fed)
        rec = await fed.transfer(f"alpha:{tmp_path / 'drops.bin'}",
                                 f"beta:{tmp_path / 'dropped.bin'}", wait=False)
        await wait(lambda ev: ev.kind == "transfer.retry")  # it waits its backoff now
        ended[rec.id] = (await asyncio.wait_for(fed.cancel_transfer(rec.id), WAIT_S)).state
        assert sorted(ended.values()) == ["CANCELLED", "FAILED", *["SUCCEEDED"] * 3]
        assert {t: fed.mover.status(t).state for t in ended} == ended
        assert _kept(fed.mover, ended) == {}
        for tid, state in ended.items():  # a cancel after the end, as before
            if state == "CANCELLED":
                assert (await fed.cancel_transfer(tid)).state == "CANCELLED"
                continue
            with pytest.raises(BadInput, match=f"^transfer {tid} is not cancelled: it had "
                                               f"already ended {state}"):
                await fed.cancel_transfer(tid)
        assert {t: fed.mover.status(t).state for t in ended} == ended
        assert _kept(fed.mover, ended) == {}
    finally:
        await fed.close()


async def test_a_staging_leaves_no_lease_in_its_manager_resumed_or_new(tmp_path):
    """Before, each staging (`stage-TOKEN`) an engine ran kept its lease in the transfer
    manager for as long as the engine ran, resumed after a restart or begun by a submit:
    a server's grew by one a staged job. Now the lease goes with the staging's run."""
    bed = HeldStaging(tmp_path)
    first = bed.engine(archive_reachable=False)
    await first.start(recover=False)
    try:
        _, wait = journal_waiter(first)
        resumed = await first.submit(bed.spec(), "here")
        await wait(lambda ev: ev.kind == "stage.in.started")  # copying: its next try is far
        assert f"stage-{resumed.token}" in first.mover._fences
    finally:
        await first.close()
    again = bed.engine(archive_reachable=True)
    _, wait = journal_waiter(again)
    await again.start()
    try:
        keys = [f"stage-{resumed.token}"]
        await wait(lambda ev: ev.kind == "job.released" and ev.job_id == resumed.id)
        await again.mover.wait(keys[0])
        new = await again.submit(bed.spec(), "here")
        keys.append(f"stage-{new.token}")
        await wait(lambda ev: ev.kind == "job.released" and ev.job_id == new.id)
        await again.mover.wait(keys[1])
        assert [again.mover.status(k).state for k in keys] == ["SUCCEEDED"] * 2
        assert _kept(again.mover, keys) == {}
    finally:
        await again.close()


async def test_a_staging_that_cannot_be_resumed_leaves_no_lease_in_its_manager(tmp_path):
    """A staging found after a restart whose job this store does not know is settled FAILED
    without a run: its lease, taken to settle it, goes too."""
    bed = HeldStaging(tmp_path)
    fed = bed.engine(archive_reachable=True)
    key = "stage-0123456789ab"
    fed.store.record_transfer("stage", "0123456789ab", "here", transfer_id=key, state="ACTIVE",
                              data={"stage_of": "0123456789ab", "site": "here",
                                    "user_hold": False})
    await fed.start()
    try:
        rec = fed.mover.status(key)
        assert (rec.state, rec.error) == ("FAILED", "cannot resume the staging: the job is "
                                                    "unknown")
        assert _kept(fed.mover, [key]) == {}
    finally:
        await fed.close()
