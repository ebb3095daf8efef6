"""A job whose end a workflow awaits, on a site without an event channel (Slurm's REST API),
is asked about at a pace set by its run so far, not a doubling poll interval: the recorded
workflow runs learned a 5 s step's end on beta-rest 3.5 s late (median; 0.01 s where the
job's end line is pushed), and a longer step's up to a whole poll interval late. A real
store and a real local Slurm site whose `squeue` prints what the test wrote; no test bed."""

from __future__ import annotations

import asyncio
import getpass
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from local_slurm import LocalSlurmQueue

from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Job, JobSpec, JobState, SiteError, utcnow
from diamond_jupyter.monitor import AWAITED_MAX_S
from diamond_jupyter.sites import EventChannel, token_tag
from diamond_jupyter.store import Store

TOKEN = "tokawaited01"


def _running(store: Store, ran_s: float) -> Job:
    store.upsert_job(Job(id="alpha:100", site="alpha", native_id="100", name="train",
                         spec=JobSpec(name="train", command="true"), token=TOKEN))
    store.apply_state("alpha:100", JobState.RUNNING,
                      started_at=utcnow() - timedelta(seconds=ran_s))
    return store.get_job("alpha:100")


def _line(state: str, began: str, limit: str = "10:00") -> str:
    return (f"100|{state}|{began}|N/A|{began}|"
            f"{limit}|1|1|{getpass.getuser()}|debug|N/A|n1|None|{token_tag(TOKEN)}|train\n")


def _no_channel(tmp_path, **kw) -> tuple[LocalSlurmQueue, Store, Journal]:
    queue = LocalSlurmQueue(tmp_path)
    queue.site.event_channel = EventChannel.NONE  # as a slurmrestd site without a door
    store = Store(tmp_path / "store.sqlite")
    return queue, store, Journal(store, {"alpha": queue.site}, **kw)


async def test_an_awaited_running_job_sets_the_pace_of_the_polls(tmp_path):
    _, store, journal = _no_channel(tmp_path, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["alpha"]
    job = _running(store, ran_s=30)
    mon.track(job)
    mon.quiet_polls = 10  # nothing changed for a while: the doubling reached its ceiling
    now = time.time()
    assert mon._interval(now) == 60
    journal.await_end(job)
    assert mon._repace.is_set()  # the poll under way may be a minute off: its time anew
    assert abs(mon._interval(now) - 3.0) < 0.01  # a tenth of its 30 s run so far
    assert mon._interval(now + 300) == AWAITED_MAX_S  # never longer, however long it runs
    assert mon._interval(now - 29.9) == 0.5  # just started: min_poll_s, never less
    mon._repace.clear()
    journal.await_end(job)
    assert not mon._repace.is_set()  # awaited once
    # ended: forgotten
    store.apply_state("alpha:100", JobState.COMPLETED, ended_at=utcnow())
    mon._drop_finished()
    assert mon.awaited == set() and mon.tracked == {}
    await journal.stop()


async def test_an_awaited_job_still_queued_or_held_is_asked_about_as_before(tmp_path):
    _, store, journal = _no_channel(tmp_path, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["alpha"]
    store.upsert_job(Job(id="alpha:100", site="alpha", native_id="100", name="train",
                         state=JobState.PENDING, token=TOKEN))
    journal.await_end(store.get_job("alpha:100"))
    assert mon.awaited == {TOKEN}
    mon.quiet_polls = 10
    assert mon._interval() == 60  # its end is not near: no faster pace
    await journal.stop()


async def test_a_site_with_an_event_channel_keeps_its_slow_safety_net(tmp_path):
    queue = LocalSlurmQueue(tmp_path)  # the job's own end line reaches the engine at once
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["alpha"]
    job = _running(store, ran_s=30)
    journal.await_end(job)
    assert mon.awaited == set() and not mon._repace.is_set()
    assert "tokawaited01" in mon.tracked
    assert mon._interval() == 60
    await mon.stop()


def _ends_on_the_third_query(tmp_path: Path, store: Store, mon: Any, started_s_ago: float,
                             states: tuple[str, str] = ("RUNNING", "COMPLETED")) -> Path:
    """Job alpha:100 (TOKEN), tracked by `mon`: squeue finds it running (started
    `started_s_ago` seconds ago, no time limit) twice, then ended, from the third query on
    (`states`: squeue's state words for the two). The file that counts squeue's queries."""
    began = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - started_s_ago))
    first, later, count = (tmp_path / n for n in ("first.txt", "later.txt", "count"))
    # no time limit (a job with one is also looked at just after it: not this test's point)
    first.write_text(_line(states[0], began, "UNLIMITED"))
    later.write_text(_line(states[1], began, "UNLIMITED"))
    (tmp_path / "bin-alpha" / "squeue").write_text(
        f"#!/bin/sh\nn=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}\n"
        f"if [ $n -le 2 ]; then cat {first}; else cat {later}; fi\n")
    store.upsert_job(Job(id="alpha:100", site="alpha", native_id="100", name="train",
                         state=JobState.PENDING, token=TOKEN))
    mon.tracked[TOKEN] = "100"
    return count


async def test_an_awaited_jobs_end_is_learned_without_waiting_out_the_poll_interval(tmp_path):
    queue, store, journal = _no_channel(tmp_path, poll_interval_s=3600, min_poll_s=0.05)
    mon = journal.monitors["alpha"]
    # two queries find it running (started 20 s ago: its pace is 2 s), the later ones ended
    count = _ends_on_the_third_query(tmp_path, store, mon, started_s_ago=20)
    assert await mon.poll_once() == 1  # the first query: running since `began`
    job = store.get_job("alpha:100")
    assert job.state == JobState.RUNNING
    journal.await_end(job)
    mon.quiet_polls = 40  # the second query changes nothing: without the pace, the third
    events = journal.bus.queue()  # would come an hour later
    mon.start()
    try:  # (not `journal.wait`: it follows the job anew, which starts the doubling over)
        async def ended() -> None:
            while not store.get_job("alpha:100").state.terminal:
                await events.get()
        await asyncio.wait_for(ended(), timeout=30)
        assert store.get_job("alpha:100").state == JobState.COMPLETED
        assert count.read_text().strip() == "3"
    finally:
        journal.bus.unqueue(events)
        await journal.stop()


async def test_a_workflow_awaits_its_steps_ends_and_not_its_gates():
    from diamond_jupyter.federation_workflow import _Ops

    class Journal_:
        def __init__(self) -> None:
            self.awaited: list[str] = []

        def await_end(self, job: Job) -> None:
            self.awaited.append(job.id)

    class Fed:
        store = None
        journal = Journal_()

        async def submit(self, spec, site, **kw) -> Job:
            return Job(id=f"{site}:{spec.name}", site=site, native_id="1", name=spec.name)

    ops = _Ops(Fed())
    spec = JobSpec(name="train", command="true")
    await ops.submit(spec, "gamma", hold=False, token="t1", origin={"workflow": "w",
                                                                    "step": "train"})
    await ops.submit(spec.model_copy(update={"name": "train-gate"}), "gamma", hold=True,
                     token="t2", origin={"workflow": "w", "step": "train", "gate": True})
    ops.follow(Job(id="beta-rest:9", site="beta-rest", native_id="9"))  # adopted
    assert Fed.journal.awaited == ["gamma:train", "beta-rest:9"]


async def test_a_wait_under_way_sets_the_pace_and_its_end_gives_it_back(tmp_path):
    """`diamond wait`, a notebook's job card, an agent's wait: the running job is asked about
    at the awaited pace while someone waits, at the adaptive one again once nobody does."""
    _, store, journal = _no_channel(tmp_path, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["alpha"]
    job = _running(store, ran_s=30)
    now = time.time()
    with mon.waiting_on(job):
        assert mon._repace.is_set()  # the poll under way may be a minute off
        mon.quiet_polls = 10
        assert abs(mon._interval(now) - 3.0) < 0.01
        mon._repace.clear()
        with mon.waiting_on(job):  # a second face waits too
            assert not mon._repace.is_set() and mon.waiters[TOKEN] == 2
        assert abs(mon._interval(now) - 3.0) < 0.01  # the first still waits
    assert mon.waiters == {} and mon._interval(now) == 60  # nobody waits any more
    journal.await_end(job)  # a workflow's step: awaited until it ends, waits or not
    with mon.waiting_on(job):
        pass
    assert abs(mon._interval(now) - 3.0) < 0.01
    await journal.stop()


async def test_a_wait_that_gives_up_no_longer_sets_the_pace(tmp_path):
    _, store, journal = _no_channel(tmp_path, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["alpha"]
    job = _running(store, ran_s=30)
    try:
        try:
            await journal.wait(job.id, timeout=0.01)
            raise AssertionError("the job is still running: the wait should time out")
        except SiteError as e:
            assert "timed out" in str(e)
        assert mon.waiters == {} and TOKEN in mon.tracked
        mon.quiet_polls = 10
        assert mon._interval() == 60
    finally:
        await journal.stop()


async def test_a_queued_job_waited_on_keeps_the_slow_pace(tmp_path):
    _, store, journal = _no_channel(tmp_path, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["alpha"]
    store.upsert_job(Job(id="alpha:100", site="alpha", native_id="100", name="train",
                         state=JobState.PENDING, token=TOKEN))
    with mon.waiting_on(store.get_job("alpha:100")):
        mon.quiet_polls = 10
        assert mon._interval() == 60
    await journal.stop()


async def test_a_job_waited_on_is_asked_about_without_waiting_out_the_poll_under_way(tmp_path):
    """The monitor sleeps an hour (nothing changed for long); a wait begins on the running
    job: the next query comes at the job's pace, not an hour later (before, the wait learned
    of the end only once that hour had passed)."""
    queue, store, journal = _no_channel(tmp_path, poll_interval_s=3600, min_poll_s=0.05)
    mon = journal.monitors["alpha"]
    count = _ends_on_the_third_query(tmp_path, store, mon, started_s_ago=3)
    assert await mon.poll_once() == 1  # the first query: running since `began`
    asleep = asyncio.Event()  # the poll loop has gone to sleep for the long interval
    sleeps: list[float] = []
    kicked_within = mon._kicked_within

    async def watched(timeout: float) -> bool:
        sleeps.append(timeout)
        if timeout >= 3600:
            asleep.set()
        return await kicked_within(timeout)
    mon._kicked_within = watched
    mon.quiet_polls = 40  # nothing changed for long: the second query (no news) is the last
    mon.start()  # for an hour
    try:
        await asyncio.wait_for(asleep.wait(), timeout=30)
        job = store.get_job("alpha:100")
        assert job.state == JobState.RUNNING and count.read_text().strip() == "2"
        done = await journal.wait(job.id, timeout=30)
        assert done.state == JobState.COMPLETED
        assert count.read_text().strip() == "3"  # one query more, at the job's pace
        woken = sleeps[sleeps.index(3600) + 1]  # then the rest of a tenth of its 3-5 s run
        assert 0.1 < woken <= 0.5, sleeps
        assert mon.waiters == {}
    finally:
        await journal.stop()


async def test_each_kind_of_event_channel_sets_when_ends_count_as_pushed(tmp_path):
    """ALWAYS: the jobs' end lines are counted on; OPTIONAL: only while the stream is up;
    NONE: never (the monitor polls at the adaptive pace)."""
    queue, store, journal = _no_channel(tmp_path, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["alpha"]
    assert queue.site.event_channel is EventChannel.NONE  # (set so by _no_channel)
    assert type(queue.site).event_channel is EventChannel.ALWAYS  # a site that runs commands
    seen = {}
    for channel in EventChannel:
        queue.site.event_channel = channel
        for up in (False, True):
            (mon.stream_connected.set if up else mon.stream_connected.clear)()
            seen[channel, up] = mon._ends_pushed()
    assert seen == {(EventChannel.NONE, False): False, (EventChannel.NONE, True): False,
                    (EventChannel.OPTIONAL, False): False, (EventChannel.OPTIONAL, True): True,
                    (EventChannel.ALWAYS, False): True, (EventChannel.ALWAYS, True): True}
    await mon.stop()
