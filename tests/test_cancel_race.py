"""A user's cancel that arrives while a copy is finishing ends in one recorded state.

The cancel and the copy's end are decided in one store transaction each: a cancel accepted
before the copy begins putting its data in place makes the record CANCELLED for good (the
copy stops, its checked partial file left aside, never renamed into place); a cancel after
that is refused with BadInput saying how the transfer ended. Before, a cancel asked through
another engine wrote CANCELLED, told the user so, and the copying engine then wrote
SUCCEEDED over it. A job held for its stage-in that the user cancels is recorded CANCELLED,
never released nor failed by its staging.

No test bed and no sleeps: the copy is held at hook points (the hashing of the arrived
bytes, the rename into place) with events, so each order of the race is forced."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_lease_fencing import _fed, _fed_sites

from diamond_jupyter.model import BadInput, JobSpec, JobState, StageEntry
from diamond_jupyter.sites import Site
from diamond_jupyter.transfer.sftp import PART, LocalSide
from diamond_jupyter.transfer.staging import resume_staged
from diamond_jupyter.transports.base import CommandFailed, CommandResult


class _Gates:
    """Holds a copy at two points: the hashing of the bytes that arrived (before its end
    is decided) and the rename into place (after). Each point, once reached, waits until
    the test opens it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.hashing, self.hash_go = asyncio.Event(), asyncio.Event()
        self.renaming, self.rename_go = threading.Event(), threading.Event()
        self.renames: list[str] = []
        real_sha, real_rename = LocalSide.sha256, LocalSide.rename
        gates = self

        async def sha256(self: LocalSide, path: str, size: int = 0) -> str:
            if path.endswith(PART):  # the destination's bytes, all there
                gates.hashing.set()
                await gates.hash_go.wait()
            return await real_sha(self, path, size)

        def rename(self: LocalSide, src: str, dst: str) -> None:
            gates.renaming.set()
            gates.rename_go.wait(30)  # in the copy's thread
            gates.renames.append(dst)
            real_rename(self, src, dst)
        monkeypatch.setattr(LocalSide, "sha256", sha256)
        monkeypatch.setattr(LocalSide, "rename", rename)

    def open_all(self) -> None:
        self.hash_go.set()
        self.rename_go.set()

    async def at_rename(self) -> None:
        assert await asyncio.to_thread(self.renaming.wait, 30)


@pytest.fixture
async def two(tmp_path: Path) -> Any:
    """Two engines on one store (the server and a CLI, say) and a file to copy."""
    sites = _fed_sites(tmp_path)
    a, b = _fed(sites), _fed(sites)
    await a.start(recover=False)
    src = tmp_path / "in.bin"
    src.write_bytes(b"payload " * 4096)
    yield a, b, src, tmp_path / "out.bin"
    await asyncio.gather(a.close(), b.close())


def _states(store: Any, tid: str) -> list[str]:
    return [e.data["state"] for e in store.events_since(0, kinds=["transfer.state"],
                                                         limit=None)
            if e.data.get("transfer_id") == tid]


async def test_a_cancel_through_another_engine_while_the_copy_checks_its_bytes_stands(
        two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every byte is there and being hashed when the user cancels through another engine.
    Before: the cancel answered CANCELLED, then the copying engine renamed the file into
    place and recorded SUCCEEDED over it. Now the record stays CANCELLED, the data is not
    put in place (its checked partial file is kept, as any cancel keeps it), and one
    CANCELLED event is said."""
    a, b, src, dst = two
    gates = _Gates(monkeypatch)
    rec = await a.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
    await asyncio.wait_for(gates.hashing.wait(), 30)
    got = await b.cancel_transfer(rec.id)  # b does not copy it: decided in the store
    assert (got.state, got.error) == ("CANCELLED", "cancelled by request")
    gates.open_all()
    done = await asyncio.wait_for(a.mover.wait(rec.id), 30)
    assert done.state == "CANCELLED"
    assert a.store.get_transfer(rec.id).state == "CANCELLED"
    assert not dst.exists() and gates.renames == []
    assert Path(str(dst) + PART).read_bytes() == src.read_bytes()  # left aside, whole
    assert _states(a.store, rec.id) == ["ACTIVE", "CANCELLED"]


async def test_a_cancel_in_the_copying_engine_while_it_checks_its_bytes_stands(
        two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same race in the engine that copies: the cancel waits for the copy to let go of
    its partial file and answers CANCELLED; the file is not put in place."""
    a, _b, src, dst = two
    gates = _Gates(monkeypatch)
    rec = await a.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
    await asyncio.wait_for(gates.hashing.wait(), 30)
    cancelling = asyncio.ensure_future(a.cancel_transfer(rec.id))
    await asyncio.sleep(0)  # let the cancel be decided before the copy goes on
    assert a.store.get_transfer(rec.id).state == "CANCELLED"
    gates.open_all()
    got = await asyncio.wait_for(cancelling, 30)
    assert got.state == "CANCELLED" and not dst.exists() and gates.renames == []
    assert _states(a.store, rec.id) == ["ACTIVE", "CANCELLED"]


async def test_a_cancel_after_the_copy_began_putting_its_data_in_place_is_refused(
        two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy is renaming its checked file into place when the cancel comes: refused,
    through the other engine at once ("being put in place"), and through the copying one
    once the copy ended ("had already ended SUCCEEDED"); the record ends SUCCEEDED, never
    CANCELLED, and no cancel is said."""
    a, b, src, dst = two
    gates = _Gates(monkeypatch)
    gates.hash_go.set()
    rec = await a.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
    await gates.at_rename()
    with pytest.raises(BadInput, match=r"not cancelled: its copy had already finished .*"
                                       r"being put in place"):
        await b.cancel_transfer(rec.id)
    cancelling = asyncio.ensure_future(a.cancel_transfer(rec.id))
    await asyncio.sleep(0)
    gates.rename_go.set()
    with pytest.raises(BadInput, match=r"not cancelled: it had already ended SUCCEEDED"):
        await asyncio.wait_for(cancelling, 30)
    done = a.store.get_transfer(rec.id)
    assert done.state == "SUCCEEDED" and dst.read_bytes() == src.read_bytes()
    assert "cancel_requested" not in done.data
    assert _states(a.store, rec.id) == ["ACTIVE", "SUCCEEDED"]
    with pytest.raises(BadInput, match="had already ended SUCCEEDED"):  # and after
        await b.cancel_transfer(rec.id)


async def test_a_cancelled_transfer_asked_again_is_not_copied_again(
        two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A staging resumed after a restart asks for its copies again by their ids: one the
    user cancelled stays CANCELLED (before, it was started over, ACTIVE again)."""
    a, _b, src, dst = two
    gates = _Gates(monkeypatch)
    rec = await a.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
    await asyncio.wait_for(gates.hashing.wait(), 30)
    cancelling = asyncio.ensure_future(a.cancel_transfer(rec.id))
    await asyncio.sleep(0)
    gates.open_all()
    assert (await asyncio.wait_for(cancelling, 30)).state == "CANCELLED"
    again = await a.mover.transfer(f"alpha:{src}", f"beta:{dst}", transfer_id=rec.id)
    assert again.state == "CANCELLED" and not dst.exists()
    assert _states(a.store, rec.id) == ["ACTIVE", "CANCELLED"]
    assert (await a.cancel_transfer(rec.id)).state == "CANCELLED"  # asked twice: the same


# -- stagings ---------------------------------------------------------------------------------

def _held_job(fed: Any, tmp_path: Path, token: str) -> Any:
    """A job submitted held for its stage-in (native id 42) and its staging's record."""
    src, work = tmp_path / "input.dat", tmp_path / "work"
    src.write_bytes(b"input " * 4096)
    work.mkdir()
    spec = JobSpec(script="cat in.dat\n", working_directory=str(work),
                   stage_in=[StageEntry(source=str(src), destination="in.dat")])
    store = fed.store
    store.record_intent("alpha", token, spec)
    job = store.bind_native_id(token, "42")
    store.apply_state(job.id, JobState.PENDING)
    store.record_transfer("stage", token, "alpha", transfer_id=f"stage-{token}",
                          state="ACTIVE", data={"stage_of": token, "site": "alpha",
                                                "user_hold": False})
    return job


@pytest.fixture
def scheduler(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list]]:
    """The site's scheduler as the staging meets it: a cancelled job is gone, so its
    release fails as Slurm's does."""
    calls: dict[str, list] = {"cancel": [], "release": []}

    async def cancel(self: Site, native_ids: list[str]) -> None:
        calls["cancel"].append(native_ids)

    async def release(self: Site, native_ids: list[str], tasks: Any = None) -> None:
        calls["release"].append(native_ids)
        if calls["cancel"]:
            said = "scontrol: error: Job has already finished for job 42"
            raise CommandFailed(f"scontrol release 42: {said}", CommandResult(
                ["scontrol", "release", "42"], 1, "", said, 0.01))
    monkeypatch.setattr(Site, "cancel", cancel)
    monkeypatch.setattr(Site, "release", release)
    yield calls


@pytest.fixture
def quiet_monitor(two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """No scheduler poll after the cancel (the site is a name here, not a cluster)."""
    a = two[0]
    monkeypatch.setattr(a.journal, "kick", lambda job: None)

    async def refresh(job_id: str) -> Any:
        return a.store.get_job(job_id)
    monkeypatch.setattr(a.journal, "refresh", refresh)


async def test_cancelling_a_job_while_its_stage_in_checks_its_bytes_stops_the_copy(
        two: Any, tmp_path: Path, scheduler: dict, quiet_monitor: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The user cancels the held job while its stage-in's copy hashes the arrived bytes.
    The copy stops (its file is not put in place), the job is recorded CANCELLED (not
    FAILED by the staging, not released), and the staging ends CANCELLED."""
    a = two[0]
    gates = _Gates(monkeypatch)
    job = _held_job(a, tmp_path, "tokrace1")
    assert await resume_staged(a.mover) == [job.id]
    await asyncio.wait_for(gates.hashing.wait(), 30)
    cancelling = asyncio.ensure_future(a.cancel(job.id))
    await asyncio.sleep(0)
    gates.open_all()
    await asyncio.wait_for(cancelling, 30)
    await asyncio.wait_for(a.mover._tasks["stage-tokrace1"], 30)
    got = a.store.get_job(job.id)
    assert got.state == JobState.CANCELLED and "stage-in" in (got.reason or "")
    assert scheduler == {"cancel": [["42"]], "release": []}
    assert a.store.get_transfer("tokrace1-in-0").state == "CANCELLED"
    assert a.store.get_transfer("stage-tokrace1").state == "CANCELLED"
    assert not (tmp_path / "work" / "in.dat").exists() and gates.renames == []
    kinds = [e.kind for e in a.store.events_since(0, job_id=job.id, limit=None)]
    assert "job.released" not in kinds and "stage.in.failed" not in kinds


async def test_cancelling_a_job_whose_stage_in_is_putting_its_data_in_place(
        two: Any, tmp_path: Path, scheduler: dict, quiet_monitor: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cancel comes as the stage-in's copy renames its file into place: the copy ends
    SUCCEEDED (it was too late to stop), and the job, whose cancel the scheduler took, is
    recorded CANCELLED. Before: the staging released the cancelled job, the release failed
    and the job was recorded FAILED ("release after stage-in failed")."""
    a = two[0]
    gates = _Gates(monkeypatch)
    gates.hash_go.set()
    job = _held_job(a, tmp_path, "tokrace2")
    assert await resume_staged(a.mover) == [job.id]
    await gates.at_rename()
    cancelling = asyncio.ensure_future(a.cancel(job.id))
    await asyncio.sleep(0)
    gates.rename_go.set()
    await asyncio.wait_for(cancelling, 30)
    await asyncio.wait_for(a.mover._tasks["stage-tokrace2"], 30)
    got = a.store.get_job(job.id)
    assert got.state == JobState.CANCELLED, (got.state, got.reason)
    assert scheduler == {"cancel": [["42"]], "release": []}
    assert a.store.get_transfer("tokrace2-in-0").state == "SUCCEEDED"
    assert a.store.get_transfer("stage-tokrace2").state == "CANCELLED"


async def test_a_release_that_fails_because_the_users_cancel_got_there_first(
        two: Any, tmp_path: Path, scheduler: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another engine's cancel reached the scheduler but its request is not stored yet when
    the staging releases the job: the release fails, and the scheduler, asked, says the job
    is CANCELLED. Before: recorded FAILED ("release after stage-in failed"); now CANCELLED
    as the scheduler says, and the staging ends CANCELLED."""
    a = two[0]
    job = _held_job(a, tmp_path, "tokrace3")
    scheduler["cancel"].append(["42"])  # sent by the other engine, not yet recorded

    async def refresh(job_id: str) -> Any:  # the scheduler's answer, as the monitor applies it
        a.journal.apply(job_id, JobState.CANCELLED, source="poll", reason="cancelled")
        return a.store.get_job(job_id)
    monkeypatch.setattr(a.journal, "refresh", refresh)
    assert await resume_staged(a.mover) == [job.id]
    await asyncio.wait_for(a.mover._tasks["stage-tokrace3"], 30)
    assert scheduler["release"] == [["42"]]
    assert a.store.get_job(job.id).state == JobState.CANCELLED
    assert a.store.get_transfer("stage-tokrace3").state == "CANCELLED"
    assert (tmp_path / "work" / "in.dat").exists()  # its copy had ended: put in place
