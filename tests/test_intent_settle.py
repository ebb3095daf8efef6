"""Recovery of a lost submit does not close its intent as "never submitted" while the submit
could still reach the queue: an intent younger than the settle time, by the time the store
recorded it, is left open for a later pass, in this engine and in the next one. A real store
on disk, a real local Slurm site whose `squeue` prints the queue written here; no test bed."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from local_slurm import LocalSlurmQueue
from one_site_engine import one_site_federation

from diamond_jupyter.journal import UNSURE_SUBMIT_SETTLE_S, Journal
from diamond_jupyter.model import JobSpec, JobState
from diamond_jupyter.store import Store

TOKEN = "c0ffee000001"


@pytest.fixture
def queue(tmp_path) -> LocalSlurmQueue:
    return LocalSlurmQueue(tmp_path)


def _intent(store: Store) -> str:
    return store.record_intent("alpha", TOKEN, JobSpec(name="lost", command="true")).id


def _recorded_ago(path: Path, seconds: float) -> None:
    """The intent was recorded `seconds` ago (an engine that died that long before)."""
    then = datetime.now(timezone.utc) - timedelta(seconds=seconds)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE jobs SET created_at = ? WHERE token = ?",
                   (then.isoformat(timespec="microseconds"), TOKEN))


async def test_a_young_intent_found_nowhere_stays_open_across_a_restart(tmp_path, queue):
    path = tmp_path / "store.sqlite"
    jid = _intent(Store(path))
    first = Journal(Store(path), {"alpha": queue.site})
    left = await first.recover_intent(first.store.get_job(jid))
    assert 0 < left <= UNSURE_SUBMIT_SETTLE_S
    job = first.store.get_job(jid)
    assert job.native_id is None and not job.state.terminal  # left for a later pass
    await first.stop()

    again = Journal(Store(path), {"alpha": queue.site})  # the next engine: nothing in memory
    assert 0 < await again.recover_intent(again.store.get_job(jid)) <= left
    assert not again.store.get_job(jid).state.terminal

    _recorded_ago(path, UNSURE_SUBMIT_SETTLE_S + 1)  # ... and once it is old enough
    assert await again.recover_intent(again.store.get_job(jid)) == 0
    job = again.store.get_job(jid)
    assert job.state == JobState.FAILED and "did not reach" in (job.reason or "")
    await again.stop()


async def test_a_young_intent_whose_job_is_queued_is_bound_at_once(tmp_path, queue):
    journal = Journal(Store(tmp_path / "store.sqlite"), {"alpha": queue.site},
                      poll_interval_s=3600, min_poll_s=3600)
    jid = _intent(journal.store)
    queue.add("77", TOKEN, "lost")
    assert await journal.recover_intent(journal.store.get_job(jid)) == 0
    assert journal.store.get_job(jid).native_id == "77"
    await journal.stop()


async def test_waiting_for_the_settle_closes_the_intent_only_once_it_is_old_enough(
        tmp_path, queue):
    journal = Journal(Store(tmp_path / "store.sqlite"), {"alpha": queue.site},
                      unsure_submit_settle_s=0.5)
    jid = _intent(journal.store)
    job = await journal.recover_intent_settled(journal.store.get_job(jid))
    assert job.state == JobState.FAILED
    [closed] = journal.store.events_since(0, kinds=["job.state"], job_id=jid, limit=None)
    recorded = datetime.now(timezone.utc) - timedelta(seconds=journal.store.intent_age_s(TOKEN))
    assert (closed.at - recorded).total_seconds() >= 0.5  # by the store's own times
    await journal.stop()


@pytest.mark.parametrize("settle_s, closed", [(UNSURE_SUBMIT_SETTLE_S, False), (0.0, True)])
async def test_startup_recovery_of_a_single_job_waits_for_the_settle_too(
        tmp_path, queue, settle_s, closed):
    """`Federation.recover` (the server's start, and its sweep) looks every intent up: a
    young one found nowhere is closed only with no settle time."""
    fed = one_site_federation(tmp_path, queue.site.cfg, unsure_submit_settle_s=settle_s)
    try:
        jid = _intent(fed.store)
        await fed.recover(intent_grace_s=0)
        assert fed.store.get_job(jid).state.terminal is closed
        assert (fed.store.intents_without_native_id() == []) is closed
    finally:
        await fed.close()


async def test_a_staging_resumed_while_its_submit_may_still_land_waits_for_it(tmp_path, queue):
    """An engine died while submitting a staged job; the next one starts at once. The
    staging is not failed as "never submitted": it waits, and the job that lands is its."""
    fed = one_site_federation(tmp_path, queue.site.cfg, poll_interval_s=3600, min_poll_s=3600,
                              unsure_submit_settle_s=UNSURE_SUBMIT_SETTLE_S)
    key = f"stage-{TOKEN}"
    try:
        jid = fed.store.record_intent("alpha", TOKEN, JobSpec(  # as `Site.prepare` left it
            name="lost", command="true", working_directory=str(tmp_path / "w"))).id
        fed.store.record_transfer("stage", TOKEN, "alpha", transfer_id=key, state="ACTIVE",
                                  data={"stage_of": TOKEN, "site": "alpha",
                                        "user_hold": True})
        await fed.recover()  # the server's start: the intent is too young to be closed
        assert fed.store.get_transfer(key).state == "ACTIVE"
        assert not fed.store.get_job(jid).state.terminal
        queue.add("78", TOKEN, "lost")  # the dead engine's submit reaches the queue
        await asyncio.wait_for(fed.mover.wait(key), 60)
        assert fed.store.get_transfer(key).state == "SUCCEEDED"
        assert fed.store.job_by_token(TOKEN).native_id == "78"
    finally:
        await fed.close()
