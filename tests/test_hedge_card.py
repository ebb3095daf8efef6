"""The handle (and its card) of a hedged submission follows the copy that started first:
the magic returns the best-ranked copy at once, and when another copy wins, the card moves
to that copy instead of ending on the loser's CANCELLED."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import pytest

from diamond_jupyter.kernel.engine import Engine
from diamond_jupyter.kernel.handle import JobHandle
from diamond_jupyter.kernel.jobcard import render_text
from diamond_jupyter.model import Job, JobState, hedge_winner_of, hedged_reason

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def copy(job_id: str, state: JobState, group: str | None = "g1", **kw) -> Job:
    site, native = job_id.split(":")
    return Job(id=job_id, site=site, native_id=native, state=state, hedge_group=group,
               submitted_at=NOW, **kw)


class Timeline(Engine):
    """An engine whose jobs go through given states (each watch replays one job's)."""

    kind = "timeline"

    def __init__(self, states: dict[str, list[Job]]) -> None:
        super().__init__()
        self.states = states
        self.watched: list[str] = []

    async def job(self, job_id: str, refresh: bool = False) -> Job:
        return self.states[job_id][0]

    async def watch(self, job_id, callback):
        self.watched.append(job_id)
        for j in self.states[job_id]:
            callback(j)
            await asyncio.sleep(0)
        return self.states[job_id][-1]

    async def logs(self, job_id: str, lines: int = 100) -> dict[str, str]:
        return {"stdout": f"ran as {job_id}\n", "stderr": ""}

    async def files(self, job_id: str) -> list[str]:
        return []


class Shown:
    live = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def update(self, handle: JobHandle, here: bool = False) -> None:
        job, _ = handle.snapshot()
        self.seen.append((job.id, job.state.value))

    def show(self) -> None:
        pass


@pytest.fixture
def engines():
    made: list[Engine] = []
    yield made
    for e in made:
        e.close()


def test_the_card_moves_to_the_copy_that_started_first(engines):
    lost = copy("alpha:5", JobState.CANCELLED, reason=hedged_reason("gamma:9"))
    eng = Timeline({
        "alpha:5": [copy("alpha:5", JobState.PENDING), lost],
        "gamma:9": [copy("gamma:9", JobState.RUNNING, started_at=NOW),
                    copy("gamma:9", JobState.COMPLETED, started_at=NOW, ended_at=NOW,
                         exit_code=0)]})
    engines.append(eng)
    handle = JobHandle(eng, copy("alpha:5", JobState.PENDING))
    card = Shown()
    handle._attach(card)
    handle.wait(10)
    assert eng.watched == ["alpha:5", "gamma:9"]
    assert handle.id == "gamma:9" and handle.state == "COMPLETED"
    assert ("alpha:5", "CANCELLED") not in card.seen  # the loser's end is never shown
    assert ("gamma:9", "RUNNING") in card.seen and card.seen[-1] == ("gamma:9", "COMPLETED")
    assert "ran as gamma:9" in render_text(*handle.snapshot())


def test_a_copy_cancelled_otherwise_ends_as_it_is(engines):
    by_user = copy("alpha:5", JobState.CANCELLED, reason="cancelled by request")
    eng = Timeline({"alpha:5": [copy("alpha:5", JobState.PENDING), by_user]})
    engines.append(eng)
    handle = JobHandle(eng, copy("alpha:5", JobState.PENDING)).wait(10)
    assert handle.id == "alpha:5" and handle.state == "CANCELLED"
    assert eng.watched == ["alpha:5"]


def test_the_winner_is_read_only_from_a_hedged_copys_cancel_reason():
    named = hedged_reason("gamma:9")
    assert hedge_winner_of(copy("alpha:5", JobState.CANCELLED, reason=named)) == "gamma:9"
    assert hedge_winner_of(copy("alpha:5", JobState.CANCELLED, group=None, reason=named)) \
        is None
    assert hedge_winner_of(copy("alpha:5", JobState.FAILED, reason=named)) is None
    assert hedge_winner_of(copy("alpha:5", JobState.CANCELLED,
                                reason=hedged_reason(None))) is None
