"""A cancelled job's end is learned soon, not a poll interval late, on a site whose end lines
are pushed too.

Seen in CI (main at aa41999, whole suite on a busy machine): a workflow's gang member,
cancelled by its gang's retry while it ran, was still RUNNING in the store once its workflow
had completed 20 s later. Slurm shows a cancelled running job COMPLETING while its processes
are killed; the poll just after the cancel found it so, its wrapper's end line (killed by
the signal) is no ending the monitor takes, and on a site whose end lines are pushed the next
poll came a whole `poll_interval_s` later (30 s in the tests, 60 s by default). Now a job
asked to cancel, or whose wrapper reported a signal's end, is asked about at the doubling
pace from `min_poll_s` until its scheduler says it ended; then the slow safety net again."""

from __future__ import annotations

import time

import pytest
from local_slurm import LocalSlurmQueue
from test_cancel_end_line import TOKEN as LINE_TOKEN
from test_cancel_end_line import _end_line, _followed
from test_monitor_awaited import _ends_on_the_third_query

from diamond_jupyter.federation import Federation
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Event, JobSpec, JobState, Resources
from diamond_jupyter.sites import EventChannel
from diamond_jupyter.store import Store


async def test_a_cancelled_job_still_completing_is_asked_about_again_soon(tmp_path):
    """squeue shows the cancelled job COMPLETING twice, CANCELLED from the third query on;
    the poll interval is an hour: before, the end waited for it."""
    queue = LocalSlurmQueue(tmp_path)
    assert queue.site.event_channel is EventChannel.ALWAYS  # its end lines are pushed
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=3600, min_poll_s=0.05)
    mon = journal.monitors["alpha"]
    count = _ends_on_the_third_query(tmp_path, store, mon, started_s_ago=20,
                                     states=("COMPLETING", "CANCELLED"))
    store.apply_state("alpha:100", JobState.RUNNING)
    assert mon._interval() == 3600  # nothing asks for more while it runs
    try:
        # as `Federation.cancel` does once the scheduler took the request
        store.append_event(Event(kind="job.cancel-requested", job_id="alpha:100",
                                 site="alpha"))
        journal.kick(store.get_job("alpha:100"))
        job = await journal.wait("alpha:100", timeout=30)
        assert job.state == JobState.CANCELLED, job
        assert count.read_text().strip() == "3"  # asked again after the COMPLETING answers
        assert mon.ending == set() and mon._interval() == 3600  # the slow pace again
    finally:
        await journal.stop()


async def test_an_end_line_of_a_signal_asks_the_scheduler_until_it_says_the_end(tmp_path):
    """No cancel asked (a time limit, a preemption): the wrapper's "end 143" is no ending
    either; the scheduler is asked soon and, while it says nothing new, again soon."""
    journal, store, monitor = await _followed(tmp_path, "", cancelled=False)
    monitor.min_poll_s = 0.5
    try:
        monitor.quiet_polls = 10  # nothing changed for long
        assert monitor._interval() == 3600
        await monitor._on_line(_end_line(143))
        assert store.get_job("wren:700").state == JobState.RUNNING
        assert monitor._kick.is_set() and monitor.ending == {LINE_TOKEN}
        assert monitor._interval() == 0.5  # then 1, 2, 4 ... while it is not seen ended
        monitor.quiet_polls = 3
        assert monitor._interval() == 4.0
    finally:
        await journal.stop()


@pytest.mark.testbed
async def test_a_job_that_ignores_sigterm_is_seen_cancelled_soon_after_slurm_kills_it(
        tb, tmp_path):
    """A running job that ignores SIGTERM stays COMPLETING until Slurm's KillWait (5 s on
    the test bed) has passed and SIGKILL ends it: no end line is written. The poll interval
    is two minutes; the store says CANCELLED well before it (before: at the next poll,
    up to two minutes after the cancel)."""
    fed = Federation(tb.config_path, store=Store(tmp_path / "store.sqlite"),
                     poll_interval_s=120, min_poll_s=0.5)
    await fed.start()
    try:
        job = await fed.submit(JobSpec(name="stubborn", script="trap '' TERM\nsleep 300\n",
                                       resources=Resources(nodes=1, walltime_s=600)), "gamma")
        await fed.wait(job.id, until=lambda j: j.state == JobState.RUNNING, timeout=120)
        asked = time.monotonic()
        await fed.cancel(job.id)
        done = await fed.wait(job.id, timeout=100)
        took = time.monotonic() - asked
        assert done.state == JobState.CANCELLED, done
        assert took < 60, f"the cancel's end was learned {took:.1f} s after it"
    finally:
        await fed.close()
