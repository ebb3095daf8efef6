"""Background tasks their owner keeps: a journal's stop publishes every event whose drain
`apply`/`append` started, and a site monitor's stop finishes the early lines' replay `track`
started; neither leaves a task running. A real store and a real local Slurm site; no test
bed."""

from __future__ import annotations

import asyncio

from local_slurm import LocalSlurmQueue

from diamond_jupyter.aio import KeptTasks
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Event, Job, JobState, utcnow
from diamond_jupyter.store import Store
from diamond_jupyter.wrapper import EventLine


def _others() -> set[asyncio.Task]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


async def test_journal_stop_publishes_every_event_its_drains_were_started_for(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {})
    seen: list[int] = []
    journal.subscribe(lambda ev: seen.append(ev.seq or 0))
    before = _others()
    written = [journal.append(Event(kind="note", data={"n": n})).seq for n in range(5)]
    await journal.stop()  # no chance to run yet: stop itself must see them through
    assert seen == written
    assert _others() == before


async def test_monitor_stop_applies_the_early_lines_whose_replay_track_started(tmp_path):
    queue = LocalSlurmQueue(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=3600, min_poll_s=3600)
    mon = journal.monitors["alpha"]
    # the wrapper said "started" before the submit returned; the native id is bound since
    store.upsert_job(Job(id="alpha:7", site="alpha", native_id="7", name="early",
                         token="tokearlyaa"))
    mon._early["tokearlyaa"] = [EventLine(at=utcnow(), kind="start", token="tokearlyaa",
                                          native_id="7", rc=None, body="", mac="")]
    before = _others()
    # another job still being submitted is tracked: the replay starts, then the site stops
    mon.track(Job(id="alpha:pending", site="alpha", name="later", token="toklateraa"))
    await mon.stop()
    assert store.get_job("alpha:7").state == JobState.RUNNING
    assert mon._early == {}
    await journal.stop()  # (the drain the start's event set off)
    assert _others() == before


async def test_kept_tasks_cancels_and_awaits_what_runs_and_forgets_what_ended():
    kept = KeptTasks()
    done = kept.start(asyncio.sleep(0))
    await done
    assert len(kept) == 0
    forever = kept.start(asyncio.Event().wait())
    await asyncio.sleep(0)  # it runs
    await kept.close()
    assert forever.cancelled() and len(kept) == 0
